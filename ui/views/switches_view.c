/* SPDX-License-Identifier: MIT */
/* switches_view.c: owns the context-switches view: threads (each opening to its waits, where it
   blocked, who readied it and from where, its CPUs), processes, CPUs or waits, and its keys; and
   the text report's tables of switches from the same rows (view_report.h). */
#include "ui/views.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/profile.h"
#include "util/xalloc.h"
#include "view_report.h"
#include "view_text.h"

enum switch_group { GROUP_THREAD, GROUP_PROCESS, GROUP_CPU, GROUP_WAIT, NR_GROUPS };

static const char *const group_names[NR_GROUPS] = {"by thread", "by process (its threads under it)",
                                                   "by CPU (busy, idle, C-states)",
                                                   "by wait (state/reason, every thread)"};

struct switches_view {
        struct ui_view view;
        enum switch_group group;
        struct ui_key_set expanded; /* the open threads and processes */
        struct view_report report;  /* the text report's table, when it asks for one */
};

enum {
        COL_SWITCHES,
        COL_ON_CPU,
        COL_OFF_CPU,
        COL_READIED,
        COL_CPU,
        COL_TID,
        COL_PID,
        COL_CPU_PCT,
        COL_WAIT,
        COL_THREAD,
        NR_COLS
};

/* The columns of each grouping: the same kinds and places, titled by what they hold there (a
   column a grouping leaves empty has no title). Narrow terminals drop CPU, PID, TID, Readied,
   On-CPU, then CPU%. */
static const struct ui_column group_cols[NR_GROUPS][NR_COLS] = {
        [GROUP_THREAD] = {{"Switches", UI_COL_U64, 9, 0},
                          {"On-CPU", UI_COL_NS, 10, 5},
                          {"Off-CPU", UI_COL_NS, 10, 0},
                          {"Readied", UI_COL_U64, 8, 4},
                          {"CPU", UI_COL_U64, 4, 1},
                          {"TID", UI_COL_U64, 7, 3},
                          {"PID", UI_COL_U64, 7, 2},
                          {"CPU%", UI_COL_PCT, 6, 6},
                          {"Top wait (state/reason)", UI_COL_TEXT, 26, 0},
                          {"Thread", UI_COL_TEXT, 0, 0}},
        [GROUP_PROCESS] = {{"Switches", UI_COL_U64, 9, 0},
                           {"On-CPU", UI_COL_NS, 10, 5},
                           {"Off-CPU", UI_COL_NS, 10, 0},
                           {"Readied", UI_COL_U64, 8, 4},
                           {"CPU", UI_COL_U64, 4, 1},
                           {"TID", UI_COL_U64, 7, 3},
                           {"PID", UI_COL_U64, 7, 2},
                           {"CPU%", UI_COL_PCT, 6, 6},
                           {"Top wait (state/reason)", UI_COL_TEXT, 26, 0},
                           {"Process", UI_COL_TEXT, 0, 0}},
        [GROUP_CPU] = {{"Switches", UI_COL_U64, 9, 0},
                       {"Busy", UI_COL_NS, 10, 5},
                       {"Idle", UI_COL_NS, 10, 0},
                       {"", UI_COL_U64, 8, 4},
                       {"CPU", UI_COL_U64, 4, 1},
                       {"", UI_COL_U64, 7, 3},
                       {"", UI_COL_U64, 7, 2},
                       {"Busy%", UI_COL_PCT, 6, 6},
                       {"Idle in (C-state)", UI_COL_TEXT, 26, 0},
                       {"Busy and idle share", UI_COL_TEXT, 0, 0}},
        [GROUP_WAIT] = {{"Waits", UI_COL_U64, 9, 0},
                        {"", UI_COL_NS, 10, 5},
                        {"Off-CPU", UI_COL_NS, 10, 0},
                        {"", UI_COL_U64, 8, 4},
                        {"", UI_COL_U64, 4, 1},
                        {"", UI_COL_U64, 7, 3},
                        {"", UI_COL_U64, 7, 2},
                        {"", UI_COL_PCT, 6, 6},
                        {"State/reason", UI_COL_TEXT, 26, 0},
                        {"Threads", UI_COL_TEXT, 0, 0}},
};

