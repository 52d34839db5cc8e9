/* SPDX-License-Identifier: MIT */
/* branches_view.c: owns the branch-edges view: the hot LBR edges, by exact edge or by function
   pair, and its key; and the text report's table of them (view_report.h). */
#include "ui/views.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/profile.h"
#include "util/xalloc.h"
#include "view_report.h"

struct branches_view {
        struct ui_view view;
        enum branches_group group;
        struct view_report report; /* the text report's table, when it asks for one */
};

enum { COL_SHARE, COL_COUNT, COL_MISPRED, COL_CYCLES, COL_EDGES, COL_FROM, COL_TO, NR_COLS };

/* Mispred% and AvgCyc: what the CPU recorded of the branches ("-" where it did not) */
static const struct ui_column cols[NR_COLS] = {
        {"Share%", UI_COL_PCT, 7, 0},  {"Count", UI_COL_U64, 9, 0}, {"Mispred%", UI_COL_TEXT, 8, 3},
        {"AvgCyc", UI_COL_TEXT, 7, 2}, {"Edges", UI_COL_U64, 6, 1}, {"From", UI_COL_TEXT, 0, 0},
        {"To", UI_COL_TEXT, 0, 0},
};

/* The text report's columns, in the same places: Mispred and AvgCyc as numbers ("-" where the
   CPU did not record them), the edge "from -> to" in From's place, no count of edges. */
static const struct ui_column report_cols[NR_COLS] = {
        {"Share", UI_COL_PCT, 8, 0},   {"Count", UI_COL_U64, 8, 0},
        {"Mispred", UI_COL_PCT, 8, 0}, {"AvgCyc", UI_COL_REAL, 7, 0},
        {NULL, UI_COL_U64, 0, 0},      {"From -> To", UI_COL_TEXT, 0, 0},
        {NULL, UI_COL_TEXT, 0, 0},
};

static const struct ui_text_col report_text[NR_COLS] = {
        [COL_CYCLES] = {0, 1, false},
        [COL_FROM] = {1, 0, false},
};

static struct branches_view *of(struct ui_view *v)
{
        return ui_view_of(v, struct branches_view);
}

static void end_text(struct profile *p, const struct branches_end *e, bool is_function, char *buf,
                     size_t size)
{
        profile_place_text(p, e->loc, e->state == SYM_RESOLVED ? e->function : 0, e->offset, buf,
                           size);
        /* a function pair: the names without offsets */
        char *off = strstr(buf, "+0x");
        if (is_function && off && e->state == SYM_RESOLVED)
                *off = 0;
}

/* The report's end of an edge: the place; of a function pair, module!function, or the place
   where no function names it. */
static void report_end_text(struct profile *p, const struct branches_end *e, bool is_function,
                            char *buf, size_t size)
{
        if (is_function && e->function)
                snprintf(buf, size, "%s!%s", profile_module_name(p, e->loc.module),
                         profile_name(p, e->function));
        else
                profile_loc_text(p, e->loc, buf, size);
}

/* The report's edge: Share of the rows' branches, Mispred and AvgCyc as numbers, "from -> to". */
static void report_cells(struct profile *p, struct ui_table *t, uint32_t r,
                         const struct branches_row *w, bool is_function, uint64_t total)
{
        ui_table_pct(t, r, COL_SHARE, total ? 100.0 * (double)w->count / (double)total : 0.0);
        double x;
        ui_table_pct(t, r, COL_MISPRED, branches_mispredict_pct(w, &x) ? x : NAN);
        ui_table_pct(t, r, COL_CYCLES, branches_avg_cycles(w, &x) ? x : NAN);
        if (w->is_other) {
                ui_table_text(t, r, COL_FROM, "[other edges]");
                return;
        }
        char from[512], to[512], edge[1100];
        report_end_text(p, &w->from, is_function, from, sizeof(from));
        report_end_text(p, &w->to, is_function, to, sizeof(to));
        snprintf(edge, sizeof(edge), "%s -> %s", from, to);
        ui_table_text(t, r, COL_FROM, edge);
}

