/* SPDX-License-Identifier: MIT */
/* test_views.c: the screen's views (ui/views/) without a terminal: each view's rows built from a
   model fed synthetic decoded events (samples and stacks in a perf-map JIT module, LBR,
   CSwitch and ReadyThread, process and thread rundowns), its keys run through ui_key_dispatch
   (open, close, group, zoom), the session panel's edit-apply-read back cycle, and the key
   tables themselves (no key twice, help for every entry, the help screen and the key bar, the
   common keys' actions). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "etw/evntrace.h"
#include "etw/ntwmi.h"
#include "etw/winerror.h"
#include "kevent.h"
#include "model/profile.h"
#include "ui/table.h"
#include "ui/text_report.h"
#include "ui/view.h"
#include "ui/views.h"

#define MS(x) ((int64_t)(x)*1000000ll)

/* KTHREAD_STATE and KWAIT_REASON values (ETL-FORMAT.md 3.5) */
#define ST_READY          1
#define ST_WAITING        5
#define WR_EXECUTIVE      0
#define WR_DELAYEXECUTION 4
#define WR_USERREQUEST    6
#define WR_QUEUE          15
#define WR_PREEMPTED      32

#define PID_A 100
#define PID_B 200

/* ---- synthetic decoded events (as test_model.c builds them) ---- */

static struct kevent ev_base(enum kevent_type type, uint32_t cpu, int64_t t, uint32_t pid,
                             uint32_t tid)
{
        struct kevent ev;
        memset(&ev, 0, sizeof(ev));
        ev.type = type;
        ev.name = "";
        ev.cpu = cpu;
        ev.time_ns = t;
        ev.timestamp = (uint64_t)t + 1000000000ull; /* raw ticks: the session started at 1 s */
        ev.pid = pid;
        ev.tid = tid;
        return ev;
}

static void feed(struct profile *p, struct kevent ev)
{
        profile_event(p, &ev);
}

/* A timer sample at frames[0] with its stack (frames[0] innermost). */
static void feed_sample(struct profile *p, int64_t t, uint32_t pid, const uint64_t *frames,
                        uint32_t n)
{
        struct kevent ev = ev_base(KEV_SAMPLE, 0, t, pid, pid);
        ev.sample.ip = frames[0];
        ev.sample.tid = pid;
        profile_event(p, &ev);
        ev = ev_base(KEV_STACK, 0, t, pid, pid);
        ev.stack.event_timestamp = ev.timestamp;
        ev.stack.event_time_ns = t;
        ev.stack.pid = pid;
        ev.stack.tid = pid;
        ev.stack.nr_frames = n;
        ev.stack.frames = frames;
        profile_event(p, &ev);
}

static void feed_lbr(struct profile *p, int64_t t, uint32_t pid,
                     const struct kevent_lbr_entry *entries, uint32_t n)
{
        struct kevent ev = ev_base(KEV_LBR, 0, t, pid, pid);
        ev.lbr.event_timestamp = ev.timestamp;
        ev.lbr.pid = pid;
        ev.lbr.tid = pid;
        ev.lbr.nr_entries = n;
        ev.lbr.entries = entries;
        profile_event(p, &ev);
}

static struct kevent ev_cswitch(uint32_t cpu, int64_t t, uint32_t old_tid, uint32_t old_pid,
                                uint8_t old_state, uint8_t reason, uint32_t new_tid,
                                uint32_t new_pid)
{
        struct kevent ev = ev_base(KEV_CSWITCH, cpu, t, new_pid, new_tid);
        ev.cswitch.old_tid = old_tid;
        ev.cswitch.old_pid = old_pid;
        ev.cswitch.new_tid = new_tid;
        ev.cswitch.new_pid = new_pid;
        ev.cswitch.old_state = old_state;
        ev.cswitch.old_wait_reason = reason;
        ev.cswitch.old_wait_mode = 1;
        return ev;
}

static struct kevent ev_ready(uint32_t cpu, int64_t t, uint32_t tid, uint32_t pid, uint32_t by_tid,
                              uint32_t by_pid)
{
        struct kevent ev = ev_base(KEV_READY_THREAD, cpu, t, pid, tid);
        ev.ready_thread.tid = tid;
        ev.ready_thread.readying_tid = by_tid;
        ev.ready_thread.readying_pid = by_pid;
        ev.ready_thread.adjust_reason = 1;
        return ev;
}

static struct kevent ev_thread(int64_t t, uint32_t pid, uint32_t tid, const char *name)
{
        struct kevent ev = ev_base(KEV_THREAD, 0, t, pid, tid);
        ev.thread.phase = KEV_PHASE_DC_START;
        ev.thread.pid = pid;
        ev.thread.tid = tid;
        ev.thread.name = name;
        return ev;
}

static struct kevent ev_process(int64_t t, uint32_t pid, const char *image)
{
        struct kevent ev = ev_base(KEV_PROCESS, 0, t, pid, 0);
        ev.process.phase = KEV_PHASE_DC_START;
        ev.process.pid = pid;
        ev.process.image_name = image;
        ev.process.user_sid = ev.process.command_line = ev.process.package_full_name = "";
        ev.process.application_id = "";
        return ev;
}

/* ---- tables as shown ---- */

/* The column titled title, or title and a note in parentheses ("Function (callers since ..)"). */
static uint32_t col_of(const struct ui_table *t, const char *title)
{
        size_t n = strlen(title);
        for (uint32_t c = 0; c < t->nr_cols; c++)
                if (t->cols[c].title && strncmp(t->cols[c].title, title, n) == 0 &&
                    (!t->cols[c].title[n] || strncmp(t->cols[c].title + n, " (", 2) == 0))
                        return c;
        fail_msg("no column %s", title);
        return 0;
}

/* The cell of the row shown at pos, as shown. */
static const char *shown(const struct ui_table *t, uint32_t pos, const char *title)
{
        static char buf[4][1024];
        static unsigned next;
        char *b = buf[next++ % 4];
        ui_table_format(t, t->order[pos], col_of(t, title), b, sizeof(buf[0]));
        return b;
}

static uint64_t count_at(const struct ui_table *t, uint32_t pos, const char *title)
{
        uint32_t c = col_of(t, title);
        assert_true(t->cols[c].kind == UI_COL_U64 || t->cols[c].kind == UI_COL_NS);
        return t->cells[(size_t)t->order[pos] * t->nr_cols + c].u;
}

/* The first row shown at or after from, at depth (-1: any), whose column is text (or holds it,
   is_part): its position, or -1. */
static int find_from(const struct ui_table *t, uint32_t from, const char *title, const char *text,
                     bool is_part, int depth)
{
        for (uint32_t i = from; i < t->nr_rows; i++) {
                const char *s = shown(t, i, title);
                if ((depth < 0 || t->depth[t->order[i]] == depth) &&
                    (is_part ? strstr(s, text) != NULL : strcmp(s, text) == 0))
                        return (int)i;
        }
        return -1;
}

static int find_row(const struct ui_table *t, const char *title, const char *text, int depth)
{
        return find_from(t, 0, title, text, false, depth);
}

static uint64_t key_at(const struct ui_table *t, int pos)
{
        assert_true(pos >= 0);
        return t->keys[t->order[pos]];
}

static uint8_t flags_at(const struct ui_table *t, int pos)
{
        assert_true(pos >= 0);
        return t->flags[t->order[pos]];
}

static uint8_t depth_at(const struct ui_table *t, int pos)
{
        assert_true(pos >= 0);
        return t->depth[t->order[pos]];
}

/* ---- a view and its screen state, as the loop holds them ---- */

struct harness {
        struct ui_state st;
        struct ui_view *view;
        struct ui_table table;
        struct ui_build_ctx m;
};

static void harness_init(struct harness *h, struct ui_view *v, struct profile *p, bool is_live)
{
        memset(h, 0, sizeof(*h));
        h->st.nr_views = NR_VIEWS;
        h->st.is_live = is_live;
        h->st.delay_s = 1.0;
        h->view = v;
        ui_table_init(&h->table, v->cols, v->nr_cols);
        h->m = (struct ui_build_ctx){p, is_live, "", HOT_SOURCE_TIMER};
}

static void harness_fini(struct harness *h)
{
        ui_table_fini(&h->table);
        h->view->free(h->view);
}

static void rebuild(struct harness *h)
{
        if (h->m.profile) /* as the loop does before the views read the model */
                profile_catch_up(h->m.profile);
        h->view->build(h->view, &h->m, &h->table);
}

/* The key pressed with the cursor on row_key; the reactions. Rebuilds when they ask for it, as
   the loop does. */
static unsigned press(struct harness *h, int key, uint64_t row_key)
{
        h->st.status[0] = 0;
        struct ui_key_ctx ctx = {
                .st = &h->st, .view = h->view, .table = &h->table, .row_key = row_key};
        unsigned r = ui_key_dispatch(&ctx, key);
        if (r & UI_REBUILD)
                rebuild(h);
        return r;
}

/* ---- the JIT module: a perf map of this process ---- */

#define JIT_BASE 0x10000000ull
enum { FN_MAIN, FN_WORK, FN_LEAF, FN_OTHER, NR_FNS };
static const char *const fn_names[NR_FNS] = {"jit_main", "jit_work", "jit_leaf", "jit_other"};

static uint64_t fn_at(int fn, uint64_t offset)
{
        return JIT_BASE + 0x100ull * (uint64_t)fn + offset;
}

struct jit {
        char map_path[64];
        char module[64]; /* its module's name */
        uint32_t pid;
        struct profile *p;
};

static int jit_setup(void **state)
{
        struct jit *j = calloc(1, sizeof(*j));
        assert_non_null(j);
        j->pid = (uint32_t)getpid();
        snprintf(j->map_path, sizeof(j->map_path), "/tmp/perf-%u.map", j->pid);
        snprintf(j->module, sizeof(j->module), "perf-%u.map", j->pid);
        FILE *map = fopen(j->map_path, "w");
        assert_non_null(map);
        for (int i = 0; i < NR_FNS; i++)
                fprintf(map, "%" PRIx64 " 100 %s\n", fn_at(i, 0), fn_names[i]);
        fclose(map);
        struct profile_options po = {
                .is_live = true, .is_synchronous = true, .has_call_tree = true};
        j->p = profile_new(&po);
        *state = j;
        return 0;
}

static int jit_teardown(void **state)
{
        struct jit *j = *state;
        profile_free(j->p);
        unlink(j->map_path);
        free(j);
        return 0;
}

/* ---- 1. the functions view ---- */

