/* SPDX-License-Identifier: MIT */
/* profile.c: owns the path from a decoded event to every part of the model, and what they share:
   the trace's facts, the zoom, the time window, zeroing and the aggregation step. */
#include "model/profile_fields.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etw/ntwmi.h"
#include "remap.h"
#include "stack_join.h"
#include "util/clock.h"
#include "util/mem_policy.h"
#include "util/xalloc.h"

/* The sizes the screen has always used. */
#define BRANCH_EDGES_MAX   65536u
#define SWITCH_THREADS_MAX 65536u

static void leaf_to_tree(void *ctx, const struct kevent *ev);

struct profile *profile_new(const struct profile_options *o)
{
        struct profile *p = xcalloc(1, sizeof(*p));
        struct sym_options so = {.symbol_path = o->symbol_path,
                                 .nr_symbol_path = o->nr_symbol_path,
                                 .is_live = o->is_live,
                                 .is_synchronous = o->is_synchronous,
                                 .is_no_demangle = o->is_no_demangle,
                                 .log = o->log,
                                 .log_ctx = o->log_ctx};
        sym_store_new(&p->store, &so);
        p->feed = sym_feed_new(p->store);
        p->hot = hot_new(p->store, o->max_functions);
        if (o->has_call_tree) {
                p->tree = calltree_new(p->store, o->max_functions, HOT_SOURCE_TIMER);
                hot_set_leaf_hook(p->hot, leaf_to_tree, p);
        }
        /* live, the top-down tree is made while its view is shown (functions_view_ask); a
           recording's always, as its file is read */
        if (p->tree && !o->is_live)
                calltree_keep_top_down(p->tree);
        p->branches = branches_new(p->store, BRANCH_EDGES_MAX);
        p->switches = switches_new(p->store, SWITCH_THREADS_MAX);
        p->events = events_table_new();
        events_table_set_fold_exited(p->events, o->is_live);
        p->join = stack_join_new();
        /* a live session is etwtop's: its stacks come whole */
        stack_join_set_whole(p->join, o->is_live);
        agg_settings_init(&p->agg);
        return p;
}

void profile_set_whole_stacks(struct profile *p)
{
        stack_join_set_whole(p->join, true);
}

void profile_free(struct profile *p)
{
        if (!p)
                return;
        hot_free(p->hot);
        calltree_free(p->tree);
        branches_free(p->branches);
        switches_free(p->switches);
        events_table_free(p->events);
        stack_join_free(p->join);
        sym_feed_free(p->feed);
        sym_store_free(p->store);
        free(p->trace.source_names);
        free(p);
}

/* A CollectionStart's source: its interval, and its name (a perf.data event's own, "cycles:u",
   also for a source ETW names: profile_source_name titles that one by ETW's name, --source
   takes both). */
static void remember_source(struct profile_trace *t, uint32_t source, const char *name,
                            uint32_t interval)
{
        if (source > UINT16_MAX)
                return;
        if (!name)
                name = "";
        uint32_t i = 0;
        while (i < t->nr_source_names && t->source_names[i].source != source)
                i++;
        if (i == t->cap_source_names) {
                t->cap_source_names = t->cap_source_names ? 2 * t->cap_source_names : 8;
                t->source_names =
                        xrealloc(t->source_names, t->cap_source_names * sizeof(*t->source_names));
        }
        t->source_names[i].source = (uint16_t)source;
        snprintf(t->source_names[i].name, sizeof(t->source_names[i].name), "%s", name);
        t->source_names[i].interval = interval;
        if (i == t->nr_source_names)
                t->nr_source_names++;
}

/* A stack belongs to the event it follows with the same timestamp (ETL-FORMAT.md, StackWalk):
   the trace's stack-walk hooks, as a recording shows them in the session panel. */
static void stack_hook_seen(struct profile_trace *t, const struct kevent *ev)
{
        if (ev->stack.event_timestamp != t->last_timestamp)
                return;
        uint16_t hook;
        uint8_t bit;
        switch (t->last_type) {
        case KEV_SAMPLE: hook = PERFINFO_LOG_TYPE_SAMPLED_PROFILE, bit = 1; break;
        case KEV_PMC_SAMPLE: hook = PERFINFO_LOG_TYPE_PMC_INTERRUPT, bit = 2; break;
        case KEV_CSWITCH: hook = WMI_LOG_TYPE_CONTEXT_SWAP, bit = 4; break;
        case KEV_READY_THREAD: hook = WMI_LOG_TYPE_READY_THREAD, bit = 8; break;
        default: return;
        }
        /* every stack of a switch storm asks: a bit, not the list */
        if (t->stack_hook_bits & bit)
                return;
        t->stack_hook_bits |= bit;
        if (t->nr_stack_hooks < sizeof(t->stack_hooks) / sizeof(t->stack_hooks[0]))
                t->stack_hooks[t->nr_stack_hooks++] = hook;
}

