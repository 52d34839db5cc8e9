/* SPDX-License-Identifier: MIT */
/* cmd_session.c: owns xperf's session verbs on the command line: --start, --update, --flush,
   --stop, --loggers and --host, each checked for the options it takes, then run (verbs.c). */
#include "cmd.h"

#include <stdio.h>
#include <string.h>

#include "verbs.h"

struct verbs_args {
        const struct collect_args *ca;
        struct collect_given given;
        bool is_on_given;
        struct collect_settings *collect; /* the numeric options parsed already */
        const char *name;                 /* the positional NAME, or NULL */
        int nr_extra;                     /* positional arguments */
        const char *file, *output, *delay_arg;
        bool is_buffering, is_realtime, is_force;
        uint32_t buffer_size_kb, min_buffers, max_buffers, max_file_mb;
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
        if (cli_parse_collect(a->ca, &given, err, err_size) < 0)
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
                                  .min_buffers = a->min_buffers,
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
                if (cli_parse_collect(a->ca, &s, err, sizeof(err)) < 0) {
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

static bool is_session(const struct cli_args *a)
{
        return a->verb >= 0;
}

static int run_session(struct cli_args *a)
{
        return verbs_main((enum verb)a->verb, &(struct verbs_args){
                                                      .ca = &a->ca,
                                                      .given = a->given,
                                                      .is_on_given = a->is_on_given,
                                                      .collect = &a->collect,
                                                      .name = a->nr_rest > 0 ? a->rest[0] : NULL,
                                                      .nr_extra = a->nr_rest,
                                                      .file = a->file_arg,
                                                      .output = a->output,
                                                      .delay_arg = a->delay_arg,
                                                      .is_buffering = a->is_buffering,
                                                      .is_realtime = a->is_realtime,
                                                      .is_force = a->is_force,
                                                      .buffer_size_kb = a->rec.buffer_size_kb,
                                                      .min_buffers = a->rec.min_buffers,
                                                      .max_buffers = a->max_buffers,
                                                      .max_file_mb = a->rec.max_file_mb,
                                              });
}

const struct cmd cmd_session = {
        .name = "session verbs",
        .synopsis = "--start [NAME] (-f OUT.etl | --realtime | --buffering) [options]\n"
                    "\tstart a session that outlives etwtop\n"
                    "\t(to a file, or a flight recorder)\n"
                    "--update [NAME] [options]\tchange what a running session collects\n"
                    "--flush [NAME] [-o SNAP.etl]\tflush it; -o: a snapshot of its ring\n"
                    "--stop [NAME] [-d OUT.etl]\tstop it; -d: its file or ring, with\n"
                    "\timage identity merged (xperf -stop -d)\n"
                    "--loggers\tevery running session (xperf -loggers)\n"
                    "--host\tthe session host in the foreground",
        .precedence = 2,
        .match = is_session,
        .run = run_session,
};
