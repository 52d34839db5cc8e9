/* SPDX-License-Identifier: MIT */
/* elf_module.c: owns finding an ELF image's file, checking its build-id, and reading its
   function table, segments, inline frames and source lines through libdwfl. */
#include "elf_module.h"
#include "util/perf_buildid_dir.h"

#include "build_id_scan.h"
#include "symtab_cache.h"
#include "debuglink.h"
#include "elf_inflate.h"
#include "elf_units.h"
#include "elf_lines.h"
#include "elf_scopes.h"

#include "symbols/sym_table.h"
#include "util/elf_build_id.h"
#include "util/in_file.h"
#include "util/xalloc.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct elf_module {
        Dwfl *dwfl;              /* owned */
        Dwfl_Module *mod;        /* borrowed from dwfl */
        Dwfl_Callbacks cb;       /* dwfl points here: lives as long as dwfl */
        char *debuginfo_path;    /* owned; cb.debuginfo_path points here */
        int64_t bias;            /* libdwfl's address = file vaddr + bias */
        struct sym_table *table; /* owned, file virtual addresses */
        struct elf_segment seg[ELF_MODULE_MAX_SEGMENTS];
        uint32_t nr_seg;
        uint8_t build_id[20];
        uint32_t build_id_size;
        bool is_guessed;                /* segments guessed: a debug file without its image */
        struct elf_scopes *scopes;      /* owned: made on the first source line asked for */
        struct elf_lines *lines;        /* owned: made on the first line asked for */
        Elf *sym_elf;                   /* the file the symbols came from (a debug file), or NULL */
        bool is_inflated;               /* elf_inflate_debug ran (at the first line asked for) */
        bool is_dwarf_known, has_dwarf; /* elf_module_has_dwarf's answer, once asked */
        Dwarf *dw;                      /* borrowed from dwfl: its DWARF, where has_dwarf */
        Dwarf_Addr dwarf_bias;          /* libdwfl's bias of dw's addresses */
        bool is_units_known;
        struct elf_units *units;      /* owned: dw's units by address, NULL: libdwfl finds them */
        bool is_direct;               /* its symbols read by read_symbols_direct */
        struct elf_inflated inflated; /* owned: freed after dwfl */
        char file[PATH_MAX];
};

