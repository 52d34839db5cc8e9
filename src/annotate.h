/* SPDX-License-Identifier: MIT */
/* annotate.h: `--annotate FUNCTION`: a sampled function's instructions with the samples at each,
   as perf annotate prints them. */
#ifndef ETWTOP_ANNOTATE_H
#define ETWTOP_ANNOTATE_H

#include <stddef.h>
#include <stdint.h>

struct outbuf;
struct profile;

/* Prints to o, for each sampled function named function (the name as the reports show it, or
   "module!function"; one per module and profile source, heaviest first): its instructions,
   disassembled from the ELF file its symbols came from (x86-64, x86), with each one's samples
   (count and percent of the function's), its source line and inline frames, the targets of its
   branches and calls named, the hottest instruction and line marked, and then its hottest
   source lines (nr_top of them; 0: 10). A function whose file is missing, is not the recorded
   one (build-id) or holds no code says so in one line instead of its instructions.
   p: read after profile_end, its symbols loaded (sym_store_wait). Returns 0, or -ENOENT with a
   message in err when no sampled function has that name. */
int annotate_print(struct profile *p, const char *function, uint32_t nr_top, struct outbuf *o,
                   char *err, size_t err_size);

#endif
