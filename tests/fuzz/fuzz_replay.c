/* SPDX-License-Identifier: MIT */
/* fuzz_replay.c: libFuzzer target running whole replays of arbitrary bytes, as a file (.etl or
   perf.data, the reader tells them apart by their magic): `--replay -b` (the reader, the
   decoder, the model and the text report with its views' rows), `--dump` (every event as text)
   and one `--export` format, with a time range and a grouping taken from the input's hash; then
   `--merge` of it with itself (one input in four), whose output must dump; then the screen's
   five views over the replayed model, as a replay's screen builds them, with their
   own keys pressed on their rows (the hash's bytes choose the keys and the rows) and the rows
   built again after each; and one input in four read again as the screen reads it, a slice of
   records at a time with the rows built after each, whose rows must be the whole read's. The
   parsers' own targets (fuzz_etl, fuzz_perfdata, fuzz_kevent) stop
   at their parser's output; this one reaches what consumes it: the profile, its tables, the
   views and the writers.
   Run it with -close_fd_mask=3: a damaged input's warnings go to stderr.
   Corpus: tests/corpus/replay/ (and the etl, perfdata and zip ones: a zip of a trace is read as
   the trace). */
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dump.h"
#include "export/export.h"
#include "feed.h"
#include "merge_output.h"
#include "model/hot.h"
#include "model/profile.h"
#include "report.h"
#include "symbols/symbols.h"
#include "ui/views.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64], in_path[96], out_path[96];
static int null_fd = -1;

/* The run's directory goes at the end (libFuzzer's exit). */
static void remove_dir(void)
{
        unlink(in_path);
        unlink(out_path);
        rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void)argc;
        (void)argv;
        /* nothing leaves the machine and nothing of the user's settings counts */
        unsetenv("_NT_SYMBOL_PATH");
        unsetenv("DEBUGINFOD_URLS");
        /* no inflated DWARF kept between inputs, nor written into $HOME */
        setenv("ETWTOP_DWARF_CACHE", "off", 1);
        const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(dir, sizeof(dir), "%s/fuzz_replay.XXXXXX", base);
        if (!mkdtemp(dir))
                abort();
        snprintf(in_path, sizeof(in_path), "%s/in", dir);
        snprintf(out_path, sizeof(out_path), "%s/out", dir);
        null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
        if (null_fd < 0)
                abort();
        atexit(remove_dir);
        return 0;
}

static void write_input(const uint8_t *data, size_t size)
{
        int fd = open(in_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0)
                abort();
        for (size_t off = 0; off < size;) {
                ssize_t n = write(fd, data + off, size - off);
                if (n <= 0)
                        abort();
                off += (size_t)n;
        }
        close(fd);
}

/* FNV-1a of the input: the run's choices, the same for the same input */
static uint64_t hash_of(const uint8_t *data, size_t size)
{
        uint64_t h = 14695981039346656037ull;
        for (size_t i = 0; i < size; i++)
                h = (h ^ data[i]) * 1099511628211ull;
        return h;
}

/* A failed run must say why. */
static void check_failure(int rc, const char *err)
{
        if (rc < 0 && !err[0])
                abort();
}

/* The screen's views over the trace replayed whole: each built, then its own keys pressed on
   rows of it (the n-th byte of h's stream picks a key and a row), the rows built again after
   each, as the replay screen's loop does. */
