/* SPDX-License-Identifier: MIT */
/* perf_conv_int.h: the converter's insides, shared by its files (perf_convert.c and
   perf_conv_*.c): limits, the tables' entries, struct perf_conv, the helpers they call. */
#ifndef ETWTOP_PERF_CONV_INT_H
#define ETWTOP_PERF_CONV_INT_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>
#include "le_bytes.h"
#include "perf_convert.h"
#include "etl_writer.h"
#include "unwind/unwind.h"
#include "util/xalloc.h"
#include "util/hash.h"

_Static_assert(PERF_CONV_NR_UNWIND_STOPS == UNWIND_NR_STOPS, "UnwindStats stops are unwind_stop's");
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "records are read as little-endian");

/* doc/etwtop-provider.md */

#define CONV_NONE        0xFFFFFFFFu /* an empty slot key, an unknown tid/pid */
#define CONV_MAX_FRAMES  1024u
#define CONV_MAX_CMDLINE 4096u
#define CONV_MAX_PATH    4096u
/* a StackWalk record's PERFINFO header and payload head (EventTimeStamp, pid, tid) */
#define STACK_REC_HEAD  32u
#define CONV_KADDR_MAX  (1u << 20) /* kernel addresses remembered for the symbol events */
#define CONV_MAX_IMAGES 4096u      /* per process */
#define BUILD_ID_MAX    20u
#define KERNEL_VERSION  85u      /* ETW_KERNEL_HEADER_EXTENSION Version, as Windows 10 writes it */
#define DEFAULT_TICK_NS 1000000u /* NewThreadWaitTime unit: TimerResolution 10000 (1 ms) */
/* Switch-out stacks kept for the threads' next switch-in (the CSwitch stack Windows writes). */
#define CONV_MAX_SAVED_STACKS 16384u
/* UserSID (ETL-FORMAT.md 3.8): the TOKEN_USER's Sid pointer. Windows writes the SID's kernel
   address; readers only test it for 0 (PerfView's SkipSID; etwtop's decoder tests its low
   32 bits), so any non-zero value will do. */
#define SID_POINTER             0xFFFF800000001000ull
#define SID_UNIX_USER_AUTHORITY 22 /* S-1-22-1-uid: the "Unix user" SIDs of Samba and NFS */

/* EVNTRACE_LBR_FILTER_* type bits (LINUX-MAPPING.md 1.3). */
#define LBR_JCC   EVNTRACE_LBR_FILTER_JCC
#define LBR_RCALL EVNTRACE_LBR_FILTER_NEAR_REL_CALL
#define LBR_ICALL EVNTRACE_LBR_FILTER_NEAR_IND_CALL
#define LBR_RET   EVNTRACE_LBR_FILTER_NEAR_RET
#define LBR_IJMP  EVNTRACE_LBR_FILTER_NEAR_IND_JMP
#define LBR_RJMP  EVNTRACE_LBR_FILTER_NEAR_REL_JMP
#define LBR_FAR   EVNTRACE_LBR_FILTER_FAR_BRANCH
#define LBR_TYPES (LBR_JCC | LBR_RCALL | LBR_ICALL | LBR_RET | LBR_IJMP | LBR_RJMP | LBR_FAR)

/* KTHREAD_STATE and KWAIT_REASON values used below (ETL-FORMAT.md 3.5). */
enum {
        KSTATE_READY = 1,
        KSTATE_TERMINATED = 4,
        KSTATE_WAITING = 5,
};
enum {
        KWAIT_EXECUTIVE = 0,
        KWAIT_DELAY_EXECUTION = 4,
        KWAIT_SUSPENDED = 5,
        KWAIT_USER_REQUEST = 6,
        KWAIT_WR_PAGE_IN = 9,
        KWAIT_WR_RESOURCE = 27,
        KWAIT_WR_MUTEX = 29,
        KWAIT_WR_ALERT_BY_THREAD_ID = 37,
        KWAIT_WR_TERMINATED = 22,
        KWAIT_WR_KERNEL = 26,
        KWAIT_WR_PREEMPTED = 32,
        KWAIT_WR_YIELD_EXECUTION = 33,
};

/* trace_flag_type (include/linux/trace_events.h, 6.x): common_flags bits of a tracepoint. */
#define TRACE_FLAG_HARDIRQ 0x08
#define TRACE_FLAG_SOFTIRQ 0x10

