/* SPDX-License-Identifier: MIT */
/* events_report.h: the events table of `--replay FILE -b`: every event type with its count. */
#ifndef ETWTOP_EVENTS_REPORT_H
#define ETWTOP_EVENTS_REPORT_H

#include "outbuf.h"

struct profile;

/* Prints "Events by type" (every type, most frequent first, as "count share name (vN)"), and
   what the caps left without a row. */
void events_report_print(struct profile *p, struct outbuf *o);

#endif
