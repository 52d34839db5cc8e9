/* SPDX-License-Identifier: MIT */
/* sym_evict.c: owns giving back the symbols of modules no live process maps any more (a live
   store's memory follows what runs now, not every binary seen), loaded again on demand. */
#include "symbols/symbols.h"
#include "symbols_impl.h"

#include "elf_module.h"
#include "symbols/sym_table.h"
#include "util/xalloc.h"

#include <stdlib.h>

/* A module no process maps at this many sweeps in a row gives its symbols back: a program
   started over and over (a compiler in a build loop) between two of its runs keeps them. */
#define EVICT_AFTER_SWEEPS 2

uint32_t sym_store_evict_unmapped(struct sym_store *s)
{
        if (!s || !s->opt.is_live || s->nr_modules < 2)
                return 0;
        bool *is_mapped = xcalloc(s->nr_modules, sizeof(*is_mapped));
        for (uint32_t i = 0; i <= s->spaces_mask; i++) {
                const struct space *sp = s->spaces[i];
                if (!sp || sp->is_ended)
                        continue;
                for (uint32_t k = 0; k < sp->nr; k++)
                        if (sp->maps[k].module < s->nr_modules)
                                is_mapped[sp->maps[k].module] = true;
        }
        uint32_t n = 0;
        for (uint32_t id = 1; id < s->nr_modules; id++) {
                struct module *m = s->modules[id];
                if (is_mapped[id] || m->kind != MOD_ELF) {
                        m->nr_unmapped_sweeps = 0;
                        continue;
                }
                /* the loader is done with a loaded module: only this thread reads it now */
                if (atomic_load_explicit(&m->state, memory_order_acquire) != LS_LOADED ||
                    ++m->nr_unmapped_sweeps < EVICT_AFTER_SWEEPS)
                        continue;
                /* the answers already given stay (the caches hold names, not the table); a
                   lookup that misses them asks for the module again (symbols_module_want) */
                m->nr_evicted_symbols = (uint32_t)sym_table_count(elf_module_table(m->elf));
                m->is_evicted = true;
                elf_module_free(m->elf);
                m->elf = NULL;
                m->nr_unmapped_sweeps = 0;
                atomic_store_explicit(&m->state, LS_NEW, memory_order_release);
                s->st.nr_evicted++;
                n++;
        }
        free(is_mapped);
        return n;
}