/* ---- little-endian helpers ---- */

static inline void st16(uint8_t *p, uint16_t v)
{
        memcpy(p, &v, 2);
}

static inline void st32(uint8_t *p, uint32_t v)
{
        memcpy(p, &v, 4);
}

static inline void st64(uint8_t *p, uint64_t v)
{
        memcpy(p, &v, 8);
}

static inline bool is_kernel_addr(uint64_t a)
{
        return a >> 63;
}

/* ---- the converter's tables ---- */

/* An open-addressing map from a u32 key (the first member of each entry) to fixed-size
   entries, linear probing, backward-shift deletion. CONV_NONE marks a free slot. */
struct umap {
        uint8_t *slots; /* owned */
        uint32_t esize;
        uint32_t mask;
        uint32_t nr;
        uint32_t gen; /* changes at every get (an entry handed out to change) and remove */
};

static inline uint32_t *umap_key(const struct umap *m, uint32_t i)
{
        return (uint32_t *)(void *)(m->slots + (size_t)i * m->esize);
}

/* The entry of key, or NULL. Inline: a context switch looks up its two threads' kept stacks,
   and the probe is a few instructions where the call's were as many. */
static inline void *conv_umap_find(const struct umap *m, uint32_t key)
{
        if (key == CONV_NONE)
                return NULL;
        for (uint32_t i = (uint32_t)hash_mix64_half(key) & m->mask;; i = (i + 1) & m->mask) {
                uint32_t *k = umap_key(m, i);
                if (*k == key)
                        return k;
                if (*k == CONV_NONE)
                        return NULL;
        }
}

struct conv_task {
        uint32_t tid; /* key */
        uint32_t pid;
        int32_t prio;
        char comm[16];
};

struct conv_image {
        uint64_t base, size, pgoff;
        char *path; /* a share of a conv_path_new string (conv_path_put) */
        uint8_t build_id[BUILD_ID_MAX];
        uint8_t build_id_size;
        uint8_t flags;            /* ETWTOP_IMAGE_FLAG_BUILD_ID_FROM_*, CONV_IMAGE_PENDING */
        uint8_t uw_state;         /* UW_UNTRIED, UW_READY, UW_NONE: its unwind module */
        struct unwind_module *uw; /* borrowed from the converter's unwind cache */
        uint64_t uw_bias;         /* runtime address - file vaddr */
};
enum { UW_UNTRIED = 0, UW_READY, UW_NONE };
/* An image a forked child has from its parent whose Image/Load is not written yet: it is
   written before the child's first sample (conv_inherited_flush), and never where the child
   execs, maps over it or ends first, as most forked children of a shell do. */
#define CONV_IMAGE_PENDING 0x80u
/* The flags of a conv_image an Image event carries. */
#define CONV_IMAGE_EVENT_FLAGS                                                                     \
        (ETWTOP_IMAGE_FLAG_BUILD_ID_FROM_RECORD | ETWTOP_IMAGE_FLAG_BUILD_ID_FROM_FILE)

/* Threads with a tid below this have their wait times in a direct-mapped array (pid_max is
   32768 by default below 32 CPUs). */
#define CONV_WAIT_DIRECT 65536u

/* A thread off the CPU: since when it has waited (NewThreadWaitTime). */
struct conv_wait {
        uint32_t tid; /* key */
        uint32_t reserved;
        uint64_t since_ns; /* switched out, or readied later */
};

struct conv_proc {
        uint32_t pid; /* key */
        uint32_t ppid;
        uint32_t session_id;
        uint32_t uid; /* PERF_CONV_NO_UID: unknown */
        uint32_t nr_images, cap_images;
        uint32_t nr_pending; /* images with CONV_IMAGE_PENDING */
        char comm[16];
        char *cmdline;             /* owned, may be NULL */
        struct conv_image *images; /* owned */
};

/* A thread's callchain at its last switch-out: the stack of the CSwitch that switches it in
   again (LINUX-MAPPING.md 3.3, "Stack semantics"). */
struct conv_stack {
        uint32_t tid; /* key */
        uint32_t pid;
        uint32_t nr;
        uint8_t cls;      /* frames holds CONV_STACK_MIN << cls frames */
        uint64_t *frames; /* owned (or the pool's, when it is in c->stack_pool), nr */
        /* a share of a kept chain's frames when the switch-out's chain was one (its nr frames
           are those, not frames'); NULL: none */
        struct conv_kframes *kf;
};

