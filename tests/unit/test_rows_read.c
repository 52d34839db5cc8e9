/* SPDX-License-Identifier: MIT */
/* test_rows_read.c: the hot functions' rows do not depend on when the screen builds them. A
   replay's screen builds the rows again and again while its feed decodes the file a slice at a
   time (incremental builds, some given up part way, whole ones), and a trace's images may come
   after the samples they place (a window saved without its start has them only in its end
   rundown). Once the file is read and its end applied, the rows must be those of one build
   after the whole read (the batch's), whatever the slices: each of the shared samples (Windows
   traces and perf.data files), and a trace whose images come at its end (etl_fixture
   --late-images), read as the screen reads it (its names on the symbol thread) with builds at
   every slice of three sizes, the rows compared by module
   path, function name, address and counts, by function and by process, and the callers tree's
   first two levels. */
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "feed.h"
#include "model/aggregate.h"
#include "model/branches.h"
#include "model/calltree.h"
#include "model/hot.h"
#include "model/profile.h"
#include "model/switches.h"
#include "symbols/symbols.h"

/* A model as the screen's (names loaded on the symbol thread), or with names loaded at their
   first lookup (is_synchronous: the whole reads'); the names awaited before any comparison
   (names_settle). */
static struct profile *model_new(bool is_synchronous)
{
        struct profile_options po = {
                .is_synchronous = is_synchronous, .max_functions = 1u << 18, .has_call_tree = true};
        return profile_new(&po);
}

static void names_settle(struct profile *p)
{
        sym_store_wait(profile_store(p));
}

/* The path of p's module (its store's id), "" for none. */
static const char *module_path(struct profile *p, uint32_t module)
{
        struct sym_module_info mi;
        return module && sym_module_info(profile_store(p), module, &mi) ? mi.path : "";
}

struct row_texts {
        char **text;
        uint32_t nr;
        uint64_t self; /* rows_of: the rows' self counts, summed */
};

