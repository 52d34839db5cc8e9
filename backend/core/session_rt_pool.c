/* SPDX-License-Identifier: MIT */
/* session_rt_pool.c: owns a real-time consumer's stream in place: the session's window cut from
   a pool (a memory file) that a consumer of another process maps, each completed buffer handed
   to it where the writer put it and pinned there until it is released (no copy, where the
   shared ring copied every buffer), the few slots of the pool that take the header and what
   was queued, and the order of them all. */
#include "session_int.h"
#include "util/clock.h"

/* Pool buffers beyond the largest window: the consumers' slots and the pinned buffers set aside
   as they leave the window (etl_writer_set_pool). */
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

bool session_rt_pool_put(struct session_rt *rt, const uint8_t *buf)
{
        if (rt->ent_filled - rt->ent_released >= rt->ent_cap)
                return false;
        int64_t i = etl_pool_index(rt->pool, buf);
        if (i >= 0) {
                /* where it lies: the writer leaves it alone until it is unpinned */
                etl_pool_pin(rt->pool, (uint32_t)i);
        } else {
                /* not the pool's (a CPU's first buffer, the header, a queued copy): copied */
                if (rt->ring_filled - rt->ring_released >= rt->ring_slots)
                        return false;
                uint32_t slot = (uint32_t)(rt->ring_filled % rt->ring_slots);
                memcpy(rt->ring + (size_t)slot * rt->q.buffer_size, buf, rt->q.buffer_size);
                rt->ring_filled++;
                i = rt->ring_base + slot;
        }
        rt->ent[rt->ent_filled++ % rt->ent_cap] = (uint32_t)i;
        return true;
}

/* Gives back the buffers before released (handed out already): slots freed, pins dropped. */
static void pool_release(struct session_rt *rt, uint64_t released)
{
        for (; rt->ent_released < released; rt->ent_released++) {
                uint32_t i = rt->ent[rt->ent_released % rt->ent_cap];
                if (i - rt->ring_base < rt->ring_slots)
                        rt->ring_released++;
                else
                        etl_pool_unpin(rt->pool, i);
        }
}

void session_rt_pool_clear(struct session_rt *rt)
{
        if (!rt->pool)
                return;
        pool_release(rt, rt->ent_filled);
        etl_pool_unref(rt->pool);
        rt->pool = NULL;
        free(rt->ent);
        rt->ent = NULL;
        rt->ent_cap = 0;
        rt->ring = NULL;
        rt->ring_slots = 0;
        session_mem_give(rt->pool_mem);
        rt->pool_mem = 0;
}

int session_rt_pool_set(struct session_rt *rt, uint32_t nr_slots, uint32_t nr_entries, int *fd,
                        uint32_t *nr_buffers, uint32_t *buffer_size)
{
        struct session *s = rt->s;
        uint32_t size = rt->q.buffer_size;
        /* the slots, and as many buffers as the window may have to set aside */
        size_t bytes = ((size_t)nr_slots + nr_entries) * size;
        if (!nr_slots || nr_entries < nr_slots)
                return -EINVAL;
        uint32_t *ent = calloc(nr_entries, sizeof(*ent));
        if (!ent)
                return -ENOMEM;
        int rc = 0;
        pthread_mutex_lock(&s->lock); /* the writer's, which cuts from the pool too */
        struct etl_pool *pool = s->writer && !s->is_ended ? etl_writer_pool(s->writer) : NULL;
        int64_t base = -1;
        if (!pool)
                rc = -ENOENT;
        else if (!session_mem_take(bytes))
                rc = -ENOMEM;
        else if ((base = etl_pool_cut(pool, nr_slots)) < 0) {
                session_mem_give(bytes);
                rc = -ENOMEM;
        }
        if (rc == 0) {
                pthread_mutex_lock(&s->rt_lock);
                rt->pool = etl_pool_ref(pool);
                rt->pool_mem = bytes;
                rt->ent = ent;
                rt->ent_cap = nr_entries;
                rt->ent_filled = rt->ent_told = rt->ent_released = 0;
                rt->ring_base = (uint32_t)base;
                rt->ring = etl_pool_at(pool, (uint32_t)base);
                rt->ring_slots = nr_slots;
                rt->ring_filled = rt->ring_told = rt->ring_released = 0;
                pthread_mutex_unlock(&s->rt_lock);
                *fd = etl_pool_fd(pool);
                *nr_buffers = etl_pool_nr_buffers(pool);
                *buffer_size = size;
                ent = NULL;
        }
        pthread_mutex_unlock(&s->lock);
        free(ent);
        return rc;
}

void session_rt_pool_unset(struct session_rt *rt)
{
        pthread_mutex_lock(&rt->s->rt_lock);
        session_rt_pool_clear(rt);
        pthread_mutex_unlock(&rt->s->rt_lock);
}

/* Moves what waits for rt (the header, then its queue, oldest first) into its ring's free
   slots. Called with rt_lock held. */
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
                                idx[k] = rt->ent[(rt->ent_told + k) % rt->ent_cap];
                        rt->ent_told += n;
                        rc = (int)n;
                        break;
                }
                if (s->is_rt_ended && !rt->header && !rt->q.count) {
                        rc = 0;
                        break;
                }
                if (pthread_cond_timedwait(&s->rt_cond, &s->rt_lock, &deadline) == ETIMEDOUT)
                        break;
        }
        pthread_mutex_unlock(&s->rt_lock);
        return rc;
}
