/* SPDX-License-Identifier: MIT */
/* tdh_meta.c: owns the event metadata a trace carries (KernelTraceControl's MetaData events, as
 * xperf's merge writes them): a registry per trace of the events' descriptions (TRACE_EVENT_INFO,
 * parsed by tdh_info.c) and of the value maps (EVENT_MAP_INFO), and the decoding of the events
 * they describe into name=value fields. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "util/utf.h"
#include "clr_gc.h"
#include "known_templates.h"
#include "etl_reader.h"
#include "kevent_mof.h"
#include "le_bytes.h"
#include "tdh_layout.h"
#include "tdh_meta.h"
#include "tdh_types.h"
#include "util/xalloc.h"

/* EVENT_MAP_INFO: NameOffset, Flag, EntryCount, FormatStringOffset, then {Output, Value} */
#define EMI_ENTRIES    16
#define EMI_ENTRY_SIZE 8
#define MAP_VALUEMAP   0x1u
#define MAP_BITMAP     0x2u
#define MAP_WBEM_VALUE 0x8u
#define MAP_WBEM_BIT   0x10u

struct tdh_map {
        GUID provider;
        char *name; /* owned */
        uint32_t flags;
        uint32_t nr;
        uint32_t *values; /* owned */
        char **texts;     /* owned */
};

struct tdh_slot {
        uint64_t hash;
        struct tdh_event *e; /* owned; NULL marks a free slot */
        bool is_classic;
};

struct tdh_map_slot {
        uint64_t hash;
        uint32_t index_plus1;
};

/* Events tdh_registry_find found lately, by their Id and version (a trace's events come in runs of
   a few types); e NULL when none. Held through a pointer: finding is a const operation. */
#define TDH_LAST_FOUND 16
struct tdh_last_found {
        const struct tdh_event *e;
        GUID g;
        uint16_t key;
        uint8_t version;
        bool is_classic;
};

struct tdh_registry {
        struct tdh_slot *slots; /* owned, mask + 1 entries */
        uint32_t mask, nr;
        /* replaced descriptions, kept to the end: their names identify event types to whoever
           counted them (event_stats keeps a name's pointer) */
        struct tdh_event **retired; /* owned */
        uint32_t nr_retired, cap_retired;
        struct tdh_map *maps; /* owned */
        uint32_t nr_maps, cap_maps;
        /* the newest map of each (provider, name): maps' index + 1, 0 marks a free slot */
        struct tdh_map_slot *map_slots; /* owned, map_mask + 1 entries */
        uint32_t map_mask, nr_map_slots;
        struct tdh_last_found *last; /* owned, TDH_LAST_FOUND entries */
};

static uint64_t key_hash(const GUID *g, uint16_t key, uint8_t version, bool is_classic)
{
        /* three 64-bit words mixed (every event looks its description up: a byte-wise FNV over
           20 bytes was 1% of --dump) */
        uint64_t w[2], h;

        memcpy(w, g, 16);
        h = (w[0] ^ 0xcbf29ce484222325ull) * 0x9e3779b97f4a7c15ull;
        h = (h ^ (h >> 29) ^ w[1]) * 0xbf58476d1ce4e5b9ull;
        h = (h ^ (h >> 31) ^
             ((uint64_t)key | (uint64_t)version << 16 | (uint64_t)is_classic << 24)) *
            0x94d049bb133111ebull;
        return (h ^ (h >> 32)) | 1u;
}

static bool slot_is(const struct tdh_slot *s, const GUID *g, uint16_t key, uint8_t version,
                    bool is_classic)
{
        const struct tdh_event *e = s->e;

        if (s->is_classic != is_classic || e->version != version)
                return false;
        if (is_classic)
                return e->opcode == key && memcmp(&e->event_guid, g, sizeof(*g)) == 0;
        return e->id == key && memcmp(&e->provider, g, sizeof(*g)) == 0;
}

/* ---- the registry ---- */

struct tdh_registry *tdh_registry_new(void)
{
        struct tdh_registry *r = xcalloc(1, sizeof(*r));

        r->mask = 63;
        r->slots = xcalloc(r->mask + 1, sizeof(*r->slots));
        r->last = xcalloc(TDH_LAST_FOUND, sizeof(*r->last));
        return r;
}

static void map_free(struct tdh_map *m)
{
        for (uint32_t i = 0; i < m->nr; i++)
                free(m->texts[i]);
        free(m->texts);
        free(m->values);
        free(m->name);
}

