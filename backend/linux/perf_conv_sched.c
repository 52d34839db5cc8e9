/* SPDX-License-Identifier: MIT */
/* perf_conv_sched.c: samples as ETW events: profile and PMC samples, LBR, CSwitch and ReadyThread
 * with wait reasons. */
#include "perf_conv_int.h"
#include "perf_sample_live.h"

/* _LBR_TRACE_EVENT_DATA (ETL-FORMAT.md 3.11), entries filtered as the ETW flags ask. */
static int emit_lbr(struct perf_conv *c, const struct perf_conv_event *ev,
                    const struct perf_sample *s, uint32_t cpu, uint64_t ts)
{
        /* built in place, after the record's 16-byte PERFINFO64 header (no counters):
           etl_record_perfinfo64 then copies nothing */
        uint8_t *p = c->rec + 16;
        uint32_t n = 0;

        memset(p, 0, 24);
        st64(p, ts);
        st32(p + 8, s->pid);
        st32(p + 12, s->tid);
        st32(p + 16, ev->lbr_options);
        for (uint64_t i = 0; i < s->nr_branches && n < 2048; i++) {
                const uint8_t *e = s->branches + 24 * i;
                if (ev->lbr.is_post_filtered &&
                    (perf_lbr_class_of(le_get64(e + 16)) & ev->lbr.drop)) {
                        c->st.nr_lbr_dropped++;
                        continue;
                }
                uint8_t *o = p + 24 + 24 * n;
                st64(o, le_get64(e));
                st64(o + 8, le_get64(e + 8));
                /* Reserved: perf's branch flags as the CPU recorded them (mispredicted,
                   predicted, cycles; doc/perf-data.md), which the branch views count */
                st64(o + 16, le_get64(e + 16));
                n++;
        }
        uint32_t size =
                etl_record_perfinfo64(c->rec, WMI_LOG_TYPE_LBR, 2, ts, NULL, 0, p, 24 + 24 * n);
        return conv_emit(c, cpu, size);
}

/* conv_is_kernel_thread of a thread whose answer is not kept (m, its slot): looked up and
   kept. Apart, so that the switch's own work saves no registers for these lookups. */
static __attribute__((noinline)) bool kernel_thread_slow(struct perf_conv *c, uint32_t tid,
                                                         struct kthread_memo *m)
{
        const struct conv_task *t = conv_umap_find(&c->tasks, tid);
        uint32_t pid = t ? t->pid : tid;
        const struct conv_proc *p = pid == 2 ? NULL : conv_umap_find(&c->procs, pid);
        bool is_kernel = pid == 2 || (p && p->ppid == 2);
        m->tid = tid;
        m->tasks_gen = c->tasks.gen;
        m->procs_gen = c->procs.gen;
        m->is_kernel = is_kernel;
        return is_kernel;
}

static bool conv_is_kernel_thread(struct perf_conv *c, uint32_t tid)
{
        if (tid == 0 || tid == 2)
                return true;
        /* two lookups a context switch, the same few threads: their answers kept while the
           tables stay as they were */
        struct kthread_memo *m = &c->kthread_memo[tid & 63];
        if (m->tid == tid && m->tasks_gen == c->tasks.gen && m->procs_gen == c->procs.gen)
                return m->is_kernel;
        return kernel_thread_slow(c, tid, m);
}

/* perf_prio_to_etw: a nice-0 thread's (120, most of them) without its call */
static inline uint8_t prio_to_etw(int64_t prio)
{
        return prio == 120 ? 8 : (uint8_t)perf_prio_to_etw(prio);
}

/* The fields of a tracepoint format the converter reads, looked up once per format. */
enum tp_field_id {
        TPF_PREV_PID,
        TPF_NEXT_PID,
        TPF_PREV_PRIO,
        TPF_NEXT_PRIO,
        TPF_PREV_STATE,
        TPF_PID,
        TPF_COMMON_FLAGS,
        TPF_STATE,
        NR_TPF
};

/* The end of the last of t's nr fields ids when each has its size and is signed as every kernel
   lays it out, their offsets in off; 0 when one differs or is missing. */
static uint16_t plain_layout(const struct tp_cache *t, const uint8_t *ids, const uint8_t *sizes,
                             const bool *is_signed, uint32_t nr, uint16_t *off)
{
        uint32_t end = 0;
        for (uint32_t i = 0; i < nr; i++) {
                const struct perf_tp_field *f = t->f[ids[i]];
                if (!f || f->size != sizes[i] || f->is_signed != is_signed[i])
                        return 0;
                off[i] = f->offset;
                end = (uint32_t)f->offset + sizes[i] > end ? (uint32_t)f->offset + sizes[i] : end;
        }
        return (uint16_t)(end > UINT16_MAX ? 0 : end);
}

/* Whether t's fields are sched_switch's, or sched_waking's, in their usual layout (tp_cache's
   switch_off and switch_end, ready_off and ready_end). */
