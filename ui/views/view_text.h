/* SPDX-License-Identifier: MIT */
/* view_text.h (internal to ui/views): the text the views show for waits. */
#ifndef ETWTOP_UI_VIEW_TEXT_H
#define ETWTOP_UI_VIEW_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* "Waiting/WrQueue". */
void view_wait_text(uint8_t state, uint8_t reason, char *buf, size_t size);

#endif
