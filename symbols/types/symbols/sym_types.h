/* SPDX-License-Identifier: MIT */
/* sym_types.h: the symbol store's values that travel in the model's rows (where an address is,
   how far it is named), without the store's functions: the model's public headers include this
   one, so that ui/, which reads the model, sees no sym_* call (symbols.h is not on its path). */
#ifndef ETWTOP_SYMBOLS_SYM_TYPES_H
#define ETWTOP_SYMBOLS_SYM_TYPES_H

#include <stdint.h>

/* Where an address is, fixed at the time of the event: the module and the address relative to
   it (ELF: file offset; PE: RVA; kernel and JIT: the address itself). module 0: nowhere known. */
struct sym_loc {
        uint32_t module;
        uint64_t rel;
};

enum sym_state {
        SYM_RESOLVED = 0, /* function and offset from it */
        SYM_PENDING,      /* the module's symbols are loading: module+offset for now */
        SYM_NO_SYMBOL,    /* the module is loaded and has no symbol there: module+offset */
        SYM_NO_MODULE,    /* no image holds the address: the raw address */
        SYM_UNUSABLE,     /* the module's file is missing, unreadable or not the recorded one */
};

#endif
