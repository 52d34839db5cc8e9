/* SPDX-License-Identifier: MIT */
/* etl_writer.c: owns the .etl bytes etwtop writes (ETL-FORMAT.md 1.9) and where they go. */
#include "le_bytes.h"
#include "util/utf.h"
#include "etl_writer.h"
#include "etl_flush.h"
#include "log_file.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "etw/ntwmi.h"
#include "util/out_file.h"

#include "etl_pool.h"
#include "etl_writer_int.h"
#include "etl_parse.h"
#include "util/thread_sched.h"

/* The file sink off the caller's thread (etl_writer_set_async): a live session's logger must
   never wait for the disk, or the kernel's rings fill behind it. Completed buffers are copied to
   a queue that a thread writes in order, each followed by the header's counts. A full queue loses
   the buffer (BuffersLost), as ETW's logger does when its buffers run out. */
#define ASYNC_MIN_BYTES ((uint32_t)16 << 20) /* the flusher's queue holds at least this much */
/* The flusher writes what is queued in batches of consecutive buffers, one pwritev and one
   update of the header's counts a batch: woken by the first buffer queued, it waits up to
   FLUSH_GATHER_NS for more (a batch of them, FLUSH_BATCH_BYTES and at most a quarter of the
   queue, wake it at once), so that a busy session's 64 KiB buffers do not cost a wake-up, a
   file-system check and two writes each. A batch of 16 (1 MiB, 20 ms) was a quarter of a
   switch-heavy recording's CPU in the flusher: 90 wake-ups a second and each direct write's
   wait for its disk (bench/README.md, stop 75). */
#define FLUSH_BATCH_BYTES ((uint32_t)4 << 20)
#define FLUSH_GATHER_NS   80000000l
struct flusher {
        pthread_t thread;
        pthread_mutex_t lock;
        pthread_cond_t work, idle;
        bool is_stop, is_busy;
        bool is_hurried;      /* flusher_wait waits: no gathering until the queue is empty */
        uint8_t **bufs;       /* cap queued buffers, in order from head */
        uint64_t *indexes;    /* each one's buffer index in the file */
        uint64_t *timestamps; /* each one's latest record */
        uint32_t cap, head, count;
        uint32_t batch;  /* buffers a batch: written at once when this many wait */
        uint8_t **spare; /* written buffers kept for the next ones */
        uint32_t nr_spare;
        /* what reached the file, under lock */
        uint64_t nr_written; /* the file's buffers, header included */
        uint64_t last_timestamp;
        uint64_t nr_bytes;
        uint64_t nr_lost;
        uint64_t nr_queued, nr_done; /* buffers handed over, and written (or failed) */
        int error;                   /* the first errno */
        int full;                    /* enum log_file_full: the file takes no more */
        uint64_t avail_bytes;        /* the file system's space for users when it filled */
};

/* WMI_BUFFER_HEADER (ETL-FORMAT.md 1.2 and 1.9). */
void etl_writer_put_buffer_header(const struct etl_writer *w, uint8_t *b, uint32_t filled,
                                  uint64_t seq, uint16_t cpu, uint64_t timestamp, bool is_header)
{
        memset(b, 0, WMI_BUFFER_HEADER_SIZE);
        le_put32(b + 0x00, w->buffer_size);
        le_put32(b + 0x04, filled);
        le_put32(b + 0x08, filled);
        le_put64(b + 0x10, timestamp);
        le_put64(b + 0x18, seq);
        le_put16(b + 0x28, cpu);
        le_put16(b + 0x2A, w->cfg.logger_id);
        le_put32(b + 0x2C, BUFFER_STATE_FLUSH);
        le_put32(b + 0x30, filled);
        le_put16(b + 0x34, is_header ? WMI_BUFFER_FLAG_FLUSH_MARKER | WMI_BUFFER_FLAG_PROC_INDEX
                                     : WMI_BUFFER_FLAG_PROC_INDEX);
        le_put16(b + 0x36, is_header ? WMI_BUFFER_TYPE_HEADER : WMI_BUFFER_TYPE_GENERIC);
        /* 0xFF filler after the last record (1.3) */
        memset(b + filled, 0xFF, w->buffer_size - filled);
}

/* What the logfile header says beyond the writer's configuration. */

/* The TRACE_LOGFILE_HEADER (1.6) of the logfile header record at the start of header buffer
   hb. */
void etl_writer_put_logfile_header(const struct etl_writer *w, uint8_t *hb,
                                   const struct logfile_fields *f)
{
        uint8_t *p = hb + WMI_BUFFER_HEADER_SIZE + SYSTEM_HEADER_SIZE;
        const struct etl_writer_config *c = &w->cfg;
        memset(p, 0, LOGFILE_HEADER64_SIZE);
        le_put32(p + 0x00, w->buffer_size);
        p[0x04] = c->os_major;
        p[0x05] = c->os_minor;
        p[0x06] = 1; /* log file layout 1.5 */
        p[0x07] = 5;
        le_put32(p + 0x08, c->provider_version);
        le_put32(p + 0x0C, c->nr_cpus);
        le_put64(p + 0x10, (uint64_t)f->end_filetime);
        le_put32(p + 0x18, c->timer_resolution_100ns);
        le_put32(p + 0x1C, c->maximum_file_size_mb);
        le_put32(p + 0x20, c->log_file_mode);
        le_put32(p + 0x24, f->buffers_written);
        le_put32(p + 0x28, 1);
        le_put32(p + 0x2C, 8);
        le_put32(p + 0x30, f->events_lost);
        le_put32(p + 0x34, c->cpu_speed_mhz);
        memcpy(p + 0x48, &c->time_zone, sizeof(c->time_zone)); /* up to 0xF4; BootTime at 0xF8 */
        le_put64(p + 0xF8, (uint64_t)c->boot_filetime);
        le_put64(p + 0x100, c->perf_freq);
        le_put64(p + 0x108, (uint64_t)f->start_filetime);
        le_put32(p + 0x110, c->clock_type);
        le_put32(p + 0x114, f->buffers_lost);
}

