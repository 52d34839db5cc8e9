/* SPDX-License-Identifier: MIT */
/* samples.h (internal to src/export/): what the exports write, gathered from the model's sample
   sink: every distinct (pid, tid, source, stack) with its count, the distinct places its frames
   are at (module and address in it, placed at event time), and, once the trace is read, their
   names, the modules they lie in and the processes' names. */
#ifndef ETWTOP_EXPORT_SAMPLES_H
#define ETWTOP_EXPORT_SAMPLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kevent.h"
#include "symbols/symbols.h"

struct profile;

/* A place on a stack: one per distinct (module, rel) (after export_samples_name; before, an
   unplaced address is one per process). */
struct export_loc {
        uint32_t module;   /* symbol-store module; 0: no image held the address */
        uint64_t rel;      /* in the module (sym_loc.rel), or the raw address (module 0) */
        uint32_t pid;      /* module 0, before export_samples_name: the process, to place the
                              address again at the end (code the trace names later, as .NET
                              methods in the rundown); else 0 */
        uint32_t mapping;  /* index into modules + 1; 0: none */
        uint32_t function; /* index into functions (export_samples_name) */
};

/* A function: one per distinct (module, name). Unresolved places are each their own,
   named "module+0xoffset" (or "0xaddress" outside every module). */
struct export_function {
        uint32_t module;
        uint32_t mapping; /* index into modules + 1; 0: none */
        char *name;       /* owned; valid UTF-8 without control characters */
};

/* A module the places lie in, with what sym_module_info says of it. */
struct export_module {
        uint32_t module;
        uint64_t min_rel, max_rel; /* of its places */
        char *name;                /* owned: short (libc.so.6, ntdll.dll) */
        char *path;                /* owned: as recorded ("" when unknown) */
        char *build_id;     /* owned: the ELF build-id in hex, else a PE image's PDB signature
                               (sym_module_info's pdb_signature), else "" */
        bool has_functions; /* one of its places resolved to a function */
};

/* A distinct stack: frames innermost first (the sampled address at [0]), as location indexes. */
struct export_stack {
        uint32_t pid; /* UINT32_MAX: unknown */
        uint32_t tid;
        uint16_t source;    /* KPROFILE_SOURCE: HOT_SOURCE_TIMER or a PMC source */
        uint32_t comm;      /* index into comms (export_samples_name) */
        uint32_t nr_frames; /* at least 1 */
        uint64_t first;     /* into frames */
        uint64_t count;
};

/* Distinct stacks, hashed. */
struct export_stack_set {
        struct export_stack *stacks; /* owned */
        uint32_t nr_stacks, cap_stacks;
        uint32_t *slots; /* owned: index + 1, 0 empty */
        uint32_t mask;
        uint64_t total; /* the sum of their counts */
};

struct export_samples {
        struct sym_store *store; /* borrowed */
        struct export_loc *locs; /* owned */
        uint32_t nr_locs, cap_locs;
        uint32_t *loc_slots; /* owned: hash of locs, index + 1, 0 empty */
        uint32_t loc_mask;
        struct export_stack_set set;
        /* export_samples_off_cpu: off-CPU time by (pid, tid, blocking stack), count in
           nanoseconds, source 0; its frames in frames too */
        struct export_stack_set off;
        uint32_t *frames; /* owned: the stacks' frames, location indexes */
        uint64_t nr_frames, cap_frames;
        uint16_t sources[16]; /* in order of first sample */
        uint32_t nr_sources;
        struct pending *pend; /* owned: the sample waiting for its stack, per CPU */
        uint32_t nr_pend;
        uint64_t *scratch; /* owned: a stack's addresses being placed */
        uint32_t cap_scratch;
        /* export_samples_name */
        struct export_function *functions; /* owned */
        uint32_t nr_functions;
        struct export_module *modules; /* owned */
        uint32_t nr_modules;
        char **comms; /* owned: process names ("pid N" where the trace named none) */
        uint32_t nr_comms;
};

struct export_samples *export_samples_new(struct sym_store *store);
void export_samples_free(struct export_samples *s); /* NULL is fine */

/* The model's sample sink (profile_set_sample_sink): ctx is the export_samples. */
void export_samples_event(void *ctx, const struct kevent *ev);
/* The trace read and profile_end called: the samples still waiting for a stack count with
   their address alone. */
void export_samples_end(struct export_samples *s);
/* The trace read, before export_samples_name: gathers p's context switches' off-CPU time by
   where each thread blocked (the first frames of the stacks that came with its switches,
   switches_each_block_stack) into s->off, placed as the samples' frames are. Nothing when the
   switches came without stacks. */
void export_samples_off_cpu(struct export_samples *s, struct profile *p);
/* Names the places, functions, modules and processes (after sym_store_wait), from p's symbol
   store and its context switches (the process names they know). */
void export_samples_name(struct export_samples *s, struct profile *p);

/* s as valid UTF-8 without control characters (an invalid byte becomes U+FFFD, a control
   character '?'): names come from the traced system. Returns a string to free. */
char *export_clean_dup(const char *s);

/* The index of source in sources, or -1. */
int export_samples_source_index(const struct export_samples *s, uint16_t source);
/* A source's name: "Timer", a PMC source's (BranchMispredictions), or "PMC source N" in buf. */
const char *export_source_name(uint16_t source, char *buf, size_t size);

/* Stacks merged across pid and tid by process name and by function, for one source: the flame
   graphs'. Each stack's comm says the process name, pid and tid are 0; its frames (in the
   merged frames, innermost first) are function indexes. Free with export_merged_free. */
struct export_merged {
        struct export_stack_set set;
        uint32_t *frames; /* owned: function indexes */
        uint64_t nr_frames, cap_frames;
};
void export_samples_merge(const struct export_samples *s, uint16_t source,
                          struct export_merged *out);
void export_merged_free(struct export_merged *m);
void export_stack_set_free(struct export_stack_set *set);

/* The source the single-source formats (folded) write: the timer when it sampled, else the
   first source; false when there were no samples. */
bool export_samples_main_source(const struct export_samples *s, uint16_t *source);

#endif
