/* SPDX-License-Identifier: MIT */
/* hot_ipc.c: owns the join of the cycles and instructions hot functions into IPC rows. */
#include "model/hot_ipc.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

struct key_count {
        uint32_t module, function;
        uint64_t rel; /* 0 when function names the place */
        uint64_t count;
};

static int key_cmp(const void *a, const void *b)
{
        const struct key_count *x = a, *y = b;
        if (x->module != y->module)
                return x->module < y->module ? -1 : 1;
        if (x->function != y->function)
                return x->function < y->function ? -1 : 1;
        if (x->rel != y->rel)
                return x->rel < y->rel ? -1 : 1;
        return 0;
}

static struct key_count key_of(const struct hot_row *r)
{
        return (struct key_count){r->module, r->function, r->function ? 0 : r->rel, r->self};
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
        struct key_count *ins = xcalloc(ni ? ni : 1, sizeof(*ins));
        for (uint32_t i = 0; i < ni; i++)
                ins[i] = key_of(&r[i]);
        qsort(ins, ni, sizeof(*ins), key_cmp);
        uint32_t nc = hot_functions(h, HOT_IPC_CYCLES, false, &r);
        uint32_t n = max && max < nc ? max : nc;
        struct hot_ipc_row *out = xcalloc(n ? n : 1, sizeof(*out));
        uint32_t o = 0;
        for (uint32_t i = 0; i < nc && o < n; i++) {
                if (!r[i].self)
                        continue;
                struct key_count k = key_of(&r[i]);
                const struct key_count *m = bsearch(&k, ins, ni, sizeof(*ins), key_cmp);
                struct hot_ipc_row *w = &out[o++];
                w->module = r[i].module;
                w->function = r[i].function;
                w->rel = r[i].rel;
                w->state = r[i].state;
                w->nr_cycles = r[i].self;
                w->nr_instructions = m ? m->count : 0;
                w->ipc = (double)w->nr_instructions * (double)instructions_interval /
                         ((double)w->nr_cycles * (double)cycles_interval);
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
        struct key_count *ins = xcalloc(ni ? ni : 1, sizeof(*ins));
        for (uint32_t i = 0; i < ni; i++)
                ins[i] = (struct key_count){r[i].module, 0, 0, r[i].self};
        qsort(ins, ni, sizeof(*ins), key_cmp);
        uint32_t nc = hot_modules(h, HOT_IPC_CYCLES, &r);
        uint32_t n = max && max < nc ? max : nc;
        struct hot_ipc_row *out = xcalloc(n ? n : 1, sizeof(*out));
        uint32_t o = 0;
        for (uint32_t i = 0; i < nc && o < n; i++) {
                if (!r[i].self)
                        continue;
                struct key_count k = {r[i].module, 0, 0, 0};
                const struct key_count *m = bsearch(&k, ins, ni, sizeof(*ins), key_cmp);
                struct hot_ipc_row *w = &out[o++];
                w->module = r[i].module;
                w->state = r[i].module ? SYM_RESOLVED : SYM_NO_MODULE;
                w->nr_cycles = r[i].self;
                w->nr_instructions = m ? m->count : 0;
                w->ipc = (double)w->nr_instructions * (double)instructions_interval /
                         ((double)w->nr_cycles * (double)cycles_interval);
        }
        free(ins);
        *rows = out;
        return o;
}
