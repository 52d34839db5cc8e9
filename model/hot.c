/* SPDX-License-Identifier: MIT */
/* hot.c: owns the self and total counts of sampled addresses and their aggregation into hot
   functions and modules. */
#include "hot_impl.h"
#include "model_util.h"

#include <stdlib.h>
#include <string.h>

static uint64_t key_hash(const struct entry *k)
{
        return mix(k->rel ^ mix(((uint64_t)k->module << 32 | k->pid) ^ ((uint64_t)k->source << 48) ^
                                ((uint64_t)k->tid << 17)));
}

static bool key_eq(const struct entry *a, const struct entry *b)
{
        return a->rel == b->rel && a->module == b->module && a->pid == b->pid && a->tid == b->tid &&
               a->source == b->source;
}

struct hot *hot_new(struct sym_store *store, uint32_t max_entries)
{
        struct hot *h = xcalloc(1, sizeof(*h));
        h->store = store;
        h->max_entries = max_entries ? max_entries : (1u << 20);
        h->mask = 1023;
        h->slots = xcalloc(h->mask + 1, sizeof(*h->slots));
        h->memo = xcalloc(MEMO_SLOTS, sizeof(*h->memo));
        agg_settings_init(&h->settings);
        agg_filter_init(&h->filter);
        return h;
}

void hot_free(struct hot *h)
{
        if (!h)
                return;
        free(h->slots);
        free(h->rows);
        free(h->sort_a);
        free(h->sort_b);
        free(h->sort_rows);
        free(h->merge);
        free(h->memo);
        free(h->dstacks);
        free(h->dkeys);
        free(h->dindex);
        free(h->mrows);
        free(h->line_rows);
        free(h->ended_pids);
        free(h);
}

void hot_reset(struct hot *h)
{
        h->nr_rows_cached = 0;
        memset(h->slots, 0, (size_t)(h->mask + 1) * sizeof(*h->slots));
        h->nr = 0;
        memset(h->nr_other, 0, sizeof(h->nr_other));
        memset(&h->caps, 0, sizeof(h->caps));
        h->nr_ended_pids = h->nr_prev_ended = 0;
        memset(h->nr_samples, 0, sizeof(h->nr_samples));
        h->nr_sources = 0;
        h->nr_stacks = 0;
        memset(h->pend, 0, sizeof(h->pend));
        h->nr_pend = 0;
        memset(h->memo, 0, MEMO_SLOTS * sizeof(*h->memo));
        h->nr_pending = 0;
        h->nr_dstacks = h->nr_dkeys = 0;
        if (h->dindex)
                memset(h->dindex, 0, DEFER_SLOTS * sizeof(*h->dindex));
        h->epoch++;
}

/* Counts a memo's waiting stacks in its places. */
static void memo_settle(struct hot *h, struct stack_memo *m)
{
        if (!m->nr_pending)
                return;
        for (uint32_t i = 0; i < m->nr_places; i++) {
                struct entry *e = &h->slots[m->places[i] & ~MEMO_DUP];
                e->total += m->nr_pending;
                if (m->places[i] & MEMO_DUP)
                        e->dup += m->nr_pending;
        }
        h->nr_pending -= m->nr_pending;
        m->nr_pending = 0;
}

/* Every waiting stack counted: before the totals are read or the places move. */
static void memo_settle_all(struct hot *h)
{
        for (uint32_t i = 0; h->nr_pending && i < MEMO_SLOTS; i++)
                memo_settle(h, &h->memo[i]);
}

/* hash: key_hash(k), which the caller may have at hand */
static struct entry *slot_find_hashed(struct hot *h, const struct entry *k, uint64_t hash)
{
        for (uint32_t j = (uint32_t)hash & h->mask;; j = (j + 1) & h->mask) {
                struct entry *e = &h->slots[j];
                if (!e->is_used || key_eq(e, k))
                        return e;
        }
}

static struct entry *slot_find(struct hot *h, const struct entry *k)
{
        return slot_find_hashed(h, k, key_hash(k));
}

static void grow(struct hot *h)
{
        memo_settle_all(h);
        h->epoch++;
        struct entry *old = h->slots;
        uint32_t old_cap = h->mask + 1;
        h->mask = old_cap * 2 - 1;
        h->slots = xzalloc_table(h->mask + 1, sizeof(*h->slots));
        for (uint32_t i = 0; i < old_cap; i++)
                if (old[i].is_used)
                        *slot_find(h, &old[i]) = old[i];
        free(old);
}

static uint32_t source_index(struct hot *h, uint16_t source)
{
        for (uint32_t i = 0; i < h->nr_sources; i++)
                if (h->sources[i] == source)
                        return i;
        if (h->nr_sources == MAX_SOURCES)
                return MAX_SOURCES - 1; /* more sources than anyone configures: lumped */
        h->sources[h->nr_sources] = source;
        return h->nr_sources++;
}

/* Adds self and total to the entry of k (hash: key_hash(k)); counted as other when the table is
   full. Returns the entry's slot, UINT32_MAX when it went to other. */
static uint32_t count_hashed(struct hot *h, const struct entry *k, uint64_t hash, uint64_t self,
                             uint64_t total)
{
        h->nr_rows_cached = 0; /* the rows asked for last are stale */
        struct entry *e = slot_find_hashed(h, k, hash);
        if (!e->is_used) {
                if (h->nr >= h->max_entries) {
                        h->nr_other[source_index(h, k->source)] += self;
                        h->caps.nr_samples_no_room += self;
                        return UINT32_MAX;
                }
                *e = *k;
                e->is_used = true;
                e->self = e->total = e->dup = 0;
                h->nr++;
                if (k->module)
                        sym_prefetch(h->store, k->module); /* its rows will want names */
                if (h->nr * 2 > h->mask + 1) {
                        grow(h);
                        e = slot_find_hashed(h, k, hash);
                }
        }
        e->self += self;
        e->total += total;
        return (uint32_t)(e - h->slots);
}

