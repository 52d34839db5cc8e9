/* SPDX-License-Identifier: MIT */
/* perf_data_mem.h: the large growing buffer of a perf.data conversion made in memory (the .etl
   a replay reads), in anonymous memory advised for transparent huge pages. */
#ifndef ETWTOP_PERF_DATA_MEM_H
#define ETWTOP_PERF_DATA_MEM_H

#include <stddef.h>
#include <stdint.h>

/* data[0..len) in use of cap bytes mapped; all zero: empty, nothing mapped. */
struct perf_data_mem {
        uint8_t *data;
        size_t len, cap;
};

/* Makes room for at least need bytes (the contents kept; data may move). A new mapping is
   aligned to 2 MiB and advised MADV_HUGEPAGE: where the kernel has huge pages, a page fault
   maps 2 MiB at once rather than 4 KiB (a 3 MB conversion took 800 faults, most of its system
   time). Returns 0 or -ENOMEM. */
int perf_data_mem_reserve(struct perf_data_mem *m, size_t need);

/* Unmaps m and empties it. */
void perf_data_mem_free(struct perf_data_mem *m);

#endif
