/* SPDX-License-Identifier: MIT */
/* app.c: owns the screen's loop and its reactions: keys through the browser and the views'
   tables, the refresh tick (rates, the session read back, rows rebuilt, the model's step), what
   an action asks (zero, zoom, mode, a replay's window, save, apply the panel's edit, quit). The
   text frames are app_batch.c's, a replay's moves in time app_replay.c's, the annotate page and
   the save key app_actions.c's. The session is the ETW client's, the events the feed's. */
#include "app.h"
#include "app_int.h"

#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "etw/etwtop_ext.h"
#include "feed.h"
#include "header.h"
#include "source_pick.h"
#include "record.h"
#include "model/profile.h"
#include "symbols/symbols.h"
#include "ui/screen.h"
#include "ui/table.h"
#include "ui/views.h"
#include "util/mem_policy.h"
#include "util/xalloc.h"

#define WINDOW_KEPT_BYTES ((size_t)64 << 20) /* the save key's recent events */
#define RT_MAX_BUFFERS    1024               /* 64 MiB for a consumer that waits for a CPU */
#define MAX_FUNCTIONS     (1u << 18)
/* The records the feed handed over are decoded into the model this long at a time at most,
   the keys read between: a backlog (a file loading, a burst) takes several turns of the loop. */
#define FEED_SLICE_NS 10000000ll

/* ---- the session's settings, read back ---- */

static void to_panel(const struct collect_settings *c, struct panel_values *pv)
{
        memset(pv, 0, sizeof(*pv));
        memcpy(pv->masks, c->masks.Masks, sizeof(pv->masks));
        pv->nr_hooks = c->nr_stack_hooks;
        memcpy(pv->hooks, c->stack_hooks, c->nr_stack_hooks * sizeof(pv->hooks[0]));
        pv->interval_100ns = c->interval_100ns;
        pv->pmc_source = c->pmc_source;
        pv->is_lbr_on = c->is_lbr_on;
        pv->lbr_filters = c->lbr_filters;
        pv->stack_walk = c->stack_walk;
}

static void from_panel(const struct panel_values *pv, struct collect_settings *c)
{
        memcpy(c->masks.Masks, pv->masks, sizeof(pv->masks));
        c->nr_stack_hooks = pv->nr_hooks;
        memcpy(c->stack_hooks, pv->hooks, pv->nr_hooks * sizeof(pv->hooks[0]));
        c->interval_100ns = pv->interval_100ns;
        c->pmc_source = pv->pmc_source;
        c->is_lbr_on = pv->is_lbr_on;
        c->lbr_filters = pv->lbr_filters;
        c->stack_walk = pv->stack_walk;
}

/* Live: what the session collects now (a change another program made shows), asked of the
   session host where the state its buffers came with does not tell (etw_client_refresh). */
static ULONG query_back(struct app *a, struct etw_client_stats *cs)
{
        if (!a->st.is_live)
                return ERROR_SUCCESS;
        return etw_client_refresh(&a->client, feed_session_state(a->feed), &a->now, cs);
}

/* What the session collects now (live: query_back's answer, code and cs; replay: what the
   trace recorded), for the panel and the header. */
static void read_back(struct app *a, ULONG code, const struct etw_client_stats *cs)
{
        if (a->st.is_live) {
                if (code == ERROR_SUCCESS) {
                        profile_set_lost_session(a->profile, cs->nr_events_lost);
                        a->nr_rt_buffers_lost = cs->nr_rt_buffers_lost;
                        /* the first loss, once (perf top's "LOST N chunks" warning), with what
                           to do about it; not over another message */
                        if (cs->nr_events_lost && !a->is_lost_said && !a->st.status[0]) {
                                snprintf(a->st.status, sizeof(a->st.status),
                                         "%" PRIu64 " events lost: the kernel's buffers were "
                                         "full (a busy machine, DWARF stacks, a burst of new "
                                         "processes); --min-buffers N makes them larger",
                                         cs->nr_events_lost);
                                a->is_lost_said = true;
                        }
                }
        } else {
                const struct profile_trace *t = profile_trace(a->profile);
                memcpy(a->now.masks.Masks, t->masks, sizeof(a->now.masks.Masks));
                a->now.interval_100ns = t->interval_100ns;
                a->now.nr_stack_hooks = t->nr_stack_hooks;
                memcpy(a->now.stack_hooks, t->stack_hooks,
                       t->nr_stack_hooks * sizeof(t->stack_hooks[0]));
        }
        struct panel_values pv;
        to_panel(&a->now, &pv);
        session_view_set(a->views[VIEW_SESSION], a->st.is_live, &a->caps, &pv);
}

