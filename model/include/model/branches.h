/* SPDX-License-Identifier: MIT */
/* branches.h: hot branch edges from last-branch records (LBR): every entry of a KEV_LBR event
   is one taken branch from -> to. Both ends are placed at event time (sym_locate, under the
   event's process) and named when the rows are asked for, so symbols that load later still
   name what was recorded earlier. Rows group either exact edges (module+offset pairs) or
   function pairs; counts follow the aggregation mode and filter of aggregate.h. */
#ifndef ETWTOP_MODEL_BRANCHES_H
#define ETWTOP_MODEL_BRANCHES_H

#include <stdbool.h>
#include <stdint.h>

#include "kevent.h"
#include "model/aggregate.h"
#include "symbols/sym_types.h"

struct sym_store;

struct branches;

enum branches_group {
        BRANCHES_BY_EDGE = 0, /* one row per (from, to) place pair */
        BRANCHES_BY_FUNCTION, /* one row per (from function, to function); unresolved ends by
                                 their module+offset */
};

/* One end of an edge, named now. */
struct branches_end {
        struct sym_loc loc; /* where it was placed (module 0: loc.rel is the raw address); in
                               function rows, the end of the row's most counted edge */
        uint32_t function;  /* interned name, 0 when not resolved */
        uint64_t offset;    /* from the function's start when resolved, else loc.rel */
        enum sym_state state;
};

/* What the CPU recorded of an edge's branches (where the LBR entries say: Intel since
   Skylake gives both, older CPUs the prediction or nothing), counted as the edge is. */
struct branches_flags {
        uint64_t nr_predict_known; /* branches whose prediction is known */
        uint64_t nr_mispredicted;  /* of those, mispredicted */
        uint64_t nr_cycles;        /* branches with a cycle count */
        uint64_t cycles_sum;       /* their cycles (since the previous LBR entry) */
};

struct branches_row {
        struct branches_end from, to;
        uint32_t pid;      /* the process when all the row's edges are one's, else AGG_ALL */
        uint32_t nr_edges; /* exact edges merged into the row (1 in BRANCHES_BY_EDGE) */
        uint64_t count;    /* branches taken (after decay) */
        struct branches_flags flags;
        double share;  /* count / all branches of the answer, 0..1 */
        bool is_other; /* the edges counted past max_entries, not kept one by one */
};

/* store: borrowed. max_entries bounds the memory: edges (per process) past it are counted in
   an "other" row. The object starts cumulative, with no filter. */
struct branches *branches_new(struct sym_store *store, uint32_t max_entries);
void branches_free(struct branches *b); /* NULL is fine */
/* Forgets every count; the settings and the filter stay. */
void branches_reset(struct branches *b);

/* Takes KEV_LBR; ignores the rest. Entries with a zero address (unused LBR slots) are
   skipped. */
void branches_event(struct branches *b, const struct kevent *ev);

/* The aggregation mode, applied at each branches_refresh. */
void branches_set_settings(struct branches *b, const struct agg_settings *settings);
/* Only events that pass f are counted from now on (pid and tid of the LBR event, its time);
   edges already counted for processes outside f's pid set are dropped at once. f is copied. */
void branches_set_filter(struct branches *b, const struct agg_filter *f);
/* The refresh tick: applies the aggregation mode (decay or zero, and drop what fell under the
   threshold). Cumulative: nothing changes. */
void branches_refresh(struct branches *b);

/* LBR events and edges counted (after decay), "other" included. */
uint64_t branches_nr_events(const struct branches *b);
uint64_t branches_nr_edges(const struct branches *b);
/* Exact edges kept one by one (per process): the memory in use, at most max_entries. */
uint32_t branches_nr_kept(const struct branches *b);
/* Edges counted in the "other" row, the table at max_entries (after decay). */
uint64_t branches_nr_other(const struct branches *b);

/* The rows of one process (pid) or of all (AGG_ALL), grouped, named now, most counted first
   (ties in address order). The "other" row comes with AGG_ALL only. The array belongs to b
   until the next call on b. */
uint32_t branches_rows(struct branches *b, enum branches_group group, uint32_t pid,
                       const struct branches_row **rows);

/* A row's mispredicted share in percent and its average cycles; false where the CPU did not
   record them. */
bool branches_mispredict_pct(const struct branches_row *r, double *pct);
bool branches_avg_cycles(const struct branches_row *r, double *cycles);

#endif
