/* SPDX-License-Identifier: MIT */
/* etl_pool.c: owns a memory file of fixed-size buffers that a writer cuts its ring's buffers
   from and a real-time consumer of another process maps read-only: the file (made, sized, mapped
   here for writing, then sealed), the buffers cut from it in order with their pages made a
   chunk at a time, and a pin count a buffer, so that the writer leaves alone what a consumer
   still reads. */
#include "etl_pool.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* The pages made at once as buffers are cut (a chunk of the window's anonymous buffers before). */
#define POOL_CHUNK ((size_t)2 << 20)

struct etl_pool {
        atomic_uint refs;
        int fd;
        uint8_t *mem; /* the whole file, mapped for writing */
        size_t bytes;
        uint32_t buffer_size;
        uint32_t nr_buffers;
        atomic_ushort *pins;  /* owned: nr_buffers counts */
        pthread_mutex_t lock; /* the takes and gives: */
        uint32_t nr_cut;      /* buffers ever handed out (etl_pool_take) */
        size_t made;          /* bytes from the start whose pages are made */
        uint32_t *given;      /* owned: buffers given back, for the next takes */
        uint32_t nr_given, given_cap;
        bool is_preparing; /* an etl_pool_prepare makes pages, the lock let go */
};

int etl_pool_new(struct etl_pool **out, uint32_t buffer_size, uint32_t nr_buffers)
{
        *out = NULL;
        if (buffer_size < 64 || buffer_size % 8 || !nr_buffers)
                return -EINVAL;
        struct etl_pool *p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->fd = -1;
        p->buffer_size = buffer_size;
        p->nr_buffers = nr_buffers;
        p->bytes = (size_t)buffer_size * nr_buffers;
        atomic_init(&p->refs, 1);
        pthread_mutex_init(&p->lock, NULL);
        p->pins = calloc(nr_buffers, sizeof(*p->pins));
        int rc = -ENOMEM;
        if (!p->pins)
                goto fail;
        p->fd = memfd_create("etwtop-buffers", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (p->fd < 0 || ftruncate(p->fd, (off_t)p->bytes) < 0) {
                rc = -errno;
                goto fail;
        }
        void *mem = mmap(NULL, p->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd, 0);
        if (mem == MAP_FAILED) {
                rc = -errno;
                goto fail;
        }
        p->mem = mem;
        /* no one but this mapping writes, and the file keeps its size under every reader */
        if (fcntl(p->fd, F_ADD_SEALS,
                  F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL) < 0) {
                rc = -errno;
                goto fail;
        }
        *out = p;
        return 0;
fail:
        etl_pool_unref(p);
        return rc < 0 ? rc : -ENOMEM;
}

struct etl_pool *etl_pool_ref(struct etl_pool *p)
{
        atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
        return p;
}

void etl_pool_unref(struct etl_pool *p)
{
        if (!p || atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) != 1)
                return;
        if (p->mem)
                munmap(p->mem, p->bytes);
        if (p->fd >= 0)
                close(p->fd);
        free(p->pins);
        free(p->given);
        pthread_mutex_destroy(&p->lock);
        free(p);
}

/* The end of the chunk that holds byte end - 1 of the file, the file's end at most. */
static size_t chunk_end(const struct etl_pool *p, size_t end)
{
        size_t to = (end + POOL_CHUNK - 1) / POOL_CHUNK * POOL_CHUNK;
        return to < p->bytes ? to : p->bytes;
}

/* The pages of p->mem[from, to) made, in one call, where the writer's first writes in each
   page would fault it in one by one. */
static void make_pages(struct etl_pool *p, size_t from, size_t to)
{
#ifdef MADV_POPULATE_WRITE
        if (to > from && madvise(p->mem + from, to - from, MADV_POPULATE_WRITE) < 0) {
                /* an older kernel: the pages come as they are written */
        }
#else
        (void)p;
        (void)from;
        (void)to;
#endif
}

