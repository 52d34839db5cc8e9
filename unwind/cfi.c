/* SPDX-License-Identifier: MIT */
/* cfi.c: the CFI compiler: reads the CIEs and FDEs of .eh_frame and .debug_frame (DWARF 5
   section 6.4, LSB 5.0 "Exception Frames"), runs each FDE's call frame program once and keeps
   the rows as a sorted table of compact rules (CFA, return address, rbp); and the table's
   lookup. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unwind_internal.h"
#include "util/xalloc.h"

/* DW_EH_PE_* pointer encodings (LSB 5.0, 10.5 "DWARF Exception Header Encoding") */
#define DW_EH_PE_absptr  0x00
#define DW_EH_PE_uleb128 0x01
#define DW_EH_PE_udata2  0x02
#define DW_EH_PE_udata4  0x03
#define DW_EH_PE_udata8  0x04
#define DW_EH_PE_sleb128 0x09
#define DW_EH_PE_sdata2  0x0a
#define DW_EH_PE_sdata4  0x0b
#define DW_EH_PE_sdata8  0x0c
#define DW_EH_PE_pcrel   0x10
#define DW_EH_PE_textrel 0x20
#define DW_EH_PE_omit    0xff

/* DW_CFA_* (DWARF 5, 7.24) */
#define DW_CFA_advance_loc        0x40
#define DW_CFA_offset             0x80
#define DW_CFA_restore            0xc0
#define DW_CFA_nop                0x00
#define DW_CFA_set_loc            0x01
#define DW_CFA_advance_loc1       0x02
#define DW_CFA_advance_loc2       0x03
#define DW_CFA_advance_loc4       0x04
#define DW_CFA_offset_extended    0x05
#define DW_CFA_restore_extended   0x06
#define DW_CFA_undefined          0x07
#define DW_CFA_same_value         0x08
#define DW_CFA_register           0x09
#define DW_CFA_remember_state     0x0a
#define DW_CFA_restore_state      0x0b
#define DW_CFA_def_cfa            0x0c
#define DW_CFA_def_cfa_register   0x0d
#define DW_CFA_def_cfa_offset     0x0e
#define DW_CFA_def_cfa_expression 0x0f
#define DW_CFA_expression         0x10
#define DW_CFA_offset_extended_sf 0x11
#define DW_CFA_def_cfa_sf         0x12
#define DW_CFA_def_cfa_offset_sf  0x13
#define DW_CFA_val_offset         0x14
#define DW_CFA_val_offset_sf      0x15
#define DW_CFA_val_expression     0x16
#define DW_CFA_GNU_args_size      0x2e
#define DW_CFA_GNU_neg_offset_ext 0x2f

#define MAX_REMEMBER 16  /* nested remember_state; GCC uses one or two */
#define MAX_EXPR     255 /* longer expressions are not CFI anyone writes: the rule is BAD */

/* A bounded reader over one section. */
struct rd {
        const uint8_t *sec; /* the section's first byte */
        const uint8_t *p, *end;
        bool is_bad;
};

static uint64_t rd_n(struct rd *r, unsigned n)
{
        if (r->is_bad || (size_t)(r->end - r->p) < n) {
                r->is_bad = true;
                r->p = r->end;
                return 0;
        }
        uint64_t v = 0;
        for (unsigned i = 0; i < n; i++)
                v |= (uint64_t)r->p[i] << (8 * i);
        r->p += n;
        return v;
}

static uint64_t rd_uleb(struct rd *r)
{
        uint64_t v = 0;
        unsigned shift = 0;
        while (!r->is_bad) {
                if (r->p >= r->end) {
                        r->is_bad = true;
                        break;
                }
                uint8_t b = *r->p++;
                if (shift < 64)
                        v |= (uint64_t)(b & 0x7f) << shift;
                shift += 7;
                if (!(b & 0x80))
                        break;
        }
        return v;
}

static int64_t rd_sleb(struct rd *r)
{
        uint64_t v = 0;
        unsigned shift = 0;
        uint8_t b = 0;
        while (!r->is_bad) {
                if (r->p >= r->end) {
                        r->is_bad = true;
                        return 0;
                }
                b = *r->p++;
                if (shift < 64)
                        v |= (uint64_t)(b & 0x7f) << shift;
                shift += 7;
                if (!(b & 0x80))
                        break;
        }
        if (shift < 64 && (b & 0x40))
                v |= ~0ull << shift;
        return (int64_t)v;
}

/* What the compiler knows of the section it reads. */
struct sec {
        const uint8_t *data;
        size_t size;
        uint64_t vaddr;
        bool is_eh; /* .eh_frame (else .debug_frame) */
        uint64_t text_vaddr;
};

/* An encoded pointer. Returns false for an encoding it does not take (datarel, funcrel,
   aligned, indirect) or bad bytes. */
