/* SPDX-License-Identifier: MIT */
/* test_elf_lines.c: the line tables read unit by unit (symbols/elf_lines.c) answer every
   address of the symbol fixture, its library and, where its debug file is installed, libc
   exactly as libdwfl's dwfl_module_getsrc and dwfl_lineinfo do, reading the units themselves
   (no answer left to libdw), columns included, and elf_module_srcline's innermost rows read so
   are libdwfl's, as are the units elf_units.c finds by address and the line program attributes
   it reads from their DIEs; and compressed debug sections inflated ahead of libdw
   (symbols/elf_inflate.c) hold the bytes of the uncompressed file, answer the same, and the
   location lists are left out. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf_inflate.h"
#include "elf_lines.h"
#include "elf_module.h"
#include "elf_units.h"
#include "module_load.h"

static const char *env(const char *name)
{
        const char *v = getenv(name);
        if (!v || !*v)
                fail_msg("%s is not set (run through ctest)", name);
        return v;
}

struct counts {
        unsigned long asked, found, left;
};

/* path opened through libdwfl as the product opens a module (its debug file found by build-id) */
static Dwfl_Module *open_module(const char *path, Dwfl **dwfl)
{
        static char *debuginfo_path = "-:.debug:/usr/lib/debug";
        static const Dwfl_Callbacks cb = {.find_elf = dwfl_build_id_find_elf,
                                          .find_debuginfo = dwfl_standard_find_debuginfo,
                                          .section_address = dwfl_offline_section_address,
                                          .debuginfo_path = &debuginfo_path};
        *dwfl = dwfl_begin(&cb);
        assert_non_null(*dwfl);
        dwfl_report_begin(*dwfl);
        Dwfl_Module *mod = dwfl_report_elf(*dwfl, "m", path, -1, 0, true);
        dwfl_report_end(*dwfl, NULL, NULL);
        assert_non_null(mod);
        return mod;
}

/* Every address of the file's executable segments (a stride that varies, so that a few
   hundred thousand lookups cover a library) through both readers. */
static void compare_file(const char *path, uint32_t max_step, struct counts *c)
{
        Dwfl *dwfl;
        Dwfl_Module *mod = open_module(path, &dwfl);
        GElf_Addr bias = 0;
        Elf *elf = dwfl_module_getelf(mod, &bias);
        assert_non_null(elf);
        size_t nr_ph = 0;
        assert_int_equal(elf_getphdrnum(elf, &nr_ph), 0);
        struct elf_lines *x = elf_lines_new();
        for (size_t i = 0; i < nr_ph; i++) {
                GElf_Phdr ph;
                if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
                        continue;
                for (uint64_t v = ph.p_vaddr; v < ph.p_vaddr + ph.p_filesz; v += 1 + v % max_step) {
                        Dwarf_Addr addr = v + bias, cubias = 0;
                        Dwfl_Line *ln = dwfl_module_getsrc(mod, addr);
                        int want_line = 0, want_col = 0;
                        const char *want =
                                ln ? dwfl_lineinfo(ln, NULL, &want_line, &want_col, NULL, NULL)
                                   : NULL;
                        Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, &cubias);
                        c->asked++;
                        if (!cu) {
                                assert_null(want);
                                continue;
                        }
                        const char *file = NULL;
                        int line = 0, col = -1;
                        int got = elf_lines_find(x, cu, addr - cubias, &file, &line, &col);
                        if (got < 0) {
                                c->left++;
                                continue;
                        }
                        if (got != (want != NULL))
                                fail_msg("%s %#lx: %s, libdw %s", path, (unsigned long)v,
                                         got ? file : "no line", want ? want : "none");
                        if (!got)
                                continue;
                        c->found++;
                        assert_string_equal(file, want);
                        assert_int_equal(line, want_line);
                        assert_int_equal(col, want_col);
                }
        }
        elf_lines_free(x);
        dwfl_end(dwfl);
}

static void test_fixture_and_library(void **state)
{
        (void)state;
        struct counts c = {0};
        compare_file(env("SYM_FIXTURE"), 1, &c);
        compare_file(env("SYM_FIXTURE_NOPIE"), 1, &c);
        compare_file(env("SYM_FIXLIB"), 1, &c);
        assert_true(c.found > 100);
        assert_int_equal(c.left, 0);
}

