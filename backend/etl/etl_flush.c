/* SPDX-License-Identifier: MIT */
/* etl_flush.c: the writer's writes to its file: whole writes, a flusher's batch of buffers in
   one system call rather than one a buffer, and the buffers themselves, made for its direct
   writes. */
#include "etl_flush.h"
#include "log_file.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

#define BUFS_CHUNK_ALIGN ((size_t)2 << 20) /* a huge page on x86-64 and arm64 (4 KiB pages) */

/* Under AddressSanitizer, as the heap's buffers were: a poisoned page after each buffer and a
   given-back buffer poisoned until taken again, so that a write past a buffer's end or into one
   given back is caught. */
#if defined(__SANITIZE_ADDRESS__)
#define BUFS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BUFS_ASAN 1
#endif
#endif
#ifdef BUFS_ASAN
#include <sanitizer/asan_interface.h>
#define BUFS_GUARD          ETL_FLUSH_DIRECT_ALIGN
#define bufs_poison(p, n)   ASAN_POISON_MEMORY_REGION(p, n)
#define bufs_unpoison(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define BUFS_GUARD          0u
#define bufs_poison(p, n)   ((void)(p), (void)(n))
#define bufs_unpoison(p, n) ((void)(p), (void)(n))
#endif

struct etl_flush_bufs {
        pthread_mutex_t lock;
        size_t size;
        size_t stride;      /* size rounded up to ETL_FLUSH_DIRECT_ALIGN, and BUFS_GUARD */
        size_t chunk_bytes; /* a multiple of BUFS_CHUNK_ALIGN, a stride at least */
        uint8_t **chunks;   /* owned, mapped */
        uint32_t nr_chunks, cap_chunks;
        uint8_t *next, *end; /* the newest chunk's part not cut yet */
        void *given;         /* given back, each holding the next one's address */
        bool is_huge;        /* the chunks mapped from now on advised huge pages */
};

struct etl_flush_bufs *etl_flush_bufs_new(uint32_t size)
{
        struct etl_flush_bufs *b = calloc(1, sizeof(*b));
        if (!b)
                return NULL;
        pthread_mutex_init(&b->lock, NULL);
        b->size = size;
        b->stride = (((size_t)size + ETL_FLUSH_DIRECT_ALIGN - 1) &
                     ~(size_t)(ETL_FLUSH_DIRECT_ALIGN - 1)) +
                    BUFS_GUARD;
        b->chunk_bytes = (b->stride + BUFS_CHUNK_ALIGN - 1) & ~(BUFS_CHUNK_ALIGN - 1);
        return b;
}

/* A chunk of len bytes (a multiple of BUFS_CHUNK_ALIGN) at an address aligned to it: more
   mapped, the ends given back. */
static uint8_t *chunk_map(size_t len, bool is_huge)
{
        size_t over = len + BUFS_CHUNK_ALIGN;
        uint8_t *m = mmap(NULL, over, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
                return NULL;
        uint8_t *a = (uint8_t *)(((uintptr_t)m + BUFS_CHUNK_ALIGN - 1) &
                                 ~(uintptr_t)(BUFS_CHUNK_ALIGN - 1));
        if (a > m)
                munmap(m, (size_t)(a - m));
        if (m + over > a + len)
                munmap(a + len, (size_t)(m + over - (a + len)));
        if (is_huge) /* EINVAL where the kernel has none: 4 KiB pages */
                (void)madvise(a, len, MADV_HUGEPAGE);
        return a;
}

/* Under lock: a new chunk to cut from; false when out of memory. */
static bool chunk_add(struct etl_flush_bufs *b)
{
        if (b->nr_chunks == b->cap_chunks) {
                uint32_t cap = b->cap_chunks ? 2 * b->cap_chunks : 8;
                uint8_t **chunks = realloc(b->chunks, cap * sizeof(*chunks));
                if (!chunks)
                        return false;
                b->chunks = chunks;
                b->cap_chunks = cap;
        }
        uint8_t *c = chunk_map(b->chunk_bytes, b->is_huge);
        if (!c)
                return false;
        b->chunks[b->nr_chunks++] = c;
        bufs_poison(c, b->chunk_bytes); /* each buffer made addressable as it is cut */
        b->next = c;
        b->end = c + b->chunk_bytes / b->stride * b->stride;
        return true;
}

void *etl_flush_bufs_take(struct etl_flush_bufs *b)
{
        void *buf = NULL;
        pthread_mutex_lock(&b->lock);
        if (b->given) {
                buf = b->given;
                bufs_unpoison(buf, b->size);
                memcpy(&b->given, buf, sizeof(b->given));
        } else if (b->next < b->end || chunk_add(b)) {
                buf = b->next;
                bufs_unpoison(buf, b->size);
                b->next += b->stride;
        }
        pthread_mutex_unlock(&b->lock);
        return buf;
}

void etl_flush_bufs_give(struct etl_flush_bufs *b, void *buf)
{
        if (!buf)
                return;
        pthread_mutex_lock(&b->lock);
        memcpy(buf, &b->given, sizeof(b->given));
        bufs_poison(buf, b->size);
        b->given = buf;
        pthread_mutex_unlock(&b->lock);
}

void etl_flush_bufs_free(struct etl_flush_bufs *b)
{
        if (!b)
                return;
        for (uint32_t i = 0; i < b->nr_chunks; i++) {
                bufs_unpoison(b->chunks[i], b->chunk_bytes);
                munmap(b->chunks[i], b->chunk_bytes);
        }
        free(b->chunks);
        pthread_mutex_destroy(&b->lock);
        free(b);
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
        n = n < ETL_FLUSH_BATCH_MAX ? n : ETL_FLUSH_BATCH_MAX;
        *done = 0;
        if (ahead && n)
                allocate_ahead(fd, ahead, at, at + n * size, max_bytes, writable);
        struct iovec iov[ETL_FLUSH_BATCH_MAX];
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

void etl_flush_bufs_set_huge(struct etl_flush_bufs *b, bool is_huge)
{
        pthread_mutex_lock(&b->lock);
        b->is_huge = is_huge;
        pthread_mutex_unlock(&b->lock);
}
