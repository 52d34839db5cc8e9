/* SPDX-License-Identifier: MIT */
/* switches_rows.c: owns the context switches' row queries: threads, processes, waits,
   readiers, blockers, CPUs, C-states and PMC names. */
#include "model_util.h"
#include "switches_impl.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- rows ---- */

static int cmp_u64(uint64_t x, uint64_t y)
{
        return x < y ? -1 : x > y;
}

static int row_by_id(const void *a, const void *b)
{
        const struct switches_row *x = a, *y = b;
        if (x->is_other != y->is_other)
                return x->is_other ? 1 : -1;
        if (x->pid != y->pid)
                return cmp_u64(x->pid, y->pid);
        return cmp_u64(x->tid, y->tid);
}

#define ROW_BY(field)                                                                              \
        static int row_by_##field(const void *a, const void *b)                                    \
        {                                                                                          \
                const struct switches_row *x = a, *y = b;                                          \
                if (x->field != y->field)                                                          \
                        return x->field > y->field ? -1 : 1;                                       \
                return row_by_id(a, b);                                                            \
        }
ROW_BY(nr_switches)
ROW_BY(on_cpu_ns)
ROW_BY(off_cpu_ns)
ROW_BY(nr_readied)

static int row_by_wait(const void *a, const void *b)
{
        const struct switches_row *x = a, *y = b;
        if (!x->nr_waits != !y->nr_waits)
                return x->nr_waits ? -1 : 1;
        if (x->nr_waits) {
                const struct switches_wait *u = &x->waits[0], *v = &y->waits[0];
                if (u->state != v->state)
                        return cmp_u64(u->state, v->state);
                if (u->wait_reason != v->wait_reason)
                        return cmp_u64(u->wait_reason, v->wait_reason);
        }
        return row_by_off_cpu_ns(a, b);
}

static int (*const row_cmp[])(const void *, const void *) = {
        [SWITCHES_BY_SWITCHES] = row_by_nr_switches, [SWITCHES_BY_ON_CPU] = row_by_on_cpu_ns,
        [SWITCHES_BY_OFF_CPU] = row_by_off_cpu_ns,   [SWITCHES_BY_READIED] = row_by_nr_readied,
        [SWITCHES_BY_WAIT_REASON] = row_by_wait,     [SWITCHES_BY_ID] = row_by_id,
};

static void sort_rows(struct switches_row *rows, uint32_t n, enum switches_sort sort)
{
        unsigned k = (unsigned)sort;
        qsort(rows, n, sizeof(*rows), row_cmp[k < sizeof(row_cmp) / sizeof(row_cmp[0]) ? k : 0]);
}

/* The order of waits: most off-CPU time first, then most waits, then by state and reason. */
static int wait_order(uint64_t ns_x, uint64_t nr_x, uint8_t state_x, uint8_t reason_x,
                      uint64_t ns_y, uint64_t nr_y, uint8_t state_y, uint8_t reason_y)
{
        if (ns_x != ns_y)
                return ns_x > ns_y ? -1 : 1;
        if (nr_x != nr_y)
                return nr_x > nr_y ? -1 : 1;
        return cmp_u64((uint64_t)state_x << 8 | reason_x, (uint64_t)state_y << 8 | reason_y);
}

static int wait_by_ns(const void *a, const void *b)
{
        const struct switches_wait *x = a, *y = b;
        return wait_order(x->off_cpu_ns, x->nr_waits, x->state, x->wait_reason, y->off_cpu_ns,
                          y->nr_waits, y->state, y->wait_reason);
}

static const char *process_name(const struct switches *sw, uint32_t pid)
{
        const struct process *p = switches_process_find(sw, pid);
        return p ? p->name.name : "";
}

const char *switches_process_name(const struct switches *sw, uint32_t pid)
{
        if (pid == AGG_ALL)
                return SWITCHES_EXITED_NAME;
        const char *name = process_name(sw, pid); /* pid 0: Idle, whatever it was named */
        return pid || !*name ? name : SWITCHES_IDLE_NAME;
}

static void row_names(const struct switches *sw, const struct thread *t, char *process,
                      char *thread);

void switches_thread_names(const struct switches *sw, uint32_t tid, char *process, char *thread)
{
        /* switches_thread_find only looks (it takes the table's non-const handle) */
        row_names(sw, switches_thread_find((struct switches *)sw, tid), process, thread);
        if (!tid || tid == AGG_ALL) {
                switches_copy_name(process, tid ? SWITCHES_EXITED_NAME : SWITCHES_IDLE_NAME);
                thread[0] = '\0';
        }
}

