/* SPDX-License-Identifier: MIT */
/* test_spsc.c: util's single-producer/single-consumer queue: empty and full, order and bytes,
   nothing seen before it is published, the wrap at the ring's end, the largest message at every
   place in the ring, a frame's mark, two threads passing 300,000 messages through it, and its
   pages made at once. */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/spsc.h"

/* the bytes of message seq: its length and a pattern that depends on both */
static size_t msg_len(uint64_t seq, size_t max)
{
        uint64_t x = seq * 0x9E3779B97F4A7C15ull;
        return (size_t)((x >> 40) % (max + 1));
}

static void msg_fill(uint8_t *p, size_t len, uint64_t seq)
{
        for (size_t i = 0; i < len; i++)
                p[i] = (uint8_t)(seq * 31 + i);
}

static bool msg_is(const uint8_t *p, size_t len, uint64_t seq)
{
        for (size_t i = 0; i < len; i++)
                if (p[i] != (uint8_t)(seq * 31 + i))
                        return false;
        return true;
}

static bool push(struct spsc *q, uint64_t seq, size_t len)
{
        uint8_t *p = spsc_reserve(q, len);
        if (!p)
                return false;
        msg_fill(p, len, seq);
        spsc_commit(q);
        return true;
}

static void pop_expect(struct spsc *q, uint64_t seq, size_t len)
{
        size_t got;
        const uint8_t *p = spsc_peek(q, &got);
        assert_non_null(p);
        assert_int_equal(got, len);
        assert_int_equal((uintptr_t)p % 8, 0);
        assert_true(msg_is(p, len, seq));
        spsc_pop(q);
}

static void test_spsc_empty_order_publish(void **state)
{
        (void)state;
        struct spsc *q = spsc_new(100); /* rounded up to 4 KiB */
        assert_int_equal(spsc_max_message(q), 2048 - 8);
        size_t len;
        assert_null(spsc_peek(q, &len));
        assert_true(spsc_is_empty(q));
        const size_t lens[] = {0, 1, 7, 8, 9, 100};
        for (uint64_t i = 0; i < 6; i++)
                assert_true(push(q, i, lens[i]));
        /* committed, not published: the consumer sees nothing yet */
        assert_null(spsc_peek(q, &len));
        spsc_publish(q);
        for (uint64_t i = 0; i < 6; i++)
                pop_expect(q, i, lens[i]);
        assert_null(spsc_peek(q, &len));
        assert_true(spsc_is_empty(q));
        spsc_free(q);
        spsc_free(NULL);
}

/* The pages of the ring resident in [p, p + n) (mincore), out of how many. */
static size_t resident(const void *p, size_t n, size_t *nr_pages)
{
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        uintptr_t from = (uintptr_t)p & ~(page - 1);
        size_t len = ((uintptr_t)p + n - from + page - 1) & ~(page - 1);
        unsigned char *vec = calloc(len / page, 1);
        assert_non_null(vec);
        assert_int_equal(mincore((void *)from, len, vec), 0);
        size_t in = 0;
        for (size_t i = 0; i < len / page; i++)
                in += vec[i] & 1;
        free(vec);
        *nr_pages = len / page;
        return in;
}

/* spsc_populate makes the ring's pages at once: every page resident before the first write,
   where a new queue's are not (they come as the producer first writes each) */
static void test_spsc_populate(void **state)
{
        (void)state;
        size_t nr;
        struct spsc *fresh = spsc_new((size_t)4 << 20);
        void *at = spsc_reserve(fresh, 8); /* an empty queue's first message: the ring's start */
        assert_non_null(at);
        assert_true(resident(at, spsc_size(fresh), &nr) < nr / 2);
        spsc_free(fresh);

        struct spsc *q = spsc_new((size_t)4 << 20);
        int rc = spsc_populate(q);
        if (rc == -EINVAL) {
                spsc_free(q);
                skip(); /* a kernel before 5.14: no MADV_POPULATE_WRITE */
        }
        assert_int_equal(rc, 0);
        at = spsc_reserve(q, 8);
        assert_non_null(at);
        assert_int_equal(resident(at, spsc_size(q), &nr), nr);
        /* and the queue works as before */
        spsc_commit(q);
        spsc_publish(q);
        size_t len;
        assert_non_null(spsc_peek(q, &len));
        assert_int_equal(len, 8);
        spsc_pop(q);
        spsc_free(q);
}

static void test_spsc_full(void **state)
{
        (void)state;
        struct spsc *q = spsc_new(4096);
        /* 56 bytes and an 8-byte header: 64 messages fill 4 KiB exactly */
        uint64_t n = 0;
        while (push(q, n, 56))
                n++;
        assert_int_equal(n, 64);
        assert_int_equal(spsc_nr_queued(q), 0); /* committed, not published */
        spsc_publish(q);
        assert_int_equal(spsc_nr_queued(q), spsc_size(q));
        /* the consumer frees one: exactly one more fits */
        pop_expect(q, 0, 56);
        assert_true(push(q, n, 56));
        assert_false(push(q, n + 1, 56));
        spsc_publish(q);
        for (uint64_t i = 1; i <= n; i++)
                pop_expect(q, i, 56);
        assert_true(spsc_is_empty(q));
        assert_int_equal(spsc_nr_queued(q), 0);
        /* too large is refused even when empty */
        assert_null(spsc_reserve(q, spsc_max_message(q) + 1));
        spsc_free(q);
}