static void note_set(char *note, size_t size, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static void note_set(char *note, size_t size, const char *fmt, ...)
{
        va_list ap;
        if (!note || !size)
                return;
        va_start(ap, fmt);
        vsnprintf(note, size, fmt, ap);
        va_end(ap);
}

static void hex(char *dst, const uint8_t *id, uint32_t n)
{
        static const char digits[] = "0123456789abcdef";
        for (uint32_t i = 0; i < n; i++) {
                dst[2 * i] = digits[id[i] >> 4];
                dst[2 * i + 1] = digits[id[i] & 15];
        }
        dst[2 * n] = 0;
}

/* The candidates, in order, for an image recorded at path with build-id id. */
static uint32_t candidates(const struct elf_load_request *rq, char (*out)[PATH_MAX], uint32_t max)
{
        char idhex[41] = "";
        uint32_t n = 0;
        const char *base = strrchr(rq->path, '/');
        base = base ? base + 1 : rq->path;

        if (rq->build_id_size >= 2)
                hex(idhex, rq->build_id, rq->build_id_size);
        /* images first: their program headers place file offsets; libdwfl then finds their
           debug files itself (debuginfo_path) */
        for (uint32_t i = 0; i < rq->nr_dirs && n + 3 <= max; i++) {
                const char *d = rq->dirs[i];
                if (*idhex)
                        snprintf(out[n++], PATH_MAX, "%s/.build-id/%.2s/%s", d, idhex, idhex + 2);
                if (*base)
                        snprintf(out[n++], PATH_MAX, "%s/%s", d, base);
                if (rq->path[0] == '/')
                        snprintf(out[n++], PATH_MAX, "%s%s", d, rq->path);
        }
        if (rq->path[0] == '/' && n < max)
                snprintf(out[n++], PATH_MAX, "%s", rq->path);
        /* perf's build-id cache, where perf record kept a copy of the image (the program
           rebuilt or removed since, as perf report finds it): $PERF_BUILDID_DIR, else
           ~/.debug; its .build-id/xx/rest links to the copy's directory, whose file is elf */
        char cache[PATH_MAX - 64]; /* room left for /.build-id/xx/rest/elf */
        if (*idhex && n < max && perf_buildid_dir(cache, sizeof(cache)))
                snprintf(out[n++], PATH_MAX, "%s/.build-id/%.2s/%s/elf", cache, idhex, idhex + 2);
        /* then debug files alone, when no image is left (see read_segments) */
        for (uint32_t i = 0; *idhex && i < rq->nr_dirs && n < max; i++)
                snprintf(out[n++], PATH_MAX, "%s/.build-id/%.2s/%s.debug", rq->dirs[i], idhex,
                         idhex + 2);
        if (*idhex && n < max)
                snprintf(out[n++], PATH_MAX, "/usr/lib/debug/.build-id/%.2s/%s.debug", idhex,
                         idhex + 2);
        return n;
}

static int read_segments(struct elf_module *m)
{
        GElf_Addr bias = 0;
        Elf *elf = dwfl_module_getelf(m->mod, &bias);
        if (!elf)
                return -EBADMSG;
        m->bias = (int64_t)bias;
        size_t nr = 0;
        if (elf_getphdrnum(elf, &nr) != 0)
                return -EBADMSG;
        for (size_t i = 0; i < nr && m->nr_seg < ELF_MODULE_MAX_SEGMENTS; i++) {
                GElf_Phdr ph;
                if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
                        continue;
                m->seg[m->nr_seg++] =
                        (struct elf_segment){ph.p_offset, ph.p_vaddr, ph.p_filesz, ph.p_memsz};
        }
        /* A separate debug file keeps the program headers with their file contents removed
           (p_filesz 0, p_offset 0). Linkers place code at vaddr = first segment's page + file
           offset; that is the best guess when the image itself is gone. */
        bool is_debug_only = m->nr_seg > 0;
        for (uint32_t i = 0; i < m->nr_seg; i++)
                if (m->seg[i].filesz)
                        is_debug_only = false;
        if (is_debug_only) {
                uint64_t first = m->seg[0].vaddr & ~(uint64_t)0xfff;
                m->seg[0] = (struct elf_segment){0, first, UINT64_MAX / 2, UINT64_MAX / 2};
                m->nr_seg = 1;
                m->is_guessed = true;
        }
        const void *p = NULL;
        ssize_t got = dwelf_elf_gnu_build_id(elf, &p);
        if (got > 0 && p) {
                m->build_id_size =
                        (uint32_t)got < sizeof(m->build_id) ? (uint32_t)got : sizeof(m->build_id);
                memcpy(m->build_id, p, m->build_id_size);
        }
        return 0;
}

/* The end address of section shndx of elf when value lies in it, else 0. */
static uint64_t section_end(Elf *elf, GElf_Word shndx, uint64_t value)
{
        GElf_Shdr sh;
        Elf_Scn *scn =
                elf && shndx != SHN_ABS && shndx < SHN_LORESERVE ? elf_getscn(elf, shndx) : NULL;
        if (!scn || !gelf_getshdr(scn, &sh) || value < sh.sh_addr ||
            value - sh.sh_addr >= sh.sh_size)
                return 0;
        return sh.sh_addr + sh.sh_size;
}

static Elf_Scn *section_named(Elf *elf, const char *name, GElf_Shdr *sh)
{
        size_t shstrndx;
        if (elf_getshdrstrndx(elf, &shstrndx) != 0)
                return NULL;
        for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
                const char *n;
                if (gelf_getshdr(scn, sh) && (n = elf_strptr(elf, shstrndx, sh->sh_name)) &&
                    strcmp(n, name) == 0)
                        return scn;
        }
        return NULL;
}

/* x86-64 PLT stubs as "name@plt", as perf names them: the j-th stub of .plt.sec (or of .plt
   after its header) jumps through the j-th .rela.plt relocation. */
static void add_plt_symbols(struct elf_module *m)
{
        GElf_Addr bias;
        Elf *elf = dwfl_module_getelf(m->mod, &bias);
        GElf_Ehdr eh;
        if (!elf || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64)
                return;
        GElf_Shdr plt, rela, dynsym;
        uint64_t first = 0;
        if (!section_named(elf, ".plt.sec", &plt)) {
                if (!section_named(elf, ".plt", &plt))
                        return;
                first = 16; /* PLT0 */
        }
        Elf_Scn *rscn = section_named(elf, ".rela.plt", &rela);
        Elf_Data *rd = rscn ? elf_getdata(rscn, NULL) : NULL;
        Elf_Scn *dscn = rd ? elf_getscn(elf, rela.sh_link) : NULL;
        Elf_Data *dd = dscn && gelf_getshdr(dscn, &dynsym) ? elf_getdata(dscn, NULL) : NULL;
        if (!dd || plt.sh_type == SHT_NOBITS || !rela.sh_entsize)
                return;
        uint64_t nr = rela.sh_size / rela.sh_entsize;
        char name[512];
        for (uint64_t j = 0; j < nr && first + 16 * (j + 1) <= plt.sh_size; j++) {
                GElf_Rela r;
                GElf_Sym sym;
                if (!gelf_getrela(rd, (int)j, &r) ||
                    !gelf_getsym(dd, (int)GELF_R_SYM(r.r_info), &sym))
                        continue;
                const char *n = elf_strptr(elf, dynsym.sh_link, sym.st_name);
                if (!n || !*n)
                        continue;
                /* "%s@plt" without snprintf's parsing (a few thousand stubs a library) */
                size_t len = strlen(n);
                if (len + sizeof("@plt") > sizeof(name))
                        continue;
                memcpy(name, n, len);
                memcpy(name + len, "@plt", sizeof("@plt"));
                sym_table_add(m->table, plt.sh_addr + first + 16 * j, 16, name,
                              len + sizeof("@plt") - 1, SYM_FLAG_LOCAL);
        }
}