const char *switches_comm(const struct switches *sw, uint32_t pid, uint32_t tid)
{
        struct switches *w = (struct switches *)sw; /* switches_thread_find only looks */
        const struct thread *t = tid && tid != AGG_ALL ? switches_thread_find(w, tid) : NULL;
        const struct process *p = t ? switches_thread_process(sw, t) : NULL;
        const char *pn = p && p->name.name[0] ? p->name.name : switches_process_name(sw, pid);
        if (!t && tid != pid)
                return ""; /* a thread no event told of: perf knows no comm of it either */
        if (!t || tid == pid || !t->name.name[0])
                return pn;
        /* a Linux process (a thread of its own id leads it) names its threads by their comms;
           a Windows process (no thread has its id: a thread's description is no comm) by its
           process name */
        const struct thread *leader = pid ? switches_thread_find(w, pid) : NULL;
        if (!leader || !leader->has_pid || switches_thread_pid(leader) != pid)
                return pn;
        return t->name.name;
}

/* The names of thread t (NULL: none) into a row's: its process's, and its own where it differs
   from that (a process's main thread has its name; so does a forked child until it renames). */
static void row_names(const struct switches *sw, const struct thread *t, char *process,
                      char *thread)
{
        process[0] = thread[0] = '\0';
        if (!t)
                return;
        const struct process *p = switches_thread_process(sw, t);
        if (p)
                switches_copy_name(process, p->name.name);
        if (!process[0] || strcmp(process, t->name.name) != 0)
                switches_copy_name(thread, t->name.name);
}

static void thread_row(struct switches *sw, const struct thread *t, struct switches_row *r)
{
        memset(r, 0, sizeof(*r));
        r->tid = t->tid;
        r->pid = switches_thread_pid(t);
        row_names(sw, t, r->process_name, r->thread_name);
        r->nr_switches = t->nr_switches;
        r->on_cpu_ns = t->on_cpu_ns;
        r->off_cpu_ns = t->off_cpu_ns;
        r->nr_readied = t->nr_readied;
        r->nr_threads = 1;
        r->last_cpu = t->last_cpu_1 ? t->last_cpu_1 - 1 : AGG_ALL;
        r->nr_waits = t->nr_waits;
        for (uint32_t i = 0; i < t->nr_waits; i++)
                r->waits[i] = (struct switches_wait){t->waits[i].state, t->waits[i].reason,
                                                     t->waits[i].nr, t->waits[i].ns};
        qsort(r->waits, r->nr_waits, sizeof(r->waits[0]), wait_by_ns);
        r->other_wait_ns = t->other_wait_ns;
        r->nr_pmc = sw->nr_pmc;
        memcpy(r->pmc, t->pmc, sizeof(r->pmc));
}

/* The thread rows (of pid, or all with AGG_ALL) into sw->rows, unsorted; the "other" row with
   AGG_ALL. */
static uint32_t build_thread_rows(struct switches *sw, uint32_t pid)
{
        sw->rows = switches_reserve(sw->rows, &sw->cap_rows, agg_table_nr(sw->threads) + 1,
                                    sizeof(*sw->rows));
        uint32_t n = 0;
        for (uint32_t i = 0; i < agg_table_capacity(sw->threads); i++) {
                const struct thread *t = agg_table_slot(sw->threads, i);
                if (!t || !switches_thread_has_counts(t) ||
                    (pid != AGG_ALL && switches_thread_pid(t) != pid))
                        continue;
                thread_row(sw, t, &sw->rows[n++]);
        }
        if (pid == AGG_ALL && switches_thread_has_counts(&sw->other)) {
                struct switches_row *r = &sw->rows[n++];
                thread_row(sw, &sw->other, r);
                r->tid = r->pid = AGG_ALL;
                r->nr_threads = 0;
                r->is_other = true;
        }
        return n;
}

uint32_t switches_process_threads(struct switches *sw, uint32_t pid, enum switches_sort sort,
                                  const struct switches_row **rows)
{
        uint32_t n = build_thread_rows(sw, pid);
        sort_rows(sw->rows, n, sort);
        *rows = sw->rows;
        return n;
}