static int by_text(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A row's key and counts (rows_keyed). */
struct keyed {
        char key[900];
        uint64_t self, total;
};

static int by_key(const void *a, const void *b)
{
        return strcmp(((const struct keyed *)a)->key, ((const struct keyed *)b)->key);
}

/* p's rows of source by g, keyed (module path, name, address, process, thread), sorted. */
static struct keyed *rows_keyed(struct profile *p, uint16_t source, enum hot_grouping g,
                                uint32_t *nr)
{
        names_settle(p);
        const struct hot_row *rows;
        uint32_t n = hot_functions_by(profile_hot(p), source, g, false, &rows);
        struct keyed *k = calloc(n + 1, sizeof(*k));
        assert_non_null(k);
        for (uint32_t i = 0; i < n; i++) {
                const struct hot_row *r = &rows[i];
                snprintf(k[i].key, sizeof(k[i].key), "%s|%s|%#llx|pid %u|tid %u",
                         module_path(p, r->module), r->name ? r->name : "",
                         (unsigned long long)(r->function ? 0 : r->rel),
                         g != HOT_BY_FUNCTION ? r->pid : 0, g == HOT_BY_THREAD ? r->tid : 0);
                k[i].self = r->self;
                k[i].total = r->total;
        }
        qsort(k, n, sizeof(*k), by_key);
        *nr = n;
        return k;
}

/* p's rows of source by grouping g, each as one line (the store's ids are its own: module
   paths and names are what two stores share), sorted; their self counts summed. */
static struct row_texts rows_of(struct profile *p, uint16_t source, enum hot_grouping g)
{
        uint32_t n;
        struct keyed *k = rows_keyed(p, source, g, &n);
        struct row_texts t = {calloc(n + 1, sizeof(char *)), n, 0};
        assert_non_null(t.text);
        for (uint32_t i = 0; i < n; i++) {
                char line[1024];
                snprintf(line, sizeof(line), "%s|self %llu|total %llu", k[i].key,
                         (unsigned long long)k[i].self, (unsigned long long)k[i].total);
                t.text[i] = strdup(line);
                assert_non_null(t.text[i]);
                t.self += k[i].self;
        }
        free(k);
        return t;
}

static void texts_free(struct row_texts *t)
{
        for (uint32_t i = 0; i < t->nr; i++)
                free(t->text[i]);
        free(t->text);
}

/* One line of a node of p's callers tree (a row of the callers view), at depth. */
static char *node_text(struct profile *p, const struct calltree_row *r, uint32_t depth)
{
        char line[1024];
        snprintf(line, sizeof(line), "%u|%s|%s|%#llx|count %llu|self %llu", depth,
                 module_path(p, r->module), sym_name(profile_store(p), r->function),
                 (unsigned long long)(r->function ? 0 : r->rel), (unsigned long long)r->count,
                 (unsigned long long)r->self);
        return strdup(line);
}

/* p's callers tree, its roots and each root's callers (not their paths: a line for each
   node, sorted). */
static struct row_texts tree_of(struct profile *p)
{
        names_settle(p);
        struct calltree *t = profile_calltree(p);
        const struct calltree_row *rows;
        uint32_t n = calltree_children(t, true, 0, &rows);
        struct calltree_row *roots = malloc((n + 1) * sizeof(*roots));
        assert_non_null(roots);
        if (n)
                memcpy(roots, rows, n * sizeof(*roots));
        struct row_texts out = {malloc(sizeof(char *)), 0, 0};
        uint32_t cap = 1;
        assert_non_null(out.text);
        for (uint32_t i = 0; i < n; i++) {
                const struct calltree_row *kids = NULL;
                uint32_t nk = roots[i].has_children
                                      ? calltree_children(t, true, roots[i].node, &kids)
                                      : 0;
                if (out.nr + nk + 1 > cap) {
                        cap = 2 * (out.nr + nk + 1);
                        out.text = realloc(out.text, cap * sizeof(char *));
                        assert_non_null(out.text);
                }
                out.text[out.nr++] = node_text(p, &roots[i], 0);
                for (uint32_t k = 0; k < nk; k++)
                        out.text[out.nr++] = node_text(p, &kids[k], 1);
        }
        free(roots);
        qsort(out.text, out.nr, sizeof(*out.text), by_text);
        return out;
}

/* p's context switches by thread and by wait (the switches view's tables), a line each,
   sorted. */
static struct row_texts switches_of(struct profile *p)
{
        struct switches *sw = profile_switches(p);
        const struct switches_row *rows;
        const struct switches_wait_row *waits;
        uint32_t n = switches_threads(sw, SWITCHES_BY_ID, &rows);
        struct switches_row *copy = malloc((n + 1) * sizeof(*copy));
        assert_non_null(copy);
        if (n)
                memcpy(copy, rows, n * sizeof(*copy));
        uint32_t nw = switches_waits(sw, &waits);
        struct row_texts out = {calloc(n + nw + 1, sizeof(char *)), 0, 0};
        assert_non_null(out.text);
        char line[512];
        for (uint32_t i = 0; i < n; i++) {
                const struct switches_row *r = &copy[i];
                snprintf(line, sizeof(line),
                         "thread %u|pid %u|%s|%s|in %llu|on %llu|off %llu|readied %llu|cpu %u",
                         r->tid, r->pid, r->process_name, r->thread_name,
                         (unsigned long long)r->nr_switches, (unsigned long long)r->on_cpu_ns,
                         (unsigned long long)r->off_cpu_ns, (unsigned long long)r->nr_readied,
                         r->last_cpu);
                out.text[out.nr++] = strdup(line);
        }
        for (uint32_t i = 0; i < nw; i++) {
                snprintf(line, sizeof(line), "wait %u/%u|%llu|%llu", waits[i].state,
                         waits[i].wait_reason, (unsigned long long)waits[i].nr_waits,
                         (unsigned long long)waits[i].off_cpu_ns);
                out.text[out.nr++] = strdup(line);
        }
        free(copy);
        qsort(out.text, out.nr, sizeof(*out.text), by_text);
        return out;
}

/* One end of an edge as a line's part. */
static void end_text(struct profile *p, const struct branches_end *e, char *buf, size_t size)
{
        snprintf(buf, size, "%s|%s|%#llx", module_path(p, e->loc.module),
                 sym_name(profile_store(p), e->function), (unsigned long long)e->offset);
}

/* p's branch edges (the LBR view) by group, every process's, a line each, sorted. */
static struct row_texts edges_of(struct profile *p, enum branches_group group)
{
        names_settle(p);
        const struct branches_row *rows;
        uint32_t n = branches_rows(profile_branches(p), group, AGG_ALL, &rows);
        struct row_texts out = {calloc(n + 1, sizeof(char *)), n, 0};
        assert_non_null(out.text);
        for (uint32_t i = 0; i < n; i++) {
                char from[512], to[512], line[1200];
                end_text(p, &rows[i].from, from, sizeof(from));
                end_text(p, &rows[i].to, to, sizeof(to));
                snprintf(line, sizeof(line), "%s -> %s|pid %u|edges %u|count %llu|other %d", from,
                         to, rows[i].pid, rows[i].nr_edges, (unsigned long long)rows[i].count,
                         rows[i].is_other);
                out.text[i] = strdup(line);
        }
        qsort(out.text, n, sizeof(*out.text), by_text);
        return out;
}

/* The lines of a and b that differ, 8 of them shown; how many. */
static uint32_t texts_diff(const struct row_texts *a, const struct row_texts *b, const char *what)
{
        uint32_t nr_diff = 0;
        for (uint32_t i = 0, j = 0; i < a->nr || j < b->nr;) {
                int c = i == a->nr ? 1 : j == b->nr ? -1 : strcmp(a->text[i], b->text[j]);
                if (c && nr_diff++ < 8)
                        fprintf(stderr, "%s: %s %s\n", what,
                                c < 0 ? "only read whole:" : "only built while read:",
                                c < 0 ? a->text[i] : b->text[j]);
                i += c <= 0;
                j += c >= 0;
        }
        if (nr_diff)
                fprintf(stderr, "%s: %u lines differ of %u and %u\n", what, nr_diff, a->nr, b->nr);
        return nr_diff;
}

static uint32_t nr_trees;    /* files whose callers tree had nodes */
static uint32_t nr_switches; /* files with context switches */
static uint32_t nr_edges;    /* files with branch edges (LBR) */

static void assert_same_rows(struct profile *whole, struct profile *built, uint16_t source,
                             bool has_samples, const char *what)
{
        const enum hot_grouping gs[] = {HOT_BY_FUNCTION, HOT_BY_PROCESS, HOT_BY_THREAD};
        static const char *const by[] = {"function", "process", "thread"};
        char label[PATH_MAX + 128];
        for (size_t k = 0; k < 3 && has_samples; k++) {
                struct row_texts a = rows_of(whole, source, gs[k]),
                                 b = rows_of(built, source, gs[k]);
                snprintf(label, sizeof(label), "%s, rows by %s", what, by[k]);
                assert_int_equal(texts_diff(&a, &b, label), 0);
                assert_true(a.nr > 0);
                /* every sample in one row of each grouping (the other row's among them) */
                assert_int_equal(a.self, hot_nr_samples(profile_hot(whole), source));
                texts_free(&a);
                texts_free(&b);
        }
        struct row_texts a = tree_of(whole), b = tree_of(built);
        snprintf(label, sizeof(label), "%s, the callers tree", what);
        assert_int_equal(texts_diff(&a, &b, label), 0);
        nr_trees += a.nr > 0; /* (the tree counts the timer's samples) */
        texts_free(&a);
        texts_free(&b);
        for (int g = BRANCHES_BY_EDGE; g <= BRANCHES_BY_FUNCTION; g++) {
                a = edges_of(whole, (enum branches_group)g);
                b = edges_of(built, (enum branches_group)g);
                snprintf(label, sizeof(label), "%s, the branch edges by %s", what,
                         g == BRANCHES_BY_EDGE ? "edge" : "function");
                assert_int_equal(texts_diff(&a, &b, label), 0);
                nr_edges += a.nr > 0;
                texts_free(&a);
                texts_free(&b);
        }
        a = switches_of(whole);
        b = switches_of(built);
        snprintf(label, sizeof(label), "%s, the context switches", what);
        assert_int_equal(texts_diff(&a, &b, label), 0);
        nr_switches += a.nr > 0;
        texts_free(&a);
        texts_free(&b);
}

/* path read as the screen reads it, slice records a turn, the rows of source built after each
   turn. */
static struct profile *read_building(const char *path, uint16_t source, uint32_t slice,
                                     uint32_t *nr_builds)
{
        struct profile *p = model_new(false);
        struct feed *f = NULL;
        char err[512];
        assert_int_equal(feed_open(&f, p, path, NULL, true, err, sizeof(err)), 0);
        feed_set_slice(f, slice);
        assert_int_equal(feed_start(f), 0);
        *nr_builds = 0;
        const struct hot_row *rows;
        const struct branches_row *edges;
        while (!feed_is_done(f, NULL)) {
                bool has_backlog = feed_drain(f, INT64_MAX / 2);
                hot_functions_by(profile_hot(p), source, HOT_BY_FUNCTION, false, &rows);
                branches_rows(profile_branches(p), BRANCHES_BY_EDGE, AGG_ALL, &edges);
                profile_catch_up(p); /* the screen's loop, before its views read the tree */
                (*nr_builds)++;
                if (!has_backlog && feed_arm(f)) {
                        struct pollfd pf = {feed_fd(f), POLLIN, 0};
                        poll(&pf, 1, 1000); /* an upper bound only: the feed wakes it */
                }
        }
        while (feed_drain(f, INT64_MAX / 2))
                ;
        ULONG status = 1;
        assert_true(feed_is_done(f, &status));
        assert_int_equal(status, ERROR_SUCCESS);
        feed_close(f);
        /* the trace's end as the screen applies it, then a build as its next refresh */
        profile_end(p);
        hot_functions_by(profile_hot(p), source, HOT_BY_FUNCTION, false, &rows);
        return p;
}

/* ---- the traces read ---- */

#define MAX_TRACES 8
static char traces[MAX_TRACES][PATH_MAX]; /* the ones there */
static const char *trace_names[MAX_TRACES];
static uint32_t nr_traces;
static char late_dir[] = "/tmp/etwtop-rows-XXXXXX";

/* The traces: the one whose images come at its end (of this program's image, written by
   etl_fixture), the shared samples' Windows traces and perf.data files. */
static int traces_find(void **state)
{
        (void)state;
        const char *unpacked = getenv("ETWTOP_SAMPLES_UNPACKED"),
                   *samples = getenv("ETWTOP_SAMPLES");
        const char *fixture = getenv("ETL_FIXTURE");
        const char *late = late_dir;
        char exe[PATH_MAX], cmd[3 * PATH_MAX];
        ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        if (len <= 0 || !mkdtemp(late_dir))
                return -1;
        exe[len] = '\0';
        if (fixture) {
                snprintf(cmd, sizeof(cmd), "'%s' --late-images '%s' '%s/late.etl'", fixture, exe,
                         late_dir);
                if (system(cmd) != 0)
                        return -1;
        } else {
                fprintf(stderr, "no ETL_FIXTURE (run through ctest): the late images' trace left "
                                "out\n");
        }
        const struct {
                const char *const *dir;
                const char *name;
        } files[] = {
                {&late, "late.etl"},
                {&unpacked, "net.4.5.2.x64.etl"},
                {&unpacked, "gcevents/PerfViewData.etl"},
                {&samples, "etlparser_lxcore_kernel.etl"},
                {&samples, "perf/perf.data.busy.0-3.4"},
                {&samples, "perf/perf.data.callgraph_and_branch-3.4"},
                {&samples, "perf/perf_b.data"},
        };
        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
                if (!*files[i].dir || !**files[i].dir) {
                        fprintf(stderr, "%s: no ETWTOP_SAMPLES / ETWTOP_SAMPLES_UNPACKED\n",
                                files[i].name);
                        continue;
                }
                char *path = traces[nr_traces];
                snprintf(path, PATH_MAX, "%s/%s", *files[i].dir, files[i].name);
                FILE *fp = fopen(path, "rb");
                if (!fp) {
                        fprintf(stderr, "no %s: passed over\n", path);
                        continue;
                }
                fclose(fp);
                trace_names[nr_traces++] = files[i].name;
        }
        return 0;
}

