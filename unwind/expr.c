/* SPDX-License-Identifier: MIT */
/* expr.c: the DWARF expressions of call frame rules (DWARF 5, 2.5), evaluated over a frame's
   registers and the stack copy: the subset CFI uses (PLT stubs' CFA, realigned stacks, signal
   trampolines), bounded in steps and depth. */
#include <errno.h>
#include <string.h>

#include "unwind_internal.h"

#define MAX_DEPTH 32
#define MAX_STEPS 256

static int stack_read_n(const struct unwind_stack *s, uint64_t addr, unsigned n, uint64_t *v)
{
        uint64_t full;
        if (n == 8)
                return uw_stack_read(s, addr, v);
        if (addr < s->base)
                return -EFAULT;
        uint64_t off = addr - s->base;
        if (off > s->size || s->size - off < n)
                return -ERANGE;
        full = 0;
        memcpy(&full, s->data + off, n); /* little-endian */
        *v = full;
        return 0;
}

struct ops {
        const uint8_t *p, *start, *end;
        bool is_bad;
};

static uint64_t op_n(struct ops *o, unsigned n)
{
        if ((size_t)(o->end - o->p) < n) {
                o->is_bad = true;
                o->p = o->end;
                return 0;
        }
        uint64_t v = 0;
        for (unsigned i = 0; i < n; i++)
                v |= (uint64_t)o->p[i] << (8 * i);
        o->p += n;
        return v;
}

static uint64_t op_uleb(struct ops *o)
{
        uint64_t v = 0;
        unsigned shift = 0;
        for (;;) {
                if (o->p >= o->end) {
                        o->is_bad = true;
                        return 0;
                }
                uint8_t b = *o->p++;
                if (shift < 64)
                        v |= (uint64_t)(b & 0x7f) << shift;
                shift += 7;
                if (!(b & 0x80))
                        return v;
        }
}

static int64_t op_sleb(struct ops *o)
{
        uint64_t v = 0;
        unsigned shift = 0;
        uint8_t b;
        do {
                if (o->p >= o->end) {
                        o->is_bad = true;
                        return 0;
                }
                b = *o->p++;
                if (shift < 64)
                        v |= (uint64_t)(b & 0x7f) << shift;
                shift += 7;
        } while (b & 0x80);
        if (shift < 64 && (b & 0x40))
                v |= ~0ull << shift;
        return (int64_t)v;
}

