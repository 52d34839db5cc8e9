/* SPDX-License-Identifier: MIT */
/* perf_data_conv.c: a perf.data file's records, in the live form and time order
   (perf_data_norm.c), through the live source's converter (perf_convert.c) with hooks that
   answer from the file (BUILD_ID feature) rather than /proc. */
#include "perf_data_conv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "etw/ntwmi.h"
#include "kevent.h"
#include "le_bytes.h"
#include "perf_data_int.h"
#include "perf_data_norm.h"
#include "util/xalloc.h"

#define OWN_SOURCE_BASE 64u /* KPROFILE_SOURCE values of events ETW has no name for */
#define FILETIME_UNIX   116444736000000000ll

/* ---- the file's events as the converter's ---- */

/* ETW's KPROFILE_SOURCE for a generic hardware event (ETL-FORMAT.md 3.3, kevent_names.c). */
static int hw_source(uint64_t config)
{
        switch (config) {
        case PERF_COUNT_HW_CPU_CYCLES: return ProfileTotalCycles;
        case PERF_COUNT_HW_INSTRUCTIONS: return 26;     /* InstructionRetired */
        case PERF_COUNT_HW_CACHE_REFERENCES: return 28; /* LLCReference */
        case PERF_COUNT_HW_CACHE_MISSES: return ProfileCacheMisses;
        case PERF_COUNT_HW_BRANCH_INSTRUCTIONS: return ProfileBranchInstructions;
        case PERF_COUNT_HW_BRANCH_MISSES: return ProfileBranchMispredictions;
        case PERF_COUNT_HW_REF_CPU_CYCLES: return 27; /* UnhaltedReferenceCycles */
        case PERF_COUNT_HW_STALLED_CYCLES_FRONTEND: return ProfilePipelineDry;
        case PERF_COUNT_HW_STALLED_CYCLES_BACKEND: return ProfilePipelineFrozen;
        default: return -1;
        }
}

/* The EVNTRACE_LBR_* Options an LBR configuration would have had to record what
   branch_sample_type selected (the inverse of perf_lbr_filter_from_etw): privilege levels from
   the PLM bits, or from the event's exclude_* bits when there are none, as the kernel does. */
static uint32_t lbr_options_of(const struct perf_event_attr *a)
{
        uint64_t bst = a->branch_sample_type;
        uint32_t o = 0;
        bool has_user, has_kernel;
        if (bst & (PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_KERNEL | PERF_SAMPLE_BRANCH_HV)) {
                has_user = bst & PERF_SAMPLE_BRANCH_USER;
                has_kernel = bst & PERF_SAMPLE_BRANCH_KERNEL;
        } else {
                has_user = !a->exclude_user;
                has_kernel = !a->exclude_kernel;
        }
        if (!has_kernel)
                o |= EVNTRACE_LBR_FILTER_KERNEL;
        if (!has_user)
                o |= EVNTRACE_LBR_FILTER_USER;
        if (bst & PERF_SAMPLE_BRANCH_CALL_STACK)
                return o | EVNTRACE_LBR_CALLSTACK_ENABLE;
        uint32_t all = EVNTRACE_LBR_FILTER_JCC | EVNTRACE_LBR_FILTER_NEAR_REL_CALL |
                       EVNTRACE_LBR_FILTER_NEAR_IND_CALL | EVNTRACE_LBR_FILTER_NEAR_RET |
                       EVNTRACE_LBR_FILTER_NEAR_IND_JMP | EVNTRACE_LBR_FILTER_NEAR_REL_JMP |
                       EVNTRACE_LBR_FILTER_FAR_BRANCH;
        uint32_t keep = 0;
        if (bst & PERF_SAMPLE_BRANCH_ANY_CALL)
                keep |= EVNTRACE_LBR_FILTER_NEAR_REL_CALL | EVNTRACE_LBR_FILTER_NEAR_IND_CALL |
                        EVNTRACE_LBR_FILTER_FAR_BRANCH;
        if (bst & PERF_SAMPLE_BRANCH_CALL)
                keep |= EVNTRACE_LBR_FILTER_NEAR_REL_CALL;
        if (bst & PERF_SAMPLE_BRANCH_IND_CALL)
                keep |= EVNTRACE_LBR_FILTER_NEAR_IND_CALL;
        if (bst & PERF_SAMPLE_BRANCH_ANY_RETURN)
                keep |= EVNTRACE_LBR_FILTER_NEAR_RET | EVNTRACE_LBR_FILTER_FAR_BRANCH;
        if (bst & PERF_SAMPLE_BRANCH_COND)
                keep |= EVNTRACE_LBR_FILTER_JCC;
        if (bst & PERF_SAMPLE_BRANCH_IND_JUMP)
                keep |= EVNTRACE_LBR_FILTER_NEAR_IND_JMP;
        if ((bst & PERF_SAMPLE_BRANCH_ANY) || !keep)
                keep = all; /* everything (no type bit: perf's default, any) */
        return o | (all & ~keep);
}

