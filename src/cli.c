/* SPDX-License-Identifier: MIT */
/* cli.c: owns etwtop's option table (each option's names, argument, help and what it sets:
   getopt_long's table and --help both come from it), the checks several commands share, and
   the command table's dispatch. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_conflicts.h"
#include "merge_images.h"
#include "ui/views.h"
#include "verbs.h"

/* ---- what the options set ---- */

static int set_on(struct cli_args *a, const char *arg)
{
        a->ca.on = arg;
        a->is_on_given = true;
        return CLI_CONTINUE;
}

static int set_stackwalk(struct cli_args *a, const char *arg)
{
        a->ca.stackwalk = arg;
        a->given.stackwalk = true;
        return CLI_CONTINUE;
}

static int set_sort(struct cli_args *a, const char *arg)
{
        /* perf top's sort keys: comm (process), dso (module), sym (function) */
        if (!strcmp(arg, "sym") || !strcmp(arg, "dso,sym") || !strcmp(arg, "function")) {
                a->group = FUNCTIONS_BY_FUNCTION;
        } else if (!strcmp(arg, "comm,sym") || !strcmp(arg, "comm,dso,sym") ||
                   !strcmp(arg, "process") || !strcmp(arg, "process,sym")) {
                a->group = FUNCTIONS_BY_PROCESS;
                /* perf's comm is the sampled thread's name (worker threads that named
                   themselves are rows of their own); process: the process's */
                a->is_comm = strncmp(arg, "process", 7) != 0;
        } else if (!strcmp(arg, "tid,sym") || !strcmp(arg, "thread") || !strcmp(arg, "pid,sym")) {
                /* perf's pid key is a thread's ("tid:comm") */
                a->group = FUNCTIONS_BY_THREAD;
        } else if (!strcmp(arg, "dso") || !strcmp(arg, "module")) {
                a->group = FUNCTIONS_BY_MODULE;
        } else {
                fprintf(stderr,
                        "etwtop: --sort takes sym (a row per function), comm,sym (per "
                        "command, perf's: a thread's name, then function), process,sym "
                        "(per process name), tid,sym or pid,sym (per thread, then function) "
                        "or dso (the modules, their functions under them)\n");
                return 2;
        }
        return CLI_CONTINUE;
}

/* --from or --to: seconds from the trace's start. */
static int set_time(const char *option, const char *arg, double *out)
{
        char *end;
        double v = strtod(arg, &end);
        if (end == arg || *end || !(v >= 0) || v > 1e9) {
                fprintf(stderr, "etwtop: --%s takes seconds from the trace's start, 0 or more\n",
                        option);
                return 2;
        }
        *out = v;
        return CLI_CONTINUE;
}

static int set_from(struct cli_args *a, const char *arg)
{
        a->has_from = true;
        return set_time("from", arg, &a->from_s);
}

static int set_to(struct cli_args *a, const char *arg)
{
        a->has_to = true;
        return set_time("to", arg, &a->to_s);
}

static int set_max_buffers(struct cli_args *a, const char *arg)
{
        if (!cli_parse_u32(arg, 2, 65536, false, &a->max_buffers)) {
                fprintf(stderr, "etwtop: --max-buffers takes 2 .. 65536\n");
                return 2;
        }
        return CLI_CONTINUE;
}

static int set_max_file_size(struct cli_args *a, const char *arg)
{
        /* MaximumFileSize: 0 (none) .. 4 PB, in MB */
        if (!cli_parse_u32(arg, 0, UINT32_MAX, false, &a->rec.max_file_mb)) {
                fprintf(stderr, "etwtop: --max-file-size takes MB, 0 for none\n");
                return 2;
        }
        return CLI_CONTINUE;
}

static int set_prof_int(struct cli_args *a, const char *arg)
{
        a->given.interval = true;
        if (!cli_parse_u32(arg, 1221, 10000000, true, &a->collect.interval_100ns)) {
                fprintf(stderr, "etwtop: --set-prof-int takes 1221 .. 10000000 (100 ns units; "
                                "10000 = 1 ms)\n");
                return 2;
        }
        return CLI_CONTINUE;
}

