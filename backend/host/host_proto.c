/* SPDX-License-Identifier: MIT */
/* host_proto.c: owns the session host's wire format: message encoders, and the parsers that take
   bytes and trust no length (host_proto.h). No I/O here: host_io.c moves the bytes. */
#include "host_proto.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etw/evntrace.h"
#include "session.h"
#include "util/xalloc.h"

/* EVENT_TRACE_PROPERTIES' first field is Wnode.BufferSize. */
_Static_assert(offsetof(EVENT_TRACE_PROPERTIES, Wnode.BufferSize) == 0, "Wnode.BufferSize first");
_Static_assert(sizeof(CLASSIC_EVENT_ID) == 24, "CLASSIC_EVENT_ID is 24 bytes");
#define MAX_STACK_IDS 256 /* LIVE_MAX_STACK_HOOKS */
#define MAX_LBR_IDS   4   /* EVNTRACE_MAX_LBR_EVENTS */

/* ---- building ----------------------------------------------------------------------------- */

static void put(struct host_msg *m, const void *p, size_t n)
{
        if (m->size + n > m->cap) {
                size_t cap = m->cap ? m->cap : 256;
                while (cap < m->size + n)
                        cap *= 2;
                m->data = xrealloc(m->data, cap);
                m->cap = cap;
        }
        if (n)
                memcpy(m->data + m->size, p, n);
        m->size += n;
}

static void host_msg_begin(struct host_msg *m, uint16_t type)
{
        m->size = 0;
        uint32_t magic = HOST_PROTO_MAGIC, zero = 0;
        uint16_t version = HOST_PROTO_VERSION;
        put(m, &magic, 4);
        put(m, &version, 2);
        put(m, &type, 2);
        put(m, &zero, 4); /* the body length, patched by host_msg_end */
        put(m, &zero, 4);
}

static void host_msg_u32(struct host_msg *m, uint32_t v)
{
        put(m, &v, sizeof(v));
}

static void host_msg_u64(struct host_msg *m, uint64_t v)
{
        put(m, &v, sizeof(v));
}

static void host_msg_blob(struct host_msg *m, const void *data, size_t size)
{
        host_msg_u32(m, (uint32_t)size);
        put(m, data, size);
}

/* A counted string (str may be NULL: empty) or blob. */
static void host_msg_str(struct host_msg *m, const char *str)
{
        host_msg_blob(m, str, str ? strlen(str) : 0);
}

/* Patches the body length into the header. */
static void host_msg_end(struct host_msg *m)
{
        uint32_t body = (uint32_t)(m->size - HOST_HEADER_SIZE);
        memcpy(m->data + 8, &body, 4);
}

void host_msg_free(struct host_msg *m)
{
        free(m->data);
        memset(m, 0, sizeof(*m));
}

void host_msg_request(struct host_msg *m, const struct host_request *rq)
{
        host_msg_begin(m, rq->type);
        host_msg_u32(m, rq->flags);
        host_msg_u64(m, rq->handle);
        host_msg_u32(m, rq->code);
        host_msg_u32(m, rq->length);
        host_msg_u64(m, rq->value);
        host_msg_str(m, rq->name);
        host_msg_str(m, rq->path);
        host_msg_blob(m, rq->data, rq->data_size);
        host_msg_blob(m, rq->extra, rq->extra_size);
        if (rq->flags & HOST_FLAG_HAS_DEFAULTS) {
                const struct session_start_defaults *d = &rq->defaults;
                host_msg_u32(m, (uint32_t)d->pid);
                host_msg_u32(m, d->nr_sources);
                for (uint32_t i = 0; i < d->nr_sources && i < SESSION_MAX_SOURCES; i++)
                        host_msg_u32(m, d->sources[i]);
                host_msg_u32(m, d->nr_intervals);
                for (uint32_t i = 0; i < d->nr_intervals && i < SESSION_MAX_INTERVALS; i++) {
                        host_msg_u32(m, d->intervals[i].source);
                        host_msg_u32(m, d->intervals[i].interval);
                }
        }
        host_msg_end(m);
}

