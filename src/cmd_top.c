/* SPDX-License-Identifier: MIT */
/* cmd_top.c: owns the screen's commands: live (or -b's text frames), over a recording
   (--replay FILE), or over a running session (--attach [NAME]): app.c runs them. */
#include "cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "app.h"
#include "etw/KernelTraceControl.h"

/* The screen, or live -b: not --dump, --merge, --replay -b, nor --record without a terminal. */
static bool is_top(const struct cli_args *a)
{
        bool is_screen = !a->is_dump && !a->is_merge && !(a->replay_path && a->is_batch) &&
                         (!a->record_path || (isatty(STDOUT_FILENO) && !a->is_batch));
        bool is_live_batch = a->is_batch && !a->replay_path && !a->record_path && !a->is_dump;
        return is_screen || is_live_batch;
}

static int top_main(struct cli_args *a, const char *attach_name)
{
        char err[1024];
        int rc = cli_collect(a);
        if (rc != CLI_CONTINUE)
                return rc;
        struct app_options ao = {0};
        ao.replay_path = a->replay_path;
        ao.record_path = a->record_path;
        ao.max_file_mb = a->rec.max_file_mb;
        ao.buffer_size_kb = a->rec.buffer_size_kb;
        ao.min_buffers = a->rec.min_buffers;
        ao.is_force = a->is_force;
        ao.is_batch = a->is_batch;
        /* -b: one frame unless -n says; with --duration, frames until it ends */
        /* (and -n for the text frames of a terminal that cannot draw the screen) */
        ao.nr_frames = a->nr_frames            ? a->nr_frames
                       : !a->is_batch          ? 0
                       : a->rec.duration_s > 0 ? 0
                                               : 1;
        ao.delay_s = a->delay_s;
        ao.is_mono = a->is_mono || getenv("NO_COLOR") != NULL;
        ao.nr_top = a->nr_top;
        ao.symbol_path = a->symbol_path;
        ao.nr_symbol_path = a->nr_symbol_path;
        ao.is_no_demangle = a->is_no_demangle;
        ao.collect = a->collect;
        ao.duration_s = a->rec.duration_s;
        ao.attach_name = attach_name;
        ao.group = a->group;
        ao.source = a->source;
        ao.has_from = a->has_from;
        ao.has_to = a->has_to;
        ao.from_s = a->from_s;
        ao.to_s = a->to_s;
        if (app_run(&ao, err, sizeof(err)) < 0) {
                fprintf(stderr, "etwtop: %s\n", err);
                return 1;
        }
        return 0;
}

static int run_top(struct cli_args *a)
{
        return top_main(a, NULL);
}

const struct cmd cmd_top = {
        .name = "top",
        .synopsis = "[options]\tthe live screen (q quits)\n"
                    "-b [-n FRAMES] [-d SECONDS]\tthe same as text frames on stdout",
        .precedence = 6,
        .checks = CLI_CHECK_MODES | CLI_CHECK_REPORT,
        .match = is_top,
        .run = run_top,
};

static bool is_attach(const struct cli_args *a)
{
        return a->is_attach;
}

static int run_attach(struct cli_args *a)
{
        if (a->record_path || a->replay_path || a->is_dump || a->nr_rest > 1) {
                fprintf(stderr, "etwtop: --attach takes one session name at most, without "
                                "--record, --replay or --dump\n");
                return 2;
        }
        return top_main(a, a->nr_rest > 0 ? a->rest[0] : KERNEL_LOGGER_NAMEA);
}

const struct cmd cmd_attach = {
        .name = "attach",
        .synopsis = "--attach [NAME] [-b]\tthe screen over a running session (q\n"
                    "\tleaves it running)",
        .precedence = 5,
        .checks = CLI_CHECK_MODES | CLI_CHECK_REPORT,
        .match = is_attach,
        .run = run_attach,
};