static void header_buffer_finish(struct etl_writer *w, uint32_t buffers_written,
                                 int64_t end_filetime, uint32_t events_lost, uint32_t buffers_lost)
{
        struct logfile_fields f = {buffers_written, w->cfg.start_filetime, end_filetime,
                                   events_lost, buffers_lost};
        etl_writer_put_logfile_header(w, w->header, &f);
        etl_writer_put_buffer_header(w, w->header, w->header_filled, 0, 0, w->cfg.start_timestamp,
                                     true);
}

/* The wall time of a session-clock timestamp, as a reader computes it from the header
   (ETL-FORMAT.md 1.8). */
int64_t etl_writer_filetime_of(const struct etl_writer *w, uint64_t timestamp)
{
        const struct etl_writer_config *c = &w->cfg;
        __int128 delta = (__int128)timestamp - (__int128)c->start_timestamp;
        switch (c->clock_type) {
        case EVENT_TRACE_CLOCK_SYSTEMTIME: return (int64_t)timestamp;
        case EVENT_TRACE_CLOCK_CPUCYCLE:
                return c->start_filetime +
                       (int64_t)(delta * 10 / (c->cpu_speed_mhz ? c->cpu_speed_mhz : 1000));
        default:
                return c->start_filetime +
                       (int64_t)(delta * 10000000 /
                                 (__int128)(c->perf_freq ? c->perf_freq : 10000000));
        }
}

/* Zeroes the padding of a record of size bytes at r up to aligned (its size rounded up to 8;
   size >= 8): the last 8 bytes rewritten with the record's bytes kept, no call to memset (this
   runs for every record). */
static inline void pad_record(uint8_t *r, uint32_t size, uint32_t aligned)
{
        if (aligned == size)
                return;
        uint64_t last;
        memcpy(&last, r + aligned - 8, 8);
        last &= ~0ull >> (64 - 8 * (size & 7u)); /* the record's (size & 7) bytes, little-endian */
        memcpy(r + aligned - 8, &last, 8);
}

int etl_writer_new(struct etl_writer **out, const struct etl_writer_config *cfg)
{
        *out = NULL;
        uint32_t size =
                cfg->buffer_size_bytes ? cfg->buffer_size_bytes : ETL_WRITER_DEFAULT_BUFFER_SIZE;
        if (size < MIN_ETW_BUFFER_SIZE || size > MAX_ETW_BUFFER_SIZE || size % 8)
                return -EINVAL;
        if (cfg->nr_cpus == 0 || cfg->nr_cpus > ETW_PROCESSOR_INDEX_MASK + 1)
                return -EINVAL;
        struct etl_writer *w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->cfg = *cfg;
        w->cfg.logger_name = NULL;
        w->cfg.log_file_name = NULL;
        w->buffer_size = size;
        w->fd = -1;
        w->dir = (struct log_file_reserved)LOG_FILE_RESERVED_INIT;
        w->file_last_timestamp = cfg->start_timestamp;
        w->header = calloc(1, size);
        w->cpus = calloc(cfg->nr_cpus, sizeof(*w->cpus));
        if (!w->header || !w->cpus)
                goto nomem;
        w->orig = calloc(cfg->nr_cpus, sizeof(*w->orig));
        w->bufs = etl_flush_bufs_new(size);
        if (!w->orig || !w->bufs)
                goto nomem;
        /* each CPU's buffer at its first record (cpu_buffer_data): a perf.data of a 112-CPU
           machine converted here used one, and allocating the others took a third of a
           millisecond */
        for (uint32_t i = 0; i < cfg->nr_cpus; i++)
                w->cpus[i].filled = WMI_BUFFER_HEADER_SIZE;
        /* The logfile header record: SYSTEM64 header, TRACE_LOGFILE_HEADER, two names. */
        size_t n1 = strlen(cfg->logger_name ? cfg->logger_name : "");
        size_t n2 = strlen(cfg->log_file_name ? cfg->log_file_name : "");
        size_t need = SYSTEM_HEADER_SIZE + LOGFILE_HEADER64_SIZE + 4 * (n1 + n2 + 2);
        if (WMI_BUFFER_HEADER_SIZE + need > size || need > MAX_ETW_EVENT_SIZE) {
                etl_writer_free(w);
                return -EINVAL;
        }
        uint8_t *rec = w->header + WMI_BUFFER_HEADER_SIZE;
        uint32_t names = SYSTEM_HEADER_SIZE + LOGFILE_HEADER64_SIZE;
        names += utf8_to_utf16le(rec + names, cfg->logger_name);
        names += utf8_to_utf16le(rec + names, cfg->log_file_name);
        w->header_record_size = names;
        /* SYSTEM64 header, marker 0xC0020002: version 2, hook 0, kernel time 1 */
        le_put16(rec + 0, 2);
        rec[2] = TRACE_HEADER_TYPE_SYSTEM64;
        rec[3] = 0xC0;
        le_put16(rec + 4, (uint16_t)names);
        le_put16(rec + 6, WMI_LOG_TYPE_HEADER);
        le_put32(rec + 8, cfg->header_tid);
        le_put32(rec + 12, cfg->header_pid);
        le_put64(rec + 16, cfg->start_timestamp);
        le_put32(rec + 24, 1);
        le_put32(rec + 28, 0);
        w->header_filled = WMI_BUFFER_HEADER_SIZE + ((names + 7u) & ~7u);
        header_buffer_finish(w, 1, 0, 0, 0);
        *out = w;
        return 0;
nomem:
        etl_writer_free(w);
        return -ENOMEM;
}