void host_msg_reply(struct host_msg *m, const struct host_reply *rp)
{
        host_msg_begin(m, HOST_REPLY);
        host_msg_u32(m, rp->code);
        host_msg_u32(m, (uint32_t)rp->rc);
        host_msg_u64(m, rp->handle);
        host_msg_u32(m, rp->length);
        host_msg_str(m, rp->msg);
        host_msg_blob(m, rp->data, rp->data_size);
        host_msg_end(m);
}

void host_msg_rt_buffer(struct host_msg *m, uint64_t nr_lost, const uint8_t *buf, uint32_t size)
{
        host_msg_begin(m, HOST_RT_BUFFER);
        host_msg_u64(m, nr_lost);
        host_msg_u32(m, size);
        host_msg_u32(m, 0);
        put(m, buf, size);
        host_msg_end(m);
}

void host_msg_rt_buffer_head(uint8_t head[HOST_RT_DATA_OFFSET], uint64_t nr_lost, uint32_t size)
{
        uint32_t magic = HOST_PROTO_MAGIC, body = HOST_RT_DATA_OFFSET - HOST_HEADER_SIZE + size,
                 zero = 0;
        uint16_t version = HOST_PROTO_VERSION, type = HOST_RT_BUFFER;
        memcpy(head, &magic, 4);
        memcpy(head + 4, &version, 2);
        memcpy(head + 6, &type, 2);
        memcpy(head + 8, &body, 4);
        memcpy(head + 12, &zero, 4);
        memcpy(head + 16, &nr_lost, 8);
        memcpy(head + 24, &size, 4);
        memcpy(head + 28, &zero, 4);
}

void host_msg_rt_end(struct host_msg *m, uint32_t code, uint64_t nr_lost)
{
        host_msg_begin(m, HOST_RT_END);
        host_msg_u32(m, code);
        host_msg_u32(m, 0);
        host_msg_u64(m, nr_lost);
        host_msg_end(m);
}

void host_msg_rt_ring(struct host_msg *m, uint32_t nr_slots, uint32_t slot_size)
{
        host_msg_begin(m, HOST_RT_RING);
        host_msg_u32(m, nr_slots);
        host_msg_u32(m, slot_size);
        host_msg_end(m);
}

void host_msg_rt_slots(struct host_msg *m, uint64_t nr_lost, uint64_t seq, uint32_t count,
                       uint32_t size)
{
        host_msg_begin(m, HOST_RT_SLOTS);
        host_msg_u64(m, nr_lost);
        host_msg_u64(m, seq);
        host_msg_u32(m, count);
        host_msg_u32(m, size);
        host_msg_end(m);
}

void host_msg_rt_pool(struct host_msg *m, uint32_t nr_buffers, uint32_t buffer_size)
{
        host_msg_begin(m, HOST_RT_POOL);
        host_msg_u32(m, nr_buffers);
        host_msg_u32(m, buffer_size);
        host_msg_end(m);
}

void host_msg_rt_places(struct host_msg *m, uint64_t nr_lost, uint64_t seq, const uint32_t *idx,
                        uint32_t count, uint32_t size)
{
        host_msg_begin(m, HOST_RT_PLACES);
        host_msg_u64(m, nr_lost);
        host_msg_u64(m, seq);
        host_msg_u32(m, count);
        host_msg_u32(m, size);
        for (uint32_t i = 0; i < count; i++)
                host_msg_u32(m, idx[i]);
        host_msg_end(m);
}

void host_msg_rt_state(struct host_msg *m, uint64_t settings_gen, uint64_t nr_events_lost,
                       uint64_t nr_buffers_written, uint64_t nr_rt_buffers_lost,
                       uint32_t buffer_size_kb, uint32_t max_file_mb)
{
        host_msg_begin(m, HOST_RT_STATE);
        host_msg_u64(m, settings_gen);
        host_msg_u64(m, nr_events_lost);
        host_msg_u64(m, nr_buffers_written);
        host_msg_u64(m, nr_rt_buffers_lost);
        host_msg_u32(m, buffer_size_kb);
        host_msg_u32(m, max_file_mb);
        host_msg_end(m);
}