static int traces_forget(void **state)
{
        (void)state;
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s/late.etl", late_dir);
        unlink(path);
        rmdir(late_dir);
        return 0;
}

/* Trace i read whole by the batch's way; the first source sampled in *source (the timer's, or
   a perf.data's first event), false when it has no samples. */
static struct profile *read_whole(uint32_t i, bool has_from, double from_s, bool has_to,
                                  double to_s, uint16_t *source, bool *has_samples)
{
        struct profile *p = model_new(true);
        struct feed *f = NULL;
        char err[512];
        assert_int_equal(feed_replay_file(&f, p, traces[i], has_from, from_s, has_to, to_s, err,
                                          sizeof(err)),
                         0);
        feed_close(f);
        profile_end(p);
        *source = 0;
        *has_samples =
                hot_sources(profile_hot(p), source, 1) && hot_nr_samples(profile_hot(p), *source);
        return p;
}

static void test_rows_same_however_built(void **state)
{
        (void)state;
        if (!nr_traces) {
                fprintf(stderr, "no trace to read: skipped\n");
                skip();
        }
        const uint32_t slices[] = {4096, 500, 61};
        for (uint32_t i = 0; i < nr_traces; i++) {
                uint16_t source;
                bool has_samples;
                struct profile *whole = read_whole(i, false, 0, false, 0, &source, &has_samples);
                for (size_t s = 0; s < sizeof(slices) / sizeof(slices[0]); s++) {
                        uint32_t nr_builds;
                        struct profile *built =
                                read_building(traces[i], source, slices[s], &nr_builds);
                        char what[PATH_MAX + 64];
                        snprintf(what, sizeof(what), "%s, source %u, %u records a slice, %u builds",
                                 trace_names[i], source, slices[s], nr_builds);
                        print_message("%s\n", what);
                        assert_same_rows(whole, built, source, has_samples, what);
                        profile_free(built);
                }
                profile_free(whole);
        }
        assert_true(nr_trees > 0);
        assert_true(nr_switches > 0);
        assert_true(nr_edges > 0);
}

