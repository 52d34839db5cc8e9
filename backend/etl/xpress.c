/* SPDX-License-Identifier: MIT */
/* xpress.c: owns decoding of MS-XCA plain LZ77 streams, the codec of compressed .etl buffers. */
#include "xpress.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

/* MS-XCA 2.4.4: each flag group is one little-endian 32-bit word, consumed from its top bit. */
#define XPRESS_FLAG_BYTES 4u
#define XPRESS_FLAG_BITS  32u
/* MS-XCA 2.4.4: a match token is 2 bytes, low 3 bits length, high 13 bits offset - 1. */
#define XPRESS_TOKEN_BYTES     2u
#define XPRESS_TOKEN_LEN_MASK  7u
#define XPRESS_TOKEN_LEN_SHIFT 3u
/* MS-XCA 2.4.4: length escapes: 3-bit 7 -> nibble, nibble 15 -> byte, byte 255 -> u16 (u16 0 ->
 * u32); the u16/u32 forms carry the whole length minus 3, so they may not be below 15 + 7. */
#define XPRESS_LEN_TOKEN_ESCAPE  7u
#define XPRESS_LEN_NIBBLE_ESCAPE 15u
#define XPRESS_LEN_BYTE_ESCAPE   255u
#define XPRESS_LEN_WIDE_MIN      (15u + 7u)
/* The shared nibble's state (see escaped_len): this bit and the kept nibble, or 0 for none. */
#define XPRESS_HALF_PENDING 0x10u
/* Margins of the fast loop (see xpress_decompress). */
#define XPRESS_FAST_IN  64u
#define XPRESS_FAST_OUT 96u
/* Longest match the fast loop copies without a bounds check; its chunk copies write at most
 * this many bytes. It may follow a literal run (32 bytes written) in the same iteration. */
#define XPRESS_FAST_LEN 48u
_Static_assert(XPRESS_FAST_OUT > 32u + XPRESS_FAST_LEN, "fast loop output margin too small");
/* Margins of the group loop (see xpress_decompress): a whole flag group of 32 elements fits
 * without a check. Input: the flag word, 32 matches of at most 10 bytes (token, nibble byte,
 * byte, u16, u32) and the literal run's 32-byte read; output: 32 short matches and the literal
 * run's 32-byte write past them (a run of 0 after the group's last match included). */
#define XPRESS_GROUP_IN  (XPRESS_FLAG_BYTES + 32u * 10u + 32u)
#define XPRESS_GROUP_OUT (32u * XPRESS_FAST_LEN + 32u)
/* Flag bits of the fast loops: a group's flags bit-reversed (the next one at bit 0), the
 * sentinel above them, and what is left once they are used up. */
#define XPRESS_FLAGS_SENTINEL ((uint64_t)1 << XPRESS_FLAG_BITS)
#define XPRESS_FLAGS_EMPTY    ((uint64_t)1)
/* MS-XCA 2.4.4: the shortest match copies 3 bytes. */
#define XPRESS_MIN_MATCH 3u

static uint16_t get_le16(const uint8_t *p)
{
        return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}

