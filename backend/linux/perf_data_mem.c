/* SPDX-License-Identifier: MIT */
/* perf_data_mem.c: the large growing buffer of a perf.data conversion made in memory, in
   anonymous memory advised for transparent huge pages. */
#include "perf_data_mem.h"

#include <errno.h>
#include <sys/mman.h>

#define HUGE_SIZE ((size_t)2 << 20)

/* A mapping of size bytes (a multiple of HUGE_SIZE) that starts at a HUGE_SIZE boundary. */
static uint8_t *map_aligned(size_t size)
{
        uint8_t *p = mmap(NULL, size + HUGE_SIZE, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
                return NULL;
        uint8_t *start = (uint8_t *)(((uintptr_t)p + HUGE_SIZE - 1) & ~(uintptr_t)(HUGE_SIZE - 1));
        if (start > p)
                munmap(p, (size_t)(start - p));
        size_t tail = (size_t)(p + size + HUGE_SIZE - (start + size));
        if (tail)
                munmap(start + size, tail);
#ifdef MADV_HUGEPAGE
        madvise(start, size, MADV_HUGEPAGE); /* a kernel without THP says no: 4 KiB pages */
#endif
        return start;
}

int perf_data_mem_reserve(struct perf_data_mem *m, size_t need)
{
        if (need <= m->cap)
                return 0;
        size_t cap = m->cap ? m->cap : HUGE_SIZE;
        while (cap < need) {
                if (cap > SIZE_MAX / 2)
                        return -ENOMEM;
                cap *= 2;
        }
        cap = (cap + HUGE_SIZE - 1) & ~(HUGE_SIZE - 1);
        if (!m->data) {
                m->data = map_aligned(cap);
                if (!m->data)
                        return -ENOMEM;
                m->cap = cap;
                return 0;
        }
        /* the pages move with their mapping, nothing is copied, to a 2 MiB boundary: moved
           wherever the kernel chose, a mapping's huge pages no longer fit it, and each page
           past the old end faulted in 4 KiB at a time */
        uint8_t *to = map_aligned(cap);
        if (!to)
                return -ENOMEM;
        void *p = mremap(m->data, m->cap, cap, MREMAP_MAYMOVE | MREMAP_FIXED, to);
        if (p == MAP_FAILED) {
                munmap(to, cap);
                return -ENOMEM;
        }
#ifdef MADV_HUGEPAGE
        madvise(p, cap, MADV_HUGEPAGE);
#endif
        m->data = p;
        m->cap = cap;
        return 0;
}

void perf_data_mem_free(struct perf_data_mem *m)
{
        if (m->data)
                munmap(m->data, m->cap);
        m->data = NULL;
        m->len = m->cap = 0;
}
