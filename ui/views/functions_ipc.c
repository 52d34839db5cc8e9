/* SPDX-License-Identifier: MIT */
/* functions_ipc.c: owns the hot functions view's IPC per place, looked up by its rows. */
#include "functions_ipc.h"

#include <stdlib.h>

#include "model/hot_ipc.h"

bool functions_ipc_build(struct functions_ipc *fi, struct profile *p, bool is_by_module)
{
        struct hot *hot = profile_hot(p);
        free(fi->rows);
        fi->rows = NULL;
        fi->nr = 0;
        if (!hot_nr_samples(hot, HOT_IPC_CYCLES) || !hot_nr_samples(hot, HOT_IPC_INSTRUCTIONS))
                return false;
        uint64_t ci = profile_source_interval(p, HOT_IPC_CYCLES);
        uint64_t ii = profile_source_interval(p, HOT_IPC_INSTRUCTIONS);
        fi->nr = is_by_module ? hot_ipc_module_rows(hot, ci, ii, 0, &fi->rows)
                              : hot_ipc_rows(hot, ci, ii, 0, &fi->rows);
        if (fi->nr)
                qsort(fi->rows, fi->nr, sizeof(*fi->rows), hot_ipc_place_cmp);
        return ci && ii;
}

double functions_ipc_of(const struct functions_ipc *fi, uint32_t module, uint32_t function,
                        uint64_t rel)
{
        struct hot_ipc_row k = {.module = module, .function = function, .rel = rel};
        const struct hot_ipc_row *e =
                fi->nr ? bsearch(&k, fi->rows, fi->nr, sizeof(*fi->rows), hot_ipc_place_cmp) : NULL;
        return e ? e->ipc : 0;
}

void functions_ipc_fini(struct functions_ipc *fi)
{
        free(fi->rows);
        fi->rows = NULL;
        fi->nr = 0;
}
