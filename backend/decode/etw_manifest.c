/* SPDX-License-Identifier: MIT */
/* etw_manifest.c: owns the reading of an ETW instrumentation manifest (the XML an EventSource
 * logs in its ManifestData events) into the trace's metadata registry: its events, their
 * templates, tasks, opcodes and maps, decoded afterwards as TDH-described events are. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etw_manifest.h"
#include "util/hash.h"
#include "util/xalloc.h"
#include "xml_tree.h"

#define MAX_PROPS 256

/* ---- the manifest's names of types and opcodes ---- */

static const struct {
        const char *name;
        uint16_t value;
} in_types[] =
        {
                {"win:UnicodeString", 1},
                {"win:AnsiString", 2},
                {"win:Int8", 3},
                {"win:UInt8", 4},
                {"win:Int16", 5},
                {"win:UInt16", 6},
                {"win:Int32", 7},
                {"win:UInt32", 8},
                {"win:Int64", 9},
                {"win:UInt64", 10},
                {"win:Float", 11},
                {"win:Double", 12},
                {"win:Boolean", 13},
                {"win:Binary", 14},
                {"win:GUID", 15},
                {"win:Pointer", 16},
                {"win:FILETIME", 17},
                {"win:SYSTEMTIME", 18},
                {"win:SID", 19},
                {"win:HexInt32", 20},
                {"win:HexInt64", 21},
                {"win:CountedUnicodeString", 22},
                {"win:CountedAnsiString", 23},
                {"win:UnicodeChar", 28},
                {"win:AnsiChar", 29},
                {"win:SizeT", 30},
},
  out_types[] =
          {
                  {"win:HexInt8", 16},       {"win:HexInt16", 17}, {"win:HexInt32", 18},
                  {"win:HexInt64", 19},      {"win:PID", 20},      {"win:TID", 21},
                  {"win:Port", 22},          {"win:IPv4", 23},     {"win:IPv6", 24},
                  {"win:SocketAddress", 25},
},
  std_opcodes[] = {
          {"win:Info", 0},    {"win:Start", 1},     {"win:Stop", 2},      {"win:DC_Start", 3},
          {"win:DC_Stop", 4}, {"win:Extension", 5}, {"win:Reply", 6},     {"win:Resume", 7},
          {"win:Suspend", 8}, {"win:Send", 9},      {"win:Receive", 240},
};

#define NR(a) (sizeof(a) / sizeof((a)[0]))

static bool lookup(const char *name, const void *table, size_t nr, uint16_t *out)
{
        const struct {
                const char *name;
                uint16_t value;
        } *t = table;

        for (size_t i = 0; name && i < nr; i++)
                if (strcmp(t[i].name, name) == 0) {
                        *out = t[i].value;
                        return true;
                }
        return false;
}

/* ---- the document ---- */

static bool is(const struct xml_node *n, const char *name)
{
        return strcmp(n->name, name) == 0;
}

static const struct xml_node *child(const struct xml_node *n, const char *name)
{
        for (const struct xml_node *c = n ? n->children : NULL; c; c = c->next)
                if (is(c, name))
                        return c;
        return NULL;
}

/* Whether the attribute is there with this value (the first n bytes of value when n is not
   SIZE_MAX). */
static bool attr_is(const struct xml_node *node, const char *name, const char *value, size_t n)
{
        const char *s = xml_attr(node, name);
        return s && (n == SIZE_MAX ? strcmp(s, value) == 0
                                   : strlen(s) == n && strncmp(s, value, n) == 0);
}

static bool attr_u64(const struct xml_node *n, const char *name, uint64_t *v)
{
        const char *s = xml_attr(n, name);
        char *end;

        if (!s)
                return false;
        *v = strtoull(s, &end, 0);
        return end != s && *end == 0;
}

/* The text of "$(string.ID)" from the string table, or s itself (a copy, the caller's). */
static char *resolve(const struct xml_node *strings, const char *s)
{
        if (!s)
                return xstrdup("");
        if (strncmp(s, "$(string.", 9) == 0 && strings) {
                size_t n = strlen(s + 9);
                if (n && s[9 + n - 1] == ')') {
                        for (const struct xml_node *c = strings->children; c; c = c->next) {
                                if (is(c, "string") && attr_is(c, "id", s + 9, n - 1)) {
                                        const char *v = xml_attr(c, "value");
                                        return xstrdup(v ? v : "");
                                }
                        }
                }
        }
        return xstrdup(s);
}