/* Row keys: a thread's is tid + 1; the other kinds are told apart by a high bit. */
#define KEY_PROCESS (1ull << 60)
#define KEY_CPU     (1ull << 59)
#define KEY_DETAIL  (1ull << 58) /* a thread's wait, readier or CPU: tid << 16 | kind | i */
#define KEY_WAIT    (1ull << 57)

static struct switches_view *of(struct ui_view *v)
{
        return ui_view_of(v, struct switches_view);
}

/* CPU%: a thread's (or process's) On-CPU time as a share of the wall time the counts cover,
   as htop shows it (a process of several threads can pass 100). */
static double cpu_pct(uint64_t on_cpu_ns, int64_t wall_ns)
{
        return wall_ns > 0 ? 100.0 * (double)on_cpu_ns / (double)wall_ns : 0.0;
}

static void row_cells(struct ui_table *t, uint32_t r, const struct switches_row *w, int64_t wall_ns)
{
        ui_table_pct(t, r, COL_CPU_PCT, cpu_pct(w->on_cpu_ns, wall_ns));
        ui_table_u64(t, r, COL_SWITCHES, w->nr_switches);
        ui_table_u64(t, r, COL_ON_CPU, w->on_cpu_ns);
        ui_table_u64(t, r, COL_OFF_CPU, w->off_cpu_ns);
        ui_table_u64(t, r, COL_READIED, w->nr_readied);
        ui_table_u64(t, r, COL_CPU, w->last_cpu == AGG_ALL ? 0 : w->last_cpu);
        ui_table_u64(t, r, COL_PID, w->pid == AGG_ALL ? 0 : w->pid);
        char wait[128] = "";
        if (w->nr_waits)
                view_wait_text(w->waits[0].state, w->waits[0].wait_reason, wait, sizeof(wait));
        ui_table_text(t, r, COL_WAIT, wait);
}

static uint64_t detail_key(uint32_t tid, uint32_t kind, uint32_t i)
{
        return KEY_DETAIL | (uint64_t)tid << 16 | (uint64_t)kind << 12 | (i & 0xfff);
}

/* The rows under an open thread: its waits by state and reason, where it blocked, who readied
   it and from where, the CPUs it ran on. */
