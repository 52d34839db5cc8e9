/* SPDX-License-Identifier: MIT */
/* test_etl_reader.c: the .etl reader on the real samples: counts, header fields, merge order,
 * bytes. */
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/utf.h"
#include "etl_reader.h"
#include "etw/ntwmi.h"

static char *sample_path(const char *env, const char *name)
{
        const char *dir = getenv(env);
        if (!dir)
                return NULL;
        size_t n = strlen(dir) + strlen(name) + 2;
        char *p = malloc(n);
        snprintf(p, n, "%s/%s", dir, name);
        FILE *f = fopen(p, "rb");
        if (!f) {
                free(p);
                return NULL;
        }
        fclose(f);
        return p;
}

static struct etl_reader *open_sample(const char *env, const char *name)
{
        char *path = sample_path(env, name);
        if (!path) {
                fprintf(stderr, "sample %s not found (set %s)\n", name, env);
                return NULL;
        }
        struct etl_reader *r = NULL;
        struct etl_error err;
        int rc = etl_reader_open_file(&r, path, &err);
        if (rc < 0)
                fprintf(stderr, "%s: %s at %llu\n", path, err.msg, (unsigned long long)err.offset);
        assert_int_equal(rc, 0);
        free(path);
        return r;
}

struct census {
        uint64_t nr_records;
        uint64_t nr_backwards; /* a record older than the one before it */
        uint64_t by_type[256];
        uint64_t *by_hook; /* [65536] */
};

static void take_census(struct etl_reader *r, struct census *c)
{
        struct etl_record rec;
        uint64_t last = 0;
        memset(c, 0, sizeof(*c));
        c->by_hook = calloc(65536, sizeof(uint64_t));
        bool is_first = true;
        while (etl_reader_next(r, &rec) == 1) {
                if (is_first) {
                        assert_true(rec.is_header);
                        assert_int_equal(rec.hook_id, WMI_LOG_TYPE_HEADER);
                        is_first = false;
                } else {
                        assert_false(rec.is_header);
                }
                c->nr_records++;
                c->by_type[rec.header_type]++;
                if (rec.header_type <= TRACE_HEADER_TYPE_COMPACT64 ||
                    rec.header_type == TRACE_HEADER_TYPE_PERFINFO32 ||
                    rec.header_type == TRACE_HEADER_TYPE_PERFINFO64)
                        c->by_hook[rec.hook_id]++;
                if (rec.timestamp < last)
                        c->nr_backwards++;
                last = rec.timestamp;
                assert_true(rec.payload >= rec.data);
                assert_true(rec.payload + rec.payload_size <= rec.data + rec.size_bytes);
        }
}

