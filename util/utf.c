// SPDX-License-Identifier: MIT
/* utf.c: the tree's one UTF-8 and UTF-16LE conversion (util/utf.h). */
#include "util/utf.h"

#include "le_bytes.h"

#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

size_t utf8_encode(uint32_t cp, char out[4])
{
        if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
                cp = UTF_REPLACEMENT;
        if (cp < 0x80) {
                out[0] = (char)cp;
                return 1;
        }
        if (cp < 0x800) {
                out[0] = (char)(0xC0 | cp >> 6);
                out[1] = (char)(0x80 | (cp & 0x3F));
                return 2;
        }
        if (cp < 0x10000) {
                out[0] = (char)(0xE0 | cp >> 12);
                out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
                out[2] = (char)(0x80 | (cp & 0x3F));
                return 3;
        }
        out[0] = (char)(0xF0 | cp >> 18);
        out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
        out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[3] = (char)(0x80 | (cp & 0x3F));
        return 4;
}

/* Decodes the code point at s[0..len): *used its bytes (1 for an invalid byte, which reads as
   U+FFFD). len must be at least 1. */
static uint32_t utf8_decode(const unsigned char *s, size_t len, size_t *used)
{
        static const uint32_t min_of[5] = {0, 0, 0x80, 0x800, 0x10000};
        uint32_t cp = s[0];
        size_t n;

        *used = 1;
        if (cp < 0x80)
                return cp;
        if (cp >= 0xC2 && cp <= 0xDF) {
                n = 2;
                cp &= 0x1F;
        } else if (cp >= 0xE0 && cp <= 0xEF) {
                n = 3;
                cp &= 0x0F;
        } else if (cp >= 0xF0 && cp <= 0xF4) {
                n = 4;
                cp &= 0x07;
        } else {
                return UTF_REPLACEMENT; /* a continuation byte, 0xC0, 0xC1 or 0xF5-0xFF */
        }
        if (n > len)
                return UTF_REPLACEMENT;
        for (size_t i = 1; i < n; i++) {
                if ((s[i] & 0xC0) != 0x80)
                        return UTF_REPLACEMENT;
                cp = cp << 6 | (s[i] & 0x3F);
        }
        if (cp < min_of[n] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
                return UTF_REPLACEMENT;
        *used = n;
        return cp;
}

uint32_t utf16le_decode(const uint8_t *s, size_t nr_units, size_t *i)
{
        uint32_t cp = (uint32_t)s[2 * *i] | (uint32_t)s[2 * *i + 1] << 8;

        (*i)++;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
                uint32_t lo =
                        *i < nr_units ? ((uint32_t)s[2 * *i] | (uint32_t)s[2 * *i + 1] << 8) : 0;

                if (lo >= 0xDC00 && lo <= 0xDFFF) {
                        (*i)++;
                        return 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                }
                return UTF_REPLACEMENT;
        }
        if (cp >= 0xDC00 && cp <= 0xDFFF)
                return UTF_REPLACEMENT;
        return cp;
}

static void put16(uint8_t *p, uint32_t v)
{
        p[0] = (uint8_t)v;
        p[1] = (uint8_t)(v >> 8);
}

uint32_t utf8_to_utf16le(uint8_t *dst, const char *src)
{
        const unsigned char *s = (const unsigned char *)(src ? src : "");
        size_t len = strlen((const char *)s);
        uint32_t o = 0;

        while (len) {
#ifdef __SSE2__
                /* ASCII (a path, mostly) widened sixteen bytes at a time */
                if (len >= 16) {
                        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)s);
                        if (!_mm_movemask_epi8(v)) {
                                __m128i zero = _mm_setzero_si128();
                                _mm_storeu_si128((__m128i *)(void *)(dst + o),
                                                 _mm_unpacklo_epi8(v, zero));
                                _mm_storeu_si128((__m128i *)(void *)(dst + o + 16),
                                                 _mm_unpackhi_epi8(v, zero));
                                s += 16;
                                len -= 16;
                                o += 32;
                                continue;
                        }
                }
#endif
                /* eight bytes at a time */
                uint64_t w;
                if (len >= 8 && (memcpy(&w, s, 8), !(w & 0x8080808080808080ull))) {
                        for (int half = 0; half < 2; half++) {
                                uint64_t x = (w >> (32 * half)) & 0xFFFFFFFFull;
                                x = (x | x << 16) & 0x0000FFFF0000FFFFull;
                                x = (x | x << 8) & 0x00FF00FF00FF00FFull;
                                le_put64(dst + o + 8 * half, x);
                        }
                        s += 8;
                        len -= 8;
                        o += 16;
                        continue;
                }
                if (*s < 0x80) { /* one: the tail of a path */
                        put16(dst + o, *s);
                        s++;
                        len--;
                        o += 2;
                        continue;
                }
                size_t used;
                uint32_t cp = utf8_decode(s, len, &used);

                s += used;
                len -= used;
                if (cp >= 0x10000) {
                        cp -= 0x10000;
                        put16(dst + o, 0xD800 | cp >> 10);
                        put16(dst + o + 2, 0xDC00 | (cp & 0x3FF));
                        o += 4;
                } else {
                        put16(dst + o, cp);
                        o += 2;
                }
        }
        put16(dst + o, 0);
        return o + 2;
}

size_t utf16le_to_utf8(const uint8_t *src, size_t max_units, char *out, size_t out_size)
{
        size_t i = 0, o = 0;
        int is_full = out_size == 0;

        while (i < max_units) {
                uint32_t cp = utf16le_decode(src, max_units, &i);
                char b[4];
                size_t n;

                if (cp == 0)
                        break;
                n = utf8_encode(cp, b);
                if (is_full || o + n + 1 > out_size) {
                        is_full = 1;
                        continue; /* cut at a whole character; go on to find the NUL */
                }
                memcpy(out + o, b, n);
                o += n;
        }
        if (out_size)
                out[o] = '\0';
        return i;
}
