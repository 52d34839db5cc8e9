/* SPDX-License-Identifier: MIT */
/* etl_writer.h: writes .etl bytes as the kernel logger does: per-CPU fixed-size buffers, header
 * first. */
#ifndef ETWTOP_ETL_WRITER_H
#define ETWTOP_ETL_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "etl_reader.h"
#include "etw/evntrace.h"

/* The cpu argument of etl_writer_append that puts a record into the header buffer (after the
   logfile header record), as the kernel does with the first group-mask event. */
#define ETL_WRITER_HEADER_CPU 0xFFFFFFFFu

#define ETL_WRITER_DEFAULT_BUFFER_SIZE 65536u

struct etl_writer_config {
        uint32_t buffer_size_bytes; /* 1 KiB .. 16 MiB, a multiple of 8; 0: 64 KiB */
        uint32_t nr_cpus;
        uint32_t log_file_mode; /* EVENT_TRACE_* recorded in the logfile header */
        uint16_t logger_id;
        const char *logger_name;   /* UTF-8, borrowed during etl_writer_new */
        const char *log_file_name; /* UTF-8, as the header records it; may be NULL */
        uint64_t start_timestamp;  /* session clock at start: the header record's timestamp */
        int64_t start_filetime;    /* wall time of start_timestamp */
        int64_t boot_filetime;
        uint64_t perf_freq;  /* session clock ticks per second */
        uint32_t clock_type; /* EVENT_TRACE_CLOCK_* */
        uint8_t os_major, os_minor;
        uint32_t provider_version; /* OS build number */
        uint32_t timer_resolution_100ns;
        uint32_t cpu_speed_mhz;
        uint32_t maximum_file_size_mb; /* as the header records it */
        /* a file takes no buffer that would take it past this size (0: no limit); whatever
           the limit, no buffer that would leave its file system less than
           LOG_FILE_SPARE_BLOCKS for users (log_file.h): root's reserved blocks stay free */
        uint64_t max_file_bytes;
        uint32_t header_tid, header_pid; /* the controller's, in the header record */
        /* the header's TimeZone (a merge keeps its input's); all 0: UTC, none recorded */
        TIME_ZONE_INFORMATION time_zone;
        /* a scratch file, removed once read (a perf.data converted for a replay): never
           synced to the disk (a recording's file is synced at each flush and at the close) */
        bool is_scratch;
};

/* Called with every buffer the writer completes (flushed full or by FLUSH/close), in the
   order written, for real-time delivery. The bytes are borrowed for the call. */
typedef void (*etl_writer_buffer_fn)(void *ctx, const uint8_t *buffer, uint32_t size_bytes);

struct etl_writer_stats {
        uint64_t nr_events;
        uint64_t nr_buffers_written;   /* data buffers completed, header buffer excluded */
        uint64_t nr_bytes_written;     /* to the file */
        uint64_t nr_file_buffers;      /* in the current (or last closed) file, header buffer
                                          included: its header's BuffersWritten; 0: no file yet */
        uint32_t nr_ring_buffers;      /* completed buffers the ring holds now */
        uint64_t nr_events_dropped;    /* records larger than a buffer can hold */
        uint64_t nr_reserve_failures;  /* etl_writer_sink_reserve's failed completions */
        uint64_t nr_buffers_lost;      /* completed buffers the flusher had no room for */
        uint64_t nr_buffers_in_flight; /* handed to the flusher, not yet in the file */
        int write_error;               /* first errno of the file sink (ENOSPC...), 0 if none */
        int full;                      /* enum log_file_full: why the file took no more buffers
                                          (its maximum size, its file system's space for
                                          users); 0 while it takes them */
        uint64_t fs_avail_bytes;       /* the file system's space for users when it filled */
};

struct etl_writer;

/* A writer with no output yet; attach a file, a ring, a callback, in any combination.
   Returns 0, -EINVAL (bad buffer size or CPU count) or -ENOMEM. */
int etl_writer_new(struct etl_writer **out, const struct etl_writer_config *cfg);

/* Writes to a new file at path, created 0600, never through a symlink and, unless is_force,
   never over an existing file (-EEXIST; with is_force only a regular file of the caller's own
   is replaced: log_file_reserve), nor when the file system has no space for users left
   (-ENOSPC). Buffers past cfg.max_file_bytes, or that would take the file system's last
   blocks for users, are not written: the stats say the file is full (.full), and the caller
   stops the session. The header buffer is written at once, and its
   BuffersWritten and EndTime (the latest event's time) are rewritten in place after every
   buffer that reaches the file, so that a file cut short by kill -9 reads up to its last
   complete buffer, also for a reader that reads BuffersWritten buffers. */