/* ETL-FORMAT.md 1.6 worked example and samples/README.md: lxcore has 4 records. */
static void test_lxcore(void **state)
{
        (void)state;
        struct etl_reader *r = open_sample("ETWTOP_SAMPLES", "etlparser_lxcore_kernel.etl");
        if (!r)
                skip();
        const struct etl_logfile *lf = etl_reader_logfile(r);
        assert_int_equal(lf->header.BufferSize, 8192);
        assert_int_equal(lf->header.VersionDetail.MajorVersion, 10);
        assert_int_equal(lf->header.VersionDetail.MinorVersion, 0);
        assert_int_equal(lf->header.VersionDetail.SubVersion, 1);
        assert_int_equal(lf->header.VersionDetail.SubMinorVersion, 5);
        assert_int_equal(lf->header.ProviderVersion, 19041);
        assert_int_equal(lf->header.NumberOfProcessors, 6);
        assert_int_equal(lf->header.PointerSize, 8);
        assert_int_equal(lf->header.ReservedFlags, 1);
        assert_int_equal(lf->header.PerfFreq.QuadPart, 10000000);
        assert_int_equal(lf->header.BuffersWritten, 3);
        assert_int_equal(lf->start_timestamp, 0x19d7731752ull);
        assert_string_equal(lf->logger_name, "lxcore_kernel");
        assert_int_equal(lf->header.LoggerName[0], 'l');

        struct etl_record rec;
        assert_int_equal(etl_reader_next(r, &rec), 1);
        assert_true(rec.is_header);
        assert_int_equal(rec.header_type, TRACE_HEADER_TYPE_SYSTEM64);
        assert_int_equal(rec.size_bytes, 0x188);
        assert_int_equal(rec.tid, 0x1f80);
        assert_int_equal(rec.pid, 0x17e0);
        assert_int_equal(rec.timestamp, 0x19d7731752ull);
        assert_int_equal(rec.file_offset, 0x48);
        etl_reader_rewind(r);
        struct census c;
        take_census(r, &c);
        assert_int_equal(c.nr_records, 4);
        assert_int_equal(c.by_type[TRACE_HEADER_TYPE_SYSTEM64], 2);
        assert_int_equal(c.by_type[TRACE_HEADER_TYPE_EVENT_HEADER64], 2);
        assert_int_equal(c.by_hook[WMI_LOG_TYPE_PARTITION_INFO], 1);
        assert_int_equal(c.nr_backwards, 0);
        /* ETL-FORMAT.md 1.8: the last event is +5.765 s from the header at 10 MHz */
        etl_reader_rewind(r);
        uint64_t last = 0;
        while (etl_reader_next(r, &rec) == 1)
                last = rec.timestamp;
        assert_int_equal(last, 111046477804ull);
        int64_t ft = etl_reader_to_filetime(r, last);
        assert_true(ft >= lf->header.StartTime.QuadPart);
        assert_true(ft <= lf->header.EndTime.QuadPart);
        assert_int_equal((ft - lf->header.StartTime.QuadPart) / 10000, 5765);
        free(c.by_hook);
        etl_reader_close(r);
}

static void test_shutdown_perfdiag(void **state)
{
        (void)state;
        struct etl_reader *r =
                open_sample("ETWTOP_SAMPLES", "etlparser_ShutdownPerfDiagLogger.etl");
        if (!r)
                skip();
        struct census c;
        take_census(r, &c);
        struct etl_reader_stats st;
        etl_reader_get_stats(r, &st);
        assert_int_equal(c.nr_records, 17078);
        assert_int_equal(st.nr_buffers, 49);
        assert_int_equal(st.nr_buffers_compressed, 0);
        assert_int_equal(st.nr_buffers_damaged, 0);
        assert_int_equal(st.nr_buffers_done, 49);
        assert_int_equal(st.nr_cpus, 2);
        assert_int_equal(c.by_type[TRACE_HEADER_TYPE_SYSTEM64], 8433);
        assert_int_equal(c.by_type[TRACE_HEADER_TYPE_PERFINFO64], 8645);
        assert_int_equal(c.by_hook[WMI_LOG_TYPE_PROCESS_LOAD_IMAGE], 72);
        assert_int_equal(c.by_hook[WMI_LOG_TYPE_IMAGE_DC_START], 6745);
        assert_int_equal(c.by_hook[WMI_LOG_TYPE_IMAGE_UNLOAD], 4791);
        assert_int_equal(c.by_hook[WMI_LOG_TYPE_THREAD_DC_START], 1175);
        assert_int_equal(c.by_hook[WMI_LOG_TYPE_PROCESS_DEFUNCT], 5);
        assert_int_equal(c.by_hook[WMI_LOG_TYPE_HEADER_EXTENSION], 3);
        assert_int_equal(c.by_hook[WMI_LOG_TYPE_GROUP_MASKS_END], 2);
        assert_int_equal(c.nr_backwards, 0);
        const struct etl_logfile *lf = etl_reader_logfile(r);
        assert_int_equal(lf->header.LogFileMode, 0x2000080);
        assert_int_equal(lf->header.ProviderVersion, 18362);
        assert_int_equal(lf->header.BufferSize, 65536);
        free(c.by_hook);
        etl_reader_close(r);
}

