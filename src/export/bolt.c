/* SPDX-License-Identifier: MIT */
/* bolt.c: owns `--export bolt`: one binary's LBR branch edges as BOLT's fdata (what perf2bolt
   writes and `llvm-bolt -data=FILE` reads), or, from a trace without LBR, its samples in
   fdata's no_lbr form; the binary chosen by --binary, else the one most branches touch. */
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export/pgo_format.h"
#include "export/writers.h"
#include "model/profile.h"
#include "symbols/symbols.h"
#include "outbuf.h"
#include "util/in_file.h"
#include "util/xalloc.h"

/* ---- the binary's local symbols: BOLT names them name/N ---- */

struct bolt_local {
        char *name;           /* owned */
        uint64_t vaddr;       /* st_value */
        uint64_t file_offset; /* the symbol's place as a rel of the module (ELF file offset) */
        uint32_t index;       /* in the symbol table: the order among equal addresses */
};

struct bolt_locals {
        struct bolt_local *v; /* owned, by (name, vaddr, index) */
        uint32_t nr, cap;
};

static int local_cmp(const void *a, const void *b)
{
        const struct bolt_local *x = a, *y = b;
        int c = strcmp(x->name, y->name);
        if (c)
                return c;
        if (x->vaddr != y->vaddr)
                return x->vaddr < y->vaddr ? -1 : 1;
        return x->index < y->index ? -1 : x->index > y->index;
}

static void locals_free(struct bolt_locals *l)
{
        for (uint32_t i = 0; i < l->nr; i++)
                free(l->v[i].name);
        free(l->v);
        memset(l, 0, sizeof(*l));
}

/* The file offset of vaddr through the PT_LOAD that holds it; false when none does. */
static bool vaddr_to_offset(Elf *elf, size_t nr_phdrs, uint64_t vaddr, uint64_t *offset)
{
        for (size_t i = 0; i < nr_phdrs; i++) {
                GElf_Phdr ph;
                if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
                        continue;
                if (vaddr >= ph.p_vaddr && vaddr - ph.p_vaddr < ph.p_filesz) {
                        *offset = vaddr - ph.p_vaddr + ph.p_offset;
                        return true;
                }
        }
        return false;
}

/* Reads the local symbols of the ELF file at path (.symtab: .dynsym holds no local ones) that
   BOLT counts in its names: every defined one but files and sections. 0 or -errno. */
static int locals_read(struct bolt_locals *l, const char *path)
{
        int fd = in_file_open(path, 0, NULL);
        if (fd < 0)
                return fd;
        elf_version(EV_CURRENT);
        Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
        size_t nr_phdrs = 0;
        if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &nr_phdrs) != 0) {
                elf_end(elf);
                close(fd);
                return -EBADMSG;
        }
        Elf_Scn *scn = NULL;
        while ((scn = elf_nextscn(elf, scn))) {
                GElf_Shdr sh;
                if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
                        continue;
                Elf_Data *data = elf_getdata(scn, NULL);
                size_t n = data ? sh.sh_size / sh.sh_entsize : 0;
                for (size_t i = 1; i < n; i++) {
                        GElf_Sym sym;
                        if (!gelf_getsym(data, (int)i, &sym) ||
                            GELF_ST_BIND(sym.st_info) != STB_LOCAL || sym.st_shndx == SHN_UNDEF)
                                continue;
                        int type = GELF_ST_TYPE(sym.st_info);
                        if (type == STT_FILE || type == STT_SECTION)
                                continue;
                        const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
                        if (!name || !*name)
                                continue;
                        uint64_t off = UINT64_MAX;
                        if (!vaddr_to_offset(elf, nr_phdrs, sym.st_value, &off))
                                off = UINT64_MAX; /* not in the file: never a function's */
                        if (l->nr == l->cap) {
                                l->cap = l->cap ? 2 * l->cap : 256;
                                l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
                        }
                        l->v[l->nr++] =
                                (struct bolt_local){xstrdup(name), sym.st_value, off, (uint32_t)i};
                }
                break;
        }
        elf_end(elf);
        close(fd);
        if (l->nr)
                qsort(l->v, l->nr, sizeof(*l->v), local_cmp);
        return 0;
}