/* Rewrites, in place, the file header's EndTime and BuffersWritten (and the fields between:
   one small write) from what has reached the file: a file cut short by kill -9 says how many
   buffers it holds to a reader that trusts BuffersWritten, and when its last event was. Windows
   leaves EndTime 0 until the session stops ("may be 0 ... from a log file to which the provider
   is still logging", TRACE_LOGFILE_HEADER); a reader that accepts 0 accepts the time of the
   latest event as well. Called after a buffer has been written, never before: the header never
   counts a buffer the file does not hold. */
static int header_counts_write(struct etl_writer *w, uint64_t last_timestamp, uint64_t nr_buffers)
{
        /* ETL-FORMAT.md 1.6: EndTime at 0x10 .. BuffersWritten at 0x24 */
        const uint32_t at = WMI_BUFFER_HEADER_SIZE + SYSTEM_HEADER_SIZE + 0x10;
        uint8_t f[0x28 - 0x10];
        memcpy(f, w->header + at, sizeof(f));
        le_put64(f, (uint64_t)etl_writer_filetime_of(w, last_timestamp));
        le_put32(f + (0x24 - 0x10), (uint32_t)nr_buffers);
        return etl_write_all(w->fd, f, sizeof(f), at);
}

static void file_header_sync(struct etl_writer *w)
{
        if (w->fd < 0 || w->stats.write_error)
                return;
        int rc = header_counts_write(w, w->file_last_timestamp, w->nr_file_buffers);
        if (rc < 0)
                w->stats.write_error = -rc;
}

static void *flusher_main(void *arg)
{
        struct etl_writer *w = arg;
        thread_name_self("etwtop-flusher");
        struct flusher *f = w->flusher;
        pthread_mutex_lock(&f->lock);
        for (;;) {
                while (!f->count && !f->is_stop)
                        pthread_cond_wait(&f->work, &f->lock);
                if (!f->count) {
                        pthread_cond_broadcast(&f->idle);
                        break; /* stopped, and nothing is left */
                }
                if (f->count < f->batch && !f->is_stop && !f->is_hurried) {
                        /* a batch: what else comes in a moment is written with it */
                        struct timespec until;
                        clock_gettime(CLOCK_MONOTONIC, &until);
                        until.tv_nsec += FLUSH_GATHER_NS;
                        if (until.tv_nsec >= 1000000000l) {
                                until.tv_sec++;
                                until.tv_nsec -= 1000000000l;
                        }
                        pthread_cond_clockwait(&f->work, &f->lock, CLOCK_MONOTONIC, &until);
                }
                f->is_busy = true;
                uint8_t *bufs[ETL_FLUSH_BATCH_MAX];
                uint64_t ts[ETL_FLUSH_BATCH_MAX] = {0}, first = 0;
                uint32_t k = 0;
                /* the queue's buffers are consecutive in the file */
                first = f->indexes[f->head];
                while (f->count && k < f->batch && f->indexes[f->head] == first + k) {
                        bufs[k] = f->bufs[f->head];
                        ts[k++] = f->timestamps[f->head];
                        f->head = (f->head + 1) % f->cap;
                        f->count--;
                }
                int error = f->error || f->full;
                /* half the queue waiting: through the page cache, which takes a burst at the
                   speed of a copy where a slow disk would hold the queue up until it loses */
                w->ahead.is_behind = f->count >= f->cap / 2;
                pthread_mutex_unlock(&f->lock);
                int rc = 0, full = 0;
                uint64_t avail = 0, last = f->last_timestamp;
                uint32_t done = 0;
                if (!error && k)
                        rc = etl_flush_batch(w->fd, bufs, k, w->buffer_size, first,
                                             w->cfg.max_file_bytes, &w->ahead, &done, &full,
                                             &avail);
                for (uint32_t i = 0; i < done; i++)
                        last = ts[i] > last ? ts[i] : last;
                /* the header's counts: what reached the file (a failed batch's too) */
                int rc_hdr = done ? header_counts_write(w, last, first + done) : 0;
                rc = rc < 0 ? rc : rc_hdr;
                pthread_mutex_lock(&f->lock);
                if (rc < 0 && !f->error)
                        f->error = -rc;
                if (full && !f->full) {
                        f->full = full;
                        f->avail_bytes = avail;
                }
                if (done) {
                        f->nr_written = first + done;
                        if (last > f->last_timestamp)
                                f->last_timestamp = last;
                        f->nr_bytes += (uint64_t)done * w->buffer_size;
                }
                for (uint32_t i = 0; i < k; i++) {
                        f->nr_done++;
                        if (f->nr_spare < f->cap)
                                f->spare[f->nr_spare++] = bufs[i];
                        else
                                etl_flush_bufs_give(w->bufs, bufs[i]);
                }
                f->is_busy = false;
                if (!f->count) {
                        f->is_hurried = false;
                        pthread_cond_broadcast(&f->idle);
                }
        }
        pthread_mutex_unlock(&f->lock);
        return NULL;
}

