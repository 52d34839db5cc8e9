/* SPDX-License-Identifier: MIT */
/* cmd_boottrace.c: owns --boottrace (install or remove the boot unit, its options checked now)
   and --boottrace-start (what the unit runs: the configured session started, the last boot's
   file kept aside). */
#include "cmd.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "boottrace.h"

/* etwtop --boottrace [collection options] [-f FILE] | --boottrace off */
static int boottrace_main(const struct collect_args *ca, const struct collect_given *given,
                          bool is_on_given, const struct collect_settings *numbers,
                          const char *file, uint32_t buffer_size_kb, uint32_t min_buffers,
                          uint32_t max_file_mb, char **rest, int nr_rest)
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
        if (cli_parse_collect(ca, &s, err, sizeof(err)) < 0) {
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
        if (min_buffers) {
                snprintf(num, sizeof(num), "%u", (unsigned)min_buffers);
                PUT("min-buffers", num);
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
static int boottrace_start(const struct cli_args *a, const char *path, int nr_rest)
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
        return cli_run(n, args, a->cmds, a->nr_cmds); /* getopt_long anew */
}

static bool is_boottrace(const struct cli_args *a)
{
        return a->is_boottrace;
}

static int run_boottrace(struct cli_args *a)
{
        return boottrace_main(&a->ca, &a->given, a->is_on_given, &a->collect, a->file_arg,
                              a->rec.buffer_size_kb, a->rec.min_buffers, a->rec.max_file_mb,
                              a->rest, a->nr_rest);
}

const struct cmd cmd_boottrace = {
        .name = "boottrace",
        .synopsis = "--boottrace -f OUT.etl [options] | --boottrace off\n"
                    "\ttrace every boot from early on: a\n"
                    "\tsystemd unit run as root (etwtop's\n"
                    "\tbinary must be root's alone); off\n"
                    "\tremoves it",
        .precedence = 1,
        .match = is_boottrace,
        .run = run_boottrace,
};

static bool is_boottrace_start(const struct cli_args *a)
{
        return a->boot_config != NULL;
}

static int run_boottrace_start(struct cli_args *a)
{
        return boottrace_start(a, a->boot_config, a->nr_rest);
}

/* what the boot unit runs: not in --help's synopsis */
const struct cmd cmd_boottrace_start = {
        .name = "boottrace-start",
        .precedence = 0,
        .match = is_boottrace_start,
        .run = run_boottrace_start,
};
