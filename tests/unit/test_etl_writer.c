/* SPDX-License-Identifier: MIT */
/* test_etl_writer.c: the .etl writer read back by the reader: layout, file safety, ring, flush. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "file_bytes.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "etl_reader.h"
#include "etl_writer.h"
#include "etl_pool.h"
#include "etl_flush.h"
#include "log_file.h"
#include "etw/ntwmi.h"

static char dir[64];

static int setup(void **state)
{
        (void)state;
        strcpy(dir, "/tmp/etwtop-writer-XXXXXX");
        return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
        (void)state;
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        return system(cmd) == 0 ? 0 : -1;
}

static void path_of(char *buf, size_t size, const char *name)
{
        snprintf(buf, size, "%s/%s", dir, name);
}

static struct etl_writer *new_writer(uint32_t nr_cpus, uint32_t buffer_size)
{
        struct etl_writer_config cfg = {
                .buffer_size_bytes = buffer_size,
                .nr_cpus = nr_cpus,
                .log_file_mode = EVENT_TRACE_FILE_MODE_SEQUENTIAL,
                .logger_id = 7,
                .logger_name = "etwtop test \xc3\xa9",
                .log_file_name = "out.etl",
                .start_timestamp = 5000,
                .start_filetime = 132000000000000000ll,
                .boot_filetime = 131999000000000000ll,
                .perf_freq = 1000000000,
                .clock_type = EVENT_TRACE_CLOCK_PERFCOUNTER,
                .os_major = 10,
                .provider_version = 19041,
                .header_tid = 11,
                .header_pid = 10,
        };
        struct etl_writer *w = NULL;
        assert_int_equal(etl_writer_new(&w, &cfg), 0);
        return w;
}

/* n SampledProfile records per CPU, timestamps interleaved across CPUs */
static uint64_t next_ts = 6000;

static void write_samples(struct etl_writer *w, uint32_t nr_cpus, uint32_t n)
{
        uint8_t rec[64], p[16] = {0};
        uint64_t base = next_ts;
        next_ts += 10ull * n + 10;
        for (uint32_t i = 0; i < n; i++) {
                for (uint32_t c = 0; c < nr_cpus; c++) {
                        uint64_t ip = 0x1000 + i;
                        memcpy(p, &ip, 8);
                        uint32_t size =
                                etl_record_perfinfo64(rec, PERFINFO_LOG_TYPE_SAMPLED_PROFILE, 2,
                                                      base + 10ull * i + c, NULL, 0, p, 16);
                        assert_int_equal(etl_writer_append(w, c, rec, size), 0);
                }
        }
}

static uint64_t read_all(const char *path, uint64_t *nr_backwards, struct etl_reader_stats *st)
{
        struct etl_reader *r = NULL;
        struct etl_error err;
        int rc = etl_reader_open_file(&r, path, &err);
        if (rc < 0)
                print_error("%s at %llu\n", err.msg, (unsigned long long)err.offset);
        assert_int_equal(rc, 0);
        const struct etl_record *rec;
        uint64_t n = 0, last = 0;
        *nr_backwards = 0;
        while ((rec = etl_reader_next_ref(r))) {
                if (rec->timestamp < last)
                        (*nr_backwards)++;
                last = rec->timestamp;
                n++;
        }
        if (st)
                etl_reader_get_stats(r, st);
        etl_reader_close(r);
        return n;
}

static void test_round_trip(void **state)
{
        (void)state;
        char path[128];
        path_of(path, sizeof(path), "round.etl");
        struct etl_writer *w = new_writer(4, 4096);
        struct etl_error err;
        assert_int_equal(etl_writer_open_file(w, path, false, &err), 0);
        write_samples(w, 4, 500);
        assert_int_equal(etl_writer_close(w, 132000000050000000ll, 3, 1), 0);
        struct etl_writer_stats ws;
        etl_writer_get_stats(w, &ws);
        etl_writer_free(w);

        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0600);
        assert_int_equal(st.st_size % 4096, 0);
        assert_int_equal((uint64_t)st.st_size / 4096, ws.nr_buffers_written + 1);

        struct etl_reader *r = NULL;
        assert_int_equal(etl_reader_open_file(&r, path, &err), 0);
        const struct etl_logfile *lf = etl_reader_logfile(r);
        assert_string_equal(lf->logger_name, "etwtop test \xc3\xa9");
        assert_string_equal(lf->log_file_name, "out.etl");
        assert_int_equal(lf->header.BufferSize, 4096);
        assert_int_equal(lf->header.BuffersWritten, ws.nr_buffers_written + 1);
        assert_int_equal(lf->header.EventsLost, 3);
        assert_int_equal(lf->header.BuffersLost, 1);
        assert_int_equal(lf->header.EndTime.QuadPart, 132000000050000000ll);
        assert_int_equal(lf->header.StartTime.QuadPart, 132000000000000000ll);
        assert_int_equal(lf->header.PerfFreq.QuadPart, 1000000000);
        assert_int_equal(lf->header.NumberOfProcessors, 4);
        assert_int_equal(lf->header.PointerSize, 8);
        assert_int_equal(lf->header.VersionDetail.SubVersion, 1);
        assert_int_equal(lf->header.VersionDetail.SubMinorVersion, 5);
        assert_int_equal(lf->start_timestamp, 5000);
        /* 1 ms after the start at 1 GHz is 10000 FILETIME units later */
        assert_int_equal(etl_reader_to_filetime(r, 5000 + 1000000), 132000000000000000ll + 10000);
        etl_reader_close(r);

        uint64_t back = 0;
        struct etl_reader_stats rs;
        assert_int_equal(read_all(path, &back, &rs), 1 + 4 * 500);
        assert_int_equal(back, 0);
        assert_int_equal(rs.nr_cpus, 4);
        assert_int_equal(rs.nr_buffers_damaged, 0);
}

/* ETL-FORMAT.md 1.9: buffer header fields of what we write. */
static void test_buffer_layout(void **state)
{
        (void)state;
        char path[128];
        path_of(path, sizeof(path), "layout.etl");
        struct etl_writer *w = new_writer(2, 1024);
        struct etl_error err;
        assert_int_equal(etl_writer_open_file(w, path, false, &err), 0);
        write_samples(w, 2, 100);
        assert_int_equal(etl_writer_close(w, 0, 0, 0), 0);
        etl_writer_free(w);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        uint8_t b[1024];
        uint64_t last_seq = 0;
        for (uint32_t i = 0; fread(b, 1, sizeof(b), f) == sizeof(b); i++) {
                uint32_t size, saved, offset;
                uint64_t seq;
                uint16_t flag, type;
                memcpy(&size, b, 4);
                memcpy(&saved, b + 4, 4);
                memcpy(&offset, b + 0x30, 4);
                memcpy(&seq, b + 0x18, 8);
                memcpy(&flag, b + 0x34, 2);
                memcpy(&type, b + 0x36, 2);
                assert_int_equal(size, 1024);
                assert_int_equal(saved, offset);
                assert_int_equal(offset % 8, 0);
                for (uint32_t k = offset; k < 1024; k++)
                        assert_int_equal(b[k], 0xFF);
                if (i == 0) {
                        assert_int_equal(type, WMI_BUFFER_TYPE_HEADER);
                        assert_int_equal(flag, 0x21);
                        assert_int_equal(seq, 0);
                        uint32_t marker;
                        memcpy(&marker, b + 0x48, 4);
                        assert_int_equal(marker & 0xFFFF0000u, 0xC0020000u);
                } else {
                        assert_int_equal(type, WMI_BUFFER_TYPE_GENERIC);
                        assert_int_equal(flag, 0x20);
                        assert_true(seq > last_seq);
                        last_seq = seq;
                }
        }
        fclose(f);
}

