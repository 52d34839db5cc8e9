/* SPDX-License-Identifier: MIT */
/* record.h: `etwtop --record`: a kernel-logger session written to an .etl file. */
#ifndef ETWTOP_RECORD_H
#define ETWTOP_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "etw_client.h"

/* --max-file-size's default for --record, --start -f and --boottrace (doc/etwtop.1) */
#define RECORD_DEFAULT_MAX_FILE_MB 1024

struct record_options {
        const char *path; /* borrowed */
        bool is_force;    /* replace an existing file */
        /* borrowed: what the session collects; pid > 0: that process and its threads only */
        const struct collect_settings *collect;
        double duration_s;       /* 0: until Ctrl-C, SIGTERM or SIGHUP */
        uint32_t buffer_size_kb; /* EVENT_TRACE_PROPERTIES.BufferSize; 0: the API's (64) */
        uint32_t min_buffers;    /* MinimumBuffers (--min-buffers); 0: the API's */
        uint32_t max_file_mb;    /* MaximumFileSize (--max-file-size); 0: none */
        int progress_fd;         /* where progress lines go (stderr), -1 for none */
};

/* Records through the controller API (StartTrace in file mode, ControlTrace QUERY and STOP)
   until the duration ends, a signal arrives or the session stops itself (its file cannot be
   written: a full disk), and leaves a finalized file in every case. Returns 0, or -1 with a
   message in err that names the fix (a missing privilege, hardware this machine lacks, a file
   that exists) or why the session stopped. */
int record_run(const struct record_options *opts, char *err, size_t err_size);

/* The progress line, "recording: N buffers, X MB, N lost", from ControlTrace(QUERY)'s
   counters: on a terminal (fd) rewritten in place until the final one. Also the screen's
   summary when it records. */
void record_progress(int fd, const struct etw_client_stats *st, bool is_final);

#endif
