/* SPDX-License-Identifier: MIT */
/* hot.c: owns the self and total counts of sampled addresses: the table of places and the
   ingestion of samples and stacks (the memos are in hot_memo.c, the rows in hot_rows.c). */
#include "hot_impl.h"
#include "frames_gen.h"
#include "model_util.h"

#include <stdlib.h>
#include <string.h>

uint64_t hot_key_hash(const struct entry *k)
{
        return hash_mix64(k->rel ^
                          hash_mix64(((uint64_t)k->module << 32 | k->pid) ^
                                     ((uint64_t)k->source << 48) ^ ((uint64_t)k->tid << 17)));
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
        h->exited_max = h->max_entries / HOT_EXITED_SHARE;
        if (h->exited_max > HOT_EXITED_MAX)
                h->exited_max = HOT_EXITED_MAX;
        if (h->exited_max < 64)
                h->exited_max = 64;
        h->unnamed_max = h->max_entries / HOT_UNNAMED_SHARE;
        if (h->unnamed_max > HOT_UNNAMED_MAX)
                h->unnamed_max = HOT_UNNAMED_MAX;
        if (h->unnamed_max < 64)
                h->unnamed_max = 64;
        h->place_keys = HOT_BY_THREAD;
        h->last = 1023;
        h->slots = xzalloc_table(h->last + 1, sizeof(*h->slots));
        hot_used_make(h);
        h->frames_gen = xcalloc(1, sizeof(*h->frames_gen));
        agg_settings_init(&h->settings);
        agg_filter_init(&h->filter);
        const char *check = getenv("ETWTOP_MERGE_CHECK");
        h->is_merge_checked = check && strcmp(check, "1") == 0;
        return h;
}

void hot_set_merge_check(struct hot *h, bool is_checked)
{
        h->is_merge_checked = is_checked;
}

void hot_free(struct hot *h)
{
        if (!h)
                return;
        free(h->slots);
        free(h->used);
        free(h->dirty);
        hot_inc_free(h);
        free(h->rows);
        free(h->sort_a);
        free(h->sort_b);
        free(h->sort_rows);
        free(h->rkeys);
        free(h->rout);
        free(h->rindex);
        free(h->row1);
        free(h->ugen);
        free(h->memo);
        pending_slots_free(&h->pending_memos);
        free(h->frames);
        free(h->answers);
        free(h->frames_gen);
        free(h->dstacks);
        free(h->dkeys);
        free(h->dindex);
        free(h->mrows);
        free(h->line_rows);
        free(h->ended_pids);
        free(h->pid_heads);
        free(h->pid_keys);
        free(h->fold_places.p);
        free(h->fold_order.p);
        free(h->unplaced_slots.p);
        free(h->unplaced.p);
        free(h->unplaced_order.p);
        free(h->ended.p);
        free(h->unplaced_keys);
        free(h);
}

void hot_reset(struct hot *h)
{
        h->nr_rows_cached = 0;
        memset(h->slots, 0, (size_t)(h->last + 1) * sizeof(*h->slots));
        memset(h->used, 0, (size_t)(h->last + 1) / 64 * sizeof(*h->used));
        memset(h->dirty, 0, (size_t)(h->last + 1) / 64 * sizeof(*h->dirty));
        h->nr = 0;
        h->unnamed_scan_nr = 0;
        memset(h->nr_other, 0, sizeof(h->nr_other));
        memset(&h->caps, 0, sizeof(h->caps));
        h->nr_ended_pids = h->nr_prev_ended = 0;
        memset(h->nr_samples, 0, sizeof(h->nr_samples));
        h->nr_sources = 0;
        h->nr_stacks = 0;
        memset(h->pend, 0, sizeof(h->pend));
        h->nr_pend = 0;
        h->nr_unmatched = 0;
        if (h->memo)
                memset(h->memo, 0, MEMO_SLOTS * sizeof(*h->memo));
        memset(h->memo_second_recent, 0, sizeof(h->memo_second_recent));
        h->nr_pending = 0;
        pending_slots_clear(&h->pending_memos);
        h->nr_dstacks = h->nr_dkeys = 0;
        if (h->dindex)
                memset(h->dindex, 0, DEFER_SLOTS * sizeof(*h->dindex));
        hot_exited_reset(h);
        h->nr_unplaced_keys = 0;
        free(h->row1); /* the rows' cache starts over at the next builds */
        h->row1 = NULL;
        h->nr_builds = 0;
        h->epoch++;
}

/* hash: hot_key_hash(k), which the caller may have at hand */
static struct entry *slot_find_hashed(struct hot *h, const struct entry *k, uint64_t hash)
{
        for (uint32_t j = hot_home(h, hash);; j = hot_next(h, j)) {
                struct entry *e = &h->slots[j];
                if (!e->is_used || key_eq(e, k))
                        return e;
        }
}

