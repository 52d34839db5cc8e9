/* SPDX-License-Identifier: MIT */
/* module_text.c: owns the words for a module's symbols (module_text.h). */
#include "module_text.h"

#include "model/profile.h"

#include <inttypes.h>
#include <stdio.h>

void module_symbols_text(const struct sym_module_info *info, char *buf, size_t size)
{
        profile_module_info_text(info, buf, size); /* the views' words (the Hot modules table) */
}

const char *place_text(const struct sym_store *s, uint32_t function, uint32_t module,
                       const char *mod, uint64_t rel, char *buf, size_t size)
{
        if (function)
                return sym_name(s, function);
        if (module)
                snprintf(buf, size, "%s+0x%" PRIx64, mod, rel);
        else if (rel)
                snprintf(buf, size, "0x%" PRIx64, rel);
        else
                snprintf(buf, size, "[other]");
        return buf;
}
