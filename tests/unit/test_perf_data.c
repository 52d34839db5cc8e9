/* SPDX-License-Identifier: MIT */
/* test_perf_data.c: the perf.data reader (backend/perf_data.c) on the real files of
   shared/samples/perf, counted against Debian's perf (perf report -D, perf script), on files
   built by hand (every attr size, pipe mode), and on truncated and damaged copies. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "etl_reader.h"
#include "etw/etwtop_ext.h"
#include "etw/evntcons.h"
#include "etw/ntwmi.h"
#include "perf_data.h"
#include "perf_fb.h"
#include "perf_convert.h"
#include "perf_data_conv.h"
#include "perf_data_mem.h"

/* ---- the shared files ---- */

static char *sample_path(const char *name)
{
        const char *dir = getenv("ETWTOP_SAMPLES");
        if (!dir)
                return NULL;
        char *p = malloc(strlen(dir) + strlen(name) + 8);
        sprintf(p, "%s/perf/%s", dir, name);
        struct stat st;
        if (stat(p, &st) != 0) {
                free(p);
                return NULL;
        }
        return p;
}

static uint8_t *read_file(const char *path, size_t *size)
{
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        uint8_t *b = malloc((size_t)n + 1);
        assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
        fclose(f);
        *size = (size_t)n;
        return b;
}

#define MAX_NAMED 8

/* What one pass over a file finds. */
struct counts {
        uint64_t total;
        uint64_t by_type[PERF_DATA_NR_TYPES];
        uint64_t nr_decompressed;
        uint32_t nr_named;
        char names[MAX_NAMED][64];
        uint64_t samples[MAX_NAMED]; /* per event name, in order of first sample */
        uint64_t nr_unknown_event;   /* samples whose event was not found */
        int rc;                      /* perf_data_next's last result */
        struct err_msg err;
};

static void count_records(struct perf_data *pd, struct counts *c)
{
        memset(c, 0, sizeof(*c));
        struct perf_data_record rec;
        while ((c->rc = perf_data_next(pd, &rec, &c->err)) == 1) {
                c->total++;
                if (rec.type < PERF_DATA_NR_TYPES)
                        c->by_type[rec.type]++;
                c->nr_decompressed += rec.is_decompressed;
                if (rec.type != PERF_RECORD_SAMPLE)
                        continue;
                if (rec.event < 0) {
                        c->nr_unknown_event++;
                        continue;
                }
                char name[64];
                perf_data_event_name(perf_data_event(pd, (uint32_t)rec.event), name, sizeof(name));
                uint32_t i = 0;
                while (i < c->nr_named && strcmp(c->names[i], name) != 0)
                        i++;
                if (i == c->nr_named && i < MAX_NAMED)
                        snprintf(c->names[c->nr_named++], 64, "%s", name);
                if (i < MAX_NAMED)
                        c->samples[i]++;
        }
}

static uint64_t samples_of(const struct counts *c, const char *name)
{
        for (uint32_t i = 0; i < c->nr_named; i++)
                if (strcmp(c->names[i], name) == 0)
                        return c->samples[i];
        return 0;
}

/* Opens a shared file and counts it; NULL (and a skip) when the samples are not here. */
static struct perf_data *open_counted(const char *name, struct counts *c)
{
        char *path = sample_path(name);
        if (!path) {
                print_message("skipped: %s not found (ETWTOP_SAMPLES)\n", name);
                return NULL;
        }
        struct perf_data *pd = NULL;
        struct err_msg err;
        int rc = perf_data_open_file(&pd, path, &err);
        if (rc < 0)
                fail_msg("%s: %s at %llu", path, err.msg, (unsigned long long)err.offset);
        free(path);
        count_records(pd, c);
        if (c->rc < 0)
                fail_msg("%s: %s at %llu", name, c->err.msg, (unsigned long long)c->err.offset);
        if (perf_data_nr_warnings(pd))
                fail_msg("%s: %s at %llu", name, perf_data_last_warning(pd)->msg,
                         (unsigned long long)perf_data_last_warning(pd)->offset);
        return pd;
}

/* The numbers below are perf report -D's "Aggregated stats" and perf script -F event's counts
   (Debian's linux-perf 6.1) for each file. */

static void test_busy_six_hw_events(void **state)
{
        (void)state;
        struct counts c;
        struct perf_data *pd = open_counted("perf.data.busy.0-3.4", &c);
        if (!pd)
                skip();
        assert_int_equal(c.total, 2972);
        assert_int_equal(c.by_type[PERF_RECORD_MMAP], 1919);
        assert_int_equal(c.by_type[PERF_RECORD_COMM], 261);
        assert_int_equal(c.by_type[PERF_RECORD_EXIT], 110);
        assert_int_equal(c.by_type[PERF_RECORD_FORK], 54);
        assert_int_equal(c.by_type[PERF_RECORD_SAMPLE], 628);
        assert_int_equal(c.nr_unknown_event, 0);
        assert_int_equal(samples_of(&c, "cycles"), 67);
        assert_int_equal(samples_of(&c, "instructions"), 127);
        assert_int_equal(samples_of(&c, "cache-references"), 135);
        assert_int_equal(samples_of(&c, "cache-misses"), 70);
        assert_int_equal(samples_of(&c, "branches"), 123);
        assert_int_equal(samples_of(&c, "branch-misses"), 106);
        assert_int_equal(perf_data_nr_events(pd), 6);
        perf_data_close(pd);
}

static void test_callgraph_and_branch(void **state)
{
        (void)state;
        struct counts c;
        struct perf_data *pd = open_counted("perf.data.callgraph_and_branch-3.4", &c);
        if (!pd)
                skip();
        assert_int_equal(c.total, 2643);
        assert_int_equal(c.by_type[PERF_RECORD_MMAP], 1536);
        assert_int_equal(c.by_type[PERF_RECORD_COMM], 176);
        assert_int_equal(c.by_type[PERF_RECORD_EXIT], 6);
        assert_int_equal(c.by_type[PERF_RECORD_FORK], 2);
        assert_int_equal(c.by_type[PERF_RECORD_SAMPLE], 923);
        assert_int_equal(samples_of(&c, "cycles"), 923);
        const struct perf_data_event *ev = perf_data_event(pd, 0);
        assert_true(ev->attr.sample_type & PERF_SAMPLE_CALLCHAIN);
        assert_true(ev->attr.sample_type & PERF_SAMPLE_BRANCH_STACK);
        perf_data_close(pd);
}

static void test_lost_samples_group(void **state)
{
        (void)state;
        struct counts c;
        struct perf_data *pd = open_counted("perf.data.lost_samples-4.4", &c);
        if (!pd)
                skip();
        assert_int_equal(c.total, 243);
        assert_int_equal(c.by_type[PERF_RECORD_MMAP], 39);
        assert_int_equal(c.by_type[PERF_RECORD_COMM], 3);
        assert_int_equal(c.by_type[PERF_RECORD_EXIT], 1);
        assert_int_equal(c.by_type[PERF_RECORD_SAMPLE], 191);
        assert_int_equal(c.by_type[PERF_RECORD_MMAP2], 6);
        assert_int_equal(c.by_type[PERF_RECORD_LOST_SAMPLES], 2);
        assert_int_equal(c.by_type[PERF_DATA_FINISHED_ROUND], 1);
        assert_int_equal(samples_of(&c, "cycles:pp"), 97);
        assert_int_equal(samples_of(&c, "instructions:pp"), 80);
        assert_int_equal(samples_of(&c, "branch-instructions:pp"), 14);
        /* perf report --header-only */
        const struct perf_data_info *in = perf_data_info(pd);
        assert_string_equal(in->hostname, "localhost");
        assert_string_equal(in->osrelease, "4.14.18");
        assert_string_equal(in->version, "4.4");
        assert_string_equal(in->arch, "x86_64");
        assert_string_equal(in->cpudesc, "Intel(R) Celeron(R) 2955U @ 1.40GHz");
        assert_string_equal(in->cpuid, "GenuineIntel,6,69,1");
        assert_int_equal(in->nr_cpus_online, 2);
        assert_int_equal(in->nr_cpus_avail, 2);
        assert_int_equal(in->total_mem_kb, 1915144);
        assert_string_equal(in->cmdline,
                            "/usr/bin/perf record -e "
                            "{cycles:pp,instructions:pp,branch-instructions:pp} -P -c 20003 "
                            "-o /tmp/perf.data -- echo Hello, World!");
        assert_int_equal(in->nr_groups, 1);
        assert_int_equal(in->groups[0].leader, 0);
        assert_int_equal(in->groups[0].nr_members, 3);
        bool has_cpu_pmu = false;
        for (uint32_t i = 0; i < in->nr_pmus; i++)
                has_cpu_pmu |= strcmp(in->pmus[i].name, "cpu") == 0 && in->pmus[i].type == 4;
        assert_true(has_cpu_pmu);
        assert_int_equal(perf_data_nr_events(pd), 3);
        char origin[1024];
        perf_data_origin(pd, origin, sizeof(origin));
        assert_string_equal(origin,
                            "perf.data of localhost, Linux 4.14.18, Intel(R) Celeron(R) 2955U @ "
                            "1.40GHz; events: cycles:pp (period 20003), instructions:pp (period "
                            "20003), branch-instructions:pp (period 20003); command: "
                            "/usr/bin/perf record -e "
                            "{cycles:pp,instructions:pp,branch-instructions:pp} -P -c 20003 -o "
                            "/tmp/perf.data -- echo Hello, World!");
        const struct perf_data_event *ev = perf_data_event(pd, 1);
        assert_int_equal(ev->attr_size, 112);
        assert_int_equal(ev->attr.config, PERF_COUNT_HW_INSTRUCTIONS);
        assert_int_equal(ev->attr.sample_period, 20003);
        assert_int_equal(ev->nr_ids, 2);
        assert_int_equal(ev->ids[0], 291);
        perf_data_close(pd);
}

static void test_simpleperf_lbr(void **state)
{
        (void)state;
        struct counts c;
        struct perf_data *pd = open_counted("perf_b.data", &c);
        if (!pd)
                skip();
        assert_int_equal(c.total, 283);
        assert_int_equal(c.by_type[PERF_RECORD_MMAP], 131);
        assert_int_equal(c.by_type[PERF_RECORD_LOST], 1);
        assert_int_equal(c.by_type[PERF_RECORD_COMM], 1);
        assert_int_equal(c.by_type[PERF_RECORD_SAMPLE], 150);
        assert_int_equal(samples_of(&c, "cycles:HG") + samples_of(&c, "cycles"), 150);
        perf_data_close(pd);
}

static void test_propeller_lbr_build_id(void **state)
{
        (void)state;
        struct counts c;
        struct perf_data *pd = open_counted("propeller_sample_1.perfdata1", &c);
        if (!pd)
                skip();
        assert_int_equal(c.total, 5619);
        assert_int_equal(c.by_type[PERF_RECORD_COMM], 2);
        assert_int_equal(c.by_type[PERF_RECORD_EXIT], 1);
        assert_int_equal(c.by_type[PERF_RECORD_THROTTLE], 926);
        assert_int_equal(c.by_type[PERF_RECORD_UNTHROTTLE], 926);
        assert_int_equal(c.by_type[PERF_RECORD_SAMPLE], 3740);
        assert_int_equal(c.by_type[PERF_RECORD_MMAP2], 4);
        assert_int_equal(c.by_type[PERF_DATA_FINISHED_ROUND], 19);
        assert_int_equal(c.by_type[PERF_DATA_TIME_CONV], 1);
        assert_int_equal(samples_of(&c, "cycles:u"), 3740);
        const struct perf_data_info *in = perf_data_info(pd);
        bool found = false;
        for (uint32_t i = 0; i < in->nr_build_ids; i++) {
                const struct perf_data_build_id *b = &in->build_ids[i];
                if (strstr(b->path, "propeller_sample_1.bin.gen")) {
                        found = true;
                        assert_int_equal(b->id[0], 0x57);
                        assert_int_equal(b->id[1], 0x2a);
                        assert_int_equal(b->id[2], 0xc7);
                        assert_int_equal(b->id[3], 0x24);
                }
        }
        assert_true(found);
        perf_data_close(pd);
}

static void test_compressed_pipe(void **state)
{
        (void)state;
        struct counts c;
        struct perf_data *pd = open_counted("sleep.compressed.pipe.data", &c);
        if (!pd)
                skip();
        assert_true(perf_data_info(pd)->is_pipe);
        assert_int_equal(c.total, 119);
        assert_int_equal(c.by_type[PERF_RECORD_MMAP], 45);
        assert_int_equal(c.by_type[PERF_RECORD_COMM], 2);
        assert_int_equal(c.by_type[PERF_RECORD_EXIT], 1);
        assert_int_equal(c.by_type[PERF_RECORD_SAMPLE], 8);
        assert_int_equal(c.by_type[PERF_RECORD_MMAP2], 4);
        assert_int_equal(c.by_type[PERF_RECORD_KSYMBOL], 15);
        assert_int_equal(c.by_type[PERF_RECORD_BPF_EVENT], 14);
        assert_int_equal(c.by_type[PERF_DATA_HEADER_ATTR], 1);
        assert_int_equal(c.by_type[PERF_DATA_FINISHED_ROUND], 1);
        assert_int_equal(c.by_type[PERF_DATA_ID_INDEX], 1);
        assert_int_equal(c.by_type[PERF_DATA_THREAD_MAP], 1);
        assert_int_equal(c.by_type[PERF_DATA_CPU_MAP], 1);
        assert_int_equal(c.by_type[PERF_DATA_EVENT_UPDATE], 1);
        assert_int_equal(c.by_type[PERF_DATA_TIME_CONV], 1);
        assert_int_equal(c.by_type[PERF_DATA_HEADER_FEATURE], 21);
        assert_int_equal(c.by_type[PERF_DATA_COMPRESSED], 1);
        assert_int_equal(c.by_type[PERF_DATA_FINISHED_INIT], 1);
        assert_true(c.nr_decompressed > 0);
        assert_int_equal(samples_of(&c, "cycles:P"), 8);
        const struct perf_data_info *in = perf_data_info(pd);
        assert_non_null(in->hostname);
        assert_non_null(in->cmdline);
        assert_int_equal(in->compression_type, 1);
        perf_data_close(pd);
}

