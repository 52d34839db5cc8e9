/* SPDX-License-Identifier: MIT */
/* switches_fold.c: owns the context switches' filter, decay and refresh, and the exited
   threads' cap (folded into the other row). */
#include "model_util.h"
#include "switches_impl.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- filter and refresh ---- */

static bool is_thread_outside(void *entry, void *ctx)
{
        struct thread *t = entry;
        const struct switches *sw = ctx;
        if (switches_thread_passes(sw, t))
                return false;
        /* the thread's state and name stay for when the filter widens; its counts go */
        switches_thread_clear_counts(t);
        return t->serial != 0;
}

static bool is_blocker_outside(void *entry, void *ctx)
{
        const struct blocker *b = entry;
        struct switches *sw = ctx;
        struct thread *t = switches_thread_find(sw, b->tid);
        return t ? !switches_thread_passes(sw, t) : (sw->filter.nr_pids || sw->filter.nr_tids);
}

static bool is_readier_outside(void *entry, void *ctx)
{
        const struct readier *r = entry;
        struct switches *sw = ctx;
        struct thread *t = switches_thread_find(sw, r->tid);
        return t ? !switches_thread_passes(sw, t) : (sw->filter.nr_pids || sw->filter.nr_tids);
}

static bool is_thread_cpu_outside(void *entry, void *ctx)
{
        const struct thread_cpu *tc = entry;
        struct switches *sw = ctx;
        struct thread *t = switches_thread_find(sw, tc->tid);
        return t ? !switches_thread_passes(sw, t) : (sw->filter.nr_pids || sw->filter.nr_tids);
}

void switches_set_filter(struct switches *sw, const struct agg_filter *f)
{
        sw->filter = *f;
        agg_table_remove_if(sw->readiers, is_readier_outside, sw);
        agg_table_remove_if(sw->blockers, is_blocker_outside, sw);
        agg_table_remove_if(sw->thread_cpus, is_thread_cpu_outside, sw);
        agg_table_remove_if(sw->threads, is_thread_outside, sw);
        if (f->nr_pids || f->nr_tids) {
                /* the totals cannot be split again by thread: they start over */
                switches_zero_totals(sw);
        }
}

struct decay_ctx {
        struct switches *sw;
        bool is_crowded; /* the table is over half full: idle live threads may go too */
        bool is_upkeep;  /* switches_upkeep: the counts stay as they are (no decay) */
};

static uint64_t apply(const struct switches *sw, uint64_t v)
{
        return agg_settings_apply(&sw->settings, v);
}

static void thread_decay(const struct switches *sw, struct thread *t)
{
        t->nr_switches = apply(sw, t->nr_switches);
        t->nr_readied = apply(sw, t->nr_readied);
        t->on_cpu_ns = apply(sw, t->on_cpu_ns);
        t->off_cpu_ns = 0;
        uint32_t o = 0;
        for (uint32_t i = 0; i < t->nr_waits; i++) {
                struct wait_bucket w = t->waits[i];
                w.nr = apply(sw, w.nr);
                w.ns = apply(sw, w.ns);
                if (w.nr || w.ns) {
                        t->waits[o++] = w;
                        t->off_cpu_ns += w.ns;
                }
        }
        t->nr_waits = o;
        t->other_wait_nr = apply(sw, t->other_wait_nr);
        t->other_wait_ns = apply(sw, t->other_wait_ns);
        t->off_cpu_ns += t->other_wait_ns;
        for (uint32_t i = 0; i < KEV_MAX_PMC; i++)
                t->pmc[i] = apply(sw, t->pmc[i]);
}

static bool is_thread_dropped(void *entry, void *ctx)
{
        struct thread *t = entry;
        struct decay_ctx *d = ctx;
        const struct agg_settings *s = &d->sw->settings;
        if (s->mode != AGG_CUMULATIVE && !d->is_upkeep)
                thread_decay(d->sw, t);
        bool is_spent = agg_settings_is_droppable(s, t->nr_switches) &&
                        agg_settings_is_droppable(s, t->nr_readied) &&
                        agg_settings_is_droppable(s, t->on_cpu_ns) &&
                        agg_settings_is_droppable(s, t->off_cpu_ns);
        if (s->mode == AGG_CUMULATIVE)
                is_spent = !switches_thread_has_counts(t);
        if (!is_spent)
                return false;
        /* a live thread keeps its state and name, unless room is short and it is not waiting
           (a waiting thread's wait is still to be counted) */
        return t->is_ended || t->serial != 0 || (d->is_crowded && !t->is_waiting);
}

