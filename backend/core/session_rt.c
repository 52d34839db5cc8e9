/* SPDX-License-Identifier: MIT */
/* session_rt.c: owns real-time delivery: each consumer's bounded queue of completed buffers, the
   backlog kept for a first consumer, and session_rt_* over the table. */
#include "session_int.h"
#include "util/clock.h"

#include <errno.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* ---- real-time delivery ------------------------------------------------------------------- */

/* rt_cond broadcast, and the consumers' wake fds written (session_rt_wake_fd). Under rt_lock. */
static void rt_broadcast(struct session *s)
{
        pthread_cond_broadcast(&s->rt_cond);
        for (struct session_rt *rt = s->consumers; rt; rt = rt->next) {
                uint64_t one = 1;
                if (rt->wake_fd >= 0 && write(rt->wake_fd, &one, sizeof(one)) < 0) {
                        /* EAGAIN: a counter that full is readable already */
                }
        }
}

int session_rt_queue_init(struct rt_queue *q, uint32_t cap, uint32_t buffer_size)
{
        q->bufs = calloc(cap, sizeof(*q->bufs));
        if (!q->bufs)
                return -ENOMEM;
        q->cap = cap;
        q->head = 0;
        q->count = 0;
        q->buffer_size = buffer_size;
        q->nr_spare = 0;
        return 0;
}

/* Queues a copy of buf; false (nothing queued) when the queue is full or memory is short: the
   machine's, or the budget of every session's queues (session_mem). */
bool session_rt_queue_push(struct rt_queue *q, const uint8_t *buf)
{
        if (q->count >= q->cap)
                return false;
        uint32_t slot = (q->head + q->count) % q->cap;
        if (!q->bufs[slot] && q->nr_spare)
                q->bufs[slot] = q->spare[--q->nr_spare];
        if (!q->bufs[slot]) {
                if (!session_mem_take(q->buffer_size))
                        return false;
                q->bufs[slot] = malloc(q->buffer_size);
                if (!q->bufs[slot]) {
                        session_mem_give(q->buffer_size);
                        return false;
                }
        }
        memcpy(q->bufs[slot], buf, q->buffer_size);
        q->count++;
        return true;
}

/* Keeps b, a buffer of q's the consumer is done with, for q's next copies: true when kept,
   false when q has its spares already, or as many buffers as it may queue (the caller frees b).
   Kept, it is never given back to the allocator while the consumer reads: freed, its pages went
   back to the kernel and the next copy faulted them in zeroed. */
bool session_rt_queue_keep(struct rt_queue *q, uint8_t *b)
{
        if (q->nr_spare >= RT_SPARES || q->count + q->nr_spare >= q->cap)
                return false;
        q->spare[q->nr_spare++] = b;
        return true;
}

/* Doubles a queue's capacity, keeping its buffers in order; false when memory is short. */
static bool rt_queue_grow(struct rt_queue *q)
{
        uint32_t cap = q->cap ? 2 * q->cap : 8;
        uint8_t **bufs = calloc(cap, sizeof(*bufs));
        if (!bufs)
                return false;
        for (uint32_t i = 0; i < q->count; i++)
                bufs[i] = q->bufs[(q->head + i) % q->cap];
        for (uint32_t i = q->count; i < q->cap; i++) /* slots not in use may hold buffers */
                session_rt_buf_free(q->bufs[(q->head + i) % q->cap], q->buffer_size);
        free(q->bufs);
        q->bufs = bufs;
        q->cap = cap;
        q->head = 0;
        return true;
}

/* The oldest buffer, whose ownership passes to the caller. */
uint8_t *session_rt_queue_pop(struct rt_queue *q)
{
        if (!q->count)
                return NULL;
        uint8_t *b = q->bufs[q->head];
        q->bufs[q->head] = NULL;
        q->head = (q->head + 1) % q->cap;
        q->count--;
        return b;
}

