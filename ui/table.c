/* SPDX-License-Identifier: MIT */
/* table.c: owns a view's rows: typed cells, keys, tree depth, sorting and the text form. */
#include "ui/table.h"

#include "ui/text_sanitize.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *xrealloc(void *p, size_t n)
{
        void *q = realloc(p, n ? n : 1);
        if (!q)
                abort();
        return q;
}

void ui_table_init(struct ui_table *t, const struct ui_column *cols, uint32_t nr_cols)
{
        memset(t, 0, sizeof(*t));
        t->cols = cols;
        t->nr_cols = nr_cols;
        t->text_cap = 4096;
        t->text = xrealloc(NULL, t->text_cap);
        t->text[0] = 0;
        t->text_len = 1;
}

void ui_table_clear(struct ui_table *t)
{
        t->nr_rows = 0;
        t->text_len = 1;
}

void ui_table_fini(struct ui_table *t)
{
        free(t->cells);
        free(t->keys);
        free(t->depth);
        free(t->flags);
        free(t->text);
        memset(t, 0, sizeof(*t));
}

uint32_t ui_table_add(struct ui_table *t, uint64_t key, uint8_t depth, uint8_t flags)
{
        if (t->nr_rows == t->cap_rows) {
                t->cap_rows = t->cap_rows ? t->cap_rows * 2 : 256;
                t->cells = xrealloc(t->cells, (size_t)t->cap_rows * t->nr_cols * sizeof(*t->cells));
                t->keys = xrealloc(t->keys, t->cap_rows * sizeof(*t->keys));
                t->depth = xrealloc(t->depth, t->cap_rows);
                t->flags = xrealloc(t->flags, t->cap_rows);
        }
        uint32_t r = t->nr_rows++;
        memset(&t->cells[(size_t)r * t->nr_cols], 0, t->nr_cols * sizeof(*t->cells));
        t->keys[r] = key;
        t->depth[r] = depth;
        t->flags[r] = flags;
        return r;
}

static struct ui_cell *cell(struct ui_table *t, uint32_t row, uint32_t col)
{
        return &t->cells[(size_t)row * t->nr_cols + col];
}

void ui_table_text(struct ui_table *t, uint32_t row, uint32_t col, const char *s)
{
        if (row >= t->nr_rows || col >= t->nr_cols)
                return;
        char clean[1024];
        text_sanitize(clean, sizeof(clean), s ? s : "");
        size_t n = strlen(clean) + 1;
        if (t->text_len + n > t->text_cap) {
                while (t->text_len + n > t->text_cap)
                        t->text_cap *= 2;
                t->text = xrealloc(t->text, t->text_cap);
        }
        memcpy(t->text + t->text_len, clean, n);
        cell(t, row, col)->text = (uint32_t)t->text_len;
        t->text_len += n;
}

void ui_table_u64(struct ui_table *t, uint32_t row, uint32_t col, uint64_t v)
{
        if (row < t->nr_rows && col < t->nr_cols) {
                cell(t, row, col)->u = v;
                cell(t, row, col)->d = (double)v;
        }
}

void ui_table_pct(struct ui_table *t, uint32_t row, uint32_t col, double pct)
{
        if (row < t->nr_rows && col < t->nr_cols)
                cell(t, row, col)->d = pct;
}

const char *ui_table_cell_text(const struct ui_table *t, uint32_t row, uint32_t col)
{
        if (row >= t->nr_rows || col >= t->nr_cols)
                return "";
        return t->text + t->cells[(size_t)row * t->nr_cols + col].text;
}

void ui_table_format(const struct ui_table *t, uint32_t row, uint32_t col, char *buf, size_t size)
{
        const struct ui_cell *c = &t->cells[(size_t)row * t->nr_cols + col];
        switch (t->cols[col].kind) {
        case UI_COL_TEXT: snprintf(buf, size, "%s", t->text + c->text); break;
        case UI_COL_U64: snprintf(buf, size, "%" PRIu64, c->u); break;
        case UI_COL_PCT: snprintf(buf, size, "%.2f%%", c->d); break;
        case UI_COL_NS:
                if (c->u >= 10000000000ull)
                        snprintf(buf, size, "%.1f s", (double)c->u / 1e9);
                else if (c->u >= 10000000ull)
                        snprintf(buf, size, "%.1f ms", (double)c->u / 1e6);
                else
                        snprintf(buf, size, "%.1f us", (double)c->u / 1e3);
                break;
        }
}

/* ---- sorting: top-level rows move with their subtrees ---- */

