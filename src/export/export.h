/* SPDX-License-Identifier: MIT */
/* export.h: `etwtop --replay FILE.etl --export FORMAT -o OUT`: a recording's profile, as the
   hot functions count it, written for other tools: pprof (with the off-CPU time where threads
   blocked), folded stacks (flame graphs), speedscope's JSON, or one of --replay -b's tables as
   CSV: hot functions, modules or source lines, or the context switches per thread
   (doc/export.md). */
#ifndef ETWTOP_EXPORT_H
#define ETWTOP_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum export_format {
        EXPORT_PPROF = 0,    /* gzip'd perftools.profiles.Profile (src/export/profile.proto) */
        EXPORT_FOLDED,       /* collapsed stacks: comm;outer;...;inner count */
        EXPORT_SPEEDSCOPE,   /* https://www.speedscope.app/file-format-schema.json */
        EXPORT_CSV,          /* the hot functions table, RFC 4180 */
        EXPORT_CSV_MODULES,  /* the hot modules table, RFC 4180 */
        EXPORT_CSV_LINES,    /* the hot source lines table, RFC 4180 */
        EXPORT_CSV_SWITCHES, /* the context switches per thread, RFC 4180 */
        EXPORT_CSV_BRANCHES, /* the LBR branch edges, RFC 4180 */
        EXPORT_CSV_EVENTS,   /* every event with its fields, RFC 4180 (src/export/events.c) */
        EXPORT_BOLT,         /* BOLT's fdata of one binary (src/export/bolt.c) */
        EXPORT_PROFGEN,      /* llvm-profgen's perf script input (src/export/profgen.c) */
        EXPORT_PROFGEN_CS,   /* the same with the samples' call stacks (context-sensitive) */
};

struct export_options {
        const char *path;     /* the recording to replay; borrowed */
        const char *out_path; /* -o: the file written (out_file.h), "-" for stdout; borrowed */
        enum export_format format;
        const char *const *symbol_path; /* borrowed: --symbol-path directories */
        uint32_t nr_symbol_path;
        bool is_no_demangle;   /* --no-demangle */
        bool is_force;         /* --force: replace out_path, a regular file of ours */
        bool has_from, has_to; /* --from/--to: seconds after the trace's start */
        double from_s, to_s;
        uint32_t pid;       /* -p: that process's samples, switches and edges only (0: every one) */
        const char *binary; /* --binary: the binary --export bolt is for (NULL: the busiest) */
        /* --sort for csv's hot functions: a row per function (HOT_BY_FUNCTION, 0), per process
           name and function (HOT_BY_PROCESS: a Process column) or per thread and function
           (HOT_BY_THREAD: a Thread column), as --replay -b groups them */
        int grouping;
        bool is_comm; /* HOT_BY_PROCESS: by the thread's name, perf's comm (--sort comm,sym) */
};

/* Puts format name ("pprof", "folded", "speedscope", "csv", "csv-modules", "csv-lines" or
   "csv-switches") in *out: 0, or -EINVAL for another name. */
int export_format_parse(const char *name, enum export_format *out);
/* The names export_format_parse takes, for a usage message: "pprof, folded, speedscope, csv,
   csv-modules, csv-lines, csv-switches". */
const char *export_format_names(void);

/* Replays opts->path through the model and writes its profile to opts->out_path. Returns 0, or
   -1 with a message in err naming the problem (no file is left behind then). */
int export_run(const struct export_options *opts, char *err, size_t err_size);

#endif
