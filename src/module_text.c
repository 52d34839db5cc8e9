/* SPDX-License-Identifier: MIT */
/* module_text.c: owns the words for a module's symbols (module_text.h). */
#include "module_text.h"

#include <inttypes.h>
#include <stdio.h>

void module_symbols_text(const struct sym_module_info *info, char *buf, size_t size)
{
        buf[0] = '\0';
        if (info->is_loaded && info->nr_symbols) {
                snprintf(buf, size, "%u from %s", info->nr_symbols, info->file_used);
        } else if (info->has_pdb) {
                snprintf(buf, size, "PDB %s %s", info->pdb_name, info->pdb_signature);
        } else if (info->build_id_size) {
                size_t n = (size_t)snprintf(buf, size, "build-id ");
                for (uint32_t b = 0; b < info->build_id_size && n < size; b++)
                        n += (size_t)snprintf(buf + n, size - n, "%02x", info->build_id[b]);
        }
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
