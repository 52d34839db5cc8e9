/* SPDX-License-Identifier: MIT */
/* switches.c: owns the context-switch accounting: each thread's on-CPU and off-CPU intervals,
   its waits, who readied it, and the stacks that come with them (the identities, the fold and
   the rows are in switches_tasks.c, switches_fold.c and switches_rows.c). */
#include "model/switches.h"
#include "model_util.h"
#include "switches_impl.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etw/ntwmi.h"

void *switches_reserve(void *array, uint32_t *cap, uint32_t n, size_t size)
{
        if (*cap >= n && array)
                return array;
        free(array);
        uint32_t c = *cap ? *cap : 64;
        while (c < n)
                c *= 2;
        *cap = c;
        return xcalloc(c, size);
}

void switches_copy_name(char *dst, const char *src)
{
        size_t n = strlen(src);
        if (n >= SWITCHES_NAME_SIZE)
                n = SWITCHES_NAME_SIZE - 1;
        memcpy(dst, src, n);
        dst[n] = '\0';
}

static void reset(struct switches *sw, bool is_cpus_used);

struct switches *switches_new(struct sym_store *store, uint32_t max_entries)
{
        struct switches *sw = xcalloc(1, sizeof(*sw));
        uint32_t max = max_entries ? max_entries : (1u << 16);
        sw->store = store;
        sw->threads = agg_table_new(THREAD_KEY_SIZE, sizeof(struct thread), max);
        sw->processes = agg_table_new(PROCESS_KEY_SIZE, sizeof(struct process), max);
        sw->readiers = agg_table_new(READIER_KEY_SIZE, sizeof(struct readier), max);
        sw->blockers = agg_table_new(BLOCKER_KEY_SIZE, sizeof(struct blocker), max);
        sw->thread_cpus = agg_table_new(THREAD_CPU_KEY_SIZE, sizeof(struct thread_cpu), max);
        sw->cpus = xcalloc(MAX_CPUS, sizeof(*sw->cpus));
        sw->tid_memo = xcalloc(TID_MEMO_SLOTS, sizeof(*sw->tid_memo));
        agg_settings_init(&sw->settings);
        agg_filter_init(&sw->filter);
        reset(sw, false);
        return sw;
}

void switches_free(struct switches *sw)
{
        if (!sw)
                return;
        agg_table_free(sw->threads);
        agg_table_free(sw->processes);
        agg_table_free(sw->readiers);
        agg_table_free(sw->blockers);
        agg_index_free(&sw->readier_index);
        agg_index_free(&sw->blocker_index);
        agg_table_free(sw->thread_cpus);
        free(sw->cpus);
        free(sw->tid_memo);
        free(sw->rows);
        free(sw->prows);
        free(sw->wrows);
        free(sw->rrows);
        free(sw->crows);
        free(sw->brows);
        free(sw);
}

void switches_thread_clear_counts(struct thread *t)
{
        t->nr_switches = t->nr_readied = t->on_cpu_ns = t->off_cpu_ns = 0;
        t->nr_waits = 0;
        t->other_wait_nr = t->other_wait_ns = 0;
        memset(t->pmc, 0, sizeof(t->pmc));
}

void switches_zero_totals(struct switches *sw)
{
        memset(&sw->other, 0, sizeof(sw->other));
        sw->other.tid = AGG_ALL;
        sw->nr_other_readies = 0;
        sw->other_blocked_nr = sw->other_blocked_ns = 0;
        memset(&sw->caps, 0, sizeof(sw->caps));
        memset(sw->waits, 0, sizeof(sw->waits));
        for (uint32_t c = 0; c < sw->nr_cpus; c++) {
                struct cpu *cs = &sw->cpus[c];
                cs->nr_switches = cs->busy_ns = cs->idle_ns = 0;
                memset(cs->cstate_ns, 0, sizeof(cs->cstate_ns));
        }
}

/* switches_zero of one thread: retired entries go; the others keep their name, pid and the
   wait under way (from now on). */
static bool thread_zero(void *entry, void *ctx)
{
        struct thread *t = entry;
        const struct switches *sw = ctx;
        if (t->serial != 0)
                return true;
        switches_thread_clear_counts(t);
        if (t->is_waiting && t->out_ns < sw->last_ns)
                t->out_ns = sw->last_ns;
        return false;
}

void switches_zero(struct switches *sw)
{
        sw->floor_ns = sw->last_ns;
        sw->wall_kept_ns = 0;
        sw->wall_mark_ns = INT64_MIN;
        agg_table_remove_if(sw->threads, thread_zero, sw);
        agg_table_reset(sw->readiers);
        agg_table_reset(sw->blockers);
        agg_table_reset(sw->thread_cpus);
        switches_zero_totals(sw);
        for (uint32_t c = 0; c < sw->nr_cpus; c++) {
                struct cpu *cs = &sw->cpus[c];
                cs->cur_tc = NULL;
                if (cs->has_current && cs->since_ns < sw->last_ns)
                        cs->since_ns = cs->in_ns = sw->last_ns;
        }
        sw->nr_switches = sw->nr_readies = 0;
}