/* libc: DWARF 5 from the distribution's compiler, many units, sequences in several sections */
static void test_libc(void **state)
{
        (void)state;
        const char *libs[] = {"/usr/lib/x86_64-linux-gnu/libc.so.6",
                              "/usr/lib/aarch64-linux-gnu/libc.so.6", "/lib64/libc.so.6"};
        struct counts c = {0};
        for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++)
                if (access(libs[i], R_OK) == 0)
                        compare_file(libs[i], 31, &c);
        if (!c.found) {
                printf("test_elf_lines: libc's debug information is not installed; skipped\n");
                skip();
        }
        assert_int_equal(c.left, 0);
}

/* Two answers of elf_module_srcline the same, frame by frame. */
static void expect_same_frames(const struct elf_srcframe *ours, uint32_t n,
                               const struct elf_srcframe *theirs, uint32_t k)
{
        assert_int_equal(n, k);
        for (uint32_t i = 0; i < n; i++) {
                assert_string_equal(ours[i].function, theirs[i].function);
                assert_string_equal(ours[i].file, theirs[i].file);
                assert_int_equal(ours[i].line, theirs[i].line);
                assert_int_equal(ours[i].column, theirs[i].column);
        }
}

/* elf_module_srcline of every stride-th address of path's first 1 MiB, its innermost row read
   by elf_lines.c and by libdwfl: the same frames (functions, files, lines, columns). Returns
   the number of addresses with frames. */
static uint32_t compare_srcline(const char *path, uint64_t stride)
{
        struct elf_load_request rq = {.path = path, .fd = -1};
        struct elf_module *m = NULL;
        char note[512];
        assert_int_equal(elf_module_load(&rq, &m, note, sizeof(note)), 0);
        uint32_t nr_found = 0;
        for (uint64_t v = 0; v < (1u << 20); v += stride) {
                struct elf_srcframe ours[8], theirs[8];
                elf_module_srcline_through_libdwfl = false;
                uint32_t n = elf_module_srcline(m, v, ours, 8);
                elf_module_srcline_through_libdwfl = true;
                uint32_t k = elf_module_srcline(m, v, theirs, 8);
                elf_module_srcline_through_libdwfl = false;
                expect_same_frames(ours, n, theirs, k);
                nr_found += n > 0 && ours[0].line > 0;
                /* the line alone, its unit found by elf_units.c and by libdwfl */
                const char *fo = NULL, *ft = NULL;
                uint32_t lo = 0, lt = 0;
                bool ho = elf_module_line(m, v, &fo, &lo);
                elf_module_srcline_through_libdwfl = true;
                bool ht = elf_module_line(m, v, &ft, &lt);
                elf_module_srcline_through_libdwfl = false;
                assert_int_equal(ho, ht);
                if (ho) {
                        assert_string_equal(fo, ft);
                        assert_int_equal(lo, lt);
                }
        }
        elf_module_free(m);
        return nr_found;
}

static void test_srcline_rows(void **state)
{
        (void)state;
        assert_true(compare_srcline(env("SYM_FIXTURE"), 1) > 10);
        assert_true(compare_srcline(env("SYM_FIXLIB"), 1) > 10);
        const char *libs[] = {"/usr/lib/x86_64-linux-gnu/libc.so.6",
                              "/usr/lib/aarch64-linux-gnu/libc.so.6", "/lib64/libc.so.6"};
        for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++)
                if (access(libs[i], R_OK) == 0)
                        printf("test_elf_lines: %s: %u addresses with lines\n", libs[i],
                               compare_srcline(libs[i], 61));
}

/* elf_units.c against libdwfl on path: the unit at every stride-th address of its executable
   segments (dwfl_module_addrdie's DIE offset, or none), and each unit's line program attributes
   where elf_units.c reads its DIE (DW_AT_stmt_list, DW_AT_comp_dir as libdw reads them).
   Returns the number of units read. */