/* Whether an event before the i-th is a timer (cpu-clock, task-clock). */
static bool has_timer_before(const struct perf_data *pd, uint32_t i)
{
        for (uint32_t k = 0; k < i; k++) {
                const struct perf_event_attr *a = &perf_data_event(pd, k)->attr;
                uint64_t config = a->config & 0xffffffffu;
                if (a->type == PERF_TYPE_SOFTWARE &&
                    (config == PERF_COUNT_SW_CPU_CLOCK || config == PERF_COUNT_SW_TASK_CLOCK))
                        return true;
        }
        return false;
}

/* Whether event i is a hardware event of a hybrid machine's PMU (its type in config's high half)
   that another PMU's event of the same kind shares the file with. */
static bool hybrid_twin(const struct perf_data *pd, uint32_t i)
{
        const struct perf_event_attr *a = &perf_data_event(pd, i)->attr;
        if (!(a->config >> 32))
                return false;
        for (uint32_t k = 0; k < perf_data_nr_events(pd); k++) {
                const struct perf_event_attr *b = &perf_data_event(pd, k)->attr;
                if (k != i && b->type == PERF_TYPE_HARDWARE &&
                    (b->config & 0xffffffffu) == (a->config & 0xffffffffu) &&
                    b->config >> 32 != a->config >> 32)
                        return true;
        }
        return false;
}

static bool reads_group(const struct perf_event_attr *a)
{
        return (a->sample_type & PERF_SAMPLE_READ) && (a->read_format & PERF_FORMAT_GROUP);
}

/* [leader, *end): the events of event leader's group: GROUP_DESC's, else the events after it
   that sample nothing and read their group (perf writes a group's events one after another,
   its leader first). */
static uint32_t group_end(const struct perf_data *pd, uint32_t leader)
{
        const struct perf_data_info *in = perf_data_info(pd);
        uint32_t n = perf_data_nr_events(pd);
        for (uint32_t g = 0; g < in->nr_groups; g++)
                if (in->groups[g].leader == leader && in->groups[g].nr_members)
                        return leader + in->groups[g].nr_members < n
                                       ? leader + in->groups[g].nr_members
                                       : n;
        uint32_t end = leader + 1;
        while (end < n) {
                const struct perf_event_attr *b = &perf_data_event(pd, end)->attr;
                if (b->sample_period || b->freq || !reads_group(b))
                        break;
                end++;
        }
        return end;
}

/* Whether event i samples and reads its group at each sample (a leader-sampled group). */
static bool samples_its_group(const struct perf_data *pd, uint32_t i)
{
        const struct perf_event_attr *a = &perf_data_event(pd, i)->attr;
        return a->sample_period && reads_group(a);
}

