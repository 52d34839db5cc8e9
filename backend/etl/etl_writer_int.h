/* SPDX-License-Identifier: MIT */
/* etl_writer_int.h: the writer's state and the helpers its files share (etl_writer.c, the
   buffers and their sinks; etl_writer_save.c, the in-memory ring saved to a file). Private to
   backend/etl. */
#ifndef ETL_WRITER_INT_H
#define ETL_WRITER_INT_H

#include "etl_flush.h"
#include "etl_writer.h"
#include "log_file.h"

#include <stdbool.h>
#include <stdint.h>

#define LOGFILE_HEADER64_SIZE 0x118
#define SYSTEM_HEADER_SIZE    0x20
#define BUFFER_STATE_FLUSH    3 /* ETW_BUFFER_STATE: what kernel-written files carry */

struct cpu_buffer {
        uint8_t *data; /* owned, buffer_size bytes */
        uint32_t filled;
        uint32_t last_at;        /* where its latest record starts (read at its completion) */
        uint64_t last_timestamp; /* that record's, once the buffer is completed */
};

/* RING_CHUNK bytes of ring buffers. (Asking for huge pages here made the live screen's CPU time
   half as much again, measured with two screens side by side: left to the kernel.) */
#define RING_CHUNK ((size_t)2 << 20)
struct ring_chunk {
        struct ring_chunk *next;
        uint8_t *mem; /* mapped, populated: size bytes */
        size_t size;
        size_t used;
};

struct etl_writer {
        struct etl_writer_config cfg;
        uint32_t buffer_size;
        uint8_t *header; /* owned: the header buffer */
        uint32_t header_filled;
        uint32_t header_record_size;
        struct cpu_buffer *cpus; /* owned, cfg.nr_cpus */
        uint64_t next_sequence;
        /* file sink */
        int fd;                       /* owned, -1: none */
        struct log_file_reserved dir; /* owned: the file's directory and name (its fd: -1), to
                                         remove it (etl_writer_remove_file) only when still it */
        uint64_t nr_file_buffers;     /* in the file, header buffer included */
        struct etl_flush_ahead ahead; /* the file's space the flusher allocated ahead */
        uint64_t nr_queued_buffers;   /* with a flusher: those written or on their way */
        uint64_t file_last_timestamp; /* the latest record in the file (its EndTime) */
        /* ring sink: a completed buffer trades places with the ring's oldest, no copy */
        uint8_t **ring;              /* owned: ring_slots buffers, NULL until first used */
        struct etl_flush_bufs *bufs; /* owned: where the CPUs' and the flusher's buffers are cut */
        uint8_t **orig; /* the CPUs' buffers cut from bufs (a ring's others come from chunks) */
        struct ring_chunk *chunks; /* owned: where the ring's buffers are cut from */
        struct etl_pool *pool;     /* a reference, or NULL: where they are cut from first */
        uint8_t **held;            /* owned: pool buffers out of the ring that were pinned */
        uint32_t nr_held, held_cap;
        uint32_t ring_slots;
        uint32_t ring_next;
        uint32_t ring_count;
        /* real-time sink */
        etl_writer_buffer_fn callback;
        void *callback_ctx;
        /* placed buffers: each CPU's buffers where place says, none of the writer's own */
        etl_writer_place_fn place;
        void *place_ctx;
        struct etl_writer_stats stats;
        struct flusher *flusher; /* owned: the file's writes on a thread of their own, or NULL */
};

/* The fields of a TRACE_LOGFILE_HEADER that differ between the files a writer makes. */
struct logfile_fields {
        uint32_t buffers_written;
        int64_t start_filetime;
        int64_t end_filetime;
        uint32_t events_lost;
        uint32_t buffers_lost;
};

/* WMI_BUFFER_HEADER of buffer b (filled bytes, its sequence, its CPU, its latest timestamp). */
void etl_writer_put_buffer_header(const struct etl_writer *w, uint8_t *b, uint32_t filled,
                                  uint64_t seq, uint16_t cpu, uint64_t timestamp, bool is_header);
/* The TRACE_LOGFILE_HEADER (1.6) of the logfile header record at the start of header buffer
   hb. */
void etl_writer_put_logfile_header(const struct etl_writer *w, uint8_t *hb,
                                   const struct logfile_fields *f);
/* The wall time of a session-clock timestamp, as a reader computes it from the header. */
int64_t etl_writer_filetime_of(const struct etl_writer *w, uint64_t timestamp);

#endif
