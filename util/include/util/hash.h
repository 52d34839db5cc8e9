/* SPDX-License-Identifier: MIT */
/* hash.h: the tree's one 64-bit mixer (splitmix64's finalizer: every input bit moves every
   output bit), the hash of a run of 64-bit words built on it (stacks, keys), and FNV-1a for
   bytes and strings. */
#ifndef ETWTOP_UTIL_HASH_H
#define ETWTOP_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t hash_mix64(uint64_t x)
{
        x ^= x >> 33;
        x *= 0xff51afd7ed558ccdull;
        x ^= x >> 33;
        x *= 0xc4ceb9fe1a85ec53ull;
        return x ^ (x >> 33);
}

/* hash_mix64's first round alone (one multiply): for the hot tables that used it before
   hash_mix64 came, where a table's slot order is seen (the perf.data converter writes its
   threads' DCEnd events in slot order), so that their output stays the same. */
static inline uint64_t hash_mix64_half(uint64_t x)
{
        x ^= x >> 33;
        x *= 0xff51afd7ed558ccdull;
        return x ^ (x >> 33);
}

/* The hash of words[0..n), seeded: order matters, equal runs hash equal. */
static inline uint64_t hash_words(const uint64_t *words, size_t n, uint64_t seed)
{
        uint64_t h = hash_mix64(seed ^ (n * 0x9e3779b97f4a7c15ull));

        for (size_t i = 0; i < n; i++)
                h = hash_mix64(h ^ words[i]) + 0x9e3779b97f4a7c15ull;
        return h;
}

/* The hash of a stack's frames f[0..n), unseeded (a caller mixes its seed in after it, through
   hash_mix64): one multiply a frame, in two chains side by side (the even frames', the odd
   ones'), so that a deep stack waits on half as many multiplies in a row as one chain made it
   wait. Order matters: a chain's step is a bijection of its frame, and the chains start apart. */
static inline uint64_t hash_frames(const uint64_t *f, size_t n)
{
        uint64_t a = 0x243f6a8885a308d3ull, b = 0x13198a2e03707344ull;
        size_t i = 0;

        for (; i + 1 < n; i += 2) {
                a = ((a << 27 | a >> 37) ^ f[i]) * 0x9e3779b97f4a7c15ull;
                b = ((b << 27 | b >> 37) ^ f[i + 1]) * 0x9e3779b97f4a7c15ull;
        }
        if (i < n)
                a = ((a << 27 | a >> 37) ^ f[i]) * 0x9e3779b97f4a7c15ull;
        return a ^ (b << 32 | b >> 32) ^ n * 0xbf58476d1ce4e5b9ull;
}

/* FNV-1a's 64-bit offset basis: the h to start hash_fnv1a and hash_fnv1a_str with. */
#define HASH_FNV_OFFSET 0xcbf29ce484222325ull

/* 64-bit FNV-1a over p[0..n), going on from h (HASH_FNV_OFFSET, or a seed mixed into it):
   cheap for short keys, but its low bits are weak; mix it (hash_mix64) or fold it before
   masking a power-of-two table index with it. */
static inline uint64_t hash_fnv1a(const void *p, size_t n, uint64_t h)
{
        const unsigned char *b = p;

        for (size_t i = 0; i < n; i++)
                h = (h ^ b[i]) * 0x100000001b3ull;
        return h;
}

/* hash_fnv1a over a NUL-terminated string, its NUL left out. */
static inline uint64_t hash_fnv1a_str(const char *s, uint64_t h)
{
        for (; *s; s++)
                h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
        return h;
}

/* The hash of a NUL-terminated string (FNV-1a, then mixed). */
static inline uint64_t hash_str(const char *s)
{
        return hash_mix64(hash_fnv1a_str(s, HASH_FNV_OFFSET));
}

#endif