int32_t perf_data_sampling_leader(const struct perf_data *pd, uint32_t i)
{
        const struct perf_event_attr *a = &perf_data_event(pd, i)->attr;
        if (a->sample_period || a->freq || !reads_group(a))
                return -1;
        for (uint32_t k = i; k-- > 0;)
                if (samples_its_group(pd, k))
                        return i < group_end(pd, k) ? (int32_t)k : -1;
        return -1;
}

/* Event i's group members (ev->members) where it samples its group: each read's counters after
   the leader's, by their events, 0 for one that samples itself. */
static void group_members(const struct perf_data *pd, uint32_t i, struct perf_conv_event *ev)
{
        if (!samples_its_group(pd, i))
                return;
        uint32_t end = group_end(pd, i);
        for (uint32_t j = i + 1; j < end && ev->nr_members < 7; j++) {
                const struct perf_event_attr *b = &perf_data_event(pd, j)->attr;
                ev->members[ev->nr_members++] =
                        b->sample_period || b->freq || j + 1 > MAX_CONV_EVENTS ? 0
                                                                               : (uint16_t)(j + 1);
        }
        ev->is_read_inherit = perf_data_event(pd, i)->attr.inherit;
}

void perf_data_conv_event_of(const struct perf_data *pd, uint32_t i, struct perf_conv_event *ev,
                             char *name, size_t name_size)
{
        const struct perf_data_event *fe = perf_data_event(pd, i);
        const struct perf_event_attr *a = &fe->attr;
        memset(ev, 0, sizeof(*ev));
        ev->sample_type = a->sample_type | PERF_SAMPLE_IDENTIFIER;
        ev->read_format = a->read_format;
        ev->branch_sample_type = a->branch_sample_type;
        ev->regs_user_mask = a->sample_regs_user;
        ev->walk = PERF_CONV_WALK_FP;
        ev->valid_until = UINT64_MAX;
        ev->has_stack = (a->sample_type & PERF_SAMPLE_CALLCHAIN) != 0;
        ev->has_lbr = (a->sample_type & PERF_SAMPLE_BRANCH_STACK) != 0;
        ev->lbr.branch_sample_type = a->branch_sample_type;
        if (ev->has_lbr)
                ev->lbr_options = lbr_options_of(a);
        ev->is_lbr_call_graph = ev->has_lbr && ev->has_stack &&
                                (a->branch_sample_type & PERF_SAMPLE_BRANCH_CALL_STACK);
        /* perf record --call-graph dwarf: the user stack walked from the register and stack
           copies, as the live source's DWARF walk does */
        if ((a->sample_type & PERF_SAMPLE_REGS_USER) && (a->sample_type & PERF_SAMPLE_STACK_USER) &&
            a->sample_regs_user) {
                ev->walk = PERF_CONV_WALK_DWARF;
                ev->has_stack = true;
        }
        if (reads_group(a)) {
                ev->nr_pmc = 7; /* the group's counters after the leader, as many as come */
                group_members(pd, i, ev);
        }
        perf_data_event_name(fe, name, name_size);
        uint64_t config = a->config & 0xffffffffu; /* hybrid PMUs: the PMU type above */
        int source = -1;
        switch (a->type) {
        case PERF_TYPE_SOFTWARE:
                /* the first timer event is ETW's Timer; another (cpu-clock and task-clock both
                   recorded) a source of its own, as perf report shows each event apart */
                if ((config == PERF_COUNT_SW_CPU_CLOCK || config == PERF_COUNT_SW_TASK_CLOCK) &&
                    !has_timer_before(pd, i)) {
                        ev->kind = PERF_CONV_PROFILE;
                        ev->profile_source = ProfileTime;
                        snprintf(name, name_size, "Timer");
                        return;
                }
                if (config == PERF_COUNT_SW_DUMMY) {
                        ev->kind = PERF_CONV_SIDEBAND;
                        return;
                }
                break;
        case PERF_TYPE_TRACEPOINT:
                /* samples of sched_switch, sched_waking and cpu_idle become CSwitch, ReadyThread
                   and C-states once their formats are known (TRACING_DATA: tracepoint_setup);
                   another tracepoint's samples are a source of their own, named by the
                   tracepoint, where it fired (its IP and stack), as perf report counts them */
                break;
        case PERF_TYPE_HARDWARE:
                /* a hybrid machine's one event on each of its PMUs (cpu_core/cycles/ and
                   cpu_atom/cycles/: the PMU's type in config's high half) are two sources, as
                   perf report shows them apart, each named by the file */
                source = hybrid_twin(pd, i) ? -1 : hw_source(config);
                break;
        default: /* raw events, cache events, other PMUs */ break;
        }
        ev->kind = PERF_CONV_PMC_SAMPLE;
        if (source >= 0) {
                ev->profile_source = (uint16_t)source;
                const char *n = kevent_pmc_source_name((uint32_t)source);
                if (n)
                        snprintf(name, name_size, "%s", n);
        } else {
                ev->profile_source = (uint16_t)(OWN_SOURCE_BASE + i);
                /* an event of a PMU of its own that the file does not name: perf's form */
                const struct perf_data_info *in = perf_data_info(pd);
                for (uint32_t k = 0; !fe->name && a->type >= PERF_TYPE_MAX && k < in->nr_pmus; k++)
                        if (in->pmus[k].type == a->type)
                                snprintf(name, name_size, "%s/config=0x%llx/", in->pmus[k].name,
                                         (unsigned long long)a->config);
        }
}

