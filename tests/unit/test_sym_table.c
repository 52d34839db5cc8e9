/* SPDX-License-Identifier: MIT */
/* test_sym_table.c: the sorted symbol table: order, duplicates, inferred sizes, lookups. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "symbols/sym_table.h"

static const char *name_at(const struct sym_table *t, uint64_t addr)
{
        const struct sym_entry *e = sym_table_find(t, addr);
        return e ? sym_table_name(t, e) : NULL;
}

static void test_lookup(void **state)
{
        (void)state;
        struct sym_table *t = sym_table_new();
        sym_table_add(t, 0x3000, 0x100, "third", 5, 0);
        sym_table_add(t, 0x1000, 0x10, "first", 5, 0);
        sym_table_add(t, 0x2000, 0, "second", 6, 0);
        sym_table_add(t, 0x1000, 0x10, "first_alias", 11, SYM_FLAG_WEAK);
        sym_table_add(t, 0x2000, 0x40, "second_sized", 12, 0);
        sym_table_finish(t, 0);
        assert_int_equal(sym_table_count(t), 3);
        assert_null(name_at(t, 0xfff));
        assert_string_equal(name_at(t, 0x1000), "first");
        assert_string_equal(name_at(t, 0x100f), "first");
        assert_null(name_at(t, 0x1010)); /* a gap between sized symbols */
        assert_string_equal(name_at(t, 0x203f), "second_sized");
        assert_null(name_at(t, 0x2040));
        assert_string_equal(name_at(t, 0x30ff), "third");
        assert_null(name_at(t, 0x3100));
        assert_null(name_at(t, UINT64_MAX));
        sym_table_free(t);
}

static void test_inferred_and_nested(void **state)
{
        (void)state;
        struct sym_table *t = sym_table_new();
        sym_table_add(t, 0x100, 0, "a", 1, 0);
        sym_table_add(t, 0x180, 0, "b", 1, 0);
        sym_table_add(t, 0x400, 0x100, "outer", 5, 0);
        sym_table_add(t, 0x420, 0x8, "inner", 5, SYM_FLAG_LOCAL);
        sym_table_add(t, 0x1000, 0, "last", 4, 0);
        sym_table_add(t, 0x2000, 0, "bad\n\x01name", 9, 0);
        sym_table_finish(t, 0x200);
        assert_string_equal(name_at(t, 0x17f), "a");
        assert_string_equal(name_at(t, 0x181), "b");
        assert_string_equal(name_at(t, 0x37f), "b"); /* inferred, capped at 0x200 */
        assert_null(name_at(t, 0x380));
        assert_string_equal(name_at(t, 0x424), "inner");
        assert_string_equal(name_at(t, 0x430), "outer"); /* past inner, still in outer */
        assert_string_equal(name_at(t, 0x11ff), "last"); /* capped at 0x200 */
        assert_null(name_at(t, 0x1200));
        assert_string_equal(name_at(t, 0x2000), "bad??name");
        sym_table_free(t);
}

static void test_empty(void **state)
{
        (void)state;
        struct sym_table *t = sym_table_new();
        assert_null(sym_table_find(t, 0)); /* not finished */
        sym_table_finish(t, 0);
        assert_null(sym_table_find(t, 0x1000));
        assert_int_equal(sym_table_count(t), 0);
        sym_table_free(t);
        sym_table_free(NULL);
}

/* The same symbols in any order finish to the same table: in address order (kallsyms's
   kernel part), reversed, and in order with an unordered tail (kallsyms's modules after the
   kernel), aliases at one address included (the global wins). */
static struct sym_table *table_in_order(const uint32_t *order, uint32_t n)
{
        struct sym_table *t = sym_table_new();
        char name[32];
        for (uint32_t k = 0; k < n; k++) {
                uint32_t i = order[k];
                uint64_t start = 0x1000 + (uint64_t)(i / 3) * 0x40; /* three names an address */
                int len = snprintf(name, sizeof(name), "sym%u", i);
                sym_table_add(t, start, 0, name, (size_t)len, i % 3 ? SYM_FLAG_WEAK : 0);
        }
        sym_table_finish(t, 0x1000);
        return t;
}