/* Waits until the flusher has written everything queued, and takes
   what it did into the writer's own counts. */
static void flusher_wait(struct etl_writer *w)
{
        struct flusher *f = w->flusher;
        if (!f)
                return;
        pthread_mutex_lock(&f->lock);
        if (f->count || f->is_busy) {
                f->is_hurried = true; /* a batch being gathered is written now */
                pthread_cond_signal(&f->work);
        }
        while (f->count || f->is_busy)
                pthread_cond_wait(&f->idle, &f->lock);
        if (f->error && !w->stats.write_error)
                w->stats.write_error = f->error;
        if (f->full && !w->stats.full) {
                w->stats.full = f->full;
                w->stats.fs_avail_bytes = f->avail_bytes;
        }
        if (f->nr_written > w->nr_file_buffers)
                w->nr_file_buffers = f->nr_written;
        if (f->last_timestamp > w->file_last_timestamp)
                w->file_last_timestamp = f->last_timestamp;
        pthread_mutex_unlock(&f->lock);
}

/* Hands cpu's buffer to the flusher: false when its queue is full (the buffer is lost). With
   is_taken the buffer itself goes (the CPU goes on in a written one), else a copy of it. */
static bool flusher_queue(struct etl_writer *w, uint32_t cpu, bool is_taken)
{
        struct cpu_buffer *cb = &w->cpus[cpu];
        struct flusher *f = w->flusher;
        pthread_mutex_lock(&f->lock);
        if (f->count == f->cap) {
                f->nr_lost++;
                pthread_mutex_unlock(&f->lock);
                return false;
        }
        uint8_t *copy = f->nr_spare ? f->spare[--f->nr_spare] : NULL;
        pthread_mutex_unlock(&f->lock);
        if (!copy) /* aligned: the flusher may write it with O_DIRECT */
                copy = etl_flush_bufs_take(w->bufs);
        if (!copy) {
                pthread_mutex_lock(&f->lock);
                f->nr_lost++;
                pthread_mutex_unlock(&f->lock);
                return false;
        }
        if (is_taken) {
                /* the writer owns the CPU's buffer through orig: the other one now */
                uint8_t *full = cb->data;
                cb->data = w->orig[cpu] = copy;
                copy = full;
        } else {
                memcpy(copy, cb->data, w->buffer_size);
        }
        pthread_mutex_lock(&f->lock);
        uint32_t slot = (f->head + f->count) % f->cap;
        f->bufs[slot] = copy;
        f->indexes[slot] = w->nr_queued_buffers++;
        f->timestamps[slot] = cb->last_timestamp;
        f->count++;
        f->nr_queued++;
        /* the first buffer starts a batch, a whole one is written at once */
        if (f->count == 1 || f->count >= f->batch)
                pthread_cond_signal(&f->work);
        pthread_mutex_unlock(&f->lock);
        return true;
}

static void flusher_free(struct etl_writer *w, struct flusher *f)
{
        for (uint32_t i = 0; i < f->nr_spare; i++)
                etl_flush_bufs_give(w->bufs, f->spare[i]);
        free(f->spare);
        free(f->bufs);
        free(f->indexes);
        free(f->timestamps);
        free(f);
}

static void flusher_stop(struct etl_writer *w)
{
        struct flusher *f = w->flusher;
        if (!f)
                return;
        flusher_wait(w);
        pthread_mutex_lock(&f->lock);
        f->is_stop = true;
        pthread_cond_signal(&f->work);
        pthread_mutex_unlock(&f->lock);
        pthread_join(f->thread, NULL);
        w->stats.nr_buffers_lost += f->nr_lost;
        w->stats.nr_bytes_written += f->nr_bytes;
        pthread_cond_destroy(&f->work);
        pthread_cond_destroy(&f->idle);
        pthread_mutex_destroy(&f->lock);
        flusher_free(w, f);
        w->flusher = NULL;
}

int etl_writer_set_async(struct etl_writer *w, uint32_t max_queued)
{
        if (w->fd < 0 || w->flusher || !max_queued || w->place)
                return -EINVAL;
        if (max_queued < ASYNC_MIN_BYTES / w->buffer_size)
                max_queued = ASYNC_MIN_BYTES / w->buffer_size;
        struct flusher *f = calloc(1, sizeof(*f));
        if (!f)
                return -ENOMEM;
        f->cap = max_queued;
        f->batch = FLUSH_BATCH_BYTES / w->buffer_size;
        f->batch = f->batch > ETL_FLUSH_BATCH_MAX ? ETL_FLUSH_BATCH_MAX : f->batch;
        f->batch = f->batch > max_queued / 4 ? max_queued / 4 : f->batch;
        f->batch = f->batch ? f->batch : 1;
        f->bufs = calloc(max_queued, sizeof(*f->bufs));
        f->spare = calloc(max_queued, sizeof(*f->spare));
        f->indexes = calloc(max_queued, sizeof(*f->indexes));
        f->timestamps = calloc(max_queued, sizeof(*f->timestamps));
        f->nr_written = w->nr_file_buffers;
        f->last_timestamp = w->file_last_timestamp;
        if (!f->bufs || !f->spare || !f->indexes || !f->timestamps) {
                flusher_free(w, f);
                return -ENOMEM;
        }
        pthread_mutex_init(&f->lock, NULL);
        pthread_cond_init(&f->work, NULL);
        pthread_cond_init(&f->idle, NULL);
        w->nr_queued_buffers = w->nr_file_buffers;
        /* the buffers the flusher writes with O_DIRECT: huge pages, one pin a huge page */
        etl_flush_bufs_set_huge(w->bufs, true);
        w->flusher = f;
        int rc = pthread_create(&f->thread, NULL, flusher_main, w);
        if (rc != 0) {
                pthread_cond_destroy(&f->work);
                pthread_cond_destroy(&f->idle);
                pthread_mutex_destroy(&f->lock);
                flusher_free(w, f);
                w->flusher = NULL;
                return -rc;
        }
        return 0;
}

