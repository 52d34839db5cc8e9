/* SPDX-License-Identifier: MIT */
/* kstrings.c: owns the strings of a record in the decoder's arena: UTF-16 and
   8-bit strings as UTF-8, SIDs as text, and what the MOF table decoder uses of them. */
#include <stdio.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "kdecoder_int.h"
#include "util/decimal.h"
#include "util/utf.h"
#include "kevent_mof.h"
#include "lznt1.h"

/* ---- strings into the scratch arena ---- */

/* Appends cp as UTF-8 if it fits with room left for the NUL; returns bytes written. */
static size_t put_utf8(char *out, size_t o, size_t room, uint32_t cp)
{
        char b[4];
        size_t n = utf8_encode(cp, b);

        if (o + n + 1 > room)
                return 0;
        memcpy(out + o, b, n);
        return n;
}

/* Finishes a string of o bytes begun at d->str + d->str_len. */
static const char *arena_finish(struct kdecoder *d, size_t o)
{
        char *s = d->str + d->str_len;

        s[o] = '\0';
        d->str_len += o + 1;
        return s;
}

const char *kstr_utf16(struct kdecoder *d, const struct payload *pl, size_t off, size_t *next)
{
        if (off >= pl->len) {
                *next = pl->len;
                return "";
        }

        const uint8_t *s = pl->p + off;
        size_t n = pl->len - off, i = 0, o = 0;
        size_t room = d->str_cap - d->str_len;
        char *out = d->str + d->str_len;
        bool has_nul = false, is_full = room == 0;

        /* ASCII fast path (again after each code point from 0x80: a name with an accent or a sign
           such as the registered sign is ASCII around it), four code units a step: most names and
           paths are plain ASCII. A step stops at a unit that is not 1..0x7F (a high byte set, a
           byte from 0x80, a NUL); with every unit below 0x80, unit - 1 sets bit 7 only where the
           unit is 0. */
ascii:;
#ifdef __SSE2__
        /* eight units a step where SSE2 is there (every x86-64): the same test, packed to bytes */
        const __m128i hi_bits = _mm_set1_epi16((short)0xFF80), zero = _mm_setzero_si128();

        while (i + 16 <= n && o + 9 <= room) {
                __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
                __m128i bad = _mm_or_si128(_mm_and_si128(v, hi_bits), _mm_cmpeq_epi16(v, zero));

                unsigned good = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(bad, zero));

                /* all eight bytes stored: those past the units taken are rewritten or lie past
                   the string's end (o + 9 <= room) */
                _mm_storel_epi64((__m128i *)(void *)(out + o), _mm_packus_epi16(v, v));
                if (good != 0xFFFF) {
                        /* the units before the first that stops the step are ASCII: taken */
                        unsigned k = (unsigned)__builtin_ctz(~good) / 2;
                        o += k;
                        i += 2 * k;
                        break;
                }
                o += 8;
                i += 16;
        }
#endif
        while (i + 8 <= n && o + 5 <= room) {
                uint64_t w, x;
                uint32_t four;

                memcpy(&w, s + i, 8);
                if ((w & 0xFF80FF80FF80FF80ull) ||
                    ((w - 0x0001000100010001ull) & ~w & 0x0080008000800080ull))
                        break;
                x = (w | w >> 8) & 0x0000FFFF0000FFFFull;
                four = (uint32_t)(x | x >> 16);
                memcpy(out + o, &four, 4);
                o += 4;
                i += 8;
        }
        while (i + 2 <= n && o + 1 < room && s[i + 1] == 0 && s[i] != 0 && s[i] < 0x80) {
                out[o++] = (char)s[i];
                i += 2;
        }
        while (i + 2 <= n) {
                if (s[i] == 0 && s[i + 1] == 0) {
                        i += 2;
                        has_nul = true;
                        break;
                }

                size_t unit = i / 2;
                uint32_t cp = utf16le_decode(s, n / 2, &unit);

                i = 2 * unit;
                if (!is_full) {
                        size_t w = put_utf8(out, o, room, cp);

                        is_full = w == 0;
                        o += w;
                        if (!is_full && cp >= 0x80)
                                goto ascii;
                }
        }
        *next = has_nul ? off + i : pl->len;
        return room ? arena_finish(d, o) : "";
}

/* ---- what the MOF table decoder (kevent_mof.c) uses ---- */

const char *kdecoder_utf16_at(struct kdecoder *d, const uint8_t *p, size_t len, size_t off,
                              size_t *next)
{
        struct payload pl = {p, len, 8};

        return kstr_utf16(d, &pl, off, next);
}

const char *kdecoder_ansi_at(struct kdecoder *d, const uint8_t *p, size_t len, size_t off,
                             size_t *next)
{
        struct payload pl = {p, len, 8};

        return kstr_ansi(d, &pl, off, next);
}

