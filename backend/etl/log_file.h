/* SPDX-License-Identifier: MIT */
/* log_file.h: where a session's .etl files may go and how much they may take: files created
   0600 without following a symlink, a name reserved at start and written through the same
   descriptor at STOP, MaximumFileSize and the file system's space for users (statvfs). */
#ifndef ETWTOP_LOG_FILE_H
#define ETWTOP_LOG_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "etl_reader.h"

/* Why a file takes no more bytes (0: it does). */
enum log_file_full {
        LOG_FILE_ROOM = 0,
        LOG_FILE_FULL_SIZE, /* the next write would take it past its maximum size */
        LOG_FILE_FULL_DISK, /* the next write would leave its file system no space for users */
};

/* Blocks left free on top of a write, for the file system's own metadata: a write is allowed
   only when statvfs's f_bavail (the space an ordinary user may take; root's reserved blocks
   are not in it) would keep at least this many blocks after it. */
#define LOG_FILE_SPARE_BLOCKS 16

/* Whether fd's file may grow to end_bytes by writing write_bytes more: LOG_FILE_FULL_SIZE when
   max_bytes is not 0 and end_bytes exceeds it, LOG_FILE_FULL_DISK when the file system would
   keep fewer than LOG_FILE_SPARE_BLOCKS blocks for users (even for root: its reserved blocks stay
   free), else LOG_FILE_ROOM. *avail_bytes (may be NULL) gets the space for users now
   (UINT64_MAX when the file system does not say). */
enum log_file_full log_file_room(int fd, uint64_t end_bytes, uint64_t write_bytes,
                                 uint64_t max_bytes, uint64_t *avail_bytes);

/* The bytes a write to fd's file system may take now: its space for users less
   LOG_FILE_SPARE_BLOCKS blocks (0 when it has less), UINT64_MAX when it does not say.
   *avail_bytes (may be NULL) gets the space for users itself. */
uint64_t log_file_space(int fd, uint64_t *avail_bytes);

/* Says why a file stopped taking buffers, for the session's stop reason: "the log file PATH
   reached its maximum size, N MB (MaximumFileSize)" or "the file system of PATH has N KB left
   for users: stopped before the blocks reserved for root". */
void log_file_full_text(char *buf, size_t size, enum log_file_full full, const char *path,
                        uint64_t max_bytes, uint64_t avail_bytes);

/* A name reserved at start (a circular file, written at STOP): the file created empty, its
   descriptor and its directory's kept open, so that what STOP writes goes to this file and
   nowhere else, whatever the path names by then. */
struct log_file_reserved {
        int fd;     /* owned, -1: none */
        int dir_fd; /* owned: the directory the name was created in (O_PATH) */
        char *base; /* owned: the last component of the path */
        dev_t dev;
        ino_t ino;
};

#define LOG_FILE_RESERVED_INIT                                                                     \
        {                                                                                          \
                .fd = -1, .dir_fd = -1, .base = NULL                                               \
        }

/* Creates path empty for writing and keeps it open, with its directory: 0600, no symlink
   followed at the last component, the parent directory resolved once and held open while the
   name is checked and created (a directory swapped for a symlink meanwhile changes nothing). An
   existing name is never replaced unless is_force, and then only when it is a regular file of
   the caller's own (effective uid). Returns 0 or -errno with err filled. */
int log_file_reserve(struct log_file_reserved *r, const char *path, bool is_force,
                     struct etl_error *err);

/* 0 when path (resolved now) names the reserved file, -ENOENT when it names nothing,
   -ESTALE when it names another file (the file was moved, or a directory on the path
   swapped). */
int log_file_reserved_check(const struct log_file_reserved *r, const char *path);

/* Removes the name when it still names the reserved file (a start that failed), then closes. */
void log_file_unreserve(struct log_file_reserved *r);

/* Closes the descriptors; the file stays. NULL-safe on an unused one. */
void log_file_release(struct log_file_reserved *r);

#endif