void tdh_registry_free(struct tdh_registry *r)
{
        if (!r)
                return;
        for (uint32_t i = 0; r->slots && i <= r->mask; i++)
                tdh_event_free(r->slots[i].e);
        free(r->slots);
        for (uint32_t i = 0; i < r->nr_retired; i++)
                tdh_event_free(r->retired[i]);
        free(r->retired);
        for (uint32_t i = 0; i < r->nr_maps; i++)
                map_free(&r->maps[i]);
        free(r->maps);
        free(r->map_slots);
        free(r->last);
        free(r);
}

static void registry_put(struct tdh_registry *r, struct tdh_event *e, bool is_classic);

static void registry_grow(struct tdh_registry *r)
{
        struct tdh_slot *old = r->slots;
        uint32_t old_mask = r->mask;

        r->mask = r->mask * 2 + 1;
        r->slots = xcalloc(r->mask + 1, sizeof(*r->slots));
        r->nr = 0;
        for (uint32_t i = 0; i <= old_mask; i++)
                if (old[i].e)
                        registry_put(r, old[i].e, old[i].is_classic);
        free(old);
}

/* Keeps e, replacing an earlier description of the same event. */
static void registry_put(struct tdh_registry *r, struct tdh_event *e, bool is_classic)
{
        const GUID *g = is_classic ? &e->event_guid : &e->provider;
        uint16_t key = is_classic ? e->opcode : e->id;
        uint64_t h = key_hash(g, key, e->version, is_classic);

        /* e may replace one found lately */
        memset(r->last, 0, TDH_LAST_FOUND * sizeof(*r->last));
        for (uint32_t i = 0; i < e->nr_props; i++) {
                struct tdh_prop *pr = &e->props[i];
                pr->is_plain_int = tdh_int_type_of(pr) && pr->count <= 1 &&
                                   !(pr->flags & (PROPERTY_STRUCT | PROPERTY_PARAM_COUNT |
                                                  PROPERTY_PARAM_LENGTH));
        }
        tdh_layout_make(e);
        if ((r->nr + 1) * 4 > (r->mask + 1) * 3)
                registry_grow(r);
        for (uint32_t i = (uint32_t)h & r->mask;; i = (i + 1) & r->mask) {
                struct tdh_slot *s = &r->slots[i];

                if (!s->e) {
                        *s = (struct tdh_slot){h, e, is_classic};
                        r->nr++;
                        return;
                }
                if (s->hash == h && slot_is(s, g, key, e->version, is_classic)) {
                        if (r->nr_retired == r->cap_retired) {
                                r->cap_retired = r->cap_retired ? 2 * r->cap_retired : 16;
                                r->retired =
                                        xrealloc(r->retired, r->cap_retired * sizeof(*r->retired));
                        }
                        r->retired[r->nr_retired++] = s->e;
                        s->e = e;
                        return;
                }
        }
}

void tdh_registry_add_event(struct tdh_registry *r, struct tdh_event *e, bool is_classic)
{
        registry_put(r, e, is_classic);
}

static uint64_t map_hash(const GUID *provider, const char *name)
{
        uint64_t w[2];

        memcpy(w, provider, sizeof(w));
        return hash_mix64(hash_fnv1a_str(name, HASH_FNV_OFFSET ^ w[0] ^ hash_mix64(w[1]))) | 1u;
}

/* Points the (provider, name) slot at maps[index], the newest of that name. */
static void map_index_put(struct tdh_registry *r, uint32_t index)
{
        const struct tdh_map *m = &r->maps[index];
        uint64_t h = map_hash(&m->provider, m->name);

        for (uint32_t i = (uint32_t)h & r->map_mask;; i = (i + 1) & r->map_mask) {
                struct tdh_map_slot *s = &r->map_slots[i];
                const struct tdh_map *o = s->index_plus1 ? &r->maps[s->index_plus1 - 1] : NULL;

                if (!o) {
                        *s = (struct tdh_map_slot){h, index + 1};
                        r->nr_map_slots++;
                        return;
                }
                if (s->hash == h && memcmp(&o->provider, &m->provider, sizeof(GUID)) == 0 &&
                    strcmp(o->name, m->name) == 0) {
                        s->index_plus1 = index + 1;
                        return;
                }
        }
}

