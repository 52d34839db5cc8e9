/* SPDX-License-Identifier: MIT */
/* test_xpress.c: cmocka tests for the MS-XCA plain LZ77 decoder in backend/etl/xpress.c. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fuzz/xpress_ref.h"
#include "xpress.h"

/* Fill out[0..len) with pattern repeated, as an overlapping LZ77 match would. */
static void fill_pattern(uint8_t *out, size_t len, const char *pattern)
{
        size_t plen = strlen(pattern);

        for (size_t i = 0; i < len; i++)
                out[i] = (uint8_t)pattern[i % plen];
}

/* Decompress in into a heap buffer of out_cap bytes and expect success with exactly want. */
static void expect_output(const uint8_t *in, size_t in_len, size_t out_cap, const uint8_t *want,
                          size_t want_len)
{
        uint8_t *out = malloc(out_cap ? out_cap : 1);
        size_t out_len = (size_t)-1;
        struct xpress_error err = {0, NULL};

        assert_non_null(out);
        int rc = xpress_decompress(in, in_len, out, out_cap, &out_len, &err);
        if (rc)
                print_error("unexpected error %d at %zu: %s\n", rc, err.in_offset,
                            err.what ? err.what : "?");
        assert_int_equal(rc, 0);
        assert_int_equal(out_len, want_len);
        assert_memory_equal(out, want, want_len);
        free(out);
}

/* Decompress in and expect failure rc reported at input offset at, with out_len bytes written. */
static void expect_error(const uint8_t *in, size_t in_len, size_t out_cap, int want_rc,
                         size_t want_at, size_t want_out_len)
{
        uint8_t *out = malloc(out_cap ? out_cap : 1);
        size_t out_len = (size_t)-1;
        struct xpress_error err = {(size_t)-1, NULL};

        assert_non_null(out);
        int rc = xpress_decompress(in, in_len, out, out_cap, &out_len, &err);
        assert_int_equal(rc, want_rc);
        assert_int_equal(err.in_offset, want_at);
        assert_non_null(err.what);
        assert_int_equal(out_len, want_out_len);
        /* err is optional: the same failure must be reported without it. */
        assert_int_equal(xpress_decompress(in, in_len, out, out_cap, &out_len, NULL), want_rc);
        free(out);
}

/* ---- well-formed streams ---- */

static void test_empty_input(void **state)
{
        (void)state;
        uint8_t out[4];
        size_t out_len = 99;

        assert_int_equal(xpress_decompress(NULL, 0, out, sizeof(out), &out_len, NULL), 0);
        assert_int_equal(out_len, 0);
        /* Zero capacity: nothing is read or written. */
        static const uint8_t in[] = {0x00, 0x00, 0x00, 0x00, 'a'};
        assert_int_equal(xpress_decompress(in, sizeof(in), NULL, 0, &out_len, NULL), 0);
        assert_int_equal(out_len, 0);
}

static void test_literals_only(void **state)
{
        (void)state;
        /* All-zero flag word: 12 literals, then the input ends mid flag group. */
        static const uint8_t in[] = {0x00, 0x00, 0x00, 0x00, 'H', 'e', 'l', 'l',
                                     'o',  ',',  ' ',  'w',  'o', 'r', 'l', 'd'};
        expect_output(in, sizeof(in), 64, (const uint8_t *)"Hello, world", 12);
        /* Exact capacity, and a smaller one: decoding stops once out_cap bytes exist. */
        expect_output(in, sizeof(in), 12, (const uint8_t *)"Hello, world", 12);
        expect_output(in, sizeof(in), 5, (const uint8_t *)"Hello", 5);
}

static void test_literals_terminated(void **state)
{
        (void)state;
        /* MS-XCA 2.3 end marker: unused flag bits are 1 and the input ends at a match flag. */
        static const uint8_t in[] = {0xff, 0xff, 0x00, 0x00, 'a', 'b', 'c', 'd', 'e', 'f',
                                     'g',  'h',  'i',  'j',  'k', 'l', 'm', 'n', 'o', 'p'};
        expect_output(in, sizeof(in), 64, (const uint8_t *)"abcdefghijklmnop", 16);
}

static void test_literals_two_flag_words(void **state)
{
        (void)state;
        /* 32 literals use up the first flag word; a second word covers 8 more. */
        uint8_t in[4 + 32 + 4 + 8];
        uint8_t want[40];
        size_t n = 0;

        memset(in, 0, 4);
        n = 4;
        for (int i = 0; i < 32; i++)
                in[n++] = want[i] = (uint8_t)('A' + i);
        memset(in + n, 0, 4);
        n += 4;
        for (int i = 32; i < 40; i++)
                in[n++] = want[i] = (uint8_t)('A' + i);
        assert_int_equal(n, sizeof(in));
        expect_output(in, sizeof(in), 100, want, sizeof(want));
}

