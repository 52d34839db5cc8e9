/* SPDX-License-Identifier: MIT */
/* report.h: `etwtop --replay FILE -b`: a recording's hot functions and modules as text. */
#ifndef ETWTOP_REPORT_H
#define ETWTOP_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct report_options {
        const char *path;
        bool has_from, has_to; /* --from/--to: seconds after the trace's start */
        double from_s, to_s;
        const char *const *symbol_path; /* borrowed: --symbol-path directories */
        uint32_t nr_symbol_path;
        uint32_t nr_top;     /* rows per table; 0: 40 */
        bool is_no_demangle; /* --no-demangle */
        /* --annotate FUNCTION: its instructions after the report (NULL: none); borrowed */
        const char *annotate;
        int fd;
        int group;          /* --sort: how the hot functions are grouped (enum functions_group) */
        bool is_comm;       /* by process: by the thread's name, perf's comm (--sort comm,sym) */
        const char *source; /* --source: that profile source's tables only (NULL: every one) */
};

/* Returns 0, or -1 with a message in err. */
int report_run(const struct report_options *opts, char *err, size_t err_size);

#endif