void host_msg_rt_release(struct host_msg *m, uint64_t seq)
{
        host_msg_begin(m, HOST_RT_RELEASE);
        host_msg_u64(m, seq);
        host_msg_end(m);
}

/* ---- parsing ------------------------------------------------------------------------------ */

/* A cursor over a message body; the first error sticks, with its offset in the message. */
struct reader {
        const uint8_t *p;
        size_t size;
        size_t pos;
        int error;
        char *why;
        size_t why_size;
};

static void fail(struct reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(struct reader *r, const char *fmt, ...)
{
        if (r->error)
                return;
        r->error = -EBADMSG;
        if (!r->why || !r->why_size)
                return;
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(r->why, r->why_size, fmt, ap);
        va_end(ap);
        if (n >= 0 && (size_t)n < r->why_size)
                snprintf(r->why + n, r->why_size - (size_t)n, " (at byte %zu)", r->pos);
}

static bool take(struct reader *r, void *out, size_t n, const char *what)
{
        if (r->error)
                return false;
        if (r->size - r->pos < n) {
                fail(r, "%s: %zu bytes needed, %zu left", what, n, r->size - r->pos);
                return false;
        }
        memcpy(out, r->p + r->pos, n);
        r->pos += n;
        return true;
}

static uint32_t rd_u32(struct reader *r, const char *what)
{
        uint32_t v = 0;
        take(r, &v, sizeof(v), what);
        return v;
}

static uint64_t rd_u64(struct reader *r, const char *what)
{
        uint64_t v = 0;
        take(r, &v, sizeof(v), what);
        return v;
}

/* A counted blob of at most max bytes, borrowed. */
static const uint8_t *rd_blob(struct reader *r, uint32_t max, uint32_t *size, const char *what)
{
        *size = 0;
        uint32_t n = rd_u32(r, what);
        if (r->error)
                return NULL;
        if (n > max) {
                fail(r, "%s: %u bytes, at most %u", what, n, max);
                return NULL;
        }
        if (r->size - r->pos < n) {
                fail(r, "%s: %u bytes said, %zu left", what, n, r->size - r->pos);
                return NULL;
        }
        const uint8_t *b = r->p + r->pos;
        r->pos += n;
        *size = n;
        return n ? b : NULL;
}

/* A counted string of at most max bytes, without NULs, copied to out (max + 1 bytes). */
static void rd_str(struct reader *r, char *out, uint32_t max, const char *what)
{
        uint32_t n;
        out[0] = '\0';
        const uint8_t *b = rd_blob(r, max, &n, what);
        if (r->error)
                return;
        if (n && memchr(b, '\0', n)) {
                fail(r, "%s: a NUL inside the string", what);
                return;
        }
        if (n)
                memcpy(out, b, n);
        out[n] = '\0';
}

static void reader_init(struct reader *r, const uint8_t *msg, size_t size, char *why,
                        size_t why_size)
{
        memset(r, 0, sizeof(*r));
        r->p = msg;
        r->size = size;
        r->pos = HOST_HEADER_SIZE;
        r->why = why;
        r->why_size = why_size;
        if (why && why_size)
                why[0] = '\0';
}

static int reader_finish(struct reader *r)
{
        if (!r->error && r->pos != r->size)
                fail(r, "%zu bytes after the last field", r->size - r->pos);
        return r->error;
}

bool host_proto_is_kept_after(uint16_t type)
{
        switch (type) {
        case HOST_REQ_CONTROL:
        case HOST_REQ_SET_INFO:
        case HOST_REQ_QUERY_INFO:
        case HOST_REQ_LBR:
        case HOST_REQ_ENUMERATE:
        case HOST_REQ_PING: return true;
        default: return false;
        }
}

const char *host_proto_type_name(uint16_t type)
{
        switch (type) {
        case HOST_REQ_START: return "START";
        case HOST_REQ_CONTROL: return "CONTROL";
        case HOST_REQ_SET_INFO: return "SET_INFO";
        case HOST_REQ_QUERY_INFO: return "QUERY_INFO";
        case HOST_REQ_LBR: return "LBR";
        case HOST_REQ_ENUMERATE: return "ENUMERATE";
        case HOST_REQ_RT_HEADER: return "RT_HEADER";
        case HOST_REQ_RT_ATTACH: return "RT_ATTACH";
        case HOST_REQ_KEEP_WINDOW: return "KEEP_WINDOW";
        case HOST_REQ_SAVE_WINDOW: return "SAVE_WINDOW";
        case HOST_REQ_PING: return "PING";
        case HOST_REQ_BIND: return "BIND";
        case HOST_REPLY: return "REPLY";
        case HOST_RT_BUFFER: return "RT_BUFFER";
        case HOST_RT_END: return "RT_END";
        case HOST_RT_RING: return "RT_RING";
        case HOST_RT_SLOTS: return "RT_SLOTS";
        case HOST_RT_RELEASE: return "RT_RELEASE";
        case HOST_RT_POOL: return "RT_POOL";
        case HOST_RT_PLACES: return "RT_PLACES";
        case HOST_RT_STATE: return "RT_STATE";
        default: return "unknown";
        }
}

void host_say(char *why, size_t why_size, const char *fmt, ...)
{
        if (!why || !why_size)
                return;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, why_size, fmt, ap);
        va_end(ap);
}