static uint32_t get_le32(const uint8_t *p)
{
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* x's bits in reverse order: the fast loops take a group's flags from bit 0 up, so that the
 * length of a literal run is a count of trailing zeros, which compilers emit as tzcnt (`rep
 * bsf`: 1 cycle where BMI1 is there, and the same result where it is not) where a count of
 * leading zeros is `bsr` (4 cycles on AMD's Zen) unless the build targets LZCNT. */
static inline uint32_t reverse_bits32(uint32_t x)
{
        x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
        x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
        x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
        return __builtin_bswap32(x);
}

/* Record the failure point for the caller and return the negative errno. */
static int fail(struct xpress_error *err, int rc, size_t in_offset, const char *what)
{
        if (err) {
                err->in_offset = in_offset;
                err->what = what;
        }
        return rc;
}

/* Copy a match of len bytes starting dist bytes back; the caller has checked both bounds. The
 * result must equal MS-XCA's forward byte-by-byte copy, so overlapping matches (dist < len)
 * replicate the last dist bytes: dist 1 is a byte fill, other overlaps go byte by byte. */
static void copy_match(uint8_t *dst, size_t dist, size_t len)
{
        const uint8_t *src = dst - dist;

        if (dist >= len) {
                memcpy(dst, src, len);
        } else if (dist == 1) {
                memset(dst, *src, len);
        } else {
                for (size_t i = 0; i < len; i++)
                        dst[i] = src[i];
        }
}

/* The length of a match whose token has the escape 7, MS-XCA 2.4.4, read from in + *ip on (the
 * nibble, the byte, the u16 and u32 forms): the whole length, 3 included, or 0 for a wide length
 * below 22. The nibble is the low half of a new byte, whose high half is kept in *half for the
 * next escape (XPRESS_HALF_PENDING | nibble), or that kept half. No bounds checks: the fast
 * loops' input margins hold the 10 bytes it may read (the byte at *ip is read in either case). */
static inline uint64_t escaped_len(const uint8_t *in, size_t *ip, unsigned *half)
{
        uint64_t len;
        const unsigned h = *half;
        const unsigned is_pending = h >> 4;
        const unsigned b = in[*ip];

        /* The kept half or the new byte's low half chosen by a mask, not a branch: the escapes
           take the two in turn, which gcc's branch left to the predictor. */
        const unsigned keep = 0u - is_pending;
        len = ((h & keep) | (b & ~keep)) & 0x0fu;
        *half = (XPRESS_HALF_PENDING | b >> 4) & ~keep;
        *ip += is_pending ^ 1u;
        if (len == XPRESS_LEN_NIBBLE_ESCAPE) {
                len = in[(*ip)++];
                if (len == XPRESS_LEN_BYTE_ESCAPE) {
                        len = get_le16(in + *ip);
                        *ip += 2;
                        if (len == 0) {
                                len = get_le32(in + *ip);
                                *ip += 4;
                        }
                        if (len < XPRESS_LEN_WIDE_MIN)
                                return 0;
                        len -= XPRESS_LEN_WIDE_MIN;
                }
                len += XPRESS_LEN_NIBBLE_ESCAPE;
        }
        return len + XPRESS_LEN_TOKEN_ESCAPE + XPRESS_MIN_MATCH;
}

/* A short match (len <= XPRESS_FAST_LEN) dist bytes back at d, in chunks that may write up to
 * XPRESS_FAST_LEN bytes from d whatever len is: the caller's output margin holds them. Each
 * chunk reads only bytes that are already final, which keeps the result equal to MS-XCA's
 * forward byte-by-byte copy. */
static inline void copy_short(uint8_t *d, size_t dist, size_t len)
{
        const uint8_t *src = d - dist;

        if (dist >= 16) {
                /* all 48 bytes whatever len is: a branch on len > 32 mispredicts often enough
                 * to cost more (decompressing the x64 sample's buffers: 200 -> 180 ms for 20
                 * passes) */
                memcpy(d, src, 16);
                memcpy(d + 16, src + 16, 16);
                memcpy(d + 32, src + 32, 16);
                return;
        }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if ((dist & (dist - 1)) == 0) {
                /* dist 1, 2, 4 or 8 (nine in ten of the x64 sample's matches under 16 back):
                 * the dist bytes repeated in a register and stored, all 48 bytes: no load of
                 * what this copy has just stored, which waits for the store to complete
                 * where it overlaps it partly. The 8 bytes read may reach past d (not final
                 * yet): the mask drops them. */
                static const uint64_t keep[9] = {0, 0xff, 0xffff, 0,         0xffffffff,
                                                 0, 0,    0,      UINT64_MAX};
                static const uint64_t spread[9] = {0,
                                                   0x0101010101010101ull,
                                                   0x0001000100010001ull,
                                                   0,
                                                   0x0000000100000001ull,
                                                   0,
                                                   0,
                                                   0,
                                                   1};
                uint64_t v;
                memcpy(&v, src, 8);
                v = (v & keep[dist]) * spread[dist];
                for (size_t i = 0; i < XPRESS_FAST_LEN; i += 8)
                        memcpy(d + i, &v, 8);
                return;
        }
#endif
        if (dist >= 8) {
                memcpy(d, src, 8);
                memcpy(d + 8, src + 8, 8);
        } else {
                /* dist < 8 (LZ4's trick): the output repeats with period dist, so any multiple
                 * of dist back holds the same byte. Copy 4 bytes one by one, 4 more from a
                 * multiple of dist >= 4 back, then read 8-byte chunks from a multiple of dist
                 * >= 8 back. */
                static const uint8_t back4[8] = {0, 4, 4, 6, 8, 5, 6, 7};
                static const uint8_t back8[8] = {0, 8, 8, 9, 8, 10, 12, 14};
                d[0] = src[0];
                d[1] = src[1];
                d[2] = src[2];
                d[3] = src[3];
                memcpy(d + 4, d + 4 - back4[dist], 4);
                src = d - back8[dist];
                memcpy(d + 8, src + 8, 8);
        }
        for (size_t i = 16; i < len; i += 8)
                memcpy(d + i, src + i, 8);
}

/* A match of at most 9 bytes (the length in its token: two in three matches) dist bytes back at
 * d, in chunks that write 16 bytes from d whatever its length (the caller's output margin holds
 * them). From 8 back, two 8-byte chunks, each reading bytes already final: copy_short's 48 bytes
 * did three times the loads and stores, and those of the second and third chunks read what the
 * copy had just written (waiting for those stores) wherever the distance was under 48. Only
 * distances under 8 branch away (a branch on 16 mispredicted more: 4% more time). */
static inline void copy_tiny(uint8_t *d, size_t dist)
{
        if (__builtin_expect(dist >= 8, 1)) {
                memcpy(d, d - dist, 8);
                memcpy(d + 8, d - dist + 8, 8);
        } else {
                copy_short(d, dist, 16);
        }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <tmmintrin.h>

/* copy_tiny_shuffle's byte orders: for a distance k under 9, output byte i is the byte i mod k
 * of the k before it (the match repeats them with period k); from 9 back (index 9), where a
 * match of at most 9 bytes reads none of its own, the 16 bytes in their order. */
#define XPRESS_PERIOD(k)                                                                           \
        {                                                                                          \
                0 % k, 1 % k, 2 % k, 3 % k, 4 % k, 5 % k, 6 % k, 7 % k, 8 % k, 9 % k, 10 % k,      \
                        11 % k, 12 % k, 13 % k, 14 % k, 15 % k                                     \
        }
static const uint8_t tiny_order[10][16] = {
        {0},
        XPRESS_PERIOD(1),
        XPRESS_PERIOD(2),
        XPRESS_PERIOD(3),
        XPRESS_PERIOD(4),
        XPRESS_PERIOD(5),
        XPRESS_PERIOD(6),
        XPRESS_PERIOD(7),
        XPRESS_PERIOD(8),
        XPRESS_PERIOD(16),
};
#undef XPRESS_PERIOD

/* copy_tiny without a branch, for the loops built for CPUs with SSSE3 (pshufb): the 16 bytes from
 * dist back, of which those before d are final, put in the match's order by one byte shuffle and
 * stored at once (the bytes past the match's 3 to 9 are rewritten later). copy_tiny's branch on a
 * distance under 8 mispredicted 77,000 times decompressing the x64 sample's buffers by cachegrind's
 * model, and its two 8-byte chunks were two loads and two stores. The load may read bytes past d,
 * not final yet (the output's margin holds them): the order takes none of them. Not always_inline:
 * the build target's loops, which never call it, may lack SSSE3; the AVX2 loops inline it. */
__attribute__((target("ssse3"))) static inline void copy_tiny_shuffle(uint8_t *d, size_t dist)
{
        const size_t k = dist < 9 ? dist : 9;
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(d - dist));
        __m128i order = _mm_loadu_si128((const __m128i *)(const void *)tiny_order[k]);
        _mm_storeu_si128((__m128i *)(void *)d, _mm_shuffle_epi8(v, order));
}
#else
/* Only the x86-64 loops built for AVX2 shuffle (see decompress). */
static inline void copy_tiny_shuffle(uint8_t *d, size_t dist)
{
        copy_tiny(d, dist);
}
#endif

/* A long match (len > XPRESS_FAST_LEN) that the caller has checked against out_cap; room is what
 * remains of the output from d. Most are far back (the x64 sample: 65,000 long matches, all but
 * 1,100 from 128 bytes back or more, 8.2 MB of its 23 MB): 64 bytes a step, a quarter of the
 * loop's branches (decompressing the sample 20 times: 143 -> 138 ms). */
static inline void copy_long(uint8_t *d, size_t dist, size_t len, size_t room)
{
        if (dist >= 64 && room >= len + 64) {
                const uint8_t *src = d - dist;
                for (size_t i = 0; i < len; i += 64) {
                        memcpy(d + i, src + i, 16);
                        memcpy(d + i + 16, src + i + 16, 16);
                        memcpy(d + i + 32, src + i + 32, 16);
                        memcpy(d + i + 48, src + i + 48, 16);
                }
        } else if (dist >= 16 && room >= len + 16) {
                const uint8_t *src = d - dist;
                for (size_t i = 0; i < len; i += 16)
                        memcpy(d + i, src + i, 16);
        } else {
                copy_match(d, dist, len);
        }
}

/* xpress_decompress's body, compiled twice: for the build's target and, on x86-64, for CPUs with
 * AVX2 and BMI2 (see the end of the file). has_shuffle, a constant in each: the loops may use
 * SSSE3's byte shuffle (copy_tiny_shuffle), true in the AVX2 ones. */
static inline __attribute__((always_inline)) int
decompress(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_cap, size_t *out_len,
           struct xpress_error *err, const bool has_shuffle)
{
        size_t ip = 0;
        size_t op = 0;
        uint32_t flags = 0;
        unsigned flag_count = 0;
        /* MS-XCA "LastLengthHalfByte": the high nibble of a length byte not used yet, with
         * XPRESS_HALF_PENDING, or 0 for none (the spec keeps the byte's position, 0 for none). */
        unsigned half = 0;
        int rc = 0;

        /* The unused flags of the group sit at the bottom of fbits (next flag at bit 0), below
         * one sentinel bit: fbits == XPRESS_FLAGS_EMPTY means the group is used up, and
         * counting trailing zeros gives a literal run without a separate bit count. */
        uint64_t fbits = XPRESS_FLAGS_EMPTY;

        /* Group loop: while GROUP_IN input and GROUP_OUT output bytes remain, a whole flag group
         * fits (see the margins), so it is decoded without a check per element; only a long
         * match is checked, and one that leaves less than GROUP_OUT output hands the rest of its
         * group to the fast loop below. */
        const size_t ip_gend = in_len >= XPRESS_GROUP_IN ? in_len - XPRESS_GROUP_IN : 0;
        const size_t op_gend = out_cap >= XPRESS_GROUP_OUT ? out_cap - XPRESS_GROUP_OUT : 0;
        while (ip < ip_gend && op < op_gend) {
                /* flags too: the careful loop reads the rest of a group from it */
                flags = get_le32(in + ip);
                ip += XPRESS_FLAG_BYTES;
                /* The group's match flags (the next one at the lowest set bit) and the sentinel
                 * at bit 32; next is the position of the group's next flag. A match clears its
                 * bit (m & (m - 1): the loop-carried chain, where shifting the run and the flag
                 * out put the count of zeros on it too) and its run is pos - next. */
                uint64_t m = (uint64_t)reverse_bits32(flags) | XPRESS_FLAGS_SENTINEL;
                size_t next = 0;
                for (;;) {
                        /* The run of literal flags before the next match flag or the group's
                         * end, copied at once (bytes past it are rewritten later). Without a
                         * branch on whether there is one: a run of 0 costs less than the
                         * mispredicted branch, and the group's end is told apart after it. */
                        const size_t pos = (size_t)__builtin_ctzll(m);
                        const size_t run = pos - next;
                        memcpy(out + op, in + ip, 16);
                        memcpy(out + op + 16, in + ip + 16, 16);
                        op += run;
                        ip += run;
                        if (pos == XPRESS_FLAG_BITS)
                                break;
                        next = pos + 1;
                        m &= m - 1;
                        const size_t token_pos = ip;
                        const size_t token = get_le16(in + ip);
                        ip += XPRESS_TOKEN_BYTES;
                        const size_t dist = ((size_t)token >> XPRESS_TOKEN_LEN_SHIFT) + 1;
                        uint64_t len = (token & XPRESS_TOKEN_LEN_MASK) + XPRESS_MIN_MATCH;
                        if (__builtin_expect(dist > op, 0)) {
                                rc = fail(err, -EINVAL, token_pos,
                                          "match offset before start of output");
                                goto out;
                        }
                        if (__builtin_expect(len != XPRESS_LEN_TOKEN_ESCAPE + XPRESS_MIN_MATCH,
                                             1)) {
                                /* 3 to 9 bytes (two in three matches): 16 bytes written */
                                if (has_shuffle)
                                        copy_tiny_shuffle(out + op, dist);
                                else
                                        copy_tiny(out + op, dist);
                                op += (size_t)len;
                                continue;
                        }
                        len = escaped_len(in, &ip, &half);
                        if (!len) {
                                rc = fail(err, -EINVAL, token_pos, "wide match length below 22");
                                goto out;
                        }
                        if (__builtin_expect(len <= XPRESS_FAST_LEN, 1)) {
                                copy_short(out + op, dist, (size_t)len);
                                op += (size_t)len;
                        } else {
                                if (len > (uint64_t)(out_cap - op)) {
                                        rc = fail(err, -ENOSPC, token_pos,
                                                  "match runs past end of output");
                                        goto out;
                                }
                                copy_long(out + op, dist, (size_t)len, out_cap - op);
                                op += (size_t)len;
                                if (op >= op_gend) {
                                        /* the group's flags left, in the fast loop's form */
                                        fbits = m >> next;
                                        goto group_left;
                                }
                        }
                }
        }
group_left:;

        /* Fast loop: while FAST_IN input and FAST_OUT output bytes remain, no element can run
         * past either end (one iteration handles a flag word, a literal run copied as 32 bytes
         * and a match token with its length fields: at most 4 + 32 + 10 input bytes; a short match
         * writes at most XPRESS_FAST_LEN bytes, longer ones are checked), so the per-field
         * checks of the loop below are not needed. It goes on mid group where the group loop
         * stopped, and its state carries over to the careful loop unchanged. */
        const size_t ip_end = in_len >= XPRESS_FAST_IN ? in_len - XPRESS_FAST_IN : 0;
        const size_t op_end = out_cap >= XPRESS_FAST_OUT ? out_cap - XPRESS_FAST_OUT : 0;
        while (ip < ip_end && op < op_end) {
                if (fbits == XPRESS_FLAGS_EMPTY) {
                        flags = get_le32(in + ip);
                        ip += XPRESS_FLAG_BYTES;
                        fbits = (uint64_t)reverse_bits32(flags) | XPRESS_FLAGS_SENTINEL;
                }
                if (!(fbits & 1)) {
                        /* A run of literal flags (ended by a match flag or the sentinel): copy
                         * the run at once; bytes past it are rewritten later. */
                        const unsigned run = (unsigned)__builtin_ctzll(fbits);
                        memcpy(out + op, in + ip, 16);
                        memcpy(out + op + 16, in + ip + 16, 16);
                        op += run;
                        ip += run;
                        fbits >>= run;
                        if (fbits == XPRESS_FLAGS_EMPTY)
                                continue;
                        /* Not the group's end, so the run stopped at a match flag. */
                }
                fbits >>= 1;
                const size_t token_pos = ip;
                const size_t token = get_le16(in + ip);
                ip += XPRESS_TOKEN_BYTES;
                const size_t dist = ((size_t)token >> XPRESS_TOKEN_LEN_SHIFT) + 1;
                uint64_t len = (token & XPRESS_TOKEN_LEN_MASK) + XPRESS_MIN_MATCH;
                if (len == XPRESS_LEN_TOKEN_ESCAPE + XPRESS_MIN_MATCH) {
                        len = escaped_len(in, &ip, &half);
                        if (!len) {
                                rc = fail(err, -EINVAL, token_pos, "wide match length below 22");
                                goto out;
                        }
                }
                if (__builtin_expect(dist > op, 0)) {
                        rc = fail(err, -EINVAL, token_pos, "match offset before start of output");
                        goto out;
                }
                if (__builtin_expect(len <= XPRESS_FAST_LEN, 1)) {
                        /* more than XPRESS_FAST_OUT - 32 output bytes remain: room for the
                         * chunks */
                        copy_short(out + op, dist, (size_t)len);
                        op += (size_t)len;
                        continue;
                }
                if (len > (uint64_t)(out_cap - op)) {
                        rc = fail(err, -ENOSPC, token_pos, "match runs past end of output");
                        goto out;
                }
                copy_long(out + op, dist, (size_t)len, out_cap - op);
                op += (size_t)len;
        }
        /* Hand the flag state to the careful loop: the sentinel's position tells how many
         * flags of the group are left, and they are the low bits of flags (in their order). */
        flag_count = 63u - (unsigned)__builtin_clzll(fbits);

        for (;;) {
                /* The .etl caller knows the exact decompressed size: stop once it is reached, even
                 * mid flag group, without demanding the stream's terminating flags. */
                if (op == out_cap)
                        break;

                if (flag_count == 0) {
                        if (ip == in_len)
                                break;
                        if (in_len - ip < XPRESS_FLAG_BYTES) {
                                rc = fail(err, -EINVAL, ip, "truncated flag word");
                                break;
                        }
                        flags = get_le32(in + ip);
                        ip += XPRESS_FLAG_BYTES;
                        flag_count = XPRESS_FLAG_BITS;
                }
                flag_count--;

                /* Input exhausted before the next element: MS-XCA ends here for a match flag;
                 * a stream that stops mid flag group on a literal flag is accepted too. */
                if (ip == in_len)
                        break;

                if (!((flags >> flag_count) & 1u)) {
                        /* A run of literal flags: copy the run at once. The flag bits below
                         * this one, up to the next match flag, are all literals. */
                        uint32_t below = flag_count ? flags & ((1u << flag_count) - 1u) : 0;
                        unsigned run =
                                below ? flag_count - (31u - (unsigned)__builtin_clz(below)) - 1u
                                      : flag_count;
                        size_t n = (size_t)run + 1;
                        if (n > in_len - ip)
                                n = in_len - ip;
                        if (n > out_cap - op)
                                n = out_cap - op;
                        if (in_len - ip >= 32 && out_cap - op >= 32) {
                                /* fixed-size copies inline; bytes past n are rewritten later */
                                memcpy(out + op, in + ip, 16);
                                memcpy(out + op + 16, in + ip + 16, 16);
                        } else {
                                memcpy(out + op, in + ip, n);
                        }
                        op += n;
                        ip += n;
                        flag_count -= (unsigned)(n - 1);
                        continue;
                }

                const size_t token_pos = ip;
                if (in_len - ip < XPRESS_TOKEN_BYTES) {
                        rc = fail(err, -EINVAL, ip, "truncated match token");
                        break;
                }
                const uint16_t token = get_le16(in + ip);
                ip += XPRESS_TOKEN_BYTES;

                const size_t dist = ((size_t)token >> XPRESS_TOKEN_LEN_SHIFT) + 1;
                /* uint64_t: the u32 form plus the constant 3 overflows a 32-bit size_t. */
                uint64_t len = token & XPRESS_TOKEN_LEN_MASK;

                if (len == XPRESS_LEN_TOKEN_ESCAPE) {
                        if (!half) {
                                if (ip == in_len) {
                                        rc = fail(err, -EINVAL, ip, "truncated length nibble");
                                        break;
                                }
                                len = in[ip] & 0x0fu;
                                half = XPRESS_HALF_PENDING | in[ip] >> 4;
                                ip++;
                        } else {
                                len = half & 0x0fu;
                                half = 0;
                        }

                        if (len == XPRESS_LEN_NIBBLE_ESCAPE) {
                                if (ip == in_len) {
                                        rc = fail(err, -EINVAL, ip, "truncated length byte");
                                        break;
                                }
                                len = in[ip++];

                                if (len == XPRESS_LEN_BYTE_ESCAPE) {
                                        if (in_len - ip < 2) {
                                                rc = fail(err, -EINVAL, ip, "truncated u16 length");
                                                break;
                                        }
                                        len = get_le16(in + ip);
                                        ip += 2;

                                        if (len == 0) {
                                                if (in_len - ip < 4) {
                                                        rc = fail(err, -EINVAL, ip,
                                                                  "truncated u32 length");
                                                        break;
                                                }
                                                len = get_le32(in + ip);
                                                ip += 4;
                                        }
                                        if (len < XPRESS_LEN_WIDE_MIN) {
                                                rc = fail(err, -EINVAL, token_pos,
                                                          "wide match length below 22");
                                                break;
                                        }
                                        len -= XPRESS_LEN_WIDE_MIN;
                                }
                                len += XPRESS_LEN_NIBBLE_ESCAPE;
                        }
                        len += XPRESS_LEN_TOKEN_ESCAPE;
                }
                len += XPRESS_MIN_MATCH;

                if (dist > op) {
                        rc = fail(err, -EINVAL, token_pos, "match offset before start of output");
                        break;
                }
                if (len > (uint64_t)(out_cap - op)) {
                        rc = fail(err, -ENOSPC, token_pos, "match runs past end of output");
                        break;
                }
                if (dist >= 16 && out_cap - op >= (size_t)len + 16) {
                        uint8_t *d = out + op;
                        const uint8_t *src = d - dist;
                        for (size_t i = 0; i < (size_t)len; i += 16)
                                memcpy(d + i, src + i, 16);
                } else if (dist >= 8 && out_cap - op >= (size_t)len + 8) {
                        /* Fast path: 8-byte chunks; with dist >= 8 each chunk reads bytes that
                         * are already final, and the up to 7 bytes written past the match are
                         * inside the output and overwritten by what follows. */
                        uint8_t *d = out + op;
                        const uint8_t *src = d - dist;
                        for (size_t i = 0; i < (size_t)len; i += 8)
                                memcpy(d + i, src + i, 8);
                } else {
                        copy_match(out + op, dist, (size_t)len);
                }
                op += (size_t)len;
        }

out:
        if (out_len)
                *out_len = op;
        return rc;
}

int xpress_decompress_generic(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_cap,
                              size_t *out_len, struct xpress_error *err)
{
        return decompress(in, in_len, out, out_cap, out_len, err, false);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>

/* The same loops where the CPU has x86-64-v3's instructions: 32-byte copies in one load and
 * store, BMI's bit operations (blsr, tzcnt, shlx): 4% fewer instructions and 3% less time
 * decompressing the x64 sample's buffers. */
__attribute__((target("avx,avx2,bmi,bmi2,lzcnt,popcnt"))) static int
decompress_v3(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_cap, size_t *out_len,
              struct xpress_error *err)
{
        return decompress(in, in_len, out, out_cap, out_len, err, true);
}

/* Whether the CPU and the kernel give decompress_v3 every extension it is built for: its lzcnt
 * runs as bsr (another result) where LZCNT is missing, its blsr faults without BMI1, its AVX
 * registers need the kernel's saving of them (XCR0). Asked of cpuid itself: gcc's
 * __builtin_cpu_supports links libgcc's CPU probe, a constructor that ran a dozen cpuid
 * instructions at every start of etwtop, each a trap to the hypervisor in a VM. */
static bool cpu_has_v3(void)
{
        unsigned int a, b, c, d;
        if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_POPCNT) || !(c & bit_AVX) ||
            !(c & bit_OSXSAVE))
                return false;
        unsigned int xcr0_lo, xcr0_hi;
        __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
        if ((xcr0_lo & 6) != 6) /* XMM and YMM state */
                return false;
        if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(b & bit_AVX2) || !(b & bit_BMI) ||
            !(b & bit_BMI2))
                return false;
        return __get_cpuid(0x80000001, &a, &b, &c, &d) && (c & bit_LZCNT);
}

int xpress_decompress(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_cap,
                      size_t *out_len, struct xpress_error *err)
{
        /* 0 not asked yet, 1 no, 2 yes; the answer is the same from every thread */
        static int has_v3;
        int v = __atomic_load_n(&has_v3, __ATOMIC_RELAXED);

        if (!v) {
                v = cpu_has_v3() ? 2 : 1;
                __atomic_store_n(&has_v3, v, __ATOMIC_RELAXED);
        }
        if (v == 2)
                return decompress_v3(in, in_len, out, out_cap, out_len, err);
        return decompress(in, in_len, out, out_cap, out_len, err, false);
}
#else
int xpress_decompress(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_cap,
                      size_t *out_len, struct xpress_error *err)
{
        return decompress(in, in_len, out, out_cap, out_len, err, false);
}
#endif
