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

/* The CLOCK_MONOTONIC time timeout_ms from now: a deadline for pthread_cond_timedwait on a
   condition made with that clock (pthread_condattr_setclock). */
static inline struct timespec deadline_after_ms(uint32_t timeout_ms)
{
        struct timespec deadline;
        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_sec += timeout_ms / 1000;
        deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
        if (deadline.tv_nsec >= 1000000000) {
                deadline.tv_sec++;
                deadline.tv_nsec -= 1000000000;
        }
        return deadline;
}

#endif