static void test_file_safety(void **state)
{
        (void)state;
        char path[128], link[128], target[128];
        struct etl_error err;
        path_of(path, sizeof(path), "exists.etl");
        int fd = open(path, O_CREAT | O_WRONLY, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "keep", 4), 4);
        close(fd);

        struct etl_writer *w = new_writer(1, 4096);
        assert_int_equal(etl_writer_open_file(w, path, false, &err), -EEXIST);
        assert_non_null(strstr(err.msg, "--force"));
        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_size, 4); /* nothing already written is lost */

        /* never through a symlink; with force a symlink is not replaced either (only a
           regular file of one's own is), and its target is untouched */
        path_of(target, sizeof(target), "target");
        path_of(link, sizeof(link), "link.etl");
        fd = open(target, O_CREAT | O_WRONLY, 0644);
        assert_int_equal(write(fd, "precious", 8), 8);
        close(fd);
        assert_int_equal(symlink(target, link), 0);
        assert_true(etl_writer_open_file(w, link, false, &err) < 0);
        assert_true(etl_writer_open_file(w, link, true, &err) < 0);
        assert_non_null(strstr(err.msg, "not a regular file"));
        etl_writer_free(w);
        assert_int_equal(stat(target, &st), 0);
        assert_int_equal(st.st_size, 8);
        assert_int_equal(lstat(link, &st), 0);
        assert_true(S_ISLNK(st.st_mode));
        /* a FIFO is not replaced either */
        char fifo[128];
        path_of(fifo, sizeof(fifo), "fifo.etl");
        assert_int_equal(mkfifo(fifo, 0600), 0);
        w = new_writer(1, 4096);
        assert_true(etl_writer_open_file(w, fifo, true, &err) < 0);
        etl_writer_free(w);
        assert_int_equal(lstat(fifo, &st), 0);
        assert_true(S_ISFIFO(st.st_mode));
        /* a new file is 0600 */
        char fresh[128];
        path_of(fresh, sizeof(fresh), "fresh.etl");
        w = new_writer(1, 4096);
        assert_int_equal(etl_writer_open_file(w, fresh, false, &err), 0);
        assert_int_equal(etl_writer_close(w, 0, 0, 0), 0);
        etl_writer_free(w);
        assert_int_equal(lstat(fresh, &st), 0);
        assert_true(S_ISREG(st.st_mode));
        assert_int_equal(st.st_mode & 0777, 0600);

        /* force over an existing regular file */
        w = new_writer(1, 4096);
        assert_int_equal(etl_writer_open_file(w, path, true, &err), 0);
        assert_int_equal(etl_writer_close(w, 0, 0, 0), 0);
        etl_writer_free(w);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_size, 4096);
}

/* A writer killed before close: the header was never finalized, yet every complete buffer
   reads (DESIGN.md, reliability). */
static void test_unfinalized(void **state)
{
        (void)state;
        char path[128];
        path_of(path, sizeof(path), "killed.etl");
        struct etl_writer *w = new_writer(2, 4096);
        struct etl_error err;
        assert_int_equal(etl_writer_open_file(w, path, false, &err), 0);
        write_samples(w, 2, 1000);
        struct etl_writer_stats ws;
        etl_writer_get_stats(w, &ws);
        etl_writer_free(w); /* no close: as after kill -9 */
        uint64_t back = 0;
        struct etl_reader_stats rs;
        uint64_t n = read_all(path, &back, &rs);
        assert_int_equal(rs.nr_buffers, ws.nr_buffers_written + 1);
        assert_true(n > 1 && n < 1 + 2 * 1000); /* the unflushed tails are lost, the rest reads */
        assert_int_equal(back, 0);
        assert_int_equal(rs.nr_buffers_damaged, 0);

        /* and a file cut in the middle of a buffer (a write cut short) */
        assert_int_equal(truncate(path, 4096 * 3 + 1000), 0);
        n = read_all(path, &back, &rs);
        assert_true(n > 1);
        assert_int_equal(rs.nr_buffers_damaged, 1);
}

static void test_flush(void **state)
{
        (void)state;
        char path[128];
        path_of(path, sizeof(path), "flush.etl");
        struct etl_writer *w = new_writer(2, 65536);
        struct etl_error err;
        assert_int_equal(etl_writer_open_file(w, path, false, &err), 0);
        write_samples(w, 2, 10);
        uint64_t back = 0;
        assert_int_equal(read_all(path, &back, NULL), 1); /* only the header so far */
        assert_int_equal(etl_writer_flush(w), 0);
        assert_int_equal(read_all(path, &back, NULL), 21); /* FLUSH made them readable */
        write_samples(w, 2, 5);
        assert_int_equal(etl_writer_close(w, 0, 0, 0), 0);
        etl_writer_free(w);
        assert_int_equal(read_all(path, &back, NULL), 31);
        assert_int_equal(back, 0);
}

/* The in-memory circular mode keeps the last buffers and saves them as a whole file. */
static void test_ring_save(void **state)
{
        (void)state;
        char path[128];
        path_of(path, sizeof(path), "ring.etl");
        struct etl_writer *w = new_writer(1, 1024);
        assert_int_equal(etl_writer_set_ring(w, 4 * 1024), 0);
        write_samples(w, 1, 1000); /* 1000 * 32 bytes: ~33 buffers, the ring keeps 4 */
        assert_int_equal(etl_writer_flush(w), 0);
        struct etl_error err;
        assert_int_equal(etl_writer_save_ring(w, path, false, 132000000010000000ll, &err), 0);
        /* saving twice without force is refused */
        assert_int_equal(etl_writer_save_ring(w, path, false, 0, &err), -EEXIST);
        etl_writer_free(w);
        uint64_t back = 0;
        struct etl_reader_stats rs;
        uint64_t n = read_all(path, &back, &rs);
        assert_int_equal(rs.nr_buffers, 5);
        assert_int_equal(back, 0);
        /* 4 buffers of (1024 - 72) / 32 = 29 records at most, the last one partial */
        assert_true(n > 1 + 3 * 29 - 29 && n <= 1 + 4 * 29);
}

/* The header fields a reader takes from the file on disk now: BuffersWritten and EndTime
   (ETL-FORMAT.md 1.6, at 0x24 and 0x10 of the logfile header after the SYSTEM header). */
static void disk_header(const char *path, uint32_t *buffers_written, int64_t *end_filetime)
{
        int fd = open(path, O_RDONLY);
        assert_true(fd >= 0);
        uint8_t b[0x28];
        assert_int_equal(pread(fd, b, sizeof(b), 0x48 + 0x20), (ssize_t)sizeof(b));
        close(fd);
        memcpy(buffers_written, b + 0x24, 4);
        memcpy(end_filetime, b + 0x10, 8);
}

/* The latest buffer TimeStamp (the last record of each buffer) of the data buffers on disk,
   and how many whole buffers the file holds. */
static uint64_t disk_last_timestamp(const char *path, uint32_t buffer_size, uint32_t *nr_buffers)
{
        int fd = open(path, O_RDONLY);
        assert_true(fd >= 0);
        struct stat st;
        assert_int_equal(fstat(fd, &st), 0);
        *nr_buffers = (uint32_t)(st.st_size / buffer_size);
        uint64_t last = 0;
        for (uint32_t i = 1; i < *nr_buffers; i++) {
                uint64_t ts;
                assert_int_equal(pread(fd, &ts, 8, (off_t)i * buffer_size + 0x10), 8);
                if (ts > last)
                        last = ts;
        }
        close(fd);
        return last;
}

/* new_writer's clock: 1 GHz from timestamp 5000 at FILETIME 132000000000000000. */
static int64_t test_filetime(uint64_t ts)
{
        return 132000000000000000ll + (int64_t)(ts - 5000) / 100;
}

