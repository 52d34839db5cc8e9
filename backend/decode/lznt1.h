/* SPDX-License-Identifier: MIT */
/* lznt1.h: LZNT1 (MS-XCA 2.5), the compression RtlDecompressBuffer's COMPRESSION_FORMAT_LZNT1
 * reads: the WinSat provider's XML documents in a merged trace come in it. */
#ifndef ETWTOP_LZNT1_H
#define ETWTOP_LZNT1_H

#include <stddef.h>
#include <stdint.h>

/* Decompresses src[0..n) into dst[0..cap): the bytes written, or -1 where src is not LZNT1 (a
   chunk past the input's end, a back-reference before its chunk's start, a chunk that
   decompresses past 4096 bytes). Output past cap is dropped, the rest still checked: the
   answer is then cap (dst NULL and cap 0: a check alone). A chunk header of 0 ends the
   input. */
long lznt1_decompress(const uint8_t *src, size_t n, uint8_t *dst, size_t cap);

#endif