/* switches_reset, with the CPUs' states zeroed where is_cpus_used: a new one's are zero from
   calloc, and writing them again faulted in all their pages (1,024 CPUs, 53 pages) at every
   start, for a trace of a few CPUs. */
static void reset(struct switches *sw, bool is_cpus_used)
{
        agg_table_reset(sw->threads);
        agg_table_reset(sw->processes);
        agg_table_reset(sw->readiers);
        agg_table_reset(sw->blockers);
        agg_table_reset(sw->thread_cpus);
        switches_zero_totals(sw);
        if (is_cpus_used)
                memset(sw->cpus, 0, MAX_CPUS * sizeof(*sw->cpus));
        sw->nr_cpus = 0;
        sw->nr_pend_readies = 0;
        sw->nr_switches = sw->nr_readies = 0;
        sw->next_serial = 1;
        sw->next_gen = 1;
        sw->floor_ns = INT64_MIN;
        sw->wall_kept_ns = 0;
        sw->wall_mark_ns = INT64_MIN;
        sw->is_stopped = false;
        sw->last_ns = 0;
        sw->first_ns = INT64_MAX;
}

void switches_reset(struct switches *sw)
{
        reset(sw, true);
}

int64_t switches_wall_ns(const struct switches *sw)
{
        int64_t from = sw->wall_mark_ns != INT64_MIN ? sw->wall_mark_ns
                       : sw->floor_ns != INT64_MIN   ? sw->floor_ns
                                                     : sw->first_ns;
        /* a replay's time window: the part of it the trace covers */
        int64_t open = from != INT64_MAX && sw->last_ns > from
                               ? (int64_t)agg_filter_clip_ns(&sw->filter, from, sw->last_ns)
                               : 0;
        return sw->wall_kept_ns + open;
}

bool switches_is_stopped(const struct switches *sw)
{
        return sw->is_stopped;
}

void switches_set_settings(struct switches *sw, const struct agg_settings *settings)
{
        sw->settings = *settings;
}

int64_t switches_last_time_ns(const struct switches *sw)
{
        return sw->last_ns;
}

uint64_t switches_nr_switches(const struct switches *sw)
{
        return sw->nr_switches;
}

uint64_t switches_nr_readies(const struct switches *sw)
{
        return sw->nr_readies;
}

void switches_caps(const struct switches *sw, struct switches_caps *out)
{
        *out = sw->caps;
}

static void add_sat(uint64_t *v, int64_t d)
{
        if (d >= 0)
                *v += (uint64_t)d;
        else
                *v = *v > (uint64_t)-d ? *v - (uint64_t)-d : 0;
}

/* Counts from the latest zeroing on, in the filter's time range. */
static bool is_counted_time(const struct switches *sw, int64_t ns)
{
        return ns >= sw->floor_ns && agg_filter_has_time(&sw->filter, ns);
}

/* The time of [from_ns, to_ns) that counts (from the zeroing on, in the filter's range);
   negative, that of [to_ns, from_ns) when to_ns is before from_ns: time credited ahead of
   events that came late, to take back. */
static int64_t span_ns(const struct switches *sw, int64_t from_ns, int64_t to_ns)
{
        if (from_ns < sw->floor_ns)
                from_ns = sw->floor_ns;
        if (to_ns < sw->floor_ns)
                to_ns = sw->floor_ns;
        if (to_ns >= from_ns)
                return (int64_t)agg_filter_clip_ns(&sw->filter, from_ns, to_ns);
        return -(int64_t)agg_filter_clip_ns(&sw->filter, to_ns, from_ns);
}

void switches_wait_add(struct thread *t, uint8_t state, uint8_t reason, int64_t nr, int64_t ns)
{
        for (uint32_t i = 0; i < t->nr_waits; i++) {
                struct wait_bucket *w = &t->waits[i];
                if (w->state == state && w->reason == reason) {
                        add_sat(&w->nr, nr);
                        add_sat(&w->ns, ns);
                        return;
                }
        }
        if (t->nr_waits < SWITCHES_MAX_WAITS && nr >= 0 && ns >= 0) {
                t->waits[t->nr_waits++] =
                        (struct wait_bucket){state, reason, (uint64_t)nr, (uint64_t)ns};
                return;
        }
        add_sat(&t->other_wait_nr, nr);
        add_sat(&t->other_wait_ns, ns);
}

/* A stack frame as a key keeps it, in one word: a user address placed at event time in the
   module mapped there then (bits 63-62 01, the module in 61-40, the offset in 39-0), any other
   address as it is (placed when the rows are asked for: kernel images do not come and go; a
   user address no module held yet may have one by then). */
