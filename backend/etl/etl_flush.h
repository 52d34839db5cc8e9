/* SPDX-License-Identifier: MIT */
/* etl_flush.h: the writer's writes to its file: whole writes, a flusher's batch of buffers, and
   the buffers, made for its direct writes. */
#ifndef ETWTOP_ETL_FLUSH_H
#define ETWTOP_ETL_FLUSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Writes n bytes at off, short writes resumed. Returns 0 or -errno (-EIO: nothing written). */
int etl_write_all(int fd, const uint8_t *p, size_t n, off_t off);

/* The space a flusher allocates to its file ahead of the writes (fallocate with
   FALLOC_FL_KEEP_SIZE: the file's size stays what was written), a step at a time: ext4 then
   reserves no block for each page written nor allocates them at writeback, and the file's
   blocks come in long runs (160 MB in 1 MiB writes: 0.03 s of CPU without, 0.016 s with). */
#define ETL_FLUSH_AHEAD_STEP (16u << 20)

/* What a flusher keeps of its file between batches: the space allocated ahead (the end of what
   was allocated, 0: nothing yet, and whether its file system refused: then nothing more is
   asked), and the file's second descriptor, opened with O_DIRECT at the first batch that can go
   that way (see etl_flush_batch). All zero before the first batch; etl_flush_release_ahead
   closes the descriptor. */
struct etl_flush_ahead {
        uint64_t end;
        int error;        /* the errno fallocate gave, 0: none */
        int direct_fd1;   /* the O_DIRECT descriptor + 1, 0: none open */
        int direct_error; /* the errno that ruled O_DIRECT out for this file, 0: none */
        dev_t direct_dev; /* the file the descriptor is of */
        ino_t direct_ino;
        bool is_behind; /* set by the flusher: its queue backs up, the page cache takes it */
};

/* The alignment of a buffer, of its size and of its place in the file for O_DIRECT: a page,
   which every logical block size of a disk divides. */
#define ETL_FLUSH_DIRECT_ALIGN 4096u

/* A writer's buffers, all of one size, each ETL_FLUSH_DIRECT_ALIGN-aligned so that the flusher
   may write it with O_DIRECT. They are cut from 2 MiB-aligned chunks that the kernel is asked
   to back with huge pages once the writer writes a file (etl_flush_bufs_set_huge;
   MADV_HUGEPAGE, advice only): a direct write pins its buffers' pages for the disk, one
   reference a huge page rather than one a 4 KiB page, which was 40% of the flusher's CPU on a
   switch-heavy recording (bench/README.md, stop 75). Without a file (a real-time session's
   first buffers, before its pool) 4 KiB pages: a huge page is 2 MiB the kernel zeroes at its
   first touch, 5 ms and more where the hypervisor takes freed memory back (stop 76). A buffer
   given back is kept for the next take; the chunks go at etl_flush_bufs_free, with every buffer
   cut from them. Take and give may be called from any thread. */
struct etl_flush_bufs;

/* NULL when out of memory. */
struct etl_flush_bufs *etl_flush_bufs_new(uint32_t size);
/* A buffer (its bytes as last left, or zero when new); NULL when out of memory. */
void *etl_flush_bufs_take(struct etl_flush_bufs *b);
void etl_flush_bufs_give(struct etl_flush_bufs *b, void *buf);
void etl_flush_bufs_free(struct etl_flush_bufs *b);
/* The chunks mapped from now on advised huge pages (is_huge) or not (the default). */
void etl_flush_bufs_set_huge(struct etl_flush_bufs *b, bool is_huge);

/* The most buffers etl_flush_batch writes a call. */
#define ETL_FLUSH_BATCH_MAX 64u

/* Writes k (at most ETL_FLUSH_BATCH_MAX) buffers of size bytes, the file's buffers first.., as many
   of them as the file has room for (log_file_room's limits: max_bytes, 0 none, and its file
   system's space, in which the space allocated ahead counts as free), in one pwritev. ahead (NULL:
   none) allocates the file's next ETL_FLUSH_AHEAD_STEP bytes before the write that needs them, only
   while its file system keeps a step more than that for users (a file near the disk's end stops
   where it did without it), and never past max_bytes. *done: how many reached the file; *full: the
   enum log_file_full that stopped the others (0: none), *avail its file system's space for users.
   With ahead, a batch whose buffers, size and place are ETL_FLUSH_DIRECT_ALIGN-aligned goes
   through O_DIRECT (from the disk's side the same bytes, but no copy into the page cache and no
   dirty pages for the close's fsync or the kernel's writeback: 187 MB of a switch-heavy
   recording cost 40 ms of copies and 4-12 ms of fsync that way on a 2-CPU VM, 13-25 ms
   directly; bench/README.md), unless the file system refuses it or the flusher is behind
   (ahead->is_behind: the page cache absorbs a burst a slow disk would hold up). Returns 0 or
   -errno. */
int etl_flush_batch(int fd, uint8_t *const *bufs, uint32_t k, uint32_t size, uint64_t first,
                    uint64_t max_bytes, struct etl_flush_ahead *ahead, uint32_t *done, int *full,
                    uint64_t *avail);

/* Gives back the space allocated ahead past the file's end (ftruncate to its own size: ext4,
   xfs and tmpfs free the blocks past it; the bytes stay as they are), and closes the O_DIRECT
   descriptor. A file whose writer was killed keeps them (its size is still what was written:
   readers see nothing past it). Returns 0 or -errno. */
int etl_flush_release_ahead(int fd, struct etl_flush_ahead *ahead);

#endif
