/* SPDX-License-Identifier: MIT */
/* session_rt_pool.c: owns a real-time consumer's stream in place: the session's window cut from
   a pool (a memory file) that a consumer of another process maps, each completed buffer handed
   to it where the writer put it and pinned there until it is released (no copy, where the
   shared ring copied every buffer), the pool buffers taken for a consumer's copies of the
   header and what was queued, and the order of them all. */
#include "session_int.h"
#include "util/clock.h"

/* Pool buffers beyond the largest window: the consumers' copies and the pinned buffers set
   aside as they leave the window (etl_writer_set_pool). */
#define POOL_SPARE 1024u

void session_window_pool(struct session *s)
{
        if (!(s->rt_info.log_file_mode & EVENT_TRACE_REAL_TIME_MODE) || !s->writer ||
            etl_writer_pool(s->writer))
                return;
        uint32_t size = s->rt_info.buffer_size_bytes;
        struct etl_pool *pool;
        if (!size || etl_pool_new(&pool, size,
                                  (uint32_t)(SESSION_MAX_BUFFER_BYTES / size) + s->rt_info.nr_cpus +
                                          POOL_SPARE) < 0)
                return; /* the buffers are copied to consumers instead */
        etl_writer_set_pool(s->writer, pool);
        etl_pool_unref(pool); /* the writer's reference keeps it */
}

/* An entry's mark for a copy: its buffer goes back to the consumer's copies when released
   (the pool's indexes are below HOST_RT_MAX_POOL, 2^21). */
#define RT_ENT_COPY 0x80000000u

/* A pool buffer for a copy: one of rt's free, else a new one (counted in session_mem); -1 when
   rt has as many as it may hold, or memory is short. */
static int64_t copy_buffer(struct session_rt *rt)
{
        if (rt->nr_copies_free)
                return rt->copies[--rt->nr_copies_free];
        if (rt->nr_copies >= rt->ent_cap || !session_mem_take(rt->q.buffer_size))
                return -1;
        int64_t i = etl_pool_take(rt->pool);
        if (i < 0 || (uint32_t)i >= RT_ENT_COPY) {
                if (i >= 0)
                        etl_pool_give(rt->pool, (uint32_t)i);
                session_mem_give(rt->q.buffer_size);
                return -1;
        }
        rt->nr_copies++;
        return i;
}

bool session_rt_pool_put(struct session_rt *rt, const uint8_t *buf)
{
        if (rt->ent_filled - rt->ent_released >= rt->ent_cap)
                return false;
        int64_t i = etl_pool_index(rt->pool, buf);
        uint32_t ent;
        if (i >= 0 && (uint32_t)i < RT_ENT_COPY) {
                /* where it lies: the writer leaves it alone until it is unpinned */
                etl_pool_pin(rt->pool, (uint32_t)i);
                ent = (uint32_t)i;
        } else {
                /* not the pool's (a CPU's first buffer, the header, a queued copy): copied */
                if ((i = copy_buffer(rt)) < 0)
                        return false;
                memcpy(etl_pool_at(rt->pool, (uint32_t)i), buf, rt->q.buffer_size);
                ent = (uint32_t)i | RT_ENT_COPY;
        }
        rt->ent[rt->ent_filled++ % rt->ent_cap] = ent;
        return true;
}

/* Gives back the buffers before released (handed out already): copies freed, pins dropped. */
static void pool_release(struct session_rt *rt, uint64_t released)
{
        for (; rt->ent_released < released; rt->ent_released++) {
                uint32_t ent = rt->ent[rt->ent_released % rt->ent_cap];
                if (ent & RT_ENT_COPY)
                        rt->copies[rt->nr_copies_free++] = ent & ~RT_ENT_COPY;
                else
                        etl_pool_unpin(rt->pool, ent);
        }
}

void session_rt_pool_clear(struct session_rt *rt)
{
        if (!rt->pool)
                return;
        pool_release(rt, rt->ent_filled);
        /* every copy is free now: back to the pool, for the window or the next consumer */
        for (uint32_t k = 0; k < rt->nr_copies_free; k++)
                etl_pool_give(rt->pool, rt->copies[k]);
        session_mem_give(((size_t)rt->nr_copies + rt->ent_cap) * rt->q.buffer_size);
        etl_pool_unref(rt->pool);
        rt->pool = NULL;
        free(rt->ent);
        free(rt->copies);
        rt->ent = rt->copies = NULL;
        rt->ent_cap = rt->nr_copies = rt->nr_copies_free = 0;
}

