/* SPDX-License-Identifier: MIT */
/* perf_buildid_dir.h: where perf record keeps its build-id cache (copies of the images and
   kernel symbols a recording hit), as perf finds it: $PERF_BUILDID_DIR (perf --buildid-dir
   exports it to its scripts), else ~/.debug. Read by the symbols (images, a kernel's kallsyms)
   and by a perf.data's conversion (the images its DWARF stacks are walked through). */
#ifndef ETWTOP_UTIL_PERF_BUILDID_DIR_H
#define ETWTOP_UTIL_PERF_BUILDID_DIR_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* The cache's folder into buf; false where neither names an absolute path. */
static inline bool perf_buildid_dir(char *buf, size_t size)
{
        const char *dir = getenv("PERF_BUILDID_DIR"), *home = getenv("HOME");
        if (dir && *dir == '/')
                return (size_t)snprintf(buf, size, "%s", dir) < size;
        if (home && *home == '/')
                return (size_t)snprintf(buf, size, "%s/.debug", home) < size;
        return false;
}

#endif
