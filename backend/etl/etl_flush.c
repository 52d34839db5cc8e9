/* SPDX-License-Identifier: MIT */
/* etl_flush.c: the writer's writes to its file: whole writes, and a flusher's batch of buffers
   in one system call rather than one a buffer. */
#include "etl_flush.h"
#include "log_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

int etl_write_all(int fd, const uint8_t *p, size_t n, off_t off)
{
        while (n) {
                ssize_t k = pwrite(fd, p, n, off);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        return -EIO;
                p += k;
                n -= (size_t)k;
                off += k;
        }
        return 0;
}

#define BATCH_MAX 64u

/* Allocates the file's space from the end of what it holds (at) to a step past end, when the
   file system has room for that and a step more. */
static void allocate_ahead(int fd, struct etl_flush_ahead *a, uint64_t at, uint64_t end,
                           uint64_t max_bytes, uint64_t writable)
{
        if (a->error || end <= a->end)
                return;
        uint64_t from = a->end > at ? a->end : at;
        uint64_t to = end + ETL_FLUSH_AHEAD_STEP;
        if (max_bytes && to > max_bytes)
                to = max_bytes;
        if (to <= from || writable < to - from + ETL_FLUSH_AHEAD_STEP)
                return;
        if (fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)from, (off_t)(to - from)) < 0) {
                a->error = errno ? errno : EIO; /* EOPNOTSUPP, ENOSPC: written as without */
                return;
        }
        a->end = to;
}

void *etl_flush_buffer_alloc(size_t size)
{
        void *p = NULL;
        return posix_memalign(&p, ETL_FLUSH_DIRECT_ALIGN, size) == 0 ? p : NULL;
}

static void direct_close(struct etl_flush_ahead *a)
{
        if (a->direct_fd1)
                close(a->direct_fd1 - 1);
        a->direct_fd1 = 0;
}

/* The O_DIRECT descriptor of fd's file, opened at the first call; -1 when the file system
   refuses O_DIRECT (then never asked again for this file). It is opened through
   /proc/self/fd: the same open file, never a name that may have changed since, and checked to
   be the same inode. A descriptor of another file (fd closed and its number given to another
   since) is closed first. */
static int direct_fd(int fd, struct etl_flush_ahead *a)
{
        struct stat st;
        if (fstat(fd, &st) < 0)
                return -1;
        if (a->direct_fd1 && a->direct_dev == st.st_dev && a->direct_ino == st.st_ino)
                return a->direct_fd1 - 1;
        if (a->direct_fd1) {
                direct_close(a);
                a->direct_error = 0; /* another file: asked again */
        }
        if (a->direct_error || !S_ISREG(st.st_mode))
                return -1;
        char path[40];
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        int d = open(path, O_WRONLY | O_DIRECT | O_CLOEXEC);
        struct stat dst;
        if (d >= 0 && (fstat(d, &dst) < 0 || dst.st_dev != st.st_dev || dst.st_ino != st.st_ino)) {
                close(d);
                d = -1;
                errno = ESTALE;
        }
        if (d < 0) {
                a->direct_error = errno ? errno : EINVAL; /* EINVAL: no O_DIRECT here */
                return -1;
        }
        a->direct_fd1 = d + 1;
        a->direct_dev = st.st_dev;
        a->direct_ino = st.st_ino;
        return d;
}

/* Whether the batch can go through O_DIRECT: every buffer, the size and the place aligned. */
static bool batch_is_aligned(uint8_t *const *bufs, uint32_t n, uint32_t size, uint64_t at)
{
        if (size % ETL_FLUSH_DIRECT_ALIGN || at % ETL_FLUSH_DIRECT_ALIGN)
                return false;
        for (uint32_t i = 0; i < n; i++)
                if ((uintptr_t)bufs[i] % ETL_FLUSH_DIRECT_ALIGN)
                        return false;
        return true;
}

int etl_flush_release_ahead(int fd, struct etl_flush_ahead *ahead)
{
        struct stat st;
        if (ahead)
                direct_close(ahead);
        if (!ahead || !ahead->end)
                return 0;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (ahead->end <= (uint64_t)st.st_size)
                return 0;
        return ftruncate(fd, st.st_size) < 0 ? -errno : 0;
}

int etl_flush_batch(int fd, uint8_t *const *bufs, uint32_t k, uint32_t size, uint64_t first,
                    uint64_t max_bytes, struct etl_flush_ahead *ahead, uint32_t *done, int *full,
                    uint64_t *avail)
{
        /* the buffers that fit: those below max_bytes, and those the file system's space holds
           (log_file_room asked for each in turn says the same), the space allocated ahead of
           the file's end as free as it was before */
        uint64_t at = first * size;
        uint64_t writable = log_file_space(fd, avail);
        uint64_t held = ahead && ahead->end > at ? ahead->end - at : 0;
        uint64_t n = (writable > UINT64_MAX - held ? UINT64_MAX : writable + held) / size;
        uint64_t by_size = !max_bytes                 ? UINT64_MAX
                           : max_bytes / size > first ? max_bytes / size - first
                                                      : 0;
        *full = LOG_FILE_ROOM;
        if (by_size <= n && by_size < k)
                *full = LOG_FILE_FULL_SIZE;
        else if (n < k)
                *full = LOG_FILE_FULL_DISK;
        n = n < by_size ? n : by_size;
        n = n < k ? n : k;
        n = n < BATCH_MAX ? n : BATCH_MAX;
        *done = 0;
        if (ahead && n)
                allocate_ahead(fd, ahead, at, at + n * size, max_bytes, writable);
        struct iovec iov[BATCH_MAX];
        for (uint32_t i = 0; i < n; i++)
                iov[i] = (struct iovec){bufs[i], size};
        off_t off = (off_t)at;
        int wfd = ahead && n && !ahead->is_behind && batch_is_aligned(bufs, n, size, at)
                          ? direct_fd(fd, ahead)
                          : -1;
        if (wfd < 0)
                wfd = fd;
        for (uint32_t i = 0; i < n;) {
                ssize_t w = pwritev(wfd, iov + i, (int)(n - i), off);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w < 0 && errno == EINVAL && wfd != fd) {
                        /* an alignment this disk wants beyond a page: the page cache's way,
                           for this batch and the file's next */
                        ahead->direct_error = EINVAL;
                        direct_close(ahead);
                        wfd = fd;
                        continue;
                }
                if (w <= 0) {
                        *done = i; /* the whole buffers before it are in the file */
                        return w < 0 ? -errno : -EIO;
                }
                off += w;
                if (wfd != fd && (uint64_t)w % ETL_FLUSH_DIRECT_ALIGN)
                        wfd = fd; /* a short write mid-block: the rest through the page cache */
                for (; w > 0 && (size_t)w >= iov[i].iov_len; i++)
                        w -= (ssize_t)iov[i].iov_len;
                if (w > 0) {
                        iov[i].iov_base = (uint8_t *)iov[i].iov_base + w;
                        iov[i].iov_len -= (size_t)w;
                }
        }
        *done = (uint32_t)n;
        return 0;
}
