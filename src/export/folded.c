/* SPDX-License-Identifier: MIT */
/* folded.c: owns the folded (collapsed) stacks export, the input of flamegraph.pl and inferno:
   one line per distinct stack of a process name, "comm;outermost;...;innermost count". */
#include <stdlib.h>

#include "export/writers.h"
#include "outbuf.h"
#include "util/xalloc.h"

/* A frame of the line: ';' separates frames, so a name's own becomes ':'. */
static void put_frame(struct outbuf *o, const char *name)
{
        for (const char *p = name; *p; p++)
                outbuf_putc(o, *p == ';' ? ':' : *p);
}

int export_write_folded(const struct export_ctx *x, int fd)
{
        const struct stack_set *s = x->samples;
        struct outbuf *o = xmalloc(sizeof(*o));
        outbuf_init(o, fd);
        uint16_t source;
        if (export_main_source(x, &source)) {
                struct stack_set_merged m;
                stack_set_merge(s, source, &m);
                for (uint32_t i = 0; i < m.set.nr_stacks; i++) {
                        const struct stack_set_stack *st = &m.set.stacks[i];
                        put_frame(o, s->comms[st->comm]);
                        for (uint32_t f = st->nr_frames; f-- > 0;) {
                                outbuf_putc(o, ';');
                                put_frame(o, s->functions[m.frames[st->first + f]].name);
                        }
                        outbuf_putc(o, ' ');
                        outbuf_u64(o, st->count);
                        outbuf_putc(o, '\n');
                }
                stack_set_merged_free(&m);
        }
        int rc = outbuf_flush(o);
        free(o);
        return rc;
}