uint32_t switches_threads(struct switches *sw, enum switches_sort sort,
                          const struct switches_row **rows)
{
        return switches_process_threads(sw, AGG_ALL, sort, rows);
}

/* Adds the thread rows [from, to) of one process into a process row. */
static void process_row(struct switches *sw, const struct switches_row *from,
                        const struct switches_row *to, struct switches_row *r)
{
        struct switches_wait acc[NR_STATES * SWITCHES_MAX_WAITS * 4];
        uint32_t nr_acc = 0;
        memset(r, 0, sizeof(*r));
        r->tid = AGG_ALL;
        r->pid = from->pid;
        r->is_other = from->is_other;
        r->last_cpu = AGG_ALL;
        if (from->pid != AGG_ALL)
                switches_copy_name(r->process_name, process_name(sw, from->pid));
        for (const struct switches_row *t = from; t < to; t++) {
                r->nr_switches += t->nr_switches;
                r->on_cpu_ns += t->on_cpu_ns;
                r->off_cpu_ns += t->off_cpu_ns;
                r->nr_readied += t->nr_readied;
                r->nr_threads += t->nr_threads;
                r->other_wait_ns += t->other_wait_ns;
                r->nr_pmc = t->nr_pmc;
                for (uint32_t i = 0; i < KEV_MAX_PMC; i++)
                        r->pmc[i] += t->pmc[i];
                for (uint32_t i = 0; i < t->nr_waits; i++) {
                        const struct switches_wait *w = &t->waits[i];
                        uint32_t j = 0;
                        while (j < nr_acc &&
                               (acc[j].state != w->state || acc[j].wait_reason != w->wait_reason))
                                j++;
                        if (j == nr_acc) {
                                if (nr_acc == sizeof(acc) / sizeof(acc[0])) {
                                        r->other_wait_ns += w->off_cpu_ns;
                                        continue;
                                }
                                acc[nr_acc++] =
                                        (struct switches_wait){w->state, w->wait_reason, 0, 0};
                        }
                        acc[j].nr_waits += w->nr_waits;
                        acc[j].off_cpu_ns += w->off_cpu_ns;
                }
        }
        qsort(acc, nr_acc, sizeof(acc[0]), wait_by_ns);
        for (uint32_t j = 0; j < nr_acc; j++) {
                if (j < SWITCHES_MAX_WAITS)
                        r->waits[r->nr_waits++] = acc[j];
                else
                        r->other_wait_ns += acc[j].off_cpu_ns;
        }
}

uint32_t switches_processes(struct switches *sw, enum switches_sort sort,
                            const struct switches_row **rows)
{
        uint32_t n = build_thread_rows(sw, AGG_ALL);
        qsort(sw->rows, n, sizeof(*sw->rows), row_by_id); /* threads of a process together */
        sw->prows = switches_reserve(sw->prows, &sw->cap_prows, n + 1, sizeof(*sw->prows));
        uint32_t o = 0;
        for (uint32_t i = 0; i < n;) {
                uint32_t j = i + 1;
                while (j < n && sw->rows[j].pid == sw->rows[i].pid &&
                       sw->rows[j].is_other == sw->rows[i].is_other)
                        j++;
                process_row(sw, &sw->rows[i], &sw->rows[j], &sw->prows[o++]);
                i = j;
        }
        sort_rows(sw->prows, o, sort);
        *rows = sw->prows;
        return o;
}

static int wait_row_cmp(const void *a, const void *b)
{
        const struct switches_wait_row *x = a, *y = b;
        return wait_order(x->off_cpu_ns, x->nr_waits, x->state, x->wait_reason, y->off_cpu_ns,
                          y->nr_waits, y->state, y->wait_reason);
}

uint32_t switches_waits(struct switches *sw, const struct switches_wait_row **rows)
{
        sw->wrows = switches_reserve(sw->wrows, &sw->cap_wrows, NR_STATES * NR_REASONS,
                                     sizeof(*sw->wrows));
        uint32_t n = 0;
        for (uint32_t s = 0; s < NR_STATES; s++)
                for (uint32_t r = 0; r < NR_REASONS; r++)
                        if (sw->waits[s][r].nr || sw->waits[s][r].ns)
                                sw->wrows[n++] = (struct switches_wait_row){(uint8_t)s, (uint8_t)r,
                                                                            sw->waits[s][r].nr,
                                                                            sw->waits[s][r].ns};
        qsort(sw->wrows, n, sizeof(*sw->wrows), wait_row_cmp);
        *rows = sw->wrows;
        return n;
}