static int set_duration(struct cli_args *a, const char *arg)
{
        char *end;
        a->rec.duration_s = strtod(arg, &end);
        if (end == arg || *end || !(a->rec.duration_s > 0) || a->rec.duration_s > 31536000) {
                fprintf(stderr, "etwtop: --duration takes seconds > 0\n");
                return 2;
        }
        return CLI_CONTINUE;
}

static int set_buffer_size(struct cli_args *a, const char *arg)
{
        /* EVENT_TRACE_PROPERTIES.BufferSize: at most 1 MB */
        if (!cli_parse_u32(arg, 1, 1024, true, &a->rec.buffer_size_kb)) {
                fprintf(stderr, "etwtop: --buffer-size takes 1 .. 1024 (KB)\n");
                return 2;
        }
        return CLI_CONTINUE;
}

static int set_min_buffers(struct cli_args *a, const char *arg)
{
        /* EVENT_TRACE_PROPERTIES.MinimumBuffers: xperf's -MinBuffers */
        if (!cli_parse_u32(arg, 2, 65536, false, &a->rec.min_buffers)) {
                fprintf(stderr, "etwtop: --min-buffers takes 2 .. 65536\n");
                return 2;
        }
        return CLI_CONTINUE;
}

static int set_pid(struct cli_args *a, const char *arg)
{
        uint32_t pid;
        if (!cli_parse_u32(arg, 1, INT32_MAX, false, &pid)) {
                fprintf(stderr, "etwtop: -p takes a process id\n");
                return 2;
        }
        a->collect.pid = (int32_t)pid;
        return CLI_CONTINUE;
}

static int symbol_path_add(struct cli_args *a, const char *dir)
{
        if (a->nr_symbol_path == CLI_MAX_SYMBOL_PATH) {
                fprintf(stderr, "etwtop: at most 16 --symbol-path directories\n");
                return 2;
        }
        a->symbol_path[a->nr_symbol_path++] = dir;
        return CLI_CONTINUE;
}

static int set_symbol_path(struct cli_args *a, const char *arg)
{
        /* _NT_SYMBOL_PATH's syntax (;, srv*, cache*) passes whole: the symbols library splits
           it (a URL's colons are not separators there) */
        if (strpbrk(arg, ";*"))
                return symbol_path_add(a, arg);
        /* repeatable, and each may be a colon-separated list (optarg is argv's: split in
           place) */
        for (char *dir = strtok((char *)arg, ":"); dir; dir = strtok(NULL, ":"))
                if (symbol_path_add(a, dir) != CLI_CONTINUE)
                        return 2;
        return CLI_CONTINUE;
}

static int set_top(struct cli_args *a, const char *arg)
{
        if (!cli_parse_u32(arg, 1, 1000000, false, &a->nr_top)) {
                fprintf(stderr, "etwtop: --top takes a number of rows, 1 to 1000000\n");
                return 2;
        }
        return CLI_CONTINUE;
}

static int set_iterations(struct cli_args *a, const char *arg)
{
        if (!cli_parse_u32(arg, 1, UINT32_MAX, false, &a->nr_frames)) {
                fprintf(stderr, "etwtop: -n takes a number of frames, 1 or more\n");
                return 2;
        }
        return CLI_CONTINUE;
}

static int show_version(struct cli_args *a, const char *arg)
{
        (void)a;
        (void)arg;
        printf("etwtop %s\n", ETWTOP_VERSION);
        return 0;
}

static int show_help(struct cli_args *a, const char *arg)
{
        (void)arg;
        cli_usage(stdout, a->cmds, a->nr_cmds);
        return 0;
}

/* ---- the table ---- */