/* ---- lists looked up by name ---- */

/* A list's elem children by the value of their key attribute, the first of each value in
   document order (what find_named_scan finds): each event of a manifest looks up its task and
   its template by name, and scanning the provider's 100-odd of each for every event cost 2 M
   instructions for the x64 sample's four manifests. A manifest's indexes live while it loads.
   A value is the attribute's as attr reads it. */
#define NAMED_INDEXES 8

struct named_slot {
        const char *value; /* in the tree */
        const struct xml_node *node;
};

struct named_index {
        const struct xml_node *list; /* NULL: unused */
        const char *elem, *key;
        struct named_slot *slots; /* owned: mask + 1, open addressing */
        uint32_t mask;
};

struct named_cache {
        struct named_index idx[NAMED_INDEXES];
        uint32_t next; /* the one to reuse when all are taken */
};

static void named_index_free(struct named_index *x)
{
        free(x->slots);
        memset(x, 0, sizeof(*x));
}

static void named_cache_free(struct named_cache *nc)
{
        for (uint32_t i = 0; i < NAMED_INDEXES; i++)
                named_index_free(&nc->idx[i]);
}

static uint32_t named_hash(const char *v, uint32_t mask)
{
        return (uint32_t)hash_mix64(hash_fnv1a_str(v, HASH_FNV_OFFSET)) & mask;
}

static void named_index_build(struct named_index *x, const struct xml_node *list, const char *elem,
                              const char *key)
{
        uint32_t n = 0;
        for (const struct xml_node *c = list->children; c; c = c->next)
                n += is(c, elem);
        x->list = list;
        x->elem = elem;
        x->key = key;
        x->mask = 1;
        while (x->mask + 1 < 2 * n + 2)
                x->mask = 2 * x->mask + 1;
        x->slots = xcalloc((size_t)x->mask + 1, sizeof(*x->slots));
        for (const struct xml_node *c = list->children; c; c = c->next) {
                if (!is(c, elem))
                        continue;
                const char *v = xml_attr(c, key);
                if (!v)
                        continue;
                uint32_t i = named_hash(v, x->mask);
                while (x->slots[i].value && strcmp(x->slots[i].value, v) != 0)
                        i = (i + 1) & x->mask;
                if (!x->slots[i].value) /* the first of the value stays */
                        x->slots[i] = (struct named_slot){v, c};
        }
}

/* The named child element with attribute key=value in a list (tasks, templates...): the first
   in document order, through nc's index of the list (made at the list's first lookup). */
static const struct xml_node *find_named(struct named_cache *nc, const struct xml_node *list,
                                         const char *elem, const char *key, const char *value)
{
        if (!list || !value)
                return NULL;
        struct named_index *x = NULL;
        for (uint32_t i = 0; i < NAMED_INDEXES && !x; i++)
                if (nc->idx[i].list == list && strcmp(nc->idx[i].elem, elem) == 0 &&
                    strcmp(nc->idx[i].key, key) == 0)
                        x = &nc->idx[i];
        if (!x) {
                x = &nc->idx[nc->next];
                nc->next = (nc->next + 1) % NAMED_INDEXES;
                named_index_free(x);
                named_index_build(x, list, elem, key);
        }
        for (uint32_t i = named_hash(value, x->mask); x->slots[i].value; i = (i + 1) & x->mask)
                if (strcmp(x->slots[i].value, value) == 0)
                        return x->slots[i].node;
        return NULL;
}

/* ---- templates into TDH properties ---- */

struct props {
        struct tdh_prop p[MAX_PROPS];
        uint32_t nr;
};

