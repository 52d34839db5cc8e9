/* SPDX-License-Identifier: MIT */
/* hot_ipc.c: owns the join of the cycles and instructions hot functions into IPC rows. */
#include "model/hot_ipc.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

int hot_ipc_place_cmp(const void *a, const void *b)
{
        const struct hot_ipc_row *x = a, *y = b;
        if (x->module != y->module)
                return x->module < y->module ? -1 : 1;
        if (x->function != y->function)
                return x->function < y->function ? -1 : 1;
        /* a named function's rel is where in it, not which: only an unnamed place's counts */
        uint64_t xr = x->function ? 0 : x->rel, yr = y->function ? 0 : y->rel;
        if (xr != yr)
                return xr < yr ? -1 : 1;
        return 0;
}

/* The IPC of a place's cycle and instruction samples; 0 where it has no instruction sample:
   a sampled IPC is never 0, so 0 says there is no estimate (the views leave it blank). */
static double ipc_of(uint64_t nr_cycles, uint64_t nr_instructions, uint64_t cycles_interval,
                     uint64_t instructions_interval)
{
        if (!nr_cycles || !nr_instructions)
                return 0;
        return (double)nr_instructions * (double)instructions_interval /
               ((double)nr_cycles * (double)cycles_interval);
}

uint32_t hot_ipc_rows(struct hot *h, uint64_t cycles_interval, uint64_t instructions_interval,
                      uint32_t max, struct hot_ipc_row **rows)
{
        *rows = NULL;
        if (!cycles_interval || !instructions_interval)
                return 0;
        const struct hot_row *r;
        /* the instructions first: hot_functions' answer lasts until the next call */
        uint32_t ni = hot_functions(h, HOT_IPC_INSTRUCTIONS, false, &r);
        struct hot_ipc_row *ins = xcalloc(ni ? ni : 1, sizeof(*ins));
        for (uint32_t i = 0; i < ni; i++)
                ins[i] = (struct hot_ipc_row){.module = r[i].module,
                                              .function = r[i].function,
                                              .rel = r[i].rel,
                                              .nr_instructions = r[i].self};
        qsort(ins, ni, sizeof(*ins), hot_ipc_place_cmp);
        uint32_t nc = hot_functions(h, HOT_IPC_CYCLES, false, &r);
        uint32_t n = max && max < nc ? max : nc;
        struct hot_ipc_row *out = xcalloc(n ? n : 1, sizeof(*out));
        uint32_t o = 0;
        for (uint32_t i = 0; i < nc && o < n; i++) {
                if (!r[i].self)
                        continue;
                struct hot_ipc_row *w = &out[o++];
                w->module = r[i].module;
                w->function = r[i].function;
                w->rel = r[i].rel;
                w->state = r[i].state;
                w->nr_cycles = r[i].self;
                const struct hot_ipc_row *m = bsearch(w, ins, ni, sizeof(*ins), hot_ipc_place_cmp);
                w->nr_instructions = m ? m->nr_instructions : 0;
                w->ipc = ipc_of(w->nr_cycles, w->nr_instructions, cycles_interval,
                                instructions_interval);
        }
        free(ins);
        *rows = out;
        return o;
}

uint32_t hot_ipc_module_rows(struct hot *h, uint64_t cycles_interval,
                             uint64_t instructions_interval, uint32_t max,
                             struct hot_ipc_row **rows)
{
        *rows = NULL;
        if (!cycles_interval || !instructions_interval)
                return 0;
        const struct hot_module_row *r;
        uint32_t ni = hot_modules(h, HOT_IPC_INSTRUCTIONS, &r);
        struct hot_ipc_row *ins = xcalloc(ni ? ni : 1, sizeof(*ins));
        for (uint32_t i = 0; i < ni; i++)
                ins[i] = (struct hot_ipc_row){.module = r[i].module, .nr_instructions = r[i].self};
        qsort(ins, ni, sizeof(*ins), hot_ipc_place_cmp);
        uint32_t nc = hot_modules(h, HOT_IPC_CYCLES, &r);
        uint32_t n = max && max < nc ? max : nc;
        struct hot_ipc_row *out = xcalloc(n ? n : 1, sizeof(*out));
        uint32_t o = 0;
        for (uint32_t i = 0; i < nc && o < n; i++) {
                if (!r[i].self)
                        continue;
                struct hot_ipc_row *w = &out[o++];
                w->module = r[i].module;
                w->state = r[i].module ? SYM_RESOLVED : SYM_NO_MODULE;
                w->nr_cycles = r[i].self;
                const struct hot_ipc_row *m = bsearch(w, ins, ni, sizeof(*ins), hot_ipc_place_cmp);
                w->nr_instructions = m ? m->nr_instructions : 0;
                w->ipc = ipc_of(w->nr_cycles, w->nr_instructions, cycles_interval,
                                instructions_interval);
        }
        free(ins);
        *rows = out;
        return o;
}