static uint32_t compare_units(const char *path, uint32_t max_step)
{
        Dwfl *dwfl;
        Dwfl_Module *mod = open_module(path, &dwfl);
        GElf_Addr bias = 0;
        Elf *elf = dwfl_module_getelf(mod, &bias);
        Dwarf_Addr dwbias = 0;
        Dwarf *dw = dwfl_module_getdwarf(mod, &dwbias);
        uint32_t nr_read = 0;
        struct elf_units *u = dw ? elf_units_new(dwarf_getelf(dw)) : NULL;
        size_t nr_ph = 0;
        assert_int_equal(elf_getphdrnum(elf, &nr_ph), 0);
        for (size_t i = 0; u && i < nr_ph; i++) {
                GElf_Phdr ph;
                if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
                        continue;
                uint64_t last_cu = UINT64_MAX;
                for (uint64_t v = ph.p_vaddr; v < ph.p_vaddr + ph.p_filesz + 64;
                     v += 1 + v % max_step) {
                        Dwarf_Addr addr = v + bias, cubias = 0;
                        Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, &cubias);
                        uint64_t cu_off = 0, die_off = 0;
                        int got = elf_units_find(u, addr - dwbias, &cu_off, &die_off);
                        assert_int_equal(got, cu != NULL);
                        if (!cu)
                                continue;
                        assert_int_equal(die_off, dwarf_dieoffset(cu));
                        if (cu_off == last_cu)
                                continue;
                        last_cu = cu_off;
                        struct elf_unit_info ui;
                        if (elf_units_info(u, cu_off, &ui) <= 0)
                                continue;
                        nr_read++;
                        Dwarf_Attribute at;
                        Dwarf_Word stmt = 0;
                        assert_non_null(dwarf_attr(cu, DW_AT_stmt_list, &at));
                        assert_int_equal(dwarf_formudata(&at, &stmt), 0);
                        assert_int_equal(ui.stmt_list, stmt);
                        const char *dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &at));
                        if (dir)
                                assert_string_equal(ui.comp_dir, dir);
                        else
                                assert_null(ui.comp_dir);
                        Dwarf_Half version;
                        uint8_t unit_type, addr_size;
                        assert_int_equal(dwarf_cu_info(cu->cu, &version, &unit_type, NULL, NULL,
                                                       NULL, &addr_size, NULL),
                                         0);
                        assert_int_equal(unit_type, DW_UT_compile);
                        assert_int_equal(ui.addr_size, addr_size);
                }
        }
        elf_units_free(u);
        dwfl_end(dwfl);
        return nr_read;
}

/* The fixture's library as clang 14 builds its programs: DWARF 5 whose line table gives each file
   an MD5 sum (DW_LNCT_MD5 as DW_FORM_data16, which gcc leaves out), read here and by libdw
   alike; skipped where no clang was found when the build was configured. */
static void test_clang_dwarf5(void **state)
{
        (void)state;
        const char *path = getenv("SYM_FIXLIB_DWARF5");
        if (!path || !*path) {
                fprintf(stderr, "skipped: no clang found when the build was configured\n");
                skip();
        }
        struct counts c = {0};
        compare_file(path, 1, &c);
        assert_true(c.found > 100);
        assert_int_equal(c.left, 0);
        printf("test_elf_lines: %s: %u units read without libdw\n", path, compare_units(path, 1));
}

/* The same library built without .debug_aranges, as clang builds by default: libdwfl (elfutils
   0.188) finds no unit there, so no line nor scope; the units' own ranges find them
   (elf_units_from_dies), and every address answers as libdwfl answers in the build with aranges
   (the same code): the frames, their files, lines and columns, and the line alone. The
   environment names the two builds; skipped where no clang was found when the build was
   configured. Returns the addresses with a line. */
