/* SPDX-License-Identifier: MIT */
/* attr_spec.c: the perf_event_attr specification: a session's settings checked against the
   machine and turned into the events it needs (LINUX-MAPPING.md 1, 2, 5), without a system call. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "attr_spec.h"
#include "kevent.h"
#include "live_int.h"

static bool mask_on(const PERFINFO_GROUPMASK *m, uint32_t flag0, uint32_t group)
{
        return (m->Masks[0] & flag0) ||
               (group && (m->Masks[PERF_GET_MASK_INDEX(group)] & PERF_GET_MASK_GROUP(group)));
}

bool attr_spec_has_hook(const uint16_t *hooks, uint32_t nr, uint16_t hook)
{
        for (uint32_t i = 0; i < nr; i++) {
                if (hooks[i] == hook)
                        return true;
        }
        return false;
}

static bool wants_profile(const struct live_settings *s)
{
        return mask_on(&s->masks, EVENT_TRACE_FLAG_PROFILE, PERF_PROFILE);
}

static bool wants_pmc_profile(const struct live_settings *s)
{
        return mask_on(&s->masks, 0, PERF_PMC_PROFILE);
}

/* The bytes a second a CPU's ring takes at most when the session's sampling events are the timer
   alone (each sample with the deepest chain the kernel writes, its user stack's copy, its branch
   stack, its counters); UINT64_MAX where it has events whose rate nothing bounds: switches and
   wake-ups (a ping-pong's 20-40 MB/s a CPU), counter overflows. 0: side-band alone. */
static uint64_t timer_bytes_per_s(const struct live_settings *s)
{
        if (attr_spec_wants_cswitch(s) || attr_spec_wants_ready(s) ||
            (wants_pmc_profile(s) && s->nr_profile_sources))
                return UINT64_MAX;
        if (!wants_profile(s))
                return 0;
        uint64_t bytes = 128; /* the header, its ids, ip, tid, time, cpu, period */
        if (attr_spec_has_hook(s->stack_hooks, s->nr_stack_hooks, LIVE_PROFILE_HOOK)) {
                bytes += 8 * (LIVE_RING_CHAIN_MAX + 4); /* the chain and its context marks */
                if (s->stack_walk == PERF_CONV_WALK_DWARF || s->stack_walk == PERF_CONV_WALK_AUTO)
                        bytes += 8 * 32 + 16 +
                                 (s->user_stack_bytes ? s->user_stack_bytes
                                                      : LIVE_DEFAULT_USER_STACK);
        }
        if (attr_spec_has_hook(s->lbr_hooks, s->nr_lbr_hooks, LIVE_PROFILE_HOOK))
                bytes += 16 + 24 * 32;
        if (s->nr_pmc_counters &&
            attr_spec_has_hook(s->pmc_hooks, s->nr_pmc_hooks, LIVE_PROFILE_HOOK))
                bytes += 16 + 16 * (uint64_t)s->nr_pmc_counters;
        return bytes * (10000000u / attr_spec_interval(s));
}

/* The data pages of each CPU's ring: the settings', else ETWTOP_RING_PAGES from the environment
   (a power of 2: benchmarks and tests give a small machine the ring a CPU of a big one has),
   else the default for this many CPUs (a power of 2, as mmap wants; where the rings grow at an
   update, no more than the events of now need: LIVE_RING_TIMER_DIV), raised until the rings
   hold the session's minimum buffers (min_ring_bytes: xperf's -MinBuffers x -BufferSize, what a
   Windows user raises against lost events; perf record's -m). */
