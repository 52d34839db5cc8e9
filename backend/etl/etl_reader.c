/* SPDX-License-Identifier: MIT */
/* etl_reader.c: owns the walk over an .etl file's buffers and the per-processor merge of its
 * records. */
#include "util/file_magic.h"
#include "util/utf.h"
#include "le_bytes.h"
#include "etl_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "etw/ntwmi.h"
#include "etl_inflate.h"
#include "etl_parse.h"
#include "etl_tourney.h"
#include "xpress.h"

struct buffer_info {
        uint64_t file_offset;
        uint32_t size_bytes;   /* BufferSize: distance to the next buffer */
        uint32_t filled_bytes; /* Offset (or SavedOffset): filled bytes incl. the header */
        uint64_t sequence;
        uint16_t cpu;
        uint16_t logger_id;
        uint16_t flags;
        uint16_t type;
        uint32_t index; /* in file order */
        uint32_t job;   /* its number in r->inflate, or NO_JOB */
        bool is_damaged;
        bool is_truncated;   /* the file ends inside it: counted once, its whole records read */
        bool has_bad_record; /* a damaged record was met in it: counted once */
};

/* One processor's buffers in sequence order, and the cursor in the current one. */
struct stream {
        uint32_t *buffers; /* owned: indices into reader->buffers, sorted by sequence */
        uint32_t nr_buffers;
        uint32_t next_buffer; /* the next one to load */
        const uint8_t *cur;   /* the current buffer's bytes (mapping or scratch) */
        uint32_t cur_filled;
        uint32_t cur_pos;
        uint32_t cur_index;       /* index into reader->buffers */
        uint64_t cur_file_offset; /* the current buffer's */
        uint8_t *scratch;         /* owned: decompressed or realigned buffer */
        uint32_t scratch_size;
        struct etl_record head; /* parsed record at cur_pos, valid when has_head */
        bool has_head;
};

#define NO_JOB UINT32_MAX

struct etl_reader {
        const uint8_t *data; /* borrowed: its owner learns of the close through release */
        size_t size;
        void (*release)(void *ctx); /* etl_reader_set_release: called at close */
        void *release_ctx;
        struct buffer_info *buffers; /* owned */
        uint32_t nr_buffers;
        struct stream *streams; /* owned */
        uint32_t nr_streams;
        struct etl_tourney tree;     /* owned: the streams by their head's timestamp */
        struct etl_inflate *inflate; /* owned: the compressed buffers' decompression, or NULL */
        uint32_t nr_inflaters;       /* its workers, ahead of the streams (0: none) */
        struct etl_logfile logfile;
        struct etl_record header_record;
        uint32_t header_stream; /* the stream holding buffer 0 */
        bool is_header_pending;
        bool is_start_pending;   /* rewound: the streams' first buffers not loaded yet (start) */
        bool is_advance_pending; /* the tree's top stream still holds the record last returned */
        uint32_t top_stream;     /* the stream of the record last returned */
        struct etl_reader_stats stats;
        struct etl_error warning;
        struct etl_error open_warning; /* the last problem met while scanning the buffers */
};

