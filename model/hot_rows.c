/* SPDX-License-Identifier: MIT */
/* hot_rows.c: owns the hot functions' refresh (decay, the unplaced places' cap) and their rows:
   sorting, the top functions and the modules. */
#include "frames_gen.h"
#include "hot_impl.h"
#include "model_util.h"
#include "sort_select.h"

#include <stdlib.h>
#include <string.h>

/* ---- the unplaced places' cap ---- */

void hot_slot_delete(struct hot *h, struct entry *e)
{
        uint32_t i = (uint32_t)(e - h->slots);
        hot_exited_forget(h, e);
        h->slots[i].is_used = false;
        hot_used_clear(h, i);
        for (uint32_t j = hot_next(h, i); h->slots[j].is_used; j = hot_next(h, j)) {
                uint32_t k = hot_home(h, h->slots[j].hash);
                /* the entry at j stays when its home k lies cyclically in (i, j] */
                bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
                if (!stays) {
                        h->slots[i] = h->slots[j];
                        hot_used_set(h, i);
                        hot_row_move(h, j, i);
                        h->slots[j].is_used = false;
                        hot_used_clear(h, j);
                        i = j;
                }
        }
        hot_row_forget(h, i);
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

/* Of places a and b of ctx (in the table's order): the heavier first (total, then self); then
   by process and address, then in the table's order (the places of one address in two
   threads: as a stable sort of them leaves them): a total order (sort_select.h). */
static int unplaced_order(const void *ctx, uint32_t a, uint32_t b)
{
        const struct unplaced *u = ctx;
        const struct entry *x = &u[a].key, *y = &u[b].key;
        if (x->total != y->total)
                return x->total > y->total ? -1 : 1;
        if (x->self != y->self)
                return x->self > y->self ? -1 : 1;
        if (x->pid != y->pid)
                return x->pid < y->pid ? -1 : 1;
        if (x->rel != y->rel)
                return x->rel < y->rel ? -1 : 1;
        return a < b ? -1 : a > b;
}

/* e's samples go to the other row (as a place's total only counts its stacks, the totals of
   many places do not add up to one) */
static void fold_into_other(struct hot *h, const struct entry *e)
{
        h->nr_other[hot_source_index(h, e->source)] += e->self;
        h->caps.nr_places_folded++;
        hot_slot_delete(h, hot_slot_find(h, e));
}

/* Unplaced places that have a module now move to it; those of processes that ended, and past
   HOT_UNPLACED_MAX the lightest, go into the other row. */
void hot_unplaced_track(struct hot *h, const struct entry *k)
{
        if (h->nr_unplaced_keys == h->cap_unplaced_keys) {
                h->cap_unplaced_keys = h->cap_unplaced_keys ? h->cap_unplaced_keys * 2 : 256;
                h->unplaced_keys = xrealloc(h->unplaced_keys,
                                            h->cap_unplaced_keys * sizeof(*h->unplaced_keys));
        }
        h->unplaced_keys[h->nr_unplaced_keys++] = *k;
}

/* The slots of the unplaced places, in the table's order (as a look at the whole table finds
   them), into *out (h's work array); returns how many. From their keys, unless the refresh
   looks at the table (hot_set_fold_scanned, or the first refresh: no keys kept yet). */
static uint32_t unplaced_slots(struct hot *h, uint32_t **out)
{
        uint32_t n = 0;
        if (h->is_fold_scanned || !h->is_tracking) {
                uint32_t *s = scratch_get(&h->unplaced_slots, (h->nr + 1) * sizeof(*s));
                for (uint32_t i = 0; i <= h->last; i++)
                        if (h->slots[i].is_used && !h->slots[i].module)
                                s[n++] = i;
                *out = s;
                return n;
        }
        uint32_t *s = scratch_get(&h->unplaced_slots, (h->nr_unplaced_keys + 1) * sizeof(*s));
        for (uint32_t i = 0; i < h->nr_unplaced_keys; i++) {
                const struct entry *e = hot_slot_find(h, &h->unplaced_keys[i]);
                if (e->is_used) /* not folded or decayed away since */
                        s[n++] = (uint32_t)(e - h->slots);
        }
        sort_u32(s, n, sort_by_value, NULL);
        uint32_t o = 0;
        for (uint32_t i = 0; i < n; i++)
                if (!o || s[o - 1] != s[i])
                        s[o++] = s[i];
        *out = s;
        return o;
}

static void place_or_fold(struct hot *h)
{
        uint32_t *slots;
        uint32_t n = unplaced_slots(h, &slots);
        struct unplaced *u = scratch_get(&h->unplaced, (n + 1) * sizeof(*u));
        for (uint32_t i = 0; i < n; i++) {
                const struct entry *e = &h->slots[slots[i]];
                u[i] = (struct unplaced){*e, sym_locate(h->store, e->pid, e->rel)};
        }
        h->nr_unplaced_keys = 0; /* those made from here on, then those kept (below) */
        if (!h->is_tracking)
                hot_exited_start(h);
        uint32_t nr_ended = h->nr_ended_pids;
        uint32_t *ended = scratch_get(&h->ended, (nr_ended + 1) * sizeof(*ended));
        if (nr_ended)
                memcpy(ended, h->ended_pids, nr_ended * sizeof(*ended));
        sort_u32(ended, nr_ended, sort_by_value, NULL);
        uint32_t nr_kept = 0;
        bool is_changed = false;
        for (uint32_t i = 0; i < n; i++) {
                struct entry k = u[i].key;
                if (u[i].loc.module) {
                        hot_slot_delete(h, hot_slot_find(h, &k));
                        k.module = u[i].loc.module;
                        k.rel = u[i].loc.rel;
                        k.answer = 0;
                        hot_key_normalize(h, &k); /* placed: its process where keys hold it */
                        hot_count(h, &k, k.self, k.total);
                        is_changed = true;
                } else if (bsearch(&k.pid, ended, nr_ended, sizeof(*ended), cmp_pid)) {
                        fold_into_other(h, &k);
                        is_changed = true;
                } else {
                        u[nr_kept++] = u[i];
                }
        }
        is_changed |= hot_fold_exited(h, ended, nr_ended);
        /* the ends before the last refresh go; the latest stay for the next one */
        if (h->nr_prev_ended) {
                memmove(h->ended_pids, h->ended_pids + h->nr_prev_ended,
                        (h->nr_ended_pids - h->nr_prev_ended) * sizeof(*h->ended_pids));
                h->nr_ended_pids -= h->nr_prev_ended;
        }
        h->nr_prev_ended = h->nr_ended_pids;
        /* the places in u by index, in the table's order (u is, the kept moved up in it) */
        uint32_t *order = scratch_get(&h->unplaced_order, (nr_kept + 1) * sizeof(*order));
        for (uint32_t i = 0; i < nr_kept; i++)
                order[i] = i;
        if (nr_kept > HOT_UNPLACED_MAX) {
                /* the heaviest stay, in no order (the next refresh finds them by slot); the
                   others fold in the order a sort of them all gives them */
                select_u32(order, nr_kept, HOT_UNPLACED_MAX, unplaced_order, u);
                sort_u32(order + HOT_UNPLACED_MAX, nr_kept - HOT_UNPLACED_MAX, unplaced_order, u);
                for (uint32_t i = HOT_UNPLACED_MAX; i < nr_kept; i++)
                        fold_into_other(h, &u[order[i]].key);
                nr_kept = HOT_UNPLACED_MAX;
                is_changed = true;
        }
        /* the next refresh looks at those kept and those made meanwhile */
        for (uint32_t i = 0; i < nr_kept; i++)
                hot_unplaced_track(h, &u[order[i]].key);
        if (is_changed)
                h->epoch++; /* places moved: the memos (settled before) are stale */
}

void hot_want_unplaced(struct hot *h)
{
        for (uint32_t i = 0; i <= h->last; i++) {
                const struct entry *e = &h->slots[i];
                if (!e->is_used || e->module)
                        continue;
                struct sym_loc loc = sym_locate(h->store, e->pid, e->rel);
                if (loc.module)
                        sym_prefetch(h->store, loc.module);
        }
}

void hot_kernel_moved(struct hot *h)
{
        frames_gen_kernel_moved(h->frames_gen);
}

bool hot_is_crowded(const struct hot *h)
{
        return h->nr_ended_pids && h->nr >= h->max_entries - h->max_entries / 4;
}

void hot_upkeep(struct hot *h)
{
        h->nr_rows_cached = 0;
        hot_memo_settle_all(h);
        for (uint32_t c = 0; c < h->nr_pend; c++)
                hot_pending_flush(h, &h->pend[c]);
        hot_deferred_settle(h);
        place_or_fold(h);
        hot_fold_unnamed(h);
}

void hot_refresh(struct hot *h)
{
        hot_upkeep(h);
        const struct agg_settings *s = &h->settings;
        if (s->mode == AGG_CUMULATIVE)
                return;
        if (s->mode == AGG_ZEROED) /* the counts start over, as with z: what the caps did too */
                memset(&h->caps, 0, sizeof(h->caps));
        h->epoch++; /* the places move below */
        /* decay in place, then put the survivors back: removing from open addressing in place
           would break the probe chains */
        uint32_t cap = h->last + 1, nr = 0;
        h->nr_exited = 0; /* counted again: the places dropped go */
        for (uint32_t i = 0; i < cap; i++) {
                struct entry *e = &h->slots[i];
                if (!e->is_used)
                        continue;
                e->self = agg_settings_apply(s, e->self);
                e->total = agg_settings_apply(s, e->total);
                e->dup = agg_settings_apply(s, e->dup);
                if (e->dup > e->total)
                        e->dup = e->total;
                if (agg_settings_is_droppable(s, e->self) &&
                    agg_settings_is_droppable(s, e->total)) {
                        e->is_used = false;
                } else {
                        h->nr_exited += e->is_exited && e->pid != AGG_ALL;
                        hot_row_move(h, i, nr);
                        h->slots[nr++] = *e; /* nr <= i: compacts to the front */
                }
        }
        struct entry *kept = h->slots;
        h->slots = xzalloc_table(cap, sizeof(*h->slots));
        hot_used_make(h);
        h->nr = nr;
        for (uint32_t i = 0; i < nr; i++) {
                struct entry *e = hot_slot_find_hashed(h, &kept[i], kept[i].hash);
                *e = kept[i];
                hot_used_set(h, (uint32_t)(e - h->slots));
        }
        uint32_t *old_row1 = h->row1;
        h->row1 = NULL;
        hot_rows_rehome(h, old_row1, kept, nr);
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
                hot_deferred_index(h);
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

uint64_t hot_nr_walks(const struct hot *h)
{
        return h->nr_walks;
}

uint32_t hot_sources(const struct hot *h, uint16_t *out, uint32_t max)
{
        /* those the trace declared, in its order, then the others as their samples came */
        bool is_out[MAX_SOURCES] = {false};
        uint32_t n = 0;
        for (uint32_t d = 0; d < h->nr_declared && n < max; d++)
                for (uint32_t i = 0; i < h->nr_sources; i++)
                        if (h->sources[i] == h->declared[d] && !is_out[i]) {
                                is_out[i] = true;
                                out[n++] = h->sources[i];
                        }
        for (uint32_t i = 0; i < h->nr_sources && n < max; i++)
                if (!is_out[i])
                        out[n++] = h->sources[i];
        return n;
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
        case SF_REL: return r->function ? 0 : r->rel; /* the row key: rel only when unnamed */
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
        if (!h->sort_a) {
                h->sort_a = xmalloc(h->cap_rows * sizeof(*h->sort_a));
                h->sort_b = xmalloc(h->cap_rows * sizeof(*h->sort_b));
                h->sort_rows = xmalloc(h->cap_rows * sizeof(*h->sort_rows));
        }
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

static uint32_t top_functions(struct hot *h, uint16_t source, enum hot_grouping grouping,
                              bool is_by_total, uint32_t max, const struct hot_row **rows);

uint32_t hot_functions(struct hot *h, uint16_t source, bool is_by_total,
                       const struct hot_row **rows)
{
        return top_functions(h, source, h->grouping, is_by_total, 0, rows);
}

uint32_t hot_top_functions(struct hot *h, uint16_t source, bool is_by_total, uint32_t max,
                           const struct hot_row **rows)
{
        return top_functions(h, source, h->grouping, is_by_total, max, rows);
}

uint32_t hot_functions_by(struct hot *h, uint16_t source, enum hot_grouping grouping,
                          bool is_by_total, const struct hot_row **rows)
{
        return top_functions(h, source, grouping, is_by_total, 0, rows);
}

uint32_t hot_top_functions_by(struct hot *h, uint16_t source, enum hot_grouping grouping,
                              bool is_by_total, uint32_t max, const struct hot_row **rows)
{
        return top_functions(h, source, grouping, is_by_total, max, rows);
}

uint32_t hot_top_functions_all_by(struct hot *h, uint16_t source, enum hot_grouping grouping,
                                  bool is_by_total, uint32_t max, const struct hot_row **rows)
{
        top_functions(h, source, grouping, is_by_total, max, rows);
        return h->nr_rows_cached;
}

void hot_rows_grow(struct hot *h, uint32_t o)
{
        /* doubling: rows that grow a little at each refresh do not leave the allocator a hole
           a little too small every time; the rows made so far stay */
        uint32_t cap = h->cap_rows ? h->cap_rows : 1024;
        while (cap <= o)
                cap *= 2;
        if (cap > h->max_entries + 2) /* the places and the other row: never more */
                cap = h->max_entries + 2 > o ? h->max_entries + 2 : o + 1;
        h->rows = xrealloc(h->rows, cap * sizeof(*h->rows));
        free(h->sort_a);
        free(h->sort_b);
        free(h->sort_rows);
        h->sort_a = h->sort_b = NULL; /* made by rows_sort when a whole order is asked */
        h->sort_rows = NULL;
        h->cap_rows = cap;
}

static uint32_t top_functions(struct hot *h, uint16_t source, enum hot_grouping grouping,
                              bool is_by_total, uint32_t max, const struct hot_row **rows)
{
        hot_look_flush(h);
        hot_memo_settle_all(h);
        hot_deferred_settle(h);
        /* the places of one function merge into one row (hot_row_keys.c) */
        uint32_t o = hot_rows_merge(h, source, grouping);
        uint32_t si = 0;
        for (; si < h->nr_sources && h->sources[si] != source; si++)
                ;
        hot_rows_room(h, o); /* the other row's, and rows non-NULL when there are none */
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
        /* the functions' samples summed by module through a hash of modules (a sort of every
           function by module was most of this) */
        uint32_t cap = 256, o = 0;
        uint32_t *index = xcalloc(cap, sizeof(*index)); /* module row + 1, 0 free */
        for (uint32_t i = 0; i < n; i++) {
                uint32_t j = (uint32_t)hash_mix64(fr[i].module) & (cap - 1);
                while (index[j] && h->mrows[index[j] - 1].module != fr[i].module)
                        j = (j + 1) & (cap - 1);
                if (index[j]) {
                        h->mrows[index[j] - 1].self += fr[i].self;
                } else {
                        h->mrows[o] = (struct hot_module_row){source, fr[i].module, fr[i].self};
                        index[j] = ++o;
                }
                if (o * 2 > cap) { /* more modules than the hash was sized for: twice the room */
                        free(index);
                        cap *= 2;
                        index = xcalloc(cap, sizeof(*index));
                        for (uint32_t k = 0; k < o; k++) {
                                uint32_t q = (uint32_t)hash_mix64(h->mrows[k].module) & (cap - 1);
                                while (index[q])
                                        q = (q + 1) & (cap - 1);
                                index[q] = k + 1;
                        }
                }
        }
        free(index);
        qsort(h->mrows, o, sizeof(*h->mrows), mrow_cmp);
        *rows = h->mrows;
        return o;
}
