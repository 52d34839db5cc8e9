/* SPDX-License-Identifier: MIT */
/* hot_exited.c: owns the hot functions' cap on the places of processes that ended: past
   HOT_EXITED_MAX of them, the lighter fold into one place per address for every exited
   process, down to half of it. Each process's places are listed by key as they are made, so a
   process's end marks its own places: the table is looked at whole only past the cap (once
   per HOT_EXITED_MAX / 2 ended places) and when the lists' stale keys outgrow it. */
#include "hot_impl.h"
#include "model_util.h"
#include "sort_select.h"

#include <stdlib.h>
#include <string.h>

/* The ended pids as an open-addressing set (0 is a pid too: slots hold pid + 1). */
struct pid_set {
        uint64_t *slots; /* owned */
        uint32_t mask;
};

static uint32_t pid_slot(const struct pid_set *s, uint32_t pid)
{
        return (uint32_t)hash_mix64(pid) & s->mask;
}

static void pid_set_init(struct pid_set *s, const uint32_t *pids, uint32_t n)
{
        uint32_t cap = 64;
        while (cap < 2 * n)
                cap *= 2;
        s->mask = cap - 1;
        s->slots = xcalloc(cap, sizeof(*s->slots));
        for (uint32_t i = 0; i < n; i++) {
                uint32_t j = pid_slot(s, pids[i]);
                while (s->slots[j] && s->slots[j] != (uint64_t)pids[i] + 1)
                        j = (j + 1) & s->mask;
                s->slots[j] = (uint64_t)pids[i] + 1;
        }
}

static bool pid_set_has(const struct pid_set *s, uint32_t pid)
{
        for (uint32_t j = pid_slot(s, pid); s->slots[j]; j = (j + 1) & s->mask)
                if (s->slots[j] == (uint64_t)pid + 1)
                        return true;
        return false;
}

int hot_place_cmp(const struct entry *x, const struct entry *y)
{
        if (x->total != y->total)
                return x->total > y->total ? -1 : 1;
        if (x->self != y->self)
                return x->self > y->self ? -1 : 1;
        if (x->pid != y->pid)
                return x->pid < y->pid ? -1 : 1;
        if (x->tid != y->tid)
                return x->tid < y->tid ? -1 : 1;
        if (x->source != y->source)
                return x->source < y->source ? -1 : 1;
        if (x->module != y->module)
                return x->module < y->module ? -1 : 1;
        return x->rel < y->rel ? -1 : x->rel > y->rel;
}

/* hot_place_cmp of places a and b of ctx (sort_select.h). */
static int exited_order(const void *ctx, uint32_t a, uint32_t b)
{
        const struct entry *x = ctx;
        return hot_place_cmp(&x[a], &x[b]);
}

/* e's counts go to the place of every exited process at its address; where no sample was at
   e's own address (its stacks passed through it: a caller's return address) and its function
   is named, at that function's first byte instead. A row's counts stay whole either way (its
   total is its places' totals less their dup, both added), and what is kept by address is what
   annotate and the lines read (samples' own addresses): the named addresses a long run's ended
   processes only passed through take one place a function, not one an address (one place in
   thirty under bench/rss.sh's load: bench/README.md, item 7, stop 101). Only where the
   function's module is loaded now: an ended process's module given back (sym_evict.c) is not
   loaded again for it. */
static void fold_one(struct hot *h, const struct entry *e)
{
        struct entry k = *e;
        uint64_t start = 0, size = 0;
        if (!e->self && e->module && e->answer == SYM_RESOLVED + 1 && !e->epoch &&
            e->rel != HOT_REL_UNNAMED_REST &&
            sym_function_range_loaded(h->store, (struct sym_loc){e->module, e->rel}, &start,
                                      &size) &&
            start <= e->rel)
                k.rel = start; /* its answer (the same function) goes with it */
        hot_slot_delete(h, hot_slot_find(h, e));
        k.pid = k.tid = AGG_ALL;
        hot_count(h, &k, e->self, e->total);
        struct entry *f = hot_slot_find(h, &k);
        if (f->is_used) { /* there is room: one went */
                f->dup += e->dup;
                if (f->dup > f->total)
                        f->dup = f->total;
                f->is_exited = true;
        }
        h->caps.nr_exited_folded++;
}

