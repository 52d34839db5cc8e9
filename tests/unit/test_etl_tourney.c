/* SPDX-License-Identifier: MIT */
/* test_etl_tourney.c: cmocka tests for the .etl reader's merge of its streams (etl_tourney.h),
   held against a scan of every stream's head. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>

#include "etl_tourney.h"

static uint64_t rng_next(uint64_t *s)
{
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

/* The reader's order by a scan: the least timestamp, on a tie the lower stream; a done stream
   after every other. */
static uint32_t scan_least(const uint64_t *ts, const bool *is_done, uint32_t nr)
{
        uint32_t best = UINT32_MAX;
        for (uint32_t i = 0; i < nr; i++) {
                if (is_done[i])
                        continue;
                if (best == UINT32_MAX || ts[i] < ts[best])
                        best = i;
        }
        return best;
}

/* Streams of 1 to 20 (non-powers of two, one leaf), timestamps from a narrow range (ties often)
   or a wide one (UINT64_MAX included, the done entries' timestamp), streams running out at
   random: each winner is the scan's, and the tree says done exactly when every stream is. */
static void test_tourney_against_scan(void **state)
{
        (void)state;
        uint64_t s = 0x1234567ull;

        for (int round = 0; round < 2000; round++) {
                uint32_t nr = 1 + (uint32_t)(rng_next(&s) % 20);
                bool is_narrow = round % 2;
                uint64_t ts[20];
                bool is_done[20];
                unsigned left[20];
                struct etl_tourney t = {0};

                assert_int_equal(etl_tourney_init(&t, nr), 0);
                for (uint32_t i = 0; i < nr; i++) {
                        ts[i] = is_narrow ? rng_next(&s) % 4 : rng_next(&s);
                        if (!is_narrow && rng_next(&s) % 10 == 0)
                                ts[i] = UINT64_MAX;
                        left[i] = (unsigned)(rng_next(&s) % 30);
                        is_done[i] = rng_next(&s) % 8 == 0;
                        etl_tourney_set(&t, i,
                                        is_done[i] ? etl_tourney_done(i)
                                                   : etl_tourney_make(ts[i], i));
                }
                etl_tourney_build(&t);
                for (;;) {
                        uint32_t want = scan_least(ts, is_done, nr);
                        etl_tourney_entry top = etl_tourney_top(&t);
                        if (want == UINT32_MAX) {
                                assert_true(etl_tourney_is_done(top));
                                break;
                        }
                        assert_false(etl_tourney_is_done(top));
                        assert_int_equal(etl_tourney_stream(top), want);
                        /* the stream's next record: mostly later, sometimes earlier (a file's
                           stream need not be in order) */
                        if (left[want]-- == 0) {
                                is_done[want] = true;
                                etl_tourney_replace_top(&t, etl_tourney_done(want));
                                continue;
                        }
                        if (is_narrow)
                                ts[want] += rng_next(&s) % 3;
                        else if (rng_next(&s) % 50 == 0)
                                ts[want] = rng_next(&s);
                        else if (ts[want] < UINT64_MAX - 1000)
                                ts[want] += rng_next(&s) % 1000;
                        etl_tourney_replace_top(&t, etl_tourney_make(ts[want], want));
                }
                etl_tourney_free(&t);
        }
}

/* A record at the greatest timestamp still comes before a done stream's entry, a lower
   stream's before a higher one's; free accepts a zeroed tree. */
static void test_tourney_edges(void **state)
{
        (void)state;
        struct etl_tourney t = {0};

        etl_tourney_free(&t);
        assert_int_equal(etl_tourney_init(&t, 3), 0);
        etl_tourney_set(&t, 0, etl_tourney_done(0));
        etl_tourney_set(&t, 1, etl_tourney_make(UINT64_MAX, 1));
        etl_tourney_set(&t, 2, etl_tourney_make(UINT64_MAX, 2));
        etl_tourney_build(&t);
        assert_int_equal(etl_tourney_stream(etl_tourney_top(&t)), 1);
        assert_false(etl_tourney_is_done(etl_tourney_top(&t)));
        etl_tourney_replace_top(&t, etl_tourney_done(1));
        assert_int_equal(etl_tourney_stream(etl_tourney_top(&t)), 2);
        etl_tourney_replace_top(&t, etl_tourney_done(2));
        assert_true(etl_tourney_is_done(etl_tourney_top(&t)));
        etl_tourney_free(&t);
        etl_tourney_free(&t);
}

