/* SPDX-License-Identifier: MIT */
/* module_text.h: what a report says of a module's symbols (--replay -b's Hot modules, the csv
   export's): where its names came from, or what would give them; and what they call a place. */
#ifndef ETWTOP_MODULE_TEXT_H
#define ETWTOP_MODULE_TEXT_H

#include <stddef.h>

#include "symbols/symbols.h"

/* "N from FILE", "PDB NAME {GUID}AGE", "build-id HEX", or "" when nothing is known. */
void module_symbols_text(const struct sym_module_info *info, char *buf, size_t size);

/* What a report calls a hot place: its function's name, else MODULE+0xREL (mod: the module's
   name as the report shows it), 0xADDRESS, or [other]. The name returned is the store's or buf. */
const char *place_text(const struct sym_store *s, uint32_t function, uint32_t module,
                       const char *mod, uint64_t rel, char *buf, size_t size);

#endif