static void plain_layouts(struct tp_cache *t)
{
        static const uint8_t sw_ids[5] = {TPF_PREV_PID, TPF_NEXT_PID, TPF_PREV_PRIO, TPF_NEXT_PRIO,
                                          TPF_PREV_STATE};
        static const uint8_t sw_sizes[5] = {4, 4, 4, 4, 8};
        static const bool sw_signed[5] = {true, true, true, true, true};
        static const uint8_t rd_ids[2] = {TPF_PID, TPF_COMMON_FLAGS};
        static const uint8_t rd_sizes[2] = {4, 1};
        static const bool rd_signed[2] = {true, false};
        t->switch_end = plain_layout(t, sw_ids, sw_sizes, sw_signed, 5, t->switch_off);
        t->ready_end = plain_layout(t, rd_ids, rd_sizes, rd_signed, 2, t->ready_off);
}

/* conv_tp_cache of a format not among the last three: its fields looked up, the oldest entry
   replaced. */
static __attribute__((noinline)) const struct tp_cache *
tp_fields_slow(struct perf_conv *c, const struct perf_tp_format *tp)
{
        static const char *const names[NR_TPF] = {"prev_pid",     "next_pid",   "prev_prio",
                                                  "next_prio",    "prev_state", "pid",
                                                  "common_flags", "state"};
        _Static_assert(NR_TPF == sizeof(c->tp_cache[0].f) / sizeof(c->tp_cache[0].f[0]),
                       "tp_cache holds every field");
        static const struct tp_cache none;
        if (!tp)
                return &none;
        /* sched_switch, sched_waking and cpu_idle alternate: three entries, the oldest one
           replaced */
        struct tp_cache *t = &c->tp_cache[0];
        c->tp_cache[2] = c->tp_cache[1];
        c->tp_cache[1] = c->tp_cache[0];
        t->tp = tp;
        for (int i = 0; i < NR_TPF; i++)
                t->f[i] = perf_tp_field_find(tp, names[i]);
        plain_layouts(t);
        return t;
}

static inline const struct tp_cache *conv_tp_cache(struct perf_conv *c,
                                                   const struct perf_tp_format *tp)
{
        /* an empty memo: the format was parsed again since (perf_tp_field_find fills it) */
        if (tp && tp->nr_memo) {
                if (c->tp_cache[0].tp == tp)
                        return &c->tp_cache[0];
                if (c->tp_cache[1].tp == tp)
                        return &c->tp_cache[1];
                if (c->tp_cache[2].tp == tp)
                        return &c->tp_cache[2];
        }
        return tp_fields_slow(c, tp);
}

static inline const struct perf_tp_field *const *conv_tp_fields(struct perf_conv *c,
                                                                const struct perf_tp_format *tp)
{
        return conv_tp_cache(c, tp)->f;
}

/* perf_tp_field_get's value of field f (fallback when it has none), without its call: this runs
   five times a context switch. */
static inline int64_t tp_get(const struct perf_tp_field *f, const struct perf_sample *s,
                             int64_t fallback)
{
        if (!f || (uint32_t)f->offset + f->size > s->raw_size)
                return fallback;
        const uint8_t *p = s->raw + f->offset;
        switch (f->size) {
        case 4: return f->is_signed ? (int64_t)(int32_t)le_get32(p) : (int64_t)le_get32(p);
        case 8: return (int64_t)le_get64(p);
        case 1: return f->is_signed ? (int64_t)(int8_t)p[0] : (int64_t)p[0];
        case 2: return f->is_signed ? (int64_t)(int16_t)le_get16(p) : (int64_t)le_get16(p);
        default: return fallback;
        }
}

/* Since when tid has waited: from now on (switched out, or readied). */
static void conv_wait_begin(struct perf_conv *c, uint32_t tid, uint64_t ts)
{
        bool is_new;
        if (tid == 0)
                return; /* the idle thread never waits */
        if (tid < CONV_WAIT_DIRECT) {
                c->wait_since[tid] = ts;
                c->wait_is_set[tid / 64] |= 1ull << (tid % 64);
                return;
        }
        struct conv_wait *w = conv_umap_get(&c->waits, tid, &is_new);
        if (w)
                w->since_ns = ts;
}

/* NewThreadWaitTime: how long tid waited before this switch-in, in clock ticks of the trace's
   TimerResolution, counted as Windows counts them (KeTickCount now less the tick count when the
   wait began): the ticks that began in between, on the session clock; 0 for the idle thread or
   a thread not seen leave. */
static uint32_t conv_wait_end(struct perf_conv *c, uint32_t tid, uint64_t ts)
{
        uint64_t since;
        if (tid == 0)
                return 0;
        if (tid < CONV_WAIT_DIRECT) {
                uint64_t bit = 1ull << (tid % 64);
                if (!(c->wait_is_set[tid / 64] & bit))
                        return 0;
                c->wait_is_set[tid / 64] &= ~bit;
                since = c->wait_since[tid];
        } else {
                struct conv_wait *w = conv_umap_find(&c->waits, tid);
                if (!w)
                        return 0;
                since = w->since_ns;
                conv_umap_remove(&c->waits, w);
        }
        uint64_t ticks = 0;
        if (ts > since && c->tick_ns == DEFAULT_TICK_NS)
                ticks = ts / DEFAULT_TICK_NS - since / DEFAULT_TICK_NS; /* no divide instruction */
        else if (ts > since)
                ticks = ts / c->tick_ns - since / c->tick_ns;
        return ticks > UINT32_MAX ? UINT32_MAX : (uint32_t)ticks;
}

