/* SPDX-License-Identifier: MIT */
/* test_hot_fold.c: the hot functions' refresh and rows at scale: the cap on the places of
   ended processes (hot_exited.c), each process's places found by its own list, gives the same
   rows as a look at the whole table at every refresh, and a fold of a few ended processes
   looks at none; the rows' cache (hot_row_keys.c) gives the rows a build without it gives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kevent.h"
#include "model/aggregate.h"
#include "model/hot.h"
#include "symbols/symbols.h"

#define KBASE 0xfffff80412340000ull /* a Windows driver, in every process */
#define EXE   0x10000000ull         /* where this binary is "mapped" */

static void quiet_log(void *ctx, const char *message)
{
        (void)ctx;
        (void)message;
}

static int setup(void **state)
{
        struct sym_store *store = NULL;
        struct sym_options o = {.is_synchronous = true, .log = quiet_log};
        assert_int_equal(sym_store_new(&store, &o), 0);
        struct sym_image drv = {
                0, KBASE, 0x100000, 0, "\\SystemRoot\\system32\\drivers\\tcpip.sys", NULL, 0, 1, 0};
        sym_image_load(store, &drv);
        *state = store;
        return 0;
}

static int teardown(void **state)
{
        sym_store_free(*state);
        return 0;
}

static struct kevent ev_base(enum kevent_type type, uint32_t cpu, int64_t t, uint32_t pid,
                             uint32_t tid)
{
        struct kevent ev;
        memset(&ev, 0, sizeof(ev));
        ev.type = type;
        ev.name = "";
        ev.cpu = cpu;
        ev.time_ns = t;
        ev.timestamp = (uint64_t)t + 1000000000ull;
        ev.pid = pid;
        ev.tid = tid;
        return ev;
}

static struct kevent ev_end(int64_t t, uint32_t pid)
{
        struct kevent ev = ev_base(KEV_PROCESS, 0, t, pid, 0);
        ev.process.phase = KEV_PHASE_END;
        ev.process.pid = pid;
        ev.process.image_name = ev.process.user_sid = ev.process.command_line = "";
        ev.process.package_full_name = ev.process.application_id = "";
        return ev;
}

/* Both models get every event (b NULL: a alone). */
static void both(struct hot *a, struct hot *b, const struct kevent *ev)
{
        hot_event(a, ev);
        if (b)
                hot_event(b, ev);
}

/* A sample of pid (thread pid + 1) at ip with a stack of n callers from frames. */
static void sample(struct hot *a, struct hot *b, uint32_t cpu, int64_t t, uint32_t pid, uint64_t ip,
                   const uint64_t *frames, uint32_t n)
{
        struct kevent ev = ev_base(KEV_SAMPLE, cpu, t, pid, pid + 1);
        ev.sample.ip = ip;
        ev.sample.tid = pid + 1;
        both(a, b, &ev);
        if (!n)
                return;
        ev = ev_base(KEV_STACK, cpu, t, pid, pid + 1);
        ev.stack.event_timestamp = ev.timestamp;
        ev.stack.event_time_ns = t;
        ev.stack.pid = pid;
        ev.stack.tid = pid + 1;
        ev.stack.nr_frames = n;
        ev.stack.frames = frames;
        both(a, b, &ev);
}

static void assert_same_rows(struct hot *a, struct hot *b)
{
        static const enum hot_grouping groupings[] = {HOT_BY_FUNCTION, HOT_BY_PROCESS,
                                                      HOT_BY_THREAD};
        for (uint32_t g = 0; g < 3; g++) {
                const struct hot_row *ra, *rb;
                uint32_t na = hot_functions_by(a, HOT_SOURCE_TIMER, groupings[g], false, &ra);
                uint32_t nb = hot_functions_by(b, HOT_SOURCE_TIMER, groupings[g], false, &rb);
                assert_int_equal(na, nb);
                for (uint32_t i = 0; i < na; i++) {
                        assert_int_equal(ra[i].module, rb[i].module);
                        assert_int_equal(ra[i].function, rb[i].function);
                        assert_int_equal(ra[i].rel, rb[i].rel);
                        assert_int_equal(ra[i].self, rb[i].self);
                        assert_int_equal(ra[i].total, rb[i].total);
                        assert_int_equal(ra[i].pid, rb[i].pid);
                        assert_int_equal(ra[i].tid, rb[i].tid);
                }
        }
        struct hot_caps ca, cb;
        hot_caps(a, &ca);
        hot_caps(b, &cb);
        assert_int_equal(ca.nr_exited_folded, cb.nr_exited_folded);
        assert_int_equal(ca.nr_places_folded, cb.nr_places_folded);
}

static uint32_t rnd(uint64_t *s)
{
        *s = *s * 6364136223846793005ull + 1442695040888963407ull;
        return (uint32_t)(*s >> 33);
}

/* Processes come and go (past HOT_EXITED_MAX places of ended ones, so the cap folds), pids are
   used again after their end, samples of a process come after its end, some at addresses no
   image holds (past HOT_UNPLACED_MAX of them), and the counts decay for a while: the rows by
   function, process and thread are the same whether the ended and unplaced places are found
   by their lists or by a look at the whole table at every refresh. */
