/* SPDX-License-Identifier: MIT */
/* walk.c: the walk of one stack copy: per frame a module lookup (the caller's), a binary search
   in that module's table and the row's rules applied to rsp, rbp and the return address; signal
   frames read from the ucontext; the frame-pointer fallback where no rule is known. */
#include <errno.h>
#include <string.h>

#include "unwind_internal.h"

#define BIT(r) (1u << (r))

void unwind_regs_set(struct unwind_regs *regs, uint64_t ip, uint64_t sp, uint64_t bp)
{
        memset(regs, 0, sizeof(*regs));
        regs->r[UNWIND_REG_RIP] = ip;
        regs->r[UNWIND_REG_RSP] = sp;
        regs->r[UNWIND_REG_RBP] = bp;
        regs->valid = BIT(UNWIND_REG_RIP) | BIT(UNWIND_REG_RSP) | BIT(UNWIND_REG_RBP);
}

/* arch/x86/include/uapi/asm/perf_regs.h bit -> DWARF number; -1: not a DWARF register here */
static const int8_t perf_to_dwarf[24] = {
        UNWIND_REG_RAX,
        UNWIND_REG_RBX,
        UNWIND_REG_RCX,
        UNWIND_REG_RDX,
        UNWIND_REG_RSI,
        UNWIND_REG_RDI,
        UNWIND_REG_RBP,
        UNWIND_REG_RSP,
        UNWIND_REG_RIP,
        -1, /* FLAGS */
        -1,
        -1,
        -1,
        -1,
        -1, /* CS SS DS ES FS */
        -1, /* GS */
        8,
        9,
        10,
        11,
        12,
        13,
        14,
        15,
};

uint32_t unwind_regs_from_perf(struct unwind_regs *regs, const uint64_t *values, uint64_t mask)
{
        uint32_t n = 0;
        memset(regs, 0, sizeof(*regs));
        for (uint64_t left = mask; left; left &= left - 1, n++) {
                unsigned bit = (unsigned)__builtin_ctzll(left);
                if (bit < 24 && perf_to_dwarf[bit] >= 0) {
                        regs->r[perf_to_dwarf[bit]] = values[n];
                        regs->valid |= BIT(perf_to_dwarf[bit]);
                }
        }
        return n;
}

const char *unwind_stop_name(enum unwind_stop stop)
{
        static const char *const names[UNWIND_NR_STOPS] = {
                [UNWIND_STOP_THREAD_START] = "thread start", [UNWIND_STOP_STACK_END] = "stack end",
                [UNWIND_STOP_NO_MODULE] = "no module",       [UNWIND_STOP_NO_CFI] = "no CFI",
                [UNWIND_STOP_BAD_FRAME] = "cannot unwind",   [UNWIND_STOP_MAX_DEPTH] = "max depth",
        };
        return (unsigned)stop < UNWIND_NR_STOPS ? names[stop] : "?";
}

/* The stop a failed stack read means: past the copy's end, or somewhere it cannot be. */
static enum unwind_stop read_stop(int rc)
{
        return rc == -ERANGE ? UNWIND_STOP_STACK_END : UNWIND_STOP_BAD_FRAME;
}

/* One step's outcome: continue (the caller's registers are in *cur), or a stop. */
enum step {
        STEP_OK = -1,
};

/* ucontext_t on x86-64 Linux: uc_flags, uc_link, uc_stack (24 bytes), then uc_mcontext.gregs
   in the order of <sys/ucontext.h> REG_R8 .. REG_RIP (the kernel's struct sigcontext). */
#define UC_GREGS 40
static const int8_t greg_to_dwarf[17] = {
        8,
        9,
        10,
        11,
        12,
        13,
        14,
        15, /* r8..r15 */
        UNWIND_REG_RDI,
        UNWIND_REG_RSI,
        UNWIND_REG_RBP,
        UNWIND_REG_RBX,
        UNWIND_REG_RDX,
        UNWIND_REG_RAX,
        UNWIND_REG_RCX,
        UNWIND_REG_RSP,
        UNWIND_REG_RIP,
};

/* A signal trampoline (__restore_rt): rsp points at the ucontext the kernel saved, whose
   registers are the interrupted frame's, all of them, and its ip is exact. */
static int step_signal(struct unwind_regs *cur, const struct unwind_stack *stack)
{
        struct unwind_regs next = {0};
        if (!(cur->valid & BIT(UNWIND_REG_RSP)))
                return UNWIND_STOP_BAD_FRAME;
        uint64_t uc = cur->r[UNWIND_REG_RSP];
        for (unsigned i = 0; i < 17; i++) {
                uint64_t v;
                int rc = uw_stack_read(stack, uc + UC_GREGS + 8 * i, &v);
                if (rc < 0)
                        return read_stop(rc);
                next.r[greg_to_dwarf[i]] = v;
                next.valid |= BIT(greg_to_dwarf[i]);
        }
        *cur = next;
        return STEP_OK;
}

