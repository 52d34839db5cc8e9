/* SPDX-License-Identifier: MIT */
/* sort_select.c: owns the model's in-place sort and selection (sort_select.h): three-way
   quicksort and quickselect around a median of three. */
#include "sort_select.h"

#include <assert.h>
#include <string.h>

static inline void *at(void *base, size_t size, uint32_t i)
{
        return (char *)base + (size_t)i * size;
}

static inline void swap(void *base, size_t size, uint32_t i, uint32_t j)
{
        unsigned char t[SORT_MAX_SIZE];
        memcpy(t, at(base, size, i), size);
        memcpy(at(base, size, i), at(base, size, j), size);
        memcpy(at(base, size, j), t, size);
}

/* The middle of elements a, b and c: a pivot that a sorted run does not defeat. */
static uint32_t median3(void *base, size_t size, uint32_t a, uint32_t b, uint32_t c, sort_cmp cmp)
{
        void *x = at(base, size, a), *y = at(base, size, b), *z = at(base, size, c);
        if (cmp(x, y) < 0)
                return cmp(y, z) < 0 ? b : cmp(x, z) < 0 ? c : a;
        return cmp(x, z) < 0 ? a : cmp(y, z) < 0 ? c : b;
}

/* [lo, hi) split around a pivot: [lo, *lt) before it, [*gt, hi) after, the equal between. */
static void partition(void *base, size_t size, uint32_t lo, uint32_t hi, sort_cmp cmp, uint32_t *lt,
                      uint32_t *gt)
{
        unsigned char pivot[SORT_MAX_SIZE];
        memcpy(pivot, at(base, size, median3(base, size, lo, lo + (hi - lo) / 2, hi - 1, cmp)),
               size);
        uint32_t l = lo, i = lo, g = hi;
        while (i < g) {
                int c = cmp(at(base, size, i), pivot);
                if (c < 0)
                        swap(base, size, l++, i++);
                else if (c > 0)
                        swap(base, size, i, --g);
                else
                        i++;
        }
        *lt = l;
        *gt = g;
}

void select_first(void *base, uint32_t n, size_t size, uint32_t k, sort_cmp cmp)
{
        assert(size <= SORT_MAX_SIZE);
        uint32_t lo = 0, hi = n;
        while (hi - lo > 1) {
                uint32_t lt, gt;
                partition(base, size, lo, hi, cmp, &lt, &gt);
                if (k < lt)
                        hi = lt;
                else if (k > gt)
                        lo = gt;
                else
                        return;
        }
}

void sort_in_place(void *base, uint32_t n, size_t size, sort_cmp cmp)
{
        assert(size <= SORT_MAX_SIZE);
        uint32_t lo = 0, hi = n;
        for (;;) {
                if (hi - lo <= 12) {
                        for (uint32_t i = lo + 1; i < hi; i++)
                                for (uint32_t j = i;
                                     j > lo && cmp(at(base, size, j - 1), at(base, size, j)) > 0;
                                     j--)
                                        swap(base, size, j - 1, j);
                        return;
                }
                uint32_t lt, gt;
                partition(base, size, lo, hi, cmp, &lt, &gt);
                /* the smaller side by recursion (depth log n), the larger by the loop */
                if (lt - lo < hi - gt) {
                        sort_in_place(at(base, size, lo), lt - lo, size, cmp);
                        lo = gt;
                } else {
                        sort_in_place(at(base, size, gt), hi - gt, size, cmp);
                        hi = lt;
                }
        }
}