/* One function symbol of the table into m's: name (len bytes) at addr (libdwfl's address),
   of section shndx (-1: not an allocated one) of elf. */
static void add_symbol(struct elf_module *m, const GElf_Sym *sym, const char *name, size_t len,
                       GElf_Addr addr, GElf_Word shndx, Elf *elf)
{
        uint32_t flags = 0;
        if (GELF_ST_BIND(sym->st_info) == STB_WEAK)
                flags |= SYM_FLAG_WEAK;
        else if (GELF_ST_BIND(sym->st_info) == STB_LOCAL)
                flags |= SYM_FLAG_LOCAL;
        if (sym_name_is_padding(name, len))
                flags |= SYM_FLAG_PADDING;
        uint64_t at = (uint64_t)addr - (uint64_t)m->bias; /* wraps: hostile biases */
        uint64_t end = sym->st_size ? 0 : section_end(elf, shndx, sym->st_value);
        if (end)
                sym_table_add_bounded(m->table, at, end - sym->st_value, name, len, flags);
        else
                sym_table_add(m->table, at, sym->st_size, name, len, flags);
}

static bool is_function(const GElf_Sym *sym)
{
        int type = GELF_ST_TYPE(sym->st_info);
        return type == STT_FUNC || type == STT_GNU_IFUNC;
}

/* The section of elf that libdwfl reads its n symbols from, when it reads them from one table
   alone: SHT_SYMTAB, else SHT_DYNSYM, of n entries (a table merged with MiniDebugInfo's has
   more); NULL where extended section indices are in use. */
static Elf_Scn *single_symtab(Elf *elf, int n, GElf_Shdr *out)
{
        Elf_Scn *found[2] = {NULL, NULL};
        GElf_Shdr sh[2];
        for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
                GElf_Shdr h;
                if (!gelf_getshdr(scn, &h))
                        return NULL;
                if (h.sh_type == SHT_SYMTAB_SHNDX)
                        return NULL;
                int k = h.sh_type == SHT_SYMTAB ? 0 : h.sh_type == SHT_DYNSYM ? 1 : -1;
                if (k >= 0 && !found[k]) {
                        found[k] = scn;
                        sh[k] = h;
                }
        }
        int k = found[0] ? 0 : 1;
        if (!found[k] || !sh[k].sh_entsize || sh[k].sh_size / sh[k].sh_entsize != (uint64_t)n)
                return NULL;
        *out = sh[k];
        return found[k];
}

/* The symbols 1..n of libdwfl's table read straight from its section, as
   dwfl_module_getsym_info gives them (an x86-64 or AArch64 executable or shared object: no
   function descriptors, no address mask, no relocation): its per-symbol work (a section header
   looked up for each) was most of a module's load. False where that does not hold: the caller
   reads them through libdwfl. */
/* The file libdwfl reads m's n symbols from, its header in *eh and its symbols' bias in *sbias,
   when read_symbols_direct can read them: NULL where not. */
static Elf *direct_symbols_elf(struct elf_module *m, int n, GElf_Ehdr *eh, Dwarf_Addr *sbias)
{
        GElf_Sym s1;
        GElf_Addr a1;
        GElf_Word x1;
        Elf *elf = NULL;
        *sbias = 0;
        if (n < 2 || !dwfl_module_getsym_info(m->mod, 1, &s1, &a1, &x1, &elf, sbias) || !elf ||
            !gelf_getehdr(elf, eh) || (eh->e_type != ET_EXEC && eh->e_type != ET_DYN) ||
            (eh->e_machine != EM_X86_64 && eh->e_machine != EM_AARCH64))
                return NULL;
        return elf;
}

static bool read_symbols_direct(struct elf_module *m, int n)
{
        Dwarf_Addr sbias = 0;
        GElf_Ehdr eh;
        Elf *elf = direct_symbols_elf(m, n, &eh, &sbias);
        if (!elf)
                return false;
        GElf_Shdr sh, strsh;
        Elf_Scn *scn = single_symtab(elf, n, &sh);
        Elf_Scn *strscn = scn ? elf_getscn(elf, sh.sh_link) : NULL;
        Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
        Elf_Data *str = strscn && gelf_getshdr(strscn, &strsh) ? elf_getdata(strscn, NULL) : NULL;
        size_t nr_scn = 0;
        if (!data || !str || !str->d_buf || elf_getshdrnum(elf, &nr_scn) != 0)
                return false;
        /* whether each section is allocated: a symbol of one that is not keeps its value, and
           its section index reads -1, as libdwfl gives it */
        uint8_t *is_alloc = xmalloc(nr_scn + 1);
        for (size_t i = 0; i < nr_scn; i++) {
                GElf_Shdr h;
                Elf_Scn *s = elf_getscn(elf, i);
                is_alloc[i] = !s || !gelf_getshdr(s, &h) || (h.sh_flags & SHF_ALLOC);
        }
        m->sym_elf = elf;
        const char *strs = str->d_buf;
        size_t strs_size = str->d_size;
        /* the names read in the file's string table, which the module keeps open */
        bool is_borrowed = sym_table_borrow_names(m->table, strs, strs_size);
        sym_table_reserve(m->table, (uint32_t)n, is_borrowed ? 0 : strs_size);
        /* a 64-bit file's symbols as libelf converted them, read in place */
        const Elf64_Sym *syms64 = gelf_getclass(elf) == ELFCLASS64 && data->d_type == ELF_T_SYM &&
                                                  data->d_size / sizeof(Elf64_Sym) >= (size_t)n
                                          ? data->d_buf
                                          : NULL;
        for (int i = 1; i < n; i++) {
                GElf_Sym sym;
                if (syms64)
                        sym = syms64[i];
                else if (!gelf_getsym(data, i, &sym))
                        continue;
                if (sym.st_name >= strs_size || sym.st_shndx == SHN_UNDEF || !is_function(&sym))
                        continue;
                const char *name = strs + sym.st_name;
                size_t len = strnlen(name, strs_size - sym.st_name);
                if (!len)
                        continue;
                GElf_Word shndx = sym.st_shndx;
                GElf_Addr addr = sym.st_value;
                if (shndx < SHN_LORESERVE) {
                        if (shndx < nr_scn && !is_alloc[shndx])
                                shndx = (GElf_Word)-1;
                        else
                                addr += sbias;
                } else if (shndx != SHN_ABS && shndx != SHN_COMMON) {
                        addr += sbias;
                }
                add_symbol(m, &sym, name, len, addr, shndx, elf);
        }
        free(is_alloc);
        return true;
}

