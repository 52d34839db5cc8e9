/* SPDX-License-Identifier: MIT */
/* test_dwarf_cache.c: cmocka tests of the on-disk cache of inflated DWARF sections
 * (symbols/dwarf_cache.c): an entry kept and found again, byte for byte; what is never used (a
 * directory or entry of another's, one others may write, a symbolic link, a file of the wrong
 * size or key, "off", a relative path); the size cap, the least recently used entry going
 * first; and elf_inflate_debug on a real compressed debug file (libc's, where libc6-dbg is
 * installed), inflated the first time and mapped from the cache the second, the same bytes. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dwarf_cache.h"
#include "elf_inflate.h"

static char dir[256];

static int setup(void **state)
{
        (void)state;
        snprintf(dir, sizeof(dir), "/tmp/etwtop-dwc-XXXXXX");
        if (!mkdtemp(dir))
                return -1;
        char sub[300];
        snprintf(sub, sizeof(sub), "%s/cache", dir);
        setenv("ETWTOP_DWARF_CACHE", sub, 1);
        dwarf_cache_set_max_bytes(0);
        return 0;
}

static int teardown(void **state)
{
        (void)state;
        char cmd[400];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        return system(cmd) == 0 ? 0 : -1;
}

/* n bytes of a pattern seeded by seed; the "stream" they stand for is the first 4 KiB */
static unsigned char *bytes(size_t n, unsigned seed)
{
        unsigned char *p = malloc(n);
        assert_non_null(p);
        for (size_t i = 0; i < n; i++)
                p[i] = (unsigned char)((i * 2654435761u + seed) >> 7);
        return p;
}

static int nr_entries(void)
{
        char sub[300];
        snprintf(sub, sizeof(sub), "%s/cache", dir);
        DIR *d = opendir(sub);
        if (!d)
                return 0;
        int n = 0;
        for (struct dirent *e; (e = readdir(d));)
                n += strstr(e->d_name, ".dw") != NULL;
        closedir(d);
        return n;
}

static void entry_path(const struct dwarf_cache_key *k, char *out, size_t size)
{
        snprintf(out, size, "%s/cache/%016llx%016llx.dw", dir, (unsigned long long)k->h[0],
                 (unsigned long long)k->h[1]);
}

