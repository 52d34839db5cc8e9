/* SPDX-License-Identifier: MIT */
/* module.c: a module's ELF side (its CFI sections, PLT ranges, PT_LOAD headers and build-id,
   read with libelf; the separate debug file by build-id when the file has no CFI), and the
   cache that keeps one module per file identity. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "unwind_internal.h"
#include "util/clock.h"
#include "util/elf_build_id.h"
#include "util/hash.h"
#include "util/xalloc.h"

#ifndef SHT_X86_64_UNWIND
#define SHT_X86_64_UNWIND 0x70000001 /* System V x86-64 psABI: .eh_frame's own type */
#endif
#define MAX_BUILD_ID 64

static void set_note(struct unwind_module *m, const char *what)
{
        if (!m->note[0])
                snprintf(m->note, sizeof(m->note), "%s", what);
}

/* What one ELF file offers. Pointers borrow its Elf. */
struct elf_view {
        const uint8_t *eh_frame, *debug_frame;
        size_t eh_frame_size, debug_frame_size;
        uint64_t eh_frame_vaddr, text_vaddr;
        uint64_t plt_start[3], plt_end[3];
        uint8_t build_id[MAX_BUILD_ID];
        size_t build_id_size;
};

static const uint8_t *section_bytes(Elf_Scn *scn, const GElf_Shdr *sh, size_t *size)
{
        if (sh->sh_type == SHT_NOBITS)
                return NULL;
        if ((sh->sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
                return NULL;
        Elf_Data *d = elf_getdata(scn, NULL);
        if (!d || !d->d_buf || !d->d_size)
                return NULL;
        *size = d->d_size;
        return d->d_buf;
}

/* The build-id in a note section (util/elf_build_id.h's note reader over the section's bytes,
   which libelf already holds). */
static void read_build_id(Elf_Scn *scn, struct elf_view *v)
{
        Elf_Data *d = elf_getdata(scn, NULL);
        if (d && d->d_buf)
                v->build_id_size =
                        elf_build_id_from_notes(d->d_buf, d->d_size, v->build_id, MAX_BUILD_ID);
}

/* Reads the sections of one file. Returns 0, or -EINVAL (not a 64-bit x86-64 ELF). */
static int view_elf(Elf *elf, struct elf_view *v, char *why, size_t why_size)
{
        memset(v, 0, sizeof(*v));
        GElf_Ehdr eh;
        if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
                snprintf(why, why_size, "not an ELF file");
                return -EINVAL;
        }
        if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64) {
                snprintf(why, why_size, "not a 64-bit x86-64 ELF file (machine %u)",
                         (unsigned)eh.e_machine);
                return -EINVAL;
        }
        size_t shstrndx;
        if (elf_getshdrstrndx(elf, &shstrndx) < 0)
                return 0; /* no section headers: no CFI that we can find */
        Elf_Scn *scn = NULL;
        while ((scn = elf_nextscn(elf, scn))) {
                GElf_Shdr sh;
                if (!gelf_getshdr(scn, &sh))
                        continue;
                const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
                if (!name)
                        continue;
                if (sh.sh_type == SHT_NOTE && !v->build_id_size) {
                        read_build_id(scn, v);
                } else if (strcmp(name, ".eh_frame") == 0 &&
                           (sh.sh_type == SHT_PROGBITS || sh.sh_type == SHT_X86_64_UNWIND)) {
                        v->eh_frame = section_bytes(scn, &sh, &v->eh_frame_size);
                        v->eh_frame_vaddr = sh.sh_addr;
                } else if (strcmp(name, ".debug_frame") == 0) {
                        v->debug_frame = section_bytes(scn, &sh, &v->debug_frame_size);
                } else if (strcmp(name, ".text") == 0) {
                        v->text_vaddr = sh.sh_addr;
                } else if (strcmp(name, ".plt") == 0 || strcmp(name, ".plt.sec") == 0 ||
                           strcmp(name, ".plt.got") == 0) {
                        int i = name[4] == 0 ? 0 : name[5] == 's' ? 1 : 2;
                        v->plt_start[i] = sh.sh_addr;
                        v->plt_end[i] = sh.sh_addr + sh.sh_size;
                }
        }
        return 0;
}

