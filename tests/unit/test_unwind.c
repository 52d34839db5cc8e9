/* SPDX-License-Identifier: MIT */
/* test_unwind.c: the unwinder from bytes: hand-made CFI sections and stacks (every rule kind,
   every stop), the expression subset, the cache; and from real snapshots of a program built
   without frame pointers (tests/fixtures/unwind_fixture.c): a qsort comparator reached through
   libc, a signal handler, a second thread, PLT stubs and timer samples anywhere, truncated stack
   copies and a module without CFI; compared frame by frame with libdw's own unwinder
   (dwfl_getthread_frames over the same registers and bytes) and with the table rows against
   libdw's dwarf_cfi_addrframe. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "unwind/unwind.h"
#include "unwind_internal.h"

extern char **environ;

#define MAX_FRAMES 64

/* ---- hand-made CFI ---- */

struct bytes {
        uint8_t b[1024];
        size_t n;
};

static void put(struct bytes *o, const void *p, size_t n)
{
        memcpy(o->b + o->n, p, n);
        o->n += n;
}
static void put8(struct bytes *o, uint8_t v)
{
        put(o, &v, 1);
}
static void put32(struct bytes *o, uint32_t v)
{
        put(o, &v, 4);
}
static void put_ops(struct bytes *o, const char *hex_ops, size_t n)
{
        put(o, hex_ops, n);
}
/* the length field of the entry that starts at `at` */
static void end_entry(struct bytes *o, size_t at)
{
        while ((o->n - at) % 8 != 0)
                put8(o, 0); /* DW_CFA_nop */
        uint32_t len = (uint32_t)(o->n - at - 4);
        memcpy(o->b + at, &len, 4);
}

#define EH_VADDR 0x1000ull

/* A CIE: "zR" (pcrel sdata4 pointers) or "zRS", code align 1, data align -8, RA 16, initial
   CFA = rsp + 8, RA at CFA - 8. Returns its offset. */
static size_t put_cie(struct bytes *o, bool is_signal)
{
        size_t at = o->n;
        put32(o, 0);
        put32(o, 0); /* CIE id */
        put8(o, 1);
        put(o, is_signal ? "zRS" : "zR", is_signal ? 4 : 3);
        put_ops(o, "\x01\x78\x10\x01\x1b", 5); /* align 1, -8, RA 16, aug len 1, pcrel|sdata4 */
        put_ops(o, "\x0c\x07\x08\x90\x01", 5); /* def_cfa rsp 8; offset r16 at cfa-8 */
        end_entry(o, at);
        return at;
}

/* An FDE for [start, start + len) running ops. */
static void put_fde(struct bytes *o, size_t cie, uint64_t start, uint32_t len, const char *ops,
                    size_t nr_ops)
{
        size_t at = o->n;
        put32(o, 0);
        put32(o, (uint32_t)(o->n - cie));
        put32(o, (uint32_t)(int32_t)(start - (EH_VADDR + o->n)));
        put32(o, len);
        put8(o, 0); /* augmentation length */
        put_ops(o, ops, nr_ops);
        end_entry(o, at);
}

/* The PLT's CFA expression as ld writes it: rsp + 8 + ((rip & 15) >= 11) * 8 */
static const char plt_expr[] = "\x77\x08\x80\x00\x3f\x1a\x3b\x2a\x33\x24\x22";

/* F [0x2000, 0x2100): push rbp; mov rsp, rbp (CFA rsp+8, rsp+16, rbp+16), remember/restore.
   G [0x2400, 0x2410): the outermost frame (RA undefined). S [0x2500, 0x2510): a signal
   trampoline. P [0x2600, 0x2640): the PLT expression. X [0x2700, 0x2710): an unsupported CFA
   expression (DW_OP_call_frame_cfa). */
static void make_cfi(struct bytes *o)
{
        memset(o, 0, sizeof(*o));
        size_t cie = put_cie(o, false);
        /* advance 1; def_cfa_offset 16; offset rbp at cfa-16; advance 3; def_cfa_register rbp;
           advance 0x40 (loc1); remember; def_cfa rsp 8; advance 1; restore_state */
        put_fde(o, cie, 0x2000, 0x100,
                "\x41\x0e\x10\x86\x02\x43\x0d\x06\x02\x40\x0a\x0c\x07\x08\x41\x0b", 16);
        put_fde(o, cie, 0x2400, 0x10, "\x07\x10", 2); /* undefined r16 */
        size_t scie = put_cie(o, true);
        put_fde(o, scie, 0x2500 - 1, 0x11, "", 0);
        char pops[32] = "\x0f\x0b"; /* def_cfa_expression, 11 bytes */
        memcpy(pops + 2, plt_expr, 11);
        put_fde(o, cie, 0x2600, 0x40, pops, 13);
        put_fde(o, cie, 0x2700, 0x10, "\x0f\x01\x9c", 3);
        put32(o, 0); /* terminator */
}

static struct unwind_module *open_cfi(const struct bytes *o)
{
        struct unwind_cfi_input in = {0};
        in.eh_frame = o->b;
        in.eh_frame_size = o->n;
        in.eh_frame_vaddr = EH_VADDR;
        struct unwind_module *m = NULL;
        struct unwind_error err;
        assert_int_equal(unwind_module_open_cfi(&m, &in, &err), 0);
        return m;
}

