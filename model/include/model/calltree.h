/* SPDX-License-Identifier: MIT */
/* calltree.h: the call tree of sampled stacks, both ways: top-down (from the outermost frame to
   the sampled function; while a view asks for it, calltree_want_top_down) and callers (from the
   sampled function out to its callers), the callers of every process's samples and, when a view
   asks for them (calltree_want), of each process's and each thread's. Frames are named when they
   are inserted (functions merge; frames whose module has no symbols yet keep their module+offset).
   Memory-bounded: when a stack would not fit in max_nodes, the coldest nodes are evicted down to
   half of it (the fewest samples through them lately, the quarter of the cap with the most samples
   kept: the top rows' callers stay); a tree too small for that cuts the stack. Counts decay or
   start over with the aggregation mode. Frames not named yet are looked up again when the symbol
   store changes; of those no image held, only while their process runs and, live, the newest
   CALLTREE_UNNAMED_MAX: the cost of a look does not grow with the processes that came and went
   (a trace read keeps them all: its images may come last, in the rundown at its end). */
#ifndef ETWTOP_MODEL_CALLTREE_H
#define ETWTOP_MODEL_CALLTREE_H

#include <stdbool.h>
#include <stdint.h>

#include "kevent.h"
#include "model/aggregate.h"
#include "symbols/sym_types.h"

struct sym_store;

struct calltree;

#define CALLTREE_UNNAMED_MAX 16384u

struct calltree_row {
        uint32_t node; /* to ask for its children */
        uint32_t module;
        uint32_t function; /* interned name, 0: not resolved (rel says where) */
        uint64_t rel;
        uint64_t count; /* samples through this node */
        uint64_t self;  /* samples that ended here (top-down) or started here (callers) */
        bool has_children;
};

/* store: borrowed. source: the KPROFILE_SOURCE whose samples are counted (0: the timer). */
struct calltree *calltree_new(struct sym_store *store, uint32_t max_nodes, uint16_t source);
void calltree_free(struct calltree *t);
void calltree_reset(struct calltree *t);

/* Takes KEV_SAMPLE, KEV_PMC_SAMPLE, KEV_STACK and the End of a KEV_PROCESS; ignores the
   rest. */
void calltree_event(struct calltree *t, const struct kevent *ev);
/* The place of the sample at ip of process pid whose stack (at timestamp) comes next, as
   another model found it (hot_stack_leaf): its function (module, function), or where none is
   named its module and address (module, rel; function 0). That stack's leaf is keyed by it,
   not located and resolved again. Only a stack of that sample takes it. */
void calltree_leaf(struct calltree *t, uint64_t timestamp, uint64_t ip, uint32_t pid,
                   uint32_t module, uint32_t function, uint64_t rel);
/* With calltree_leaf (after it): the hash_frames of that stack's callers, its nr frames after
   the sampled address, as another model hashed them (hot_stack_callers); used where those are
   the frames the stack is counted by, so they are not hashed twice. */
void calltree_leaf_callers(struct calltree *t, uint64_t frames_hash, uint32_t nr);
/* Stack ev, which calltree_event takes next, looked up ahead: its callers' hash kept for it and
   its memo's slots asked of memory (after calltree_leaf, where its leaf is given), while the
   caller does other work (hot_set_leaf_hook). Counts nothing. */
void calltree_prefetch_stack(struct calltree *t, const struct kevent *ev);
/* The kinds calltree_event reads: those above, and the ones that move a process's addresses
   (its memos hold good while they do not come). It does nothing with any other kind, so a
   caller may keep those from it. */
#define CALLTREE_EVENT_KINDS                                                                       \
        (1ull << KEV_SAMPLE | 1ull << KEV_PMC_SAMPLE | 1ull << KEV_STACK | 1ull << KEV_PROCESS |   \
         1ull << KEV_IMAGE | 1ull << KEV_IMAGE_IDENTITY | 1ull << KEV_DBG_ID |                     \
         1ull << KEV_CLR_MODULE | 1ull << KEV_CLR_METHOD | 1ull << KEV_KERNEL_SYMBOL)

/* Whether a sample waits for its stack: with none, calltree_event does nothing with a stack
   (a switch's or a wake-up's), and a caller may keep it away. */
bool calltree_waits_for_stack(const struct calltree *t);
uint64_t calltree_nr_samples(const struct calltree *t);
uint32_t calltree_nr_nodes(const struct calltree *t);
/* Stacks cut short by a full tree (max_nodes) since the tree last started over. */
uint64_t calltree_nr_cut(const struct calltree *t);
/* Nodes evicted to make room since the tree last started over (their samples still count in
   the nodes above them). */
