/* SPDX-License-Identifier: MIT */
/* host_client.c: owns the client side of the session host: which process is a client, the
   API's requests (host_call.c sends them; the host started when a start finds none), the
   replies turned back into the API's results and last error, and a real-time consumer's stream
   of buffers. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "etw_error.h"
#include "host.h"
#include "host_proto.h"
#include "host_call.h"
#include "util/clock.h"

#define SEND_MS   10000
#define REPLY_MS  120000 /* a STOP drains, writes the rundown and finalizes the file */
#define ATTACH_MS 30000

/* ---- the mode ----------------------------------------------------------------------------- */

static atomic_bool is_host_process;
static pthread_once_t mode_once = PTHREAD_ONCE_INIT;
static bool is_no_host;

static void mode_read(void)
{
        const char *e = getenv("ETWTOP_NO_HOST");
        is_no_host = e && *e && strcmp(e, "0") != 0;
}

bool host_is_client(void)
{
        if (atomic_load(&is_host_process))
                return false;
        pthread_once(&mode_once, mode_read);
        return !is_no_host;
}

void host_become_host(void)
{
        atomic_store(&is_host_process, true);
}

bool host_client_is_running(void)
{
        char dir[PATH_MAX], why[512];
        if (host_client_dir(dir, sizeof(dir), false, why, sizeof(why)) < 0)
                return false;
        int fd = host_connect(dir, why, sizeof(why));
        if (fd < 0)
                return false;
        close(fd);
        return true;
}

int host_client_prestart(char *why, size_t why_size)
{
        if (!host_is_client())
                return 0;
        char dir[PATH_MAX];
        int rc = host_client_dir(dir, sizeof(dir), true, why, why_size);
        if (rc < 0)
                return rc;
        int fd = host_connect(dir, why, why_size);
        if (fd >= 0) {
                close(fd);
                return 0;
        }
        return fd == -ENOENT || fd == -ECONNREFUSED ? host_spawn(dir, why, why_size) : fd;
}

static void unbind(CONTROLTRACE_ID id);

/* path made absolute against the current directory into out; NULL when it already is (or
   there is none), or when the current directory cannot be named (the host then refuses the
   relative name). */
static const char *absolute(const char *path, char *out, size_t size)
{
        if (!path || !path[0] || path[0] == '/')
                return NULL;
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof(cwd)))
                return NULL;
        int n = snprintf(out, size, "%s/%s", cwd, path);
        return n > 0 && (size_t)n < size ? out : NULL;
}

/* Copies the properties the host returned over the caller's (same size, same layout). */
static void put_back(PEVENT_TRACE_PROPERTIES p, const struct call *c)
{
        if (c->rp.data_size == p->Wnode.BufferSize)
                memcpy(p, c->rp.data, c->rp.data_size);
}

static ULONG props_too_big(const char *what, PEVENT_TRACE_PROPERTIES p)
{
        etw_set_error(ERROR_BAD_LENGTH,
                      "%s: Wnode.BufferSize %u is more than the %u bytes the session host takes",
                      what, p->Wnode.BufferSize, (unsigned)HOST_MAX_DATA);
        return ERROR_BAD_LENGTH;
}

ULONG host_client_start(CONTROLTRACE_ID *id, const char *name, PEVENT_TRACE_PROPERTIES p,
                        const char *file, bool is_kernel_trace, const CLASSIC_EVENT_ID *stack_ids,
                        uint32_t nr_stack_ids, const struct session_start_defaults *d)
{
        const char *what = is_kernel_trace ? "StartKernelTrace" : "StartTrace";
        *id = 0;
        if (p->Wnode.BufferSize > HOST_MAX_DATA)
                return props_too_big(what, p);
        struct host_request rq = {0};
        rq.type = HOST_REQ_START;
        rq.flags = HOST_FLAG_HAS_DEFAULTS | (is_kernel_trace ? HOST_FLAG_KERNEL_TRACE : 0);
        snprintf(rq.name, sizeof(rq.name), "%s", name ? name : "");
        char abs_file[PATH_MAX];
        const char *abs = absolute(file, abs_file, sizeof(abs_file));
        snprintf(rq.path, sizeof(rq.path), "%s", abs ? abs : "");
        rq.data = (const uint8_t *)p;
        rq.data_size = p->Wnode.BufferSize;
        rq.extra = (const uint8_t *)stack_ids;
        rq.extra_size = stack_ids ? nr_stack_ids * (uint32_t)sizeof(CLASSIC_EVENT_ID) : 0;
        if (d)
                rq.defaults = *d;
        else
                session_get_start_defaults(&rq.defaults);
        struct call c;
        char why[1024];
        int rc = host_call(&rq, true, &c, why, sizeof(why));
        if (rc < 0)
                return host_no_reply(what, rc, why);
        put_back(p, &c);
        *id = c.rp.code == ERROR_SUCCESS ? c.rp.handle : 0;
        ULONG code = host_take_reply(&c);
        host_call_free(&c);
        return code;
}

