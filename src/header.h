/* SPDX-License-Identifier: MIT */
/* header.h: the lines above the screen's views (and each batch frame): what is shown (a live
   session, a recording, a replay), its rates and losses, what the session collects as it reports
   it, the refresh interval, and what this machine cannot do. */
#ifndef ETWTOP_HEADER_H
#define ETWTOP_HEADER_H

#include <stdbool.h>
#include <stdint.h>

#include "etw/etwtop_ext.h"
#include "etw_client.h"
#include "model/profile.h"

#define HEADER_LINES 4
#define HEADER_WIDTH 512

struct header_info {
        bool is_live;
        const char *logger_name;
        const char *record_path; /* live: the file it also writes (NULL: none) */
        const char *replay_path; /* a replay's file */
        double events_per_s;
        uint64_t nr_events;
        uint64_t nr_samples;
        uint64_t nr_lost;
        uint64_t nr_rt_buffers_lost;
        bool is_paused;
        uint32_t zoom_pid;
        uint32_t traced_pid;   /* replay: the process a -p recording traced (0: the system) */
        int loading_pct;       /* a replay still being read (-1: read) */
        bool is_loading_names; /* a replay read, the names of its rows still loading */
        const struct collect_settings *settings; /* live: read back; replay: as recorded */
        bool has_stacks;                         /* replay: the trace carries stacks */
        double delay_s;
        const struct etw_machine_caps *caps; /* live */
        struct profile_caps model_caps;      /* what the model's caps folded or cut */
        const struct profile_unwind *unwind; /* the session's UnwindStats (NULL: none yet) */
        const char *shown_source; /* the source the functions view counts (NULL: say none) */
        /* replay (header_trace_text): how the trace sampled and what carried LBR ("": say
           the timer's interval, LBR off) */
        char sampling[HEADER_WIDTH / 2];
        char lbr[HEADER_WIDTH / 4];
};

/* "Stack walk: dwarf, 8192-byte stack copies: 1234 user stacks unwound: 1200 to the thread
   start, 34 cut (stack end 30, no CFI 4)" from the counts u (NULL: none yet) and the mode in
   force (ETWTOP_STACKWALK_*, from u when it is there); "" for frame pointers with no counts. */
void header_unwind_text(const struct profile_unwind *u, uint32_t mode, uint32_t stack_copy_bytes,
                        char *out, size_t size);

/* A replay's sampling and LBR, as the trace p recorded them, into h->sampling and h->lbr: a
   perf.data's events as its attrs give them ("cycles:u (4000 Hz), instructions (period
   100000)"), an .etl's sources with their intervals ("Timer 1.000 ms, TotalCycles every 65536
   events"); "on TotalCycles samples, 3740 branch stacks" where LBR records came. Under the
   model's lock. */
void header_trace_text(const struct profile *p, struct header_info *h);

/* "Not shown: the perf.data's 2 STAT, 1 STAT_ROUND records (perf stat record's counts: perf stat
   report reads them)": the records of a perf.data that no event stands for (its
   RecordsNotShown events), with what reads them; "" when there are none. No newline. */
void header_not_shown_text(const struct profile_trace *t, char *out, size_t size);

/* The lines: what is shown and its counts; what is collected; the stack walk and what this
   machine cannot do (left out when the machine can do everything and no stack walk is
   counted); what the model's caps did (left out when they did nothing). Returns how many to
   show. */
uint32_t header_lines(const struct header_info *h, char lines[HEADER_LINES][HEADER_WIDTH]);

#endif
