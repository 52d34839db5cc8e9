/* SPDX-License-Identifier: MIT */
/* unnamed.c: owns the names of the manifest events no decoder names (no layout in the CLR's
   tables, no metadata or manifest in the trace): "{GUID}/EventID(N)", as TraceEvent names such
   an event by its Id; a WPP message, whose format files are not in the trace, by its message
   GUID and number: "{GUID}/Message(N)". One string per provider and Id for the decoder's life: the
   tables that count types by name compare the pointer first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kdecoder_int.h"

struct unnamed_event {
        GUID provider;
        uint16_t id;
        char *name; /* owned; NULL: a free slot */
};

static uint32_t slot_hash(const GUID *g, uint16_t id)
{
        uint32_t h = g->Data1 ^ ((uint32_t)g->Data2 << 16 ^ g->Data3) ^ (uint32_t)id * 0x9E3779B1u;
        h ^= (uint32_t)g->Data4[7] << 24 ^ (uint32_t)g->Data4[0] << 8;
        h ^= h >> 15;
        h *= 0x2C1B3C6Du;
        return h ^ (h >> 13);
}

static struct unnamed_event *slot_of(struct unnamed_event *t, uint32_t cap, const GUID *g,
                                     uint16_t id)
{
        uint32_t j = slot_hash(g, id) & (cap - 1);
        while (t[j].name && (t[j].id != id || !IsEqualGUID(&t[j].provider, g)))
                j = (j + 1) & (cap - 1);
        return &t[j];
}

static int grow(struct kdecoder *d)
{
        uint32_t cap = d->cap_unnamed ? d->cap_unnamed * 2 : 64;
        struct unnamed_event *t = calloc(cap, sizeof(*t));
        if (!t)
                return -1;
        for (uint32_t i = 0; i < d->cap_unnamed; i++)
                if (d->unnamed[i].name)
                        *slot_of(t, cap, &d->unnamed[i].provider, d->unnamed[i].id) = d->unnamed[i];
        free(d->unnamed);
        d->unnamed = t;
        d->cap_unnamed = cap;
        return 0;
}

const char *unnamed_event_name(struct kdecoder *d, const GUID *provider, uint16_t id,
                               bool is_message)
{
        if (d->cap_unnamed) {
                struct unnamed_event *e = slot_of(d->unnamed, d->cap_unnamed, provider, id);
                if (e->name)
                        return e->name;
        }
        if ((d->nr_unnamed + 1) * 2 > d->cap_unnamed && grow(d) < 0)
                return NULL;
        /* the GUID as kevent_text_guid writes it (lower case, braces) */
        const GUID *g = provider;
        char buf[96];
        snprintf(buf, sizeof(buf), "{%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x}/%s(%u)",
                 (unsigned)g->Data1, (unsigned)g->Data2, (unsigned)g->Data3, g->Data4[0],
                 g->Data4[1], g->Data4[2], g->Data4[3], g->Data4[4], g->Data4[5], g->Data4[6],
                 g->Data4[7], is_message ? "Message" : "EventID", (unsigned)id);
        char *name = strdup(buf);
        if (!name)
                return NULL;
        struct unnamed_event *e = slot_of(d->unnamed, d->cap_unnamed, provider, id);
        *e = (struct unnamed_event){*provider, id, name};
        d->nr_unnamed++;
        return name;
}

void unnamed_free(struct kdecoder *d)
{
        for (uint32_t i = 0; i < d->cap_unnamed; i++)
                free(d->unnamed[i].name);
        free(d->unnamed);
        d->unnamed = NULL;
        d->nr_unnamed = d->cap_unnamed = 0;
}