static void count(struct hot *h, const struct entry *k, uint64_t self, uint64_t total)
{
        count_hashed(h, k, key_hash(k), self, total);
}

static struct entry key_of(struct hot *h, uint16_t source, uint32_t pid, uint32_t tid,
                           uint64_t addr)
{
        struct sym_loc loc = sym_locate(h->store, pid, addr);
        struct entry k = {0};
        k.source = source;
        k.module = loc.module;
        k.rel = loc.module ? loc.rel : addr;
        k.pid = pid;
        k.tid = tid;
        return k;
}

/* The symbol store's answer for e's place, at loc (its own, or where a place of no module lies
   now). The answer of a module whose answers are settled stays in e (a name, or none there);
   the others may still change (loading, late images, a recording's kernel). Settled is asked
   first: a module that finishes loading after the answer was asked for gave a pending one,
   which must not stay. */
static void place_answer(struct hot *h, struct entry *e, struct sym_loc loc, struct sym_frame *f)
{
        *f = (struct sym_frame){(enum sym_state)(e->answer - 1), e->module, e->function, 0};
        if (e->answer)
                return;
        bool is_final = e->module && sym_answers_are_final(h->store, e->module);
        sym_resolve(h->store, loc, f);
        if (is_final) {
                e->answer = (uint8_t)(f->state + 1);
                e->function = f->state == SYM_RESOLVED ? f->function : 0;
        }
}

/* The function of e's place as its row will name it (module << 32 | function) in *function, 0
   when it has none. False while the module's symbols load (the name may still come). The answer
   of a module whose answers are settled is kept in the entry, as hot_top_functions keeps it. */
static bool place_function(struct hot *h, struct entry *e, uint64_t *function)
{
        *function = 0;
        if (!e->module)
                return true;
        struct sym_frame f;
        place_answer(h, e, (struct sym_loc){e->module, e->rel}, &f);
        if (f.state == SYM_RESOLVED)
                *function = (uint64_t)e->module << 32 | f.function;
        return f.state != SYM_PENDING;
}

/* True when function (not 0) was counted in the current stack already; else it is now. */
static bool function_seen(struct hot *h, uint64_t function)
{
        for (uint32_t j = (uint32_t)(mix(function) >> 40) & (SEEN_SLOTS - 1);;
             j = (j + 1) & (SEEN_SLOTS - 1)) {
                if (h->fseen[j].gen != h->seen_gen) {
                        h->fseen[j].gen = h->seen_gen;
                        h->fseen[j].key = function;
                        return false;
                }
                if (h->fseen[j].key == function)
                        return true;
        }
}

static void seen_next(struct hot *h)
{
        if (++h->seen_gen == 0) {
                memset(h->seen, 0, sizeof(h->seen));
                memset(h->fseen, 0, sizeof(h->fseen));
                h->seen_gen = 1;
        }
}

/* Whether keys[i] (hash: its key_hash) is in the current stack's set of places; else it is now. */
static bool place_seen(struct hot *h, const struct entry *keys, uint32_t i, uint64_t hash)
{
        uint32_t j = (uint32_t)(hash >> 40) & (SEEN_SLOTS - 1);
        while (h->seen[j].gen == h->seen_gen) {
                if (key_eq(&keys[h->seen[j].index], &keys[i]))
                        return true;
                j = (j + 1) & (SEEN_SLOTS - 1);
        }
        h->seen[j].gen = h->seen_gen;
        h->seen[j].index = i;
        return false;
}

/* ---- stacks whose functions are not all named yet ---- */

static void deferred_index(struct hot *h)
{
        memset(h->dindex, 0, DEFER_SLOTS * sizeof(*h->dindex));
        for (uint32_t i = 0; i < h->nr_dstacks; i++) {
                uint32_t j = (uint32_t)h->dstacks[i].hash & (DEFER_SLOTS - 1);
                while (h->dindex[j])
                        j = (j + 1) & (DEFER_SLOTS - 1);
                h->dindex[j] = i + 1;
        }
}

/* Keeps the stack of places keys[idx[0..n)] (hash mh) for later; false when there is no room. */
static bool deferred_add(struct hot *h, uint64_t mh, const struct entry *keys, const uint32_t *idx,
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

/* The deferred stacks whose functions are all known now count their dup; the others wait.
   Places that went since (folded, decayed) count nothing. */
static void deferred_settle(struct hot *h)
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
                        struct entry *e = slot_find(h, &h->dkeys[d.first + k]);
                        found[k] = e->is_used ? e : NULL;
                        if (found[k] && !place_function(h, e, &functions[k]))
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
                seen_next(h);
                for (uint32_t k = 0; k < d.nr; k++) {
                        if (!found[k] || !functions[k] || !function_seen(h, functions[k]))
                                continue;
                        found[k]->dup += d.count;
                        if (found[k]->dup > found[k]->total)
                                found[k]->dup = found[k]->total;
                }
        }
        if (nr_kept != h->nr_dstacks) {
                h->nr_dstacks = nr_kept;
                h->nr_dkeys = nr_kept_keys;
                deferred_index(h);
        }
}

/* A sample whose stack did not come: its address is its whole stack. */
static void pending_flush(struct hot *h, struct pending *p)
{
        if (p->has && !p->is_matched)
                count(h, &p->key, p->is_unplaced ? 1 : 0, 1);
        p->has = false;
}

