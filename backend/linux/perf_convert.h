/* SPDX-License-Identifier: MIT */
/* perf_convert.h: pure conversion of perf_event_open ring records into the records the NT Kernel
   Logger writes (LINUX-MAPPING.md, ETL-FORMAT.md 2.3, 2.4, 3), plus etwtop's own provider. */
#ifndef ETWTOP_PERF_CONVERT_H
#define ETWTOP_PERF_CONVERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <linux/perf_event.h>

#include "etw/evntrace.h"
#include "etw/ntwmi.h"

/* The largest ETW record the converter builds (Size is a u16 in every header). */
#define PERF_CONV_MAX_RECORD 0xFFF8u

/* Every event of a session carries these sample_type bits, so that side-band records end in
   the same sample_id trailer and every record can be matched to its event by the identifier. */
#define PERF_CONV_SAMPLE_ID_BITS                                                                   \
        (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)

/* Not in older uapi headers (LINUX-MAPPING.md 1.4). */
#define PERF_CONV_BRANCH_COUNTERS (1ull << 19)

/* ---- etwtop's own provider (doc/etwtop-provider.md) ---- */

/* {b26bff8a-8e89-4b0b-9c1a-396f57aa5f70}: "etwtop-Linux", EVENT_HEADER64 records. */
extern const GUID etwtop_provider_guid;

#define ETWTOP_EVENT_IMAGE_IDENTITY    1 /* version 1 */
#define ETWTOP_EVENT_KERNEL_SYMBOL     2 /* version 1 */
#define ETWTOP_EVENT_EVENTS_LOST       3 /* version 1 */
#define ETWTOP_EVENT_SESSION_CPU       4 /* version 1 */
#define ETWTOP_EVENT_UNWIND_STATS      5 /* version 1 */
#define ETWTOP_EVENT_RECORDS_NOT_SHOWN 6 /* version 1 */

#define ETWTOP_IMAGE_FLAG_BUILD_ID_FROM_RECORD 0x1 /* MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID */
#define ETWTOP_IMAGE_FLAG_BUILD_ID_FROM_FILE   0x2 /* the ELF note read from the file */
#define ETWTOP_IMAGE_FLAG_RUNDOWN              0x4 /* from /proc at start (Image/DCStart) */
#define ETWTOP_IMAGE_FLAG_INHERITED            0x8 /* copied to a forked child (Image/Load) */

#define ETWTOP_LOST_REASON_RECORD_LOST 1 /* a PERF_RECORD_LOST record */
#define ETWTOP_LOST_REASON_FORMAT_LOST 2 /* read() with PERF_FORMAT_LOST, at close */

/* ---- tracepoint formats (/sys/kernel/tracing/events/<sys>/<name>/format) ---- */

#define PERF_TP_MAX_FIELDS 32
#define PERF_TP_MAX_FLAGS  16

struct perf_tp_field {
        char name[32];
        uint16_t offset; /* in the raw data, which starts with common_type */
        uint16_t size;
        bool is_signed;
};

struct perf_tp_format {
        uint32_t id;
        uint32_t nr_fields;
        struct perf_tp_field fields[PERF_TP_MAX_FIELDS];
        /* The first __print_flags table of "print fmt" (sched_switch's prev_state letters). */
        uint32_t nr_flags;
        struct {
                uint64_t value;
                char letter;
        } flags[PERF_TP_MAX_FLAGS];
        uint64_t preempt_bit; /* the "+" bit: the table's highest bit << 1 (TASK_REPORT_MAX) */
        /* perf_tp_field_find's memo, by the address of the name asked for (callers pass string
           literals): a field is looked up by name once, not per record */
        uint32_t nr_memo;
        struct {
                const char *name;
                int32_t index; /* in fields, -1 when there is none (an index survives copies) */
        } memo[16];
};

/* Parses a tracepoint format file's text. Returns 0, or -EBADMSG when it has no fields. */
int perf_tp_format_parse(const char *text, size_t len, struct perf_tp_format *fmt);

/* The field named name, or NULL. */
const struct perf_tp_field *perf_tp_field_find(const struct perf_tp_format *fmt, const char *name);