static void add_thread_details(struct profile *p, struct ui_table *t, const struct switches_row *w,
                               uint8_t depth)
{
        struct switches *sw = profile_switches(p);
        char text[640], where[512];
        if (w->nr_pmc) {
                switches_pmc_text(sw, w, where, sizeof(where));
                uint32_t r = ui_table_add(t, detail_key(w->tid, 5, 0), depth, UI_ROW_SPARSE);
                snprintf(text, sizeof(text), "PMC in its timeslices: %s", where);
                ui_table_text(t, r, COL_THREAD, text);
        }
        for (uint32_t i = 0; i < w->nr_waits; i++) {
                const struct switches_wait *x = &w->waits[i];
                uint32_t r = ui_table_add(t, detail_key(w->tid, 1, i), depth, UI_ROW_SPARSE);
                ui_table_u64(t, r, COL_SWITCHES, x->nr_waits);
                ui_table_u64(t, r, COL_OFF_CPU, x->off_cpu_ns);
                view_wait_text(x->state, x->wait_reason, text, sizeof(text));
                ui_table_text(t, r, COL_WAIT, text);
                ui_table_text(t, r, COL_THREAD, "off CPU in this state/reason");
        }
        if (w->other_wait_ns) {
                uint32_t r = ui_table_add(t, detail_key(w->tid, 1, 0xfff), depth, UI_ROW_SPARSE);
                ui_table_u64(t, r, COL_OFF_CPU, w->other_wait_ns);
                ui_table_text(t, r, COL_THREAD, "off CPU in other states/reasons");
        }
        const struct switches_blocker_row *bl;
        uint32_t n = switches_blockers(sw, w->tid, &bl);
        for (uint32_t i = 0; i < n && i < 64; i++) {
                uint32_t r = ui_table_add(t, detail_key(w->tid, 4, i), depth, UI_ROW_SPARSE);
                ui_table_u64(t, r, COL_SWITCHES, bl[i].nr_waits);
                ui_table_u64(t, r, COL_OFF_CPU, bl[i].off_cpu_ns);
                profile_place_text(p, bl[i].where, bl[i].function, bl[i].offset, where,
                                   sizeof(where));
                snprintf(text, sizeof(text), "blocked in %s", where);
                ui_table_text(t, r, COL_THREAD, text);
        }
        const struct switches_readier_row *rd;
        n = switches_readiers(sw, w->tid, &rd);
        for (uint32_t i = 0; i < n && i < 64; i++) {
                const struct switches_readier_row *x = &rd[i];
                uint32_t r = ui_table_add(t, detail_key(w->tid, 2, i), depth, UI_ROW_SPARSE);
                ui_table_u64(t, r, COL_READIED, x->count);
                if (x->is_other) {
                        ui_table_text(t, r, COL_THREAD, "readied by [other readiers]");
                        continue;
                }
                if (x->readying_tid != AGG_ALL) { /* "[exited threads]": no one id */
                        ui_table_u64(t, r, COL_TID, x->readying_tid);
                        ui_table_u64(t, r, COL_PID, x->readying_pid);
                }
                if (x->has_where)
                        profile_place_text(p, x->where, x->function, x->offset, where,
                                           sizeof(where));
                else
                        snprintf(where, sizeof(where), "(no stack)");
                snprintf(text, sizeof(text), "readied by %s%s%s from %s",
                         x->readying_process_name[0] ? x->readying_process_name : "?",
                         x->readying_thread_name[0] ? "/" : "", x->readying_thread_name, where);
                ui_table_text(t, r, COL_THREAD, text);
        }
        const struct switches_cpu_row *c;
        n = switches_thread_cpus(sw, w->tid, &c);
        for (uint32_t i = 0; i < n && i < 256; i++) {
                uint32_t r = ui_table_add(t, detail_key(w->tid, 3, c[i].cpu), depth, UI_ROW_SPARSE);
                ui_table_u64(t, r, COL_SWITCHES, c[i].nr_switches);
                ui_table_u64(t, r, COL_ON_CPU, c[i].busy_ns);
                ui_table_u64(t, r, COL_CPU, c[i].cpu);
                snprintf(text, sizeof(text), "ran on CPU %u", c[i].cpu);
                ui_table_text(t, r, COL_THREAD, text);
        }
}

/* A copy of n rows the model answered (its arrays last until its next call); free it. */
static struct switches_row *copy_rows(const struct switches_row *rows, uint32_t n)
{
        struct switches_row *copy = xmalloc((n ? n : 1) * sizeof(*copy));
        if (n) /* an empty answer may be no array */
                memcpy(copy, rows, n * sizeof(*copy));
        return copy;
}

/* Thread rows (copied: the details ask the model for other arrays), each open one with its
   details under it. */
