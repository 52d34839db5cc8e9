/* SPDX-License-Identifier: MIT */
/* test_header.c: the header's lines (src/header.c): what this machine cannot do stays in view. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "header.h"

/* A live header on a machine without PMU or LBR, its stacks walked with every kind of cut (a
   loaded machine's): "Not on this machine" is within the first 120 columns of the third line
   (a 200-column screen showed the walk's counts and lost it past the edge). */
static void test_cannot_in_view(void **state)
{
        (void)state;
        struct collect_settings s = {0};
        struct etw_machine_caps caps = {0};
        caps.has_cpu_wide = 1;
        caps.has_kallsyms = 1;
        struct profile_unwind u = {0};
        u.mode = 2;
        u.stack_copy_bytes = 8192;
        u.nr_walks = 5543;
        u.nr_by_stop[KEV_UNWIND_THREAD_START] = 2428;
        for (int i = 1; i < KEV_NR_UNWIND_STOPS; i++)
                u.nr_by_stop[i] = 1000 + (uint64_t)i;
        u.nr_fp_chains = 35;
        u.nr_fp_frames = 12345;
        struct header_info h = {0};
        h.is_live = true;
        h.logger_name = "NT Kernel Logger";
        h.settings = &s;
        h.caps = &caps;
        h.unwind = &u;
        h.loading_pct = -1;
        h.delay_s = 0.5;
        char lines[HEADER_LINES][HEADER_WIDTH];
        assert_int_equal(header_lines(&h, lines), 3);
        print_message("# %s\n", lines[2]);
        const char *at = strstr(lines[2], "Not on this machine: no PMU (PMC sources), no LBR");
        assert_non_null(at);
        assert_true(at - lines[2] < 120 - 50);
        assert_non_null(strstr(lines[2], "Stack walk: auto, 8192-byte stack copies: 5543"));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_cannot_in_view),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
