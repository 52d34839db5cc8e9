/* SPDX-License-Identifier: MIT */
/* perf_conv_lbr.c: LBR filters: ETW's suppress bits to perf's branch_sample_type, and perf's branch
 * types. */
#include "perf_conv_int.h"

/* ---- LBR ---- */

int perf_lbr_filter_from_etw(uint32_t flags, struct perf_lbr_filter *out)
{
        uint64_t bst = 0;
        uint32_t keep = LBR_TYPES & ~flags;

        memset(out, 0, sizeof(*out));
        if (flags & ~(uint32_t)EVNTRACE_LBR_VALID_FLAGS)
                return -EINVAL;
        if (!(flags & EVNTRACE_LBR_FILTER_KERNEL))
                bst |= PERF_SAMPLE_BRANCH_KERNEL;
        if (!(flags & EVNTRACE_LBR_FILTER_USER))
                bst |= PERF_SAMPLE_BRANCH_USER;
        if (!bst)
                return -EINVAL; /* kernel and user both suppressed */
        if (flags & EVNTRACE_LBR_CALLSTACK_ENABLE) {
                out->branch_sample_type = bst | PERF_SAMPLE_BRANCH_CALL_STACK;
                return 0;
        }
        if (!keep)
                return -EINVAL;
        if (keep == LBR_TYPES) {
                bst |= PERF_SAMPLE_BRANCH_ANY;
        } else if (keep & (LBR_RJMP | LBR_FAR)) {
                /* no perf bit selects near relative jumps or far branches alone: take every
                   branch with its type and drop the rest here */
                bst |= PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_TYPE_SAVE;
                out->is_post_filtered = true;
        } else {
                if (keep & LBR_JCC)
                        bst |= PERF_SAMPLE_BRANCH_COND;
                if (keep & LBR_RCALL)
                        bst |= PERF_SAMPLE_BRANCH_CALL;
                if (keep & LBR_ICALL)
                        bst |= PERF_SAMPLE_BRANCH_IND_CALL;
                if (keep & LBR_IJMP)
                        bst |= PERF_SAMPLE_BRANCH_IND_JUMP;
                if (keep & LBR_RET) {
                        /* ANY_RETURN also captures far returns, which are filtered out */
                        bst |= PERF_SAMPLE_BRANCH_ANY_RETURN | PERF_SAMPLE_BRANCH_TYPE_SAVE;
                        out->is_post_filtered = true;
                }
        }
        out->branch_sample_type = bst;
        out->drop = out->is_post_filtered ? LBR_TYPES & ~keep : 0;
        return 0;
}

uint32_t perf_lbr_class_of(uint64_t entry_flags)
{
        switch ((entry_flags >> 20) & 0xF) {
        case PERF_BR_COND: return LBR_JCC;
        case PERF_BR_UNCOND: return LBR_RJMP;
        case PERF_BR_IND: return LBR_IJMP;
        case PERF_BR_CALL:
        case PERF_BR_COND_CALL: return LBR_RCALL;
        case PERF_BR_IND_CALL: return LBR_ICALL;
        case PERF_BR_RET:
        case PERF_BR_COND_RET: return LBR_RET;
        default: return LBR_FAR; /* syscall, sysret, eret, irq, unknown */
        }
}
