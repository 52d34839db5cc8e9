/* SPDX-License-Identifier: MIT */
/* perf_map.h: JIT code's symbols from a perf map (/tmp/perf-PID.map), `START SIZE NAME` lines. */
#ifndef ETWTOP_SYMBOLS_PERF_MAP_H
#define ETWTOP_SYMBOLS_PERF_MAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sym_table;

/* A human message about bad input, with the byte offset of the first bad line. Bad lines are
   skipped, not fatal: nr_bad_lines counts them and msg describes the first one; a fatal error
   (the function returned -errno) overwrites msg. Both 0 / "" when the input was clean. */
struct perf_map_error {
        uint64_t offset;
        uint32_t nr_bad_lines;
        char msg[256];
};

/* Inputs larger than this are refused (-EFBIG). */
#define PERF_MAP_MAX_INPUT (1u << 30)

/* A line of size 0 runs to the next symbol, at most this far. */
#define PERF_MAP_MAX_INFERRED_SIZE 4096u

/* Adds the symbols of perf map text (not NUL-terminated, len bytes) to t, which is not yet
   finished; the caller finishes it (perf_map_read does). Lines are `START SIZE NAME`: START and
   SIZE hexadecimal with or without 0x, NAME the rest of the line (spaces included). JIT code is
   replaced in place, so of several lines with one START only the last one is added; symbols
   already in t win over these at an equal start (sym_table keeps the first added). A START +
   SIZE that wraps, or a line without all three fields, is skipped and counted in err. Returns
   0, or -EFBIG for an input over PERF_MAP_MAX_INPUT. */
int perf_map_parse_mem(const char *text, size_t len, struct sym_table *t,
                       struct perf_map_error *err);

/* Reads the perf map at path into a new finished table (*out, free with sym_table_free). The
   file must be a regular file; a last line without its newline is ignored (the JIT may be
   writing it). Returns 0, or -errno of open and read (-ENOENT: no map), or as above. */
int perf_map_read_file(const char *path, struct sym_table **out, struct perf_map_error *err);

/* Reads /tmp/perf-PID.map as perf_map_read_file does, if it is owned by root or by the owner
   of the process (else -EPERM: anybody can write into /tmp). */
int perf_map_read(pid_t pid, struct sym_table **out, struct perf_map_error *err);

#endif
