/* SPDX-License-Identifier: MIT */
/* text_report.c: owns the text report's tables of samples, branch edges and events (their
   columns and rows from the model), the order of its sections, and where its text goes. */
#include "ui/text_report.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/hot_ipc.h"
#include "model/profile.h"
#include "text_out.h"
#include "ui/views.h"
#include "util/xalloc.h"

void text_out_puts(struct text_out *o, const char *s)
{
        size_t n = strlen(s);
        while (!o->rc && n) {
                ssize_t w = write(o->fd, s, n);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0) {
                        o->rc = w < 0 ? -errno : -EIO;
                        break;
                }
                s += w;
                n -= (size_t)w;
        }
}

void text_out_table(struct text_out *o, struct ui_table *t)
{
        if (!o->rc)
                o->rc = ui_table_print(t, o->fd, 0);
        ui_table_fini(t);
}

static double share(uint64_t part, uint64_t whole)
{
        return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* ---- hot functions, modules, lines ---- */

enum { F_SELF_PCT, F_TOTAL_PCT, F_SELF, F_TOTAL, F_MODULE, F_WHO, F_FUNCTION, F_NR_COLS };

/* The Process (or Thread) column shows when the rows are grouped by it. */
static const struct ui_column function_cols[FUNCTIONS_NR_GROUPS][F_NR_COLS] = {
#define FUNCTION_COLS(who, who_width)                                                              \
        {                                                                                          \
                {"Self%", UI_COL_PCT, 8, 0}, {"Total%", UI_COL_PCT, 8, 0},                         \
                        {"Self", UI_COL_U64, 8, 0}, {"Total", UI_COL_U64, 8, 0},                   \
                        {"Module", UI_COL_TEXT, 25, 0}, {who, UI_COL_TEXT, who_width, 0},          \
                        {"Function", UI_COL_TEXT, 0, 0},                                           \
        }
        [FUNCTIONS_BY_FUNCTION] = FUNCTION_COLS(NULL, 0),
        [FUNCTIONS_BY_PROCESS] = FUNCTION_COLS("Process", 16),
        [FUNCTIONS_BY_THREAD] = FUNCTION_COLS("Thread", 28),
        [FUNCTIONS_BY_MODULE] = FUNCTION_COLS(NULL, 0),
#undef FUNCTION_COLS
};

static const struct ui_text_col function_text[F_NR_COLS] = {
        [F_MODULE] = {1, 0, true}, /* a function under its module (--sort dso): indented */
};

/* A place's module and function, as the functions view names them: the function's name, else
   MODULE+0xREL, 0xADDRESS, or [other]. */
static void place_cells(struct profile *p, struct ui_table *t, uint32_t r, uint32_t module_col,
                        uint32_t function_col, uint32_t module, uint32_t function, uint64_t rel)
{
        const char *m = profile_module_name(p, module);
        ui_table_text_borrow(t, r, module_col, m);
        if (function_col == UINT32_MAX)
                return;
        if (function)
                ui_table_text_borrow(t, r, function_col, profile_name(p, function));
        else if (module || rel)
                ui_table_text_addr(t, r, function_col, module ? m : NULL, rel);
        else
                ui_table_text_borrow(t, r, function_col, "[other]");
}

/* The process or thread of a grouped row (--sort comm,sym, tid,sym), as the functions view's
   Process and Thread columns say it. */
static void who_text(struct profile *p, enum functions_group g, const struct hot_row *w, char *buf,
                     size_t size)
{
        const struct switches *sw = profile_switches(p);
        if (g == FUNCTIONS_BY_PROCESS) {
                const char *name = switches_process_name(sw, w->pid);
                if (*name)
                        snprintf(buf, size, "%s", name);
                else if (w->pid)
                        snprintf(buf, size, "pid %u", w->pid);
                else
                        snprintf(buf, size, "%s", w->module ? "Idle" : "");
                return;
        }
        char pn[SWITCHES_NAME_SIZE], tn[SWITCHES_NAME_SIZE];
        switches_thread_names(sw, w->tid, pn, tn);
        if (!pn[0]) /* a thread no event named: its process's name */
                snprintf(pn, sizeof(pn), "%s", switches_process_name(sw, w->pid));
        snprintf(buf, size, "%s%s%s (%u)", pn[0] ? pn : "?", tn[0] ? "/" : "", tn, w->tid);
}

static void add_function(struct profile *p, struct ui_table *t, enum functions_group g,
                         const struct hot_row *w, uint64_t nr, uint8_t depth)
{
        uint32_t r = ui_table_add(t, 0, depth, 0);
        ui_table_pct(t, r, F_SELF_PCT, share(w->self, nr));
        ui_table_pct(t, r, F_TOTAL_PCT, share(w->total, nr));
        ui_table_u64(t, r, F_SELF, w->self);
        ui_table_u64(t, r, F_TOTAL, w->total);
        place_cells(p, t, r, F_MODULE, F_FUNCTION, w->module, w->function, w->rel);
        if (g == FUNCTIONS_BY_PROCESS || g == FUNCTIONS_BY_THREAD) {
                char who[160];
                who_text(p, g, w, who, sizeof(who));
                ui_table_text(t, r, F_WHO, who);
        }
}

/* --sort dso: each module's row, its functions under it. */
static void add_by_module(struct profile *p, struct ui_table *t, uint16_t source, uint64_t nr,
                          uint32_t top)
{
        struct hot *hot = profile_hot(p);
        const struct hot_row *rows;
        uint32_t n = hot_functions_by(hot, source, HOT_BY_FUNCTION, false, &rows);
        const struct hot_module_row *mrows;
        uint32_t m = hot_modules(hot, source, &mrows);
        char text[64];
        for (uint32_t i = 0; i < m && i < top; i++) {
                uint32_t nr_fns = 0;
                for (uint32_t k = 0; k < n; k++)
                        nr_fns += rows[k].module == mrows[i].module;
                uint32_t r = ui_table_add(t, 0, 0, 0);
                ui_table_pct(t, r, F_SELF_PCT, share(mrows[i].self, nr));
                ui_table_pct(t, r, F_TOTAL_PCT, share(mrows[i].self, nr));
                ui_table_u64(t, r, F_SELF, mrows[i].self);
                ui_table_u64(t, r, F_TOTAL, mrows[i].self);
                place_cells(p, t, r, F_MODULE, UINT32_MAX, mrows[i].module, 0, 0);
                snprintf(text, sizeof(text), "[%u function%s]", nr_fns, nr_fns == 1 ? "" : "s");
                ui_table_text(t, r, F_FUNCTION, text);
                for (uint32_t k = 0, shown = 0; k < n && shown < top; k++) {
                        if (rows[k].module != mrows[i].module)
                                continue;
                        add_function(p, t, FUNCTIONS_BY_MODULE, &rows[k], nr, 1);
                        shown++;
                }
        }
}

enum { M_SELF_PCT, M_SELF, M_MODULE, M_SYMBOLS, M_NR_COLS };

static const struct ui_column module_cols[M_NR_COLS] = {
        {"Self%", UI_COL_PCT, 8, 0},
        {"Self", UI_COL_U64, 8, 0},
        {"Module", UI_COL_TEXT, 25, 0},
        {"Symbols", UI_COL_TEXT, 0, 0},
};

static const struct ui_text_col module_cols_text[M_NR_COLS] = {
        {0, 0, false},
        {0, 0, false},
        {1, 0, false},
        {0, 0, false},
};

enum { L_SELF_PCT, L_SELF, L_MODULE, L_LINE, L_FUNCTION, L_NR_COLS };

static const struct ui_column line_cols[L_NR_COLS] = {
        {"Self%", UI_COL_PCT, 8, 0},     {"Self", UI_COL_U64, 8, 0},
        {"Module", UI_COL_TEXT, 25, 0},  {"Line", UI_COL_TEXT, 0, 0},
        {"Function", UI_COL_TEXT, 0, 0},
};

static const struct ui_text_col line_cols_text[L_NR_COLS] = {
        {0, 0, false}, {0, 0, false}, {1, 0, false}, {0, 0, false}, {1, 0, false},
};

/* One sample source: its hot functions, modules and source lines. */
static void print_source(struct text_out *o, struct profile *p, uint16_t source,
                         enum functions_group g)
{
        struct hot *hot = profile_hot(p);
        uint64_t nr = hot_nr_samples(hot, source);
        char name_buf[32], line[256];
        const char *name = profile_source_name(p, source, name_buf, sizeof(name_buf));
        static const char *const by[] = {
                [FUNCTIONS_BY_FUNCTION] = "",
                [FUNCTIONS_BY_PROCESS] = ", a row per process and function",
                [FUNCTIONS_BY_THREAD] = ", a row per thread and function",
                [FUNCTIONS_BY_MODULE] = ", the modules, their functions under them",
        };
        snprintf(line, sizeof(line), "\nHot functions (%s, %" PRIu64 " samples, by self%s)\n", name,
                 nr, by[g]);
        text_out_puts(o, line);
        struct ui_table t;
        ui_table_init(&t, function_cols[g], F_NR_COLS);
        t.text_cols = function_text;
        if (g == FUNCTIONS_BY_MODULE) {
                add_by_module(p, &t, source, nr, o->top);
        } else {
                /* the grouping is the report's, not the model's (hot_functions_by): the views
                   only read the model */
                const struct hot_row *rows;
                uint32_t n = hot_functions_by(hot, source,
                                              g == FUNCTIONS_BY_PROCESS  ? HOT_BY_PROCESS
                                              : g == FUNCTIONS_BY_THREAD ? HOT_BY_THREAD
                                                                         : HOT_BY_FUNCTION,
                                              false, &rows);
                for (uint32_t i = 0; i < n && i < o->top; i++)
                        add_function(p, &t, g, &rows[i], nr, 0);
        }
        text_out_table(o, &t);

        const struct hot_module_row *mrows;
        uint32_t m = hot_modules(hot, source, &mrows);
        snprintf(line, sizeof(line), "\nHot modules (%s)\n", name);
        text_out_puts(o, line);
        ui_table_init(&t, module_cols, M_NR_COLS);
        t.text_cols = module_cols_text;
        char detail[512];
        for (uint32_t i = 0; i < m && i < o->top; i++) {
                uint32_t r = ui_table_add(&t, 0, 0, 0);
                ui_table_pct(&t, r, M_SELF_PCT, share(mrows[i].self, nr));
                ui_table_u64(&t, r, M_SELF, mrows[i].self);
                place_cells(p, &t, r, M_MODULE, UINT32_MAX, mrows[i].module, 0, 0);
                /* where names came from, or what would give them (a Windows image's PDB name
                   and signature, an ELF file's build-id) */
                profile_module_symbols_text(p, mrows[i].module, detail, sizeof(detail));
                ui_table_text(&t, r, M_SYMBOLS, detail);
        }
        text_out_table(o, &t);

        /* the source lines, where debug information or a PDB gives them */
        const struct hot_line_row *lrows;
        uint32_t nl = hot_top_lines(hot, source, o->top, &lrows);
        if (!nl)
                return;
        snprintf(line, sizeof(line), "\nHot lines (%s)\n", name);
        text_out_puts(o, line);
        ui_table_init(&t, line_cols, L_NR_COLS);
        t.text_cols = line_cols_text;
        char where[1024];
        for (uint32_t i = 0; i < nl; i++) {
                uint32_t r = ui_table_add(&t, 0, 0, 0);
                ui_table_pct(&t, r, L_SELF_PCT, share(lrows[i].self, nr));
                ui_table_u64(&t, r, L_SELF, lrows[i].self);
                place_cells(p, &t, r, L_MODULE, UINT32_MAX, lrows[i].module, 0, 0);
                snprintf(where, sizeof(where), "%s:%u", profile_name(p, lrows[i].file),
                         (unsigned)lrows[i].line);
                ui_table_text(&t, r, L_LINE, where);
                ui_table_text_borrow(&t, r, L_FUNCTION,
                                     lrows[i].function ? profile_name(p, lrows[i].function) : "?");
        }
        text_out_table(o, &t);
}

/* ---- IPC ---- */

enum { I_IPC, I_CYCLES, I_INSTR, I_MODULE, I_FUNCTION, I_NR_COLS };

static const struct ui_column ipc_cols[2][I_NR_COLS] = {
        {
                /* per function */
                {"IPC", UI_COL_RATIO, 8, 0}, /* blank: no estimate, as the screen's */
                {"Cycles", UI_COL_U64, 8, 0},
                {"Instr", UI_COL_U64, 8, 0},
                {"Module", UI_COL_TEXT, 25, 0},
                {"Function", UI_COL_TEXT, 0, 0},
        },
        {
                /* per module */
                {"IPC", UI_COL_RATIO, 8, 0}, /* blank: no estimate, as the screen's */
                {"Cycles", UI_COL_U64, 8, 0},
                {"Instr", UI_COL_U64, 8, 0},
                {"Module", UI_COL_TEXT, 0, 0},
                {NULL, UI_COL_TEXT, 0, 0},
        },
};

static const struct ui_text_col ipc_cols_text[2][I_NR_COLS] = {
        {
                /* per function */
                {1, 2, false},
                {0, 0, false},
                {0, 0, false},
                {1, 0, false},
                {0, 0, false},
        },
        {
                /* per module */
                {1, 2, false},
                {0, 0, false},
                {0, 0, false},
                {1, 0, false},
                {0, 0, false},
        },
};

static void print_ipc_rows(struct text_out *o, struct profile *p, uint64_t ci, uint64_t ii,
                           bool is_by_module)
{
        struct hot_ipc_row *rows;
        struct hot *hot = profile_hot(p);
        uint32_t n = is_by_module ? hot_ipc_module_rows(hot, ci, ii, o->top, &rows)
                                  : hot_ipc_rows(hot, ci, ii, o->top, &rows);
        char line[256];
        snprintf(line, sizeof(line),
                 "\nIPC per %s (InstructionRetired samples x %" PRIu64
                 " / TotalCycles samples x %" PRIu64 ")\n",
                 is_by_module ? "module" : "function", ii, ci);
        text_out_puts(o, line);
        if (!n) {
                text_out_puts(o, "   (the trace gives no interval for one of them)\n");
                free(rows);
                return;
        }
        struct ui_table t;
        ui_table_init(&t, ipc_cols[is_by_module], I_NR_COLS);
        t.text_cols = ipc_cols_text[is_by_module];
        for (uint32_t i = 0; i < n; i++) {
                const struct hot_ipc_row *w = &rows[i];
                uint32_t r = ui_table_add(&t, 0, 0, 0);
                ui_table_pct(&t, r, I_IPC, w->ipc);
                ui_table_u64(&t, r, I_CYCLES, w->nr_cycles);
                ui_table_u64(&t, r, I_INSTR, w->nr_instructions);
                place_cells(p, &t, r, I_MODULE, is_by_module ? UINT32_MAX : I_FUNCTION, w->module,
                            w->function, w->rel);
        }
        free(rows);
        text_out_table(o, &t);
}

/* Where both cycles and instructions are sampled: IPC per module and per function, the functions
   with the most cycle samples first, each sample weighed by its source's interval (events per
   sample). */
static void print_ipc(struct text_out *o, struct profile *p)
{
        uint64_t ci = profile_source_interval(p, HOT_IPC_CYCLES);
        uint64_t ii = profile_source_interval(p, HOT_IPC_INSTRUCTIONS);
        if (!hot_nr_samples(profile_hot(p), HOT_IPC_CYCLES) ||
            !hot_nr_samples(profile_hot(p), HOT_IPC_INSTRUCTIONS))
                return;
        print_ipc_rows(o, p, ci, ii, true);
        print_ipc_rows(o, p, ci, ii, false);
}

/* ---- branch edges ---- */

enum { B_SHARE, B_COUNT, B_MISPRED, B_CYCLES, B_EDGE, B_NR_COLS };

/* Mispred and AvgCyc: what the CPU recorded of the branches ("-" where it did not) */
static const struct ui_column branch_cols[B_NR_COLS] = {
        {"Share", UI_COL_PCT, 8, 0},       {"Count", UI_COL_U64, 8, 0},
        {"Mispred", UI_COL_PCT, 8, 0},     {"AvgCyc", UI_COL_REAL, 7, 0},
        {"From -> To", UI_COL_TEXT, 0, 0},
};

static const struct ui_text_col branch_cols_text[B_NR_COLS] = {
        {0, 0, false}, {0, 0, false}, {0, 0, false}, {0, 1, false}, {1, 0, false},
};

/* A function pair's end: module!function, or the place where no function names it. */
static void function_end(struct profile *p, const struct branches_end *e, char *buf, size_t size)
{
        if (e->function)
                snprintf(buf, size, "%s!%s", profile_module_name(p, e->loc.module),
                         profile_name(p, e->function));
        else
                profile_loc_text(p, e->loc, buf, size);
}

/* The hot branch edges of the LBR events, exact edges or function pairs, most taken first,
   with the mispredicted share and average cycles where the CPU recorded them. */
static void print_branches(struct text_out *o, struct profile *p, enum branches_group group)
{
        const struct branches_row *rows;
        uint32_t n = branches_rows(profile_branches(p), group, AGG_ALL, &rows);
        if (!n)
                return;
        uint64_t total = 0;
        for (uint32_t i = 0; i < n; i++)
                total += rows[i].count;
        char line[256], from[512], to[512], edge[1100];
        snprintf(line, sizeof(line), "\nHot branch edges%s (LBR, %" PRIu64 " branches)\n",
                 group == BRANCHES_BY_FUNCTION ? " by function" : "", total);
        text_out_puts(o, line);
        struct ui_table t;
        ui_table_init(&t, branch_cols, B_NR_COLS);
        t.text_cols = branch_cols_text;
        for (uint32_t i = 0; i < n && i < o->top; i++) {
                const struct branches_row *w = &rows[i];
                uint32_t r = ui_table_add(&t, 0, 0, 0);
                ui_table_pct(&t, r, B_SHARE, share(w->count, total));
                ui_table_u64(&t, r, B_COUNT, w->count);
                double v;
                ui_table_pct(&t, r, B_MISPRED, branches_mispredict_pct(w, &v) ? v : NAN);
                ui_table_pct(&t, r, B_CYCLES, branches_avg_cycles(w, &v) ? v : NAN);
                if (w->is_other) {
                        ui_table_text(&t, r, B_EDGE, "[other edges]");
                        continue;
                }
                if (group == BRANCHES_BY_FUNCTION) {
                        function_end(p, &w->from, from, sizeof(from));
                        function_end(p, &w->to, to, sizeof(to));
                } else {
                        profile_loc_text(p, w->from.loc, from, sizeof(from));
                        profile_loc_text(p, w->to.loc, to, sizeof(to));
                }
                snprintf(edge, sizeof(edge), "%s -> %s", from, to);
                ui_table_text(&t, r, B_EDGE, edge);
        }
        text_out_table(o, &t);
}

/* ---- events ---- */

enum { E_EVENTS, E_SHARE, E_TYPE, E_NR_COLS };

static const struct ui_column event_cols[E_NR_COLS] = {
        {"Events", UI_COL_U64, 10, 0},
        {"Share", UI_COL_PCT, 7, 0},
        {"Event type", UI_COL_TEXT, 0, 0},
};

static const struct ui_text_col event_cols_text[E_NR_COLS] = {
        {1, 0, false},
        {0, 0, false},
        {1, 0, false},
};

static int cmp_count(const void *a, const void *b)
{
        const struct events_type *x = *(const struct events_type *const *)a;
        const struct events_type *y = *(const struct events_type *const *)b;
        if (x->nr_events != y->nr_events)
                return x->nr_events > y->nr_events ? -1 : 1;
        int c = strcmp(x->name, y->name);
        return c ? c : (x->id < y->id ? -1 : 1);
}

/* Every event type with its count, most frequent first, "name (vN)"; then the total and what
   the caps left without a row. */
static void print_events(struct text_out *o, struct profile *p)
{
        const struct events_table *et = profile_events(p);
        uint32_t n = events_table_nr_types(et);
        uint64_t total = events_table_total(et);
        const struct events_type **rows = xmalloc((n ? n : 1) * sizeof(*rows));
        uint32_t nr = 0;
        for (uint32_t i = 0; i < n; i++)
                if (events_table_type(et, i)->nr_events)
                        rows[nr++] = events_table_type(et, i);
        qsort(rows, nr, sizeof(*rows), cmp_count);
        text_out_puts(o, "\nEvents by type\n");
        struct ui_table t;
        ui_table_init(&t, event_cols, E_NR_COLS);
        t.text_cols = event_cols_text;
        char name[sizeof(rows[0]->name) + 16];
        for (uint32_t i = 0; i < nr; i++) {
                uint32_t r = ui_table_add(&t, 0, 0, 0);
                ui_table_u64(&t, r, E_EVENTS, rows[i]->nr_events);
                ui_table_pct(&t, r, E_SHARE, share(rows[i]->nr_events, total));
                snprintf(name, sizeof(name), "%s (v%u)", rows[i]->name, rows[i]->version);
                ui_table_text(&t, r, E_TYPE, name);
        }
        free(rows);
        text_out_table(o, &t);
        /* the sums, under the counts */
        char line[128];
        snprintf(line, sizeof(line), " %10" PRIu64 "          events in all\n", total);
        text_out_puts(o, line);
        if (events_table_nr_no_room(et)) {
                snprintf(line, sizeof(line),
                         " %10" PRIu64 "          of them past the table's caps (no row)\n",
                         events_table_nr_no_room(et));
                text_out_puts(o, line);
        }
}

int ui_text_report_print(struct profile *p, const struct ui_text_report_options *opts, int fd)
{
        struct text_out o = {.fd = fd, .top = opts->nr_top ? opts->nr_top : 40};
        enum functions_group g = opts->group >= 0 && opts->group < FUNCTIONS_NR_GROUPS
                                         ? (enum functions_group)opts->group
                                         : FUNCTIONS_BY_FUNCTION;
        uint16_t sources[16];
        uint32_t nr_sources = hot_sources(profile_hot(p), sources, 16);
        if (!nr_sources)
                text_out_puts(&o, "\nNo samples in this trace (PROFILE or PMC_PROFILE was off).\n");
        for (uint32_t i = 0; i < nr_sources; i++)
                if (opts->only_source == -1 || opts->only_source == (int32_t)sources[i])
                        print_source(&o, p, sources[i], g);
        print_ipc(&o, p);
        print_branches(&o, p, BRANCHES_BY_EDGE);
        print_branches(&o, p, BRANCHES_BY_FUNCTION);
        text_switches_print(&o, p);
        print_events(&o, p);
        return o.rc;
}
