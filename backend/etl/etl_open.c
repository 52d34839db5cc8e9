/* SPDX-License-Identifier: MIT */
/* etl_open.c: owns opening a trace by its path: the file mapped and read in place, or, a zip
   of one (PerfView's .etl.zip), its .etl inflated (etl_zip.c), the last one kept for the next
   open of the same archive. */
#include "etl_reader.h"
#include "etl_zip.h"

#include "util/err.h"
#include "util/in_file.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct mapping {
        void *p;
        size_t size;
};

/* etl_reader_set_release's callback: the reader over the mapping closed. */
static void unmap(void *ctx)
{
        struct mapping *m = ctx;
        munmap(m->p, m->size);
        free(m);
}

/* The last zip's .etl inflated, kept for the next open of the same archive (the same device,
   inode, size and modification time): a replay of a Windows trace opens it twice (the feed's
   pass ahead over its stack keys, then the reading, both open at once), and each open inflated
   the entry again and held its own copy. */
struct inflated {
        uint8_t *etl; /* owned: n bytes */
        size_t n;
        char name[128]; /* the entry's, printable */
        uint32_t refs;  /* the readers over it, and kept.last's */
        dev_t dev;
        ino_t ino;
        off_t size;
        struct timespec mtime;
};

static struct {
        pthread_mutex_t lock;
        struct inflated *last;
        uint64_t nr_inflated;
} kept = {PTHREAD_MUTEX_INITIALIZER, NULL, 0};

static void inflated_unref_locked(struct inflated *in)
{
        if (--in->refs > 0)
                return;
        free(in->etl);
        free(in);
}

/* etl_reader_set_release's callback: a reader over the inflated entry closed. */
static void inflated_release(void *ctx)
{
        pthread_mutex_lock(&kept.lock);
        inflated_unref_locked(ctx);
        pthread_mutex_unlock(&kept.lock);
}

uint64_t etl_open_nr_inflated(void)
{
        pthread_mutex_lock(&kept.lock);
        uint64_t n = kept.nr_inflated;
        pthread_mutex_unlock(&kept.lock);
        return n;
}

/* A reader over the .etl of the zip archive zip[0..size) (st: its file's stat). */
static int open_zip(struct etl_reader **out, const uint8_t *zip, size_t size, const struct stat *st,
                    struct etl_error *err)
{
        pthread_mutex_lock(&kept.lock);
        struct inflated *in = kept.last;
        if (in && in->dev == st->st_dev && in->ino == st->st_ino && in->size == st->st_size &&
            in->mtime.tv_sec == st->st_mtim.tv_sec && in->mtime.tv_nsec == st->st_mtim.tv_nsec)
                in->refs++;
        else
                in = NULL;
        pthread_mutex_unlock(&kept.lock);
        if (!in) {
                in = calloc(1, sizeof(*in));
                if (!in) {
                        etl_error_set(err, 0, "out of memory");
                        return -ENOMEM;
                }
                int rc = etl_zip_extract(zip, size, &in->etl, &in->n, in->name, sizeof(in->name),
                                         err);
                if (rc < 0) {
                        free(in);
                        return rc;
                }
                in->refs = 2; /* the reader's and kept.last's */
                in->dev = st->st_dev;
                in->ino = st->st_ino;
                in->size = st->st_size;
                in->mtime = st->st_mtim;
                pthread_mutex_lock(&kept.lock);
                if (kept.last)
                        inflated_unref_locked(kept.last);
                kept.last = in;
                kept.nr_inflated++;
                pthread_mutex_unlock(&kept.lock);
        }
        int rc = etl_zip_entry_open(out, in->etl, in->n, in->name, err);
        if (rc < 0) {
                inflated_release(in);
                return rc;
        }
        etl_reader_set_release(*out, inflated_release, in);
        return 0;
}

/* err's message after "path: ". */
static void prefix_path(struct etl_error *err, const char *path)
{
        char prefix[140];
        snprintf(prefix, sizeof(prefix), "%.128s: ", path);
        err_prefix(err, prefix, (int)sizeof(prefix));
}

int etl_reader_open_file(struct etl_reader **out, const char *path, struct etl_error *err)
{
        *out = NULL;
        if (err)
                memset(err, 0, sizeof(*err));
        /* a regular file only: a FIFO or a device at the name is neither waited on nor read */
        struct stat st;
        int fd = in_file_open(path, 0, &st);
        if (fd < 0) {
                etl_error_set(err, 0, "%s: %s", path,
                              fd == -EINVAL ? "not a regular file" : strerror(-fd));
                return fd;
        }
        if (st.st_size == 0) {
                etl_error_set(err, 0, "%s: the file is empty", path);
                close(fd);
                return -EINVAL;
        }
        size_t size = (size_t)st.st_size;
        void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        close(fd);
        if (map == MAP_FAILED) {
                int e = errno;
                etl_error_set(err, 0, "%s: cannot map: %s", path, strerror(e));
                return -e;
        }
        madvise(map, size, MADV_SEQUENTIAL);
        struct etl_reader *r = NULL;
        /* a zip of a trace: its .etl inflated, the archive unmapped at once */
        bool is_zip = etl_zip_is_zip(map, size);
        struct mapping *m = NULL;
        int rc;
        if (is_zip) {
                rc = open_zip(&r, map, size, &st, err);
        } else if (!(m = malloc(sizeof(*m)))) {
                etl_error_set(err, 0, "out of memory");
                rc = -ENOMEM;
        } else {
                rc = etl_reader_open_mem(&r, map, size, err);
        }
        if (rc < 0 || is_zip)
                munmap(map, size);
        if (rc < 0) {
                free(m);
                prefix_path(err, path);
                return rc;
        }
        if (m) {
                *m = (struct mapping){map, size};
                etl_reader_set_release(r, unmap, m);
        }
        *out = r;
        return 0;
}
