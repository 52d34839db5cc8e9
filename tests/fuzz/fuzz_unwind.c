/* SPDX-License-Identifier: MIT */
/* fuzz_unwind.c: libFuzzer target for the unwinder from memory: hostile CFI bytes through the
   table compiler (unwind_module_open_cfi), lookups across the table, the same bytes as a DWARF
   expression, and a walk of hostile stack bytes over that table.
   Input: u8 flags (bit 0: the section is .debug_frame, bit 1: frame-pointer fallback, bit 2: a
   PLT range), u8 unused, u16 CFI length, u32 the section's vaddr, the CFI bytes, then u64 ip, sp,
   bp and the stack copy. Corpus: tests/corpus/unwind/ (the fixture's .eh_frame, a .debug_frame,
   a PLT's FDE, with stacks that walk). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/unwind.h"
#include "unwind_internal.h"

#define MAX_INPUT  (1u << 20)
#define MAX_FRAMES 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t fuzz_sink;

static int find_map(void *ctx, uint64_t addr, struct unwind_map *map)
{
        if (addr >= 0x100000000ull)
                return -1;
        map->module = ctx;
        map->bias = 0;
        return 0;
}

static void check_lookup(struct unwind_module *m, uint64_t vaddr)
{
        struct unwind_rule_info r;
        int rc = unwind_module_lookup(m, vaddr, &r);
        if (rc == 0 && (vaddr < r.start || vaddr >= r.end || r.cfa == UNWIND_CFA_NONE))
                abort();
        if (rc != 0 && r.cfa != UNWIND_CFA_NONE)
                abort();
        fuzz_sink += r.cfa_offset + r.ra_offset + r.rbp_offset;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 8 || size > MAX_INPUT)
                return 0;
        uint8_t flags = data[0];
        size_t cfi_len = (size_t)data[2] | (size_t)data[3] << 8;
        uint32_t vaddr;
        memcpy(&vaddr, data + 4, 4);
        if (cfi_len > size - 8)
                cfi_len = size - 8;
        /* a copy of exactly the CFI bytes: ASan sees any read past them */
        uint8_t *cfi = malloc(cfi_len ? cfi_len : 1);
        memcpy(cfi, data + 8, cfi_len);
        const uint8_t *rest = data + 8 + cfi_len;
        size_t rest_size = size - 8 - cfi_len;

        struct unwind_cfi_input in = {0};
        if (flags & 1) {
                in.debug_frame = cfi;
                in.debug_frame_size = cfi_len;
        } else {
                in.eh_frame = cfi;
                in.eh_frame_size = cfi_len;
                in.eh_frame_vaddr = vaddr;
        }
        in.text_vaddr = 0x1000;
        if (flags & 4) {
                in.plt_start[0] = vaddr & ~0xfffull;
                in.plt_end[0] = in.plt_start[0] + 0x100;
        }
        struct unwind_module *m = NULL;
        struct unwind_error err;
        if (unwind_module_open_cfi(&m, &in, &err) == 0) {
                struct unwind_module_info info;
                unwind_module_get_info(m, &info);
                if (!info.nr_rows || info.nr_bad_fdes > info.nr_fdes + 1)
                        abort();
                for (uint64_t a = 0; a < 0x4000; a += 7)
                        check_lookup(m, vaddr + a - 0x2000);
                check_lookup(m, 0);
                check_lookup(m, UINT64_MAX);
        } else if (m || !memchr(err.message, 0, sizeof(err.message))) {
                abort();
        }

        /* the rest as registers and a stack, walked over that table */
        uint64_t regs3[3] = {vaddr, 0x7ffd0000, 0x7ffd0100};
        size_t nr = rest_size < 24 ? rest_size : 24;
        memcpy(regs3, rest, nr);
        struct unwind_regs regs;
        unwind_regs_set(&regs, regs3[0], regs3[1], regs3[2]);
        struct unwind_stack stack = {regs3[1], rest + nr, rest_size - nr};
        struct unwind_walk_options o = {.use_fp_fallback = (flags & 2) != 0};
        uint64_t frames[MAX_FRAMES];
        struct unwind_result res;
        uint32_t n = unwind_walk(&regs, &stack, find_map, m, &o, frames, MAX_FRAMES, &res);
        if (n != res.nr_frames || n > MAX_FRAMES || n == 0 || frames[0] != regs3[0] ||
            (unsigned)res.stop >= UNWIND_NR_STOPS || res.nr_fp_frames > n)
                abort();
        if (!m && !(flags & 2) && res.stop != UNWIND_STOP_NO_MODULE)
                abort();
        fuzz_sink += unwind_stop_name(res.stop)[0];

        /* the CFI bytes as an expression, with the stack */
        uint64_t v, cfa = regs3[1];
        if (uw_expr_eval(cfi, cfi_len < 64 ? cfi_len : 64, &regs, &stack, &cfa, &v) == 0)
                fuzz_sink += v;

        unwind_module_close(m);
        free(cfi);
        return 0;
}