/* 8 CPUs, 26 buffers: the per-CPU sort and the merge deliver time order. */
static void test_powershell_merge(void **state)
{
        (void)state;
        struct etl_reader *r = open_sample("ETWTOP_SAMPLES", "krabsetw_powershell.etl");
        if (!r)
                skip();
        struct census c;
        take_census(r, &c);
        struct etl_reader_stats st;
        etl_reader_get_stats(r, &st);
        assert_int_equal(c.nr_records, 114);
        assert_int_equal(st.nr_buffers, 26);
        assert_int_equal(st.nr_cpus, 8);
        assert_int_equal(c.by_type[TRACE_HEADER_TYPE_EVENT_HEADER64], 112);
        assert_int_equal(c.nr_backwards, 0);
        /* a second pass after rewind gives the same sequence */
        etl_reader_rewind(r);
        struct census c2;
        take_census(r, &c2);
        assert_int_equal(c2.nr_records, 114);
        free(c.by_hook);
        free(c2.by_hook);
        etl_reader_close(r);
}

/* The statistics' bytes read are those of every record returned so far (the header record's
 * excepted), at any point between reads: the reader counts a record's bytes when its stream
 * advances past it, so the one last returned must be counted by the statistics themselves, and by
 * a rewind that drops it. Across a rewind the count goes on. */
static void test_bytes_read_at_every_point(void **state)
{
        (void)state;
        struct etl_reader *r = open_sample("ETWTOP_SAMPLES", "krabsetw_powershell.etl");
        if (!r)
                skip();
        struct etl_reader_stats st;
        uint64_t sum = 0, nr = 0;
        const struct etl_record *rec;
        for (int pass = 0; pass < 2; pass++) {
                etl_reader_rewind(r);
                /* the second pass stops after 41 records (not after a peek) and rewinds there */
                while ((pass == 0 || nr < 114 + 41) && (rec = etl_reader_next_ref(r))) {
                        if (!rec->is_header)
                                sum += rec->size_bytes;
                        nr++;
                        etl_reader_get_stats(r, &st);
                        assert_int_equal(st.nr_bytes_read, sum);
                        if (nr % 7 == 0) {
                                /* a peek settles the record last returned */
                                etl_reader_peek_timestamp(r);
                                etl_reader_get_stats(r, &st);
                                assert_int_equal(st.nr_bytes_read, sum);
                        }
                }
        }
        assert_int_equal(nr, 114 + 41);
        etl_reader_rewind(r);
        etl_reader_get_stats(r, &st);
        assert_int_equal(st.nr_bytes_read, sum);
        while ((rec = etl_reader_next_ref(r)))
                if (!rec->is_header)
                        sum += rec->size_bytes;
        etl_reader_get_stats(r, &st);
        assert_int_equal(st.nr_bytes_read, sum);
        etl_reader_close(r);
}

/* Compressed, odd-sized buffers, SavedOffset != Offset in the header buffer. */
static void test_self_describing(void **state)
{
        (void)state;
        struct etl_reader *r =
                open_sample("ETWTOP_SAMPLES", "perfview_SelfDescribingSingleEvent.etl");
        if (!r)
                skip();
        struct census c;
        take_census(r, &c);
        struct etl_reader_stats st;
        etl_reader_get_stats(r, &st);
        const struct etl_logfile *lf = etl_reader_logfile(r);
        assert_int_equal(c.nr_records, 23);
        assert_int_equal(st.nr_buffers, 3);
        assert_int_equal(st.nr_buffers_compressed, 2);
        assert_int_equal(st.nr_buffers_damaged, 0);
        assert_int_equal(lf->compression_format, COMPRESSION_FORMAT_XPRESS);
        assert_true(lf->header.LogFileMode & EVENT_TRACE_COMPRESSED_MODE);
        assert_string_equal(lf->logger_name, "Relogger");
        assert_string_equal(lf->log_file_name, "[multiple files]");
        assert_int_equal(c.by_type[TRACE_HEADER_TYPE_FULL_HEADER64], 18);
        assert_int_equal(c.by_type[TRACE_HEADER_TYPE_EVENT_HEADER64], 1);
        free(c.by_hook);
        etl_reader_close(r);
}

