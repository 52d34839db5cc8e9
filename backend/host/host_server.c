/* SPDX-License-Identifier: MIT */
/* host_server.c: owns the session host: the process that holds every running session of a
   runtime directory (its lock, its socket, peer credentials checked on every request), answers
   each request by running the API functions here, streams completed buffers to real-time
   consumers, and ends when it has had no session for a grace period, on SIGTERM, or when its
   socket is taken away (its start as a detached process: host_spawn.c). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "etw/KernelTraceControl.h"
#include "etw_error.h"
#include "host.h"
#include "host_proto.h"
#include "util/clock.h"
#include "util/thread_sched.h"

#define LOCK_NAME       "host.lock"
#define MAX_READING     64  /* connections whose request has yet to arrive: accepting waits */
#define MAX_CONNECTIONS 256 /* connections in all: accepting waits */
#define MAX_STREAMS     128 /* real-time consumers and bindings: more are refused */
/* a request arrives whole, and a reply is taken, within this (ETWTOP_HOST_IDLE_MS) */
#define DEFAULT_IDLE_MS 5000
/* a stopped session's consumer that takes nothing for this is given up on
   (ETWTOP_HOST_DRAIN_MS) */
#define DEFAULT_DRAIN_MS 30000
#define LOCK_WAIT_MS     10000 /* an ending host releases the lock within this */
#define DEFAULT_GRACE_MS 5000
#define TICK_MS          100
/* with sessions, the socket's directory is looked at this often (an ancestor renamed away, which
   the directory's inotify watch does not see); a change in the directory itself wakes the host at
   once. Without the watch (inotify refused), every second. */
#define ORPHAN_CHECK_MS      10000
#define ORPHAN_CHECK_BARE_MS 1000
/* a kept connection's and a binding's look at the sessions while they wait: the host's end
   wakes them at once (exit_fds), a new request or the binder's end too; this bounds only how
   late they see their session stopped by another (each look a wake-up, dear on a busy machine:
   it was 250 ms, eight a second of a screen's two) */
#define LOOK_MS         2000
#define THREADS_WAIT_MS 10000

static atomic_bool is_exiting; /* SIGTERM: the sessions are being stopped */
static atomic_int nr_active;   /* connections being served */
static atomic_int nr_reading;  /* of them, those whose request has yet to arrive */
static atomic_int nr_streams;  /* of them, real-time consumers and bindings */
static int idle_ms = DEFAULT_IDLE_MS, drain_ms = DEFAULT_DRAIN_MS;
static int signal_fds[2] = {-1, -1}; /* the signal handler's self-pipe */
/* a connection's end, or a request that leaves no session, wakes the main loop: the grace
   period starts then, not at the next socket check (up to ORPHAN_CHECK_MS later: a host
   lingered 11 to 15 s after its screen quit) */
static int wake_fds[2] = {-1, -1};
/* written once when the host ends, never read: readable from then on, it wakes every connection
   waiting in a poll */
static int exit_fds[2] = {-1, -1};
/* of the connections, kept ones waiting for their next request: they keep no host alive (the
   host's end wakes them) */
static atomic_int nr_kept_waiting;

/* Waits up to ms for fd's events or the host's end (is_exiting set): poll's count (0: the time
   ran out), -1 on error; *revents: fd's. */
static int poll_or_exit(int fd, short events, int ms, short *revents)
{
        struct pollfd pfd[2] = {{.fd = fd, .events = events},
                                {.fd = exit_fds[0], .events = POLLIN}};
        int n = poll(pfd, exit_fds[0] >= 0 ? 2 : 1, ms);
        *revents = n > 0 ? pfd[0].revents : 0;
        return n;
}

struct conn {
        int fd;
        struct host_peer peer;
};

static int64_t now_ms(void)
{
        return (int64_t)(now_ns() / 1000000);
}

/* ---- replies ------------------------------------------------------------------------------ */

static void send_reply_within(int fd, const struct host_reply *rp, int ms)
{
        struct host_msg m = {0};
        host_msg_reply(&m, rp);
        host_io_write(fd, m.data, m.size, ms, NULL);
        host_msg_free(&m);
}

/* A client takes its reply at once; one that does not holds a thread no longer than idle_ms. */
static void send_reply(int fd, const struct host_reply *rp)
{
        send_reply_within(fd, rp, idle_ms);
}

