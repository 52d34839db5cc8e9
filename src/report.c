/* SPDX-License-Identifier: MIT */
/* report.c: owns `etwtop --replay FILE -b`: replays a recording through the model and prints
   the hot functions and modules, the hot branch edges (LBR) and the context switches and
   waits as text. */
#include "report.h"
#include "module_text.h"

#include "annotate.h"
#include "events_report.h"
#include "etw/evntrace.h"
#include "feed.h"
#include "header.h"
#include "model/hot_ipc.h"
#include "source_pick.h"
#include "model/profile.h"
#include "outbuf.h"
#include "ui/text_sanitize.h"
#include "ui/views.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct report {
        const struct report_options *opts;
        struct profile *profile; /* owned */
};

static void on_log(void *ctx, const char *message)
{
        (void)ctx;
        char clean[1024]; /* a path from the trace may hold escape sequences */
        text_sanitize(clean, sizeof(clean), message);
        fprintf(stderr, "etwtop: symbols: %s\n", clean);
}

static void put_pct(struct outbuf *o, uint64_t part, uint64_t whole)
{
        char buf[32];
        snprintf(buf, sizeof(buf), "%7.2f%%", whole ? 100.0 * (double)part / (double)whole : 0.0);
        outbuf_puts(o, buf);
}

static void put_padded(struct outbuf *o, const char *s, int width)
{
        char buf[512];
        snprintf(buf, sizeof(buf), "%-*s", width, s);
        outbuf_puts(o, buf);
}

/* s, or its copy in buf made safe for a terminal: the trace's strings (names of loggers,
   modules, functions, files, processes and threads) may hold escape sequences (DESIGN.md). */
static const char *clean(const char *s, char *buf, size_t size)
{
        if (text_is_clean(s))
                return s;
        text_sanitize(buf, size, s);
        return buf;
}

/* A module's name as the report shows it, in buf. */
static const char *module_label(struct sym_store *st, uint32_t module, char *buf, size_t size)
{
        struct sym_module_info info;
        if (!module || !sym_module_info(st, module, &info))
                return "[unknown]";
        text_sanitize(buf, size, info.name);
        return buf;
}

/* The process or thread of a grouped row (--sort comm,sym, tid,sym), as the screen's
   Process and Thread columns say it. */
static void group_text(struct report *r, const struct hot_row *w, char *buf, size_t size)
{
        const struct switches *sw = r->profile->switches;
        char pn[SWITCHES_NAME_SIZE], tn[SWITCHES_NAME_SIZE], text[160];
        if (r->opts->group == FUNCTIONS_BY_PROCESS) {
                const char *name = switches_process_name(sw, w->pid);
                if (*name)
                        snprintf(text, sizeof(text), "%s", name);
                else if (w->pid)
                        snprintf(text, sizeof(text), "pid %u", w->pid);
                else
                        snprintf(text, sizeof(text), "%s", w->module ? "Idle" : "");
        } else {
                switches_thread_names(sw, w->tid, pn, tn);
                if (!pn[0]) /* a thread no event named: its process's name */
                        snprintf(pn, sizeof(pn), "%s", switches_process_name(sw, w->pid));
                snprintf(text, sizeof(text), "%s%s%s (%u)", pn[0] ? pn : "?", tn[0] ? "/" : "", tn,
                         w->tid);
        }
        text_sanitize(buf, size, text);
}

/* One row of the hot functions: the counts, the module, the process or thread when grouped by
   them, the function (indent: under its module's row). */
