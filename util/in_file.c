/* SPDX-License-Identifier: MIT */
/* in_file.c: the checked open of a regular file named by untrusted data (in_file.h). */
#include "util/in_file.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int in_file_open(const char *path, int extra_flags, struct stat *st)
{
        int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | extra_flags);
        if (fd < 0)
                return -errno;
        struct stat own;
        if (!st)
                st = &own;
        if (fstat(fd, st) < 0) {
                int e = errno;
                close(fd);
                return -e;
        }
        if (!S_ISREG(st->st_mode)) {
                close(fd);
                return -EINVAL;
        }
        /* a regular file's reads never block: the flag goes, for whoever reads it after */
        int fl = fcntl(fd, F_GETFL);
        if (fl >= 0)
                fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
        return fd;
}