/* The field's value in raw[0..size) (sign-extended when signed); false when out of bounds. */
bool perf_tp_field_get(const struct perf_tp_field *f, const uint8_t *raw, uint32_t size,
                       int64_t *value);

/* What a sched_switch prev_state means for Windows: KTHREAD_STATE and KWAIT_REASON. */
struct perf_thread_state {
        uint8_t state;       /* KTHREAD_STATE: 1 Ready, 4 Terminated, 5 Waiting */
        uint8_t wait_reason; /* KWAIT_REASON */
};
struct perf_thread_state perf_prev_state_to_etw(const struct perf_tp_format *fmt,
                                                uint64_t prev_state);

/* A Windows-like 0..31 priority from a kernel prio (0..99 RT, 100..139 CFS; synthetic). */
int8_t perf_prio_to_etw(int64_t prio);

/* ---- LBR: EVNTRACE_LBR_FILTER_* (suppress) -> PERF_SAMPLE_BRANCH_* (select) ---- */

struct perf_lbr_filter {
        uint64_t branch_sample_type; /* for perf_event_attr */
        uint32_t drop;               /* EVNTRACE_LBR_FILTER_* type bits removed in user space */
        bool is_post_filtered;       /* TYPE_SAVE asked: entries are filtered by their type */
};

/* Inverts the ETW filter flags (LINUX-MAPPING.md 1.3). Returns 0, or -EINVAL when nothing could
   be recorded (kernel and user both filtered, every type filtered) or a bit is unknown. */
int perf_lbr_filter_from_etw(uint32_t flags, struct perf_lbr_filter *out);

/* The EVNTRACE_LBR_FILTER_* type bit of a perf branch entry's flags word (PERF_BR_* type). */
uint32_t perf_lbr_class_of(uint64_t entry_flags);

/* ---- perf records ---- */

/* One parsed PERF_RECORD_SAMPLE; pointers borrow the record. Fields the sample_type lacks are 0;
   values past nr_values are not set. */
struct perf_sample {
        uint64_t id; /* PERF_SAMPLE_IDENTIFIER */
        uint64_t ip;
        uint32_t pid, tid;
        uint64_t time;
        uint32_t cpu;
        uint64_t period;
        uint32_t nr_values; /* PERF_SAMPLE_READ: counters of the group, leader first */
        uint64_t values[8];
        uint64_t value_ids[8]; /* ... and their ids (PERF_FORMAT_ID), else not set */
        uint64_t nr_callchain;
        const uint8_t *callchain; /* nr_callchain u64 */
        uint32_t raw_size;
        const uint8_t *raw;
        uint64_t nr_branches;
        const uint8_t *branches; /* nr_branches perf_branch_entry of 24 bytes */
        uint64_t regs_abi;       /* PERF_SAMPLE_REGS_USER: 0 no user registers (kernel thread) */
        uint32_t nr_regs;
        const uint8_t *regs;  /* nr_regs u64, the mask's registers in bit order */
        uint64_t stack_size;  /* PERF_SAMPLE_STACK_USER: the bytes copied (dyn_size) */
        const uint8_t *stack; /* the copy, from the user rsp up; NULL: none */
};

/* Parses a PERF_RECORD_SAMPLE (header included) of an event with these attr fields
   (regs_user_mask: attr.sample_regs_user). Returns 0 or -EBADMSG (a length past the record). */
int perf_sample_parse(const uint8_t *rec, uint32_t size, uint64_t sample_type, uint64_t read_format,
                      uint64_t branch_sample_type, uint64_t regs_user_mask, struct perf_sample *s);

/* The sample_id trailer of a non-sample record (sample_id_all), for sample_type's
   TID|TIME|ID|STREAM_ID|CPU|IDENTIFIER bits. */
struct perf_sample_id {
        uint32_t pid, tid;
        uint64_t time;
        uint32_t cpu;
        uint64_t id;
        bool has_time, has_cpu;
};
int perf_sample_id_parse(const uint8_t *rec, uint32_t size, uint64_t sample_type,
                         struct perf_sample_id *sid);

