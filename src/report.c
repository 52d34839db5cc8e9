/* SPDX-License-Identifier: MIT */
/* report.c: owns `etwtop --replay FILE -b`: replays a recording through the model and prints
   its header, then its tables as the views give them (ui/text_report.h: the hot functions and
   modules, the hot branch edges (LBR), the context switches and waits, the events), then
   --annotate's instructions. */
#include "report.h"

#include "annotate.h"
#include "comm_key.h"
#include "etw/evntrace.h"
#include "feed.h"
#include "header.h"
#include "source_pick.h"
#include "model/profile.h"
#include "symbols/symbols.h"
#include "outbuf.h"
#include "ui/text_sanitize.h"
#include "ui/text_report.h"
#include "ui/views.h"
#include "util/mem_policy.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define SMALL_TRACE_BYTES ((off_t)16 << 20)

static void on_log(void *ctx, const char *message)
{
        (void)ctx;
        char clean[1024]; /* a path from the trace may hold escape sequences */
        text_sanitize(clean, sizeof(clean), message);
        fprintf(stderr, "etwtop: symbols: %s\n", clean);
}

/* s, or its copy in buf made safe for a terminal: the trace's strings (names of loggers,
   modules, functions, files, processes and threads) may hold escape sequences (DESIGN.md). */
static const char *clean(const char *s, char *buf, size_t size)
{
        if (text_is_clean(s))
                return s;
        text_sanitize(buf, size, s);
        return buf;
}

/* --annotate FUNCTION (annotate_print) made safe for a terminal: its function names, file
   names and source lines come from the trace and the files it names. Its text goes through a
   temporary file, then to o with each part between tabs sanitized. annotate_print's return. */
static int annotate_clean(struct profile *p, const struct report_options *opts, struct outbuf *o,
                          char *err, size_t err_size)
{
        FILE *tf = tmpfile();
        if (!tf) {
                snprintf(err, err_size, "--annotate: no temporary file: %s", strerror(errno));
                return -1;
        }
        struct outbuf *t = malloc(sizeof(*t));
        if (!t) {
                fclose(tf);
                snprintf(err, err_size, "--annotate: out of memory");
                return -1;
        }
        outbuf_init(t, fileno(tf));
        int rc = annotate_print(p, opts->annotate, opts->nr_top, t, err, err_size);
        outbuf_flush(t);
        free(t);
        rewind(tf);
        char *line = NULL, *clean_part = NULL;
        size_t cap = 0, clean_cap = 0;
        ssize_t n;
        while ((n = getline(&line, &cap, tf)) > 0) {
                if (clean_cap < (size_t)n + 1) {
                        clean_cap = (size_t)n + 1;
                        free(clean_part);
                        clean_part = malloc(clean_cap);
                        if (!clean_part)
                                break;
                }
                for (char *part = line; *part;) {
                        size_t len = strcspn(part, "\t\n");
                        char sep = part[len];
                        part[len] = 0;
                        outbuf_puts(o, clean(part, clean_part, clean_cap));
                        if (!sep)
                                break;
                        outbuf_putc(o, sep);
                        part += len + 1;
                }
        }
        free(line);
        free(clean_part);
        fclose(tf);
        return rc;
}

/* A trace file small enough that its replay takes a few milliseconds: its modules load on the
   replay's own thread. The loader thread overlaps their loading with the replay, which pays off
   when the replay is long; a small trace's replay is over before the modules have loaded, and
   the thread's start and its hand-offs (the other CPU woken each time) cost more than the
   overlap saves: 5-7% of a 3 MB perf.data's time to the table, wall clock and CPU, 25 runs of
   each side by side. Standard input's size is not known: the thread loads. */
static bool is_small_trace(const char *path)
{
        struct stat st;
        return strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
               st.st_size < SMALL_TRACE_BYTES;
}

