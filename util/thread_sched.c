/* SPDX-License-Identifier: MIT */
/* thread_sched.c: owns creating a thread at an explicit scheduling policy and priority, or away
   from its creator's processor, and naming a thread. */
#include "util/thread_sched.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
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

/* What a thread started away from its creator runs first: the processors it may use given
   back, then the caller's function. */
struct away {
        void *(*fn)(void *);
        void *arg;
        cpu_set_t allowed;
};

static void *start_away(void *p)
{
        struct away a = *(struct away *)p;
        free(p);
        (void)sched_setaffinity(0, sizeof(a.allowed), &a.allowed);
        return a.fn(a.arg);
}

int thread_create_away(pthread_t *thread, void *(*fn)(void *), void *arg)
{
        int cpu = sched_getcpu();
        struct away *a = malloc(sizeof(*a));
        pthread_attr_t attr;
        if (a && cpu >= 0 && cpu < CPU_SETSIZE &&
            sched_getaffinity(0, sizeof(a->allowed), &a->allowed) == 0 &&
            CPU_ISSET(cpu, &a->allowed) && CPU_COUNT(&a->allowed) > 1 &&
            pthread_attr_init(&attr) == 0) {
                cpu_set_t away = a->allowed;
                CPU_CLR(cpu, &away);
                a->fn = fn;
                a->arg = arg;
                int rc = pthread_attr_setaffinity_np(&attr, sizeof(away), &away);
                if (rc == 0)
                        rc = pthread_create(thread, &attr, start_away, a);
                pthread_attr_destroy(&attr);
                if (rc == 0)
                        return 0;
        }
        free(a);
        return pthread_create(thread, NULL, fn, arg);
}

void thread_name_self(const char *name)
{
        (void)prctl(PR_SET_NAME, name, 0, 0, 0);
}