static void map_keep(struct tdh_registry *r, struct tdh_map *map)
{
        if (r->nr_maps == r->cap_maps) {
                r->cap_maps = r->cap_maps ? 2 * r->cap_maps : 16;
                r->maps = xrealloc(r->maps, r->cap_maps * sizeof(*r->maps));
        }
        r->maps[r->nr_maps++] = *map;
        if ((r->nr_map_slots + 1) * 4 > (r->map_mask + 1) * 3 || !r->map_slots) {
                /* rebuilt from the maps in order, so that the newest of a name wins */
                r->map_mask = r->map_slots ? r->map_mask * 2 + 1 : 63;
                free(r->map_slots);
                r->map_slots = xcalloc(r->map_mask + 1, sizeof(*r->map_slots));
                r->nr_map_slots = 0;
                for (uint32_t i = 0; i + 1 < r->nr_maps; i++)
                        map_index_put(r, i);
        }
        map_index_put(r, r->nr_maps - 1);
}

uint32_t tdh_registry_nr_maps_of(const struct tdh_registry *r, const GUID *provider)
{
        uint32_t n = 0;

        for (uint32_t i = 0; i < r->nr_maps; i++)
                n += memcmp(&r->maps[i].provider, provider, sizeof(*provider)) == 0;
        return n;
}

void tdh_registry_add_map(struct tdh_registry *r, const GUID *provider, const char *name,
                          uint32_t flags, const uint32_t *values, char *const *texts, uint32_t nr)
{
        struct tdh_map map = {.provider = *provider, .flags = flags, .nr = nr};

        map.name = xstrdup(name);
        map.values = xcalloc(nr ? nr : 1, sizeof(*map.values));
        map.texts = xcalloc(nr ? nr : 1, sizeof(*map.texts));
        for (uint32_t i = 0; i < nr; i++) {
                map.values[i] = values[i];
                map.texts[i] = xstrdup(texts[i]);
        }
        map_keep(r, &map);
}

int tdh_registry_add_event_info(struct tdh_registry *r, const uint8_t *p, size_t size, char *err,
                                size_t err_size)
{
        struct tdh_event *e;
        int rc = tdh_event_parse(p, size, &e, err, err_size);

        if (rc)
                return rc;
        /* DecodingSourceWbem: a classic event, found by its class GUID and opcode */
        registry_put(r, e, e->decoding_source == 1);
        return 0;
}

const struct tdh_event *tdh_registry_find(const struct tdh_registry *r, const GUID *provider,
                                          uint16_t key, uint8_t version, bool is_classic)
{
        if (!r || !r->nr)
                return NULL;

        struct tdh_last_found *l = &r->last[(key ^ (unsigned)version << 2) % TDH_LAST_FOUND];
        if (l->e && l->key == key && l->version == version && l->is_classic == is_classic &&
            memcmp(&l->g, provider, sizeof(GUID)) == 0)
                return l->e;

        uint64_t h = key_hash(provider, key, version, is_classic);

        for (uint32_t i = (uint32_t)h & r->mask;; i = (i + 1) & r->mask) {
                const struct tdh_slot *s = &r->slots[i];

                if (!s->e)
                        return NULL;
                if (s->hash == h && slot_is(s, provider, key, version, is_classic)) {
                        *l = (struct tdh_last_found){s->e, *provider, key, version, is_classic};
                        return s->e;
                }
        }
}

int tdh_registry_add_map_info(struct tdh_registry *r, const uint8_t *p, size_t size, char *err,
                              size_t err_size)
{
        if (size < 16 + EMI_ENTRIES)
                return tdh_bad(err, err_size, "EventMapInfo shorter than a GUID and EVENT_MAP_INFO",
                               size);

        const uint8_t *m = p + 16; /* EVENT_MAP_INFO, its offsets relative to it */
        size_t msize = size - 16;
        uint32_t nr = le_get32(m + 8);

        if (nr > (msize - EMI_ENTRIES) / EMI_ENTRY_SIZE)
                return tdh_bad(err, err_size, "EntryCount past the end of the EVENT_MAP_INFO",
                               16 + 8);

        struct tdh_map map = {0};

        memcpy(&map.provider, p, sizeof(GUID));
        map.name = tdh_string_at(m, msize, le_get32(m));
        if (!map.name)
                return tdh_bad(err, err_size, "EVENT_MAP_INFO without a name", 16);
        map.flags = le_get32(m + 4);
        map.nr = nr;
        map.values = xcalloc(nr ? nr : 1, sizeof(*map.values));
        map.texts = xcalloc(nr ? nr : 1, sizeof(*map.texts));
        for (uint32_t i = 0; i < nr; i++) {
                const uint8_t *q = m + EMI_ENTRIES + (size_t)i * EMI_ENTRY_SIZE;
                char *t = tdh_string_at(m, msize, le_get32(q));

                /* TDH leaves a trailing space on map texts */
                size_t n = t ? strlen(t) : 0;
                while (n && t[n - 1] == ' ')
                        t[--n] = 0;
                map.texts[i] = t ? t : xstrdup("");
                map.values[i] = le_get32(q + 4);
        }
        map_keep(r, &map);
        return 0;
}