uint32_t attr_spec_ring_pages(const struct live_spec_env *env, const struct live_settings *s)
{
        if (s->ring_pages)
                return s->ring_pages;
        const char *pages_env = getenv("ETWTOP_RING_PAGES");
        unsigned long v = pages_env ? strtoul(pages_env, NULL, 10) : 0;
        if (v && v <= LIVE_RING_MAX_PAGES * 16 && !(v & (v - 1)))
                return (uint32_t)v;
        uint32_t per = LIVE_RING_TOTAL_PAGES / (env->nr_online ? env->nr_online : 1);
        uint32_t pages = LIVE_RING_MIN_PAGES;
        while (pages * 2 <= per && pages < LIVE_RING_MAX_PAGES)
                pages *= 2;
        long page_size = sysconf(_SC_PAGESIZE);
        uint64_t page_bytes = (uint64_t)(page_size > 0 ? page_size : 4096);
        uint64_t timer_bytes = env->can_grow_rings ? timer_bytes_per_s(s) : UINT64_MAX;
        if (timer_bytes != UINT64_MAX) {
                uint32_t need = LIVE_RING_MIN_PAGES;
                while ((uint64_t)need * page_bytes < timer_bytes / LIVE_RING_TIMER_DIV &&
                       need < pages)
                        need *= 2;
                pages = need;
        }
        uint64_t nr_rings = env->nr_online ? env->nr_online : 1;
        uint64_t want = (s->min_ring_bytes + nr_rings - 1) / nr_rings;
        while ((uint64_t)pages * page_bytes < want && pages < LIVE_RING_MAX_PAGES * 16)
                pages *= 2;
        /* an ordinary user locks no more than perf_event_mlock_kb per CPU (perf shrinks its
           rings the same way) */
        if (env->caps->max_ring_pages && pages > env->caps->max_ring_pages)
                pages = env->caps->max_ring_pages;
        return pages;
}

/* The bytes of a ring of ring_bytes that wake the logger: a quarter of it; half where the
   session's records come at a rate its settings bound and its rings are sized for (timer samples
   with the kernel's frame-pointer chains, no stack copies, no switches or wake-ups:
   timer_bytes_per_s, worst case a chain of LIVE_RING_CHAIN_MAX frames, a ring of at least a
   1/LIVE_RING_TIMER_DIV second of it). Such a ring's real samples (a dozen frames, not a
   hundred) fill a half in more than a FlushTimer of a second: the logger wakes for the flush
   alone, not two or three times more a second for a quarter (a wake-up each, ~40 us of CPU on a
   busy VM: a sixth of a samples-only logger's), and the other half still holds an eighth of a
   second at the worst case's rate. */
uint32_t attr_spec_ring_watermark(const struct live_settings *s, uint64_t ring_bytes)
{
        uint64_t timer_bytes = timer_bytes_per_s(s);
        bool is_bounded = timer_bytes && timer_bytes != UINT64_MAX &&
                          s->stack_walk != PERF_CONV_WALK_DWARF &&
                          s->stack_walk != PERF_CONV_WALK_AUTO;
        uint64_t bytes = is_bounded ? ring_bytes / 2 : ring_bytes / 4;
        return bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)bytes;
}

bool attr_spec_wants_cswitch(const struct live_settings *s)
{
        return mask_on(&s->masks, EVENT_TRACE_FLAG_CSWITCH, PERF_CONTEXT_SWITCH);
}

bool attr_spec_wants_ready(const struct live_settings *s)
{
        return mask_on(&s->masks, EVENT_TRACE_FLAG_DISPATCHER, PERF_DISPATCHER);
}

static bool wants_proc(const struct live_settings *s)
{
        return s->masks.Masks[0] &
               (EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD | EVENT_TRACE_FLAG_IMAGE_LOAD);
}

static bool wants_image(const struct live_settings *s)
{
        return s->masks.Masks[0] & EVENT_TRACE_FLAG_IMAGE_LOAD;
}

uint32_t attr_spec_interval(const struct live_settings *s)
{
        return s->profile_interval_100ns ? s->profile_interval_100ns : LIVE_DEFAULT_INTERVAL;
}