int etl_writer_open_file(struct etl_writer *w, const char *path, bool is_force,
                         struct etl_error *err)
{
        if (w->fd >= 0) {
                etl_error_set(err, 0, "the writer already has a file");
                return -EBUSY;
        }
        struct log_file_reserved r;
        int rc = log_file_reserve(&r, path, is_force, err);
        if (rc < 0)
                return rc;
        uint64_t avail;
        rc = log_file_room(r.fd, w->buffer_size, w->buffer_size, 0, &avail) ? -ENOSPC : 0;
        if (rc < 0)
                log_file_full_text(err->msg, sizeof(err->msg), LOG_FILE_FULL_DISK, path, 0, avail);
        else if ((rc = etl_write_all(r.fd, w->header, w->buffer_size, 0)) < 0)
                etl_error_set(err, 0, "writing %s: %s", path, strerror(-rc));
        if (rc < 0) {
                log_file_unreserve(&r); /* the name, when it is still the file made here */
                return rc;
        }
        log_file_release(&w->dir); /* an earlier file's */
        w->fd = r.fd;
        r.fd = -1;
        w->dir = r;
        w->stats.full = 0;
        w->ahead = (struct etl_flush_ahead){0};
        w->nr_file_buffers = 1;
        w->stats.nr_bytes_written = w->buffer_size;
        return 0;
}

int etl_writer_set_ring(struct etl_writer *w, size_t max_bytes)
{
        if (w->place)
                return -EINVAL; /* placed buffers are not the writer's to keep */
        uint32_t slots = (uint32_t)(max_bytes / w->buffer_size);
        if (slots == 0)
                slots = 1;
        uint8_t **ring = calloc(slots, sizeof(*ring));
        if (!ring)
                return -ENOMEM;
        /* the old ring's buffers are reused as they are; any it had beyond the new one's
           slots stay unused in their chunks until the writer is freed */
        for (uint32_t i = 0; w->ring && i < w->ring_slots && i < slots; i++)
                ring[i] = w->ring[i];
        free(w->ring);
        w->ring = ring;
        w->ring_slots = slots;
        w->ring_next = 0;
        w->ring_count = 0;
        return 0;
}

int etl_writer_set_pool(struct etl_writer *w, struct etl_pool *pool)
{
        if (!w->ring || w->place || w->pool || etl_pool_buffer_size(pool) != w->buffer_size)
                return -EINVAL;
        w->pool = etl_pool_ref(pool);
        return 0;
}

struct etl_pool *etl_writer_pool(const struct etl_writer *w)
{
        return w->pool;
}

/* A buffer for the ring, cut from the pool or else a chunk; NULL when there is no memory. */
static uint8_t *ring_buffer_new(struct etl_writer *w)
{
        if (w->pool) {
                int64_t i = etl_pool_take(w->pool);
                if (i >= 0)
                        return etl_pool_at(w->pool, (uint32_t)i);
        }
        struct ring_chunk *c = w->chunks;
        if (!c || c->used + w->buffer_size > RING_CHUNK) {
                size_t bytes = RING_CHUNK < w->buffer_size ? w->buffer_size : RING_CHUNK;
                c = calloc(1, sizeof(*c));
                if (!c)
                        return NULL;
                /* its pages made at once, one call for the chunk, where the logger's first
                   writes in each page faulted it in (the session's first 64 MiB, a minute of a
                   busy screen's; on a VM whose faults trap to the hypervisor, 5.7% of the screen
                   and its host's CPU, bench/README.md, stop 55) */
                void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
                if (m == MAP_FAILED) {
                        free(c);
                        return NULL;
                }
                c->mem = m;
                c->size = bytes;
                c->next = w->chunks;
                w->chunks = c;
        }
        uint8_t *b = c->mem + c->used;
        c->used += w->buffer_size;
        return b;
}

/* One of the pool's buffers in place of b, where the pool has one left; else b. */
static uint8_t *pool_buffer_or(struct etl_writer *w, uint8_t *b)
{
        int64_t i = etl_pool_take(w->pool);
        return i >= 0 ? etl_pool_at(w->pool, (uint32_t)i) : b;
}

/* The buffer pushed out of the ring, b, is pinned (a consumer reads it): set aside, and one set
   aside before that is free again in its place, or NULL (the caller cuts a new one). */
static uint8_t *ring_trade_held(struct etl_writer *w, uint8_t *b)
{
        for (uint32_t i = 0; i < w->nr_held; i++) {
                if (!etl_pool_is_pinned(w->pool, w->held[i])) {
                        uint8_t *free_one = w->held[i];
                        w->held[i] = b;
                        return free_one;
                }
        }
        if (w->nr_held == w->held_cap) {
                uint32_t cap = w->held_cap ? 2 * w->held_cap : 16;
                uint8_t **held = realloc(w->held, cap * sizeof(*held));
                if (!held)
                        return NULL; /* b stays the pool's, unused, until the pool goes */
                w->held = held;
                w->held_cap = cap;
        }
        w->held[w->nr_held++] = b;
        return NULL;
}