/* ---- the converter's hooks, answered from the file ---- */

struct file_hooks {
        struct etl_writer *w;
        struct conv_state *cs;
        uint64_t nr_append_failures;
};

static int hook_emit(void *ctx, uint32_t cpu, const void *rec, uint32_t size)
{
        struct file_hooks *h = ctx;
        if (etl_writer_append(h->w, cpu, rec, size) < 0)
                h->nr_append_failures++;
        return 0;
}

static const struct perf_conv_event *hook_event_of(void *ctx, uint64_t id)
{
        struct file_hooks *h = ctx;
        uint32_t n = perf_data_nr_events(h->cs->pd);
        if (id >= 1 && id <= n && n <= MAX_CONV_EVENTS)
                return &h->cs->events[id - 1];
        if (id >= SIDEBAND_ID_BASE && id < SIDEBAND_ID_BASE + n && n <= MAX_CONV_EVENTS)
                return &h->cs->events[MAX_CONV_EVENTS + (id - SIDEBAND_ID_BASE)];
        return NULL;
}

static void hook_cmdline_of(void *ctx, uint32_t pid, char *buf, size_t size)
{
        (void)ctx;
        (void)pid;
        if (size)
                buf[0] = '\0'; /* a file does not say */
}

/* The build-id the file's BUILD_ID feature gives the path. */
static uint32_t hook_build_id_of(void *ctx, const char *path, uint8_t *id, uint32_t max)
{
        struct file_hooks *h = ctx;
        const struct perf_data_info *in = perf_data_info(h->cs->pd);
        for (uint32_t i = 0; i < in->nr_build_ids; i++) {
                const struct perf_data_build_id *b = &in->build_ids[i];
                if (strcmp(b->path, path) != 0)
                        continue;
                uint32_t n = b->size < max ? b->size : max;
                memcpy(id, b->id, n);
                return n;
        }
        return 0;
}

static uint32_t hook_uid_of(void *ctx, uint32_t pid)
{
        (void)ctx;
        (void)pid;
        return PERF_CONV_NO_UID;
}

/* ---- conversion ---- */

