/* SPDX-License-Identifier: MIT */
/* etl_merge.c: owns the merge of several .etl inputs into one file, in time order, with image
   identity events added as xperf -merge adds them (ETL-FORMAT.md 3.10): the engine of
   CreateMergedTraceFile (backend/merge.c). */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "le_bytes.h"
#include "etl_merge.h"
#include "etl_parse.h"
#include "etl_writer.h"
#include "etw/KernelTraceControl.h"
#include "etw/ntwmi.h"
#include "util/kheap.h"
#include "util/xalloc.h"

struct merge_input {
        struct etl_reader *reader; /* owned */
        int64_t next_filetime;     /* of the record the reader gives next; INT64_MAX at the end */
        bool has_image_ids;        /* the input was merged already: it has its own ImageID events */
        bool is_same_clock;        /* raw timestamps copy as they are */
};

static void peek(struct merge_input *in)
{
        uint64_t ts = etl_reader_peek_timestamp(in->reader);
        in->next_filetime = ts == UINT64_MAX ? INT64_MAX : etl_reader_to_filetime(in->reader, ts);
}

/* A FILETIME as a heap key: the sign bit flipped, so that unsigned order is the signed one. */
static uint64_t heap_key(int64_t filetime)
{
        return (uint64_t)filetime ^ (1ull << 63);
}

/* Moves the input on the heap's top (c) to its next record, off the heap at its end. */
static void next_of(struct kheap *heap, struct merge_input *c)
{
        peek(c);
        if (c->next_filetime == INT64_MAX)
                kheap_pop(heap);
        else
                kheap_replace_top(heap, heap_key(c->next_filetime));
}

/* Does the file hold KernelTraceControl ImageID events (a merged trace)? One pass. */
static bool has_image_ids(struct etl_reader *r)
{
        const struct etl_record *rec;
        bool found = false;
        while (!found && (rec = etl_reader_next_ref(r)))
                found = rec->guid && memcmp(rec->guid, &KernelTraceControlImageIdGuid, 16) == 0 &&
                        rec->opcode == KTC_IMAGE_ID;
        etl_reader_rewind(r);
        return found;
}

/* The output clock value for an input timestamp: the same when the clocks agree, else through
   FILETIME and the output's frequency. */
static uint64_t convert_timestamp(const struct merge_input *in, const struct etl_logfile *out,
                                  uint64_t ts)
{
        if (in->is_same_clock)
                return ts;
        int64_t ft = etl_reader_to_filetime(in->reader, ts) - out->header.StartTime.QuadPart;
        __int128 v = (__int128)out->start_timestamp +
                     (__int128)ft * out->header.PerfFreq.QuadPart / 10000000;
        return v < 0 ? 0 : (uint64_t)v;
}

/* The kernel records whose payload starts with the timestamp of another event (StackWalk,
   stack keys, LBR): that one moves with the clock too. */
static bool has_payload_timestamp(uint16_t hook)
{
        return hook == WMI_LOG_TYPE_STACKWALK || hook == WMI_LOG_TYPE_STACK_KEY_KERNEL ||
               hook == WMI_LOG_TYPE_STACK_KEY_USER || hook == WMI_LOG_TYPE_LBR;
}

/* An ImageID event (KernelTraceControl opcode 0) for an Image record (Load, DCStart, and as
   xperf's merge also writes them, Unload and DCEnd), with the
   image's base name as OriginalFileName. Returns its size, or 0 when the payload is short. */
