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
/* kheap_init for a size the program chooses (a source per CPU): out of memory aborts
   (util/xalloc.h, doc/out-of-memory.md rule 1). */
void kheap_xinit(struct kheap *h, uint32_t cap);
/* Frees h's array; NULL-safe on an empty or zeroed h. */
void kheap_free(struct kheap *h);

/* Adds src with key (at most cap at once). */
void kheap_push(struct kheap *h, uint64_t key, uint32_t src);

/* Whether x comes before y: the lower key, on a tie the lower source. */
static inline bool kheap_item_less(struct kheap_item x, struct kheap_item y)
{
        return x.key < y.key || (x.key == y.key && x.src < y.src);
}

/* The least item; the heap must not be empty. */
static inline struct kheap_item kheap_top(const struct kheap *h)
{
        return h->a[0];
}

/* The greatest key up to which the least item's source comes first: a merge takes that
   source's records while their keys are at most this, then sifts once (kheap_replace_top or
   kheap_pop), rather than once a record. UINT64_MAX when the least item is alone; the heap must
   not be empty. */
static inline uint64_t kheap_run_limit(const struct kheap *h)
{
        struct kheap_item next = {UINT64_MAX, UINT32_MAX};

        if (h->nr > 1)
                next = h->a[1];
        if (h->nr > 2 && kheap_item_less(h->a[2], next))
                next = h->a[2];
        /* a tie goes to the lower source; the top is before next, so a top source above
           next's has a lower key, and next.key is at least 1 */
        return next.key - (h->a[0].src > next.src);
}

/* Moves a[i] down to its place: the lesser child moves up into the hole until the item is not
   after it (one store a level). Inline, as what follows, for the merges' per-record paths. */
static inline void kheap_sift_down(struct kheap *h, uint32_t i)
{
        struct kheap_item x = h->a[i];
        uint32_t n = h->nr;

        for (;;) {
                uint32_t k = 2 * i + 1;

                if (k >= n)
                        break;
                if (k + 1 < n && kheap_item_less(h->a[k + 1], h->a[k]))
                        k++;
                if (!kheap_item_less(h->a[k], x))
                        break;
                h->a[i] = h->a[k];
                i = k;
        }
        h->a[i] = x;
}

/* Removes the least item. */
static inline void kheap_pop(struct kheap *h)
{
        h->a[0] = h->a[--h->nr];
        kheap_sift_down(h, 0);
}

/* Gives the least item a new key (its source's next record): one sift, cheaper than pop+push. */
static inline void kheap_replace_top(struct kheap *h, uint64_t key)
{
        h->a[0].key = key;
        kheap_sift_down(h, 0);
}

static inline bool kheap_empty(const struct kheap *h)
{
        return h->nr == 0;
}

#endif
