/* SPDX-License-Identifier: MIT */
/* main.c: etwtop's command line: which job to run, with which options. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dump.h"
#include "record.h"
#include "report.h"
#include "verbs.h"
#include "merge_images.h"
#include "merge_output.h"
#include "export/export.h"
#include "boottrace.h"
#include "app.h"
#include "cli_conflicts.h"
#include "usage.h"
#include "ui/views.h"
#include "xperf_names.h"
#include "etw/KernelTraceControl.h"

#define ETWTOP_VERSION "0.1.0"

/* The collection options as given on the command line (xperf's names). */
struct collect_args {
        const char *on, *stackwalk;
        const char *pmc_profile, *pmc, *pmc_events;
        const char *lastbranch, *lastbranch_filter;
        const char *stackwalk_mode;
};

/* --stackwalk-mode fp|dwarf|auto[,BYTES]. Returns 0, or -1 with the problem in err. */
static int parse_stackwalk_mode(const char *text, struct collect_settings *s, char *err,
                                size_t err_size)
{
        static const char *const modes[] = {"fp", "dwarf", "auto"};
        const char *comma = strchr(text, ',');
        size_t len = comma ? (size_t)(comma - text) : strlen(text);
        uint32_t mode = UINT32_MAX;
        for (uint32_t i = 0; i < 3; i++)
                if (strlen(modes[i]) == len && strncmp(text, modes[i], len) == 0)
                        mode = i;
        if (mode == UINT32_MAX) {
                snprintf(err, err_size,
                         "--stackwalk-mode %s: the mode is fp, dwarf or auto (then ,BYTES: the "
                         "stack copied per sample)",
                         text);
                return -1;
        }
        uint32_t bytes = 0;
        if (comma) {
                char *end;
                errno = 0;
                unsigned long v = strtoul(comma + 1, &end, 10);
                if (errno || *end || !comma[1] || v < 8 || v > 65528 || v % 8 || mode == 0) {
                        snprintf(err, err_size, "--stackwalk-mode %s: %s", text,
                                 mode == 0 ? "fp copies no stack (no ,BYTES)"
                                           : "BYTES is a multiple of 8 from 8 to 65528");
                        return -1;
                }
                bytes = (uint32_t)v;
        }
        s->stack_walk = mode;
        s->user_stack_bytes = bytes;
        return 0;
}

/* Parses the collection options into s, which holds the defaults (collect_settings_init) and
   the numeric options already. Returns 0, or -1 with the option's problem in err. */
static int parse_collect(const struct collect_args *a, struct collect_settings *s, char *err,
                         size_t err_size)
{
        err[0] = '\0';
        if (xperf_parse_flags(a->on, &s->masks, err, err_size) < 0)
                return -1;
        int n = xperf_parse_hooks(a->stackwalk, s->stack_hooks, COLLECT_MAX_HOOKS, err, err_size);
        if (n < 0)
                return -1;
        s->nr_stack_hooks = (uint32_t)n;
        if (a->pmc_profile) {
                if (xperf_parse_profile_source(a->pmc_profile, &s->pmc_source, err, err_size) < 0)
                        return -1;
                s->masks.Masks[PERF_GET_MASK_INDEX(PERF_PMC_PROFILE)] |=
                        PERF_GET_MASK_GROUP(PERF_PMC_PROFILE);
        }
        if (a->pmc) {
                n = xperf_parse_profile_sources(a->pmc, s->pmc_counters, COLLECT_MAX_COUNTERS, err,
                                                err_size);
                if (n < 0)
                        return -1;
                s->nr_pmc_counters = (uint32_t)n;
                n = xperf_parse_hooks(a->pmc_events, s->pmc_hooks, COLLECT_MAX_COUNTERS, err,
                                      err_size);
                if (n < 0)
                        return -1;
                s->nr_pmc_hooks = (uint32_t)n;
        }
        if (a->lastbranch) {
                uint16_t hooks[COLLECT_MAX_COUNTERS]; /* EVNTRACE_MAX_LBR_EVENTS */
                n = xperf_parse_hooks(a->lastbranch, hooks, COLLECT_MAX_COUNTERS, err, err_size);
                if (n < 0)
                        return -1;
                for (int i = 0; i < n; i++) {
                        if (hooks[i] != PERFINFO_LOG_TYPE_SAMPLED_PROFILE) {
                                snprintf(err, err_size,
                                         "--lastbranch %s: etwtop takes LBR on the Profile events "
                                         "only (--lastbranch Profile)",
                                         a->lastbranch);
                                return -1;
                        }
                }
                s->is_lbr_on = n > 0;
        }
        if (a->lastbranch_filter &&
            xperf_parse_lbr_filters(a->lastbranch_filter, &s->lbr_filters, err, err_size) < 0)
                return -1;
        if (a->stackwalk_mode && parse_stackwalk_mode(a->stackwalk_mode, s, err, err_size) < 0)
                return -1;
        return 0;
}

/* A whole number in [min, max] (decimal, or 0x hex where is_hex_ok): no sign, no trailing text,
   no overflow. */
static bool parse_u32(const char *text, uint32_t min, uint32_t max, bool is_hex_ok, uint32_t *out)
{
        if (!text || !*text || *text == '-' || *text == '+' || *text == ' ')
                return false;
        char *end;
        errno = 0;
        unsigned long long v = strtoull(text, &end, is_hex_ok ? 0 : 10);
        if (errno || *end || v < min || v > max)
                return false;
        *out = (uint32_t)v;
        return true;
}