bool elf_module_symbols_through_libdwfl;

bool elf_module_symbols_were_direct(const struct elf_module *m)
{
        return m->is_direct;
}

/* The key of the table read_symbols_direct would build of m's n symbols in the symbol cache
   (symtab_cache.h), and the file they come from in m->sym_elf: false where it would not read
   them (the caller builds the table through libdwfl) or where the module has no build-id (its
   PLT and its sections' flags then not pinned down by what is hashed). */
static bool symbols_key(struct elf_module *m, int n, struct dwarf_cache_key *key)
{
        Dwarf_Addr sbias = 0;
        GElf_Ehdr eh;
        Elf *elf = elf_module_symbols_through_libdwfl || !m->build_id_size
                           ? NULL
                           : direct_symbols_elf(m, n, &eh, &sbias);
        if (!elf)
                return false;
        GElf_Shdr sh;
        Elf_Scn *scn = single_symtab(elf, n, &sh);
        Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
        if (!data || !data->d_buf)
                return false;
        /* the symbols' bytes (which file: the image's dynamic table or a debug file's full
           one), the build-id (the rest of both files), the biases, the reader's settings */
        struct {
                char magic[16];
                int64_t bias;
                uint64_t sbias, max_inferred;
                uint32_t n, machine, type, sh_type;
        } settings;
        memset(&settings, 0, sizeof(settings)); /* no padding hashed unset */
        memcpy(settings.magic, "elf symbols 1", 14);
        settings.bias = m->bias;
        settings.sbias = (uint64_t)sbias;
        settings.max_inferred = 65536;
        settings.n = (uint32_t)n;
        settings.machine = eh.e_machine;
        settings.type = eh.e_type;
        settings.sh_type = sh.sh_type;
        struct symtab_cache_part parts[] = {{&settings, sizeof(settings)},
                                            {m->build_id, m->build_id_size},
                                            {data->d_buf, data->d_size}};
        if (!symtab_cache_key(parts, 3, key))
                return false;
        m->sym_elf = elf;
        return true;
}

static void read_symbols(struct elf_module *m)
{
        int n = dwfl_module_getsymtab(m->mod);
        struct dwarf_cache_key key;
        bool has_key = n >= (int)SYMTAB_CACHE_MIN_SYMBOLS && symbols_key(m, n, &key);
        if (has_key && (m->table = symtab_cache_load(&key)) != NULL) {
                m->is_direct = true; /* the table it built, kept */
                return;
        }
        m->table = sym_table_new();
        sym_table_choose_aliases_as_perf(m->table);
        m->is_direct = !elf_module_symbols_through_libdwfl && read_symbols_direct(m, n);
        for (int i = 1; !m->is_direct && i < n; i++) {
                GElf_Sym sym;
                GElf_Addr addr;
                GElf_Word shndx;
                Elf *elf = NULL;
                Dwarf_Addr sbias;
                const char *name =
                        dwfl_module_getsym_info(m->mod, i, &sym, &addr, &shndx, &elf, &sbias);
                /* libdwfl sets elf only for a symbol it returns: a damaged table's failed entry
                   leaves it as it was */
                if (name && elf && !m->sym_elf)
                        m->sym_elf = elf;
                if (!name || !*name || shndx == SHN_UNDEF || !is_function(&sym))
                        continue;
                add_symbol(m, &sym, name, strlen(name), addr, shndx, elf);
        }
        add_plt_symbols(m);
        /* an unsized symbol (assembly) reaches to the next one, but not across 64 KiB */
        sym_table_finish(m->table, 65536);
        if (has_key && m->is_direct)
                symtab_cache_store(&key, m->table);
}