static void test_gcevents(void **state)
{
        (void)state;
        struct etl_reader *r = open_sample("ETWTOP_SAMPLES_UNPACKED", "gcevents/PerfViewData.etl");
        if (!r)
                skip();
        struct census c;
        take_census(r, &c);
        assert_int_equal(c.nr_records, 71);
        assert_int_equal(c.by_type[TRACE_HEADER_TYPE_EVENT_HEADER64], 69);
        free(c.by_hook);
        etl_reader_close(r);
}

/* The PerfView merged trace: 360 XPRESS buffers, 179,474 records (samples/README.md), and the
   SampledProfile/StackWalk pair of ETL-FORMAT.md 3.2 and 3.4. */
static void test_perfview_net(void **state)
{
        (void)state;
        struct etl_reader *r = open_sample("ETWTOP_SAMPLES_UNPACKED", "net.4.5.2.x64.etl");
        if (!r)
                skip();
        struct census c;
        take_census(r, &c);
        struct etl_reader_stats st;
        etl_reader_get_stats(r, &st);
        assert_int_equal(c.nr_records, 179474);
        assert_int_equal(st.nr_buffers, 360);
        assert_int_equal(st.nr_buffers_compressed, 359);
        assert_int_equal(st.nr_buffers_damaged, 0);
        assert_int_equal(st.nr_cpus, 8);
        assert_int_equal(c.nr_backwards, 0);
        assert_int_equal(c.by_hook[PERFINFO_LOG_TYPE_SAMPLED_PROFILE], 79528);
        assert_int_equal(c.by_hook[WMI_LOG_TYPE_STACKWALK], 252);
        assert_int_equal(c.by_hook[WMI_LOG_TYPE_STACK_KEY_USER], 7046);
        assert_int_equal(c.by_hook[WMI_LOG_TYPE_STACK_KEY_KERNEL], 2061);
        assert_int_equal(c.by_type[TRACE_HEADER_TYPE_EVENT_HEADER32], 33378);
        assert_int_equal(c.by_type[TRACE_HEADER_TYPE_EVENT_HEADER64], 34765);
        assert_int_equal(c.by_type[TRACE_HEADER_TYPE_FULL_HEADER64], 7956);

        /* ts 1942908431: SampledProfile (TID 3780, IP 0xffffffffffd03003), then its stack */
        etl_reader_rewind(r);
        struct etl_record rec;
        bool is_found = false;
        while (etl_reader_next(r, &rec) == 1) {
                if (rec.hook_id != PERFINFO_LOG_TYPE_SAMPLED_PROFILE || rec.timestamp != 1942908431)
                        continue;
                static const uint8_t want[16] = {0x03, 0x30, 0xd0, 0xff, 0xff, 0xff, 0xff, 0xff,
                                                 0xc4, 0x0e, 0x00, 0x00, 0x01, 0x00, 0x58, 0x00};
                assert_int_equal(rec.payload_size, 16);
                assert_memory_equal(rec.payload, want, 16);
                assert_int_equal(rec.tid, 0xFFFFFFFF);
                uint16_t cpu = rec.cpu;
                while (etl_reader_next(r, &rec) == 1 && rec.cpu != cpu)
                        ;
                assert_int_equal(rec.hook_id, WMI_LOG_TYPE_STACKWALK);
                uint64_t ets;
                uint32_t thread;
                memcpy(&ets, rec.payload, 8);
                memcpy(&thread, rec.payload + 12, 4);
                assert_int_equal(ets, 1942908431ull);
                assert_int_equal(thread, 3780);
                uint64_t frame0;
                memcpy(&frame0, rec.payload + 16, 8);
                assert_int_equal(frame0, 0xffffffffffd03003ull);
                is_found = true;
                break;
        }
        assert_true(is_found);
        free(c.by_hook);
        etl_reader_close(r);
}

