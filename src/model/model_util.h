/* SPDX-License-Identifier: MIT */
/* model_util.h (internal to src/model): allocation that aborts when memory runs out, and the
   64-bit mixer the model's hash tables use. */
#ifndef ETWTOP_MODEL_UTIL_H
#define ETWTOP_MODEL_UTIL_H

#include <stdint.h>
#include <stdlib.h>

static inline void *xcalloc(size_t n, size_t size)
{
        void *p = calloc(n ? n : 1, size ? size : 1);
        if (!p)
                abort();
        return p;
}

/* splitmix64's finalizer: every input bit moves every output bit */
static inline uint64_t mix(uint64_t x)
{
        x ^= x >> 33;
        x *= 0xff51afd7ed558ccdull;
        x ^= x >> 33;
        x *= 0xc4ceb9fe1a85ec53ull;
        return x ^ (x >> 33);
}

#endif
