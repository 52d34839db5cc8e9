/* SPDX-License-Identifier: MIT */
/* kallsyms_impl.h (internal to symbols/): the parse of /proc/kallsyms as kallsyms.c builds it and
   kallsyms_parsed.c writes and reads it in root's cache. */
#ifndef ETWTOP_SYMBOLS_KALLSYMS_IMPL_H
#define ETWTOP_SYMBOLS_KALLSYMS_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/kallsyms_text.h"

/* A run of consecutive symbols (in address order) of one module. The runs partition the table,
   so a symbol's module is the one of the last run starting at or before it. Modules' text is
   contiguous, but BPF programs ([bpf]) and trampolines sit between them: runs, not one range
   per module. */
struct module_run {
        uint64_t start;
        uint32_t module; /* index in name_offs */
        uint32_t zero;   /* named, so that the parsed form's copy of a run has no heap bytes */
};

struct kallsyms {
        struct sym_table *table; /* owned, finished */
        struct module_run *runs; /* owned (borrowed when is_mapped), sorted by start */
        uint32_t nr_runs;
        char *names; /* owned (borrowed when is_mapped): "[kernel.kallsyms]\0[ext4]\0..." */
        size_t names_len, names_cap;
        uint32_t *name_offs; /* owned (borrowed when is_mapped): module index -> offset in
                                names; 0 is the kernel */
        uint32_t nr_modules, cap_modules;
        uint64_t stext, etext; /* 0 when the input did not name them */
        /* the table, runs and names are read in place in a parsed form (kallsyms_parsed_open_mem)
           and never written; map (owned, empty when the caller lent the bytes) is the cache file
           they are read in */
        bool is_mapped;
        struct kallsyms_cache_map map;
};

/* The parsed form in root's cache when it was stored in state and is whole; NULL otherwise. */
struct kallsyms *kallsyms_parsed_load(const char *state);
/* Stores ks's parsed form in root's cache, keyed by state (nothing for others than root). */
void kallsyms_parsed_store(const char *state, const struct kallsyms *ks);

#endif
