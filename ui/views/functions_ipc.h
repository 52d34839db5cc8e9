/* SPDX-License-Identifier: MIT */
/* functions_ipc.h: the hot functions view's IPC column: each function's (or module's)
   instructions per cycle, where the trace samples both cycles and instructions (hot_ipc.h). */
#ifndef ETWTOP_UI_FUNCTIONS_IPC_H
#define ETWTOP_UI_FUNCTIONS_IPC_H

#include <stdbool.h>
#include <stdint.h>

#include "model/hot_ipc.h"
#include "model/profile.h"

struct functions_ipc {
        struct hot_ipc_row *rows; /* owned, sorted by place (hot_ipc_place_cmp) */
        uint32_t nr;
};

/* The IPC of p's functions (is_by_module: of its modules), replacing what fi held; false (and
   none) when the trace does not sample both cycles and instructions with their intervals.
   Call it before asking for the rows it goes with: it asks the model for functions too. */
bool functions_ipc_build(struct functions_ipc *fi, struct profile *p, bool is_by_module);
/* The IPC of a place (module, function; rel where function is 0); 0: none (the place has no
   cycle sample, or no instruction sample: no estimate), which the column leaves blank as -b's
   IPC tables do. */
double functions_ipc_of(const struct functions_ipc *fi, uint32_t module, uint32_t function,
                        uint64_t rel);
void functions_ipc_fini(struct functions_ipc *fi);

#endif
