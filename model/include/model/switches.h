/* SPDX-License-Identifier: MIT */
/* switches.h: context switches from CSwitch and ReadyThread events. A CSwitch on CPU c at time
   t switches old_tid out and new_tid in: a thread's on-CPU time runs from its switch-in to its
   switch-out on that CPU, its off-CPU time from its switch-out to its next switch-in, split by
   the state and wait reason it left with. ReadyThread events say who readied a thread and,
   when the readier's stack follows (KEV_STACK with the same timestamp), from where: the stack's
   first frame past the wake-up machinery (try_to_wake_up, KiReadyThread ...), placed at event
   time (sym_locate) and named when the rows are asked for. The stack that comes with a switch
   says where a thread blocked (switches_blockers). PMC counters carried on CSwitch events count,
   from one switch to the next on a CPU, the timeslice of the thread that leaves. Rows per thread,
   per process, per wait reason, per CPU, per readier and per blocking place; counts follow the
   aggregation mode and filter of aggregate.h. The idle thread (tid 0) is no thread row: its time is
   the CPUs' idle time.
   A live session's buffers come one CPU after another, so what one CPU says of a thread can come
   after what another said later: names are the latest by event time (a Start delivered after
   an exec or a rename does not undo them), a thread's switches take their place by time among
   its latest few and its waits follow, time credited ahead of a CPU's late events is taken back,
   and a thread's off-CPU time ends when it exits. Names are read when rows are asked for: by
   tid, and by pid with the process the thread belonged to when the pid goes to another. */
#ifndef ETWTOP_MODEL_SWITCHES_H
#define ETWTOP_MODEL_SWITCHES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kevent.h"
#include "model/aggregate.h"
#include "symbols/sym_types.h"

struct sym_store;

struct switches;

#define SWITCHES_MAX_WAITS 6 /* wait buckets kept per thread; the rest go to other_wait */
#define SWITCHES_NAME_SIZE 32

/* Off-CPU time of one (state, wait reason) pair of the switch-out. */
struct switches_wait {
        uint8_t state;       /* KTHREAD_STATE: kevent_thread_state_name */
        uint8_t wait_reason; /* KWAIT_REASON: kevent_wait_reason_name */
        uint64_t nr_waits;   /* switch-outs with this pair whose wait ended */
        uint64_t off_cpu_ns;
};

/* A thread, or a process (tid AGG_ALL: the sums of its threads). The row of the threads
   counted past max_entries and of the exited threads folded past SWITCHES_EXITED_MAX has tid
   and pid AGG_ALL and is_other. */
struct switches_row {
        uint32_t tid;
        uint32_t pid; /* AGG_ALL: unknown */
        /* "" when unknown; as traced, not sanitized. On Linux a process is named as its main
           thread (tid == pid): an exec, or a rename of that thread (a kernel thread's, a
           program's prctl), renames the process. */
        char process_name[SWITCHES_NAME_SIZE];
        /* "" for process rows, unnamed threads and threads named as their process: a row is
           process/thread only where they differ */
        char thread_name[SWITCHES_NAME_SIZE];
        uint64_t nr_switches; /* switched in */
        uint64_t on_cpu_ns;
        uint64_t off_cpu_ns; /* the sum of waits[] and other_wait_ns */
        uint64_t nr_readied; /* ReadyThread events readying it */
        uint32_t nr_threads; /* process rows: threads summed; else 1 */
        uint32_t last_cpu;   /* where it last ran; AGG_ALL: not seen */
        uint32_t nr_waits;
        struct switches_wait waits[SWITCHES_MAX_WAITS]; /* largest off_cpu_ns first */
        uint64_t other_wait_ns;                         /* waits of the pairs not kept */
        uint32_t nr_pmc;           /* PMC counters on the CSwitch events (0: none) */
        uint64_t pmc[KEV_MAX_PMC]; /* their counts over its timeslices */
        bool is_other;
};

enum switches_sort {
        SWITCHES_BY_SWITCHES = 0,
        SWITCHES_BY_ON_CPU,
        SWITCHES_BY_OFF_CPU,
        SWITCHES_BY_READIED,
        SWITCHES_BY_WAIT_REASON, /* by the main wait (waits[0]: state, then reason), then by
                                    off-CPU time: the threads that wait on the same thing
                                    together */
        SWITCHES_BY_ID,          /* pid, tid */
};

