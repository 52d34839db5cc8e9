/* SPDX-License-Identifier: MIT */
/* etl_pool.h: a writer's buffers in one memory file that another process can map read-only (a
 * real-time consumer reads a completed buffer where the writer put it, no copy), and the pins
 * that keep a buffer someone reads from being written again. */
#ifndef ETWTOP_ETL_POOL_H
#define ETWTOP_ETL_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct etl_pool;

/* A pool of nr_buffers buffers of buffer_size bytes in a sealed memory file (it cannot grow,
   shrink, or be mapped for writing by anyone else), with one reference: 0 or -errno. Its pages
   are made as buffers are taken (etl_pool_take), not before. */
int etl_pool_new(struct etl_pool **out, uint32_t buffer_size, uint32_t nr_buffers);
/* Another reference to p. */
struct etl_pool *etl_pool_ref(struct etl_pool *p);
/* Drops a reference: the last one unmaps and closes the file (a process that mapped it keeps
   its mapping). NULL is none. */
void etl_pool_unref(struct etl_pool *p);

/* A buffer for the taker alone (any thread): one given back before (etl_pool_give), else one
   never handed out (its pages made now, a chunk at a time): its index, or -1 when the file has
   none left. */
int64_t etl_pool_take(struct etl_pool *p);
/* The pages the next take would make (its chunk, where it cuts into pages not made), made now
   by a thread that holds none of the locks its takers hold: a take that makes pages does so
   under them, a millisecond or more a chunk, and a thread waiting for a priority-inheriting
   lock spins while its holder runs. Whether it made any. */
bool etl_pool_prepare(struct etl_pool *p);
/* Gives back buffer index, taken and no longer used by its taker, for the next take. */
void etl_pool_give(struct etl_pool *p, uint32_t index);
/* Buffer index's bytes (index below etl_pool_nr_buffers). */
uint8_t *etl_pool_at(const struct etl_pool *p, uint32_t index);
/* The index of the buffer at b, or -1 when b is not one of p's buffers. */
int64_t etl_pool_index(const struct etl_pool *p, const void *b);

/* A reader holds buffer index (any thread): it is not written until unpinned. */
void etl_pool_pin(struct etl_pool *p, uint32_t index);
void etl_pool_unpin(struct etl_pool *p, uint32_t index);
/* Whether b is one of p's buffers that someone holds. */
bool etl_pool_is_pinned(const struct etl_pool *p, const void *b);

/* The memory file (p's own: a caller that passes it on dups it or sends it as it is). */
int etl_pool_fd(const struct etl_pool *p);
uint32_t etl_pool_nr_buffers(const struct etl_pool *p);
uint32_t etl_pool_buffer_size(const struct etl_pool *p);

#endif