/* An LBR record belongs to the sample before it on its CPU with its timestamp: the sources
   whose samples carry branch stacks, as the header names them. */
static void lbr_seen(struct profile_trace *t, const struct kevent *ev)
{
        t->nr_lbr_records++;
        uint32_t c = ev->cpu % 64;
        if (ev->lbr.event_timestamp != t->last_sample_timestamp[c] || !t->last_sample_timestamp[c])
                return;
        uint16_t source = t->last_sample_source[c];
        for (uint32_t i = 0; i < t->nr_lbr_sources; i++)
                if (t->lbr_sources[i] == source)
                        return;
        if (t->nr_lbr_sources < sizeof(t->lbr_sources) / sizeof(t->lbr_sources[0]))
                t->lbr_sources[t->nr_lbr_sources++] = source;
}

/* The smallest n with n * PROFILE_TIMELINE_SLOTS >= x (x >= 0). */
static int64_t slices_ceil(__int128 x)
{
        return (int64_t)((x + PROFILE_TIMELINE_SLOTS - 1) / PROFILE_TIMELINE_SLOTS);
}

/* The timeline's slice of ns (0 <= ns < the span, or the last slice): ns * SLOTS / span. The
   slice's times are kept, and an event in them takes it without the division (most events fall
   in the last one's): ns is in slice k exactly when k * span <= ns * SLOTS < (k + 1) * span,
   that is from ceil(k * span / SLOTS) to ceil((k + 1) * span / SLOTS), excluded. */
static uint32_t timeline_slice_new(struct profile_trace *t, int64_t ns);

static uint32_t timeline_slice(struct profile_trace *t, int64_t ns)
{
        if (t->slice_span_ns == t->timeline_span_ns && ns >= t->slice_from_ns &&
            ns < t->slice_to_ns)
                return t->slice;
        return timeline_slice_new(t, ns);
}

/* Out of line: once a slice, and profile_event's own frame stays small (LTO inlines the
   events table's count into it, as it did before the slices were kept). */
static __attribute__((noinline)) uint32_t timeline_slice_new(struct profile_trace *t, int64_t ns)
{
        /* the product in 64 bits where it fits (a trace under 104 days: every one), the same
           quotient without the 128-bit division's call */
        int64_t slot =
                ns <= INT64_MAX / PROFILE_TIMELINE_SLOTS
                        ? ns * PROFILE_TIMELINE_SLOTS / t->timeline_span_ns
                        : (int64_t)((__int128)ns * PROFILE_TIMELINE_SLOTS / t->timeline_span_ns);
        if (slot >= PROFILE_TIMELINE_SLOTS)
                return PROFILE_TIMELINE_SLOTS - 1; /* past a span that no longer doubles */
        t->slice = (uint32_t)slot;
        t->slice_span_ns = t->timeline_span_ns;
        t->slice_from_ns = slices_ceil((__int128)slot * t->timeline_span_ns);
        t->slice_to_ns = slices_ceil((__int128)(slot + 1) * t->timeline_span_ns);
        return t->slice;
}

