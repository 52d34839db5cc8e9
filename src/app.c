/* SPDX-License-Identifier: MIT */
/* app.c: owns the etwtop screen's loop: the session (started, changed and stopped through the
   ETW controller API), the consumer thread that decodes its events into the model, the tables
   each view shows, the keys, and batch frames. */
#include "app.h"

#include "etw/evntrace.h"
#include "etw/etwtop_ext.h"
#include "etw_provider.h"
#include "kevent.h"
#include "live_source.h"
#include "session.h"
#include "model/aggregate.h"
#include "model/branches.h"
#include "model/calltree.h"
#include "model/hot.h"
#include "model/switches.h"
#include "model/sym_feed.h"
#include "symbols/symbols.h"
#include "ui/screen.h"
#include "ui/table.h"
#include "xperf_names.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

enum view { VIEW_FUNCTIONS, VIEW_BRANCHES, VIEW_SWITCHES, VIEW_SESSION, NR_VIEWS };
enum switch_group {
        SWITCH_GROUP_THREAD,
        SWITCH_GROUP_PROCESS,
        SWITCH_GROUP_CPU,
        SWITCH_GROUP_WAIT,
        NR_SWITCH_GROUPS
};
static const char *const view_names[NR_VIEWS] = {"Hot functions", "Branch edges (LBR)",
                                                 "Context switches", "Session"};

/* The session panel's rows: what a key toggles. */
enum setting_kind { SET_MASK, SET_HOOK, SET_INTERVAL, SET_LBR, SET_PMC };
struct setting {
        enum setting_kind kind;
        const char *name;
        const char *help;
        uint32_t mask_index; /* SET_MASK: Masks[index] |= bits */
        uint32_t bits;       /* SET_MASK bits; SET_HOOK hook id; SET_INTERVAL 100 ns units;
                                SET_LBR filter bit (0: on Profile); SET_PMC source */
        uint32_t group;      /* SET_MASK: the PERF_* group the flag implies (0: none) */
};

static const struct setting settings[] = {
        {SET_MASK, "PROC_THREAD", "process and thread start and end", 0,
         EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD, 0},
        {SET_MASK, "LOADER", "image loads (the symbols need them)", 0, EVENT_TRACE_FLAG_IMAGE_LOAD,
         0},
        {SET_MASK, "PROFILE", "timer samples", 0, EVENT_TRACE_FLAG_PROFILE, PERF_PROFILE},
        {SET_MASK, "CSWITCH", "context switches", 0, EVENT_TRACE_FLAG_CSWITCH, PERF_CONTEXT_SWITCH},
        {SET_MASK, "DISPATCHER", "ready-thread (wake-up) events", 0, EVENT_TRACE_FLAG_DISPATCHER,
         PERF_DISPATCHER},
        {SET_HOOK, "stack: Profile", "call stacks on timer samples", 0,
         PERFINFO_LOG_TYPE_SAMPLED_PROFILE, 0},
        {SET_HOOK, "stack: CSwitch", "call stacks on context switches", 0,
         WMI_LOG_TYPE_CONTEXT_SWAP, 0},
        {SET_HOOK, "stack: ReadyThread", "call stacks on wake-ups", 0, WMI_LOG_TYPE_READY_THREAD,
         0},
        {SET_HOOK, "stack: PmcInterrupt", "call stacks on PMC samples", 0,
         PERFINFO_LOG_TYPE_PMC_INTERRUPT, 0},
        {SET_INTERVAL, "interval 0.125 ms", "8 kHz timer sampling", 0, 1250, 0},
        {SET_INTERVAL, "interval 0.25 ms", "4 kHz timer sampling", 0, 2500, 0},
        {SET_INTERVAL, "interval 1 ms", "1 kHz timer sampling", 0, 10000, 0},
        {SET_INTERVAL, "interval 10 ms", "100 Hz timer sampling", 0, 100000, 0},
        {SET_PMC, "PMC: BranchMispredictions", "sample branch mispredictions", 0, 11, 0},
        {SET_PMC, "PMC: CacheMisses", "sample cache misses", 0, 10, 0},
        {SET_LBR, "LBR on Profile", "last branch records on timer samples", 0, 0, 0},
        {SET_LBR, "LBR filter: KERNEL", "leave out kernel branches", 0, EVNTRACE_LBR_FILTER_KERNEL,
         0},
        {SET_LBR, "LBR filter: USER", "leave out user branches", 0, EVNTRACE_LBR_FILTER_USER, 0},
        {SET_LBR, "LBR filter: JCC", "leave out conditional jumps", 0, EVNTRACE_LBR_FILTER_JCC, 0},
        {SET_LBR, "LBR filter: NEAR_REL_CALL", "leave out relative calls", 0,
         EVNTRACE_LBR_FILTER_NEAR_REL_CALL, 0},
        {SET_LBR, "LBR filter: NEAR_RET", "leave out returns", 0, EVNTRACE_LBR_FILTER_NEAR_RET, 0},
};
#define NR_SETTINGS (sizeof(settings) / sizeof(settings[0]))

static const struct ui_column fn_cols[] = {
        {"Self%", UI_COL_PCT, 7}, {"Total%", UI_COL_PCT, 7},   {"Self", UI_COL_U64, 8},
        {"Total", UI_COL_U64, 8}, {"Module", UI_COL_TEXT, 22}, {"Function", UI_COL_TEXT, 0},
};
static const struct ui_column session_cols[] = {
        {"On", UI_COL_TEXT, 4},
        {"Setting", UI_COL_TEXT, 28},
        {"What it does, or why it is unavailable", UI_COL_TEXT, 0},
};
static const struct ui_column branch_cols[] = {
        {"Share%", UI_COL_PCT, 7}, {"Count", UI_COL_U64, 9}, {"Edges", UI_COL_U64, 6},
        {"From", UI_COL_TEXT, 0},  {"To", UI_COL_TEXT, 0},
};
static const struct ui_column switch_cols[] = {
        {"Switches", UI_COL_U64, 9}, {"On-CPU", UI_COL_NS, 10},
        {"Off-CPU", UI_COL_NS, 10},  {"Readied", UI_COL_U64, 8},
        {"CPU", UI_COL_U64, 4},      {"TID", UI_COL_U64, 7},
        {"PID", UI_COL_U64, 7},      {"Top wait (state/reason)", UI_COL_TEXT, 30},
        {"Thread", UI_COL_TEXT, 0},
};

struct app {
        const struct app_options *o;
        bool is_live;
        struct live_caps caps;
        /* the model: written by the consumer thread, read by the screen, under lock */
        pthread_mutex_t lock;
        struct kdecoder *decoder;
        struct sym_store *store;
        struct sym_feed *feed;
        struct hot *hot;
        struct calltree *tree;
        struct branches *branches;
        struct switches *switches;
        struct agg_settings agg;
        enum branches_group branch_group;
        enum switch_group switch_group; /* the switches view's rows */
        bool is_top_down;   /* the functions view: callers under each function, or top-down */
        uint64_t *expanded; /* owned hash set of expanded row keys, 0 free */
        uint32_t expanded_mask, nr_expanded;
        uint64_t nr_events, nr_events_prev;
        int64_t span_ns;   /* the latest event time seen (session ns) */
        bool has_window;   /* replay: only [window_from_ns, window_to_ns) counts */
        uint32_t zoom_pid; /* only this process counts (0: all) */
        int64_t window_from_ns, window_to_ns;
        uint64_t nr_lost_header, nr_lost_records, nr_lost_total; /* see on_event */
        uint64_t nr_lost_session;    /* live: ControlTrace(QUERY)'s EventsLost at the refresh */
        uint64_t nr_rt_buffers_lost; /* live: and its RealTimeBuffersLost */
        uint64_t nr_stacks_seen;     /* replay: the stack hooks are not recorded, stacks are */
        double events_per_s;
        /* the session */
        CONTROLTRACE_ID session;
        bool has_session;
        PROCESSTRACE_HANDLE consumer;
        EVENT_TRACE_LOGFILEA lf; /* OpenTrace's: ProcessTrace writes back into it */
        pthread_t thread;
        bool has_thread;
        atomic_bool is_done; /* the consumer returned (session stopped, file read) */
        uint32_t nr_run;     /* the consumer thread's: records decoded since it took the lock */
        atomic_uint_fast64_t nr_buffers_read;
        uint64_t nr_buffers_total; /* replay: the file's, for the progress */
        ULONG consumer_status;
        PERFINFO_GROUPMASK masks;
        uint16_t hooks[32];
        uint32_t nr_hooks;
        uint32_t interval_100ns;
        uint32_t lbr_filters;
        uint32_t pmc_source; /* KPROFILE_SOURCE sampled under PMC_PROFILE (0: none chosen) */
        bool is_lbr_on;
        /* the screen */
        struct ui_screen *scr;
        struct ui_table tables[NR_VIEWS];
        struct ui_view_state vs[NR_VIEWS];
        enum view view;
        bool is_paused, is_help, is_quit;
        char status[512];
};

static int64_t now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* ---- the consumer thread ---- */