/* perf 6.1 refuses this file (its attrs are 136 bytes, newer than it); it is read here and must
   hold the same kinds of records as the pipe-mode recording of the same program. */
static void test_compressed_file(void **state)
{
        (void)state;
        struct counts c;
        struct perf_data *pd = open_counted("sleep.compressed.data", &c);
        if (!pd)
                skip();
        assert_false(perf_data_info(pd)->is_pipe);
        assert_int_equal(perf_data_event(pd, 0)->attr_size, 136);
        assert_true(c.by_type[PERF_DATA_COMPRESSED] + c.by_type[PERF_DATA_COMPRESSED2] > 0);
        assert_true(c.nr_decompressed > 0);
        assert_true(c.by_type[PERF_RECORD_SAMPLE] > 0);
        assert_int_equal(c.nr_unknown_event, 0);
        assert_true(c.by_type[PERF_RECORD_COMM] > 0);
        assert_true(c.by_type[PERF_RECORD_MMAP2] > 0);
        perf_data_close(pd);
}

/* ---- the shared files against the perf found here, when it reads them ---- */

/* perf report -D's "Aggregated stats" for a file: counts by type name; false when perf cannot
   read it. */
static bool perf_report_counts(const char *path, char names[][32], uint64_t *nrs, uint32_t *nr,
                               uint32_t max)
{
        char cmd[1024];
        snprintf(cmd, sizeof(cmd), "perf report -D -i '%s' 2>/dev/null", path);
        FILE *f = popen(cmd, "r");
        if (!f)
                return false;
        char line[4096];
        bool in_stats = false;
        *nr = 0;
        while (fgets(line, sizeof(line), f)) {
                if (strncmp(line, "Aggregated stats", 16) == 0) {
                        in_stats = true;
                        continue;
                }
                if (!in_stats)
                        continue;
                if (strstr(line, " stats:"))
                        break;
                char name[64];
                unsigned long long n;
                if (sscanf(line, " %63s events: %llu", name, &n) == 2 && *nr < max) {
                        snprintf(names[*nr], 32, "%.31s", name);
                        nrs[(*nr)++] = n;
                }
        }
        return pclose(f) == 0 && *nr > 0;
}

static void test_against_perf_report(void **state)
{
        (void)state;
        if (system("perf version >/dev/null 2>&1") != 0) {
                print_message("skipped: perf is not installed\n");
                skip();
        }
        static const char *const files[] = {
                "perf.data.busy.0-3.4",         "perf.data.callgraph_and_branch-3.4",
                "perf.data.lost_samples-4.4",   "perf_b.data",
                "propeller_sample_1.perfdata1", "sleep.compressed.data",
                "sleep.compressed.pipe.data"};
        uint32_t nr_compared = 0;
        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
                char *path = sample_path(files[i]);
                if (!path)
                        continue;
                char names[64][32];
                uint64_t nrs[64];
                uint32_t nr;
                if (!perf_report_counts(path, names, nrs, &nr, 64)) {
                        print_message("%s: perf cannot read it; not compared\n", files[i]);
                        free(path);
                        continue;
                }
                struct counts c;
                struct perf_data *pd = open_counted(files[i], &c);
                for (uint32_t k = 0; k < nr; k++) {
                        uint64_t mine = 0;
                        if (strcmp(names[k], "TOTAL") == 0)
                                mine = c.total;
                        for (uint32_t t = 0; t < PERF_DATA_NR_TYPES; t++)
                                if (strcmp(perf_data_type_name(t), names[k]) == 0)
                                        mine = c.by_type[t];
                        if (mine != nrs[k])
                                fail_msg("%s: %s records: perf %llu, etwtop %llu", files[i],
                                         names[k], (unsigned long long)nrs[k],
                                         (unsigned long long)mine);
                }
                nr_compared++;
                perf_data_close(pd);
                free(path);
        }
        if (nr_compared == 0)
                skip();
}

/* ---- files built by hand ---- */

/* An attr of attr_size bytes: a software cpu-clock with IDENTIFIER|IP|TID|TIME|PERIOD. */
static void fb_attr_of(struct fb *f, uint32_t attr_size, uint32_t type, uint64_t config)
{
        uint8_t a[256] = {0};
        memcpy(a + 0, &type, 4);
        memcpy(a + 4, &attr_size, 4);
        memcpy(a + 8, &config, 8);
        uint64_t period = 10000, st = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                      PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
        memcpy(a + 16, &period, 8);
        memcpy(a + 24, &st, 8);
        uint64_t flags = 1ull << 18 | 1ull << 20; /* sample_id_all, exclude_guest (as perf) */
        memcpy(a + 40, &flags, 8);
        fb_put(f, a, attr_size);
}

static void fb_attr(struct fb *f, uint32_t attr_size, uint64_t config)
{
        fb_attr_of(f, attr_size, PERF_TYPE_SOFTWARE, config);
}

/* The file built in f, opened (it must open) and, where c is given, its records counted. */
static struct perf_data *fb_open(const struct fb *f, struct counts *c)
{
        struct perf_data *pd = NULL;
        struct err_msg err;
        assert_int_equal(perf_data_open_mem(&pd, f->b, f->n, &err), 0);
        if (c)
                count_records(pd, c);
        return pd;
}

/* A pipe-mode file's start: the magic and the header's size, then its one attr (fb_attr's, of
   config, 112 bytes, at byte FB_PIPE_ATTR_AT) and id 100 in a PERF_RECORD_HEADER_ATTR. */
#define FB_PIPE_ATTR_AT 24u
static struct fb *fb_pipe_start(uint64_t config)
{
        struct fb *f = calloc(1, sizeof(*f));
        fb_put(f, "PERFILE2", 8);
        fb_u64(f, 16);
        fb_u32(f, PERF_DATA_HEADER_ATTR);
        fb_u16(f, 0);
        fb_u16(f, 8 + 112 + 8);
        fb_attr(f, 112, config);
        fb_u64(f, 100);
        return f;
}

static void fb_sample(struct fb *f, uint64_t id, uint64_t ip)
{
        fb_u32(f, PERF_RECORD_SAMPLE);
        fb_u16(f, PERF_RECORD_MISC_USER);
        fb_u16(f, 8 + 5 * 8);
        fb_u64(f, id);
        fb_u64(f, ip);
        fb_u32(f, 42);
        fb_u32(f, 43);
        fb_u64(f, 1000 + ip);
        fb_u64(f, 10000);
}

/* A file-mode file with two events of attr_size bytes (ids 7 and 9), then three samples. */
static void build_file(struct fb *f, uint32_t attr_size)
{
        memset(f, 0, sizeof(*f));
        fb_put(f, "PERFILE2", 8);
        fb_u64(f, 104);
        fb_u64(f, attr_size + 16);
        uint32_t sections = f->n;
        f->n = 104;
        uint32_t ids = f->n;
        fb_u64(f, 7);
        fb_u64(f, 9);
        uint32_t attrs = f->n;
        for (uint32_t i = 0; i < 2; i++) {
                fb_attr(f, attr_size, i ? PERF_COUNT_SW_TASK_CLOCK : PERF_COUNT_SW_CPU_CLOCK);
                fb_u64(f, ids + 8 * i);
                fb_u64(f, 8);
        }
        uint32_t data = f->n;
        fb_sample(f, 7, 0x1000);
        fb_sample(f, 9, 0x2000);
        fb_sample(f, 9, 0x3000);
        fb_u64_at(f, sections, attrs);
        fb_u64_at(f, sections + 8, 2ull * (attr_size + 16));
        fb_u64_at(f, sections + 16, data);
        fb_u64_at(f, sections + 24, f->n - data);
}

static void test_every_attr_size(void **state)
{
        (void)state;
        static const uint32_t sizes[] = {64, 72, 80, 96, 104, 112, 120, 128, 136, 160};
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
                struct fb *f = calloc(1, sizeof(*f));
                build_file(f, sizes[i]);
                uint8_t *copy = malloc(f->n); /* exact size: ASan sees any overread */
                memcpy(copy, f->b, f->n);
                struct perf_data *pd = NULL;
                struct err_msg err;
                assert_int_equal(perf_data_open_mem(&pd, copy, f->n, &err), 0);
                assert_int_equal(perf_data_nr_events(pd), 2);
                assert_int_equal(perf_data_event(pd, 1)->attr_size, sizes[i]);
                struct counts c;
                count_records(pd, &c);
                assert_int_equal(c.rc, 0);
                assert_int_equal(c.by_type[PERF_RECORD_SAMPLE], 3);
                assert_int_equal(samples_of(&c, "cpu-clock"), 1);
                assert_int_equal(samples_of(&c, "task-clock"), 2);
                perf_data_close(pd);
                free(copy);
                free(f);
        }
}

/* A hybrid machine's perf record -e cycles,instructions: cycles on each PMU (cpu_core and
   cpu_atom, the PMU's type in config's high half) and instructions on one, named by EVENT_UPDATE
   records: the two cycles events are two sources named as the file names them (perf report's
   two tables), the instructions ETW's InstructionRetired. */
static void test_hybrid_events(void **state)
{
        (void)state;
        static const struct {
                uint64_t config;
                const char *name;
        } evs[] = {{4ull << 32 | PERF_COUNT_HW_CPU_CYCLES, "cpu_core/cycles/\0\0\0\0\0\0\0"},
                   {8ull << 32 | PERF_COUNT_HW_CPU_CYCLES, "cpu_atom/cycles/\0\0\0\0\0\0\0"},
                   {4ull << 32 | PERF_COUNT_HW_INSTRUCTIONS, "cpu_core/instructions/\0"}};
        struct fb *f = calloc(1, sizeof(*f));
        fb_put(f, "PERFILE2", 8);
        fb_u64(f, 16);
        for (uint32_t i = 0; i < 3; i++) {
                fb_u32(f, PERF_DATA_HEADER_ATTR);
                fb_u16(f, 0);
                fb_u16(f, 8 + 112 + 8);
                fb_attr_of(f, 112, PERF_TYPE_HARDWARE, evs[i].config);
                fb_u64(f, 100 + i);
        }
        for (uint32_t i = 0; i < 3; i++) {
                fb_u32(f, PERF_DATA_EVENT_UPDATE);
                fb_u16(f, 0);
                fb_u16(f, 8 + 16 + 24);
                fb_u64(f, 2); /* PERF_EVENT_UPDATE__NAME */
                fb_u64(f, 100 + i);
                fb_put(f, evs[i].name, 24);
        }
        struct counts c;
        struct perf_data *pd = fb_open(f, &c);
        assert_int_equal(c.rc, 0);
        struct perf_conv_event ev[3];
        char name[3][64];
        for (uint32_t i = 0; i < 3; i++)
                perf_data_conv_event_of(pd, i, &ev[i], name[i], sizeof(name[i]));
        assert_int_not_equal(ev[0].profile_source, ev[1].profile_source);
        assert_true(ev[0].profile_source > ProfileMaximum);
        assert_string_equal(name[0], "cpu_core/cycles/");
        assert_string_equal(name[1], "cpu_atom/cycles/");
        assert_int_equal(ev[2].profile_source, 26); /* InstructionRetired */
        assert_string_equal(name[2], "InstructionRetired");
        perf_data_close(pd);
        free(f);
}

/* Pipe mode: HEADER_ATTR records of each size, HEADER_FEATUREs (HOSTNAME, CLOCKID, CLOCK_DATA),
   an EVENT_UPDATE naming the second event and one giving the first its CPUs (a hybrid
   machine's cpu_core and cpu_atom events: a CPU map, not a name), FINISHED_INIT, then
   samples. */