/* The masks of what the file holds: processes, threads, images, and the profile sources. */
static void file_masks(const struct conv_state *cs, uint32_t nr, PERFINFO_GROUPMASK *m)
{
        memset(m, 0, sizeof(*m));
        m->Masks[0] = PERF_PROC_THREAD | PERF_LOADER;
        for (uint32_t i = 0; i < nr; i++) {
                if (cs->events[i].kind == PERF_CONV_PROFILE) {
                        m->Masks[0] |= PERF_PROFILE_FLAG;
                        m->Masks[PERF_GET_MASK_INDEX(PERF_PROFILE)] |=
                                PERF_GET_MASK_GROUP(PERF_PROFILE);
                }
                if (cs->events[i].kind == PERF_CONV_PMC_SAMPLE)
                        m->Masks[PERF_GET_MASK_INDEX(PERF_PMC_PROFILE)] |=
                                PERF_GET_MASK_GROUP(PERF_PMC_PROFILE);
                if (cs->events[i].kind == PERF_CONV_CSWITCH)
                        m->Masks[PERF_GET_MASK_INDEX(PERF_CONTEXT_SWITCH)] |=
                                PERF_GET_MASK_GROUP(PERF_CONTEXT_SWITCH);
                if (cs->events[i].kind == PERF_CONV_READY_THREAD)
                        m->Masks[PERF_GET_MASK_INDEX(PERF_DISPATCHER)] |=
                                PERF_GET_MASK_GROUP(PERF_DISPATCHER);
        }
}

/* The interval of a sampling event in the units of ETW's profile interval events: 100 ns for
   the timer, events otherwise; a frequency (attr.freq) as the interval it stands for: the
   timer's period, another event's mean period over its samples (the kernel adjusts it as it
   goes; IPC per function weighs samples with it), the frequency where no sample says. */
static uint32_t event_interval(const struct conv_state *cs, uint32_t ev,
                               const struct perf_event_attr *a, bool is_timer)
{
        uint64_t v = a->sample_period;
        if (a->freq && v && is_timer)
                v = 10000000u / v;
        else if (a->freq && v && ev < MAX_CONV_EVENTS && cs->nr_periods[ev])
                v = (cs->period_sum[ev] + cs->nr_periods[ev] / 2) / cs->nr_periods[ev];
        else if (a->freq)
                ;
        else if (is_timer)
                v /= 100;
        return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static void write_start_events(struct perf_conv *c, struct file_hooks *h, uint32_t nr,
                               const PERFINFO_GROUPMASK *masks, uint64_t t0)
{
        uint8_t rec[1024];
        const char *names[8];
        char bufs[8][256];
        uint32_t nr_pmc = 0;
        hook_emit(h, ETL_WRITER_HEADER_CPU, rec,
                  perf_etw_group_masks(rec, WMI_LOG_TYPE_HEADER_EXTENSION, t0, masks));
        for (uint32_t i = 0; i < nr; i++) {
                const struct perf_conv_event *ev = &h->cs->events[i];
                if (ev->kind != PERF_CONV_PROFILE && ev->kind != PERF_CONV_PMC_SAMPLE)
                        continue;
                char name[256]; /* the event's own name, whole (a PMU string runs long) */
                struct perf_conv_event tmp;
                perf_data_conv_event_of(h->cs->pd, i, &tmp, name, sizeof(name));
                const struct perf_event_attr *a = &perf_data_event(h->cs->pd, i)->attr;
                uint32_t iv = event_interval(h->cs, i, a, ev->kind == PERF_CONV_PROFILE);
                /* the CollectionStart keeps the event's name as the file gives it ("cycles:u",
                   "task-clock"), which --source takes; the views title an ETW source by its
                   number (TotalCycles), and PMCCounterConfig lists ETW's names */
                char own[256];
                const char *start_name = name;
                if (ev->profile_source < OWN_SOURCE_BASE)
                        start_name = perf_data_event_name(perf_data_event(h->cs->pd, i), own,
                                                          sizeof(own));
                hook_emit(h, 0, rec,
                          perf_etw_profile_interval(rec, PERFINFO_LOG_TYPE_SAMPLED_PROFILE_DC_START,
                                                    t0, ev->profile_source, iv, iv, start_name));
                if (ev->kind == PERF_CONV_PMC_SAMPLE && nr_pmc < 8) {
                        snprintf(bufs[nr_pmc], sizeof(bufs[nr_pmc]), "%s", name);
                        names[nr_pmc] = bufs[nr_pmc];
                        nr_pmc++;
                }
        }
        if (nr_pmc)
                hook_emit(h, 0, rec, perf_etw_pmc_config(rec, t0, names, nr_pmc));
        (void)c;
}

/* The tracepoints that are ETW events (LINUX-MAPPING.md 3.3): sched_switch CSwitch,
   sched_waking (or sched_wakeup, in a file without sched_waking: events_setup) ReadyThread,
   power:cpu_idle the C-state of idle switches. */
static void keep_format(void *ctx, const char *system, const char *text, size_t len)
{
        struct conv_state *cs = ctx;
        static const struct {
                const char *system, *name;
                enum perf_conv_kind kind;
        } wanted[] = {{"sched", "sched_switch", PERF_CONV_CSWITCH},
                      {"sched", "sched_waking", PERF_CONV_READY_THREAD},
                      {"sched", "sched_wakeup", PERF_CONV_READY_THREAD},
                      {"power", "cpu_idle", PERF_CONV_CPU_IDLE}};
        if (cs->nr_tps == NR_TPS || len < 7 || memcmp(text, "name: ", 6) != 0)
                return;
        for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++) {
                size_t n = strlen(wanted[i].name);
                if (strcmp(system, wanted[i].system) != 0 || len < 6 + n + 1 ||
                    memcmp(text + 6, wanted[i].name, n) != 0 || text[6 + n] != '\n')
                        continue;
                struct perf_tp_format *f = &cs->tps[cs->nr_tps];
                if (perf_tp_format_parse(text, len, f) == 0 && f->id) {
                        cs->tp_kinds[cs->nr_tps] = wanted[i].kind;
                        cs->tp_is_wakeup[cs->nr_tps] = strcmp(wanted[i].name, "sched_wakeup") == 0;
                        cs->nr_tps++;
                }
                return;
        }
}

