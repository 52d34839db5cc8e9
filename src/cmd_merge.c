/* SPDX-License-Identifier: MIT */
/* cmd_merge.c: owns --merge: traces merged in time order into one file, with image identity
   and the PDBs the symbol path finds (merge_output.c, merge_images.c). */
#include "cmd.h"

#include <stdio.h>

#include "merge_images.h"
#include "merge_output.h"

/* etwtop --merge -o OUT [--force] [--symbol-path P] IN...: the images on the symbol path give
   the DbgID_RSDS events (which PDB each was built with), as xperf -merge reads them */
static int merge_main(const char *output, bool is_force, char **inputs, int nr_inputs,
                      const char *const *symbol_path, uint32_t nr_symbol_path)
{
        merge_images_register(symbol_path, nr_symbol_path);
        if (!output || nr_inputs < 1) {
                fprintf(stderr, "etwtop: --merge needs -o OUT.etl and at least one input\n");
                return 2;
        }
        return merge_output_run(output, is_force, inputs, nr_inputs);
}

static bool is_merge(const struct cli_args *a)
{
        return a->is_merge;
}

static int run_merge(struct cli_args *a)
{
        return merge_main(a->output, a->is_force, a->rest, a->nr_rest, a->symbol_path,
                          a->nr_symbol_path);
}

const struct cmd cmd_merge = {
        .name = "merge",
        .synopsis = "--merge -o OUT.etl [--force] [--symbol-path P] IN.etl...\n"
                    "\tmerge traces in time order, adding\n"
                    "\timage identity, and the PDB of each\n"
                    "\timage found on P (xperf -merge)",
        .precedence = 4,
        .checks = CLI_CHECK_MODES | CLI_CHECK_REPORT,
        .match = is_merge,
        .run = run_merge,
};
