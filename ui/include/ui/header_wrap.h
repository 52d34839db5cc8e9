/* SPDX-License-Identifier: MIT */
/* header_wrap.h: the header's lines folded to the screen's width, so that a narrow terminal shows
 * every field instead of the start of each line. */
#ifndef ETWTOP_UI_HEADER_WRAP_H
#define ETWTOP_UI_HEADER_WRAP_H

#include <stdint.h>

#define UI_HEADER_ROW  512 /* bytes of one folded row, its NUL included */
#define UI_HEADER_ROWS 12  /* rows the folded header may take at most */

/* Folds each of the nr lines into rows of at most width bytes: a line breaks between its fields
   (three spaces), else after ", " or "; ", else at a space, else anywhere; the rows a line goes
   on in start with two spaces. Writes at most max rows into out; returns how many. */
uint32_t ui_header_wrap(const char *const *lines, uint32_t nr, int width,
                        char (*out)[UI_HEADER_ROW], uint32_t max);

#endif
