// SPDX-License-Identifier: MIT
/* kheap.c: the k-way merge's min-heap (util/kheap.h). */
#include "util/kheap.h"
#include "util/xalloc.h"

#include <errno.h>
#include <stdlib.h>

int kheap_init(struct kheap *h, uint32_t cap)
{
        h->a = calloc(cap ? cap : 1, sizeof(*h->a));
        h->nr = 0;
        h->cap = h->a ? (cap ? cap : 1) : 0;
        return h->a ? 0 : -ENOMEM;
}

void kheap_xinit(struct kheap *h, uint32_t cap)
{
        h->a = xcalloc(cap ? cap : 1, sizeof(*h->a));
        h->nr = 0;
        h->cap = cap ? cap : 1;
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

                if (!kheap_item_less(h->a[i], h->a[p]))
                        break;
                struct kheap_item t = h->a[i];
                h->a[i] = h->a[p];
                h->a[p] = t;
                i = p;
        }
}
