/* SPDX-License-Identifier: MIT */
/* proc_aside.c: owns the reader thread of proc_aside.h: one question at a time, handed over
   through an atomic state and two eventfds (no lock the drain could wait on behind a thread
   that waits for a CPU). */
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

/* The question's state: the drain asks only when IDLE; the reader answers only when ASKED; an
   answer that came after the drain gave up stays ANSWERED until the next question clears it. */
enum { ASIDE_IDLE, ASIDE_ASKED, ASIDE_ANSWERED, ASIDE_STOP };

struct proc_aside {
        pthread_t thread;
        proc_aside_read_fn read;
        uint32_t wait_us;
        int ask_fd;    /* eventfd: a question (or the stop) is there */
        int answer_fd; /* eventfd, non-blocking: an answer is there */
        _Atomic int state;
        /* the question, written by the drain while IDLE, read by the reader once ASKED */
        uint32_t pid;
        /* the answer, written by the reader while ASKED, read by the drain once ANSWERED */
        char cmdline[PROC_ASIDE_MAX_CMDLINE + 1];
        uint32_t uid;
        uint64_t nr_late; /* the drain's */
        uint64_t nr_busy;
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
        for (;;) {
                uint64_t n;
                if (read(a->ask_fd, &n, sizeof(n)) < 0 && errno != EINTR && errno != EAGAIN)
                        break;
                int st = atomic_load_explicit(&a->state, memory_order_acquire);
                if (st == ASIDE_STOP)
                        break;
                if (st != ASIDE_ASKED)
                        continue; /* a wake-up of a question already answered */
                a->cmdline[0] = 0;
                a->read(a->pid, a->cmdline, sizeof(a->cmdline), &a->uid);
                int asked = ASIDE_ASKED;
                /* the stop may have come meanwhile: it stays */
                if (atomic_compare_exchange_strong_explicit(&a->state, &asked, ASIDE_ANSWERED,
                                                            memory_order_release,
                                                            memory_order_acquire))
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
        atomic_init(&a->state, ASIDE_IDLE);
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
        atomic_store(&a->state, ASIDE_STOP);
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

bool proc_aside_ask(struct proc_aside *a, uint32_t pid, char *cmdline, size_t size, uint32_t *uid)
{
        int st = atomic_load_explicit(&a->state, memory_order_acquire);
        if (st == ASIDE_ASKED) {
                a->nr_busy++;
                return false;
        }
        if (st == ASIDE_ANSWERED) {
                /* an answer that came too late: its wake-up goes with it */
                fd_clear(a->answer_fd);
                atomic_store_explicit(&a->state, ASIDE_IDLE, memory_order_relaxed);
        }
        a->pid = pid;
        atomic_store_explicit(&a->state, ASIDE_ASKED, memory_order_release);
        fd_signal(a->ask_fd);
        int64_t deadline = mono_us() + a->wait_us;
        for (;;) {
                if (atomic_load_explicit(&a->state, memory_order_acquire) == ASIDE_ANSWERED) {
                        fd_clear(a->answer_fd);
                        if (size) {
                                size_t n = strnlen(a->cmdline, sizeof(a->cmdline) - 1);
                                n = n < size - 1 ? n : size - 1;
                                memcpy(cmdline, a->cmdline, n);
                                cmdline[n] = 0;
                        }
                        *uid = a->uid;
                        atomic_store_explicit(&a->state, ASIDE_IDLE, memory_order_relaxed);
                        return true;
                }
                int64_t left = deadline - mono_us();
                if (left <= 0)
                        break;
                /* a wake-up of an earlier, late answer may come first: the state says */
                struct pollfd p = {.fd = a->answer_fd, .events = POLLIN};
                struct timespec ts = {.tv_sec = left / 1000000, .tv_nsec = (left % 1000000) * 1000};
                if (ppoll(&p, 1, &ts, NULL) > 0)
                        fd_clear(a->answer_fd);
        }
        a->nr_late++;
        return false;
}

uint64_t proc_aside_nr_late(const struct proc_aside *a)
{
        return a->nr_late;
}

uint64_t proc_aside_nr_busy(const struct proc_aside *a)
{
        return a->nr_busy;
}