/* The kept stacks' frame arrays by size (CONV_STACK_MIN << class frames): a switch-in hands its
   array back for the next switch-out, so that a context switch allocates nothing. */
#define CONV_STACK_MIN      16u
#define CONV_STACK_CLASSES  7u   /* 16 .. 1024 frames (CONV_MAX_FRAMES) */
#define CONV_STACK_POOL_MAX 256u /* spare arrays a class keeps */
struct conv_stack_pool {
        uint64_t *free[CONV_STACK_CLASSES]; /* owned lists, linked through frames[0] */
        uint32_t nr_free[CONV_STACK_CLASSES];
};

/* -p, context-switch records of the whole CPU: the last switch-out seen on a CPU. */
struct conv_out {
        uint32_t tid, next_tid;
        bool is_preempted; /* PERF_RECORD_MISC_SWITCH_OUT_PREEMPT: still runnable */
        bool has;
};

/* Whether a thread is the kernel's, as the tables said while they were at these generations. */
struct kthread_memo {
        uint32_t tid; /* 0: empty (the idle thread is never looked up) */
        uint32_t tasks_gen, procs_gen;
        bool is_kernel;
};

/* A tracepoint's callchain (its entries, from its kernel context on) kept with the frames made
   of them (chain_kept_to): a chain found here again is copied without noting its kernel
   addresses one by one, as each of them was noted when it was kept. */
#define CONV_KCHAIN_SET_BITS 4u  /* 16 sets of two */
#define CONV_KCHAIN_MAX      40u /* entries a kept chain holds at most, its markers among them */
/* A kept chain's frames, shared by its slot and by the switch-out stacks that were that chain
   (a CSwitch's frames wait for its thread's switch-in without a copy of their own): they go
   when the last of them lets go (conv_kframes_put). */
struct conv_kframes {
        uint32_t refs;
        uint32_t nr;
        /* the switch's reason from the chain's blocking function (conv_wait_reason_of_stack's
           scan), a sleeping thread's [0] and a runnable one's [1]: -1 none, -2 not asked yet */
        int8_t site_reason[2];
        uint64_t frames[CONV_KCHAIN_MAX];
};
#define CONV_KFRAMES_SPARE 64u /* spare ones kept for the next chains kept */
struct conv_kchain {
        uint64_t key;            /* kchain_key's of ent */
        uint32_t nr_ent;         /* 0: empty */
        struct conv_kframes *kf; /* a share; NULL: empty */
        uint64_t ent[CONV_KCHAIN_MAX];
};

struct state_memo {
        const struct perf_tp_format *tp; /* NULL: empty */
        uint64_t prev_state;
        struct perf_thread_state st;
};

struct tp_cache {
        const struct perf_tp_format *tp;  /* borrowed; NULL: empty */
        const struct perf_tp_field *f[8]; /* tp_fields' answers, in tp */
        /* sched_switch's five fields in the layout every kernel gives them (pids and prios
           signed 4-byte, the state 8-byte): their offsets, and the end of the last one (0: not
           that layout) */
        uint16_t switch_off[5];
        uint16_t switch_end;
        /* sched_waking's pid (signed 4-byte) and common_flags (1 byte) the same way */
        uint16_t ready_off[2];
        uint16_t ready_end;
};

struct conv_group_prev;