static void test_short_match(void **state)
{
        (void)state;
        /* "abcdef" + match offset 6 length 4: token (6-1)<<3 | (4-3) = 0x29. */
        static const uint8_t in[] = {0xff, 0xff, 0xff, 0x03, 'a',  'b',
                                     'c',  'd',  'e',  'f',  0x29, 0x00};
        expect_output(in, sizeof(in), 64, (const uint8_t *)"abcdefabcd", 10);
        /* Longest 3-bit length: 9 = 3 + 6, token (6-1)<<3 | 6 = 0x2e. */
        static const uint8_t in9[] = {0xff, 0xff, 0xff, 0x03, 'a',  'b',
                                      'c',  'd',  'e',  'f',  0x2e, 0x00};
        expect_output(in9, sizeof(in9), 64, (const uint8_t *)"abcdefabcdefabc", 15);
        /* Literals after a match within the same flag group: flags 000000 1 00 then 1s. */
        static const uint8_t mixed[] = {0xff, 0xff, 0x7f, 0x02, 'a',  'b', 'c',
                                        'd',  'e',  'f',  0x29, 0x00, 'X', 'Y'};
        expect_output(mixed, sizeof(mixed), 64, (const uint8_t *)"abcdefabcdXY", 12);
}

static void test_overlapping_run(void **state)
{
        (void)state;
        /* "abc" + match offset 3 length 30: token 0x17 (offset 3, length escape 7), nibble 15,
         * byte 5: 3 + 7 + 15 + 5 = 30. Flags 0001 then 1s. */
        static const uint8_t in[] = {0xff, 0xff, 0xff, 0x1f, 'a', 'b', 'c', 0x17, 0x00, 0x0f, 0x05};
        uint8_t want[33];

        fill_pattern(want, sizeof(want), "abc");
        expect_output(in, sizeof(in), 64, want, sizeof(want));
        expect_output(in, sizeof(in), sizeof(want), want, sizeof(want));

        /* Offset 1 run: "z" + length 10 (nibble 0). */
        static const uint8_t run1[] = {0xff, 0xff, 0xff, 0x7f, 'z', 0x07, 0x00, 0x00};
        expect_output(run1, sizeof(run1), 64, (const uint8_t *)"zzzzzzzzzzz", 11);
}

static void test_length_nibble(void **state)
{
        (void)state;
        /* "abcd" + match offset 4 length 20: token 0x1f, nibble 10 -> 3 + 7 + 10. */
        static const uint8_t in[] = {0xff, 0xff, 0xff, 0x0f, 'a', 'b', 'c', 'd', 0x1f, 0x00, 0x0a};
        uint8_t want[24];

        fill_pattern(want, sizeof(want), "abcd");
        expect_output(in, sizeof(in), 64, want, sizeof(want));

        /* Largest nibble length: 14 -> 24. */
        static const uint8_t in24[] = {0xff, 0xff, 0xff, 0x0f, 'a', 'b',
                                       'c',  'd',  0x1f, 0x00, 0x0e};
        uint8_t want28[28];
        fill_pattern(want28, sizeof(want28), "abcd");
        expect_output(in24, sizeof(in24), 64, want28, sizeof(want28));
}

static void test_length_byte(void **state)
{
        (void)state;
        /* "x" + offset 1 length 100: nibble 15, byte 75 -> 3 + 7 + 15 + 75. */
        static const uint8_t in[] = {0xff, 0xff, 0xff, 0x7f, 'x', 0x07, 0x00, 0x0f, 75};
        uint8_t want[101];

        memset(want, 'x', sizeof(want));
        expect_output(in, sizeof(in), 200, want, sizeof(want));

        /* Largest byte form: 254 -> 279. */
        static const uint8_t in279[] = {0xff, 0xff, 0xff, 0x7f, 'x', 0x07, 0x00, 0x0f, 254};
        uint8_t want280[280];
        memset(want280, 'x', sizeof(want280));
        expect_output(in279, sizeof(in279), 300, want280, sizeof(want280));
}