static void put_function(struct report *r, struct outbuf *o, const struct hot_row *w, uint64_t nr,
                         const char *indent)
{
        char line[512], mod[256], buf[512], fn_clean[512], who[160];
        const char *m = module_label(r->profile->store, w->module, mod, sizeof(mod));
        const char *fn =
                place_text(r->profile->store, w->function, w->module, m, w->rel, buf, sizeof(buf));
        put_pct(o, w->self, nr);
        outbuf_putc(o, ' ');
        put_pct(o, w->total, nr);
        snprintf(line, sizeof(line), " %8" PRIu64 " %8" PRIu64 "  %s", w->self, w->total, indent);
        outbuf_puts(o, line);
        put_padded(o, m, 25 - (int)strlen(indent));
        outbuf_putc(o, ' ');
        enum functions_group g = r->opts->group;
        if (g == FUNCTIONS_BY_PROCESS || g == FUNCTIONS_BY_THREAD) {
                group_text(r, w, who, sizeof(who));
                put_padded(o, who, g == FUNCTIONS_BY_PROCESS ? 16 : 28);
                outbuf_putc(o, ' ');
        }
        outbuf_puts(o, clean(fn, fn_clean, sizeof(fn_clean)));
        outbuf_putc(o, '\n');
}

static void print_ipc_rows(struct report *r, struct outbuf *o, uint64_t ci, uint64_t ii,
                           uint32_t top, bool is_by_module);

/* Where both cycles and instructions are sampled: IPC per module and per function, the functions
   with the most cycle samples first, each sample weighed by its source's interval (events per
   sample). */
static void print_ipc(struct report *r, struct outbuf *o)
{
        uint64_t ci = profile_source_interval(r->profile, HOT_IPC_CYCLES);
        uint64_t ii = profile_source_interval(r->profile, HOT_IPC_INSTRUCTIONS);
        if (!hot_nr_samples(r->profile->hot, HOT_IPC_CYCLES) ||
            !hot_nr_samples(r->profile->hot, HOT_IPC_INSTRUCTIONS))
                return;
        hot_set_grouping(r->profile->hot, HOT_BY_FUNCTION);
        uint32_t top = r->opts->nr_top ? r->opts->nr_top : 40;
        for (int by_module = 1; by_module >= 0; by_module--)
                print_ipc_rows(r, o, ci, ii, top, by_module);
}

static void print_ipc_rows(struct report *r, struct outbuf *o, uint64_t ci, uint64_t ii,
                           uint32_t top, bool is_by_module)
{
        struct hot_ipc_row *rows;
        uint32_t n = is_by_module ? hot_ipc_module_rows(r->profile->hot, ci, ii, top, &rows)
                                  : hot_ipc_rows(r->profile->hot, ci, ii, top, &rows);
        char line[1400], mod[256], buf[512], fn_clean[512];
        snprintf(line, sizeof(line),
                 "\nIPC per %s (InstructionRetired samples x %" PRIu64
                 " / TotalCycles samples x %" PRIu64 ")\n",
                 is_by_module ? "module" : "function", ii, ci);
        outbuf_puts(o, line);
        if (!n)
                outbuf_puts(o, "   (the trace gives no interval for one of them)\n");
        else
                outbuf_puts(o, is_by_module
                                       ? "      IPC   Cycles    Instr  Module\n"
                                       : "      IPC   Cycles    Instr  Module                    "
                                         "Function\n");
        for (uint32_t i = 0; i < n; i++) {
                const struct hot_ipc_row *w = &rows[i];
                const char *m = module_label(r->profile->store, w->module, mod, sizeof(mod));
                const char *fn = is_by_module ? ""
                                              : place_text(r->profile->store, w->function,
                                                           w->module, m, w->rel, buf, sizeof(buf));
                snprintf(line, sizeof(line), " %8.2f %8" PRIu64 " %8" PRIu64 "  ", w->ipc,
                         w->nr_cycles, w->nr_instructions);
                outbuf_puts(o, line);
                if (is_by_module) {
                        outbuf_puts(o, m);
                } else {
                        put_padded(o, m, 25);
                        outbuf_putc(o, ' ');
                        outbuf_puts(o, clean(fn, fn_clean, sizeof(fn_clean)));
                }
                outbuf_putc(o, '\n');
        }
        free(rows);
}

