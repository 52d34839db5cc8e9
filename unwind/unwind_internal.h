/* SPDX-License-Identifier: MIT */
/* unwind_internal.h: the compiled table of one module (the format doc/unwind.md describes), the
   CFI compiler that fills it, the expression evaluator and the module record the cache keeps. */
#ifndef ETWTOP_UNWIND_INTERNAL_H
#define ETWTOP_UNWIND_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <string.h>

#include "unwind/unwind.h"

/* One row's rules (12 bytes). Offsets are in bytes. The reg kinds are enum unwind_reg_kind; for
   UNWIND_RULE_EXPR and VAL_EXPR the offset field is an offset into the table's expression pool
   (unsigned, as a uint16_t for ra and rbp, a uint32_t for the CFA); for UNWIND_RULE_REG it is the
   DWARF register number. */
struct uw_rule {
        int32_t cfa_off;   /* CFA_REG: CFA = r[cfa_reg] + cfa_off; CFA_EXPR: pool offset */
        int16_t ra_off;    /* the return address: AT/VAL: CFA + ra_off (-8 on x86-64) */
        int16_t rbp_off;   /* rbp: AT/VAL: CFA + rbp_off */
        uint8_t cfa_reg;   /* DWARF register number */
        uint8_t cfa_kind;  /* enum unwind_cfa_kind */
        uint8_t reg_kinds; /* ra kind in bits 0-3, rbp kind in bits 4-7 */
        uint8_t flags;     /* UW_FLAG_* */
};
_Static_assert(sizeof(struct uw_rule) == 12, "a table rule is 12 bytes");

#define UW_FLAG_SIGNAL 0x01 /* the CIE's 'S': a signal trampoline, the caller's ip is exact */

#define UW_RA_KIND(r)  ((enum unwind_reg_kind)((r)->reg_kinds & 0x0f))
#define UW_RBP_KIND(r) ((enum unwind_reg_kind)((r)->reg_kinds >> 4))

/* The sorted table: row i covers file vaddrs [base + starts[i], base + starts[i + 1]); the last
   row is always a CFA_NONE row that ends the table, so a lookup needs no bounds check past it. */
struct uw_table {
        uint64_t base;
        uint32_t nr_rows;
        uint32_t *starts;      /* owned, nr_rows */
        struct uw_rule *rules; /* owned, nr_rows */
        /* a coarse index: the row that covers the start of each 2^block_shift-byte block, so that
           a lookup searches a few rows (at most one entry per row: blocks grow to fit) */
        uint32_t *block_first; /* owned, nr_blocks + 1 */
        uint32_t nr_blocks;
        uint8_t block_shift;
        uint8_t *pool; /* owned: expressions, each a uleb128 length then its bytes */
        uint32_t pool_size;
        /* what the compiler met */
        uint32_t nr_fdes, nr_bad_fdes, nr_expr_rows;
        uint32_t nr_fp_fdes; /* FDEs with a row whose CFA is rbp-based: a frame pointer kept */
        char note[160];      /* the first problem, with its section offset; "" if none */
};

/* Compiles cfi into *t (zeroed first). Returns 0, or -EINVAL when the sections hold no rule at
   all (t is then empty but valid, err says why). */
int uw_table_build(struct uw_table *t, const struct unwind_cfi_input *cfi,
                   struct unwind_error *err);
void uw_table_release(struct uw_table *t);

/* The row covering a file vaddr, or NULL (outside the table, or a CFA_NONE row). *index gets the
   row's index either way (UINT32_MAX when outside). */
const struct uw_rule *uw_table_find(const struct uw_table *t, uint64_t vaddr, uint32_t *index);

/* The expression at a pool offset: its bytes and length. Returns false for a bad offset. */
bool uw_table_expr(const struct uw_table *t, uint32_t off, const uint8_t **ops, size_t *len);

/* Reads 8 bytes at addr from the stack copy. Returns 0, -ERANGE (past the copy's end) or -EFAULT
   (below its base). Inline: a frame makes two or three. */
static inline int uw_stack_read(const struct unwind_stack *s, uint64_t addr, uint64_t *value)
{
        if (addr < s->base)
                return -EFAULT;
        uint64_t off = addr - s->base;
        if (off > s->size || s->size - off < 8)
                return addr > UINT64_MAX - 8 ? -EFAULT : -ERANGE;
        memcpy(value, s->data + off, 8);
        return 0;
}

/* Evaluates a DWARF expression (the subset CFI uses: constants, breg, deref, arithmetic,
   comparisons, branches) over regs and the stack copy; push, when not NULL, is pushed first
   (the CFA, for register rules). Returns 0 (*out set), -ERANGE/-EFAULT (a read outside the
   copy, as uw_stack_read), -ENOENT (a register not known), -ENOTSUP (an operation outside the
   subset) or -EINVAL (malformed). */
int uw_expr_eval(const uint8_t *ops, size_t len, const struct unwind_regs *regs,
                 const struct unwind_stack *stack, const uint64_t *push, uint64_t *out);

#define UW_MEMO_BITS  8
#define UW_MEMO_SLOTS (1u << UW_MEMO_BITS)

/* A PT_LOAD header, for load biases. */
struct uw_load {
        uint64_t vaddr, offset, filesz;
};

struct unwind_module {
        char *path; /* owned: the file to read ("" for memory) */
        char *key;  /* owned: the cache key, NULL when not in a cache */
        uint64_t key_hash;
        const char *debug_dir;     /* borrowed from the cache's options, or NULL */
        uint8_t want_build_id[20]; /* the build-id it was asked by (a mapping's): the file must
                                      have it, else it is another build and gives no rules */
        uint8_t want_build_id_size;
        bool is_loaded;
        bool is_from_debug_file;
        const void *mem; /* borrowed: the ELF image of unwind_module_open_mem */
        size_t mem_size;
        struct uw_table table;
        /* the rows walks found lately, by file offset: the same return addresses come back
           sample after sample, and a hit skips the search (direct-mapped; index + 1, 0 empty) */
        struct {
                uint32_t off;
                uint32_t index_plus1;
        } memo[UW_MEMO_SLOTS];
        struct uw_load *loads; /* owned */
        uint32_t nr_loads;
        uint64_t build_ns;
        char note[160];
};

/* Reads the module's file (or memory image) and builds its table, once. */
void uw_module_load(struct unwind_module *m);

#endif
