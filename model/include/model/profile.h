/* SPDX-License-Identifier: MIT */
/* profile.h: the model's one entry: a decoded event goes in and feeds the symbol store's address
   spaces, the hot functions, the call tree, the branch edges and the context switches, with the
   trace's facts (events, lost events, its time span, the settings a recording carries), the zoom
   on one process, a replay's time window, zeroing and the aggregation step at each refresh. The
   live screen, the replay screen, `--replay -b` and the benchmarks all feed it the same way. */
#ifndef ETWTOP_MODEL_PROFILE_H
#define ETWTOP_MODEL_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kevent.h"
#include "model/aggregate.h"
#include "model/branches.h"
#include "model/calltree.h"
#include "model/events_table.h"
#include "model/hot.h"
#include "model/switches.h"
#include "symbols/sym_types.h"

struct profile_options {
        const char *const *symbol_path; /* borrowed for the profile's life */
        uint32_t nr_symbol_path;
        bool is_live;        /* symbols: the running system (kallsyms, perf maps, the vdso) */
        bool is_synchronous; /* symbols load at their first lookup, on the caller's thread */
        bool is_no_demangle; /* names as the files have them (C++ and Rust mangled) */
        void (*log)(void *ctx, const char *message); /* the symbol store's messages */
        void *log_ctx;
        uint32_t max_functions; /* hot functions and call-tree nodes kept (0: as many as come) */
        bool has_call_tree;     /* keep the call tree (the screen's; -b prints no tree) */
};

/* What the events said of the trace itself. */
#define PROFILE_TIMELINE_SLOTS 1024

struct profile_trace {
        uint64_t nr_events;        /* records (a stack rebuilt from a stack key is its record's) */
        uint64_t nr_window_events; /* those in the time window (profile_set_window) */
        int64_t first_ns;          /* the earliest and latest event times (session ns) */
        int64_t last_ns;
        bool has_time;
        char logger_name[1024]; /* the logfile header's (a perf.data's names all its events) */
        uint32_t nr_cpus;
        uint32_t masks[8];       /* the group masks the trace recorded (its last group-mask
                                    event); all 0 when it recorded none */
        uint32_t interval_100ns; /* the timer interval it recorded (0: none) */
        /* the profile sources as the trace's CollectionStart events give them: the name (ETW's,
           or a perf.data event's own: "cycles:u", "raw 0x1c2", a tracepoint's; the views title
           a source ETW names by ETW's name) and the interval (events per sample; the timer's
           in 100 ns) */
        struct profile_source_label {
                uint16_t source;
                char name[256]; /* a perf event's string: 62 bytes and more */
                uint32_t interval;
        } * source_names; /* owned: as many as the trace declares (a perf.data's events) */
        uint32_t nr_source_names, cap_source_names;
        uint64_t nr_stacks;      /* stack events */
        uint16_t stack_hooks[8]; /* the events the trace's stacks belong to (hook ids), as seen */
        uint32_t nr_stack_hooks;
        uint8_t stack_hook_bits; /* those of stack_hooks, a bit a kind (profile.c's hook_of) */
        uint64_t last_timestamp; /* the last event that is not a stack: its time and kind */
        enum kevent_type last_type;
        /* LBR records, and the profile sources of the samples they came with (the sample
           before them with their timestamp; HOT_SOURCE_TIMER for the timer's), as seen */
        uint64_t nr_lbr_records;
        uint16_t lbr_sources[8];
        uint32_t nr_lbr_sources;
        /* the last sample of each CPU (its number modulo 64): its time and source (a live
           session's CPU buffers come one after another: another CPU's samples may come
           between a sample and its LBR record) */
        uint64_t last_sample_timestamp[64];
        uint16_t last_sample_source[64];
        /* lost events, three ways, each missing what another counts: the logfile header's
           count (all a Windows trace has), etwtop's ring overflows (EventsLost reason 1) summed,
           and etwtop's exact total at the stop (reason 2); and what the live session reports */
        uint64_t nr_lost_header, nr_lost_records, nr_lost_total, nr_lost_session;
        /* a perf.data's records that no event stands for (its RecordsNotShown events), by
           type as they came */
        struct profile_not_shown {
                uint32_t type; /* perf's PERF_RECORD_* number, UINT32_MAX: past those */
                uint64_t count;
                char name[24];
        } not_shown[16];
        uint32_t nr_not_shown;
        /* the one process an etwtop -p recording traced (its SessionCpu events; 0: the whole
           system): the views count that process only, as its session did */
        uint32_t traced_pid;
        /* how the session walked user stacks (its last UnwindStats event: counts so far) */
        bool has_unwind;
        struct profile_unwind {
                uint32_t mode; /* 0 frame pointers, 1 DWARF, 2 auto */
                uint32_t stack_copy_bytes;
                uint64_t nr_walks, nr_fp_chains, nr_frames, nr_fp_frames;
                uint64_t nr_by_stop[KEV_NR_UNWIND_STOPS];
        } unwind;
        /* a recording's events over time (the replay's timeline): PROFILE_TIMELINE_SLOTS
           slices of timeline_span_ns / PROFILE_TIMELINE_SLOTS from the trace's start; the span
           is its header's StartTime to EndTime (0: not a file, no timeline), doubled as often
           as events come later (two slices then make one) */
        int64_t timeline_span_ns;
        uint32_t timeline[PROFILE_TIMELINE_SLOTS];
        /* the slice the last event fell in, and its times [from, to) under timeline_span_ns as
           it was then (slice_span_ns; 0: none): the next event most often falls there too */
        int64_t slice_span_ns, slice_from_ns, slice_to_ns;
        uint32_t slice;
};