/* The switch at ts on cpu from old_tid to new_tid, as WMI_CONTEXTSWAP v4 (ETL-FORMAT.md 3.5),
   into p; keeps the per-thread wait times and the CPU's current thread. */
static uint32_t conv_build_cswitch(struct perf_conv *c, uint8_t *p, uint32_t cpu, uint64_t ts,
                                   uint32_t new_tid, uint32_t old_tid, int64_t new_prio,
                                   int64_t old_prio, struct perf_thread_state old_state)
{

        memset(p, 0, 24);
        st32(p, new_tid);
        st32(p + 4, old_tid);
        p[8] = new_tid == 0 ? 0 : prio_to_etw(new_prio);
        p[9] = old_tid == 0 ? 0 : prio_to_etw(old_prio);
        /* PreviousCState: the idle thread switched out, the C-state its CPU slept in */
        if (old_tid == 0 && cpu < c->nr_cpus)
                p[10] = c->cstate[cpu];
        p[12] = old_state.wait_reason;
        p[13] = conv_is_kernel_thread(c, old_tid) ? 0 : 1; /* OldThreadWaitMode */
        p[14] = old_state.state;
        /* OldThreadWaitIdealProcessor: Linux has no ideal processor; the wake-up path prefers
           the CPU a task last ran on (select_task_rq's prev_cpu), which is this one. */
        p[15] = (uint8_t)cpu;
        st32(p + 16, conv_wait_end(c, new_tid, ts)); /* NewThreadWaitTime */
        if (old_state.state != KSTATE_TERMINATED)
                conv_wait_begin(c, old_tid, ts);
        if (cpu < c->nr_cpus)
                c->cpu_tid[cpu] = new_tid;
        return 24;
}

/* The blocking function's reason of a kernel address, or -1 (c->wait_sites by start). */
static int wait_reason_at(struct perf_conv *c, uint64_t addr)
{
        uint32_t slot = (uint32_t)((addr >> 3) ^ (addr >> 13)) & 255;
        if (c->wait_memo[slot].addr == addr)
                return c->wait_memo[slot].reason;
        uint32_t lo = 0, hi = c->nr_wait_sites;
        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (c->wait_sites[mid].start <= addr)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        int reason = lo && addr < c->wait_sites[lo - 1].end ? c->wait_sites[lo - 1].reason : -1;
        c->wait_memo[slot].addr = addr;
        c->wait_memo[slot].reason = (int16_t)reason;
        return reason;
}

/* The reason of the innermost blocking function of a switch's kernel callchain (chain, nr
   entries) that a thread takes (LINUX-MAPPING.md 3.3): a runnable one (is_runnable) only
   do_sched_yield's WrYieldExecution, a sleeping one anything else; -1: none. */
static int wait_site_reason(struct perf_conv *c, const uint8_t *chain, uint64_t nr,
                            bool is_runnable)
{
        if (!c->has_asked_wait_sites) {
                c->has_asked_wait_sites = true;
                if (c->ops.wait_sites)
                        c->nr_wait_sites = c->ops.wait_sites(c->ctx, &c->wait_sites);
                for (uint32_t i = 0; i < 256; i++)
                        c->wait_memo[i].addr = 0;
        }
        if (!c->nr_wait_sites)
                return -1;
        for (uint64_t i = 0; i < nr && i < 32; i++) {
                uint64_t a = le_get64(chain + 8 * i);
                if (a >= (uint64_t)PERF_CONTEXT_MAX) {
                        if (a == (uint64_t)PERF_CONTEXT_USER)
                                break; /* the kernel part is over */
                        continue;
                }
                if (!is_kernel_addr(a))
                        continue;
                int r = wait_reason_at(c, a);
                if (r >= 0 && (r == KWAIT_WR_YIELD_EXECUTION) == is_runnable)
                        return r;
        }
        return -1;
}

/* A switch's reason from where the thread left the CPU (wait_site_reason), else the state's.
   kf: the switch's chain is that kept one, whose answer is kept with it (the sites are asked
   once, and a chain's answer depends on its entries alone): a pipe's or a futex's chain passes
   ten kernel frames or more without a blocking function, each looked up at every switch. */
static uint8_t conv_wait_reason_of_stack(struct perf_conv *c, const struct perf_sample *s,
                                         struct conv_kframes *kf, uint8_t reason, bool is_runnable)
{
        int r;
        if (kf) {
                int8_t *memo = &kf->site_reason[is_runnable];
                if (*memo == -2)
                        *memo = (int8_t)wait_site_reason(c, s->callchain, s->nr_callchain,
                                                         is_runnable);
                r = *memo;
        } else {
                r = wait_site_reason(c, s->callchain, s->nr_callchain, is_runnable);
        }
        return r >= 0 ? (uint8_t)r : reason;
}

/* A sched_switch's fields: the threads switched in and out, their priorities, the old one's
   state and wait reason. */
struct switch_tp {
        uint32_t new_tid, old_tid;
        int64_t new_prio, old_prio;
        struct perf_thread_state st;
};

/* sched_switch's raw fields (kf: its chain's kept frames, or NULL) into *f, apart from the
   CSwitch's build: the threads' stacks are kept and found before the CSwitch is reserved. *out:
   the fields. */