/* ---- rows ---- */

/* The rows a refresh looks up the callers of and makes the text of (functions_view_show): those
   the screen shows (vs.top on, as many as the terminal's lines at least: a resize's taller list
   is covered before its first draw), unless it sorts, filters or searches them, or a search or
   filter is being typed (every row then: they read every row's text); the text frames print
   every row's. Returns how many (0: every row). (A floor of 128 rows, which covered a resize
   before, had 2.5 times a 50-line terminal's rows looked up and ordered at every refresh:
   bench/README.md, issue 25, stop 78.) */
static uint32_t functions_shown(struct app *a, uint32_t *top, uint64_t *cursor_key)
{
        const struct ui_view_state *vs = &a->vs[VIEW_FUNCTIONS];
        *top = 0;
        *cursor_key = 0;
        if (!a->scr || vs->has_sorted || vs->filter[0] || vs->search[0] ||
            ui_screen_is_input(a->scr))
                return 0;
        const uint32_t *rows;
        uint32_t page = ui_screen_shown_rows(a->scr, &a->tables[VIEW_FUNCTIONS], vs, &rows);
        uint32_t lines = ui_screen_lines(a->scr);
        page = page > lines ? page : lines;
        /* the draw brings the cursor (a key moved it) into the rows shown */
        uint32_t from = vs->top < vs->cursor ? vs->top : vs->cursor;
        uint32_t to = (vs->top > vs->cursor ? vs->top : vs->cursor) + page;
        *top = from;
        *cursor_key = vs->has_moved ? vs->cursor_key : 0;
        return to - from;
}

/* After a key moved the screen's rows: the functions view built again when the rows it shows
   now are not among those whose callers the last build looked up. */
static void functions_follow(struct app *a)
{
        uint32_t top;
        uint64_t cursor_key;
        uint32_t nr = functions_shown(a, &top, &cursor_key);
        if (functions_view_covers(a->views[VIEW_FUNCTIONS], top, nr) || !a->has_built)
                return;
        functions_view_show(a->views[VIEW_FUNCTIONS], top, nr, cursor_key);
        a->views[VIEW_FUNCTIONS]->build(a->views[VIEW_FUNCTIONS], &a->build_ctx,
                                        &a->tables[VIEW_FUNCTIONS]);
}

void app_build_tables(struct app *a)
{
        struct etw_client_stats cs = {0};
        ULONG code = query_back(a, &cs);
        sym_store_poll(profile_store(a->profile));
        read_back(a, code, &cs);
        profile_catch_up(a->profile);
        /* the source the functions view shows: the one chosen while the trace has it, else the
           first seen (a perf.data's PMC events have no timer) */
        uint16_t sources[AGG_MAX_SOURCES];
        uint32_t nr = hot_sources(profile_hot(a->profile), sources, AGG_MAX_SOURCES);
        uint16_t shown = nr ? sources[0] : HOT_SOURCE_TIMER;
        int named = a->o->source && a->source_chosen < 0
                            ? source_pick(a->profile, sources, nr, a->o->source)
                            : -1;
        if (named >= 0)
                shown = sources[named];
        else if (a->o->source && a->source_chosen < 0 && nr && !a->is_source_said) {
                char list[256];
                source_pick_list(a->profile, sources, nr, list, sizeof(list));
                snprintf(a->st.status, sizeof(a->st.status),
                         "--source %.64s: no such samples (yet): the trace samples %s",
                         a->o->source, list);
                a->is_source_said = true;
        }
        for (uint32_t i = 0; i < nr; i++)
                if ((int32_t)sources[i] == a->source_chosen)
                        shown = sources[i];
        a->source_shown = shown;
        a->nr_sources = nr;
        char name[64];
        snprintf(a->source_name, sizeof(a->source_name), "%s",
                 profile_source_name(a->profile, shown, name, sizeof(name)));
        struct ui_build_ctx m = {a->profile, a->st.is_live,
                                 a->caps.has_lbr ? "" : a->caps.why_no_lbr, shown};
        a->build_ctx = m;
        a->has_built = true;
        uint32_t top;
        uint64_t cursor_key;
        uint32_t nr_shown = functions_shown(a, &top, &cursor_key);
        functions_view_show(a->views[VIEW_FUNCTIONS], top, nr_shown, cursor_key);
        for (uint32_t v = 0; v < NR_VIEWS; v++)
                a->views[v]->build(a->views[v], &m, &a->tables[v]);
        a->nr_samples_shown = hot_nr_samples(profile_hot(a->profile), shown);
        profile_caps(a->profile, &a->caps_shown);
        /* a replay's callers by process or thread (p) or top-down tree (c) asked for after
           samples came: the trace read again, so that they count every sample as the rows do
           (live: from now on, the view's title says since when) */
        if (!a->st.is_live && !functions_view_ask(a->views[VIEW_FUNCTIONS], a->profile))
                app_read_again(a, !functions_view_is_top_down(a->views[VIEW_FUNCTIONS]));
}

