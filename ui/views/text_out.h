/* SPDX-License-Identifier: MIT */
/* text_out.h (internal to ui/views): where the text report goes, and its sections: a title line
   and a table, printed by ui_table_print. */
#ifndef ETWTOP_UI_TEXT_OUT_H
#define ETWTOP_UI_TEXT_OUT_H

#include <stdint.h>

#include "ui/table.h"

struct profile;
struct ui_build_ctx;
struct ui_view;
struct view_report;

struct text_out {
        int fd;
        int rc;       /* 0, or the first write's -errno (nothing more is written) */
        uint32_t top; /* rows per table */
};

/* s as it is (a title, a line of its own). */
void text_out_puts(struct text_out *o, const char *s);
/* The table's column titles and rows, then frees it. */
void text_out_table(struct text_out *o, struct ui_table *t);

/* One of a view's report tables (rp: the view's, table: its enum): the view builds it, then
   its title after a blank line, its rows and the lines after them; nothing when the trace has
   no such table. */
void text_out_view(struct text_out *o, struct ui_view *v, struct view_report *rp, int table,
                   const struct ui_build_ctx *m);

#endif