ULONG host_client_control(CONTROLTRACE_ID id, const char *name, PEVENT_TRACE_PROPERTIES p,
                          ULONG code, const char *new_file)
{
        static const char *const ops[] = {"QUERY", "STOP", "UPDATE", "FLUSH"};
        char what[32];
        snprintf(what, sizeof(what), "ControlTrace(%s)", code < 4 ? ops[code] : "?");
        if (p->Wnode.BufferSize > HOST_MAX_DATA)
                return props_too_big(what, p);
        struct host_request rq = {0};
        rq.type = HOST_REQ_CONTROL;
        rq.handle = id;
        rq.code = code;
        snprintf(rq.name, sizeof(rq.name), "%s", !id && name ? name : "");
        char abs_file[PATH_MAX];
        const char *abs = absolute(new_file, abs_file, sizeof(abs_file));
        snprintf(rq.path, sizeof(rq.path), "%s", abs ? abs : "");
        rq.data = (const uint8_t *)p;
        rq.data_size = p->Wnode.BufferSize;
        struct call c;
        char why[1024];
        int rc = host_call(&rq, false, &c, why, sizeof(why));
        if (rc == -ENOENT || rc == -ECONNREFUSED) {
                /* no host, no session: said as the table says it, and why */
                char tmp[1024];
                if (id)
                        snprintf(tmp, sizeof(tmp), "no session has handle 0x%llx (%.700s)",
                                 (unsigned long long)id, why);
                else
                        snprintf(tmp, sizeof(tmp),
                                 "no session named \"%.200s\" is running (%.700s)", name, why);
                return host_no_reply(what, rc, tmp);
        }
        if (rc < 0)
                return host_no_reply(what, rc, why);
        put_back(p, &c);
        ULONG result = host_take_reply(&c);
        host_call_free(&c);
        if (code == EVENT_TRACE_CONTROL_STOP && result != ERROR_WMI_INSTANCE_NOT_FOUND)
                unbind(id ? id : p->Wnode.HistoricalContext);
        return result;
}

ULONG host_client_set_info(CONTROLTRACE_ID id, TRACE_INFO_CLASS cls, const void *info, ULONG len)
{
        struct host_request rq = {0};
        rq.type = HOST_REQ_SET_INFO;
        rq.handle = id;
        rq.code = (uint32_t)cls;
        rq.length = len;
        rq.flags = info ? HOST_FLAG_HAS_BUFFER : 0;
        rq.data = info;
        rq.data_size = info ? len : 0;
        struct call c;
        char why[1024];
        int rc = host_call(&rq, false, &c, why, sizeof(why));
        if (rc < 0 && !id && (rc == -ENOENT || rc == -ECONNREFUSED)) {
                /* a global setting with no host: kept for this process's next start */
                etw_set_error(ERROR_SUCCESS, NULL);
                return ERROR_SUCCESS;
        }
        if (rc < 0) {
                char tmp[1024];
                if (id && (rc == -ENOENT || rc == -ECONNREFUSED))
                        snprintf(tmp, sizeof(tmp), "no session has handle 0x%llx (%.700s)",
                                 (unsigned long long)id, why);
                else
                        snprintf(tmp, sizeof(tmp), "%s", why);
                return host_no_reply("TraceSetInformation", rc, tmp);
        }
        ULONG code = host_take_reply(&c);
        host_call_free(&c);
        return code;
}

ULONG host_client_query_info(CONTROLTRACE_ID id, TRACE_INFO_CLASS cls, void *info, ULONG len,
                             PULONG ret)
{
        struct host_request rq = {0};
        rq.type = HOST_REQ_QUERY_INFO;
        rq.handle = id;
        rq.code = (uint32_t)cls;
        rq.length = len;
        rq.flags = info ? HOST_FLAG_HAS_BUFFER : 0;
        /* a TRACE_PROFILE_INTERVAL query reads its Source from the buffer */
        if (info && cls == TraceSampledProfileIntervalInfo &&
            len == sizeof(TRACE_PROFILE_INTERVAL)) {
                rq.data = info;
                rq.data_size = len;
        }
        struct call c;
        char why[1024];
        int rc = host_call(&rq, false, &c, why, sizeof(why));
        if (rc < 0) {
                char tmp[1024];
                if (id && (rc == -ENOENT || rc == -ECONNREFUSED))
                        snprintf(tmp, sizeof(tmp), "no session has handle 0x%llx (%.700s)",
                                 (unsigned long long)id, why);
                else
                        snprintf(tmp, sizeof(tmp), "%s", why);
                return host_no_reply("TraceQueryInformation", rc, tmp);
        }
        if (ret)
                *ret = c.rp.length;
        if (info && c.rp.data_size && c.rp.data_size <= len)
                memcpy(info, c.rp.data, c.rp.data_size);
        ULONG code = host_take_reply(&c);
        host_call_free(&c);
        return code;
}