void etl_writer_set_buffer_callback(struct etl_writer *w, etl_writer_buffer_fn fn, void *ctx)
{
        w->callback = fn;
        w->callback_ctx = ctx;
}

int etl_writer_set_buffer_place(struct etl_writer *w, etl_writer_place_fn fn, void *ctx)
{
        for (uint32_t i = 0; i < w->cfg.nr_cpus; i++)
                if (w->cpus[i].data)
                        return -EINVAL; /* a record was written already */
        if (w->ring || w->flusher)
                return -EINVAL;
        w->place = fn;
        w->place_ctx = ctx;
        return 0;
}

/* Completes cpu's buffer and hands it to every sink. */
static int complete_buffer(struct etl_writer *w, uint32_t cpu)
{
        struct cpu_buffer *cb = &w->cpus[cpu];
        int rc = 0;
        if (cb->filled == WMI_BUFFER_HEADER_SIZE)
                return 0;
        /* the timestamp of every header type sits at +8 (PERFINFO) or +16 (the others) */
        const uint8_t *last = cb->data + cb->last_at;
        cb->last_timestamp = le_get64(last + etl_record_timestamp_offset(last));
        etl_writer_put_buffer_header(w, cb->data, cb->filled, ++w->next_sequence, (uint16_t)cpu,
                                     cb->last_timestamp, false);
        bool is_async = w->flusher && w->fd >= 0 && !w->stats.write_error && !w->stats.full;
        if (!is_async && w->fd >= 0 && !w->stats.write_error && !w->stats.full) {
                w->stats.full = (int)log_file_room(w->fd, (w->nr_file_buffers + 1) * w->buffer_size,
                                                   w->buffer_size, w->cfg.max_file_bytes,
                                                   &w->stats.fs_avail_bytes);
                rc = w->stats.full ? 0
                                   : etl_write_all(w->fd, cb->data, w->buffer_size,
                                                   (off_t)(w->nr_file_buffers * w->buffer_size));
                if (w->stats.full) {
                        /* the file is at its limit: it keeps what it holds */
                } else if (rc < 0) {
                        /* a full disk: what was written stays valid, the header is fixed at
                           close to the buffers that made it */
                        w->stats.write_error = -rc;
                } else {
                        w->nr_file_buffers++;
                        w->stats.nr_bytes_written += w->buffer_size;
                        if (cb->last_timestamp > w->file_last_timestamp)
                                w->file_last_timestamp = cb->last_timestamp;
                        file_header_sync(w);
                }
        }
        if (w->callback)
                w->callback(w->callback_ctx, cb->data, w->buffer_size);
        /* after the callback, which reads the buffer: without a ring to keep it, the flusher
           takes the buffer itself rather than a copy (a 64 KiB memcpy a buffer) */
        if (is_async)
                flusher_queue(w, cpu, !w->ring); /* a full queue loses it (BuffersLost) */
        if (w->place) {
                cb->data = NULL; /* it stays where it lies: the next record asks for another */
        } else if (w->ring) {
                /* the buffer joins the ring; the CPU goes on in the one it pushes out */
                uint8_t **slot = &w->ring[w->ring_next];
                uint8_t *next = *slot;
                /* one a consumer still reads is not written until it lets go; one not of
                   the pool (a CPU's first, made before it) makes way for one that is, where
                   the pool has one, so that a consumer reads every buffer in place (it stays
                   the writer's, unused, until the writer goes) */
                if (next && w->pool && etl_pool_is_pinned(w->pool, next))
                        next = ring_trade_held(w, next);
                else if (next && w->pool && etl_pool_index(w->pool, next) < 0)
                        next = pool_buffer_or(w, next);
                if (!next)
                        next = ring_buffer_new(w);
                if (next) {
                        *slot = cb->data;
                        cb->data = next;
                        w->ring_next = (w->ring_next + 1) % w->ring_slots;
                        if (w->ring_count < w->ring_slots)
                                w->ring_count++;
                }
        }
        w->stats.nr_buffers_written++;
        cb->filled = WMI_BUFFER_HEADER_SIZE;
        return rc;
}

/* cpu's buffer, allocated at its first use; NULL when out of memory. */
static uint8_t *cpu_buffer_data(struct etl_writer *w, uint32_t cpu)
{
        struct cpu_buffer *cb = &w->cpus[cpu];
        if (!cb->data && w->place)
                cb->data = w->place(w->place_ctx, cpu);
        else if (!cb->data && w->pool)
                cb->data = ring_buffer_new(w); /* a consumer reads it in place too */
        else if (!cb->data)
                cb->data = w->orig[cpu] = etl_flush_bufs_take(w->bufs);
        return cb->data;
}