int etl_writer_open_file(struct etl_writer *w, const char *path, bool is_force,
                         struct etl_error *err);

/* Keeps the most recent buffers in memory, up to max_bytes (circular). */
int etl_writer_set_ring(struct etl_writer *w, size_t max_bytes);

struct etl_pool;
/* The ring's buffers from here on cut from pool (a reference taken), where a real-time consumer
   of another process reads them in place: a buffer the pool says is pinned when it leaves the
   ring is set aside, not written, until it is unpinned. Buffers past the pool's end come from
   the writer's own memory. On a writer with a ring and no placed buffers: -EINVAL otherwise. */
int etl_writer_set_pool(struct etl_writer *w, struct etl_pool *pool);
/* The writer's pool, or NULL. */
struct etl_pool *etl_writer_pool(const struct etl_writer *w);

void etl_writer_set_buffer_callback(struct etl_writer *w, etl_writer_buffer_fn fn, void *ctx);

/* Where a CPU's next buffer lies, in place of a buffer of the writer's own: returns buffer_size
   bytes for cpu's buffer, asked for at the buffer's first record, or NULL when there is no
   memory (the record is not written). The buffer is completed where it lies (the callback sees
   it there) and stays there; the CPU's next record asks for another. A buffer asked for whose
   records were all given up (a reserve never committed) is never completed. */
typedef uint8_t *(*etl_writer_place_fn)(void *ctx, uint32_t cpu);

/* Buffers placed by fn (an .etl made in memory: each buffer written where the image keeps it,
   not copied there when completed). Set before the first record, on a writer without a ring or
   a flusher, which keep buffers of their own: -EINVAL otherwise. */
int etl_writer_set_buffer_place(struct etl_writer *w, etl_writer_place_fn fn, void *ctx);

/* Appends one complete record (header included, as etl_record_* build them) to cpu's buffer,
   completing the buffer first when the record does not fit. Returns 0, -E2BIG (record larger
   than a buffer: dropped and counted), -EINVAL (cpu out of range), -ENOMEM (the CPU's first
   record: no memory for its buffer), or the file sink's -errno (the record is kept in memory;
   the writer goes on for the other sinks). */
int etl_writer_append(struct etl_writer *w, uint32_t cpu, const void *record, uint32_t size);

/* etl_writer_append without the copy, for a record built in place: room for a record of at
   most max_size bytes at the end of cpu's buffer (completed first when the record might not
   fit), where the caller writes it, then etl_writer_commit(w, cpu, size <= max_size) appends
   it (size 0: nothing). Nothing else may touch cpu's buffer in between. Returns the room, or
   NULL where etl_writer_append would return -E2BIG, -EINVAL (the header CPU included) or
   -ENOMEM;
   *rc: 0 or the file sink's -errno of completing the buffer, as append's. */
uint8_t *etl_writer_reserve(struct etl_writer *w, uint32_t cpu, uint32_t max_size, int *rc);
void etl_writer_commit(struct etl_writer *w, uint32_t cpu, uint32_t size);
/* The same two in the shape of a converter's sink (perf_conv_sink, ctx the writer), so that
   the converter calls the writer with no hop between: a failed completion of the buffer (the
   file sink's -errno, which etl_writer_reserve returns in *rc) is counted in
   stats.nr_reserve_failures. */
uint8_t *etl_writer_sink_reserve(void *w, uint32_t cpu, uint32_t max_size);
void etl_writer_sink_commit(void *w, uint32_t cpu, uint32_t size);
/* The sink's third hook: the room at the end of cpu's buffer for max_size bytes when they fit
   there as the buffer is, else NULL (nothing completed, nothing allocated). The caller builds
   records there one after the other, each committed (etl_writer_sink_commit) before the next
   is begun, at the room plus the records before it, each rounded up to 8 bytes: one call where
   a reserve for each record would find them room in the same buffer (a sample and its stack),
   and a buffer completed where those reserves would complete it (on a NULL, the caller
   reserves each record). */
uint8_t *etl_writer_sink_room(void *w, uint32_t cpu, uint32_t max_size);

/* The file's writes (the buffers, the header's counts after each)
   on a thread of their own, in order, up to max_queued buffers waiting (and at least 16 MiB of
   them): a caller that must not wait for the disk. A buffer that finds the queue full is lost
   (nr_buffers_lost; the file's BuffersWritten leaves it out). Until etl_writer_close, the stats
   count what reached the file. Returns
   0, -EINVAL (no file, or already) or -ENOMEM / a pthread error. */
int etl_writer_set_async(struct etl_writer *w, uint32_t max_queued);