/* What the trace says of itself: its header, its settings, what it lost. */
static void trace_event(struct profile_trace *t, const struct kevent *ev)
{
        /* the records: a stack rebuilt from a stack-cache key is part of its record */
        if (!(ev->type == KEV_STACK && ev->stack.is_from_key))
                t->nr_events++;
        if (!t->has_time || ev->time_ns < t->first_ns)
                t->first_ns = ev->time_ns;
        if (!t->has_time || ev->time_ns > t->last_ns)
                t->last_ns = ev->time_ns;
        t->has_time = true;
        if (t->timeline_span_ns > 0 && ev->time_ns >= 0) {
                /* events past the header's end (the stop's rundown): the span doubles, two
                   slices become one */
                while (ev->time_ns >= t->timeline_span_ns && t->timeline_span_ns < INT64_MAX / 4) {
                        for (uint32_t i = 0; i < PROFILE_TIMELINE_SLOTS / 2; i++)
                                t->timeline[i] = t->timeline[2 * i] + t->timeline[2 * i + 1];
                        memset(t->timeline + PROFILE_TIMELINE_SLOTS / 2, 0,
                               PROFILE_TIMELINE_SLOTS / 2 * sizeof(t->timeline[0]));
                        t->timeline_span_ns *= 2;
                }
                t->timeline[timeline_slice(t, ev->time_ns)]++;
        }
        switch (ev->type) {
        case KEV_TRACE_HEADER:
                snprintf(t->logger_name, sizeof(t->logger_name), "%s",
                         ev->trace_header.logger_name ? ev->trace_header.logger_name : "");
                if (ev->trace_header.header) {
                        const TRACE_LOGFILE_HEADER *h = ev->trace_header.header;
                        t->nr_cpus = h->NumberOfProcessors;
                        t->nr_lost_header = h->EventsLost;
                        if (h->EndTime.QuadPart > h->StartTime.QuadPart && !t->timeline_span_ns) {
                                /* in 100 ns units; a damaged header's span of centuries (its
                                   difference, or that times 100, past 64 bits) is cut to the
                                   longest the slices take */
                                uint64_t d = (uint64_t)h->EndTime.QuadPart -
                                             (uint64_t)h->StartTime.QuadPart;
                                t->timeline_span_ns = d <= (uint64_t)(INT64_MAX / 4) / 100
                                                              ? (int64_t)d * 100
                                                              : INT64_MAX / 4;
                        }
                }
                break;
        case KEV_SESSION_CPU: t->traced_pid = ev->session_cpu.traced_pid; break;
        case KEV_UNWIND_STATS: {
                struct profile_unwind *u = &t->unwind;
                t->has_unwind = true;
                u->mode = ev->unwind_stats.mode;
                u->stack_copy_bytes = ev->unwind_stats.stack_copy_bytes;
                u->nr_walks = ev->unwind_stats.nr_walks;
                u->nr_fp_chains = ev->unwind_stats.nr_fp_chains;
                u->nr_frames = ev->unwind_stats.nr_frames;
                u->nr_fp_frames = ev->unwind_stats.nr_fp_frames;
                memcpy(u->nr_by_stop, ev->unwind_stats.nr_by_stop, sizeof(u->nr_by_stop));
                break;
        }
        case KEV_RECORDS_NOT_SHOWN:
                if (t->nr_not_shown < sizeof(t->not_shown) / sizeof(t->not_shown[0])) {
                        struct profile_not_shown *n = &t->not_shown[t->nr_not_shown++];
                        n->type = ev->records_not_shown.type;
                        n->count = ev->records_not_shown.count;
                        snprintf(n->name, sizeof(n->name), "%s", ev->records_not_shown.name);
                }
                break;
        case KEV_EVENTS_LOST:
                if (ev->events_lost.reason == 1)
                        t->nr_lost_records += ev->events_lost.count;
                else if (ev->events_lost.reason == 2)
                        t->nr_lost_total = ev->events_lost.count;
                break;
        case KEV_GROUP_MASK:
                if (!ev->group_mask.is_previous)
                        memcpy(t->masks, ev->group_mask.masks, sizeof(t->masks));
                break;
        case KEV_PROFILE_INTERVAL:
                if (ev->profile_interval.source == 0)
                        t->interval_100ns = ev->profile_interval.new_interval_100ns;
                remember_source(t, ev->profile_interval.source, ev->profile_interval.source_name,
                                ev->profile_interval.new_interval_100ns);
                break;
        case KEV_STACK: t->nr_stacks++; break;
        case KEV_SAMPLE:
        case KEV_PMC_SAMPLE:
                t->last_sample_timestamp[ev->cpu % 64] = ev->timestamp;
                t->last_sample_source[ev->cpu % 64] =
                        ev->type == KEV_SAMPLE ? 0 : ev->pmc_sample.source;
                break;
        case KEV_LBR: lbr_seen(t, ev); break;
        default: break;
        }
        if (ev->type == KEV_STACK)
                stack_hook_seen(t, ev);
        else if (ev->type != KEV_STACK_KEY) {
                t->last_type = ev->type;
                t->last_timestamp = ev->timestamp;
        }
}

static void apply_zoom(struct profile *p);

static bool is_in_window(const struct profile *p, int64_t time_ns)
{
        return !p->has_window || (time_ns >= p->window_from_ns && time_ns < p->window_to_ns);
}

