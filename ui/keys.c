/* SPDX-License-Identifier: MIT */
/* keys.c: owns the common key table, key dispatch, the help screen's lines and the function-key
   bar, all read from the tables; and the set of expanded tree rows. */
#include "ui/view.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/aggregate.h"
#include "util/xalloc.h"

#define DELAY_MIN_S 0.1
#define DELAY_MAX_S 60.0

static unsigned act_help(struct ui_key_ctx *c)
{
        c->st->is_help = !c->st->is_help;
        return UI_REDRAW;
}

static unsigned act_quit(struct ui_key_ctx *c)
{
        (void)c;
        return UI_QUIT;
}

static unsigned show_view(struct ui_key_ctx *c, uint32_t v)
{
        c->st->view = v % c->st->nr_views;
        return UI_REDRAW;
}

static unsigned act_next_view(struct ui_key_ctx *c)
{
        return show_view(c, c->st->view + 1);
}

static unsigned act_prev_view(struct ui_key_ctx *c)
{
        return show_view(c, c->st->view + c->st->nr_views - 1);
}

static unsigned act_view_1(struct ui_key_ctx *c)
{
        return show_view(c, 0);
}

static unsigned act_view_2(struct ui_key_ctx *c)
{
        return show_view(c, 1);
}

static unsigned act_view_3(struct ui_key_ctx *c)
{
        return show_view(c, 2);
}

static unsigned act_view_4(struct ui_key_ctx *c)
{
        return show_view(c, 3);
}

static unsigned act_view_5(struct ui_key_ctx *c)
{
        return show_view(c, 4);
}

/* The list browser's keys (cursor, sort, search, filter) are taken by ui_screen_key before
   dispatch; their entries are here for the help screen. */
static unsigned act_browser(struct ui_key_ctx *c)
{
        (void)c;
        return UI_REDRAW;
}

static unsigned act_pause(struct ui_key_ctx *c)
{
        c->st->is_paused = !c->st->is_paused;
        snprintf(c->st->status, sizeof(c->st->status), "%s",
                 c->st->is_paused ? "display paused (collection goes on); Space resumes" : "");
        return UI_REDRAW | (c->st->is_paused ? 0 : UI_REBUILD);
}

static unsigned act_zero(struct ui_key_ctx *c)
{
        if (!c->st->is_live) {
                /* nothing new comes after a replay's end: zeroing would only empty the view */
                snprintf(c->st->status, sizeof(c->st->status),
                         "z: a replay counts the whole trace ([ ] choose a part of it)");
                return UI_REDRAW;
        }
        snprintf(c->st->status, sizeof(c->st->status), "counts zeroed");
        return UI_ZERO | UI_REBUILD | UI_REDRAW;
}

static unsigned act_mode(struct ui_key_ctx *c)
{
        c->st->mode = (c->st->mode + 1) % 3;
        snprintf(c->st->status, sizeof(c->st->status), "aggregation: %s",
                 agg_mode_name((enum agg_mode)c->st->mode));
        return UI_SET_MODE | UI_REBUILD | UI_REDRAW;
}

/* S: the next profile source (timer, cycles, instructions...) for the functions view; the
   loop says which, the header names it */
static unsigned act_source(struct ui_key_ctx *c)
{
        (void)c;
        return UI_SOURCE | UI_REBUILD | UI_REDRAW | UI_TO_TOP;
}

static unsigned act_save(struct ui_key_ctx *c)
{
        (void)c;
        return UI_SAVE | UI_REDRAW;
}

static unsigned set_delay(struct ui_key_ctx *c, double d)
{
        if (d < DELAY_MIN_S)
                d = DELAY_MIN_S;
        if (d > DELAY_MAX_S)
                d = DELAY_MAX_S;
        c->st->delay_s = d;
        snprintf(c->st->status, sizeof(c->st->status), "refresh every %.1f s", d);
        return UI_REDRAW;
}

static unsigned act_faster(struct ui_key_ctx *c)
{
        return set_delay(c, c->st->delay_s / 2);
}

static unsigned act_slower(struct ui_key_ctx *c)
{
        return set_delay(c, c->st->delay_s * 2);
}

static unsigned move_window(struct ui_key_ctx *c, int step)
{
        if (c->st->is_live) {
                snprintf(c->st->status, sizeof(c->st->status),
                         "[ ]: the time window is for replays");
                return UI_REDRAW;
        }
        c->st->window_step = step;
        return UI_MOVE_WINDOW | UI_REBUILD | UI_REDRAW;
}

static unsigned timeline(struct ui_key_ctx *c, enum ui_timeline_op op)
{
        if (c->st->is_live) {
                snprintf(c->st->status, sizeof(c->st->status), "the timeline is for replays");
                return UI_REDRAW;
        }
        c->st->timeline_op = (int)op;
        return UI_TIMELINE | UI_REDRAW;
}

static unsigned act_tl_left(struct ui_key_ctx *c)
{
        return timeline(c, UI_TL_LEFT);
}

