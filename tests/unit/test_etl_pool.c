/* SPDX-License-Identifier: MIT */
/* test_etl_pool.c: a pool's pages made ahead of its takes (etl_pool_prepare), outside the locks
   its takers hold: which pages each call makes, read back from the kernel (mincore). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "etl_pool.h"

#define BUFFER (64u << 10) /* a session's buffer */
#define CHUNK  (2u << 20)  /* the pages a take or a prepare makes at once */

/* How many of the pages of buffers [from, to) of p are in memory. */
static size_t made_pages(struct etl_pool *p, uint32_t from, uint32_t to)
{
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        size_t len = (size_t)(to - from) * BUFFER;
        unsigned char *vec = calloc(len / page + 1, 1);
        assert_non_null(vec);
        assert_int_equal(mincore(etl_pool_at(p, from), len, vec), 0);
        size_t n = 0;
        for (size_t i = 0; i < len / page; i++)
                n += vec[i] & 1;
        free(vec);
        return n;
}

static size_t pages_of(uint32_t nr_buffers)
{
        return (size_t)nr_buffers * BUFFER / (size_t)sysconf(_SC_PAGESIZE);
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* The pool makes pages with MADV_POPULATE_WRITE (Linux 5.14): on a kernel without it they come
   as they are written, and which are made is not this test's to check. */
static void skip_without_populate(void)
{
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        void *m = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        assert_true(m != MAP_FAILED);
        int rc = madvise(m, page, MADV_POPULATE_WRITE);
        munmap(m, page);
        if (rc != 0) {
                fprintf(stderr, "SKIP: this kernel has no MADV_POPULATE_WRITE (Linux 5.14)\n");
                skip();
        }
}

/* A take makes its chunk where nothing made it before: the first 2 MiB at the first take. */
static void test_take_makes_its_chunk(void **state)
{
        (void)state;
        skip_without_populate();
        struct etl_pool *p = NULL;
        assert_int_equal(etl_pool_new(&p, BUFFER, 96), 0);
        assert_int_equal(made_pages(p, 0, 96), 0);
        assert_int_equal(etl_pool_take(p), 0);
        uint32_t per_chunk = CHUNK / BUFFER;
        assert_int_equal(made_pages(p, 0, per_chunk), pages_of(per_chunk));
        assert_int_equal(made_pages(p, per_chunk, 96), 0);
        etl_pool_unref(p);
}

/* A prepare makes the chunk the next take would cut into, once, and nothing before it is
   needed; the takes inside what it made make nothing more. */
static void test_prepare_ahead_of_takes(void **state)
{
        (void)state;
        skip_without_populate();
        struct etl_pool *p = NULL;
        uint32_t per_chunk = CHUNK / BUFFER; /* 32 */
        assert_int_equal(etl_pool_new(&p, BUFFER, 3 * per_chunk), 0);
        /* nothing cut yet: the first chunk */
        assert_true(etl_pool_prepare(p));
        assert_int_equal(made_pages(p, 0, per_chunk), pages_of(per_chunk));
        assert_int_equal(made_pages(p, per_chunk, 3 * per_chunk), 0);
        /* made already: nothing to do, however often asked */
        assert_false(etl_pool_prepare(p));
        assert_false(etl_pool_prepare(p));
        /* the takes of the first chunk but its last: the next one is still inside it */
        for (uint32_t k = 0; k < per_chunk - 1; k++) {
                assert_int_equal(etl_pool_take(p), k);
                assert_false(etl_pool_prepare(p));
        }
        assert_int_equal(made_pages(p, per_chunk, 3 * per_chunk), 0);
        /* its last taken: the next chunk, and that one alone */
        assert_int_equal(etl_pool_take(p), per_chunk - 1);
        assert_int_equal(made_pages(p, per_chunk, 3 * per_chunk), 0);
        assert_true(etl_pool_prepare(p));
        assert_int_equal(made_pages(p, per_chunk, 2 * per_chunk), pages_of(per_chunk));
        assert_int_equal(made_pages(p, 2 * per_chunk, 3 * per_chunk), 0);
        assert_false(etl_pool_prepare(p));
        /* the takes up to the end of what was made make nothing further */
        for (uint32_t k = per_chunk; k < 2 * per_chunk; k++)
                assert_int_equal(etl_pool_take(p), k);
        assert_int_equal(made_pages(p, 2 * per_chunk, 3 * per_chunk), 0);
        etl_pool_unref(p);
}

/* A pool whose takes get buffers given back cuts no new ones: nothing to make; nor past its
   end. */
static void test_prepare_nothing_to_cut(void **state)
{
        (void)state;
        skip_without_populate();
        struct etl_pool *p = NULL;
        uint32_t per_chunk = CHUNK / BUFFER;
        assert_int_equal(etl_pool_new(&p, BUFFER, 2 * per_chunk), 0);
        for (uint32_t k = 0; k < per_chunk; k++)
                assert_int_equal(etl_pool_take(p), k);
        etl_pool_give(p, 3);
        assert_false(etl_pool_prepare(p));
        assert_int_equal(made_pages(p, per_chunk, 2 * per_chunk), 0);
        assert_int_equal(etl_pool_take(p), 3); /* the one given back */
        /* the last chunk made ahead of its takes; cut to the end, nothing is left to make */
        assert_true(etl_pool_prepare(p));
        for (uint32_t k = per_chunk; k < 2 * per_chunk; k++)
                assert_int_equal(etl_pool_take(p), k);
        assert_int_equal(etl_pool_take(p), -1);
        assert_false(etl_pool_prepare(p));
        etl_pool_unref(p);
}

struct taker {
        struct etl_pool *p;
        uint32_t nr;
        bool is_bad;
};

static void *take_all(void *arg)
{
        struct taker *t = arg;
        for (uint32_t k = 0; k < t->nr; k++) {
                int64_t i = etl_pool_take(t->p);
                if (i < 0) {
                        t->is_bad = true;
                        break;
                }
                memset(etl_pool_at(t->p, (uint32_t)i), 0x5a, BUFFER);
        }
        return NULL;
}

/* Prepares racing takes (a logger between its drains, a stream cutting copies): every buffer
   cut once, every page of them made, whoever made it. */
static void test_prepare_beside_takes(void **state)
{
        (void)state;
        struct etl_pool *p = NULL;
        uint32_t nr = 8 * (CHUNK / BUFFER);
        assert_int_equal(etl_pool_new(&p, BUFFER, nr), 0);
        struct taker t = {p, nr, false};
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, take_all, &t), 0);
        for (int k = 0; k < 10000; k++)
                etl_pool_prepare(p);
        pthread_join(th, NULL);
        assert_false(t.is_bad);
        assert_int_equal(etl_pool_take(p), -1);
        assert_int_equal(made_pages(p, 0, nr), pages_of(nr));
        for (uint32_t i = 0; i < nr; i++)
                assert_int_equal(etl_pool_at(p, i)[BUFFER - 1], 0x5a);
        etl_pool_unref(p);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_take_makes_its_chunk),
                cmocka_unit_test(test_prepare_ahead_of_takes),
                cmocka_unit_test(test_prepare_nothing_to_cut),
                cmocka_unit_test(test_prepare_beside_takes),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