/* Whether the hot functions, the call tree or the sample sink read ev: a switch storm's
   switches and wake-ups, most of its events, are kept from them, and so are its switches' and
   wake-ups' stacks while no sample waits for its own (the sink takes every stack). */
static bool is_read_by_samples(const struct profile *p, const struct kevent *ev)
{
        if ((unsigned)ev->type >= 64 || !((HOT_EVENT_KINDS | CALLTREE_EVENT_KINDS) >> ev->type & 1))
                return false;
        return ev->type != KEV_STACK || p->sample_sink || hot_waits_for_stack(p->hot) ||
               (p->tree && calltree_waits_for_stack(p->tree));
}

/* The hot functions and the call tree: a sample and then its whole stack (stack_join). What
   the samples need to know of the trace (a process that ended) comes whatever its time. */
static void to_samples(void *ctx, const struct kevent *ev)
{
        struct profile *p = ctx;
        bool is_sample = ev->type == KEV_SAMPLE || ev->type == KEV_PMC_SAMPLE;
        if ((is_sample || ev->type == KEV_STACK) && !is_in_window(p, ev->time_ns))
                return;
        /* the zoom: one process's samples (the switches and edges filter themselves) */
        uint32_t zoom = p->zoom_pid ? p->zoom_pid : p->scope_pid;
        if (zoom && is_sample && ev->pid != zoom)
                return;
        hot_event(p->hot, ev);
        if (p->tree) {
                /* a stack's leaf given by the hot functions (leaf_to_tree) */
                calltree_event(p->tree, ev);
        }
        if (p->sample_sink && (is_sample || ev->type == KEV_STACK))
                p->sample_sink(p->sample_sink_ctx, ev);
}

/* The hot functions' hook (hot_set_leaf_hook): a stack's sampled place as they found it (its
   function, or its module and address) handed to the call tree, whose leaf is then not located
   and resolved again, and the tree's memo of the stack asked of memory while the hot functions
   count its callers. */
static void leaf_to_tree(void *ctx, const struct kevent *ev)
{
        struct profile *p = ctx;
        uint64_t ip, rel;
        uint32_t pid, module, function;
        if (!hot_stack_leaf(p->hot, ev, &ip, &pid, &module, &function, &rel))
                return;
        calltree_leaf(p->tree, ev->stack.event_timestamp, ip, pid, module, function, rel);
        uint64_t frames_hash;
        uint32_t nr;
        if (hot_stack_callers(p->hot, ev, &frames_hash, &nr))
                calltree_leaf_callers(p->tree, frames_hash, nr);
        calltree_prefetch_stack(p->tree, ev);
}

void profile_set_sample_sink(struct profile *p, profile_sample_fn fn, void *ctx)
{
        p->sample_sink = fn;
        p->sample_sink_ctx = ctx;
}

void profile_prefetch_sample(const struct profile *p, uint32_t pid, uint64_t ip, bool is_near)
{
        hot_prefetch_sample(p->hot, pid, ip, is_near);
}

/* Before the store takes an event that takes a process's mappings away (model/remap.h): the
   samples that wait in that process (for their stacks' parts in the join, or for a stack that
   did not come in the call tree and the sample sink) are placed where they were taken. The hot
   functions place a sample as it comes. */
static void before_remap(struct profile *p, const struct kevent *ev)
{
        uint32_t pid = model_remapped_pid(ev);
        if (pid == UINT32_MAX)
                return;
        if (!stack_join_is_idle(p->join))
                stack_join_before(p->join, ev, to_samples, p);
        if (p->tree)
                calltree_before_remap(p->tree, pid);
        if (p->sample_sink)
                p->sample_sink(p->sample_sink_ctx, ev);
}