static void on_event(void *ctx, const struct kevent *ev)
{
        struct app *a = ctx;
        /* the records: a stack rebuilt from a stack-cache key is part of its record */
        if (!(ev->type == KEV_STACK && ev->stack.is_from_key))
                a->nr_events++;
        /* what was lost, three ways (the largest shows): the logfile header's count (all a
           Windows trace has), and etwtop's EventsLost (doc/etwtop-provider.md), reason 1 as a
           ring overflowed, reason 2 the exact total at the stop */
        if (ev->type == KEV_TRACE_HEADER && ev->trace_header.header)
                a->nr_lost_header = ev->trace_header.header->EventsLost;
        else if (ev->type == KEV_EVENTS_LOST && ev->events_lost.reason == 1)
                a->nr_lost_records += ev->events_lost.count;
        else if (ev->type == KEV_EVENTS_LOST && ev->events_lost.reason == 2)
                a->nr_lost_total = ev->events_lost.count;
        if (!a->is_live) {
                /* a recording's settings, as its events say */
                if (ev->type == KEV_GROUP_MASK && !ev->group_mask.is_previous)
                        memcpy(a->masks.Masks, ev->group_mask.masks, sizeof(a->masks.Masks));
                else if (ev->type == KEV_PROFILE_INTERVAL && ev->profile_interval.source == 0)
                        a->interval_100ns = ev->profile_interval.new_interval_100ns;
                else if (ev->type == KEV_STACK)
                        a->nr_stacks_seen++;
        }
        sym_feed_event(a->feed, ev);
        if (ev->time_ns > a->span_ns)
                a->span_ns = ev->time_ns;
        /* replay: the time window ([ ]) keeps the views to a part of the trace */
        if (a->has_window && (ev->time_ns < a->window_from_ns || ev->time_ns >= a->window_to_ns))
                return;
        /* t: one process (its samples; the switches and edges filter themselves) */
        if (a->zoom_pid && (ev->type == KEV_SAMPLE || ev->type == KEV_PMC_SAMPLE) &&
            ev->pid != a->zoom_pid)
                return;
        hot_event(a->hot, ev);
        calltree_event(a->tree, ev);
        branches_event(a->branches, ev);
        switches_event(a->switches, ev);
}

/* The consumer takes the model's lock for a run of records, not for each: it lets go after each
   buffer (before it may wait for the next) and at least every CONSUMER_RUN records. */
#define CONSUMER_RUN 4096

static void consumer_unlock(struct app *a)
{
        if (a->nr_run) {
                a->nr_run = 0;
                pthread_mutex_unlock(&a->lock);
        }
}

static VOID WINAPI on_record(PEVENT_RECORD rec)
{
        struct app *a = rec->UserContext;
        if (!a->nr_run++)
                pthread_mutex_lock(&a->lock);
        kdecoder_decode(a->decoder, rec, on_event, a);
        if (a->nr_run >= CONSUMER_RUN)
                consumer_unlock(a);
}

static ULONG WINAPI on_buffer(PEVENT_TRACE_LOGFILEA lf)
{
        struct app *a = lf->Context;
        consumer_unlock(a);
        atomic_store(&a->nr_buffers_read, lf->BuffersRead);
        return TRUE;
}

static void *consumer_main(void *arg)
{
        struct app *a = arg;
        a->consumer_status = ProcessTrace(&a->consumer, 1, NULL, NULL);
        consumer_unlock(a);
        atomic_store(&a->is_done, true);
        return NULL;
}

/* ---- the session, through the controller API ---- */

struct kernel_props {
        EVENT_TRACE_PROPERTIES p;
        char logger_name[64];
        char log_file_name[1024];
};

static void props_init(struct kernel_props *k, const char *file, ULONG flags, ULONG mode)
{
        memset(k, 0, sizeof(*k));
        k->p.Wnode.BufferSize = sizeof(*k);
        k->p.Wnode.Flags = WNODE_FLAG_TRACED_GUID;
        k->p.Wnode.Guid = SystemTraceControlGuid;
        k->p.Wnode.ClientContext = 1;
        k->p.LogFileMode = mode;
        k->p.EnableFlags = flags;
        k->p.FlushTimer = 1;
        /* up to 64 MiB of buffers for a consumer that waits for a CPU (the default 20 over
           the minimum was 80 ms of every switch and wake-up with stacks) */
        k->p.MaximumBuffers = 1024;
        k->p.LoggerNameOffset = offsetof(struct kernel_props, logger_name);
        if (file && *file) {
                k->p.LogFileNameOffset = offsetof(struct kernel_props, log_file_name);
                snprintf(k->log_file_name, sizeof(k->log_file_name), "%s", file);
        }
}

static ULONG apply_hooks(struct app *a)
{
        CLASSIC_EVENT_ID ids[32];
        for (uint32_t i = 0; i < a->nr_hooks; i++) {
                memset(&ids[i], 0, sizeof(ids[i]));
                const GUID *g = etw_provider_of_hook(a->hooks[i]);
                if (g)
                        ids[i].EventGuid = *g;
                ids[i].Type = (UCHAR)(a->hooks[i] & 0xFF);
        }
        return TraceSetInformation(a->session, TraceStackTracingInfo, a->nr_hooks ? ids : NULL,
                                   a->nr_hooks * (ULONG)sizeof(ids[0]));
}

static ULONG apply_interval(struct app *a)
{
        TRACE_PROFILE_INTERVAL iv = {0, a->interval_100ns};
        return TraceSetInformation(0, TraceSampledProfileIntervalInfo, &iv, sizeof(iv));
}

static ULONG apply_masks(struct app *a)
{
        /* EnableFlags through ControlTrace(UPDATE), as a controller would */
        struct kernel_props k;
        props_init(&k, NULL, a->masks.Masks[0], EVENT_TRACE_REAL_TIME_MODE);
        ULONG st = ControlTraceA(a->session, NULL, &k.p, EVENT_TRACE_CONTROL_UPDATE);
        if (st == ERROR_SUCCESS)
                st = TraceSetInformation(a->session, TraceSystemTraceEnableFlagsInfo, &a->masks,
                                         sizeof(a->masks));
        return st;
}

static int session_start(struct app *a, char *err, size_t err_size)
{
        const struct app_options *o = a->o;
        struct kernel_props k;
        ULONG mode = EVENT_TRACE_REAL_TIME_MODE;
        if (o->record_path)
                mode |= EVENT_TRACE_FILE_MODE_SEQUENTIAL;
        if (o->record_path && !o->is_force && access(o->record_path, F_OK) == 0) {
                snprintf(err, err_size, "%s exists: give --force to replace it", o->record_path);
                return -1;
        }
        if (o->record_path && o->is_force)
                unlink(o->record_path);
        props_init(&k, o->record_path, a->masks.Masks[0], mode);
        ULONG st = StartTraceA(&a->session, KERNEL_LOGGER_NAMEA, &k.p);
        if (st != ERROR_SUCCESS) {
                snprintf(err, err_size, "StartTrace: %s (Win32 error %u)", etw_last_error_text(),
                         (unsigned)st);
                return -1;
        }
        a->has_session = true;
        if ((st = TraceSetInformation(a->session, TraceSystemTraceEnableFlagsInfo, &a->masks,
                                      sizeof(a->masks))) != ERROR_SUCCESS ||
            (st = apply_hooks(a)) != ERROR_SUCCESS || (st = apply_interval(a)) != ERROR_SUCCESS) {
                snprintf(err, err_size, "TraceSetInformation: %s (Win32 error %u)",
                         etw_last_error_text(), (unsigned)st);
                return -1;
        }
        /* --pmc-profile and --lastbranch, as the session panel applies them; what this machine
           cannot do ends the start with the API's reason */
        if (o->has_pmc) {
                ULONG src = o->pmc_source;
                a->masks.Masks[PERF_GET_MASK_INDEX(PERF_PMC_PROFILE)] |=
                        PERF_GET_MASK_GROUP(PERF_PMC_PROFILE);
                if ((st = TraceSetInformation(a->session, TraceProfileSourceConfigInfo, &src,
                                              sizeof(src))) != ERROR_SUCCESS ||
                    (st = apply_masks(a)) != ERROR_SUCCESS) {
                        snprintf(err, err_size, "--pmc-profile: %s (Win32 error %u)",
                                 etw_last_error_text(), (unsigned)st);
                        return -1;
                }
                a->pmc_source = o->pmc_source;
        }
        if (o->nr_pmc_counters) {
                ULONG counters[4];
                CLASSIC_EVENT_ID ids[4];
                for (uint32_t i = 0; i < o->nr_pmc_counters && i < 4; i++)
                        counters[i] = o->pmc_counters[i];
                for (uint32_t i = 0; i < o->nr_pmc_hooks && i < 4; i++) {
                        memset(&ids[i], 0, sizeof(ids[i]));
                        const GUID *g = etw_provider_of_hook(o->pmc_hooks[i]);
                        if (g)
                                ids[i].EventGuid = *g;
                        ids[i].Type = (UCHAR)(o->pmc_hooks[i] & 0xFF);
                }
                if ((st = TraceSetInformation(a->session, TracePmcCounterListInfo, counters,
                                              o->nr_pmc_counters * (ULONG)sizeof(ULONG))) !=
                            ERROR_SUCCESS ||
                    (st = TraceSetInformation(a->session, TracePmcEventListInfo, ids,
                                              o->nr_pmc_hooks * (ULONG)sizeof(ids[0]))) !=
                            ERROR_SUCCESS) {
                        snprintf(err, err_size, "--pmc: %s (Win32 error %u)", etw_last_error_text(),
                                 (unsigned)st);
                        return -1;
                }
        }
        if (o->has_lbr) {
                CLASSIC_EVENT_ID trig = {PerfInfoGuid, 46, {0}};
                if ((st = TraceConfigureLastBranchRecord(a->session, o->lbr_filters, &trig, 1)) !=
                    ERROR_SUCCESS) {
                        snprintf(err, err_size, "--lastbranch: %s (Win32 error %u)",
                                 etw_last_error_text(), (unsigned)st);
                        return -1;
                }
                a->lbr_filters = o->lbr_filters;
                a->is_lbr_on = true;
        }
        /* the save key writes the recent buffers: the session keeps the last 64 MB */
        struct etl_error e;
        if (session_keep_window(a->session, (size_t)64 << 20, &e) < 0)
                snprintf(a->status, sizeof(a->status), "save will not work: %s", e.msg);
        EVENT_TRACE_LOGFILEA *lf = &a->lf;
        memset(lf, 0, sizeof(*lf));
        lf->LoggerName = (LPSTR)KERNEL_LOGGER_NAMEA;
        lf->ProcessTraceMode = PROCESS_TRACE_MODE_REAL_TIME | PROCESS_TRACE_MODE_EVENT_RECORD |
                               PROCESS_TRACE_MODE_RAW_TIMESTAMP;
        lf->EventRecordCallback = on_record;
        lf->BufferCallback = on_buffer;
        lf->Context = a;
        a->consumer = OpenTraceA(lf);
        if (a->consumer == INVALID_PROCESSTRACE_HANDLE) {
                snprintf(err, err_size, "OpenTrace: %s", etw_last_error_text());
                return -1;
        }
        return 0;
}

