/* SPDX-License-Identifier: MIT */
/* remap.h (internal to model/): the events that take a process's mappings away or replace them,
   before which the samples still waiting in that process must be placed (profile_event): the
   symbol store takes such an event at once, and a sample placed after it would be looked for in
   the mappings that followed (a forked child's samples before its exec, in none). */
#ifndef ETWTOP_MODEL_REMAP_H
#define ETWTOP_MODEL_REMAP_H

#include <stdint.h>

#include "kevent.h"

/* The process whose mappings ev takes away or replaces (its end, an image's unload, a second
   start of its pid: a new program, as a perf.data's exec converts), or UINT32_MAX. An image
   loaded, a rundown's events and a thread's take nothing away. */
static inline uint32_t model_remapped_pid(const struct kevent *ev)
{
        if (ev->type == KEV_PROCESS &&
            (ev->process.phase == KEV_PHASE_START || ev->process.phase == KEV_PHASE_END ||
             ev->process.phase == KEV_PHASE_DEFUNCT))
                return ev->process.pid;
        if (ev->type == KEV_IMAGE && ev->image.phase == KEV_PHASE_END)
                return ev->image.pid;
        return UINT32_MAX;
}

#endif