static bool rd_ptr(struct rd *r, const struct sec *s, uint8_t enc, unsigned addr_size,
                   uint64_t *out)
{
        uint64_t field = s->vaddr + (uint64_t)(r->p - r->sec);
        uint64_t v;
        switch (enc & 0x0f) {
        case DW_EH_PE_absptr: v = rd_n(r, addr_size); break;
        case DW_EH_PE_uleb128: v = rd_uleb(r); break;
        case DW_EH_PE_udata2: v = rd_n(r, 2); break;
        case DW_EH_PE_udata4: v = rd_n(r, 4); break;
        case DW_EH_PE_udata8: v = rd_n(r, 8); break;
        case DW_EH_PE_sleb128: v = (uint64_t)rd_sleb(r); break;
        case DW_EH_PE_sdata2: v = (uint64_t)(int64_t)(int16_t)rd_n(r, 2); break;
        case DW_EH_PE_sdata4: v = (uint64_t)(int64_t)(int32_t)rd_n(r, 4); break;
        case DW_EH_PE_sdata8: v = rd_n(r, 8); break;
        default: return false;
        }
        if (r->is_bad)
                return false;
        switch (enc & 0x70) {
        case 0: break;
        case DW_EH_PE_pcrel: v += field; break;
        case DW_EH_PE_textrel: v += s->text_vaddr; break;
        default: return false;
        }
        if (enc & 0x80)
                return false; /* indirect: the value is in memory we do not have */
        if (addr_size == 4 && (enc & 0x0f) == DW_EH_PE_absptr)
                v &= 0xffffffffull;
        *out = v;
        return true;
}

struct cie {
        size_t offset; /* in the section, for the cache */
        uint64_t code_align;
        int64_t data_align;
        uint64_t ra_reg;
        uint8_t fde_enc;
        uint8_t addr_size;
        bool has_aug_data; /* 'z' */
        bool is_signal;    /* 'S' */
        const uint8_t *insns, *insns_end;
};

/* A register's rule while the program runs. */
struct reg_rule {
        uint8_t kind; /* enum unwind_reg_kind */
        int64_t off;  /* AT/VAL: bytes from the CFA; REG: the register */
        const uint8_t *expr;
        uint64_t expr_len;
};

struct frame_state {
        uint8_t cfa_kind; /* UNWIND_CFA_REG or UNWIND_CFA_EXPR */
        uint64_t cfa_reg;
        int64_t cfa_off;
        const uint8_t *cfa_expr;
        uint64_t cfa_expr_len;
        struct reg_rule ra, rbp;
};

/* A row before the merge: its range, its rule, and the order it was read in (first wins). */
struct pending {
        uint64_t start, end;
        uint32_t seq;
        struct uw_rule rule;
};

/* The compiler's working state. */
struct build {
        struct uw_table *t;
        struct pending *rows;
        size_t nr_rows, cap_rows;
        uint8_t *pool;
        size_t pool_size, pool_cap;
        /* recently pooled expressions: a program's rows share theirs */
        const uint8_t *recent_expr[8];
        uint32_t recent_off[8];
        unsigned recent_next;
        struct cie cie; /* the last CIE read */
        bool has_cie;
        bool is_fp_frame; /* a row of the FDE being read has its CFA on rbp */
};

static void note(struct uw_table *t, const struct sec *s, size_t off, const char *what)
{
        if (!t->note[0])
                snprintf(t->note, sizeof(t->note), "%s at byte offset %zu of %s", what, off,
                         s->is_eh ? ".eh_frame" : ".debug_frame");
}

/* The pool offset of an expression (appended once), or UINT32_MAX when it cannot be kept. */
static uint32_t pool_add(struct build *b, const uint8_t *expr, uint64_t len)
{
        for (unsigned i = 0; i < 8; i++)
                if (b->recent_expr[i] == expr)
                        return b->recent_off[i];
        if (len > MAX_EXPR || b->pool_size + 2 + len > INT32_MAX)
                return UINT32_MAX;
        if (b->pool_size + 2 + len > b->pool_cap) {
                b->pool_cap = (b->pool_cap + 2 + len) * 2;
                b->pool = xrealloc(b->pool, b->pool_cap);
        }
        uint32_t off = (uint32_t)b->pool_size;
        uint8_t *p = b->pool + b->pool_size;
        if (len < 0x80) {
                *p++ = (uint8_t)len;
        } else {
                *p++ = (uint8_t)(0x80 | (len & 0x7f));
                *p++ = (uint8_t)(len >> 7);
        }
        memcpy(p, expr, len);
        b->pool_size = (size_t)(p - b->pool) + len;
        b->recent_expr[b->recent_next] = expr;
        b->recent_off[b->recent_next] = off;
        b->recent_next = (b->recent_next + 1) % 8;
        return off;
}