static void test_length_u16(void **state)
{
        (void)state;
        /* "x" + offset 1 length 1000: byte 255, u16 997 (= length - 3). */
        static const uint8_t in[] = {0xff, 0xff, 0xff, 0x7f, 'x', 0x07,
                                     0x00, 0x0f, 0xff, 0xe5, 0x03};
        uint8_t want[1001];

        memset(want, 'x', sizeof(want));
        expect_output(in, sizeof(in), 2000, want, sizeof(want));

        /* Smallest legal u16 value 22 -> length 25; largest 0xffff -> 65538. */
        static const uint8_t in25[] = {0xff, 0xff, 0xff, 0x7f, 'x', 0x07,
                                       0x00, 0x0f, 0xff, 22,   0x00};
        expect_output(in25, sizeof(in25), 100, want, 26);

        static const uint8_t inmax[] = {0xff, 0xff, 0xff, 0x7f, 'x', 0x07,
                                        0x00, 0x0f, 0xff, 0xff, 0xff};
        uint8_t *big = malloc(65539);
        assert_non_null(big);
        memset(big, 'x', 65539);
        expect_output(inmax, sizeof(inmax), 65539, big, 65539);
        free(big);
}

static void test_length_u32(void **state)
{
        (void)state;
        /* "x" + offset 1 length 70000: byte 255, u16 0, u32 69997 (= length - 3). Then a literal
         * 'y' in the same flag group (flags 0 1 0 then 1s). */
        static const uint8_t in[] = {0xff, 0xff, 0xff, 0x5f, 'x',  0x07, 0x00, 0x0f,
                                     0xff, 0x00, 0x00, 0x6d, 0x11, 0x01, 0x00, 'y'};
        const size_t n = 70002;
        uint8_t *want = malloc(n);

        assert_non_null(want);
        memset(want, 'x', n - 1);
        want[n - 1] = 'y';
        expect_output(in, sizeof(in), n + 100, want, n);
        free(want);
}

static void test_shared_nibble(void **state)
{
        (void)state;
        /* "abcd" + three offset-4 matches with length escape 7: the first reads byte 0x52 and
         * uses its low nibble (12 = 3 + 7 + 2), the second takes the high nibble (15 = 3 + 7 +
         * 5) without consuming input, the third reads a fresh byte (13 = 3 + 7 + 3). */
        static const uint8_t in[] = {0xff, 0xff, 0xff, 0x0f, 'a',  'b',  'c',  'd',
                                     0x1f, 0x00, 0x52, 0x1f, 0x00, 0x1f, 0x00, 0x03};
        uint8_t want[4 + 12 + 15 + 13];

        fill_pattern(want, sizeof(want), "abcd");
        expect_output(in, sizeof(in), 100, want, sizeof(want));

        /* The shared high nibble is 15: its extension byte (5) follows the second token, not the
         * nibble byte. Lengths 10 (nibble 0) and 30 (3 + 7 + 15 + 5). */
        static const uint8_t in2[] = {0xff, 0xff, 0xff, 0x0f, 'a',  'b',  'c',
                                      'd',  0x1f, 0x00, 0xf0, 0x1f, 0x00, 0x05};
        uint8_t want2[4 + 10 + 30];

        fill_pattern(want2, sizeof(want2), "abcd");
        expect_output(in2, sizeof(in2), 100, want2, sizeof(want2));

        /* A short match between the two escapes leaves the pending nibble alone. */
        static const uint8_t in3[] = {0xff, 0xff, 0xff, 0x0f, 'a',  'b',  'c', 'd',
                                      0x1f, 0x00, 0x21, 0x18, 0x00, 0x1f, 0x00};
        uint8_t want3[4 + 11 + 3 + 12];

        fill_pattern(want3, sizeof(want3), "abcd");
        expect_output(in3, sizeof(in3), 100, want3, sizeof(want3));
}

static void test_stops_at_capacity(void **state)
{
        (void)state;
        /* A match that ends exactly at out_cap succeeds; later input is never looked at, even
         * if it would be corrupt (here: a truncated token). */
        static const uint8_t in[] = {0xff, 0xff, 0xff, 0x7f, 'x', 0x07, 0x00, 0x00, 0x09};
        expect_output(in, sizeof(in), 11, (const uint8_t *)"xxxxxxxxxxx", 11);
}

static void test_null_out_len(void **state)
{
        (void)state;
        static const uint8_t in[] = {0x00, 0x00, 0x00, 0x00, 'q'};
        uint8_t out[4];

        assert_int_equal(xpress_decompress(in, sizeof(in), out, sizeof(out), NULL, NULL), 0);
        assert_int_equal(out[0], 'q');
}

/* ---- corrupt streams ---- */