/* ---- each process's places, by key ---- */

static struct pid_places *pid_slot_of(const struct hot *h, uint32_t pid)
{
        uint32_t j = (uint32_t)hash_mix64(pid) & h->pid_mask;
        while (h->pid_heads[j].pid1 && h->pid_heads[j].pid1 != pid + 1)
                j = (j + 1) & h->pid_mask;
        return &h->pid_heads[j];
}

/* The process's list, NULL when it has none. */
static struct pid_places *pid_find(const struct hot *h, uint32_t pid)
{
        if (!h->pid_heads)
                return NULL;
        struct pid_places *p = pid_slot_of(h, pid);
        return p->pid1 ? p : NULL;
}

static void pid_heads_make(struct hot *h, uint32_t cap)
{
        free(h->pid_heads);
        h->pid_heads = xcalloc(cap, sizeof(*h->pid_heads));
        h->pid_mask = cap - 1;
        h->nr_pids = 0;
}

/* The process's list, made (empty) when it has none. */
static struct pid_places *pid_get(struct hot *h, uint32_t pid)
{
        if (!h->pid_heads)
                pid_heads_make(h, 256);
        if ((h->nr_pids + 1) * 2 > h->pid_mask + 1) {
                struct pid_places *old = h->pid_heads;
                uint32_t old_cap = h->pid_mask + 1;
                h->pid_heads = NULL;
                pid_heads_make(h, old_cap * 2);
                for (uint32_t i = 0; i < old_cap; i++)
                        if (old[i].pid1 && old[i].head != PID_PLACES_NONE) {
                                *pid_slot_of(h, old[i].pid1 - 1) = old[i];
                                h->nr_pids++;
                        }
                free(old);
        }
        struct pid_places *p = pid_slot_of(h, pid);
        if (!p->pid1) {
                *p = (struct pid_places){pid + 1, PID_PLACES_NONE};
                h->nr_pids++;
        }
        return p;
}

static void pid_key_add(struct hot *h, const struct entry *e)
{
        struct pid_places *p = pid_get(h, e->pid);
        h->pid_keys[h->nr_pid_keys] =
                (struct pid_place){e->rel, e->module, e->tid, p->head, e->source};
        p->head = h->nr_pid_keys++;
}

/* The lists made again from the table's live places: the keys of places that went, and of
   processes whose end marked them, are dropped. */
static void pid_lists_compact(struct hot *h)
{
        h->nr_exited_scans++;
        pid_heads_make(h, 256);
        h->nr_pid_keys = 0;
        for (uint32_t i = 0; i <= h->last; i++) {
                const struct entry *e = &h->slots[i];
                if (e->is_used && !e->is_exited && e->pid != AGG_ALL)
                        pid_key_add(h, e);
        }
}

void hot_exited_start(struct hot *h)
{
        uint32_t cap = h->cap_pid_keys ? h->cap_pid_keys : 4096;
        while (cap < 2 * (h->nr + 1))
                cap *= 2;
        if (cap != h->cap_pid_keys) {
                h->pid_keys = xrealloc(h->pid_keys, cap * sizeof(*h->pid_keys));
                h->cap_pid_keys = cap;
        }
        pid_lists_compact(h); /* every live place fits: fewer than half of the room */
        h->is_tracking = true;
}

void hot_exited_track(struct hot *h, const struct entry *e)
{
        if (!h->is_tracking || e->pid == AGG_ALL)
                return;
        if (h->nr_pid_keys == h->cap_pid_keys) {
                /* stale keys past the table's size: one look at the table per that many new
                   places (the live ones fit: fewer than half of the room) */
                if (h->cap_pid_keys && h->nr_pid_keys >= 2 * h->nr + 4096)
                        pid_lists_compact(h);
                if (h->nr_pid_keys == h->cap_pid_keys) {
                        h->cap_pid_keys = h->cap_pid_keys ? h->cap_pid_keys * 2 : 4096;
                        h->pid_keys = xrealloc(h->pid_keys, h->cap_pid_keys * sizeof(*h->pid_keys));
                }
        }
        pid_key_add(h, e);
}