static void test_cfi_rows(void **state)
{
        (void)state;
        struct bytes o;
        make_cfi(&o);
        struct unwind_module *m = open_cfi(&o);
        struct unwind_rule_info r;
        struct unwind_module_info info;
        unwind_module_get_info(m, &info);
        assert_true(info.has_cfi);
        assert_int_equal(info.nr_fdes, 5);
        assert_int_equal(info.nr_bad_fdes, 0);
        assert_string_equal(info.note, "");

        assert_int_equal(unwind_module_lookup(m, 0x1fff, &r), -ENOENT);
        assert_int_equal(unwind_module_lookup(m, 0x2000, &r), 0);
        assert_int_equal(r.cfa, UNWIND_CFA_REG);
        assert_int_equal(r.cfa_reg, UNWIND_REG_RSP);
        assert_int_equal(r.cfa_offset, 8);
        assert_int_equal(r.ra, UNWIND_RULE_AT);
        assert_int_equal(r.ra_offset, -8);
        assert_int_equal(r.rbp, UNWIND_RULE_SAME);
        assert_int_equal(r.start, 0x2000);
        assert_int_equal(r.end, 0x2001);
        assert_int_equal(unwind_module_lookup(m, 0x2003, &r), 0);
        assert_int_equal(r.cfa_offset, 16);
        assert_int_equal(r.rbp, UNWIND_RULE_AT);
        assert_int_equal(r.rbp_offset, -16);
        assert_int_equal(unwind_module_lookup(m, 0x2004, &r), 0);
        assert_int_equal(r.cfa_reg, UNWIND_REG_RBP);
        assert_int_equal(r.cfa_offset, 16);
        /* remember_state; def_cfa rsp 8 for one byte; restore_state brings rbp + 16 back */
        assert_int_equal(unwind_module_lookup(m, 0x2044, &r), 0);
        assert_int_equal(r.cfa_reg, UNWIND_REG_RSP);
        assert_int_equal(r.cfa_offset, 8);
        assert_int_equal(r.rbp, UNWIND_RULE_AT);
        assert_int_equal(unwind_module_lookup(m, 0x2045, &r), 0);
        assert_int_equal(r.cfa_reg, UNWIND_REG_RBP);
        assert_int_equal(r.end, 0x2100);
        assert_int_equal(unwind_module_lookup(m, 0x2100, &r), -ENOENT); /* a gap */
        assert_int_equal(unwind_module_lookup(m, 0x2405, &r), 0);
        assert_int_equal(r.ra, UNWIND_RULE_UNDEFINED);
        assert_int_equal(unwind_module_lookup(m, 0x24ff, &r), 0);
        assert_true(r.is_signal_frame);
        assert_int_equal(unwind_module_lookup(m, 0x2610, &r), 0);
        assert_int_equal(r.cfa, UNWIND_CFA_EXPR);
        assert_int_equal(unwind_module_lookup(m, 0x2710, &r), -ENOENT); /* past the end */
        unwind_module_close(m);
}

/* Damaged sections: the entries before the damage stay, the note says where. */
static void test_cfi_damaged(void **state)
{
        (void)state;
        struct bytes o;
        make_cfi(&o);
        struct unwind_cfi_input in = {0};
        in.eh_frame = o.b;
        in.eh_frame_vaddr = EH_VADDR;
        struct unwind_module *m = NULL;
        struct unwind_error err;
        struct unwind_rule_info r;
        struct unwind_module_info info;

        in.eh_frame_size = 70; /* cut inside the second FDE (the CIE 24 bytes, the first 40) */
        assert_int_equal(unwind_module_open_cfi(&m, &in, &err), 0);
        unwind_module_get_info(m, &info);
        assert_int_equal(info.nr_bad_fdes, 1);
        assert_non_null(strstr(info.note, "byte offset"));
        assert_int_equal(unwind_module_lookup(m, 0x2004, &r), 0);
        assert_int_equal(unwind_module_lookup(m, 0x2405, &r), -ENOENT);
        unwind_module_close(m);

        in.eh_frame_size = 10; /* not even the CIE */
        assert_int_equal(unwind_module_open_cfi(&m, &in, &err), -EINVAL);
        assert_null(m);
        assert_non_null(strstr(err.message, "length"));

        /* an FDE whose CIE pointer points outside the section */
        struct bytes bad = o;
        uint32_t cie_ptr = 0x7fff0000;
        memcpy(bad.b + 28, &cie_ptr, 4);
        in.eh_frame = bad.b;
        in.eh_frame_size = bad.n;
        assert_int_equal(unwind_module_open_cfi(&m, &in, &err), 0);
        unwind_module_get_info(m, &info);
        assert_int_equal(info.nr_bad_fdes, 1);
        assert_int_equal(unwind_module_lookup(m, 0x2004, &r), -ENOENT);
        assert_int_equal(unwind_module_lookup(m, 0x2405, &r), 0);
        unwind_module_close(m);

        /* empty input, and a PLT without CFI: the stub rule */
        struct unwind_cfi_input plt = {0};
        assert_int_equal(unwind_module_open_cfi(&m, &plt, &err), -EINVAL);
        plt.plt_start[0] = 0x5000;
        plt.plt_end[0] = 0x5100;
        assert_int_equal(unwind_module_open_cfi(&m, &plt, &err), 0);
        assert_int_equal(unwind_module_lookup(m, 0x5010, &r), 0);
        assert_int_equal(r.cfa_reg, UNWIND_REG_RSP);
        assert_int_equal(r.cfa_offset, 8);
        unwind_module_close(m);
}

/* ---- synthetic walks ---- */

struct one_module {
        struct unwind_module *m;
        uint64_t lo, hi;
};

static int find_one(void *ctx, uint64_t addr, struct unwind_map *map)
{
        const struct one_module *om = ctx;
        if (addr < om->lo || addr >= om->hi)
                return -ENOENT;
        map->module = om->m;
        map->bias = 0;
        return 0;
}

#define SP 0x7ffd0000ull

static void put_word(uint8_t *stack, uint64_t addr, uint64_t v)
{
        memcpy(stack + (addr - SP), &v, 8);
}