static inline void read_switch_tp(struct perf_conv *c, const struct perf_conv_event *ev,
                                  const struct perf_sample *s, struct conv_kframes *kf,
                                  struct switch_tp *out)
{
        const struct tp_cache *t = conv_tp_cache(c, ev->tp);
        int64_t prev_pid, next_pid, prev_prio, next_prio, prev_state;
        if (t->switch_end && s->raw_size >= t->switch_end) {
                /* the usual layout, every field inside the raw data: read as tp_get would,
                   without its checks (this runs at every switch) */
                const uint8_t *r = s->raw;
                prev_pid = (int32_t)le_get32(r + t->switch_off[0]);
                next_pid = (int32_t)le_get32(r + t->switch_off[1]);
                prev_prio = (int32_t)le_get32(r + t->switch_off[2]);
                next_prio = (int32_t)le_get32(r + t->switch_off[3]);
                prev_state = (int64_t)le_get64(r + t->switch_off[4]);
        } else {
                const struct perf_tp_field *const *f = t->f;
                prev_pid = tp_get(f[TPF_PREV_PID], s, s->tid);
                next_pid = tp_get(f[TPF_NEXT_PID], s, 0);
                prev_prio = tp_get(f[TPF_PREV_PRIO], s, 120);
                next_prio = tp_get(f[TPF_NEXT_PRIO], s, 120);
                prev_state = tp_get(f[TPF_PREV_STATE], s, 0);
        }
        uint64_t ps = (uint64_t)prev_state;
        struct state_memo *m = &c->ps_memo[(ps ^ (ps >> 8)) & 7];
        if (!m->tp || m->tp != ev->tp || m->prev_state != ps) {
                m->tp = ev->tp;
                m->prev_state = ps;
                m->st = perf_prev_state_to_etw(ev->tp, ps);
        }
        struct perf_thread_state st = m->st;
        if (st.state == KSTATE_WAITING && s->nr_callchain &&
            (st.wait_reason == KWAIT_USER_REQUEST || st.wait_reason == KWAIT_EXECUTIVE))
                st.wait_reason = conv_wait_reason_of_stack(c, s, kf, st.wait_reason, false);
        else if (st.state == KSTATE_READY && s->nr_callchain && prev_pid != 0)
                st.wait_reason = conv_wait_reason_of_stack(c, s, kf, st.wait_reason, true);
        out->new_tid = (uint32_t)next_pid;
        out->old_tid = (uint32_t)prev_pid;
        out->new_prio = next_prio;
        out->old_prio = prev_prio;
        out->st = st;
}

/* ETW_READY_THREAD_EVENT (ETL-FORMAT.md 3.6) from sched_waking's raw fields. */
static uint32_t build_ready_thread(struct perf_conv *c, uint8_t *p,
                                   const struct perf_conv_event *ev, const struct perf_sample *s)
{
        const struct tp_cache *t = conv_tp_cache(c, ev->tp);
        int64_t pid, flags;
        if (t->ready_end && s->raw_size >= t->ready_end) {
                /* the usual layout, both inside the raw data: read as tp_get would, unchecked */
                pid = (int32_t)le_get32(s->raw + t->ready_off[0]);
                flags = s->raw[t->ready_off[1]];
        } else {
                pid = tp_get(t->f[TPF_PID], s, 0);
                flags = tp_get(t->f[TPF_COMMON_FLAGS], s, 0);
        }

        memset(p, 0, 8);
        st32(p, (uint32_t)pid);
        if (flags & (TRACE_FLAG_HARDIRQ | TRACE_FLAG_SOFTIRQ))
                p[6] = 0x1; /* ExecutingDpc: woken from interrupt context */
        /* Ready from now on: NewThreadWaitTime counts from here */
        conv_wait_begin(c, (uint32_t)pid, s->time);
        return 8;
}

/* -p: whether a sample is the traced process's: its own (a sample or a switch out of one of its
   threads: sched_switch is recorded in the old thread's context), or a wake-up of one of its
   threads by another process's (the kernel gives the woken thread's events its wake-ups too).
   A thread of the process first seen here is learnt. */
static bool is_own_sample(struct perf_conv *c, const struct perf_conv_event *ev,
                          const struct perf_sample *s)
{
        bool is_own = s->pid == c->traced_pid;
        if (is_own && s->tid != s->pid && !conv_umap_find(&c->tasks, s->tid))
                conv_task_set(c, s->tid, s->pid, NULL, -1);
        if (!is_own && ev->kind == PERF_CONV_READY_THREAD && s->raw) {
                int64_t tid = tp_get(conv_tp_fields(c, ev->tp)[TPF_PID], s, 0);
                is_own = tid > 0 && conv_is_traced(c, (uint32_t)tid);
        }
        if (!is_own)
                c->st.nr_foreign++;
        return is_own;
}

/* A frame-pointer CSwitch's callchain (old_tid's, where it left the CPU) kept for old_tid's next
   switch-in, when it is not a kept chain whose thread goes on (conv_switch_share shares
   those): collected straight into the array kept for it; into c->frames when none is kept (the
   thread ended, or the kept stacks are at their limit), for the kernel addresses it notes all
   the same. The chain gives at most its entries as frames: the array's room. */
