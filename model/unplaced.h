/* SPDX-License-Identifier: MIT */
/* unplaced.h (internal to model/): whether an address no image held at the last look still
   stands unplaced, for the call tree's look for names (calltree.c rekey) and the functions
   view's rows (hot_row_keys.c), which ask it of every such node or place at every look. */
#ifndef ETWTOP_MODEL_UNPLACED_H
#define ETWTOP_MODEL_UNPLACED_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "frames_gen.h"
#include "util/hash.h"

#define UNPLACED_SLOTS 256

/* Live, sym_locate looks for a process's JIT map (perf-PID.map) once a refresh and then places
   all of the process's addresses from it: so the first of a process's unplaced addresses in a
   look is located again, and when it stays unplaced the process is marked here (by pid's hash,
   with the look's stamp), and its other addresses stand on that answer. Two pids that share a
   slot only locate more. Zeroed: no look yet. */
struct unplaced_probed {
        struct {
                uint32_t pid, stamp;
        } slots[UNPLACED_SLOTS];
        uint32_t stamp; /* the looks, counted: the marks of earlier looks are stale */
};

/* Starts a look: the marks of the last one no longer hold. */
static inline void unplaced_look(struct unplaced_probed *p)
{
        if (++p->stamp == 0) { /* wrapped: a mark 2^32 looks old must not read as new */
                memset(p->slots, 0, sizeof(p->slots));
                p->stamp = 1;
        }
}

/* Whether pid's address of no image at the last look (was: the frames' generations then; now:
   today's) is still of none: its process's addresses stayed (the events that place an address
   count there, frames_gen.h), and, live, this look found no JIT map for its process. */
static inline bool unplaced_stands(const struct unplaced_probed *p, const struct frames_gen *now,
                                   const struct frames_gen *was, uint32_t pid, bool is_live)
{
        if (frames_gen_of(now, pid) != frames_gen_of(was, pid))
                return false;
        if (!is_live)
                return true;
        uint32_t j = (uint32_t)hash_mix64(pid) & (UNPLACED_SLOTS - 1);
        return p->slots[j].stamp == p->stamp && p->slots[j].pid == pid;
}

/* pid's address was located again in this look and stayed of no image. */
static inline void unplaced_mark(struct unplaced_probed *p, uint32_t pid)
{
        uint32_t j = (uint32_t)hash_mix64(pid) & (UNPLACED_SLOTS - 1);
        p->slots[j].pid = pid;
        p->slots[j].stamp = p->stamp;
}

#endif
