/* SPDX-License-Identifier: MIT */
/* xperf_names.c: owns the tables of xperf's names (kernel flags, stack-walk events, profile
   sources, LBR filters) and their parsing. */
#include "xperf_names.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "etw/evntrace.h"
#include "kevent.h"

/* xperf -providers K: kernel flag groups and what they turn on (ETL-FORMAT.md 3.1). */
static const struct flag_name {
        const char *name;
        uint32_t flags;   /* Masks[0] */
        uint32_t perf[2]; /* PERF_* group masks (index in the top 3 bits) */
} flag_names[] = {
        {"PROC_THREAD", EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD, {0, 0}},
        {"LOADER", EVENT_TRACE_FLAG_IMAGE_LOAD, {0, 0}},
        {"PROFILE", EVENT_TRACE_FLAG_PROFILE, {PERF_PROFILE, 0}},
        {"CSWITCH", EVENT_TRACE_FLAG_CSWITCH, {PERF_CONTEXT_SWITCH, 0}},
        {"DISPATCHER", EVENT_TRACE_FLAG_DISPATCHER, {PERF_DISPATCHER, 0}},
        {"PMC_PROFILE", 0, {PERF_PMC_PROFILE, 0}},
        {"DISK_IO", EVENT_TRACE_FLAG_DISK_IO, {0, 0}},
        {"DISK_IO_INIT", EVENT_TRACE_FLAG_DISK_IO_INIT, {0, 0}},
        {"FILE_IO", EVENT_TRACE_FLAG_FILE_IO, {0, 0}},
        {"FILE_IO_INIT", EVENT_TRACE_FLAG_FILE_IO_INIT, {0, 0}},
        {"FILENAME", EVENT_TRACE_FLAG_DISK_FILE_IO, {0, 0}},
        {"HARD_FAULTS", EVENT_TRACE_FLAG_MEMORY_HARD_FAULTS, {0, 0}},
        {"ALL_FAULTS", EVENT_TRACE_FLAG_MEMORY_PAGE_FAULTS, {0, 0}},
        {"VIRT_ALLOC", EVENT_TRACE_FLAG_VIRTUAL_ALLOC, {0, 0}},
        {"NETWORKTRACE", EVENT_TRACE_FLAG_NETWORK_TCPIP, {0, 0}},
        {"REGISTRY", EVENT_TRACE_FLAG_REGISTRY, {0, 0}},
        {"DPC", EVENT_TRACE_FLAG_DPC, {PERF_DPC, 0}},
        {"INTERRUPT", EVENT_TRACE_FLAG_INTERRUPT, {PERF_INTERRUPT, 0}},
        {"SYSCALL", EVENT_TRACE_FLAG_SYSTEMCALL, {PERF_SYSCALL, 0}},
        {"ALPC", EVENT_TRACE_FLAG_ALPC, {0, 0}},
        {"SPLIT_IO", EVENT_TRACE_FLAG_SPLIT_IO, {0, 0}},
        {"DRIVERS", EVENT_TRACE_FLAG_DRIVER, {0, 0}},
        {"PRIORITY", 0, {PERF_PRIORITY, 0}},
        {"POWER", 0, {PERF_POWER, 0}},
        {"CPU_CONFIG", 0, {PERF_CPU_CONFIG, 0}},
        {"TIMER", 0, {PERF_TIMER, 0}},
        {"COMPACT_CSWITCH", 0, {PERF_COMPACT_CSWITCH, 0}},
        /* xperf's named sets */
        {"BASE",
         EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD | EVENT_TRACE_FLAG_IMAGE_LOAD |
                 EVENT_TRACE_FLAG_DISK_IO | EVENT_TRACE_FLAG_MEMORY_HARD_FAULTS |
                 EVENT_TRACE_FLAG_PROFILE,
         {PERF_PROFILE, 0}},
        {"LATENCY",
         EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD | EVENT_TRACE_FLAG_IMAGE_LOAD |
                 EVENT_TRACE_FLAG_CSWITCH | EVENT_TRACE_FLAG_DISPATCHER | EVENT_TRACE_FLAG_DPC |
                 EVENT_TRACE_FLAG_INTERRUPT | EVENT_TRACE_FLAG_DISK_IO,
         {PERF_CONTEXT_SWITCH, PERF_DISPATCHER}},
};

/* xperf -help stackwalk: stack-walk event names and their hook ids (ETL-FORMAT.md 3.12). */
static const struct hook_name {
        const char *name;
        uint16_t hook;
} hook_names[] = {
        {"ProcessCreate", WMI_LOG_TYPE_PROCESS_CREATE},
        {"ProcessDelete", WMI_LOG_TYPE_PROCESS_DELETE},
        {"ImageLoad", WMI_LOG_TYPE_PROCESS_LOAD_IMAGE},
        {"ImageUnload", WMI_LOG_TYPE_IMAGE_UNLOAD},
        {"ThreadCreate", WMI_LOG_TYPE_THREAD_CREATE},
        {"ThreadDelete", WMI_LOG_TYPE_THREAD_DELETE},
        {"CSwitch", WMI_LOG_TYPE_CONTEXT_SWAP},
        {"ReadyThread", WMI_LOG_TYPE_READY_THREAD},
        {"Profile", PERFINFO_LOG_TYPE_SAMPLED_PROFILE},
        {"PmcInterrupt", PERFINFO_LOG_TYPE_PMC_INTERRUPT},
};