struct perf_conv {
        struct perf_conv_ops ops;
        struct perf_conv_sink sink; /* has_sink: StackWalk records built in place */
        bool has_sink;
        void *ctx;                           /* borrowed: the hooks' argument */
        const struct perf_conv_files *files; /* borrowed: where images are read from */
        void *files_ctx;
        uint32_t nr_cpus;
        uint64_t *last_ts; /* owned, per writer CPU */
        uint32_t *cpu_tid; /* owned, per writer CPU: the thread the last CSwitch switched in */
        uint8_t *cstate;   /* owned, per writer CPU: the C-state power:cpu_idle last entered */
        uint64_t tick_ns;  /* NewThreadWaitTime unit: the trace's TimerResolution */
        bool has_process, has_thread, has_image;
        uint32_t nr_pending_procs; /* processes whose fork left Image/Loads to write (a
                                      sample looks for its process's only while there are) */
        struct umap tasks;         /* struct conv_task */
        /* owned: a leader-sampled group's counters' values last read (perf_conv_group.c) */
        struct conv_group_prev *group_prev;
        uint32_t group_prev_mask, nr_group_prev;
        struct umap procs; /* struct conv_proc */
        /* the waiting threads: tids below CONV_WAIT_DIRECT in a direct-mapped array (a switch
           in and out is an index), the others in waits */
        uint64_t *wait_since;  /* owned, CONV_WAIT_DIRECT: since when tid has waited */
        uint64_t *wait_is_set; /* owned bitmap, CONV_WAIT_DIRECT bits: wait_since[tid] holds */
        struct umap waits;     /* struct conv_wait, tids from CONV_WAIT_DIRECT up */
        uint64_t *kaddrs;      /* owned set of kernel addresses hit; 0 = free */
        uint32_t kaddrs_mask, nr_kaddrs;
        uint64_t kframe_lo, kframe_hi; /* kernel addresses hit in kernel context; lo > hi: none */
        struct perf_conv_stats st;
        uint8_t *rec;         /* owned scratch: the ETW record */
        uint8_t *payload;     /* owned scratch: its payload */
        uint8_t *stack_rec;   /* owned scratch: a StackWalk record, frames gathered in place */
        uint64_t *frames;     /* in stack_rec, after the record and payload headers */
        uint64_t kseen[1024]; /* direct-mapped: kernel-context addresses surely in kaddrs and
                                 within kframe_lo..hi (note_kaddr, note_kernel_frame) */
        /* tracepoints' callchains copied before (chain_kept_to), by a hash */
        struct conv_kchain kchains[1u << CONV_KCHAIN_SET_BITS][2];
        uint8_t kchain_last[1u << CONV_KCHAIN_SET_BITS]; /* the way of a set used last */
        struct conv_kframes *kf_spare;                   /* owned list, linked through frames[0] */
        uint32_t nr_kf_spare;
        struct state_memo ps_memo[8]; /* perf_prev_state_to_etw's answers: few values repeat */
        /* the blocking functions' places (ops.wait_sites), asked for once */
        const struct perf_wait_site *wait_sites;
        uint32_t nr_wait_sites;
        bool has_asked_wait_sites;
        struct {
                uint64_t addr;
                int16_t reason;      /* -1: none */
        } wait_memo[256];            /* a kernel return address's answer: the same few come back */
        struct tp_cache tp_cache[3]; /* the fields of the last three tracepoint formats */
        struct kthread_memo kthread_memo[64]; /* conv_is_kernel_thread's, by tid */
        char *text;                           /* owned scratch: command lines */
        struct umap stacks;                   /* struct conv_stack: threads' switch-out stacks */
        uint32_t nr_kept_stacks; /* the entries of stacks that hold one not written yet */
        struct conv_stack_pool stack_pool;
        bool has_switch_stacks; /* the last sched_switch sample had CSwitch stacks on */
        bool has_switch_plan;   /* perf_conv_set_switch_stacks: from switch_plan_from on, */
        bool is_switch_plan_on; /* CSwitch stacks are is_switch_plan_on */
        uint64_t switch_plan_from;
        uint32_t traced_pid;       /* -p: the process traced; 0: every process */
        bool is_learning_threads;  /* perf_conv_set_learn_threads */
        struct conv_out *last_out; /* owned, per writer CPU, with -p */
        /* DWARF stack walks (--stackwalk-mode): the modules' compiled rules, made on the first
           walk; the vdso's, from this process's own copy (the same kernel's) */
        struct unwind_cache *uw_cache;
        struct unwind_module *uw_vdso; /* owned; NULL: not made (yet) */
        bool has_tried_vdso;
        struct perf_conv_unwind_stats uw_st;
        uint64_t uw_stats_ts;      /* when the last UnwindStats event was written */
        uint64_t uw_walks_written; /* nr_walks + nr_fp_chains it said */
};

/* ---- shared by the converter's files ---- */

