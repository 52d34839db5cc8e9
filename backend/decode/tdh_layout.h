/* SPDX-License-Identifier: MIT */
/* tdh_layout.h: the layout check of an event the trace's metadata describes (tdh_layout.c):
   whether a payload holds the event's properties, known without decoding them. Internal to
   backend/decode. */
#ifndef ETWTOP_TDH_LAYOUT_H
#define ETWTOP_TDH_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "tdh_meta.h"

/* Works out e's steps (e->steps, from e->props and e->nr_top; the registry's is_plain_int set
   first), or none when e has a property whose end or value the check cannot tell without
   decoding it (a struct, an array of texts, a count read through a map): then e is decoded
   whole as it comes. Replaces the steps made before. */
void tdh_layout_make(struct tdh_event *e);
void tdh_layout_free(struct tdh_event *e);

/* What tdh_decode would return for payload p[0..size) of e (e->steps set): 0, or -EBADMSG
   where the payload ends before a property that must be there. */
int tdh_layout_check(const struct tdh_event *e, const uint8_t *p, size_t size, unsigned psize);

/* kdecoder_fill_fn (kevent_mof.h): the fields of payload p[0..size) of desc, a struct
   tdh_event found in table, a struct tdh_registry (tdh_meta.c). */
int tdh_fill(struct kdecoder *d, const void *desc, const void *table, const uint8_t *p, size_t size,
             unsigned psize, uint32_t *nr);

#endif
