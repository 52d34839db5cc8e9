/* SPDX-License-Identifier: MIT */
/* etl_flush.h: the writer's writes to its file: whole writes, and a flusher's batch of buffers. */
#ifndef ETWTOP_ETL_FLUSH_H
#define ETWTOP_ETL_FLUSH_H

#include <stdint.h>
#include <sys/types.h>

/* Writes n bytes at off, short writes resumed. Returns 0 or -errno (-EIO: nothing written). */
int etl_write_all(int fd, const uint8_t *p, size_t n, off_t off);

/* Writes k buffers of size bytes, the file's buffers first.., as many of them as the file has
   room for (log_file_room's limits: max_bytes, 0 none, and its file system's space), in one
   pwritev. *done: how many reached the file; *full: the enum log_file_full that stopped the
   others (0: none), *avail its file system's space for users. Returns 0 or -errno. */
int etl_flush_batch(int fd, uint8_t *const *bufs, uint32_t k, uint32_t size, uint64_t first,
                    uint64_t max_bytes, uint32_t *done, int *full, uint64_t *avail);

#endif
