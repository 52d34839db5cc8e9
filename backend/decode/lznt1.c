/* SPDX-License-Identifier: MIT */
/* lznt1.c: LZNT1 decompression (MS-XCA 2.5). The input is chunks of at most 4096 bytes of
 * output, each after a 16-bit header: bits 0-11 the chunk's size less 3 (header included), bits
 * 12-14 the signature 3, bit 15 set where the chunk is compressed. A compressed chunk is groups
 * of a flag byte and eight items: a literal byte where the flag's bit is clear, else a 16-bit
 * back-reference whose split between displacement and length depends on how far into its chunk
 * the output is (the displacement takes as many bits as the position needs, at least 4). */
#include "lznt1.h"

#define CHUNK_OUT 4096u

long lznt1_decompress(const uint8_t *src, size_t n, uint8_t *dst, size_t cap)
{
        size_t i = 0, o = 0; /* o: the output's length, whether kept or past cap */
        uint8_t window[CHUNK_OUT];

        while (i + 2 <= n) {
                unsigned h = (unsigned)src[i] | (unsigned)src[i + 1] << 8;
                i += 2;
                if (h == 0)
                        break;
                size_t size = (h & 0xfffu) + 1u; /* the chunk's bytes after its header */
                if (size > n - i)
                        return -1;
                const uint8_t *c = src + i;
                i += size;
                size_t w = 0; /* the chunk's output so far */
                if (!(h & 0x8000u)) {
                        /* stored: its bytes as they are */
                        for (size_t k = 0; k < size; k++, o++)
                                if (o < cap)
                                        dst[o] = c[k];
                        continue;
                }
                for (size_t j = 0; j < size;) {
                        unsigned flags = c[j++];
                        for (unsigned b = 0; b < 8 && j < size; b++) {
                                if (!(flags >> b & 1u)) {
                                        if (w == CHUNK_OUT)
                                                return -1;
                                        window[w++] = c[j++];
                                        continue;
                                }
                                if (size - j < 2)
                                        return -1;
                                unsigned tok = (unsigned)c[j] | (unsigned)c[j + 1] << 8;
                                j += 2;
                                unsigned bits = 4; /* displacement bits: enough for w */
                                while ((1u << bits) < w)
                                        bits++;
                                unsigned len_bits = 16 - bits;
                                size_t disp = (tok >> len_bits) + 1u;
                                size_t len = (tok & ((1u << len_bits) - 1u)) + 3u;
                                if (disp > w || len > CHUNK_OUT - w)
                                        return -1;
                                for (size_t k = 0; k < len; k++, w++)
                                        window[w] = window[w - disp];
                        }
                }
                for (size_t k = 0; k < w; k++, o++)
                        if (o < cap)
                                dst[o] = window[k];
        }
        return (long)(o < cap ? o : cap);
}
