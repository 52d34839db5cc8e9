/* SPDX-License-Identifier: MIT */
/* utf.h: the tree's one UTF-8 and UTF-16LE conversion: strict decoding (overlong forms,
   surrogates, code points past U+10FFFF and bytes that start nothing become U+FFFD), and
   UTF-16LE's unpaired surrogates become U+FFFD. */
#ifndef ETWTOP_UTIL_UTF_H
#define ETWTOP_UTIL_UTF_H

#include <stddef.h>
#include <stdint.h>

#define UTF_REPLACEMENT 0xFFFDu

/* Encodes cp (U+FFFD for a surrogate or past U+10FFFF) into out; returns its 1 to 4 bytes. */
size_t utf8_encode(uint32_t cp, char out[4]);

/* Decodes the code point at UTF-16LE unit *i of s[0..nr_units), advancing *i past it (two units
   for a surrogate pair). *i must be below nr_units. */
uint32_t utf16le_decode(const uint8_t *s, size_t nr_units, size_t *i);

/* Writes src (NULL reads as "") as UTF-16LE with its NUL at dst, which holds at least
   2 * (strlen(src) + 1) bytes; returns the bytes written, the NUL's two included. */
uint32_t utf8_to_utf16le(uint8_t *dst, const char *src);

/* Reads UTF-16LE at src, up to its NUL or max_units units, into out as UTF-8 with a NUL (cut at
   a whole character to fit out_size); returns the units read, the NUL included. */
size_t utf16le_to_utf8(const uint8_t *src, size_t max_units, char *out, size_t out_size);

#endif