/* --sort dso: each module's row, its functions under it. */
static void print_by_module(struct report *r, struct outbuf *o, uint16_t source, uint64_t nr,
                            uint32_t top)
{
        const struct hot_row *rows;
        uint32_t n = hot_functions(r->profile->hot, source, false, &rows);
        const struct hot_module_row *mrows;
        uint32_t m = hot_modules(r->profile->hot, source, &mrows);
        char line[512], mod[256];
        for (uint32_t i = 0; i < m && i < top; i++) {
                uint32_t nr_fns = 0;
                for (uint32_t k = 0; k < n; k++)
                        nr_fns += rows[k].module == mrows[i].module;
                put_pct(o, mrows[i].self, nr);
                outbuf_putc(o, ' ');
                put_pct(o, mrows[i].self, nr);
                snprintf(line, sizeof(line), " %8" PRIu64 " %8" PRIu64 "  %-25s [%u function%s]\n",
                         mrows[i].self, mrows[i].self,
                         module_label(r->profile->store, mrows[i].module, mod, sizeof(mod)), nr_fns,
                         nr_fns == 1 ? "" : "s");
                outbuf_puts(o, line);
                for (uint32_t k = 0, shown = 0; k < n && shown < top; k++) {
                        if (rows[k].module != mrows[i].module)
                                continue;
                        put_function(r, o, &rows[k], nr, "  ");
                        shown++;
                }
        }
}

static void print_source(struct report *r, struct outbuf *o, uint16_t source)
{
        uint64_t nr = hot_nr_samples(r->profile->hot, source);
        char name_buf[32];
        const char *name = profile_source_name(r->profile, source, name_buf, sizeof(name_buf));
        char line[1400];
        const struct hot_row *rows;
        uint32_t top = r->opts->nr_top ? r->opts->nr_top : 40;
        enum functions_group g = r->opts->group;
        static const char *const by[] = {
                [FUNCTIONS_BY_FUNCTION] = "",
                [FUNCTIONS_BY_PROCESS] = ", a row per process and function",
                [FUNCTIONS_BY_THREAD] = ", a row per thread and function",
                [FUNCTIONS_BY_MODULE] = ", the modules, their functions under them",
        };
        static const char *const columns[] = {
                [FUNCTIONS_BY_FUNCTION] = "Function",
                [FUNCTIONS_BY_PROCESS] = "Process          Function",
                [FUNCTIONS_BY_THREAD] = "Thread                       Function",
                [FUNCTIONS_BY_MODULE] = "Function",
        };
        hot_set_grouping(r->profile->hot, g == FUNCTIONS_BY_PROCESS  ? HOT_BY_PROCESS
                                          : g == FUNCTIONS_BY_THREAD ? HOT_BY_THREAD
                                                                     : HOT_BY_FUNCTION);
        snprintf(line, sizeof(line), "\nHot functions (%s, %" PRIu64 " samples, by self%s)\n", name,
                 nr, by[g]);
        outbuf_puts(o, line);
        snprintf(line, sizeof(line),
                 "   Self%%   Total%%     Self    Total  Module                    %s\n",
                 columns[g]);
        outbuf_puts(o, line);
        if (g == FUNCTIONS_BY_MODULE) {
                print_by_module(r, o, source, nr, top);
        } else {
                uint32_t n = hot_top_functions(r->profile->hot, source, false, top, &rows);
                for (uint32_t i = 0; i < n && i < top; i++)
                        put_function(r, o, &rows[i], nr, "");
        }
        char mod[256];
        const struct hot_module_row *mrows;
        uint32_t m = hot_modules(r->profile->hot, source, &mrows);
        snprintf(line, sizeof(line), "\nHot modules (%s)\n", name);
        outbuf_puts(o, line);
        outbuf_puts(o, "   Self%     Self  Module                    Symbols\n");
        for (uint32_t i = 0; i < m && i < top; i++) {
                put_pct(o, mrows[i].self, nr);
                struct sym_module_info info;
                char detail[512] = "";
                /* where names came from, or what would give them (a Windows image's PDB name
                   and signature, an ELF file's build-id) */
                if (mrows[i].module && sym_module_info(r->profile->store, mrows[i].module, &info))
                        module_symbols_text(&info, detail, sizeof(detail));
                char detail_clean[512];
                snprintf(line, sizeof(line), " %8" PRIu64 "  %-25s %s\n", mrows[i].self,
                         module_label(r->profile->store, mrows[i].module, mod, sizeof(mod)),
                         clean(detail, detail_clean, sizeof(detail_clean)));
                outbuf_puts(o, line);
        }
        /* the source lines, where debug information or a PDB gives them */
        const struct hot_line_row *lrows;
        uint32_t nl = hot_top_lines(r->profile->hot, source, top, &lrows);
        if (!nl)
                return;
        snprintf(line, sizeof(line), "\nHot lines (%s)\n", name);
        outbuf_puts(o, line);
        outbuf_puts(o, "   Self%     Self  Module                    Line  Function\n");
        for (uint32_t i = 0; i < nl; i++) {
                put_pct(o, lrows[i].self, nr);
                snprintf(line, sizeof(line), " %8" PRIu64 "  ", lrows[i].self);
                outbuf_puts(o, line);
                put_padded(o, module_label(r->profile->store, lrows[i].module, mod, sizeof(mod)),
                           25);
                char file[512], fn[512];
                snprintf(line, sizeof(line), " %s:%u  %s\n",
                         clean(sym_name(r->profile->store, lrows[i].file), file, sizeof(file)),
                         (unsigned)lrows[i].line,
                         lrows[i].function ? clean(sym_name(r->profile->store, lrows[i].function),
                                                   fn, sizeof(fn))
                                           : "?");
                outbuf_puts(o, line);
        }
}

