/* SPDX-License-Identifier: MIT */
/* cmd_record.c: owns --record OUT.etl without the screen (stdout not a terminal, or -b): a
   kernel session to a file, its progress on stderr (record.c). */
#include "cmd.h"

#include <stdio.h>

static bool is_record(const struct cli_args *a)
{
        return a->record_path != NULL;
}

static int run_record(struct cli_args *a)
{
        char err[1024];
        int rc = cli_collect(a);
        if (rc != CLI_CONTINUE)
                return rc;
        a->rec.path = a->record_path;
        a->rec.is_force = a->is_force;
        a->rec.collect = &a->collect;
        if (record_run(&a->rec, err, sizeof(err)) < 0) {
                fprintf(stderr, "etwtop: %s\n", err);
                return 1;
        }
        return 0;
}

const struct cmd cmd_record = {
        .name = "record",
        .synopsis = "--record OUT.etl [options]\trecord a kernel session to a file",
        .precedence = 7,
        .checks = CLI_CHECK_MODES | CLI_CHECK_REPORT,
        .match = is_record,
        .run = run_record,
};
