/* SPDX-License-Identifier: MIT */
/* fuzz_xpress.c: libFuzzer target feeding arbitrary bytes to the MS-XCA plain LZ77 decoder and
   holding its result against the byte-at-a-time reference (xpress_ref.h). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xpress.h"
#include "xpress_ref.h"

/* 64 KiB: the usual ETW buffer size, so outputs are as large as real .etl buffers. */
#define FUZZ_XPRESS_OUT_CAP (64u * 1024u)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        /* Heap, not static: ASan then catches writes past out_cap. */
        uint8_t *out = malloc(FUZZ_XPRESS_OUT_CAP);
        uint8_t *want = malloc(FUZZ_XPRESS_OUT_CAP);
        struct xpress_error err = {0, NULL};
        size_t out_len = 0, want_len = 0, want_at = 0;

        if (!out || !want) {
                free(out);
                free(want);
                return 0;
        }
        int rc = xpress_decompress(data, size, out, FUZZ_XPRESS_OUT_CAP, &out_len, &err);
        /* Contract checks: never more output than capacity; errors carry an in-range offset. */
        if (out_len > FUZZ_XPRESS_OUT_CAP)
                abort();
        if (rc != 0 && (err.what == NULL || err.in_offset > size))
                abort();
        /* The fast paths give what the plain decoder gives, byte for byte, failures included. */
        int want_rc =
                xpress_ref_decompress(data, size, want, FUZZ_XPRESS_OUT_CAP, &want_len, &want_at);
        if (rc != want_rc || out_len != want_len || (rc && err.in_offset != want_at) ||
            memcmp(out, want, out_len) != 0)
                abort();
        /* the build target's loops too, where xpress_decompress chose others for this CPU */
        memset(out, 0, FUZZ_XPRESS_OUT_CAP);
        rc = xpress_decompress_generic(data, size, out, FUZZ_XPRESS_OUT_CAP, &out_len, &err);
        if (rc != want_rc || out_len != want_len || (rc && err.in_offset != want_at) ||
            memcmp(out, want, out_len) != 0)
                abort();
        free(want);
        free(out);
        return 0;
}
