/* SPDX-License-Identifier: MIT */
/* screen.c: owns the terminal: curses, colours, the list browser, the key table and help. */
#include "ui/screen.h"
#include "ui/header_wrap.h"

#include <curses.h>
#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

#define KEY_ESC 27

enum input_mode { INPUT_NONE, INPUT_SEARCH, INPUT_FILTER };

struct ui_screen {
        bool has_colors;
        enum input_mode input;
        char input_buf[64];
        /* the rows the filter lets through, as shown; made again only when the table, its
           generation or the filter changes (a key press between refreshes reuses them) */
        uint32_t *visible; /* owned */
        uint32_t nr_visible, cap_visible;
        const struct ui_table *visible_table; /* borrowed, only compared */
        uint64_t visible_generation;
        char visible_filter[64];
        bool is_no_match;       /* the last search found no row: the status line says so */
        uint32_t help_top;      /* the help screen's first line shown */
        uint32_t nr_help;       /* its lines, as last drawn (wrapped to the terminal) */
        uint32_t nr_list_lines; /* the table's lines as last drawn (0: no table drawn) */
        /* the cells put_line put on each line as last drawn (shown_lines x shown_cols), a line's
           when is_shown[y]: a line put again writes where it changed only */
        chtype *shown;     /* owned */
        uint8_t *is_shown; /* owned */
        int shown_lines, shown_cols;
        /* the table's rows shown, as formatted once a draw (draw_table) */
        char *rows_text; /* owned: the lines one after another, each NUL-ended */
        size_t rows_text_cap;
        size_t *rows_at; /* owned: each line's start in rows_text */
        uint32_t rows_at_cap;
};

enum { PAIR_HEADER = 1, PAIR_CURSOR, PAIR_COLUMNS, PAIR_TAB, PAIR_KEYS, PAIR_GREY };

int ui_screen_open(struct ui_screen **out, bool is_mono)
{
        return ui_screen_open_on(out, is_mono, NULL, NULL);
}

int ui_screen_open_on(struct ui_screen **out, bool is_mono, FILE *term_out, FILE *term_in)
{
        struct ui_screen *s = xcalloc(1, sizeof(*s));
        setlocale(LC_ALL, "");
        SCREEN *scr = newterm(NULL, term_out ? term_out : stdout, term_in ? term_in : stdin);
        if (!scr) {
                free(s);
                return -ENOTTY;
        }
        /* a terminal that cannot move the cursor (TERM=dumb) draws nothing useful */
        const char *cup = tigetstr("cup");
        if (!cup || cup == (const char *)-1) {
                endwin();
                delscreen(scr);
                free(s);
                return -ENOTTY;
        }
        cbreak();
        noecho();
        nonl();
        keypad(stdscr, TRUE);
        nodelay(stdscr, TRUE);
        curs_set(0);
        set_escdelay(25);
        /* ncurses looks for typed keys between the lines it writes (a poll of the terminal
           every few lines, a dozen system calls a refresh), to stop a long update for them:
           a refresh here is one write of a few KiB, and keys are read right after it */
        typeahead(-1);
        if (!is_mono && has_colors()) {
                start_color();
                use_default_colors();
                init_pair(PAIR_HEADER, COLOR_CYAN, -1);
                init_pair(PAIR_CURSOR, COLOR_BLACK, COLOR_CYAN);
                init_pair(PAIR_COLUMNS, COLOR_BLACK, COLOR_GREEN);
                init_pair(PAIR_TAB, COLOR_BLACK, COLOR_CYAN);
                init_pair(PAIR_KEYS, COLOR_BLACK, COLOR_CYAN);
                init_pair(PAIR_GREY, COLOR_WHITE, -1);
                s->has_colors = true;
        }
        /* ncurses (6.4) writes its buffer out at every cursor move until the screen has been
           left once and drawn again (its state stays "initial" till then, for terminfo-level
           callers): a refresh of the list was some 160 writes to the terminal, each a system
           call and a wake-up of whatever reads it. Left and drawn again here, before anything
           is shown, a refresh is one write. */
        endwin();
        refresh();
        *out = s;
        return 0;
}

void ui_screen_close(struct ui_screen *s)
{
        if (!s)
                return;
        endwin();
        free(s->visible);
        free(s->shown);
        free(s->is_shown);
        free(s->rows_text);
        free(s->rows_at);
        free(s);
}

int ui_screen_getkey(struct ui_screen *s)
{
        (void)s;
        int ch = getch();
        return ch == ERR ? -1 : ch;
}

static int attr_of(const struct ui_screen *s, int pair, int mono)
{
        return s->has_colors ? (int)COLOR_PAIR(pair) : mono;
}