/* A function pair's end: module!function, or the place where no function names it. */
static void function_end(struct report *r, const struct branches_end *e, char *buf, size_t size)
{
        char raw[512];
        if (e->function) {
                struct sym_module_info info;
                sym_module_info(r->profile->store, e->loc.module, &info);
                snprintf(raw, sizeof(raw), "%s!%s", info.name ? info.name : "?",
                         sym_name(r->profile->store, e->function));
        } else {
                sym_format(r->profile->store, e->loc, raw, sizeof(raw));
        }
        text_sanitize(buf, size, raw);
}

/* The hot branch edges of the LBR events, exact edges or function pairs, most taken first,
   with the mispredicted share and average cycles where the CPU recorded them. */
static void print_branches(struct report *r, struct outbuf *o, enum branches_group group)
{
        const struct branches_row *rows;
        uint32_t n = branches_rows(r->profile->branches, group, AGG_ALL, &rows);
        if (!n)
                return;
        uint32_t top = r->opts->nr_top ? r->opts->nr_top : 40;
        uint64_t total = 0;
        for (uint32_t i = 0; i < n; i++)
                total += rows[i].count;
        char line[1200], from[512], to[512];
        snprintf(line, sizeof(line), "\nHot branch edges%s (LBR, %" PRIu64 " branches)\n",
                 group == BRANCHES_BY_FUNCTION ? " by function" : "", total);
        outbuf_puts(o, line);
        outbuf_puts(o, "   Share    Count  Mispred  AvgCyc  From -> To\n");
        for (uint32_t i = 0; i < n && i < top; i++) {
                const struct branches_row *w = &rows[i];
                if (w->is_other) {
                        snprintf(from, sizeof(from), "[other edges]");
                        to[0] = 0;
                } else if (group == BRANCHES_BY_FUNCTION) {
                        function_end(r, &w->from, from, sizeof(from));
                        function_end(r, &w->to, to, sizeof(to));
                } else {
                        char raw[512];
                        sym_format(r->profile->store, w->from.loc, raw, sizeof(raw));
                        text_sanitize(from, sizeof(from), raw);
                        sym_format(r->profile->store, w->to.loc, raw, sizeof(raw));
                        text_sanitize(to, sizeof(to), raw);
                }
                put_pct(o, w->count, total);
                char mis[16] = "       -", cyc[16] = "      -";
                double v;
                if (branches_mispredict_pct(w, &v))
                        snprintf(mis, sizeof(mis), "%7.2f%%", v);
                if (branches_avg_cycles(w, &v))
                        snprintf(cyc, sizeof(cyc), "%7.1f", v);
                snprintf(line, sizeof(line), " %8" PRIu64 " %s %s  %s%s%s\n", w->count, mis, cyc,
                         from, to[0] ? " -> " : "", to);
                outbuf_puts(o, line);
        }
}