/* A register rule in the row's compact form: its kind and 16-bit field. */
static uint8_t compact_reg(struct build *b, const struct reg_rule *r, int16_t *field)
{
        *field = 0;
        switch (r->kind) {
        case UNWIND_RULE_SAME:
        case UNWIND_RULE_UNDEFINED: return r->kind;
        case UNWIND_RULE_AT:
        case UNWIND_RULE_VAL:
        case UNWIND_RULE_REG:
                if (r->off < INT16_MIN || r->off > INT16_MAX)
                        return UNWIND_RULE_BAD;
                *field = (int16_t)r->off;
                return r->kind;
        case UNWIND_RULE_EXPR:
        case UNWIND_RULE_VAL_EXPR: {
                uint32_t off = pool_add(b, r->expr, r->expr_len);
                if (off > UINT16_MAX)
                        return UNWIND_RULE_BAD;
                *field = (int16_t)(uint16_t)off;
                return r->kind;
        }
        default: return UNWIND_RULE_BAD;
        }
}

static void add_row(struct build *b, uint64_t start, uint64_t end, const struct frame_state *st,
                    bool is_signal)
{
        if (end <= start)
                return;
        struct uw_rule rule = {0};
        if (st->cfa_kind == UNWIND_CFA_REG) {
                if (st->cfa_reg < UNWIND_NR_REGS && st->cfa_off >= INT32_MIN &&
                    st->cfa_off <= INT32_MAX) {
                        rule.cfa_kind = UNWIND_CFA_REG;
                        rule.cfa_reg = (uint8_t)st->cfa_reg;
                        rule.cfa_off = (int32_t)st->cfa_off;
                        b->is_fp_frame |= st->cfa_reg == UNWIND_REG_RBP;
                } else {
                        rule.cfa_kind = UNWIND_CFA_BAD;
                }
        } else {
                uint32_t off = pool_add(b, st->cfa_expr, st->cfa_expr_len);
                rule.cfa_kind = off > INT32_MAX ? UNWIND_CFA_BAD : UNWIND_CFA_EXPR;
                rule.cfa_off = off > INT32_MAX ? 0 : (int32_t)off;
        }
        int16_t ra_field, rbp_field;
        uint8_t ra = compact_reg(b, &st->ra, &ra_field);
        uint8_t rbp = compact_reg(b, &st->rbp, &rbp_field);
        rule.ra_off = ra_field;
        rule.rbp_off = rbp_field;
        rule.reg_kinds = (uint8_t)(ra | rbp << 4);
        rule.flags = is_signal ? UW_FLAG_SIGNAL : 0;
        if (rule.cfa_kind == UNWIND_CFA_EXPR || ra == UNWIND_RULE_EXPR ||
            ra == UNWIND_RULE_VAL_EXPR)
                b->t->nr_expr_rows++;

        /* the same rule as the row before, contiguous: one row */
        if (b->nr_rows) {
                struct pending *last = &b->rows[b->nr_rows - 1];
                if (last->end == start && memcmp(&last->rule, &rule, sizeof(rule)) == 0) {
                        last->end = end;
                        return;
                }
        }
        if (b->nr_rows == b->cap_rows) {
                b->cap_rows = b->cap_rows ? b->cap_rows * 2 : 256;
                b->rows = xrealloc(b->rows, b->cap_rows * sizeof(*b->rows));
        }
        b->rows[b->nr_rows] = (struct pending){start, end, (uint32_t)b->nr_rows, rule};
        b->nr_rows++;
}

/* A factored offset: hostile factors wrap rather than overflow. */
static int64_t factored(uint64_t v, int64_t align)
{
        return (int64_t)(v * (uint64_t)align);
}

/* The rule of one column: rbp and the return address are kept, the others only parsed. */
static struct reg_rule *column(struct frame_state *st, const struct cie *cie, uint64_t reg)
{
        if (reg == cie->ra_reg)
                return &st->ra;
        if (reg == UNWIND_REG_RBP)
                return &st->rbp;
        return NULL;
}

/* The rule DW_CFA_restore gives a column: the CIE's. */
static void restore(struct frame_state *st, const struct frame_state *initial,
                    const struct cie *cie, uint64_t reg)
{
        if (reg == cie->ra_reg)
                st->ra = initial->ra;
        else if (reg == UNWIND_REG_RBP)
                st->rbp = initial->rbp;
}

/* Runs a call frame program over st. For an FDE (fde_end != 0) each advance of the location
   emits the row before it; the CIE's initial instructions run with fde_end = 0 and may not
   advance. Returns 0, or -EINVAL with *bad_at the offending byte. */