/* ---- visible rows ---- */

/* The rows shown, in order (*rows, valid until the next call or change of the table); returns
   how many. Without a filter, the table's own order. */
static uint32_t visible_rows(struct ui_screen *s, const struct ui_table *t,
                             const struct ui_view_state *vs, const uint32_t **rows)
{
        if (!vs->filter[0]) {
                *rows = t->order;
                return t->nr_rows;
        }
        if (s->visible_table != t || s->visible_generation != t->generation ||
            strcmp(s->visible_filter, vs->filter) != 0) {
                if (s->cap_visible < t->nr_rows + 1) {
                        s->cap_visible = t->nr_rows + 1;
                        free(s->visible);
                        s->visible = xmalloc(s->cap_visible * sizeof(*s->visible));
                }
                uint32_t n = 0;
                for (uint32_t i = 0; i < t->nr_rows; i++)
                        if (ui_table_row_contains(t, t->order[i], vs->filter))
                                s->visible[n++] = t->order[i];
                s->nr_visible = n;
                s->visible_table = t;
                s->visible_generation = t->generation;
                snprintf(s->visible_filter, sizeof(s->visible_filter), "%s", vs->filter);
        }
        *rows = s->visible;
        return s->nr_visible;
}

bool ui_screen_is_input(const struct ui_screen *s)
{
        return s->input != INPUT_NONE;
}

uint32_t ui_screen_shown_rows(struct ui_screen *s, const struct ui_table *t,
                              const struct ui_view_state *vs, const uint32_t **rows)
{
        uint32_t nv = visible_rows(s, t, vs, rows);
        uint32_t top = vs->top < nv ? vs->top : nv;
        if (top)
                *rows += top;
        return nv - top < s->nr_list_lines ? nv - top : s->nr_list_lines;
}

uint32_t ui_screen_lines(const struct ui_screen *s)
{
        return s && LINES > 0 ? (uint32_t)LINES : 0;
}

static int list_height(void)
{
        return LINES; /* refined in draw; keys use a page of LINES - 6 */
}

/* ---- keys ---- */

static void input_key(struct ui_screen *s, int key, struct ui_view_state *vs)
{
        size_t n = strlen(s->input_buf);
        if (key == KEY_ESC) {
                if (s->input == INPUT_FILTER)
                        vs->filter[0] = 0;
                s->input = INPUT_NONE;
                return;
        }
        if (key == '\n' || key == '\r' || key == KEY_ENTER) {
                s->input = INPUT_NONE;
                return;
        }
        if (key == KEY_BACKSPACE || key == 127 || key == 8) {
                if (n)
                        s->input_buf[n - 1] = 0;
        } else if (key >= 32 && key < 127 && n + 1 < sizeof(s->input_buf)) {
                s->input_buf[n] = (char)key;
                s->input_buf[n + 1] = 0;
        }
        if (s->input == INPUT_SEARCH)
                snprintf(vs->search, sizeof(vs->search), "%s", s->input_buf);
        else
                snprintf(vs->filter, sizeof(vs->filter), "%s", s->input_buf);
}

/* The next row (from the cursor's, or the one after it) whose text holds the search: the cursor
   goes there. false: no row does. */
static bool search_next(struct ui_view_state *vs, const struct ui_table *t, const uint32_t *rows,
                        uint32_t nv, bool is_from_next)
{
        if (!vs->search[0] || !nv)
                return false;
        for (uint32_t k = is_from_next ? 1 : 0; k <= nv; k++) {
                uint32_t i = (vs->cursor + k) % nv;
                if (ui_table_row_contains(t, rows[i], vs->search)) {
                        vs->cursor = i;
                        vs->has_moved = true;
                        vs->cursor_key = t->keys[rows[i]];
                        return true;
                }
        }
        return false;
}