/* What the hot functions and the call tree count, as they get it: each KEV_SAMPLE or
   KEV_PMC_SAMPLE that passes the zoom and the time window, then its stack (a KEV_STACK with the
   sample's timestamp, whole: its kernel and user parts joined), if it has one. */
typedef void (*profile_sample_fn)(void *ctx, const struct kevent *ev);

/* The model: opaque outside model/ (its fields: model/fields/model/profile_fields.h, for model/
   and its unit tests). */
struct profile;

/* A profile that counts nothing yet. Never fails (memory runs out: abort). */
struct profile *profile_new(const struct profile_options *o);
void profile_free(struct profile *p); /* NULL is fine */

/* The trace writes each stack whole right after its event, as etwtop's converter does (a
   perf.data's conversion; a live session and etwtop's own traces say so themselves): samples
   go on at once rather than wait for parts (stack_join.h). Before its first event. */
void profile_set_whole_stacks(struct profile *p);

/* The one entry: an event, in time order. Its arrays are borrowed until it returns. */
void profile_event(struct profile *p, const struct kevent *ev);
/* A timer sample at ip in process pid a few records ahead, not yet given to profile_event: the
   memory that will count it asked for meanwhile (hot_prefetch_sample: is_near for the next
   record, after a look made when it was further). Changes nothing. */
void profile_prefetch_sample(const struct profile *p, uint32_t pid, uint64_t ip, bool is_near);

/* z: the counts start over; names, the processes' address spaces and the waits under way stay. */
void profile_zero(struct profile *p);
/* A replay read again from its start: every count and fact of the trace start over; the
   symbol store keeps what it loaded (the same file's modules). */
void profile_restart(struct profile *p);
/* Only process pid counts from now on (0: every process); the counts start over. */
void profile_zoom(struct profile *p, uint32_t pid);
/* Another consumer of the samples and stacks the hot functions count (the exports): fn gets
   them from now on (NULL: none), and, before the symbol store takes it, each process or image
   event that takes a process's mappings away (its end, an unload, its pid's new program), to
   place that process's samples whose stacks did not come where they were taken. */
void profile_set_sample_sink(struct profile *p, profile_sample_fn fn, void *ctx);
/* Every event the events table counts (those in the time window and of the zoom's process),
   as it comes, goes to fn too (csv-events); NULL: none. */
void profile_set_event_sink(struct profile *p, profile_sample_fn fn, void *ctx);
/* Only events in [from_ns, to_ns) count (is_on false: all); call profile_restart and feed the
   trace again for the window to apply to what came before. The events outside it still tell
   the model what the trace built before and after it (processes, threads and their names,
   images, stack keys, JIT methods, kernel symbols), as a replay of the whole trace knows it. */
void profile_set_window(struct profile *p, bool is_on, int64_t from_ns, int64_t to_ns);
/* The aggregation mode from now on. */
void profile_set_mode(struct profile *p, enum agg_mode mode);
/* Before the views read the model (the loop, under the model's lock): the samples still waiting
   in the call tree count and its functions named since merge (calltree_catch_up; its counts
   settle as a view reads them), the switches' open intervals run to the latest event
   (switches_settle). */
void profile_catch_up(struct profile *p);
/* The aggregation step at each refresh of a live view: decay or zero, per the mode (and
   profile_upkeep first). */
void profile_refresh(struct profile *p);
/* The caps' upkeep alone (hot_upkeep, switches_upkeep): what a live session's tables fold as
   processes come and go, no count decayed or zeroed. A live view calls it at least once a
   second (PROFILE_UPKEEP_NS) whatever its refresh interval, paused or not: at a slow refresh the
   places of the processes that ended between two refreshes filled the table, and a third of
   the samples after them went to the other row. */
void profile_upkeep(struct profile *p);
#define PROFILE_UPKEEP_NS 1000000000ll
/* Whether an upkeep may make room now, before its second (hot_is_crowded): then at most every
   PROFILE_UPKEEP_CROWDED_NS. */