/* The reader's calls (etl_tourney_replace_top_at, etl_tourney_winner) against the scan: a run
   that stays within the narrow keys' range stays narrow (the 64-bit matches are the ones
   played), and a record before the least timestamp of the build or too far after it turns the
   tree wide mid-run with the order unchanged (a narrow key made of such a timestamp would wrap
   and rank the record wrongly; test_tourney_against_scan's base at UINT64_MAX checks the
   build's bound on the base). Streams of 2 to 70,
   so that the stream bits span 1 to 7 (one stream has none, and its tree is always wide). */
static void test_tourney_narrow_against_scan(void **state)
{
        (void)state;
        uint64_t s = 0xfeedbeefull;

        for (int round = 0; round < 3000; round++) {
                uint32_t nr = 2 + (uint32_t)(rng_next(&s) % 69);
                int kind = round % 3; /* 0 stays in range, 1 goes below, 2 goes far above */
                uint64_t ts[70];
                bool is_done[70];
                unsigned left[70];
                struct etl_tourney t = {0};
                uint64_t origin = rng_next(&s) >> (1 + rng_next(&s) % 63); /* below 2^63 */

                assert_int_equal(etl_tourney_init(&t, nr), 0);
                for (uint32_t i = 0; i < nr; i++) {
                        ts[i] = origin + 1000 + rng_next(&s) % 8;
                        left[i] = (unsigned)(rng_next(&s) % 40);
                        is_done[i] = rng_next(&s) % 8 == 0;
                        etl_tourney_set(&t, i,
                                        is_done[i] ? etl_tourney_done(i)
                                                   : etl_tourney_make(ts[i], i));
                }
                etl_tourney_build(&t);
                assert_false(t.is_wide);
                for (int step = 0;; step++) {
                        uint32_t want = scan_least(ts, is_done, nr), got = UINT32_MAX;
                        bool has = etl_tourney_winner(&t, &got);
                        if (want == UINT32_MAX) {
                                assert_false(has);
                                assert_true(etl_tourney_top_is_done(&t));
                                break;
                        }
                        assert_true(has);
                        assert_int_equal(got, want);
                        assert_int_equal(etl_tourney_top_stream(&t), want);
                        assert_true(etl_tourney_top(&t) == etl_tourney_make(ts[want], want));
                        if (left[want]-- == 0) {
                                is_done[want] = true;
                                etl_tourney_replace_top_at(&t, want, false, 0);
                                continue;
                        }
                        ts[want] += rng_next(&s) % 3;
                        if (step == 20 && kind == 1)
                                ts[want] = origin + rng_next(&s) % 1000; /* before the base */
                        else if (step == 20 && kind == 2)
                                ts[want] = UINT64_MAX - rng_next(&s) % 2;
                        etl_tourney_replace_top_at(&t, want, true, ts[want]);
                }
                if (kind == 0)
                        assert_false(t.is_wide);
                etl_tourney_free(&t);
        }
}

/* The narrow keys' edges: a record at base + limit - 1 stays narrow and ranks before a done
   stream; one at base + limit turns the tree wide and still ranks before it; a tie goes to the
   lower stream in both forms. */
static void test_tourney_narrow_edges(void **state)
{
        (void)state;
        struct etl_tourney t = {0};

        assert_int_equal(etl_tourney_init(&t, 3), 0); /* 2 stream bits */
        etl_tourney_set(&t, 0, etl_tourney_make(100, 0));
        etl_tourney_set(&t, 1, etl_tourney_make(100, 1));
        etl_tourney_set(&t, 2, etl_tourney_done(2));
        etl_tourney_build(&t);
        assert_false(t.is_wide);
        uint32_t i;
        assert_true(etl_tourney_winner(&t, &i));
        assert_int_equal(i, 0);
        etl_tourney_replace_top_at(&t, 0, true, 100 + t.limit - 1);
        assert_false(t.is_wide);
        assert_true(etl_tourney_winner(&t, &i));
        assert_int_equal(i, 1);
        etl_tourney_replace_top_at(&t, 1, true, 100 + t.limit);
        assert_true(t.is_wide);
        assert_true(etl_tourney_winner(&t, &i));
        assert_int_equal(i, 0);
        assert_true(etl_tourney_top(&t) == etl_tourney_make(100 + t.limit - 1, 0));
        etl_tourney_replace_top_at(&t, 0, false, 0);
        assert_true(etl_tourney_winner(&t, &i));
        assert_int_equal(i, 1);
        etl_tourney_replace_top_at(&t, 1, false, 0);
        assert_false(etl_tourney_winner(&t, &i));
        etl_tourney_free(&t);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_tourney_against_scan),
                cmocka_unit_test(test_tourney_edges),
                cmocka_unit_test(test_tourney_narrow_against_scan),
                cmocka_unit_test(test_tourney_narrow_edges),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
