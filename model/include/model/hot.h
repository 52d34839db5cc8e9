/* SPDX-License-Identifier: MIT */
/* hot.h: hot functions and modules from sampled events (timer and PMC samples) and their
   stacks: self counts (the sampled address) and total counts (anywhere on the stack), per
   profile source. Addresses are placed at event time (sym_locate) and named when the rows are
   asked for, so symbols that load later still name what was sampled earlier. */
#ifndef ETWTOP_MODEL_HOT_H
#define ETWTOP_MODEL_HOT_H

#include <stdbool.h>
#include <stdint.h>

#include "kevent.h"
#include "model/aggregate.h"
#include "symbols/sym_types.h"

struct sym_store;

#define HOT_SOURCE_TIMER 0u /* KPROFILE_SOURCE ProfileTime: SampledProfile events */

struct hot;

struct hot_row {
        uint16_t source;   /* KPROFILE_SOURCE */
        uint32_t module;   /* symbol-store module id, 0: no image holds the address */
        uint32_t function; /* interned name, 0 when not resolved (rel says where) */
        uint64_t rel;      /* unresolved rows: offset in the module, or the raw address */
        enum sym_state state;
        uint64_t self;  /* samples whose address is here */
        uint64_t total; /* samples with this function anywhere on their stack */
        /* the process: by process, the row's; else the one with the function's heaviest
           place (0: the kernel's idle, or not known) */
        uint32_t pid;
        uint64_t top_self; /* that place's self count */
        uint32_t tid;      /* the thread, as pid is the process */
        /* the function's name (sym_name of function, "" when unnamed): rows that tie on their
           counts are in its order, which is the same in every run (interned ids are not: they
           follow the order names were first asked for) */
        const char *name;
};

enum hot_grouping { HOT_BY_FUNCTION, HOT_BY_PROCESS, HOT_BY_THREAD };

struct hot_module_row {
        uint16_t source;
        uint32_t module;
        uint64_t self;
};

/* Places no image held when they were sampled (module 0) keep their process, to be placed
   when its images come. At each hot_refresh those that have a module by then move to it; those
   of a process that ended (since the refresh before the last), and past HOT_UNPLACED_MAX the
   lightest of the rest, are folded into the "other" row (module 0, rel 0, function 0) with their
   samples: unplaced addresses of processes come and gone neither fill the table nor cost the
   refreshes. */
#define HOT_UNPLACED_MAX 4096u
/* The places of processes that ended stay one by one up to HOT_EXITED_MAX, the heavier first
   (a process's rows in the functions by process or thread); past it, the lighter fold (until
   HOT_EXITED_MAX / 2 are left) into one place per address whose process and thread are AGG_ALL
   (switches_process_name names it SWITCHES_EXITED_NAME), or, for an address with no sample of
   its own (stacks passed through it), per function (at its first byte): the functions' counts
   stay whole, and the table stops growing with the processes that came and went and the code
   they passed through. */
#define HOT_EXITED_MAX 16384u
/* ... or a sixteenth of a smaller table's places (hot_new's max_entries), 64 at least */
#define HOT_EXITED_SHARE 16u
/* On a live view, the addresses of images that name no function there (a stripped library's
   internal functions: each address sampled a row, as perf top makes an entry of each) stay one
   by one up to HOT_UNNAMED_MAX, the heavier first; past it, at an upkeep, the lighter fold
   (until three quarters of it are left) into one place of their module, process and thread
   whose address is HOT_REL_UNNAMED_REST (the functions view's "[other]" of that module), with
   their own samples (its total is its self: the stacks through several of its addresses are
   not told apart). The rows then stop growing with the code a long compile reaches. A trace
   read keeps every address (perf report's rows). */
#define HOT_UNNAMED_MAX 16384u
/* ... or an eighth of a smaller table's places, 64 at least */
#define HOT_UNNAMED_SHARE    8u
#define HOT_REL_UNNAMED_REST UINT64_MAX

/* The looks at the whole table that the exited places' cap took (each process's places are
   found by their own list: a fold of a few ended processes looks at none): what bench/ and
   the cost tests watch. */
uint64_t hot_nr_exited_scans(const struct hot *h);
/* Tests: the ended processes' places found by a look at the whole table at every refresh, as
   before the lists (the rows must be the same either way). */