#define FLAG(field)     .kind = CLI_FLAG, .at = offsetof(struct cli_args, field)
#define TEXT(field)     .kind = CLI_TEXT, .at = offsetof(struct cli_args, field)
#define VALUE(field, v) .kind = CLI_VALUE, .at = offsetof(struct cli_args, field), .value = (v)
#define CALL(fn)        .kind = CLI_CALL, .set = (fn)

const struct cli_option cli_options[] = {
        /* the commands */
        {"record", 0, "OUT.etl", CLI_COMMANDS, "record a kernel session to a file",
         TEXT(record_path)},
        {"replay", 0, "FILE", CLI_COMMANDS, "browse a recording (.etl, or perf.data)",
         TEXT(replay_path)},
        {"dump", 0, NULL, CLI_COMMANDS, "every event of the files named as text", FLAG(is_dump)},
        {"export", 0, "FORMAT", CLI_COMMANDS, "--replay's profile written for other tools",
         TEXT(export_arg)},
        {"merge", 0, NULL, CLI_COMMANDS, "merge the traces named into -o OUT.etl", FLAG(is_merge)},
        {"start", 0, NULL, CLI_COMMANDS, "start a session that outlives etwtop",
         VALUE(verb, VERB_START)},
        {"update", 0, NULL, CLI_COMMANDS, "change what a running session collects",
         VALUE(verb, VERB_UPDATE)},
        {"flush", 0, NULL, CLI_COMMANDS, "flush a running session", VALUE(verb, VERB_FLUSH)},
        {"stop", 0, NULL, CLI_COMMANDS, "stop a running session", VALUE(verb, VERB_STOP)},
        {"loggers", 0, NULL, CLI_COMMANDS, "list every running session", VALUE(verb, VERB_LOGGERS)},
        {"host", 0, NULL, CLI_COMMANDS, "run the session host in the foreground",
         VALUE(verb, VERB_HOST)},
        {"attach", 0, NULL, CLI_COMMANDS, "the screen over a running session", FLAG(is_attach)},
        {"boottrace", 0, NULL, CLI_COMMANDS, "install (or, with off, remove) the boot unit",
         FLAG(is_boottrace)},
        {"boottrace-start", 0, "CONFIG", CLI_COMMANDS,
         "what the boot unit runs: the session CONFIG\ndescribes", TEXT(boot_config)},
        {"version", 0, NULL, CLI_COMMANDS, "etwtop's version", CALL(show_version)},
        {"help", 'h', NULL, CLI_COMMANDS, "this text", CALL(show_help)},
        /* what a session collects */
        {"on", 0, "FLAGS", CLI_COLLECT,
         "kernel flags: PROC_THREAD+LOADER+PROFILE+CSWITCH+\nDISPATCHER (the default), "
         "PMC_PROFILE, ...",
         CALL(set_on)},
        {"stackwalk", 0, "EVENTS", CLI_COLLECT,
         "events with call stacks: Profile+CSwitch+ReadyThread\n(the default), PmcInterrupt, "
         "... or hook ids (0x0524)",
         CALL(set_stackwalk)},
        {"set-prof-int", 0, "N", CLI_COLLECT,
         "timer interval in 100 ns units, 1221 to 10000000\n(default 10000 = 1 ms)",
         CALL(set_prof_int)},
        {"pmc-profile", 0, "SOURCE", CLI_COLLECT,
         "sample a PMC source (BranchMispredictions, TotalCycles..)", TEXT(ca.pmc_profile)},
        {"pmc", 0, "COUNTERS", CLI_COLLECT,
         "read PMC counters on events (TotalCycles+InstructionRetired)", TEXT(ca.pmc)},
        {"pmc-events", 0, "EVENTS", CLI_COLLECT, "the events they are read on (default CSwitch)",
         TEXT(ca.pmc_events)},
        {"lastbranch", 0, "Profile", CLI_COLLECT, "LBR on the Profile events", TEXT(ca.lastbranch)},
        {"lastbranch-filter", 0, "F", CLI_COLLECT,
         "branch types to leave out (KERNEL+USER+JCC+...)", TEXT(ca.lastbranch_filter)},
        {"stackwalk-mode", 0, "M[,BYTES]", CLI_COLLECT,
         "user stacks: fp (frame pointers), dwarf (unwound\nfrom BYTES of stack copied per "
         "event, default 8192),\nauto (the default: dwarf for the samples' stacks\nthrough code "
         "without frame pointers)",
         TEXT(ca.stackwalk_mode)},
        {"pid", 'p', "PID", CLI_COLLECT,
         "one process: --record traces its threads only; the\nscreen counts it only (the "
         "session stays system-wide)",
         CALL(set_pid)},
        {"duration", 0, "SECONDS", CLI_COLLECT, "stop after this long (default: q or Ctrl-C)",
         CALL(set_duration)},
        {"buffer-size", 0, "KB", CLI_COLLECT, "ETW buffer size, 1 to 1024 (default 64)",
         CALL(set_buffer_size)},
        {"max-file-size", 0, "MB", CLI_COLLECT,
         "--record, --start -f, --boottrace: the file stops there\n(default 1024; 0: only the "
         "disk's space for users)",
         CALL(set_max_file_size)},
        {"min-buffers", 0, "N", CLI_COLLECT,
         "buffers the session keeps at least (xperf -MinBuffers);\na kernel logger's per-CPU "
         "rings hold at least N x\n--buffer-size KB in all: raise it where events are lost",
         CALL(set_min_buffers)},
        {"max-buffers", 0, "N", CLI_COLLECT,
         "--start: buffers a flight recorder keeps (default 256),\nor a real-time consumer's "
         "queue (default 1024)",
         CALL(set_max_buffers)},
        {NULL, 'f', "FILE", CLI_COLLECT, "--start: the session's file", TEXT(file_arg)},
        {"buffering", 0, NULL, CLI_COLLECT,
         "--start: a flight recorder (its ring in memory, no file)", FLAG(is_buffering)},
        {"realtime", 0, NULL, CLI_COLLECT,
         "--start: for real-time consumers (--attach), with or\nwithout -f", FLAG(is_realtime)},
        {"force", 0, NULL, CLI_COLLECT,
         "replace the output file if it exists and is a regular\nfile of yours (never a link, "
         "FIFO or device)",
         FLAG(is_force)},
        /* the screen and the reports */
        {"batch", 'b', NULL, CLI_REPORTS, "text frames on stdout instead of the screen",
         FLAG(is_batch)},
        {"iterations", 'n', "N", CLI_REPORTS,
         "batch: frames to print (default 1; with --duration,\nuntil it ends)",
         CALL(set_iterations)},
        {"delay", 'd', "SECONDS", CLI_REPORTS, "refresh interval, 0.1 to 3600 (default 1)",
         TEXT(delay_arg)}, /* --stop -d names a file */
        {"top", 0, "N", CLI_REPORTS, "batch and --replay -b: rows per table", CALL(set_top)},
        {"sort", 's', "KEYS", CLI_REPORTS,
         "the hot functions: sym (a row per function, the\ndefault), comm,sym (per command, "
         "perf's:\na thread's name), process,sym (per process name),\ntid,sym or pid,sym (per "
         "thread) or dso\n(the modules, their functions under them)",
         CALL(set_sort)},
        {"source", 0, "NAME", CLI_REPORTS,
         "the screen and -b: the hot functions of this profile\nsource where the trace samples "
         "several (Timer,\nTotalCycles, InstructionRetired..., or perf's cycles,\ninstructions, "
         "branch-misses...); S on the screen\nshows the next",
         TEXT(source)},
        {"no-color", 0, NULL, CLI_REPORTS, "no colours (also when NO_COLOR is set)", FLAG(is_mono)},
        {"no-demangle", 0, NULL, CLI_REPORTS, "C++ and Rust names as the files have them (mangled)",
         FLAG(is_no_demangle)},
        {"symbol-path", 0, "PATH", CLI_REPORTS,
         "where image, debug and PDB files are looked for (by\nbuild-id, name or path): "
         "DIR:DIR, or as _NT_SYMBOL_PATH\nDIR;srv*CACHE*URL;cache*DIR (doc/symbols.md); "
         "repeatable",
         CALL(set_symbol_path)},
        {"totals", 0, NULL, CLI_REPORTS, "--dump: the header and the totals only", FLAG(is_totals)},
        {"annotate", 0, "FUNCTION", CLI_REPORTS,
         "--replay -b: FUNCTION's instructions with their samples\nand source lines (or "
         "module!function)",
         TEXT(annotate)},
        {"from", 0, "S", CLI_REPORTS,
         "--replay (the screen, -b, --export), --dump: only\nfrom S seconds of the trace on",
         CALL(set_from)},
        {"to", 0, "S", CLI_REPORTS, "the same, only up to S seconds (not included)", CALL(set_to)},
        {"output", 'o', "FILE", CLI_REPORTS, "--export, --merge: the file written (- for stdout)",
         TEXT(output)},
        {"binary", 0, "NAME", CLI_REPORTS,
         "--export bolt: the binary (name or path) the profile is\nfor; default: the one most "
         "branches (samples) hit",
         TEXT(binary)},
};
const size_t cli_nr_options = sizeof(cli_options) / sizeof(cli_options[0]);