/* count/length attributes: a number, or the name of an earlier top-level property */
static bool size_attr(const struct xml_node *d, const char *name, const struct props *top,
                      uint32_t nr_top, uint16_t *value, bool *is_param)
{
        const char *s = xml_attr(d, name);
        char *end;

        *is_param = false;
        *value = 0;
        if (!s)
                return true;
        unsigned long v = strtoul(s, &end, 0);
        bool ok = true;
        if (end != s && *end == 0) {
                *value = (uint16_t)(v > 0xFFFF ? 0xFFFF : v);
        } else {
                ok = false;
                for (uint32_t i = 0; i < nr_top; i++)
                        if (strcmp(top->p[i].name, s) == 0) {
                                *value = (uint16_t)i;
                                *is_param = ok = true;
                        }
        }
        return ok;
}

static int add_data(struct props *ps, const struct xml_node *d, uint32_t nr_top)
{
        if (ps->nr >= MAX_PROPS)
                return -EBADMSG;

        struct tdh_prop *p = &ps->p[ps->nr];
        const char *name = xml_attr(d, "name"), *in = xml_attr(d, "inType"),
                   *out = xml_attr(d, "outType");
        const char *map = xml_attr(d, "map");
        bool is_count = false, is_length = false;
        int rc = 0;

        memset(p, 0, sizeof(*p));
        p->name = xstrdup(name ? name : "");
        p->map_name = map ? xstrdup(map) : NULL;
        if (!lookup(in, in_types, NR(in_types), &p->in_type))
                rc = -EBADMSG; /* a type this reader cannot place: the template is unusable */
        lookup(out, out_types, NR(out_types), &p->out_type);
        if (!size_attr(d, "count", ps, nr_top, &p->count, &is_count) ||
            !size_attr(d, "length", ps, nr_top, &p->length, &is_length))
                rc = -EBADMSG;
        p->flags = (is_count ? 4u : 0) | (is_length ? 2u : 0);
        if (!is_count && p->count == 0)
                p->count = 1;
        ps->nr++;
        return rc;
}

static void props_free(struct props *ps)
{
        for (uint32_t i = 0; i < ps->nr; i++) {
                free(ps->p[i].name);
                free(ps->p[i].map_name);
        }
        ps->nr = 0;
}

/* The template's properties: the top level first, then each struct's members. */
static int template_props(const struct xml_node *t, struct props *ps, uint32_t *nr_top)
{
        int rc = 0;

        ps->nr = 0;
        for (const struct xml_node *c = t ? t->children : NULL; c && !rc; c = c->next) {
                if (is(c, "data")) {
                        rc = add_data(ps, c, ps->nr);
                } else if (is(c, "struct")) {
                        if (ps->nr >= MAX_PROPS)
                                return -EBADMSG;
                        struct tdh_prop *p = &ps->p[ps->nr];
                        const char *name = xml_attr(c, "name");
                        bool is_count;
                        memset(p, 0, sizeof(*p));
                        p->name = xstrdup(name ? name : "");
                        if (!size_attr(c, "count", ps, ps->nr, &p->count, &is_count))
                                rc = -EBADMSG;
                        p->flags = 1u | (is_count ? 4u : 0);
                        if (!is_count && p->count == 0)
                                p->count = 1;
                        ps->nr++;
                }
        }
        *nr_top = ps->nr;
        /* members after every top-level property, each struct's in a run */
        uint32_t top = ps->nr, k = 0;
        for (const struct xml_node *c = t ? t->children : NULL; c && !rc; c = c->next) {
                if (!is(c, "data") && !is(c, "struct"))
                        continue;
                if (is(c, "struct")) {
                        ps->p[k].struct_start = (uint16_t)ps->nr;
                        for (const struct xml_node *m = c->children; m && !rc; m = m->next)
                                if (is(m, "data"))
                                        rc = add_data(ps, m, 0);
                        ps->p[k].nr_members = (uint16_t)(ps->nr - ps->p[k].struct_start);
                }
                k++;
        }
        (void)top;
        return rc;
}

/* ---- what a load added ---- */

/* What one manifest's load put in the registry, kept with the manifest's text: an EventSource
   logs its manifest again (PerfView its own at the start and at the rundown, a session's
   capture state every source's), and the same text read again adds the same descriptions, so
   it is read only when something has replaced one of them since (see loaded_holds). */
