/* SPDX-License-Identifier: MIT */
/* write_all.h: the tree's one loop for writing a buffer whole to a file descriptor (the
   kernel's symbols' cache files, the inflated DWARF's). */
#ifndef ETWTOP_UTIL_WRITE_ALL_H
#define ETWTOP_UTIL_WRITE_ALL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <unistd.h>

/* Writes p[0..n) to fd whole, through short writes and EINTR; false on an error. */
static inline bool write_all(int fd, const void *p, size_t n)
{
        for (size_t o = 0; o < n;) {
                ssize_t w = write(fd, (const char *)p + o, n - o);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0)
                        return false;
                o += (size_t)w;
        }
        return true;
}

#endif
