/* SPDX-License-Identifier: MIT */
/* cli_collect.c: owns the collection options' meaning: xperf's names (--on, --stackwalk,
   --pmc-profile, --pmc, --lastbranch, --stackwalk-mode) into collect_settings, numbers checked
   in range, and the default fitted to a user who cannot read the sched tracepoints. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xperf_names.h"

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
int cli_parse_collect(const struct collect_args *a, struct collect_settings *s, char *err,
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
bool cli_parse_u32(const char *text, uint32_t min, uint32_t max, bool is_hex_ok, uint32_t *out)
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
static void cli_fit_default_to_user(struct collect_settings *s)
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

int cli_collect(struct cli_args *a)
{
        char err[1024];
        if (cli_parse_collect(&a->ca, &a->collect, err, sizeof(err)) < 0) {
                fprintf(stderr, "etwtop: %s\n", err);
                return 2;
        }
        if (!a->is_on_given)
                cli_fit_default_to_user(&a->collect);
        return CLI_CONTINUE;
}