static void test_offset_before_start(void **state)
{
        (void)state;
        /* "a" + match offset 2: only 1 byte of output exists. Token at input offset 5. */
        static const uint8_t in[] = {0xff, 0xff, 0xff, 0x7f, 'a', 0x08, 0x00};
        expect_error(in, sizeof(in), 64, -EINVAL, 5, 1);
        /* A match as the very first element. */
        static const uint8_t first[] = {0xff, 0xff, 0xff, 0xff, 0x00, 0x00};
        expect_error(first, sizeof(first), 64, -EINVAL, 4, 0);
        /* Largest offset (8192) with a small history. */
        static const uint8_t far[] = {0xff, 0xff, 0xff, 0x7f, 'a', 0xf8, 0xff};
        expect_error(far, sizeof(far), 64, -EINVAL, 5, 1);
}

static void test_truncated_flags(void **state)
{
        (void)state;
        static const uint8_t in[] = {0x00, 0x00, 0x00};
        expect_error(in, sizeof(in), 64, -EINVAL, 0, 0);

        /* 32 literals, then only 2 bytes of the next flag word. */
        uint8_t in2[4 + 32 + 2];
        memset(in2, 0, sizeof(in2));
        memset(in2 + 4, 'k', 32);
        expect_error(in2, sizeof(in2), 64, -EINVAL, 36, 32);
}

static void test_truncated_token(void **state)
{
        (void)state;
        static const uint8_t in[] = {0xff, 0xff, 0xff, 0x7f, 'a', 0x00};
        expect_error(in, sizeof(in), 64, -EINVAL, 5, 1);
}

static void test_truncated_length(void **state)
{
        (void)state;
        /* Each extended length form cut short; in_offset is where the missing field starts. */
        static const uint8_t nibble[] = {0xff, 0xff, 0xff, 0x7f, 'x', 0x07, 0x00};
        expect_error(nibble, sizeof(nibble), 1 << 20, -EINVAL, 7, 1);

        static const uint8_t byte[] = {0xff, 0xff, 0xff, 0x7f, 'x', 0x07, 0x00, 0x0f};
        expect_error(byte, sizeof(byte), 1 << 20, -EINVAL, 8, 1);

        /* Shared high nibble 15 but no extension byte after the second token. */
        static const uint8_t shared[] = {0xff, 0xff, 0xff, 0x7f, 'x', 0x07, 0x00, 0xf0, 0x07, 0x00};
        expect_error(shared, sizeof(shared), 1 << 20, -EINVAL, 10, 11);

        static const uint8_t u16[] = {0xff, 0xff, 0xff, 0x7f, 'x', 0x07, 0x00, 0x0f, 0xff, 0x01};
        expect_error(u16, sizeof(u16), 1 << 20, -EINVAL, 9, 1);

        static const uint8_t u32[] = {0xff, 0xff, 0xff, 0x7f, 'x',  0x07, 0x00,
                                      0x0f, 0xff, 0x00, 0x00, 0x01, 0x02, 0x03};
        expect_error(u32, sizeof(u32), 1 << 20, -EINVAL, 11, 1);
}

static void test_wide_length_too_small(void **state)
{
        (void)state;
        /* MS-XCA 2.4.4: a u16/u32 length below 15 + 7 is an error (it would underflow). */
        static const uint8_t u16[] = {0xff, 0xff, 0xff, 0x7f, 'x', 0x07,
                                      0x00, 0x0f, 0xff, 21,   0x00};
        expect_error(u16, sizeof(u16), 1 << 20, -EINVAL, 5, 1);

        static const uint8_t u32[] = {0xff, 0xff, 0xff, 0x7f, 'x',  0x07, 0x00, 0x0f,
                                      0xff, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00};
        expect_error(u32, sizeof(u32), 1 << 20, -EINVAL, 5, 1);
}

static void test_output_overflow(void **state)
{
        (void)state;
        /* "x" + length 100 into a 50-byte buffer. */
        static const uint8_t in[] = {0xff, 0xff, 0xff, 0x7f, 'x', 0x07, 0x00, 0x0f, 75};
        expect_error(in, sizeof(in), 50, -ENOSPC, 5, 1);
        /* Just one byte short. */
        expect_error(in, sizeof(in), 100, -ENOSPC, 5, 1);

        /* Maximum u32 length (0xffffffff + 3 does not fit 32 bits) must not wrap around. */
        static const uint8_t huge[] = {0xff, 0xff, 0xff, 0x7f, 'x',  0x07, 0x00, 0x0f,
                                       0xff, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff};
        expect_error(huge, sizeof(huge), 1 << 20, -ENOSPC, 5, 1);
}

/* ---- generated streams against the reference decoder (tests/fuzz/xpress_ref.h) ---- */

/* A stream writer: flag groups, literals and matches with every length form and the shared
   length nibble, as an MS-XCA compressor lays them out. */
