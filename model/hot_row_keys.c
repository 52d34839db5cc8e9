/* SPDX-License-Identifier: MIT */
/* hot_row_keys.c: owns the hot functions' rows' cache: the rows a build merges places into,
   kept between builds with each settled place's row in its entry, so a build adds a place to
   its row without hashing its key. */
#include "hot_impl.h"
#include "model_util.h"

#include <stdlib.h>
#include <string.h>

void hot_row_keys_reset(struct hot *h, enum hot_grouping grouping)
{
        if (++h->rgen == 0) { /* the entries' generations would come back: forgotten */
                for (uint32_t i = 0; i <= h->mask; i++)
                        h->slots[i].rgen = 0;
                h->rgen = 1;
        }
        h->rgrouping = grouping;
        h->nr_rkeys = 0;
        if (h->rindex)
                memset(h->rindex, 0, (size_t)(h->rindex_mask + 1) * sizeof(*h->rindex));
}

static uint64_t row_key_hash(const struct row_key *k)
{
        return hash_mix64(((uint64_t)k->module << 32 | k->function) ^ hash_mix64(k->rel) ^
                          hash_mix64((uint64_t)k->pid << 32 | k->tid) ^ k->source);
}

static bool row_key_eq(const struct row_key *a, const struct row_key *b)
{
        return a->module == b->module && a->function == b->function && a->rel == b->rel &&
               a->pid == b->pid && a->tid == b->tid && a->source == b->source;
}

static void rindex_grow(struct hot *h)
{
        uint32_t cap = h->rindex ? (h->rindex_mask + 1) * 2 : 1024;
        free(h->rindex);
        h->rindex = xzalloc_table(cap, sizeof(*h->rindex));
        h->rindex_mask = cap - 1;
        for (uint32_t i = 0; i < h->nr_rkeys; i++) {
                uint32_t j = (uint32_t)row_key_hash(&h->rkeys[i]) & h->rindex_mask;
                while (h->rindex[j])
                        j = (j + 1) & h->rindex_mask;
                h->rindex[j] = i + 1;
        }
}

uint32_t hot_row_key_get(struct hot *h, const struct hot_row *r)
{
        struct row_key k = {r->rel,
                            r->module,
                            r->function,
                            h->rgrouping == HOT_BY_PROCESS ? r->pid : 0,
                            h->rgrouping == HOT_BY_THREAD ? r->tid : 0,
                            r->source,
                            0,
                            0};
        if (!h->rindex || (h->nr_rkeys + 1) * 2 > h->rindex_mask + 1)
                rindex_grow(h);
        uint32_t j = (uint32_t)row_key_hash(&k) & h->rindex_mask;
        for (; h->rindex[j]; j = (j + 1) & h->rindex_mask)
                if (row_key_eq(&h->rkeys[h->rindex[j] - 1], &k))
                        return h->rindex[j] - 1;
        if (h->nr_rkeys == h->cap_rkeys) {
                h->cap_rkeys = h->cap_rkeys ? h->cap_rkeys * 2 : 1024;
                h->rkeys = xrealloc(h->rkeys, h->cap_rkeys * sizeof(*h->rkeys));
        }
        h->rkeys[h->nr_rkeys] = k;
        h->rindex[j] = ++h->nr_rkeys;
        return h->nr_rkeys - 1;
}
