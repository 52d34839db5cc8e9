/* SPDX-License-Identifier: MIT */
/* switches.c: owns the context-switch accounting: each thread's on-CPU and off-CPU intervals,
   its waits, who readied it, and the per-process, per-wait and per-CPU views of them. */
#include "model/switches.h"
#include "model_util.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etw/ntwmi.h"

#define MAX_CPUS    1024
#define NR_STATES   16 /* KTHREAD_STATE values fit, with room */
#define NR_REASONS  64 /* KWAIT_REASON values fit, with room */
#define UNKNOWN_PID UINT32_MAX

#define SITE_FRAMES 6 /* frames kept of a blocking stack */

struct wait_bucket {
        uint8_t state, reason;
        uint64_t nr, ns;
};

/* One switch of a thread, in or out: a thread keeps its latest few in time order, because a
   live session's CPU buffers come one by one (one CPU's switches of a thread can come after
   another CPU's later ones). Each switch-out's wait runs to the switch of the thread that
   follows it in time; a switch that comes late takes its place among them and the waits
   around it are corrected. */
struct switch_mark {
        int64_t ns;
        bool is_out; /* a switch-out that begins a wait (its last one, after its End, does not) */
        uint8_t state, reason;
};
#define SWITCH_MARKS 6

/* Names as the events give them: the latest by event time, whatever order they come in; a
   rundown at the end (DCEnd) or an End only fills a name not known. */
struct timed_name {
        char name[SWITCHES_NAME_SIZE];
        bool is_timed; /* name came from an event that says when: name_ns */
        int64_t name_ns;
};

/* A thread's counts and state. serial 0 is the thread that has the tid now; when a tid is
   reused, the earlier thread's counts move to a fresh serial, where they only decay. */
struct thread {
        uint32_t tid, serial; /* key */
        uint32_t pid;
        uint32_t process_gen; /* the process (struct process gen) it belonged to; 0: the pid's
                                 current one */
        bool has_pid;
        bool is_ended;
        bool has_start;
        int64_t start_ns; /* its earliest Start or DCStart */
        int64_t end_ns;   /* is_ended: when */
        bool is_waiting;  /* its latest switch is a switch-out: out_ns, out_state, out_reason say
                             up to when its wait is counted and why */
        uint8_t out_state, out_reason;
        uint32_t last_cpu_1; /* last CPU + 1; 0: not seen */
        int64_t out_ns;
        bool has_first;
        int64_t first_ns; /* its first switch or readying counted: a Start before it is late */
        struct timed_name name;
        uint32_t nr_marks;
        struct switch_mark marks[SWITCH_MARKS]; /* its latest switches, oldest first */
        uint64_t nr_switches, nr_readied, on_cpu_ns, off_cpu_ns;
        uint32_t nr_waits;
        struct wait_bucket waits[SWITCHES_MAX_WAITS];
        uint64_t other_wait_ns, other_wait_nr;
        uint64_t pmc[KEV_MAX_PMC]; /* the counters' counts over its timeslices */
        /* where it blocked: the frames of the stack that came with its switch-out (Linux: the
           sched_switch callchain is the old thread's), counted as the wait goes on */
        uint64_t out_ts; /* the raw timestamp of its switch-out, in_ts of its switch-in */
        uint64_t in_ts;
        uint32_t nr_block;
        uint64_t block[SITE_FRAMES]; /* frame tokens */
        int64_t cur_wait_ns;         /* credited to the wait under way */
        /* the wait that ended at in_ts, for a stack that comes with the switch-in instead
           (Windows: the CSwitch stack is the new thread's, where it had waited) */
        bool has_ended_wait;
        bool is_ended_wait_counted; /* its end is in the time range: one wait */
        int64_t ended_wait_ns;
        bool is_folding; /* fold_exited: goes into the other row */
};
#define THREAD_KEY_SIZE offsetof(struct thread, pid)
/* a lookup's key: the whole struct thread is too big to clear for one */
struct thread_key {
        uint32_t tid, serial;
};
_Static_assert(sizeof(struct thread_key) == THREAD_KEY_SIZE, "thread key layout");

/* A process. serial 0 is the one that has the pid now; when a pid is reused (a Start after
   its End), the earlier process keeps its name under serial = its gen, for its threads. */
struct process {
        uint32_t pid, serial; /* key */
        uint32_t gen;         /* this process's number, unique in the object */
        bool is_ended;
        bool has_start;
        int64_t start_ns; /* its latest Start or DCStart (an exec's too) */
        int64_t end_ns;   /* is_ended: when */
        struct timed_name name;
};
#define PROCESS_KEY_SIZE offsetof(struct process, gen)
struct process_key {
        uint32_t pid, serial;
};
_Static_assert(sizeof(struct process_key) == PROCESS_KEY_SIZE, "process key layout");

/* A readier's first frames: where it readied from is the first of them past the wake-up
   machinery, chosen when the rows are asked for (a recording names its kernel frames only at
   its end). */
#define READIER_FRAMES 6

/* Off-CPU time by where the thread blocked: (tid, the blocking stack's first frames). */
struct blocker {
        uint64_t frames[SITE_FRAMES]; /* frame tokens; unused ones zero: keys compare byte for
                                         byte */
        uint32_t tid, nr_frames;
        uint64_t nr_waits, off_cpu_ns;
};
#define BLOCKER_KEY_SIZE offsetof(struct blocker, nr_waits)

struct readier {
        uint64_t where[READIER_FRAMES]; /* frame tokens */
        uint32_t tid, readying_tid, readying_pid;
        uint32_t nr_where; /* frames kept; 0: no stack came. Unused frames zero: keys compare
                              byte for byte */
        uint64_t count;
};
#define READIER_KEY_SIZE offsetof(struct readier, count)

struct thread_cpu {
        uint32_t tid, cpu; /* key */
        uint64_t nr_switches, on_cpu_ns;
};
#define THREAD_CPU_KEY_SIZE offsetof(struct thread_cpu, nr_switches)

/* A ReadyThread whose stack may follow. */
struct pending {
        uint64_t timestamp;
        uint32_t tid, readying_tid, readying_pid;
        bool has;
};

struct cpu {
        bool has_current; /* a switch-in was seen: tid runs since since_ns */
        uint32_t tid;
        /* the (tid, cpu) entry, kept from its switch-in while its table's epoch stays */
        struct thread_cpu *cur_tc;
        uint32_t cur_tc_epoch;
        int64_t since_ns;
        int64_t in_ns; /* when tid switched in (since_ns moves at each refresh) */
        uint64_t nr_switches, busy_ns, idle_ns;
        uint64_t cstate_ns[SWITCHES_NR_CSTATES];
        bool has_cstates;               /* an idle period named a C-state past C0 */
        uint32_t nr_last_pmc;           /* counters of the CPU's last CSwitch; 0: none */
        uint64_t last_pmc[KEV_MAX_PMC]; /* their values then */
        struct pending pend;
};

/* The thread entry last found for a tid (slot: tid's low bits), good while the table's epoch
   stays: most events name a thread seen a moment ago. */
