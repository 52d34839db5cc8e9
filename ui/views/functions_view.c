/* SPDX-License-Identifier: MIT */
/* functions_view.c: owns the hot-functions view: its columns, its rows (each function with its
   callers under it, or the call tree top-down), which of them are open, and its keys; and the
   text report's hot functions, modules, lines and IPC tables (view_report.h). */
#include "ui/views.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "functions_ipc.h"
#include "model/hot_ipc.h"
#include "model/profile.h"
#include "util/xalloc.h"
#include "view_report.h"

struct functions_view {
        struct ui_view view;
        bool is_top_down;           /* the call tree from its roots, not callers under functions */
        enum functions_group group; /* p: by function, by process, by module */
        /* by process, a report's rows per perf comm (hot_set_comm_key: per thread name, the
           rows per thread of its ids): the hot functions that name them; else NULL */
        const struct hot *comm_hot;
        struct ui_key_set expanded;   /* the open rows */
        struct functions_ipc ipc;     /* where cycles and instructions are both sampled */
        struct ui_column cols_now[8]; /* the grouping's columns, IPC titled when it has one */
        struct view_report report;    /* the text report's table, when it asks for one */
        char function_title[64];      /* Function, and since when the callers count */
        /* the rows the screen shows (functions_view_show); shown_nr 0: every row */
        uint32_t shown_top, shown_nr;
        uint64_t cursor_key;
        /* the rows whose callers the last build looked up (whether the row opens): every row,
           or those before looked_to, in [looked_lo, looked_hi) and the open ones */
        bool has_looked_all;
        uint32_t looked_to, looked_lo, looked_hi;
        uint32_t *skipped; /* owned: a build's rows not looked up, pairs (table row, hot row) */
        uint32_t nr_skipped, cap_skipped;
};

enum {
        COL_SELF_PCT,
        COL_TOTAL_PCT,
        COL_SELF,
        COL_TOTAL,
        COL_IPC, /* titled where the trace samples cycles and instructions (functions_ipc.h) */
        COL_MODULE,
        COL_PROCESS,
        COL_FUNCTION,
        NR_COLS
};
_Static_assert(sizeof(((struct functions_view *)0)->cols_now) == NR_COLS * sizeof(struct ui_column),
               "cols_now holds a grouping's columns");

static const struct ui_column cols[NR_COLS] = {
        /* narrow terminals drop the counts first (the shares say the same), Total first */
        {"Self%", UI_COL_PCT, 7, 0}, {"Total%", UI_COL_PCT, 7, 0},
        {"Self", UI_COL_U64, 8, 2},  {"Total", UI_COL_U64, 8, 1},
        {NULL, UI_COL_RATIO, 6, 4},  {"Module", UI_COL_TEXT, 22, 0},
        {NULL, UI_COL_TEXT, 16, 3},  {"Function", UI_COL_TEXT, 0, 0},
};

/* By thread (p, --sort tid,sym): the thread instead. */
static const struct ui_column cols_by_thread[NR_COLS] = {
        {"Self%", UI_COL_PCT, 7, 0},    {"Total%", UI_COL_PCT, 7, 0},
        {"Self", UI_COL_U64, 8, 2},     {"Total", UI_COL_U64, 8, 1},
        {NULL, UI_COL_RATIO, 6, 4},     {"Module", UI_COL_TEXT, 22, 0},
        {"Thread", UI_COL_TEXT, 28, 3}, {"Function", UI_COL_TEXT, 0, 0},
};

/* By process (p, --sort comm,sym): the Process column shows, as perf top's Command column. */
static const struct ui_column cols_by_process[NR_COLS] = {
        {"Self%", UI_COL_PCT, 7, 0},     {"Total%", UI_COL_PCT, 7, 0},
        {"Self", UI_COL_U64, 8, 2},      {"Total", UI_COL_U64, 8, 1},
        {NULL, UI_COL_RATIO, 6, 4},      {"Module", UI_COL_TEXT, 22, 0},
        {"Process", UI_COL_TEXT, 16, 3}, {"Function", UI_COL_TEXT, 0, 0},
};

/* The text report's columns, in the same places: wider counts, no IPC (its own tables), the
   grouping's Process or Thread; a function under its module (by module) indented. */