static void test_functions_view(void **state)
{
        struct jit *j = *state;
        /* 6 samples in leaf (from work, from main), 3 in work (from main), 1 in other (from
           main): self leaf 6, work 3, other 1, main 0; total main 10, work 9 */
        const uint64_t in_leaf[] = {fn_at(FN_LEAF, 4), fn_at(FN_WORK, 8), fn_at(FN_MAIN, 8)};
        const uint64_t in_work[] = {fn_at(FN_WORK, 4), fn_at(FN_MAIN, 8)};
        const uint64_t in_other[] = {fn_at(FN_OTHER, 4), fn_at(FN_MAIN, 12)};
        int64_t t = MS(1);
        for (int i = 0; i < 6; i++)
                feed_sample(j->p, t += MS(1), j->pid, in_leaf, 3);
        for (int i = 0; i < 3; i++)
                feed_sample(j->p, t += MS(1), j->pid, in_work, 2);
        feed_sample(j->p, t += MS(1), j->pid, in_other, 2);

        struct harness h;
        harness_init(&h, functions_view_new(), j->p, true);
        rebuild(&h);
        struct ui_table *tb = &h.table;
        int leaf = find_row(tb, "Function", "jit_leaf", 0);
        int work = find_row(tb, "Function", "jit_work", 0);
        int other = find_row(tb, "Function", "jit_other", 0);
        assert_true(leaf >= 0 && work >= 0 && other >= 0);
        assert_string_equal(shown(tb, (uint32_t)leaf, "Module"), j->module);
        assert_int_equal(count_at(tb, (uint32_t)leaf, "Self"), 6);
        assert_int_equal(count_at(tb, (uint32_t)leaf, "Total"), 6);
        assert_string_equal(shown(tb, (uint32_t)leaf, "Self%"), "60.00%");
        assert_int_equal(count_at(tb, (uint32_t)work, "Self"), 3);
        assert_int_equal(count_at(tb, (uint32_t)work, "Total"), 9);
        assert_string_equal(shown(tb, (uint32_t)work, "Total%"), "90.00%");
        assert_int_equal(count_at(tb, (uint32_t)other, "Self"), 1);
        assert_int_equal(count_at(tb, (uint32_t)other, "Total"), 1);
        int main_fn = find_row(tb, "Function", "jit_main", 0);
        assert_true(main_fn >= 0); /* on the stacks only: self 0 */
        assert_int_equal(count_at(tb, (uint32_t)main_fn, "Self"), 0);
        assert_int_equal(count_at(tb, (uint32_t)main_fn, "Total"), 10);
        assert_string_equal(shown(tb, (uint32_t)main_fn, "Total%"), "100.00%");
        /* nothing is open yet; the sampled functions have callers */
        for (uint32_t i = 0; i < tb->nr_rows; i++)
                assert_int_equal(tb->depth[i], 0);
        assert_true(flags_at(tb, leaf) & UI_ROW_EXPANDABLE);
        assert_false(flags_at(tb, leaf) & UI_ROW_EXPANDED);

        /* Enter: leaf's callers, work under it, with the samples that came through it */
        uint64_t leaf_key = key_at(tb, leaf);
        assert_true(press(&h, '\n', leaf_key) & UI_REBUILD);
        leaf = find_row(tb, "Function", "jit_leaf", 0);
        assert_int_equal(key_at(tb, leaf), leaf_key);
        assert_true(flags_at(tb, leaf) & UI_ROW_EXPANDED);
        assert_true((uint32_t)leaf + 1 < tb->nr_rows);
        assert_int_equal(depth_at(tb, leaf + 1), 1);
        assert_string_equal(shown(tb, (uint32_t)leaf + 1, "Function"), "jit_work");
        assert_int_equal(count_at(tb, (uint32_t)leaf + 1, "Total"), 6);
        assert_true(flags_at(tb, leaf + 1) & UI_ROW_EXPANDABLE); /* main called work */

        /* *: every row shown opens one level: main appears under work under leaf */
        assert_true(press(&h, '*', 0) & UI_REBUILD);
        leaf = find_row(tb, "Function", "jit_leaf", 0);
        assert_int_equal(depth_at(tb, leaf + 1), 1);
        assert_true(flags_at(tb, leaf + 1) & UI_ROW_EXPANDED);
        assert_int_equal(depth_at(tb, leaf + 2), 2);
        assert_string_equal(shown(tb, (uint32_t)leaf + 2, "Function"), "jit_main");
        work = find_row(tb, "Function", "jit_work", 0);
        assert_true(flags_at(tb, work) & UI_ROW_EXPANDED);
        assert_int_equal(depth_at(tb, work + 1), 1);
        assert_string_equal(shown(tb, (uint32_t)work + 1, "Function"), "jit_main");

        /* -: leaf closes; the others stay open */
        assert_true(press(&h, '-', leaf_key) & UI_REBUILD);
        leaf = find_row(tb, "Function", "jit_leaf", 0);
        assert_false(flags_at(tb, leaf) & UI_ROW_EXPANDED);
        assert_true((uint32_t)leaf + 1 == tb->nr_rows || depth_at(tb, leaf + 1) == 0);
        work = find_row(tb, "Function", "jit_work", 0);
        assert_true(flags_at(tb, work) & UI_ROW_EXPANDED);

        /* +: opens again; Enter closes */
        press(&h, '+', leaf_key);
        leaf = find_row(tb, "Function", "jit_leaf", 0);
        assert_true(flags_at(tb, leaf) & UI_ROW_EXPANDED);
        press(&h, '\n', leaf_key);
        leaf = find_row(tb, "Function", "jit_leaf", 0);
        assert_false(flags_at(tb, leaf) & UI_ROW_EXPANDED);

        /* c: the call tree top-down, made from now on (the hot functions never needed it: a
           walk and nodes for every new stack, for a view not shown); the title says since
           when, and the samples that come count */
        assert_true(press(&h, 'c', 0) & UI_REBUILD);
        assert_non_null(strstr(h.st.status, "top-down"));
        assert_int_equal(tb->nr_rows, 0);
        assert_non_null(strstr(tb->cols[col_of(tb, "Function")].title, "call tree since 0.011 s"));
        for (int i = 0; i < 6; i++)
                feed_sample(j->p, t += MS(1), j->pid, in_leaf, 3);
        for (int i = 0; i < 3; i++)
                feed_sample(j->p, t += MS(1), j->pid, in_work, 2);
        feed_sample(j->p, t += MS(1), j->pid, in_other, 2);
        rebuild(&h);
        /* main its one root with every sample since */
        uint32_t nr_roots = 0;
        for (uint32_t i = 0; i < tb->nr_rows; i++)
                nr_roots += tb->depth[tb->order[i]] == 0;
        assert_int_equal(nr_roots, 1);
        int root = find_row(tb, "Function", "jit_main", 0);
        assert_int_equal(root, 0);
        assert_int_equal(count_at(tb, 0, "Total"), 10);
        assert_int_equal(count_at(tb, 0, "Self"), 0);
        assert_true(flags_at(tb, 0) & UI_ROW_EXPANDABLE);
        press(&h, '\n', key_at(tb, 0));
        int callee = find_row(tb, "Function", "jit_work", 1);
        assert_true(callee > 0);
        assert_int_equal(count_at(tb, (uint32_t)callee, "Total"), 9);
        assert_int_equal(count_at(tb, (uint32_t)callee, "Self"), 3);
        assert_true(find_row(tb, "Function", "jit_other", 1) > 0);
        /* c again: the hot functions, as they were left */
        press(&h, 'c', 0);
        assert_non_null(strstr(h.st.status, "callers"));
        assert_true(find_row(tb, "Function", "jit_leaf", 0) >= 0);
        work = find_row(tb, "Function", "jit_work", 0);
        assert_true(flags_at(tb, work) & UI_ROW_EXPANDED);
        /* the view's rows have no process */
        assert_int_equal(h.view->row_pid(h.view, tb, key_at(tb, work)), 0);
        harness_fini(&h);
}

/* *: the rows on the screen open, not every row of the table (a machine's thousands of threads
   opened at once made each refresh build all their details) */
static void test_expand_all_shown(void **state)
{
        struct jit *j = *state;
        const uint64_t in_leaf[] = {fn_at(FN_LEAF, 4), fn_at(FN_WORK, 8), fn_at(FN_MAIN, 8)};
        const uint64_t in_other[] = {fn_at(FN_OTHER, 4), fn_at(FN_MAIN, 12)};
        int64_t t = MS(1);
        for (int i = 0; i < 3; i++)
                feed_sample(j->p, t += MS(1), j->pid, in_leaf, 3);
        feed_sample(j->p, t += MS(1), j->pid, in_other, 2);
        struct harness h;
        harness_init(&h, functions_view_new(), j->p, true);
        rebuild(&h);
        struct ui_table *tb = &h.table;
        int leaf = find_row(tb, "Function", "jit_leaf", 0);
        int other = find_row(tb, "Function", "jit_other", 0);
        assert_true(leaf >= 0 && other >= 0);
        assert_true(flags_at(tb, other) & UI_ROW_EXPANDABLE);
        /* the screen shows leaf's row alone */
        uint32_t shown_rows[] = {tb->order[leaf]};
        struct ui_key_ctx ctx = {&h.st, h.view, tb, 0, shown_rows, 1};
        assert_true(ui_key_dispatch(&ctx, '*') & UI_REBUILD);
        rebuild(&h);
        leaf = find_row(tb, "Function", "jit_leaf", 0);
        other = find_row(tb, "Function", "jit_other", 0);
        assert_true(flags_at(tb, leaf) & UI_ROW_EXPANDED);
        assert_false(flags_at(tb, other) & UI_ROW_EXPANDED);
        /* and stays open when the rows are made again (a live screen's every refresh) */
        rebuild(&h);
        assert_true(flags_at(tb, find_row(tb, "Function", "jit_leaf", 0)) & UI_ROW_EXPANDED);
        harness_fini(&h);
}

/* A timer sample of pid's thread tid at frames[0] with its stack, on cpu. */
static void feed_sample_tid(struct profile *p, uint32_t cpu, int64_t t, uint32_t pid, uint32_t tid,
                            const uint64_t *frames, uint32_t n)
{
        struct kevent ev = ev_base(KEV_SAMPLE, cpu, t, pid, tid);
        ev.sample.ip = frames[0];
        ev.sample.tid = tid;
        profile_event(p, &ev);
        ev = ev_base(KEV_STACK, cpu, t, pid, tid);
        ev.stack.event_timestamp = ev.timestamp;
        ev.stack.event_time_ns = t;
        ev.stack.pid = pid;
        ev.stack.tid = tid;
        ev.stack.nr_frames = n;
        ev.stack.frames = frames;
        profile_event(p, &ev);
}

/* The row of fn whose Process or Thread column holds who, opened: the Total of its caller caller,
   or 0 when it has none. */
static uint64_t caller_total(struct harness *h, const char *column, const char *who, const char *fn,
                             const char *caller)
{
        struct ui_table *tb = &h->table;
        int r = -1;
        for (uint32_t i = 0; i < tb->nr_rows && r < 0; i++)
                if (depth_at(tb, (int)i) == 0 && !strcmp(shown(tb, i, "Function"), fn) &&
                    strstr(shown(tb, i, column), who))
                        r = (int)i;
        assert_true(r >= 0);
        uint64_t key = key_at(tb, r);
        if (!(flags_at(tb, r) & UI_ROW_EXPANDED))
                press(h, '\n', key);
        for (uint32_t i = 0; i < tb->nr_rows; i++)
                if (key_at(tb, (int)i) == key) {
                        r = (int)i;
                        break;
                }
        int c = find_from(tb, (uint32_t)r + 1, "Function", caller, false, 1);
        /* only its own callers: those before the next row of depth 0 */
        for (int i = r + 1; c >= 0 && i < c; i++)
                if (depth_at(tb, i) == 0)
                        return 0;
        return c < 0 ? 0 : count_at(tb, (uint32_t)c, "Total");
}

/* The samples of test_functions_callers_by_process, from t on. */
static int64_t feed_by_process(struct jit *j, uint32_t pid_b, int64_t t)
{
        const uint64_t from_work[] = {fn_at(FN_LEAF, 4), fn_at(FN_WORK, 8), fn_at(FN_MAIN, 8)};
        const uint64_t from_other[] = {fn_at(FN_LEAF, 4), fn_at(FN_OTHER, 8), fn_at(FN_MAIN, 8)};
        for (int i = 0; i < 4; i++)
                feed_sample_tid(j->p, 0, t += MS(1), j->pid, j->pid, from_work, 3);
        for (int i = 0; i < 2; i++)
                feed_sample_tid(j->p, 1, t += MS(1), j->pid, j->pid + 1, from_other, 3);
        for (int i = 0; i < 3; i++)
                feed_sample_tid(j->p, 0, t += MS(1), pid_b, pid_b, from_work, 3);
        return t;
}

/* The Function column's title: whether it says the callers count from some time on. */
static bool says_callers_since(const struct ui_table *tb)
{
        return strstr(tb->cols[col_of(tb, "Function")].title, "callers since") != NULL;
}

/* By process and by thread (p), the callers under a row count that row's samples only: one
   process's leaf came from work, the other's from work and other; one thread's from work,
   the other's from other. Those callers are counted only while the rows ask for them: asked
   for after samples came (a live screen's p), they count the samples from then on, and the
   Function column's title says since when; a zero counts every sample again. */