void profile_event(struct profile *p, const struct kevent *ev)
{
        trace_event(&p->trace, ev);
        if (p->has_window && is_in_window(p, ev->time_ns) &&
            !(ev->type == KEV_STACK && ev->stack.is_from_key))
                p->trace.nr_window_events++;
        if (p->trace.traced_pid != p->scope_pid) {
                /* a -p recording: its other processes' threads are only the other side of the
                   traced one's switches, and get no rows of their own */
                p->scope_pid = p->trace.traced_pid;
                apply_zoom(p);
        }
        if (ev->type == KEV_PROCESS || ev->type == KEV_IMAGE)
                before_remap(p, ev);
        sym_feed_event(p->feed, ev);
        if (ev->type == KEV_SESSION_CPU)
                stack_join_set_whole(p->join, true); /* etwtop's trace: whole stacks */
        /* the samples and their stacks, joined (Windows writes a stack in parts) */
        if (!stack_join_is_idle(p->join))
                stack_join_event(p->join, ev, to_samples, p);
        else if (is_read_by_samples(p, ev))
                to_samples(p, ev); /* as stack_join_event would, a call through a pointer less */
        /* every event: the threads and processes a window's switches name come before it (the
           filters' time range counts the window's alone) */
        branches_event(p->branches, ev);
        switches_event(p->switches, ev);
        uint32_t zoom = p->zoom_pid ? p->zoom_pid : p->scope_pid;
        if (zoom && ev->pid != zoom)
                return;
        if (!is_in_window(p, ev->time_ns))
                return; /* the events table and the event sink (csv-events): the window's own */
        events_table_add(p->events, ev);
        if (p->event_sink && !(ev->type == KEV_STACK && ev->stack.is_from_key))
                p->event_sink(p->event_sink_ctx, ev);
}

void profile_set_event_sink(struct profile *p, profile_sample_fn fn, void *ctx)
{
        p->event_sink = fn;
        p->event_sink_ctx = ctx;
}

void profile_zero(struct profile *p)
{
        hot_reset(p->hot);
        if (p->tree)
                calltree_reset(p->tree);
        branches_reset(p->branches);
        switches_zero(p->switches);
        events_table_reset(p->events);
}

void profile_restart(struct profile *p)
{
        stack_join_reset(p->join);
        hot_reset(p->hot);
        if (p->tree)
                calltree_reset(p->tree);
        branches_reset(p->branches);
        switches_reset(p->switches);
        events_table_reset(p->events);
        uint64_t lost_session = p->trace.nr_lost_session;
        struct profile_source_label *names = p->trace.source_names;
        uint32_t cap_names = p->trace.cap_source_names;
        memset(&p->trace, 0, sizeof(p->trace));
        p->trace.nr_lost_session = lost_session;
        p->trace.source_names = names; /* kept for the next reading, emptied */
        p->trace.cap_source_names = cap_names;
}

void profile_zoom(struct profile *p, uint32_t pid)
{
        p->zoom_pid = pid;
        apply_zoom(p);
}

/* What counts: the zoom in force (the one asked for, or a -p recording's process) and the time
   window. */
static void filter_of(const struct profile *p, struct agg_filter *f)
{
        uint32_t pid = p->zoom_pid ? p->zoom_pid : p->scope_pid;
        agg_filter_init(f);
        if (pid)
                agg_filter_add_pid(f, pid);
        if (p->has_window)
                agg_filter_set_time_range(f, p->window_from_ns, p->window_to_ns);
}

static void apply_zoom(struct profile *p)
{
        struct agg_filter f;
        filter_of(p, &f);
        hot_reset(p->hot);
        hot_set_filter(p->hot, &f);
        if (p->tree)
                calltree_reset(p->tree);
        branches_reset(p->branches);
        branches_set_filter(p->branches, &f);
        switches_zero(p->switches);
        switches_set_filter(p->switches, &f);
        events_table_reset(p->events);
}

void profile_set_window(struct profile *p, bool is_on, int64_t from_ns, int64_t to_ns)
{
        p->has_window = is_on;
        p->window_from_ns = from_ns;
        p->window_to_ns = to_ns;
        struct agg_filter f;
        filter_of(p, &f);
        hot_set_filter(p->hot, &f);
        branches_set_filter(p->branches, &f);
        switches_set_filter(p->switches, &f);
}

void profile_set_mode(struct profile *p, enum agg_mode mode)
{
        p->agg.mode = mode;
        hot_set_settings(p->hot, &p->agg);
        branches_set_settings(p->branches, &p->agg);
        switches_set_settings(p->switches, &p->agg);
}

void profile_refresh(struct profile *p)
{
        hot_refresh(p->hot);
        branches_refresh(p->branches);
        switches_refresh(p->switches);
        if (p->tree)
                calltree_refresh(p->tree, &p->agg);
        /* The tables the step rebuilt are freed as new ones are made, many in huge-page-aligned
           blocks that glibc keeps but cannot always reuse: without giving their pages back, a
           live session's memory grew by hundreds of MB of free heap under churn (bench/rss.sh).
           Every 5 s at most, and only a heap with MEM_POLICY_TRIM_MIN free: the pages given
           back were faulted in again by the next refreshes (a page fault is dear on a virtual
           machine), and a screen's own refresh frees and makes again 1 to 2 MiB. */
        uint64_t now = now_ns();
        if (now - p->trimmed_ns >= 5000000000ull) {
                mem_policy_trim();
                p->trimmed_ns = now;
        }
}