struct entry *hot_slot_find_hashed(struct hot *h, const struct entry *k, uint64_t hash)
{
        return slot_find_hashed(h, k, hash);
}

struct entry *hot_slot_find(struct hot *h, const struct entry *k)
{
        return slot_find_hashed(h, k, hot_key_hash(k));
}

static void grow(struct hot *h)
{
        hot_memo_settle_all(h);
        h->epoch++;
        struct entry *old = h->slots;
        uint32_t old_cap = h->last + 1;
        /* doubled while small (each growth makes the memos stale: a quarter at a time from the
           start cost the screen 15-20% more through its first seconds); from HOT_GROW_SLOW slots
           a quarter more, in whole words of the bitmaps */
        h->last = old_cap < HOT_GROW_SLOW ? old_cap * 2 - 1
                                          : (old_cap + old_cap / 4 + 63) / 64 * 64 - 1;
        h->slots = xzalloc_table(h->last + 1, sizeof(*h->slots));
        hot_used_make(h);
        for (uint32_t i = 0; i < old_cap; i++)
                if (old[i].is_used) {
                        struct entry *e = slot_find_hashed(h, &old[i], old[i].hash);
                        *e = old[i];
                        hot_used_set(h, (uint32_t)(e - h->slots));
                }
        uint32_t *old_row1 = h->row1;
        h->row1 = NULL;
        hot_rows_rehome(h, old_row1, old, old_cap);
        free(old);
}

uint32_t hot_source_index(struct hot *h, uint16_t source)
{
        for (uint32_t i = 0; i < h->nr_sources; i++)
                if (h->sources[i] == source)
                        return i;
        if (h->nr_sources == MAX_SOURCES)
                return MAX_SOURCES - 1; /* more sources than anyone configures: lumped */
        h->sources[h->nr_sources] = source;
        return h->nr_sources++;
}

/* count_hashed's new place: its entry made at e (free), or none when the table is full (self
   counted as other). Returns the entry, NULL for none. */
static struct entry *place_new(struct hot *h, struct entry *e, const struct entry *k, uint64_t hash,
                               uint64_t self)
{
        if (h->nr >= h->max_entries) {
                h->nr_other[hot_source_index(h, k->source)] += self;
                h->caps.nr_samples_no_room += self;
                return NULL;
        }
        if (h->is_tracking) {
                hot_exited_track(h, k); /* before it is in the table (a compaction lists it) */
                if (!k->module)
                        hot_unplaced_track(h, k);
        }
        *e = *k;
        e->hash = hash;
        e->is_used = true;
        hot_used_set(h, (uint32_t)(e - h->slots));
        e->is_exited = false;
        e->self = e->total = e->dup = 0;
        hot_row_forget(h, (uint32_t)(e - h->slots));
        h->nr++;
        if (k->module)
                sym_prefetch(h->store, k->module); /* its rows will want names */
        if (h->nr * 2 > h->last + 1) {
                grow(h);
                e = slot_find_hashed(h, k, hash);
        }
        return e;
}

/* Adds self and total to the entry of k (hash: hot_key_hash(k)); counted as other when the table is
   full. Returns the entry's slot, UINT32_MAX when it went to other. Inline: most places are
   there already (place_new makes the others). */
static inline uint32_t count_hashed(struct hot *h, const struct entry *k, uint64_t hash,
                                    uint64_t self, uint64_t total)
{
        h->nr_rows_cached = 0; /* the rows asked for last are stale */
        struct entry *e = slot_find_hashed(h, k, hash);
        if (!e->is_used && !(e = place_new(h, e, k, hash, self)))
                return UINT32_MAX;
        hot_place_live(h, e);
        e->self += self;
        e->total += total;
        return (uint32_t)(e - h->slots);
}

void hot_count(struct hot *h, const struct entry *k, uint64_t self, uint64_t total)
{
        count_hashed(h, k, hot_key_hash(k), self, total);
}

/* key_of, and in *is_everyones whether its place is every process's (sym_locate_ex). */
static struct entry key_of_ex(struct hot *h, uint16_t source, uint32_t pid, uint32_t tid,
                              uint64_t addr, bool *is_everyones)
{
        struct sym_loc loc = sym_locate_ex(h->store, pid, addr, is_everyones);
        struct entry k = {0};
        k.source = source;
        k.module = loc.module;
        k.rel = loc.module ? loc.rel : addr;
        k.pid = pid;
        k.tid = tid;
        hot_key_normalize(h, &k);
        return k;
}

static struct entry key_of(struct hot *h, uint16_t source, uint32_t pid, uint32_t tid,
                           uint64_t addr)
{
        bool is_everyones;
        return key_of_ex(h, source, pid, tid, addr, &is_everyones);
}

