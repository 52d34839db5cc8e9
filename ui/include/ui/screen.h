/* SPDX-License-Identifier: MIT */
/* screen.h: the terminal: curses set-up, the header, the tabs of views, one generic list
   browser over a ui_table (cursor kept on its row by key, scrolling, sorting by any column,
   search and filter), the function-key bar and the help screen, both generated from the key
   tables (view.h). The application owns the loop: it polls stdin, gives each key to the browser
   and then to the view's key table, and acts on the reactions. */
#ifndef ETWTOP_UI_SCREEN_H
#define ETWTOP_UI_SCREEN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ui/table.h"
#include "ui/view.h"

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
        char filter[64];  /* rows whose text does not contain it are hidden */
        uint32_t hscroll; /* Left/Right: the rows (and titles) shown from this column of text */
        bool is_to_top;   /* the next draw shows the first rows; the cursor keeps its row when
                             that row is among them, else goes to the first */
        bool is_reveal;   /* until the next key, each draw scrolls the rows the cursor's row
                             opened into view (as many as fit below it, the row itself kept on
                             the screen), as a file manager's tree does, while a live refresh
                             moves the row: a row opened on the last line showed nothing of
                             what it opened */
};

struct ui_screen;

/* The smallest terminal the screen draws on; below it, it says so. */
#define UI_MIN_COLS  40
#define UI_MIN_LINES 8

/* Starts curses on the terminal. is_mono: no colours even when the terminal has them. Returns
   0, or -ENOTTY when the terminal cannot address the cursor (TERM=dumb, an unknown TERM): the
   caller prints text instead. */
int ui_screen_open(struct ui_screen **out, bool is_mono);
/* The same on another terminal (term_out, term_in), e.g. /dev/null for a benchmark; $TERM and
   the size ($LINES, $COLUMNS) come from the environment. */
int ui_screen_open_on(struct ui_screen **out, bool is_mono, FILE *term_out, FILE *term_in);
void ui_screen_close(struct ui_screen *s); /* restores the terminal; NULL is fine */

/* One key from curses, or -1 when none is waiting (never blocks). */
int ui_screen_getkey(struct ui_screen *s);

/* The list browser's part of a key: the cursor, sorting, search and filter (and the text typed
   into them). Returns true when the key was the browser's; else *row_key is the key of the row
   under the cursor (0: none) and *key the key for the view's table (Return as '\n'). */
bool ui_screen_browse(struct ui_screen *s, int *key, struct ui_view_state *vs,
                      const struct ui_table *t, uint64_t *row_key);

/* Whether a search or a filter is being typed: each key then reads every row's text. */
bool ui_screen_is_input(const struct ui_screen *s);

/* The rows of t on the screen as it was last drawn (the rows the filter lets through, from the
   view's top, as many as the list showed), in order: *rows, valid until the next call or change
   of the table. Returns how many (0 before the first draw). What "every row shown" means to a
   key (*). */
uint32_t ui_screen_shown_rows(struct ui_screen *s, const struct ui_table *t,
                              const struct ui_view_state *vs, const uint32_t **rows);

/* The most lines a table's list can take on the terminal as it is now (its height, which a
   resize changed before its key came), whatever the last draw showed. */
uint32_t ui_screen_lines(const struct ui_screen *s);

/* A replay's timeline: events per slice of the trace, the part of it shown (zoom), the
   cursor and the selected range, all in ns from the trace's start. */
struct ui_timeline {
        const uint32_t *slots; /* events per slice: nr slices over span_ns */
        uint32_t nr;
        int64_t span_ns;
        int64_t view_from, view_to; /* the part drawn */
        int64_t cursor;
        int64_t sel_from, sel_to; /* sel_to <= sel_from: no range (sel_from alone: its start) */
};

struct ui_frame {
        const struct ui_timeline *timeline; /* a replay's, drawn under the header; NULL: none */
        const char *const *header;          /* lines above the tabs */
        uint32_t nr_header;
        const char *const *tabs; /* view names; the current one is highlighted */
        uint32_t nr_tabs;
        uint32_t current_tab;
        const char *status;         /* the line above the key bar: a message, the saved file ... */
        const struct ui_view *view; /* the view shown: its help and its function-key bar */
        bool is_help;
        /* a page of text instead of the table (annotate), from line page_top */
        const char *const *page;
        uint32_t nr_page;
        uint32_t page_top;
};

/* A key on a page of nr lines shown from *top: the arrows, PgUp/PgDn, Home and End scroll it
   (true); any other key closes it (false). */
bool ui_screen_page_key(int key, uint32_t *top, uint32_t nr);

/* A key on the help screen: the arrows, PgUp/PgDn, Home and End scroll it when it does not fit
   the terminal (true); any other key, or any key when it fits, closes it (false). */
bool ui_screen_help_key(struct ui_screen *s, int key);

/* Draws the frame: header, tabs, the table through vs (sorted and filtered as vs says), the
   status and the key bar; or the help screen. Small terminals drop parts, never crash. */
void ui_screen_draw(struct ui_screen *s, const struct ui_frame *f, struct ui_table *t,
                    struct ui_view_state *vs);

#endif