int host_proto_check_header(const uint8_t *hdr, size_t size, uint16_t *type, uint32_t *body_size,
                            char *why, size_t why_size)
{
        if (size < HOST_HEADER_SIZE) {
                host_say(why, why_size, "a header of %zu bytes, %d needed", size, HOST_HEADER_SIZE);
                return -EBADMSG;
        }
        uint32_t magic, body, reserved;
        uint16_t version, t;
        memcpy(&magic, hdr, 4);
        memcpy(&version, hdr + 4, 2);
        memcpy(&t, hdr + 6, 2);
        memcpy(&body, hdr + 8, 4);
        memcpy(&reserved, hdr + 12, 4);
        if (magic != HOST_PROTO_MAGIC) {
                host_say(why, why_size, "not a session host message (magic 0x%08x)", magic);
                return -EPROTO;
        }
        if (version != HOST_PROTO_VERSION) {
                host_say(why, why_size, "protocol version %u; this library speaks version %d",
                         version, HOST_PROTO_VERSION);
                return -EPROTO;
        }
        if (body > HOST_MAX_BODY) {
                host_say(why, why_size, "a %s message of %u bytes, at most %u",
                         host_proto_type_name(t), body, (unsigned)HOST_MAX_BODY);
                return -EMSGSIZE;
        }
        if (reserved != 0) {
                host_say(why, why_size, "reserved header field 0x%08x is not 0", reserved);
                return -EBADMSG;
        }
        *type = t;
        *body_size = body;
        return 0;
}

/* The header of a whole message: its type, and its body length is what follows. */
static int check_whole(const uint8_t *msg, size_t size, uint16_t *type, char *why, size_t why_size)
{
        uint32_t body;
        int rc = host_proto_check_header(msg, size, type, &body, why, why_size);
        if (rc < 0)
                return rc;
        if ((size_t)body != size - HOST_HEADER_SIZE) {
                host_say(why, why_size, "the header says %u body bytes, the message has %zu", body,
                         size - HOST_HEADER_SIZE);
                return -EBADMSG;
        }
        return 0;
}

/* Whole EVENT_TRACE_PROPERTIES whose Wnode.BufferSize is the blob's size. */
static void check_props(struct reader *r, const uint8_t *data, uint32_t size)
{
        if (r->error)
                return;
        if (size < sizeof(EVENT_TRACE_PROPERTIES)) {
                fail(r, "EVENT_TRACE_PROPERTIES of %u bytes, %zu needed", size,
                     sizeof(EVENT_TRACE_PROPERTIES));
                return;
        }
        uint32_t buffer_size;
        memcpy(&buffer_size, data, 4);
        if (buffer_size != size)
                fail(r, "Wnode.BufferSize %u is not the %u bytes sent", buffer_size, size);
}

