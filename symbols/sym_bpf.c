/* SPDX-License-Identifier: MIT */
/* sym_bpf.c: BPF programs as modules of their own: a recording's KernelSymbol of the kernel's
   "bpf" module (a perf.data's KSYMBOL, /proc/kallsyms' "[bpf]") is a program the kernel's image
   does not hold, its text at an address of its own; perf report makes each such program a
   dso named as its symbol (bpf_prog_TAG_NAME), and so does the store: a module of one symbol,
   placed before the kernel's images (whose map may span it). */
#include "symbols_impl.h"

#include <stdio.h>
#include <string.h>

#include "symbols/sym_table.h"
#include "util/xalloc.h"

/* The program at addr, or NULL: the last that starts at or below addr, when it holds addr. */
static const struct bpf_prog *prog_at(const struct sym_store *s, uint64_t addr, uint32_t *index)
{
        uint32_t lo = 0, hi = s->nr_bpf_progs;
        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (s->bpf_progs[mid].start <= addr)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        *index = lo; /* where a program starting at addr goes */
        if (!lo)
                return NULL;
        const struct bpf_prog *p = &s->bpf_progs[lo - 1];
        return addr - p->start < p->size ? p : NULL;
}

void symbols_bpf_program(struct sym_store *s, uint64_t addr, uint64_t size, const char *name)
{
        if (!size || addr + size < addr || !name || !*name)
                return;
        uint32_t at;
        const struct bpf_prog *p = prog_at(s, addr, &at);
        if (p && p->start == addr && p->size == size &&
            strcmp(s->modules[p->module]->name, name) == 0)
                return; /* told again (a rundown's and a trace's end both list it) */
        uint32_t id = symbols_module_new(s, MOD_BPF, name, name);
        struct module *m = s->modules[id];
        m->table = sym_table_new();
        sym_table_add(m->table, 0, size, name, strlen(name), 0);
        sym_table_finish(m->table, size);
        snprintf(m->file_used, sizeof(m->file_used), "the recording's kernel symbols");
        atomic_store_explicit(&m->state, LS_LOADED, memory_order_release);
        if (at && s->bpf_progs[at - 1].start == addr) {
                s->bpf_progs[at - 1] = (struct bpf_prog){addr, size, id}; /* loaded there later */
        } else {
                if (s->nr_bpf_progs == s->cap_bpf_progs) {
                        s->cap_bpf_progs = s->cap_bpf_progs ? s->cap_bpf_progs * 2 : 16;
                        s->bpf_progs =
                                xrealloc(s->bpf_progs, s->cap_bpf_progs * sizeof(*s->bpf_progs));
                }
                memmove(&s->bpf_progs[at + 1], &s->bpf_progs[at],
                        (s->nr_bpf_progs - at) * sizeof(*s->bpf_progs));
                s->bpf_progs[at] = (struct bpf_prog){addr, size, id};
                s->nr_bpf_progs++;
        }
        s->nr_changes++;
}

uint32_t symbols_bpf_module_at(const struct sym_store *s, uint64_t addr, uint64_t *rel)
{
        uint32_t at;
        const struct bpf_prog *p = s->nr_bpf_progs ? prog_at(s, addr, &at) : NULL;
        if (!p)
                return 0;
        *rel = addr - p->start;
        return p->module;
}