static void test_fold_lists_same_rows(void **state)
{
        struct sym_store *store = *state;
        struct hot *a = hot_new(store, 0), *b = hot_new(store, 0);
        hot_set_fold_scanned(b, true);
        uint64_t seed = 25;
        int64_t t = 1000000;
        uint32_t next_pid = 1000;
        uint32_t live[64];
        for (uint32_t i = 0; i < 64; i++)
                live[i] = next_pid++;
        uint32_t ended[64], nr_ended = 0;
        for (uint32_t round = 0; round < 60; round++) {
                if (round == 30)
                        for (uint32_t k = 0; k < 2; k++) {
                                struct hot *h = k ? b : a;
                                hot_set_settings(h, &(struct agg_settings){AGG_DECAYING, 0.75, 1});
                        }
                if (round == 40)
                        for (uint32_t k = 0; k < 2; k++) {
                                struct hot *h = k ? b : a;
                                hot_set_settings(h, &(struct agg_settings){AGG_CUMULATIVE, 0, 0});
                        }
                for (uint32_t s = 0; s < 3000; s++) {
                        uint32_t r = rnd(&seed);
                        uint32_t pid = live[r % 64];
                        /* a late sample of a process that ended */
                        if (nr_ended && r % 97 == 0)
                                pid = ended[r % nr_ended];
                        uint64_t frames[4];
                        uint32_t n = rnd(&seed) % 4;
                        for (uint32_t f = 0; f < n; f++)
                                frames[f] = KBASE + 0x1000 + (rnd(&seed) % 64) * 16;
                        /* now and then an address no image holds: unplaced, kept by process */
                        uint64_t ip = r % 13 == 0 ? 0x5000 + (rnd(&seed) % 4096) * 8
                                                  : KBASE + (rnd(&seed) % 512) * 8;
                        sample(a, b, r % 4, t += 1000, pid, ip, frames, n);
                }
                /* a few end; a new process takes the slot, now and then an ended pid again */
                for (uint32_t k = 0; k < 16; k++) {
                        uint32_t slot = rnd(&seed) % 64;
                        struct kevent ev = ev_end(t += 1000, live[slot]);
                        both(a, b, &ev);
                        ended[nr_ended < 64 ? nr_ended++ : rnd(&seed) % 64] = live[slot];
                        live[slot] =
                                rnd(&seed) % 5 == 0 ? ended[rnd(&seed) % nr_ended] : next_pid++;
                }
                hot_refresh(a);
                hot_refresh(b);
                if (round % 4 == 3)
                        assert_same_rows(a, b);
        }
        struct hot_caps caps;
        hot_caps(a, &caps);
        assert_true(caps.nr_exited_folded > 0); /* the caps folded */
        assert_true(caps.nr_places_folded > 0);
        hot_free(a);
        hot_free(b);
}

/* A refresh after a few processes ended marks their places through their lists: no look at
   the whole table while the ended places stay under the cap, but the first refresh's, which
   makes the lists. */
static void test_fold_few_ended_no_scan(void **state)
{
        struct sym_store *store = *state;
        struct hot *h = hot_new(store, 0);
        int64_t t = 1000000;
        for (uint32_t pid = 100; pid < 400; pid++)
                for (uint32_t k = 0; k < 20; k++) {
                        struct kevent ev = ev_base(KEV_SAMPLE, 0, t += 1000, pid, pid + 1);
                        ev.sample.ip = KBASE + k * 8;
                        ev.sample.tid = pid + 1;
                        hot_event(h, &ev);
                }
        for (uint32_t pid = 100; pid < 400; pid++) {
                struct kevent ev = ev_end(t += 1000, pid);
                hot_event(h, &ev);
                hot_refresh(h);
        }
        assert_int_equal(hot_nr_exited_scans(h), 1); /* the first refresh makes the lists */
        /* every place is marked: rows by process still name each process (under the cap) */
        const struct hot_row *rows;
        assert_int_equal(hot_functions_by(h, HOT_SOURCE_TIMER, HOT_BY_PROCESS, false, &rows),
                         300 * 20);
        hot_free(h);
}

/* This binary at EXE in processes from to to (not included): their places named, their answers
   settled (the driver's never settle: no symbols came). */
static void load_exe(struct sym_store *store, uint32_t from, uint32_t to)
{
        char exe[4096];
        ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        assert_true(len > 0);
        exe[len] = '\0';
        for (uint32_t pid = from; pid < to; pid++) {
                struct sym_image im = {pid, EXE, 1u << 24, 0, exe, NULL, 0, 0, 0};
                sym_image_load(store, &im);
        }
}

static void assert_rows_equal(const struct hot_row *ra, uint32_t na, const struct hot_row *rb,
                              uint32_t nb)
{
        assert_int_equal(na, nb);
        for (uint32_t i = 0; i < na; i++) {
                assert_int_equal(ra[i].module, rb[i].module);
                assert_int_equal(ra[i].function, rb[i].function);
                assert_int_equal(ra[i].rel, rb[i].rel);
                assert_int_equal(ra[i].state, rb[i].state);
                assert_int_equal(ra[i].self, rb[i].self);
                assert_int_equal(ra[i].total, rb[i].total);
                assert_int_equal(ra[i].pid, rb[i].pid);
                assert_int_equal(ra[i].tid, rb[i].tid);
                assert_string_equal(ra[i].name, rb[i].name);
        }
}

/* Builds of one grouping one after the other (each place's row from the rows' cache) give
   the rows that builds which start the cache over give (another grouping asked in between),
   while places come, decay away, move and are folded (their processes ended), for two
   profile sources, and after the counts start over: a asks one grouping, c another, b both
   in turns. */