void hot_settle_samples(struct hot *h)
{
        for (uint32_t c = 0; c < h->nr_pend; c++)
                pending_flush(h, &h->pend[c]);
        memo_settle_all(h);
}

static void sample(struct hot *h, const struct kevent *ev, uint16_t source, uint64_t ip,
                   uint32_t tid)
{
        if (!agg_filter_pass(&h->filter, ev->pid, tid, ev->time_ns))
                return; /* and its stack finds no sample: not counted either */
        uint32_t si = source_index(h, source);
        h->nr_samples[si]++;
        struct entry k = key_of(h, source, ev->pid, tid, ip);
        bool is_unplaced = ev->pid == UINT32_MAX && !k.module;
        if (!is_unplaced)
                count(h, &k, 1, 0);
        struct pending *p = &h->pend[ev->cpu % MAX_CPUS];
        if (ev->cpu % MAX_CPUS >= h->nr_pend)
                h->nr_pend = ev->cpu % MAX_CPUS + 1;
        pending_flush(h, p);
        *p = (struct pending){ev->timestamp, k, ip, true, false, is_unplaced};
}

/* The places of a stack, each once, as the table holds them. */
struct stack_places {
        uint32_t places[MAX_STACK_KEYS]; /* slots */
        uint32_t idx[MAX_STACK_KEYS];    /* their keys' indices */
        uint64_t functions[MAX_STACK_KEYS];
        uint32_t nr;
        bool is_pending; /* a name still loading */
        bool is_whole;   /* every place found room */
};

/* Adds the places of keys[from..to) that are not in the current stack's set yet (place_seen),
   each counted total more (count_hashed), with their functions; stops at a name still loading
   when is_stop_at_pending. The slots of places added before a growth of the table are found
   again (places_refind). */
static void places_add(struct hot *h, const struct entry *keys, uint32_t from, uint32_t to,
                       uint64_t total, bool is_stop_at_pending, struct stack_places *sp)
{
        for (uint32_t i = from; i < to && !(is_stop_at_pending && sp->is_pending); i++) {
                uint64_t hash = key_hash(&keys[i]);
                if (place_seen(h, keys, i, hash))
                        continue;
                uint32_t slot = count_hashed(h, &keys[i], hash, 0, total);
                if (slot == UINT32_MAX) {
                        sp->is_whole = false;
                        continue;
                }
                if (!place_function(h, &h->slots[slot], &sp->functions[sp->nr]))
                        sp->is_pending = true;
                sp->idx[sp->nr] = i;
                sp->places[sp->nr++] = slot;
        }
}

/* The table grew since epoch: the places moved. */
static void places_refind(struct hot *h, const struct entry *keys, uint32_t epoch,
                          struct stack_places *sp)
{
        if (h->epoch != epoch)
                for (uint32_t k = 0; k < sp->nr; k++)
                        sp->places[k] = (uint32_t)(slot_find(h, &keys[sp->idx[k]]) - h->slots);
}

/* Counts the stack of places keys[0..n): each place once (total), and a function at several of
   its places once (dup on the others), or, where a name is still loading, its dup later
   (deferred_add). */
static void count_stack(struct hot *h, const struct entry *keys, uint32_t n)
{
        uint32_t epoch = h->epoch;
        uint64_t mh = n;
        for (uint32_t i = 0; i < n; i++)
                mh = ((mh << 27 | mh >> 37) ^ key_hash(&keys[i])) * 0x9e3779b97f4a7c15ull;
        seen_next(h);
        struct stack_places sp = {.is_whole = true};
        places_add(h, keys, 0, n, 1, false, &sp);
        if (sp.is_pending && deferred_add(h, mh, keys, sp.idx, sp.nr))
                return;
        places_refind(h, keys, epoch, &sp);
        for (uint32_t k = 0; k < sp.nr; k++)
                if (sp.functions[k] && function_seen(h, sp.functions[k]))
                        h->slots[sp.places[k]].dup++;
}

static uint64_t function_bit(uint64_t function)
{
        return 1ull << (mix(function) & 63);
}

/* Whether function is one of the memo's places' (they are named: a memo is made of those). */
static bool memo_has_function(struct hot *h, const struct stack_memo *m, uint64_t function)
{
        if (!(m->functions & function_bit(function)))
                return false;
        for (uint32_t i = 0; i < m->nr_places; i++) {
                uint64_t f;
                place_function(h, &h->slots[m->places[i] & ~MEMO_DUP], &f);
                if (f == function)
                        return true;
        }
        return false;
}