#define TOKEN_PLACED   (1ull << 62)
#define TOKEN_REL_BITS 40
#define TOKEN_MAX_MOD  ((1u << 22) - 1)

static uint64_t frame_token(struct switches *sw, uint32_t pid, uint64_t addr)
{
        if (sym_is_kernel_address(addr))
                return addr;
        struct sym_loc loc = sym_locate(sw->store, pid, addr);
        if (!loc.module || loc.module > TOKEN_MAX_MOD || loc.rel >> TOKEN_REL_BITS)
                return addr;
        return TOKEN_PLACED | (uint64_t)loc.module << TOKEN_REL_BITS | loc.rel;
}

struct sym_loc switches_token_loc(struct switches *sw, uint32_t pid, uint64_t token)
{
        if (token >> 62 == 1)
                return (struct sym_loc){(uint32_t)(token >> TOKEN_REL_BITS) & TOKEN_MAX_MOD,
                                        token & ((1ull << TOKEN_REL_BITS) - 1)};
        return sym_locate(sw->store, pid, token);
}

/* Whether b is the blockers' entry of (t's tid, the first n of frames): its key's frames past
   n are zero, as every key's are. */
static bool blocker_is(const struct switches *sw, const struct thread *t, const struct blocker *b,
                       uint32_t n, const uint64_t *frames)
{
        return b && t->blocker_memo_epoch == agg_table_epoch(sw->blockers) && b->tid == t->tid &&
               b->nr_frames == n && memcmp(b->frames, frames, n * sizeof(*frames)) == 0;
}

/* nr waits and ns of off-CPU time of t where it blocked (frames), either taken back when
   negative. */
static void blocker_add(struct switches *sw, struct thread *t, uint32_t nr_frames,
                        const uint64_t *frames, int64_t nr, int64_t ns)
{
        uint32_t n = nr_frames < SITE_FRAMES ? nr_frames : SITE_FRAMES;
        struct blocker *b = t->blocker_memo;
        if (!blocker_is(sw, t, b, n, frames)) {
                struct blocker k;
                memset(&k, 0, sizeof(k));
                k.tid = t->tid;
                k.nr_frames = n;
                memcpy(k.frames, frames, n * sizeof(*frames));
                b = nr > 0 || ns > 0 ? agg_table_get(sw->blockers, &k, NULL)
                                     : agg_table_find(sw->blockers, &k);
                t->blocker_memo = b;
                t->blocker_memo_epoch = agg_table_epoch(sw->blockers);
        }
        if (b) {
                add_sat(&b->nr_waits, nr);
                add_sat(&b->off_cpu_ns, ns);
        } else if (nr > 0 || ns > 0) {
                sw->caps.nr_no_room++;
        }
}

/* nr waits and ns of off-CPU time of t in (state, reason), either taken back when negative;
   has_block: in the wait under way, where it blocked (t->block) counts them too. */
static void wait_credit(struct switches *sw, struct thread *t, uint8_t state, uint8_t reason,
                        int64_t nr, int64_t ns, bool has_block)
{
        if (!ns && !nr)
                return;
        if (has_block && t->nr_block)
                blocker_add(sw, t, t->nr_block, t->block, nr, ns);
        add_sat(&t->off_cpu_ns, ns);
        switches_wait_add(t, state, reason, nr, ns);
        struct wait_total *w = &sw->waits[state % NR_STATES][reason % NR_REASONS];
        add_sat(&w->nr, nr);
        add_sat(&w->ns, ns);
}

void switches_credit_off_cpu(struct switches *sw, struct thread *t, int64_t from_ns, int64_t to_ns,
                             bool is_end)
{
        if (!switches_thread_passes(sw, t))
                return;
        int64_t ns = span_ns(sw, from_ns, to_ns);
        int64_t nr = is_end && is_counted_time(sw, to_ns) ? 1 : 0;
        t->cur_wait_ns += ns;
        if (is_end) {
                t->ended_wait_ns = t->cur_wait_ns;
                t->is_ended_wait_counted = nr != 0;
        }
        wait_credit(sw, t, t->out_state, t->out_reason, nr, ns, true);
}

static struct thread_cpu *thread_cpu_get(struct switches *sw, struct thread *t, uint32_t cpu)
{
        struct thread_cpu *tc = t->tc_memo;
        uint32_t epoch = agg_table_epoch(sw->thread_cpus);
        if (tc && t->tc_memo_epoch == epoch && tc->tid == t->tid && tc->cpu == cpu)
                return tc;
        struct thread_cpu k = {t->tid, cpu, 0, 0};
        tc = agg_table_get(sw->thread_cpus, &k, NULL);
        if (!tc)
                sw->caps.nr_no_room++;
        t->tc_memo = tc;
        t->tc_memo_epoch = agg_table_epoch(sw->thread_cpus);
        return tc;
}