bool ui_screen_browse(struct ui_screen *s, int *key, struct ui_view_state *vs,
                      const struct ui_table *t, uint64_t *row_key)
{
        const uint32_t *rows;
        uint32_t nv = visible_rows(s, t, vs, &rows);
        int page = list_height() - 8;
        if (page < 1)
                page = 1;
        *row_key = 0;
        s->is_no_match = false;
        vs->is_reveal = false; /* a key: what was opened no longer asks to be shown */
        if (s->input != INPUT_NONE) {
                int k = *key;
                bool is_search = s->input == INPUT_SEARCH;
                input_key(s, k, vs);
                bool is_enter = k == '\n' || k == '\r' || k == KEY_ENTER;
                /* only a search moves the cursor: a filter's Enter leaves the last search be */
                if (is_search && (s->input == INPUT_SEARCH || (is_enter && vs->search[0]))) {
                        nv = visible_rows(s, t, vs, &rows);
                        s->is_no_match = !search_next(vs, t, rows, nv, false);
                }
                return true;
        }
        uint32_t old = vs->cursor;
        switch (*key) {
        case KEY_UP: vs->cursor = vs->cursor ? vs->cursor - 1 : 0; break;
        case KEY_DOWN: vs->cursor = nv && vs->cursor + 1 < nv ? vs->cursor + 1 : vs->cursor; break;
        case KEY_PPAGE:
                vs->cursor = vs->cursor > (uint32_t)page ? vs->cursor - (uint32_t)page : 0;
                break;
        case KEY_NPAGE:
                vs->cursor = nv ? (vs->cursor + (uint32_t)page < nv ? vs->cursor + (uint32_t)page
                                                                    : nv - 1)
                                : 0;
                break;
        case KEY_LEFT: vs->hscroll = vs->hscroll > 8 ? vs->hscroll - 8 : 0; return true;
        case KEY_RIGHT:
                if (vs->hscroll < 4000)
                        vs->hscroll += 8;
                return true;
        case KEY_HOME: vs->cursor = 0; break;
        case KEY_END: vs->cursor = nv ? nv - 1 : 0; break;
        case KEY_RESIZE: return true;
        case KEY_F(6):
        case '>':
        case '.':
                vs->sort_col = t->nr_cols ? (vs->sort_col + 1) % t->nr_cols : 0;
                vs->has_sorted = true;
                vs->is_to_top = true;
                return true;
        case '<':
        case ',':
                vs->sort_col = t->nr_cols ? (vs->sort_col + t->nr_cols - 1) % t->nr_cols : 0;
                vs->has_sorted = true;
                vs->is_to_top = true;
                return true;
        case 'I':
                vs->is_reversed = !vs->is_reversed;
                vs->has_sorted = true;
                vs->is_to_top = true;
                return true;
        case KEY_F(3):
        case '/':
                s->input = INPUT_SEARCH;
                s->input_buf[0] = 0;
                return true;
        case 'n': s->is_no_match = !search_next(vs, t, rows, nv, true); return true;
        case KEY_F(4):
        case '\\':
                s->input = INPUT_FILTER;
                snprintf(s->input_buf, sizeof(s->input_buf), "%s", vs->filter);
                return true;
        case KEY_ESC:
                if (vs->filter[0]) {
                        vs->filter[0] = 0;
                        return true;
                }
                return false;
        case '\r':
        case KEY_ENTER: *key = '\n'; break;
        default: break;
        }
        if (vs->cursor != old) {
                vs->has_moved = vs->cursor != 0;
                if (nv)
                        vs->cursor_key = t->keys[rows[vs->cursor]];
                return true;
        }
        if (nv && vs->cursor < nv)
                *row_key = t->keys[rows[vs->cursor]];
        /* a cursor key at the end of the list moves nothing and is still the browser's */
        return *key == KEY_UP || *key == KEY_DOWN || *key == KEY_PPAGE || *key == KEY_NPAGE ||
               *key == KEY_HOME || *key == KEY_END;
}

/* ---- drawing ---- */

/* Lines put on the screen are remembered (put_line) so that a line put again writes only the
   cells that changed: ncurses copies each cell written to its own screen and compares it with
   what the terminal shows (wnoutrefresh, doupdate), 28 bytes a cell of a wide build, and a table
   whose counts change writes a few numbers a line (bench/README.md, issue 25, stop 78). */

/* Forgets what line y (every line: y < 0) shows: drawn by other means next, or cleared. */
static void shown_forget(struct ui_screen *s, int y)
{
        if (!s->is_shown)
                return;
        if (y < 0)
                memset(s->is_shown, 0, (size_t)s->shown_lines);
        else if (y < s->shown_lines)
                s->is_shown[y] = 0;
}

/* The remembered cells of line y, sized to the terminal as it is now (a new size forgets every
   line); NULL where none can be kept. */
static chtype *shown_line(struct ui_screen *s, int y)
{
        if (LINES <= 0 || COLS <= 0 || COLS > 1024)
                return NULL;
        if (LINES != s->shown_lines || COLS != s->shown_cols) {
                free(s->shown);
                free(s->is_shown);
                s->shown = xmalloc((size_t)LINES * (size_t)COLS * sizeof(*s->shown));
                s->is_shown = xcalloc((size_t)LINES, 1);
                s->shown_lines = LINES;
                s->shown_cols = COLS;
        }
        return s->shown + (size_t)y * (size_t)COLS;
}