ULONG host_client_lbr(CONTROLTRACE_ID id, ULONG config, const CLASSIC_EVENT_ID *events, ULONG count)
{
        struct host_request rq = {0};
        rq.type = HOST_REQ_LBR;
        rq.handle = id;
        rq.code = config;
        rq.data = (const uint8_t *)events;
        rq.data_size = events ? count * (uint32_t)sizeof(CLASSIC_EVENT_ID) : 0;
        struct call c;
        char why[1024];
        int rc = host_call(&rq, false, &c, why, sizeof(why));
        if (rc < 0) {
                char tmp[1024];
                if (rc == -ENOENT || rc == -ECONNREFUSED)
                        snprintf(tmp, sizeof(tmp), "no session has handle 0x%llx (%.700s)",
                                 (unsigned long long)id, why);
                else
                        snprintf(tmp, sizeof(tmp), "%s", why);
                return host_no_reply("TraceConfigureLastBranchRecord", rc, tmp);
        }
        ULONG code = host_take_reply(&c);
        host_call_free(&c);
        return code;
}

/* The properties of one session as the host sent them (a blob laid out by the host) copied to
   the caller's structure: its size and name offsets stay, the names go where they say.
   ERROR_SUCCESS, or ERROR_MORE_DATA when a name does not fit. */
static ULONG put_properties(PEVENT_TRACE_PROPERTIES dst, const uint8_t *blob, uint32_t size)
{
        EVENT_TRACE_PROPERTIES src;
        memcpy(&src, blob, sizeof(src));
        const char *names[2] = {"", ""};
        ULONG offsets[2] = {src.LoggerNameOffset, src.LogFileNameOffset};
        for (int i = 0; i < 2; i++)
                if (offsets[i] >= sizeof(src) && offsets[i] < size &&
                    memchr(blob + offsets[i], '\0', size - offsets[i]))
                        names[i] = (const char *)blob + offsets[i];
        ULONG buffer_size = dst->Wnode.BufferSize;
        ULONG name_offset = dst->LoggerNameOffset, file_offset = dst->LogFileNameOffset;
        *dst = src;
        dst->Wnode.BufferSize = buffer_size;
        dst->LoggerNameOffset = name_offset;
        dst->LogFileNameOffset = file_offset;
        ULONG code = ERROR_SUCCESS;
        ULONG at[2] = {name_offset, file_offset};
        for (int i = 0; i < 2; i++) {
                if (!at[i])
                        continue;
                size_t n = strlen(names[i]) + 1;
                if (at[i] < sizeof(*dst) || at[i] > buffer_size || buffer_size - at[i] < n) {
                        code = ERROR_MORE_DATA;
                        continue;
                }
                memcpy((char *)dst + at[i], names[i], n);
        }
        return code;
}

ULONG host_client_query_all(PEVENT_TRACE_PROPERTIES *array, ULONG count, PULONG logger_count)
{
        static const char what[] = "QueryAllTraces";
        struct host_request *rq = calloc(1, sizeof(*rq));
        if (!rq) {
                etw_set_error(ERROR_NOT_ENOUGH_MEMORY, "%s: out of memory", what);
                return ERROR_NOT_ENOUGH_MEMORY;
        }
        rq->type = HOST_REQ_ENUMERATE;
        struct call c;
        char why[1024];
        int rc = host_call(rq, false, &c, why, sizeof(why));
        free(rq);
        if (rc == -ENOENT || rc == -ECONNREFUSED) {
                /* no host: no session */
                *logger_count = 0;
                etw_set_error(ERROR_SUCCESS, NULL);
                return ERROR_SUCCESS;
        }
        if (rc < 0)
                return host_no_reply(what, rc, why);
        ULONG code = host_take_reply(&c);
        if (code != ERROR_SUCCESS && code != ERROR_MORE_DATA) {
                host_call_free(&c);
                return code;
        }
        uint32_t nr_blobs = c.rp.data_size / (uint32_t)HOST_ENUM_BLOB_SIZE;
        if (c.rp.data_size % HOST_ENUM_BLOB_SIZE || nr_blobs > c.rp.length) {
                host_call_free(&c);
                etw_set_error(ERROR_INVALID_DATA,
                              "%s: the session host sent %u bytes for %u "
                              "sessions",
                              what, c.rp.data_size, c.rp.length);
                return ERROR_INVALID_DATA;
        }
        *logger_count = c.rp.length;
        code = c.rp.length > count ? ERROR_MORE_DATA : ERROR_SUCCESS;
        for (uint32_t i = 0; i < nr_blobs && i < count; i++) {
                const uint8_t *blob = c.rp.data + (size_t)i * HOST_ENUM_BLOB_SIZE;
                if (put_properties(array[i], blob, (uint32_t)HOST_ENUM_BLOB_SIZE) != ERROR_SUCCESS)
                        code = ERROR_MORE_DATA;
        }
        host_call_free(&c);
        if (code == ERROR_MORE_DATA)
                etw_set_error(code,
                              "%s: %u sessions run; %u properties were given, or a name "
                              "did not fit",
                              what, (unsigned)*logger_count, (unsigned)count);
        else
                etw_set_error(ERROR_SUCCESS, NULL);
        return code;
}