/* Issue 13 item 20: the file on disk says how many buffers it holds and when its last event
   was after every flush, and after every buffer a full CPU buffer pushed out, so that a reader
   that reads BuffersWritten buffers of a file whose writer was killed sees them all. */
static void test_header_current_on_disk(void **state)
{
        (void)state;
        char path[128];
        path_of(path, sizeof(path), "current.etl");
        struct etl_writer *w = new_writer(2, 1024);
        struct etl_error err;
        assert_int_equal(etl_writer_open_file(w, path, false, &err), 0);
        for (int round = 0; round < 6; round++) {
                write_samples(w, 2, 45); /* fills buffers, leaves each CPU's last partly full */
                for (int flush = 0; flush < 2; flush++) {
                        uint32_t written = 0, nr = 0;
                        int64_t end = 0;
                        disk_header(path, &written, &end);
                        uint64_t last = disk_last_timestamp(path, 1024, &nr);
                        struct etl_writer_stats ws;
                        etl_writer_get_stats(w, &ws);
                        assert_true(nr > 1);
                        assert_int_equal(written, nr);
                        assert_int_equal(written, ws.nr_file_buffers);
                        assert_true(end >= test_filetime(last));
                        if (flush == 0)
                                assert_int_equal(etl_writer_flush(w), 0);
                }
        }
        /* as after kill -9: no close; the reader finds what the header says */
        etl_writer_free(w);
        struct etl_reader *r = NULL;
        assert_int_equal(etl_reader_open_file(&r, path, &err), 0);
        uint32_t in_header = etl_reader_logfile(r)->header.BuffersWritten;
        while (etl_reader_next_ref(r))
                ;
        struct etl_reader_stats rs;
        etl_reader_get_stats(r, &rs);
        etl_reader_close(r);
        assert_int_equal(in_header, rs.nr_buffers);
        assert_int_equal(rs.nr_buffers_damaged, 0);
}

/* Issue 13 item 4: a ring saved after older buffers left it says the span it holds (its start
   timestamp, StartTime, EndTime; the header's own records not before its start), and its
   header names the file; a ring that kept everything starts with the session. */
static void test_ring_save_frames_its_events(void **state)
{
        (void)state;
        char path[128], all[128], longname[700];
        path_of(path, sizeof(path), "window.etl");
        path_of(all, sizeof(all), "all.etl");
        struct etl_writer *w = new_writer(1, 1024);
        uint8_t rec[64], mask[32] = {0x55};
        uint32_t size = etl_record_system64(rec, WMI_LOG_TYPE_HEADER_EXTENSION, 2, 0, 0, 5100, mask,
                                            sizeof(mask));
        assert_int_equal(etl_writer_append(w, ETL_WRITER_HEADER_CPU, rec, size), 0);
        assert_int_equal(etl_writer_set_ring(w, 4 * 1024), 0);
        uint64_t before = next_ts;
        write_samples(w, 1, 1000); /* ~33 buffers: the ring keeps the last 4 */
        assert_int_equal(etl_writer_flush(w), 0);
        struct etl_error err;
        assert_int_equal(etl_writer_save_ring(w, path, false, 0, &err), 0);
        /* a name that does not fit in a 1 KiB header buffer is refused, nothing created */
        memset(longname, 'n', sizeof(longname) - 1);
        longname[sizeof(longname) - 1] = '\0';
        memcpy(longname, dir, strlen(dir));
        longname[strlen(dir)] = '/';
        assert_int_equal(etl_writer_save_ring(w, longname, false, 0, &err), -ENAMETOOLONG);
        assert_int_equal(access(longname, F_OK), -1);
        etl_writer_free(w);

        struct etl_reader *r = NULL;
        assert_int_equal(etl_reader_open_file(&r, path, &err), 0);
        const struct etl_logfile *lf = etl_reader_logfile(r);
        assert_string_equal(lf->log_file_name, path);
        assert_string_equal(lf->logger_name, "etwtop test \xc3\xa9");
        assert_int_equal(lf->header.BuffersWritten, 5);
        uint64_t first = UINT64_MAX, last = 0, mask_ts = 0;
        const struct etl_record *e;
        while ((e = etl_reader_next_ref(r))) {
                if (e->is_header)
                        continue;
                if (e->hook_id == WMI_LOG_TYPE_HEADER_EXTENSION) {
                        mask_ts = e->timestamp;
                        continue;
                }
                first = e->timestamp < first ? e->timestamp : first;
                last = e->timestamp > last ? e->timestamp : last;
        }
        assert_true(first > before + 10 * 800); /* the first ~800 samples left the ring */
        assert_int_equal(lf->start_timestamp, first);
        assert_int_equal(lf->header.StartTime.QuadPart, test_filetime(first));
        assert_int_equal(etl_reader_to_filetime(r, first), lf->header.StartTime.QuadPart);
        assert_true(lf->header.EndTime.QuadPart >= test_filetime(last));
        assert_int_equal(mask_ts, first);
        etl_reader_close(r);

        /* nothing left the ring: the file starts with the session */
        w = new_writer(1, 1024);
        assert_int_equal(etl_writer_set_ring(w, 64 * 1024), 0);
        write_samples(w, 1, 100);
        assert_int_equal(etl_writer_flush(w), 0);
        assert_int_equal(etl_writer_save_ring(w, all, false, 132000000090000000ll, &err), 0);
        etl_writer_free(w);
        assert_int_equal(etl_reader_open_file(&r, all, &err), 0);
        lf = etl_reader_logfile(r);
        assert_int_equal(lf->start_timestamp, 5000);
        assert_int_equal(lf->header.StartTime.QuadPart, 132000000000000000ll);
        assert_int_equal(lf->header.EndTime.QuadPart, 132000000090000000ll);
        assert_string_equal(lf->log_file_name, all);
        etl_reader_close(r);
}

struct rt_ctx {
        uint32_t nr_calls;
        uint64_t nr_records;
};

/* What a real-time consumer gets: whole buffers the reader can parse from bytes. */
static void on_buffer(void *ctx, const uint8_t *buffer, uint32_t size)
{
        struct rt_ctx *c = ctx;
        c->nr_calls++;
        assert_int_equal(size, 1024);
        uint32_t filled;
        memcpy(&filled, buffer + 0x30, 4);
        assert_true(filled > 0x48 && filled <= size);
        for (uint32_t pos = 0x48; pos + 4 <= filled;) {
                uint16_t rsize;
                memcpy(&rsize, buffer + pos + 4, 2);
                assert_true(rsize >= 0x10);
                c->nr_records++;
                pos += (rsize + 7u) & ~7u;
        }
}

static void test_real_time_callback(void **state)
{
        (void)state;
        struct etl_writer *w = new_writer(2, 1024);
        struct rt_ctx c = {0, 0};
        etl_writer_set_buffer_callback(w, on_buffer, &c);
        write_samples(w, 2, 100);
        assert_int_equal(etl_writer_flush(w), 0);
        struct etl_writer_stats ws;
        etl_writer_get_stats(w, &ws);
        assert_int_equal(c.nr_calls, ws.nr_buffers_written);
        assert_int_equal(c.nr_records, 200);
        assert_int_equal(ws.nr_events, 200);
        etl_writer_free(w);
}

/* A pool (etl_pool.h): the ring's buffers and the CPU's first are cut from it, so that every
   completed buffer lies in it (a consumer of another process reads it there); one pinned when
   it leaves the ring is set aside and not written until unpinned, another cut in its place;
   once unpinned it is used again rather than a new one cut. */
struct pool_ctx {
        struct etl_pool *pool;
        const uint8_t *pinned;
        uint8_t copy[1024];
        uint32_t nr_calls, nr_in_pool;
};

