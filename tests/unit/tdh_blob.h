/* SPDX-License-Identifier: MIT */
/* tdh_blob.h: the TDH tests' builder of TRACE_EVENT_INFO blobs: little-endian fields put at an
   offset, UTF-16 names appended. */
#ifndef ETWTOP_TESTS_TDH_BLOB_H
#define ETWTOP_TESTS_TDH_BLOB_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct bb {
        uint8_t b[8192];
        size_t n;
};

static inline void put16(struct bb *b, size_t at, uint16_t v)
{
        memcpy(b->b + at, &v, 2);
}

static inline void put32(struct bb *b, size_t at, uint32_t v)
{
        memcpy(b->b + at, &v, 4);
}

/* Appends s as UTF-16 with its NUL; returns its offset. */
static inline uint32_t add_str(struct bb *b, const char *s)
{
        uint32_t at = (uint32_t)b->n;
        do {
                put16(b, b->n, (uint8_t)*s);
                b->n += 2;
        } while (*s++);
        return at;
}

#endif