static void test_functions_callers_by_process(void **state)
{
        struct jit *j = *state;
        /* a second process with the same JIT code (its own perf map) */
        const uint32_t pid_b = 4000000 + j->pid % 100000;
        char map_b[64];
        snprintf(map_b, sizeof(map_b), "/tmp/perf-%u.map", pid_b);
        FILE *map = fopen(map_b, "w");
        assert_non_null(map);
        for (int i = 0; i < NR_FNS; i++)
                fprintf(map, "%" PRIx64 " 100 %s\n", fn_at(i, 0), fn_names[i]);
        fclose(map);
        feed(j->p, ev_process(0, j->pid, "jitted"));
        feed(j->p, ev_process(0, pid_b, "other_jit"));
        feed(j->p, ev_thread(0, j->pid, j->pid, "jitted"));
        feed(j->p, ev_thread(0, j->pid, j->pid + 1, "second"));
        feed(j->p, ev_thread(0, pid_b, pid_b, "other_jit"));
        int64_t t = feed_by_process(j, pid_b, MS(1));

        struct harness h;
        harness_init(&h, functions_view_new(), j->p, true);
        rebuild(&h);
        struct ui_table *tb = &h.table;
        /* a row per function: each process's JIT code is a module of its own */
        int leaf = find_row(tb, "Function", "jit_leaf", 0);
        if (strcmp(shown(tb, (uint32_t)leaf, "Module"), j->module) != 0)
                leaf = find_from(tb, (uint32_t)leaf + 1, "Function", "jit_leaf", false, 0);
        assert_true(leaf >= 0);
        assert_string_equal(shown(tb, (uint32_t)leaf, "Module"), j->module);
        assert_int_equal(count_at(tb, (uint32_t)leaf, "Self"), 6);
        uint64_t leaf_key = key_at(tb, leaf);
        press(&h, '\n', leaf_key);
        for (leaf = 0; key_at(tb, leaf) != leaf_key; leaf++)
                ;
        int work = find_from(tb, (uint32_t)leaf + 1, "Function", "jit_work", false, 1);
        assert_true(work > leaf);
        assert_int_equal(count_at(tb, (uint32_t)work, "Total"), 4);
        assert_false(says_callers_since(tb));

        press(&h, 'p', 0); /* by process */
        assert_non_null(strstr(h.st.status, "by process"));
        /* asked for now: no callers counted yet, and the title says from when */
        assert_true(says_callers_since(tb));
        assert_int_equal(caller_total(&h, "Process", "jitted", "jit_leaf", "jit_work"), 0);
        /* the same samples again: the callers count those, the rows both */
        t = feed_by_process(j, pid_b, t);
        rebuild(&h);
        assert_true(says_callers_since(tb));
        leaf = find_row(tb, "Process", "jitted", 0);
        assert_true(leaf >= 0);
        assert_int_equal(count_at(tb, (uint32_t)leaf, "Self"), 12);
        assert_int_equal(caller_total(&h, "Process", "jitted", "jit_leaf", "jit_work"), 4);
        assert_int_equal(caller_total(&h, "Process", "jitted", "jit_leaf", "jit_other"), 2);
        assert_int_equal(caller_total(&h, "Process", "other_jit", "jit_leaf", "jit_work"), 3);
        assert_int_equal(caller_total(&h, "Process", "other_jit", "jit_leaf", "jit_other"), 0);

        /* a zero: every sample counted from there, the title as it was */
        profile_zero(j->p);
        t = feed_by_process(j, pid_b, t);
        rebuild(&h);
        assert_false(says_callers_since(tb));
        assert_int_equal(caller_total(&h, "Process", "jitted", "jit_leaf", "jit_work"), 4);
        assert_int_equal(caller_total(&h, "Process", "other_jit", "jit_leaf", "jit_work"), 3);

        press(&h, 'p', 0); /* by thread */
        assert_non_null(strstr(h.st.status, "by thread"));
        assert_true(says_callers_since(tb));
        feed_by_process(j, pid_b, t);
        rebuild(&h);
        char first[64], second[64];
        snprintf(first, sizeof(first), "(%u)", j->pid);
        snprintf(second, sizeof(second), "second (%u)", j->pid + 1);
        assert_int_equal(caller_total(&h, "Thread", first, "jit_leaf", "jit_work"), 4);
        assert_int_equal(caller_total(&h, "Thread", first, "jit_leaf", "jit_other"), 0);
        assert_int_equal(caller_total(&h, "Thread", second, "jit_leaf", "jit_other"), 2);
        assert_int_equal(caller_total(&h, "Thread", second, "jit_leaf", "jit_work"), 0);
        harness_fini(&h);
        unlink(map_b);
}

/* A refresh looks up the callers (whether a row opens) of the rows the screen shows, a page
   past them, the cursor's neighbours and the open rows, not of every hot function: the rows
   past them are made (the list's length) with neither callers, counts nor text (a sort, search
   or filter, which read every row, shows every row: functions_view_show's 0), and a screen
   moved to them builds again (functions_view_covers). */
static void test_functions_rows_shown(void **state)
{
        struct jit *j = *state;
        const uint32_t pid = 4200000 + j->pid % 100000;
        enum { NR = 100 };
        const uint64_t base = UINT64_C(0x20000000);
        char map_path[64];
        snprintf(map_path, sizeof(map_path), "/tmp/perf-%u.map", pid);
        FILE *map = fopen(map_path, "w");
        assert_non_null(map);
        for (int i = 0; i < NR; i++)
                fprintf(map, "%" PRIx64 " 100 hot_%02d\n", base + 0x100 * (uint64_t)i, i);
        fprintf(map, "%" PRIx64 " 100 caller\n", base + 0x100 * (uint64_t)NR);
        fclose(map);
        feed(j->p, ev_process(0, pid, "many"));
        int64_t t = MS(1);
        for (int i = 0; i < NR; i++) /* hot_00 the most samples, hot_99 the fewest */
                for (int k = 0; k < NR + 1 - i; k++) {
                        const uint64_t frames[] = {base + 0x100ull * (uint64_t)i + 4,
                                                   base + 0x100ull * NR + 8};
                        feed_sample_tid(j->p, 0, t += 1000, pid, pid, frames, 2);
                }
        struct harness h;
        harness_init(&h, functions_view_new(), j->p, true);
        struct ui_table *tb = &h.table;
        /* no screen: every row */
        rebuild(&h);
        assert_int_equal(tb->nr_rows, NR + 1); /* and the caller's (samples under it only) */
        for (int r = 0; r < NR; r++)
                assert_true(flags_at(tb, r) & UI_ROW_EXPANDABLE);
        assert_true(functions_view_covers(h.view, 90, 10));
        uint64_t key_60 = key_at(tb, 60);
        /* ten rows shown from the top: those and a page past them, in order; the others made
           in no order (a screen moved to them builds again) */
        functions_view_show(h.view, 0, 10, 0);
        rebuild(&h);
        assert_int_equal(tb->nr_rows, NR + 1);
        assert_true(flags_at(tb, 19) & UI_ROW_EXPANDABLE);
        assert_false(flags_at(tb, 20) & UI_ROW_EXPANDABLE);
        assert_string_equal(shown(tb, 19, "Function"), "hot_19");
        assert_string_equal(shown(tb, 20, "Function"), ""); /* not formatted: not shown */
        assert_string_equal(shown(tb, 99, "Function"), "");
        for (int r = 0; r < 20; r++)
                assert_int_equal(count_at(tb, (uint32_t)r, "Self"), NR + 1 - r);
        for (int r = 20; r < NR + 1; r++) /* not counted: not shown (a sort builds them all) */
                assert_int_equal(count_at(tb, (uint32_t)r, "Self"), 0);
        assert_true(functions_view_covers(h.view, 5, 10));
        assert_false(functions_view_covers(h.view, 50, 10));
        assert_false(functions_view_covers(h.view, 0, 0)); /* sorted or filtered: every row */
        /* the cursor on row 60: its neighbours too, those before it as well */
        functions_view_show(h.view, 0, 10, key_60);
        rebuild(&h);
        assert_false(flags_at(tb, 49) & UI_ROW_EXPANDABLE);
        assert_string_equal(shown(tb, 49, "Function"), "");
        for (int r = 50; r < 80; r++) { /* those before the cursor's made again with text */
                char name[16];
                snprintf(name, sizeof(name), "hot_%02d", r);
                assert_int_equal(count_at(tb, (uint32_t)r, "Self"), NR + 1 - r);
                assert_true(flags_at(tb, r) & UI_ROW_EXPANDABLE);
                assert_string_equal(shown(tb, (uint32_t)r, "Function"), name);
                assert_string_equal(shown(tb, (uint32_t)r, "Module"), map_path + 5);
        }
        assert_false(flags_at(tb, 80) & UI_ROW_EXPANDABLE);
        assert_string_equal(shown(tb, 80, "Function"), "");
        /* every row again (sorted, searched, filtered): every row's text */
        functions_view_show(h.view, 0, 0, 0);
        rebuild(&h);
        assert_string_equal(shown(tb, 99, "Function"), "hot_99");
        uint64_t sum = 0;
        for (int r = 0; r < NR + 1; r++) /* every row counted: the sort reads them */
                sum += count_at(tb, (uint32_t)r, "Self");
        assert_int_equal(sum, (NR + 1) * (NR + 2) / 2 - 1);
        assert_true(functions_view_covers(h.view, 55, 10));
        /* an open row far down stays open */
        uint64_t far = key_at(tb, 90);
        functions_view_show(h.view, 85, 10, 0);
        press(&h, '\n', far);
        functions_view_show(h.view, 0, 10, 0);
        rebuild(&h);
        int r = find_row(tb, "Function", "hot_90", 0);
        assert_true(r >= 0);
        assert_true(flags_at(tb, r) & UI_ROW_EXPANDED);
        assert_string_equal(shown(tb, (uint32_t)r + 1, "Function"), "caller");
        harness_fini(&h);
        unlink(map_path);
}

/* Decaying (m): the callers under a row decay with it; a caller never counts more than the
   samples of its function. */
static void test_functions_callers_decay(void **state)
{
        struct jit *j = *state;
        const uint64_t in_leaf[] = {fn_at(FN_LEAF, 4), fn_at(FN_WORK, 8), fn_at(FN_MAIN, 8)};
        int64_t t = MS(1);
        for (int i = 0; i < 8; i++)
                feed_sample(j->p, t += MS(1), j->pid, in_leaf, 3);
        profile_set_mode(j->p, AGG_DECAYING);
        profile_refresh(j->p); /* 8 to 4 */
        struct harness h;
        harness_init(&h, functions_view_new(), j->p, true);
        rebuild(&h);
        struct ui_table *tb = &h.table;
        int leaf = find_row(tb, "Function", "jit_leaf", 0);
        assert_true(leaf >= 0);
        assert_int_equal(count_at(tb, (uint32_t)leaf, "Self"), 4);
        press(&h, '\n', key_at(tb, leaf));
        leaf = find_row(tb, "Function", "jit_leaf", 0);
        int work = find_from(tb, (uint32_t)leaf + 1, "Function", "jit_work", false, 1);
        assert_true(work > leaf);
        assert_int_equal(count_at(tb, (uint32_t)work, "Total"), 4);
        assert_string_equal(shown(tb, (uint32_t)work, "Total%"), "100.00%");
        /* two more refreshes: 2, then 1, the caller with its callee */
        for (int i = 0; i < 2; i++)
                profile_refresh(j->p);
        rebuild(&h);
        leaf = find_row(tb, "Function", "jit_leaf", 0);
        assert_int_equal(count_at(tb, (uint32_t)leaf, "Self"), 1);
        work = find_from(tb, (uint32_t)leaf + 1, "Function", "jit_work", false, 1);
        assert_true(work > leaf);
        assert_int_equal(count_at(tb, (uint32_t)work, "Total"), 1);
        /* and one more: nothing left, the row gone */
        profile_refresh(j->p);
        rebuild(&h);
        assert_int_equal(find_row(tb, "Function", "jit_leaf", 0), -1);
        harness_fini(&h);
}

/* ---- 2. the branches view ---- */

/* What the CPU recorded of the branches (a perf.data's or a live session's LBR entries):
   Mispred% of those whose prediction is known and AvgCyc; "-" where nothing was recorded. */
static void test_branches_view_flags(void **state)
{
        struct jit *j = *state;
        struct kevent_lbr_entry e[4];
        for (int i = 0; i < 3; i++)
                e[i] = (struct kevent_lbr_entry){fn_at(FN_MAIN, 0x10), fn_at(FN_WORK, 0)};
        e[3] = (struct kevent_lbr_entry){fn_at(FN_WORK, 0x30), fn_at(FN_LEAF, 0)};
        /* mispredicted after 6 cycles, predicted after 12, predicted (no count); nothing */
        const uint64_t info[4] = {1u | 6u << 4, 2u | 12u << 4, 2u, 0};
        struct kevent ev = ev_base(KEV_LBR, 0, MS(1), j->pid, j->pid);
        ev.lbr.event_timestamp = ev.timestamp;
        ev.lbr.pid = ev.lbr.tid = j->pid;
        ev.lbr.nr_entries = 4;
        ev.lbr.entries = e;
        ev.lbr.info = info;
        profile_event(j->p, &ev);

        struct harness h;
        harness_init(&h, branches_view_new(), j->p, true);
        rebuild(&h);
        struct ui_table *tb = &h.table;
        char from[128];
        snprintf(from, sizeof(from), "%s!jit_main+0x10", j->module);
        int r = find_row(tb, "From", from, 0);
        assert_true(r >= 0);
        /* right-aligned in their columns */
        assert_string_equal(shown(tb, (uint32_t)r, "Mispred%"), "  33.33");
        assert_string_equal(shown(tb, (uint32_t)r, "AvgCyc"), "   9.0");
        snprintf(from, sizeof(from), "%s!jit_work+0x30", j->module);
        r = find_row(tb, "From", from, 0);
        assert_true(r >= 0);
        assert_string_equal(shown(tb, (uint32_t)r, "Mispred%"), "      -");
        assert_string_equal(shown(tb, (uint32_t)r, "AvgCyc"), "     -");
        harness_fini(&h);
}