static uint32_t compare_without_aranges(const char *with_env, const char *without_env)
{
        const char *with = getenv(with_env), *without = getenv(without_env);
        if (!with || !*with || !without || !*without) {
                fprintf(stderr, "skipped: no clang found when the build was configured\n");
                skip();
        }
        struct elf_module *a = load_module(with), *b = load_module(without);
        uint32_t nr_found = 0;
        for (uint64_t v = 0; v < (1u << 16); v++) {
                struct elf_srcframe ours[8], theirs[8];
                uint32_t n = elf_module_srcline(b, v, ours, 8);
                elf_module_srcline_through_libdwfl = true;
                uint32_t k = elf_module_srcline(a, v, theirs, 8);
                const char *ft = NULL;
                uint32_t lt = 0;
                bool ht = elf_module_line(a, v, &ft, &lt);
                /* and libdwfl on the file without: nothing at all */
                struct elf_srcframe none[8];
                assert_int_equal(elf_module_srcline(b, v, none, 8), 0);
                elf_module_srcline_through_libdwfl = false;
                expect_same_frames(ours, n, theirs, k);
                nr_found += n > 0 && ours[0].line > 0;
                const char *fo = NULL;
                uint32_t lo = 0;
                bool ho = elf_module_line(b, v, &fo, &lo);
                assert_int_equal(ho, ht);
                if (ho) {
                        assert_string_equal(fo, ft);
                        assert_int_equal(lo, lt);
                }
        }
        elf_module_free(a);
        elf_module_free(b);
        return nr_found;
}

static void test_clang_without_aranges(void **state)
{
        (void)state;
        assert_true(compare_without_aranges("SYM_FIXLIB_DWARF5", "SYM_FIXLIB_DWARF5_NOAR") > 100);
}

/* The same with split DWARF: a unit's skeleton in the file holds its ranges and its line table,
   its DIEs (the scopes, the inlined frames) lie in a .dwo file beside it. */
static void test_clang_split_without_aranges(void **state)
{
        (void)state;
        assert_true(compare_without_aranges("SYM_FIXLIB_SPLIT", "SYM_FIXLIB_SPLIT_NOAR") > 100);
}

static void test_units_as_libdwfl(void **state)
{
        (void)state;
        compare_units(env("SYM_FIXTURE"), 1);
        compare_units(env("SYM_FIXTURE_NOPIE"), 1);
        compare_units(env("SYM_FIXLIB"), 1);
        const char *libs[] = {"/usr/lib/x86_64-linux-gnu/libc.so.6",
                              "/usr/lib/aarch64-linux-gnu/libc.so.6", "/lib64/libc.so.6"};
        for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++)
                if (access(libs[i], R_OK) == 0)
                        printf("test_elf_lines: %s: %u units read without libdw\n", libs[i],
                               compare_units(libs[i], 31));
}

/* The section of elf named name: its header and data (NULL: none). */
static Elf_Data *section(Elf *elf, const char *name, GElf_Shdr *sh)
{
        size_t shstrndx;
        assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
        for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
                const char *n;
                if (gelf_getshdr(scn, sh) && (n = elf_strptr(elf, shstrndx, sh->sh_name)) &&
                    strcmp(n, name) == 0)
                        return elf_getdata(scn, NULL);
        }
        return NULL;
}

/* in's copy at out with its debug sections compressed in form (objcopy's zlib or zlib-gnu);
   false, said, where objcopy cannot. */
static bool compressed_copy(const char *in, const char *form, const char *out)
{
        char cmd[3 * PATH_MAX];
        snprintf(cmd, sizeof(cmd), "objcopy --compress-debug-sections=%s '%s' '%s' 2>/dev/null",
                 form, in, out);
        if (system(cmd) == 0)
                return true;
        printf("test_elf_lines: objcopy --compress-debug-sections=%s failed\n", form);
        return false;
}

/* The modules of files a and b answer alike at every address of the fixture library's range:
   lines, and inline chains (function, file, line); more than 10 lines found. */
static void modules_answer_alike(const char *a, const char *b)
{
        struct elf_module *ma = load_module(a), *mb = load_module(b);
        uint32_t nr_found = 0;
        for (uint64_t v = 0; v < 0x4000; v++) {
                const char *fa = NULL, *fb = NULL;
                uint32_t la = 0, lb = 0;
                bool ha = elf_module_line(ma, v, &fa, &la), hb = elf_module_line(mb, v, &fb, &lb);
                assert_int_equal(ha, hb);
                struct elf_srcframe fra[8], frb[8];
                uint32_t na = elf_module_srcline(ma, v, fra, 8),
                         nb = elf_module_srcline(mb, v, frb, 8);
                assert_int_equal(na, nb);
                for (uint32_t i = 0; i < na; i++) {
                        assert_string_equal(fra[i].function ? fra[i].function : "-",
                                            frb[i].function ? frb[i].function : "-");
                        assert_string_equal(fra[i].file ? fra[i].file : "-",
                                            frb[i].file ? frb[i].file : "-");
                        assert_int_equal(fra[i].line, frb[i].line);
                }
                if (!ha)
                        continue;
                nr_found++;
                assert_string_equal(fa, fb);
                assert_int_equal(la, lb);
        }
        assert_true(nr_found > 10);
        elf_module_free(ma);
        elf_module_free(mb);
}