static void read_loads(Elf *elf, struct unwind_module *m)
{
        size_t nr;
        if (elf_getphdrnum(elf, &nr) < 0 || !nr)
                return;
        m->loads = xcalloc(nr, sizeof(*m->loads));
        for (size_t i = 0; i < nr; i++) {
                GElf_Phdr ph;
                if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
                        m->loads[m->nr_loads++] =
                                (struct uw_load){ph.p_vaddr, ph.p_offset, ph.p_filesz};
        }
}

static void build_from(struct unwind_module *m, const struct elf_view *v,
                       const struct elf_view *rules)
{
        struct unwind_cfi_input in = {
                .eh_frame = rules->eh_frame,
                .eh_frame_size = rules->eh_frame_size,
                .eh_frame_vaddr = rules->eh_frame_vaddr,
                .debug_frame = rules->debug_frame,
                .debug_frame_size = rules->debug_frame_size,
                .text_vaddr = v->text_vaddr,
        };
        memcpy(in.plt_start, v->plt_start, sizeof(in.plt_start));
        memcpy(in.plt_end, v->plt_end, sizeof(in.plt_end));
        struct unwind_error err;
        if (uw_table_build(&m->table, &in, &err) < 0)
                set_note(m, err.message);
        else if (m->table.note[0])
                set_note(m, m->table.note);
}

/* The separate debug file of a build-id, its CFI in place of the file's. */
static bool try_debug_file(struct unwind_module *m, const struct elf_view *v)
{
        const char *dir = m->debug_dir ? m->debug_dir : "/usr/lib/debug";
        if (!*dir || v->build_id_size < 2)
                return false;
        char path[4096];
        int n = snprintf(path, sizeof(path), "%s/.build-id/%02x/", dir, v->build_id[0]);
        for (size_t i = 1; i < v->build_id_size && n > 0 && (size_t)n < sizeof(path) - 8; i++)
                n += snprintf(path + n, sizeof(path) - (size_t)n, "%02x", v->build_id[i]);
        if (n <= 0 || (size_t)n >= sizeof(path) - 8)
                return false;
        strcat(path, ".debug");
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        bool is_used = false;
        Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
        struct elf_view dv;
        char why[128];
        if (elf && view_elf(elf, &dv, why, sizeof(why)) == 0 &&
            (dv.eh_frame_size || dv.debug_frame_size)) {
                build_from(m, v, &dv);
                is_used = m->table.nr_rows != 0;
        }
        elf_end(elf);
        close(fd);
        return is_used;
}

static void load_elf(struct unwind_module *m, Elf *elf)
{
        struct elf_view v;
        char why[128];
        if (view_elf(elf, &v, why, sizeof(why)) < 0) {
                set_note(m, why);
                return;
        }
        if (m->want_build_id_size && v.build_id_size &&
            (v.build_id_size != m->want_build_id_size ||
             memcmp(v.build_id, m->want_build_id, v.build_id_size) != 0)) {
                /* the file was replaced since it was mapped (a package upgrade): its rules
                   are another build's */
                set_note(m, "the file is another build than the one mapped (its build-id "
                            "differs)");
                return;
        }
        read_loads(elf, m);
        if (v.eh_frame_size || v.debug_frame_size) {
                build_from(m, &v, &v);
                return;
        }
        if (try_debug_file(m, &v)) {
                m->is_from_debug_file = true;
                m->note[0] = 0;
                return;
        }
        set_note(m, "no .eh_frame or .debug_frame in the file or a debug file by build-id");
        build_from(m, &v, &v); /* the PLT rule only, when the file has a PLT */
}

void uw_module_load(struct unwind_module *m)
{
        if (m->is_loaded)
                return;
        m->is_loaded = true;
        uint64_t t0 = now_ns();
        elf_version(EV_CURRENT);
        if (m->mem) {
                Elf *elf = elf_memory((char *)m->mem, m->mem_size);
                if (elf)
                        load_elf(m, elf);
                else
                        set_note(m, elf_errmsg(-1));
                elf_end(elf);
        } else {
                int fd = open(m->path, O_RDONLY | O_CLOEXEC);
                if (fd < 0) {
                        set_note(m, "the file cannot be opened");
                } else {
                        Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
                        if (elf)
                                load_elf(m, elf);
                        else
                                set_note(m, elf_errmsg(-1));
                        elf_end(elf);
                        close(fd);
                }
        }
        m->build_ns = now_ns() - t0;
}

