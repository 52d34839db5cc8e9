/* SPDX-License-Identifier: MIT */
/* record.c: owns the recording loop of `etwtop --record`: a file-mode kernel session started,
   watched and stopped through the controller API, progress on stderr, a clean end on signals
   and when the session stops itself. */
#include "record.h"
#include "le_bytes.h"
#include "util/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PROGRESS_NS 1000000000ll

/* What ControlTrace(QUERY) says, as one line: the buffers in the file (its header buffer
   included, as the file header counts them), their size, and the events lost. */
void record_progress(int fd, const struct etw_client_stats *st, bool is_final)
{
        if (fd < 0)
                return;
        char line[256], max[40] = "";
        double mb = (double)st->nr_buffers_written * st->buffer_size_kb * 1024 / 1e6;
        if (st->max_file_mb) /* the file stops at its MaximumFileSize (MB of 2^20 bytes) */
                snprintf(max, sizeof(max), ", %u MiB at most", (unsigned)st->max_file_mb);
        /* the limit right after the counts, the advice on losses last */
        int n = snprintf(line, sizeof(line),
                         "%srecording: %" PRIu64 " buffers, %.1f MB, %" PRIu64 " lost%s%s%s",
                         isatty(fd) ? "\r" : "", st->nr_buffers_written, mb, st->nr_events_lost,
                         max,
                         is_final && st->nr_events_lost
                                 ? " (the kernel's buffers were full: --min-buffers raises them)"
                                 : "",
                         isatty(fd) && !is_final ? "   " : "\n");
        if (n > 0 && write(fd, line, (size_t)n) < 0) {
                /* progress is best effort */
        }
}

/* A finished .etl's size in bytes and, in KB, its buffer size (the first buffer header's
   BufferSize, bytes at offset 0: ETL-FORMAT.md; 0 where it cannot be read). False when path is
   no regular file (a link is not followed). */
static bool file_size_and_buffer_kb(const char *path, uint64_t *size, uint32_t *buffer_kb)
{
        int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return false;
        uint8_t b[4];
        struct stat fs;
        bool is_file = fstat(fd, &fs) == 0 && S_ISREG(fs.st_mode);
        *size = is_file ? (uint64_t)fs.st_size : 0;
        *buffer_kb = is_file && pread(fd, b, 4, 0) == 4 ? le_get32(b) / 1024u : 0;
        close(fd);
        return is_file;
}

int record_run(const struct record_options *opts, char *err, size_t err_size)
{
        /* Ctrl-C, SIGTERM and a closed terminal end the recording through the loop; blocked
           before the start, so that the session's threads never take them either. */
        sigset_t mask, old;
        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGHUP);
        sigprocmask(SIG_BLOCK, &mask, &old);
        int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);

        struct etw_client_options co = {
                .file = opts->path,
                .is_force = opts->is_force,
                .buffer_size_kb = opts->buffer_size_kb,
                .min_buffers = opts->min_buffers,
                .max_file_mb = opts->max_file_mb,
                .is_process_only = true,
        };
        struct etw_client client;
        if (etw_client_start(&client, &co, opts->collect, err, err_size) < 0) {
                if (sfd >= 0)
                        close(sfd);
                sigprocmask(SIG_SETMASK, &old, NULL);
                return -1;
        }

        int64_t start = (int64_t)now_ns();
        int64_t end = opts->duration_s > 0 ? start + (int64_t)(opts->duration_s * 1e9) : INT64_MAX;
        int64_t next_progress = start + PROGRESS_NS;
        const char *why_stopped = NULL;
        char why_ended[512] = ""; /* the session stopped itself: the API's reason */
        struct etw_client_stats st = {0};
        if (etw_client_query(&client, NULL, &st) != ERROR_SUCCESS) {
                /* its buffer size and maximum file size, unless it stopped itself already (a
                   small --max-file-size fills during the start on a busy machine): then what
                   it was given */
                st.buffer_size_kb = opts->buffer_size_kb;
                st.max_file_mb = opts->max_file_mb;
        }
        for (;;) {
                int64_t now = (int64_t)now_ns();
                if (now >= end)
                        break;
                if (now >= next_progress) {
                        ULONG code = etw_client_query(&client, NULL, &st);
                        if (code != ERROR_SUCCESS) {
                                /* the session stopped itself; the API's message says why */
                                snprintf(why_ended, sizeof(why_ended), "%s", etw_last_error_text());
                                break;
                        }
                        record_progress(opts->progress_fd, &st, false);
                        next_progress += PROGRESS_NS;
                        /* more than a step behind (the process was stopped, or starved of a
                           CPU): the next step a step from now, not in the past, where the wait
                           below came out negative and poll waited forever */
                        if (next_progress <= now)
                                next_progress = now + PROGRESS_NS;
                }
                int64_t wait = next_progress - now;
                if (end - now < wait)
                        wait = end - now;
                if (wait < 0)
                        wait = 0;
                struct pollfd pfd = {sfd, POLLIN, 0};
                int n = poll(&pfd, sfd >= 0 ? 1 : 0, (int)(wait / 1000000) + 1);
                if (n < 0 && errno != EINTR) {
                        why_stopped = "poll failed";
                        break;
                }
                if (n > 0 && (pfd.revents & POLLIN)) {
                        struct signalfd_siginfo si;
                        if (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
                                why_stopped = si.ssi_signo == SIGINT   ? "interrupted"
                                              : si.ssi_signo == SIGHUP ? "the terminal closed"
                                                                       : "terminated";
                        break;
                }
        }
        if (!why_ended[0]) {
                ULONG code = etw_client_stop(&client, &st);
                if (code != ERROR_SUCCESS)
                        snprintf(why_ended, sizeof(why_ended), "%s (Win32 error %u)",
                                 etw_last_error_text(), (unsigned)code);
        }
        uint64_t file_size;
        uint32_t file_buffer_kb;
        if (why_ended[0] && file_size_and_buffer_kb(opts->path, &file_size, &file_buffer_kb)) {
                /* the session is gone: its finalized file says what it holds, in buffers of
                   the size its first buffer's header gives when no query said it */
                if (!st.buffer_size_kb)
                        st.buffer_size_kb = file_buffer_kb;
                if (st.buffer_size_kb)
                        st.nr_buffers_written = file_size / (st.buffer_size_kb * 1024u);
        }
        record_progress(opts->progress_fd, &st, true);
        if (sfd >= 0)
                close(sfd);
        sigprocmask(SIG_SETMASK, &old, NULL);
        if (why_ended[0] && strstr(why_ended, "(MaximumFileSize)")) {
                /* the limit the recording was given: its file is complete */
                if (opts->progress_fd >= 0)
                        dprintf(opts->progress_fd,
                                "recording stopped: %s (--max-file-size); %s is complete\n",
                                strstr(why_ended, "the log file")
                                        ? strstr(why_ended, "the log file")
                                        : why_ended,
                                opts->path);
        } else if (why_ended[0]) {
                snprintf(err, err_size, "recording stopped: %s; %s holds what was written before",
                         why_ended, opts->path);
                return -1;
        }
        if (why_stopped && opts->progress_fd >= 0)
                dprintf(opts->progress_fd, "recording stopped: %s; %s is complete\n", why_stopped,
                        opts->path);
        return 0;
}