struct loaded_maps {
        GUID g;           /* a provider the manifest names */
        uint32_t nr_maps; /* the registry's maps of g once the manifest was read */
};

struct manifest_loaded {
        GUID provider;                   /* the ManifestData events' provider */
        const struct tdh_registry *into; /* the registry it was read into */
        char *buf; /* owned: the manifest's text, NULL until it is read without an error */
        size_t len;
        const struct tdh_event **events; /* owned: the descriptions it added, in order */
        uint32_t nr_events, cap_events;
        struct loaded_maps *maps; /* owned: one a provider the manifest names */
        uint32_t nr_maps, cap_maps;
};

static void loaded_clear(struct manifest_loaded *ld)
{
        free(ld->buf);
        free(ld->events);
        free(ld->maps);
        memset(ld, 0, sizeof(*ld));
}

static void loaded_add_event(struct manifest_loaded *ld, const struct tdh_event *e)
{
        if (ld->nr_events == ld->cap_events) {
                ld->cap_events = ld->cap_events ? 2 * ld->cap_events : 16;
                ld->events = xrealloc(ld->events, ld->cap_events * sizeof(*ld->events));
        }
        ld->events[ld->nr_events++] = e;
}

static void loaded_add_provider(struct manifest_loaded *ld, const GUID *g)
{
        if (ld->nr_maps == ld->cap_maps) {
                ld->cap_maps = ld->cap_maps ? 2 * ld->cap_maps : 4;
                ld->maps = xrealloc(ld->maps, ld->cap_maps * sizeof(*ld->maps));
        }
        ld->maps[ld->nr_maps++] = (struct loaded_maps){.g = *g};
}

/* Whether the registry still holds everything ld's load added: each description is still the
   one found for its event, and no map of its providers was added since (a later one of a name
   replaces the earlier). Reading the same text again would then change nothing. */
static bool loaded_holds(const struct manifest_loaded *ld, const struct tdh_registry *r)
{
        for (uint32_t i = 0; i < ld->nr_events; i++) {
                const struct tdh_event *e = ld->events[i];
                if (tdh_registry_find(r, &e->provider, e->id, e->version, false) != e)
                        return false;
        }
        for (uint32_t i = 0; i < ld->nr_maps; i++)
                if (tdh_registry_nr_maps_of(r, &ld->maps[i].g) != ld->maps[i].nr_maps)
                        return false;
        return true;
}

/* ---- the provider ---- */

static bool parse_guid(const char *s, GUID *g)
{
        unsigned d[11];

        if (!s || sscanf(s, "{%8x-%4x-%4x-%2x%2x-%2x%2x%2x%2x%2x%2x}", &d[0], &d[1], &d[2], &d[3],
                         &d[4], &d[5], &d[6], &d[7], &d[8], &d[9], &d[10]) != 11)
                return false;
        g->Data1 = d[0];
        g->Data2 = (unsigned short)d[1];
        g->Data3 = (unsigned short)d[2];
        for (int i = 0; i < 8; i++)
                g->Data4[i] = (unsigned char)d[3 + i];
        return true;
}

static void load_maps(struct tdh_registry *r, const GUID *g, const struct xml_node *maps,
                      const struct xml_node *strings)
{
        for (const struct xml_node *m = maps ? maps->children : NULL; m; m = m->next) {
                bool is_bits = is(m, "bitMap");
                if (!is_bits && !is(m, "valueMap"))
                        continue;

                const char *name = xml_attr(m, "name");
                uint32_t nr = 0;
                for (const struct xml_node *e = m->children; e; e = e->next)
                        nr += is(e, "map");
                uint32_t *values = xcalloc(nr ? nr : 1, sizeof(*values));
                char **texts = xcalloc(nr ? nr : 1, sizeof(*texts));
                uint32_t i = 0;
                for (const struct xml_node *e = m->children; e; e = e->next) {
                        if (!is(e, "map"))
                                continue;
                        uint64_t v = 0;
                        attr_u64(e, "value", &v);
                        values[i] = (uint32_t)v;
                        texts[i++] = resolve(strings, xml_attr(e, "message"));
                }
                if (name)
                        tdh_registry_add_map(r, g, name, is_bits ? 2u : 1u, values, texts, nr);
                for (uint32_t j = 0; j < nr; j++)
                        free(texts[j]);
                free(texts);
                free(values);
        }
}

