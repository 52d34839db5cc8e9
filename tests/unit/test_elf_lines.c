/* SPDX-License-Identifier: MIT */
/* test_elf_lines.c: the line tables read unit by unit (symbols/elf_lines.c) answer every
   address of the symbol fixture, its library and, where its debug file is installed, libc
   exactly as libdwfl's dwfl_module_getsrc and dwfl_lineinfo do, reading the units themselves
   (no answer left to libdw). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf_lines.h"

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

/* Every address of the file's executable segments (a stride that varies, so that a few
   hundred thousand lookups cover a library) through both readers. */
static void compare_file(const char *path, uint32_t max_step, struct counts *c)
{
        static char *debuginfo_path = "-:.debug:/usr/lib/debug";
        Dwfl_Callbacks cb = {.find_elf = dwfl_build_id_find_elf,
                             .find_debuginfo = dwfl_standard_find_debuginfo,
                             .section_address = dwfl_offline_section_address,
                             .debuginfo_path = &debuginfo_path};
        Dwfl *dwfl = dwfl_begin(&cb);
        assert_non_null(dwfl);
        dwfl_report_begin(dwfl);
        Dwfl_Module *mod = dwfl_report_elf(dwfl, "m", path, -1, 0, true);
        dwfl_report_end(dwfl, NULL, NULL);
        assert_non_null(mod);
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
                        int want_line = 0;
                        const char *want =
                                ln ? dwfl_lineinfo(ln, NULL, &want_line, NULL, NULL, NULL) : NULL;
                        Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, &cubias);
                        c->asked++;
                        if (!cu) {
                                assert_null(want);
                                continue;
                        }
                        const char *file = NULL;
                        int line = 0;
                        int got = elf_lines_find(x, cu, addr - cubias, &file, &line);
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

int main(void)
{
        elf_version(EV_CURRENT);
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_fixture_and_library),
                cmocka_unit_test(test_libc),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
