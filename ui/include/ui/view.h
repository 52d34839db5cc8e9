/* SPDX-License-Identifier: MIT */
/* view.h: what a view of the screen is (its columns, its rows built from the model, its own
   keys) and how keys become actions: one table per view plus the common table, each entry
   {key, label, action, help}; dispatch, the help screen and the function-key bar read the same
   tables, so they cannot drift. An action changes the view's state or the screen's and returns
   the reactions it needs; only the application's loop acts on them. */
#ifndef ETWTOP_UI_VIEW_H
#define ETWTOP_UI_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ui/table.h"

struct profile;

/* What an action asks of the loop (a mask). */
enum ui_reaction {
        UI_REDRAW = 1u << 0,      /* draw again */
        UI_REBUILD = 1u << 1,     /* the views' rows from the model again */
        UI_ZERO = 1u << 2,        /* the model's counts start over */
        UI_APPLY = 1u << 3,       /* apply the session panel's edited settings to the session */
        UI_QUIT = 1u << 4,        /* leave */
        UI_SAVE = 1u << 5,        /* save the recent events to a file */
        UI_SET_MODE = 1u << 6,    /* ui_state.mode is the new aggregation mode */
        UI_ZOOM = 1u << 7,        /* ui_state.zoom_pid is the process to count (0: all) */
        UI_MOVE_WINDOW = 1u << 8, /* ui_state.window_step moves a replay's time window */
        UI_TO_TOP = 1u << 9,      /* the rows are new (another tree, grouping): show the first */
        UI_TIMELINE = 1u << 10,   /* ui_state.timeline_op on a replay's timeline */
        UI_ANNOTATE = 1u << 11,   /* ui_state.annotate: show that function's instructions */
        UI_SOURCE = 1u << 12,     /* the functions view counts the next profile source */
        UI_REVEAL = 1u << 13,     /* the cursor's row opened: the next draw shows what it opened */
};

/* What a timeline key does (ui_state.timeline_op). */
enum ui_timeline_op {
        UI_TL_LEFT,     /* the cursor a column left */
        UI_TL_RIGHT,    /* a column right */
        UI_TL_START,    /* the range starts at the cursor */
        UI_TL_END,      /* the range ends at the cursor: every view shows it */
        UI_TL_ZOOM_IN,  /* the timeline shows the range (or the half around the cursor) */
        UI_TL_ZOOM_OUT, /* the whole trace again, and no range */
};

/* The screen's state the common keys change, read by the loop. */
struct ui_state {
        uint32_t view; /* the view shown */
        uint32_t nr_views;
        bool is_live;       /* a live session (else a recording) */
        bool is_paused;     /* the rows are not rebuilt (collection goes on) */
        bool is_help;       /* the help screen is up */
        double delay_s;     /* the refresh interval */
        uint32_t mode;      /* enum agg_mode */
        uint32_t zoom_pid;  /* the process the views count (0: every process) */
        int window_step;    /* UI_MOVE_WINDOW: -1 back, +1 forward */
        int timeline_op;    /* UI_TIMELINE: enum ui_timeline_op */
        char annotate[512]; /* UI_ANNOTATE: "module!function" */
        char status[512];   /* the status line */
};

struct ui_view;

/* What an action sees: the screen's state, the view shown and its rows, the row under the
   cursor. */
struct ui_key_ctx {
        struct ui_state *st;
        struct ui_view *view;
        const struct ui_table *table;
        uint64_t row_key; /* 0: no row */
        /* borrowed: the table's rows on the screen (indices into table), nr_shown of them;
           NULL: not known, every row of the table counts as shown */
        const uint32_t *shown;
        uint32_t nr_shown;
};

typedef unsigned (*ui_action_fn)(struct ui_key_ctx *ctx);

struct ui_key {
        int key;           /* a curses key code or a character */
        const char *label; /* as the help shows it ("F2 W"); NULL: one more key of the entry
                              before, not listed again */
        ui_action_fn action;
        const char *help;
        const char *bar; /* its name on the function-key bar (NULL: not there) */
};

/* What a view's rows are built from. */
struct ui_build_ctx {
        struct profile *profile; /* read (its queries keep caches); its lock held by the caller */
        bool is_live;
        const char *why_no_lbr; /* the reason there are no LBR edges live ("" or NULL: none) */
        uint16_t source;        /* the profile source the functions view counts (one it has seen) */
};

/* A view: its rows and its keys. Implementations embed it and take their own state back with
   ui_view_of. Every hook is filled. */
struct ui_view {
        const char *name; /* its tab */
        const struct ui_column *cols;
        uint32_t nr_cols;
        const struct ui_key *keys; /* its own keys, before the common ones */
        uint32_t nr_keys;
        /* The rows, from the model (under its lock) or the view's own data. */
        void (*build)(struct ui_view *v, const struct ui_build_ctx *m, struct ui_table *t);
        /* The process of a row (for t), 0: the row has none. */
        uint32_t (*row_pid)(const struct ui_view *v, const struct ui_table *t, uint64_t row_key);
        void (*free)(struct ui_view *v);
};

#define ui_view_of(ptr, type) ((type *)(void *)((char *)(ptr)-offsetof(type, view)))

/* The common keys: quit, help, views, the list browser's keys (cursor, search, filter, sort),
   pause, zero, mode, save, delay, the zoom on a process, the replay's time window. */
const struct ui_key *ui_common_keys(uint32_t *nr_out);

/* row_pid for the views whose rows are no process's. */
uint32_t ui_no_row_pid(const struct ui_view *v, const struct ui_table *t, uint64_t row_key);

/* The entry for key: the view's own first, then the common one; NULL: none. */
const struct ui_key *ui_key_find(const struct ui_view *v, int key);

/* Runs the entry for key on the view shown; returns its reactions (0: no such key). */
unsigned ui_key_dispatch(struct ui_key_ctx *ctx, int key);

/* The help screen's lines for a view: its keys, then the common ones, each "  LABEL  help";
   at most max lines written into lines[i] (each width bytes). Returns how many. */
uint32_t ui_help_lines(const struct ui_view *v, char *lines, uint32_t width, uint32_t max);

/* The function-key bar for a view: the entries with a bar name, in key order (F1 first). */
void ui_key_bar(const struct ui_view *v, char *buf, uint32_t size);

/* ---- the expanded rows of a tree view: a set of row keys ---- */

struct ui_key_set {
        uint64_t *slots; /* owned; 0 free */
        uint32_t mask;
        uint32_t nr;
};

bool ui_key_set_has(const struct ui_key_set *s, uint64_t key);
void ui_key_set_put(struct ui_key_set *s, uint64_t key, bool is_in);
void ui_key_set_fini(struct ui_key_set *s);

#endif