/* A tracepoint event's kind and format, when it is one of those. */
static void tracepoint_setup(struct conv_state *cs, uint32_t i)
{
        const struct perf_event_attr *a = &perf_data_event(cs->pd, i)->attr;
        if (a->type != PERF_TYPE_TRACEPOINT || !(a->sample_type & PERF_SAMPLE_RAW))
                return;
        for (uint32_t k = 0; k < cs->nr_tps; k++) {
                if (cs->tps[k].id != a->config)
                        continue;
                cs->events[i].kind = cs->tp_kinds[k];
                cs->events[i].tp = &cs->tps[k];
                return;
        }
}

static void events_setup(struct conv_state *cs)
{
        const struct perf_data_info *in = perf_data_info(cs->pd);
        if (in->tracing_data)
                perf_data_tracing_formats(in->tracing_data, in->tracing_size, keep_format, cs);
        uint32_t nr = perf_data_nr_events(cs->pd);
        if (nr > MAX_CONV_EVENTS)
                nr = MAX_CONV_EVENTS;
        for (uint32_t i = 0; i < nr; i++) {
                char name[64];
                perf_data_conv_event_of(cs->pd, i, &cs->events[i], name, sizeof(name));
                tracepoint_setup(cs, i);
        }
        /* one ReadyThread a wake-up: sched_waking's (the waker's, where ETW logs it) where
           the file has both (perf record -e 'sched:*'), as perf sched counts one */
        bool has_waking = false;
        for (uint32_t i = 0; i < nr; i++)
                has_waking |= cs->events[i].kind == PERF_CONV_READY_THREAD &&
                              !cs->tp_is_wakeup[cs->events[i].tp - cs->tps];
        for (uint32_t i = 0; i < nr; i++) {
                if (has_waking && cs->events[i].kind == PERF_CONV_READY_THREAD &&
                    cs->tp_is_wakeup[cs->events[i].tp - cs->tps]) {
                        /* its samples counted as another tracepoint's */
                        char name[64];
                        perf_data_conv_event_of(cs->pd, i, &cs->events[i], name, sizeof(name));
                }
                struct perf_conv_event *sb = &cs->events[MAX_CONV_EVENTS + i];
                *sb = cs->events[i];
                sb->kind = PERF_CONV_SIDEBAND;
                sb->has_stack = sb->has_lbr = false;
        }
        cs->nr_events = nr;
}

