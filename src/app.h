/* SPDX-License-Identifier: MIT */
/* app.h: the etwtop screen: a live kernel session (or a recording) fed through the consumer API
   into the model, drawn by ui/, with the session's settings changed from the panel. */
#ifndef ETWTOP_APP_H
#define ETWTOP_APP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "etw_client.h"

struct app_options {
        const char *replay_path; /* NULL: live */
        const char *record_path; /* live: also write the session to this .etl (NULL: no file) */
        uint32_t max_file_mb;    /* that file's MaximumFileSize (0: none) */
        uint32_t buffer_size_kb; /* the session's BufferSize (--buffer-size; 0: the API's) */
        uint32_t min_buffers;    /* its MinimumBuffers (--min-buffers; 0: the API's) */
        bool is_force;
        bool is_batch; /* text frames on stdout instead of the screen */
        /* text frames (batch, or a terminal that cannot draw the screen): how many to print
           (0: until interrupted) */
        uint32_t nr_frames;
        double delay_s; /* refresh interval */
        bool is_mono;
        uint32_t nr_top; /* batch: rows per table (0: 25) */
        const char *const *symbol_path;
        uint32_t nr_symbol_path;
        bool is_no_demangle; /* --no-demangle */
        /* live: what the session collects; its pid is the process the views count (-p: the
           session stays system-wide, as the kernel logger is) */
        struct collect_settings collect;
        double duration_s; /* live: stop after this long (0: until q) */
        /* live: the running session to consume (--attach; it keeps running at the end); NULL:
           the screen starts its own */
        const char *attach_name;
        int group;          /* --sort: enum functions_group (ui/views.h) */
        const char *source; /* --source: the hot functions' profile source (NULL: the first) */
        /* replay: --from/--to, the range every view shows first (seconds after the trace's
           start; has_ false: from its start, to its end) */
        bool has_from, has_to;
        double from_s, to_s;
};

/* Runs the screen (or batch frames) until q, the end of --duration, or a signal. Returns 0, or
   -1 with a message in err (a missing privilege names the fix). */
int app_run(const struct app_options *o, char *err, size_t err_size);

#endif
