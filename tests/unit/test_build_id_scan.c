/* SPDX-License-Identifier: MIT */
/* test_build_id_scan.c: an image found by its build-id among a --symbol-path folder's files
   under another name (symbols/build_id_scan.c): ELF files only, a FIFO never opened (the scan
   does not block), each folder read once, an id padded with zeros (perf's) matched. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build_id_scan.h"

static uint32_t file_build_id(const char *path, uint8_t *id)
{
        int fd = open(path, O_RDONLY);
        assert_true(fd >= 0);
        elf_version(EV_CURRENT);
        Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
        const void *p = NULL;
        ssize_t n = elf ? dwelf_elf_gnu_build_id(elf, &p) : -1;
        uint32_t size = n > 0 && n <= 20 ? (uint32_t)n : 0;
        if (size)
                memcpy(id, p, size);
        elf_end(elf);
        close(fd);
        return size;
}

static void copy_file(const char *from, const char *to)
{
        FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
        assert_non_null(in);
        assert_non_null(out);
        char buf[65536];
        size_t n;
        while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
                assert_int_equal(fwrite(buf, 1, n, out), n);
        fclose(in);
        fclose(out);
}

static void test_scan(void **state)
{
        (void)state;
        const char *fixture = getenv("SYM_FIXTURE");
        if (!fixture)
                skip();
        uint8_t id[20] = {0};
        uint32_t n = file_build_id(fixture, id);
        if (!n)
                skip(); /* a toolchain without build-ids */
        char dir[] = "/tmp/etwtop-scan-XXXXXX", other[] = "/tmp/etwtop-scan-XXXXXX";
        assert_non_null(mkdtemp(dir));
        assert_non_null(mkdtemp(other));
        char path[512], text[512], fifo[512], found[4096];
        snprintf(path, sizeof(path), "%s/copied-under-another-name", dir);
        snprintf(text, sizeof(text), "%s/notes.txt", dir);
        snprintf(fifo, sizeof(fifo), "%s/a-fifo", dir);
        copy_file(fixture, path);
        FILE *t = fopen(text, "w");
        assert_non_null(t);
        fputs("\x7f"
              "ELF? no\n",
              t);
        fclose(t);
        assert_int_equal(mkfifo(fifo, 0600), 0);

        uint32_t nr_dirs0, nr_dirs1;
        uint64_t nr_opened0, nr_opened1;
        build_id_scan_stats(&nr_dirs0, &nr_opened0);
        const char *dirs[] = {other, dir};
        assert_true(build_id_scan_find(dirs, 2, id, n, found, sizeof(found)));
        assert_string_equal(found, path);
        build_id_scan_stats(&nr_dirs1, &nr_opened1);
        assert_int_equal(nr_dirs1 - nr_dirs0, 2);
        assert_int_equal(nr_opened1 - nr_opened0, 2); /* the copy and the text, not the FIFO */

        /* again, and another id: the folders are not read again */
        uint8_t wrong[20];
        memcpy(wrong, id, sizeof(wrong));
        wrong[0] ^= 0xff;
        assert_false(build_id_scan_find(dirs, 2, wrong, n, found, sizeof(found)));
        assert_true(build_id_scan_find(dirs, 2, id, n, found, sizeof(found)));
        build_id_scan_stats(&nr_dirs0, &nr_opened0);
        assert_int_equal(nr_dirs0, nr_dirs1);
        assert_int_equal(nr_opened0, nr_opened1);

        /* a recorded id padded with zeros to 20 bytes (perf's BUILD_ID feature) matches a
           shorter one; another id of another length does not */
        if (n < 20) {
                uint8_t padded[20] = {0};
                memcpy(padded, id, n);
                assert_true(build_id_scan_find(dirs, 2, padded, 20, found, sizeof(found)));
        }
        assert_false(build_id_scan_find(dirs, 2, id + 1, n - 1, found, sizeof(found)));

        unlink(path);
        unlink(text);
        unlink(fifo);
        rmdir(dir);
        rmdir(other);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_scan),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