void app_header(struct app *a, char lines[HEADER_LINES][HEADER_WIDTH], uint32_t *nr)
{
        const struct profile *p = a->profile;
        uint64_t total = feed_nr_buffers(a->feed);
        struct header_info h = {
                .is_live = a->st.is_live,
                .logger_name = a->st.is_live ? a->client.logger_name : KERNEL_LOGGER_NAMEA,
                .record_path = a->o->record_path,
                .replay_path = a->o->replay_path,
                .events_per_s = a->events_per_s,
                .nr_events = profile_nr_events(p),
                .nr_samples = a->nr_samples_shown,
                .nr_lost = profile_nr_lost(p) + feed_nr_dropped(a->feed),
                .nr_rt_buffers_lost = a->nr_rt_buffers_lost,
                .is_paused = a->st.is_paused,
                .zoom_pid = profile_zoom_pid(p),
                .traced_pid = a->st.is_live ? 0 : profile_trace(p)->traced_pid,
                /* read when the loop met the end, not when the feed did: the trace's end
                   changes the rows (profile_end) */
                .loading_pct = !a->st.is_live && !a->is_read && total
                                       ? (int)(100 * feed_nr_buffers_read(a->feed) / total)
                                       : -1,
                .is_loading_names = !a->st.is_live && a->is_read && a->is_naming,
                .settings = &a->now,
                .has_stacks = profile_trace(p)->nr_stacks > 0,
                .delay_s = a->st.delay_s,
                .caps = &a->caps,
        };
        h.model_caps = a->caps_shown;
        /* the source named where there are others, or it is not the timer */
        if (a->nr_sources > 1 || (a->nr_sources == 1 && a->source_shown != HOT_SOURCE_TIMER))
                h.shown_source = a->source_name;
        if (!a->st.is_live)
                header_trace_text(p, &h);
        struct profile_unwind unwind = profile_trace(p)->unwind;
        if (profile_trace(p)->has_unwind)
                h.unwind = &unwind;
        *nr = header_lines(&h, lines);
}

/* ---- reactions ---- */

/* The panel's edit, applied to the session in one call path; the marks follow what the
   session then reports, the status line says what happened. */
static void apply_edit(struct app *a)
{
        struct panel_values want;
        const char *name;
        if (!session_view_pending(a->views[VIEW_SESSION], &want, &name))
                return;
        struct collect_settings next = a->now;
        from_panel(&want, &next);
        char why[512] = "";
        ULONG st = etw_client_apply(&a->client, &next, why, sizeof(why));
        struct etw_client_stats cs = {0};
        ULONG code = query_back(a, &cs);
        read_back(a, code, &cs);
        session_view_result(a->views[VIEW_SESSION], st, why, a->st.status, sizeof(a->st.status));
}

/* S: the source after the one shown, in hot_sources' order (the trace's declared order). */
static void next_source(struct app *a)
{
        uint16_t sources[AGG_MAX_SOURCES];
        char name[64];
        uint32_t nr = hot_sources(profile_hot(a->profile), sources, AGG_MAX_SOURCES), i = 0;
        while (i < nr && sources[i] != a->source_shown)
                i++;
        if (nr > 1) {
                uint16_t next = sources[i + 1 < nr ? i + 1 : 0];
                a->source_chosen = next;
                snprintf(a->st.status, sizeof(a->st.status),
                         "hot functions: %s's samples (%u of %u sources)",
                         profile_source_name(a->profile, next, name, sizeof(name)),
                         (i + 1 < nr ? i + 1 : 0) + 1, nr);
        } else {
                snprintf(a->st.status, sizeof(a->st.status), "S: the trace samples %s source",
                         nr ? "one" : "no");
        }
}

