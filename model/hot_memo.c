/* SPDX-License-Identifier: MIT */
/* hot_memo.c: owns the hot functions' stack memos (stacks counted once, their places' totals
   settled later) and the deferred stacks whose functions are not all named yet. */
#include "hot_impl.h"
#include "model_util.h"

#include <stdlib.h>
#include <string.h>

void hot_memo_settle(struct hot *h, struct stack_memo *m)
{
        if (!m->nr_pending)
                return;
        for (uint32_t i = 0; i < m->nr_places; i++) {
                uint32_t slot = m->places[i] & ~MEMO_DUP;
                struct entry *e = &h->slots[slot];
                hot_dirty_set(h, slot);
                e->total += m->nr_pending;
                if (m->places[i] & MEMO_DUP)
                        e->dup += m->nr_pending;
        }
        h->nr_pending -= m->nr_pending;
        m->nr_pending = 0;
}

/* A stack's memo: the slot of its pair that holds it (a hit, unless its names are still loading:
   it then takes the long way, and the memo is dropped), else the one it takes (memo_ways.h). */
struct stack_memo *hot_memo_find(struct hot *h, uint64_t mh, uint64_t generation, bool is_pending,
                                 bool *is_hit)
{
        struct stack_memo *m = &h->memo[(uint32_t)mh & (MEMO_SLOTS - 2)];
        uint32_t pair = (uint32_t)(m - h->memo) >> 1;
        __builtin_prefetch(&m[1]); /* in flight while the first is read */
        int stale = -1;
        for (uint32_t way = 0; way < 2; way++) {
                if (!m[way].is_set || m[way].hash != mh)
                        continue;
                if (m[way].generation == generation && m[way].epoch == h->epoch) {
                        memo_ways_used(h->memo_second_recent, pair, way);
                        *is_hit = !is_pending;
                        return &m[way];
                }
                stale = (int)way;
        }
        *is_hit = false;
        return &m[memo_ways_take(h->memo_second_recent, pair, stale, !m[0].is_set, !m[1].is_set)];
}

/* A memo a settle will come to SETTLE_AHEAD memos on, asked of memory (its three lines), and the
   places of the one half as far on (read from its lines, asked for by then): a memo settled at a
   refresh was written a second before, and its places are lines of the places table that the
   samples since pushed out of the caches; each was read in turn, waiting on memory. */
#define SETTLE_AHEAD 8

static inline void settle_prefetch_memo(const struct stack_memo *m)
{
        const char *p = (const char *)m;
        for (size_t o = 0; o < sizeof(*m); o += 64)
                __builtin_prefetch(p + o);
}

static inline void settle_prefetch_places(const struct hot *h, const struct stack_memo *m)
{
        if (!m->nr_pending)
                return;
        for (uint32_t i = 0; i < m->nr_places && i < MEMO_PLACES; i++)
                __builtin_prefetch(&h->slots[m->places[i] & ~MEMO_DUP]);
}

/* The memos listed since the last settle (pending_slots.h), or every one where the list
   overflowed: the sums are the same in any order. */
void hot_memo_settle_all(struct hot *h)
{
        const struct pending_slots *l = &h->pending_memos;
        uint32_t n = h->nr_pending ? pending_slots_nr(l, MEMO_SLOTS) : 0;
        for (uint32_t i = 0; i < n && i < SETTLE_AHEAD; i++)
                settle_prefetch_memo(&h->memo[pending_slots_at(l, i)]);
        for (uint32_t i = 0; i < n && i < SETTLE_AHEAD / 2; i++)
                settle_prefetch_places(h, &h->memo[pending_slots_at(l, i)]);
        for (uint32_t i = 0; h->nr_pending && i < n; i++) {
                if (i + SETTLE_AHEAD < n)
                        settle_prefetch_memo(&h->memo[pending_slots_at(l, i + SETTLE_AHEAD)]);
                if (i + SETTLE_AHEAD / 2 < n)
                        settle_prefetch_places(h,
                                               &h->memo[pending_slots_at(l, i + SETTLE_AHEAD / 2)]);
                hot_memo_settle(h, &h->memo[pending_slots_at(l, i)]);
        }
        pending_slots_clear(&h->pending_memos);
}

/* ---- stacks whose functions are not all named yet ---- */

