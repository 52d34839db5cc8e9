/* SPDX-License-Identifier: MIT */
/* merge_output.h: where `etwtop --merge -o OUT` writes: a new file, a regular file of ours
   replaced with --force, or standard output for "-". */
#ifndef ETWTOP_MERGE_OUTPUT_H
#define ETWTOP_MERGE_OUTPUT_H

#include <stdbool.h>

/* Merges the nr_inputs files into output (CreateMergedTraceFile) after checking output with
   out_file (util/out_file.h); "-" merges into a private temporary file that is then copied to
   standard output. Returns the exit status: 0, or 1 with the reason said on stderr. */
int merge_output_run(const char *output, bool is_force, char **inputs, int nr_inputs);

#endif
