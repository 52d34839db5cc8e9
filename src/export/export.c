/* SPDX-License-Identifier: MIT */
/* export.c: owns `etwtop --replay FILE --export FORMAT -o OUT`: the replay with the exports'
   sample sink on the model, the output's checks (out_file: only a regular file of ours is
   replaced, with --force; "-" is standard output) and the choice of writer. */
#include "export/export.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "etw/evntrace.h"
#include "model/stack_set.h"
#include "export/writers.h"
#include "comm_key.h"
#include "feed.h"
#include "ui/text_sanitize.h"
#include "model/hot.h"
#include "model/profile.h"
#include "symbols/symbols.h"
#include "util/out_file.h"

uint32_t export_sources(const struct export_ctx *x, uint16_t *out)
{
        const struct stack_set *s = x->samples;
        uint16_t order[AGG_MAX_SOURCES];
        uint32_t n = hot_sources(profile_hot(x->profile), order, AGG_MAX_SOURCES), nr = 0;
        bool is_out[sizeof(s->sources) / sizeof(s->sources[0])] = {false};
        for (uint32_t k = 0; k <= n; k++)
                for (uint32_t i = 0; i < s->nr_sources && nr < 16; i++) {
                        if (is_out[i] || (k < n && s->sources[i] != order[k]))
                                continue;
                        is_out[i] = true;
                        out[nr++] = s->sources[i];
                }
        return nr;
}

const char *export_source_name(const struct export_ctx *x, uint16_t source, char *buf, size_t size)
{
        return profile_source_name(x->profile, source, buf, size);
}

bool export_main_source(const struct export_ctx *x, uint16_t *source)
{
        uint16_t order[AGG_MAX_SOURCES];
        if (!export_sources(x, order))
                return false;
        *source = stack_set_source_index(x->samples, HOT_SOURCE_TIMER) >= 0 ? HOT_SOURCE_TIMER
                                                                            : order[0];
        return true;
}

static const struct {
        const char *name;
        enum export_format format;
        int (*write)(const struct export_ctx *x, int fd);
        bool is_samples;  /* writes the samples: a trace without any holds nothing */
        bool has_off_cpu; /* writes the off-CPU time by where threads blocked too */
} formats[] = {
        {"pprof", EXPORT_PPROF, export_write_pprof, true, true},
        {"folded", EXPORT_FOLDED, export_write_folded, true, false},
        {"speedscope", EXPORT_SPEEDSCOPE, export_write_speedscope, true, false},
        {"csv", EXPORT_CSV, export_write_csv, true, false},
        {"csv-modules", EXPORT_CSV_MODULES, export_write_csv_modules, true, false},
        {"csv-lines", EXPORT_CSV_LINES, export_write_csv_lines, true, false},
        {"csv-switches", EXPORT_CSV_SWITCHES, export_write_csv_switches, false, false},
        {"csv-branches", EXPORT_CSV_BRANCHES, export_write_csv_branches, false, false},
        {"csv-events", EXPORT_CSV_EVENTS, NULL, false, false}, /* export_events_run */
        {"bolt", EXPORT_BOLT, export_write_bolt, false, false},
        {"profgen", EXPORT_PROFGEN, NULL, false, false},       /* export_profgen_run */
        {"profgen-cs", EXPORT_PROFGEN_CS, NULL, false, false}, /* export_profgen_run */
};
#define NR_FORMATS (sizeof(formats) / sizeof(formats[0]))

int export_format_parse(const char *name, enum export_format *out)
{
        for (size_t i = 0; i < NR_FORMATS; i++)
                if (strcmp(name, formats[i].name) == 0) {
                        *out = formats[i].format;
                        return 0;
                }
        return -EINVAL;
}

const char *export_format_names(void)
{
        return "pprof, folded, speedscope, csv, csv-modules, csv-lines, csv-switches, "
               "csv-branches, csv-events, bolt, profgen, profgen-cs";
}

static void on_log(void *ctx, const char *message)
{
        (void)ctx;
        char clean[1024]; /* a path from the trace may hold escape sequences */
        text_sanitize(clean, sizeof(clean), message);
        fprintf(stderr, "etwtop: symbols: %s\n", clean);
}

/* Before the replay: out must be free, or a regular file of ours and is_force, and must not be
   the input ("-" is standard output). */
