/* SPDX-License-Identifier: MIT */
/* test_etl_inflate.c: compressed buffers decompressed ahead on worker threads: every job's
 * result the same as decompressing it in place, in any order of taking, across stops, with one
 * worker or several; the workers free to run on every processor the process may once started
 * (away from the taker's); and the reader's records, counts and warnings the same with the
 * workers and without them. */
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "etl_inflate.h"
#include "etl_parse.h"
#include "etl_reader.h"
#include "le_bytes.h"
#include "etw/ntwmi.h"

struct blob {
        uint8_t *data;
        size_t size;
};

/* The PerfView sample (359 XPRESS buffers), read whole; false when it is not unpacked here. */
static bool load_net(struct blob *b)
{
        const char *dir = getenv("ETWTOP_SAMPLES_UNPACKED");
        char path[4096];
        if (!dir)
                return false;
        snprintf(path, sizeof(path), "%s/net.4.5.2.x64.etl", dir);
        FILE *f = fopen(path, "rb");
        if (!f) {
                fprintf(stderr, "sample %s not found\n", path);
                return false;
        }
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        b->data = malloc((size_t)n);
        assert_non_null(b->data);
        assert_int_equal(fread(b->data, 1, (size_t)n, f), (size_t)n);
        fclose(f);
        b->size = (size_t)n;
        return true;
}

/* The file's compressed buffers as jobs, in file order. */
static uint32_t compressed_jobs(const struct blob *b, struct etl_inflate_job *jobs, uint32_t cap)
{
        uint32_t n = 0;
        for (size_t off = 0; off + WMI_BUFFER_HEADER_SIZE <= b->size && n < cap;) {
                const uint8_t *p = b->data + off;
                uint32_t size = le_get32(p + BUF_SIZE_OFF);
                uint32_t filled = le_get32(p + BUF_OFFSET_OFF);
                if (size < WMI_BUFFER_HEADER_SIZE || size > b->size - off)
                        break;
                if (le_get16(p + BUF_FLAG_OFF) & WMI_BUFFER_FLAG_COMPRESSED)
                        jobs[n++] = (struct etl_inflate_job){p, size, filled};
                off += size;
        }
        return n;
}

/* The sample's 359 compressed buffers as jobs (jobs: room for 400); skipped without it. */
static uint32_t net_jobs(struct blob *b, struct etl_inflate_job *jobs)
{
        if (!load_net(b))
                skip();
        uint32_t n = compressed_jobs(b, jobs, 400);
        assert_int_equal(n, 359);
        return n;
}

/* job j decompressed in place, the way the reader did before the worker */
static void expect_same(const struct etl_inflate_job *j, const uint8_t *got,
                        const struct etl_inflate_result *res)
{
        uint8_t *want = malloc(j->out_size);
        assert_non_null(want);
        memcpy(want, j->src, WMI_BUFFER_HEADER_SIZE);
        size_t want_len = 0;
        struct xpress_error xe = {0, NULL};
        int rc = xpress_decompress(j->src + WMI_BUFFER_HEADER_SIZE,
                                   j->src_size - WMI_BUFFER_HEADER_SIZE,
                                   want + WMI_BUFFER_HEADER_SIZE,
                                   j->out_size - WMI_BUFFER_HEADER_SIZE, &want_len, &xe);
        assert_int_equal(res->rc, rc);
        assert_int_equal(res->out_len, want_len);
        assert_int_equal(res->xe.in_offset, xe.in_offset);
        assert_memory_equal(got, want, WMI_BUFFER_HEADER_SIZE + want_len);
        free(want);
}

/* Jobs taken in an order far from theirs (a stride through them), a window of 3 (of 8 with
   several workers), the workers stopped half-way and started again (every job to be taken
   anew), one job's stream damaged: each result is the in-place one. */
