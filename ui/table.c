/* SPDX-License-Identifier: MIT */
/* table.c: owns a view's rows: typed cells, keys, tree depth, the shown order and its sorting,
   the text arena and the text form. */
#include "ui/table.h"

#include "util/decimal.h"
#include "util/xalloc.h"

#include "ui/text_sanitize.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A cell's text as shown is at most TEXT_MAX - 1 bytes (cut on a UTF-8 boundary). */
#define TEXT_MAX 1024
/* Text that matches or sorts as it is stored, without a sanitized copy: printable ASCII this
   long or shorter is never cut (text_sanitize stops at most 4 bytes before TEXT_MAX). */
#define TEXT_SAFE (TEXT_MAX - 4)

#define CHUNK_BYTES (64 * 1024)

/* ---- the text arena ---- */

/* n bytes that stay where they are until the arena is reset. */
static char *arena_alloc(struct ui_text_arena *a, size_t n)
{
        struct ui_text_chunk *c = a->cur;
        while (!c || c->used + n > c->size) {
                /* the next chunk: one an earlier fill left empty, or a new one */
                struct ui_text_chunk *next = c ? c->next : a->first;
                if (next && n <= next->size) {
                        c = next;
                        continue;
                }
                size_t size = n > CHUNK_BYTES ? n : CHUNK_BYTES;
                struct ui_text_chunk *k = xmalloc(sizeof(*k) + size);
                k->next = next;
                k->used = 0;
                k->size = size;
                if (c)
                        c->next = k;
                else
                        a->first = k;
                c = k;
        }
        a->cur = c;
        char *p = c->data + c->used;
        c->used += n;
        return p;
}

/* Gives back the end of the last allocation. */
static void arena_unalloc(struct ui_text_arena *a, size_t n)
{
        a->cur->used -= n;
}

static void arena_reset(struct ui_text_arena *a)
{
        for (struct ui_text_chunk *c = a->first; c; c = c->next)
                c->used = 0;
        a->cur = a->first;
}

static void arena_free(struct ui_text_arena *a)
{
        struct ui_text_chunk *c = a->first;
        while (c) {
                struct ui_text_chunk *next = c->next;
                free(c);
                c = next;
        }
        a->first = a->cur = NULL;
}

/* ---- rows and cells ---- */

void ui_table_init(struct ui_table *t, const struct ui_column *cols, uint32_t nr_cols)
{
        static uint64_t nr_made; /* the screen's thread's */
        memset(t, 0, sizeof(*t));
        t->cols = cols;
        t->nr_cols = nr_cols;
        /* each table's generations its own, should one be made where another was */
        t->generation = ++nr_made << 32;
}

void ui_table_clear(struct ui_table *t)
{
        t->sort_state = 0;
        t->nr_rows = 0;
        t->generation++;
        arena_reset(&t->text);
}

void ui_table_fini(struct ui_table *t)
{
        free(t->cells);
        free(t->keys);
        free(t->depth);
        free(t->flags);
        free(t->order);
        free(t->spare_order);
        free(t->scratch);
        arena_free(&t->text);
        memset(t, 0, sizeof(*t));
}

void ui_table_reserve(struct ui_table *t, uint32_t nr_rows)
{
        if (nr_rows <= t->cap_rows)
                return;
        uint32_t cap = t->cap_rows ? t->cap_rows : 256;
        while (cap < nr_rows)
                cap = cap > UINT32_MAX / 2 ? UINT32_MAX : cap * 2;
        t->cap_rows = cap;
        t->cells = xrealloc(t->cells, (size_t)cap * t->nr_cols * sizeof(*t->cells));
        t->keys = xrealloc(t->keys, cap * sizeof(*t->keys));
        t->depth = xrealloc(t->depth, cap);
        t->flags = xrealloc(t->flags, cap);
        t->order = xrealloc(t->order, cap * sizeof(*t->order));
        t->spare_order = xrealloc(t->spare_order, cap * sizeof(*t->spare_order));
}

