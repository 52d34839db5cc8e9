/* SPDX-License-Identifier: MIT */
/* app_int.h (internal to the screen's files: app.c, app_batch.c, app_replay.c,
   app_actions.c): the screen's state and the steps they share. */
#ifndef ETWTOP_APP_INT_H
#define ETWTOP_APP_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "app.h"
#include "etw/etwtop_ext.h"
#include "header.h"
#include "model/profile.h"
#include "ui/screen.h"
#include "ui/table.h"
#include "ui/views.h"
#include "util/clock.h"

struct app {
        const struct app_options *o;
        struct ui_state st;
        struct profile *profile; /* owned; this thread's alone (the feed hands records over) */
        struct feed *feed;       /* owned */
        uint32_t nr_reads;       /* the file's readings: a replay's range reads it again */
        /* a replay: the screen's loop met this reading's end (the trace's end applied to the
           model); the rows' names still loading after it (the rows change when they come: the
           header says "loading" until neither), and the store's generation at the last build */
        bool is_read, is_naming;
        uint64_t naming_generation;
        struct etw_client client;
        struct etw_machine_caps caps;
        struct collect_settings now; /* live: what the session reports; replay: as recorded */
        struct ui_view *views[NR_VIEWS];
        struct ui_table tables[NR_VIEWS];
        struct ui_view_state vs[NR_VIEWS];
        struct ui_build_ctx build_ctx; /* the last refresh's (a view built again alone) */
        bool has_built;
        struct ui_screen *scr;
        int64_t upkeep_ns;       /* the model's last caps' upkeep (app_upkeep), or refresh */
        uint64_t nr_events_prev; /* the event count at rate_since_ns */
        int64_t rate_since_ns;
        double events_per_s;
        uint64_t nr_rt_buffers_lost;
        /* the samples and the caps' counts when the rows were built: what the header shows
           (the refresh step after the build zeroes or decays the model's) */
        uint64_t nr_samples_shown;
        struct profile_caps caps_shown;
        /* the source the functions view counts: the one chosen (S, --source) while the trace
           has it, else the first seen; its name, and whether there are others */
        int32_t source_chosen; /* -1: none chosen */
        uint16_t source_shown;
        uint32_t nr_sources;
        char source_name[64];
        bool is_source_said;     /* the status said --source matched none */
        bool is_lost_said;       /* the status said the kernel lost events, and what to do */
        const char *why_stopped; /* the signal that ended it (NULL: a key, the duration) */
        char status_shown[sizeof(((struct ui_state *)0)->status)]; /* its text, and since when */
        int64_t status_since_ns;
        bool is_quit;
        struct ui_timeline tl; /* a replay's timeline: the part shown, cursor, range */
        char **page;           /* owned: the annotate page's lines, shown instead of the table */
        uint32_t nr_page, page_top;
};

static inline int64_t app_now_ns(void)
{
        return (int64_t)now_ns();
}

/* app.c: the rows rebuilt from the model (the session's settings read back first). */
void app_build_tables(struct app *a);
/* app.c: the header's lines. */
void app_header(struct app *a, char lines[HEADER_LINES][HEADER_WIDTH], uint32_t *nr);
/* app_tick.c: the refresh tick: rates, then the rows (unless paused), then the model's step. */
void app_tick(struct app *a, int64_t now);
/* app_tick.c: live, the model's caps' upkeep (profile_upkeep) where none was made for a second, by
   a refresh or by this: the loops call it between slices of the feed, so that a slow refresh or a
   paused display does not leave the tables to fill with what ended meanwhile. */
void app_upkeep(struct app *a, int64_t now);
/* app.c: takes the signal the signalfd sfd holds and says what it means. */
const char *app_signal_taken(int sfd);

/* app_batch.c: text frames on stdout until the frames, the duration or a signal end them. */
void app_run_batch(struct app *a, int sfd);

/* app_replay.c: a replay's timeline keys, and [ and ]'s windows of a tenth of the trace. */
void app_timeline_key(struct app *a, enum ui_timeline_op op);
void app_move_window(struct app *a, int step);
/* Replay: the file read again as it is shown (its window), for the callers or the top-down
   tree a view began to ask for (every sample counted in them); is_said: the status line says
   so (the top-down tree's keeps what c said). */
void app_read_again(struct app *a, bool is_said);
/* Replay: the end of a reading met by the screen's loop: what it skipped said, the trace's end
   applied to the model (profile_end), a range past the trace's end said; a trace of events
   alone opens the events view unless has_key (a key was pressed). */
void app_replay_read(struct app *a, bool has_key);

/* app_actions.c: the annotate page (opened on a function, closed), the save key. */
void app_annotate_page(struct app *a, const char *function);
void app_page_close(struct app *a);
void app_save_window(struct app *a);

#endif