static const struct ui_column report_cols[FUNCTIONS_NR_GROUPS][NR_COLS] = {
#define REPORT_COLS(who, who_width)                                                                \
        {                                                                                          \
                {"Self%", UI_COL_PCT, 8, 0}, {"Total%", UI_COL_PCT, 8, 0},                         \
                        {"Self", UI_COL_U64, 8, 0}, {"Total", UI_COL_U64, 8, 0},                   \
                        {NULL, UI_COL_RATIO, 0, 0}, {"Module", UI_COL_TEXT, 25, 0},                \
                        {who, UI_COL_TEXT, who_width, 0}, {"Function", UI_COL_TEXT, 0, 0},         \
        }
        [FUNCTIONS_BY_FUNCTION] = REPORT_COLS(NULL, 0),
        [FUNCTIONS_BY_PROCESS] = REPORT_COLS("Process", 16),
        [FUNCTIONS_BY_THREAD] = REPORT_COLS("Thread", 28),
        [FUNCTIONS_BY_MODULE] = REPORT_COLS(NULL, 0),
#undef REPORT_COLS
};

static const struct ui_text_col report_text[NR_COLS] = {
        [COL_MODULE] = {1, 0, true},
};

/* The report's modules: each module's samples and where its names came from (Symbols). */
static const struct ui_column report_module_cols[NR_COLS] = {
        {"Self%", UI_COL_PCT, 8, 0}, {NULL, UI_COL_PCT, 0, 0},       {"Self", UI_COL_U64, 8, 0},
        {NULL, UI_COL_U64, 0, 0},    {NULL, UI_COL_RATIO, 0, 0},     {"Module", UI_COL_TEXT, 25, 0},
        {NULL, UI_COL_TEXT, 0, 0},   {"Symbols", UI_COL_TEXT, 0, 0},
};

static const struct ui_text_col report_module_text[NR_COLS] = {
        [COL_MODULE] = {1, 0, false},
};

/* The report's source lines: the Process column's place holds the file:line. */
static const struct ui_column report_line_cols[NR_COLS] = {
        {"Self%", UI_COL_PCT, 8, 0}, {NULL, UI_COL_PCT, 0, 0},
        {"Self", UI_COL_U64, 8, 0},  {NULL, UI_COL_U64, 0, 0},
        {NULL, UI_COL_RATIO, 0, 0},  {"Module", UI_COL_TEXT, 25, 0},
        {"Line", UI_COL_TEXT, 0, 0}, {"Function", UI_COL_TEXT, 0, 0},
};

static const struct ui_text_col report_line_text[NR_COLS] = {
        [COL_MODULE] = {1, 0, false},
        [COL_FUNCTION] = {1, 0, false},
};

/* The report's IPC tables print IPC first: from the IPC column, the cycles from Self, the
   instructions from Total, then the module and (per function) the function. */
static const uint8_t report_ipc_from[] = {COL_IPC, COL_SELF, COL_TOTAL, COL_MODULE, COL_FUNCTION};