/* The newest map of provider named name, or NULL. */
static const struct tdh_map *map_find(const struct tdh_registry *r, const GUID *provider,
                                      const char *name)
{
        if (!r || !r->map_slots)
                return NULL;
        uint64_t h = map_hash(provider, name);
        for (uint32_t i = (uint32_t)h & r->map_mask;; i = (i + 1) & r->map_mask) {
                const struct tdh_map_slot *s = &r->map_slots[i];

                if (!s->index_plus1)
                        return NULL;
                const struct tdh_map *m = &r->maps[s->index_plus1 - 1];
                if (s->hash == h && memcmp(&m->provider, provider, sizeof(GUID)) == 0 &&
                    strcmp(m->name, name) == 0)
                        return m;
        }
}

/* ---- decoding ---- */

struct dec {
        const struct tdh_registry *r;
        const struct tdh_event *e;
        struct kdecoder *d;
        const uint8_t *p;
        size_t size, at;
        unsigned psize;
        struct kevent_field *out;
        uint32_t nr;
        uint64_t values[256]; /* top-level integer values, for counts and lengths */
};

/* The text of v through a map: a value's name, or the names of its bits joined by '|'. */
static const char *map_text(struct dec *x, const struct tdh_map *m, uint64_t v, char *buf,
                            size_t size)
{
        if (m->flags & (MAP_BITMAP | MAP_WBEM_BIT)) {
                size_t o = 0;
                buf[0] = 0;
                for (uint32_t i = 0; i < m->nr; i++) {
                        if (!m->values[i] || (v & m->values[i]) != m->values[i])
                                continue;
                        o += (size_t)snprintf(buf + o, o < size ? size - o : 0, "%s%s",
                                              o ? "|" : "", m->texts[i]);
                }
                return o ? buf : NULL;
        }
        for (uint32_t i = 0; i < m->nr; i++)
                if (m->values[i] == v)
                        return m->texts[i];
        (void)x;
        return NULL;
}

/* The next fixed-size value, or false past the payload's end. */
static bool take(struct dec *x, size_t n, const uint8_t **q)
{
        if (x->at > x->size || n > x->size - x->at)
                return false;
        *q = x->p + x->at;
        x->at += n;
        return true;
}

/* f as the character of code point cp (TDH shows a char as itself; NUL as nothing). */
static void char_field(struct dec *x, struct kevent_field *f, uint32_t cp)
{
        char buf[5] = "";
        if (cp)
                buf[utf8_encode(cp, buf)] = '\0';
        f->kind = KEV_FIELD_STR;
        f->s = kdecoder_arena_copy(x->d, buf);
}

