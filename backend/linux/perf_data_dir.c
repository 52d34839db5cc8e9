/* SPDX-License-Identifier: MIT */
/* perf_data_dir.c: a perf.data directory (perf record --threads): the file "data" holds the
   header, the attrs, the features (HEADER_DIR_FORMAT among them) and the records of perf's main
   thread; each "data.N" holds the records of one recording thread's rings, with no header. The
   reader reads data's records and then each data.N's in turn (perf_data.c); the conversion sorts
   them all by time, as perf report's ordered events do. Every file is opened below the
   directory without following a symbolic link, and only a regular file is read. */
#include "perf_data_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/xalloc.h"

#define MAX_PARTS 4096u /* perf writes one a recording thread: at most one a CPU */

/* The regular file name below the directory dfd, mapped read-only: 0 with *map and *size (a
   file of no bytes: map NULL), or -errno (-EINVAL: not a regular file, or a symbolic link). */
static int map_below(int dfd, const char *name, void **map, size_t *size)
{
        *map = NULL;
        *size = 0;
        /* looked at before it is opened: a FIFO or a device there is never opened */
        struct stat st;
        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return errno == ELOOP ? -EINVAL : -errno;
        int rc = 0;
        if (fstat(fd, &st) < 0)
                rc = -errno;
        else if (!S_ISREG(st.st_mode))
                rc = -EINVAL;
        else if (st.st_size > 0) {
                void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd,
                               0);
                if (m == MAP_FAILED)
                        rc = -errno;
                else {
                        *map = m;
                        *size = (size_t)st.st_size;
                }
        }
        close(fd);
        return rc;
}

static const char *why(int rc)
{
        return rc == -EINVAL ? "not a regular file" : strerror(-rc);
}

/* The number N of a part's name "data.N" (decimal, no sign, no leading zero but "0"), or -1. */
static long part_number(const char *name)
{
        if (strncmp(name, "data.", 5) != 0)
                return -1;
        const char *s = name + 5;
        size_t n = strlen(s);
        if (n == 0 || n > 6 || (s[0] == '0' && n > 1))
                return -1;
        long v = 0;
        for (size_t i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -1;
                v = v * 10 + (s[i] - '0');
        }
        return v;
}

static int cmp_part(const void *a, const void *b)
{
        const struct perf_data_part *x = a, *y = b;
        return x->number < y->number ? -1 : x->number > y->number;
}

bool perf_data_path_is_perf_data(const char *path)
{
        int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return false;
        struct stat st;
        bool is = false;
        if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
                struct stat ds;
                int f = fstatat(fd, "data", &ds, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(ds.st_mode)
                                ? openat(fd, "data",
                                         O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
                                : -1;
                close(fd);
                fd = f;
                if (fd < 0 || fstat(fd, &st) < 0)
                        st.st_mode = 0;
        }
        uint8_t magic[8];
        if (fd >= 0 && S_ISREG(st.st_mode) && pread(fd, magic, sizeof(magic), 0) == 8)
                is = perf_data_is_perf_data(magic, sizeof(magic));
        if (fd >= 0)
                close(fd);
        return is;
}

int perf_data_dir_open(int dfd, const char *path, void **map, size_t *size,
                       struct perf_data_part **parts, uint32_t *nr_parts, struct err_msg *err)
{
        *parts = NULL;
        *nr_parts = 0;
        int rc = map_below(dfd, "data", map, size);
        if (rc < 0) {
                perf_data_error_set(err, 0,
                                    "%s is a directory, and its file data (a perf.data "
                                    "directory's header) %s",
                                    path, rc == -ENOENT ? "is missing" : why(rc));
                return rc == -ENOENT ? -EINVAL : rc;
        }
        int d = dup(dfd);
        DIR *dir = d >= 0 ? fdopendir(d) : NULL;
        if (!dir) {
                rc = -errno;
                if (d >= 0)
                        close(d);
                perf_data_error_set(err, 0, "%s: %s", path, strerror(-rc));
                goto fail;
        }
        rewinddir(dir);
        uint32_t cap = 0;
        struct dirent *de;
        while ((de = readdir(dir)) != NULL) {
                long number = part_number(de->d_name);
                if (number < 0)
                        continue;
                if (*nr_parts == MAX_PARTS) {
                        perf_data_error_set(err, 0, "%s: more than %u data.N files", path,
                                            MAX_PARTS);
                        rc = -E2BIG;
                        break;
                }
                struct perf_data_part part = {.number = (uint32_t)number};
                /* its name again (part_number took only the canonical one) */
                snprintf(part.name, sizeof(part.name), "data.%u", part.number);
                void *m = NULL;
                size_t n = 0;
                rc = map_below(dfd, part.name, &m, &n);
                if (rc < 0) {
                        perf_data_error_set(err, 0, "%s/%s: %s", path, part.name, why(rc));
                        break;
                }
                part.map = m;
                part.size = n;
                if (*nr_parts == cap) {
                        cap = cap ? cap * 2 : 16;
                        *parts = xrealloc(*parts, cap * sizeof(**parts));
                }
                (*parts)[(*nr_parts)++] = part;
        }
        closedir(dir);
        if (rc < 0)
                goto fail;
        if (*nr_parts > 1)
                qsort(*parts, *nr_parts, sizeof(**parts), cmp_part);
        return 0;
fail:
        perf_data_dir_free(*parts, *nr_parts);
        *parts = NULL;
        *nr_parts = 0;
        if (*map)
                munmap(*map, *size);
        *map = NULL;
        *size = 0;
        return rc;
}

void perf_data_dir_free(struct perf_data_part *parts, uint32_t nr)
{
        for (uint32_t i = 0; i < nr; i++)
                if (parts[i].map)
                        munmap(parts[i].map, parts[i].size);
        free(parts);
}
