/* SPDX-License-Identifier: MIT */
/* table.h: the rows one view shows, filled by the application from the model at each refresh:
   typed cells (text, counts, percentages, durations), a stable key per row so the cursor stays
   on the same row as the data changes, and a depth for tree rows. Drawn by the list browser
   (screen.h) and printed as text in batch mode (ui_table_print). */
#ifndef ETWTOP_UI_TABLE_H
#define ETWTOP_UI_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ui_col_kind {
        UI_COL_TEXT,
        UI_COL_U64,   /* a count */
        UI_COL_PCT,   /* a percentage, 0..100 */
        UI_COL_NS,    /* a duration in nanoseconds */
        UI_COL_RATIO, /* a ratio (instructions per cycle), two decimals; 0 is left blank */
        UI_COL_MS,    /* a duration in nanoseconds, shown in milliseconds with 3 decimals */
        UI_COL_REAL,  /* a number with decimals (ui_text_col.decimals) */
};

struct ui_column {
        const char *title; /* NULL: a hidden column (kept, not shown or printed) */
        enum ui_col_kind kind;
        int width; /* columns on screen; text columns take what is left when 0 */
        int drop;  /* on a narrow terminal, columns go in this order (1 first); 0: never */
};

/* How the text form (ui_table_print, ui_table_format) lays out a column besides its width (the
   screen lays out its own). */
struct ui_text_col {
        int gap;      /* spaces before the column, past the one after the column before */
        int decimals; /* UI_COL_REAL's */
        bool is_tree; /* a tree row's indentation goes here, within the width (else: before the
                         last column's text) */
};

/* One cell, by its column's kind. */
struct ui_cell {
        union {
                uint64_t u;       /* UI_COL_U64, UI_COL_NS */
                double d;         /* UI_COL_PCT, UI_COL_RATIO, UI_COL_REAL; NaN: no value, "-" */
                const char *text; /* UI_COL_TEXT: borrowed, or in the table's arena; NULL: "" */
        };
};

#define UI_ROW_EXPANDABLE 0x1u
#define UI_ROW_EXPANDED   0x2u
#define UI_ROW_GREYED     0x4u  /* shown, not available (the reason is in its text) */
#define UI_ROW_CHECKED    0x8u  /* a setting that is on */
#define UI_ROW_SPARSE     0x10u /* a detail row: its numbers of 0 are shown blank */

/* One block of an arena's text. */
struct ui_text_chunk {
        struct ui_text_chunk *next; /* owned */
        size_t used, size;
        char data[];
};

/* Text copied into a table: chunks that never move, kept from one refresh to the next. */
struct ui_text_arena {
        struct ui_text_chunk *first; /* owned list */
        struct ui_text_chunk *cur;   /* borrowed: the chunk being filled */
};

struct ui_table {
        const struct ui_column *cols; /* borrowed */
        uint32_t nr_cols;
        struct ui_cell *cells; /* owned: cap_rows * nr_cols, rows in the order they were added */
        uint64_t *keys;        /* owned: a stable identity per row */
        uint8_t *depth;        /* owned: tree indentation of the row */
        uint8_t *flags;        /* owned: UI_ROW_* */
        uint32_t *order;       /* owned: the rows (indices of the arrays above) as shown */
        uint32_t nr_rows, cap_rows;
        uint32_t sort_state; /* the sort the rows are in (column + 1, bit 16 reversed), 0: none */
        uint64_t generation; /* changes whenever the rows, their text or their order change */
        struct ui_text_arena text;
        void *scratch; /* owned: the sort's work space, kept between sorts */
        size_t scratch_size;
        uint32_t *spare_order; /* owned: the sort's next order, cap_rows long */
        /* borrowed, nr_cols of them (ui_table_init: NULL, no gaps, 2 decimals) */
        const struct ui_text_col *text_cols;
};

void ui_table_init(struct ui_table *t, const struct ui_column *cols, uint32_t nr_cols);
/* No rows, same columns; the memory stays for the next fill. Ends the term of the borrowed
   strings (ui_table_text_borrow). */
void ui_table_clear(struct ui_table *t);
void ui_table_fini(struct ui_table *t);
/* Room for nr_rows rows in all, so that adding them allocates nothing more. */
void ui_table_reserve(struct ui_table *t, uint32_t nr_rows);

/* Adding rows and setting cells is inline (the definitions end this header): a refresh does it
   for every cell of every row. */

/* A row at the end of the shown order, its cells 0 and "": returns its index (for the
   setters, keys[], flags[]). */
static inline uint32_t ui_table_add(struct ui_table *t, uint64_t key, uint8_t depth, uint8_t flags);
/* The setters take the cell's column kind: text for text columns, counts (u64) for counts and
   durations (and percentages, as the number), percentages for percentage columns; any other
   combination, or a cell out of the table, is ignored. */