static void test_branches_view(void **state)
{
        struct jit *j = *state;
        /* main+0x10 -> work 3 times, main+0x20 -> work+4 once, work+0x30 -> leaf 4 times */
        struct kevent_lbr_entry e[8];
        uint32_t n = 0;
        for (int i = 0; i < 3; i++)
                e[n++] = (struct kevent_lbr_entry){fn_at(FN_MAIN, 0x10), fn_at(FN_WORK, 0)};
        e[n++] = (struct kevent_lbr_entry){fn_at(FN_MAIN, 0x20), fn_at(FN_WORK, 4)};
        for (int i = 0; i < 4; i++)
                e[n++] = (struct kevent_lbr_entry){fn_at(FN_WORK, 0x30), fn_at(FN_LEAF, 0)};
        feed_lbr(j->p, MS(1), j->pid, e, n);

        struct harness h;
        harness_init(&h, branches_view_new(), j->p, true);
        rebuild(&h);
        struct ui_table *tb = &h.table;
        assert_int_equal(tb->nr_rows, 3);
        char from[128], to[128];
        snprintf(from, sizeof(from), "%s!jit_work+0x30", j->module);
        snprintf(to, sizeof(to), "%s!jit_leaf+0x0", j->module);
        int r = find_row(tb, "From", from, 0);
        assert_true(r >= 0);
        assert_string_equal(shown(tb, (uint32_t)r, "To"), to);
        assert_int_equal(count_at(tb, (uint32_t)r, "Count"), 4);
        assert_int_equal(count_at(tb, (uint32_t)r, "Edges"), 1);
        assert_string_equal(shown(tb, (uint32_t)r, "Share%"), "50.00%");
        snprintf(from, sizeof(from), "%s!jit_main+0x10", j->module);
        r = find_row(tb, "From", from, 0);
        assert_true(r >= 0);
        assert_int_equal(count_at(tb, (uint32_t)r, "Count"), 3);
        assert_string_equal(shown(tb, (uint32_t)r, "Share%"), "37.50%");
        snprintf(from, sizeof(from), "%s!jit_main+0x20", j->module);
        r = find_row(tb, "From", from, 0);
        assert_true(r >= 0);
        assert_string_equal(shown(tb, (uint32_t)r, "Share%"), "12.50%");
        assert_false(flags_at(tb, r) & UI_ROW_GREYED);

        /* g: by function pair, the names without offsets */
        assert_true(press(&h, 'g', 0) & UI_REBUILD);
        assert_non_null(strstr(h.st.status, "function pair"));
        assert_int_equal(tb->nr_rows, 2);
        snprintf(from, sizeof(from), "%s!jit_main", j->module);
        snprintf(to, sizeof(to), "%s!jit_work", j->module);
        r = find_row(tb, "From", from, 0);
        assert_true(r >= 0);
        assert_string_equal(shown(tb, (uint32_t)r, "To"), to);
        assert_int_equal(count_at(tb, (uint32_t)r, "Count"), 4);
        assert_int_equal(count_at(tb, (uint32_t)r, "Edges"), 2);
        assert_string_equal(shown(tb, (uint32_t)r, "Share%"), "50.00%");
        /* g again: exact edges */
        press(&h, 'g', 0);
        assert_non_null(strstr(h.st.status, "exact edge"));
        assert_int_equal(tb->nr_rows, 3);
        harness_fini(&h);

        /* no LBR: one greyed row saying why */
        struct profile_options po = {0};
        struct profile *none = profile_new(&po);
        harness_init(&h, branches_view_new(), none, true);
        h.m.why_no_lbr = "no LBR in a virtual machine";
        rebuild(&h);
        assert_int_equal(tb->nr_rows, 1);
        assert_true(tb->flags[0] & UI_ROW_GREYED);
        assert_non_null(strstr(shown(tb, 0, "From"), "LBR is not available here"));
        h.m.why_no_lbr = "";
        rebuild(&h); /* live, LBR on: none came yet */
        assert_string_equal(shown(tb, 0, "From"), "No LBR events yet.");
        h.m.is_live = false; /* a recording without LBR: what it lacks, no session to change */
        rebuild(&h);
        assert_int_equal(tb->nr_rows, 1);
        assert_true(tb->flags[0] & UI_ROW_GREYED);
        assert_non_null(strstr(shown(tb, 0, "From"), "the trace has no LBR events"));
        assert_null(strstr(shown(tb, 0, "From"), "yet"));
        harness_fini(&h);
        profile_free(none);
}

/* ---- 3. the switches view ---- */

/* Two CPUs, process A (threads 101 "main", 102) and B (201 "loop"):
   cpu0: 101 [1,4) Waiting/WrQueue | 102 [4,6) Ready/WrPreempted | 101 [6,9) Waiting/UserRequest
   cpu1: 201 [2,5) Waiting/DelayExecution | 102 [5,8) Waiting/WrQueue | 201 [8,...)
   201 readies 101 at 5 ms. */
static void feed_schedule(struct profile *p)
{
        feed(p, ev_process(0, PID_A, "alpha.exe"));
        feed(p, ev_process(0, PID_B, "beta"));
        feed(p, ev_thread(0, PID_A, 101, "main"));
        feed(p, ev_thread(0, PID_A, 102, "worker"));
        feed(p, ev_thread(0, PID_B, 201, "loop"));
        feed(p, ev_cswitch(0, MS(1), 0, 0, ST_READY, WR_EXECUTIVE, 101, PID_A));
        feed(p, ev_cswitch(1, MS(2), 0, 0, ST_READY, WR_EXECUTIVE, 201, PID_B));
        feed(p, ev_cswitch(0, MS(4), 101, PID_A, ST_WAITING, WR_QUEUE, 102, PID_A));
        feed(p, ev_cswitch(1, MS(5), 201, PID_B, ST_WAITING, WR_DELAYEXECUTION, 0, 0));
        feed(p, ev_ready(1, MS(5) + 10, 101, PID_A, 201, PID_B));
        feed(p, ev_cswitch(0, MS(6), 102, PID_A, ST_READY, WR_PREEMPTED, 101, PID_A));
        feed(p, ev_cswitch(1, MS(6) + 1, 0, 0, ST_READY, WR_EXECUTIVE, 102, PID_A));
        feed(p, ev_cswitch(1, MS(8), 102, PID_A, ST_WAITING, WR_QUEUE, 201, PID_B));
        feed(p, ev_cswitch(0, MS(9), 101, PID_A, ST_WAITING, WR_USERREQUEST, 0, 0));
}

/* A stack as Windows writes it: the kernel part at the sample, the user part when the thread
   returns to user mode, other events between; here a 32-bit trace's (kernel from 0x80000000),
   and two samples of two threads that share a timestamp. Each sample counts its whole stack. */
static struct kevent win_sample(uint32_t cpu, int64_t t, uint32_t pid, uint32_t tid, uint64_t ip)
{
        struct kevent ev = ev_base(KEV_SAMPLE, cpu, t, pid, tid);
        ev.pointer_size = 4;
        ev.sample.ip = ip;
        ev.sample.tid = tid;
        return ev;
}

static struct kevent win_stack(uint32_t cpu, int64_t t, uint32_t pid, uint32_t tid,
                               const uint64_t *frames, uint32_t n)
{
        struct kevent ev = ev_base(KEV_STACK, cpu, t + MS(1) / 10, pid, tid);
        ev.pointer_size = 4;
        ev.stack.event_timestamp = (uint64_t)t + 1000000000ull;
        ev.stack.event_time_ns = t;
        ev.stack.pid = pid;
        ev.stack.tid = tid;
        ev.stack.frames = frames;
        ev.stack.nr_frames = n;
        return ev;
}

static void test_windows_stack_parts(void **state)
{
        (void)state;
        struct profile_options po = {0};
        struct profile *p = profile_new(&po);
        struct harness h;
        harness_init(&h, functions_view_new(), p, false);
        struct ui_table *tb = &h.table;
        const uint64_t kernel[] = {0x80001000, 0x80002000};
        const uint64_t user_a[] = {0x401000, 0x402000};
        const uint64_t user_b[] = {0x501000};
        /* two threads sampled in the kernel at the same time on two CPUs */
        feed(p, win_sample(0, MS(10), PID_A, 101, 0x80001000));
        feed(p, win_sample(1, MS(10), PID_B, 201, 0x80001000));
        feed(p, win_stack(0, MS(10), PID_A, 101, kernel, 2));
        feed(p, win_stack(1, MS(10), PID_B, 201, kernel, 2));
        feed(p, ev_base(KEV_OTHER, 0, MS(11), PID_A, 101));
        /* their user parts, later, B's first */
        struct kevent late = win_stack(1, MS(10), PID_B, 201, user_b, 1);
        late.time_ns = MS(12);
        feed(p, late);
        late = win_stack(0, MS(10), PID_A, 101, user_a, 2);
        late.time_ns = MS(13);
        feed(p, late);
        profile_end(p);
        rebuild(&h);
        int k = find_row(tb, "Function", "0x80001000", 0);
        int a1 = find_row(tb, "Function", "0x401000", 0);
        int a2 = find_row(tb, "Function", "0x402000", 0);
        int b1 = find_row(tb, "Function", "0x501000", 0);
        assert_true(k >= 0 && a1 >= 0 && a2 >= 0 && b1 >= 0);
        assert_int_equal(count_at(tb, (uint32_t)k, "Self"), 2);
        /* each thread's user frames under its own sample, once */
        assert_int_equal(count_at(tb, (uint32_t)a1, "Total"), 1);
        assert_int_equal(count_at(tb, (uint32_t)a2, "Total"), 1);
        assert_int_equal(count_at(tb, (uint32_t)b1, "Total"), 1);
        assert_int_equal(count_at(tb, (uint32_t)a1, "Self"), 0);
        harness_fini(&h);
        profile_free(p);
}

/* p: a row per function (the default), or a row per process and function with a Process column
   (perf top --sort comm,sym). */
static void test_functions_by_process(void **state)
{
        (void)state;
        struct profile_options po = {0};
        struct profile *p = profile_new(&po);
        struct harness h;
        harness_init(&h, functions_view_new(), p, false);
        struct ui_table *tb = &h.table;
        feed(p, ev_process(0, PID_A, "alpha.exe"));
        feed(p, ev_process(0, PID_B, "beta"));
        const uint64_t at[] = {0x1234};
        int64_t t = MS(1);
        for (int i = 0; i < 3; i++)
                feed_sample(p, t += MS(1), PID_A, at, 1);
        feed_sample(p, t += MS(1), PID_B, at, 1);
        rebuild(&h);
        int r = find_row(tb, "Function", "0x1234", 0);
        assert_true(r >= 0);
        assert_int_equal(count_at(tb, (uint32_t)r, "Self"), 4);
        assert_int_equal(find_from(tb, (uint32_t)r + 1, "Function", "0x1234", false, 0), -1);
        /* the Process column shows only by process (perf top's Command column) */
        for (uint32_t c = 0; c < tb->nr_cols; c++)
                assert_false(tb->cols[c].title && !strcmp(tb->cols[c].title, "Process"));
        /* p: a row per process */
        assert_true(press(&h, 'p', 0) & UI_REBUILD);
        assert_non_null(strstr(h.st.status, "by process"));
        int a = find_row(tb, "Process", "alpha.exe", 0);
        int b = find_row(tb, "Process", "beta", 0);
        assert_true(a >= 0 && b >= 0);
        assert_string_equal(shown(tb, (uint32_t)a, "Function"), "0x1234");
        assert_int_equal(count_at(tb, (uint32_t)a, "Self"), 3);
        assert_string_equal(shown(tb, (uint32_t)b, "Function"), "0x1234");
        assert_int_equal(count_at(tb, (uint32_t)b, "Self"), 1);
        /* again: a row per thread and function, with a Thread column */
        press(&h, 'p', 0);
        assert_non_null(strstr(h.st.status, "by thread"));
        assert_true(find_row(tb, "Thread", "alpha.exe (100)", 0) >= 0);
        assert_true(find_row(tb, "Thread", "beta (200)", 0) >= 0);
        /* again: the modules, each function under its module when it opens */
        press(&h, 'p', 0);
        assert_non_null(strstr(h.st.status, "by module"));
        int mod = find_row(tb, "Function", "[1 function]", 0);
        assert_true(mod >= 0);
        assert_int_equal(count_at(tb, (uint32_t)mod, "Self"), 4);
        assert_true(flags_at(tb, mod) & UI_ROW_EXPANDABLE);
        assert_true(press(&h, '\n', key_at(tb, mod)) & UI_REBUILD);
        r = find_row(tb, "Function", "0x1234", 1);
        assert_true(r >= 0);
        assert_int_equal(count_at(tb, (uint32_t)r, "Self"), 4);
        /* and again: a row per function */
        press(&h, 'p', 0);
        r = find_row(tb, "Function", "0x1234", 0);
        assert_int_equal(count_at(tb, (uint32_t)r, "Self"), 4);
        assert_int_equal(find_from(tb, (uint32_t)r + 1, "Function", "0x1234", false, 0), -1);
        harness_fini(&h);
        profile_free(p);
}