/* Frame pointers: [rbp] is the caller's rbp, [rbp + 8] the return address. */
static int step_fp(struct unwind_regs *cur, const struct unwind_stack *stack)
{
        if ((cur->valid & (BIT(UNWIND_REG_RBP) | BIT(UNWIND_REG_RSP))) !=
            (BIT(UNWIND_REG_RBP) | BIT(UNWIND_REG_RSP)))
                return UNWIND_STOP_BAD_FRAME;
        uint64_t bp = cur->r[UNWIND_REG_RBP], ra, caller_bp;
        if (bp == 0)
                return UNWIND_STOP_THREAD_START; /* psABI 3.4.1: rbp 0 marks the outermost frame */
        if (bp < cur->r[UNWIND_REG_RSP] || bp > UINT64_MAX - 16)
                return UNWIND_STOP_BAD_FRAME;
        int rc = uw_stack_read(stack, bp + 8, &ra);
        if (rc == 0)
                rc = uw_stack_read(stack, bp, &caller_bp);
        if (rc < 0)
                return read_stop(rc);
        if (ra == 0)
                return UNWIND_STOP_THREAD_START;
        cur->r[UNWIND_REG_RIP] = ra;
        cur->r[UNWIND_REG_RBP] = caller_bp;
        cur->r[UNWIND_REG_RSP] = bp + 16;
        cur->valid = BIT(UNWIND_REG_RIP) | BIT(UNWIND_REG_RSP) | BIT(UNWIND_REG_RBP);
        return STEP_OK;
}

/* A register's value in the caller under its rule; -ENOENT when the rule loses it. */
static int apply_rule(const struct uw_table *t, enum unwind_reg_kind kind, int16_t field,
                      uint64_t cfa, const struct unwind_regs *cur, const struct unwind_stack *stack,
                      uint64_t *out)
{
        const uint8_t *ops;
        size_t len;
        int rc;
        switch (kind) {
        case UNWIND_RULE_AT: return uw_stack_read(stack, cfa + (uint64_t)(int64_t)field, out);
        case UNWIND_RULE_VAL: *out = cfa + (uint64_t)(int64_t)field; return 0;
        case UNWIND_RULE_REG:
                if ((uint16_t)field >= UNWIND_NR_REGS || !(cur->valid & BIT(field)))
                        return -ENOENT;
                *out = cur->r[field];
                return 0;
        case UNWIND_RULE_EXPR:
        case UNWIND_RULE_VAL_EXPR:
                if (!uw_table_expr(t, (uint16_t)field, &ops, &len))
                        return -EINVAL;
                rc = uw_expr_eval(ops, len, cur, stack, &cfa, out);
                if (rc == 0 && kind == UNWIND_RULE_EXPR)
                        rc = uw_stack_read(stack, *out, out);
                return rc;
        default: return -ENOENT;
        }
}

/* The row of a file vaddr, through the module's memo of recent lookups. */
static const struct uw_rule *find_rule(struct unwind_module *m, uint64_t vaddr)
{
        const struct uw_table *t = &m->table;
        uint32_t index;
        if (vaddr < t->base || vaddr - t->base > UINT32_MAX)
                return uw_table_find(t, vaddr, &index);
        uint32_t off = (uint32_t)(vaddr - t->base);
        uint32_t slot = (off * 2654435761u) >> (32 - UW_MEMO_BITS);
        if (m->memo[slot].index_plus1 && m->memo[slot].off == off) {
                const struct uw_rule *r = &t->rules[m->memo[slot].index_plus1 - 1];
                return r->cfa_kind == UNWIND_CFA_NONE ? NULL : r;
        }
        const struct uw_rule *r = uw_table_find(t, vaddr, &index);
        if (index != UINT32_MAX) {
                m->memo[slot].off = off;
                m->memo[slot].index_plus1 = index + 1;
        }
        return r;
}

/* One frame by its module's table. is_exact: ip is where the thread was (the first frame, or
   the frame a signal interrupted), else a return address, looked up at ip - 1 (the call). */