static void test_pipe_mode_by_hand(void **state)
{
        (void)state;
        struct fb *f = calloc(1, sizeof(*f));
        fb_put(f, "PERFILE2", 8);
        fb_u64(f, 16);
        static const uint32_t sizes[] = {64, 136};
        for (uint32_t i = 0; i < 2; i++) {
                fb_u32(f, PERF_DATA_HEADER_ATTR);
                fb_u16(f, 0);
                fb_u16(f, (uint16_t)(8 + sizes[i] + 8));
                fb_attr(f, sizes[i], PERF_COUNT_SW_CPU_CLOCK);
                fb_u64(f, 100 + i);
        }
        fb_u32(f, PERF_DATA_HEADER_FEATURE);
        fb_u16(f, 0);
        fb_u16(f, 8 + 8 + 4 + 8);
        fb_u64(f, PERF_DATA_FEAT_HOSTNAME);
        fb_u32(f, 8);
        fb_put(f, "box\0\0\0\0\0", 8);
        /* CLOCKID (the clock's resolution, ns) and CLOCK_DATA (version 1, CLOCK_MONOTONIC,
           the wall clock and the session clock at one moment): the .etl's start time */
        fb_u32(f, PERF_DATA_HEADER_FEATURE);
        fb_u16(f, 0);
        fb_u16(f, 8 + 8 + 8);
        fb_u64(f, PERF_DATA_FEAT_CLOCKID);
        fb_u64(f, 1);
        fb_u32(f, PERF_DATA_HEADER_FEATURE);
        fb_u16(f, 0);
        fb_u16(f, 8 + 8 + 24);
        fb_u64(f, PERF_DATA_FEAT_CLOCK_DATA);
        fb_u32(f, 1);
        fb_u32(f, 1);
        fb_u64(f, 1700000000000000000ull); /* 2023-11-14 22:13:20 UTC */
        fb_u64(f, 500);
        fb_u32(f, PERF_DATA_EVENT_UPDATE);
        fb_u16(f, 0);
        fb_u16(f, 8 + 16 + 8);
        fb_u64(f, 2); /* PERF_EVENT_UPDATE__NAME */
        fb_u64(f, 101);
        fb_put(f, "second\0\0", 8);
        fb_u32(f, PERF_DATA_EVENT_UPDATE);
        fb_u16(f, 0);
        fb_u16(f, 8 + 16 + 8);
        fb_u64(f, 3); /* PERF_EVENT_UPDATE__CPUS: "0-3", as perf writes a range */
        fb_u64(f, 100);
        fb_u16(f, 2); /* PERF_CPU_MAP__RANGE_CPUS */
        fb_u16(f, 0);
        fb_u16(f, 0);
        fb_u16(f, 3);
        fb_u32(f, PERF_DATA_FINISHED_INIT);
        fb_u16(f, 0);
        fb_u16(f, 8);
        fb_sample(f, 100, 0x1000);
        fb_sample(f, 101, 0x2000);
        uint8_t *copy = malloc(f->n);
        memcpy(copy, f->b, f->n);
        struct perf_data *pd = NULL;
        struct err_msg err;
        assert_int_equal(perf_data_open_mem(&pd, copy, f->n, &err), 0);
        struct counts c;
        count_records(pd, &c);
        assert_int_equal(c.rc, 0);
        assert_true(perf_data_info(pd)->is_pipe);
        assert_string_equal(perf_data_info(pd)->hostname, "box");
        assert_int_equal(perf_data_info(pd)->clockid, 1);
        assert_true(perf_data_info(pd)->has_clock_data);
        assert_int_equal(perf_data_info(pd)->clock_data_clockid, 1);
        assert_int_equal(perf_data_info(pd)->clock_wall_ns, 1700000000000000000ull);
        assert_int_equal(perf_data_info(pd)->clock_ref_ns, 500);
        struct etl_writer_config cfg;
        memset(&cfg, 0, sizeof(cfg));
        perf_data_conv_config(pd, &cfg);
        assert_int_equal(
                cfg.start_filetime,
                116444736000000000ll +
                        (int64_t)((1700000000000000000ull + cfg.start_timestamp - 500) / 100));
        assert_int_equal(perf_data_nr_events(pd), 2);
        assert_int_equal(perf_data_event(pd, 0)->attr_size, 64);
        assert_int_equal(perf_data_event(pd, 1)->attr_size, 136);
        assert_int_equal(samples_of(&c, "cpu-clock"), 1);
        assert_int_equal(samples_of(&c, "second"), 1);
        assert_int_equal(c.by_type[PERF_DATA_FINISHED_INIT], 1);
        assert_int_equal(c.by_type[PERF_DATA_EVENT_UPDATE], 2);
        /* a second pass finds the same */
        perf_data_rewind(pd);
        struct counts again;
        count_records(pd, &again);
        assert_int_equal(again.total, c.total);
        assert_int_equal(samples_of(&again, "second"), 1);
        perf_data_close(pd);
        free(copy);
        free(f);
}

/* A pipe-mode file of perf 4.9 (KDAB/perfparser's probe.data.stream): its tracepoint (a uprobe)
   named by no EVENT_UPDATE, only by the format of its id in the TRACING_DATA record that follows
   the attrs: SYSTEM:NAME, as perf names it (etwtop said "tracepoint 1329") */
static void test_pipe_tracepoint_named(void **state)
{
        (void)state;
        struct fb *f = fb_pipe_start(1329);
        uint32_t type = PERF_TYPE_TRACEPOINT;
        memcpy(f->b + FB_PIPE_ATTR_AT, &type, 4);
        /* the tracing data: magic, version, endianness, long size, page size, the header
           files, no ftrace formats, one system of one event */
        uint8_t td[512];
        uint32_t n = 0;
        static const char magic[] = "\027\010\104tracing0.6";
        memcpy(td, magic, sizeof(magic)); /* "0.6" and its NUL */
        n = sizeof(magic);
        td[n++] = 0; /* little-endian */
        td[n++] = 8; /* long size */
        uint32_t page = 4096, zero = 0, one = 1;
        uint64_t hlen = 4;
        memcpy(td + n, &page, 4), n += 4;
        memcpy(td + n, "header_page", 12), n += 12;
        memcpy(td + n, &hlen, 8), n += 8;
        memcpy(td + n, "abcd", 4), n += 4;
        memcpy(td + n, "header_event", 13), n += 13;
        memcpy(td + n, &hlen, 8), n += 8;
        memcpy(td + n, "abcd", 4), n += 4;
        memcpy(td + n, &zero, 4), n += 4; /* ftrace formats */
        memcpy(td + n, &one, 4), n += 4;  /* systems */
        memcpy(td + n, "probe_untitled1", 16), n += 16;
        memcpy(td + n, &one, 4), n += 4;
        static const char fmt[] = "name: main\nID: 1329\nformat:\n\tfield:unsigned short "
                                  "common_type;\toffset:0;\tsize:2;\tsigned:0;\n";
        uint64_t flen = sizeof(fmt) - 1;
        memcpy(td + n, &flen, 8), n += 8;
        memcpy(td + n, fmt, flen), n += (uint32_t)flen;
        uint32_t padded = (n + 7) & ~7u;
        memset(td + n, 0, padded - n);
        fb_u32(f, PERF_DATA_HEADER_TRACING_DATA);
        fb_u16(f, 0);
        fb_u16(f, 16);
        fb_u32(f, n);
        fb_u32(f, 0);
        fb_put(f, td, padded);
        fb_sample(f, 100, 0x1000);
        struct counts c;
        struct perf_data *pd = fb_open(f, &c);
        assert_int_equal(c.rc, 0);
        char name[128];
        assert_string_equal(perf_data_event_name(perf_data_event(pd, 0), name, sizeof(name)),
                            "probe_untitled1:main");
        assert_int_equal(samples_of(&c, "probe_untitled1:main"), 1);
        perf_data_close(pd);
        free(f);
}

/* ---- bad input ---- */

static void test_not_perf_data(void **state)
{
        (void)state;
        struct perf_data *pd = (struct perf_data *)1;
        struct err_msg err;
        static const uint8_t junk[32] = "not a perf.data file at all";
        assert_int_equal(perf_data_open_mem(&pd, junk, sizeof(junk), &err), -EINVAL);
        assert_null(pd);
        assert_non_null(strstr(err.msg, "magic"));
        assert_int_equal(perf_data_open_mem(&pd, junk, 4, &err), -EINVAL);
        uint8_t be[32] = "2ELIFREP";
        assert_int_equal(perf_data_open_mem(&pd, be, sizeof(be), &err), -EPROTONOSUPPORT);
        assert_non_null(strstr(err.msg, "big-endian"));
        assert_false(perf_data_is_perf_data(junk, sizeof(junk)));
        assert_true(perf_data_is_perf_data((const uint8_t *)"PERFILE2", 8));
}

/* A record whose size is below its header: the error names it and its offset. */
static void test_damaged_record(void **state)
{
        (void)state;
        struct fb *f = calloc(1, sizeof(*f));
        build_file(f, 112);
        uint32_t second = f->n - 2 * 48; /* the second sample */
        f->b[second + 6] = 4;
        f->b[second + 7] = 0;
        struct counts c;
        struct perf_data *pd = fb_open(f, &c);
        assert_int_equal(c.rc, -EBADMSG);
        assert_int_equal(c.total, 1);
        assert_int_equal(c.err.offset, second);
        assert_non_null(strstr(c.err.msg, "SAMPLE"));
        assert_non_null(strstr(c.err.msg, "below its header"));
        struct perf_data_record rec;
        struct err_msg err;
        assert_int_equal(perf_data_next(pd, &rec, &err), 0);
        perf_data_close(pd);
        free(f);
}

/* Every truncation of a real file (in steps, on an exact-size copy): the reader opens it or
   says why, reads the records up to the cut, and says the file is truncated when it is. */
static void test_truncations(void **state)
{
        (void)state;
        char *path = sample_path("perf.data.lost_samples-4.4");
        if (!path)
                skip();
        size_t size;
        uint8_t *whole = read_file(path, &size);
        free(path);
        struct perf_data *pd;
        struct err_msg err;
        assert_int_equal(perf_data_open_mem(&pd, whole, size, &err), 0);
        struct counts full;
        count_records(pd, &full);
        assert_int_equal(full.rc, 0);
        perf_data_close(pd);
        uint64_t data_end = 536 + 15016; /* perf report --header-only: data offset, size */
        for (size_t cut = 0; cut < size; cut += cut < 1024 ? 1 : 97) {
                uint8_t *copy = malloc(cut ? cut : 1);
                memcpy(copy, whole, cut);
                int rc = perf_data_open_mem(&pd, copy, cut, &err);
                if (rc < 0) {
                        assert_true(err.msg[0] != '\0');
                        free(copy);
                        continue;
                }
                struct counts c;
                count_records(pd, &c);
                if (cut < data_end) {
                        assert_int_equal(c.rc, -EBADMSG);
                        assert_true(c.err.msg[0] != '\0');
                        assert_true(c.err.offset <= cut);
                        assert_true(c.total < full.total);
                } else {
                        assert_int_equal(c.rc, 0);
                        assert_int_equal(c.total, full.total);
                }
                perf_data_close(pd);
                free(copy);
        }
        free(whole);
}

/* Damaged compressed data: the record is skipped with a warning naming its offset, and the
   records after it still come. */
static void test_damaged_compressed(void **state)
{
        (void)state;
        char *path = sample_path("sleep.compressed.pipe.data");
        if (!path)
                skip();
        size_t size;
        uint8_t *b = read_file(path, &size);
        free(path);
        struct perf_data *pd;
        struct err_msg err;
        assert_int_equal(perf_data_open_mem(&pd, b, size, &err), 0);
        struct perf_data_record rec;
        uint64_t comp = 0;
        while (perf_data_next(pd, &rec, &err) == 1)
                if (rec.type == PERF_DATA_COMPRESSED)
                        comp = rec.offset;
        perf_data_close(pd);
        assert_true(comp > 0);
        for (size_t i = comp + 8; i < comp + 64; i++)
                b[i] ^= 0x5a;
        assert_int_equal(perf_data_open_mem(&pd, b, size, &err), 0);
        struct counts c;
        count_records(pd, &c);
        assert_int_equal(c.rc, 0);
        assert_true(perf_data_nr_warnings(pd) > 0);
        assert_int_equal(perf_data_last_warning(pd)->offset, comp);
        assert_int_equal(c.by_type[PERF_DATA_FINISHED_INIT], 1);
        perf_data_close(pd);
        free(b);
}

/* ---- through the converter into .etl ---- */

/* perf script -F event's sample count of each event name of a file; false when perf cannot
   read it. */
static bool perf_script_counts(const char *path, char names[][64], uint64_t *nrs, uint32_t *nr,
                               uint32_t max)
{
        char cmd[1024];
        snprintf(cmd, sizeof(cmd), "perf script -F event -i '%s' 2>/dev/null", path);
        FILE *f = popen(cmd, "r");
        if (!f)
                return false;
        char line[512];
        *nr = 0;
        while (fgets(line, sizeof(line), f)) {
                /* "   cycles:pp: ": the name is what comes before the last colon */
                char name[64];
                const char *b = line + strspn(line, " \t");
                const char *e = strrchr(b, ':');
                if (!e || e == b || (size_t)(e - b) >= sizeof(name))
                        continue;
                memcpy(name, b, (size_t)(e - b));
                name[e - b] = '\0';
                uint32_t i = 0;
                while (i < *nr && strcmp(names[i], name) != 0)
                        i++;
                if (i == *nr && i < max) {
                        snprintf(names[i], 64, "%s", name);
                        nrs[i] = 0;
                        (*nr)++;
                }
                if (i < max)
                        nrs[i]++;
        }
        return pclose(f) == 0 && *nr > 0;
}

struct etl_counts {
        uint64_t nr_profile, nr_pmc, nr_stacks, nr_image_load;
        uint64_t by_source[128]; /* samples by KPROFILE_SOURCE */
        uint32_t cpu_speed_mhz;  /* the logfile header's */
        uint64_t nr_process;     /* Process events (Start, End, DCEnd) */
};

static void count_etl(const char *etl, struct etl_counts *c)
{
        memset(c, 0, sizeof(*c));
        struct etl_reader *r = NULL;
        struct etl_error err;
        if (etl_reader_open_file(&r, etl, &err) < 0)
                fail_msg("%s: %s", etl, err.msg);
        c->cpu_speed_mhz = etl_reader_logfile(r)->header.CpuSpeedInMHz;
        struct etl_record rec;
        while (etl_reader_next(r, &rec) == 1) {
                if (rec.hook_id == PERFINFO_LOG_TYPE_SAMPLED_PROFILE)
                        c->nr_profile++;
                if (rec.hook_id == PERFINFO_LOG_TYPE_PMC_INTERRUPT) {
                        c->nr_pmc++;
                        assert_true(rec.payload_size >= 14);
                        uint16_t source;
                        memcpy(&source, rec.payload + 12, 2);
                        if (source < 128)
                                c->by_source[source]++;
                }
                if (rec.hook_id == 0x1820) /* StackWalk/Stack */
                        c->nr_stacks++;
                if (rec.hook_id == 0x030A) /* Image/Load */
                        c->nr_image_load++;
                if (rec.hook_id == 0x0301 || rec.hook_id == 0x0302 || rec.hook_id == 0x0304)
                        c->nr_process++;
        }
        etl_reader_close(r);
}