/* The threads' switches of a, b and the whole read w: each thread's switches, on-CPU and
   off-CPU time and readyings in the two windows add up to the whole's; how many differ. */
static uint32_t switches_diff(struct profile *w, struct profile *a, struct profile *b,
                              const char *what)
{
        struct profile *ps[3] = {w, a, b};
        struct switches_row *rows[3];
        uint32_t n[3];
        for (int k = 0; k < 3; k++) {
                const struct switches_row *r;
                n[k] = switches_threads(profile_switches(ps[k]), SWITCHES_BY_ID, &r);
                rows[k] = malloc((n[k] + 1) * sizeof(*rows[k]));
                assert_non_null(rows[k]);
                if (n[k])
                        memcpy(rows[k], r, n[k] * sizeof(*r));
        }
        uint32_t nr_diff = 0;
        for (uint32_t i = 0; i < n[0]; i++) {
                const struct switches_row *x = &rows[0][i];
                uint64_t sum[4] = {0};
                for (int k = 1; k < 3; k++)
                        for (uint32_t j = 0; j < n[k]; j++) {
                                const struct switches_row *y = &rows[k][j];
                                if (y->tid != x->tid || y->is_other != x->is_other)
                                        continue;
                                sum[0] += y->nr_switches;
                                sum[1] += y->on_cpu_ns;
                                sum[2] += y->off_cpu_ns;
                                sum[3] += y->nr_readied;
                        }
                if ((sum[0] != x->nr_switches || sum[1] != x->on_cpu_ns ||
                     sum[2] != x->off_cpu_ns || sum[3] != x->nr_readied) &&
                    nr_diff++ < 8)
                        fprintf(stderr,
                                "%s: thread %u: switches %llu of %llu, on-CPU %llu of %llu ns, "
                                "off-CPU %llu of %llu ns, readied %llu of %llu\n",
                                what, x->tid, (unsigned long long)sum[0],
                                (unsigned long long)x->nr_switches, (unsigned long long)sum[1],
                                (unsigned long long)x->on_cpu_ns, (unsigned long long)sum[2],
                                (unsigned long long)x->off_cpu_ns, (unsigned long long)sum[3],
                                (unsigned long long)x->nr_readied);
        }
        for (int k = 0; k < 3; k++)
                free(rows[k]);
        return nr_diff;
}

