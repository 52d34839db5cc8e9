/* SPDX-License-Identifier: MIT */
/* perf_data_trace.c: the TRACING_DATA of a perf.data file (feature 1, or pipe mode's
   HEADER_TRACING_DATA record): the format files of the tracepoints it recorded
   (tools/perf/util/trace-event-read.c's layout). */
#include "perf_data_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "le_bytes.h"

#define TRACING_MAGIC     "\027\010\104tracing"
#define TRACING_MAGIC_LEN 10u
#define MAX_FORMAT_SIZE   (1u << 20)

struct trace_cursor {
        const uint8_t *p;
        size_t size, pos;
};

static bool tc_skip(struct trace_cursor *c, uint64_t n)
{
        if (n > c->size - c->pos)
                return false;
        c->pos += (size_t)n;
        return true;
}

/* A NUL-terminated string; false when it has no NUL. */
static bool tc_string(struct trace_cursor *c, const char **s)
{
        const void *nul = memchr(c->p + c->pos, 0, c->size - c->pos);
        if (!nul)
                return false;
        *s = (const char *)c->p + c->pos;
        c->pos = (size_t)((const uint8_t *)nul - c->p) + 1;
        return true;
}

static bool tc_u32(struct trace_cursor *c, uint32_t *v)
{
        if (c->size - c->pos < 4)
                return false;
        *v = le_get32(c->p + c->pos);
        c->pos += 4;
        return true;
}

static bool tc_u64(struct trace_cursor *c, uint64_t *v)
{
        if (c->size - c->pos < 8)
                return false;
        *v = le_get64(c->p + c->pos);
        c->pos += 8;
        return true;
}

/* A named section ("header_page", "header_event"): its name, a u64 size, its bytes. */
static bool tc_named(struct trace_cursor *c, const char *name)
{
        const char *s;
        uint64_t n;
        return tc_string(c, &s) && strcmp(s, name) == 0 && tc_u64(c, &n) && tc_skip(c, n);
}

int perf_data_tracing_formats(const uint8_t *p, size_t size, perf_data_format_fn fn, void *ctx)
{
        struct trace_cursor c = {p, size, 0};
        const char *version;
        uint32_t page_size, nr;
        if (size < TRACING_MAGIC_LEN || memcmp(p, TRACING_MAGIC, TRACING_MAGIC_LEN) != 0)
                return -EBADMSG;
        c.pos = TRACING_MAGIC_LEN;
        if (!tc_string(&c, &version) || c.size - c.pos < 2)
                return -EBADMSG;
        if (p[c.pos] != 0) /* big-endian */
                return -EPROTONOSUPPORT;
        c.pos += 2; /* big_endian, long_size */
        if (!tc_u32(&c, &page_size) || !tc_named(&c, "header_page") ||
            !tc_named(&c, "header_event"))
                return -EBADMSG;
        /* ftrace's own formats */
        if (!tc_u32(&c, &nr))
                return -EBADMSG;
        for (uint32_t i = 0; i < nr; i++) {
                uint64_t n;
                if (!tc_u64(&c, &n) || !tc_skip(&c, n))
                        return -EBADMSG;
        }
        /* the systems' event formats */
        uint32_t nr_systems;
        if (!tc_u32(&c, &nr_systems))
                return -EBADMSG;
        for (uint32_t s = 0; s < nr_systems; s++) {
                const char *system;
                if (!tc_string(&c, &system) || !tc_u32(&c, &nr))
                        return -EBADMSG;
                for (uint32_t i = 0; i < nr; i++) {
                        uint64_t n;
                        if (!tc_u64(&c, &n) || n > c.size - c.pos)
                                return -EBADMSG;
                        if (n <= MAX_FORMAT_SIZE)
                                fn(ctx, system, (const char *)p + c.pos, (size_t)n);
                        c.pos += (size_t)n;
                }
        }
        return 0;
}

/* perf_data_name_tracepoints' walk: the format of the tracepoint whose ID is the wanted one. */
struct tp_name {
        uint64_t id;
        char name[256];
};

/* The value after "KEY: " on a line of text[0..len) into out (to its end of line), or false. */
static bool format_value(const char *text, size_t len, const char *key, char *out, size_t size)
{
        size_t klen = strlen(key);
        for (size_t i = 0; i + klen <= len; i++) {
                if ((i && text[i - 1] != '\n') || memcmp(text + i, key, klen) != 0)
                        continue;
                size_t s = i + klen, e = s;
                while (e < len && text[e] != '\n')
                        e++;
                size_t n = e - s < size - 1 ? e - s : size - 1;
                memcpy(out, text + s, n);
                out[n] = '\0';
                return true;
        }
        return false;
}

static void tp_name_of(void *ctx, const char *system, const char *text, size_t len)
{
        struct tp_name *t = ctx;
        char id[32], name[200];
        if (t->name[0] || !format_value(text, len, "ID: ", id, sizeof(id)) ||
            strtoull(id, NULL, 10) != t->id ||
            !format_value(text, len, "name: ", name, sizeof(name)))
                return;
        snprintf(t->name, sizeof(t->name), "%.50s:%s", system, name);
}

void perf_data_name_tracepoints(struct perf_data *pd)
{
        const struct perf_data_info *in = &pd->info;
        for (uint32_t i = 0; in->tracing_data && i < pd->nr_events; i++) {
                struct perf_data_event *ev = &pd->events[i];
                if (ev->attr.type != PERF_TYPE_TRACEPOINT || (ev->name && ev->name[0]))
                        continue;
                struct tp_name t = {ev->attr.config, ""};
                perf_data_tracing_formats(in->tracing_data, in->tracing_size, tp_name_of, &t);
                if (t.name[0])
                        perf_data_set_name(ev, t.name, strlen(t.name));
        }
}