int host_proto_decode_request(const uint8_t *msg, size_t size, struct host_request *rq, char *why,
                              size_t why_size)
{
        memset(rq, 0, sizeof(*rq));
        uint16_t type;
        int rc = check_whole(msg, size, &type, why, why_size);
        if (rc < 0)
                return rc;
        if (type < HOST_REQ_START || type > HOST_REQ_LAST) {
                host_say(why, why_size, "message type %u is not a request", type);
                return -EBADMSG;
        }
        struct reader r;
        reader_init(&r, msg, size, why, why_size);
        rq->type = type;
        rq->flags = rd_u32(&r, "flags");
        if (!r.error && (rq->flags & ~HOST_FLAGS_VALID))
                fail(&r, "flags 0x%x has unknown bits", rq->flags);
        if (!r.error && (rq->flags & (HOST_FLAG_RT_RING | HOST_FLAG_RT_POOL)) &&
            type != HOST_REQ_RT_ATTACH)
                fail(&r, "a shared ring asked for in a %s request", host_proto_type_name(type));
        if (!r.error && (rq->flags & HOST_FLAG_RT_POOL) && !(rq->flags & HOST_FLAG_RT_RING))
                fail(&r, "buffers in place asked for without a shared ring");
        if (!r.error && (rq->flags & HOST_FLAG_RT_STATE) && !(rq->flags & HOST_FLAG_RT_RING))
                fail(&r, "the session's state asked for without a shared ring");
        rq->handle = rd_u64(&r, "handle");
        rq->code = rd_u32(&r, "code");
        rq->length = rd_u32(&r, "length");
        rq->value = rd_u64(&r, "value");
        rd_str(&r, rq->name, HOST_MAX_NAME, "name");
        rd_str(&r, rq->path, HOST_MAX_PATH, "path");
        rq->data = rd_blob(&r, HOST_MAX_DATA, &rq->data_size, "data");
        rq->extra = rd_blob(&r, MAX_STACK_IDS * sizeof(CLASSIC_EVENT_ID), &rq->extra_size, "extra");
        if (!r.error && (rq->flags & HOST_FLAG_HAS_DEFAULTS)) {
                struct session_start_defaults *d = &rq->defaults;
                if (type != HOST_REQ_START)
                        fail(&r, "start defaults in a %s request", host_proto_type_name(type));
                d->pid = (int32_t)rd_u32(&r, "pid");
                if (!r.error && (d->pid == 0 || d->pid < -1))
                        fail(&r, "pid %d is not a process (-1: the whole system)", (int)d->pid);
                d->nr_sources = rd_u32(&r, "sources");
                if (!r.error && d->nr_sources > SESSION_MAX_SOURCES)
                        fail(&r, "%u sources, at most %d", d->nr_sources, SESSION_MAX_SOURCES);
                for (uint32_t i = 0; !r.error && i < d->nr_sources; i++) {
                        d->sources[i] = rd_u32(&r, "source");
                        if (!r.error && d->sources[i] >= SESSION_MAX_INTERVALS)
                                fail(&r, "profile source %u is unknown", d->sources[i]);
                }
                d->nr_intervals = rd_u32(&r, "intervals");
                if (!r.error && d->nr_intervals > SESSION_MAX_INTERVALS)
                        fail(&r, "%u intervals, at most %d", d->nr_intervals,
                             SESSION_MAX_INTERVALS);
                for (uint32_t i = 0; !r.error && i < d->nr_intervals; i++) {
                        d->intervals[i].source = rd_u32(&r, "interval source");
                        d->intervals[i].interval = rd_u32(&r, "interval");
                        if (!r.error && d->intervals[i].source >= SESSION_MAX_INTERVALS)
                                fail(&r, "profile source %u is unknown", d->intervals[i].source);
                }
        }
        rc = reader_finish(&r);
        if (rc < 0)
                return rc;

        /* what each type needs */
        switch (type) {
        case HOST_REQ_START:
                check_props(&r, rq->data, rq->data_size);
                if (rq->extra_size % sizeof(CLASSIC_EVENT_ID))
                        fail(&r, "stack ids: %u bytes is not a whole number of CLASSIC_EVENT_IDs",
                             rq->extra_size);
                if (rq->extra_size && !(rq->flags & HOST_FLAG_KERNEL_TRACE))
                        fail(&r, "stack ids for StartTraceA");
                if (!rq->name[0] && !(rq->flags & HOST_FLAG_KERNEL_TRACE))
                        fail(&r, "StartTraceA without a session name");
                if (rq->path[0] && rq->path[0] != '/')
                        fail(&r, "the log file name \"%.64s\" is not absolute", rq->path);
                break;
        case HOST_REQ_CONTROL:
                check_props(&r, rq->data, rq->data_size);
                if (!rq->handle && !rq->name[0])
                        fail(&r, "neither a handle nor a session name");
                if (rq->path[0] && rq->path[0] != '/')
                        fail(&r, "the log file name \"%.64s\" is not absolute", rq->path);
                break;
        case HOST_REQ_SET_INFO:
                if ((rq->flags & HOST_FLAG_HAS_BUFFER) ? rq->data_size != rq->length
                                                       : rq->data_size != 0)
                        fail(&r, "information of %u bytes, the length says %u", rq->data_size,
                             rq->length);
                break;
        case HOST_REQ_QUERY_INFO:
                if (rq->length > HOST_MAX_DATA)
                        fail(&r, "a query buffer of %u bytes, at most %u", rq->length,
                             (unsigned)HOST_MAX_DATA);
                else if (rq->data_size > rq->length ||
                         (rq->data_size && !(rq->flags & HOST_FLAG_HAS_BUFFER)))
                        fail(&r, "query input of %u bytes for a buffer of %u", rq->data_size,
                             rq->length);
                break;
        case HOST_REQ_LBR:
                if (rq->data_size % sizeof(CLASSIC_EVENT_ID) ||
                    rq->data_size / sizeof(CLASSIC_EVENT_ID) > MAX_LBR_IDS)
                        fail(&r, "LBR events: %u bytes is not 0 to %d CLASSIC_EVENT_IDs",
                             rq->data_size, MAX_LBR_IDS);
                break;
        case HOST_REQ_RT_HEADER:
        case HOST_REQ_RT_ATTACH:
                if (!rq->name[0])
                        fail(&r, "a real-time consumer without a session name");
                break;
        case HOST_REQ_BIND:
                if (!rq->handle)
                        fail(&r, "a %s request without a session handle",
                             host_proto_type_name(type));
                break;
        case HOST_REQ_SAVE_WINDOW:
                if (rq->path[0] != '/')
                        fail(&r, "the file name \"%.64s\" is not absolute", rq->path);
                break;
        default: break;
        }
        return r.error;
}

