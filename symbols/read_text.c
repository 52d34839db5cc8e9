/* SPDX-License-Identifier: MIT */
/* read_text.c: owns reading a whole text file into memory, bounded, and the hex numbers in it. */
#include "read_text.h"
#include "util/xalloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int read_text_fd(int fd, const char *path, size_t first_chunk, size_t max, char **data,
                 size_t *size, char *msg, size_t msg_size, uint64_t *offset)
{
        size_t cap = first_chunk ? first_chunk : 65536, n = 0;
        char *buf = xmalloc(cap);
        for (;;) {
                if (n == cap) {
                        if (cap >= max) {
                                free(buf);
                                close(fd);
                                snprintf(msg, msg_size, "%s is larger than %zu bytes", path, max);
                                *offset = 0;
                                return -EFBIG;
                        }
                        cap *= 2;
                        buf = xrealloc(buf, cap);
                }
                ssize_t got = read(fd, buf + n, cap - n);
                if (got < 0 && errno == EINTR)
                        continue;
                if (got < 0) {
                        int e = errno;
                        free(buf);
                        close(fd);
                        snprintf(msg, msg_size, "reading %s: %s", path, strerror(e));
                        *offset = n;
                        return -e;
                }
                if (got == 0)
                        break;
                n += (size_t)got;
        }
        close(fd);
        *data = buf;
        *size = n;
        return 0;
}

static int hex_value(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

bool text_parse_hex(const char *s, size_t n, size_t *i, uint64_t *out)
{
        size_t p = *i;
        if (n - p >= 2 && s[p] == '0' && (s[p + 1] == 'x' || s[p + 1] == 'X'))
                p += 2;
        uint64_t v = 0;
        size_t nr_digits = 0;
        for (; p < n && hex_value(s[p]) >= 0; p++) {
                if (++nr_digits > 16)
                        return false;
                v = v << 4 | (uint64_t)hex_value(s[p]);
        }
        if (!nr_digits)
                return false;
        *i = p;
        *out = v;
        return true;
}