/* Sums the lost counts (PERF_FORMAT_LOST) of what read(2) returned for an fd. Returns 0 or
   -EBADMSG. */
int perf_read_lost(const uint8_t *buf, size_t size, uint64_t read_format, uint64_t *lost);

/* ---- the converter ---- */

enum perf_conv_kind {
        PERF_CONV_NONE = 0,
        PERF_CONV_SIDEBAND,     /* dummy events: COMM/FORK/EXIT/MMAP2 records */
        PERF_CONV_PROFILE,      /* cpu-clock (or the LBR cycles trigger) -> SampledProfile */
        PERF_CONV_PMC_SAMPLE,   /* a hardware source -> PMC interrupt */
        PERF_CONV_CSWITCH,      /* sched:sched_switch -> CSwitch */
        PERF_CONV_READY_THREAD, /* sched:sched_waking -> ReadyThread */
        PERF_CONV_CPU_IDLE,     /* power:cpu_idle -> nothing: the C-state a CPU entered, the
                                   PreviousCState of the CSwitch from its idle thread */
};

/* How the user part of a sample's stack is walked (etwtop's stack-walk mode, doc/unwind.md):
   the kernel's frame-pointer chain, DWARF CFI over a copy of the user registers and stack
   (PERF_SAMPLE_REGS_USER, PERF_SAMPLE_STACK_USER), or the kernel's chain where all its frames
   lie in modules that keep frame pointers and DWARF elsewhere. The values of
   ETWTOP_STACKWALK_*. */
enum perf_conv_walk {
        PERF_CONV_WALK_FP = 0,
        PERF_CONV_WALK_DWARF = 1,
        PERF_CONV_WALK_AUTO = 2,
};
/* The registers a DWARF walk asks for (attr.sample_regs_user): the general registers, x86-64
   perf_regs.h numbering (AX..IP 0-8, R8..R15 16-23), without flags and segments. */
#define PERF_CONV_REGS_USER_MASK (0x1ffull | 0xffull << 16)

/* What the converter must know of one perf event, found by its sample id. */
struct perf_conv_event {
        enum perf_conv_kind kind;
        uint64_t sample_type;
        uint64_t read_format;
        uint64_t branch_sample_type;
        uint16_t profile_source; /* PMC_SAMPLE: KPROFILE_SOURCE */
        bool has_stack;          /* a StackWalk after each sample */
        uint8_t walk;            /* enum perf_conv_walk of its stacks' user part */
        uint64_t regs_user_mask; /* attr.sample_regs_user (DWARF and AUTO walks) */
        bool has_lbr;            /* an LBR record after each sample */
        /* perf record --call-graph lbr's file (a call-stack LBR and a callchain): the stacks'
           user part from the LBR, as perf report makes it; a live session's stacks stay as
           walked */
        bool is_lbr_call_graph;
        uint32_t lbr_options; /* the EVNTRACE_LBR_* flags, as Options */
        struct perf_lbr_filter lbr;
        uint32_t nr_pmc; /* counters after the leader in the group read */
        /* a leader-sampled group (perf record -e '{cycles,instructions}:S'): the events
           (their ids, as event_of takes them) of the counters after the leader in its group
           read, each a sample of its own where its count moved since the instance's last
           (perf script's and perf report's), 0 for one that samples itself; is_read_inherit:
           each thread's counts apart (a 6.12 kernel's inherited group reads) */
        uint8_t nr_members;
        bool is_read_inherit;
        uint16_t members[7];
        const struct perf_tp_format *tp; /* CSWITCH/READY_THREAD/CPU_IDLE: borrowed */
        uint64_t valid_from;             /* samples outside [from, until] are dropped */
        uint64_t valid_until;
        /* FORK and EXIT records of this event are copies and skipped: the kernel gives them to
           every event with attr.comm, mmap, mmap2 or task, so an mmap2-only side-band event gets
           the same ones as the task event beside it */
        bool skips_task_records;
};