/* check_whole of a message that must be of type want: -EBADMSG for another ("a TYPE message
   context"). */
static int check_whole_of(const uint8_t *msg, size_t size, uint16_t want, const char *context,
                          char *why, size_t why_size)
{
        uint16_t type;
        int rc = check_whole(msg, size, &type, why, why_size);
        if (rc == 0 && type != want) {
                host_say(why, why_size, "a %s message %s", host_proto_type_name(type), context);
                rc = -EBADMSG;
        }
        return rc;
}

int host_proto_decode_reply(const uint8_t *msg, size_t size, struct host_reply *rp, char *why,
                            size_t why_size)
{
        memset(rp, 0, sizeof(*rp));
        int rc = check_whole_of(msg, size, HOST_REPLY, "where a reply was due", why, why_size);
        if (rc < 0)
                return rc;
        struct reader r;
        reader_init(&r, msg, size, why, why_size);
        rp->code = rd_u32(&r, "code");
        rp->rc = (int32_t)rd_u32(&r, "rc");
        rp->handle = rd_u64(&r, "handle");
        rp->length = rd_u32(&r, "length");
        rd_str(&r, rp->msg, HOST_MAX_MSG_TEXT, "message");
        rp->data = rd_blob(&r, HOST_MAX_DATA, &rp->data_size, "data");
        if (!r.error && rp->rc > 0)
                fail(&r, "rc %d is not 0 or a negative errno", rp->rc);
        return reader_finish(&r);
}

