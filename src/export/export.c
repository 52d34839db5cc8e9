/* SPDX-License-Identifier: MIT */
/* export.c: owns `etwtop --replay FILE --export FORMAT -o OUT`: the replay with the exports'
   sample sink on the model, the output file's creation (0600, no symlink followed, nothing
   replaced without --force) and the choice of writer. */
#include "export/export.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "etw/evntrace.h"
#include "export/samples.h"
#include "export/writers.h"
#include "feed.h"
#include "model/profile.h"

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
               "csv-branches, csv-events";
}

static void on_log(void *ctx, const char *message)
{
        (void)ctx;
        fprintf(stderr, "etwtop: symbols: %s\n", message);
}

/* Before the replay: out must not exist (unless is_force), and must not be the input. */
static int check_output(const struct export_options *o, char *err, size_t err_size)
{
        struct stat in, out;
        if (lstat(o->out_path, &out) < 0) {
                if (errno == ENOENT)
                        return 0;
                snprintf(err, err_size, "%s: %s", o->out_path, strerror(errno));
                return -1;
        }
        if (S_ISDIR(out.st_mode)) {
                snprintf(err, err_size, "%s is a directory", o->out_path);
                return -1;
        }
        if (stat(o->path, &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
                snprintf(err, err_size, "%s is the recording being read: not overwritten",
                         o->out_path);
                return -1;
        }
        if (!o->is_force) {
                snprintf(err, err_size, "%s exists: not overwritten (use --force)", o->out_path);
                return -1;
        }
        return 0;
}

/* Creates out: 0600, no symlink followed, an existing name (is_force) removed first. */
static int create_output(const struct export_options *o, char *err, size_t err_size)
{
        if (o->is_force && unlink(o->out_path) < 0 && errno != ENOENT) {
                snprintf(err, err_size, "cannot replace %s: %s", o->out_path, strerror(errno));
                return -1;
        }
        int fd = open(o->out_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) {
                if (errno == EEXIST)
                        snprintf(err, err_size, "%s exists: not overwritten (use --force)",
                                 o->out_path);
                else
                        snprintf(err, err_size, "cannot create %s: %s", o->out_path,
                                 strerror(errno));
                return -1;
        }
        return fd;
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
        if (!formats[k].write) /* csv-events: written as the trace is read */
                return export_events_run(opts, create_output, err, err_size);
        struct profile_options po = {.symbol_path = opts->symbol_path,
                                     .nr_symbol_path = opts->nr_symbol_path,
                                     .is_no_demangle = opts->is_no_demangle,
                                     .log = on_log};
        struct profile *p = profile_new(&po);
        struct export_samples *s = export_samples_new(p->store);
        profile_set_sample_sink(p, export_samples_event, s);
        if (opts->pid)
                profile_zoom(p, opts->pid); /* -p: one process, as the screen's t does */
        struct feed *f = NULL;
        if (feed_replay_file(&f, p, opts->path, opts->has_from, opts->from_s, opts->has_to,
                             opts->to_s, err, err_size) < 0)
                goto out;
        /* the samples still waiting for their stacks count with what they have */
        profile_end(p);
        export_samples_end(s);
        /* the modules the samples hit have been loading on the loader thread all along */
        sym_store_wait(p->store);
        sym_store_poll(p->store);
        if (formats[k].has_off_cpu)
                export_samples_off_cpu(s, p);
        export_samples_name(s, p);

        if (formats[k].is_samples && !s->nr_sources)
                fprintf(stderr,
                        "etwtop: %s has no samples (PROFILE or PMC_PROFILE was off): %s holds "
                        "none\n",
                        opts->path, opts->out_path);
        int fd = create_output(opts, err, err_size);
        if (fd < 0)
                goto out;
        struct export_ctx x = {.opts = opts, .profile = p, .samples = s};
        int wrc = formats[k].write(&x, fd);
        if (close(fd) < 0 && wrc == 0)
                wrc = -errno;
        if (wrc < 0) {
                snprintf(err, err_size, "writing %s: %s", opts->out_path, strerror(-wrc));
                unlink(opts->out_path);
                goto out;
        }
        rc = 0;
out:
        feed_close(f);
        export_samples_free(s);
        profile_free(p);
        return rc;
}
