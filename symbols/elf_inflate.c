/* SPDX-License-Identifier: MIT */
/* elf_inflate.c: owns inflating an ELF file's compressed DWARF sections in place before libdw
   opens them (libdeflate, loaded at its first use), and leaving out the ones never read. */
#include "elf_inflate.h"

#include "dwarf_cache.h"

#include "util/dl_lazy.h"
#include "util/xalloc.h"

#include <dlfcn.h>
#include <libdeflate.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* libdeflate's API (its header, found by pkg-config), the library loaded at its first use
   where it is installed (Debian's libdeflate0; without it libdw inflates with zlib). */
static struct {
        __typeof__(libdeflate_alloc_decompressor) *alloc;
        __typeof__(libdeflate_zlib_decompress_ex) *zlib_ex;
        __typeof__(libdeflate_free_decompressor) *free;
        bool has;
} deflate;
static pthread_once_t deflate_once = PTHREAD_ONCE_INIT;

static void deflate_load(void)
{
        void *h = dl_open_lazy("libdeflate.so.0");
        if (!h)
                return;
        *(void **)&deflate.alloc = dlsym(h, "libdeflate_alloc_decompressor");
        *(void **)&deflate.zlib_ex = dlsym(h, "libdeflate_zlib_decompress_ex");
        *(void **)&deflate.free = dlsym(h, "libdeflate_free_decompressor");
        deflate.has = deflate.alloc && deflate.zlib_ex && deflate.free;
        if (!deflate.has)
                dlclose(h);
}

/* Sections libdw reads at its open and no lookup of ours asks for (DW_AT_location's lists). */
static bool is_unread(const char *name)
{
        return strcmp(name, ".debug_loclists") == 0 || strcmp(name, ".debug_loc") == 0;
}

static void keep_buf(struct elf_inflated *keep, void *buf)
{
        keep->bufs = xrealloc(keep->bufs, (keep->nr + 1) * sizeof(*keep->bufs));
        keep->bufs[keep->nr++] = buf;
}

static void keep_map(struct elf_inflated *keep, const struct dwarf_cache_map *m)
{
        keep->maps = xrealloc(keep->maps, (keep->nr_maps + 1) * sizeof(*keep->maps));
        keep->maps[keep->nr_maps++] = *m;
}

/* Makes scn (shdr sh, its data data) the inflated bytes out[0..ch's size); false: left as it
   is. */
static bool install(Elf_Scn *scn, const GElf_Shdr *sh, Elf_Data *data, const GElf_Chdr *ch,
                    void *out)
{
        GElf_Shdr now = *sh;
        now.sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
        now.sh_size = ch->ch_size;
        now.sh_addralign = ch->ch_addralign;
        if (!gelf_update_shdr(scn, &now))
                return false;
        data->d_buf = out;
        data->d_size = ch->ch_size;
        data->d_type = ELF_T_BYTE;
        data->d_align = ch->ch_addralign;
        data->d_off = 0;
        return true;
}

/* Deflate's best case turns about two bits into a 258-byte match: no stream of in_n bytes
   inflates to more than 1032 times that (libelf refuses the same ratio), so a header that
   claims more is not believed, and its size is never asked of malloc. */
bool elf_inflate_size_ok(uint64_t size, uint64_t in_n)
{
        return size != 0 && size <= (1ull << 32) && size / 1032 <= in_n;
}

/* Inflates scn (shdr sh) in place; false: left as it is. */
static bool inflate_section(struct libdeflate_decompressor *d, Elf_Scn *scn, GElf_Shdr *sh,
                            struct elf_inflated *keep)
{
        GElf_Chdr ch;
        Elf_Data *data = elf_getdata(scn, NULL);
        if (!data || !data->d_buf || data->d_size < sizeof(Elf64_Chdr) || !gelf_getchdr(scn, &ch) ||
            ch.ch_type != ELFCOMPRESS_ZLIB ||
            !elf_inflate_size_ok(ch.ch_size, data->d_size - sizeof(Elf64_Chdr)))
                return false;
        const char *in = (const char *)data->d_buf + sizeof(Elf64_Chdr);
        size_t got_in = 0, got_out = 0, in_n = data->d_size - sizeof(Elf64_Chdr);
        /* inflated by an earlier run (dwarf_cache.h): mapped, read where it lies */
        struct dwarf_cache_key key;
        bool is_cached = ch.ch_size >= DWARF_CACHE_MIN_BYTES;
        if (is_cached) {
                struct dwarf_cache_map m;
                dwarf_cache_key(in, in_n, ch.ch_size, &key);
                if (dwarf_cache_find(&key, &m)) {
                        /* libelf and libdw only read a section's bytes */
                        if (install(scn, sh, data, &ch, (void *)(uintptr_t)m.data)) {
                                keep_map(keep, &m);
                                return true;
                        }
                        dwarf_cache_unmap(&m);
                        return false;
                }
        }
        if (!deflate.has)
                return false;
        void *out = malloc(ch.ch_size);
        if (!out)
                return false;
        int rc = deflate.zlib_ex(d, in, in_n, out, ch.ch_size, &got_in, &got_out);
        if (rc != 0 || got_in != in_n || got_out != ch.ch_size ||
            !install(scn, sh, data, &ch, out)) {
                free(out);
                return false;
        }
        keep_buf(keep, out);
        if (is_cached)
                dwarf_cache_store(&key, out);
        return true;
}

/* The DWARF string sections (DW_FORM_strp's and DW_FORM_line_strp's) of elf, each ending with
   a NUL or left out (SHT_NOBITS, which libdw skips: the attributes that point into it are then
   refused): libdw (0.188) reads a line table's file and directory names with strlen where they
   lie, so the last string of a section that does not end with a NUL is read past the section's
   end (a fuzzed library: its .debug_line_str of 8 bytes and no NUL). A section still compressed
   (not inflated above; SHF_COMPRESSED, or GNU's .zdebug_ form) is inflated by libelf first, as
   libdw's open would. Any ELF class. */
static void end_strings(Elf *elf, size_t shstrndx)
{
        for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
                GElf_Shdr sh;
                const char *name;
                if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
                    (sh.sh_flags & SHF_GROUP) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
                        continue;
                bool is_gnu = name[0] == '.' && name[1] == 'z';
                const char *base = is_gnu ? name + 2 : name + 1; /* "debug_str" */
                if (strcmp(base, "debug_str") != 0 && strcmp(base, "debug_line_str") != 0)
                        continue;
                if ((sh.sh_flags & SHF_COMPRESSED) &&
                    (elf_compress(scn, 0, 0) < 0 || !gelf_getshdr(scn, &sh)))
                        continue; /* refused by libdw's open the same way */
                if (is_gnu && !(sh.sh_flags & SHF_COMPRESSED) &&
                    (elf_compress_gnu(scn, 0, 0) < 0 || !gelf_getshdr(scn, &sh)))
                        continue;
                Elf_Data *data = elf_getdata(scn, NULL);
                if (!data || !data->d_buf || !data->d_size ||
                    ((const char *)data->d_buf)[data->d_size - 1] == '\0')
                        continue;
                GElf_Shdr now = sh;
                now.sh_type = SHT_NOBITS;
                gelf_update_shdr(scn, &now);
        }
}