void profile_upkeep(struct profile *p)
{
        hot_upkeep(p->hot);
        switches_upkeep(p->switches);
}

bool profile_is_crowded(const struct profile *p)
{
        return hot_is_crowded(p->hot);
}

void profile_catch_up(struct profile *p)
{
        if (p->tree)
                calltree_catch_up(p->tree);
        switches_settle(p->switches);
}

void profile_settle(struct profile *p)
{
        switches_refresh(p->switches);
}

void profile_end(struct profile *p)
{
        if (sym_feed_end(p->feed)) { /* a recording cut short: the running kernel's symbols */
                hot_kernel_moved(p->hot);
                if (p->tree)
                        calltree_kernel_moved(p->tree);
        }
        stack_join_flush(p->join, to_samples, p);
        /* the samples whose stacks never came, which the looks while it was read left waiting */
        hot_samples_end(p->hot);
        if (p->tree)
                calltree_samples_end(p->tree);
        profile_settle(p);
        hot_want_unplaced(p->hot); /* the images a trace names at its end */
}

void profile_caps(const struct profile *p, struct profile_caps *out)
{
        struct switches_caps sc;
        struct hot_caps hc;
        switches_caps(p->switches, &sc);
        hot_caps(p->hot, &hc);
        *out = (struct profile_caps){.nr_threads_folded = sc.nr_threads_folded,
                                     .nr_switch_no_room = sc.nr_no_room,
                                     .nr_places_folded = hc.nr_places_folded,
                                     .nr_unnamed_folded = hc.nr_unnamed_folded,
                                     .nr_samples_no_room = hc.nr_samples_no_room,
                                     .nr_stacks_cut = p->tree ? calltree_nr_cut(p->tree) : 0,
                                     .nr_nodes_evicted = p->tree ? calltree_nr_evicted(p->tree) : 0,
                                     .nr_edges_no_room = branches_nr_other(p->branches)};
}

void profile_set_lost_session(struct profile *p, uint64_t nr)
{
        p->trace.nr_lost_session = nr;
}

uint64_t profile_nr_lost(const struct profile *p)
{
        const struct profile_trace *t = &p->trace;
        uint64_t n = t->nr_lost_header;
        const uint64_t more[] = {t->nr_lost_records, t->nr_lost_total, t->nr_lost_session};
        for (size_t i = 0; i < sizeof(more) / sizeof(more[0]); i++)
                n = more[i] > n ? more[i] : n;
        return n;
}

/* to - from, 0 when to is not after from, INT64_MAX past it (a damaged record's time is
   anywhere in 64 bits: the difference of two may not fit them) */
static int64_t span_between(int64_t from, int64_t to)
{
        if (to <= from)
                return 0;
        uint64_t d = (uint64_t)to - (uint64_t)from;
        return d > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)d;
}

int64_t profile_span_ns(const struct profile *p)
{
        const struct profile_trace *t = &p->trace;
        if (!t->has_time)
                return 0;
        if (!p->has_window)
                return span_between(t->first_ns, t->last_ns);
        int64_t from = p->window_from_ns > t->first_ns ? p->window_from_ns : t->first_ns;
        int64_t to = p->window_to_ns < t->last_ns ? p->window_to_ns : t->last_ns;
        return span_between(from, to);
}

const char *profile_source_name(const struct profile *p, uint16_t source, char *buf, size_t size)
{
        if (source == HOT_SOURCE_TIMER || source == 0)
                return "Timer";
        const char *name = kevent_pmc_source_name(source);
        if (name)
                return name;
        for (uint32_t i = 0; i < p->trace.nr_source_names; i++)
                if (p->trace.source_names[i].source == source && p->trace.source_names[i].name[0])
                        return p->trace.source_names[i].name;
        snprintf(buf, size, "PMC source %u", (unsigned)source);
        return buf;
}

uint64_t profile_nr_events(const struct profile *p)
{
        return p->has_window ? p->trace.nr_window_events : p->trace.nr_events;
}

uint32_t profile_source_interval(const struct profile *p, uint16_t source)
{
        for (uint32_t i = 0; i < p->trace.nr_source_names; i++)
                if (p->trace.source_names[i].source == source)
                        return p->trace.source_names[i].interval;
        return 0;
}