static void warn(struct etl_reader *r, uint64_t offset, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static void warn(struct etl_reader *r, uint64_t offset, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        r->warning.offset = offset;
        vsnprintf(r->warning.msg, sizeof(r->warning.msg), fmt, ap);
        va_end(ap);
}

/* Makes the bytes of buffer b addressable with 8-byte alignment in s: the mapping itself, a
   realigned copy, or the decompressed form. Returns false (and counts) when it cannot. */
static bool load_buffer(struct etl_reader *r, struct stream *s, uint32_t bi)
{
        struct buffer_info *b = &r->buffers[bi];
        const uint8_t *src = r->data + b->file_offset;

        if (b->is_damaged)
                return false;
        uint32_t need = b->filled_bytes;
        if (need > s->scratch_size && !(b->flags & WMI_BUFFER_FLAG_COMPRESSED) &&
            (b->file_offset & 7)) {
                uint8_t *n = realloc(s->scratch, need);
                if (!n) {
                        warn(r, b->file_offset, "out of memory for buffer %u", b->index);
                        return false;
                }
                s->scratch = n;
                s->scratch_size = need;
        }
        if (b->flags & WMI_BUFFER_FLAG_COMPRESSED) {
                uint32_t fmt = r->logfile.compression_format;
                if (fmt == COMPRESSION_FORMAT_LZNT1 || fmt == COMPRESSION_FORMAT_XPRESS_HUFF) {
                        warn(r, b->file_offset,
                             "buffer %u is compressed with %s, which etwtop does not support",
                             b->index,
                             fmt == COMPRESSION_FORMAT_LZNT1 ? "LZNT1" : "XPRESS Huffman");
                        b->is_damaged = true;
                        r->stats.nr_buffers_damaged++;
                        return false;
                }
                if (fmt != COMPRESSION_FORMAT_XPRESS || b->job == NO_JOB) {
                        warn(r, b->file_offset, "buffer %u: unknown compression format %u",
                             b->index, fmt);
                        b->is_damaged = true;
                        r->stats.nr_buffers_damaged++;
                        return false;
                }
                /* decompressed ahead by the worker (its buffer and s's scratch change hands),
                   or here */
                struct etl_inflate_result res;
                if (etl_inflate_take(r->inflate, b->job, &s->scratch, &s->scratch_size, &res) < 0) {
                        warn(r, b->file_offset, "out of memory for buffer %u", b->index);
                        return false;
                }
                if (res.rc < 0 || res.out_len != need - WMI_BUFFER_HEADER_SIZE) {
                        warn(r, b->file_offset + WMI_BUFFER_HEADER_SIZE + res.xe.in_offset,
                             "buffer %u: corrupt compressed data (%s): skipped", b->index,
                             res.rc < 0 && res.xe.what ? res.xe.what
                                                       : "decompressed size differs from Offset");
                        b->is_damaged = true;
                        r->stats.nr_buffers_damaged++;
                        return false;
                }
                s->cur = s->scratch;
        } else if (b->file_offset & 7) {
                memcpy(s->scratch, src, need);
                s->cur = s->scratch;
        } else {
                s->cur = src;
        }
        s->cur_filled = need;
        s->cur_pos = WMI_BUFFER_HEADER_SIZE;
        s->cur_index = bi;
        s->cur_file_offset = b->file_offset;
        /* The same for each of the buffer's records: set once here, where the record last
           returned is no longer read (the load comes at the next call), and kept by the
           parse, which writes the other fields. */
        s->head.cpu = b->cpu;
        s->head.logger_id = b->logger_id;
        s->head.buffer_index = b->index;
        return true;
}

/* The record just parsed at s's position is s's head; the next one starts at next. */
static inline void stream_take_head(struct stream *s, uint32_t next)
{
        s->head.file_offset = s->cur_file_offset + s->cur_pos;
        s->cur_pos = next;
        s->has_head = true;
        /* The next record's first line, parsed when the stream gives this one and advances:
           asked for now, where the buffer and the position are at hand. (etl_reader_next_ref
           asked for it when the stream won, which loaded both from the winner's entry, at the
           end of the tournament's chain.) */
        __builtin_prefetch(s->cur + next);
}

/* Moves s to its next record, loading buffers as needed. */
static void stream_advance(struct etl_reader *r, struct stream *s);

/* stream_advance's common case inline: the next record of the current buffer. A skip, the
   buffer's end or a damaged record go to stream_advance, which parses the record again. */
static inline __attribute__((always_inline)) void stream_advance_fast(struct etl_reader *r,
                                                                      struct stream *s)
{
        if (__builtin_expect(s->cur != NULL, 1)) {
                const char *why = NULL;
                uint32_t next = 0;
                if (etl_parse_record_inline(s->cur, s->cur_pos, s->cur_filled, &s->head, &next,
                                            &why) == ETL_PARSE_RECORD) {
                        stream_take_head(s, next);
                        return;
                }
        }
        stream_advance(r, s);
}

static void stream_advance(struct etl_reader *r, struct stream *s)
{
        s->has_head = false;
        for (;;) {
                if (s->cur) {
                        struct buffer_info *b = &r->buffers[s->cur_index];
                        const char *why = NULL;
                        uint32_t next = 0;
                        enum etl_parse_result pr = etl_parse_record(
                                s->cur, s->cur_pos, s->cur_filled, &s->head, &next, &why);
                        if (pr == ETL_PARSE_RECORD) {
                                stream_take_head(s, next);
                                return;
                        }
                        if (pr == ETL_PARSE_SKIP) {
                                r->stats.nr_records_skipped++;
                                s->cur_pos = next;
                                continue;
                        }
                        if (pr == ETL_PARSE_DAMAGED && !b->is_truncated) {
                                if (b->flags & WMI_BUFFER_FLAG_COMPRESSED)
                                        warn(r, b->file_offset,
                                             "buffer %u: %s at offset %u of its decompressed "
                                             "bytes: rest of the buffer skipped",
                                             b->index, why, s->cur_pos);
                                else
                                        warn(r, b->file_offset + s->cur_pos,
                                             "buffer %u: %s: rest of the buffer skipped", b->index,
                                             why);
                                if (!b->has_bad_record) {
                                        b->has_bad_record = true;
                                        r->stats.nr_buffers_damaged++;
                                }
                        }
                        /* end of this buffer */
                        s->cur = NULL;
                        r->stats.nr_buffers_done++;
                }
                if (s->next_buffer >= s->nr_buffers)
                        return;
                uint32_t bi = s->buffers[s->next_buffer++];
                if (!load_buffer(r, s, bi))
                        r->stats.nr_buffers_done++;
        }
}

/* s's entry in the tree: its head's timestamp, or done. */
static etl_tourney_entry stream_entry(const struct etl_reader *r, const struct stream *s)
{
        uint32_t i = (uint32_t)(s - r->streams);
        return s->has_head ? etl_tourney_make(s->head.timestamp, i) : etl_tourney_done(i);
}

/* The bytes of the record last returned, once it is given up (see settle). */
static inline void count_bytes_read(struct etl_reader *r)
{
        r->stats.nr_bytes_read += r->streams[r->top_stream].head.size_bytes;
}

void etl_reader_rewind(struct etl_reader *r)
{
        if (r->is_advance_pending)
                count_bytes_read(r);
        r->warning = r->open_warning;
        r->stats.nr_buffers_done = 0;
        r->stats.nr_records = 0;
        r->stats.nr_records_skipped = 0;
        if (r->inflate)
                etl_inflate_stop(r->inflate);
        for (uint32_t i = 0; i < r->nr_streams; i++) {
                struct stream *s = &r->streams[i];
                s->next_buffer = 0;
                s->cur = NULL;
                s->has_head = false;
        }
        r->is_header_pending = true;
        r->is_advance_pending = false;
        /* The first buffers wait for the first read: the open rewinds, and a consumer rewinds
           again before it reads (ProcessTrace), which decompressed every processor's first
           buffer twice (8 of the x64 sample's 367 decompressions). */
        r->is_start_pending = true;
}

/* Loads each stream's first buffer and record, and builds the tree: the rest of a rewind, done
   at the first read after it. */
static void start(struct etl_reader *r)
{
        r->is_start_pending = false;
        if (r->nr_inflaters)
                etl_inflate_start(r->inflate, r->nr_inflaters);
        /* The header record is delivered first; its stream resumes after it. */
        for (uint32_t i = 0; i < r->nr_streams; i++) {
                struct stream *s = &r->streams[i];
                if (i == r->header_stream) {
                        s->next_buffer = 1;
                        load_buffer(r, s, s->buffers[0]);
                        struct etl_record skip;
                        const char *why = NULL;
                        uint32_t next = WMI_BUFFER_HEADER_SIZE;
                        etl_parse_record(s->cur, WMI_BUFFER_HEADER_SIZE, s->cur_filled, &skip,
                                         &next, &why);
                        s->cur_pos = next;
                }
                stream_advance(r, s);
                etl_tourney_set(&r->tree, i, stream_entry(r, s));
        }
        etl_tourney_build(&r->tree);
}

static int cmp_by_sequence(const void *a, const void *b, void *ctx)
{
        const struct buffer_info *bufs = ctx;
        const struct buffer_info *x = &bufs[*(const uint32_t *)a], *y = &bufs[*(const uint32_t *)b];
        if (x->sequence != y->sequence)
                return x->sequence < y->sequence ? -1 : 1;
        return x->index < y->index ? -1 : x->index > y->index;
}

/* qsort with a context, for glibc's qsort_r without relying on _GNU_SOURCE ordering. */
static const struct buffer_info *sort_ctx;
static int cmp_by_sequence_global(const void *a, const void *b)
{
        return cmp_by_sequence(a, b, (void *)sort_ctx);
}

/* Reads the logfile header record (ETL-FORMAT.md 1.6) from buffer 0. */
static int read_logfile_header(struct etl_reader *r, const uint8_t *buf, uint32_t filled,
                               struct etl_error *err)
{
        struct etl_record rec;
        uint32_t next = 0;
        const char *why = NULL;
        enum etl_parse_result pr =
                etl_parse_record(buf, WMI_BUFFER_HEADER_SIZE, filled, &rec, &next, &why);
        if (pr != ETL_PARSE_RECORD) {
                etl_error_set(err, WMI_BUFFER_HEADER_SIZE,
                              "not an ETL file: the first record is not a trace header (%s)",
                              why ? why : "none");
                return -EINVAL;
        }
        if ((rec.header_type != TRACE_HEADER_TYPE_SYSTEM32 &&
             rec.header_type != TRACE_HEADER_TYPE_SYSTEM64) ||
            rec.hook_id != WMI_LOG_TYPE_HEADER) {
                etl_error_set(
                        err, WMI_BUFFER_HEADER_SIZE,
                        "not an ETL file: the first record is header type 0x%02x hook 0x%04x, "
                        "not the logfile header",
                        rec.header_type, rec.hook_id);
                return -EINVAL;
        }
        bool is64 = rec.header_type == TRACE_HEADER_TYPE_SYSTEM64;
        uint32_t hsize = is64 ? LOGFILE_HEADER64_SIZE : LOGFILE_HEADER32_SIZE;
        if (rec.payload_size < hsize) {
                etl_error_set(err, WMI_BUFFER_HEADER_SIZE,
                              "logfile header truncated: %u bytes, %u needed", rec.payload_size,
                              hsize);
                return -EBADMSG;
        }
        const uint8_t *p = rec.payload;
        TRACE_LOGFILE_HEADER *h = &r->logfile.header;
        memset(h, 0, sizeof(*h));
        h->BufferSize = le_get32(p + 0x00);
        h->Version = le_get32(p + 0x04);
        h->ProviderVersion = le_get32(p + 0x08);
        h->NumberOfProcessors = le_get32(p + 0x0C);
        h->EndTime.QuadPart = (int64_t)le_get64(p + 0x10);
        h->TimerResolution = le_get32(p + 0x18);
        h->MaximumFileSize = le_get32(p + 0x1C);
        h->LogFileMode = le_get32(p + 0x20);
        h->BuffersWritten = le_get32(p + 0x24);
        h->StartBuffers = le_get32(p + 0x28);
        h->PointerSize = le_get32(p + 0x2C);
        h->EventsLost = le_get32(p + 0x30);
        h->CpuSpeedInMHz = le_get32(p + 0x34);
        uint32_t tz = is64 ? 0x48 : 0x40;
        memcpy(&h->TimeZone, p + tz, sizeof(h->TimeZone));
        uint32_t rest = is64 ? 0xF8 : 0xF0;
        h->BootTime.QuadPart = (int64_t)le_get64(p + rest);
        h->PerfFreq.QuadPart = (int64_t)le_get64(p + rest + 8);
        h->StartTime.QuadPart = (int64_t)le_get64(p + rest + 16);
        h->ReservedFlags = le_get32(p + rest + 24);
        h->BuffersLost = le_get32(p + rest + 28);

        /* The two UTF-16 names after the header. */
        const uint8_t *names = p + hsize;
        size_t left_units = (rec.payload_size - hsize) / 2;
        r->logfile.logger_name_w = calloc(left_units + 1, sizeof(WCHAR));
        r->logfile.log_file_name_w = calloc(left_units + 1, sizeof(WCHAR));
        r->logfile.logger_name = calloc(left_units * 3 + 1, 1);
        r->logfile.log_file_name = calloc(left_units * 3 + 1, 1);
        if (!r->logfile.logger_name_w || !r->logfile.log_file_name_w || !r->logfile.logger_name ||
            !r->logfile.log_file_name)
                return -ENOMEM;
        size_t n1 = utf16le_to_utf8(names, left_units, r->logfile.logger_name, left_units * 3 + 1);
        for (size_t i = 0; i < n1; i++)
                r->logfile.logger_name_w[i] = le_get16(names + 2 * i);
        size_t n2 = utf16le_to_utf8(names + 2 * n1, left_units - n1, r->logfile.log_file_name,
                                    left_units * 3 + 1);
        for (size_t i = 0; i < n2; i++)
                r->logfile.log_file_name_w[i] = le_get16(names + 2 * n1 + 2 * i);
        h->LoggerName = r->logfile.logger_name_w;
        h->LogFileName = r->logfile.log_file_name_w;
        r->logfile.start_timestamp = rec.timestamp;
        r->logfile.pointer_size = is64 ? 8 : 4;
        rec.is_header = true;
        rec.cpu = 0;
        r->header_record = rec;
        return 0;
}

/* Walks the buffers from offset 0, validating each header (ETL-FORMAT.md 1.1-1.3). */
static int scan_buffers(struct etl_reader *r, struct etl_error *err)
{
        size_t cap = 64;
        r->buffers = malloc(cap * sizeof(*r->buffers));
        if (!r->buffers)
                return -ENOMEM;
        uint64_t off = 0;
        while (off < r->size) {
                const uint8_t *b = r->data + off;
                uint64_t left = r->size - off;
                if (left < WMI_BUFFER_HEADER_SIZE) {
                        if (r->nr_buffers == 0) {
                                etl_error_set(
                                        err, off,
                                        "not an ETL file: %llu bytes, shorter than one buffer "
                                        "header (72 bytes)",
                                        (unsigned long long)left);
                                return -EINVAL;
                        }
                        warn(r, off, "%llu trailing bytes after the last buffer ignored",
                             (unsigned long long)left);
                        break;
                }
                uint32_t size = le_get32(b + BUF_SIZE_OFF);
                uint32_t saved = le_get32(b + BUF_SAVED_OFFSET_OFF);
                uint32_t offset = le_get32(b + BUF_OFFSET_OFF);
                uint16_t flags = le_get16(b + BUF_FLAG_OFF);
                if (size == 0 && r->nr_buffers > 0) {
                        /* preallocated or circular file: the rest was never written */
                        bool is_zero = true;
                        for (uint64_t i = 0; i < left && is_zero; i++)
                                is_zero = b[i] == 0;
                        if (!is_zero)
                                warn(r, off,
                                     "buffer size 0 at offset %llu: the rest of the file "
                                     "is not buffers and was skipped",
                                     (unsigned long long)off);
                        break;
                }
                if (size < WMI_BUFFER_HEADER_SIZE || size > MAX_ETW_BUFFER_SIZE) {
                        if (r->nr_buffers == 0) {
                                etl_error_set(
                                        err, off,
                                        "not an ETL file: buffer size %u at offset 0 is out of "
                                        "range (72 .. 16 MiB)",
                                        size);
                                return -EINVAL;
                        }
                        warn(r, off,
                             "buffer %u: size %u out of range: it and the rest of the file skipped",
                             r->nr_buffers, size);
                        r->stats.nr_buffers_damaged++;
                        break;
                }
                bool is_truncated = size > left;
                if (is_truncated && r->nr_buffers == 0) {
                        etl_error_set(
                                err, off,
                                "truncated: the first buffer claims %u bytes, the file has %llu",
                                size, (unsigned long long)left);
                        return -EINVAL;
                }
                uint32_t filled = offset ? offset : saved;
                bool is_compressed = flags & WMI_BUFFER_FLAG_COMPRESSED;
                bool is_damaged = false;
                if (is_compressed) {
                        if (filled < WMI_BUFFER_HEADER_SIZE || filled > MAX_ETW_BUFFER_SIZE) {
                                warn(r, off + BUF_OFFSET_OFF,
                                     "buffer %u: uncompressed size %u out of range: skipped",
                                     r->nr_buffers, filled);
                                is_damaged = true;
                        }
                        if (is_truncated) {
                                warn(r, off,
                                     "buffer %u: truncated (%u bytes claimed, %llu in the "
                                     "file): skipped",
                                     r->nr_buffers, size, (unsigned long long)left);
                                is_damaged = true;
                        }
                } else {
                        if (filled < WMI_BUFFER_HEADER_SIZE || filled > size) {
                                if (r->nr_buffers == 0 && filled > size) {
                                        etl_error_set(err, off + BUF_OFFSET_OFF,
                                                      "not an ETL file: filled size %u exceeds the "
                                                      "buffer size %u",
                                                      filled, size);
                                        return -EINVAL;
                                }
                                filled = size;
                        }
                        if (is_truncated) {
                                /* read the records that are wholly in the file */
                                warn(r, off,
                                     "buffer %u: truncated (%u bytes claimed, %llu in the "
                                     "file): its complete records are kept",
                                     r->nr_buffers, size, (unsigned long long)left);
                                r->stats.nr_buffers_damaged++;
                                if (filled > left)
                                        filled = (uint32_t)left;
                        }
                }
                if (r->nr_buffers == cap) {
                        cap *= 2;
                        struct buffer_info *n = realloc(r->buffers, cap * sizeof(*n));
                        if (!n)
                                return -ENOMEM;
                        r->buffers = n;
                }
                struct buffer_info *bi = &r->buffers[r->nr_buffers];
                bi->file_offset = off;
                bi->size_bytes = is_truncated ? (uint32_t)left : size;
                bi->filled_bytes = filled;
                bi->sequence = le_get64(b + BUF_SEQUENCE_OFF);
                bi->cpu = le_get16(b + BUF_PROC_INDEX_OFF) & ETW_PROCESSOR_INDEX_MASK;
                bi->logger_id = le_get16(b + BUF_LOGGER_ID_OFF);
                bi->flags = flags;
                bi->type = le_get16(b + BUF_TYPE_OFF);
                bi->index = r->nr_buffers;
                bi->job = NO_JOB;
                bi->is_damaged = is_damaged;
                bi->is_truncated = is_truncated;
                bi->has_bad_record = false;
                if (is_damaged)
                        r->stats.nr_buffers_damaged++;
                if (is_compressed)
                        r->stats.nr_buffers_compressed++;
                if (flags & WMI_BUFFER_FLAG_EVENTS_LOST)
                        r->stats.nr_events_lost++;
                r->nr_buffers++;
                if (is_truncated)
                        break;
                off += size;
        }
        r->stats.nr_buffers = r->nr_buffers;
        return 0;
}

/* Groups the buffers by processor, each group in sequence order (ETL-FORMAT.md 1.4). */
static int build_streams(struct etl_reader *r)
{
        uint32_t max_cpu = 0;
        for (uint32_t i = 0; i < r->nr_buffers; i++)
                if (r->buffers[i].cpu > max_cpu)
                        max_cpu = r->buffers[i].cpu;
        uint32_t *count = calloc(max_cpu + 1, sizeof(*count));
        uint32_t *slot = calloc(max_cpu + 1, sizeof(*slot));
        if (!count || !slot) {
                free(count);
                free(slot);
                return -ENOMEM;
        }
        for (uint32_t i = 0; i < r->nr_buffers; i++)
                count[r->buffers[i].cpu]++;
        /* buffer 0 (the header buffer) always gets stream 0 */
        r->streams = calloc(max_cpu + 2, sizeof(*r->streams));
        if (!r->streams) {
                free(count);
                free(slot);
                return -ENOMEM;
        }
        r->nr_streams = 1;
        r->streams[0].buffers = malloc(sizeof(uint32_t));
        if (!r->streams[0].buffers)
                goto nomem;
        r->streams[0].buffers[0] = 0;
        r->streams[0].nr_buffers = 1;
        count[r->buffers[0].cpu]--;
        for (uint32_t c = 0; c <= max_cpu; c++) {
                if (!count[c])
                        continue;
                struct stream *s = &r->streams[r->nr_streams];
                s->buffers = malloc(count[c] * sizeof(uint32_t));
                if (!s->buffers)
                        goto nomem;
                slot[c] = r->nr_streams++;
        }
        if (etl_tourney_init(&r->tree, r->nr_streams) < 0)
                goto nomem;
        for (uint32_t i = 1; i < r->nr_buffers; i++) {
                struct stream *s = &r->streams[slot[r->buffers[i].cpu]];
                s->buffers[s->nr_buffers++] = i;
        }
        sort_ctx = r->buffers;
        for (uint32_t i = 1; i < r->nr_streams; i++)
                qsort(r->streams[i].buffers, r->streams[i].nr_buffers, sizeof(uint32_t),
                      cmp_by_sequence_global);
        r->stats.nr_cpus = 0;
        for (uint32_t c = 0; c <= max_cpu; c++)
                r->stats.nr_cpus += count[c] || (c == r->buffers[0].cpu);
        free(count);
        free(slot);
        r->header_stream = 0;
        return 0;
nomem:
        free(count);
        free(slot);
        return -ENOMEM;
}

/* A compressed buffer's place in the order the streams are expected to need it. */
struct need {
        uint64_t key;
        uint64_t sequence;
        uint32_t buffer;
};

static int cmp_need(const void *a, const void *b)
{
        const struct need *x = a, *y = b;
        if (x->key != y->key)
                return x->key < y->key ? -1 : 1;
        return x->sequence < y->sequence ? -1 : x->sequence > y->sequence;
}

/* The processors this thread may run on. */
static int cpus_allowed(void)
{
        cpu_set_t set;
        return sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
}

/* How many workers decompress ahead of the reading thread, for n compressed buffers:
   ETWTOP_READER_THREADS's number (0: none, decompressed on the reading thread), else one a
   processor beside the reading thread's, where there are 8 buffers a worker to pay for it,
   8 at most (the reading thread, which parses and decodes, is the slower past them). */
static uint32_t inflaters_for(uint32_t n)
{
        if (!n)
                return 0;
        const char *env = getenv("ETWTOP_READER_THREADS");
        if (env && *env) {
                char *end;
                unsigned long v = strtoul(env, &end, 10);
                if (*end || end == env)
                        return 1; /* not a number: a worker, as "1" */
                return v > ETL_INFLATE_MAX_WORKERS ? ETL_INFLATE_MAX_WORKERS : (uint32_t)v;
        }
        int cpus = cpus_allowed();
        uint32_t by_cpus = cpus > 1 ? (uint32_t)cpus - 1 : 0, by_jobs = n / 8, max = 8;
        uint32_t w = by_cpus < by_jobs ? by_cpus : by_jobs;
        return w < max ? w : max;
}

/* The XPRESS buffers' decompression, in the order the merge will likely ask for them: a
   stream's buffer is needed about when the merge passes the end of its previous one, whose
   flush time (TimeStamp) is the key; where a stream's flush times go backwards (the field is
   not to be relied on, ETL-FORMAT.md 1.2), its place in the stream as a fraction of it. On
   worker threads where there are enough buffers to pay for them and processors to run them
   (inflaters_for). */
static int plan_inflate(struct etl_reader *r)
{
        if (!r->stats.nr_buffers_compressed ||
            r->logfile.compression_format != COMPRESSION_FORMAT_XPRESS)
                return 0;
        struct need *order = malloc(r->nr_buffers * sizeof(*order));
        struct etl_inflate_job *jobs = malloc(r->nr_buffers * sizeof(*jobs));
        if (!order || !jobs) {
                free(order);
                free(jobs);
                return -ENOMEM;
        }
        bool is_by_time = true;
        for (uint32_t i = 0; i < r->nr_streams && is_by_time; i++) {
                const struct stream *s = &r->streams[i];
                uint64_t last = 0;
                for (uint32_t k = 0; k < s->nr_buffers && is_by_time; k++) {
                        const struct buffer_info *b = &r->buffers[s->buffers[k]];
                        uint64_t t = le_get64(r->data + b->file_offset + BUF_TIMESTAMP_OFF);
                        is_by_time = t >= last;
                        last = t;
                }
        }
        uint32_t n = 0, max_out = 0;
        for (uint32_t i = 0; i < r->nr_streams; i++) {
                const struct stream *s = &r->streams[i];
                for (uint32_t k = 0; k < s->nr_buffers; k++) {
                        const struct buffer_info *b = &r->buffers[s->buffers[k]];
                        if (!(b->flags & WMI_BUFFER_FLAG_COMPRESSED) || b->is_damaged)
                                continue;
                        uint64_t key;
                        if (!k)
                                key = 0;
                        else if (is_by_time)
                                key = le_get64(r->data + r->buffers[s->buffers[k - 1]].file_offset +
                                               BUF_TIMESTAMP_OFF);
                        else
                                key = ((uint64_t)k << 32) / s->nr_buffers;
                        order[n++] = (struct need){key, b->sequence, s->buffers[k]};
                        if (b->filled_bytes > max_out)
                                max_out = b->filled_bytes;
                }
        }
        qsort(order, n, sizeof(*order), cmp_need);
        for (uint32_t j = 0; j < n; j++) {
                struct buffer_info *b = &r->buffers[order[j].buffer];
                b->job = j;
                jobs[j] = (struct etl_inflate_job){r->data + b->file_offset, b->size_bytes,
                                                   b->filled_bytes};
        }
        /* Two results waiting a stream, and two a worker, at most 64 or 64 MiB of them. */
        r->nr_inflaters = inflaters_for(n);
        uint32_t window = 2 * r->nr_streams;
        if (window < 2 * r->nr_inflaters)
                window = 2 * r->nr_inflaters;
        window = window < 8 ? 8 : window > 64 ? 64 : window;
        while (window > 2 && (uint64_t)window * max_out > (64u << 20))
                window--;
        r->inflate = etl_inflate_new(jobs, n, window);
        free(order);
        free(jobs);
        if (!r->inflate)
                return -ENOMEM;
        return 0;
}

/* A file that is not a trace, named by what its first bytes say it is (a zip of one, a
   program), the field that made no sense kept in brackets. */
static void name_foreign(struct etl_error *err, const uint8_t *data, size_t size)
{
        const char *what = file_magic_foreign(data, size);
        if (!err || !what)
                return;
        static const char prefix[] = "not an ETL file: ";
        char was[sizeof(err->msg)];
        snprintf(was, sizeof(was), "%s",
                 strncmp(err->msg, prefix, sizeof(prefix) - 1) == 0 ? err->msg + sizeof(prefix) - 1
                                                                    : err->msg);
        etl_error_set(err, err->offset, "not an ETL file: %s (%s)", what, was);
}

int etl_reader_open_mem(struct etl_reader **out, const uint8_t *data, size_t size,
                        struct etl_error *err)
{
        int rc;
        *out = NULL;
        if (err)
                memset(err, 0, sizeof(*err));
        if (size == 0) {
                etl_error_set(err, 0, "the file is empty");
                return -EINVAL;
        }
        struct etl_reader *r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        r->data = data;
        r->size = size;
        rc = scan_buffers(r, err);
        if (rc < 0)
                goto fail;
        const struct buffer_info *b0 = &r->buffers[0];
        if (b0->flags & WMI_BUFFER_FLAG_COMPRESSED) {
                etl_error_set(err, BUF_FLAG_OFF,
                              "not an ETL file: the header buffer is compressed");
                rc = -EINVAL;
                goto fail;
        }
        /* The header buffer may sit in the mapping at any alignment only at offset 0: aligned. */
        rc = read_logfile_header(r, data, b0->filled_bytes, err);
        if (rc < 0)
                goto fail;
        if (r->stats.nr_buffers_compressed)
                r->logfile.compression_format = le_get32(data + BUF_STATE_OFF) & 0xFFFF;
        r->stats.nr_events_lost += r->logfile.header.EventsLost;
        rc = build_streams(r);
        if (rc < 0)
                goto fail;
        rc = plan_inflate(r);
        if (rc < 0)
                goto fail;
        r->open_warning = r->warning;
        etl_reader_rewind(r);
        *out = r;
        return 0;
fail:
        if (rc == -ENOMEM)
                etl_error_set(err, 0, "out of memory");
        else
                name_foreign(err, data, size);
        etl_reader_close(r);
        return rc;
}

void etl_reader_close(struct etl_reader *r)
{
        if (!r)
                return;
        etl_inflate_free(r->inflate);
        for (uint32_t i = 0; i < r->nr_streams; i++) {
                free(r->streams[i].buffers);
                free(r->streams[i].scratch);
        }
        free(r->streams);
        etl_tourney_free(&r->tree);
        free(r->buffers);
        free(r->logfile.logger_name_w);
        free(r->logfile.log_file_name_w);
        free(r->logfile.logger_name);
        free(r->logfile.log_file_name);
        if (r->release)
                r->release(r->release_ctx);
        free(r);
}

void etl_reader_set_release(struct etl_reader *r, void (*fn)(void *ctx), void *ctx)
{
        r->release = fn;
        r->release_ctx = ctx;
}

const struct etl_logfile *etl_reader_logfile(const struct etl_reader *r)
{
        return &r->logfile;
}

/* Moves the stream whose record etl_reader_next returned last to its next record. Deferred to
   the following call so that the returned record's bytes stay valid until then, even when the
   stream's next buffer is decompressed into the same scratch memory. */
static inline __attribute__((always_inline)) void settle(struct etl_reader *r)
{
        if (!r->is_advance_pending)
                return;
        r->is_advance_pending = false;
        uint32_t i = r->top_stream;
        struct stream *s = &r->streams[i];
        /* Counted here, from the stream's entry that the advance reads anyway, rather than
           when the record is returned: there it was a load from the winner's entry at the end
           of the tournament's chain. etl_reader_get_stats adds the record still held. */
        r->stats.nr_bytes_read += s->head.size_bytes;
        stream_advance_fast(r, s);
        etl_tourney_replace_top_at(&r->tree, i, s->has_head, s->head.timestamp);
}

/* etl_reader_next_ref after a rewind: the streams' first buffers loaded (start), then the header
   record, which comes first; NULL once the header is out. Out of line, so that the one test of
   both flags is all a record pays for them. */
static __attribute__((noinline, cold)) const struct etl_record *next_ref_first(struct etl_reader *r)
{
        if (r->is_start_pending)
                start(r);
        if (!r->is_header_pending)
                return NULL;
        r->is_header_pending = false;
        struct etl_record *h = &r->header_record;
        h->cpu = r->buffers[0].cpu;
        h->logger_id = r->buffers[0].logger_id;
        h->buffer_index = 0;
        h->file_offset = WMI_BUFFER_HEADER_SIZE;
        r->stats.nr_records++;
        return h;
}

const struct etl_record *etl_reader_next_ref(struct etl_reader *r)
{
        if (__builtin_expect(r->is_start_pending | r->is_header_pending, 0)) {
                const struct etl_record *h = next_ref_first(r);
                if (h)
                        return h;
        }
        settle(r);
        uint32_t i;
        if (!etl_tourney_winner(&r->tree, &i))
                return NULL;
        struct stream *s = &r->streams[i];
        r->top_stream = i;
        r->is_advance_pending = true;
        r->stats.nr_records++;
        return &s->head;
}

int etl_reader_next(struct etl_reader *r, struct etl_record *rec)
{
        const struct etl_record *p = etl_reader_next_ref(r);
        if (!p)
                return 0;
        *rec = *p;
        return 1;
}

uint64_t etl_reader_peek_timestamp(struct etl_reader *r)
{
        if (r->is_start_pending)
                start(r);
        if (r->is_header_pending)
                return r->header_record.timestamp;
        settle(r);
        if (etl_tourney_top_is_done(&r->tree))
                return UINT64_MAX;
        return r->streams[etl_tourney_top_stream(&r->tree)].head.timestamp;
}

uint32_t etl_reader_nr_buffers_done(const struct etl_reader *r)
{
        return r->stats.nr_buffers_done;
}

void etl_reader_get_stats(const struct etl_reader *r, struct etl_reader_stats *st)
{
        *st = r->stats;
        if (r->inflate) {
                struct etl_inflate_stats is;
                etl_inflate_get_stats(r->inflate, &is);
                st->nr_inflate_workers = r->nr_inflaters;
                st->nr_inflated_ahead = is.nr_ahead;
                st->nr_inflated_here = is.nr_here;
        }
        /* the record last returned, whose bytes settle counts when it advances */
        if (r->is_advance_pending)
                st->nr_bytes_read += r->streams[r->top_stream].head.size_bytes;
}

const struct etl_error *etl_reader_last_warning(const struct etl_reader *r)
{
        return &r->warning;
}

/* a + b, saturated to the int64_t range */
static int64_t add_saturated(int64_t a, __int128 b)
{
        __int128 sum = (__int128)a + b;
        if (sum > INT64_MAX)
                return INT64_MAX;
        if (sum < INT64_MIN)
                return INT64_MIN;
        return (int64_t)sum;
}

int64_t etl_reader_to_filetime(const struct etl_reader *r, uint64_t timestamp)
{
        const TRACE_LOGFILE_HEADER *h = &r->logfile.header;
        /* ETL-FORMAT.md 1.8; corrupt header fields saturate instead of wrapping */
        __int128 delta = (__int128)timestamp - (__int128)r->logfile.start_timestamp;
        switch (h->ReservedFlags) {
        case EVENT_TRACE_CLOCK_SYSTEMTIME:
                return timestamp > INT64_MAX ? INT64_MAX : (int64_t)timestamp;
        case EVENT_TRACE_CLOCK_CPUCYCLE: {
                uint32_t mhz = h->CpuSpeedInMHz ? h->CpuSpeedInMHz : 1000;
                return add_saturated(h->StartTime.QuadPart, delta * 10 / mhz);
        }
        default: {
                int64_t freq = h->PerfFreq.QuadPart > 0 ? h->PerfFreq.QuadPart : 10000000;
                if (freq == 10000000)
                        return add_saturated(h->StartTime.QuadPart, delta);
                return add_saturated(h->StartTime.QuadPart, delta * 10000000 / freq);
        }
        }
}
