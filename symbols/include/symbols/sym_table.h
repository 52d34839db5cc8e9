/* SPDX-License-Identifier: MIT */
/* sym_table.h: one module's functions as a sorted array of address ranges with interned names.
   Built once (add, then finish), read by many: lookups are a binary search, about 100 ns. */
#ifndef ETWTOP_SYMBOLS_SYM_TABLE_H
#define ETWTOP_SYMBOLS_SYM_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Addresses are whatever the source gives: ELF file virtual addresses, PE RVAs, or absolute
   kernel / JIT addresses. The table does not care; its owner knows. */
struct sym_entry {
        uint64_t start;
        uint64_t size; /* 0 in the source: set to the distance to the next symbol at finish */
        uint32_t name; /* offset in the table's string pool (or its borrowed names) */
        uint32_t flags;
};

#define SYM_FLAG_WEAK  0x1u /* a weak or local alias loses against a global of the same start */
#define SYM_FLAG_LOCAL 0x2u
#define SYM_FLAG_SIZED 0x4u  /* the source gave a size (else it was inferred) */
#define SYM_FLAG_DATA  0x8u  /* an object, not a function */
#define SYM_FLAG_BOUND 0x10u /* internal to sym_table_finish */
/* Padding before a function, not a function (sym_name_is_padding): never the answer of
   sym_table_find; the function before it, when its size was inferred, runs over it. */
#define SYM_FLAG_PADDING 0x20u

/* Whether a symbol name (len bytes) names the padding the Linux kernel puts before functions:
   __pfx_ (the NOPs of -fpatchable-function-entry and call depth tracking) and __cfi_ (kCFI's
   preamble). perf skips them; the ELF and kernel symbol readers flag them SYM_FLAG_PADDING. */
bool sym_name_is_padding(const char *name, size_t len);

struct sym_table;

struct sym_table *sym_table_new(void);
/* Before sym_table_finish: a start's aliases chosen among as perf does (a sized, strong, global
   name first, then the one with fewer leading underscores, then the longer), so that an ELF
   image's functions are named as perf report names them; else the lowest rank, the first
   added among equals. */
void sym_table_choose_aliases_as_perf(struct sym_table *t);
/* Before sym_table_finish: a start's last alias added is its name (padding aside), as perf
   names a kallsyms address: its symbols have no sizes, and perf's symbols__fixup_end gives all
   but the last of one address none, choose_best_symbol then the one with a size (memcpy,
   __memcpy, __pi_memcpy: __pi_memcpy). */
void sym_table_choose_last_alias(struct sym_table *t);
/* Room for nr more entries and pool_bytes more of names (a hint: adding past it grows the
   table as before), so that a table whose size is known ahead is not copied as it grows. */
void sym_table_reserve(struct sym_table *t, uint32_t nr, size_t pool_bytes);
/* sym_table_reserve, with the room's pages faulted in at once (util/mem_policy.h): for a table
   about to be filled with at least nr entries and pool_bytes of names (a lower bound: what is
   faulted in and not filled is memory held until sym_table_finish). */
void sym_table_prefault(struct sym_table *t, uint32_t nr, size_t pool_bytes);
void sym_table_free(struct sym_table *t);

/* A finished, read-only table over arrays that another finished table held (a cache file
   mapped: sym_table_at(t, 0) and sym_table_pool's), borrowed for the table's life and not freed
   with it. Nothing of them is trusted, and nothing of them is read whole: NULL when pool
   (pool_len bytes) does not begin and end with a NUL; an entry's name past the pool, or one
   holding a byte sym_table_add replaces, reads as "" (sym_table_name); entries out of ascending
   start order give wrong answers, never a read outside the arrays. Entries must be 8-byte
   aligned. */
struct sym_table *sym_table_new_mapped(const struct sym_entry *entries, uint32_t nr,
                                       const char *pool, size_t pool_len);

/* Names of the symbols to come that lie in base[0..size) (a string table, NUL-terminated at its
   end, that outlives t: an ELF file's, open as long as the table) are read there, not copied
   into the pool, when no byte of it is one sym_table_add replaces (else they are copied as
   before). Call on an empty table; true when they will be read in place. */
bool sym_table_borrow_names(struct sym_table *t, const char *base, size_t size);
/* What t's borrowed names lie in, freed with t: release(owner) when t is freed (the table is
   handed on, and its names' owner goes with it). */
void sym_table_hold(struct sym_table *t, void (*release)(void *), void *owner);

/* Adds a symbol; name need not be NUL-terminated (len bytes). Bytes that are not printable
   are replaced by '?'. Call before sym_table_finish only. */
void sym_table_add(struct sym_table *t, uint64_t start, uint64_t size, const char *name, size_t len,
                   uint32_t flags);

/* As sym_table_add with size 0, but the inferred size never passes max_size (the end of the
   symbol's section, say). */
void sym_table_add_bounded(struct sym_table *t, uint64_t start, uint64_t max_size, const char *name,
                           size_t len, uint32_t flags);

/* Sorts by start; of several symbols at one start keeps one (a sized global function before a
   weak or local one, else the first added; padding last); gives zero-size symbols the distance
   to the next start that is not padding, capped at max_inferred_size (0: no cap). After this
   the table is read-only. */
void sym_table_finish(struct sym_table *t, uint64_t max_inferred_size);

/* The symbol whose [start, start + size) holds addr, or NULL. Padding is never the answer. */
const struct sym_entry *sym_table_find(const struct sym_table *t, uint64_t addr);

const char *sym_table_name(const struct sym_table *t, const struct sym_entry *e);
uint32_t sym_table_count(const struct sym_table *t);
/* A finished table's string pool (entries' name offsets index it; names it borrowed elsewhere,
   sym_table_borrow_names, are not in it) and its length in *len; NULL and 0 before finish. */
const char *sym_table_pool(const struct sym_table *t, size_t *len);
const struct sym_entry *sym_table_at(const struct sym_table *t, uint32_t i);
size_t sym_table_memory(const struct sym_table *t); /* bytes held */

#endif
