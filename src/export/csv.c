/* SPDX-License-Identifier: MIT */
/* csv.c: owns the CSV exports: a table of --replay -b (the hot functions, modules or source
   lines of every profile source, or the context switches per thread) as -b prints it but every
   row, with a header row, quoted as RFC 4180 says (CRLF line ends; a field with a comma, a
   quote or a line break in quotes, its quotes doubled). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/writers.h"
#include "module_text.h"
#include "model/profile.h"
#include "model/switches.h"
#include "symbols/symbols.h"
#include "outbuf.h"
#include "util/xalloc.h"

static void put_field(struct outbuf *o, const char *s)
{
        if (!strpbrk(s, ",\"\r\n")) {
                outbuf_puts(o, s);
                return;
        }
        outbuf_putc(o, '"');
        for (const char *p = s; *p; p++) {
                if (*p == '"')
                        outbuf_putc(o, '"');
                outbuf_putc(o, *p);
        }
        outbuf_putc(o, '"');
}

/* A sanitized name as a field. */
static void put_name(struct outbuf *o, const char *s)
{
        char *clean = stack_set_clean_dup(s);
        put_field(o, clean);
        free(clean);
}

static void put_pct(struct outbuf *o, uint64_t part, uint64_t whole)
{
        char buf[32];
        snprintf(buf, sizeof(buf), "%.2f", whole ? 100.0 * (double)part / (double)whole : 0.0);
        outbuf_puts(o, buf);
}

/* A module's short name into buf ("[unknown]" for module 0 or one the store does not know). */
static const char *module_name(struct sym_store *store, uint32_t module, char *buf, size_t size)
{
        struct sym_module_info info;
        /* info's strings last until the next call on the store: copied */
        snprintf(buf, size, "%s",
                 module && sym_module_info(store, module, &info) ? info.name : "[unknown]");
        return buf;
}

static int finish(struct outbuf *o)
{
        int rc = outbuf_flush(o);
        free(o);
        return rc;
}

/* One profile source's rows of a table (name: its name as the Source column says it, nr: its
   samples, the shares' whole). */
typedef void (*source_rows_fn)(struct outbuf *o, struct profile *p, const char *name,
                               uint16_t source, uint64_t nr);

/* A per-source table: its header, then each source's rows. */
static int write_per_source(const struct export_ctx *x, int fd, const char *header,
                            source_rows_fn rows)
{
        struct profile *p = x->profile;
        struct outbuf *o = xmalloc(sizeof(*o));
        outbuf_init(o, fd);
        outbuf_puts(o, header);
        uint16_t sources[AGG_MAX_SOURCES];
        uint32_t nr_sources = hot_sources(profile_hot(p), sources, AGG_MAX_SOURCES);
        for (uint32_t k = 0; k < nr_sources; k++) {
                char sbuf[32];
                rows(o, p, export_source_name(x, sources[k], sbuf, sizeof(sbuf)), sources[k],
                     hot_nr_samples(profile_hot(p), sources[k]));
        }
        return finish(o);
}

/* A row's process or thread, as -b's Process or Thread column. */
static void put_owner(struct outbuf *o, struct profile *p, const struct hot_row *w)
{
        char text[160];
        /* perf's comm (--sort comm,sym): the rows per thread are per comm id */
        if (!hot_comm_name(profile_hot(p), w->tid, text, sizeof(text)))
                switches_owner_text(profile_switches(p),
                                    hot_grouping_of(profile_hot(p)) == HOT_BY_THREAD, w->pid,
                                    w->tid, w->module != 0, text, sizeof(text));
        put_name(o, text);
        outbuf_putc(o, ',');
}

