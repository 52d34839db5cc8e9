/* SPDX-License-Identifier: MIT */
/* calltree.h: the call tree of sampled stacks, both ways: top-down (from the outermost frame to
   the sampled function) and callers (from the sampled function out to its callers). Frames are
   named when they are inserted (functions merge; frames whose module has no symbols yet keep
   their module+offset). Memory-bounded: past max_nodes, deeper frames are cut. Frames not named
   yet are looked up again when the symbol store changes; of those no image held, only while
   their process runs and the newest CALLTREE_UNNAMED_MAX: the cost of a look does not grow with
   the processes that came and went. */
#ifndef ETWTOP_MODEL_CALLTREE_H
#define ETWTOP_MODEL_CALLTREE_H

#include <stdbool.h>
#include <stdint.h>

#include "kevent.h"
#include "symbols/symbols.h"

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

uint64_t calltree_nr_samples(const struct calltree *t);
uint32_t calltree_nr_nodes(const struct calltree *t);
/* Stacks cut short by a full tree (max_nodes) since the tree last started over. */
uint64_t calltree_nr_cut(const struct calltree *t);

/* The children of node (0: the root) in one tree, largest count first. The array belongs to
   t until the next call. */
uint32_t calltree_children(struct calltree *t, bool is_callers, uint32_t node,
                           const struct calltree_row **rows);
bool calltree_has_children(const struct calltree *t, uint32_t node);
/* The callers-tree node of a sampled function (a child of the root), or 0. */
uint32_t calltree_find_function(const struct calltree *t, uint32_t module, uint32_t function,
                                uint64_t rel);

#endif
