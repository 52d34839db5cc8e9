/* SPDX-License-Identifier: MIT */
/* fuzz_xpress.c: libFuzzer target feeding arbitrary bytes to the MS-XCA plain LZ77 decoder. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "xpress.h"

/* 64 KiB: the usual ETW buffer size, so outputs are as large as real .etl buffers. */
#define FUZZ_XPRESS_OUT_CAP (64u * 1024u)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        /* Heap, not static: ASan then catches writes past out_cap. */
        uint8_t *out = malloc(FUZZ_XPRESS_OUT_CAP);
        struct xpress_error err = {0, NULL};
        size_t out_len = 0;

        if (!out)
                return 0;
        int rc = xpress_decompress(data, size, out, FUZZ_XPRESS_OUT_CAP, &out_len, &err);
        /* Contract checks: never more output than capacity; errors carry an in-range offset. */
        if (out_len > FUZZ_XPRESS_OUT_CAP)
                abort();
        if (rc != 0 && (err.what == NULL || err.in_offset > size))
                abort();
        free(out);
        return 0;
}