void hot_exited_revive(struct hot *h, struct entry *e)
{
        if (e->pid != AGG_ALL) {
                hot_exited_track(h, e); /* before: a compaction leaves exited places out */
                h->nr_exited--;
        }
        e->is_exited = false;
}

void hot_exited_reset(struct hot *h)
{
        h->is_tracking = false;
        h->nr_exited = 0;
        h->nr_pid_keys = 0;
        if (h->pid_heads)
                pid_heads_make(h, 256);
}

uint64_t hot_nr_exited_scans(const struct hot *h)
{
        return h->nr_exited_scans;
}

uint32_t hot_nr_places(const struct hot *h)
{
        return h->nr;
}

void hot_set_fold_scanned(struct hot *h, bool is_scanned)
{
        h->is_fold_scanned = is_scanned;
}

/* The places of pid marked exited, through its list (which goes). */
static void mark_ended(struct hot *h, uint32_t pid)
{
        struct pid_places *p = pid_find(h, pid);
        if (!p)
                return;
        for (uint32_t i = p->head; i != PID_PLACES_NONE; i = h->pid_keys[i].next) {
                const struct pid_place *q = &h->pid_keys[i];
                struct entry k = {0};
                k.rel = q->rel;
                k.module = q->module;
                k.pid = pid;
                k.tid = q->tid;
                k.source = q->source;
                struct entry *e = hot_slot_find(h, &k);
                if (e->is_used && !e->is_exited) {
                        e->is_exited = true;
                        h->nr_exited++;
                }
        }
        p->head = PID_PLACES_NONE;
}

/* mark_ended for every place, by a look at the whole table (hot_set_fold_scanned). */
static void mark_by_scan(struct hot *h, const uint32_t *ended, uint32_t n)
{
        h->nr_exited_scans++;
        uint32_t nr_exited = 0;
        struct pid_set set = {NULL, 0};
        if (n)
                pid_set_init(&set, ended, n);
        for (uint32_t i = 0; i <= h->last; i++) {
                struct entry *e = &h->slots[i];
                if (!e->is_used || e->pid == AGG_ALL)
                        continue;
                if (!e->is_exited && n && pid_set_has(&set, e->pid))
                        e->is_exited = true;
                nr_exited += e->is_exited;
        }
        free(set.slots);
        h->nr_exited = nr_exited;
}

bool hot_fold_exited(struct hot *h, const uint32_t *ended, uint32_t n)
{
        if (h->is_fold_scanned)
                mark_by_scan(h, ended, n);
        else
                for (uint32_t i = 0; i < n; i++)
                        mark_ended(h, ended[i]);
        if (h->nr_exited <= h->exited_max)
                return false;
        /* past the cap: once per exited_max / 2 places of ended processes */
        h->nr_exited_scans++;
        uint32_t nr_exited = h->nr_exited;
        struct entry *x = scratch_get(&h->fold_places, nr_exited * sizeof(*x));
        uint32_t k = 0;
        for (uint32_t i = 0; i <= h->last && k < nr_exited; i++) {
                const struct entry *e = &h->slots[i];
                if (e->is_used && e->is_exited && e->pid != AGG_ALL)
                        x[k++] = *e;
        }
        /* down to half: the sort comes once per HOT_EXITED_MAX / 2 ends, not at every refresh.
           The heaviest half stays as it is, in no order; the rest fold in the order a sort of
           them all gives them (where a fold puts a place depends on the ones before it) */
        uint32_t keep = h->exited_max / 2;
        if (k <= keep)
                return true;
        uint32_t *order = scratch_get(&h->fold_order, k * sizeof(*order));
        for (uint32_t i = 0; i < k; i++)
                order[i] = i;
        select_u32(order, k, keep, exited_order, x);
        sort_u32(order + keep, k - keep, exited_order, x);
        for (uint32_t i = keep; i < k; i++)
                fold_one(h, &x[order[i]]);
        return true;
}
