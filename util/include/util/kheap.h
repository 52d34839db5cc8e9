/* SPDX-License-Identifier: MIT */
/* kheap.h: the tree's k-way merge: a binary min-heap of (key, source) pairs, so that merging N
   time-ordered sources costs O(log N) a record. Ties go to the lower source index, so a merge
   is stable and its order does not depend on the heap's history. */
#ifndef ETWTOP_UTIL_KHEAP_H
#define ETWTOP_UTIL_KHEAP_H

#include <stdbool.h>
#include <stdint.h>

struct kheap_item {
        uint64_t key;
        uint32_t src;
};

struct kheap {
        struct kheap_item *a;
        uint32_t nr, cap;
};

/* An empty heap for up to cap sources: 0, or -ENOMEM (h left empty, kheap_free accepts it), so
   that a parser of untrusted input can size one from its input (doc/out-of-memory.md). */
int kheap_init(struct kheap *h, uint32_t cap);
/* Frees h's array; NULL-safe on an empty or zeroed h. */
void kheap_free(struct kheap *h);

/* Adds src with key (at most cap at once). */
void kheap_push(struct kheap *h, uint64_t key, uint32_t src);

/* The least item; the heap must not be empty. */
static inline struct kheap_item kheap_top(const struct kheap *h)
{
        return h->a[0];
}

/* Removes the least item. */
void kheap_pop(struct kheap *h);

/* Gives the least item a new key (its source's next record): one sift, cheaper than pop+push. */
void kheap_replace_top(struct kheap *h, uint64_t key);

static inline bool kheap_empty(const struct kheap *h)
{
        return h->nr == 0;
}

#endif
