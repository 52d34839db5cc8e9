/* SPDX-License-Identifier: MIT */
/* text_sanitize.h: makes strings from the traced system safe to put on a terminal. */
#ifndef ETWTOP_UI_TEXT_SANITIZE_H
#define ETWTOP_UI_TEXT_SANITIZE_H

#include <stddef.h>

/* Copies src into dst (always NUL-terminated, at most dst_size - 1 bytes, never splitting a
   UTF-8 sequence), replacing C0/C1 control characters, DEL and invalid UTF-8 with '?'. Returns
   the number of bytes written. */
size_t text_sanitize(char *dst, size_t dst_size, const char *src);

/* Length of the valid UTF-8 sequence at s (1..4; 1 for any ASCII byte, controls too), or 0
   when it is invalid (overlong, a surrogate, past U+10FFFF, cut short) or a C1 control. */
size_t text_utf8_len(const unsigned char *s);

/* True when src needs no change to be drawn. */
int text_is_clean(const char *src);

#endif
