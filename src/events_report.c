/* SPDX-License-Identifier: MIT */
/* events_report.c: owns the events table as `--replay FILE -b` prints it. */
#include "events_report.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/events_table.h"
#include "model/profile.h"
#include "ui/text_sanitize.h"
#include "util/xalloc.h"

static int cmp_count(const void *a, const void *b)
{
        const struct events_type *x = *(const struct events_type *const *)a;
        const struct events_type *y = *(const struct events_type *const *)b;
        if (x->nr_events != y->nr_events)
                return x->nr_events > y->nr_events ? -1 : 1;
        int c = strcmp(x->name, y->name);
        return c ? c : (x->id < y->id ? -1 : 1);
}

void events_report_print(struct profile *p, struct outbuf *o)
{
        const struct events_table *et = p->events;
        uint32_t n = events_table_nr_types(et);
        uint64_t total = events_table_total(et);
        const struct events_type **rows = xmalloc((n ? n : 1) * sizeof(*rows));
        uint32_t nr = 0;
        for (uint32_t i = 0; i < n; i++)
                if (events_table_type(et, i)->nr_events)
                        rows[nr++] = events_table_type(et, i);
        qsort(rows, nr, sizeof(*rows), cmp_count);
        outbuf_puts(o, "\nEvents by type\n");
        outbuf_puts(o, "     Events   Share  Event type\n");
        char name[sizeof(rows[0]->name)], line[sizeof(name) + 64];
        for (uint32_t i = 0; i < nr; i++) {
                text_sanitize(name, sizeof(name), rows[i]->name);
                snprintf(line, sizeof(line), " %10" PRIu64 " %6.2f%%  %s (v%u)\n",
                         rows[i]->nr_events,
                         total ? 100.0 * (double)rows[i]->nr_events / (double)total : 0.0, name,
                         rows[i]->version);
                outbuf_puts(o, line);
        }
        snprintf(line, sizeof(line), " %10" PRIu64 "          events in all\n", total);
        outbuf_puts(o, line);
        if (events_table_nr_no_room(et)) {
                snprintf(line, sizeof(line),
                         " %10" PRIu64 "          of them past the table's caps (no row)\n",
                         events_table_nr_no_room(et));
                outbuf_puts(o, line);
        }
        free(rows);
}
