/* SPDX-License-Identifier: MIT */
/* etl_inflate.c: owns the decompression of an .etl file's compressed buffers ahead of the reader,
 * on worker threads, and the hand-over of their results. The reader stays single-threaded for its
 * records: the workers only decompress, each the next job nobody has started. Their results are
 * taken out of the order they were made in, and each taker's old buffer goes back for a later
 * job, which a single-producer ring does not allow: the jobs are a table under one lock, taken
 * once a buffer (64 KiB and more). */
#include "etl_inflate.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "etw/ntwmi.h"
#include "util/thread_sched.h"

enum job_state {
        JOB_PENDING, /* nobody has started it */
        JOB_RUNNING, /* being decompressed, by a worker or a taker helping them */
        JOB_DONE,    /* its result waits in out */
        JOB_TAKEN,   /* handed over, or decompressed by the taker */
};

/* A buffer of cap bytes. */
struct slot {
        uint8_t *buf;
        uint32_t cap;
};

struct job {
        struct etl_inflate_job in;
        enum job_state state;
        struct slot out; /* JOB_DONE: the result's bytes */
        struct etl_inflate_result res;
        bool is_by_taker; /* under lock: decompressed by the taking thread, helping */
        bool is_stolen;   /* under lock: taken while its worker still ran it, and decompressed
                             by the taker again (see etl_inflate_take): the worker's result is
                             dropped */
};

struct etl_inflate {
        struct job *jobs;
        uint32_t nr_jobs;
        uint32_t window;
        uint32_t slot_size; /* the largest job's out_size: every spare buffer fits any job */
        pthread_mutex_t lock;
        pthread_cond_t space; /* to the workers: results were taken, or stop */
        pthread_cond_t done;  /* to the taker: a job is done */
        pthread_t threads[ETL_INFLATE_MAX_WORKERS];
        uint32_t nr_threads; /* workers started and not joined (the taker's thread alone) */
        bool is_stopping;    /* under lock */
        uint32_t cursor;     /* under lock: the first job no worker has looked at */
        uint32_t nr_held;    /* under lock: results running or done, not taken */
        struct slot *pool;   /* under lock: spare buffers */
        uint32_t nr_pool;
        uint32_t pool_head; /* the oldest spare buffer's place in the ring */
        uint32_t pool_cap;
        struct etl_inflate_stats stats; /* the taking thread's */
        etl_inflate_hook_fn hook;       /* tests': see etl_inflate_set_worker_hook */
        void *hook_arg;
};

/* The taking thread's counts: one writer, read from any thread (etw_trace_get_stats). */
static inline void count(uint32_t *c)
{
        __atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
}

/* Decompresses j into out (at least j->out_size bytes): the header copied, the stream after it. */
static void run_job(const struct etl_inflate_job *j, uint8_t *out, struct etl_inflate_result *res)
{
        memcpy(out, j->src, WMI_BUFFER_HEADER_SIZE);
        res->xe = (struct xpress_error){0, NULL};
        res->out_len = 0;
        res->rc = xpress_decompress(j->src + WMI_BUFFER_HEADER_SIZE,
                                    j->src_size - WMI_BUFFER_HEADER_SIZE,
                                    out + WMI_BUFFER_HEADER_SIZE,
                                    j->out_size - WMI_BUFFER_HEADER_SIZE, &res->out_len, &res->xe);
}

/* Keeps s for a later job, under lock; returns false when the pool is full (the caller frees). */
static bool pool_push(struct etl_inflate *q, struct slot s)
{
        if (q->nr_pool == q->pool_cap)
                return false;
        q->pool[(q->pool_head + q->nr_pool++) % q->pool_cap] = s;
        return true;
}

static struct slot pool_pop(struct etl_inflate *q)
{
        if (!q->nr_pool)
                return (struct slot){NULL, 0};
        struct slot s = q->pool[q->pool_head];
        q->pool_head = (q->pool_head + 1) % q->pool_cap;
        q->nr_pool--;
        return s;
}

/* Under lock: the next job not started, in the order given, marked running and counted held,
   or NULL when none is left or the window is full. */
static struct job *claim_next(struct etl_inflate *q)
{
        while (q->cursor < q->nr_jobs && q->jobs[q->cursor].state != JOB_PENDING)
                q->cursor++;
        if (q->cursor >= q->nr_jobs || q->nr_held >= q->window)
                return NULL;
        struct job *j = &q->jobs[q->cursor++];
        __atomic_store_n(&j->state, JOB_RUNNING, __ATOMIC_RELAXED);
        q->nr_held++;
        return j;
}

/* A claimed job decompressed, outside the lock, into a spare buffer, and left done; false (the
   job pending again) without memory for it. Called and returns under lock. */
