/* SPDX-License-Identifier: MIT */
/* source_pick.h: a profile source chosen by name (--source): ETW's names as the screen and -b
   title them (Timer, TotalCycles, InstructionRetired...), or perf's for the same events
   (cycles, instructions, branch-misses...), or a perf.data event's own name. */
#ifndef ETWTOP_SOURCE_PICK_H
#define ETWTOP_SOURCE_PICK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/profile.h"

/* The index in sources[0..nr) of the one name (case aside) names, the closest match first (ETW's
   title, then the event's own name, then perf's generic name of an ETW source); -1: none. */
int source_pick(const struct profile *p, const uint16_t *sources, uint32_t nr, const char *name);
/* "Timer, TotalCycles, InstructionRetired": the names of sources[0..nr), into buf. */
void source_pick_list(const struct profile *p, const uint16_t *sources, uint32_t nr, char *buf,
                      size_t size);

#endif
