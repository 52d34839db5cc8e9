/* SPDX-License-Identifier: MIT */
/* sym_clr.c: owns the symbol store's .NET methods: JIT-compiled methods from a recording's CLR
   events, by module and process. */
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

/* ---- .NET: JIT-compiled methods from a recording's CLR events ---- */

/* The MOD_CLR module of the .NET module clr_id in sp, made on first sight (a method can come
   before its module's event: it is named "[managed]" until the module's event names it). */
static uint32_t clr_module_of(struct sym_store *s, struct space *sp, uint64_t clr_id)
{
        for (uint32_t i = 0; i < sp->nr_clr_modules; i++)
                if (sp->clr_modules[i].clr_id == clr_id)
                        return sp->clr_modules[i].module;
        if (sp->nr_clr_modules == sp->cap_clr_modules) {
                sp->cap_clr_modules = sp->cap_clr_modules ? sp->cap_clr_modules * 2 : 8;
                sp->clr_modules =
                        xrealloc(sp->clr_modules, sp->cap_clr_modules * sizeof(*sp->clr_modules));
        }
        uint32_t id = symbols_module_new(s, MOD_CLR, "", "[managed]");
        struct module *m = s->modules[id];
        m->jit_pid = sp->pid;
        snprintf(m->file_used, sizeof(m->file_used), "the recording's CLR method events");
        atomic_store_explicit(&m->state, LS_LOADED, memory_order_release);
        sp->clr_modules[sp->nr_clr_modules++] = (struct space_clr_module){clr_id, id};
        return id;
}

void sym_clr_module(struct sym_store *s, uint32_t pid, uint64_t clr_id, const char *il_path)
{
        if (!s || !il_path || !*il_path)
                return;
        struct space *sp = symbols_space_get(s, pid);
        /* the module's id first: making it may move s->modules, which the subscript's
           operands, unsequenced, could have read before */
        uint32_t id = clr_module_of(s, sp, clr_id);
        struct module *m = s->modules[id];
        if (strcmp(m->path, il_path) == 0)
                return;
        free(m->path);
        free(m->name);
        m->path = xstrdup(il_path);
        m->name = xstrdup(module_name_of_path(il_path));
        s->nr_changes++;
}

void sym_clr_method(struct sym_store *s, uint32_t pid, uint64_t clr_module_id, uint64_t start,
                    uint64_t size, const char *name)
{
        if (!s || !name || !*name || !size || start + size < start)
                return;
        struct space *sp = symbols_space_get(s, pid);
        uint32_t id = clr_module_of(s, sp, clr_module_id);
        struct module *m = s->modules[id];
        if (m->nr_methods == m->cap_methods) {
                m->cap_methods = m->cap_methods ? m->cap_methods * 2 : 64;
                m->methods = xrealloc(m->methods, m->cap_methods * sizeof(*m->methods));
        }
        m->methods[m->nr_methods++] = (struct clr_method){start, size, sym_intern(s, name)};
        m->is_methods_dirty = true;
        if (sp->nr_methods == sp->cap_methods) {
                sp->cap_methods = sp->cap_methods ? sp->cap_methods * 2 : 64;
                sp->methods = xrealloc(sp->methods, sp->cap_methods * sizeof(*sp->methods));
        }
        if (sp->nr_methods && start < sp->methods[sp->nr_methods - 1].start)
                sp->is_methods_sorted = false;
        else if (!sp->nr_methods)
                sp->is_methods_sorted = true;
        sp->methods[sp->nr_methods++] = (struct space_method){start, start + size, id};
        s->nr_changes++;
}

static int method_cmp(const void *a, const void *b)
{
        const struct space_method *x = a, *y = b;
        return x->start < y->start ? -1 : x->start > y->start;
}

const struct space_method *symbols_space_method_at(struct space *sp, uint64_t addr)
{
        if (!sp->nr_methods)
                return NULL;
        if (!sp->is_methods_sorted) {
                qsort(sp->methods, sp->nr_methods, sizeof(*sp->methods), method_cmp);
                sp->is_methods_sorted = true;
        }
        uint32_t lo = 0, hi = sp->nr_methods;
        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (sp->methods[mid].start <= addr)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        /* methods are short: look back a few for one that holds addr */
        for (uint32_t i = lo, n = 0; i > 0 && n < 8; i--, n++)
                if (addr < sp->methods[i - 1].end)
                        return &sp->methods[i - 1];
        return NULL;
}

void symbols_clr_table_refresh(struct sym_store *s, struct module *m)
{
        if (!m->is_methods_dirty)
                return;
        m->is_methods_dirty = false;
        struct sym_table *t = sym_table_new();
        for (uint32_t i = 0; i < m->nr_methods; i++) {
                const char *name = sym_name(s, m->methods[i].name);
                sym_table_add(t, m->methods[i].start, m->methods[i].size, name, strlen(name), 0);
        }
        sym_table_finish(t, 0);
        sym_table_free(m->table);
        m->table = t;
        if (s->cache && s->nr_cache) {
                memset(s->cache, 0, (size_t)(s->cache_mask + 1) * sizeof(*s->cache));
                s->nr_cache = 0;
        }
}
