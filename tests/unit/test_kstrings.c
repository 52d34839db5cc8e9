/* SPDX-License-Identifier: MIT */
/* test_kstrings.c: cmocka tests of the decoder's payload strings (backend/decode/kstrings.c): the
 * UTF-16 strings' fast ASCII steps give what a code unit at a time gives, wherever a string starts,
 * ends or leaves ASCII; a SID's text is snprintf's. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "kdecoder.h"
#include "kdecoder_int.h"
#include "kevent_mof.h"
#include "util/utf.h"

/* What kdecoder_utf16_at must give: a code unit at a time (util/utf.c), to the NUL or the end. */
static void reference(const uint8_t *p, size_t len, size_t off, char *out, size_t out_size,
                      size_t *next)
{
        size_t units = (len - off) / 2;
        size_t used = utf16le_to_utf8(p + off, units, out, out_size);
        bool has_nul = false;

        for (size_t u = 0; u < used; u++)
                has_nul |= p[off + 2 * u] == 0 && p[off + 2 * u + 1] == 0;
        *next = has_nul ? off + 2 * used : len;
}

/* Every unit that can stop a fast step, at every position of strings of 0..40 units, at even
   and odd offsets, with and without a NUL, with an odd byte at the end. */
static void test_utf16_fast_steps(void **state)
{
        (void)state;
        static const uint16_t odd[] = {0x0000, 0x0080, 0x00e9, 0x0100, 0x4e2d, 0xd83d,
                                       0xde00, 0xffff, 0x007f, 0x0001, 0x8000};
        struct kdecoder *d = kdecoder_new(true);
        unsigned calls = 0;

        assert_non_null(d);
        for (size_t nr = 0; nr <= 40; nr++) {
                for (size_t at = 0; at <= nr; at++) {
                        for (size_t k = 0; k < sizeof(odd) / sizeof(odd[0]); k++) {
                                for (unsigned shape = 0; shape < 4; shape++) {
                                        uint8_t buf[2 * 48 + 8];
                                        size_t off = shape & 1, n = off;

                                        memset(buf, 0xAA, sizeof(buf));
                                        for (size_t u = 0; u < nr; u++) {
                                                uint16_t v =
                                                        (uint16_t)(u == at ? odd[k] : 'a' + u % 26);
                                                buf[n++] = (uint8_t)v;
                                                buf[n++] = (uint8_t)(v >> 8);
                                        }
                                        if (shape & 2) {
                                                buf[n++] = 0;
                                                buf[n++] = 0;
                                                buf[n++] = 'z'; /* past the NUL: not read */
                                                buf[n++] = 0;
                                        } else if (nr % 3 == 0) {
                                                buf[n++] = 'q'; /* a lone byte at the end */
                                        }

                                        char want[256];
                                        size_t want_next, got_next;

                                        reference(buf, n, off, want, sizeof(want), &want_next);
                                        if (++calls % 256 == 0) {
                                                kdecoder_free(d);
                                                d = kdecoder_new(true); /* a fresh arena */
                                                assert_non_null(d);
                                        }
                                        const char *got =
                                                kdecoder_utf16_at(d, buf, n, off, &got_next);
                                        assert_string_equal(got, want);
                                        assert_int_equal(got_next, want_next);
                                }
                        }
                }
        }
        kdecoder_free(d);
}

/* A long ASCII path, as image and method names are: every length from 0 to 300 units. */
static void test_utf16_long_ascii(void **state)
{
        (void)state;
        uint8_t buf[2 * 301 + 2];
        char want[400];

        for (size_t nr = 0; nr <= 300; nr++) {
                struct kdecoder *d = kdecoder_new(true);
                size_t n = 0, next;

                assert_non_null(d);
                for (size_t u = 0; u < nr; u++) {
                        want[u] = (char)(u % 10 == 9 ? '\\' : 'A' + u % 26);
                        buf[n++] = (uint8_t)want[u];
                        buf[n++] = 0;
                }
                want[nr] = '\0';
                buf[n++] = 0;
                buf[n++] = 0;
                assert_string_equal(kdecoder_utf16_at(d, buf, n, 0, &next), want);
                assert_int_equal(next, n);
                kdecoder_free(d);
        }
}

