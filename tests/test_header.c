/* SPDX-License-Identifier: MIT */
/* test_header.c: the header's lines (src/header.c) from the facts the loop gives them: what
   the model's caps did, on a line of its own that a narrow screen still shows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "header.h"

/* The line that starts with prefix, or NULL. */
static const char *line_of(char lines[HEADER_LINES][HEADER_WIDTH], uint32_t nr, const char *prefix)
{
        for (uint32_t i = 0; i < nr; i++)
                if (strncmp(lines[i], prefix, strlen(prefix)) == 0)
                        return lines[i];
        return NULL;
}

static void test_header_caps(void **state)
{
        (void)state;
        struct collect_settings s;
        memset(&s, 0, sizeof(s));
        struct header_info h = {.is_live = true,
                                .logger_name = "NT Kernel Logger",
                                .events_per_s = 123456,
                                .nr_samples = 1500,
                                .settings = &s,
                                .delay_s = 1};
        char lines[HEADER_LINES][HEADER_WIDTH];
        /* nothing capped: no caps line */
        uint32_t nr = header_lines(&h, lines);
        assert_int_equal(nr, 2);
        assert_non_null(strstr(lines[0], "   1500 samples   lost 0"));
        assert_null(strstr(lines[0], "aps:"));

        /* the call tree's caps: on a line of their own, whole in 80 columns */
        h.model_caps.nr_stacks_cut = 78;
        nr = header_lines(&h, lines);
        assert_int_equal(nr, 3);
        const char *caps = line_of(lines, nr, "Caps: ");
        assert_non_null(caps);
        assert_string_equal(caps, "Caps: 78 stacks cut");
        assert_null(strstr(lines[0], "stacks cut"));

        h.model_caps = (struct profile_caps){.nr_threads_folded = 1234,
                                             .nr_places_folded = 56,
                                             .nr_samples_no_room = 9,
                                             .nr_stacks_cut = 78,
                                             .nr_nodes_evicted = 5120};
        nr = header_lines(&h, lines);
        caps = line_of(lines, nr, "Caps: ");
        assert_non_null(caps);
        assert_string_equal(caps, "Caps: 5120 cold call-tree nodes evicted; 78 stacks cut; 1234 "
                                  "exited threads, 56 unplaced addresses folded; 9 samples past "
                                  "the caps");
        assert_true(strstr(caps, "stacks cut") + strlen("stacks cut") - caps <= 80);

        /* after the stack-walk line when there is one */
        s.stack_walk = 1;
        s.user_stack_bytes = 8192;
        nr = header_lines(&h, lines);
        assert_int_equal(nr, 4);
        assert_non_null(strstr(lines[2], "Stack walk: dwarf"));
        assert_ptr_equal(line_of(lines, nr, "Caps: "), lines[3]);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_header_caps),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