int report_run(const struct report_options *opts, char *err, size_t err_size)
{
        struct outbuf o;
        int rc = -1;
        /* before the first table and the symbol loader's thread: a report ends once printed */
        mem_policy_short_run();
        struct profile_options po = {.symbol_path = opts->symbol_path,
                                     .nr_symbol_path = opts->nr_symbol_path,
                                     .is_no_demangle = opts->is_no_demangle,
                                     .log = on_log,
                                     .is_synchronous = is_small_trace(opts->path)};
        struct profile *p = profile_new(&po);
        /* the places hold what the functions' grouping needs: by function, one per address
           whichever process sampled it (a storm of short processes is not a place per process) */
        hot_set_place_keys(profile_hot(p), opts->group == FUNCTIONS_BY_PROCESS  ? HOT_BY_PROCESS
                                           : opts->group == FUNCTIONS_BY_THREAD ? HOT_BY_THREAD
                                                                                : HOT_BY_FUNCTION);
        struct comm_keys ck = {0};
        if (opts->group == FUNCTIONS_BY_PROCESS)
                comm_keys_use(&ck, p, opts->is_comm ? COMM_PERF : COMM_PROCESS_NAME);
        else if (opts->group == FUNCTIONS_BY_THREAD)
                comm_keys_use(&ck, p, COMM_THREAD);
        events_table_set_max_recent(profile_events(p), 0); /* counts only */
        events_table_set_groups(profile_events(p), false); /* "Events by type" alone */
        struct feed *f = NULL;
        if (feed_replay_file(&f, p, opts->path, opts->has_from, opts->from_s, opts->has_to,
                             opts->to_s, err, err_size) < 0)
                goto out;

        /* the samples still waiting for their stacks, and the open intervals, to the end */
        profile_end(p);
        /* the modules the samples hit have been loading on the loader thread all along */
        sym_store_wait(profile_store(p));
        sym_store_poll(profile_store(p));
        outbuf_init(&o, opts->fd);
        char line[1400];
        const struct profile_trace *t = profile_trace(p);
        char logger[sizeof(t->logger_name)];
        snprintf(line, sizeof(line),
                 "etwtop replay of %s: %s, %u CPUs, %.3f s, %" PRIu64 " events, %" PRIu64 " lost\n",
                 opts->path,
                 t->logger_name[0] ? clean(t->logger_name, logger, sizeof(logger)) : "?",
                 t->nr_cpus, (double)profile_span_ns(p) / 1e9, profile_nr_events(p),
                 profile_nr_lost(p));
        outbuf_puts(&o, line);
        if (opts->has_from || opts->has_to) {
                if (opts->has_to)
                        snprintf(line, sizeof(line), "Time range: %.3f s to %.3f s of the trace\n",
                                 opts->has_from ? opts->from_s : 0.0, opts->to_s);
                else
                        snprintf(line, sizeof(line), "Time range: %.3f s to its end\n",
                                 opts->from_s);
                outbuf_puts(&o, line);
        }
        if (t->traced_pid) {
                snprintf(line, sizeof(line),
                         "Recorded with -p: process %u only (other processes' threads are the "
                         "other side of its switches)\n",
                         t->traced_pid);
                outbuf_puts(&o, line);
        }
        if (t->nr_not_shown) {
                header_not_shown_text(t, line, sizeof(line) - 1);
                strcat(line, "\n");
                outbuf_puts(&o, line);
        }
        if (t->has_unwind) {
                header_unwind_text(&t->unwind, 0, 0, line, sizeof(line) - 1);
                if (line[0]) {
                        strcat(line, "\n");
                        outbuf_puts(&o, line);
                }
        }
        snprintf(line, sizeof(line), "Samples with stacks: %" PRIu64 "\n",
                 hot_nr_stacks(profile_hot(p)));
        outbuf_puts(&o, line);
        /* --source: that source's tables alone */
        int32_t only = -1;
        if (opts->source) {
                uint16_t sources[AGG_MAX_SOURCES];
                uint32_t nr_sources = hot_sources(profile_hot(p), sources, AGG_MAX_SOURCES);
                int picked = source_pick(p, sources, nr_sources, opts->source);
                if (picked >= 0) {
                        only = sources[picked];
                } else if (nr_sources) {
                        char list[512], clean_list[512];
                        source_pick_list(p, sources, nr_sources, list, sizeof(list));
                        snprintf(line, sizeof(line), "\nNo %s samples: the trace samples %s.\n",
                                 opts->source, clean(list, clean_list, sizeof(clean_list)));
                        outbuf_puts(&o, line);
                        only = -2; /* no source's tables */
                }
        }
        /* the tables: the views' rows as text */
        struct ui_text_report_options to = {
                .nr_top = opts->nr_top, .group = opts->group, .only_source = only};
        int wrote = outbuf_flush(&o) < 0 ? -o.error : ui_text_report_print(p, &to, opts->fd);
        if (wrote < 0) {
                snprintf(err, err_size, "writing the report: %s", strerror(-wrote));
                goto out;
        }
        int annotated = opts->annotate ? annotate_clean(p, opts, &o, err, err_size) : 0;
        if (outbuf_flush(&o) < 0) {
                snprintf(err, err_size, "writing the report: %s", strerror(o.error));
                goto out;
        }
        if (annotated < 0)
                goto out; /* the name matched nothing: err says so */
        rc = 0;
out:
        if (f) {
                char warning[256];
                feed_warning(f, warning, sizeof(warning));
                if (warning[0])
                        fprintf(stderr, "etwtop: %s\n", warning);
        }
        feed_close(f);
        profile_free(p);
        comm_keys_free(&ck);
        return rc;
}
