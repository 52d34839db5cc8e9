/* SPDX-License-Identifier: MIT */
/* dwarf_read.h: owns the bounded reads of DWARF's numbers (fixed little-endian, ULEB128, SLEB128)
   that the line tables (elf_lines.c) and the units' index (elf_units.c) read without libdw. */
#ifndef ETWTOP_DWARF_READ_H
#define ETWTOP_DWARF_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dwarf_rd {
        const uint8_t *p, *end;
        bool is_bad; /* a read past end or a value the reader leaves to libdw */
};

/* A fixed-size number of n bytes, 8 at most (a wider one is bad: rd_skip passes over it). */
static inline uint64_t rd_fixed(struct dwarf_rd *r, unsigned int n)
{
        if (n > 8 || (size_t)(r->end - r->p) < n) {
                r->is_bad = true;
                r->p = r->end;
                return 0;
        }
        uint64_t v = 0;
        for (unsigned int i = 0; i < n; i++)
                v |= (uint64_t)r->p[i] << (8 * i); /* little-endian files only (checked) */
        r->p += n;
        return v;
}

/* Passes over n bytes: a value the reader does not keep (DW_FORM_data16's MD5 sums). */
static inline void rd_skip(struct dwarf_rd *r, size_t n)
{
        if ((size_t)(r->end - r->p) < n) {
                r->is_bad = true;
                r->p = r->end;
                return;
        }
        r->p += n;
}

/* A unit's initial length: 4 bytes, or 0xffffffff and 8 (64-bit DWARF: *offset_size 8); the
   reserved values 0xfffffff0-0xfffffffe are bad. */
static inline uint64_t rd_initial_length(struct dwarf_rd *r, unsigned int *offset_size)
{
        uint64_t len = rd_fixed(r, 4);
        *offset_size = 4;
        if (len == 0xffffffffu) {
                len = rd_fixed(r, 8);
                *offset_size = 8;
        } else if (len >= 0xfffffff0u) {
                r->is_bad = true;
        }
        return len;
}

static inline uint64_t rd_uleb(struct dwarf_rd *r)
{
        uint64_t v = 0;
        for (unsigned int shift = 0; shift < 64; shift += 7) {
                if (r->p >= r->end)
                        break;
                uint8_t b = *r->p++;
                v |= (uint64_t)(b & 0x7f) << shift;
                if (!(b & 0x80))
                        return v;
        }
        r->is_bad = true;
        return 0;
}

static inline int64_t rd_sleb(struct dwarf_rd *r)
{
        uint64_t v = 0;
        for (unsigned int shift = 0; shift < 64; shift += 7) {
                if (r->p >= r->end)
                        break;
                uint8_t b = *r->p++;
                v |= (uint64_t)(b & 0x7f) << shift;
                if (!(b & 0x80)) {
                        if (shift + 7 < 64 && (b & 0x40))
                                v |= ~(uint64_t)0 << (shift + 7);
                        return (int64_t)v;
                }
        }
        r->is_bad = true;
        return 0;
}

#endif
