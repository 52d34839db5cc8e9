/* SPDX-License-Identifier: MIT */
/* test_session_rt.c: a real-time consumer's queue in the session core (session_rt.c) as the
   logger fills it and the consumer empties it: the buffers the consumer is done with are kept
   for the next copies, a wake-up's batch and as many again, so that a queue that fills and
   empties batch after batch takes no new memory (each new buffer's pages were faulted in and
   zeroed); and what it keeps stays within its bounds, and goes back to the budget when the queue
   is freed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "session_int.h"
#include "session_mem.h"

#define BUF_SIZE ((uint32_t)64 << 10)

/* The budget's bytes taken now: the largest take that still fits tells it. */
static size_t mem_taken(void)
{
        size_t max = session_mem_max(), lo = 0, hi = max;
        /* the largest n in [0, max] that fits is max - taken */
        while (lo < hi) {
                size_t mid = lo + (hi - lo + 1) / 2;
                if (session_mem_take(mid)) {
                        session_mem_give(mid);
                        lo = mid;
                } else {
                        hi = mid - 1;
                }
        }
        return max - lo;
}

/* The consumer's side as session_rt_next has it: the buffer handed out before is kept (or
   freed) when the next one is taken. */
struct consumer {
        struct rt_queue *q;
        uint8_t *current;
};

static uint8_t *consumer_next(struct consumer *c)
{
        if (c->current && !session_rt_queue_keep(c->q, c->current))
                session_rt_buf_free(c->current, c->q->buffer_size);
        c->current = session_rt_queue_pop(c->q);
        return c->current;
}

/* n buffers queued, the i-th filled with round * 256 + i. */
static void push_batch(struct rt_queue *q, uint8_t *src, uint32_t round, uint32_t n)
{
        for (uint32_t i = 0; i < n; i++) {
                memset(src, (int)((round * 256 + i) & 0xff), BUF_SIZE);
                assert_true(session_rt_queue_push(q, src));
        }
}

/* n buffers taken, each the copy queued. */
static void take_batch(struct consumer *c, uint32_t round, uint32_t n)
{
        for (uint32_t i = 0; i < n; i++) {
                const uint8_t *b = consumer_next(c);
                assert_non_null(b);
                uint8_t want = (uint8_t)((round * 256 + i) & 0xff);
                assert_int_equal(b[0], want);
                assert_int_equal(b[BUF_SIZE - 1], want);
        }
}

/* A test's queue of CAP buffers, its consumer, a source buffer to copy from, and what the
   budget held before the queue was made. */
struct fixture {
        size_t before;
        struct rt_queue q;
        struct consumer c;
        uint8_t *src;
};

static void fixture_init(struct fixture *f, uint32_t cap)
{
        f->before = mem_taken();
        assert_int_equal(session_rt_queue_init(&f->q, cap, BUF_SIZE), 0);
        f->c = (struct consumer){.q = &f->q};
        f->src = malloc(BUF_SIZE);
        assert_non_null(f->src);
}

/* The queue freed gives the budget back whole. */
static void fixture_free(struct fixture *f)
{
        session_rt_queue_free(&f->q);
        assert_int_equal(mem_taken(), f->before);
        free(f->src);
}

/* Batches of RT_WAKE_BATCH, filled and emptied in turn: after the first, every copy goes into a
   buffer the consumer gave back, and the budget holds what the first batch took. */
static void test_batches_take_no_new_buffers(void **state)
{
        (void)state;
        struct fixture f;
        fixture_init(&f, 64);
        for (uint32_t round = 0; round < 20; round++) {
                push_batch(&f.q, f.src, round, RT_WAKE_BATCH);
                /* the batch took the spares the one before left, and nothing else */
                if (round > 0) {
                        assert_int_equal(f.q.nr_spare, 0);
                        assert_int_equal(mem_taken() - f.before, (size_t)RT_WAKE_BATCH * BUF_SIZE);
                }
                take_batch(&f.c, round, RT_WAKE_BATCH);
                assert_null(consumer_next(&f.c)); /* the last one kept: the queue is empty */
                assert_int_equal(f.q.nr_spare, RT_WAKE_BATCH);
                assert_int_equal(mem_taken() - f.before, (size_t)RT_WAKE_BATCH * BUF_SIZE);
        }
        fixture_free(&f);
}

/* A burst past the spares: the queue keeps RT_SPARES and frees the rest (memory stays flat at
   that, whatever the bursts); the next burst's first RT_SPARES copies reuse them. */
static void test_burst_keeps_at_most_spares(void **state)
{
        (void)state;
        struct fixture f;
        fixture_init(&f, 64);
        uint32_t burst = RT_SPARES + 12;
        for (uint32_t round = 0; round < 3; round++) {
                push_batch(&f.q, f.src, round, burst);
                assert_int_equal(mem_taken() - f.before, (size_t)burst * BUF_SIZE);
                take_batch(&f.c, round, burst);
                assert_null(consumer_next(&f.c));
                assert_int_equal(f.q.nr_spare, RT_SPARES);
                assert_int_equal(mem_taken() - f.before, (size_t)RT_SPARES * BUF_SIZE);
        }
        fixture_free(&f);
}

/* A queue of fewer buffers than RT_SPARES keeps no more, queued and spare together, than it
   may queue. */
static void test_small_queue_keeps_its_cap(void **state)
{
        (void)state;
        struct fixture f;
        fixture_init(&f, 3);
        for (uint32_t round = 0; round < 4; round++) {
                push_batch(&f.q, f.src, round, 3);
                memset(f.src, 0, BUF_SIZE);
                assert_false(session_rt_queue_push(&f.q, f.src)); /* full */
                take_batch(&f.c, round, 1);
                /* one handed out, two queued: one more may come, and none is spare */
                assert_int_equal(f.q.count + f.q.nr_spare, 2);
                assert_non_null(consumer_next(&f.c));
                assert_non_null(consumer_next(&f.c));
                assert_null(consumer_next(&f.c));
                assert_true(f.q.count + f.q.nr_spare <= f.q.cap);
                assert_true(mem_taken() - f.before <= (size_t)f.q.cap * BUF_SIZE);
        }
        fixture_free(&f);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_batches_take_no_new_buffers),
                cmocka_unit_test(test_burst_keeps_at_most_spares),
                cmocka_unit_test(test_small_queue_keeps_its_cap),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