/* ---- sessions bound to this process -------------------------------------------------------- */

#define MAX_BOUND 64

/* The connections that keep bound sessions alive: the host stops a session when its connection
   ends, which the kernel does when this process ends, however it ends. */
static pthread_mutex_t bound_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
        CONTROLTRACE_ID handle;
        int fd;
} bound[MAX_BOUND];

ULONG host_client_bind(CONTROLTRACE_ID id)
{
        static const char what[] = "etw_bind_session";
        char dir[PATH_MAX], why[1024];
        int fd = host_client_dir(dir, sizeof(dir), false, why, sizeof(why));
        if (fd == 0)
                fd = host_connect(dir, why, sizeof(why));
        if (fd < 0) {
                char tmp[1024];
                snprintf(tmp, sizeof(tmp), "no session has handle 0x%llx (%.700s)",
                         (unsigned long long)id, why);
                return host_no_reply(what, fd, tmp);
        }
        struct host_request rq = {0};
        rq.type = HOST_REQ_BIND;
        rq.handle = id;
        struct host_msg m = {0};
        host_msg_request(&m, &rq);
        int rc = host_io_write(fd, m.data, m.size, SEND_MS, NULL);
        host_msg_free(&m);
        struct call c = {0};
        size_t size = 0;
        if (rc == 0)
                rc = host_io_read_msg(fd, REPLY_MS, REPLY_MS, &c.msg, &size, why, sizeof(why));
        if (rc == 0)
                rc = host_proto_decode_reply(c.msg, size, &c.rp, why, sizeof(why));
        if (rc < 0) {
                close(fd);
                host_call_free(&c);
                return host_no_reply(what, rc == -EAGAIN ? -ETIMEDOUT : rc, why);
        }
        ULONG code = host_take_reply(&c);
        host_call_free(&c);
        if (code != ERROR_SUCCESS) {
                close(fd);
                return code;
        }
        pthread_mutex_lock(&bound_lock);
        int slot = -1;
        for (int i = 0; i < MAX_BOUND && slot < 0; i++)
                if (!bound[i].handle)
                        slot = i;
        if (slot >= 0) {
                bound[slot].handle = id;
                bound[slot].fd = fd;
        }
        pthread_mutex_unlock(&bound_lock);
        if (slot < 0) {
                close(fd);
                etw_set_error(ERROR_NO_SYSTEM_RESOURCES, "%s: %d sessions are bound already", what,
                              MAX_BOUND);
                return ERROR_NO_SYSTEM_RESOURCES;
        }
        return ERROR_SUCCESS;
}

/* A session this process stopped needs its binding no more. */
static void unbind(CONTROLTRACE_ID id)
{
        pthread_mutex_lock(&bound_lock);
        for (int i = 0; i < MAX_BOUND; i++) {
                if (id && bound[i].handle == id) {
                        close(bound[i].fd);
                        bound[i].handle = 0;
                }
        }
        pthread_mutex_unlock(&bound_lock);
}

/* ---- the kept window ---------------------------------------------------------------------- */

/* A request whose reply carries a -errno and a message (session.h's functions). */
static int errno_call(struct host_request *rq, struct etl_error *err)
{
        struct call c;
        char why[1024];
        int rc = host_call(rq, false, &c, why, sizeof(why));
        if (rc < 0) {
                snprintf(err->msg, sizeof(err->msg), "%.*s", (int)sizeof(err->msg) - 1, why);
                return rc == -ENOENT || rc == -ECONNREFUSED ? -ESRCH : rc;
        }
        snprintf(err->msg, sizeof(err->msg), "%.*s", (int)sizeof(err->msg) - 1, c.rp.msg);
        rc = c.rp.rc;
        host_call_free(&c);
        return rc;
}

