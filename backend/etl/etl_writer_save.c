/* SPDX-License-Identifier: MIT */
/* etl_writer_save.c: owns saving a writer's in-memory ring (the flight recorder's buffers) as
   a file of its own: the newest buffers that fit, under a header of the span they hold. */
#include "etl_writer_int.h"
#include "etl_flush.h"
#include "etl_parse.h"
#include "le_bytes.h"
#include "util/utf.h"

#include "etw/ntwmi.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The session-clock span [*from, *to] of the records in a completed buffer b; false when it
   holds none. Records in a buffer are in time order (1.3); its TimeStamp is its last one's. */
static bool buffer_span(const struct etl_writer *w, const uint8_t *b, uint64_t *from, uint64_t *to)
{
        struct etl_record rec;
        uint32_t pos = 0;
        if (etl_buffer_next(b, w->buffer_size, &pos, &rec) != 1)
                return false;
        *from = rec.timestamp;
        *to = le_get64(b + 0x10);
        if (*to < *from)
                *to = *from;
        return true;
}

/* Builds in hb the header buffer of a file holding the events from start_ts on: the logfile
   header record naming log_file_name, stamped start_ts, with f's fields (StartTime included),
   then the records appended with ETL_WRITER_HEADER_CPU, none stamped before start_ts (what
   they say, the group masks at the start, holds from there on). Returns 0 or -ENAMETOOLONG
   when the name does not fit in the buffer. */
static int header_buffer_for_file(const struct etl_writer *w, uint8_t *hb,
                                  const char *log_file_name, uint64_t start_ts,
                                  const struct logfile_fields *f)
{
        const uint8_t *rec = w->header + WMI_BUFFER_HEADER_SIZE;
        const uint32_t names = SYSTEM_HEADER_SIZE + LOGFILE_HEADER64_SIZE;
        uint32_t logger_bytes = 0;
        while (names + logger_bytes + 2 <= w->header_record_size &&
               le_get16(rec + names + logger_bytes))
                logger_bytes += 2;
        logger_bytes += 2; /* the NUL */
        uint32_t extra_from = WMI_BUFFER_HEADER_SIZE + ((w->header_record_size + 7u) & ~7u);
        uint32_t extra = w->header_filled - extra_from;
        size_t file_bytes_max = 2 * strlen(log_file_name) + 2; /* UTF-16 of UTF-8, at most */
        size_t need = names + logger_bytes + file_bytes_max;
        if (need > MAX_ETW_EVENT_SIZE ||
            WMI_BUFFER_HEADER_SIZE + ((need + 7u) & ~(size_t)7u) + extra > w->buffer_size)
                return -ENAMETOOLONG;
        memset(hb, 0, w->buffer_size);
        uint8_t *out = hb + WMI_BUFFER_HEADER_SIZE;
        memcpy(out, rec, names + logger_bytes);
        uint32_t size =
                names + logger_bytes + utf8_to_utf16le(out + names + logger_bytes, log_file_name);
        le_put16(out + 4, (uint16_t)size);
        le_put64(out + 16, start_ts);
        uint32_t filled = WMI_BUFFER_HEADER_SIZE + ((size + 7u) & ~7u);
        memcpy(hb + filled, w->header + extra_from, extra);
        filled += extra;
        etl_writer_put_logfile_header(w, hb, f);
        etl_writer_put_buffer_header(w, hb, filled, 0, 0, start_ts, true);
        struct etl_record r;
        uint32_t pos = WMI_BUFFER_HEADER_SIZE + ((size + 7u) & ~7u); /* after the header record */
        while (etl_buffer_next(hb, w->buffer_size, &pos, &r) == 1)
                if (r.timestamp < start_ts)
                        le_put64(hb + (r.data - hb) + etl_record_timestamp_offset(r.data),
                                 start_ts);
        return 0;
}