static uint64_t rng_next(uint64_t *s)
{
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

/* Fills d's arena until room bytes are left (strings of ASCII, each its length and a NUL). */
static void arena_leave(struct kdecoder *d, size_t used, size_t room, uint8_t *scratch)
{
        size_t left = KEV_STR_ARENA - used;
        while (left > room) {
                size_t take = left - room > 20001 ? 20001 : left - room; /* bytes with the NUL */
                size_t n = 0, next;
                for (size_t u = 0; u + 1 < take; u++) {
                        scratch[n++] = 'x';
                        scratch[n++] = 0;
                }
                scratch[n++] = 0;
                scratch[n++] = 0;
                assert_int_equal(strlen(kdecoder_utf16_at(d, scratch, n, 0, &next)), take - 1);
                left -= take;
        }
}

/* ASCII runs between code points from 0x80 (accents, the registered sign, CJK, surrogate pairs,
   lone surrogates): the fast steps resume after each and give what a code unit at a time gives,
   with room in the arena and with 0 to 40 bytes left in it (a character that does not fit ends
   the writing for the rest of the string: none written after it, even one that would fit). */
static void test_utf16_ascii_after_non_ascii(void **state)
{
        (void)state;
        static const uint16_t wide[] = {0x00e9, 0x00ae, 0x0100, 0x4e2d, 0xffff,
                                        0xd83d, 0xde00, 0x0080, 0x07ff, 0x0800};
        static uint8_t scratch[2 * 20001 + 2];
        uint64_t s = 0x5eed;
        struct kdecoder *d = kdecoder_new(true);
        assert_non_null(d);
        assert_int_equal(d->str_cap, KEV_STR_ARENA);

        for (int round = 0; round < 3000; round++) {
                uint8_t buf[4 * 80 + 4]; /* a surrogate pair takes 4 bytes */
                size_t n = 0, nr = (size_t)(rng_next(&s) % 80);
                for (size_t u = 0; u < nr; u++) {
                        uint16_t v = (uint16_t)('A' + u % 26);
                        uint64_t r = rng_next(&s) % 16;
                        if (r == 0) { /* a surrogate pair */
                                v = 0xd83d;
                                buf[n++] = (uint8_t)v;
                                buf[n++] = (uint8_t)(v >> 8);
                                v = 0xde00;
                        } else if (r < 4) {
                                v = wide[rng_next(&s) % (sizeof(wide) / sizeof(wide[0]))];
                        }
                        buf[n++] = (uint8_t)v;
                        buf[n++] = (uint8_t)(v >> 8);
                }
                if (round % 2) {
                        buf[n++] = 0;
                        buf[n++] = 0;
                }
                size_t room = round % 3 ? 40 - (size_t)(rng_next(&s) % 41) : KEV_STR_ARENA;
                char want[3 * 160 + 8]; /* 160 units, 3 bytes each at most */
                size_t want_next, got_next;
                /* the arena with room bytes left: filled by strings in the first rounds (as
                   arena_leave does), then by its fill pointer (the same state: 3,000 rounds of
                   200 KB of strings each were most of this test's time under the sanitizer) */
                d->str_len = 0;
                if (room < KEV_STR_ARENA && round < 30)
                        arena_leave(d, 0, room, scratch);
                else if (room < KEV_STR_ARENA)
                        d->str_len = d->str_cap - room;
                reference(buf, n, 0, want, room < sizeof(want) ? room : sizeof(want), &want_next);
                const char *got = kdecoder_utf16_at(d, buf, n, 0, &got_next);
                assert_string_equal(got, room ? want : "");
                assert_int_equal(got_next, want_next);
        }
        kdecoder_free(d);
}

/* What kstr_sid must give: the SID as snprintf formats it (S-revision-authority, the authority in
   hex past 32 bits, each sub-authority in decimal). */
static void sid_reference(const uint8_t *sid, unsigned count, char *out, size_t size)
{
        uint64_t auth = 0;
        int n;

        for (int i = 2; i < 8; i++)
                auth = auth << 8 | sid[i];
        if (auth < (1ull << 32))
                n = snprintf(out, size, "S-%u-%llu", (unsigned)sid[0], (unsigned long long)auth);
        else
                n = snprintf(out, size, "S-%u-0x%012llX", (unsigned)sid[0],
                             (unsigned long long)auth);
        for (unsigned i = 0; i < count; i++) {
                uint32_t v = (uint32_t)sid[8 + 4 * i] | (uint32_t)sid[9 + 4 * i] << 8 |
                             (uint32_t)sid[10 + 4 * i] << 16 | (uint32_t)sid[11 + 4 * i] << 24;
                n += snprintf(out + n, size - (size_t)n, "-%u", v);
        }
}

/* SIDs of every sub-authority count (0-15), with the values where a digit count changes, zero,
   the largest, and authorities on both sides of 32 bits, against snprintf's text. */
static void test_sid_text(void **state)
{
        (void)state;
        static const uint32_t values[] = {0,          1,           9,           10,        99,
                                          100,        21,          500,         1000,      65535,
                                          999999999u, 1000000000u, 4294967295u, 123456789u};
        static const uint64_t auths[] = {0,
                                         5,
                                         18,
                                         4294967295ull,
                                         4294967296ull,
                                         0xFFFFFFFFFFFFull,
                                         0x0000ABCDEF012345ull & 0xFFFFFFFFFFFFull};
        struct kdecoder *d = kdecoder_new(true);
        unsigned calls = 0;

        assert_non_null(d);
        for (unsigned count = 0; count <= 15; count++) {
                for (size_t a = 0; a < sizeof(auths) / sizeof(auths[0]); a++) {
                        for (size_t k = 0; k < sizeof(values) / sizeof(values[0]); k++) {
                                uint8_t sid[8 + 4 * 15];
                                char want[256];

                                sid[0] = (uint8_t)(k % 3 ? 1 : 255);
                                sid[1] = (uint8_t)count;
                                for (int i = 0; i < 6; i++)
                                        sid[2 + i] = (uint8_t)(auths[a] >> (8 * (5 - i)));
                                for (unsigned i = 0; i < count; i++) {
                                        uint32_t v = values[(k + i) %
                                                            (sizeof(values) / sizeof(values[0]))];
                                        for (int b = 0; b < 4; b++)
                                                sid[8 + 4 * i + (unsigned)b] =
                                                        (uint8_t)(v >> (8 * b));
                                }
                                sid_reference(sid, count, want, sizeof(want));
                                if (++calls % 256 == 0) {
                                        kdecoder_free(d);
                                        d = kdecoder_new(true); /* a fresh arena */
                                        assert_non_null(d);
                                }
                                assert_string_equal(kstr_sid(d, sid, count), want);
                        }
                }
        }
        kdecoder_free(d);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_utf16_fast_steps),
                cmocka_unit_test(test_utf16_long_ascii),
                cmocka_unit_test(test_utf16_ascii_after_non_ascii),
                cmocka_unit_test(test_sid_text),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
