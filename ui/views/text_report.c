/* SPDX-License-Identifier: MIT */
/* text_report.c: owns the text report's order of sections and where its text goes; each table
   is a view's, built by the view's own build() in its report mode (view_report.h). */
#include "ui/text_report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "model/profile.h"
#include "text_out.h"
#include "ui/text_sanitize.h"
#include "ui/views.h"
#include "view_report.h"

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

/* The table's rows in the report's columns (view_report.print_from), then frees that copy. */
static void print_columns(struct text_out *o, const struct ui_table *t,
                          const struct view_report *rp)
{
        struct ui_table out;
        ui_table_init(&out, rp->print_cols, rp->nr_print);
        out.text_cols = rp->print_text;
        ui_table_reserve(&out, t->nr_rows);
        for (uint32_t i = 0; i < t->nr_rows; i++) {
                uint32_t r = t->order[i];
                uint32_t k = ui_table_add(&out, t->keys[r], t->depth[r], 0);
                for (uint32_t c = 0; c < rp->nr_print; c++)
                        out.cells[(size_t)k * out.nr_cols + c] =
                                t->cells[(size_t)r * t->nr_cols + rp->print_from[c]];
        }
        text_out_table(o, &out);
}

void text_out_view(struct text_out *o, struct ui_view *v, struct view_report *rp, int table,
                   const struct ui_build_ctx *m)
{
        *rp = (struct view_report){.table = table, .top = o->top};
        struct ui_table t;
        ui_table_init(&t, v->cols, v->nr_cols);
        v->build(v, m, &t);
        if (rp->has_section) {
                /* a title names the trace's own things (a perf.data event's name): made safe
                   for a terminal, as the rows' cells are */
                char title[sizeof(rp->title)];
                text_sanitize(title, sizeof(title), rp->title);
                text_out_puts(o, "\n");
                text_out_puts(o, title);
                text_out_puts(o, "\n");
                if (rp->has_table && rp->nr_print)
                        print_columns(o, &t, rp);
                else if (rp->has_table && !o->rc)
                        o->rc = ui_table_print(&t, o->fd, 0);
                text_out_puts(o, rp->after);
        }
        ui_table_fini(&t);
        rp->table = 0;
}

int ui_text_report_print(struct profile *p, const struct ui_text_report_options *opts, int fd)
{
        struct text_out o = {.fd = fd, .top = opts->nr_top ? opts->nr_top : 40};
        enum functions_group g = opts->group >= 0 && opts->group < FUNCTIONS_NR_GROUPS
                                         ? (enum functions_group)opts->group
                                         : FUNCTIONS_BY_FUNCTION;
        struct ui_build_ctx m = {.profile = p, .is_live = false, .why_no_lbr = ""};
        struct ui_view *fv = functions_view_new();
        functions_view_set_group(fv, g);
        struct view_report *frp = functions_view_report(fv);
        uint16_t sources[AGG_MAX_SOURCES];
        uint32_t nr_sources = hot_sources(profile_hot(p), sources, AGG_MAX_SOURCES);
        if (!nr_sources)
                text_out_puts(&o, "\nNo samples in this trace (PROFILE or PMC_PROFILE was off).\n");
        for (uint32_t i = 0; i < nr_sources; i++) {
                if (opts->only_source != -1 && opts->only_source != (int32_t)sources[i])
                        continue;
                /* one sample source: its hot functions, modules and source lines */
                m.source = sources[i];
                text_out_view(&o, fv, frp, FUNCTIONS_REPORT_FUNCTIONS, &m);
                text_out_view(&o, fv, frp, FUNCTIONS_REPORT_MODULES, &m);
                text_out_view(&o, fv, frp, FUNCTIONS_REPORT_LINES, &m);
        }
        /* where both cycles and instructions are sampled: IPC per module and per function */
        text_out_view(&o, fv, frp, FUNCTIONS_REPORT_IPC_MODULES, &m);
        text_out_view(&o, fv, frp, FUNCTIONS_REPORT_IPC_FUNCTIONS, &m);
        fv->free(fv);
        /* the hot branch edges of the LBR events, exact edges then function pairs */
        struct ui_view *bv = branches_view_new();
        for (int k = 0; k < 2; k++) {
                branches_view_set_group(bv, k ? BRANCHES_BY_FUNCTION : BRANCHES_BY_EDGE);
                text_out_view(&o, bv, branches_view_report(bv), BRANCHES_REPORT_EDGES, &m);
        }
        bv->free(bv);
        /* the context switches: threads by switches, their PMC counters, CPUs, where threads
           blocked, waits (none when the trace has no switches) */
        struct ui_view *sv = switches_view_new();
        struct view_report *srp = switches_view_report(sv);
        text_out_view(&o, sv, srp, SWITCHES_REPORT_THREADS, &m);
        if (srp->has_section)
                for (int k = SWITCHES_REPORT_COUNTERS; k <= SWITCHES_REPORT_WAITS; k++)
                        text_out_view(&o, sv, srp, k, &m);
        sv->free(sv);
        /* every event type with its count, most frequent first */
        struct ui_view *ev = events_view_new();
        text_out_view(&o, ev, events_view_report(ev), EVENTS_REPORT_TYPES, &m);
        ev->free(ev);
        return o.rc;
}
