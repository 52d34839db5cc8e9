/* SPDX-License-Identifier: MIT */
/* etl_zip.h: a trace inside a zip archive (PerfView's .etl.zip): its one .etl entry found
   through the archive's central directory and inflated into memory (zlib), for the reader. */
#ifndef ETWTOP_ETL_ZIP_H
#define ETWTOP_ETL_ZIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "etl_reader.h"

/* Whether data[0..size) begins as a zip archive does: a local file header ("PK\3\4") or an
   empty archive's end record ("PK\5\6"). No .etl begins so (its first word, a buffer size, would
   be over 16 MiB). */
bool etl_zip_is_zip(const uint8_t *data, size_t size);

/* The archive's one entry whose name ends in ".etl" (any case), stored or deflated, inflated
   into a new buffer (*out, *out_size: free() it), its CRC-32 checked; the entry's name (cut to
   name_size) in name. 0, or -errno with err set: an archive that holds no .etl or several, an
   encrypted entry, a method other than stored and deflate, a damaged archive (with the byte
   offset in the archive), memory. Nothing the archive says of a length or an offset is used
   before it is checked against size. */
int etl_zip_extract(const uint8_t *data, size_t size, uint8_t **out, size_t *out_size, char *name,
                    size_t name_size, struct etl_error *err);

/* A reader over an entry's inflated bytes etl[0..n) (borrowed: the caller frees them after the
   reader's close), an error prefixed with the entry's name (its byte offsets are the entry's). */
int etl_zip_entry_open(struct etl_reader **out, const uint8_t *etl, size_t n, const char *name,
                       struct etl_error *err);

/* A reader over the archive's .etl (etl_zip_extract), which frees the inflated bytes at its
   close; the archive's bytes are not read after it returns. Errors as etl_zip_extract's and
   etl_reader_open_mem's, the latter's prefixed with the entry's name (their byte offsets are
   the entry's). */
int etl_zip_reader_open(struct etl_reader **out, const uint8_t *data, size_t size,
                        struct etl_error *err);

#endif
