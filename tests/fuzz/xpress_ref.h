/* SPDX-License-Identifier: MIT */
/* xpress_ref.h: a plain MS-XCA LZ77 decoder, one element and one byte at a time, that the tests
   and the fuzz target hold backend/etl/xpress.c's fast paths against. */
#ifndef ETWTOP_TESTS_XPRESS_REF_H
#define ETWTOP_TESTS_XPRESS_REF_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline uint32_t xpress_ref_le(const uint8_t *p, unsigned n)
{
        uint32_t v = 0;

        for (unsigned i = n; i-- > 0;)
                v = v << 8 | p[i];
        return v;
}

/* What xpress_decompress() gives for the same arguments: the return value, *out_len, out[0..
   *out_len) and, on an error, the input offset it names (*err_at). MS-XCA 2.4.4 as the decoder
   reads it: it stops at out_cap (even mid flag group), at the input's end before a flag word or an
   element, and a wide length may not be below 22. */
static inline int xpress_ref_decompress(const uint8_t *in, size_t in_len, uint8_t *out,
                                        size_t out_cap, size_t *out_len, size_t *err_at)
{
        size_t ip = 0, op = 0, half_pos = 0;
        bool is_half_pending = false;
        uint32_t flags = 0;
        unsigned nr_flags = 0;
        int rc = 0;

        for (;;) {
                if (op == out_cap)
                        break;
                if (nr_flags == 0) {
                        if (ip == in_len)
                                break;
                        if (in_len - ip < 4) {
                                rc = -EINVAL;
                                *err_at = ip;
                                break;
                        }
                        flags = xpress_ref_le(in + ip, 4);
                        ip += 4;
                        nr_flags = 32;
                }
                nr_flags--;
                if (ip == in_len)
                        break;
                if (!((flags >> nr_flags) & 1u)) {
                        out[op++] = in[ip++];
                        continue;
                }
                const size_t token_pos = ip;
                if (in_len - ip < 2) {
                        rc = -EINVAL;
                        *err_at = ip;
                        break;
                }
                uint32_t token = xpress_ref_le(in + ip, 2);
                ip += 2;
                size_t dist = (token >> 3) + 1;
                uint64_t len = token & 7u;
                if (len == 7) {
                        if (!is_half_pending) {
                                if (ip == in_len) {
                                        rc = -EINVAL;
                                        *err_at = ip;
                                        break;
                                }
                                half_pos = ip++;
                                len = in[half_pos] & 15u;
                                is_half_pending = true;
                        } else {
                                len = in[half_pos] >> 4;
                                is_half_pending = false;
                        }
                        if (len == 15) {
                                if (ip == in_len) {
                                        rc = -EINVAL;
                                        *err_at = ip;
                                        break;
                                }
                                len = in[ip++];
                                if (len == 255) {
                                        if (in_len - ip < 2) {
                                                rc = -EINVAL;
                                                *err_at = ip;
                                                break;
                                        }
                                        len = xpress_ref_le(in + ip, 2);
                                        ip += 2;
                                        if (len == 0) {
                                                if (in_len - ip < 4) {
                                                        rc = -EINVAL;
                                                        *err_at = ip;
                                                        break;
                                                }
                                                len = xpress_ref_le(in + ip, 4);
                                                ip += 4;
                                        }
                                        if (len < 22) {
                                                rc = -EINVAL;
                                                *err_at = token_pos;
                                                break;
                                        }
                                        len -= 22;
                                }
                                len += 15;
                        }
                        len += 7;
                }
                len += 3;
                if (dist > op) {
                        rc = -EINVAL;
                        *err_at = token_pos;
                        break;
                }
                if (len > (uint64_t)(out_cap - op)) {
                        rc = -ENOSPC;
                        *err_at = token_pos;
                        break;
                }
                for (uint64_t i = 0; i < len; i++, op++)
                        out[op] = out[op - dist];
        }
        *out_len = op;
        return rc;
}

#endif /* ETWTOP_TESTS_XPRESS_REF_H */
