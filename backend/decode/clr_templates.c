/* SPDX-License-Identifier: MIT */
/* clr_templates.c: owns the .NET runtime's and its rundown's events that no other part of the
   decoder reads (loader, JIT, exceptions, contention, thread pool, runtime information, the
   rundown's init and complete markers...) by the templates of their manifest (ClrEtwAll.man),
   for the traces that do not describe them: each template (clr_template_list.c) made once into
   the metadata decoder's description and decoded as tdh_meta.c decodes the events a trace
   describes. */
#include "clr_templates.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clr_gc.h"
#include "tdh_types.h"
#include "util/xalloc.h"

static const GUID runtime_guid = {
        0xe13c0d23, 0xccbc, 0x4e12, {0x93, 0x1b, 0xd9, 0xcc, 0x2e, 0xee, 0x27, 0xe4}};
static const GUID rundown_guid = {
        0xa669021c, 0xc450, 0x4609, {0xa0, 0x35, 0x5a, 0xf5, 0x9a, 0xf4, 0xdf, 0x18}};

#define MAX_PROPS 64
#define MAX_ID    512

static const struct {
        const char *name;
        uint16_t in_type, out_type;
} types[] = {
        {"u8", IN_UINT8, 0},
        {"i8", IN_INT8, 0},
        {"u16", IN_UINT16, 0},
        {"i16", IN_INT16, 0},
        {"u32", IN_UINT32, 0},
        {"i32", IN_INT32, 0},
        {"u64", IN_UINT64, 0},
        {"i64", IN_INT64, 0},
        {"hex32", IN_HEXINT32, 0},
        {"hex64", IN_HEXINT64, 0},
        {"ptr", IN_POINTER, 0},
        {"bool", IN_BOOLEAN, 0},
        {"f32", IN_FLOAT, 0},
        {"f64", IN_DOUBLE, 0},
        {"guid", IN_GUID, 0},
        {"wstr", IN_UNICODESTRING, 0},
        {"astr", IN_ANSISTRING, 0},
        {"filetime", IN_FILETIME, 0},
        {"systemtime", IN_SYSTEMTIME, 0},
        {"sid", IN_SID, 0},
        {"binary", IN_BINARY, 0},
};

/* One field of a template's text, "Name:type", "Name:u32[Count]", "Name:u32[4]",
   "Name:binary{Length}", "Name:struct[Count]{A:u16 B:ptr}", each possibly "@Map" after. */
struct spec_field {
        char name[64], type[16], count[64], length[64], map[64];
        const char *members; /* a struct's, within the template's text */
        size_t members_len;
};

/* The next field of s[*at..n) into f. Returns 1, 0 at the end, -1 for a malformed field. */
static int next_field(const char *s, size_t n, size_t *at, struct spec_field *f)
{
        memset(f, 0, sizeof(*f));
        while (*at < n && s[*at] == ' ')
                (*at)++;
        if (*at >= n)
                return 0;
        size_t k = 0;
        while (*at < n && s[*at] != ':' && k + 1 < sizeof(f->name))
                f->name[k++] = s[(*at)++];
        if (*at >= n || s[*at] != ':')
                return -1;
        (*at)++;
        k = 0;
        while (*at < n && s[*at] != ' ' && s[*at] != '[' && s[*at] != '{' && s[*at] != '@' &&
               k + 1 < sizeof(f->type))
                f->type[k++] = s[(*at)++];
        if (*at < n && s[*at] == '[') {
                (*at)++;
                k = 0;
                while (*at < n && s[*at] != ']' && k + 1 < sizeof(f->count))
                        f->count[k++] = s[(*at)++];
                if (*at >= n)
                        return -1;
                (*at)++;
        }
        if (*at < n && s[*at] == '{') {
                size_t start = ++(*at);
                while (*at < n && s[*at] != '}')
                        (*at)++;
                if (*at >= n)
                        return -1;
                if (strcmp(f->type, "struct") == 0) {
                        f->members = s + start;
                        f->members_len = *at - start;
                } else {
                        size_t m = *at - start < sizeof(f->length) - 1 ? *at - start
                                                                       : sizeof(f->length) - 1;
                        memcpy(f->length, s + start, m);
                }
                (*at)++;
        }
        if (*at < n && s[*at] == '@') {
                (*at)++;
                k = 0;
                while (*at < n && s[*at] != ' ' && k + 1 < sizeof(f->map))
                        f->map[k++] = s[(*at)++];
        }
        return *at >= n || s[*at] == ' ' ? 1 : -1;
}

