/* SPDX-License-Identifier: MIT */
/* host_call.c: owns one request from a client to the session host: its connection (a new one,
   or the one this process keeps for the short requests, host_proto.h), the request sent, the
   reply read, and the result of a request that got none. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "etw_error.h"
#include "host.h"
#include "host_call.h"
#include "host_proto.h"

#define SEND_MS      10000
#define REPLY_MS     120000 /* a STOP drains, writes the rundown and finalizes the file */
#define MAX_ATTEMPTS 3

static void socket_path(struct sockaddr_un *sa, const char *dir)
{
        memset(sa, 0, sizeof(*sa));
        sa->sun_family = AF_UNIX;
        snprintf(sa->sun_path, sizeof(sa->sun_path), "%s/" HOST_SOCKET_NAME, dir);
}

/* A connection to the host of dir, which is checked to run as the caller. The fd, or -ENOENT
   (no socket), -ECONNREFUSED (a socket nothing serves: the host is gone), -EACCES or -errno;
   why says which. */
int host_connect(const char *dir, char *why, size_t why_size)
{
        struct sockaddr_un sa;
        socket_path(&sa, dir);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
                int e = errno;
                snprintf(why, why_size, "socket: %s", strerror(e));
                return -e;
        }
        while (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                int e = errno;
                if (e == EINTR)
                        continue;
                close(fd);
                if (e == ENOENT)
                        snprintf(why, why_size, "no session host runs on %s", dir);
                else if (e == ECONNREFUSED)
                        snprintf(why, why_size,
                                 "the session host of %s is gone: its socket remains but nothing "
                                 "answers (was it killed?); its sessions ended with it",
                                 dir);
                else
                        snprintf(why, why_size, "connecting to the session host at %s: %s",
                                 sa.sun_path, strerror(e));
                return -e;
        }
        struct ucred cred;
        socklen_t len = sizeof(cred);
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != geteuid()) {
                snprintf(why, why_size,
                         "the session host at %s runs as uid %u, not as you (uid %u): refused",
                         sa.sun_path, (unsigned)cred.uid, (unsigned)geteuid());
                close(fd);
                return -EACCES;
        }
        return fd;
}

/* ---- one request ---------------------------------------------------------------------------- */

void host_call_free(struct call *c)
{
        free(c->msg);
        c->msg = NULL;
}

static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static int kept_fd = -1; /* under kept_lock: the kept connection, -1 none */
static pid_t kept_pid;   /* the process that made it (a fork's child makes its own) */

/* rq on the kept connection (kept_lock held): 0 with the reply in *c, -ENOTCONN where there is
   none, or the host had closed it before it read rq (its keep time passed, its last session
   ended, or another host serves now): the caller opens another. */
static int kept_call(const struct host_request *rq, struct call *c, char *why, size_t why_size)
{
        if (kept_fd >= 0 && kept_pid != getpid()) {
                close(kept_fd); /* the parent's, inherited: this process's copy only */
                kept_fd = -1;
        }
        if (kept_fd < 0)
                return -ENOTCONN;
        struct host_msg m = {0};
        host_msg_request(&m, rq);
        int rc = host_io_write(kept_fd, m.data, m.size, SEND_MS, NULL);
        host_msg_free(&m);
        size_t size = 0;
        if (rc == 0)
                rc = host_io_read_msg(kept_fd, REPLY_MS, REPLY_MS, &c->msg, &size, why, why_size);
        if (rc == 0) {
                rc = host_proto_decode_reply(c->msg, size, &c->rp, why, why_size);
                if (rc == 0)
                        return 0;
                host_call_free(c);
        }
        close(kept_fd);
        kept_fd = -1;
        return rc == -EPIPE || rc == -ECONNRESET ? -ENOTCONN : rc == -EAGAIN ? -ETIMEDOUT : rc;
}

static int host_call_new(const struct host_request *rq, bool may_start, bool is_keep,
                         struct call *c, char *why, size_t why_size);

/* Sends rq to the host and reads its reply into *c. With may_start, a host is started when none
   runs, and the request is sent again when the host closed the connection before reading it
   (it was ending for want of sessions). 0, or -ENOENT/-ECONNREFUSED (no host runs), -EACCES,
   -ECONNRESET/-EBADMSG (the host ended before replying), -ETIMEDOUT, -EPROTO, -errno; why says
   which. */