/* KPROFILE_SOURCE -> perf event (LINUX-MAPPING.md 2). -ENOENT for sources with no equivalent. */
static int source_event(uint32_t source, uint32_t *type, uint64_t *config)
{
#define HWC(cache, op, res) ((cache) | (op) << 8 | (res) << 16)
        *type = PERF_TYPE_HARDWARE;
        switch (source) {
        case ProfileTime:
        case 36: /* TimerFixed */
                *type = PERF_TYPE_SOFTWARE;
                *config = PERF_COUNT_SW_CPU_CLOCK;
                return 0;
        case ProfileAlignmentFixup:
                *type = PERF_TYPE_SOFTWARE;
                *config = PERF_COUNT_SW_ALIGNMENT_FAULTS;
                return 0;
        case ProfileTotalIssues:
        case 26: /* InstructionRetired */
        case 33: *config = PERF_COUNT_HW_INSTRUCTIONS; return 0;
        case ProfilePipelineDry: *config = PERF_COUNT_HW_STALLED_CYCLES_FRONTEND; return 0;
        case ProfilePipelineFrozen: *config = PERF_COUNT_HW_STALLED_CYCLES_BACKEND; return 0;
        case ProfileBranchInstructions:
        case 30: *config = PERF_COUNT_HW_BRANCH_INSTRUCTIONS; return 0;
        case ProfileCacheMisses:
        case 29: *config = PERF_COUNT_HW_CACHE_MISSES; return 0;
        case ProfileBranchMispredictions:
        case 31: *config = PERF_COUNT_HW_BRANCH_MISSES; return 0;
        case ProfileTotalCycles:
        case 25:
        case 34: *config = PERF_COUNT_HW_CPU_CYCLES; return 0;
        case 27:
        case 35: *config = PERF_COUNT_HW_REF_CPU_CYCLES; return 0;
        case 28: *config = PERF_COUNT_HW_CACHE_REFERENCES; return 0;
        case ProfileLoadInstructions:
        case ProfileDcacheAccesses:
                *type = PERF_TYPE_HW_CACHE;
                *config = HWC(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ,
                              PERF_COUNT_HW_CACHE_RESULT_ACCESS);
                return 0;
        case ProfileStoreInstructions:
                *type = PERF_TYPE_HW_CACHE;
                *config = HWC(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_WRITE,
                              PERF_COUNT_HW_CACHE_RESULT_ACCESS);
                return 0;
        case ProfileDcacheMisses:
                *type = PERF_TYPE_HW_CACHE;
                *config = HWC(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ,
                              PERF_COUNT_HW_CACHE_RESULT_MISS);
                return 0;
        case ProfileIcacheMisses:
                *type = PERF_TYPE_HW_CACHE;
                *config = HWC(PERF_COUNT_HW_CACHE_L1I, PERF_COUNT_HW_CACHE_OP_READ,
                              PERF_COUNT_HW_CACHE_RESULT_MISS);
                return 0;
        case ProfileIcacheIssues:
                *type = PERF_TYPE_HW_CACHE;
                *config = HWC(PERF_COUNT_HW_CACHE_L1I, PERF_COUNT_HW_CACHE_OP_READ,
                              PERF_COUNT_HW_CACHE_RESULT_ACCESS);
                return 0;
        default: return -ENOENT;
        }
#undef HWC
}

const char *attr_spec_source_name(uint32_t source, char *buf, size_t size)
{
        const char *n = kevent_pmc_source_name(source);
        if (n)
                return n;
        snprintf(buf, size, "Source%u", source);
        return buf;
}

static bool source_is_hardware(uint32_t source)
{
        uint32_t type = PERF_TYPE_HARDWARE;
        uint64_t config;
        return source_event(source, &type, &config) == 0 && type != PERF_TYPE_SOFTWARE;
}

static bool uses_pmu(const struct live_settings *s)
{
        bool is_hw = s->nr_lbr_hooks > 0;
        for (uint32_t i = 0; i < s->nr_profile_sources; i++)
                is_hw |= source_is_hardware(s->profile_sources[i]);
        for (uint32_t i = 0; i < s->nr_pmc_counters; i++)
                is_hw |= source_is_hardware(s->pmc_counters[i]);
        return is_hw;
}

/* The user stack a DWARF walk copies per sample. */
uint32_t attr_spec_stack_bytes(const struct live_settings *s)
{
        return s->user_stack_bytes ? s->user_stack_bytes : LIVE_DEFAULT_USER_STACK;
}

