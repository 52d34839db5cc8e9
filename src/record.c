/* SPDX-License-Identifier: MIT */
/* record.c: owns the recording loop of `etwtop --record`: the live source drained into the
   writer from one poll(2) loop, progress on stderr, a clean end on signals and full disks. */
#include "record.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "etl_writer.h"

#define FILETIME_UNIX_EPOCH 116444736000000000ll
#define DRAIN_BUDGET        8192
#define PROGRESS_NS         1000000000ll

static int64_t clock_ns(clockid_t id)
{
        struct timespec ts;
        clock_gettime(id, &ts);
        return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static int64_t filetime_of_ns(int64_t unix_ns)
{
        return FILETIME_UNIX_EPOCH + unix_ns / 100;
}

/* The wall time of a CLOCK_MONOTONIC instant: a tight pair of readings (LINUX-MAPPING.md 5.3). */
static void clock_anchor(int64_t *mono_ns, int64_t *real_ns, int64_t *boot_real_ns)
{
        int64_t m0 = clock_ns(CLOCK_MONOTONIC);
        int64_t r = clock_ns(CLOCK_REALTIME);
        int64_t m1 = clock_ns(CLOCK_MONOTONIC);
        int64_t boot = clock_ns(CLOCK_BOOTTIME);
        *mono_ns = m0 + (m1 - m0) / 2;
        *real_ns = r;
        *boot_real_ns = r - boot;
}

static uint32_t cpu_mhz(void)
{
        FILE *f = fopen("/proc/cpuinfo", "r");
        char line[256];
        double mhz = 0;
        while (f && fgets(line, sizeof(line), f))
                if (sscanf(line, "cpu MHz : %lf", &mhz) == 1)
                        break;
        if (f)
                fclose(f);
        return (uint32_t)mhz;
}

static void progress(int fd, const struct live_stats *ls, const struct etl_writer_stats *ws,
                     bool is_final)
{
        if (fd < 0)
                return;
        char line[200];
        int n = snprintf(line, sizeof(line),
                         "%srecording: %" PRIu64 " events, %.1f MB, %" PRIu64 " lost%s",
                         isatty(fd) ? "\r" : "", ws->nr_events, (double)ws->nr_bytes_written / 1e6,
                         ls->nr_events_lost, isatty(fd) && !is_final ? "   " : "\n");
        if (n > 0 && write(fd, line, (size_t)n) < 0) {
                /* progress is best effort */
        }
}

int record_run(const struct record_options *opts, char *err, size_t err_size)
{
        struct live_caps caps;
        live_probe(&caps);
        int64_t mono, real, boot_real;
        clock_anchor(&mono, &real, &boot_real);
        struct utsname un;
        unsigned major = 0, minor = 0, patch = 0;
        if (uname(&un) == 0)
                sscanf(un.release, "%u.%u.%u", &major, &minor, &patch);

        struct etl_writer_config cfg = {
                .buffer_size_bytes = (opts->buffer_size_kb ? opts->buffer_size_kb : 64) * 1024,
                .nr_cpus = caps.nr_cpus ? caps.nr_cpus : 1,
                .log_file_mode = EVENT_TRACE_FILE_MODE_SEQUENTIAL | EVENT_TRACE_SYSTEM_LOGGER_MODE,
                .logger_id = 1,
                .logger_name = KERNEL_LOGGER_NAMEA,
                .log_file_name = opts->path,
                .start_timestamp = (uint64_t)mono,
                .start_filetime = filetime_of_ns(real),
                .boot_filetime = filetime_of_ns(boot_real),
                .perf_freq = 1000000000ull, /* DESIGN.md: CLOCK_MONOTONIC ns as QPC ticks */
                .clock_type = EVENT_TRACE_CLOCK_PERFCOUNTER,
                .os_major = (uint8_t)major,
                .os_minor = (uint8_t)minor,
                .provider_version = patch,
                .timer_resolution_100ns = 10000,
                .cpu_speed_mhz = cpu_mhz(),
                .header_tid = (uint32_t)getpid(),
                .header_pid = (uint32_t)getpid(),
        };
        struct etl_writer *w = NULL;
        int rc = etl_writer_new(&w, &cfg);
        if (rc < 0) {
                snprintf(err, err_size, "--buffer-size %u KB: buffers are 1 KB to 16 MB",
                         opts->buffer_size_kb);
                return -1;
        }
        struct etl_error e;
        if (etl_writer_open_file(w, opts->path, opts->is_force, &e) < 0) {
                snprintf(err, err_size, "%s", e.msg);
                etl_writer_free(w);
                return -1;
        }

        /* Ctrl-C, SIGTERM and a closed terminal end the recording through the loop. */
        sigset_t mask, old;
        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGHUP);
        sigprocmask(SIG_BLOCK, &mask, &old);
        int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);

        struct live_source *ls = NULL;
        rc = live_source_open(&ls, &opts->settings, w, &e);
        if (rc < 0) {
                snprintf(err, err_size, "%s", e.msg);
                etl_writer_close(w, filetime_of_ns(clock_ns(CLOCK_REALTIME)), 0, 0);
                etl_writer_free(w);
                unlink(opts->path);
                if (sfd >= 0)
                        close(sfd);
                sigprocmask(SIG_SETMASK, &old, NULL);
                return -1;
        }

        int64_t start = clock_ns(CLOCK_MONOTONIC);
        int64_t end = opts->duration_s > 0 ? start + (int64_t)(opts->duration_s * 1e9) : INT64_MAX;
        int64_t next_progress = start + PROGRESS_NS;
        const char *why_stopped = NULL;
        struct live_stats lst;
        struct etl_writer_stats wst;
        for (;;) {
                int64_t now = clock_ns(CLOCK_MONOTONIC);
                if (now >= end)
                        break;
                int64_t wait = next_progress - now;
                if (end - now < wait)
                        wait = end - now;
                struct pollfd pfd[2] = {{live_source_fd(ls), POLLIN, 0}, {sfd, POLLIN, 0}};
                int n = poll(pfd, sfd >= 0 ? 2 : 1, (int)(wait / 1000000) + 1);
                if (n < 0 && errno != EINTR) {
                        why_stopped = "poll failed";
                        break;
                }
                if (sfd >= 0 && (pfd[1].revents & POLLIN)) {
                        struct signalfd_siginfo si;
                        if (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
                                why_stopped = si.ssi_signo == SIGINT   ? "interrupted"
                                              : si.ssi_signo == SIGHUP ? "the terminal closed"
                                                                       : "terminated";
                        break;
                }
                int k;
                while ((k = live_source_drain(ls, DRAIN_BUDGET)) > 0)
                        ;
                if (k < 0) {
                        why_stopped = strerror(-k);
                        break;
                }
                etl_writer_get_stats(w, &wst);
                if (wst.write_error) {
                        why_stopped = strerror(wst.write_error);
                        break;
                }
                if (clock_ns(CLOCK_MONOTONIC) >= next_progress) {
                        live_source_get_stats(ls, &lst);
                        progress(opts->progress_fd, &lst, &wst, false);
                        next_progress += PROGRESS_NS;
                }
        }
        live_source_get_stats(ls, &lst);
        live_source_close(ls);
        uint64_t lost = lst.nr_events_lost;
        rc = etl_writer_close(w, filetime_of_ns(clock_ns(CLOCK_REALTIME)),
                              lost > UINT32_MAX ? UINT32_MAX : (uint32_t)lost, 0);
        etl_writer_get_stats(w, &wst);
        progress(opts->progress_fd, &lst, &wst, true);
        etl_writer_free(w);
        if (sfd >= 0)
                close(sfd);
        sigprocmask(SIG_SETMASK, &old, NULL);
        if (rc < 0) {
                snprintf(err, err_size, "%s: %s; the file holds what was written before",
                         opts->path, strerror(-rc));
                return -1;
        }
        if (why_stopped && opts->progress_fd >= 0)
                dprintf(opts->progress_fd, "recording stopped: %s; %s is complete\n", why_stopped,
                        opts->path);
        return 0;
}