/* Printable ASCII as it is put on the line, cut at COLS and padded with spaces in attr to the
   line's end: into cells (COLS of them). false: text is not all such. */
static bool ascii_cells(const char *text, int attr, chtype *cells)
{
        int n = 0;
        for (; n < COLS && text[n]; n++) {
                unsigned char c = (unsigned char)text[n];
                if (c < 0x20 || c >= 0x7F)
                        return false;
                cells[n] = c | (chtype)attr;
        }
        for (; n < COLS; n++)
                cells[n] = ' ' | (chtype)attr;
        return true;
}

/* The timeline on line y: "Time " and a bar of block characters, a column per part of the
   range shown, its height the events there against the busiest column; the selected range in
   reverse video, the cursor's column marked. */
static void draw_timeline(struct ui_screen *s, const struct ui_timeline *tl, int y)
{
        shown_forget(s, y);
        static const char *const blocks[] = {" ",      "\u2581", "\u2582", "\u2583", "\u2584",
                                             "\u2585", "\u2586", "\u2587", "\u2588"};
        move(y, 0);
        clrtoeol();
        int width = COLS - 8;
        if (width < 8 || !tl->nr || tl->span_ns <= 0 || tl->view_to <= tl->view_from)
                return;
        addstr("Time  ");
        uint64_t col[1024];
        if (width > 1024)
                width = 1024;
        uint64_t max = 0;
        int64_t range = tl->view_to - tl->view_from;
        for (int c = 0; c < width; c++) {
                int64_t a = tl->view_from + (int64_t)((__int128)range * c / width);
                int64_t b = tl->view_from + (int64_t)((__int128)range * (c + 1) / width);
                int64_t sa = (int64_t)((__int128)a * tl->nr / tl->span_ns);
                int64_t sb = (int64_t)((__int128)b * tl->nr / tl->span_ns);
                if (sb <= sa)
                        sb = sa + 1;
                col[c] = 0;
                for (int64_t k = sa; k < sb && k < tl->nr; k++)
                        col[c] += tl->slots[k];
                if (col[c] > max)
                        max = col[c];
        }
        for (int c = 0; c < width; c++) {
                int64_t a = tl->view_from + (int64_t)((__int128)range * c / width);
                int64_t b = tl->view_from + (int64_t)((__int128)range * (c + 1) / width);
                int h = max ? (int)((col[c] * 8 + max - 1) / max) : 0;
                bool is_sel = tl->sel_to > tl->sel_from && b > tl->sel_from && a < tl->sel_to;
                bool is_cursor = tl->cursor >= a && tl->cursor < b;
                int attr = (is_sel ? A_REVERSE : 0) |
                           (is_cursor ? attr_of(s, PAIR_CURSOR, A_BOLD) | A_BOLD : 0);
                if (attr)
                        attron(attr);
                addstr(is_cursor && !h ? "|" : blocks[h > 8 ? 8 : h]);
                if (attr)
                        attroff(attr);
        }
}

bool ui_screen_page_key(int key, uint32_t *top, uint32_t nr)
{
        uint32_t page = LINES > 12 ? (uint32_t)LINES - 8 : 4, last = nr ? nr - 1 : 0;
        switch (key) {
        case KEY_UP: *top = *top ? *top - 1 : 0; return true;
        case KEY_DOWN: *top = *top < last ? *top + 1 : last; return true;
        case KEY_PPAGE: *top = *top > page ? *top - page : 0; return true;
        case KEY_NPAGE: *top = *top + page < last ? *top + page : last; return true;
        case KEY_HOME: *top = 0; return true;
        case KEY_END: *top = last; return true;
        default: return false;
        }
}

/* Line y as text in attr (the rest of it blank, in attr where it has one): an ASCII line
   written where it differs from what put_line put there last, one copy of its cells (addnstr
   decodes each character as UTF-8); any other written whole. */
static void put_line(struct ui_screen *s, int y, const char *text, int attr)
{
        if (y < 0 || y >= LINES)
                return;
        chtype *was = shown_line(s, y);
        chtype cells[1024];
        if (was && ascii_cells(text, attr, cells)) {
                int first = 0, last = COLS - 1;
                if (s->is_shown[y]) {
                        while (first < COLS && cells[first] == was[first])
                                first++;
                        if (first == COLS)
                                return; /* as it is */
                        while (cells[last] == was[last])
                                last--;
                }
                memcpy(was + first, cells + first, (size_t)(last - first + 1) * sizeof(*cells));
                s->is_shown[y] = 1;
                mvaddchnstr(y, first, cells + first, last - first + 1);
                return;
        }
        shown_forget(s, y);
        move(y, 0);
        clrtoeol();
        if (attr)
                attron(attr);
        addnstr(text, COLS);
        if (attr) {
                for (int x = (int)strlen(text); x < COLS; x++)
                        addch(' ');
                attroff(attr);
        }
}

