/* SPDX-License-Identifier: MIT */
/* functions_ipc.c: owns the hot functions view's IPC per place, looked up by its rows. */
#include "functions_ipc.h"

#include <stdlib.h>

#include "model/hot_ipc.h"
#include "util/xalloc.h"

struct functions_ipc_entry {
        uint32_t module, function;
        uint64_t rel; /* 0 when function names the place */
        double ipc;
};

static int entry_cmp(const void *a, const void *b)
{
        const struct functions_ipc_entry *x = a, *y = b;
        if (x->module != y->module)
                return x->module < y->module ? -1 : 1;
        if (x->function != y->function)
                return x->function < y->function ? -1 : 1;
        if (x->rel != y->rel)
                return x->rel < y->rel ? -1 : 1;
        return 0;
}

bool functions_ipc_build(struct functions_ipc *fi, struct profile *p, bool is_by_module)
{
        struct hot *hot = profile_hot(p);
        fi->nr = 0;
        if (!hot_nr_samples(hot, HOT_IPC_CYCLES) || !hot_nr_samples(hot, HOT_IPC_INSTRUCTIONS))
                return false;
        uint64_t ci = profile_source_interval(p, HOT_IPC_CYCLES);
        uint64_t ii = profile_source_interval(p, HOT_IPC_INSTRUCTIONS);
        struct hot_ipc_row *rows;
        uint32_t n = is_by_module ? hot_ipc_module_rows(hot, ci, ii, 0, &rows)
                                  : hot_ipc_rows(hot, ci, ii, 0, &rows);
        free(fi->entries);
        fi->entries = xcalloc(n ? n : 1, sizeof(*fi->entries));
        for (uint32_t i = 0; i < n; i++)
                fi->entries[i] = (struct functions_ipc_entry){rows[i].module, rows[i].function,
                                                              rows[i].function ? 0 : rows[i].rel,
                                                              rows[i].ipc};
        free(rows);
        qsort(fi->entries, n, sizeof(*fi->entries), entry_cmp);
        fi->nr = n;
        return ci && ii;
}

double functions_ipc_of(const struct functions_ipc *fi, uint32_t module, uint32_t function,
                        uint64_t rel)
{
        struct functions_ipc_entry k = {module, function, function ? 0 : rel, 0};
        const struct functions_ipc_entry *e =
                fi->nr ? bsearch(&k, fi->entries, fi->nr, sizeof(*fi->entries), entry_cmp) : NULL;
        return e ? e->ipc : 0;
}

void functions_ipc_fini(struct functions_ipc *fi)
{
        free(fi->entries);
        fi->entries = NULL;
        fi->nr = 0;
}
