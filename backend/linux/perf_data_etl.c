/* SPDX-License-Identifier: MIT */
/* perf_data_etl.c: a perf.data file as an .etl: written converted (--merge), opened for the
   consumer (OpenTrace, CreateMergedTraceFile) converted into memory, and the line that says
   where it came from. */
#include "perf_data_conv.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "etw/etwtop_ext.h"
#include "etw/evntrace.h"
#include "le_bytes.h"
#include "perf_data_mem.h"

#define FILETIME_UNIX 116444736000000000ll /* 1970-01-01 in 100 ns since 1601 */

/* Appends to buf[0..size) at *len what fmt says, cut at the end of buf. */
static void appendf(char *buf, size_t size, size_t *len, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static void appendf(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
        if (*len + 1 >= size)
                return;
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(buf + *len, size - *len, fmt, ap);
        va_end(ap);
        if (n > 0)
                *len = *len + (size_t)n < size ? *len + (size_t)n : size - 1;
}

void perf_data_origin(const struct perf_data *pd, char *buf, size_t size)
{
        const struct perf_data_info *in = perf_data_info(pd);
        size_t len = 0;
        if (!size)
                return;
        buf[0] = '\0';
        appendf(buf, size, &len, "perf.data of %s",
                in->hostname ? in->hostname : "an unknown host");
        if (in->osrelease)
                appendf(buf, size, &len, ", Linux %s", in->osrelease);
        if (in->cpudesc)
                appendf(buf, size, &len, ", %s", in->cpudesc);
        else if (in->cpuid)
                appendf(buf, size, &len, ", %s", in->cpuid);
        /* the events as far as they fit before the command line (a third of the room at
           most): `perf record -e 'syscalls:*'` has hundreds; --dump's CollectionStarts name
           every one */
        size_t cmd_room = in->cmdline ? strlen(in->cmdline) + 11 : 0;
        if (cmd_room > size / 3)
                cmd_room = size / 3;
        size_t limit = size - 1 > cmd_room + 32 ? size - 1 - cmd_room - 32 : 0;
        const char *sep = "; events: ";
        uint32_t nr = perf_data_nr_events(pd), nr_left = 0;
        for (uint32_t i = 0; i < nr; i++) {
                const struct perf_data_event *ev = perf_data_event(pd, i);
                if (ev->attr.type == PERF_TYPE_SOFTWARE && ev->attr.config == PERF_COUNT_SW_DUMMY)
                        continue;
                if (nr_left) {
                        nr_left++;
                        continue;
                }
                char part[192], name[64];
                size_t n = 0;
                perf_data_event_name(ev, name, sizeof(name));
                appendf(part, sizeof(part), &n, "%s%s", sep, name);
                if (ev->attr.freq && ev->attr.sample_freq)
                        appendf(part, sizeof(part), &n, " (%llu Hz)",
                                (unsigned long long)ev->attr.sample_freq);
                else if (ev->attr.sample_period)
                        appendf(part, sizeof(part), &n, " (period %llu)",
                                (unsigned long long)ev->attr.sample_period);
                else if (perf_data_sampling_leader(pd, i) >= 0) {
                        char leader[64];
                        perf_data_event_name(
                                perf_data_event(pd, (uint32_t)perf_data_sampling_leader(pd, i)),
                                leader, sizeof(leader));
                        appendf(part, sizeof(part), &n, " (read at %s's samples)", leader);
                } else {
                        appendf(part, sizeof(part), &n,
                                " (counted, not sampled)"); /* perf stat record */
                }
                if (len + n > limit && *sep == ',') {
                        nr_left = 1;
                        continue;
                }
                appendf(buf, size, &len, "%s", part);
                sep = ", ";
        }
        if (nr_left)
                appendf(buf, size, &len, " and %u more", nr_left);
        if (in->cmdline)
                appendf(buf, size, &len, "; command: %s", in->cmdline);
        /* the file's strings, shown on a terminal: no control characters */
        for (size_t i = 0; i < len; i++)
                if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
                        buf[i] = ' ';
}

/* An .etl made in memory (perf_data_etl_reader_open): the header buffer's room, then the data
   buffers; shared by the kept conversion and the readers over it (refs, under last.lock),
   unmapped at the last release. The writer writes each buffer where the image keeps it
   (image_place), in the order the CPUs start them, rather than completing it elsewhere and
   having it copied in (a third of a small file's conversion was that copy). */
struct etl_image {
        struct perf_data_mem mem;
        uint32_t nr_buffers; /* data buffers completed */
        uint64_t last_timestamp;
        int error;
        int refs;
        /* the buffers placed, in order: the first nr_room in mem after the header's room (the
           room reserved before the conversion: mem must not move while the writer writes
           into it), any after those in buffers of their own (extra) until image_finish */
        uint32_t header_size, buffer_size;
        uint32_t nr_room, nr_slots;
        uint8_t *is_done; /* owned: per slot, whether the writer completed it */
        uint8_t **extra;  /* owned: slot nr_room + i's buffer, each owned */
        uint32_t nr_extra, slots_cap, extra_cap;
};

static void *grow(void *p, uint32_t *cap, uint32_t need, size_t elem)
{
        if (need <= *cap)
                return p;
        uint32_t n = *cap ? *cap * 2 : 64;
        while (n < need)
                n *= 2;
        void *q = realloc(p, (size_t)n * elem);
        if (q)
                *cap = n;
        return q;
}

/* The writer's place for a CPU's next buffer: the next slot. */
static uint8_t *image_place(void *ctx, uint32_t cpu)
{
        (void)cpu;
        struct etl_image *im = ctx;
        uint8_t *is_done = grow(im->is_done, &im->slots_cap, im->nr_slots + 1, 1);
        if (!is_done) {
                im->error = -ENOMEM;
                return NULL;
        }
        im->is_done = is_done;
        uint8_t *b;
        if (im->nr_slots < im->nr_room) {
                b = im->mem.data + im->header_size + (size_t)im->nr_slots * im->buffer_size;
        } else {
                uint32_t k = im->nr_extra;
                uint8_t **extra = grow(im->extra, &im->extra_cap, k + 1, sizeof(*extra));
                b = extra ? malloc(im->buffer_size) : NULL;
                if (extra)
                        im->extra = extra;
                if (!b) {
                        im->error = -ENOMEM;
                        return NULL;
                }
                im->extra[im->nr_extra++] = b;
        }
        im->is_done[im->nr_slots++] = 0;
        return b;
}

/* The slot of a placed buffer. */
static uint32_t image_slot_of(const struct etl_image *im, const uint8_t *buffer)
{
        const uint8_t *room = im->mem.data + im->header_size;
        if (buffer >= room && buffer < room + (size_t)im->nr_room * im->buffer_size)
                return (uint32_t)((size_t)(buffer - room) / im->buffer_size);
        for (uint32_t k = im->nr_extra; k-- > 0;) /* the latest most likely */
                if (im->extra[k] == buffer)
                        return im->nr_room + k;
        return UINT32_MAX;
}

/* The writer's buffer callback: a placed buffer completed. */
static void image_done(void *ctx, const uint8_t *buffer, uint32_t size)
{
        (void)size;
        struct etl_image *im = ctx;
        uint32_t slot = image_slot_of(im, buffer);
        if (slot == UINT32_MAX)
                return;
        im->is_done[slot] = 1;
        im->nr_buffers++;
        uint64_t ts =
                le_get64(buffer + 0x10); /* WMI_BUFFER_HEADER's TimeStamp: its last record's */
        if (ts > im->last_timestamp)
                im->last_timestamp = ts;
}

static void image_free_extra(struct etl_image *im)
{
        for (uint32_t k = 0; k < im->nr_extra; k++)
                free(im->extra[k]);
        free(im->extra);
        im->extra = NULL;
        im->nr_extra = im->extra_cap = 0;
}

/* After the writer's close: the completed buffers one after another behind the header's room
   (as placed, when every slot was completed in the room: nothing moves), mem.len their end. */
static int image_finish(struct etl_image *im)
{
        size_t size = im->buffer_size;
        bool is_whole = im->nr_slots <= im->nr_room && im->nr_buffers == im->nr_slots;
        if (!is_whole &&
            perf_data_mem_reserve(&im->mem, im->header_size + (size_t)im->nr_buffers * size) < 0)
                return -ENOMEM;
        size_t out = im->header_size;
        for (uint32_t i = 0; i < im->nr_slots; i++) {
                const uint8_t *b = i < im->nr_room ? im->mem.data + im->header_size + i * size
                                                   : im->extra[i - im->nr_room];
                if (!im->is_done[i])
                        continue; /* asked for, never written */
                if (b != im->mem.data + out)
                        memmove(im->mem.data + out, b, size);
                out += size;
        }
        im->mem.len = out;
        image_free_extra(im); /* copied */
        return 0;
}

static void image_free(struct etl_image *im)
{
        image_free_extra(im);
        free(im->is_done);
        perf_data_mem_free(&im->mem);
        free(im);
}

/* perf_data_write_etl, with the header's LogFileName log_name; with image (out_path NULL) into
   a new .etl in memory rather than a file: *image, when the perf.data opened (also when its
   conversion stopped at damage). size_hint: the perf.data's size (the .etl is about as
   large), 0 when unknown. */
static int write_etl(const char *in_path, const char *out_path, const char *log_name, bool is_force,
                     struct etl_image **image, size_t size_hint, struct perf_data_conv_stats *st,
                     struct etl_error *err)
{
        struct perf_data *pd = NULL;
        struct err_msg perr;
        memset(err, 0, sizeof(*err));
        int rc = perf_data_open_file(&pd, in_path, &perr);
        if (rc < 0) {
                etl_error_set(err, perr.offset, "%s", perr.msg);
                return rc;
        }
        struct etl_writer_config cfg;
        struct perf_data_scan *scan = perf_data_conv_scan(pd);
        uint64_t span = perf_data_conv_config_scanned(pd, scan, &cfg);
        cfg.log_file_name = log_name;
        char origin[1024];
        perf_data_origin(pd, origin, sizeof(origin));
        cfg.logger_name = origin;
        /* no CLOCK_DATA: the file was written when the recording ended ("captured on", as perf
           report says) */
        struct stat sb;
        if (!perf_data_info(pd)->has_clock_data && strcmp(in_path, "-") != 0 &&
            stat(in_path, &sb) == 0) {
                int64_t end = FILETIME_UNIX + (int64_t)sb.st_mtim.tv_sec * 10000000 +
                              sb.st_mtim.tv_nsec / 100;
                int64_t shift = end - (int64_t)(span / 100) - cfg.start_filetime;
                cfg.start_filetime += shift;
                cfg.boot_filetime += shift;
        }
        struct etl_writer *w = NULL;
        rc = etl_writer_new(&w, &cfg);
        if (rc < 0) {
                etl_error_set(err, 0, "%s: the writer refused %u CPUs", in_path, cfg.nr_cpus);
                perf_data_conv_scan_free(scan);
                perf_data_close(pd);
                return rc;
        }
        struct etl_image *im = NULL;
        uint32_t header_size = 0;
        etl_writer_header(w, &header_size);
        if (image) {
                im = calloc(1, sizeof(*im));
                if (!im ||
                    perf_data_mem_reserve(&im->mem, header_size + size_hint + size_hint / 8) < 0) {
                        free(im);
                        etl_error_set(err, 0, "%s: out of memory", in_path);
                        etl_writer_free(w);
                        perf_data_conv_scan_free(scan);
                        perf_data_close(pd);
                        return -ENOMEM;
                }
                im->mem.len = header_size; /* the header buffer's room */
                im->refs = 1;
                im->header_size = header_size;
                im->buffer_size = header_size; /* the header buffer is one of the writer's */
                im->nr_room = (uint32_t)((im->mem.cap - header_size) / header_size);
                etl_writer_set_buffer_callback(w, image_done, im);
                etl_writer_set_buffer_place(w, image_place, im);
        } else {
                rc = etl_writer_open_file(w, out_path, is_force, err);
                if (rc < 0) {
                        etl_writer_free(w);
                        perf_data_conv_scan_free(scan);
                        perf_data_close(pd);
                        return rc;
                }
        }
        int rc_conv = perf_data_convert_scanned(pd, scan, w, st, &perr);
        /* a problem met that did not stop the conversion (the file's last), for the reader */
        struct err_msg whole = {0};
        if (rc_conv == 0 && perf_data_nr_warnings(pd))
                whole = *perf_data_last_warning(pd);
        rc = etl_writer_close(w, 0, 0, 0);
        if (im && rc == 0 && im->error)
                rc = im->error;
        if (im && rc == 0)
                rc = image_finish(im);
        if (im && rc == 0) {
                const uint8_t *h = etl_writer_header_closed(w, 1 + im->nr_buffers,
                                                            im->last_timestamp, &header_size);
                memcpy(im->mem.data, h, header_size);
        }
        etl_writer_free(w);
        perf_data_conv_scan_free(scan);
        perf_data_close(pd);
        if (rc < 0) {
                if (im)
                        image_free(im);
                etl_error_set(err, 0, "%s: %s", out_path ? out_path : in_path, strerror(-rc));
                return rc;
        }
        if (image)
                *image = im;
        if (rc_conv < 0) {
                etl_error_set(err, perr.offset, "%s: %s (the records before it are converted)",
                              in_path, perr.msg);
                return rc_conv;
        }
        if (whole.msg[0])
                etl_error_set(err, whole.offset, "%s%s", ETW_READ_WHOLE, whole.msg);
        return 0;
}

int perf_data_write_etl(const char *in_path, const char *out_path, bool is_force,
                        struct perf_data_conv_stats *st, struct etl_error *err)
{
        return write_etl(in_path, out_path, out_path, is_force, NULL, 0, st, err);
}

/* The last conversion, kept for the next open of the same input: a replay opens its trace
   twice (the feed reads a file's stack keys ahead; an .etl's pass stops at its first buffer,
   but each OpenTrace of a perf.data converted the whole file again: a fifth of -b's time on a
   large file), and standard input can be read only once. */
static struct {
        pthread_mutex_t lock;
        struct etl_image *image; /* one of its refs; NULL: none */
        bool is_stdin;
        dev_t dev;
        ino_t ino;
        off_t size;
        struct timespec mtime;
        struct etl_error err; /* the conversion's warning (a damaged file read to the damage) */
        uint64_t nr_conversions;
} last = {PTHREAD_MUTEX_INITIALIZER, NULL, false, 0, 0, 0, {0, 0}, {0}, 0};

static bool is_last(bool is_stdin, const struct stat *st)
{
        if (!last.image || is_stdin != last.is_stdin)
                return false;
        return is_stdin || (st->st_dev == last.dev && st->st_ino == last.ino &&
                            st->st_size == last.size && st->st_mtim.tv_sec == last.mtime.tv_sec &&
                            st->st_mtim.tv_nsec == last.mtime.tv_nsec);
}

/* Drops one ref of im (last.lock held): unmapped with the last. */
static void image_unref_locked(struct etl_image *im)
{
        if (--im->refs > 0)
                return;
        image_free(im);
}

/* etl_reader_set_release's callback: a reader over the image closed. */
static void image_release(void *ctx)
{
        pthread_mutex_lock(&last.lock);
        image_unref_locked(ctx);
        pthread_mutex_unlock(&last.lock);
}

/* A reader over the image, holding a ref of it (last.lock held). */
static int image_open_locked(struct etl_reader **out, struct etl_image *im, struct etl_error *err)
{
        int rc = etl_reader_open_mem(out, im->mem.data, im->mem.len, err);
        if (rc < 0)
                return rc;
        im->refs++;
        etl_reader_set_release(*out, image_release, im);
        return 0;
}

uint64_t perf_data_etl_nr_conversions(void)
{
        pthread_mutex_lock(&last.lock);
        uint64_t n = last.nr_conversions;
        pthread_mutex_unlock(&last.lock);
        return n;
}

int perf_data_etl_reader_open(struct etl_reader **out, const char *path, struct etl_error *err)
{
        bool is_stdin = strcmp(path, "-") == 0;
        if (!is_stdin && !perf_data_path_is_perf_data(path))
                return etl_reader_open_file(out, path, err);
        *out = NULL;
        if (err)
                memset(err, 0, sizeof(*err));
        struct stat st = {0};
        if (!is_stdin && stat(path, &st) < 0) {
                int e = errno;
                etl_error_set(err, 0, "%s: %s", path, strerror(e));
                return -e;
        }
        pthread_mutex_lock(&last.lock);
        if (is_last(is_stdin, &st)) {
                int rc = image_open_locked(out, last.image, err);
                if (rc == 0 && err)
                        *err = last.err;
                pthread_mutex_unlock(&last.lock);
                return rc;
        }
        last.nr_conversions++;
        pthread_mutex_unlock(&last.lock);
        /* converted in memory, never to the disk */
        struct etl_error conv_err = {0};
        struct etl_image *im = NULL;
        int rc = write_etl(path, NULL, path, false, &im, st.st_size > 0 ? (size_t)st.st_size : 0,
                           NULL, &conv_err);
        if (err)
                *err = conv_err;
        if (!im)
                return rc; /* the perf.data did not open */
        /* a damaged file is read up to the damage: what was converted is opened */
        struct etl_error err2;
        pthread_mutex_lock(&last.lock);
        int rc_open = rc == 0 || rc == -EBADMSG ? image_open_locked(out, im, &err2) : rc;
        if (rc_open == 0) {
                if (last.image)
                        image_unref_locked(last.image);
                last.image = im; /* the conversion's ref */
                last.is_stdin = is_stdin;
                last.dev = st.st_dev;
                last.ino = st.st_ino;
                last.size = st.st_size;
                last.mtime = st.st_mtim;
                last.err = conv_err;
        } else {
                image_unref_locked(im);
        }
        pthread_mutex_unlock(&last.lock);
        if (rc_open < 0 && rc == 0 && err)
                *err = err2;
        return rc_open < 0 ? rc_open : 0;
}
