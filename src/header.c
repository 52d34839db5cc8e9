/* SPDX-License-Identifier: MIT */
/* header.c: owns the text of the header lines. */
#include "header.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ui/text_sanitize.h"
#include "xperf_names.h"

static void append(char *line, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void append(char *line, const char *fmt, ...)
{
        size_t len = strlen(line);
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(line + len, HEADER_WIDTH - len, fmt, ap);
        va_end(ap);
}

/* "N what" added to a list of counts, when N is not 0. */
static void count_add(char *list, size_t size, uint64_t n, const char *what)
{
        size_t len = strlen(list);
        if (n && len < size)
                snprintf(list + len, size - len, "%s%" PRIu64 " %s", len ? ", " : "", n, what);
}

/* What the model's caps (doc/etwtop.1, MEMORY) did, when they did anything, the call tree's
   first (its evictions go on in a long run): "Caps: 5120 cold call-tree nodes evicted; 78
   stacks cut; 1234 exited threads, 56 unplaced addresses folded; 9 samples past the caps". */
static void caps_text(const struct profile_caps *c, char *line)
{
        char folded[128] = "", past[128] = "";
        count_add(folded, sizeof(folded), c->nr_threads_folded, "exited threads");
        count_add(folded, sizeof(folded), c->nr_places_folded, "unplaced addresses");
        count_add(folded, sizeof(folded), c->nr_unnamed_folded, "unnamed addresses");
        count_add(past, sizeof(past), c->nr_samples_no_room, "samples");
        count_add(past, sizeof(past), c->nr_switch_no_room, "switch events");
        count_add(past, sizeof(past), c->nr_edges_no_room, "branch edges");
        line[0] = '\0';
        const char *sep = "Caps: ";
        if (c->nr_nodes_evicted) {
                append(line, "%s%" PRIu64 " cold call-tree nodes evicted", sep,
                       c->nr_nodes_evicted);
                sep = "; ";
        }
        if (c->nr_stacks_cut) {
                append(line, "%s%" PRIu64 " stacks cut", sep, c->nr_stacks_cut);
                sep = "; ";
        }
        if (folded[0]) {
                append(line, "%s%s folded", sep, folded);
                sep = "; ";
        }
        if (past[0])
                append(line, "%s%s past the caps", sep, past);
}

void header_unwind_text(const struct profile_unwind *u, uint32_t mode, uint32_t stack_copy_bytes,
                        char *out, size_t size)
{
        static const char *const modes[] = {"frame pointers", "dwarf", "auto"};
        static const char *const stops[KEV_NR_UNWIND_STOPS] = {
                "thread start", "stack end", "no module", "no CFI", "bad frame", "max depth"};
        out[0] = '\0';
        if (u) {
                mode = u->mode;
                stack_copy_bytes = u->stack_copy_bytes;
        }
        if (mode == ETWTOP_STACKWALK_FP && (!u || !u->nr_walks))
                return;
        char line[HEADER_WIDTH];
        snprintf(line, sizeof(line), "Stack walk: %s", mode < 3 ? modes[mode] : "?");
        if (mode != ETWTOP_STACKWALK_FP)
                append(line, ", %u-byte stack copies", (unsigned)stack_copy_bytes);
        if (!u || (!u->nr_walks && !u->nr_fp_chains)) {
                append(line, ": no user stack walked yet");
        } else {
                uint64_t cut = u->nr_walks - u->nr_by_stop[KEV_UNWIND_THREAD_START];
                append(line, ": %" PRIu64 " user stacks unwound: %" PRIu64 " to the thread start",
                       u->nr_walks, u->nr_by_stop[KEV_UNWIND_THREAD_START]);
                if (cut) {
                        append(line, ", %" PRIu64 " cut (", cut);
                        const char *sep = "";
                        for (uint32_t i = 1; i < KEV_NR_UNWIND_STOPS; i++)
                                if (u->nr_by_stop[i]) {
                                        append(line, "%s%s %" PRIu64, sep, stops[i],
                                               u->nr_by_stop[i]);
                                        sep = ", ";
                                }
                        append(line, ")");
                }
                if (u->nr_fp_chains)
                        append(line, "; %" PRIu64 " by frame pointers (code that keeps them)",
                               u->nr_fp_chains);
                if (u->nr_fp_frames)
                        append(line, "; rbp followed for %" PRIu64 " frames (code without CFI)",
                               u->nr_fp_frames);
        }
        snprintf(out, size, "%s", line);
}

/* The events of a perf.data's origin line (perf_data_origin: "perf.data of HOST, ...; events:
   cycles (1000 Hz), instructions (period 100000); command: ..."), into out; false: none. */
static bool perf_data_events(const char *logger_name, char *out, size_t size)
{
        static const char tag[] = "; events: ";
        if (strncmp(logger_name, "perf.data of ", 13) != 0)
                return false;
        const char *e = strstr(logger_name, tag);
        if (!e)
                return false;
        e += sizeof(tag) - 1;
        const char *end = strstr(e, "; command: ");
        size_t n = end ? (size_t)(end - e) : strlen(e);
        snprintf(out, size, "%.*s", (int)n, e);
        return n > 0;
}

void header_trace_text(const struct profile *p, struct header_info *h)
{
        const struct profile_trace *t = profile_trace(p);
        char name[64];
        h->sampling[0] = h->lbr[0] = '\0';
        if (!perf_data_events(t->logger_name, h->sampling, sizeof(h->sampling))) {
                /* an .etl: its sources past the timer, with their intervals */
                bool has_pmc = false;
                for (uint32_t i = 0; i < t->nr_source_names; i++)
                        has_pmc |= t->source_names[i].source != 0;
                for (uint32_t i = 0; has_pmc && i < t->nr_source_names; i++) {
                        const struct profile_source_label *l = &t->source_names[i];
                        size_t len = strlen(h->sampling);
                        const char *n = profile_source_name(p, l->source, name, sizeof(name));
                        if (l->source == 0)
                                snprintf(h->sampling + len, sizeof(h->sampling) - len,
                                         "%s%s %.3f ms", len ? ", " : "", n, l->interval / 10000.0);
                        else
                                snprintf(h->sampling + len, sizeof(h->sampling) - len,
                                         "%s%s every %u events", len ? ", " : "", n, l->interval);
                }
        }
        if (t->nr_lbr_records) {
                size_t len = 0;
                snprintf(h->lbr, sizeof(h->lbr), "on ");
                for (uint32_t i = 0; i < t->nr_lbr_sources; i++) {
                        len = strlen(h->lbr);
                        snprintf(h->lbr + len, sizeof(h->lbr) - len, "%s%s", i ? ", " : "",
                                 profile_source_name(p, t->lbr_sources[i], name, sizeof(name)));
                }
                len = strlen(h->lbr);
                snprintf(h->lbr + len, sizeof(h->lbr) - len, "%s%" PRIu64 " branch stacks",
                         t->nr_lbr_sources ? " samples, " : "", t->nr_lbr_records);
        }
}

uint32_t header_lines(const struct header_info *h, char lines[HEADER_LINES][HEADER_WIDTH])
{
        const struct collect_settings *s = h->settings;
        if (h->is_live) {
                snprintf(lines[0], HEADER_WIDTH,
                         "etwtop - %s %s%s%s   %.0f events/s   %" PRIu64 " samples",
                         h->record_path ? "recording" : "live", h->logger_name,
                         h->record_path ? " to " : "", h->record_path ? h->record_path : "",
                         h->events_per_s, h->nr_samples);
                if (h->shown_source)
                        append(lines[0], " of %s", h->shown_source);
                append(lines[0], "   lost %" PRIu64, h->nr_lost);
                if (h->nr_rt_buffers_lost)
                        append(lines[0], "   buffers lost %" PRIu64, h->nr_rt_buffers_lost);
        } else {
                snprintf(lines[0], HEADER_WIDTH,
                         "etwtop - replay %s   %" PRIu64 " events   %" PRIu64 " samples",
                         h->replay_path, h->nr_events, h->nr_samples);
                if (h->shown_source)
                        append(lines[0], " of %s", h->shown_source);
                if (h->nr_lost)
                        append(lines[0], "   lost %" PRIu64, h->nr_lost);
                if (h->loading_pct >= 0)
                        append(lines[0], "   loading %3d%%", h->loading_pct);
                else if (h->is_loading_names)
                        append(lines[0], "   loading names");
        }
        if (h->is_paused)
                append(lines[0], "   [paused]");
        if (h->zoom_pid)
                append(lines[0], "   [process %u]", h->zoom_pid);
        else if (h->traced_pid)
                append(lines[0], "   [process %u: recorded with -p]", h->traced_pid);

        char flags[256] = "", hooks[256] = "";
        PERFINFO_GROUPMASK gm;
        memcpy(gm.Masks, s->masks.Masks, sizeof(gm.Masks));
        xperf_format_flags(&gm, flags, sizeof(flags));
        for (uint32_t i = 0; i < s->nr_stack_hooks; i++) {
                const char *n = xperf_hook_name(s->stack_hooks[i]);
                size_t len = strlen(hooks);
                snprintf(hooks + len, sizeof(hooks) - len, "%s%s", len ? "+" : "", n ? n : "?");
        }
        if (!h->is_live) {
                /* a recording: the events its stacks were seen on */
                size_t len = strlen(hooks);
                snprintf(hooks + len, sizeof(hooks) - len, "%s",
                         len             ? " (as recorded)"
                         : h->has_stacks ? "as recorded"
                                         : "none recorded");
        }
        if (!flags[0])
                snprintf(flags, sizeof(flags), "%s", h->is_live ? "none" : "(not recorded)");
        char sampling[HEADER_WIDTH / 2 + 16];
        if (!h->is_live && h->sampling[0])
                snprintf(sampling, sizeof(sampling), "Sampling: %s", h->sampling);
        else
                snprintf(sampling, sizeof(sampling), "Interval: %.3f ms (timer)",
                         s->interval_100ns / 10000.0);
        snprintf(lines[1], HEADER_WIDTH, "Groups: %s   Stacks: %s   %s   LBR: %s   Refresh: %.1f s",
                 flags, hooks[0] ? hooks : "none", sampling,
                 !h->is_live && h->lbr[0] ? h->lbr
                 : s->is_lbr_on           ? "on"
                                          : "off",
                 h->delay_s);

        char cannot[400] = "";
        if (h->is_live && h->caps) {
                const char *what[3] = {!h->caps->has_pmu ? "no PMU (PMC sources)" : NULL,
                                       !h->caps->has_lbr ? "no LBR" : NULL,
                                       !h->caps->has_kallsyms ? "kernel symbols restricted" : NULL};
                for (int i = 0; i < 3; i++)
                        if (what[i]) {
                                size_t len = strlen(cannot);
                                snprintf(cannot + len, sizeof(cannot) - len, "%s%s",
                                         len ? ", " : "", what[i]);
                        }
        }
        char walk[HEADER_WIDTH];
        walk[0] = '\0';
        /* a replay: the walk the recording counted, if any (not this command line's mode) */
        if (h->is_live || h->unwind)
                header_unwind_text(h->unwind, s->stack_walk, s->user_stack_bytes, walk,
                                   sizeof(walk));
        /* truncated at the screen's width, as every header line: what this machine cannot do
           first, since the walk's counts grow with what the machine runs (cut stacks by reason) */
        lines[2][0] = '\0';
        append(lines[2], "%s%s%s%s", cannot[0] ? "Not on this machine: " : "", cannot,
               walk[0] && cannot[0] ? "   " : "", walk);
        uint32_t nr = lines[2][0] ? 3 : 2;
        /* a line of its own, its start seen on a narrow screen */
        caps_text(&h->model_caps, lines[nr]);
        return lines[nr][0] ? nr + 1 : nr;
}

void header_not_shown_text(const struct profile_trace *t, char *out, size_t size)
{
        if (!size)
                return;
        out[0] = 0;
        if (!t->nr_not_shown)
                return;
        size_t n = (size_t)snprintf(out, size, "Not shown: the perf.data's");
        bool is_stat = false, is_trace = false, is_throttle = false;
        for (uint32_t i = 0; i < t->nr_not_shown && n < size; i++) {
                const struct profile_not_shown *x = &t->not_shown[i];
                char name[sizeof(x->name)];
                const char *shown = x->name;
                if (!text_is_clean(x->name)) {
                        text_sanitize(name, sizeof(name), x->name);
                        shown = name;
                }
                n += (size_t)snprintf(out + n, size - n, "%s %" PRIu64 " %s", i ? "," : "",
                                      x->count, shown);
                if (n < size && x->type == UINT32_MAX)
                        n += (size_t)snprintf(out + n, size - n, " (of types past perf's)");
                else if (n < size && strcmp(x->name, "UNKNOWN") == 0)
                        n += (size_t)snprintf(out + n, size - n, " (type %u)", x->type);
                is_stat |= strncmp(x->name, "STAT", 4) == 0;
                is_trace |= strncmp(x->name, "AUX", 3) == 0 || strcmp(x->name, "ITRACE_START") == 0;
                is_throttle |= strstr(x->name, "THROTTLE") != NULL;
        }
        if (n < size)
                snprintf(out + n, size - n, " records%s%s%s",
                         is_stat ? " (perf stat record's counts: perf stat report reads them)" : "",
                         is_trace ? " (hardware trace data: perf script decodes it)" : "",
                         is_throttle ? " (the kernel throttled sampling: fewer samples for a while)"
                                     : "");
}