void hot_set_fold_scanned(struct hot *h, bool is_scanned);
/* Tests (and ETWTOP_MERGE_CHECK=1): each incremental build of the rows (the places counted since
   the last build merged into its rows) checked against a whole one; a difference aborts. */
void hot_set_merge_check(struct hot *h, bool is_checked);
/* The builds of the rows made incrementally, and in whole (tests). */
void hot_nr_builds(const struct hot *h, uint64_t *nr_incremental, uint64_t *nr_whole);
/* The row keys the rows' cache holds, named by places or not yet dropped (tests). */
uint32_t hot_nr_row_keys(const struct hot *h);
/* The places the table holds (tests). */
uint32_t hot_nr_places(const struct hot *h);

/* What the caps did since the counts last started over (hot_caps). */
struct hot_caps {
        uint64_t nr_places_folded;   /* unplaced places folded into the other row */
        uint64_t nr_samples_no_room; /* samples whose place found the table at max_entries */
        uint64_t nr_exited_folded;   /* places of ended processes folded (HOT_EXITED_MAX) */
        uint64_t nr_unnamed_folded;  /* unnamed addresses folded (HOT_UNNAMED_MAX) */
};

/* store: borrowed. max_entries bounds the memory: addresses past it are counted in an
   "other" row rather than kept one by one. */
struct hot *hot_new(struct sym_store *store, uint32_t max_entries);
void hot_free(struct hot *h);
void hot_reset(struct hot *h);

/* Takes KEV_SAMPLE, KEV_PMC_SAMPLE, KEV_STACK and the End of a KEV_PROCESS; ignores the
   rest. */
void hot_event(struct hot *h, const struct kevent *ev);
/* The kinds hot_event reads: those above, and the ones that move a process's addresses (its
   memos hold good while they do not come). It does nothing with any other kind, so a caller
   may keep those from it (a switch storm's switches and wake-ups are most of its events). */
#define HOT_EVENT_KINDS                                                                            \
        (1ull << KEV_SAMPLE | 1ull << KEV_PMC_SAMPLE | 1ull << KEV_STACK | 1ull << KEV_PROCESS |   \
         1ull << KEV_IMAGE | 1ull << KEV_IMAGE_IDENTITY | 1ull << KEV_DBG_ID |                     \
         1ull << KEV_CLR_MODULE | 1ull << KEV_CLR_METHOD | 1ull << KEV_KERNEL_SYMBOL |             \
         1ull << KEV_PROFILE_INTERVAL)

/* The aggregation mode (aggregate.h), applied at each hot_refresh. The object starts
   cumulative. */
void hot_set_settings(struct hot *h, const struct agg_settings *settings);
/* Only samples that pass f (their pid, tid and time) are counted from now on, with their
   stacks; what was counted stays (hot_reset to start over). f is copied. */
void hot_set_filter(struct hot *h, const struct agg_filter *f);
/* Rows of one function per process (perf top --sort comm,sym) or per thread (--sort tid,sym),
   or one row per function with its heaviest process and thread (the default); from the next
   hot_functions on. */
void hot_set_grouping(struct hot *h, enum hot_grouping grouping);
enum hot_grouping hot_grouping_of(const struct hot *h);
/* What a place's key holds besides its address, as the groupings that will be asked for need:
   HOT_BY_THREAD (the default: the screen switches groupings as it runs) keeps the process and
   the thread; HOT_BY_PROCESS the process alone (the thread AGG_ALL); HOT_BY_FUNCTION neither
   (AGG_ALL both, but for an address no image holds, which keeps its process to be placed by
   it). A report that asks one grouping keys by it: the places of a storm of short processes are
   then one per address, not one per process, and every row and line counts the same. Rows of a
   grouping the keys lack give AGG_ALL for the process or thread. Before the first sample. */
void hot_set_place_keys(struct hot *h, enum hot_grouping widest);
/* Rows per process (HOT_BY_PROCESS) of the process key(ctx, pid) gives rather than of each pid:
   a report's --sort comm,sym gives the first pid of each process name, so that the processes
   of one name are one row per function, as perf report's comm key merges them. NULL: per pid
   (the screen's). Before the first rows are built (the rows' keys are kept from build to
   build). */