static int run_program(struct build *b, const struct sec *s, const struct cie *cie,
                       const uint8_t *insns, const uint8_t *insns_end, struct frame_state *st,
                       const struct frame_state *initial, uint64_t *loc, uint64_t fde_end,
                       const uint8_t **bad_at)
{
        struct rd r = {s->data, insns, insns_end, false};
        struct frame_state stack[MAX_REMEMBER];
        unsigned depth = 0;

        while (r.p < r.end) {
                const uint8_t *at = r.p;
                uint8_t op = (uint8_t)rd_n(&r, 1);
                uint64_t reg = 0, delta = 0, new_loc = 0;
                bool is_advance = false;
                struct reg_rule *rule;

                switch (op & 0xc0) {
                case DW_CFA_advance_loc:
                        delta = (uint64_t)(op & 0x3f) * cie->code_align;
                        is_advance = true;
                        break;
                case DW_CFA_offset:
                        reg = op & 0x3f;
                        delta = rd_uleb(&r);
                        if ((rule = column(st, cie, reg)))
                                *rule = (struct reg_rule){
                                        UNWIND_RULE_AT, factored(delta, cie->data_align), NULL, 0};
                        break;
                case DW_CFA_restore:
                        reg = op & 0x3f;
                        if (!initial)
                                goto bad;
                        restore(st, initial, cie, reg);
                        break;
                default:
                        switch (op) {
                        case DW_CFA_nop: break;
                        case DW_CFA_set_loc:
                                if (!rd_ptr(&r, s, cie->fde_enc, cie->addr_size, &new_loc) ||
                                    new_loc < *loc)
                                        goto bad;
                                delta = new_loc - *loc;
                                is_advance = true;
                                break;
                        case DW_CFA_advance_loc1:
                                delta = rd_n(&r, 1) * cie->code_align;
                                is_advance = true;
                                break;
                        case DW_CFA_advance_loc2:
                                delta = rd_n(&r, 2) * cie->code_align;
                                is_advance = true;
                                break;
                        case DW_CFA_advance_loc4:
                                delta = rd_n(&r, 4) * cie->code_align;
                                is_advance = true;
                                break;
                        case DW_CFA_offset_extended:
                        case DW_CFA_val_offset:
                        case DW_CFA_GNU_neg_offset_ext:
                                reg = rd_uleb(&r);
                                delta = rd_uleb(&r);
                                if ((rule = column(st, cie, reg))) {
                                        int64_t off = factored(delta, cie->data_align);
                                        if (op == DW_CFA_GNU_neg_offset_ext)
                                                off = (int64_t)(0 - (uint64_t)off);
                                        *rule = (struct reg_rule){op == DW_CFA_val_offset
                                                                          ? UNWIND_RULE_VAL
                                                                          : UNWIND_RULE_AT,
                                                                  off, NULL, 0};
                                }
                                break;
                        case DW_CFA_offset_extended_sf:
                        case DW_CFA_val_offset_sf:
                                reg = rd_uleb(&r);
                                if ((rule = column(st, cie, reg)))
                                        *rule = (struct reg_rule){
                                                op == DW_CFA_val_offset_sf ? UNWIND_RULE_VAL
                                                                           : UNWIND_RULE_AT,
                                                (int64_t)((uint64_t)rd_sleb(&r) *
                                                          (uint64_t)cie->data_align),
                                                NULL, 0};
                                else
                                        rd_sleb(&r);
                                break;
                        case DW_CFA_restore_extended:
                                reg = rd_uleb(&r);
                                if (!initial)
                                        goto bad;
                                restore(st, initial, cie, reg);
                                break;
                        case DW_CFA_undefined:
                        case DW_CFA_same_value:
                                reg = rd_uleb(&r);
                                if ((rule = column(st, cie, reg)))
                                        *rule = (struct reg_rule){op == DW_CFA_undefined
                                                                          ? UNWIND_RULE_UNDEFINED
                                                                          : UNWIND_RULE_SAME,
                                                                  0, NULL, 0};
                                break;
                        case DW_CFA_register:
                                reg = rd_uleb(&r);
                                delta = rd_uleb(&r);
                                if ((rule = column(st, cie, reg)))
                                        *rule = (struct reg_rule){delta < UNWIND_NR_REGS
                                                                          ? UNWIND_RULE_REG
                                                                          : UNWIND_RULE_BAD,
                                                                  (int64_t)delta, NULL, 0};
                                break;
                        case DW_CFA_remember_state:
                                if (depth == MAX_REMEMBER)
                                        goto bad;
                                stack[depth++] = *st;
                                break;
                        case DW_CFA_restore_state:
                                if (!depth)
                                        goto bad;
                                /* the CFA is restored too, as GCC and libgcc expect */
                                *st = stack[--depth];
                                break;
                        case DW_CFA_def_cfa:
                                st->cfa_kind = UNWIND_CFA_REG;
                                st->cfa_reg = rd_uleb(&r);
                                st->cfa_off = (int64_t)rd_uleb(&r);
                                break;
                        case DW_CFA_def_cfa_sf:
                                st->cfa_kind = UNWIND_CFA_REG;
                                st->cfa_reg = rd_uleb(&r);
                                st->cfa_off = (int64_t)((uint64_t)rd_sleb(&r) *
                                                        (uint64_t)cie->data_align);
                                break;
                        case DW_CFA_def_cfa_register:
                                st->cfa_reg = rd_uleb(&r);
                                if (st->cfa_kind != UNWIND_CFA_REG)
                                        goto bad;
                                break;
                        case DW_CFA_def_cfa_offset:
                                st->cfa_off = (int64_t)rd_uleb(&r);
                                if (st->cfa_kind != UNWIND_CFA_REG)
                                        goto bad;
                                break;
                        case DW_CFA_def_cfa_offset_sf:
                                st->cfa_off = (int64_t)((uint64_t)rd_sleb(&r) *
                                                        (uint64_t)cie->data_align);
                                if (st->cfa_kind != UNWIND_CFA_REG)
                                        goto bad;
                                break;
                        case DW_CFA_def_cfa_expression:
                                delta = rd_uleb(&r);
                                if (r.is_bad || delta > (uint64_t)(r.end - r.p))
                                        goto bad;
                                st->cfa_kind = UNWIND_CFA_EXPR;
                                st->cfa_expr = r.p;
                                st->cfa_expr_len = delta;
                                r.p += delta;
                                break;
                        case DW_CFA_expression:
                        case DW_CFA_val_expression:
                                reg = rd_uleb(&r);
                                delta = rd_uleb(&r);
                                if (r.is_bad || delta > (uint64_t)(r.end - r.p))
                                        goto bad;
                                if ((rule = column(st, cie, reg)))
                                        *rule = (struct reg_rule){op == DW_CFA_expression
                                                                          ? UNWIND_RULE_EXPR
                                                                          : UNWIND_RULE_VAL_EXPR,
                                                                  0, r.p, delta};
                                r.p += delta;
                                break;
                        case DW_CFA_GNU_args_size: rd_uleb(&r); break;
                        default: goto bad; /* an operation of another architecture or vendor */
                        }
                }
                if (r.is_bad)
                        goto bad;
                if (is_advance) {
                        if (!fde_end)
                                goto bad; /* a CIE's initial instructions do not advance */
                        uint64_t next = *loc + delta;
                        if (next < *loc || next > fde_end)
                                next = fde_end;
                        add_row(b, *loc, next, st, cie->is_signal);
                        *loc = next;
                }
                continue;
        bad:
                *bad_at = at;
                return -EINVAL;
        }
        return 0;
}