/* A view's build only reads the model: the functions view by process leaves the model's own
   grouping (what -b, the exports and annotate read) a row per function. */
static void test_functions_build_reads_only(void **state)
{
        (void)state;
        struct profile_options po = {0};
        struct profile *p = profile_new(&po);
        struct harness h;
        harness_init(&h, functions_view_new(), p, false);
        feed(p, ev_process(0, PID_A, "alpha.exe"));
        feed(p, ev_process(0, PID_B, "beta"));
        const uint64_t at[] = {0x1234};
        int64_t t = MS(1);
        feed_sample(p, t += MS(1), PID_A, at, 1);
        feed_sample(p, t += MS(1), PID_B, at, 1);
        press(&h, 'p', 0); /* a row per process */
        assert_true(find_row(&h.table, "Process", "alpha.exe", 0) >= 0);
        assert_true(find_row(&h.table, "Process", "beta", 0) >= 0);
        const struct hot_row *rows;
        assert_int_equal(hot_functions(profile_hot(p), HOT_SOURCE_TIMER, false, &rows), 1);
        assert_int_equal(rows[0].self, 2);
        harness_fini(&h);
        profile_free(p);
}

/* A -p recording (etwtop's SessionCpu names the traced process): the switches view has rows
   for that process's threads only; the other process's thread is the other side of them. */
static void test_switches_of_a_process_recording(void **state)
{
        (void)state;
        struct profile_options po = {0};
        struct profile *p = profile_new(&po);
        struct harness h;
        harness_init(&h, switches_view_new(), p, false);
        struct ui_table *tb = &h.table;
        struct kevent sc = ev_base(KEV_SESSION_CPU, 0, 0, 0, 0);
        sc.session_cpu.nr_cpus = sc.session_cpu.nr_online = 2;
        sc.session_cpu.traced_pid = PID_A;
        feed(p, sc);
        feed_schedule(p);
        rebuild(&h);
        assert_int_equal(profile_trace(p)->traced_pid, PID_A);
        assert_true(find_row(tb, "Thread", "alpha.exe/main", 0) >= 0);
        assert_true(find_row(tb, "Thread", "alpha.exe/worker", 0) >= 0);
        assert_int_equal(find_row(tb, "Thread", "beta/loop", 0), -1);
        for (uint32_t r = 0; r < tb->nr_rows; r++)
                if (!(tb->flags[r] & UI_ROW_GREYED))
                        assert_int_equal(count_at(tb, r, "PID"), PID_A);
        /* the same events without the SessionCpu: the whole system */
        profile_restart(p);
        feed_schedule(p);
        rebuild(&h);
        assert_int_equal(profile_trace(p)->traced_pid, 0);
        assert_true(find_row(tb, "Thread", "beta/loop", 0) >= 0);
        harness_fini(&h);
        profile_free(p);
}

static void test_switches_view(void **state)
{
        (void)state;
        struct profile_options po = {0};
        struct profile *p = profile_new(&po);
        struct harness h;
        harness_init(&h, switches_view_new(), p, true);
        struct ui_table *tb = &h.table;
        rebuild(&h);
        assert_int_equal(tb->nr_rows, 1); /* no switches yet: the greyed row */
        assert_true(tb->flags[0] & UI_ROW_GREYED);
        assert_string_equal(shown(tb, 0, "Thread"), "No context switches yet.");
        /* CSWITCH off in the session: said so */
        struct kevent gm = ev_base(KEV_GROUP_MASK, 0, 0, 0, 0);
        gm.group_mask.masks[0] = EVENT_TRACE_FLAG_PROFILE;
        feed(p, gm);
        rebuild(&h);
        assert_non_null(strstr(shown(tb, 0, "Thread"), "CSWITCH is off"));
        /* a recording: what the trace lacks (no session to change) */
        h.m.is_live = false;
        rebuild(&h);
        assert_non_null(strstr(shown(tb, 0, "Thread"), "the trace has no CSwitch events"));
        assert_null(strstr(shown(tb, 0, "Thread"), "Session view"));
        h.m.is_live = true;
        gm.group_mask.masks[0] |= EVENT_TRACE_FLAG_CSWITCH;
        feed(p, gm);
        /* counts, then CSWITCH off: they stay, and a row says nothing is counted since */
        feed_schedule(p);
        gm.time_ns = MS(10);
        gm.group_mask.masks[0] = EVENT_TRACE_FLAG_PROFILE;
        feed(p, gm);
        rebuild(&h);
        assert_true(find_row(tb, "Thread", "alpha.exe/main", 0) >= 0);
        assert_true(tb->flags[tb->order[0]] & UI_ROW_GREYED); /* first, where it is seen */
        assert_non_null(strstr(shown(tb, 0, "Thread"), "CSWITCH is off"));
        profile_restart(p); /* forgets it all, the stop too */

        feed_schedule(p);
        rebuild(&h);
        int main_t = find_row(tb, "Thread", "alpha.exe/main", 0);
        int worker = find_row(tb, "Thread", "alpha.exe/worker", 0);
        int loop = find_row(tb, "Thread", "beta/loop", 0);
        assert_true(main_t >= 0 && worker >= 0 && loop >= 0);
        assert_int_equal(count_at(tb, (uint32_t)main_t, "Switches"), 2);
        assert_int_equal(count_at(tb, (uint32_t)main_t, "On-CPU"), MS(6));
        assert_int_equal(count_at(tb, (uint32_t)main_t, "Off-CPU"), MS(2));
        assert_int_equal(count_at(tb, (uint32_t)main_t, "Readied"), 1);
        assert_int_equal(count_at(tb, (uint32_t)main_t, "TID"), 101);
        assert_int_equal(count_at(tb, (uint32_t)main_t, "PID"), PID_A);
        /* CPU%: 6 ms on CPU of the 9 ms the events cover (from the rundown at 0) */
        assert_string_equal(shown(tb, (uint32_t)main_t, "CPU%"), "66.67%");
        assert_string_equal(shown(tb, (uint32_t)main_t, "Top wait (state/reason)"),
                            "Waiting/WrQueue");
        assert_int_equal(count_at(tb, (uint32_t)loop, "PID"), PID_B);
        assert_true(flags_at(tb, main_t) & UI_ROW_EXPANDABLE);

        /* row_pid: a thread row's process */
        uint64_t main_key = key_at(tb, main_t);
        assert_int_equal(h.view->row_pid(h.view, tb, main_key), PID_A);
        assert_int_equal(h.view->row_pid(h.view, tb, key_at(tb, loop)), PID_B);

        /* Enter: the thread's details under it: its waits, who readied it, its CPU */
        assert_true(press(&h, '\n', main_key) & UI_REBUILD);
        main_t = find_row(tb, "Thread", "alpha.exe/main", 0);
        assert_true(flags_at(tb, main_t) & UI_ROW_EXPANDED);
        int cpu = find_from(tb, (uint32_t)main_t + 1, "Thread", "ran on CPU 0", false, 1);
        assert_true(cpu > main_t);
        assert_int_equal(count_at(tb, (uint32_t)cpu, "Switches"), 2);
        int wait = find_from(tb, (uint32_t)main_t + 1, "Top wait (state/reason)", "Waiting/WrQueue",
                             false, 1);
        assert_true(wait > main_t);
        assert_string_equal(shown(tb, (uint32_t)wait, "Thread"), "off CPU in this state/reason");
        assert_int_equal(count_at(tb, (uint32_t)wait, "Off-CPU"), MS(2));
        int readier =
                find_from(tb, (uint32_t)main_t + 1, "Thread", "readied by beta/loop", true, 1);
        assert_true(readier > main_t);
        /* the details are no process's rows */
        assert_int_equal(h.view->row_pid(h.view, tb, key_at(tb, cpu)), 0);
        /* Enter again closes */
        press(&h, '\n', main_key);
        main_t = find_row(tb, "Thread", "alpha.exe/main", 0);
        assert_false(flags_at(tb, main_t) & UI_ROW_EXPANDED);
        assert_int_equal(find_row(tb, "Thread", "ran on CPU 0", -1), -1);

        /* t on a thread: only its process from now on; t again: every process */
        unsigned r = press(&h, 't', main_key);
        assert_true(r & UI_ZOOM);
        assert_int_equal(h.st.zoom_pid, PID_A);
        assert_non_null(strstr(h.st.status, "100"));
        r = press(&h, 't', main_key);
        assert_true(r & UI_ZOOM);
        assert_int_equal(h.st.zoom_pid, 0);

        /* g: by process, its threads under it when opened */
        assert_true(press(&h, 'g', 0) & UI_REBUILD);
        assert_non_null(strstr(h.st.status, "by process"));
        int proc = find_row(tb, "Process", "alpha.exe (2 threads)", 0);
        assert_true(proc >= 0);
        assert_int_equal(count_at(tb, (uint32_t)proc, "Switches"), 4);
        assert_int_equal(count_at(tb, (uint32_t)proc, "PID"), PID_A);
        assert_int_equal(h.view->row_pid(h.view, tb, key_at(tb, proc)), PID_A);
        assert_true(find_row(tb, "Process", "beta (1 thread)", 0) >= 0);
        press(&h, '\n', key_at(tb, proc));
        proc = find_row(tb, "Process", "alpha.exe (2 threads)", 0);
        assert_true(find_from(tb, (uint32_t)proc + 1, "Process", "alpha.exe/main", false, 1) >
                    proc);
        assert_true(find_from(tb, (uint32_t)proc + 1, "Process", "alpha.exe/worker", false, 1) >
                    proc);

        /* g: by CPU */
        press(&h, 'g', 0);
        assert_non_null(strstr(h.st.status, "by CPU"));
        int cpu1 = find_from(tb, 0, "Busy and idle share", "CPU 1: busy", true, 0);
        assert_true(cpu1 >= 0);
        assert_int_equal(count_at(tb, (uint32_t)cpu1, "CPU"), 1);
        assert_int_equal(count_at(tb, (uint32_t)cpu1, "Switches"), 4);
        assert_int_equal(h.view->row_pid(h.view, tb, key_at(tb, cpu1)), 0);
        /* CPUs do not open */
        assert_int_equal(press(&h, '\n', key_at(tb, cpu1)) & UI_REBUILD, 0);

        /* g: by wait reason, over every thread */
        press(&h, 'g', 0);
        assert_non_null(strstr(h.st.status, "by wait"));
        int delay = find_row(tb, "State/reason", "Waiting/DelayExecution", 0);
        assert_true(delay >= 0);
        assert_int_equal(count_at(tb, (uint32_t)delay, "Waits"), 1);
        assert_string_equal(shown(tb, (uint32_t)delay, "Threads"), "all threads");
        assert_int_equal(count_at(tb, (uint32_t)delay, "Off-CPU"), MS(3));
        assert_int_equal(h.view->row_pid(h.view, tb, key_at(tb, delay)), 0);
        /* t on a row with no process says so and zooms on nothing */
        r = press(&h, 't', key_at(tb, delay));
        assert_false(r & UI_ZOOM);
        assert_int_equal(h.st.zoom_pid, 0);
        assert_non_null(strstr(h.st.status, "no process"));

        /* g: by thread again */
        press(&h, 'g', 0);
        assert_non_null(strstr(h.st.status, "by thread"));
        assert_true(find_row(tb, "Thread", "alpha.exe/main", 0) >= 0);
        harness_fini(&h);
        profile_free(p);
}

