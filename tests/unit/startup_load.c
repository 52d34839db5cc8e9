/* SPDX-License-Identifier: MIT */
/* startup_load.c: the load a live session is started under in test_live_source and
   bench/startup_loss.sh: idle processes with many threads (a slow /proc rundown), busy loops
   (every CPU taken) and pipe ping-pongs (context switches and wake-ups by the hundred thousand).
   usage: startup_load PROCS THREADS HOGS PAIRS
   Prints "ready" once every thread exists and the loops run, then runs until SIGTERM or SIGINT,
   kills everything it started, and prints "pingpong_rounds=N seconds=S". SIGUSR1 stops the
   ping-pongs only (reaped before it answers with that line), and the rest runs on: the load of
   a start, ended, without the thousands of threads' ends that would follow. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CHILDREN 4096

static pid_t children[MAX_CHILDREN];
static int nr_children;
static int first_pingpong = MAX_CHILDREN; /* children from here on are the ping-pongs */
static volatile sig_atomic_t is_stopping, is_pingpong_stopping;

static void on_term(int sig)
{
        if (sig == SIGUSR1)
                is_pingpong_stopping = 1;
        else
                is_stopping = 1;
}

static void *idle_thread(void *arg)
{
        (void)arg;
        for (;;)
                pause();
        return NULL;
}

/* A child that dies with this process. */
static pid_t child_fork(void)
{
        if (nr_children == MAX_CHILDREN) {
                fprintf(stderr, "startup_load: more than %d children\n", MAX_CHILDREN);
                exit(2);
        }
        pid_t pid = fork();
        if (pid < 0) {
                fprintf(stderr, "startup_load: fork: %s\n", strerror(errno));
                exit(2);
        }
        if (pid == 0) {
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                return 0;
        }
        children[nr_children++] = pid;
        return pid;
}

static void idle_process(int threads, int ready_fd)
{
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setstacksize(&at, 65536);
        for (int t = 0; t < threads; t++) {
                pthread_t th;
                if (pthread_create(&th, &at, idle_thread, NULL) != 0) {
                        fprintf(stderr, "startup_load: thread %d of %d: cannot create\n", t,
                                threads);
                        _exit(2);
                }
        }
        char c = 1;
        if (write(ready_fd, &c, 1) != 1)
                _exit(2);
        for (;;)
                pause();
}

static void pingpong(int in, int out, bool is_first, volatile uint64_t *rounds)
{
        char c = 0;
        if (is_first && write(out, &c, 1) != 1)
                _exit(2);
        for (;;) {
                if (read(in, &c, 1) != 1)
                        _exit(0);
                if (is_first)
                        (*rounds)++;
                if (write(out, &c, 1) != 1)
                        _exit(0);
        }
}

static double now_s(void)
{
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Stops the ping-pongs, reaps them, and says how many rounds they made since "ready". */
static void pingpong_stop(volatile uint64_t *rounds, int pairs, uint64_t r0, double t0)
{
        uint64_t r1 = 0;
        for (int i = 0; i < pairs && i < 512; i++)
                r1 += rounds[i];
        double t1 = now_s();
        for (int i = first_pingpong; i < nr_children; i++)
                kill(children[i], SIGKILL);
        for (int i = first_pingpong; i < nr_children; i++)
                waitpid(children[i], NULL, 0);
        nr_children = first_pingpong;
        printf("pingpong_rounds=%llu seconds=%.2f\n", (unsigned long long)(r1 - r0), t1 - t0);
        fflush(stdout);
}

int main(int argc, char **argv)
{
        if (argc != 5) {
                fprintf(stderr, "usage: startup_load PROCS THREADS HOGS PAIRS\n");
                return 2;
        }
        int procs = atoi(argv[1]), threads = atoi(argv[2]), hogs = atoi(argv[3]);
        int pairs = atoi(argv[4]);
        int ready[2];
        if (pipe(ready) < 0)
                return 2;
        struct sigaction sa = {.sa_handler = on_term};
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGUSR1, &sa, NULL);
        sigset_t stop;
        sigemptyset(&stop);
        sigaddset(&stop, SIGTERM);
        sigaddset(&stop, SIGINT);
        sigaddset(&stop, SIGUSR1);
        sigprocmask(SIG_BLOCK, &stop, NULL); /* taken in sigsuspend only */
        volatile uint64_t *rounds =
                mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (rounds == MAP_FAILED)
                return 2;

        for (int p = 0; p < procs; p++) {
                if (child_fork() == 0)
                        idle_process(threads, ready[1]);
        }
        for (int p = 0; p < procs; p++) {
                char c;
                if (read(ready[0], &c, 1) != 1) {
                        fprintf(stderr, "startup_load: an idle process died\n");
                        return 2;
                }
        }
        for (int h = 0; h < hogs; h++) {
                if (child_fork() == 0) {
                        for (volatile uint64_t x = 0;; x++)
                                ;
                }
        }
        first_pingpong = nr_children;
        for (int i = 0; i < pairs; i++) {
                int ab[2], ba[2];
                if (pipe(ab) < 0 || pipe(ba) < 0)
                        return 2;
                if (child_fork() == 0)
                        pingpong(ab[0], ba[1], true, &rounds[i % 512]);
                if (child_fork() == 0)
                        pingpong(ba[0], ab[1], false, NULL);
                close(ab[0]);
                close(ab[1]);
                close(ba[0]);
                close(ba[1]);
        }
        double t0 = now_s();
        uint64_t r0 = 0;
        for (int i = 0; i < pairs && i < 512; i++)
                r0 += rounds[i];
        printf("ready\n");
        fflush(stdout);

        sigset_t none;
        sigemptyset(&none);
        bool has_told = false;
        while (!is_stopping) {
                sigsuspend(&none);
                if (is_pingpong_stopping && !has_told) {
                        pingpong_stop(rounds, pairs, r0, t0);
                        has_told = true;
                }
        }
        if (!has_told)
                pingpong_stop(rounds, pairs, r0, t0);
        for (int i = 0; i < nr_children; i++)
                kill(children[i], SIGKILL);
        for (int i = 0; i < nr_children; i++)
                waitpid(children[i], NULL, 0);
        return 0;
}
