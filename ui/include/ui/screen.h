/* SPDX-License-Identifier: MIT */
/* screen.h: the terminal: curses set-up, the header, the tabs of views, one generic list
   browser over a ui_table (cursor kept on its row by key, scrolling, sorting by any column,
   search and filter), the function-key bar, the help screen generated from the key table. The
   application owns the loop: it polls stdin, calls ui_screen_key for each key and acts on the
   returned action. */
#ifndef ETWTOP_UI_SCREEN_H
#define ETWTOP_UI_SCREEN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ui/table.h"

enum ui_action {
        UI_NONE = 0,
        UI_REDRAW, /* the screen changed (cursor, sort, resize): draw again */
        UI_QUIT,
        UI_HELP,
        UI_VIEW_NEXT,
        UI_VIEW_PREV,
        UI_VIEW_1,
        UI_VIEW_2,
        UI_VIEW_3,
        UI_VIEW_4, /* the session panel */
        UI_PAUSE,
        UI_ZERO,
        UI_MODE, /* next aggregation mode: cumulative, decaying, zeroed each refresh */
        UI_SAVE,
        UI_TOGGLE,   /* the row under the cursor (a setting in the panel, a tree row) */
        UI_EXPAND,   /* + */
        UI_COLLAPSE, /* - */
        UI_EXPAND_ALL,
        UI_CALLERS,  /* call tree: top-down <-> callers */
        UI_GROUPING, /* branch edges: exact edge <-> function pair */
        UI_DELAY_UP,
        UI_DELAY_DOWN,
        UI_TIME_BACK, /* replay: move the window */
        UI_TIME_FWD,
        UI_ZOOM_PROCESS, /* only the process of the row (a thread in the switches view) */
};

struct ui_key {
        int key;          /* a curses key code or a character */
        const char *name; /* as the help shows it */
        const char *help;
        enum ui_action action;
};

/* The key table: the help screen is made from it. nr_out: its length. */
const struct ui_key *ui_keys(uint32_t *nr_out);

struct ui_view_state {
        uint64_t cursor_key; /* the row the cursor is on, by key */
        bool has_moved;      /* the user moved the cursor: it follows its row; else it stays on
                                the first row, whatever comes first as the data changes */
        uint32_t cursor;     /* its index among the visible rows */
        uint32_t top;        /* first visible row on screen */
        uint32_t sort_col;
        bool is_reversed;
        bool has_sorted;
        char search[64];
        char filter[64]; /* rows whose text does not contain it are hidden */
};

struct ui_screen;

/* Starts curses on the terminal. is_mono: no colours even when the terminal has them. */
int ui_screen_open(struct ui_screen **out, bool is_mono);
/* The same on another terminal (term_out, term_in), e.g. /dev/null for a benchmark; $TERM and
   the size ($LINES, $COLUMNS) come from the environment. */
int ui_screen_open_on(struct ui_screen **out, bool is_mono, FILE *term_out, FILE *term_in);
void ui_screen_close(struct ui_screen *s); /* restores the terminal; NULL is fine */

/* One key from curses, or -1 when none is waiting (never blocks). */
int ui_screen_getkey(struct ui_screen *s);

/* Handles one key: moves, sorts, searches and filters itself, and returns what the
   application must do; *row_key is the key of the row under the cursor. */
enum ui_action ui_screen_key(struct ui_screen *s, int key, struct ui_view_state *vs,
                             const struct ui_table *t, uint64_t *row_key);

struct ui_frame {
        const char *const *header; /* lines above the tabs */
        uint32_t nr_header;
        const char *const *tabs; /* view names; the current one is highlighted */
        uint32_t nr_tabs;
        uint32_t current_tab;
        const char *status; /* the line above the key bar: a message, the saved file ... */
        bool is_help;
};

/* Draws the frame: header, tabs, the table through vs (sorted and filtered as vs says), the
   status and the key bar; or the help screen. Small terminals drop parts, never crash. */
void ui_screen_draw(struct ui_screen *s, const struct ui_frame *f, struct ui_table *t,
                    struct ui_view_state *vs);

#endif