/* Rows of no one thread show no TID or PID: the other threads' row and the readyings by the
   exited threads folded past SWITCHES_EXITED_MAX (AGG_ALL, once shown cut to "4294967"). */
static void test_switches_view_no_id(void **state)
{
        (void)state;
        struct profile_options po = {0};
        struct profile *p = profile_new(&po);
        struct harness h;
        harness_init(&h, switches_view_new(), p, true);
        struct ui_table *tb = &h.table;
        const uint32_t first = 1000, nr = SWITCHES_EXITED_MAX + 20;
        int64_t t = 0;
        for (uint32_t i = 0; i < nr; i++) {
                uint32_t tid = first + i;
                t = MS(1) + MS(i);
                int64_t on = 100000 + i;
                struct kevent ev = ev_process(t, tid, "short");
                ev.process.phase = KEV_PHASE_START;
                feed(p, ev);
                ev = ev_thread(t, tid, tid, "short");
                ev.thread.phase = KEV_PHASE_START;
                feed(p, ev);
                for (int k = 0; k < (i ? 1 : 2); k++) { /* the first: the heaviest, kept */
                        int64_t at = t + k * (on + 1000);
                        feed(p, ev_cswitch(0, at, 0, 0, ST_READY, WR_EXECUTIVE, tid, tid));
                        if (i)
                                feed(p, ev_ready(0, at + 1000, first, first, tid, tid));
                        feed(p, ev_cswitch(0, at + on, tid, tid, ST_WAITING, WR_QUEUE, 0, 0));
                }
                int64_t end = t + (i ? 1 : 2) * (on + 1000) + 10000;
                ev = ev_thread(end, tid, tid, "short");
                ev.thread.phase = KEV_PHASE_END;
                feed(p, ev);
                ev = ev_process(end, tid, "short");
                ev.process.phase = KEV_PHASE_END;
                feed(p, ev);
        }
        /* time passes, past the grace: the lightest exited threads fold */
        struct kevent tick = ev_base(KEV_GROUP_MASK, 1, t + SWITCHES_EXIT_GRACE_NS + MS(10), 0, 0);
        tick.group_mask.masks[0] = EVENT_TRACE_FLAG_CSWITCH;
        feed(p, tick);
        profile_refresh(p);
        rebuild(&h);
        int other = find_row(tb, "Thread", "[other threads]", 0);
        assert_true(other >= 0);
        assert_true(count_at(tb, (uint32_t)other, "Switches") > 0);
        assert_string_equal(shown(tb, (uint32_t)other, "TID"), "");
        assert_string_equal(shown(tb, (uint32_t)other, "PID"), "");
        int kept = -1;
        for (uint32_t i = 0; i < tb->nr_rows; i++)
                if (count_at(tb, i, "TID") == first)
                        kept = (int)i;
        assert_true(kept >= 0);
        press(&h, '\n', key_at(tb, kept));
        int exited = find_row(tb, "Thread", "readied by [exited threads] from (no stack)", 1);
        assert_true(exited >= 0);
        assert_true(count_at(tb, (uint32_t)exited, "Readied") > 0);
        assert_string_equal(shown(tb, (uint32_t)exited, "TID"), "");
        assert_string_equal(shown(tb, (uint32_t)exited, "PID"), "");
        harness_fini(&h);
        profile_free(p);
}

/* ---- 4. the session panel ---- */

static int setting_row(const struct ui_table *t, const char *name)
{
        int r = find_row(t, "Setting", name, 0);
        assert_true(r >= 0);
        return r;
}

static bool has_hook(const struct panel_values *pv, uint16_t hook)
{
        for (uint32_t i = 0; i < pv->nr_hooks; i++)
                if (pv->hooks[i] == hook)
                        return true;
        return false;
}

static void test_session_view(void **state)
{
        (void)state;
        struct harness h;
        harness_init(&h, session_view_new(), NULL, true);
        struct ui_table *tb = &h.table;
        const uint32_t flags = EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD |
                               EVENT_TRACE_FLAG_IMAGE_LOAD | EVENT_TRACE_FLAG_PROFILE |
                               EVENT_TRACE_FLAG_CSWITCH | EVENT_TRACE_FLAG_DISPATCHER;
        struct panel_values now = {.masks = {flags},
                                   .hooks = {PERFINFO_LOG_TYPE_SAMPLED_PROFILE},
                                   .nr_hooks = 1,
                                   .interval_100ns = 10000};
        struct etw_machine_caps caps = {.has_cpu_wide = 1, .has_pmu = 1, .nr_cpus = 4};
        snprintf(caps.why_no_lbr, sizeof(caps.why_no_lbr), "no LBR in this virtual machine");
        session_view_set(h.view, true, &caps, &now);
        rebuild(&h);

        int cs = setting_row(tb, "CSWITCH");
        assert_string_equal(shown(tb, (uint32_t)cs, "On"), "[x]");
        assert_true(flags_at(tb, cs) & UI_ROW_CHECKED);
        assert_string_equal(shown(tb, (uint32_t)setting_row(tb, "stack: Profile"), "On"), "[x]");
        assert_string_equal(shown(tb, (uint32_t)setting_row(tb, "stack: CSwitch"), "On"), "[ ]");
        assert_string_equal(shown(tb, (uint32_t)setting_row(tb, "interval 1 ms"), "On"), "[x]");
        assert_string_equal(shown(tb, (uint32_t)setting_row(tb, "interval 10 ms"), "On"), "[ ]");
        int pmc = setting_row(tb, "PMC: CacheMisses");
        assert_string_equal(shown(tb, (uint32_t)pmc, "On"), "[ ]");
        assert_false(flags_at(tb, pmc) & (UI_ROW_CHECKED | UI_ROW_GREYED));
        int lbr = setting_row(tb, "LBR on Profile");
        assert_true(flags_at(tb, lbr) & UI_ROW_GREYED);
        assert_string_equal(shown(tb, (uint32_t)lbr, "What it does, or why it is unavailable"),
                            "no LBR in this virtual machine");
        struct panel_values want;
        const char *name;
        assert_false(session_view_pending(h.view, &want, &name));
        /* a greyed LBR filter: refused with the reason, nothing asked of the session */
        int filter = setting_row(tb, "LBR filter: KERNEL");
        assert_true(flags_at(tb, filter) & UI_ROW_GREYED);
        assert_false(press(&h, '\n', key_at(tb, filter)) & UI_APPLY);
        assert_false(session_view_pending(h.view, &want, &name));
        assert_non_null(strstr(h.st.status, "LBR filter: KERNEL: no LBR in this virtual machine"));
        assert_null(strstr(h.st.status, "applied to the running session"));

        /* CSWITCH off: Enter asks the loop to apply the edited copy */
        assert_true(press(&h, '\n', key_at(tb, cs)) & UI_APPLY);
        assert_true(session_view_pending(h.view, &want, &name));
        assert_string_equal(name, "CSWITCH");
        assert_int_equal(want.masks[0], flags & ~(uint32_t)EVENT_TRACE_FLAG_CSWITCH);
        assert_int_equal(want.nr_hooks, 1);
        /* the mark follows the session, not the edit */
        cs = setting_row(tb, "CSWITCH");
        assert_string_equal(shown(tb, (uint32_t)cs, "On"), "[x]");
        /* the session took it: read back, marked off */
        char status[256];
        session_view_set(h.view, true, &caps, &want);
        session_view_result(h.view, ERROR_SUCCESS, "", status, sizeof(status));
        assert_non_null(strstr(status, "applied to the running session"));
        assert_non_null(strstr(status, "CSWITCH off"));
        assert_false(session_view_pending(h.view, &want, &name));
        rebuild(&h);
        cs = setting_row(tb, "CSWITCH");
        assert_string_equal(shown(tb, (uint32_t)cs, "On"), "[ ]");
        assert_false(flags_at(tb, cs) & UI_ROW_CHECKED);
        now = want;

        /* a stack hook removed, another added */
        assert_true(press(&h, '\n', key_at(tb, setting_row(tb, "stack: Profile"))) & UI_APPLY);
        assert_true(session_view_pending(h.view, &want, &name));
        assert_string_equal(name, "stack: Profile");
        assert_int_equal(want.nr_hooks, 0);
        assert_int_equal(want.masks[0], now.masks[0]);
        session_view_result(h.view, ERROR_SUCCESS, "", status, sizeof(status)); /* dropped */
        assert_true(press(&h, '\n', key_at(tb, setting_row(tb, "stack: CSwitch"))) & UI_APPLY);
        assert_true(session_view_pending(h.view, &want, &name));
        assert_int_equal(want.nr_hooks, 2);
        assert_true(has_hook(&want, WMI_LOG_TYPE_CONTEXT_SWAP));
        assert_true(has_hook(&want, PERFINFO_LOG_TYPE_SAMPLED_PROFILE));
        session_view_result(h.view, ERROR_SUCCESS, "", status, sizeof(status));

        /* PMC: the source and its group together; the session refuses: the mark stays off */
        pmc = setting_row(tb, "PMC: CacheMisses");
        assert_true(press(&h, '\n', key_at(tb, pmc)) & UI_APPLY);
        assert_true(session_view_pending(h.view, &want, &name));
        assert_string_equal(name, "PMC: CacheMisses");
        assert_int_equal(want.pmc_source, 10);
        assert_true(want.masks[PERF_GET_MASK_INDEX(PERF_PMC_PROFILE)] &
                    PERF_GET_MASK_GROUP(PERF_PMC_PROFILE));
        assert_int_equal(want.masks[0], now.masks[0]);
        session_view_set(h.view, true, &caps, &now);
        session_view_result(h.view, ERROR_NOT_SUPPORTED, "no such counter", status, sizeof(status));
        assert_non_null(strstr(status, "(Win32 error 50)"));
        assert_non_null(strstr(status, "PMC: CacheMisses"));
        assert_null(strstr(status, "applied"));
        rebuild(&h);
        pmc = setting_row(tb, "PMC: CacheMisses");
        assert_string_equal(shown(tb, (uint32_t)pmc, "On"), "[ ]");
        assert_false(flags_at(tb, pmc) & UI_ROW_CHECKED);
        /* a PMC source on, as read back: marked */
        struct panel_values with_pmc = want;
        session_view_set(h.view, true, &caps, &with_pmc);
        rebuild(&h);
        assert_string_equal(shown(tb, (uint32_t)setting_row(tb, "PMC: CacheMisses"), "On"), "[x]");
        assert_string_equal(shown(tb, (uint32_t)setting_row(tb, "PMC: BranchMispredictions"), "On"),
                            "[ ]");

        /* a recording: every row fixed */
        session_view_set(h.view, false, &caps, &now);
        rebuild(&h);
        cs = setting_row(tb, "CSWITCH");
        assert_true(flags_at(tb, cs) & UI_ROW_GREYED);
        unsigned r = press(&h, '\n', key_at(tb, cs));
        assert_false(r & UI_APPLY);
        assert_non_null(strstr(h.st.status, "a recording"));
        assert_false(session_view_pending(h.view, &want, &name));
        /* no row: nothing */
        session_view_set(h.view, true, &caps, &now);
        assert_false(press(&h, '\n', 0) & UI_APPLY);
        assert_false(session_view_pending(h.view, &want, &name));
        harness_fini(&h);
}

/* ---- 5. the key tables ---- */

/* The common key whose help label starts with word ("F1", "F10"): its key code, from the table
   rather than from <curses.h> (only ui/ includes it). */
static int common_key_labelled(const char *word)
{
        uint32_t n;
        const struct ui_key *k = ui_common_keys(&n);
        size_t len = strlen(word);
        for (uint32_t i = 0; i < n; i++)
                if (k[i].label && strncmp(k[i].label, word, len) == 0 &&
                    (k[i].label[len] == ' ' || k[i].label[len] == 0))
                        return k[i].key;
        fail_msg("no common key labelled %s", word);
        return 0;
}

static struct ui_view *view_new(int which)
{
        switch (which) {
        case VIEW_FUNCTIONS: return functions_view_new();
        case VIEW_BRANCHES: return branches_view_new();
        case VIEW_SWITCHES: return switches_view_new();
        case VIEW_EVENTS: return events_view_new();
        default: return session_view_new();
        }
}

