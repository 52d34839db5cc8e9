/* SPDX-License-Identifier: MIT */
/* perf_fb.h: perf.data files built by hand in the perf.data tests (test_perf_data.c,
   test_perf_data_dir.c): a buffer and its little-endian writers. */
#ifndef ETWTOP_TESTS_PERF_FB_H
#define ETWTOP_TESTS_PERF_FB_H

#include <stdint.h>
#include <string.h>

struct fb {
        uint8_t b[16384];
        uint32_t n;
};

static inline void fb_put(struct fb *f, const void *p, uint32_t n)
{
        assert_true(f->n + n <= sizeof(f->b));
        memcpy(f->b + f->n, p, n);
        f->n += n;
}

static inline void fb_u16(struct fb *f, uint16_t v)
{
        fb_put(f, &v, 2);
}

static inline void fb_u32(struct fb *f, uint32_t v)
{
        fb_put(f, &v, 4);
}

static inline void fb_u64(struct fb *f, uint64_t v)
{
        fb_put(f, &v, 8);
}

static inline void fb_u64_at(struct fb *f, uint32_t at, uint64_t v)
{
        memcpy(f->b + at, &v, 8);
}

#endif