/* Whether this user can read the sched tracepoints' formats (tracefs), which CSwitch and
   ReadyThread need. */
static bool can_read_sched_tracepoints(void)
{
        static const char *const dirs[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
        char path[128];
        for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
                snprintf(path, sizeof(path), "%s/events/sched/sched_switch/format", dirs[i]);
                if (access(path, R_OK) == 0)
                        return true;
        }
        return false;
}

/* The default collection for a user who may trace one process but not read the sched
   tracepoints (perf record -p works there): what perf record -p takes, said once. */
static void fit_default_to_user(struct collect_settings *s)
{
        if (s->pid <= 0 || geteuid() == 0 || can_read_sched_tracepoints())
                return;
        s->masks.Masks[0] &= ~(uint32_t)(EVENT_TRACE_FLAG_CSWITCH | EVENT_TRACE_FLAG_DISPATCHER);
        s->masks.Masks[PERF_GET_MASK_INDEX(PERF_CONTEXT_SWITCH)] &=
                ~PERF_GET_MASK_GROUP(PERF_CONTEXT_SWITCH);
        s->masks.Masks[PERF_GET_MASK_INDEX(PERF_DISPATCHER)] &=
                ~PERF_GET_MASK_GROUP(PERF_DISPATCHER);
        uint32_t o = 0;
        for (uint32_t i = 0; i < s->nr_stack_hooks; i++)
                if (s->stack_hooks[i] != WMI_LOG_TYPE_CONTEXT_SWAP &&
                    s->stack_hooks[i] != WMI_LOG_TYPE_READY_THREAD)
                        s->stack_hooks[o++] = s->stack_hooks[i];
        s->nr_stack_hooks = o;
        fprintf(stderr, "etwtop: context switches need the sched tracepoints, which this user "
                        "cannot read (tracefs): collecting PROC_THREAD+LOADER+PROFILE (root, or "
                        "--on with CSWITCH to be told what is missing)\n");
}

/* etwtop --merge -o OUT [--force] [--symbol-path P] IN...: the images on the symbol path give
   the DbgID_RSDS events (which PDB each was built with), as xperf -merge reads them */
static int merge_main(const char *output, bool is_force, char **inputs, int nr_inputs,
                      const char *const *symbol_path, uint32_t nr_symbol_path)
{
        merge_images_register(symbol_path, nr_symbol_path);
        if (!output || nr_inputs < 1) {
                fprintf(stderr, "etwtop: --merge needs -o OUT.etl and at least one input\n");
                return 2;
        }
        return merge_output_run(output, is_force, inputs, nr_inputs);
}

/* Which collection options were given (--update changes only those). */
struct collect_given {
        bool stackwalk, interval;
};

struct verbs_args {
        const struct collect_args *ca;
        struct collect_given given;
        bool is_on_given;
        struct collect_settings *collect; /* the numeric options parsed already */
        const char *name;                 /* the positional NAME, or NULL */
        int nr_extra;                     /* positional arguments */
        const char *file, *output, *delay_arg;
        bool is_buffering, is_realtime, is_force;
        uint32_t buffer_size_kb, max_buffers, max_file_mb;
};

/* --update: the session's settings with the options given applied over them. */
static int update_settings(const struct verbs_args *a, struct collect_settings *s, char *err,
                           size_t err_size)
{
        if (verbs_current(a->name, s, err, err_size) < 0)
                return -1;
        struct collect_settings given;
        collect_settings_init(&given);
        given.interval_100ns = a->collect->interval_100ns;
        if (parse_collect(a->ca, &given, err, err_size) < 0)
                return -1;
        if (a->is_on_given) {
                /* the flags and the groups they imply; PMC_PROFILE stays as it was unless
                   --pmc-profile says otherwise */
                uint32_t pmc_i = PERF_GET_MASK_INDEX(PERF_PMC_PROFILE);
                uint32_t pmc_g = PERF_GET_MASK_GROUP(PERF_PMC_PROFILE);
                uint32_t keep = s->masks.Masks[pmc_i] & pmc_g;
                s->masks = given.masks;
                if (!a->ca->pmc_profile)
                        s->masks.Masks[pmc_i] = (s->masks.Masks[pmc_i] & ~pmc_g) | keep;
        }
        if (a->given.stackwalk) {
                memcpy(s->stack_hooks, given.stack_hooks, sizeof(s->stack_hooks));
                s->nr_stack_hooks = given.nr_stack_hooks;
        }
        if (a->given.interval)
                s->interval_100ns = given.interval_100ns;
        if (a->ca->pmc_profile) {
                s->pmc_source = given.pmc_source;
                s->masks.Masks[PERF_GET_MASK_INDEX(PERF_PMC_PROFILE)] |=
                        PERF_GET_MASK_GROUP(PERF_PMC_PROFILE);
        }
        if (a->ca->pmc) {
                memcpy(s->pmc_counters, given.pmc_counters, sizeof(s->pmc_counters));
                s->nr_pmc_counters = given.nr_pmc_counters;
                memcpy(s->pmc_hooks, given.pmc_hooks, sizeof(s->pmc_hooks));
                s->nr_pmc_hooks = given.nr_pmc_hooks;
        }
        if (a->ca->lastbranch)
                s->is_lbr_on = given.is_lbr_on;
        if (a->ca->lastbranch_filter)
                s->lbr_filters = given.lbr_filters;
        if (a->ca->stackwalk_mode) {
                s->stack_walk = given.stack_walk;
                s->user_stack_bytes = given.user_stack_bytes;
        }
        return 0;
}