/* Decodes one value of pr at x->at into f. Returns 0, or -EBADMSG past the payload's end. */
static int value(struct dec *x, const struct tdh_prop *pr, uint32_t length, struct kevent_field *f)
{
        const uint8_t *q;
        char buf[96];

        f->kind = KEV_FIELD_UINT;
        f->u = 0;
        f->s = "";
        switch (pr->in_type) {
        case IN_INT8:
        case IN_UINT8:
        case IN_ANSICHAR:
                if (!take(x, 1, &q))
                        return -EBADMSG;
                f->u = pr->in_type == IN_INT8 ? (uint64_t)(int64_t)(int8_t)q[0] : q[0];
                f->kind = pr->in_type == IN_INT8 ? KEV_FIELD_INT : KEV_FIELD_UINT;
                if (tdh_is_char(pr))
                        char_field(x, f, q[0]); /* the byte as Latin-1 */
                break;
        case IN_INT16:
        case IN_UINT16:
        case IN_UNICODECHAR:
                if (!take(x, 2, &q))
                        return -EBADMSG;
                f->u = pr->in_type == IN_INT16 ? (uint64_t)(int64_t)(int16_t)le_get16(q)
                                               : le_get16(q);
                f->kind = pr->in_type == IN_INT16 ? KEV_FIELD_INT : KEV_FIELD_UINT;
                if (pr->out_type == OUT_PORT)
                        f->u = (uint64_t)(q[0] << 8 | q[1]);
                else if (tdh_is_char(pr))
                        char_field(x, f, le_get16(q)); /* a UTF-16 unit */
                break;
        case IN_INT32:
        case IN_UINT32:
        case IN_HEXINT32:
        case IN_BOOLEAN:
                if (!take(x, 4, &q))
                        return -EBADMSG;
                f->u = pr->in_type == IN_INT32 ? (uint64_t)(int64_t)(int32_t)le_get32(q)
                                               : le_get32(q);
                f->kind = pr->in_type == IN_INT32      ? KEV_FIELD_INT
                          : pr->in_type == IN_HEXINT32 ? KEV_FIELD_HEX
                                                       : KEV_FIELD_UINT;
                if (pr->out_type == OUT_IPV4) {
                        snprintf(buf, sizeof(buf), "%u.%u.%u.%u", q[0], q[1], q[2], q[3]);
                        f->kind = KEV_FIELD_STR;
                        f->s = kdecoder_arena_copy(x->d, buf);
                }
                break;
        case IN_INT64:
        case IN_UINT64:
        case IN_HEXINT64:
        case IN_FILETIME:
                if (!take(x, 8, &q))
                        return -EBADMSG;
                f->u = le_get64(q);
                f->kind = pr->in_type == IN_INT64      ? KEV_FIELD_INT
                          : pr->in_type == IN_HEXINT64 ? KEV_FIELD_HEX
                                                       : KEV_FIELD_UINT;
                if (pr->in_type == IN_FILETIME) {
                        f->kind = KEV_FIELD_STR;
                        f->s = tdh_filetime_text(x->d, f->u);
                }
                break;
        case IN_POINTER:
        case IN_SIZET:
                if (!take(x, x->psize, &q))
                        return -EBADMSG;
                f->u = x->psize == 8 ? le_get64(q) : le_get32(q);
                f->kind = pr->in_type == IN_POINTER ? KEV_FIELD_HEX : KEV_FIELD_UINT;
                break;
        case IN_FLOAT:
        case IN_DOUBLE: {
                double v;
                if (pr->in_type == IN_FLOAT) {
                        float fl;
                        if (!take(x, 4, &q))
                                return -EBADMSG;
                        memcpy(&fl, q, 4);
                        v = fl;
                } else {
                        if (!take(x, 8, &q))
                                return -EBADMSG;
                        memcpy(&v, q, 8);
                }
                snprintf(buf, sizeof(buf), "%g", v);
                f->kind = KEV_FIELD_STR;
                f->s = kdecoder_arena_copy(x->d, buf);
                break;
        }
        case IN_GUID:
                if (!take(x, 16, &q))
                        return -EBADMSG;
                snprintf(buf, sizeof(buf), "{%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x}",
                         (unsigned)le_get32(q), (unsigned)le_get16(q + 4),
                         (unsigned)le_get16(q + 6), q[8], q[9], q[10], q[11], q[12], q[13], q[14],
                         q[15]);
                f->kind = KEV_FIELD_STR;
                f->s = kdecoder_arena_copy(x->d, buf);
                break;
        case IN_SYSTEMTIME:
                if (!take(x, 16, &q))
                        return -EBADMSG;
                snprintf(buf, sizeof(buf), "%04u-%02u-%02u %02u:%02u:%02u.%03u",
                         (unsigned)le_get16(q), (unsigned)le_get16(q + 2),
                         (unsigned)le_get16(q + 6), (unsigned)le_get16(q + 8),
                         (unsigned)le_get16(q + 10), (unsigned)le_get16(q + 12),
                         (unsigned)le_get16(q + 14));
                f->kind = KEV_FIELD_STR;
                f->s = kdecoder_arena_copy(x->d, buf);
                break;
        case IN_UNICODESTRING:
        case IN_NONNULLTERMINATEDSTRING:
                f->kind = KEV_FIELD_STR;
                if (length || pr->in_type == IN_NONNULLTERMINATEDSTRING) {
                        size_t n = (size_t)length * 2;
                        if (pr->in_type == IN_NONNULLTERMINATEDSTRING)
                                n = x->size - (x->at < x->size ? x->at : x->size);
                        if (!take(x, n, &q))
                                return -EBADMSG;
                        f->s = kdecoder_utf16_fixed(x->d, x->p, x->at, x->at - n, n / 2);
                } else {
                        if (x->at >= x->size)
                                return -EBADMSG;
                        f->s = kdecoder_utf16_at(x->d, x->p, x->size, x->at, &x->at);
                }
                break;
        case IN_COUNTEDSTRING:
        case IN_REVERSEDCOUNTEDSTRING: {
                if (!take(x, 2, &q))
                        return -EBADMSG;
                size_t n =
                        pr->in_type == IN_COUNTEDSTRING ? le_get16(q) : (size_t)(q[0] << 8 | q[1]);
                if (!take(x, n, &q))
                        return -EBADMSG;
                f->kind = KEV_FIELD_STR;
                f->s = kdecoder_utf16_fixed(x->d, x->p, x->at, x->at - n, n / 2);
                break;
        }
        case IN_ANSISTRING:
        case IN_NONNULLTERMINATEDANSISTRING:
        case IN_COUNTEDANSISTRING:
        case IN_REVERSEDCOUNTEDANSISTRING: {
                size_t n;
                if (pr->in_type == IN_COUNTEDANSISTRING ||
                    pr->in_type == IN_REVERSEDCOUNTEDANSISTRING) {
                        if (!take(x, 2, &q))
                                return -EBADMSG;
                        n = pr->in_type == IN_COUNTEDANSISTRING ? le_get16(q)
                                                                : (size_t)(q[0] << 8 | q[1]);
                } else if (length) {
                        n = length;
                } else if (pr->in_type == IN_NONNULLTERMINATEDANSISTRING) {
                        n = x->size - (x->at < x->size ? x->at : x->size);
                } else {
                        const uint8_t *z =
                                x->at < x->size ? memchr(x->p + x->at, 0, x->size - x->at) : NULL;
                        if (x->at >= x->size)
                                return -EBADMSG;
                        n = z ? (size_t)(z - (x->p + x->at)) + 1 : x->size - x->at;
                }
                if (!take(x, n, &q))
                        return -EBADMSG;
                char s[512];
                size_t m = n < sizeof(s) - 1 ? n : sizeof(s) - 1;
                memcpy(s, q, m);
                s[m] = 0;
                f->kind = KEV_FIELD_STR;
                f->s = kdecoder_arena_copy(x->d, s);
                break;
        }
        case IN_SID:
        case IN_WBEMSID: {
                size_t skip = pr->in_type == IN_WBEMSID ? 2u * x->psize : 0;
                if (!take(x, skip, &q) || x->size - x->at < 8)
                        return -EBADMSG;
                size_t n = 8 + 4u * x->p[x->at + 1];
                if (!take(x, n, &q))
                        return -EBADMSG;
                f->kind = KEV_FIELD_STR;
                f->s = tdh_sid_text(x->d, q, n);
                break;
        }
        case IN_BINARY:
        case IN_HEXDUMP: {
                size_t n = length, w = pr->in_type == IN_HEXDUMP ? 4 : 2;
                if (pr->in_type == IN_HEXDUMP || (pr->flags & TDH_PROPERTY_TL_LENGTH16)) {
                        if (!take(x, w, &q)) /* the length before the bytes */
                                return -EBADMSG;
                        n = w == 4 ? le_get32(q) : le_get16(q);
                }
                if (!take(x, n, &q))
                        return -EBADMSG;
                f->kind = KEV_FIELD_STR;
                f->s = pr->out_type == OUT_SOCKETADDRESS ? tdh_sockaddr_text(x->d, q, n)
                                                         : tdh_hex_bytes(x->d, q, n);
                break;
        }
        default:
                /* a type this decoder does not know: the rest of the payload cannot be placed */
                return -EBADMSG;
        }
        if (pr->out_type >= OUT_HEXINT8 && pr->out_type <= OUT_HEXINT64 && f->kind != KEV_FIELD_STR)
                f->kind = KEV_FIELD_HEX;
        if (pr->map_name && f->kind != KEV_FIELD_STR) {
                const struct tdh_map *m = map_find(x->r, &x->e->provider, pr->map_name);
                /* a map the trace does not carry: the CLR manifest's, for the runtime's events */
                const char *t =
                        m ? map_text(x, m, f->u, buf, sizeof(buf))
                          : known_map_text(&x->e->provider, pr->map_name, f->u, buf, sizeof(buf));
                if (t) {
                        f->kind = KEV_FIELD_STR;
                        f->s = kdecoder_arena_copy(x->d, t);
                }
        }
        return 0;
}