static void on_pool_buffer(void *ctx, const uint8_t *buffer, uint32_t size)
{
        struct pool_ctx *c = ctx;
        c->nr_calls++;
        int64_t i = etl_pool_index(c->pool, buffer);
        if (i < 0)
                return;
        c->nr_in_pool++;
        if (!c->pinned && c->nr_calls == 3) {
                etl_pool_pin(c->pool, (uint32_t)i);
                c->pinned = buffer;
                memcpy(c->copy, buffer, size);
        }
}

static void test_pool_pins(void **state)
{
        (void)state;
        struct etl_pool *p = NULL;
        assert_int_equal(etl_pool_new(&p, 1024, 64), 0);
        int seals = fcntl(etl_pool_fd(p), F_GET_SEALS);
        assert_true(seals >= 0);
        assert_int_equal(seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE),
                         F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE);
        uint8_t outside[16];
        assert_int_equal(etl_pool_index(p, outside), -1);
        assert_int_equal(etl_pool_index(p, etl_pool_at(p, 3) + 8), -1);
        assert_int_equal(etl_pool_index(p, etl_pool_at(p, 3)), 3);
        struct etl_writer *w = new_writer(1, 1024);
        assert_int_equal(etl_writer_set_pool(w, p), -EINVAL); /* no ring */
        assert_int_equal(etl_writer_set_ring(w, 4 * 1024), 0);
        struct etl_pool *other = NULL;
        assert_int_equal(etl_pool_new(&other, 2048, 4), 0);
        assert_int_equal(etl_writer_set_pool(w, other), -EINVAL); /* another buffer size */
        etl_pool_unref(other);
        assert_int_equal(etl_writer_set_pool(w, p), 0);
        struct pool_ctx c = {.pool = p};
        etl_writer_set_buffer_callback(w, on_pool_buffer, &c);
        /* buffers of 1 KiB, a ring of 4: it goes round several times */
        write_samples(w, 1, 600);
        assert_non_null(c.pinned);
        assert_true(c.nr_calls > 12);
        assert_int_equal(c.nr_in_pool, c.nr_calls);
        assert_memory_equal(c.pinned, c.copy, sizeof(c.copy));
        /* 4 in the ring, the CPU's, the one cut for the pinned one */
        int64_t i = etl_pool_index(p, c.pinned);
        etl_pool_unpin(p, (uint32_t)i);
        write_samples(w, 1, 600);
        assert_int_equal(etl_pool_take(p), 6);
        /* given back, taken again; none left past the end */
        etl_pool_give(p, 6);
        assert_int_equal(etl_pool_take(p), 6);
        for (int k = 7; k < 64; k++)
                assert_int_equal(etl_pool_take(p), k);
        assert_int_equal(etl_pool_take(p), -1);
        etl_writer_free(w);
        etl_pool_unref(p);
        /* a pool set after the first records: the buffers made before it (the CPU's first,
           the ring's first ones) make way for the pool's as they come round, so that after a
           round every completed buffer lies in the pool */
        assert_int_equal(etl_pool_new(&p, 1024, 64), 0);
        w = new_writer(1, 1024);
        assert_int_equal(etl_writer_set_ring(w, 4 * 1024), 0);
        write_samples(w, 1, 300);
        assert_int_equal(etl_writer_set_pool(w, p), 0);
        c = (struct pool_ctx){.pool = p, .pinned = (const uint8_t *)1}; /* pins none */
        etl_writer_set_buffer_callback(w, on_pool_buffer, &c);
        write_samples(w, 1, 300);
        assert_true(c.nr_in_pool < c.nr_calls); /* the first round's were not */
        c.nr_calls = c.nr_in_pool = 0;
        write_samples(w, 1, 600);
        assert_true(c.nr_calls > 8);
        assert_int_equal(c.nr_in_pool, c.nr_calls);
        etl_writer_free(w);
        etl_pool_unref(p);
}

/* Placed buffers (an .etl made in memory): the writer writes each CPU's buffers where the place
   function says, completes them there, and asks again for the CPU's next. */
struct place_ctx {
        uint8_t arena[64 * 1024];
        uint32_t nr_placed, nr_done, nr_refused_after;
        uint8_t *placed[64];
        uint32_t placed_cpu[64];
        struct rt_ctx rt;
};

static uint8_t *on_place(void *ctx, uint32_t cpu)
{
        struct place_ctx *c = ctx;
        if (c->nr_placed >= c->nr_refused_after || c->nr_placed == 64)
                return NULL;
        uint8_t *b = c->arena + (size_t)c->nr_placed * 1024;
        memset(b, 0xEE, 1024); /* what the writer leaves of it shows */
        c->placed_cpu[c->nr_placed] = cpu;
        c->placed[c->nr_placed++] = b;
        return b;
}

static void on_placed_done(void *ctx, const uint8_t *buffer, uint32_t size)
{
        struct place_ctx *c = ctx;
        bool is_placed = false;
        for (uint32_t i = 0; i < c->nr_placed; i++)
                is_placed |= c->placed[i] == buffer;
        assert_true(is_placed); /* completed where it lies, not in a copy */
        c->nr_done++;
        on_buffer(&c->rt, buffer, size);
}

static void test_placed_buffers(void **state)
{
        (void)state;
        struct place_ctx *c = calloc(1, sizeof(*c));
        assert_non_null(c);
        c->nr_refused_after = UINT32_MAX;
        struct etl_writer *w = new_writer(2, 1024);
        etl_writer_set_buffer_callback(w, on_placed_done, c);
        assert_int_equal(etl_writer_set_buffer_place(w, on_place, c), 0);
        assert_int_equal(etl_writer_set_ring(w, 8192), -EINVAL); /* not the writer's to keep */
        write_samples(w, 2, 100);
        assert_int_equal(etl_writer_flush(w), 0);
        struct etl_writer_stats ws;
        etl_writer_get_stats(w, &ws);
        /* every buffer placed was completed there, none more; each CPU's in turn */
        assert_true(c->nr_placed > 4);
        assert_int_equal(c->nr_done, c->nr_placed);
        assert_int_equal(ws.nr_buffers_written, c->nr_placed);
        assert_int_equal(c->rt.nr_records, 200);
        assert_int_equal(c->placed_cpu[0], 0);
        assert_int_equal(c->placed_cpu[1], 1);
        /* a placed buffer filled to its end by the writer: header, records, 0xFF filler */
        uint32_t filled;
        memcpy(&filled, c->placed[0] + 0x30, 4);
        for (uint32_t i = filled; i < 1024; i++)
                assert_int_equal(c->placed[0][i], 0xFF);

        /* a reserve never committed: the buffer placed for it is never completed */
        uint32_t before = c->nr_placed;
        int rc = 0;
        assert_non_null(etl_writer_reserve(w, 0, 64, &rc));
        assert_int_equal(c->nr_placed, before + 1);
        assert_int_equal(etl_writer_flush(w), 0);
        assert_int_equal(c->nr_done, before);

        /* no place for the next buffer: the record is not written */
        c->nr_refused_after = c->nr_placed;
        uint8_t rec[64], p[16] = {0};
        uint32_t size = etl_record_perfinfo64(rec, PERFINFO_LOG_TYPE_SAMPLED_PROFILE, 2, 90000,
                                              NULL, 0, p, 16);
        assert_int_equal(etl_writer_append(w, 1, rec, size), -ENOMEM);
        assert_null(etl_writer_reserve(w, 1, 64, &rc));
        etl_writer_free(w);

        /* placed only before the first record, and not with a ring */
        w = new_writer(2, 1024);
        assert_int_equal(etl_writer_append(w, 0, rec, size), 0);
        assert_int_equal(etl_writer_set_buffer_place(w, on_place, c), -EINVAL);
        etl_writer_free(w);
        w = new_writer(2, 1024);
        assert_int_equal(etl_writer_set_ring(w, 8192), 0);
        assert_int_equal(etl_writer_set_buffer_place(w, on_place, c), -EINVAL);
        etl_writer_free(w);
        free(c);
}