static void session_stop(struct app *a)
{
        if (a->has_session) {
                struct kernel_props k;
                props_init(&k, NULL, 0, 0);
                ControlTraceA(a->session, NULL, &k.p, EVENT_TRACE_CONTROL_STOP);
                a->has_session = false;
        }
        if (a->has_thread) {
                pthread_join(a->thread, NULL);
                a->has_thread = false;
        }
        if (a->consumer && a->consumer != INVALID_PROCESSTRACE_HANDLE)
                CloseTrace(a->consumer);
        a->consumer = 0;
}

/* A replay read to its end: what of the file could not be read, on the status line. */
static void say_damage(struct app *a)
{
        struct etw_trace_stats st;
        if (etw_trace_get_stats(a->consumer, &st) != ERROR_SUCCESS || !st.nr_buffers_damaged)
                return;
        /* where first: a narrow screen cuts the line's end */
        const char *where = "";
        char *at = strstr(st.last_warning, " (byte offset ");
        if (at) {
                *at = 0;
                where = at + 2;
                char *end = strchr(at + 1, ')');
                if (end)
                        *end = 0;
        }
        snprintf(a->status, sizeof(a->status),
                 "%u damaged buffer%s skipped in part or whole%s%s: %s",
                 (unsigned)st.nr_buffers_damaged, st.nr_buffers_damaged == 1 ? "" : "s",
                 *where ? ", the last at " : "", where, st.last_warning);
}

static int replay_start(struct app *a, char *err, size_t err_size)
{
        EVENT_TRACE_LOGFILEA *lf = &a->lf;
        memset(lf, 0, sizeof(*lf));
        lf->LogFileName = (LPSTR)a->o->replay_path;
        lf->ProcessTraceMode = PROCESS_TRACE_MODE_EVENT_RECORD | PROCESS_TRACE_MODE_RAW_TIMESTAMP;
        lf->EventRecordCallback = on_record;
        lf->BufferCallback = on_buffer;
        lf->Context = a;
        a->consumer = OpenTraceA(lf);
        if (a->consumer == INVALID_PROCESSTRACE_HANDLE) {
                snprintf(err, err_size, "%s (Win32 error %u)", etw_last_error_text(),
                         GetLastError());
                return -1;
        }
        a->nr_buffers_total = lf->LogfileHeader.BuffersWritten;
        return 0;
}

/* ---- tables ---- */

static const char *module_name(struct app *a, uint32_t module)
{
        struct sym_module_info info;
        if (!module || !sym_module_info(a->store, module, &info))
                return "[unknown]";
        return info.name;
}

/* ---- expanded rows of the call tree ---- */

static bool is_expanded(const struct app *a, uint64_t key)
{
        if (!a->expanded || !key)
                return false;
        for (uint32_t j = (uint32_t)(key * 0x9E3779B97F4A7C15ull >> 40) & a->expanded_mask;;
             j = (j + 1) & a->expanded_mask) {
                if (a->expanded[j] == key)
                        return true;
                if (!a->expanded[j])
                        return false;
        }
}

static void set_expanded(struct app *a, uint64_t key, bool is_on)
{
        if (!key || is_expanded(a, key) == is_on)
                return;
        if (!is_on) {
                /* rebuild without it: removals are rare (a key press) */
                uint64_t *old = a->expanded;
                uint32_t cap = a->expanded_mask + 1;
                a->expanded = calloc(cap, sizeof(*a->expanded));
                if (!a->expanded)
                        abort();
                a->nr_expanded = 0;
                for (uint32_t i = 0; i < cap; i++)
                        if (old[i] && old[i] != key)
                                set_expanded(a, old[i], true);
                free(old);
                return;
        }
        if (!a->expanded || (a->nr_expanded + 1) * 2 > a->expanded_mask + 1) {
                uint64_t *old = a->expanded;
                uint32_t old_cap = old ? a->expanded_mask + 1 : 0;
                a->expanded_mask = old ? a->expanded_mask * 2 + 1 : 255;
                a->expanded = calloc(a->expanded_mask + 1, sizeof(*a->expanded));
                if (!a->expanded)
                        abort();
                a->nr_expanded = 0;
                for (uint32_t i = 0; i < old_cap; i++)
                        if (old[i])
                                set_expanded(a, old[i], true);
                free(old);
        }
        uint32_t j = (uint32_t)(key * 0x9E3779B97F4A7C15ull >> 40) & a->expanded_mask;
        while (a->expanded[j])
                j = (j + 1) & a->expanded_mask;
        a->expanded[j] = key;
        a->nr_expanded++;
}

/* The module names the functions view's rows borrow, found once per module per refresh: the
   store's interned copies, which live as long as the store (sym_module_info's own strings only
   until the next call on the store, and the screen draws without the lock). */
struct module_names {
        uint32_t module[64];  /* by module id % 64 */
        const char *name[64]; /* borrowed from the store: its interned name, NULL: not looked up */
};

/* Fills the module and function cells (4, 5) of a functions-view row: the store's names are
   borrowed (sym_name strings live as long as the store), only a place without a name is
   formatted. */
static void frame_text(struct app *a, struct module_names *names, struct ui_table *t, uint32_t r,
                       uint32_t module, uint32_t function, uint64_t rel)
{
        uint32_t slot = module % 64;
        if (names->module[slot] != module || !names->name[slot]) {
                names->module[slot] = module;
                names->name[slot] =
                        sym_name(a->store, sym_intern(a->store, module_name(a, module)));
        }
        ui_table_text_borrow(t, r, 4, names->name[slot]);
        if (function)
                ui_table_text_borrow(t, r, 5, sym_name(a->store, function));
        else if (module || rel) /* "mod+0x1a2b", "0x1a2b" */
                ui_table_text_addr(t, r, 5, module ? names->name[slot] : NULL, rel);
        else
                ui_table_text_borrow(t, r, 5, "[other]");
}

#define TREE_KEY(is_top_down, node) ((1ull << 63) | ((uint64_t)(is_top_down) << 62) | (node))

/* The children of node in the current tree under row depth, recursively where expanded. */
static void add_subtree(struct app *a, struct module_names *names, struct ui_table *t,
                        uint32_t node, uint8_t depth, uint64_t nr)
{
        if (depth > 60)
                return;
        const struct calltree_row *rows;
        uint32_t n = calltree_children(a->tree, !a->is_top_down, node, &rows);
        /* the rows array is reused by the next call: copy what the recursion needs */
        struct calltree_row *copy = malloc((n ? n : 1) * sizeof(*copy));
        if (!copy)
                abort();
        if (n) /* an empty tree answers no array */
                memcpy(copy, rows, n * sizeof(*copy));
        for (uint32_t i = 0; i < n; i++) {
                const struct calltree_row *w = &copy[i];
                uint64_t key = TREE_KEY(a->is_top_down, w->node);
                bool is_open = w->has_children && is_expanded(a, key);
                uint32_t r = ui_table_add(t, key, depth,
                                          (w->has_children ? UI_ROW_EXPANDABLE : 0) |
                                                  (is_open ? UI_ROW_EXPANDED : 0));
                ui_table_pct(t, r, 0, nr ? 100.0 * (double)w->self / (double)nr : 0);
                ui_table_pct(t, r, 1, nr ? 100.0 * (double)w->count / (double)nr : 0);
                ui_table_u64(t, r, 2, w->self);
                ui_table_u64(t, r, 3, w->count);
                frame_text(a, names, t, r, w->module, w->function, w->rel);
                if (is_open)
                        add_subtree(a, names, t, w->node, (uint8_t)(depth + 1), nr);
        }
        free(copy);
}