#define HELP_LINES  128
#define HELP_WIDTH  160
#define HELP_INDENT 15 /* where a key's help starts: "  %-12s " */

/* The help's lines wrapped at width (a key's help goes on under itself): up to max lines of
   HELP_WIDTH into out; returns how many, *is_title[i] for the titles. */
static uint32_t help_wrapped(const struct ui_view *v, int width, char (*out)[HELP_WIDTH],
                             bool *is_title, uint32_t max)
{
        static char lines[HELP_LINES][HELP_WIDTH];
        uint32_t n = ui_help_lines(v, &lines[0][0], HELP_WIDTH, HELP_LINES), m = 0;
        if (width > HELP_WIDTH - 1)
                width = HELP_WIDTH - 1;
        for (uint32_t i = 0; i < n && m < max; i++) {
                const char *p = lines[i];
                bool is_first = true;
                do {
                        int indent = is_first ? 0 : HELP_INDENT;
                        int room = width - indent, len = (int)strlen(p);
                        if (room < 8) { /* too narrow to wrap: cut */
                                room = width;
                                indent = 0;
                        }
                        int cut = len <= room ? len : room;
                        if (len > room) /* at a space, where there is one */
                                for (int k = room; k > room / 2; k--)
                                        if (p[k] == ' ') {
                                                cut = k;
                                                break;
                                        }
                        snprintf(out[m], HELP_WIDTH, "%*s%.*s", indent, "", cut, p);
                        is_title[m++] = is_first && lines[i][0] != ' ';
                        p += cut;
                        while (*p == ' ')
                                p++;
                        is_first = false;
                } while (*p && m < max);
        }
        return m;
}

/* The help screen: the keys of the view and of every view, wrapped to the terminal, from
   help_top (kept on the screen: the last line at the bottom at most). */
static void draw_help(struct ui_screen *s, const struct ui_view *v)
{
        static char lines[2 * HELP_LINES][HELP_WIDTH];
        bool is_title[2 * HELP_LINES];
        uint32_t n = help_wrapped(v, COLS, lines, is_title, 2 * HELP_LINES);
        uint32_t room = LINES > 3 ? (uint32_t)LINES - 3 : 1;
        s->nr_help = n;
        if (s->help_top + room > n)
                s->help_top = n > room ? n - room : 0;
        int y = 0;
        put_line(s, y++,
                 n > room ? "etwtop keys (Up/Down, PgUp/PgDn scroll; any other key returns)"
                          : "etwtop keys (any key returns)",
                 attr_of(s, PAIR_HEADER, A_BOLD) | A_BOLD);
        put_line(s, y++, "", 0);
        for (uint32_t i = s->help_top; i < n && y < LINES - 1; i++)
                put_line(s, y++, lines[i], is_title[i] ? A_BOLD : 0);
        while (y < LINES - 1)
                put_line(s, y++, "", 0);
        char more[96] = "";
        if (n > room)
                snprintf(more, sizeof(more), "-- lines %u-%u of %u --", s->help_top + 1,
                         s->help_top + room < n ? s->help_top + room : n, n);
        put_line(s, y, more, 0);
}

bool ui_screen_help_key(struct ui_screen *s, int key)
{
        uint32_t room = LINES > 3 ? (uint32_t)LINES - 3 : 1;
        uint32_t last = s->nr_help > room ? s->nr_help - room : 0;
        if (!last)
                return false; /* all of it shown: any key returns */
        return ui_screen_page_key(key, &s->help_top, last + 1);
}

/* The widths of the columns on a screen of cols columns: text columns without a width share
   what the others leave, at least FLEX_MIN each; while they would get less, the columns with a
   drop order go, 1 first (width 0: not shown). */