static int step_cfi(struct unwind_regs *cur, const struct unwind_stack *stack,
                    const struct unwind_map *map, bool *is_exact, uint32_t *nr_signal)
{
        struct unwind_module *m = map->module;
        if (!m->is_loaded)
                uw_module_load(m);
        const struct uw_table *t = &m->table;
        uint64_t ip = cur->r[UNWIND_REG_RIP];
        const struct uw_rule *r = find_rule(m, ip - map->bias - (*is_exact ? 0 : 1));
        if (!r)
                return UNWIND_STOP_NO_CFI;
        if (r->flags & UW_FLAG_SIGNAL) {
                int rc = step_signal(cur, stack);
                if (rc == STEP_OK) {
                        *is_exact = true;
                        (*nr_signal)++;
                }
                return rc;
        }

        uint64_t cfa;
        int rc;
        if (r->cfa_kind == UNWIND_CFA_REG) {
                if (!(cur->valid & BIT(r->cfa_reg)))
                        return UNWIND_STOP_BAD_FRAME;
                cfa = cur->r[r->cfa_reg] + (uint64_t)(int64_t)r->cfa_off;
        } else if (r->cfa_kind == UNWIND_CFA_EXPR) {
                const uint8_t *ops;
                size_t len;
                if (!uw_table_expr(t, (uint32_t)r->cfa_off, &ops, &len))
                        return UNWIND_STOP_BAD_FRAME;
                rc = uw_expr_eval(ops, len, cur, stack, NULL, &cfa);
                if (rc < 0)
                        return read_stop(rc);
        } else {
                return UNWIND_STOP_BAD_FRAME;
        }

        enum unwind_reg_kind ra_kind = UW_RA_KIND(r);
        if (ra_kind == UNWIND_RULE_UNDEFINED)
                return UNWIND_STOP_THREAD_START;
        uint64_t ra;
        rc = apply_rule(t, ra_kind, r->ra_off, cfa, cur, stack, &ra);
        if (rc < 0)
                return read_stop(rc);
        if (ra == 0)
                return UNWIND_STOP_THREAD_START;
        /* a frame must move up the stack (the CFA is above the return address slot) */
        if (!(cur->valid & BIT(UNWIND_REG_RSP)) || cfa <= cur->r[UNWIND_REG_RSP])
                return UNWIND_STOP_BAD_FRAME;

        /* the caller's frame: rsp, rip and rbp when its rule keeps it; the others are lost */
        enum unwind_reg_kind bp_kind = UW_RBP_KIND(r);
        uint32_t valid = BIT(UNWIND_REG_RIP) | BIT(UNWIND_REG_RSP);
        uint64_t bp = 0;
        if (bp_kind == UNWIND_RULE_SAME) {
                bp = cur->r[UNWIND_REG_RBP];
                valid |= cur->valid & BIT(UNWIND_REG_RBP);
        } else if (apply_rule(t, bp_kind, r->rbp_off, cfa, cur, stack, &bp) == 0) {
                valid |= BIT(UNWIND_REG_RBP);
        }
        cur->r[UNWIND_REG_RIP] = ra;
        cur->r[UNWIND_REG_RSP] = cfa;
        cur->r[UNWIND_REG_RBP] = bp;
        cur->valid = valid;
        *is_exact = false;
        return STEP_OK;
}

uint32_t unwind_walk(const struct unwind_regs *regs, const struct unwind_stack *stack,
                     unwind_find_map_fn find_map, void *ctx, const struct unwind_walk_options *opts,
                     uint64_t *frames, uint32_t max_frames, struct unwind_result *res)
{
        struct unwind_regs cur = *regs;
        bool is_exact = true;
        bool use_fp = opts && opts->use_fp_fallback;
        memset(res, 0, sizeof(*res));

        if (!(cur.valid & BIT(UNWIND_REG_RIP)) || !max_frames) {
                res->stop = max_frames ? UNWIND_STOP_BAD_FRAME : UNWIND_STOP_MAX_DEPTH;
                return 0;
        }
        /* registers past r16 are not ours to keep */
        cur.valid &= (1u << UNWIND_NR_REGS) - 1;
        for (;;) {
                uint64_t ip = cur.r[UNWIND_REG_RIP];
                frames[res->nr_frames++] = ip;

                struct unwind_map map = {0};
                int rc;
                if (find_map(ctx, ip - (is_exact ? 0 : 1), &map) < 0 || !map.module)
                        rc = UNWIND_STOP_NO_MODULE;
                else
                        rc = step_cfi(&cur, stack, &map, &is_exact, &res->nr_signal_frames);
                if ((rc == UNWIND_STOP_NO_CFI || rc == UNWIND_STOP_NO_MODULE) && use_fp) {
                        int fp = step_fp(&cur, stack);
                        if (fp == STEP_OK) {
                                res->nr_fp_frames++;
                                is_exact = false;
                        }
                        /* a failed guess reports what stopped the walk first */
                        rc = fp == STEP_OK || fp == UNWIND_STOP_THREAD_START ||
                                             fp == UNWIND_STOP_STACK_END
                                     ? fp
                                     : rc;
                }
                if (rc != STEP_OK) {
                        res->stop = (enum unwind_stop)rc;
                        if (rc == UNWIND_STOP_NO_MODULE || rc == UNWIND_STOP_NO_CFI ||
                            rc == UNWIND_STOP_BAD_FRAME)
                                res->stop_addr = ip;
                        return res->nr_frames;
                }
                if (res->nr_frames == max_frames) {
                        res->stop = UNWIND_STOP_MAX_DEPTH;
                        return res->nr_frames;
                }
        }
}
