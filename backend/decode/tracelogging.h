/* SPDX-License-Identifier: MIT */
/* tracelogging.h: TraceLogging events decoded by the schema their records carry
 * (tracelogging.c). Internal to backend/decode. */
#ifndef ETWTOP_TRACELOGGING_H
#define ETWTOP_TRACELOGGING_H

#include <stddef.h>
#include <stdint.h>

#include "etw/evntcons.h"
#include "kevent.h"

struct kdecoder;
struct tl_cache;

/* Decodes rec's payload p[0..len) by its EVENT_SCHEMA_TL item into ev (KEV_FIELDS, named
   "Provider/Event" by its PROV_TRAITS item). Returns 0, -EBADMSG (the payload ends before a
   field the schema names), or KEV_NO_LAYOUT (no schema, or one that does not parse). */
int tl_decode(struct kdecoder *d, const EVENT_RECORD *rec, struct kevent *ev, const uint8_t *p,
              size_t len, unsigned psize);

void tl_cache_free(struct tl_cache *c);

#endif
