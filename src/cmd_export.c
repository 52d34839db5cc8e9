/* SPDX-License-Identifier: MIT */
/* cmd_export.c: owns --replay FILE --export FORMAT -o OUT: its options checked, the format
   named, the export run (export/). */
#include "cmd.h"

#include <stdio.h>

#include "export/export.h"
#include "model/hot.h"
#include "ui/views.h"

static bool is_export(const struct cli_args *a)
{
        return a->export_arg != NULL;
}

static int run_export(struct cli_args *a)
{
        char err[1024];
        struct export_options eo = {.path = a->replay_path,
                                    .out_path = a->output,
                                    .symbol_path = a->symbol_path,
                                    .nr_symbol_path = a->nr_symbol_path,
                                    .is_no_demangle = a->is_no_demangle,
                                    .is_force = a->is_force,
                                    .pid = a->collect.pid > 0 ? (uint32_t)a->collect.pid : 0,
                                    .has_from = a->has_from,
                                    .has_to = a->has_to,
                                    .from_s = a->from_s,
                                    .to_s = a->to_s,
                                    .binary = a->binary,
                                    .is_comm = a->is_comm,
                                    .grouping = a->group == FUNCTIONS_BY_PROCESS ? HOT_BY_PROCESS
                                                : a->group == FUNCTIONS_BY_THREAD
                                                        ? HOT_BY_THREAD
                                                        : HOT_BY_FUNCTION};
        if (!a->replay_path || !a->output) {
                fprintf(stderr, "etwtop: --export FORMAT needs --replay FILE and -o OUT\n");
                return 2;
        }
        if (export_format_parse(a->export_arg, &eo.format) < 0) {
                fprintf(stderr, "etwtop: --export takes %s, not \"%s\"\n", export_format_names(),
                        a->export_arg);
                return 2;
        }
        if (export_run(&eo, err, sizeof(err)) < 0) {
                fprintf(stderr, "etwtop: %s\n", err);
                return 1;
        }
        return 0;
}

const struct cmd cmd_export = {
        .name = "export",
        .synopsis = "--replay FILE.etl --export FORMAT -o OUT [--force]\n"
                    "\tthe profile as pprof (with off-CPU\n"
                    "\ttime), folded, speedscope, or a view\n"
                    "\tas csv, csv-switches, csv-lines,\n"
                    "\tcsv-modules, csv-branches; for the\n"
                    "\toptimizers: bolt (fdata of one\n"
                    "\t--binary NAME), profgen (LBR samples\n"
                    "\tas perf script text; profgen-cs: with\n"
                    "\ttheir call stacks, for CSSPGO)",
        .precedence = 3,
        .checks = CLI_CHECK_MODES,
        .match = is_export,
        .run = run_export,
};
