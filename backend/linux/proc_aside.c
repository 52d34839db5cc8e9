/* SPDX-License-Identifier: MIT */
/* proc_aside.c: owns the reader thread of proc_aside.h: a queue of questions handed over
   through two counters and two eventfds (no lock the drain could wait on behind a thread that
   waits for a CPU), the drain woken only when it waits for an answer. */
#include "proc_aside.h"

#include "live_source.h"
#include "util/thread_sched.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

/* The logger's priority (live_source.h): the reader must not wait for a CPU behind the machine's
   ordinary threads, or every answer would come late on a busy machine, nor behind the
   session's other real-time threads while the drain waits for it. */
#define PROC_ASIDE_RT_PRIORITY LIVE_RT_PRIORITY_DRAIN

/* The questions, a queue of PROC_ASIDE_QUEUE entries that the drain alone adds to and the
   reader alone answers, in order: question i is in entries[i % PROC_ASIDE_QUEUE]; [nr_done,
   nr_asked) wait for the reader, [first, nr_done) are answered and held for the drain. An
   entry is the reader's from when it is asked until nr_done passes it, the drain's before and
   after: no lock either could wait on behind the other. */
struct aside_entry {
        uint32_t pid;
        uint32_t uid;
        char cmdline[PROC_ASIDE_MAX_CMDLINE + 1];
};

struct proc_aside {
        pthread_t thread;
        proc_aside_read_fn read;
        uint32_t wait_us;
        int ask_fd;    /* eventfd: a question (or the stop) is there */
        int answer_fd; /* eventfd, non-blocking: the answer waited for is there */
        atomic_bool is_stopping;
        _Atomic uint64_t nr_asked; /* the drain's: questions put in */
        _Atomic uint64_t nr_done;  /* the reader's: questions answered */
        /* the drain's wait: the question count the reader's answer must pass to wake it (0:
           none waits) */
        _Atomic uint64_t wake_at;
        /* the drain's alone */
        uint64_t first;    /* the oldest question whose answer is held */
        uint64_t stuck_at; /* + 1: the question the reader was on when a wait ran out */
        uint64_t nr_late;
        uint64_t nr_busy;
        uint64_t nr_waits;
        struct aside_entry entries[PROC_ASIDE_QUEUE];
};

static void fd_signal(int fd)
{
        uint64_t one = 1;
        if (write(fd, &one, sizeof(one)) < 0) {
                /* EAGAIN: the counter is full, the reader of it wakes anyway */
        }
}

static void fd_clear(int fd)
{
        uint64_t n;
        if (read(fd, &n, sizeof(n)) < 0) {
                /* EAGAIN: nothing was signalled */
        }
}

static void *reader_main(void *arg)
{
        struct proc_aside *a = arg;
        thread_name_self("etwtop-procread");
        uint64_t done = 0;
        for (;;) {
                if (done == atomic_load_explicit(&a->nr_asked, memory_order_acquire)) {
                        uint64_t n;
                        if (read(a->ask_fd, &n, sizeof(n)) < 0 && errno != EINTR && errno != EAGAIN)
                                break;
                }
                if (atomic_load_explicit(&a->is_stopping, memory_order_acquire))
                        break;
                if (done == atomic_load_explicit(&a->nr_asked, memory_order_acquire))
                        continue; /* a wake-up of questions already answered */
                struct aside_entry *e = &a->entries[done % PROC_ASIDE_QUEUE];
                e->cmdline[0] = 0;
                a->read(e->pid, e->cmdline, sizeof(e->cmdline), &e->uid);
                /* sequentially consistent with the drain's wake_at: either the drain sees the
                   answer before it sleeps, or this sees the drain waiting for it */
                atomic_store(&a->nr_done, ++done);
                uint64_t at = atomic_load(&a->wake_at);
                if (at && done >= at)
                        fd_signal(a->answer_fd);
        }
        return NULL;
}

/* Starts the reader with no signal (the process's handlers run on its own threads), at the
   logger's real-time priority where permitted. 0 or an errno. */
static int reader_start(struct proc_aside *a)
{
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        int rc =
                thread_create_sched(&a->thread, reader_main, a, SCHED_FIFO, PROC_ASIDE_RT_PRIORITY);
        if (rc != 0) /* not permitted: an ordinary thread, as the logger is then */
                rc = pthread_create(&a->thread, NULL, reader_main, a);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return rc;
}