/* The first of the nr candidates that is a regular file with the recorded build-id: its index
   and an open descriptor of it in *fd (one descriptor, checked and then read: a name the
   recording gives is read only when it is a regular file, and a FIFO there does not block the
   open), or -1; the first other build-id seen goes to seen_id. */
/* Whether a file's build-id (n bytes) is the recorded one: the same bytes, or the recorded
   one padded with zeros past them (perf's BUILD_ID feature before it recorded sizes pads a
   shorter id, an 8-byte xxHash of lld, to 20 bytes). */
static bool build_id_matches(const uint8_t *id, uint32_t n, const uint8_t *rec, uint32_t rec_n)
{
        if (!n || n > rec_n || memcmp(id, rec, n) != 0)
                return false;
        for (uint32_t i = n; i < rec_n; i++)
                if (rec[i])
                        return false;
        return true;
}

static int first_candidate(const struct elf_load_request *rq, char (*cand)[PATH_MAX], uint32_t nr,
                           int *fd, char *seen_id, bool *has_mismatch)
{
        for (uint32_t i = 0; i < nr; i++) {
                int f = in_file_open(cand[i], 0, NULL);
                if (f < 0)
                        continue;
                if (rq->build_id_size) {
                        uint8_t id[20];
                        uint32_t n = elf_build_id_read_fd(f, id, sizeof(id));
                        if (!build_id_matches(id, n, rq->build_id, rq->build_id_size)) {
                                if (!*has_mismatch)
                                        hex(seen_id, id, n);
                                *has_mismatch = true;
                                close(f);
                                continue;
                        }
                }
                *fd = f;
                return (int)i;
        }
        return -1;
}

/* The image by its build-id among the symbol path's files, whatever its name (build_id_scan.h):
   its path into path and its descriptor into *fd; NULL: none. */
static const char *scan_symbol_path(const struct elf_load_request *rq, char *path, int *fd)
{
        if (!build_id_scan_find(rq->dirs, rq->nr_dirs, rq->build_id, rq->build_id_size, path,
                                PATH_MAX))
                return NULL;
        int f = in_file_open(path, 0, NULL);
        if (f < 0)
                return NULL;
        uint8_t id[20];
        uint32_t n = elf_build_id_read_fd(f, id, sizeof(id));
        if (!build_id_matches(id, n, rq->build_id, rq->build_id_size)) { /* changed since */
                close(f);
                return NULL;
        }
        *fd = f;
        return path;
}

static int open_dwfl(struct elf_module *m, const struct elf_load_request *rq, const char *file,
                     int fd)
{
        size_t len = 32;
        for (uint32_t i = 0; i < rq->nr_dirs; i++)
                len += strlen(rq->dirs[i]) + 1;
        /* '-': no CRC check of .gnu_debuglink files (slow, and build-ids say more) */
        m->debuginfo_path = xcalloc(1, len);
        strcpy(m->debuginfo_path, "-:.debug:/usr/lib/debug");
        for (uint32_t i = 0; i < rq->nr_dirs; i++) {
                strcat(m->debuginfo_path, ":");
                strcat(m->debuginfo_path, rq->dirs[i]);
        }
        m->cb.find_elf = dwfl_build_id_find_elf;
        /* the debug link is untrusted data: its candidates are opened checked (debuglink.h) */
        m->cb.find_debuginfo = debuglink_find_debuginfo;
        m->cb.section_address = dwfl_offline_section_address;
        m->cb.debuginfo_path = &m->debuginfo_path;
        m->dwfl = dwfl_begin(&m->cb);
        if (!m->dwfl)
                return -ENOMEM;
        const char *name = strrchr(rq->path, '/');
        name = name ? name + 1 : rq->path;
        dwfl_report_begin(m->dwfl);
        /* libdwfl closes fd when it is done with it: give it a copy */
        int own_fd = fd >= 0 ? dup(fd) : -1;
        m->mod = dwfl_report_elf(m->dwfl, name, file, own_fd, 0, true);
        dwfl_report_end(m->dwfl, NULL, NULL);
        void **userdata = NULL;
        if (m->mod && dwfl_module_info(m->mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL) &&
            userdata)
                *userdata = m->debuginfo_path; /* for debuglink_find_debuginfo */
        if (!m->mod) {
                if (own_fd >= 0)
                        close(own_fd);
                return -EBADMSG;
        }
        return 0;
}

