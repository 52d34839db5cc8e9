/* SPDX-License-Identifier: MIT */
/* functions_view.c: owns the hot-functions view: its columns, its rows (each function with its
   callers under it, or the call tree top-down), which of them are open, and its keys. */
#include "ui/views.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "functions_ipc.h"
#include "model/profile.h"
#include "util/xalloc.h"

struct functions_view {
        struct ui_view view;
        bool is_top_down;           /* the call tree from its roots, not callers under functions */
        enum functions_group group; /* p: by function, by process, by module */
        struct ui_key_set expanded; /* the open rows */
        struct functions_ipc ipc;   /* where cycles and instructions are both sampled */
        struct ui_column cols_now[8]; /* the grouping's columns, IPC titled when it has one */
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

/* By module: each module's row (its samples), its functions under it when open. */
static void add_modules(struct functions_view *fv, struct profile *p, struct module_names *names,
                        struct ui_table *t, uint16_t source, const struct hot_row *rows, uint32_t n,
                        uint64_t nr)
{
        const struct hot_module_row *mrows;
        uint32_t m = hot_modules(profile_hot(p), source, &mrows);
        struct hot_module_row *mods = xmalloc((m ? m : 1) * sizeof(*mods));
        memcpy(mods, mrows, m * sizeof(*mods));
        char text[64];
        for (uint32_t i = 0; i < m; i++) {
                uint64_t key = KEY_MODULE | mods[i].module;
                uint32_t nr_fns = 0;
                for (uint32_t k = 0; k < n; k++)
                        nr_fns += rows[k].module == mods[i].module;
                bool is_open = nr_fns && ui_key_set_has(&fv->expanded, key);
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
                for (uint32_t k = 0; k < n; k++) {
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
                }
        }
        free(mods);
}

static void build(struct ui_view *v, const struct ui_build_ctx *m, struct ui_table *t)
{
        struct functions_view *fv = of(v);
        struct profile *p = m->profile;
        struct module_names names = {.profile = p};
        struct hot *hot = profile_hot(p);
        struct calltree *tree = profile_calltree(p);
        struct switches *sw = profile_switches(p);
        ui_table_clear(t);
        memcpy(fv->cols_now,
               fv->group == FUNCTIONS_BY_PROCESS  ? cols_by_process
               : fv->group == FUNCTIONS_BY_THREAD ? cols_by_thread
                                                  : cols,
               sizeof(cols));
        /* IPC per function (per module by module), before the rows: it asks for functions too;
           a row per process or thread has its function's whole IPC, not its own: none there */
        bool has_ipc = !fv->is_top_down &&
                       (fv->group == FUNCTIONS_BY_FUNCTION || fv->group == FUNCTIONS_BY_MODULE) &&
                       functions_ipc_build(&fv->ipc, p, fv->group == FUNCTIONS_BY_MODULE);
        if (has_ipc)
                fv->cols_now[COL_IPC].title = "IPC";
        v->cols = t->cols = fv->cols_now;
        if (fv->is_top_down) {
                if (tree)
                        add_subtree(fv, tree, &names, t, 0, 0, calltree_nr_samples(tree));
                return;
        }
        /* the screen's choice (S); the first source seen when it has no samples */
        uint16_t source = m->source;
        if (!hot_nr_samples(hot, source))
                hot_sources(hot, &source, 1);
        uint64_t nr = hot_nr_samples(hot, source);
        const struct hot_row *rows;
        bool is_by_process = fv->group == FUNCTIONS_BY_PROCESS;
        bool is_by_thread = fv->group == FUNCTIONS_BY_THREAD;
        uint32_t n = hot_functions_by(hot, source,
                                      is_by_process  ? HOT_BY_PROCESS
                                      : is_by_thread ? HOT_BY_THREAD
                                                     : HOT_BY_FUNCTION,
                                      false, &rows);
        if (fv->group == FUNCTIONS_BY_MODULE) {
                add_modules(fv, p, &names, t, source, rows, n, nr);
                return;
        }
        /* the callers under a row count the row's samples: its process's or thread's */
        enum calltree_owner owner = is_by_process  ? CALLTREE_PROCESS
                                    : is_by_thread ? CALLTREE_THREAD
                                                   : CALLTREE_ALL;
        char process[64];
        for (uint32_t i = 0; i < n; i++) {
                const struct hot_row *w = &rows[i];
                /* never 0 (no row), never a tree key (bit 63) */
                uint64_t key = (((uint64_t)w->module << 40 ^ (w->function ? w->function : w->rel) ^
                                 (is_by_process  ? (uint64_t)w->pid << 24
                                  : is_by_thread ? (uint64_t)w->tid << 24
                                                 : 0)) &
                                ~(7ull << 61)) |
                               (1ull << 61);
                uint32_t node = tree && (w->state == SYM_RESOLVED || w->module)
                                        ? calltree_find_function(tree, owner,
                                                                 is_by_process ? w->pid : w->tid,
                                                                 w->module, w->function, w->rel)
                                        : 0;
                bool has_callers = node && calltree_has_children(tree, node);
                bool is_open = has_callers && ui_key_set_has(&fv->expanded, key);
                uint32_t r = ui_table_add(t, key, 0,
                                          (has_callers ? UI_ROW_EXPANDABLE : 0) |
                                                  (is_open ? UI_ROW_EXPANDED : 0));
                counts(t, r, w->self, w->total, nr);
                if (has_ipc)
                        ui_table_pct(t, r, COL_IPC,
                                     functions_ipc_of(&fv->ipc, w->module, w->function, w->rel));
                frame_text(&names, t, r, w->module, w->function, w->rel);
                if (is_by_process) {
                        const char *pn = switches_process_name(sw, w->pid);
                        if (*pn)
                                snprintf(process, sizeof(process), "%s", pn);
                        else if (w->pid)
                                snprintf(process, sizeof(process), "pid %u", w->pid);
                        else
                                snprintf(process, sizeof(process), "%s", w->module ? "Idle" : "");
                        ui_table_text(t, r, COL_PROCESS, process);
                } else if (is_by_thread) {
                        /* "process/thread (tid)", the switches view's names */
                        char pn[SWITCHES_NAME_SIZE], tn[SWITCHES_NAME_SIZE], text[160];
                        switches_thread_names(sw, w->tid, pn, tn);
                        if (!pn[0]) /* a thread no event named: its process's name */
                                snprintf(pn, sizeof(pn), "%s", switches_process_name(sw, w->pid));
                        snprintf(text, sizeof(text), "%s%s%s (%u)", pn[0] ? pn : "?",
                                 tn[0] ? "/" : "", tn, w->tid);
                        ui_table_text(t, r, COL_PROCESS, text);
                }
                if (is_open)
                        add_subtree(fv, tree, &names, t, node, 1, nr);
        }
}

static unsigned act_toggle(struct ui_key_ctx *c)
{
        struct functions_view *fv = of(c->view);
        ui_key_set_put(&fv->expanded, c->row_key, !ui_key_set_has(&fv->expanded, c->row_key));
        return UI_REBUILD | UI_REDRAW;
}

static unsigned act_expand(struct ui_key_ctx *c)
{
        ui_key_set_put(&of(c->view)->expanded, c->row_key, true);
        return UI_REBUILD | UI_REDRAW;
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

void functions_view_set_group(struct ui_view *v, enum functions_group group)
{
        of(v)->group = group;
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