static int props(struct dec *x, uint32_t first, uint32_t nr, bool is_top, int depth);

/* One value of pr, of integer type t, into f: what value() gives, without its general path.
   Returns 0, or -EBADMSG past the payload's end. */
static inline int int_value(struct dec *x, const struct tdh_prop *pr, const struct tdh_int_type *t,
                            struct kevent_field *f)
{
        size_t n = t->size == 9 ? x->psize : t->size;
        const uint8_t *q;
        uint64_t v;

        if (!take(x, n, &q))
                return -EBADMSG;
        switch (n) {
        case 1: v = t->is_signed ? (uint64_t)(int64_t)(int8_t)q[0] : q[0]; break;
        case 2: v = t->is_signed ? (uint64_t)(int64_t)(int16_t)le_get16(q) : le_get16(q); break;
        case 4: v = t->is_signed ? (uint64_t)(int64_t)(int32_t)le_get32(q) : le_get32(q); break;
        default: v = le_get64(q); break;
        }
        f->kind = pr->out_type >= OUT_HEXINT8 && pr->out_type <= OUT_HEXINT64 ? KEV_FIELD_HEX
                                                                              : t->kind;
        f->u = v;
        f->s = "";
        return 0;
}

/* Property i when it is one integer alone (most properties): the field prop() gives. */
static inline int prop_int(struct dec *x, uint32_t i, const struct tdh_prop *pr,
                           const struct tdh_int_type *t, bool is_top)
{
        struct kevent_field scratch, *f = x->nr < KEV_MAX_FIELDS ? &x->out[x->nr] : &scratch;
        int rc = int_value(x, pr, t, f);

        if (rc)
                return rc;
        f->name = pr->name;
        if (is_top && i < sizeof(x->values) / sizeof(x->values[0]))
                x->values[i] = f->u;
        if (f != &scratch)
                x->nr++;
        return 0;
}