/* A trace's time cut in two windows, [0, cut) and [cut, its end): each row's self and total
   counts of the two add up to the whole read's, for cuts at a quarter, a half and three
   quarters of the trace (a sample and its stack count in the sample's window, whichever the
   stack's own time; every sample counts in one window). */
static void test_windows_add_up(void **state)
{
        (void)state;
        if (!nr_traces) {
                fprintf(stderr, "no trace to read: skipped\n");
                skip();
        }
        uint32_t nr_checked = 0;
        for (uint32_t i = 0; i < nr_traces; i++) {
                uint16_t source;
                bool has_samples;
                struct profile *whole = read_whole(i, false, 0, false, 0, &source, &has_samples);
                const struct profile_trace *tr = profile_trace(whole);
                double span_s = (double)tr->last_ns / 1e9;
                if (!has_samples || span_s <= 0) {
                        profile_free(whole);
                        continue;
                }
                for (uint32_t q = 1; q <= 3; q++) {
                        double cut_s = span_s * q / 4;
                        uint16_t s1, s2;
                        bool h1, h2;
                        struct profile *a = read_whole(i, false, 0, true, cut_s, &s1, &h1);
                        struct profile *b = read_whole(i, true, cut_s, false, 0, &s2, &h2);
                        /* a cut inside the samples: each window has some */
                        assert_true(hot_nr_samples(profile_hot(a), source) > 0);
                        assert_true(hot_nr_samples(profile_hot(b), source) > 0);
                        for (int g = HOT_BY_FUNCTION; g <= HOT_BY_THREAD; g++) {
                                uint32_t nw, na, nb;
                                struct keyed *w = rows_keyed(whole, source, g, &nw);
                                struct keyed *x = rows_keyed(a, source, g, &na);
                                struct keyed *y = rows_keyed(b, source, g, &nb);
                                uint32_t nr_diff = 0;
                                for (uint32_t k = 0; k < nw; k++) {
                                        struct keyed *fx =
                                                bsearch(&w[k], x, na, sizeof(*x), by_key);
                                        struct keyed *fy =
                                                bsearch(&w[k], y, nb, sizeof(*y), by_key);
                                        uint64_t self = (fx ? fx->self : 0) + (fy ? fy->self : 0);
                                        uint64_t total =
                                                (fx ? fx->total : 0) + (fy ? fy->total : 0);
                                        if ((self != w[k].self || total != w[k].total) &&
                                            nr_diff++ < 8)
                                                fprintf(stderr,
                                                        "%s cut at %.6f s, grouping %d: %s: "
                                                        "self %llu+%llu of %llu, total %llu+%llu "
                                                        "of %llu\n",
                                                        trace_names[i], cut_s, g, w[k].key,
                                                        (unsigned long long)(fx ? fx->self : 0),
                                                        (unsigned long long)(fy ? fy->self : 0),
                                                        (unsigned long long)w[k].self,
                                                        (unsigned long long)(fx ? fx->total : 0),
                                                        (unsigned long long)(fy ? fy->total : 0),
                                                        (unsigned long long)w[k].total);
                                }
                                /* and no row of a window that the whole read lacks */
                                for (uint32_t k = 0; k < na + nb; k++) {
                                        const struct keyed *r = k < na ? &x[k] : &y[k - na];
                                        if (!bsearch(r, w, nw, sizeof(*w), by_key) && nr_diff++ < 8)
                                                fprintf(stderr,
                                                        "%s cut at %.6f s: %s only in a window\n",
                                                        trace_names[i], cut_s, r->key);
                                }
                                assert_int_equal(nr_diff, 0);
                                assert_int_equal(hot_nr_samples(profile_hot(a), source) +
                                                         hot_nr_samples(profile_hot(b), source),
                                                 hot_nr_samples(profile_hot(whole), source));
                                free(w);
                                free(x);
                                free(y);
                        }
                        char what[PATH_MAX + 64];
                        snprintf(what, sizeof(what), "%s cut at %.6f s", trace_names[i], cut_s);
                        assert_int_equal(switches_diff(whole, a, b, what), 0);
                        profile_free(a);
                        profile_free(b);
                }
                print_message("%s: three cuts add up\n", trace_names[i]);
                nr_checked++;
                profile_free(whole);
        }
        assert_true(nr_checked > 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_rows_same_however_built),
                cmocka_unit_test(test_windows_add_up),
        };
        return cmocka_run_group_tests(tests, traces_find, traces_forget);
}