/* Every shared file converted into .etl and read back: each file event's samples are the
   ETW samples of its source, as many as perf script counts (where perf reads the file) and as
   many as the reader counts. */
static void test_converted_sample_counts(void **state)
{
        (void)state;
        static const char *const files[] = {
                "perf.data.busy.0-3.4",         "perf.data.callgraph_and_branch-3.4",
                "perf.data.lost_samples-4.4",   "perf_b.data",
                "propeller_sample_1.perfdata1", "sleep.compressed.data",
                "sleep.compressed.pipe.data"};
        bool has_perf = system("perf version >/dev/null 2>&1") == 0;
        char dir[] = "/tmp/test-perf-data-XXXXXX";
        assert_non_null(mkdtemp(dir));
        uint32_t nr_done = 0, nr_against_perf = 0;
        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
                char *path = sample_path(files[i]);
                if (!path)
                        continue;
                char etl[512];
                snprintf(etl, sizeof(etl), "%s/%zu.etl", dir, i);
                struct perf_data_conv_stats st;
                struct etl_error err;
                int rc = perf_data_write_etl(path, etl, false, &st, &err);
                if (rc < 0)
                        fail_msg("%s: %s", files[i], err.msg);
                struct etl_counts ec;
                count_etl(etl, &ec);
                unlink(etl);
                assert_int_equal(ec.nr_profile + ec.nr_pmc, st.nr_samples);
                /* never 0, which readers divide by (dissect.etl, whatever the clock): the
                   CPUDESC's "@ 1.60GHz", else 1000 (perf_b.data, sleep.compressed: none) */
                if (strcmp(files[i], "perf.data.busy.0-3.4") == 0)
                        assert_int_equal(ec.cpu_speed_mhz, 1600);
                /* its one process, named by a COMM alone (no FORK): its Process rundown, which
                   readers of Process events need (it had none) */
                if (strcmp(files[i], "perf_b.data") == 0) {
                        assert_int_equal(ec.cpu_speed_mhz, 1000);
                        assert_int_equal(ec.nr_process, 1);
                }
                assert_true(ec.nr_process > 0);
                assert_true(ec.cpu_speed_mhz > 0);
                struct counts c;
                struct perf_data *pd = open_counted(files[i], &c);
                assert_int_equal(st.nr_samples, c.by_type[PERF_RECORD_SAMPLE]);
                /* THROTTLE and UNTHROTTLE counted (no ETW event stands for them): propeller's
                   926 of each, as perf report -D counts them */
                assert_int_equal(st.nr_throttle, c.by_type[PERF_RECORD_THROTTLE] +
                                                         c.by_type[PERF_RECORD_UNTHROTTLE]);
                if (strcmp(files[i], "propeller_sample_1.perfdata1") == 0)
                        assert_int_equal(st.nr_throttle, 2 * 926);
                char names[16][64];
                uint64_t nrs[16];
                uint32_t nr = 0;
                bool is_perf = has_perf && perf_script_counts(path, names, nrs, &nr, 16);
                for (uint32_t e = 0; e < perf_data_nr_events(pd) && e < 16; e++) {
                        struct perf_conv_event ev;
                        char ename[64], fname[64];
                        perf_data_conv_event_of(pd, e, &ev, ename, sizeof(ename));
                        perf_data_event_name(perf_data_event(pd, e), fname, sizeof(fname));
                        uint64_t etw = ev.kind == PERF_CONV_PROFILE
                                               ? ec.nr_profile
                                               : ec.by_source[ev.profile_source];
                        assert_int_equal(etw, st.nr_by_event[e]);
                        assert_int_equal(etw, samples_of(&c, fname));
                        bool is_named = etw == 0;
                        for (uint32_t k = 0; is_perf && k < nr; k++) {
                                if (strcmp(names[k], fname) != 0)
                                        continue;
                                is_named = true;
                                if (nrs[k] != etw)
                                        fail_msg("%s: %s: perf script %llu, etwtop %llu", files[i],
                                                 fname, (unsigned long long)nrs[k],
                                                 (unsigned long long)etw);
                        }
                        if (is_perf && !is_named)
                                fail_msg("%s: perf script has no event %s", files[i], fname);
                }
                if (is_perf)
                        nr_against_perf++;
                else
                        print_message("%s: perf cannot read it; compared with the reader only\n",
                                      files[i]);
                perf_data_close(pd);
                free(path);
                nr_done++;
        }
        rmdir(dir);
        if (!nr_done)
                skip();
        print_message("%u files converted, %u compared with perf script\n", nr_done,
                      nr_against_perf);
}

/* ETW's names for the hardware events, the perf event's own for the others. */
static void test_source_names(void **state)
{
        (void)state;
        struct counts c;
        struct perf_data *pd = open_counted("perf.data.busy.0-3.4", &c);
        if (!pd)
                skip();
        static const char *const want[][2] = {{"cycles", "TotalCycles"},
                                              {"instructions", "InstructionRetired"},
                                              {"cache-references", "LLCReference"},
                                              {"cache-misses", "CacheMisses"},
                                              {"branches", "BranchInstructions"},
                                              {"branch-misses", "BranchMispredictions"}};
        for (uint32_t e = 0; e < perf_data_nr_events(pd); e++) {
                struct perf_conv_event ev;
                char ename[64], fname[64];
                perf_data_conv_event_of(pd, e, &ev, ename, sizeof(ename));
                perf_data_event_name(perf_data_event(pd, e), fname, sizeof(fname));
                assert_int_equal(ev.kind, PERF_CONV_PMC_SAMPLE);
                bool found = false;
                for (size_t k = 0; k < 6; k++)
                        if (strcmp(want[k][0], fname) == 0) {
                                assert_string_equal(ename, want[k][1]);
                                found = true;
                        }
                assert_true(found);
        }
        perf_data_close(pd);
}

/* Call chains and LBR stacks: a StackWalk and an LBR event with each sample. */
static void test_converted_stacks_and_lbr(void **state)
{
        (void)state;
        char *path = sample_path("perf.data.callgraph_and_branch-3.4");
        if (!path)
                skip();
        char dir[] = "/tmp/test-perf-data-XXXXXX";
        assert_non_null(mkdtemp(dir));
        char etl[512];
        snprintf(etl, sizeof(etl), "%s/cg.etl", dir);
        struct perf_data_conv_stats st;
        struct etl_error err;
        assert_int_equal(perf_data_write_etl(path, etl, false, &st, &err), 0);
        struct etl_reader *r = NULL;
        assert_int_equal(etl_reader_open_file(&r, etl, &err), 0);
        struct etl_record rec;
        uint64_t nr_stacks = 0, nr_images = 0;
        while (etl_reader_next(r, &rec) == 1) {
                nr_stacks += rec.hook_id == 0x1820;
                nr_images += rec.hook_id == 0x030A;
        }
        etl_reader_close(r);
        unlink(etl);
        rmdir(dir);
        free(path);
        assert_int_equal(nr_stacks, 923);
        assert_int_equal(st.nr_samples, 923);
        assert_int_equal(st.conv.nr_bad, 0);
        assert_int_equal(nr_images, 1536); /* every MMAP an Image/Load */
}

/* etwtop --merge -o out.etl in.data writes the converted trace; --dump reads it back, and
   reads the perf.data file itself the same. */
static void test_merge_and_dump(void **state)
{
        (void)state;
        const char *etwtop = getenv("ETWTOP");
        char *path = sample_path("perf.data.lost_samples-4.4");
        if (!etwtop || !path) {
                free(path);
                skip();
        }
        char dir[] = "/tmp/test-perf-data-XXXXXX";
        assert_non_null(mkdtemp(dir));
        char cmd[2048];
        snprintf(cmd, sizeof(cmd),
                 "'%s' --merge -o '%s/m.etl' '%s' >/dev/null 2>&1 && "
                 "'%s' --dump --totals '%s/m.etl' > '%s/a.txt' 2>/dev/null && "
                 "'%s' --dump --totals '%s' > '%s/b.txt' 2>/dev/null && "
                 "grep -q '191 .*PerfInfo/PMCInterrupt' '%s/a.txt' && "
                 "grep -q '191 .*PerfInfo/PMCInterrupt' '%s/b.txt' && "
                 "grep -q 'Logger name: *perf.data of localhost, Linux 4.14.18, Intel(R) "
                 "Celeron(R) 2955U @ 1.40GHz; events: cycles:pp (period 20003)' '%s/b.txt'",
                 etwtop, dir, path, etwtop, dir, dir, etwtop, path, dir, dir, dir, dir);
        int rc = system(cmd);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        assert_int_equal(system(cmd), 0);
        free(path);
        assert_int_equal(rc, 0);
}

/* sched tracepoints (their formats from TRACING_DATA) as CSwitch and ReadyThread: a recording
   of this machine's scheduler by perf (file and pipe mode), as many of each as perf script
   counts. Skipped where perf cannot record tracepoints. */
static void check_sched_recording(const char *dir, const char *data)
{
        char etl[512];
        char names[16][64];
        uint64_t nrs[16];
        uint32_t nr = 0;
        uint64_t nr_switch = 0, nr_waking = 0, nr_wakeup = 0;
        if (perf_script_counts(data, names, nrs, &nr, 16)) {
                for (uint32_t k = 0; k < nr; k++) {
                        if (strcmp(names[k], "sched:sched_switch") == 0)
                                nr_switch = nrs[k];
                        if (strcmp(names[k], "sched:sched_waking") == 0)
                                nr_waking = nrs[k];
                        if (strcmp(names[k], "sched:sched_wakeup") == 0)
                                nr_wakeup = nrs[k];
                }
        } else {
                /* Debian's perf 6.1 sometimes aborts reading its own recording (an assertion
                   in util/build-id.c): the reader's counts then */
                print_message("%s: perf script failed; counted by the reader\n", data);
                struct perf_data *pd = NULL;
                struct err_msg perr;
                assert_int_equal(perf_data_open_file(&pd, data, &perr), 0);
                struct counts c;
                count_records(pd, &c);
                assert_int_equal(c.rc, 0);
                nr_switch = samples_of(&c, "sched:sched_switch");
                nr_waking = samples_of(&c, "sched:sched_waking");
                nr_wakeup = samples_of(&c, "sched:sched_wakeup");
                perf_data_close(pd);
        }
        assert_true(nr_switch > 0);
        snprintf(etl, sizeof(etl), "%s/sched.etl", dir);
        struct etl_error err;
        struct perf_data_conv_stats st;
        if (perf_data_write_etl(data, etl, true, &st, &err) < 0)
                fail_msg("%s: %s", data, err.msg);
        struct etl_reader *r = NULL;
        assert_int_equal(etl_reader_open_file(&r, etl, &err), 0);
        struct etl_record rec;
        uint64_t nr_cswitch = 0, nr_ready = 0;
        while (etl_reader_next(r, &rec) == 1) {
                nr_cswitch += rec.hook_id == 0x0524;
                nr_ready += rec.hook_id == 0x0532;
        }
        etl_reader_close(r);
        unlink(etl);
        assert_int_equal(nr_cswitch, nr_switch);
        /* one a wake-up: sched_waking's, sched_wakeup's in a file without them */
        assert_int_equal(nr_ready, nr_waking ? nr_waking : nr_wakeup);
}

static void test_sched_tracepoints(void **state)
{
        (void)state;
        char dir[] = "/tmp/test-perf-data-XXXXXX";
        assert_non_null(mkdtemp(dir));
        char cmd[2048], data[256], pipe_data[256], both[256], wakeup[256];
        snprintf(data, sizeof(data), "%s/sched.data", dir);
        snprintf(pipe_data, sizeof(pipe_data), "%s/sched.pipe.data", dir);
        snprintf(both, sizeof(both), "%s/both.data", dir);
        snprintf(wakeup, sizeof(wakeup), "%s/wakeup.data", dir);
        snprintf(cmd, sizeof(cmd),
                 "perf record -B -e sched:sched_switch -e sched:sched_waking -a -o '%s' -- "
                 "sleep 0.2 >/dev/null 2>&1 && "
                 "perf record -B -e sched:sched_switch -e sched:sched_waking -a -o - -- "
                 "sleep 0.2 2>/dev/null > '%s'",
                 data, pipe_data);
        if (system(cmd) != 0) {
                snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
                assert_int_equal(system(cmd), 0);
                print_message("skipped: perf cannot record sched tracepoints here\n");
                skip();
        }
        check_sched_recording(dir, data);
        check_sched_recording(dir, pipe_data);
        /* sched_waking and sched_wakeup both (perf record -e 'sched:*'): one ReadyThread a
           wake-up, not two; sched_wakeup alone: its */
        snprintf(cmd, sizeof(cmd),
                 "perf record -B -e sched:sched_switch -e sched:sched_waking "
                 "-e sched:sched_wakeup -a -o '%s' -- sleep 0.2 >/dev/null 2>&1 && "
                 "perf record -B -e sched:sched_switch -e sched:sched_wakeup -a -o '%s' -- "
                 "sleep 0.2 >/dev/null 2>&1",
                 both, wakeup);
        assert_int_equal(system(cmd), 0);
        check_sched_recording(dir, both);
        check_sched_recording(dir, wakeup);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        assert_int_equal(system(cmd), 0);
}

/* LBR stacks keep what branch_sample_type selected as the LBR event's Options (the
   EVNTRACE_LBR_* flags that would have recorded them): call-stack mode, the types, and the
   privilege levels from the PLM bits or the event's exclude_* bits. */
