/* SPDX-License-Identifier: MIT */
/* perf_data_etl.c: a perf.data file as an .etl: written converted (--merge), opened for the
   consumer (OpenTrace, CreateMergedTraceFile) through a temporary file, and the line that says
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

#include "etw/evntrace.h"

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
        const char *sep = "; events: ";
        for (uint32_t i = 0; i < perf_data_nr_events(pd); i++) {
                const struct perf_data_event *ev = perf_data_event(pd, i);
                if (ev->attr.type == PERF_TYPE_SOFTWARE && ev->attr.config == PERF_COUNT_SW_DUMMY)
                        continue;
                char name[64];
                perf_data_event_name(ev, name, sizeof(name));
                appendf(buf, size, &len, "%s%s", sep, name);
                sep = ", ";
                if (ev->attr.freq && ev->attr.sample_freq)
                        appendf(buf, size, &len, " (%llu Hz)",
                                (unsigned long long)ev->attr.sample_freq);
                else if (ev->attr.sample_period)
                        appendf(buf, size, &len, " (period %llu)",
                                (unsigned long long)ev->attr.sample_period);
        }
        if (in->cmdline)
                appendf(buf, size, &len, "; command: %s", in->cmdline);
        /* the file's strings, shown on a terminal: no control characters */
        for (size_t i = 0; i < len; i++)
                if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
                        buf[i] = ' ';
}

/* perf_data_write_etl, with the header's LogFileName log_name; is_scratch: a temporary file,
   removed once read, never synced to the disk. */
static int write_etl(const char *in_path, const char *out_path, const char *log_name, bool is_force,
                     bool is_scratch, struct perf_data_conv_stats *st, struct etl_error *err)
{
        struct perf_data *pd = NULL;
        struct err_msg perr;
        int rc = perf_data_open_file(&pd, in_path, &perr);
        if (rc < 0) {
                etl_error_set(err, perr.offset, "%s", perr.msg);
                return rc;
        }
        struct etl_writer_config cfg;
        uint64_t span = perf_data_conv_config_span(pd, &cfg);
        cfg.log_file_name = log_name;
        cfg.is_scratch = is_scratch;
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
                perf_data_close(pd);
                return rc;
        }
        rc = etl_writer_open_file(w, out_path, is_force, err);
        if (rc < 0) {
                etl_writer_free(w);
                perf_data_close(pd);
                return rc;
        }
        int rc_conv = perf_data_convert(pd, w, st, &perr);
        rc = etl_writer_close(w, 0, 0, 0);
        etl_writer_free(w);
        perf_data_close(pd);
        if (rc < 0) {
                etl_error_set(err, 0, "%s: %s", out_path, strerror(-rc));
                return rc;
        }
        if (rc_conv < 0) {
                etl_error_set(err, perr.offset, "%s: %s (the records before it are converted)",
                              in_path, perr.msg);
                return rc_conv;
        }
        return 0;
}

int perf_data_write_etl(const char *in_path, const char *out_path, bool is_force,
                        struct perf_data_conv_stats *st, struct etl_error *err)
{
        return write_etl(in_path, out_path, out_path, is_force, false, st, err);
}

/* Whether the file at path starts with perf.data's magic. */
static bool perf_data_file_is_perf_data(const char *path)
{
        uint8_t magic[8];
        FILE *f = fopen(path, "rb");
        if (!f)
                return false;
        bool is = fread(magic, 1, 8, f) == 8 && perf_data_is_perf_data(magic, 8);
        fclose(f);
        return is;
}

/* The last conversion, kept for the next open of the same input: a replay opens its trace
   twice (the feed reads a file's stack keys ahead; an .etl's pass stops at its first buffer,
   but each OpenTrace of a perf.data converted the whole file again: a fifth of -b's time on a
   large file), and standard input can be read only once. */
static struct {
        pthread_mutex_t lock;
        int fd; /* owned: the converted .etl, already removed; -1: none */
        bool is_stdin;
        dev_t dev;
        ino_t ino;
        off_t size;
        struct timespec mtime;
        struct etl_error err; /* the conversion's warning (a damaged file read to the damage) */
} last = {PTHREAD_MUTEX_INITIALIZER, -1, false, 0, 0, 0, {0, 0}, {0}};

static bool is_last(bool is_stdin, const struct stat *st)
{
        if (last.fd < 0 || is_stdin != last.is_stdin)
                return false;
        return is_stdin || (st->st_dev == last.dev && st->st_ino == last.ino &&
                            st->st_size == last.size && st->st_mtim.tv_sec == last.mtime.tv_sec &&
                            st->st_mtim.tv_nsec == last.mtime.tv_nsec);
}

/* Opens the kept conversion (last.lock held). */
static int open_last(struct etl_reader **out, struct etl_error *err)
{
        char proc[64];
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", last.fd);
        int rc = etl_reader_open_file(out, proc, err);
        if (rc == 0 && err)
                *err = last.err;
        return rc;
}

int perf_data_etl_reader_open(struct etl_reader **out, const char *path, struct etl_error *err)
{
        bool is_stdin = strcmp(path, "-") == 0;
        if (!is_stdin && !perf_data_file_is_perf_data(path))
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
                int rc = open_last(out, err);
                pthread_mutex_unlock(&last.lock);
                return rc;
        }
        pthread_mutex_unlock(&last.lock);
        const char *tmp = getenv("TMPDIR");
        char dir[4096];
        snprintf(dir, sizeof(dir), "%s/etwtop-perfdata-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(dir)) {
                int e = errno;
                etl_error_set(err, 0, "%s: cannot make a temporary folder: %s", dir, strerror(e));
                return -e;
        }
        char etl[4200];
        snprintf(etl, sizeof(etl), "%s/converted.etl", dir);
        /* read once and removed: no sync (the writer syncs a recording at each flush) */
        struct etl_error conv_err = {0};
        int rc = write_etl(path, etl, path, false, true, NULL, &conv_err);
        if (err)
                *err = conv_err;
        /* a damaged file is read up to the damage: what was converted is opened */
        struct etl_error err2;
        bool is_written = access(etl, F_OK) == 0; /* not when the perf.data did not open */
        int rc_open = is_written && (rc == 0 || rc == -EBADMSG)
                              ? etl_reader_open_file(out, etl, &err2)
                              : rc;
        int keep = rc_open == 0 ? open(etl, O_RDONLY | O_CLOEXEC) : -1;
        unlink(etl);
        rmdir(dir);
        if (keep >= 0) {
                pthread_mutex_lock(&last.lock);
                if (last.fd >= 0)
                        close(last.fd);
                last.fd = keep;
                last.is_stdin = is_stdin;
                last.dev = st.st_dev;
                last.ino = st.st_ino;
                last.size = st.st_size;
                last.mtime = st.st_mtim;
                last.err = conv_err;
                pthread_mutex_unlock(&last.lock);
        }
        if (rc_open < 0 && rc == 0 && err)
                *err = err2;
        return rc_open < 0 ? rc_open : 0;
}
