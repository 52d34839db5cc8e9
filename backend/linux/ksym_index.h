/* SPDX-License-Identifier: MIT */
/* ksym_index.h: the kernel's text symbols, as ksyms.c parses them from /proc/kallsyms, in a form
   that is searched where it lies: written once to root's cache for the kernel's state, then
   mapped by each recording's close to name the few addresses hit, instead of reading and
   parsing the 120,000 lines again (the largest part of a short recording's CPU). */
#ifndef ETWTOP_KSYM_INDEX_H
#define ETWTOP_KSYM_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perf_convert.h"
#include "util/kallsyms_text.h"

/* One symbol of the index (native byte order: the cache is the machine's own). */
struct ksym_index_entry {
        uint64_t addr;
        uint32_t size;
        uint32_t name;   /* offset in the strings */
        uint32_t module; /* offset in the strings: "" for the kernel image */
        uint32_t pad;
};
_Static_assert(sizeof(struct ksym_index_entry) == 24, "ksym_index_entry is 24 bytes on disk");

struct ksym_index {
        const struct ksym_index_entry *entries; /* borrowed: in data, sorted by address */
        size_t nr;
        const char *strings; /* borrowed: in data, NUL-terminated */
        size_t strings_len;
        struct kallsyms_cache_map map; /* owned when the index came from the cache */
};

/* The index's bytes for nr symbols sorted by address (ksyms_parse's), sizes up to 4 GiB: an
   owned buffer of *len bytes. */
void *ksym_index_build(const struct perf_ksym *syms, size_t nr, size_t *len);

/* Opens the index in data (len bytes, 8-byte aligned, borrowed while the index is used).
   -EINVAL when it is not one (cut, another version). */
int ksym_index_open_mem(struct ksym_index *ix, const void *data, size_t len);

/* Opens the cache's index written in state (kallsyms_text_state). -ENOENT when there is none
   for that state (another state, no cache: not root), -EINVAL when it is damaged. */
int ksym_index_open(struct ksym_index *ix, const char *state);

/* Writes nr parsed symbols as the cache's index of state, the state taken before the text
   they came from was read. */
void ksym_index_store(const char *state, const struct perf_ksym *syms, size_t nr);

/* Unmaps the index's file, if any; NULL-safe, and for an index that failed to open. */
void ksym_index_close(struct ksym_index *ix);

/* The symbols that the n addresses (ascending, as perf_conv_kernel_addrs gives them: the index
   is walked once) fall in, each once, in address order, by the rule
   perf_conv_kernel_symbols applies to the whole list (the last symbol at or below an address,
   when the address lies within its size): handed to perf_conv_kernel_symbols, they give the
   events the whole list would. An owned array of *nr_out (NULL when none), names borrowed from
   ix. */
struct perf_ksym *ksym_index_lookup(const struct ksym_index *ix, const uint64_t *addrs, size_t n,
                                    size_t *nr_out);

#endif