/* xorshift64: the same tables at every run */
static uint64_t next_random(uint64_t *x)
{
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        return *x;
}

struct ref_entry {
        uint64_t start;
        int rank;
        uint32_t i;
};

static int ref_cmp(const void *a, const void *b)
{
        const struct ref_entry *x = a, *y = b;
        if (x->start != y->start)
                return x->start < y->start ? -1 : 1;
        if (x->rank != y->rank)
                return x->rank < y->rank ? -1 : 1;
        return x->i < y->i ? -1 : x->i > y->i;
}

/* Tables of n symbols at random starts (a third of them shared: aliases) with random flags,
   over spans from a few pages to a 64-bit range, added in random order (every other table
   after an ordered run of 40% of it): each start's entry
   after finish is the one of the lowest rank (padding, data, weak, local, unsized: each a step
   down), the first added of those (a qsort by start, rank and order says which), whatever the
   table's size and the sort that its size takes. */
static void test_sorted_by_start_and_rank(void **state)
{
        (void)state;
        static const uint32_t sizes[] = {300, 3000, 5000, 70000};
        static const uint64_t spans[] = {0x4000, 0x3000000, 0x7fffffffffull, 1ull << 57, ~0ull};
        static const uint32_t flag_bits[] = {SYM_FLAG_WEAK, SYM_FLAG_LOCAL, SYM_FLAG_DATA,
                                             SYM_FLAG_PADDING};
        uint64_t x = 0x9e3779b97f4a7c15ull;
        for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
                for (size_t pi = 0; pi < sizeof(spans) / sizeof(spans[0]); pi++) {
                        uint32_t n = sizes[si];
                        uint64_t base = spans[pi] == ~0ull ? 0 : 0xffff800000000000ull;
                        struct ref_entry *ref = malloc(n * sizeof(*ref));
                        assert_non_null(ref);
                        struct sym_table *t = sym_table_new();
                        char name[32];
                        for (uint32_t i = 0; i < n; i++) {
                                /* every other table: its first 40% in order, three
                                   entries a start (a run that the whole table's sort takes) */
                                uint64_t start = (pi & 1) && i < n * 2 / 5
                                                         ? base + (uint64_t)(i / 3) * 16
                                                 : i && next_random(&x) % 3 == 0
                                                         ? ref[next_random(&x) % i].start
                                                         : base + next_random(&x) % spans[pi];
                                uint32_t flags = 0;
                                for (size_t k = 0; k < 4; k++)
                                        if (next_random(&x) % 4 == 0)
                                                flags |= flag_bits[k];
                                uint64_t size = next_random(&x) % 2 ? 0x10 : 0;
                                int len = snprintf(name, sizeof(name), "s%u", i);
                                sym_table_add(t, start, size, name, (size_t)len, flags);
                                int r = (flags & SYM_FLAG_PADDING ? 16 : 0) +
                                        (flags & SYM_FLAG_DATA ? 8 : 0) +
                                        (flags & SYM_FLAG_WEAK ? 4 : 0) +
                                        (flags & SYM_FLAG_LOCAL ? 2 : 0) + (size ? 0 : 1);
                                ref[i] = (struct ref_entry){start, r, i};
                        }
                        sym_table_finish(t, 0x1000);
                        qsort(ref, n, sizeof(*ref), ref_cmp);
                        uint32_t k = 0;
                        for (uint32_t j = 0; j < n; j++) {
                                if (j && ref[j].start == ref[j - 1].start)
                                        continue;
                                const struct sym_entry *e = sym_table_at(t, k++);
                                assert_non_null(e);
                                assert_int_equal(e->start, ref[j].start);
                                snprintf(name, sizeof(name), "s%u", ref[j].i);
                                assert_string_equal(sym_table_name(t, e), name);
                        }
                        assert_int_equal(sym_table_count(t), k);
                        sym_table_free(t);
                        free(ref);
                }
        }
}