int unwind_module_open_cfi(struct unwind_module **out, const struct unwind_cfi_input *cfi,
                           struct unwind_error *err)
{
        struct unwind_module *m = xcalloc(1, sizeof(*m));
        m->path = xstrdup("");
        m->is_loaded = true;
        uint64_t t0 = now_ns();
        if (uw_table_build(&m->table, cfi, err) < 0) {
                unwind_module_close(m);
                *out = NULL;
                return -EINVAL;
        }
        set_note(m, m->table.note);
        m->build_ns = now_ns() - t0;
        *out = m;
        return 0;
}

int unwind_module_open_mem(struct unwind_module **out, const void *data, size_t size,
                           struct unwind_error *err)
{
        *out = NULL;
        elf_version(EV_CURRENT);
        Elf *elf = elf_memory((char *)data, size);
        GElf_Ehdr eh;
        if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
            eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64) {
                if (err) {
                        snprintf(err->message, sizeof(err->message),
                                 "not a 64-bit x86-64 ELF image");
                        err->offset = 0;
                }
                elf_end(elf);
                return -EINVAL;
        }
        elf_end(elf);
        struct unwind_module *m = xcalloc(1, sizeof(*m));
        m->path = xstrdup("");
        m->mem = data;
        m->mem_size = size;
        m->debug_dir = "";
        uw_module_load(m);
        *out = m;
        return 0;
}

void unwind_module_close(struct unwind_module *m)
{
        if (!m)
                return;
        uw_table_release(&m->table);
        free(m->loads);
        free(m->path);
        free(m->key);
        free(m);
}

int unwind_module_bias(struct unwind_module *m, uint64_t map_start, uint64_t pgoff, uint64_t *bias)
{
        uw_module_load(m);
        *bias = map_start - pgoff;
        /* the segment mapped from that page: the loader maps each PT_LOAD from its own
           page-aligned offset, so an exact match first (segments that share a page, as lld
           lays them out, both contain it: the read-only one's tail is the text's first page);
           then one that contains it (a mapping split by mprotect starts inside its segment) */
        for (int pass = 0; pass < 2; pass++) {
                for (uint32_t i = 0; i < m->nr_loads; i++) {
                        const struct uw_load *l = &m->loads[i];
                        uint64_t page_off = l->offset & ~0xfffull;
                        bool is_match =
                                pass == 0 ? pgoff == page_off
                                          : pgoff >= page_off &&
                                                    pgoff < l->offset + (l->filesz ? l->filesz : 1);
                        if (is_match) {
                                *bias = map_start - pgoff - (l->vaddr - l->offset);
                                return 0;
                        }
                }
        }
        return m->nr_loads ? -ENOENT : 0;
}

void unwind_module_get_info(struct unwind_module *m, struct unwind_module_info *info)
{
        uw_module_load(m);
        memset(info, 0, sizeof(*info));
        const struct uw_table *t = &m->table;
        info->path = m->path;
        info->note = m->note;
        info->has_cfi = t->nr_rows > 1;
        info->is_from_debug_file = m->is_from_debug_file;
        info->nr_rows = t->nr_rows;
        info->nr_fdes = t->nr_fdes;
        info->nr_bad_fdes = t->nr_bad_fdes;
        info->nr_expr_rows = t->nr_expr_rows;
        info->nr_fp_fdes = t->nr_fp_fdes;
        info->table_bytes = (size_t)t->nr_rows * (sizeof(uint32_t) + sizeof(struct uw_rule)) +
                            ((size_t)t->nr_blocks + 1) * sizeof(uint32_t) + t->pool_size;
        info->build_ns = m->build_ns;
}

bool unwind_module_has_frame_pointers(struct unwind_module *m)
{
        uw_module_load(m);
        const struct uw_table *t = &m->table;
        return t->nr_fdes && 2 * (uint64_t)t->nr_fp_fdes >= t->nr_fdes;
}