static void test_inflated_sections(void **state)
{
        (void)state;
        const char *plain = env("SYM_FIXLIB");
        char dir[] = "/tmp/test_elf_lines.XXXXXX", packed[PATH_MAX];
        assert_non_null(mkdtemp(dir));
        snprintf(packed, sizeof(packed), "%s/libsymfix.so", dir);
        if (!compressed_copy(plain, "zlib", packed)) {
                rmdir(dir);
                skip();
        }
        int fd_p = open(plain, O_RDONLY), fd_z = open(packed, O_RDONLY);
        assert_true(fd_p >= 0 && fd_z >= 0);
        Elf *ep = elf_begin(fd_p, ELF_C_READ_MMAP, NULL);
        Elf *ez = elf_begin(fd_z, ELF_C_READ_MMAP_PRIVATE, NULL);
        assert_non_null(ep);
        assert_non_null(ez);
        GElf_Shdr sh, shp;
        assert_non_null(section(ez, ".debug_info", &sh));
        assert_true(sh.sh_flags & SHF_COMPRESSED);
        struct elf_inflated keep = {0};
        elf_inflate_debug(ez, &keep);
        /* the location lists are left out either way */
        if (section(ep, ".debug_loclists", &shp))
                assert_int_equal(section(ez, ".debug_loclists", &sh) ? sh.sh_type : 0, SHT_NOBITS);
        if (keep.nr) { /* libdeflate is installed: the bytes of the plain file */
                const char *names[] = {".debug_info", ".debug_abbrev", ".debug_line", ".debug_str",
                                       ".debug_aranges"};
                for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                        Elf_Data *p = section(ep, names[i], &shp), *z = section(ez, names[i], &sh);
                        assert_non_null(p);
                        assert_non_null(z);
                        assert_false(sh.sh_flags & SHF_COMPRESSED);
                        assert_int_equal(sh.sh_size, shp.sh_size);
                        assert_int_equal(z->d_size, p->d_size);
                        assert_memory_equal(z->d_buf, p->d_buf, p->d_size);
                }
        } else {
                printf("test_elf_lines: libdeflate is not installed: libdw inflates\n");
        }
        elf_end(ez);
        elf_inflated_free(&keep);
        elf_end(ep);
        close(fd_p);
        close(fd_z);

        /* through the module: the same lines and inline chains at every address */
        modules_answer_alike(plain, packed);
        unlink(packed);
        /* GNU's older form (.zdebug_ sections), which libdw inflates itself at its open (the
           sections elf_inflate_debug reads before libdw inflated by libelf, as libdw would):
           the same answers */
        char gnu[PATH_MAX];
        snprintf(gnu, sizeof(gnu), "%s/libsymfix.g.so", dir);
        if (compressed_copy(plain, "zlib-gnu", gnu)) {
                modules_answer_alike(plain, gnu);
                unlink(gnu);
        }
        rmdir(dir);
}

/* A DWARF string section whose bytes do not end with a NUL (a fuzzed library's .debug_line_str):
   libdw reads a line table's names with strlen, past the section's end, so elf_inflate_debug
   leaves such a section out (SHT_NOBITS), an intact one in; a module of the damaged file answers
   every lookup without reading outside its sections (ASan's build checks that). The fixture's
   .debug_line_str where it has one (DWARF 5), else its .debug_str; compressed too (objcopy's zlib
   and zlib-gnu sections, inflated first). */