static void keep_switch_out_chain(struct perf_conv *c, const struct perf_conv_event *ev,
                                  const struct perf_sample *s, struct conv_kframes *kf,
                                  uint32_t old_tid, bool is_ended)
{
        if (kf) {
                /* the thread ended (the chain's kernel addresses were noted when it was kept) */
                conv_stack_keep(c, old_tid, s->pid, 0);
                return;
        }
        uint32_t most =
                s->nr_callchain < CONV_MAX_FRAMES ? (uint32_t)s->nr_callchain : CONV_MAX_FRAMES;
        struct conv_stack *k = is_ended ? NULL : conv_stack_room(c, old_tid, most);
        if (!k) {
                uint32_t nr = conv_collect_frames(c, ev, s, false);
                if (is_ended || !nr)
                        conv_stack_keep(c, old_tid, s->pid, 0);
                return;
        }
        conv_stack_kept(c, k, s->pid, conv_collect_frames_to(c, ev, s, false, k->frames));
}

/* The most frames a late stack (conv_emit_stack_direct's) takes: its room is found with its
   record's when both fit. */
static inline uint32_t late_most(const struct perf_sample *s, bool is_ip_first)
{
        uint64_t most = s->nr_callchain + is_ip_first;
        return most < CONV_MAX_FRAMES ? (uint32_t)most : CONV_MAX_FRAMES;
}

/* A sample that did not parse (cut short, or a tracepoint's without its raw data): counted
   here, so that perf_conv_record_ev hands a sample on with a jump, not a call. */
static __attribute__((noinline, cold)) int sample_bad(struct perf_conv *c)
{
        c->st.nr_bad++;
        return -EBADMSG;
}

