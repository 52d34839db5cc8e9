/* SPDX-License-Identifier: MIT */
/* test_mem_policy.c: util's allocator settings of a long run (mem_policy.h) under the screen's
   churn: the model's huge-page tables (model_util.h) made and freed refresh after refresh, small
   blocks kept in between, after a large mapped block was freed (which raises glibc's own
   threshold): no heap range is marked for huge pages, and the heap stays small. A table under
   2 MiB is written at once: no page of it left to the zero page's read-then-copy faults. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "model_util.h"
#include "util/mem_policy.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define IS_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define IS_SANITIZED 1
#endif
#endif

#define TABLE_BYTES ((size_t)6 << 20) /* a hash table of the model's size, past 2 MiB */
#define KEEP_BYTES  ((size_t)64 << 10)
#define ROUNDS      24

#if !defined(IS_SANITIZED) && defined(__GLIBC__)
/* The [heap] mappings' bytes, and those of them marked for huge pages ("hg" in VmFlags). */
static void heap_spans(size_t *all, size_t *huge)
{
        *all = *huge = 0;
        FILE *f = fopen("/proc/self/smaps", "r");
        assert_non_null(f);
        char line[512];
        size_t span = 0;
        bool is_heap = false;
        while (fgets(line, sizeof(line), f)) {
                unsigned long lo, hi;
                char name[256] = "";
                if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %255s", &lo, &hi, name) >= 2 &&
                    strchr(line, '-') < strchr(line, ' ')) {
                        is_heap = strcmp(name, "[heap]") == 0;
                        span = hi - lo;
                        if (is_heap)
                                *all += span;
                } else if (is_heap && strncmp(line, "VmFlags:", 8) == 0 && strstr(line, " hg")) {
                        *huge += span;
                }
        }
        fclose(f);
}
#endif

static void test_tables_churn_outside_the_heap(void **state)
{
        (void)state;
#if defined(IS_SANITIZED) || !defined(__GLIBC__)
        skip(); /* a sanitizer's allocator (or not glibc's): no such settings to check */
#else
        assert_int_equal(mem_policy_long_run(), 0);
        /* a large block mapped and freed: glibc's own threshold would rise to its size */
        char *big = malloc((size_t)24 << 20);
        assert_non_null(big);
        big[0] = 1;
        free(big);
        size_t heap_before, huge_before;
        heap_spans(&heap_before, &huge_before);
        void *keep[ROUNDS];
        uint64_t *table = xzalloc_table(TABLE_BYTES / 8, 8);
        for (int i = 0; i < ROUNDS; i++) {
                /* a refresh: the table made again, the old one freed, a small block kept */
                uint64_t *next = xzalloc_table(TABLE_BYTES / 8, 8);
                next[i] = table[i] + 1;
                free(table);
                table = next;
                keep[i] = xmalloc(KEEP_BYTES);
                memset(keep[i], i, KEEP_BYTES);
        }
        size_t heap_after, huge_after;
        heap_spans(&heap_after, &huge_after);
        print_message("heap %zu KiB -> %zu KiB, %zu KiB of it marked for huge pages\n",
                      heap_before >> 10, heap_after >> 10, huge_after >> 10);
        /* the kept blocks, 1.5 MiB, and room to spare; not a table's worth per refresh */
        assert_true(heap_after <= heap_before + ((size_t)8 << 20));
        assert_int_equal(huge_after, 0);
        free(table);
        for (int i = 0; i < ROUNDS; i++)
                free(keep[i]);
#endif
}

/* The calltree's thread memo's size, 1 MiB: its own mapping in a long run. calloc would leave
   its pages untouched (the zero page mapped at the first probe, copied at the first insert); made
   by xzalloc_table, every page is there, zero, before the first look. */
static void test_small_table_written_at_once(void **state)
{
        (void)state;
#if defined(IS_SANITIZED) || !defined(__GLIBC__)
        skip(); /* a sanitizer's allocator (or not glibc's): its own way with fresh pages */
#else
        assert_int_equal(mem_policy_long_run(), 0);
        enum { N = 32768, SIZE = 32 };
        long page = sysconf(_SC_PAGESIZE);
        uint8_t *t = xzalloc_table(N, SIZE);
        uintptr_t lo = ((uintptr_t)t + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
        uintptr_t hi = ((uintptr_t)t + (uintptr_t)N * SIZE) & ~((uintptr_t)page - 1);
        size_t nr_pages = (hi - lo) / (size_t)page;
        unsigned char *vec = xmalloc(nr_pages);
        assert_int_equal(mincore((void *)lo, hi - lo, vec), 0);
        size_t nr_resident = 0;
        for (size_t i = 0; i < nr_pages; i++)
                nr_resident += vec[i] & 1;
        print_message("%zu of %zu pages resident after xzalloc_table\n", nr_resident, nr_pages);
        assert_int_equal(nr_resident, nr_pages);
        for (size_t i = 0; i < (size_t)N * SIZE; i++)
                assert_int_equal(t[i], 0);
        free(vec);
        free(t);
#endif
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_tables_churn_outside_the_heap),
                cmocka_unit_test(test_small_table_written_at_once),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
