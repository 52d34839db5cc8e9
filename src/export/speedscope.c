/* SPDX-License-Identifier: MIT */
/* speedscope.c: owns the speedscope export: its JSON file format
   (https://www.speedscope.app/file-format-schema.json), the frames shared, one "sampled"
   profile per profile source whose samples are the distinct stacks of a process name,
   outermost frame (the process) first, weighted by their sample counts. */
#include <stdlib.h>
#include <string.h>

#include "export/writers.h"
#include "outbuf.h"
#include "util/xalloc.h"

/* A JSON string: quoted, with '"', '\' and control characters escaped (RFC 8259). */
static void put_string(struct outbuf *o, const char *s)
{
        static const char hex[] = "0123456789abcdef";
        outbuf_putc(o, '"');
        for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
                if (*p == '"' || *p == '\\') {
                        outbuf_putc(o, '\\');
                        outbuf_putc(o, (char)*p);
                } else if (*p < 0x20) {
                        char esc[6] = {'\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15]};
                        outbuf_put(o, esc, sizeof(esc));
                } else {
                        outbuf_putc(o, (char)*p);
                }
        }
        outbuf_putc(o, '"');
}

static void put_profile(struct outbuf *o, const struct export_ctx *x, const struct stack_set *s,
                        uint16_t source)
{
        char buf[32];
        struct stack_set_merged m;
        stack_set_merge(s, source, &m);
        outbuf_puts(o, "{\"type\":\"sampled\",\"name\":");
        put_string(o, export_source_name(x, source, buf, sizeof(buf)));
        outbuf_puts(o, ",\"unit\":\"none\",\"startValue\":0,\"endValue\":");
        outbuf_u64(o, m.set.total);
        outbuf_puts(o, ",\n\"samples\":[");
        for (uint32_t i = 0; i < m.set.nr_stacks; i++) {
                const struct stack_set_stack *st = &m.set.stacks[i];
                outbuf_puts(o, i ? ",\n[" : "\n[");
                /* the process first, then the frames from the outermost */
                outbuf_u64(o, s->nr_functions + st->comm);
                for (uint32_t f = st->nr_frames; f-- > 0;) {
                        outbuf_putc(o, ',');
                        outbuf_u64(o, m.frames[st->first + f]);
                }
                outbuf_putc(o, ']');
        }
        outbuf_puts(o, "],\n\"weights\":[");
        for (uint32_t i = 0; i < m.set.nr_stacks; i++) {
                if (i)
                        outbuf_putc(o, ',');
                outbuf_u64(o, m.set.stacks[i].count);
        }
        outbuf_puts(o, "]}");
        stack_set_merged_free(&m);
}

int export_write_speedscope(const struct export_ctx *x, int fd)
{
        const struct stack_set *s = x->samples;
        struct outbuf *o = xmalloc(sizeof(*o));
        outbuf_init(o, fd);
        const char *base = strrchr(x->opts->path, '/');
        outbuf_puts(o, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
                       "\"exporter\":\"etwtop\",\"name\":");
        put_string(o, base ? base + 1 : x->opts->path);
        outbuf_puts(o, ",\"activeProfileIndex\":0,\n\"shared\":{\"frames\":[");
        /* the functions (locations name them), then the processes */
        for (uint32_t i = 0; i < s->nr_functions; i++) {
                const struct stack_set_function *fn = &s->functions[i];
                outbuf_puts(o, i ? ",\n{\"name\":" : "\n{\"name\":");
                put_string(o, fn->name);
                if (fn->mapping) {
                        outbuf_puts(o, ",\"file\":");
                        put_string(o, s->modules[fn->mapping - 1].name);
                }
                outbuf_putc(o, '}');
        }
        for (uint32_t i = 0; i < s->nr_comms; i++) {
                outbuf_puts(o, i || s->nr_functions ? ",\n{\"name\":" : "\n{\"name\":");
                put_string(o, s->comms[i]);
                outbuf_putc(o, '}');
        }
        outbuf_puts(o, "]},\n\"profiles\":[");
        /* a profile per source, in the order the views show them (the first one opens): the
           trace's declared order (a perf.data's events', perf report's), then the others */
        uint16_t order[AGG_MAX_SOURCES];
        uint32_t n = export_sources(x, order);
        for (uint32_t i = 0; i < n; i++) {
                if (i)
                        outbuf_puts(o, ",\n");
                put_profile(o, x, s, order[i]);
        }
        outbuf_puts(o, "]}\n");
        int rc = outbuf_flush(o);
        free(o);
        return rc;
}