void hot_set_process_key(struct hot *h, uint32_t (*key)(void *ctx, uint32_t pid), void *ctx);
/* perf's comm (a report's --sort comm,sym): each sample's thread keyed, as the sample comes, by
   key(ctx, pid, tid): an id of the thread's name then (its own, else its process's: worker
   threads that named themselves apart, a process's samples before its exec under its old
   name), that name(ctx, id, buf, size) gives later. The places are keyed per thread, and the
   rows per thread (HOT_BY_THREAD) are then rows per comm, their tid its id. NULL: none. Before
   the first sample. */
void hot_set_comm_key(struct hot *h, uint32_t (*key)(void *ctx, uint32_t pid, uint32_t tid),
                      void (*name)(void *ctx, uint32_t id, char *buf, size_t size), void *ctx);
/* A comm id's name (hot_set_comm_key) into buf; false when h has no comm key. */
bool hot_comm_name(const struct hot *h, uint32_t id, char *buf, size_t size);
/* The refresh tick: places what has a module now and folds unplaced places past the cap
   (above); then decays or zeroes the counts by the mode, dropping the places that fell under
   the threshold (cumulative: no counts change). */
/* Asks the symbol store for the modules that hold the unplaced places now (a trace that
   describes its images only at its end): their rows name them once they have loaded. */
void hot_want_unplaced(struct hot *h);
/* The kernel's addresses may place otherwise from here (its symbols came without an event:
   sym_feed_end): what was looked at before is looked at again, as after a KernelSymbol. */
void hot_kernel_moved(struct hot *h);
/* The caps' upkeep without the aggregation step: the unplaced places that have a module now
   move to it, those of processes that ended fold, and past their cap the places of ended
   processes fold (HOT_UNPLACED_MAX, HOT_EXITED_MAX). The counts stay as they are (no decay, no
   zeroing), so a caller may run it on the events' clock, whatever the refresh interval, and
   while the display is paused: a table that waited for a slow refresh filled with the places of
   the processes that ended meanwhile, and the samples after them went to the other row. */
void hot_upkeep(struct hot *h);
/* Whether the table is three quarters full and processes have ended since the last upkeep: an
   upkeep may make room now (a backlog of events decoded at once can fill the table within the
   second between two upkeeps). */
bool hot_is_crowded(const struct hot *h);
/* hot_upkeep, then the aggregation step of the mode (decaying, zeroed). */
void hot_refresh(struct hot *h);
/* The trace's end: the samples still waiting for a stack count as they are (a trace read keeps
   them waiting through every look at the rows: the stack may come next). */
void hot_samples_end(struct hot *h);
/* What the caps folded or left without a place of its own. */
void hot_caps(const struct hot *h, struct hot_caps *out);

uint64_t hot_nr_samples(const struct hot *h, uint16_t source);
/* The samples whose stack came (the stacks of other events, CSwitch, ReadyThread, not counted). */
uint64_t hot_nr_stacks(const struct hot *h);
/* Whether a sample waits for its stack: with none, hot_event does nothing with a stack (a
   switch's or a wake-up's), and a caller may keep it away. */
bool hot_waits_for_stack(const struct hot *h);
/* The sample whose stack ev is, as hot_event just counted it: its address ip in process pid,
   and its place, where that was known: the function it is in (module, function; *rel 0), or
   where no function is named there (a stripped program) its module and address in it (module,
   *rel; function 0), or, in no image, the address (*rel; module and function 0); false
   otherwise. What a call tree keys the sample's leaf by (calltree_leaf), without locating it
   again. */
bool hot_stack_leaf(const struct hot *h, const struct kevent *ev, uint64_t *ip, uint32_t *pid,
                    uint32_t *module, uint32_t *function, uint64_t *rel);
/* With hot_stack_leaf: the hash_frames of the stack's callers as hot_event hashed them, the nr
   frames after the first (at most 254), for a call tree's memo of the same frames
   (calltree_leaf_callers). False where hot_stack_leaf is. */
bool hot_stack_callers(const struct hot *h, const struct kevent *ev, uint64_t *frames_hash,
                       uint32_t *nr);
/* A timer sample at ip in process pid still to come (a look ahead at the records): its memory
   asked for, so that it is there when hot_event counts it. Far (two records or more ahead): the
   frame memo's slot of ip; near (the next record, the far look made before): the place that
   slot names. Nothing counted, nothing changed. */
