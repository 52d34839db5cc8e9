/* SPDX-License-Identifier: MIT */
/* file_bytes.h: a whole file's bytes, for the tests that compare the files two ways of writing
   made (include after cmocka.h). */
#ifndef ETWTOP_TEST_FILE_BYTES_H
#define ETWTOP_TEST_FILE_BYTES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* path's bytes in *data (malloc'ed, at least one byte), their count in *size; fails the test
   when the file cannot be read. */
static inline void read_file(const char *path, uint8_t **data, size_t *size)
{
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        fseek(f, 0, SEEK_END);
        *size = (size_t)ftell(f);
        fseek(f, 0, SEEK_SET);
        *data = malloc(*size ? *size : 1);
        assert_non_null(*data);
        assert_int_equal(fread(*data, 1, *size, f), *size);
        fclose(f);
}

#endif