int unwind_module_lookup(struct unwind_module *m, uint64_t vaddr, struct unwind_rule_info *info)
{
        uw_module_load(m);
        const struct uw_table *t = &m->table;
        uint32_t i;
        const struct uw_rule *r = uw_table_find(t, vaddr, &i);
        memset(info, 0, sizeof(*info));
        if (i != UINT32_MAX) {
                info->start = t->base + t->starts[i];
                info->end = i + 1 < t->nr_rows ? t->base + t->starts[i + 1] : info->start;
        }
        if (!r)
                return -ENOENT;
        info->cfa = (enum unwind_cfa_kind)r->cfa_kind;
        info->cfa_reg = r->cfa_reg;
        info->cfa_offset = r->cfa_off;
        info->ra = UW_RA_KIND(r);
        info->rbp = UW_RBP_KIND(r);
        info->ra_offset = info->ra == UNWIND_RULE_EXPR || info->ra == UNWIND_RULE_VAL_EXPR
                                  ? (uint16_t)r->ra_off
                                  : r->ra_off;
        info->rbp_offset = info->rbp == UNWIND_RULE_EXPR || info->rbp == UNWIND_RULE_VAL_EXPR
                                   ? (uint16_t)r->rbp_off
                                   : r->rbp_off;
        info->is_signal_frame = (r->flags & UW_FLAG_SIGNAL) != 0;
        return 0;
}

/* ---- the cache ---- */

struct unwind_cache {
        struct unwind_module **modules; /* owned, each */
        uint32_t nr_modules, cap_modules;
        char *debug_dir; /* owned, NULL for the default */
};

int unwind_cache_new(struct unwind_cache **out, const struct unwind_cache_options *opts)
{
        struct unwind_cache *c = xcalloc(1, sizeof(*c));
        if (opts && opts->debug_dir)
                c->debug_dir = xstrdup(opts->debug_dir);
        *out = c;
        return 0;
}

void unwind_cache_free(struct unwind_cache *c)
{
        if (!c)
                return;
        for (uint32_t i = 0; i < c->nr_modules; i++)
                unwind_module_close(c->modules[i]);
        free(c->modules);
        free(c->debug_dir);
        free(c);
}

int unwind_cache_get(struct unwind_cache *c, const char *path, const uint8_t *build_id,
                     size_t build_id_size, struct unwind_module **out)
{
        char key[4096 + 128];
        *out = NULL;
        if (build_id && build_id_size) {
                size_t n = (size_t)snprintf(key, sizeof(key), "b:");
                for (size_t i = 0; i < build_id_size && i < MAX_BUILD_ID; i++)
                        n += (size_t)snprintf(key + n, sizeof(key) - n, "%02x", build_id[i]);
        } else {
                struct stat st;
                if (!path || stat(path, &st) < 0)
                        return -ENOENT;
                int n = snprintf(key, sizeof(key), "p:%llx:%llx:%llx:%lld.%09ld:%s",
                                 (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
                                 (unsigned long long)st.st_size, (long long)st.st_mtim.tv_sec,
                                 (long)st.st_mtim.tv_nsec, path);
                if (n < 0 || (size_t)n >= sizeof(key))
                        return -ENOENT;
        }
        uint64_t h = hash_fnv1a_str(key, HASH_FNV_OFFSET);
        for (uint32_t i = 0; i < c->nr_modules; i++) {
                struct unwind_module *m = c->modules[i];
                if (m->key_hash == h && strcmp(m->key, key) == 0) {
                        *out = m;
                        return 0;
                }
        }
        if (build_id && build_id_size && (!path || access(path, R_OK) < 0))
                return -ENOENT;
        struct unwind_module *m = xcalloc(1, sizeof(*m));
        m->path = xstrdup(path);
        m->key = xstrdup(key);
        m->key_hash = h;
        m->debug_dir = c->debug_dir;
        if (build_id && build_id_size && build_id_size <= sizeof(m->want_build_id)) {
                memcpy(m->want_build_id, build_id, build_id_size);
                m->want_build_id_size = (uint8_t)build_id_size;
        }
        if (c->nr_modules == c->cap_modules) {
                c->cap_modules = c->cap_modules ? 2 * c->cap_modules : 16;
                c->modules = xrealloc(c->modules, c->cap_modules * sizeof(*c->modules));
        }
        c->modules[c->nr_modules++] = m;
        *out = m;
        return 0;
}

void unwind_cache_get_stats(const struct unwind_cache *c, struct unwind_cache_stats *st)
{
        memset(st, 0, sizeof(*st));
        st->nr_modules = c->nr_modules;
        for (uint32_t i = 0; i < c->nr_modules; i++) {
                const struct unwind_module *m = c->modules[i];
                if (!m->is_loaded)
                        continue;
                st->nr_loaded++;
                st->table_bytes +=
                        (size_t)m->table.nr_rows * (sizeof(uint32_t) + sizeof(struct uw_rule)) +
                        ((size_t)m->table.nr_blocks + 1) * sizeof(uint32_t) + m->table.pool_size;
                st->build_ns += m->build_ns;
        }
}
