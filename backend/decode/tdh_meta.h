/* SPDX-License-Identifier: MIT */
/* tdh_meta.h: the event metadata a trace carries (KernelTraceControl MetaData EventInfo: TDH's
 * TRACE_EVENT_INFO; EventMapInfo: a provider GUID and TDH's EVENT_MAP_INFO), parsed from bytes,
 * kept per trace, and used to name and decode the events it describes. */
#ifndef ETWTOP_TDH_META_H
#define ETWTOP_TDH_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "etw/wintypes.h"
#include "kevent.h"

struct kdecoder;

/* One property of an event (EVENT_PROPERTY_INFO). */
struct tdh_prop {
        char *name;     /* owned, UTF-8 */
        uint32_t flags; /* PROPERTY_FLAGS: 1 struct, 2 length from a property, 4 count from one */
        uint16_t in_type, out_type;
        uint16_t count;  /* or the index of the property that holds it (flags & 4) */
        uint16_t length; /* or the index of the property that holds it (flags & 2) */
        uint16_t struct_start, nr_members; /* flags & 1 */
        char *map_name;                    /* owned; NULL without a map */
        /* set by the registry: one integer alone (no map, port, address, count or length), read
           without the general path; 0 is always right, only slower */
        bool is_plain_int;
};

/* Flags of struct tdh_prop beyond PROPERTY_FLAGS' (tracelogging.c's): the count of a
   TraceLogging array is a UINT16 in the payload before its values; the length of each value a
   UINT16 before its bytes */
#define TDH_PROPERTY_TL_VCOUNT   0x10000u
#define TDH_PROPERTY_TL_LENGTH16 0x20000u

/* An event's metadata (TRACE_EVENT_INFO). */
struct tdh_event {
        GUID provider;   /* the manifest provider's GUID */
        GUID event_guid; /* a classic (MOF) event's class GUID */
        uint16_t id;
        uint8_t version, opcode;
        uint16_t task;
        uint32_t decoding_source; /* 0 XML manifest, 1 WBEM (MOF), 2 WPP, 3 TraceLogging */
        char *name;               /* owned: "Provider/Task/Opcode", as TraceEvent names it */
        uint32_t nr_props, nr_top;
        struct tdh_prop *props; /* owned, nr_props */
        /* set by the registry (tdh_layout.c): how the top-level properties are laid out, for
           the check that leaves their decoding to when they are asked for; NULL: none */
        struct tdh_step *steps; /* owned, nr_steps */
        uint32_t nr_steps;
};

/* Parses a TRACE_EVENT_INFO of size bytes. Returns 0 and *out (free with tdh_event_free), or
   -EBADMSG with a message naming the field and its byte offset in err. */
int tdh_event_parse(const uint8_t *p, size_t size, struct tdh_event **out, char *err,
                    size_t err_size);
void tdh_event_free(struct tdh_event *e);

/* The metadata of one trace: events by (provider, Id, version) for manifest events and by
   (class GUID, opcode, version) for classic ones, and value and bit maps by provider and name. */
struct tdh_registry;
struct tdh_registry *tdh_registry_new(void);
void tdh_registry_free(struct tdh_registry *r);

/* Takes a MetaData EventInfo (opcode 32) or EventMapInfo (opcode 33) payload. Returns 0, or
   -EBADMSG (err says why; the registry is unchanged). */
int tdh_registry_add_event_info(struct tdh_registry *r, const uint8_t *p, size_t size, char *err,
                                size_t err_size);
int tdh_registry_add_map_info(struct tdh_registry *r, const uint8_t *p, size_t size, char *err,
                              size_t err_size);

/* Keeps e (owned by r from now on), replacing an earlier description of the same event. */
void tdh_registry_add_event(struct tdh_registry *r, struct tdh_event *e, bool is_classic);
/* Keeps a copy of a map: flags as EVENT_MAP_INFO's (1 values, 2 bits), nr entries. */
void tdh_registry_add_map(struct tdh_registry *r, const GUID *provider, const char *name,
                          uint32_t flags, const uint32_t *values, char *const *texts, uint32_t nr);

/* How many maps of provider were added, replaced ones included: maps are only ever added, so
   an unchanged count says none of the provider's maps changed. */
uint32_t tdh_registry_nr_maps_of(const struct tdh_registry *r, const GUID *provider);

/* The metadata of a manifest event, or of a classic one (is_classic: provider is its class
   GUID and key its opcode), or NULL. */
const struct tdh_event *tdh_registry_find(const struct tdh_registry *r, const GUID *provider,
                                          uint16_t key, uint8_t version, bool is_classic);

/* Decodes payload p[0..size) by e into ev (KEV_FIELDS, e's name). Returns 0, or -EBADMSG when
   the payload ends before a property that must be there. */
int tdh_decode(const struct tdh_registry *r, const struct tdh_event *e, struct kdecoder *d,
               struct kevent *ev, const uint8_t *p, size_t size, unsigned psize);

#endif
