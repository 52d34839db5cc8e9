/* SPDX-License-Identifier: MIT */
/* fifo_permitted.h: whether this process may make a SCHED_FIFO thread (root, CAP_SYS_NICE or
   RLIMIT_RTPRIO): the tests of the live session's real-time threads expect SCHED_FIFO where it
   is, and an ordinary thread where it is not. */
#ifndef ETWTOP_TEST_FIFO_PERMITTED_H
#define ETWTOP_TEST_FIFO_PERMITTED_H

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>

#include "util/thread_sched.h"

static void *fifo_probe_main(void *arg)
{
        return arg;
}

static inline bool fifo_permitted(void)
{
        pthread_t th;
        if (thread_create_sched(&th, fifo_probe_main, NULL, SCHED_FIFO, 1) != 0)
                return false;
        pthread_join(th, NULL);
        return true;
}

#endif
