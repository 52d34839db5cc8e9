/* SPDX-License-Identifier: MIT */
/* kallsyms.h: the running kernel's text symbols (/proc/kallsyms) with the module of each, and
   the loaded modules' ranges (/proc/modules). */
#ifndef ETWTOP_SYMBOLS_KALLSYMS_H
#define ETWTOP_SYMBOLS_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sym_table;

/* A human message about bad input, with the byte offset of the first bad line. Bad lines are
   skipped, not fatal: nr_bad_lines counts them and msg describes the first one; a fatal error
   (the function returned -errno) overwrites msg. Both 0 / "" when the input was clean. */
struct kallsyms_error {
        uint64_t offset;
        uint32_t nr_bad_lines;
        char msg[256];
};

/* Symbols inferred to run to the next one are capped at this size. */
#define KALLSYMS_MAX_SYMBOL_SIZE (1u << 20)

/* The name of the core kernel in lookups, as perf says it. Modules are "[ext4]". */
#define KALLSYMS_KERNEL_MODULE "[kernel.kallsyms]"

/* Inputs larger than this are refused (-EFBIG): /proc/kallsyms is about 5 MB. */
#define KALLSYMS_MAX_INPUT (1u << 30)

struct kallsyms;

/* Parses /proc/kallsyms text (`ADDR TYPE NAME[\t[MODULE]]` lines; not NUL-terminated, len
   bytes) into a new object (*out, free with kallsyms_free). Keeps text symbols only (types t,
   T, w, W), at absolute addresses; sizes run to the next symbol, capped at
   KALLSYMS_MAX_SYMBOL_SIZE, and the core kernel's text ends at _etext (and _einittext).
   Returns 0; -EPERM when every address is zero (kptr_restrict hides them: the message says
   what to do), *out then NULL; -EFBIG for an input over KALLSYMS_MAX_INPUT. */
int kallsyms_parse_mem(const char *text, size_t len, struct kallsyms **out,
                       struct kallsyms_error *err);

/* Reads path (NULL: /proc/kallsyms) once, in large reads, and parses it as above. Also
   -errno of open or read (the message names the file). With path NULL, for root: the parse is
   stored in root's cache (kallsyms_text.h, "kallsyms.table") in the kernel's state, and taken
   from there, mapped and not parsed again (kallsyms_is_mapped), while the state stays; a cache
   that is damaged is not used, and the next parse replaces it. The answers are the same. */
int kallsyms_read(const char *path, struct kallsyms **out, struct kallsyms_error *err);

/* The parse of ks in the form kallsyms_parsed_open_mem reads (a cache file's body): *len bytes
   in a buffer the caller frees. */
void *kallsyms_parsed_encode(const struct kallsyms *ks, size_t *len);

/* A kallsyms object (*out, free with kallsyms_free) read in place over data (len bytes, 8-byte
   aligned, borrowed: it must outlive *out), which kallsyms_parsed_encode wrote. No byte is
   trusted: 0, or -EINVAL with *out NULL when a count or length disagrees with len, the runs are
   out of order, a module name's offset is past its strings or a module index out of range. The
   symbol entries are checked where they are read (sym_table_new_mapped): out of order, they
   answer wrong; a name past the strings or with a control byte reads as "". */
int kallsyms_parsed_open_mem(const void *data, size_t len, struct kallsyms **out);

/* Whether ks was read in place from a parsed form (the cache), not parsed from text. */
bool kallsyms_is_mapped(const struct kallsyms *ks);

void kallsyms_free(struct kallsyms *ks); /* NULL is fine */

/* Where an address is. The strings are borrowed from the kallsyms object. */
struct kallsyms_hit {
        const char *name;   /* the symbol */
        const char *module; /* KALLSYMS_KERNEL_MODULE or "[ext4]", "[bpf]", ... */
        uint64_t start;     /* the symbol's address */
        uint64_t offset;    /* addr - start */
};

/* The symbol holding addr and its module; false (hit untouched) when none does. */
bool kallsyms_lookup(const struct kallsyms *ks, uint64_t addr, struct kallsyms_hit *hit);

/* The module of e, one of kallsyms_table(ks)'s entries: KALLSYMS_KERNEL_MODULE or "[ext4]", ...;
   NULL where ks holds no modules (kallsyms_lookup finds nothing there either). */
struct sym_entry;
const char *kallsyms_symbol_module(const struct kallsyms *ks, const struct sym_entry *e);
/* The same for the symbols from start on, for a walk in address order: the module there, and in
 *until where the next module's symbols begin (UINT64_MAX: none do). */
const char *kallsyms_module_from(const struct kallsyms *ks, uint64_t start, uint64_t *until);

/* All text symbols, finished (read-only), borrowed from ks. */
const struct sym_table *kallsyms_table(const struct kallsyms *ks);

/* The core kernel's [_stext, _etext); false when the input named neither. */
bool kallsyms_kernel_text(const struct kallsyms *ks, uint64_t *start, uint64_t *end);

/* The GNU build-id among ELF notes (the bytes of /sys/kernel/notes, len of them; not trusted):
   0 with the id in out (its first 20 bytes at most) and its size in *size; -ENOENT when the
   notes hold none. */
int kallsyms_notes_build_id(const uint8_t *notes, size_t len, uint8_t out[20], uint32_t *size);
/* The running kernel's build-id: path (NULL: /sys/kernel/notes) read and parsed as above. Also
   -errno of open or read. */
int kallsyms_running_build_id(const char *path, uint8_t out[20], uint32_t *size);

/* One line of /proc/modules: `name size refcount deps state address [taints]`. */
struct kallsyms_module {
        char name[64]; /* without brackets; MODULE_NAME_LEN is 56 */
        uint64_t base;
        uint64_t size; /* of all its sections together, not of its text alone */
};

/* Parses /proc/modules text (not NUL-terminated, len bytes) into a new array (*out, free with
   free(); NULL when there are no modules) of *nr_out modules, in the order of the input.
   Returns 0; -EPERM when every address is zero (kptr_restrict); -EFBIG for an input over
   KALLSYMS_MAX_INPUT. Bad lines are skipped and counted in err. */
int kallsyms_modules_parse_mem(const char *text, size_t len, struct kallsyms_module **out,
                               uint32_t *nr_out, struct kallsyms_error *err);

/* Reads path (NULL: /proc/modules) and parses it as above. Also -errno of open or read:
   -ENOENT on a kernel built without modules. */
int kallsyms_modules_read(const char *path, struct kallsyms_module **out, uint32_t *nr_out,
                          struct kallsyms_error *err);

#endif
