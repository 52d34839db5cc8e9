/* SPDX-License-Identifier: MIT */
/* csv.c: owns the CSV export: the hot functions table of every profile source, as --replay -b
   prints it but every row, with a header row, quoted as RFC 4180 says (CRLF line ends; a field
   with a comma, a quote or a line break in quotes, its quotes doubled). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/writers.h"
#include "model/profile.h"
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
        char *clean = export_clean_dup(s);
        put_field(o, clean);
        free(clean);
}

static void put_pct(struct outbuf *o, uint64_t part, uint64_t whole)
{
        char buf[32];
        snprintf(buf, sizeof(buf), "%.2f", whole ? 100.0 * (double)part / (double)whole : 0.0);
        outbuf_puts(o, buf);
}

int export_write_csv(const struct export_ctx *x, int fd)
{
        struct profile *p = x->profile;
        struct outbuf *o = xmalloc(sizeof(*o));
        outbuf_init(o, fd);
        outbuf_puts(o, "Source,Self%,Total%,Self,Total,Module,Function\r\n");
        uint16_t sources[16];
        uint32_t nr_sources = hot_sources(p->hot, sources, 16);
        for (uint32_t k = 0; k < nr_sources; k++) {
                char sbuf[32];
                const char *source = export_source_name(sources[k], sbuf, sizeof(sbuf));
                uint64_t nr = hot_nr_samples(p->hot, sources[k]);
                const struct hot_row *rows;
                uint32_t n = hot_functions(p->hot, sources[k], false, &rows);
                for (uint32_t i = 0; i < n; i++) {
                        const struct hot_row *w = &rows[i];
                        struct sym_module_info info;
                        char mod[256], fn[300];
                        /* info's strings last until the next call on the store: copied */
                        snprintf(mod, sizeof(mod), "%s",
                                 w->module && sym_module_info(p->store, w->module, &info)
                                         ? info.name
                                         : "[unknown]");
                        const char *name = fn;
                        if (w->function)
                                name = sym_name(p->store, w->function);
                        else if (w->module)
                                snprintf(fn, sizeof(fn), "%s+0x%" PRIx64, mod, w->rel);
                        else if (w->rel)
                                snprintf(fn, sizeof(fn), "0x%" PRIx64, w->rel);
                        else
                                snprintf(fn, sizeof(fn), "[other]");
                        put_field(o, source);
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
                        put_name(o, name);
                        outbuf_puts(o, "\r\n");
                }
        }
        int rc = outbuf_flush(o);
        free(o);
        return rc;
}