static void add_threads(struct switches_view *sv, struct profile *p, struct ui_table *t,
                        const struct switches_row *rows, uint32_t n, uint8_t depth)
{
        struct switches_row *copy = copy_rows(rows, n);
        char name[128];
        for (uint32_t i = 0; i < n; i++) {
                const struct switches_row *w = &copy[i];
                uint64_t key = (uint64_t)w->tid + 1;
                bool can_open = !w->is_other;
                bool is_open = can_open && !sv->report.table && ui_key_set_has(&sv->expanded, key);
                /* the other threads' row is sparse: no TID, PID or CPU of its own */
                uint32_t r = ui_table_add(t, key, depth,
                                          (can_open ? UI_ROW_EXPANDABLE : UI_ROW_SPARSE) |
                                                  (is_open ? UI_ROW_EXPANDED : 0));
                row_cells(t, r, w, switches_wall_ns(profile_switches(p)));
                if (!w->is_other)
                        ui_table_u64(t, r, COL_TID, w->tid);
                if (w->is_other)
                        snprintf(name, sizeof(name), "[other threads]");
                else
                        snprintf(name, sizeof(name), "%s%s%s", w->process_name,
                                 w->thread_name[0] ? "/" : "", w->thread_name);
                ui_table_text(t, r, COL_THREAD, name);
                if (is_open)
                        add_thread_details(p, t, w, (uint8_t)(depth + 1));
        }
        free(copy);
}

static void add_processes(struct switches_view *sv, struct profile *p, struct ui_table *t)
{
        const struct switches_row *rows;
        uint32_t n = switches_processes(profile_switches(p), SWITCHES_BY_SWITCHES, &rows);
        struct switches_row *copy = copy_rows(rows, n);
        char name[128];
        for (uint32_t i = 0; i < n; i++) {
                const struct switches_row *w = &copy[i];
                uint64_t key = KEY_PROCESS | (w->pid == AGG_ALL ? 0xffffffffu : w->pid);
                bool can_open = !w->is_other && w->pid != AGG_ALL;
                bool is_open = can_open && ui_key_set_has(&sv->expanded, key);
                /* sparse: no TID, no CPU (its threads say theirs) */
                uint32_t r = ui_table_add(t, key, 0,
                                          UI_ROW_SPARSE | (can_open ? UI_ROW_EXPANDABLE : 0) |
                                                  (is_open ? UI_ROW_EXPANDED : 0));
                row_cells(t, r, w, switches_wall_ns(profile_switches(p)));
                ui_table_u64(t, r, COL_CPU, 0);
                if (w->is_other)
                        snprintf(name, sizeof(name), "[other threads]");
                else
                        snprintf(name, sizeof(name), "%s (%u thread%s)",
                                 w->process_name[0] ? w->process_name : "?", w->nr_threads,
                                 w->nr_threads == 1 ? "" : "s");
                ui_table_text(t, r, COL_THREAD, name);
                if (is_open) {
                        const struct switches_row *th;
                        uint32_t m = switches_process_threads(profile_switches(p), w->pid,
                                                              SWITCHES_BY_SWITCHES, &th);
                        add_threads(sv, p, t, th, m, 1);
                }
        }
        free(copy);
}

static void add_cpus(struct profile *p, struct ui_table *t)
{
        const struct switches_cpu_row *c;
        uint32_t n = switches_cpus(profile_switches(p), &c);
        char text[128];
        for (uint32_t i = 0; i < n; i++) {
                uint32_t r = ui_table_add(t, KEY_CPU | c[i].cpu, 0, 0);
                ui_table_u64(t, r, COL_SWITCHES, c[i].nr_switches);
                ui_table_u64(t, r, COL_ON_CPU, c[i].busy_ns);
                ui_table_u64(t, r, COL_OFF_CPU, c[i].idle_ns);
                ui_table_u64(t, r, COL_CPU, c[i].cpu);
                ui_table_pct(t, r, COL_CPU_PCT,
                             cpu_pct(c[i].busy_ns, (int64_t)(c[i].busy_ns + c[i].idle_ns)));
                switches_cstates_text(&c[i], text, sizeof(text));
                ui_table_text(t, r, COL_WAIT, text);
                uint64_t all = c[i].busy_ns + c[i].idle_ns;
                snprintf(text, sizeof(text), "CPU %u: busy %.1f%%, idle %.1f%%", c[i].cpu,
                         all ? 100.0 * (double)c[i].busy_ns / (double)all : 0.0,
                         all ? 100.0 * (double)c[i].idle_ns / (double)all : 0.0);
                ui_table_text(t, r, COL_THREAD, text);
        }
}