/* The converter's view of the outside world. Every hook must be filled. */
/* A kernel function where a thread blocks for a known reason (LINUX-MAPPING.md 3.3): a switch
   out of a sleep (S or D) whose callchain passes through it gets this KWAIT_REASON rather than
   its state's. [start, end) in kernel addresses. */
struct perf_wait_site {
        uint64_t start, end;
        uint8_t reason;
};
/* The KWAIT_REASON a blocking kernel function stands for, or -1: do_nanosleep and kin
   DelayExecution (4), futex waits WrAlertByThreadId (37), io_schedule and the folio/page waits
   WrPageIn (9), mutexes WrMutex (29), rw-semaphores WrResource (27), and sched_yield's
   do_sched_yield (or the syscall entry it is inlined into, __x64_sys_sched_yield; and yield_to)
   WrYieldExecution (33): the one reason of a thread that leaves the CPU runnable without being
   preempted. */
int perf_wait_reason_of_function(const char *name);
/* A hash of the functions and reasons perf_wait_reason_of_function knows: what is made from
   them (a cache of their places) is good only while they stay. */
uint32_t perf_wait_reasons_hash(void);

struct perf_conv_ops {
        /* Takes one complete ETW record for writer CPU cpu. Returns 0 or -errno. */
        int (*emit)(void *ctx, uint32_t cpu, const void *rec, uint32_t size);
        /* The event with this sample id, or NULL (the record is skipped and counted). */
        const struct perf_conv_event *(*event_of)(void *ctx, uint64_t id);
        /* pid's command line (arguments joined by spaces) into buf, "" when unknown. */
        void (*cmdline_of)(void *ctx, uint32_t pid, char *buf, size_t size);
        /* The ELF build-id of the file at path into id; returns its size, 0 when unknown. */
        uint32_t (*build_id_of)(void *ctx, const char *path, uint8_t *id, uint32_t max);
        /* Optional (NULL: the states' reasons only). The blocking functions' places, sorted by
           start, into *sites (borrowed for the converter's life); their number. Asked once,
           at the first switch out of a sleep that has a callchain. */
        uint32_t (*wait_sites)(void *ctx, const struct perf_wait_site **sites);
        /* The effective uid of process pid (its owner: the Process events' SID S-1-22-1-uid),
           or PERF_CONV_NO_UID when it cannot be read (the process is gone). */
        uint32_t (*uid_of)(void *ctx, uint32_t pid);
};

/* uid_of's "unknown": such a process gets the Null SID S-1-0-0 (a SID that names nobody). */
#define PERF_CONV_NO_UID 0xFFFFFFFFu

struct perf_conv_stats {
        uint64_t nr_records;
        uint64_t nr_events; /* ETW records emitted */
        uint64_t nr_unknown_id;
        uint64_t nr_bad;              /* records that did not parse */
        uint64_t nr_out_of_window;    /* samples of a retired/new event outside its window */
        uint64_t nr_lost_records;     /* PERF_RECORD_LOST */
        uint64_t nr_lost;             /* their lost counts */
        uint64_t nr_clamped;          /* timestamps raised to keep a CPU's records in order */
        uint64_t nr_lbr_dropped;      /* branch entries removed by the user-space filter */
        uint64_t nr_lbr_call_stacks;  /* stacks whose user part came from the LBR call stack */
        uint64_t nr_cswitch_repaired; /* CSwitch made from a switch-in record: the sched_switch
                                         sample of that switch never came */
        uint64_t nr_foreign;          /* -p: records of other processes' threads, not written */
        uint64_t nr_cswitch_stacks;   /* CSwitch stacks written: the new thread's, where it had
                                         left the CPU (its last switch-out's callchain) */
};

/* How the user stacks were walked (etwtop's UnwindStats event, doc/etwtop-provider.md). */
#define PERF_CONV_NR_UNWIND_STOPS                                                                  \
        6 /* enum unwind_stop: thread start, stack end, no module, no                              \
             CFI, bad frame, max depth */
