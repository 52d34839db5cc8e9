// SPDX-License-Identifier: MIT
/* kheap.c: the k-way merge's min-heap (util/kheap.h). */
#include "util/kheap.h"

#include <errno.h>
#include <stdlib.h>

static bool less(const struct kheap_item *x, const struct kheap_item *y)
{
        return x->key < y->key || (x->key == y->key && x->src < y->src);
}

static void sift_down(struct kheap *h, uint32_t i)
{
        for (;;) {
                uint32_t l = 2 * i + 1, r = l + 1, m = i;

                if (l < h->nr && less(&h->a[l], &h->a[m]))
                        m = l;
                if (r < h->nr && less(&h->a[r], &h->a[m]))
                        m = r;
                if (m == i)
                        return;
                struct kheap_item t = h->a[i];
                h->a[i] = h->a[m];
                h->a[m] = t;
                i = m;
        }
}

int kheap_init(struct kheap *h, uint32_t cap)
{
        h->a = calloc(cap ? cap : 1, sizeof(*h->a));
        h->nr = 0;
        h->cap = h->a ? (cap ? cap : 1) : 0;
        return h->a ? 0 : -ENOMEM;
}

void kheap_free(struct kheap *h)
{
        free(h->a);
        h->a = NULL;
        h->nr = h->cap = 0;
}

void kheap_push(struct kheap *h, uint64_t key, uint32_t src)
{
        if (h->nr == h->cap)
                abort(); /* more sources than the heap was made for: a caller's bug */
        uint32_t i = h->nr++;

        h->a[i] = (struct kheap_item){key, src};
        while (i > 0) {
                uint32_t p = (i - 1) / 2;

                if (!less(&h->a[i], &h->a[p]))
                        break;
                struct kheap_item t = h->a[i];
                h->a[i] = h->a[p];
                h->a[p] = t;
                i = p;
        }
}

void kheap_pop(struct kheap *h)
{
        h->a[0] = h->a[--h->nr];
        sift_down(h, 0);
}

void kheap_replace_top(struct kheap *h, uint64_t key)
{
        h->a[0].key = key;
        sift_down(h, 0);
}
