/* SPDX-License-Identifier: MIT */
/* test_mem_policy.c: util's allocator settings of a long run (mem_policy.h) under the screen's
   churn: the model's huge-page tables (model_util.h) made and freed refresh after refresh, small
   blocks kept in between, after a large mapped block was freed (which raises glibc's own
   threshold): no heap range is marked for huge pages, and the heap stays small. A table under
   2 MiB is written at once: no page of it left to the zero page's read-then-copy faults. The
   heap's free pages are given back past MEM_POLICY_TRIM_MIN, not before. */
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

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define IS_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) ||                         \
        __has_feature(thread_sanitizer)
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

#if !defined(IS_SANITIZED) && defined(__GLIBC__)
static size_t resident_bytes(void)
{
        FILE *f = fopen("/proc/self/statm", "r");
        assert_non_null(f);
        unsigned long size = 0, resident = 0;
        assert_int_equal(fscanf(f, "%lu %lu", &size, &resident), 2);
        fclose(f);
        return (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
}
#endif

/* A long run's free heap is given back once MEM_POLICY_TRIM_MIN of it is free, and not before
   (a refresh's few MiB freed and made again stay, rather than fault in again). */
static void test_trim_past_its_minimum(void **state)
{
        (void)state;
#if defined(IS_SANITIZED) || !defined(__GLIBC__)
        skip(); /* a sanitizer's allocator (or not glibc's): no such call to check */
#else
        assert_int_equal(mem_policy_long_run(), 0);
        enum { NR = 192, BLOCK = 64 << 10 }; /* 12 MiB of heap blocks, under the mmap threshold */
        char *blocks[NR + 1];
        for (int i = 0; i <= NR; i++) {
                blocks[i] = xmalloc(BLOCK);
                memset(blocks[i], i + 1, BLOCK);
        }
        /* the highest block stays: the others' frees leave the heap's top alone */
        int top = 0;
        for (int i = 1; i <= NR; i++)
                if (blocks[i] > blocks[top])
                        top = i;
        char *fence = blocks[top];
        blocks[top] = blocks[NR];
        /* a third freed: under the minimum, kept */
        for (int i = 0; i < NR / 3; i++)
                free(blocks[i]);
        assert_true(mallinfo2().fordblks < MEM_POLICY_TRIM_MIN);
        size_t before = resident_bytes();
        assert_int_equal(mem_policy_trim(), 0);
        size_t kept = resident_bytes();
        /* the rest freed: past it, given back */
        for (int i = NR / 3; i < NR; i++)
                free(blocks[i]);
        assert_true(mallinfo2().fordblks >= MEM_POLICY_TRIM_MIN);
        size_t freed = resident_bytes();
        assert_int_equal(mem_policy_trim(), 1);
        size_t after = resident_bytes();
        print_message("resident %zu KiB; 4 MiB freed, no trim: %zu KiB; 12 MiB freed: %zu KiB, "
                      "trimmed: %zu KiB\n",
                      before >> 10, kept >> 10, freed >> 10, after >> 10);
        assert_true(kept + ((size_t)1 << 20) >= before);
        assert_true(after + ((size_t)10 << 20) <= freed);
        free(fence);
#endif
}

/* nr_pages fresh private pages (none resident yet); *len their bytes. */
static uint8_t *fresh_pages(size_t nr_pages, size_t *len)
{
        *len = nr_pages * (size_t)sysconf(_SC_PAGESIZE);
        uint8_t *m = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        assert_true(m != MAP_FAILED);
        return m;
}

/* mem_policy_populate faults in the pages wholly inside its range, at once, and leaves what
   they hold (and the pages it only partly covers) as they were. */
static void test_populate_whole_pages(void **state)
{
        (void)state;
        long page = sysconf(_SC_PAGESIZE);
        enum { NR_PAGES = 64 };
        size_t len;
        uint8_t *m = fresh_pages(NR_PAGES, &len);
        if (madvise(m + (NR_PAGES - 1) * page, (size_t)page, 23 /* MADV_POPULATE_WRITE */) != 0) {
                munmap(m, len);
                skip(); /* a kernel before 5.14: nothing to fault in at once */
        }
        munmap(m + (NR_PAGES - 1) * page, (size_t)page); /* probed: made fresh again */
        assert_true(mmap(m + (NR_PAGES - 1) * page, (size_t)page, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED);
        unsigned char vec[NR_PAGES];
        assert_int_equal(mincore(m, len, vec), 0);
        for (int i = 0; i < NR_PAGES; i++)
                assert_int_equal(vec[i] & 1, 0);
        /* a page written before: kept as it was */
        memset(m + 10 * page, 0x5a, (size_t)page);
        mem_policy_populate(m + 100, len - 200);
        assert_int_equal(mincore(m, len, vec), 0);
        assert_int_equal(vec[0] & 1, 0); /* only partly in the range */
        assert_int_equal(vec[NR_PAGES - 1] & 1, 0);
        for (int i = 1; i < NR_PAGES - 1; i++)
                assert_int_equal(vec[i] & 1, 1);
        for (long i = 0; i < page; i++)
                assert_int_equal(m[10 * page + i], 0x5a);
        assert_int_equal(m[20 * page], 0);
        /* less than a page, or nothing: nothing done */
        mem_policy_populate(m + 1, (size_t)page - 2);
        mem_policy_populate(NULL, len);
        assert_int_equal(mincore(m, len, vec), 0);
        assert_int_equal(vec[0] & 1, 0);
        munmap(m, len);
}

/* mem_policy_release: the pages wholly inside the range given back (they read as zeros), the
   bytes of the pages only partly inside it kept. */
static void test_release_whole_pages(void **state)
{
        (void)state;
        long page = sysconf(_SC_PAGESIZE);
        enum { NR_PAGES = 16 };
        size_t len;
        uint8_t *m = fresh_pages(NR_PAGES, &len);
        memset(m, 0x5a, len);
        mem_policy_release(m + 100, len - 200);
        unsigned char vec[NR_PAGES];
        assert_int_equal(mincore(m, len, vec), 0);
        assert_int_equal(vec[0] & 1, 1);
        assert_int_equal(vec[NR_PAGES - 1] & 1, 1);
        for (int i = 1; i < NR_PAGES - 1; i++)
                assert_int_equal(vec[i] & 1, 0);
        for (long i = 0; i < page; i++) {
                assert_int_equal(m[i], 0x5a);
                assert_int_equal(m[len - (size_t)page + (size_t)i], 0x5a);
        }
        assert_int_equal(m[5 * page], 0);
        /* less than a page, or nothing: nothing given back */
        memset(m + page, 0x33, (size_t)page);
        mem_policy_release(m + page + 1, (size_t)page - 2);
        mem_policy_release(NULL, len);
        assert_int_equal(m[page + 10], 0x33);
        munmap(m, len);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_tables_churn_outside_the_heap),
                cmocka_unit_test(test_small_table_written_at_once),
                cmocka_unit_test(test_trim_past_its_minimum),
                cmocka_unit_test(test_populate_whole_pages),
                cmocka_unit_test(test_release_whole_pages),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
