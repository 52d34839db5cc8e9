/* SPDX-License-Identifier: MIT */
/* switches_impl.h (internal to model/): the context-switch accounting's threads, processes,
   readiers, blockers and CPUs, shared by switches.c (lifecycle, switch, ready and stack
   accounting), switches_tasks.c (thread and process identity and names), switches_fold.c
   (filter, decay, the exited threads' cap) and switches_rows.c (the row queries). */
#ifndef ETWTOP_MODEL_SWITCHES_IMPL_H
#define ETWTOP_MODEL_SWITCHES_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/switches.h"
#include "symbols/symbols.h"

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
        /* the blockers' entry it last counted in, while that table's epoch stays: a thread
           blocks where it blocked before, most often, and its key is then not hashed again */
        struct blocker *blocker_memo;
        uint32_t blocker_memo_epoch;
        /* the same for its entry of thread_cpus (a thread runs on one CPU, most often) */
        uint32_t tc_memo_epoch;
        struct thread_cpu *tc_memo;
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

/* The readiers' entry a readied thread's tid last counted in, while that table's epoch stays:
   a thread is readied from where it was readied before, most often. */
struct readier_memo {
        struct readier *r;
        uint32_t epoch;
};
#define READIER_MEMO_SLOTS 64

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
        /* a thread was switched out (is_waiting) since the start: until then no wait is open,
           and a refresh's credit of the open waits looks at no thread (a samples-only screen's
           table of every thread of the machine, each a line, at every refresh) */
        bool has_waited;
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
        struct readier_memo readier_memo[READIER_MEMO_SLOTS];
        uint32_t nr_cpus; /* highest CPU seen + 1 */
        /* the CPUs whose ReadyThread waits for its stack (pend.has): with none, a stack is a
           switch's or a sample's, and no CPU's is looked at */
        uint32_t nr_pend_readies;
        /* a CSwitch came (never cleared): before one, no thread waits or ended a wait, and a
           stack is a sample's, which block_site has no thread to look up for */
        bool has_switched;
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

/* ---- shared by the files of the module ---- */

/* switches.c */
void switches_copy_name(char *dst, const char *src);
/* Off-CPU time of t in the wait under way over [from_ns, to_ns) (taken back when to_ns is
   before from_ns); is_end: the wait ends at to_ns, so it counts as one wait when its end
   counts. */
void switches_credit_off_cpu(struct switches *sw, struct thread *t, int64_t from_ns, int64_t to_ns,
                             bool is_end);
/* On-CPU time of the thread that ran on cpu over [from_ns, to_ns); taken back when to_ns is
   before from_ns (a refresh credited it ahead of the CPU's events). */
void switches_credit_on_cpu(struct switches *sw, uint32_t cpu, uint32_t tid, int64_t from_ns,
                            int64_t to_ns);
/* The scheduler's own functions, where a blocking stack starts (Linux's __schedule and the
   schedule_* waits, Windows's KiSwapContext and the wait commit). */
bool switches_is_scheduler_function(const char *name);
/* The wake-up machinery's own functions, where a readier's stack starts: try_to_wake_up and the
   wait-queue walk on Linux, KiReadyThread and the unwait path on Windows. */
bool switches_is_wakeup_function(const char *name);
void switches_pending_flush_all(struct switches *sw);
/* Grows an answer array to hold n rows, doubling: rows that grow a little at each refresh do
   not leave the allocator a hole a little too small every time. */
void *switches_reserve(void *array, uint32_t *cap, uint32_t n, size_t size);
/* A thread's counts go; its name, pid and state stay. */
void switches_thread_clear_counts(struct thread *t);
struct sym_loc switches_token_loc(struct switches *sw, uint32_t pid, uint64_t token);
/* nr waits and ns of off-CPU time in (state, reason), either taken back when negative. */
void switches_wait_add(struct thread *t, uint8_t state, uint8_t reason, int64_t nr, int64_t ns);
/* The totals over every thread: the other threads' row, the waits, the CPUs' counts. */
void switches_zero_totals(struct switches *sw);

/* switches_tasks.c */
struct thread_cpu *switches_cpu_thread_cpu(const struct switches *sw, const struct cpu *c,
                                           uint32_t tid, uint32_t cpu);
/* A name of the main thread (tid == pid) at ns: on Linux a process's name is its main
   thread's (what ps and top show; a kernel thread is named after its fork, an exec names both).
   Windows never gives a thread its process's id. */
void switches_leader_name(struct switches *sw, uint32_t pid, const char *name, int64_t ns,
                          bool is_weak);
/* name from an event at ns; is_weak: the event tells no time for it (a rundown at the end, an
   End), so it only fills a name not known. */
void switches_name_set(struct timed_name *n, const char *name, int64_t ns, bool is_weak);
struct process *switches_process_find(const struct switches *sw, uint32_t pid);
/* The process that has pid now, added when new; NULL when the table is full. */
struct process *switches_process_get(struct switches *sw, uint32_t pid);
/* The process p is at ns, when it had already ended then: a Start after its End is the
   pid's next process, whose names and End are not p's. */
bool switches_process_is_over(const struct process *p, int64_t ns);
/* p had ended and its pid starts another process: p keeps its name under its gen, for its
   threads, and the entry starts again. Returns the entry (the table may have grown). */
struct process *switches_process_retire(struct switches *sw, struct process *p);
/* Ties t, as it is at ns, to the process that has its pid, when that one was not over then:
   t keeps its process's name if the pid goes to another process. */
void switches_thread_bind(struct switches *sw, struct thread *t, int64_t ns);
struct thread *switches_thread_find(struct switches *sw, uint32_t tid);
/* The thread that has tid now, added when new; NULL when the table is full. pid: from the
   event, UNKNOWN_PID when it did not say. A known pid that differs from the entry's means the
   tid was reused. */
struct thread *switches_thread_get(struct switches *sw, uint32_t tid, uint32_t pid);
bool switches_thread_has_counts(const struct thread *t);
bool switches_thread_passes_filter(const struct switches *sw, const struct thread *t);
/* Whether t's counts pass the filter (its pid and tid): every switch asks, most often of no
   filter at all, so that answer is inline. */
static inline bool switches_thread_passes(const struct switches *sw, const struct thread *t)
{
        return (!sw->filter.nr_pids && !sw->filter.nr_tids) || switches_thread_passes_filter(sw, t);
}
uint32_t switches_thread_pid(const struct thread *t);
/* The process of t: the one it was tied to, else the one that has its pid; NULL: unknown. */
const struct process *switches_thread_process(const struct switches *sw, const struct thread *t);
/* The thread had ended and its tid is someone else's now: its counts move to a fresh serial,
   where they only decay, and the entry starts again. Returns the entry (the table may have
   grown). */
struct thread *switches_thread_retire(struct switches *sw, struct thread *t);
/* A switch or readying of t at time ns. */
void switches_thread_seen(struct thread *t, int64_t ns);

#endif
