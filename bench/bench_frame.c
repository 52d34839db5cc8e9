/* SPDX-License-Identifier: MIT */
/* bench_frame.c: the time to draw one frame of a view with many rows: a table of ROWS hot
   functions (the shape of the functions view), sorted by a column and drawn through the list
   browser on a terminal of 200x60 whose output goes to /dev/null, FRAMES times; prints the
   mean milliseconds per frame (the screen's budget: a few ms with 100k rows).
   The names are made once, before the frames, as the symbol store interns them once: the
   application's table borrows the store's interned names (ui_table_text_borrow) rather than
   copying them at each refresh, and so does this one.
   Then the whole refresh of the functions view, by the view's own row builder: a model of ROWS
   functions (a JIT map of ROWS symbols, sampled with stacks through the model's entry into the
   hot functions and the call tree), the view's rows built (hot functions, each row's callers
   node, the table filled with the store's names), sorted and drawn.
   With TRACE, then the screen's frames while a trace loads, as the replay screen reads one:
   the feed reads the file on its own thread and hands the records over; each frame decodes
   them into the model for the screen's slice (10 ms at most, as src/app.c's loop), builds the
   functions view's rows and draws them; the frames' mean and longest time, by the clock and in
   CPU time of the screen's thread (a busy machine stretches the clock's), and the time until
   the whole trace is in the model, by the clock and in the process's CPU time; and the
   decoding's part of a frame (CPU) and the most records one frame decoded. SLICE: the records
   one frame decodes at most (feed_set_slice; 0: as many as the 10 ms allow; default: the
   feed's own).
   Usage: bench_frame [ROWS] [FRAMES] [TRACE [SLICE]] */