uint64_t calltree_nr_evicted(const struct calltree *t);
/* Stacks whose frames were looked up and walked down the trees (no memo of them held): what a
   stack seen again costs, the cost tests and bench/ watch. */
uint64_t calltree_nr_walks(const struct calltree *t);
/* Frames of those walks (and samples' addresses) located and named through the symbol store;
   the others came from the key memo (calltree_impl.h): what a new stack over known code costs. */
uint64_t calltree_nr_frames_located(const struct calltree *t);
/* Nodes of no image located again by the looks for names (a node whose process's addresses
   stayed since the last look is not, nor, live, one whose process had no JIT map this look). */
uint64_t calltree_nr_unplaced_located(const struct calltree *t);

/* The refresh step of the aggregation mode s: decaying, every count (settled) decays and the
   nodes that fall to nothing go; zeroed, the tree starts over (calltree_reset); cumulative,
   nothing. */
void calltree_refresh(struct calltree *t, const struct agg_settings *s);

/* Brings the tree up to what came: live, the samples whose stacks have not come count (their
   address alone; a trace read keeps them waiting: calltree_samples_end); functions named since
   merge. calltree_children(0) does it first; the loop does it before the views read the tree
   (profile_catch_up). The memos' counts settle where counts are read (calltree_children,
   calltree_nr_samples_top_down), not here: walking every new stack's path to the root at each
   refresh was a twentieth of a live screen's CPU while no view showed the tree. */
void calltree_catch_up(struct calltree *t);
/* The trace's end: the samples still waiting for a stack count, their address alone. */
void calltree_samples_end(struct calltree *t);
/* As hot_kernel_moved, for the tree's nodes. */
void calltree_kernel_moved(struct calltree *t);
/* Before an event takes pid's mappings away (model/remap.h): its samples whose stacks did not
   come count now, where they were taken. */
void calltree_before_remap(struct calltree *t, uint32_t pid);

/* The children of node (0: the root) in one tree, largest count first. The array belongs to
   t until the next call. */
uint32_t calltree_children(struct calltree *t, bool is_callers, uint32_t node,
                           const struct calltree_row **rows);
bool calltree_has_children(const struct calltree *t, uint32_t node);
/* Whose samples a callers tree counts: every process's, one process's, one thread's. */
enum calltree_owner { CALLTREE_ALL, CALLTREE_PROCESS, CALLTREE_THREAD };

/* The callers trees by owner counted from now on: by CALLTREE_PROCESS the process's, by
   CALLTREE_THREAD the process's and the thread's, by CALLTREE_ALL neither (every process's is
   always counted; the top-down while calltree_want_top_down asks for it). A view asks for what its
   rows show: each tree costs a walk and nodes for every new stack. A tree no longer asked for goes;
   one asked for anew starts empty and counts the samples from then on (calltree_counts_all says so)
   until the tree starts over (calltree_reset: a zero, a zoom, a replay read again). */
void calltree_want(struct calltree *t, enum calltree_owner by);
/* The top-down tree counted from now on (is_wanted), or no longer (it goes): its one reader
   is the view of it, and it costs a walk and nodes for every new stack. Counted when the tree
   is made; asked for anew, it starts empty and counts the samples from then on
   (calltree_top_down_counts_all says so) until the tree starts over (calltree_reset). */
void calltree_want_top_down(struct calltree *t, bool is_wanted);
/* The top-down tree counted always, whatever calltree_want_top_down asks: a recording's (a
   replay would read its file again for it, where the store then names some frames otherwise;
   it costs no live CPU there). */
void calltree_keep_top_down(struct calltree *t);
/* Whether the top-down tree counts every sample the tree does; false: not counted, or only the
   samples after *since_ns (may be NULL). */
bool calltree_top_down_counts_all(const struct calltree *t, int64_t *since_ns);
/* The samples the top-down tree counts (its root's, settled; 0: not counted). */
uint64_t calltree_nr_samples_top_down(struct calltree *t);
/* Whether the callers by `by` count every sample the tree does (CALLTREE_ALL: always); false:
   not counted, or only the samples after *since_ns (the time of the last sample before they
   began; may be NULL). */
bool calltree_counts_all(const struct calltree *t, enum calltree_owner by, int64_t *since_ns);

/* The callers-tree node of a sampled function (a child of the root) in the tree of by's
   samples (id: the pid or tid; CALLTREE_ALL: not used), or 0. Its callers count only those
   samples, as the hot functions' rows by process or thread do. */
uint32_t calltree_find_function(const struct calltree *t, enum calltree_owner by, uint32_t id,
                                uint32_t module, uint32_t function, uint64_t rel);

#endif