#define FLEX_MIN 24 /* a name column of fewer characters says too little */
static void column_widths(const struct ui_table *t, int cols, int *w)
{
        for (uint32_t c = 0; c < t->nr_cols; c++)
                w[c] = t->cols[c].title ? t->cols[c].width : 0;
        for (;;) {
                int fixed = 0, nr_flex = 0, next = -1;
                for (uint32_t c = 0; c < t->nr_cols; c++) {
                        if (!t->cols[c].title)
                                continue;
                        if (t->cols[c].width > 0 && w[c] > 0)
                                fixed += w[c] + 1;
                        else if (t->cols[c].width <= 0)
                                nr_flex++;
                        if (w[c] > 0 && t->cols[c].drop &&
                            (next < 0 || t->cols[c].drop < t->cols[next].drop))
                                next = (int)c;
                }
                int left = cols - fixed;
                if ((nr_flex && left / nr_flex - 1 >= FLEX_MIN) || (!nr_flex && left >= 0) ||
                    next < 0) {
                        for (uint32_t c = 0; c < t->nr_cols; c++)
                                if (t->cols[c].width <= 0 && t->cols[c].title)
                                        w[c] = nr_flex && left > nr_flex ? left / nr_flex - 1 : 8;
                        return;
                }
                w[next] = 0;
        }
}

/* The part of a line a sideways scroll shows. */
static const char *scrolled(const char *line, size_t len, uint32_t hscroll)
{
        return hscroll < len ? line + hscroll : line + len;
}

/* Row r as a line of text in the widths w (0: not shown): each cell cut to its width but the
   last shown, which runs on (sideways scrolling shows the rest). Returns its length. */
/* Writing into to[0, size): at *at, what fits of n bytes of s (a NUL ends to where the
   writing stops, as snprintf's does); *at counts every byte, fitting or not. */
static void put_bytes(char *to, size_t size, size_t *at, const char *s, size_t n)
{
        if (*at + 1 < size) {
                size_t fit = size - 1 - *at < n ? size - 1 - *at : n;
                memcpy(to + *at, s, fit);
        }
        *at += n;
}

static void put_spaces(char *to, size_t size, size_t *at, size_t n)
{
        if (*at + 1 < size) {
                size_t fit = size - 1 - *at < n ? size - 1 - *at : n;
                memset(to + *at, ' ', fit);
        }
        *at += n;
}

/* The bytes and the count of snprintf(to, size, is_left ? "%-*.*s " : "%*.*s ", width, cut, s),
   without the format's parse (printf was half of a frame's drawing: a few calls a cell). */
static size_t put_cell_text(char *to, size_t size, const char *s, int width, int cut, bool is_left)
{
        if (width < 0) { /* printf's: a negative width is a left-justified one */
                is_left = true;
                width = -width;
        }
        size_t n = 0;
        while ((cut < 0 || n < (size_t)cut) && s[n])
                n++;
        size_t pad = (size_t)width > n ? (size_t)width - n : 0, at = 0;
        if (!is_left)
                put_spaces(to, size, &at, pad);
        put_bytes(to, size, &at, s, n);
        if (is_left)
                put_spaces(to, size, &at, pad);
        put_bytes(to, size, &at, " ", 1);
        if (size)
                to[at < size ? at : size - 1] = '\0';
        return at;
}

static size_t format_row(const struct ui_table *t, uint32_t r, const int *w, char *line,
                         size_t size)
{
        int last = -1;
        for (uint32_t c = 0; c < t->nr_cols; c++)
                if (w[c])
                        last = (int)c;
        size_t len = 0;
        for (uint32_t c = 0; c < t->nr_cols && len < size - 1; c++) {
                if (!w[c])
                        continue;
                char cell[1024];
                ui_table_format(t, r, c, cell, sizeof(cell));
                int cut = (int)c == last ? (int)size : w[c];
                if (t->cols[c].kind == UI_COL_TEXT) {
                        /* the tree column: indentation and an expand mark (snprintf's "%*s%s%s"
                           of them, cut as it would be) */
                        char shown[1200];
                        bool is_tree = c + 1 == t->nr_cols;
                        const char *mark = !is_tree                            ? ""
                                           : (t->flags[r] & UI_ROW_EXPANDED)   ? "- "
                                           : (t->flags[r] & UI_ROW_EXPANDABLE) ? "+ "
                                                                               : "";
                        int indent = is_tree ? 2 * t->depth[r] : 0;
                        size_t at = 0;
                        put_spaces(shown, sizeof(shown), &at,
                                   (size_t)(indent < 0 ? -(int64_t)indent : indent));
                        put_bytes(shown, sizeof(shown), &at, mark, strlen(mark));
                        put_bytes(shown, sizeof(shown), &at, cell, strlen(cell));
                        shown[at < sizeof(shown) ? at : sizeof(shown) - 1] = '\0';
                        len += put_cell_text(line + len, size - len, shown, w[c], cut, true);
                } else {
                        len += put_cell_text(line + len, size - len, cell, w[c], cut, false);
                }
        }
        if (len >= size)
                len = size - 1;
        line[len] = 0;
        return len;
}