#include "feed.h"
#include "kevent.h"
#include "model/profile.h"
#include "ui/screen.h"
#include "ui/table.h"
#include "ui/views.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double clock_s(clockid_t id)
{
        struct timespec ts;
        clock_gettime(id, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now_s(void)
{
        return clock_s(CLOCK_MONOTONIC);
}

static const struct ui_column cols[] = {
        {"Self%", UI_COL_PCT, 7, 0},    {"Total%", UI_COL_PCT, 7, 0},
        {"Self", UI_COL_U64, 8, 0},     {"Total", UI_COL_U64, 8, 0},
        {"Module", UI_COL_TEXT, 22, 0}, {"Function", UI_COL_TEXT, 0, 0},
};

/* The functions view's refresh over a model of rows functions, frames times: the real view's
   row builder (ui/views/functions_view.c) over the real model entry (profile_event). */
static int model_frames(struct ui_screen *scr, struct ui_table *t, struct ui_view_state *vs,
                        uint32_t rows, uint32_t frames)
{
        const uint64_t base = 0x10000000;
        char path[64];
        snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
        FILE *map = fopen(path, "w");
        if (!map)
                return 1;
        for (uint32_t i = 0; i < rows; i++)
                fprintf(map, "%" PRIx64 " 10 jit_function_%u\n", (uint64_t)(base + 16ull * i), i);
        fclose(map);
        struct profile_options po = {.is_live = true,
                                     .is_synchronous = true,
                                     .max_functions = 1u << 18,
                                     .has_call_tree = true};
        struct profile *p = profile_new(&po);
        uint32_t pid = (uint32_t)getpid();
        uint64_t seed = 777, ts = 1000;
        uint64_t nr_samples = 0;
        for (uint32_t i = 0; i < rows; i++) {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                for (uint32_t k = 0; k <= (seed >> 62); k++) {
                        /* a sample in function i, called from another function, from a third */
                        uint64_t frames3[3] = {base + 16ull * i + 4,
                                               base + 16ull * ((i * 7 + 1) % rows) + 8,
                                               base + 16ull * ((i / 100) % rows) + 8};
                        struct kevent ev;
                        memset(&ev, 0, sizeof(ev));
                        ev.type = KEV_SAMPLE;
                        ev.name = "";
                        ev.timestamp = ++ts;
                        ev.pid = pid;
                        ev.tid = pid;
                        ev.sample.ip = frames3[0];
                        ev.sample.tid = pid;
                        profile_event(p, &ev);
                        ev.type = KEV_STACK;
                        ev.stack.event_timestamp = ts;
                        ev.stack.pid = pid;
                        ev.stack.tid = pid;
                        ev.stack.nr_frames = 3;
                        ev.stack.frames = frames3;
                        profile_event(p, &ev);
                        nr_samples++;
                }
        }
        struct ui_view *view = functions_view_new();
        struct ui_build_ctx m = {p, true, "", HOT_SOURCE_TIMER};
        double t_rows = 0, t_draw = 0;
        const char *hdr[2] = {"etwtop - bench", "Groups: PROFILE"};
        const char *tabs[4] = {"Hot functions", "Branch edges", "Context switches", "Session"};
        for (uint32_t f = 0; f < frames; f++) {
                double t0 = now_s();
                profile_catch_up(p);
                view->build(view, &m, t);
                double t1 = now_s();
                struct ui_frame fr = {.header = hdr,
                                      .nr_header = 2,
                                      .tabs = tabs,
                                      .nr_tabs = 4,
                                      .status = "",
                                      .view = view};
                ui_screen_draw(scr, &fr, t, vs);
                double t2 = now_s();
                t_rows += t1 - t0;
                t_draw += t2 - t1;
        }
        printf("functions view over a model of %u functions (%" PRIu64 " samples with stacks): "
               "the view's rows (model rows, callers lookups, the table filled) in %.2f ms, sort "
               "and draw in %.2f ms: %.2f ms per refresh\n",
               t->nr_rows, nr_samples, 1e3 * t_rows / frames, 1e3 * t_draw / frames,
               1e3 * (t_rows + t_draw) / frames);
        view->free(view);
        profile_free(p);
        unlink(path);
        return 0;
}

/* Frames while the trace at path loads: the feed on its thread, the frames on this one. */
static int load_frames(struct ui_screen *scr, struct ui_table *t, struct ui_view_state *vs,
                       const char *path, long slice)
{
        struct profile_options po = {.max_functions = 1u << 18, .has_call_tree = true};
        struct profile *p = profile_new(&po);
        struct feed *f = NULL;
        char err[512];
        if (feed_open(&f, p, path, NULL, true, err, sizeof(err)) < 0 || feed_start(f) < 0) {
                fprintf(stderr, "bench_frame: %s: %s\n", path, err);
                feed_close(f);
                profile_free(p);
                return 1;
        }
        if (slice >= 0)
                feed_set_slice(f, (uint32_t)slice);
        struct ui_view *view = functions_view_new();
        struct ui_build_ctx m = {p, false, "", HOT_SOURCE_TIMER};
        const char *hdr[2] = {"etwtop - bench", "Groups: PROFILE"};
        const char *tabs[4] = {"Hot functions", "Branch edges", "Context switches", "Session"};
        double start = now_s(), cpu_start = clock_s(CLOCK_PROCESS_CPUTIME_ID);
        double t_sum = 0, t_max = 0, c_sum = 0, c_max = 0, d_max = 0, d_sum = 0;
        uint64_t r_max = 0;
        uint32_t frames = 0, nr_decoding = 0;
        bool is_done = false;
        while (!is_done) {
                double t0 = now_s(), c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
                uint64_t r0 = feed_nr_decoded(f);
                feed_drain(f, 10000000); /* src/app.c's FEED_SLICE_NS */
                double dd = clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
                uint64_t dr = feed_nr_decoded(f) - r0;
                d_sum += dd;
                d_max = dd > d_max ? dd : d_max;
                r_max = dr > r_max ? dr : r_max;
                nr_decoding += dr > 0;
                is_done = feed_is_done(f, NULL);
                profile_catch_up(p);
                view->build(view, &m, t);
                struct ui_frame fr = {.header = hdr,
                                      .nr_header = 2,
                                      .tabs = tabs,
                                      .nr_tabs = 4,
                                      .status = "",
                                      .view = view};
                ui_screen_draw(scr, &fr, t, vs);
                double dt = now_s() - t0, dc = clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
                t_sum += dt;
                t_max = dt > t_max ? dt : t_max;
                c_sum += dc;
                c_max = dc > c_max ? dc : c_max;
                frames++;
        }
        double t_load = now_s() - start, c_load = clock_s(CLOCK_PROCESS_CPUTIME_ID) - cpu_start;
        printf("frames while %s loads (%" PRIu64 " events): %u frames, %.2f ms mean, %.2f ms "
               "the longest (CPU: %.2f ms mean, %.2f ms the longest; decoding %.2f ms mean, %.2f "
               "ms the longest, %" PRIu64 " records the most in a frame, %u frames decoded some, "
               "slice %s); the whole "
               "trace in the model after %.3f s (%.3f s of CPU)\n",
               path, profile_nr_events(p), frames, 1e3 * t_sum / frames, 1e3 * t_max,
               1e3 * c_sum / frames, 1e3 * c_max, 1e3 * d_sum / frames, 1e3 * d_max, r_max,
               nr_decoding,
               slice < 0    ? "the feed's"
               : slice == 0 ? "by time only"
                            : "set",
               t_load, c_load);
        view->free(view);
        feed_close(f);
        profile_free(p);
        return 0;
}

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
                struct ui_frame fr = {
                        .header = hdr, .nr_header = 2, .tabs = tabs, .nr_tabs = 4, .status = ""};
                ui_screen_draw(scr, &fr, &t, &vs);
                double t2 = now_s();
                t_fill += t1 - t0;
                t_draw += t2 - t1;
        }
        /* key presses between refreshes: the cursor moves, the rows stay */
        double t0 = now_s();
        for (uint32_t f = 0; f < frames; f++) {
                struct ui_frame fr = {
                        .header = hdr, .nr_header = 2, .tabs = tabs, .nr_tabs = 4, .status = ""};
                vs.cursor_key = 1 + (f * 7919) % rows;
                ui_screen_draw(scr, &fr, &t, &vs);
        }
        double t_redraw = (now_s() - t0) / frames;
        free(names);
        printf("rows %u, frames %u: a refresh fills the table in %.2f ms, sorts and draws it in "
               "%.2f ms (%.2f ms per frame); a key press redraws in %.2f ms\n",
               rows, frames, 1e3 * t_fill / frames, 1e3 * t_draw / frames,
               1e3 * (t_fill + t_draw) / frames, 1e3 * t_redraw);
        int rc = model_frames(scr, &t, &vs, rows, frames);
        if (rc == 0 && argc > 3)
                rc = load_frames(scr, &t, &vs, argv[3], argc > 4 ? strtol(argv[4], NULL, 10) : -1);
        ui_screen_close(scr);
        ui_table_fini(&t);
        return rc;
}
