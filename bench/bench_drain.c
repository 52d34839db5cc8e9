/* SPDX-License-Identifier: MIT */
/* bench_drain.c: the live drain benchmark: rings in memory (live_source_open_mem) filled with
   cpu-clock samples whose times interleave across the CPUs, drained into an .etl file, so that
   callgrind counts the drain's instructions per record (the k-way merge of the rings among
   them) without perf events or a kernel. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/perf_event.h>

#include "etl_writer.h"
#include "etw/evntrace.h"
#include "live_source.h"
#include "perf_convert.h"
#include "util/clock.h"
#include "util/xalloc.h"

#define BENCH_EVENT_ID    77u
#define BENCH_SAMPLE_TYPE (PERF_CONV_SAMPLE_ID_BITS | PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD)
#define BENCH_RECORD_SIZE 56u /* header, identifier, ip, pid/tid, time, cpu, period */

struct bench_ring {
        struct perf_event_mmap_page *meta; /* owned: the control page, then the data */
        uint8_t *data;
};

/* A record of CPU cpu at time (the layout of BENCH_SAMPLE_TYPE). */
static void put_sample(struct bench_ring *r, uint64_t time, uint32_t cpu, uint32_t tid)
{
        uint64_t head = r->meta->data_head;
        uint8_t *p = r->data + head;
        struct perf_event_header h = {PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, BENCH_RECORD_SIZE};
        uint64_t v[6] = {
                BENCH_EVENT_ID, 0x401000 + (time & 0xff0), (uint64_t)tid << 32 | tid, time, cpu,
                1000000};
        memcpy(p, &h, sizeof(h));
        memcpy(p + 8, v, sizeof(v));
        r->meta->data_head = head + BENCH_RECORD_SIZE;
}

static struct etl_writer *writer_of(const char *file, uint32_t nr_cpus)
{
        struct timespec rt;
        clock_gettime(CLOCK_REALTIME, &rt);
        int64_t ft = ((int64_t)rt.tv_sec * 10000000ll + rt.tv_nsec / 100) + 116444736000000000ll;
        struct etl_writer_config cfg = {
                .buffer_size_bytes = 65536,
                .nr_cpus = nr_cpus,
                .log_file_mode = EVENT_TRACE_FILE_MODE_SEQUENTIAL,
                .logger_id = 1,
                .logger_name = "NT Kernel Logger",
                .log_file_name = file,
                .start_timestamp = now_ns(),
                .start_filetime = ft,
                .boot_filetime = ft - 36000000000ll,
                .perf_freq = 1000000000ull,
                .clock_type = EVENT_TRACE_CLOCK_PERFCOUNTER,
                .os_major = 10,
                .provider_version = 19041,
                .timer_resolution_100ns = 10000,
        };
        struct etl_writer *w = NULL;
        struct etl_error err;
        if (etl_writer_new(&w, &cfg) < 0 || etl_writer_open_file(w, file, true, &err) < 0) {
                fprintf(stderr, "bench_drain: cannot write %s\n", file);
                exit(1);
        }
        return w;
}

int main(int argc, char **argv)
{
        if (argc < 4) {
                fprintf(stderr, "usage: bench_drain OUT.etl NR_CPUS RECORDS_PER_CPU [RUN]\n"
                                "  RUN: records of one CPU in a row before the next CPU's "
                                "(1: every record switches CPU)\n");
                return 2;
        }
        uint32_t nr_cpus = (uint32_t)strtoul(argv[2], NULL, 0);
        uint32_t nr_per = (uint32_t)strtoul(argv[3], NULL, 0);
        uint32_t run = argc > 4 ? (uint32_t)strtoul(argv[4], NULL, 0) : 1;
        if (!nr_cpus || nr_cpus > 256 || !nr_per || !run)
                return 2;
        size_t data_size = 4096;
        while (data_size < (size_t)nr_per * BENCH_RECORD_SIZE)
                data_size *= 2;

        struct bench_ring *rings = xcalloc(nr_cpus, sizeof(*rings));
        struct live_mem_ring *mem = xcalloc(nr_cpus, sizeof(*mem));
        uint64_t base = now_ns() - 60000000000ull; /* a minute ago: every record is due */
        for (uint32_t c = 0; c < nr_cpus; c++) {
                struct bench_ring *r = &rings[c];
                r->meta = xcalloc(1, 4096 + data_size);
                r->meta->data_offset = 4096;
                r->meta->data_size = data_size;
                r->data = (uint8_t *)r->meta + 4096;
                mem[c] = (struct live_mem_ring){c, r->meta};
        }
        /* CPU c's i-th record: in blocks of RUN records, the blocks of the CPUs in turn */
        for (uint32_t i = 0; i < nr_per; i++) {
                for (uint32_t c = 0; c < nr_cpus; c++) {
                        uint64_t block = i / run, in_block = i % run;
                        uint64_t t = base + ((block * nr_cpus + c) * run + in_block) * 1000;
                        put_sample(&rings[c], t, c, 1000 + c);
                }
        }

        struct perf_conv_event ev = {.kind = PERF_CONV_PROFILE,
                                     .sample_type = BENCH_SAMPLE_TYPE,
                                     .valid_until = UINT64_MAX};
        uint64_t id = BENCH_EVENT_ID;
        PERFINFO_GROUPMASK masks = {{0}};
        masks.Masks[0] = EVENT_TRACE_FLAG_PROFILE;
        struct etl_writer *w = writer_of(argv[1], nr_cpus);
        struct live_source *ls = NULL;
        int rc = live_source_open_mem(&ls, mem, nr_cpus, &ev, &id, 1, &masks, w);
        if (rc < 0) {
                fprintf(stderr, "bench_drain: live_source_open_mem: %s\n", strerror(-rc));
                return 1;
        }
        uint64_t total = 0;
        for (;;) {
                int n = live_source_drain(ls, 1u << 20);
                if (n < 0) {
                        fprintf(stderr, "bench_drain: drain: %s\n", strerror(-n));
                        return 1;
                }
                if (n == 0)
                        break;
                total += (uint64_t)n;
        }
        live_source_close(ls);
        etl_writer_close(w, 0, 0, 0);
        etl_writer_free(w);
        printf("%llu records drained of %llu\n", (unsigned long long)total,
               (unsigned long long)nr_cpus * nr_per);
        for (uint32_t c = 0; c < nr_cpus; c++)
                free(rings[c].meta);
        free(rings);
        free(mem);
        return total == (uint64_t)nr_cpus * nr_per ? 0 : 1;
}
