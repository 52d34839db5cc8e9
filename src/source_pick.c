/* SPDX-License-Identifier: MIT */
/* source_pick.c: owns choosing a profile source by its name (--source, the S key's list). */
#include "source_pick.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* perf's generic names (perf list) for the sources the converter and the live source give
   them (the Linux mapping of KPROFILE_SOURCE) */
static const struct {
        const char *perf;
        const char *etw;
} aliases[] = {
        {"cpu-clock", "Timer"},
        {"task-clock", "Timer"},
        {"timer", "Timer"},
        {"cycles", "TotalCycles"},
        {"cpu-cycles", "TotalCycles"},
        {"instructions", "InstructionRetired"},
        {"cache-references", "LLCReference"},
        {"cache-misses", "CacheMisses"},
        {"branches", "BranchInstructions"},
        {"branch-instructions", "BranchInstructions"},
        {"branch-misses", "BranchMispredictions"},
};

/* How name names source: 1, the name its views title it with (Timer, TotalCycles, a raw
   event's own); 2, the perf.data event's own name, as the file gives it and its CollectionStart
   keeps it ("cycles:u", "task-clock"); 3, perf's generic name of an ETW source ("cycles" for
   TotalCycles); 0: not at all. */
static int match_rank(const struct profile *p, uint16_t source, const char *name)
{
        char buf[64];
        const char *etw = profile_source_name(p, source, buf, sizeof(buf));
        if (!strcasecmp(etw, name))
                return 1;
        const struct profile_trace *t = profile_trace(p);
        for (uint32_t i = 0; i < t->nr_source_names; i++)
                if (t->source_names[i].source == source &&
                    !strcasecmp(t->source_names[i].name, name))
                        return 2;
        for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
                if (!strcasecmp(aliases[i].perf, name) && !strcmp(aliases[i].etw, etw))
                        return 3;
        return 0;
}

/* The closest match wins: with cpu-clock and task-clock both recorded, the first is ETW's
   Timer and the second a source of its own, and "task-clock" names the second by its own
   name before the alias that would name the Timer. */
int source_pick(const struct profile *p, const uint16_t *sources, uint32_t nr, const char *name)
{
        int best = -1, best_rank = 0;
        for (uint32_t i = 0; i < nr; i++) {
                int r = match_rank(p, sources[i], name);
                if (r && (!best_rank || r < best_rank)) {
                        best = (int)i;
                        best_rank = r;
                }
        }
        return best;
}

void source_pick_list(const struct profile *p, const uint16_t *sources, uint32_t nr, char *buf,
                      size_t size)
{
        char name[64];
        size_t len = 0;
        if (!size)
                return;
        buf[0] = '\0';
        for (uint32_t i = 0; i < nr && len + 1 < size; i++) {
                int n = snprintf(buf + len, size - len, "%s%s", i ? ", " : "",
                                 profile_source_name(p, sources[i], name, sizeof(name)));
                if (n < 0)
                        break;
                len += (size_t)n < size - len ? (size_t)n : size - len - 1;
        }
}