static void load_event(struct tdh_registry *r, const GUID *g, const char *prov_name,
                       const struct xml_node *ev, const struct xml_node *prov,
                       const struct xml_node *strings, struct named_cache *nc,
                       struct manifest_loaded *ld)
{
        uint64_t id = 0, version = 0;

        if (!attr_u64(ev, "value", &id) || id > 0xFFFF)
                return;
        attr_u64(ev, "version", &version);

        const char *task = xml_attr(ev, "task"), *opcode = xml_attr(ev, "opcode");
        const char *tmpl = xml_attr(ev, "template"), *symbol = xml_attr(ev, "symbol");
        const struct xml_node *t = find_named(nc, child(prov, "tasks"), "task", "name", task);
        uint16_t op = 0;
        const char *op_name = opcode;

        if (!lookup(opcode, std_opcodes, NR(std_opcodes), &op) && opcode) {
                /* an opcode of the provider's own, in <opcodes> or its task's */
                const struct xml_node *o =
                        find_named(nc, child(prov, "opcodes"), "opcode", "name", opcode);
                if (!o && t)
                        o = find_named(nc, child(t, "opcodes"), "opcode", "name", opcode);
                uint64_t v = 0;
                if (o && attr_u64(o, "value", &v))
                        op = (uint16_t)v;
        }
        if (op_name && strncmp(op_name, "win:", 4) == 0)
                op_name += 4;

        struct tdh_event *e = xcalloc(1, sizeof(*e));
        char name[512];
        const char *task_name = task ? task : symbol;
        char id_name[32];

        snprintf(id_name, sizeof(id_name), "EventID(%u)", (unsigned)id);
        if (op && op_name)
                snprintf(name, sizeof(name), "%s/%s/%s", prov_name, task_name ? task_name : id_name,
                         op_name);
        else
                snprintf(name, sizeof(name), "%s/%s", prov_name, task_name ? task_name : id_name);
        e->provider = *g;
        e->id = (uint16_t)id;
        e->version = (uint8_t)version;
        e->opcode = (uint8_t)op;
        e->name = xstrdup(name);

        struct props *ps = xmalloc(sizeof(*ps)); /* 256 properties: each cleared as it is taken */
        uint32_t nr_top = 0;
        const struct xml_node *tp =
                find_named(nc, child(prov, "templates"), "template", "tid", tmpl);

        if (template_props(tp, ps, &nr_top) == 0) {
                e->nr_props = ps->nr;
                e->nr_top = nr_top;
                e->props = xcalloc(ps->nr ? ps->nr : 1, sizeof(*e->props));
                memcpy(e->props, ps->p, ps->nr * sizeof(*e->props));
                ps->nr = 0; /* moved */
                tdh_registry_add_event(r, e, false);
                loaded_add_event(ld, e);
        } else {
                props_free(ps);
                tdh_event_free(e);
        }
        free(ps);
        (void)strings;
}

/* Adds the events and maps of every provider in the manifest xml[0..size) to r; name gets the
   first provider's name, ld what was added (its text left to the caller). Returns 0, or
   -EBADMSG with err saying why (not XML, no provider), or -ENOSYS where expat cannot be
   loaded. A template with a type this reader cannot place leaves its event undescribed. */
static int etw_manifest_load(struct tdh_registry *r, const char *xml, size_t size, char *name,
                             size_t name_size, char *err, size_t err_size,
                             struct manifest_loaded *ld)
{
        if (name_size)
                name[0] = 0;
        if (size > 16u << 20 || size > (size_t)INT32_MAX) {
                snprintf(err, err_size, "manifest of %zu bytes: over 16 MiB", size);
                return -EBADMSG;
        }

        /* No network, no external entities or DTDs: a manifest comes from the traced system.
           The decoder keeps an -ENOSYS's why for the user (kdecoder_stats.warning). */
        struct xml_tree *tree;
        char why[256];
        int rc = xml_tree_parse(xml, size, &tree, why, sizeof(why));
        if (rc) {
                snprintf(err, err_size, rc == -ENOSYS ? "%s" : "manifest is not XML: %s", why);
                return rc == -ENOSYS ? rc : -EBADMSG;
        }