static void stack(struct hot *h, const struct kevent *ev)
{
        /* the sample it belongs to: same timestamp, on its CPU or (rarely) another */
        struct pending *p = &h->pend[ev->cpu % MAX_CPUS];
        if (!p->has || p->timestamp != ev->stack.event_timestamp) {
                p = NULL;
                for (uint32_t c = 0; c < h->nr_pend && !p; c++)
                        if (h->pend[c].has && !h->pend[c].is_matched &&
                            h->pend[c].timestamp == ev->stack.event_timestamp)
                                p = &h->pend[c];
        }
        if (!p || p->is_matched)
                return; /* a stack of an event that is not a sample (CSwitch, ReadyThread) */
        p->is_matched = true;
        h->nr_stacks++;
        if (p->is_unplaced) {
                /* the process the stack names places the sample (counted once, here) */
                if (ev->stack.pid != UINT32_MAX)
                        p->key = key_of(h, p->key.source, ev->stack.pid, p->key.tid, p->ip);
                p->is_unplaced = false;
                count(h, &p->key, 1, 0);
        }
        h->nr_rows_cached = 0;
        const uint64_t *frames = ev->stack.frames;
        uint32_t nr_frames = ev->stack.nr_frames;
        if (nr_frames > MAX_STACK_KEYS - 1)
                nr_frames = MAX_STACK_KEYS - 1;
        /* the leaf: the sampled place and the first frame's (mostly the same), counted at every
           sample; the callers' places through a memo per calling context (the instructions of
           a hot function share theirs) */
        struct entry keys[MAX_STACK_KEYS];
        uint32_t nr_leaf = 0;
        keys[nr_leaf++] = p->key;
        if (nr_frames && !(frames[0] == p->ip && ev->stack.pid == p->key.pid)) {
                keys[nr_leaf] = key_of(h, p->key.source, ev->stack.pid, p->key.tid, frames[0]);
                if (!key_eq(&keys[nr_leaf], &keys[0]))
                        nr_leaf++;
        }
        uint32_t nr_callers = nr_frames ? nr_frames - 1 : 0;
        uint64_t mh = ((uint64_t)p->key.source << 48 | ev->stack.pid) ^ mix(p->key.pid) ^
                      mix((uint64_t)p->key.tid << 20);
        for (uint32_t i = 1; i < nr_frames; i++)
                mh = ((mh << 27 | mh >> 37) ^ frames[i]) * 0x9e3779b97f4a7c15ull;
        mh = mix(mh ^ nr_callers);
        /* the leaf's places and their functions: a name still loading takes the whole stack
           the long way */
        uint64_t leaf_functions[2];
        uint32_t leaf_slots[2];
        bool is_pending = false;
        for (uint32_t i = 0; i < nr_leaf; i++) {
                uint32_t slot = count_hashed(h, &keys[i], key_hash(&keys[i]), 0, 0);
                leaf_slots[i] = slot;
                leaf_functions[i] = 0;
                if (slot != UINT32_MAX && !place_function(h, &h->slots[slot], &leaf_functions[i]))
                        is_pending = true;
        }
        uint64_t generation = sym_store_generation(h->store);
        struct stack_memo *m = &h->memo[mh & (MEMO_SLOTS - 1)];
        bool is_hit = !is_pending && m->nr_places && m->hash == mh && m->generation == generation &&
                      m->epoch == h->epoch;
        if (!is_hit) {
                memo_settle(h, m);
                m->nr_places = 0;
                for (uint32_t i = 1; i < nr_frames; i++)
                        keys[nr_leaf + i - 1] =
                                key_of(h, p->key.source, ev->stack.pid, p->key.tid, frames[i]);
                /* the callers' places, each once, and their functions: all named, a memo of
                   them; else the stack is counted the long way */
                uint32_t epoch = h->epoch;
                seen_next(h);
                struct stack_places sp = {.is_pending = is_pending, .is_whole = true};
                places_add(h, keys, nr_leaf, nr_leaf + nr_callers, 0, true, &sp);
                if (sp.is_pending) {
                        count_stack(h, keys, nr_leaf + nr_callers);
                        return;
                }
                /* counted: each caller's place, a function at its first place */
                places_refind(h, keys, epoch, &sp);
                uint32_t *places = sp.places, nr_places = sp.nr;
                uint64_t bits = 0;
                for (uint32_t k = 0; k < nr_places; k++) {
                        struct entry *e = &h->slots[places[k]];
                        e->total++;
                        if (sp.functions[k] && function_seen(h, sp.functions[k])) {
                                e->dup++;
                                places[k] |= MEMO_DUP;
                        }
                        bits |= sp.functions[k] ? function_bit(sp.functions[k]) : 0;
                }
                /* the leaf: once, unless a caller's place is the same; a function the callers
                   hold (function_seen holds them) counts as dup */
                for (uint32_t i = 0; i < nr_leaf; i++) {
                        if (place_seen(h, keys, i, key_hash(&keys[i])))
                                continue;
                        uint32_t slot = count_hashed(h, &keys[i], key_hash(&keys[i]), 0, 1);
                        if (slot != UINT32_MAX && leaf_functions[i] &&
                            function_seen(h, leaf_functions[i]))
                                h->slots[slot].dup++;
                }
                if (sp.is_whole && nr_places <= MEMO_PLACES && h->epoch == epoch) {
                        m->hash = mh;
                        m->generation = generation;
                        m->epoch = epoch;
                        m->nr_places = nr_places;
                        m->nr_pending = 0;
                        m->functions = bits;
                        memcpy(m->places, places, nr_places * sizeof(*places));
                }
                return;
        }
        /* the same callers seen before: counted along the memo's places when the totals are
           read; the leaf now */
        m->nr_pending++;
        h->nr_pending++;
        for (uint32_t i = 0; i < nr_leaf; i++) {
                uint32_t slot = leaf_slots[i]; /* the epoch is the memo's: nothing moved */
                if (slot == UINT32_MAX)
                        continue;
                bool is_caller = false;
                for (uint32_t k = 0; k < m->nr_places && !is_caller; k++)
                        is_caller = (m->places[k] & ~MEMO_DUP) == slot;
                if (is_caller)
                        continue;
                struct entry *e = &h->slots[slot];
                e->total++;
                uint64_t f = leaf_functions[i];
                if (f && ((i == 1 && leaf_functions[0] == f) || memo_has_function(h, m, f)))
                        e->dup++;
        }
}