static void draw_table(struct ui_screen *s, struct ui_table *t, struct ui_view_state *vs, int y0,
                       int y1)
{
        int w[64];
        if (t->nr_cols > 64 || y1 <= y0)
                return;
        column_widths(t, COLS, w);
        /* the column titles, the sort column marked */
        char line[4096];
        size_t len = 0;
        for (uint32_t c = 0; c < t->nr_cols && len < sizeof(line) - 1; c++) {
                if (!w[c])
                        continue;
                char title[128];
                snprintf(title, sizeof(title), "%s%s", t->cols[c].title,
                         vs->has_sorted && c == vs->sort_col ? (vs->is_reversed ? "^" : "v") : "");
                len += (size_t)snprintf(line + len, sizeof(line) - len,
                                        t->cols[c].kind == UI_COL_TEXT ? "%-*.*s " : "%*.*s ", w[c],
                                        w[c], title);
        }
        if (len >= sizeof(line))
                len = sizeof(line) - 1;
        line[len] = 0;
        char title_line[4096];
        size_t title_len = len;
        memcpy(title_line, line, len + 1);

        const uint32_t *rows;
        uint32_t nv = visible_rows(s, t, vs, &rows);
        /* the cursor stays on its row, by key; still there (a key press): no search */
        if (!vs->has_moved) {
                vs->cursor = 0; /* on the first row, whichever it is now */
                vs->cursor_key = 0;
        }
        if (vs->cursor_key && !(vs->cursor < nv && t->keys[rows[vs->cursor]] == vs->cursor_key))
                for (uint32_t i = 0; i < nv; i++)
                        if (t->keys[rows[i]] == vs->cursor_key) {
                                vs->cursor = i;
                                break;
                        }
        if (vs->cursor >= nv)
                vs->cursor = nv ? nv - 1 : 0;
        uint32_t height = (uint32_t)(y1 - y0 - 1);
        s->nr_list_lines = height;
        if (vs->is_to_top) {
                /* a new order or new rows: the top of the list, as perf top and htop show it */
                vs->is_to_top = false;
                vs->top = 0;
                if (vs->cursor >= height) {
                        vs->cursor = 0;
                        vs->has_moved = false;
                }
        }
        if (nv)
                vs->cursor_key = t->keys[rows[vs->cursor]];
        if (vs->cursor < vs->top)
                vs->top = vs->cursor;
        if (vs->cursor >= vs->top + height)
                vs->top = vs->cursor - height + 1;
        if (vs->is_reveal) {
                uint32_t below = 0;
                if (nv) {
                        uint8_t d = t->depth[rows[vs->cursor]];
                        while (vs->cursor + 1 + below < nv &&
                               t->depth[rows[vs->cursor + 1 + below]] > d && below + 1 < height)
                                below++;
                }
                if (vs->cursor + below >= vs->top + height)
                        vs->top = vs->cursor + below - height + 1;
        }
        if (vs->top + height > nv)
                vs->top = nv > height ? nv - height : 0;
        /* sideways: no further than the longest row shown needs (its end at the right edge),
           in steps of 8 as Left and Right move; never to a blank table */
        size_t widest = len;
        uint32_t nr_shown = nv > vs->top ? nv - vs->top : 0;
        if (nr_shown > height)
                nr_shown = height;
        if (nr_shown > s->rows_at_cap) {
                s->rows_at_cap = nr_shown;
                s->rows_at = xrealloc(s->rows_at, nr_shown * sizeof(*s->rows_at));
        }
        size_t used = 0;
        for (uint32_t k = 0; k < nr_shown; k++) {
                size_t n = format_row(t, rows[vs->top + k], w, line, sizeof(line));
                /* kept for the drawing below: each row formatted once a draw */
                if (used + n + 1 > s->rows_text_cap) {
                        s->rows_text_cap = 2 * (used + n + 1);
                        s->rows_text = xrealloc(s->rows_text, s->rows_text_cap);
                }
                memcpy(s->rows_text + used, line, n + 1);
                s->rows_at[k] = used;
                used += n + 1;
                while (n && line[n - 1] == ' ')
                        n--;
                if (n > widest)
                        widest = n;
        }
        uint32_t max_scroll =
                widest > (size_t)COLS ? (uint32_t)(widest - (size_t)COLS + 7) / 8 * 8 : 0;
        if (vs->hscroll > max_scroll)
                vs->hscroll = max_scroll;
        put_line(s, y0, scrolled(title_line, title_len, vs->hscroll),
                 attr_of(s, PAIR_COLUMNS, A_REVERSE));
        for (uint32_t k = 0; k < height; k++) {
                int y = y0 + 1 + (int)k;
                uint32_t i = vs->top + k;
                if (i >= nv) {
                        put_line(s, y, "", 0);
                        continue;
                }
                uint32_t r = rows[i];
                const char *text = s->rows_text + s->rows_at[k];
                len = strlen(text);
                int attr = 0;
                if (i == vs->cursor)
                        attr = attr_of(s, PAIR_CURSOR, A_REVERSE);
                else if (t->flags[r] & UI_ROW_GREYED)
                        attr = A_DIM;
                put_line(s, y, scrolled(text, len, vs->hscroll), attr);
        }
}