/* Reads the CIE at offset off (cached: FDEs share a few). Returns 0 or -EINVAL. */
static int read_cie(struct build *b, const struct sec *s, size_t off, const struct cie **out,
                    size_t *bad_off)
{
        if (b->has_cie && b->cie.offset == off) {
                *out = &b->cie;
                return 0;
        }
        *bad_off = off;
        struct rd r = {s->data, s->data + off, s->data + s->size, false};
        if (off >= s->size)
                return -EINVAL;
        uint64_t len = rd_n(&r, 4);
        unsigned id_size = 4;
        if (len == 0xffffffffull) {
                len = rd_n(&r, 8);
                id_size = 8;
        }
        if (r.is_bad || len > (uint64_t)(r.end - r.p) || len < id_size)
                return -EINVAL;
        r.end = r.p + len;
        uint64_t id = rd_n(&r, id_size);
        uint64_t cie_id = s->is_eh ? 0 : (id_size == 4 ? 0xffffffffull : ~0ull);
        if (id != cie_id)
                return -EINVAL;

        struct cie c = {0};
        c.offset = off;
        c.addr_size = 8;
        c.fde_enc = DW_EH_PE_absptr;
        uint8_t version = (uint8_t)rd_n(&r, 1);
        if (version != 1 && version != 3 && version != 4)
                return -EINVAL;
        const uint8_t *aug = r.p;
        while (r.p < r.end && *r.p)
                r.p++;
        if (r.p >= r.end)
                return -EINVAL;
        const uint8_t *aug_end = r.p++;
        if (version == 4) {
                c.addr_size = (uint8_t)rd_n(&r, 1);
                if (rd_n(&r, 1) != 0 || (c.addr_size != 4 && c.addr_size != 8))
                        return -EINVAL; /* segment selectors */
        }
        c.code_align = rd_uleb(&r);
        c.data_align = rd_sleb(&r);
        c.ra_reg = version == 1 ? rd_n(&r, 1) : rd_uleb(&r);
        if (aug < aug_end && *aug == 'z') {
                c.has_aug_data = true;
                uint64_t aug_len = rd_uleb(&r);
                if (r.is_bad || aug_len > (uint64_t)(r.end - r.p))
                        return -EINVAL;
                struct rd a = {s->data, r.p, r.p + aug_len, false};
                for (const uint8_t *q = aug + 1; q < aug_end; q++) {
                        if (*q == 'R') {
                                c.fde_enc = (uint8_t)rd_n(&a, 1);
                        } else if (*q == 'L') {
                                rd_n(&a, 1);
                        } else if (*q == 'P') {
                                uint64_t ignored;
                                uint8_t enc = (uint8_t)rd_n(&a, 1);
                                /* an indirect or datarel personality is skipped by size */
                                if (!rd_ptr(&a, s, (uint8_t)(enc & 0x0f), 8, &ignored))
                                        break; /* the rest is skipped with the length */
                        } else if (*q == 'S') {
                                c.is_signal = true;
                        } else {
                                break; /* 'B', 'G' ...: the length lets us step over them */
                        }
                }
                if (a.is_bad)
                        return -EINVAL;
                r.p += aug_len;
        } else if (aug < aug_end) {
                return -EINVAL; /* "eh" and other pre-'z' augmentations */
        }
        if (r.is_bad || c.code_align == 0)
                return -EINVAL;
        c.insns = r.p;
        c.insns_end = r.end;
        b->cie = c;
        b->has_cie = true;
        *out = &b->cie;
        return 0;
}