/* etwtop --start/--update/--flush/--stop/--loggers/--host (verbs.h). */
static int verbs_main(enum verb verb, const struct verbs_args *a)
{
        static const char *const names[] = {"--start", "--update",  "--flush",
                                            "--stop",  "--loggers", "--host"};
        const char *vn = names[verb];
        char err[1024];
        bool has_name = verb != VERB_LOGGERS && verb != VERB_HOST;
        if (a->nr_extra > (has_name ? 1 : 0)) {
                fprintf(stderr, "etwtop: %s takes %s\n", vn,
                        has_name ? "one session name at most" : "no session name");
                return 2;
        }
        if (a->name && strlen(a->name) >= 64) {
                fprintf(stderr, "etwtop: %s: a session name has at most 63 characters\n", vn);
                return 2;
        }
        struct verbs_options o = {.verb = verb,
                                  .name = a->name,
                                  .is_buffering = a->is_buffering,
                                  .is_realtime = a->is_realtime,
                                  .is_force = a->is_force,
                                  .buffer_size_kb = a->buffer_size_kb,
                                  .max_buffers = a->max_buffers,
                                  .max_file_mb = a->max_file_mb};
        /* the file each verb takes: --start -f, --flush -o, --stop -d */
        const char *wrong = NULL;
        switch (verb) {
        case VERB_START:
                o.file = a->file;
                wrong = a->output ? "-o" : a->delay_arg ? "-d" : NULL;
                if (a->is_buffering && (a->file || a->is_realtime)) {
                        fprintf(stderr, "etwtop: --start --buffering keeps its ring in memory: "
                                        "not with -f or --realtime\n");
                        return 2;
                }
                if (!a->file && !a->is_buffering && !a->is_realtime) {
                        fprintf(stderr, "etwtop: --start needs -f OUT.etl (a file session), "
                                        "--realtime (for consumers only) or --buffering (a "
                                        "flight recorder)\n");
                        return 2;
                }
                break;
        case VERB_FLUSH:
                o.file = a->output;
                wrong = a->file ? "-f" : a->delay_arg ? "-d" : NULL;
                break;
        case VERB_STOP:
                o.file = a->delay_arg;
                wrong = a->file ? "-f" : a->output ? "-o" : NULL;
                break;
        default: wrong = a->file ? "-f" : a->output ? "-o" : a->delay_arg ? "-d" : NULL; break;
        }
        if (!wrong && verb != VERB_START && (a->is_buffering || a->is_realtime || a->max_buffers))
                wrong = a->is_buffering  ? "--buffering"
                        : a->is_realtime ? "--realtime"
                                         : "--max-buffers";
        if (wrong) {
                fprintf(stderr, "etwtop: %s does not take %s\n", vn, wrong);
                return 2;
        }
        struct collect_settings s;
        if (verb == VERB_START) {
                s = *a->collect;
                if (parse_collect(a->ca, &s, err, sizeof(err)) < 0) {
                        fprintf(stderr, "etwtop: %s\n", err);
                        return 2;
                }
                o.collect = &s;
        } else if (verb == VERB_UPDATE) {
                if (update_settings(a, &s, err, sizeof(err)) < 0) {
                        fprintf(stderr, "etwtop: %s\n", err);
                        return 1;
                }
                o.collect = &s;
        }
        int rc = verbs_run(&o, stdout, err, sizeof(err));
        if (rc)
                fprintf(stderr, "etwtop: %s\n", err);
        return rc;
}