void hot_key_normalize(const struct hot *h, struct entry *k)
{
        if (h->place_keys != HOT_BY_THREAD)
                k->tid = AGG_ALL;
        if (h->place_keys == HOT_BY_FUNCTION && k->module)
                k->pid = AGG_ALL;
}

/* The answer memo's slot for the place of module at rel. */
static struct answer_memo *answer_slot(struct hot *h, uint32_t module, uint64_t rel)
{
        if (!h->answers)
                h->answers = xzalloc_table(ANSWER_SLOTS, sizeof(*h->answers));
        uint64_t x = (rel ^ (uint64_t)module << 40) * 0x9e3779b97f4a7c15ull;
        return &h->answers[(x >> 40) & (ANSWER_SLOTS - 1)];
}

void hot_place_answer(struct hot *h, struct entry *e, struct sym_loc loc, struct sym_frame *f)
{
        *f = (struct sym_frame){(enum sym_state)(e->answer - 1), e->module, e->function, 0};
        if (hot_answer_is_current(h, e))
                return;
        e->answer = 0;
        if (e >= h->slots && e <= h->slots + h->last) /* its row was the old answer's */
                hot_row_forget(h, (uint32_t)(e - h->slots));
        /* the answer another place at this address was given, while it stands as an entry's
           would (an unplaced place located now is asked: it keeps no answer) */
        bool is_own = e->module && loc.module == e->module && loc.rel == e->rel;
        struct answer_memo *a = is_own ? answer_slot(h, e->module, e->rel) : NULL;
        if (a && a->module == e->module && a->rel == e->rel) {
                e->answer = a->answer;
                e->function = a->function;
                e->epoch = a->epoch;
                if (hot_answer_is_current(h, e)) {
                        *f = (struct sym_frame){(enum sym_state)(e->answer - 1), e->module,
                                                e->function, 0};
                        return;
                }
                e->answer = 0;
        }
        bool is_final = e->module && sym_answers_are_final(h->store, e->module);
        h->nr_asked++;
        sym_resolve(h->store, loc, f);
        /* asked after the lookup: a recording's kernel table is built again by it when symbols
           came since */
        uint32_t epoch = is_final || !e->module ? 0 : sym_answers_epoch(h->store, e->module);
        if (is_final || (epoch && epoch <= UINT16_MAX)) {
                e->answer = (uint8_t)(f->state + 1);
                e->function = f->state == SYM_RESOLVED ? f->function : 0;
                e->epoch = (uint16_t)epoch;
                if (a)
                        *a = (struct answer_memo){e->rel, e->module, e->function, e->epoch,
                                                  e->answer};
        }
}

bool hot_answer_is_current(const struct hot *h, const struct entry *e)
{
        return e->answer && (!e->epoch || e->epoch == sym_answers_epoch(h->store, e->module));
}

bool hot_place_function(struct hot *h, struct entry *e, uint64_t *function)
{
        *function = 0;
        if (!e->module)
                return true;
        struct sym_frame f;
        hot_place_answer(h, e, (struct sym_loc){e->module, e->rel}, &f);
        if (f.state == SYM_RESOLVED)
                *function = (uint64_t)e->module << 32 | f.function;
        return f.state != SYM_PENDING;
}