static bool run_claimed(struct etl_inflate *q, struct job *j)
{
        struct slot s = pool_pop(q);
        pthread_mutex_unlock(&q->lock);
        if (q->hook && !j->is_by_taker)
                q->hook((uint32_t)(j - q->jobs), q->hook_arg);
        if (s.cap < j->in.out_size) {
                /* nothing in it to keep: freed, not copied by a realloc; made big enough for
                   any job, so that buffers are not freed and made again at each size (each
                   free and malloc of a buffer moves the heap's top, and its trim and its new
                   pages cost the kernel more than the decompression) */
                free(s.buf);
                s.buf = malloc(q->slot_size);
                s.cap = s.buf ? q->slot_size : 0;
        }
        struct etl_inflate_result res;
        if (s.buf)
                run_job(&j->in, s.buf, &res);
        pthread_mutex_lock(&q->lock);
        if (j->is_stolen) {
                /* the taker came to it first and made its own: this one's buffer is spare */
                if (s.buf && !pool_push(q, s))
                        free(s.buf);
                q->nr_held--;
                pthread_cond_broadcast(&q->space);
                return s.buf != NULL;
        }
        if (!s.buf) {
                /* taken in place when its turn comes (the cursor has passed it) */
                __atomic_store_n(&j->state, JOB_PENDING, __ATOMIC_RELAXED);
                j->is_by_taker = false;
                q->nr_held--;
                pthread_cond_broadcast(&q->done);
                return false;
        }
        j->out = s;
        j->res = res;
        __atomic_store_n(&j->state, JOB_DONE, __ATOMIC_RELEASE);
        pthread_cond_broadcast(&q->done);
        return true;
}

static void *worker(void *arg)
{
        struct etl_inflate *q = arg;
        thread_name_self("etwtop-inflate");
        pthread_mutex_lock(&q->lock);
        while (!q->is_stopping) {
                struct job *j = claim_next(q);
                if (!j && q->cursor >= q->nr_jobs)
                        break;
                if (!j) {
                        pthread_cond_wait(&q->space, &q->lock);
                        continue;
                }
                /* out of memory: the taker decompresses it, and the rest, itself */
                if (!run_claimed(q, j))
                        break;
        }
        pthread_mutex_unlock(&q->lock);
        return NULL;
}

struct etl_inflate *etl_inflate_new(const struct etl_inflate_job *jobs, uint32_t nr_jobs,
                                    uint32_t window)
{
        struct etl_inflate *q = calloc(1, sizeof(*q));
        if (!q)
                return NULL;
        q->window = window ? window : 1;
        q->pool_cap = q->window + 4;
        q->jobs = calloc(nr_jobs ? nr_jobs : 1, sizeof(*q->jobs));
        q->pool = calloc(q->pool_cap, sizeof(*q->pool));
        if (!q->jobs || !q->pool) {
                free(q->jobs);
                free(q->pool);
                free(q);
                return NULL;
        }
        for (uint32_t i = 0; i < nr_jobs; i++) {
                q->jobs[i].in = jobs[i];
                if (jobs[i].out_size > q->slot_size)
                        q->slot_size = jobs[i].out_size;
        }
        q->nr_jobs = nr_jobs;
        pthread_mutex_init(&q->lock, NULL);
        pthread_cond_init(&q->space, NULL);
        pthread_cond_init(&q->done, NULL);
        return q;
}

bool etl_inflate_start(struct etl_inflate *q, uint32_t nr_workers)
{
        if (q->nr_threads || !q->nr_jobs || !nr_workers)
                return q->nr_threads > 0;
        if (nr_workers > ETL_INFLATE_MAX_WORKERS)
                nr_workers = ETL_INFLATE_MAX_WORKERS;
        q->cursor = 0;
        q->is_stopping = false;
        /* Signals stay with the threads that wait for them: the workers start with all
           blocked. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        /* each started away from the taker's processor, which would otherwise often decompress
           the first buffers itself while a worker waited behind it */
        while (q->nr_threads < nr_workers &&
               thread_create_away(&q->threads[q->nr_threads], worker, q) == 0)
                q->nr_threads++;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return q->nr_threads > 0;
}