static void function_rows(struct outbuf *o, struct profile *p, const char *source, uint16_t src,
                          uint64_t nr)
{
        const struct hot_row *rows;
        uint32_t n = hot_functions(profile_hot(p), src, false, &rows);
        bool has_owner = hot_grouping_of(profile_hot(p)) != HOT_BY_FUNCTION;
        for (uint32_t i = 0; i < n; i++) {
                const struct hot_row *w = &rows[i];
                char mod[256], fn[300];
                module_name(profile_store(p), w->module, mod, sizeof(mod));
                const char *name = place_text(profile_store(p), w->function, w->module, mod, w->rel,
                                              fn, sizeof(fn));
                put_name(o, source); /* a perf.data event's own name */
                outbuf_putc(o, ',');
                put_pct(o, w->self, nr);
                outbuf_putc(o, ',');
                put_pct(o, w->total, nr);
                outbuf_putc(o, ',');
                outbuf_u64(o, w->self);
                outbuf_putc(o, ',');
                outbuf_u64(o, w->total);
                outbuf_putc(o, ',');
                put_name(o, mod);
                outbuf_putc(o, ',');
                if (has_owner)
                        put_owner(o, p, w);
                put_name(o, name);
                outbuf_puts(o, "\r\n");
        }
}

int export_write_csv(const struct export_ctx *x, int fd)
{
        enum hot_grouping g = (enum hot_grouping)x->opts->grouping;
        /* perf's comm: rows per thread, each a comm id (hot_set_comm_key) */
        hot_set_grouping(profile_hot(x->profile),
                         g == HOT_BY_PROCESS && x->opts->is_comm ? HOT_BY_THREAD : g);
        return write_per_source(
                x, fd,
                g == HOT_BY_PROCESS  ? "Source,Self%,Total%,Self,Total,Module,Process,Function\r\n"
                : g == HOT_BY_THREAD ? "Source,Self%,Total%,Self,Total,Module,Thread,Function\r\n"
                                     : "Source,Self%,Total%,Self,Total,Module,Function\r\n",
                function_rows);
}

static void module_rows(struct outbuf *o, struct profile *p, const char *source, uint16_t src,
                        uint64_t nr)
{
        const struct hot_module_row *rows;
        uint32_t n = hot_modules(profile_hot(p), src, &rows);
        for (uint32_t i = 0; i < n; i++) {
                struct sym_module_info info;
                char mod[256] = "[unknown]", path[1024] = "", detail[512] = "";
                if (rows[i].module && sym_module_info(profile_store(p), rows[i].module, &info)) {
                        snprintf(mod, sizeof(mod), "%s", info.name);
                        snprintf(path, sizeof(path), "%s", info.path);
                        module_symbols_text(&info, detail, sizeof(detail)); /* as -b says it */
                }
                put_name(o, source);
                outbuf_putc(o, ',');
                put_pct(o, rows[i].self, nr);
                outbuf_putc(o, ',');
                outbuf_u64(o, rows[i].self);
                outbuf_putc(o, ',');
                put_name(o, mod);
                outbuf_putc(o, ',');
                put_name(o, path);
                outbuf_putc(o, ',');
                put_name(o, detail);
                outbuf_puts(o, "\r\n");
        }
}

int export_write_csv_modules(const struct export_ctx *x, int fd)
{
        return write_per_source(x, fd, "Source,Self%,Self,Module,Path,Symbols\r\n", module_rows);
}

static void line_rows(struct outbuf *o, struct profile *p, const char *source, uint16_t src,
                      uint64_t nr)
{
        const struct hot_line_row *rows;
        uint32_t n = hot_top_lines(profile_hot(p), src, 0, &rows);
        for (uint32_t i = 0; i < n; i++) {
                char mod[256];
                put_name(o, source);
                outbuf_putc(o, ',');
                put_pct(o, rows[i].self, nr);
                outbuf_putc(o, ',');
                outbuf_u64(o, rows[i].self);
                outbuf_putc(o, ',');
                put_name(o, module_name(profile_store(p), rows[i].module, mod, sizeof(mod)));
                outbuf_putc(o, ',');
                put_name(o, sym_name(profile_store(p), rows[i].file));
                outbuf_putc(o, ',');
                outbuf_u64(o, rows[i].line);
                outbuf_putc(o, ',');
                put_name(o, rows[i].function ? sym_name(profile_store(p), rows[i].function) : "");
                outbuf_puts(o, "\r\n");
        }
}

int export_write_csv_lines(const struct export_ctx *x, int fd)
{
        return write_per_source(x, fd, "Source,Self%,Self,Module,File,Line,Function\r\n",
                                line_rows);
}

