/* SPDX-License-Identifier: MIT */
/* text_sanitize.h: makes strings from the traced system safe to put on a terminal. */
#ifndef ETWTOP_UI_TEXT_SANITIZE_H
#define ETWTOP_UI_TEXT_SANITIZE_H

#include <stddef.h>

/* Copies src into dst (always NUL-terminated, at most dst_size - 1 bytes, never splitting a
   UTF-8 sequence), replacing C0/C1 control characters, DEL and invalid UTF-8 with '?'. Returns
   the number of bytes written. */
size_t text_sanitize(char *dst, size_t dst_size, const char *src);

/* True when src needs no change to be drawn. */
int text_is_clean(const char *src);

#endif
