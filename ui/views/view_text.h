/* SPDX-License-Identifier: MIT */
/* view_text.h (internal to ui/views): the names the views show for places in the code. */
#ifndef ETWTOP_UI_VIEW_TEXT_H
#define ETWTOP_UI_VIEW_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "symbols/symbols.h"

/* A module's name, "[unknown]" for none; valid until the next call on the store. */
const char *view_module_name(struct sym_store *st, uint32_t module);
/* "module!function+0x1a", "module+0x1a2b", "0x1a2b". */
void view_place_text(struct sym_store *st, struct sym_loc where, uint32_t function, uint64_t offset,
                     char *buf, size_t size);
/* "Waiting/WrQueue". */
void view_wait_text(uint8_t state, uint8_t reason, char *buf, size_t size);

#endif