static void test_utf16(void **state)
{
        (void)state;
        /* "a", U+00E9, U+20AC, U+1F600 (surrogates), a lone low surrogate, NUL */
        const uint8_t s[] = {'a',  0,    0xe9, 0,    0xac, 0x20, 0x3d, 0xd8,
                             0x00, 0xde, 0x00, 0xdc, 0,    0,    'z',  0};
        char out[32];
        size_t n = utf16le_to_utf8(s, sizeof(s) / 2, out, sizeof(out));
        assert_int_equal(n, 7);
        assert_string_equal(out, "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xef\xbf\xbd");
        /* a small output buffer truncates cleanly */
        char tiny[3];
        utf16le_to_utf8(s, sizeof(s) / 2, tiny, sizeof(tiny));
        assert_string_equal(tiny, "a");
}

/* The reader's error is util/err.h's struct err_msg: etl_error_set fills one (replacing a
   message, where err_set keeps the first), and the reader's callers read it as either. */
static void test_error_is_err_msg(void **state)
{
        (void)state;
        struct err_msg e;
        err_reset(&e);
        etl_error_set(&e, 24, "bad buffer %d", 3);
        assert_true(err_is_set(&e));
        assert_int_equal(e.offset, 24);
        assert_string_equal(e.msg, "bad buffer 3");
        etl_error_set(&e, 48, "short record");
        assert_int_equal(e.offset, 48);
        assert_string_equal(e.msg, "short record");
        struct etl_error *as_etl = &e;
        assert_int_equal(err_set(as_etl, 0, EINVAL, "kept?"), -EINVAL);
        assert_string_equal(as_etl->msg, "short record");
        etl_error_set(NULL, 0, "nothing to fill");
}

/* Each record's buffer fields (cpu, logger_id, buffer_index, file_offset) are its own buffer's,
   read from the file's buffer headers: in a file of many buffers over several processors, where
   the reader sets the first three once a buffer and keeps them while the parse fills the rest. */
static void check_buffer_fields(const char *name)
{
        char *path = sample_path("ETWTOP_SAMPLES", name);
        if (!path)
                skip();
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        static uint8_t data[4 << 20];
        size_t size = fread(data, 1, sizeof(data), f);
        fclose(f);
        free(path);
        assert_true(size > 0 && size < sizeof(data));
        size_t offs[1024];
        uint32_t nr = 0;
        for (size_t off = 0; off + WMI_BUFFER_HEADER_SIZE <= size && nr < 1024;) {
                uint32_t bsize;
                memcpy(&bsize, data + off, 4);
                if (bsize < WMI_BUFFER_HEADER_SIZE || bsize > size - off)
                        break;
                offs[nr++] = off;
                off += bsize;
        }
        assert_true(nr > 2);
        struct etl_reader *r = NULL;
        struct etl_error err;
        assert_int_equal(etl_reader_open_mem(&r, data, size, &err), 0);
        const struct etl_record *rec;
        uint64_t nr_records = 0;
        uint32_t nr_switches = 0, last = UINT32_MAX;
        while ((rec = etl_reader_next_ref(r))) {
                assert_true(rec->buffer_index < nr);
                const uint8_t *b = data + offs[rec->buffer_index];
                uint16_t cpu, logger_id, flags;
                uint32_t bsize;
                memcpy(&cpu, b + 0x28, 2);
                memcpy(&logger_id, b + 0x2A, 2);
                memcpy(&flags, b + 0x34, 2);
                memcpy(&bsize, b, 4);
                assert_int_equal(rec->cpu, cpu & ETW_PROCESSOR_INDEX_MASK);
                assert_int_equal(rec->logger_id, logger_id);
                assert_true(rec->file_offset >= offs[rec->buffer_index] + WMI_BUFFER_HEADER_SIZE);
                if (!(flags & WMI_BUFFER_FLAG_COMPRESSED)) {
                        assert_true(rec->file_offset < offs[rec->buffer_index] + bsize);
                        assert_ptr_equal(rec->data, data + rec->file_offset);
                }
                nr_switches += rec->buffer_index != last;
                last = rec->buffer_index;
                nr_records++;
        }
        assert_true(nr_switches > nr); /* the processors' buffers interleave */
        assert_true(nr_records > 100);
        etl_reader_close(r);
}