#define OPTION_VALUE_BASE 256 /* getopt's value of an option without a short name: + index */

/* ---- parsing ---- */

static void args_init(struct cli_args *a, const struct cmd *const *cmds, size_t nr_cmds)
{
        memset(a, 0, sizeof(*a));
        a->ca = (struct collect_args){
                .on = "PROC_THREAD+LOADER+PROFILE+CSWITCH+DISPATCHER",
                .stackwalk = "Profile+CSwitch+ReadyThread",
                .pmc_events = "CSwitch",
        };
        collect_settings_init(&a->collect);
        a->rec = (struct record_options){.progress_fd = STDERR_FILENO,
                                         .max_file_mb = RECORD_DEFAULT_MAX_FILE_MB};
        a->delay_s = 1.0;
        a->verb = -1;
        a->cmds = cmds;
        a->nr_cmds = nr_cmds;
}

static int option_set(struct cli_args *a, const struct cli_option *o, const char *arg)
{
        char *field = (char *)a + o->at;
        switch (o->kind) {
        case CLI_FLAG: *(bool *)field = true; break;
        case CLI_TEXT: *(const char **)field = arg; break;
        case CLI_VALUE: *(int *)field = o->value; break;
        case CLI_CALL: return o->set(a, arg);
        }
        return CLI_CONTINUE;
}