void elf_inflate_debug(Elf *elf, struct elf_inflated *keep)
{
        GElf_Ehdr eh;
        size_t shstrndx;
        if (!elf || !gelf_getehdr(elf, &eh) || elf_getshdrstrndx(elf, &shstrndx) != 0)
                return;
        if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
            (eh.e_type != ET_DYN && eh.e_type != ET_EXEC)) {
                end_strings(elf, shstrndx);
                return;
        }
        struct libdeflate_decompressor *d = NULL;
        for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
                GElf_Shdr sh;
                const char *name;
                if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
                    (sh.sh_flags & SHF_GROUP) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
                    strncmp(name, ".debug_", 7) != 0)
                        continue;
                if (is_unread(name)) {
                        GElf_Shdr now = sh;
                        now.sh_type = SHT_NOBITS;
                        gelf_update_shdr(scn, &now);
                        continue;
                }
                if (!(sh.sh_flags & SHF_COMPRESSED))
                        continue;
                pthread_once(&deflate_once, deflate_load);
                if (deflate.has && !d && !(d = deflate.alloc()))
                        return;
                inflate_section(d, scn, &sh, keep);
        }
        if (d)
                deflate.free(d);
        end_strings(elf, shstrndx);
}

void elf_inflated_free(struct elf_inflated *keep)
{
        for (uint32_t i = 0; keep && i < keep->nr; i++)
                free(keep->bufs[i]);
        for (uint32_t i = 0; keep && i < keep->nr_maps; i++)
                dwarf_cache_unmap(&keep->maps[i]);
        if (keep) {
                free(keep->bufs);
                free(keep->maps);
                *keep = (struct elf_inflated){0};
        }
}
