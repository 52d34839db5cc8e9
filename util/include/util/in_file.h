/* SPDX-License-Identifier: MIT */
/* in_file.h: opening a file whose name comes from untrusted data (a recording, DWARF, a symbol
   path) for reading, as root: only a regular file is read, and a FIFO, a device or a socket at
   the name neither blocks the open nor is read. */
#ifndef ETWTOP_UTIL_IN_FILE_H
#define ETWTOP_UTIL_IN_FILE_H

#include <sys/stat.h>

/* Opens path read-only with O_NONBLOCK (a FIFO's open does not wait for a writer), O_NOCTTY
   and O_CLOEXEC, plus extra_flags (O_NOFOLLOW where a symbolic link is not expected), and
   fstats the descriptor: a descriptor of a regular file (its stat in *st when st is not NULL),
   or -errno: -EINVAL when the name is not a regular file (closed again, nothing read). */
int in_file_open(const char *path, int extra_flags, struct stat *st);

#endif
