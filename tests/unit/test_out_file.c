/* SPDX-License-Identifier: MIT */
/* test_out_file.c: util/out_file: an output replaces only a regular file of the caller's, with
   --force; a FIFO, a device, a symbolic link, a directory or another user's file is refused and
   left as it was; a failed write leaves the old file whole; "-" is standard output. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/out_file.h"

static char dir[64];

static int setup(void **state)
{
        (void)state;
        snprintf(dir, sizeof(dir), "/tmp/test_out_file.XXXXXX");
        return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
        (void)state;
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        return system(cmd) == 0 ? 0 : -1;
}

static void path_of(char *buf, size_t n, const char *name)
{
        snprintf(buf, n, "%s/%s", dir, name);
}

static void put(const char *path, const char *text)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        close(fd);
}

static void expect_text(const char *path, const char *text)
{
        char buf[64] = {0};
        int fd = open(path, O_RDONLY);
        assert_true(fd >= 0);
        assert_true(read(fd, buf, sizeof(buf) - 1) >= 0);
        close(fd);
        assert_string_equal(buf, text);
}

/* Writes text to path through out_file; the rc of open or commit. */
static int write_out(const char *path, unsigned flags, const char *text, char *err, size_t n)
{
        struct out_file f;
        int rc = out_file_open(&f, path, flags, err, n);
        if (rc < 0)
                return rc;
        assert_int_equal(write(f.fd, text, strlen(text)), (ssize_t)strlen(text));
        return out_file_commit(&f, err, n);
}

static void test_new_and_replaced(void **state)
{
        (void)state;
        char p[128], err[256];
        path_of(p, sizeof(p), "a.out");
        assert_int_equal(write_out(p, 0, "one", err, sizeof(err)), 0);
        expect_text(p, "one");
        struct stat st;
        assert_int_equal(stat(p, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0600);
        assert_int_equal(write_out(p, 0, "two", err, sizeof(err)), -EEXIST);
        assert_non_null(strstr(err, "--force"));
        expect_text(p, "one");
        assert_int_equal(write_out(p, OUT_FILE_FORCE, "two", err, sizeof(err)), 0);
        expect_text(p, "two");
}

/* A write that fails leaves the file being replaced as it was, and no temporary beside it. */
static void test_abort_keeps_old(void **state)
{
        (void)state;
        char p[128], err[256];
        path_of(p, sizeof(p), "keep.out");
        put(p, "old");
        struct out_file f;
        assert_int_equal(out_file_open(&f, p, OUT_FILE_FORCE, err, sizeof(err)), 0);
        assert_int_equal(write(f.fd, "partial", 7), 7);
        out_file_abort(&f);
        expect_text(p, "old");
        char cmd[256];
        snprintf(cmd, sizeof(cmd), "test $(ls -A '%s' | grep -c keep) = 1", dir);
        assert_int_equal(system(cmd), 0);
}

static void expect_refused(const char *p, const char *why)
{
        char err[256] = "";
        struct stat before, after;
        assert_int_equal(lstat(p, &before), 0);
        assert_true(write_out(p, OUT_FILE_FORCE, "x", err, sizeof(err)) < 0);
        assert_non_null(strstr(err, why));
        assert_int_equal(out_file_make_room(p, OUT_FILE_FORCE, err, sizeof(err)) < 0, 1);
        assert_int_equal(lstat(p, &after), 0);
        assert_int_equal(before.st_ino, after.st_ino);
        assert_int_equal(before.st_mode, after.st_mode);
}

static void test_fifo_refused(void **state)
{
        (void)state;
        char p[128];
        path_of(p, sizeof(p), "fifo");
        assert_int_equal(mkfifo(p, 0600), 0);
        expect_refused(p, "a FIFO");
}

static void test_symlink_refused(void **state)
{
        (void)state;
        char p[128], target[128];
        path_of(target, sizeof(target), "target");
        path_of(p, sizeof(p), "link");
        put(target, "target");
        assert_int_equal(symlink(target, p), 0);
        expect_refused(p, "a symbolic link");
        expect_text(target, "target");
        /* a link to a device, as /dev/stdout is */
        path_of(p, sizeof(p), "stdout");
        assert_int_equal(symlink("/dev/null", p), 0);
        expect_refused(p, "a symbolic link");
}

static void test_device_refused(void **state)
{
        (void)state;
        char p[128];
        path_of(p, sizeof(p), "null");
        if (mknod(p, S_IFCHR | 0666, makedev(1, 3)) < 0)
                skip(); /* not root: /dev/null itself is then refused by its owner too */
        expect_refused(p, "a character device");
}

static void test_directory_refused(void **state)
{
        (void)state;
        char p[128];
        path_of(p, sizeof(p), "d");
        assert_int_equal(mkdir(p, 0700), 0);
        expect_refused(p, "a directory");
}

static void test_other_owner_refused(void **state)
{
        (void)state;
        char p[128];
        path_of(p, sizeof(p), "theirs");
        put(p, "theirs");
        if (geteuid() != 0 || chown(p, 65534, 65534) < 0)
                skip(); /* only root can give a file away */
        expect_refused(p, "belongs to uid 65534");
        expect_text(p, "theirs");
}

static void test_stdout(void **state)
{
        (void)state;
        char err[256];
        struct out_file f;
        assert_int_equal(out_file_open(&f, "-", OUT_FILE_STDOUT, err, sizeof(err)), 0);
        assert_int_equal(f.fd, STDOUT_FILENO);
        assert_int_equal(out_file_commit(&f, err, sizeof(err)), 0);
        assert_true(fcntl(STDOUT_FILENO, F_GETFD) >= 0); /* not closed */
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_new_and_replaced, setup, teardown),
                cmocka_unit_test_setup_teardown(test_abort_keeps_old, setup, teardown),
                cmocka_unit_test_setup_teardown(test_fifo_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_symlink_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_device_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_directory_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_other_owner_refused, setup, teardown),
                cmocka_unit_test_setup_teardown(test_stdout, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