static void test_unended_strings(void **state)
{
        (void)state;
        const char *plain = env("SYM_FIXLIB");
        char dir[] = "/tmp/test_elf_lines.XXXXXX", bad[PATH_MAX], badz[PATH_MAX], badg[PATH_MAX],
             cmd[3 * PATH_MAX];
        assert_non_null(mkdtemp(dir));
        snprintf(bad, sizeof(bad), "%s/libsymfix.so", dir);
        snprintf(badz, sizeof(badz), "%s/libsymfix.z.so", dir);
        snprintf(badg, sizeof(badg), "%s/libsymfix.g.so", dir);
        int fd = open(plain, O_RDONLY);
        assert_true(fd >= 0);
        Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
        assert_non_null(e);
        GElf_Shdr sh;
        const char *damaged = ".debug_line_str", *other = ".debug_str";
        if (!section(e, damaged, &sh)) {
                damaged = ".debug_str";
                other = ".debug_line_str";
        }
        assert_non_null(section(e, damaged, &sh));
        assert_int_equal(sh.sh_type, SHT_PROGBITS);
        assert_true(sh.sh_size > 0);
        uint64_t last = sh.sh_offset + sh.sh_size - 1;
        bool has_other = section(e, other, &sh) != NULL;
        /* the intact file: nothing left out */
        struct elf_inflated keep = {0};
        elf_inflate_debug(e, &keep);
        assert_int_equal(section(e, damaged, &sh) ? sh.sh_type : 0, SHT_PROGBITS);
        elf_end(e);
        elf_inflated_free(&keep);
        close(fd);
        /* the copy: the section's last byte (a NUL) made 'x' */
        snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", plain, bad);
        assert_int_equal(system(cmd), 0);
        fd = open(bad, O_RDWR);
        assert_true(fd >= 0);
        char c = 1;
        assert_int_equal(pread(fd, &c, 1, (off_t)last), 1);
        assert_int_equal(c, 0);
        assert_int_equal(pwrite(fd, "x", 1, (off_t)last), 1);
        close(fd);
        /* compressed: SHF_COMPRESSED sections (zlib), and GNU's .zdebug_ ones (zlib-gnu) */
        const char *paths[3] = {bad, NULL, NULL}, *forms[3] = {NULL, "zlib", "zlib-gnu"},
                   *outs[3] = {NULL, badz, badg};
        for (size_t i = 1; i < 3; i++)
                if (compressed_copy(bad, forms[i], outs[i]))
                        paths[i] = outs[i];
        for (size_t i = 0; i < 3; i++) {
                if (!paths[i])
                        continue;
                char dname[64], oname[64];
                snprintf(dname, sizeof(dname), "%s%s", i == 2 ? ".z" : ".", damaged + 1);
                snprintf(oname, sizeof(oname), "%s%s", i == 2 ? ".z" : ".", other + 1);
                fd = open(paths[i], O_RDONLY);
                assert_true(fd >= 0);
                e = elf_begin(fd, ELF_C_READ_MMAP_PRIVATE, NULL);
                assert_non_null(e);
                memset(&keep, 0, sizeof(keep));
                elf_inflate_debug(e, &keep);
                assert_int_equal(section(e, dname, &sh) ? sh.sh_type : 0, SHT_NOBITS);
                if (has_other)
                        assert_int_equal(section(e, oname, &sh) ? sh.sh_type : 0, SHT_PROGBITS);
                elf_end(e);
                elf_inflated_free(&keep);
                close(fd);
                /* through the module: every address asked, lines and inline chains */
                struct elf_module *m = load_module(paths[i]);
                for (uint64_t v = 0; v < 0x4000; v++) {
                        const char *f = NULL;
                        uint32_t line = 0;
                        if (elf_module_line(m, v, &f, &line))
                                assert_true(strlen(f) < 4096);
                        struct elf_srcframe fr[8];
                        uint32_t n = elf_module_srcline(m, v, fr, 8);
                        for (uint32_t k = 0; k < n; k++) {
                                assert_true(!fr[k].file || strlen(fr[k].file) < 4096);
                                assert_true(!fr[k].function || strlen(fr[k].function) < 4096);
                        }
                }
                elf_module_free(m);
                unlink(paths[i]);
        }
        rmdir(dir);
}