void *conv_umap_get(struct umap *m, uint32_t key, bool *is_new);
void conv_umap_remove(struct umap *m, void *entry);
void conv_proc_free_images(struct conv_proc *p);
void conv_proc_release(struct conv_proc *p);
int conv_emit(struct perf_conv *c, uint32_t cpu, uint32_t size);
const struct perf_conv_event *conv_event_of_id(struct perf_conv *c, uint64_t id);
uint32_t conv_put_cstr(uint8_t *dst, const char *s, size_t max);
const char *conv_clip(char *buf, const char *s, size_t max);
uint32_t conv_record_system64_pmc(uint8_t *dst, uint16_t hook, uint8_t version, uint32_t tid,
                                  uint32_t pid, uint64_t ts, const uint64_t *pmc, uint32_t nr_pmc,
                                  const uint8_t *payload, uint32_t size);
int conv_emit_process(struct perf_conv *c, uint16_t hook, uint32_t cpu, uint64_t ts,
                      uint32_t hdr_tid, uint32_t hdr_pid, uint32_t pid, uint32_t ppid,
                      uint32_t session, int32_t exit_status, uint32_t uid, const char *name,
                      const char *cmdline);
int conv_emit_thread(struct perf_conv *c, uint16_t hook, uint32_t cpu, uint64_t ts,
                     uint32_t hdr_tid, uint32_t hdr_pid, uint32_t pid, uint32_t tid, int64_t prio,
                     const char *name);
int conv_emit_thread_name(struct perf_conv *c, uint32_t cpu, uint64_t ts, uint32_t pid,
                          uint32_t tid, const char *name);
int conv_emit_image(struct perf_conv *c, uint16_t hook, uint32_t cpu, uint64_t ts, uint32_t hdr_tid,
                    const struct perf_conv_image *im);
/* A PERF_RECORD_SAMPLE of size bytes (its header's) converted; one that does not parse is
   counted in nr_bad and -EBADMSG. */
/* The samples of ev's group members at leader sample s (perf_conv_group.c), each with the
   nr_frames frames in c->frames as its stack. */
int conv_group_members(struct perf_conv *c, const struct perf_conv_event *ev,
                       const struct perf_sample *s, uint32_t cpu, uint64_t ts, uint32_t nr_frames);
int conv_sample(struct perf_conv *c, uint32_t ring_cpu, const uint8_t *rec, uint32_t size,
                const struct perf_conv_event *ev);
int conv_switch(struct perf_conv *c, uint32_t ring_cpu, const uint8_t *rec, uint32_t size,
                const struct perf_conv_event *ev);
const struct perf_conv_event *conv_record_event(struct perf_conv *c, const uint8_t *rec,
                                                uint32_t size);
int conv_sample_id(const struct perf_conv_event *ev, const uint8_t *rec, uint32_t size,
                   struct perf_sample_id *sid);
const struct perf_conv_event *conv_sid_event(struct perf_conv *c, const struct perf_conv_event *ev,
                                             const struct perf_sample_id *sid);
/* One etwtop/KernelSymbol event (perf_convert.c). */
int conv_emit_kernel_symbol(struct perf_conv *c, uint32_t cpu, uint64_t ts,
                            const struct perf_ksym *sym);
/* PERF_RECORD_KSYMBOL: a BPF program's text registered, its KernelSymbol (in the kernel's "bpf"
   module) at its time, before the samples in it (an unregistered one: nothing). */
int conv_ksymbol(struct perf_conv *c, uint32_t ring_cpu, const uint8_t *rec, uint32_t size,
                 const struct perf_conv_event *ev);
int conv_comm(struct perf_conv *c, uint32_t ring_cpu, const uint8_t *rec, uint32_t size,
              const struct perf_conv_event *ev);
int conv_task(struct perf_conv *c, uint32_t ring_cpu, const uint8_t *rec, uint32_t size,
              const struct perf_conv_event *ev);
int conv_mmap2(struct perf_conv *c, uint32_t ring_cpu, const uint8_t *rec, uint32_t size,
               const struct perf_conv_event *ev);
int conv_lost(struct perf_conv *c, uint32_t ring_cpu, const uint8_t *rec, uint32_t size,
              const struct perf_conv_event *ev);
struct conv_proc *conv_proc_get(struct perf_conv *c, uint32_t pid);
void conv_proc_set_cmdline(struct conv_proc *p, const char *cmdline);
void conv_proc_add_image(struct conv_proc *p, const struct perf_conv_image *im);
/* p (a forked child, no images) gets parent's images, their paths shared; is_pending: their
   Image/Loads wait for conv_inherited_flush. */