/* A (state, wait reason) pair over every thread counted. */
struct switches_wait_row {
        uint8_t state;
        uint8_t wait_reason;
        uint64_t nr_waits;
        uint64_t off_cpu_ns;
};

/* One readier of one thread, from one place. */
struct switches_readier_row {
        uint32_t tid;          /* the thread readied */
        uint32_t readying_tid; /* who readied it; AGG_ALL: threads no longer kept */
        uint32_t readying_pid;
        char readying_process_name[SWITCHES_NAME_SIZE]; /* "Idle" for tid 0,
                                                           "[exited threads]" for AGG_ALL */
        char readying_thread_name[SWITCHES_NAME_SIZE];
        bool has_where;       /* its stack came: where is its top */
        struct sym_loc where; /* module 0: the raw address */
        uint32_t function;    /* interned name, 0 unless resolved */
        uint64_t offset;      /* from the function's start when resolved, else where.rel */
        enum sym_state state;
        uint64_t count;
        bool is_other; /* readyings counted past max_entries */
};

/* Off-CPU time of one thread by where it blocked: the first frame of the stack that came with
   its switch past the scheduler (__schedule, schedule_*, KiSwapContext ...). */
struct switches_blocker_row {
        uint32_t tid;
        struct sym_loc where; /* module 0: the raw address */
        uint32_t function;    /* interned name, 0 unless resolved */
        uint64_t offset;      /* from the function's start when resolved, else where.rel */
        enum sym_state state;
        uint64_t nr_waits; /* waits there that ended */
        uint64_t off_cpu_ns;
        char process_name[SWITCHES_NAME_SIZE]; /* the thread's, "" when unknown */
        char thread_name[SWITCHES_NAME_SIZE];
};

#define SWITCHES_NR_CSTATES 8 /* C0..C6, and C7 for every deeper state */

struct switches_cpu_row {
        uint32_t cpu;
        uint64_t nr_switches;
        uint64_t busy_ns; /* a thread other than idle (tid 0) on it */
        uint64_t idle_ns;
        /* the idle periods that ended, by the C-state the CPU slept in (CSwitch
           PreviousCState of the switch from the idle thread); switches_cpus only */
        uint64_t cstate_ns[SWITCHES_NR_CSTATES];
        /* some idle period named a C-state past C0: without the kernel's idle-state events
           every one reads C0 (running), and the C-state is unknown */
        bool has_cstates;
};

/* Threads that exited are kept one by one up to SWITCHES_EXITED_MAX, besides the live ones:
   at a refresh, past it, the lighter of those that ended SWITCHES_EXIT_GRACE_NS before the
   latest event (the heaviest by switches, then on-CPU time, stay) are folded into the "other"
   row, with their readiers (the other readiers' row), where they blocked (switches_blockers'
   AGG_ALL row) and their CPUs (the per-CPU totals keep them); the readyings of a kept thread by
   threads no longer kept become readyings by "[exited threads]" (readying tid and pid AGG_ALL)
   from the same place. Every total stays, and the rows and the cost of a refresh follow the
   live threads, not every thread that ever ran. The grace
   lets a thread's late events (another CPU's buffer) find it. Ended processes are kept while a
   kept thread names them, and up to SWITCHES_EXITED_MAX more. */
#define SWITCHES_EXITED_MAX    4096u
#define SWITCHES_EXIT_GRACE_NS 2000000000ll

/* What the caps did since the counts last started over (switches_caps). */
struct switches_caps {
        uint64_t nr_threads_folded; /* exited threads folded into the other row */
        /* events counted without a row of their own, their table at max_entries: switches and
           readyings in the other row, readyings in the other readiers' row, blocking places
           and thread x CPU pairs not kept */
        uint64_t nr_no_room;
};

/* store: borrowed (it places the readiers' stack tops). max_entries bounds each table
   (threads, processes, readiers, thread x CPU pairs): what does not fit is counted in an
   "other" row. The object starts cumulative, with no filter. */
struct switches *switches_new(struct sym_store *store, uint32_t max_entries);
void switches_free(struct switches *sw); /* NULL is fine */
/* Forgets every count and every thread's state; the settings and the filter stay. */
void switches_reset(struct switches *sw);
/* Zeroes every count from now on (the latest event time) and keeps what is known: the names
   and pids of threads and processes (a live session sends them once, at its start), the
   threads on each CPU and the waits under way, which count again from now. Events from before
   then that come late count nothing: a CPU's busy and idle time add up to the time since. */