/* A place named: where a stack's frames lead once the machinery (is_machinery) is passed. */
struct site {
        struct sym_loc where;
        uint32_t function;
        uint64_t offset;
        enum sym_state state;
};

/* The first of nr frame tokens (placed in pid) past the machinery; a frame not named
   ends the walk (it is no known machinery); the last one if all are in it. */
static struct site choose_site(struct switches *sw, uint32_t pid, uint32_t nr,
                               const uint64_t *frames, bool (*is_machinery)(const char *name))
{
        struct site r = {{0, 0}, 0, 0, SYM_NO_MODULE};
        for (uint32_t k = 0; k < nr; k++) {
                struct sym_loc loc = switches_token_loc(sw, pid, frames[k]);
                struct sym_frame f;
                sym_resolve(sw->store, loc, &f);
                r.where = loc;
                r.state = f.state;
                r.function = f.state == SYM_RESOLVED ? f.function : 0;
                r.offset = f.state == SYM_RESOLVED ? f.offset : loc.rel;
                if (!r.function || !is_machinery(sym_name(sw->store, r.function)))
                        break;
        }
        return r;
}

/* Rows that chose the same place (their stacks differ deeper down) become one. */
static int readier_row_by_key(const void *a, const void *b)
{
        const struct switches_readier_row *x = a, *y = b;
        if (x->tid != y->tid)
                return cmp_u64(x->tid, y->tid);
        if (x->readying_tid != y->readying_tid)
                return cmp_u64(x->readying_tid, y->readying_tid);
        if (x->readying_pid != y->readying_pid)
                return cmp_u64(x->readying_pid, y->readying_pid);
        if (x->has_where != y->has_where)
                return x->has_where ? 1 : -1;
        if (x->where.module != y->where.module)
                return cmp_u64(x->where.module, y->where.module);
        return cmp_u64(x->where.rel, y->where.rel);
}

static uint32_t merge_readier_rows(struct switches_readier_row *rows, uint32_t n)
{
        if (n < 2)
                return n;
        qsort(rows, n, sizeof(*rows), readier_row_by_key);
        uint32_t m = 1;
        for (uint32_t i = 1; i < n; i++) {
                if (readier_row_by_key(&rows[m - 1], &rows[i]) == 0)
                        rows[m - 1].count += rows[i].count;
                else
                        rows[m++] = rows[i];
        }
        return m;
}

static int readier_row_cmp(const void *a, const void *b)
{
        const struct switches_readier_row *x = a, *y = b;
        if (x->count != y->count)
                return x->count > y->count ? -1 : 1;
        if (x->is_other != y->is_other)
                return x->is_other ? 1 : -1;
        if (x->tid != y->tid)
                return cmp_u64(x->tid, y->tid);
        if (x->readying_tid != y->readying_tid)
                return cmp_u64(x->readying_tid, y->readying_tid);
        if (x->where.module != y->where.module)
                return cmp_u64(x->where.module, y->where.module);
        return cmp_u64(x->where.rel, y->where.rel);
}

