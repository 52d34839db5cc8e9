/* SPDX-License-Identifier: MIT */
/* prefetch.h: asking for the bytes a sequential reader comes to next, a cache line at a time,
   each line once: the ring drain's (backend/linux/rings.c) and the live buffers' walk
   (src/feed.c), whose records another CPU wrote. One line asked for a record left most lines of
   a record with a call chain (two to four lines) to the hardware's prefetch, which stops at
   each page's end (bench/README.md, issue 25, stop 81). */
#ifndef ETWTOP_UTIL_PREFETCH_H
#define ETWTOP_UTIL_PREFETCH_H

#include <stdint.h>

#define PREFETCH_LINE      64u
#define PREFETCH_MAX_LINES 8u /* a call at most: the reader catches up over a few records */

/* Asks for the lines of base from pos (a line's start) up to to, PREFETCH_MAX_LINES at most,
   each at base + (line & mask) (a ring: its size less one; a flat buffer: UINT64_MAX); returns
   where the next call goes on from. */
static inline uint64_t prefetch_lines(const uint8_t *base, uint64_t mask, uint64_t pos, uint64_t to)
{
        for (uint32_t n = 0; pos < to && n < PREFETCH_MAX_LINES; n++, pos += PREFETCH_LINE)
                __builtin_prefetch(base + (pos & mask));
        return pos;
}

#endif
