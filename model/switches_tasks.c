/* SPDX-License-Identifier: MIT */
/* switches_tasks.c: owns the context switches' thread and process identity: threads and
   processes by id, their timed names, and pid and tid reuse. */
#include "model_util.h"
#include "switches_impl.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- threads ---- */

/* The entry last found for tid, when it has not moved since; else NULL. */
static struct thread *memo_thread(const struct switches *sw, uint32_t tid)
{
        const struct tid_memo *m = &sw->tid_memo[tid & (TID_MEMO_SLOTS - 1)];
        return m->t && m->tid == tid && m->epoch == agg_table_epoch(sw->threads) ? m->t : NULL;
}

static void memo_put(struct switches *sw, uint32_t tid, struct thread *t)
{
        sw->tid_memo[tid & (TID_MEMO_SLOTS - 1)] =
                (struct tid_memo){tid, agg_table_epoch(sw->threads), t};
}

struct thread *switches_thread_find(struct switches *sw, uint32_t tid)
{
        struct thread *t = memo_thread(sw, tid);
        if (t)
                return t;
        struct thread_key k = {tid, 0};
        t = agg_table_find(sw->threads, &k);
        if (t)
                memo_put(sw, tid, t);
        return t;
}

bool switches_thread_has_counts(const struct thread *t)
{
        return t->nr_switches || t->nr_readied || t->on_cpu_ns || t->off_cpu_ns;
}

/* ---- names ---- */

void switches_name_set(struct timed_name *n, const char *name, int64_t ns, bool is_weak)
{
        if (!name || !name[0])
                return;
        if (is_weak) {
                if (!n->name[0])
                        switches_copy_name(n->name, name);
                return;
        }
        if (n->is_timed && ns < n->name_ns)
                return; /* a newer name came first */
        switches_copy_name(n->name, name);
        n->is_timed = true;
        n->name_ns = ns;
}

struct process *switches_process_get(struct switches *sw, uint32_t pid)
{
        struct process_key k = {pid, 0};
        bool is_new = false;
        struct process *p = agg_table_get(sw->processes, &k, &is_new);
        if (p && is_new)
                p->gen = sw->next_gen++;
        return p;
}

struct process *switches_process_find(const struct switches *sw, uint32_t pid)
{
        struct process_key k = {pid, 0};
        return agg_table_find(sw->processes, &k);
}

struct process *switches_process_retire(struct switches *sw, struct process *p)
{
        struct process old = *p;
        struct process_key k = {p->pid, 0};
        old.serial = old.gen;
        if (old.name.name[0]) {
                struct process *a = agg_table_get(sw->processes, &old, NULL);
                if (a)
                        *a = old;
                p = agg_table_find(sw->processes, &k);
        }
        memset(&p->gen, 0, sizeof(*p) - PROCESS_KEY_SIZE);
        p->gen = sw->next_gen++;
        return p;
}

bool switches_process_is_over(const struct process *p, int64_t ns)
{
        return p->is_ended && ns > p->end_ns;
}

void switches_leader_name(struct switches *sw, uint32_t pid, const char *name, int64_t ns,
                          bool is_weak)
{
        struct process *p = switches_process_get(sw, pid);
        if (p && !switches_process_is_over(p, ns))
                switches_name_set(&p->name, name, ns, is_weak);
}

void switches_thread_bind(struct switches *sw, struct thread *t, int64_t ns)
{
        if (t->process_gen || !t->has_pid)
                return;
        const struct process *p = switches_process_find(sw, t->pid);
        if (p && !switches_process_is_over(p, ns))
                t->process_gen = p->gen;
}

const struct process *switches_thread_process(const struct switches *sw, const struct thread *t)
{
        if (!t->has_pid)
                return NULL;
        const struct process *p = switches_process_find(sw, t->pid);
        if (!t->process_gen || (p && p->gen == t->process_gen))
                return p;
        struct process_key k = {t->pid, t->process_gen};
        return agg_table_find(sw->processes, &k);
}

struct thread *switches_thread_retire(struct switches *sw, struct thread *t)
{
        switches_thread_bind(sw, t, sw->last_ns);
        struct thread old = *t;
        struct thread_key k = {t->tid, 0};
        memset(&t->pid, 0, sizeof(*t) - THREAD_KEY_SIZE);
        if (!switches_thread_has_counts(&old))
                return t;
        old.serial = sw->next_serial++;
        if (!old.is_ended)
                old.end_ns = sw->last_ns;
        old.is_ended = true;
        old.is_waiting = false;
        struct thread *a = agg_table_get(sw->threads, &old, NULL);
        if (!a)
                return t; /* no room: the counts go */
        *a = old;
        return agg_table_find(sw->threads, &k);
}

struct thread_cpu *switches_cpu_thread_cpu(const struct switches *sw, const struct cpu *c,
                                           uint32_t tid, uint32_t cpu)
{
        if (c->cur_tc && c->cur_tc_epoch == agg_table_epoch(sw->thread_cpus) &&
            c->cur_tc->tid == tid && c->cur_tc->cpu == cpu)
                return c->cur_tc;
        return NULL;
}

struct thread *switches_thread_get(struct switches *sw, uint32_t tid, uint32_t pid)
{
        struct thread_key k = {tid, 0};
        bool is_new = false;
        struct thread *t = memo_thread(sw, tid);
        bool is_memo = t != NULL; /* the memo holds t already */
        if (!t)
                t = agg_table_get(sw->threads, &k, &is_new);
        if (!t)
                return NULL;
        if (!is_new && pid != UNKNOWN_PID && t->has_pid && t->pid != pid) {
                t = switches_thread_retire(sw, t);
                is_memo = false;
        }
        if (pid != UNKNOWN_PID) {
                t->pid = pid;
                t->has_pid = true;
        }
        if (!is_memo)
                memo_put(sw, tid, t);
        return t;
}

void switches_thread_seen(struct thread *t, int64_t ns)
{
        if (!t->has_first || ns < t->first_ns) {
                t->has_first = true;
                t->first_ns = ns;
        }
}

uint32_t switches_thread_pid(const struct thread *t)
{
        return t->has_pid ? t->pid : UNKNOWN_PID;
}

bool switches_thread_passes_filter(const struct switches *sw, const struct thread *t)
{
        return agg_filter_has_pid(&sw->filter, switches_thread_pid(t)) &&
               agg_filter_has_tid(&sw->filter, t->tid);
}

/* Adds to v, or takes back (d < 0) as far as there is. */
