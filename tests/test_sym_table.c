/* SPDX-License-Identifier: MIT */
/* test_sym_table.c: the sorted symbol table: order, duplicates, inferred sizes, lookups. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "symbols/sym_table.h"

static const char *name_at(const struct sym_table *t, uint64_t addr)
{
        const struct sym_entry *e = sym_table_find(t, addr);
        return e ? sym_table_name(t, e) : NULL;
}

static void test_lookup(void **state)
{
        (void)state;
        struct sym_table *t = sym_table_new();
        sym_table_add(t, 0x3000, 0x100, "third", 5, 0);
        sym_table_add(t, 0x1000, 0x10, "first", 5, 0);
        sym_table_add(t, 0x2000, 0, "second", 6, 0);
        sym_table_add(t, 0x1000, 0x10, "first_alias", 11, SYM_FLAG_WEAK);
        sym_table_add(t, 0x2000, 0x40, "second_sized", 12, 0);
        sym_table_finish(t, 0);
        assert_int_equal(sym_table_count(t), 3);
        assert_null(name_at(t, 0xfff));
        assert_string_equal(name_at(t, 0x1000), "first");
        assert_string_equal(name_at(t, 0x100f), "first");
        assert_null(name_at(t, 0x1010)); /* a gap between sized symbols */
        assert_string_equal(name_at(t, 0x203f), "second_sized");
        assert_null(name_at(t, 0x2040));
        assert_string_equal(name_at(t, 0x30ff), "third");
        assert_null(name_at(t, 0x3100));
        assert_null(name_at(t, UINT64_MAX));
        sym_table_free(t);
}

static void test_inferred_and_nested(void **state)
{
        (void)state;
        struct sym_table *t = sym_table_new();
        sym_table_add(t, 0x100, 0, "a", 1, 0);
        sym_table_add(t, 0x180, 0, "b", 1, 0);
        sym_table_add(t, 0x400, 0x100, "outer", 5, 0);
        sym_table_add(t, 0x420, 0x8, "inner", 5, SYM_FLAG_LOCAL);
        sym_table_add(t, 0x1000, 0, "last", 4, 0);
        sym_table_add(t, 0x2000, 0, "bad\n\x01name", 9, 0);
        sym_table_finish(t, 0x200);
        assert_string_equal(name_at(t, 0x17f), "a");
        assert_string_equal(name_at(t, 0x181), "b");
        assert_string_equal(name_at(t, 0x37f), "b"); /* inferred, capped at 0x200 */
        assert_null(name_at(t, 0x380));
        assert_string_equal(name_at(t, 0x424), "inner");
        assert_string_equal(name_at(t, 0x430), "outer"); /* past inner, still in outer */
        assert_string_equal(name_at(t, 0x11ff), "last"); /* capped at 0x200 */
        assert_null(name_at(t, 0x1200));
        assert_string_equal(name_at(t, 0x2000), "bad??name");
        sym_table_free(t);
}

static void test_empty(void **state)
{
        (void)state;
        struct sym_table *t = sym_table_new();
        assert_null(sym_table_find(t, 0)); /* not finished */
        sym_table_finish(t, 0);
        assert_null(sym_table_find(t, 0x1000));
        assert_int_equal(sym_table_count(t), 0);
        sym_table_free(t);
        sym_table_free(NULL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_lookup),
                cmocka_unit_test(test_inferred_and_nested),
                cmocka_unit_test(test_empty),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