void hot_deferred_index(struct hot *h)
{
        memset(h->dindex, 0, DEFER_SLOTS * sizeof(*h->dindex));
        for (uint32_t i = 0; i < h->nr_dstacks; i++) {
                uint32_t j = (uint32_t)h->dstacks[i].hash & (DEFER_SLOTS - 1);
                while (h->dindex[j])
                        j = (j + 1) & (DEFER_SLOTS - 1);
                h->dindex[j] = i + 1;
        }
}

bool hot_deferred_add(struct hot *h, uint64_t mh, const struct entry *keys, const uint32_t *idx,
                      uint32_t n)
{
        if (!h->dindex)
                h->dindex = xcalloc(DEFER_SLOTS, sizeof(*h->dindex));
        uint32_t j = (uint32_t)mh & (DEFER_SLOTS - 1);
        for (; h->dindex[j]; j = (j + 1) & (DEFER_SLOTS - 1)) {
                struct deferred_stack *d = &h->dstacks[h->dindex[j] - 1];
                if (d->hash == mh && d->nr == n) {
                        d->count++;
                        return true;
                }
        }
        if (h->nr_dstacks == DEFER_MAX_STACKS || h->nr_dkeys + n > DEFER_MAX_KEYS)
                return false;
        if (h->nr_dstacks == h->cap_dstacks) {
                h->cap_dstacks = h->cap_dstacks ? h->cap_dstacks * 2 : 64;
                h->dstacks = xrealloc(h->dstacks, h->cap_dstacks * sizeof(*h->dstacks));
        }
        while (h->nr_dkeys + n > h->cap_dkeys) {
                h->cap_dkeys = h->cap_dkeys ? h->cap_dkeys * 2 : 1024;
                h->dkeys = xrealloc(h->dkeys, h->cap_dkeys * sizeof(*h->dkeys));
        }
        h->dstacks[h->nr_dstacks] = (struct deferred_stack){mh, 1, h->nr_dkeys, n};
        for (uint32_t i = 0; i < n; i++)
                h->dkeys[h->nr_dkeys++] = keys[idx[i]];
        h->dindex[j] = ++h->nr_dstacks;
        return true;
}

void hot_deferred_settle(struct hot *h)
{
        if (!h->nr_dstacks)
                return;
        uint32_t nr_kept = 0, nr_kept_keys = 0;
        uint64_t functions[MAX_STACK_KEYS];
        struct entry *found[MAX_STACK_KEYS];
        for (uint32_t i = 0; i < h->nr_dstacks; i++) {
                struct deferred_stack d = h->dstacks[i];
                bool is_known = true;
                for (uint32_t k = 0; k < d.nr; k++) {
                        struct entry *e = hot_slot_find(h, &h->dkeys[d.first + k]);
                        found[k] = e->is_used ? e : NULL;
                        if (found[k] && !hot_place_function(h, e, &functions[k]))
                                is_known = false;
                }
                if (!is_known) {
                        memmove(h->dkeys + nr_kept_keys, h->dkeys + d.first,
                                d.nr * sizeof(*h->dkeys));
                        d.first = nr_kept_keys;
                        nr_kept_keys += d.nr;
                        h->dstacks[nr_kept++] = d;
                        continue;
                }
                hot_seen_next(h);
                for (uint32_t k = 0; k < d.nr; k++) {
                        if (!found[k] || !functions[k] || !hot_function_seen(h, functions[k]))
                                continue;
                        hot_dirty_set(h, (uint32_t)(found[k] - h->slots));
                        found[k]->dup += d.count;
                        if (found[k]->dup > found[k]->total)
                                found[k]->dup = found[k]->total;
                }
        }
        if (nr_kept != h->nr_dstacks) {
                h->nr_dstacks = nr_kept;
                h->nr_dkeys = nr_kept_keys;
                hot_deferred_index(h);
        }
}

void hot_pending_flush(struct hot *h, struct pending *p)
{
        if (p->has && !p->is_matched) {
                hot_count(h, &p->key, p->is_unplaced ? 1 : 0, 1);
                h->nr_unmatched--;
        }
        p->has = false;
}

uint64_t hot_function_bit(uint64_t function)
{
        return 1ull << (hash_mix64(function) & 63);
}

bool hot_memo_has_function(struct hot *h, const struct stack_memo *m, uint64_t function)
{
        if (!(m->functions & hot_function_bit(function)))
                return false;
        for (uint32_t i = 0; i < m->nr_places; i++) {
                uint64_t f;
                hot_place_function(h, &h->slots[m->places[i] & ~MEMO_DUP], &f);
                if (f == function)
                        return true;
        }
        return false;
}