/* The waits by state and reason, every thread's; top of them at most. */
static void add_waits(struct profile *p, struct ui_table *t, uint32_t top)
{
        const struct switches_wait_row *w;
        uint32_t n = switches_waits(profile_switches(p), &w);
        char text[128];
        for (uint32_t i = 0; i < n && i < top; i++) {
                uint32_t r =
                        ui_table_add(t, KEY_WAIT | (uint64_t)w[i].state << 8 | w[i].wait_reason, 0,
                                     UI_ROW_SPARSE);
                ui_table_u64(t, r, COL_SWITCHES, w[i].nr_waits);
                ui_table_u64(t, r, COL_OFF_CPU, w[i].off_cpu_ns);
                view_wait_text(w[i].state, w[i].wait_reason, text, sizeof(text));
                ui_table_text(t, r, COL_WAIT, text);
                ui_table_text(t, r, COL_THREAD, "all threads");
        }
}

/* ---- the text report's tables: the threads', CPUs' and waits' rows above, and two of its own;
   printed in their columns from the rows' (report_*_from), the durations in ms ---- */

/* "process/thread" */
static void thread_text(const char *process, const char *thread, char *buf, size_t size)
{
        snprintf(buf, size, "%s%s%s", process, thread[0] ? "/" : "", thread);
}

static const uint8_t report_thread_from[] = {COL_SWITCHES, COL_ON_CPU, COL_OFF_CPU, COL_READIED,
                                             COL_TID,      COL_PID,    COL_WAIT,    COL_THREAD};
static const struct ui_column report_thread_cols[] = {
        {"Switches", UI_COL_U64, 8, 0},
        {"On-CPU ms", UI_COL_MS, 11, 0},
        {"Off-CPU ms", UI_COL_MS, 11, 0},
        {"Readied", UI_COL_U64, 8, 0},
        {"TID", UI_COL_U64, 8, 0},
        {"PID", UI_COL_U64, 8, 0},
        {"Top wait (state/reason)", UI_COL_TEXT, 30, 0},
        {"Thread", UI_COL_TEXT, 0, 0},
};
static const struct ui_text_col report_thread_text[] = {
        {1, 0, false}, {0, 0, false}, {0, 0, false}, {0, 0, false},
        {0, 0, false}, {0, 0, false}, {1, 0, false}, {0, 0, false},
};

/* the counters: the thread's name in Thread, its counts in the wait's place */
static const uint8_t report_counter_from[] = {COL_TID, COL_THREAD, COL_WAIT};
static const struct ui_column report_counter_cols[] = {
        {"TID", UI_COL_U64, 8, 0},
        {"Thread", UI_COL_TEXT, 30, 0},
        {"Counts", UI_COL_TEXT, 0, 0},
};
static const struct ui_text_col report_counter_text[] = {
        {1, 0, false},
        {1, 0, false},
        {1, 0, false},
};

static const uint8_t report_cpu_from[] = {COL_CPU,     COL_SWITCHES, COL_ON_CPU,
                                          COL_OFF_CPU, COL_CPU_PCT,  COL_WAIT};
static const struct ui_column report_cpu_cols[] = {
        {"CPU", UI_COL_U64, 4, 0},     {"Switches", UI_COL_U64, 9, 0},
        {"Busy ms", UI_COL_MS, 11, 0}, {"Idle ms", UI_COL_MS, 11, 0},
        {"Busy%", UI_COL_PCT, 8, 0},   {"Idle in (C-state)", UI_COL_TEXT, 0, 0},
};
static const struct ui_text_col report_cpu_text[] = {
        {1, 0, false}, {0, 0, false}, {0, 0, false}, {0, 0, false}, {1, 0, false}, {1, 0, false},
};

/* where threads blocked: the waits in Switches, the thread in Thread, the place in the wait's */
static const uint8_t report_blocker_from[] = {COL_SWITCHES, COL_OFF_CPU, COL_TID, COL_THREAD,
                                              COL_WAIT};
