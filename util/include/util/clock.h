/* SPDX-License-Identifier: MIT */
/* clock.h: the tree's one reading of a clock in nanoseconds. */
#ifndef ETWTOP_UTIL_CLOCK_H
#define ETWTOP_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

/* clock_id's time in ns (0 if the clock cannot be read). */
static inline uint64_t clock_ns(clockid_t clock_id)
{
        struct timespec t;

        if (clock_gettime(clock_id, &t) != 0)
                return 0;
        return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* CLOCK_MONOTONIC in ns: intervals, deadlines, rates. */
static inline uint64_t now_ns(void)
{
        return clock_ns(CLOCK_MONOTONIC);
}

#endif
