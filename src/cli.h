/* SPDX-License-Identifier: MIT */
/* cli.h: etwtop's command line: one table of options (parsing and --help read it), what they
   parse into, the checks several commands share, and the command table's dispatch (cmd.h). */
#ifndef ETWTOP_CLI_H
#define ETWTOP_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "etw_client.h"
#include "record.h"

#define ETWTOP_VERSION      "0.1.0"
#define CLI_MAX_SYMBOL_PATH 16

/* The collection options as given on the command line (xperf's names). */
struct collect_args {
        const char *on, *stackwalk;
        const char *pmc_profile, *pmc, *pmc_events;
        const char *lastbranch, *lastbranch_filter;
        const char *stackwalk_mode;
};

/* Which collection options were given (--update changes only those). */
struct collect_given {
        bool stackwalk, interval;
};

struct cmd;

/* Everything the options say, as the commands read it. Strings are borrowed from argv. */
struct cli_args {
        struct collect_args ca;
        struct collect_given given;
        bool is_on_given;
        struct collect_settings collect; /* the numeric options; parse_collect adds the rest */
        struct record_options rec;       /* --duration, --buffer-size, --min-buffers,
                                            --max-file-size */
        const char *record_path, *replay_path, *output;
        const char *file_arg;  /* -f */
        const char *delay_arg; /* -d: seconds, or --stop -d's file */
        double delay_s;        /* -d as seconds (cli_check_modes) */
        const char *boot_config, *annotate, *export_arg;
        const char *binary; /* --binary: the binary --export bolt is for */
        const char *source; /* --source: the profile source the hot functions show */
        bool is_dump, is_totals, is_merge, is_force;
        bool is_batch, is_mono, is_no_demangle;
        bool is_buffering, is_realtime, is_attach, is_boottrace;
        int verb; /* enum verb; -1: none */
        uint32_t max_buffers;
        uint32_t nr_top, nr_frames; /* 0: not given */
        int group;                  /* --sort: enum functions_group */
        bool is_comm; /* --sort comm,sym: by process, the processes named by thread (perf's comm) */
        bool has_from, has_to; /* --from, --to: seconds from the trace's start */
        double from_s, to_s;
        const char *symbol_path[CLI_MAX_SYMBOL_PATH];
        uint32_t nr_symbol_path;
        char **rest; /* the positional arguments */
        int nr_rest;
        /* the command table (borrowed): --help lists it, --boottrace-start runs it again */
        const struct cmd *const *cmds;
        size_t nr_cmds;
};

/* One option: its names, its argument, its section and help in --help, and what it sets. */
enum cli_section { CLI_COMMANDS, CLI_COLLECT, CLI_REPORTS, NR_CLI_SECTIONS };
enum cli_kind {
        CLI_FLAG,  /* the bool at `at` becomes true */
        CLI_TEXT,  /* the const char * at `at` becomes the argument */
        CLI_VALUE, /* the int at `at` becomes value */
        CLI_CALL,  /* set(a, argument) */
};
#define CLI_CONTINUE (-1) /* go on (parsing, checking); else the status to exit with */
struct cli_option {
        const char *name; /* long name, without "--"; NULL: a short option only */
        int short_name;   /* 0: none */
        const char *arg;  /* the argument's name in the help; NULL: it takes none */
        enum cli_section section;
        const char *help; /* '\n' between its lines */
        enum cli_kind kind;
        size_t at; /* CLI_FLAG, CLI_TEXT, CLI_VALUE: the field's offset in struct cli_args */
        int value; /* CLI_VALUE */
        /* CLI_CALL: CLI_CONTINUE, or the status to exit with at once (a message said why, or
           --help and --version printed) */
        int (*set)(struct cli_args *a, const char *arg);
};

/* The option table, and its length. */
extern const struct cli_option cli_options[];
extern const size_t cli_nr_options;

/* A command: which options choose it, its checks and what it runs (cmd_*.c). */
enum {
        CLI_CHECK_MODES = 1u << 0,  /* cli_check_modes */
        CLI_CHECK_REPORT = 1u << 1, /* cli_check_report */
};
struct cmd {
        const char *name;
        /* its lines in --help's synopsis ("etwtop " is put before the first); NULL: none */
        const char *synopsis;
        int precedence;  /* several match: the lowest runs */
        unsigned checks; /* CLI_CHECK_*: run before it */
        bool (*match)(const struct cli_args *a);
        int (*run)(struct cli_args *a); /* the process's exit status */
};

/* a with the defaults, then argv's options in it (getopt_long, started afresh). Returns
   CLI_CONTINUE, or the status to exit with (a message said why; --help, --version). */
int cli_parse(struct cli_args *a, int argc, char **argv, const struct cmd *const *cmds,
              size_t nr_cmds);
/* The command of the lowest precedence that matches a; NULL: none does. */
const struct cmd *cli_pick(const struct cli_args *a);
/* Parses argv, picks its command, runs its checks and the command: the exit status. */
int cli_run(int argc, char **argv, const struct cmd *const *cmds, size_t nr_cmds);
/* The synopsis of the commands and every option with its help, to out. */
void cli_usage(FILE *out, const struct cmd *const *cmds, size_t nr_cmds);

/* The collection options parsed into s, which holds the defaults (collect_settings_init) and
   the numeric options already. Returns 0, or -1 with the option's problem in err. */
int cli_parse_collect(const struct collect_args *a, struct collect_settings *s, char *err,
                      size_t err_size);
/* What the screen and --record collect: the collection options parsed into a->collect, the
   default fitted to the user when --on was not given. CLI_CONTINUE, or 2 (a message said why). */
int cli_collect(struct cli_args *a);
/* A whole number in [min, max] (decimal, or 0x hex where is_hex_ok): no sign, no trailing
   text, no overflow. */
bool cli_parse_u32(const char *text, uint32_t min, uint32_t max, bool is_hex_ok, uint32_t *out);

#endif