uint32_t switches_readiers(struct switches *sw, uint32_t tid,
                           const struct switches_readier_row **rows)
{
        switches_pending_flush_all(sw);
        sw->rrows = switches_reserve(sw->rrows, &sw->cap_rrows, agg_table_nr(sw->readiers) + 1,
                                     sizeof(*sw->rrows));
        uint32_t n = 0, first = 0, nr_slots = agg_table_capacity(sw->readiers);
        const uint32_t *slots = NULL;
        if (tid != AGG_ALL) { /* one thread's: its slots, not a scan of every thread's */
                nr_slots = agg_index_find(&sw->readier_index, sw->readiers,
                                          offsetof(struct readier, tid), tid, &first);
                slots = nr_slots ? sw->readier_index.slots + first : NULL;
        }
        for (uint32_t k = 0; k < nr_slots; k++) {
                const struct readier *e = agg_table_slot(sw->readiers, slots ? slots[k] : k);
                if (!e || !e->count || (tid != AGG_ALL && e->tid != tid))
                        continue;
                struct switches_readier_row *r = &sw->rrows[n++];
                memset(r, 0, sizeof(*r));
                r->tid = e->tid;
                r->readying_tid = e->readying_tid;
                r->readying_pid = e->readying_pid;
                /* tid 0 readies from interrupts on an idle CPU: the Idle process, as WPA names
                   it */
                const struct thread *t = switches_thread_find(sw, e->readying_tid);
                row_names(sw, t, r->readying_process_name, r->readying_thread_name);
                if (!r->readying_process_name[0]) {
                        switches_copy_name(r->readying_process_name,
                                           e->readying_tid == 0 ? SWITCHES_IDLE_NAME
                                           : e->readying_tid == AGG_ALL
                                                   ? "[exited threads]"
                                                   : process_name(sw, e->readying_pid));
                        if (strcmp(r->readying_process_name, r->readying_thread_name) == 0)
                                r->readying_thread_name[0] = '\0';
                }
                r->count = e->count;
                r->state = SYM_NO_MODULE;
                if (!e->nr_where)
                        continue;
                r->has_where = true;
                struct site site = choose_site(sw, e->readying_pid, e->nr_where, e->where,
                                               switches_is_wakeup_function);
                r->where = site.where;
                r->state = site.state;
                r->function = site.function;
                r->offset = site.offset;
        }
        n = merge_readier_rows(sw->rrows, n);
        if (tid == AGG_ALL && sw->nr_other_readies) {
                struct switches_readier_row *r = &sw->rrows[n++];
                memset(r, 0, sizeof(*r));
                r->tid = r->readying_tid = r->readying_pid = AGG_ALL;
                r->state = SYM_NO_MODULE;
                r->count = sw->nr_other_readies;
                r->is_other = true;
        }
        qsort(sw->rrows, n, sizeof(*sw->rrows), readier_row_cmp);
        *rows = sw->rrows;
        return n;
}

static int blocker_row_by_key(const void *a, const void *b)
{
        const struct switches_blocker_row *x = a, *y = b;
        if (x->tid != y->tid)
                return cmp_u64(x->tid, y->tid);
        if (x->where.module != y->where.module)
                return cmp_u64(x->where.module, y->where.module);
        return cmp_u64(x->where.rel, y->where.rel);
}

static int blocker_row_cmp(const void *a, const void *b)
{
        const struct switches_blocker_row *x = a, *y = b;
        if (x->off_cpu_ns != y->off_cpu_ns)
                return x->off_cpu_ns > y->off_cpu_ns ? -1 : 1;
        if (x->nr_waits != y->nr_waits)
                return x->nr_waits > y->nr_waits ? -1 : 1;
        return blocker_row_by_key(a, b);
}

uint32_t switches_blockers(struct switches *sw, uint32_t tid,
                           const struct switches_blocker_row **rows)
{
        sw->brows = switches_reserve(sw->brows, &sw->cap_brows, agg_table_nr(sw->blockers) + 1,
                                     sizeof(*sw->brows));
        uint32_t n = 0, first = 0, nr_slots = agg_table_capacity(sw->blockers);
        const uint32_t *slots = NULL;
        if (tid != AGG_ALL) { /* one thread's: its slots, not a scan of every thread's */
                nr_slots = agg_index_find(&sw->blocker_index, sw->blockers,
                                          offsetof(struct blocker, tid), tid, &first);
                slots = nr_slots ? sw->blocker_index.slots + first : NULL;
        }
        for (uint32_t k = 0; k < nr_slots; k++) {
                const struct blocker *e = agg_table_slot(sw->blockers, slots ? slots[k] : k);
                if (!e || (!e->nr_waits && !e->off_cpu_ns) || (tid != AGG_ALL && e->tid != tid))
                        continue;
                const struct thread *t = switches_thread_find(sw, e->tid);
                struct site site =
                        choose_site(sw, t ? switches_thread_pid(t) : AGG_ALL, e->nr_frames,
                                    e->frames, switches_is_scheduler_function);
                struct switches_blocker_row *b = &sw->brows[n++];
                *b = (struct switches_blocker_row){e->tid,        site.where, site.function,
                                                   site.offset,   site.state, e->nr_waits,
                                                   e->off_cpu_ns, "",         ""};
                row_names(sw, t, b->process_name, b->thread_name);
        }
        /* stacks that differ deeper down, one place */
        if (n > 1) {
                qsort(sw->brows, n, sizeof(*sw->brows), blocker_row_by_key);
                uint32_t m = 1;
                for (uint32_t i = 1; i < n; i++) {
                        if (blocker_row_by_key(&sw->brows[m - 1], &sw->brows[i]) == 0) {
                                sw->brows[m - 1].nr_waits += sw->brows[i].nr_waits;
                                sw->brows[m - 1].off_cpu_ns += sw->brows[i].off_cpu_ns;
                        } else {
                                sw->brows[m++] = sw->brows[i];
                        }
                }
                n = m;
        }
        if (tid == AGG_ALL && (sw->other_blocked_nr || sw->other_blocked_ns))
                sw->brows[n++] = (struct switches_blocker_row){AGG_ALL,
                                                               {0, 0},
                                                               0,
                                                               0,
                                                               SYM_NO_MODULE,
                                                               sw->other_blocked_nr,
                                                               sw->other_blocked_ns,
                                                               "",
                                                               ""};
        qsort(sw->brows, n, sizeof(*sw->brows), blocker_row_cmp);
        *rows = sw->brows;
        return n;
}

