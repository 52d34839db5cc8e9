/* SPDX-License-Identifier: MIT */
/* app_batch.c: owns the screen's text frames (-b, or a terminal that cannot draw the screen):
   each frame's wait (the feed's records decoded meanwhile), a live session's catch-up, the
   header and the views' tables printed. */
#include "app_int.h"

#include <poll.h>
#include <stdio.h>
#include <unistd.h>

#include "feed.h"
#include "symbols/symbols.h"

/* The records the feed hands over are decoded this long at a time between looks at the
   signals; a frame then takes every record handed over before it ends (feed_catch_up). */
#define BATCH_SLICE_NS 50000000ll

static void print_table(struct app *a, uint32_t v, uint32_t top)
{
        dprintf(STDOUT_FILENO, "\n%s\n", a->views[v]->name);
        ui_table_print(&a->tables[v], STDOUT_FILENO, top);
}

/* A live frame's events up to now: the session flushed (a real-time consumer otherwise has them
   at the FlushTimer's next tick, up to a second later: the first frame showed no samples), then
   the feed given the buffers the flush delivered, their records decoded meanwhile so that a full
   queue never holds the feed back. The session's own consumer is given every buffer the session
   writes or counts it lost, so it waits until it has read the buffers written less those lost,
   however long a loaded machine takes (30 s at most): a wait for 20 ms without a new buffer,
   300 ms at most, ended the first frame of a loaded machine with 33 of its 2,000 samples.
   Another's session (--attach) may have been written to before this consumer came: its buffers
   are given until they stop coming (20 ms without one, 300 ms at most). */
static void batch_catch_up(struct app *a)
{
        uint64_t before = feed_nr_buffers_read(a->feed), seen = before;
        struct etw_client_stats st = {0};
        if (etw_client_flush(&a->client, &st) != ERROR_SUCCESS)
                return;
        bool is_own = !a->client.is_attached;
        uint64_t want = st.nr_buffers_written > st.nr_rt_buffers_lost
                                ? st.nr_buffers_written - st.nr_rt_buffers_lost
                                : 0;
        int64_t start = app_now_ns(), last_new = start;
        int64_t bound = is_own ? 30000000000ll : 300000000;
        while (app_now_ns() - start < bound && !feed_is_done(a->feed, NULL)) {
                uint64_t n = feed_nr_buffers_read(a->feed);
                if (is_own && n >= want)
                        break;
                struct timespec pause = {0, 5000000};
                if (!feed_drain(a->feed, 5000000))
                        nanosleep(&pause, NULL);
                n = feed_nr_buffers_read(a->feed);
                if (n != seen) {
                        seen = n;
                        last_new = app_now_ns();
                } else if (!is_own && seen != before && app_now_ns() - last_new >= 20000000) {
                        break;
                }
        }
}

void app_run_batch(struct app *a, int sfd)
{
        int64_t delay = (int64_t)(a->st.delay_s * 1e9);
        int64_t start = app_now_ns(), last = start;
        uint32_t top = a->o->nr_top ? a->o->nr_top : 25;
        for (uint32_t frame = 0; !a->o->nr_frames || frame < a->o->nr_frames; frame++) {
                /* a replay is one frame, once the file is read */
                int64_t until = a->st.is_live ? last + delay : INT64_MAX;
                bool has_backlog = false;
                while (app_now_ns() < until && !(!a->st.is_live && feed_is_done(a->feed, NULL))) {
                        /* a negative fd (no signalfd) is left out by poll */
                        struct pollfd p[2] = {{sfd, POLLIN, 0}, {feed_fd(a->feed), POLLIN, 0}};
                        int wait = has_backlog || !feed_arm(a->feed) ? 0 : 50;
                        if (poll(p, 2, wait) > 0 && (p[0].revents & POLLIN)) {
                                a->why_stopped = app_signal_taken(sfd);
                                a->is_quit = true;
                                break;
                        }
                        int64_t left = until - app_now_ns();
                        has_backlog =
                                feed_drain(a->feed, left < BATCH_SLICE_NS ? left : BATCH_SLICE_NS);
                        app_upkeep(a, app_now_ns());
                }
                int64_t now = app_now_ns();
                if (a->st.is_live && !a->is_quit)
                        batch_catch_up(a);
                /* the frame ends now: what the feed handed over until now, all of it */
                feed_catch_up(a->feed);
                if (!a->st.is_live) {
                        if (feed_is_done(a->feed, NULL)) {
                                profile_end(a->profile);
                                /* the last frame names what it can: the images a trace
                                   describes only at its end (a saved window's rundown) were
                                   asked for just now, as its places were placed */
                                sym_store_wait(profile_store(a->profile));
                        } else
                                profile_settle(a->profile);
                }
                app_tick(a, now);
                last = now;
                char hl[HEADER_LINES][HEADER_WIDTH];
                uint32_t nr;
                app_header(a, hl, &nr);
                dprintf(STDOUT_FILENO, "\n");
                for (uint32_t i = 0; i < nr; i++)
                        dprintf(STDOUT_FILENO, "%s\n", hl[i]);
                print_table(a, VIEW_FUNCTIONS, top);
                print_table(a, VIEW_SWITCHES, top);
                const struct ui_table *b = &a->tables[VIEW_BRANCHES];
                if (b->nr_rows > 1 || !(b->flags[0] & UI_ROW_GREYED))
                        print_table(a, VIEW_BRANCHES, top);
                print_table(a, VIEW_EVENTS, top);
                if (a->is_quit || !a->st.is_live)
                        break;
                if (a->o->duration_s > 0 && now - start >= (int64_t)(a->o->duration_s * 1e9))
                        break;
        }
}