void hot_event(struct hot *h, const struct kevent *ev)
{
        switch (ev->type) {
        case KEV_SAMPLE: sample(h, ev, HOT_SOURCE_TIMER, ev->sample.ip, ev->sample.tid); break;
        case KEV_PMC_SAMPLE:
                sample(h, ev, ev->pmc_sample.source, ev->pmc_sample.ip, ev->pmc_sample.tid);
                break;
        case KEV_STACK: stack(h, ev); break;
        case KEV_PROCESS:
                if ((ev->process.phase == KEV_PHASE_END ||
                     ev->process.phase == KEV_PHASE_DEFUNCT) &&
                    h->nr_ended_pids < MAX_ENDED_PIDS) {
                        if (h->nr_ended_pids == h->cap_ended_pids) {
                                h->cap_ended_pids = h->cap_ended_pids ? h->cap_ended_pids * 2 : 256;
                                h->ended_pids = xrealloc(
                                        h->ended_pids, h->cap_ended_pids * sizeof(*h->ended_pids));
                        }
                        h->ended_pids[h->nr_ended_pids++] = ev->process.pid;
                }
                break;
        default: break;
        }
}

void hot_set_settings(struct hot *h, const struct agg_settings *settings)
{
        h->settings = *settings;
}

void hot_set_grouping(struct hot *h, enum hot_grouping grouping)
{
        if (h->grouping != grouping)
                h->nr_rows_cached = 0;
        h->grouping = grouping;
}

void hot_set_filter(struct hot *h, const struct agg_filter *f)
{
        h->filter = *f;
}

/* ---- the unplaced places' cap ---- */

/* Takes the entry out (linear probing: the entries after it move up where their probe
   allows). */
static void slot_delete(struct hot *h, struct entry *e)
{
        uint32_t i = (uint32_t)(e - h->slots);
        h->slots[i].is_used = false;
        for (uint32_t j = (i + 1) & h->mask; h->slots[j].is_used; j = (j + 1) & h->mask) {
                uint32_t k = (uint32_t)key_hash(&h->slots[j]) & h->mask;
                /* the entry at j stays when its home k lies cyclically in (i, j] */
                bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
                if (!stays) {
                        h->slots[i] = h->slots[j];
                        h->slots[j].is_used = false;
                        i = j;
                }
        }
        h->nr--;
}

static int cmp_pid(const void *a, const void *b)
{
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        return x < y ? -1 : x > y;
}

/* An unplaced place, and what becomes of it. */
struct unplaced {
        struct entry key; /* its key and counts as they were */
        struct sym_loc loc;
};

/* The heavier first (total, then self); then by key, for a stable choice. */
static int unplaced_cmp(const void *a, const void *b)
{
        const struct entry *x = &((const struct unplaced *)a)->key;
        const struct entry *y = &((const struct unplaced *)b)->key;
        if (x->total != y->total)
                return x->total > y->total ? -1 : 1;
        if (x->self != y->self)
                return x->self > y->self ? -1 : 1;
        if (x->pid != y->pid)
                return x->pid < y->pid ? -1 : 1;
        return x->rel < y->rel ? -1 : x->rel > y->rel;
}

/* e's samples go to the other row (as a place's total only counts its stacks, the totals of
   many places do not add up to one) */
static void fold_into_other(struct hot *h, const struct entry *e)
{
        h->nr_other[source_index(h, e->source)] += e->self;
        h->caps.nr_places_folded++;
        slot_delete(h, slot_find(h, e));
}

/* Unplaced places that have a module now move to it; those of processes that ended, and past
   HOT_UNPLACED_MAX the lightest, go into the other row. */
static void place_or_fold(struct hot *h)
{
        uint32_t n = 0, cap = 0;
        struct unplaced *u = NULL;
        for (uint32_t i = 0; i <= h->mask; i++) {
                const struct entry *e = &h->slots[i];
                if (!e->is_used || e->module)
                        continue;
                if (n == cap) {
                        cap = cap ? cap * 2 : 1024;
                        u = xrealloc(u, cap * sizeof(*u));
                }
                u[n++] = (struct unplaced){*e, sym_locate(h->store, e->pid, e->rel)};
        }
        uint32_t nr_ended = h->nr_ended_pids;
        uint32_t *ended = xmalloc((nr_ended + 1) * sizeof(*ended));
        if (nr_ended)
                memcpy(ended, h->ended_pids, nr_ended * sizeof(*ended));
        qsort(ended, nr_ended, sizeof(*ended), cmp_pid);
        uint32_t nr_kept = 0;
        bool is_changed = false;
        for (uint32_t i = 0; i < n; i++) {
                struct entry k = u[i].key;
                if (u[i].loc.module) {
                        slot_delete(h, slot_find(h, &k));
                        k.module = u[i].loc.module;
                        k.rel = u[i].loc.rel;
                        k.answer = 0;
                        count(h, &k, k.self, k.total);
                        is_changed = true;
                } else if (bsearch(&k.pid, ended, nr_ended, sizeof(*ended), cmp_pid)) {
                        fold_into_other(h, &k);
                        is_changed = true;
                } else {
                        u[nr_kept++] = u[i];
                }
        }
        free(ended);
        /* the ends before the last refresh go; the latest stay for the next one */
        if (h->nr_prev_ended) {
                memmove(h->ended_pids, h->ended_pids + h->nr_prev_ended,
                        (h->nr_ended_pids - h->nr_prev_ended) * sizeof(*h->ended_pids));
                h->nr_ended_pids -= h->nr_prev_ended;
        }
        h->nr_prev_ended = h->nr_ended_pids;
        if (nr_kept > HOT_UNPLACED_MAX) {
                qsort(u, nr_kept, sizeof(*u), unplaced_cmp);
                for (uint32_t i = HOT_UNPLACED_MAX; i < nr_kept; i++)
                        fold_into_other(h, &u[i].key);
                is_changed = true;
        }
        free(u);
        if (is_changed)
                h->epoch++; /* places moved: the memos (settled before) are stale */
}

