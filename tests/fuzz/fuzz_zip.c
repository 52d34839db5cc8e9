/* SPDX-License-Identifier: MIT */
/* fuzz_zip.c: libFuzzer target feeding arbitrary bytes to the zip reader (etl_zip.c): its
   promises (an error with an offset inside the input and a message, or the entry's bytes, each
   touched), then the reader over the entry, every record read. Corpus: tests/corpus/zip/. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "etl_reader.h"
#include "etl_zip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Keeps the compiler from dropping the reads that ASan checks. */
static volatile unsigned fuzz_sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        uint8_t *out = NULL;
        size_t n = 0;
        char name[32];
        struct etl_error err;
        memset(&err, 0, sizeof(err));
        int rc = etl_zip_extract(data, size, &out, &n, name, sizeof(name), &err);
        if (rc < 0) {
                if (out || n || !err.msg[0] || err.offset > size)
                        abort();
        } else {
                if (!out || !n || strnlen(name, sizeof(name)) == sizeof(name))
                        abort();
                unsigned sum = 0;
                for (size_t i = 0; i < n; i++)
                        sum += out[i];
                fuzz_sink = sum;
                free(out);
        }
        struct etl_reader *r = NULL;
        if (etl_zip_reader_open(&r, data, size, &err) == 0) {
                struct etl_record rec;
                unsigned sum = 0;
                while (etl_reader_next(r, &rec) == 1)
                        for (uint32_t i = 0; i < rec.size_bytes; i++)
                                sum += rec.data[i];
                fuzz_sink = sum;
                etl_reader_close(r);
        } else if (r) {
                abort();
        }
        return 0;
}
