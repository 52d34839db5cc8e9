/* SPDX-License-Identifier: MIT */
/* hot_row_keys.c: owns the hot functions' rows' cache: the rows a build merges places into,
   kept between builds with each settled place's row in its entry, so a build adds a place to
   its row without hashing its key. */
#include "frames_gen.h"
#include "hot_impl.h"
#include "model_util.h"

#include <stdlib.h>
#include <string.h>

void hot_row_keys_reset(struct hot *h, enum hot_grouping grouping)
{
        if (!h->row1)
                h->row1 = xcalloc(h->mask + 1, sizeof(*h->row1));
        else
                memset(h->row1, 0, (size_t)(h->mask + 1) * sizeof(*h->row1));
        h->rgrouping = grouping;
        h->nr_rkeys = 0;
        if (h->rindex)
                memset(h->rindex, 0, (size_t)(h->rindex_mask + 1) * sizeof(*h->rindex));
}

void hot_rows_rehome(struct hot *h, uint32_t *old_row1, const struct entry *old, uint32_t old_cap)
{
        if (!old_row1)
                return;
        h->row1 = xcalloc(h->mask + 1, sizeof(*h->row1));
        for (uint32_t i = 0; i < old_cap; i++)
                if (old[i].is_used && old_row1[i])
                        h->row1[hot_slot_find(h, &old[i]) - h->slots] = old_row1[i];
        free(old_row1);
}

static uint64_t row_key_hash(const struct row_key *k)
{
        return hash_mix64(((uint64_t)k->module << 32 | k->function) ^
                          hash_mix64(k->rel ^ ((uint64_t)k->pid << 32 | k->tid) * 31 ^
                                     (uint64_t)k->source << 48));
}

static bool row_key_eq(const struct row_key *a, const struct row_key *b)
{
        return a->module == b->module && a->function == b->function && a->rel == b->rel &&
               a->pid == b->pid && a->tid == b->tid && a->source == b->source;
}

/* The index at twice cap keys at least (cap: the places, which no build's rows outnumber), the
   keys put in again: a build never grows it. */
void hot_row_keys_reserve(struct hot *h, uint32_t cap)
{
        uint32_t size = h->rindex ? h->rindex_mask + 1 : 1024;
        while (size < 2 * cap)
                size *= 2;
        if (h->rindex && size == h->rindex_mask + 1)
                return;
        free(h->rindex);
        h->rindex = xzalloc_table(size, sizeof(*h->rindex));
        h->rindex_mask = size - 1;
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
                            r->name};
        if ((h->nr_rkeys + 1) * 2 > h->rindex_mask + 1)
                hot_row_keys_reserve(h, h->nr_rkeys + 1);
        uint32_t j = (uint32_t)row_key_hash(&k) & h->rindex_mask;
        for (; h->rindex[j]; j = (j + 1) & h->rindex_mask)
                if (row_key_eq(&h->rkeys[h->rindex[j] - 1], &k))
                        return h->rindex[j] - 1;
        if (h->nr_rkeys == h->cap_rkeys) {
                h->cap_rkeys = h->cap_rkeys ? h->cap_rkeys * 2 : 1024;
                h->rkeys = xrealloc(h->rkeys, h->cap_rkeys * sizeof(*h->rkeys));
                h->rout = xrealloc(h->rout, h->cap_rkeys * sizeof(*h->rout));
        }
        h->rkeys[h->nr_rkeys] = k;
        h->rout[h->nr_rkeys] = 0;
        h->rindex[j] = ++h->nr_rkeys;
        return h->nr_rkeys - 1;
}

/* Slot i's place (of source) as a row: its answer asked for (hot_place_answer); an unplaced
   one placed again (images may have come since). */
static inline __attribute__((always_inline)) struct hot_row
place_row(struct hot *h, struct entry *e, uint16_t source)
{
        struct sym_loc loc = {e->module, e->rel};
        if (!e->answer && !e->module)
                loc = sym_locate(h->store, e->pid, e->rel);
        struct sym_frame f;
        hot_place_answer(h, e, loc, &f);
        uint32_t fn = f.state == SYM_RESOLVED ? f.function : 0;
        return (struct hot_row){source,
                                loc.module,
                                fn,
                                f.state == SYM_RESOLVED ? 0 : loc.rel,
                                f.state,
                                e->self,
                                e->total - e->dup,
                                e->pid,
                                e->self,
                                e->tid,
                                sym_name(h->store, fn)};
}