static struct ui_cell *cell(const struct ui_table *t, uint32_t row, uint32_t col)
{
        return &t->cells[(size_t)row * t->nr_cols + col];
}

/* A text cell's text: NULL (a new row's, or borrowed NULL) is "". */
static const char *text_of(const struct ui_cell *c)
{
        return c->text ? c->text : "";
}

void ui_table_text(struct ui_table *t, uint32_t row, uint32_t col, const char *s)
{
        if (row >= t->nr_rows || col >= t->nr_cols || t->cols[col].kind != UI_COL_TEXT)
                return;
        s = s ? s : "";
        size_t n = strnlen(s, TEXT_MAX - 1) + 1;
        char *p = arena_alloc(&t->text, n);
        size_t len = text_sanitize(p, n, s); /* shorter only when cut at TEXT_MAX */
        arena_unalloc(&t->text, n - len - 1);
        cell(t, row, col)->text = p;
        t->sort_state = 0;
        t->generation++;
}

void ui_table_text_addr(struct ui_table *t, uint32_t row, uint32_t col, const char *base,
                        uint64_t offset)
{
        char text[TEXT_MAX + 24];
        size_t n = 0;
        if (base) {
                n = strnlen(base, TEXT_MAX);
                memcpy(text, base, n);
                text[n++] = '+';
        }
        text[n++] = '0';
        text[n++] = 'x';
        int nr_digits = offset ? (64 - __builtin_clzll(offset) + 3) / 4 : 1;
        for (int i = nr_digits - 1; i >= 0; i--, offset >>= 4)
                text[n + (size_t)i] = "0123456789abcdef"[offset & 15];
        text[n + (size_t)nr_digits] = 0;
        ui_table_text(t, row, col, text);
}

const char *ui_table_cell_text(const struct ui_table *t, uint32_t row, uint32_t col)
{
        if (row >= t->nr_rows || col >= t->nr_cols || t->cols[col].kind != UI_COL_TEXT)
                return "";
        return text_of(cell(t, row, col));
}

/* v in decimal into buf (size > 20), as "%" PRIu64 writes it; the bytes written. */
static size_t put_u64(char *buf, uint64_t v)
{
        size_t n = decimal_put(buf, v);
        buf[n] = 0;
        return n;
}

/* d as "%.2f" writes it, then suffix, into buf of size bytes: false where it is not sure of
   printf's rounding (d * 100 within a millionth of a half, whose exact binary value only printf
   rounds right), or d is negative, not finite or large: the caller asks snprintf. The refresh
   formats every number it shows, and printf's conversion of a double was ~1,000 instructions. */
static bool put_fixed2(char *buf, size_t size, double d, const char *suffix)
{
        if (signbit(d) || !(d < 1e9) || size < 32)
                return false;
        double s = d * 100;
        double whole = floor(s);
        double frac = s - whole;
        if (fabs(frac - 0.5) < 1e-6)
                return false;
        uint64_t r = (uint64_t)whole + (frac > 0.5);
        size_t n = put_u64(buf, r / 100);
        buf[n++] = '.';
        buf[n++] = (char)('0' + r % 100 / 10);
        buf[n++] = (char)('0' + r % 10);
        for (const char *x = suffix; *x; x++)
                buf[n++] = *x;
        buf[n] = 0;
        return true;
}