/* The index of the top-level property named name among props[0..nr), or -1. */
static int index_of(const struct tdh_prop *props, uint32_t nr, const char *name)
{
        for (uint32_t i = 0; i < nr; i++)
                if (props[i].name && strcmp(props[i].name, name) == 0)
                        return (int)i;
        return -1;
}

/* Fills pr from f; top: the top-level properties so far (counts and lengths name one of them).
   Returns false for a type or reference this parser does not know. */
static bool prop_of(const struct spec_field *f, struct tdh_prop *pr, const struct tdh_prop *top,
                    uint32_t nr_top)
{
        memset(pr, 0, sizeof(*pr));
        bool is_struct = strcmp(f->type, "struct") == 0;
        if (is_struct) {
                pr->flags |= PROPERTY_STRUCT;
        } else {
                size_t t = 0;
                while (t < sizeof(types) / sizeof(types[0]) && strcmp(types[t].name, f->type))
                        t++;
                if (t == sizeof(types) / sizeof(types[0]))
                        return false;
                pr->in_type = types[t].in_type;
                pr->out_type = types[t].out_type;
        }
        if (f->count[0]) {
                char *end;
                unsigned long c = strtoul(f->count, &end, 10);
                if (*end == 0) {
                        pr->count = (uint16_t)c;
                } else {
                        int i = index_of(top, nr_top, f->count);
                        if (i < 0)
                                return false;
                        pr->flags |= PROPERTY_PARAM_COUNT;
                        pr->count = (uint16_t)i;
                }
        } else {
                pr->count = 1;
        }
        if (f->length[0]) {
                int i = index_of(top, nr_top, f->length);
                if (i < 0)
                        return false;
                pr->flags |= PROPERTY_PARAM_LENGTH;
                pr->length = (uint16_t)i;
        }
        if (f->map[0])
                pr->map_name = xstrdup(f->map);
        pr->name = xstrdup(f->name);
        return true;
}

/* Makes the description of template t: the top-level fields first, then each struct's
   members (TRACE_EVENT_INFO's layout). NULL for a template this parser cannot read. */
static struct tdh_event *event_of(const struct clr_template *t)
{
        struct tdh_prop props[MAX_PROPS];
        struct spec_field f;
        uint32_t nr_top = 0, nr = 0;
        size_t at = 0, n = strlen(t->fields);
        const char *struct_members[MAX_PROPS];
        size_t struct_len[MAX_PROPS];
        uint32_t struct_of[MAX_PROPS];
        uint32_t nr_structs = 0;
        bool ok = true;
        int got;

        memset(props, 0, sizeof(props));
        while (ok && (got = next_field(t->fields, n, &at, &f)) != 0) {
                ok = got > 0;
                if (!ok)
                        break;
                if (nr_top == MAX_PROPS) {
                        ok = false;
                        break;
                }
                ok = prop_of(&f, &props[nr_top], props, nr_top);
                if (ok && f.members) {
                        struct_members[nr_structs] = f.members;
                        struct_len[nr_structs] = f.members_len;
                        struct_of[nr_structs++] = nr_top;
                }
                nr_top += ok;
        }
        nr = nr_top;
        for (uint32_t s = 0; ok && s < nr_structs; s++) {
                size_t m_at = 0;
                uint32_t first = nr;
                while (ok && (got = next_field(struct_members[s], struct_len[s], &m_at, &f)) != 0) {
                        if (got < 0 || nr == MAX_PROPS) {
                                ok = false;
                                break;
                        }
                        ok = prop_of(&f, &props[nr], props, nr_top);
                        nr += ok;
                }
                props[struct_of[s]].struct_start = (uint16_t)first;
                props[struct_of[s]].nr_members = (uint16_t)(nr - first);
        }
        if (!ok) {
                for (uint32_t i = 0; i < MAX_PROPS; i++) {
                        free(props[i].name);
                        free(props[i].map_name);
                }
                return NULL;
        }
        struct tdh_event *e = xcalloc(1, sizeof(*e));
        e->provider = t->is_rundown ? rundown_guid : runtime_guid;
        e->id = t->id;
        e->version = t->max_version;
        e->name = xstrdup(t->name);
        e->nr_top = nr_top;
        e->nr_props = nr;
        e->props = xcalloc(nr ? nr : 1, sizeof(*e->props));
        memcpy(e->props, props, nr * sizeof(*props));
        return e;
}