int host_proto_decode_rt(const uint8_t *msg, size_t size, struct host_rt_msg *rt, char *why,
                         size_t why_size)
{
        memset(rt, 0, sizeof(*rt));
        uint16_t type;
        int rc = check_whole(msg, size, &type, why, why_size);
        if (rc < 0)
                return rc;
        struct reader r;
        reader_init(&r, msg, size, why, why_size);
        rt->type = type;
        if (type == HOST_RT_BUFFER) {
                rt->nr_lost = rd_u64(&r, "lost");
                rt->size = rd_u32(&r, "buffer size");
                uint32_t pad = rd_u32(&r, "pad");
                if (!r.error && pad)
                        fail(&r, "padding 0x%x is not 0", pad);
                if (!r.error && (rt->size > HOST_MAX_DATA || rt->size != r.size - r.pos))
                        fail(&r, "a buffer of %u bytes in %zu", rt->size, r.size - r.pos);
                if (!r.error && rt->size < 64)
                        fail(&r, "a buffer of %u bytes is smaller than its header", rt->size);
                if (!r.error) {
                        rt->data = r.p + r.pos;
                        r.pos += rt->size;
                }
        } else if (type == HOST_RT_END) {
                rt->code = rd_u32(&r, "code");
                rd_u32(&r, "pad");
                rt->nr_lost = rd_u64(&r, "lost");
        } else if (type == HOST_RT_RING) {
                rt->nr_slots = rd_u32(&r, "slots");
                rt->size = rd_u32(&r, "slot size");
                if (!r.error && rt->nr_slots > HOST_RT_MAX_SLOTS)
                        fail(&r, "a ring of %u slots (at most %u)", rt->nr_slots,
                             HOST_RT_MAX_SLOTS);
                if (!r.error && rt->nr_slots && (rt->size < 64 || rt->size > HOST_MAX_DATA))
                        fail(&r, "a slot of %u bytes (64 to %u)", rt->size, HOST_MAX_DATA);
        } else if (type == HOST_RT_SLOTS) {
                rt->nr_lost = rd_u64(&r, "lost");
                rt->seq = rd_u64(&r, "seq");
                rt->nr_slots = rd_u32(&r, "count");
                rt->size = rd_u32(&r, "buffer size");
                if (!r.error && (!rt->nr_slots || rt->nr_slots > HOST_RT_MAX_SLOTS))
                        fail(&r, "%u slots (1 to %u)", rt->nr_slots, HOST_RT_MAX_SLOTS);
                if (!r.error && (rt->size < 64 || rt->size > HOST_MAX_DATA))
                        fail(&r, "a buffer of %u bytes (64 to %u)", rt->size, HOST_MAX_DATA);
        } else if (type == HOST_RT_POOL) {
                rt->nr_slots = rd_u32(&r, "buffers");
                rt->size = rd_u32(&r, "buffer size");
                if (!r.error && (!rt->nr_slots || rt->nr_slots > HOST_RT_MAX_POOL))
                        fail(&r, "a pool of %u buffers (1 to %u)", rt->nr_slots, HOST_RT_MAX_POOL);
                if (!r.error && (rt->size < 64 || rt->size > HOST_MAX_DATA))
                        fail(&r, "a buffer of %u bytes (64 to %u)", rt->size, HOST_MAX_DATA);
        } else if (type == HOST_RT_PLACES) {
                rt->nr_lost = rd_u64(&r, "lost");
                rt->seq = rd_u64(&r, "seq");
                rt->nr_slots = rd_u32(&r, "count");
                rt->size = rd_u32(&r, "buffer size");
                if (!r.error && (!rt->nr_slots || rt->nr_slots > HOST_RT_MAX_SLOTS))
                        fail(&r, "%u buffers (1 to %u)", rt->nr_slots, HOST_RT_MAX_SLOTS);
                if (!r.error && (rt->size < 64 || rt->size > HOST_MAX_DATA))
                        fail(&r, "a buffer of %u bytes (64 to %u)", rt->size, HOST_MAX_DATA);
                if (!r.error && r.size - r.pos != (size_t)rt->nr_slots * 4)
                        fail(&r, "%zu bytes for %u indexes", r.size - r.pos, rt->nr_slots);
                if (!r.error) {
                        rt->places = r.p + r.pos;
                        r.pos += (size_t)rt->nr_slots * 4;
                }
        } else if (type == HOST_RT_STATE) {
                rt->settings_gen = rd_u64(&r, "settings generation");
                rt->nr_events_lost = rd_u64(&r, "events lost");
                rt->nr_buffers_written = rd_u64(&r, "buffers written");
                rt->nr_rt_buffers_lost = rd_u64(&r, "real-time buffers lost");
                rt->buffer_size_kb = rd_u32(&r, "buffer size");
                rt->max_file_mb = rd_u32(&r, "maximum file size");
                if (!r.error && !rt->settings_gen)
                        fail(&r, "settings generation 0");
        } else {
                host_say(why, why_size, "a %s message in a real-time stream",
                         host_proto_type_name(type));
                return -EBADMSG;
        }
        return reader_finish(&r);
}

