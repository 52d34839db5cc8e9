/* SPDX-License-Identifier: MIT */
/* tracelogging.c: owns TraceLogging events' decoding: the schema a record carries in its
   EVENT_SCHEMA_TL extended item (ETL-FORMAT.md 2.8), parsed once per distinct schema into the
   metadata decoder's description (struct tdh_event), its fields then decoded as tdh_meta.c
   decodes the events a trace describes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kdecoder_int.h"
#include "tdh_meta.h"
#include "tdh_types.h"
#include "tracelogging.h"
#include "util/hash.h"
#include "util/xalloc.h"

/* TraceLogging's field encoding (TraceLoggingProvider.h): the in-type's low 5 bits, its count
   bits, and the chain bits that say another byte follows */
#define TL_IN_TYPE_MASK  0x1fu
#define TL_IN_COUNT_MASK 0x60u
#define TL_IN_CCOUNT     0x20u /* a constant count: UINT16 in the schema */
#define TL_IN_VCOUNT     0x40u /* a variable count: UINT16 in the payload, before the values */
#define TL_IN_CUSTOM     0x60u /* UINT16 size and type info in the schema; UINT16 size, bytes */
#define TL_IN_CHAIN      0x80u /* an out-type byte follows */
#define TL_OUT_MASK      0x7fu
#define TL_OUT_CHAIN     0x80u /* tag bytes follow */
enum {
        TL_BINARY = 14,
        TL_COUNTEDSTRING = 22,
        TL_COUNTEDANSISTRING = 23,
        TL_STRUCT = 24,
        TL_COUNTEDBINARY = 25,
};

#define TL_MAX_FIELDS 128  /* fields of one schema, members of its structs included */
#define TL_MAX_CACHED 4096 /* distinct schemas kept; past it, a schema is parsed each time */

/* One field in the schema's order, a struct's members after it. */
struct tl_raw {
        struct tdh_prop prop;
        uint32_t nr_members; /* a struct's */
};

struct tl_schema {
        uint64_t hash;
        GUID provider;
        uint8_t *bytes; /* owned: the schema, compared on a hash match */
        size_t size;
        struct tdh_event *event; /* owned; NULL: the schema does not parse */
};

struct tl_cache {
        struct tl_schema *slots; /* open-addressed by hash */
        uint32_t mask, nr;
        uint32_t last; /* 1 + the slot of the last schema found: a run of one event's records */
        struct tdh_event *spare; /* owned: the last schema past the bound, its name its own */
        char **names;            /* owned: the events' names, one copy per text */
        uint32_t nr_names, cap_names;
};

void tl_cache_free(struct tl_cache *c)
{
        if (!c)
                return;
        for (uint32_t i = 0; c->slots && i <= c->mask; i++) {
                free(c->slots[i].bytes);
                if (c->slots[i].event) {
                        c->slots[i].event->name = NULL; /* c->names' */
                        tdh_event_free(c->slots[i].event);
                }
        }
        tdh_event_free(c->spare);
        for (uint32_t i = 0; i < c->nr_names; i++)
                free(c->names[i]);
        free(c->names);
        free(c->slots);
        free(c);
}

/* The string at p[*at..size), NUL-terminated within it; *at past its NUL. NULL when none. */
static const char *take_string(const uint8_t *p, size_t size, size_t *at)
{
        const uint8_t *z = *at < size ? memchr(p + *at, 0, size - *at) : NULL;
        if (!z)
                return NULL;
        const char *s = (const char *)p + *at;
        *at = (size_t)(z - p) + 1;
        return s;
}

/* Skips tag bytes: one, and more while bit 7 is set. */
static bool skip_tags(const uint8_t *p, size_t size, size_t *at)
{
        while (*at < size && (p[*at] & 0x80))
                (*at)++;
        if (*at >= size)
                return false;
        (*at)++;
        return true;
}

/* A copy of s with control characters as '?' (a name goes on a line of its own). */
static char *clean_copy(const char *s)
{
        char *c = xstrdup(s);
        for (char *q = c; *q; q++)
                if ((unsigned char)*q < 0x20 || *q == 0x7f)
                        *q = '?';
        return c;
}