static unsigned act_tl_right(struct ui_key_ctx *c)
{
        return timeline(c, UI_TL_RIGHT);
}

static unsigned act_tl_start(struct ui_key_ctx *c)
{
        return timeline(c, UI_TL_START);
}

static unsigned act_tl_end(struct ui_key_ctx *c)
{
        return timeline(c, UI_TL_END);
}

static unsigned act_tl_zoom_in(struct ui_key_ctx *c)
{
        return timeline(c, UI_TL_ZOOM_IN);
}

static unsigned act_tl_zoom_out(struct ui_key_ctx *c)
{
        return timeline(c, UI_TL_ZOOM_OUT);
}

static unsigned act_window_back(struct ui_key_ctx *c)
{
        return move_window(c, -1);
}

static unsigned act_window_fwd(struct ui_key_ctx *c)
{
        return move_window(c, 1);
}

/* t: the views count the process of the row only, from now on; again: every process. */
static unsigned act_zoom(struct ui_key_ctx *c)
{
        uint32_t pid = 0;
        if (!c->st->zoom_pid) {
                pid = c->view->row_pid(c->view, c->table, c->row_key);
                if (!pid) {
                        snprintf(c->st->status, sizeof(c->st->status),
                                 "t: no process on this row (the switches view's threads and "
                                 "processes have one)");
                        return UI_REDRAW;
                }
        }
        c->st->zoom_pid = pid;
        if (pid)
                snprintf(c->st->status, sizeof(c->st->status),
                         "only process %u from now on (t again: every process)", pid);
        else
                snprintf(c->st->status, sizeof(c->st->status), "every process again, from now on");
        return UI_ZOOM | UI_REBUILD | UI_REDRAW;
}

uint32_t ui_no_row_pid(const struct ui_view *v, const struct ui_table *t, uint64_t row_key)
{
        (void)v;
        (void)t;
        (void)row_key;
        return 0;
}

static const struct ui_key common_keys[] = {
        {KEY_F(1), "F1 h ?", act_help, "this help", "Help"},
        {'h', NULL, act_help, NULL, NULL},
        {'?', NULL, act_help, NULL, NULL},
        {KEY_F(10), "F10 q", act_quit, "quit", "Quit"},
        {'q', NULL, act_quit, NULL, NULL},
        {'\t', "Tab", act_next_view, "next view", NULL},
        {KEY_BTAB, "Shift-Tab", act_prev_view, "previous view", NULL},
        {'1', "1", act_view_1, "view: hot functions and the call tree", NULL},
        {'2', "2", act_view_2, "view: hot branch edges (LBR)", NULL},
        {'3', "3", act_view_3, "view: context switches and waits", NULL},
        {'4', "4 F9", act_view_4,
         "view: the session panel (group masks, stack hooks, LBR, PMC source, interval)", NULL},
        {KEY_F(9), NULL, act_view_4, NULL, "Session"},
        {'5', "5", act_view_5,
         "view: the trace's events by type (Enter: a type's events with their fields)", NULL},
        {KEY_UP, "Up Down", act_browser, "move the cursor", NULL},
        {KEY_PPAGE, "PgUp PgDn", act_browser, "move a page", NULL},
        {KEY_HOME, "Home End", act_browser, "first / last row", NULL},
        {KEY_LEFT, "Left Right", act_browser, "scroll the rows sideways", NULL},
        {KEY_F(6), "F6 < >", act_browser, "sort by the next / previous column", "Sort"},
        {'I', "I", act_browser, "invert the sort order", NULL},
        {KEY_F(3), "F3 /", act_browser, "search (n: next match)", "Search"},
        {KEY_F(4), "F4 \\", act_browser, "filter rows by text (Esc clears)", "Filter"},
        {' ', "Space Z", act_pause, "pause the display (collection goes on)", NULL},
        {'Z', NULL, act_pause, NULL, NULL},
        {'z', "z", act_zero, "zero the counts", NULL},
        {'m', "m", act_mode, "aggregation: cumulative, decaying, zeroed each refresh", NULL},
        {'S', "S", act_source,
         "hot functions: the next profile source (timer, cycles, instructions...) where the "
         "trace samples several (the header names it)",
         NULL},
        {'d', "d D", act_faster, "refresh faster / slower (the header shows the interval)", NULL},
        {'D', NULL, act_slower, NULL, NULL},
        {KEY_F(2), "F2 W", act_save,
         "save the recent events to a .etl file (a replay: its profile as pprof)", "Save"},
        {'W', NULL, act_save, NULL, NULL},
        {'t', "t", act_zoom,
         "count only the process of the row (a thread, a process), from now on, in every view; "
         "again: every process",
         NULL},
        {'[', "[ ]", act_window_back, "replay: move the time window back / forward", NULL},
        {']', NULL, act_window_fwd, NULL, NULL},
        {'{', "{ }", act_tl_left, "replay: move the timeline's cursor left / right", NULL},
        {'}', NULL, act_tl_right, NULL, NULL},
        {'(', "( )", act_tl_start,
         "replay: the range starts / ends at the timeline's cursor (every view shows it)", NULL},
        {')', NULL, act_tl_end, NULL, NULL},
        {'=', "= #", act_tl_zoom_in,
         "replay: zoom the timeline into the range / out to the whole trace", NULL},
        {'#', NULL, act_tl_zoom_out, NULL, NULL},
};

