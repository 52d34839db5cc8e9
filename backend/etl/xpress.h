/* SPDX-License-Identifier: MIT */
/* xpress.h: MS-XCA plain LZ77 ("XPRESS", COMPRESSION_FORMAT_XPRESS) decompression. */
#ifndef ETWTOP_BACKEND_XPRESS_H
#define ETWTOP_BACKEND_XPRESS_H

#include <stddef.h>
#include <stdint.h>

/* Where and why a stream was rejected: in_offset is the input byte offset of the element (flag
 * word, match token or length field) that could not be decoded; what is a static string. */
struct xpress_error {
        size_t in_offset;
        const char *what;
};

/* Decompress in[0..in_len) into out[0..out_cap). Stops when out_cap bytes are produced or input
   ends. Returns 0 and sets *out_len, or -EINVAL (corrupt: match before start of output, truncated
   flags/length fields, length overflow) / -ENOSPC (output would exceed out_cap) with err filled
   (err may be NULL). On error *out_len is still set to the number of bytes written before the
   failure. */
int xpress_decompress(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_cap,
                      size_t *out_len, struct xpress_error *err);

/* The same with the build target's instructions only, where xpress_decompress may choose loops
   compiled for the CPU it runs on (AVX2 and BMI2 on x86-64): the tests hold both to the same
   results. */
int xpress_decompress_generic(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_cap,
                              size_t *out_len, struct xpress_error *err);

#endif /* ETWTOP_BACKEND_XPRESS_H */