void conv_proc_inherit(struct conv_proc *p, const struct conv_proc *parent, bool is_pending);
/* After a change of p's images that may have dropped its pending ones (was: p->nr_pending
   before): the converter's count of processes with some. */
static inline void conv_pending_settle(struct perf_conv *c, uint32_t was, const struct conv_proc *p)
{
        if (was && !p->nr_pending)
                c->nr_pending_procs--;
}
/* Writes the Image/Loads process pid's fork left pending, on cpu at ts for thread tid; 0 or the
   writer's error. */
int conv_inherited_flush(struct perf_conv *c, uint32_t pid, uint32_t cpu, uint64_t ts,
                         uint32_t tid);
/* An image path (len bytes) as a string shared by count: conv_path_share takes one more,
   conv_path_put gives one back. */
char *conv_path_new(const char *s, size_t len);
void conv_path_share(char *path);
void conv_path_put(char *path);
void conv_task_set(struct perf_conv *c, uint32_t tid, uint32_t pid, const char *comm, int64_t prio);
/* perf_conv_set_learn_threads: tid, of pid, made known (a Thread/DCStart) if it is not. */
int conv_thread_learn(struct perf_conv *c, uint32_t cpu, uint64_t ts, uint32_t pid, uint32_t tid);
const char *conv_comm_of(struct perf_conv *c, uint32_t tid, uint32_t pid);
void conv_tasks_drop_process(struct perf_conv *c, uint32_t pid);
bool conv_is_traced(const struct perf_conv *c, uint32_t tid);
bool conv_is_own(struct perf_conv *c, uint32_t pid);
void conv_stack_keep(struct perf_conv *c, uint32_t tid, uint32_t pid, uint32_t nr);
/* A switch whose chain is kept (kf, not shared yet) and whose old thread goes on: a share of kf
   kept for old_tid's next switch-in (its pid's), as conv_stack_keep keeps frames; then new_tid's
   kept stack, as conv_switch_in_find finds it. One call at every such switch rather than two. */
struct conv_stack *conv_switch_share(struct perf_conv *c, uint32_t old_tid, uint32_t pid,
                                     struct conv_kframes *kf, uint32_t new_tid);
/* The frames of a frame-pointer CSwitch's chain when it is one that chains are kept for (the
   kept one, or kept now: its kernel addresses noted either way), not shared yet; NULL when it is
   not such a chain (collect it as usual). */
struct conv_kframes *conv_chain_kept(struct perf_conv *c, const struct perf_sample *s);
/* kf's last share gone: to the spares (or freed past CONV_KFRAMES_SPARE). */
void conv_kframes_spare(struct perf_conv *c, struct conv_kframes *kf);
void conv_kchains_free(struct perf_conv *c);
struct conv_stack *conv_stack_room(struct perf_conv *c, uint32_t tid, uint32_t most);
void conv_stack_kept(struct perf_conv *c, struct conv_stack *k, uint32_t pid, uint32_t nr);
void conv_stack_pool_free(struct conv_stack_pool *pool);
/* CSwitch stacks turned on or off (conv_stacks_set) when they change. */
void conv_stacks_change(struct perf_conv *c, bool is_on);
int conv_emit_switch_in_stack(struct perf_conv *c, uint32_t cpu, uint64_t ts, uint32_t tid);
/* k's stack written (conv_switch_in_stack), its entry over the kept stacks' limit dropped, or
   its long array given back. */
void conv_stack_spent(struct perf_conv *c, struct conv_stack *k);
int conv_emit_stack(struct perf_conv *c, uint32_t cpu, uint64_t ts, uint32_t pid, uint32_t tid,
                    uint32_t nr);
uint32_t conv_collect_frames(struct perf_conv *c, const struct perf_conv_event *ev,
                             const struct perf_sample *s, bool is_ip_first);
/* conv_collect_frames into frames (room for CONV_MAX_FRAMES, or for the callchain and ip when
   ev walks by frame pointers) rather than c->frames. */
uint32_t conv_collect_frames_to(struct perf_conv *c, const struct perf_conv_event *ev,
                                const struct perf_sample *s, bool is_ip_first, uint64_t *frames);
