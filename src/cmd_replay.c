/* SPDX-License-Identifier: MIT */
/* cmd_replay.c: owns --replay FILE -b: a recording's tables as text on stdout (report.c), with
   --annotate FUNCTION's instructions after them. */
#include "cmd.h"

#include <stdio.h>
#include <unistd.h>

#include "report.h"

static bool is_replay(const struct cli_args *a)
{
        return a->replay_path != NULL;
}

static int run_replay(struct cli_args *a)
{
        char err[1024];
        struct report_options ro = {.path = a->replay_path,
                                    .annotate = a->annotate,
                                    .has_from = a->has_from,
                                    .has_to = a->has_to,
                                    .from_s = a->from_s,
                                    .to_s = a->to_s,
                                    .symbol_path = a->symbol_path,
                                    .nr_symbol_path = a->nr_symbol_path,
                                    .nr_top = a->nr_top,
                                    .is_no_demangle = a->is_no_demangle,
                                    .fd = STDOUT_FILENO,
                                    .group = a->group,
                                    .is_comm = a->is_comm,
                                    .source = a->source};
        if (report_run(&ro, err, sizeof(err)) < 0) {
                fprintf(stderr, "etwtop: %s\n", err);
                return 1;
        }
        return 0;
}

const struct cmd cmd_replay = {
        .name = "replay",
        .synopsis = "--replay FILE.etl [-b]\tbrowse a recording (-b: as text)",
        .precedence = 8,
        .checks = CLI_CHECK_MODES | CLI_CHECK_REPORT,
        .match = is_replay,
        .run = run_replay,
};