struct tid_memo {
        uint32_t tid, epoch;
        struct thread *t;
};
#define TID_MEMO_SLOTS 4096

struct wait_total {
        uint64_t nr, ns;
};

struct switches {
        struct sym_store *store;                       /* borrowed */
        struct agg_table *threads;                     /* owned: struct thread */
        struct agg_table *processes;                   /* owned: struct process */
        struct agg_table *readiers;                    /* owned: struct readier */
        struct agg_table *blockers;                    /* owned: struct blocker */
        struct agg_index readier_index, blocker_index; /* owned: their slots by thread */
        struct agg_table *thread_cpus;                 /* owned: struct thread_cpu */
        struct agg_settings settings;
        struct agg_filter filter;
        uint32_t next_serial;
        uint32_t next_gen; /* the next process's gen */
        int64_t floor_ns;  /* counts start here (switches_zero); INT64_MIN: from the start */
        /* the wall time the counts covered at the last refresh, decayed as they were, and
           when that was (INT64_MIN: none since they started) */
        int64_t wall_kept_ns, wall_mark_ns;
        bool is_stopped;           /* CSWITCH went off (switches_is_stopped) at stopped_ns */
        int64_t stopped_ns;        /* nothing runs or waits past it while is_stopped */
        struct thread other;       /* threads counted past max_entries, exited threads folded */
        uint64_t nr_other_readies; /* readiers counted past max_entries or folded */
        /* where the folded exited threads blocked (switches_blockers' AGG_ALL row) */
        uint64_t other_blocked_nr, other_blocked_ns;
        struct switches_caps caps;
        struct wait_total waits[NR_STATES][NR_REASONS];
        struct cpu *cpus;          /* owned: MAX_CPUS */
        struct tid_memo *tid_memo; /* owned: TID_MEMO_SLOTS */
        uint32_t nr_cpus;          /* highest CPU seen + 1 */
        uint64_t nr_switches, nr_readies;
        int64_t last_ns;
        int64_t first_ns; /* the first event's time (INT64_MAX: none yet) */
        uint32_t nr_pmc;  /* counters on the CSwitch events (their names: pmc_names) */
        char pmc_names[KEV_MAX_PMC][SWITCHES_NAME_SIZE];
        /* answers, owned, each valid until the next call */
        struct switches_row *rows;
        uint32_t cap_rows;
        struct switches_row *prows;
        uint32_t cap_prows;
        struct switches_wait_row *wrows;
        uint32_t cap_wrows;
        struct switches_readier_row *rrows;
        uint32_t cap_rrows;
        struct switches_blocker_row *brows;
        uint32_t cap_brows;
        struct switches_cpu_row *crows;
        uint32_t cap_crows;
};

/* Grows an answer array to hold n rows, doubling: rows that grow a little at each refresh do
   not leave the allocator a hole a little too small every time. */
static void *reserve(void *array, uint32_t *cap, uint32_t n, size_t size)
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

static void copy_name(char *dst, const char *src)
{
        size_t n = strlen(src);
        if (n >= SWITCHES_NAME_SIZE)
                n = SWITCHES_NAME_SIZE - 1;
        memcpy(dst, src, n);
        dst[n] = '\0';
}

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
        switches_reset(sw);
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

/* A thread's counts go; its name, pid and state stay. */
static void thread_clear_counts(struct thread *t)
{
        t->nr_switches = t->nr_readied = t->on_cpu_ns = t->off_cpu_ns = 0;
        t->nr_waits = 0;
        t->other_wait_nr = t->other_wait_ns = 0;
        memset(t->pmc, 0, sizeof(t->pmc));
}

/* The totals over every thread: the other threads' row, the waits, the CPUs' counts. */
static void zero_totals(struct switches *sw)
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
        thread_clear_counts(t);
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
        zero_totals(sw);
        for (uint32_t c = 0; c < sw->nr_cpus; c++) {
                struct cpu *cs = &sw->cpus[c];
                cs->cur_tc = NULL;
                if (cs->has_current && cs->since_ns < sw->last_ns)
                        cs->since_ns = cs->in_ns = sw->last_ns;
        }
        sw->nr_switches = sw->nr_readies = 0;
}