static uint32_t image_id_record(uint8_t *dst, const struct etl_record *img, uint64_t timestamp)
{
        bool is64 = img->pointer_size == 8;
        uint32_t name_off = is64 ? 56 : 44;
        if (img->version < 2 || img->payload_size < name_off + 2)
                return 0;
        const uint8_t *p = img->payload;
        uint64_t base = is64 ? le_get64(p) : le_get32(p);
        uint64_t size = is64 ? le_get64(p + 8) : le_get32(p + 4);
        uint32_t pid = le_get32(p + (is64 ? 16 : 8));
        uint32_t stamp = le_get32(p + (is64 ? 24 : 16));
        /* the base name: after the last '\' or '/' of the UTF-16 path */
        uint32_t n = (img->payload_size - name_off) / 2, start = 0, len = 0;
        for (uint32_t i = 0; i < n; i++) {
                uint16_t c = (uint16_t)(p[name_off + 2 * i] | p[name_off + 2 * i + 1] << 8);
                if (c == 0)
                        break;
                len = i + 1;
                if (c == '\\' || c == '/')
                        start = i + 1;
        }
        uint8_t payload[24 + 2 * 260 + 2];
        if (len - start > 260)
                start = len - 260;
        le_put64(payload, base);
        le_put64(payload + 8, size);
        memcpy(payload + 16, &pid, 4);
        memcpy(payload + 20, &stamp, 4);
        memcpy(payload + 24, p + name_off + 2 * start, 2 * (len - start));
        payload[24 + 2 * (len - start)] = 0;
        payload[25 + 2 * (len - start)] = 0;
        return etl_record_full64(dst, &KernelTraceControlImageIdGuid, KTC_IMAGE_ID, 2, 0xFFFFFFFF,
                                 pid, timestamp, payload, 24 + 2 * (len - start) + 2);
}

/* ---- DbgID_RSDS from the image files (the options' CodeView lookup) ---- */

#define CV_CACHE 4096 /* distinct images remembered per merge */

/* What the lookup said of one image. */
struct cv_entry {
        char path[512];
        uint32_t stamp, size;
        bool is_found;
        struct etw_codeview cv;
};

struct cv_cache {
        struct cv_entry *e; /* owned, CV_CACHE */
        uint32_t nr;
        ETW_CODEVIEW_LOOKUP lookup; /* borrowed from the options */
        void *ctx;
};

/* The image's CodeView record, asking the lookup once per (path, stamp, size). */
static const struct etw_codeview *codeview_of(struct cv_cache *c, const char *path, uint32_t stamp,
                                              uint32_t size)
{
        for (uint32_t i = 0; i < c->nr; i++)
                if (c->e[i].stamp == stamp && c->e[i].size == size &&
                    strcmp(c->e[i].path, path) == 0)
                        return c->e[i].is_found ? &c->e[i].cv : NULL;
        struct cv_entry tmp, *e = c->nr < CV_CACHE ? &c->e[c->nr++] : &tmp;
        memset(e, 0, sizeof(*e));
        snprintf(e->path, sizeof(e->path), "%s", path);
        e->stamp = stamp;
        e->size = size;
        e->is_found = c->lookup(c->ctx, path, stamp, size, &e->cv) != FALSE;
        e->cv.PdbFileName[sizeof(e->cv.PdbFileName) - 1] = '\0';
        return e->is_found ? (e == &tmp ? NULL : &e->cv) : NULL;
}

/* A DbgID_RSDS event (KernelTraceControl opcode 36) for the image of an Image record, when the
   lookup finds its file. Returns its size, or 0. */
static uint32_t dbgid_record(uint8_t *dst, struct cv_cache *c, const struct etl_record *img,
                             uint64_t timestamp)
{
        bool is64 = img->pointer_size == 8;
        uint32_t name_off = is64 ? 56 : 44;
        if (!c->lookup || !c->e || img->version < 2 || img->payload_size < name_off + 2)
                return 0;
        const uint8_t *p = img->payload;
        uint64_t base = is64 ? le_get64(p) : le_get32(p);
        uint32_t size = (uint32_t)(is64 ? le_get64(p + 8) : le_get32(p + 4));
        uint32_t pid = le_get32(p + (is64 ? 16 : 8));
        uint32_t stamp = le_get32(p + (is64 ? 24 : 16));
        char path[512];
        uint32_t n = 0;
        for (uint32_t i = name_off; i + 1 < img->payload_size && n + 1 < sizeof(path); i += 2) {
                uint16_t ch = (uint16_t)(p[i] | p[i + 1] << 8);
                if (!ch)
                        break;
                path[n++] = ch < 0x80 ? (char)ch : '?';
        }
        path[n] = '\0';
        const struct etw_codeview *cv = codeview_of(c, path, stamp, size);
        if (!cv)
                return 0;
        uint8_t payload[32 + sizeof(cv->PdbFileName)];
        le_put64(payload, base);
        memcpy(payload + 8, &pid, 4);
        memcpy(payload + 12, &cv->Signature, 16);
        memcpy(payload + 28, &cv->Age, 4);
        size_t len = strlen(cv->PdbFileName) + 1;
        memcpy(payload + 32, cv->PdbFileName, len);
        return etl_record_full64(dst, &KernelTraceControlImageIdGuid, KTC_DBGID_RSDS, 2, 0xFFFFFFFF,
                                 pid, timestamp, payload, 32 + (uint32_t)len);
}