/* The printable keys the list browser takes before the tables (ui_screen_browse): a view's key
   among them would never run. */
static const char browser_keys[] = "<>.,I/n\\";

static void check_table(const struct ui_key *k, uint32_t n, const char *what)
{
        assert_true(n > 0);
        assert_non_null(k[0].label); /* an unlabelled entry continues the one before */
        for (uint32_t i = 0; i < n; i++) {
                if (!k[i].action)
                        fail_msg("%s: key %d has no action", what, k[i].key);
                if (k[i].label && (!k[i].help || !k[i].help[0]))
                        fail_msg("%s: %s has no help", what, k[i].label);
                for (uint32_t o = i + 1; o < n; o++)
                        if (k[o].key == k[i].key)
                                fail_msg("%s: key %d twice", what, k[i].key);
        }
}

static bool help_has(const char *lines, uint32_t nr, uint32_t width, const struct ui_key *k)
{
        for (uint32_t i = 0; i < nr; i++) {
                const char *l = lines + (size_t)i * width;
                if (strstr(l, k->label) && strstr(l, k->help))
                        return true;
        }
        return false;
}

static void test_key_tables(void **state)
{
        (void)state;
        uint32_t nr_common;
        const struct ui_key *common = ui_common_keys(&nr_common);
        check_table(common, nr_common, "common");
        for (int v = 0; v < NR_VIEWS; v++) {
                struct ui_view *view = view_new(v);
                check_table(view->keys, view->nr_keys, view->name);
                for (uint32_t i = 0; i < view->nr_keys; i++) {
                        int key = view->keys[i].key;
                        /* a view's key means what the view says: no common key is hidden
                           (none is meant to be; Enter + - * c g are the views' own) */
                        for (uint32_t c = 0; c < nr_common; c++)
                                if (common[c].key == key)
                                        fail_msg("%s: key %d is also the common %s", view->name,
                                                 key, common[c].label ? common[c].label : "");
                        if (key > 0 && key < 128 && strchr(browser_keys, key))
                                fail_msg("%s: key %c is the list browser's", view->name, key);
                        assert_ptr_equal(ui_key_find(view, key), &view->keys[i]);
                }
                /* the help screen: every labelled entry, the view's then the common ones */
                enum { WIDTH = 200, MAX = 128 };
                char *lines = calloc(MAX, WIDTH);
                assert_non_null(lines);
                uint32_t nr = ui_help_lines(view, lines, WIDTH, MAX);
                assert_true(nr < MAX);
                for (uint32_t i = 0; i < view->nr_keys; i++)
                        if (view->keys[i].label && !help_has(lines, nr, WIDTH, &view->keys[i]))
                                fail_msg("%s: help lacks %s", view->name, view->keys[i].label);
                for (uint32_t i = 0; i < nr_common; i++)
                        if (common[i].label && !help_has(lines, nr, WIDTH, &common[i]))
                                fail_msg("%s: help lacks %s", view->name, common[i].label);
                free(lines);
                char bar[512];
                ui_key_bar(view, bar, sizeof(bar));
                assert_non_null(strstr(bar, "F1Help"));
                assert_non_null(strstr(bar, "F10Quit"));
                view->free(view);
        }
        /* the common keys by themselves find their entries */
        assert_ptr_equal(ui_key_find(NULL, 'q')->action,
                         ui_key_find(NULL, common_key_labelled("F10"))->action);
        assert_null(ui_key_find(NULL, '\n'));
}

static void test_common_keys(void **state)
{
        (void)state;
        struct profile_options po = {0};
        struct profile *p = profile_new(&po);
        struct harness h;
        harness_init(&h, functions_view_new(), p, true);
        rebuild(&h);

        /* d / D: the refresh interval halves / doubles, within 0.1 .. 60 s */
        h.st.delay_s = 1.0;
        assert_true(press(&h, 'd', 0) & UI_REDRAW);
        assert_true(h.st.delay_s > 0.49 && h.st.delay_s < 0.51);
        assert_string_equal(h.st.status, "refresh every 0.5 s");
        press(&h, 'D', 0);
        press(&h, 'D', 0);
        assert_true(h.st.delay_s > 1.99 && h.st.delay_s < 2.01);
        assert_string_equal(h.st.status, "refresh every 2.0 s");
        h.st.delay_s = 0.15;
        press(&h, 'd', 0);
        assert_true(h.st.delay_s > 0.099 && h.st.delay_s < 0.101);
        press(&h, 'd', 0);
        assert_true(h.st.delay_s > 0.099 && h.st.delay_s < 0.101);
        assert_string_equal(h.st.status, "refresh every 0.1 s");
        h.st.delay_s = 40;
        press(&h, 'D', 0);
        assert_true(h.st.delay_s > 59.9 && h.st.delay_s < 60.1);
        assert_string_equal(h.st.status, "refresh every 60.0 s");

        /* m: the aggregation mode cycles */
        assert_int_equal(h.st.mode, 0);
        for (uint32_t want = 1; want <= 3; want++) {
                unsigned r = press(&h, 'm', 0);
                assert_true(r & UI_SET_MODE);
                assert_int_equal(h.st.mode, want % 3);
                assert_non_null(strstr(h.st.status, "aggregation: "));
        }

        assert_true(press(&h, 'z', 0) & UI_ZERO);
        assert_true(press(&h, 'q', 0) & UI_QUIT);
        assert_true(press(&h, common_key_labelled("F10"), 0) & UI_QUIT);
        assert_true(press(&h, 'W', 0) & UI_SAVE);
        assert_true(press(&h, common_key_labelled("F2"), 0) & UI_SAVE);

        /* help: F1, h, ? */
        press(&h, common_key_labelled("F1"), 0);
        assert_true(h.st.is_help);
        press(&h, 'h', 0);
        assert_false(h.st.is_help);
        press(&h, '?', 0);
        assert_true(h.st.is_help);

        /* the views: Tab, Shift-Tab, 1-4, F9 */
        press(&h, '\t', 0);
        assert_int_equal(h.st.view, 1);
        press(&h, common_key_labelled("Shift-Tab"), 0);
        press(&h, common_key_labelled("Shift-Tab"), 0);
        assert_int_equal(h.st.view, NR_VIEWS - 1);
        press(&h, '2', 0);
        assert_int_equal(h.st.view, VIEW_BRANCHES);
        press(&h, common_key_labelled("4"), 0);
        assert_int_equal(h.st.view, VIEW_SESSION);
        press(&h, '1', 0);
        assert_int_equal(h.st.view, VIEW_FUNCTIONS);

        /* [ ]: the time window of a replay; live, they say so */
        unsigned r = press(&h, '[', 0);
        assert_false(r & UI_MOVE_WINDOW);
        assert_non_null(strstr(h.st.status, "for replays"));
        h.st.is_live = false;
        r = press(&h, '[', 0);
        assert_true(r & UI_MOVE_WINDOW);
        assert_int_equal(h.st.window_step, -1);
        r = press(&h, ']', 0);
        assert_true(r & UI_MOVE_WINDOW);
        assert_int_equal(h.st.window_step, 1);

        /* Space (and Z): pause and resume */
        press(&h, ' ', 0);
        assert_true(h.st.is_paused);
        assert_non_null(strstr(h.st.status, "paused"));
        r = press(&h, ' ', 0);
        assert_false(h.st.is_paused);
        assert_true(r & UI_REBUILD);
        press(&h, 'Z', 0);
        assert_true(h.st.is_paused);

        /* t on a view whose rows have no process */
        r = press(&h, 't', 1);
        assert_false(r & UI_ZOOM);
        assert_int_equal(h.st.zoom_pid, 0);
        /* a key nobody has */
        assert_int_equal(press(&h, 0x7f0, 0), 0);
        harness_fini(&h);
        profile_free(p);
}

/* ---- 6. the text form: ui_table_print, and the text report (--replay -b) ---- */

/* What fn wrote to a file descriptor, as a string (the caller frees it). */
static char *printed(int (*fn)(void *ctx, int fd), void *ctx)
{
        FILE *f = tmpfile();
        assert_non_null(f);
        assert_int_equal(fn(ctx, fileno(f)), 0);
        off_t n = lseek(fileno(f), 0, SEEK_END);
        assert_true(n >= 0);
        char *s = calloc(1, (size_t)n + 1);
        assert_non_null(s);
        assert_int_equal(pread(fileno(f), s, (size_t)n, 0), n);
        fclose(f);
        return s;
}

static int print_table(void *ctx, int fd)
{
        return ui_table_print(ctx, fd, 0);
}

/* The columns' gaps, a tree row indented within its column's width, milliseconds, a number
   with its decimals, "-" for none, and no spaces at a line's end. */
static void test_table_text_form(void **state)
{
        (void)state;
        static const struct ui_column cols[] = {
                {"Share", UI_COL_PCT, 8, 0},   {"Wait ms", UI_COL_MS, 9, 0},
                {"IPC", UI_COL_REAL, 5, 0},    {"Module", UI_COL_TEXT, 8, 0},
                {"Detail", UI_COL_TEXT, 0, 0},
        };
        static const struct ui_text_col text[] = {
                {1, 0, false}, {0, 0, false}, {0, 1, false}, {2, 0, true}, {0, 0, false},
        };
        struct ui_table t;
        ui_table_init(&t, cols, 5);
        t.text_cols = text;
        uint32_t r = ui_table_add(&t, 1, 0, 0);
        ui_table_pct(&t, r, 0, 12.5);
        ui_table_u64(&t, r, 1, 1234567);
        ui_table_pct(&t, r, 2, 1.25);
        ui_table_text(&t, r, 3, "libc");
        r = ui_table_add(&t, 2, 1, 0); /* under it: no detail, no IPC */
        ui_table_pct(&t, r, 0, 100);
        ui_table_pct(&t, r, 2, NAN);
        ui_table_text(&t, r, 3, "ld.so");
        ui_table_text(&t, r, 4, "");
        char *s = printed(print_table, &t);
        assert_string_equal(s, "    Share   Wait ms   IPC   Module   Detail\n"
                               "   12.50%     1.235   1.2   libc\n"
                               "  100.00%     0.000     -     ld.so\n");
        free(s);
        /* a name longer than a cell's copy (a C++ template's, borrowed): printed whole */
        char *name = malloc(1501);
        assert_non_null(name);
        memset(name, 'n', 1500);
        name[1500] = 0;
        ui_table_text_borrow(&t, 1, 4, name);
        s = printed(print_table, &t);
        char *want = malloc(1700);
        assert_non_null(want);
        snprintf(want, 1700,
                 "    Share   Wait ms   IPC   Module   Detail\n"
                 "   12.50%%     1.235   1.2   libc\n"
                 "  100.00%%     0.000     -     ld.so  %s\n",
                 name);
        assert_string_equal(s, want);
        free(want);
        free(s);
        ui_table_text(&t, 1, 4, "");
        free(name);
        /* without a text form: one space between columns, the last one's indentation */
        t.text_cols = NULL;
        s = printed(print_table, &t);
        assert_string_equal(s, "   Share   Wait ms   IPC Module   Detail\n"
                               "  12.50%     1.235  1.25 libc\n"
                               " 100.00%     0.000     - ld.so\n");
        free(s);
        ui_table_fini(&t);
}

static int print_report(void *ctx, int fd)
{
        struct ui_text_report_options o = {.nr_top = 10, .group = FUNCTIONS_BY_MODULE};
        return ui_text_report_print(ctx, &o, fd);
}

/* --replay -b's tables: the hot functions (here by module, the functions under their module's
   row), modules, branch edges, events, in the columns the report has always had, and no line
   that ends with a space. */
