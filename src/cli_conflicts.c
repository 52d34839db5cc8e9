/* SPDX-License-Identifier: MIT */
/* cli_conflicts.c: owns the refusal of command-line options that cannot go together. */
#include "cli_conflicts.h"

#include <stdio.h>

int cli_conflicts_check(const struct cli_modes *m)
{
        if (m->record_path && (m->replay_path || m->is_dump)) {
                fprintf(stderr,
                        "etwtop: --record writes a live session to a file: not with %s "
                        "(which read one)\n",
                        m->replay_path ? "--replay" : "--dump");
                return -1;
        }
        if (m->replay_path && m->is_dump) {
                fprintf(stderr, "etwtop: --dump and --replay read a trace two ways: one at a "
                                "time (--dump FILE, or --replay FILE)\n");
                return -1;
        }
        return 0;
}
