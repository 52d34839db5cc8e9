/* SPDX-License-Identifier: MIT */
/* test_session_rt.c: a real-time consumer's queue in the session core (session_rt.c) as the
   logger fills it and the consumer empties it: the buffers the consumer is done with are kept
   for the next copies, a wake-up's batch and as many again, so that a queue that fills and
   empties batch after batch takes no new memory (each new buffer's pages were faulted in and
   zeroed); and what it keeps stays within its bounds, and goes back to the budget when the queue
   is freed. The sender takes what waits as one batch, and is woken when 16 buffers wait, or half
   its queue. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "session_int.h"
#include "session_mem.h"
#include "thread_state.h"

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

/* A session with one consumer of a queue of cap buffers, as attach leaves it (no header). */
struct rt_fixture {
        size_t before;
        struct session s;
        struct session_rt rt;
        uint8_t *src;
};

static void rt_fixture_init(struct rt_fixture *f, uint32_t cap)
{
        f->before = mem_taken();
        memset(&f->s, 0, sizeof(f->s));
        memset(&f->rt, 0, sizeof(f->rt));
        pthread_mutex_init(&f->s.rt_lock, NULL);
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&f->s.rt_cond, &ca);
        pthread_condattr_destroy(&ca);
        assert_int_equal(session_rt_queue_init(&f->rt.q, cap, BUF_SIZE), 0);
        f->rt.s = &f->s;
        f->rt.wake_at = session_rt_wake_at(cap);
        f->s.consumers = &f->rt;
        f->src = malloc(BUF_SIZE);
        assert_non_null(f->src);
}

/* After session_rt_drop: the budget is back whole. */
static void rt_fixture_free(struct rt_fixture *f)
{
        assert_int_equal(mem_taken(), f->before);
        pthread_cond_destroy(&f->s.rt_cond);
        pthread_mutex_destroy(&f->s.rt_lock);
        free(f->src);
}

/* The logger's n buffers, the i-th filled with first + i. */
static void rt_fixture_write(struct rt_fixture *f, uint32_t first, uint32_t n)
{
        for (uint32_t i = 0; i < n; i++) {
                memset(f->src, (int)((first + i) & 0xff), BUF_SIZE);
                session_rt_on_buffer(&f->s, f->src, BUF_SIZE);
        }
}

/* The n buffers handed out are the copies of first, first + 1, ... */
static void assert_batch(const uint8_t *const *bufs, int n, uint32_t first)
{
        for (int i = 0; i < n; i++) {
                uint8_t want = (uint8_t)((first + (uint32_t)i) & 0xff);
                assert_int_equal(bufs[i][0], want);
                assert_int_equal(bufs[i][BUF_SIZE - 1], want);
        }
}

/* A sender takes everything queued at once, up to what it asks and SESSION_RT_BATCH_MAX, oldest
   first, under one lock: the batch stays valid until its next call, which keeps the batch's
   copies for the next buffers (no new memory); the end comes once all was taken. */
static void test_next_batch_takes_what_waits(void **state)
{
        (void)state;
        struct rt_fixture f;
        rt_fixture_init(&f, 64);
        const uint8_t *bufs[SESSION_RT_BATCH_MAX + 1];
        uint32_t size = 0;
        assert_int_equal(session_rt_next_batch(&f.rt, 0, bufs, SESSION_RT_BATCH_MAX, &size),
                         -EAGAIN);
        rt_fixture_write(&f, 0, 10);
        assert_int_equal(session_rt_next_batch(&f.rt, 0, bufs, SESSION_RT_BATCH_MAX, &size), 10);
        assert_int_equal(size, BUF_SIZE);
        assert_int_equal(f.rt.q.count, 0);
        assert_batch(bufs, 10, 0);
        /* the logger goes on while the batch is out: the batch is untouched */
        rt_fixture_write(&f, 10, 3);
        assert_batch(bufs, 10, 0);
        size_t held = mem_taken() - f.before;
        assert_int_equal(held, (size_t)13 * BUF_SIZE);
        /* the next call gives the 10 back as spares and takes at most what it asks */
        assert_int_equal(session_rt_next_batch(&f.rt, 0, bufs, 2, &size), 2);
        assert_batch(bufs, 2, 10);
        assert_int_equal(f.rt.q.nr_spare, 10);
        /* more than SESSION_RT_BATCH_MAX waiting (the first 10 copied into the spares): that
           many, then the rest */
        rt_fixture_write(&f, 13, SESSION_RT_BATCH_MAX + 4);
        assert_int_equal(f.rt.q.nr_spare, 0);
        assert_int_equal(mem_taken() - f.before,
                         held + (size_t)(SESSION_RT_BATCH_MAX + 4 - 10) * BUF_SIZE);
        assert_int_equal(session_rt_next_batch(&f.rt, 0, bufs, SESSION_RT_BATCH_MAX + 1, &size),
                         SESSION_RT_BATCH_MAX);
        assert_batch(bufs, SESSION_RT_BATCH_MAX, 12);
        assert_int_equal(session_rt_next_batch(&f.rt, 0, bufs, SESSION_RT_BATCH_MAX, &size), 5);
        assert_batch(bufs, 5, 12 + SESSION_RT_BATCH_MAX);
        session_rt_end(&f.s);
        assert_int_equal(session_rt_next_batch(&f.rt, 0, bufs, SESSION_RT_BATCH_MAX, &size), 0);
        /* what a batch held is kept or given back: the queue freed gives the budget back whole */
        session_rt_drop(&f.rt);
        rt_fixture_free(&f);
}