/* BOLT's counter of the local symbol name at file offset start: 1 for the first of that name in
   address order; 0 when no local symbol of that name is there (a global one). A symbol file
   whose program headers place none of them (a debug file's may not): the one local symbol of
   that name, if there is just one. */
static uint32_t local_rank(const struct bolt_locals *l, const char *name, uint64_t start)
{
        uint32_t lo = 0, hi = l->nr;
        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (strcmp(l->v[mid].name, name) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        uint32_t nr = 0, nr_placed = 0;
        for (uint32_t i = lo; i < l->nr && strcmp(l->v[i].name, name) == 0; i++, nr++) {
                if (l->v[i].file_offset == start)
                        return i - lo + 1;
                nr_placed += l->v[i].file_offset != UINT64_MAX;
        }
        return nr == 1 && !nr_placed ? 1 : 0;
}

/* ---- the binary ---- */

struct bolt_weight {
        uint32_t module;
        uint64_t weight;
};

static void add_weight(struct bolt_weight **w, uint32_t *nr, uint32_t *cap, uint32_t module,
                       uint64_t n)
{
        if (!module)
                return;
        for (uint32_t i = 0; i < *nr; i++)
                if ((*w)[i].module == module) {
                        (*w)[i].weight += n;
                        return;
                }
        if (*nr == *cap) {
                *cap = *cap ? 2 * *cap : 16;
                *w = xrealloc(*w, *cap * sizeof(**w));
        }
        (*w)[(*nr)++] = (struct bolt_weight){module, n};
}

static const char *base_name(const char *path)
{
        const char *slash = strrchr(path, '/');
        return slash ? slash + 1 : path;
}

/* Whether module is the binary --binary names: its short name, its recorded path, or a path
   whose file name is the recorded file's. */
static bool is_named(struct sym_store *store, uint32_t module, const char *want)
{
        struct sym_module_info info;
        if (!sym_module_info(store, module, &info))
                return false;
        return strcmp(info.name, want) == 0 || strcmp(info.path, want) == 0 ||
               strcmp(base_name(info.path), base_name(want)) == 0;
}

/* An ELF file of the traced system: not the kernel, [vdso] or a Windows image. */
static bool is_elf_binary(struct sym_store *store, uint32_t module)
{
        struct sym_module_info info;
        return sym_module_info(store, module, &info) && info.path[0] == '/' && !info.has_pdb &&
               !info.pdb_signature[0];
}

/* The module of w the export is for: --binary's, else the heaviest ELF binary. 0 with a
   message on stderr when there is none (the writer then fails with -ENODATA: "writing OUT: No
   data available" after it, and no file is left). */
static uint32_t choose(struct sym_store *store, const struct bolt_weight *w, uint32_t nr,
                       const char *want, const char *what)
{
        uint32_t best = 0;
        uint64_t best_weight = 0;
        for (uint32_t i = 0; i < nr; i++) {
                bool ok = want ? is_named(store, w[i].module, want)
                               : is_elf_binary(store, w[i].module);
                if (ok && w[i].weight > best_weight) {
                        best = w[i].module;
                        best_weight = w[i].weight;
                }
        }
        if (best)
                return best;
        fprintf(stderr, "etwtop: --export bolt: %s%s%s; the %s touch:", want ? "no binary " : "",
                want ? want : "no ELF binary", want ? " in the trace" : " in the trace", what);
        for (uint32_t i = 0; i < nr && i < 16; i++) {
                struct sym_module_info info;
                if (sym_module_info(store, w[i].module, &info))
                        fprintf(stderr, " %s", info.path[0] ? info.path : info.name);
        }
        fprintf(stderr, "%s\n", nr ? "" : " none");
        return 0;
}

/* ---- fdata ---- */

struct bolt_line {
        char *from, *to; /* owned BOLT names; NULL: [unknown] */
        uint64_t from_off, to_off;
        uint64_t mispreds; /* of count, the mispredicted (where the LBR says) */
        uint64_t count;
};

static int str_cmp(const char *x, const char *y)
{
        if (!x || !y)
                return x ? 1 : y ? -1 : 0;
        return strcmp(x, y);
}

static int line_cmp(const void *a, const void *b)
{
        const struct bolt_line *x = a, *y = b;
        int c = str_cmp(x->from, y->from);
        if (c)
                return c;
        if (x->from_off != y->from_off)
                return x->from_off < y->from_off ? -1 : 1;
        if ((c = str_cmp(x->to, y->to)))
                return c;
        return x->to_off < y->to_off ? -1 : x->to_off > y->to_off;
}

struct bolt_writer {
        struct sym_store *store; /* borrowed */
        uint32_t module;         /* the binary */
        struct bolt_locals locals;
        struct bolt_line *lines; /* owned */
        uint32_t nr_lines, cap_lines;
};

/* BOLT's name of the function a place of the binary is in (owned), or NULL: outside the
   binary, or in no function of its symbols. */
static char *fdata_name(struct bolt_writer *w, const struct branches_end *e, uint64_t *offset)
{
        *offset = 0;
        if (e->loc.module != w->module || e->state != SYM_RESOLVED || !e->function)
                return NULL;
        const char *sym = sym_name(w->store, e->function);
        char plt[512];
        size_t n = strlen(sym);
        if (n > 4 && n < sizeof(plt) && strcmp(sym + n - 4, "@plt") == 0) {
                /* BOLT names a PLT entry NAME@PLT */
                snprintf(plt, sizeof(plt), "%.*s@PLT", (int)(n - 4), sym);
                sym = plt;
        }
        uint32_t rank = local_rank(&w->locals, sym, e->loc.rel - e->offset);
        size_t len = pgo_bolt_name(NULL, 0, sym, rank);
        char *name = xmalloc(len + 1);
        pgo_bolt_name(name, len + 1, sym, rank);
        *offset = e->offset;
        return name;
}

static void add_line(struct bolt_writer *w, char *from, uint64_t from_off, char *to,
                     uint64_t to_off, uint64_t mispreds, uint64_t count)
{
        if (w->nr_lines == w->cap_lines) {
                w->cap_lines = w->cap_lines ? 2 * w->cap_lines : 1024;
                w->lines = xrealloc(w->lines, w->cap_lines * sizeof(*w->lines));
        }
        w->lines[w->nr_lines++] = (struct bolt_line){from, to, from_off, to_off, mispreds, count};
}

/* Sorts the lines and merges equal ones (edges whose unknown ends are one [unknown]). */
static void merge_lines(struct bolt_writer *w)
{
        if (!w->nr_lines)
                return;
        qsort(w->lines, w->nr_lines, sizeof(*w->lines), line_cmp);
        uint32_t o = 0;
        for (uint32_t i = 0; i < w->nr_lines; i++) {
                if (o && line_cmp(&w->lines[o - 1], &w->lines[i]) == 0) {
                        w->lines[o - 1].count += w->lines[i].count;
                        w->lines[o - 1].mispreds += w->lines[i].mispreds;
                        free(w->lines[i].from);
                        free(w->lines[i].to);
                        continue;
                }
                w->lines[o++] = w->lines[i];
        }
        w->nr_lines = o;
}

static void writer_fini(struct bolt_writer *w)
{
        for (uint32_t i = 0; i < w->nr_lines; i++) {
                free(w->lines[i].from);
                free(w->lines[i].to);
        }
        free(w->lines);
        locals_free(&w->locals);
}

/* The local symbols of the module's file. -ENODATA, with a message, when no symbols of the
   binary were read: BOLT finds functions by name, and every edge would be [unknown]. */
static int writer_locals(struct bolt_writer *w)
{
        struct sym_module_info info;
        /* the file used: a path (relative where --symbol-path is), not another source */
        if (!sym_module_info(w->store, w->module, &info) || !info.is_loaded || !info.file_used[0] ||
            access(info.file_used, R_OK) != 0 || !info.nr_symbols) {
                fprintf(stderr,
                        "etwtop: --export bolt: no symbols of %s were read, and BOLT finds "
                        "functions by name: give the binary with --symbol-path DIR\n",
                        sym_module_info(w->store, w->module, &info) ? info.path : "the binary");
                return -ENODATA;
        }
        char path[4096];
        snprintf(path, sizeof(path), "%s", info.file_used);
        if (locals_read(&w->locals, path) < 0)
                fprintf(stderr,
                        "etwtop: --export bolt: %s: its local symbols are not read (a static "
                        "function is then named as a global one)\n",
                        path);
        return 0;
}

static int put_lines(struct bolt_writer *w, int fd, const char *header, bool is_lbr)
{
        struct outbuf *o = xmalloc(sizeof(*o));
        outbuf_init(o, fd);
        if (header)
                outbuf_puts(o, header);
        char line[2048], *big = NULL;
        for (uint32_t i = 0; i < w->nr_lines; i++) {
                const struct bolt_line *l = &w->lines[i];
                struct pgo_fdata_loc from = {l->from, l->from_off}, to = {l->to, l->to_off};
                size_t n = is_lbr ? pgo_fdata_branch(line, sizeof(line), &from, &to, l->mispreds,
                                                     l->count)
                                  : pgo_fdata_sample(line, sizeof(line), &from, l->count);
                const char *s = line;
                if (n >= sizeof(line)) { /* a long C++ name */
                        big = xrealloc(big, n + 1);
                        if (is_lbr)
                                pgo_fdata_branch(big, n + 1, &from, &to, l->mispreds, l->count);
                        else
                                pgo_fdata_sample(big, n + 1, &from, l->count);
                        s = big;
                }
                outbuf_put(o, s, n);
        }
        free(big);
        int rc = outbuf_flush(o);
        free(o);
        return rc;
}

/* Nothing for BOLT: no branch (sample) of the binary lies in a function its symbols name (a
   stripped binary whose debug file was not found). -ENODATA with a message. */
static int no_lines(const struct export_ctx *x, const char *what)
{
        fprintf(stderr,
                "etwtop: --export bolt: none of the %s lies in a function of the binary's "
                "symbols (stripped? --symbol-path DIR with its debug file): %s not written\n",
                what, x->opts->out_path);
        return -ENODATA;
}

/* Whether an edge's end is the kernel's: its image, a Linux kernel module's, or an address of
   the kernel's half that no image holds. A branch from there into the binary is an interrupt's
   or a system call's return, which perf2bolt leaves out (its -ignore-interrupt-lbr, on by
   default): not a branch of the program. */
static bool is_kernel_end(struct sym_store *store, const struct branches_end *e)
{
        if (!e->loc.module)
                return sym_is_kernel_address(e->loc.rel);
        struct sym_module_info info;
        if (!sym_module_info(store, e->loc.module, &info))
                return false;
        if (strcmp(info.name, "[kernel.kallsyms]") == 0)
                return true;
        const char *dot = strrchr(info.path, '.');
        return dot && (strcmp(dot, ".ko") == 0 || strstr(info.path, ".ko.") != NULL);
}

/* With LBR: the binary's edges, with their mispredictions where the LBR entries say (as
   perf2bolt counts them: the entries flagged mispredicted). perf2bolt adds the fall-throughs
   between branches that it finds by disassembling the binary; llvm-bolt infers them from the
   taken branches. */
static int write_lbr(const struct export_ctx *x, int fd)
{
        struct profile *p = x->profile;
        struct bolt_writer w = {.store = profile_store(p)};
        const struct branches_row *rows;
        uint32_t n = branches_rows(profile_branches(p), BRANCHES_BY_EDGE, AGG_ALL, &rows);
        struct bolt_weight *wt = NULL;
        uint32_t nr_wt = 0, cap_wt = 0;
        for (uint32_t i = 0; i < n; i++) {
                if (rows[i].is_other)
                        continue;
                add_weight(&wt, &nr_wt, &cap_wt, rows[i].from.loc.module, rows[i].count);
                if (rows[i].to.loc.module != rows[i].from.loc.module)
                        add_weight(&wt, &nr_wt, &cap_wt, rows[i].to.loc.module, rows[i].count);
        }
        w.module = choose(profile_store(p), wt, nr_wt, x->opts->binary, "branches");
        free(wt);
        if (!w.module)
                return -ENODATA;
        if (writer_locals(&w) < 0)
                return -ENODATA;
        /* the rows again: sym_module_info and the names above did not change them, but the
           answer is b's until the next call, and a name may have loaded since */
        n = branches_rows(profile_branches(p), BRANCHES_BY_EDGE, AGG_ALL, &rows);
        for (uint32_t i = 0; i < n; i++) {
                const struct branches_row *r = &rows[i];
                if (r->is_other)
                        continue;
                if (is_kernel_end(w.store, &r->from))
                        continue; /* an interrupt's return, as perf2bolt leaves them out */
                uint64_t from_off, to_off;
                char *from = fdata_name(&w, &r->from, &from_off);
                char *to = fdata_name(&w, &r->to, &to_off);
                if (!from && !to)
                        continue; /* BOLT reads nothing of it */
                add_line(&w, from, from_off, to, to_off, r->flags.nr_mispredicted, r->count);
        }
        merge_lines(&w);
        if (!w.nr_lines) {
                writer_fini(&w);
                return no_lines(x, "branches");
        }
        int rc = put_lines(&w, fd, NULL, true);
        writer_fini(&w);
        return rc;
}

/* Without LBR: the samples of the main source (export_main_source: the timer's, else -b's first) at
   places of the binary's functions, as perf2bolt -nl writes them. */
static int write_no_lbr(const struct export_ctx *x, int fd)
{
        struct profile *p = x->profile;
        const struct stack_set *s = x->samples;
        struct bolt_writer w = {.store = profile_store(p)};
        uint16_t source;
        if (!export_main_source(x, &source)) {
                fprintf(stderr, "etwtop: --export bolt: %s has neither LBR records nor samples\n",
                        x->opts->path);
                return -ENODATA;
        }
        struct bolt_weight *wt = NULL;
        uint32_t nr_wt = 0, cap_wt = 0;
        for (uint32_t i = 0; i < s->set.nr_stacks; i++) {
                const struct stack_set_stack *st = &s->set.stacks[i];
                if (st->source == source)
                        add_weight(&wt, &nr_wt, &cap_wt, s->locs[s->frames[st->first]].module,
                                   st->count);
        }
        w.module = choose(profile_store(p), wt, nr_wt, x->opts->binary, "samples");
        free(wt);
        if (!w.module)
                return -ENODATA;
        if (writer_locals(&w) < 0)
                return -ENODATA;
        for (uint32_t i = 0; i < s->set.nr_stacks; i++) {
                const struct stack_set_stack *st = &s->set.stacks[i];
                const struct stack_set_loc *l = &s->locs[s->frames[st->first]];
                if (st->source != source || l->module != w.module)
                        continue;
                struct sym_frame f;
                sym_resolve(profile_store(p), (struct sym_loc){l->module, l->rel}, &f);
                struct branches_end e = {{l->module, l->rel}, f.function, f.offset, f.state};
                uint64_t off;
                char *name = fdata_name(&w, &e, &off);
                if (name)
                        add_line(&w, name, off, NULL, 0, 0, st->count);
        }
        merge_lines(&w);
        if (!w.nr_lines) {
                writer_fini(&w);
                return no_lines(x, "samples");
        }
        char header[300], buf[64], event[256];
        snprintf(event, sizeof(event), "%s", export_source_name(x, source, buf, sizeof(buf)));
        /* one word on the header's line: a trace's event name may hold spaces and controls */
        for (char *c = event; *c; c++)
                if ((unsigned char)*c <= ' ' || *c == 0x7f)
                        *c = '_';
        snprintf(header, sizeof(header), "no_lbr %s\n", event);
        int rc = put_lines(&w, fd, header, false);
        writer_fini(&w);
        return rc;
}

int export_write_bolt(const struct export_ctx *x, int fd)
{
        if (branches_nr_events(profile_branches(x->profile)))
                return write_lbr(x, fd);
        return write_no_lbr(x, fd);
}