int elf_module_load(const struct elf_load_request *rq, struct elf_module **out, char *note,
                    size_t note_size)
{
        char(*cand)[PATH_MAX] = NULL; /* written before read: not zeroed (128 KiB a module) */
        struct elf_module *m = NULL;
        const char *file = NULL;
        int rc = -ENOENT;
        bool has_mismatch = false;
        char seen_id[41] = "";
        int cand_fd = -1; /* the candidate chosen, open */

        *out = NULL;
        elf_version(EV_CURRENT);
        if (rq->fd >= 0) {
                file = rq->fd_name ? rq->fd_name : rq->path;
        } else {
                cand = xmalloc(32 * PATH_MAX);
                uint32_t nr = candidates(rq, cand, 32);
                int i = first_candidate(rq, cand, nr, &cand_fd, seen_id, &has_mismatch);
                if (i >= 0)
                        file = cand[i];
                else if (rq->build_id_size && rq->nr_dirs)
                        file = scan_symbol_path(rq, cand[0], &cand_fd);
        }
        if (!file) {
                if (has_mismatch) {
                        char want[41];
                        hex(want, rq->build_id, rq->build_id_size);
                        note_set(note, note_size,
                                 "%s changed since the recording: its build-id is %s, the "
                                 "recording's %s (give the recorded file with --symbol-path)",
                                 rq->path ? rq->path : "?", *seen_id ? seen_id : "missing", want);
                        rc = -ESTALE;
                } else {
                        note_set(note, note_size, "%s: not found%s", rq->path ? rq->path : "?",
                                 rq->nr_dirs ? " (nor on the symbol path)" : "");
                        rc = -ENOENT;
                }
                goto fail;
        }
        m = xcalloc(1, sizeof(*m));
        snprintf(m->file, sizeof(m->file), "%s", file);
        rc = open_dwfl(m, rq, file, rq->fd >= 0 ? rq->fd : cand_fd);
        if (rc == 0)
                rc = read_segments(m);
        if (rc < 0) {
                const char *why = dwfl_errmsg(-1);
                note_set(note, note_size, "%s: not a readable ELF file (%s)", file,
                         why ? why : "unknown error");
                goto fail;
        }
        read_symbols(m);
        if (m->is_guessed)
                note_set(note, note_size,
                         "%s: only its debug file %s was found; addresses are placed as linkers "
                         "usually place code",
                         rq->path, file);
        else if (sym_table_count(m->table) == 0)
                note_set(note, note_size, "%s: stripped, no function symbols", file);
        free(cand);
        if (cand_fd >= 0)
                close(cand_fd);
        *out = m;
        return 0;
fail:
        free(cand);
        if (cand_fd >= 0)
                close(cand_fd);
        elf_module_free(m);
        return rc;
}

void elf_module_free(struct elf_module *m)
{
        if (!m)
                return;
        if (m->dwfl)
                dwfl_end(m->dwfl);
        elf_units_free(m->units);
        elf_inflated_free(&m->inflated);
        free(m->debuginfo_path);
        elf_scopes_free(m->scopes);
        elf_lines_free(m->lines);
        sym_table_free(m->table);
        free(m);
}

const struct sym_table *elf_module_table(const struct elf_module *m)
{
        return m->table;
}

const char *elf_module_file(const struct elf_module *m)
{
        return m->file;
}

bool elf_module_vaddr(const struct elf_module *m, uint64_t file_offset, uint64_t *vaddr)
{
        for (uint32_t i = 0; i < m->nr_seg; i++) {
                const struct elf_segment *s = &m->seg[i];
                uint64_t span = s->filesz > s->memsz ? s->filesz : s->memsz;
                if (file_offset >= s->offset && file_offset - s->offset < span) {
                        *vaddr = file_offset - s->offset + s->vaddr;
                        return true;
                }
        }
        return false;
}

bool elf_module_srcline_through_libdwfl;

/* An inlined instance's DW_AT_call_file: from the unit's line program as elf_lines.c reads it
   (libdw's dwarf_getsrcfiles would read the program again), else libdw's. */
static const char *call_file(struct elf_module *m, Dwarf_Die *cu, Dwarf_Die *die)
{
        Dwarf_Attribute at;
        Dwarf_Word idx;
        Dwarf_Files *files;
        size_t nr;
        const char *name = NULL;
        if (!dwarf_attr(die, DW_AT_call_file, &at) || dwarf_formudata(&at, &idx) != 0)
                return NULL;
        int got =
                elf_module_srcline_through_libdwfl ? -1 : elf_lines_file(m->lines, cu, idx, &name);
        if (got >= 0)
                return got ? name : NULL;
        if (dwarf_getsrcfiles(cu, &files, &nr) != 0 || idx >= nr)
                return NULL;
        return dwarf_filesrc(files, idx, NULL, NULL);
}

static uint32_t udata(Dwarf_Die *die, unsigned int name)
{
        Dwarf_Attribute at;
        Dwarf_Word v;
        if (!dwarf_attr(die, name, &at) || dwarf_formudata(&at, &v) != 0)
                return 0;
        return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* A function DIE's name as its symbol spells it: the linkage name (C++, Rust: mangled, for the
   store to demangle as it does the symbol tables' names), else its name (C). Both through
   DW_AT_abstract_origin and DW_AT_specification. */
static const char *function_name_of(Dwarf_Die *die)
{
        Dwarf_Attribute at;
        const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &at));
        if (!name)
                name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &at));
        return name ? name : dwarf_diename(die);
}

#define SCOPE_WALK_BUDGET 100000 /* DIEs: hostile files nest and import without end */

struct scope_walk {
        Dwarf_Addr pc;
        uint32_t budget;
        Dwarf_Die inner;
        bool has_inner;
};

