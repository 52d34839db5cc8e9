/* SPDX-License-Identifier: MIT */
/* stack_set.h: the model's distinct stacks, gathered from its sample sink (what the exports
   write): every distinct (pid, tid, source, stack) with its count, the distinct places its
   frames are at (module and address in it, placed at event time), and, once the trace is read,
   their names, the modules they lie in and the processes' names. */
#ifndef ETWTOP_MODEL_STACK_SET_H
#define ETWTOP_MODEL_STACK_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kevent.h"
#include "model/aggregate.h"
#include "symbols/symbols.h"

struct profile;

/* A place on a stack: one per distinct (module, rel) (after stack_set_name; before, an
   unplaced address is one per process). */
struct stack_set_loc {
        uint32_t module;   /* symbol-store module; 0: no image held the address */
        uint64_t rel;      /* in the module (sym_loc.rel), or the raw address (module 0) */
        uint32_t pid;      /* module 0, before stack_set_name: the process, to place the
                              address again at the end (code the trace names later, as .NET
                              methods in the rundown); else 0 */
        uint32_t mapping;  /* index into modules + 1; 0: none */
        uint32_t function; /* index into functions (stack_set_name) */
};

/* A function: one per distinct (module, name). Unresolved places are each their own,
   named "module+0xoffset" (or "0xaddress" outside every module). */
struct stack_set_function {
        uint32_t module;
        uint32_t mapping; /* index into modules + 1; 0: none */
        char *name;       /* owned; valid UTF-8 without control characters */
};

/* A module the places lie in, with what sym_module_info says of it. */
struct stack_set_module {
        uint32_t module;
        uint64_t min_rel, max_rel; /* of its places */
        char *name;                /* owned: short (libc.so.6, ntdll.dll) */
        char *path;                /* owned: as recorded ("" when unknown) */
        char *build_id;     /* owned: the ELF build-id in hex, else a PE image's PDB signature
                               (sym_module_info's pdb_signature), else "" */
        bool has_functions; /* one of its places resolved to a function */
};

/* A distinct stack: frames innermost first (the sampled address at [0]), as location indexes. */
struct stack_set_stack {
        uint32_t pid; /* UINT32_MAX: unknown */
        uint32_t tid;
        uint16_t source;    /* KPROFILE_SOURCE: HOT_SOURCE_TIMER or a PMC source */
        uint32_t comm;      /* index into comms (stack_set_name); before it, the comm key's id */
        uint32_t nr_frames; /* at least 1 */
        uint64_t first;     /* into frames */
        uint64_t count;
};

/* Distinct stacks, hashed. */
struct stack_set_table {
        struct stack_set_stack *stacks; /* owned */
        uint32_t nr_stacks, cap_stacks;
        uint32_t *slots; /* owned: index + 1, 0 empty */
        uint32_t mask;
        uint64_t total; /* the sum of their counts */
};

struct stack_set {
        struct sym_store *store;    /* borrowed */
        struct stack_set_loc *locs; /* owned */
        uint32_t nr_locs, cap_locs;
        uint32_t *loc_slots; /* owned: hash of locs, index + 1, 0 empty */
        uint32_t loc_mask;
        struct stack_set_table set;
        /* stack_set_off_cpu: off-CPU time by (pid, tid, blocking stack), count in
           nanoseconds, source 0; its frames in frames too */
        struct stack_set_table off;
        uint32_t *frames; /* owned: the stacks' frames, location indexes */
        uint64_t nr_frames, cap_frames;
        uint16_t sources[AGG_MAX_SOURCES]; /* in order of first sample */
        uint32_t nr_sources;
        struct pending *pend; /* owned: the sample waiting for its stack, per CPU */
        uint32_t nr_pend;
        /* stack_set_set_comm_key, or NULL */
        uint32_t (*comm_key)(void *ctx, uint32_t pid, uint32_t tid);
        void (*comm_name)(void *ctx, uint32_t id, char *buf, size_t size);
        void *comm_ctx;
        uint64_t *scratch; /* owned: a stack's addresses being placed */
        uint32_t cap_scratch;
        /* stack_set_name */
        struct stack_set_function *functions; /* owned */
        uint32_t nr_functions;
        struct stack_set_module *modules; /* owned */
        uint32_t nr_modules;
        char **comms; /* owned: process names ("pid N" where the trace named none) */
        uint32_t nr_comms;
};

struct stack_set *stack_set_new(struct sym_store *store);
void stack_set_free(struct stack_set *s); /* NULL is fine */

/* Each sample's process named, as it comes, by key(ctx, pid, tid): an id of perf's comm then
   (the sampled thread's name: comm_key.h), that name(ctx, id, ...) gives at stack_set_name, as
   perf script's samples name their comm; without, a process by the name its context switches
   know at the end. Before the first sample. */
void stack_set_set_comm_key(struct stack_set *s,
                            uint32_t (*key)(void *ctx, uint32_t pid, uint32_t tid),
                            void (*name)(void *ctx, uint32_t id, char *buf, size_t size),
                            void *ctx);
/* The model's sample sink (profile_set_sample_sink): ctx is the stack_set. */
void stack_set_event(void *ctx, const struct kevent *ev);
/* The trace read and profile_end called: the samples still waiting for a stack count with
   their address alone. */
void stack_set_end(struct stack_set *s);
/* The trace read, before stack_set_name: gathers p's context switches' off-CPU time by
   where each thread blocked (the first frames of the stacks that came with its switches,
   switches_each_block_stack) into s->off, placed as the samples' frames are. Nothing when the
   switches came without stacks. */
void stack_set_off_cpu(struct stack_set *s, struct profile *p);
/* Names the places, functions, modules and processes (after sym_store_wait), from p's symbol
   store and its context switches (the process names they know). */
void stack_set_name(struct stack_set *s, struct profile *p);

/* s as valid UTF-8 without control characters (an invalid byte becomes U+FFFD, a control
   character '?'): names come from the traced system. Returns a string to free. */
char *stack_set_clean_dup(const char *s);

/* The index of source in sources, or -1. */
int stack_set_source_index(const struct stack_set *s, uint16_t source);

/* Stacks merged across pid and tid by process name and by function, for one source: the flame
   graphs'. Each stack's comm says the process name, pid and tid are 0; its frames (in the
   merged frames, innermost first) are function indexes. Free with stack_set_merged_free. */
struct stack_set_merged {
        struct stack_set_table set;
        uint32_t *frames; /* owned: function indexes */
        uint64_t nr_frames, cap_frames;
};
void stack_set_merge(const struct stack_set *s, uint16_t source, struct stack_set_merged *out);
void stack_set_merged_free(struct stack_set_merged *m);

/* The source the single-source formats (folded) write: the timer when it sampled, else the
   first source; false when there were no samples. */
bool stack_set_main_source(const struct stack_set *s, uint16_t *source);

#endif