static void any_order_across_stops(uint32_t nr_workers)
{
        struct blob b;
        struct etl_inflate_job jobs[400];
        uint32_t n = net_jobs(&b, jobs);
        /* job 7's stream: a match before the start of the output from its first bytes on */
        uint8_t *bad = malloc(jobs[7].src_size);
        assert_non_null(bad);
        memcpy(bad, jobs[7].src, jobs[7].src_size);
        memset(bad + WMI_BUFFER_HEADER_SIZE, 0xFF, jobs[7].src_size - WMI_BUFFER_HEADER_SIZE);
        jobs[7].src = bad;

        struct etl_inflate *q = etl_inflate_new(jobs, n, nr_workers > 1 ? 8 : 3);
        assert_non_null(q);
        uint8_t *buf = NULL;
        uint32_t cap = 0;
        for (int round = 0; round < 2; round++) {
                assert_true(etl_inflate_start(q, nr_workers));
                uint32_t nr_taken = round ? n : n / 2;
                for (uint32_t i = 0; i < nr_taken; i++) {
                        uint32_t job = (i * 101 + round) % n; /* 101 is prime to 359 */
                        struct etl_inflate_result res;
                        assert_int_equal(etl_inflate_take(q, job, &buf, &cap, &res), 0);
                        assert_true(cap >= jobs[job].out_size);
                        expect_same(&jobs[job], buf, &res);
                        if (job == 7)
                                assert_true(res.rc < 0);
                        else
                                assert_int_equal(res.rc, 0);
                }
                /* each take counted once: by a worker ahead, or by the taker */
                struct etl_inflate_stats st;
                etl_inflate_get_stats(q, &st);
                assert_int_equal(st.nr_ahead + st.nr_here, nr_taken);
                assert_true(st.nr_waited <= nr_taken);
                etl_inflate_stop(q);
                etl_inflate_get_stats(q, &st);
                assert_int_equal(st.nr_ahead + st.nr_here + st.nr_waited, 0);
        }
        /* without a worker: taken in place */
        uint32_t nr_in_place = 0;
        for (uint32_t job = 0; job < n; job += 37, nr_in_place++) {
                struct etl_inflate_result res;
                assert_int_equal(etl_inflate_take(q, job, &buf, &cap, &res), 0);
                expect_same(&jobs[job], buf, &res);
        }
        struct etl_inflate_stats st;
        etl_inflate_get_stats(q, &st);
        assert_int_equal(st.nr_here, nr_in_place);
        assert_int_equal(st.nr_ahead + st.nr_waited, 0);
        etl_inflate_free(q);
        free(buf);
        free(bad);
        free(b.data);
}

static void test_any_order_across_stops(void **state)
{
        (void)state;
        any_order_across_stops(1);
}

/* The same with workers racing each other for the jobs: more of them than processors here,
   and more than the window lets run at once. */
static void test_any_order_several_workers(void **state)
{
        (void)state;
        any_order_across_stops(3);
        any_order_across_stops(ETL_INFLATE_MAX_WORKERS);
}

/* A start, no take, a stop: the workers, perhaps still filling their window, are joined; and
   a free with them running. */
static void test_stop_and_free_while_running(void **state)
{
        (void)state;
        struct blob b;
        struct etl_inflate_job jobs[400];
        uint32_t n = net_jobs(&b, jobs);
        struct etl_inflate *q = etl_inflate_new(jobs, n, 16);
        assert_non_null(q);
        for (uint32_t i = 0; i < 20; i++) {
                assert_true(etl_inflate_start(q, 1 + i % 5)); /* one worker, or several */
                etl_inflate_stop(q);
        }
        assert_false(etl_inflate_start(q, 0)); /* none asked for: none runs */
        assert_true(etl_inflate_start(q, 4));
        uint8_t *buf = NULL;
        uint32_t cap = 0;
        struct etl_inflate_result res;
        assert_int_equal(etl_inflate_take(q, n - 1, &buf, &cap, &res), 0);
        expect_same(&jobs[n - 1], buf, &res);
        etl_inflate_free(q);
        free(buf);
        free(b.data);
}

/* A worker held on its job until the gate opens: one that its processor was taken from. */
struct gate {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        uint32_t job; /* the job held */
        bool is_held; /* the worker is at it */
        bool is_open;
};

