/* SPDX-License-Identifier: MIT */
/* test_outbuf.c: src/outbuf's hold: what is put while holding is written only at its release,
   in order, with the patches made meanwhile, however much was held; a partial release writes
   the front and keeps the rest patchable. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "outbuf.h"

static struct outbuf o;

/* Reads up to size bytes of fd from where it stands. */
static size_t drain(int fd, char *buf, size_t size)
{
        size_t n = 0;
        ssize_t k;
        while (n < size && (k = read(fd, buf + n, size - n)) > 0)
                n += (size_t)k;
        return n;
}

static void test_hold_patch_release(void **state)
{
        (void)state;
        char path[] = "/tmp/test_outbuf.XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        unlink(path);
        outbuf_init(&o, fd);
        outbuf_puts(&o, "before\n");
        outbuf_hold(&o);
        size_t pos = outbuf_tell(&o);
        outbuf_puts(&o, "     -1 sample\n");
        /* more than the buffer holds: it grows, nothing is written */
        for (int i = 0; i < 20000; i++)
                outbuf_puts(&o, "0123456789\n");
        assert_int_equal(lseek(fd, 0, SEEK_END), 7);
        outbuf_patch(&o, pos, "   3988", 7);
        outbuf_release(&o);
        outbuf_puts(&o, "after\n");
        assert_int_equal(outbuf_flush(&o), 0);
        size_t total = 7 + 15 + 20000 * 11 + 6;
        char *buf = malloc(total + 1);
        lseek(fd, 0, SEEK_SET);
        assert_int_equal(drain(fd, buf, total + 1), total);
        assert_memory_equal(buf, "before\n   3988 sample\n0123456789\n", 33);
        assert_memory_equal(buf + total - 6, "after\n", 6);
        free(buf);
        close(fd);
}

static void test_release_before(void **state)
{
        (void)state;
        char path[] = "/tmp/test_outbuf.XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        unlink(path);
        outbuf_init(&o, fd);
        outbuf_hold(&o);
        for (int i = 0; i < 10000; i++)
                outbuf_puts(&o, "aaaaaaaaa\n");
        size_t pos = outbuf_tell(&o);
        outbuf_puts(&o, "     -1\n");
        outbuf_release_before(&o, pos);
        assert_int_equal(lseek(fd, 0, SEEK_END), (off_t)pos);
        outbuf_patch(&o, 0, "     42", 7);
        assert_int_equal(outbuf_flush(&o), 0);
        char tail[9] = {0};
        assert_int_equal(pread(fd, tail, 8, (off_t)pos), 8);
        assert_string_equal(tail, "     42\n");
        close(fd);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_hold_patch_release),
                cmocka_unit_test(test_release_before),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