void switches_credit_on_cpu(struct switches *sw, uint32_t cpu, uint32_t tid, int64_t from_ns,
                            int64_t to_ns)
{
        int64_t ns = span_ns(sw, from_ns, to_ns);
        if (!ns)
                return;
        struct cpu *c = &sw->cpus[cpu];
        if (tid == 0) {
                if (agg_filter_has_pid(&sw->filter, 0) && agg_filter_has_tid(&sw->filter, 0))
                        add_sat(&c->idle_ns, ns);
                return;
        }
        struct thread *t = switches_thread_find(sw, tid);
        if (t && !switches_thread_passes(sw, t))
                return;
        if (!t && (sw->filter.nr_pids || sw->filter.nr_tids))
                return; /* not kept, so not known to pass */
        add_sat(&c->busy_ns, ns);
        if (!t) {
                add_sat(&sw->other.on_cpu_ns, ns);
                return;
        }
        add_sat(&t->on_cpu_ns, ns);
        struct thread_cpu *tc = switches_cpu_thread_cpu(sw, c, tid, cpu);
        if (!tc)
                tc = ns > 0 ? thread_cpu_get(sw, t, cpu)
                            : agg_table_find(sw->thread_cpus, &(struct thread_cpu){tid, cpu, 0, 0});
        if (tc)
                add_sat(&tc->on_cpu_ns, ns);
}

/* ---- events ---- */

/* The PMC counters a CSwitch carries are the CPU's running counts: what they counted since the
   CPU's previous CSwitch is the leaving thread's timeslice (WPA's per-switch counter deltas). */
static void credit_pmc(struct switches *sw, struct thread *o, const struct cpu *c,
                       const struct kevent *ev)
{
        uint32_t n = ev->nr_pmc < KEV_MAX_PMC ? ev->nr_pmc : KEV_MAX_PMC;
        if (!n || c->nr_last_pmc != n || !switches_thread_passes(sw, o) ||
            !is_counted_time(sw, ev->time_ns))
                return;
        if (n > sw->nr_pmc)
                sw->nr_pmc = n;
        for (uint32_t i = 0; i < n; i++)
                if (ev->pmc[i] >= c->last_pmc[i]) /* a counter that went back was reset */
                        o->pmc[i] += ev->pmc[i] - c->last_pmc[i];
}

/* 1 when the wait that ends at a mark counts as a wait (a switch-in that counts ends it). */
static int64_t mark_ends_wait(const struct switches *sw, const struct switch_mark *m)
{
        return m && !m->is_out && is_counted_time(sw, m->ns) ? 1 : 0;
}

/* A switch of t at ev's time: out (is_out, with the state and reason it leaves in) or in. The
   switch takes its place among t's latest ones (SWITCH_MARKS), and each switch-out's wait runs
   to the switch that follows it: for a switch in time order, the wait under way ends or one
   begins; for one that came late, the wait before it ends there now, and a switch-out begins
   a wait that runs to the switch after it. A switch older than all of those kept is too late
   to place: it only counts as a switch. */
static void thread_switch(struct switches *sw, struct thread *t, const struct kevent *ev,
                          bool is_out)
{
        int64_t ns = ev->time_ns;
        uint32_t n = t->nr_marks;
        if (n == SWITCH_MARKS && ns < t->marks[0].ns)
                return;
        uint32_t i = n;
        while (i > 0 && t->marks[i - 1].ns > ns)
                i--;
        const struct switch_mark *prev = i ? &t->marks[i - 1] : NULL;
        const struct switch_mark *next = i < n ? &t->marks[i] : NULL;
        /* its last switch-out, after its End: no wait follows, for the wait before it an end */
        struct switch_mark m = {ns, is_out && !(t->is_ended && ns >= t->end_ns),
                                ev->cswitch.old_state, ev->cswitch.old_wait_reason};
        bool passes = switches_thread_passes(sw, t);
        if (next) {
                /* late: prev's wait ran to next, it ends here now */
                if (prev && prev->is_out && passes)
                        wait_credit(sw, t, prev->state, prev->reason,
                                    mark_ends_wait(sw, &m) - mark_ends_wait(sw, next),
                                    -span_ns(sw, ns, next->ns), false);
                if (m.is_out && passes)
                        wait_credit(sw, t, m.state, m.reason, mark_ends_wait(sw, next),
                                    span_ns(sw, ns, next->ns), false);
        } else {
                if (t->is_waiting) {
                        /* the wait under way ends here (at a switch-out: its switch-in is
                           still to come, and will end it where it belongs), or at the
                           thread's End */
                        t->has_ended_wait = !m.is_out;
                        t->ended_wait_ns = 0;
                        t->is_ended_wait_counted = false;
                        switches_credit_off_cpu(sw, t, t->out_ns,
                                                t->is_ended && t->end_ns < ns ? t->end_ns : ns,
                                                !m.is_out);
                        t->is_waiting = false;
                } else if (!m.is_out) {
                        t->has_ended_wait = false;
                        t->ended_wait_ns = 0;
                        t->is_ended_wait_counted = false;
                }
                if (m.is_out) {
                        t->is_waiting = true;
                        sw->has_waited = true;
                        t->out_ts = ev->timestamp;
                        t->has_ended_wait = false;
                        t->out_ns = ns;
                        t->out_state = m.state;
                        t->out_reason = m.reason;
                } else if (!is_out) {
                        t->in_ts = ev->timestamp;
                }
                t->nr_block = 0;
                t->cur_wait_ns = 0;
        }
        if (n == SWITCH_MARKS) { /* the oldest goes (i > 0: m is not older) */
                /* through a copy of a known size, moved inline: a memmove of one, at every
                   switch of a thread that has switched SWITCH_MARKS times, is a call */
                struct switch_mark kept[SWITCH_MARKS - 1];
                memcpy(kept, &t->marks[1], sizeof(kept));
                memcpy(&t->marks[0], kept, sizeof(kept));
                i--;
                n--;
        }
        if (i < n) /* a switch that came late; in time order, m goes last */
                memmove(&t->marks[i + 1], &t->marks[i], (n - i) * sizeof(t->marks[0]));
        t->marks[i] = m;
        t->nr_marks = n + 1;
}