struct perf_conv_unwind_stats {
        uint32_t walk;                                  /* enum perf_conv_walk in force */
        uint32_t stack_copy_bytes;                      /* the user stack copied per sample */
        uint64_t nr_walks;                              /* user stacks unwound from a stack copy */
        uint64_t nr_by_stop[PERF_CONV_NR_UNWIND_STOPS]; /* ... by why the walk ended */
        uint64_t nr_fp_chains; /* AUTO: user stacks of frame-pointer code, the kernel's chain */
        uint64_t nr_frames;    /* frames the walks found */
        uint64_t nr_fp_frames; /* of them, by following rbp (code without CFI) */
};

struct perf_conv;

/* A converter for nr_cpus writer CPUs. Returns 0 or -ENOMEM / -EINVAL. */
int perf_conv_new(struct perf_conv **out, const struct perf_conv_ops *ops, void *ctx,
                  uint32_t nr_cpus);
void perf_conv_free(struct perf_conv *c);

/* Where the StackWalk records of samples walked by frame pointers and of switch-ins are built
   in place rather than built here and copied through ops.emit (a writer's etl_writer_reserve
   and etl_writer_commit: one copy of every frame fewer). reserve: room for a record of at most
   max_size bytes for writer CPU cpu, or NULL (the record then goes through emit); commit: the
   record of size bytes (0: none) written there is complete. No other record of that CPU comes
   in between. NULL sink: every record through emit (the default). ctx: the hooks' argument,
   their own (the writer itself: etl_writer_sink_reserve and etl_writer_sink_commit, no hop
   between the converter and the writer for each record). room (or NULL): the room for records
   of max_size bytes in all at the end of cpu's buffer when they fit there as it is, else NULL,
   nothing completed (etl_writer_sink_room); a record and the stack after it are then built
   there, each committed in turn, for one call in place of two reserves. */
struct perf_conv_sink {
        uint8_t *(*reserve)(void *ctx, uint32_t cpu, uint32_t max_size);
        void (*commit)(void *ctx, uint32_t cpu, uint32_t size);
        uint8_t *(*room)(void *ctx, uint32_t cpu, uint32_t max_size);
        void *ctx;
};
void perf_conv_set_sink(struct perf_conv *c, const struct perf_conv_sink *sink);

/* The group masks in force: which of Process, Thread and Image events are written. */
void perf_conv_set_masks(struct perf_conv *c, const PERFINFO_GROUPMASK *masks);

/* The TimerResolution the trace header records (100 ns units; 0: 10000, 1 ms): the clock tick,
   the unit of CSwitch NewThreadWaitTime (ETL-FORMAT.md 3.5). */
void perf_conv_set_timer_resolution(struct perf_conv *c, uint32_t resolution_100ns);

/* -p: the session traces process pid only (tids: its threads at start, nr of them). Records of
   other processes' threads are not written (counted in nr_foreign); they appear only as the
   other side of its own threads' switches and wake-ups. Context-switch records of the whole
   CPU (PERF_RECORD_SWITCH_CPU_WIDE) then name the thread each of its switch-ins replaced, and
   whether that one was preempted. */
void perf_conv_set_process(struct perf_conv *c, uint32_t pid, const int32_t *tids, uint32_t nr);

/* A recorded file's samples may name threads that no FORK, COMM or rundown did (records the
   kernel lost, a process that started while perf synthesized the others): with is_on, the
   first sample of such a thread is preceded by a Thread/DCStart of the sample's own pid and
   tid, as perf report takes both from the sample. */
void perf_conv_set_learn_threads(struct perf_conv *c, bool is_on);

/* A record that converts to nothing whatever its time: a context switch's switch-out record
   (sched_switch says more of it), when whole, except with -p the whole CPU's ones (they say
   how the other side of its threads' switch-ins left). It is counted as converted; callers
   need not order or convert it (1 of the 4 records of a switch). */
bool perf_conv_skips(struct perf_conv *c, const uint8_t *rec, uint32_t size);
/* The same for a record whose event (perf_conv_record_id's) the caller has looked up: ev. */
bool perf_conv_skips_ev(struct perf_conv *c, const uint8_t *rec, uint32_t size,
                        const struct perf_conv_event *ev);