static void reply_error(int fd, uint32_t code, int32_t rc, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

static void reply_error(int fd, uint32_t code, int32_t rc, const char *fmt, ...)
{
        struct host_reply rp = {.code = code, .rc = rc};
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(rp.msg, sizeof(rp.msg), fmt, ap);
        va_end(ap);
        send_reply(fd, &rp);
}

/* The API call's code and the calling thread's last error message, with data. */
static void reply_api(int fd, ULONG code, uint64_t handle, uint32_t length, const void *data,
                      uint32_t data_size)
{
        struct host_reply rp = {.code = code,
                                .handle = handle,
                                .length = length,
                                .data = data,
                                .data_size = data_size};
        snprintf(rp.msg, sizeof(rp.msg), "%s", etw_last_error_text());
        send_reply(fd, &rp);
}

/* An aligned copy of borrowed bytes (the message does not align them). */
static void *aligned_copy(const uint8_t *p, uint32_t size)
{
        void *out = malloc(size ? size : 1);
        if (out && size)
                memcpy(out, p, size);
        return out;
}

/* ---- properties in the caller's layout ----------------------------------------------------- */

/* The caller's EVENT_TRACE_PROPERTIES as the API call takes them: a copy, with the log file name
   made absolute by the client (path, when not empty) appended and LogFileNameOffset pointing at
   it. NULL when out of memory. */
static EVENT_TRACE_PROPERTIES *props_for_call(const struct host_request *rq)
{
        size_t size = rq->data_size, at = (size + 7) & ~(size_t)7;
        size_t total = rq->path[0] ? at + strlen(rq->path) + 1 : size;
        if (total > UINT32_MAX)
                return NULL;
        uint8_t *buf = calloc(1, total);
        if (!buf)
                return NULL;
        memcpy(buf, rq->data, size);
        EVENT_TRACE_PROPERTIES *p = (EVENT_TRACE_PROPERTIES *)buf;
        if (rq->path[0]) {
                memcpy(buf + at, rq->path, strlen(rq->path) + 1);
                p->LogFileNameOffset = (ULONG)at;
                p->Wnode.BufferSize = (ULONG)total;
        }
        return p;
}

/* The properties after the call in the caller's layout again (same size and offsets), the
   absolute log file name at the caller's offset where it fits. Writes over p. */
static void props_for_reply(EVENT_TRACE_PROPERTIES *p, const struct host_request *rq)
{
        if (!rq->path[0])
                return;
        EVENT_TRACE_PROPERTIES orig;
        memcpy(&orig, rq->data, sizeof(orig));
        uint32_t size = rq->data_size;
        char file[HOST_MAX_PATH + 1] = "";
        size_t room = p->Wnode.BufferSize - p->LogFileNameOffset;
        const char *at = (const char *)p + p->LogFileNameOffset;
        if (memchr(at, '\0', room))
                snprintf(file, sizeof(file), "%s", at);
        p->Wnode.BufferSize = size;
        p->LogFileNameOffset = orig.LogFileNameOffset;
        ULONG off = orig.LogFileNameOffset;
        if (file[0] && off >= sizeof(orig) && off < size && size - off > strlen(file))
                memcpy((char *)p + off, file, strlen(file) + 1);
}

/* ---- what a client may have done for it ------------------------------------------------- */

/* The file a request would have the host create or write, or NULL: a START's log file, an
   UPDATE's new one, a SAVE_WINDOW's. */
static const char *request_file(const struct host_request *rq)
{
        bool names_file = rq->type == HOST_REQ_START ||
                          (rq->type == HOST_REQ_CONTROL && rq->code == EVENT_TRACE_CONTROL_UPDATE);
        if (rq->type == HOST_REQ_SAVE_WINDOW)
                return rq->path;
        if (!names_file)
                return NULL;
        if (rq->path[0])
                return rq->path;
        EVENT_TRACE_PROPERTIES p;
        if (rq->data_size < sizeof(p))
                return NULL;
        memcpy(&p, rq->data, sizeof(p));
        ULONG off = p.LogFileNameOffset;
        if (off >= sizeof(p) && off < rq->data_size && rq->data[off])
                return (const char *)rq->data + off;
        return NULL;
}

/* Whether the host may do rq for the peer; when not, the refusal is sent. Its capabilities are
   the serving thread's already (host_peer_act_as): the kernel refuses what the client could
   not do itself. File names and process ids are the client's: the host writes files only when
   it sees the client's files (the same mount namespace and root), and traces a process only
   when it sees the client's processes (the same pid namespace). */
static bool is_allowed(int fd, const struct conn *c, const struct host_request *rq)
{
        /* a process id (ETWTOP_TRACE_PROCESS_INFO) of another pid namespace names another
           process here */
        if (rq->type == HOST_REQ_START && (rq->flags & HOST_FLAG_HAS_DEFAULTS) &&
            rq->defaults.pid >= 0 && !c->peer.has_host_pids) {
                reply_error(fd, ERROR_ACCESS_DENIED, -EACCES,
                            "the session host does not trace process %d for this client: the "
                            "client runs in another pid namespace than the host, where that "
                            "number names another process. Run it where the host runs, or "
                            "with ETWTOP_NO_HOST=1",
                            (int)rq->defaults.pid);
                return false;
        }
        const char *file = request_file(rq);
        if (!file || c->peer.has_host_files)
                return true;
        reply_error(fd, ERROR_ACCESS_DENIED, -EACCES,
                    "the session host does not write \"%.200s\" for this client: %s. Run it "
                    "where the host runs, or with ETWTOP_NO_HOST=1 (its sessions then stay in "
                    "its own process)",
                    file, c->peer.why_files);
        return false;
}

/* ---- the requests ------------------------------------------------------------------------- */

static void serve_start(int fd, const struct host_request *rq)
{
        EVENT_TRACE_PROPERTIES *p = props_for_call(rq);
        CLASSIC_EVENT_ID *ids = aligned_copy(rq->extra, rq->extra_size);
        if (!p || !ids) {
                free(p);
                free(ids);
                reply_error(fd, ERROR_NOT_ENOUGH_MEMORY, -ENOMEM,
                            "the session host is out of "
                            "memory");
                return;
        }
        const struct session_start_defaults *d = NULL;
        if (rq->flags & HOST_FLAG_HAS_DEFAULTS) {
                d = &rq->defaults;
                /* the starter's intervals are global, as Windows keeps them */
                for (uint32_t i = 0; i < d->nr_intervals; i++) {
                        TRACE_PROFILE_INTERVAL tpi = {d->intervals[i].source,
                                                      d->intervals[i].interval};
                        session_local_ops.set_info(0, TraceSampledProfileIntervalInfo, &tpi,
                                                   sizeof(tpi));
                }
        }
        CONTROLTRACE_ID h = 0;
        struct session_start_request req;
        char name[SESSION_MAX_NAME_CHARS + 1];
        ULONG code;
        if (rq->flags & HOST_FLAG_KERNEL_TRACE)
                code = session_check_kernel_trace(&h, p, rq->extra_size ? ids : NULL,
                                                  rq->extra_size / (uint32_t)sizeof(*ids), name,
                                                  &req);
        else
                code = session_check_start_trace(&h, rq->name, p, &req);
        /* the starter's handle-0 settings (d), not the host's own */
        if (code == ERROR_SUCCESS)
                code = session_local_ops.start(&h, p, &req, d);
        props_for_reply(p, rq);
        reply_api(fd, code, h, 0, p, rq->data_size);
        free(p);
        free(ids);
}

static void serve_control(int fd, const struct host_request *rq)
{
        EVENT_TRACE_PROPERTIES *p = props_for_call(rq);
        if (!p) {
                reply_error(fd, ERROR_NOT_ENOUGH_MEMORY, -ENOMEM,
                            "the session host is out of "
                            "memory");
                return;
        }
        const char *name = rq->name[0] ? rq->name : NULL;
        char new_file[SESSION_MAX_NAME_CHARS + 1];
        ULONG code = session_check_control(rq->handle, name, p, rq->code, new_file);
        if (code == ERROR_SUCCESS)
                code = session_local_ops.control(rq->handle, rq->handle ? NULL : name, p, rq->code,
                                                 new_file[0] ? new_file : NULL);
        props_for_reply(p, rq);
        reply_api(fd, code, 0, 0, p, rq->data_size);
        free(p);
}

static void serve_set_info(int fd, const struct host_request *rq)
{
        static uint8_t empty[8];
        void *info = NULL;
        if (rq->flags & HOST_FLAG_HAS_BUFFER)
                info = rq->data_size ? aligned_copy(rq->data, rq->data_size) : empty;
        if (rq->data_size && !info) {
                reply_error(fd, ERROR_NOT_ENOUGH_MEMORY, -ENOMEM, "out of memory");
                return;
        }
        ULONG code = session_local_ops.set_info(rq->handle, (TRACE_INFO_CLASS)rq->code, info,
                                                rq->length);
        reply_api(fd, code, 0, 0, NULL, 0);
        if (info != empty)
                free(info);
}

static void serve_query_info(int fd, const struct host_request *rq)
{
        uint8_t *buf = calloc(1, rq->length ? rq->length : 8);
        if (!buf) {
                reply_error(fd, ERROR_NOT_ENOUGH_MEMORY, -ENOMEM, "out of memory");
                return;
        }
        if (rq->data_size)
                memcpy(buf, rq->data, rq->data_size);
        ULONG ret = 0;
        ULONG code = session_local_ops.query_info(rq->handle, (TRACE_INFO_CLASS)rq->code,
                                                  (rq->flags & HOST_FLAG_HAS_BUFFER) ? buf : NULL,
                                                  rq->length, &ret);
        uint32_t out = code == ERROR_SUCCESS ? (ret < rq->length ? ret : rq->length) : 0;
        reply_api(fd, code, 0, ret, buf, out);
        free(buf);
}

static void serve_lbr(int fd, const struct host_request *rq)
{
        CLASSIC_EVENT_ID *ev = aligned_copy(rq->data, rq->data_size);
        if (!ev) {
                reply_error(fd, ERROR_NOT_ENOUGH_MEMORY, -ENOMEM, "out of memory");
                return;
        }
        ULONG n = rq->data_size / (ULONG)sizeof(CLASSIC_EVENT_ID);
        ULONG code = session_check_lbr(rq->code, n ? ev : NULL, n);
        if (code == ERROR_SUCCESS)
                code = session_local_ops.lbr(rq->handle, rq->code, n ? ev : NULL, n);
        reply_api(fd, code, 0, 0, NULL, 0);
        free(ev);
}

static void serve_enumerate(int fd)
{
        enum { MAX = 64 };
        const size_t blob = HOST_ENUM_BLOB_SIZE;
        uint8_t *blobs = calloc(MAX, blob);
        if (!blobs) {
                reply_error(fd, ERROR_NOT_ENOUGH_MEMORY, -ENOMEM, "out of memory");
                return;
        }
        PEVENT_TRACE_PROPERTIES arr[MAX];
        for (int i = 0; i < MAX; i++) {
                arr[i] = (PEVENT_TRACE_PROPERTIES)(blobs + (size_t)i * blob);
                arr[i]->Wnode.BufferSize = (ULONG)blob;
                arr[i]->LoggerNameOffset = sizeof(EVENT_TRACE_PROPERTIES);
                arr[i]->LogFileNameOffset = sizeof(EVENT_TRACE_PROPERTIES) + HOST_MAX_NAME + 1;
        }
        ULONG count = 0;
        ULONG code = session_local_ops.query_all(arr, MAX, &count);
        uint32_t n = count < MAX ? count : MAX;
        reply_api(fd, code, 0, count, blobs, (uint32_t)(n * blob));
        free(blobs);
}

static void serve_rt_header(int fd, const struct host_request *rq)
{
        uint8_t *buf = NULL;
        uint32_t size = 0;
        struct session_rt_info info;
        int rc = session_rt_header(rq->name, &buf, &size, &info);
        struct host_reply rp = {.rc = rc, .code = rc ? ERROR_WMI_INSTANCE_NOT_FOUND : 0};
        uint8_t *data = NULL;
        if (rc == 0) {
                data = malloc(HOST_RT_INFO_SIZE + (size_t)size);
                if (!data) {
                        rp.rc = -ENOMEM;
                        rp.code = ERROR_NOT_ENOUGH_MEMORY;
                } else {
                        host_rt_info_put(data, &info);
                        memcpy(data + HOST_RT_INFO_SIZE, buf, size);
                        rp.data = data;
                        rp.data_size = HOST_RT_INFO_SIZE + size;
                }
        }
        send_reply(fd, &rp);
        free(data);
        free(buf);
}

/* Counts a connection that stays (a consumer, a binding) among the streams; false, with the
   client told, when MAX_STREAMS run already. */
static bool stream_begin(int fd)
{
        if (atomic_fetch_add(&nr_streams, 1) >= MAX_STREAMS) {
                atomic_fetch_sub(&nr_streams, 1);
                reply_error(fd, ERROR_BUSY, -EBUSY,
                            "the session host serves %d real-time consumers and bindings "
                            "already",
                            MAX_STREAMS);
                return false;
        }
        return true;
}

/* A real-time consumer: the session's buffers, as its own bounded queue (core/session_rt.c) holds
   them, until the session ends or the consumer goes. A slow consumer blocks only this thread: its
   queue fills and loses buffers (counted), the logger never waits. */
static void serve_rt_attach(int fd, const struct host_request *rq)
{
        if (!stream_begin(fd))
                return;
        struct session_rt *rt = NULL;
        struct session_rt_info info;
        int rc = session_rt_attach(rq->name, &rt, &info);
        uint8_t infob[HOST_RT_INFO_SIZE];
        struct host_reply rp = {.rc = rc, .code = rc ? ERROR_WMI_INSTANCE_NOT_FOUND : 0};
        if (rc == 0) {
                host_rt_info_put(infob, &info);
                rp.data = infob;
                rp.data_size = sizeof(infob);
        }
        send_reply(fd, &rp);
        if (rc < 0) {
                atomic_fetch_sub(&nr_streams, 1);
                return;
        }
        host_rt_serve(fd, rt, &info, rq->flags, drain_ms, &is_exiting);
        session_rt_detach(rt);
        atomic_fetch_sub(&nr_streams, 1);
}

static void serve_keep_window(int fd, const struct host_request *rq)
{
        struct etl_error err = {0};
        int rc = session_keep_window(rq->handle, (size_t)rq->value, &err);
        reply_error(fd, rc ? etw_error_from_errno(rc) : ERROR_SUCCESS, rc, "%s", err.msg);
}

static void serve_save_window(int fd, const struct host_request *rq)
{
        struct etl_error err = {0};
        int rc = session_save_ring(rq->handle, rq->path, rq->flags & HOST_FLAG_FORCE, &err);
        reply_error(fd, rc ? etw_error_from_errno(rc) : ERROR_SUCCESS, rc, "%s", err.msg);
}

/* etw_bind_session: the session stops (its file finalized, as a STOP does) when this connection
   ends, that is when the process that bound it ends, however it ends. */
static void serve_bind(int fd, const struct host_request *rq)
{
        struct {
                EVENT_TRACE_PROPERTIES p;
                char names[2 * (HOST_MAX_NAME + 1)];
        } q;
        memset(&q, 0, sizeof(q));
        q.p.Wnode.BufferSize = sizeof(q);
        if (!stream_begin(fd))
                return;
        ULONG code =
                session_local_ops.control(rq->handle, NULL, &q.p, EVENT_TRACE_CONTROL_QUERY, NULL);
        reply_api(fd, code, rq->handle, 0, NULL, 0);
        if (code != ERROR_SUCCESS) {
                atomic_fetch_sub(&nr_streams, 1);
                return;
        }
        while (!atomic_load(&is_exiting)) {
                short revents;
                int n = poll_or_exit(fd, POLLIN | POLLRDHUP, LOOK_MS, &revents);
                if (n < 0 && errno != EINTR)
                        break;
                if (atomic_load(&is_exiting))
                        break; /* the host stops every session */
                memset(&q, 0, sizeof(q));
                q.p.Wnode.BufferSize = sizeof(q);
                if (revents) {
                        /* the binding process ended (or closed its end): so does the session */
                        session_local_ops.control(rq->handle, NULL, &q.p, EVENT_TRACE_CONTROL_STOP,
                                                  NULL);
                        break;
                }
                if (session_local_ops.control(rq->handle, NULL, &q.p, EVENT_TRACE_CONTROL_QUERY,
                                              NULL) != ERROR_SUCCESS)
                        break; /* stopped by someone: nothing left to do */
        }
        atomic_fetch_sub(&nr_streams, 1);
}

static void serve(const struct conn *c, const struct host_request *rq)
{
        int fd = c->fd;
        if (!is_allowed(fd, c, rq))
                return;
        switch (rq->type) {
        case HOST_REQ_START: serve_start(fd, rq); break;
        case HOST_REQ_CONTROL: serve_control(fd, rq); break;
        case HOST_REQ_SET_INFO: serve_set_info(fd, rq); break;
        case HOST_REQ_QUERY_INFO: serve_query_info(fd, rq); break;
        case HOST_REQ_LBR: serve_lbr(fd, rq); break;
        case HOST_REQ_ENUMERATE: serve_enumerate(fd); break;
        case HOST_REQ_RT_HEADER: serve_rt_header(fd, rq); break;
        case HOST_REQ_RT_ATTACH: serve_rt_attach(fd, rq); break;
        case HOST_REQ_KEEP_WINDOW: serve_keep_window(fd, rq); break;
        case HOST_REQ_SAVE_WINDOW: serve_save_window(fd, rq); break;
        case HOST_REQ_BIND: serve_bind(fd, rq); break;
        case HOST_REQ_PING: {
                struct host_reply rp = {.handle = (uint64_t)getpid(), .length = geteuid()};
                send_reply(fd, &rp);
                break;
        }
        default: reply_error(fd, ERROR_INVALID_FUNCTION, -EINVAL, "unknown request"); break;
        }
}

/* Waits for a kept connection's next request to begin: true when it has, false when the
   client closed it, sent none for HOST_KEEP_MS, or the host has no sessions left or ends.
   Meanwhile the connection is not one whose request is being read (nr_reading). */
static bool next_request_begins(int fd)
{
        int64_t deadline = now_ms() + HOST_KEEP_MS;
        bool is_begun = false;
        atomic_fetch_add(&nr_kept_waiting, 1);
        for (int64_t left; !atomic_load(&is_exiting) && session_nr_sessions() > 0 &&
                           (left = deadline - now_ms()) > 0;) {
                short revents;
                int n = poll_or_exit(fd, POLLIN | POLLRDHUP, left < LOOK_MS ? (int)left : LOOK_MS,
                                     &revents);
                if (n < 0 && errno != EINTR)
                        break;
                if (revents) {
                        is_begun = (revents & POLLIN) && !(revents & (POLLERR | POLLNVAL));
                        break;
                }
        }
        atomic_fetch_sub(&nr_kept_waiting, 1);
        return is_begun && !atomic_load(&is_exiting);
}

static void wake_main(void)
{
        if (wake_fds[1] >= 0 && write(wake_fds[1], "w", 1) < 0) {
                /* the pipe is full: a wake is pending already */
        }
}

static void *conn_main(void *arg)
{
        struct conn *c = arg;
        thread_name_self("etwtop-conn");
        uint8_t *msg = NULL;
        size_t size = 0;
        char why[512];
        /* the client's process, read here, where a slow /proc stalls only this client; then
           this thread can do what the client could do itself, no more (for each request the
           connection carries: its client is the one that connected) */
        int rc = host_peer_read(c->fd, &c->peer);
        if (rc == 0)
                rc = host_peer_act_as(&c->peer);
        if (rc < 0) {
                reply_error(c->fd, ERROR_ACCESS_DENIED, rc,
                            "the session host could not read the client's credentials, or take "
                            "on its capabilities: %s",
                            strerror(-rc));
                goto done;
        }
        for (bool is_next = true; is_next;) {
                is_next = false;
                rc = host_io_read_request(c->fd, idle_ms, &msg, &size, why, sizeof(why));
                atomic_fetch_sub(&nr_reading, 1);
                if (rc == 0) {
                        struct host_request *rq = malloc(sizeof(*rq));
                        if (!rq)
                                reply_error(c->fd, ERROR_NOT_ENOUGH_MEMORY, -ENOMEM,
                                            "out of memory");
                        else if ((rc = host_proto_decode_request(msg, size, rq, why, sizeof(why))) <
                                 0)
                                reply_error(c->fd, ERROR_INVALID_PARAMETER, rc,
                                            "the session host refused a malformed request: %s",
                                            why);
                        else
                                serve(c, rq);
                        /* the last session stopped (or none started): the grace starts now */
                        if (rq && session_nr_sessions() == 0)
                                wake_main();
                        /* a client that polls (a screen's refresh) asks again on it: no
                           connection, thread and look at its process a request */
                        is_next = rq && rc == 0 && host_proto_is_kept_after(rq->type) &&
                                  next_request_begins(c->fd);
                        free(rq);
                } else if (rc == -EPROTO || rc == -EMSGSIZE) {
                        reply_error(c->fd, rc == -EPROTO ? ERROR_INVALID_DATA : ERROR_BAD_LENGTH,
                                    rc, "the session host refused the request: %s", why);
                } else if (rc == -ETIMEDOUT) {
                        reply_error(c->fd, ERROR_TIMEOUT, rc, "the session host hung up: %s", why);
                }
                /* else: the client went away mid-request; nothing to say */
                free(msg);
                msg = NULL;
                if (is_next)
                        atomic_fetch_add(&nr_reading, 1);
        }
        close(c->fd);
        free(c);
        atomic_fetch_sub(&nr_active, 1);
        wake_main();
        return NULL;
done:
        atomic_fetch_sub(&nr_reading, 1);
        close(c->fd);
        free(c);
        atomic_fetch_sub(&nr_active, 1);
        wake_main();
        return NULL;
}

/* ---- the process ---------------------------------------------------------------------------- */

static void on_signal(int sig)
{
        int saved = errno;
        unsigned char b = (unsigned char)sig;
        if (write(signal_fds[1], &b, 1) < 0) {
                /* the pipe is full: a signal is pending already */
        }
        errno = saved;
}

static void report(int ready_fd, char status, const char *text)
{
        if (ready_fd < 0)
                return;
        char buf[600];
        int n = snprintf(buf, sizeof(buf), "%c%s", status, text ? text : "");
        if (n > (int)sizeof(buf) - 1)
                n = (int)sizeof(buf) - 1;
        if (write(ready_fd, buf, (size_t)n) < 0) {
                /* the starter is gone: nobody to tell */
        }
        close(ready_fd);
}

/* Whether a host answers on the socket at path. */
static bool socket_answers(const struct sockaddr_un *sa)
{
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return false;
        bool ok = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0;
        close(fd);
        return ok;
}

/* A time in ms from the environment variable name, else def. */
static int env_ms(const char *name, int def)
{
        const char *e = getenv(name);
        char *end;
        long v = e ? strtol(e, &end, 10) : -1;
        return e && *e && !*end && v >= 0 && v < 3600000 ? (int)v : def;
}

/* A new connection: refused at once when its peer is another user (nothing of it is read,
   nothing of its process looked at), else served by a thread of its own. */
static void conn_accept(int fd)
{
        struct ucred cred;
        socklen_t len = sizeof(cred);
        struct conn *c = NULL;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
            !(c = calloc(1, sizeof(*c)))) {
                close(fd);
                return;
        }
        c->fd = fd;
        /* the host's own user, or root; nobody else */
        if (cred.uid != geteuid() && cred.uid != 0) {
                struct host_reply rp = {.code = ERROR_ACCESS_DENIED, .rc = -EACCES};
                snprintf(rp.msg, sizeof(rp.msg),
                         "the session host of uid %u refuses uid %u: that user's sessions are "
                         "theirs (nobody gains rights through the host)",
                         (unsigned)geteuid(), (unsigned)cred.uid);
                send_reply_within(fd, &rp, 0); /* a fresh socket takes it, or nothing */
                close(fd);
                free(c);
                return;
        }
        atomic_fetch_add(&nr_active, 1);
        atomic_fetch_add(&nr_reading, 1);
        pthread_t th;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&th, &attr, conn_main, c) != 0) {
                atomic_fetch_sub(&nr_reading, 1);
                atomic_fetch_sub(&nr_active, 1);
                close(fd);
                free(c);
        }
        pthread_attr_destroy(&attr);
}

