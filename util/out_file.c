/* SPDX-License-Identifier: MIT */
/* out_file.c: the one checked way etwtop creates or replaces an output file (out_file.h). */
#include "util/out_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind_of(mode_t mode)
{
        switch (mode & S_IFMT) {
        case S_IFLNK: return "a symbolic link";
        case S_IFIFO: return "a FIFO";
        case S_IFCHR: return "a character device";
        case S_IFBLK: return "a block device";
        case S_IFSOCK: return "a socket";
        case S_IFDIR: return "a directory";
        default: return "not a regular file";
        }
}

static bool is_stdout_name(const char *path, unsigned flags)
{
        return (flags & OUT_FILE_STDOUT) && strcmp(path, "-") == 0;
}

/* What is at path, never followed nor opened: 0 and *st, -ENOENT, or -errno. */
static int look(const char *path, struct stat *st)
{
        int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        int rc = fstat(fd, st) < 0 ? -errno : 0;
        close(fd);
        return rc;
}

/* out_file_check, and 1 with *st when a replaceable file is there. */
static int check(const char *path, unsigned flags, struct stat *st, char *err, size_t err_size)
{
        if (is_stdout_name(path, flags))
                return 0;
        int rc = look(path, st);
        if (rc == -ENOENT)
                return 0;
        if (rc < 0) {
                snprintf(err, err_size, "%s: %s", path, strerror(-rc));
                return rc;
        }
        /* without --force, whatever is there is -EEXIST (as O_EXCL says), with its reason */
        bool is_force = flags & OUT_FILE_FORCE;
        if (!S_ISREG(st->st_mode)) {
                snprintf(err, err_size, "%s is %s, not a regular file: not replaced", path,
                         kind_of(st->st_mode));
                return is_force ? -EINVAL : -EEXIST;
        }
        if (st->st_uid != geteuid()) {
                snprintf(err, err_size, "%s belongs to uid %u, not to this user: not replaced",
                         path, (unsigned)st->st_uid);
                return is_force ? -EPERM : -EEXIST;
        }
        if (!(flags & OUT_FILE_FORCE)) {
                snprintf(err, err_size, "%s exists: not overwritten (use --force)", path);
                return -EEXIST;
        }
        return 1;
}

int out_file_check(const char *path, unsigned flags, char *err, size_t err_size)
{
        struct stat st;
        int rc = check(path, flags, &st, err, err_size);
        return rc < 0 ? rc : 0;
}

/* path's directory and a hidden temporary name in it: ".NAME.XXXXXX". */
static char *temp_name(const char *path)
{
        const char *slash = strrchr(path, '/');
        size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
        const char *base = path + dir_len;
        size_t n = strlen(path) + 16;
        char *t = malloc(n);
        if (!t)
                return NULL;
        snprintf(t, n, "%.*s.%s.XXXXXX", (int)dir_len, path, base);
        return t;
}

int out_file_open(struct out_file *f, const char *path, unsigned flags, char *err, size_t err_size)
{
        memset(f, 0, sizeof(*f));
        f->fd = -1;
        if (is_stdout_name(path, flags)) {
                f->fd = STDOUT_FILENO;
                f->is_stdout = true;
                f->is_placed = true;
                return 0;
        }
        struct stat st;
        int rc = check(path, flags, &st, err, err_size);
        if (rc < 0)
                return rc;
        f->path = strdup(path);
        if (!f->path)
                return -ENOMEM;
        if (rc == 0) {
                /* a free name: created itself; O_EXCL opens nothing that appeared there since */
                f->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
                if (f->fd < 0) {
                        rc = -errno;
                        if (rc == -EEXIST)
                                snprintf(err, err_size, "%s exists: not overwritten (use --force)",
                                         path);
                        else
                                snprintf(err, err_size, "cannot create %s: %s", path,
                                         strerror(-rc));
                        goto fail;
                }
                f->is_placed = true;
        } else {
                f->dev = st.st_dev;
                f->ino = st.st_ino;
                f->tmp = temp_name(path);
                if (!f->tmp) {
                        rc = -ENOMEM;
                        goto fail;
                }
                f->fd = mkostemp(f->tmp, O_CLOEXEC);
                if (f->fd < 0) {
                        rc = -errno;
                        snprintf(err, err_size, "cannot replace %s: a temporary file beside it: %s",
                                 path, strerror(-rc));
                        free(f->tmp);
                        f->tmp = NULL;
                        goto fail;
                }
        }
        struct stat own;
        if (fstat(f->fd, &own) == 0) {
                f->own_dev = own.st_dev;
                f->own_ino = own.st_ino;
        }
        return 0;
fail:
        out_file_abort(f);
        return rc;
}

/* Puts the file being written at its name now (renaming the temporary over the regular file of
   the caller's found there, after checking it is still that file) and keeps fd open: for a file
   that is read while it grows (--record). 0 or -errno with err filled. */
static int out_file_place(struct out_file *f, char *err, size_t err_size)
{
        if (f->is_placed)
                return 0;
        /* still the regular file of ours that was checked, or gone */
        struct stat st;
        int rc = look(f->path, &st);
        if (rc == 0 && (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_dev != f->dev ||
                        st.st_ino != f->ino)) {
                snprintf(err, err_size, "%s changed while it was written: not replaced", f->path);
                return -EEXIST;
        }
        if (rc == -ENOENT) {
                /* never over what appears there meanwhile */
                if (link(f->tmp, f->path) < 0) {
                        rc = -errno;
                        snprintf(err, err_size, "cannot create %s: %s", f->path, strerror(-rc));
                        return rc;
                }
                unlink(f->tmp);
        } else if (rc < 0 || rename(f->tmp, f->path) < 0) {
                rc = rc < 0 ? rc : -errno;
                snprintf(err, err_size, "cannot replace %s: %s", f->path, strerror(-rc));
                return rc;
        }
        free(f->tmp);
        f->tmp = NULL;
        f->is_placed = true;
        return 0;
}

int out_file_commit(struct out_file *f, char *err, size_t err_size)
{
        int rc = 0;
        if (f->is_stdout) {
                f->fd = -1;
                goto out;
        }
        if (f->fd >= 0 && close(f->fd) < 0) {
                rc = -errno;
                snprintf(err, err_size, "writing %s: %s", f->path, strerror(-rc));
        }
        f->fd = -1;
        if (rc == 0)
                rc = out_file_place(f, err, err_size);
        if (rc < 0) {
                out_file_abort(f);
                return rc;
        }
out:
        free(f->path);
        f->path = NULL;
        return rc;
}

void out_file_abort(struct out_file *f)
{
        if (f->fd >= 0 && !f->is_stdout)
                close(f->fd);
        f->fd = -1;
        if (f->tmp) {
                unlink(f->tmp);
                free(f->tmp);
                f->tmp = NULL;
        } else if (f->path && f->is_placed && !f->is_stdout) {
                struct stat st;
                if (look(f->path, &st) == 0 && st.st_dev == f->own_dev && st.st_ino == f->own_ino)
                        unlink(f->path);
        }
        free(f->path);
        f->path = NULL;
}

int out_file_make_room(const char *path, unsigned flags, char *err, size_t err_size)
{
        struct stat st;
        int rc = check(path, flags & ~(unsigned)OUT_FILE_STDOUT, &st, err, err_size);
        if (rc <= 0)
                return rc;
        if (unlink(path) < 0 && errno != ENOENT) {
                rc = -errno;
                snprintf(err, err_size, "cannot replace %s: %s", path, strerror(-rc));
                return rc;
        }
        return 0;
}
