/* SPDX-License-Identifier: MIT */
/* out_file.h: every output file etwtop creates (exports, --record, --merge, saved windows,
   --stop -d, --flush -o) is made here, so that an existing name is replaced only when it is a
   regular file of the caller's and --force says so. etwtop runs as root: a symlink, FIFO,
   device, socket or directory at the name (/dev/null, /dev/stdout) is refused with a message,
   never opened for writing, removed or replaced. */
#ifndef ETWTOP_UTIL_OUT_FILE_H
#define ETWTOP_UTIL_OUT_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum {
        OUT_FILE_FORCE = 1u << 0,  /* a regular file of the caller's may be replaced */
        OUT_FILE_STDOUT = 1u << 1, /* "-" is standard output */
};

/* An output being written. */
struct out_file {
        int fd;         /* where to write (1 for standard output); -1 when closed */
        char *path;     /* owned: the name asked for */
        char *tmp;      /* owned: the temporary name in path's directory when replacing; NULL
                           when path was created itself or is standard output */
        bool is_stdout; /* fd is standard output: never closed or removed here */
        bool is_placed; /* path names our file now (created at once, or tmp renamed) */
        dev_t dev;      /* the file found at path when replacing */
        ino_t ino;
        dev_t own_dev; /* the file written (fd's) */
        ino_t own_ino;
};

/* Says whether path may be written: 0 when nothing is there, or when a regular file of the
   caller's is and flags has OUT_FILE_FORCE; else -EEXIST (something is there and no --force),
   or with --force -EPERM (another user's file) or -EINVAL (not a regular file: symlink, FIFO,
   device, socket, directory), with err saying which and that nothing was replaced. The name is
   never followed or opened for reading or writing (O_PATH). */
int out_file_check(const char *path, unsigned flags, char *err, size_t err_size);

/* Opens f for writing to path after out_file_check: a name that is free is created at once
   (0600, O_EXCL, O_NOFOLLOW); a file being replaced is written under a temporary name in the
   same directory and renamed over it by out_file_commit, so that a failed
   write leaves it whole. "-" with OUT_FILE_STDOUT writes to standard output. Returns 0 or -errno
   with err filled. */
int out_file_open(struct out_file *f, const char *path, unsigned flags, char *err, size_t err_size);

/* Closes the file and puts it at its name (renaming the temporary over the regular file of the
   caller's found there, after checking it is still that file). 0 or -errno with err filled (the
   temporary removed); f is closed either way. */
int out_file_commit(struct out_file *f, char *err, size_t err_size);

/* Closes f and removes what it wrote (the temporary, or the name it created, while that is still
   our file). NULL-safe on a closed f. */
void out_file_abort(struct out_file *f);

/* Removes a regular file of the caller's at path so that an API that creates its files with
   O_EXCL can write there: 0 when nothing is (or is any longer) at path; the out_file_check
   errors otherwise, nothing removed. */
int out_file_make_room(const char *path, unsigned flags, char *err, size_t err_size);

#endif
