/* SPDX-License-Identifier: MIT */
/* hash.h: the tree's one 64-bit mixer (splitmix64's finalizer: every input bit moves every
   output bit) and the hash of a run of 64-bit words built on it (stacks, keys). */
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

/* The hash of words[0..n), seeded: order matters, equal runs hash equal. */
static inline uint64_t hash_words(const uint64_t *words, size_t n, uint64_t seed)
{
        uint64_t h = hash_mix64(seed ^ (n * 0x9e3779b97f4a7c15ull));

        for (size_t i = 0; i < n; i++)
                h = hash_mix64(h ^ words[i]) + 0x9e3779b97f4a7c15ull;
        return h;
}

/* The hash of a NUL-terminated string (FNV-1a, then mixed). */
static inline uint64_t hash_str(const char *s)
{
        uint64_t h = 0xcbf29ce484222325ull;

        for (; *s; s++)
                h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
        return hash_mix64(h);
}

#endif
