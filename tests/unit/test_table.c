/* SPDX-License-Identifier: MIT */
/* test_table.c: the rows a view shows (ui/table.h): cells of each kind as shown, copied and
   borrowed text (sanitized when shown, compared or searched, never copied when borrowed), the
   sort by number and by text against a plain comparison sort (stable, subtrees kept, reversed),
   the text arena across refreshes, the text form; and the list browser over a table (search,
   filter, the cursor kept on its row by key as the rows change), on a terminal writing to
   /dev/null. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ui/screen.h"
#include "ui/table.h"
#include "ui/text_sanitize.h"

enum { COL_PCT, COL_COUNT, COL_NS, COL_MODULE, COL_NAME, NR_COLS };

static const struct ui_column cols[NR_COLS] = {
        {"Self%", UI_COL_PCT, 7, 0},    {"Self", UI_COL_U64, 8, 0},      {"Time", UI_COL_NS, 10, 0},
        {"Module", UI_COL_TEXT, 12, 0}, {"Function", UI_COL_TEXT, 0, 0},
};

static void cell_is(const struct ui_table *t, uint32_t row, uint32_t col, const char *want)
{
        char buf[1024];
        ui_table_format(t, row, col, buf, sizeof(buf));
        assert_string_equal(buf, want);
}

/* The keys in the order shown. */
static void keys_are(const struct ui_table *t, const uint64_t *want, uint32_t n)
{
        assert_int_equal(t->nr_rows, n);
        for (uint32_t i = 0; i < n; i++)
                assert_int_equal(t->keys[t->order[i]], want[i]);
}

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rng(void)
{
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 7;
        rng_state ^= rng_state << 17;
        return rng_state;
}

/* ---- sanitizing ---- */

/* The rule byte by byte, as text_sanitize.c first wrote it (its UTF-8 rule is checked on its own
   below): its runs of ASCII must not change what comes out. */
static size_t ref_sanitize(char *dst, size_t dst_size, const char *src)
{
        size_t o = 0;
        const unsigned char *s = (const unsigned char *)src;
        while (*s) {
                size_t n = text_utf8_len(s);
                if (n == 1 && (*s < 0x20 || *s == 0x7F))
                        n = 0;
                if (n == 0) {
                        if (o + 1 >= dst_size)
                                break;
                        dst[o++] = '?';
                        s++;
                        continue;
                }
                if (o + n >= dst_size)
                        break;
                for (size_t i = 0; i < n; i++)
                        dst[o++] = (char)s[i];
                s += n;
        }
        dst[o] = 0;
        return o;
}

static void test_text_sanitize(void **state)
{
        (void)state;
        /* the UTF-8 rule */
        static const struct {
                const char *s;
                size_t len;
        } seqs[] = {
                {"a", 1},
                {"\x01", 1},
                {"\x7f", 1},
                {"\xc3\xa9", 2},
                {"\xc3", 0},
                {"\xc3"
                 "a",
                 0},
                {"\xc2\x85", 0},
                {"\xe2\x82\xac", 3},
                {"\xed\xa0\x80", 0},
                {"\xf0\x9f\x98\x80", 4},
                {"\xf4\x90\x80\x80", 0},
                {"\xff", 0},
                {"\x80", 0},
                {"\xe0\x80\x80", 0},
                {"\xc0\xaf", 0},
        };
        for (size_t i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++)
                assert_int_equal(text_utf8_len((const unsigned char *)seqs[i].s), seqs[i].len);
        static const unsigned char pieces[][5] = {
                "a",        "Z~",   " ",        "\x01",         "\x1b[",        "\x7f",
                "\xc3\xa9", "\xc3", "\xc2\x85", "\xe2\x82\xac", "\xed\xa0\x80", "\xf0\x9f\x98\x80",
                "\xf4\x90", "\xff", "\x80",     "\xe0\x80\x80",
        };
        char src[64], got[64], want[64];
        for (uint32_t iter = 0; iter < 20000; iter++) {
                size_t n = 0;
                while (n < 40) {
                        const char *p = (const char *)pieces[rng() % 16];
                        size_t len = strlen(p);
                        memcpy(src + n, p, len);
                        n += len;
                }
                src[n] = 0;
                size_t size = 1 + rng() % 48;
                size_t len = text_sanitize(got, size, src);
                assert_int_equal(len, ref_sanitize(want, size, src));
                assert_string_equal(got, want);
                text_sanitize(got, sizeof(got), src);
                assert_int_equal(text_is_clean(src), strcmp(src, got) == 0);
        }
        assert_true(text_is_clean("a\xc3\xa9\xe2\x82\xac ~"));
        assert_false(text_is_clean("a\x01"));
        assert_int_equal(text_sanitize(got, 0, "abc"), 0);
        assert_int_equal(text_sanitize(got, 1, "abc"), 0);
        assert_string_equal(got, "");
        assert_int_equal(text_sanitize(got, sizeof(got), NULL), 0);
}