/* TDH's out-type for a TraceLogging one (TraceLoggingProvider.h numbers them apart): those the
   values' text depends on, and the rest as TraceEvent would name them */
static uint16_t out_type(uint32_t tl)
{
        static const uint8_t tdh[] = {
                [2] = 1,   /* STRING: an 8- or 16-bit integer is a character (char8, char16) */
                [3] = 13,  /* BOOLEAN */
                [4] = 18,  /* HEX: one of HEXINT8..64, the value's size tells which */
                [5] = 20,  /* PID */
                [6] = 21,  /* TID */
                [7] = 22,  /* PORT */
                [8] = 23,  /* IPV4 */
                [9] = 24,  /* IPV6 */
                [10] = 25, /* SOCKETADDRESS */
                [11] = 28, /* XML */
                [12] = 34, /* JSON */
                [13] = 30, /* WIN32ERROR */
                [14] = 31, /* NTSTATUS */
                [15] = 32, /* HRESULT */
                [16] = 2,  /* FILETIME: DATETIME */
                [20] = 35, /* UTF8 */
                [22] = 37, /* CODE_POINTER */
                [23] = 38, /* DATETIME_UTC */
        };
        return tl < sizeof(tdh) ? tdh[tl] : 0;
}

/* Reads one field at p[*at..size) into r. Returns 0 or -EBADMSG. */
static int field_parse(const uint8_t *p, size_t size, size_t *at, struct tl_raw *r)
{
        const char *name = take_string(p, size, at);
        if (!name || *at >= size)
                return -EBADMSG;
        uint8_t in = p[(*at)++], out = 0;
        if (in & TL_IN_CHAIN) {
                if (*at >= size)
                        return -EBADMSG;
                out = p[(*at)++];
                if ((out & TL_OUT_CHAIN) && !skip_tags(p, size, at))
                        return -EBADMSG;
        }
        uint32_t type = in & TL_IN_TYPE_MASK, counting = in & TL_IN_COUNT_MASK;
        memset(r, 0, sizeof(*r));
        if (counting == TL_IN_CCOUNT) {
                if (size - *at < 2)
                        return -EBADMSG;
                r->prop.count = le_get16(p + *at);
                *at += 2;
        } else if (counting == TL_IN_VCOUNT) {
                r->prop.flags |= TDH_PROPERTY_TL_VCOUNT;
        } else if (counting == TL_IN_CUSTOM) {
                /* a value of a type the schema describes in its own terms: its bytes */
                if (size - *at < 2 || le_get16(p + *at) > size - *at - 2)
                        return -EBADMSG;
                *at += 2u + le_get16(p + *at);
                type = TL_COUNTEDBINARY;
        }
        r->prop.out_type = out_type(out & TL_OUT_MASK);
        switch (type) {
        case TL_STRUCT:
                /* the out-type byte holds the number of members, which follow */
                if (!(in & TL_IN_CHAIN) || !(out & TL_OUT_MASK))
                        return -EBADMSG;
                r->prop.flags |= PROPERTY_STRUCT;
                r->nr_members = out & TL_OUT_MASK;
                r->prop.out_type = 0;
                break;
        case TL_BINARY:
        case TL_COUNTEDBINARY:
                r->prop.in_type = IN_BINARY;
                r->prop.flags |= TDH_PROPERTY_TL_LENGTH16;
                break;
        case TL_COUNTEDSTRING: r->prop.in_type = IN_COUNTEDSTRING; break;
        case TL_COUNTEDANSISTRING: r->prop.in_type = IN_COUNTEDANSISTRING; break;
        default:
                if (type == 0 || type > IN_HEXINT64)
                        return -EBADMSG; /* no type TraceLogging writes */
                r->prop.in_type = (uint16_t)type;
                break;
        }
        r->prop.name = clean_copy(name);
        return 0;
}

/* The index after raw field i and its struct's members. */
static uint32_t skip_field(const struct tl_raw *raw, uint32_t nr, uint32_t i, int depth)
{
        if (i >= nr || depth > 8)
                return nr + 1;
        uint32_t j = i + 1;
        for (uint32_t k = 0; k < raw[i].nr_members && j <= nr; k++)
                j = skip_field(raw, nr, j, depth + 1);
        return j;
}

