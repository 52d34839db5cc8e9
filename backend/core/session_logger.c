/* SPDX-License-Identifier: MIT */
/* session_logger.c: owns the logger thread of a session: draining the live source into the
   writer, the flush timer, the file's limits, its real-time priority (and that of the threads
   that serve the sessions to other processes). */
#include "session_int.h"

#include "util/thread_sched.h"

/* ---- the logger thread -------------------------------------------------------------------- */

struct thread_start {
        struct session *s;
        pthread_mutex_t lock;
        pthread_cond_t cond;
        bool is_ready;
};

/* The log file written on a thread of the writer's own: the logger that empties the kernel's
   rings never waits for the disk (a journal commit behind another program's 2 GB took over a
   second, and the rings, a quarter second deep at 4 kHz with stack copies, overflowed).
   MaximumBuffers, and at least 16 MiB, may wait for it; past them buffers are lost
   (LogBuffersLost), as in ETW. Without the thread the writes stay on the logger. */
void session_file_async(struct session *s, uint32_t max_buffers)
{
        etl_writer_set_async(s->writer, max_buffers);
}

/* Whether the session's sequential file took its last buffer: a write error, its maximum size,
   its file system's space for users; why says which. */
static bool file_is_done(struct session *s, char *why, size_t size)
{
        struct etl_writer_stats ws = {0};
        pthread_mutex_lock(&s->lock);
        if (s->writer && s->log_file_name && !s->is_circular_file)
                etl_writer_get_stats(s->writer, &ws);
        if (ws.full)
                log_file_full_text(why, size, (enum log_file_full)ws.full, s->log_file_name,
                                   s->max_file_bytes, ws.fs_avail_bytes);
        else if (ws.write_error)
                snprintf(why, size, "writing %s failed: %s", s->log_file_name,
                         strerror(ws.write_error));
        pthread_mutex_unlock(&s->lock);
        return ws.full || ws.write_error;
}

/* Drains the source's rings until they hold nothing older than the merge's horizon, at most
   DRAIN_ROUNDS budgets. The next wake-up comes only when another watermark's worth has been
   written (a quarter of a ring), so what a drain leaves waits for it, and a ring that fills
   meanwhile drops records. Unless is_locked, s->lock is taken for each round only (controllers
   get in between). Returns the records drained. */
int session_drain_source(struct session *s, bool is_locked)
{
        int total = 0;
        struct etl_pool *pool = NULL;
        for (int round = 0; round < DRAIN_ROUNDS; round++) {
                if (!is_locked)
                        pthread_mutex_lock(&s->lock);
                int k = s->source ? live_source_drain(s->source, DRAIN_BUDGET) : 0;
                if (!is_locked && !pool && k > 0 && s->writer && etl_writer_pool(s->writer))
                        pool = etl_pool_ref(etl_writer_pool(s->writer));
                if (!is_locked)
                        pthread_mutex_unlock(&s->lock);
                /* the next buffers' pages made here, the lock let go: the takes under it would
                   make them while a controller or a consumer's stream waits (spinning) */
                if (pool)
                        etl_pool_prepare(pool);
                if (k <= 0)
                        break;
                total += k;
        }
        etl_pool_unref(pool);
        return total;
}

/* The longest the logger sleeps between looks (a minute): a FlushTimer may be any ULONG. */
#define LOGGER_WAIT_MAX_MS 60000

/* Polls the live source, drains it, and flushes every FlushTimer seconds, until STOP, or until
   the log file cannot be written: then the session stops itself. */
