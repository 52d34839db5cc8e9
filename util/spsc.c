/* SPDX-License-Identifier: MIT */
/* spsc.c: owns the single-producer/single-consumer ring of bytes: its messages' layout (an
   8-byte header, the bytes, padding to 8), the wrap at the ring's end, and the two positions
   each side publishes to the other. */
#include "util/spsc.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/xalloc.h"

#define SPSC_MIN_SIZE 4096u
#define SPSC_PAD      UINT32_MAX /* the header of the unused end of the ring before a wrap */

struct spsc_header {
        uint32_t len; /* the message's bytes, or SPSC_PAD */
        uint32_t reserved;
};
_Static_assert(sizeof(struct spsc_header) == 8, "an 8-byte header keeps messages aligned");

/* Positions count bytes since the queue was made (64 bits: they never wrap); a position's
   place in the ring is position & mask. The producer's fields and the consumer's are apart by
   a cache line, so that neither side's writes evict the other's reads. */
struct spsc {
        uint8_t *ring; /* owned */
        uint64_t size, mask;
        char gap0[64];
        /* the producer's */
        _Atomic uint64_t head; /* published: the consumer reads up to here */
        uint64_t head_local;   /* committed */
        uint64_t tail_seen;    /* the consumer's position, as last read */
        uint64_t reserved;     /* the reserved message's bytes, its header included */
        char gap1[64];
        /* the consumer's */
        _Atomic uint64_t tail; /* popped: the producer may write up to here + size */
        uint64_t tail_local;   /* the next message (pads skipped) */
        uint64_t head_seen;    /* the producer's position, as last read */
        uint64_t peeked;       /* the peeked message's bytes, its header included */
};

static uint64_t round8(uint64_t n)
{
        return (n + 7) & ~(uint64_t)7;
}

struct spsc *spsc_new(size_t size_bytes)
{
        struct spsc *q = xcalloc(1, sizeof(*q));
        uint64_t size = SPSC_MIN_SIZE;
        while (size < size_bytes)
                size <<= 1;
        q->ring = xmalloc(size);
        q->size = size;
        q->mask = size - 1;
        atomic_init(&q->head, 0);
        atomic_init(&q->tail, 0);
        return q;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

int spsc_populate(struct spsc *q)
{
        long page = sysconf(_SC_PAGESIZE);
        if (page <= 0)
                return -EINVAL;
        uintptr_t from = (uintptr_t)q->ring & ~((uintptr_t)page - 1);
        uintptr_t to =
                ((uintptr_t)q->ring + q->size + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
        /* (the ring's pages: the allocator maps a block of its size apart, page-aligned but
           for its header, and the pages around it are the same mapping's or the heap's) */
        return madvise((void *)from, to - from, MADV_POPULATE_WRITE) == 0 ? 0 : -errno;
}

void spsc_free(struct spsc *q)
{
        if (!q)
                return;
        free(q->ring);
        free(q);
}

size_t spsc_max_message(const struct spsc *q)
{
        return q->size / 2 - sizeof(struct spsc_header);
}

size_t spsc_size(const struct spsc *q)
{
        return q->size;
}

void *spsc_reserve(struct spsc *q, size_t len)
{
        if (len > spsc_max_message(q))
                return NULL;
        uint64_t need = sizeof(struct spsc_header) + round8(len);
        uint64_t at = q->head_local & q->mask, to_end = q->size - at;
        /* a message does not wrap: when the end of the ring is too short, it is skipped (a
           message of at most half the ring fits either before its end or from its start) */
        uint64_t total = need <= to_end ? need : to_end + need;
        if (q->size - (q->head_local - q->tail_seen) < total) {
                q->tail_seen = atomic_load_explicit(&q->tail, memory_order_acquire);
                if (q->size - (q->head_local - q->tail_seen) < total)
                        return NULL;
        }
        if (need > to_end) {
                struct spsc_header pad = {SPSC_PAD, 0};
                memcpy(q->ring + at, &pad, sizeof(pad));
                q->head_local += to_end;
                at = 0;
        }
        struct spsc_header h = {(uint32_t)len, 0};
        memcpy(q->ring + at, &h, sizeof(h));
        q->reserved = need;
        return q->ring + at + sizeof(h);
}

void spsc_commit(struct spsc *q)
{
        q->head_local += q->reserved;
        q->reserved = 0;
}

void spsc_publish(struct spsc *q)
{
        atomic_store_explicit(&q->head, q->head_local, memory_order_release);
}

const void *spsc_peek(struct spsc *q, size_t *len)
{
        for (;;) {
                if (q->tail_local == q->head_seen) {
                        q->head_seen = atomic_load_explicit(&q->head, memory_order_acquire);
                        if (q->tail_local == q->head_seen)
                                return NULL;
                }
                uint64_t at = q->tail_local & q->mask;
                struct spsc_header h;
                memcpy(&h, q->ring + at, sizeof(h));
                if (h.len == SPSC_PAD) {
                        q->tail_local += q->size - at;
                        continue;
                }
                q->peeked = sizeof(h) + round8(h.len);
                *len = h.len;
                return q->ring + at + sizeof(h);
        }
}

void spsc_pop(struct spsc *q)
{
        q->tail_local += q->peeked;
        q->peeked = 0;
        atomic_store_explicit(&q->tail, q->tail_local, memory_order_release);
}

uint64_t spsc_published(struct spsc *q)
{
        return atomic_load_explicit(&q->head, memory_order_acquire);
}

bool spsc_is_before(const struct spsc *q, uint64_t mark)
{
        return q->tail_local < mark;
}

bool spsc_is_empty(struct spsc *q)
{
        size_t len;
        return spsc_peek(q, &len) == NULL;
}

size_t spsc_nr_queued(struct spsc *q)
{
        q->head_seen = atomic_load_explicit(&q->head, memory_order_acquire);
        return q->head_seen - q->tail_local;
}