static void build_functions(struct app *a, struct ui_table *t)
{
        const struct calltree_row *unused;
        calltree_children(a->tree, false, 0, &unused); /* brings pending samples in */
        struct module_names names = {{0}, {NULL}};
        if (a->is_top_down) {
                ui_table_clear(t);
                add_subtree(a, &names, t, 0, 0, calltree_nr_samples(a->tree));
                return;
        }
        ui_table_clear(t);
        uint16_t sources[16];
        uint32_t nr_sources = hot_sources(a->hot, sources, 16);
        uint16_t source = nr_sources ? sources[0] : HOT_SOURCE_TIMER;
        uint64_t nr = hot_nr_samples(a->hot, source);
        const struct hot_row *rows;
        uint32_t n = hot_functions(a->hot, source, false, &rows);
        for (uint32_t i = 0; i < n; i++) {
                const struct hot_row *w = &rows[i];
                /* never 0 (no row), never a tree key (bit 63) */
                uint64_t key = (((uint64_t)w->module << 40 ^ (w->function ? w->function : w->rel)) &
                                ~(7ull << 61)) |
                               (1ull << 61);
                uint32_t node =
                        w->state == SYM_RESOLVED || w->module
                                ? calltree_find_function(a->tree, w->module, w->function, w->rel)
                                : 0;
                bool has_callers = node && calltree_has_children(a->tree, node);
                bool is_open = has_callers && is_expanded(a, key);
                uint32_t r = ui_table_add(t, key, 0,
                                          (has_callers ? UI_ROW_EXPANDABLE : 0) |
                                                  (is_open ? UI_ROW_EXPANDED : 0));
                ui_table_pct(t, r, 0, nr ? 100.0 * (double)w->self / (double)nr : 0);
                ui_table_pct(t, r, 1, nr ? 100.0 * (double)w->total / (double)nr : 0);
                ui_table_u64(t, r, 2, w->self);
                ui_table_u64(t, r, 3, w->total);
                frame_text(a, &names, t, r, w->module, w->function, w->rel);
                if (is_open)
                        add_subtree(a, &names, t, node, 1, nr);
        }
}

static bool has_hook(const struct app *a, uint16_t hook)
{
        for (uint32_t i = 0; i < a->nr_hooks; i++)
                if (a->hooks[i] == hook)
                        return true;
        return false;
}

/* Why a setting cannot be used here, or NULL. */
static const char *why_not(const struct app *a, const struct setting *s)
{
        if (!a->is_live)
                return "a recording: its settings are fixed";
        if (s->kind == SET_LBR && !a->caps.has_lbr)
                return a->caps.why_no_lbr[0] ? a->caps.why_no_lbr : "no LBR on this machine";
        if ((s->kind == SET_PMC ||
             (s->kind == SET_HOOK && s->bits == PERFINFO_LOG_TYPE_PMC_INTERRUPT)) &&
            !a->caps.has_pmu)
                return a->caps.why_no_pmu[0] ? a->caps.why_no_pmu : "no hardware PMU";
        return NULL;
}

static bool is_on(const struct app *a, const struct setting *s)
{
        switch (s->kind) {
        case SET_MASK: return (a->masks.Masks[s->mask_index] & s->bits) == s->bits;
        case SET_HOOK: return has_hook(a, (uint16_t)s->bits);
        case SET_INTERVAL: return a->interval_100ns == s->bits;
        case SET_LBR: return s->bits ? (a->lbr_filters & s->bits) != 0 : a->is_lbr_on;
        case SET_PMC: return a->pmc_source == s->bits;
        }
        return false;
}

static void build_session(struct app *a, struct ui_table *t)
{
        ui_table_clear(t);
        for (uint32_t i = 0; i < NR_SETTINGS; i++) {
                const struct setting *s = &settings[i];
                const char *why = why_not(a, s);
                uint32_t r = ui_table_add(t, i + 1, 0, why ? UI_ROW_GREYED : 0);
                ui_table_text(t, r, 0, is_on(a, s) ? "[x]" : "[ ]");
                ui_table_text(t, r, 1, s->name);
                ui_table_text(t, r, 2, why ? why : s->help);
        }
}

static void end_text(struct app *a, const struct branches_end *e, char *buf, size_t size)
{
        const char *mod = module_name(a, e->loc.module);
        if (e->state == SYM_RESOLVED && e->function)
                snprintf(buf, size, "%s!%s+0x%" PRIx64, mod, sym_name(a->store, e->function),
                         e->offset);
        else if (e->loc.module)
                snprintf(buf, size, "%s+0x%" PRIx64, mod, e->loc.rel);
        else
                snprintf(buf, size, "0x%" PRIx64, e->loc.rel);
}

static void build_branches(struct app *a, struct ui_table *t)
{
        ui_table_clear(t);
        const struct branches_row *rows;
        uint32_t n = branches_rows(a->branches, a->branch_group, AGG_ALL, &rows);
        char from[512], to[512];
        for (uint32_t i = 0; i < n; i++) {
                const struct branches_row *w = &rows[i];
                uint32_t r = ui_table_add(t, i + 1, 0, 0);
                ui_table_pct(t, r, 0, 100.0 * w->share);
                ui_table_u64(t, r, 1, w->count);
                ui_table_u64(t, r, 2, w->nr_edges);
                if (w->is_other) {
                        ui_table_text(t, r, 3, "[other edges]");
                        continue;
                }
                end_text(a, &w->from, from, sizeof(from));
                end_text(a, &w->to, to, sizeof(to));
                if (a->branch_group == BRANCHES_BY_FUNCTION) {
                        /* a function pair: the names without offsets */
                        char *p = strstr(from, "+0x");
                        if (p && w->from.state == SYM_RESOLVED)
                                *p = 0;
                        p = strstr(to, "+0x");
                        if (p && w->to.state == SYM_RESOLVED)
                                *p = 0;
                }
                ui_table_text(t, r, 3, from);
                ui_table_text(t, r, 4, to);
        }
        if (!n)
                ui_table_text(t, ui_table_add(t, 1, 0, UI_ROW_GREYED), 3,
                              a->is_live && !a->caps.has_lbr
                                      ? "No branch edges: LBR is not available here (see the "
                                        "Session view). Replay a trace recorded with "
                                        "--lastbranch to see them."
                                      : "No LBR events yet.");
}

/* The switches view's row keys: a thread's is tid + 1 (the zoom key reads its PID column);
   the other kinds are told apart by a high bit, none of them a functions view key (bits 61
   and 63), so that the one set of expanded keys serves both views. */
#define SW_KEY_PROCESS (1ull << 60)
#define SW_KEY_CPU     (1ull << 59)
#define SW_KEY_DETAIL  (1ull << 58) /* a thread's wait, readier or CPU: tid << 16 | kind | i */
#define SW_KEY_WAIT    (1ull << 57)

static const char *const switch_group_names[NR_SWITCH_GROUPS] = {
        "by thread", "by process (its threads under it)", "by CPU (busy, idle, C-states)",
        "by wait (state/reason, every thread)"};

static void switch_cells(struct ui_table *t, uint32_t r, const struct switches_row *w)
{
        ui_table_u64(t, r, 0, w->nr_switches);
        ui_table_u64(t, r, 1, w->on_cpu_ns);
        ui_table_u64(t, r, 2, w->off_cpu_ns);
        ui_table_u64(t, r, 3, w->nr_readied);
        ui_table_u64(t, r, 4, w->last_cpu == AGG_ALL ? 0 : w->last_cpu);
        ui_table_u64(t, r, 6, w->pid == AGG_ALL ? 0 : w->pid);
        char wait[128];
        if (w->nr_waits)
                snprintf(wait, sizeof(wait), "%s/%s", kevent_thread_state_name(w->waits[0].state),
                         kevent_wait_reason_name(w->waits[0].wait_reason));
        else
                wait[0] = 0;
        ui_table_text(t, r, 7, wait);
}

static uint64_t detail_key(uint32_t tid, uint32_t kind, uint32_t i)
{
        return SW_KEY_DETAIL | (uint64_t)tid << 16 | (uint64_t)kind << 12 | (i & 0xfff);
}

/* Where a readier was when it readied the thread: "module!function+0x1a", "module+0x1a2b". */
static void place_text(struct app *a, struct sym_loc where, uint32_t function, uint64_t offset,
                       char *buf, size_t size)
{
        if (function)
                snprintf(buf, size, "%s!%s+0x%" PRIx64, module_name(a, where.module),
                         sym_name(a->store, function), offset);
        else if (where.module)
                snprintf(buf, size, "%s+0x%" PRIx64, module_name(a, where.module), where.rel);
        else
                snprintf(buf, size, "0x%" PRIx64, where.rel);
}

static void readier_where(struct app *a, const struct switches_readier_row *w, char *buf,
                          size_t size)
{
        if (!w->has_where)
                snprintf(buf, size, "(no stack)");
        else
                place_text(a, w->where, w->function, w->offset, buf, size);
}

/* The rows under an open thread: its waits by state and reason, where it blocked, who readied
   it and from where, the CPUs it ran on. */
