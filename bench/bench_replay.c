/* SPDX-License-Identifier: MIT */
/* bench_replay.c: the replay benchmark of the .etl reader and the decoder alone. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "etw/evntrace.h"
#include "kdecoder.h"
#include "kevent.h"

/* What the sink keeps: enough that the compiler cannot drop the decoding. */
struct sink {
        struct kdecoder *decoder;
        uint64_t nr_records;
        uint64_t nr_events;
        uint64_t checksum;
        bool is_count_only; /* the reader alone: records counted, not decoded */
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

int main(int argc, char **argv)
{
        struct sink s = {0};

        /* --count: the consumer API alone (OpenTrace, ProcessTrace, the EVENT_RECORD), a callback
           that counts records and decodes nothing */
        if (argc >= 2 && strcmp(argv[1], "--count") == 0) {
                s.is_count_only = true;
                argv++;
                argc--;
        }
        if (argc < 2 || argc > 3) {
                fprintf(stderr, "usage: bench_replay [--count] FILE.etl [iterations]\n");
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
        return 0;
}