int host_client_keep_window(CONTROLTRACE_ID id, size_t max_bytes, struct etl_error *err)
{
        struct host_request rq = {0};
        rq.type = HOST_REQ_KEEP_WINDOW;
        rq.handle = id;
        rq.value = max_bytes;
        return errno_call(&rq, err);
}

int host_client_save_window(CONTROLTRACE_ID id, const char *path, bool is_force,
                            struct etl_error *err)
{
        struct host_request rq = {0};
        rq.type = HOST_REQ_SAVE_WINDOW;
        rq.handle = id;
        rq.flags = is_force ? HOST_FLAG_FORCE : 0;
        char abs_path[PATH_MAX];
        const char *abs = absolute(path, abs_path, sizeof(abs_path));
        int n = snprintf(rq.path, sizeof(rq.path), "%s", abs ? abs : path);
        if (n < 0 || (size_t)n >= sizeof(rq.path) || rq.path[0] != '/') {
                snprintf(err->msg, sizeof(err->msg), "%s: the name cannot be made absolute", path);
                return -ENAMETOOLONG;
        }
        return errno_call(&rq, err);
}

/* ---- real-time consumers ------------------------------------------------------------------ */

int host_client_rt_header(const char *name, uint8_t **buf, uint32_t *size,
                          struct session_rt_info *info)
{
        *buf = NULL;
        *size = 0;
        struct host_request rq = {0};
        rq.type = HOST_REQ_RT_HEADER;
        snprintf(rq.name, sizeof(rq.name), "%s", name);
        struct call c;
        char why[1024];
        int rc = host_call(&rq, false, &c, why, sizeof(why));
        if (rc == -EACCES) {
                etw_set_error(ERROR_ACCESS_DENIED, "OpenTrace: %s", why);
                return rc;
        }
        if (rc < 0)
                return -ESRCH;
        rc = c.rp.rc;
        if (rc == 0 && (c.rp.data_size <= HOST_RT_INFO_SIZE ||
                        host_rt_info_get(c.rp.data, HOST_RT_INFO_SIZE, info) < 0 ||
                        c.rp.data_size - HOST_RT_INFO_SIZE != info->buffer_size_bytes))
                rc = -ESRCH; /* nothing a consumer could read */
        if (rc == 0) {
                *size = info->buffer_size_bytes;
                *buf = malloc(*size);
                if (!*buf)
                        rc = -ENOMEM;
                else
                        memcpy(*buf, c.rp.data + HOST_RT_INFO_SIZE, *size);
        }
        host_call_free(&c);
        return rc;
}

struct host_rt {
        int fd;
        int wake_fd; /* an eventfd: host_client_rt_wake ends a wait for the next message (-1:
                        none could be made, and a wait ends at its time) */
        struct host_ring ring; /* the host's shared ring, where it made one */
        uint8_t *msg;   /* owned: every message is read here, the buffer last handed out in it */
        size_t msg_cap; /* msg's bytes */
        uint64_t nr_lost;
        bool is_ended;
        bool is_broken;
        /* held buffers (host_client_rt_hold): the consumer gives them back from its own thread,
           so the ring's releases and their writes are made under release_lock */
        bool is_held;
        atomic_uint_fast64_t done; /* the buffers before it are given back by the consumer */
        pthread_mutex_t release_lock;
        pthread_cond_t released; /* signalled at each host_client_rt_release */
        /* the session's state as the host last sent it (HOST_FLAG_RT_STATE), and how many came
           (0: none): written by the consumer's thread, read by any (host_client_rt_state) */
        pthread_mutex_t state_lock;
        struct session_rt_state state;
        uint64_t nr_states;
        char name[HOST_MAX_NAME + 1];
        char why[768];
};

/* The ring the host answers an attach with: mapped into rt->ring, or none (the host made
   none: the buffers come through the socket). 0, or -ESRCH with the error set. */