/* r's counts into row w: total, each place's stacks less those that counted the function at
   another of its places (dup); the process, the one with the heaviest place of the function. */
static inline void row_add(struct hot_row *w, const struct hot_row *r)
{
        w->self += r->self;
        w->total += r->total;
        if (r->top_self > w->top_self) {
                w->top_self = r->top_self;
                w->pid = r->pid;
                w->tid = r->tid;
        }
}

/* The first build: a hash of this build's rows (the cache would cost a report, which builds
   once, more than it saves). rindex is its scratch: the cache is empty still. */
static uint32_t merge_uncached(struct hot *h, uint16_t source, enum hot_grouping grouping)
{
        hot_row_keys_reserve(h, h->nr + 1);
        memset(h->rindex, 0, (size_t)(h->rindex_mask + 1) * sizeof(*h->rindex));
        uint32_t *index = h->rindex, mask = h->rindex_mask; /* row + 1, 0 free */
        uint32_t o = 0;
        for (uint32_t wi = 0; wi <= h->mask / 64; wi++)
                for (uint64_t bits = h->used[wi]; bits; bits &= bits - 1) {
                        struct entry *e = &h->slots[wi * 64 + (uint32_t)__builtin_ctzll(bits)];
                        if (!e->is_used || e->source != source) /* the bits a superset */
                                continue;
                        struct hot_row r = place_row(h, e, source);
                        uint64_t hk = hash_mix64(((uint64_t)r.module << 32 | r.function) ^
                                                 hash_mix64(r.rel) ^
                                                 (grouping == HOT_BY_PROCESS  ? hash_mix64(r.pid)
                                                  : grouping == HOT_BY_THREAD ? hash_mix64(r.tid)
                                                                              : 0));
                        uint32_t j = (uint32_t)hk & mask;
                        for (; index[j]; j = (j + 1) & mask) {
                                const struct hot_row *w = &h->rows[index[j] - 1];
                                if (w->module == r.module && w->function == r.function &&
                                    w->rel == r.rel &&
                                    (grouping != HOT_BY_PROCESS || w->pid == r.pid) &&
                                    (grouping != HOT_BY_THREAD || w->tid == r.tid))
                                        break;
                        }
                        if (index[j]) {
                                row_add(&h->rows[index[j] - 1], &r);
                        } else {
                                hot_rows_room(h, o);
                                h->rows[o] = r;
                                index[j] = ++o;
                        }
                }
        return o;
}

/* The used slots of the places table in order, from its bitmap (a superset of them). */
struct used_iter {
        const uint64_t *used;
        uint32_t nr_words, wi;
        uint64_t bits;
};
#define MERGE_AHEAD 16

static inline bool used_next(struct used_iter *it, uint32_t *i)
{
        while (!it->bits) {
                if (++it->wi >= it->nr_words)
                        return false;
                it->bits = it->used[it->wi];
        }
        *i = it->wi * 64 + (uint32_t)__builtin_ctzll(it->bits);
        it->bits &= it->bits - 1;
        return true;
}

/* The later builds: a settled place knows its row (row1), and so does an unplaced one while it
   stays unplaced (unplaced_stands: sym_locate's and the answer's look, ~450 instructions, was
   a third of a samples-only screen's build with a few thousand unplaced places); the others'
   keys are hashed into the cache's index. Rows go out in the order their first places come,
   as the first build's. */