int session_rt_pool_set(struct session_rt *rt, uint32_t nr_entries, int *fd, uint32_t *nr_buffers,
                        uint32_t *buffer_size)
{
        struct session *s = rt->s;
        if (!nr_entries)
                return -EINVAL;
        uint32_t *ent = calloc(nr_entries, sizeof(*ent));
        uint32_t *copies = calloc(nr_entries, sizeof(*copies));
        if (!ent || !copies) {
                free(ent);
                free(copies);
                return -ENOMEM;
        }
        /* the window's buffers this consumer may keep it from using meanwhile (pinned, set
           aside, others taken in their place), as the ring it replaces took; its copies are
           counted as they are taken */
        size_t held = (size_t)nr_entries * rt->q.buffer_size;
        int rc = -ENOENT;
        pthread_mutex_lock(&s->lock); /* the writer, and its pool */
        struct etl_pool *pool = s->writer && !s->is_ended ? etl_writer_pool(s->writer) : NULL;
        if (pool && !session_mem_take(held)) {
                rc = -ENOMEM;
        } else if (pool) {
                pthread_mutex_lock(&s->rt_lock);
                rt->pool = etl_pool_ref(pool);
                rt->ent = ent;
                rt->copies = copies;
                rt->ent_cap = nr_entries;
                rt->ent_filled = rt->ent_told = rt->ent_released = 0;
                rt->nr_copies = rt->nr_copies_free = 0;
                pthread_mutex_unlock(&s->rt_lock);
                *fd = etl_pool_fd(pool);
                *nr_buffers = etl_pool_nr_buffers(pool);
                *buffer_size = rt->q.buffer_size;
                ent = copies = NULL;
                rc = 0;
        }
        pthread_mutex_unlock(&s->lock);
        free(ent);
        free(copies);
        /* the pages of the copies about to be taken (the header's, the queue's) made before
           rt_lock is taken for them (pool_fill): made under it, the session's other threads
           waited for it, spinning */
        if (rc == 0)
                etl_pool_prepare(rt->pool);
        return rc;
}

void session_rt_pool_unset(struct session_rt *rt)
{
        pthread_mutex_lock(&rt->s->rt_lock);
        session_rt_pool_clear(rt);
        pthread_mutex_unlock(&rt->s->rt_lock);
}

/* Moves what waits for rt (the header, then its queue, oldest first) into copies of its own,
   while it may hold more. Called with rt_lock held. */
static void pool_fill(struct session_rt *rt)
{
        for (;;) {
                uint8_t *b = rt->header ? rt->header : rt->q.count ? rt->q.bufs[rt->q.head] : NULL;
                if (!b || !session_rt_pool_put(rt, b))
                        break;
                if (b == rt->header) {
                        rt->header = NULL;
                        free(b); /* header_copy's */
                        continue;
                }
                session_rt_queue_pop(&rt->q);
                if (!session_rt_queue_keep(&rt->q, b))
                        session_rt_buf_free(b, rt->q.buffer_size);
        }
}

int session_rt_places_next(struct session_rt *rt, uint32_t timeout_ms, uint64_t released,
                           uint64_t *seq, uint32_t *idx, uint32_t max)
{
        struct session *s = rt->s;
        struct timespec deadline = deadline_after_ms(timeout_ms); /* rt_cond's clock */
        pthread_mutex_lock(&s->rt_lock);
        int rc = -EAGAIN;
        if (!rt->pool) {
                pthread_mutex_unlock(&s->rt_lock);
                return -EINVAL;
        }
        if (released > rt->ent_released && released <= rt->ent_told)
                pool_release(rt, released);
        for (;;) {
                pool_fill(rt);
                if (rt->ent_filled > rt->ent_told && max) {
                        uint64_t n = rt->ent_filled - rt->ent_told;
                        n = n < max ? n : max;
                        *seq = rt->ent_told;
                        for (uint32_t k = 0; k < (uint32_t)n; k++)
                                idx[k] = rt->ent[(rt->ent_told + k) % rt->ent_cap] & ~RT_ENT_COPY;
                        rt->ent_told += n;
                        rc = (int)n;
                        break;
                }
                if ((rc = session_rt_wait_more(rt, &deadline)) <= 0)
                        break;
        }
        pthread_mutex_unlock(&s->rt_lock);
        return rc;
}