int perf_data_convert_scanned(struct perf_data *pd, struct perf_data_scan *scan,
                              struct etl_writer *w, struct perf_data_conv_stats *st,
                              struct err_msg *err)
{
        struct perf_data_conv_stats local;
        if (!st)
                st = &local;
        *st = scan->st; /* the records, counted as the scan indexed them */
        struct conv_state *cs = scan->cs;
        events_setup(cs); /* after the records: a pipe file's attrs come with them */
        struct etl_writer_config cfg;
        perf_data_conv_config_scanned(pd, scan, &cfg);
        st->nr_cpus = cfg.nr_cpus;
        struct file_hooks h = {w, cs, 0};
        struct perf_conv_ops ops = {hook_emit,        hook_event_of, hook_cmdline_of,
                                    hook_build_id_of, NULL,          hook_uid_of};
        struct perf_conv *c = NULL;
        int rc = perf_conv_new(&c, &ops, &h, cfg.nr_cpus);
        if (rc < 0) {
                perf_data_error_set(err, 0, "cannot create the converter");
                return rc;
        }
        PERFINFO_GROUPMASK masks;
        file_masks(cs, cs->nr_events, &masks);
        perf_conv_set_masks(c, &masks);
        perf_conv_set_files(c, &perf_conv_files_offline, NULL); /* the recorded images only */
        perf_conv_set_learn_threads(c, true);
        for (uint32_t i = 0; i < cs->nr_events; i++)
                if (cs->events[i].walk == PERF_CONV_WALK_DWARF) {
                        const struct perf_event_attr *a = &perf_data_event(pd, i)->attr;
                        perf_conv_set_walk(c, PERF_CONV_WALK_DWARF, a->sample_stack_user);
                        break;
                }
        uint64_t t0 = cfg.start_timestamp; /* the first time the file gives */
        for (uint32_t i = 0; i < cfg.nr_cpus; i++)
                perf_conv_stamp(c, i, t0);
        write_start_events(c, &h, cs->nr_events, &masks, t0);
        /* the file's samples as they lie: their events with the file's own layout (none when
           there is no memory: each is put in the live form instead) */
        cs->file_events = calloc(cs->nr_events ? cs->nr_events : 1, sizeof(*cs->file_events));
        for (uint32_t i = 0; cs->file_events && i < cs->nr_events; i++) {
                cs->file_events[i] = cs->events[i];
                cs->file_events[i].sample_type = perf_data_event(pd, i)->attr.sample_type;
        }
        uint64_t t_end = perf_data_norm_emit(cs, c, t0);
        if (cs->nr_ksyms)
                perf_conv_kernel_symbols(c, cs->ksyms, cs->nr_ksyms, 0,
                                         perf_conv_stamp(c, 0, t_end));
        perf_conv_rundown_end(c, 0, perf_conv_stamp(c, 0, t_end));
        /* what the file holds that no event stands for, said where a reader of the .etl sees it
           (--dump's events, the replay's header) */
        for (uint32_t t = 0; t <= PERF_DATA_NR_TYPES; t++)
                if (st->nr_not_shown[t])
                        perf_conv_records_not_shown(
                                c, 0, perf_conv_stamp(c, 0, t_end),
                                t < PERF_DATA_NR_TYPES ? t : UINT32_MAX, st->nr_not_shown[t],
                                t < PERF_DATA_NR_TYPES ? perf_data_type_name(t) : "UNKNOWN");
        perf_conv_get_stats(c, &st->conv);
        perf_conv_free(c);
        if (scan->rc < 0 && err)
                *err = scan->err;
        return scan->rc < 0 ? scan->rc : 0;
}