/* The text is copied (sanitized, at most 1023 bytes). */
void ui_table_text(struct ui_table *t, uint32_t row, uint32_t col, const char *s);
/* A place without a name, as the symbol store writes it: "base+0x1a2b", or "0x1a2b" when base
   is NULL; copied as by ui_table_text. Many times cheaper than formatting it with printf and
   copying that, for tables of many unnamed addresses. */
void ui_table_text_addr(struct ui_table *t, uint32_t row, uint32_t col, const char *base,
                        uint64_t offset);
/* The table keeps the pointer, not a copy: s must stay valid and unchanged until the next
   ui_table_clear or ui_table_fini (interned names, literals; NULL is ""). It is sanitized
   when shown, sorted or searched, as ui_table_text would have. What most of a big table's text
   should use: nothing is copied for the rows that are never shown. */
static inline void ui_table_text_borrow(struct ui_table *t, uint32_t row, uint32_t col,
                                        const char *s);
static inline void ui_table_u64(struct ui_table *t, uint32_t row, uint32_t col, uint64_t v);
/* Also a UI_COL_REAL's number; NaN: no value ("-"). */
static inline void ui_table_pct(struct ui_table *t, uint32_t row, uint32_t col, double pct);

/* The text as stored (borrowed text not yet sanitized); "" for other cells. */
const char *ui_table_cell_text(const struct ui_table *t, uint32_t row, uint32_t col);
/* The cell as it is shown ("12.34%", "1250.0 ms", "1234", the sanitized text). */
void ui_table_format(const struct ui_table *t, uint32_t row, uint32_t col, char *buf, size_t size);
/* Whether one of the row's text cells, as shown, contains needle ("" matches every row). */
bool ui_table_row_contains(const struct ui_table *t, uint32_t row, const char *needle);
/* Sorts rows by one column (text A-Z, numbers largest first; is_reversed inverts), keeping
   each tree row under its parent: only rows of depth 0 move, with their subtrees. Stable: equal
   rows keep the order they are shown in. Only order[] changes (the other arrays keep the order
   of ui_table_add). */
void ui_table_sort(struct ui_table *t, uint32_t col, bool is_reversed);
/* The table as text lines (batch mode, --replay -b, snapshots): the column titles, then at
   most max_rows rows (0: all), each column in its width (numbers right, text left), one space
   and its gap between them, no trailing spaces. 0, or -errno of a failed write. */
int ui_table_print(const struct ui_table *t, int fd, uint32_t max_rows);

/* ---- the inline definitions ---- */

static inline uint32_t ui_table_add(struct ui_table *t, uint64_t key, uint8_t depth, uint8_t flags)
{
        if (t->nr_rows == t->cap_rows)
                ui_table_reserve(t, t->nr_rows + 1);
        uint32_t r = t->nr_rows++;
        struct ui_cell *c = &t->cells[(size_t)r * t->nr_cols];
        for (uint32_t i = 0; i < t->nr_cols; i++)
                c[i].u = 0; /* a NULL text: "" */
        t->keys[r] = key;
        t->depth[r] = depth;
        t->flags[r] = flags;
        t->order[r] = r;
        t->sort_state = 0;
        t->generation++;
        return r;
}

static inline void ui_table_text_borrow(struct ui_table *t, uint32_t row, uint32_t col,
                                        const char *s)
{
        if (row >= t->nr_rows || col >= t->nr_cols || t->cols[col].kind != UI_COL_TEXT)
                return;
        t->cells[(size_t)row * t->nr_cols + col].text = s;
        t->sort_state = 0;
        t->generation++;
}

static inline void ui_table_u64(struct ui_table *t, uint32_t row, uint32_t col, uint64_t v)
{
        if (row >= t->nr_rows || col >= t->nr_cols)
                return;
        struct ui_cell *c = &t->cells[(size_t)row * t->nr_cols + col];
        switch (t->cols[col].kind) {
        case UI_COL_U64:
        case UI_COL_NS:
        case UI_COL_MS: c->u = v; break;
        case UI_COL_PCT:
        case UI_COL_RATIO:
        case UI_COL_REAL: c->d = (double)v; break;
        case UI_COL_TEXT: return;
        }
        t->sort_state = 0;
}

static inline void ui_table_pct(struct ui_table *t, uint32_t row, uint32_t col, double pct)
{
        if (row >= t->nr_rows || col >= t->nr_cols ||
            (t->cols[col].kind != UI_COL_PCT && t->cols[col].kind != UI_COL_RATIO &&
             t->cols[col].kind != UI_COL_REAL))
                return;
        t->cells[(size_t)row * t->nr_cols + col].d = pct;
        t->sort_state = 0;
}

#endif
