/* SPDX-License-Identifier: MIT */
/* sym_lookup.c: owns the symbol store's lookups: an address placed in its module (sym_locate),
   named (sym_resolve, the address cache), formatted, and a module's facts. */
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

/* ---- lookups ---- */

/* The space of pid, through the last one found for its kind of address (a stack's frames
   name one process, and the kernel, over and over). Spaces live as long as the store. */
static struct space *space_find_cached(struct sym_store *s, uint32_t pid, bool is_kernel)
{
        struct space *sp = s->last_space[is_kernel];
        if (sp && sp->pid == pid)
                return sp;
        sp = symbols_space_find(s, pid);
        if (sp)
                s->last_space[is_kernel] = sp;
        return sp;
}

/* symbols_space_lookup, trying the mapping found last first (mappings do not overlap: one that
   holds addr is the one) */
static const struct mapping *space_lookup_hinted(struct space *sp, uint64_t addr)
{
        if (sp->hint < sp->nr) {
                const struct mapping *m = &sp->maps[sp->hint];
                if (addr >= m->start && addr < m->end)
                        return m->module ? m : NULL;
        }
        const struct mapping *m = symbols_space_lookup(sp, addr);
        if (m)
                sp->hint = (uint32_t)(m - sp->maps);
        return m;
}

struct sym_loc sym_locate(struct sym_store *s, uint32_t pid, uint64_t addr)
{
        bool is_everyones;
        return sym_locate_ex(s, pid, addr, &is_everyones);
}

struct sym_loc sym_locate_ex(struct sym_store *s, uint32_t pid, uint64_t addr, bool *is_everyones)
{
        struct sym_loc loc = {0, addr};
        *is_everyones = false;
        if (!s)
                return loc;
        bool is_kernel = addr >= KERNEL_START;
        if (is_kernel && s->nr_bpf_progs) {
                /* a BPF program's text, which the kernel's image map may span */
                uint32_t id = symbols_bpf_module_at(s, addr, &loc.rel);
                if (id) {
                        loc.module = id;
                        *is_everyones = true;
                        return loc;
                }
        }
        struct space *sp = space_find_cached(s, is_kernel ? 0 : pid, is_kernel);
        const struct mapping *m = sp ? space_lookup_hinted(sp, addr) : NULL;
        /* the kernel's own images place it: every process's answer */
        *is_everyones = m && is_kernel;
        if (!m && is_kernel && pid != 0) {
                sp = symbols_space_find(s, pid);
                m = sp ? symbols_space_lookup(sp, addr) : NULL;
        }
        if (!m && !is_kernel && pid != 0 && s->has_kernel32) {
                /* a 32-bit kernel's (i686, armv7 perf.data: its text at 0x80000000 or
                   0xc0000000, ARM's modules just below), which KERNEL_START does not know: the
                   kernel's images, as perf places them by the sample's mode (a 64-bit perf
                   3.4's kernel map starts at 0: only a kernel of 32 bits is looked for so) */
                struct space *k = space_find_cached(s, 0, true);
                m = k && k->nr ? space_lookup_hinted(k, addr) : NULL;
                *is_everyones = m != NULL;
        }
        if (m) {
                loc.module = m->module;
                loc.rel = m->is_absolute ? addr : addr - m->start + m->pgoff;
                return loc;
        }
        if (is_kernel) {
                /* Linux kernel modules and kernel text outside the described image, when a
                   Linux kernel is there to name them: its symbols, or its image alone where its
                   modules were not described (a Windows trace's driver addresses that no image
                   event described stay unknown; so do a perf.data's outside its kernel's and
                   modules' maps, as perf report has them) */
                if (s->opt.is_live || s->nr_ksyms > s->nr_bpf_ksyms || s->ksym_set ||
                    (s->has_linux_kernel && !s->has_kernel_images))
                        loc.module = s->kernel_module;
                return loc;
        }
        if (pid) {
                /* .NET code a recording's CLR events described */
                struct space *w = sp && sp->pid == pid ? sp : symbols_space_find(s, pid);
                const struct space_method *jm = w ? symbols_space_method_at(w, addr) : NULL;
                if (jm) {
                        loc.module = jm->module;
                        return loc;
                }
        }
        if (s->opt.is_live && pid) {
                /* JIT code: /tmp/perf-PID.map, when the process writes one (looked for again
                   after the next sym_store_poll, the screen's refresh: a JIT writes it as it
                   goes). Not every process gets a module: most have none, and thousands come
                   and go. */
                struct space *w = sp && sp->pid == pid ? sp : symbols_space_find(s, pid);
                if (!w)
                        w = symbols_space_probe(s, pid);
                if (!w->jit_module) {
                        /* looked for once per refresh; an ended process writes no more: once
                           after its end */
                        if (w->jit_checked == s->nr_polls + 1 || (w->is_ended && w->jit_checked))
                                return loc;
                        char path[64], name[64];
                        snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
                        if (access(path, R_OK) != 0) {
                                w->jit_checked = s->nr_polls + 1;
                                return loc;
                        }
                        snprintf(name, sizeof(name), "perf-%u.map", pid);
                        w->jit_module = symbols_module_new(s, MOD_JIT, path, name);
                        s->modules[w->jit_module]->jit_pid = pid;
                }
                loc.module = w->jit_module;
        }
        return loc;
}