static void test_walk_synthetic(void **state)
{
        (void)state;
        struct bytes o;
        make_cfi(&o);
        struct one_module om = {open_cfi(&o), 0x2000, 0x3000};
        uint8_t st[512] = {0};
        struct unwind_stack stack = {SP, st, sizeof(st)};
        struct unwind_regs regs;
        struct unwind_result res;
        uint64_t f[MAX_FRAMES];

        /* F with a frame pointer -> F at its entry row -> G (outermost) */
        uint64_t bp = SP + 32;
        put_word(st, bp, SP + 64);     /* saved rbp */
        put_word(st, bp + 8, 0x2001);  /* return into F: looked up at 0x2000, CFA = rsp + 8 */
        put_word(st, bp + 16, 0x2405); /* F's entry row: RA at the new rsp */
        unwind_regs_set(&regs, 0x2050, SP, bp);
        assert_int_equal(unwind_walk(&regs, &stack, find_one, &om, NULL, f, MAX_FRAMES, &res), 3);
        assert_int_equal(res.stop, UNWIND_STOP_THREAD_START);
        assert_int_equal(f[0], 0x2050);
        assert_int_equal(f[1], 0x2001);
        assert_int_equal(f[2], 0x2405);
        assert_string_equal(unwind_stop_name(res.stop), "thread start");

        /* max depth */
        assert_int_equal(unwind_walk(&regs, &stack, find_one, &om, NULL, f, 2, &res), 2);
        assert_int_equal(res.stop, UNWIND_STOP_MAX_DEPTH);

        /* the copy ends before the return address slot */
        struct unwind_stack short_stack = {SP, st, 40};
        unwind_walk(&regs, &short_stack, find_one, &om, NULL, f, MAX_FRAMES, &res);
        assert_int_equal(res.stop, UNWIND_STOP_STACK_END);
        assert_int_equal(res.nr_frames, 1);

        /* rbp below rsp: the frame goes nowhere */
        unwind_regs_set(&regs, 0x2050, SP, SP - 64);
        unwind_walk(&regs, &stack, find_one, &om, NULL, f, MAX_FRAMES, &res);
        assert_int_equal(res.stop, UNWIND_STOP_BAD_FRAME);
        assert_int_equal(res.stop_addr, 0x2050);

        /* an address in no module, one in a gap of the table */
        unwind_regs_set(&regs, 0x9000, SP, 0);
        unwind_walk(&regs, &stack, find_one, &om, NULL, f, MAX_FRAMES, &res);
        assert_int_equal(res.stop, UNWIND_STOP_NO_MODULE);
        assert_int_equal(res.stop_addr, 0x9000);
        unwind_regs_set(&regs, 0x2200, SP, 0);
        unwind_walk(&regs, &stack, find_one, &om, NULL, f, MAX_FRAMES, &res);
        assert_int_equal(res.stop, UNWIND_STOP_NO_CFI);

        /* ... where the frame-pointer fallback goes on: [bp] and [bp + 8] */
        struct unwind_walk_options fp = {.use_fp_fallback = true};
        unwind_regs_set(&regs, 0x2200, SP, bp);
        unwind_walk(&regs, &stack, find_one, &om, &fp, f, MAX_FRAMES, &res);
        assert_int_equal(res.nr_fp_frames, 1);
        assert_int_equal(res.stop, UNWIND_STOP_THREAD_START);
        assert_int_equal(res.nr_frames, 3);

        /* a return address of 0 ends the walk as the thread's start */
        memset(st, 0, sizeof(st));
        unwind_regs_set(&regs, 0x2000, SP, 0);
        unwind_walk(&regs, &stack, find_one, &om, NULL, f, MAX_FRAMES, &res);
        assert_int_equal(res.stop, UNWIND_STOP_THREAD_START);
        assert_int_equal(res.nr_frames, 1);

        /* a PLT stub at its first instruction (CFA = rsp + 8) and after push (rsp + 16) */
        put_word(st, SP, 0x2405);
        unwind_regs_set(&regs, 0x2600, SP, 0);
        unwind_walk(&regs, &stack, find_one, &om, NULL, f, MAX_FRAMES, &res);
        assert_int_equal(res.nr_frames, 2);
        assert_int_equal(f[1], 0x2405);
        assert_int_equal(res.stop, UNWIND_STOP_THREAD_START);
        put_word(st, SP + 8, 0x2406);
        unwind_regs_set(&regs, 0x260b, SP, 0);
        unwind_walk(&regs, &stack, find_one, &om, NULL, f, MAX_FRAMES, &res);
        assert_int_equal(f[1], 0x2406);

        /* an expression outside the subset */
        unwind_regs_set(&regs, 0x2700, SP, 0);
        unwind_walk(&regs, &stack, find_one, &om, NULL, f, MAX_FRAMES, &res);
        assert_int_equal(res.stop, UNWIND_STOP_BAD_FRAME);

        /* a signal frame: the handler returns into the trampoline, whose rsp holds the
           ucontext: r8..r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip */
        memset(st, 0, sizeof(st));
        put_word(st, SP, 0x2500); /* the handler (F's entry row) returns here */
        uint64_t uc = SP + 8, isp = SP + 400;
        put_word(st, uc + 40 + 10 * 8, 0x1234); /* rbp */
        put_word(st, uc + 40 + 15 * 8, isp);    /* rsp */
        put_word(st, uc + 40 + 16 * 8, 0x2000); /* rip: F's first instruction, exact */
        put_word(st, isp, 0x2405);
        unwind_regs_set(&regs, 0x2000, SP, 0);
        unwind_walk(&regs, &stack, find_one, &om, NULL, f, MAX_FRAMES, &res);
        assert_int_equal(res.nr_signal_frames, 1);
        assert_int_equal(res.nr_frames, 4);
        assert_int_equal(f[1], 0x2500);
        assert_int_equal(f[2], 0x2000);
        assert_int_equal(f[3], 0x2405);
        assert_int_equal(res.stop, UNWIND_STOP_THREAD_START);

        /* no registers */
        struct unwind_regs none = {0};
        assert_int_equal(unwind_walk(&none, &stack, find_one, &om, NULL, f, 8, &res), 0);
        assert_int_equal(res.stop, UNWIND_STOP_BAD_FRAME);
        unwind_module_close(om.m);
}

static void test_expr(void **state)
{
        (void)state;
        uint8_t st[64] = {0};
        struct unwind_stack stack = {SP, st, sizeof(st)};
        struct unwind_regs regs;
        uint64_t v;
        put_word(st, SP + 8, 0xabcdef);
        unwind_regs_set(&regs, 0x1000, SP, SP + 8);

        /* the PLT rule: rip & 15 below 11 -> rsp + 8, else rsp + 16 */
        for (uint64_t ip = 0x1000; ip < 0x1010; ip++) {
                regs.r[UNWIND_REG_RIP] = ip;
                assert_int_equal(
                        uw_expr_eval((const uint8_t *)plt_expr, 11, &regs, &stack, NULL, &v), 0);
                assert_int_equal(v, SP + ((ip & 15) >= 11 ? 16 : 8));
        }
        /* breg6 0; deref (a realigned frame's CFA) */
        assert_int_equal(uw_expr_eval((const uint8_t *)"\x76\x00\x06", 3, &regs, &stack, NULL, &v),
                         0);
        assert_int_equal(v, 0xabcdef);
        /* reads past the copy, below it */
        assert_int_equal(
                uw_expr_eval((const uint8_t *)"\x77\xc0\x00\x06", 4, &regs, &stack, NULL, &v),
                -ERANGE);
        assert_int_equal(uw_expr_eval((const uint8_t *)"\x77\x78\x06", 3, &regs, &stack, NULL, &v),
                         -EFAULT);
        /* a register not known, an unsupported op, stack underflow, a bad branch */
        assert_int_equal(uw_expr_eval((const uint8_t *)"\x73\x00", 2, &regs, &stack, NULL, &v),
                         -ENOENT);
        assert_int_equal(uw_expr_eval((const uint8_t *)"\x9c", 1, &regs, &stack, NULL, &v),
                         -ENOTSUP);
        assert_int_equal(uw_expr_eval((const uint8_t *)"\x22", 1, &regs, &stack, NULL, &v),
                         -EINVAL);
        assert_int_equal(
                uw_expr_eval((const uint8_t *)"\x31\x28\x40\x00", 4, &regs, &stack, NULL, &v),
                -EINVAL);
        /* arithmetic, the pushed CFA, branches, signed division */
        uint64_t cfa = 100;
        assert_int_equal(
                uw_expr_eval((const uint8_t *)"\x23\x05\x3a\x1e", 4, &regs, &stack, &cfa, &v), 0);
        assert_int_equal(v, 105 * 10);
        assert_int_equal(uw_expr_eval((const uint8_t *)"\x30\x28\x01\x00\x31\x32", 6, &regs, &stack,
                                      NULL, &v),
                         0);
        assert_int_equal(v, 2);
        assert_int_equal(
                uw_expr_eval((const uint8_t *)"\x11\x7f\x32\x1b", 4, &regs, &stack, NULL, &v), 0);
        assert_int_equal((int64_t)v, 0); /* -1 / 2 */
        assert_int_equal(uw_expr_eval((const uint8_t *)"\x31\x30\x1b", 3, &regs, &stack, NULL, &v),
                         -EINVAL);
        /* a loop ends at the step limit */
        assert_int_equal(uw_expr_eval((const uint8_t *)"\x2f\xfd\xff", 3, &regs, &stack, NULL, &v),
                         -EINVAL);
}