int cli_parse(struct cli_args *a, int argc, char **argv, const struct cmd *const *cmds,
              size_t nr_cmds)
{
        struct option longs[sizeof(cli_options) / sizeof(cli_options[0]) + 1];
        char shorts[2 * sizeof(cli_options) / sizeof(cli_options[0]) + 1];
        size_t nr_longs = 0, nr_shorts = 0;
        args_init(a, cmds, nr_cmds);
        for (size_t i = 0; i < cli_nr_options; i++) {
                const struct cli_option *o = &cli_options[i];
                int value = o->short_name ? o->short_name : OPTION_VALUE_BASE + (int)i;
                if (o->name)
                        longs[nr_longs++] = (struct option){
                                o->name, o->arg ? required_argument : no_argument, NULL, value};
                if (o->short_name) {
                        shorts[nr_shorts++] = (char)o->short_name;
                        if (o->arg)
                                shorts[nr_shorts++] = ':';
                }
        }
        longs[nr_longs] = (struct option){NULL, 0, NULL, 0};
        shorts[nr_shorts] = '\0';
        optind = 0; /* getopt_long anew (--boottrace-start parses a second command line) */
        int c;
        while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
                const struct cli_option *o = NULL;
                if (c >= OPTION_VALUE_BASE && c < OPTION_VALUE_BASE + (int)cli_nr_options)
                        o = &cli_options[c - OPTION_VALUE_BASE];
                for (size_t i = 0; !o && c > 0 && c < OPTION_VALUE_BASE && i < cli_nr_options; i++)
                        if (cli_options[i].short_name == c)
                                o = &cli_options[i];
                if (!o) {
                        cli_usage(stderr, cmds, nr_cmds);
                        return 2;
                }
                int rc = option_set(a, o, optarg);
                if (rc != CLI_CONTINUE)
                        return rc;
        }
        a->rest = &argv[optind];
        a->nr_rest = argc - optind;
        return CLI_CONTINUE;
}