void switches_zero(struct switches *sw);

/* Takes KEV_CSWITCH, KEV_READY_THREAD, the KEV_STACK of a ReadyThread, KEV_PROCESS,
   KEV_THREAD, KEV_THREAD_NAME for names and pids, and KEV_GROUP_MASK (CSWITCH off and on); of the
   rest, only the time (how far the session has come, for switches_refresh). Each CPU's events in
   time order; those of different CPUs may interleave out of order (a live session's buffers), a
   stack right after its event. */
void switches_event(struct switches *sw, const struct kevent *ev);

void switches_set_settings(struct switches *sw, const struct agg_settings *settings);
/* Only what passes f is counted from now on: a switch-out by the old thread's pid and tid, a
   switch-in by the new one's, a ReadyThread by the readied thread's; times are clipped to f's
   range. The counts of threads outside f's sets are dropped at once (their names and states
   stay, for when the filter widens), and with sets given the per-wait and per-CPU totals start
   over. f is copied. */
void switches_set_filter(struct switches *sw, const struct agg_filter *f);
/* The refresh tick: first credits the intervals still open (threads on a CPU, threads waiting)
   up to the latest event time, so that long waits show before they end and each period gets
   its own share; then applies the aggregation mode. Call it once at the end of a replay too. */
void switches_refresh(struct switches *sw);
/* switches_settle, then the caps' upkeep of switches_refresh without the mode: the threads
   that ended and have nothing left to count go, past the exited threads' cap the lighter fold,
   and the processes no thread names past theirs; no count decays or starts over (hot_upkeep:
   on the events' clock, whatever the refresh interval, and while the display is paused). */
void switches_upkeep(struct switches *sw);

/* The first step of switches_refresh alone: credits the intervals still open up to the latest
   event time, and applies no mode. The rows then count up to the latest event, as
   switches_wall_ns does (a thread on a CPU since the last refresh has its time there): call it
   before the rows are asked for. */
void switches_settle(struct switches *sw);

/* What the caps folded or left without a row (switches_caps above). */
void switches_caps(const struct switches *sw, struct switches_caps *out);

/* The idle thread's (tid 0) and its process's (pid 0) one name, as WPA's. */
#define SWITCHES_IDLE_NAME "Idle"
/* Processes that ended, as one (pid AGG_ALL: the hot functions' places folded past
   HOT_EXITED_MAX). */
#define SWITCHES_EXITED_NAME "[exited]"
/* The name of process pid as its events gave it ("" when none did; SWITCHES_IDLE_NAME for pid 0
   when one did; SWITCHES_EXITED_NAME for AGG_ALL); valid until the next event or call on sw. */
const char *switches_process_name(const struct switches *sw, uint32_t pid);
/* The latest event time seen, session ns. */
int64_t switches_last_time_ns(const struct switches *sw);
/* Thread tid's process name and its own where it differs (SWITCHES_NAME_SIZE each; "" when
   none is known; SWITCHES_IDLE_NAME for tid 0, SWITCHES_EXITED_NAME for AGG_ALL). */
void switches_thread_names(const struct switches *sw, uint32_t tid, char *process, char *thread);
/* The wall time the counts cover, in the same window: from the last zero (or the first
   event) to the latest event, decayed or zeroed at each refresh as the counts are; what a
   thread's On-CPU is a share of (CPU%). */
int64_t switches_wall_ns(const struct switches *sw);
/* The session turned CSWITCH off (a group-mask event without it, KEV_GROUP_MASK) and no switch
   came since: nothing runs or waits past that moment, and nothing more is counted. */
bool switches_is_stopped(const struct switches *sw);
/* CSwitch and ReadyThread events counted (after decay). */
uint64_t switches_nr_switches(const struct switches *sw);
uint64_t switches_nr_readies(const struct switches *sw);

/* Sorted views, named now, largest first. Each array belongs to sw until the next call on
   sw. Rows with nothing counted are left out. */
uint32_t switches_threads(struct switches *sw, enum switches_sort sort,
                          const struct switches_row **rows);
uint32_t switches_processes(struct switches *sw, enum switches_sort sort,
                            const struct switches_row **rows);
