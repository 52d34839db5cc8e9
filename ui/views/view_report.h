/* SPDX-License-Identifier: MIT */
/* view_report.h (internal to ui/views): a view asked for one of the text report's tables
   (`--replay -b`) rather than the screen's rows. Its build() makes them: the same model queries
   and the same row code as the screen's, with the report's columns, at most top rows, no row
   opened by a key, and the section's title and closing lines beside the rows. */
#ifndef ETWTOP_UI_VIEW_REPORT_H
#define ETWTOP_UI_VIEW_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "ui/table.h"

struct ui_view;

struct view_report {
        /* set by the report, read by build() */
        int table;    /* the view's own enum of report tables; 0: the screen's rows */
        uint32_t top; /* rows at most (a tree's: at each level) */
        /* set by build() in a report table */
        bool has_section; /* the trace has this table (else nothing is printed) */
        bool has_table;   /* the rows follow the title (else only the title and after) */
        char title[320];  /* the section's title line, without its newlines */
        char after[256];  /* lines printed after the rows ("" none), newlines included */
        /* the printed columns, when they are not the table's own in their order: column i
           prints print_cols[i] from the table's column print_from[i]; nr_print of them
           (0: the table's own columns, as they are) */
        const struct ui_column *print_cols;
        const struct ui_text_col *print_text;
        const uint8_t *print_from;
        uint32_t nr_print;
};

/* The report's state of a view (owned by the view); reset by the report before each build. */
struct view_report *functions_view_report(struct ui_view *v);
struct view_report *branches_view_report(struct ui_view *v);
struct view_report *switches_view_report(struct ui_view *v);
struct view_report *events_view_report(struct ui_view *v);

/* The functions view's report tables (for the source the build's ui_build_ctx names). */
enum functions_report {
        FUNCTIONS_REPORT_FUNCTIONS = 1, /* the hot functions, grouped as the view is (--sort) */
        FUNCTIONS_REPORT_MODULES,       /* the modules and where their symbols came from */
        FUNCTIONS_REPORT_LINES,         /* the hot source lines */
        FUNCTIONS_REPORT_IPC_MODULES,   /* IPC per module (cycles and instructions sampled) */
        FUNCTIONS_REPORT_IPC_FUNCTIONS, /* IPC per function */
};

/* The branches view's report table: its grouping's edges (branches_view_set_group). */
enum { BRANCHES_REPORT_EDGES = 1 };
void branches_view_set_group(struct ui_view *v, int group); /* enum branches_group */

/* The switches view's report tables. */
enum switches_report {
        SWITCHES_REPORT_THREADS = 1, /* the threads by switches */
        SWITCHES_REPORT_COUNTERS,    /* those threads' PMC counters, where the switches had some */
        SWITCHES_REPORT_CPUS,        /* the CPUs: busy, idle, C-states */
        SWITCHES_REPORT_BLOCKERS,    /* where threads blocked, every thread's */
        SWITCHES_REPORT_WAITS,       /* the waits by state and reason */
};

/* The events view's report table: the event types by count, "name (vN)". */
enum { EVENTS_REPORT_TYPES = 1 };

#endif