/* Descends through the DIEs under parent that contain pc (and the partial units they import),
   keeping the deepest subprogram or inlined subroutine: what dwarf_getscopes finds first,
   without its leak (libdw 0.188 drops its array when an inlined instance's
   DW_AT_abstract_origin does not resolve or is not reached). true: a DIE held pc. */
static bool scope_walk(struct scope_walk *w, Dwarf_Die *parent, unsigned int depth)
{
        Dwarf_Die child;
        if (depth > 64 || dwarf_child(parent, &child) != 0)
                return false;
        do {
                if (!w->budget)
                        return false;
                w->budget--;
                int tag = dwarf_tag(&child);
                if (tag == DW_TAG_imported_unit) {
                        Dwarf_Attribute at;
                        Dwarf_Die unit;
                        if (dwarf_attr(&child, DW_AT_import, &at) &&
                            dwarf_formref_die(&at, &unit) && scope_walk(w, &unit, depth + 1))
                                return true;
                        continue;
                }
                if (dwarf_haspc(&child, w->pc) != 1)
                        continue;
                if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
                        w->inner = child;
                        w->has_inner = true;
                }
                scope_walk(w, &child, depth + 1);
                return true; /* scopes nest: the first DIE that holds pc is the path */
        } while (dwarf_siblingof(&child, &child) == 0);
        return false;
}

/* Before libdw opens the DWARF (at the first line asked for: the loader reads symbol tables
   only): the compressed sections of the image and of the file its symbols came from (its debug
   file) inflated by elf_inflate.c, the location lists left out. */
static void inflate_debug(struct elf_module *m)
{
        if (m->is_inflated)
                return;
        m->is_inflated = true;
        GElf_Addr bias;
        Elf *main_elf = dwfl_module_getelf(m->mod, &bias);
        elf_inflate_debug(main_elf, &m->inflated);
        if (m->sym_elf && m->sym_elf != main_elf)
                elf_inflate_debug(m->sym_elf, &m->inflated);
}

bool elf_module_has_dwarf(struct elf_module *m)
{
        if (!m || !m->mod)
                return false;
        if (!m->is_dwarf_known) {
                inflate_debug(m);
                /* libdwfl keeps its answer (the debug information found or not) */
                m->dw = dwfl_module_getdwarf(m->mod, &m->dwarf_bias);
                m->has_dwarf = m->dw != NULL;
                m->is_dwarf_known = true;
        }
        return m->has_dwarf;
}

/* The row at addr (libdwfl's address) of the line table that elf_lines.c leaves to libdw (a split
   unit's, a type unit's): libdwfl's, or, for a unit found by its own ranges (at > 0, where the
   module may have no .debug_aranges and libdwfl then finds no unit), the unit's through libdw.
   The file, or NULL. */
static const char *libdw_row(struct elf_module *m, int at, Dwarf_Die *cu, Dwarf_Addr addr,
                             Dwarf_Addr cubias, int *line, int *col)
{
        if (at <= 0) {
                Dwfl_Line *ln = dwfl_module_getsrc(m->mod, addr);
                return ln ? dwfl_lineinfo(ln, NULL, line, col, NULL, NULL) : NULL;
        }
        Dwarf_Line *ln = dwarf_getsrc_die(cu, addr - cubias);
        if (!ln || dwarf_lineno(ln, line) != 0)
                return NULL;
        if (col && dwarf_linecol(ln, col) != 0)
                *col = 0;
        return dwarf_linesrc(ln, NULL, NULL);
}

/* The unit at addr (libdwfl's address) as dwfl_module_addrdie finds it, through elf_units.c
   where it reads the module's aranges, or by the units' own ranges where the module has none
   (libdwfl would find no unit): 1 with *cu_offset, *die_offset and *cubias set, 0 where there is
   none, -1 where libdwfl is to be asked. */
static int unit_at(struct elf_module *m, Dwarf_Addr addr, uint64_t *cu_offset, uint64_t *die_offset,
                   Dwarf_Addr *cubias)
{
        if (elf_module_srcline_through_libdwfl || !elf_module_has_dwarf(m))
                return -1;
        if (!m->is_units_known) {
                m->units = elf_units_new(dwarf_getelf(m->dw));
                if (!m->units)
                        m->units = elf_units_from_dies(m->dw);
                m->is_units_known = true;
        }
        if (!m->units)
                return -1;
        *cubias = m->dwarf_bias;
        return elf_units_find(m->units, addr - m->dwarf_bias, cu_offset, die_offset);
}