static void test_lbr_options(void **state)
{
        (void)state;
        static const struct {
                uint64_t bst;
                uint64_t flags; /* attr flags word: exclude_kernel is bit 5 */
                uint32_t options;
        } cases[] = {
                {PERF_SAMPLE_BRANCH_ANY, 0, 0},
                {PERF_SAMPLE_BRANCH_ANY, 1u << 5, EVNTRACE_LBR_FILTER_KERNEL},
                {PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_CALL_STACK, 0,
                 EVNTRACE_LBR_FILTER_KERNEL | EVNTRACE_LBR_CALLSTACK_ENABLE},
                {PERF_SAMPLE_BRANCH_KERNEL | PERF_SAMPLE_BRANCH_USER |
                         PERF_SAMPLE_BRANCH_ANY_RETURN,
                 0,
                 EVNTRACE_LBR_FILTER_JCC | EVNTRACE_LBR_FILTER_NEAR_REL_CALL |
                         EVNTRACE_LBR_FILTER_NEAR_IND_CALL | EVNTRACE_LBR_FILTER_NEAR_IND_JMP |
                         EVNTRACE_LBR_FILTER_NEAR_REL_JMP},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct fb *f = calloc(1, sizeof(*f));
                build_file(f, 112);
                uint32_t attr = 120; /* the first attr, after the header and the ids */
                uint64_t st, flags;
                memcpy(&st, f->b + attr + 24, 8);
                st |= PERF_SAMPLE_BRANCH_STACK;
                memcpy(f->b + attr + 24, &st, 8);
                memcpy(&flags, f->b + attr + 40, 8);
                flags |= cases[i].flags;
                memcpy(f->b + attr + 40, &flags, 8);
                memcpy(f->b + attr + 72, &cases[i].bst, 8);
                struct perf_data *pd = NULL;
                struct err_msg err;
                assert_int_equal(perf_data_open_mem(&pd, f->b, f->n, &err), 0);
                struct perf_conv_event ev;
                char name[64];
                perf_data_conv_event_of(pd, 0, &ev, name, sizeof(name));
                assert_true(ev.has_lbr);
                assert_int_equal(ev.lbr_options, cases[i].options);
                /* no callchain: no stacks from the LBR (perf record -b's call-stack filter) */
                assert_false(ev.is_lbr_call_graph);
                perf_data_close(pd);
                /* with a callchain, a call-stack LBR is perf record --call-graph lbr's */
                st |= PERF_SAMPLE_CALLCHAIN;
                memcpy(f->b + attr + 24, &st, 8);
                assert_int_equal(perf_data_open_mem(&pd, f->b, f->n, &err), 0);
                perf_data_conv_event_of(pd, 0, &ev, name, sizeof(name));
                assert_int_equal(ev.is_lbr_call_graph,
                                 (cases[i].bst & PERF_SAMPLE_BRANCH_CALL_STACK) != 0);
                perf_data_close(pd);
                free(f);
        }
        struct counts c;
        struct perf_data *pd = open_counted("propeller_sample_1.perfdata1", &c);
        if (!pd)
                return;
        struct perf_conv_event ev;
        char name[64];
        perf_data_conv_event_of(pd, 0, &ev, name, sizeof(name));
        assert_string_equal(name, "TotalCycles");
        assert_int_equal(ev.lbr_options, EVNTRACE_LBR_FILTER_KERNEL); /* cycles:u */
        perf_data_close(pd);
}

/* Writes n bytes to a new file dir/name; returns its path (static). */
static const char *write_temp(const char *dir, const char *name, const void *b, size_t n)
{
        static char path[512];
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(b, 1, n, f), n);
        fclose(f);
        return path;
}

/* A file built by hand (f) written as NAME.data in a folder of its own, converted to NAME.etl
   beside it: the paths, for converted_remove. */
struct converted {
        char dir[32], data[512], etl[512];
};

/* Converts f (see struct converted) and opens the .etl; the test fails if either fails. */
static struct etl_reader *convert_fb(const struct fb *f, const char *name, struct converted *cv)
{
        snprintf(cv->dir, sizeof(cv->dir), "/tmp/test-perf-data-XXXXXX");
        assert_non_null(mkdtemp(cv->dir));
        char file[64];
        snprintf(file, sizeof(file), "%s.data", name);
        snprintf(cv->data, sizeof(cv->data), "%s", write_temp(cv->dir, file, f->b, f->n));
        snprintf(cv->etl, sizeof(cv->etl), "%s/%s.etl", cv->dir, name);
        struct perf_data_conv_stats cst;
        struct etl_error err;
        assert_int_equal(perf_data_write_etl(cv->data, cv->etl, false, &cst, &err), 0);
        struct etl_reader *r = NULL;
        assert_int_equal(etl_reader_open_file(&r, cv->etl, &err), 0);
        return r;
}

static void converted_remove(const struct converted *cv)
{
        unlink(cv->etl);
        unlink(cv->data);
        rmdir(cv->dir);
}

/* A recording perf record never finished (killed: its header's data size still 0): read to the
   file's end, all of its samples, and said so (the reader's message starts with
   ETW_READ_WHOLE, not as a conversion stopped at damage), as perf warns of it */
static void test_unfinished_recording(void **state)
{
        (void)state;
        struct fb *f = calloc(1, sizeof(*f));
        build_file(f, 112);
        fb_u64_at(f, 48, 0); /* the data section's size, not rewritten at the end */
        char dir[] = "/tmp/test-perf-unfinished-XXXXXX";
        assert_non_null(mkdtemp(dir));
        const char *path = write_temp(dir, "unfinished.data", f->b, f->n);
        char data[512];
        snprintf(data, sizeof(data), "%s", path);
        char etl[512];
        snprintf(etl, sizeof(etl), "%s/unfinished.etl", dir);
        struct perf_data_conv_stats st;
        struct etl_error err;
        assert_int_equal(perf_data_write_etl(data, etl, false, &st, &err), 0);
        assert_int_equal(st.nr_samples, 3);
        assert_int_equal(strncmp(err.msg, ETW_READ_WHOLE, strlen(ETW_READ_WHOLE)), 0);
        assert_non_null(strstr(err.msg, "data size 0"));
        assert_int_equal(err.offset, 48);
        /* a finished one: nothing said */
        build_file(f, 112);
        path = write_temp(dir, "finished.data", f->b, f->n);
        snprintf(data, sizeof(data), "%s", path);
        assert_int_equal(perf_data_write_etl(data, etl, true, &st, &err), 0);
        assert_string_equal(err.msg, "");
        unlink(etl);
        unlink(data);
        snprintf(data, sizeof(data), "%s/unfinished.data", dir);
        unlink(data);
        assert_int_equal(rmdir(dir), 0);
        free(f);
}

/* The sample_type and read_format of fb_group_start's events. */
#define FB_GROUP_ST                                                                                \
        (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |            \
         PERF_SAMPLE_READ)
#define FB_GROUP_RF (PERF_FORMAT_GROUP | PERF_FORMAT_ID)

/* A pipe-mode file whose one attr is a hardware cycles event that reads its group at each
   sample (PERF_SAMPLE_READ, read_format GROUP|ID). */
static struct fb *fb_group_start(void)
{
        struct fb *f = fb_pipe_start(PERF_COUNT_HW_CPU_CYCLES);
        uint32_t type = PERF_TYPE_HARDWARE;
        uint64_t st = FB_GROUP_ST, rf = FB_GROUP_RF;
        memcpy(f->b + FB_PIPE_ATTR_AT, &type, 4);
        memcpy(f->b + FB_PIPE_ATTR_AT + 24, &st, 8);
        memcpy(f->b + FB_PIPE_ATTR_AT + 32, &rf, 8);
        return f;
}

/* PERF_SAMPLE_READ of a group (read_format GROUP|ID): the leader's sample carries the other
   members' counts as the PMCInterrupt's counters. */
static void test_group_read(void **state)
{
        (void)state;
        struct fb *f = fb_group_start();
        for (uint32_t i = 0; i < 2; i++) {
                fb_u32(f, PERF_RECORD_SAMPLE);
                fb_u16(f, PERF_RECORD_MISC_USER);
                fb_u16(f, 8 + 4 * 8 + 8 + 3 * 16);
                fb_u64(f, 100);
                fb_u64(f, 0x401000 + i);
                fb_u32(f, 42);
                fb_u32(f, 42);
                fb_u64(f, 1000000 + i * 1000);
                fb_u64(f, 3); /* nr */
                fb_u64(f, 20000 * (i + 1));
                fb_u64(f, 100);
                fb_u64(f, 7000 * (i + 1));
                fb_u64(f, 101);
                fb_u64(f, 900 * (i + 1));
                fb_u64(f, 102);
        }
        struct converted cv;
        struct etl_reader *r = convert_fb(f, "group", &cv);
        struct etl_record rec;
        uint32_t nr = 0;
        while (etl_reader_next(r, &rec) == 1) {
                if (rec.hook_id != PERFINFO_LOG_TYPE_PMC_INTERRUPT)
                        continue;
                uint16_t source;
                memcpy(&source, rec.payload + 12, 2);
                assert_int_equal(source, 19); /* TotalCycles */
                assert_int_equal(rec.nr_ext, 1);
                assert_int_equal(rec.ext[0].type, EVENT_HEADER_EXT_TYPE_PMC_COUNTERS);
                assert_int_equal(rec.ext[0].size_bytes, 16);
                uint64_t v[2];
                memcpy(v, rec.ext[0].data, 16);
                assert_int_equal(v[0], 7000 * (nr + 1));
                assert_int_equal(v[1], 900 * (nr + 1));
                nr++;
        }
        etl_reader_close(r);
        assert_int_equal(nr, 2);
        converted_remove(&cv);
        free(f);
}

/* A leader-sampled group (perf record -e '{cycles,instructions,page-faults}:S'): cycles samples,
   its members count and are read at each of its samples. Each member is a source of its own,
   sampled where the leader was, at each sample where its count moved since its last read (by
   the counter's id), as perf script and perf report deliver them; the header says the members
   are read at the leader's samples. */