#define ARRAY_SHOWN 8 /* elements of an integer array a field shows */

/* An array of integers as one field, "[1,2,3]", its first ARRAY_SHOWN elements and "...(N)" for
   a longer one; the rest is skipped whole. */
static int int_array(struct dec *x, const struct tdh_prop *pr, uint64_t count)
{
        char buf[ARRAY_SHOWN * 21 + 64]; /* put_number needs room for 24 */
        size_t o = 0;
        uint64_t shown = count < ARRAY_SHOWN ? count : ARRAY_SHOWN;
        const struct tdh_int_type *t = tdh_int_type_of(pr);

        buf[o++] = '[';
        if (t) {
                /* the whole array's bytes at once: a payload too short for it fails as it would
                   element by element; the elements shown are read where they lie */
                size_t n = t->size == 9 ? x->psize : t->size;
                unsigned kind = pr->out_type >= OUT_HEXINT8 && pr->out_type <= OUT_HEXINT64
                                        ? KEV_FIELD_HEX
                                        : t->kind;
                if (x->at > x->size || count * n > x->size - x->at)
                        return -EBADMSG;
                const uint8_t *q = x->p + x->at;
                for (uint64_t k = 0; k < shown; k++, q += n) {
                        uint64_t v;
                        switch (n) {
                        case 1: v = t->is_signed ? (uint64_t)(int64_t)(int8_t)q[0] : q[0]; break;
                        case 2:
                                v = t->is_signed ? (uint64_t)(int64_t)(int16_t)le_get16(q)
                                                 : le_get16(q);
                                break;
                        case 4:
                                v = t->is_signed ? (uint64_t)(int64_t)(int32_t)le_get32(q)
                                                 : le_get32(q);
                                break;
                        default: v = le_get64(q); break;
                        }
                        if (k)
                                buf[o++] = ',';
                        o += tdh_put_number(buf + o, v, kind);
                }
                x->at += count * n;
        } else {
                for (uint64_t k = 0; k < shown; k++) {
                        struct kevent_field f;
                        int rc = value(x, pr, 0, &f);
                        if (rc)
                                return rc;
                        if (k)
                                buf[o++] = ',';
                        o += tdh_put_number(buf + o, f.u, f.kind);
                }
                uint64_t n = (count - shown) * tdh_fixed_size(pr, x->psize);
                if (x->at > x->size || n > x->size - x->at)
                        return -EBADMSG;
                x->at += n;
        }
        if (count > shown) {
                memcpy(buf + o, ",...(", 5);
                o += 5;
                o += tdh_put_number(buf + o, count, KEV_FIELD_UINT);
                buf[o++] = ')';
        }
        buf[o++] = ']';
        buf[o] = '\0';
        if (x->nr < KEV_MAX_FIELDS) {
                struct kevent_field *f = &x->out[x->nr++];
                f->name = pr->name;
                f->kind = KEV_FIELD_STR;
                f->u = count;
                f->s = kdecoder_arena_copy(x->d, buf);
        }
        return 0;
}