static void test_rows_cache_same_rows(void **state)
{
        struct sym_store *store = *state;
        struct hot *m[3] = {hot_new(store, 0), hot_new(store, 0), hot_new(store, 0)};
        /* this binary in each process: its places named, their answers settled (the driver's
           never settle: no symbols came) */
        load_exe(store, 100, 140);
        uint64_t seed = 7;
        int64_t t = 1000000;
        static const enum hot_grouping groupings[] = {HOT_BY_FUNCTION, HOT_BY_PROCESS,
                                                      HOT_BY_THREAD};
        for (uint32_t round = 0; round < 42; round++) {
                for (uint32_t k = 0; k < 3; k++) {
                        if (round == 10 || round == 25)
                                hot_set_settings(
                                        m[k], &(struct agg_settings){round == 10 ? AGG_DECAYING
                                                                                 : AGG_CUMULATIVE,
                                                                     0.5, 2});
                        if (round == 30)
                                hot_reset(m[k]);
                }
                for (uint32_t s = 0; s < 500; s++) {
                        uint32_t r = rnd(&seed);
                        uint32_t pid = 100 + r % 40;
                        uint64_t ip = r % 11 == 0  ? 0x5000 + (rnd(&seed) % 64) * 8
                                      : r % 3 == 0 ? KBASE + (rnd(&seed) % 256) * 8
                                                   : EXE + 0x1000 + (rnd(&seed) % 48) * 64;
                        struct kevent ev = ev_base(r % 5 ? KEV_SAMPLE : KEV_PMC_SAMPLE, r % 4,
                                                   t += 1000, pid, pid + 1);
                        if (ev.type == KEV_SAMPLE) {
                                ev.sample.ip = ip;
                                ev.sample.tid = pid + 1;
                        } else {
                                ev.pmc_sample.ip = ip;
                                ev.pmc_sample.tid = pid + 1;
                                ev.pmc_sample.source = 2;
                        }
                        for (uint32_t k = 0; k < 3; k++)
                                hot_event(m[k], &ev);
                }
                /* two end (their unplaced places fold into the other row), their pids used
                   again */
                for (uint32_t n = 0; n < 2; n++) {
                        struct kevent ev = ev_end(t += 1000, 100 + rnd(&seed) % 40);
                        for (uint32_t k = 0; k < 3; k++)
                                hot_event(m[k], &ev);
                }
                for (uint32_t k = 0; k < 3; k++)
                        hot_refresh(m[k]);
                enum hot_grouping g = groupings[round / 14], g2 = groupings[(round / 14 + 1) % 3];
                uint16_t source = round % 3 ? HOT_SOURCE_TIMER : 2;
                const struct hot_row *ra, *rb;
                uint32_t na, nb;
                na = hot_functions_by(m[2], source, g2, false, &ra);
                nb = hot_functions_by(m[1], source, g2, false, &rb);
                assert_rows_equal(ra, na, rb, nb);
                na = hot_functions_by(m[0], source, g, false, &ra);
                nb = hot_functions_by(m[1], source, g, false, &rb);
                assert_rows_equal(ra, na, rb, nb);
                /* the top rows too (selected, then sorted) */
                na = hot_top_functions_by(m[0], source, g, true, 10, &ra);
                nb = hot_top_functions_by(m[1], source, g, true, 10, &rb);
                assert_rows_equal(ra, na, rb, nb);
        }
        for (uint32_t k = 0; k < 3; k++)
                hot_free(m[k]);
}

/* Builds one after the other of one source and grouping merge only the places counted since
   the last one (hot_row_keys.c's incremental builds), the volatile ones too (a driver's places
   never named, addresses no image holds), while samples with stacks come (the memos' settles,
   the stacks whose names wait), processes end and pids come back: every build checked against a
   whole one (hot_set_merge_check aborts on a difference), and against a model whose every
   build is a whole one (another grouping asked between its builds). */
static void test_rows_incremental(void **state)
{
        struct sym_store *store = *state;
        struct hot *a = hot_new(store, 0), *b = hot_new(store, 0);
        hot_set_merge_check(a, true);
        load_exe(store, 200, 230);
        uint64_t seed = 11;
        int64_t t = 1000000;
        for (uint32_t round = 0; round < 60; round++) {
                for (uint32_t s = 0; s < 200 + 50 * (round % 4); s++) {
                        uint32_t r = rnd(&seed);
                        uint32_t pid = 200 + r % 30;
                        uint64_t ip = r % 13 == 0  ? 0x5000 + (rnd(&seed) % 32) * 8
                                      : r % 4 == 0 ? KBASE + (rnd(&seed) % 128) * 8
                                                   : EXE + 0x1000 + (rnd(&seed) % 40) * 64;
                        uint64_t frames[6];
                        uint32_t n = rnd(&seed) % 6;
                        for (uint32_t f = 0; f < n; f++)
                                frames[f] = f % 3 == 2 ? KBASE + (rnd(&seed) % 16) * 8
                                                       : EXE + 0x1000 + (rnd(&seed) % 12) * 64;
                        if (n)
                                frames[0] = ip;
                        sample(a, b, r % 2, t += 1000, pid, ip, frames, n);
                }
                if (round % 7 == 3) {
                        struct kevent ev = ev_end(t += 1000, 200 + rnd(&seed) % 30);
                        both(a, b, &ev);
                }
                hot_refresh(a);
                hot_refresh(b);
                const struct hot_row *ra, *rb;
                uint32_t na = hot_functions_by(a, HOT_SOURCE_TIMER, HOT_BY_FUNCTION, false, &ra);
                hot_functions_by(b, HOT_SOURCE_TIMER, HOT_BY_THREAD, false, &rb);
                uint32_t nb = hot_functions_by(b, HOT_SOURCE_TIMER, HOT_BY_FUNCTION, false, &rb);
                assert_rows_equal(ra, na, rb, nb);
                /* the top rows too, as the screen asks them */
                na = hot_top_functions_by(a, HOT_SOURCE_TIMER, HOT_BY_FUNCTION, false, 20, &ra);
                hot_functions_by(b, HOT_SOURCE_TIMER, HOT_BY_THREAD, false, &rb);
                nb = hot_top_functions_by(b, HOT_SOURCE_TIMER, HOT_BY_FUNCTION, false, 20, &rb);
                assert_rows_equal(ra, na, rb, nb);
        }
        uint64_t nr_inc, nr_whole;
        hot_nr_builds(a, &nr_inc, &nr_whole);
        print_message("%llu incremental builds, %llu whole\n", (unsigned long long)nr_inc,
                      (unsigned long long)nr_whole);
        assert_true(nr_inc >= 60);
        hot_nr_builds(b, &nr_inc, &nr_whole);
        assert_int_equal(nr_inc, 0);
        hot_free(a);
        hot_free(b);
}