static int ring_attach(int fd, struct host_rt *rt)
{
        uint8_t *msg = NULL;
        size_t size = 0;
        int memfd = -1;
        char why[512];
        struct host_rt_msg m;
        int rc = host_io_read_msg_fd(fd, ATTACH_MS, &msg, &size, &memfd, why, sizeof(why));
        if (rc == 0)
                rc = host_proto_decode_rt(msg, size, &m, why, sizeof(why));
        if (rc == 0 && m.type != HOST_RT_RING && m.type != HOST_RT_POOL) {
                snprintf(why, sizeof(why), "a %s message where the ring was due",
                         host_proto_type_name(m.type));
                rc = -EPROTO;
        }
        free(msg);
        if (rc == 0 && m.nr_slots && memfd < 0) {
                snprintf(why, sizeof(why), "a ring of %u slots without its memory", m.nr_slots);
                rc = -EPROTO;
        }
        if (rc == 0 && m.type == HOST_RT_POOL) {
                rc = host_ring_map_pool(&rt->ring, memfd, m.nr_slots, m.size, why, sizeof(why));
                memfd = -1;
        } else if (rc == 0 && m.nr_slots) {
                rc = host_ring_map(&rt->ring, memfd, m.nr_slots, m.size, why, sizeof(why));
                memfd = -1;
        }
        if (memfd >= 0)
                close(memfd);
        if (rc < 0)
                etw_set_error(ERROR_WMI_INSTANCE_NOT_FOUND,
                              "ProcessTrace: the session host's real-time ring: %s", why);
        return rc < 0 ? -ESRCH : 0;
}

int host_client_rt_attach(const char *name, struct host_rt **out, struct session_rt_info *info)
{
        *out = NULL;
        char dir[PATH_MAX], why[768];
        int fd = host_client_dir(dir, sizeof(dir), false, why, sizeof(why));
        if (fd == 0)
                fd = host_connect(dir, why, sizeof(why));
        if (fd == -EACCES) {
                etw_set_error(ERROR_ACCESS_DENIED, "ProcessTrace: %s", why);
                return fd;
        }
        if (fd < 0)
                return -ESRCH;
        struct host_request *rq = calloc(1, sizeof(*rq));
        struct host_rt *rt = calloc(1, sizeof(*rt));
        if (!rq || !rt) {
                free(rq);
                free(rt);
                close(fd);
                return -ENOMEM;
        }
        rt->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        pthread_mutex_init(&rt->release_lock, NULL);
        pthread_mutex_init(&rt->state_lock, NULL);
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* deadline_after_ms's */
        pthread_cond_init(&rt->released, &ca);
        pthread_condattr_destroy(&ca);
        rq->type = HOST_REQ_RT_ATTACH;
        /* the buffers through a shared ring, unless asked not to (the socket's way, kept for
           a host that cannot make one, and to compare the two) */
        const char *no_ring = getenv("ETWTOP_RT_SOCKET");
        bool is_ring = !no_ring || strcmp(no_ring, "1") != 0;
        if (is_ring)
                rq->flags |= HOST_FLAG_RT_RING;
        /* and each buffer read where the session wrote it, unless asked to have it copied
           into the ring (ETWTOP_RT_RING=copy: to compare the two) */
        const char *ring_how = getenv("ETWTOP_RT_RING");
        if (is_ring && !(ring_how && strcmp(ring_how, "copy") == 0))
                rq->flags |= HOST_FLAG_RT_POOL;
        /* the session's counters with the buffers: a refresh reads them rather than asking */
        if (is_ring)
                rq->flags |= HOST_FLAG_RT_STATE;
        snprintf(rq->name, sizeof(rq->name), "%s", name);
        struct host_msg m = {0};
        host_msg_request(&m, rq);
        free(rq);
        int rc = host_io_write(fd, m.data, m.size, SEND_MS, NULL);
        host_msg_free(&m);
        uint8_t *msg = NULL;
        size_t size = 0;
        struct host_reply rp;
        if (rc == 0)
                rc = host_io_read_msg(fd, ATTACH_MS, ATTACH_MS, &msg, &size, why, sizeof(why));
        if (rc == 0)
                rc = host_proto_decode_reply(msg, size, &rp, why, sizeof(why));
        if (rc == 0)
                rc = rp.rc;
        if (rc == 0 && host_rt_info_get(rp.data, rp.data_size, info) < 0)
                rc = -ESRCH;
        free(msg);
        if (rc == 0 && is_ring)
                rc = ring_attach(fd, rt);
        if (rc < 0) {
                close(fd);
                if (rt->wake_fd >= 0)
                        close(rt->wake_fd);
                host_ring_unmap(&rt->ring);
                free(rt);
                return rc == -ENOMEM ? rc : -ESRCH;
        }
        rt->fd = fd;
        snprintf(rt->name, sizeof(rt->name), "%s", name);
        *out = rt;
        return 0;
}

/* Waits up to timeout_ms for the stream's next message to begin (or its end), or for a wake
   (host_client_rt_wake): false when woken or the time ran out. */
