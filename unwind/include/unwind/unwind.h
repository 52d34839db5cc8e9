/* SPDX-License-Identifier: MIT */
/* unwind.h: user stacks from a register set and a copy of the stack, with the DWARF call frame
   information (.eh_frame, .debug_frame) of each mapped module compiled once into a sorted table
   of rules, so that a frame costs a binary search. Knows ELF and DWARF, not ETW; x86-64 only.
   doc/unwind.md describes the table and the limits. Not thread-safe: one cache per thread. */
#ifndef ETWTOP_UNWIND_UNWIND_H
#define ETWTOP_UNWIND_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- registers ---- */

/* x86-64 registers by DWARF number (System V psABI, figure 3.36); 16 is the return address
   column, the instruction pointer of a frame. */
enum unwind_dwarf_reg {
        UNWIND_REG_RAX = 0,
        UNWIND_REG_RDX = 1,
        UNWIND_REG_RCX = 2,
        UNWIND_REG_RBX = 3,
        UNWIND_REG_RSI = 4,
        UNWIND_REG_RDI = 5,
        UNWIND_REG_RBP = 6,
        UNWIND_REG_RSP = 7,
        UNWIND_REG_R8 = 8, /* ... r15 = 15 */
        UNWIND_REG_RIP = 16,
        UNWIND_NR_REGS = 17,
};

/* A frame's registers by DWARF number, and which of them are known (bit n: r[n]). */
struct unwind_regs {
        uint64_t r[UNWIND_NR_REGS];
        uint32_t valid;
};

/* The three registers a walk needs at least: ip, sp and bp. */
void unwind_regs_set(struct unwind_regs *regs, uint64_t ip, uint64_t sp, uint64_t bp);

/* The registers of a PERF_SAMPLE_REGS_USER record: values holds one u64 per bit set in mask
   (attr.sample_regs_user), in ascending bit order, as the record does. x86-64 bit numbers
   (arch/x86/include/uapi/asm/perf_regs.h): AX 0, BX 1, CX 2, DX 3, SI 4, DI 5, BP 6, SP 7, IP 8,
   FLAGS 9, CS 10, SS 11, DS 12, ES 13, FS 14, GS 15, R8..R15 16..23; the minimum for a walk is
   UNWIND_PERF_REGS_MASK (BP, SP, IP). Bits past 23 (XMM) are skipped. Returns the number of
   values consumed (popcount of mask), so that the caller can step over them. */
#define UNWIND_PERF_REGS_MASK ((1ull << 6) | (1ull << 7) | (1ull << 8))
uint32_t unwind_regs_from_perf(struct unwind_regs *regs, const uint64_t *values, uint64_t mask);

/* ---- errors ---- */

/* A problem met while reading a module: a sentence, and the byte offset in the section (or
   file) where it was met. */
struct unwind_error {
        char message[160];
        uint64_t offset;
};

/* ---- modules: one ELF file's rules ---- */

struct unwind_module;

/* Raw call frame sections, as they sit in a file (for modules made without an ELF file: tests,
   fuzzing, JIT code). Borrowed for the call only: the rules are compiled and copied. */
struct unwind_cfi_input {
        const uint8_t *eh_frame; /* .eh_frame bytes, or NULL */
        size_t eh_frame_size;
        uint64_t eh_frame_vaddr;    /* its address (for pc-relative pointers) */
        const uint8_t *debug_frame; /* .debug_frame bytes, or NULL */
        size_t debug_frame_size;
        uint64_t text_vaddr;               /* base of DW_EH_PE_textrel pointers (.text), or 0 */
        uint64_t plt_start[3], plt_end[3]; /* .plt, .plt.sec, .plt.got ranges ([start, end)) */
};

/* Compiles raw sections into a module. Returns 0 (*out set; unwind_module_close frees it) or
   -EINVAL (nothing usable: err says why and where). A damaged entry stops that entry only: the
   rules before it stay, and the module's note tells the first problem. */
int unwind_module_open_cfi(struct unwind_module **out, const struct unwind_cfi_input *cfi,
                           struct unwind_error *err);

/* A module from an ELF image in memory (data is borrowed until unwind_module_close). Its table
   is built at once. Returns 0, -EINVAL (not a 64-bit x86-64 ELF: err says why) or -ENOMEM. A
   file without call frame information is a module whose every lookup says so. */
int unwind_module_open_mem(struct unwind_module **out, const void *data, size_t size,
                           struct unwind_error *err);

