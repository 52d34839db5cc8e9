/* SPDX-License-Identifier: MIT */
/* text_switches.c: owns the text report's tables of context switches: the threads by switches,
   their PMC counters, the CPUs, where threads blocked and the waits by state and reason. */
#include <stdio.h>

#include "model/profile.h"
#include "text_out.h"
#include "ui/table.h"
#include "view_text.h"

/* "process/thread" */
static void thread_text(const char *process, const char *thread, char *buf, size_t size)
{
        snprintf(buf, size, "%s%s%s", process, thread[0] ? "/" : "", thread);
}

enum { T_SWITCHES, T_ON, T_OFF, T_READIED, T_TID, T_PID, T_WAIT, T_THREAD, T_NR_COLS };

static const struct ui_column thread_cols[T_NR_COLS] = {
        {"Switches", UI_COL_U64, 8, 0},
        {"On-CPU ms", UI_COL_MS, 11, 0},
        {"Off-CPU ms", UI_COL_MS, 11, 0},
        {"Readied", UI_COL_U64, 8, 0},
        {"TID", UI_COL_U64, 8, 0},
        {"PID", UI_COL_U64, 8, 0},
        {"Top wait (state/reason)", UI_COL_TEXT, 30, 0},
        {"Thread", UI_COL_TEXT, 0, 0},
};

static const struct ui_text_col thread_cols_text[T_NR_COLS] = {
        {1, 0, false}, {0, 0, false}, {0, 0, false}, {0, 0, false},
        {0, 0, false}, {0, 0, false}, {1, 0, false}, {0, 0, false},
};

enum { P_TID, P_THREAD, P_COUNTS, P_NR_COLS };

static const struct ui_column counter_cols[P_NR_COLS] = {
        {"TID", UI_COL_U64, 8, 0},
        {"Thread", UI_COL_TEXT, 30, 0},
        {"Counts", UI_COL_TEXT, 0, 0},
};

static const struct ui_text_col counter_cols_text[P_NR_COLS] = {
        {1, 0, false},
        {1, 0, false},
        {1, 0, false},
};

enum { C_CPU, C_SWITCHES, C_BUSY, C_IDLE, C_BUSY_PCT, C_CSTATES, C_NR_COLS };

static const struct ui_column cpu_cols[C_NR_COLS] = {
        {"CPU", UI_COL_U64, 4, 0},     {"Switches", UI_COL_U64, 9, 0},
        {"Busy ms", UI_COL_MS, 11, 0}, {"Idle ms", UI_COL_MS, 11, 0},
        {"Busy%", UI_COL_PCT, 8, 0},   {"Idle in (C-state)", UI_COL_TEXT, 0, 0},
};

static const struct ui_text_col cpu_cols_text[C_NR_COLS] = {
        {1, 0, false}, {0, 0, false}, {0, 0, false}, {0, 0, false}, {1, 0, false}, {1, 0, false},
};

enum { K_WAITS, K_OFF, K_TID, K_THREAD, K_WHERE, K_NR_COLS };

static const struct ui_column blocker_cols[K_NR_COLS] = {
        {"Waits", UI_COL_U64, 8, 0},       {"Off-CPU ms", UI_COL_MS, 11, 0},
        {"TID", UI_COL_U64, 8, 0},         {"Thread", UI_COL_TEXT, 30, 0},
        {"Blocked in", UI_COL_TEXT, 0, 0},
};

static const struct ui_text_col blocker_cols_text[K_NR_COLS] = {
        {1, 0, false}, {0, 0, false}, {0, 0, false}, {1, 0, false}, {1, 0, false},
};

enum { W_WAITS, W_OFF, W_REASON, W_NR_COLS };

static const struct ui_column wait_cols[W_NR_COLS] = {
        {"Waits", UI_COL_U64, 8, 0},
        {"Off-CPU ms", UI_COL_MS, 11, 0},
        {"State/Reason", UI_COL_TEXT, 0, 0},
};

static const struct ui_text_col wait_cols_text[W_NR_COLS] = {
        {1, 0, false},
        {0, 0, false},
        {1, 0, false},
};

/* the PMC counters of the threads' timeslices, when the switches carried some */
static void print_counters(struct text_out *o, struct switches *sw, const struct switches_row *rows,
                           uint32_t n)
{
        text_out_puts(o, "\nCounters per thread (the PMC counts of its timeslices, from the "
                         "CSwitch events)\n");
        struct ui_table t;
        ui_table_init(&t, counter_cols, P_NR_COLS);
        t.text_cols = counter_cols_text;
        char name[80], counts[256];
        for (uint32_t i = 0; i < n && i < o->top; i++) {
                const struct switches_row *w = &rows[i];
                bool has = false;
                for (uint32_t k = 0; k < w->nr_pmc; k++)
                        has = has || w->pmc[k];
                if (!has || w->is_other)
                        continue;
                uint32_t r = ui_table_add(&t, 0, 0, 0);
                ui_table_u64(&t, r, P_TID, w->tid);
                thread_text(w->process_name, w->thread_name, name, sizeof(name));
                ui_table_text(&t, r, P_THREAD, name);
                switches_pmc_text(sw, w, counts, sizeof(counts));
                ui_table_text(&t, r, P_COUNTS, counts);
        }
        text_out_table(o, &t);
}