/* etwtop --boottrace [collection options] [-f FILE] | --boottrace off */
static int boottrace_main(const struct collect_args *ca, const struct collect_given *given,
                          bool is_on_given, const struct collect_settings *numbers,
                          const char *file, uint32_t buffer_size_kb, uint32_t max_file_mb,
                          char **rest, int nr_rest)
{
        char err[1024];
        bool is_off = nr_rest == 1 && strcmp(rest[0], "off") == 0;
        if (nr_rest > (is_off ? 1 : 0)) {
                fprintf(stderr, "etwtop: --boottrace takes collection options and -f FILE, or "
                                "\"off\"\n");
                return 2;
        }
        if (is_off) {
                if (boottrace_remove(stdout, err, sizeof(err)) < 0) {
                        fprintf(stderr, "etwtop: --boottrace off: %s\n", err);
                        return 1;
                }
                return 0;
        }
        /* the options are checked now, not at the next boot */
        struct collect_settings s = *numbers;
        if (parse_collect(ca, &s, err, sizeof(err)) < 0) {
                fprintf(stderr, "etwtop: --boottrace: %s\n", err);
                return 2;
        }
        if (file && file[0] != '/') {
                fprintf(stderr, "etwtop: --boottrace -f takes an absolute path (the unit runs "
                                "from /)\n");
                return 2;
        }
        if (!file) {
                fprintf(stderr, "etwtop: --boottrace installs a unit that runs etwtop as root at "
                                "every boot: give -f FILE (where the trace goes) and the "
                                "collection options; --boottrace off removes it\n");
                return 2;
        }
        struct boottrace_config c = {0};
#define PUT(k, v)                                                                                  \
        do {                                                                                       \
                snprintf(c.kv[c.nr].key, sizeof(c.kv[0].key), "%s", k);                            \
                snprintf(c.kv[c.nr].value, sizeof(c.kv[0].value), "%s", v);                        \
                c.nr++;                                                                            \
        } while (0)
        char num[32];
        PUT("name", BOOTTRACE_LOGGER_NAME);
        PUT("file", file ? file : BOOTTRACE_DEFAULT_FILE);
        PUT("on", ca->on);
        PUT("stackwalk", ca->stackwalk);
        if (given->interval) {
                snprintf(num, sizeof(num), "%u", (unsigned)numbers->interval_100ns);
                PUT("set-prof-int", num);
        }
        if (buffer_size_kb) {
                snprintf(num, sizeof(num), "%u", (unsigned)buffer_size_kb);
                PUT("buffer-size", num);
        }
        snprintf(num, sizeof(num), "%u", (unsigned)max_file_mb);
        PUT("max-file-size", num);
        if (ca->pmc_profile)
                PUT("pmc-profile", ca->pmc_profile);
        if (ca->pmc) {
                PUT("pmc", ca->pmc);
                PUT("pmc-events", ca->pmc_events);
        }
        if (ca->lastbranch)
                PUT("lastbranch", ca->lastbranch);
        if (ca->lastbranch_filter)
                PUT("lastbranch-filter", ca->lastbranch_filter);
        if (ca->stackwalk_mode)
                PUT("stackwalk-mode", ca->stackwalk_mode);
#undef PUT
        (void)is_on_given;
        char exe[1024];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        if (n <= 0) {
                fprintf(stderr, "etwtop: --boottrace: cannot tell where etwtop is: %s\n",
                        strerror(errno));
                return 1;
        }
        exe[n] = '\0';
        if (boottrace_install(&c, exe, stdout, err, sizeof(err)) < 0) {
                fprintf(stderr, "etwtop: --boottrace: %s\n", err);
                return 1;
        }
        return 0;
}

static int etwtop_main(int argc, char **argv);

/* Moves the last boot's file aside (named by when it was written, never over another) so that
   the new boot session does not replace it. */
static int keep_last_boot(const char *file)
{
        struct stat st;
        if (lstat(file, &st) < 0)
                return 0;
        struct tm tm;
        char stamp[32], to[1100];
        localtime_r(&st.st_mtime, &tm);
        strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
        for (int i = 0; i < 1000; i++) {
                if (i)
                        snprintf(to, sizeof(to), "%s.%s.%d", file, stamp, i);
                else
                        snprintf(to, sizeof(to), "%s.%s", file, stamp);
                if (link(file, to) == 0)
                        return unlink(file);
                if (errno != EEXIST)
                        break;
        }
        fprintf(stderr, "etwtop: cannot keep the last boot's %s aside: %s\n", file,
                strerror(errno));
        return -1;
}

/* etwtop --boottrace-start CONFIG: what the boot unit runs: --start of the configured session
   (a file session that outlives this process in the session host). */
static int boottrace_start(const char *path, int nr_rest)
{
        char err[1024];
        struct boottrace_config c;
        if (nr_rest) {
                fprintf(stderr, "etwtop: --boottrace-start takes the config file only\n");
                return 2;
        }
        if (boottrace_read(path, &c, err, sizeof(err)) < 0) {
                fprintf(stderr, "etwtop: --boottrace-start: %s\n", err);
                return 1;
        }
        const char *name = boottrace_get(&c, "name");
        const char *file = boottrace_get(&c, "file");
        if (!name)
                name = BOOTTRACE_LOGGER_NAME;
        if (!file)
                file = BOOTTRACE_DEFAULT_FILE;
        char dir[1024];
        snprintf(dir, sizeof(dir), "%s", file);
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir) {
                *slash = '\0';
                if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
                        fprintf(stderr, "etwtop: --boottrace-start: cannot create %s: %s\n", dir,
                                strerror(errno));
                        return 1;
                }
        }
        if (keep_last_boot(file) < 0)
                return 1;
        char *args[2 * BOOTTRACE_MAX_KEYS + 8];
        char opts[BOOTTRACE_MAX_KEYS][40];
        int n = 0;
        args[n++] = "etwtop";
        args[n++] = "--start";
        args[n++] = (char *)name;
        args[n++] = "-f";
        args[n++] = (char *)file;
        for (unsigned i = 0; i < c.nr; i++) {
                if (!strcmp(c.kv[i].key, "name") || !strcmp(c.kv[i].key, "file"))
                        continue;
                snprintf(opts[i], sizeof(opts[i]), "--%s", c.kv[i].key);
                args[n++] = opts[i];
                args[n++] = c.kv[i].value;
        }
        args[n] = NULL;
        optind = 0; /* getopt_long anew */
        return etwtop_main(n, args);
}

int main(int argc, char **argv)
{
        return etwtop_main(argc, argv);
}