/* Places the n siblings from raw[first] at props[base..base+n), a struct's members in a block
   of their own from *next (TRACE_EVENT_INFO's layout: the top level first). */
static void place(struct tl_raw *raw, uint32_t first, uint32_t n, struct tdh_prop *props,
                  uint32_t base, uint32_t *next, int depth)
{
        uint32_t r = first;
        for (uint32_t k = 0; k < n; k++) {
                props[base + k] = raw[r].prop;
                raw[r].prop.name = NULL; /* props' now */
                if (raw[r].nr_members) {
                        uint32_t start = *next;
                        *next += raw[r].nr_members;
                        props[base + k].struct_start = (uint16_t)start;
                        props[base + k].nr_members = (uint16_t)raw[r].nr_members;
                        place(raw, r + 1, raw[r].nr_members, props, start, next, depth + 1);
                }
                r = skip_field(raw, UINT32_MAX - 1, r, depth);
        }
}

/* Builds the description of a schema. Returns NULL when it does not parse. */
static struct tdh_event *schema_parse(const uint8_t *p, size_t n)
{
        if (n < 3)
                return NULL;
        size_t size = le_get16(p);
        if (size > n)
                return NULL;
        size_t at = 2;
        if (!skip_tags(p, size, &at))
                return NULL;
        const char *name = take_string(p, size, &at);
        if (!name)
                return NULL;
        struct tl_raw raw[TL_MAX_FIELDS];
        uint32_t nr = 0;
        int rc = 0;
        while (at < size && rc == 0) {
                if (nr == TL_MAX_FIELDS)
                        rc = -EBADMSG;
                else if ((rc = field_parse(p, size, &at, &raw[nr])) == 0)
                        nr++;
        }
        /* the top level: fields until the schema's end, each struct with its members */
        uint32_t nr_top = 0;
        for (uint32_t i = 0; rc == 0 && i < nr; i = skip_field(raw, nr, i, 0))
                nr_top++;
        if (rc == 0 && skip_field(raw, nr, 0, 0) > nr + 1)
                rc = -EBADMSG;
        for (uint32_t i = 0, j = 0; rc == 0 && i < nr; i = j) {
                j = skip_field(raw, nr, i, 0);
                if (j > nr)
                        rc = -EBADMSG; /* a struct whose members run past the schema */
        }
        if (rc) {
                for (uint32_t i = 0; i < nr; i++)
                        free(raw[i].prop.name);
                return NULL;
        }
        struct tdh_event *e = xcalloc(1, sizeof(*e));
        e->decoding_source = 3;
        e->nr_props = nr;
        e->nr_top = nr_top;
        e->props = xcalloc(nr ? nr : 1, sizeof(*e->props));
        uint32_t next = nr_top;
        place(raw, 0, nr_top, e->props, 0, &next, 0);
        e->name = (char *)name; /* replaced by the cache's copy */
        return e;
}

/* "Provider/Event" for the record (its PROV_TRAITS' provider name, else "TraceLogging"),
   allocated. */
static char *make_name(const EVENT_RECORD *rec, const char *event)
{
        const char *provider = NULL;
        for (USHORT i = 0; rec->ExtendedData && i < rec->ExtendedDataCount; i++) {
                const EVENT_HEADER_EXTENDED_DATA_ITEM *x = &rec->ExtendedData[i];
                size_t at = 2;
                if (x->ExtType == EVENT_HEADER_EXT_TYPE_PROV_TRAITS && x->DataPtr &&
                    x->DataSize > 2)
                        provider = take_string((const uint8_t *)(uintptr_t)x->DataPtr, x->DataSize,
                                               &at);
        }
        char raw[512];
        snprintf(raw, sizeof(raw), "%s/%s", provider && *provider ? provider : "TraceLogging",
                 event);
        return clean_copy(raw);
}

