/* SPDX-License-Identifier: MIT */
/* bench_drain.c: the live drain benchmark: rings in memory (live_source_open_mem) filled with
   cpu-clock samples whose times interleave across the CPUs (or, in switches mode, the records
   of a context-switch storm with call chains), drained into an .etl file, so that callgrind
   counts the drain's instructions per record (the k-way merge of the rings among them) without
   perf events or a kernel. */
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

/* The user call chain of stacks mode's samples: a timer tick in user code, 8 frames. */
#define BENCH_CHAIN_FRAMES 8u

/* The kernel frames of kstacks mode's samples, before their user frames. */
#define BENCH_KCHAIN_FRAMES 6u

/* A record of CPU cpu at time (the layout of BENCH_SAMPLE_TYPE; with_stack: and a call chain
   of BENCH_CHAIN_FRAMES user frames after the period; in_kernel: a sample in kernel code, its
   chain BENCH_KCHAIN_FRAMES kernel frames before the user ones, none of them the same as the
   last 255 samples' of its CPU). */
static void put_sample(struct bench_ring *r, uint64_t time, uint32_t cpu, uint32_t tid,
                       bool with_stack, bool in_kernel)
{
        uint64_t head = r->meta->data_head;
        uint8_t *p = r->data + head;
        uint32_t nr_k = in_kernel ? 1 + BENCH_KCHAIN_FRAMES : 0;
        uint32_t size = BENCH_RECORD_SIZE + (with_stack ? 8 * (2 + nr_k + BENCH_CHAIN_FRAMES) : 0);
        struct perf_event_header h = {PERF_RECORD_SAMPLE,
                                      in_kernel ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER,
                                      (uint16_t)size};
        uint64_t ip = 0x401000 + (time & 0xff0), uip = ip;
        uint64_t vary = (time / 1000 * 0x10) & 0xff0;
        if (in_kernel)
                ip = 0xffffffff81000000 + vary;
        uint64_t v[6] = {BENCH_EVENT_ID, ip, (uint64_t)tid << 32 | tid, time, cpu, 1000000};
        memcpy(p, &h, sizeof(h));
        memcpy(p + 8, v, sizeof(v));
        if (with_stack) {
                uint64_t chain[2 + 1 + BENCH_KCHAIN_FRAMES + BENCH_CHAIN_FRAMES];
                uint32_t n = 0;
                chain[n++] = nr_k + 1 + BENCH_CHAIN_FRAMES;
                if (in_kernel) {
                        chain[n++] = (uint64_t)PERF_CONTEXT_KERNEL;
                        chain[n++] = ip;
                        for (uint32_t i = 1; i < BENCH_KCHAIN_FRAMES; i++)
                                chain[n++] = 0xffffffff81100000 + 0x1000 * i + vary;
                }
                chain[n++] = (uint64_t)PERF_CONTEXT_USER;
                chain[n++] = uip;
                for (uint32_t i = 1; i < BENCH_CHAIN_FRAMES; i++)
                        chain[n++] = 0x402000 + 0x40 * i + (time & 0x30);
                memcpy(p + BENCH_RECORD_SIZE, chain, 8 * n);
        }
        r->meta->data_head = head + size;
}

/* ---- switches mode: bench/record.sh's switch-heavy load, as the rings hold it ---- */

#define SW_PROFILE_ID   78u
#define SW_SWITCH_ID    79u
#define SW_WAKING_ID    80u
#define SW_SIDEBAND_ID  81u /* the switch records' event: a live session's side-band one */
#define SW_SAMPLE_BITS  (PERF_CONV_SAMPLE_ID_BITS | PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN)
#define SW_PROFILE_TYPE (SW_SAMPLE_BITS | PERF_SAMPLE_PERIOD)
#define SW_TP_TYPE      (SW_SAMPLE_BITS | PERF_SAMPLE_RAW)

/* A kernel path and a user path of a thread blocking in a pipe read (as perf bench sched pipe's
   threads do), of a wake-up from a pipe write, and of a timer tick in user code. */