void ui_screen_draw(struct ui_screen *s, const struct ui_frame *f, struct ui_table *t,
                    struct ui_view_state *vs)
{
        s->nr_list_lines = 0; /* until the table is drawn */
        if (f->is_help) {
                draw_help(s, f->view);
                refresh();
                return;
        }
        s->help_top = 0; /* the help opens at its top */
        if (COLS < UI_MIN_COLS || LINES < UI_MIN_LINES) {
                char msg[96];
                snprintf(msg, sizeof(msg), "terminal too small (%dx%d): etwtop needs %dx%d", COLS,
                         LINES, UI_MIN_COLS, UI_MIN_LINES);
                erase();
                shown_forget(s, -1);
                mvaddnstr(0, 0, msg, COLS);
                refresh();
                return;
        }
        if (vs->has_sorted)
                ui_table_sort(t, vs->sort_col, vs->is_reversed);
        int y = 0;
        /* the header folded at the screen's width, every field seen; small terminals: the
           table keeps at least 3 rows */
        static char rows[UI_HEADER_ROWS][UI_HEADER_ROW];
        uint32_t max = LINES > 6 ? (uint32_t)(LINES - 6) : 0;
        if (max > UI_HEADER_ROWS)
                max = UI_HEADER_ROWS;
        uint32_t nr_first = ui_header_wrap(f->header, f->nr_header ? 1 : 0, COLS, rows, max);
        uint32_t nr_header =
                nr_first + ui_header_wrap(f->header + 1, f->nr_header ? f->nr_header - 1 : 0, COLS,
                                          rows + nr_first, max - nr_first);
        for (uint32_t i = 0; i < nr_header; i++)
                put_line(s, y++, rows[i],
                         i < nr_first ? (attr_of(s, PAIR_HEADER, A_BOLD) | A_BOLD) : 0);
        if (f->timeline && LINES >= 12)
                draw_timeline(s, f->timeline, y++);
        if (LINES >= 4) {
                char tabs[512];
                size_t len = 0;
                shown_forget(s, y);
                move(y, 0);
                clrtoeol();
                for (uint32_t i = 0; i < f->nr_tabs && len < sizeof(tabs); i++) {
                        int n = snprintf(tabs, sizeof(tabs), " %u %s ", i + 1, f->tabs[i]);
                        if (n < 0)
                                break;
                        int attr =
                                i == f->current_tab ? attr_of(s, PAIR_TAB, A_REVERSE) | A_BOLD : 0;
                        if (attr)
                                attron(attr);
                        addnstr(tabs, COLS - (int)len > 0 ? COLS - (int)len : 0);
                        if (attr)
                                attroff(attr);
                        len += (size_t)n;
                }
                y++;
        }
        int bottom = LINES - 2;
        if (bottom <= y + 1)
                bottom = LINES;
        if (f->page) {
                for (int row = y; row < bottom; row++) {
                        uint32_t i = f->page_top + (uint32_t)(row - y);
                        put_line(s, row, i < f->nr_page ? f->page[i] : "", 0);
                }
        } else {
                draw_table(s, t, vs, y, bottom);
        }
        if (bottom < LINES) {
                char status[512];
                if (s->input == INPUT_SEARCH)
                        snprintf(status, sizeof(status), "Search: %s_", s->input_buf);
                else if (s->input == INPUT_FILTER)
                        snprintf(status, sizeof(status), "Filter: %s_", s->input_buf);
                else if (s->is_no_match)
                        snprintf(status, sizeof(status), "Search: no row holds \"%s\"", vs->search);
                else if (vs->filter[0])
                        snprintf(status, sizeof(status), "[filter: %s] %s", vs->filter,
                                 f->status ? f->status : "");
                else
                        snprintf(status, sizeof(status), "%s", f->status ? f->status : "");
                put_line(s, LINES - 2, status, 0);
                char bar[256];
                ui_key_bar(f->view, bar, sizeof(bar));
                put_line(s, LINES - 1, bar, attr_of(s, PAIR_KEYS, A_REVERSE));
        }
        refresh();
}