/* The header buffer a real-time consumer receives first: the logfile header record, then what
   was appended with ETL_WRITER_HEADER_CPU, readable as a standalone buffer and as a file. */
static void test_header_buffer(void **state)
{
        (void)state;
        struct etl_writer *w = new_writer(2, 1024);
        uint8_t rec[64], mask[32] = {0xAA};
        uint32_t size = etl_record_system64(rec, WMI_LOG_TYPE_HEADER_EXTENSION, 2, 0, 0, 5100, mask,
                                            sizeof(mask));
        assert_int_equal(etl_writer_append(w, ETL_WRITER_HEADER_CPU, rec, size), 0);
        write_samples(w, 2, 100);
        assert_int_equal(etl_writer_flush(w), 0);

        uint32_t hsize = 0;
        const uint8_t *h = etl_writer_header(w, &hsize);
        assert_non_null(h);
        assert_int_equal(hsize, 1024);
        uint8_t *copy = malloc(hsize); /* what the session hands to each consumer */
        assert_non_null(copy);
        memcpy(copy, h, hsize);
        struct etl_record r;
        uint32_t pos = 0;
        assert_int_equal(etl_buffer_next(copy, hsize, &pos, &r), 1);
        assert_int_equal(r.hook_id, WMI_LOG_TYPE_HEADER);
        assert_int_equal(r.timestamp, 5000);
        assert_true(r.payload_size >= 0x118);
        assert_int_equal(etl_buffer_next(copy, hsize, &pos, &r), 1);
        assert_int_equal(r.hook_id, WMI_LOG_TYPE_HEADER_EXTENSION);
        assert_int_equal(r.payload_size, sizeof(mask));
        assert_int_equal(r.payload[0], 0xAA);
        assert_int_equal(etl_buffer_next(copy, hsize, &pos, &r), 0);

        /* alone it reads as a one-buffer trace, the header's BuffersWritten counting itself */
        struct etl_reader *rd = NULL;
        struct etl_error err;
        assert_int_equal(etl_reader_open_mem(&rd, copy, hsize, &err), 0);
        const struct etl_logfile *lf = etl_reader_logfile(rd);
        assert_string_equal(lf->logger_name, "etwtop test \xc3\xa9");
        assert_int_equal(lf->header.BufferSize, 1024);
        assert_int_equal(lf->header.NumberOfProcessors, 2);
        assert_int_equal(lf->header.PointerSize, 8);
        assert_int_equal(lf->header.BuffersWritten, 1);
        assert_int_equal(lf->header.StartTime.QuadPart, 132000000000000000ll);
        etl_reader_close(rd);
        free(copy);

        struct etl_writer_stats ws;
        etl_writer_get_stats(w, &ws);
        assert_int_equal(ws.nr_file_buffers, 0);
        assert_int_equal(ws.nr_ring_buffers, 0);
        etl_writer_free(w);
}

/* The statistics say what the file header says, and what the ring holds. */
static void test_file_and_ring_counts(void **state)
{
        (void)state;
        char path[128];
        path_of(path, sizeof(path), "counts.etl");
        struct etl_writer *w = new_writer(2, 1024);
        struct etl_error err;
        assert_int_equal(etl_writer_open_file(w, path, false, &err), 0);
        assert_int_equal(etl_writer_set_ring(w, 3 * 1024), 0);
        struct etl_writer_stats ws;
        etl_writer_get_stats(w, &ws);
        assert_int_equal(ws.nr_file_buffers, 1); /* the header buffer */
        write_samples(w, 2, 200);
        etl_writer_get_stats(w, &ws);
        assert_int_equal(ws.nr_file_buffers, ws.nr_buffers_written + 1);
        assert_int_equal(ws.nr_ring_buffers, 3);
        assert_int_equal(etl_writer_close(w, 132000000050000000ll, 0, 0), 0);
        etl_writer_get_stats(w, &ws);
        uint64_t in_file = ws.nr_file_buffers;
        etl_writer_free(w);
        struct etl_reader *r = NULL;
        assert_int_equal(etl_reader_open_file(&r, path, &err), 0);
        assert_int_equal(etl_reader_logfile(r)->header.BuffersWritten, in_file);
        etl_reader_close(r);
}

static void test_limits(void **state)
{
        (void)state;
        struct etl_writer_config cfg = {.buffer_size_bytes = 1000, .nr_cpus = 1};
        struct etl_writer *w = NULL;
        assert_int_equal(etl_writer_new(&w, &cfg), -EINVAL); /* not a multiple of 8, < 1 KiB */
        cfg.buffer_size_bytes = 4096;
        cfg.nr_cpus = 0;
        assert_int_equal(etl_writer_new(&w, &cfg), -EINVAL);
        w = new_writer(1, 1024);
        static uint8_t big[2048];
        uint32_t size = etl_record_perfinfo64(big, PERFINFO_LOG_TYPE_SAMPLED_PROFILE, 2, 1, NULL, 0,
                                              big + 1024, 1000);
        assert_int_equal(etl_writer_append(w, 0, big, size), -E2BIG);
        assert_int_equal(etl_writer_append(w, 5, big, 40), -EINVAL);
        struct etl_writer_stats ws;
        etl_writer_get_stats(w, &ws);
        assert_int_equal(ws.nr_events_dropped, 1);
        etl_writer_free(w);
        etl_writer_free(NULL);
}

/* The file written on the flusher's thread (etl_writer_set_async) is the file written on the
   caller's, byte for byte: the same buffers in the same places, the same header, the stats
   counting what reached the file; a buffer with no room in the queue is lost, not written. */
static void test_async_same_file(void **state)
{
        (void)state;
        char sync_path[128], async_path[128];
        path_of(sync_path, sizeof(sync_path), "sync.etl");
        path_of(async_path, sizeof(async_path), "async.etl");
        struct etl_writer_stats ws[2];
        for (int k = 0; k < 2; k++) {
                next_ts = 6000;
                struct etl_writer *w = new_writer(3, 4096);
                struct etl_error err;
                assert_int_equal(etl_writer_open_file(w, k ? async_path : sync_path, false, &err),
                                 0);
                if (k)
                        assert_int_equal(etl_writer_set_async(w, 4), 0);
                for (int round = 0; round < 5; round++) {
                        write_samples(w, 3, 700);
                        assert_int_equal(etl_writer_flush(w), 0);
                }
                assert_int_equal(etl_writer_close(w, 132000000050000000ll, 0, 0), 0);
                etl_writer_get_stats(w, &ws[k]);
                etl_writer_free(w);
        }
        assert_int_equal(ws[1].nr_file_buffers, ws[0].nr_file_buffers);
        assert_int_equal(ws[1].nr_bytes_written, ws[0].nr_bytes_written);
        assert_int_equal(ws[1].nr_buffers_lost, 0);
        assert_int_equal(ws[1].nr_buffers_in_flight, 0);
        uint8_t *a, *b;
        size_t na, nb;
        read_file(sync_path, &a, &na);
        read_file(async_path, &b, &nb);
        assert_int_equal(na, nb);
        assert_true(na > 20 * 4096);
        assert_memory_equal(a, b, na);
        free(a);
        free(b);
        uint64_t back = 0;
        assert_int_equal(read_all(async_path, &back, NULL), 1 + 3 * 700 * 5);
        assert_int_equal(back, 0);
}