static void switches_resume(struct switches *sw);

static void cswitch(struct switches *sw, const struct kevent *ev)
{
        int64_t t = ev->time_ns;
        sw->has_switched = true;
        if (sw->is_stopped && t > sw->stopped_ns)
                switches_resume(sw); /* switches again, their group mask still to come */
        uint32_t cpu = ev->cpu;
        bool has_cpu = cpu < MAX_CPUS;
        uint32_t old_tid = ev->cswitch.old_tid, new_tid = ev->cswitch.new_tid;

        /* the thread leaving: waits from now (its entry first, so its time below finds it) */
        struct cpu *c = has_cpu ? &sw->cpus[cpu] : NULL;
        if (old_tid != 0 && old_tid != new_tid) {
                struct thread *o = switches_thread_get(sw, old_tid, ev->cswitch.old_pid);
                if (o) {
                        switches_thread_seen(o, t);
                        if (c)
                                credit_pmc(sw, o, c, ev);
                        thread_switch(sw, o, ev, true);
                }
        }
        if (c) {
                if (cpu >= sw->nr_cpus)
                        sw->nr_cpus = cpu + 1;
                /* the counters' values now: the next switch's timeslice starts here */
                c->nr_last_pmc = ev->nr_pmc < KEV_MAX_PMC ? ev->nr_pmc : KEV_MAX_PMC;
                memcpy(c->last_pmc, ev->pmc, c->nr_last_pmc * sizeof(*ev->pmc));
                if (c->has_current && c->tid == old_tid) {
                        /* a CPU's events come in order, but a refresh may have credited its
                           thread past t: switches_credit_on_cpu takes that back */
                        switches_credit_on_cpu(sw, cpu, old_tid, c->since_ns, t);
                        int64_t idle = span_ns(sw, c->in_ns, t);
                        if (old_tid == 0 && idle > 0 && agg_filter_has_pid(&sw->filter, 0) &&
                            agg_filter_has_tid(&sw->filter, 0)) {
                                uint32_t cs = ev->cswitch.previous_cstate;
                                c->has_cstates |= cs > 0;
                                c->cstate_ns[cs < SWITCHES_NR_CSTATES ? cs
                                                                      : SWITCHES_NR_CSTATES - 1] +=
                                        (uint64_t)idle;
                        }
                }
                c->has_current = true;
                c->tid = new_tid;
                c->since_ns = c->in_ns = t;
        }
        bool is_counted = is_counted_time(sw, t);
        if (new_tid == 0) {
                is_counted = is_counted && agg_filter_has_pid(&sw->filter, 0) &&
                             agg_filter_has_tid(&sw->filter, 0);
                if (c)
                        c->cur_tc = NULL;
        } else {
                struct thread *n = switches_thread_get(sw, new_tid, ev->cswitch.new_pid);
                if (n) {
                        switches_thread_seen(n, t);
                        bool is_latest = !n->nr_marks || n->marks[n->nr_marks - 1].ns <= t;
                        thread_switch(sw, n, ev, false);
                        is_counted = is_counted && switches_thread_passes(sw, n);
                        if (is_counted) {
                                n->nr_switches++;
                                if (has_cpu && is_latest)
                                        n->last_cpu_1 = cpu + 1;
                        }
                } else {
                        is_counted = is_counted && !sw->filter.nr_pids && !sw->filter.nr_tids;
                        if (is_counted) {
                                sw->other.nr_switches++;
                                sw->caps.nr_no_room++;
                        }
                }
                struct thread_cpu *tc = NULL;
                if (n && is_counted && c) {
                        tc = thread_cpu_get(sw, n, cpu);
                        if (tc)
                                tc->nr_switches++;
                }
                if (c) {
                        c->cur_tc = tc;
                        c->cur_tc_epoch = agg_table_epoch(sw->thread_cpus);
                }
        }
        if (is_counted) {
                sw->nr_switches++;
                if (has_cpu)
                        sw->cpus[cpu].nr_switches++;
        }
}