/* Whether a switch-in record of thread tid on CPU cpu (its trailer's), in a live session's
   layout (perf_conv_live_time_at's) and inside its event's window, converts to nothing now:
   the CSwitch of its switch was written (its sched_switch sample, converted just before, made
   tid that CPU's thread). Counted as converted when it does; otherwise the caller converts it
   (perf_conv_record_ev) in its place among the records. A live session's drain asks it right
   after each sched_switch sample that its switch-in follows in the ring: 1 of the 4 records
   of a switch not merged. */
bool perf_conv_switch_in_seen(struct perf_conv *c, uint32_t cpu, uint32_t tid);

/* The timestamp of a perf record (0 when it has none) and the CPU it belongs to (ring_cpu when
   the record does not say). */
uint64_t perf_conv_record_time(const struct perf_conv *c, const uint8_t *rec, uint32_t size,
                               uint32_t ring_cpu, uint32_t *cpu);
/* The same, and the record's event into *ev (NULL when unknown), for perf_conv_record_ev: the
   event of each record is then looked up once. */
uint64_t perf_conv_record_time_ev(const struct perf_conv *c, const uint8_t *rec, uint32_t size,
                                  uint32_t ring_cpu, uint32_t *cpu,
                                  const struct perf_conv_event **ev);
/* The same for a record whose event (ops.event_of of its identifier: the u64 after the header
   of a sample, the last one of any other record) the caller has looked up: ev. */
uint64_t perf_conv_record_time_of(const struct perf_conv *c, const struct perf_conv_event *ev,
                                  const uint8_t *rec, uint32_t size, uint32_t ring_cpu,
                                  uint32_t *cpu);
/* Where a live session's record keeps its time, the CPU in the u64 after it (ev's layout: a
   sample's identifier, ip, tid, then time and cpu; any other record's sample_id trailer of tid,
   time, cpu and identifier, whatever the event's samples hold): its offset, or 0 when ev's
   layout is another's, where perf_conv_record_time_of finds it. Inline: it runs for every
   record a live session gathers. */
static inline uint32_t perf_conv_live_time_at(const struct perf_conv_event *ev, const uint8_t *rec,
                                              uint32_t size)
{
        const uint64_t head = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                              PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
                              PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU;
        const uint64_t live = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                              PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
        const uint64_t trailer = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
                                 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;
        if (!ev || size < 48)
                return 0;
        if (((const struct perf_event_header *)(const void *)rec)->type == PERF_RECORD_SAMPLE)
                return (ev->sample_type & head) == live ? 32 : 0;
        /* (the side-band events' samples have no ip: their trailers are the same) */
        return (ev->sample_type & trailer) == PERF_CONV_SAMPLE_ID_BITS ? size - 24 : 0;
}

/* The identifier of a record (0 when it is too short to have one). */
static inline uint64_t perf_conv_record_id(const uint8_t *rec, uint32_t size)
{
        if (size < 16)
                return 0;
        uint64_t id;
        memcpy(&id,
               ((const struct perf_event_header *)(const void *)rec)->type == PERF_RECORD_SAMPLE
                       ? rec + 8
                       : rec + size - 8,
               8);
        return id;
}

/* Converts one perf record (header included) read from ring_cpu's ring, and emits its ETW
   records. Returns 0, or -EBADMSG (counted and skipped) or the emit hook's -errno.
   CSwitch comes from sched:sched_switch samples; PERF_RECORD_SWITCH(_CPU_WIDE) switch-in
   records (attr.context_switch) only add the CSwitch of a switch whose sample never came
   (nothing is recorded while a secondary CPU's idle task runs; with -p, the switch-ins of the
   process's threads). A CSwitch's StackWalk is the new thread's: the callchain of its last
   switch-out, kept until then. Records of one CPU must come in time order. */
int perf_conv_record(struct perf_conv *c, uint32_t ring_cpu, const uint8_t *rec, uint32_t size);
/* perf_conv_record with the record's event given: what perf_conv_record_time_ev found for it,
   while the session's events have not changed since. */
int perf_conv_record_ev(struct perf_conv *c, uint32_t ring_cpu, const uint8_t *rec, uint32_t size,
                        const struct perf_conv_event *ev);