/* Frees a module from unwind_module_open_cfi/open_mem; NULL is accepted. Never for a module
   that a cache owns. */
void unwind_module_close(struct unwind_module *m);

/* The load bias of a mapping of m: the runtime address of file vaddr 0, from the mapping's
   start and file offset (an MMAP2 record's addr and pgoff) and m's PT_LOAD headers: bias =
   start - pgoff - (p_vaddr - p_offset). Returns 0, or -ENOENT (no PT_LOAD maps that offset: a
   module without program headers gets start - pgoff). Loads the file if not yet loaded. */
int unwind_module_bias(struct unwind_module *m, uint64_t map_start, uint64_t pgoff, uint64_t *bias);

/* What a module is, for logs and tests. */
struct unwind_module_info {
        const char *path;        /* the file read, "" for memory; borrowed from the module */
        const char *note;        /* the first problem met ("" if none): borrowed */
        bool has_cfi;            /* some rules were found */
        bool is_from_debug_file; /* the rules came from a separate debug file (by build-id) */
        uint32_t nr_rows;        /* rows of the compiled table */
        uint32_t nr_fdes;        /* FDEs read */
        uint32_t nr_bad_fdes;    /* FDEs skipped or cut short (bad bytes, unsupported encodings) */
        uint32_t nr_expr_rows;   /* rows whose CFA or return address needs an expression */
        uint32_t nr_fp_fdes;     /* FDEs that set up rbp as a frame pointer (CFA on rbp) */
        size_t table_bytes;      /* memory of the table (rows and expression pool) */
        uint64_t build_ns;       /* time spent compiling */
};
void unwind_module_get_info(struct unwind_module *m, struct unwind_module_info *info);

/* Whether the module's code keeps frame pointers: at least half of its FDEs put the CFA on rbp,
   as -fno-omit-frame-pointer builds do (Debian's libraries: a few percent); false for a module
   without CFI. Loads the module if not yet loaded. */
bool unwind_module_has_frame_pointers(struct unwind_module *m);

/* The rule of the table row that covers a file vaddr (module-relative address, no bias), for
   tests, tools and the fuzzer. */
enum unwind_cfa_kind {
        UNWIND_CFA_NONE = 0, /* no CFI covers the address */
        UNWIND_CFA_REG,      /* CFA = r[cfa_reg] + cfa_offset */
        UNWIND_CFA_EXPR,     /* CFA = a DWARF expression (evaluated at walk time) */
        UNWIND_CFA_BAD,      /* a rule the table cannot hold: the walk stops there */
};
enum unwind_reg_kind {
        UNWIND_RULE_SAME = 0,  /* the caller's value is this frame's */
        UNWIND_RULE_UNDEFINED, /* lost; for the return address: the outermost frame */
        UNWIND_RULE_AT,        /* saved at CFA + offset */
        UNWIND_RULE_VAL,       /* the value is CFA + offset */
        UNWIND_RULE_EXPR,      /* saved at the address an expression computes (CFA pushed) */
        UNWIND_RULE_VAL_EXPR,  /* the value an expression computes (CFA pushed) */
        UNWIND_RULE_REG,       /* in another register (offset holds its number) */
        UNWIND_RULE_BAD,       /* a rule the table cannot hold */
};
struct unwind_rule_info {
        uint64_t start, end; /* file vaddrs of the row */
        enum unwind_cfa_kind cfa;
        uint8_t cfa_reg;
        int64_t cfa_offset;
        enum unwind_reg_kind ra, rbp;
        int64_t ra_offset, rbp_offset;
        bool is_signal_frame; /* the FDE's CIE has the 'S' augmentation */
};
/* Fills *info for vaddr. Returns 0, or -ENOENT when no row covers it (info->cfa is NONE and
   start/end give the gap when known). */
int unwind_module_lookup(struct unwind_module *m, uint64_t vaddr, struct unwind_rule_info *info);

/* ---- the cache: modules by identity, built once, shared by every process that maps them ---- */

struct unwind_cache;

struct unwind_cache_options {
        /* where separate debug files are looked for by build-id (debug_dir/.build-id/xx/rest.debug)
           when a file has no CFI of its own; NULL: /usr/lib/debug; "" : never */
        const char *debug_dir;
};