static const uint64_t k_switch[] = {0xffffffff81e4a1b2, 0xffffffff81e4a9c4, 0xffffffff814a2f10,
                                    0xffffffff814a37d5, 0xffffffff81492b66, 0xffffffff81492f3b,
                                    0xffffffff81e3c0d8, 0xffffffff82000130};
static const uint64_t k_waking[] = {0xffffffff811a3b40, 0xffffffff811a4d02, 0xffffffff811c1f6e,
                                    0xffffffff811c2a31, 0xffffffff814a1c77, 0xffffffff81492d9e,
                                    0xffffffff81493012, 0xffffffff81e3c0d8, 0xffffffff82000130};
static const uint64_t u_pipe[] = {0x7f3a12e1c9b1, 0x55d1c04a3e27, 0x55d1c04a41a5, 0x55d1c04a2311,
                                  0x7f3a12c2924a, 0x7f3a12c29305, 0x55d1c04a1ff5};

/* The blocking functions' places, as a live session reads them from /proc/kallsyms (about two
   dozen on 6.x kernels): none of them on the pipe read's path, whose every kernel frame a
   sleeping thread's switch then looks up. */
#define SW_NR_WAIT_SITES 24u
static void sw_wait_sites(struct perf_wait_site *sites)
{
        for (uint32_t i = 0; i < SW_NR_WAIT_SITES; i++) {
                uint64_t start = 0xffffffff81100000 + 0x40000ull * i;
                sites[i] = (struct perf_wait_site){start, start + 0x300, (uint8_t)(i % 2 ? 4 : 29)};
        }
}

struct sw_state {
        uint8_t rec[1024];
        uint32_t n;
};

static void sw_u64(struct sw_state *s, uint64_t v)
{
        memcpy(s->rec + s->n, &v, 8);
        s->n += 8;
}

/* The common head of a sample: identifier, ip, pid/tid, time, cpu (SW_SAMPLE_BITS). */
static void sw_head(struct sw_state *s, uint64_t id, uint64_t ip, uint32_t pid, uint32_t tid,
                    uint64_t time, uint32_t cpu)
{
        s->n = 8;
        sw_u64(s, id);
        sw_u64(s, ip);
        sw_u64(s, (uint64_t)tid << 32 | pid);
        sw_u64(s, time);
        sw_u64(s, cpu);
}

static void sw_chain(struct sw_state *s, const uint64_t *k, uint32_t nk, const uint64_t *u,
                     uint32_t nu)
{
        sw_u64(s, 2 + nk + nu);
        sw_u64(s, (uint64_t)PERF_CONTEXT_KERNEL);
        for (uint32_t i = 0; i < nk; i++)
                sw_u64(s, k[i]);
        sw_u64(s, (uint64_t)PERF_CONTEXT_USER);
        for (uint32_t i = 0; i < nu; i++)
                sw_u64(s, u[i]);
}

static void sw_raw(struct sw_state *s, const uint8_t *raw, uint32_t size)
{
        memcpy(s->rec + s->n, &size, 4);
        memcpy(s->rec + s->n + 4, raw, size);
        uint32_t n = (4 + size + 7) & ~7u;
        memset(s->rec + s->n + 4 + size, 0, n - 4 - size);
        s->n += n;
}

static void sw_put(struct bench_ring *r, struct sw_state *s, uint16_t type, uint16_t misc)
{
        struct perf_event_header h = {type, misc, (uint16_t)s->n};
        memcpy(s->rec, &h, sizeof(h));
        memcpy(r->data + r->meta->data_head, s->rec, s->n);
        r->meta->data_head += s->n;
}

/* A context-switch record of the whole CPU (its sample_id trailer: tid, time, cpu, id). */
static void sw_switch_rec(struct bench_ring *r, struct sw_state *s, bool is_out, uint32_t tid,
                          uint32_t other, uint64_t time, uint32_t cpu)
{
        s->n = 8;
        sw_u64(s, (uint64_t)other << 32 | other);
        sw_u64(s, (uint64_t)tid << 32 | tid);
        sw_u64(s, time);
        sw_u64(s, cpu);
        sw_u64(s, SW_SIDEBAND_ID);
        sw_put(r, s, PERF_RECORD_SWITCH_CPU_WIDE,
               is_out ? PERF_RECORD_MISC_SWITCH_OUT | PERF_RECORD_MISC_KERNEL
                      : PERF_RECORD_MISC_KERNEL);
}