/* A .debug_info flagged SHF_GROUP (a fuzzed file's), which libdw's open passes over: the line
   table read alone finds no unit there either, so a line is found only where libdwfl's scopes
   are, with the same file and line (before, the units were read from it and the scopes were not:
   a line with no frame). */
static void test_group_section(void **state)
{
        (void)state;
        const char *plain = env("SYM_FIXLIB");
        char dir[] = "/tmp/test_elf_lines.XXXXXX", grp[PATH_MAX], cmd[3 * PATH_MAX];
        assert_non_null(mkdtemp(dir));
        snprintf(grp, sizeof(grp), "%s/libsymfix.so", dir);
        snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", plain, grp);
        assert_int_equal(system(cmd), 0);
        /* .debug_info's section header: its sh_flags given SHF_GROUP */
        int fd = open(grp, O_RDWR);
        assert_true(fd >= 0);
        Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
        assert_non_null(e);
        GElf_Ehdr eh;
        assert_non_null(gelf_getehdr(e, &eh));
        assert_int_equal(eh.e_ident[EI_CLASS], ELFCLASS64);
        size_t shstrndx, index = 0;
        assert_int_equal(elf_getshdrstrndx(e, &shstrndx), 0);
        for (Elf_Scn *scn = elf_nextscn(e, NULL); scn; scn = elf_nextscn(e, scn)) {
                GElf_Shdr sh;
                const char *n;
                if (gelf_getshdr(scn, &sh) && (n = elf_strptr(e, shstrndx, sh.sh_name)) &&
                    strcmp(n, ".debug_info") == 0)
                        index = elf_ndxscn(scn);
        }
        elf_end(e);
        assert_true(index > 0);
        off_t at = (off_t)(eh.e_shoff + index * eh.e_shentsize + offsetof(Elf64_Shdr, sh_flags));
        uint64_t flags = 0;
        assert_int_equal(pread(fd, &flags, sizeof(flags), at), (ssize_t)sizeof(flags));
        flags |= SHF_GROUP;
        assert_int_equal(pwrite(fd, &flags, sizeof(flags), at), (ssize_t)sizeof(flags));
        close(fd);
        struct elf_module *m = load_module(grp);
        for (uint64_t v = 0; v < 0x4000; v++) {
                const char *f = NULL;
                uint32_t line = 0;
                struct elf_srcframe fr[8];
                bool has = elf_module_line(m, v, &f, &line);
                uint32_t n = elf_module_srcline(m, v, fr, 8);
                if (!has)
                        continue;
                assert_true(n > 0);
                assert_string_equal(fr[0].file, f);
                assert_int_equal(fr[0].line, line);
        }
        elf_module_free(m);
        unlink(grp);
        rmdir(dir);
}

/* A compressed section's header is not believed where it claims more than its stream can
   inflate to (a fuzzed file's .debug_info claimed 4 GiB from 9 KB): the size is refused before
   any of it is asked of malloc, and the section is left for libdw, which refuses it too. */
static void test_inflate_size_bound(void **state)
{
        (void)state;
        assert_true(elf_inflate_size_ok(1, 1));
        assert_true(elf_inflate_size_ok(1032 * 9000, 9000));
        assert_true(elf_inflate_size_ok(1032 * 9000 + 1031, 9000));
        assert_false(elf_inflate_size_ok(1032 * 9001, 9000));
        assert_false(elf_inflate_size_ok(4278190080ull, 9632));
        assert_false(elf_inflate_size_ok(0, 100));
        assert_false(elf_inflate_size_ok((1ull << 32) + 1, 1ull << 30));
        assert_true(elf_inflate_size_ok(1ull << 32, 1ull << 30));
}

int main(void)
{
        elf_version(EV_CURRENT);
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_fixture_and_library),
                cmocka_unit_test(test_clang_dwarf5),
                cmocka_unit_test(test_clang_without_aranges),
                cmocka_unit_test(test_clang_split_without_aranges),
                cmocka_unit_test(test_libc),
                cmocka_unit_test(test_srcline_rows),
                cmocka_unit_test(test_units_as_libdwfl),
                cmocka_unit_test(test_inflated_sections),
                cmocka_unit_test(test_inflate_size_bound),
                cmocka_unit_test(test_unended_strings),
                cmocka_unit_test(test_group_section),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
