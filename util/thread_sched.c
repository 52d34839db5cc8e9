/* SPDX-License-Identifier: MIT */
/* thread_sched.c: owns creating a thread at an explicit scheduling policy and priority, and
   naming a thread. */
#include "util/thread_sched.h"

#include <errno.h>
#include <sched.h>
#include <sys/prctl.h>

int thread_create_sched(pthread_t *thread, void *(*fn)(void *), void *arg, int policy, int prio)
{
        pthread_attr_t attr;
        struct sched_param sp = {.sched_priority = prio};
        int rc = pthread_attr_init(&attr);
        if (rc != 0)
                return rc;
        rc = pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
        if (rc == 0)
                rc = pthread_attr_setschedpolicy(&attr, policy);
        if (rc == 0)
                rc = pthread_attr_setschedparam(&attr, &sp);
        if (rc == 0)
                rc = pthread_create(thread, &attr, fn, arg);
        pthread_attr_destroy(&attr);
        return rc;
}

void thread_name_self(const char *name)
{
        (void)prctl(PR_SET_NAME, name, 0, 0, 0);
}