/* The timestamp to write for an event at ts on cpu: never below what was written there before. */
uint64_t perf_conv_stamp(struct perf_conv *c, uint32_t cpu, uint64_t ts);

/* Rundown and state from /proc, written through the same hooks. hook: the ETW hook id
   (0x0303 DCStart, 0x0304 DCEnd, ...). These also seed the converter's tables: names for
   threads created later, images for forked children. */
struct perf_conv_process {
        uint32_t pid, ppid, session_id;
        const char *name;    /* comm (ImageFileName) */
        const char *cmdline; /* "" when unknown */
        uint32_t uid;        /* effective uid (UserSID S-1-22-1-uid); PERF_CONV_NO_UID unknown */
};
int perf_conv_process(struct perf_conv *c, uint16_t hook, uint32_t cpu, uint64_t ts,
                      const struct perf_conv_process *p);

struct perf_conv_thread {
        uint32_t pid, tid;
        int64_t prio; /* kernel prio, -1 unknown */
        const char *name;
};
int perf_conv_thread(struct perf_conv *c, uint16_t hook, uint32_t cpu, uint64_t ts,
                     const struct perf_conv_thread *t);

struct perf_conv_image {
        uint32_t pid;
        uint64_t base, size, pgoff;
        const char *path;
        const uint8_t *build_id; /* may be NULL */
        uint32_t build_id_size;
        uint32_t flags; /* ETWTOP_IMAGE_FLAG_* */
};
/* Writes the Image event (hook 0x030A, 0x1403, 0x1404) and etwtop's image identity event. */
int perf_conv_image(struct perf_conv *c, uint16_t hook, uint32_t cpu, uint64_t ts,
                    const struct perf_conv_image *im);

/* DCEnd rundown of every process, thread and image the converter knows (what was running at
   start plus what started since and has not ended), on cpu at ts. */
int perf_conv_rundown_end(struct perf_conv *c, uint32_t cpu, uint64_t ts);

/* Kernel symbols (/proc/kallsyms, sorted by address) for etwtop's KernelSymbol events. */
struct perf_ksym {
        uint64_t addr;
        uint64_t size;
        const char *name;   /* borrowed */
        const char *module; /* "" for the kernel image */
};
/* Writes one KernelSymbol event for every symbol that a sample or stack frame fell in.
   Returns how many were written, or -errno. */
int perf_conv_kernel_symbols(struct perf_conv *c, const struct perf_ksym *syms, size_t nr,
                             uint32_t cpu, uint64_t ts);

/* The kernel addresses a sample or stack frame hit so far (those perf_conv_kernel_symbols looks
   up), in ascending order: an owned array of *nr (NULL when none). */
uint64_t *perf_conv_kernel_addrs(const struct perf_conv *c, size_t *nr);

/* The last of nr records of stride bytes, each starting with its uint64_t address and sorted
   by it, whose address is at or below a, searched from lo on (lo's address at or below a, or lo
   0; 0 when none is, which the caller tells by its address): a gallop, then a binary search,
   so that ascending addresses walk the records once and touch their pages in order. */
size_t perf_conv_last_at_or_below(const void *base, size_t stride, size_t nr, size_t lo,
                                  uint64_t a);

/* The lowest and highest kernel address hit in kernel context so far: sample IPs and the frames
   of callchains outside their user part (where garbage of user stacks can look like kernel
   addresses). Returns false when there was none. */
bool perf_conv_kernel_range(const struct perf_conv *c, uint64_t *lo, uint64_t *hi);

/* Writes etwtop's EventsLost event. */
int perf_conv_events_lost(struct perf_conv *c, uint32_t cpu, uint64_t ts, uint32_t reason,
                          uint64_t nr_lost);

/* Writes etwtop's RecordsNotShown event: count records of a perf.data's record type (perf's
   number, UINT32_MAX for types past those known; name: perf's name of it) that no event
   stands for. */
int perf_conv_records_not_shown(struct perf_conv *c, uint32_t cpu, uint64_t ts, uint32_t type,
                                uint64_t count, const char *name);