/* ---- maps ---- */

static bool is_clr(const GUID *provider)
{
        return memcmp(provider, &runtime_guid, sizeof(GUID)) == 0 ||
               memcmp(provider, &rundown_guid, sizeof(GUID)) == 0;
}

const char *clr_map_text(const GUID *provider, const char *map_name, uint64_t v, char *buf,
                         size_t size)
{
        const char *t = clr_gc_map_text(provider, map_name, v);
        if (t || !is_clr(provider))
                return t;
        for (size_t i = 0; i < clr_nr_maps; i++) {
                const struct clr_map *m = &clr_maps[i];
                if (strcmp(m->name, map_name) != 0)
                        continue;
                size_t o = 0;
                buf[0] = 0;
                for (size_t k = 0; k < m->nr; k++) {
                        bool is_set = m->is_bitmap
                                              ? (m->values[k] ? (v & m->values[k]) == m->values[k]
                                                              : v == 0)
                                              : v == m->values[k];
                        if (is_set && o < size)
                                o += (size_t)snprintf(buf + o, size - o, "%s%s", o ? "|" : "",
                                                      m->texts[k]);
                }
                return o ? buf : NULL;
        }
        return NULL;
}

/* ---- the table, made once ---- */

static struct tdh_event **events; /* by clr_templates[] index */
static uint16_t first[2][MAX_ID]; /* 1 + the index of an Id's first template, per provider */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void build(void)
{
        events = xcalloc(clr_nr_templates ? clr_nr_templates : 1, sizeof(*events));
        for (size_t i = clr_nr_templates; i-- > 0;) {
                const struct clr_template *t = &clr_templates[i];
                events[i] = event_of(t);
                if (t->id < MAX_ID)
                        first[t->is_rundown][t->id] = (uint16_t)(i + 1);
        }
}

/* The template of (provider, id, version): the one whose versions hold it, else (a version
   past the last known) the newest one's, which newer versions only append to. */
static const struct tdh_event *find(bool is_rundown, uint16_t id, uint8_t version)
{
        if (id >= MAX_ID)
                return NULL;
        pthread_once(&once, build);
        const struct tdh_event *newest = NULL;
        uint8_t newest_max = 0;
        for (size_t i = first[is_rundown][id]; i && i <= clr_nr_templates; i++) {
                const struct clr_template *t = &clr_templates[i - 1];
                if (t->id != id || t->is_rundown != is_rundown)
                        break;
                if (version >= t->min_version && version <= t->max_version)
                        return events[i - 1];
                if (t->max_version >= newest_max && version > t->max_version) {
                        newest = events[i - 1];
                        newest_max = t->max_version;
                }
        }
        return newest;
}

int clr_template_decode(struct kdecoder *d, struct kevent *ev, const uint8_t *p, size_t len,
                        unsigned psize, const GUID *provider, uint16_t id)
{
        bool is_rundown;
        if (memcmp(provider, &runtime_guid, sizeof(GUID)) == 0)
                is_rundown = false;
        else if (memcmp(provider, &rundown_guid, sizeof(GUID)) == 0)
                is_rundown = true;
        else
                return KEV_NO_LAYOUT;
        const struct tdh_event *e = find(is_rundown, id, ev->version);
        if (!e)
                return KEV_NO_LAYOUT;
        const char *name = ev->name;
        int rc = tdh_decode(d->meta, e, d, ev, p, len, psize);
        if (name && name[0])
                ev->name = name; /* the decoder's own name for it (clr.c's) */
        return rc;
}