/* The buffers queued that wake the sender of a queue of cap buffers: RT_WAKE_BATCH, or half the
   queue where that is less, so that a wake-up comes well before the queue is full. */
uint32_t session_rt_wake_at(uint32_t cap)
{
        uint32_t half = cap / 2;
        return RT_WAKE_BATCH < half ? RT_WAKE_BATCH : half ? half : 1;
}

/* The writer's buffer callback: called with s->lock held, whichever thread completes a buffer;
   the consumers' queues under rt_lock besides. */
void session_rt_on_buffer(void *ctx, const uint8_t *buf, uint32_t size)
{
        struct session *s = ctx;
        (void)size;
        if (!s->consumers) {
                /* no consumer yet: keep the newest buffers for the first one */
                if (s->backlog.count >= s->backlog.cap) {
                        /* the oldest one's bytes take the newest's */
                        uint8_t *old = session_rt_queue_pop(&s->backlog);
                        if (!session_rt_queue_keep(&s->backlog, old))
                                session_rt_buf_free(old, s->backlog.buffer_size);
                        s->nr_rt_lost++;
                }
                if (!session_rt_queue_push(&s->backlog, buf))
                        s->nr_rt_lost++;
        }
        if (!s->consumers)
                return;
        bool is_wake = false;
        pthread_mutex_lock(&s->rt_lock);
        for (struct session_rt *rt = s->consumers; rt; rt = rt->next) {
                if (rt->pool) {
                        /* in place while nothing waits before it, else queued as below */
                        if (!rt->header && !rt->q.count && session_rt_pool_put(rt, buf)) {
                                uint32_t at = rt->ent_cap / 4 < rt->wake_at ? rt->ent_cap / 4
                                                                            : rt->wake_at;
                                is_wake = is_wake || rt->ent_filled - rt->ent_told >= (at ? at : 1);
                                continue;
                        }
                } else if (rt->ring && !rt->header && !rt->q.count &&
                           rt->ring_filled - rt->ring_released < rt->ring_slots) {
                        /* straight into the consumer's ring: no copy queued, none sent */
                        memcpy(rt->ring + (rt->ring_filled % rt->ring_slots) * rt->q.buffer_size,
                               buf, rt->q.buffer_size);
                        rt->ring_filled++;
                        /* the sender woken at wake_at, or half the ring where that is less */
                        uint32_t at =
                                rt->ring_slots / 2 < rt->wake_at ? rt->ring_slots / 2 : rt->wake_at;
                        is_wake = is_wake || rt->ring_filled - rt->ring_told >= (at ? at : 1);
                        continue;
                }
                /* the stop's last buffers (its rundown, written at once under the lock, where
                   no consumer can take any) reach every consumer: nothing waits for them */
                if (s->is_ending && rt->q.count >= rt->q.cap)
                        rt_queue_grow(&rt->q);
                if (!session_rt_queue_push(&rt->q, buf)) {
                        atomic_fetch_add_explicit(&rt->nr_lost, 1, memory_order_relaxed);
                        s->nr_rt_lost++;
                }
                is_wake = is_wake || rt->q.count >= rt->wake_at;
        }
        if (is_wake)
                rt_broadcast(s);
        pthread_mutex_unlock(&s->rt_lock);
}

void session_rt_wake(struct session *s)
{
        pthread_mutex_lock(&s->rt_lock);
        rt_broadcast(s);
        pthread_mutex_unlock(&s->rt_lock);
}

void session_rt_end(struct session *s)
{
        pthread_mutex_lock(&s->rt_lock);
        s->is_rt_ended = true;
        rt_broadcast(s);
        pthread_mutex_unlock(&s->rt_lock);
}

/* The running real-time session named logger_name, with a reference; NULL when there is none. */
static struct session *rt_session_find(const char *logger_name)
{
        struct session *s = session_find(0, logger_name);
        if (s && !(s->log_file_mode & EVENT_TRACE_REAL_TIME_MODE)) {
                session_unref(s);
                return NULL;
        }
        return s;
}

