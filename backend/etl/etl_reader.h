/* SPDX-License-Identifier: MIT */
/* etl_reader.h: reads .etl bytes: buffers, the logfile header, records in time order. */
#ifndef ETWTOP_ETL_READER_H
#define ETWTOP_ETL_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "etw/evntrace.h"

#include "util/err.h"

/* A human message about bad input, with the byte offset in the file it concerns: util/err.h's
   one shape, struct err_msg, under the name the backend's files use (`struct etl_error` is
   `struct err_msg`, so either fills the other's callers; the name goes when they say err_msg). */
#define etl_error err_msg

/* Fills err (when not NULL) with a message about bad input at offset, replacing one already
   there (err_set keeps the first). */
void etl_error_set(struct etl_error *err, uint64_t offset, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

#define ETL_MAX_EXT_ITEMS 16

/* One extended data item of an EVENT_HEADER record, or an inline PMC/PEBS item. */
struct etl_ext_item {
        uint16_t type; /* EVENT_HEADER_EXT_TYPE_* */
        uint16_t size_bytes;
        const uint8_t *data; /* borrowed */
};

/* One record as it is in the file. Pointers are borrowed from the reader and valid until the
   next call of etl_reader_next or etl_reader_close. */
struct etl_record {
        const uint8_t *data; /* the record, header included */
        uint32_t size_bytes;
        uint8_t header_type;  /* TRACE_HEADER_TYPE_* */
        uint8_t pointer_size; /* 4 or 8, from the header type */
        uint16_t version;     /* event version (low byte of the version word; Class.Version) */
        uint16_t hook_id;     /* SYSTEM/COMPACT/PERFINFO: group << 8 | type; MESSAGE: its number */
        uint8_t opcode;       /* FULL/INSTANCE: Class.Type; EVENT_HEADER: descriptor opcode */
        uint8_t level;
        uint16_t flags;     /* EVENT_HEADER Flags */
        uint64_t timestamp; /* raw session clock */
        uint32_t tid;
        uint32_t pid;
        uint32_t kernel_time;
        uint32_t user_time;
        const uint8_t *guid; /* FULL/INSTANCE/EVENT_HEADER: 16 bytes at +0x18; MESSAGE: its
                                message GUID, where it has one; else NULL */
        uint16_t cpu;
        uint16_t logger_id;
        uint32_t buffer_index; /* in file order */
        uint64_t file_offset;  /* of the buffer in the file, plus the record's offset in it */
        const uint8_t *payload;
        uint32_t payload_size;
        uint32_t nr_ext;
        struct etl_ext_item ext[ETL_MAX_EXT_ITEMS];
        bool is_header; /* the WMI_LOG_TYPE_HEADER record, always delivered first */
};

/* The logfile header, converted to the x64 TRACE_LOGFILE_HEADER whatever the file's layout. */
struct etl_logfile {
        TRACE_LOGFILE_HEADER header; /* LoggerName/LogFileName point at logger_name_w/file_name_w */
        WCHAR *logger_name_w;        /* owned, NUL-terminated */
        WCHAR *log_file_name_w;      /* owned, NUL-terminated */
        char *logger_name;           /* owned, UTF-8 */
        char *log_file_name;         /* owned, UTF-8 */
        uint64_t start_timestamp;    /* raw clock value of the header record (ts0) */
        uint32_t pointer_size;       /* of the header record: 4 or 8 */
        uint32_t compression_format; /* COMPRESSION_FORMAT_*, 0 when not compressed */
};

struct etl_reader_stats {
        uint32_t nr_buffers;
        uint32_t nr_buffers_compressed;
        uint32_t nr_buffers_damaged; /* skipped whole or in part */
        uint32_t nr_buffers_done;    /* delivered, for BufferCallback */
        uint32_t nr_cpus;
        uint64_t nr_records;
        uint64_t nr_records_skipped; /* WPP messages without a time, header types with no event
                                        form */
        uint64_t nr_bytes_read;      /* decompressed bytes of records */
        uint64_t nr_events_lost;     /* buffers flagged EVENTS_LOST, plus the header's count */
        /* the compressed buffers read since the last rewind: decompressed ahead by worker
           threads (ETWTOP_READER_THREADS), or by the reading thread itself */
        uint32_t nr_inflate_workers;
        uint32_t nr_inflated_ahead;
        uint32_t nr_inflated_here;
};

struct etl_reader;

/* Opens a reader over data[0..size), which the caller keeps valid and unchanged until
   etl_reader_close. Reads every buffer header and the logfile header now; records are read as
   etl_reader_next asks for them. Returns 0, or -EINVAL (not an ETL file, empty) / -EBADMSG
   (damaged beyond use) / -ENOMEM with err filled. */
int etl_reader_open_mem(struct etl_reader **out, const uint8_t *data, size_t size,
                        struct etl_error *err);

/* Opens a reader over a file (mapped read-only; a regular file only), or over the .etl inside a
   zip archive (inflated into memory: etl_zip.h). Returns 0 or -errno with err filled. Its
   release callback is taken (etl_reader_set_release). */
int etl_reader_open_file(struct etl_reader **out, const char *path, struct etl_error *err);

/* How many zip entries etl_reader_open_file has inflated in this process (the last one is kept
   for the next open of the same archive, and read again from memory). */
uint64_t etl_open_nr_inflated(void);

/* Closes the reader and everything it owns. NULL is fine. */
void etl_reader_close(struct etl_reader *r);

/* Has etl_reader_close call fn(ctx) once r is closed: the owner of etl_reader_open_mem's data
   learns when this reader no longer reads it. */
void etl_reader_set_release(struct etl_reader *r, void (*fn)(void *ctx), void *ctx);

const struct etl_logfile *etl_reader_logfile(const struct etl_reader *r);

/* Starts the record sequence again from the header record. */
void etl_reader_rewind(struct etl_reader *r);

/* The next record in time order: the header record first, then the records of every processor's
   buffers (sorted by sequence number) merged by timestamp. Returns 1 with *rec filled, 0 at the
   end. A damaged buffer is skipped (counted, with the last such problem in
   etl_reader_last_warning) and the rest still reads. */
int etl_reader_next(struct etl_reader *r, struct etl_record *rec);

/* The same without the copy: the record, or NULL at the end. It is owned by the reader and
   valid until the next call of etl_reader_next, etl_reader_next_ref, etl_reader_peek_timestamp,
   etl_reader_rewind or etl_reader_close. */
const struct etl_record *etl_reader_next_ref(struct etl_reader *r);

/* The timestamp of the record etl_reader_next would return, or UINT64_MAX at the end. */
uint64_t etl_reader_peek_timestamp(struct etl_reader *r);

void etl_reader_get_stats(const struct etl_reader *r, struct etl_reader_stats *st);

/* Buffers whose records have all been delivered (stats.nr_buffers_done), cheaply. */
uint32_t etl_reader_nr_buffers_done(const struct etl_reader *r);

/* The most recent problem met while reading (a skipped buffer, a damaged record), with its
   offset; msg is empty when there was none. */
const struct etl_error *etl_reader_last_warning(const struct etl_reader *r);

/* Reads the records of one standalone buffer, as a real-time consumer receives them: *pos
   starts at 0 and is advanced; returns 1 with *rec filled (pointers into buf, cpu and
   logger_id from the buffer header), 0 at the end, -EBADMSG for a damaged buffer (the rest of
   it is skipped) or -EINVAL when buf is not a buffer. The buffer must be 8-byte aligned. */
int etl_buffer_next(const uint8_t *buf, uint32_t size, uint32_t *pos, struct etl_record *rec);

/* Converts a raw timestamp of this file to FILETIME (100 ns since 1601), by the file's clock. */
int64_t etl_reader_to_filetime(const struct etl_reader *r, uint64_t timestamp);

#endif