        const struct xml_node *root = xml_tree_root(tree);
        const struct xml_node *instr = child(root, "instrumentation");
        const struct xml_node *strings =
                child(child(child(root, "localization"), "resources"), "stringTable");
        int nr_providers = 0;
        struct named_cache nc;

        memset(&nc, 0, sizeof(nc));

        for (const struct xml_node *evs = instr ? instr->children : NULL; evs; evs = evs->next) {
                if (!is(evs, "events"))
                        continue;
                for (const struct xml_node *prov = evs->children; prov; prov = prov->next) {
                        if (!is(prov, "provider"))
                                continue;
                        const char *gs = xml_attr(prov, "guid"), *pn = xml_attr(prov, "name");
                        GUID g;
                        if (parse_guid(gs, &g) && pn) {
                                load_maps(r, &g, child(prov, "maps"), strings);
                                for (const struct xml_node *ev =
                                             child(child(prov, "events"), "event");
                                     ev; ev = ev->next)
                                        if (is(ev, "event"))
                                                load_event(r, &g, pn, ev, prov, strings, &nc, ld);
                                loaded_add_provider(ld, &g);
                                if (!nr_providers && name_size)
                                        snprintf(name, name_size, "%s", pn);
                                nr_providers++;
                        }
                }
        }
        named_cache_free(&nc);
        xml_tree_free(tree);
        /* counted once every provider is read: one manifest may name a provider twice */
        for (uint32_t i = 0; i < ld->nr_maps; i++)
                ld->maps[i].nr_maps = tdh_registry_nr_maps_of(r, &ld->maps[i].g);
        if (!nr_providers) {
                snprintf(err, err_size, "manifest names no provider with a name and a GUID");
                return -EBADMSG;
        }
        return 0;
}

/* ---- ManifestData chunks ---- */

#define ENVELOPE_SIZE  8
#define ENVELOPE_MAGIC 0x5B
#define MAX_PENDING    16

struct manifest_pending {
        GUID provider;
        uint16_t total, next;
        char *buf; /* owned */
        size_t len;
};

struct manifest_name {
        GUID provider;
        char *name; /* owned: "Provider/ManifestData" */
};

struct etw_manifests {
        struct manifest_pending pending[MAX_PENDING];
        struct manifest_name *names; /* owned */
        uint32_t nr_names, cap_names;
        struct manifest_loaded *loaded; /* owned: the last manifest read of each provider */
        uint32_t nr_loaded, cap_loaded;
};

struct etw_manifests *etw_manifests_new(void)
{
        return xcalloc(1, sizeof(struct etw_manifests));
}

void etw_manifests_free(struct etw_manifests *m)
{
        if (!m)
                return;
        for (int i = 0; i < MAX_PENDING; i++)
                free(m->pending[i].buf);
        for (uint32_t i = 0; i < m->nr_names; i++)
                free(m->names[i].name);
        free(m->names);
        for (uint32_t i = 0; i < m->nr_loaded; i++)
                loaded_clear(&m->loaded[i]);
        free(m->loaded);
        free(m);
}

/* The provider's last manifest read, cleared for the next when clear (a new slot if none). */
static struct manifest_loaded *loaded_of(struct etw_manifests *m, const GUID *g, bool clear)
{
        for (uint32_t i = 0; i < m->nr_loaded; i++) {
                struct manifest_loaded *ld = &m->loaded[i];
                if (memcmp(&ld->provider, g, sizeof(*g)) == 0) {
                        if (clear)
                                loaded_clear(ld);
                        ld->provider = *g;
                        return ld;
                }
        }
        if (!clear)
                return NULL;
        if (m->nr_loaded == m->cap_loaded) {
                m->cap_loaded = m->cap_loaded ? 2 * m->cap_loaded : 4;
                m->loaded = xrealloc(m->loaded, m->cap_loaded * sizeof(*m->loaded));
        }
        struct manifest_loaded *ld = &m->loaded[m->nr_loaded++];
        memset(ld, 0, sizeof(*ld));
        ld->provider = *g;
        return ld;
}