/* etl_writer_reserve and etl_writer_commit: records built in the writer's buffer make the same
   file as the same records appended, through the async writer (which takes a buffer rather than
   a copy of it); room asked for past a record's size completes a buffer early at most, every
   record still reads; a record larger than a buffer, or for no CPU's buffer, has no room. The
   sink's entries (etl_writer_sink_reserve and etl_writer_sink_commit) make the same file too. */
static void test_reserve_commit(void **state)
{
        (void)state;
        char paths[4][128];
        path_of(paths[0], sizeof(paths[0]), "append.etl");
        path_of(paths[1], sizeof(paths[1]), "reserve.etl");
        path_of(paths[2], sizeof(paths[2]), "reserve_more.etl");
        path_of(paths[3], sizeof(paths[3]), "reserve_sink.etl");
        for (uint32_t k = 0; k < 4; k++) {
                struct etl_writer *w = new_writer(2, 4096);
                struct etl_error err;
                assert_int_equal(etl_writer_open_file(w, paths[k], false, &err), 0);
                assert_int_equal(etl_writer_set_async(w, 4), 0);
                uint8_t rec[512], p[256];
                for (uint32_t i = 0; i < 3000; i++) {
                        uint32_t cpu = i % 2, n = 16 + 8 * (i % 29);
                        memset(p, (int)(i & 0xff), n);
                        uint32_t size = etl_record_perfinfo64(rec, WMI_LOG_TYPE_STACKWALK, 2,
                                                              7000 + i, NULL, 0, p, n);
                        if (k == 0) {
                                assert_int_equal(etl_writer_append(w, cpu, rec, size), 0);
                                continue;
                        }
                        if (k == 3) {
                                uint8_t *room = etl_writer_sink_reserve(w, cpu, size);
                                assert_non_null(room);
                                memcpy(room, rec, size);
                                etl_writer_sink_commit(w, cpu, size);
                                etl_writer_sink_commit(w, cpu, 0); /* nothing */
                                continue;
                        }
                        int rc = -1;
                        uint32_t more = k == 2 ? 8 * (i % 3) : 0;
                        uint8_t *room = etl_writer_reserve(w, cpu, size + more, &rc);
                        assert_non_null(room);
                        assert_int_equal(rc, 0);
                        memcpy(room, rec, size);
                        etl_writer_commit(w, cpu, size);
                        etl_writer_commit(w, cpu, 0); /* nothing */
                }
                int rc = 0;
                assert_null(etl_writer_reserve(w, 0, 4096, &rc));
                assert_null(etl_writer_reserve(w, 2, 64, &rc));
                assert_null(etl_writer_reserve(w, ETL_WRITER_HEADER_CPU, 64, &rc));
                assert_null(etl_writer_sink_reserve(w, 0, 4096));
                assert_null(etl_writer_sink_reserve(w, 2, 64));
                struct etl_writer_stats ws;
                etl_writer_get_stats(w, &ws);
                assert_int_equal(ws.nr_reserve_failures, 0); /* no room is no failure */
                assert_int_equal(etl_writer_close(w, 132000000050000000ll, 0, 0), 0);
                etl_writer_free(w);
        }
        uint8_t *a, *b;
        size_t na, nb;
        read_file(paths[0], &a, &na);
        for (uint32_t k = 1; k < 4; k += 2) {
                read_file(paths[k], &b, &nb);
                assert_int_equal(na, nb);
                assert_memory_equal(a, b, na);
                free(b);
        }
        free(a);
        for (uint32_t k = 0; k < 4; k++) {
                uint64_t back = 0;
                assert_int_equal(read_all(paths[k], &back, NULL), 1 + 3000);
                assert_int_equal(back, 0);
        }
}

/* etl_writer_sink_room: two records built one after the other in one room make the same file as
   the two reserved each in turn (a sink's reserve and commit) wherever the room is there; where
   both do not fit the buffer as it is, there is no room and nothing is completed (the records
   are then reserved each, the buffer completed where the reserves complete it). No room for no
   CPU's buffer, for the header CPU, for a CPU whose first buffer is not there yet, or past a
   buffer's size. */
static void test_sink_room(void **state)
{
        (void)state;
        char paths[2][128];
        path_of(paths[0], sizeof(paths[0]), "room_each.etl");
        path_of(paths[1], sizeof(paths[1]), "room_both.etl");
        uint32_t nr_rooms = 0, nr_none = 0;
        for (uint32_t k = 0; k < 2; k++) {
                struct etl_writer *w = new_writer(2, 4096);
                struct etl_error err;
                assert_int_equal(etl_writer_open_file(w, paths[k], false, &err), 0);
                assert_null(etl_writer_sink_room(w, 0, 64)); /* no buffer yet */
                assert_null(etl_writer_sink_room(w, 2, 64));
                assert_null(etl_writer_sink_room(w, ETL_WRITER_HEADER_CPU, 64));
                uint8_t rec[2][512], p[256];
                for (uint32_t i = 0; i < 3000; i++) {
                        uint32_t cpu = i % 2, size[2];
                        for (uint32_t j = 0; j < 2; j++) {
                                uint32_t n = 12 + 8 * ((i + 7 * j) % 29) + 4 * j;
                                memset(p, (int)((i + j) & 0xff), n);
                                size[j] = etl_record_perfinfo64(rec[j], WMI_LOG_TYPE_STACKWALK, 2,
                                                                7000 + i, NULL, 0, p, n);
                        }
                        uint32_t at = (size[0] + 7u) & ~7u;
                        struct etl_writer_stats before, after;
                        etl_writer_get_stats(w, &before);
                        uint8_t *room = k ? etl_writer_sink_room(w, cpu, at + size[1]) : NULL;
                        etl_writer_get_stats(w, &after);
                        assert_int_equal(after.nr_buffers_written, before.nr_buffers_written);
                        if (room) {
                                nr_rooms++;
                                memcpy(room, rec[0], size[0]);
                                etl_writer_sink_commit(w, cpu, size[0]);
                                memcpy(room + at, rec[1], size[1]);
                                etl_writer_sink_commit(w, cpu, size[1]);
                                continue;
                        }
                        nr_none += k;
                        for (uint32_t j = 0; j < 2; j++) {
                                uint8_t *r = etl_writer_sink_reserve(w, cpu, size[j]);
                                assert_non_null(r);
                                memcpy(r, rec[j], size[j]);
                                etl_writer_sink_commit(w, cpu, size[j]);
                        }
                }
                assert_null(etl_writer_sink_room(w, 0, 4097));
                assert_null(etl_writer_sink_room(w, 2, 64));
                assert_int_equal(etl_writer_close(w, 132000000050000000ll, 0, 0), 0);
                etl_writer_free(w);
        }
        assert_true(nr_rooms > 2500);
        assert_true(nr_none > 50); /* a buffer's end: one each at least */
        uint8_t *a, *b;
        size_t na, nb;
        read_file(paths[0], &a, &na);
        read_file(paths[1], &b, &nb);
        assert_int_equal(na, nb);
        assert_memory_equal(a, b, na);
        free(a);
        free(b);
        uint64_t back = 0;
        assert_int_equal(read_all(paths[1], &back, NULL), 1 + 2 * 3000);
        assert_int_equal(back, 0);
}

/* A failed completion of a buffer in etl_writer_sink_reserve (the file past RLIMIT_FSIZE: EFBIG)
   is counted in the stats, once (the file sink stops at its first error), as a live session's
   records refused; the room is there all the same, as etl_writer_reserve's, and later records
   go on into the buffers. */