static struct cache_entry *cache_slot(struct sym_store *s, struct sym_loc loc, bool *is_found)
{
        uint64_t h = hash_mix64(loc.rel ^ ((uint64_t)loc.module << 40) ^ loc.module);
        for (uint32_t j = (uint32_t)h & s->cache_mask;; j = (j + 1) & s->cache_mask) {
                struct cache_entry *e = &s->cache[j];
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

static void cache_grow(struct sym_store *s)
{
        uint32_t old_cap = s->cache_mask + 1;
        struct cache_entry *old = s->cache;
        if (old_cap * 2 > (s->opt.is_live ? CACHE_MAX_ENTRIES_LIVE : CACHE_MAX_ENTRIES)) {
                /* bounded: start over rather than grow without end */
                memset(s->cache, 0, old_cap * sizeof(*s->cache));
                s->nr_cache = 0;
                return;
        }
        s->cache = xcalloc(old_cap * 2, sizeof(*s->cache));
        s->cache_mask = old_cap * 2 - 1;
        s->nr_cache = 0;
        for (uint32_t i = 0; i < old_cap; i++) {
                if (!old[i].module)
                        continue;
                bool is_found;
                struct cache_entry *e =
                        cache_slot(s, (struct sym_loc){old[i].module, old[i].rel}, &is_found);
                *e = old[i];
                s->nr_cache++;
        }
        free(old);
}

/* The table and the address in it for loc, when the module is loaded. */
static const struct sym_table *table_of(struct module *m, uint64_t rel, uint64_t *addr)
{
        switch (m->kind) {
        case MOD_ELF:
        case MOD_VDSO:
                if (!m->elf || !elf_module_vaddr(m->elf, rel, addr))
                        return NULL;
                return elf_module_table(m->elf);
        default: *addr = rel; return m->table;
        }
}

/* The function name (symbols_function_name) of the symbol se of t, module m's table: an ELF
   image's from the store's memo by its start (struct fn_memo). */
static uint32_t symbol_function(struct sym_store *s, const struct module *m, uint32_t module,
                                const struct sym_table *t, const struct sym_entry *se)
{
        if (m->kind != MOD_ELF && m->kind != MOD_VDSO) {
                s->st.nr_names++;
                return symbols_function_name(s, sym_table_name(t, se));
        }
        if (!s->fn_memo)
                s->fn_memo = xcalloc(FN_MEMO_SLOTS, sizeof(*s->fn_memo));
        struct fn_memo *f =
                &s->fn_memo[hash_mix64(se->start ^ (uint64_t)module << 44) & (FN_MEMO_SLOTS - 1)];
        if (f->module == module && f->start == se->start)
                return f->function;
        s->st.nr_names++;
        *f = (struct fn_memo){se->start, module, symbols_function_name(s, sym_table_name(t, se))};
        return f->function;
}

void sym_resolve(struct sym_store *s, struct sym_loc loc, struct sym_frame *out)
{
        *out = (struct sym_frame){SYM_NO_MODULE, loc.module, 0, loc.rel};
        if (!s)
                return;
        s->st.nr_lookups++;
        struct module *m = symbols_module_of(s, loc.module);
        if (!m)
                return;
        if (m->kind == MOD_KERNEL)
                symbols_kernel_table_refresh(s);
        else if (m->kind == MOD_CLR)
                symbols_clr_table_refresh(s, m);
        bool is_found;
        struct cache_entry *e = cache_slot(s, loc, &is_found);
        if (is_found) {
                s->st.nr_cache_hits++;
                *out = (struct sym_frame){e->state, loc.module, e->function, e->offset};
                return;
        }
        int st = symbols_module_want(s, m);
        if (st == LS_QUEUED) {
                out->state = SYM_PENDING;
                return; /* not cached: asked again until the module is there */
        }
        if (st == LS_FAILED) {
                out->state = SYM_UNUSABLE;
        } else if (m->ks) {
                /* the live kernel: the module of each symbol from kallsyms */
                struct kallsyms_hit hit;
                if (kallsyms_lookup(m->ks, loc.rel, &hit)) {
                        char name[512];
                        if (hit.module && strcmp(hit.module, KALLSYMS_KERNEL_MODULE) != 0)
                                snprintf(name, sizeof(name), "%s %s", hit.name, hit.module);
                        else
                                snprintf(name, sizeof(name), "%s", hit.name);
                        out->state = SYM_RESOLVED;
                        out->function = symbols_function_name(s, name);
                        out->offset = hit.offset;
                } else {
                        out->state = SYM_NO_SYMBOL;
                }
        } else {
                uint64_t addr = 0;
                const struct sym_table *t = table_of(m, loc.rel, &addr);
                const struct sym_entry *se = t ? sym_table_find(t, addr) : NULL;
                if (se) {
                        out->state = SYM_RESOLVED;
                        out->function = symbol_function(s, m, loc.module, t, se);
                        out->offset = addr - se->start;
                } else {
                        out->state = SYM_NO_SYMBOL;
                }
        }
        /* the slot may be stale after symbols_module_want (synchronous loads intern nothing, but a
           refresh may clear the cache): look it up again */
        e = cache_slot(s, loc, &is_found);
        *e = (struct cache_entry){loc.rel, loc.module, out->function, out->offset,
                                  (uint8_t)out->state};
        if (++s->nr_cache * 2 > s->cache_mask + 1)
                cache_grow(s);
}

size_t sym_format(struct sym_store *s, struct sym_loc loc, char *buf, size_t size)
{
        struct sym_frame f;
        int n;
        sym_resolve(s, loc, &f);
        const struct module *m = s ? symbols_module_of(s, loc.module) : NULL;
        if (!m)
                n = snprintf(buf, size, "0x%" PRIx64, loc.rel);
        else if (f.state == SYM_RESOLVED && f.offset)
                n = snprintf(buf, size, "%s!%s+0x%" PRIx64, m->name, sym_name(s, f.function),
                             f.offset);
        else if (f.state == SYM_RESOLVED)
                n = snprintf(buf, size, "%s!%s", m->name, sym_name(s, f.function));
        else
                n = (int)module_name_format_offset(buf, size, m->name, loc.rel);
        return n < 0 ? 0 : (size_t)n;
}

/* sym_function_range, and sym_function_range_loaded where !may_load. */
static bool function_range(struct sym_store *s, struct sym_loc loc, uint64_t *start_rel,
                           uint64_t *size, bool may_load)
{
        struct module *m = s ? symbols_module_of(s, loc.module) : NULL;
        if (!m)
                return false;
        if (!may_load && atomic_load_explicit(&m->state, memory_order_acquire) != LS_LOADED)
                return false;
        if (m->kind == MOD_KERNEL)
                symbols_kernel_table_refresh(s);
        else if (m->kind == MOD_CLR)
                symbols_clr_table_refresh(s, m);
        if (symbols_module_want(s, m) != LS_LOADED)
                return false;
        uint64_t addr = loc.rel;
        const struct sym_table *t = m->ks ? kallsyms_table(m->ks) : table_of(m, loc.rel, &addr);
        const struct sym_entry *se = t ? sym_table_find(t, addr) : NULL;
        if (!se)
                return false;
        /* rel and the table's addresses differ by a constant within the function (ELF: one
           segment's offset to vaddr; the others: none) */
        *start_rel = loc.rel - (addr - se->start);
        *size = se->size;
        return true;
}

bool sym_function_range(struct sym_store *s, struct sym_loc loc, uint64_t *start_rel,
                        uint64_t *size)
{
        return function_range(s, loc, start_rel, size, true);
}

bool sym_function_range_loaded(struct sym_store *s, struct sym_loc loc, uint64_t *start_rel,
                               uint64_t *size)
{
        return function_range(s, loc, start_rel, size, false);
}

bool sym_module_info(struct sym_store *s, uint32_t module, struct sym_module_info *info)
{
        struct module *m = s ? symbols_module_of(s, module) : NULL;
        memset(info, 0, sizeof(*info));
        if (!m)
                return false;
        int st = atomic_load_explicit(&m->state, memory_order_acquire);
        /* given back (sym_evict.c) and not loaded again yet: as it was loaded */
        bool is_kept = m->is_evicted && st == LS_NEW;
        bool is_done = st == LS_LOADED || st == LS_FAILED || is_kept;
        info->name = m->name;
        info->path = m->path;
        info->file_used = is_done ? m->file_used : "";
        info->note = is_done ? m->note : "";
        info->build_id_size = m->build_id_size;
        memcpy(info->build_id, m->build_id, m->build_id_size);
        info->is_loaded = st == LS_LOADED || is_kept;
        if (is_kept)
                info->nr_symbols = m->nr_evicted_symbols;
        if (m->kind == MOD_CLR)
                symbols_clr_table_refresh(s, m);
        if (st == LS_LOADED) {
                uint64_t dummy;
                const struct sym_table *t = m->kind == MOD_ELF || m->kind == MOD_VDSO
                                                    ? (m->elf ? elf_module_table(m->elf) : NULL)
                                                    : table_of(m, 0, &dummy);
                info->nr_symbols =
                        m->ks ? sym_table_count(kallsyms_table(m->ks)) : sym_table_count(t);
        }
        info->has_pdb = m->has_pdb;
        info->pdb_name = m->pdb_name ? m->pdb_name : "";
        if (m->has_pdb) {
                const uint8_t *g = m->pdb_guid;
                snprintf(info->pdb_signature, sizeof(info->pdb_signature),
                         "%02X%02X%02X%02X%02X%02X%02X%02X%02X%02X%02X%02X%02X%02X%02X%02X%X", g[3],
                         g[2], g[1], g[0], g[5], g[4], g[7], g[6], g[8], g[9], g[10], g[11], g[12],
                         g[13], g[14], g[15], m->pdb_age);
        }
        return true;
}