int64_t etl_pool_take(struct etl_pool *p)
{
        pthread_mutex_lock(&p->lock);
        int64_t i = -1;
        if (p->nr_given) {
                i = p->given[--p->nr_given];
        } else if (p->nr_cut < p->nr_buffers) {
                size_t end = ((size_t)p->nr_cut + 1) * p->buffer_size;
                if (end > p->made) {
                        /* a chunk at a time (etl_pool_prepare's, where it came first) */
                        size_t to = chunk_end(p, end);
                        make_pages(p, p->made, to);
                        p->made = to;
                }
                i = p->nr_cut++;
        }
        pthread_mutex_unlock(&p->lock);
        return i;
}

bool etl_pool_prepare(struct etl_pool *p)
{
        pthread_mutex_lock(&p->lock);
        /* the next take cuts a new buffer (none given back waits) whose pages are not made:
           the chunk it would make, and no more (a chunk made ahead of need was one made for
           nothing where the session ends first: a start's 2 MiB cost what the wait saved) */
        size_t ahead = ((size_t)p->nr_cut + 1) * p->buffer_size;
        if (p->is_preparing || p->nr_given || p->nr_cut >= p->nr_buffers || p->made >= p->bytes ||
            ahead <= p->made) {
                pthread_mutex_unlock(&p->lock);
                return false;
        }
        size_t from = p->made, to = chunk_end(p, ahead);
        p->is_preparing = true;
        pthread_mutex_unlock(&p->lock);
        /* a take meanwhile that needs these pages makes them too: asked twice, made once */
        make_pages(p, from, to);
        pthread_mutex_lock(&p->lock);
        if (to > p->made)
                p->made = to;
        p->is_preparing = false;
        pthread_mutex_unlock(&p->lock);
        return true;
}

void etl_pool_give(struct etl_pool *p, uint32_t index)
{
        if (index >= p->nr_buffers)
                return;
        pthread_mutex_lock(&p->lock);
        if (p->nr_given == p->given_cap) {
                uint32_t cap = p->given_cap ? 2 * p->given_cap : 64;
                uint32_t *given = realloc(p->given, cap * sizeof(*given));
                if (given) {
                        p->given = given;
                        p->given_cap = cap;
                }
        }
        if (p->nr_given < p->given_cap) /* else it stays unused until the pool goes */
                p->given[p->nr_given++] = index;
        pthread_mutex_unlock(&p->lock);
}

uint8_t *etl_pool_at(const struct etl_pool *p, uint32_t index)
{
        return p->mem + (size_t)index * p->buffer_size;
}

int64_t etl_pool_index(const struct etl_pool *p, const void *b)
{
        const uint8_t *at = b;
        if (!p || at < p->mem || at >= p->mem + p->bytes)
                return -1;
        size_t off = (size_t)(at - p->mem);
        return off % p->buffer_size ? -1 : (int64_t)(off / p->buffer_size);
}

void etl_pool_pin(struct etl_pool *p, uint32_t index)
{
        if (index < p->nr_buffers)
                atomic_fetch_add_explicit(&p->pins[index], 1, memory_order_relaxed);
}

void etl_pool_unpin(struct etl_pool *p, uint32_t index)
{
        /* release: the reader's reads of the buffer come before its next write */
        if (index < p->nr_buffers)
                atomic_fetch_sub_explicit(&p->pins[index], 1, memory_order_release);
}

bool etl_pool_is_pinned(const struct etl_pool *p, const void *b)
{
        int64_t i = etl_pool_index(p, b);
        return i >= 0 && atomic_load_explicit(&p->pins[i], memory_order_acquire) != 0;
}

int etl_pool_fd(const struct etl_pool *p)
{
        return p->fd;
}

uint32_t etl_pool_nr_buffers(const struct etl_pool *p)
{
        return p->nr_buffers;
}

uint32_t etl_pool_buffer_size(const struct etl_pool *p)
{
        return p->buffer_size;
}
