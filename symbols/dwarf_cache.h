/* SPDX-License-Identifier: MIT */
/* dwarf_cache.h: compressed DWARF sections kept inflated on disk between runs (dwarf_cache.c),
   so that a module's source lines cost a mapping of a file rather than the inflation of its
   sections again: Debian's debug files (libc6-dbg, the -dbgsym packages) compress theirs, and
   inflating libc's 9 MB was a sixth of a `--replay -b` that shows its lines. The same directory
   keeps ELF modules' symbol tables as they were built (symtab_cache.h).

   The directory: $ETWTOP_DWARF_CACHE (absolute; "off" or empty: none), else
   $XDG_CACHE_HOME/etwtop/dwarf, else $HOME/.cache/etwtop/dwarf (where that base directory is
   this user's: root under another user's $HOME keeps nothing). It is used only while it is a
   directory of this user's that no one else may write (a symbolic link is not followed), and
   its files only while they are regular files of this user's that no one else may write. An
   entry is named by a 128-bit hash of the compressed stream with its inflated size (".dw"), or
   of what a symbol table was built from (".st"), and holds that key again before its bytes; the
   directory's entries are kept under 1 GiB, the least recently used removed first. */
#ifndef ETWTOP_SYMBOLS_DWARF_CACHE_H
#define ETWTOP_SYMBOLS_DWARF_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Sections that inflate to less are not kept (they inflate faster than a file is made). */
#define DWARF_CACHE_MIN_BYTES (64u << 10)

struct dwarf_cache_key {
        uint64_t h[2];
        uint64_t in_n, size;
};

/* A found entry: data[0..size) mapped read-only until dwarf_cache_unmap. */
struct dwarf_cache_map {
        void *map;
        size_t map_len;
        const void *data;
        size_t size;
};

/* The key of the zlib stream in[0..in_n) that inflates to size bytes. */
void dwarf_cache_key(const void *in, size_t in_n, uint64_t size, struct dwarf_cache_key *key);

/* The entry of key, mapped into *m: true; false where there is none (or no usable directory,
   or the entry is not what it should be). */
bool dwarf_cache_find(const struct dwarf_cache_key *key, struct dwarf_cache_map *m);

/* Keeps out[0..key->size) as key's entry, at best effort (nothing is said where it cannot be):
   written under a temporary name and renamed into place. */
void dwarf_cache_store(const struct dwarf_cache_key *key, const void *out);

void dwarf_cache_unmap(struct dwarf_cache_map *m);

/* The same directory keeps ELF modules' finished symbol tables (symtab_cache.c), entries of
   any length under a key made with size 0 (the bytes the table was built from, hashed): */
bool dwarf_cache_find_table(const struct dwarf_cache_key *key, struct dwarf_cache_map *m);
void dwarf_cache_store_table(const struct dwarf_cache_key *key, const void *data, size_t len);

/* Tests: the bytes the directory's entries may take (default 1 GiB); 0 restores the default. */
void dwarf_cache_set_max_bytes(uint64_t max_bytes);

#endif
