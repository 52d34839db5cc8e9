/* SPDX-License-Identifier: MIT */
/* bench_frame.c: the time to draw one frame of a view with many rows: a table of ROWS hot
   functions (the shape of the functions view), sorted by a column and drawn through the list
   browser on a terminal of 200x60 whose output goes to /dev/null, FRAMES times; prints the
   mean milliseconds per frame (the screen's budget: a few ms with 100k rows).
   The names are made once, before the frames, as the symbol store interns them once: the
   application's table borrows the store's interned names (ui_table_text_borrow) rather than
   copying them at each refresh, and so does this one.
   Usage: bench_frame [ROWS] [FRAMES] */
#include "ui/screen.h"
#include "ui/table.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const struct ui_column cols[] = {
        {"Self%", UI_COL_PCT, 7}, {"Total%", UI_COL_PCT, 7},   {"Self", UI_COL_U64, 8},
        {"Total", UI_COL_U64, 8}, {"Module", UI_COL_TEXT, 22}, {"Function", UI_COL_TEXT, 0},
};

int main(int argc, char **argv)
{
        uint32_t rows = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 100000;
        uint32_t frames = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 50;
        setenv("TERM", "xterm-256color", 0);
        setenv("LINES", "60", 1);
        setenv("COLUMNS", "200", 1);
        FILE *out = fopen("/dev/null", "w");
        struct ui_screen *scr;
        if (!out || ui_screen_open_on(&scr, false, out, NULL) < 0) {
                fprintf(stderr, "bench_frame: no terminal for TERM=%s\n", getenv("TERM"));
                return 1;
        }
        struct ui_table t;
        ui_table_init(&t, cols, 6);
        uint64_t seed = 12345;
        double t_fill = 0, t_draw = 0;
        struct ui_view_state vs = {0};
        vs.has_sorted = true;
        vs.sort_col = 2;
        const char *hdr[2] = {"etwtop - bench", "Groups: PROFILE"};
        const char *tabs[4] = {"Hot functions", "Branch edges", "Context switches", "Session"};
        /* the interned names: one string per function, two modules */
        char *names = malloc((size_t)rows * 32);
        if (!names)
                return 1;
        for (uint32_t i = 0; i < rows; i++) {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                snprintf(names + (size_t)i * 32, 32, "function_%u_%llx", i,
                         (unsigned long long)(seed >> 20));
        }
        for (uint32_t f = 0; f < frames; f++) {
                /* a refresh: the application fills the table from the model, then draws */
                double t0 = now_s();
                ui_table_clear(&t);
                for (uint32_t i = 0; i < rows; i++) {
                        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                        uint32_t r = ui_table_add(&t, i + 1, 0, 0);
                        uint64_t self = seed >> 50, total = self + (seed >> 56);
                        ui_table_pct(&t, r, 0, (double)self / 1000.0);
                        ui_table_pct(&t, r, 1, (double)total / 1000.0);
                        ui_table_u64(&t, r, 2, self);
                        ui_table_u64(&t, r, 3, total);
                        ui_table_text_borrow(&t, r, 4,
                                             (seed >> 40) & 1 ? "libc.so.6" : "libLLVM-14.so.1");
                        ui_table_text_borrow(&t, r, 5, names + (size_t)i * 32);
                }
                double t1 = now_s();
                struct ui_frame fr = {hdr, 2, tabs, 4, 0, "", false};
                ui_screen_draw(scr, &fr, &t, &vs);
                double t2 = now_s();
                t_fill += t1 - t0;
                t_draw += t2 - t1;
        }
        /* key presses between refreshes: the cursor moves, the rows stay */
        double t0 = now_s();
        for (uint32_t f = 0; f < frames; f++) {
                struct ui_frame fr = {hdr, 2, tabs, 4, 0, "", false};
                vs.cursor_key = 1 + (f * 7919) % rows;
                ui_screen_draw(scr, &fr, &t, &vs);
        }
        double t_redraw = (now_s() - t0) / frames;
        ui_screen_close(scr);
        ui_table_fini(&t);
        free(names);
        printf("rows %u, frames %u: a refresh fills the table in %.2f ms, sorts and draws it in "
               "%.2f ms (%.2f ms per frame); a key press redraws in %.2f ms\n",
               rows, frames, 1e3 * t_fill / frames, 1e3 * t_draw / frames,
               1e3 * (t_fill + t_draw) / frames, 1e3 * t_redraw);
        return 0;
}