int conv_sample(struct perf_conv *c, uint32_t ring_cpu, const uint8_t *rec, uint32_t size,
                const struct perf_conv_event *ev)
{
        struct perf_sample s;
        uint64_t pmc[8];
        uint32_t nr_pmc = 0;

        if (size < 16)
                return sample_bad(c);
        if (!ev) {
                c->st.nr_unknown_id++;
                return 0;
        }
        /* a live session's samples parsed here, inline (perf_sample_parse's first test) */
        int prc = perf_sample_is_live(ev->sample_type)
                          ? perf_sample_parse_live(rec, size, ev->sample_type, &s)
                          : perf_sample_parse(rec, size, ev->sample_type, ev->read_format,
                                              ev->branch_sample_type, ev->regs_user_mask, &s);
        if (prc < 0)
                return sample_bad(c);
        if (s.time < ev->valid_from || s.time > ev->valid_until) {
                c->st.nr_out_of_window++;
                return 0;
        }
        if (c->traced_pid && !is_own_sample(c, ev, &s))
                return 0;
        for (uint32_t i = 1; i < s.nr_values && nr_pmc < ev->nr_pmc; i++)
                pmc[nr_pmc++] = s.values[i];

        uint32_t cpu =
                conv_writer_cpu(c, (ev->sample_type & PERF_SAMPLE_CPU) != 0, s.cpu, ring_cpu);
        uint64_t ts = conv_stamp(c, cpu, s.time);
        uint8_t *p = c->payload;
        uint32_t rsize, nr_frames = 0;
        int rc;
        /* the images a fork gave the sample's process, written before its first sample */
        if (c->nr_pending_procs && (rc = conv_inherited_flush(c, s.pid, cpu, ts, s.tid)) < 0)
                return rc;

        bool is_ip_first = ev->kind == PERF_CONV_PROFILE || ev->kind == PERF_CONV_PMC_SAMPLE;
        if (__builtin_expect(c->is_learning_threads, 0) && is_ip_first &&
            (ev->sample_type & PERF_SAMPLE_TID) &&
            (rc = conv_thread_learn(c, cpu, ts, s.pid, s.tid)) < 0)
                return rc;
        /* the stack built in the writer's buffer, after the sample's record: frame-pointer
           chains of samples and wake-ups (a CSwitch's frames give its wait reason first) */
        bool is_late = ev->has_stack && c->has_sink && ev->walk == PERF_CONV_WALK_FP &&
                       (is_ip_first || ev->kind == PERF_CONV_READY_THREAD) && !ev->nr_members;
        /* a frame-pointer CSwitch's chain is collected once the switch's old thread is known,
           into the array kept for that thread's next switch-in (no copy from c->frames) */
        bool is_kept_late = ev->has_stack && ev->kind == PERF_CONV_CSWITCH &&
                            ev->walk == PERF_CONV_WALK_FP && s.raw;
        if (ev->has_stack && !is_late && !is_kept_late)
                nr_frames = conv_collect_frames(c, ev, &s, is_ip_first);
        /* the record is assembled where the writer keeps it (no copy through emit); its size
           is known before it is built: 16 (PERFINFO64) or 32 (SYSTEM64) header bytes, the
           counters, the payload */
        uint8_t *out, *stack_room = NULL;
        bool is_direct;
        switch (ev->kind) {
        case PERF_CONV_PROFILE:
        case PERF_CONV_PMC_SAMPLE:
                note_kaddr(c, s.ip);
                if (is_kernel_addr(s.ip))
                        note_kernel_frame(c, s.ip);
                rsize = 16 + 8 * nr_pmc + 16;
                out = is_late ? conv_rec_begin_stacked(c, cpu, rsize, late_most(&s, is_ip_first),
                                                       &is_direct, &stack_room)
                              : conv_rec_begin(c, cpu, rsize, &is_direct);
                p = conv_perfinfo_head(out,
                                       ev->kind == PERF_CONV_PROFILE
                                               ? PERFINFO_LOG_TYPE_SAMPLED_PROFILE
                                               : PERFINFO_LOG_TYPE_PMC_INTERRUPT,
                                       2, ts, pmc, nr_pmc, 16);
                memset(p, 0, 16);
                st64(p, s.ip);
                st32(p + 8, s.tid);
                st16(p + 12, ev->kind == PERF_CONV_PROFILE ? 1 : ev->profile_source); /* Count */
                break;
        case PERF_CONV_CSWITCH: {
                if (!s.raw)
                        return sample_bad(c);
                /* the chain's kept frames first: they keep its wait reason too */
                struct conv_kframes *kf = is_kept_late ? conv_chain_kept(c, &s) : NULL;
                struct switch_tp f;
                read_switch_tp(c, ev, &s, kf, &f);
                bool is_ended = f.st.state == KSTATE_TERMINATED;
                /* the stack of a CSwitch is the new thread's (where it left the CPU last); the
                   callchain of this one, the old thread's, waits for its own switch-in. Both
                   before the CSwitch is reserved (nothing here writes a record): the new
                   thread's stack has its size then, and its room is found with the CSwitch's */
                conv_stacks_set(c, ev->has_stack);
                struct conv_stack *k;
                if (kf && !is_ended) {
                        k = conv_switch_share(c, f.old_tid, s.pid, kf, f.new_tid);
                } else {
                        if (is_kept_late)
                                keep_switch_out_chain(c, ev, &s, kf, f.old_tid, is_ended);
                        else if (ev->has_stack)
                                conv_stack_keep(c, f.old_tid, s.pid, is_ended ? 0 : nr_frames);
                        k = conv_switch_in_find(c, f.new_tid);
                }
                rsize = 16 + 8 * nr_pmc + 24;
                out = k ? conv_rec_begin_stacked(c, cpu, rsize, k->nr, &is_direct, &stack_room)
                        : conv_rec_begin(c, cpu, rsize, &is_direct);
                p = conv_perfinfo_head(out, WMI_LOG_TYPE_CONTEXT_SWAP, 4, ts, pmc, nr_pmc, 24);
                conv_build_cswitch(c, p, cpu, ts, f.new_tid, f.old_tid, f.new_prio, f.old_prio,
                                   f.st);
                rc = conv_rec_end(c, cpu, out, rsize, is_direct);
                if (rc == 0 && k)
                        rc = conv_switch_in_stack(c, cpu, ts, f.new_tid, k, stack_room);
                return rc;
        }
        case PERF_CONV_CPU_IDLE:
                if (!s.raw)
                        return sample_bad(c);
                {
                        /* state 4294967295 (PWR_EVENT_EXIT) leaves idle: the state entered
                           stays, for the switch that follows */
                        int64_t state = tp_get(conv_tp_fields(c, ev->tp)[TPF_STATE], &s, -1);
                        if (state >= 0 && state != 0xffffffffll && cpu < c->nr_cpus)
                                c->cstate[cpu] = (uint8_t)(state > 255 ? 255 : state);
                }
                return 0;
        case PERF_CONV_READY_THREAD: {
                if (!s.raw)
                        return sample_bad(c);
                /* conv_record_system64_pmc's record, its payload built in place */
                rsize = 32 + 8 * nr_pmc + 8;
                out = is_late ? conv_rec_begin_stacked(c, cpu, rsize, late_most(&s, is_ip_first),
                                                       &is_direct, &stack_room)
                              : conv_rec_begin(c, cpu, rsize, &is_direct);
                st16(out, (uint16_t)(2 | nr_pmc << 8));
                out[2] = TRACE_HEADER_TYPE_SYSTEM64;
                out[3] = 0xC0;
                st16(out + 4, (uint16_t)rsize);
                st16(out + 6, WMI_LOG_TYPE_READY_THREAD);
                st32(out + 8, s.tid);
                st32(out + 12, s.pid);
                st64(out + 16, ts);
                st64(out + 24, 0);
                for (uint32_t i = 0; i < nr_pmc; i++)
                        st64(out + 32 + 8 * i, pmc[i]);
                build_ready_thread(c, out + 32 + 8 * nr_pmc, ev, &s);
                break;
        }
        default: return 0;
        }
        rc = conv_rec_end(c, cpu, out, rsize, is_direct);
        if (rc == 0 && is_late &&
            !conv_emit_stack_direct(c, ev, &s, is_ip_first, cpu, ts, &rc, stack_room))
                nr_frames = conv_collect_frames(c, ev, &s, is_ip_first);
        if (rc == 0 && ev->has_stack && nr_frames)
                rc = conv_emit_stack(c, cpu, ts, s.pid, s.tid, nr_frames);
        /* the walks' counts, once a second while they change (the screen's header shows them) */
        if (rc == 0 && ev->walk != PERF_CONV_WALK_FP && ts - c->uw_stats_ts >= 1000000000ull &&
            c->uw_st.nr_walks + c->uw_st.nr_fp_chains != c->uw_walks_written)
                rc = perf_conv_unwind_stats(c, cpu, ts);
        if (rc == 0 && ev->has_lbr && (ev->sample_type & PERF_SAMPLE_BRANCH_STACK))
                rc = emit_lbr(c, ev, &s, cpu, ts);
        /* a leader-sampled group's members (their stacks the leader's frames, in c->frames) */
        if (rc == 0 && __builtin_expect(ev->nr_members != 0, 0) && is_ip_first)
                rc = conv_group_members(c, ev, &s, cpu, ts, nr_frames);
        return rc;
}