static void test_buffer_fields(void **state)
{
        (void)state;
        check_buffer_fields("etlparser_ShutdownPerfDiagLogger.etl");
}

/* Every header type (ETL-FORMAT.md 2.1) as the parser takes it: its fixed header's size (0: no
   event, the record skipped), its pointer size, and where its size is read (the 16-bit word at
   +4 for the kernel's SYSTEM, COMPACT and PERFINFO forms and the types below SYSTEM32, else the
   marker's low word). The record's two sizes differ, so that taking the wrong one shows. */
static void test_header_types(void **state)
{
        (void)state;
        enum { MARKER_SIZE = 0x58, WORD_SIZE = 0x60, END = WMI_BUFFER_HEADER_SIZE + 0x80 };
        for (unsigned type = 0; type < 256; type++) {
                uint32_t fixed = 0;
                uint8_t psize = 8;
                switch (type) {
                case TRACE_HEADER_TYPE_SYSTEM32: fixed = 0x20, psize = 4; break;
                case TRACE_HEADER_TYPE_SYSTEM64: fixed = 0x20; break;
                case TRACE_HEADER_TYPE_COMPACT32: fixed = 0x18, psize = 4; break;
                case TRACE_HEADER_TYPE_COMPACT64: fixed = 0x18; break;
                case TRACE_HEADER_TYPE_PERFINFO32: fixed = 0x10, psize = 4; break;
                case TRACE_HEADER_TYPE_PERFINFO64: fixed = 0x10; break;
                case TRACE_HEADER_TYPE_FULL_HEADER32: fixed = 0x30, psize = 4; break;
                case TRACE_HEADER_TYPE_FULL_HEADER64: fixed = 0x30; break;
                case TRACE_HEADER_TYPE_INSTANCE32: fixed = 0x48, psize = 4; break;
                case TRACE_HEADER_TYPE_INSTANCE64: fixed = 0x48; break;
                case TRACE_HEADER_TYPE_EVENT_HEADER32: fixed = 0x50, psize = 4; break;
                case TRACE_HEADER_TYPE_EVENT_HEADER64: fixed = 0x50; break;
                }
                bool is_kernel = type <= TRACE_HEADER_TYPE_COMPACT64 ||
                                 type == TRACE_HEADER_TYPE_PERFINFO32 ||
                                 type == TRACE_HEADER_TYPE_PERFINFO64;
                _Alignas(8) uint8_t buf[END];
                memset(buf, 0xFF, sizeof(buf)); /* end markers wherever the next record is */
                memset(buf, 0, WMI_BUFFER_HEADER_SIZE);
                buf[0x30] = END; /* Offset: the filled size */
                uint8_t *p = buf + WMI_BUFFER_HEADER_SIZE;
                memset(p, 0, MARKER_SIZE); /* 0xFF after it: the end, where the marker's size
                                              ends the record */
                uint32_t m =
                        TRACE_HEADER_FLAG | TRACE_HEADER_EVENT_TRACE | type << 16 | MARKER_SIZE;
                memcpy(p, &m, 4);
                p[4] = WORD_SIZE; /* and 0x60 as EVENT_HEADER's flags: no extended items */
                for (int i = 8; i < MARKER_SIZE; i++)
                        p[i] = (uint8_t)(0x10 + i); /* every field read shows */
                p[6] = 0x26;
                p[7] = 0x27;
                uint32_t pos = 0;
                struct etl_record rec;
                memset(&rec, 0xAB, sizeof(rec)); /* and every field not written */
                int rc = etl_buffer_next(buf, sizeof(buf), &pos, &rec);
                uint32_t size = is_kernel ? WORD_SIZE : MARKER_SIZE;
                if (!fixed) {
                        /* skipped: the walk stops at the end marker after it */
                        assert_int_equal(rc, 0);
                        assert_int_equal(pos, WMI_BUFFER_HEADER_SIZE + size);
                        continue;
                }
                assert_int_equal(rc, 1);
                assert_int_equal(rec.header_type, type);
                assert_int_equal(rec.size_bytes, size);
                assert_int_equal(rec.pointer_size, psize);
                assert_int_equal(rec.payload_size, size - fixed);
                assert_ptr_equal(rec.payload, p + fixed);
                /* the fields each form sets (ETL-FORMAT.md 2.2-2.7) */
                uint32_t u32[32];
                memcpy(u32, p, sizeof(u32));
                bool is_perfinfo = type == TRACE_HEADER_TYPE_PERFINFO32 ||
                                   type == TRACE_HEADER_TYPE_PERFINFO64;
                bool is_event_header = type == TRACE_HEADER_TYPE_EVENT_HEADER32 ||
                                       type == TRACE_HEADER_TYPE_EVENT_HEADER64;
                assert_int_equal(rec.nr_ext, 0);
                assert_false(rec.is_header);
                assert_int_equal(rec.tid, is_perfinfo ? 0xFFFFFFFFu : u32[2]);
                assert_int_equal(rec.pid, is_perfinfo ? 0xFFFFFFFFu : u32[3]);
                if (is_kernel) {
                        assert_null(rec.guid);
                        assert_int_equal(rec.flags, 0);
                        assert_int_equal(rec.level, 0);
                        assert_int_equal(rec.hook_id, p[6] | p[7] << 8);
                        assert_int_equal(rec.opcode, p[6]);
                        assert_int_equal(rec.version, p[0]);
                        assert_int_equal(rec.kernel_time, fixed == 0x20 ? u32[6] : 0);
                        assert_int_equal(rec.user_time, fixed == 0x20 ? u32[7] : 0);
                } else {
                        assert_ptr_equal(rec.guid, p + 0x18);
                        assert_int_equal(rec.hook_id, 0);
                        assert_int_equal(rec.flags, is_event_header ? WORD_SIZE : 0);
                        assert_int_equal(rec.level, is_event_header ? p[0x2C] : p[5]);
                        assert_int_equal(rec.opcode, is_event_header ? p[0x2D] : p[4]);
                        assert_int_equal(rec.kernel_time, is_event_header ? u32[14] : u32[10]);
                        assert_int_equal(rec.user_time, is_event_header ? u32[15] : u32[11]);
                }
        }
}

