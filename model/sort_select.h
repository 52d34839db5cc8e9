/* SPDX-License-Identifier: MIT */
/* sort_select.h (internal to model/): arrays of 32-bit values (numbers, or indices into an
   array of the caller's) put in order, or their first k picked out, in place and without
   allocating, under an order that is total on them (two values that compare equal are the
   same): the result is then the one qsort gives, whatever the algorithm. glibc's qsort merges
   through a buffer it allocates, whose pages a refresh faulted in again each time; sorting
   indices moves 4 bytes where the places are 56 to 80. */
#ifndef ETWTOP_MODEL_SORT_SELECT_H
#define ETWTOP_MODEL_SORT_SELECT_H

#include <stdint.h>

/* Negative, 0 or positive as a goes before, with or after b; ctx: the caller's. */
typedef int (*sort_cmp)(const void *ctx, uint32_t a, uint32_t b);

/* v[0, n) in cmp's order. */
void sort_u32(uint32_t *v, uint32_t n, sort_cmp cmp, const void *ctx);

/* The k first of v[0, n) by cmp moved to its front, in no order; the others after them, in no
   order. O(n). */
void select_u32(uint32_t *v, uint32_t n, uint32_t k, sort_cmp cmp, const void *ctx);

/* The values' own order, for sort_u32 and select_u32 (ctx unused). */
int sort_by_value(const void *ctx, uint32_t a, uint32_t b);

#endif