static const struct ui_column report_blocker_cols[] = {
        {"Waits", UI_COL_U64, 8, 0},       {"Off-CPU ms", UI_COL_MS, 11, 0},
        {"TID", UI_COL_U64, 8, 0},         {"Thread", UI_COL_TEXT, 30, 0},
        {"Blocked in", UI_COL_TEXT, 0, 0},
};
static const struct ui_text_col report_blocker_text[] = {
        {1, 0, false}, {0, 0, false}, {0, 0, false}, {1, 0, false}, {1, 0, false},
};

static const uint8_t report_wait_from[] = {COL_SWITCHES, COL_OFF_CPU, COL_WAIT};
static const struct ui_column report_wait_cols[] = {
        {"Waits", UI_COL_U64, 8, 0},
        {"Off-CPU ms", UI_COL_MS, 11, 0},
        {"State/Reason", UI_COL_TEXT, 0, 0},
};
static const struct ui_text_col report_wait_text[] = {
        {1, 0, false},
        {0, 0, false},
        {1, 0, false},
};

/* The PMC counters of the top threads' timeslices, where the switches carried some: only
   when the first thread has counters (the trace's switches carry them or not). */
static bool add_counters(struct switches_view *sv, struct profile *p, struct ui_table *t)
{
        struct switches *sw = profile_switches(p);
        const struct switches_row *rows;
        uint32_t n = switches_threads(sw, SWITCHES_BY_SWITCHES, &rows);
        if (!n || !rows[0].nr_pmc)
                return false;
        char name[80], counts[256];
        for (uint32_t i = 0; i < n && i < sv->report.top; i++) {
                const struct switches_row *w = &rows[i];
                bool has = false;
                for (uint32_t k = 0; k < w->nr_pmc; k++)
                        has = has || w->pmc[k];
                if (!has || w->is_other)
                        continue;
                uint32_t r = ui_table_add(t, (uint64_t)w->tid + 1, 0, 0);
                ui_table_u64(t, r, COL_TID, w->tid);
                thread_text(w->process_name, w->thread_name, name, sizeof(name));
                ui_table_text(t, r, COL_THREAD, name);
                switches_pmc_text(sw, w, counts, sizeof(counts));
                ui_table_text(t, r, COL_WAIT, counts);
        }
        return true;
}

/* Where threads blocked, every thread's, from the switches' stacks. */
static void add_blockers(struct switches_view *sv, struct profile *p, struct ui_table *t)
{
        const struct switches_blocker_row *bl;
        uint32_t n = switches_blockers(profile_switches(p), AGG_ALL, &bl);
        char where[320], name[80];
        for (uint32_t i = 0; i < n && i < sv->report.top; i++) {
                uint32_t r = ui_table_add(t, i + 1, 0, 0);
                ui_table_u64(t, r, COL_SWITCHES, bl[i].nr_waits);
                ui_table_u64(t, r, COL_OFF_CPU, bl[i].off_cpu_ns);
                ui_table_u64(t, r, COL_TID, bl[i].tid);
                thread_text(bl[i].process_name, bl[i].thread_name, name, sizeof(name));
                ui_table_text(t, r, COL_THREAD, name);
                profile_loc_text(p, bl[i].where, where, sizeof(where));
                ui_table_text(t, r, COL_WAIT, where);
        }
}