static void build(struct ui_view *v, const struct ui_build_ctx *m, struct ui_table *t)
{
        struct branches_view *bv = of(v);
        struct profile *p = m->profile;
        struct view_report *rp = &bv->report;
        bool is_report = rp->table == BRANCHES_REPORT_EDGES;
        ui_table_clear(t);
        v->cols = t->cols = is_report ? report_cols : cols;
        const struct branches_row *rows;
        uint32_t n = branches_rows(profile_branches(p), bv->group, AGG_ALL, &rows);
        char from[512], to[512];
        bool is_function = bv->group == BRANCHES_BY_FUNCTION;
        uint64_t total = 0; /* the report's: every row's branches */
        if (is_report) {
                t->text_cols = report_text;
                for (uint32_t i = 0; i < n; i++)
                        total += rows[i].count;
                snprintf(rp->title, sizeof(rp->title),
                         "Hot branch edges%s (LBR, %" PRIu64 " branches)",
                         is_function ? " by function" : "", total);
                rp->has_section = rp->has_table = n > 0;
        }
        for (uint32_t i = 0; i < n && (!is_report || i < rp->top); i++) {
                const struct branches_row *w = &rows[i];
                uint32_t r = ui_table_add(t, i + 1, 0, 0);
                ui_table_u64(t, r, COL_COUNT, w->count);
                ui_table_u64(t, r, COL_EDGES, w->nr_edges);
                if (is_report) {
                        report_cells(p, t, r, w, is_function, total);
                        continue;
                }
                ui_table_pct(t, r, COL_SHARE, 100.0 * w->share);
                char num[32];
                double x;
                if (branches_mispredict_pct(w, &x))
                        snprintf(num, sizeof(num), "%7.2f", x);
                else
                        snprintf(num, sizeof(num), "%7s", "-");
                ui_table_text(t, r, COL_MISPRED, num);
                if (branches_avg_cycles(w, &x))
                        snprintf(num, sizeof(num), "%6.1f", x);
                else
                        snprintf(num, sizeof(num), "%6s", "-");
                ui_table_text(t, r, COL_CYCLES, num);
                if (w->is_other) {
                        ui_table_text(t, r, COL_FROM, "[other edges]");
                        continue;
                }
                end_text(p, &w->from, is_function, from, sizeof(from));
                end_text(p, &w->to, is_function, to, sizeof(to));
                ui_table_text(t, r, COL_FROM, from);
                ui_table_text(t, r, COL_TO, to);
        }
        if (!n && !is_report)
                ui_table_text(t, ui_table_add(t, 1, 0, UI_ROW_GREYED), COL_FROM,
                              m->is_live && m->why_no_lbr && m->why_no_lbr[0]
                                      ? "No branch edges: LBR is not available here (see the "
                                        "Session view). Replay a trace recorded with "
                                        "--lastbranch to see them."
                              : m->is_live ? "No LBR events yet."
                                           : "No branch edges: the trace has no LBR events (it "
                                             "was recorded without --lastbranch).");
}

static unsigned act_group(struct ui_key_ctx *c)
{
        struct branches_view *bv = of(c->view);
        bv->group = bv->group == BRANCHES_BY_EDGE ? BRANCHES_BY_FUNCTION : BRANCHES_BY_EDGE;
        snprintf(c->st->status, sizeof(c->st->status), "branch edges %s",
                 bv->group == BRANCHES_BY_EDGE ? "by exact edge" : "by function pair");
        return UI_REBUILD | UI_REDRAW | UI_TO_TOP;
}

static const struct ui_key keys[] = {
        {'g', "g", act_group, "group the edges by exact edge or by function pair", NULL},
};

void branches_view_set_group(struct ui_view *v, int group)
{
        of(v)->group = (enum branches_group)group;
}

struct view_report *branches_view_report(struct ui_view *v)
{
        return &of(v)->report;
}

static void view_free(struct ui_view *v)
{
        free(of(v));
}

struct ui_view *branches_view_new(void)
{
        struct branches_view *bv = xcalloc(1, sizeof(*bv));
        bv->group = BRANCHES_BY_EDGE;
        bv->view =
                (struct ui_view){"Branch edges (LBR)",           cols,  NR_COLS,       keys,
                                 sizeof(keys) / sizeof(keys[0]), build, ui_no_row_pid, view_free};
        return &bv->view;
}
