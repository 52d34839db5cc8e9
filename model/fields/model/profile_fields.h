/* SPDX-License-Identifier: MIT */
/* profile_fields.h: struct profile's fields, for model/ and its unit tests (the
   etwtop_model_fields target puts this folder on their path); src/ and ui/ read the model
   through profile.h's functions only and cannot include this header (tests/shell/layering.sh). */
#ifndef ETWTOP_MODEL_PROFILE_FIELDS_H
#define ETWTOP_MODEL_PROFILE_FIELDS_H

#include "model/profile.h"
#include "model/sym_feed.h"
#include "symbols/symbols.h"

struct stack_join;

struct profile {
        struct sym_store *store;     /* owned */
        struct sym_feed *feed;       /* owned */
        struct hot *hot;             /* owned */
        struct calltree *tree;       /* owned; NULL without has_call_tree */
        struct branches *branches;   /* owned */
        struct switches *switches;   /* owned */
        struct events_table *events; /* owned: every event type, its counts and recent events */
        struct stack_join *join;     /* owned: samples waiting for their stacks' parts */
        struct agg_settings agg;
        struct profile_trace trace;
        uint32_t zoom_pid;  /* only this process's samples, edges and switches count (0: all) */
        uint32_t scope_pid; /* the traced process of a -p recording: the zoom when none is set */
        bool has_window;    /* only events in [window_from_ns, window_to_ns) count */
        int64_t window_from_ns, window_to_ns;
        profile_sample_fn sample_sink; /* also gets what the hot functions count (NULL: none) */
        void *sample_sink_ctx;
        profile_sample_fn event_sink; /* gets what the events table counts (NULL: none) */
        void *event_sink_ctx;
        uint64_t trimmed_ns; /* CLOCK_MONOTONIC of the last mem_policy_trim (profile_refresh) */
};

#endif
