/* SPDX-License-Identifier: MIT */
/* test_ksym_index.c: the kernel symbols' index (backend/linux/ksym_index.c): the symbols it names
   for the addresses hit are those the whole list names, and its file in root's cache is taken
   in the state it was written in only. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "ksym_index.h"
#include "util/kallsyms_text.h"

/* A parsed list as ksyms_parse gives it: sorted by address, aliases in kallsyms order, each
   sized to the next (the last 4 KiB, one before a gap of over 1 MiB too), modules last. */
static const struct perf_ksym list[] = {
        {0xffffffff81000000, 0x20, "_stext", ""},
        {0xffffffff81000000, 0x20, "_text", ""}, /* alias: the last one names the address */
        {0xffffffff81000020, 0x20, "read_tsc", ""},
        {0xffffffff81000040, 0xc0, "arch_cpu_idle", ""},
        {0xffffffff81000100, 0x100, "schedule", ""},
        {0xffffffff81000200, 0x1000, "last_core_function", ""}, /* 4 KiB: a gap follows */
        {0xffffffffc0000000, 0x10, "ext4_read", "ext4"},
        {0xffffffffc0000010, 0x10, "ext4_write", "ext4"},
        {0xffffffffc0100000, 0x40, "nfs_open", "nfs"},
        {0xffffffffc0100040, 0x1000, "nfs_close", "nfs"},
};
#define NR_LIST (sizeof(list) / sizeof(list[0]))

/* The whole list's rule (perf_conv_kernel_symbols): the last symbol at or below a, when a lies
   within its size; -1 for none. */
static int whole_list_hit(uint64_t a)
{
        int hit = -1;
        for (size_t i = 0; i < NR_LIST; i++) {
                if (list[i].addr <= a)
                        hit = (int)i;
        }
        return hit >= 0 && a - list[hit].addr < list[hit].size ? hit : -1;
}