static void add_thread_details(struct app *a, struct ui_table *t, const struct switches_row *w,
                               uint8_t depth)
{
        char text[640], where[512];
        if (w->nr_pmc) {
                switches_pmc_text(a->switches, w, where, sizeof(where));
                uint32_t r = ui_table_add(t, detail_key(w->tid, 5, 0), depth, UI_ROW_SPARSE);
                snprintf(text, sizeof(text), "PMC in its timeslices: %s", where);
                ui_table_text(t, r, 8, text);
        }
        for (uint32_t i = 0; i < w->nr_waits; i++) {
                const struct switches_wait *x = &w->waits[i];
                uint32_t r = ui_table_add(t, detail_key(w->tid, 1, i), depth, UI_ROW_SPARSE);
                ui_table_u64(t, r, 0, x->nr_waits);
                ui_table_u64(t, r, 2, x->off_cpu_ns);
                snprintf(text, sizeof(text), "%s/%s", kevent_thread_state_name(x->state),
                         kevent_wait_reason_name(x->wait_reason));
                ui_table_text(t, r, 7, text);
                ui_table_text(t, r, 8, "off CPU in this state/reason");
        }
        if (w->other_wait_ns) {
                uint32_t r = ui_table_add(t, detail_key(w->tid, 1, 0xfff), depth, UI_ROW_SPARSE);
                ui_table_u64(t, r, 2, w->other_wait_ns);
                ui_table_text(t, r, 8, "off CPU in other states/reasons");
        }
        const struct switches_blocker_row *bl;
        uint32_t n = switches_blockers(a->switches, w->tid, &bl);
        for (uint32_t i = 0; i < n && i < 64; i++) {
                uint32_t r = ui_table_add(t, detail_key(w->tid, 4, i), depth, UI_ROW_SPARSE);
                ui_table_u64(t, r, 0, bl[i].nr_waits);
                ui_table_u64(t, r, 2, bl[i].off_cpu_ns);
                place_text(a, bl[i].where, bl[i].function, bl[i].offset, where, sizeof(where));
                snprintf(text, sizeof(text), "blocked in %s", where);
                ui_table_text(t, r, 8, text);
        }
        const struct switches_readier_row *rd;
        n = switches_readiers(a->switches, w->tid, &rd);
        for (uint32_t i = 0; i < n && i < 64; i++) {
                const struct switches_readier_row *x = &rd[i];
                uint32_t r = ui_table_add(t, detail_key(w->tid, 2, i), depth, UI_ROW_SPARSE);
                ui_table_u64(t, r, 3, x->count);
                if (x->is_other) {
                        ui_table_text(t, r, 8, "readied by [other readiers]");
                        continue;
                }
                ui_table_u64(t, r, 5, x->readying_tid);
                ui_table_u64(t, r, 6, x->readying_pid);
                readier_where(a, x, where, sizeof(where));
                snprintf(text, sizeof(text), "readied by %s%s%s from %s",
                         x->readying_process_name[0] ? x->readying_process_name : "?",
                         x->readying_thread_name[0] ? "/" : "", x->readying_thread_name, where);
                ui_table_text(t, r, 8, text);
        }
        const struct switches_cpu_row *c;
        n = switches_thread_cpus(a->switches, w->tid, &c);
        for (uint32_t i = 0; i < n && i < 256; i++) {
                uint32_t r = ui_table_add(t, detail_key(w->tid, 3, c[i].cpu), depth, UI_ROW_SPARSE);
                ui_table_u64(t, r, 0, c[i].nr_switches);
                ui_table_u64(t, r, 1, c[i].busy_ns);
                ui_table_u64(t, r, 4, c[i].cpu);
                snprintf(text, sizeof(text), "ran on CPU %u", c[i].cpu);
                ui_table_text(t, r, 8, text);
        }
}

/* A copy of n rows the model answered (its arrays last until its next call); free it. */
static struct switches_row *copy_rows(const struct switches_row *rows, uint32_t n)
{
        struct switches_row *copy = malloc((n ? n : 1) * sizeof(*copy));
        if (!copy)
                abort();
        if (n) /* an empty answer may be no array */
                memcpy(copy, rows, n * sizeof(*copy));
        return copy;
}

/* Thread rows (copied: the details ask the model for other arrays), each open one with its
   details under it. */
static void add_threads(struct app *a, struct ui_table *t, const struct switches_row *rows,
                        uint32_t n, uint8_t depth)
{
        struct switches_row *copy = copy_rows(rows, n);
        char name[128];
        for (uint32_t i = 0; i < n; i++) {
                const struct switches_row *w = &copy[i];
                uint64_t key = (uint64_t)w->tid + 1;
                bool can_open = !w->is_other;
                bool is_open = can_open && is_expanded(a, key);
                uint32_t r = ui_table_add(t, key, depth,
                                          (can_open ? UI_ROW_EXPANDABLE : 0) |
                                                  (is_open ? UI_ROW_EXPANDED : 0));
                switch_cells(t, r, w);
                ui_table_u64(t, r, 5, w->tid);
                if (w->is_other)
                        snprintf(name, sizeof(name), "[other threads]");
                else
                        snprintf(name, sizeof(name), "%s%s%s", w->process_name,
                                 w->thread_name[0] ? "/" : "", w->thread_name);
                ui_table_text(t, r, 8, name);
                if (is_open)
                        add_thread_details(a, t, w, (uint8_t)(depth + 1));
        }
        free(copy);
}

static void add_processes(struct app *a, struct ui_table *t)
{
        const struct switches_row *rows;
        uint32_t n = switches_processes(a->switches, SWITCHES_BY_SWITCHES, &rows);
        struct switches_row *copy = copy_rows(rows, n);
        char name[128];
        for (uint32_t i = 0; i < n; i++) {
                const struct switches_row *w = &copy[i];
                uint64_t key = SW_KEY_PROCESS | (w->pid == AGG_ALL ? 0xffffffffu : w->pid);
                bool can_open = !w->is_other && w->pid != AGG_ALL;
                bool is_open = can_open && is_expanded(a, key);
                /* sparse: no TID, no CPU (its threads say theirs) */
                uint32_t r = ui_table_add(t, key, 0,
                                          UI_ROW_SPARSE | (can_open ? UI_ROW_EXPANDABLE : 0) |
                                                  (is_open ? UI_ROW_EXPANDED : 0));
                switch_cells(t, r, w);
                ui_table_u64(t, r, 4, 0);
                if (w->is_other)
                        snprintf(name, sizeof(name), "[other threads]");
                else
                        snprintf(name, sizeof(name), "%s (%u thread%s)",
                                 w->process_name[0] ? w->process_name : "?", w->nr_threads,
                                 w->nr_threads == 1 ? "" : "s");
                ui_table_text(t, r, 8, name);
                if (is_open) {
                        const struct switches_row *th;
                        uint32_t m = switches_process_threads(a->switches, w->pid,
                                                              SWITCHES_BY_SWITCHES, &th);
                        add_threads(a, t, th, m, 1);
                }
        }
        free(copy);
}

static void add_cpus(struct app *a, struct ui_table *t)
{
        const struct switches_cpu_row *c;
        uint32_t n = switches_cpus(a->switches, &c);
        char text[128];
        for (uint32_t i = 0; i < n; i++) {
                uint32_t r = ui_table_add(t, SW_KEY_CPU | c[i].cpu, 0, 0);
                ui_table_u64(t, r, 0, c[i].nr_switches);
                ui_table_u64(t, r, 1, c[i].busy_ns);
                ui_table_u64(t, r, 2, c[i].idle_ns);
                ui_table_u64(t, r, 4, c[i].cpu);
                switches_cstates_text(&c[i], text, sizeof(text));
                ui_table_text(t, r, 7, text[0] ? text : "");
                uint64_t all = c[i].busy_ns + c[i].idle_ns;
                snprintf(text, sizeof(text), "CPU %u: busy %.1f%%, idle %.1f%%", c[i].cpu,
                         all ? 100.0 * (double)c[i].busy_ns / (double)all : 0.0,
                         all ? 100.0 * (double)c[i].idle_ns / (double)all : 0.0);
                ui_table_text(t, r, 8, text);
        }
}

static void add_waits(struct app *a, struct ui_table *t)
{
        const struct switches_wait_row *w;
        uint32_t n = switches_waits(a->switches, &w);
        char text[128];
        for (uint32_t i = 0; i < n; i++) {
                uint32_t r =
                        ui_table_add(t, SW_KEY_WAIT | (uint64_t)w[i].state << 8 | w[i].wait_reason,
                                     0, UI_ROW_SPARSE);
                ui_table_u64(t, r, 0, w[i].nr_waits);
                ui_table_u64(t, r, 2, w[i].off_cpu_ns);
                snprintf(text, sizeof(text), "%s/%s", kevent_thread_state_name(w[i].state),
                         kevent_wait_reason_name(w[i].wait_reason));
                ui_table_text(t, r, 7, text);
                ui_table_text(t, r, 8, "all threads");
        }
}

