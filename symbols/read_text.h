/* SPDX-License-Identifier: MIT */
/* read_text.h (internal): reading a whole text file the kernel or a JIT writes (/proc/kallsyms,
   /tmp/perf-PID.map), bounded, for the parsers that take bytes. */
#ifndef ETWTOP_SYMBOLS_READ_TEXT_H
#define ETWTOP_SYMBOLS_READ_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Reads fd (a regular file named path, for messages) to its end in chunks of first_chunk bytes,
   doubling, at most max bytes. Closes fd. Returns 0 with *data (owned, not NUL-terminated) and
   *size, or -EFBIG past max, or the read's -errno; then msg says what (and *offset where). */
int read_text_fd(int fd, const char *path, size_t first_chunk, size_t max, char **data,
                 size_t *size, char *msg, size_t msg_size, uint64_t *offset);

/* 1 to 16 hex digits at s[*i] (of n bytes), after an optional 0x; advances *i past them. */
bool text_parse_hex(const char *s, size_t n, size_t *i, uint64_t *out);

#endif