/* PERF_RECORD_SWITCH / SWITCH_CPU_WIDE (context_switch=1, LINUX-MAPPING.md 3.3). An IN record
   is written in the incoming thread's context once the switch is done, after the sched_switch
   sample of the same switch (written in the outgoing thread's context). When no CSwitch switched
   that thread in on this CPU, the sample was not delivered: a kernel may write nothing in the
   context of some tasks. The Firecracker guest of bench/README.md ("Item 2, seventh pass")
   writes no perf record while pid 1's threads (its agent) or the idle task of a CPU other than
   0 are current: no sched_switch of them switching out, no samples, no tracepoint in their
   interrupts; on every CPU, then, the switch-ins out of them would be missing. The IN record,
   written in the incoming thread's context, is the only record of such a switch: it makes the
   CSwitch, stamped at its own time (a few microseconds after the switch). */
/* The size of the sample_id trailer of ev's non-sample records. */
static uint32_t trailer_size(const struct perf_conv_event *ev)
{
        uint64_t st = ev ? ev->sample_type : PERF_CONV_SAMPLE_ID_BITS;
        uint64_t bits = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
                        PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;
        if ((st & bits) == PERF_CONV_SAMPLE_ID_BITS)
                return 32; /* a live session's: tid, time, cpu, identifier */
        return 8 * (!!(st & PERF_SAMPLE_TID) + !!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_ID) +
                    !!(st & PERF_SAMPLE_STREAM_ID) + !!(st & PERF_SAMPLE_CPU) +
                    !!(st & PERF_SAMPLE_IDENTIFIER));
}

/* sched_switch says more of a switch out, in the same context: a switch-out record is
   nothing to convert when it is whole (its fixed part and ev's trailer). With -p, a CPU-wide
   one may switch to a thread of the traced process (one that may be learnt from a record not
   converted yet) and says how that switch-in's other side left: it is converted. */
static bool is_whole_switch_out(const struct perf_conv *c, const struct perf_event_header *h,
                                uint32_t size, const struct perf_conv_event *ev)
{
        bool is_cpu_wide = h->type == PERF_RECORD_SWITCH_CPU_WIDE;
        if (!(is_cpu_wide || h->type == PERF_RECORD_SWITCH) ||
            !(h->misc & PERF_RECORD_MISC_SWITCH_OUT) ||
            size < (is_cpu_wide ? 16u : 8u) + trailer_size(ev))
                return false;
        return !(c->traced_pid && is_cpu_wide);
}

bool perf_conv_skips_ev(struct perf_conv *c, const uint8_t *rec, uint32_t size,
                        const struct perf_conv_event *ev)
{
        const struct perf_event_header *h = (const void *)rec;
        if (size < 16 || h->size != size || !(h->misc & PERF_RECORD_MISC_SWITCH_OUT) ||
            !is_whole_switch_out(c, h, size, ev))
                return false;
        c->st.nr_records++;
        return true;
}

bool perf_conv_skips(struct perf_conv *c, const uint8_t *rec, uint32_t size)
{
        return size >= 16 && perf_conv_skips_ev(c, rec, size, conv_record_event(c, rec, size));
}

/* The thread a switch-in record says was switched out (*old_tid on cpu) and its state, the
   sched_switch sample of that switch not having come. The idle thread leaves the CPU runnable
   (sched_switch says R for swapper). With -p, another process's thread (the other side of one
   of its threads' switch-ins) is Ready/WrPreempted when its CPU-wide switch-out record says it
   was preempted, else it blocked: Waiting/UserRequest, as a sleep (S) with no callchain is.
   The kernel names a task that is gone -1: it ended (Terminated), and its switch-out record
   may still say which it was; if not, the switch is written as from the idle thread. Otherwise
   nothing is known: Waiting/Executive. */
static struct perf_thread_state switched_out_state(struct perf_conv *c, uint32_t cpu,
                                                   uint32_t *old_tid, uint32_t new_tid)
{
        struct conv_out *o =
                c->last_out && c->last_out[cpu].has && c->last_out[cpu].next_tid == new_tid
                        ? &c->last_out[cpu]
                        : NULL;
        if (o)
                o->has = false;
        if (*old_tid == CONV_NONE) {
                *old_tid = o && o->tid != CONV_NONE ? o->tid : 0;
                if (*old_tid)
                        return (struct perf_thread_state){KSTATE_TERMINATED, KWAIT_WR_TERMINATED};
        }
        if (*old_tid == 0)
                return perf_prev_state_to_etw(NULL, 0);
        if (o && o->tid == *old_tid)
                return o->is_preempted
                               ? (struct perf_thread_state){KSTATE_READY, KWAIT_WR_PREEMPTED}
                               : (struct perf_thread_state){KSTATE_WAITING, KWAIT_USER_REQUEST};
        return (struct perf_thread_state){KSTATE_WAITING, KWAIT_EXECUTIVE};
}