_Static_assert(SITE_FRAMES == SWITCHES_BLOCK_FRAMES, "a blocker's frames");

void switches_each_block_stack(struct switches *sw, switches_block_fn fn, void *ctx)
{
        for (uint32_t i = 0; i < agg_table_capacity(sw->blockers); i++) {
                const struct blocker *e = agg_table_slot(sw->blockers, i);
                if (!e || (!e->nr_waits && !e->off_cpu_ns))
                        continue;
                const struct thread *t = switches_thread_find(sw, e->tid);
                struct switches_block_stack b = {.tid = e->tid,
                                                 .pid = t ? switches_thread_pid(t) : AGG_ALL,
                                                 .nr_frames = e->nr_frames,
                                                 .nr_waits = e->nr_waits,
                                                 .off_cpu_ns = e->off_cpu_ns};
                for (uint32_t k = 0; k < e->nr_frames; k++)
                        b.frames[k] = switches_token_loc(sw, b.pid, e->frames[k]);
                fn(ctx, &b);
        }
}

uint32_t switches_cpus(struct switches *sw, const struct switches_cpu_row **rows)
{
        sw->crows = switches_reserve(sw->crows, &sw->cap_crows, sw->nr_cpus, sizeof(*sw->crows));
        uint32_t n = 0;
        for (uint32_t c = 0; c < sw->nr_cpus; c++) {
                const struct cpu *cs = &sw->cpus[c];
                if (cs->nr_switches || cs->busy_ns || cs->idle_ns) {
                        struct switches_cpu_row *r = &sw->crows[n++];
                        *r = (struct switches_cpu_row){
                                c, cs->nr_switches, cs->busy_ns, cs->idle_ns, {0}, cs->has_cstates};
                        memcpy(r->cstate_ns, cs->cstate_ns, sizeof(r->cstate_ns));
                }
        }
        *rows = sw->crows;
        return n;
}

static int cpu_row_by_switches(const void *a, const void *b)
{
        const struct switches_cpu_row *x = a, *y = b;
        if (x->nr_switches != y->nr_switches)
                return x->nr_switches > y->nr_switches ? -1 : 1;
        if (x->busy_ns != y->busy_ns)
                return x->busy_ns > y->busy_ns ? -1 : 1;
        return cmp_u64(x->cpu, y->cpu);
}

uint32_t switches_thread_cpus(struct switches *sw, uint32_t tid,
                              const struct switches_cpu_row **rows)
{
        uint32_t n = 0;
        sw->crows = switches_reserve(sw->crows, &sw->cap_crows, agg_table_nr(sw->thread_cpus) + 1,
                                     sizeof(*sw->crows));
        for (uint32_t i = 0; i < agg_table_capacity(sw->thread_cpus); i++) {
                const struct thread_cpu *tc = agg_table_slot(sw->thread_cpus, i);
                if (tc && tc->tid == tid && (tc->nr_switches || tc->on_cpu_ns))
                        sw->crows[n++] = (struct switches_cpu_row){
                                tc->cpu, tc->nr_switches, tc->on_cpu_ns, 0, {0}, false};
        }
        qsort(sw->crows, n, sizeof(*sw->crows), cpu_row_by_switches);
        *rows = sw->crows;
        return n;
}

uint32_t switches_pmc_names(const struct switches *sw, const char *names[KEV_MAX_PMC])
{
        for (uint32_t i = 0; i < sw->nr_pmc; i++)
                names[i] = sw->pmc_names[i];
        return sw->nr_pmc;
}