const struct ui_key *ui_common_keys(uint32_t *nr_out)
{
        *nr_out = sizeof(common_keys) / sizeof(common_keys[0]);
        return common_keys;
}

static const struct ui_key *find_in(const struct ui_key *k, uint32_t n, int key)
{
        for (uint32_t i = 0; i < n; i++)
                if (k[i].key == key)
                        return &k[i];
        return NULL;
}

const struct ui_key *ui_key_find(const struct ui_view *v, int key)
{
        const struct ui_key *k = v ? find_in(v->keys, v->nr_keys, key) : NULL;
        if (!k)
                k = find_in(common_keys, sizeof(common_keys) / sizeof(common_keys[0]), key);
        return k;
}

unsigned ui_key_dispatch(struct ui_key_ctx *ctx, int key)
{
        const struct ui_key *k = ui_key_find(ctx->view, key);
        return k ? k->action(ctx) : 0;
}

static uint32_t add_lines(const struct ui_key *k, uint32_t n, char *lines, uint32_t width,
                          uint32_t at, uint32_t max)
{
        for (uint32_t i = 0; i < n && at < max; i++)
                if (k[i].label)
                        snprintf(lines + (size_t)at++ * width, width, "  %-12s %s", k[i].label,
                                 k[i].help);
        return at;
}

uint32_t ui_help_lines(const struct ui_view *v, char *lines, uint32_t width, uint32_t max)
{
        uint32_t at = 0;
        if (v && v->nr_keys && at < max)
                snprintf(lines + (size_t)at++ * width, width, "%s:", v->name);
        if (v)
                at = add_lines(v->keys, v->nr_keys, lines, width, at, max);
        if (at < max)
                snprintf(lines + (size_t)at++ * width, width, "Every view:");
        return add_lines(common_keys, sizeof(common_keys) / sizeof(common_keys[0]), lines, width,
                         at, max);
}

static void bar_add(const struct ui_key *k, uint32_t n, int fkey, char *buf, uint32_t size)
{
        for (uint32_t i = 0; i < n; i++)
                if (k[i].key == KEY_F(fkey) && k[i].bar) {
                        size_t len = strlen(buf);
                        snprintf(buf + len, size - len, "%sF%d%s", len ? " " : "", fkey, k[i].bar);
                        return;
                }
}

void ui_key_bar(const struct ui_view *v, char *buf, uint32_t size)
{
        buf[0] = 0;
        for (int f = 1; f <= 12; f++) {
                size_t before = strlen(buf);
                if (v)
                        bar_add(v->keys, v->nr_keys, f, buf, size);
                if (strlen(buf) == before)
                        bar_add(common_keys, sizeof(common_keys) / sizeof(common_keys[0]), f, buf,
                                size);
        }
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, " Tab:view Space:pause");
}

/* ---- the set of expanded rows ---- */

static uint32_t slot_of(uint64_t key, uint32_t mask)
{
        return (uint32_t)(key * 0x9E3779B97F4A7C15ull >> 40) & mask;
}

bool ui_key_set_has(const struct ui_key_set *s, uint64_t key)
{
        if (!s->slots || !key)
                return false;
        for (uint32_t j = slot_of(key, s->mask);; j = (j + 1) & s->mask) {
                if (s->slots[j] == key)
                        return true;
                if (!s->slots[j])
                        return false;
        }
}

static void rehash(struct ui_key_set *s, uint32_t cap, uint64_t leave_out)
{
        uint64_t *old = s->slots;
        uint32_t old_cap = old ? s->mask + 1 : 0;
        s->slots = xcalloc(cap, sizeof(*s->slots));
        s->mask = cap - 1;
        s->nr = 0;
        for (uint32_t i = 0; i < old_cap; i++)
                if (old[i] && old[i] != leave_out)
                        ui_key_set_put(s, old[i], true);
        free(old);
}

void ui_key_set_put(struct ui_key_set *s, uint64_t key, bool is_in)
{
        if (!key || ui_key_set_has(s, key) == is_in)
                return;
        if (!is_in) {
                /* removals are rare (a key press): the set is made again without it */
                rehash(s, s->mask + 1, key);
                return;
        }
        if (!s->slots || (s->nr + 1) * 2 > s->mask + 1)
                rehash(s, s->slots ? (s->mask + 1) * 2 : 256, 0);
        uint32_t j = slot_of(key, s->mask);
        while (s->slots[j])
                j = (j + 1) & s->mask;
        s->slots[j] = key;
        s->nr++;
}

void ui_key_set_fini(struct ui_key_set *s)
{
        free(s->slots);
        memset(s, 0, sizeof(*s));
}
