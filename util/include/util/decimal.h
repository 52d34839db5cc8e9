/* SPDX-License-Identifier: MIT */
/* decimal.h: an unsigned number in decimal, as "%" PRIu64 writes it, without printf (its
   conversion was thousands of instructions where a table or an event's text writes many). */
#ifndef ETWTOP_UTIL_DECIMAL_H
#define ETWTOP_UTIL_DECIMAL_H

#include <stddef.h>
#include <stdint.h>

/* v's digits at out (room for 20), no NUL: how many. */
static inline size_t decimal_put(char *out, uint64_t v)
{
        char tmp[20];
        size_t n = 0;
        do {
                tmp[n++] = (char)('0' + v % 10);
                v /= 10;
        } while (v);
        for (size_t i = 0; i < n; i++)
                out[i] = tmp[n - 1 - i];
        return n;
}

#endif