static uint32_t merge_cached(struct hot *h, uint16_t source, enum hot_grouping grouping)
{
        /* rows of places gone stay in the cache: past twice the places, it starts over */
        if (!h->row1 || h->rgrouping != grouping || h->nr_rkeys > 2 * h->nr + 4096)
                hot_row_keys_reset(h, grouping);
        hot_row_keys_reserve(h, h->nr + 1);
        if (h->nr_rkeys)
                memset(h->rout, 0, h->nr_rkeys * sizeof(*h->rout));
        unplaced_look(&h->uprobed);
        /* the unplaced places' rows were made by the last build when it merged this source */
        const struct frames_gen *was = h->ugen && h->ugen_source == source ? h->ugen : NULL;
        bool is_live = sym_store_is_live(h->store);
        uint32_t o = 0;
        /* the last module's sym_answers_epoch (a recording's kernel: its places are many),
           asked again after the store was (a lookup may build its table again) */
        uint32_t epoch_module = 0, epoch = 0;
        /* the used slots in the table's order, by their bits; the place MERGE_AHEAD used slots
           on, and its row's key, asked of memory as each is merged (a place is a line the
           samples since the last build pushed out of the caches: the first read of each was
           half of the merge) */
        struct used_iter it = {h->used, h->mask / 64 + 1, 0, h->used[0]};
        struct used_iter ahead = it;
        uint32_t i, j;
        for (uint32_t n = 0; n < MERGE_AHEAD && used_next(&ahead, &j); n++)
                __builtin_prefetch(&h->slots[j]);
        while (used_next(&it, &i)) {
                if (used_next(&ahead, &j)) {
                        __builtin_prefetch(&h->slots[j]);
                        if (h->row1[j])
                                __builtin_prefetch(&h->rkeys[h->row1[j] - 1]);
                }
                struct entry *e = &h->slots[i];
                if (!e->is_used || e->source != source) /* the bits a superset */
                        continue;
                uint32_t k = h->row1[i];
                bool is_cached = k && e->answer;
                if (is_cached && e->epoch) {
                        if (e->module != epoch_module) {
                                epoch_module = e->module;
                                epoch = sym_answers_epoch(h->store, e->module);
                        }
                        is_cached = e->epoch == epoch;
                }
                /* a place of no module has no answer kept (hot_place_answer); live, the first of
                   a process's unplaced places is located again (place_row), which marks the
                   process when none came, and the others stand on it (unplaced.h) */
                bool is_unplaced =
                        k && !e->module && was &&
                        unplaced_stands(&h->uprobed, h->frames_gen, was, e->pid, is_live);
                struct hot_row r;
                if (is_cached || is_unplaced) {
                        /* hot_place_answer's answer stands: the row's key as it was made */
                        uint32_t out1 = h->rout[--k];
                        if (out1) { /* a row made this build: added to */
                                struct hot_row *w = &h->rows[out1 - 1];
                                w->self += e->self;
                                w->total += e->total - e->dup;
                                if (e->self > w->top_self) {
                                        w->top_self = e->self;
                                        w->pid = e->pid;
                                        w->tid = e->tid;
                                }
                                continue;
                        }
                        const struct row_key *rk = &h->rkeys[k];
                        r = (struct hot_row){source,
                                             e->module,
                                             rk->function,
                                             rk->rel,
                                             is_cached ? (enum sym_state)(e->answer - 1)
                                                       : SYM_NO_MODULE,
                                             e->self,
                                             e->total - e->dup,
                                             e->pid,
                                             e->self,
                                             e->tid,
                                             rk->name};
                } else {
                        epoch_module = 0;
                        r = place_row(h, e, source);
                        k = hot_row_key_get(h, &r);
                        /* a settled answer of a placed address keys the same row next time */
                        if (e->module && e->answer &&
                            (!e->epoch || e->epoch == sym_answers_epoch(h->store, e->module)))
                                h->row1[i] = k + 1;
                        /* and so does an address no image holds, while none comes */
                        if (!e->module && !r.module) {
                                h->row1[i] = k + 1;
                                if (is_live)
                                        unplaced_mark(&h->uprobed, e->pid);
                        }
                }
                if (!h->rout[k]) {
                        hot_rows_room(h, o);
                        h->rows[o] = r;
                        h->rout[k] = ++o;
                } else {
                        row_add(&h->rows[h->rout[k] - 1], &r);
                }
        }
        /* the processes' addresses as this build saw them, for the next one's unplaced places */
        if (!h->ugen)
                h->ugen = xmalloc(sizeof(*h->ugen));
        *h->ugen = *h->frames_gen;
        h->ugen_source = source;
        return o;
}

uint32_t hot_rows_merge(struct hot *h, uint16_t source, enum hot_grouping grouping)
{
        return h->nr_builds++ ? merge_cached(h, source, grouping)
                              : merge_uncached(h, source, grouping);
}