/* ---- cells ---- */

static void test_cells(void **state)
{
        (void)state;
        struct ui_table t;
        ui_table_init(&t, cols, NR_COLS);
        uint32_t r = ui_table_add(&t, 7, 0, UI_ROW_GREYED);
        assert_int_equal(r, 0);
        /* a new row: zeros and empty text */
        cell_is(&t, r, COL_PCT, "0.00%");
        cell_is(&t, r, COL_COUNT, "0");
        cell_is(&t, r, COL_NAME, "");
        ui_table_pct(&t, r, COL_PCT, 12.345);
        ui_table_u64(&t, r, COL_COUNT, 1234);
        ui_table_u64(&t, r, COL_NS, 1250000000);
        ui_table_text(&t, r, COL_MODULE, "libc.so.6");
        ui_table_text_borrow(&t, r, COL_NAME, "memcpy");
        cell_is(&t, r, COL_PCT, "12.35%"); /* 12.345 is 12.3449... as a double */
        cell_is(&t, r, COL_COUNT, "1234");
        cell_is(&t, r, COL_NS, "1250.0 ms");
        cell_is(&t, r, COL_MODULE, "libc.so.6");
        cell_is(&t, r, COL_NAME, "memcpy");
        ui_table_u64(&t, r, COL_NS, 12000000000ull);
        cell_is(&t, r, COL_NS, "12.0 s");
        ui_table_u64(&t, r, COL_NS, 1500);
        cell_is(&t, r, COL_NS, "1.5 us");
        /* a count in a percentage column is the number; other mismatches are ignored */
        ui_table_u64(&t, r, COL_PCT, 50);
        cell_is(&t, r, COL_PCT, "50.00%");
        ui_table_u64(&t, r, COL_NAME, 99);
        ui_table_pct(&t, r, COL_COUNT, 1.5);
        ui_table_text(&t, r, COL_COUNT, "text");
        cell_is(&t, r, COL_NAME, "memcpy");
        cell_is(&t, r, COL_COUNT, "1234");
        /* cells out of the table are ignored */
        ui_table_u64(&t, 5, COL_COUNT, 1);
        ui_table_text(&t, 5, COL_NAME, "x");
        ui_table_text_borrow(&t, r, NR_COLS, "x");
        assert_string_equal(ui_table_cell_text(&t, 5, COL_NAME), "");
        assert_string_equal(ui_table_cell_text(&t, r, COL_COUNT), "");
        /* NULL text is "" */
        ui_table_text_borrow(&t, r, COL_NAME, NULL);
        cell_is(&t, r, COL_NAME, "");
        ui_table_text(&t, r, COL_MODULE, NULL);
        cell_is(&t, r, COL_MODULE, "");
        assert_int_equal(t.keys[r], 7);
        assert_int_equal(t.flags[r], UI_ROW_GREYED);
        /* a place without a name, as the symbol store writes it */
        ui_table_text_addr(&t, r, COL_NAME, "libc.so.6", 0x1a2b);
        cell_is(&t, r, COL_NAME, "libc.so.6+0x1a2b");
        ui_table_text_addr(&t, r, COL_NAME, NULL, 0xffffffffffffffffull);
        cell_is(&t, r, COL_NAME, "0xffffffffffffffff");
        ui_table_text_addr(&t, r, COL_NAME, "bad\x01", 0);
        cell_is(&t, r, COL_NAME, "bad?+0x0");
        ui_table_text_addr(&t, r, COL_COUNT, "x", 1); /* not a text column */
        cell_is(&t, r, COL_COUNT, "1234");
        /* a small buffer: cut, on a UTF-8 boundary */
        char small[5];
        ui_table_text_borrow(&t, r, COL_NAME, "ab\xc3\xa9\xc3\xa9");
        ui_table_format(&t, r, COL_NAME, small, sizeof(small));
        assert_string_equal(small, "ab\xc3\xa9");
        ui_table_format(&t, r, COL_NAME, small, 4);
        assert_string_equal(small, "ab");
        ui_table_fini(&t);
        ui_table_fini(&t); /* twice is fine */
}

/* Borrowed text is kept as a pointer, sanitized only when shown, compared or searched; copied
   text is sanitized once, into the arena. */
/* The numbers as printf writes them ("%.2f%%", "%.2f", "%" PRIu64), which the table's own
   conversions must match byte for byte: shares of counts as the views make them, the halves
   whose exact binary value decides printf's rounding (0.125, 12.345, 2.675), negatives, zeros,
   large and random values. */