static void *logger_thread(void *arg)
{
        struct thread_start *ts = arg;
        thread_name_self("etwtop-logger");
        struct session *s = ts->s;
        pthread_mutex_lock(&ts->lock);
        s->tid = (pid_t)syscall(SYS_gettid);
        ts->is_ready = true;
        pthread_cond_signal(&ts->cond);
        pthread_mutex_unlock(&ts->lock);

        pthread_mutex_lock(&s->lock);
        /* the first flush at once: the start's rundown (processes, threads, images) reaches a
           real-time consumer before the samples of a CPU whose buffer fills first, which it
           would otherwise see a whole FlushTimer without their processes and modules */
        int64_t next_flush = session_clock_ns(CLOCK_MONOTONIC);
        int source_fd = s->source ? live_source_fd(s->source) : -1;
        pthread_mutex_unlock(&s->lock);
        int nr_idle_wakeups = 0;
        bool is_file_done = false;
        while (!atomic_load(&s->is_stop_requested)) {
                int64_t now = session_clock_ns(CLOCK_MONOTONIC);
                /* rounded up: rounded down, the last millisecond before a flush was a spin
                   of poll(0) */
                int64_t wait_ms = (next_flush - now + 999999) / 1000000;
                /* nothing else needs a look before the next flush: the rings' watermark (a
                   quarter of a ring) wakes the drain, a STOP or UPDATE the wake fd, and a file
                   that fills or fails does so in this thread's own drains (it looked every 200
                   ms: four idle wake-ups a second, dear on a busy machine) */
                if (wait_ms < 0)
                        wait_ms = 0;
                if (wait_ms > LOGGER_WAIT_MAX_MS) /* a FlushTimer of hours: poll's int */
                        wait_ms = LOGGER_WAIT_MAX_MS;
                if (nr_idle_wakeups > 2)
                        wait_ms = wait_ms < 10 ? wait_ms : 10;
                struct pollfd pfd[2] = {{.fd = s->wake_fd, .events = POLLIN},
                                        {.fd = source_fd, .events = POLLIN}};
                int n = poll(pfd, source_fd >= 0 ? 2 : 1, (int)wait_ms);
                if (atomic_load(&s->is_stop_requested))
                        break;
                if (n > 0 && source_fd >= 0 && (pfd[1].revents & POLLIN)) {
                        int total = session_drain_source(s, false);
                        /* readable but nothing to convert: do not spin on the fd */
                        nr_idle_wakeups = total ? 0 : nr_idle_wakeups + 1;
                        if (nr_idle_wakeups > 2) {
                                struct timespec pause = {0, 5000000};
                                nanosleep(&pause, NULL);
                        }
                }
                now = session_clock_ns(CLOCK_MONOTONIC);
                if (now >= next_flush) {
                        /* everything up to now: one budget a flush left a CPU that writes more
                           than 4096 records a second (4 kHz with stacks) seconds behind, until
                           its ring's watermark woke the thread */
                        session_drain_source(s, false);
                        pthread_mutex_lock(&s->lock);
                        etl_writer_flush(s->writer);
                        session_rt_wake(s);
                        next_flush = now + (int64_t)s->flush_timer_s * 1000000000ll;
                        pthread_mutex_unlock(&s->lock);
                }
                /* a controller's STOP under way (or a start not finished) leaves the claim */
                char why[MAX_NAME_CHARS + 128];
                is_file_done = file_is_done(s, why, sizeof(why));
                if (is_file_done) {
                        if (session_claim_stop(s, why))
                                break;
                        is_file_done = false;
                }
        }
        if (is_file_done)
                session_end_itself(s);
        return NULL;
}

/* Starts the logger thread. A live session's logger runs at the drain's real-time priority
   where that is permitted (CAP_SYS_NICE, or RLIMIT_RTPRIO), as perf record -r would: a normal
   thread on a busy machine waited up to 1.5 s for a CPU (measured, with the CPU-bound load in
   another scheduling group), while the rings fill in about 400 ms and then drop records. The
   logger sleeps in poll between drains and a drain is bounded (DRAIN_ROUNDS), so it takes a
   CPU only for its work. Not permitted, it is a normal thread, as a session's without rings to
   drain is (explicitly: the session host's threads are real-time, and a thread inherits). */
static int logger_create(struct session *s, struct thread_start *ts)
{
        if (s->source &&
            thread_create_sched(&s->thread, logger_thread, ts, SCHED_FIFO, LOGGER_RT_PRIORITY) == 0)
                return 0;
        if (thread_create_sched(&s->thread, logger_thread, ts, SCHED_OTHER, 0) == 0)
                return 0;
        return pthread_create(&s->thread, NULL, logger_thread, ts);
}

int session_thread_start(struct session *s)
{
        struct thread_start ts = {.s = s, .is_ready = false};
        pthread_mutex_init(&ts.lock, NULL);
        pthread_cond_init(&ts.cond, NULL);
        int rc = logger_create(s, &ts);
        if (rc == 0) {
                s->has_thread = true;
                pthread_mutex_lock(&ts.lock);
                while (!ts.is_ready)
                        pthread_cond_wait(&ts.cond, &ts.lock);
                pthread_mutex_unlock(&ts.lock);
        }
        pthread_cond_destroy(&ts.cond);
        pthread_mutex_destroy(&ts.lock);
        return -rc;
}

bool session_serving_priority(void)
{
        struct sched_param sp = {.sched_priority = LIVE_RT_PRIORITY_ASIDE};
        return pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0;
}

void session_thread_stop(struct session *s)
{
        if (!s->has_thread)
                return;
        atomic_store(&s->is_stop_requested, true);
        uint64_t one = 1;
        if (write(s->wake_fd, &one, sizeof(one)) < 0) {
                /* the flag alone stops the thread within its poll timeout */
        }
        pthread_join(s->thread, NULL);
        s->has_thread = false;
}