/* Decodes property i (all its elements). */
static int prop(struct dec *x, uint32_t i, bool is_top, int depth)
{
        const struct tdh_prop *pr = &x->e->props[i];

        const struct tdh_int_type *t = tdh_int_type_of(pr);

        if (t && pr->count <= 1 &&
            !(pr->flags & (PROPERTY_STRUCT | PROPERTY_PARAM_COUNT | PROPERTY_PARAM_LENGTH |
                           TDH_PROPERTY_TL_VCOUNT)))
                return prop_int(x, i, pr, t, is_top);
        /* the values tdh_decode cleared: those of the event's properties */
        size_t nr_values = x->e->nr_props < 256 ? x->e->nr_props : 256;

        if (((pr->flags & PROPERTY_PARAM_COUNT) && pr->count >= nr_values) ||
            ((pr->flags & PROPERTY_PARAM_LENGTH) && pr->length >= nr_values))
                return -EBADMSG;

        uint64_t count = pr->flags & PROPERTY_PARAM_COUNT ? x->values[pr->count] : pr->count;
        uint64_t length = pr->flags & PROPERTY_PARAM_LENGTH ? x->values[pr->length] : pr->length;

        if (pr->flags & TDH_PROPERTY_TL_VCOUNT) {
                /* a TraceLogging array: its count before its values */
                const uint8_t *q;
                if (!take(x, 2, &q))
                        return -EBADMSG;
                count = le_get16(q);
        } else if (!(pr->flags & PROPERTY_PARAM_COUNT) && count == 0) {
                count = 1;
        }
        if (count > 4096 || length > 65536)
                return -EBADMSG;
        bool is_array = (pr->flags & (PROPERTY_PARAM_COUNT | TDH_PROPERTY_TL_VCOUNT)) || count != 1;
        if (is_array && !(pr->flags & PROPERTY_STRUCT) && !pr->map_name &&
            tdh_fixed_size(pr, x->psize) && pr->in_type != IN_GUID &&
            pr->in_type != IN_SYSTEMTIME && pr->in_type != IN_FLOAT && pr->in_type != IN_DOUBLE)
                return int_array(x, pr, count);
        for (uint64_t k = 0; k < count; k++) {
                size_t fixed = tdh_fixed_size(pr, x->psize);

                if (x->nr >= KEV_MAX_FIELDS && fixed && !(pr->flags & PROPERTY_STRUCT) &&
                    !(is_top && count == 1)) {
                        /* no field left to show them: the rest of a fixed-size array is skipped
                           whole, only its end matters (the properties after it) */
                        uint64_t n = (count - k) * fixed;
                        if (x->at > x->size || n > x->size - x->at)
                                return -EBADMSG;
                        x->at += n;
                        break;
                }
                if (pr->flags & PROPERTY_STRUCT) {
                        int rc = props(x, pr->struct_start, pr->nr_members, false, depth + 1);
                        if (rc)
                                return rc;
                        continue;
                }
                struct kevent_field scratch,
                        *f = x->nr < KEV_MAX_FIELDS ? &x->out[x->nr] : &scratch;
                int rc = value(x, pr, (uint32_t)length, f);
                if (rc)
                        return rc;
                f->name = pr->name;
                if (is_top && count == 1 && i < sizeof(x->values) / sizeof(x->values[0]))
                        x->values[i] = f->kind == KEV_FIELD_STR ? 0 : f->u;
                if (f != &scratch)
                        x->nr++;
        }
        return 0;
}

static int props(struct dec *x, uint32_t first, uint32_t nr, bool is_top, int depth)
{
        if (depth > 8)
                return -EBADMSG;
        /* the bounds once: the fields' stores could alias e's members for the compiler */
        const struct tdh_prop *all = x->e->props;
        uint32_t end = x->e->nr_props;

        if (first + nr < end)
                end = first + nr;
        for (uint32_t i = first; i < end; i++) {
                const struct tdh_prop *pr = &all[i];
                int rc = pr->is_plain_int ? prop_int(x, i, pr, &tdh_int_types[pr->in_type], is_top)
                                          : prop(x, i, is_top, depth);
                if (rc)
                        return rc;
        }
        return 0;
}

int tdh_fill(struct kdecoder *d, const void *desc, const void *table, const uint8_t *p, size_t size,
             unsigned psize, uint32_t *nr)
{
        const struct tdh_event *e = desc;
        struct dec x;

        /* not an initializer: it zeroed the 2 KB of values[] for every event */
        x.r = table;
        x.e = e;
        x.d = d;
        x.p = p;
        x.size = size;
        x.at = 0;
        x.psize = psize;
        x.nr = 0;
        memset(x.values, 0, (e->nr_props < 256 ? e->nr_props : 256) * sizeof(x.values[0]));
        x.out = kdecoder_field_slots(d);
        int rc = props(&x, 0, e->nr_top, true, 0);
        *nr = x.nr;
        return rc;
}