/* Counts a readying; ev is its stack (NULL: none came). */
static void readier_count(struct switches *sw, const struct pending *p, const struct kevent *ev)
{
        struct readier k;
        memset(&k, 0, sizeof(k));
        k.tid = p->tid;
        k.readying_tid = p->readying_tid;
        k.readying_pid = p->readying_pid;
        for (uint32_t i = 0; ev && i < ev->stack.nr_frames && i < READIER_FRAMES; i++) {
                k.where[i] = frame_token(sw, ev->stack.pid, ev->stack.frames[i]);
                k.nr_where = i + 1;
        }
        struct readier_memo *m = &sw->readier_memo[k.tid % READIER_MEMO_SLOTS];
        struct readier *r = m->r;
        if (!r || m->epoch != agg_table_epoch(sw->readiers) ||
            memcmp(r, &k, READIER_KEY_SIZE) != 0) {
                r = agg_table_get(sw->readiers, &k, NULL);
                *m = (struct readier_memo){r, agg_table_epoch(sw->readiers)};
        }
        if (r) {
                r->count++;
        } else {
                sw->nr_other_readies++;
                sw->caps.nr_no_room++;
        }
}

/* A ReadyThread whose stack did not come: counted without a place. */
static void pending_flush(struct switches *sw, struct pending *p)
{
        if (p->has)
                readier_count(sw, p, NULL);
        p->has = false;
}

void switches_pending_flush_all(struct switches *sw)
{
        for (uint32_t c = 0; c < sw->nr_cpus; c++)
                pending_flush(sw, &sw->cpus[c].pend);
        sw->nr_pend_readies = 0;
}

static void ready_thread(struct switches *sw, const struct kevent *ev)
{
        uint32_t tid = ev->ready_thread.tid;
        struct thread *t = switches_thread_get(sw, tid, tid == ev->tid ? ev->pid : UNKNOWN_PID);
        if (t)
                switches_thread_seen(t, ev->time_ns);
        uint32_t pid = t ? switches_thread_pid(t) : (tid == ev->tid ? ev->pid : UNKNOWN_PID);
        if (!agg_filter_pass(&sw->filter, pid, tid, ev->time_ns) || ev->time_ns < sw->floor_ns)
                return;
        sw->nr_readies++;
        if (t) {
                t->nr_readied++;
        } else {
                sw->other.nr_readied++;
                sw->caps.nr_no_room++;
        }
        struct pending p = {ev->timestamp, tid, ev->ready_thread.readying_tid,
                            ev->ready_thread.readying_pid, true};
        if (ev->cpu >= MAX_CPUS) {
                pending_flush(sw, &p);
                return;
        }
        if (ev->cpu >= sw->nr_cpus)
                sw->nr_cpus = ev->cpu + 1;
        struct pending *cp = &sw->cpus[ev->cpu].pend;
        sw->nr_pend_readies -= cp->has;
        pending_flush(sw, cp);
        *cp = p;
        sw->nr_pend_readies++;
}

static bool has_prefix(const char *name, const char *const *prefixes, size_t nr)
{
        for (size_t i = 0; i < nr; i++)
                if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
                        return true;
        return false;
}

bool switches_is_wakeup_function(const char *name)
{
        static const char *const prefixes[] = {"try_to_wake_up",
                                               "ttwu_",
                                               "wake_up_",
                                               "__wake_up",
                                               "default_wake_function",
                                               "autoremove_wake_function",
                                               "woken_wake_function",
                                               "wake_q_",
                                               "swake_up",
                                               "__swake_up",
                                               "rcuwait_wake_up",
                                               "pollwake",
                                               "ep_autoremove_wake_function",
                                               "futex_wake_mark",
                                               "KiReadyThread",
                                               "KiDeferredReadyThread",
                                               "KiExitDispatcher",
                                               "KiProcessThreadWaitList",
                                               "KiSignalSynchronizationObject",
                                               "KiUnwaitThread",
                                               "KiTryUnwaitThread",
                                               "KiWakeQueueWaiter"};
        return has_prefix(name, prefixes, sizeof(prefixes) / sizeof(prefixes[0]));
}

bool switches_is_scheduler_function(const char *name)
{
        static const char *const prefixes[] = {
                "__schedule",         "schedule",      "preempt_schedule", "io_schedule",
                "__cond_resched",     "_cond_resched", "KiSwapContext",    "KiSwapThread",
                "KiCommitThreadWait", "SwapContext"};
        return has_prefix(name, prefixes, sizeof(prefixes) / sizeof(prefixes[0]));
}

