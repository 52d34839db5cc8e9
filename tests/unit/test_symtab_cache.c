/* SPDX-License-Identifier: MIT */
/* test_symtab_cache.c: cmocka tests of ELF modules' symbol tables kept between runs
 * (symbols/symtab_cache.c through elf_module_load): the system's libc loaded a first time
 * (its table built and kept), a second time (mapped from the kept file) and through libdwfl,
 * the three tables the same entry for entry; the kept file is what the second load reads (a
 * name changed in it shows); a damaged or hostile one (starts out of order, a name past the
 * pool, a short file) is refused and the table built again, then kept anew; a small table, and
 * one read through libdwfl, are not kept. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_module.h"
#include "module_load.h"
#include "symbols/sym_table.h"
#include "symtab_cache.h"

#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"

static char dir[256];

static int setup(void **state)
{
        (void)state;
        snprintf(dir, sizeof(dir), "/tmp/etwtop-stc-XXXXXX");
        if (!mkdtemp(dir))
                return -1;
        setenv("ETWTOP_DWARF_CACHE", dir, 1);
        elf_module_symbols_through_libdwfl = false;
        return 0;
}

static int teardown(void **state)
{
        (void)state;
        char cmd[400];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        elf_module_symbols_through_libdwfl = false;
        return system(cmd) == 0 ? 0 : -1;
}

/* The kept tables: how many, the first one's path in out (when out). */
static int kept(char *out, size_t size)
{
        DIR *d = opendir(dir);
        assert_non_null(d);
        int n = 0;
        for (struct dirent *e; (e = readdir(d));) {
                size_t len = strlen(e->d_name);
                if (len < 3 || strcmp(e->d_name + len - 3, ".st") != 0)
                        continue;
                if (!n && out)
                        snprintf(out, size, "%s/%s", dir, e->d_name);
                n++;
        }
        closedir(d);
        return n;
}

static void assert_same_tables(const struct sym_table *a, const struct sym_table *b)
{
        uint32_t n = sym_table_count(a);
        assert_int_equal(n, sym_table_count(b));
        for (uint32_t i = 0; i < n; i++) {
                const struct sym_entry *x = sym_table_at(a, i), *y = sym_table_at(b, i);
                if (x->start != y->start || x->size != y->size || x->flags != y->flags ||
                    strcmp(sym_table_name(a, x), sym_table_name(b, y)) != 0)
                        fail_msg("entry %u: %s at %#lx+%#lx (%#x) against %s at %#lx+%#lx (%#x)", i,
                                 sym_table_name(a, x), (unsigned long)x->start,
                                 (unsigned long)x->size, x->flags, sym_table_name(b, y),
                                 (unsigned long)y->start, (unsigned long)y->size, y->flags);
        }
}

static bool has_libc(void)
{
        if (access(LIBC, R_OK) == 0)
                return true;
        print_message("SKIP: no %s here\n", LIBC);
        return false;
}

/* The kept file's bytes after the cache's 64-byte header: the table's header (magic, nr, zero,
   pool_len), then its entries and pool. */
struct kept_file {
        unsigned char *p;
        size_t len;
        uint32_t nr;
        uint64_t pool_len;
        struct sym_entry *entries;
        char *pool;
};

static void kept_read(const char *path, struct kept_file *k)
{
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        struct stat st;
        assert_int_equal(fstat(fileno(f), &st), 0);
        k->len = (size_t)st.st_size;
        k->p = malloc(k->len);
        assert_non_null(k->p);
        assert_int_equal(fread(k->p, 1, k->len, f), k->len);
        fclose(f);
        assert_true(k->len > 64 + 32);
        assert_memory_equal(k->p + 64, "etwtop symtab 1\n", 16);
        memcpy(&k->nr, k->p + 64 + 16, 4);
        memcpy(&k->pool_len, k->p + 64 + 24, 8);
        k->entries = (struct sym_entry *)(void *)(k->p + 64 + 32);
        k->pool = (char *)(k->entries + k->nr);
        assert_int_equal(64 + 32 + (size_t)k->nr * sizeof(struct sym_entry) + k->pool_len, k->len);
}

static void kept_write(const char *path, const struct kept_file *k, size_t len)
{
        /* a new file under the name, as the cache writes: a reader maps the old or the new */
        char tmp[512];
        snprintf(tmp, sizeof(tmp), "%s.new", path);
        FILE *f = fopen(tmp, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(k->p, 1, len, f), len);
        assert_int_equal(fclose(f), 0);
        assert_int_equal(chmod(tmp, 0600), 0);
        assert_int_equal(rename(tmp, path), 0);
}

