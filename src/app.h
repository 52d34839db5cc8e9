/* SPDX-License-Identifier: MIT */
/* app.h: the etwtop screen: a live kernel session (or a recording) fed through the consumer API
   into the model, drawn by ui/, with the session's settings changed from the panel. */
#ifndef ETWTOP_APP_H
#define ETWTOP_APP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "etw/ntwmi.h"

struct app_options {
        const char *replay_path; /* NULL: live */
        const char *record_path; /* live: also write the session to this .etl (NULL: no file) */
        bool is_force;
        bool is_batch;      /* text frames on stdout instead of the screen */
        uint32_t nr_frames; /* batch: frames to print (0: until interrupted) */
        double delay_s;     /* refresh interval */
        bool is_mono;
        uint32_t nr_top; /* batch: rows per table (0: 25) */
        const char *const *symbol_path;
        uint32_t nr_symbol_path;
        /* the session (live) */
        PERFINFO_GROUPMASK masks;
        uint16_t stack_hooks[32];
        uint32_t nr_stack_hooks;
        uint32_t interval_100ns;
        double duration_s; /* live: stop after this long (0: until q) */
        int32_t pid;       /* live: the views count this process only (-p; 0 or -1: all) */
        bool has_pmc;      /* live: sample this PMC source under PMC_PROFILE (--pmc-profile) */
        uint32_t pmc_source;
        uint32_t nr_pmc_counters; /* live: counters read on events (--pmc), KPROFILE_SOURCE */
        uint32_t pmc_counters[4];
        uint32_t nr_pmc_hooks; /* the events they are read on (--pmc-events) */
        uint16_t pmc_hooks[4];
        bool has_lbr;         /* live: LBR on the Profile events (--lastbranch Profile) */
        uint32_t lbr_filters; /* EVNTRACE_LBR_* branch types left out (--lastbranch-filter) */
};

/* Runs the screen (or batch frames) until q, the end of --duration, or a signal. Returns 0, or
   -1 with a message in err (a missing privilege names the fix). */
int app_run(const struct app_options *o, char *err, size_t err_size);

#endif