struct xw {
        uint8_t *buf;
        size_t n, cap;
        size_t flag_pos;   /* where the open group's flag word goes */
        unsigned nr_flags; /* elements in the open group */
        bool is_open;
        uint32_t flags;
        size_t half_pos; /* a length byte whose high nibble is free */
        bool is_half_pending;
        size_t out_len; /* what the stream decodes to so far */
};

static void xw_put(struct xw *w, uint8_t b)
{
        if (w->n == w->cap) {
                w->cap = w->cap ? 2 * w->cap : 4096;
                w->buf = realloc(w->buf, w->cap);
                assert_non_null(w->buf);
        }
        w->buf[w->n++] = b;
}

/* Writes the open group's flag word, if a group is open. */
static void xw_close_group(struct xw *w)
{
        if (!w->is_open)
                return;
        w->is_open = false;
        for (unsigned i = 0; i < 4; i++)
                w->buf[w->flag_pos + i] = (uint8_t)(w->flags >> (8 * i));
}

/* Opens a group (its flag word reserved before the element's bytes) when none is open. */
static void xw_open_group(struct xw *w)
{
        if (w->is_open)
                return;
        w->is_open = true;
        w->flag_pos = w->n;
        for (int i = 0; i < 4; i++)
                xw_put(w, 0);
        w->nr_flags = 0;
        w->flags = 0;
}

static void xw_literal(struct xw *w, uint8_t b)
{
        xw_open_group(w);
        xw_put(w, b);
        if (++w->nr_flags == 32)
                xw_close_group(w);
        w->out_len++;
}

/* A match of len (>= 3) bytes dist (>= 1) back; dist past the output makes a corrupt stream. */
static void xw_match(struct xw *w, size_t dist, uint64_t len)
{
        xw_open_group(w);
        w->flags |= 1u << (31 - w->nr_flags);
        uint64_t l = len - 3;
        uint16_t token = (uint16_t)((dist - 1) << 3 | (l < 7 ? l : 7));
        xw_put(w, (uint8_t)token);
        xw_put(w, (uint8_t)(token >> 8));
        if (l >= 7) {
                uint64_t l2 = l - 7;
                unsigned nibble = l2 < 15 ? (unsigned)l2 : 15;
                if (w->is_half_pending) {
                        w->buf[w->half_pos] |= (uint8_t)(nibble << 4);
                        w->is_half_pending = false;
                } else {
                        w->half_pos = w->n;
                        xw_put(w, (uint8_t)nibble);
                        w->is_half_pending = true;
                }
                if (l2 >= 15) {
                        uint64_t l3 = l2 - 15;
                        if (l3 < 255) {
                                xw_put(w, (uint8_t)l3);
                        } else {
                                xw_put(w, 255);
                                if (l < 65536) {
                                        xw_put(w, (uint8_t)l);
                                        xw_put(w, (uint8_t)(l >> 8));
                                } else {
                                        xw_put(w, 0);
                                        xw_put(w, 0);
                                        for (int i = 0; i < 4; i++)
                                                xw_put(w, (uint8_t)(l >> (8 * i)));
                                }
                        }
                }
        }
        if (++w->nr_flags == 32)
                xw_close_group(w);
        w->out_len += (size_t)len;
}

