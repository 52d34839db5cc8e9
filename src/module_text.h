/* SPDX-License-Identifier: MIT */
/* module_text.h: what a report says of a module's symbols (--replay -b's Hot modules, the csv
   export's): where its names came from, or what would give them. */
#ifndef ETWTOP_MODULE_TEXT_H
#define ETWTOP_MODULE_TEXT_H

#include <stddef.h>

#include "symbols/symbols.h"

/* "N from FILE", "PDB NAME {GUID}AGE", "build-id HEX", or "" when nothing is known. */
void module_symbols_text(const struct sym_module_info *info, char *buf, size_t size);

#endif