static void test_regs_from_perf(void **state)
{
        (void)state;
        struct unwind_regs r;
        const uint64_t three[] = {0xb0, 0x5b, 0x1f}; /* BP, SP, IP */
        assert_int_equal(unwind_regs_from_perf(&r, three, UNWIND_PERF_REGS_MASK), 3);
        assert_int_equal(r.r[UNWIND_REG_RBP], 0xb0);
        assert_int_equal(r.r[UNWIND_REG_RSP], 0x5b);
        assert_int_equal(r.r[UNWIND_REG_RIP], 0x1f);
        assert_int_equal(r.valid, 1u << 6 | 1u << 7 | 1u << 16);
        /* perf's full x86-64 user mask (AX..R15 without the segment registers) */
        uint64_t all[24];
        for (int i = 0; i < 24; i++)
                all[i] = 100 + (uint64_t)i;
        uint64_t mask = 0xff0fffull; /* 0-11, 16-23: AX..SS, R8..R15 */
        uint64_t vals[20];
        uint32_t n = 0;
        for (int i = 0; i < 24; i++)
                if (mask & (1ull << i))
                        vals[n++] = all[i];
        assert_int_equal(unwind_regs_from_perf(&r, vals, mask), 20);
        assert_int_equal(r.r[UNWIND_REG_RAX], 100);
        assert_int_equal(r.r[UNWIND_REG_RBX], 101);
        assert_int_equal(r.r[UNWIND_REG_RDX], 103);
        assert_int_equal(r.r[8], 116);
        assert_int_equal(r.r[15], 123);
        assert_int_equal(r.r[UNWIND_REG_RIP], 108);
        assert_int_equal(r.valid, (1u << 17) - 1);
}

/* ---- snapshots of the fixture ---- */

struct pmap {
        uint64_t start, end, pgoff;
        char path[256];
        struct unwind_module *module;
        uint64_t bias;
};

struct snap {
        struct unwind_regs regs;
        uint32_t in_plt;
        uint64_t base, size;
        uint8_t *bytes;
};

struct snapfile {
        struct pmap maps[256];
        int nr_maps;
        struct snap snaps[600];
        int nr_snaps;
        struct unwind_cache *cache;
        uint8_t *data;
        /* libdw's view of the same process */
        Dwfl *dwfl;
        const struct snap *cur;
        uint64_t libdw_frames[MAX_FRAMES];
        int nr_libdw_frames;
};

static void run(const char *exe, const char *mode, const char *out, const char *n)
{
        pid_t pid;
        char *argv[] = {(char *)exe, (char *)mode, (char *)out, (char *)n, NULL};
        assert_int_equal(posix_spawn(&pid, exe, NULL, NULL, argv, environ), 0);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static int find_snap_map(void *ctx, uint64_t addr, struct unwind_map *map)
{
        const struct snapfile *sf = ctx;
        for (int i = 0; i < sf->nr_maps; i++) {
                const struct pmap *p = &sf->maps[i];
                if (addr >= p->start && addr < p->end && p->module) {
                        map->module = p->module;
                        map->bias = p->bias;
                        return 0;
                }
        }
        return -ENOENT;
}

/* libdw's thread callbacks over the current snapshot */
static pid_t dw_next_thread(Dwfl *dwfl, void *arg, void **thread_arg)
{
        (void)dwfl;
        if (*thread_arg)
                return 0;
        *thread_arg = arg;
        return 4242;
}
static bool dw_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_arg)
{
        (void)dwfl;
        (void)tid;
        *thread_arg = arg;
        return true;
}
static bool dw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
        (void)dwfl;
        const struct snapfile *sf = arg;
        struct unwind_stack s = {sf->cur->base, sf->cur->bytes, sf->cur->size};
        uint64_t v;
        if (uw_stack_read(&s, addr, &v) < 0)
                return false;
        *result = v;
        return true;
}
static bool dw_set_registers(Dwfl_Thread *thread, void *arg)
{
        const struct snapfile *sf = arg;
        const struct unwind_regs *r = &sf->cur->regs;
        for (int i = 0; i < 16; i++) {
                Dwarf_Word w = r->r[i];
                if ((r->valid & (1u << i)) && !dwfl_thread_state_registers(thread, i, 1, &w))
                        return false;
        }
        dwfl_thread_state_register_pc(thread, r->r[UNWIND_REG_RIP]);
        return true;
}
static const Dwfl_Thread_Callbacks dw_callbacks = {
        .next_thread = dw_next_thread,
        .get_thread = dw_get_thread,
        .memory_read = dw_memory_read,
        .set_initial_registers = dw_set_registers,
};
static const Dwfl_Callbacks dwfl_offline = {
        .find_elf = dwfl_build_id_find_elf,
        .find_debuginfo = dwfl_standard_find_debuginfo,
};

static int dw_frame(Dwfl_Frame *frame, void *arg)
{
        struct snapfile *sf = arg;
        Dwarf_Addr pc;
        if (!dwfl_frame_pc(frame, &pc, NULL) || sf->nr_libdw_frames == MAX_FRAMES)
                return DWARF_CB_ABORT;
        sf->libdw_frames[sf->nr_libdw_frames++] = pc;
        return DWARF_CB_OK;
}

/* Reads a fixture's file; with_path/as_path: unwind with another file in place of one. */
static struct snapfile *load_snapfile(const char *path, const char *with_path, const char *as_path)
{
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        fseek(f, 0, SEEK_END);
        long size = ftell(f);
        fseek(f, 0, SEEK_SET);
        struct snapfile *sf = calloc(1, sizeof(*sf));
        sf->data = malloc((size_t)size);
        assert_int_equal(fread(sf->data, 1, (size_t)size, f), (size_t)size);
        fclose(f);
        assert_int_equal(unwind_cache_new(&sf->cache, NULL), 0);