static void build_switches(struct app *a, struct ui_table *t)
{
        ui_table_clear(t);
        switch (a->switch_group) {
        case SWITCH_GROUP_THREAD: {
                const struct switches_row *rows;
                uint32_t n = switches_threads(a->switches, SWITCHES_BY_SWITCHES, &rows);
                add_threads(a, t, rows, n, 0);
                break;
        }
        case SWITCH_GROUP_PROCESS: add_processes(a, t); break;
        case SWITCH_GROUP_CPU: add_cpus(a, t); break;
        case SWITCH_GROUP_WAIT: add_waits(a, t); break;
        default: break;
        }
        if (!t->nr_rows)
                ui_table_text(t, ui_table_add(t, 1, 0, UI_ROW_GREYED), 8,
                              "No context switches (turn CSWITCH on in the Session view).");
}

static void build_tables(struct app *a)
{
        pthread_mutex_lock(&a->lock);
        sym_store_poll(a->store);
        build_functions(a, &a->tables[VIEW_FUNCTIONS]);
        build_branches(a, &a->tables[VIEW_BRANCHES]);
        build_switches(a, &a->tables[VIEW_SWITCHES]);
        pthread_mutex_unlock(&a->lock);
        build_session(a, &a->tables[VIEW_SESSION]);
}

/* ---- the header ---- */

/* The events lost, as the largest of the counts that each miss some */
static uint64_t lost_events(const struct app *a)
{
        uint64_t n = a->nr_lost_header;
        const uint64_t more[] = {a->nr_lost_records, a->nr_lost_total, a->nr_lost_session};
        for (size_t i = 0; i < sizeof(more) / sizeof(more[0]); i++)
                n = more[i] > n ? more[i] : n;
        return n;
}

static void header_lines(struct app *a, char lines[4][512])
{
        char flags[256];
        xperf_format_flags(&a->masks, flags, sizeof(flags));
        char hooks[256] = "";
        for (uint32_t i = 0; i < a->nr_hooks; i++) {
                const char *n = xperf_hook_name(a->hooks[i]);
                size_t len = strlen(hooks);
                snprintf(hooks + len, sizeof(hooks) - len, "%s%s", len ? "+" : "", n ? n : "?");
        }
        uint64_t samples = hot_nr_samples(a->hot, HOT_SOURCE_TIMER);
        if (a->is_live) {
                snprintf(lines[0], 512,
                         "etwtop - %s NT Kernel Logger%s%s   %.0f events/s   %" PRIu64
                         " samples   lost %" PRIu64 "%s",
                         a->o->record_path ? "recording" : "live", a->o->record_path ? " to " : "",
                         a->o->record_path ? a->o->record_path : "", a->events_per_s, samples,
                         lost_events(a), a->is_paused ? "   [paused]" : "");
                if (a->nr_rt_buffers_lost) {
                        size_t len = strlen(lines[0]);
                        snprintf(lines[0] + len, 512 - len, "   buffers lost %" PRIu64,
                                 a->nr_rt_buffers_lost);
                }
                if (a->zoom_pid) {
                        size_t len = strlen(lines[0]);
                        snprintf(lines[0] + len, 512 - len, "   [process %u]", a->zoom_pid);
                }
        } else {
                uint64_t read = atomic_load(&a->nr_buffers_read);
                char progress[64] = "";
                if (!atomic_load(&a->is_done) && a->nr_buffers_total)
                        snprintf(progress, sizeof(progress), "   loading %3.0f%%",
                                 100.0 * (double)read / (double)a->nr_buffers_total);
                char lost[48] = "";
                if (lost_events(a))
                        snprintf(lost, sizeof(lost), "   lost %" PRIu64, lost_events(a));
                snprintf(lines[0], 512,
                         "etwtop - replay %s   %" PRIu64 " events   %" PRIu64 " samples%s%s%s",
                         a->o->replay_path, a->nr_events, samples, lost, progress,
                         a->is_paused ? "   [paused]" : "");
        }
        if (!a->is_live)
                snprintf(hooks, sizeof(hooks), "%s",
                         a->nr_stacks_seen ? "as recorded" : "none recorded");
        if (!flags[0])
                snprintf(flags, sizeof(flags), "(not recorded)");
        snprintf(lines[1], 512, "Groups: %s   Stacks: %s   Interval: %.3f ms (timer)   LBR: %s",
                 flags, hooks[0] ? hooks : "none", a->interval_100ns / 10000.0,
                 a->is_lbr_on ? "on" : "off");
        char cannot[400] = "";
        if (a->is_live) {
                if (!a->caps.has_pmu)
                        snprintf(cannot + strlen(cannot), sizeof(cannot) - strlen(cannot),
                                 "no PMU (PMC sources)");
                if (!a->caps.has_lbr)
                        snprintf(cannot + strlen(cannot), sizeof(cannot) - strlen(cannot),
                                 "%sno LBR", cannot[0] ? ", " : "");
                if (!a->caps.has_kallsyms)
                        snprintf(cannot + strlen(cannot), sizeof(cannot) - strlen(cannot),
                                 "%skernel symbols restricted", cannot[0] ? ", " : "");
        }
        snprintf(lines[2], 512, "%s%s", cannot[0] ? "Not on this machine: " : "", cannot);
}

/* ---- actions ---- */

static void toggle_setting(struct app *a, uint64_t key)
{
        if (key == 0 || key > NR_SETTINGS)
                return;
        const struct setting *s = &settings[key - 1];
        const char *why = why_not(a, s);
        ULONG st = ERROR_SUCCESS;
        if (why && s->kind != SET_LBR && s->kind != SET_PMC) {
                snprintf(a->status, sizeof(a->status), "%s: %s", s->name, why);
                return;
        }
        switch (s->kind) {
        case SET_MASK: {
                /* the flag and the group it implies go on and off together */
                bool is_on_next = !is_on(a, s);
                if (is_on_next)
                        a->masks.Masks[s->mask_index] |= s->bits;
                else
                        a->masks.Masks[s->mask_index] &= ~s->bits;
                if (s->group) {
                        uint32_t *m = &a->masks.Masks[PERF_GET_MASK_INDEX(s->group)];
                        *m = is_on_next ? *m | PERF_GET_MASK_GROUP(s->group)
                                        : *m & ~PERF_GET_MASK_GROUP(s->group);
                }
                st = apply_masks(a);
                break;
        }
        case SET_HOOK:
                if (has_hook(a, (uint16_t)s->bits)) {
                        uint32_t o = 0;
                        for (uint32_t i = 0; i < a->nr_hooks; i++)
                                if (a->hooks[i] != s->bits)
                                        a->hooks[o++] = a->hooks[i];
                        a->nr_hooks = o;
                } else if (a->nr_hooks < 32) {
                        a->hooks[a->nr_hooks++] = (uint16_t)s->bits;
                }
                st = apply_hooks(a);
                break;
        case SET_INTERVAL:
                a->interval_100ns = s->bits;
                st = apply_interval(a);
                break;
        case SET_LBR: {
                /* the API says what this machine can do */
                uint32_t filters = s->bits ? a->lbr_filters ^ s->bits : a->lbr_filters;
                bool is_on_next = s->bits ? a->is_lbr_on : !a->is_lbr_on;
                CLASSIC_EVENT_ID trig = {PerfInfoGuid, 46, {0}};
                st = TraceConfigureLastBranchRecord(a->session, filters, &trig, is_on_next ? 1 : 0);
                if (st == ERROR_SUCCESS) {
                        a->lbr_filters = filters;
                        a->is_lbr_on = is_on_next;
                }
                break;
        }
        case SET_PMC: {
                /* the source sampled under PMC_PROFILE; the API says what the machine can do */
                ULONG src = s->bits;
                st = TraceSetInformation(a->session, TraceProfileSourceConfigInfo, &src,
                                         sizeof(src));
                if (st == ERROR_SUCCESS) {
                        a->pmc_source = s->bits;
                        a->masks.Masks[PERF_GET_MASK_INDEX(PERF_PMC_PROFILE)] |=
                                PERF_GET_MASK_GROUP(PERF_PMC_PROFILE);
                        st = apply_masks(a);
                }
                break;
        }
        }
        if (st == ERROR_SUCCESS)
                snprintf(a->status, sizeof(a->status), "%s %s: applied to the running session",
                         s->name, is_on(a, s) ? "on" : "off");
        else
                snprintf(a->status, sizeof(a->status), "%s: %s (Win32 error %u)", s->name,
                         why ? why : etw_last_error_text(), (unsigned)st);
}

/* Replay: [ and ] show a tenth of the trace at a time, moving back or forward; past either
   end the whole trace again. The file is read again into a fresh model. */