/* A WPP message record (ETL-FORMAT.md 2.7) as the parser takes it: its options in their order
   (the sequence, then the component id or else the GUID, the time, the thread and process),
   the arguments after them; one without a time skipped; one too short for its options damaged. */
static int parse_message(uint16_t flags, uint32_t size, struct etl_record *rec)
{
        enum { END = WMI_BUFFER_HEADER_SIZE + 0x60 };
        _Alignas(8) uint8_t buf[END];
        memset(buf, 0xFF, sizeof(buf));
        memset(buf, 0, WMI_BUFFER_HEADER_SIZE);
        buf[0x30] = END;
        uint8_t *p = buf + WMI_BUFFER_HEADER_SIZE;
        for (uint32_t i = 0; i < size; i++) /* 0xFF after it: the end marker */
                p[i] = (uint8_t)(0x10 + i);
        uint32_t m = TRACE_HEADER_FLAG | TRACE_HEADER_TRACE_MESSAGE | size;
        memcpy(p, &m, 4);
        p[4] = 43;
        p[5] = 0;
        p[6] = (uint8_t)flags;
        p[7] = (uint8_t)(flags >> 8);
        uint32_t pos = 0;
        memset(rec, 0xAB, sizeof(*rec));
        int rc = etl_buffer_next(buf, sizeof(buf), &pos, rec);
        if (rc == 1)
                assert_int_equal(rec->payload - rec->data + rec->payload_size, size);
        if (rc == 1) /* the fields as offsets from the record, the buffer gone with the frame */
                rec->payload = (const uint8_t *)(uintptr_t)(rec->payload - rec->data);
        if (rc == 1 && rec->guid)
                rec->guid = (const uint8_t *)(uintptr_t)(rec->guid - rec->data);
        return rc;
}