static void test_text_report(void **state)
{
        struct jit *j = *state;
        const uint64_t in_leaf[] = {fn_at(FN_LEAF, 4), fn_at(FN_WORK, 8), fn_at(FN_MAIN, 8)};
        const uint64_t in_work[] = {fn_at(FN_WORK, 4), fn_at(FN_MAIN, 8)};
        int64_t t = MS(1);
        for (int i = 0; i < 3; i++)
                feed_sample(j->p, t += MS(1), j->pid, in_leaf, 3);
        feed_sample(j->p, t += MS(1), j->pid, in_work, 2);
        struct kevent_lbr_entry e[] = {{fn_at(FN_MAIN, 0x10), fn_at(FN_WORK, 0)}};
        feed_lbr(j->p, t += MS(1), j->pid, e, 1);
        profile_end(j->p);
        char *s = printed(print_report, j->p);
        char want[1024];
        snprintf(want, sizeof(want),
                 "\nHot functions (Timer, 4 samples, by self, the modules, their functions "
                 "under them)\n"
                 "   Self%%   Total%%     Self    Total  Module                    Function\n"
                 " 100.00%%  100.00%%        4        4  %-25s [3 functions]\n"
                 "  75.00%%   75.00%%        3        3    %-23s jit_leaf\n"
                 "  25.00%%  100.00%%        1        4    %-23s jit_work\n"
                 "   0.00%%  100.00%%        0        4    %-23s jit_main\n",
                 j->module, j->module, j->module, j->module);
        assert_non_null(strstr(s, want));
        snprintf(want, sizeof(want),
                 "\nHot modules (Timer)\n"
                 "   Self%%     Self  Module                    Symbols\n"
                 " 100.00%%        4  %-25s 4 from %s\n",
                 j->module, j->map_path);
        assert_non_null(strstr(s, want));
        snprintf(want, sizeof(want),
                 "\nHot branch edges (LBR, 1 branches)\n"
                 "   Share    Count  Mispred  AvgCyc  From -> To\n"
                 " 100.00%%        1        -       -  %s!jit_main+0x10 -> %s!jit_work\n",
                 j->module, j->module);
        assert_non_null(strstr(s, want));
        assert_non_null(strstr(s, "\nEvents by type\n     Events   Share  Event type\n"));
        assert_null(strstr(s, " \n"));
        free(s);
}

/* A PMC sample of source at ip, and its stack (ip alone). */
static void feed_pmc(struct profile *p, int64_t t, uint32_t pid, uint64_t ip, uint16_t source)
{
        struct kevent ev = ev_base(KEV_PMC_SAMPLE, 0, t, pid, pid);
        ev.pmc_sample.ip = ip;
        ev.pmc_sample.tid = pid;
        ev.pmc_sample.source = source;
        profile_event(p, &ev);
        ev = ev_base(KEV_STACK, 0, t, pid, pid);
        ev.stack.event_timestamp = ev.timestamp;
        ev.stack.event_time_ns = t;
        ev.stack.pid = pid;
        ev.stack.tid = pid;
        ev.stack.nr_frames = 1;
        ev.stack.frames = &ip;
        profile_event(p, &ev);
}

static int print_report_all(void *ctx, int fd)
{
        struct ui_text_report_options o = {.only_source = -1};
        return ui_text_report_print(ctx, &o, fd);
}

/* A source a trace names itself (a perf.data event, CollectionStart's name): its whole name in
   the report's titles, past the 62 bytes the converter once clipped it to, and made safe for a
   terminal there (the report writes its titles as they are made). */
static void test_text_report_source_name(void **state)
{
        struct jit *j = *state;
        static const char name[] = "MEM_TRANS_RETIRED.LOAD_LATENCY:ldlat=64:precise=2:mh:mg:pinned"
                                   ":u\x1b]0;pwned\x07\x1b[31m";
        struct kevent ev = {.type = KEV_PROFILE_INTERVAL};
        ev.profile_interval.source = 70;
        ev.profile_interval.source_name = name;
        profile_event(j->p, &ev);
        char buf[32];
        assert_string_equal(profile_source_name(j->p, 70, buf, sizeof(buf)), name);
        const uint64_t ip = fn_at(FN_LEAF, 4);
        feed_pmc(j->p, MS(2), j->pid, ip, 70);
        profile_end(j->p);
        char *s = printed(print_report_all, j->p);
        assert_non_null(strstr(s, "\nHot functions (MEM_TRANS_RETIRED.LOAD_LATENCY:ldlat=64:"
                                  "precise=2:mh:mg:pinned:u?]0;pwned??[31m, 1 samples, by self"));
        assert_null(strchr(s, 0x1b));
        assert_null(strchr(s, 0x07));
        free(s);
}

static void feed_interval(struct profile *p, uint16_t source, uint32_t interval)
{
        struct kevent ev = ev_base(KEV_PROFILE_INTERVAL, 0, 0, 0, 0);
        ev.profile_interval.source = source;
        ev.profile_interval.new_interval_100ns = interval;
        ev.profile_interval.source_name = "";
        profile_event(p, &ev);
}

/* The schedule of feed_schedule, each switch carrying a counter (PMC_COUNTERS) that counts
   the CPU's nanoseconds. */
static void feed_schedule_pmc(struct profile *p)
{
        static const struct {
                uint32_t cpu;
                int64_t t;
                uint32_t old_tid, old_pid;
                uint8_t state, reason;
                uint32_t new_tid, new_pid;
        } sw[] = {
                {0, MS(1), 0, 0, ST_READY, WR_EXECUTIVE, 101, PID_A},
                {1, MS(2), 0, 0, ST_READY, WR_EXECUTIVE, 201, PID_B},
                {0, MS(4), 101, PID_A, ST_WAITING, WR_QUEUE, 102, PID_A},
                {1, MS(5), 201, PID_B, ST_WAITING, WR_DELAYEXECUTION, 0, 0},
                {0, MS(6), 102, PID_A, ST_READY, WR_PREEMPTED, 101, PID_A},
                {1, MS(6) + 1, 0, 0, ST_READY, WR_EXECUTIVE, 102, PID_A},
                {1, MS(8), 102, PID_A, ST_WAITING, WR_QUEUE, 201, PID_B},
                {0, MS(9), 101, PID_A, ST_WAITING, WR_USERREQUEST, 0, 0},
        };
        feed(p, ev_process(0, PID_A, "alpha.exe"));
        feed(p, ev_process(0, PID_B, "beta"));
        feed(p, ev_thread(0, PID_A, 101, "main"));
        feed(p, ev_thread(0, PID_A, 102, "worker"));
        feed(p, ev_thread(0, PID_B, 201, "loop"));
        for (size_t i = 0; i < sizeof(sw) / sizeof(sw[0]); i++) {
                struct kevent ev =
                        ev_cswitch(sw[i].cpu, sw[i].t, sw[i].old_tid, sw[i].old_pid, sw[i].state,
                                   sw[i].reason, sw[i].new_tid, sw[i].new_pid);
                ev.nr_pmc = 1;
                ev.pmc[0] = (uint64_t)sw[i].t;
                feed(p, ev);
        }
}

static int print_report_top(void *ctx, int fd)
{
        struct ui_text_report_options o = {.nr_top = 10, .only_source = -1};
        return ui_text_report_print(ctx, &o, fd);
}

/* IPC where cycles (TotalCycles, 19) and instructions (InstructionRetired, 26) are both
   sampled: the screen's column and -b's table give each function the same figure, and both
   leave it blank where the function has cycle samples but no instruction sample (no estimate:
   a sampled IPC is never 0), where -b printed 0.00 and the screen nothing. */
static void test_ipc_screen_as_text(void **state)
{
        struct jit *j = *state;
        feed_interval(j->p, 19, 1000);
        feed_interval(j->p, 26, 2000);
        int64_t t = MS(1);
        for (int i = 0; i < 4; i++)
                feed_pmc(j->p, t += MS(1), j->pid, fn_at(FN_LEAF, 4), 19);
        for (int i = 0; i < 2; i++)
                feed_pmc(j->p, t += MS(1), j->pid, fn_at(FN_WORK, 4), 19);
        for (int i = 0; i < 3; i++)
                feed_pmc(j->p, t += MS(1), j->pid, fn_at(FN_LEAF, 8), 26);
        profile_end(j->p);

        struct harness h;
        harness_init(&h, functions_view_new(), j->p, false);
        h.m.source = 19;
        rebuild(&h);
        struct ui_table *tb = &h.table;
        int leaf = find_row(tb, "Function", "jit_leaf", 0);
        int work = find_row(tb, "Function", "jit_work", 0);
        assert_true(leaf >= 0 && work >= 0);
        assert_string_equal(shown(tb, (uint32_t)leaf, "IPC"), "1.50"); /* 3 x 2000 / 4 x 1000 */
        assert_string_equal(shown(tb, (uint32_t)work, "IPC"), "");
        harness_fini(&h);

        char *s = printed(print_report_top, j->p);
        char want[1024];
        snprintf(want, sizeof(want),
                 "\nIPC per function (InstructionRetired samples x 2000 / TotalCycles samples x "
                 "1000)\n"
                 "      IPC   Cycles    Instr  Module                    Function\n"
                 "     1.50        4        3  %-25s jit_leaf\n"
                 "                 2        0  %-25s jit_work\n",
                 j->module, j->module);
        assert_non_null(strstr(s, want));
        snprintf(want, sizeof(want),
                 "\nIPC per module (InstructionRetired samples x 2000 / TotalCycles samples x "
                 "1000)\n"
                 "      IPC   Cycles    Instr  Module\n"
                 "     1.00        6        3  %s\n",
                 j->module);
        assert_non_null(strstr(s, want));
        free(s);
}

/* --replay -b's context switches, built by the switches view: its threads in the screen's
   order (the same rows), their counters, the CPUs and the waits in the report's columns. */
static void test_text_report_switches(void **state)
{
        (void)state;
        struct profile_options po = {0};
        struct profile *p = profile_new(&po);
        feed_schedule_pmc(p);
        profile_end(p);
        char *s = printed(print_report_top, p);
        const char *threads =
                strstr(s, "\nContext switches (threads, by switches)\n"
                          " Switches   On-CPU ms  Off-CPU ms  Readied      TID      PID"
                          "  Top wait (state/reason)        Thread\n");
        assert_non_null(threads);
        /* the screen's rows of the same model, in their order, are the report's */
        struct harness h;
        harness_init(&h, switches_view_new(), p, false);
        rebuild(&h);
        const char *at = threads;
        for (uint32_t i = 0; i < h.table.nr_rows; i++) {
                const char *name = strstr(at, shown(&h.table, i, "Thread"));
                assert_non_null(name);
                assert_true(name > at);
                at = name;
        }
        assert_non_null(strstr(s, "        2       6.000       2.000        0      101      100"
                                  "  Waiting/WrQueue                alpha.exe/main\n"));
        assert_non_null(strstr(s, "\nCounters per thread (the PMC counts of its timeslices, from "
                                  "the CSwitch events)\n      TID  Thread                          "
                                  "Counts\n"));
        assert_non_null(strstr(s, "\nCPUs (time with a thread on them, idle time)\n  CPU  Switches"
                                  "     Busy ms     Idle ms     Busy%  Idle in (C-state)\n"));
        assert_non_null(strstr(s, "\nWaits (state/reason, by off-CPU time)\n    Waits  Off-CPU ms"
                                  "  State/Reason\n"));
        assert_non_null(strstr(s, "      101  alpha.exe/main                  counter 6.00 M\n"));
        assert_non_null(strstr(s, "    1         4       6.000       1.000    85.71%  unknown"));
        assert_null(strstr(s, " \n"));
        harness_fini(&h);
        free(s);
        profile_free(p);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_functions_view, jit_setup, jit_teardown),
                cmocka_unit_test_setup_teardown(test_expand_all_shown, jit_setup, jit_teardown),
                cmocka_unit_test_setup_teardown(test_functions_rows_shown, jit_setup, jit_teardown),
                cmocka_unit_test_setup_teardown(test_functions_callers_by_process, jit_setup,
                                                jit_teardown),
                cmocka_unit_test_setup_teardown(test_functions_callers_decay, jit_setup,
                                                jit_teardown),
                cmocka_unit_test_setup_teardown(test_branches_view, jit_setup, jit_teardown),
                cmocka_unit_test_setup_teardown(test_branches_view_flags, jit_setup, jit_teardown),
                cmocka_unit_test(test_switches_view),
                cmocka_unit_test(test_switches_of_a_process_recording),
                cmocka_unit_test(test_switches_view_no_id),
                cmocka_unit_test(test_functions_by_process),
                cmocka_unit_test(test_functions_build_reads_only),
                cmocka_unit_test(test_windows_stack_parts),
                cmocka_unit_test(test_session_view),
                cmocka_unit_test(test_key_tables),
                cmocka_unit_test(test_common_keys),
                cmocka_unit_test(test_table_text_form),
                cmocka_unit_test_setup_teardown(test_text_report_source_name, jit_setup,
                                                jit_teardown),
                cmocka_unit_test_setup_teardown(test_text_report, jit_setup, jit_teardown),
                cmocka_unit_test_setup_teardown(test_ipc_screen_as_text, jit_setup, jit_teardown),
                cmocka_unit_test(test_text_report_switches),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