/* Addresses in the order the look-up takes them (perf_conv_kernel_addrs's: ascending). */
static int u64_cmp(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

/* Every address around every symbol's edges, and some between: the index names the same
   symbols, once each, in address order, with the list's sizes, names and modules. */
static void test_lookup_is_whole_list(void **state)
{
        (void)state;
        size_t len = 0;
        void *data = ksym_index_build(list, NR_LIST, &len);
        struct ksym_index ix;
        assert_int_equal(ksym_index_open_mem(&ix, data, len), 0);
        assert_int_equal(ix.nr, NR_LIST);
        uint64_t addrs[256];
        size_t n = 0;
        for (size_t i = 0; i < NR_LIST; i++) {
                uint64_t a = list[i].addr;
                uint64_t around[] = {a - 1,     a, a + 1, a + list[i].size - 1, a + list[i].size,
                                     a + 0x2000};
                for (size_t k = 0; k < sizeof(around) / sizeof(around[0]); k++)
                        addrs[n++] = around[k];
        }
        addrs[n++] = 0xffffffff81000105; /* again: named once */
        addrs[n++] = 0x1000;             /* below every symbol */
        addrs[n++] = UINT64_MAX;
        bool want[NR_LIST] = {false};
        for (size_t k = 0; k < n; k++) {
                int hit = whole_list_hit(addrs[k]);
                if (hit >= 0)
                        want[hit] = true;
        }
        size_t nr = 0;
        qsort(addrs, n, sizeof(*addrs), u64_cmp);
        struct perf_ksym *got = ksym_index_lookup(&ix, addrs, n, &nr);
        size_t g = 0;
        for (size_t i = 0; i < NR_LIST; i++) {
                if (!want[i])
                        continue;
                assert_true(g < nr);
                assert_int_equal(got[g].addr, list[i].addr);
                assert_int_equal(got[g].size, list[i].size);
                assert_string_equal(got[g].name, list[i].name);
                assert_string_equal(got[g].module, list[i].module);
                g++;
        }
        assert_int_equal(g, nr);
        assert_false(want[0]); /* the alias before _text is never the one named */
        assert_true(want[1]);
        free(got);
        /* nothing hit: nothing named */
        assert_null(ksym_index_lookup(&ix, addrs, 0, &nr));
        assert_int_equal(nr, 0);
        uint64_t none = 0x1000;
        assert_null(ksym_index_lookup(&ix, &none, 1, &nr));
        assert_int_equal(nr, 0);
        ksym_index_close(&ix);
        free(data);
}

/* A kernel's worth of symbols (aliases, gaps, sizes of every kind) and thousands of addresses
   made in no order, repeated: the index names, for each address, the symbol a search of the
   whole list names (the look-up takes them sorted and walks the index once). */
static void test_lookup_many_in_no_order(void **state)
{
        (void)state;
        enum { NR_SYMS = 5000, NR_ADDRS = 20000 };
        struct perf_ksym *syms = calloc(NR_SYMS, sizeof(*syms));
        char(*names)[16] = calloc(NR_SYMS, sizeof(*names));
        assert_non_null(syms);
        assert_non_null(names);
        uint64_t seed = 42, a = 0xffffffff81000000;
        for (size_t i = 0; i < NR_SYMS; i++) {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                uint64_t r = seed >> 33;
                if (i && r % 17 == 0) { /* an alias of the one before */
                        a = syms[i - 1].addr;
                } else if (i) {
                        a += syms[i - 1].size + (r % 13 == 0 ? 0x100000 : 0); /* or a gap */
                }
                snprintf(names[i], sizeof(names[i]), "f%zu", i);
                syms[i] = (struct perf_ksym){a, 16 + (r % 400), names[i], ""};
        }
        size_t len = 0;
        void *data = ksym_index_build(syms, NR_SYMS, &len);
        struct ksym_index ix;
        assert_int_equal(ksym_index_open_mem(&ix, data, len), 0);
        uint64_t *addrs = calloc(NR_ADDRS, sizeof(*addrs));
        assert_non_null(addrs);
        uint64_t lo = syms[0].addr - 0x1000, span = a + 0x2000 - lo;
        for (size_t k = 0; k < NR_ADDRS; k++) {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                const struct perf_ksym *near = &syms[(seed >> 33) % NR_SYMS];
                /* around a symbol (its edges and past them), anywhere, or again */
                addrs[k] = k % 5 == 4   ? addrs[k / 2]
                           : k % 5 == 3 ? lo + (seed >> 20) % span
                                        : near->addr - 16 + (seed >> 8) % (near->size + 32);
        }
        bool *want = calloc(NR_SYMS, sizeof(*want));
        assert_non_null(want);
        for (size_t k = 0; k < NR_ADDRS; k++) {
                size_t hit = NR_SYMS;
                for (size_t i = 0; i < NR_SYMS && syms[i].addr <= addrs[k]; i++)
                        hit = i;
                if (hit < NR_SYMS && addrs[k] - syms[hit].addr < syms[hit].size)
                        want[hit] = true;
        }
        size_t nr = 0, g = 0;
        qsort(addrs, NR_ADDRS, sizeof(*addrs), u64_cmp);
        struct perf_ksym *got = ksym_index_lookup(&ix, addrs, NR_ADDRS, &nr);
        for (size_t i = 0; i < NR_SYMS; i++) {
                if (!want[i])
                        continue;
                assert_true(g < nr);
                assert_int_equal(got[g].addr, syms[i].addr);
                assert_string_equal(got[g].name, syms[i].name);
                g++;
        }
        assert_int_equal(g, nr);
        print_message("%zu addresses, %zu symbols named\n", (size_t)NR_ADDRS, nr);
        free(got);
        free(want);
        free(addrs);
        ksym_index_close(&ix);
        free(data);
        free(names);
        free(syms);
}

/* Cut anywhere, or with its strings' end overwritten, the index does not open. */
static void test_damaged_index_refused(void **state)
{
        (void)state;
        size_t len = 0;
        uint8_t *data = ksym_index_build(list, NR_LIST, &len);
        struct ksym_index ix;
        for (size_t cut = 0; cut < len; cut += 7)
                assert_int_equal(ksym_index_open_mem(&ix, data, cut), -EINVAL);
        data[len - 1] = 'x';
        assert_int_equal(ksym_index_open_mem(&ix, data, len), -EINVAL);
        data[len - 1] = 0;
        data[0] ^= 1;
        assert_int_equal(ksym_index_open_mem(&ix, data, len), -EINVAL);
        data[0] ^= 1;
        assert_int_equal(ksym_index_open_mem(&ix, data, len), 0);
        ksym_index_close(&ix);
        free(data);
}

/* The index in the cache: taken in the state it was written in, not in another, not when
   others may write it, not when cut; a 0600 file of this user in a directory made for it. */
static void test_index_in_cache(void **state)
{
        (void)state;
        char dir[] = "/tmp/etwtop-kindex-XXXXXX", cache_dir[64], path[96];
        assert_non_null(mkdtemp(dir));
        snprintf(cache_dir, sizeof(cache_dir), "%s/cache", dir);
        snprintf(path, sizeof(path), "%s/kallsyms.index", cache_dir);
        kallsyms_text_set_paths(NULL, NULL, cache_dir, true);
        struct ksym_index ix;
        const char *state_a = "euid 0\nboot 1\nmodules\next4 0x1\nbpf done\n";
        const char *state_b = "euid 0\nboot 1\nmodules\next4 0x1\nnfs 0x2\nbpf done\n";
        assert_int_equal(ksym_index_open(&ix, state_a), -ENOENT);
        for (int len = 0; len < 8; len++) {
                /* every padding of the header: the entries are read in place, 8-byte aligned */
                char st[80];
                snprintf(st, sizeof(st), "%.*sstate\n", len, "xxxxxxx");
                ksym_index_store(st, list, NR_LIST);
                assert_int_equal(ksym_index_open(&ix, st), 0);
                assert_int_equal((uintptr_t)ix.entries % 8, 0);
                assert_int_equal(ix.nr, NR_LIST);
                ksym_index_close(&ix);
        }
        ksym_index_store(state_a, list, NR_LIST);
        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0600);
        assert_int_equal(ksym_index_open(&ix, state_a), 0);
        uint64_t a = 0xffffffffc0000014;
        size_t nr = 0;
        struct perf_ksym *got = ksym_index_lookup(&ix, &a, 1, &nr);
        assert_int_equal(nr, 1);
        assert_string_equal(got[0].name, "ext4_write");
        assert_string_equal(got[0].module, "ext4");
        free(got);
        ksym_index_close(&ix);
        ksym_index_close(&ix); /* closed twice: nothing */
        ksym_index_close(NULL);
        /* another state (a module came): none */
        assert_int_equal(ksym_index_open(&ix, state_b), -ENOENT);
        /* others may write it: not taken */
        assert_int_equal(chmod(path, 0622), 0);
        assert_int_equal(ksym_index_open(&ix, state_a), -ENOENT);
        assert_int_equal(chmod(path, 0600), 0);
        /* cut in its body: damaged */
        assert_int_equal(truncate(path, st.st_size - 3), 0);
        assert_int_equal(ksym_index_open(&ix, state_a), -EINVAL);
        /* cut in its header: another state's as far as anyone can tell */
        assert_int_equal(truncate(path, 12), 0);
        assert_int_equal(ksym_index_open(&ix, state_a), -ENOENT);
        /* no cache (not root): none, nothing written */
        unlink(path);
        kallsyms_text_set_paths(NULL, NULL, NULL, true);
        ksym_index_store(state_a, list, NR_LIST);
        assert_int_equal(ksym_index_open(&ix, state_a), -ENOENT);
        assert_int_not_equal(access(path, F_OK), 0);
        kallsyms_text_set_paths(NULL, NULL, NULL, false);
        rmdir(cache_dir);
        rmdir(dir);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_lookup_is_whole_list),
                cmocka_unit_test(test_lookup_many_in_no_order),
                cmocka_unit_test(test_damaged_index_refused),
                cmocka_unit_test(test_index_in_cache),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