static void views_pass(uint64_t h)
{
        struct profile_options po = {.is_synchronous = true, .has_call_tree = true};
        struct profile *p = profile_new(&po);
        struct ui_view *views[NR_VIEWS] = {functions_view_new(), branches_view_new(),
                                           switches_view_new(), session_view_new(),
                                           events_view_new()};
        struct ui_table tables[NR_VIEWS];
        for (uint32_t v = 0; v < NR_VIEWS; v++)
                ui_table_init(&tables[v], views[v]->cols, views[v]->nr_cols);
        functions_view_set_group(views[VIEW_FUNCTIONS],
                                 (enum functions_group)((h >> 33) % FUNCTIONS_NR_GROUPS));
        functions_view_ask(views[VIEW_FUNCTIONS], p);
        struct feed *f = NULL;
        char err[1024];
        if (feed_replay_file(&f, p, in_path, false, 0, false, 0, err, sizeof(err)) < 0) {
                check_failure(-1, err);
                goto out;
        }
        profile_end(p);
        sym_store_wait(profile_store(p));
        sym_store_poll(profile_store(p));
        profile_catch_up(p);
        const struct profile_trace *t = profile_trace(p);
        struct panel_values pv = {.interval_100ns = t->interval_100ns};
        memcpy(pv.masks, t->masks, sizeof(pv.masks));
        session_view_set(views[VIEW_SESSION], false, &(struct etw_machine_caps){0}, &pv);
        uint16_t sources[16];
        uint32_t nr = hot_sources(profile_hot(p), sources, 16);
        struct ui_build_ctx m = {p, false, "", nr ? sources[(h >> 36) % nr] : HOT_SOURCE_TIMER};
        struct ui_state st = {.nr_views = NR_VIEWS, .delay_s = 1.0};
        uint64_t x = h | 1;
        for (uint32_t v = 0; v < NR_VIEWS; v++) {
                struct ui_view *view = views[v];
                st.view = v;
                views[v]->build(view, &m, &tables[v]);
                for (uint32_t k = 0; k < 8 && view->nr_keys; k++) {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        const struct ui_table *tb = &tables[v];
                        uint64_t row_key =
                                tb->nr_rows ? tb->keys[(uint32_t)(x >> 8) % tb->nr_rows] : 0;
                        struct ui_key_ctx ctx = {
                                .st = &st, .view = view, .table = tb, .row_key = row_key};
                        unsigned r = ui_key_dispatch(&ctx, view->keys[x % view->nr_keys].key);
                        if (v == VIEW_FUNCTIONS)
                                functions_view_ask(view, p);
                        if (r & (UI_REBUILD | UI_TO_TOP | UI_REDRAW | UI_REVEAL))
                                view->build(view, &m, &tables[v]);
                }
                (void)view->row_pid(view, &tables[v], tables[v].nr_rows ? tables[v].keys[0] : 0);
        }
out:
        feed_close(f);
        for (uint32_t v = 0; v < NR_VIEWS; v++) {
                views[v]->free(views[v]);
                ui_table_fini(&tables[v]);
        }
        profile_free(p);
}

/* The sum of p's rows of source by function, each hashed by what two stores share (the
   module's path, the name, the address of an unnamed row, the counts), and their number. */
static uint64_t rows_sum(struct profile *p, uint16_t source, uint32_t *nr)
{
        sym_store_wait(profile_store(p));
        const struct hot_row *rows;
        *nr = hot_functions_by(profile_hot(p), source, HOT_BY_FUNCTION, false, &rows);
        uint64_t sum = 0;
        for (uint32_t i = 0; i < *nr; i++) {
                const struct hot_row *r = &rows[i];
                struct sym_module_info mi;
                const char *path = r->module && sym_module_info(profile_store(p), r->module, &mi)
                                           ? mi.path
                                           : "";
                char line[1400];
                int n = snprintf(line, sizeof(line), "%s|%s|%llx|%llu|%llu", path,
                                 r->name ? r->name : "",
                                 (unsigned long long)(r->function ? 0 : r->rel),
                                 (unsigned long long)r->self, (unsigned long long)r->total);
                sum += hash_of((const uint8_t *)line, n > 0 ? (size_t)n : 0) | 1;
        }
        return sum;
}

/* One input in four: read as the screen reads it, slice records a turn (from h), the rows
   built after every turn, and at the end the rows of one read whole: the same (a build must
   not change what the rows count, test_rows_read). */
