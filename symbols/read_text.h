/* SPDX-License-Identifier: MIT */
/* read_text.h (internal): reading a whole text file the kernel or a JIT writes (/proc/kallsyms,
   /tmp/perf-PID.map), bounded, for the parsers that take bytes. */
#ifndef ETWTOP_SYMBOLS_READ_TEXT_H
#define ETWTOP_SYMBOLS_READ_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* Reads fd (a regular file named path, for messages) to its end in chunks of first_chunk bytes,
   doubling, at most max bytes. Closes fd. Returns 0 with *data (owned, not NUL-terminated) and
   *size, or -EFBIG past max, or the read's -errno; then msg says what (and *offset where). */
int read_text_fd(int fd, const char *path, size_t first_chunk, size_t max, char **data,
                 size_t *size, char *msg, size_t msg_size, uint64_t *offset);

#endif