static void test_sink_reserve_failure(void **state)
{
        (void)state;
        char path[128];
        path_of(path, sizeof(path), "sink_efbig.etl");
        struct etl_writer *w = new_writer(1, 4096);
        struct etl_error err;
        assert_int_equal(etl_writer_open_file(w, path, false, &err), 0);
        struct rlimit old, lim;
        assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
        lim = old;
        lim.rlim_cur = 4 * 4096; /* the header buffer and three */
        signal(SIGXFSZ, SIG_IGN);
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
        uint8_t rec[256], p[128];
        memset(p, 0x5a, sizeof(p));
        for (uint32_t i = 0; i < 400; i++) { /* about 20 buffers of 4 KiB */
                uint32_t size = etl_record_perfinfo64(rec, WMI_LOG_TYPE_STACKWALK, 2, 7000 + i,
                                                      NULL, 0, p, sizeof(p));
                uint8_t *room = etl_writer_sink_reserve(w, 0, size);
                assert_non_null(room);
                memcpy(room, rec, size);
                etl_writer_sink_commit(w, 0, size);
        }
        struct etl_writer_stats ws;
        etl_writer_get_stats(w, &ws);
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
        signal(SIGXFSZ, SIG_DFL);
        assert_int_equal(ws.write_error, EFBIG);
        assert_int_equal(ws.nr_reserve_failures, 1);
        assert_int_equal(ws.nr_events, 400);
        etl_writer_close(w, 0, 0, 0);
        etl_writer_free(w);
}

/* MaximumFileSize (cfg.max_file_bytes): no buffer takes the file past it, on the caller's thread
   and on the flusher's; the stats say the file is full, the header counts what the file holds
   once closed, and every buffer in it reads. */
static void test_max_file_size(void **state)
{
        (void)state;
        for (int k = 0; k < 2; k++) {
                char path[128];
                path_of(path, sizeof(path), k ? "max-async.etl" : "max-sync.etl");
                struct etl_writer_config cfg = {
                        .buffer_size_bytes = 4096,
                        .nr_cpus = 2,
                        .log_file_mode = EVENT_TRACE_FILE_MODE_SEQUENTIAL,
                        .logger_name = "max",
                        .start_timestamp = 5000,
                        .perf_freq = 1000000000,
                        .maximum_file_size_mb = 1,
                        .max_file_bytes = 10 * 4096 + 100, /* room for the header and 9 */
                };
                struct etl_writer *w = NULL;
                struct etl_error err;
                assert_int_equal(etl_writer_new(&w, &cfg), 0);
                assert_int_equal(etl_writer_open_file(w, path, false, &err), 0);
                if (k)
                        assert_int_equal(etl_writer_set_async(w, 4), 0);
                next_ts = 6000;
                for (int round = 0; round < 10; round++) {
                        write_samples(w, 2, 300);
                        assert_int_equal(etl_writer_flush(w), 0);
                }
                assert_int_equal(etl_writer_close(w, 0, 0, 0), 0);
                struct etl_writer_stats ws;
                etl_writer_get_stats(w, &ws);
                etl_writer_free(w);
                assert_int_equal(ws.full, LOG_FILE_FULL_SIZE);
                assert_int_equal(ws.write_error, 0);
                assert_int_equal(ws.nr_file_buffers, 10);
                assert_true(ws.nr_buffers_written > 20); /* the test means something */
                struct stat st;
                assert_int_equal(stat(path, &st), 0);
                assert_int_equal(st.st_size, 10 * 4096);
                struct etl_reader *r = NULL;
                assert_int_equal(etl_reader_open_file(&r, path, &err), 0);
                assert_int_equal(etl_reader_logfile(r)->header.BuffersWritten, 10);
                etl_reader_close(r);
                uint64_t back = 0;
                assert_true(read_all(path, &back, NULL) > 9 * 100);
        }
}

/* A new file for the flusher's tests, and five 4 KiB buffers filled with 'a' to 'e'. */
static int flush_file(const char *name, char *path, size_t size, uint8_t mem[5][4096],
                      uint8_t *bufs[5])
{
        path_of(path, size, name);
        int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
        assert_true(fd >= 0);
        for (int i = 0; i < 5; i++) {
                memset(mem[i], 'a' + i, 4096);
                bufs[i] = mem[i];
        }
        return fd;
}

/* The flusher's batch: one pwritev of consecutive buffers at their place in the file, as many
   as the maximum size and the file system leave room for (the first that does not fit names
   why, as log_file_room does). */
static void test_flush_batch(void **state)
{
        (void)state;
        char path[128];
        static uint8_t mem[5][4096];
        uint8_t *bufs[5];
        int fd = flush_file("batch.etl", path, sizeof(path), mem, bufs);
        uint32_t done = 9;
        int full = -1;
        uint64_t avail = 0;
        /* buffers 1..5 of a file of at most 4 buffers (and a few bytes): 1, 2 and 3 fit */
        assert_int_equal(
                etl_flush_batch(fd, bufs, 5, 4096, 1, 4 * 4096 + 100, NULL, &done, &full, &avail),
                0);
        assert_int_equal(done, 3);
        assert_int_equal(full, LOG_FILE_FULL_SIZE);
        struct stat st;
        assert_int_equal(fstat(fd, &st), 0);
        assert_int_equal(st.st_size, 4 * 4096);
        /* no maximum: all five, from buffer 4 on */
        assert_int_equal(etl_flush_batch(fd, bufs, 5, 4096, 4, 0, NULL, &done, &full, &avail), 0);
        assert_int_equal(done, 5);
        assert_int_equal(full, LOG_FILE_ROOM);
        /* the file's buffers 1..3 are a, b, c, 4..8 a to e; 0 was never written */
        uint8_t *b;
        size_t nb;
        read_file(path, &b, &nb);
        assert_int_equal(nb, 9 * 4096);
        const char want[] = "\0abcabcde";
        for (int i = 0; i < 9; i++) {
                assert_int_equal(b[i * 4096], (uint8_t)want[i]);
                assert_int_equal(b[i * 4096 + 4095], (uint8_t)want[i]);
        }
        free(b);
        /* a maximum already reached: nothing */
        assert_int_equal(
                etl_flush_batch(fd, bufs, 2, 4096, 9, 9 * 4096, NULL, &done, &full, &avail), 0);
        assert_int_equal(done, 0);
        assert_int_equal(full, LOG_FILE_FULL_SIZE);
        close(fd);
}

/* The space a flusher allocates ahead (fallocate, FALLOC_FL_KEEP_SIZE): the file's size is what
   was written all along, the blocks reach a step past it, never past the maximum size, and the
   close gives back what was not written; a writer killed leaves its file at the size written,
   every buffer reading back. */