void hot_want_unplaced(struct hot *h)
{
        for (uint32_t i = 0; i <= h->mask; i++) {
                const struct entry *e = &h->slots[i];
                if (!e->is_used || e->module)
                        continue;
                struct sym_loc loc = sym_locate(h->store, e->pid, e->rel);
                if (loc.module)
                        sym_prefetch(h->store, loc.module);
        }
}

void hot_refresh(struct hot *h)
{
        h->nr_rows_cached = 0;
        memo_settle_all(h);
        for (uint32_t c = 0; c < h->nr_pend; c++)
                pending_flush(h, &h->pend[c]);
        deferred_settle(h);
        place_or_fold(h);
        const struct agg_settings *s = &h->settings;
        if (s->mode == AGG_CUMULATIVE)
                return;
        if (s->mode == AGG_ZEROED) /* the counts start over, as with z: what the caps did too */
                memset(&h->caps, 0, sizeof(h->caps));
        h->epoch++; /* the places move below */
        /* decay in place, then put the survivors back: removing from open addressing in place
           would break the probe chains */
        uint32_t cap = h->mask + 1, nr = 0;
        for (uint32_t i = 0; i < cap; i++) {
                struct entry *e = &h->slots[i];
                if (!e->is_used)
                        continue;
                e->self = agg_settings_apply(s, e->self);
                e->total = agg_settings_apply(s, e->total);
                e->dup = agg_settings_apply(s, e->dup);
                if (e->dup > e->total)
                        e->dup = e->total;
                if (agg_settings_is_droppable(s, e->self) && agg_settings_is_droppable(s, e->total))
                        e->is_used = false;
                else
                        h->slots[nr++] = *e; /* nr <= i: compacts to the front */
        }
        struct entry *kept = h->slots;
        h->slots = xzalloc_table(cap, sizeof(*h->slots));
        h->nr = nr;
        for (uint32_t i = 0; i < nr; i++)
                *slot_find(h, &kept[i]) = kept[i];
        free(kept);
        for (uint32_t i = 0; i < h->nr_sources; i++) {
                h->nr_other[i] = agg_settings_apply(s, h->nr_other[i]);
                h->nr_samples[i] = agg_settings_apply(s, h->nr_samples[i]);
        }
        h->nr_stacks = agg_settings_apply(s, h->nr_stacks);
        /* the stacks still waiting for names decay with their places */
        uint32_t nr_kept = 0;
        for (uint32_t i = 0; i < h->nr_dstacks; i++) {
                h->dstacks[i].count = agg_settings_apply(s, h->dstacks[i].count);
                if (h->dstacks[i].count)
                        h->dstacks[nr_kept++] = h->dstacks[i];
        }
        if (nr_kept != h->nr_dstacks) {
                h->nr_dstacks = nr_kept;
                deferred_index(h);
        }
}

void hot_caps(const struct hot *h, struct hot_caps *out)
{
        *out = h->caps;
}

uint64_t hot_nr_samples(const struct hot *h, uint16_t source)
{
        for (uint32_t i = 0; i < h->nr_sources; i++)
                if (h->sources[i] == source)
                        return h->nr_samples[i];
        return 0;
}

uint64_t hot_nr_stacks(const struct hot *h)
{
        return h->nr_stacks;
}

uint32_t hot_sources(const struct hot *h, uint16_t *out, uint32_t max)
{
        uint32_t n = h->nr_sources < max ? h->nr_sources : max;
        memcpy(out, h->sources, n * sizeof(*out));
        return n;
}

/* rows by (module, function) for resolved entries, (module, rel) or (pid, addr) otherwise */
static int row_key_cmp(const void *a, const void *b)
{
        const struct hot_row *x = a, *y = b;
        if (x->module != y->module)
                return x->module < y->module ? -1 : 1;
        if (x->function != y->function)
                return x->function < y->function ? -1 : 1;
        if (x->function)
                return 0;
        return x->rel < y->rel ? -1 : x->rel > y->rel;
}

/* The order of rows that tie on their counts: module, name, place, then process and thread
   (rows by process or thread). */