int etl_merge(struct etl_reader *const *readers, uint32_t n, const char *path,
              const struct etl_merge_options *opts, enum etl_merge_stage *stage,
              struct etl_error *err)
{
        struct merge_input in[ETL_MERGE_MAX_FILES];
        struct etl_writer *w = NULL;
        struct cv_cache cvs = {NULL, 0, opts->codeview_lookup, opts->codeview_ctx};
        struct kheap heap = {NULL, 0, 0};
        int status = 0;

        if (n == 0 || n > ETL_MERGE_MAX_FILES)
                return -EINVAL;
        for (uint32_t i = 0; i < n; i++)
                in[i].reader = readers[i];
        /* The output takes the clock of the input that started first; the others convert
           through FILETIME. */
        uint32_t ref = 0;
        for (uint32_t i = 1; i < n; i++)
                if (etl_reader_logfile(in[i].reader)->header.StartTime.QuadPart <
                    etl_reader_logfile(in[ref].reader)->header.StartTime.QuadPart)
                        ref = i;
        const struct etl_logfile *first = etl_reader_logfile(in[ref].reader);
        uint32_t nr_cpus = 1;
        for (uint32_t i = 0; i < n; i++) {
                const struct etl_logfile *lf = etl_reader_logfile(in[i].reader);
                struct etl_reader_stats st;
                etl_reader_get_stats(in[i].reader, &st);
                if (lf->header.NumberOfProcessors > nr_cpus)
                        nr_cpus = lf->header.NumberOfProcessors;
                in[i].has_image_ids = has_image_ids(in[i].reader);
                in[i].is_same_clock =
                        lf->header.ReservedFlags == first->header.ReservedFlags &&
                        lf->header.PerfFreq.QuadPart == first->header.PerfFreq.QuadPart &&
                        etl_reader_to_filetime(in[i].reader, lf->start_timestamp) ==
                                etl_reader_to_filetime(in[ref].reader, lf->start_timestamp);
                peek(&in[i]);
        }
        if (nr_cpus > ETW_PROCESSOR_INDEX_MASK + 1)
                nr_cpus = ETW_PROCESSOR_INDEX_MASK + 1;
        int64_t end_time = 0;
        for (uint32_t i = 0; i < n; i++) {
                int64_t e = etl_reader_logfile(in[i].reader)->header.EndTime.QuadPart;
                if (e > end_time)
                        end_time = e;
        }
        struct etl_writer_config cfg = {
                .buffer_size_bytes = ETL_WRITER_DEFAULT_BUFFER_SIZE,
                .nr_cpus = nr_cpus,
                .log_file_mode = EVENT_TRACE_RELOG_MODE | EVENT_TRACE_FILE_MODE_SEQUENTIAL,
                .logger_id = 1,
                /* the input's own header, but for what the merge changes (its mode, its
                   files, its clock where the inputs' differ) */
                .logger_name =
                        first->logger_name && *first->logger_name ? first->logger_name : "Relogger",
                .maximum_file_size_mb = first->header.MaximumFileSize,
                .time_zone = first->header.TimeZone,
                .log_file_name = n > 1 ? "[multiple files]" : first->log_file_name,
                .start_timestamp = first->start_timestamp,
                .start_filetime = first->header.StartTime.QuadPart,
                .boot_filetime = first->header.BootTime.QuadPart,
                .perf_freq = (uint64_t)first->header.PerfFreq.QuadPart,
                .clock_type = first->header.ReservedFlags,
                .os_major = first->header.VersionDetail.MajorVersion,
                .os_minor = first->header.VersionDetail.MinorVersion,
                .provider_version = first->header.ProviderVersion,
                .timer_resolution_100ns = first->header.TimerResolution,
                .cpu_speed_mhz = first->header.CpuSpeedInMHz,
                .header_tid = (uint32_t)getpid(),
                .header_pid = (uint32_t)getpid(),
        };
        /* the inputs by their next record's time; ties go to the lower input */
        int rc = kheap_init(&heap, n);
        if (rc == 0)
                rc = etl_writer_new(&w, &cfg);
        if (rc < 0) {
                *stage = ETL_MERGE_NEW_WRITER;
                status = rc;
                goto out;
        }
        rc = etl_writer_open_file(w, path, false, err);
        if (rc < 0) {
                *stage = ETL_MERGE_OPEN_OUTPUT;
                status = rc;
                goto out;
        }