/* "process/thread", safe for a terminal. */
static void thread_text(const char *process, const char *thread, char *buf, size_t size)
{
        char raw[2 * SWITCHES_NAME_SIZE + 2];
        snprintf(raw, sizeof(raw), "%s%s%s", process, thread[0] ? "/" : "", thread);
        text_sanitize(buf, size, raw);
}

/* The threads that switched, most switches first, and the time waited by state and reason. */
static void print_switches(struct report *r, struct outbuf *o)
{
        const struct switches_row *rows;
        uint32_t n = switches_threads(r->profile->switches, SWITCHES_BY_SWITCHES, &rows);
        if (!n)
                return;
        uint32_t top = r->opts->nr_top ? r->opts->nr_top : 40;
        char line[512], wait[128];
        outbuf_puts(o, "\nContext switches (threads, by switches)\n");
        outbuf_puts(o, " Switches   On-CPU ms  Off-CPU ms  Readied      TID      PID  "
                       "Top wait (state/reason)        Thread\n");
        for (uint32_t i = 0; i < n && i < top; i++) {
                const struct switches_row *w = &rows[i];
                wait[0] = 0;
                if (w->nr_waits)
                        snprintf(wait, sizeof(wait), "%s/%s",
                                 kevent_thread_state_name(w->waits[0].state),
                                 kevent_wait_reason_name(w->waits[0].wait_reason));
                char name[80];
                if (w->is_other)
                        snprintf(name, sizeof(name), "[other threads]");
                else
                        thread_text(w->process_name, w->thread_name, name, sizeof(name));
                snprintf(line, sizeof(line),
                         " %8" PRIu64 " %11.3f %11.3f %8" PRIu64 " %8u %8u  %-30s %s\n",
                         w->nr_switches, (double)w->on_cpu_ns / 1e6, (double)w->off_cpu_ns / 1e6,
                         w->nr_readied, w->is_other ? 0 : w->tid, w->pid == AGG_ALL ? 0 : w->pid,
                         wait, name);
                outbuf_puts(o, line);
        }
        /* the PMC counters of the threads' timeslices, when the switches carried some */
        if (n && rows[0].nr_pmc) {
                outbuf_puts(o, "\nCounters per thread (the PMC counts of its timeslices, from the "
                               "CSwitch events)\n");
                outbuf_puts(o, "      TID  Thread                          Counts\n");
                for (uint32_t i = 0; i < n && i < top; i++) {
                        const struct switches_row *w = &rows[i];
                        bool has = false;
                        for (uint32_t k = 0; k < w->nr_pmc; k++)
                                has = has || w->pmc[k];
                        if (!has || w->is_other)
                                continue;
                        char name[80], counts[256], raw[256];
                        thread_text(w->process_name, w->thread_name, name, sizeof(name));
                        switches_pmc_text(r->profile->switches, w, raw, sizeof(raw));
                        text_sanitize(counts, sizeof(counts), raw);
                        snprintf(line, sizeof(line), " %8u  %-30s  %s\n", w->tid, name, counts);
                        outbuf_puts(o, line);
                }
        }
        const struct switches_cpu_row *cpus;
        uint32_t nc = switches_cpus(r->profile->switches, &cpus);
        if (nc) {
                outbuf_puts(o, "\nCPUs (time with a thread on them, idle time)\n");
                outbuf_puts(
                        o,
                        "  CPU  Switches     Busy ms     Idle ms     Busy%  Idle in (C-state)\n");
                for (uint32_t i = 0; i < nc; i++) {
                        uint64_t all = cpus[i].busy_ns + cpus[i].idle_ns;
                        snprintf(line, sizeof(line), " %4u %9" PRIu64 " %11.3f %11.3f  ",
                                 cpus[i].cpu, cpus[i].nr_switches, (double)cpus[i].busy_ns / 1e6,
                                 (double)cpus[i].idle_ns / 1e6);
                        outbuf_puts(o, line);
                        put_pct(o, cpus[i].busy_ns, all);
                        char cstates[96], raw[96];
                        switches_cstates_text(&cpus[i], raw, sizeof(raw));
                        text_sanitize(cstates, sizeof(cstates), raw);
                        if (cstates[0]) {
                                outbuf_puts(o, "  ");
                                outbuf_puts(o, cstates);
                        }
                        outbuf_putc(o, '\n');
                }
        }
        const struct switches_blocker_row *bl;
        uint32_t nb = switches_blockers(r->profile->switches, AGG_ALL, &bl);
        if (nb) {
                outbuf_puts(o,
                            "\nWhere threads blocked (off-CPU time, from the switches' stacks)\n");
                outbuf_puts(o, "    Waits  Off-CPU ms      TID  Thread                          "
                               "Blocked in\n");
                for (uint32_t i = 0; i < nb && i < top; i++) {
                        char where[320], name[80], raw[320];
                        sym_format(r->profile->store, bl[i].where, raw, sizeof(raw));
                        text_sanitize(where, sizeof(where), raw);
                        thread_text(bl[i].process_name, bl[i].thread_name, name, sizeof(name));
                        snprintf(line, sizeof(line), " %8" PRIu64 " %11.3f %8u  %-30s  %s\n",
                                 bl[i].nr_waits, (double)bl[i].off_cpu_ns / 1e6, bl[i].tid, name,
                                 where);
                        outbuf_puts(o, line);
                }
        }
        const struct switches_wait_row *waits;
        uint32_t m = switches_waits(r->profile->switches, &waits);
        if (!m)
                return;
        outbuf_puts(o, "\nWaits (state/reason, by off-CPU time)\n");
        outbuf_puts(o, "    Waits  Off-CPU ms  State/Reason\n");
        for (uint32_t i = 0; i < m && i < top; i++) {
                snprintf(line, sizeof(line), " %8" PRIu64 " %11.3f  %s/%s\n", waits[i].nr_waits,
                         (double)waits[i].off_cpu_ns / 1e6,
                         kevent_thread_state_name(waits[i].state),
                         kevent_wait_reason_name(waits[i].wait_reason));
                outbuf_puts(o, line);
        }
}