/* One round of the storm on CPU cpu at t: thread a wakes b, a sleeps in a pipe read and b runs;
   every fourth round a timer sample in user code. 8 records, about 1 KiB. */
static void sw_round(struct bench_ring *r, uint64_t round, uint64_t t, uint32_t cpu)
{
        struct sw_state s;
        uint32_t a = 2000 + 2 * cpu + (uint32_t)(round & 1), b = a ^ 1, pid = 2000 + 2 * cpu;
        uint8_t raw[64];
        /* sched_waking: a wakes b */
        memset(raw, 0, sizeof(raw));
        raw[0] = 0x77;
        memcpy(raw + 8, "sched-pipe", 10);
        memcpy(raw + 24, &b, 4);
        int32_t prio = 120;
        memcpy(raw + 28, &prio, 4);
        memcpy(raw + 32, &cpu, 4);
        sw_head(&s, SW_WAKING_ID, k_waking[0], pid, a, t, cpu);
        sw_chain(&s, k_waking, 9, u_pipe + 1, 6);
        sw_raw(&s, raw, 36);
        sw_put(r, &s, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
        /* sched_switch: a (S) to b */
        memset(raw, 0, sizeof(raw));
        raw[0] = 0x74;
        memcpy(raw + 8, "sched-pipe", 10);
        memcpy(raw + 24, &a, 4);
        memcpy(raw + 28, &prio, 4);
        int64_t state = 1;
        memcpy(raw + 32, &state, 8);
        memcpy(raw + 40, "sched-pipe", 10);
        memcpy(raw + 56, &b, 4);
        memcpy(raw + 60, &prio, 4);
        sw_head(&s, SW_SWITCH_ID, k_switch[0], pid, a, t + 1500, cpu);
        sw_chain(&s, k_switch, 8, u_pipe, 7);
        sw_raw(&s, raw, 64);
        sw_put(r, &s, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
        sw_switch_rec(r, &s, true, a, b, t + 1600, cpu);
        sw_switch_rec(r, &s, false, b, a, t + 1700, cpu);
        if (round % 4 == 3) {
                sw_head(&s, SW_PROFILE_ID, u_pipe[2] + (round & 0xf0), pid, b, t + 2000, cpu);
                sw_u64(&s, 250000); /* period */
                sw_chain(&s, NULL, 0, u_pipe + 2, 5);
                sw_put(r, &s, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
        }
}

/* The tracepoint format of tracefs's event sched/name into fmt; false when not readable. */
static bool sw_format(const char *name, struct perf_tp_format *fmt)
{
        static const char *const roots[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
        for (int i = 0; i < 2; i++) {
                char path[128];
                snprintf(path, sizeof(path), "%s/events/sched/%s/format", roots[i], name);
                FILE *f = fopen(path, "r");
                if (!f)
                        continue;
                static char text[65536];
                size_t n = fread(text, 1, sizeof(text) - 1, f);
                fclose(f);
                text[n] = 0;
                return perf_tp_format_parse(text, n, fmt) == 0;
        }
        return false;
}

/* The file's clocks are the same from run to run (start, base), so that two builds' files can be
   compared byte for byte. */
static struct etl_writer *writer_of(const char *file, uint32_t nr_cpus, uint64_t start)
{
        int64_t ft = 134000000000000000ll;
        struct etl_writer_config cfg = {
                .buffer_size_bytes = 65536,
                .nr_cpus = nr_cpus,
                .log_file_mode = EVENT_TRACE_FILE_MODE_SEQUENTIAL,
                .logger_id = 1,
                .logger_name = "NT Kernel Logger",
                .log_file_name = file,
                .start_timestamp = start,
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
                fprintf(stderr, "usage: bench_drain OUT.etl NR_CPUS RECORDS_PER_CPU [RUN] "
                                "[switches|stacks]\n"
                                "  RUN: records of one CPU in a row before the next CPU's "
                                "(1: every record switches CPU)\n"
                                "  switches: RECORDS_PER_CPU rounds of a context-switch storm a "
                                "CPU (wake-up, switch, its two switch records, a sample every "
                                "fourth), call chains on; tracefs's sched formats\n"
                                "  stacks: the samples with call chains of 8 user frames (the "
                                "samples-only session)\n"
                                "  kstacks: samples in kernel code, 6 kernel frames before the 8 "
                                "user ones, no chain the same as one of the 255 before it\n");
                return 2;
        }
        bool is_switches = argc > 5 && strcmp(argv[5], "switches") == 0;
        bool is_kstacks = argc > 5 && strcmp(argv[5], "kstacks") == 0;
        bool is_stacks = is_kstacks || (argc > 5 && strcmp(argv[5], "stacks") == 0);
        uint32_t nr_cpus = (uint32_t)strtoul(argv[2], NULL, 0);
        uint32_t nr_per = (uint32_t)strtoul(argv[3], NULL, 0);
        uint32_t run = argc > 4 ? (uint32_t)strtoul(argv[4], NULL, 0) : 1;
        if (!nr_cpus || nr_cpus > 256 || !nr_per || !run)
                return 2;
        /* switches: rings four times the records' size (about 640 bytes a round); the drain
           reads them in place, as it reads a live session's that keeps up */
        size_t data_size = 4096;
        size_t per_record = is_switches ? 4096 : is_stacks ? 256 : BENCH_RECORD_SIZE;
        while (data_size < (size_t)nr_per * per_record)
                data_size *= 2;

        struct bench_ring *rings = xcalloc(nr_cpus, sizeof(*rings));
        struct live_mem_ring *mem = xcalloc(nr_cpus, sizeof(*mem));
        /* a second after boot: every record is due, and the file is the same every run (two
           builds' files compare byte for byte) */
        uint64_t base = 1000000000ull;
        for (uint32_t c = 0; c < nr_cpus; c++) {
                struct bench_ring *r = &rings[c];
                r->meta = xcalloc(1, 4096 + data_size);
                r->meta->data_offset = 4096;
                r->meta->data_size = data_size;
                r->data = (uint8_t *)r->meta + 4096;
                mem[c] = (struct live_mem_ring){c, r->meta};
        }
        static struct perf_tp_format tp_switch, tp_waking;
        if (is_switches &&
            (!sw_format("sched_switch", &tp_switch) || !sw_format("sched_waking", &tp_waking))) {
                fprintf(stderr, "bench_drain: no tracefs sched formats: cannot run switches\n");
                return 1;
        }
        uint64_t nr_records = 0;
        for (uint32_t c = 0; is_switches && c < nr_cpus; c++) {
                for (uint32_t i = 0; i < nr_per; i++)
                        sw_round(&rings[c], i, base + (uint64_t)i * 5000 + c * 7, c);
                /* a round's records but its two switch records: the gather passes the
                   switch-out over, and the switch-in goes with the sched_switch sample that
                   wrote it (but where a drain's round ends between the two: then it waits, and
                   is drained as a record of its own) */
                nr_records += (uint64_t)nr_per * 2 + nr_per / 4;
        }
        /* CPU c's i-th record: in blocks of RUN records, the blocks of the CPUs in turn */
        for (uint32_t i = 0; !is_switches && i < nr_per; i++) {
                for (uint32_t c = 0; c < nr_cpus; c++) {
                        uint64_t block = i / run, in_block = i % run;
                        uint64_t t = base + ((block * nr_cpus + c) * run + in_block) * 1000;
                        put_sample(&rings[c], t, c, 1000 + c, is_stacks, is_kstacks);
                }
        }

        struct perf_conv_event ev = {.kind = PERF_CONV_PROFILE,
                                     .sample_type = BENCH_SAMPLE_TYPE |
                                                    (is_stacks ? PERF_SAMPLE_CALLCHAIN : 0),
                                     .has_stack = is_stacks,
                                     .walk = PERF_CONV_WALK_FP,
                                     .valid_until = UINT64_MAX};
        uint64_t id = BENCH_EVENT_ID;
        PERFINFO_GROUPMASK masks = {{0}};
        masks.Masks[0] = EVENT_TRACE_FLAG_PROFILE;
        struct etl_writer *w = writer_of(argv[1], nr_cpus, base);
        struct live_source *ls = NULL;
        int rc;
        if (is_switches) {
                struct perf_conv_event evs[4] = {
                        {.kind = PERF_CONV_PROFILE,
                         .sample_type = SW_PROFILE_TYPE,
                         .has_stack = true,
                         .walk = PERF_CONV_WALK_FP,
                         .valid_until = UINT64_MAX},
                        {.kind = PERF_CONV_CSWITCH,
                         .sample_type = SW_TP_TYPE,
                         .has_stack = true,
                         .walk = PERF_CONV_WALK_FP,
                         .tp = &tp_switch,
                         .valid_until = UINT64_MAX},
                        {.kind = PERF_CONV_READY_THREAD,
                         .sample_type = SW_TP_TYPE,
                         .has_stack = true,
                         .walk = PERF_CONV_WALK_FP,
                         .tp = &tp_waking,
                         .valid_until = UINT64_MAX},
                        {.kind = PERF_CONV_SIDEBAND,
                         .sample_type = PERF_CONV_SAMPLE_ID_BITS,
                         .valid_until = UINT64_MAX},
                };
                uint64_t ids[4] = {SW_PROFILE_ID, SW_SWITCH_ID, SW_WAKING_ID, SW_SIDEBAND_ID};
                masks.Masks[0] |= EVENT_TRACE_FLAG_CSWITCH | EVENT_TRACE_FLAG_DISPATCHER;
                rc = live_source_open_mem(&ls, mem, nr_cpus, evs, ids, 4, &masks, w);
                struct perf_wait_site sites[SW_NR_WAIT_SITES];
                sw_wait_sites(sites);
                if (rc == 0)
                        live_source_set_wait_sites(ls, sites, SW_NR_WAIT_SITES);
        } else {
                rc = live_source_open_mem(&ls, mem, nr_cpus, &ev, &id, 1, &masks, w);
        }
        if (rc < 0) {
                fprintf(stderr, "bench_drain: live_source_open_mem: %s\n", strerror(-rc));
                return 1;
        }
        /* the drain's own CPU time, without the rings' filling: what the cache misses of many
           interleaved rings cost, side by side with another build's (callgrind counts
           instructions only) */
        struct timespec cpu0, cpu1;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu0);
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
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu1);
        live_source_close(ls);
        etl_writer_close(w, 0, 0, 0);
        if (!is_switches)
                nr_records = (uint64_t)nr_cpus * nr_per;
        struct etl_writer_stats wst;
        etl_writer_get_stats(w, &wst);
        double ns =
                (double)(cpu1.tv_sec - cpu0.tv_sec) * 1e9 + (double)(cpu1.tv_nsec - cpu0.tv_nsec);
        /* a record of the rings but the switch-outs (3.25 a round in switches mode, whether
           the switch-in is drained on its own or with its sample): the same unit before and
           after a change in what the drain counts */
        uint64_t per = is_switches ? (uint64_t)nr_cpus * (nr_per * 3ull + nr_per / 4) : nr_records;
        printf("%llu records drained of %llu, %llu events written, %.1f ns CPU a record\n",
               (unsigned long long)total, (unsigned long long)nr_records,
               (unsigned long long)wst.nr_events, per ? ns / (double)per : 0.0);
        etl_writer_free(w);
        for (uint32_t c = 0; c < nr_cpus; c++)
                free(rings[c].meta);
        free(rings);
        free(mem);
        uint64_t most = nr_records + (is_switches ? (uint64_t)nr_cpus * nr_per : 0);
        return total >= nr_records && total <= most ? 0 : 1;
}
