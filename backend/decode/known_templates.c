/* SPDX-License-Identifier: MIT */
/* known_templates.c: owns the events of the providers whose manifests Windows keeps and traces
   do not carry, which no other part of the decoder reads: the .NET runtime's and its
   rundown's (loader, JIT, exceptions, contention, thread pool, runtime information, the
   rundown's init and complete markers...) by ClrEtwAll.man's templates, and Windows
   PowerShell's by its manifest's (PowerShell 7's PowerShellCore has the same events): each
   template (clr_template_list.c, ps_template_list.c) made once into the metadata decoder's
   description and decoded as tdh_meta.c decodes the events a trace describes. */
#include "known_templates.h"

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
/* Microsoft-Windows-PowerShell, and PowerShellCore (PowerShell 7's copy of its manifest) */
static const GUID powershell_guid = {
        0xa0c1853b, 0x5c40, 0x4b15, {0x87, 0x66, 0x3c, 0xf1, 0xc5, 0x8f, 0x98, 0x5a}};
static const GUID powershell_core_guid = {
        0xf90714a8, 0x5509, 0x434a, {0xbf, 0x6d, 0xb1, 0x62, 0x4c, 0x8a, 0x19, 0xa2}};

#define MAX_PROPS 64

/* The provider a GUID is, or -1. */
static int provider_of(const GUID *g)
{
        if (memcmp(g, &runtime_guid, sizeof(GUID)) == 0)
                return TMPL_CLR_RUNTIME;
        if (memcmp(g, &rundown_guid, sizeof(GUID)) == 0)
                return TMPL_CLR_RUNDOWN;
        if (memcmp(g, &powershell_guid, sizeof(GUID)) == 0 ||
            memcmp(g, &powershell_core_guid, sizeof(GUID)) == 0)
                return TMPL_POWERSHELL;
        return -1;
}

static const GUID *const provider_guids[TMPL_NR_PROVIDERS] = {&runtime_guid, &rundown_guid,
                                                              &powershell_guid};

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
        e->provider = *provider_guids[t->provider];
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

const char *known_map_text(const GUID *provider, const char *map_name, uint64_t v, char *buf,
                           size_t size)
{
        const char *t = clr_gc_map_text(provider, map_name, v);
        int which = provider_of(provider);
        if (t || which < 0)
                return t;
        const struct clr_map *maps = which == TMPL_POWERSHELL ? ps_maps : clr_maps;
        size_t nr_maps = which == TMPL_POWERSHELL ? ps_nr_maps : clr_nr_maps;
        for (size_t i = 0; i < nr_maps; i++) {
                const struct clr_map *m = &maps[i];
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

/* ---- the tables, made once ---- */

/* Each table's templates made into descriptions, by index, and an index of the first template
   of each (provider, Id): open addressing by the pair (PowerShell's Ids reach 53,504). */
#define INDEX_SLOTS 2048

struct index_slot {
        uint32_t key; /* provider << 16 | id, plus 1 << 31; 0: empty */
        uint16_t table, at;
};

static const struct clr_template *tables[2];
static size_t nr_in_table[2];
static struct tdh_event **events[2];
static struct index_slot slots[INDEX_SLOTS];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static uint32_t key_of(unsigned provider, uint16_t id)
{
        return 1u << 31 | (uint32_t)provider << 16 | id;
}

static struct index_slot *slot_of(uint32_t key)
{
        uint32_t i = (key * 0x9E3779B1u) >> 21;
        while (slots[i].key && slots[i].key != key)
                i = (i + 1) & (INDEX_SLOTS - 1);
        return &slots[i];
}

static void build(void)
{
        tables[0] = clr_templates, nr_in_table[0] = clr_nr_templates;
        tables[1] = ps_templates, nr_in_table[1] = ps_nr_templates;
        for (uint16_t k = 0; k < 2; k++) {
                size_t n = nr_in_table[k];
                events[k] = xcalloc(n ? n : 1, sizeof(*events[k]));
                for (size_t i = n; i-- > 0;) {
                        const struct clr_template *t = &tables[k][i];
                        events[k][i] = event_of(t);
                        struct index_slot *s = slot_of(key_of(t->provider, t->id));
                        *s = (struct index_slot){key_of(t->provider, t->id), k, (uint16_t)i};
                }
        }
}

/* The template of (provider, id, version): the one whose versions hold it, else (a version
   past the last known) the newest one's, which newer versions only append to. */
static const struct tdh_event *find(unsigned provider, uint16_t id, uint8_t version)
{
        pthread_once(&once, build);
        const struct index_slot *s = slot_of(key_of(provider, id));
        if (!s->key)
                return NULL;
        const struct clr_template *table = tables[s->table];
        struct tdh_event *const *made = events[s->table];
        const struct tdh_event *newest = NULL;
        uint8_t newest_max = 0;
        for (size_t i = s->at; i < nr_in_table[s->table]; i++) {
                const struct clr_template *t = &table[i];
                if (t->id != id || t->provider != provider)
                        break;
                if (version >= t->min_version && version <= t->max_version)
                        return made[i];
                if (t->max_version >= newest_max && version > t->max_version) {
                        newest = made[i];
                        newest_max = t->max_version;
                }
        }
        return newest;
}

int known_template_decode(struct kdecoder *d, struct kevent *ev, const uint8_t *p, size_t len,
                          unsigned psize, const GUID *provider, uint16_t id)
{
        int k = provider_of(provider);
        if (k < 0)
                return KEV_NO_LAYOUT;
        const struct tdh_event *e = find((unsigned)k, id, ev->version);
        if (!e)
                return KEV_NO_LAYOUT;
        const char *name = ev->name;
        int rc = tdh_decode(d->meta, e, d, ev, p, len, psize);
        if (name && name[0])
                ev->name = name; /* the decoder's own name for it (clr.c's) */
        return rc;
}