static void test_message_records(void **state)
{
        (void)state;
        struct etl_record rec;
        /* GUID, time, thread and process, 64-bit (CldFlt's): 8 + 16 + 8 + 8, 20 argument bytes */
        assert_int_equal(parse_message(0x00AA, 60, &rec), 1);
        assert_int_equal(rec.header_type, TRACE_HEADER_TYPE_MESSAGE);
        assert_int_equal(rec.hook_id, 43);
        assert_int_equal(rec.flags, EVENT_HEADER_FLAG_TRACE_MESSAGE);
        assert_int_equal(rec.pointer_size, 8);
        assert_int_equal((uintptr_t)rec.guid, 8);
        assert_int_equal(rec.timestamp, 0x2f2e2d2c2b2a2928ull);
        assert_int_equal(rec.tid, 0x33323130u);
        assert_int_equal(rec.pid, 0x37363534u);
        assert_int_equal((uintptr_t)rec.payload, 40);
        assert_int_equal(rec.payload_size, 20);
        assert_int_equal(rec.nr_ext, 0);
        assert_false(rec.is_header);
        assert_int_equal(rec.size_bytes, 60);
        /* a sequence and a component id (which wins over the GUID), a time, 32-bit, no thread */
        assert_int_equal(parse_message(0x004F, 28, &rec), 1);
        assert_null(rec.guid);
        assert_int_equal(rec.pointer_size, 4);
        assert_int_equal(rec.timestamp, 0x2726252423222120ull);
        assert_int_equal(rec.tid, 0xFFFFFFFFu);
        assert_int_equal(rec.pid, 0xFFFFFFFFu);
        assert_int_equal((uintptr_t)rec.payload, 24);
        assert_int_equal(rec.payload_size, 4);
        /* the sequence before the GUID */
        assert_int_equal(parse_message(0x000B, 36, &rec), 1);
        assert_int_equal((uintptr_t)rec.guid, 12);
        assert_int_equal(rec.timestamp, 0x333231302f2e2d2cull);
        assert_int_equal(rec.payload_size, 0);
        /* no time: skipped, the walk ends at the end marker after it */
        assert_int_equal(parse_message(0x00A2, 40, &rec), 0);
        /* options past the record's size: damaged */
        assert_int_equal(parse_message(0x00AA, 36, &rec), -EBADMSG);
        assert_int_equal(parse_message(0x0008, 15, &rec), -EBADMSG);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_lxcore),
                cmocka_unit_test(test_shutdown_perfdiag),
                cmocka_unit_test(test_powershell_merge),
                cmocka_unit_test(test_bytes_read_at_every_point),
                cmocka_unit_test(test_self_describing),
                cmocka_unit_test(test_gcevents),
                cmocka_unit_test(test_perfview_net),
                cmocka_unit_test(test_utf16),
                cmocka_unit_test(test_error_is_err_msg),
                cmocka_unit_test(test_header_types),
                cmocka_unit_test(test_buffer_fields),
                cmocka_unit_test(test_message_records),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