static void test_store_and_find(void **state)
{
        (void)state;
        size_t size = DWARF_CACHE_MIN_BYTES + 123;
        unsigned char *out = bytes(size, 1), *in = bytes(4096, 2);
        struct dwarf_cache_key k, k2, k3;
        dwarf_cache_key(in, 4096, size, &k);
        dwarf_cache_key(in, 4096, size, &k2);
        assert_memory_equal(&k, &k2, sizeof(k));
        /* one byte of the stream, or the size, changes the key */
        in[4095] ^= 1;
        dwarf_cache_key(in, 4096, size, &k3);
        assert_memory_not_equal(k.h, k3.h, sizeof(k.h));
        in[4095] ^= 1;
        dwarf_cache_key(in, 4096, size + 1, &k3);
        assert_memory_not_equal(k.h, k3.h, sizeof(k.h));

        struct dwarf_cache_map m;
        assert_false(dwarf_cache_find(&k, &m));
        dwarf_cache_store(&k, out);
        assert_int_equal(nr_entries(), 1);
        assert_true(dwarf_cache_find(&k, &m));
        assert_memory_equal(m.data, out, size);
        dwarf_cache_unmap(&m);
        assert_null(m.map);

        /* the directory and its entry are private */
        char sub[300], path[400];
        struct stat st;
        snprintf(sub, sizeof(sub), "%s/cache", dir);
        assert_int_equal(stat(sub, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0700);
        entry_path(&k, path, sizeof(path));
        assert_int_equal(lstat(path, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0600);

        /* too small to keep */
        struct dwarf_cache_key small;
        dwarf_cache_key(in, 100, 1000, &small);
        dwarf_cache_store(&small, out);
        assert_int_equal(nr_entries(), 1);
        assert_false(dwarf_cache_find(&small, &m));
        free(out);
        free(in);
}

/* Entries and directories that are not what they should be are not used. */
static void test_refused(void **state)
{
        (void)state;
        size_t size = DWARF_CACHE_MIN_BYTES;
        unsigned char *out = bytes(size, 3), *in = bytes(4096, 4);
        struct dwarf_cache_key k;
        struct dwarf_cache_map m;
        char path[400], other[400];
        dwarf_cache_key(in, 4096, size, &k);
        dwarf_cache_store(&k, out);
        assert_true(dwarf_cache_find(&k, &m));
        dwarf_cache_unmap(&m);
        entry_path(&k, path, sizeof(path));

        /* writable by others: not read */
        assert_int_equal(chmod(path, 0622), 0);
        assert_false(dwarf_cache_find(&k, &m));
        assert_int_equal(chmod(path, 0600), 0);
        assert_true(dwarf_cache_find(&k, &m));
        dwarf_cache_unmap(&m);

        /* cut short: not read */
        assert_int_equal(truncate(path, (off_t)size), 0);
        assert_false(dwarf_cache_find(&k, &m));

        /* another key's bytes under this key's name (its header says so): not read */
        struct dwarf_cache_key k2;
        dwarf_cache_key(out, 4096, size, &k2);
        dwarf_cache_store(&k2, out);
        entry_path(&k2, other, sizeof(other));
        assert_int_equal(rename(other, path), 0);
        assert_false(dwarf_cache_find(&k, &m));
        assert_false(dwarf_cache_find(&k2, &m));

        /* a symbolic link at the name, to a good entry: not followed */
        dwarf_cache_store(&k2, out);
        assert_true(dwarf_cache_find(&k2, &m));
        dwarf_cache_unmap(&m);
        assert_int_equal(unlink(path), 0);
        assert_int_equal(symlink(other, path), 0);
        assert_false(dwarf_cache_find(&k, &m));
        /* storing replaces the link itself, never what it points to */
        dwarf_cache_store(&k, out);
        struct stat st;
        assert_int_equal(lstat(path, &st), 0);
        assert_true(S_ISREG(st.st_mode));
        assert_true(dwarf_cache_find(&k2, &m));
        dwarf_cache_unmap(&m);
        assert_true(dwarf_cache_find(&k, &m));
        assert_memory_equal(m.data, out, size);
        dwarf_cache_unmap(&m);

        /* the directory writable by others: neither read nor written */
        char sub[300];
        snprintf(sub, sizeof(sub), "%s/cache", dir);
        assert_int_equal(chmod(sub, 0777), 0);
        assert_false(dwarf_cache_find(&k, &m));
        assert_int_equal(chmod(sub, 0700), 0);
        assert_true(dwarf_cache_find(&k, &m));
        dwarf_cache_unmap(&m);

        /* the directory a symbolic link (to the real one): not used */
        char link[300];
        snprintf(link, sizeof(link), "%s/link", dir);
        assert_int_equal(symlink(sub, link), 0);
        setenv("ETWTOP_DWARF_CACHE", link, 1);
        assert_false(dwarf_cache_find(&k, &m));
        /* off, empty or relative: none */
        setenv("ETWTOP_DWARF_CACHE", "off", 1);
        assert_false(dwarf_cache_find(&k, &m));
        setenv("ETWTOP_DWARF_CACHE", "", 1);
        assert_false(dwarf_cache_find(&k, &m));
        setenv("ETWTOP_DWARF_CACHE", "cache", 1);
        assert_false(dwarf_cache_find(&k, &m));
        setenv("ETWTOP_DWARF_CACHE", sub, 1);
        assert_true(dwarf_cache_find(&k, &m));
        dwarf_cache_unmap(&m);
        free(out);
        free(in);
}

/* Without ETWTOP_DWARF_CACHE: $XDG_CACHE_HOME/etwtop/dwarf, else $HOME/.cache/etwtop/dwarf,
   where that base is the user's own; under another's (root with a user's $HOME), nothing. */
static void test_default_places(void **state)
{
        (void)state;
        size_t size = DWARF_CACHE_MIN_BYTES;
        unsigned char *out = bytes(size, 6), *in = bytes(4096, 7);
        struct dwarf_cache_key k;
        struct dwarf_cache_map m;
        char home[300], xdg[300], path[400];
        struct stat st;
        dwarf_cache_key(in, 4096, size, &k);
        snprintf(home, sizeof(home), "%s/home", dir);
        snprintf(xdg, sizeof(xdg), "%s/xdg", dir);
        assert_int_equal(mkdir(home, 0755), 0);
        assert_int_equal(mkdir(xdg, 0755), 0);
        unsetenv("ETWTOP_DWARF_CACHE");
        unsetenv("XDG_CACHE_HOME");
        setenv("HOME", home, 1);
        dwarf_cache_store(&k, out);
        assert_true(dwarf_cache_find(&k, &m));
        dwarf_cache_unmap(&m);
        snprintf(path, sizeof(path), "%s/.cache/etwtop/dwarf", home);
        assert_int_equal(lstat(path, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0700);

        setenv("XDG_CACHE_HOME", xdg, 1);
        assert_false(dwarf_cache_find(&k, &m));
        dwarf_cache_store(&k, out);
        assert_true(dwarf_cache_find(&k, &m));
        dwarf_cache_unmap(&m);
        snprintf(path, sizeof(path), "%s/etwtop/dwarf", xdg);
        assert_int_equal(lstat(path, &st), 0);

        /* a base of another user's: nothing made in it, nothing read from it */
        if (geteuid() == 0) {
                assert_int_equal(chown(xdg, 65534, 65534), 0);
                assert_false(dwarf_cache_find(&k, &m));
                char other[300];
                snprintf(other, sizeof(other), "%s/other", dir);
                assert_int_equal(mkdir(other, 0755), 0);
                assert_int_equal(chown(other, 65534, 65534), 0);
                setenv("XDG_CACHE_HOME", other, 1);
                dwarf_cache_store(&k, out);
                snprintf(path, sizeof(path), "%s/etwtop", other);
                assert_int_equal(lstat(path, &st), -1);
        } else {
                print_message("not root: another user's base directory is not tried\n");
        }
        unsetenv("XDG_CACHE_HOME");
        free(out);
        free(in);
}

/* Over the cap, the least recently used entries go (a find counts as a use). */
static void test_cap(void **state)
{
        (void)state;
        size_t size = DWARF_CACHE_MIN_BYTES;
        unsigned char *out = bytes(size, 5);
        struct dwarf_cache_key k[4];
        struct dwarf_cache_map m;
        dwarf_cache_set_max_bytes(3 * (size + 64));
        for (int i = 0; i < 3; i++) {
                unsigned char in[64];
                memset(in, i + 1, sizeof(in));
                dwarf_cache_key(in, sizeof(in), size, &k[i]);
                dwarf_cache_store(&k[i], out);
                /* distinct times for the order */
                char path[400];
                entry_path(&k[i], path, sizeof(path));
                struct timespec t[2] = {{1000 + i, 0}, {1000 + i, 0}};
                assert_int_equal(utimensat(AT_FDCWD, path, t, 0), 0);
        }
        assert_int_equal(nr_entries(), 3);
        /* the oldest used now: the second is the least recently used */
        assert_true(dwarf_cache_find(&k[0], &m));
        dwarf_cache_unmap(&m);
        unsigned char in[64];
        memset(in, 9, sizeof(in));
        dwarf_cache_key(in, sizeof(in), size, &k[3]);
        dwarf_cache_store(&k[3], out);
        assert_int_equal(nr_entries(), 3);
        assert_true(dwarf_cache_find(&k[0], &m));
        dwarf_cache_unmap(&m);
        assert_false(dwarf_cache_find(&k[1], &m));
        assert_true(dwarf_cache_find(&k[2], &m));
        dwarf_cache_unmap(&m);
        assert_true(dwarf_cache_find(&k[3], &m));
        dwarf_cache_unmap(&m);
        /* an entry over the whole cap is not kept */
        dwarf_cache_set_max_bytes(size);
        memset(in, 10, sizeof(in));
        struct dwarf_cache_key big;
        dwarf_cache_key(in, sizeof(in), size, &big);
        dwarf_cache_store(&big, out);
        assert_false(dwarf_cache_find(&big, &m));
        dwarf_cache_set_max_bytes(0);
        free(out);
}

/* A symbol table's entry (symtab_cache.h): kept under a key made with size 0, found with the
   length it was written with; never found as a DWARF entry nor a DWARF entry as a table; a key
   of another size is no table's; counted under the cap with the DWARF entries, the least
   recently used of either going first. */
static void test_table_entries(void **state)
{
        (void)state;
        unsigned char desc[32];
        memset(desc, 7, sizeof(desc));
        struct dwarf_cache_key tk;
        dwarf_cache_key(desc, sizeof(desc), 0, &tk);
        unsigned char *table = bytes(5000, 11);
        dwarf_cache_store_table(&tk, table, 5000);
        struct dwarf_cache_map m;
        assert_true(dwarf_cache_find_table(&tk, &m));
        assert_int_equal(m.size, 5000);
        assert_memory_equal(m.data, table, 5000);
        dwarf_cache_unmap(&m);
        assert_false(dwarf_cache_find(&tk, &m)); /* not a DWARF entry */
        struct dwarf_cache_key sized = tk;
        sized.size = 5000;
        assert_false(dwarf_cache_find_table(&sized, &m));
        dwarf_cache_store_table(&sized, table, 5000); /* no table's key: nothing written */
        char path[400];
        snprintf(path, sizeof(path), "%s/cache/%016llx%016llx.st", dir, (unsigned long long)tk.h[0],
                 (unsigned long long)tk.h[1]);
        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0600);
        /* shorter than its header: not found */
        assert_int_equal(truncate(path, 40), 0);
        assert_false(dwarf_cache_find_table(&tk, &m));
        dwarf_cache_store_table(&tk, table, 5000);
        assert_true(dwarf_cache_find_table(&tk, &m));
        dwarf_cache_unmap(&m);

        /* the cap: a DWARF entry stored after the table makes room by removing the table,
           the older of the two */
        struct timespec t[2] = {{1000, 0}, {1000, 0}};
        assert_int_equal(utimensat(AT_FDCWD, path, t, 0), 0);
        size_t size = DWARF_CACHE_MIN_BYTES;
        dwarf_cache_set_max_bytes(size + 64 + 2000);
        unsigned char *out = bytes(size, 12);
        unsigned char in[64];
        memset(in, 3, sizeof(in));
        struct dwarf_cache_key dk;
        dwarf_cache_key(in, sizeof(in), size, &dk);
        dwarf_cache_store(&dk, out);
        assert_true(dwarf_cache_find(&dk, &m));
        dwarf_cache_unmap(&m);
        assert_false(dwarf_cache_find_table(&tk, &m));
        dwarf_cache_set_max_bytes(0);
        free(out);
        free(table);
}

/* Whether the ELF file at path has a compressed .debug_info the cache keeps. */
static bool has_compressed_info(const char *path)
{
        int fd = open(path, O_RDONLY | O_NONBLOCK);
        if (fd < 0)
                return false;
        Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
        size_t shstrndx;
        bool has = false;
        if (e && elf_kind(e) == ELF_K_ELF && elf_getshdrstrndx(e, &shstrndx) == 0) {
                for (Elf_Scn *s = elf_nextscn(e, NULL); s && !has; s = elf_nextscn(e, s)) {
                        GElf_Shdr sh;
                        GElf_Chdr ch;
                        const char *name;
                        has = gelf_getshdr(s, &sh) && (sh.sh_flags & SHF_COMPRESSED) &&
                              (name = elf_strptr(e, shstrndx, sh.sh_name)) &&
                              strcmp(name, ".debug_info") == 0 && gelf_getchdr(s, &ch) &&
                              ch.ch_size >= DWARF_CACHE_MIN_BYTES;
                }
        }
        elf_end(e);
        close(fd);
        return has;
}

/* A debug file of the system's with compressed DWARF (libc6-dbg's, the -dbgsym packages'). */
static bool find_compressed_debug_file(char *out, size_t size)
{
        static const char root[] = "/usr/lib/debug/.build-id";
        DIR *top = opendir(root);
        bool found = false;
        for (struct dirent *d; top && !found && (d = readdir(top));) {
                if (d->d_name[0] == '.')
                        continue;
                char sub[300];
                snprintf(sub, sizeof(sub), "%s/%.200s", root, d->d_name);
                DIR *in = opendir(sub);
                for (struct dirent *f; in && !found && (f = readdir(in));) {
                        size_t n = strlen(f->d_name);
                        if (n < 7 || strcmp(f->d_name + n - 6, ".debug") != 0)
                                continue;
                        snprintf(out, size, "%s/%.200s", sub, f->d_name);
                        found = has_compressed_info(out);
                }
                if (in)
                        closedir(in);
        }
        if (top)
                closedir(top);
        return found;
}

/* The compressed DWARF sections of a debug file, read by elf_inflate_debug twice (two opens):
   inflated, then mapped from the cache, each section the same bytes. */
static void test_inflate_twice(void **state)
{
        (void)state;
        elf_version(EV_CURRENT);
        char path[512];
        if (!find_compressed_debug_file(path, sizeof(path))) {
                print_message("skipped: no debug file with compressed DWARF in /usr/lib/debug "
                              "(on Debian: apt-get install libc6-dbg)\n");
                skip();
        }
        print_message("%s\n", path);
        int fd[2];
        Elf *e[2];
        struct elf_inflated keep[2] = {{0}, {0}};
        for (int i = 0; i < 2; i++) {
                fd[i] = open(path, O_RDONLY);
                assert_true(fd[i] >= 0);
                /* as libdwfl opens files: the headers may be written (in this process only) */
                e[i] = elf_begin(fd[i], ELF_C_READ_MMAP_PRIVATE, NULL);
                assert_non_null(e[i]);
                elf_inflate_debug(e[i], &keep[i]);
        }
        print_message("%u inflated, %u mapped from the cache\n", keep[0].nr, keep[1].nr_maps);
        assert_true(keep[0].nr > 0);
        assert_int_equal(keep[0].nr_maps, 0);
        assert_true(keep[1].nr_maps > 0);
        size_t shstrndx;
        assert_int_equal(elf_getshdrstrndx(e[0], &shstrndx), 0);
        int nr_same = 0;
        for (Elf_Scn *a = elf_nextscn(e[0], NULL), *b = elf_nextscn(e[1], NULL); a && b;
             a = elf_nextscn(e[0], a), b = elf_nextscn(e[1], b)) {
                GElf_Shdr sa, sb;
                assert_non_null(gelf_getshdr(a, &sa));
                assert_non_null(gelf_getshdr(b, &sb));
                assert_int_equal(sa.sh_flags, sb.sh_flags);
                assert_int_equal(sa.sh_size, sb.sh_size);
                if (sa.sh_type == SHT_NOBITS ||
                    strncmp(elf_strptr(e[0], shstrndx, sa.sh_name), ".debug_", 7) != 0)
                        continue;
                Elf_Data *da = elf_getdata(a, NULL), *db = elf_getdata(b, NULL);
                assert_int_equal(da->d_size, db->d_size);
                assert_memory_equal(da->d_buf, db->d_buf, da->d_size);
                nr_same++;
        }
        assert_true(nr_same >= (int)keep[1].nr_maps);
        for (int i = 0; i < 2; i++) {
                elf_end(e[i]);
                close(fd[i]);
                elf_inflated_free(&keep[i]);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_store_and_find, setup, teardown),
                cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_default_places, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cap, setup, teardown),
                cmocka_unit_test_setup_teardown(test_table_entries, setup, teardown),
                cmocka_unit_test_setup_teardown(test_inflate_twice, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