/* hot_function_seen, hash: hash_mix64(function) (hot_function_bit's too) */
static inline bool function_seen_hashed(struct hot *h, uint64_t function, uint64_t hash)
{
        for (uint32_t j = (uint32_t)(hash >> 40) & (SEEN_SLOTS - 1);;
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

bool hot_function_seen(struct hot *h, uint64_t function)
{
        return function_seen_hashed(h, function, hash_mix64(function));
}

void hot_seen_next(struct hot *h)
{
        if (++h->seen_gen == 0) {
                memset(h->seen, 0, sizeof(h->seen));
                memset(h->fseen, 0, sizeof(h->fseen));
                h->seen_gen = 1;
        }
}

/* Whether keys[i] (hash: its hot_key_hash) is in the current stack's set of places; else it is now.
 */
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

/* A look at the counts (the rows, the lines, a function's places). Live, a sample whose stack
   has not come counts as it is: the refresh will not wait for it. A trace read keeps it
   waiting: its stack may be the next record (a slice of the screen's reading ends anywhere),
   and a look that took it left the stack no sample, its callers' totals short of a read
   without looks (test_rows_read); the trace's end counts what still waits (hot_samples_end). */
void hot_look_flush(struct hot *h)
{
        if (sym_store_is_live(h->store))
                for (uint32_t c = 0; c < h->nr_pend; c++)
                        hot_pending_flush(h, &h->pend[c]);
}

void hot_settle_samples(struct hot *h)
{
        hot_look_flush(h);
        hot_memo_settle_all(h);
}

void hot_samples_end(struct hot *h)
{
        for (uint32_t c = 0; c < h->nr_pend; c++)
                hot_pending_flush(h, &h->pend[c]);
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

/* An empty set of places: only the scalars are set (the arrays, 4 KiB, are written before they
   are read: clearing them was a tenth of a stack's cost). */
static void places_init(struct stack_places *sp, bool is_pending)
{
        sp->nr = 0;
        sp->is_pending = is_pending;
        sp->is_whole = true;
}

/* What a stack's frames found in the frame memo (frame_find) hold for places_add: each key's
   hash, and its slot (UINT32_MAX: not known) as it was at epoch. */
struct frame_hints {
        uint64_t hash[MAX_STACK_KEYS];
        uint32_t slot[MAX_STACK_KEYS];
        bool is_everyones[MAX_STACK_KEYS]; /* a located frame every process's */
        uint32_t epoch;
};

/* hot_place_function, an answer that stands read in place (hot_answer_is_current: most places
   of a stack have one). */
static inline bool place_function(struct hot *h, struct entry *e, uint64_t *function)
{
        if (e->answer && (!e->epoch || e->epoch == sym_answers_epoch(h->store, e->module))) {
                enum sym_state state = (enum sym_state)(e->answer - 1);
                *function = state == SYM_RESOLVED ? (uint64_t)e->module << 32 | e->function : 0;
                return state != SYM_PENDING;
        }
        return hot_place_function(h, e, function);
}

/* Adds the places of keys[from..to) that are not in the current stack's set yet (place_seen),
   each counted total more (count_hashed, or in the slot hints hold while the table has not
   moved), with their functions; stops at a name still loading when is_stop_at_pending. The
   slots of places added before a growth of the table are found again (places_refind). */
static void places_add(struct hot *h, const struct entry *keys, const struct frame_hints *hints,
                       uint32_t from, uint32_t to, uint64_t total, bool is_stop_at_pending,
                       struct stack_places *sp)
{
        for (uint32_t i = from; i < to && !(is_stop_at_pending && sp->is_pending); i++) {
                uint64_t hash = hints ? hints->hash[i] : hot_key_hash(&keys[i]);
                if (place_seen(h, keys, i, hash))
                        continue;
                uint32_t slot;
                if (hints && hints->slot[i] != UINT32_MAX && hints->epoch == h->epoch) {
                        /* count_hashed's count of a place that is there */
                        slot = hints->slot[i];
                        struct entry *e = &h->slots[slot];
                        h->nr_rows_cached = 0;
                        hot_place_live(h, e);
                        e->total += total;
                } else {
                        slot = count_hashed(h, &keys[i], hash, 0, total);
                }
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
                        sp->places[k] = (uint32_t)(hot_slot_find(h, &keys[sp->idx[k]]) - h->slots);
}

/* The deferred stacks are full: those whose names came since the last try count now, which
   frees their room. False when nothing could have changed. */
static bool deferred_make_room(struct hot *h)
{
        uint64_t generation = sym_store_generation(h->store);
        if (generation == h->settled_generation)
                return false;
        h->settled_generation = generation;
        uint32_t before = h->nr_dstacks;
        hot_deferred_settle(h);
        return h->nr_dstacks < before;
}

/* Counts the stack of places keys[0..n): each place once (total), and a function at several of
   its places once (dup on the others), or, where a name is still loading, its dup later
   (hot_deferred_add). */
static void count_stack(struct hot *h, const struct entry *keys, uint32_t n)
{
        uint32_t epoch = h->epoch;
        uint64_t mh = n;
        for (uint32_t i = 0; i < n; i++)
                mh = ((mh << 27 | mh >> 37) ^ hot_key_hash(&keys[i])) * 0x9e3779b97f4a7c15ull;
        hot_seen_next(h);
        struct stack_places sp;
        places_init(&sp, false);
        places_add(h, keys, NULL, 0, n, 1, false, &sp);
        if (sp.is_pending && hot_deferred_add(h, mh, keys, sp.idx, sp.nr))
                return;
        if (sp.is_pending && deferred_make_room(h) && hot_deferred_add(h, mh, keys, sp.idx, sp.nr))
                return;
        places_refind(h, keys, epoch, &sp);
        if (sp.is_pending && !sym_store_is_live(h->store)) {
                /* a recording's totals must not depend on how fast its modules load: the
                   names, then this stack's functions */
                sym_store_wait(h->store);
                hot_deferred_settle(h);
                for (uint32_t k = 0; k < sp.nr; k++)
                        hot_place_function(h, &h->slots[sp.places[k]], &sp.functions[k]);
        }
        for (uint32_t k = 0; k < sp.nr; k++)
                if (sp.functions[k] && hot_function_seen(h, sp.functions[k]))
                        h->slots[sp.places[k]].dup++;
}

static inline struct frame_memo *frame_slot(const struct hot *h, uint32_t pid, uint64_t addr)
{
        uint64_t x = (addr ^ (uint64_t)pid << 40 ^ pid) * 0x9e3779b97f4a7c15ull;
        return &h->frames[(x >> 40) & (FRAME_SLOTS - 1)];
}

/* The slot of the place of the frame at addr (source, pid, tid: the stack's), its key in *k
   and its hash in *hash, from the frame memo; UINT32_MAX where it holds none now. */
static inline uint32_t frame_find_at(struct hot *h, const struct frame_memo *f, uint16_t source,
                                     uint32_t pid, uint32_t tid, uint64_t addr, uint64_t generation,
                                     bool is_everyones, struct entry *k, uint64_t *hash);

static inline uint32_t frame_find(struct hot *h, uint16_t source, uint32_t pid, uint32_t tid,
                                  uint64_t addr, uint64_t generation, bool is_everyones,
                                  struct entry *k, uint64_t *hash)
{
        return frame_find_at(h, frame_slot(h, pid, addr), source, pid, tid, addr, generation,
                             is_everyones, k, hash);
}

/* frame_find where f is frame_slot(h, pid, addr), found before (a stack's frames' slots are
   found once, to be asked for ahead, and looked at then) */
static inline uint32_t frame_find_at(struct hot *h, const struct frame_memo *f, uint16_t source,
                                     uint32_t pid, uint32_t tid, uint64_t addr, uint64_t generation,
                                     bool is_everyones, struct entry *k, uint64_t *hash)
{
        if (!f->slot1 || f->addr != addr || f->pid != pid || f->tid != tid || f->source != source ||
            f->generation != (uint32_t)generation || f->epoch != h->epoch ||
            f->is_everyones != is_everyones)
                return UINT32_MAX;
        const struct entry *e = &h->slots[f->slot1 - 1];
        *k = (struct entry){.rel = e->rel,
                            .module = e->module,
                            .pid = e->pid,
                            .tid = e->tid,
                            .source = e->source};
        *hash = e->hash;
        return f->slot1 - 1;
}

static void frame_keep(struct hot *h, uint16_t source, uint32_t pid, uint32_t tid, uint64_t addr,
                       uint64_t generation, bool is_everyones, uint32_t slot)
{
        *frame_slot(h, pid, addr) = (struct frame_memo){
                addr, (uint32_t)generation, pid, tid, h->epoch, slot + 1, source, is_everyones};
}

void hot_prefetch_sample(const struct hot *h, uint32_t pid, uint64_t ip, bool is_near)
{
        if (!h->frames || pid == UINT32_MAX)
                return;
        const struct frame_memo *f = frame_slot(h, pid, ip);
        if (!is_near) {
                __builtin_prefetch(f);
                __builtin_prefetch(
                        &h->frames_gen->by_pid[hash_mix64(pid) & (FRAMES_GEN_SLOTS - 1)]);
        } else if (f->slot1 && f->addr == ip && f->pid == pid) {
                /* one line: a place is one, the table aligned (xzalloc_table) */
                __builtin_prefetch(&h->slots[f->slot1 - 1]);
        }
}

static void sample(struct hot *h, const struct kevent *ev, uint16_t source, uint64_t ip,
                   uint32_t tid)
{
        if (!agg_filter_pass(&h->filter, ev->pid, tid, ev->time_ns))
                return; /* and its stack finds no sample: not counted either */
        if (__builtin_expect(h->comm_key != NULL, 0))
                tid = h->comm_key(h->comm_key_ctx, ev->pid, tid); /* its stack's places too */
        uint32_t si = hot_source_index(h, source);
        h->nr_samples[si]++;
        /* the sampled place from the frame memo, where a stack's frame or an earlier sample
           at this address left it: not located, hashed or probed for again */
        uint32_t key_tid = h->place_keys == HOT_BY_THREAD ? tid : AGG_ALL;
        struct entry k;
        uint64_t hash;
        uint32_t slot = UINT32_MAX;
        uint64_t generation = 0;
        if (h->frames && ev->pid != UINT32_MAX) {
                generation = frames_gen_of(h->frames_gen, ev->pid);
                slot = frame_find(h, source, ev->pid, key_tid, ip, generation, false, &k, &hash);
        }
        bool is_unplaced = false;
        if (slot != UINT32_MAX) {
                struct entry *e = &h->slots[slot];
                h->nr_rows_cached = 0;
                hot_place_live(h, e);
                e->self++;
        } else {
                k = key_of(h, source, ev->pid, tid, ip);
                is_unplaced = ev->pid == UINT32_MAX && !k.module;
                if (!is_unplaced) {
                        hash = hot_key_hash(&k);
                        slot = count_hashed(h, &k, hash, 1, 0);
                        /* as a stack's frames are kept: a live one's of no image not (a
                           JIT map may place it at the next refresh) */
                        if (slot != UINT32_MAX && h->frames && ev->pid != UINT32_MAX &&
                            (k.module || !sym_store_is_live(h->store)))
                                frame_keep(h, source, ev->pid, key_tid, ip, generation, false,
                                           slot);
                }
        }
        struct pending *p = &h->pend[ev->cpu % MAX_CPUS];
        if (ev->cpu % MAX_CPUS >= h->nr_pend)
                h->nr_pend = ev->cpu % MAX_CPUS + 1;
        hot_pending_flush(h, p);
        *p = (struct pending){ev->timestamp, k,    ip,    ev->pid,    slot,
                              h->epoch,      true, false, is_unplaced};
        h->nr_unmatched++;
}

uint64_t hot_nr_frames_located(const struct hot *h)
{
        return h->nr_located;
}

uint64_t hot_nr_answers_asked(const struct hot *h)
{
        return h->nr_asked;
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
        h->nr_unmatched--;
        h->nr_stacks++;
        h->leaf.has = false;
        if (p->is_unplaced) {
                /* the process the stack names places the sample (counted once, here) */
                if (ev->stack.pid != UINT32_MAX) {
                        p->key = key_of(h, p->key.source, ev->stack.pid, p->key.tid, p->ip);
                        p->pid = ev->stack.pid;
                }
                p->is_unplaced = false;
                hot_count(h, &p->key, 1, 0);
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
        if (nr_frames && !(frames[0] == p->ip && ev->stack.pid == p->pid)) {
                keys[nr_leaf] = key_of(h, p->key.source, ev->stack.pid, p->key.tid, frames[0]);
                if (!key_eq(&keys[nr_leaf], &keys[0]))
                        nr_leaf++;
        }
        uint32_t nr_callers = nr_frames ? nr_frames - 1 : 0;
        /* the seed mixed before it meets the callers' hash: the stack's process and source
           xored in as they are, two processes' stacks whose callers' hashes differ by the bits
           their pids do would hash alike (test_hot_memo_pids_apart) */
        uint64_t seed = hash_mix64(((uint64_t)p->key.source << 48 | ev->stack.pid) ^
                                   hash_mix64(p->key.pid) ^ hash_mix64((uint64_t)p->key.tid << 20));
        /* the callers' frames hashed once: the call tree keys its memo by the same hash
           (hot_stack_callers) */
        uint64_t callers_fh = hash_frames(nr_callers ? frames + 1 : frames, nr_callers);
        uint64_t mh = hash_mix64(callers_fh ^ seed);
        /* its memo's pair in flight while the leaf is counted */
        if (h->memo)
                hot_memo_prefetch(h, mh);
        /* the leaf's places and their functions: a name still loading takes the whole stack
           the long way */
        uint64_t leaf_functions[2];
        uint32_t leaf_slots[2];
        bool is_pending = false;
        for (uint32_t i = 0; i < nr_leaf; i++) {
                uint32_t slot;
                if (i == 0 && p->slot != UINT32_MAX && p->epoch == h->epoch) {
                        /* the sample's own place, as it counted it: nothing moved since */
                        slot = p->slot;
                        hot_place_live(h, &h->slots[slot]);
                } else {
                        slot = count_hashed(h, &keys[i], hot_key_hash(&keys[i]), 0, 0);
                }
                leaf_slots[i] = slot;
                leaf_functions[i] = 0;
                if (slot != UINT32_MAX && !place_function(h, &h->slots[slot], &leaf_functions[i]))
                        is_pending = true;
        }
        /* a recording's names are waited for where one is still loading (its totals do not
           depend on the loader's pace, count_stack): the stack then takes the memo's way
           rather than the long one, and is remembered */
        bool is_recording = !sym_store_is_live(h->store);
        if (is_pending && is_recording) {
                sym_store_wait(h->store);
                is_pending = false;
                for (uint32_t i = 0; i < nr_leaf; i++)
                        if (leaf_slots[i] != UINT32_MAX &&
                            !hot_place_function(h, &h->slots[leaf_slots[i]], &leaf_functions[i]))
                                is_pending = true;
        }
        /* the sampled place, for the call tree's leaf (hot_stack_leaf): its function, or
           where none is named (a stripped program's, an address of no image) its module and
           address, as the tree keys it; where the place was located in the stack's process */
        if (leaf_slots[0] != UINT32_MAX && !is_pending &&
            (ev->stack.pid == UINT32_MAX || ev->stack.pid == p->pid)) {
                h->leaf.timestamp = ev->stack.event_timestamp;
                h->leaf.ip = p->ip;
                h->leaf.pid = p->pid;
                h->leaf.module =
                        leaf_functions[0] ? (uint32_t)(leaf_functions[0] >> 32) : keys[0].module;
                h->leaf.function = (uint32_t)leaf_functions[0];
                h->leaf.rel = leaf_functions[0] ? 0 : keys[0].rel;
                h->leaf.callers_frames_hash = callers_fh;
                h->leaf.nr_callers = nr_callers;
                h->leaf.has = true;
                if (h->leaf_hook)
                        h->leaf_hook(h->leaf_hook_ctx, ev);
        }
        uint64_t generation = frames_gen_of(h->frames_gen, ev->stack.pid);
        /* at the first stack: a trace without (LBR, counters) never zeroes its 672 KiB, a
           sixth of a small perf.data's page faults */
        if (!h->memo)
                h->memo = xzalloc_table(MEMO_SLOTS, sizeof(*h->memo));
        bool is_hit;
        struct stack_memo *m = hot_memo_find(h, mh, generation, is_pending, &is_hit);
        if (!is_hit) {
                hot_memo_settle(h, m);
                m->is_set = false;
                h->nr_walks++;
                /* the callers' places: those of frames seen before from the frame memo, the
                   others located */
                if (!h->frames)
                        h->frames = xzalloc_table(FRAME_SLOTS, sizeof(*h->frames));
                const struct frame_memo *fslot[MAX_STACK_KEYS];
                for (uint32_t i = 1; i < nr_frames; i++) {
                        fslot[i] = frame_slot(h, ev->stack.pid, frames[i]);
                        __builtin_prefetch(fslot[i]);
                }
                struct frame_hints hints;
                hints.epoch = h->epoch;
                /* places keyed by address alone: a kernel frame's is every process's */
                bool is_shared = h->place_keys == HOT_BY_FUNCTION;
                uint64_t kernel_generation = h->frames_gen->all;
                for (uint32_t i = 1; i < nr_frames; i++) {
                        uint32_t j = nr_leaf + i - 1;
                        hints.is_everyones[j] = false;
                        hints.slot[j] = frame_find_at(h, fslot[i], p->key.source, ev->stack.pid,
                                                      p->key.tid, frames[i], generation, false,
                                                      &keys[j], &hints.hash[j]);
                        if (hints.slot[j] == UINT32_MAX && is_shared &&
                            sym_is_kernel_address(frames[i]))
                                hints.slot[j] = frame_find(h, p->key.source, FRAME_EVERYONE,
                                                           p->key.tid, frames[i], kernel_generation,
                                                           true, &keys[j], &hints.hash[j]);
                        if (hints.slot[j] != UINT32_MAX)
                                continue;
                        keys[j] = key_of_ex(h, p->key.source, ev->stack.pid, p->key.tid, frames[i],
                                            &hints.is_everyones[j]);
                        hints.hash[j] = hot_key_hash(&keys[j]);
                        h->nr_located++;
                }
                /* the callers' places, each once, and their functions: all named, a memo of
                   them; else the stack is counted the long way */
                uint32_t epoch = h->epoch;
                hot_seen_next(h);
                struct stack_places sp;
                places_init(&sp, is_pending);
                places_add(h, keys, &hints, nr_leaf, nr_leaf + nr_callers, 0, true, &sp);
                if (sp.is_pending && !is_pending && is_recording) {
                        /* the places so far again, their entries made: the same order */
                        sym_store_wait(h->store);
                        hot_seen_next(h);
                        places_init(&sp, false);
                        places_add(h, keys, &hints, nr_leaf, nr_leaf + nr_callers, 0, true, &sp);
                }
                if (sp.is_pending) {
                        count_stack(h, keys, nr_leaf + nr_callers);
                        return;
                }
                /* counted: each caller's place, a function at its first place */
                places_refind(h, keys, epoch, &sp);
                uint32_t *places = sp.places, nr_places = sp.nr;
                /* the frames located now, for the next stacks over them */
                for (uint32_t k = 0; k < nr_places; k++) {
                        uint32_t j = sp.idx[k];
                        if (hints.slot[j] != UINT32_MAX || (!keys[j].module && !is_recording))
                                continue;
                        if (is_shared && hints.is_everyones[j])
                                frame_keep(h, p->key.source, FRAME_EVERYONE, p->key.tid,
                                           frames[j - nr_leaf + 1], kernel_generation, true,
                                           places[k]);
                        else
                                frame_keep(h, p->key.source, ev->stack.pid, p->key.tid,
                                           frames[j - nr_leaf + 1], generation, false, places[k]);
                }
                uint64_t bits = 0;
                for (uint32_t k = 0; k < nr_places; k++) {
                        struct entry *e = &h->slots[places[k]];
                        e->total++;
                        uint64_t f = sp.functions[k];
                        if (!f)
                                continue;
                        /* one hash for the stack's set and the memo's bits (hot_function_bit) */
                        uint64_t fh = hash_mix64(f);
                        if (function_seen_hashed(h, f, fh)) {
                                e->dup++;
                                places[k] |= MEMO_DUP;
                        }
                        bits |= 1ull << (fh & 63);
                }
                /* the leaf: once, unless a caller's place is the same; a function the callers
                   hold (hot_function_seen holds them) counts as dup */
                for (uint32_t i = 0; i < nr_leaf; i++) {
                        if (place_seen(h, keys, i, hot_key_hash(&keys[i])))
                                continue;
                        uint32_t slot = count_hashed(h, &keys[i], hot_key_hash(&keys[i]), 0, 1);
                        if (slot != UINT32_MAX && leaf_functions[i] &&
                            hot_function_seen(h, leaf_functions[i]))
                                h->slots[slot].dup++;
                }
                if (sp.is_whole && nr_places <= MEMO_PLACES && h->epoch == epoch) {
                        m->hash = mh;
                        m->generation = generation;
                        m->epoch = epoch;
                        m->nr_places = nr_places;
                        m->nr_pending = 0;
                        m->is_set = true;
                        m->functions = bits;
                        m->place_bits = 0;
                        for (uint32_t k = 0; k < nr_places; k++)
                                m->place_bits |= hot_memo_place_bit(places[k] & ~MEMO_DUP);
                        memcpy(m->places, places, nr_places * sizeof(*places));
                }
                return;
        }
        /* the same callers seen before: counted along the memo's places when the totals are
           read; the leaf now */
        if (!m->nr_pending++)
                pending_slots_add(&h->pending_memos, (uint32_t)(m - h->memo), MEMO_SLOTS);
        h->nr_pending++;
        for (uint32_t i = 0; i < nr_leaf; i++) {
                uint32_t slot = leaf_slots[i]; /* the epoch is the memo's: nothing moved */
                if (slot == UINT32_MAX)
                        continue;
                bool is_caller = false;
                if (m->place_bits & hot_memo_place_bit(slot))
                        for (uint32_t k = 0; k < m->nr_places && !is_caller; k++)
                                is_caller = (m->places[k] & ~MEMO_DUP) == slot;
                if (is_caller)
                        continue;
                struct entry *e = &h->slots[slot];
                e->total++;
                uint64_t f = leaf_functions[i];
                if (f && ((i == 1 && leaf_functions[0] == f) || hot_memo_has_function(h, m, f)))
                        e->dup++;
        }
}

/* Whether the leaf kept is stack ev's (stack found it as it counted ev). */
static bool is_leaf_of(const struct hot *h, const struct kevent *ev)
{
        return ev->type == KEV_STACK && h->leaf.has &&
               h->leaf.timestamp == ev->stack.event_timestamp;
}

bool hot_stack_leaf(const struct hot *h, const struct kevent *ev, uint64_t *ip, uint32_t *pid,
                    uint32_t *module, uint32_t *function, uint64_t *rel)
{
        if (!is_leaf_of(h, ev))
                return false;
        *ip = h->leaf.ip;
        *pid = h->leaf.pid;
        *module = h->leaf.module;
        *function = h->leaf.function;
        *rel = h->leaf.rel;
        return true;
}

bool hot_stack_callers(const struct hot *h, const struct kevent *ev, uint64_t *frames_hash,
                       uint32_t *nr)
{
        if (!is_leaf_of(h, ev))
                return false;
        *frames_hash = h->leaf.callers_frames_hash;
        *nr = h->leaf.nr_callers;
        return true;
}

void hot_set_leaf_hook(struct hot *h, hot_leaf_fn fn, void *ctx)
{
        h->leaf_hook = fn;
        h->leaf_hook_ctx = ctx;
}

bool hot_waits_for_stack(const struct hot *h)
{
        return h->nr_unmatched != 0;
}

_Static_assert((HOT_EVENT_KINDS & FRAMES_GEN_KINDS) == FRAMES_GEN_KINDS,
               "the kinds hot_event reads hold those that move addresses");

void hot_event(struct hot *h, const struct kevent *ev)
{
        frames_gen_event(h->frames_gen, ev);
        switch (ev->type) {
        case KEV_SAMPLE: sample(h, ev, HOT_SOURCE_TIMER, ev->sample.ip, ev->sample.tid); break;
        case KEV_PMC_SAMPLE:
                sample(h, ev, ev->pmc_sample.source, ev->pmc_sample.ip, ev->pmc_sample.tid);
                break;
        case KEV_STACK:
                /* a switch storm's stacks are most of its events: with no sample waiting,
                   none of them is a sample's */
                if (h->nr_unmatched)
                        stack(h, ev);
                break;
        case KEV_PROFILE_INTERVAL: {
                uint32_t s = ev->profile_interval.source, i = 0;
                while (i < h->nr_declared && h->declared[i] != s)
                        i++;
                if (i == h->nr_declared && i < MAX_DECLARED && s <= UINT16_MAX)
                        h->declared[h->nr_declared++] = (uint16_t)s;
                break;
        }
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

void hot_set_filter(struct hot *h, const struct agg_filter *f)
{
        h->filter = *f;
}
