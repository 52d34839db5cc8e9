/* SPDX-License-Identifier: MIT */
/* tdh_info.c: owns TRACE_EVENT_INFO's bytes (as KernelTraceControl's MetaData EventInfo events
 * carry them) parsed into an event's description (struct tdh_event), checked field by field. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/utf.h"
#include "util/xalloc.h"
#include "le_bytes.h"
#include "tdh_layout.h"
#include "tdh_meta.h"
#include "tdh_types.h"

/* TRACE_EVENT_INFO (tdh.h): the fixed part, then EVENT_PROPERTY_INFO[PropertyCount] */
#define TEI_EVENT_DESCRIPTOR 32
#define TEI_DECODING_SOURCE  48
#define TEI_PROVIDER_NAME    52
#define TEI_TASK_NAME        68
#define TEI_OPCODE_NAME      72
#define TEI_EVENT_NAME       92
#define TEI_PROPERTY_COUNT   100
#define TEI_TOP_LEVEL_COUNT  104
#define TEI_PROPERTIES       112
#define EPI_SIZE             24

int tdh_bad(char *err, size_t err_size, const char *what, size_t off)
{
        if (err && err_size)
                snprintf(err, err_size, "%s at byte offset %zu", what, off);
        return -EBADMSG;
}

char *tdh_string_at(const uint8_t *p, size_t size, uint32_t off)
{
        char buf[512];

        if (off == 0 || off >= size)
                return NULL;
        utf16le_to_utf8(p + off, (size - off) / 2, buf, sizeof(buf));
        return xstrdup(buf);
}

void tdh_event_free(struct tdh_event *e)
{
        if (!e)
                return;
        for (uint32_t i = 0; e->props && i < e->nr_props; i++) {
                free(e->props[i].name);
                free(e->props[i].map_name);
        }
        free(e->props);
        free(e->name);
        tdh_layout_free(e);
        free(e);
}

/* "Provider/Task/Opcode" as TraceEvent names a manifest event: the opcode when it is not Info
   (0), the event's own name, or "EventID(N)" when the task has no name. */
static char *event_name(const uint8_t *p, size_t size, const struct tdh_event *e)
{
        char *prov = tdh_string_at(p, size, le_get32(p + TEI_PROVIDER_NAME));
        char *task = tdh_string_at(p, size, le_get32(p + TEI_TASK_NAME));
        char *op = e->opcode ? tdh_string_at(p, size, le_get32(p + TEI_OPCODE_NAME)) : NULL;
        /* the manifest's standard opcodes come as "win:Start": TraceEvent shows "Start" */
        if (op && strncmp(op, "win:", 4) == 0)
                memmove(op, op + 4, strlen(op + 4) + 1);
        char *ev = tdh_string_at(p, size, le_get32(p + TEI_EVENT_NAME));
        char id[32], buf[1024];

        snprintf(id, sizeof(id), "EventID(%u)", (unsigned)e->id);
        const char *t = task && *task ? task : ev && *ev ? ev : id;
        if (op && *op)
                snprintf(buf, sizeof(buf), "%s/%s/%s", prov && *prov ? prov : "?", t, op);
        else
                snprintf(buf, sizeof(buf), "%s/%s", prov && *prov ? prov : "?", t);
        free(prov);
        free(task);
        free(op);
        free(ev);
        return xstrdup(buf);
}

int tdh_event_parse(const uint8_t *p, size_t size, struct tdh_event **out, char *err,
                    size_t err_size)
{
        *out = NULL;
        if (size < TEI_PROPERTIES)
                return tdh_bad(err, err_size, "TRACE_EVENT_INFO shorter than its 112-byte header",
                               size);

        uint32_t nr = le_get32(p + TEI_PROPERTY_COUNT), nr_top = le_get32(p + TEI_TOP_LEVEL_COUNT);

        if (nr > (size - TEI_PROPERTIES) / EPI_SIZE)
                return tdh_bad(err, err_size, "PropertyCount past the end of the TRACE_EVENT_INFO",
                               TEI_PROPERTY_COUNT);
        if (nr_top > nr)
                return tdh_bad(err, err_size, "TopLevelPropertyCount over PropertyCount",
                               TEI_TOP_LEVEL_COUNT);

        struct tdh_event *e = xcalloc(1, sizeof(*e));

        memcpy(&e->provider, p, sizeof(GUID));
        memcpy(&e->event_guid, p + 16, sizeof(GUID));
        e->id = le_get16(p + TEI_EVENT_DESCRIPTOR);
        e->version = p[TEI_EVENT_DESCRIPTOR + 2];
        e->opcode = p[TEI_EVENT_DESCRIPTOR + 5];
        e->task = le_get16(p + TEI_EVENT_DESCRIPTOR + 6);
        e->decoding_source = le_get32(p + TEI_DECODING_SOURCE);
        e->nr_props = nr;
        e->nr_top = nr_top;
        e->props = xcalloc(nr ? nr : 1, sizeof(*e->props));
        for (uint32_t i = 0; i < nr; i++) {
                const uint8_t *q = p + TEI_PROPERTIES + (size_t)i * EPI_SIZE;
                struct tdh_prop *pr = &e->props[i];
                size_t at = TEI_PROPERTIES + (size_t)i * EPI_SIZE;

                pr->flags = le_get32(q) & ~(TDH_PROPERTY_TL_VCOUNT | TDH_PROPERTY_TL_LENGTH16);
                pr->name = tdh_string_at(p, size, le_get32(q + 4));
                if (!pr->name)
                        pr->name = xstrdup("");
                if (pr->flags & PROPERTY_STRUCT) {
                        pr->struct_start = le_get16(q + 8);
                        pr->nr_members = le_get16(q + 10);
                        if ((uint32_t)pr->struct_start + pr->nr_members > nr ||
                            pr->struct_start <= i) {
                                tdh_event_free(e);
                                return tdh_bad(err, err_size, "struct members out of range",
                                               at + 8);
                        }
                } else {
                        pr->in_type = le_get16(q + 8);
                        pr->out_type = le_get16(q + 10);
                        pr->map_name = tdh_string_at(p, size, le_get32(q + 12));
                }
                pr->count = le_get16(q + 16);
                pr->length = le_get16(q + 18);
                if (((pr->flags & PROPERTY_PARAM_COUNT) && pr->count >= i) ||
                    ((pr->flags & PROPERTY_PARAM_LENGTH) && pr->length >= i)) {
                        tdh_event_free(e);
                        return tdh_bad(err, err_size,
                                       "a count or length taken from a property that does not come "
                                       "before it",
                                       at + 16);
                }
        }
        e->name = event_name(p, size, e);
        *out = e;
        return 0;
}