/* A copy of the writer's header buffer, or NULL (no memory, or the session has ended). Called
   with s->lock held. */
static uint8_t *header_copy(struct session *s)
{
        if (s->is_ended || !s->writer)
                return NULL;
        uint32_t size;
        const uint8_t *h = etl_writer_header(s->writer, &size);
        uint8_t *copy = malloc(size);
        if (copy)
                memcpy(copy, h, size);
        return copy;
}

int session_rt_header(const char *logger_name, uint8_t **buf, uint32_t *size,
                      struct session_rt_info *info)
{
        *buf = NULL;
        *size = 0;
        struct session *s = rt_session_find(logger_name);
        if (!s)
                return -ESRCH;
        pthread_mutex_lock(&s->lock);
        bool is_ended = s->is_ended;
        uint8_t *copy = header_copy(s);
        *info = s->rt_info;
        pthread_mutex_unlock(&s->lock);
        session_unref(s);
        if (!copy)
                return is_ended ? -ESRCH : -ENOMEM;
        *buf = copy;
        *size = info->buffer_size_bytes;
        return 0;
}

int session_rt_attach(const char *logger_name, struct session_rt **out,
                      struct session_rt_info *info)
{
        *out = NULL;
        struct session *s = rt_session_find(logger_name);
        if (!s)
                return -ESRCH;
        struct session_rt *rt = calloc(1, sizeof(*rt));
        if (!rt) {
                session_unref(s);
                return -ENOMEM;
        }
        rt->s = s;
        rt->wake_fd = -1;
        pthread_mutex_lock(&s->lock);
        if (s->is_ended) {
                /* stopped between the lookup and the lock */
                pthread_mutex_unlock(&s->lock);
                free(rt);
                session_unref(s);
                return -ESRCH;
        }
        rt->header = header_copy(s);
        if (!rt->header ||
            session_rt_queue_init(&rt->q, s->max_buffers, s->rt_info.buffer_size_bytes) < 0) {
                pthread_mutex_unlock(&s->lock);
                free(rt->header);
                free(rt);
                session_unref(s);
                return -ENOMEM;
        }
        rt->wake_at = session_rt_wake_at(rt->q.cap);
        if (!s->consumers) {
                uint8_t *b;
                while ((b = session_rt_queue_pop(&s->backlog))) {
                        if (!session_rt_queue_push(&rt->q, b))
                                s->nr_rt_lost++;
                        session_rt_buf_free(b, s->backlog.buffer_size);
                }
        }
        pthread_mutex_lock(&s->rt_lock);
        rt->next = s->consumers;
        s->consumers = rt;
        pthread_mutex_unlock(&s->rt_lock);
        *info = s->rt_info;
        pthread_mutex_unlock(&s->lock);
        *out = rt;
        return 0;
}

/* Gives back the buffers rt handed out last: the header's copy freed, the queue's copies kept
   for the next ones (or freed past the spares), or all freed when is_free (the queue is going).
   Called with rt_lock held. */
static void rt_release_taken(struct session_rt *rt, bool is_free)
{
        for (uint32_t i = 0; i < rt->nr_taken; i++) {
                uint8_t *b = rt->taken[i];
                if (i == 0 && rt->is_taken_header)
                        free(b);
                else if (is_free || !session_rt_queue_keep(&rt->q, b))
                        session_rt_buf_free(b, rt->q.buffer_size);
                rt->taken[i] = NULL;
        }
        rt->nr_taken = 0;
        rt->is_taken_header = false;
}