int etl_inflate_take(struct etl_inflate *q, uint32_t job, uint8_t **buf, uint32_t *cap,
                     struct etl_inflate_result *res)
{
        struct job *j = &q->jobs[job];
        if (q->nr_threads) {
                /* A worker is usually on this very job when it is not done yet, often near
                   its end: waited for a moment here. Then, rather than wait longer, the taker
                   decompresses the next job a worker would have taken (the workers are behind:
                   they share the work), or, when there is none, this one itself. */
                if (__atomic_load_n(&j->state, __ATOMIC_ACQUIRE) == JOB_RUNNING)
                        count(&q->stats.nr_waited);
                for (int spin = 0;
                     spin < 256 && __atomic_load_n(&j->state, __ATOMIC_ACQUIRE) == JOB_RUNNING;
                     spin++)
                        cpu_relax();
                pthread_mutex_lock(&q->lock);
                while (j->state == JOB_RUNNING) {
                        struct job *k = claim_next(q);
                        if (k) {
                                k->is_by_taker = true;
                                if (run_claimed(q, k))
                                        continue;
                        } else {
                                /* Nothing left to help with, and the job still under way
                                   after the spin and whatever was decompressed here since:
                                   its worker is not running (a processor it shares, or the
                                   hypervisor's, took it: 3 to 11 ms waited here with the
                                   other CPU busy). Decompressed here too, at once, rather
                                   than waited for. */
                                j->is_stolen = true;
                                break;
                        }
                        pthread_cond_wait(&q->done, &q->lock);
                }
                if (j->state == JOB_DONE) {
                        count(j->is_by_taker ? &q->stats.nr_here : &q->stats.nr_ahead);
                        struct slot old = {*buf, *cap};
                        *buf = j->out.buf;
                        *cap = j->out.cap;
                        *res = j->res;
                        j->out = (struct slot){NULL, 0};
                        j->state = JOB_TAKEN;
                        q->nr_held--;
                        bool is_kept = !old.buf || pool_push(q, old);
                        /* workers that found the window full wake once a quarter of it is
                           free, not at each take (a wake-up is a system call): all of them,
                           a job each */
                        if (q->nr_held <= q->window - q->window / 4)
                                pthread_cond_broadcast(&q->space);
                        pthread_mutex_unlock(&q->lock);
                        if (!is_kept)
                                free(old.buf);
                        return 0;
                }
                j->state = JOB_TAKEN;
                pthread_mutex_unlock(&q->lock);
        } else {
                j->state = JOB_TAKEN;
        }
        count(&q->stats.nr_here);
        if (*cap < j->in.out_size) {
                /* as in run_claimed: once, at the largest size */
                free(*buf);
                *buf = malloc(q->slot_size);
                *cap = *buf ? q->slot_size : 0;
                if (!*buf)
                        return -ENOMEM;
        }
        run_job(&j->in, *buf, res);
        return 0;
}

void etl_inflate_stop(struct etl_inflate *q)
{
        if (q->nr_threads) {
                pthread_mutex_lock(&q->lock);
                q->is_stopping = true;
                pthread_cond_broadcast(&q->space);
                pthread_mutex_unlock(&q->lock);
                for (uint32_t i = 0; i < q->nr_threads; i++)
                        pthread_join(q->threads[i], NULL);
                q->nr_threads = 0;
                q->is_stopping = false;
        }
        for (uint32_t i = 0; i < q->nr_jobs; i++) {
                struct job *j = &q->jobs[i];
                if (j->state == JOB_DONE && !pool_push(q, j->out))
                        free(j->out.buf);
                j->out = (struct slot){NULL, 0};
                j->state = JOB_PENDING;
                j->is_by_taker = false;
                j->is_stolen = false;
        }
        q->nr_held = 0;
        q->cursor = 0;
        __atomic_store_n(&q->stats.nr_ahead, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&q->stats.nr_here, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&q->stats.nr_waited, 0, __ATOMIC_RELAXED);
}

void etl_inflate_set_worker_hook(struct etl_inflate *q, etl_inflate_hook_fn fn, void *arg)
{
        q->hook = fn;
        q->hook_arg = arg;
}

void etl_inflate_get_stats(const struct etl_inflate *q, struct etl_inflate_stats *st)
{
        st->nr_ahead = __atomic_load_n(&q->stats.nr_ahead, __ATOMIC_RELAXED);
        st->nr_here = __atomic_load_n(&q->stats.nr_here, __ATOMIC_RELAXED);
        st->nr_waited = __atomic_load_n(&q->stats.nr_waited, __ATOMIC_RELAXED);
}

void etl_inflate_free(struct etl_inflate *q)
{
        if (!q)
                return;
        etl_inflate_stop(q);
        for (uint32_t i = 0; i < q->nr_pool; i++)
                free(q->pool[(q->pool_head + i) % q->pool_cap].buf);
        free(q->pool);
        free(q->jobs);
        pthread_mutex_destroy(&q->lock);
        pthread_cond_destroy(&q->space);
        pthread_cond_destroy(&q->done);
        free(q);
}