/* --annotate FUNCTION (annotate_print) made safe for a terminal: its function names, file
   names and source lines come from the trace and the files it names. Its text goes through a
   temporary file, then to o with each part between tabs sanitized. annotate_print's return. */
static int annotate_clean(struct profile *p, const struct report_options *opts, struct outbuf *o,
                          char *err, size_t err_size)
{
        FILE *tf = tmpfile();
        if (!tf) {
                snprintf(err, err_size, "--annotate: no temporary file: %s", strerror(errno));
                return -1;
        }
        struct outbuf *t = malloc(sizeof(*t));
        if (!t) {
                fclose(tf);
                snprintf(err, err_size, "--annotate: out of memory");
                return -1;
        }
        outbuf_init(t, fileno(tf));
        int rc = annotate_print(p, opts->annotate, opts->nr_top, t, err, err_size);
        outbuf_flush(t);
        free(t);
        rewind(tf);
        char *line = NULL, *clean_part = NULL;
        size_t cap = 0, clean_cap = 0;
        ssize_t n;
        while ((n = getline(&line, &cap, tf)) > 0) {
                if (clean_cap < (size_t)n + 1) {
                        clean_cap = (size_t)n + 1;
                        free(clean_part);
                        clean_part = malloc(clean_cap);
                        if (!clean_part)
                                break;
                }
                for (char *part = line; *part;) {
                        size_t len = strcspn(part, "\t\n");
                        char sep = part[len];
                        part[len] = 0;
                        outbuf_puts(o, clean(part, clean_part, clean_cap));
                        if (!sep)
                                break;
                        outbuf_putc(o, sep);
                        part += len + 1;
                }
        }
        free(line);
        free(clean_part);
        fclose(tf);
        return rc;
}

