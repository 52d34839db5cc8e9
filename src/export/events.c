/* SPDX-License-Identifier: MIT */
/* events.c: owns `--export csv-events`: every event of a recording (in the time range, of the
   -p process) as a CSV row, written as the trace is read: time_s, cpu, pid, tid, event, then
   one "name=value" column per field (RFC 4180 quoting, CRLF line ends). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "etw/evntrace.h"
#include "export/writers.h"
#include "feed.h"
#include "kevent_text.h"
#include "model/profile.h"
#include "outbuf.h"
#include "ui/text_sanitize.h"
#include "util/out_file.h"
#include "util/xalloc.h"

struct events_csv {
        struct outbuf out;
        struct kevent_text scratch; /* owned */
        char clean[8192];
        char field[8192];
};

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

static void put_clean(struct events_csv *c, const char *s)
{
        if (text_is_clean(s)) {
                put_field(&c->out, s);
                return;
        }
        text_sanitize(c->clean, sizeof(c->clean), s);
        put_field(&c->out, c->clean);
}

static void on_field(void *ctx, const char *name, enum kevent_text_kind kind, const char *value)
{
        struct events_csv *c = ctx;
        (void)kind;
        outbuf_putc(&c->out, ',');
        /* name=value in one column; a long list (a stack) is cut at the buffer */
        snprintf(c->field, sizeof(c->field), "%s=%s", name, value);
        put_clean(c, c->field);
}

static void on_event(void *ctx, const struct kevent *ev)
{
        struct events_csv *c = ctx;
        struct outbuf *o = &c->out;
        outbuf_seconds(o, ev->time_ns, 0);
        outbuf_putc(o, ',');
        outbuf_u64(o, ev->cpu);
        outbuf_putc(o, ',');
        outbuf_i64(o, ev->pid == 0xFFFFFFFFu ? -1 : (int64_t)ev->pid);
        outbuf_putc(o, ',');
        outbuf_i64(o, ev->tid == 0xFFFFFFFFu ? -1 : (int64_t)ev->tid);
        outbuf_putc(o, ',');
        if (ev->name && ev->name[0]) {
                put_clean(c, ev->name);
        } else {
                char g[64];
                kevent_text_guid(g, sizeof(g), ev->provider ? ev->provider : &(GUID){0});
                snprintf(c->field, sizeof(c->field), "%s/op%u", g, ev->opcode);
                put_field(o, c->field);
        }
        kevent_text_fields(ev, &c->scratch, on_field, c);
        outbuf_puts(o, "\r\n");
}

int export_events_run(const struct export_options *opts, char *err, size_t err_size)
{
        int rc = -1;
        struct profile_options po = {.symbol_path = opts->symbol_path,
                                     .nr_symbol_path = opts->nr_symbol_path,
                                     .is_no_demangle = opts->is_no_demangle};
        struct profile *p = profile_new(&po);
        events_table_set_max_recent(profile_events(p), 0); /* every event is written, none kept */
        if (opts->pid)
                profile_zoom(p, opts->pid);
        struct events_csv *c = xcalloc(1, sizeof(*c));
        struct feed *f = NULL;
        struct out_file of = {.fd = -1};
        /* made as every export's output is (util/out_file.h; "-" is standard output) */
        if (out_file_open(&of, opts->out_path,
                          OUT_FILE_STDOUT | (opts->is_force ? OUT_FILE_FORCE : 0), err,
                          err_size) < 0)
                goto out;
        outbuf_init(&c->out, of.fd);
        outbuf_puts(&c->out, "time_s,cpu,pid,tid,event,fields\r\n");
        profile_set_event_sink(p, on_event, c);
        if (feed_replay_file(&f, p, opts->path, opts->has_from, opts->from_s, opts->has_to,
                             opts->to_s, err, err_size) < 0) {
                outbuf_flush(&c->out);
                out_file_abort(&of);
                goto out;
        }
        profile_end(p);
        int wrc = outbuf_flush(&c->out);
        if (wrc < 0) {
                snprintf(err, err_size, "writing %s: %s", opts->out_path, strerror(-wrc));
                out_file_abort(&of);
                goto out;
        }
        if (out_file_commit(&of, err, err_size) < 0)
                goto out;
        rc = 0;
out:
        feed_close(f);
        kevent_text_fini(&c->scratch);
        free(c);
        profile_free(p);
        return rc;
}