static bool stream_wait(struct host_rt *rt, uint32_t timeout_ms)
{
        struct pollfd pfd[2] = {{.fd = rt->fd, .events = POLLIN},
                                {.fd = rt->wake_fd, .events = POLLIN}};
        int n;
        do
                n = poll(pfd, rt->wake_fd >= 0 ? 2 : 1, (int)timeout_ms);
        while (n < 0 && errno == EINTR);
        if (n > 0 && rt->wake_fd >= 0 && (pfd[1].revents & POLLIN)) {
                uint64_t v;
                if (read(rt->wake_fd, &v, sizeof(v)) < 0) {
                        /* taken already: one wake is as good as two */
                }
                return false;
        }
        return n != 0; /* a failed poll: the read finds what is wrong */
}

void host_client_rt_wake(struct host_rt *rt)
{
        uint64_t one = 1;
        if (rt->wake_fd >= 0 && write(rt->wake_fd, &one, sizeof(one)) < 0) {
                /* the count is full: a wake is pending already */
        }
}

/* The stream's next message but a state (kept for host_client_rt_state): 0, -EAGAIN (none
   within timeout_ms), or the read's or the decoding's error, why set. */
static int read_rt_msg(struct host_rt *rt, uint32_t timeout_ms, struct host_rt_msg *m, char *why,
                       size_t why_size)
{
        for (;;) {
                size_t msg_size;
                int rc = host_io_read_msg_kept(rt->fd, 0, REPLY_MS, &rt->msg, &rt->msg_cap,
                                               &msg_size, why, why_size);
                /* none there yet: a wait on the socket and the wake together (a CloseTrace ends
                   it, so the consumer's thread sleeps until the host sends, not a timer's
                   while) */
                if (rc == -EAGAIN && timeout_ms > 0 && stream_wait(rt, timeout_ms))
                        rc = host_io_read_msg_kept(rt->fd, 0, REPLY_MS, &rt->msg, &rt->msg_cap,
                                                   &msg_size, why, why_size);
                if (rc < 0)
                        return rc;
                rc = host_proto_decode_rt(rt->msg, msg_size, m, why, why_size);
                if (rc < 0 || m->type != HOST_RT_STATE)
                        return rc;
                pthread_mutex_lock(&rt->state_lock);
                rt->state = (struct session_rt_state){m->settings_gen,       m->nr_events_lost,
                                                      m->nr_buffers_written, m->nr_rt_buffers_lost,
                                                      m->buffer_size_kb,     m->max_file_mb};
                rt->nr_states++;
                pthread_mutex_unlock(&rt->state_lock);
        }
}

int host_client_rt_state(struct host_rt *rt, struct session_rt_state *out, uint64_t *nr_states)
{
        pthread_mutex_lock(&rt->state_lock);
        *out = rt->state;
        *nr_states = rt->nr_states;
        pthread_mutex_unlock(&rt->state_lock);
        return *nr_states ? 0 : -ENODATA;
}

int host_client_rt_next(struct host_rt *rt, uint32_t timeout_ms, const uint8_t **buf,
                        uint32_t *size)
{
        if (rt->is_ended)
                return 0;
        if (rt->is_broken)
                return -EPIPE;
        char why[512];
        if (rt->ring.mem) {
                /* the buffer handed out last is done with: given back with those before it,
                   in groups, and all of them before a wait for more */
                bool has_next = rt->ring.next < rt->ring.end;
                /* a host that has ended the stream reads no release: what it sent last (its
                   end, or nothing) is read all the same, and says how the stream ended */
                if (rt->is_held) {
                        pthread_mutex_lock(&rt->release_lock);
                        host_ring_release(&rt->ring, rt->fd, atomic_load(&rt->done), !has_next);
                        pthread_mutex_unlock(&rt->release_lock);
                } else {
                        host_ring_release(&rt->ring, rt->fd, rt->ring.next, !has_next);
                }
                if (has_next) {
                        host_ring_next(&rt->ring, buf, size);
                        return 1;
                }
        }
        /* (the socket's way) the buffer handed out last is done with: the next message takes
           its place */
        struct host_rt_msg m;
        int rc = read_rt_msg(rt, timeout_ms, &m, why, sizeof(why));
        if (rc == -EAGAIN)
                return -EAGAIN;
        if (rc == 0 && (rt->ring.mem ? m.type == HOST_RT_BUFFER
                                     : m.type == HOST_RT_SLOTS || m.type == HOST_RT_PLACES)) {
                snprintf(why, sizeof(why), "a %s message in a stream %s a ring",
                         host_proto_type_name(m.type), rt->ring.mem ? "with" : "without");
                rc = -EPROTO;
        }
        if (rc == 0 && (m.type == HOST_RT_SLOTS || m.type == HOST_RT_PLACES)) {
                /* the slots free are those given back: by the consumer's thread too, which
                   counts a release once written (the host may have filled them by then) */
                if (rt->is_held)
                        pthread_mutex_lock(&rt->release_lock);
                rc = host_ring_take(&rt->ring, &m, why, sizeof(why));
                if (rt->is_held)
                        pthread_mutex_unlock(&rt->release_lock);
        }
        if (rc == 0 && (m.type == HOST_RT_RING || m.type == HOST_RT_POOL)) {
                snprintf(why, sizeof(why), "a second ring");
                rc = -EPROTO;
        }
        if (rc < 0) {
                rt->is_broken = true;
                snprintf(rt->why, sizeof(rt->why),
                         "the session host serving \"%.200s\" ended while this consumer read it "
                         "(was it killed?), or dropped it (a consumer of a stopped session that "
                         "takes nothing for ETWTOP_HOST_DRAIN_MS is): %.300s",
                         rt->name, why);
                return -EPIPE;
        }
        rt->nr_lost = m.nr_lost;
        if (m.type == HOST_RT_END) {
                rt->is_ended = true;
                return 0;
        }
        if (m.type == HOST_RT_SLOTS || m.type == HOST_RT_PLACES) {
                host_ring_next(&rt->ring, buf, size);
                return 1;
        }
        *buf = m.data;
        *size = m.size;
        return 1;
}