static void move_window(struct app *a, bool is_forward)
{
        if (a->is_live) {
                snprintf(a->status, sizeof(a->status), "[ ]: the time window is for replays");
                return;
        }
        if (!atomic_load(&a->is_done)) {
                snprintf(a->status, sizeof(a->status), "still loading");
                return;
        }
        int64_t span = a->span_ns, width = span / 10 > 0 ? span / 10 : 1;
        if (!a->has_window) {
                a->has_window = true;
                a->window_from_ns = is_forward ? 0 : span - width;
        } else {
                a->window_from_ns += is_forward ? width : -width;
        }
        if (a->window_from_ns < 0 || a->window_from_ns >= span)
                a->has_window = false;
        a->window_to_ns = a->window_from_ns + width;
        /* read the file again */
        if (a->has_thread) {
                pthread_join(a->thread, NULL);
                a->has_thread = false;
        }
        CloseTrace(a->consumer);
        pthread_mutex_lock(&a->lock);
        hot_reset(a->hot);
        calltree_reset(a->tree);
        branches_reset(a->branches);
        switches_reset(a->switches);
        kdecoder_free(a->decoder);
        a->decoder = kdecoder_new(true);
        a->nr_events = 0;
        pthread_mutex_unlock(&a->lock);
        atomic_store(&a->is_done, false);
        char err[256];
        if (replay_start(a, err, sizeof(err)) < 0) {
                snprintf(a->status, sizeof(a->status), "%s", err);
                return;
        }
        if (pthread_create(&a->thread, NULL, consumer_main, a) == 0)
                a->has_thread = true;
        if (a->has_window)
                snprintf(a->status, sizeof(a->status), "time window %.3f s - %.3f s of %.3f s",
                         (double)a->window_from_ns / 1e9, (double)a->window_to_ns / 1e9,
                         (double)span / 1e9);
        else
                snprintf(a->status, sizeof(a->status), "the whole trace (%.3f s)",
                         (double)span / 1e9);
}

/* The views count process pid only from now on (0: every process); the counts start over. */
static void zoom_to(struct app *a, uint32_t pid)
{
        struct agg_filter f;
        agg_filter_init(&f);
        if (pid)
                agg_filter_add_pid(&f, pid);
        pthread_mutex_lock(&a->lock);
        a->zoom_pid = pid;
        hot_reset(a->hot);
        hot_set_filter(a->hot, &f);
        calltree_reset(a->tree);
        branches_reset(a->branches);
        branches_set_filter(a->branches, &f);
        switches_zero(a->switches);
        switches_set_filter(a->switches, &f);
        pthread_mutex_unlock(&a->lock);
}

/* t: the views count one process only, from now on (the counts start over); again: all. */
static void zoom_process(struct app *a, uint64_t row_key)
{
        uint32_t pid = 0;
        if (!a->zoom_pid && a->view == VIEW_SWITCHES) {
                const struct ui_table *t = &a->tables[VIEW_SWITCHES];
                for (uint32_t r = 0; r < t->nr_rows && !pid; r++)
                        if (t->keys[r] == row_key)
                                pid = (uint32_t)t->cells[(size_t)r * t->nr_cols + 6].u;
                if (!pid) {
                        snprintf(a->status, sizeof(a->status), "t: no process on this row");
                        return;
                }
        } else if (!a->zoom_pid) {
                snprintf(a->status, sizeof(a->status),
                         "t: choose a thread in the switches view (3) first");
                return;
        }
        zoom_to(a, pid);
        if (pid)
                snprintf(a->status, sizeof(a->status),
                         "only process %u from now on (t again: every process)", pid);
        else
                snprintf(a->status, sizeof(a->status), "every process again, from now on");
}

/* The save key: the session's recent buffers and a rundown, as a self-contained .etl in the
   current directory. */
static void save_window(struct app *a)
{
        if (!a->is_live) {
                snprintf(a->status, sizeof(a->status), "a recording is already a file: %s",
                         a->o->replay_path);
                return;
        }
        char path[64];
        time_t now = time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        strftime(path, sizeof(path), "etwtop-%Y%m%d-%H%M%S.etl", &tm);
        struct etl_error e;
        if (session_save_ring(a->session, path, false, &e) < 0)
                snprintf(a->status, sizeof(a->status), "save failed: %s", e.msg);
        else
                snprintf(a->status, sizeof(a->status),
                         "saved the recent events to %s (etwtop --replay %s)", path, path);
}

/* Whether the view shown has rows that open: the call tree, the switches' threads and
   processes. */
static bool has_tree(const struct app *a)
{
        return a->view == VIEW_FUNCTIONS ||
               (a->view == VIEW_SWITCHES && (a->switch_group == SWITCH_GROUP_THREAD ||
                                             a->switch_group == SWITCH_GROUP_PROCESS));
}

static void handle_action(struct app *a, enum ui_action act, uint64_t row_key)
{
        switch (act) {
        case UI_QUIT: a->is_quit = true; break;
        case UI_HELP: a->is_help = !a->is_help; break;
        case UI_VIEW_NEXT: a->view = (a->view + 1) % NR_VIEWS; break;
        case UI_VIEW_PREV: a->view = (a->view + NR_VIEWS - 1) % NR_VIEWS; break;
        case UI_VIEW_1: a->view = VIEW_FUNCTIONS; break;
        case UI_VIEW_2: a->view = VIEW_BRANCHES; break;
        case UI_VIEW_3: a->view = VIEW_SWITCHES; break;
        case UI_VIEW_4: a->view = VIEW_SESSION; break;
        case UI_PAUSE:
                a->is_paused = !a->is_paused;
                snprintf(a->status, sizeof(a->status), "%s",
                         a->is_paused ? "display paused (collection goes on); Space resumes" : "");
                break;
        case UI_ZERO:
                pthread_mutex_lock(&a->lock);
                hot_reset(a->hot);
                calltree_reset(a->tree);
                branches_reset(a->branches);
                switches_zero(a->switches);
                pthread_mutex_unlock(&a->lock);
                snprintf(a->status, sizeof(a->status), "counts zeroed");
                break;
        case UI_TOGGLE:
                if (a->view == VIEW_SESSION)
                        toggle_setting(a, row_key);
                else if (has_tree(a))
                        set_expanded(a, row_key, !is_expanded(a, row_key));
                break;
        case UI_EXPAND:
                if (has_tree(a))
                        set_expanded(a, row_key, true);
                break;
        case UI_COLLAPSE:
                if (has_tree(a))
                        set_expanded(a, row_key, false);
                break;
        case UI_EXPAND_ALL:
                /* every row shown now opens one level */
                for (uint32_t i = 0; has_tree(a) && i < a->tables[a->view].nr_rows; i++)
                        if (a->tables[a->view].flags[i] & UI_ROW_EXPANDABLE)
                                set_expanded(a, a->tables[a->view].keys[i], true);
                break;
        case UI_MODE:
                a->agg.mode = (a->agg.mode + 1) % 3;
                pthread_mutex_lock(&a->lock);
                hot_set_settings(a->hot, &a->agg);
                branches_set_settings(a->branches, &a->agg);
                switches_set_settings(a->switches, &a->agg);
                pthread_mutex_unlock(&a->lock);
                snprintf(a->status, sizeof(a->status), "aggregation: %s",
                         agg_mode_name(a->agg.mode));
                break;
        case UI_GROUPING:
                if (a->view == VIEW_SWITCHES) {
                        a->switch_group = (a->switch_group + 1) % NR_SWITCH_GROUPS;
                        snprintf(a->status, sizeof(a->status), "context switches %s",
                                 switch_group_names[a->switch_group]);
                        break;
                }
                a->branch_group = a->branch_group == BRANCHES_BY_EDGE ? BRANCHES_BY_FUNCTION
                                                                      : BRANCHES_BY_EDGE;
                snprintf(a->status, sizeof(a->status), "branch edges %s",
                         a->branch_group == BRANCHES_BY_EDGE ? "by exact edge"
                                                             : "by function pair");
                break;
        case UI_CALLERS:
                a->is_top_down = !a->is_top_down;
                snprintf(a->status, sizeof(a->status), "%s",
                         a->is_top_down ? "call tree: top-down (callees under callers)"
                                        : "hot functions, their callers under each");
                break;
        case UI_SAVE: save_window(a); break;
        case UI_ZOOM_PROCESS: zoom_process(a, row_key); break;
        case UI_TIME_BACK:
        case UI_TIME_FWD: move_window(a, act == UI_TIME_FWD); break;
        default: break;
        }
}

/* ---- the loops ---- */

static void draw(struct app *a)
{
        char hl[4][512];
        header_lines(a, hl);
        const char *header[3] = {hl[0], hl[1], hl[2]};
        struct ui_frame f = {header,  hl[2][0] ? 3u : 2u, view_names, NR_VIEWS,
                             a->view, a->status,          a->is_help};
        ui_screen_draw(a->scr, &f, &a->tables[a->view], &a->vs[a->view]);
}

/* The aggregation mode's step at each refresh: decay or zero the counts. */
static void model_refresh(struct app *a)
{
        pthread_mutex_lock(&a->lock);
        hot_refresh(a->hot);
        branches_refresh(a->branches);
        switches_refresh(a->switches);
        if (a->agg.mode == AGG_ZEROED)
                calltree_reset(a->tree);
        pthread_mutex_unlock(&a->lock);
}

static void rates(struct app *a, double secs)
{
        pthread_mutex_lock(&a->lock);
        uint64_t n = a->nr_events;
        pthread_mutex_unlock(&a->lock);
        a->events_per_s = secs > 0 ? (double)(n - a->nr_events_prev) / secs : 0;
        a->nr_events_prev = n;
        if (a->is_live && a->has_session) {
                /* the session's own count (PERF_FORMAT_LOST, read now): an EventsLost event is
                   written only when the ring has room again, and not at all for what a full
                   ring dropped last */
                struct kernel_props k;
                props_init(&k, NULL, 0, 0);
                if (ControlTraceA(a->session, NULL, &k.p, EVENT_TRACE_CONTROL_QUERY) ==
                    ERROR_SUCCESS) {
                        a->nr_lost_session = k.p.EventsLost;
                        a->nr_rt_buffers_lost = k.p.RealTimeBuffersLost;
                }
        }
}