/* The threads of one process. */
uint32_t switches_process_threads(struct switches *sw, uint32_t pid, enum switches_sort sort,
                                  const struct switches_row **rows);
/* Off-CPU time by (state, wait reason) over every thread counted, largest first. */
uint32_t switches_waits(struct switches *sw, const struct switches_wait_row **rows);
/* Who readied thread tid (AGG_ALL: any thread) and from where, most frequent first. */
uint32_t switches_readiers(struct switches *sw, uint32_t tid,
                           const struct switches_readier_row **rows);
/* Where thread tid (AGG_ALL: any thread) blocked, by off-CPU time, largest first: from the
   stacks of its switches (the CSwitch stack hook), the one of its switch-out (as Linux records
   it) or of its switch-in (as Windows does). With AGG_ALL, the places of the exited threads
   folded past SWITCHES_EXITED_MAX are one row, tid AGG_ALL with no place (module 0, rel 0). */
uint32_t switches_blockers(struct switches *sw, uint32_t tid,
                           const struct switches_blocker_row **rows);
/* The frames kept of a blocking stack: its first, innermost. */
#define SWITCHES_BLOCK_FRAMES 6

/* Where one thread blocked, as counted: the first frames of the stack that came with its
   switch (the scheduler's own among them, which switches_blockers skips to name the place),
   and the off-CPU time and waits counted there. */
struct switches_block_stack {
        uint32_t tid;
        uint32_t pid; /* the thread's process; AGG_ALL: unknown */
        uint32_t nr_frames;
        /* innermost first, placed in the process's address space (module 0: the raw
           address) */
        struct sym_loc frames[SWITCHES_BLOCK_FRAMES];
        uint64_t nr_waits;
        uint64_t off_cpu_ns;
};

typedef void (*switches_block_fn)(void *ctx, const struct switches_block_stack *b);

/* Calls fn for every (thread, blocking stack) with waits or off-CPU time counted, in no order:
   the stacks switches_blockers' rows come from, before they are merged by place (the exports'
   off-CPU profile). The exited threads folded past SWITCHES_EXITED_MAX have no stack and are
   not among them. b is valid during the call; fn must not call into sw. */
void switches_each_block_stack(struct switches *sw, switches_block_fn fn, void *ctx);
/* The names of the PMC counters the CSwitch events carry (the trace's PMC counter
   configuration; "" when it named none), as many as switches_row's nr_pmc. */
uint32_t switches_pmc_names(const struct switches *sw, const char *names[KEV_MAX_PMC]);
/* A row's PMC counts as text into buf: "TotalCycles 1.23 G, InstructionRetired 2.34 G, IPC
   1.90" (the IPC when the counters include instructions and cycles); "" without counters. */
void switches_pmc_text(const struct switches *sw, const struct switches_row *row, char *buf,
                       size_t size);
/* Switches per CPU, in CPU order. */
uint32_t switches_cpus(struct switches *sw, const struct switches_cpu_row **rows);
/* The CPUs thread tid ran on: switches in and on-CPU time (busy_ns) per CPU, most switches
   first. */
uint32_t switches_thread_cpus(struct switches *sw, uint32_t tid,
                              const struct switches_cpu_row **rows);
/* A CPU row's idle time by C-state as text into buf: "C1 75% C3 25%", shallow first, the
   states of at least 1% (C7 stands for C7 and deeper); SWITCHES_CSTATE_UNKNOWN when no period
   named its C-state (has_cstates); "" when no idle period ended. */
#define SWITCHES_CSTATE_UNKNOWN "unknown (no C-state data)"
void switches_cstates_text(const struct switches_cpu_row *row, char *buf, size_t size);
/* A thread's name as perf's comm gives it (the model's own string, good until its next event;
   "" where none is known): in a process led by a thread of its own id (Linux), the leader's is
   the process's name, another thread's its own, else its process's; a thread no event told of
   none; in another process (Windows: a thread's description is no comm), the process's name. */
const char *switches_comm(const struct switches *sw, uint32_t pid, uint32_t tid);
/* A hot row's process as text into buf: its name, "pid N" where no event named it, "Idle" for
   pid 0's samples of a module; with is_thread, its thread: "process/thread (tid)" (the process's
   name where no event named the thread, "?" where none is known). */
void switches_owner_text(const struct switches *sw, bool is_thread, uint32_t pid, uint32_t tid,
                         bool has_module, char *buf, size_t size);

#endif