void ui_table_format(const struct ui_table *t, uint32_t row, uint32_t col, char *buf, size_t size)
{
        const struct ui_cell *c = cell(t, row, col);
        /* a number of 0 (0.0 too: all bits 0) */
        if ((t->flags[row] & UI_ROW_SPARSE) && t->cols[col].kind != UI_COL_TEXT && !c->u) {
                if (size)
                        buf[0] = 0;
                return;
        }
        switch (t->cols[col].kind) {
        case UI_COL_TEXT: text_sanitize(buf, size < TEXT_MAX ? size : TEXT_MAX, text_of(c)); break;
        case UI_COL_U64:
                if (size > 20)
                        put_u64(buf, c->u);
                else
                        snprintf(buf, size, "%" PRIu64, c->u);
                break;
        case UI_COL_PCT:
                if (isnan(c->d))
                        snprintf(buf, size, "-");
                else if (!put_fixed2(buf, size, c->d, "%"))
                        snprintf(buf, size, "%.2f%%", c->d);
                break;
        case UI_COL_RATIO:
                if (c->d == 0) {
                        if (size)
                                buf[0] = '\0';
                } else if (!put_fixed2(buf, size, c->d, "")) {
                        snprintf(buf, size, "%.2f", c->d);
                }
                break;
        case UI_COL_REAL:
                if (isnan(c->d))
                        snprintf(buf, size, "-");
                else
                        snprintf(buf, size, "%.*f", t->text_cols ? t->text_cols[col].decimals : 2,
                                 c->d);
                break;
        case UI_COL_MS: snprintf(buf, size, "%.3f", (double)c->u / 1e6); break;
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

/* ---- the text as shown: sanitized, cut at TEXT_MAX ---- */

/* Whether s is shown exactly as it is stored. */
static bool is_shown_as_is(const char *s)
{
        for (size_t i = 0; s[i]; i++) {
                unsigned char c = (unsigned char)s[i];
                if (i >= TEXT_SAFE || c < 0x20 || c >= 0x7F)
                        return text_is_clean(s) && strnlen(s, TEXT_MAX) < TEXT_MAX;
        }
        return true;
}

/* Whether s as shown contains needle (nlen bytes). is_plain: needle is printable ASCII without
   '?', the one character sanitizing brings in, so that a match in s is one in the shown text
   unless it lies where the shown text may be cut. */
static bool text_contains(const char *s, const char *needle, size_t nlen, bool is_plain)
{
        if (is_plain) {
                const char *p = strstr(s, needle);
                if (!p)
                        return false;
                if ((size_t)(p - s) + nlen <= TEXT_SAFE)
                        return true;
        }
        char shown[TEXT_MAX];
        text_sanitize(shown, sizeof(shown), s);
        return strstr(shown, needle) != NULL;
}

bool ui_table_row_contains(const struct ui_table *t, uint32_t row, const char *needle)
{
        if (!*needle)
                return true;
        if (row >= t->nr_rows)
                return false;
        size_t nlen = strlen(needle);
        bool is_plain = true;
        for (size_t i = 0; i < nlen && is_plain; i++)
                is_plain = needle[i] >= 0x20 && needle[i] < 0x7F && needle[i] != '?';
        const struct ui_cell *c = cell(t, row, 0);
        for (uint32_t col = 0; col < t->nr_cols; col++)
                if (t->cols[col].kind == UI_COL_TEXT && t->cols[col].title &&
                    text_contains(text_of(&c[col]), needle, nlen, is_plain))
                        return true;
        return false;
}

/* ---- sorting: top-level rows move with their subtrees ---- */

/* A block: a row of depth 0 and the rows under it, by its key in the sort column. */
struct sort_item {
        uint64_t key;   /* ascending order is the sort's (text: 8 bytes of it, see text_chunk) */
        uint32_t block; /* its index in the shown order of blocks */
        uint32_t row;   /* its first row */
};

#define RADIX_MAX_BITS 16

/* The order of doubles as unsigned integers, largest first. */
static uint64_t desc_key(double d)
{
        uint64_t u;
        memcpy(&u, &d, sizeof(u));
        u = (u >> 63) ? ~u : u | (1ull << 63); /* ascending order of the bits */
        return ~u;
}

/* A stable LSD radix sort by key, over the bits that differ between the keys only (a count
   column: one pass of at most 16 bits, mostly), in digits of no more counters than items.
   Returns a or tmp, whichever ends sorted; count: 2^RADIX_MAX_BITS + 1 counters. */
static struct sort_item *radix_sort(struct sort_item *a, struct sort_item *tmp, uint32_t n,
                                    uint32_t *count)
{
        uint64_t diff = 0;
        for (uint32_t i = 1; i < n; i++)
                diff |= a[i].key ^ a[0].key;
        if (!diff)
                return a;
        int lo = __builtin_ctzll(diff), width = 64 - __builtin_clzll(diff) - lo;
        int max_bits = 8;
        while (max_bits < RADIX_MAX_BITS && (1u << max_bits) < n)
                max_bits++;
        int nr_passes = (width + max_bits - 1) / max_bits;
        int bits = (width + nr_passes - 1) / nr_passes;
        uint64_t mask = (1ull << bits) - 1;
        for (int pass = 0; pass < nr_passes; pass++) {
                int shift = lo + pass * bits;
                memset(count, 0, (mask + 2) * sizeof(*count));
                for (uint32_t i = 0; i < n; i++)
                        count[((a[i].key >> shift) & mask) + 1]++;
                if (count[((a[0].key >> shift) & mask) + 1] == n)
                        continue; /* one digit everywhere: nothing moves */
                for (uint64_t d = 0; d < mask; d++)
                        count[d + 1] += count[d];
                for (uint32_t i = 0; i < n; i++)
                        tmp[count[(a[i].key >> shift) & mask]++] = a[i];
                struct sort_item *x = a;
                a = tmp;
                tmp = x;
        }
        return a;
}

/* The 8 bytes of s from its start, big-endian, zeros past its end: as numbers they compare as
   strcmp compares them. A chunk whose last byte is not 0 has more text after it. */
static uint64_t text_chunk(const char *s)
{
        uint64_t k = 0;
        for (int i = 0; i < 8 && s[i]; i++)
                k |= (uint64_t)(unsigned char)s[i] << (56 - 8 * i);
        return k;
}

/* A stable sort of items by their blocks' text (text[block]) from byte depth on, where the
   items agree on the bytes before it: an MSD radix sort 8 bytes at a time (each step the LSD
   radix sort of numbers), insertion sort for a few items. */
static void text_radix_sort(struct sort_item *a, struct sort_item *tmp, uint32_t n, size_t depth,
                            const char *const *text, uint32_t *count)
{
        if (n < 16) {
                for (uint32_t i = 1; i < n; i++) {
                        struct sort_item x = a[i];
                        const char *s = text[x.block] + depth;
                        uint32_t j = i;
                        for (; j && strcmp(text[a[j - 1].block] + depth, s) > 0; j--)
                                a[j] = a[j - 1];
                        a[j] = x;
                }
                return;
        }
        for (uint32_t i = 0; i < n; i++)
                a[i].key = text_chunk(text[a[i].block] + depth);
        struct sort_item *sorted = radix_sort(a, tmp, n, count);
        if (sorted != a)
                memcpy(a, sorted, (size_t)n * sizeof(*a));
        /* runs of items equal so far that go on: sorted by the next 8 bytes */
        for (uint32_t i = 0, j; i < n; i = j) {
                for (j = i + 1; j < n && a[j].key == a[i].key; j++)
                        ;
                if (j - i > 1 && (a[i].key & 0xFF))
                        text_radix_sort(a + i, tmp + i, j - i, depth + 8, text, count);
        }
}

/* Sorts the blocks' items by the text of each block's first row as shown (text[block], the
   stored text; replaced here by a sanitized copy in copies where sanitizing changes it), A-Z,
   equal text in block order. */
static void text_sort(struct sort_item *items, struct sort_item *tmp, uint32_t n, const char **text,
                      uint32_t *count, struct ui_text_arena *copies)
{
        const char *last = NULL;
        const char *last_shown = NULL;
        for (uint32_t b = 0; b < n; b++) {
                if (text[b] != last) {
                        last = text[b];
                        last_shown = last;
                        if (!is_shown_as_is(last)) {
                                char *copy = arena_alloc(copies, TEXT_MAX);
                                text_sanitize(copy, TEXT_MAX, last);
                                last_shown = copy;
                        }
                }
                text[b] = last_shown;
        }
        text_radix_sort(items, tmp, n, 0, text, count);
}

void ui_table_sort(struct ui_table *t, uint32_t col, bool is_reversed)
{
        if (col >= t->nr_cols || t->nr_rows < 2)
                return;
        uint32_t state = (col + 1) | (is_reversed ? 1u << 16 : 0);
        if (t->sort_state == state)
                return; /* sorted so since the last change */
        uint32_t n = t->nr_rows;
        size_t need = 2 * (size_t)n * sizeof(struct sort_item) + (size_t)n * sizeof(char *) +
                      ((size_t)n + 1) * sizeof(uint32_t) +
                      ((1u << RADIX_MAX_BITS) + 1) * sizeof(uint32_t);
        if (t->scratch_size < need) {
                free(t->scratch);
                t->scratch = xmalloc(need);
                t->scratch_size = need;
        }
        struct sort_item *items = t->scratch, *tmp = items + n;
        const char **text = (const char **)(tmp + n); /* text columns: each block's */
        uint32_t *first = (uint32_t *)(text + n);     /* each block's first place in order[] */
        uint32_t *count = first + n + 1;
        uint32_t nb = 0;
        for (uint32_t i = 0; i < n; i++)
                if (t->depth[t->order[i]] == 0 || i == 0)
                        first[nb++] = i;
        first[nb] = n;

        enum ui_col_kind kind = t->cols[col].kind;
        struct sort_item *sorted = items;
        if (kind == UI_COL_TEXT) {
                for (uint32_t b = 0; b < nb; b++) {
                        items[b].row = t->order[first[b]];
                        items[b].block = b;
                        text[b] = text_of(cell(t, items[b].row, col));
                }
                struct ui_text_arena copies = {0};
                text_sort(items, tmp, nb, text, count, &copies);
                arena_free(&copies);
        } else {
                uint64_t all = 0;
                for (uint32_t b = 0; b < nb; b++) {
                        items[b].row = t->order[first[b]];
                        items[b].key = cell(t, items[b].row, col)->u;
                        items[b].block = b;
                        all |= items[b].key;
                }
                if (kind == UI_COL_PCT || kind == UI_COL_RATIO || kind == UI_COL_REAL) {
                        for (uint32_t b = 0; b < nb; b++) {
                                double d;
                                memcpy(&d, &items[b].key, sizeof(d));
                                items[b].key = desc_key(d);
                        }
                } else if (all >> 53) {
                        /* counts a double cannot hold exactly: ordered as doubles, as shown */
                        for (uint32_t b = 0; b < nb; b++)
                                items[b].key = desc_key((double)items[b].key);
                } else {
                        for (uint32_t b = 0; b < nb; b++)
                                items[b].key = ~items[b].key;
                }
                sorted = radix_sort(items, tmp, nb, count);
        }
        /* the new order: the blocks' rows, block after block */
        if (nb == n) {
                for (uint32_t j = 0; j < n; j++)
                        t->spare_order[j] = sorted[is_reversed ? n - 1 - j : j].row;
        } else {
                uint32_t o = 0;
                for (uint32_t j = 0; j < nb; j++) {
                        uint32_t b = sorted[is_reversed ? nb - 1 - j : j].block;
                        for (uint32_t i = first[b]; i < first[b + 1]; i++)
                                t->spare_order[o++] = t->order[i];
                }
        }
        uint32_t *old = t->order;
        t->order = t->spare_order;
        t->spare_order = old;
        t->sort_state = state;
        t->generation++;
}

/* ---- text form ---- */

static int write_all(int fd, const char *s, size_t n)
{
        while (n) {
                ssize_t w = write(fd, s, n);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0)
                        return w < 0 ? -errno : -EIO;
                s += w;
                n -= (size_t)w;
        }
        return 0;
}

/* The text lines being built, written out in blocks (a write a line was a third of a small
   report's system calls): grows as its cells need. */
struct line_buf {
        char *s; /* owned */
        size_t len, cap;
        size_t line; /* where the line being built starts */
};

#define LINES_FLUSH_BYTES 65536

/* Appends s, after indent spaces, in width columns (left-justified with is_left), and a space. */
static void put_cell(struct line_buf *l, int indent, int width, bool is_left, const char *s)
{
        size_t n = strlen(s), w = width > 0 ? (size_t)width : 0;
        size_t need = l->len + (size_t)(indent > 0 ? indent : 0) + (n > w ? n : w) + 2;
        if (need > l->cap) {
                l->cap = need * 2;
                l->s = xrealloc(l->s, l->cap);
        }
        int k = snprintf(l->s + l->len, l->cap - l->len, is_left ? "%*s%-*s " : "%*s%*s ", indent,
                         "", width, s);
        l->len += k > 0 ? (size_t)k : 0;
}

/* The lines built so far to fd. */
static int put_lines(struct line_buf *l, int fd)
{
        int rc = write_all(fd, l->s, l->len);
        l->len = l->line = 0;
        return rc;
}

/* The line ends, without its trailing spaces, with a newline; to fd once the lines fill a
   block. */
static int put_line(struct line_buf *l, int fd)
{
        while (l->len > l->line && l->s[l->len - 1] == ' ')
                l->len--;
        l->s[l->len++] = '\n'; /* put_cell left room */
        l->line = l->len;
        return l->len >= LINES_FLUSH_BYTES ? put_lines(l, fd) : 0;
}

/* The column that shows a tree row's depth: the one marked, else the last. */
static uint32_t tree_column(const struct ui_table *t)
{
        for (uint32_t c = 0; t->text_cols && c < t->nr_cols; c++)
                if (t->text_cols[c].is_tree)
                        return c;
        return t->nr_cols - 1;
}

int ui_table_print(const struct ui_table *t, int fd, uint32_t max_rows)
{
        char cellbuf[TEXT_MAX];
        struct line_buf l = {xmalloc(256), 0, 256, 0};
        uint32_t tree = tree_column(t);
        static const struct ui_text_col plain = {0, 2, false};
        for (uint32_t c = 0; c < t->nr_cols; c++) {
                const struct ui_column *k = &t->cols[c];
                const struct ui_text_col *x = t->text_cols ? &t->text_cols[c] : &plain;
                if (k->title)
                        put_cell(&l, x->gap, k->width, k->kind == UI_COL_TEXT, k->title);
        }
        if (!l.len)
                put_cell(&l, 0, 0, true, "");
        int rc = put_line(&l, fd);
        for (uint32_t i = 0; !rc && i < t->nr_rows && (!max_rows || i < max_rows); i++) {
                uint32_t r = t->order[i];
                for (uint32_t c = 0; c < t->nr_cols; c++) {
                        const struct ui_column *k = &t->cols[c];
                        const struct ui_text_col *x = t->text_cols ? &t->text_cols[c] : &plain;
                        if (!k->title)
                                continue;
                        /* text as long as it is (a borrowed C++ name may be longer than the
                           screen's cells): the text form cuts nothing */
                        const char *text = k->kind == UI_COL_TEXT ? text_of(cell(t, r, c)) : "";
                        char *big = NULL;
                        if (strnlen(text, TEXT_MAX) >= TEXT_MAX) {
                                size_t n = strlen(text) + 1;
                                big = xmalloc(n);
                                text_sanitize(big, n, text);
                        } else {
                                ui_table_format(t, r, c, cellbuf, sizeof(cellbuf));
                        }
                        int indent = c == tree ? 2 * t->depth[r] : 0, w = k->width;
                        if (x->is_tree) /* within the width */
                                w = w > indent ? w - indent : 0;
                        put_cell(&l, x->gap + indent, w, k->kind == UI_COL_TEXT,
                                 big ? big : cellbuf);
                        free(big);
                }
                if (l.len == l.line)
                        put_cell(&l, 0, 0, true, "");
                rc = put_line(&l, fd);
        }
        if (!rc)
                rc = put_lines(&l, fd);
        free(l.s);
        return rc;
}