/* Completes every partly filled buffer now (EVENT_TRACE_CONTROL_FLUSH): they go to the file
   (the page cache), not to the disk; etl_writer_close syncs the file. */
int etl_writer_flush(struct etl_writer *w);

/* Flushes, rewrites the header buffer with EndTime (end_filetime, or the last event's time when
   that is later), BuffersWritten, EventsLost and BuffersLost, and closes the file. The ring
   stays readable. Returns 0 or the first -errno. */
int etl_writer_close(struct etl_writer *w, int64_t end_filetime, uint32_t events_lost,
                     uint32_t buffers_lost);

/* Writes the header buffer and the ring's buffers (oldest first, sequence numbers kept) as a
   self-contained file, with the same safety rules as etl_writer_open_file. Its header frames
   the events it holds: the header record's timestamp and StartTime are those of the first
   event kept (the session's start when no buffer has left the ring), EndTime the last event's
   (or end_filetime when later), LogFileName is path. -ENAMETOOLONG: path does not fit in the
   header buffer. */
int etl_writer_save_ring(struct etl_writer *w, const char *path, bool is_force,
                         int64_t end_filetime, struct etl_error *err);

/* The same, written through fd (a file reserved at start: a circular file's STOP), its header
   naming name; the file is cut to what was written. When its file system has no room for the
   whole ring without its last blocks for users, the newest buffers that fit are written (a
   file that reads) and it returns -ENOSPC with err saying so; -ENOSPC and an empty file when
   not even the header buffer fits. etl_writer_save_ring keeps such a partial file too. */
int etl_writer_save_ring_fd(struct etl_writer *w, int fd, const char *name, int64_t end_filetime,
                            struct etl_error *err);

void etl_writer_get_stats(const struct etl_writer *w, struct etl_writer_stats *st);

/* The header buffer as it stands: the logfile header record (BuffersWritten as of the last
   header update, EndTime 0 until close) and the records appended with ETL_WRITER_HEADER_CPU.
   Real-time consumers receive it first, as a file's readers do. Returns the buffer (8-byte
   aligned, borrowed until the next etl_writer_* call on w) and its size in *size_bytes. */
const uint8_t *etl_writer_header(const struct etl_writer *w, uint32_t *size_bytes);

/* For a writer without a file whose buffers went to the buffer callback (an .etl made in
   memory), after etl_writer_close: the header buffer as the close writes a file's, for a file
   of nr_buffers buffers (the header buffer included) whose latest buffer is stamped
   last_timestamp (the EndTime; the start's when earlier). Borrowed as etl_writer_header's. */
const uint8_t *etl_writer_header_closed(struct etl_writer *w, uint32_t nr_buffers,
                                        uint64_t last_timestamp, uint32_t *size_bytes);

/* Closes the open file unfinished and removes its name, when the name (in the directory it
   was created in) is still that file: a start that failed leaves nothing, and never removes
   what a directory swapped since names. */
void etl_writer_remove_file(struct etl_writer *w);

/* Frees the writer; closes an open file without finalizing it. NULL is fine. */
void etl_writer_free(struct etl_writer *w);

/* Record builders: write a record into dst (which has room for the returned size) and
   return its size in bytes (not aligned; the writer aligns). ETL-FORMAT.md 2.3-2.8.
   etl_record_perfinfo64 takes a payload already in place (right after the header and the
   counters in dst) without copying it. */
uint32_t etl_record_system64(uint8_t *dst, uint16_t hook_id, uint8_t version, uint32_t tid,
                             uint32_t pid, uint64_t timestamp, const void *payload,
                             uint32_t payload_size);
uint32_t etl_record_perfinfo64(uint8_t *dst, uint16_t hook_id, uint8_t version, uint64_t timestamp,
                               const uint64_t *pmc, uint32_t nr_pmc, const void *payload,
                               uint32_t payload_size);
uint32_t etl_record_full64(uint8_t *dst, const GUID *guid, uint8_t opcode, uint16_t version,
                           uint32_t tid, uint32_t pid, uint64_t timestamp, const void *payload,
                           uint32_t payload_size);
/* EVENT_HEADER64 with optional extended items (type, data, size) */
struct etl_record_ext {
        uint16_t type;
        uint16_t size_bytes;
        const void *data;
};
uint32_t etl_record_event64(uint8_t *dst, const GUID *provider, const EVENT_DESCRIPTOR *desc,
                            uint32_t tid, uint32_t pid, uint64_t timestamp,
                            const struct etl_record_ext *ext, uint32_t nr_ext, const void *payload,
                            uint32_t payload_size);

#endif