int session_rt_next_batch(struct session_rt *rt, uint32_t timeout_ms, const uint8_t **bufs,
                          uint32_t max, uint32_t *size)
{
        struct session *s = rt->s;
        struct timespec deadline = deadline_after_ms(timeout_ms);    /* rt_cond's clock */
        max = max < 1 ? 1 : max > RT_TAKEN_MAX ? RT_TAKEN_MAX : max; /* the header takes one */
        pthread_mutex_lock(&s->rt_lock);
        rt_release_taken(rt, false);
        int rc = -EAGAIN;
        for (;;) {
                if (rt->header) {
                        /* the logfile header and the start group masks, before any data */
                        rt->taken[rt->nr_taken++] = rt->header;
                        rt->is_taken_header = true;
                        rt->header = NULL;
                }
                while (rt->nr_taken < max && rt->q.count)
                        rt->taken[rt->nr_taken++] = session_rt_queue_pop(&rt->q);
                if (rt->nr_taken) {
                        for (uint32_t i = 0; i < rt->nr_taken; i++)
                                bufs[i] = rt->taken[i];
                        *size = rt->q.buffer_size;
                        rc = (int)rt->nr_taken;
                        break;
                }
                if (s->is_rt_ended) {
                        rc = 0;
                        break;
                }
                if (rt->is_woken) {
                        rt->is_woken = false;
                        break;
                }
                if (pthread_cond_timedwait(&s->rt_cond, &s->rt_lock, &deadline) == ETIMEDOUT)
                        break;
        }
        pthread_mutex_unlock(&s->rt_lock);
        return rc;
}

int session_rt_wake_fd(struct session_rt *rt)
{
        struct session *s = rt->s;
        pthread_mutex_lock(&s->rt_lock);
        if (rt->wake_fd < 0)
                rt->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        int fd = rt->wake_fd >= 0 ? rt->wake_fd : -errno;
        pthread_mutex_unlock(&s->rt_lock);
        return fd;
}

void session_rt_interrupt(struct session_rt *rt)
{
        struct session *s = rt->s;
        pthread_mutex_lock(&s->rt_lock);
        rt->is_woken = true;
        rt_broadcast(s);
        pthread_mutex_unlock(&s->rt_lock);
}

void session_rt_ring_set(struct session_rt *rt, uint8_t *mem, uint32_t nr_slots)
{
        pthread_mutex_lock(&rt->s->rt_lock);
        rt->ring = mem;
        rt->ring_slots = mem ? nr_slots : 0;
        rt->ring_filled = rt->ring_told = rt->ring_released = 0;
        pthread_mutex_unlock(&rt->s->rt_lock);
}

/* Moves what waits for rt (the header, then its queue, oldest first) into the ring's free
   slots. Called with rt_lock held. */
static void ring_fill(struct session_rt *rt)
{
        uint32_t size = rt->q.buffer_size;
        while (rt->ring_filled - rt->ring_released < rt->ring_slots) {
                uint8_t *b = rt->header;
                bool is_header = b != NULL;
                if (is_header)
                        rt->header = NULL;
                else if (!(b = session_rt_queue_pop(&rt->q)))
                        break;
                memcpy(rt->ring + (rt->ring_filled % rt->ring_slots) * size, b, size);
                rt->ring_filled++;
                if (is_header)
                        free(b); /* header_copy's */
                else if (!session_rt_queue_keep(&rt->q, b))
                        session_rt_buf_free(b, size);
        }
}

int session_rt_wait_more(struct session_rt *rt, const struct timespec *deadline)
{
        struct session *s = rt->s;
        if (s->is_rt_ended && !rt->header && !rt->q.count)
                return 0;
        return pthread_cond_timedwait(&s->rt_cond, &s->rt_lock, deadline) == ETIMEDOUT ? -EAGAIN
                                                                                       : 1;
}