/* The StackWalk record of sample s built in place (the sink's room; frames walked by frame
   pointers, at most its callchain and ip): true when written (or when it has no frames), false
   when there was no room (the caller collects and emits as usual); *rc: emit's. room: where
   conv_rec_begin_stacked put it, or NULL (reserved here). */
bool conv_emit_stack_direct(struct perf_conv *c, const struct perf_conv_event *ev,
                            const struct perf_sample *s, bool is_ip_first, uint32_t cpu,
                            uint64_t ts, int *rc, uint8_t *room);
void conv_note_kaddr_slow(struct perf_conv *c, uint64_t a);

/* Where a record of exactly size bytes for writer CPU cpu is assembled: the sink's room
   (*is_direct: no copy through emit), else c->rec. conv_rec_end hands it on; no other record of
   that CPU may be begun in between. */
static inline uint8_t *conv_rec_begin(struct perf_conv *c, uint32_t cpu, uint32_t size,
                                      bool *is_direct)
{
        uint8_t *rec = c->has_sink ? c->sink.reserve(c->sink.ctx, cpu, size) : NULL;
        *is_direct = rec != NULL;
        return rec ? rec : c->rec;
}

/* conv_rec_begin for a record followed by a StackWalk record of at most nr_frames frames: both
   in the sink's room at once when they fit the CPU's buffer as it is (*stack_room: where the
   stack goes once the record is committed), else the record's own as conv_rec_begin's
   (*stack_room NULL: the stack reserves its own). One call where two reserves found the same
   buffer room, and every buffer completed where the two would have completed it. */
static inline uint8_t *conv_rec_begin_stacked(struct perf_conv *c, uint32_t cpu, uint32_t size,
                                              uint32_t nr_frames, bool *is_direct,
                                              uint8_t **stack_room)
{
        uint32_t at = (size + 7u) & ~7u;
        uint8_t *rec = c->sink.room
                               ? c->sink.room(c->sink.ctx, cpu, at + STACK_REC_HEAD + 8 * nr_frames)
                               : NULL;
        if (rec) {
                *is_direct = true;
                *stack_room = rec + at;
                return rec;
        }
        *stack_room = NULL;
        return conv_rec_begin(c, cpu, size, is_direct);
}

/* etl_record_perfinfo64's header at dst (its size: that of a payload of payload_size bytes) and
   the nr_pmc (at most 7) counters after it; where the payload goes. */
static inline uint8_t *conv_perfinfo_head(uint8_t *dst, uint16_t hook, uint8_t version, uint64_t ts,
                                          const uint64_t *pmc, uint32_t nr_pmc,
                                          uint32_t payload_size)
{
        st16(dst, (uint16_t)(version | nr_pmc << 8));
        dst[2] = TRACE_HEADER_TYPE_PERFINFO64;
        dst[3] = 0xC0;
        st16(dst + 4, (uint16_t)(16 + 8 * nr_pmc + payload_size));
        st16(dst + 6, hook);
        st64(dst + 8, ts);
        for (uint32_t i = 0; i < nr_pmc; i++)
                st64(dst + 16 + 8 * i, pmc[i]);
        return dst + 16 + 8 * nr_pmc;
}

static inline int conv_rec_end(struct perf_conv *c, uint32_t cpu, uint8_t *rec, uint32_t size,
                               bool is_direct)
{
        c->st.nr_events++;
        if (!is_direct)
                return c->ops.emit(c->ctx, cpu, rec, size);
        c->sink.commit(c->sink.ctx, cpu, size);
        return 0;
}

/* The header and payload head of a StackWalk record at rec whose nr frames are in place from
   STACK_REC_HEAD on (etl_record_perfinfo64's, no counters): its size. Written here, not built and
   copied: this runs for every stack. */
static inline uint32_t conv_stack_head(uint8_t *rec, uint64_t ts, uint32_t pid, uint32_t tid,
                                       uint32_t nr)
{
        uint32_t size = STACK_REC_HEAD + 8 * nr;
        st16(rec, 2);
        rec[2] = TRACE_HEADER_TYPE_PERFINFO64;
        rec[3] = 0xC0;
        st16(rec + 4, (uint16_t)size);
        st16(rec + 6, WMI_LOG_TYPE_STACKWALK);
        st64(rec + 8, ts);
        st64(rec + 16, ts); /* EventTimeStamp, StackProcess, StackThread */
        st32(rec + 24, pid);
        st32(rec + 28, tid);
        return size;
}