/* Checks settings against this machine. 0 or -errno with err filled. */
int attr_spec_check(const struct live_settings *s, const struct live_caps *caps,
                    struct etl_error *err)
{
        if (s->nr_stack_hooks > LIVE_MAX_STACK_HOOKS || s->nr_profile_sources > LIVE_MAX_SOURCES ||
            s->nr_pmc_hooks > LIVE_MAX_SOURCES || s->nr_pmc_counters > LIVE_MAX_SOURCES ||
            s->nr_lbr_hooks > LIVE_MAX_LBR_HOOKS) {
                live_set_err(err,
                             "too many stack hooks, profile sources, PMC hooks, counters or LBR "
                             "hooks");
                return -EINVAL;
        }
        uint32_t iv = attr_spec_interval(s);
        if (iv < LIVE_MIN_INTERVAL || iv > LIVE_MAX_INTERVAL) {
                live_set_err(err,
                             "profile interval %u (100 ns units) is out of range: %u (10 us, the "
                             "kernel's cpu-clock floor) to %u",
                             iv, LIVE_MIN_INTERVAL, LIVE_MAX_INTERVAL);
                return -EINVAL;
        }
        if (s->ring_pages & (s->ring_pages - 1)) {
                live_set_err(err, "ring_pages %u is not a power of 2", s->ring_pages);
                return -EINVAL;
        }
        if (s->stack_walk > PERF_CONV_WALK_AUTO) {
                live_set_err(err,
                             "stack-walk mode %u is unknown: 0 frame pointers, 1 DWARF, 2 auto",
                             s->stack_walk);
                return -EINVAL;
        }
        if (s->user_stack_bytes % 8 || s->user_stack_bytes > LIVE_MAX_USER_STACK) {
                live_set_err(err, "a user stack copy of %u bytes: a multiple of 8 up to %u (0: %u)",
                             s->user_stack_bytes, LIVE_MAX_USER_STACK, LIVE_DEFAULT_USER_STACK);
                return -EINVAL;
        }
        if (s->pid < -1 || s->pid == 0) {
                live_set_err(err, "pid %d: -1 for the whole system or a process id", (int)s->pid);
                return -EINVAL;
        }
        if (s->nr_lbr_hooks) {
                struct perf_lbr_filter f;
                if (perf_lbr_filter_from_etw(s->lbr_flags, &f) < 0) {
                        live_set_err(err,
                                     "LBR flags 0x%x leave nothing to record (kernel and user both "
                                     "filtered, every branch type filtered, or an unknown bit)",
                                     s->lbr_flags);
                        return -EINVAL;
                }
        }
        if (uses_pmu(s) && !caps->has_pmu) {
                live_set_err(err, "%s", s->nr_lbr_hooks ? caps->why_no_lbr : caps->why_no_pmu);
                return -EOPNOTSUPP;
        }
        if (s->nr_lbr_hooks && !caps->has_lbr) {
                live_set_err(err, "%s", caps->why_no_lbr);
                return -EOPNOTSUPP;
        }
        for (uint32_t i = 0; i < s->nr_lbr_hooks; i++) {
                if (s->lbr_hooks[i] != LIVE_PROFILE_HOOK &&
                    s->lbr_hooks[i] != LIVE_PROFILE_PMC_HOOK) {
                        live_set_err(
                                err,
                                "LBR on hook 0x%04x is not supported: perf attaches branch "
                                "stacks only to hardware sampling events (SampledProfile 0x0F2E, "
                                "PMC interrupt 0x0F2F); other hooks need bpf_get_branch_snapshot",
                                s->lbr_hooks[i]);
                        return -EOPNOTSUPP;
                }
        }
        for (uint32_t i = 0; i < s->nr_profile_sources; i++) {
                uint32_t type;
                uint64_t config;
                if (source_event(s->profile_sources[i], &type, &config) < 0) {
                        live_set_err(err, "profile source %u has no perf equivalent on Linux",
                                     s->profile_sources[i]);
                        return -EOPNOTSUPP;
                }
        }
        for (uint32_t i = 0; i < s->nr_pmc_counters; i++) {
                uint32_t type;
                uint64_t config;
                if (source_event(s->pmc_counters[i], &type, &config) < 0) {
                        live_set_err(err, "PMC counter %u has no perf equivalent on Linux",
                                     s->pmc_counters[i]);
                        return -EOPNOTSUPP;
                }
        }
        return 0;
}

static void spec_common(const struct live_spec_env *env, const struct live_settings *s,
                        struct live_spec *sp, uint32_t type, uint64_t config)
{
        struct perf_event_attr *a = &sp->attr;
        probe_base_attr(a, type, config);
        a->sample_type = PERF_CONV_SAMPLE_ID_BITS;
        a->read_format = PERF_FORMAT_ID | PERF_FORMAT_LOST;
        a->sample_id_all = 1;
        a->use_clockid = 1;
        a->clockid = CLOCK_MONOTONIC;
        /* -p: the process's threads, those created later included, not its child processes
           (inherit_thread: only clones with CLONE_THREAD inherit, Linux 5.13) */
        a->inherit = s->pid > 0;
        a->inherit_thread = s->pid > 0 && env->has_inherit_thread;
        if (!env->caps->has_kernel) {
                a->exclude_kernel = 1;
                a->exclude_callchain_kernel = 1;
        }
        sp->conv.valid_until = UINT64_MAX;
}