static void test_cells_as_printf(void **state)
{
        (void)state;
        static const struct ui_column numbers[] = {
                {"Share", UI_COL_PCT, 7, 0},
                {"Ratio", UI_COL_RATIO, 7, 0},
                {"Count", UI_COL_U64, 8, 0},
        };
        struct ui_table t;
        ui_table_init(&t, numbers, 3);
        uint32_t r = ui_table_add(&t, 1, 0, 0);
        char got[64], want[64];
        static const double fixed[] = {0.0,    -0.0,  0.125,  0.135,  12.345,  2.675,      1.005,
                                       0.005,  0.015, 99.995, 100.0,  1e-300,  -0.001,     -12.5,
                                       1e8,    1e9,   1e12,   1e300,  4.35,    0.285,      1.115,
                                       33.335, 50.0,  0.0049, 0.9999, 9.99999, 0.994999999};
        uint32_t n = (uint32_t)(sizeof(fixed) / sizeof(fixed[0]));
        for (uint32_t i = 0; i < n + 300000; i++) {
                double d;
                if (i < n)
                        d = fixed[i];
                else if (i % 3 == 0) /* a share of counts, as counts() makes it */
                        d = 100.0 * (double)(rng() % 100000) / (double)(1 + rng() % 100000);
                else if (i % 3 == 1) /* near a half: xx.xx5 and its neighbours */
                        d = (double)(rng() % 1000000) / 1000.0 + 0.0005 +
                            (double)((int64_t)(rng() % 7) - 3) * 1e-17;
                else
                        d = (double)(rng() >> 11) / (double)(1ull << (rng() % 60));
                ui_table_pct(&t, r, 0, d);
                ui_table_format(&t, r, 0, got, sizeof(got));
                snprintf(want, sizeof(want), "%.2f%%", d);
                assert_string_equal(got, want);
                ui_table_pct(&t, r, 1, d);
                ui_table_format(&t, r, 1, got, sizeof(got));
                if (d != 0)
                        snprintf(want, sizeof(want), "%.2f", d);
                else
                        want[0] = 0;
                assert_string_equal(got, want);
                uint64_t u = i < 64 ? (i ? 1ull << (i - 1) : 0) : rng() >> (rng() % 64);
                if (i == 64)
                        u = UINT64_MAX;
                ui_table_u64(&t, r, 2, u);
                ui_table_format(&t, r, 2, got, sizeof(got));
                snprintf(want, sizeof(want), "%llu", (unsigned long long)u);
                assert_string_equal(got, want);
        }
        /* a short buffer: cut as snprintf cuts */
        ui_table_pct(&t, r, 0, 12.5);
        ui_table_format(&t, r, 0, got, 4);
        assert_string_equal(got, "12.");
        ui_table_u64(&t, r, 2, 123456789);
        ui_table_format(&t, r, 2, got, 5);
        assert_string_equal(got, "1234");
        ui_table_fini(&t);
}

static void test_text_borrowed_and_copied(void **state)
{
        (void)state;
        struct ui_table t;
        ui_table_init(&t, cols, NR_COLS);
        static const char raw[] = "evil\x1b[2Jname\x7f\xff";
        uint32_t a = ui_table_add(&t, 1, 0, 0);
        ui_table_text_borrow(&t, a, COL_NAME, raw);
        assert_ptr_equal(ui_table_cell_text(&t, a, COL_NAME), raw); /* not copied */
        assert_null(t.text.first);                                  /* the arena is unused */
        ui_table_text(&t, a, COL_MODULE, raw);
        assert_ptr_not_equal(ui_table_cell_text(&t, a, COL_MODULE), raw);
        assert_non_null(t.text.first);
        assert_string_equal(ui_table_cell_text(&t, a, COL_MODULE), "evil?[2Jname??");
        cell_is(&t, a, COL_NAME, "evil?[2Jname??");
        cell_is(&t, a, COL_MODULE, "evil?[2Jname??");
        /* searched as shown */
        assert_true(ui_table_row_contains(&t, a, "?[2J"));
        assert_true(ui_table_row_contains(&t, a, "name??"));
        assert_true(ui_table_row_contains(&t, a, "name"));
        assert_true(ui_table_row_contains(&t, a, ""));
        assert_false(ui_table_row_contains(&t, a, "\x1b"));
        assert_false(ui_table_row_contains(&t, a, "other"));
        /* a borrowed string is read when shown, not when set */
        char live[16] = "before";
        uint32_t b = ui_table_add(&t, 2, 0, 0);
        ui_table_text_borrow(&t, b, COL_NAME, live);
        memcpy(live, "after", 6);
        cell_is(&t, b, COL_NAME, "after");
        ui_table_fini(&t);
}