static const struct ui_column report_ipc_cols[2][5] = {
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

static const struct ui_text_col report_ipc_text[5] = {
        {1, 2, false}, {0, 0, false}, {0, 0, false}, {1, 0, false}, {0, 0, false},
};

/* Row keys: a function's never 0 and never a tree node's (bit 63) */
#define TREE_KEY(is_top_down, node) ((1ull << 63) | ((uint64_t)(is_top_down) << 62) | (node))

static struct functions_view *of(struct ui_view *v)
{
        return ui_view_of(v, struct functions_view);
}

/* The module names the rows borrow, found once per module per build: the model's interned
   copies, which live as long as the profile (the screen draws without the model's lock). */
struct module_names {
        struct profile *profile;
        uint32_t module[64];  /* by module id % 64 */
        const char *name[64]; /* borrowed from the profile; NULL: not looked up */
};

static void frame_text(struct module_names *names, struct ui_table *t, uint32_t r, uint32_t module,
                       uint32_t function, uint64_t rel)
{
        uint32_t slot = module % 64;
        if (names->module[slot] != module || !names->name[slot]) {
                names->module[slot] = module;
                names->name[slot] = profile_module_name(names->profile, module);
        }
        ui_table_text_borrow(t, r, COL_MODULE, names->name[slot]);
        if (function)
                ui_table_text_borrow(t, r, COL_FUNCTION, profile_name(names->profile, function));
        else if (module && rel == HOT_REL_UNNAMED_REST) /* the module's lighter unnamed addresses */
                ui_table_text_borrow(t, r, COL_FUNCTION, "[other]");
        else if (module || rel) /* "mod+0x1a2b", "0x1a2b" */
                ui_table_text_addr(t, r, COL_FUNCTION, module ? names->name[slot] : NULL, rel);
        else
                ui_table_text_borrow(t, r, COL_FUNCTION, "[other]");
}

static void counts(struct ui_table *t, uint32_t r, uint64_t self, uint64_t total, uint64_t nr)
{
        ui_table_pct(t, r, COL_SELF_PCT, nr ? 100.0 * (double)self / (double)nr : 0);
        ui_table_pct(t, r, COL_TOTAL_PCT, nr ? 100.0 * (double)total / (double)nr : 0);
        ui_table_u64(t, r, COL_SELF, self);
        ui_table_u64(t, r, COL_TOTAL, total);
}

/* The children of node in the current tree under row depth, recursively where open. */
static void add_subtree(struct functions_view *fv, struct calltree *tree,
                        struct module_names *names, struct ui_table *t, uint32_t node,
                        uint8_t depth, uint64_t nr)
{
        if (depth > 60)
                return;
        const struct calltree_row *rows;
        uint32_t n = calltree_children(tree, !fv->is_top_down, node, &rows);
        /* the rows array is reused by the next call: copy what the recursion needs */
        struct calltree_row *copy = xmalloc((n ? n : 1) * sizeof(*copy));
        if (n) /* an empty tree answers no array */
                memcpy(copy, rows, n * sizeof(*copy));
        for (uint32_t i = 0; i < n; i++) {
                const struct calltree_row *w = &copy[i];
                uint64_t key = TREE_KEY(fv->is_top_down, w->node);
                bool is_open = w->has_children && ui_key_set_has(&fv->expanded, key);
                uint32_t r = ui_table_add(t, key, depth,
                                          (w->has_children ? UI_ROW_EXPANDABLE : 0) |
                                                  (is_open ? UI_ROW_EXPANDED : 0));
                counts(t, r, w->self, w->count, nr);
                frame_text(names, t, r, w->module, w->function, w->rel);
                if (is_open)
                        add_subtree(fv, tree, names, t, w->node, (uint8_t)(depth + 1), nr);
        }
        free(copy);
}

#define KEY_MODULE (1ull << 60) /* a module's row (by module): never a function's or a node's */

/* By module: each module's row (its samples), its functions under it when open (the report's:
   every module open, top of each level). */
static void add_modules(struct functions_view *fv, struct profile *p, struct module_names *names,
                        struct ui_table *t, uint16_t source, const struct hot_row *rows, uint32_t n,
                        uint64_t nr)
{
        bool is_report = fv->report.table != 0;
        uint32_t top = is_report ? fv->report.top : UINT32_MAX;
        const struct hot_module_row *mrows;
        uint32_t m = hot_modules(profile_hot(p), source, &mrows);
        struct hot_module_row *mods = xmalloc((m ? m : 1) * sizeof(*mods));
        memcpy(mods, mrows, m * sizeof(*mods));
        char text[64];
        for (uint32_t i = 0; i < m && i < top; i++) {
                uint64_t key = KEY_MODULE | mods[i].module;
                uint32_t nr_fns = 0;
                for (uint32_t k = 0; k < n; k++)
                        nr_fns += rows[k].module == mods[i].module;
                bool is_open = nr_fns && (is_report || ui_key_set_has(&fv->expanded, key));
                uint32_t r = ui_table_add(t, key, 0,
                                          (nr_fns ? UI_ROW_EXPANDABLE : 0) |
                                                  (is_open ? UI_ROW_EXPANDED : 0));
                counts(t, r, mods[i].self, mods[i].self, nr);
                ui_table_pct(t, r, COL_IPC, functions_ipc_of(&fv->ipc, mods[i].module, 0, 0));
                frame_text(names, t, r, mods[i].module, 0, 0);
                snprintf(text, sizeof(text), "[%u function%s]", nr_fns, nr_fns == 1 ? "" : "s");
                ui_table_text(t, r, COL_FUNCTION, text);
                if (!is_open)
                        continue;
                for (uint32_t k = 0, shown = 0; k < n && shown < top; k++) {
                        const struct hot_row *w = &rows[k];
                        if (w->module != mods[i].module)
                                continue;
                        uint64_t fkey = (((uint64_t)w->module << 40 ^
                                          (w->function ? w->function : w->rel)) &
                                         ~(7ull << 61)) |
                                        (1ull << 61);
                        uint32_t fr = ui_table_add(t, fkey, 1, 0);
                        counts(t, fr, w->self, w->total, nr);
                        frame_text(names, t, fr, w->module, w->function, w->rel);
                        shown++;
                }
        }
        free(mods);
}

/* The report's modules table: each module's samples and where its names came from, or what
   would give them (a Windows image's PDB name and signature, an ELF file's build-id). */
static void add_module_symbols(struct functions_view *fv, struct profile *p,
                               struct module_names *names, struct ui_table *t, uint16_t source,
                               uint64_t nr)
{
        const struct hot_module_row *mrows;
        uint32_t m = hot_modules(profile_hot(p), source, &mrows);
        char detail[512];
        for (uint32_t i = 0; i < m && i < fv->report.top; i++) {
                uint32_t r = ui_table_add(t, KEY_MODULE | mrows[i].module, 0, 0);
                counts(t, r, mrows[i].self, mrows[i].self, nr);
                frame_text(names, t, r, mrows[i].module, 0, 0);
                profile_module_symbols_text(p, mrows[i].module, detail, sizeof(detail));
                ui_table_text(t, r, COL_FUNCTION, detail);
        }
}

/* The report's hot source lines, where debug information or a PDB gives them: file:line in the
   Process column's place. */
static void add_lines(struct functions_view *fv, struct profile *p, struct module_names *names,
                      struct ui_table *t, uint16_t source, uint64_t nr)
{
        const struct hot_line_row *lrows;
        uint32_t n = hot_top_lines(profile_hot(p), source, fv->report.top, &lrows);
        char where[1024];
        for (uint32_t i = 0; i < n; i++) {
                uint32_t r = ui_table_add(t, i + 1, 0, 0);
                counts(t, r, lrows[i].self, lrows[i].self, nr);
                frame_text(names, t, r, lrows[i].module, 0, 0);
                snprintf(where, sizeof(where), "%s:%u", profile_name(p, lrows[i].file),
                         (unsigned)lrows[i].line);
                ui_table_text(t, r, COL_PROCESS, where);
                ui_table_text_borrow(t, r, COL_FUNCTION,
                                     lrows[i].function ? profile_name(p, lrows[i].function) : "?");
        }
}

/* The report's IPC per module or per function, the most cycle samples first, each sample
   weighed by its source's interval (events per sample): the cycles in Self, the instructions
   in Total; false: the trace does not sample both. */
static bool add_ipc(struct functions_view *fv, struct profile *p, struct module_names *names,
                    struct ui_table *t, bool is_by_module)
{
        struct hot *hot = profile_hot(p);
        if (!hot_nr_samples(hot, HOT_IPC_CYCLES) || !hot_nr_samples(hot, HOT_IPC_INSTRUCTIONS))
                return false;
        uint64_t ci = profile_source_interval(p, HOT_IPC_CYCLES);
        uint64_t ii = profile_source_interval(p, HOT_IPC_INSTRUCTIONS);
        struct hot_ipc_row *rows;
        uint32_t top = fv->report.top;
        uint32_t n = is_by_module ? hot_ipc_module_rows(hot, ci, ii, top, &rows)
                                  : hot_ipc_rows(hot, ci, ii, top, &rows);
        struct view_report *rp = &fv->report;
        snprintf(rp->title, sizeof(rp->title),
                 "IPC per %s (InstructionRetired samples x %" PRIu64
                 " / TotalCycles samples x %" PRIu64 ")",
                 is_by_module ? "module" : "function", ii, ci);
        rp->has_table = n > 0;
        if (!n)
                snprintf(rp->after, sizeof(rp->after),
                         "   (the trace gives no interval for one of them)\n");
        for (uint32_t i = 0; i < n; i++) {
                const struct hot_ipc_row *w = &rows[i];
                uint32_t r = ui_table_add(t, i + 1, 0, 0);
                ui_table_pct(t, r, COL_IPC, w->ipc);
                ui_table_u64(t, r, COL_SELF, w->nr_cycles);
                ui_table_u64(t, r, COL_TOTAL, w->nr_instructions);
                frame_text(names, t, r, w->module, w->function, w->rel);
        }
        free(rows);
        rp->print_from = report_ipc_from;
        rp->print_cols = report_ipc_cols[is_by_module];
        rp->print_text = report_ipc_text;
        rp->nr_print = 5;
        return true;
}

/* One of the report's tables other than the hot functions, and its title. */
static void build_report(struct functions_view *fv, const struct ui_build_ctx *m,
                         struct module_names *names, struct ui_table *t)
{
        struct profile *p = m->profile;
        struct view_report *rp = &fv->report;
        uint64_t nr = hot_nr_samples(profile_hot(p), m->source);
        char name_buf[32];
        const char *name = profile_source_name(p, m->source, name_buf, sizeof(name_buf));
        rp->has_section = rp->has_table = true;
        switch (rp->table) {
        case FUNCTIONS_REPORT_MODULES:
                t->cols = report_module_cols;
                t->text_cols = report_module_text;
                snprintf(rp->title, sizeof(rp->title), "Hot modules (%s)", name);
                add_module_symbols(fv, p, names, t, m->source, nr);
                break;
        case FUNCTIONS_REPORT_LINES:
                t->cols = report_line_cols;
                t->text_cols = report_line_text;
                snprintf(rp->title, sizeof(rp->title), "Hot lines (%s)", name);
                add_lines(fv, p, names, t, m->source, nr);
                rp->has_section = t->nr_rows > 0;
                break;
        case FUNCTIONS_REPORT_IPC_MODULES:
        case FUNCTIONS_REPORT_IPC_FUNCTIONS:
                t->cols = cols;
                rp->has_section =
                        add_ipc(fv, p, names, t, rp->table == FUNCTIONS_REPORT_IPC_MODULES);
                break;
        default: rp->has_section = false; break;
        }
}

/* The callers-tree node of a hot row (0: none). */
static uint32_t row_node(struct calltree *tree, enum calltree_owner owner, const struct hot_row *w)
{
        if (!tree || !(w->state == SYM_RESOLVED || w->module))
                return 0;
        return calltree_find_function(tree, owner, owner == CALLTREE_PROCESS ? w->pid : w->tid,
                                      w->module, w->function, w->rel);
}

/* A function row's text: its module, function, and process or thread by those groupings. */
static void row_text(const struct functions_view *fv, struct module_names *names,
                     struct switches *sw, struct ui_table *t, uint32_t r, const struct hot_row *w)
{
        frame_text(names, t, r, w->module, w->function, w->rel);
        if (fv->group == FUNCTIONS_BY_PROCESS || fv->group == FUNCTIONS_BY_THREAD) {
                /* the process's name, or "process/thread (tid)": the switches view's names */
                char text[160];
                if (fv->comm_hot)
                        hot_comm_name(fv->comm_hot, w->tid, text, sizeof(text));
                else
                        switches_owner_text(sw, fv->group == FUNCTIONS_BY_THREAD, w->pid, w->tid,
                                            w->module != 0, text, sizeof(text));
                ui_table_text(t, r, COL_PROCESS, text);
        }
}

/* Row r (the hot row i) made without looking up its callers. */
static void skip_row(struct functions_view *fv, uint32_t r, uint32_t i)
{
        if (fv->nr_skipped + 2 > fv->cap_skipped) {
                fv->cap_skipped = fv->cap_skipped ? fv->cap_skipped * 2 : 1024;
                fv->skipped = xrealloc(fv->skipped, fv->cap_skipped * sizeof(*fv->skipped));
        }
        fv->skipped[fv->nr_skipped++] = r;
        fv->skipped[fv->nr_skipped++] = i;
}

/* A looked-at row's numbers: its counts (nr: the samples), and its IPC where has_ipc. */
static void row_numbers(struct functions_view *fv, struct ui_table *t, uint32_t r,
                        const struct hot_row *w, uint64_t nr, bool has_ipc)
{
        counts(t, r, w->self, w->total, nr);
        if (has_ipc)
                ui_table_pct(t, r, COL_IPC,
                             functions_ipc_of(&fv->ipc, w->module, w->function, w->rel));
}

/* The rows made before the cursor's, from looked_lo on, looked up after all (they are not
   open: an open row is always looked up), their numbers and text with them. */
static void look_back(struct functions_view *fv, struct module_names *names, struct switches *sw,
                      struct calltree *tree, enum calltree_owner owner, struct ui_table *t,
                      const struct hot_row *rows, uint64_t nr, bool has_ipc)
{
        for (uint32_t k = fv->nr_skipped; k >= 2 && fv->skipped[k - 2] >= fv->looked_lo; k -= 2) {
                const struct hot_row *w = &rows[fv->skipped[k - 1]];
                row_numbers(fv, t, fv->skipped[k - 2], w, nr, has_ipc);
                row_text(fv, names, sw, t, fv->skipped[k - 2], w);
                uint32_t node = row_node(tree, owner, &rows[fv->skipped[k - 1]]);
                if (node && calltree_has_children(tree, node))
                        t->flags[fv->skipped[k - 2]] |= UI_ROW_EXPANDABLE;
        }
}

static void build(struct ui_view *v, const struct ui_build_ctx *m, struct ui_table *t)
{
        struct functions_view *fv = of(v);
        struct profile *p = m->profile;
        struct module_names names = {.profile = p};
        struct hot *hot = profile_hot(p);
        struct calltree *tree = profile_calltree(p);
        struct switches *sw = profile_switches(p);
        char probe[1];
        fv->comm_hot =
                hot_comm_name(profile_hot(p), 0, probe, sizeof(probe)) ? profile_hot(p) : NULL;
        ui_table_clear(t);
        struct view_report *rp = &fv->report;
        if (!rp->table) /* a report's rows ask for no callers */
                functions_view_ask(v, p);
        if (rp->table && rp->table != FUNCTIONS_REPORT_FUNCTIONS) {
                build_report(fv, m, &names, t);
                return;
        }
        /* the report's hot functions: these rows, in its columns, the top of each level, and
           no callers (no row opens: the model's call tree is not asked) */
        bool is_report = rp->table == FUNCTIONS_REPORT_FUNCTIONS;
        memcpy(fv->cols_now,
               is_report                           ? report_cols[fv->group]
               : fv->group == FUNCTIONS_BY_PROCESS ? cols_by_process
               : fv->group == FUNCTIONS_BY_THREAD  ? cols_by_thread
                                                   : cols,
               sizeof(cols));
        /* IPC per function (per module by module), before the rows: it asks for functions too;
           a row per process or thread has its function's whole IPC, not its own: none there */
        bool has_ipc = !fv->is_top_down && !is_report &&
                       (fv->group == FUNCTIONS_BY_FUNCTION || fv->group == FUNCTIONS_BY_MODULE) &&
                       functions_ipc_build(&fv->ipc, p, fv->group == FUNCTIONS_BY_MODULE);
        if (has_ipc)
                fv->cols_now[COL_IPC].title = "IPC";
        v->cols = t->cols = fv->cols_now;
        if (is_report)
                t->text_cols = report_text;
        if (fv->is_top_down && !is_report) {
                int64_t since_ns;
                if (tree && !calltree_top_down_counts_all(tree, &since_ns)) {
                        /* asked for after samples came: it counts those since, its shares
                           too */
                        snprintf(fv->function_title, sizeof(fv->function_title),
                                 "Function (call tree since %.3f s)", (double)since_ns / 1e9);
                        fv->cols_now[COL_FUNCTION].title = fv->function_title;
                        add_subtree(fv, tree, &names, t, 0, 0, calltree_nr_samples_top_down(tree));
                } else if (tree) {
                        add_subtree(fv, tree, &names, t, 0, 0, calltree_nr_samples(tree));
                }
                return;
        }
        /* the screen's choice (S); the first source seen when it has no samples (the report
           names each source it prints) */
        uint16_t source = m->source;
        if (!is_report && !hot_nr_samples(hot, source))
                hot_sources(hot, &source, 1);
        uint64_t nr = hot_nr_samples(hot, source);
        if (is_report) {
                static const char *const by[] = {
                        [FUNCTIONS_BY_FUNCTION] = "",
                        [FUNCTIONS_BY_PROCESS] = ", a row per process and function",
                        [FUNCTIONS_BY_THREAD] = ", a row per thread and function",
                        [FUNCTIONS_BY_MODULE] = ", the modules, their functions under them",
                };
                char name_buf[32];
                snprintf(rp->title, sizeof(rp->title),
                         "Hot functions (%s, %" PRIu64 " samples, by self%s)",
                         profile_source_name(p, source, name_buf, sizeof(name_buf)), nr,
                         by[fv->group]);
                rp->has_section = rp->has_table = true;
        }
        const struct hot_row *rows;
        bool is_by_process = fv->group == FUNCTIONS_BY_PROCESS;
        bool is_by_thread = fv->group == FUNCTIONS_BY_THREAD;
        /* a report prints its top rows: only those are put in order (the modules' grouping
           reads every row). The screen's rows past those it may show (looked_to, below) are
           made in no order: a screen moved to them builds again (functions_view_covers); a
           cursor that follows its row by key, wherever it went, has every row in order */
        enum hot_grouping by = is_by_process  ? (fv->comm_hot ? HOT_BY_THREAD : HOT_BY_PROCESS)
                               : is_by_thread ? HOT_BY_THREAD
                                              : HOT_BY_FUNCTION;
        uint32_t top = is_report && fv->group != FUNCTIONS_BY_MODULE ? rp->top : 0;
        bool is_partial =
                !is_report && fv->shown_nr && !fv->cursor_key && fv->group != FUNCTIONS_BY_MODULE;
        uint32_t n = is_partial ? hot_top_functions_all_by(hot, source, by, false,
                                                           fv->shown_top + 2 * fv->shown_nr, &rows)
                                : hot_top_functions_by(hot, source, by, false, top, &rows);
        if (fv->group == FUNCTIONS_BY_MODULE) {
                add_modules(fv, p, &names, t, source, rows, n, nr);
                return;
        }
        /* the callers under a row count the row's samples: its process's or thread's; those
           trees asked for after samples came count from then on, and the title says so */
        enum calltree_owner owner = is_by_process  ? CALLTREE_PROCESS
                                    : is_by_thread ? CALLTREE_THREAD
                                                   : CALLTREE_ALL;
        int64_t since_ns;
        if (!is_report && tree && !calltree_counts_all(tree, owner, &since_ns)) {
                snprintf(fv->function_title, sizeof(fv->function_title),
                         "Function (callers since %.3f s)", (double)since_ns / 1e9);
                fv->cols_now[COL_FUNCTION].title = fv->function_title;
        }
        /* the rows the screen may show: those before a page past the one shown, those around
           the cursor's row (it follows its row, wherever the new counts put it), the open ones;
           the others' callers are looked up and their text made when the screen comes to them
           (functions_view_covers): thousands of rows, forty shown. A sort, a search or a
           filter reads every row's text: every row is looked up then (functions_view_show) */
        bool is_all = is_report || !fv->shown_nr;
        fv->has_looked_all = is_all;
        fv->looked_to = fv->shown_top + 2 * fv->shown_nr;
        fv->looked_lo = fv->looked_hi = 0;
        fv->nr_skipped = 0;
        for (uint32_t i = 0; i < n && (!is_report || i < rp->top); i++) {
                const struct hot_row *w = &rows[i];
                /* never 0 (no row), never a tree key (bit 63) */
                uint64_t key = (((uint64_t)w->module << 40 ^ (w->function ? w->function : w->rel) ^
                                 (is_by_process  ? (uint64_t)w->pid << 24
                                  : is_by_thread ? (uint64_t)w->tid << 24
                                                 : 0)) &
                                ~(7ull << 61)) |
                               (1ull << 61);
                uint32_t at = t->nr_rows; /* the row's place */
                if (!is_all && key == fv->cursor_key) {
                        fv->looked_lo = at > fv->shown_nr ? at - fv->shown_nr : 0;
                        fv->looked_hi = at + 2 * fv->shown_nr;
                        look_back(fv, &names, sw, tree, owner, t, rows, nr, has_ipc);
                }
                bool is_looked = is_all || at < fv->looked_to || at < fv->looked_hi ||
                                 ui_key_set_has(&fv->expanded, key);
                uint32_t node = !is_report && is_looked ? row_node(tree, owner, w) : 0;
                bool has_callers = node && calltree_has_children(tree, node);
                bool is_open = has_callers && ui_key_set_has(&fv->expanded, key);
                uint32_t r = ui_table_add(t, key, 0,
                                          (has_callers ? UI_ROW_EXPANDABLE : 0) |
                                                  (is_open ? UI_ROW_EXPANDED : 0));
                /* a row past those the screen may show is not shown before a build that looks
                   at it (functions_view_covers): its counts, as its text, wait for that */
                if (!is_looked) {
                        skip_row(fv, r, i);
                        continue;
                }
                row_numbers(fv, t, r, w, nr, has_ipc);
                row_text(fv, &names, sw, t, r, w);
                if (is_open)
                        add_subtree(fv, tree, &names, t, node, 1, nr);
        }
}

static unsigned act_toggle(struct ui_key_ctx *c)
{
        struct functions_view *fv = of(c->view);
        bool is_open = !ui_key_set_has(&fv->expanded, c->row_key);
        ui_key_set_put(&fv->expanded, c->row_key, is_open);
        return UI_REBUILD | UI_REDRAW | (is_open ? UI_REVEAL : 0);
}

static unsigned act_expand(struct ui_key_ctx *c)
{
        ui_key_set_put(&of(c->view)->expanded, c->row_key, true);
        return UI_REBUILD | UI_REDRAW | UI_REVEAL;
}

static unsigned act_collapse(struct ui_key_ctx *c)
{
        ui_key_set_put(&of(c->view)->expanded, c->row_key, false);
        return UI_REBUILD | UI_REDRAW;
}

/* every row shown now opens one level: the rows on the screen (every row of the table made each
   refresh build the callers of thousands of functions) */
static unsigned act_expand_all(struct ui_key_ctx *c)
{
        uint32_t n = c->shown ? c->nr_shown : c->table->nr_rows;
        for (uint32_t i = 0; i < n; i++) {
                uint32_t r = c->shown ? c->shown[i] : i;
                if (c->table->flags[r] & UI_ROW_EXPANDABLE)
                        ui_key_set_put(&of(c->view)->expanded, c->table->keys[r], true);
        }
        return UI_REBUILD | UI_REDRAW;
}

static unsigned act_callers(struct ui_key_ctx *c)
{
        struct functions_view *fv = of(c->view);
        fv->is_top_down = !fv->is_top_down;
        snprintf(c->st->status, sizeof(c->st->status), "%s",
                 fv->is_top_down ? "call tree: top-down (callees under callers)"
                                 : "hot functions, their callers under each");
        return UI_REBUILD | UI_REDRAW | UI_TO_TOP;
}

/* a: the function of the row, annotated (its instructions and their samples) */
static unsigned act_annotate(struct ui_key_ctx *c)
{
        const struct ui_table *t = c->table;
        for (uint32_t r = 0; r < t->nr_rows; r++) {
                if (t->keys[r] != c->row_key || !c->row_key)
                        continue;
                char module[256], function[512];
                ui_table_format(t, r, COL_MODULE, module, sizeof(module));
                ui_table_format(t, r, COL_FUNCTION, function, sizeof(function));
                const char *f = function + strspn(function, " +-");
                snprintf(c->st->annotate, sizeof(c->st->annotate), "%s!%s", module, f);
                return UI_ANNOTATE | UI_REDRAW;
        }
        snprintf(c->st->status, sizeof(c->st->status), "a: no function under the cursor");
        return UI_REDRAW;
}

/* p: the groupings in turn: a row per function, a row per process and function, the modules
   with their functions under them */
static unsigned act_group(struct ui_key_ctx *c)
{
        struct functions_view *fv = of(c->view);
        static const char *const said[] = {
                [FUNCTIONS_BY_FUNCTION] = "hot functions (a row per function)",
                [FUNCTIONS_BY_PROCESS] =
                        "hot functions by process (a row per process and function)",
                [FUNCTIONS_BY_THREAD] = "hot functions by thread (a row per thread and function)",
                [FUNCTIONS_BY_MODULE] = "hot functions by module (Enter or + opens a module's)",
        };
        fv->group = (enum functions_group)((fv->group + 1) % FUNCTIONS_NR_GROUPS);
        snprintf(c->st->status, sizeof(c->st->status), "%s", said[fv->group]);
        return UI_REBUILD | UI_REDRAW | UI_TO_TOP;
}

/* The callers trees by owner the rows show: by process or thread, callers under the rows. */
static enum calltree_owner callers_by(const struct functions_view *fv)
{
        if (fv->is_top_down || fv->report.table)
                return CALLTREE_ALL;
        return fv->group == FUNCTIONS_BY_PROCESS  ? CALLTREE_PROCESS
               : fv->group == FUNCTIONS_BY_THREAD ? CALLTREE_THREAD
                                                  : CALLTREE_ALL;
}

bool functions_view_ask(struct ui_view *v, struct profile *p)
{
        struct calltree *tree = profile_calltree(p);
        if (!tree)
                return true;
        const struct functions_view *fv = of(v);
        enum calltree_owner by = callers_by(fv);
        calltree_want(tree, by);
        /* the top-down tree only while the view shows it */
        bool is_top_down = fv->is_top_down && !fv->report.table;
        calltree_want_top_down(tree, is_top_down);
        return calltree_counts_all(tree, by, NULL) &&
               (!is_top_down || calltree_top_down_counts_all(tree, NULL));
}

bool functions_view_is_top_down(const struct ui_view *v)
{
        return ui_view_of(v, const struct functions_view)->is_top_down;
}

void functions_view_show(struct ui_view *v, uint32_t top, uint32_t nr, uint64_t cursor_key)
{
        struct functions_view *fv = of(v);
        fv->shown_top = top;
        fv->shown_nr = nr;
        fv->cursor_key = cursor_key;
}

bool functions_view_covers(const struct ui_view *v, uint32_t top, uint32_t nr)
{
        const struct functions_view *fv = ui_view_of(v, const struct functions_view);
        if (fv->has_looked_all)
                return true;
        return nr &&
               (top + nr <= fv->looked_to || (top >= fv->looked_lo && top + nr <= fv->looked_hi));
}

void functions_view_set_group(struct ui_view *v, enum functions_group group)
{
        of(v)->group = group;
}

struct view_report *functions_view_report(struct ui_view *v)
{
        return &of(v)->report;
}

static const struct ui_key keys[] = {
        {'\n', "Enter", act_toggle, "open or close the row: a function's callers, a tree node",
         NULL},
        {'+', "+ - *", act_expand, "open / close / open every row shown one level", NULL},
        {'-', NULL, act_collapse, NULL, NULL},
        {'*', NULL, act_expand_all, NULL, NULL},
        {'c', "c", act_callers, "hot functions with their callers, or the call tree top-down",
         NULL},
        {'p', "p", act_group,
         "group: by function, by process then function (perf top --sort comm,sym), by module "
         "then function",
         NULL},
        {'a', "a", act_annotate,
         "annotate the function: its instructions with their samples and source lines", NULL},
};

static void view_free(struct ui_view *v)
{
        struct functions_view *fv = of(v);
        ui_key_set_fini(&fv->expanded);
        functions_ipc_fini(&fv->ipc);
        free(fv->skipped);
        free(fv);
}

struct ui_view *functions_view_new(void)
{
        struct functions_view *fv = xcalloc(1, sizeof(*fv));
        memcpy(fv->cols_now, cols, sizeof(cols));
        fv->view = (struct ui_view){
                "Hot functions", fv->cols_now,  NR_COLS,  keys, sizeof(keys) / sizeof(keys[0]),
                build,           ui_no_row_pid, view_free};
        return &fv->view;
}