static void test_kept_and_mapped(void **state)
{
        (void)state;
        if (!has_libc())
                return;
        /* keyed with this program's build-id too */
        uint8_t id[20];
        assert_true(symtab_cache_program_id(id) > 0);
        struct elf_module *a = load_module(LIBC);
        char path[600];
        assert_int_equal(kept(path, sizeof(path)), 1);
        struct elf_module *b = load_module(LIBC);
        elf_module_symbols_through_libdwfl = true;
        struct elf_module *c = load_module(LIBC);
        elf_module_symbols_through_libdwfl = false;
        assert_true(sym_table_count(elf_module_table(a)) >= SYMTAB_CACHE_MIN_SYMBOLS);
        assert_same_tables(elf_module_table(a), elf_module_table(b));
        assert_same_tables(elf_module_table(a), elf_module_table(c));
        assert_true(elf_module_symbols_were_direct(b));
        assert_int_equal(kept(NULL, 0), 1); /* one table, kept once */

        /* the second load read the kept file: a name changed there shows */
        struct kept_file k;
        kept_read(path, &k);
        uint32_t i = k.nr / 2;
        char *name = k.pool + k.entries[i].name;
        assert_true(strlen(name) > 0);
        char *was = strdup(name);
        name[0] = name[0] == 'Q' ? 'R' : 'Q';
        kept_write(path, &k, k.len);
        struct elf_module *d = load_module(LIBC);
        const struct sym_entry *e = sym_table_at(elf_module_table(d), i);
        assert_string_equal(sym_table_name(elf_module_table(d), e), name);
        assert_string_not_equal(sym_table_name(elf_module_table(d), e), was);
        free(was);
        free(k.p);
        elf_module_free(a);
        elf_module_free(b);
        elf_module_free(c);
        elf_module_free(d);
}

/* One damage to the kept file: what the next load must refuse (its header, its lengths, its
   pool), or read where it is used (an entry: sym_table_new_mapped). */
enum damage { STARTS_OUT_OF_ORDER, NAME_PAST_POOL, SHORT, POOL_NOT_ENDED, DAMAGES };

static void test_damaged_refused(void **state)
{
        (void)state;
        if (!has_libc())
                return;
        struct elf_module *a = load_module(LIBC);
        const struct sym_table *ta = elf_module_table(a);
        char path[600];
        assert_int_equal(kept(path, sizeof(path)), 1);
        for (int d = 0; d < DAMAGES; d++) {
                struct kept_file k;
                kept_read(path, &k);
                size_t len = k.len;
                switch (d) {
                case STARTS_OUT_OF_ORDER: {
                        struct sym_entry t = k.entries[1];
                        k.entries[1] = k.entries[2];
                        k.entries[2] = t;
                        break;
                }
                case NAME_PAST_POOL: k.entries[3].name = (uint32_t)k.pool_len + 7; break;
                case SHORT: len -= 5; break;
                case POOL_NOT_ENDED: k.pool[k.pool_len - 1] = 'x'; break;
                }
                kept_write(path, &k, len);
                free(k.p);
                struct elf_module *b = load_module(LIBC);
                const struct sym_table *tb = elf_module_table(b);
                if (d == SHORT || d == POOL_NOT_ENDED) {
                        /* refused: the table built again, the same as the first, and kept anew */
                        assert_same_tables(ta, tb);
                        elf_module_free(b);
                        struct kept_file again;
                        kept_read(path, &again);
                        assert_int_equal(again.len, k.len);
                        free(again.p);
                        continue;
                }
                /* read where used: the damaged entries as the file has them (a name past the
                   pool names nothing), every other one as built; every lookup inside the file */
                uint32_t n = sym_table_count(ta);
                assert_int_equal(sym_table_count(tb), n);
                for (uint32_t i = 0; i < n; i++) {
                        uint32_t j = d == STARTS_OUT_OF_ORDER && (i == 1 || i == 2) ? 3 - i : i;
                        const struct sym_entry *x = sym_table_at(ta, j), *y = sym_table_at(tb, i);
                        assert_int_equal(x->start, y->start);
                        if (d == NAME_PAST_POOL && i == 3)
                                assert_string_equal(sym_table_name(tb, y), "");
                        else
                                assert_string_equal(sym_table_name(ta, x), sym_table_name(tb, y));
                        (void)sym_table_find(tb, y->start);
                        (void)sym_table_find(tb, y->start + y->size);
                }
                elf_module_free(b);
                /* the next damage starts from a whole table, as built */
                unlink(path);
                elf_module_free(load_module(LIBC));
                assert_int_equal(kept(path, sizeof(path)), 1);
        }
        elf_module_free(a);
}

static void test_not_kept(void **state)
{
        (void)state;
        const char *fixture = getenv("SYM_FIXTURE");
        if (!fixture || !*fixture)
                fail_msg("SYM_FIXTURE is not set (run through ctest)");
        /* a small table: built each time */
        struct elf_module *m = load_module(fixture);
        assert_true(sym_table_count(elf_module_table(m)) < SYMTAB_CACHE_MIN_SYMBOLS);
        elf_module_free(m);
        assert_int_equal(kept(NULL, 0), 0);
        if (!has_libc())
                return;
        /* read through libdwfl: not kept, nor looked for */
        elf_module_symbols_through_libdwfl = true;
        m = load_module(LIBC);
        elf_module_free(m);
        assert_int_equal(kept(NULL, 0), 0);
        elf_module_symbols_through_libdwfl = false;
        /* no cache directory: built, nothing written */
        setenv("ETWTOP_DWARF_CACHE", "off", 1);
        m = load_module(LIBC);
        assert_true(sym_table_count(elf_module_table(m)) >= SYMTAB_CACHE_MIN_SYMBOLS);
        elf_module_free(m);
        assert_int_equal(kept(NULL, 0), 0);
        setenv("ETWTOP_DWARF_CACHE", dir, 1);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_kept_and_mapped, setup, teardown),
                cmocka_unit_test_setup_teardown(test_damaged_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_not_kept, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
