/* SPDX-License-Identifier: MIT */
/* thread_sched.h: a thread created at a scheduling policy and priority of the caller's choice
   (a live session's real-time threads, backend/linux/live_source.h), not the creator's, or away
   from the creator's processor, and a thread's name. */
#ifndef ETWTOP_UTIL_THREAD_SCHED_H
#define ETWTOP_UTIL_THREAD_SCHED_H

#include <pthread.h>

/* Creates fn(arg) at policy (SCHED_FIFO, SCHED_OTHER, ...) and priority prio, set explicitly
   rather than inherited. 0, or an errno: EPERM where a real-time policy is not permitted (no
   CAP_SYS_NICE, no RLIMIT_RTPRIO), and the caller then makes an ordinary thread or none. */
int thread_create_sched(pthread_t *thread, void *(*fn)(void *), void *arg, int policy, int prio);

/* Creates fn(arg) to start on another processor than the caller's, where the process may run on
   more than one, and to run on every processor the process may once started: where the
   scheduler alone often put a new thread behind its busy creator until an idle processor pulled
   it (0.4 to 2.5 ms on a 2-CPU VM, by perf sched). A placement the system refuses leaves the
   thread to the scheduler. 0, or pthread_create's errno. */
int thread_create_away(pthread_t *thread, void *(*fn)(void *), void *arg);

/* Names the calling thread (at most 15 bytes kept), as ps -L, top -H, htop and perf show it:
   "etwtop-logger", "etwtop-feed", ... A failure changes nothing and is not reported. */
void thread_name_self(const char *name);

#endif