/* ---- the checks the commands share ---- */

/* -f, --buffering, --realtime and --max-buffers go with --start; -d as seconds; the modes
   that cannot go together; --to after --from. 0, or the exit status (a message said why). */
static int cli_check_modes(struct cli_args *a)
{
        if (a->file_arg || a->is_buffering || a->is_realtime || a->max_buffers) {
                fprintf(stderr, "etwtop: -f, --buffering, --realtime and --max-buffers go with "
                                "--start\n");
                return 2;
        }
        if (a->delay_arg) {
                char *end;
                a->delay_s = strtod(a->delay_arg, &end);
                if (end == a->delay_arg || *end || !(a->delay_s >= 0.1 && a->delay_s <= 3600)) {
                        fprintf(stderr, "etwtop: -d takes seconds, 0.1 to 3600\n");
                        return 2;
                }
        }
        if (cli_conflicts_check(&(struct cli_modes){a->record_path, a->replay_path, a->is_dump}) <
            0)
                return 2;
        if (a->has_from && a->has_to && a->to_s <= a->from_s) {
                fprintf(stderr, "etwtop: --to %g is not after --from %g\n", a->to_s, a->from_s);
                return 2;
        }
        return CLI_CONTINUE;
}

/* --annotate with --replay -b only; --from and --to with --replay or --dump only. */
static int cli_check_report(struct cli_args *a)
{
        if (a->annotate && !(a->replay_path && a->is_batch)) {
                fprintf(stderr, "etwtop: --annotate goes with --replay FILE -b (on the screen: "
                                "a on a function)\n");
                return 2;
        }
        if ((a->has_from || a->has_to) && !a->replay_path && !a->is_dump) {
                fprintf(stderr, "etwtop: --from and --to choose a part of a recording: with "
                                "--replay or --dump\n");
                return 2;
        }
        return CLI_CONTINUE;
}

/* ---- dispatch ---- */

const struct cmd *cli_pick(const struct cli_args *a)
{
        const struct cmd *best = NULL;
        for (size_t i = 0; i < a->nr_cmds; i++)
                if ((!best || a->cmds[i]->precedence < best->precedence) && a->cmds[i]->match(a))
                        best = a->cmds[i];
        return best;
}

int cli_run(int argc, char **argv, const struct cmd *const *cmds, size_t nr_cmds)
{
        struct cli_args a;
        int rc = cli_parse(&a, argc, argv, cmds, nr_cmds);
        if (rc != CLI_CONTINUE)
                return rc;
        const struct cmd *cmd = cli_pick(&a);
        /* none: the checks, then the usage */
        unsigned checks = cmd ? cmd->checks : CLI_CHECK_MODES | CLI_CHECK_REPORT;
        if ((checks & CLI_CHECK_MODES) && (rc = cli_check_modes(&a)) != CLI_CONTINUE)
                return rc;
        if ((checks & CLI_CHECK_REPORT) && (rc = cli_check_report(&a)) != CLI_CONTINUE)
                return rc;
        if (!cmd) {
                cli_usage(stderr, cmds, nr_cmds);
                return 2;
        }
        /* a perf.data's images for its DWARF stacks' walks: where the symbols look too */
        perf_images_register(a.symbol_path, a.nr_symbol_path);
        return cmd->run(&a);
}

