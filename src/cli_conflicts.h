/* SPDX-License-Identifier: MIT */
/* cli_conflicts.h: the command-line options that cannot go together, refused before anything
   runs rather than one of them dropped. */
#ifndef ETWTOP_CLI_CONFLICTS_H
#define ETWTOP_CLI_CONFLICTS_H

#include <stdbool.h>

/* What the command line asked for. */
struct cli_modes {
        const char *record_path; /* --record FILE, or NULL */
        const char *replay_path; /* --replay FILE, or NULL */
        bool is_dump;            /* --dump */
};

/* 0, or -1 after saying on stderr which options conflict (main then exits 2). */
int cli_conflicts_check(const struct cli_modes *m);

#endif