static int by_weight_then_pid(const void *a, const void *b)
{
        const uint32_t *x = a, *y = b; /* weight, pid */
        if (x[0] != y[0])
                return x[0] > y[0] ? -1 : 1;
        return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* feed_weighted's arrays for nr processes from base on (freed by the caller). */
static void weighted_arrays(uint32_t nr, uint32_t base, uint32_t (**ref)[2], uint8_t **weight)
{
        *ref = malloc(nr * sizeof(**ref));
        *weight = calloc(base + nr, 1);
        assert_non_null(*ref);
        assert_non_null(*weight);
}

/* nr processes from base on, in no pid order, each given 1 to 4 timer samples (its weight) at
   ip_base + (pid % ip_mod) * 8 from seed: their (weight, pid) in ref, weight by pid in weight.
   The time of the last sample. */
static int64_t feed_weighted(struct hot *h, uint32_t nr, uint32_t base, uint64_t seed,
                             uint64_t ip_base, uint32_t ip_mod, uint32_t (*ref)[2], uint8_t *weight)
{
        int64_t t = 1000000;
        for (uint32_t i = 0; i < nr; i++) {
                uint32_t pid = base + (i * 7919) % nr; /* not in pid order */
                uint32_t w = 1 + rnd(&seed) % 4;
                for (uint32_t k = 0; k < w; k++) {
                        struct kevent ev = ev_base(KEV_SAMPLE, 0, t += 1000, pid, pid + 1);
                        ev.sample.ip = ip_base + (pid % ip_mod) * 8;
                        ev.sample.tid = pid + 1;
                        hot_event(h, &ev);
                }
                ref[i][0] = w;
                ref[i][1] = pid;
                weight[pid] = (uint8_t)w;
        }
        return t;
}

/* The reference's choice of the nr (weight, pid) pairs: the keep heaviest (by_weight_then_pid)
   marked kept in an owned array of nr_pids, the others' weights added to *folded. */
static uint8_t *heaviest_kept(uint32_t (*ref)[2], uint32_t nr, uint32_t keep, uint32_t nr_pids,
                              uint64_t *folded)
{
        qsort(ref, nr, sizeof(*ref), by_weight_then_pid);
        uint8_t *is_kept = calloc(nr_pids, 1);
        assert_non_null(is_kept);
        for (uint32_t i = 0; i < nr; i++)
                if (i < keep)
                        is_kept[ref[i][1]] = 1;
                else
                        *folded += ref[i][0];
        return is_kept;
}

/* Past HOT_EXITED_MAX places of ended processes, the fold keeps exactly the heaviest half (by
   total, then self, then the lower pid) and folds the rest, however the table holds them: the
   processes whose rows stay are those a sort of every exited place puts first. */
static void test_fold_keeps_heaviest(void **state)
{
        struct sym_store *store = *state;
        struct hot *h = hot_new(store, 0);
        const uint32_t nr = HOT_EXITED_MAX + 3000, keep = HOT_EXITED_MAX / 2, base = 20000;
        uint32_t(*ref)[2];
        uint8_t *weight;
        weighted_arrays(nr, base, &ref, &weight);
        uint64_t seed = 11, folded = 0;
        int64_t t = feed_weighted(h, nr, base, seed, KBASE, 7, ref, weight);
        for (uint32_t i = 0; i < nr; i++) {
                struct kevent ev = ev_end(t += 1000, base + i);
                hot_event(h, &ev);
                if (i % 5000 == 4999)
                        hot_refresh(h);
        }
        hot_refresh(h);
        uint8_t *is_kept = heaviest_kept(ref, nr, keep, base + nr, &folded);
        const struct hot_row *rows;
        uint32_t n = hot_functions_by(h, HOT_SOURCE_TIMER, HOT_BY_PROCESS, false, &rows);
        uint32_t nr_kept = 0;
        uint64_t exited = 0;
        for (uint32_t i = 0; i < n; i++) {
                if (rows[i].pid == AGG_ALL) {
                        exited += rows[i].self;
                        continue;
                }
                assert_true(rows[i].pid >= base && rows[i].pid < base + nr);
                assert_true(is_kept[rows[i].pid]);
                assert_int_equal(rows[i].self, weight[rows[i].pid]);
                nr_kept++;
        }
        assert_int_equal(nr_kept, keep);
        assert_int_equal(exited, folded);
        free(is_kept);
        free(weight);
        free(ref);
        hot_free(h);
}

/* Past HOT_UNPLACED_MAX places no image holds, a refresh keeps exactly the heaviest (by total,
   then self, then the lower process) and folds the rest into the other row. */
static void test_unplaced_cap_keeps_heaviest(void **state)
{
        struct sym_store *store = *state;
        struct hot *h = hot_new(store, 0);
        const uint32_t nr = HOT_UNPLACED_MAX + 1500, base = 30000;
        uint32_t(*ref)[2];
        uint8_t *weight;
        weighted_arrays(nr, base, &ref, &weight);
        uint64_t seed = 5, folded = 0;
        feed_weighted(h, nr, base, seed, 0x5000, 64, ref, weight);
        hot_refresh(h);
        uint8_t *is_kept = heaviest_kept(ref, nr, HOT_UNPLACED_MAX, base + nr, &folded);
        const struct hot_row *rows;
        uint32_t n = hot_functions_by(h, HOT_SOURCE_TIMER, HOT_BY_THREAD, false, &rows);
        uint32_t nr_kept = 0;
        uint64_t other = 0;
        for (uint32_t i = 0; i < n; i++) {
                assert_int_equal(rows[i].module, 0);
                if (!rows[i].rel) {
                        other += rows[i].self;
                        continue;
                }
                uint32_t pid = rows[i].tid - 1;
                assert_true(pid >= base && pid < base + nr);
                assert_true(is_kept[pid]);
                assert_int_equal(rows[i].self, weight[pid]);
                nr_kept++;
        }
        assert_int_equal(nr_kept, HOT_UNPLACED_MAX);
        assert_int_equal(other, folded);
        free(is_kept);
        free(weight);
        free(ref);
        hot_free(h);
}

/* Short processes, each sampled at addresses of its own thread's (its places) and ended, more
   of them than a small table holds: hot_upkeep between them (the live loops' second, whatever
   the refresh) folds the ended ones' places as they go, so no sample finds the table full, and
   it decays nothing (the counts are those fed, in decaying mode); without it until the refresh,
   the table fills and the samples past it count in the other row. */
static void test_upkeep_folds_without_decay(void **state)
{
        struct sym_store *store = *state;
        struct agg_settings s;
        agg_settings_init(&s);
        s.mode = AGG_DECAYING;
        const uint32_t nr_pids = 3000, nr_addr = 8, batch = 100, base = 40000;
        for (int with_upkeep = 1; with_upkeep >= 0; with_upkeep--) {
                struct hot *h = hot_new(store, 8192);
                hot_set_settings(h, &s);
                int64_t t = 1000;
                uint64_t nr_fed = 0;
                for (uint32_t b = 0; b < nr_pids; b += batch) {
                        for (uint32_t p = b; p < b + batch; p++)
                                for (uint32_t k = 0; k < nr_addr; k++) {
                                        sample(h, NULL, 0, t += 1000, base + p,
                                               KBASE + 0x100 * k + 0x10, NULL, 0);
                                        nr_fed++;
                                }
                        for (uint32_t p = b; p < b + batch; p++) {
                                struct kevent ev = ev_end(t += 1000, base + p);
                                hot_event(h, &ev);
                        }
                        if (with_upkeep)
                                hot_upkeep(h);
                }
                struct hot_caps c;
                hot_caps(h, &c);
                const struct hot_row *rows;
                uint32_t n = hot_functions_by(h, HOT_SOURCE_TIMER, HOT_BY_FUNCTION, false, &rows);
                uint64_t self = 0;
                for (uint32_t i = 0; i < n; i++)
                        self += rows[i].self;
                if (with_upkeep) {
                        assert_int_equal(c.nr_samples_no_room, 0);
                        assert_true(c.nr_exited_folded > 0);
                        assert_int_equal(self, nr_fed); /* nothing decayed */
                } else {
                        assert_true(c.nr_samples_no_room > 0);
                }
                hot_free(h);
        }
}

/* Past the cap on ended processes' places, those their stacks only passed through (no sample
   of their own at that address) fold into their function's first byte, one place a function,
   where those with samples of their own fold one an address: the rows by function stay what
   they were before the processes ended, and the table holds one place for the callers' eight
   addresses. */
static void test_exited_callers_fold_per_function(void **state)
{
        (void)state;
        const uint32_t base = 3000, nr = 200, keep = 64 / 2; /* hot_new(..., 1024): 64 at most */
        struct sym_store *store = NULL;
        struct sym_options o = {.is_synchronous = true, .is_live = true, .log = quiet_log};
        assert_int_equal(sym_store_new(&store, &o), 0);
        load_exe(store, base, base + nr);
        /* two functions of this binary: the callers' f (128 bytes at least), the leaves' g */
        uint64_t f_start = 0, f_size = 0, g_start = 0, g_size = 0;
        uint32_t module = 0;
        for (uint64_t rel = 0x1000; rel < (8u << 20) && !g_size; rel += 16) {
                struct sym_loc loc = sym_locate(store, base, EXE + rel);
                uint64_t start, size;
                if (!loc.module || !sym_function_range(store, loc, &start, &size))
                        continue;
                module = loc.module;
                if (!f_size && size >= 128) {
                        f_start = start;
                        f_size = size;
                } else if (f_size && start > f_start) {
                        g_start = start;
                        g_size = size;
                }
                rel = start + size - 16 > rel ? start + size - 16 : rel;
        }
        assert_true(f_size >= 128 && g_size > 0);
        struct hot *h = hot_new(store, 1024), *ref = hot_new(store, 1024);
        int64_t t = 1000;
        for (uint32_t i = 0; i < nr; i++) {
                uint32_t pid = base + i;
                uint64_t frames[2] = {EXE + g_start, EXE + f_start + 8 + 4 * (i % 8)};
                sample(h, ref, 0, t += 1000, pid, frames[0], frames, 2);
        }
        hot_refresh(h);
        assert_int_equal(hot_nr_places(h), 2 * nr);
        for (uint32_t i = 0; i < nr; i++) {
                struct kevent ev = ev_end(t += 1000, base + i);
                hot_event(h, &ev);
        }
        hot_refresh(h);
        hot_refresh(h);
        /* the heaviest half of the cap stays (the leaves of the first processes: a sample
           each, where the callers have none), the other leaves fold into one place at their
           address, every caller into one at f's first byte */
        assert_int_equal(hot_nr_places(h), keep + 2);
        struct hot_place pl[16];
        const struct hot_row *ra, *rb;
        uint32_t na = hot_functions_by(h, HOT_SOURCE_TIMER, HOT_BY_FUNCTION, false, &ra);
        uint32_t fn = 0;
        for (uint32_t i = 0; i < na; i++)
                if (ra[i].module == module && ra[i].total == nr && ra[i].self == 0)
                        fn = ra[i].function;
        assert_int_not_equal(fn, 0);
        uint32_t n = hot_function_places(h, HOT_SOURCE_TIMER, module, fn, pl, 16);
        assert_int_equal(n, 1);
        assert_int_equal(pl[0].rel, f_start);
        assert_int_equal(pl[0].self, 0);
        assert_int_equal(pl[0].total, nr);
        /* the rows by function: those of the model whose processes did not end */
        hot_refresh(ref);
        uint32_t nb = hot_functions_by(ref, HOT_SOURCE_TIMER, HOT_BY_FUNCTION, false, &rb);
        assert_int_equal(na, nb);
        for (uint32_t i = 0; i < na; i++) {
                bool is_found = false;
                for (uint32_t j = 0; j < nb && !is_found; j++)
                        is_found = ra[i].module == rb[j].module &&
                                   ra[i].function == rb[j].function && ra[i].self == rb[j].self &&
                                   ra[i].total == rb[j].total;
                assert_true(is_found);
        }
        struct hot_caps c;
        hot_caps(h, &c);
        assert_int_equal(c.nr_exited_folded, 2 * nr - keep);
        hot_free(h);
        hot_free(ref);
        sym_store_free(store);
}

/* A store as a live session's (sym_store_is_live) or a trace read's, with this binary at EXE in
   process pid: addresses past its file, inside the mapping, are in no function (a stripped
   library's internal ones: module, no name), their answers settled. */
static struct sym_store *unnamed_store(bool is_live, uint32_t pid)
{
        struct sym_store *store = NULL;
        struct sym_options o = {.is_synchronous = true, .is_live = is_live, .log = quiet_log};
        assert_int_equal(sym_store_new(&store, &o), 0);
        load_exe(store, pid, pid + 1);
        return store;
}

/* The weight of unnamed address k of the cap test: ties in runs of 4, none at the cut (96) */
static uint64_t unnamed_weight(uint32_t k)
{
        return 1 + (k * 37u % 300u) / 4u;
}

/* More unnamed addresses than a live view keeps (hot_new(..., 1024): 128): at the upkeep after
   the rows named none of them, the heaviest three quarters of the cap stay one by one and the
   others fold into one place of their module (HOT_REL_UNNAMED_REST) with their samples; the
   next incremental builds agree with whole ones (the merge check); a trace read folds none. */
static void test_unnamed_cap_keeps_heaviest(void **state)
{
        (void)state;
        const uint32_t pid = 4242, nr = 300, keep = 128 - 128 / 4;
        const uint64_t far = EXE + (12u << 20); /* past this binary's file, inside its mapping */
        for (int is_live = 1; is_live >= 0; is_live--) {
                struct sym_store *store = unnamed_store(is_live, pid);
                struct hot *h = hot_new(store, 1024);
                hot_set_merge_check(h, true);
                int64_t t = 1000;
                uint64_t nr_fed = 0;
                for (uint32_t k = 0; k < nr; k++)
                        for (uint64_t w = 0; w < unnamed_weight(k); w++, nr_fed++)
                                sample(h, NULL, 0, t += 1000, pid, far + 16 * k, NULL, 0);
                const struct hot_row *rows;
                uint32_t n = hot_functions_by(h, HOT_SOURCE_TIMER, HOT_BY_FUNCTION, false, &rows);
                assert_int_equal(n, nr); /* named nothing: a row each */
                for (uint32_t i = 0; i < n; i++) {
                        assert_int_equal(rows[i].function, 0);
                        assert_int_not_equal(rows[i].module, 0);
                        assert_int_equal(rows[i].state, SYM_NO_SYMBOL);
                }
                hot_upkeep(h);
                /* a sample more at the heaviest address (kept) and one at address 0 (weight 1:
                   folded), after the fold */
                uint32_t heaviest = 0;
                for (uint32_t k = 1; k < nr; k++)
                        if (unnamed_weight(k) > unnamed_weight(heaviest))
                                heaviest = k;
                sample(h, NULL, 0, t += 1000, pid, far + 16 * heaviest, NULL, 0);
                sample(h, NULL, 0, t += 1000, pid, far, NULL, 0);
                nr_fed += 2;
                n = hot_functions_by(h, HOT_SOURCE_TIMER, HOT_BY_FUNCTION, false, &rows);
                struct hot_caps c;
                hot_caps(h, &c);
                uint64_t self = 0, rest = 0;
                uint32_t nr_rest = 0, nr_kept = 0;
                uint64_t min_kept = UINT64_MAX;
                for (uint32_t i = 0; i < n; i++) {
                        self += rows[i].self;
                        if (rows[i].rel == HOT_REL_UNNAMED_REST) {
                                nr_rest++;
                                rest = rows[i].self;
                                assert_int_equal(rows[i].total, rows[i].self);
                                continue;
                        }
                        nr_kept++;
                        uint32_t k = (uint32_t)((rows[i].rel - (far - EXE)) / 16);
                        assert_true(k < nr);
                        if (k == heaviest)
                                assert_int_equal(rows[i].self, unnamed_weight(k) + 1);
                        else if (k == 0) /* folded live: its own row once more */
                                assert_int_equal(rows[i].self, is_live ? 1 : unnamed_weight(0) + 1);
                        if (k != 0 && unnamed_weight(k) < min_kept)
                                min_kept = unnamed_weight(k);
                }
                assert_int_equal(self, nr_fed); /* no sample lost by the fold */
                if (!is_live) {
                        assert_int_equal(c.nr_unnamed_folded, 0);
                        assert_int_equal(nr_rest, 0);
                        assert_int_equal(nr_kept, nr);
                } else {
                        assert_int_equal(c.nr_unnamed_folded, nr - keep);
                        assert_int_equal(nr_rest, 1);
                        /* the kept: the heaviest (each at least as heavy as every folded one),
                           and the folded address 0 sampled again, a row of its own once more */
                        uint32_t nr_heavier = 0;
                        uint64_t max_folded = 0;
                        for (uint32_t k = 0; k < nr; k++)
                                nr_heavier += unnamed_weight(k) >= min_kept;
                        assert_int_equal(nr_heavier, keep);
                        for (uint32_t k = 0; k < nr; k++)
                                if (unnamed_weight(k) < min_kept && unnamed_weight(k) > max_folded)
                                        max_folded = unnamed_weight(k);
                        uint64_t folded = 0;
                        for (uint32_t k = 0; k < nr; k++)
                                folded += unnamed_weight(k) < min_kept ? unnamed_weight(k) : 0;
                        assert_int_equal(rest, folded);
                        assert_true(max_folded < min_kept);
                        assert_int_equal(nr_kept, keep + 1);
                }
                hot_free(h);
                sym_store_free(store);
        }
}

/* Places for a table past HOT_GROW_SLOW slots, where it grows by a quarter (any multiple of 64,
   its home slots the hash's high half scaled): 200,000 places of 64 threads, every third of
   them sampled twice, found again at each sample, merged into as many rows (incremental builds
   checked against whole ones); a decay drops the places sampled once and puts the others back
   in a table made again; 200,000 more after it grow it again. */
static void test_table_grows_by_quarter(void **state)
{
        struct sym_store *store = *state;
        struct hot *h = hot_new(store, 0);
        hot_set_merge_check(h, true);
        const uint32_t nr = 200000;
        int64_t t = 1000000;
        uint64_t nr_fed = 0;
        for (uint32_t round = 0; round < 2; round++) {
                for (uint32_t i = 0; i < nr; i++)
                        for (uint32_t k = 0; k < 1u + (i % 3 == 0); k++, nr_fed++) {
                                uint32_t pid = 100 + i % 64;
                                struct kevent ev = ev_base(KEV_SAMPLE, 0, t += 1000, pid, pid + 1);
                                ev.sample.ip = KBASE + round * 0x80000 + (i / 64) * 4;
                                ev.sample.tid = pid + 1;
                                hot_event(h, &ev);
                        }
                const struct hot_row *rows;
                uint32_t n = hot_functions_by(h, HOT_SOURCE_TIMER, HOT_BY_THREAD, false, &rows);
                uint32_t nr_kept = round ? (nr + 2) / 3 : 0; /* the first round's, decayed */
                assert_int_equal(n, nr + nr_kept);
                uint64_t self = 0;
                for (uint32_t i = 0; i < n; i++)
                        self += rows[i].self;
                assert_int_equal(self, nr_fed);
                struct hot_caps c;
                hot_caps(h, &c);
                assert_int_equal(c.nr_samples_no_room, 0);
                /* half of each count: those sampled once drop, the others stay with 1 */
                hot_set_settings(h, &(struct agg_settings){AGG_DECAYING, 0.5, 1});
                hot_refresh(h);
                hot_set_settings(h, &(struct agg_settings){AGG_CUMULATIVE, 0, 0});
                n = hot_functions_by(h, HOT_SOURCE_TIMER, HOT_BY_THREAD, false, &rows);
                assert_int_equal(n, (nr + 2) / 3); /* this round's twice sampled, at 1 */
                nr_fed = 0;
                for (uint32_t i = 0; i < n; i++)
                        nr_fed += rows[i].self;
        }
        hot_free(h);
}

/* A refresh that decays the counts puts the places back in a table made again, and a reset
   empties it: the builds after each find every place there is, and none that went. */
static void test_rows_after_decay_and_reset(void **state)
{
        struct sym_store *store = *state;
        struct hot *h = hot_new(store, 0);
        int64_t t = 1000000;
        for (uint32_t round = 0; round < 2; round++) {
                for (uint32_t i = 0; i < 3000; i++)
                        for (uint32_t k = 0; k < 4; k++) {
                                uint32_t pid = 100 + i % 30;
                                struct kevent ev = ev_base(KEV_SAMPLE, 0, t += 1000, pid, pid + 1);
                                ev.sample.ip = KBASE + (i / 30) * 8;
                                ev.sample.tid = pid + 1;
                                hot_event(h, &ev);
                        }
                const struct hot_row *rows;
                /* the first build, then the cached ones */
                assert_int_equal(hot_functions_by(h, HOT_SOURCE_TIMER, HOT_BY_THREAD, false, &rows),
                                 3000);
                hot_set_settings(h, &(struct agg_settings){AGG_DECAYING, 0.5, 1});
                hot_refresh(h);
                uint32_t n = hot_functions_by(h, HOT_SOURCE_TIMER, HOT_BY_THREAD, false, &rows);
                assert_int_equal(n, 3000);
                for (uint32_t i = 0; i < n; i++)
                        assert_int_equal(rows[i].self, 2);
                hot_set_settings(h, &(struct agg_settings){AGG_CUMULATIVE, 0, 0});
                hot_reset(h);
                assert_int_equal(hot_functions_by(h, HOT_SOURCE_TIMER, HOT_BY_THREAD, false, &rows),
                                 0);
        }
        hot_free(h);
}

/* pid's samples at 8 addresses from ip. */
static void unplaced_samples(struct hot *h, uint32_t pid, uint64_t ip, int64_t *t)
{
        for (uint32_t k = 0; k < 8; k++) {
                struct kevent ev = ev_base(KEV_SAMPLE, 0, *t += 1000, pid, pid + 1);
                ev.sample.ip = ip + k * 8;
                ev.sample.tid = pid + 1;
                hot_event(h, &ev);
        }
        hot_refresh(h);
}

/* Process pid's image (this program's file) at 0x7000 (4 KiB), in the store and as its event to
   h. */
static void image_comes(struct hot *h, struct sym_store *store, uint32_t pid, int64_t *t)
{
        char exe[4096];
        ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        assert_true(len > 0);
        exe[len] = '\0';
        struct sym_image im = {pid, 0x7000, 0x1000, 0, exe, NULL, 0, 0, 0};
        sym_image_load(store, &im);
        struct kevent ev = ev_base(KEV_IMAGE, 0, *t += 1000, pid, 0);
        ev.image.pid = pid;
        ev.image.base = 0x7000;
        ev.image.size = 0x1000;
        ev.image.file_name = exe;
        hot_event(h, &ev);
}

/* How many of the rows by function are of no image. */
static uint32_t nr_unplaced_rows(struct hot *h)
{
        const struct hot_row *rows;
        uint32_t n = hot_functions_by(h, HOT_SOURCE_TIMER, HOT_BY_FUNCTION, false, &rows), nr = 0;
        for (uint32_t i = 0; i < n; i++)
                nr += rows[i].module == 0;
        return nr;
}

/* The rows of places no image held (kept between builds, hot_row_keys.c) follow what comes
   to place them: a recording's image of their process (its event), and live, a JIT map that
   the process writes after its samples (sym_locate looks for it once a refresh). */
static void test_rows_cache_unplaced(void **state)
{
        struct sym_store *store = *state;
        struct hot *h = hot_new(store, 0);
        int64_t t = 1000000;
        unplaced_samples(h, 200, 0x7000, &t);
        /* the first build, the second (which keeps their rows), the third (which reads them) */
        for (uint32_t b = 0; b < 3; b++)
                assert_int_equal(nr_unplaced_rows(h), 8);
        /* the image comes, with its event */
        image_comes(h, store, 200, &t);
        assert_int_equal(nr_unplaced_rows(h), 0);
        hot_free(h);

        /* live: a process's JIT map, written after its samples */
        uint32_t pid = (uint32_t)getpid();
        char path[64];
        snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
        unlink(path);
        struct sym_options o = {.is_live = true, .is_synchronous = true, .log = quiet_log};
        struct sym_store *live = NULL;
        assert_int_equal(sym_store_new(&live, &o), 0);
        h = hot_new(live, 0);
        unplaced_samples(h, pid, 0x10000010, &t);
        for (uint32_t b = 0; b < 3; b++) {
                sym_store_poll(live); /* the screen's refresh */
                assert_int_equal(nr_unplaced_rows(h), 8);
        }
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, "10000000 100 jit_compiled_loop\n");
        fclose(f);
        sym_store_poll(live);
        uint32_t nr = nr_unplaced_rows(h);
        unlink(path);
        assert_int_equal(nr, 0);
        hot_free(h);
        sym_store_free(live);
}

