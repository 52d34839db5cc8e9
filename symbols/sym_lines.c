/* SPDX-License-Identifier: MIT */
/* sym_lines.c: owns the symbol store's source lines and their cache. */
#include "symbols/symbols.h"
#include "symbols_impl.h"

#include "demangle.h"
#include "elf_module.h"
#include "symbols/kallsyms.h"
#include "symbols/module_name.h"
#include "symbols/sym_table.h"
#include "sym_server.h"
#include "sym_sources.h"
#include "symbols/pdb.h"
#include "util/in_file.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <strings.h>
#include <unistd.h>

/* ---- source lines ---- */

static struct src_entry *src_slot(struct sym_store *s, struct sym_loc loc, bool *is_found)
{
        uint64_t h = hash_mix64(loc.rel * 31 + loc.module);
        for (uint32_t j = (uint32_t)h & s->src_mask;; j = (j + 1) & s->src_mask) {
                struct src_entry *e = &s->src[j];
                if (!e->module) {
                        *is_found = false;
                        return e;
                }
                if (e->module == loc.module && e->rel == loc.rel) {
                        *is_found = true;
                        return e;
                }
        }
}

/* A Windows module's source line, from its PDB's line tables (no inline frames). */
static uint32_t pe_srcline(struct sym_store *s, struct module *m, struct sym_loc loc,
                           struct sym_srcframe *out, uint32_t max)
{
        struct pdb_line line;
        if (!max || symbols_module_want(s, m) != LS_LOADED || !m->lines || loc.rel > UINT32_MAX ||
            !pdb_lines_find(m->lines, (uint32_t)loc.rel, &line))
                return 0;
        struct sym_frame f;
        sym_resolve(s, loc, &f);
        out[0] = (struct sym_srcframe){f.function, sym_intern(s, line.file), line.line, 0};
        return 1;
}

/* The cache's entry of loc, new (is_full false, no line) where there was none: the table grows
   at half full. */
static struct src_entry *src_insert(struct sym_store *s, struct sym_loc loc)
{
        bool is_found;
        struct src_entry *e = src_slot(s, loc, &is_found);
        if (is_found)
                return e;
        *e = (struct src_entry){.rel = loc.rel, .module = loc.module};
        if (++s->nr_src * 2 > s->src_mask + 1) {
                struct src_entry *old = s->src;
                uint32_t old_cap = s->src_mask + 1;
                s->src = xcalloc(old_cap * 2, sizeof(*s->src));
                s->src_mask = old_cap * 2 - 1;
                for (uint32_t i = 0; i < old_cap; i++) {
                        if (!old[i].module)
                                continue;
                        *src_slot(s, (struct sym_loc){old[i].module, old[i].rel}, &is_found) =
                                old[i];
                }
                free(old);
                e = src_slot(s, loc, &is_found);
        }
        return e;
}

/* An ELF module's loaded symbols, or NULL (not one, or not loaded yet). */
static struct module *elf_loaded(struct sym_store *s, uint32_t module)
{
        struct module *m = s ? symbols_module_of(s, module) : NULL;
        if (!m || (m->kind != MOD_ELF && m->kind != MOD_VDSO))
                return NULL;
        return symbols_module_want(s, m) == LS_LOADED && m->elf ? m : NULL;
}

uint32_t sym_srcline(struct sym_store *s, struct sym_loc loc, struct sym_srcframe *out,
                     uint32_t max)
{
        struct module *m = s ? symbols_module_of(s, loc.module) : NULL;
        if (m && m->kind == MOD_PE)
                return pe_srcline(s, m, loc, out, max);
        if (!m || (m->kind != MOD_ELF && m->kind != MOD_VDSO))
                return 0;
        bool is_found;
        struct src_entry *e = src_slot(s, loc, &is_found);
        if (!is_found || !e->is_full) {
                if (!elf_loaded(s, loc.module))
                        return 0; /* not cached: computed once the module is there */
                if (!elf_module_has_dwarf(m->elf))
                        return 0; /* no line anywhere in it: nothing kept per address */
                uint64_t vaddr;
                struct elf_srcframe fr[MAX_SRC_FRAMES];
                uint32_t n = elf_module_vaddr(m->elf, loc.rel, &vaddr)
                                     ? elf_module_srcline(m->elf, vaddr, fr, MAX_SRC_FRAMES)
                                     : 0;
                if (s->nr_src_frames + n > s->cap_src_frames) {
                        while (s->nr_src_frames + n > s->cap_src_frames)
                                s->cap_src_frames *= 2;
                        s->src_frames =
                                xrealloc(s->src_frames, s->cap_src_frames * sizeof(*s->src_frames));
                }
                uint32_t first = s->nr_src_frames;
                for (uint32_t i = 0; i < n; i++)
                        s->src_frames[s->nr_src_frames++] = (struct sym_srcframe){
                                symbols_function_name(s, fr[i].function), sym_intern(s, fr[i].file),
                                fr[i].line, fr[i].column};
                e = src_insert(s, loc);
                e->first = first;
                e->nr = n;
                e->is_full = true;
                /* the innermost frame's line is the line table's (elf_module_line) */
                e->file = n ? s->src_frames[first].file : 0;
                e->line = n ? s->src_frames[first].line : 0;
        }
        uint32_t n = e->nr < max ? e->nr : max;
        memcpy(out, &s->src_frames[e->first], n * sizeof(*out));
        return n;
}

bool sym_srcline_line(struct sym_store *s, struct sym_loc loc, uint32_t *file, uint32_t *line)
{
        struct module *m = s ? symbols_module_of(s, loc.module) : NULL;
        if (m && m->kind == MOD_PE) {
                struct pdb_line pl;
                if (symbols_module_want(s, m) != LS_LOADED || !m->lines || loc.rel > UINT32_MAX ||
                    !pdb_lines_find(m->lines, (uint32_t)loc.rel, &pl) || !pl.line)
                        return false;
                *file = sym_intern(s, pl.file);
                *line = pl.line;
                return true;
        }
        bool is_found;
        struct src_entry *e = src_slot(s, loc, &is_found);
        if (!is_found) {
                if (!elf_loaded(s, loc.module))
                        return false;
                /* a module without DWARF (most of a trace's: no debug file): no line anywhere,
                   nothing kept per address (e.etl's Hot lines asked 11,238 such addresses) */
                if (!elf_module_has_dwarf(m->elf))
                        return false;
                uint64_t vaddr;
                const char *f = NULL;
                uint32_t l = 0;
                if (!elf_module_vaddr(m->elf, loc.rel, &vaddr) ||
                    !elf_module_line(m->elf, vaddr, &f, &l))
                        l = 0;
                e = src_insert(s, loc);
                e->file = l ? sym_intern(s, f) : 0;
                e->line = l;
        }
        *file = e->file;
        *line = e->line;
        return e->line != 0;
}