int host_call(const struct host_request *rq, bool may_start, struct call *c, char *why,
              size_t why_size)
{
        memset(c, 0, sizeof(*c));
        /* a short request on the kept connection, unless another thread's is on it */
        bool is_keep = host_proto_is_kept_after(rq->type) && pthread_mutex_trylock(&kept_lock) == 0;
        if (is_keep) {
                int rc = kept_call(rq, c, why, why_size);
                if (rc != -ENOTCONN) {
                        pthread_mutex_unlock(&kept_lock);
                        return rc;
                }
        }
        int rc = host_call_new(rq, may_start, is_keep, c, why, why_size);
        if (is_keep)
                pthread_mutex_unlock(&kept_lock);
        return rc;
}

/* host_call on a new connection, kept after the reply with is_keep (kept_lock held). */
static int host_call_new(const struct host_request *rq, bool may_start, bool is_keep,
                         struct call *c, char *why, size_t why_size)
{
        char dir[PATH_MAX];
        int rc = host_client_dir(dir, sizeof(dir), may_start, why, why_size);
        if (rc < 0)
                return rc;
        struct host_msg m = {0};
        host_msg_request(&m, rq);
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
                int fd = host_connect(dir, why, why_size);
                if ((fd == -ENOENT || fd == -ECONNREFUSED) && may_start) {
                        rc = host_spawn(dir, why, why_size);
                        if (rc < 0)
                                break;
                        fd = host_connect(dir, why, why_size);
                }
                if (fd < 0) {
                        rc = fd;
                        break;
                }
                rc = host_io_write(fd, m.data, m.size, SEND_MS, NULL);
                size_t size = 0;
                if (rc == 0)
                        rc = host_io_read_msg(fd, REPLY_MS, REPLY_MS, &c->msg, &size, why,
                                              why_size);
                else
                        snprintf(why, why_size, "sending a %s request to the session host: %s",
                                 host_proto_type_name(rq->type), strerror(-rc));
                if (rc == -EAGAIN)
                        rc = -ETIMEDOUT;
                bool is_read = rc == 0;
                if (is_read) {
                        rc = host_proto_decode_reply(c->msg, size, &c->rp, why, why_size);
                        if (rc < 0)
                                host_call_free(c);
                }
                if (rc == 0 && is_keep) {
                        kept_fd = fd; /* the next short request goes on it */
                        kept_pid = getpid();
                } else {
                        close(fd);
                }
                if (is_read)
                        break;
                if (!(may_start && (rc == -ECONNRESET || rc == -EPIPE)))
                        break;
        }
        host_msg_free(&m);
        if (rc == -ECONNRESET || rc == -EPIPE) {
                char tmp[512];
                snprintf(tmp, sizeof(tmp), "%s", why);
                snprintf(why, why_size,
                         "the session host ended before it replied (was it killed?): %s", tmp);
        }
        return rc;
}

/* The Win32 code of a request that did not get a reply, with the last error set: what names
   the call; a missing host means no such session (the sessions ended with it). */
ULONG host_no_reply(const char *what, int rc, const char *why)
{
        DWORD code;
        switch (-rc) {
        case ENOENT:
        case ECONNREFUSED: code = ERROR_WMI_INSTANCE_NOT_FOUND; break;
        case EACCES:
        case EPERM: code = ERROR_ACCESS_DENIED; break;
        case ECONNRESET:
        case EPIPE:
        case EBADMSG: code = ERROR_BROKEN_PIPE; break;
        case EPROTO: code = ERROR_INVALID_DATA; break;
        case ETIMEDOUT: code = ERROR_TIMEOUT; break;
        default: code = etw_error_from_errno(rc); break;
        }
        etw_set_error(code, "%s: %s", what, why);
        return code;
}

/* The reply's code and message become the caller's result and last error. */
ULONG host_take_reply(const struct call *c)
{
        if (c->rp.msg[0])
                etw_set_error(c->rp.code, "%s", c->rp.msg);
        else
                etw_set_error(c->rp.code, NULL);
        return c->rp.code;
}
