/* SPDX-License-Identifier: MIT */
/* writers.h (internal to src/export/): the formats, each written from the gathered
   samples (model/stack_set.h) and the model they came from. */
#ifndef ETWTOP_EXPORT_WRITERS_H
#define ETWTOP_EXPORT_WRITERS_H

#include "export/export.h"
#include "model/stack_set.h"

struct profile;

/* What a writer reads: all borrowed, named (stack_set_name) before it is called. */
struct export_ctx {
        const struct export_options *opts;
        struct profile *profile;
        struct stack_set *samples;
};

/* The sources of the gathered samples in the order the views show them (hot_sources: the
   trace's declared order, a perf.data's events as perf report lists them), then any others as
   first sampled; out has room for 16. Returns how many. */
uint32_t export_sources(const struct export_ctx *x, uint16_t *out);
/* A source's name as the report and the views give it (profile_source_name): "Timer", a PMC
   source's (BranchMispredictions), a perf.data event's own (cycles:u), else "PMC source N" in
   buf. */
const char *export_source_name(const struct export_ctx *x, uint16_t source, char *buf, size_t size);
/* The source a one-source format writes (folded, bolt without LBR): the timer's where it
   sampled, else export_sources' first. False when nothing was sampled. */
bool export_main_source(const struct export_ctx *x, uint16_t *source);

/* Each writes its format to fd (a fresh file) and returns 0 or -errno. */
int export_write_pprof(const struct export_ctx *x, int fd);
int export_write_folded(const struct export_ctx *x, int fd);
int export_write_speedscope(const struct export_ctx *x, int fd);
int export_write_csv(const struct export_ctx *x, int fd);
int export_write_csv_modules(const struct export_ctx *x, int fd);
int export_write_csv_lines(const struct export_ctx *x, int fd);
int export_write_csv_switches(const struct export_ctx *x, int fd);
int export_write_csv_branches(const struct export_ctx *x, int fd);
int export_write_bolt(const struct export_ctx *x, int fd);
/* csv-events: the replay writes every event as it comes, to opts->out_path made by out_file
   (a replaced file only when the whole of it was written; "-": standard output); 0, or -1 with
   err. */
int export_events_run(const struct export_options *opts, char *err, size_t err_size);
/* profgen: likewise, the LBR records as perf script's text (src/export/profgen.c). */
int export_profgen_run(const struct export_options *opts, char *err, size_t err_size);

#endif
