/* SPDX-License-Identifier: MIT */
/* mem_policy.c: owns the allocator's settings of a long-running process and of a short one
   (mem_policy.h). */
#include "util/mem_policy.h"

#include <errno.h>
#include <stdbool.h>
#include <limits.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif

int mem_policy_long_run(void)
{
#ifdef __GLIBC__
        /* glibc maps a block of 128 KiB or more apart, but raises that threshold to the size of
           each mapped block freed, up to 32 MiB: after the first large table is freed, tables
           of a few MB come from the heap. There model_util.h's huge-page tables marked their
           heap ranges MADV_HUGEPAGE for good; once freed, those ranges held small blocks, and
           every first touch there (malloc_trim gives the free pages back at each refresh)
           faulted in a 2 MiB page, and khugepaged filled any 2 MiB range with one page in it:
           the screen's memory went up in steps towards the heap's span, several times what it
           held (bench/README.md, item 7's third round). A fixed threshold keeps every large
           block in its own mapping, given back when freed, and the heap holds small ones; its
           top is given back past MEM_POLICY_TRIM_MIN (not at every 128 KiB freed there: a brk
           call each time, and page faults at the next growth). */
        if (mallopt(M_MMAP_THRESHOLD, (int)MEM_POLICY_MMAP_MIN) == 1 &&
            mallopt(M_TRIM_THRESHOLD, (int)MEM_POLICY_TRIM_MIN) == 1)
                return 0;
#endif
        return -ENOTSUP;
}

int mem_policy_trim(void)
{
#ifdef __GLIBC__
        struct mallinfo2 mi = mallinfo2();
        if (mi.fordblks < MEM_POLICY_TRIM_MIN)
                return 0;
        malloc_trim(0);
        return 1;
#else
        return -ENOTSUP;
#endif
}

int mem_policy_short_run(void)
{
#ifdef __GLIBC__
        /* glibc gives the heap's free top back past 128 KiB (its trim threshold, or twice its
           mmap threshold once that rises) and maps a large block apart, unmapped when freed: a
           replay's tables, grown by doubling and freed, and the sections and symbol tables of
           each module read, faulted their pages in again and again (e.etl's --replay -b: 12,400
           page faults, a sixth of its CPU time on this VM). So nothing is given back, and large
           blocks come from the heap, where their pages are used again. The heap grows by what
           each block needs and no more: calloc zeroes the pages the heap held before it, and
           leaves the ones the system adds zero as they come, so a table sized for a large trace
           costs a small trace only the pages it writes. (With a 64 MiB pad ahead, as before,
           every table was carved from pages the heap held, and calloc zeroed each in full:
           pages a small trace never writes, 80 of the 670 page faults of a 3 MB perf.data's
           --replay -b.) */
        if (mallopt(M_MMAP_THRESHOLD, (int)MEM_POLICY_SHORT_MMAP_MIN) == 1 &&
            mallopt(M_TRIM_THRESHOLD, INT_MAX) == 1 && mallopt(M_TOP_PAD, 0) == 1)
                return 0;
#endif
        return -ENOTSUP;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* The pages wholly inside [p, p + len) as [*from, *to): false where there are none. */
static bool whole_pages(const void *p, size_t len, uintptr_t *from, uintptr_t *to)
{
        long page = sysconf(_SC_PAGESIZE);
        if (!p || page <= 0 || len < (size_t)page)
                return false;
        uintptr_t mask = (uintptr_t)page - 1;
        *from = ((uintptr_t)p + mask) & ~mask;
        *to = ((uintptr_t)p + len) & ~mask;
        return *from < *to;
}

void mem_policy_populate(void *p, size_t len)
{
        uintptr_t from, to;
        if (whole_pages(p, len, &from, &to))
                (void)madvise((void *)from, to - from, MADV_POPULATE_WRITE);
}

void mem_policy_release(void *p, size_t len)
{
        uintptr_t from, to;
        if (whole_pages(p, len, &from, &to))
                (void)madvise((void *)from, to - from, MADV_DONTNEED);
}
