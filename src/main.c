/* SPDX-License-Identifier: MIT */
/* main.c: etwtop's command line: which job to run, with which options. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dump.h"
#include "etw/KernelTraceControl.h"

#define ETWTOP_VERSION "0.1.0"

static void usage(FILE *out)
{
        fputs("usage: etwtop --dump FILE.etl [FILE.etl ...]   every event as text, in time order\n"
              "       etwtop --dump --totals FILE.etl         the header and the totals only\n"
              "       etwtop --merge -o OUT.etl [--force] IN.etl ...\n"
              "                                               merge traces in time order, adding\n"
              "                                               image identity (xperf -merge)\n"
              "       etwtop --version | --help\n"
              "\n"
              "etwtop is a live profiler for the terminal that speaks Windows Event Tracing:\n"
              "its sessions, its API and its .etl files, on Linux.\n",
              out);
}

/* etwtop --merge -o OUT [--force] IN... */
static int merge_main(const char *output, bool is_force, char **inputs, int nr_inputs)
{
        if (!output || nr_inputs < 1) {
                fprintf(stderr, "etwtop: --merge needs -o OUT.etl and at least one input\n");
                return 2;
        }
        struct stat st;
        if (is_force && lstat(output, &st) == 0) {
                if (S_ISDIR(st.st_mode)) {
                        fprintf(stderr, "etwtop: %s is a directory\n", output);
                        return 1;
                }
                if (unlink(output) < 0) {
                        fprintf(stderr, "etwtop: cannot replace %s: %s\n", output, strerror(errno));
                        return 1;
                }
        }
        ULONG rc = CreateMergedTraceFile(output, (LPCSTR *)inputs, (ULONG)nr_inputs,
                                         EVENT_TRACE_MERGE_EXTENDED_DATA_DEFAULT);
        if (rc != ERROR_SUCCESS) {
                fprintf(stderr, "etwtop: %s (Win32 error %u)\n", etw_last_error_text(), rc);
                return 1;
        }
        return 0;
}

int main(int argc, char **argv)
{
        enum {
                OPT_DUMP = 256,
                OPT_TOTALS,
                OPT_VERSION,
                OPT_RECORD,
                OPT_REPLAY,
                OPT_MERGE,
                OPT_FORCE
        };
        static const struct option options[] = {
                {"dump", no_argument, NULL, OPT_DUMP},
                {"totals", no_argument, NULL, OPT_TOTALS},
                {"record", required_argument, NULL, OPT_RECORD},
                {"replay", required_argument, NULL, OPT_REPLAY},
                {"version", no_argument, NULL, OPT_VERSION},
                {"merge", no_argument, NULL, OPT_MERGE},
                {"force", no_argument, NULL, OPT_FORCE},
                {"output", required_argument, NULL, 'o'},
                {"help", no_argument, NULL, 'h'},
                {NULL, 0, NULL, 0},
        };
        bool is_dump = false, is_totals = false, is_merge = false, is_force = false;
        const char *output = NULL;
        int c;

        while ((c = getopt_long(argc, argv, "ho:", options, NULL)) != -1) {
                switch (c) {
                case OPT_MERGE: is_merge = true; break;
                case OPT_FORCE: is_force = true; break;
                case 'o': output = optarg; break;
                case OPT_DUMP: is_dump = true; break;
                case OPT_TOTALS: is_totals = true; break;
                case OPT_VERSION: printf("etwtop %s\n", ETWTOP_VERSION); return 0;
                case 'h': usage(stdout); return 0;
                case OPT_RECORD:
                case OPT_REPLAY:
                        fprintf(stderr,
                                "etwtop: --record and --replay come with the live view; this "
                                "build has --dump only\n");
                        return 2;
                default: usage(stderr); return 2;
                }
        }
        if (is_merge)
                return merge_main(output, is_force, &argv[optind], argc - optind);
        if (!is_dump) {
                fprintf(stderr, "etwtop: the live view is not in this build yet; use --dump "
                                "FILE.etl\n");
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
        };
        char err[1024];
        if (dump_run(&opts, err, sizeof(err)) < 0) {
                fprintf(stderr, "etwtop: %s\n", err);
                return 1;
        }
        return 0;
}