static void react(struct app *a, unsigned r)
{
        if (r & UI_SOURCE)
                next_source(a);
        if (r & UI_QUIT)
                a->is_quit = true;
        if (r & (UI_ZERO | UI_SET_MODE | UI_ZOOM)) {
                if (r & UI_ZERO)
                        profile_zero(a->profile);
                if (r & UI_SET_MODE)
                        profile_set_mode(a->profile, (enum agg_mode)a->st.mode);
                if (r & UI_ZOOM)
                        profile_zoom(a->profile, a->st.zoom_pid);
        }
        if (r & UI_MOVE_WINDOW)
                app_move_window(a, a->st.window_step);
        if (r & UI_TIMELINE)
                app_timeline_key(a, (enum ui_timeline_op)a->st.timeline_op);
        if (r & UI_ANNOTATE)
                app_annotate_page(a, a->st.annotate);
        if (r & UI_SAVE)
                app_save_window(a);
        if (r & UI_APPLY)
                apply_edit(a);
        if (r & UI_REBUILD)
                app_build_tables(a);
        if (r & UI_TO_TOP)
                a->vs[a->st.view].is_to_top = true;
        if (r & UI_REVEAL)
                a->vs[a->st.view].is_reveal = true;
}

/* ---- the loops ---- */

/* A message stays on the status line for STATUS_NS, then goes. */
#define STATUS_NS 5000000000ll

static void age_status(struct app *a, int64_t now)
{
        if (strcmp(a->st.status, a->status_shown) != 0) {
                snprintf(a->status_shown, sizeof(a->status_shown), "%s", a->st.status);
                a->status_since_ns = now;
        } else if (a->st.status[0] && !a->st.is_paused && now - a->status_since_ns > STATUS_NS) {
                a->st.status[0] = a->status_shown[0] = 0;
        }
}

static void draw(struct app *a)
{
        age_status(a, app_now_ns());
        char hl[HEADER_LINES][HEADER_WIDTH];
        uint32_t nr;
        app_header(a, hl, &nr);
        const char *lines[HEADER_LINES] = {hl[0], hl[1], hl[2], hl[3]};
        const char *tabs[NR_VIEWS];
        for (uint32_t v = 0; v < NR_VIEWS; v++)
                tabs[v] = a->views[v]->name;
        struct ui_timeline *tl = &a->tl;
        if (!a->st.is_live) {
                /* the trace's span is known from its header once its first event is read */
                int64_t span = profile_trace(a->profile)->timeline_span_ns;
                tl->slots = profile_trace(a->profile)->timeline;
                tl->nr = PROFILE_TIMELINE_SLOTS;
                if (span > 0 && tl->span_ns != span) {
                        tl->span_ns = span;
                        tl->view_from = 0;
                        tl->view_to = span;
                }
        }
        struct ui_frame f = {.timeline = !a->st.is_live && tl->span_ns > 0 ? tl : NULL,
                             .header = lines,
                             .nr_header = nr,
                             .tabs = tabs,
                             .nr_tabs = NR_VIEWS,
                             .current_tab = a->st.view,
                             .status = a->st.status,
                             .view = a->views[a->st.view],
                             .is_help = a->st.is_help,
                             .page = (const char *const *)a->page,
                             .nr_page = a->nr_page,
                             .page_top = a->page_top};
        ui_screen_draw(a->scr, &f, &a->tables[a->st.view], &a->vs[a->st.view]);
}

static int signals_fd(sigset_t *old)
{
        sigset_t mask;
        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGHUP);
        sigprocmask(SIG_BLOCK, &mask, old);
        return signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* Takes the signal sfd holds (restoring the mask must not deliver it to curses' handler, which
   exits 1) and says what it means. */