/* A stack that came with a thread's switch: where it blocked. With its switch-out (the
   stack's thread is the one leaving, as Linux records it), the wait under way counts there as
   it goes on; with its switch-in (the thread arriving, as Windows records it), the wait that
   just ended counts there at once. */
static void block_site(struct switches *sw, const struct kevent *ev)
{
        if (!ev->stack.nr_frames || !ev->stack.tid)
                return;
        struct thread *t = switches_thread_find(sw, ev->stack.tid);
        if (!t)
                return;
        bool is_out = t->is_waiting && t->out_ts == ev->stack.event_timestamp && !t->nr_block;
        bool is_in = !t->is_waiting && t->has_ended_wait && t->in_ts == ev->stack.event_timestamp;
        if (!is_out && !is_in)
                return;
        uint64_t frames[SITE_FRAMES] = {0};
        uint32_t n = 0;
        for (; n < ev->stack.nr_frames && n < SITE_FRAMES; n++)
                frames[n] = frame_token(sw, ev->stack.pid, ev->stack.frames[n]);
        if (is_out) {
                t->nr_block = n;
                memcpy(t->block, frames, sizeof(frames));
                if (t->cur_wait_ns) /* a refresh came between the switch and its stack */
                        blocker_add(sw, t, n, frames, 0, t->cur_wait_ns);
        } else {
                t->has_ended_wait = false;
                if (switches_thread_passes(sw, t) && (t->ended_wait_ns || t->is_ended_wait_counted))
                        blocker_add(sw, t, n, frames, t->is_ended_wait_counted ? 1 : 0,
                                    t->ended_wait_ns);
        }
}

static void stack(struct switches *sw, const struct kevent *ev)
{
        /* the ReadyThread it belongs to: same timestamp, on its CPU or (rarely) another */
        struct pending *p = NULL;
        if (!sw->nr_pend_readies) {
                /* no ReadyThread waits: a CSwitch's, or a sample's */
                if (sw->has_switched)
                        block_site(sw, ev);
                return;
        }
        if (ev->cpu < sw->nr_cpus && sw->cpus[ev->cpu].pend.has &&
            sw->cpus[ev->cpu].pend.timestamp == ev->stack.event_timestamp)
                p = &sw->cpus[ev->cpu].pend;
        for (uint32_t c = 0; c < sw->nr_cpus && !p; c++)
                if (sw->cpus[c].pend.has && sw->cpus[c].pend.timestamp == ev->stack.event_timestamp)
                        p = &sw->cpus[c].pend;
        if (!p) {
                block_site(sw, ev); /* a CSwitch's, or a sample's (nothing) */
                return;
        }
        readier_count(sw, p, ev);
        p->has = false;
        sw->nr_pend_readies--;
}

/* A Start of tid at ns for the entry t: the start of another thread with the tid (t's has
   ended before it, or was switching before it without an End) rather than t's own come late (a
   live session's CPU buffers come one by one: the Start of a fork comes with the parent's CPU,
   the child's switches and End with its own). */
static bool is_next_thread(const struct thread *t, int64_t ns)
{
        if (t->is_ended)
                return ns > t->end_ns;
        return t->has_first && ns > t->first_ns;
}

/* t ended at ns: a wait under way (its switch-in still to come) counts no further. */
static void thread_end(struct switches *sw, struct thread *t, int64_t ns)
{
        t->is_ended = true;
        t->end_ns = ns;
        if (t->is_waiting && t->out_ns > ns) {
                switches_credit_off_cpu(sw, t, t->out_ns, ns,
                                        false); /* credited ahead: taken back */
                t->out_ns = ns;
        }
        switches_thread_bind(sw, t, ns);
}

static void thread_event(struct switches *sw, const struct kevent *ev)
{
        uint32_t tid = ev->thread.tid, pid = ev->thread.pid;
        if (tid == 0)
                return;
        enum kevent_phase ph = ev->thread.phase;
        int64_t ns = ev->time_ns;
        struct thread *t = switches_thread_get(sw, tid, pid);
        if (!t)
                return;
        bool is_start = ph == KEV_PHASE_START || ph == KEV_PHASE_DC_START;
        /* a rundown's DCStart may come after the thread's first switches: only an End says
           that the tid is another thread's */
        if (is_start &&
            (ph == KEV_PHASE_START ? is_next_thread(t, ns) : t->is_ended && ns > t->end_ns)) {
                t = switches_thread_retire(sw, t);
                t->pid = pid;
                t->has_pid = true;
        }
        if (ph == KEV_PHASE_END && t->has_start && ns < t->start_ns)
                return; /* the End of the tid's thread before this one, come late */
        switches_name_set(&t->name, ev->thread.name, ns, !is_start);
        if (tid == pid)
                switches_leader_name(sw, pid, ev->thread.name, ns, !is_start);
        if (is_start) {
                if (!t->has_start || ns < t->start_ns) {
                        t->has_start = true;
                        t->start_ns = ns;
                }
                switches_thread_bind(sw, t, ns);
        } else if (ph == KEV_PHASE_END) {
                thread_end(sw, t, ns);
        }
}