static void hold_at_gate(uint32_t job, void *arg)
{
        struct gate *g = arg;
        if (job != g->job)
                return;
        pthread_mutex_lock(&g->lock);
        g->is_held = true;
        pthread_cond_broadcast(&g->cond);
        while (!g->is_open)
                pthread_cond_wait(&g->cond, &g->lock);
        pthread_mutex_unlock(&g->lock);
}

/* The job taken is under way on a worker that does not run, and the window is full: the taker
   decompresses it itself rather than wait for the worker (which waited without end before); the
   worker's late result is dropped and its buffer used again; every later take is still the
   in-place result, each counted once. */
static void test_take_from_stalled_worker(void **state)
{
        (void)state;
        struct blob b;
        struct etl_inflate_job jobs[400];
        uint32_t n = net_jobs(&b, jobs);
        struct gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, false, false};
        struct etl_inflate *q = etl_inflate_new(jobs, n, 3);
        assert_non_null(q);
        etl_inflate_set_worker_hook(q, hold_at_gate, &g);
        assert_true(etl_inflate_start(q, 1));
        pthread_mutex_lock(&g.lock);
        while (!g.is_held)
                pthread_cond_wait(&g.cond, &g.lock);
        pthread_mutex_unlock(&g.lock);

        uint8_t *buf = NULL;
        uint32_t cap = 0;
        struct etl_inflate_result res;
        assert_int_equal(etl_inflate_take(q, 0, &buf, &cap, &res), 0);
        expect_same(&jobs[0], buf, &res);
        struct etl_inflate_stats st;
        etl_inflate_get_stats(q, &st);
        /* job 0 decompressed here (the two helped with count when they are taken) */
        assert_int_equal(st.nr_here, 1);
        assert_int_equal(st.nr_ahead, 0);
        assert_int_equal(st.nr_waited, 1);

        pthread_mutex_lock(&g.lock);
        g.is_open = true;
        pthread_cond_broadcast(&g.cond);
        pthread_mutex_unlock(&g.lock);
        for (uint32_t job = 1; job < n; job++) {
                assert_int_equal(etl_inflate_take(q, job, &buf, &cap, &res), 0);
                expect_same(&jobs[job], buf, &res);
                assert_int_equal(res.rc, 0);
        }
        etl_inflate_get_stats(q, &st);
        assert_int_equal(st.nr_ahead + st.nr_here, n);
        assert_true(st.nr_here >= 3); /* 0 and the two helped with */
        etl_inflate_free(q);
        free(buf);
        free(b.data);
}

/* The workers (threads named etwtop-inflate) of this process found, and how many of them may
   run on exactly the processors in want. */
static void inflate_threads(const cpu_set_t *want, int *nr_found, int *nr_everywhere)
{
        *nr_found = *nr_everywhere = 0;
        DIR *d = opendir("/proc/self/task");
        assert_non_null(d);
        struct dirent *e;
        while ((e = readdir(d))) {
                char path[300], comm[32] = "";
                snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
                FILE *f = fopen(path, "r");
                if (!f)
                        continue;
                if (!fgets(comm, sizeof(comm), f))
                        comm[0] = 0;
                fclose(f);
                if (strcmp(comm, "etwtop-inflate\n") != 0)
                        continue;
                (*nr_found)++;
                cpu_set_t got;
                if (sched_getaffinity(atoi(e->d_name), sizeof(got), &got) == 0 &&
                    CPU_EQUAL(&got, want))
                        (*nr_everywhere)++;
        }
        closedir(d);
}

/* Workers start away from the taker's processor where there is another (etl_inflate_start),
   then may run on every one the process may: waited for (a worker names itself, then widens),
   for 30 s at most. */