        const uint8_t *p = sf->data, *end = sf->data + size;
        assert_memory_equal(p, "UWMAPS1", 8);
        uint64_t len;
        memcpy(&len, p + 8, 8);
        char *text = strndup((const char *)p + 16, len);
        p += 16 + len;
        sf->dwfl = dwfl_begin(&dwfl_offline);
        dwfl_report_begin(sf->dwfl);
        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
                unsigned long long s, e, off;
                char perms[8], file[256] = "";
                if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %255s", &s, &e, perms, &off, file) <
                            4 ||
                    !strchr(perms, 'x') || file[0] != '/')
                        continue;
                struct pmap *m = &sf->maps[sf->nr_maps++];
                m->start = s;
                m->end = e;
                m->pgoff = off;
                snprintf(m->path, sizeof(m->path), "%s",
                         with_path && strcmp(file, as_path) == 0 ? with_path : file);
                assert_int_equal(unwind_cache_get(sf->cache, m->path, NULL, 0, &m->module), 0);
                assert_int_equal(unwind_module_bias(m->module, s, off, &m->bias), 0);
                dwfl_report_elf(sf->dwfl, m->path, m->path, -1, m->bias, false);
        }
        dwfl_report_end(sf->dwfl, NULL, NULL);
        free(text);
        assert_true(dwfl_attach_state(sf->dwfl, NULL, 4242, &dw_callbacks, sf));

        while (p + 8 <= end && memcmp(p, "UWSNAP1", 8) == 0) {
                struct snap *s = &sf->snaps[sf->nr_snaps++];
                memcpy(s->regs.r, p + 8, 17 * 8);
                memcpy(&s->regs.valid, p + 8 + 136, 4);
                memcpy(&s->in_plt, p + 8 + 140, 4);
                memcpy(&s->base, p + 8 + 144, 8);
                memcpy(&s->size, p + 8 + 152, 8);
                s->bytes = (uint8_t *)p + 168;
                p += 168 + s->size;
                assert_true(p <= end);
        }
        assert_true(sf->nr_snaps > 0);
        return sf;
}

static void free_snapfile(struct snapfile *sf)
{
        dwfl_end(sf->dwfl);
        unwind_cache_free(sf->cache);
        free(sf->data);
        free(sf);
}

/* libdw's frames for a snapshot (into sf->libdw_frames). */
static int libdw_walk(struct snapfile *sf, const struct snap *s)
{
        sf->cur = s;
        sf->nr_libdw_frames = 0;
        dwfl_getthread_frames(sf->dwfl, 4242, dw_frame, sf);
        return sf->nr_libdw_frames;
}

static uint32_t our_walk(struct snapfile *sf, const struct snap *s, uint64_t size,
                         const struct unwind_walk_options *o, uint64_t *f,
                         struct unwind_result *res)
{
        struct unwind_stack st = {s->base, s->bytes, size};
        return unwind_walk(&s->regs, &st, find_snap_map, sf, o, f, MAX_FRAMES, res);
}

static const char *name_of(struct snapfile *sf, uint64_t pc, bool is_first)
{
        uint64_t a = is_first ? pc : pc - 1;
        Dwfl_Module *m = dwfl_addrmodule(sf->dwfl, a);
        const char *n = m ? dwfl_module_addrname(m, a) : NULL;
        return n ? n : "?";
}

static void print_frames(struct snapfile *sf, const char *what, const uint64_t *f, uint32_t n,
                         const struct unwind_result *res)
{
        printf("# %s: %u frames, stopped at %s\n", what, n, unwind_stop_name(res->stop));
        for (uint32_t i = 0; i < n; i++)
                printf("#   %2u %#14llx %s\n", i, (unsigned long long)f[i],
                       name_of(sf, f[i], i == 0));
}

/* The index of the first frame named name (a prefix: GCC's clones are name.constprop.0) at or
   after from, or -1. */
static int frame_named(struct snapfile *sf, const uint64_t *f, uint32_t n, uint32_t from,
                       const char *name)
{
        for (uint32_t i = from; i < n; i++) {
                const char *s = name_of(sf, f[i], i == 0);
                if (strncmp(s, name, strlen(name)) == 0 &&
                    (s[strlen(name)] == 0 || s[strlen(name)] == '.'))
                        return (int)i;
        }
        return -1;
}

/* Asserts that names appear in this order. */
static void assert_chain(struct snapfile *sf, const uint64_t *f, uint32_t n,
                         const char *const *names)
{
        int at = 0;
        for (; *names; names++) {
                int i = frame_named(sf, f, n, (uint32_t)at, *names);
                if (i < 0)
                        fail_msg("frame %s missing after frame %d", *names, at);
                at = i + 1;
        }
}

static void assert_same_as_libdw(struct snapfile *sf, const struct snap *s, const uint64_t *f,
                                 uint32_t n)
{
        int nd = libdw_walk(sf, s);
        if ((uint32_t)nd != n || memcmp(f, sf->libdw_frames, n * 8) != 0) {
                struct unwind_result r = {0};
                print_frames(sf, "libdw", sf->libdw_frames, (uint32_t)nd, &r);
                fail_msg("%u frames here, %d by libdw", n, nd);
        }
}

static char tmpdir[64];

static const char *tmp_path(const char *name)
{
        static char path[128];
        snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
        return path;
}