uint64_t host_client_rt_nr_lost(const struct host_rt *rt)
{
        return rt->nr_lost;
}

const char *host_client_rt_error(const struct host_rt *rt)
{
        return rt->why;
}

bool host_client_rt_hold(struct host_rt *rt)
{
        rt->is_held = rt->ring.mem != NULL;
        return rt->is_held;
}

uint64_t host_client_rt_held_id(const struct host_rt *rt)
{
        /* buffer n (from 0) is id n + 1: 0 names none */
        return rt->is_held ? rt->ring.next : 0;
}

void host_client_rt_release(struct host_rt *rt, uint64_t id)
{
        pthread_mutex_lock(&rt->release_lock);
        if (id > atomic_load(&rt->done)) {
                atomic_store(&rt->done, id);
                /* given back here once a group is done: the stream's thread may wait on the
                   socket meanwhile, with a ring the host cannot fill (a write that fails, to a
                   host gone, is the stream's thread's to find) */
                host_ring_release(&rt->ring, rt->fd, id, false);
        }
        pthread_cond_broadcast(&rt->released);
        pthread_mutex_unlock(&rt->release_lock);
}

bool host_client_rt_wait_released(struct host_rt *rt, uint32_t timeout_ms)
{
        if (!rt->is_held)
                return true;
        struct timespec until = deadline_after_ms(timeout_ms);
        pthread_mutex_lock(&rt->release_lock);
        while (atomic_load(&rt->done) < rt->ring.next &&
               pthread_cond_timedwait(&rt->released, &rt->release_lock, &until) == 0) {
        }
        bool is_all = atomic_load(&rt->done) >= rt->ring.next;
        pthread_mutex_unlock(&rt->release_lock);
        return is_all;
}

/* The host detaches a stream's consumer when it sees the stream's end (at once: its stream
   polls the socket), then closes its side: that close waited for (what it still sends read and
   dropped; DETACH_WAIT_MS at most, under the stream's own idle bound, so that a host that sees
   the end late is not waited for: it is left as it was) makes a STOP sent next find the session
   without this consumer, and the end of a session nobody reads then is not written. */
#define DETACH_WAIT_MS 1000
static void stream_end(int fd)
{
        if (shutdown(fd, SHUT_WR) < 0)
                return;
        uint64_t until = now_ns() + (uint64_t)DETACH_WAIT_MS * 1000000u;
        char sink[4096];
        for (uint64_t now; (now = now_ns()) < until;) {
                struct pollfd pfd = {.fd = fd, .events = POLLIN};
                int n = poll(&pfd, 1, (int)((until - now) / 1000000u) + 1);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return;
                ssize_t got = recv(fd, sink, sizeof(sink), MSG_DONTWAIT);
                if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN))
                        return; /* the host's side closed (or failed): detached */
        }
}

void host_client_rt_detach(struct host_rt *rt)
{
        if (!rt)
                return;
        if (rt->fd >= 0) {
                stream_end(rt->fd);
                close(rt->fd);
        }
        if (rt->wake_fd >= 0)
                close(rt->wake_fd);
        host_ring_unmap(&rt->ring);
        pthread_mutex_destroy(&rt->release_lock);
        pthread_mutex_destroy(&rt->state_lock);
        pthread_cond_destroy(&rt->released);
        free(rt->msg);
        free(rt);
}