bool profile_is_crowded(const struct profile *p);
#define PROFILE_UPKEEP_CROWDED_NS 100000000ll
/* A trace read to its end: the samples still waiting for a part of their stack count with
   what they have, and profile_settle. */
void profile_end(struct profile *p);
/* A trace being read: the waits and idle periods still open run to its latest event. */
void profile_settle(struct profile *p);

/* What the model's caps (doc/etwtop.1, MEMORY) folded or counted without a row of its own
   since the counts last started over: what the header says, so that a cap never drops data
   silently. */
struct profile_caps {
        uint64_t nr_threads_folded;  /* exited threads folded into [other threads] */
        uint64_t nr_switch_no_room;  /* switch events past the switch tables' caps */
        uint64_t nr_places_folded;   /* unplaced addresses folded into the functions' [other] */
        uint64_t nr_unnamed_folded;  /* unnamed addresses folded into their module's [other] */
        uint64_t nr_samples_no_room; /* samples past the hot functions' cap, in [other] */
        uint64_t nr_stacks_cut;      /* stacks cut short by the full call tree */
        uint64_t nr_nodes_evicted;   /* the call tree's coldest nodes, evicted for room */
        uint64_t nr_edges_no_room;   /* branch edges past their cap, in the other row */
};
void profile_caps(const struct profile *p, struct profile_caps *out);

/* What a live session reports it lost (profile_trace's nr_lost_session), as it says it. */
void profile_set_lost_session(struct profile *p, uint64_t nr);
/* The events lost: the largest of the counts, each of which misses some. */
uint64_t profile_nr_lost(const struct profile *p);
/* The trace's span in ns (0 before two events); with a time window, the part of it the window
   covers. */
int64_t profile_span_ns(const struct profile *p);
/* The events counted: the trace's, or those in the time window. */
uint64_t profile_nr_events(const struct profile *p);
/* A profile source's name: "Timer", ETW's name of a KPROFILE_SOURCE (TotalCycles,
   InstructionRetired, LLCReference ...), else the name the trace's CollectionStart gave it,
   else "PMC source N" (written to buf). */
const char *profile_source_name(const struct profile *p, uint16_t source, char *buf, size_t size);
/* A source's interval as its CollectionStart gave it (0: none came). */
uint32_t profile_source_interval(const struct profile *p, uint16_t source);

/* ---- what the views read (profile_read.c): the model's parts and its names ---- */

/* The parts, owned by the profile, to query (their queries keep caches: the caller holds the
   model's lock). profile_calltree is NULL without has_call_tree. */
struct hot *profile_hot(const struct profile *p);
struct calltree *profile_calltree(const struct profile *p);
struct branches *profile_branches(const struct profile *p);
struct switches *profile_switches(const struct profile *p);
struct events_table *profile_events(const struct profile *p);
/* What the events said of the trace; valid as long as the profile. */
const struct profile_trace *profile_trace(const struct profile *p);
/* The symbol store that names the rows, owned by the profile: for src/ (annotate, the exports,
   the symbols' progress); ui/ reads names through the functions below. */
struct sym_store;
struct sym_store *profile_store(const struct profile *p);
/* The process the views count (profile_zoom; 0: every process). */
uint32_t profile_zoom_pid(const struct profile *p);
/* Whether a time window is on (profile_set_window), and where: [*from_ns, *to_ns) (0, 0 when
   off; either pointer may be NULL). */
bool profile_window(const struct profile *p, int64_t *from_ns, int64_t *to_ns);

/* An interned name (a function's, a file's: the ids the rows carry), "" for 0; valid as long as
   the profile. */
const char *profile_name(const struct profile *p, uint32_t id);
/* A module's name, "[unknown]" for none; valid as long as the profile. */
const char *profile_module_name(struct profile *p, uint32_t module);
/* A place in the code as the views show it: "module!function+0x1a" (function: an interned
   name, 0: none), "module+0x1a2b", "0x1a2b". */
void profile_place_text(struct profile *p, struct sym_loc where, uint32_t function, uint64_t offset,
                        char *buf, size_t size);

/* A place as the symbol store writes it: "libc.so.6!memcpy+0x10", "libc.so.6+0x1a2b",
   "0x7f0012345678"; returns its length. */
size_t profile_loc_text(struct profile *p, struct sym_loc loc, char *buf, size_t size);
/* What a report says of a module's symbols: where its names came from ("N from FILE"), or what
   would give them ("PDB NAME {GUID}AGE", "build-id HEX"); "" when nothing is known (module 0
   too). */
void profile_module_symbols_text(struct profile *p, uint32_t module, char *buf, size_t size);
struct sym_module_info;
/* The same of a module's information, as the symbol store gives it. */
void profile_module_info_text(const struct sym_module_info *info, char *buf, size_t size);

#ifdef ETWTOP_MODEL_FIELDS /* the model's unit tests: struct profile's fields */
#include "model/profile_fields.h"
#endif

#endif
