/* SPDX-License-Identifier: MIT */
/* hot_ipc.h: instructions per cycle per function, where a trace samples both cycles
   (TotalCycles) and instructions (InstructionRetired): each function's instruction samples
   times their interval over its cycle samples times theirs. */
#ifndef ETWTOP_MODEL_HOT_IPC_H
#define ETWTOP_MODEL_HOT_IPC_H

#include <stdint.h>

#include "model/hot.h"

#define HOT_IPC_CYCLES       19u /* KPROFILE_SOURCE ProfileTotalCycles */
#define HOT_IPC_INSTRUCTIONS 26u /* InstructionRetired */

struct hot_ipc_row {
        uint32_t module;   /* as struct hot_row's */
        uint32_t function; /* 0: not resolved (rel says where) */
        uint64_t rel;
        enum sym_state state;
        uint64_t nr_cycles;       /* TotalCycles samples here (self) */
        uint64_t nr_instructions; /* InstructionRetired samples here (self) */
        double ipc; /* instructions x their interval / cycles x theirs; 0: no estimate (no
                       instruction sample here; a sampled IPC is never 0), shown blank */
};

/* Orders rows by place (module, function; rel only where function is 0, an unnamed place):
   qsort's and bsearch's comparator, the one every IPC lookup uses. */
int hot_ipc_place_cmp(const void *a, const void *b);

/* The functions with cycle samples, most first (at most max; 0: all), each with its IPC.
   cycles_interval and instructions_interval: the events each sample stands for (the sources'
   CollectionStart intervals); 0 for either gives no rows. *rows is the caller's to free(). */
uint32_t hot_ipc_rows(struct hot *h, uint64_t cycles_interval, uint64_t instructions_interval,
                      uint32_t max, struct hot_ipc_row **rows);
/* The same per module (function 0, rel 0): where functions have no names, the modules still
   say where the time goes slowly. */
uint32_t hot_ipc_module_rows(struct hot *h, uint64_t cycles_interval,
                             uint64_t instructions_interval, uint32_t max,
                             struct hot_ipc_row **rows);

#endif