/* A replay builds its rows over and over as the file is read (no refresh places them): an
   incremental build given up part way (a row's heaviest place left it: the places of one
   address in two processes, the heavier placed by its image) must not have the whole build
   after it take the addresses it never looked at again as still of no image: the images of a
   window saved without its start come in its end rundown, between two builds, and the rows
   stayed [unknown] for good (screen_tmux_keys under load). */
static void test_rows_unplaced_after_given_up_build(void **state)
{
        struct sym_store *store = *state;
        struct hot *h = hot_new(store, 0);
        int64_t t = 1000000;
        /* 16 addresses, each sampled 3 times in process 300 and once in 301: one row each */
        for (uint32_t k = 0; k < 16; k++)
                for (uint32_t n = 0; n < 4; n++) {
                        uint32_t pid = n < 3 ? 300 : 301;
                        struct kevent ev = ev_base(KEV_SAMPLE, 0, t += 1000, pid, pid + 1);
                        ev.sample.ip = 0x7000 + k * 8;
                        ev.sample.tid = pid + 1;
                        hot_event(h, &ev);
                }
        for (uint32_t b = 0; b < 3; b++)
                assert_int_equal(nr_unplaced_rows(h), 16);
        /* process 300's image comes: its places leave the rows they were the heaviest of */
        image_comes(h, store, 300, &t);
        /* every one of process 300's samples in the image's rows, once and at every build after */
        for (uint32_t b = 0; b < 3; b++) {
                const struct hot_row *rows;
                uint32_t n = hot_functions_by(h, HOT_SOURCE_TIMER, HOT_BY_FUNCTION, false, &rows);
                uint64_t placed = 0, unplaced = 0;
                for (uint32_t i = 0; i < n; i++)
                        *(rows[i].module ? &placed : &unplaced) += rows[i].self;
                assert_int_equal(placed, 48);
                assert_int_equal(unplaced, 16);
        }
        uint64_t nr_inc, nr_whole;
        hot_nr_builds(h, &nr_inc, &nr_whole);
        assert_true(nr_inc >= 1); /* an incremental build was tried, then whole ones made */
        hot_free(h);
}