const char *kdecoder_lznt1_utf16(struct kdecoder *d, const uint8_t *p, size_t len, size_t off,
                                 uint64_t size)
{
        /* what the arena can hold of it: 2 bytes of UTF-16 are at most 3 of UTF-8 */
        uint64_t cap = (uint64_t)(d->str_cap - d->str_len) / 3u * 2u + 2u;
        if (size < cap)
                cap = size;
        uint8_t *text = malloc(cap ? (size_t)cap : 1);
        long n = text && off <= len ? lznt1_decompress(p + off, len - off, text, (size_t)cap) : -1;
        const char *s = "";
        if (n >= 0) {
                size_t next;
                struct payload pl = {text, (size_t)n, 8};
                s = kstr_utf16(d, &pl, 0, &next);
        }
        free(text);
        return s;
}

const char *kdecoder_utf16_fixed(struct kdecoder *d, const uint8_t *p, size_t len, size_t off,
                                 size_t nchars)
{
        size_t end = off + 2 * nchars < len ? off + 2 * nchars : len, next;
        struct payload pl = {p, end, 8};

        return kstr_utf16(d, &pl, off, &next);
}

const char *kdecoder_arena_copy(struct kdecoder *d, const char *s)
{
        size_t n = strlen(s);

        if (d->str_cap - d->str_len < n + 1)
                return "";
        memcpy(d->str + d->str_len, s, n);
        return arena_finish(d, n);
}

struct kevent_field *kdecoder_field_slots(struct kdecoder *d)
{
        return d->fields;
}

/* Length of the valid UTF-8 sequence starting at s[0..n), or 0 when it is not valid. */
static size_t utf8_seq_len(const uint8_t *s, size_t n)
{
        uint8_t c = s[0];
        size_t len;
        uint32_t min, cp;

        if (c < 0x80)
                return 1;
        if (c >= 0xC2 && c <= 0xDF) {
                len = 2;
                min = 0x80;
                cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
                len = 3;
                min = 0x800;
                cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
                len = 4;
                min = 0x10000;
                cp = c & 0x07;
        } else {
                return 0;
        }
        if (len > n)
                return 0;
        for (size_t i = 1; i < len; i++) {
                if ((s[i] & 0xC0) != 0x80)
                        return 0;
                cp = cp << 6 | (s[i] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
                return 0;
        return len;
}

const char *kstr_ansi(struct kdecoder *d, const struct payload *pl, size_t off, size_t *next)
{
        if (off >= pl->len) {
                *next = pl->len;
                return "";
        }

        const uint8_t *s = pl->p + off;
        size_t max = pl->len - off;
        const uint8_t *nul = memchr(s, 0, max);
        size_t n = nul ? (size_t)(nul - s) : max;
        size_t room = d->str_cap - d->str_len;
        char *out = d->str + d->str_len;
        bool is_utf8 = true;

        *next = nul ? off + n + 1 : pl->len;
        if (room == 0)
                return "";
        for (size_t i = 0; i < n;) {
                /* eight ASCII bytes a step (paths and names mostly are): a byte of a sequence
                   has its high bit set */
                uint64_t v;
                if (i + 8 <= n && (memcpy(&v, s + i, 8), !(v & 0x8080808080808080ull))) {
                        i += 8;
                        continue;
                }
                size_t w = utf8_seq_len(s + i, n - i);

                if (!w) {
                        is_utf8 = false;
                        break;
                }
                i += w;
        }

        size_t o = 0;

        if (is_utf8) {
                o = n < room - 1 ? n : room - 1;
                while (o > 0 && o < n && (s[o] & 0xC0) == 0x80) /* never cut a sequence */
                        o--;
                memcpy(out, s, o);
        } else {
                for (size_t i = 0; i < n; i++) {
                        size_t w = put_utf8(out, o, room, s[i]);

                        if (!w)
                                break;
                        o += w;
                }
        }
        return arena_finish(d, o);
}

/* v in decimal at out (room for 20 digits), its length: a process event's SID has up to 15
   sub-authorities, and snprintf's three to sixteen calls were 2,400 instructions a SID. */
static size_t put_decimal(char *out, uint64_t v)
{
        return decimal_put(out, v);
}

const char *kstr_sid(struct kdecoder *d, const uint8_t *sid, unsigned count)
{
        static const char hex[] = "0123456789ABCDEF";
        size_t room = d->str_cap - d->str_len;
        char *out = d->str + d->str_len;
        uint64_t auth = 0;
        size_t o = 0;

        if (room < 64)
                return "";
        for (int i = 2; i < 8; i++)
                auth = auth << 8 | sid[i];
        out[o++] = 'S';
        out[o++] = '-';
        o += put_decimal(out + o, sid[0]);
        out[o++] = '-';
        if (auth < (1ull << 32)) {
                o += put_decimal(out + o, auth);
        } else { /* 0x and 12 upper-case hex digits */
                out[o++] = '0';
                out[o++] = 'x';
                for (int sh = 44; sh >= 0; sh -= 4)
                        out[o++] = hex[(auth >> sh) & 15];
        }
        for (unsigned i = 0; i < count; i++) {
                if (room - o < 13)
                        break;
                out[o++] = '-';
                o += put_decimal(out + o, le_get32(sid + 8 + 4 * i));
        }
        return arena_finish(d, o);
}