static bool is_readier_dropped(void *entry, void *ctx)
{
        struct readier *r = entry;
        const struct switches *sw = ctx;
        r->count = apply(sw, r->count);
        return agg_settings_is_droppable(&sw->settings, r->count);
}

static bool is_blocker_dropped(void *entry, void *ctx)
{
        struct blocker *b = entry;
        const struct switches *sw = ctx;
        b->nr_waits = apply(sw, b->nr_waits);
        b->off_cpu_ns = apply(sw, b->off_cpu_ns);
        return agg_settings_is_droppable(&sw->settings, b->nr_waits) &&
               agg_settings_is_droppable(&sw->settings, b->off_cpu_ns);
}

static bool is_thread_cpu_dropped(void *entry, void *ctx)
{
        struct thread_cpu *tc = entry;
        const struct switches *sw = ctx;
        tc->nr_switches = apply(sw, tc->nr_switches);
        tc->on_cpu_ns = apply(sw, tc->on_cpu_ns);
        return agg_settings_is_droppable(&sw->settings, tc->nr_switches) &&
               agg_settings_is_droppable(&sw->settings, tc->on_cpu_ns);
}

static bool is_process_dropped(void *entry, void *ctx)
{
        const struct process *p = entry;
        (void)ctx;
        return p->is_ended;
}

/* ---- the exited threads' cap ---- */

/* An exited thread the cap may fold: it has counts and ended a grace period ago. */
static bool is_foldable(const struct switches *sw, const struct thread *t)
{
        return t->is_ended && t->end_ns <= sw->last_ns - SWITCHES_EXIT_GRACE_NS &&
               switches_thread_has_counts(t);
}

struct fold_item {
        uint64_t nr_switches, on_cpu_ns;
        uint32_t tid, serial;
};

/* The heavier first: more switches, then more on-CPU time; then by key, for a stable choice. */
static int fold_item_cmp(const void *a, const void *b)
{
        const struct fold_item *x = a, *y = b;
        if (x->nr_switches != y->nr_switches)
                return x->nr_switches > y->nr_switches ? -1 : 1;
        if (x->on_cpu_ns != y->on_cpu_ns)
                return x->on_cpu_ns > y->on_cpu_ns ? -1 : 1;
        if (x->tid != y->tid)
                return x->tid < y->tid ? -1 : 1;
        return x->serial < y->serial ? -1 : x->serial > y->serial;
}

/* Adds the counts of t into o (the other row). */
static void thread_add_counts(struct thread *o, const struct thread *t)
{
        o->nr_switches += t->nr_switches;
        o->nr_readied += t->nr_readied;
        o->on_cpu_ns += t->on_cpu_ns;
        o->off_cpu_ns += t->off_cpu_ns;
        for (uint32_t i = 0; i < t->nr_waits; i++)
                switches_wait_add(o, t->waits[i].state, t->waits[i].reason, (int64_t)t->waits[i].nr,
                                  (int64_t)t->waits[i].ns);
        o->other_wait_nr += t->other_wait_nr;
        o->other_wait_ns += t->other_wait_ns;
        for (uint32_t i = 0; i < KEV_MAX_PMC; i++)
                o->pmc[i] += t->pmc[i];
}

static bool is_thread_folded(void *entry, void *ctx)
{
        struct thread *t = entry;
        struct switches *sw = ctx;
        if (!t->is_folding)
                return false;
        thread_add_counts(&sw->other, t);
        return true;
}

/* The entries of threads no longer kept (folded, or never kept: their table was full) go to
   the totals that stand for them; a kept thread's readyings by threads no longer kept become
   readyings by "[exited threads]" (readying tid and pid AGG_ALL), from the same place. */
struct readier_fold {
        struct switches *sw;
        struct readier *moved; /* owned */
        uint32_t nr_moved, cap_moved;
};

static bool is_readier_orphan(void *entry, void *ctx)
{
        const struct readier *r = entry;
        struct readier_fold *f = ctx;
        if (!switches_thread_find(f->sw, r->tid)) {
                f->sw->nr_other_readies += r->count;
                return true;
        }
        if (r->readying_tid == 0 || r->readying_tid == AGG_ALL ||
            switches_thread_find(f->sw, r->readying_tid))
                return false;
        if (f->nr_moved == f->cap_moved) {
                f->cap_moved = f->cap_moved ? f->cap_moved * 2 : 256;
                f->moved = xrealloc(f->moved, f->cap_moved * sizeof(*f->moved));
        }
        f->moved[f->nr_moved++] = *r;
        return true;
}