struct sort_ctx {
        const struct ui_table *t;
        uint32_t col;
        bool is_reversed;
};
static struct sort_ctx sort_ctx; /* qsort has no context argument in C11 */

struct block {
        uint32_t first, count;
};

static int block_cmp(const void *a, const void *b)
{
        const struct block *x = a, *y = b;
        const struct ui_table *t = sort_ctx.t;
        uint32_t col = sort_ctx.col;
        int r;
        if (t->cols[col].kind == UI_COL_TEXT) {
                r = strcmp(ui_table_cell_text(t, x->first, col),
                           ui_table_cell_text(t, y->first, col));
        } else {
                double dx = t->cells[(size_t)x->first * t->nr_cols + col].d;
                double dy = t->cells[(size_t)y->first * t->nr_cols + col].d;
                r = dx > dy ? -1 : dx < dy; /* largest first */
        }
        if (sort_ctx.is_reversed)
                r = -r;
        if (r == 0)
                r = x->first < y->first ? -1 : x->first > y->first; /* stable */
        return r;
}

void ui_table_sort(struct ui_table *t, uint32_t col, bool is_reversed)
{
        if (col >= t->nr_cols || t->nr_rows < 2)
                return;
        struct block *b = xrealloc(NULL, t->nr_rows * sizeof(*b));
        uint32_t nb = 0;
        for (uint32_t r = 0; r < t->nr_rows; r++) {
                if (t->depth[r] == 0 || nb == 0)
                        b[nb++] = (struct block){r, 1};
                else
                        b[nb - 1].count++;
        }
        sort_ctx = (struct sort_ctx){t, col, is_reversed};
        qsort(b, nb, sizeof(*b), block_cmp);
        /* permute the rows */
        struct ui_cell *cells = xrealloc(NULL, (size_t)t->cap_rows * t->nr_cols * sizeof(*cells));
        uint64_t *keys = xrealloc(NULL, t->cap_rows * sizeof(*keys));
        uint8_t *depth = xrealloc(NULL, t->cap_rows);
        uint8_t *flags = xrealloc(NULL, t->cap_rows);
        uint32_t o = 0;
        for (uint32_t i = 0; i < nb; i++) {
                for (uint32_t k = 0; k < b[i].count; k++, o++) {
                        uint32_t r = b[i].first + k;
                        memcpy(&cells[(size_t)o * t->nr_cols], &t->cells[(size_t)r * t->nr_cols],
                               t->nr_cols * sizeof(*cells));
                        keys[o] = t->keys[r];
                        depth[o] = t->depth[r];
                        flags[o] = t->flags[r];
                }
        }
        free(t->cells);
        free(t->keys);
        free(t->depth);
        free(t->flags);
        t->cells = cells;
        t->keys = keys;
        t->depth = depth;
        t->flags = flags;
        free(b);
}

static void write_all(int fd, const char *s, size_t n)
{
        while (n) {
                ssize_t w = write(fd, s, n);
                if (w <= 0)
                        return;
                s += w;
                n -= (size_t)w;
        }
}

void ui_table_print(const struct ui_table *t, int fd, uint32_t max_rows)
{
        char line[2048], cellbuf[1024];
        size_t len = 0;
        for (uint32_t c = 0; c < t->nr_cols; c++) {
                int w = t->cols[c].width;
                len += (size_t)snprintf(line + len, sizeof(line) - len,
                                        t->cols[c].kind == UI_COL_TEXT ? "%-*s " : "%*s ", w,
                                        t->cols[c].title);
                if (len >= sizeof(line))
                        len = sizeof(line) - 1;
        }
        while (len && line[len - 1] == ' ')
                len--;
        line[len++] = '\n';
        write_all(fd, line, len);
        for (uint32_t r = 0; r < t->nr_rows && (!max_rows || r < max_rows); r++) {
                len = 0;
                for (uint32_t c = 0; c < t->nr_cols; c++) {
                        int w = t->cols[c].width;
                        ui_table_format(t, r, c, cellbuf, sizeof(cellbuf));
                        if (t->cols[c].kind == UI_COL_TEXT) {
                                int indent = c == t->nr_cols - 1 ? 2 * t->depth[r] : 0;
                                len += (size_t)snprintf(line + len, sizeof(line) - len, "%*s%-*s ",
                                                        indent, "", w, cellbuf);
                        } else {
                                len += (size_t)snprintf(line + len, sizeof(line) - len, "%*s ", w,
                                                        cellbuf);
                        }
                        if (len >= sizeof(line))
                                len = sizeof(line) - 1;
                }
                while (len && line[len - 1] == ' ')
                        len--;
                line[len++] = '\n';
                write_all(fd, line, len);
        }
}