/* A rename (Linux: COMM; Windows: ThreadSetName). */
static void thread_name_event(struct switches *sw, const struct kevent *ev)
{
        uint32_t tid = ev->thread_name.tid, pid = ev->thread_name.pid;
        struct thread *t = switches_thread_get(sw, tid, pid);
        if (t) {
                switches_name_set(&t->name, ev->thread_name.name, ev->time_ns, false);
                switches_thread_bind(sw, t, ev->time_ns);
        }
        if (tid && tid == pid)
                switches_leader_name(sw, pid, ev->thread_name.name, ev->time_ns, false);
}

/* Start, DCStart (an exec is a Start of a process already known: its new name), End, DCEnd. */
static void process_event(struct switches *sw, const struct kevent *ev)
{
        struct process *p = switches_process_get(sw, ev->process.pid);
        if (!p)
                return;
        enum kevent_phase ph = ev->process.phase;
        int64_t ns = ev->time_ns;
        if (ph == KEV_PHASE_START || ph == KEV_PHASE_DC_START) {
                if (switches_process_is_over(p, ns))
                        p = switches_process_retire(sw, p);
                switches_name_set(&p->name, ev->process.image_name, ns, false);
                if (!p->has_start || ns > p->start_ns) {
                        p->has_start = true;
                        p->start_ns = ns;
                }
                return;
        }
        if ((ph == KEV_PHASE_END || ph == KEV_PHASE_DEFUNCT) && p->has_start && ns < p->start_ns)
                return; /* an earlier process's End come late, or one before an exec: not the end */
        switches_name_set(&p->name, ev->process.image_name, ns, true);
        if (ph == KEV_PHASE_END || ph == KEV_PHASE_DEFUNCT) {
                p->is_ended = true;
                p->end_ns = ns;
        }
}

/* Whether group masks have the session send context switches (ETL-FORMAT.md 3.1: the
   CSWITCH flag, or the context-switch groups). */
static bool masks_have_cswitch(const uint32_t *m)
{
        return (m[0] & EVENT_TRACE_FLAG_CSWITCH) ||
               (m[PERF_GET_MASK_INDEX(PERF_CONTEXT_SWITCH)] &
                PERF_GET_MASK_GROUP(PERF_CONTEXT_SWITCH)) ||
               (m[PERF_GET_MASK_INDEX(PERF_COMPACT_CSWITCH)] &
                PERF_GET_MASK_GROUP(PERF_COMPACT_CSWITCH));
}

/* Switches again: what ran or waited meanwhile is unknown, each starts at its next switch. */
static void switches_resume(struct switches *sw)
{
        sw->is_stopped = false;
        for (uint32_t c = 0; c < sw->nr_cpus; c++) {
                sw->cpus[c].has_current = false;
                sw->cpus[c].cur_tc = NULL;
        }
        for (uint32_t i = 0; i < agg_table_capacity(sw->threads); i++) {
                struct thread *t = agg_table_slot(sw->threads, i);
                if (t)
                        t->is_waiting = false;
        }
}

/* CSWITCH off: no wait or run time is credited past now (credit_open); on: switches_resume. */
static void group_mask_event(struct switches *sw, const struct kevent *ev)
{
        if (ev->group_mask.is_previous)
                return;
        bool is_on = masks_have_cswitch(ev->group_mask.masks);
        if (!is_on && !sw->is_stopped) {
                sw->is_stopped = true;
                sw->stopped_ns = ev->time_ns;
        } else if (is_on && sw->is_stopped) {
                switches_resume(sw);
        }
}

void switches_event(struct switches *sw, const struct kevent *ev)
{
        switch (ev->type) {
        case KEV_CSWITCH: cswitch(sw, ev); break;
        case KEV_READY_THREAD: ready_thread(sw, ev); break;
        case KEV_STACK: stack(sw, ev); break;
        case KEV_PMC_CONFIG:
                for (uint32_t i = 0; i < ev->pmc_config.nr_counters && i < KEV_MAX_PMC; i++)
                        switches_copy_name(sw->pmc_names[i], ev->pmc_config.names[i]);
                break;
        case KEV_THREAD: thread_event(sw, ev); break;
        case KEV_THREAD_NAME: thread_name_event(sw, ev); break;
        case KEV_PROCESS: process_event(sw, ev); break;
        case KEV_GROUP_MASK: group_mask_event(sw, ev); break;
        default: break;
        }
        /* every event says how far time has come: refresh credits open intervals up to it */
        if (ev->time_ns > sw->last_ns)
                sw->last_ns = ev->time_ns;
        if (ev->time_ns < sw->first_ns && ev->time_ns >= 0)
                sw->first_ns = ev->time_ns;
}