/* Text longer than a cell shows (1023 bytes): search and sort see the shown text only. */
static void test_text_long(void **state)
{
        (void)state;
        struct ui_table t;
        ui_table_init(&t, cols, NR_COLS);
        char *a = malloc(1500), *b = malloc(1500);
        memset(a, 'x', 1499);
        a[1499] = 0;
        memcpy(a + 1010, "NEEDLE", 6); /* ends at 1016: shown */
        memcpy(a + 1100, "HIDDEN", 6); /* past 1023: cut */
        memcpy(b, a, 1500);
        b[1400] = 'a'; /* differs from a past the cut only */
        uint32_t ra = ui_table_add(&t, 1, 0, 0), rb = ui_table_add(&t, 2, 0, 0);
        ui_table_text_borrow(&t, ra, COL_NAME, b);
        ui_table_text(&t, rb, COL_NAME, a);
        assert_int_equal(strlen(ui_table_cell_text(&t, rb, COL_NAME)), 1023);
        assert_true(ui_table_row_contains(&t, ra, "NEEDLE"));
        assert_true(ui_table_row_contains(&t, rb, "NEEDLE"));
        assert_false(ui_table_row_contains(&t, ra, "HIDDEN"));
        assert_false(ui_table_row_contains(&t, rb, "HIDDEN"));
        /* equal as shown: the sort keeps their order, either way */
        ui_table_sort(&t, COL_NAME, false);
        keys_are(&t, (const uint64_t[]){1, 2}, 2);
        ui_table_sort(&t, COL_NAME, true);
        keys_are(&t, (const uint64_t[]){2, 1}, 2);
        /* a match that the cut splits */
        memcpy(a + 1020, "SPLIT", 5); /* the cell shows bytes 0 to 1022 */
        ui_table_text_borrow(&t, ra, COL_NAME, a);
        assert_false(ui_table_row_contains(&t, ra, "SPLIT"));
        assert_true(ui_table_row_contains(&t, ra, "SPL"));
        ui_table_fini(&t);
        free(a);
        free(b);
}

/* ---- sorting ---- */

static void test_sort_numbers(void **state)
{
        (void)state;
        struct ui_table t;
        ui_table_init(&t, cols, NR_COLS);
        static const uint64_t counts[] = {5, 9, 5, 0, 9, 7};
        static const double pcts[] = {1.5, -2.0, 0.0, 100.0, 1.5, -0.0};
        for (uint32_t i = 0; i < 6; i++) {
                uint32_t r = ui_table_add(&t, i + 1, 0, 0);
                ui_table_u64(&t, r, COL_COUNT, counts[i]);
                ui_table_pct(&t, r, COL_PCT, pcts[i]);
                ui_table_u64(&t, r, COL_NS, 1000 - i);
        }
        /* largest first, equal ones in the order shown */
        ui_table_sort(&t, COL_COUNT, false);
        keys_are(&t, (const uint64_t[]){2, 5, 6, 1, 3, 4}, 6);
        /* reversed: the whole order backwards, ties too */
        ui_table_sort(&t, COL_COUNT, true);
        keys_are(&t, (const uint64_t[]){4, 3, 1, 6, 5, 2}, 6);
        /* from the order shown: ties keep the last sort's order */
        ui_table_sort(&t, COL_PCT, false);
        keys_are(&t, (const uint64_t[]){4, 1, 5, 3, 6, 2}, 6);
        ui_table_sort(&t, COL_NS, false);
        keys_are(&t, (const uint64_t[]){1, 2, 3, 4, 5, 6}, 6);
        /* the same sort again: nothing to do, nothing changes */
        uint64_t gen = t.generation;
        ui_table_sort(&t, COL_NS, false);
        assert_int_equal(t.generation, gen);
        /* a change: sorted again */
        ui_table_u64(&t, 5, COL_NS, 5000);
        ui_table_sort(&t, COL_NS, false);
        keys_are(&t, (const uint64_t[]){6, 1, 2, 3, 4, 5}, 6);
        assert_int_not_equal(t.generation, gen);
        /* the cells stay where they were added */
        for (uint32_t r = 0; r < 6; r++) {
                assert_int_equal(t.keys[r], r + 1);
                assert_int_equal(t.cells[r * NR_COLS + COL_COUNT].u, counts[r]);
        }
        /* counts past 2^53 order as the doubles shown: equal doubles keep their order */
        ui_table_clear(&t);
        static const uint64_t big[] = {(1ull << 60) + 1, 1ull << 60, 3, (1ull << 60) + 4096};
        for (uint32_t i = 0; i < 4; i++)
                ui_table_u64(&t, ui_table_add(&t, i + 1, 0, 0), COL_COUNT, big[i]);
        ui_table_sort(&t, COL_COUNT, false);
        keys_are(&t, (const uint64_t[]){4, 1, 2, 3}, 4);
        ui_table_fini(&t);
}