static uint64_t rng_next(uint64_t *s)
{
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

/* xpress_decompress() and the reference on the same input: the same result, length, error
   offset and bytes. out has a canary past out_cap that must stay untouched. */
static void expect_as_reference(const uint8_t *in, size_t in_len, size_t out_cap)
{
        uint8_t *out = malloc(out_cap + 64);
        uint8_t *want = malloc(out_cap + 1);
        size_t out_len = (size_t)-1, want_len = (size_t)-1, want_at = (size_t)-1;
        struct xpress_error err = {(size_t)-1, NULL};

        assert_non_null(out);
        assert_non_null(want);
        memset(out + out_cap, 0xA5, 64);
        int want_rc = xpress_ref_decompress(in, in_len, want, out_cap, &want_len, &want_at);
        /* the loops chosen for this CPU, then the build target's (xpress.h) */
        for (int generic = 0; generic < 2; generic++) {
                memset(out + out_cap, 0xA5, 64);
                int rc = generic ? xpress_decompress_generic(in, in_len, out, out_cap, &out_len,
                                                             &err)
                                 : xpress_decompress(in, in_len, out, out_cap, &out_len, &err);
                if (rc != want_rc || out_len != want_len)
                        print_error("in_len %zu out_cap %zu generic %d: rc %d (want %d), out_len "
                                    "%zu (want %zu)\n",
                                    in_len, out_cap, generic, rc, want_rc, out_len, want_len);
                assert_int_equal(rc, want_rc);
                assert_int_equal(out_len, want_len);
                if (rc)
                        assert_int_equal(err.in_offset, want_at);
                assert_memory_equal(out, want, want_len);
                for (size_t i = 0; i < 64; i++)
                        assert_int_equal(out[out_cap + i], 0xA5);
        }
        free(out);
        free(want);
}

/* A match length as streams have them: mostly short, some in every escape form. */
static uint64_t pick_len(uint64_t *s)
{
        uint64_t r = rng_next(s) % 100;

        if (r < 55)
                return 3 + rng_next(s) % 7; /* in the token */
        if (r < 75)
                return 10 + rng_next(s) % 15; /* the nibble */
        if (r < 88)
                return 25 + rng_next(s) % 40; /* the byte, around the fast copy's 48 */
        if (r < 97)
                return 65 + rng_next(s) % 400; /* the byte and u16 forms */
        if (r < 99)
                return 277 + rng_next(s) % 5000;
        return 65539 + rng_next(s) % 3; /* the u32 form */
}

/* Streams of literals, short, long and overlapping matches (distances 1 to 20 often), decoded
   into exactly their size, less, more, and from truncated input: the fast loops give what the
   byte-at-a-time reference gives, including where a stream fails. */
static void test_generated_streams(void **state)
{
        (void)state;
        uint64_t s = 0x9e3779b97f4a7c15ull;

        for (int round = 0; round < 400; round++) {
                struct xw w = {0};
                size_t target = 1 + rng_next(&s) % (round < 300 ? 70000 : 600);
                unsigned lit_pct = (unsigned)(rng_next(&s) % 90);
                bool is_corrupt = round % 17 == 5;

                while (w.out_len < target) {
                        if (w.out_len == 0 || rng_next(&s) % 100 < lit_pct) {
                                xw_literal(&w, (uint8_t)(rng_next(&s) % 7 + 'a'));
                                continue;
                        }
                        size_t max_dist = w.out_len < 8192 ? w.out_len : 8192;
                        size_t dist = rng_next(&s) % 3
                                              ? 1 + rng_next(&s) % (max_dist < 20 ? max_dist : 20)
                                              : 1 + rng_next(&s) % max_dist;
                        if (is_corrupt && rng_next(&s) % 200 == 0)
                                dist = w.out_len + 1 + rng_next(&s) % 8;
                        if (dist > 8192)
                                dist = 8192;
                        xw_match(&w, dist, pick_len(&s));
                }
                xw_close_group(&w);
                size_t total = w.out_len;
                expect_as_reference(w.buf, w.n, total);
                expect_as_reference(w.buf, w.n, total + 1 + rng_next(&s) % 100);
                expect_as_reference(w.buf, w.n, rng_next(&s) % (total + 1));
                expect_as_reference(w.buf, rng_next(&s) % (w.n + 1), total);
                free(w.buf);
        }
}

/* Every overlapping distance (1 to 24) with lengths 3 to 130, once far from the output's end
   and once ending exactly at out_cap, after a run of distinct bytes. */
static void test_overlap_sweep(void **state)
{
        (void)state;
        for (size_t dist = 1; dist <= 24; dist++) {
                for (uint64_t len = 3; len <= 130; len++) {
                        struct xw w = {0};
                        for (int i = 0; i < 40; i++)
                                xw_literal(&w, (uint8_t)('A' + i));
                        xw_match(&w, dist, len);
                        size_t end = w.out_len;
                        for (int i = 0; i < 300; i++)
                                xw_literal(&w, (uint8_t)i);
                        xw_close_group(&w);
                        expect_as_reference(w.buf, w.n, w.out_len);
                        expect_as_reference(w.buf, w.n, end);
                        free(w.buf);
                }
        }
}

/* The same inside a long stream, where the group loop decodes (more than a group's margins of
   input and output on either side): every distance 1 to 32 and 64, lengths 3 to 130, at each
   place of a flag group (the match's flag after 0 to 31 literals), the output before it
   distinct bytes; then ending at out_cap after that long output, and the stream's last match
   reaching the end of the output, so that the loops hand over mid group. */
static void test_overlap_sweep_group_loop(void **state)
{
        (void)state;
        uint64_t s = 77;
        for (size_t dist = 1; dist <= 64; dist++) {
                if (dist > 32 && dist != 64)
                        continue;
                for (uint64_t len = 3; len <= 130; len++) {
                        struct xw w = {0};
                        unsigned lead = (unsigned)(rng_next(&s) % 32);
                        /* 4,000 bytes of literals and far matches: the group loop's ground */
                        while (w.out_len < 4000 + lead) {
                                if (w.out_len > 100 && rng_next(&s) % 4 == 0)
                                        xw_match(&w, 50 + rng_next(&s) % 50, 3 + rng_next(&s) % 20);
                                else
                                        xw_literal(&w, (uint8_t)rng_next(&s));
                        }
                        xw_match(&w, dist, len);
                        xw_literal(&w, 'z');
                        xw_match(&w, dist, len); /* again, right after a one-byte run */
                        xw_match(&w, dist, len); /* and after none */
                        size_t end = w.out_len;
                        for (int i = 0; i < 3000; i++)
                                xw_literal(&w, (uint8_t)(i * 7));
                        xw_match(&w, dist, len); /* the last element, at the output's end */
                        xw_close_group(&w);
                        expect_as_reference(w.buf, w.n, w.out_len);
                        expect_as_reference(w.buf, w.n, end);
                        expect_as_reference(w.buf, w.n, w.out_len - 1);
                        free(w.buf);
                }
        }
}

/* The hand-overs between the loops at every position: one stream of far and near matches in
   every length form and literal runs across flag words, decoded into every capacity from a
   flag group's output margin (and more) below its size up to it, and from its input cut at
   every length over the last group's input margin: the group loop gives way to the fast loop,
   and the fast loop to the careful one, before each element, mid group and mid match (a match
   reaching the output's end), with the same result as the reference. */
static void test_loop_handover_sweep(void **state)
{
        (void)state;
        uint64_t s = 4242;
        struct xw w = {0};

        while (w.out_len < 12000) {
                uint64_t r = rng_next(&s) % 100;
                if (w.out_len < 16 || r < 40) {
                        size_t run = 1 + rng_next(&s) % (r < 5 ? 70 : 4);
                        for (size_t i = 0; i < run; i++)
                                xw_literal(&w, (uint8_t)rng_next(&s));
                        continue;
                }
                size_t max_dist = w.out_len < 8192 ? w.out_len : 8192;
                size_t dist = r < 60 ? 1 + rng_next(&s) % (max_dist < 20 ? max_dist : 20)
                                     : 1 + rng_next(&s) % max_dist;
                xw_match(&w, dist, r < 97 ? pick_len(&s) % 200 + 3 : pick_len(&s));
        }
        xw_close_group(&w);
        size_t total = w.out_len;
        for (size_t cap = total - 1800; cap <= total + 40; cap++)
                expect_as_reference(w.buf, w.n, cap);
        for (size_t n = w.n - 500; n <= w.n; n++)
                expect_as_reference(w.buf, n, total);
        free(w.buf);
}

/* Random bytes, as the fuzz target feeds them. */
static void test_random_bytes(void **state)
{
        (void)state;
        uint64_t s = 12345;
        uint8_t in[4096];

        for (int round = 0; round < 3000; round++) {
                size_t n = rng_next(&s) % sizeof(in);
                for (size_t i = 0; i < n; i++)
                        in[i] = (uint8_t)rng_next(&s);
                /* a first group of literals, so that matches have output to reach back to */
                if (n >= 4 && round % 2)
                        in[0] = in[1] = in[2] = in[3] = 0;
                expect_as_reference(in, n, 1 + rng_next(&s) % 70000);
        }
}

/* ---- real .etl data ---- */

/* ETL-FORMAT.md 1.2/1.5, WMI_BUFFER_HEADER: the fields this test needs. */
#define ETL_BUF_HDR_SIZE        0x48u
#define ETL_BUF_SIZE_OFF        0x00u
#define ETL_BUF_FILLED_OFF      0x30u
#define ETL_BUF_FLAG_OFF        0x34u
#define ETL_BUF_FLAG_COMPRESSED 0x0040u
#define ETL_RECORD_MARKER_TOP   0xc0u
#define ETL_SAMPLE_COMPRESSED   "perfview_SelfDescribingSingleEvent.etl"

static uint32_t le32_at(const uint8_t *p)
{
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Read a whole file into a heap buffer; NULL if it cannot be opened. */
static uint8_t *read_file(const char *path, size_t *len)
{
        FILE *f = fopen(path, "rb");
        uint8_t *buf = NULL;
        size_t cap = 0, n = 0;

        if (!f)
                return NULL;
        for (;;) {
                if (n == cap) {
                        cap = cap ? cap * 2 : 65536;
                        uint8_t *nb = realloc(buf, cap);
                        assert_non_null(nb);
                        buf = nb;
                }
                size_t got = fread(buf + n, 1, cap - n, f);
                n += got;
                if (got == 0)
                        break;
        }
        assert_int_equal(ferror(f), 0);
        fclose(f);
        *len = n;
        return buf;
}

static void test_etl_sample(void **state)
{
        (void)state;
        const char *dir = getenv("ETWTOP_SAMPLES");
        char path[4096];
        size_t len = 0;

        if (!dir || !*dir) {
                print_message("skipping: ETWTOP_SAMPLES is not set\n");
                skip();
        }
        snprintf(path, sizeof(path), "%s/%s", dir, ETL_SAMPLE_COMPRESSED);
        uint8_t *file = read_file(path, &len);
        if (!file) {
                print_message("skipping: cannot open %s\n", path);
                skip();
        }

        size_t off = 0;
        unsigned buffers = 0, compressed = 0;
        while (len - off >= ETL_BUF_HDR_SIZE) {
                const uint8_t *hdr = file + off;
                uint32_t buf_size = le32_at(hdr + ETL_BUF_SIZE_OFF);
                uint32_t filled = le32_at(hdr + ETL_BUF_FILLED_OFF);
                uint16_t flag = (uint16_t)(hdr[ETL_BUF_FLAG_OFF] | hdr[ETL_BUF_FLAG_OFF + 1] << 8);

                assert_true(buf_size >= ETL_BUF_HDR_SIZE);
                assert_true(buf_size <= len - off);
                if (buffers == 0)
                        assert_false(flag & ETL_BUF_FLAG_COMPRESSED);
                if (flag & ETL_BUF_FLAG_COMPRESSED) {
                        assert_true(filled > ETL_BUF_HDR_SIZE);
                        const size_t want = filled - ETL_BUF_HDR_SIZE;
                        const uint8_t *in = hdr + ETL_BUF_HDR_SIZE;
                        const size_t in_len = buf_size - ETL_BUF_HDR_SIZE;
                        struct xpress_error err = {0, NULL};
                        size_t out_len = 0;

                        /* Extra capacity: the stream itself must end at the filled size. */
                        uint8_t *out = malloc(want + 4096);
                        assert_non_null(out);
                        int rc = xpress_decompress(in, in_len, out, want + 4096, &out_len, &err);
                        if (rc)
                                print_error("buffer at 0x%zx: error %d at %zu: %s\n", off, rc,
                                            err.in_offset, err.what);
                        assert_int_equal(rc, 0);
                        assert_int_equal(out_len, want);
                        assert_true(out_len >= 4);
                        assert_int_equal(out[3], ETL_RECORD_MARKER_TOP);

                        /* Exact capacity gives the same bytes. */
                        uint8_t *exact = malloc(want);
                        assert_non_null(exact);
                        assert_int_equal(xpress_decompress(in, in_len, exact, want, &out_len, NULL),
                                         0);
                        assert_int_equal(out_len, want);
                        assert_memory_equal(exact, out, want);
                        free(exact);
                        free(out);
                        compressed++;
                }
                buffers++;
                off += buf_size;
        }
        assert_int_equal(off, len);
        assert_true(compressed > 0);
        print_message("%s: %u buffers, %u compressed, all decoded\n", ETL_SAMPLE_COMPRESSED,
                      buffers, compressed);
        free(file);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_empty_input),
                cmocka_unit_test(test_literals_only),
                cmocka_unit_test(test_literals_terminated),
                cmocka_unit_test(test_literals_two_flag_words),
                cmocka_unit_test(test_short_match),
                cmocka_unit_test(test_overlapping_run),
                cmocka_unit_test(test_length_nibble),
                cmocka_unit_test(test_length_byte),
                cmocka_unit_test(test_length_u16),
                cmocka_unit_test(test_length_u32),
                cmocka_unit_test(test_shared_nibble),
                cmocka_unit_test(test_stops_at_capacity),
                cmocka_unit_test(test_null_out_len),
                cmocka_unit_test(test_offset_before_start),
                cmocka_unit_test(test_truncated_flags),
                cmocka_unit_test(test_truncated_token),
                cmocka_unit_test(test_truncated_length),
                cmocka_unit_test(test_wide_length_too_small),
                cmocka_unit_test(test_output_overflow),
                cmocka_unit_test(test_generated_streams),
                cmocka_unit_test(test_overlap_sweep),
                cmocka_unit_test(test_overlap_sweep_group_loop),
                cmocka_unit_test(test_loop_handover_sweep),
                cmocka_unit_test(test_random_bytes),
                cmocka_unit_test(test_etl_sample),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
