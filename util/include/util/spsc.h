/* SPDX-License-Identifier: MIT */
/* spsc.h: the tree's single-producer/single-consumer queue: messages of any size, in order, in
   a bounded ring of bytes, lock-free (C11 atomics, acquire/release): one thread writes, one
   other thread reads, neither takes a lock nor waits inside it. */
#ifndef ETWTOP_UTIL_SPSC_H
#define ETWTOP_UTIL_SPSC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct spsc;

/* A queue of size_bytes rounded up to a power of two (4 KiB at least); aborts when out of
   memory. Messages are 8-byte aligned and contiguous: a message up to spsc_max_message bytes
   always fits in an empty queue. */
struct spsc *spsc_new(size_t size_bytes);
void spsc_free(struct spsc *q); /* NULL is fine */

/* Makes the ring's pages at once (one call), for a queue that will go round its whole ring:
   a live session's, whose first pass otherwise faults each page in as the producer first writes
   it. Best effort: 0, or -errno where the kernel did not (one without MADV_POPULATE_WRITE,
   before 5.14: EINVAL), which leaves it to the faults. */
int spsc_populate(struct spsc *q);

/* The largest message (half the ring, less its 8-byte header). */
size_t spsc_max_message(const struct spsc *q);
/* The ring's bytes. */
size_t spsc_size(const struct spsc *q);

/* ---- the producer's side (one thread) ---- */

/* Room for a message of len bytes (at most spsc_max_message), 8-byte aligned, for the producer
   to write; NULL while the queue is too full (the consumer frees room as it pops). The room is
   the producer's until spsc_commit. */
void *spsc_reserve(struct spsc *q, size_t len);
/* The reserved message is written: it follows the ones before it. The consumer sees it at the
   next spsc_publish (a batch of messages costs one release store). */
void spsc_commit(struct spsc *q);
/* Hands the committed messages over (release: their bytes are visible before they are). */
void spsc_publish(struct spsc *q);

/* ---- the consumer's side (one other thread) ---- */

/* The oldest published message and its length; NULL when there is none. It stays valid, and
   the producer does not touch it, until spsc_pop. */
const void *spsc_peek(struct spsc *q, size_t *len);
/* Frees the message spsc_peek returned (release: the producer may reuse its bytes). */
void spsc_pop(struct spsc *q);

/* Where the published messages end now: a mark that spsc_is_before compares the consumer's
   position with, so that the consumer can take everything handed over until a moment (a
   frame's end) and no more. Positions count bytes since the queue was made. */
uint64_t spsc_published(struct spsc *q);
/* The consumer has not popped everything published before mark. */
bool spsc_is_before(const struct spsc *q, uint64_t mark);
/* Nothing is published that the consumer has not popped (consumer side). */
bool spsc_is_empty(struct spsc *q);
/* The bytes published and not yet popped, headers and padding included (consumer side): how
   full the producer finds the ring, less what it has committed and not yet published. */
size_t spsc_nr_queued(struct spsc *q);

#endif
