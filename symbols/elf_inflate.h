/* SPDX-License-Identifier: MIT */
/* elf_inflate.h: an ELF file's compressed DWARF sections inflated before libdw opens them
   (elf_inflate.c). */
#ifndef ETWTOP_SYMBOLS_ELF_INFLATE_H
#define ETWTOP_SYMBOLS_ELF_INFLATE_H

#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>

#include "dwarf_cache.h"

/* The buffers that hold the inflated sections, and the cache's mappings that hold others:
   freed after the Elf they were given to. */
struct elf_inflated {
        void **bufs;
        uint32_t nr;
        struct dwarf_cache_map *maps;
        uint32_t nr_maps;
};

/* Makes elf's DWARF sections what libdw's dwarf_begin_elf would make of them, cheaper: each
   zlib-compressed .debug_* section inflated by libdeflate (loaded at the first call; where it
   is not installed, libdw inflates them as before, with zlib) and the location lists, which
   no lookup here reads, left out (made SHT_NOBITS, which libdw skips), compressed or not.
   A section whose stream does not inflate to its header's size exactly is left as it is, for
   libdw to judge. A section of DWARF_CACHE_MIN_BYTES or more inflated is kept in the cache of
   dwarf_cache.h, and taken from it (mapped) when a run inflated it before, libdeflate or not. Only
   64-bit little-endian shared objects and executables are inflated; in every file a string
   section (.debug_str, .debug_line_str) that does not end with a NUL is left out too (libdw
   reads its last string past its end). Call before libdw opens the file's DWARF; the buffers go
   to keep. Not thread-safe per file. */
void elf_inflate_debug(Elf *elf, struct elf_inflated *keep);
void elf_inflated_free(struct elf_inflated *keep);

/* Whether a compressed section's header may claim size bytes inflated from in_n bytes of zlib
   stream: not 0, at most 4 GiB, and no more than deflate can make of in_n bytes (1032 to 1). */
bool elf_inflate_size_ok(uint64_t size, uint64_t in_n);

#endif