static void fold_readiers(struct switches *sw)
{
        struct readier_fold f = {sw, NULL, 0, 0};
        agg_table_remove_if(sw->readiers, is_readier_orphan, &f);
        for (uint32_t i = 0; i < f.nr_moved; i++) {
                struct readier k = f.moved[i];
                k.readying_tid = k.readying_pid = AGG_ALL;
                k.count = 0;
                struct readier *r = agg_table_get(sw->readiers, &k, NULL);
                if (r) {
                        r->count += f.moved[i].count;
                } else {
                        sw->nr_other_readies += f.moved[i].count;
                        sw->caps.nr_no_room++;
                }
        }
        free(f.moved);
}

static bool is_blocker_orphan(void *entry, void *ctx)
{
        const struct blocker *b = entry;
        struct switches *sw = ctx;
        if (switches_thread_find(sw, b->tid))
                return false;
        sw->other_blocked_nr += b->nr_waits;
        sw->other_blocked_ns += b->off_cpu_ns;
        return true;
}

static bool is_thread_cpu_orphan(void *entry, void *ctx)
{
        const struct thread_cpu *tc = entry;
        return !switches_thread_find(ctx, tc->tid); /* the CPUs' own totals keep its time */
}

static int cmp_u64_key(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

struct prune_ctx {
        const struct switches *sw;
        const uint64_t *refs; /* sorted: pid << 32 | gen of the kept threads' processes (gen 0:
                                 the one that has the pid now) */
        uint32_t nr_refs;
};

static bool is_referenced(const struct prune_ctx *c, uint32_t pid, uint32_t gen)
{
        uint64_t k = (uint64_t)pid << 32 | gen;
        return bsearch(&k, c->refs, c->nr_refs, sizeof(*c->refs), cmp_u64_key) != NULL;
}

static bool is_process_unnamed(void *entry, void *ctx)
{
        const struct process *p = entry;
        const struct prune_ctx *c = ctx;
        if (!p->is_ended || p->end_ns > c->sw->last_ns - SWITCHES_EXIT_GRACE_NS)
                return false;
        /* a kept thread is tied to it (switches_thread_process), or names it by its pid */
        return !is_referenced(c, p->pid, p->serial ? p->serial : p->gen) &&
               (p->serial || !is_referenced(c, p->pid, 0));
}

/* Ended processes past SWITCHES_EXITED_MAX go when no kept thread is theirs: they only name
   threads. */
static void prune_processes(struct switches *sw)
{
        uint32_t nr_ended = 0;
        for (uint32_t i = 0; i < agg_table_capacity(sw->processes); i++) {
                const struct process *p = agg_table_slot(sw->processes, i);
                if (p && p->is_ended)
                        nr_ended++;
        }
        if (nr_ended <= SWITCHES_EXITED_MAX)
                return;
        uint64_t *refs = xmalloc((agg_table_nr(sw->threads) + 1) * sizeof(*refs));
        uint32_t n = 0;
        for (uint32_t i = 0; i < agg_table_capacity(sw->threads); i++) {
                const struct thread *t = agg_table_slot(sw->threads, i);
                if (t && t->has_pid)
                        refs[n++] = (uint64_t)t->pid << 32 | t->process_gen;
        }
        qsort(refs, n, sizeof(*refs), cmp_u64_key);
        struct prune_ctx c = {sw, refs, n};
        agg_table_remove_if(sw->processes, is_process_unnamed, &c);
        free(refs);
}

/* Past SWITCHES_EXITED_MAX exited threads, the lighter go into the other row. */
static void fold_exited(struct switches *sw)
{
        uint32_t n = 0;
        for (uint32_t i = 0; i < agg_table_capacity(sw->threads); i++) {
                const struct thread *t = agg_table_slot(sw->threads, i);
                if (t && is_foldable(sw, t))
                        n++;
        }
        if (n <= SWITCHES_EXITED_MAX)
                return;
        struct fold_item *items = xmalloc(n * sizeof(*items));
        uint32_t k = 0;
        for (uint32_t i = 0; i < agg_table_capacity(sw->threads); i++) {
                const struct thread *t = agg_table_slot(sw->threads, i);
                if (t && is_foldable(sw, t))
                        items[k++] =
                                (struct fold_item){t->nr_switches, t->on_cpu_ns, t->tid, t->serial};
        }
        qsort(items, n, sizeof(*items), fold_item_cmp);
        for (uint32_t i = SWITCHES_EXITED_MAX; i < n; i++) {
                struct thread_key key = {items[i].tid, items[i].serial};
                struct thread *t = agg_table_find(sw->threads, &key);
                if (t)
                        t->is_folding = true;
        }
        free(items);
        agg_table_remove_if(sw->threads, is_thread_folded, sw);
        sw->caps.nr_threads_folded += n - SWITCHES_EXITED_MAX;
        fold_readiers(sw);
        agg_table_remove_if(sw->blockers, is_blocker_orphan, sw);
        agg_table_remove_if(sw->thread_cpus, is_thread_cpu_orphan, sw);
}

/* Credits what is still open up to the latest event time. */
static void credit_open(struct switches *sw)
{
        /* switches stopped: nothing is known to run or wait past then */
        int64_t now = sw->is_stopped && sw->stopped_ns < sw->last_ns ? sw->stopped_ns : sw->last_ns;
        for (uint32_t c = 0; c < sw->nr_cpus; c++) {
                struct cpu *cs = &sw->cpus[c];
                if (cs->has_current && cs->since_ns < now) {
                        switches_credit_on_cpu(sw, c, cs->tid, cs->since_ns, now);
                        cs->since_ns = now;
                }
        }
        for (uint32_t i = 0; sw->has_waited && i < agg_table_capacity(sw->threads); i++) {
                struct thread *t = agg_table_slot(sw->threads, i);
                if (!t || !t->is_waiting)
                        continue;
                /* an ended thread's wait (its switch-in still to come) ends with it */
                int64_t to = t->is_ended && t->end_ns < now ? t->end_ns : now;
                if (t->out_ns < to) {
                        switches_credit_off_cpu(sw, t, t->out_ns, to, false);
                        t->out_ns = to;
                }
        }
}

void switches_settle(struct switches *sw)
{
        switches_pending_flush_all(sw);
        credit_open(sw);
}

/* The threads and processes that may go, gone; past the exited threads' cap, the lighter
   folded (is_upkeep: without the mode's decay). */
static void caps_upkeep(struct switches *sw, bool is_upkeep)
{
        struct decay_ctx d = {sw, agg_table_nr(sw->threads) * 2 > agg_table_max(sw->threads),
                              is_upkeep};
        agg_table_remove_if(sw->threads, is_thread_dropped, &d);
        fold_exited(sw);
        prune_processes(sw);
        if (agg_table_nr(sw->processes) * 2 > agg_table_max(sw->processes))
                agg_table_remove_if(sw->processes, is_process_dropped, NULL);
}

void switches_upkeep(struct switches *sw)
{
        switches_settle(sw);
        caps_upkeep(sw, true);
}

void switches_refresh(struct switches *sw)
{
        switches_settle(sw);
        /* the wall time the counts cover goes with them: decayed or zeroed alike */
        sw->wall_kept_ns = (int64_t)apply(sw, (uint64_t)switches_wall_ns(sw));
        sw->wall_mark_ns = sw->last_ns;
        caps_upkeep(sw, false);
        if (sw->settings.mode == AGG_CUMULATIVE)
                return;
        if (sw->settings.mode == AGG_ZEROED) /* the counts start over, as with z: the caps' too */
                memset(&sw->caps, 0, sizeof(sw->caps));
        agg_table_remove_if(sw->readiers, is_readier_dropped, sw);
        agg_table_remove_if(sw->blockers, is_blocker_dropped, sw);
        agg_table_remove_if(sw->thread_cpus, is_thread_cpu_dropped, sw);
        thread_decay(sw, &sw->other);
        sw->nr_other_readies = apply(sw, sw->nr_other_readies);
        sw->other_blocked_nr = apply(sw, sw->other_blocked_nr);
        sw->other_blocked_ns = apply(sw, sw->other_blocked_ns);
        for (uint32_t s = 0; s < NR_STATES; s++)
                for (uint32_t r = 0; r < NR_REASONS; r++) {
                        sw->waits[s][r].nr = apply(sw, sw->waits[s][r].nr);
                        sw->waits[s][r].ns = apply(sw, sw->waits[s][r].ns);
                }
        for (uint32_t c = 0; c < sw->nr_cpus; c++) {
                struct cpu *cs = &sw->cpus[c];
                cs->nr_switches = apply(sw, cs->nr_switches);
                cs->busy_ns = apply(sw, cs->busy_ns);
                cs->idle_ns = apply(sw, cs->idle_ns);
                for (uint32_t k = 0; k < SWITCHES_NR_CSTATES; k++)
                        cs->cstate_ns[k] = apply(sw, cs->cstate_ns[k]);
        }
        sw->nr_switches = apply(sw, sw->nr_switches);
        sw->nr_readies = apply(sw, sw->nr_readies);
}