/* Writes the header buffer and the newest keep of the ring's buffers to fd, named name. */
static int save_ring_to(struct etl_writer *w, int fd, const char *name, uint32_t keep,
                        int64_t end_filetime, struct etl_error *err)
{
        /* The span of the events saved: from the first record of the buffers kept, or from the
           session's start when none was pushed out (the kept window began with it), to their
           last; the file's start timestamp, StartTime and EndTime say that span, not the
           session's, so that the file's time starts where its events do. */
        uint32_t first = (w->ring_next + w->ring_slots - keep) % w->ring_slots;
        uint64_t from = UINT64_MAX, to = w->cfg.start_timestamp;
        for (uint32_t i = 0; i < keep; i++) {
                uint64_t a, b;
                if (buffer_span(w, w->ring[(first + i) % w->ring_slots], &a, &b)) {
                        from = a < from ? a : from;
                        to = b > to ? b : to;
                }
        }
        if (from == UINT64_MAX || keep == w->stats.nr_buffers_written ||
            from < w->cfg.start_timestamp)
                from = w->cfg.start_timestamp;
        int64_t last = etl_writer_filetime_of(w, to);
        struct logfile_fields f = {1 + keep, etl_writer_filetime_of(w, from),
                                   end_filetime > last ? end_filetime : last, 0, 0};
        uint8_t *header = malloc(w->buffer_size);
        if (!header)
                return -ENOMEM;
        if (header_buffer_for_file(w, header, name, from, &f) < 0) {
                etl_error_set(err, 0, "the name %s does not fit in a %u-byte header buffer", name,
                              w->buffer_size);
                free(header);
                return -ENAMETOOLONG;
        }
        int rc = etl_write_all(fd, header, w->buffer_size, 0);
        for (uint32_t i = 0; i < keep && rc == 0; i++) {
                uint32_t slot = (first + i) % w->ring_slots;
                rc = etl_write_all(fd, w->ring[slot], w->buffer_size,
                                   (off_t)(i + 1) * w->buffer_size);
        }
        free(header);
        if (rc == 0 && ftruncate(fd, (off_t)(1 + keep) * w->buffer_size) < 0)
                rc = -errno;
        if (rc == 0 && fsync(fd) < 0 && errno != EINVAL)
                rc = -errno;
        if (rc < 0)
                etl_error_set(err, 0, "writing %s: %s", name, strerror(-rc));
        return rc;
}

int etl_writer_save_ring_fd(struct etl_writer *w, int fd, const char *name, int64_t end_filetime,
                            struct etl_error *err)
{
        if (!w->ring) {
                etl_error_set(err, 0, "no in-memory buffers to save");
                return -EINVAL;
        }
        /* the newest buffers the file system has room for, never its last blocks */
        uint64_t avail, room = log_file_space(fd, &avail) / w->buffer_size;
        if (room == 0) {
                log_file_full_text(err->msg, sizeof(err->msg), LOG_FILE_FULL_DISK, name, 0, avail);
                return -ENOSPC;
        }
        uint32_t keep = room - 1 < w->ring_count ? (uint32_t)(room - 1) : w->ring_count;
        int rc = save_ring_to(w, fd, name, keep, end_filetime, err);
        if (rc == 0 && keep < w->ring_count) {
                etl_error_set(err, 0,
                              "its file system had %llu KB for users, not room for the %u "
                              "buffers kept: the newest %u were written, stopped before the "
                              "blocks reserved for root",
                              (unsigned long long)(avail >> 10), w->ring_count, keep);
                return -ENOSPC;
        }
        return rc;
}

int etl_writer_save_ring(struct etl_writer *w, const char *path, bool is_force,
                         int64_t end_filetime, struct etl_error *err)
{
        if (!w->ring) {
                etl_error_set(err, 0, "no in-memory buffers to save");
                return -EINVAL;
        }
        struct log_file_reserved r;
        int rc = log_file_reserve(&r, path, is_force, err);
        if (rc < 0)
                return rc;
        rc = etl_writer_save_ring_fd(w, r.fd, path, end_filetime, err);
        struct stat st;
        if (rc == -ENOSPC && fstat(r.fd, &st) == 0 && st.st_size > 0)
                log_file_release(&r); /* the newest buffers that fit: a file that reads */
        else if (rc < 0)
                log_file_unreserve(&r); /* the name, when it is still the file made here */
        else
                log_file_release(&r);
        return rc;
}