/* The state every program starts from on x86-64 before its CIE's instructions: the CFA is
   rsp + 8, the return address at CFA - 8, rbp keeps its value (callee-saved; what libgcc and
   libdw's x86-64 ABI defaults assume). */
static void abi_initial(struct frame_state *st)
{
        memset(st, 0, sizeof(*st));
        st->cfa_kind = UNWIND_CFA_REG;
        st->cfa_reg = UNWIND_REG_RSP;
        st->cfa_off = 8;
        st->ra = (struct reg_rule){UNWIND_RULE_AT, -8, NULL, 0};
        st->rbp = (struct reg_rule){UNWIND_RULE_SAME, 0, NULL, 0};
}

/* Reads every entry of one section. */
static void read_section(struct build *b, const struct sec *s)
{
        struct uw_table *t = b->t;
        size_t off = 0;
        b->has_cie = false;

        while (off + 4 <= s->size) {
                struct rd r = {s->data, s->data + off, s->data + s->size, false};
                uint64_t len = rd_n(&r, 4);
                unsigned id_size = 4;
                if (len == 0) {
                        if (s->is_eh)
                                break; /* the terminator */
                        off += 4;
                        continue;
                }
                if (len == 0xffffffffull) {
                        len = rd_n(&r, 8);
                        id_size = 8;
                }
                if (r.is_bad || len > (uint64_t)(r.end - r.p) || len < id_size) {
                        note(t, s, off, "an entry's length runs past the section");
                        t->nr_bad_fdes++;
                        break;
                }
                const uint8_t *entry_end = r.p + len;
                size_t next = (size_t)(entry_end - s->data);
                const uint8_t *id_at = r.p;
                uint64_t id = rd_n(&r, id_size);
                uint64_t cie_id = s->is_eh ? 0 : (id_size == 4 ? 0xffffffffull : ~0ull);
                if (id == cie_id) {
                        off = next;
                        continue;
                }
                /* an FDE: find its CIE */
                t->nr_fdes++;
                size_t cie_off;
                if (s->is_eh) {
                        if (id > (uint64_t)(id_at - s->data)) {
                                note(t, s, off, "an FDE's CIE pointer is outside the section");
                                t->nr_bad_fdes++;
                                off = next;
                                continue;
                        }
                        cie_off = (size_t)(id_at - s->data) - (size_t)id;
                } else {
                        cie_off = id < s->size ? (size_t)id : SIZE_MAX;
                }
                const struct cie *cie;
                size_t bad_off;
                if (cie_off == SIZE_MAX || read_cie(b, s, cie_off, &cie, &bad_off) < 0) {
                        note(t, s, cie_off == SIZE_MAX ? off : bad_off,
                             "a CIE cannot be read or uses what is not supported");
                        t->nr_bad_fdes++;
                        off = next;
                        continue;
                }
                r.end = entry_end;
                uint64_t pc_begin, pc_range;
                uint8_t enc = s->is_eh ? cie->fde_enc : DW_EH_PE_absptr;
                if (!rd_ptr(&r, s, enc, cie->addr_size, &pc_begin) ||
                    !rd_ptr(&r, s, (uint8_t)(enc & 0x0f), cie->addr_size, &pc_range)) {
                        note(t, s, off, "an FDE's address range cannot be read");
                        t->nr_bad_fdes++;
                        off = next;
                        continue;
                }
                if (cie->has_aug_data) {
                        uint64_t aug_len = rd_uleb(&r);
                        if (r.is_bad || aug_len > (uint64_t)(r.end - r.p)) {
                                note(t, s, off, "an FDE's augmentation runs past it");
                                t->nr_bad_fdes++;
                                off = next;
                                continue;
                        }
                        r.p += aug_len;
                }
                /* FDEs of code the linker discarded keep a zero start */
                if (pc_range == 0 || pc_begin == 0 || pc_begin + pc_range < pc_begin) {
                        off = next;
                        continue;
                }
                uint64_t pc_end = pc_begin + pc_range;
                struct frame_state st, initial;
                const uint8_t *bad_at = NULL;
                uint64_t loc = pc_begin;
                abi_initial(&st);
                struct cie c = *cie; /* the cache entry may be replaced while the FDE runs */
                if (run_program(b, s, &c, c.insns, c.insns_end, &st, NULL, &loc, 0, &bad_at) < 0) {
                        note(t, s, (size_t)(bad_at - s->data),
                             "a CIE's initial instruction is not supported");
                        t->nr_bad_fdes++;
                        off = next;
                        continue;
                }
                initial = st;
                b->is_fp_frame = false;
                if (run_program(b, s, &c, r.p, entry_end, &st, &initial, &loc, pc_end, &bad_at) <
                    0) {
                        note(t, s, (size_t)(bad_at - s->data),
                             "an FDE's instruction is not supported or malformed");
                        t->nr_bad_fdes++;
                        /* the rows before it stay; the rest of the FDE is unknown */
                        off = next;
                        continue;
                }
                add_row(b, loc, pc_end, &st, c.is_signal);
                t->nr_fp_fdes += b->is_fp_frame;
                off = next;
        }
}

