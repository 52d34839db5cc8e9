/* SPDX-License-Identifier: MIT */
/* text_report.h: a recording's tables as text (`etwtop --replay FILE -b`), built by the views'
   own build() (the screen's rows, in a report mode) and printed by their one text form
   (ui_table_print): each
   sample source's hot functions (grouped as --sort says), modules and source lines, IPC where
   cycles and instructions are both sampled, the hot branch edges (by edge, by function pair),
   the context switches (threads, their PMC counters, CPUs, where threads blocked, waits) and the
   events by type. */
#ifndef ETWTOP_UI_TEXT_REPORT_H
#define ETWTOP_UI_TEXT_REPORT_H

#include <stdint.h>

struct profile;

struct ui_text_report_options {
        uint32_t nr_top;     /* rows per table (0: 40) */
        int group;           /* enum functions_group: the hot functions' rows (--sort) */
        int32_t only_source; /* --source: that profile source's tables alone (-1: every source's,
                                -2: none, the caller said the trace lacks the one named) */
};

/* The tables after the report's header, each after a blank line and its title, to fd. The
   model's queries keep caches: the caller owns the profile (a replay read to its end). Returns
   0, or -errno of a write that failed. */
int ui_text_report_print(struct profile *p, const struct ui_text_report_options *o, int fd);

#endif