static int setup_tmp(void **state)
{
        (void)state;
        snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_unwind.XXXXXX");
        return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_tmp(void **state)
{
        (void)state;
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
        return system(cmd) == 0 ? 0 : -1;
}

/* A fixture build's qsort snapshot (file name), walked whole: from the comparator through libc
   to the thread's start, as libdw walks it. Its frames into f; their number. */
static uint32_t walk_qsort(const char *fixture, const char *file, struct snapfile **sf, uint64_t *f)
{
        run(fixture, "qsort", tmp_path(file), NULL);
        *sf = load_snapfile(tmp_path(file), NULL, NULL);
        struct unwind_result res;
        uint32_t n = our_walk(*sf, &(*sf)->snaps[0], (*sf)->snaps[0].size, NULL, f, &res);
        print_frames(*sf, file, f, n, &res);
        assert_int_equal(res.stop, UNWIND_STOP_THREAD_START);
        static const char *const chain[] = {"snap_here", "compare", "run_qsort",
                                            "main",      "_start",  NULL};
        assert_chain(*sf, f, n, chain);
        assert_same_as_libdw(*sf, &(*sf)->snaps[0], f, n);
        return n;
}

static void test_qsort(void **state)
{
        (void)state;
        struct snapfile *sf;
        uint64_t f[MAX_FRAMES];
        uint32_t n = walk_qsort(UNWIND_FIXTURE, "qsort", &sf, f);
        /* libc frames between the comparator and its caller */
        int c = frame_named(sf, f, n, 0, "compare"), q = frame_named(sf, f, n, 0, "run_qsort");
        assert_true(q - c >= 2);

        /* truncated copies: a prefix of the frames, then "stack end" */
        uint32_t nr_truncated = 0;
        for (uint64_t size = 0; size < sf->snaps[0].size; size += 24) {
                uint64_t g[MAX_FRAMES];
                struct unwind_result r;
                uint32_t m = our_walk(sf, &sf->snaps[0], size, NULL, g, &r);
                assert_true(m >= 1 && m <= n);
                assert_memory_equal(g, f, m * 8);
                if (m < n) {
                        assert_int_equal(r.stop, UNWIND_STOP_STACK_END);
                        nr_truncated++;
                }
        }
        printf("# %u truncated copies (every 24 bytes of %llu) stopped cleanly\n", nr_truncated,
               (unsigned long long)sf->snaps[0].size);
        assert_true(nr_truncated > 0);
        free_snapfile(sf);
}

/* The fixture linked by lld: its text segment starts in the read-only segment's last page, and
   the mapping's bias must be the text's (the walk found no rule for any frame when it took the
   read-only segment's). */
static void test_qsort_lld(void **state)
{
        (void)state;
#ifdef UNWIND_FIXTURE_LLD
        struct snapfile *sf;
        uint64_t f[MAX_FRAMES];
        walk_qsort(UNWIND_FIXTURE_LLD, "qsort-lld", &sf, f);
        free_snapfile(sf);
#else
        print_message("skipped: no ld.lld to link the fixture with\n");
        skip();
#endif
}

static void test_signal(void **state)
{
        (void)state;
        run(UNWIND_FIXTURE, "signal", tmp_path("signal"), NULL);
        struct snapfile *sf = load_snapfile(tmp_path("signal"), NULL, NULL);
        uint64_t f[MAX_FRAMES];
        struct unwind_result res;
        uint32_t n = our_walk(sf, &sf->snaps[0], sf->snaps[0].size, NULL, f, &res);
        print_frames(sf, "signal handler", f, n, &res);
        assert_int_equal(res.stop, UNWIND_STOP_THREAD_START);
        assert_int_equal(res.nr_signal_frames, 1);
        static const char *const chain[] = {"snap_here", "on_usr1", "run_signal",
                                            "main",      "_start",  NULL};
        assert_chain(sf, f, n, chain);
        assert_same_as_libdw(sf, &sf->snaps[0], f, n);
        free_snapfile(sf);
}

static void test_thread(void **state)
{
        (void)state;
        run(UNWIND_FIXTURE, "thread", tmp_path("thread"), NULL);
        struct snapfile *sf = load_snapfile(tmp_path("thread"), NULL, NULL);
        uint64_t f[MAX_FRAMES];
        struct unwind_result res;
        uint32_t n = our_walk(sf, &sf->snaps[0], sf->snaps[0].size, NULL, f, &res);
        print_frames(sf, "second thread", f, n, &res);
        assert_int_equal(res.stop, UNWIND_STOP_THREAD_START);
        static const char *const chain[] = {"snap_here", "compare", "thread_main", NULL};
        assert_chain(sf, f, n, chain);
        assert_same_as_libdw(sf, &sf->snaps[0], f, n);
        free_snapfile(sf);
}

/* The frame-pointer build, unwound against a copy without .eh_frame: no CFI at the first
   frame; with the fallback, the same frames as with its CFI. */
static void test_no_cfi(void **state)
{
        (void)state;
        run(UNWIND_FIXTURE_FP, "chain", tmp_path("chain"), NULL);
        struct snapfile *with = load_snapfile(tmp_path("chain"), NULL, NULL);
        struct snapfile *sf =
                load_snapfile(tmp_path("chain"), UNWIND_FIXTURE_NOCFI, UNWIND_FIXTURE_FP);
        uint64_t f[MAX_FRAMES], g[MAX_FRAMES];
        struct unwind_result res, r2;
        uint32_t n = our_walk(with, &with->snaps[0], with->snaps[0].size, NULL, f, &res);
        print_frames(with, "frame-pointer build, with CFI", f, n, &res);
        assert_int_equal(res.stop, UNWIND_STOP_THREAD_START);
        static const char *const chain[] = {"snap_here", "chain_c", "chain_b", "chain_a",
                                            "main",      "_start",  NULL};
        assert_chain(with, f, n, chain);

        struct unwind_module_info info;
        unwind_module_get_info(sf->maps[0].module, &info);
        printf("# %s: %s\n", UNWIND_FIXTURE_NOCFI, info.note);
        uint32_t m = our_walk(sf, &sf->snaps[0], sf->snaps[0].size, NULL, g, &r2);
        assert_int_equal(m, 1);
        assert_int_equal(r2.stop, UNWIND_STOP_NO_CFI);
        assert_int_equal(r2.stop_addr, sf->snaps[0].regs.r[UNWIND_REG_RIP]);

        struct unwind_walk_options fp = {.use_fp_fallback = true};
        m = our_walk(sf, &sf->snaps[0], sf->snaps[0].size, &fp, g, &r2);
        print_frames(sf, "without CFI, frame pointers", g, m, &r2);
        assert_int_equal(r2.stop, UNWIND_STOP_THREAD_START);
        assert_int_equal(m, n);
        assert_memory_equal(g, f, n * 8);
        assert_int_equal(r2.nr_fp_frames, 5); /* snap_here .. main; libc has its CFI */
        free_snapfile(sf);
        free_snapfile(with);
}

/* Whether the rule at a sample's ip is a CFA expression (a PLT stub's). */
static bool is_expr_frame(struct snapfile *sf, uint64_t ip)
{
        struct unwind_map map;
        struct unwind_rule_info r;
        return find_snap_map(sf, ip, &map) == 0 &&
               unwind_module_lookup(map.module, ip - map.bias, &r) == 0 && r.cfa == UNWIND_CFA_EXPR;
}

/* Timer samples anywhere in a qsort/bsearch/PLT workload: every one against libdw. libdw 0.188
   cannot evaluate the PLT's CFA expression (DW_OP_breg16, the rip it does not keep as a
   register): there it gives the first frame only, and the stub's own bytes are the check. */
static void test_samples(void **state)
{
        (void)state;
        run(UNWIND_FIXTURE, "sample", tmp_path("sample"), "300");
        struct snapfile *sf = load_snapfile(tmp_path("sample"), NULL, NULL);
        uint32_t nr_same = 0, nr_plt = 0, nr_frames = 0, nr_libdw_plt = 0, nr_short = 0;
        uint32_t stops[UNWIND_NR_STOPS] = {0};
        for (int i = 0; i < sf->nr_snaps; i++) {
                const struct snap *s = &sf->snaps[i];
                uint64_t f[MAX_FRAMES];
                struct unwind_result res;
                uint64_t ip = s->regs.r[UNWIND_REG_RIP];
                uint32_t n = our_walk(sf, s, s->size, NULL, f, &res);
                int nd = libdw_walk(sf, s);
                bool is_same = (uint32_t)nd == n && memcmp(f, sf->libdw_frames, n * 8) == 0;
                nr_same += is_same;
                nr_frames += n;
                stops[res.stop]++;
                /* short of the thread's start only where libdw stops at the same frame too (a
                   sample where no CFI describes the instruction, 1 in 300 runs or so) */
                if (res.stop != UNWIND_STOP_THREAD_START) {
                        print_frames(sf, "short of the thread start", f, n, &res);
                        nr_short += is_same;
                }
                if (!is_same && nd == 1 && is_expr_frame(sf, ip)) {
                        nr_libdw_plt++;
                } else if (!is_same) {
                        print_frames(sf, "differs from libdw", f, n, &res);
                        print_frames(sf, "libdw", sf->libdw_frames, (uint32_t)nd, &res);
                }
                if (s->in_plt) {
                        nr_plt++;
                        print_frames(sf, "PLT stub", f, n, &res);
                        assert_int_equal(res.stop, UNWIND_STOP_THREAD_START);
                        static const char *const chain[] = {"run_sampler", "main", NULL};
                        assert_chain(sf, f, n, chain);
                        /* the stub's caller: one of the fixture's functions that call libc */
                        assert_true(frame_named(sf, f, n, 1, "work_plt") == 1 ||
                                    frame_named(sf, f, n, 1, "run_qsort") == 1 ||
                                    frame_named(sf, f, n, 1, "thread_main") == 1);
                        if ((ip & 15) < 6) { /* at the stub's jmp: the return address at rsp */
                                uint64_t ra;
                                memcpy(&ra, s->bytes, 8);
                                assert_int_equal(f[1], ra);
                        }
                }
        }
        printf("# %d samples, %u frames: %u the same as libdw's, %u in a PLT stub where libdw "
               "stops; stops:",
               sf->nr_snaps, nr_frames, nr_same, nr_libdw_plt);
        for (int i = 0; i < UNWIND_NR_STOPS; i++)
                if (stops[i])
                        printf(" %s %u", unwind_stop_name((enum unwind_stop)i), stops[i]);
        printf("; %u in the fixture's PLT\n", nr_plt);
        assert_true(nr_plt >= 1);
        assert_int_equal(nr_same + nr_libdw_plt, sf->nr_snaps);
        assert_int_equal(stops[UNWIND_STOP_THREAD_START] + nr_short, sf->nr_snaps);
        assert_true(nr_short * 100 <= (uint32_t)sf->nr_snaps);
        free_snapfile(sf);
}

/* Every row of the fixture's and libc's tables against dwarf_cfi_addrframe at its first and
   last byte. */
static uint32_t compare_table(const char *path, uint32_t *nr_expr)
{
        struct unwind_cache *c;
        struct unwind_module *m;
        assert_int_equal(unwind_cache_new(&c, NULL), 0);
        assert_int_equal(unwind_cache_get(c, path, NULL, 0, &m), 0);
        struct unwind_module_info info;
        unwind_module_get_info(m, &info);
        int fd = open(path, O_RDONLY);
        Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
        Dwarf_CFI *cfi = dwarf_getcfi_elf(elf);
        assert_non_null(cfi);
        uint32_t nr_checked = 0;
        const struct uw_table *t = &m->table;
        for (uint32_t i = 0; i + 1 < t->nr_rows; i++) {
                uint64_t ends[2] = {t->base + t->starts[i], t->base + t->starts[i + 1] - 1};
                for (int k = 0; k < 2; k++) {
                        struct unwind_rule_info r;
                        Dwarf_Frame *fr = NULL;
                        int has_ours = unwind_module_lookup(m, ends[k], &r) == 0;
                        int has_theirs = dwarf_cfi_addrframe(cfi, ends[k], &fr) == 0;
                        if (!has_ours) {
                                /* a gap: libdw has no FDE either */
                                assert_false(has_theirs);
                                free(fr);
                                continue;
                        }
                        assert_true(has_theirs);
                        Dwarf_Op *ops, mem[3];
                        size_t nops;
                        assert_int_equal(dwarf_frame_cfa(fr, &ops, &nops), 0);
                        if (r.cfa == UNWIND_CFA_REG) {
                                assert_int_equal(nops, 1);
                                assert_int_equal(ops[0].atom, DW_OP_bregx);
                                assert_int_equal(ops[0].number, r.cfa_reg);
                                assert_int_equal((int64_t)ops[0].number2, r.cfa_offset);
                        } else {
                                assert_int_equal(r.cfa, UNWIND_CFA_EXPR);
                                assert_true(nops >= 1 && ops[0].atom != DW_OP_bregx);
                                (*nr_expr)++;
                        }
                        for (int reg = 6; reg <= 16; reg += 10) {
                                enum unwind_reg_kind kind = reg == 6 ? r.rbp : r.ra;
                                int64_t off = reg == 6 ? r.rbp_offset : r.ra_offset;
                                assert_int_equal(dwarf_frame_register(fr, reg, mem, &ops, &nops),
                                                 0);
                                if (kind == UNWIND_RULE_SAME) {
                                        assert_int_equal(nops, 0);
                                        assert_null(ops);
                                } else if (kind == UNWIND_RULE_UNDEFINED) {
                                        assert_int_equal(nops, 0);
                                        assert_non_null(ops);
                                } else if (kind == UNWIND_RULE_AT) {
                                        /* a location: the CFA plus the offset */
                                        assert_int_equal(nops, 2);
                                        assert_int_equal(ops[0].atom, DW_OP_call_frame_cfa);
                                        assert_int_equal(ops[1].atom, DW_OP_plus_uconst);
                                        assert_int_equal((int64_t)ops[1].number, off);
                                } else if (kind == UNWIND_RULE_REG) {
                                        assert_int_equal(nops, 1);
                                        assert_int_equal(ops[0].atom, DW_OP_regx);
                                        assert_int_equal(ops[0].number, off);
                                } else if (kind != UNWIND_RULE_EXPR) {
                                        fail_msg("%#llx reg %d: kind %d, libdw %zu ops, first %#x",
                                                 (unsigned long long)ends[k], reg, kind, nops,
                                                 nops ? ops[0].atom : 0);
                                }
                        }
                        Dwarf_Addr start, end;
                        bool is_signal;
                        dwarf_frame_info(fr, &start, &end, &is_signal);
                        assert_int_equal(is_signal, r.is_signal_frame);
                        free(fr);
                        nr_checked++;
                }
        }
        printf("# %s: %u rows (%u FDEs, %zu bytes, built in %.2f ms), %u lookups the same as "
               "libdw's\n",
               path, info.nr_rows, info.nr_fdes, info.table_bytes, info.build_ns / 1e6, nr_checked);
        dwarf_cfi_end(cfi);
        elf_end(elf);
        close(fd);
        unwind_cache_free(c);
        return nr_checked;
}

static void test_table_vs_libdw(void **state)
{
        (void)state;
        uint32_t nr_expr = 0;
        assert_true(compare_table(UNWIND_FIXTURE, &nr_expr) > 10);
        const char *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
        if (access(libc, R_OK) == 0)
                assert_true(compare_table(libc, &nr_expr) > 1000);
        assert_true(nr_expr >= 1); /* the PLTs */
}

/* The frame-pointer verdict of --stackwalk-mode auto: the fixture's two builds. */
static void test_frame_pointers(void **state)
{
        (void)state;
        struct unwind_cache *c;
        struct unwind_module *m;
        assert_int_equal(unwind_cache_new(&c, NULL), 0);
        assert_int_equal(unwind_cache_get(c, UNWIND_FIXTURE, NULL, 0, &m), 0);
        assert_false(unwind_module_has_frame_pointers(m));
        assert_int_equal(unwind_cache_get(c, UNWIND_FIXTURE_FP, NULL, 0, &m), 0);
        assert_true(unwind_module_has_frame_pointers(m));
        struct unwind_module_info info;
        unwind_module_get_info(m, &info);
        assert_true(info.nr_fp_fdes > 0 && info.nr_fp_fdes <= info.nr_fdes);
        assert_int_equal(unwind_cache_get(c, "/proc/self/cmdline", NULL, 0, &m), 0);
        assert_false(unwind_module_has_frame_pointers(m)); /* no CFI: no verdict of frames */
        unwind_cache_free(c);
}

/* A file's GNU build-id (libdw's reader, independent of ours); its size, 0 if none. */
static size_t elf_build_id(const char *path, uint8_t *id, size_t max)
{
        int fd = open(path, O_RDONLY);
        assert_true(fd >= 0);
        elf_version(EV_CURRENT);
        Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
        const void *p = NULL;
        ssize_t n = elf ? dwelf_elf_gnu_build_id(elf, &p) : -1;
        size_t size = n > 0 && (size_t)n <= max ? (size_t)n : 0;
        if (size)
                memcpy(id, p, size);
        elf_end(elf);
        close(fd);
        return size;
}

static void test_cache(void **state)
{
        (void)state;
        struct unwind_cache *c;
        struct unwind_module *a, *b, *d;
        struct unwind_cache_stats st;
        assert_int_equal(unwind_cache_new(&c, NULL), 0);
        assert_int_equal(unwind_cache_get(c, UNWIND_FIXTURE, NULL, 0, &a), 0);
        assert_int_equal(unwind_cache_get(c, UNWIND_FIXTURE, NULL, 0, &b), 0);
        assert_ptr_equal(a, b);
        unwind_cache_get_stats(c, &st);
        assert_int_equal(st.nr_modules, 1);
        assert_int_equal(st.nr_loaded, 0); /* nothing read before it is needed */
        uint64_t bias;
        assert_int_equal(unwind_module_bias(a, 0x555555554000ull, 0, &bias), 0);
        assert_int_equal(bias, 0x555555554000ull);
        unwind_cache_get_stats(c, &st);
        assert_int_equal(st.nr_loaded, 1);
        assert_true(st.table_bytes > 0);
        /* by build-id: another module record, the same file */
        static const uint8_t id[] = {1, 2, 3, 4};
        assert_int_equal(unwind_cache_get(c, UNWIND_FIXTURE, id, sizeof(id), &d), 0);
        assert_ptr_not_equal(d, a);
        struct unwind_module_info info;
        /* the file is another build than the mapping's (replaced since): no rules, said */
        unwind_module_get_info(d, &info);
        assert_false(info.has_cfi);
        assert_non_null(strstr(info.note, "another build"));
        /* the right build-id (the file's own): its rules */
        uint8_t own[64];
        size_t own_size = elf_build_id(UNWIND_FIXTURE, own, sizeof(own));
        assert_true(own_size > 0);
        assert_int_equal(unwind_cache_get(c, UNWIND_FIXTURE, own, own_size, &d), 0);
        unwind_module_get_info(d, &info);
        assert_true(info.has_cfi);
        assert_int_equal(unwind_cache_get(c, "/nonexistent/x", NULL, 0, &d), -ENOENT);
        static const uint8_t other_id[] = {5, 6, 7, 8};
        assert_int_equal(unwind_cache_get(c, "/nonexistent/x", other_id, 4, &d), -ENOENT);
        /* a file that is not ELF: a module without CFI, with a note */
        assert_int_equal(unwind_cache_get(c, "/proc/self/cmdline", NULL, 0, &d), 0);
        unwind_module_get_info(d, &info);
        assert_false(info.has_cfi);
        assert_string_equal(info.note, "not an ELF file");
        unwind_cache_free(c);
        unwind_cache_free(NULL);
        unwind_module_close(NULL);

        /* an image in memory; and one that is not one */
        FILE *f = fopen(UNWIND_FIXTURE, "rb");
        static uint8_t img[4 << 20];
        size_t n = fread(img, 1, sizeof(img), f);
        fclose(f);
        struct unwind_error err;
        assert_int_equal(unwind_module_open_mem(&a, img, n, &err), 0);
        unwind_module_get_info(a, &info);
        assert_true(info.has_cfi);
        unwind_module_close(a);
        assert_int_equal(unwind_module_open_mem(&a, "hello", 5, &err), -EINVAL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_cfi_rows),       cmocka_unit_test(test_cfi_damaged),
                cmocka_unit_test(test_walk_synthetic), cmocka_unit_test(test_expr),
                cmocka_unit_test(test_regs_from_perf), cmocka_unit_test(test_cache),
                cmocka_unit_test(test_frame_pointers), cmocka_unit_test(test_table_vs_libdw),
                cmocka_unit_test(test_qsort),          cmocka_unit_test(test_signal),
                cmocka_unit_test(test_thread),         cmocka_unit_test(test_no_cfi),
                cmocka_unit_test(test_samples),        cmocka_unit_test(test_qsort_lld),
        };
        return cmocka_run_group_tests(tests, setup_tmp, teardown_tmp);
}
