/* SPDX-License-Identifier: MIT */
/* bench_replay.c: the replay benchmark of the .etl reader and the decoder alone (and of its
   XPRESS decompression alone: --xpress). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "etl_parse.h"
#include "le_bytes.h"
#include "etw/etwtop_ext.h"
#include "etw/evntrace.h"
#include "etw/ntwmi.h"
#include "kdecoder.h"
#include "kevent.h"
#include "xpress.h"

/* What the sink keeps: enough that the compiler cannot drop the decoding. */
struct sink {
        struct kdecoder *decoder;
        uint64_t nr_records;
        uint64_t nr_events;
        uint64_t checksum;
        bool is_count_only; /* the reader alone: records counted, not decoded */
        /* the compressed buffers, over every pass: decompressed ahead by the reader's workers,
           or by the reading thread (etw_trace_get_stats) */
        uint32_t nr_inflate_workers;
        uint64_t nr_inflated_ahead;
        uint64_t nr_inflated_here;
};

static void on_event(void *ctx, const struct kevent *ev)
{
        struct sink *s = ctx;
        s->nr_events++;
        s->checksum += (uint64_t)ev->time_ns ^ ev->tid ^ ((uint64_t)ev->type << 32);
}

static VOID WINAPI on_record(PEVENT_RECORD rec)
{
        struct sink *s = rec->UserContext;
        s->nr_records++;
        if (s->is_count_only) {
                s->checksum += (uint64_t)rec->EventHeader.TimeStamp.QuadPart ^ rec->UserDataLength;
                return;
        }
        kdecoder_decode(s->decoder, rec, on_event, s);
}