int proc_aside_new(struct proc_aside **out, proc_aside_read_fn read, uint32_t wait_us)
{
        *out = NULL;
        struct proc_aside *a = calloc(1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        a->read = read;
        a->wait_us = wait_us;
        atomic_init(&a->is_stopping, false);
        atomic_init(&a->nr_asked, 0);
        atomic_init(&a->nr_done, 0);
        atomic_init(&a->wake_at, 0);
        a->ask_fd = eventfd(0, EFD_CLOEXEC);
        a->answer_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        int rc = a->ask_fd < 0 || a->answer_fd < 0 ? -errno : -reader_start(a);
        if (rc < 0) {
                if (a->ask_fd >= 0)
                        close(a->ask_fd);
                if (a->answer_fd >= 0)
                        close(a->answer_fd);
                free(a);
                return rc;
        }
        *out = a;
        return 0;
}

void proc_aside_free(struct proc_aside *a)
{
        if (!a)
                return;
        atomic_store(&a->is_stopping, true);
        fd_signal(a->ask_fd);
        pthread_join(a->thread, NULL);
        close(a->ask_fd);
        close(a->answer_fd);
        free(a);
}

static int64_t mono_us(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Whether the reader is still on the question a wait ran out on: it asks nothing more then. */
static bool is_stuck(const struct proc_aside *a)
{
        return a->stuck_at && atomic_load_explicit(&a->nr_done, memory_order_acquire) < a->stuck_at;
}

/* Room for a question: its entry is free when the drain holds it no more and the reader is
   done with it (a question dropped by proc_aside_forget may still be the reader's). A question
   asked (may_drop) drops the answers held when the queue is full (a question for one of them
   asks again); one read ahead does not: the answers held are the drain's next questions', and
   a read-ahead that dropped them while the reader was behind left the queue full of
   unanswered ones, where the drain's question for a dropped answer then found no room
   (test_prefetch_past_the_queue, once in a fresh clone's suite). */
static bool has_room(struct proc_aside *a, uint64_t asked, bool may_drop)
{
        uint64_t done = atomic_load_explicit(&a->nr_done, memory_order_acquire);
        if (may_drop && asked - a->first >= PROC_ASIDE_QUEUE && done > a->first)
                a->first = done;
        uint64_t lo = a->first < done ? a->first : done;
        return asked - lo < PROC_ASIDE_QUEUE;
}

/* Puts pid's question in (the reader not woken yet): its number. */
static uint64_t put(struct proc_aside *a, uint64_t asked, uint32_t pid)
{
        a->entries[asked % PROC_ASIDE_QUEUE].pid = pid;
        atomic_store_explicit(&a->nr_asked, asked + 1, memory_order_release);
        return asked;
}

/* The newest question for pid held or waiting: its number + 1, 0 when none. */
static uint64_t find(const struct proc_aside *a, uint64_t asked, uint32_t pid)
{
        for (uint64_t i = asked; i > a->first; i--)
                if (a->entries[(i - 1) % PROC_ASIDE_QUEUE].pid == pid)
                        return i;
        return 0;
}

/* Waits for question q's answer until the deadline: true when it came. */
static bool wait_for(struct proc_aside *a, uint64_t q)
{
        if (atomic_load_explicit(&a->nr_done, memory_order_acquire) > q)
                return true;
        a->nr_waits++;
        int64_t deadline = mono_us() + a->wait_us;
        atomic_store(&a->wake_at, q + 1);
        bool is_done;
        for (;;) {
                is_done = atomic_load(&a->nr_done) > q;
                int64_t left = deadline - mono_us();
                if (is_done || left <= 0)
                        break;
                /* a wake-up of an earlier answer may come first: nr_done says */
                struct pollfd p = {.fd = a->answer_fd, .events = POLLIN};
                struct timespec ts = {.tv_sec = left / 1000000, .tv_nsec = (left % 1000000) * 1000};
                if (ppoll(&p, 1, &ts, NULL) > 0)
                        fd_clear(a->answer_fd);
        }
        atomic_store(&a->wake_at, 0);
        if (!is_done) {
                a->stuck_at = atomic_load(&a->nr_done) + 1;
                a->nr_late++;
        }
        return is_done;
}

bool proc_aside_ask(struct proc_aside *a, uint32_t pid, char *cmdline, size_t size, uint32_t *uid)
{
        uint64_t asked = atomic_load_explicit(&a->nr_asked, memory_order_relaxed);
        uint64_t q = find(a, asked, pid);
        if (q) {
                q--;
        } else {
                if (is_stuck(a) || !has_room(a, asked, true)) {
                        a->nr_busy++;
                        return false;
                }
                q = put(a, asked, pid);
                fd_signal(a->ask_fd);
        }
        if (is_stuck(a) && atomic_load_explicit(&a->nr_done, memory_order_acquire) <= q) {
                a->nr_busy++;
                return false;
        }
        if (!wait_for(a, q))
                return false;
        const struct aside_entry *e = &a->entries[q % PROC_ASIDE_QUEUE];
        if (size) {
                size_t n = strnlen(e->cmdline, sizeof(e->cmdline) - 1);
                n = n < size - 1 ? n : size - 1;
                memcpy(cmdline, e->cmdline, n);
                cmdline[n] = 0;
        }
        *uid = e->uid;
        return true;
}

void proc_aside_prefetch(struct proc_aside *a, const uint32_t *pids, uint32_t n)
{
        if (!n || is_stuck(a))
                return;
        uint64_t asked = atomic_load_explicit(&a->nr_asked, memory_order_relaxed), was = asked;
        for (uint32_t i = 0; i < n; i++) {
                if (find(a, asked, pids[i]))
                        continue;
                if (!has_room(a, asked, false))
                        break;
                put(a, asked++, pids[i]);
        }
        if (asked != was)
                fd_signal(a->ask_fd);
}

void proc_aside_forget(struct proc_aside *a)
{
        a->first = atomic_load_explicit(&a->nr_asked, memory_order_relaxed);
}

uint64_t proc_aside_nr_late(const struct proc_aside *a)
{
        return a->nr_late;
}

uint64_t proc_aside_nr_busy(const struct proc_aside *a)
{
        return a->nr_busy;
}

uint64_t proc_aside_nr_waits(const struct proc_aside *a)
{
        return a->nr_waits;
}