int etl_writer_append(struct etl_writer *w, uint32_t cpu, const void *record, uint32_t size)
{
        uint32_t aligned = (size + 7u) & ~7u;
        if (size < 8 || size > MAX_ETW_EVENT_SIZE ||
            aligned > w->buffer_size - WMI_BUFFER_HEADER_SIZE) {
                w->stats.nr_events_dropped++;
                return -E2BIG;
        }
        if (cpu == ETL_WRITER_HEADER_CPU) {
                if (w->header_filled + aligned > w->buffer_size)
                        return -ENOSPC;
                flusher_wait(w); /* it reads the header's counts as it writes */
                memcpy(w->header + w->header_filled, record, size);
                memset(w->header + w->header_filled + size, 0, aligned - size);
                w->header_filled += aligned;
                w->stats.nr_events++;
                /* without a file the header buffer alone is the trace so far */
                header_buffer_finish(w, w->nr_file_buffers ? (uint32_t)w->nr_file_buffers : 1, 0, 0,
                                     0);
                if (w->fd >= 0 && !w->stats.write_error) {
                        int rc = etl_write_all(w->fd, w->header, w->buffer_size, 0);
                        if (rc < 0)
                                w->stats.write_error = -rc;
                        file_header_sync(w); /* the in-memory header's EndTime is 0 */
                }
                return 0;
        }
        if (cpu >= w->cfg.nr_cpus)
                return -EINVAL;
        struct cpu_buffer *cb = &w->cpus[cpu];
        int rc = 0;
        if (cb->data && cb->filled + aligned > w->buffer_size)
                rc = complete_buffer(w, cpu);
        if (!cpu_buffer_data(w, cpu)) /* its first, or a placed buffer's next */
                return -ENOMEM;
        memcpy(cb->data + cb->filled, record, size);
        pad_record(cb->data + cb->filled, size, aligned);
        cb->last_at = cb->filled;
        cb->filled += aligned;
        w->stats.nr_events++;
        return rc;
}

/* etl_writer_reserve when the record may not fit (or the buffer is not there yet): apart, so
   that the common case is a few instructions without a frame. */
static __attribute__((noinline)) uint8_t *reserve_slow(struct etl_writer *w, uint32_t cpu,
                                                       uint32_t max_size, int *rc)
{
        uint32_t aligned = (max_size + 7u) & ~7u;
        if (max_size < 8 || max_size > MAX_ETW_EVENT_SIZE ||
            aligned > w->buffer_size - WMI_BUFFER_HEADER_SIZE || cpu >= w->cfg.nr_cpus)
                return NULL;
        struct cpu_buffer *cb = &w->cpus[cpu];
        if (cb->data && cb->filled + aligned > w->buffer_size)
                *rc = complete_buffer(w, cpu);
        if (!cpu_buffer_data(w, cpu)) /* its first, or a placed buffer's next */
                return NULL;
        return cb->data + cb->filled;
}

/* The room at the end of cpu's buffer for a record of at most max_size bytes when it fits
   there (8 to MAX_ETW_EVENT_SIZE bytes; a buffer that has room for it has room for it after
   the header), else NULL: both reserves' common case, a few instructions without a frame (this
   runs for every record a live session writes). */
static inline __attribute__((always_inline)) uint8_t *room_in(struct etl_writer *w, uint32_t cpu,
                                                              uint32_t max_size)
{
        if (__builtin_expect(cpu < w->cfg.nr_cpus && max_size - 8u <= MAX_ETW_EVENT_SIZE - 8u, 1)) {
                struct cpu_buffer *cb = &w->cpus[cpu];
                if (__builtin_expect(
                            cb->data && cb->filled + ((max_size + 7u) & ~7u) <= w->buffer_size, 1))
                        return cb->data + cb->filled;
        }
        return NULL;
}

uint8_t *etl_writer_reserve(struct etl_writer *w, uint32_t cpu, uint32_t max_size, int *rc)
{
        *rc = 0;
        uint8_t *room = room_in(w, cpu, max_size);
        return room ? room : reserve_slow(w, cpu, max_size, rc);
}

/* etl_writer_sink_reserve when the record may not fit: its failed completion counted. */
static __attribute__((noinline)) uint8_t *sink_reserve_slow(struct etl_writer *w, uint32_t cpu,
                                                            uint32_t max_size)
{
        int rc = 0;
        uint8_t *room = reserve_slow(w, cpu, max_size, &rc);
        if (rc < 0)
                w->stats.nr_reserve_failures++;
        return room;
}

uint8_t *etl_writer_sink_reserve(void *ctx, uint32_t cpu, uint32_t max_size)
{
        struct etl_writer *w = ctx;
        uint8_t *room = room_in(w, cpu, max_size);
        return room ? room : sink_reserve_slow(w, cpu, max_size);
}

/* The record of size bytes at the end of cpu's buffer appended (the caller reserved its room:
   cpu is in range). */
static inline __attribute__((always_inline)) void commit_at(struct etl_writer *w, uint32_t cpu,
                                                            uint32_t size)
{
        struct cpu_buffer *cb = &w->cpus[cpu];
        uint32_t aligned = (size + 7u) & ~7u;
        uint8_t *r = cb->data + cb->filled;
        pad_record(r, size, aligned);
        cb->last_at = cb->filled;
        cb->filled += aligned;
        w->stats.nr_events++;
}

void etl_writer_commit(struct etl_writer *w, uint32_t cpu, uint32_t size)
{
        if (size >= 8 && cpu < w->cfg.nr_cpus)
                commit_at(w, cpu, size);
}

uint8_t *etl_writer_sink_room(void *ctx, uint32_t cpu, uint32_t max_size)
{
        /* no upper bound on max_size but the buffer's: it may hold several records */
        struct etl_writer *w = ctx;
        if (__builtin_expect(cpu < w->cfg.nr_cpus && max_size >= 8, 1)) {
                struct cpu_buffer *cb = &w->cpus[cpu];
                if (cb->data &&
                    (uint64_t)cb->filled + ((max_size + 7ull) & ~7ull) <= w->buffer_size)
                        return cb->data + cb->filled;
        }
        return NULL;
}