/* EVNTRACE_LBR_FILTER_* (seed 000) by name. */
static const struct lbr_name {
        const char *name;
        uint32_t flag;
} lbr_names[] = {
        {"KERNEL", EVNTRACE_LBR_FILTER_KERNEL},
        {"USER", EVNTRACE_LBR_FILTER_USER},
        {"JCC", EVNTRACE_LBR_FILTER_JCC},
        {"NEAR_REL_CALL", EVNTRACE_LBR_FILTER_NEAR_REL_CALL},
        {"NEAR_IND_CALL", EVNTRACE_LBR_FILTER_NEAR_IND_CALL},
        {"NEAR_RET", EVNTRACE_LBR_FILTER_NEAR_RET},
        {"NEAR_IND_JMP", EVNTRACE_LBR_FILTER_NEAR_IND_JMP},
        {"NEAR_REL_JMP", EVNTRACE_LBR_FILTER_NEAR_REL_JMP},
        {"FAR_BRANCH", EVNTRACE_LBR_FILTER_FAR_BRANCH},
        {"CALLSTACK", EVNTRACE_LBR_CALLSTACK_ENABLE},
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Calls fn for every '+'-separated word of text (',' and '|' separate too). */
static int for_each_word(const char *text, int (*fn)(const char *word, void *ctx), void *ctx)
{
        char word[64];
        const char *p = text;
        if (!text || !*text)
                return -EINVAL;
        while (*p) {
                size_t n = strcspn(p, "+,|");
                if (n == 0 || n >= sizeof(word))
                        return -EINVAL;
                memcpy(word, p, n);
                word[n] = '\0';
                int rc = fn(word, ctx);
                if (rc < 0)
                        return rc;
                p += n;
                if (*p)
                        p++;
        }
        return 0;
}

static int parse_number(const char *word, uint64_t *v)
{
        char *end;
        errno = 0;
        unsigned long long x = strtoull(word, &end, 0);
        if (errno || end == word || *end)
                return -EINVAL;
        *v = x;
        return 0;
}

struct flags_ctx {
        PERFINFO_GROUPMASK *masks;
        char *err;
        size_t err_size;
};

static int add_flag(const char *word, void *arg)
{
        struct flags_ctx *c = arg;
        for (size_t i = 0; i < ARRAY_SIZE(flag_names); i++) {
                if (strcasecmp(word, flag_names[i].name))
                        continue;
                c->masks->Masks[0] |= flag_names[i].flags;
                for (int k = 0; k < 2; k++) {
                        uint32_t g = flag_names[i].perf[k];
                        if (g)
                                c->masks->Masks[PERF_GET_MASK_INDEX(g)] |= PERF_GET_MASK_GROUP(g);
                }
                return 0;
        }
        uint64_t v;
        if (parse_number(word, &v) == 0 && v <= UINT32_MAX) {
                c->masks->Masks[0] |= (uint32_t)v;
                return 0;
        }
        snprintf(c->err, c->err_size,
                 "unknown kernel flag \"%s\" (known: PROC_THREAD, LOADER, "
                 "PROFILE, CSWITCH, DISPATCHER, PMC_PROFILE, ...)",
                 word);
        return -EINVAL;
}

int xperf_parse_flags(const char *text, PERFINFO_GROUPMASK *masks, char *err, size_t err_size)
{
        struct flags_ctx c = {masks, err, err_size};
        memset(masks, 0, sizeof(*masks));
        int rc = for_each_word(text, add_flag, &c);
        if (rc < 0 && !err[0])
                snprintf(err, err_size, "bad kernel flags \"%s\"", text ? text : "");
        return rc;
}

struct hooks_ctx {
        uint16_t *hooks;
        uint32_t max;
        uint32_t n;
        char *err;
        size_t err_size;
};

static int add_hook(const char *word, void *arg)
{
        struct hooks_ctx *c = arg;
        uint16_t hook = 0;
        bool is_found = false;
        for (size_t i = 0; i < ARRAY_SIZE(hook_names) && !is_found; i++) {
                if (!strcasecmp(word, hook_names[i].name)) {
                        hook = hook_names[i].hook;
                        is_found = true;
                }
        }
        uint64_t v;
        if (!is_found && parse_number(word, &v) == 0 && v <= 0xFFFF) {
                hook = (uint16_t)v;
                is_found = true;
        }
        if (!is_found) {
                snprintf(c->err, c->err_size,
                         "unknown stack-walk event \"%s\" (known: Profile, CSwitch, ReadyThread, "
                         "PmcInterrupt, ProcessCreate, ThreadCreate, ImageLoad, ... or a hook id "
                         "such as 0x0524)",
                         word);
                return -EINVAL;
        }
        for (uint32_t i = 0; i < c->n; i++)
                if (c->hooks[i] == hook)
                        return 0;
        if (c->n == c->max) {
                snprintf(c->err, c->err_size, "more than %u events", c->max);
                return -E2BIG;
        }
        c->hooks[c->n++] = hook;
        return 0;
}

int xperf_parse_hooks(const char *text, uint16_t *hooks, uint32_t max, char *err, size_t err_size)
{
        struct hooks_ctx c = {hooks, max, 0, err, err_size};
        err[0] = '\0';
        int rc = for_each_word(text, add_hook, &c);
        if (rc < 0) {
                if (!err[0])
                        snprintf(err, err_size, "bad event list \"%s\"", text ? text : "");
                return rc;
        }
        return (int)c.n;
}

int xperf_parse_profile_source(const char *text, uint32_t *source, char *err, size_t err_size)
{
        /* the decoder's KPROFILE_SOURCE names are xperf's (xperf -pmcsources) */
        const char *name;
        for (uint32_t i = 0; text && i < 64; i++) {
                if ((name = kevent_pmc_source_name(i)) && !strcasecmp(text, name)) {
                        *source = (uint32_t)i;
                        return 0;
                }
        }
        uint64_t v;
        if (text && parse_number(text, &v) == 0 && v <= UINT32_MAX) {
                *source = (uint32_t)v;
                return 0;
        }
        snprintf(err, err_size,
                 "unknown profile source \"%s\" (known: Timer, TotalCycles, BranchInstructions, "
                 "BranchMispredictions, CacheMisses, ... or a number)",
                 text ? text : "");
        return -EINVAL;
}

struct lbr_ctx {
        uint32_t *flags;
        char *err;
        size_t err_size;
};

static int add_lbr(const char *word, void *arg)
{
        struct lbr_ctx *c = arg;
        for (size_t i = 0; i < ARRAY_SIZE(lbr_names); i++) {
                if (!strcasecmp(word, lbr_names[i].name)) {
                        *c->flags |= lbr_names[i].flag;
                        return 0;
                }
        }
        snprintf(c->err, c->err_size,
                 "unknown LBR filter \"%s\" (known: KERNEL, USER, JCC, NEAR_REL_CALL, "
                 "NEAR_IND_CALL, NEAR_RET, NEAR_IND_JMP, NEAR_REL_JMP, FAR_BRANCH, CALLSTACK)",
                 word);
        return -EINVAL;
}

int xperf_parse_lbr_filters(const char *text, uint32_t *flags, char *err, size_t err_size)
{
        struct lbr_ctx c = {flags, err, err_size};
        *flags = 0;
        err[0] = '\0';
        int rc = for_each_word(text, add_lbr, &c);
        if (rc < 0 && !err[0])
                snprintf(err, err_size, "bad LBR filter list \"%s\"", text ? text : "");
        return rc;
}

size_t xperf_format_flags(const PERFINFO_GROUPMASK *masks, char *buf, size_t size)
{
        size_t o = 0;
        if (size)
                buf[0] = '\0';
        /* the single-purpose names only: the named sets would repeat them */
        for (size_t i = 0; i < ARRAY_SIZE(flag_names); i++) {
                const struct flag_name *f = &flag_names[i];
                if (!strcmp(f->name, "BASE") || !strcmp(f->name, "LATENCY"))
                        continue;
                bool is_on = f->flags ? (masks->Masks[0] & f->flags) == f->flags : true;
                for (int k = 0; k < 2 && is_on; k++) {
                        uint32_t g = f->perf[k];
                        if (g && !f->flags)
                                is_on = (masks->Masks[PERF_GET_MASK_INDEX(g)] &
                                         PERF_GET_MASK_GROUP(g)) == PERF_GET_MASK_GROUP(g);
                }
                if (!f->flags && !f->perf[0])
                        is_on = false;
                if (!is_on)
                        continue;
                int n = snprintf(buf + o, o < size ? size - o : 0, "%s%s", o ? "+" : "", f->name);
                if (n > 0)
                        o += (size_t)n;
        }
        return o;
}

const char *xperf_hook_name(uint16_t hook)
{
        for (size_t i = 0; i < ARRAY_SIZE(hook_names); i++)
                if (hook_names[i].hook == hook)
                        return hook_names[i].name;
        return NULL;
}

struct sources_ctx {
        uint32_t *sources;
        uint32_t max, n;
        char *err;
        size_t err_size;
};

static int add_source(const char *word, void *ctx)
{
        struct sources_ctx *c = ctx;
        if (c->n >= c->max) {
                snprintf(c->err, c->err_size, "at most %u counters", c->max);
                return -E2BIG;
        }
        if (xperf_parse_profile_source(word, &c->sources[c->n], c->err, c->err_size) < 0)
                return -EINVAL;
        c->n++;
        return 0;
}

int xperf_parse_profile_sources(const char *text, uint32_t *sources, uint32_t max, char *err,
                                size_t err_size)
{
        struct sources_ctx c = {sources, max, 0, err, err_size};
        err[0] = '\0';
        int rc = for_each_word(text, add_source, &c);
        if (rc < 0) {
                if (!err[0])
                        snprintf(err, err_size, "bad counter list \"%s\"", text ? text : "");
                return rc;
        }
        return (int)c.n;
}