int perf_data_convert(struct perf_data *pd, struct etl_writer *w, struct perf_data_conv_stats *st,
                      struct err_msg *err)
{
        struct perf_data_scan *scan = perf_data_conv_scan(pd);
        int rc = perf_data_convert_scanned(pd, scan, w, st, err);
        perf_data_conv_scan_free(scan);
        return rc;
}

uint64_t perf_data_conv_config_scanned(struct perf_data *pd, const struct perf_data_scan *scan,
                                       struct etl_writer_config *cfg)
{
        const struct perf_data_info *in = perf_data_info(pd);
        memset(cfg, 0, sizeof(*cfg));
        uint64_t first = scan->first, last = scan->last;
        uint32_t nr_cpus = scan->max_cpu + 1;
        if (in->nr_cpus_avail > nr_cpus && in->nr_cpus_avail <= MAX_WRITER_CPUS)
                nr_cpus = in->nr_cpus_avail;
        cfg->nr_cpus = nr_cpus;
        cfg->log_file_mode = EVENT_TRACE_FILE_MODE_SEQUENTIAL | EVENT_TRACE_SYSTEM_LOGGER_MODE;
        cfg->logger_id = 1;
        cfg->logger_name = KERNEL_LOGGER_NAMEA;
        cfg->start_timestamp = first;
        int64_t start = FILETIME_UNIX;
        if (in->has_clock_data) {
                /* unsigned: a hostile file's values wrap rather than overflow */
                uint64_t wall = in->clock_wall_ns + (first - in->clock_ref_ns);
                start = FILETIME_UNIX + (int64_t)(wall / 100);
        }
        cfg->start_filetime = start;
        cfg->boot_filetime = start - (int64_t)(first / 100);
        cfg->perf_freq = 1000000000ull;
        cfg->clock_type = EVENT_TRACE_CLOCK_PERFCOUNTER;
        unsigned major = 0, minor = 0, patch = 0;
        if (in->osrelease)
                sscanf(in->osrelease, "%u.%u.%u", &major, &minor, &patch);
        cfg->os_major = (uint8_t)major;
        cfg->os_minor = (uint8_t)minor;
        cfg->provider_version = patch;
        cfg->timer_resolution_100ns = 10000;
        /* "Intel(R) Core(TM) i5-2467M CPU @ 1.60GHz" */
        const char *at = in->cpudesc ? strstr(in->cpudesc, "@ ") : NULL;
        double ghz;
        if (at && sscanf(at + 2, "%lfGHz", &ghz) == 1 && ghz > 0 && ghz < 100)
                cfg->cpu_speed_mhz = (uint32_t)(ghz * 1000 + 0.5);
        /* a file that does not say (no CPUDESC, an ARM's, an AMD's name without "@"): never 0,
           which Windows never writes and readers divide by (dissect.etl, whatever the clock);
           1000, the speed the writer assumes for a cycle clock without one */
        if (!cfg->cpu_speed_mhz)
                cfg->cpu_speed_mhz = 1000;
        return last > first ? last - first : 0;
}

uint64_t perf_data_conv_config_span(struct perf_data *pd, struct etl_writer_config *cfg)
{
        struct perf_data_scan *scan = perf_data_conv_scan(pd);
        uint64_t span = perf_data_conv_config_scanned(pd, scan, cfg);
        perf_data_conv_scan_free(scan);
        return span;
}

void perf_data_conv_config(struct perf_data *pd, struct etl_writer_config *cfg)
{
        perf_data_conv_config_span(pd, cfg);
}