int session_rt_ring_next(struct session_rt *rt, uint32_t timeout_ms, uint64_t released,
                         uint64_t *seq)
{
        struct session *s = rt->s;
        struct timespec deadline = deadline_after_ms(timeout_ms); /* rt_cond's clock */
        pthread_mutex_lock(&s->rt_lock);
        if (released > rt->ring_released && released <= rt->ring_told)
                rt->ring_released = released;
        int rc = -EAGAIN;
        for (;;) {
                if (rt->ring)
                        ring_fill(rt);
                if (rt->ring && rt->ring_filled > rt->ring_told) {
                        *seq = rt->ring_told;
                        rc = (int)(rt->ring_filled - rt->ring_told);
                        rt->ring_told = rt->ring_filled;
                        break;
                }
                if ((rc = session_rt_wait_more(rt, &deadline)) <= 0)
                        break;
        }
        pthread_mutex_unlock(&s->rt_lock);
        return rc;
}

int session_rt_next(struct session_rt *rt, uint32_t timeout_ms, const uint8_t **buf, uint32_t *size)
{
        return session_rt_next_batch(rt, timeout_ms, buf, 1, size);
}

/* Without s->lock: the stream reads it for every buffer it sends, and the lock is the logger's
   for a whole drain (the sender waited on it, a PI futex each time). */
uint64_t session_rt_nr_lost(const struct session_rt *rt)
{
        return atomic_load_explicit(&rt->nr_lost, memory_order_relaxed);
}

int session_rt_state(struct session_rt *rt, struct session_rt_state *out)
{
        memset(out, 0, sizeof(*out));
        struct session *s = rt->s;
        if (!s)
                return -ESRCH;
        /* the generation first: settings changed after it show in the next state's */
        out->settings_gen = session_settings_generation();
        EVENT_TRACE_PROPERTIES p;
        memset(&p, 0, sizeof(p));
        p.Wnode.BufferSize = sizeof(p); /* no names asked */
        session_lock_request(s);
        session_fill_properties(s, &p);
        pthread_mutex_unlock(&s->lock);
        /* ControlTrace(QUERY)'s, as ETWTOP_TRACE_SETTINGS_INFO answers them */
        out->nr_events_lost = p.EventsLost;
        out->nr_buffers_written = p.BuffersWritten;
        out->nr_rt_buffers_lost = p.RealTimeBuffersLost;
        out->buffer_size_kb = p.BufferSize;
        out->max_file_mb = p.MaximumFileSize;
        return 0;
}

const char *session_rt_error(const struct session_rt *rt)
{
        (void)rt;
        return "";
}

void session_rt_detach(struct session_rt *rt)
{
        if (!rt)
                return;
        struct session *s = rt->s;
        pthread_mutex_lock(&s->lock);
        pthread_mutex_lock(&s->rt_lock);
        for (struct session_rt **p = &s->consumers; *p; p = &(*p)->next) {
                if (*p == rt) {
                        *p = rt->next;
                        break;
                }
        }
        rt_release_taken(rt, true);
        session_rt_queue_free(&rt->q);
        session_rt_pool_clear(rt);
        pthread_mutex_unlock(&s->rt_lock);
        pthread_mutex_unlock(&s->lock);
        if (rt->wake_fd >= 0)
                close(rt->wake_fd);
        free(rt->header);
        free(rt);
        session_unref(s);
}

void session_rt_drop(struct session_rt *rt)
{
        struct session *s = rt->s;
        pthread_mutex_lock(&s->rt_lock);
        atomic_fetch_add_explicit(&rt->nr_lost, rt->q.count + (rt->header ? 1 : 0),
                                  memory_order_relaxed);
        rt_release_taken(rt, true);
        free(rt->header);
        rt->header = NULL;
        uint32_t buffer_size = rt->q.buffer_size;
        session_rt_queue_free(&rt->q);
        rt->q.buffer_size = buffer_size;
        pthread_mutex_unlock(&s->rt_lock);
}

bool session_rt_is_ended(const struct session_rt *rt)
{
        pthread_mutex_lock(&rt->s->lock);
        bool is_ended = rt->s->is_ended;
        pthread_mutex_unlock(&rt->s->lock);
        return is_ended;
}
