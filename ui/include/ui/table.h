/* SPDX-License-Identifier: MIT */
/* table.h: the rows one view shows, filled by the application from the model at each refresh:
   typed cells (text, counts, percentages, durations), a stable key per row so the cursor stays
   on the same row as the data changes, and a depth for tree rows. Drawn by the browser
   (browser.h) and printed as text in batch mode (table_print). */
#ifndef ETWTOP_UI_TABLE_H
#define ETWTOP_UI_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ui_col_kind {
        UI_COL_TEXT,
        UI_COL_U64, /* a count */
        UI_COL_PCT, /* a percentage, 0..100 */
        UI_COL_NS,  /* a duration in nanoseconds */
};

struct ui_column {
        const char *title;
        enum ui_col_kind kind;
        int width; /* columns on screen; text columns take what is left when 0 */
};

struct ui_cell {
        uint64_t u;
        double d;
        uint32_t text; /* offset in the table's text arena */
};

#define UI_ROW_EXPANDABLE 0x1u
#define UI_ROW_EXPANDED   0x2u
#define UI_ROW_GREYED     0x4u /* shown, not available (the reason is in its text) */
#define UI_ROW_CHECKED    0x8u /* a setting that is on */

struct ui_table {
        const struct ui_column *cols; /* borrowed */
        uint32_t nr_cols;
        struct ui_cell *cells; /* owned: nr_rows * nr_cols */
        uint64_t *keys;        /* owned: a stable identity per row */
        uint8_t *depth;        /* owned: tree indentation of the row */
        uint8_t *flags;        /* owned: UI_ROW_* */
        uint32_t nr_rows, cap_rows;
        uint32_t sort_state; /* the sort the rows are in (column + 1, bit 16 reversed), 0: none */
        char *text;          /* owned arena, NUL-terminated strings */
        size_t text_len, text_cap;
};

void ui_table_init(struct ui_table *t, const struct ui_column *cols, uint32_t nr_cols);
void ui_table_clear(struct ui_table *t); /* no rows, same columns */
void ui_table_fini(struct ui_table *t);
uint32_t ui_table_add(struct ui_table *t, uint64_t key, uint8_t depth, uint8_t flags);
void ui_table_text(struct ui_table *t, uint32_t row, uint32_t col, const char *s);
void ui_table_u64(struct ui_table *t, uint32_t row, uint32_t col, uint64_t v);
void ui_table_pct(struct ui_table *t, uint32_t row, uint32_t col, double pct);
const char *ui_table_cell_text(const struct ui_table *t, uint32_t row, uint32_t col);
/* The cell as it is shown ("12.34%", "1.250 ms", "1234", the text). */
void ui_table_format(const struct ui_table *t, uint32_t row, uint32_t col, char *buf, size_t size);
/* Sorts rows by one column (text A-Z, numbers largest first; is_reversed inverts), keeping
   each tree row under its parent: only rows of depth 0 move, with their subtrees. */
void ui_table_sort(struct ui_table *t, uint32_t col, bool is_reversed);
/* The table as text lines (batch mode and snapshots), at most max_rows rows (0: all). */
void ui_table_print(const struct ui_table *t, int fd, uint32_t max_rows);

#endif