int report_run(const struct report_options *opts, char *err, size_t err_size)
{
        struct report r = {.opts = opts};
        struct outbuf o;
        int rc = -1;
        struct profile_options po = {.symbol_path = opts->symbol_path,
                                     .nr_symbol_path = opts->nr_symbol_path,
                                     .is_no_demangle = opts->is_no_demangle,
                                     .log = on_log};
        r.profile = profile_new(&po);
        struct profile *p = r.profile;
        events_table_set_max_recent(p->events, 0); /* counts only */
        struct feed *f = NULL;
        if (feed_replay_file(&f, p, opts->path, opts->has_from, opts->from_s, opts->has_to,
                             opts->to_s, err, err_size) < 0)
                goto out;

        /* the samples still waiting for their stacks, and the open intervals, to the end */
        profile_end(p);
        /* the modules the samples hit have been loading on the loader thread all along */
        sym_store_wait(p->store);
        sym_store_poll(p->store);
        outbuf_init(&o, opts->fd);
        char line[1400];
        const struct profile_trace *t = &p->trace;
        char logger[sizeof(t->logger_name)];
        snprintf(line, sizeof(line),
                 "etwtop replay of %s: %s, %u CPUs, %.3f s, %" PRIu64 " events, %" PRIu64 " lost\n",
                 opts->path,
                 t->logger_name[0] ? clean(t->logger_name, logger, sizeof(logger)) : "?",
                 t->nr_cpus, (double)profile_span_ns(p) / 1e9, profile_nr_events(p),
                 profile_nr_lost(p));
        outbuf_puts(&o, line);
        if (opts->has_from || opts->has_to) {
                if (opts->has_to)
                        snprintf(line, sizeof(line), "Time range: %.3f s to %.3f s of the trace\n",
                                 opts->has_from ? opts->from_s : 0.0, opts->to_s);
                else
                        snprintf(line, sizeof(line), "Time range: %.3f s to its end\n",
                                 opts->from_s);
                outbuf_puts(&o, line);
        }
        if (t->traced_pid) {
                snprintf(line, sizeof(line),
                         "Recorded with -p: process %u only (other processes' threads are the "
                         "other side of its switches)\n",
                         t->traced_pid);
                outbuf_puts(&o, line);
        }
        if (t->has_unwind) {
                header_unwind_text(&t->unwind, 0, 0, line, sizeof(line) - 1);
                if (line[0]) {
                        strcat(line, "\n");
                        outbuf_puts(&o, line);
                }
        }
        uint16_t sources[16];
        uint32_t nr_sources = hot_sources(p->hot, sources, 16);
        snprintf(line, sizeof(line), "Samples with stacks: %" PRIu64 "\n", hot_nr_stacks(p->hot));
        outbuf_puts(&o, line);
        if (!nr_sources)
                outbuf_puts(&o, "\nNo samples in this trace (PROFILE or PMC_PROFILE was off).\n");
        /* --source: that source's tables alone */
        int picked = opts->source ? source_pick(p, sources, nr_sources, opts->source) : -1;
        if (opts->source && picked < 0 && nr_sources) {
                char list[512];
                source_pick_list(p, sources, nr_sources, list, sizeof(list));
                snprintf(line, sizeof(line), "\nNo %s samples: the trace samples %s.\n",
                         opts->source, list);
                outbuf_puts(&o, line);
        }
        for (uint32_t i = 0; i < nr_sources; i++)
                if (!opts->source || (int)i == picked)
                        print_source(&r, &o, sources[i]);
        print_ipc(&r, &o);
        print_branches(&r, &o, BRANCHES_BY_EDGE);
        print_branches(&r, &o, BRANCHES_BY_FUNCTION);
        print_switches(&r, &o);
        events_report_print(p, &o);
        hot_set_grouping(p->hot, HOT_BY_FUNCTION); /* annotate's rows: one per function */
        int annotated = opts->annotate ? annotate_clean(p, opts, &o, err, err_size) : 0;
        if (outbuf_flush(&o) < 0) {
                snprintf(err, err_size, "writing the report: %s", strerror(o.error));
                goto out;
        }
        if (annotated < 0)
                goto out; /* the name matched nothing: err says so */
        rc = 0;
out:
        feed_close(f);
        profile_free(r.profile);
        return rc;
}
