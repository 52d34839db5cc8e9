/* SPDX-License-Identifier: MIT */
/* sort_select.c: owns the model's in-place sort and selection of 32-bit values
   (sort_select.h): three-way quicksort and quickselect around a median of three. */
#include "sort_select.h"

static inline void swap(uint32_t *v, uint32_t i, uint32_t j)
{
        uint32_t t = v[i];
        v[i] = v[j];
        v[j] = t;
}

/* The middle of v[a], v[b] and v[c]: a pivot that a sorted run does not defeat. */
static uint32_t median3(const uint32_t *v, uint32_t a, uint32_t b, uint32_t c, sort_cmp cmp,
                        const void *ctx)
{
        if (cmp(ctx, v[a], v[b]) < 0)
                return cmp(ctx, v[b], v[c]) < 0 ? b : cmp(ctx, v[a], v[c]) < 0 ? c : a;
        return cmp(ctx, v[a], v[c]) < 0 ? a : cmp(ctx, v[b], v[c]) < 0 ? c : b;
}

/* [lo, hi) split around a pivot: [lo, *lt) before it, [*gt, hi) after, the equal between. */
static void partition(uint32_t *v, uint32_t lo, uint32_t hi, sort_cmp cmp, const void *ctx,
                      uint32_t *lt, uint32_t *gt)
{
        uint32_t pivot = v[median3(v, lo, lo + (hi - lo) / 2, hi - 1, cmp, ctx)];
        uint32_t l = lo, i = lo, g = hi;
        while (i < g) {
                int c = cmp(ctx, v[i], pivot);
                if (c < 0)
                        swap(v, l++, i++);
                else if (c > 0)
                        swap(v, i, --g);
                else
                        i++;
        }
        *lt = l;
        *gt = g;
}

void select_u32(uint32_t *v, uint32_t n, uint32_t k, sort_cmp cmp, const void *ctx)
{
        uint32_t lo = 0, hi = n;
        while (hi - lo > 1) {
                uint32_t lt, gt;
                partition(v, lo, hi, cmp, ctx, &lt, &gt);
                if (k < lt)
                        hi = lt;
                else if (k > gt)
                        lo = gt;
                else
                        return;
        }
}

void sort_u32(uint32_t *v, uint32_t n, sort_cmp cmp, const void *ctx)
{
        uint32_t lo = 0, hi = n;
        for (;;) {
                if (hi - lo <= 12) {
                        for (uint32_t i = lo + 1; i < hi; i++)
                                for (uint32_t j = i; j > lo && cmp(ctx, v[j - 1], v[j]) > 0; j--)
                                        swap(v, j - 1, j);
                        return;
                }
                uint32_t lt, gt;
                partition(v, lo, hi, cmp, ctx, &lt, &gt);
                /* the smaller side by recursion (depth log n), the larger by the loop */
                if (lt - lo < hi - gt) {
                        sort_u32(v + lo, lt - lo, cmp, ctx);
                        lo = gt;
                } else {
                        sort_u32(v + gt, hi - gt, cmp, ctx);
                        hi = lt;
                }
        }
}

int sort_by_value(const void *ctx, uint32_t a, uint32_t b)
{
        (void)ctx;
        return a < b ? -1 : a > b;
}