void hot_prefetch_sample(const struct hot *h, uint32_t pid, uint64_t ip, bool is_near);
/* Called by hot_event with a stack as soon as its leaf is known (hot_stack_leaf answers it),
   before the stack's callers are counted: a call tree can look its memo up meanwhile
   (calltree_prefetch_stack). NULL: none. */
typedef void (*hot_leaf_fn)(void *ctx, const struct kevent *ev);
void hot_set_leaf_hook(struct hot *h, hot_leaf_fn fn, void *ctx);
/* Stacks whose callers were looked up (no memo of them held): what a stack seen again costs,
   the cost tests and bench/ watch. */
uint64_t hot_nr_walks(const struct hot *h);
/* Callers' frames of those walks located through the symbol store (the others were found in
   the frame memo, hot_impl.h): what a new stack over known code costs. */
uint64_t hot_nr_frames_located(const struct hot *h);
/* Places' answers asked of the symbol store (the others kept in the place, or in the answer
   memo of another place at the same address, hot_impl.h): what a new thread's places cost. */
uint64_t hot_nr_answers_asked(const struct hot *h);
/* The profile sources sampled: those the trace's CollectionStart events name in their order (a
   perf.data's events' order, as perf report lists them), then the others in order of first
   sample; returns how many (at most max). */
uint32_t hot_sources(const struct hot *h, uint16_t *out, uint32_t max);

/* Functions of one source, named now, sorted by self (or total) count, largest first. The
   array belongs to h until the next call. */
uint32_t hot_functions(struct hot *h, uint16_t source, bool is_by_total,
                       const struct hot_row **rows);
/* The same, only the first max rows in that order (0: all): a report's top rows without
   sorting every function. */
uint32_t hot_top_functions(struct hot *h, uint16_t source, bool is_by_total, uint32_t max,
                           const struct hot_row **rows);
/* hot_functions with the rows grouped as grouping says, whatever hot_set_grouping set: the
   screen's grouping is its own, not the model's. */
uint32_t hot_functions_by(struct hot *h, uint16_t source, enum hot_grouping grouping,
                          bool is_by_total, const struct hot_row **rows);
/* hot_functions_by, only the first max rows in order (0: all), as hot_top_functions. */
uint32_t hot_top_functions_by(struct hot *h, uint16_t source, enum hot_grouping grouping,
                              bool is_by_total, uint32_t max, const struct hot_row **rows);
/* hot_top_functions_by with every row in *rows: the first max in order, the others after them
   in no order (the screen's rows past those it can show). Returns how many rows in all. */
uint32_t hot_top_functions_all_by(struct hot *h, uint16_t source, enum hot_grouping grouping,
                                  bool is_by_total, uint32_t max, const struct hot_row **rows);
/* Modules of one source by self count. */
uint32_t hot_modules(struct hot *h, uint16_t source, const struct hot_module_row **rows);

/* A source line and the samples of one source at its code (self), as WPA's Line Number column
   and perf report --sort srcline count them: the line of the code at each sampled address
   (an inlined function's own line), from the debug information or a Windows module's PDB. */
struct hot_line_row {
        uint32_t module;
        uint32_t function; /* interned: the function (or inlined one) the line is in */
        uint32_t file;     /* interned path */
        uint32_t line;
        uint64_t self;
};

/* The max lines with the most samples of source, by self count; addresses without line
   information are left out. Asks the symbol store for the lines (loaded on first use). */
uint32_t hot_top_lines(struct hot *h, uint16_t source, uint32_t max,
                       const struct hot_line_row **rows);

/* A sampled address of one function and its counts (annotate). */
struct hot_place {
        uint64_t rel;   /* in the module, as sym_loc's */
        uint64_t self;  /* samples whose address is here */
        uint64_t total; /* samples with this address anywhere on their stack */
};

/* The places of source's samples that hot_functions names function (interned, not 0) of module,
   by rel, each address once: the addresses its row's self and total come from. Writes the first
   max to out; returns how many there are. */
uint32_t hot_function_places(struct hot *h, uint16_t source, uint32_t module, uint32_t function,
                             struct hot_place *out, uint32_t max);

#endif