/* One of the report's tables, its title and its columns. */
static void report_build(struct switches_view *sv, struct profile *p, struct ui_table *t)
{
        struct view_report *rp = &sv->report;
        t->cols = group_cols[GROUP_THREAD]; /* the rows' kinds; printed in the report's */
        rp->has_table = true;
        const char *title = "";
        switch (rp->table) {
        case SWITCHES_REPORT_THREADS: {
                const struct switches_row *rows;
                uint32_t n = switches_threads(profile_switches(p), SWITCHES_BY_SWITCHES, &rows);
                add_threads(sv, p, t, rows, n < rp->top ? n : rp->top, 0);
                rp->has_section = n > 0;
                title = "Context switches (threads, by switches)";
                rp->print_from = report_thread_from;
                rp->print_cols = report_thread_cols;
                rp->print_text = report_thread_text;
                rp->nr_print = sizeof(report_thread_from);
                break;
        }
        case SWITCHES_REPORT_COUNTERS:
                rp->has_section = add_counters(sv, p, t);
                title = "Counters per thread (the PMC counts of its timeslices, from the CSwitch "
                        "events)";
                rp->print_from = report_counter_from;
                rp->print_cols = report_counter_cols;
                rp->print_text = report_counter_text;
                rp->nr_print = sizeof(report_counter_from);
                break;
        case SWITCHES_REPORT_CPUS:
                add_cpus(p, t);
                rp->has_section = t->nr_rows > 0;
                title = "CPUs (time with a thread on them, idle time)";
                rp->print_from = report_cpu_from;
                rp->print_cols = report_cpu_cols;
                rp->print_text = report_cpu_text;
                rp->nr_print = sizeof(report_cpu_from);
                break;
        case SWITCHES_REPORT_BLOCKERS:
                add_blockers(sv, p, t);
                rp->has_section = t->nr_rows > 0;
                title = "Where threads blocked (off-CPU time, from the switches' stacks)";
                rp->print_from = report_blocker_from;
                rp->print_cols = report_blocker_cols;
                rp->print_text = report_blocker_text;
                rp->nr_print = sizeof(report_blocker_from);
                break;
        case SWITCHES_REPORT_WAITS:
                add_waits(p, t, rp->top);
                rp->has_section = t->nr_rows > 0;
                title = "Waits (state/reason, by off-CPU time)";
                rp->print_from = report_wait_from;
                rp->print_cols = report_wait_cols;
                rp->print_text = report_wait_text;
                rp->nr_print = sizeof(report_wait_from);
                break;
        default: rp->has_section = false; break;
        }
        snprintf(rp->title, sizeof(rp->title), "%s", title);
}

/* Why there is no row: a live session's CSWITCH is off, or none came yet; a recording has
   none (it has no session to change). */
static const char *no_switches_text(bool is_live, bool is_stopped)
{
        if (!is_live)
                return "No context switches: the trace has no CSwitch events (it was recorded "
                       "without CSWITCH).";
        if (is_stopped)
                return "No context switches: CSWITCH is off (turn it on in the Session view).";
        return "No context switches yet.";
}

static void build(struct ui_view *v, const struct ui_build_ctx *m, struct ui_table *t)
{
        struct switches_view *sv = of(v);
        struct profile *p = m->profile;
        /* the rows count up to the latest event (the loop's profile_catch_up), as CPU%'s wall
           time does: a thread on a CPU since the last refresh has its time there */
        ui_table_clear(t);
        if (sv->report.table) {
                report_build(sv, p, t);
                return;
        }
        v->cols = t->cols = group_cols[sv->group];
        /* first: the counts from before CSWITCH went off are no more */
        bool is_stopped = switches_is_stopped(profile_switches(p));
        if (is_stopped)
                ui_table_text(t, ui_table_add(t, 1, 0, UI_ROW_GREYED | UI_ROW_SPARSE), COL_THREAD,
                              m->is_live ? "CSWITCH is off: nothing counted since it went off "
                                           "(turn it on in the Session view)."
                                         : "CSWITCH went off while the trace was recorded: no "
                                           "switches after that.");
        switch (sv->group) {
        case GROUP_THREAD: {
                const struct switches_row *rows;
                uint32_t n = switches_threads(profile_switches(p), SWITCHES_BY_SWITCHES, &rows);
                add_threads(sv, p, t, rows, n, 0);
                break;
        }
        case GROUP_PROCESS: add_processes(sv, p, t); break;
        case GROUP_CPU: add_cpus(p, t); break;
        case GROUP_WAIT: add_waits(p, t, UINT32_MAX); break;
        default: break;
        }
        if (t->nr_rows == (is_stopped ? 1u : 0u)) { /* no row: why */
                if (!is_stopped)
                        ui_table_add(t, 1, 0, UI_ROW_GREYED | UI_ROW_SPARSE);
                ui_table_text(t, 0, COL_THREAD, no_switches_text(m->is_live, is_stopped));
        }
}