/* A process storm: short processes, each sampled at addresses no image holds (new ones each)
   and ended, beside long ones whose many places (a place a thread and address) merge into few
   rows. The keys of the ended processes' rows are dropped as they outnumber those named by half
   (and 8192), not when they outnumber twice the places (the arrays filled to that over half an
   hour of bench/rss.sh), and the rows stay those of builds that start the cache over. */
static void test_rows_keys_compacted(void **state)
{
        struct sym_store *store = *state;
        struct hot *a = hot_new(store, 0), *b = hot_new(store, 0);
        load_exe(store, 100, 140);
        int64_t t = 1000000;
        for (uint32_t pid = 100; pid < 140; pid++)
                for (uint32_t i = 0; i < 1500; i++)
                        sample(a, b, pid % 4, t += 1000, pid, EXE + 0x1000 + i * 4, NULL, 0);
        uint64_t seed = 11;
        uint32_t pid = 1000, most = 0, last = 0, nr_drops = 0;
        for (uint32_t round = 0; round < 50; round++) {
                /* the last round's processes end, the new ones sampled */
                for (uint32_t p = pid - (round ? 200 : 0); p < pid; p++) {
                        struct kevent ev = ev_end(t += 1000, p);
                        both(a, b, &ev);
                }
                for (uint32_t p = 0; p < 200; p++, pid++)
                        for (uint32_t k = 0; k < 4; k++)
                                sample(a, b, k % 4, t += 1000, pid,
                                       0x50000000ull + (uint64_t)(rnd(&seed) % (1u << 24)) * 8,
                                       NULL, 0);
                hot_refresh(a);
                hot_refresh(b);
                const struct hot_row *ra, *rb;
                uint32_t na = hot_functions_by(a, HOT_SOURCE_TIMER, HOT_BY_FUNCTION, false, &ra);
                uint32_t nr_keys = hot_nr_row_keys(a);
                most = nr_keys > most ? nr_keys : most;
                nr_drops += nr_keys < last;
                last = nr_keys;
                hot_functions_by(b, HOT_SOURCE_TIMER, HOT_BY_PROCESS, false, &rb);
                uint32_t nb = hot_functions_by(b, HOT_SOURCE_TIMER, HOT_BY_FUNCTION, false, &rb);
                assert_rows_equal(ra, na, rb, nb);
        }
        /* 40,000 keys made for the ended processes' addresses beside 60,000 places: dropped
           several times over, never past the bound */
        assert_true(nr_drops >= 2);
        assert_true(most < 16384);
        hot_free(a);
        hot_free(b);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_fold_lists_same_rows, setup, teardown),
                cmocka_unit_test_setup_teardown(test_fold_few_ended_no_scan, setup, teardown),
                cmocka_unit_test_setup_teardown(test_fold_keeps_heaviest, setup, teardown),
                cmocka_unit_test_setup_teardown(test_unplaced_cap_keeps_heaviest, setup, teardown),
                cmocka_unit_test_setup_teardown(test_rows_after_decay_and_reset, setup, teardown),
                cmocka_unit_test_setup_teardown(test_rows_cache_same_rows, setup, teardown),
                cmocka_unit_test_setup_teardown(test_rows_cache_unplaced, setup, teardown),
                cmocka_unit_test_setup_teardown(test_rows_incremental, setup, teardown),
                cmocka_unit_test_setup_teardown(test_rows_unplaced_after_given_up_build, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_rows_keys_compacted, setup, teardown),
                cmocka_unit_test_setup_teardown(test_upkeep_folds_without_decay, setup, teardown),
                cmocka_unit_test(test_unnamed_cap_keeps_heaviest),
                cmocka_unit_test(test_exited_callers_fold_per_function),
                cmocka_unit_test_setup_teardown(test_table_grows_by_quarter, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
