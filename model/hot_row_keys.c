/* SPDX-License-Identifier: MIT */
/* hot_row_keys.c: owns the hot functions' rows' cache and their builds: the rows a build merges
   places into, kept between builds with each settled place's row in its entry, so a build adds
   a place to its row without hashing its key; and the incremental builds, which merge only the
   places counted since the last build (and those whose row may change without a count) into
   the last build's rows (a live screen's places are thousands, a third of them counted in a
   second: the whole walk over them, each a line out of the caches, was the biggest part of a
   refresh). */
#include "frames_gen.h"
#include "hot_impl.h"
#include "model_util.h"

#include <stdlib.h>
#include <string.h>

void hot_row_keys_reset(struct hot *h, enum hot_grouping grouping)
{
        if (!h->row1)
                h->row1 = xcalloc(h->last + 1, sizeof(*h->row1));
        else
                memset(h->row1, 0, (size_t)(h->last + 1) * sizeof(*h->row1));
        h->rgrouping = grouping;
        h->nr_rkeys = h->nr_rkeys_named = 0;
        h->nr_rkeys_resets++;
        if (h->rindex)
                memset(h->rindex, 0, (size_t)(h->rindex_mask + 1) * sizeof(*h->rindex));
}

void hot_rows_rehome(struct hot *h, uint32_t *old_row1, const struct entry *old, uint32_t old_cap)
{
        if (!old_row1)
                return;
        h->row1 = xcalloc(h->last + 1, sizeof(*h->row1));
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

/* The index made again from the keys (its size as it is). */
static void rindex_fill(struct hot *h)
{
        memset(h->rindex, 0, (size_t)(h->rindex_mask + 1) * sizeof(*h->rindex));
        for (uint32_t i = 0; i < h->nr_rkeys; i++) {
                uint32_t j = (uint32_t)row_key_hash(&h->rkeys[i]) & h->rindex_mask;
                while (h->rindex[j])
                        j = (j + 1) & h->rindex_mask;
                h->rindex[j] = i + 1;
        }
}

/* Past half again the keys named at the last look (and 8192), the keys no place names are
   dropped and the others numbered again in their order (each place's row1 with them). Every
   key is kept while one place names it: a row's, a settled place's, an unplaced one's while
   its process's addresses stay. The keys of places gone (a process's unplaced addresses, about
   a thousand a second under a process storm: new addresses each) went only when they outnumbered
   twice the places, so the keys' arrays filled, over half an hour, to twice the places' count
   (stop 98's bench/rss.sh: 23 MB of the screen's 36 MB of growth after its tenth minute). */
bool hot_row_keys_compact(struct hot *h)
{
        if (!h->row1 || h->nr_rkeys <= h->nr_rkeys_named + h->nr_rkeys_named / 2 + 8192)
                return false;
        /* by old key: its new key + 1, 0 where no place names it (rout is free between builds:
           a build clears it before it uses it) */
        uint32_t *map = h->rout;
        memset(map, 0, h->nr_rkeys * sizeof(*map));
        for (uint32_t i = 0; i <= h->last; i++)
                if (h->row1[i])
                        map[h->row1[i] - 1] = 1;
        uint32_t n = 0;
        for (uint32_t k = 0; k < h->nr_rkeys; k++)
                if (map[k]) {
                        h->rkeys[n] = h->rkeys[k];
                        map[k] = ++n;
                }
        for (uint32_t i = 0; i <= h->last; i++)
                if (h->row1[i])
                        h->row1[i] = map[h->row1[i] - 1];
        h->nr_rkeys = h->nr_rkeys_named = n;
        h->nr_rkeys_resets++; /* the incremental builds' keys are stale */
        if (h->rindex)
                rindex_fill(h);
        return true;
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
        rindex_fill(h);
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
place_row(struct hot *h, struct entry *e, uint16_t source, enum hot_grouping grouping)
{
        struct sym_loc loc = {e->module, e->rel};
        if (!e->answer && !e->module)
                loc = sym_locate(h->store, e->pid, e->rel);
        struct sym_frame f;
        hot_place_answer(h, e, loc, &f);
        uint32_t fn = f.state == SYM_RESOLVED ? f.function : 0;
        uint32_t pid = __builtin_expect(h->process_key != NULL, 0) && grouping == HOT_BY_PROCESS
                               ? h->process_key(h->process_key_ctx, e->pid)
                               : e->pid;
        return (struct hot_row){source,
                                loc.module,
                                fn,
                                f.state == SYM_RESOLVED ? 0 : loc.rel,
                                f.state,
                                e->self,
                                e->total - e->dup,
                                pid,
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
        for (uint32_t wi = 0; wi <= h->last / 64; wi++)
                for (uint64_t bits = h->used[wi]; bits; bits &= bits - 1) {
                        struct entry *e = &h->slots[wi * 64 + (uint32_t)__builtin_ctzll(bits)];
                        if (!e->is_used || e->source != source) /* the bits a superset */
                                continue;
                        struct hot_row r = place_row(h, e, source, grouping);
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

/* The used slots of the places table in order, from its bitmap (a superset of them); with also,
   those of them whose bit is set there too (the dirty ones). */
struct used_iter {
        const uint64_t *used, *also;
        uint32_t nr_words, wi;
        uint64_t bits;
};
#define MERGE_AHEAD 16

static inline bool used_next(struct used_iter *it, uint32_t *i)
{
        while (!it->bits) {
                if (++it->wi >= it->nr_words)
                        return false;
                it->bits = it->used[it->wi] & (it->also ? it->also[it->wi] : ~0ull);
        }
        *i = it->wi * 64 + (uint32_t)__builtin_ctzll(it->bits);
        it->bits &= it->bits - 1;
        return true;
}

/* A build's look at the places: the store's answers epoch of the last module asked (a
   recording's kernel: its places are many), asked again after the store was (a lookup may build
   its table again); the unplaced places' rows as the last build of this source left them. */
struct build_ctx {
        uint16_t source;
        const struct frames_gen *was;
        bool is_live;
        uint32_t epoch_module, epoch;
};

static void build_begin(struct hot *h, uint16_t source, struct build_ctx *b)
{
        unplaced_look(&h->uprobed);
        *b = (struct build_ctx){source, h->ugen && h->ugen_source == source ? h->ugen : NULL,
                                sym_store_is_live(h->store), 0, 0};
}

/* the processes' addresses as this build saw them, for the next one's unplaced places */
static void build_end(struct hot *h, uint16_t source)
{
        if (!h->ugen)
                h->ugen = xmalloc(sizeof(*h->ugen));
        *h->ugen = *h->frames_gen;
        h->ugen_source = source;
}

/* Slot i's row key (k, from row1) stands: a settled answer of this epoch, or an unplaced place
   whose process's addresses stayed; *is_cached: the former. */
static bool key_stands(struct hot *h, struct build_ctx *b, const struct entry *e, uint32_t k,
                       bool *is_cached)
{
        *is_cached = k && e->answer;
        if (*is_cached && e->epoch) {
                if (e->module != b->epoch_module) {
                        b->epoch_module = e->module;
                        b->epoch = sym_answers_epoch(h->store, e->module);
                }
                *is_cached = e->epoch == b->epoch;
        }
        /* a place of no module has no answer kept (hot_place_answer); live, the first of a
           process's unplaced places is located again (place_row), which marks the process when
           none came, and the others stand on it (unplaced.h) */
        return *is_cached ||
               (k && !e->module && b->was &&
                unplaced_stands(&h->uprobed, h->frames_gen, b->was, e->pid, b->is_live));
}

/* Slot i's place as a row and its row key, where its key does not stand: its answer asked for,
   and its key kept in row1 where it will stand (a settled answer of a placed address; an address
   no image holds, while none comes). */
static uint32_t key_made(struct hot *h, struct build_ctx *b, struct entry *e, uint32_t i,
                         struct hot_row *r)
{
        b->epoch_module = 0;
        *r = place_row(h, e, b->source, h->rgrouping);
        uint32_t k = hot_row_key_get(h, r);
        if (e->module && e->answer &&
            (!e->epoch || e->epoch == sym_answers_epoch(h->store, e->module)))
                h->row1[i] = k + 1;
        if (!e->module && !r->module) {
                h->row1[i] = k + 1;
                if (b->is_live)
                        unplaced_mark(&h->uprobed, e->pid);
        }
        return k;
}

/* The row of a place whose key k stands, made from the key. */
static struct hot_row key_row(const struct hot *h, const struct entry *e, uint16_t source,
                              uint32_t k, bool is_cached)
{
        const struct row_key *rk = &h->rkeys[k];
        return (struct hot_row){source,
                                e->module,
                                rk->function,
                                rk->rel,
                                is_cached ? (enum sym_state)(e->answer - 1) : SYM_NO_MODULE,
                                e->self,
                                e->total - e->dup,
                                e->pid,
                                e->self,
                                e->tid,
                                rk->name};
}

/* ---- the incremental builds' state ---- */

/* What the last build merged, by slot and by row key, so that the next merges only the places
   counted since (h->dirty) and those whose row may change without a count (volatile: no
   settled answer of this epoch, or no image), and takes the others' rows as they were. Good
   while the places stay where they are (h->epoch), the rows' keys too, and the build is of the
   same source and grouping. */
struct inc_share {
        uint64_t self, net;
};
struct hot_inc {
        bool is_valid;
        uint16_t source;
        enum hot_grouping grouping;
        uint32_t epoch, nr_slots, nr_rkeys_resets;
        /* by slot: the row key + 1 its place went into (0: none), and its shares then (one
           pair a place: an incremental build reads both at once) */
        uint32_t *k1;
        struct inc_share *share;
        /* by row key: the row, its places, and the slot of its heaviest (the first by slot) */
        struct hot_row *rows;
        uint32_t *nr_places, *top;
        uint32_t cap_keys;
        uint32_t *vol; /* the volatile places' slots */
        uint32_t nr_vol, cap_vol;
        uint64_t nr_incremental, nr_whole;
};

void hot_inc_free(struct hot *h)
{
        struct hot_inc *c = h->inc;
        if (!c)
                return;
        free(c->k1);
        free(c->share);
        free(c->rows);
        free(c->nr_places);
        free(c->top);
        free(c->vol);
        free(c);
        h->inc = NULL;
}

uint32_t hot_nr_row_keys(const struct hot *h)
{
        return h->nr_rkeys;
}

void hot_nr_builds(const struct hot *h, uint64_t *nr_incremental, uint64_t *nr_whole)
{
        *nr_incremental = h->inc ? h->inc->nr_incremental : 0;
        *nr_whole = h->inc ? h->inc->nr_whole : 0;
}

static void inc_keys_room(struct hot_inc *c, uint32_t k)
{
        if (k < c->cap_keys)
                return;
        uint32_t cap = c->cap_keys ? c->cap_keys : 1024;
        while (cap <= k)
                cap *= 2;
        c->rows = xrealloc(c->rows, cap * sizeof(*c->rows));
        c->nr_places = xrealloc(c->nr_places, cap * sizeof(*c->nr_places));
        c->top = xrealloc(c->top, cap * sizeof(*c->top));
        memset(c->nr_places + c->cap_keys, 0, (cap - c->cap_keys) * sizeof(*c->nr_places));
        c->cap_keys = cap;
}

/* Slot i's place merged as it is now into row k (volatile unless its key will stand). */
static void inc_note(struct hot *h, struct hot_inc *c, uint32_t i, const struct entry *e,
                     uint32_t k)
{
        c->k1[i] = k + 1;
        c->share[i] = (struct inc_share){e->self, e->total - e->dup};
        if (e->module && e->answer && !e->epoch && h->row1[i])
                return;
        if (c->nr_vol == c->cap_vol) {
                c->cap_vol = c->cap_vol ? c->cap_vol * 2 : 256;
                c->vol = xrealloc(c->vol, c->cap_vol * sizeof(*c->vol));
        }
        c->vol[c->nr_vol++] = i;
}

/* Slot i's place becomes its row's heaviest where it is (ties: the first by slot, as a whole
   build's walk in slot order keeps the first). */
static void inc_top(struct hot_inc *c, uint32_t k, uint32_t i, const struct entry *e)
{
        struct hot_row *w = &c->rows[k];
        if (e->self > w->top_self || (e->self == w->top_self && i <= c->top[k])) {
                w->top_self = e->self;
                w->pid = e->pid;
                w->tid = e->tid;
                c->top[k] = i;
        }
}

/* The state made for recording a whole build of source: every slot's key forgotten. */
static struct hot_inc *inc_start(struct hot *h, uint16_t source, enum hot_grouping grouping)
{
        if (!h->inc)
                h->inc = xcalloc(1, sizeof(*h->inc));
        struct hot_inc *c = h->inc;
        uint32_t nr = h->last + 1;
        if (c->nr_slots != nr) {
                free(c->k1);
                free(c->share);
                c->k1 = xmalloc(nr * sizeof(*c->k1));
                c->share = xmalloc(nr * sizeof(*c->share));
                c->nr_slots = nr;
        }
        memset(c->k1, 0, nr * sizeof(*c->k1));
        c->nr_vol = 0;
        c->is_valid = false;
        c->source = source;
        c->grouping = grouping;
        return c;
}

/* A whole build's rows (h->rows, rout) kept by key, with each one's places and heaviest. */
static void inc_finish(struct hot *h, struct hot_inc *c)
{
        inc_keys_room(c, h->nr_rkeys);
        memset(c->nr_places, 0, c->cap_keys * sizeof(*c->nr_places));
        for (uint32_t k = 0; k < h->nr_rkeys; k++)
                if (h->rout[k]) {
                        c->rows[k] = h->rows[h->rout[k] - 1];
                        c->top[k] = UINT32_MAX;
                }
        for (uint32_t i = 0; i < c->nr_slots; i++) {
                if (!c->k1[i])
                        continue;
                uint32_t k = c->k1[i] - 1;
                c->nr_places[k]++;
                if (c->top[k] == UINT32_MAX && c->share[i].self == c->rows[k].top_self)
                        c->top[k] = i;
        }
        c->epoch = h->epoch;
        c->nr_rkeys_resets = h->nr_rkeys_resets;
        c->is_valid = true;
        c->nr_whole++;
        memset(h->dirty, 0, (size_t)(h->last + 1) / 64 * sizeof(*h->dirty));
}

/* The later builds: a settled place knows its row (row1), and so does an unplaced one while it
   stays unplaced (unplaced_stands: sym_locate's and the answer's look, ~450 instructions, was
   a third of a samples-only screen's build with a few thousand unplaced places); the others'
   keys are hashed into the cache's index. Rows go out in the order their first places come,
   as the first build's. rec: each place's key and shares kept for the incremental builds. */
static uint32_t merge_cached(struct hot *h, uint16_t source, enum hot_grouping grouping,
                             struct hot_inc *rec)
{
        if (!h->row1 || h->rgrouping != grouping)
                hot_row_keys_reset(h, grouping);
        hot_row_keys_reserve(h, h->nr + 1);
        if (h->nr_rkeys)
                memset(h->rout, 0, h->nr_rkeys * sizeof(*h->rout));
        struct build_ctx b;
        build_begin(h, source, &b);
        uint32_t o = 0;
        /* the used slots in the table's order, by their bits; the place MERGE_AHEAD used slots
           on, and its row's key, asked of memory as each is merged (a place is a line the
           samples since the last build pushed out of the caches: the first read of each was
           half of the merge) */
        struct used_iter it = {h->used, NULL, h->last / 64 + 1, 0, h->used[0]};
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
                bool is_cached;
                struct hot_row r;
                if (key_stands(h, &b, e, k, &is_cached)) {
                        /* hot_place_answer's answer stands: the row's key as it was made */
                        uint32_t out1 = h->rout[--k];
                        if (rec)
                                inc_note(h, rec, i, e, k);
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
                        r = key_row(h, e, source, k, is_cached);
                } else {
                        k = key_made(h, &b, e, i, &r);
                        if (rec)
                                inc_note(h, rec, i, e, k);
                }
                if (!h->rout[k]) {
                        hot_rows_room(h, o);
                        h->rows[o] = r;
                        h->rout[k] = ++o;
                } else {
                        row_add(&h->rows[h->rout[k] - 1], &r);
                }
        }
        build_end(h, source);
        return o;
}

/* Slot i's place, merged before into row k1 - 1 (k1 0: not), into row knew (r: its row as it is
   now). False where its old row's heaviest place was it and others stay (inc_place). */
static bool inc_move(struct hot *h, struct hot_inc *c, uint32_t i, const struct entry *e,
                     uint32_t k1, uint32_t knew, const struct hot_row *r)
{
        if (k1) { /* out of its old row */
                struct hot_row *w = &c->rows[k1 - 1];
                w->self -= c->share[i].self;
                w->total -= c->share[i].net;
                if (--c->nr_places[k1 - 1] && c->top[k1 - 1] == i)
                        return false;
        }
        inc_keys_room(c, knew);
        if (!c->nr_places[knew]) {
                c->rows[knew] = *r;
                c->top[knew] = i;
        } else {
                c->rows[knew].self += r->self;
                c->rows[knew].total += r->total;
                inc_top(c, knew, i, e);
        }
        c->nr_places[knew]++;
        inc_note(h, c, i, e, knew);
        return true;
}

/* Slot i's place into the incremental build: its shares' change into its row where its key
   stands (is_vol: looked at again whether counted or not), else out of its old row and into
   the one it has now. False where a whole build must be made (a row's heaviest place left it:
   the next heaviest is not known). */
static bool inc_place(struct hot *h, struct hot_inc *c, struct build_ctx *b, uint32_t i,
                      bool is_vol)
{
        struct entry *e = &h->slots[i];
        if (!e->is_used) /* a place merged before gone: only a move takes one (epoch) */
                return !c->k1[i];
        if (e->source != b->source)
                return true;
        uint32_t k1 = c->k1[i], k = k1 ? k1 - 1 : 0;
        if (!k1 || is_vol) { /* its row as a whole build finds it */
                bool is_cached;
                struct hot_row r;
                uint32_t knew;
                if (key_stands(h, b, e, h->row1[i], &is_cached)) {
                        knew = h->row1[i] - 1;
                        r = key_row(h, e, b->source, knew, is_cached);
                } else {
                        knew = key_made(h, b, e, i, &r);
                }
                if (!k1 || knew != k)
                        return inc_move(h, c, i, e, k1, knew, &r);
        }
        /* the same row: the change of its shares */
        struct hot_row *w = &c->rows[k];
        w->self += e->self - c->share[i].self;
        w->total += (e->total - e->dup) - c->share[i].net;
        inc_top(c, k, i, e);
        if (is_vol)
                inc_note(h, c, i, e, k);
        else
                c->share[i] = (struct inc_share){e->self, e->total - e->dup};
        return true;
}

/* The places an incremental build merges, each read MERGE_AHEAD places before it is merged, as
   a whole build's: its place, its key and its shares then (inc_prefetch_far), and half as far
   ahead the rows those name (inc_prefetch_near). A place counted since the last build is a line
   the samples since pushed out of the caches, and so are its key's and its row's: each read
   waited on memory. */

static inline void inc_prefetch_far(const struct hot *h, const struct hot_inc *c, uint32_t i)
{
        __builtin_prefetch(&h->slots[i]);
        __builtin_prefetch(&h->row1[i]);
        __builtin_prefetch(&c->k1[i]);
        __builtin_prefetch(&c->share[i]);
}

static inline void inc_prefetch_near(const struct hot *h, const struct hot_inc *c, uint32_t i)
{
        uint32_t k1 = c->k1[i], r1 = h->row1[i];
        if (k1 && k1 - 1 < c->cap_keys)
                __builtin_prefetch(&c->rows[k1 - 1]);
        if (r1 && r1 - 1 < h->nr_rkeys)
                __builtin_prefetch(&h->rkeys[r1 - 1]);
}

/* The incremental build, where the last one's state holds (h->inc): the volatile places and
   those counted since merged into the rows kept, the rows out as they are. False where it does
   not hold, or a place needs a whole build (inc_place). */
static bool merge_incremental(struct hot *h, uint16_t source, enum hot_grouping grouping,
                              uint32_t *nr_rows)
{
        struct hot_inc *c = h->inc;
        if (!c || !c->is_valid || c->source != source || c->grouping != grouping ||
            c->epoch != h->epoch || c->nr_slots != h->last + 1 ||
            c->nr_rkeys_resets != h->nr_rkeys_resets || !h->row1 || h->rgrouping != grouping)
                return false;
        c->is_valid = false; /* until it is done */
        hot_row_keys_reserve(h, h->nr + 1);
        struct build_ctx b;
        build_begin(h, source, &b);
        /* the volatile places, each once (its dirty bit taken), kept on the list where they
           stay volatile (inc_note puts them back) */
        uint32_t nr_vol = c->nr_vol;
        uint32_t *vol = c->vol;
        c->vol = NULL;
        c->nr_vol = c->cap_vol = 0;
        bool is_ok = true;
        for (uint32_t j = 0; j < nr_vol && j < MERGE_AHEAD; j++)
                inc_prefetch_far(h, c, vol[j]);
        for (uint32_t j = 0; j < nr_vol && j < MERGE_AHEAD / 2; j++)
                inc_prefetch_near(h, c, vol[j]);
        for (uint32_t j = 0; j < nr_vol && is_ok; j++) {
                if (j + MERGE_AHEAD < nr_vol)
                        inc_prefetch_far(h, c, vol[j + MERGE_AHEAD]);
                if (j + MERGE_AHEAD / 2 < nr_vol)
                        inc_prefetch_near(h, c, vol[j + MERGE_AHEAD / 2]);
                uint32_t i = vol[j];
                h->dirty[i / 64] &= ~(1ull << (i % 64));
                is_ok = inc_place(h, c, &b, i, true);
        }
        free(vol);
        /* the places counted since, in the table's order, with the same look ahead */
        struct used_iter it = {h->used, h->dirty, h->last / 64 + 1, 0, h->used[0] & h->dirty[0]};
        struct used_iter far = it, near = it;
        uint32_t i, j;
        for (uint32_t n = 0; n < MERGE_AHEAD && used_next(&far, &j); n++)
                inc_prefetch_far(h, c, j);
        for (uint32_t n = 0; n < MERGE_AHEAD / 2 && used_next(&near, &j); n++)
                inc_prefetch_near(h, c, j);
        while (is_ok && used_next(&it, &i)) {
                if (used_next(&far, &j))
                        inc_prefetch_far(h, c, j);
                if (used_next(&near, &j))
                        inc_prefetch_near(h, c, j);
                is_ok = inc_place(h, c, &b, i, false);
        }
        /* given up part way: the places it did not reach were not located again, so the
           whole build after it compares with what the last finished build saw (taken as
           seen, an image that came since left its addresses' rows [unknown] for good) */
        if (!is_ok)
                return false;
        build_end(h, source);
        memset(h->dirty, 0, (size_t)(h->last + 1) / 64 * sizeof(*h->dirty));
        uint32_t o = 0;
        for (uint32_t k = 0; k < h->nr_rkeys && k < c->cap_keys; k++)
                if (c->nr_places[k]) {
                        hot_rows_room(h, o);
                        h->rows[o++] = c->rows[k];
                }
        c->is_valid = true;
        c->nr_incremental++;
        *nr_rows = o;
        return true;
}

/* rows a and b in one order (the key's fields, then the counts), for the check below. */
static int row_order(const void *a, const void *b)
{
        const struct hot_row *x = a, *y = b;
        uint64_t xa[] = {x->module, x->function, x->rel, x->pid, x->tid, x->self, x->total};
        uint64_t ya[] = {y->module, y->function, y->rel, y->pid, y->tid, y->self, y->total};
        for (int f = 0; f < 7; f++)
                if (xa[f] != ya[f])
                        return xa[f] < ya[f] ? -1 : 1;
        return 0;
}

/* hot_set_merge_check: the incremental build's o rows against a whole one's; abort() where
   they differ (a count that no dirty bit told, a row's heaviest place not the whole build's). */
static uint32_t merge_checked(struct hot *h, uint16_t source, enum hot_grouping grouping,
                              uint32_t o)
{
        struct hot_row *inc = xmalloc((o + 1) * sizeof(*inc));
        memcpy(inc, h->rows, o * sizeof(*inc));
        uint32_t n = merge_cached(h, source, grouping, inc_start(h, source, grouping));
        inc_finish(h, h->inc);
        h->inc->nr_whole--; /* the check's */
        qsort(inc, o, sizeof(*inc), row_order);
        struct hot_row *whole = xmalloc((n + 1) * sizeof(*whole));
        memcpy(whole, h->rows, n * sizeof(*whole));
        qsort(whole, n, sizeof(*whole), row_order);
        bool is_same = n == o;
        for (uint32_t i = 0; i < n && is_same; i++)
                is_same =
                        row_order(&inc[i], &whole[i]) == 0 && inc[i].top_self == whole[i].top_self;
        if (!is_same)
                abort(); /* a test's or ETWTOP_MERGE_CHECK's: the model prints nothing */
        free(inc);
        free(whole);
        return n;
}

uint32_t hot_rows_merge(struct hot *h, uint16_t source, enum hot_grouping grouping)
{
        if (!h->nr_builds++)
                return merge_uncached(h, source, grouping);
        /* the keys of places gone dropped past half again those named (and 8192): the
           incremental build's state then stale, the build whole */
        if (h->row1 && h->rgrouping == grouping)
                hot_row_keys_compact(h);
        uint32_t o;
        if (merge_incremental(h, source, grouping, &o))
                return h->is_merge_checked ? merge_checked(h, source, grouping, o) : o;
        struct hot_inc *rec = inc_start(h, source, grouping);
        o = merge_cached(h, source, grouping, rec);
        inc_finish(h, rec);
        return o;
}