static void test_flush_ahead(void **state)
{
        (void)state;
        char path[128];
        static uint8_t mem[5][4096];
        uint8_t *bufs[5];
        int fd = flush_file("ahead.etl", path, sizeof(path), mem, bufs);
        struct etl_flush_ahead ahead = {0};
        uint32_t done = 0;
        int full = -1;
        uint64_t avail = 0;
        assert_int_equal(etl_flush_batch(fd, bufs, 5, 4096, 1, 0, &ahead, &done, &full, &avail), 0);
        assert_int_equal(done, 5);
        struct stat st;
        assert_int_equal(fstat(fd, &st), 0);
        assert_int_equal(st.st_size, 6 * 4096);
        if (ahead.error) {
                skip(); /* this file system allocates nothing ahead: written as before */
                return;
        }
        assert_int_equal(ahead.end, 6 * 4096 + ETL_FLUSH_AHEAD_STEP);
        /* (buffer 0 was never written: a hole) */
        assert_true((uint64_t)st.st_blocks * 512 >= 5 * 4096 + ETL_FLUSH_AHEAD_STEP);
        /* within the step: nothing more asked; the size follows the writes */
        assert_int_equal(etl_flush_batch(fd, bufs, 5, 4096, 6, 0, &ahead, &done, &full, &avail), 0);
        assert_int_equal(ahead.end, 6 * 4096 + ETL_FLUSH_AHEAD_STEP);
        assert_int_equal(fstat(fd, &st), 0);
        assert_int_equal(st.st_size, 11 * 4096);
        /* the close's release: the size unchanged, the blocks past it gone */
        assert_int_equal(etl_flush_release_ahead(fd, &ahead), 0);
        assert_int_equal(fstat(fd, &st), 0);
        assert_int_equal(st.st_size, 11 * 4096);
        assert_true((uint64_t)st.st_blocks * 512 < 11 * 4096 + 65536);
        close(fd);
        /* a maximum size: nothing allocated past it */
        fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
        assert_true(fd >= 0);
        ahead = (struct etl_flush_ahead){0};
        assert_int_equal(
                etl_flush_batch(fd, bufs, 5, 4096, 1, 4 * 4096 + 100, &ahead, &done, &full, &avail),
                0);
        assert_int_equal(done, 3);
        assert_true(ahead.end <= 4 * 4096 + 100);
        assert_int_equal(fstat(fd, &st), 0);
        assert_int_equal(st.st_size, 4 * 4096);
        close(fd);

        /* the writer: killed with its buffers written, then a whole one closed */
        for (int is_killed = 1; is_killed >= 0; is_killed--) {
                char name[128];
                path_of(name, sizeof(name), is_killed ? "ahead-killed.etl" : "ahead-closed.etl");
                pid_t pid = is_killed ? fork() : 0;
                assert_true(pid >= 0);
                if (pid == 0) {
                        next_ts = 6000;
                        struct etl_writer *w = new_writer(2, 65536);
                        struct etl_error err;
                        assert_int_equal(etl_writer_open_file(w, name, false, &err), 0);
                        assert_int_equal(etl_writer_set_async(w, 64), 0);
                        for (int round = 0; round < 4; round++) {
                                write_samples(w, 2, 12000);
                                assert_int_equal(etl_writer_flush(w), 0);
                        }
                        if (!is_killed) {
                                assert_int_equal(etl_writer_close(w, 132000000050000000ll, 0, 0),
                                                 0);
                                etl_writer_free(w);
                                break;
                        }
                        /* every buffer handed over reached the file: then killed */
                        struct etl_writer_stats ws;
                        for (int i = 0; i < 10000; i++) {
                                etl_writer_get_stats(w, &ws);
                                if (!ws.nr_buffers_in_flight)
                                        break;
                                usleep(1000);
                        }
                        raise(SIGKILL);
                        _exit(1);
                }
                int wst = 0;
                assert_int_equal(waitpid(pid, &wst, 0), pid);
                assert_true(WIFSIGNALED(wst) && WTERMSIG(wst) == SIGKILL);
        }
        for (int is_killed = 1; is_killed >= 0; is_killed--) {
                char name[128];
                path_of(name, sizeof(name), is_killed ? "ahead-killed.etl" : "ahead-closed.etl");
                assert_int_equal(stat(name, &st), 0);
                /* 2 CPUs x 4 rounds x 12000 samples of 32 bytes: more than 30 buffers */
                assert_true(st.st_size > 30 * 65536);
                assert_int_equal(st.st_size % 65536, 0);
                if (is_killed)
                        assert_true((uint64_t)st.st_blocks * 512 > (uint64_t)st.st_size);
                else
                        assert_true((uint64_t)st.st_blocks * 512 < (uint64_t)st.st_size + 65536);
                struct etl_reader_stats rs;
                uint64_t back = 0;
                assert_int_equal(read_all(name, &back, &rs), 1 + 2 * 4 * 12000);
                assert_int_equal(rs.nr_buffers * 65536ull,
                                 (uint64_t)st.st_size); /* header included */
        }
}

/* A ring written through a descriptor (a circular file's STOP): to that file only, whatever its
   name says meanwhile, cut to what it holds. */
static void test_ring_save_fd(void **state)
{
        (void)state;
        char path[128], moved[128];
        path_of(path, sizeof(path), "reserved.etl");
        path_of(moved, sizeof(moved), "moved.etl");
        struct log_file_reserved r;
        struct etl_error err;
        assert_int_equal(log_file_reserve(&r, path, false, &err), 0);
        assert_int_equal(log_file_reserve(&(struct log_file_reserved){0}, path, false, &err),
                         -EEXIST);
        assert_int_equal(write(r.fd, "junk junk junk", 14), 14);
        assert_int_equal(rename(path, moved), 0);
        int fd = open(path, O_CREAT | O_WRONLY | O_EXCL, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "another", 7), 7);
        close(fd);
        assert_int_equal(log_file_reserved_check(&r, path), -ESTALE);

        struct etl_writer *w = new_writer(1, 4096);
        assert_int_equal(etl_writer_set_ring(w, 3 * 4096), 0);
        write_samples(w, 1, 1000);
        assert_int_equal(etl_writer_save_ring_fd(w, r.fd, path, 0, &err), 0);
        etl_writer_free(w);
        log_file_unreserve(&r); /* the name is another's file now: it stays */
        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_size, 7);
        assert_int_equal(stat(moved, &st), 0);
        assert_int_equal(st.st_size, 4 * 4096);
        uint64_t back = 0;
        assert_true(read_all(moved, &back, NULL) > 100);
        /* a name still the reserved file's is removed by unreserve */
        assert_int_equal(log_file_reserve(&r, moved, false, &err), -EEXIST);
        char again[128];
        path_of(again, sizeof(again), "again.etl");
        assert_int_equal(log_file_reserve(&r, again, false, &err), 0);
        assert_int_equal(log_file_reserved_check(&r, again), 0);
        log_file_unreserve(&r);
        assert_int_equal(lstat(again, &st), -1);
}

/* A file given up (a start that failed) is removed only while its name is still it: a file
   put at the name since stays. */
static void test_remove_file(void **state)
{
        (void)state;
        char path[128], moved[128];
        path_of(path, sizeof(path), "given-up.etl");
        path_of(moved, sizeof(moved), "given-up-moved.etl");
        struct etl_error err;
        struct etl_writer *w = new_writer(1, 4096);
        assert_int_equal(etl_writer_open_file(w, path, false, &err), 0);
        etl_writer_remove_file(w);
        struct stat st;
        assert_int_equal(lstat(path, &st), -1);
        etl_writer_free(w);

        w = new_writer(1, 4096);
        assert_int_equal(etl_writer_open_file(w, path, false, &err), 0);
        assert_int_equal(rename(path, moved), 0);
        int fd = open(path, O_CREAT | O_WRONLY | O_EXCL, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "another", 7), 7);
        close(fd);
        etl_writer_remove_file(w);
        etl_writer_free(w);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_size, 7);
        unlink(path);
        unlink(moved);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_round_trip),
                cmocka_unit_test(test_buffer_layout),
                cmocka_unit_test(test_file_safety),
                cmocka_unit_test(test_unfinalized),
                cmocka_unit_test(test_flush),
                cmocka_unit_test(test_ring_save),
                cmocka_unit_test(test_header_current_on_disk),
                cmocka_unit_test(test_ring_save_frames_its_events),
                cmocka_unit_test(test_real_time_callback),
                cmocka_unit_test(test_pool_pins),
                cmocka_unit_test(test_header_buffer),
                cmocka_unit_test(test_file_and_ring_counts),
                cmocka_unit_test(test_limits),
                cmocka_unit_test(test_async_same_file),
                cmocka_unit_test(test_reserve_commit),
                cmocka_unit_test(test_sink_room),
                cmocka_unit_test(test_sink_reserve_failure),
                cmocka_unit_test(test_max_file_size),
                cmocka_unit_test(test_ring_save_fd),
                cmocka_unit_test(test_remove_file),
                cmocka_unit_test(test_flush_batch),
                cmocka_unit_test(test_flush_ahead),
                cmocka_unit_test(test_placed_buffers),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
