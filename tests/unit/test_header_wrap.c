/* SPDX-License-Identifier: MIT */
/* test_header_wrap.c: cmocka tests of the header folded at the screen's width (ui/header_wrap.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "ui/header_wrap.h"

static const char *const groups =
        "Groups: PROC_THREAD+LOADER+PROFILE+CSWITCH+DISPATCHER   Stacks: Profile+CSwitch+"
        "ReadyThread   Interval: 1.000 ms (timer)   LBR: off   Refresh: 0.5 s";

/* At 120 and 80 columns every field of a line is on some row, no row is wider than the screen */
static void test_every_field_seen(void **state)
{
        static char rows[UI_HEADER_ROWS][UI_HEADER_ROW];
        const char *lines[] = {"etwtop - live NT Kernel Logger   7469 events/s   2392 samples",
                               groups};
        (void)state;

        for (int width = 80; width <= 120; width += 40) {
                uint32_t n = ui_header_wrap(lines, 2, width, rows, UI_HEADER_ROWS);
                char all[2048] = "";
                assert_true(n >= 3);
                for (uint32_t i = 0; i < n; i++) {
                        assert_true(strlen(rows[i]) <= (size_t)width);
                        strcat(all, rows[i]);
                        strcat(all, "|");
                }
                assert_non_null(strstr(all, "Refresh: 0.5 s"));
                assert_non_null(strstr(all, "LBR: off"));
                /* broken between fields, the rest indented */
                assert_string_equal(rows[0], lines[0]);
                assert_int_equal(strncmp(rows[1], "Groups: ", 8), 0);
                assert_int_equal(strncmp(rows[2], "  ", 2), 0);
                assert_true(rows[2][2] != ' ');
        }
        /* wide enough: the lines as they are */
        assert_int_equal(ui_header_wrap(lines, 2, 200, rows, UI_HEADER_ROWS), 2);
        assert_string_equal(rows[1], groups);
}

/* A field longer than a row breaks after a comma or at a space; max rows are kept to */
static void test_long_field_and_max(void **state)
{
        static char rows[UI_HEADER_ROWS][UI_HEADER_ROW];
        const char *lines[] = {"Stack walk: auto, 8192-byte stack copies: 1780 user stacks "
                               "unwound: 757 to the thread start, 1023 cut (stack end 1016, no "
                               "CFI 2, bad frame 5)"};
        (void)state;

        uint32_t n = ui_header_wrap(lines, 1, 60, rows, UI_HEADER_ROWS);
        assert_true(n >= 2);
        for (uint32_t i = 0; i < n; i++)
                assert_true(strlen(rows[i]) <= 60);
        size_t last = strlen(rows[0]) - 1;
        assert_true(rows[0][last] == ',' || rows[0][last] != ' ');
        assert_int_equal(ui_header_wrap(lines, 1, 60, rows, 1), 1);
        /* no separator at all: cut at the width */
        const char *solid[] = {"0123456789012345678901234567890123456789"};
        assert_int_equal(ui_header_wrap(solid, 1, 20, rows, UI_HEADER_ROWS), 3);
        assert_string_equal(rows[0], "01234567890123456789");
        assert_string_equal(rows[1], "  012345678901234567");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_every_field_seen),
                cmocka_unit_test(test_long_field_and_max),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