/* Adds the stack, PMC counters and LBR a hook asks for to a sampling event. */
static void spec_hooks(const struct live_settings *s, struct live_spec *sp, uint16_t hook)
{
        struct perf_event_attr *a = &sp->attr;
        sp->conv.sample_type = a->sample_type |= PERF_SAMPLE_IP;
        if (attr_spec_has_hook(s->stack_hooks, s->nr_stack_hooks, hook)) {
                a->sample_type |= PERF_SAMPLE_CALLCHAIN;
                sp->conv.has_stack = true;
                /* dwarf: every event with stacks; auto: the sampling events, whose rate the
                   interval bounds (a context switch's copy at 100,000 switches a second is
                   gigabytes a second the rings cannot hold: their stacks keep the kernel's
                   chain) */
                bool is_sampling = hook == LIVE_PROFILE_HOOK || hook == LIVE_PROFILE_PMC_HOOK;
                if (s->stack_walk == PERF_CONV_WALK_DWARF ||
                    (s->stack_walk == PERF_CONV_WALK_AUTO && is_sampling)) {
                        /* the user registers and stack for the logger's DWARF walk; the
                           kernel's own user chain only where AUTO may keep it */
                        a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
                        a->sample_regs_user = PERF_CONV_REGS_USER_MASK;
                        a->sample_stack_user =
                                s->user_stack_bytes ? s->user_stack_bytes : LIVE_DEFAULT_USER_STACK;
                        a->exclude_callchain_user = s->stack_walk == PERF_CONV_WALK_DWARF;
                        sp->conv.walk = (uint8_t)s->stack_walk;
                        sp->conv.regs_user_mask = PERF_CONV_REGS_USER_MASK;
                }
        }
        if (s->nr_pmc_counters && attr_spec_has_hook(s->pmc_hooks, s->nr_pmc_hooks, hook)) {
                a->sample_type |= PERF_SAMPLE_READ;
                a->read_format |= PERF_FORMAT_GROUP;
                for (uint32_t i = 0; i < s->nr_pmc_counters; i++) {
                        uint32_t type = 0;
                        uint64_t config = 0;
                        source_event(s->pmc_counters[i], &type, &config);
                        struct perf_event_attr *m = &sp->members[sp->nr_members++];
                        memset(m, 0, sizeof(*m));
                        m->size = sizeof(*m);
                        m->type = type;
                        m->config = config;
                        m->read_format = a->read_format;
                        m->inherit = a->inherit;
                        m->inherit_thread = a->inherit_thread;
                        m->exclude_kernel = a->exclude_kernel;
                }
                sp->conv.nr_pmc = s->nr_pmc_counters;
        }
        if (s->nr_lbr_hooks && attr_spec_has_hook(s->lbr_hooks, s->nr_lbr_hooks, hook)) {
                perf_lbr_filter_from_etw(s->lbr_flags, &sp->conv.lbr);
                a->sample_type |= PERF_SAMPLE_BRANCH_STACK;
                a->branch_sample_type = sp->conv.lbr.branch_sample_type;
                sp->conv.has_lbr = true;
                sp->conv.lbr_options = s->lbr_flags;
        }
        sp->conv.sample_type = a->sample_type;
        sp->conv.read_format = a->read_format;
        sp->conv.branch_sample_type = a->branch_sample_type;
}