int uw_expr_eval(const uint8_t *ops, size_t len, const struct unwind_regs *regs,
                 const struct unwind_stack *stack, const uint64_t *push, uint64_t *out)
{
        uint64_t st[MAX_DEPTH];
        unsigned n = 0;
        struct ops o = {ops, ops, ops + len, false};
        int rc;

        if (push)
                st[n++] = *push;
        for (unsigned steps = 0; o.p < o.end; steps++) {
                if (steps == MAX_STEPS)
                        return -EINVAL;
                uint8_t op = (uint8_t)op_n(&o, 1);
                uint64_t a, b, v = 0;
                int64_t sa, sb;
                bool is_push = true;

                /* operands popped: binary operations need two, unary ones one */
                if ((op >= 0x1a && op <= 0x1e) || op == 0x21 || op == 0x22 ||
                    (op >= 0x24 && op <= 0x27) || (op >= 0x29 && op <= 0x2e)) {
                        if (n < 2)
                                return -EINVAL;
                        b = st[--n];
                        a = st[--n];
                        sa = (int64_t)a;
                        sb = (int64_t)b;
                        switch (op) {
                        case 0x1a: v = a & b; break; /* and */
                        case 0x1b:                   /* div (signed) */
                                if (b == 0 || (sa == INT64_MIN && sb == -1))
                                        return -EINVAL;
                                v = (uint64_t)(sa / sb);
                                break;
                        case 0x1c: v = a - b; break; /* minus */
                        case 0x1d:                   /* mod */
                                if (b == 0)
                                        return -EINVAL;
                                v = a % b;
                                break;
                        case 0x1e: v = a * b; break;                /* mul */
                        case 0x21: v = a | b; break;                /* or */
                        case 0x22: v = a + b; break;                /* plus */
                        case 0x24: v = b >= 64 ? 0 : a << b; break; /* shl */
                        case 0x25: v = b >= 64 ? 0 : a >> b; break; /* shr */
                        case 0x26:                                  /* shra */
                                v = b >= 64 ? (sa < 0 ? ~0ull : 0) : (sa < 0 ? ~(~a >> b) : a >> b);
                                break;
                        case 0x27: v = a ^ b; break;    /* xor */
                        case 0x29: v = sa == sb; break; /* eq */
                        case 0x2a: v = sa >= sb; break; /* ge */
                        case 0x2b: v = sa > sb; break;  /* gt */
                        case 0x2c: v = sa <= sb; break; /* le */
                        case 0x2d: v = sa < sb; break;  /* lt */
                        case 0x2e: v = sa != sb; break; /* ne */
                        }
                        st[n++] = v;
                        continue;
                }
                if (op >= 0x30 && op <= 0x4f) { /* lit0..lit31 */
                        v = op - 0x30u;
                } else if (op >= 0x70 && op <= 0x8f) { /* breg0..breg31 */
                        unsigned r = op - 0x70u;
                        int64_t off = op_sleb(&o);
                        if (r >= UNWIND_NR_REGS || !(regs->valid & (1u << r)))
                                return -ENOENT;
                        v = regs->r[r] + (uint64_t)off;
                } else {
                        switch (op) {
                        case 0x03: v = op_n(&o, 8); break;                    /* addr */
                        case 0x08: v = op_n(&o, 1); break;                    /* const1u */
                        case 0x09: v = (uint64_t)(int8_t)op_n(&o, 1); break;  /* const1s */
                        case 0x0a: v = op_n(&o, 2); break;                    /* const2u */
                        case 0x0b: v = (uint64_t)(int16_t)op_n(&o, 2); break; /* const2s */
                        case 0x0c: v = op_n(&o, 4); break;                    /* const4u */
                        case 0x0d: v = (uint64_t)(int32_t)op_n(&o, 4); break; /* const4s */
                        case 0x0e:
                        case 0x0f: v = op_n(&o, 8); break;           /* const8u/s */
                        case 0x10: v = op_uleb(&o); break;           /* constu */
                        case 0x11: v = (uint64_t)op_sleb(&o); break; /* consts */
                        case 0x92: {                                 /* bregx */
                                uint64_t r = op_uleb(&o);
                                int64_t off = op_sleb(&o);
                                if (r >= UNWIND_NR_REGS || !(regs->valid & (1u << r)))
                                        return -ENOENT;
                                v = regs->r[r] + (uint64_t)off;
                                break;
                        }
                        case 0x06: /* deref */
                        case 0x94: /* deref_size */ {
                                unsigned size = op == 0x06 ? 8 : (unsigned)op_n(&o, 1);
                                if (!n || size == 0 || size > 8)
                                        return -EINVAL;
                                rc = stack_read_n(stack, st[n - 1], size, &st[n - 1]);
                                if (rc < 0)
                                        return rc;
                                is_push = false;
                                break;
                        }
                        case 0x12: /* dup */
                                if (!n)
                                        return -EINVAL;
                                v = st[n - 1];
                                break;
                        case 0x13: /* drop */
                                if (!n)
                                        return -EINVAL;
                                n--;
                                is_push = false;
                                break;
                        case 0x14: /* over */
                                if (n < 2)
                                        return -EINVAL;
                                v = st[n - 2];
                                break;
                        case 0x15: { /* pick */
                                uint64_t i = op_n(&o, 1);
                                if (i >= n)
                                        return -EINVAL;
                                v = st[n - 1 - i];
                                break;
                        }
                        case 0x16: /* swap */
                                if (n < 2)
                                        return -EINVAL;
                                v = st[n - 1];
                                st[n - 1] = st[n - 2];
                                st[n - 2] = v;
                                is_push = false;
                                break;
                        case 0x17: /* rot */
                                if (n < 3)
                                        return -EINVAL;
                                v = st[n - 1];
                                st[n - 1] = st[n - 2];
                                st[n - 2] = st[n - 3];
                                st[n - 3] = v;
                                is_push = false;
                                break;
                        case 0x19: /* abs */
                        case 0x1f: /* neg */
                        case 0x20: /* not */
                                if (!n)
                                        return -EINVAL;
                                a = st[n - 1];
                                if (op == 0x20)
                                        st[n - 1] = ~a;
                                else if (op == 0x1f || (int64_t)a < 0)
                                        st[n - 1] = 0 - a;
                                is_push = false;
                                break;
                        case 0x23: /* plus_uconst */
                                if (!n)
                                        return -EINVAL;
                                st[n - 1] += op_uleb(&o);
                                is_push = false;
                                break;
                        case 0x28: /* bra */
                        case 0x2f: /* skip */ {
                                int16_t off = (int16_t)op_n(&o, 2);
                                bool is_taken = true;
                                if (op == 0x28) {
                                        if (!n)
                                                return -EINVAL;
                                        is_taken = st[--n] != 0;
                                }
                                if (is_taken) {
                                        ptrdiff_t to = (o.p - o.start) + off;
                                        if (to < 0 || to > o.end - o.start)
                                                return -EINVAL;
                                        o.p = o.start + to;
                                }
                                is_push = false;
                                break;
                        }
                        case 0x96: is_push = false; break; /* nop */
                        default: return -ENOTSUP;
                        }
                }
                if (o.is_bad)
                        return -EINVAL;
                if (is_push) {
                        if (n == MAX_DEPTH)
                                return -EINVAL;
                        st[n++] = v;
                }
        }
        if (o.is_bad || !n)
                return -EINVAL;
        *out = st[n - 1];
        return 0;
}
