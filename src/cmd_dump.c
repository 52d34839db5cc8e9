/* SPDX-License-Identifier: MIT */
/* cmd_dump.c: owns --dump [--totals] FILE...: every event of the traces as text, in time order
   (dump.c). */
#include "cmd.h"

#include <stdio.h>
#include <unistd.h>

#include "dump.h"

static bool is_dump(const struct cli_args *a)
{
        return a->is_dump;
}

static int run_dump(struct cli_args *a)
{
        char err[1024];
        if (a->nr_rest < 1) {
                fprintf(stderr, "etwtop: --dump needs a file\n");
                return 2;
        }
        struct dump_options opts = {
                .paths = (const char *const *)a->rest,
                .nr_paths = (uint32_t)a->nr_rest,
                .fd = STDOUT_FILENO,
                .is_totals_only = a->is_totals,
                .has_from = a->has_from,
                .has_to = a->has_to,
                .from_s = a->from_s,
                .to_s = a->to_s,
        };
        if (dump_run(&opts, err, sizeof(err)) < 0) {
                fprintf(stderr, "etwtop: %s\n", err);
                return 1;
        }
        return 0;
}

const struct cmd cmd_dump = {
        .name = "dump",
        .synopsis = "--dump [--totals] FILE.etl...\tevery event as text, in time order",
        .precedence = 9,
        .checks = CLI_CHECK_MODES | CLI_CHECK_REPORT,
        .match = is_dump,
        .run = run_dump,
};
