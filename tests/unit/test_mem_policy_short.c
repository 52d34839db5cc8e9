/* SPDX-License-Identifier: MIT */
/* test_mem_policy_short.c: util's allocator setting of a short run (mem_policy_short_run, a
   replay to text): a large block comes from the heap, and once freed its pages are there for
   the next one (no page faulted in again); a zeroed block of fresh pages is not written by the
   allocator (its pages fault in as they are used). Its own process: glibc's settings as they
   start. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <cmocka.h>

#include "util/mem_policy.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define IS_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) ||                         \
        __has_feature(thread_sanitizer)
#define IS_SANITIZED 1
#endif
#endif

#define BLOCK_BYTES ((size_t)16 << 20) /* a table of a replay's size, past glibc's thresholds */
#define TABLE_BYTES ((size_t)8 << 20)  /* zeroed, past glibc's own mapping threshold */

#if !defined(IS_SANITIZED) && defined(__GLIBC__)
/* Whether p lies in the [heap] mapping. */
static bool is_in_heap(const void *p)
{
        FILE *f = fopen("/proc/self/maps", "r");
        assert_non_null(f);
        char line[512];
        bool in = false;
        while (!in && fgets(line, sizeof(line), f)) {
                unsigned long lo, hi;
                char name[256] = "";
                if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %255s", &lo, &hi, name) >= 2 &&
                    strcmp(name, "[heap]") == 0)
                        in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
        }
        fclose(f);
        return in;
}

static long minor_faults(void)
{
        struct rusage ru;
        assert_int_equal(getrusage(RUSAGE_SELF, &ru), 0);
        return ru.ru_minflt;
}
#endif

/* First in the group: the heap holds no freed block yet, so the table's pages are fresh. */
static void test_fresh_zeroed_block_untouched(void **state)
{
        (void)state;
#if defined(IS_SANITIZED) || !defined(__GLIBC__)
        skip(); /* a sanitizer's allocator (or not glibc's): no such setting to check */
#else
        assert_int_equal(mem_policy_short_run(), 0);
        long before = minor_faults();
        /* a hash table sized for a large trace, of which a small one uses a few slots */
        char *table = calloc(1, TABLE_BYTES);
        assert_non_null(table);
        long faults = minor_faults() - before;
        print_message("%zu MiB zeroed: %ld page faults\n", TABLE_BYTES >> 20, faults);
        /* from the heap, where a large pad ahead made calloc zero all its 2,048 pages */
        assert_true(is_in_heap(table));
        assert_true(faults < 64);
        assert_int_equal(((volatile char *)table)[TABLE_BYTES / 2], 0);
        free(table);
#endif
}

static void test_freed_block_used_again(void **state)
{
        (void)state;
#if defined(IS_SANITIZED) || !defined(__GLIBC__)
        skip(); /* a sanitizer's allocator (or not glibc's): no such setting to check */
#else
        assert_int_equal(mem_policy_short_run(), 0);
        /* blocks under glibc's mapping threshold until the heap grows: it grows with its room
           ahead */
        void *small[4];
        for (int i = 0; i < 4; i++) {
                small[i] = malloc((size_t)120 << 10);
                assert_non_null(small[i]);
        }
        char *big = malloc(BLOCK_BYTES);
        assert_non_null(big);
        /* glibc's own settings map it apart (128 KiB and up): unmapped when freed */
        assert_true(is_in_heap(big));
        memset(big, 1, BLOCK_BYTES);
        /* written, not a store the compiler may drop before the free */
        assert_int_equal(((volatile char *)big)[BLOCK_BYTES - 1], 1);
        free(big);
        long before = minor_faults();
        char *again = malloc(BLOCK_BYTES);
        assert_non_null(again);
        memset(again, 2, BLOCK_BYTES);
        assert_int_equal(((volatile char *)again)[BLOCK_BYTES - 1], 2);
        long faults = minor_faults() - before;
        print_message("%zu MiB written again: %ld page faults\n", BLOCK_BYTES >> 20, faults);
        /* its 4,096 pages were kept: a few faults at most (the test's own bookkeeping) */
        assert_true(faults < 64);
        free(again);
        for (int i = 0; i < 4; i++)
                free(small[i]);
#endif
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_fresh_zeroed_block_untouched),
                cmocka_unit_test(test_freed_block_used_again),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
