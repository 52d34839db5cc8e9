/* SPDX-License-Identifier: MIT */
/* frames_gen.h (internal to model/): what a memo of a stack's places holds good under: the
   events that change where one process's addresses lie, counted by pid. */
#ifndef ETWTOP_MODEL_FRAMES_GEN_H
#define ETWTOP_MODEL_FRAMES_GEN_H

#include <stdint.h>

#include "kevent.h"
#include "util/hash.h"

/* A memo of a stack (calltree.c, hot.c) is good while the answers of the symbol store for its
   process's frames stay. The store's own generation moves with every process's start and
   images: on a machine that starts processes all the time (a build) every memo missed. Here
   the events that move one process's addresses (its start and end, its images, their
   identity, its CLR methods) count under its pid, in PID_GEN_SLOTS slots (two pids that share
   a slot only miss more), and those that move everyone's (the kernel's images, pid 0, and
   symbols) count for all. A module that finishes loading moves neither: its places were
   pending, which no memo keeps (hot.c), or keyed by address and named in place at the next
   look for names (calltree.c's rekey), where a fresh walk's nodes would merge with them. */
#define FRAMES_GEN_SLOTS (1u << 12)

struct frames_gen {
        uint64_t all;
        uint32_t by_pid[FRAMES_GEN_SLOTS];
};

/* The kinds that move addresses: hot.h's and calltree.h's kinds hold them (hot.c and
   calltree.c check that they do). */
#define FRAMES_GEN_KINDS                                                                           \
        (1ull << KEV_PROCESS | 1ull << KEV_IMAGE | 1ull << KEV_IMAGE_IDENTITY |                    \
         1ull << KEV_DBG_ID | 1ull << KEV_CLR_MODULE | 1ull << KEV_CLR_METHOD |                    \
         1ull << KEV_KERNEL_SYMBOL)
_Static_assert(KEV_TYPE_MAX <= 64, "a kind is a bit of a 64-bit mask");

void frames_gen_moved(struct frames_gen *g, const struct kevent *ev);

/* Every process's kernel addresses may have moved, with no event that says so. */
static inline void frames_gen_kernel_moved(struct frames_gen *g)
{
        g->all++;
}

/* Counts ev where it moves addresses. Inline: every sample and stack asks, twice (the hot
   functions' and the call tree's), and the kinds that move addresses are rare. */
static inline void frames_gen_event(struct frames_gen *g, const struct kevent *ev)
{
        if ((unsigned)ev->type < 64 && (FRAMES_GEN_KINDS >> ev->type & 1))
                frames_gen_moved(g, ev);
}

/* Grows (never repeats) whenever pid's addresses may have moved. */
static inline uint64_t frames_gen_of(const struct frames_gen *g, uint32_t pid)
{
        return g->all + g->by_pid[hash_mix64(pid) & (FRAMES_GEN_SLOTS - 1)];
}

#endif