/* Takes the directory's lock; when another host holds it, waits a little for it to end (a host
   that ends for want of sessions releases it at once). 0, -EEXIST (another host serves), or
   -errno. */
static int take_lock(int lock_fd, const struct sockaddr_un *sa, char *why, size_t why_size)
{
        int64_t deadline = now_ms() + LOCK_WAIT_MS;
        while (flock(lock_fd, LOCK_EX | LOCK_NB) < 0) {
                if (errno != EWOULDBLOCK && errno != EINTR) {
                        int e = errno;
                        host_say(why, why_size, "locking the session host directory: %s",
                                 strerror(e));
                        return -e;
                }
                if (socket_answers(sa) || now_ms() > deadline) {
                        host_say(why, why_size, "another session host serves this directory");
                        return -EEXIST;
                }
                struct timespec pause = {0, 10000000};
                nanosleep(&pause, NULL);
        }
        return 0;
}

int host_serve(const char *dir, int ready_fd, unsigned flags, char *why, size_t why_size)
{
        host_become_host();
        session_serving_priority(); /* every connection's thread inherits it */
        char lock_path[PATH_MAX];
        struct sockaddr_un sa;
        memset(&sa, 0, sizeof(sa));
        sa.sun_family = AF_UNIX;
        snprintf(lock_path, sizeof(lock_path), "%s/" LOCK_NAME, dir);
        int n = snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/" HOST_SOCKET_NAME, dir);
        if (n < 0 || (size_t)n >= sizeof(sa.sun_path)) {
                host_say(why, why_size, "%s is too long for a socket name", dir);
                report(ready_fd, 'F', why);
                return -ENAMETOOLONG;
        }
        int lock_fd = open(lock_path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (lock_fd < 0) {
                int e = errno;
                host_say(why, why_size, "%s: %s", lock_path, strerror(e));
                report(ready_fd, 'F', why);
                return -e;
        }
        int rc = take_lock(lock_fd, &sa, why, why_size);
        if (rc < 0) {
                close(lock_fd);
                report(ready_fd, rc == -EEXIST ? 'B' : 'F', why);
                return rc;
        }
        /* the lock file names the host's process */
        char pid_text[32];
        int len = snprintf(pid_text, sizeof(pid_text), "%d\n", (int)getpid());
        if (ftruncate(lock_fd, 0) < 0 || pwrite(lock_fd, pid_text, (size_t)len, 0) != len) {
                /* only informative */
        }

        /* a socket left by a host that was killed is replaced: the lock says nobody serves */
        unlink(sa.sun_path);
        int listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        mode_t old_umask = umask(077);
        rc = listen_fd < 0 ? -1 : bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa));
        umask(old_umask);
        if (rc == 0)
                rc = chmod(sa.sun_path, 0600);
        if (rc == 0)
                rc = listen(listen_fd, 64);
        struct stat sock_st = {0};
        if (rc == 0)
                rc = lstat(sa.sun_path, &sock_st);
        if (rc < 0 || pipe2(signal_fds, O_CLOEXEC | O_NONBLOCK) < 0 ||
            (wake_fds[0] < 0 && pipe2(wake_fds, O_CLOEXEC | O_NONBLOCK) < 0) ||
            (exit_fds[0] < 0 && pipe2(exit_fds, O_CLOEXEC | O_NONBLOCK) < 0)) {
                int e = errno;
                host_say(why, why_size, "%s: %s", sa.sun_path, strerror(e));
                if (listen_fd >= 0)
                        close(listen_fd);
                close(lock_fd);
                report(ready_fd, 'F', why);
                return -e;
        }
        struct sigaction act = {.sa_handler = on_signal};
        sigemptyset(&act.sa_mask);
        sigaction(SIGTERM, &act, NULL);
        sigaction(SIGINT, &act, NULL);
        signal(SIGPIPE, SIG_IGN);
        report(ready_fd, 'R', NULL);

        int grace = env_ms("ETWTOP_HOST_GRACE_MS", DEFAULT_GRACE_MS);
        idle_ms = env_ms("ETWTOP_HOST_IDLE_MS", DEFAULT_IDLE_MS);
        drain_ms = env_ms("ETWTOP_HOST_DRAIN_MS", DEFAULT_DRAIN_MS);
        /* the socket's directory watched: its socket removed or replaced, or the directory
           itself removed or moved, wakes the host for its check at once, so that with sessions
           the host need not wake every second to look (a wake-up each, dear on a busy
           machine) */
        int watch_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (watch_fd >= 0 &&
            inotify_add_watch(watch_fd, dir,
                              IN_DELETE | IN_MOVED_FROM | IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF |
                                      IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW) < 0) {
                close(watch_fd);
                watch_fd = -1;
        }
        /* ETWTOP_HOST_CHECK_MS: the tests', which make it long to show that nothing waits
           for it but an orphaned host */
        int check_ms = watch_fd >= 0 ? env_ms("ETWTOP_HOST_CHECK_MS", ORPHAN_CHECK_MS)
                                     : ORPHAN_CHECK_BARE_MS;
        int64_t idle_since = 0, next_check = now_ms() + check_ms;
        const char *ended_why = NULL;
        while (!ended_why) {
                /* a full house: new clients wait in the listen queue until a request is
                   served or times out (idle_ms), rather than being turned away */
                bool is_full = atomic_load(&nr_reading) >= MAX_READING ||
                               atomic_load(&nr_active) >= MAX_CONNECTIONS;
                struct pollfd pfd[4] = {{.fd = is_full ? -1 : listen_fd, .events = POLLIN},
                                        {.fd = signal_fds[0], .events = POLLIN},
                                        {.fd = watch_fd, .events = POLLIN},
                                        {.fd = wake_fds[0], .events = POLLIN}};
                /* with sessions, nothing here needs a tick before the next socket check
                   (clients, signals and the directory's changes wake the poll) */
                int64_t left = next_check - now_ms();
                int wait = is_full ? 10 : TICK_MS;
                if (!is_full && session_nr_sessions() > 0 && left > TICK_MS)
                        wait = left > check_ms ? check_ms : (int)left;
                int k = poll(pfd, 4, wait);
                if (k < 0 && errno != EINTR)
                        break;
                if (k > 0 && pfd[1].revents) {
                        ended_why = "signal";
                        break;
                }
                if (k > 0 && (pfd[0].revents & POLLIN)) {
                        int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
                        if (fd >= 0)
                                conn_accept(fd);
                }
                if (k > 0 && pfd[3].revents) {
                        /* a connection ended: the idle check below looks for itself */
                        char w[64];
                        while (read(wake_fds[0], w, sizeof(w)) > 0)
                                ;
                }
                if (k > 0 && pfd[2].revents) {
                        /* what changed is not read: the check below looks for itself */
                        char events[4096]
                                __attribute__((aligned(__alignof__(struct inotify_event))));
                        while (read(watch_fd, events, sizeof(events)) > 0)
                                ;
                        if (pfd[2].revents & (POLLERR | POLLHUP | POLLNVAL)) {
                                close(watch_fd); /* the watch is gone: the every-second look */
                                watch_fd = -1;
                                check_ms = ORPHAN_CHECK_BARE_MS;
                        }
                        next_check = 0;
                }
                int64_t now = now_ms();
                bool is_idle = session_nr_sessions() == 0 &&
                               atomic_load(&nr_active) == atomic_load(&nr_kept_waiting);
                if (!is_idle || (flags & HOST_RUN_PERSISTENT))
                        idle_since = 0;
                else if (!idle_since)
                        idle_since = now;
                else if (now - idle_since >= grace)
                        ended_why = "idle";
                if (now >= next_check) {
                        /* a socket taken away (the directory removed): nobody can reach these
                           sessions any more, so they end */
                        struct stat st;
                        if (lstat(sa.sun_path, &st) < 0 || st.st_ino != sock_st.st_ino ||
                            st.st_dev != sock_st.st_dev)
                                ended_why = "orphaned";
                        next_check = now + check_ms;
                }
        }
        if (watch_fd >= 0)
                close(watch_fd);
        /* no new client from here: the next start finds no socket and starts a host, which
           waits for this one's lock */
        if (!ended_why || strcmp(ended_why, "orphaned") != 0)
                unlink(sa.sun_path);
        close(listen_fd);
        atomic_store(&is_exiting, true);
        if (write(exit_fds[1], "x", 1) < 0) {
                /* no wake: the waits end at their LOOK_MS */
        }
        session_stop_all();
        int64_t deadline = now_ms() + THREADS_WAIT_MS;
        while (atomic_load(&nr_active) > 0 && now_ms() < deadline) {
                struct timespec pause = {0, 10000000};
                nanosleep(&pause, NULL);
        }
        close(lock_fd);
        host_say(why, why_size, "ended (%s)", ended_why ? ended_why : "poll failed");
        return 0;
}