static int row_tie_cmp(const struct hot_row *x, const struct hot_row *y)
{
        if (x->module != y->module)
                return x->module < y->module ? -1 : 1;
        if (x->function != y->function) {
                int c = strcmp(x->name, y->name);
                if (c)
                        return c;
        }
        if (x->rel != y->rel)
                return x->rel < y->rel ? -1 : 1;
        if (x->pid != y->pid)
                return x->pid < y->pid ? -1 : 1;
        return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int by_self(const void *a, const void *b)
{
        const struct hot_row *x = a, *y = b;
        if (x->self != y->self)
                return x->self > y->self ? -1 : 1;
        if (x->total != y->total)
                return x->total > y->total ? -1 : 1;
        return row_tie_cmp(x, y);
}

static int by_total(const void *a, const void *b)
{
        const struct hot_row *x = a, *y = b;
        if (x->total != y->total)
                return x->total > y->total ? -1 : 1;
        return by_self(a, b);
}

/* One field of a row as the whole-order sort sees it: ascending in the value returned. */
enum sort_field { SF_REL, SF_FUNCTION, SF_MODULE, SF_TOTAL_DESC, SF_SELF_DESC };

static uint64_t field_of(const struct hot_row *r, enum sort_field f)
{
        switch (f) {
        case SF_REL: return r->function ? 0 : r->rel; /* row_key_cmp: rel only when unnamed */
        case SF_FUNCTION: return r->function;
        case SF_MODULE: return r->module;
        case SF_TOTAL_DESC: return ~r->total;
        case SF_SELF_DESC: return ~r->self;
        }
        return 0;
}

/* Sorts rows[0..n) as qsort with by_self or by_total would, with stable counting passes over
   the bytes that differ, least significant field first. Each field's keys are taken from the
   rows once, in the current order, and sorted with their row numbers (reading the rows in every
   pass cost a cache miss per row and pass; a qsort of 100k rows took about 25 ms). */
static void rows_sort(struct hot *h, struct hot_row *rows, uint32_t n, bool is_by_total)
{
        static const enum sort_field by_self_lsd[] = {SF_REL, SF_FUNCTION, SF_MODULE, SF_TOTAL_DESC,
                                                      SF_SELF_DESC};
        static const enum sort_field by_total_lsd[] = {SF_REL, SF_FUNCTION, SF_MODULE, SF_SELF_DESC,
                                                       SF_TOTAL_DESC};
        const enum sort_field *fields = is_by_total ? by_total_lsd : by_self_lsd;
        struct sort_item *a = h->sort_a, *b = h->sort_b;
        for (uint32_t i = 0; i < n; i++)
                a[i].row = i;
        for (uint32_t fi = 0; fi < 5; fi++) {
                enum sort_field f = fields[fi];
                uint64_t diff = 0;
                for (uint32_t i = 0; i < n; i++) {
                        a[i].key = field_of(&rows[a[i].row], f);
                        diff |= a[i].key ^ a[0].key;
                }
                for (uint32_t shift = 0; shift < 64 && (diff >> shift); shift += 8) {
                        if (!((diff >> shift) & 0xff))
                                continue;
                        uint32_t count[257] = {0};
                        for (uint32_t i = 0; i < n; i++)
                                count[((a[i].key >> shift) & 0xff) + 1]++;
                        for (uint32_t c = 0; c < 256; c++)
                                count[c + 1] += count[c];
                        for (uint32_t i = 0; i < n; i++)
                                b[count[(a[i].key >> shift) & 0xff]++] = a[i];
                        struct sort_item *t = a;
                        a = b;
                        b = t;
                }
        }
        for (uint32_t i = 0; i < n; i++)
                h->sort_rows[i] = rows[a[i].row];
        memcpy(rows, h->sort_rows, (size_t)n * sizeof(*rows));
        /* the passes ordered ties by name id; rows of one module that tie on their counts go
           in their names' order (row_tie_cmp), a run at a time */
        int (*cmp)(const void *, const void *) = is_by_total ? by_total : by_self;
        for (uint32_t i = 0, j; i < n; i = j) {
                bool is_ordered = true;
                for (j = i + 1; j < n && rows[j].self == rows[i].self &&
                                rows[j].total == rows[i].total && rows[j].module == rows[i].module;
                     j++)
                        is_ordered = is_ordered && cmp(&rows[j - 1], &rows[j]) <= 0;
                if (!is_ordered)
                        qsort(rows + i, j - i, sizeof(*rows), cmp);
        }
}

static void swap_rows(struct hot_row *a, struct hot_row *b)
{
        struct hot_row t = *a;
        *a = *b;
        *b = t;
}

/* Moves the k first rows by cmp to the front (in no order): a three-way quickselect, O(n);
   every pass shrinks the range by at least its pivot. */
static void select_top(struct hot_row *r, uint32_t n, uint32_t k,
                       int (*cmp)(const void *, const void *))
{
        uint32_t lo = 0, hi = n;
        while (hi - lo > 1) {
                struct hot_row pivot = r[lo + (hi - lo) / 2];
                uint32_t lt = lo, i = lo, gt = hi; /* [lo,lt) < pivot, [lt,i) ==, [gt,hi) > */
                while (i < gt) {
                        int c = cmp(&r[i], &pivot);
                        if (c < 0)
                                swap_rows(&r[lt++], &r[i++]);
                        else if (c > 0)
                                swap_rows(&r[i], &r[--gt]);
                        else
                                i++;
                }
                if (k < lt)
                        hi = lt;
                else if (k > gt)
                        lo = gt;
                else
                        return;
        }
}

uint32_t hot_functions(struct hot *h, uint16_t source, bool is_by_total,
                       const struct hot_row **rows)
{
        return hot_top_functions(h, source, is_by_total, 0, rows);
}

uint32_t hot_top_functions(struct hot *h, uint16_t source, bool is_by_total, uint32_t max,
                           const struct hot_row **rows)
{
        for (uint32_t c = 0; c < h->nr_pend; c++)
                pending_flush(h, &h->pend[c]);
        memo_settle_all(h);
        deferred_settle(h);
        if (h->cap_rows < h->nr + 1) {
                /* doubling: a table that grows a little at each refresh does not leave the
                   allocator a hole a little too small every time */
                uint32_t cap = h->cap_rows ? h->cap_rows : 1024;
                while (cap < h->nr + 1)
                        cap *= 2;
                if (cap > h->max_entries + 1) /* the table never holds more */
                        cap = h->max_entries + 1;
                free(h->rows);
                free(h->sort_a);
                free(h->sort_b);
                free(h->sort_rows);
                h->cap_rows = cap;
                h->rows = xcalloc(h->cap_rows, sizeof(*h->rows));
                h->sort_a = xcalloc(h->cap_rows, sizeof(*h->sort_a));
                h->sort_b = xcalloc(h->cap_rows, sizeof(*h->sort_b));
                h->sort_rows = xcalloc(h->cap_rows, sizeof(*h->sort_rows));
        }
        /* the places of one function merge into one row, through a hash of row keys (sorting
           every place first took a third of a replay) */
        uint32_t cap = 64;
        while (cap < 2 * (h->nr + 1))
                cap *= 2;
        if (h->cap_merge < cap) {
                free(h->merge);
                h->cap_merge = cap;
                h->merge = xzalloc_table(cap, sizeof(*h->merge));
        } else {
                memset(h->merge, 0, cap * sizeof(*h->merge));
        }
        uint32_t *index = h->merge; /* row + 1, 0 free */
        uint32_t o = 0;
        for (uint32_t i = 0; i <= h->mask; i++) {
                struct entry *e = &h->slots[i];
                if (!e->is_used || e->source != source)
                        continue;
                struct sym_loc loc = {e->module, e->rel};
                if (!e->answer && !e->module) /* placed again: images may have come since */
                        loc = sym_locate(h->store, e->pid, e->rel);
                struct sym_frame f;
                place_answer(h, e, loc, &f);
                struct hot_row r = {source,
                                    loc.module,
                                    f.state == SYM_RESOLVED ? f.function : 0,
                                    f.state == SYM_RESOLVED ? 0 : loc.rel,
                                    f.state,
                                    e->self,
                                    e->total - e->dup,
                                    e->pid,
                                    e->self,
                                    e->tid,
                                    sym_name(h->store, f.state == SYM_RESOLVED ? f.function : 0)};
                uint64_t hk = mix(((uint64_t)r.module << 32 | r.function) ^ mix(r.rel) ^
                                  (h->grouping == HOT_BY_PROCESS  ? mix(r.pid)
                                   : h->grouping == HOT_BY_THREAD ? mix(r.tid)
                                                                  : 0));
                uint32_t j = (uint32_t)hk & (cap - 1);
                for (; index[j]; j = (j + 1) & (cap - 1)) {
                        struct hot_row *w = &h->rows[index[j] - 1];
                        if (row_key_cmp(w, &r) == 0 &&
                            (h->grouping != HOT_BY_PROCESS || w->pid == r.pid) &&
                            (h->grouping != HOT_BY_THREAD || w->tid == r.tid))
                                break;
                }
                if (index[j]) {
                        struct hot_row *w = &h->rows[index[j] - 1];
                        w->self += r.self;
                        /* total: each place's stacks less those that counted the function at
                           another of its places (dup) */
                        w->total += r.total;
                        /* the process: the one with the heaviest place of the function */
                        if (r.top_self > w->top_self) {
                                w->top_self = r.top_self;
                                w->pid = r.pid;
                                w->tid = r.tid;
                        }
                } else {
                        h->rows[o] = r;
                        index[j] = ++o;
                }
        }
        uint32_t si = 0;
        for (; si < h->nr_sources && h->sources[si] != source; si++)
                ;
        if (si < h->nr_sources && h->nr_other[si])
                h->rows[o++] = (struct hot_row){
                        source, 0, 0, 0, SYM_NO_MODULE, h->nr_other[si], h->nr_other[si],
                        0,      0, 0, ""};
        int (*cmp)(const void *, const void *) = is_by_total ? by_total : by_self;
        uint32_t n = o;
        if (max && max < o) {
                /* only the first max in order: select them, sort those */
                select_top(h->rows, o, max, cmp);
                n = max;
                qsort(h->rows, n, sizeof(*h->rows), cmp);
        } else if (n > 1) {
                rows_sort(h, h->rows, n, is_by_total);
        }
        *rows = h->rows;
        h->nr_rows_cached = o; /* every row is in the array, the first n in order */
        h->rows_source = source;
        return n;
}

static int mrow_cmp(const void *a, const void *b)
{
        const struct hot_module_row *x = a, *y = b;
        if (x->self != y->self)
                return x->self > y->self ? -1 : 1;
        return x->module < y->module ? -1 : x->module > y->module;
}

static int mrow_by_module(const void *a, const void *b)
{
        const struct hot_module_row *x = a, *y = b;
        return x->module < y->module ? -1 : x->module > y->module;
}

uint32_t hot_modules(struct hot *h, uint16_t source, const struct hot_module_row **rows)
{
        const struct hot_row *fr = h->rows;
        /* the functions asked for just before, when nothing was counted since (all of them
           are in the array, in order or not) */
        uint32_t n = h->nr_rows_cached && h->rows_source == source
                             ? h->nr_rows_cached
                             : (hot_functions(h, source, false, &fr), h->nr_rows_cached);
        if (h->cap_mrows < n + 1) {
                free(h->mrows);
                h->cap_mrows = h->cap_rows > n + 1 ? h->cap_rows : n + 1;
                h->mrows = xcalloc(h->cap_mrows, sizeof(*h->mrows));
        }
        for (uint32_t i = 0; i < n; i++)
                h->mrows[i] = (struct hot_module_row){source, fr[i].module, fr[i].self};
        qsort(h->mrows, n, sizeof(*h->mrows), mrow_by_module);
        uint32_t o = 0;
        for (uint32_t i = 0; i < n; i++) {
                if (o && h->mrows[o - 1].module == h->mrows[i].module)
                        h->mrows[o - 1].self += h->mrows[i].self;
                else
                        h->mrows[o++] = h->mrows[i];
        }
        qsort(h->mrows, o, sizeof(*h->mrows), mrow_cmp);
        *rows = h->mrows;
        return o;
}