/* Threads and processes open; CPUs and waits do not. */
static bool has_tree(const struct switches_view *sv)
{
        return sv->group == GROUP_THREAD || sv->group == GROUP_PROCESS;
}

static unsigned put(struct ui_key_ctx *c, uint64_t key, int how)
{
        struct switches_view *sv = of(c->view);
        if (!has_tree(sv))
                return 0;
        bool is_open = how < 0 ? !ui_key_set_has(&sv->expanded, key) : how;
        ui_key_set_put(&sv->expanded, key, is_open);
        return UI_REBUILD | UI_REDRAW | (is_open && key == c->row_key ? UI_REVEAL : 0);
}

static unsigned act_toggle(struct ui_key_ctx *c)
{
        return put(c, c->row_key, -1);
}

static unsigned act_expand(struct ui_key_ctx *c)
{
        return put(c, c->row_key, 1);
}

static unsigned act_collapse(struct ui_key_ctx *c)
{
        return put(c, c->row_key, 0);
}

/* Every row shown opens: the rows on the screen. Every row of the table opened every thread of
   a machine running thousands: each refresh then built all their details, and a loaded machine
   answered the next key minutes later. */
static unsigned act_expand_all(struct ui_key_ctx *c)
{
        unsigned r = 0;
        uint32_t n = c->shown ? c->nr_shown : c->table->nr_rows;
        for (uint32_t i = 0; i < n; i++) {
                uint32_t row = c->shown ? c->shown[i] : i;
                if (c->table->flags[row] & UI_ROW_EXPANDABLE)
                        r |= put(c, c->table->keys[row], 1);
        }
        return r;
}

static unsigned act_group(struct ui_key_ctx *c)
{
        struct switches_view *sv = of(c->view);
        sv->group = (sv->group + 1) % NR_GROUPS;
        snprintf(c->st->status, sizeof(c->st->status), "context switches %s",
                 group_names[sv->group]);
        return UI_REBUILD | UI_REDRAW | UI_TO_TOP;
}

/* A row's process: its PID column (threads, processes; 0 for CPUs and waits). */
static uint32_t row_pid(const struct ui_view *v, const struct ui_table *t, uint64_t row_key)
{
        (void)v;
        for (uint32_t r = 0; r < t->nr_rows; r++)
                if (t->keys[r] == row_key && !(row_key & KEY_DETAIL))
                        return (uint32_t)t->cells[(size_t)r * t->nr_cols + COL_PID].u;
        return 0;
}

static const struct ui_key keys[] = {
        {'\n', "Enter", act_toggle,
         "open or close a thread (its waits, where it blocked, who readied it, its CPUs) or a "
         "process (its threads)",
         NULL},
        {'+', "+ - *", act_expand, "open / close / open every row shown", NULL},
        {'-', NULL, act_collapse, NULL, NULL},
        {'*', NULL, act_expand_all, NULL, NULL},
        {'g', "g", act_group, "group: by thread, by process, by CPU, by wait reason", NULL},
};

struct view_report *switches_view_report(struct ui_view *v)
{
        return &of(v)->report;
}

static void view_free(struct ui_view *v)
{
        struct switches_view *sv = of(v);
        ui_key_set_fini(&sv->expanded);
        free(sv);
}

struct ui_view *switches_view_new(void)
{
        struct switches_view *sv = xcalloc(1, sizeof(*sv));
        sv->view = (struct ui_view){"Context switches",
                                    group_cols[GROUP_THREAD],
                                    NR_COLS,
                                    keys,
                                    sizeof(keys) / sizeof(keys[0]),
                                    build,
                                    row_pid,
                                    view_free};
        return &sv->view;
}
