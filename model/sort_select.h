/* SPDX-License-Identifier: MIT */
/* sort_select.h (internal to model/): arrays put in order, or their first k picked out, in
   place and without allocating, under an order that is total on their elements (two elements
   that compare equal are the same): the result is then the one qsort gives, whatever the
   algorithm. glibc's qsort merges through a buffer it allocates, whose pages a refresh faulted
   in again each time. */
#ifndef ETWTOP_MODEL_SORT_SELECT_H
#define ETWTOP_MODEL_SORT_SELECT_H

#include <stddef.h>
#include <stdint.h>

#define SORT_MAX_SIZE 128 /* the largest element, in bytes */

typedef int (*sort_cmp)(const void *, const void *);

/* base[0, n) (elements of size bytes) in cmp's order. */
void sort_in_place(void *base, uint32_t n, size_t size, sort_cmp cmp);

/* The k first of base[0, n) by cmp moved to its front, in no order; the others after them, in
   no order. O(n). */
void select_first(void *base, uint32_t n, size_t size, uint32_t k, sort_cmp cmp);

#endif