/* Every key width the radix sort meets, against a plain stable sort. */
struct ref_num {
        double d;
        uint32_t pos;
};

static int ref_num_desc(const void *a, const void *b)
{
        const struct ref_num *x = a, *y = b;
        if (x->d != y->d)
                return x->d > y->d ? -1 : 1;
        return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static void test_sort_numbers_random(void **state)
{
        (void)state;
        static const int shifts[] = {60, 50, 40, 20, 0};
        struct ui_table t;
        ui_table_init(&t, cols, NR_COLS);
        const uint32_t nr_max = 20000;
        struct ref_num *ref = malloc(nr_max * sizeof(*ref));
        for (uint32_t s = 0; s < 2 * sizeof(shifts) / sizeof(shifts[0]); s++) {
                /* digits of 8 to 16 bits: few rows and many */
                uint32_t n = s % 2 ? nr_max : 300;
                for (int is_pct = 0; is_pct < 2; is_pct++) {
                        ui_table_clear(&t);
                        for (uint32_t i = 0; i < n; i++) {
                                uint32_t r = ui_table_add(&t, i, 0, 0);
                                uint64_t v = rng() >> shifts[s / 2];
                                double d =
                                        is_pct ? (double)(int64_t)(rng() >> shifts[s / 2]) / 7.0 -
                                                         (double)(v >> 1)
                                               : (double)v;
                                if (is_pct)
                                        ui_table_pct(&t, r, COL_PCT, d);
                                else
                                        ui_table_u64(&t, r, COL_COUNT, v);
                                ref[i] = (struct ref_num){d, i};
                        }
                        qsort(ref, n, sizeof(*ref), ref_num_desc);
                        ui_table_sort(&t, is_pct ? COL_PCT : COL_COUNT, false);
                        for (uint32_t i = 0; i < n; i++)
                                assert_int_equal(t.keys[t.order[i]], ref[i].pos);
                }
        }
        free(ref);
        ui_table_fini(&t);
}

/* Tree rows: a row of depth 0 moves with the rows under it. */
static void test_sort_subtrees(void **state)
{
        (void)state;
        struct ui_table t;
        ui_table_init(&t, cols, NR_COLS);
        /* key, depth, count */
        static const uint64_t rows[][3] = {
                {1, 0, 10}, {11, 1, 1}, {12, 1, 99}, {2, 0, 30}, {21, 1, 5},
                {3, 0, 20}, {4, 0, 30}, {41, 1, 7},  {42, 2, 8},
        };
        for (uint32_t i = 0; i < 9; i++) {
                uint32_t r = ui_table_add(&t, rows[i][0], (uint8_t)rows[i][1], 0);
                ui_table_u64(&t, r, COL_COUNT, rows[i][2]);
        }
        ui_table_sort(&t, COL_COUNT, false);
        keys_are(&t, (const uint64_t[]){2, 21, 4, 41, 42, 3, 1, 11, 12}, 9);
        ui_table_sort(&t, COL_COUNT, true);
        keys_are(&t, (const uint64_t[]){1, 11, 12, 3, 4, 41, 42, 2, 21}, 9);
        ui_table_fini(&t);
}

/* The text sort against qsort of the sanitized text (stable by position). */
struct ref_text {
        char shown[1024];
        uint32_t pos;
};

static int ref_text_cmp(const void *a, const void *b)
{
        const struct ref_text *x = a, *y = b;
        int r = strcmp(x->shown, y->shown);
        if (r)
                return r;
        return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* A string of many shapes: shared prefixes over 8 and 16 bytes, prefixes of each other,
   empty, equal, unclean bytes, UTF-8, longer than a cell shows. */
static void random_text(char *buf, size_t size)
{
        static const char *const stems[] = {
                "",
                "a",
                "function",
                "function_",
                "function_1",
                "std::vector<int>::push_back",
                "libc.so.6",
                "libLLVM-14.so.1",
                "\xc3\xa9t\xc3\xa9",
                "bad\x01",
                "bad\xff",
                "ABCDEFGH",
                "ABCDEFGHI",
        };
        size_t n = (size_t)snprintf(buf, size, "%s", stems[rng() % 13]);
        uint32_t extra = (uint32_t)(rng() % 4);
        for (uint32_t i = 0; i < extra && n + 1 < size; i++) {
                static const char alphabet[] = "ab_09Z\x7f\xc3\xa9";
                buf[n++] = alphabet[rng() % (sizeof(alphabet) - 1)];
        }
        if (rng() % 50 == 0) /* past what a cell shows */
                while (n + 1 < size && n < 1100)
                        buf[n++] = (char)('a' + rng() % 2);
        buf[n] = 0;
}

static void test_sort_text(void **state)
{
        (void)state;
        struct ui_table t;
        ui_table_init(&t, cols, NR_COLS);
        const uint32_t n = 5000;
        struct ref_text *ref = malloc(n * sizeof(*ref));
        char(*strings)[1200] = malloc(n * sizeof(*strings));
        for (uint32_t i = 0; i < n; i++) {
                random_text(strings[i], sizeof(strings[i]));
                uint32_t r = ui_table_add(&t, i, 0, 0);
                if (i % 3 == 0)
                        ui_table_text(&t, r, COL_NAME, strings[i]);
                else if (i % 3 == 1)
                        ui_table_text_borrow(&t, r, COL_NAME, strings[i]);
                else /* the same pointer as another row's */
                        ui_table_text_borrow(&t, r, COL_NAME, strings[i - 1]);
                text_sanitize(ref[i].shown, sizeof(ref[i].shown), strings[i - (i % 3 == 2)]);
                ref[i].pos = i;
        }
        qsort(ref, n, sizeof(*ref), ref_text_cmp);
        ui_table_sort(&t, COL_NAME, false);
        for (uint32_t i = 0; i < n; i++)
                assert_int_equal(t.keys[t.order[i]], ref[i].pos);
        ui_table_sort(&t, COL_NAME, true);
        for (uint32_t i = 0; i < n; i++)
                assert_int_equal(t.keys[t.order[i]], ref[n - 1 - i].pos);
        /* the cells still show their text */
        for (uint32_t i = 0; i < n; i++) {
                char want[1024], got[1024];
                text_sanitize(want, sizeof(want), strings[i - (i % 3 == 2)]);
                ui_table_format(&t, i, COL_NAME, got, sizeof(got));
                assert_string_equal(got, want);
        }
        free(strings);
        free(ref);
        ui_table_fini(&t);
}

/* ---- the arena, the text form ---- */

static void test_arena_refreshes(void **state)
{
        (void)state;
        struct ui_table t;
        ui_table_init(&t, cols, NR_COLS);
        char buf[64];
        size_t chunks_first = 0;
        for (uint32_t refresh = 0; refresh < 3; refresh++) {
                ui_table_clear(&t);
                for (uint32_t i = 0; i < 30000; i++) {
                        snprintf(buf, sizeof(buf), "row %u of refresh %u", i, refresh);
                        ui_table_text(&t, ui_table_add(&t, i, 0, 0), COL_NAME, buf);
                }
                /* the copies stay put as the arena grows */
                for (uint32_t i = 0; i < 30000; i += 997) {
                        snprintf(buf, sizeof(buf), "row %u of refresh %u", i, refresh);
                        assert_string_equal(ui_table_cell_text(&t, i, COL_NAME), buf);
                }
                /* a refresh reuses the chunks: no more of them than the first had */
                size_t nr_chunks = 0;
                for (const struct ui_text_chunk *c = t.text.first; c; c = c->next)
                        nr_chunks++;
                if (!refresh)
                        chunks_first = nr_chunks;
                assert_true(nr_chunks > 1);
                assert_int_equal(nr_chunks, chunks_first);
        }
        ui_table_fini(&t);
}

static void test_print(void **state)
{
        (void)state;
        static const struct ui_column two[] = {{"Count", UI_COL_U64, 5, 0},
                                               {"Name", UI_COL_TEXT, 0, 0}};
        struct ui_table t;
        ui_table_init(&t, two, 2);
        uint32_t r = ui_table_add(&t, 1, 0, 0);
        ui_table_u64(&t, r, 0, 3);
        ui_table_text_borrow(&t, r, 1, "small\x07");
        r = ui_table_add(&t, 2, 0, 0);
        ui_table_u64(&t, r, 0, 40);
        ui_table_text(&t, r, 1, "big");
        r = ui_table_add(&t, 3, 1, 0);
        ui_table_u64(&t, r, 0, 1);
        ui_table_text_borrow(&t, r, 1, "child");
        ui_table_sort(&t, 0, false);
        FILE *f = tmpfile();
        assert_non_null(f);
        ui_table_print(&t, fileno(f), 0);
        char out[256] = "";
        rewind(f);
        size_t n = fread(out, 1, sizeof(out) - 1, f);
        out[n] = 0;
        fclose(f);
        assert_string_equal(out, "Count Name\n"
                                 "   40 big\n"
                                 "    1   child\n"
                                 "    3 small?\n");
        ui_table_fini(&t);
}

/* ---- the browser over a table ---- */

static struct ui_screen *scr;
static FILE *devnull;

static int screen_setup(void **state)
{
        (void)state;
        setenv("TERM", "xterm", 1);
        setenv("LINES", "30", 1);
        setenv("COLUMNS", "100", 1);
        devnull = fopen("/dev/null", "w+");
        if (!devnull || ui_screen_open_on(&scr, true, devnull, devnull) < 0)
                scr = NULL;
        return 0;
}

static int screen_teardown(void **state)
{
        (void)state;
        ui_screen_close(scr);
        if (devnull)
                fclose(devnull);
        return 0;
}

/* Skips a test that draws when this machine has no terminal description for it. */
static void need_screen(void)
{
        if (!scr) {
                print_message("no terminal for TERM=%s (terminfo missing?)\n", getenv("TERM"));
                skip();
        }
}

/* Rows "row K" with count K * mult % 97 (another order each refresh), "odd" or "even". */
static void fill(struct ui_table *t, uint32_t n, uint32_t mult)
{
        static char names[200][16];
        ui_table_clear(t);
        for (uint32_t k = 1; k <= n; k++) {
                snprintf(names[k], sizeof(names[k]), "row %u", k);
                uint32_t r = ui_table_add(t, k, 0, 0);
                ui_table_u64(t, r, COL_COUNT, k * mult % 97);
                ui_table_text_borrow(t, r, COL_MODULE, k % 2 ? "odd" : "even");
                ui_table_text_borrow(t, r, COL_NAME, names[k]);
        }
}

/* The key of the row under the cursor, as the application gets it. */
static uint64_t cursor_row(struct ui_view_state *vs, struct ui_table *t)
{
        uint64_t key = 0;
        int k = 'x';
        ui_screen_browse(scr, &k, vs, t, &key);
        return key;
}

static void type(struct ui_view_state *vs, struct ui_table *t, const char *keys)
{
        uint64_t key;
        for (; *keys; keys++) {
                int k = (unsigned char)*keys;
                ui_screen_browse(scr, &k, vs, t, &key);
        }
}

static void draw(struct ui_table *t, struct ui_view_state *vs)
{
        static const char *const header[] = {"etwtop - test"};
        static const char *const tabs[] = {"One"};
        struct ui_frame f = {
                .header = header, .nr_header = 1, .tabs = tabs, .nr_tabs = 1, .status = ""};
        ui_screen_draw(scr, &f, t, vs);
}

static void test_browser_cursor_and_filter(void **state)
{
        (void)state;
        need_screen();
        struct ui_table t;
        ui_table_init(&t, cols, NR_COLS);
        struct ui_view_state vs = {0};
        vs.has_sorted = true;
        vs.sort_col = COL_COUNT;
        fill(&t, 150, 13);
        draw(&t, &vs);
        /* the first row until the user moves: the largest count */
        assert_int_equal(cursor_row(&vs, &t), t.keys[t.order[0]]);
        /* search: the cursor goes to the row, and stays on it as the rows change order */
        type(&vs, &t, "/row 42\n");
        assert_int_equal(cursor_row(&vs, &t), 42);
        for (uint32_t mult = 14; mult < 20; mult++) {
                fill(&t, 150, mult);
                draw(&t, &vs);
                assert_int_equal(cursor_row(&vs, &t), 42);
                assert_int_equal(t.keys[t.order[vs.cursor]], 42);
        }
        /* n: the next match in the order shown */
        type(&vs, &t, "/row 1\n");
        uint64_t first = cursor_row(&vs, &t);
        assert_true(strncmp(ui_table_cell_text(&t, (uint32_t)first - 1, COL_NAME), "row 1", 5) ==
                    0);
        type(&vs, &t, "n");
        uint64_t next = cursor_row(&vs, &t);
        assert_int_not_equal(next, first);
        assert_true(strncmp(ui_table_cell_text(&t, (uint32_t)next - 1, COL_NAME), "row 1", 5) == 0);
        /* a filter: only the rows whose text has it; search and cursor among them */
        type(&vs, &t, "\\even\n");
        assert_string_equal(vs.filter, "even");
        draw(&t, &vs);
        type(&vs, &t, "/row 7\n"); /* odd rows are hidden: row 70 and up */
        assert_int_equal(cursor_row(&vs, &t) % 2, 0);
        type(&vs, &t, "/row 42\n");
        assert_int_equal(cursor_row(&vs, &t), 42);
        for (uint32_t mult = 20; mult < 24; mult++) {
                fill(&t, 150, mult);
                draw(&t, &vs);
                assert_int_equal(cursor_row(&vs, &t), 42);
                type(&vs, &t, "/row\n");
                for (uint32_t i = 0; i < 40; i++) {
                        type(&vs, &t, "n");
                        assert_int_equal(cursor_row(&vs, &t) % 2, 0);
                }
                type(&vs, &t, "/row 42\n");
        }
        /* the rows change under the same filter: what it lets through follows */
        ui_table_clear(&t);
        for (uint32_t k = 1; k <= 10; k++) {
                uint32_t r = ui_table_add(&t, 1000 + k, 0, 0);
                ui_table_u64(&t, r, COL_COUNT, k);
                ui_table_text_borrow(&t, r, COL_MODULE, k == 3 ? "even" : "odd");
        }
        draw(&t, &vs);
        assert_int_equal(cursor_row(&vs, &t), 1003);
        /* Esc: the filter goes, every row is back */
        type(&vs, &t, "\x1b");
        assert_string_equal(vs.filter, "");
        draw(&t, &vs);
        assert_int_equal(cursor_row(&vs, &t), 1003);
        ui_table_fini(&t);
}

/* Rows 1..60, then (when nr_children) row 60's children, then rows 61..70. */
static void add_named(struct ui_table *t, uint32_t k, uint8_t flags)
{
        static char names[71][16];
        snprintf(names[k], sizeof(names[k]), "row %u", k);
        ui_table_text_borrow(t, ui_table_add(t, k, 0, flags), COL_NAME, names[k]);
}

static void fill_tree(struct ui_table *t, uint32_t nr_children)
{
        ui_table_clear(t);
        for (uint32_t k = 1; k <= 60; k++)
                add_named(t, k, k == 60 && nr_children ? UI_ROW_EXPANDED : 0);
        for (uint32_t k = 0; k < nr_children; k++)
                ui_table_add(t, 1000 + k, 1, 0);
        for (uint32_t k = 61; nr_children && k <= 70; k++)
                add_named(t, k, 0);
}

/* A row opened on the last line: the next draw scrolls what it opened into view, as much as
   fits with the row itself on the screen, and no further (the rows after its children are not
   what was asked for). Without it, the opened rows were below the screen (a loaded machine's
   switches view put the thread searched for on the last line, and opening it showed nothing). */
static void test_browser_reveal(void **state)
{
        (void)state;
        need_screen();
        struct ui_table t;
        ui_table_init(&t, cols, NR_COLS);
        for (uint32_t nr_children = 5; nr_children <= 100; nr_children += 95) {
                struct ui_view_state vs = {0};
                fill_tree(&t, 0);
                draw(&t, &vs);
                type(&vs, &t, "/row 60\n"); /* the last row: on the last line */
                draw(&t, &vs);
                assert_int_equal(cursor_row(&vs, &t), 60);
                uint32_t height = 60 - vs.top, top = vs.top;
                assert_true(height > 5 && height < 60);
                /* opened, not revealed: the children are under the last line */
                fill_tree(&t, nr_children);
                draw(&t, &vs);
                assert_int_equal(vs.top, top);
                assert_int_equal(cursor_row(&vs, &t), 60);
                /* revealed (as the application asks after the key that opened it) */
                vs.is_reveal = true;
                draw(&t, &vs);
                assert_int_equal(cursor_row(&vs, &t), 60);
                if (nr_children < height)
                        assert_int_equal(vs.top, top + nr_children);
                else
                        assert_int_equal(vs.top, vs.cursor); /* the row on the first line */
                /* a refresh moves the row down (new rows above it): its children follow */
                vs.is_reveal = true;
                ui_table_clear(&t);
                for (uint32_t i = 0; i < 3; i++)
                        ui_table_add(&t, 500 + i, 0, 0);
                for (uint32_t i = 1; i <= 60; i++)
                        add_named(&t, i, i == 60 ? UI_ROW_EXPANDED : 0);
                for (uint32_t i = 0; i < nr_children; i++)
                        ui_table_add(&t, 1000 + i, 1, 0);
                draw(&t, &vs);
                assert_int_equal(cursor_row(&vs, &t), 60);
                assert_int_equal(vs.cursor, 62);
                if (nr_children < height)
                        assert_int_equal(vs.top, top + 3 + nr_children);
                else
                        assert_int_equal(vs.top, vs.cursor);
                /* a key: the rows stay where the key leaves them */
                type(&vs, &t, "x");
                assert_false(vs.is_reveal);
        }
        ui_table_fini(&t);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_text_sanitize),
                cmocka_unit_test(test_cells),
                cmocka_unit_test(test_cells_as_printf),
                cmocka_unit_test(test_text_borrowed_and_copied),
                cmocka_unit_test(test_text_long),
                cmocka_unit_test(test_sort_numbers),
                cmocka_unit_test(test_sort_numbers_random),
                cmocka_unit_test(test_sort_subtrees),
                cmocka_unit_test(test_sort_text),
                cmocka_unit_test(test_arena_refreshes),
                cmocka_unit_test(test_print),
                cmocka_unit_test_setup_teardown(test_browser_cursor_and_filter, screen_setup,
                                                screen_teardown),
                cmocka_unit_test_setup_teardown(test_browser_reveal, screen_setup, screen_teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