bool elf_module_line(struct elf_module *m, uint64_t vaddr, const char **file, uint32_t *line)
{
        if (!m || !m->mod)
                return false;
        inflate_debug(m);
        /* the line table alone: what elf_module_srcline's innermost frame says, without the
           scopes (no compilation unit: no line table either); read by elf_lines.c, where it
           reads the unit, else by libdwfl */
        Dwarf_Addr addr = (Dwarf_Addr)(vaddr + (uint64_t)m->bias), cubias = 0;
        if (!m->lines)
                m->lines = elf_lines_new();
        int nr = 0;
        const char *f = NULL;
        /* the unit and its DIE's line program attributes read without libdw (its aranges look
           up every unit, its first attribute read parses the unit's abbreviations) */
        uint64_t cu_off, die_off;
        int at = unit_at(m, addr, &cu_off, &die_off, &cubias);
        if (at == 0)
                return false;
        if (at > 0 && elf_lines_find_unit(m->lines, dwarf_getelf(m->dw), m->units, cu_off, die_off,
                                          addr - cubias, &f, &nr, NULL) >= 0) {
                if (!f || nr <= 0)
                        return false;
                *file = f;
                *line = (uint32_t)nr;
                return true;
        }
        Dwarf_Die cu_die, *cu = at > 0 ? dwarf_offdie(m->dw, die_off, &cu_die) : NULL;
        if (!cu)
                cu = dwfl_module_addrdie(m->mod, addr, &cubias);
        if (!cu)
                return false;
        int got = elf_lines_find(m->lines, cu, addr - cubias, &f, &nr, NULL);
        if (got < 0)
                f = libdw_row(m, at, cu, addr, cubias, &nr, NULL);
        if (!f || nr <= 0)
                return false;
        *file = f;
        *line = (uint32_t)nr;
        return true;
}

uint32_t elf_module_srcline(struct elf_module *m, uint64_t vaddr, struct elf_srcframe *out,
                            uint32_t max)
{
        if (!m || !m->mod || !max)
                return 0;
        inflate_debug(m);
        Dwarf_Addr addr = (Dwarf_Addr)(vaddr + (uint64_t)m->bias), cubias = 0;
        uint64_t cu_off, die_off;
        Dwarf_Die cu_die, *cu = NULL;
        int at = unit_at(m, addr, &cu_off, &die_off, &cubias);
        if (at == 0)
                return 0;
        if (at > 0)
                cu = dwarf_offdie(m->dw, die_off, &cu_die); /* the DIE libdwfl's would be */
        if (!cu)
                cu = dwfl_module_addrdie(m->mod, addr, &cubias);
        if (!cu)
                return 0;
        /* the innermost row: the line table that the line lookups read (elf_lines.c), where it
           reads the unit (libdwfl's would read the unit's table again, a heap block a row) */
        const char *file = NULL;
        int line = 0, col = 0;
        if (!m->lines)
                m->lines = elf_lines_new();
        int got = elf_module_srcline_through_libdwfl
                          ? -1
                          : elf_lines_find(m->lines, cu, addr - cubias, &file, &line, &col);
        if (got < 0) {
                line = col = 0;
                file = libdw_row(m, at, cu, addr, cubias, &line, &col);
        }

        /* the innermost function scope at addr; then its concrete containers, outward
           (dwarf_getscopes_die continues an inlined instance with the code it was inlined
           into) */
        if (!m->scopes)
                m->scopes = elf_scopes_new();
        Dwarf_Die found[ELF_SCOPES_MAX_PATH], *scopes = NULL;
        /* a split unit's scopes lie in its .dwo, under the split unit's DIE (libdwfl's answer
           for its skeleton); the skeleton keeps the line table and its files */
        Dwarf_Die split, *scope_cu = cu;
        if (dwarf_tag(cu) == DW_TAG_skeleton_unit &&
            dwarf_cu_info(cu->cu, NULL, NULL, NULL, &split, NULL, NULL, NULL) == 0 &&
            dwarf_tag(&split) == DW_TAG_compile_unit)
                scope_cu = &split;
        int nr = elf_scopes_find(m->scopes, scope_cu, addr - cubias, SCOPE_WALK_BUDGET, 64, found,
                                 ELF_SCOPES_MAX_PATH);
        if (nr == -1) {
                nr = 0;
        } else if (nr == -2) {
                /* the index does not answer: the walk itself */
                struct scope_walk w = {.pc = addr - cubias, .budget = SCOPE_WALK_BUDGET};
                scope_walk(&w, scope_cu, 0);
                Dwarf_Die inner = w.inner;
                nr = w.has_inner ? dwarf_getscopes_die(&inner, &scopes) : 0;
        }
        const Dwarf_Die *chain = scopes ? scopes : found;
        uint32_t k = 0;
        for (int i = 0; i < nr && k < max; i++) {
                Dwarf_Die sc = chain[i];
                int tag = dwarf_tag(&sc);
                if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
                        continue;
                const char *name = function_name_of(&sc);
                out[k].function = name ? name : "";
                out[k].file = file ? file : "";
                out[k].line = line > 0 ? (uint32_t)line : 0;
                out[k].column = col > 0 ? (uint32_t)col : 0;
                k++;
                if (tag == DW_TAG_subprogram)
                        break;
                /* the caller's position: where this was inlined */
                file = call_file(m, cu, &sc);
                line = (int)udata(&sc, DW_AT_call_line);
                col = (int)udata(&sc, DW_AT_call_column);
        }
        free(scopes);
        if (k == 0 && file && max) {
                /* line information without a subprogram DIE (assembly) */
                out[0] = (struct elf_srcframe){"", file, line > 0 ? (uint32_t)line : 0,
                                               col > 0 ? (uint32_t)col : 0};
                k = 1;
        }
        return k;
}