static int pending_cmp(const void *a, const void *b)
{
        const struct pending *x = a, *y = b;
        if (x->start != y->start)
                return x->start < y->start ? -1 : 1;
        return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* PLT sections without an FDE get the stub's rule: the return address at rsp (CFA = rsp + 8),
   exact at a stub's first instruction, where nearly every sample in a PLT lands. */
static void add_plt_rows(struct build *b, const struct unwind_cfi_input *cfi)
{
        struct frame_state st;
        abi_initial(&st);
        size_t nr_before = b->nr_rows;
        for (int i = 0; i < 3; i++) {
                uint64_t start = cfi->plt_start[i], end = cfi->plt_end[i];
                bool is_covered = false;
                if (start >= end)
                        continue;
                for (size_t j = 0; j < nr_before && !is_covered; j++)
                        is_covered = b->rows[j].start < end && b->rows[j].end > start;
                if (!is_covered)
                        add_row(b, start, end, &st, false);
        }
}

/* Sorts the rows by start (then by the order they were read). Each FDE's rows come in order,
   and so do most FDEs: the runs of ordered rows are merged pairwise, a pass per doubling (libc:
   28,000 rows in a few hundred runs). A qsort of every row where runs overlapped (.eh_frame
   and .debug_frame both, or a section out of order) was half of a table's build. */
static void sort_rows(struct build *b)
{
        size_t nr = b->nr_rows, nr_runs = 0;
        if (nr < 2)
                return;
        uint32_t *ends = xmalloc((nr + 1) * sizeof(*ends)); /* run r: [ends[r - 1], ends[r]) */
        for (size_t i = 1; i < nr; i++)
                if (pending_cmp(&b->rows[i - 1], &b->rows[i]) > 0)
                        ends[nr_runs++] = (uint32_t)i;
        ends[nr_runs++] = (uint32_t)nr;
        if (nr_runs == 1) {
                free(ends);
                return;
        }
        struct pending *src = b->rows, *dst = xmalloc(nr * sizeof(*dst));
        while (nr_runs > 1) {
                size_t o = 0, nr_merged = 0;
                for (size_t r = 0; r < nr_runs; r += 2) {
                        size_t i = r ? ends[r - 1] : 0, i_end = ends[r];
                        size_t j = i_end, j_end = r + 1 < nr_runs ? ends[r + 1] : i_end;
                        while (i < i_end && j < j_end)
                                dst[o++] = pending_cmp(&src[i], &src[j]) <= 0 ? src[i++] : src[j++];
                        while (i < i_end)
                                dst[o++] = src[i++];
                        while (j < j_end)
                                dst[o++] = src[j++];
                        ends[nr_merged++] = (uint32_t)o;
                }
                nr_runs = nr_merged;
                struct pending *t = src;
                src = dst;
                dst = t;
        }
        if (src != b->rows)
                b->cap_rows = nr; /* the work buffer holds them: the first goes */
        free(dst);
        free(ends);
        b->rows = src;
}

/* Sorts the rows, trims overlaps (the first read wins: .eh_frame before .debug_frame), puts
   NONE rows in the gaps and one at the end, and writes the final arrays. */
static void finish(struct build *b)
{
        struct uw_table *t = b->t;
        if (!b->nr_rows)
                return;
        sort_rows(b);
        t->base = b->rows[0].start;
        size_t cap = 2 * b->nr_rows + 1;
        t->starts = xmalloc(cap * sizeof(*t->starts));
        t->rules = xmalloc(cap * sizeof(*t->rules));
        uint32_t n = 0;
        uint64_t cur_end = t->base;
        const struct uw_rule none = {0};
        for (size_t i = 0; i < b->nr_rows; i++) {
                struct pending e = b->rows[i];
                if (e.end <= cur_end)
                        continue; /* covered by an earlier entry */
                if (e.start < cur_end)
                        e.start = cur_end;
                if (e.end - t->base > UINT32_MAX) {
                        if (!t->note[0])
                                snprintf(t->note, sizeof(t->note),
                                         "rows past 4 GiB from the first are dropped");
                        break;
                }
                if (e.start > cur_end) {
                        t->starts[n] = (uint32_t)(cur_end - t->base);
                        t->rules[n++] = none;
                }
                if (n && memcmp(&t->rules[n - 1], &e.rule, sizeof(e.rule)) == 0 &&
                    e.start == cur_end) {
                        cur_end = e.end; /* the same rule continues */
                        continue;
                }
                t->starts[n] = (uint32_t)(e.start - t->base);
                t->rules[n++] = e.rule;
                cur_end = e.end;
        }
        t->starts[n] = (uint32_t)(cur_end - t->base);
        t->rules[n++] = none;
        t->nr_rows = n;
        t->starts = xrealloc(t->starts, n * sizeof(*t->starts));
        t->rules = xrealloc(t->rules, n * sizeof(*t->rules));

        uint64_t span = t->starts[n - 1];
        unsigned shift = 8;
        while (shift < 32 && (span >> shift) > n)
                shift++;
        t->block_shift = (uint8_t)shift;
        t->nr_blocks = (uint32_t)(span >> shift) + 1;
        t->block_first = xmalloc(((size_t)t->nr_blocks + 1) * sizeof(*t->block_first));
        uint32_t i = 0;
        for (uint32_t blk = 0; blk < t->nr_blocks; blk++) {
                uint64_t off = (uint64_t)blk << shift;
                while (i + 1 < n && t->starts[i + 1] <= off)
                        i++;
                t->block_first[blk] = i;
        }
        t->block_first[t->nr_blocks] = n - 1;
}

int uw_table_build(struct uw_table *t, const struct unwind_cfi_input *cfi, struct unwind_error *err)
{
        memset(t, 0, sizeof(*t));
        struct build b = {.t = t};
        if (cfi->eh_frame && cfi->eh_frame_size) {
                struct sec s = {cfi->eh_frame, cfi->eh_frame_size, cfi->eh_frame_vaddr, true,
                                cfi->text_vaddr};
                read_section(&b, &s);
        }
        if (cfi->debug_frame && cfi->debug_frame_size) {
                struct sec s = {cfi->debug_frame, cfi->debug_frame_size, 0, false, cfi->text_vaddr};
                read_section(&b, &s);
        }
        add_plt_rows(&b, cfi);
        finish(&b);
        free(b.rows);
        if (b.pool_size) {
                t->pool = xrealloc(b.pool, b.pool_size);
                t->pool_size = (uint32_t)b.pool_size;
        } else {
                free(b.pool);
        }
        if (!t->nr_rows) {
                if (err) {
                        snprintf(err->message, sizeof(err->message), "%s",
                                 t->note[0] ? t->note : "no call frame information");
                        err->offset = 0;
                }
                return -EINVAL;
        }
        return 0;
}

void uw_table_release(struct uw_table *t)
{
        if (!t)
                return;
        free(t->starts);
        free(t->rules);
        free(t->pool);
        free(t->block_first);
        t->block_first = NULL;
        t->starts = NULL;
        t->rules = NULL;
        t->pool = NULL;
        t->nr_rows = t->pool_size = 0;
}

const struct uw_rule *uw_table_find(const struct uw_table *t, uint64_t vaddr, uint32_t *index)
{
        *index = UINT32_MAX;
        if (!t->nr_rows || vaddr < t->base || vaddr - t->base > UINT32_MAX)
                return NULL;
        uint32_t off = (uint32_t)(vaddr - t->base);
        /* the last row whose start <= off, between the rows of off's block and the next's */
        uint32_t blk = off >> t->block_shift;
        uint32_t lo = t->nr_rows - 1, hi = t->nr_rows;
        if (blk < t->nr_blocks) {
                lo = t->block_first[blk];
                hi = t->block_first[blk + 1] + 1;
        }
        while (hi - lo > 1) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (t->starts[mid] <= off)
                        lo = mid;
                else
                        hi = mid;
        }
        *index = lo;
        const struct uw_rule *r = &t->rules[lo];
        return r->cfa_kind == UNWIND_CFA_NONE ? NULL : r;
}

bool uw_table_expr(const struct uw_table *t, uint32_t off, const uint8_t **ops, size_t *len)
{
        if (off >= t->pool_size)
                return false;
        size_t n = t->pool[off];
        uint32_t head = 1;
        if (n & 0x80) {
                if (off + 1 >= t->pool_size)
                        return false;
                n = (n & 0x7f) | (size_t)t->pool[off + 1] << 7;
                head = 2;
        }
        if (n > t->pool_size - off - head)
                return false;
        *ops = t->pool + off + head;
        *len = n;
        return true;
}
