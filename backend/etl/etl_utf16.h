/* SPDX-License-Identifier: MIT */
/* etl_utf16.h: the one UTF-16LE decoder and UTF-8 encoder of the formats and the decoder: a
   code point from UTF-16 units (U+FFFD for an unpaired surrogate), and its UTF-8 bytes. */
#ifndef ETWTOP_ETL_UTF16_H
#define ETWTOP_ETL_UTF16_H

#include <stddef.h>
#include <stdint.h>

/* The code point at unit *i of s[0..nr_units) (little-endian units), *i moved past it; a high
   surrogate takes the low one after it, an unpaired one reads as U+FFFD. *i < nr_units. */
static inline uint32_t etl_utf16_next(const uint8_t *s, size_t nr_units, size_t *i)
{
        uint32_t cp = (uint32_t)(s[2 * *i] | s[2 * *i + 1] << 8);

        (*i)++;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
                uint32_t lo = *i < nr_units ? (uint32_t)(s[2 * *i] | s[2 * *i + 1] << 8) : 0;

                if (lo >= 0xDC00 && lo <= 0xDFFF) {
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                        (*i)++;
                } else {
                        cp = 0xFFFD;
                }
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                cp = 0xFFFD;
        }
        return cp;
}

/* cp's UTF-8 bytes in b (1 to 4 of them); returns their count. */
static inline size_t etl_utf8_encode(uint32_t cp, uint8_t b[4])
{
        if (cp < 0x80) {
                b[0] = (uint8_t)cp;
                return 1;
        }
        if (cp < 0x800) {
                b[0] = (uint8_t)(0xC0 | cp >> 6);
                b[1] = (uint8_t)(0x80 | (cp & 0x3F));
                return 2;
        }
        if (cp < 0x10000) {
                b[0] = (uint8_t)(0xE0 | cp >> 12);
                b[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
                b[2] = (uint8_t)(0x80 | (cp & 0x3F));
                return 3;
        }
        b[0] = (uint8_t)(0xF0 | cp >> 18);
        b[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3F));
        b[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
        b[3] = (uint8_t)(0x80 | (cp & 0x3F));
        return 4;
}

#endif