static int etwtop_main(int argc, char **argv)
{
        enum {
                OPT_DUMP = 256,
                OPT_TOTALS,
                OPT_VERSION,
                OPT_RECORD,
                OPT_REPLAY,
                OPT_MERGE,
                OPT_FORCE,
                OPT_ON,
                OPT_STACKWALK,
                OPT_STACKWALK_MODE,
                OPT_PROF_INT,
                OPT_PMC_PROFILE,
                OPT_LASTBRANCH,
                OPT_LASTBRANCH_FILTER,
                OPT_PMC,
                OPT_PMC_EVENTS,
                OPT_DURATION,
                OPT_BUFFER_SIZE,
                OPT_SYMBOL_PATH,
                OPT_TOP,
                OPT_MONO,
                OPT_NO_DEMANGLE,
                OPT_START,
                OPT_UPDATE,
                OPT_FLUSH,
                OPT_STOP,
                OPT_LOGGERS,
                OPT_HOST,
                OPT_BUFFERING,
                OPT_MAX_BUFFERS,
                OPT_ATTACH,
                OPT_BOOTTRACE,
                OPT_BOOTTRACE_START,
                OPT_REALTIME,
                OPT_FROM,
                OPT_TO,
                OPT_ANNOTATE,
                OPT_EXPORT,
                OPT_BINARY,
                OPT_MAX_FILE_SIZE,
        };
        int group = 0; /* enum functions_group */
        static const struct option options[] = {
                {"dump", no_argument, NULL, OPT_DUMP},
                {"totals", no_argument, NULL, OPT_TOTALS},
                {"record", required_argument, NULL, OPT_RECORD},
                {"replay", required_argument, NULL, OPT_REPLAY},
                {"version", no_argument, NULL, OPT_VERSION},
                {"merge", no_argument, NULL, OPT_MERGE},
                {"on", required_argument, NULL, OPT_ON},
                {"stackwalk", required_argument, NULL, OPT_STACKWALK},
                {"set-prof-int", required_argument, NULL, OPT_PROF_INT},
                {"pmc-profile", required_argument, NULL, OPT_PMC_PROFILE},
                {"pmc", required_argument, NULL, OPT_PMC},
                {"pmc-events", required_argument, NULL, OPT_PMC_EVENTS},
                {"lastbranch", required_argument, NULL, OPT_LASTBRANCH},
                {"lastbranch-filter", required_argument, NULL, OPT_LASTBRANCH_FILTER},
                {"stackwalk-mode", required_argument, NULL, OPT_STACKWALK_MODE},
                {"duration", required_argument, NULL, OPT_DURATION},
                {"buffer-size", required_argument, NULL, OPT_BUFFER_SIZE},
                {"symbol-path", required_argument, NULL, OPT_SYMBOL_PATH},
                {"top", required_argument, NULL, OPT_TOP},
                {"batch", no_argument, NULL, 'b'},
                {"delay", required_argument, NULL, 'd'},
                {"no-color", no_argument, NULL, OPT_MONO},
                {"no-demangle", no_argument, NULL, OPT_NO_DEMANGLE},
                {"iterations", required_argument, NULL, 'n'},
                {"pid", required_argument, NULL, 'p'},
                {"force", no_argument, NULL, OPT_FORCE},
                {"output", required_argument, NULL, 'o'},
                {"help", no_argument, NULL, 'h'},
                {"start", no_argument, NULL, OPT_START},
                {"update", no_argument, NULL, OPT_UPDATE},
                {"flush", no_argument, NULL, OPT_FLUSH},
                {"stop", no_argument, NULL, OPT_STOP},
                {"loggers", no_argument, NULL, OPT_LOGGERS},
                {"host", no_argument, NULL, OPT_HOST},
                {"attach", no_argument, NULL, OPT_ATTACH},
                {"boottrace", no_argument, NULL, OPT_BOOTTRACE},
                {"boottrace-start", required_argument, NULL, OPT_BOOTTRACE_START},
                {"buffering", no_argument, NULL, OPT_BUFFERING},
                {"realtime", no_argument, NULL, OPT_REALTIME},
                {"from", required_argument, NULL, OPT_FROM},
                {"annotate", required_argument, NULL, OPT_ANNOTATE},
                {"export", required_argument, NULL, OPT_EXPORT},
                {"binary", required_argument, NULL, OPT_BINARY},
                {"sort", required_argument, NULL, 's'},
                {"to", required_argument, NULL, OPT_TO},
                {"max-buffers", required_argument, NULL, OPT_MAX_BUFFERS},
                {"max-file-size", required_argument, NULL, OPT_MAX_FILE_SIZE},
                {NULL, 0, NULL, 0},
        };
        bool is_dump = false, is_totals = false, is_merge = false, is_force = false;
        const char *output = NULL, *record_path = NULL, *replay_path = NULL;
        const char *symbol_path[16];
        uint32_t nr_symbol_path = 0, nr_top = 0, nr_frames = 0; /* 0: -n not given */
        bool is_batch = false, is_mono = false, is_no_demangle = false, is_on_given = false;
        double delay_s = 1.0;
        const char *delay_arg = NULL, *file_arg = NULL;
        int verb = -1; /* enum verb */
        bool is_buffering = false, is_realtime = false, is_attach = false, is_boottrace = false;
        struct {
                bool has_from, has_to;
                double from_s, to_s;
        } range = {0};
        const char *boot_config = NULL, *annotate = NULL, *export_arg = NULL, *binary = NULL;
        uint32_t max_buffers = 0;
        struct collect_given given = {0};
        struct collect_args ca = {
                .on = "PROC_THREAD+LOADER+PROFILE+CSWITCH+DISPATCHER",
                .stackwalk = "Profile+CSwitch+ReadyThread",
                .pmc_events = "CSwitch",
        };
        struct collect_settings collect;
        collect_settings_init(&collect);
        struct record_options rec = {.progress_fd = STDERR_FILENO,
                                     .max_file_mb = RECORD_DEFAULT_MAX_FILE_MB};
        char err[1024];
        char *end;
        uint32_t pid;
        int c;

        while ((c = getopt_long(argc, argv, "bd:f:hn:o:p:s:", options, NULL)) != -1) {
                switch (c) {
                case OPT_ON:
                        ca.on = optarg;
                        is_on_given = true;
                        break;
                case OPT_STACKWALK:
                        ca.stackwalk = optarg;
                        given.stackwalk = true;
                        break;
                case OPT_PMC_PROFILE: ca.pmc_profile = optarg; break;
                case OPT_LASTBRANCH: ca.lastbranch = optarg; break;
                case OPT_PMC: ca.pmc = optarg; break;
                case OPT_PMC_EVENTS: ca.pmc_events = optarg; break;
                case OPT_LASTBRANCH_FILTER: ca.lastbranch_filter = optarg; break;
                case OPT_STACKWALK_MODE: ca.stackwalk_mode = optarg; break;
                case OPT_START: verb = VERB_START; break;
                case OPT_UPDATE: verb = VERB_UPDATE; break;
                case OPT_FLUSH: verb = VERB_FLUSH; break;
                case OPT_STOP: verb = VERB_STOP; break;
                case OPT_LOGGERS: verb = VERB_LOGGERS; break;
                case OPT_HOST: verb = VERB_HOST; break;
                case OPT_BUFFERING: is_buffering = true; break;
                case OPT_REALTIME: is_realtime = true; break;
                case OPT_ANNOTATE: annotate = optarg; break;
                case OPT_EXPORT: export_arg = optarg; break;
                case OPT_BINARY: binary = optarg; break;
                case 's':
                        /* perf top's sort keys: comm (process), dso (module), sym (function) */
                        if (!strcmp(optarg, "sym") || !strcmp(optarg, "dso,sym") ||
                            !strcmp(optarg, "function")) {
                                group = FUNCTIONS_BY_FUNCTION;
                        } else if (!strcmp(optarg, "comm,sym") || !strcmp(optarg, "comm,dso,sym") ||
                                   !strcmp(optarg, "process")) {
                                group = FUNCTIONS_BY_PROCESS;
                        } else if (!strcmp(optarg, "tid,sym") || !strcmp(optarg, "thread")) {
                                group = FUNCTIONS_BY_THREAD;
                        } else if (!strcmp(optarg, "dso") || !strcmp(optarg, "module")) {
                                group = FUNCTIONS_BY_MODULE;
                        } else {
                                fprintf(stderr, "etwtop: --sort takes sym (a row per function), "
                                                "comm,sym (per process, then function), tid,sym "
                                                "(per thread, then function) or dso (the "
                                                "modules, their functions under them)\n");
                                return 2;
                        }
                        break;
                case OPT_FROM:
                case OPT_TO: {
                        double v = strtod(optarg, &end);
                        if (end == optarg || *end || !(v >= 0) || v > 1e9) {
                                fprintf(stderr,
                                        "etwtop: --%s takes seconds from the trace's "
                                        "start, 0 or more\n",
                                        c == OPT_FROM ? "from" : "to");
                                return 2;
                        }
                        if (c == OPT_FROM) {
                                range.has_from = true;
                                range.from_s = v;
                        } else {
                                range.has_to = true;
                                range.to_s = v;
                        }
                        break;
                }
                case OPT_ATTACH: is_attach = true; break;
                case OPT_BOOTTRACE: is_boottrace = true; break;
                case OPT_BOOTTRACE_START: boot_config = optarg; break;
                case 'f': file_arg = optarg; break;
                case OPT_MAX_BUFFERS:
                        if (!parse_u32(optarg, 2, 65536, false, &max_buffers)) {
                                fprintf(stderr, "etwtop: --max-buffers takes 2 .. 65536\n");
                                return 2;
                        }
                        break;
                case OPT_MAX_FILE_SIZE: /* MaximumFileSize: 0 (none) .. 4 PB, in MB */
                        if (!parse_u32(optarg, 0, UINT32_MAX, false, &rec.max_file_mb)) {
                                fprintf(stderr, "etwtop: --max-file-size takes MB, 0 for none\n");
                                return 2;
                        }
                        break;
                case OPT_PROF_INT:
                        given.interval = true;
                        if (!parse_u32(optarg, 1221, 10000000, true, &collect.interval_100ns)) {
                                fprintf(stderr, "etwtop: --set-prof-int takes 1221 .. 10000000 "
                                                "(100 ns units; 10000 = 1 ms)\n");
                                return 2;
                        }
                        break;
                case OPT_DURATION:
                        rec.duration_s = strtod(optarg, &end);
                        if (end == optarg || *end || !(rec.duration_s > 0) ||
                            rec.duration_s > 31536000) {
                                fprintf(stderr, "etwtop: --duration takes seconds > 0\n");
                                return 2;
                        }
                        break;
                case OPT_BUFFER_SIZE:
                        /* EVENT_TRACE_PROPERTIES.BufferSize: at most 1 MB */
                        if (!parse_u32(optarg, 1, 1024, true, &rec.buffer_size_kb)) {
                                fprintf(stderr, "etwtop: --buffer-size takes 1 .. 1024 (KB)\n");
                                return 2;
                        }
                        break;
                case 'p':
                        if (!parse_u32(optarg, 1, INT32_MAX, false, &pid)) {
                                fprintf(stderr, "etwtop: -p takes a process id\n");
                                return 2;
                        }
                        collect.pid = (int32_t)pid;
                        break;
                case OPT_MERGE: is_merge = true; break;
                case OPT_FORCE: is_force = true; break;
                case 'o': output = optarg; break;
                case OPT_DUMP: is_dump = true; break;
                case OPT_TOTALS: is_totals = true; break;
                case OPT_VERSION: printf("etwtop %s\n", ETWTOP_VERSION); return 0;
                case 'h': usage(stdout); return 0;
                case OPT_RECORD: record_path = optarg; break;
                case OPT_REPLAY: replay_path = optarg; break;
                case OPT_SYMBOL_PATH:
                        /* _NT_SYMBOL_PATH's syntax (;, srv*, cache*) passes whole: the symbols
                           library splits it (a URL's colons are not separators there) */
                        if (strpbrk(optarg, ";*")) {
                                if (nr_symbol_path == 16) {
                                        fprintf(stderr, "etwtop: at most 16 --symbol-path "
                                                        "directories\n");
                                        return 2;
                                }
                                symbol_path[nr_symbol_path++] = optarg;
                                break;
                        }
                        /* repeatable, and each may be a colon-separated list */
                        for (char *dir = strtok(optarg, ":"); dir; dir = strtok(NULL, ":")) {
                                if (nr_symbol_path == 16) {
                                        fprintf(stderr, "etwtop: at most 16 --symbol-path "
                                                        "directories\n");
                                        return 2;
                                }
                                symbol_path[nr_symbol_path++] = dir;
                        }
                        break;
                case OPT_TOP:
                        if (!parse_u32(optarg, 1, 1000000, false, &nr_top)) {
                                fprintf(stderr, "etwtop: --top takes a number of rows, 1 to "
                                                "1000000\n");
                                return 2;
                        }
                        break;
                case 'b': is_batch = true; break;
                case OPT_MONO: is_mono = true; break;
                case OPT_NO_DEMANGLE: is_no_demangle = true; break;
                case 'd': delay_arg = optarg; break; /* --stop -d names a file */
                case 'n':
                        if (!parse_u32(optarg, 1, UINT32_MAX, false, &nr_frames)) {
                                fprintf(stderr, "etwtop: -n takes a number of frames, 1 or "
                                                "more\n");
                                return 2;
                        }
                        break;
                default: usage(stderr); return 2;
                }
        }
        if (boot_config)
                return boottrace_start(boot_config, argc - optind);
        if (is_boottrace)
                return boottrace_main(&ca, &given, is_on_given, &collect, file_arg,
                                      rec.buffer_size_kb, rec.max_file_mb, &argv[optind],
                                      argc - optind);
        if (verb >= 0)
                return verbs_main((enum verb)verb,
                                  &(struct verbs_args){
                                          .ca = &ca,
                                          .given = given,
                                          .is_on_given = is_on_given,
                                          .collect = &collect,
                                          .name = optind < argc ? argv[optind] : NULL,
                                          .nr_extra = argc - optind,
                                          .file = file_arg,
                                          .output = output,
                                          .delay_arg = delay_arg,
                                          .is_buffering = is_buffering,
                                          .is_realtime = is_realtime,
                                          .is_force = is_force,
                                          .buffer_size_kb = rec.buffer_size_kb,
                                          .max_buffers = max_buffers,
                                          .max_file_mb = rec.max_file_mb,
                                  });
        if (file_arg || is_buffering || is_realtime || max_buffers) {
                fprintf(stderr, "etwtop: -f, --buffering, --realtime and --max-buffers go with "
                                "--start\n");
                return 2;
        }
        if (delay_arg) {
                delay_s = strtod(delay_arg, &end);
                if (end == delay_arg || *end || !(delay_s >= 0.1 && delay_s <= 3600)) {
                        fprintf(stderr, "etwtop: -d takes seconds, 0.1 to 3600\n");
                        return 2;
                }
        }
        if (cli_conflicts_check(&(struct cli_modes){record_path, replay_path, is_dump}) < 0)
                return 2;
        if (range.has_from && range.has_to && range.to_s <= range.from_s) {
                fprintf(stderr, "etwtop: --to %g is not after --from %g\n", range.to_s,
                        range.from_s);
                return 2;
        }
        if (export_arg) {
                struct export_options eo = {.path = replay_path,
                                            .out_path = output,
                                            .symbol_path = symbol_path,
                                            .nr_symbol_path = nr_symbol_path,
                                            .is_no_demangle = is_no_demangle,
                                            .is_force = is_force,
                                            .pid = collect.pid > 0 ? (uint32_t)collect.pid : 0,
                                            .has_from = range.has_from,
                                            .has_to = range.has_to,
                                            .from_s = range.from_s,
                                            .to_s = range.to_s,
                                            .binary = binary};
                if (!replay_path || !output) {
                        fprintf(stderr, "etwtop: --export FORMAT needs --replay FILE and -o OUT\n");
                        return 2;
                }
                if (export_format_parse(export_arg, &eo.format) < 0) {
                        fprintf(stderr, "etwtop: --export takes %s, not \"%s\"\n",
                                export_format_names(), export_arg);
                        return 2;
                }
                if (export_run(&eo, err, sizeof(err)) < 0) {
                        fprintf(stderr, "etwtop: %s\n", err);
                        return 1;
                }
                return 0;
        }
        if (annotate && !(replay_path && is_batch)) {
                fprintf(stderr, "etwtop: --annotate goes with --replay FILE -b (on the screen: "
                                "a on a function)\n");
                return 2;
        }
        if ((range.has_from || range.has_to) && !replay_path && !is_dump) {
                fprintf(stderr, "etwtop: --from and --to choose a part of a recording: with "
                                "--replay or --dump\n");
                return 2;
        }
        if (is_merge)
                return merge_main(output, is_force, &argv[optind], argc - optind, symbol_path,
                                  nr_symbol_path);
        const char *attach_name = NULL;
        if (is_attach) {
                if (record_path || replay_path || is_dump || argc - optind > 1) {
                        fprintf(stderr, "etwtop: --attach takes one session name at most, "
                                        "without --record, --replay or --dump\n");
                        return 2;
                }
                attach_name = optind < argc ? argv[optind] : KERNEL_LOGGER_NAMEA;
        }
        bool is_screen = !is_dump && !is_merge && !(replay_path && is_batch) &&
                         (!record_path || (isatty(STDOUT_FILENO) && !is_batch));
        bool is_live_batch = is_batch && !replay_path && !record_path && !is_dump;
        if ((is_screen || is_live_batch || record_path) &&
            parse_collect(&ca, &collect, err, sizeof(err)) < 0) {
                fprintf(stderr, "etwtop: %s\n", err);
                return 2;
        }
        if (!is_on_given && (is_screen || is_live_batch || record_path))
                fit_default_to_user(&collect);
        if (is_screen || is_live_batch) {
                struct app_options ao = {0};
                ao.replay_path = replay_path;
                ao.record_path = record_path;
                ao.max_file_mb = rec.max_file_mb;
                ao.is_force = is_force;
                ao.is_batch = is_batch;
                /* -b: one frame unless -n says; with --duration, frames until it ends */
                /* (and -n for the text frames of a terminal that cannot draw the screen) */
                ao.nr_frames = nr_frames ? nr_frames : !is_batch ? 0 : rec.duration_s > 0 ? 0 : 1;
                ao.delay_s = delay_s;
                ao.is_mono = is_mono || getenv("NO_COLOR") != NULL;
                ao.nr_top = nr_top;
                ao.symbol_path = symbol_path;
                ao.nr_symbol_path = nr_symbol_path;
                ao.is_no_demangle = is_no_demangle;
                ao.collect = collect;
                ao.duration_s = rec.duration_s;
                ao.attach_name = attach_name;
                ao.group = group;
                ao.has_from = range.has_from;
                ao.has_to = range.has_to;
                ao.from_s = range.from_s;
                ao.to_s = range.to_s;
                if (app_run(&ao, err, sizeof(err)) < 0) {
                        fprintf(stderr, "etwtop: %s\n", err);
                        return 1;
                }
                return 0;
        }
        if (record_path) {
                rec.path = record_path;
                rec.is_force = is_force;
                rec.collect = &collect;
                if (record_run(&rec, err, sizeof(err)) < 0) {
                        fprintf(stderr, "etwtop: %s\n", err);
                        return 1;
                }
                return 0;
        }
        if (replay_path) {
                struct report_options ro = {.path = replay_path,
                                            .annotate = annotate,
                                            .has_from = range.has_from,
                                            .has_to = range.has_to,
                                            .from_s = range.from_s,
                                            .to_s = range.to_s,
                                            .symbol_path = symbol_path,
                                            .nr_symbol_path = nr_symbol_path,
                                            .nr_top = nr_top,
                                            .is_no_demangle = is_no_demangle,
                                            .fd = STDOUT_FILENO,
                                            .group = group};
                if (report_run(&ro, err, sizeof(err)) < 0) {
                        fprintf(stderr, "etwtop: %s\n", err);
                        return 1;
                }
                return 0;
        }
        if (!is_dump) {
                usage(stderr);
                return 2;
        }
        if (optind >= argc) {
                fprintf(stderr, "etwtop: --dump needs a file\n");
                return 2;
        }
        struct dump_options opts = {
                .paths = (const char *const *)&argv[optind],
                .nr_paths = (uint32_t)(argc - optind),
                .fd = STDOUT_FILENO,
                .is_totals_only = is_totals,
                .has_from = range.has_from,
                .has_to = range.has_to,
                .from_s = range.from_s,
                .to_s = range.to_s,
        };
        if (dump_run(&opts, err, sizeof(err)) < 0) {
                fprintf(stderr, "etwtop: %s\n", err);
                return 1;
        }
        return 0;
}
