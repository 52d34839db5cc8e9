/* SPDX-License-Identifier: MIT */
/* test_header.c: the header's lines (src/header.c) from the facts the loop gives them: what
   the model's caps did, on a line of its own that a narrow screen still shows; what this
   machine cannot do stays in view. */
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
        /* the unnamed addresses' cap, after the unplaced ones' */
        h.model_caps.nr_unnamed_folded = 4201;
        nr = header_lines(&h, lines);
        caps = line_of(lines, nr, "Caps: ");
        assert_non_null(caps);
        assert_string_equal(caps, "Caps: 5120 cold call-tree nodes evicted; 78 stacks cut; 1234 "
                                  "exited threads, 56 unplaced addresses, 4201 unnamed addresses "
                                  "folded; 9 samples past the caps");
        h.model_caps.nr_unnamed_folded = 0;

        /* after the stack-walk line when there is one */
        s.stack_walk = 1;
        s.user_stack_bytes = 8192;
        nr = header_lines(&h, lines);
        assert_int_equal(nr, 4);
        assert_non_null(strstr(lines[2], "Stack walk: dwarf"));
        assert_ptr_equal(line_of(lines, nr, "Caps: "), lines[3]);
}

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

/* A replay says how its trace sampled and which samples carried LBR (header_trace_text's
   text), not the command line's timer interval and LBR setting; it names the source its
   functions view counts; and no stack walk of the command line's mode. */
static void test_replay_sampling(void **state)
{
        (void)state;
        struct collect_settings s;
        memset(&s, 0, sizeof(s));
        s.stack_walk = 2;
        struct header_info h = {.replay_path = "perf.data",
                                .nr_events = 831,
                                .nr_samples = 150,
                                .settings = &s,
                                .loading_pct = -1,
                                .shown_source = "TotalCycles",
                                .delay_s = 1};
        snprintf(h.sampling, sizeof(h.sampling), "cycles:HG (4000 Hz)");
        snprintf(h.lbr, sizeof(h.lbr), "on TotalCycles samples, 150 branch stacks");
        char lines[HEADER_LINES][HEADER_WIDTH];
        uint32_t nr = header_lines(&h, lines);
        assert_int_equal(nr, 2);
        assert_non_null(strstr(lines[0], "   150 samples of TotalCycles"));
        assert_non_null(strstr(lines[1], "   Sampling: cycles:HG (4000 Hz)   LBR: on TotalCycles "
                                         "samples, 150 branch stacks   Refresh"));
        assert_null(strstr(lines[1], "Interval"));
        /* an .etl of the timer alone: its interval, as before */
        h.sampling[0] = h.lbr[0] = '\0';
        s.interval_100ns = 10000;
        nr = header_lines(&h, lines);
        assert_non_null(strstr(lines[1], "   Interval: 1.000 ms (timer)   LBR: off   "));
        /* still read: how far; read, its rows' names still loading: said; neither: nothing */
        assert_null(strstr(lines[0], "loading"));
        h.loading_pct = 40;
        h.is_loading_names = true; /* the reading first */
        header_lines(&h, lines);
        assert_non_null(strstr(lines[0], "   loading  40%"));
        assert_null(strstr(lines[0], "names"));
        h.loading_pct = -1;
        header_lines(&h, lines);
        assert_non_null(strstr(lines[0], "   loading names"));
        h.is_loading_names = false;
        header_lines(&h, lines);
        assert_null(strstr(lines[0], "loading"));
}

/* A perf.data's records that no event stands for, named with their counts and what reads them;
   a name from the trace made safe for the terminal; none: "". */
static void test_not_shown(void **state)
{
        (void)state;
        static struct profile_trace t; /* large: not on the stack */
        memset(&t, 0, sizeof(t));
        char out[512];
        header_not_shown_text(&t, out, sizeof(out));
        assert_string_equal(out, "");
        t.not_shown[0] = (struct profile_not_shown){76, 2, "STAT"};
        t.not_shown[1] = (struct profile_not_shown){77, 1, "STAT_ROUND"};
        t.nr_not_shown = 2;
        header_not_shown_text(&t, out, sizeof(out));
        assert_string_equal(out, "Not shown: the perf.data's 2 STAT, 1 STAT_ROUND records (perf "
                                 "stat record's counts: perf stat report reads them)");
        t.not_shown[0] = (struct profile_not_shown){11, 40, "AUX"};
        t.not_shown[1] = (struct profile_not_shown){22, 3, "UNKNOWN"};
        t.not_shown[2] = (struct profile_not_shown){UINT32_MAX, 5, "UNKNOWN"};
        t.not_shown[3] = (struct profile_not_shown){5, 9, "THRO\x1b[2JTTLE"};
        t.nr_not_shown = 4;
        header_not_shown_text(&t, out, sizeof(out));
        assert_non_null(strstr(out, "40 AUX, 3 UNKNOWN (type 22), 5 UNKNOWN (of types past "
                                    "perf's), 9 THRO"));
        assert_null(strchr(out, '\x1b'));
        assert_non_null(strstr(out, "(hardware trace data: perf script decodes it)"));
        /* cut to the room given, never past it */
        char small[24];
        memset(small, 'x', sizeof(small));
        header_not_shown_text(&t, small, 20);
        assert_int_equal(strlen(small), 19);
        assert_int_equal(small[20], 'x');
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_header_caps),
                cmocka_unit_test(test_cannot_in_view),
                cmocka_unit_test(test_replay_sampling),
                cmocka_unit_test(test_not_shown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