static const char *name_of(const struct etw_manifests *m, const GUID *g)
{
        for (uint32_t i = 0; i < m->nr_names; i++)
                if (memcmp(&m->names[i].provider, g, sizeof(*g)) == 0)
                        return m->names[i].name;
        return NULL;
}

static void name_set(struct etw_manifests *m, const GUID *g, const char *provider_name)
{
        char buf[300];

        if (name_of(m, g))
                return;
        if (m->nr_names == m->cap_names) {
                m->cap_names = m->cap_names ? 2 * m->cap_names : 8;
                m->names = xrealloc(m->names, m->cap_names * sizeof(*m->names));
        }
        snprintf(buf, sizeof(buf), "%s/ManifestData", provider_name);
        m->names[m->nr_names].provider = *g;
        m->names[m->nr_names++].name = xstrdup(buf);
}

const char *etw_manifests_chunk(struct etw_manifests *m, struct tdh_registry *r, const GUID *g,
                                const uint8_t *p, size_t size, int *rc, char *err, size_t err_size)
{
        *rc = 0;
        if (size < ENVELOPE_SIZE || p[3] != ENVELOPE_MAGIC) {
                snprintf(err, err_size, "ManifestData without its envelope (magic 0x5B at 3)");
                *rc = -EBADMSG;
                return name_of(m, g);
        }

        uint16_t total = (uint16_t)(p[4] | p[5] << 8), nr = (uint16_t)(p[6] | p[7] << 8);
        struct manifest_pending *pd = NULL;

        for (int i = 0; i < MAX_PENDING && !pd; i++)
                if (m->pending[i].buf && !memcmp(&m->pending[i].provider, g, sizeof(*g)))
                        pd = &m->pending[i];
        if (nr == 0) { /* a manifest begins: it replaces one left unfinished */
                if (!pd)
                        for (int i = 0; i < MAX_PENDING && !pd; i++)
                                if (!m->pending[i].buf)
                                        pd = &m->pending[i];
                if (!pd)
                        pd = &m->pending[0]; /* too many at once: the oldest slot goes */
                free(pd->buf);
                *pd = (struct manifest_pending){.provider = *g, .total = total};
                pd->buf = xcalloc(1, 1);
        }
        if (!pd || nr != pd->next || total != pd->total || total == 0) {
                snprintf(err, err_size, "ManifestData chunk %u of %u out of order", nr, total);
                *rc = -EBADMSG;
                return name_of(m, g);
        }
        size_t n = size - ENVELOPE_SIZE;
        if (pd->len + n > 16u << 20) {
                snprintf(err, err_size, "manifest over 16 MiB");
                free(pd->buf);
                memset(pd, 0, sizeof(*pd));
                *rc = -EBADMSG;
                return name_of(m, g);
        }
        pd->buf = xrealloc(pd->buf, pd->len + n + 1);
        memcpy(pd->buf + pd->len, p + ENVELOPE_SIZE, n);
        pd->len += n;
        pd->next++;
        if (pd->next == pd->total) {
                const struct manifest_loaded *was = loaded_of(m, g, false);
                if (was && was->buf && was->into == r && was->len == pd->len &&
                    memcmp(was->buf, pd->buf, pd->len) == 0 && loaded_holds(was, r)) {
                        /* read before, and nothing it added replaced since: as it was read */
                        free(pd->buf);
                        memset(pd, 0, sizeof(*pd));
                        return name_of(m, g);
                }
                char prov[256];
                struct manifest_loaded *ld = loaded_of(m, g, true);
                *rc = etw_manifest_load(r, pd->buf, pd->len, prov, sizeof(prov), err, err_size, ld);
                if (*rc == 0) {
                        name_set(m, g, prov);
                        ld->buf = pd->buf; /* kept with what it added */
                        ld->len = pd->len;
                        ld->into = r;
                        pd->buf = NULL;
                } else if (*rc == -ENOSYS) { /* no expat: the provider's events stay undecoded */
                        *rc = 0;
                }
                free(pd->buf);
                memset(pd, 0, sizeof(*pd));
        }
        return name_of(m, g);
}