/* A table that chooses among aliases as perf does (sym_table_choose_aliases_as_perf): libc's
   qsort_r's three names (__qsort_r and __GI___qsort_r local, qsort_r weak) give
   __GI___qsort_r as perf report gives it; a sized name beats an unsized global, a global a local,
   fewer leading underscores more; without the choice, the lowest rank added first stays. */
static void test_aliases_as_perf(void **state)
{
        (void)state;
        static const struct {
                const char *names[3];
                uint64_t sizes[3];
                uint32_t flags[3];
                const char *perf, *ours;
        } cases[] = {
                {{"__qsort_r", "__GI___qsort_r", "qsort_r"},
                 {834, 834, 834},
                 {SYM_FLAG_LOCAL, SYM_FLAG_LOCAL, SYM_FLAG_WEAK},
                 "__GI___qsort_r",
                 "__qsort_r"},
                {{"__write", "write", "__GI___write"},
                 {0, 16, 16},
                 {0, SYM_FLAG_WEAK, SYM_FLAG_LOCAL},
                 "__GI___write",
                 "__write"},
                {{"_a_longer_name", "b", "__c"}, {8, 8, 8}, {0, 0, 0}, "b", "_a_longer_name"},
                {{"short", "a_longer", "__longest_name"},
                 {8, 8, 8},
                 {0, 0, 0},
                 "a_longer",
                 "short"},
        };
        for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
                for (int is_perf = 0; is_perf < 2; is_perf++) {
                        struct sym_table *t = sym_table_new();
                        if (is_perf)
                                sym_table_choose_aliases_as_perf(t);
                        sym_table_add(t, 0x500, 0x10, "before", 6, 0);
                        for (int k = 0; k < 3; k++)
                                sym_table_add(t, 0x1000, cases[c].sizes[k], cases[c].names[k],
                                              strlen(cases[c].names[k]), cases[c].flags[k]);
                        sym_table_finish(t, 0x1000);
                        const struct sym_entry *e = sym_table_find(t, 0x1004);
                        assert_non_null(e);
                        assert_string_equal(sym_table_name(t, e),
                                            is_perf ? cases[c].perf : cases[c].ours);
                        assert_int_equal(sym_table_count(t), 2);
                        sym_table_free(t);
                }
        }
}

/* Control characters of a name become '?', wherever they are in it (the names are copied
   eight bytes at a time); the other bytes, UTF-8 too, stay. */
/* Whether a string table may be read in place, byte by byte: control bytes (1-0x1f) and DEL
   refuse it, anything else (NUL, printable, bytes from 0x80) does not, wherever it lies in a
   long table (the sixteen-byte steps and the tail after them). */
static void test_borrow_every_byte(void **state)
{
        (void)state;
        static const size_t at[] = {0, 15, 16, 47, 130, 197};
        for (unsigned v = 0; v < 256; v++) {
                bool is_bad = (v >= 1 && v <= 0x1f) || v == 0x7f;
                for (size_t k = 0; k < sizeof(at) / sizeof(at[0]); k++) {
                        char strtab[200];
                        for (size_t i = 0; i < sizeof(strtab); i++)
                                strtab[i] = (char)('a' + i % 26);
                        strtab[sizeof(strtab) - 1] = 0;
                        strtab[at[k]] = (char)v;
                        struct sym_table *t = sym_table_new();
                        if (sym_table_borrow_names(t, strtab, sizeof(strtab)) != !is_bad)
                                fail_msg("byte %#x at %zu: %s", v, at[k],
                                         is_bad ? "borrowed" : "refused");
                        sym_table_free(t);
                }
        }
}