/* Returns 0 (*out set) or -ENOMEM. opts may be NULL. */
int unwind_cache_new(struct unwind_cache **out, const struct unwind_cache_options *opts);
/* Frees the cache and every module it holds; NULL is accepted. */
void unwind_cache_free(struct unwind_cache *c);

/* The module of a file, keyed by its build-id when one is given (an MMAP2 record's), else by
   path, size, mtime, device and inode (one stat). A file whose own build-id differs from the one
   given is another build (replaced since it was mapped): its module has no rules, and its note
   says so. Cheap: the file is read and the table built
   on the first walk that needs it (or unwind_module_bias). The module belongs to the cache and
   lives as long as it. Returns 0, or -ENOENT (the file cannot be found: no module is made, and
   the next call tries again). A file that exists but cannot be read as ELF gives a module that
   has no CFI (its note says why), so it is not read again. */
int unwind_cache_get(struct unwind_cache *c, const char *path, const uint8_t *build_id,
                     size_t build_id_size, struct unwind_module **out);

struct unwind_cache_stats {
        uint32_t nr_modules;
        uint32_t nr_loaded; /* tables built */
        size_t table_bytes; /* sum of the built tables */
        uint64_t build_ns;  /* time spent building them */
};
void unwind_cache_get_stats(const struct unwind_cache *c, struct unwind_cache_stats *st);

/* ---- the walk ---- */

/* What the caller knows of an address: the module mapped there and its load bias (runtime
   address = file vaddr + bias). */
struct unwind_map {
        struct unwind_module *module; /* borrowed */
        uint64_t bias;
};
/* Fills *map for a runtime address of the sampled process. Returns 0, or -ENOENT when no
   module with a file is mapped there (anonymous memory, JIT code, the vdso). */
typedef int (*unwind_find_map_fn)(void *ctx, uint64_t addr, struct unwind_map *map);

/* A copy of the user stack: data[0] is the byte at address base (rsp at the sample for
   PERF_SAMPLE_STACK_USER; size = its dyn_size). Borrowed for the walk. */
struct unwind_stack {
        uint64_t base;
        const uint8_t *data;
        size_t size;
};

/* Why a walk stopped. */
enum unwind_stop {
        UNWIND_STOP_THREAD_START = 0, /* the outermost frame: return address rule undefined
                                         (_start, clone's child) or 0 */
        UNWIND_STOP_STACK_END,        /* a value lies past the end of the stack copy */
        UNWIND_STOP_NO_MODULE,        /* an address in no module (the callback said so) */
        UNWIND_STOP_NO_CFI,           /* a module, but no rule covers the address */
        UNWIND_STOP_BAD_FRAME,        /* a rule it cannot use (unsupported expression, a register
                                         it does not know), or a frame that goes nowhere (the
                                         stack pointer does not grow, an address below the copy) */
        UNWIND_STOP_MAX_DEPTH,        /* the frames array is full */
        UNWIND_NR_STOPS,
};
/* A short name for each reason ("thread start", "stack end", ...). */
const char *unwind_stop_name(enum unwind_stop stop);

struct unwind_walk_options {
        /* modules or ranges without CFI: follow rbp as a frame pointer ([rbp] = caller's rbp,
           [rbp + 8] = return address) instead of stopping. Guesses: a leaf sampled before its
           prologue loses its caller; a function that uses rbp as a general register ends the
           walk with BAD_FRAME or STACK_END. */
        bool use_fp_fallback;
};

struct unwind_result {
        uint32_t nr_frames;        /* frames written: frames[0] is the sampled ip, then return
                                      addresses, as a perf callchain's user part */
        enum unwind_stop stop;     /* why it stopped */
        uint64_t stop_addr;        /* the address whose frame could not be unwound (for
                                      NO_MODULE, NO_CFI, BAD_FRAME), else 0 */
        uint32_t nr_fp_frames;     /* frames found by the frame-pointer fallback */
        uint32_t nr_signal_frames; /* signal frames crossed */
};

/* Walks the stack: regs holds at least ip, sp and bp (unwind_regs_set, unwind_regs_from_perf).
   Writes up to max_frames addresses to frames. Always returns with *res filled; the frames
   found before a stop are kept. opts may be NULL. Returns res->nr_frames. */
uint32_t unwind_walk(const struct unwind_regs *regs, const struct unwind_stack *stack,
                     unwind_find_map_fn find_map, void *ctx, const struct unwind_walk_options *opts,
                     uint64_t *frames, uint32_t max_frames, struct unwind_result *res);

#endif