static double now_seconds(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One full replay: open, process every record through the decoder, close. */
static int replay_once(const char *path, struct sink *s)
{
        EVENT_TRACE_LOGFILEA logfile;
        memset(&logfile, 0, sizeof(logfile));
        logfile.LogFileName = (LPSTR)path;
        logfile.ProcessTraceMode =
                PROCESS_TRACE_MODE_EVENT_RECORD | PROCESS_TRACE_MODE_RAW_TIMESTAMP;
        logfile.EventRecordCallback = on_record;
        logfile.Context = s;

        s->decoder = kdecoder_new(true);
        if (!s->decoder) {
                fprintf(stderr, "bench_replay: out of memory\n");
                return -1;
        }
        PROCESSTRACE_HANDLE h = OpenTraceA(&logfile);
        if (h == INVALID_PROCESSTRACE_HANDLE) {
                fprintf(stderr, "bench_replay: %s: %s (Win32 error %u)\n", path,
                        etw_last_error_text(), GetLastError());
                kdecoder_free(s->decoder);
                return -1;
        }
        ULONG status = ProcessTrace(&h, 1, NULL, NULL);
        struct etw_trace_stats st;
        if (etw_trace_get_stats(h, &st) == ERROR_SUCCESS) {
                s->nr_inflate_workers = st.nr_inflate_workers;
                s->nr_inflated_ahead += st.nr_buffers_inflated_ahead;
                s->nr_inflated_here += st.nr_buffers_inflated_here;
        }
        CloseTrace(h);
        kdecoder_free(s->decoder);
        s->decoder = NULL;
        if (status != ERROR_SUCCESS) {
                fprintf(stderr, "bench_replay: ProcessTrace: %s (Win32 error %u)\n",
                        etw_last_error_text(), status);
                return -1;
        }
        return 0;
}

static double cpu_seconds(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --xpress: the file's compressed buffers decompressed, iterations times, nothing else (XPRESS's
   share of a replay, measured apart): the CPU time of the passes. */
static int xpress_passes(const char *path, long iterations)
{
        FILE *f = fopen(path, "rb");
        if (!f) {
                fprintf(stderr, "bench_replay: %s: %s\n", path, strerror(errno));
                return 1;
        }
        struct stat st;
        uint8_t *data = fstat(fileno(f), &st) == 0 ? malloc((size_t)st.st_size + 1) : NULL;
        uint8_t *out = malloc(MAX_ETW_BUFFER_SIZE);
        if (!data || !out || fread(data, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
                fprintf(stderr, "bench_replay: %s: cannot read\n", path);
                fclose(f);
                free(data);
                free(out);
                return 1;
        }
        fclose(f);
        size_t size = (size_t)st.st_size, nr_buffers = 0, nr_bytes = 0;
        uint64_t checksum = 0;
        double start = cpu_seconds();
        for (long i = 0; i < iterations; i++) {
                nr_buffers = nr_bytes = 0;
                /* the buffers in file order (ETL-FORMAT.md 1.1-1.3), as etl_reader.c walks them */
                for (size_t off = 0; off + WMI_BUFFER_HEADER_SIZE <= size;) {
                        const uint8_t *b = data + off;
                        uint32_t bsize = le_get32(b + BUF_SIZE_OFF);
                        uint32_t filled = le_get32(b + BUF_OFFSET_OFF);
                        if (!filled)
                                filled = le_get32(b + BUF_SAVED_OFFSET_OFF);
                        if (bsize < WMI_BUFFER_HEADER_SIZE || bsize > size - off)
                                break;
                        if ((le_get16(b + BUF_FLAG_OFF) & WMI_BUFFER_FLAG_COMPRESSED) &&
                            filled > WMI_BUFFER_HEADER_SIZE && filled <= MAX_ETW_BUFFER_SIZE) {
                                size_t n = 0;
                                xpress_decompress(b + WMI_BUFFER_HEADER_SIZE,
                                                  bsize - WMI_BUFFER_HEADER_SIZE, out,
                                                  filled - WMI_BUFFER_HEADER_SIZE, &n, NULL);
                                checksum += n ^ out[n / 2];
                                nr_buffers++;
                                nr_bytes += n;
                        }
                        off += bsize;
                }
        }
        double seconds = cpu_seconds() - start;
        printf("buffers=%zu bytes=%zu cpu_ms=%.1f cpu_ms_per_pass=%.2f\n", nr_buffers, nr_bytes,
               seconds * 1e3, seconds * 1e3 / (double)iterations);
        fprintf(stderr, "checksum=%016llx\n", (unsigned long long)checksum);
        free(data);
        free(out);
        return 0;
}

int main(int argc, char **argv)
{
        struct sink s = {0};
        bool is_xpress = false;

        /* --count: the consumer API alone (OpenTrace, ProcessTrace, the EVENT_RECORD), a callback
           that counts records and decodes nothing */
        if (argc >= 2 && strcmp(argv[1], "--count") == 0) {
                s.is_count_only = true;
                argv++;
                argc--;
        } else if (argc >= 2 && strcmp(argv[1], "--xpress") == 0) {
                is_xpress = true;
                argv++;
                argc--;
        }
        if (argc < 2 || argc > 3) {
                fprintf(stderr, "usage: bench_replay [--count | --xpress] FILE.etl [iterations]\n");
                return 2;
        }
        const char *path = argv[1];
        long iterations = 1;
        if (argc == 3) {
                char *end;
                iterations = strtol(argv[2], &end, 10);
                if (*end || iterations < 1) {
                        fprintf(stderr, "bench_replay: bad iteration count: %s\n", argv[2]);
                        return 2;
                }
        }
        if (is_xpress)
                return xpress_passes(path, iterations);
        struct stat st;
        if (stat(path, &st) < 0) {
                fprintf(stderr, "bench_replay: %s: %s\n", path, strerror(errno));
                return 1;
        }

        double start = now_seconds();
        for (long i = 0; i < iterations; i++) {
                if (replay_once(path, &s) < 0)
                        return 1;
        }
        double seconds = now_seconds() - start;

        double bytes = (double)st.st_size * (double)iterations;
        printf("events=%llu seconds=%.6f events_per_s=%.0f mb_per_s=%.2f\n",
               (unsigned long long)s.nr_records, seconds,
               seconds > 0 ? (double)s.nr_records / seconds : 0.0,
               seconds > 0 ? bytes / 1e6 / seconds : 0.0);
        /* The checksum goes to stderr so the result line stays one line, and nothing is dead. */
        fprintf(stderr, "decoded=%llu checksum=%016llx\n", (unsigned long long)s.nr_events,
                (unsigned long long)s.checksum);
        /* who decompressed the XPRESS buffers: the workers ahead, or the reading thread, which
           takes a buffer no worker has started, and helps them while its next one is under way */
        fprintf(stderr, "inflate_workers=%u inflated_ahead=%llu inflated_here=%llu\n",
                s.nr_inflate_workers, (unsigned long long)s.nr_inflated_ahead,
                (unsigned long long)s.nr_inflated_here);
        return 0;
}
