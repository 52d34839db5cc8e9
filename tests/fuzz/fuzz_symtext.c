/* SPDX-License-Identifier: MIT */
/* fuzz_symtext.c: the text symbol parsers (/proc/kallsyms, /proc/modules, perf maps) from bytes.
   The first byte picks the parser: 'K', 'M', 'P', else its value modulo 3. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "symbols/kallsyms.h"
#include "symbols/perf_map.h"
#include "symbols/sym_table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Lookups at every symbol's edges and at a few fixed addresses. */
static void probe(const struct sym_table *t, const struct kallsyms *ks)
{
        static const uint64_t fixed[] = {0, 1, 0x1000, 0xffffffff81000000, UINT64_MAX};
        struct kallsyms_hit hit;
        uint32_t n = sym_table_count(t);
        for (uint32_t i = 0; i < n && i < 256; i++) {
                const struct sym_entry *e = sym_table_at(t, i);
                uint64_t addrs[] = {e->start, e->start + e->size - 1, e->start + e->size};
                for (size_t k = 0; k < sizeof(addrs) / sizeof(addrs[0]); k++) {
                        const struct sym_entry *f = sym_table_find(t, addrs[k]);
                        if (f && sym_table_name(t, f)[0] == '\n')
                                abort(); /* names are sanitized */
                        if (ks && kallsyms_lookup(ks, addrs[k], &hit) &&
                            (!hit.module || hit.module[0] != '['))
                                abort();
                }
        }
        for (size_t k = 0; k < sizeof(fixed) / sizeof(fixed[0]); k++) {
                sym_table_find(t, fixed[k]);
                if (ks)
                        kallsyms_lookup(ks, fixed[k], &hit);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 1)
                return 0;
        int which = data[0] == 'K' ? 0 : data[0] == 'M' ? 1 : data[0] == 'P' ? 2 : data[0] % 3;
        const char *text = (const char *)data + 1;
        size_t len = size - 1;

        if (which == 0) {
                struct kallsyms *ks = NULL;
                struct kallsyms_error err;
                if (kallsyms_parse_mem(text, len, &ks, &err) == 0) {
                        probe(kallsyms_table(ks), ks);
                        uint64_t start, end;
                        kallsyms_kernel_text(ks, &start, &end);
                } else if (ks) {
                        abort(); /* a failure leaves nothing behind */
                }
                kallsyms_free(ks);
        } else if (which == 1) {
                struct kallsyms_module *mods = NULL;
                uint32_t nr = 0;
                struct kallsyms_error err;
                if (kallsyms_modules_parse_mem(text, len, &mods, &nr, &err) == 0) {
                        for (uint32_t i = 0; i < nr; i++) {
                                if (!mods[i].base || !mods[i].name[0])
                                        abort();
                        }
                }
                free(mods);
        } else {
                struct sym_table *t = sym_table_new();
                struct perf_map_error err;
                perf_map_parse_mem(text, len, t, &err);
                sym_table_finish(t, PERF_MAP_MAX_INFERRED_SIZE);
                probe(t, NULL);
                sym_table_free(t);
        }
        return 0;
}