static int signals_fd(sigset_t *old)
{
        sigset_t mask;
        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGHUP);
        sigprocmask(SIG_BLOCK, &mask, old);
        return signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
}

static void run_batch(struct app *a, int sfd)
{
        int64_t delay = (int64_t)(a->o->delay_s * 1e9);
        int64_t start = now_ns(), last = start;
        for (uint32_t frame = 0; !a->o->nr_frames || frame < a->o->nr_frames; frame++) {
                /* a replay is one frame, once the file is read */
                int64_t until = a->is_live ? last + delay : INT64_MAX;
                while (now_ns() < until && !(!a->is_live && atomic_load(&a->is_done))) {
                        struct pollfd p = {sfd, POLLIN, 0};
                        if (poll(&p, sfd >= 0 ? 1 : 0, 50) > 0) {
                                a->is_quit = true;
                                break;
                        }
                }
                int64_t now = now_ns();
                rates(a, (double)(now - last) / 1e9);
                last = now;
                if (!a->is_live) {
                        pthread_mutex_lock(&a->lock);
                        switches_refresh(a->switches); /* open waits, once at the end */
                        pthread_mutex_unlock(&a->lock);
                }
                build_tables(a);
                if (a->is_live)
                        model_refresh(a);
                char hl[4][512];
                header_lines(a, hl);
                dprintf(STDOUT_FILENO, "\n%s\n%s\n%s%s", hl[0], hl[1], hl[2], hl[2][0] ? "\n" : "");
                dprintf(STDOUT_FILENO, "\n%s\n", view_names[VIEW_FUNCTIONS]);
                ui_table_print(&a->tables[VIEW_FUNCTIONS], STDOUT_FILENO,
                               a->o->nr_top ? a->o->nr_top : 25);
                uint32_t top = a->o->nr_top ? a->o->nr_top : 25;
                dprintf(STDOUT_FILENO, "\n%s\n", view_names[VIEW_SWITCHES]);
                ui_table_print(&a->tables[VIEW_SWITCHES], STDOUT_FILENO, top);
                if (a->tables[VIEW_BRANCHES].nr_rows > 1 ||
                    !(a->tables[VIEW_BRANCHES].flags[0] & UI_ROW_GREYED)) {
                        dprintf(STDOUT_FILENO, "\n%s\n", view_names[VIEW_BRANCHES]);
                        ui_table_print(&a->tables[VIEW_BRANCHES], STDOUT_FILENO, top);
                }
                if (a->is_quit || !a->is_live)
                        break;
                if (a->o->duration_s > 0 && now - start >= (int64_t)(a->o->duration_s * 1e9))
                        break;
        }
}

static void run_screen(struct app *a, int sfd)
{
        int64_t delay = (int64_t)(a->o->delay_s * 1e9);
        int64_t start = now_ns(), last = start;
        bool was_done = false;
        build_tables(a);
        draw(a);
        while (!a->is_quit) {
                struct pollfd p[2] = {{STDIN_FILENO, POLLIN, 0}, {sfd, POLLIN, 0}};
                int64_t wait = last + delay - now_ns();
                if (!a->is_live && !was_done)
                        wait = 100000000; /* loading: the progress moves */
                int n = poll(p, sfd >= 0 ? 2 : 1, wait > 0 ? (int)(wait / 1000000) + 1 : 0);
                if (n > 0 && sfd >= 0 && (p[1].revents & POLLIN))
                        break;
                bool is_dirty = false;
                int key;
                while ((key = ui_screen_getkey(a->scr)) >= 0) {
                        if (a->is_help) {
                                a->is_help = false;
                                is_dirty = true;
                                continue;
                        }
                        uint64_t row_key = 0;
                        enum ui_action act = ui_screen_key(a->scr, key, &a->vs[a->view],
                                                           &a->tables[a->view], &row_key);
                        if (act != UI_NONE)
                                is_dirty = true;
                        handle_action(a, act, row_key);
                        if (act == UI_TOGGLE || act == UI_ZERO || act == UI_EXPAND ||
                            act == UI_COLLAPSE || act == UI_EXPAND_ALL || act == UI_CALLERS ||
                            act == UI_MODE || act == UI_GROUPING || act == UI_TIME_BACK ||
                            act == UI_TIME_FWD || act == UI_ZOOM_PROCESS)
                                build_tables(a);
                }
                int64_t now = now_ns();
                bool is_done = atomic_load(&a->is_done);
                if (now >= last + delay || (is_done && !was_done)) {
                        rates(a, (double)(now - last) / 1e9);
                        last = now;
                        if (!a->is_paused) {
                                build_tables(a);
                                model_refresh(a);
                        }
                        is_dirty = true;
                        if (!a->is_live && is_done && !was_done)
                                say_damage(a);
                        was_done = is_done;
                }
                if (a->is_live && is_done && a->consumer_status != ERROR_SUCCESS)
                        snprintf(a->status, sizeof(a->status), "the session stopped (%u)",
                                 (unsigned)a->consumer_status);
                if (a->o->duration_s > 0 && now - start >= (int64_t)(a->o->duration_s * 1e9))
                        break;
                if (is_dirty)
                        draw(a);
        }
}

int app_run(const struct app_options *o, char *err, size_t err_size)
{
        struct app *a = calloc(1, sizeof(*a));
        if (!a)
                abort();
        int rc = -1;
        a->o = o;
        a->is_live = !o->replay_path;
        a->masks = o->masks;
        a->nr_hooks = o->nr_stack_hooks < 32 ? o->nr_stack_hooks : 32;
        memcpy(a->hooks, o->stack_hooks, a->nr_hooks * sizeof(a->hooks[0]));
        a->interval_100ns = o->interval_100ns ? o->interval_100ns : 10000;
        if (!a->is_live) {
                memset(&a->masks, 0, sizeof(a->masks)); /* the recording's come with it */
                a->nr_hooks = 0;
        }
        pthread_mutex_init(&a->lock, NULL);
        if (a->is_live)
                live_probe(&a->caps);
        struct sym_options so = {.symbol_path = o->symbol_path,
                                 .nr_symbol_path = o->nr_symbol_path,
                                 .is_live = a->is_live,
                                 .is_synchronous = o->is_batch};
        sym_store_new(&a->store, &so);
        a->feed = sym_feed_new(a->store);
        a->hot = hot_new(a->store, 1u << 18);
        a->tree = calltree_new(a->store, 1u << 18, HOT_SOURCE_TIMER);
        a->branches = branches_new(a->store, 1u << 16);
        a->switches = switches_new(a->store, 1u << 16);
        agg_settings_init(&a->agg);
        a->decoder = kdecoder_new(true);
        static const struct ui_column *cols[NR_VIEWS] = {fn_cols, branch_cols, switch_cols,
                                                         session_cols};
        static const uint32_t nr_cols[NR_VIEWS] = {6, 5, 9, 3};
        for (int v = 0; v < NR_VIEWS; v++)
                ui_table_init(&a->tables[v], cols[v], nr_cols[v]);

        if (a->is_live && o->pid > 0) {
                /* -p: the session stays system-wide (the kernel logger is), the views count the
                   process only, as t does */
                char path[32];
                snprintf(path, sizeof(path), "/proc/%d", (int)o->pid);
                if (access(path, F_OK) != 0) {
                        snprintf(err, err_size, "-p %d: no such process", (int)o->pid);
                        goto out;
                }
                zoom_to(a, (uint32_t)o->pid);
        }
        if (a->is_live ? session_start(a, err, err_size) : replay_start(a, err, err_size))
                goto out;
        if (pthread_create(&a->thread, NULL, consumer_main, a) == 0)
                a->has_thread = true;
        sigset_t old;
        int sfd = signals_fd(&old);
        if (o->is_batch) {
                run_batch(a, sfd);
        } else if (ui_screen_open(&a->scr, o->is_mono) < 0) {
                snprintf(err, err_size, "cannot start the screen (TERM=%s); use -b for text",
                         getenv("TERM") ? getenv("TERM") : "");
                session_stop(a);
                if (sfd >= 0)
                        close(sfd);
                sigprocmask(SIG_SETMASK, &old, NULL);
                goto out;
        } else {
                run_screen(a, sfd);
                ui_screen_close(a->scr);
                a->scr = NULL;
        }
        session_stop(a);
        if (sfd >= 0)
                close(sfd);
        sigprocmask(SIG_SETMASK, &old, NULL);
        rc = 0;
out:
        if (a->has_session || a->has_thread)
                session_stop(a);
        for (int v = 0; v < NR_VIEWS; v++)
                ui_table_fini(&a->tables[v]);
        hot_free(a->hot);
        calltree_free(a->tree);
        branches_free(a->branches);
        switches_free(a->switches);
        free(a->expanded);
        sym_feed_free(a->feed);
        sym_store_free(a->store);
        kdecoder_free(a->decoder);
        pthread_mutex_destroy(&a->lock);
        free(a);
        return rc;
}
