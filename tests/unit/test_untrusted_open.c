/* SPDX-License-Identifier: MIT */
/* test_untrusted_open.c: a name from untrusted data (a symbol path, a recording) that is a
   FIFO or a device is neither waited on nor read: util/in_file, and the PE and PDB readers that
   open through it, answer at once with "not a regular file". A hang fails the test (alarm). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "symbols/pdb.h"
#include "symbols/pe_image.h"
#include "symbols/sym_table.h"
#include "util/in_file.h"

static char dir[64], fifo[96];

static void on_alarm(int sig)
{
        (void)sig;
        static const char msg[] = "test_untrusted_open: an open waited on a FIFO\n";
        (void)!write(2, msg, sizeof(msg) - 1);
        _exit(1);
}

static int setup(void **state)
{
        (void)state;
        snprintf(dir, sizeof(dir), "/tmp/test_untrusted_open.XXXXXX");
        if (!mkdtemp(dir))
                return -1;
        snprintf(fifo, sizeof(fifo), "%s/ntdll.dll", dir);
        if (mkfifo(fifo, 0600) < 0)
                return -1;
        signal(SIGALRM, on_alarm);
        alarm(60); /* a hang fails instead of hanging the suite */
        return 0;
}

static int teardown(void **state)
{
        (void)state;
        alarm(0);
        unlink(fifo);
        return rmdir(dir);
}

static void test_in_file(void **state)
{
        (void)state;
        assert_int_equal(in_file_open(fifo, 0, NULL), -EINVAL);
        assert_int_equal(in_file_open("/dev/null", 0, NULL), -EINVAL);
        assert_int_equal(in_file_open(dir, 0, NULL), -EINVAL);
        char link[128];
        snprintf(link, sizeof(link), "%s/link", dir);
        assert_int_equal(symlink("/proc/self/exe", link), 0);
        assert_int_equal(in_file_open(link, O_NOFOLLOW, NULL), -ELOOP);
        struct stat st;
        int fd = in_file_open(link, 0, &st);
        unlink(link);
        assert_true(fd >= 0);
        assert_true(S_ISREG(st.st_mode));
        assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
        close(fd);
}

static void test_pe_image_fifo(void **state)
{
        (void)state;
        struct pe_identity id;
        struct err_msg err = {0};
        struct sym_table *t = sym_table_new();
        assert_int_equal(pe_image_read_file(fifo, &id, t, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "not a regular file"));
        sym_table_free(t);
}

static void test_pdb_fifo(void **state)
{
        (void)state;
        struct pdb *p = NULL;
        struct err_msg err = {0};
        assert_int_equal(pdb_open_file(fifo, &p, &err), -EINVAL);
        assert_null(p);
        assert_non_null(strstr(err.msg, "not a regular file"));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_in_file, setup, teardown),
                cmocka_unit_test_setup_teardown(test_pe_image_fifo, setup, teardown),
                cmocka_unit_test_setup_teardown(test_pdb_fifo, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