/* Messages of every length up to the largest go round the ring many times: each that does not
   fit before the ring's end starts again at its start, bytes intact. */
static void test_spsc_wrap_around(void **state)
{
        (void)state;
        struct spsc *q = spsc_new(4096);
        size_t max = spsc_max_message(q);
        uint64_t pushed = 0, popped = 0;
        while (popped < 20000) {
                /* push until full, pop about half, so the fill level moves */
                while (push(q, pushed, msg_len(pushed, max / 4)))
                        pushed++;
                spsc_publish(q);
                uint64_t until = popped + (pushed - popped + 1) / 2;
                while (popped < until) {
                        pop_expect(q, popped, msg_len(popped, max / 4));
                        popped++;
                }
        }
        while (popped < pushed) {
                pop_expect(q, popped, msg_len(popped, max / 4));
                popped++;
        }
        assert_true(spsc_is_empty(q));
        spsc_free(q);
}

/* The largest message fits in an empty queue wherever the last one ended. */
static void test_spsc_largest_anywhere(void **state)
{
        (void)state;
        for (uint64_t off = 0; off < 4096; off += 8) {
                struct spsc *q = spsc_new(4096);
                size_t max = spsc_max_message(q);
                /* the positions moved on by off bytes: messages of at most max, 8-byte headers */
                for (uint64_t left = off; left;) {
                        uint64_t n = left > max + 8 ? max + 8 : left;
                        assert_true(push(q, left, n - 8));
                        spsc_publish(q);
                        pop_expect(q, left, n - 8);
                        left -= n;
                }
                assert_true(push(q, off + 1, max));
                spsc_publish(q);
                pop_expect(q, off + 1, max);
                assert_true(spsc_is_empty(q));
                spsc_free(q);
        }
}

/* A frame takes what was published before its mark, not what comes after. */
static void test_spsc_mark(void **state)
{
        (void)state;
        struct spsc *q = spsc_new(4096);
        for (uint64_t i = 0; i < 5; i++)
                assert_true(push(q, i, 40));
        spsc_publish(q);
        uint64_t mark = spsc_published(q);
        for (uint64_t i = 5; i < 8; i++)
                assert_true(push(q, i, 40));
        spsc_publish(q);
        uint64_t n = 0;
        size_t len;
        while (spsc_is_before(q, mark) && spsc_peek(q, &len)) {
                pop_expect(q, n, 40);
                n++;
        }
        assert_int_equal(n, 5);
        assert_false(spsc_is_before(q, mark));
        assert_false(spsc_is_empty(q));
        spsc_free(q);
}

/* ---- two threads ---- */

#define THREADED_MESSAGES 300000u

struct threaded {
        struct spsc *q;
        uint64_t nr_full; /* the producer found the queue full */
};

static void *producer(void *arg)
{
        struct threaded *t = arg;
        size_t max = 300;
        for (uint64_t seq = 0; seq < THREADED_MESSAGES; seq++) {
                size_t len = msg_len(seq, max);
                uint8_t *p;
                while (!(p = spsc_reserve(t->q, len))) {
                        spsc_publish(t->q);
                        t->nr_full++;
                        sched_yield();
                }
                msg_fill(p, len, seq);
                spsc_commit(t->q);
                if (seq % 16 == 0)
                        spsc_publish(t->q);
        }
        spsc_publish(t->q);
        return NULL;
}

static void test_spsc_threaded(void **state)
{
        (void)state;
        struct threaded t = {spsc_new(65536), 0};
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, producer, &t), 0);
        uint64_t seq = 0, nr_bad = 0, nr_empty = 0;
        while (seq < THREADED_MESSAGES) {
                size_t len;
                const uint8_t *p = spsc_peek(t.q, &len);
                if (!p) {
                        nr_empty++;
                        sched_yield();
                        continue;
                }
                if (len != msg_len(seq, 300) || !msg_is(p, len, seq))
                        nr_bad++;
                spsc_pop(t.q);
                seq++;
        }
        assert_int_equal(pthread_join(th, NULL), 0);
        assert_int_equal(nr_bad, 0);
        assert_true(spsc_is_empty(t.q));
        spsc_free(t.q);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_spsc_empty_order_publish),
                cmocka_unit_test(test_spsc_full),
                cmocka_unit_test(test_spsc_populate),
                cmocka_unit_test(test_spsc_wrap_around),
                cmocka_unit_test(test_spsc_largest_anywhere),
                cmocka_unit_test(test_spsc_mark),
                cmocka_unit_test(test_spsc_threaded),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
