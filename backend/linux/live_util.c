/* SPDX-License-Identifier: MIT */
/* live_util.c: the small helpers the Linux source's files share: error messages,
   perf_event_open, small files. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "live_int.h"
#include "util/xalloc.h"

void live_set_err(struct etl_error *err, const char *fmt, ...)

        __attribute__((format(printf, 2, 3)));
void live_set_err(struct etl_error *err, const char *fmt, ...)
{
        va_list ap;
        if (!err)
                return;
        err->offset = 0;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        va_end(ap);
}

const char *live_errno_name(int e)
{
        switch (e) {
        case EACCES: return "EACCES";
        case EPERM: return "EPERM";
        case ENOENT: return "ENOENT";
        case EOPNOTSUPP: return "EOPNOTSUPP";
        case EINVAL: return "EINVAL";
        case EMFILE: return "EMFILE";
        case ENOMEM: return "ENOMEM";
        case ENODEV: return "ENODEV";
        case EBUSY: return "EBUSY";
        case E2BIG: return "E2BIG";
        case EOVERFLOW: return "EOVERFLOW";
        case ESRCH: return "ESRCH";
        default: return "an error";
        }
}

int live_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
                         unsigned long flags)
{
        long fd = syscall(__NR_perf_event_open, attr, pid, cpu, group_fd, flags);
        return fd < 0 ? -errno : (int)fd;
}

/* Reads a small file into buf (NUL-terminated); returns its length or -errno. */
ssize_t live_read_small(const char *path, char *buf, size_t size)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        size_t n = 0;
        while (n + 1 < size) {
                ssize_t r = read(fd, buf + n, size - 1 - n);
                if (r < 0) {
                        if (errno == EINTR)
                                continue;
                        int e = errno;
                        close(fd);
                        return -e;
                }
                if (r == 0)
                        break;
                n += (size_t)r;
        }
        buf[n] = 0;
        close(fd);
        return (ssize_t)n;
}

int live_read_int_file(const char *path, int *value)
{
        char buf[64];
        if (live_read_small(path, buf, sizeof(buf)) <= 0)
                return -ENOENT;
        *value = atoi(buf);
        return 0;
}