static int check_output(const struct export_options *o, char *err, size_t err_size)
{
        unsigned flags = OUT_FILE_STDOUT | (o->is_force ? OUT_FILE_FORCE : 0);
        struct stat in, out;
        if (strcmp(o->out_path, "-") != 0 && stat(o->path, &in) == 0 &&
            lstat(o->out_path, &out) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
                snprintf(err, err_size, "%s is the recording being read: not overwritten",
                         o->out_path);
                return -1;
        }
        return out_file_check(o->out_path, flags, err, err_size) < 0 ? -1 : 0;
}

int export_run(const struct export_options *opts, char *err, size_t err_size)
{
        int rc = -1;
        size_t k;
        for (k = 0; k < NR_FORMATS && formats[k].format != opts->format; k++)
                ;
        if (k == NR_FORMATS) {
                snprintf(err, err_size, "unknown export format %d (%s)", (int)opts->format,
                         export_format_names());
                return -1;
        }
        if (check_output(opts, err, err_size) < 0)
                return -1;
        if (!formats[k].write) /* csv-events, profgen: written as the trace is read */
                return opts->format == EXPORT_PROFGEN || opts->format == EXPORT_PROFGEN_CS
                               ? export_profgen_run(opts, err, err_size)
                               : export_events_run(opts, err, err_size);
        struct profile_options po = {.symbol_path = opts->symbol_path,
                                     .nr_symbol_path = opts->nr_symbol_path,
                                     /* bolt: names as BOLT reads them, mangled */
                                     .is_no_demangle =
                                             opts->is_no_demangle || opts->format == EXPORT_BOLT,
                                     .log = on_log};
        struct profile *p = profile_new(&po);
        /* csv's rows per process or thread: the places keyed so, the processes by name */
        struct comm_keys ck = {0};
        if (opts->format == EXPORT_CSV && opts->grouping != HOT_BY_FUNCTION) {
                hot_set_place_keys(profile_hot(p), (enum hot_grouping)opts->grouping);
                if (opts->grouping == HOT_BY_PROCESS)
                        comm_keys_use(&ck, p, opts->is_comm ? COMM_PERF : COMM_PROCESS_NAME);
                else if (opts->grouping == HOT_BY_THREAD)
                        comm_keys_use(&ck, p, COMM_THREAD);
        }
        struct stack_set *s = stack_set_new(profile_store(p));
        struct comm_keys sk; /* the stacks' processes by perf's comm */
        comm_keys_use_for_stacks(&sk, p, s);
        profile_set_sample_sink(p, stack_set_event, s);
        if (opts->pid)
                profile_zoom(p, opts->pid); /* -p: one process, as the screen's t does */
        struct feed *f = NULL;
        if (feed_replay_file(&f, p, opts->path, opts->has_from, opts->from_s, opts->has_to,
                             opts->to_s, err, err_size) < 0)
                goto out;
        /* the samples still waiting for their stacks count with what they have */
        profile_end(p);
        stack_set_end(s);
        /* the modules the samples hit have been loading on the loader thread all along */
        sym_store_wait(profile_store(p));
        sym_store_poll(profile_store(p));
        if (formats[k].has_off_cpu)
                stack_set_off_cpu(s, p);
        stack_set_name(s, p);

        if (formats[k].is_samples && !s->nr_sources)
                fprintf(stderr,
                        "etwtop: %s has no samples (PROFILE or PMC_PROFILE was off): %s holds "
                        "none\n",
                        opts->path, opts->out_path);
        struct out_file of;
        if (out_file_open(&of, opts->out_path,
                          OUT_FILE_STDOUT | (opts->is_force ? OUT_FILE_FORCE : 0), err,
                          err_size) < 0)
                goto out;
        struct export_ctx x = {.opts = opts, .profile = p, .samples = s};
        int wrc = formats[k].write(&x, of.fd);
        if (wrc < 0) {
                snprintf(err, err_size, "writing %s: %s", opts->out_path, strerror(-wrc));
                out_file_abort(&of);
                goto out;
        }
        if (out_file_commit(&of, err, err_size) < 0)
                goto out;
        rc = 0;
out:
        feed_close(f);
        stack_set_free(s);
        profile_free(p);
        comm_keys_free(&ck);
        comm_keys_free(&sk);
        return rc;
}