const char *app_signal_taken(int sfd)
{
        struct signalfd_siginfo si;
        if (read(sfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
                return "interrupted";
        return si.ssi_signo == SIGINT   ? "interrupted"
               : si.ssi_signo == SIGHUP ? "the terminal closed"
                                        : "terminated";
}

/* One key: the browser's, else the view's table, else the common table. */
static void on_key(struct app *a, int key)
{
        if (a->st.is_help) {
                if (!ui_screen_help_key(a->scr, key)) /* scrolls it, or closes it */
                        a->st.is_help = false;
                return;
        }
        if (a->page) {
                /* the annotate page: scroll it, or close it */
                if (!ui_screen_page_key(key, &a->page_top, a->nr_page)) {
                        app_page_close(a);
                        a->st.status[0] = '\0';
                }
                return;
        }
        uint32_t v = a->st.view;
        uint64_t row_key = 0;
        if (ui_screen_browse(a->scr, &key, &a->vs[v], &a->tables[v], &row_key)) {
                if (v == VIEW_FUNCTIONS)
                        functions_follow(a);
                return;
        }
        struct ui_key_ctx ctx = {
                .st = &a->st, .view = a->views[v], .table = &a->tables[v], .row_key = row_key};
        ctx.nr_shown = ui_screen_shown_rows(a->scr, &a->tables[v], &a->vs[v], &ctx.shown);
        react(a, ui_key_dispatch(&ctx, key));
}

static void run_screen(struct app *a, int sfd)
{
        int64_t start = app_now_ns(), last = start;
        bool was_done = false, has_key = false, has_backlog = false;
        uint32_t nr_reads = a->nr_reads;
        app_build_tables(a);
        draw(a);
        while (!a->is_quit) {
                if (nr_reads != a->nr_reads) {
                        /* the file read again (a range): its end is still to come, even where
                           the reading was over before the loop looked */
                        nr_reads = a->nr_reads;
                        was_done = a->is_read = false;
                }
                int64_t delay = (int64_t)(a->st.delay_s * 1e9);
                /* a negative fd (no signalfd) is left out by poll */
                struct pollfd p[3] = {
                        {STDIN_FILENO, POLLIN, 0}, {sfd, POLLIN, 0}, {feed_fd(a->feed), POLLIN, 0}};
                int64_t wait = last + delay - app_now_ns();
                if (!a->st.is_live && (!was_done || a->is_naming))
                        wait = 100000000; /* loading: the progress moves, names come */
                if (has_backlog || !feed_arm(a->feed))
                        wait = 0; /* records to decode: a look at the keys only */
                int n = poll(p, 3, wait > 0 ? (int)(wait / 1000000) + 1 : 0);
                if (n > 0 && sfd >= 0 && (p[1].revents & POLLIN)) {
                        a->why_stopped = app_signal_taken(sfd);
                        break;
                }
                bool is_dirty = false;
                int key;
                while ((key = ui_screen_getkey(a->scr)) >= 0) {
                        on_key(a, key);
                        is_dirty = has_key = true;
                }
                has_backlog = feed_drain(a->feed, FEED_SLICE_NS);
                int64_t now = app_now_ns();
                app_upkeep(a, now);
                ULONG status = ERROR_SUCCESS;
                bool is_done = feed_is_done(a->feed, &status);
                /* live, a refresh due in delay/4 (<= 250 ms) is made at a delivery: one wake-up */
                bool is_early = a->st.is_live && n > 0 && (p[2].revents & POLLIN);
                int64_t early = is_early ? (delay < 1000000000 ? delay / 4 : 250000000) : 0;
                /* a replay's names that came: its rows again now, and the header's
                   "loading" gone with the last */
                bool has_names =
                        a->is_naming && !a->st.is_paused &&
                        sym_store_generation(profile_store(a->profile)) != a->naming_generation;
                if (now >= last + delay - early || (is_done && !was_done) || has_names) {
                        is_dirty = true;
                        if (!a->st.is_live && is_done && !was_done)
                                app_replay_read(a, has_key);
                        app_tick(a, now);
                        was_done = is_done;
                        a->is_read = !a->st.is_live && is_done;
                        /* the next refresh a delay after this one's end: one slower than the
                           delay (a large model, a loaded machine) still leaves the delay to
                           decode what the feed hands over meanwhile */
                        last = app_now_ns();
                }
                if (a->st.is_live && is_done && status != ERROR_SUCCESS)
                        snprintf(a->st.status, sizeof(a->st.status), "the session stopped (%u)",
                                 (unsigned)status);
                if (a->o->duration_s > 0 && now - start >= (int64_t)(a->o->duration_s * 1e9))
                        break;
                if (is_dirty)
                        draw(a);
        }
}

/* ---- start and end ---- */

static int live_start(struct app *a, char *err, size_t err_size)
{
        const struct app_options *o = a->o;
        struct collect_settings s = o->collect;
        s.pid = -1; /* -p: the session stays system-wide (the kernel logger is), the views zoom */
        struct etw_client_options co = {
                .file = o->record_path,
                .max_file_mb = o->max_file_mb,
                .buffer_size_kb = o->buffer_size_kb,
                .min_buffers = o->min_buffers,
                .is_force = o->is_force,
                .is_real_time = true,
                .max_buffers = RT_MAX_BUFFERS,
                /* the save key's; -b has none (64 MiB of buffers it would fill for nothing) */
                .keep_window_bytes = o->is_batch ? 0 : WINDOW_KEPT_BYTES,
        };
        char why[512];
        if (o->attach_name) {
                /* another's session: its settings are read back at the first refresh; the
                   save key's window is kept in the host (a second keeper changes nothing) */
                if (etw_client_attach(&a->client, o->attach_name, why, sizeof(why)) < 0) {
                        snprintf(err, err_size, "%s", why);
                        return -1;
                }
                if (!o->is_batch)
                        etw_keep_window(a->client.id, WINDOW_KEPT_BYTES);
        } else if (etw_client_start(&a->client, &co, &s, why, sizeof(why)) < 0) {
                snprintf(err, err_size, "%s", why);
                return -1;
        }
        return feed_open(&a->feed, a->profile, NULL, a->client.logger_name, true, err, err_size);
}

int app_run(const struct app_options *o, char *err, size_t err_size)
{
        /* blocked before any thread starts (the symbol loader, the session's logger, the
           consumer), so that none of them takes Ctrl-C, SIGTERM or SIGHUP: the loop reads them */
        sigset_t old;
        int sfd = signals_fd(&old);
        /* before the first table, and before the session host is forked: it runs as long */
        mem_policy_long_run();
        /* the session host forked while this process is small, with one thread (the symbol
           loader's starts with the model): a fork made at the session's start shared the
           model's tables, and each first write to one of their pages was then a copy and a
           page fault with a flush of the other CPUs' TLBs. Where it cannot start, the session's
           start says why (not where -p names no process: nothing would start). */
        bool is_pid_gone = false;
        if (!o->replay_path && o->collect.pid > 0) {
                char path[32];
                snprintf(path, sizeof(path), "/proc/%d", (int)o->collect.pid);
                is_pid_gone = access(path, F_OK) != 0;
        }
        if (!o->replay_path && !o->attach_name && !is_pid_gone)
                etw_host_prestart();
        struct app *a = xcalloc(1, sizeof(*a));
        int rc = -1;
        struct etw_client_stats st = {0};
        ULONG stopped;
        a->o = o;
        a->st.is_live = !o->replay_path;
        a->st.nr_views = NR_VIEWS;
        a->st.delay_s = o->delay_s > 0 ? o->delay_s : 1.0;
        a->source_chosen = -1;
        a->now = o->collect;
        if (a->st.is_live)
                etw_query_machine_caps(&a->caps);
        else
                memset(&a->now.masks, 0, sizeof(a->now.masks)); /* the recording's come with it */
        struct profile_options po = {.symbol_path = o->symbol_path,
                                     .nr_symbol_path = o->nr_symbol_path,
                                     .is_live = a->st.is_live,
                                     .is_synchronous = o->is_batch,
                                     .is_no_demangle = o->is_no_demangle,
                                     .max_functions = MAX_FUNCTIONS,
                                     /* -b prints the tables, never a tree */
                                     .has_call_tree = !o->is_batch};
        a->profile = profile_new(&po);
        a->views[VIEW_FUNCTIONS] = functions_view_new();
        functions_view_set_group(a->views[VIEW_FUNCTIONS], (enum functions_group)o->group);
        /* the callers its rows show are counted from the first event */
        functions_view_ask(a->views[VIEW_FUNCTIONS], a->profile);
        a->views[VIEW_BRANCHES] = branches_view_new();
        a->views[VIEW_SWITCHES] = switches_view_new();
        a->views[VIEW_SESSION] = session_view_new();
        a->views[VIEW_EVENTS] = events_view_new();
        for (uint32_t v = 0; v < NR_VIEWS; v++)
                ui_table_init(&a->tables[v], a->views[v]->cols, a->views[v]->nr_cols);

        if (a->st.is_live && o->collect.pid > 0) {
                /* -p: the views count the process only, as t does */
                if (is_pid_gone) {
                        snprintf(err, err_size, "-p %d: no such process", (int)o->collect.pid);
                        goto out;
                }
                a->st.zoom_pid = (uint32_t)o->collect.pid;
                profile_zoom(a->profile, a->st.zoom_pid);
        }
        if (!a->st.is_live && (o->has_from || o->has_to)) {
                /* --from/--to: the range ( and ) would choose, before the file is read */
                int64_t from = o->has_from ? feed_seconds_ns(o->from_s) : 0;
                int64_t to = o->has_to ? feed_seconds_ns(o->to_s) : INT64_MAX;
                profile_set_window(a->profile, true, from, to);
                a->tl.cursor = a->tl.sel_from = from;
                a->tl.sel_to = o->has_to ? to : 0;
        }
        if (a->st.is_live ? live_start(a, err, err_size) < 0
                          : feed_open(&a->feed, a->profile, o->replay_path, NULL, true, err,
                                      err_size) < 0)
                goto out;
        if (feed_start(a->feed) < 0) {
                snprintf(err, err_size, "cannot start the consumer thread");
                goto out;
        }
        a->rate_since_ns = a->upkeep_ns = app_now_ns();
        if (o->is_batch) {
                app_run_batch(a, sfd);
                rc = 0;
        } else if (ui_screen_open(&a->scr, o->is_mono) < 0) {
                /* as top does on such a terminal: text frames instead of a garbled screen */
                fprintf(stderr,
                        "etwtop: TERM=%s cannot draw the screen (no cursor addressing): text "
                        "frames follow, as with -b (Ctrl-C ends them)\n",
                        getenv("TERM") ? getenv("TERM") : "");
                app_run_batch(a, sfd);
                rc = 0;
        } else {
                run_screen(a, sfd);
                ui_screen_close(a->scr);
                a->scr = NULL;
                rc = 0;
        }
out:
        /* the consumer goes first (an attached session keeps running): the end, read by nobody,
           is not written; a recording's ends first (its consumer's ProcessTrace ends with it) */
        if (!o->record_path)
                feed_close(a->feed);
        if (a->client.is_attached) {
                etw_client_detach(&a->client);
                stopped = ERROR_SUCCESS;
        } else {
                stopped = etw_client_stop(&a->client, &st);
        }
        if (o->record_path && rc == 0 && stopped == ERROR_SUCCESS) {
                /* the summary --record prints without the screen */
                record_progress(STDERR_FILENO, &st, true);
                if (a->why_stopped)
                        dprintf(STDERR_FILENO, "recording stopped: %s; %s is complete\n",
                                a->why_stopped, o->record_path);
        } else if (o->record_path && stopped == ERROR_WMI_INSTANCE_NOT_FOUND) {
                /* it stopped itself (its maximum file size, a full disk): the API says why */
                dprintf(STDERR_FILENO, "etwtop: recording stopped: %s; %s holds what was written\n",
                        etw_last_error_text(), o->record_path);
        } else if (stopped != ERROR_SUCCESS && stopped != ERROR_WMI_INSTANCE_NOT_FOUND) {
                /* a stop that failed (a host too busy to answer in time) leaves the session
                   running, and the next start of its name fails: say so, and how to end it */
                dprintf(STDERR_FILENO,
                        "etwtop: ControlTrace(STOP) of \"%s\" failed: %s (Win32 error %lu); it "
                        "may still run: etwtop --stop \"%s\" ends it\n",
                        a->client.logger_name, etw_last_error_text(), (unsigned long)stopped,
                        a->client.logger_name);
                if (rc == 0)
                        rc = 1;
        }
        if (sfd >= 0)
                close(sfd);
        sigprocmask(SIG_SETMASK, &old, NULL);
        if (o->record_path)
                feed_close(a->feed);
        for (uint32_t v = 0; v < NR_VIEWS; v++) {
                ui_table_fini(&a->tables[v]);
                if (a->views[v])
                        a->views[v]->free(a->views[v]);
        }
        profile_free(a->profile);
        free(a);
        return rc;
}
