/* SPDX-License-Identifier: MIT */
/* events_view.c: owns the generic events view: every event type of the trace with its count
   (or per process, per thread: p), and Enter on one lists its recent events with their fields
   in columns; Esc goes back; and the text report's table of the types (view_report.h). */
#include "ui/views.h"

#include <curses.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/events_table.h"
#include "model/profile.h"
#include "util/xalloc.h"
#include "view_report.h"

enum events_grouping { GROUP_TYPE, GROUP_PROCESS, GROUP_THREAD, NR_GROUPS };

#define NR_FIELD_COLS 8

enum {
        COL_A, /* Events | Time */
        COL_B, /* % | CPU */
        COL_C, /* Kept | PID */
        COL_D, /* Dropped | TID */
        COL_E, /* PID | field 1 */
        COL_F, /* TID | field 2 */
        COL_G, /* Process | field 3 */
        COL_FIELD1 = COL_E,
        COL_REST = COL_FIELD1 + NR_FIELD_COLS, /* Event type | the other fields */
        NR_COLS
};

/* The types' columns: the per-process and per-thread groupings fill PID, TID and Process. */
static const struct ui_column type_cols[NR_GROUPS][NR_COLS] = {
        [GROUP_TYPE] = {{"Events", UI_COL_U64, 10, 0},
                        {"Share", UI_COL_PCT, 7, 3},
                        {"Kept", UI_COL_U64, 6, 2},
                        {"Dropped", UI_COL_U64, 8, 1},
                        [COL_REST] = {"Event type (Enter: its events)", UI_COL_TEXT, 0, 0}},
        [GROUP_PROCESS] = {{"Events", UI_COL_U64, 10, 0},
                           {"Share", UI_COL_PCT, 7, 3},
                           {NULL, UI_COL_U64, 0, 0},
                           {NULL, UI_COL_U64, 0, 0},
                           {"PID", UI_COL_U64, 7, 2},
                           {NULL, UI_COL_U64, 0, 0},
                           {"Process", UI_COL_TEXT, 16, 1},
                           [COL_REST] = {"Event type (Enter: its events)", UI_COL_TEXT, 0, 0}},
        [GROUP_THREAD] = {{"Events", UI_COL_U64, 10, 0},
                          {"Share", UI_COL_PCT, 7, 3},
                          {NULL, UI_COL_U64, 0, 0},
                          {NULL, UI_COL_U64, 0, 0},
                          {"PID", UI_COL_U64, 7, 2},
                          {"TID", UI_COL_U64, 7, 4},
                          {"Process", UI_COL_TEXT, 16, 1},
                          [COL_REST] = {"Event type (Enter: its events)", UI_COL_TEXT, 0, 0}},
};

/* The text report's: each type's count and share, its name with its version ("name (vN)"). */
static const struct ui_column report_cols[NR_COLS] = {
        [COL_A] = {"Events", UI_COL_U64, 10, 0},
        [COL_B] = {"Share", UI_COL_PCT, 7, 0},
        [COL_C] = {NULL, UI_COL_U64, 0, 0},
        [COL_D] = {NULL, UI_COL_U64, 0, 0},
        [COL_REST] = {"Event type", UI_COL_TEXT, 0, 0},
};

static const struct ui_text_col report_text[NR_COLS] = {
        [COL_A] = {1, 0, false},
        [COL_REST] = {1, 0, false},
};

static const char *const group_names[NR_GROUPS] = {
        "event types", "event types by process (a row per process and type)",
        "event types by thread (a row per thread and type)"};

struct events_view {
        struct ui_view view;
        enum events_grouping group;
        /* the list of one type's events: open when is_list */
        bool is_list;
        uint32_t type_id;
        uint32_t pid, tid; /* only these (0xFFFFFFFF: any) */
        struct ui_column list_cols[NR_COLS];
        char titles[NR_FIELD_COLS][32];
        char field_names[NR_FIELD_COLS][64]; /* the fields shown in columns, by name */
        uint32_t nr_named;
        struct view_report report; /* the text report's table, when it asks for one */
};

#define ANY 0xFFFFFFFFu
/* the row of a type's events in the processes that ended, folded (events_table.h) */
#define EXITED_NAME "[exited processes]"