/* A share of a kept chain's frames let go (kf NULL: none). Inline: a context switch lets one go,
   and the last share is rare. */
static inline void conv_kframes_put(struct perf_conv *c, struct conv_kframes *kf)
{
        if (kf && --kf->refs == 0)
                conv_kframes_spare(c, kf);
}

/* CSwitch stacks are on (is_on) or off from now: off, the stacks kept are forgotten. Inline:
   every sched_switch sample says so, and they seldom change. */
static inline void conv_stacks_set(struct perf_conv *c, bool is_on)
{
        if (c->has_switch_stacks != is_on)
                conv_stacks_change(c, is_on);
}

/* The stack a CSwitch that switches tid in writes (tid's, kept where it left the CPU last), when
   the CSwitch stacks are on and one with frames is kept; else NULL. Inline: every switch asks. */
static inline struct conv_stack *conv_switch_in_find(const struct perf_conv *c, uint32_t tid)
{
        struct conv_stack *k = c->has_switch_stacks && tid ? conv_umap_find(&c->stacks, tid) : NULL;
        return k && k->nr ? k : NULL;
}

/* The stack of the CSwitch at ts that switched tid in, as Windows writes it: tid's own, where it
   left the CPU last (its switch-out's callchain), StackThread = tid. k: tid's kept stack, as
   conv_switch_in_find found it, nothing kept or dropped since; written at room
   (conv_rec_begin_stacked's, for k's frames) or, when NULL, where the sink reserves it. Inline,
   in the CSwitch's own conversion: this runs at every switch. */
static inline int conv_switch_in_stack(struct perf_conv *c, uint32_t cpu, uint64_t ts, uint32_t tid,
                                       struct conv_stack *k, uint8_t *room)
{
        c->st.nr_cswitch_stacks++;
        uint32_t size = STACK_REC_HEAD + 8 * k->nr;
        uint8_t *rec = room ? room : c->has_sink ? c->sink.reserve(c->sink.ctx, cpu, size) : NULL;
        bool is_direct = rec != NULL;
        if (!rec)
                rec = c->stack_rec;
        memcpy(rec + STACK_REC_HEAD, k->kf ? k->kf->frames : k->frames, 8 * (size_t)k->nr);
        int rc = conv_rec_end(c, cpu, rec, conv_stack_head(rec, ts, k->pid, tid, k->nr), is_direct);
        /* (the emit may not touch c->stacks: k still points at tid's entry) */
        k->nr = 0;
        c->nr_kept_stacks--;
        conv_kframes_put(c, k->kf);
        k->kf = NULL;
        if (c->stacks.nr > CONV_MAX_SAVED_STACKS || k->cls > 1)
                conv_stack_spent(c, k);
        return rc;
}

/* The writer CPU of a record: the CPU it says, when it says one in range, else its ring's.
   Inline, as conv_stamp: both run for every record converted. */
static inline uint32_t conv_writer_cpu(const struct perf_conv *c, bool has_cpu, uint32_t cpu,
                                       uint32_t ring_cpu)
{
        return has_cpu && cpu < c->nr_cpus ? cpu : ring_cpu;
}

/* perf_conv_stamp: ts, or cpu's last stamp when ts is older (clamped: a CPU's records stay in
   order). */
static inline uint64_t conv_stamp(struct perf_conv *c, uint32_t cpu, uint64_t ts)
{
        if (cpu >= c->nr_cpus)
                return ts;
        if (__builtin_expect(ts < c->last_ts[cpu], 0)) {
                c->st.nr_clamped++;
                return c->last_ts[cpu];
        }
        c->last_ts[cpu] = ts;
        return ts;
}

static inline void note_kaddr(struct perf_conv *c, uint64_t a)
{
        /* kernel stacks repeat: most addresses are found here, without probing kaddrs */
        if (!is_kernel_addr(a))
                return;
        uint64_t *seen = &c->kseen[(a ^ (a >> 10)) & 1023];
        if (*seen == a)
                return;
        *seen = a;
        conv_note_kaddr_slow(c, a);
}

static inline void note_kernel_frame(struct perf_conv *c, uint64_t a)
{
        if (a < c->kframe_lo)
                c->kframe_lo = a;
        if (a > c->kframe_hi)
                c->kframe_hi = a;
}

#endif