static void slices_pass(uint64_t h)
{
        struct profile_options po = {.is_synchronous = true, .has_call_tree = true};
        struct profile *whole = profile_new(&po), *built = profile_new(&po);
        struct feed *f = NULL;
        char err[1024];
        int rc = feed_replay_file(&f, whole, in_path, false, 0, false, 0, err, sizeof(err));
        feed_close(f);
        f = NULL;
        uint16_t source = HOT_SOURCE_TIMER;
        if (rc < 0 || !hot_sources(profile_hot(whole), &source, 1))
                goto out;
        profile_end(whole);
        if (feed_open(&f, built, in_path, NULL, true, err, sizeof(err)) < 0 || feed_start(f) < 0)
                abort(); /* read whole a moment ago */
        feed_set_slice(f, 1 + (uint32_t)((h >> 46) % 97));
        const struct hot_row *rows;
        while (!feed_is_done(f, NULL)) {
                bool has_backlog = feed_drain(f, INT64_MAX / 2);
                hot_functions_by(profile_hot(built), source, HOT_BY_FUNCTION, false, &rows);
                profile_catch_up(built);
                if (!has_backlog && feed_arm(f)) {
                        struct pollfd pf = {feed_fd(f), POLLIN, 0};
                        poll(&pf, 1, 1000);
                }
        }
        while (feed_drain(f, INT64_MAX / 2))
                ;
        profile_end(built);
        uint32_t nw, nb;
        uint64_t sw = rows_sum(whole, source, &nw), sb = rows_sum(built, source, &nb);
        if (nw != nb || sw != sb)
                abort();
out:
        feed_close(f);
        profile_free(whole);
        profile_free(built);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const enum export_format formats[] = {
                EXPORT_PPROF,       EXPORT_FOLDED,    EXPORT_SPEEDSCOPE,   EXPORT_CSV,
                EXPORT_CSV_MODULES, EXPORT_CSV_LINES, EXPORT_CSV_SWITCHES, EXPORT_CSV_BRANCHES,
                EXPORT_CSV_EVENTS,  EXPORT_BOLT,      EXPORT_PROFGEN,      EXPORT_PROFGEN_CS,
        };
        static const char *const sources[] = {NULL, "timer", "Profile", "BranchMispredictions"};
        char err[1024];
        write_input(data, size);
        uint64_t h = hash_of(data, size);
        /* a time range one input in four: from and to in [0, 4) s, to possibly before from */
        bool has_from = (h & 3) == 1 || (h & 3) == 3, has_to = (h & 3) >= 2;
        double from_s = (double)((h >> 2) & 15) / 4.0, to_s = (double)((h >> 6) & 15) / 4.0;

        struct report_options ro = {.path = in_path,
                                    .has_from = has_from,
                                    .has_to = has_to,
                                    .from_s = from_s,
                                    .to_s = to_s,
                                    .nr_top = 1 + (uint32_t)((h >> 10) & 31),
                                    .fd = null_fd,
                                    .group = (int)((h >> 15) % 4),
                                    .source = sources[(h >> 17) & 3]};
        err[0] = 0;
        check_failure(report_run(&ro, err, sizeof(err)), err);

        const char *const paths[1] = {in_path};
        struct dump_options dopt = {.paths = paths,
                                    .nr_paths = 1,
                                    .fd = null_fd,
                                    .is_totals_only = (h >> 19) & 1,
                                    .has_from = has_from,
                                    .has_to = has_to,
                                    .from_s = from_s,
                                    .to_s = to_s};
        err[0] = 0;
        check_failure(dump_run(&dopt, err, sizeof(err)), err);

        struct export_options eo = {
                .path = in_path,
                .out_path = out_path,
                .format = formats[(h >> 20) % (sizeof(formats) / sizeof(formats[0]))],
                .is_force = true,
                .has_from = has_from,
                .has_to = has_to,
                .from_s = from_s,
                .to_s = to_s,
                .pid = ((h >> 24) & 7) == 0 ? (uint32_t)((h >> 27) & 0xffff) : 0,
        };
        err[0] = 0;
        int rc = export_run(&eo, err, sizeof(err));
        check_failure(rc, err);
        /* a failed export leaves no file behind */
        if (rc < 0 && access(out_path, F_OK) == 0)
                abort();
        unlink(out_path);

        /* one input in four: --merge of the input with itself, whose output, when the merge
           succeeds, is a trace that opens and dumps */
        if (((h >> 40) & 3) == 0) {
                char *inputs[2] = {in_path, in_path};
                if (merge_output_run(out_path, true, inputs, 2) == 0) {
                        const char *const merged[1] = {out_path};
                        struct dump_options mo = {.paths = merged, .nr_paths = 1, .fd = null_fd};
                        err[0] = 0;
                        if (dump_run(&mo, err, sizeof(err)) < 0)
                                abort();
                }
                unlink(out_path);
        }

        views_pass(h);
        if (((h >> 44) & 3) == 0)
                slices_pass(h);
        return 0;
}
