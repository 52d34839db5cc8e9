/* SPDX-License-Identifier: MIT */
/* model_util.h (internal to model/): zeroed hash-table arrays in huge pages; the model's hash
   tables hash with util/hash.h, included here. */
#ifndef ETWTOP_MODEL_UTIL_H
#define ETWTOP_MODEL_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "etw/wintypes.h" /* GUID: event_type_hash */
#include "util/hash.h"
#include "util/xalloc.h"

/* A zeroed array for a hash table, which is touched all over soon after: cleared by writing.
   calloc leaves fresh pages untouched, and a table's first look at one (a probe, before any
   insert) maps the shared zero page, which the first write then copies, with a flush of the
   other threads' TLBs: two faults and an interrupt to each CPU a page, where a write fault is
   one (the screen's start: 9,800 page faults in 3 s, its model's tables a tenth of its time
   there). A big one is asked for in huge pages where the kernel allows it (a growing table's
   page faults were a fifth of a replay). Freed with free(). */
#define TABLE_HUGE_PAGE ((size_t)2 << 20)
#define TABLE_LINE      ((size_t)64)
#define TABLE_POPULATE  ((size_t)64 << 10)
#define TABLE_PAGE      ((uintptr_t)4096)
/* The whole pages of p[0..bytes) made at once where there are many (MADV_POPULATE_WRITE: one
   call, where the memset's writes would fault them in one by one: 1 MiB of fresh pages 390 us
   then, 260 us so, on the Intel VM of issue 25's stop 81); a kernel without it, or pages larger
   than 4 KiB that the range does not start on (the call refused), faults them in. No I/O: the
   model's one kind of system call, as MADV_HUGEPAGE below (tests/shell/layering.sh). */
static inline void table_populate(void *p, size_t bytes)
{
#ifdef MADV_POPULATE_WRITE
        if (bytes < TABLE_POPULATE)
                return;
        uintptr_t lo = ((uintptr_t)p + TABLE_PAGE - 1) & ~(TABLE_PAGE - 1);
        uintptr_t hi = ((uintptr_t)p + bytes) & ~(TABLE_PAGE - 1);
        if (hi > lo)
                (void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#else
        (void)p;
        (void)bytes;
#endif
}
static inline void *xzalloc_table(size_t n, size_t size)
{
        if (size && n > SIZE_MAX / size)
                return xcalloc(n, size); /* aborts: no such table */
        size_t bytes = n * size;
        if (bytes < TABLE_HUGE_PAGE) {
                /* on a cache line: a slot of a power-of-two size up to 64 bytes is on one */
                size_t lines = (bytes + TABLE_LINE - 1) & ~(TABLE_LINE - 1);
                void *p = aligned_alloc(TABLE_LINE, lines ? lines : TABLE_LINE);
                if (!p)
                        p = xmalloc(bytes ? bytes : 1); /* aborts where memory is out */
                table_populate(p, bytes);
                memset(p, 0, bytes);
                return p;
        }
        size_t rounded = (bytes + TABLE_HUGE_PAGE - 1) & ~(TABLE_HUGE_PAGE - 1);
        void *p = aligned_alloc(TABLE_HUGE_PAGE, rounded);
        if (!p)
                p = xcalloc(1, rounded);    /* aborts where memory is out */
        madvise(p, rounded, MADV_HUGEPAGE); /* a hint: fine to fail */
        table_populate(p, bytes);
        memset(p, 0, bytes);
        return p;
}

/* A work array kept between the calls that use it (a refresh's): made again each time, a big
   one's pages were faulted in again each time. Grown, never shrunk; freed with free(p). */
struct scratch {
        void *p;
        size_t cap;
};
static inline void *scratch_get(struct scratch *s, size_t bytes)
{
        if (bytes > s->cap) {
                free(s->p);
                s->cap = bytes + bytes / 2;
                s->p = xmalloc(s->cap);
        }
        return s->p;
}

/* An event type's slot in the tables that count types (event_stats.c, events_table.c): its
   provider, opcode and version (a type's name tells apart the types that share them). */
static inline uint32_t event_type_hash(const GUID *g, uint8_t opcode, uint8_t version)
{
        uint64_t h = (uint64_t)g->Data1 << 32 ^ (uint64_t)g->Data2 << 16 ^ g->Data3;
        h ^= (uint64_t)g->Data4[7] << 40 ^ (uint64_t)g->Data4[0] << 8;
        h ^= (uint64_t)opcode << 24 ^ (uint64_t)version << 56;
        return (uint32_t)(hash_mix64(h) >> 32);
}

#endif
