/* SPDX-License-Identifier: MIT */
/* aggregate.h: what every model view shares: the aggregation modes (cumulative, decaying,
   zeroed at each refresh), the event filter (process and thread sets, a time range in replay)
   and the bounded table the views count in. */
#ifndef ETWTOP_MODEL_AGGREGATE_H
#define ETWTOP_MODEL_AGGREGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- aggregation modes ---- */

enum agg_mode {
        AGG_CUMULATIVE = 0, /* counts grow for the whole run (the default) */
        AGG_DECAYING,       /* each refresh multiplies every count by decay_factor */
        AGG_ZEROED,         /* each refresh starts every count again from 0 */
};

#define AGG_DEFAULT_DECAY_FACTOR 0.5

/* The profile sources the views count apart (a perf.data's events: `perf record -e 'sched:*'`
   samples 26 tracepoints, `-e 'syscalls:*'` hundreds); the samples of any past them are the
   last one's. */
#define AGG_MAX_SOURCES 256

struct agg_settings {
        enum agg_mode mode;
        /* AGG_DECAYING: the factor a refresh multiplies counts by, in (0, 1); anything else
           means AGG_DEFAULT_DECAY_FACTOR. Integer counts are rounded down, like perf top's. */
        double decay_factor;
        /* AGG_DECAYING: a row whose counts all fall under this after a refresh is dropped (its
           memory reused); 0 means 1, i.e. rows are dropped when they decay to nothing. */
        uint64_t drop_below;
};

/* The settings a model object starts with: cumulative. */
void agg_settings_init(struct agg_settings *s);
/* A count after one refresh under s. */
uint64_t agg_settings_apply(const struct agg_settings *s, uint64_t count);
/* true when a count (already passed through agg_settings_apply) makes its row droppable: 0, or
   under drop_below in AGG_DECAYING. Cumulative rows are never droppable on their own. */
bool agg_settings_is_droppable(const struct agg_settings *s, uint64_t count);
/* "cumulative", "decaying", "zeroed". */
const char *agg_mode_name(enum agg_mode mode);

/* ---- filters ---- */

#define AGG_MAX_FILTER_IDS 64
#define AGG_ALL            UINT32_MAX /* "any process" or "any thread" in the query calls */

/* What is counted. Empty sets pass everything; with both sets given, an event must match both
   (a thread of one of the processes). The time range is half-open, [from_ns, to_ns), in session
   ns (struct kevent time_ns). A value type: copy it freely. */
struct agg_filter {
        uint32_t nr_pids;
        uint32_t nr_tids;
        uint32_t pids[AGG_MAX_FILTER_IDS];
        uint32_t tids[AGG_MAX_FILTER_IDS];
        bool has_time_range;
        int64_t from_ns;
        int64_t to_ns;
};

/* Everything passes. */
void agg_filter_init(struct agg_filter *f);
/* 0, or -ENOSPC when the set already holds AGG_MAX_FILTER_IDS ids. Adding an id twice is fine. */
int agg_filter_add_pid(struct agg_filter *f, uint32_t pid);
int agg_filter_add_tid(struct agg_filter *f, uint32_t tid);
/* [from_ns, to_ns); 0, or -EINVAL when to_ns < from_ns. */
int agg_filter_set_time_range(struct agg_filter *f, int64_t from_ns, int64_t to_ns);

bool agg_filter_has_pid(const struct agg_filter *f, uint32_t pid); /* true when no pid set */
bool agg_filter_has_tid(const struct agg_filter *f, uint32_t tid); /* true when no tid set */
bool agg_filter_has_time(const struct agg_filter *f, int64_t time_ns);
/* The subject passes the sets and the event time is in the range. */
bool agg_filter_pass(const struct agg_filter *f, uint32_t pid, uint32_t tid, int64_t time_ns);
/* How much of the interval [from_ns, to_ns) lies in the time range (all of it when there is
   none); 0 for an empty or reversed interval. */
uint64_t agg_filter_clip_ns(const struct agg_filter *f, int64_t from_ns, int64_t to_ns);

/* ---- the bounded table the model counts in ---- */

/* An open-addressing hash table of fixed-size entries, each starting with its key (compared
   byte for byte: callers zero the padding). It holds at most max_entries entries, so its memory
   is bounded by the setting and not by the run time; callers count what does not fit in an
   "other" row. Entry pointers stay valid until the next agg_table_get, agg_table_remove_if or
   agg_table_reset. */
struct agg_table;

struct agg_table *agg_table_new(size_t key_size, size_t entry_size, uint32_t max_entries);
void agg_table_free(struct agg_table *t); /* NULL is fine */
void agg_table_reset(struct agg_table *t);

/* The entry of key, or NULL. */
void *agg_table_find(const struct agg_table *t, const void *key);
/* The entry of key, added zeroed (with its key) when absent; NULL when absent and the table
   is full. *is_new (may be NULL) says whether it was just added. */
void *agg_table_get(struct agg_table *t, const void *key, bool *is_new);
/* Calls is_dropped once for every entry, which may change the entry (decay it) and returns
   whether to remove it; then removes those, shrinking the table when few remain. */
void agg_table_remove_if(struct agg_table *t, bool (*is_dropped)(void *entry, void *ctx),
                         void *ctx);

uint32_t agg_table_nr(const struct agg_table *t);
uint32_t agg_table_max(const struct agg_table *t);
/* Changes whenever entries move (the table grew, shrank or was reset): a pointer to an entry
   taken under one epoch is good while the epoch stays. */
uint32_t agg_table_epoch(const struct agg_table *t);

/* Iteration: slots 0 .. agg_table_capacity()-1; agg_table_slot returns NULL for an empty one. */
uint32_t agg_table_capacity(const struct agg_table *t);
void *agg_table_slot(const struct agg_table *t, uint32_t i);

/* The slots of a table's entries by a 32-bit field of theirs (a thread id): the entries of one
   value found without a scan of the whole table. Kept in step with the table: rebuilt when an
   entry came or went since (the table's epoch and count), once for any number of lookups. */
struct agg_index {
        uint32_t epoch, nr; /* of the table when built */
        uint32_t *slots;    /* owned: the entries' slots, by field then slot */
        uint32_t *values;   /* owned: their field, in the same order */
        uint32_t nr_slots, cap;
        bool is_built;
};
/* The slots of t's entries whose uint32_t at offset is value: *first into x->slots, returns
   how many. */
uint32_t agg_index_find(struct agg_index *x, const struct agg_table *t, size_t offset,
                        uint32_t value, uint32_t *first);
void agg_index_free(struct agg_index *x);

#endif