static void test_control_characters(void **state)
{
        (void)state;
        static const char *const names[] = {"plain_name_longer_than_sixteen_bytes",
                                            "tab\there_and_more_bytes_after_it",
                                            "eight_by\x1btes_escape_in_the_second_word",
                                            "del_at_end_of_a_long_name_here_\x7f",
                                            "utf8_caf\xc3\xa9_na\xc3\xafve_and_more",
                                            "\x01",
                                            "x"};
        static const char *const want[] = {"plain_name_longer_than_sixteen_bytes",
                                           "tab?here_and_more_bytes_after_it",
                                           "eight_by?tes_escape_in_the_second_word",
                                           "del_at_end_of_a_long_name_here_?",
                                           "utf8_caf\xc3\xa9_na\xc3\xafve_and_more",
                                           "?",
                                           "x"};
        struct sym_table *t = sym_table_new();
        for (uint32_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                sym_table_add(t, 0x1000 * (i + 1), 0x100, names[i], strlen(names[i]), 0);
        sym_table_finish(t, 0);
        for (uint32_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                assert_string_equal(name_at(t, 0x1000 * (i + 1) + 1), want[i]);
        sym_table_free(t);
}

static void test_any_order(void **state)
{
        (void)state;
        enum { N = 3000 };
        static uint32_t sorted[N], reversed[N], tail[N];
        for (uint32_t i = 0; i < N; i++) {
                sorted[i] = i;
                reversed[i] = N - 1 - i;
        }
        /* the first two thirds in order, the last third scrambled */
        for (uint32_t i = 0; i < N; i++)
                tail[i] = i < 2 * N / 3 ? i : 2 * N / 3 + (i * 7919u) % (N - 2 * N / 3);
        struct sym_table *a = table_in_order(sorted, N), *b = table_in_order(reversed, N),
                         *c = table_in_order(tail, N);
        assert_int_equal(sym_table_count(a), N / 3);
        assert_int_equal(sym_table_count(b), N / 3);
        assert_int_equal(sym_table_count(c), N / 3);
        for (uint32_t i = 0; i < N / 3; i++) {
                const struct sym_entry *x = sym_table_at(a, i), *y = sym_table_at(b, i),
                                       *z = sym_table_at(c, i);
                char want[32];
                snprintf(want, sizeof(want), "sym%u", 3 * i);
                assert_int_equal(x->start, 0x1000 + (uint64_t)i * 0x40);
                assert_int_equal(x->size, i + 1 < N / 3 ? 0x40 : 0x1000); /* the last: capped */
                assert_string_equal(sym_table_name(a, x), want);
                assert_int_equal(y->start, x->start);
                assert_int_equal(z->start, x->start);
                assert_int_equal(z->size, x->size);
                assert_string_equal(sym_table_name(b, y), want);
                assert_string_equal(sym_table_name(c, z), want);
        }
        sym_table_free(a);
        sym_table_free(b);
        sym_table_free(c);
}

/* A table whose room was faulted in ahead (sym_table_prefault) holds what is added past that
   room, and less than it, as one grown entry by entry: the same names at the same places, and
   its room not used given back. */
static void test_prefault(void **state)
{
        (void)state;
        static const uint32_t counts[] = {10, 5000};
        for (size_t k = 0; k < sizeof(counts) / sizeof(*counts); k++) {
                struct sym_table *a = sym_table_new(), *b = sym_table_new();
                sym_table_prefault(b, 1000, 16 * 1000);
                char name[32];
                for (uint32_t i = 0; i < counts[k]; i++) {
                        /* added out of order, as modules follow the kernel */
                        uint64_t start = 0x100000 + (uint64_t)((i * 7919u) % counts[k]) * 0x40;
                        int n = snprintf(name, sizeof(name), "fn_%u", i);
                        sym_table_add(a, start, 0x40, name, (size_t)n, 0);
                        sym_table_add(b, start, 0x40, name, (size_t)n, 0);
                }
                sym_table_finish(a, 0);
                sym_table_finish(b, 0);
                assert_int_equal(sym_table_count(a), counts[k]);
                assert_int_equal(sym_table_count(b), counts[k]);
                for (uint32_t i = 0; i < counts[k]; i++) {
                        uint64_t addr = 0x100000 + (uint64_t)i * 0x40 + 3;
                        assert_string_equal(name_at(a, addr), name_at(b, addr));
                }
                assert_int_equal(sym_table_memory(a), sym_table_memory(b));
                sym_table_free(a);
                sym_table_free(b);
        }
}

/* Names in a string table that outlives the table (an ELF file's) are read in place, not
   copied: the same names, no pool for them; a string table with a byte the pool would replace
   is copied and sanitized as before; a name past the borrowed table, or too long, is copied. */
static void test_borrowed_names(void **state)
{
        (void)state;
        static const char strtab[] = "\0alpha\0beta\0gamma_long_name\0";
        struct sym_table *tables[2];
        for (int k = 0; k < 2; k++) {
                struct sym_table *t = tables[k] = sym_table_new();
                if (k)
                        assert_true(sym_table_borrow_names(t, strtab, sizeof(strtab)));
                sym_table_add(t, 0x2000, 0x10, strtab + 7, 4, 0);             /* beta */
                sym_table_add(t, 0x1000, 0x10, strtab + 1, 5, SYM_FLAG_WEAK); /* alpha */
                sym_table_add(t, 0x1000, 0x10, strtab + 12, 15, 0);           /* gamma_long_name */
                sym_table_add(t, 0x3000, 0x10, "copied", 6, 0);
                sym_table_add(t, 0x4000, 0x10, strtab + 1, 3, 0); /* "alp": not NUL-ended */
                sym_table_finish(t, 0);
                assert_int_equal(sym_table_count(t), 4);
                /* of one start the global wins whatever the order added */
                assert_string_equal(name_at(t, 0x1001), "gamma_long_name");
                assert_string_equal(name_at(t, 0x2001), "beta");
                assert_string_equal(name_at(t, 0x3001), "copied");
                assert_string_equal(name_at(t, 0x4001), "alp");
        }
        /* read in place: the pool holds none of the three names (5 + 6 + 16 bytes) */
        assert_ptr_equal(name_at(tables[1], 0x1001), strtab + 12);
        assert_ptr_equal(name_at(tables[1], 0x2001), strtab + 7);
        assert_int_equal(sym_table_memory(tables[0]) - sym_table_memory(tables[1]), 27);
        sym_table_free(tables[0]);
        sym_table_free(tables[1]);
        struct sym_table *t;
        static const char dirty[] = "\0al\x01pha\0";
        t = sym_table_new();
        assert_false(sym_table_borrow_names(t, dirty, sizeof(dirty)));
        sym_table_add(t, 0x1000, 0x10, dirty + 1, 6, 0);
        sym_table_finish(t, 0);
        assert_string_equal(name_at(t, 0x1001), "al?pha");
        sym_table_free(t);
}

/* t and m name the same symbol at every address test_mapped looks at. */
static void assert_same_names(const struct sym_table *t, const struct sym_table *m)
{
        for (uint64_t a = 0xf00; a < 0x3200; a += 8) {
                const char *x = name_at(t, a), *y = name_at(m, a);
                if (!x)
                        assert_null(y);
                else
                        assert_string_equal(x, y);
        }
}

/* A table made over a finished table's arrays (a cache file's, here copies of them): the same
   answers, nothing freed with it; a pool a finished table could not have left refused, and
   entries it could not have left read safely where they are used. */
static void test_mapped(void **state)
{
        (void)state;
        struct sym_table *t = sym_table_new();
        sym_table_add(t, 0x3000, 0x100, "third", 5, 0);
        sym_table_add(t, 0x1000, 0, "first", 5, 0);
        sym_table_add(t, 0x2000, 0, "second", 6, SYM_FLAG_LOCAL);
        sym_table_add(t, 0x1ff0, 0, "__pfx_second", 12, SYM_FLAG_PADDING);
        sym_table_add(t, 0x1000, 0x10, "first_alias", 11, SYM_FLAG_WEAK);
        sym_table_finish(t, 0x800);
        uint32_t nr = sym_table_count(t);
        size_t pool_len = 0;
        const char *pool0 = sym_table_pool(t, &pool_len);
        assert_non_null(pool0);
        assert_int_equal(nr, 4);
        struct sym_entry *entries = malloc(nr * sizeof(*entries));
        char *pool = malloc(pool_len);
        memcpy(entries, sym_table_at(t, 0), nr * sizeof(*entries));
        memcpy(pool, pool0, pool_len);

        struct sym_table *m = sym_table_new_mapped(entries, nr, pool, pool_len);
        assert_non_null(m);
        assert_int_equal(sym_table_count(m), nr);
        assert_int_equal(sym_table_memory(m), sym_table_memory(t));
        assert_same_names(t, m);
        /* adding to it, or finishing it again, changes nothing (its arrays are read-only) */
        sym_table_add(m, 0x5000, 0x10, "late", 4, 0);
        sym_table_finish(m, 0);
        assert_int_equal(sym_table_count(m), nr);
        sym_table_free(m);
        /* the arrays are the caller's still */
        assert_string_equal(pool + entries[0].name, "first");

        /* refused: a pool not ended by a NUL, not begun by the empty name */
        assert_null(sym_table_new_mapped(entries, nr, pool, pool_len - 1));
        pool[0] = 'x';
        assert_null(sym_table_new_mapped(entries, nr, pool, pool_len));
        pool[0] = 0;
        /* read where used: a name with a control byte, one past the pool, one with the borrowed
           bit (the table has no borrowed names) name nothing; the others read as made */
        pool[entries[0].name] = '\n';
        entries[1].name = (uint32_t)pool_len;
        entries[2].name |= 0x80000000u;
        m = sym_table_new_mapped(entries, nr, pool, pool_len);
        assert_non_null(m);
        assert_string_equal(sym_table_name(m, sym_table_at(m, 0)), "");
        assert_string_equal(sym_table_name(m, sym_table_at(m, 1)), "");
        assert_string_equal(sym_table_name(m, sym_table_at(m, 2)), "");
        assert_string_equal(sym_table_name(m, sym_table_at(m, 3)),
                            sym_table_name(t, sym_table_at(t, 3)));
        sym_table_free(m);
        memcpy(entries, sym_table_at(t, 0), nr * sizeof(*entries));
        pool[entries[0].name] = 'f';
        /* starts out of order or repeated, a flag of the build's: answers, nothing read outside */
        struct sym_entry e0 = entries[0];
        entries[0] = entries[1];
        entries[1] = e0;
        entries[2].start = entries[3].start;
        entries[3].flags |= SYM_FLAG_BOUND;
        m = sym_table_new_mapped(entries, nr, pool, pool_len);
        assert_non_null(m);
        for (uint64_t a = 0xf00; a < 0x3200; a += 8)
                (void)name_at(m, a);
        sym_table_free(m);
        memcpy(entries, sym_table_at(t, 0), nr * sizeof(*entries));
        m = sym_table_new_mapped(entries, nr, pool, pool_len);
        assert_non_null(m); /* all put right again */
        assert_same_names(t, m);
        sym_table_free(m);
        /* no entries: a table that finds nothing */
        m = sym_table_new_mapped(NULL, 0, pool, pool_len);
        assert_non_null(m);
        assert_null(name_at(m, 0x1000));
        sym_table_free(m);
        free(entries);
        free(pool);
        sym_table_free(t);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_lookup),
                cmocka_unit_test(test_any_order),
                cmocka_unit_test(test_sorted_by_start_and_rank),
                cmocka_unit_test(test_aliases_as_perf),
                cmocka_unit_test(test_inferred_and_nested),
                cmocka_unit_test(test_empty),
                cmocka_unit_test(test_control_characters),
                cmocka_unit_test(test_borrow_every_byte),
                cmocka_unit_test(test_borrowed_names),
                cmocka_unit_test(test_prefault),
                cmocka_unit_test(test_mapped),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