/* A sender waiting for buffers, on a thread of its own. */
struct sender {
        struct session_rt *rt;
        pthread_t thread;
        const uint8_t *bufs[SESSION_RT_BATCH_MAX];
        uint32_t size;
        atomic_int n;   /* session_rt_next_batch's result; INT_MIN while it waits */
        atomic_int tid; /* its thread's id, once it runs */
};

static void *sender_main(void *arg)
{
        struct sender *t = arg;
        atomic_store(&t->tid, (int)syscall(SYS_gettid));
        int n = session_rt_next_batch(t->rt, 10000, t->bufs, SESSION_RT_BATCH_MAX, &t->size);
        atomic_store(&t->n, n);
        return NULL;
}

/* A sender started, once it waits on the condition (the only place it sleeps): buffers written
   after that are what wakes it, whatever the load. */
static void sender_start(struct sender *t, struct session_rt *rt)
{
        t->rt = rt;
        atomic_store(&t->n, INT_MIN);
        atomic_store(&t->tid, 0);
        assert_int_equal(pthread_create(&t->thread, NULL, sender_main, t), 0);
        for (int i = 0; i < 5000 && !(atomic_load(&t->tid) && thread_sleeps(atomic_load(&t->tid)));
             i++)
                usleep(1000);
        assert_true(thread_sleeps(atomic_load(&t->tid)));
}

/* Whether the sender is still waiting after ms. */
static bool sender_waits(struct sender *t, int ms)
{
        for (int i = 0; i < ms && atomic_load(&t->n) == INT_MIN; i++)
                usleep(1000);
        return atomic_load(&t->n) == INT_MIN;
}

/* A waiting sender is woken by 16 buffers queued, not 8: at SCHED_FIFO the host's sender ran as
   soon as 8 waited, a send and a wake-up of the consumer each 8 where it had sent more at a
   time; a queue of fewer than 32 wakes it at half its buffers, long before it is full; a flush
   wakes it whatever waits. */
static void test_sender_woken_at_16_or_half_the_queue(void **state)
{
        (void)state;
        struct rt_fixture f;
        rt_fixture_init(&f, 64);
        struct sender t;
        sender_start(&t, &f.rt);
        rt_fixture_write(&f, 0, 8);
        assert_true(sender_waits(&t, 150));
        rt_fixture_write(&f, 8, 7);
        assert_true(sender_waits(&t, 50));
        rt_fixture_write(&f, 15, 1);
        assert_false(sender_waits(&t, 5000));
        pthread_join(t.thread, NULL);
        assert_int_equal(atomic_load(&t.n), 16);
        assert_batch(t.bufs, 16, 0);
        /* a flush: what waits, at once */
        sender_start(&t, &f.rt);
        rt_fixture_write(&f, 16, 3);
        assert_true(sender_waits(&t, 100));
        session_rt_wake(&f.s);
        assert_false(sender_waits(&t, 5000));
        pthread_join(t.thread, NULL);
        assert_int_equal(atomic_load(&t.n), 3);
        assert_batch(t.bufs, 3, 16);
        session_rt_drop(&f.rt);
        rt_fixture_free(&f);

        /* a queue of 6 buffers: woken at 3 */
        rt_fixture_init(&f, 6);
        sender_start(&t, &f.rt);
        rt_fixture_write(&f, 0, 2);
        assert_true(sender_waits(&t, 100));
        rt_fixture_write(&f, 2, 1);
        assert_false(sender_waits(&t, 5000));
        pthread_join(t.thread, NULL);
        assert_int_equal(atomic_load(&t.n), 3);
        session_rt_drop(&f.rt);
        rt_fixture_free(&f);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_batches_take_no_new_buffers),
                cmocka_unit_test(test_burst_keeps_at_most_spares),
                cmocka_unit_test(test_small_queue_keeps_its_cap),
                cmocka_unit_test(test_next_batch_takes_what_waits),
                cmocka_unit_test(test_sender_woken_at_16_or_half_the_queue),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
