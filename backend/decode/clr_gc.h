/* SPDX-License-Identifier: MIT */
/* clr_gc.h: the .NET runtime's garbage-collector events by the templates and value maps of its
 * manifest (ClrEtwAll.man), for traces that do not describe them; internal to the decoder. */
#ifndef ETWTOP_CLR_GC_H
#define ETWTOP_CLR_GC_H

#include <stdint.h>

#include "kdecoder_int.h"

/* Decodes a Microsoft-Windows-DotNETRuntime GC event (provider GUID is ev->provider) by its
   built-in template, Id and ev->version (a version past the last known reads as the last):
   ev->type KEV_FIELDS, value maps as their names. ev->name is kept when set, else the table's.
   Returns 0, -EBADMSG for a payload shorter than its template, or KEV_NO_LAYOUT when the event
   is not in the table or the trace describes it itself (its MetaData: the trace's word wins). */
int clr_gc_decode(struct kdecoder *d, struct kevent *ev, const struct payload *pl, uint16_t id);

/* The private provider's GCPerHeapHistory from version 2 (its manifest has no template: the
   runtime writes its heap's history record as it is in memory): the payload as bytes with its
   length. Returns 0. */
int clr_gc_decode_bytes(struct kdecoder *d, struct kevent *ev, const struct payload *pl);

/* A decoded event's "Reason" field by GCReasonMap: its name where the map has the value. */
void clr_gc_name_reason(struct kdecoder *d, struct kevent *ev);

/* The text of value v in the CLR manifest's value map map_name (GCReasonMap, GCTypeMap...) of
   the runtime's provider, or NULL (another provider, another map, a value the map lacks). For a
   trace's own description that names a map the trace does not carry. */
const char *clr_gc_map_text(const GUID *provider, const char *map_name, uint64_t v);

/* Microsoft-Windows-DotNETRuntime's GUID. */
int clr_gc_is_runtime(const GUID *g);

#endif
