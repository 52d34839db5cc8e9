/* SPDX-License-Identifier: MIT */
/* test_elf_symtab.c: a module's function table read straight from its symbol table's section
   (symbols/elf_module.c read_symbols_direct) holds the entries that reading every symbol
   through libdwfl's dwfl_module_getsym_info gives, entry for entry (start, size, flags, name),
   for the symbol fixture (PIE, non-PIE, its library, stripped: .dynsym, with its debug file by
   build-id, with MiniDebugInfo: read through libdwfl) and the system's libc, ld.so and bash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <gelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf_module.h"
#include "symbols/sym_table.h"

static const char *env(const char *name)
{
        const char *v = getenv(name);
        if (!v || !*v)
                fail_msg("%s is not set (run through ctest)", name);
        return v;
}

/* Loads path both ways and compares the tables; returns whether the direct reader was used. */
static bool compare(const char *path, const char *dir)
{
        const char *dirs[1] = {dir};
        struct elf_load_request rq = {.path = path, .dirs = dirs, .nr_dirs = dir ? 1 : 0, .fd = -1};
        struct elf_module *a = NULL, *b = NULL;
        char note[512];
        elf_module_symbols_through_libdwfl = false;
        assert_int_equal(elf_module_load(&rq, &a, note, sizeof(note)), 0);
        elf_module_symbols_through_libdwfl = true;
        assert_int_equal(elf_module_load(&rq, &b, note, sizeof(note)), 0);
        elf_module_symbols_through_libdwfl = false;
        assert_false(elf_module_symbols_were_direct(b));
        const struct sym_table *ta = elf_module_table(a), *tb = elf_module_table(b);
        uint32_t n = sym_table_count(ta);
        assert_int_equal(n, sym_table_count(tb));
        for (uint32_t i = 0; i < n; i++) {
                const struct sym_entry *x = sym_table_at(ta, i), *y = sym_table_at(tb, i);
                if (x->start != y->start || x->size != y->size || x->flags != y->flags ||
                    strcmp(sym_table_name(ta, x), sym_table_name(tb, y)) != 0)
                        fail_msg("%s: entry %u: %s at %#lx+%#lx (%#x), libdwfl %s at %#lx+%#lx "
                                 "(%#x)",
                                 path, i, sym_table_name(ta, x), (unsigned long)x->start,
                                 (unsigned long)x->size, x->flags, sym_table_name(tb, y),
                                 (unsigned long)y->start, (unsigned long)y->size, y->flags);
        }
        bool is_direct = elf_module_symbols_were_direct(a);
        printf("test_elf_symtab: %s: %u entries, %s\n", path, n,
               is_direct ? "read directly" : "through libdwfl");
        elf_module_free(a);
        elf_module_free(b);
        return is_direct;
}

static void test_fixtures(void **state)
{
        (void)state;
        assert_true(compare(env("SYM_FIXTURE"), NULL));
        assert_true(compare(env("SYM_FIXTURE_NOPIE"), NULL));
        assert_true(compare(env("SYM_FIXLIB"), NULL));
        char path[PATH_MAX], dir[PATH_MAX];
        const char *v = env("SYM_FIXTURE_VARIANTS");
        snprintf(path, sizeof(path), "%s/stripped/sym_fixture", v);
        assert_true(compare(path, NULL)); /* .dynsym */
        snprintf(dir, sizeof(dir), "%s/debugdir", v);
        assert_true(compare(path, dir)); /* .symtab of the debug file */
        snprintf(path, sizeof(path), "%s/mini/sym_fixture", v);
        assert_false(compare(path, NULL)); /* .dynsym and MiniDebugInfo's .symtab merged */
}

static void test_system(void **state)
{
        (void)state;
        static const char *const files[] = {
                "/usr/lib/x86_64-linux-gnu/libc.so.6",
                "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
                "/usr/bin/bash",
        };
        for (size_t i = 0; i < sizeof(files) / sizeof(*files); i++)
                if (access(files[i], R_OK) == 0)
                        compare(files[i], NULL);
                else
                        printf("test_elf_symtab: %s is not here: skipped\n", files[i]);
}

int main(void)
{
        elf_version(EV_CURRENT);
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_fixtures),
                cmocka_unit_test(test_system),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
