/* SPDX-License-Identifier: MIT */
/* etl_open.c: owns opening a trace by its path: the file mapped and read in place, or, a zip
   of one (PerfView's .etl.zip), its .etl inflated (etl_zip.c). */
#include "etl_reader.h"
#include "etl_zip.h"

#include "util/err.h"
#include "util/in_file.h"

#include <errno.h>
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
                rc = etl_zip_reader_open(&r, map, size, err);
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