/* A switch-in whose CSwitch was written (the sched_switch sample came): most of them, read in a
   live session's trailer (tid, time, cpu, identifier). */
static inline bool is_switch_in_seen(const struct perf_conv *c, const uint8_t *rec, uint32_t size,
                                     const struct perf_conv_event *ev)
{
        const struct perf_event_header *h = (const void *)rec;
        const uint64_t trailer_bits = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
                                      PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
                                      PERF_SAMPLE_IDENTIFIER;
        if ((h->misc & PERF_RECORD_MISC_SWITCH_OUT) || !ev || size < 16 + 32 ||
            (ev->sample_type & trailer_bits) != PERF_CONV_SAMPLE_ID_BITS)
                return false;
        const uint8_t *t = rec + size - 32;
        uint32_t tid = le_get32(t + 4), t_cpu = le_get32(t + 16);
        uint64_t time = le_get64(t + 8);
        return t_cpu < c->nr_cpus && c->cpu_tid[t_cpu] == tid && tid != CONV_NONE &&
               time >= ev->valid_from && time <= ev->valid_until;
}

bool perf_conv_switch_in_seen(struct perf_conv *c, uint32_t cpu, uint32_t tid)
{
        if (cpu >= c->nr_cpus || c->cpu_tid[cpu] != tid || tid == CONV_NONE)
                return false;
        c->st.nr_records++;
        return true;
}

int conv_switch(struct perf_conv *c, uint32_t ring_cpu, const uint8_t *rec, uint32_t size,
                const struct perf_conv_event *ev)
{
        const struct perf_event_header *h = (const void *)rec;
        struct perf_sample_id sid;
        bool is_cpu_wide = h->type == PERF_RECORD_SWITCH_CPU_WIDE;

        if (is_switch_in_seen(c, rec, size, ev))
                return 0; /* seen: the CSwitch of this switch was written */
        if (is_whole_switch_out(c, h, size, ev))
                return 0;
        if (size < (is_cpu_wide ? 16u : 8u) || conv_sample_id(ev, rec, size, &sid) < 0)
                return -EBADMSG;
        uint32_t cpu = conv_writer_cpu(c, sid.has_cpu, sid.cpu, ring_cpu);
        if (h->misc & PERF_RECORD_MISC_SWITCH_OUT) {
                /* -p: another process's thread leaving for one of the traced process's */
                if (c->last_out && is_cpu_wide && cpu < c->nr_cpus)
                        c->last_out[cpu] = (struct conv_out){
                                sid.tid, le_get32(rec + 12),
                                (h->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) != 0, true};
                return 0;
        }
        ev = conv_sid_event(c, ev, &sid);
        if (ev && sid.has_time && (sid.time < ev->valid_from || sid.time > ev->valid_until)) {
                c->st.nr_out_of_window++;
                return 0;
        }
        uint32_t new_tid = sid.tid;
        if (new_tid == CONV_NONE || cpu >= c->nr_cpus || c->cpu_tid[cpu] == new_tid)
                return 0; /* seen: the CSwitch of this switch was written */
        if (!conv_is_traced(c, new_tid))
                return 0; /* -p: another process's switch (CPU-wide records) */
        /* the thread switched out: the record says so CPU-wide; a per-task record does not,
           and the last thread this CPU was seen switching to is the best guess */
        uint32_t old_tid = is_cpu_wide ? le_get32(rec + 12)
                                       : (c->cpu_tid[cpu] == CONV_NONE ? 0 : c->cpu_tid[cpu]);
        struct perf_thread_state st = switched_out_state(c, cpu, &old_tid, new_tid);
        const struct conv_task *nt = conv_umap_find(&c->tasks, new_tid);
        const struct conv_task *ot = conv_umap_find(&c->tasks, old_tid);
        int64_t new_prio = nt && nt->prio >= 0 ? nt->prio : 120; /* unknown: nice 0 */
        int64_t old_prio = ot && ot->prio >= 0 ? ot->prio : 120;
        uint64_t ts = conv_stamp(c, cpu, sid.time);
        uint32_t n = conv_build_cswitch(c, c->payload, cpu, ts, new_tid, old_tid, new_prio,
                                        old_prio, st);
        c->st.nr_cswitch_repaired++;
        if (c->has_switch_plan && sid.time >= c->switch_plan_from)
                conv_stacks_set(c, c->is_switch_plan_on);
        int rc = conv_emit(c, cpu,
                           etl_record_perfinfo64(c->rec, WMI_LOG_TYPE_CONTEXT_SWAP, 4, ts, NULL, 0,
                                                 c->payload, n));
        if (rc == 0 && c->has_switch_stacks)
                rc = conv_emit_switch_in_stack(c, cpu, ts, new_tid);
        return rc;
}