/* ---- --help ---- */

#define SYNOPSIS_COLUMN 44 /* where a command's description starts */
#define OPTION_COLUMN   25 /* where an option's help starts */

/* text's lines from its second on, each at column (its first line is written already). */
static void put_lines(FILE *out, const char *text, int column)
{
        for (const char *nl = strchr(text, '\n'); nl; nl = strchr(nl + 1, '\n')) {
                size_t len = strcspn(nl + 1, "\n");
                fprintf(out, "\n%*s%.*s", column, "", (int)len, nl + 1);
        }
        fputc('\n', out);
}

/* One command's synopsis: lines "USAGE\tDESCRIPTION", "USAGE" or "\tDESCRIPTION". */
static void put_synopsis(FILE *out, const char *synopsis, bool *is_first)
{
        for (const char *line = synopsis; *line;) {
                size_t len = strcspn(line, "\n");
                size_t tab = strcspn(line, "\t\n");
                int col = 0;
                if (tab > 0) {
                        col = fprintf(out, "%s%.*s",
                                      *is_first ? "usage: etwtop " : "       etwtop ", (int)tab,
                                      line);
                        *is_first = false;
                }
                if (tab < len) {
                        if (col >= SYNOPSIS_COLUMN) {
                                fputc('\n', out);
                                col = 0;
                        }
                        fprintf(out, "%*s%.*s", SYNOPSIS_COLUMN - col, "", (int)(len - tab - 1),
                                line + tab + 1);
                }
                fputc('\n', out);
                line += len + (line[len] == '\n');
        }
}

static void put_option(FILE *out, const struct cli_option *o)
{
        char names[64];
        if (o->short_name && o->name)
                snprintf(names, sizeof(names), "-%c, --%s%s%s", o->short_name, o->name,
                         o->arg ? " " : "", o->arg ? o->arg : "");
        else if (o->short_name)
                snprintf(names, sizeof(names), "-%c%s%s", o->short_name, o->arg ? " " : "",
                         o->arg ? o->arg : "");
        else
                snprintf(names, sizeof(names), "--%s%s%s", o->name, o->arg ? " " : "",
                         o->arg ? o->arg : "");
        int col = fprintf(out, "  %s", names);
        size_t len = strcspn(o->help, "\n");
        fprintf(out, "%*s%.*s", col < OPTION_COLUMN - 1 ? OPTION_COLUMN - col : 2, "", (int)len,
                o->help);
        put_lines(out, o->help, OPTION_COLUMN);
}

void cli_usage(FILE *out, const struct cmd *const *cmds, size_t nr_cmds)
{
        static const char *const sections[NR_CLI_SECTIONS] = {
                [CLI_COMMANDS] = "The commands (one at a time):",
                [CLI_COLLECT] = "What a session collects (the screen and --record; xperf's names):",
                [CLI_REPORTS] = "The screen and the reports:",
        };
        bool is_first = true;
        for (size_t i = 0; i < nr_cmds; i++)
                if (cmds[i]->synopsis)
                        put_synopsis(out, cmds[i]->synopsis, &is_first);
        put_synopsis(out, "--version | --help", &is_first);
        for (int s = 0; s < NR_CLI_SECTIONS; s++) {
                fprintf(out, "\n%s\n", sections[s]);
                for (size_t i = 0; i < cli_nr_options; i++)
                        if (cli_options[i].section == (enum cli_section)s)
                                put_option(out, &cli_options[i]);
        }
        fputs("\nNAME, for the session verbs, defaults to \"NT Kernel Logger\".\n"
              "\n"
              "etwtop is a live profiler for the terminal that speaks Windows Event Tracing:\n"
              "its sessions, its API and its .etl files, on Linux. See etwtop(1).\n",
              out);
}