static void print_cpus(struct text_out *o, struct switches *sw)
{
        const struct switches_cpu_row *cpus;
        uint32_t nc = switches_cpus(sw, &cpus);
        if (!nc)
                return;
        text_out_puts(o, "\nCPUs (time with a thread on them, idle time)\n");
        struct ui_table t;
        ui_table_init(&t, cpu_cols, C_NR_COLS);
        t.text_cols = cpu_cols_text;
        char cstates[96];
        for (uint32_t i = 0; i < nc; i++) {
                uint64_t all = cpus[i].busy_ns + cpus[i].idle_ns;
                uint32_t r = ui_table_add(&t, 0, 0, 0);
                ui_table_u64(&t, r, C_CPU, cpus[i].cpu);
                ui_table_u64(&t, r, C_SWITCHES, cpus[i].nr_switches);
                ui_table_u64(&t, r, C_BUSY, cpus[i].busy_ns);
                ui_table_u64(&t, r, C_IDLE, cpus[i].idle_ns);
                ui_table_pct(&t, r, C_BUSY_PCT,
                             all ? 100.0 * (double)cpus[i].busy_ns / (double)all : 0.0);
                switches_cstates_text(&cpus[i], cstates, sizeof(cstates));
                ui_table_text(&t, r, C_CSTATES, cstates);
        }
        text_out_table(o, &t);
}

static void print_blockers(struct text_out *o, struct profile *p, struct switches *sw)
{
        const struct switches_blocker_row *bl;
        uint32_t nb = switches_blockers(sw, AGG_ALL, &bl);
        if (!nb)
                return;
        text_out_puts(o, "\nWhere threads blocked (off-CPU time, from the switches' stacks)\n");
        struct ui_table t;
        ui_table_init(&t, blocker_cols, K_NR_COLS);
        t.text_cols = blocker_cols_text;
        char where[320], name[80];
        for (uint32_t i = 0; i < nb && i < o->top; i++) {
                uint32_t r = ui_table_add(&t, 0, 0, 0);
                ui_table_u64(&t, r, K_WAITS, bl[i].nr_waits);
                ui_table_u64(&t, r, K_OFF, bl[i].off_cpu_ns);
                ui_table_u64(&t, r, K_TID, bl[i].tid);
                thread_text(bl[i].process_name, bl[i].thread_name, name, sizeof(name));
                ui_table_text(&t, r, K_THREAD, name);
                profile_loc_text(p, bl[i].where, where, sizeof(where));
                ui_table_text(&t, r, K_WHERE, where);
        }
        text_out_table(o, &t);
}

static void print_waits(struct text_out *o, struct switches *sw)
{
        const struct switches_wait_row *waits;
        uint32_t m = switches_waits(sw, &waits);
        if (!m)
                return;
        text_out_puts(o, "\nWaits (state/reason, by off-CPU time)\n");
        struct ui_table t;
        ui_table_init(&t, wait_cols, W_NR_COLS);
        t.text_cols = wait_cols_text;
        char text[128];
        for (uint32_t i = 0; i < m && i < o->top; i++) {
                uint32_t r = ui_table_add(&t, 0, 0, 0);
                ui_table_u64(&t, r, W_WAITS, waits[i].nr_waits);
                ui_table_u64(&t, r, W_OFF, waits[i].off_cpu_ns);
                view_wait_text(waits[i].state, waits[i].wait_reason, text, sizeof(text));
                ui_table_text(&t, r, W_REASON, text);
        }
        text_out_table(o, &t);
}

void text_switches_print(struct text_out *o, struct profile *p)
{
        struct switches *sw = profile_switches(p);
        const struct switches_row *rows;
        uint32_t n = switches_threads(sw, SWITCHES_BY_SWITCHES, &rows);
        if (!n)
                return;
        text_out_puts(o, "\nContext switches (threads, by switches)\n");
        struct ui_table t;
        ui_table_init(&t, thread_cols, T_NR_COLS);
        t.text_cols = thread_cols_text;
        char wait[128], name[80];
        for (uint32_t i = 0; i < n && i < o->top; i++) {
                const struct switches_row *w = &rows[i];
                uint32_t r = ui_table_add(&t, 0, 0, 0);
                ui_table_u64(&t, r, T_SWITCHES, w->nr_switches);
                ui_table_u64(&t, r, T_ON, w->on_cpu_ns);
                ui_table_u64(&t, r, T_OFF, w->off_cpu_ns);
                ui_table_u64(&t, r, T_READIED, w->nr_readied);
                ui_table_u64(&t, r, T_TID, w->is_other ? 0 : w->tid);
                ui_table_u64(&t, r, T_PID, w->pid == AGG_ALL ? 0 : w->pid);
                wait[0] = 0;
                if (w->nr_waits)
                        view_wait_text(w->waits[0].state, w->waits[0].wait_reason, wait,
                                       sizeof(wait));
                ui_table_text(&t, r, T_WAIT, wait);
                if (w->is_other)
                        snprintf(name, sizeof(name), "[other threads]");
                else
                        thread_text(w->process_name, w->thread_name, name, sizeof(name));
                ui_table_text(&t, r, T_THREAD, name);
        }
        text_out_table(o, &t);
        /* the rows are the model's until its next query: the counters first */
        if (rows[0].nr_pmc)
                print_counters(o, sw, rows, n);
        print_cpus(o, sw);
        print_blockers(o, p, sw);
        print_waits(o, sw);
}