/* The spec of (role, idx) under settings s; false when s does not need that event. */
bool attr_spec_build(const struct live_spec_env *env, const struct live_settings *s,
                     enum live_role role, uint32_t idx, struct live_spec *sp)
{
        memset(sp, 0, sizeof(*sp));
        sp->role = role;
        sp->idx = idx;
        switch (role) {
        case ROLE_RING:
                if (idx)
                        return false;
                sp->what = "the ring's dummy event";
                spec_common(env, s, sp, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
                /* wake poll(2) when a part of the ring is full (attr_spec_ring_watermark): a
                   drain takes the whole ring, and the rest is the slack for the logger's wait
                   for a CPU */
                sp->attr.watermark = 1;
                sp->attr.wakeup_watermark =
                        attr_spec_ring_watermark(s, (uint64_t)attr_spec_ring_pages(env, s) *
                                                            (uint64_t)sysconf(_SC_PAGESIZE));
                sp->conv.kind = PERF_CONV_SIDEBAND;
                break;
        case ROLE_PROC:
                if (idx)
                        return false;
                sp->what = "the comm/task side-band event";
                spec_common(env, s, sp, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
                sp->attr.comm = sp->attr.comm_exec = sp->attr.task = 1;
                sp->conv.kind = PERF_CONV_SIDEBAND;
                break;
        case ROLE_SWITCH:
                if (idx)
                        return false;
                sp->what = "the context-switch side-band event";
                spec_common(env, s, sp, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
                sp->attr.context_switch = 1;
                sp->conv.kind = PERF_CONV_SIDEBAND;
                /* on every CPU, though it costs the switching tasks two records a switch: its
                   switch-in record is the only record of a switch out of a task in whose
                   context the kernel writes nothing (bench/README.md, "Item 2, seventh pass":
                   a Firecracker guest's pid 1 threads, on every CPU, and its idle tasks but
                   CPU 0's), and no record tells beforehand which CPUs such a task will use */
                /* -p: the whole CPU's switch records name the thread each switch-in of the
                   process replaced, and whether it was preempted (a per-thread record names
                   neither); the converter keeps only the process's switches */
                if (s->pid > 0 && env->caps->has_cpu_wide) {
                        sp->is_cpu_wide = true;
                        sp->attr.inherit = sp->attr.inherit_thread = 0;
                }
                break;
        case ROLE_IMAGE:
                if (idx)
                        return false;
                sp->what = "the mmap2 side-band event";
                spec_common(env, s, sp, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
                /* mmap2 only picks the record's format: without mmap the kernel never counts
                   the event as wanting mmap records, and none come (perf_event_open(2)) */
                sp->attr.mmap = sp->attr.mmap2 = 1;
                sp->attr.build_id = env->has_build_id_attr;
                sp->conv.kind = PERF_CONV_SIDEBAND;
                sp->conv.skips_task_records = true; /* ROLE_PROC has them: on with IMAGE_LOAD */
                break;
        case ROLE_PROFILE:
                if (idx)
                        return false;
                if (attr_spec_has_hook(s->lbr_hooks, s->nr_lbr_hooks, LIVE_PROFILE_HOOK)) {
                        /* branch stacks need a hardware trigger: cycles at the timer's rate */
                        sp->what = "the cycles event (LBR trigger of SampledProfile)";
                        spec_common(env, s, sp, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
                        sp->attr.freq = 1;
                        sp->attr.sample_freq = 10000000ull / attr_spec_interval(s);
                } else {
                        sp->what = "cpu-clock";
                        spec_common(env, s, sp, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
                        sp->attr.sample_period = (uint64_t)attr_spec_interval(s) * 100;
                }
                sp->attr.sample_type |= PERF_SAMPLE_PERIOD;
                sp->conv.kind = PERF_CONV_PROFILE;
                spec_hooks(s, sp, LIVE_PROFILE_HOOK);
                break;
        case ROLE_CSWITCH:
        case ROLE_READY:
                if (idx)
                        return false;
                {
                        const struct perf_tp_format *tp =
                                role == ROLE_CSWITCH ? env->tp_switch : env->tp_waking;
                        if (!tp)
                                return false;
                        sp->what =
                                role == ROLE_CSWITCH ? "sched:sched_switch" : "sched:sched_waking";
                        spec_common(env, s, sp, PERF_TYPE_TRACEPOINT, tp->id);
                        sp->attr.sample_period = 1;
                        sp->attr.sample_type |= PERF_SAMPLE_RAW;
                        sp->conv.kind =
                                role == ROLE_CSWITCH ? PERF_CONV_CSWITCH : PERF_CONV_READY_THREAD;
                        sp->conv.tp = tp;
                        spec_hooks(s, sp,
                                   role == ROLE_CSWITCH ? WMI_LOG_TYPE_CONTEXT_SWAP
                                                        : WMI_LOG_TYPE_READY_THREAD);
                        /* the wait reasons come from where a thread left the CPU, whether the
                           CSwitch stacks are written or not: the kernel part of the callchain
                           (its first frames) without a StackWalk */
                        if (role == ROLE_CSWITCH && !sp->conv.has_stack && env->caps->has_kernel &&
                            env->caps->has_kallsyms) {
                                sp->attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
                                sp->attr.exclude_callchain_user = 1;
                                sp->attr.sample_max_stack = LIVE_REASON_FRAMES;
                        }
                }
                break;
        case ROLE_IDLE:
                /* CPU-wide only: a traced process's events never see the idle thread */
                if (idx || !env->tp_idle || s->pid > 0)
                        return false;
                sp->what = "power:cpu_idle";
                spec_common(env, s, sp, PERF_TYPE_TRACEPOINT, env->tp_idle->id);
                sp->attr.sample_period = 1;
                sp->attr.sample_type |= PERF_SAMPLE_RAW;
                sp->conv.kind = PERF_CONV_CPU_IDLE;
                sp->conv.tp = env->tp_idle;
                break;
        case ROLE_PMC: {
                if (idx >= s->nr_profile_sources)
                        return false;
                uint32_t type;
                uint64_t config;
                if (source_event(s->profile_sources[idx], &type, &config) < 0)
                        return false;
                sp->what = "a hardware profile source";
                spec_common(env, s, sp, type, config);
                sp->attr.sample_period = s->source_intervals[idx] ? s->source_intervals[idx]
                                                                  : LIVE_DEFAULT_PMC_PERIOD;
                sp->attr.sample_type |= PERF_SAMPLE_PERIOD;
                sp->conv.kind = PERF_CONV_PMC_SAMPLE;
                sp->conv.profile_source = (uint16_t)s->profile_sources[idx];
                spec_hooks(s, sp, LIVE_PROFILE_PMC_HOOK);
                break;
        }
        }
        sp->conv.sample_type = sp->attr.sample_type;
        sp->conv.read_format = sp->attr.read_format;
        sp->conv.branch_sample_type = sp->attr.branch_sample_type;
        return true;
}

/* Whether two specs open the same event, the sampling period aside. */
bool attr_spec_same(const struct live_spec *a, const struct live_spec *b)
{
        struct perf_event_attr x = a->attr, y = b->attr;
        x.sample_period = y.sample_period = 0;
        return memcmp(&x, &y, sizeof(x)) == 0 && a->nr_members == b->nr_members &&
               memcmp(a->members, b->members, sizeof(a->members[0]) * a->nr_members) == 0 &&
               a->conv.has_stack == b->conv.has_stack && a->conv.has_lbr == b->conv.has_lbr &&
               a->conv.lbr_options == b->conv.lbr_options && a->conv.walk == b->conv.walk &&
               a->conv.profile_source == b->conv.profile_source;
}

bool attr_spec_role_enabled(const struct live_settings *s, enum live_role role)
{
        switch (role) {
        case ROLE_RING: return true;
        case ROLE_PROC: return wants_proc(s);
        case ROLE_IMAGE: return wants_image(s);
        case ROLE_PROFILE: return wants_profile(s);
        case ROLE_CSWITCH:
        case ROLE_SWITCH:
        case ROLE_IDLE: return attr_spec_wants_cswitch(s);
        case ROLE_READY: return attr_spec_wants_ready(s);
        case ROLE_PMC: return wants_pmc_profile(s);
        }
        return false;
}

uint32_t attr_spec_list(const struct live_spec_env *env, const struct live_settings *s,
                        struct live_spec *out)
{
        static const enum live_role roles[] = {ROLE_PROC,   ROLE_IMAGE, ROLE_PROFILE, ROLE_CSWITCH,
                                               ROLE_SWITCH, ROLE_READY, ROLE_IDLE,    ROLE_PMC};
        uint32_t n = 0;
        if (attr_spec_build(env, s, ROLE_RING, 0, &out[n]))
                n++;
        for (size_t r = 0; r < sizeof(roles) / sizeof(roles[0]); r++) {
                for (uint32_t idx = 0; idx < LIVE_MAX_SOURCES; idx++) {
                        if (attr_spec_build(env, s, roles[r], idx, &out[n]))
                                n++;
                }
        }
        return n;
}
