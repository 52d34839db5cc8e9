/* SPDX-License-Identifier: MIT */
/* log_file.c: owns where a session's .etl files may go (path-safe create, the reserved name of
   a circular file) and how much they may take (MaximumFileSize, the file system's space). */
#include "log_file.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* Splits path into its directory, opened O_PATH and held while the name is checked and
   created (the path is resolved once: a directory swapped for a symlink afterwards changes
   nothing), and a strdup'ed last component. Returns the directory's descriptor or -errno with
   err filled. */
static int dir_open(const char *path, char **base, struct etl_error *err)
{
        const char *slash = strrchr(path, '/');
        const char *name = slash ? slash + 1 : path;
        if (!*name || !strcmp(name, ".") || !strcmp(name, "..")) {
                etl_error_set(err, 0, "%s names a directory, not a file", path);
                return -EISDIR;
        }
        char *dir = slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
        *base = strdup(name);
        if (!dir || !*base) {
                free(dir);
                free(*base);
                *base = NULL;
                etl_error_set(err, 0, "out of memory");
                return -ENOMEM;
        }
        int dfd = open(dir[0] ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0) {
                int e = errno;
                etl_error_set(err, 0, "cannot create %s: its directory: %s", path, strerror(e));
                free(dir);
                free(*base);
                *base = NULL;
                return -e;
        }
        free(dir);
        return dfd;
}

static int create_at(int dfd, const char *base, const char *path, struct etl_error *err)
{
        int fd = openat(dfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) {
                int e = errno;
                if (e == EEXIST)
                        etl_error_set(err, 0, "%s exists: not overwritten (use --force)", path);
                else
                        etl_error_set(err, 0, "cannot create %s: %s", path, strerror(e));
                return -e;
        }
        return fd;
}

/* Creates path (replacing a regular file of the caller's own when is_force) and fills r. */
static int open_new(struct log_file_reserved *r, const char *path, bool is_force,
                    struct etl_error *err)
{
        *r = (struct log_file_reserved)LOG_FILE_RESERVED_INIT;
        int dfd = dir_open(path, &r->base, err);
        if (dfd < 0)
                return dfd;
        int rc = 0;
        struct stat st;
        if (is_force && fstatat(dfd, r->base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
                if (!S_ISREG(st.st_mode)) {
                        etl_error_set(err, 0, "%s is not a regular file: not replaced", path);
                        rc = S_ISDIR(st.st_mode) ? -EISDIR : -EEXIST;
                } else if (st.st_uid != geteuid()) {
                        etl_error_set(err, 0, "%s belongs to user %u: not replaced", path,
                                      (unsigned)st.st_uid);
                        rc = -EPERM;
                } else if (unlinkat(dfd, r->base, 0) < 0) {
                        rc = -errno;
                        etl_error_set(err, 0, "cannot replace %s: %s", path, strerror(-rc));
                }
        }
        int fd = rc ? rc : create_at(dfd, r->base, path, err);
        if (fd >= 0 && fstat(fd, &st) < 0) {
                int e = errno;
                etl_error_set(err, 0, "cannot stat %s: %s", path, strerror(e));
                unlinkat(dfd, r->base, 0);
                close(fd);
                fd = -e;
        }
        if (fd < 0) {
                close(dfd);
                free(r->base);
                r->base = NULL;
                return fd;
        }
        r->fd = fd;
        r->dir_fd = dfd;
        r->dev = st.st_dev;
        r->ino = st.st_ino;
        return 0;
}

/* The file system's space for users (f_bavail) and what a write may take of it (less the spare
   blocks), UINT64_MAX both when the file system does not say (some FUSE ones give no sizes). */
static void space_of(int fd, uint64_t *avail, uint64_t *writable)
{
        struct statvfs sv;
        *avail = *writable = UINT64_MAX;
        if (fstatvfs(fd, &sv) < 0 || !sv.f_blocks || !sv.f_frsize)
                return;
        *avail = (uint64_t)sv.f_bavail * sv.f_frsize;
        uint64_t spare = (uint64_t)LOG_FILE_SPARE_BLOCKS * sv.f_frsize;
        *writable = *avail > spare ? *avail - spare : 0;
}

uint64_t log_file_space(int fd, uint64_t *avail_bytes)
{
        uint64_t avail, writable;
        space_of(fd, &avail, &writable);
        if (avail_bytes)
                *avail_bytes = avail;
        return writable;
}

enum log_file_full log_file_room(int fd, uint64_t end_bytes, uint64_t write_bytes,
                                 uint64_t max_bytes, uint64_t *avail_bytes)
{
        uint64_t writable = log_file_space(fd, avail_bytes);
        if (max_bytes && end_bytes > max_bytes)
                return LOG_FILE_FULL_SIZE;
        return write_bytes > writable ? LOG_FILE_FULL_DISK : LOG_FILE_ROOM;
}

void log_file_full_text(char *buf, size_t size, enum log_file_full full, const char *path,
                        uint64_t max_bytes, uint64_t avail_bytes)
{
        if (full == LOG_FILE_FULL_SIZE) {
                if (max_bytes % (1 << 20) == 0)
                        snprintf(buf, size,
                                 "the log file %s reached its maximum size, %" PRIu64
                                 " MB (MaximumFileSize)",
                                 path, max_bytes >> 20);
                else
                        snprintf(buf, size,
                                 "the log file %s reached its maximum size, %" PRIu64
                                 " KB (MaximumFileSize)",
                                 path, max_bytes >> 10);
        } else if (full == LOG_FILE_FULL_DISK) {
                snprintf(buf, size,
                         "the file system of %s has %" PRIu64
                         " KB left for users: stopped before the blocks reserved for root",
                         path, avail_bytes >> 10);
        } else {
                snprintf(buf, size, "the log file %s takes more", path);
        }
}

int log_file_reserve(struct log_file_reserved *r, const char *path, bool is_force,
                     struct etl_error *err)
{
        return open_new(r, path, is_force, err);
}

/* Whether st is the reserved file. */
static int same_file(const struct log_file_reserved *r, int stat_rc, const struct stat *st)
{
        if (r->fd < 0 || stat_rc < 0)
                return -ENOENT;
        return st->st_dev == r->dev && st->st_ino == r->ino ? 0 : -ESTALE;
}

int log_file_reserved_check(const struct log_file_reserved *r, const char *path)
{
        struct stat st;
        return same_file(r, lstat(path, &st), &st);
}

void log_file_unreserve(struct log_file_reserved *r)
{
        /* in the directory held since the start: a path through a symlink swapped in since
           could name another's file */
        struct stat st;
        if (r->fd >= 0 &&
            same_file(r, fstatat(r->dir_fd, r->base, &st, AT_SYMLINK_NOFOLLOW), &st) == 0)
                unlinkat(r->dir_fd, r->base, 0);
        log_file_release(r);
}

void log_file_release(struct log_file_reserved *r)
{
        if (r->fd >= 0)
                close(r->fd);
        if (r->dir_fd >= 0)
                close(r->dir_fd);
        free(r->base);
        *r = (struct log_file_reserved)LOG_FILE_RESERVED_INIT;
}