int export_write_csv_switches(const struct export_ctx *x, int fd)
{
        struct profile *p = x->profile;
        struct outbuf *o = xmalloc(sizeof(*o));
        outbuf_init(o, fd);
        outbuf_puts(o, "Switches,On-CPU ns,Off-CPU ns,CPU%,Readied,TID,PID,Top wait,Thread\r\n");
        int64_t wall_ns = switches_wall_ns(profile_switches(p));
        const struct switches_row *rows;
        uint32_t n = switches_threads(profile_switches(p), SWITCHES_BY_SWITCHES, &rows);
        for (uint32_t i = 0; i < n; i++) {
                const struct switches_row *w = &rows[i];
                char wait[128] = "", name[2 * SWITCHES_NAME_SIZE + 2];
                if (w->nr_waits)
                        snprintf(wait, sizeof(wait), "%s/%s",
                                 kevent_thread_state_name(w->waits[0].state),
                                 kevent_wait_reason_name(w->waits[0].wait_reason));
                if (w->is_other)
                        snprintf(name, sizeof(name), "[other threads]");
                else
                        snprintf(name, sizeof(name), "%.*s%s%.*s", SWITCHES_NAME_SIZE,
                                 w->process_name, w->thread_name[0] ? "/" : "", SWITCHES_NAME_SIZE,
                                 w->thread_name);
                outbuf_u64(o, w->nr_switches);
                outbuf_putc(o, ',');
                outbuf_u64(o, w->on_cpu_ns);
                outbuf_putc(o, ',');
                outbuf_u64(o, w->off_cpu_ns);
                outbuf_putc(o, ',');
                put_pct(o, w->on_cpu_ns, wall_ns > 0 ? (uint64_t)wall_ns : 0);
                outbuf_putc(o, ',');
                outbuf_u64(o, w->nr_readied);
                outbuf_putc(o, ',');
                /* an unknown thread or process (the other row's): an empty field */
                if (!w->is_other && w->tid != AGG_ALL)
                        outbuf_u64(o, w->tid);
                outbuf_putc(o, ',');
                if (!w->is_other && w->pid != AGG_ALL)
                        outbuf_u64(o, w->pid);
                outbuf_putc(o, ',');
                put_field(o, wait);
                outbuf_putc(o, ',');
                put_name(o, name);
                outbuf_puts(o, "\r\n");
        }
        return finish(o);
}

/* The LBR branch edges, exact edges, most taken first (the branch view's table). */
int export_write_csv_branches(const struct export_ctx *x, int fd)
{
        struct profile *p = x->profile;
        struct outbuf *o = xmalloc(sizeof(*o));
        outbuf_init(o, fd);
        outbuf_puts(o, "Share%,Taken,From,To,Mispredicted,PredictionKnown,AvgCycles\r\n");
        const struct branches_row *rows;
        uint32_t n = branches_rows(profile_branches(p), BRANCHES_BY_EDGE, AGG_ALL, &rows);
        char from[512], to[512];
        for (uint32_t i = 0; i < n; i++) {
                const struct branches_row *e = &rows[i];
                if (e->is_other) {
                        snprintf(from, sizeof(from), "[other]");
                        snprintf(to, sizeof(to), "[other]");
                } else {
                        sym_format(profile_store(p), e->from.loc, from, sizeof(from));
                        sym_format(profile_store(p), e->to.loc, to, sizeof(to));
                }
                char share[32];
                snprintf(share, sizeof(share), "%.2f", 100.0 * e->share);
                outbuf_puts(o, share);
                outbuf_putc(o, ',');
                outbuf_u64(o, e->count);
                outbuf_putc(o, ',');
                put_name(o, from);
                outbuf_putc(o, ',');
                put_name(o, to);
                /* what the CPU recorded: empty where it did not */
                outbuf_putc(o, ',');
                if (e->flags.nr_predict_known)
                        outbuf_u64(o, e->flags.nr_mispredicted);
                outbuf_putc(o, ',');
                if (e->flags.nr_predict_known)
                        outbuf_u64(o, e->flags.nr_predict_known);
                outbuf_putc(o, ',');
                double cycles;
                if (branches_avg_cycles(e, &cycles)) {
                        snprintf(share, sizeof(share), "%.2f", cycles);
                        outbuf_puts(o, share);
                }
                outbuf_puts(o, "\r\n");
        }
        return finish(o);
}