void perf_conv_get_stats(const struct perf_conv *c, struct perf_conv_stats *st);
/* Whether CSwitch stacks are on from time from: the CSwitch a switch-in record repairs (its
   sched_switch sample never came) has the new thread's stack by this rather than by the last
   sched_switch sample seen, which may be of the events a settings change retired. */
void perf_conv_set_switch_stacks(struct perf_conv *c, bool is_on, uint64_t from);
/* The stack-walk mode in force and its copy size, for the UnwindStats events (the events' own
   walk field decides each sample's walk). */
void perf_conv_set_walk(struct perf_conv *c, enum perf_conv_walk walk, uint32_t stack_copy_bytes);

struct unwind_cache;
struct unwind_module;

/* Every file the converter reads (its DWARF walks' images and the vdso) comes through these
   hooks, so that a recording feeds it as the live rings do. perf_conv_new fills them with
   perf_conv_files_live (this machine: the image's path, /proc/PID/map_files, /proc/PID/exe,
   the vdso of this process); perf_conv_set_files replaces them; every hook is filled. */
struct perf_conv_files {
        /* The unwind module (from cache, which owns it) of the image at path that process pid
           maps at [base, base + size), its build-id checked where known; NULL when none. */
        struct unwind_module *(*image_module)(void *ctx, struct unwind_cache *cache,
                                              const char *path, uint32_t pid, uint64_t base,
                                              uint64_t size, const uint8_t *build_id,
                                              uint32_t build_id_size);
        /* The vdso's ELF image and its size, or NULL: the vdso mapped in every process. */
        const uint8_t *(*vdso_image)(void *ctx, size_t *size);
};
/* This machine's (the live source's), and a recording's: the recorded paths only. */
extern const struct perf_conv_files perf_conv_files_live, perf_conv_files_offline;
/* files (borrowed for the converter's life) and their ctx from now on. */
void perf_conv_set_files(struct perf_conv *c, const struct perf_conv_files *files, void *ctx);
void perf_conv_get_unwind_stats(const struct perf_conv *c, struct perf_conv_unwind_stats *st);
/* Writes etwtop's UnwindStats event (the counts so far) on cpu at ts. */
int perf_conv_unwind_stats(struct perf_conv *c, uint32_t cpu, uint64_t ts);

/* ---- ETW payload builders shared with the live source ---- */

/* Group-mask event (0x0005 new or 0x0020 previous): PERFINFO64, Masks[8] + kernel version 85. */
uint32_t perf_etw_group_masks(uint8_t *dst, uint16_t hook, uint64_t ts,
                              const PERFINFO_GROUPMASK *masks);

/* Profile interval event (0x0F48 set, 0x0F49 rundown start, 0x0F4A end), version 3. */
uint32_t perf_etw_profile_interval(uint8_t *dst, uint16_t hook, uint64_t ts, uint32_t source,
                                   uint32_t new_interval, uint32_t old_interval,
                                   const char *source_name);

/* PMC counter configuration (0x0F30 v2): the counters' names in order. */
uint32_t perf_etw_pmc_config(uint8_t *dst, uint64_t ts, const char *const *names, uint32_t nr);

/* etwtop's SessionCpu event (doc/etwtop-provider.md): cpu was online at the start of a session
   that writes nr_cpus CPU buffers (its highest online CPU + 1) for nr_online online CPUs, and
   traces the process traced_pid's threads only (0: the whole system). */
uint32_t perf_etw_session_cpu(uint8_t *dst, uint64_t ts, uint32_t cpu, uint32_t nr_cpus,
                              uint32_t nr_online, uint32_t traced_pid);

/* The running kernel's build-id (ksyms.c; /sys/kernel/notes) in bid, and its size, where a
   recording's kernel is this one: its release is the running kernel's (uname) and the symbol its
   map is relative to (ref_name, "_text" or "_stext") lies at ref_addr now too (the same kernel,
   the same KASLR offset). 0 otherwise, or where this user does not see kernel addresses. */
uint32_t ksyms_running_build_id_at(const char *release, const char *ref_name, uint64_t ref_addr,
                                   uint8_t bid[20]);

#endif