/* The cache's one copy of name (taken): one pointer per text, as the events' tables like. */
static const char *intern(struct tl_cache *c, char *name)
{
        for (uint32_t i = 0; i < c->nr_names; i++) {
                if (strcmp(c->names[i], name) == 0) {
                        free(name);
                        return c->names[i];
                }
        }
        if (c->nr_names == c->cap_names) {
                c->cap_names = c->cap_names ? 2 * c->cap_names : 16;
                c->names = xrealloc(c->names, c->cap_names * sizeof(*c->names));
        }
        c->names[c->nr_names] = name;
        return c->names[c->nr_names++];
}

/* The cached description of the record's schema (made at its first sight), or NULL. */
static const struct tdh_event *schema_of(struct kdecoder *d, const EVENT_RECORD *rec,
                                         const uint8_t *p, size_t n)
{
        struct tl_cache *c = d->tl;
        if (!c) {
                c = d->tl = xcalloc(1, sizeof(*c));
                c->mask = 63;
                c->slots = xcalloc(c->mask + 1, sizeof(*c->slots));
        }
        if (c->last) {
                const struct tl_schema *s = &c->slots[c->last - 1];
                if (s->size == n && memcmp(s->bytes, p, n) == 0 &&
                    memcmp(&s->provider, &rec->EventHeader.ProviderId, sizeof(GUID)) == 0)
                        return s->event;
        }
        uint64_t h = hash_mix64(hash_fnv1a(
                p, n, hash_fnv1a(&rec->EventHeader.ProviderId, sizeof(GUID), HASH_FNV_OFFSET)));
        uint32_t i = (uint32_t)h & c->mask;
        for (;; i = (i + 1) & c->mask) {
                struct tl_schema *s = &c->slots[i];
                if (!s->bytes)
                        break;
                if (s->hash == h && s->size == n && memcmp(s->bytes, p, n) == 0 &&
                    memcmp(&s->provider, &rec->EventHeader.ProviderId, sizeof(GUID)) == 0) {
                        c->last = i + 1;
                        return s->event;
                }
        }
        struct tdh_event *e = schema_parse(p, n);
        if (c->nr >= TL_MAX_CACHED) {
                /* a trace of ever new schemas: this one is used for its record alone, its
                   name its own */
                if (e)
                        e->name = make_name(rec, e->name);
                tdh_event_free(c->spare);
                c->spare = e;
                return e;
        }
        if (e)
                e->name = (char *)intern(c, make_name(rec, e->name));
        struct tl_schema *s = &c->slots[i];
        s->hash = h;
        s->provider = rec->EventHeader.ProviderId;
        s->bytes = xmalloc(n ? n : 1);
        memcpy(s->bytes, p, n);
        s->size = n;
        s->event = e;
        c->last = i + 1;
        if (++c->nr * 2 > c->mask) {
                /* grow: the slots again by their hashes */
                uint32_t cap = 2 * (c->mask + 1);
                struct tl_schema *old = c->slots;
                uint32_t old_mask = c->mask;
                c->slots = xcalloc(cap, sizeof(*c->slots));
                c->mask = cap - 1;
                for (uint32_t k = 0; k <= old_mask; k++) {
                        if (!old[k].bytes)
                                continue;
                        uint32_t j = (uint32_t)old[k].hash & c->mask;
                        while (c->slots[j].bytes)
                                j = (j + 1) & c->mask;
                        c->slots[j] = old[k];
                }
                free(old);
                c->last = 0; /* the slots moved */
        }
        return e;
}

int tl_decode(struct kdecoder *d, const EVENT_RECORD *rec, struct kevent *ev, const uint8_t *p,
              size_t len, unsigned psize)
{
        for (USHORT i = 0; rec->ExtendedData && i < rec->ExtendedDataCount; i++) {
                const EVENT_HEADER_EXTENDED_DATA_ITEM *x = &rec->ExtendedData[i];
                if (x->ExtType != EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL || !x->DataPtr)
                        continue;
                const struct tdh_event *e =
                        schema_of(d, rec, (const uint8_t *)(uintptr_t)x->DataPtr, x->DataSize);
                if (!e)
                        return KEV_NO_LAYOUT;
                return tdh_decode(d->meta, e, d, ev, p, len, psize);
        }
        return KEV_NO_LAYOUT;
}