int host_proto_decode_release(const uint8_t *msg, size_t size, uint64_t *seq, char *why,
                              size_t why_size)
{
        *seq = 0;
        int rc = check_whole_of(msg, size, HOST_RT_RELEASE, "from a real-time consumer", why,
                                why_size);
        if (rc < 0)
                return rc;
        struct reader r;
        reader_init(&r, msg, size, why, why_size);
        *seq = rd_u64(&r, "seq");
        return reader_finish(&r);
}

/* ---- session_rt_info ---------------------------------------------------------------------- */

void host_rt_info_put(uint8_t out[HOST_RT_INFO_SIZE], const struct session_rt_info *info)
{
        uint64_t v[7] = {
                info->start_timestamp,
                (uint64_t)info->start_filetime,
                (uint64_t)info->boot_filetime,
                info->perf_freq,
                (uint64_t)info->clock_type << 32 | info->buffer_size_bytes,
                (uint64_t)info->nr_cpus << 32 | info->log_file_mode,
                info->is_kernel,
        };
        _Static_assert(sizeof(v) == HOST_RT_INFO_SIZE, "rt info size");
        memcpy(out, v, sizeof(v));
}

int host_rt_info_get(const uint8_t *in, size_t size, struct session_rt_info *info)
{
        uint64_t v[7];
        if (size != sizeof(v))
                return -EBADMSG;
        memcpy(v, in, sizeof(v));
        memset(info, 0, sizeof(*info));
        info->start_timestamp = v[0];
        info->start_filetime = (int64_t)v[1];
        info->boot_filetime = (int64_t)v[2];
        info->perf_freq = v[3];
        info->clock_type = (uint32_t)(v[4] >> 32);
        info->buffer_size_bytes = (uint32_t)v[4];
        info->nr_cpus = (uint32_t)(v[5] >> 32);
        info->log_file_mode = (uint32_t)v[5];
        info->is_kernel = v[6] != 0;
        /* the writer's limits: a buffer of 1 KB to 1 MB, at least one processor */
        if (info->buffer_size_bytes < 1024 || info->buffer_size_bytes > HOST_MAX_DATA ||
            info->nr_cpus == 0 || v[6] > 1)
                return -EBADMSG;
        return 0;
}