static void test_leader_sampled_group(void **state)
{
        (void)state;
        struct fb *f = fb_group_start();
        /* the members: instructions and page-faults, no period, their group read */
        static const struct {
                uint32_t type;
                uint64_t config;
        } members[] = {{PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
                       {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS}};
        for (uint32_t m = 0; m < 2; m++) {
                fb_u32(f, PERF_DATA_HEADER_ATTR);
                fb_u16(f, 0);
                fb_u16(f, 8 + 112 + 8);
                uint32_t at = f->n;
                fb_attr_of(f, 112, members[m].type, members[m].config);
                uint64_t zero = 0;
                memcpy(f->b + at + 16, &zero, 8);
                uint64_t st = FB_GROUP_ST, rf = FB_GROUP_RF;
                memcpy(f->b + at + 24, &st, 8);
                memcpy(f->b + at + 32, &rf, 8);
                fb_u64(f, 101 + m);
        }
        /* cycles, instructions, page-faults at each sample: instructions stays at the third,
           page-faults at the second; on a second CPU (ids 110-112) each counts from 0 */
        static const uint64_t values[][4] = {{100, 20000, 7000, 3},
                                             {100, 40000, 14000, 3},
                                             {100, 60000, 14000, 5},
                                             {110, 20000, 9000, 1}};
        for (uint32_t i = 0; i < 4; i++) {
                uint64_t id = values[i][0];
                fb_u32(f, PERF_RECORD_SAMPLE);
                fb_u16(f, PERF_RECORD_MISC_USER);
                fb_u16(f, 8 + 4 * 8 + 8 + 3 * 16);
                fb_u64(f, 100); /* the leader's event (its first id) */
                fb_u64(f, 0x401000 + i);
                fb_u32(f, 42);
                fb_u32(f, 42);
                fb_u64(f, 1000000 + i * 1000);
                fb_u64(f, 3); /* nr */
                for (uint32_t k = 0; k < 3; k++) {
                        fb_u64(f, values[i][1 + k]);
                        fb_u64(f, id + k);
                }
        }
        struct converted cv;
        struct etl_reader *r = convert_fb(f, "leader", &cv);
        struct etl_record rec;
        char got[256] = "";
        size_t len = 0;
        while (etl_reader_next(r, &rec) == 1) {
                if (rec.hook_id != PERFINFO_LOG_TYPE_PMC_INTERRUPT)
                        continue;
                uint64_t ip;
                uint16_t source;
                memcpy(&ip, rec.payload, 8);
                memcpy(&source, rec.payload + 12, 2);
                len += (size_t)snprintf(got + len, sizeof(got) - len, "%u@%llx ", source,
                                        (unsigned long long)(ip & 0xf));
        }
        etl_reader_close(r);
        /* TotalCycles 19, InstructionRetired 26, page-faults its own (64 + its index 2) */
        assert_string_equal(got, "19@0 26@0 66@0 19@1 26@1 19@2 66@2 19@3 26@3 66@3 ");
        struct counts c;
        struct perf_data *pd = fb_open(f, &c); /* a pipe's attrs are its records: all read */
        char origin[512];
        perf_data_origin(pd, origin, sizeof(origin));
        assert_non_null(strstr(origin, "events: cycles (period 10000), instructions (read at "
                                       "cycles's samples), page-faults (read at cycles's "
                                       "samples)"));
        perf_data_close(pd);
        converted_remove(&cv);
        free(f);
}

/* A pipe's BUILD_ID record of a kernel-mode path (pid -1): 20 bytes id_byte, the id's size
   where perf 5.x and later write it (0: none, perf 4.x's). */
static void fb_kernel_build_id(struct fb *f, const char *path, uint8_t id_byte, uint8_t size_byte)
{
        uint8_t rec[128] = {0};
        uint16_t size = (uint16_t)(36 + ((strlen(path) + 8) & ~7u));
        uint32_t type = PERF_DATA_HEADER_BUILD_ID, pid = UINT32_MAX;
        uint16_t misc = PERF_RECORD_MISC_KERNEL;
        memcpy(rec, &type, 4);
        memcpy(rec + 4, &misc, 2);
        memcpy(rec + 6, &size, 2);
        memcpy(rec + 8, &pid, 4);
        memset(rec + 12, id_byte, 20);
        rec[32] = size_byte;
        memcpy(rec + 36, path, strlen(path));
        fb_put(f, rec, size);
}

/* A recorded 64-bit kernel's map said to start at a 32-bit address (perf 3.8's, an address
   rewritten: quipper's perf.data.busy.1-3.8) starts at its symbol (_text), so that an
   anonymous user address below is no kernel's; its build-id is the one perf record gave the
   vmlinux it found (perf 6.6: "/lib/modules/6.6.7-arch1-1/build/vmlinux", not
   "[kernel.kallsyms]"), not a module's; and a sample of a thread no COMM or FORK
   named (a process started while perf synthesized the others) is its own pid's: a
   Thread/DCStart from the sample's pid and tid comes before it. */
static void test_kernel_map_and_unnamed_thread(void **state)
{
        (void)state;
        struct fb *f = fb_pipe_start(PERF_COUNT_SW_CPU_CLOCK);
        /* the kernel's build-id under the vmlinux perf record found, after a module's */
        static const char *const bid_paths[] = {"/lib/modules/6.6.7/kernel/fs/ext4/ext4.ko.zst",
                                                "/lib/modules/6.6.7/build/vmlinux"};
        for (uint32_t i = 0; i < 2; i++)
                fb_kernel_build_id(f, bid_paths[i], (uint8_t)(0x40 + i), 0);
        static const char kname[] = "[kernel.kallsyms]_text";
        const uint16_t name_room = (sizeof(kname) + 7) & ~7u;
        fb_u32(f, PERF_RECORD_MMAP);
        fb_u16(f, PERF_RECORD_MISC_KERNEL);
        fb_u16(f, (uint16_t)(8 + 8 + 24 + name_room + 24));
        fb_u32(f, UINT32_MAX);
        fb_u32(f, 0);
        fb_u64(f, 0x35c00000);            /* start */
        fb_u64(f, 0xffffffff8a3fffffull); /* len: to the modules' start */
        fb_u64(f, 0xffffffff81000000ull); /* pgoff: _text */
        uint8_t name[64] = {0};
        memcpy(name, kname, sizeof(kname));
        fb_put(f, name, name_room);
        fb_u32(f, UINT32_MAX); /* sample_id: pid, tid, time, identifier */
        fb_u32(f, 0);
        fb_u64(f, 900);
        fb_u64(f, 100);
        fb_sample(f, 100, 0x1000); /* pid 42, tid 43: never named */
        fb_sample(f, 100, 0x2000);
        struct converted cv;
        struct etl_reader *r = convert_fb(f, "kmap", &cv);
        struct etl_record rec;
        uint32_t nr_kernel = 0, nr_kernel_ids = 0, nr_thread = 0, nr_samples = 0;
        while (etl_reader_next(r, &rec) == 1) {
                if (rec.hook_id == WMI_LOG_TYPE_PROCESS_LOAD_IMAGE ||
                    rec.hook_id == WMI_LOG_TYPE_IMAGE_DC_START) {
                        uint64_t base, size;
                        memcpy(&base, rec.payload, 8);
                        memcpy(&size, rec.payload + 8, 8);
                        assert_int_equal(base, 0xffffffff81000000ull);
                        assert_int_equal(base + size, 0x35c00000 + 0xffffffff8a3fffffull);
                        nr_kernel++;
                }
                if (rec.hook_id == WMI_LOG_TYPE_THREAD_DC_START) {
                        uint32_t pid, tid;
                        memcpy(&pid, rec.payload, 4);
                        memcpy(&tid, rec.payload + 4, 4);
                        assert_int_equal(pid, 42);
                        assert_int_equal(tid, 43);
                        assert_int_equal(nr_samples, 0); /* before the first sample */
                        nr_thread++;
                }
                nr_samples += rec.hook_id == PERFINFO_LOG_TYPE_SAMPLED_PROFILE;
                uint16_t id = 0;
                if (rec.size_bytes >= 0x30)
                        memcpy(&id, rec.data + 0x28, 2); /* the EVENT_DESCRIPTOR's Id */
                if (rec.guid && memcmp(rec.guid, &etwtop_provider_guid, 16) == 0 &&
                    id == ETWTOP_EVENT_IMAGE_IDENTITY && rec.payload_size > 52 &&
                    strcmp((const char *)rec.payload + 52, "[kernel.kallsyms]") == 0) {
                        static const uint8_t want[20] = {0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41,
                                                         0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41,
                                                         0x41, 0x41, 0x41, 0x41, 0x41, 0x41};
                        assert_int_equal(rec.payload[28], 20);
                        assert_memory_equal(rec.payload + 32, want, 20);
                        nr_kernel_ids++;
                }
        }
        etl_reader_close(r);
        assert_true(nr_kernel_ids >= 1); /* its load and its rundown */
        assert_int_equal(nr_kernel, 1);
        assert_int_equal(nr_thread, 1);
        assert_int_equal(nr_samples, 2);
        converted_remove(&cv);
        free(f);
}

/* An MMAP2 of process pid (the kernel's: UINT32_MAX) with misc, at time 900: with a build-id of
   20 bytes id_byte where misc has PERF_RECORD_MISC_MMAP_BUILD_ID (perf record --buildid-mmap's
   form), else device and inode 0; protection bits prot, MAP_PRIVATE. */
static void fb_mmap2(struct fb *f, uint32_t pid, uint16_t misc, const char *path, uint64_t start,
                     uint64_t len, uint64_t pgoff, uint8_t id_byte, uint32_t prot)
{
        const uint16_t name_room = (uint16_t)((strlen(path) + 8) & ~7u);
        fb_u32(f, PERF_RECORD_MMAP2);
        fb_u16(f, misc);
        fb_u16(f, (uint16_t)(8 + 8 + 24 + 24 + 8 + name_room + 24));
        fb_u32(f, pid);
        fb_u32(f, pid == UINT32_MAX ? 0 : pid);
        fb_u64(f, start);
        fb_u64(f, len);
        fb_u64(f, pgoff);
        uint8_t bid[24] = {0};
        if (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
                bid[0] = 20;
                memset(bid + 4, id_byte, 20);
        }
        fb_put(f, bid, 24);
        fb_u32(f, prot);
        fb_u32(f, 2); /* flags: MAP_PRIVATE */
        uint8_t name[128] = {0};
        memcpy(name, path, strlen(path));
        fb_put(f, name, name_room);
        fb_u32(f, pid); /* sample_id: pid, tid, time, identifier */
        fb_u32(f, pid == UINT32_MAX ? 0 : pid);
        fb_u64(f, 900);
        fb_u64(f, 100);
}

/* A kernel map (pid -1) with a build-id of 20 bytes id_byte. */
static void fb_kernel_mmap2(struct fb *f, const char *path, uint64_t start, uint64_t len,
                            uint64_t pgoff, uint8_t id_byte, uint32_t prot)
{
        fb_mmap2(f, UINT32_MAX, PERF_RECORD_MISC_KERNEL | PERF_RECORD_MISC_MMAP_BUILD_ID, path,
                 start, len, pgoff, id_byte, prot);
}

/* perf 6.17 with build-ids in its maps: the kernel's and its modules' maps synthesized with no
   protection bits ("---p") are code all the same; and every module's map with one build-id (not
   the modules', which the BUILD_ID feature lists apart): a module takes the feature's id of its
   path, another of that id none (it would be the first module's), so that each module is its
   own, as perf report shows them. */
static void test_buildid_mmap_kernel_maps(void **state)
{
        (void)state;
        struct fb *f = fb_pipe_start(PERF_COUNT_SW_CPU_CLOCK);
        uint64_t flags;
        memcpy(&flags, f->b + FB_PIPE_ATTR_AT + 40, 8);
        flags |= 1ull << 34; /* build_id: its maps carry build-ids */
        memcpy(f->b + FB_PIPE_ATTR_AT + 40, &flags, 8);
        static const char nvidia[] = "/lib/modules/6.17.0/kernel/nvidia-580-open/nvidia.ko";
        fb_kernel_build_id(f, nvidia, 0x52, 20); /* perf 5.x and later: the id's size */
        fb_kernel_mmap2(f, "[kernel.kallsyms]_text", 0xffffffffb7000000ull, 0x2a8a580,
                        0xffffffffb7000000ull, 0x33, 0);
        fb_kernel_mmap2(f, "[hid_generic]", 0xffffffffc0600000ull, 0x1000, 0, 0x31, 0);
        fb_kernel_mmap2(f, nvidia, 0xffffffffc0c00000ull, 0x3de000, 0, 0x31, 0);
        fb_kernel_mmap2(f, "[snd]", 0xffffffffc1000000ull, 0x1000, 0, 0x31, 0);
        fb_sample(f, 100, 0xffffffffc0c01000ull);
        struct converted cv;
        struct etl_reader *r = convert_fb(f, "bidmaps", &cv);
        struct etl_record rec;
        uint32_t nr_loads = 0, nr_ids = 0;
        while (etl_reader_next(r, &rec) == 1) {
                nr_loads += rec.hook_id == WMI_LOG_TYPE_PROCESS_LOAD_IMAGE;
                uint16_t id = 0;
                if (rec.size_bytes >= 0x30)
                        memcpy(&id, rec.data + 0x28, 2); /* the EVENT_DESCRIPTOR's Id */
                if (!rec.guid || memcmp(rec.guid, &etwtop_provider_guid, 16) != 0 ||
                    id != ETWTOP_EVENT_IMAGE_IDENTITY || rec.payload_size <= 52)
                        continue;
                const char *path = (const char *)rec.payload + 52;
                uint8_t want = strcmp(path, "[kernel.kallsyms]") == 0 ? 0x33
                               : strcmp(path, "[hid_generic]") == 0   ? 0x31
                               : strcmp(path, nvidia) == 0            ? 0x52
                                                                      : 0;
                if (strcmp(path, "[snd]") == 0) {
                        assert_int_equal(rec.payload[28], 0);
                } else {
                        assert_int_not_equal(want, 0);
                        assert_int_equal(rec.payload[28], 20);
                        for (uint32_t i = 0; i < 20; i++)
                                assert_int_equal(rec.payload[32 + i], want);
                }
                nr_ids++;
        }
        etl_reader_close(r);
        assert_int_equal(nr_loads, 4); /* no map left out for its protection bits */
        assert_true(nr_ids >= 3);      /* each with a build-id said (and at the rundown) */
        converted_remove(&cv);
        free(f);
}

/* A [vdso] map with no protection bits ("---p", a Linux 5.x kernel's MMAP2 of it): code all
   the same, as perf reads any map the kernel does not mark as data (MISC_MMAP_DATA); a map
   marked as data is none. */
static void test_map_without_prot(void **state)
{
        (void)state;
        struct fb *f = fb_pipe_start(PERF_COUNT_SW_CPU_CLOCK);
        static const struct {
                const char *path;
                uint64_t start;
                uint16_t misc;
        } maps[] = {{"[vdso]", 0x7ffdd3de9000ull, PERF_RECORD_MISC_USER},
                    {"/tmp/data.bin", 0x7ffdd3e00000ull,
                     PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_DATA}};
        for (uint32_t i = 0; i < 2; i++)
                fb_mmap2(f, 42, maps[i].misc, maps[i].path, maps[i].start, 0x2000, maps[i].start, 0,
                         0);
        fb_sample(f, 100, 0x7ffdd3de993c);
        struct converted cv;
        struct etl_reader *r = convert_fb(f, "noprot", &cv);
        struct etl_record rec;
        uint32_t nr_vdso = 0, nr_data = 0;
        while (etl_reader_next(r, &rec) == 1) {
                if (rec.hook_id != WMI_LOG_TYPE_PROCESS_LOAD_IMAGE)
                        continue;
                uint64_t base;
                memcpy(&base, rec.payload, 8);
                nr_vdso += base == maps[0].start;
                nr_data += base == maps[1].start;
        }
        etl_reader_close(r);
        assert_int_equal(nr_vdso, 1);
        assert_int_equal(nr_data, 0);
        converted_remove(&cv);
        free(f);
}

/* A record of type, size bytes in all (its body zeros). */
static void fb_record(struct fb *f, uint32_t type, uint16_t size)
{
        fb_u32(f, type);
        fb_u16(f, 0);
        fb_u16(f, size);
        for (uint32_t i = 8; i < size; i += 8)
                fb_u64(f, 0);
}

/* What a perf.data holds that no event stands for is said in the .etl, once per record type
   (RecordsNotShown): AUX data, perf stat's counts, throttling, a type past those known; perf's
   own bookkeeping (rounds) is not. */
static void test_records_not_shown(void **state)
{
        (void)state;
        struct fb *f = fb_pipe_start(PERF_COUNT_SW_CPU_CLOCK);
        fb_sample(f, 100, 0x1000);
        fb_record(f, PERF_RECORD_AUX, 8 + 3 * 8);
        fb_record(f, PERF_RECORD_AUX, 8 + 3 * 8);
        fb_record(f, PERF_DATA_FINISHED_ROUND, 8);
        fb_record(f, PERF_DATA_STAT, 8 + 8 + 8 + 3 * 8);
        fb_record(f, PERF_RECORD_THROTTLE, 8 + 3 * 8);
        fb_record(f, 99, 16);
        fb_record(f, 99, 16);
        fb_record(f, 99, 16);
        fb_sample(f, 555, 0x2000); /* an id no attr has: the one event's (as perf takes it) */
        fb_sample(f, 100, 0x3000);
        struct converted cv;
        struct etl_reader *r = convert_fb(f, "not_shown", &cv);
        struct {
                uint32_t type;
                uint64_t count;
                const char *name;
                bool is_seen;
        } want[] = {{PERF_RECORD_THROTTLE, 1, "THROTTLE", false},
                    {PERF_RECORD_AUX, 2, "AUX", false},
                    {PERF_DATA_STAT, 1, "STAT", false},
                    {UINT32_MAX, 3, "UNKNOWN", false}};
        const uint32_t nr_want = sizeof(want) / sizeof(want[0]);
        struct etl_record rec;
        uint32_t nr = 0, nr_samples = 0;
        while (etl_reader_next(r, &rec) == 1) {
                if (rec.hook_id == PERFINFO_LOG_TYPE_SAMPLED_PROFILE)
                        nr_samples++;
                uint16_t id = 0;
                if (rec.size_bytes >= 0x30)
                        memcpy(&id, rec.data + 0x28, 2); /* the EVENT_DESCRIPTOR's Id */
                if (!rec.guid || memcmp(rec.guid, &etwtop_provider_guid, 16) != 0 ||
                    id != ETWTOP_EVENT_RECORDS_NOT_SHOWN)
                        continue;
                assert_true(rec.payload_size >= 17);
                uint32_t type;
                uint64_t count;
                memcpy(&type, rec.payload, 4);
                memcpy(&count, rec.payload + 8, 8);
                const char *name = (const char *)rec.payload + 16;
                assert_non_null(memchr(name, 0, rec.payload_size - 16));
                uint32_t i = 0;
                while (i < nr_want && want[i].type != type)
                        i++;
                assert_true(i < nr_want);
                assert_false(want[i].is_seen);
                want[i].is_seen = true;
                assert_int_equal(count, want[i].count);
                assert_string_equal(name, want[i].name);
                nr++;
        }
        etl_reader_close(r);
        assert_int_equal(nr, nr_want); /* FINISHED_ROUND not among them */
        assert_int_equal(nr_samples, 3);
        converted_remove(&cv);
        free(f);
}

/* The conversion's records in time order, those of one time in file order, whatever order the
   file has them in: nr samples at times[i], written in file order with IP 0x1000 + i, read
   back from the .etl. */
static void check_time_order(const uint64_t *times, uint32_t nr)
{
        struct fb *f = fb_pipe_start(PERF_COUNT_SW_CPU_CLOCK);
        for (uint32_t i = 0; i < nr; i++) {
                fb_u32(f, PERF_RECORD_SAMPLE);
                fb_u16(f, PERF_RECORD_MISC_USER);
                fb_u16(f, 8 + 5 * 8);
                fb_u64(f, 100);
                fb_u64(f, 0x1000 + i);
                fb_u32(f, 42);
                fb_u32(f, 43);
                fb_u64(f, times[i]);
                fb_u64(f, 10000);
        }
        struct converted cv;
        struct etl_reader *r = convert_fb(f, "order", &cv);
        struct etl_record rec;
        uint32_t k = 0;
        uint64_t prev_time = 0, prev_ip = 0;
        while (etl_reader_next(r, &rec) == 1) {
                if (rec.hook_id != PERFINFO_LOG_TYPE_SAMPLED_PROFILE)
                        continue;
                uint64_t ip;
                memcpy(&ip, rec.payload, 8);
                assert_true(ip >= 0x1000 && ip < 0x1000 + nr);
                uint64_t t = times[ip - 0x1000];
                if (k)
                        assert_true(t > prev_time || (t == prev_time && ip > prev_ip));
                prev_time = t;
                prev_ip = ip;
                k++;
        }
        etl_reader_close(r);
        assert_int_equal(k, nr);
        converted_remove(&cv);
        free(f);
}

/* Rings written in turn each round, as perf writes them (runs that overlap their round's
   others, two rings with the same times); then six falling saw teeth of records in pairs
   (runs of two, many of one time): more to move one run at a time than the sort allows
   itself (4 n + 64 records), the bottom-up merge's way. */
static void test_time_order(void **state)
{
        (void)state;
        enum { ROUNDS = 3, RINGS = 3, PER = 17, NR = 160 }; /* 160 samples: 7,680 bytes */
        uint64_t *times = calloc(NR, sizeof(*times));
        uint32_t n = 0;
        for (uint32_t round = 0; round < ROUNDS; round++)
                for (uint32_t ring = 0; ring < RINGS; ring++)
                        for (uint32_t i = 0; i < PER; i++)
                                times[n++] = 1000000 + round * 1000 + (ring == 2) + 4 * i;
        check_time_order(times, n);
        for (uint32_t i = 0; i < NR; i++)
                times[i] = 1000000 + (NR - i) / 2 % 27 * 10;
        check_time_order(times, NR);
        free(times);
}

/* A conversion's growing buffer keeps its bytes as it grows, at a 2 MiB boundary each time
   (where its huge pages fit), from 2 MiB to 32. */
/* A recording without the kernel's build-id (perf record -z, --no-buildid) takes the running
   kernel's only where it was recorded under this kernel's release and its map starts where this
   kernel's _text lies (ksyms_running_build_id_at). */
static void test_kernel_build_id_assumed(void **state)
{
        (void)state;
        struct utsname u;
        assert_int_equal(uname(&u), 0);
        uint64_t text = 0;
        char line[256];
        FILE *f = fopen("/proc/kallsyms", "re");
        for (int i = 0; f && i < 64 && !text && fgets(line, sizeof(line), f); i++)
                if (strstr(line, " T _text\n"))
                        text = strtoull(line, NULL, 16);
        if (f)
                fclose(f);
        uint8_t bid[20];
        /* another release, or no release: none */
        assert_int_equal(ksyms_running_build_id_at("0.0.0-another", "_text", text ? text : 1, bid),
                         0);
        assert_int_equal(ksyms_running_build_id_at(NULL, "_text", text ? text : 1, bid), 0);
        if (!text) {
                print_message("skipped: this user does not see kernel addresses\n");
                skip();
        }
        /* this release, another place (another boot's KASLR offset): none */
        assert_int_equal(ksyms_running_build_id_at(u.release, "_text", text + 0x200000, bid), 0);
        assert_int_equal(ksyms_running_build_id_at(u.release, "_nosuch", text, bid), 0);
        /* this kernel: its build-id, as /sys/kernel/notes holds it */
        uint32_t n = ksyms_running_build_id_at(u.release, "_text", text, bid);
        if (n == 0) {
                print_message("skipped: no build-id in /sys/kernel/notes\n");
                skip();
        }
        assert_int_equal(n, 20);
        uint8_t notes[4096];
        int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        ssize_t got = read(fd, notes, sizeof(notes));
        close(fd);
        bool is_found = false;
        for (ssize_t p = 0; p + 20 <= got && !is_found; p++)
                is_found = memcmp(notes + p, bid, 20) == 0;
        assert_true(is_found);
}

static void test_mem_grows_aligned(void **state)
{
        (void)state;
        struct perf_data_mem m = {0};
        size_t size = 1;
        for (int i = 0; i < 5; i++) {
                assert_int_equal(perf_data_mem_reserve(&m, size), 0);
                assert_true(m.cap >= size);
                assert_int_equal((uintptr_t)m.data % ((size_t)2 << 20), 0);
                for (size_t k = 0; k < m.len; k += 4096)
                        assert_int_equal(m.data[k], (uint8_t)(k / 4096 * 7 + 1));
                for (size_t k = 0; k < size; k += 4096)
                        m.data[k] = (uint8_t)(k / 4096 * 7 + 1);
                m.len = size;
                size = ((size_t)2 << 20) << (i + 1);
        }
        perf_data_mem_free(&m);
        assert_null(m.data);
}

#ifdef HAVE_ZSTD
#include <zstd.h>

/* COMPRESSED2 records (perf 6.x: with the data size) in pipe mode, one zstd stream across two
   of them, a record cut where the first ends and continued in the second; and COMPRESSED. */
static void check_compressed(uint32_t type)
{
        struct fb *inner = calloc(1, sizeof(*inner));
        fb_sample(inner, 100, 0x1000);
        fb_sample(inner, 100, 0x2000);
        fb_sample(inner, 100, 0x3000);
        uint32_t cut = 48 + 20; /* inside the second sample */
        struct fb *f = fb_pipe_start(PERF_COUNT_SW_CPU_CLOCK);
        const uint32_t parts[2][2] = {{0, cut}, {cut, inner->n - cut}};
        for (int i = 0; i < 2; i++) {
                uint8_t z[1024];
                size_t n = ZSTD_compress(z, sizeof(z), inner->b + parts[i][0], parts[i][1], 1);
                assert_false(ZSTD_isError(n));
                /* COMPRESSED2 pads to 8 bytes; COMPRESSED is padded here too (perf does not
                   pad it; zero bytes after a frame are stepped over) */
                uint32_t head = type == PERF_DATA_COMPRESSED2 ? 16 : 8;
                uint32_t size = (uint32_t)((head + n + 7) & ~7u);
                fb_u32(f, type);
                fb_u16(f, 0);
                fb_u16(f, (uint16_t)size);
                if (type == PERF_DATA_COMPRESSED2)
                        fb_u64(f, n);
                fb_put(f, z, (uint32_t)n);
                f->n += size - head - (uint32_t)n; /* padding: zero */
        }
        fb_sample(f, 100, 0x4000);
        struct counts c;
        struct perf_data *pd = fb_open(f, &c);
        assert_int_equal(c.rc, 0);
        if (perf_data_nr_warnings(pd))
                fail_msg("%s", perf_data_last_warning(pd)->msg);
        assert_int_equal(c.by_type[type], 2);
        assert_int_equal(c.nr_decompressed, 3);
        assert_int_equal(c.by_type[PERF_RECORD_SAMPLE], 4);
        assert_int_equal(samples_of(&c, "cpu-clock"), 4);
        perf_data_close(pd);
        free(f);
        free(inner);
}

static void test_compressed_by_hand(void **state)
{
        (void)state;
        check_compressed(PERF_DATA_COMPRESSED2);
        check_compressed(PERF_DATA_COMPRESSED);
}
#else
static void test_compressed_by_hand(void **state)
{
        (void)state;
        print_message("skipped: built without libzstd\n");
        skip();
}
#endif

/* A truncated perf.data file: --dump shows what was converted and says which record was cut
   where; a file that is not one says so. */
static void test_damaged_dump(void **state)
{
        (void)state;
        const char *etwtop = getenv("ETWTOP");
        char *path = sample_path("perf.data.lost_samples-4.4");
        if (!etwtop || !path) {
                free(path);
                skip();
        }
        char dir[] = "/tmp/test-perf-data-XXXXXX";
        assert_non_null(mkdtemp(dir));
        char cmd[2048];
        snprintf(cmd, sizeof(cmd),
                 "head -c 15000 '%s' > '%s/cut.data' && "
                 "'%s' --dump --totals '%s/cut.data' > '%s/d.txt' 2>&1 && "
                 "grep -q 'PerfInfo/PMCInterrupt' '%s/d.txt' && "
                 "grep -q 'Last problem: .*SAMPLE record (type 9) at 14960: size 48 runs past the "
                 "end' '%s/d.txt' && "
                 "printf 'PERFILE2\\150\\0\\0\\0\\0\\0\\0\\0' > '%s/bad.data' && "
                 "! '%s' --dump '%s/bad.data' > '%s/e.txt' 2>&1 && "
                 "grep -q 'perf.data header: size 104 (file of 16 bytes) (at byte offset 8) (Win32 "
                 "error 11)' '%s/e.txt'",
                 path, dir, etwtop, dir, dir, dir, dir, dir, etwtop, dir, dir, dir);
        int rc = system(cmd);
        if (rc != 0) {
                snprintf(cmd, sizeof(cmd), "cat '%s/d.txt' '%s/e.txt' | tail -5 >&2", dir, dir);
                (void)!system(cmd);
        }
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        assert_int_equal(system(cmd), 0);
        free(path);
        assert_int_equal(rc, 0);
}

/* Sources of events built by hand: a hybrid PMU's cycles (the PMU's type in config's high
   half) is TotalCycles, a raw event a source of its own named by the event, a tracepoint
   without its format nothing. */
static void test_pmc_sources_by_hand(void **state)
{
        (void)state;
        static const struct {
                uint32_t type;
                uint64_t config;
                enum perf_conv_kind kind;
                uint16_t source;
                const char *name;
        } cases[] = {
                {PERF_TYPE_HARDWARE, 8ull << 32 | PERF_COUNT_HW_CPU_CYCLES, PERF_CONV_PMC_SAMPLE,
                 19, "TotalCycles"},
                {PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, PERF_CONV_PMC_SAMPLE, 11,
                 "BranchMispredictions"},
                {PERF_TYPE_RAW, 0x1c2, PERF_CONV_PMC_SAMPLE, 64, "raw 0x1c2"},
                {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, PERF_CONV_PROFILE, 0, "Timer"},
                /* a tracepoint not converted to a kernel event: a source of its own */
                {PERF_TYPE_TRACEPOINT, 300, PERF_CONV_PMC_SAMPLE, 64, "tracepoint 300"},
                {9, 0x3c, PERF_CONV_PMC_SAMPLE, 64, "type 9 config 0x3c"}, /* no PMU_MAPPINGS */
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct fb *f = calloc(1, sizeof(*f));
                build_file(f, 112);
                uint32_t attr = 120;
                memcpy(f->b + attr, &cases[i].type, 4);
                memcpy(f->b + attr + 8, &cases[i].config, 8);
                struct perf_data *pd = NULL;
                struct err_msg err;
                assert_int_equal(perf_data_open_mem(&pd, f->b, f->n, &err), 0);
                struct perf_conv_event ev;
                char name[64];
                perf_data_conv_event_of(pd, 0, &ev, name, sizeof(name));
                assert_int_equal(ev.kind, cases[i].kind);
                assert_int_equal(ev.profile_source, cases[i].source);
                if (cases[i].name)
                        assert_string_equal(name, cases[i].name);
                perf_data_close(pd);
                free(f);
        }
        /* cpu-clock and task-clock both (build_file's two events): the first is the Timer,
           the second a source of its own, as perf report shows each apart */
        struct fb *f = calloc(1, sizeof(*f));
        build_file(f, 112);
        struct perf_data *tpd = NULL;
        struct err_msg terr;
        assert_int_equal(perf_data_open_mem(&tpd, f->b, f->n, &terr), 0);
        struct perf_conv_event tev;
        char tname[64];
        perf_data_conv_event_of(tpd, 0, &tev, tname, sizeof(tname));
        assert_int_equal(tev.kind, PERF_CONV_PROFILE);
        assert_string_equal(tname, "Timer");
        perf_data_conv_event_of(tpd, 1, &tev, tname, sizeof(tname));
        assert_int_equal(tev.kind, PERF_CONV_PMC_SAMPLE);
        assert_int_equal(tev.profile_source, 65);
        assert_string_equal(tname, "task-clock");
        perf_data_close(tpd);
        memset(f, 0, sizeof(*f));
        /* with PMU_MAPPINGS: perf's name of a PMU's event, pmu/config=.../ */
        build_file(f, 112);
        uint32_t type = 9;
        uint64_t config = 0x3c;
        memcpy(f->b + 120, &type, 4);
        memcpy(f->b + 120 + 8, &config, 8);
        uint64_t bits = 1ull << PERF_DATA_FEAT_PMU_MAPPINGS;
        memcpy(f->b + 72, &bits, 8);
        fb_u64(f, f->n + 16); /* the feature's section, then its bytes */
        fb_u64(f, 4 + 4 + 4 + 8);
        fb_u32(f, 1);
        fb_u32(f, 9);
        fb_u32(f, 8);
        fb_put(f, "cpu_core", 8);
        struct perf_data *pd = fb_open(f, NULL);
        assert_int_equal(perf_data_nr_warnings(pd), 0);
        struct perf_conv_event ev;
        char name[64];
        perf_data_conv_event_of(pd, 0, &ev, name, sizeof(name));
        assert_string_equal(name, "cpu_core/config=0x3c/");
        perf_data_close(pd);
        free(f);
}

/* perf record --call-graph dwarf: the register and stack copies walked with the live source's
   DWARF unwinder, from the images' recorded paths (not this machine's /proc): user stacks of
   more than the sampled address. Skipped where perf cannot record here. */
static void test_dwarf_call_graph(void **state)
{
        (void)state;
        char dir[] = "/tmp/test-perf-data-XXXXXX";
        assert_non_null(mkdtemp(dir));
        char cmd[1024], data[256], etl[256];
        snprintf(data, sizeof(data), "%s/dwarf.data", dir);
        snprintf(etl, sizeof(etl), "%s/dwarf.etl", dir);
        snprintf(cmd, sizeof(cmd),
                 "perf record -B --call-graph dwarf,8192 -e cpu-clock -F 999 -o '%s' -- sh -c "
                 "'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done' >/dev/null 2>&1",
                 data);
        if (system(cmd) != 0) {
                snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
                assert_int_equal(system(cmd), 0);
                print_message("skipped: perf cannot record here\n");
                skip();
        }
        struct perf_data_conv_stats st;
        struct etl_error err;
        if (perf_data_write_etl(data, etl, false, &st, &err) < 0)
                fail_msg("%s", err.msg);
        struct etl_reader *r = NULL;
        assert_int_equal(etl_reader_open_file(&r, etl, &err), 0);
        struct etl_record rec;
        uint64_t nr_stacks = 0, nr_deep = 0;
        while (etl_reader_next(r, &rec) == 1) {
                if (rec.hook_id != 0x1820 || rec.payload_size < 16)
                        continue;
                nr_stacks++;
                /* EventTimeStamp, pid, tid, then the frames: user frames below the kernel's
                   half; the kernel's callchain has one (the sampled address) */
                uint32_t nr_user = 0;
                for (uint32_t o = 16; o + 8 <= rec.payload_size; o += 8) {
                        uint64_t a;
                        memcpy(&a, rec.payload + o, 8);
                        nr_user += a < 0x0000800000000000ull;
                }
                nr_deep += nr_user >= 2;
        }
        etl_reader_close(r);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        assert_int_equal(system(cmd), 0);
        assert_int_equal(nr_stacks, st.nr_samples);
        assert_true(nr_deep > 0);
        assert_true(st.conv.nr_bad == 0);
}

/* The records of an .etl reader, counted. */
static uint64_t nr_etl_records(struct etl_reader *r)
{
        struct etl_record rec;
        uint64_t n = 0;
        while (etl_reader_next(r, &rec) == 1)
                n++;
        etl_reader_close(r);
        return n;
}

/* A replay opens its trace twice (the feed reads stack keys ahead): the second open of the same
   perf.data reads the kept conversion, with the same records and the same warning of a damaged
   file; a file changed since is converted again. Each open converted the whole file before: a
   fifth of --replay -b's time on a large file. Conversions are made in memory (a scratch .etl
   written to TMPDIR and read back was most of a small file's system time): nothing is written
   there, and a reader still open keeps its conversion after the next one. */
static void test_reader_open_once(void **state)
{
        (void)state;
        char *path = sample_path("perf_b.data");
        if (!path)
                skip();
        char dir[] = "/tmp/test-perf-data-XXXXXX";
        assert_non_null(mkdtemp(dir));
        char copy[256], cut[256], tmp[256];
        snprintf(copy, sizeof(copy), "%s/b.data", dir);
        snprintf(cut, sizeof(cut), "%s/cut.data", dir);
        snprintf(tmp, sizeof(tmp), "%s/tmp", dir);
        size_t size;
        uint8_t *b = read_file(path, &size);
        FILE *f = fopen(copy, "wb");
        assert_int_equal(fwrite(b, 1, size, f), size);
        fclose(f);
        f = fopen(cut, "wb");
        assert_int_equal(fwrite(b, 1, size / 2, f), size / 2);
        fclose(f);
        free(b);
        assert_int_equal(mkdir(tmp, 0700), 0);
        const char *old = getenv("TMPDIR");
        char *saved = old ? strdup(old) : NULL;
        setenv("TMPDIR", tmp, 1);

        uint64_t nr = perf_data_etl_nr_conversions();
        struct etl_reader *r = NULL;
        struct etl_error err;
        assert_int_equal(perf_data_etl_reader_open(&r, copy, &err), 0);
        assert_string_equal(err.msg, "");
        uint64_t n = nr_etl_records(r);
        assert_true(n > 150);
        assert_int_equal(perf_data_etl_nr_conversions(), nr + 1);
        assert_int_equal(perf_data_etl_reader_open(&r, copy, &err), 0);
        assert_int_equal(nr_etl_records(r), n);
        assert_int_equal(perf_data_etl_nr_conversions(), nr + 1); /* the kept one */
        struct timespec times[2] = {{0, UTIME_OMIT}, {1000000000, 0}};
        assert_int_equal(utimensat(AT_FDCWD, copy, times, 0), 0);
        struct etl_reader *held = NULL;
        assert_int_equal(perf_data_etl_reader_open(&held, copy, &err), 0);
        assert_int_equal(perf_data_etl_nr_conversions(), nr + 2); /* changed: again */

        /* a damaged file: read to the damage, its warning again at the second open; the
           reader of the conversion before it still reads */
        assert_int_equal(perf_data_etl_reader_open(&r, cut, &err), 0);
        assert_int_equal(perf_data_etl_nr_conversions(), nr + 3);
        char msg[sizeof(err.msg)];
        snprintf(msg, sizeof(msg), "%s", err.msg);
        assert_true(msg[0]);
        uint64_t n_cut = nr_etl_records(r);
        assert_true(n_cut > 0 && n_cut < n);
        assert_int_equal(perf_data_etl_reader_open(&r, cut, &err), 0);
        assert_string_equal(err.msg, msg);
        assert_int_equal(nr_etl_records(r), n_cut);
        assert_int_equal(perf_data_etl_nr_conversions(), nr + 3);
        assert_int_equal(nr_etl_records(held), n);

        /* nothing was written to TMPDIR */
        assert_int_equal(rmdir(tmp), 0);
        if (saved)
                setenv("TMPDIR", saved, 1);
        else
                unsetenv("TMPDIR");
        free(saved);
        unlink(copy);
        unlink(cut);
        assert_int_equal(rmdir(dir), 0);
        free(path);
}

/* The records of r after its header record (whose LogFileName names the file), folded into
   one value with their CPU and order; closes r. */
static uint64_t records_digest(struct etl_reader *r, uint64_t *n)
{
        struct etl_record rec;
        uint64_t h = 1469598103934665603ull;
        *n = 0;
        while (etl_reader_next(r, &rec) == 1) {
                if (rec.is_header)
                        continue;
                h = (h ^ rec.cpu) * 1099511628211ull;
                for (uint32_t i = 0; i < rec.size_bytes; i++)
                        h = (h ^ rec.data[i]) * 1099511628211ull;
                (*n)++;
        }
        etl_reader_close(r);
        return h;
}

/* The .etl a replay converts into memory (its buffers written where the image keeps them,
   with room reserved from the file's size) reads as the one --merge writes to a file (the
   writer's own buffers): the same records in the same order; and from standard input, whose
   size is not known, where most buffers lie outside the room first and are moved in at the
   end. */
static void test_image_as_file(void **state)
{
        (void)state;
        char *path = sample_path("propeller_sample_1.perfdata1");
        if (!path)
                skip();
        char dir[] = "/tmp/test-perf-image-XXXXXX";
        assert_non_null(mkdtemp(dir));
        char etl[256];
        snprintf(etl, sizeof(etl), "%s/out.etl", dir);
        struct etl_error err;
        struct perf_data_conv_stats st;
        assert_int_equal(perf_data_write_etl(path, etl, false, &st, &err), 0);
        struct etl_reader *r = NULL;
        assert_int_equal(etl_reader_open_file(&r, etl, &err), 0);
        uint64_t n_file = 0, n_mem = 0, n_stdin = 0;
        uint64_t d_file = records_digest(r, &n_file);
        assert_true(n_file > 3000);

        assert_int_equal(perf_data_etl_reader_open(&r, path, &err), 0);
        assert_string_equal(err.msg, "");
        assert_int_equal(records_digest(r, &n_mem), d_file);
        assert_int_equal(n_mem, n_file);

        int saved = dup(0), fd = open(path, O_RDONLY);
        assert_true(saved >= 0 && fd >= 0);
        assert_int_equal(dup2(fd, 0), 0);
        close(fd);
        assert_int_equal(perf_data_etl_reader_open(&r, "-", &err), 0);
        assert_int_equal(dup2(saved, 0), 0);
        close(saved);
        assert_int_equal(records_digest(r, &n_stdin), d_file);
        assert_int_equal(n_stdin, n_file);
        unlink(etl);
        assert_int_equal(rmdir(dir), 0);
        free(path);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_busy_six_hw_events),
                cmocka_unit_test(test_callgraph_and_branch),
                cmocka_unit_test(test_lost_samples_group),
                cmocka_unit_test(test_simpleperf_lbr),
                cmocka_unit_test(test_propeller_lbr_build_id),
                cmocka_unit_test(test_compressed_pipe),
                cmocka_unit_test(test_compressed_file),
                cmocka_unit_test(test_against_perf_report),
                cmocka_unit_test(test_every_attr_size),
                cmocka_unit_test(test_pipe_mode_by_hand),
                cmocka_unit_test(test_hybrid_events),
                cmocka_unit_test(test_pipe_tracepoint_named),
                cmocka_unit_test(test_unfinished_recording),
                cmocka_unit_test(test_not_perf_data),
                cmocka_unit_test(test_damaged_record),
                cmocka_unit_test(test_truncations),
                cmocka_unit_test(test_damaged_compressed),
                cmocka_unit_test(test_converted_sample_counts),
                cmocka_unit_test(test_source_names),
                cmocka_unit_test(test_converted_stacks_and_lbr),
                cmocka_unit_test(test_merge_and_dump),
                cmocka_unit_test(test_sched_tracepoints),
                cmocka_unit_test(test_lbr_options),
                cmocka_unit_test(test_group_read),
                cmocka_unit_test(test_leader_sampled_group),
                cmocka_unit_test(test_buildid_mmap_kernel_maps),
                cmocka_unit_test(test_map_without_prot),
                cmocka_unit_test(test_records_not_shown),
                cmocka_unit_test(test_kernel_map_and_unnamed_thread),
                cmocka_unit_test(test_time_order),
                cmocka_unit_test(test_kernel_build_id_assumed),
                cmocka_unit_test(test_mem_grows_aligned),
                cmocka_unit_test(test_compressed_by_hand),
                cmocka_unit_test(test_damaged_dump),
                cmocka_unit_test(test_pmc_sources_by_hand),
                cmocka_unit_test(test_dwarf_call_graph),
                cmocka_unit_test(test_reader_open_once),
                cmocka_unit_test(test_image_as_file),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