void etl_writer_sink_commit(void *ctx, uint32_t cpu, uint32_t size)
{
        /* the converter commits only what its reserve gave room for (cpu checked there); size
           0 commits nothing */
        if (size >= 8)
                commit_at(ctx, cpu, size);
}

int etl_writer_flush(struct etl_writer *w)
{
        int first = 0;
        for (uint32_t i = 0; i < w->cfg.nr_cpus; i++) {
                int rc = complete_buffer(w, i);
                if (rc < 0 && !first)
                        first = rc;
        }
        /* The buffers go to the file (the page cache, which a killed process does not take with
           it; the header's counts follow them), not to the disk: ETW's FlushTimer and FLUSH
           deliver the buffers, and perf record syncs nothing at all. The kernel writes the
           pages back (dirty_expire_centisecs, 30 s by default) and the close syncs the file.
           (An fdatasync at each flush, a second apart, was 3.9% of a busy recorder's CPU.) */
        if (w->flusher) {
                /* the flusher's error shows in the stats */
                struct flusher *f = w->flusher;
                pthread_mutex_lock(&f->lock);
                if (f->error && !w->stats.write_error)
                        w->stats.write_error = f->error;
                pthread_mutex_unlock(&f->lock);
        }
        return first;
}

int etl_writer_close(struct etl_writer *w, int64_t end_filetime, uint32_t events_lost,
                     uint32_t buffers_lost)
{
        int rc = etl_writer_flush(w);
        flusher_stop(w); /* everything queued is in the file */
        if (w->fd < 0)
                return rc;
        /* never before the last event, whatever the wall clock did meanwhile */
        int64_t last = etl_writer_filetime_of(w, w->file_last_timestamp);
        header_buffer_finish(w, (uint32_t)w->nr_file_buffers,
                             end_filetime > last ? end_filetime : last, events_lost, buffers_lost);
        int hrc = etl_write_all(w->fd, w->header, w->buffer_size, 0);
        if (hrc < 0 && !rc)
                rc = hrc;
        /* the file's size is what was written: the blocks allocated past it go back */
        hrc = etl_flush_release_ahead(w->fd, &w->ahead);
        if (hrc < 0 && !rc)
                rc = hrc;
        if (!w->cfg.is_scratch && fsync(w->fd) < 0 && !rc && errno != EINVAL)
                rc = -errno;
        if (close(w->fd) < 0 && !rc)
                rc = -errno;
        w->fd = -1;
        log_file_release(&w->dir);
        if (!rc && w->stats.write_error)
                rc = -w->stats.write_error;
        return rc;
}

void etl_writer_remove_file(struct etl_writer *w)
{
        flusher_stop(w);
        if (w->fd < 0)
                return;
        etl_flush_release_ahead(w->fd, &w->ahead); /* and its O_DIRECT descriptor */
        w->dir.fd = w->fd; /* the reserved file again: removed only when the name is still it */
        w->fd = -1;
        log_file_unreserve(&w->dir);
}

void etl_writer_get_stats(const struct etl_writer *w, struct etl_writer_stats *st)
{
        *st = w->stats;
        st->nr_file_buffers = w->nr_file_buffers;
        st->nr_ring_buffers = w->ring_count;
        struct flusher *f = w->flusher;
        if (f) {
                pthread_mutex_lock(&f->lock);
                st->nr_file_buffers = f->nr_written;
                st->nr_bytes_written += f->nr_bytes;
                st->nr_buffers_lost += f->nr_lost;
                st->nr_buffers_in_flight = f->nr_queued - f->nr_done;
                if (f->error && !st->write_error)
                        st->write_error = f->error;
                if (f->full && !st->full) {
                        st->full = f->full;
                        st->fs_avail_bytes = f->avail_bytes;
                }
                pthread_mutex_unlock(&f->lock);
        }
}

const uint8_t *etl_writer_header(const struct etl_writer *w, uint32_t *size_bytes)
{
        *size_bytes = w->buffer_size;
        return w->header;
}

const uint8_t *etl_writer_header_closed(struct etl_writer *w, uint32_t nr_buffers,
                                        uint64_t last_timestamp, uint32_t *size_bytes)
{
        if (last_timestamp < w->cfg.start_timestamp)
                last_timestamp = w->cfg.start_timestamp;
        header_buffer_finish(w, nr_buffers, etl_writer_filetime_of(w, last_timestamp), 0, 0);
        *size_bytes = w->buffer_size;
        return w->header;
}

void etl_writer_free(struct etl_writer *w)
{
        if (!w)
                return;
        flusher_stop(w);
        if (w->fd >= 0) {
                etl_flush_release_ahead(w->fd, &w->ahead);
                close(w->fd);
        }
        log_file_release(&w->dir);
        while (w->chunks) {
                struct ring_chunk *c = w->chunks;
                w->chunks = c->next;
                munmap(c->mem, c->size);
                free(c);
        }
        etl_pool_unref(w->pool);
        free(w->held);
        free(w->orig);
        etl_flush_bufs_free(w->bufs); /* the CPUs' buffers, the flusher's spares */
        free(w->cpus);
        free(w->header);
        free(w->ring);
        free(w);
}