/* Row keys: a type's is its id + 1; a group row's has KEY_GROUP; an event's is its seq. */
#define KEY_GROUP (1ull << 62)
_Static_assert(EVENTS_TABLE_MAX_TYPES < 0xFFFF, "a type id fits 16 bits of a row key");

static struct events_view *of(struct ui_view *v)
{
        return ui_view_of(v, struct events_view);
}

static uint64_t group_key(const struct events_group *g)
{
        /* the type in bits 46-61 (EVENTS_TABLE_MAX_TYPES fits), the process and thread below */
        uint64_t who =
                ((uint64_t)g->pid << 23 ^ g->tid ^ (uint64_t)g->tid << 17) & ((1ull << 46) - 1);
        return KEY_GROUP | ((uint64_t)g->type_id + 1) << 46 | who;
}

static const char *pid_process(struct profile *p, uint32_t pid)
{
        if (pid == EVENTS_TABLE_EXITED)
                return EXITED_NAME;
        const char *n = pid == ANY ? NULL : switches_process_name(profile_switches(p), pid);
        return n && n[0] ? n : "?";
}

static int cmp_count(const void *a, const void *b)
{
        const struct events_type *x = *(const struct events_type *const *)a;
        const struct events_type *y = *(const struct events_type *const *)b;
        if (x->nr_events != y->nr_events)
                return x->nr_events > y->nr_events ? -1 : 1;
        int c = strcmp(x->name, y->name);
        return c ? c : (x->id < y->id ? -1 : 1);
}