static void test_workers_run_everywhere(void **state)
{
        (void)state;
        cpu_set_t allowed;
        assert_int_equal(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
        struct blob b;
        struct etl_inflate_job jobs[400];
        uint32_t n = net_jobs(&b, jobs);
        struct etl_inflate *q = etl_inflate_new(jobs, n, 3); /* the window full, they wait */
        assert_non_null(q);
        assert_true(etl_inflate_start(q, 3));
        int found = 0, everywhere = 0;
        for (int i = 0; i < 30000 && everywhere < 3; i++) {
                inflate_threads(&allowed, &found, &everywhere);
                if (everywhere < 3)
                        nanosleep(&(struct timespec){0, 1000000}, NULL);
        }
        fprintf(stderr, "%d workers found, %d of them on the process's %d processors\n", found,
                everywhere, CPU_COUNT(&allowed));
        assert_int_equal(found, 3);
        assert_int_equal(everywhere, 3);
        /* the taker's own processors are as they were */
        cpu_set_t now;
        assert_int_equal(sched_getaffinity(0, sizeof(now), &now), 0);
        assert_true(CPU_EQUAL(&now, &allowed));
        etl_inflate_free(q);
        free(b.data);
}

/* What a read of the whole file gives: each record's fields and bytes folded into one value,
   the counts, the last warning. */
struct digest {
        uint64_t hash;
        uint64_t nr_records;
        struct etl_reader_stats st;
        struct etl_error warning;
};

static uint64_t fold(uint64_t h, const void *p, size_t n)
{
        const uint8_t *b = p;
        for (size_t i = 0; i < n; i++)
                h = (h ^ b[i]) * 0x100000001b3ull;
        return h;
}

static void read_digest(const uint8_t *data, size_t size, const char *threads, uint64_t stop_after,
                        struct digest *d)
{
        setenv("ETWTOP_READER_THREADS", threads, 1);
        struct etl_reader *r = NULL;
        struct etl_error err;
        assert_int_equal(etl_reader_open_mem(&r, data, size, &err), 0);
        unsetenv("ETWTOP_READER_THREADS");
        /* part of it first, then a rewind: the worker stopped while it runs ahead */
        struct etl_record rec;
        for (uint64_t i = 0; i < stop_after && etl_reader_next(r, &rec) == 1; i++)
                ;
        etl_reader_rewind(r);
        memset(d, 0, sizeof(*d));
        d->hash = 0xcbf29ce484222325ull;
        while (etl_reader_next(r, &rec) == 1) {
                d->nr_records++;
                d->hash = fold(d->hash, &rec.timestamp, sizeof(rec.timestamp));
                d->hash = fold(d->hash, &rec.cpu, sizeof(rec.cpu));
                d->hash = fold(d->hash, &rec.file_offset, sizeof(rec.file_offset));
                d->hash = fold(d->hash, &rec.hook_id, sizeof(rec.hook_id));
                d->hash = fold(d->hash, rec.payload, rec.payload_size);
        }
        etl_reader_get_stats(r, &d->st);
        d->warning = *etl_reader_last_warning(r);
        etl_reader_close(r);
}

static void expect_same_digest(const struct digest *a, const struct digest *b)
{
        assert_int_equal(a->nr_records, b->nr_records);
        assert_int_equal(a->hash, b->hash);
        assert_int_equal(a->st.nr_records, b->st.nr_records);
        assert_int_equal(a->st.nr_bytes_read, b->st.nr_bytes_read);
        assert_int_equal(a->st.nr_buffers_done, b->st.nr_buffers_done);
        assert_int_equal(a->st.nr_buffers_damaged, b->st.nr_buffers_damaged);
        assert_int_equal(a->warning.offset, b->warning.offset);
        assert_string_equal(a->warning.msg, b->warning.msg);
}

/* The sample read with the worker and without it, whole and after a rewind part-way: the same
   records in the same order, the same counts. */
static void test_reader_same_with_worker(void **state)
{
        (void)state;
        struct blob b;
        if (!load_net(&b))
                skip();
        struct digest without, with, rewound_without, rewound;
        read_digest(b.data, b.size, "0", 0, &without);
        read_digest(b.data, b.size, "1", 0, &with);
        read_digest(b.data, b.size, "0", 40000, &rewound_without);
        read_digest(b.data, b.size, "1", 40000, &rewound);
        assert_int_equal(without.nr_records, 179474);
        expect_same_digest(&without, &with);
        expect_same_digest(&rewound_without, &rewound);
        /* who decompressed each compressed buffer of the read after the rewind: the reading
           thread alone without a worker; with one, it and the worker between them, each once */
        assert_int_equal(without.st.nr_inflate_workers, 0);
        assert_int_equal(without.st.nr_inflated_ahead, 0);
        assert_true(without.st.nr_inflated_here > 300);
        assert_int_equal(with.st.nr_inflate_workers, 1);
        assert_int_equal(with.st.nr_inflated_ahead + with.st.nr_inflated_here,
                         without.st.nr_inflated_here);
        assert_int_equal(rewound.st.nr_inflated_ahead + rewound.st.nr_inflated_here,
                         without.st.nr_inflated_here);
        /* several workers (more than this machine's processors, maybe), and a setting that is
           not a number (one worker) */
        read_digest(b.data, b.size, "4", 0, &with);
        expect_same_digest(&without, &with);
        read_digest(b.data, b.size, "4", 40000, &rewound);
        expect_same_digest(&rewound_without, &rewound);
        read_digest(b.data, b.size, "yes", 0, &with);
        expect_same_digest(&without, &with);
        /* the rewound reads count the bytes of both passes (etl_reader_rewind keeps them) */
        assert_int_equal(rewound.nr_records, without.nr_records);
        assert_int_equal(rewound.hash, without.hash);
        /* rewound at other points, the worker stopped wherever it is then (from the first
           buffers' load to the last) */
        uint64_t x = 0x2545f4914f6cdd1dull;
        for (int i = 0; i < 12; i++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                read_digest(b.data, b.size, i % 2 ? "1" : "3", i < 2 ? (uint64_t)i : x % 179474,
                            &rewound);
                assert_int_equal(rewound.nr_records, without.nr_records);
                assert_int_equal(rewound.hash, without.hash);
        }
        free(b.data);
}

/* Buffers whose compressed stream is damaged (each a different way) and one whose Offset
   claims more bytes than its stream gives: each skipped with the warning the reader gave
   without the worker, at the same place in the file. */
static void test_reader_damage_with_worker(void **state)
{
        (void)state;
        struct blob b;
        struct etl_inflate_job jobs[400];
        net_jobs(&b, jobs);
        uint8_t *p = malloc(b.size);
        assert_non_null(p);
        memcpy(p, b.data, b.size);
        size_t off10 = (size_t)(jobs[10].src - b.data), off200 = (size_t)(jobs[200].src - b.data);
        size_t off300 = (size_t)(jobs[300].src - b.data);
        memset(p + off10 + WMI_BUFFER_HEADER_SIZE, 0xFF,
               jobs[10].src_size - WMI_BUFFER_HEADER_SIZE);
        /* a stream cut short: the rest of its buffer zeroed */
        memset(p + off200 + jobs[200].src_size / 2, 0, jobs[200].src_size / 2);
        le_put32(p + off300 + BUF_OFFSET_OFF, jobs[300].out_size + 64);
        struct digest without, with;
        read_digest(p, b.size, "0", 0, &without);
        read_digest(p, b.size, "1", 0, &with);
        assert_true(without.st.nr_buffers_damaged >= 2);
        assert_true(without.nr_records < 179474);
        expect_same_digest(&without, &with);
        read_digest(p, b.size, "6", 0, &with);
        expect_same_digest(&without, &with);
        free(p);
        free(b.data);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_any_order_across_stops),
                cmocka_unit_test(test_any_order_several_workers),
                cmocka_unit_test(test_stop_and_free_while_running),
                cmocka_unit_test(test_take_from_stalled_worker),
                cmocka_unit_test(test_workers_run_everywhere),
                cmocka_unit_test(test_reader_same_with_worker),
                cmocka_unit_test(test_reader_damage_with_worker),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
