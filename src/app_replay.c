/* SPDX-License-Identifier: MIT */
/* app_replay.c: owns a replay's moves through time on the screen: the timeline's cursor and
   range, [ and ]'s windows, each a new reading of the file into the model, and the end of each
   reading. */
#include "app_int.h"

#include <stdio.h>
#include <string.h>

#include "feed.h"
#include "header.h"
#include "model/events_table.h"

/* Replay: the file read again into the model, which counts [from, to) only (is_on) or the
   whole trace. false when it cannot be read again (the loop quits, saying why). */
static bool reread(struct app *a, bool is_on, int64_t from, int64_t to)
{
        struct profile *p = a->profile;
        feed_close(a->feed);
        a->feed = NULL;
        a->nr_reads++; /* the screen's loop meets this reading's end too */
        a->is_read = a->is_naming = false;
        profile_restart(p);
        profile_set_window(p, is_on, from, to);
        char err[256];
        if (feed_open(&a->feed, p, a->o->replay_path, NULL, true, err, sizeof(err)) < 0 ||
            feed_start(a->feed) < 0) {
                snprintf(a->st.status, sizeof(a->st.status), "%s", err);
                a->is_quit = true;
                return false;
        }
        return true;
}

/* Replay: the timeline's keys. The cursor moves by a 128th of the part shown; ( and ) choose
   any range, which every view then shows (the file is read again); = zooms the timeline into
   the range, # out to the whole trace (and the whole trace is shown again). */
void app_timeline_key(struct app *a, enum ui_timeline_op op)
{
        struct ui_timeline *tl = &a->tl;
        if (tl->span_ns <= 0) {
                snprintf(a->st.status, sizeof(a->st.status),
                         "no timeline: the trace's header has no end time");
                return;
        }
        if (!feed_is_done(a->feed, NULL) && (op == UI_TL_END || op == UI_TL_ZOOM_OUT)) {
                snprintf(a->st.status, sizeof(a->st.status), "still loading");
                return;
        }
        int64_t range = tl->view_to - tl->view_from;
        /* whole 100 ns ticks (a FILETIME's): --from and --to say the same range */
        int64_t step = range / 128 / 100 * 100 > 0 ? range / 128 / 100 * 100 : 100;
        switch (op) {
        case UI_TL_LEFT:
                tl->cursor = tl->cursor - step > tl->view_from ? tl->cursor - step : tl->view_from;
                break;
        case UI_TL_RIGHT:
                tl->cursor = tl->cursor + step < tl->view_to ? tl->cursor + step : tl->view_to;
                break;
        case UI_TL_START:
                tl->sel_from = tl->cursor;
                tl->sel_to = 0;
                snprintf(a->st.status, sizeof(a->st.status), "range from %.9f s: ) at its end",
                         (double)tl->cursor / 1e9);
                return;
        case UI_TL_END:
                if (tl->cursor <= tl->sel_from) {
                        snprintf(a->st.status, sizeof(a->st.status),
                                 "the range must end after its start (%.9f s): move the cursor "
                                 "right with }",
                                 (double)tl->sel_from / 1e9);
                        return;
                }
                tl->sel_to = tl->cursor;
                if (!reread(a, true, tl->sel_from, tl->sel_to))
                        return;
                snprintf(a->st.status, sizeof(a->st.status),
                         "range %.9f s - %.9f s (%.3f s): every view shows it",
                         (double)tl->sel_from / 1e9, (double)tl->sel_to / 1e9,
                         (double)(tl->sel_to - tl->sel_from) / 1e9);
                return;
        case UI_TL_ZOOM_IN:
                if (tl->sel_to > tl->sel_from) {
                        tl->view_from = tl->sel_from;
                        tl->view_to = tl->sel_to;
                } else {
                        tl->view_from = tl->cursor - range / 4 > 0 ? tl->cursor - range / 4 : 0;
                        tl->view_to = tl->view_from + range / 2;
                }
                if (tl->cursor < tl->view_from || tl->cursor > tl->view_to)
                        tl->cursor = tl->view_from;
                break;
        case UI_TL_ZOOM_OUT:
                tl->view_from = 0;
                tl->view_to = tl->span_ns;
                tl->sel_from = tl->sel_to = 0;
                if (!reread(a, false, 0, 0))
                        return;
                snprintf(a->st.status, sizeof(a->st.status), "the whole trace (%.3f s)",
                         (double)tl->span_ns / 1e9);
                return;
        }
        snprintf(a->st.status, sizeof(a->st.status), "cursor %.9f s (timeline %.3f s - %.3f s)",
                 (double)tl->cursor / 1e9, (double)tl->view_from / 1e9, (double)tl->view_to / 1e9);
}

/* Replay: [ and ] show a tenth of the trace at a time, moving back or forward; past either
   end the whole trace again. The file is read again into the model. */
void app_move_window(struct app *a, int step)
{
        if (!feed_is_done(a->feed, NULL)) {
                snprintf(a->st.status, sizeof(a->st.status), "still loading");
                return;
        }
        struct profile *p = a->profile;
        int64_t span = profile_trace(p)->last_ns > 0 ? profile_trace(p)->last_ns : 0;
        int64_t width = span / 10 > 0 ? span / 10 : 1;
        int64_t window_from;
        int64_t from = !profile_window(p, &window_from, NULL) ? (step > 0 ? 0 : span - width)
                                                              : window_from + step * width;
        bool is_on = from >= 0 && from < span;
        if (!reread(a, is_on, from, from + width))
                return;
        if (is_on)
                snprintf(a->st.status, sizeof(a->st.status),
                         "time window %.3f s - %.3f s of %.3f s", (double)from / 1e9,
                         (double)(from + width) / 1e9, (double)span / 1e9);
        else
                snprintf(a->st.status, sizeof(a->st.status), "the whole trace (%.3f s)",
                         (double)span / 1e9);
}

void app_read_again(struct app *a, bool is_said)
{
        int64_t from = 0, to = 0;
        bool is_on = profile_window(a->profile, &from, &to);
        /* after what the key said (p: the grouping now shown), not instead of it */
        if (reread(a, is_on, from, to) && is_said) {
                size_t n = strlen(a->st.status);
                snprintf(a->st.status + n, sizeof(a->st.status) - n,
                         "%sthe trace read again for the callers by process or thread",
                         n ? "; " : "");
        }
}

void app_replay_read(struct app *a, bool has_key)
{
        /* what it skipped, if anything (a range's message stays) */
        char damage[sizeof(a->st.status)];
        feed_damage_text(a->feed, true, damage, sizeof(damage));
        if (!damage[0]) /* else what the perf.data had that is not shown */
                header_not_shown_text(profile_trace(a->profile), damage, sizeof(damage));
        if (damage[0])
                memcpy(a->st.status, damage, sizeof(damage));
        /* the trace's end, as -b meets it: the samples still held for a stack that never came
           (a perf.data's have none), and a recording cut short's running kernel symbols */
        profile_end(a->profile);
        const struct profile *pr = a->profile;
        int64_t window_from;
        if (profile_window(pr, &window_from, NULL) && window_from > profile_trace(pr)->last_ns)
                snprintf(a->st.status, sizeof(a->st.status),
                         "the range starts past the trace's end: it spans 0 to %.3f s (# shows "
                         "it whole)",
                         (double)profile_trace(pr)->last_ns / 1e9);
        /* no samples, no switches: the events are what it has */
        if (!has_key && events_table_is_events_only(profile_events(pr)))
                a->st.view = VIEW_EVENTS;
}