        uint32_t events_lost = 0;
        cvs.e = cvs.lookup ? xcalloc(CV_CACHE, sizeof(*cvs.e)) : NULL; /* fixed size: aborts */
        static uint8_t buf[MAX_ETW_EVENT_SIZE + 8];
        static uint8_t idbuf[1024];
        for (uint32_t i = 0; i < n; i++)
                if (in[i].next_filetime != INT64_MAX)
                        kheap_push(&heap, heap_key(in[i].next_filetime), i);
        while (!kheap_empty(&heap)) {
                struct merge_input *c = &in[kheap_top(&heap).src];
                const struct etl_record *rec = etl_reader_next_ref(c->reader);
                if (!rec)
                        break;
                if (rec->is_header) {
                        events_lost += etl_reader_logfile(c->reader)->header.EventsLost;
                        next_of(&heap, c);
                        continue;
                }
                uint64_t ts = convert_timestamp(c, first, rec->timestamp);
                memcpy(buf, rec->data, rec->size_bytes);
                bool is_perfinfo = rec->header_type == TRACE_HEADER_TYPE_PERFINFO32 ||
                                   rec->header_type == TRACE_HEADER_TYPE_PERFINFO64;
                le_put64(buf + etl_record_timestamp_offset(rec->data), ts);
                bool is_kernel = rec->header_type <= TRACE_HEADER_TYPE_COMPACT64 || is_perfinfo;
                if (is_kernel && !c->is_same_clock && has_payload_timestamp(rec->hook_id) &&
                    rec->payload_size >= 8) {
                        size_t off = (size_t)(rec->payload - rec->data);
                        le_put64(buf + off, convert_timestamp(c, first, le_get64(rec->payload)));
                }
                uint32_t cpu = rec->cpu < nr_cpus ? rec->cpu : rec->cpu % nr_cpus;
                if (opts->add_image_ids && !c->has_image_ids && is_kernel &&
                    (rec->hook_id == WMI_LOG_TYPE_PROCESS_LOAD_IMAGE ||
                     rec->hook_id == WMI_LOG_TYPE_IMAGE_LOAD ||
                     rec->hook_id == WMI_LOG_TYPE_IMAGE_DC_START ||
                     rec->hook_id == WMI_LOG_TYPE_IMAGE_UNLOAD ||
                     rec->hook_id == WMI_LOG_TYPE_IMAGE_DC_END)) {
                        uint32_t size = image_id_record(idbuf, rec, ts);
                        if (size)
                                etl_writer_append(w, cpu, idbuf, size);
                        size = dbgid_record(idbuf, &cvs, rec, ts);
                        if (size)
                                etl_writer_append(w, cpu, idbuf, size);
                }
                rc = etl_writer_append(w, cpu, buf, rec->size_bytes);
                if (rc < 0 && rc != -E2BIG) {
                        *stage = ETL_MERGE_WRITE;
                        status = rc;
                        etl_writer_close(w, end_time, events_lost, 0);
                        goto out;
                }
                next_of(&heap, c);
        }
        rc = etl_writer_close(w, end_time, events_lost, 0);
        if (rc < 0) {
                *stage = ETL_MERGE_WRITE;
                status = rc;
        }
out:
        kheap_free(&heap);
        free(cvs.e);
        etl_writer_free(w);
        return status;
}