void switches_reset(struct switches *sw)
{
        agg_table_reset(sw->threads);
        agg_table_reset(sw->processes);
        agg_table_reset(sw->readiers);
        agg_table_reset(sw->blockers);
        agg_table_reset(sw->thread_cpus);
        zero_totals(sw);
        memset(sw->cpus, 0, MAX_CPUS * sizeof(*sw->cpus));
        sw->nr_cpus = 0;
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

static struct thread *thread_find(struct switches *sw, uint32_t tid)
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

static bool thread_has_counts(const struct thread *t)
{
        return t->nr_switches || t->nr_readied || t->on_cpu_ns || t->off_cpu_ns;
}

/* ---- names ---- */

/* name from an event at ns; is_weak: the event tells no time for it (a rundown at the end, an
   End), so it only fills a name not known. */
static void name_set(struct timed_name *n, const char *name, int64_t ns, bool is_weak)
{
        if (!name || !name[0])
                return;
        if (is_weak) {
                if (!n->name[0])
                        copy_name(n->name, name);
                return;
        }
        if (n->is_timed && ns < n->name_ns)
                return; /* a newer name came first */
        copy_name(n->name, name);
        n->is_timed = true;
        n->name_ns = ns;
}

/* The process that has pid now, added when new; NULL when the table is full. */
static struct process *process_get(struct switches *sw, uint32_t pid)
{
        struct process_key k = {pid, 0};
        bool is_new = false;
        struct process *p = agg_table_get(sw->processes, &k, &is_new);
        if (p && is_new)
                p->gen = sw->next_gen++;
        return p;
}

static struct process *process_find(const struct switches *sw, uint32_t pid)
{
        struct process_key k = {pid, 0};
        return agg_table_find(sw->processes, &k);
}

/* p had ended and its pid starts another process: p keeps its name under its gen, for its
   threads, and the entry starts again. Returns the entry (the table may have grown). */
static struct process *process_retire(struct switches *sw, struct process *p)
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

/* The process p is at ns, when it had already ended then: a Start after its End is the
   pid's next process, whose names and End are not p's. */
static bool process_is_over(const struct process *p, int64_t ns)
{
        return p->is_ended && ns > p->end_ns;
}

/* A name of the main thread (tid == pid) at ns: on Linux a process's name is its main
   thread's (what ps and top show; a kernel thread is named after its fork, an exec names both).
   Windows never gives a thread its process's id. */
static void leader_name(struct switches *sw, uint32_t pid, const char *name, int64_t ns,
                        bool is_weak)
{
        struct process *p = process_get(sw, pid);
        if (p && !process_is_over(p, ns))
                name_set(&p->name, name, ns, is_weak);
}

/* Ties t, as it is at ns, to the process that has its pid, when that one was not over then:
   t keeps its process's name if the pid goes to another process. */
static void thread_bind(struct switches *sw, struct thread *t, int64_t ns)
{
        if (t->process_gen || !t->has_pid)
                return;
        const struct process *p = process_find(sw, t->pid);
        if (p && !process_is_over(p, ns))
                t->process_gen = p->gen;
}

/* The process of t: the one it was tied to, else the one that has its pid; NULL: unknown. */
static const struct process *thread_process(const struct switches *sw, const struct thread *t)
{
        if (!t->has_pid)
                return NULL;
        const struct process *p = process_find(sw, t->pid);
        if (!t->process_gen || (p && p->gen == t->process_gen))
                return p;
        struct process_key k = {t->pid, t->process_gen};
        return agg_table_find(sw->processes, &k);
}

/* The thread had ended and its tid is someone else's now: its counts move to a fresh serial,
   where they only decay, and the entry starts again. Returns the entry (the table may have
   grown). */
static struct thread *thread_retire(struct switches *sw, struct thread *t)
{
        thread_bind(sw, t, sw->last_ns);
        struct thread old = *t;
        struct thread_key k = {t->tid, 0};
        memset(&t->pid, 0, sizeof(*t) - THREAD_KEY_SIZE);
        if (!thread_has_counts(&old))
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

static struct thread_cpu *cpu_thread_cpu(const struct switches *sw, const struct cpu *c,
                                         uint32_t tid, uint32_t cpu)
{
        if (c->cur_tc && c->cur_tc_epoch == agg_table_epoch(sw->thread_cpus) &&
            c->cur_tc->tid == tid && c->cur_tc->cpu == cpu)
                return c->cur_tc;
        return NULL;
}

/* The thread that has tid now, added when new; NULL when the table is full. pid: from the
   event, UNKNOWN_PID when it did not say. A known pid that differs from the entry's means the
   tid was reused. */
static struct thread *thread_get(struct switches *sw, uint32_t tid, uint32_t pid)
{
        struct thread_key k = {tid, 0};
        bool is_new = false;
        struct thread *t = memo_thread(sw, tid);
        if (!t)
                t = agg_table_get(sw->threads, &k, &is_new);
        if (!t)
                return NULL;
        if (!is_new && pid != UNKNOWN_PID && t->has_pid && t->pid != pid)
                t = thread_retire(sw, t);
        if (pid != UNKNOWN_PID) {
                t->pid = pid;
                t->has_pid = true;
        }
        memo_put(sw, tid, t);
        return t;
}

/* A switch or readying of t at time ns. */
static void thread_seen(struct thread *t, int64_t ns)
{
        if (!t->has_first || ns < t->first_ns) {
                t->has_first = true;
                t->first_ns = ns;
        }
}

static uint32_t thread_pid(const struct thread *t)
{
        return t->has_pid ? t->pid : UNKNOWN_PID;
}

static bool thread_passes(const struct switches *sw, const struct thread *t)
{
        return agg_filter_has_pid(&sw->filter, thread_pid(t)) &&
               agg_filter_has_tid(&sw->filter, t->tid);
}

/* Adds to v, or takes back (d < 0) as far as there is. */
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

/* nr waits and ns of off-CPU time in (state, reason), either taken back when negative. */
static void wait_add(struct thread *t, uint8_t state, uint8_t reason, int64_t nr, int64_t ns)
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
        if (addr >= 0xffff800000000000ull)
                return addr;
        struct sym_loc loc = sym_locate(sw->store, pid, addr);
        if (!loc.module || loc.module > TOKEN_MAX_MOD || loc.rel >> TOKEN_REL_BITS)
                return addr;
        return TOKEN_PLACED | (uint64_t)loc.module << TOKEN_REL_BITS | loc.rel;
}

static struct sym_loc token_loc(struct switches *sw, uint32_t pid, uint64_t token)
{
        if (token >> 62 == 1)
                return (struct sym_loc){(uint32_t)(token >> TOKEN_REL_BITS) & TOKEN_MAX_MOD,
                                        token & ((1ull << TOKEN_REL_BITS) - 1)};
        return sym_locate(sw->store, pid, token);
}

static void blocker_add(struct switches *sw, uint32_t tid, uint32_t nr_frames,
                        const uint64_t *frames, int64_t nr, int64_t ns)
{
        struct blocker k;
        memset(&k, 0, sizeof(k));
        k.tid = tid;
        k.nr_frames = nr_frames < SITE_FRAMES ? nr_frames : SITE_FRAMES;
        memcpy(k.frames, frames, k.nr_frames * sizeof(*frames));
        struct blocker *b = nr > 0 || ns > 0 ? agg_table_get(sw->blockers, &k, NULL)
                                             : agg_table_find(sw->blockers, &k);
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
                blocker_add(sw, t->tid, t->nr_block, t->block, nr, ns);
        add_sat(&t->off_cpu_ns, ns);
        wait_add(t, state, reason, nr, ns);
        struct wait_total *w = &sw->waits[state % NR_STATES][reason % NR_REASONS];
        add_sat(&w->nr, nr);
        add_sat(&w->ns, ns);
}

/* Off-CPU time of t in the wait under way over [from_ns, to_ns) (taken back when to_ns is
   before from_ns); is_end: the wait ends at to_ns, so it counts as one wait when its end
   counts. */
static void credit_off_cpu(struct switches *sw, struct thread *t, int64_t from_ns, int64_t to_ns,
                           bool is_end)
{
        if (!thread_passes(sw, t))
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

static struct thread_cpu *thread_cpu_get(struct switches *sw, uint32_t tid, uint32_t cpu)
{
        struct thread_cpu k = {tid, cpu, 0, 0};
        struct thread_cpu *tc = agg_table_get(sw->thread_cpus, &k, NULL);
        if (!tc)
                sw->caps.nr_no_room++;
        return tc;
}

/* On-CPU time of the thread that ran on cpu over [from_ns, to_ns); taken back when to_ns is
   before from_ns (a refresh credited it ahead of the CPU's events). */
static void credit_on_cpu(struct switches *sw, uint32_t cpu, uint32_t tid, int64_t from_ns,
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
        struct thread *t = thread_find(sw, tid);
        if (t && !thread_passes(sw, t))
                return;
        if (!t && (sw->filter.nr_pids || sw->filter.nr_tids))
                return; /* not kept, so not known to pass */
        add_sat(&c->busy_ns, ns);
        if (!t) {
                add_sat(&sw->other.on_cpu_ns, ns);
                return;
        }
        add_sat(&t->on_cpu_ns, ns);
        struct thread_cpu *tc = cpu_thread_cpu(sw, c, tid, cpu);
        if (!tc)
                tc = ns > 0 ? thread_cpu_get(sw, tid, cpu)
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
        if (!n || c->nr_last_pmc != n || !thread_passes(sw, o) || !is_counted_time(sw, ev->time_ns))
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
        bool passes = thread_passes(sw, t);
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
                        credit_off_cpu(sw, t, t->out_ns,
                                       t->is_ended && t->end_ns < ns ? t->end_ns : ns, !m.is_out);
                        t->is_waiting = false;
                } else if (!m.is_out) {
                        t->has_ended_wait = false;
                        t->ended_wait_ns = 0;
                        t->is_ended_wait_counted = false;
                }
                if (m.is_out) {
                        t->is_waiting = true;
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
                memmove(&t->marks[0], &t->marks[1], (n - 1) * sizeof(t->marks[0]));
                i--;
                n--;
        }
        memmove(&t->marks[i + 1], &t->marks[i], (n - i) * sizeof(t->marks[0]));
        t->marks[i] = m;
        t->nr_marks = n + 1;
}

static void switches_resume(struct switches *sw);

static void cswitch(struct switches *sw, const struct kevent *ev)
{
        int64_t t = ev->time_ns;
        if (sw->is_stopped && t > sw->stopped_ns)
                switches_resume(sw); /* switches again, their group mask still to come */
        uint32_t cpu = ev->cpu;
        bool has_cpu = cpu < MAX_CPUS;
        uint32_t old_tid = ev->cswitch.old_tid, new_tid = ev->cswitch.new_tid;

        /* the thread leaving: waits from now (its entry first, so its time below finds it) */
        struct cpu *c = has_cpu ? &sw->cpus[cpu] : NULL;
        if (old_tid != 0 && old_tid != new_tid) {
                struct thread *o = thread_get(sw, old_tid, ev->cswitch.old_pid);
                if (o) {
                        thread_seen(o, t);
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
                           thread past t: credit_on_cpu takes that back */
                        credit_on_cpu(sw, cpu, old_tid, c->since_ns, t);
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
                struct thread *n = thread_get(sw, new_tid, ev->cswitch.new_pid);
                if (n) {
                        thread_seen(n, t);
                        bool is_latest = !n->nr_marks || n->marks[n->nr_marks - 1].ns <= t;
                        thread_switch(sw, n, ev, false);
                        is_counted = is_counted && thread_passes(sw, n);
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
                        tc = thread_cpu_get(sw, new_tid, cpu);
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
        struct readier *r = agg_table_get(sw->readiers, &k, NULL);
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

static void pending_flush_all(struct switches *sw)
{
        for (uint32_t c = 0; c < sw->nr_cpus; c++)
                pending_flush(sw, &sw->cpus[c].pend);
}

static void ready_thread(struct switches *sw, const struct kevent *ev)
{
        uint32_t tid = ev->ready_thread.tid;
        struct thread *t = thread_get(sw, tid, tid == ev->tid ? ev->pid : UNKNOWN_PID);
        if (t)
                thread_seen(t, ev->time_ns);
        uint32_t pid = t ? thread_pid(t) : (tid == ev->tid ? ev->pid : UNKNOWN_PID);
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
        pending_flush(sw, &sw->cpus[ev->cpu].pend);
        sw->cpus[ev->cpu].pend = p;
}

static bool has_prefix(const char *name, const char *const *prefixes, size_t nr)
{
        for (size_t i = 0; i < nr; i++)
                if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
                        return true;
        return false;
}

/* The wake-up machinery's own functions, where a readier's stack starts: try_to_wake_up and the
   wait-queue walk on Linux, KiReadyThread and the unwait path on Windows. */
static bool is_wakeup_function(const char *name)
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

/* The scheduler's own functions, where a blocking stack starts (Linux's __schedule and the
   schedule_* waits, Windows's KiSwapContext and the wait commit). */
static bool is_scheduler_function(const char *name)
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
        struct thread *t = thread_find(sw, ev->stack.tid);
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
                        blocker_add(sw, t->tid, n, frames, 0, t->cur_wait_ns);
        } else {
                t->has_ended_wait = false;
                if (thread_passes(sw, t) && (t->ended_wait_ns || t->is_ended_wait_counted))
                        blocker_add(sw, t->tid, n, frames, t->is_ended_wait_counted ? 1 : 0,
                                    t->ended_wait_ns);
        }
}

static void stack(struct switches *sw, const struct kevent *ev)
{
        /* the ReadyThread it belongs to: same timestamp, on its CPU or (rarely) another */
        struct pending *p = NULL;
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
                credit_off_cpu(sw, t, t->out_ns, ns, false); /* credited ahead: taken back */
                t->out_ns = ns;
        }
        thread_bind(sw, t, ns);
}

static void thread_event(struct switches *sw, const struct kevent *ev)
{
        uint32_t tid = ev->thread.tid, pid = ev->thread.pid;
        if (tid == 0)
                return;
        enum kevent_phase ph = ev->thread.phase;
        int64_t ns = ev->time_ns;
        struct thread *t = thread_get(sw, tid, pid);
        if (!t)
                return;
        bool is_start = ph == KEV_PHASE_START || ph == KEV_PHASE_DC_START;
        /* a rundown's DCStart may come after the thread's first switches: only an End says
           that the tid is another thread's */
        if (is_start &&
            (ph == KEV_PHASE_START ? is_next_thread(t, ns) : t->is_ended && ns > t->end_ns)) {
                t = thread_retire(sw, t);
                t->pid = pid;
                t->has_pid = true;
        }
        if (ph == KEV_PHASE_END && t->has_start && ns < t->start_ns)
                return; /* the End of the tid's thread before this one, come late */
        name_set(&t->name, ev->thread.name, ns, !is_start);
        if (tid == pid)
                leader_name(sw, pid, ev->thread.name, ns, !is_start);
        if (is_start) {
                if (!t->has_start || ns < t->start_ns) {
                        t->has_start = true;
                        t->start_ns = ns;
                }
                thread_bind(sw, t, ns);
        } else if (ph == KEV_PHASE_END) {
                thread_end(sw, t, ns);
        }
}

/* A rename (Linux: COMM; Windows: ThreadSetName). */
static void thread_name_event(struct switches *sw, const struct kevent *ev)
{
        uint32_t tid = ev->thread_name.tid, pid = ev->thread_name.pid;
        struct thread *t = thread_get(sw, tid, pid);
        if (t) {
                name_set(&t->name, ev->thread_name.name, ev->time_ns, false);
                thread_bind(sw, t, ev->time_ns);
        }
        if (tid && tid == pid)
                leader_name(sw, pid, ev->thread_name.name, ev->time_ns, false);
}

/* Start, DCStart (an exec is a Start of a process already known: its new name), End, DCEnd. */
static void process_event(struct switches *sw, const struct kevent *ev)
{
        struct process *p = process_get(sw, ev->process.pid);
        if (!p)
                return;
        enum kevent_phase ph = ev->process.phase;
        int64_t ns = ev->time_ns;
        if (ph == KEV_PHASE_START || ph == KEV_PHASE_DC_START) {
                if (process_is_over(p, ns))
                        p = process_retire(sw, p);
                name_set(&p->name, ev->process.image_name, ns, false);
                if (!p->has_start || ns > p->start_ns) {
                        p->has_start = true;
                        p->start_ns = ns;
                }
                return;
        }
        if ((ph == KEV_PHASE_END || ph == KEV_PHASE_DEFUNCT) && p->has_start && ns < p->start_ns)
                return; /* an earlier process's End come late, or one before an exec: not the end */
        name_set(&p->name, ev->process.image_name, ns, true);
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
                        copy_name(sw->pmc_names[i], ev->pmc_config.names[i]);
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

/* ---- filter and refresh ---- */

static bool is_thread_outside(void *entry, void *ctx)
{
        struct thread *t = entry;
        const struct switches *sw = ctx;
        if (thread_passes(sw, t))
                return false;
        /* the thread's state and name stay for when the filter widens; its counts go */
        thread_clear_counts(t);
        return t->serial != 0;
}

static bool is_blocker_outside(void *entry, void *ctx)
{
        const struct blocker *b = entry;
        struct switches *sw = ctx;
        struct thread *t = thread_find(sw, b->tid);
        return t ? !thread_passes(sw, t) : (sw->filter.nr_pids || sw->filter.nr_tids);
}

static bool is_readier_outside(void *entry, void *ctx)
{
        const struct readier *r = entry;
        struct switches *sw = ctx;
        struct thread *t = thread_find(sw, r->tid);
        return t ? !thread_passes(sw, t) : (sw->filter.nr_pids || sw->filter.nr_tids);
}

static bool is_thread_cpu_outside(void *entry, void *ctx)
{
        const struct thread_cpu *tc = entry;
        struct switches *sw = ctx;
        struct thread *t = thread_find(sw, tc->tid);
        return t ? !thread_passes(sw, t) : (sw->filter.nr_pids || sw->filter.nr_tids);
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
                zero_totals(sw);
        }
}

struct decay_ctx {
        struct switches *sw;
        bool is_crowded; /* the table is over half full: idle live threads may go too */
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
        if (s->mode != AGG_CUMULATIVE)
                thread_decay(d->sw, t);
        bool is_spent = agg_settings_is_droppable(s, t->nr_switches) &&
                        agg_settings_is_droppable(s, t->nr_readied) &&
                        agg_settings_is_droppable(s, t->on_cpu_ns) &&
                        agg_settings_is_droppable(s, t->off_cpu_ns);
        if (s->mode == AGG_CUMULATIVE)
                is_spent = !thread_has_counts(t);
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
               thread_has_counts(t);
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
                wait_add(o, t->waits[i].state, t->waits[i].reason, (int64_t)t->waits[i].nr,
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
        if (!thread_find(f->sw, r->tid)) {
                f->sw->nr_other_readies += r->count;
                return true;
        }
        if (r->readying_tid == 0 || r->readying_tid == AGG_ALL ||
            thread_find(f->sw, r->readying_tid))
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
        if (thread_find(sw, b->tid))
                return false;
        sw->other_blocked_nr += b->nr_waits;
        sw->other_blocked_ns += b->off_cpu_ns;
        return true;
}

static bool is_thread_cpu_orphan(void *entry, void *ctx)
{
        const struct thread_cpu *tc = entry;
        return !thread_find(ctx, tc->tid); /* the CPUs' own totals keep its time */
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
        /* a kept thread is tied to it (thread_process), or names it by its pid */
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
                        credit_on_cpu(sw, c, cs->tid, cs->since_ns, now);
                        cs->since_ns = now;
                }
        }
        for (uint32_t i = 0; i < agg_table_capacity(sw->threads); i++) {
                struct thread *t = agg_table_slot(sw->threads, i);
                if (!t || !t->is_waiting)
                        continue;
                /* an ended thread's wait (its switch-in still to come) ends with it */
                int64_t to = t->is_ended && t->end_ns < now ? t->end_ns : now;
                if (t->out_ns < to) {
                        credit_off_cpu(sw, t, t->out_ns, to, false);
                        t->out_ns = to;
                }
        }
}

void switches_settle(struct switches *sw)
{
        pending_flush_all(sw);
        credit_open(sw);
}

void switches_refresh(struct switches *sw)
{
        switches_settle(sw);
        /* the wall time the counts cover goes with them: decayed or zeroed alike */
        sw->wall_kept_ns = (int64_t)apply(sw, (uint64_t)switches_wall_ns(sw));
        sw->wall_mark_ns = sw->last_ns;
        struct decay_ctx d = {sw, agg_table_nr(sw->threads) * 2 > agg_table_max(sw->threads)};
        agg_table_remove_if(sw->threads, is_thread_dropped, &d);
        fold_exited(sw);
        prune_processes(sw);
        if (agg_table_nr(sw->processes) * 2 > agg_table_max(sw->processes))
                agg_table_remove_if(sw->processes, is_process_dropped, NULL);
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

/* ---- rows ---- */

static int cmp_u64(uint64_t x, uint64_t y)
{
        return x < y ? -1 : x > y;
}

static int row_by_id(const void *a, const void *b)
{
        const struct switches_row *x = a, *y = b;
        if (x->is_other != y->is_other)
                return x->is_other ? 1 : -1;
        if (x->pid != y->pid)
                return cmp_u64(x->pid, y->pid);
        return cmp_u64(x->tid, y->tid);
}

#define ROW_BY(field)                                                                              \
        static int row_by_##field(const void *a, const void *b)                                    \
        {                                                                                          \
                const struct switches_row *x = a, *y = b;                                          \
                if (x->field != y->field)                                                          \
                        return x->field > y->field ? -1 : 1;                                       \
                return row_by_id(a, b);                                                            \
        }
ROW_BY(nr_switches)
ROW_BY(on_cpu_ns)
ROW_BY(off_cpu_ns)
ROW_BY(nr_readied)

static int row_by_wait(const void *a, const void *b)
{
        const struct switches_row *x = a, *y = b;
        if (!x->nr_waits != !y->nr_waits)
                return x->nr_waits ? -1 : 1;
        if (x->nr_waits) {
                const struct switches_wait *u = &x->waits[0], *v = &y->waits[0];
                if (u->state != v->state)
                        return cmp_u64(u->state, v->state);
                if (u->wait_reason != v->wait_reason)
                        return cmp_u64(u->wait_reason, v->wait_reason);
        }
        return row_by_off_cpu_ns(a, b);
}

static int (*const row_cmp[])(const void *, const void *) = {
        [SWITCHES_BY_SWITCHES] = row_by_nr_switches, [SWITCHES_BY_ON_CPU] = row_by_on_cpu_ns,
        [SWITCHES_BY_OFF_CPU] = row_by_off_cpu_ns,   [SWITCHES_BY_READIED] = row_by_nr_readied,
        [SWITCHES_BY_WAIT_REASON] = row_by_wait,     [SWITCHES_BY_ID] = row_by_id,
};

static void sort_rows(struct switches_row *rows, uint32_t n, enum switches_sort sort)
{
        unsigned k = (unsigned)sort;
        qsort(rows, n, sizeof(*rows), row_cmp[k < sizeof(row_cmp) / sizeof(row_cmp[0]) ? k : 0]);
}

/* The order of waits: most off-CPU time first, then most waits, then by state and reason. */
static int wait_order(uint64_t ns_x, uint64_t nr_x, uint8_t state_x, uint8_t reason_x,
                      uint64_t ns_y, uint64_t nr_y, uint8_t state_y, uint8_t reason_y)
{
        if (ns_x != ns_y)
                return ns_x > ns_y ? -1 : 1;
        if (nr_x != nr_y)
                return nr_x > nr_y ? -1 : 1;
        return cmp_u64((uint64_t)state_x << 8 | reason_x, (uint64_t)state_y << 8 | reason_y);
}

static int wait_by_ns(const void *a, const void *b)
{
        const struct switches_wait *x = a, *y = b;
        return wait_order(x->off_cpu_ns, x->nr_waits, x->state, x->wait_reason, y->off_cpu_ns,
                          y->nr_waits, y->state, y->wait_reason);
}

static const char *process_name(const struct switches *sw, uint32_t pid)
{
        const struct process *p = process_find(sw, pid);
        return p ? p->name.name : "";
}

const char *switches_process_name(const struct switches *sw, uint32_t pid)
{
        const char *name = process_name(sw, pid); /* pid 0: Idle, whatever it was named */
        return pid || !*name ? name : SWITCHES_IDLE_NAME;
}

static void row_names(const struct switches *sw, const struct thread *t, char *process,
                      char *thread);

void switches_thread_names(const struct switches *sw, uint32_t tid, char *process, char *thread)
{
        /* thread_find only looks (it takes the table's non-const handle) */
        row_names(sw, thread_find((struct switches *)sw, tid), process, thread);
        if (!tid) {
                copy_name(process, SWITCHES_IDLE_NAME);
                thread[0] = '\0';
        }
}

/* The names of thread t (NULL: none) into a row's: its process's, and its own where it differs
   from that (a process's main thread has its name; so does a forked child until it renames). */
static void row_names(const struct switches *sw, const struct thread *t, char *process,
                      char *thread)
{
        process[0] = thread[0] = '\0';
        if (!t)
                return;
        const struct process *p = thread_process(sw, t);
        if (p)
                copy_name(process, p->name.name);
        if (!process[0] || strcmp(process, t->name.name) != 0)
                copy_name(thread, t->name.name);
}

static void thread_row(struct switches *sw, const struct thread *t, struct switches_row *r)
{
        memset(r, 0, sizeof(*r));
        r->tid = t->tid;
        r->pid = thread_pid(t);
        row_names(sw, t, r->process_name, r->thread_name);
        r->nr_switches = t->nr_switches;
        r->on_cpu_ns = t->on_cpu_ns;
        r->off_cpu_ns = t->off_cpu_ns;
        r->nr_readied = t->nr_readied;
        r->nr_threads = 1;
        r->last_cpu = t->last_cpu_1 ? t->last_cpu_1 - 1 : AGG_ALL;
        r->nr_waits = t->nr_waits;
        for (uint32_t i = 0; i < t->nr_waits; i++)
                r->waits[i] = (struct switches_wait){t->waits[i].state, t->waits[i].reason,
                                                     t->waits[i].nr, t->waits[i].ns};
        qsort(r->waits, r->nr_waits, sizeof(r->waits[0]), wait_by_ns);
        r->other_wait_ns = t->other_wait_ns;
        r->nr_pmc = sw->nr_pmc;
        memcpy(r->pmc, t->pmc, sizeof(r->pmc));
}

/* The thread rows (of pid, or all with AGG_ALL) into sw->rows, unsorted; the "other" row with
   AGG_ALL. */
static uint32_t build_thread_rows(struct switches *sw, uint32_t pid)
{
        sw->rows =
                reserve(sw->rows, &sw->cap_rows, agg_table_nr(sw->threads) + 1, sizeof(*sw->rows));
        uint32_t n = 0;
        for (uint32_t i = 0; i < agg_table_capacity(sw->threads); i++) {
                const struct thread *t = agg_table_slot(sw->threads, i);
                if (!t || !thread_has_counts(t) || (pid != AGG_ALL && thread_pid(t) != pid))
                        continue;
                thread_row(sw, t, &sw->rows[n++]);
        }
        if (pid == AGG_ALL && thread_has_counts(&sw->other)) {
                struct switches_row *r = &sw->rows[n++];
                thread_row(sw, &sw->other, r);
                r->tid = r->pid = AGG_ALL;
                r->nr_threads = 0;
                r->is_other = true;
        }
        return n;
}

uint32_t switches_process_threads(struct switches *sw, uint32_t pid, enum switches_sort sort,
                                  const struct switches_row **rows)
{
        uint32_t n = build_thread_rows(sw, pid);
        sort_rows(sw->rows, n, sort);
        *rows = sw->rows;
        return n;
}

uint32_t switches_threads(struct switches *sw, enum switches_sort sort,
                          const struct switches_row **rows)
{
        return switches_process_threads(sw, AGG_ALL, sort, rows);
}

/* Adds the thread rows [from, to) of one process into a process row. */
static void process_row(struct switches *sw, const struct switches_row *from,
                        const struct switches_row *to, struct switches_row *r)
{
        struct switches_wait acc[NR_STATES * SWITCHES_MAX_WAITS * 4];
        uint32_t nr_acc = 0;
        memset(r, 0, sizeof(*r));
        r->tid = AGG_ALL;
        r->pid = from->pid;
        r->is_other = from->is_other;
        r->last_cpu = AGG_ALL;
        if (from->pid != AGG_ALL)
                copy_name(r->process_name, process_name(sw, from->pid));
        for (const struct switches_row *t = from; t < to; t++) {
                r->nr_switches += t->nr_switches;
                r->on_cpu_ns += t->on_cpu_ns;
                r->off_cpu_ns += t->off_cpu_ns;
                r->nr_readied += t->nr_readied;
                r->nr_threads += t->nr_threads;
                r->other_wait_ns += t->other_wait_ns;
                r->nr_pmc = t->nr_pmc;
                for (uint32_t i = 0; i < KEV_MAX_PMC; i++)
                        r->pmc[i] += t->pmc[i];
                for (uint32_t i = 0; i < t->nr_waits; i++) {
                        const struct switches_wait *w = &t->waits[i];
                        uint32_t j = 0;
                        while (j < nr_acc &&
                               (acc[j].state != w->state || acc[j].wait_reason != w->wait_reason))
                                j++;
                        if (j == nr_acc) {
                                if (nr_acc == sizeof(acc) / sizeof(acc[0])) {
                                        r->other_wait_ns += w->off_cpu_ns;
                                        continue;
                                }
                                acc[nr_acc++] =
                                        (struct switches_wait){w->state, w->wait_reason, 0, 0};
                        }
                        acc[j].nr_waits += w->nr_waits;
                        acc[j].off_cpu_ns += w->off_cpu_ns;
                }
        }
        qsort(acc, nr_acc, sizeof(acc[0]), wait_by_ns);
        for (uint32_t j = 0; j < nr_acc; j++) {
                if (j < SWITCHES_MAX_WAITS)
                        r->waits[r->nr_waits++] = acc[j];
                else
                        r->other_wait_ns += acc[j].off_cpu_ns;
        }
}

uint32_t switches_processes(struct switches *sw, enum switches_sort sort,
                            const struct switches_row **rows)
{
        uint32_t n = build_thread_rows(sw, AGG_ALL);
        qsort(sw->rows, n, sizeof(*sw->rows), row_by_id); /* threads of a process together */
        sw->prows = reserve(sw->prows, &sw->cap_prows, n + 1, sizeof(*sw->prows));
        uint32_t o = 0;
        for (uint32_t i = 0; i < n;) {
                uint32_t j = i + 1;
                while (j < n && sw->rows[j].pid == sw->rows[i].pid &&
                       sw->rows[j].is_other == sw->rows[i].is_other)
                        j++;
                process_row(sw, &sw->rows[i], &sw->rows[j], &sw->prows[o++]);
                i = j;
        }
        sort_rows(sw->prows, o, sort);
        *rows = sw->prows;
        return o;
}

static int wait_row_cmp(const void *a, const void *b)
{
        const struct switches_wait_row *x = a, *y = b;
        return wait_order(x->off_cpu_ns, x->nr_waits, x->state, x->wait_reason, y->off_cpu_ns,
                          y->nr_waits, y->state, y->wait_reason);
}

uint32_t switches_waits(struct switches *sw, const struct switches_wait_row **rows)
{
        sw->wrows = reserve(sw->wrows, &sw->cap_wrows, NR_STATES * NR_REASONS, sizeof(*sw->wrows));
        uint32_t n = 0;
        for (uint32_t s = 0; s < NR_STATES; s++)
                for (uint32_t r = 0; r < NR_REASONS; r++)
                        if (sw->waits[s][r].nr || sw->waits[s][r].ns)
                                sw->wrows[n++] = (struct switches_wait_row){(uint8_t)s, (uint8_t)r,
                                                                            sw->waits[s][r].nr,
                                                                            sw->waits[s][r].ns};
        qsort(sw->wrows, n, sizeof(*sw->wrows), wait_row_cmp);
        *rows = sw->wrows;
        return n;
}

/* A place named: where a stack's frames lead once the machinery (is_machinery) is passed. */
struct site {
        struct sym_loc where;
        uint32_t function;
        uint64_t offset;
        enum sym_state state;
};

/* The first of nr frame tokens (placed in pid) past the machinery; a frame not named
   ends the walk (it is no known machinery); the last one if all are in it. */
static struct site choose_site(struct switches *sw, uint32_t pid, uint32_t nr,
                               const uint64_t *frames, bool (*is_machinery)(const char *name))
{
        struct site r = {{0, 0}, 0, 0, SYM_NO_MODULE};
        for (uint32_t k = 0; k < nr; k++) {
                struct sym_loc loc = token_loc(sw, pid, frames[k]);
                struct sym_frame f;
                sym_resolve(sw->store, loc, &f);
                r.where = loc;
                r.state = f.state;
                r.function = f.state == SYM_RESOLVED ? f.function : 0;
                r.offset = f.state == SYM_RESOLVED ? f.offset : loc.rel;
                if (!r.function || !is_machinery(sym_name(sw->store, r.function)))
                        break;
        }
        return r;
}

/* Rows that chose the same place (their stacks differ deeper down) become one. */
static int readier_row_by_key(const void *a, const void *b)
{
        const struct switches_readier_row *x = a, *y = b;
        if (x->tid != y->tid)
                return cmp_u64(x->tid, y->tid);
        if (x->readying_tid != y->readying_tid)
                return cmp_u64(x->readying_tid, y->readying_tid);
        if (x->readying_pid != y->readying_pid)
                return cmp_u64(x->readying_pid, y->readying_pid);
        if (x->has_where != y->has_where)
                return x->has_where ? 1 : -1;
        if (x->where.module != y->where.module)
                return cmp_u64(x->where.module, y->where.module);
        return cmp_u64(x->where.rel, y->where.rel);
}

static uint32_t merge_readier_rows(struct switches_readier_row *rows, uint32_t n)
{
        if (n < 2)
                return n;
        qsort(rows, n, sizeof(*rows), readier_row_by_key);
        uint32_t m = 1;
        for (uint32_t i = 1; i < n; i++) {
                if (readier_row_by_key(&rows[m - 1], &rows[i]) == 0)
                        rows[m - 1].count += rows[i].count;
                else
                        rows[m++] = rows[i];
        }
        return m;
}

static int readier_row_cmp(const void *a, const void *b)
{
        const struct switches_readier_row *x = a, *y = b;
        if (x->count != y->count)
                return x->count > y->count ? -1 : 1;
        if (x->is_other != y->is_other)
                return x->is_other ? 1 : -1;
        if (x->tid != y->tid)
                return cmp_u64(x->tid, y->tid);
        if (x->readying_tid != y->readying_tid)
                return cmp_u64(x->readying_tid, y->readying_tid);
        if (x->where.module != y->where.module)
                return cmp_u64(x->where.module, y->where.module);
        return cmp_u64(x->where.rel, y->where.rel);
}

uint32_t switches_readiers(struct switches *sw, uint32_t tid,
                           const struct switches_readier_row **rows)
{
        pending_flush_all(sw);
        sw->rrows = reserve(sw->rrows, &sw->cap_rrows, agg_table_nr(sw->readiers) + 1,
                            sizeof(*sw->rrows));
        uint32_t n = 0, first = 0, nr_slots = agg_table_capacity(sw->readiers);
        const uint32_t *slots = NULL;
        if (tid != AGG_ALL) { /* one thread's: its slots, not a scan of every thread's */
                nr_slots = agg_index_find(&sw->readier_index, sw->readiers,
                                          offsetof(struct readier, tid), tid, &first);
                slots = nr_slots ? sw->readier_index.slots + first : NULL;
        }
        for (uint32_t k = 0; k < nr_slots; k++) {
                const struct readier *e = agg_table_slot(sw->readiers, slots ? slots[k] : k);
                if (!e || !e->count || (tid != AGG_ALL && e->tid != tid))
                        continue;
                struct switches_readier_row *r = &sw->rrows[n++];
                memset(r, 0, sizeof(*r));
                r->tid = e->tid;
                r->readying_tid = e->readying_tid;
                r->readying_pid = e->readying_pid;
                /* tid 0 readies from interrupts on an idle CPU: the Idle process, as WPA names
                   it */
                const struct thread *t = thread_find(sw, e->readying_tid);
                row_names(sw, t, r->readying_process_name, r->readying_thread_name);
                if (!r->readying_process_name[0]) {
                        copy_name(r->readying_process_name,
                                  e->readying_tid == 0         ? SWITCHES_IDLE_NAME
                                  : e->readying_tid == AGG_ALL ? "[exited threads]"
                                                               : process_name(sw, e->readying_pid));
                        if (strcmp(r->readying_process_name, r->readying_thread_name) == 0)
                                r->readying_thread_name[0] = '\0';
                }
                r->count = e->count;
                r->state = SYM_NO_MODULE;
                if (!e->nr_where)
                        continue;
                r->has_where = true;
                struct site site =
                        choose_site(sw, e->readying_pid, e->nr_where, e->where, is_wakeup_function);
                r->where = site.where;
                r->state = site.state;
                r->function = site.function;
                r->offset = site.offset;
        }
        n = merge_readier_rows(sw->rrows, n);
        if (tid == AGG_ALL && sw->nr_other_readies) {
                struct switches_readier_row *r = &sw->rrows[n++];
                memset(r, 0, sizeof(*r));
                r->tid = r->readying_tid = r->readying_pid = AGG_ALL;
                r->state = SYM_NO_MODULE;
                r->count = sw->nr_other_readies;
                r->is_other = true;
        }
        qsort(sw->rrows, n, sizeof(*sw->rrows), readier_row_cmp);
        *rows = sw->rrows;
        return n;
}

static int blocker_row_by_key(const void *a, const void *b)
{
        const struct switches_blocker_row *x = a, *y = b;
        if (x->tid != y->tid)
                return cmp_u64(x->tid, y->tid);
        if (x->where.module != y->where.module)
                return cmp_u64(x->where.module, y->where.module);
        return cmp_u64(x->where.rel, y->where.rel);
}

static int blocker_row_cmp(const void *a, const void *b)
{
        const struct switches_blocker_row *x = a, *y = b;
        if (x->off_cpu_ns != y->off_cpu_ns)
                return x->off_cpu_ns > y->off_cpu_ns ? -1 : 1;
        if (x->nr_waits != y->nr_waits)
                return x->nr_waits > y->nr_waits ? -1 : 1;
        return blocker_row_by_key(a, b);
}

uint32_t switches_blockers(struct switches *sw, uint32_t tid,
                           const struct switches_blocker_row **rows)
{
        sw->brows = reserve(sw->brows, &sw->cap_brows, agg_table_nr(sw->blockers) + 1,
                            sizeof(*sw->brows));
        uint32_t n = 0, first = 0, nr_slots = agg_table_capacity(sw->blockers);
        const uint32_t *slots = NULL;
        if (tid != AGG_ALL) { /* one thread's: its slots, not a scan of every thread's */
                nr_slots = agg_index_find(&sw->blocker_index, sw->blockers,
                                          offsetof(struct blocker, tid), tid, &first);
                slots = nr_slots ? sw->blocker_index.slots + first : NULL;
        }
        for (uint32_t k = 0; k < nr_slots; k++) {
                const struct blocker *e = agg_table_slot(sw->blockers, slots ? slots[k] : k);
                if (!e || (!e->nr_waits && !e->off_cpu_ns) || (tid != AGG_ALL && e->tid != tid))
                        continue;
                const struct thread *t = thread_find(sw, e->tid);
                struct site site = choose_site(sw, t ? thread_pid(t) : AGG_ALL, e->nr_frames,
                                               e->frames, is_scheduler_function);
                struct switches_blocker_row *b = &sw->brows[n++];
                *b = (struct switches_blocker_row){e->tid,        site.where, site.function,
                                                   site.offset,   site.state, e->nr_waits,
                                                   e->off_cpu_ns, "",         ""};
                row_names(sw, t, b->process_name, b->thread_name);
        }
        /* stacks that differ deeper down, one place */
        if (n > 1) {
                qsort(sw->brows, n, sizeof(*sw->brows), blocker_row_by_key);
                uint32_t m = 1;
                for (uint32_t i = 1; i < n; i++) {
                        if (blocker_row_by_key(&sw->brows[m - 1], &sw->brows[i]) == 0) {
                                sw->brows[m - 1].nr_waits += sw->brows[i].nr_waits;
                                sw->brows[m - 1].off_cpu_ns += sw->brows[i].off_cpu_ns;
                        } else {
                                sw->brows[m++] = sw->brows[i];
                        }
                }
                n = m;
        }
        if (tid == AGG_ALL && (sw->other_blocked_nr || sw->other_blocked_ns))
                sw->brows[n++] = (struct switches_blocker_row){AGG_ALL,
                                                               {0, 0},
                                                               0,
                                                               0,
                                                               SYM_NO_MODULE,
                                                               sw->other_blocked_nr,
                                                               sw->other_blocked_ns,
                                                               "",
                                                               ""};
        qsort(sw->brows, n, sizeof(*sw->brows), blocker_row_cmp);
        *rows = sw->brows;
        return n;
}

_Static_assert(SITE_FRAMES == SWITCHES_BLOCK_FRAMES, "a blocker's frames");

void switches_each_block_stack(struct switches *sw, switches_block_fn fn, void *ctx)
{
        for (uint32_t i = 0; i < agg_table_capacity(sw->blockers); i++) {
                const struct blocker *e = agg_table_slot(sw->blockers, i);
                if (!e || (!e->nr_waits && !e->off_cpu_ns))
                        continue;
                const struct thread *t = thread_find(sw, e->tid);
                struct switches_block_stack b = {.tid = e->tid,
                                                 .pid = t ? thread_pid(t) : AGG_ALL,
                                                 .nr_frames = e->nr_frames,
                                                 .nr_waits = e->nr_waits,
                                                 .off_cpu_ns = e->off_cpu_ns};
                for (uint32_t k = 0; k < e->nr_frames; k++)
                        b.frames[k] = token_loc(sw, b.pid, e->frames[k]);
                fn(ctx, &b);
        }
}

uint32_t switches_cpus(struct switches *sw, const struct switches_cpu_row **rows)
{
        sw->crows = reserve(sw->crows, &sw->cap_crows, sw->nr_cpus, sizeof(*sw->crows));
        uint32_t n = 0;
        for (uint32_t c = 0; c < sw->nr_cpus; c++) {
                const struct cpu *cs = &sw->cpus[c];
                if (cs->nr_switches || cs->busy_ns || cs->idle_ns) {
                        struct switches_cpu_row *r = &sw->crows[n++];
                        *r = (struct switches_cpu_row){
                                c, cs->nr_switches, cs->busy_ns, cs->idle_ns, {0}, cs->has_cstates};
                        memcpy(r->cstate_ns, cs->cstate_ns, sizeof(r->cstate_ns));
                }
        }
        *rows = sw->crows;
        return n;
}

static int cpu_row_by_switches(const void *a, const void *b)
{
        const struct switches_cpu_row *x = a, *y = b;
        if (x->nr_switches != y->nr_switches)
                return x->nr_switches > y->nr_switches ? -1 : 1;
        if (x->busy_ns != y->busy_ns)
                return x->busy_ns > y->busy_ns ? -1 : 1;
        return cmp_u64(x->cpu, y->cpu);
}

uint32_t switches_thread_cpus(struct switches *sw, uint32_t tid,
                              const struct switches_cpu_row **rows)
{
        uint32_t n = 0;
        sw->crows = reserve(sw->crows, &sw->cap_crows, agg_table_nr(sw->thread_cpus) + 1,
                            sizeof(*sw->crows));
        for (uint32_t i = 0; i < agg_table_capacity(sw->thread_cpus); i++) {
                const struct thread_cpu *tc = agg_table_slot(sw->thread_cpus, i);
                if (tc && tc->tid == tid && (tc->nr_switches || tc->on_cpu_ns))
                        sw->crows[n++] = (struct switches_cpu_row){
                                tc->cpu, tc->nr_switches, tc->on_cpu_ns, 0, {0}, false};
        }
        qsort(sw->crows, n, sizeof(*sw->crows), cpu_row_by_switches);
        *rows = sw->crows;
        return n;
}

uint32_t switches_pmc_names(const struct switches *sw, const char *names[KEV_MAX_PMC])
{
        for (uint32_t i = 0; i < sw->nr_pmc; i++)
                names[i] = sw->pmc_names[i];
        return sw->nr_pmc;
}