static int cmp_group_count(const void *a, const void *b)
{
        const struct events_group *x = a, *y = b;
        if (x->nr_events != y->nr_events)
                return x->nr_events > y->nr_events ? -1 : 1;
        if (x->type_id != y->type_id)
                return x->type_id < y->type_id ? -1 : 1;
        if (x->pid != y->pid)
                return x->pid < y->pid ? -1 : 1;
        return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static void build_types(struct events_view *ev, struct profile *p, struct ui_table *t)
{
        struct events_table *et = profile_events(p);
        uint64_t total = events_table_total(et);
        if (ev->group == GROUP_TYPE) {
                /* the most frequent first, as -b prints them */
                uint32_t n = events_table_nr_types(et);
                const struct events_type **by_count = xmalloc((n ? n : 1) * sizeof(*by_count));
                for (uint32_t i = 0; i < n; i++)
                        by_count[i] = events_table_type(et, i);
                qsort(by_count, n, sizeof(*by_count), cmp_count);
                for (uint32_t i = 0; i < n; i++) {
                        const struct events_type *ty = by_count[i];
                        if (!ty->nr_events)
                                continue;
                        uint32_t r = ui_table_add(t, (uint64_t)ty->id + 1, 0, 0);
                        ui_table_u64(t, r, COL_A, ty->nr_events);
                        ui_table_pct(t, r, COL_B,
                                     total ? 100.0 * (double)ty->nr_events / (double)total : 0);
                        ui_table_u64(t, r, COL_C, ty->nr_stored);
                        ui_table_u64(t, r, COL_D, ty->nr_dropped);
                        if (ev->report.table) { /* the report's: "name (vN)" */
                                char name[sizeof(ty->name) + 16];
                                snprintf(name, sizeof(name), "%s (v%u)", ty->name, ty->version);
                                ui_table_text(t, r, COL_REST, name);
                        } else {
                                ui_table_text(t, r, COL_REST, ty->name);
                        }
                }
                free(by_count);
                return;
        }
        uint32_t n;
        const struct events_group *answer = events_table_groups(et, ev->group == GROUP_THREAD, &n);
        /* the most frequent first */
        struct events_group *g = xmalloc((n ? n : 1) * sizeof(*g));
        if (n)
                memcpy(g, answer, n * sizeof(*g));
        qsort(g, n, sizeof(*g), cmp_group_count);
        for (uint32_t i = 0; i < n; i++) {
                const struct events_type *ty = events_table_type(et, g[i].type_id);
                if (!ty)
                        continue;
                uint32_t r = ui_table_add(t, group_key(&g[i]), 0, UI_ROW_SPARSE);
                ui_table_u64(t, r, COL_A, g[i].nr_events);
                ui_table_pct(t, r, COL_B,
                             total ? 100.0 * (double)g[i].nr_events / (double)total : 0);
                if (g[i].pid != ANY && g[i].pid != EVENTS_TABLE_EXITED)
                        ui_table_u64(t, r, COL_E, g[i].pid);
                if (g[i].tid != ANY && g[i].tid != EVENTS_TABLE_EXITED)
                        ui_table_u64(t, r, COL_F, g[i].tid);
                ui_table_text(t, r, COL_G, pid_process(p, g[i].pid));
                ui_table_text(t, r, COL_REST, ty->name);
        }
        free(g);
}

/* The list's columns: time, CPU, PID, TID, the type's first fields by name (from its newest
   event), the others as name=value in the last. */
static void list_columns(struct events_view *ev, const struct events_table *et)
{
        struct ui_column *c = ev->list_cols;
        memset(c, 0, sizeof(ev->list_cols));
        c[COL_A] = (struct ui_column){"Time (s)", UI_COL_TEXT, 14, 0};
        c[COL_B] = (struct ui_column){"CPU", UI_COL_U64, 4, 3};
        c[COL_C] = (struct ui_column){"PID", UI_COL_U64, 7, 2};
        c[COL_D] = (struct ui_column){"TID", UI_COL_U64, 7, 1};
        ev->nr_named = 0;
        const struct events_type *ty = events_table_type(et, ev->type_id);
        const struct events_record *r =
                ty && ty->nr_stored ? events_table_record(et, ev->type_id, ty->nr_stored - 1)
                                    : NULL;
        uint32_t pos = 0;
        const char *name, *value;
        int width[NR_FIELD_COLS] = {0};
        while (r && ev->nr_named < NR_FIELD_COLS && events_record_field(r, &pos, &name, &value)) {
                snprintf(ev->field_names[ev->nr_named], sizeof(ev->field_names[0]), "%s", name);
                snprintf(ev->titles[ev->nr_named], sizeof(ev->titles[0]), "%s", name);
                width[ev->nr_named] = (int)strlen(ev->titles[ev->nr_named]);
                ev->nr_named++;
        }
        /* each field's column as wide as its values, up to 32 */
        for (uint32_t i = 0; ty && i < ty->nr_stored; i++) {
                r = events_table_record(et, ev->type_id, i);
                pos = 0;
                for (uint32_t f = 0;
                     f < ev->nr_named && events_record_field(r, &pos, &name, &value); f++) {
                        int w = (int)strlen(value);
                        if (w > width[f])
                                width[f] = w < 32 ? w : 32;
                }
        }
        for (uint32_t f = 0; f < NR_FIELD_COLS; f++) {
                if (f < ev->nr_named)
                        c[COL_FIELD1 + f] =
                                (struct ui_column){ev->titles[f], UI_COL_TEXT, width[f] + 1, 0};
                else
                        c[COL_FIELD1 + f] = (struct ui_column){NULL, UI_COL_TEXT, 0, 0};
        }
        c[COL_REST] = (struct ui_column){"Other fields", UI_COL_TEXT, 0, 0};
}

static void build_list(struct events_view *ev, struct profile *p, struct ui_table *t)
{
        const struct events_table *et = profile_events(p);
        const struct events_type *ty = events_table_type(et, ev->type_id);
        uint32_t n = ty ? ty->nr_stored : 0;
        char text[1024];
        for (uint32_t i = 0; i < n; i++) {
                const struct events_record *rec = events_table_record(et, ev->type_id, i);
                if ((ev->pid != ANY && rec->pid != ev->pid) ||
                    (ev->tid != ANY && rec->tid != ev->tid))
                        continue;
                uint32_t r = ui_table_add(t, rec->seq, 0, 0);
                uint64_t u = rec->time_ns < 0 ? (uint64_t)0 - (uint64_t)rec->time_ns
                                              : (uint64_t)rec->time_ns;
                snprintf(text, sizeof(text), "%s%" PRIu64 ".%09" PRIu64,
                         rec->time_ns < 0 ? "-" : "", u / 1000000000u, u % 1000000000u);
                ui_table_text(t, r, COL_A, text);
                ui_table_u64(t, r, COL_B, rec->cpu);
                ui_table_u64(t, r, COL_C, rec->pid);
                ui_table_u64(t, r, COL_D, rec->tid);
                size_t len = 0;
                text[0] = 0;
                uint32_t pos = 0;
                const char *name, *value;
                while (events_record_field(rec, &pos, &name, &value)) {
                        uint32_t f = 0;
                        while (f < ev->nr_named && strcmp(ev->field_names[f], name) != 0)
                                f++;
                        if (f < ev->nr_named) {
                                ui_table_text(t, r, COL_FIELD1 + f, value);
                        } else if (len < sizeof(text)) {
                                int k = snprintf(text + len, sizeof(text) - len, "%s%s=%s",
                                                 len ? " " : "", name, value);
                                len += k > 0 ? (size_t)k : 0;
                        }
                }
                ui_table_text(t, r, COL_REST, text);
        }
}

/* The report's table: every type by count (the types' rows), then the total and what the
   caps left without a row. */
static void report_build(struct events_view *ev, struct profile *p, struct ui_table *t)
{
        struct view_report *rp = &ev->report;
        const struct events_table *et = profile_events(p);
        t->cols = report_cols;
        t->text_cols = report_text;
        ev->group = GROUP_TYPE;
        build_types(ev, p, t);
        snprintf(rp->title, sizeof(rp->title), "Events by type");
        rp->has_section = rp->has_table = true;
        int k = snprintf(rp->after, sizeof(rp->after), " %10" PRIu64 "          events in all\n",
                         events_table_total(et));
        if (events_table_nr_no_room(et) && k > 0 && (size_t)k < sizeof(rp->after))
                snprintf(rp->after + k, sizeof(rp->after) - (size_t)k,
                         " %10" PRIu64 "          of them past the table's caps (no row)\n",
                         events_table_nr_no_room(et));
}

static void build(struct ui_view *v, const struct ui_build_ctx *m, struct ui_table *t)
{
        struct events_view *ev = of(v);
        struct profile *p = m->profile;
        ui_table_clear(t);
        if (ev->report.table == EVENTS_REPORT_TYPES) {
                report_build(ev, p, t);
                return;
        }
        if (ev->is_list) {
                list_columns(ev, profile_events(p));
                v->cols = t->cols = ev->list_cols;
                build_list(ev, p, t);
        } else {
                v->cols = t->cols = type_cols[ev->group];
                build_types(ev, p, t);
        }
        if (!t->nr_rows)
                ui_table_text(t, ui_table_add(t, 0, 0, UI_ROW_GREYED | UI_ROW_SPARSE), COL_REST,
                              ev->is_list  ? "No event of this type kept (z zeroed them, or the "
                                             "time range has none)."
                              : m->is_live ? "No events yet."
                                           : "No events in the time range.");
}

/* Enter: a type's (or a process's, a thread's type's) events; on an event: its fields. */
static unsigned act_open(struct ui_key_ctx *c)
{
        struct events_view *ev = of(c->view);
        const struct ui_table *t = c->table;
        uint32_t row = UINT32_MAX;
        for (uint32_t r = 0; r < t->nr_rows; r++)
                if (t->keys[r] == c->row_key && c->row_key)
                        row = r;
        if (row == UINT32_MAX)
                return 0;
        if (ev->is_list) {
                /* the event's fields, whole, on the status line */
                size_t len = 0;
                for (uint32_t col = COL_FIELD1; col < NR_COLS; col++) {
                        const char *s = ui_table_cell_text(t, row, col);
                        if (!s || !s[0] || len >= sizeof(c->st->status))
                                continue;
                        int k = col < COL_REST && col - COL_FIELD1 < ev->nr_named
                                        ? snprintf(c->st->status + len, sizeof(c->st->status) - len,
                                                   "%s%s=%s", len ? " " : "",
                                                   ev->field_names[col - COL_FIELD1], s)
                                        : snprintf(c->st->status + len, sizeof(c->st->status) - len,
                                                   "%s%s", len ? " " : "", s);
                        len += k > 0 ? (size_t)k : 0;
                }
                if (!len)
                        snprintf(c->st->status, sizeof(c->st->status), "no fields");
                return UI_REDRAW;
        }
        uint64_t key = c->row_key;
        if ((key & KEY_GROUP) && ev->group != GROUP_TYPE &&
            strcmp(ui_table_cell_text(t, row, COL_G), EXITED_NAME) == 0) {
                snprintf(c->st->status, sizeof(c->st->status),
                         "the processes that ended are folded into one row: their recent "
                         "events are in the type's list (p: by type)");
                return UI_REDRAW;
        }
        ev->pid = ev->tid = ANY;
        if (key & KEY_GROUP) {
                ev->type_id = (uint32_t)(((key >> 46) & 0xFFFF) - 1);
                if (ev->group != GROUP_TYPE)
                        ev->pid = (uint32_t)t->cells[(size_t)row * t->nr_cols + COL_E].u;
                if (ev->group == GROUP_THREAD)
                        ev->tid = (uint32_t)t->cells[(size_t)row * t->nr_cols + COL_F].u;
        } else {
                ev->type_id = (uint32_t)(key - 1);
        }
        ev->is_list = true;
        snprintf(c->st->status, sizeof(c->st->status),
                 "%s: its recent events (Enter: an event's fields; Esc: back to the types)",
                 ui_table_cell_text(t, row, COL_REST));
        return UI_REBUILD | UI_REDRAW | UI_TO_TOP;
}

static unsigned act_back(struct ui_key_ctx *c)
{
        struct events_view *ev = of(c->view);
        if (!ev->is_list)
                return 0;
        ev->is_list = false;
        snprintf(c->st->status, sizeof(c->st->status), "%s", group_names[ev->group]);
        return UI_REBUILD | UI_REDRAW | UI_TO_TOP;
}

static unsigned act_group(struct ui_key_ctx *c)
{
        struct events_view *ev = of(c->view);
        ev->is_list = false;
        ev->group = (enum events_grouping)((ev->group + 1) % NR_GROUPS);
        snprintf(c->st->status, sizeof(c->st->status), "%s", group_names[ev->group]);
        return UI_REBUILD | UI_REDRAW | UI_TO_TOP;
}

/* A row's process: a group row's or an event's PID; a type has none. */
static uint32_t row_pid(const struct ui_view *v, const struct ui_table *t, uint64_t row_key)
{
        const struct events_view *ev = ui_view_of(v, const struct events_view);
        uint32_t col = ev->is_list ? COL_C : COL_E;
        if (!ev->is_list && !(row_key & KEY_GROUP))
                return 0;
        for (uint32_t r = 0; r < t->nr_rows; r++)
                if (t->keys[r] == row_key) {
                        uint32_t pid = (uint32_t)t->cells[(size_t)r * t->nr_cols + col].u;
                        return pid == ANY ? 0 : pid;
                }
        return 0;
}

static const struct ui_key keys[] = {
        {'\n', "Enter", act_open,
         "a type's recent events with their fields in columns; on an event: its fields", NULL},
        {27, "Esc Backspace", act_back, "back from the events to the types", NULL},
        {KEY_BACKSPACE, NULL, act_back, NULL, NULL},
        {127, NULL, act_back, NULL, NULL},
        {'p', "p", act_group, "group: by type, by process then type, by thread then type", NULL},
};

static void view_free(struct ui_view *v)
{
        free(of(v));
}

struct ui_view *events_view_new(void)
{
        struct events_view *ev = xcalloc(1, sizeof(*ev));
        ev->view = (struct ui_view){"Events",
                                    type_cols[GROUP_TYPE],
                                    NR_COLS,
                                    keys,
                                    sizeof(keys) / sizeof(keys[0]),
                                    build,
                                    row_pid,
                                    view_free};
        ev->pid = ev->tid = ANY;
        return &ev->view;
}

struct view_report *events_view_report(struct ui_view *v)
{
        return &of(v)->report;
}

bool events_view_is_list(struct ui_view *v)
{
        return of(v)->is_list;
}
