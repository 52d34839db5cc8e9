/* SPDX-License-Identifier: MIT */
/* symtab_cache.h: an ELF module's finished symbol table kept on disk between runs
   (symtab_cache.c), in the directory of the DWARF cache (dwarf_cache.h), so that a module is
   named by a mapping of a file rather than by its table built again: libLLVM's and
   libclang-cpp's 57,000 function symbols, sorted and their aliases chosen, were 41 M
   instructions of each `--replay -b` of a compile's recording.

   An entry is keyed by a hash of what the table was built from: the symbol and string tables'
   bytes, the module's build-id, its load bias, the build's table layout; any other change of
   the file makes another key. Its bytes: a header, the table's entries, its names. Read back,
   its header and lengths are checked (a damaged one is refused, and the table is built again)
   and its entries and names where they are used (sym_table_new_mapped): a damaged or hostile
   entry reads wrong or nameless, never outside the file. */
#ifndef ETWTOP_SYMBOLS_SYMTAB_CACHE_H
#define ETWTOP_SYMBOLS_SYMTAB_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dwarf_cache.h"

struct sym_table;

/* Tables of fewer symbols are built each time (faster than a file is opened and mapped). */
#define SYMTAB_CACHE_MIN_SYMBOLS 512u

/* What a key is made of: the parts (each n bytes at p) hashed in order, with the running
   program's build-id (another build of etwtop may build tables otherwise: its own keys); false
   where the program has none (nothing is kept then). */
struct symtab_cache_part {
        const void *p;
        size_t n;
};
bool symtab_cache_key(const struct symtab_cache_part *parts, uint32_t nr,
                      struct dwarf_cache_key *key);

/* The running program's build-id (/proc/self/exe's, read once) in id[0..20): its length, 0
   where it has none. */
uint32_t symtab_cache_program_id(uint8_t id[20]);

/* The table kept under key, mapped (read-only, the mapping held by the table until it is
   freed), or NULL where there is none or it is not a table sym_table_finish could have made. */
struct sym_table *symtab_cache_load(const struct dwarf_cache_key *key);

/* The bytes of an entry: t (finished) encoded (xmalloc'd, *len bytes; NULL where its names
   are more than its offsets reach), and a table read back from them in place (data 8-byte
   aligned and left alone while the table lives; NULL where they are not a table
   sym_table_finish could have made). */
void *symtab_cache_encode(const struct sym_table *t, size_t *len);
struct sym_table *symtab_cache_decode(const void *data, size_t size);

/* Keeps t (finished) under key, at best effort. */
void symtab_cache_store(const struct dwarf_cache_key *key, const struct sym_table *t);

#endif
