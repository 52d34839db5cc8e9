/* SPDX-License-Identifier: MIT */
/* host_io.c: owns the moving of session host messages over a Unix socket: whole writes that
   never raise SIGPIPE and give up on a stalled peer, and reads of one framed message whose
   header is checked before its body is allocated. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "host.h"
#include "host_proto.h"
#include "util/clock.h"

static void say(char *why, size_t why_size, const char *what, int err)
{
        if (why && why_size)
                snprintf(why, why_size, "%s: %s", what, strerror(err));
}

/* Waits for events on fd for at most ms (-1: forever). 1 when ready, 0 on timeout, -errno. */
static int wait_fd(int fd, short events, int ms)
{
        struct pollfd pfd = {.fd = fd, .events = events};
        for (;;) {
                int n = poll(&pfd, 1, ms);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                return n;
        }
}

int host_io_write(int fd, const void *buf, size_t size, int timeout_ms, const atomic_bool *cancel)
{
        const uint8_t *p = buf;
        size_t done = 0;
        while (done < size) {
                if (cancel && atomic_load(cancel))
                        return -ECANCELED;
                ssize_t n = send(fd, p + done, size - done, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n > 0) {
                        done += (size_t)n;
                        continue;
                }
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
                        return -errno;
                /* full: wait for room, in slices so that a cancel is seen */
                int waited = 0, rc = 0;
                while (waited < timeout_ms) {
                        int slice = timeout_ms - waited < 250 ? timeout_ms - waited : 250;
                        rc = wait_fd(fd, POLLOUT, slice);
                        if (rc != 0)
                                break;
                        waited += slice;
                        if (cancel && atomic_load(cancel))
                                return -ECANCELED;
                }
                if (rc < 0)
                        return rc;
                if (rc == 0)
                        return -ETIMEDOUT;
        }
        return 0;
}

/* The parts left after done bytes, in rest (room for nr_parts): how many. */
static int parts_after(const struct iovec *parts, int nr_parts, size_t done, struct iovec *rest)
{
        int n = 0;
        for (int i = 0; i < nr_parts; i++) {
                if (done >= parts[i].iov_len) {
                        done -= parts[i].iov_len;
                        continue;
                }
                rest[n].iov_base = (uint8_t *)parts[i].iov_base + done;
                rest[n].iov_len = parts[i].iov_len - done;
                done = 0;
                n++;
        }
        return n;
}

ssize_t host_io_send_rest(int fd, const struct iovec *parts, int nr_parts, size_t done)
{
        struct iovec rest[HOST_IO_MAX_PARTS];
        if (nr_parts > HOST_IO_MAX_PARTS)
                return -EINVAL;
        struct msghdr mh = {.msg_iov = rest,
                            .msg_iovlen = (size_t)parts_after(parts, nr_parts, done, rest)};
        if (!mh.msg_iovlen)
                return 0;
        for (;;) {
                ssize_t n = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n >= 0)
                        return n;
                if (errno == EINTR)
                        continue;
                if (errno == EAGAIN || errno == EWOULDBLOCK)
                        return 0;
                return -errno;
        }
}

size_t host_io_copy_rest(const struct iovec *parts, int nr_parts, size_t done, uint8_t *out)
{
        size_t size = 0;
        for (int i = 0; i < nr_parts; i++) {
                if (done >= parts[i].iov_len) {
                        done -= parts[i].iov_len;
                        continue;
                }
                memcpy(out + size, (const uint8_t *)parts[i].iov_base + done,
                       parts[i].iov_len - done);
                size += parts[i].iov_len - done;
                done = 0;
        }
        return size;
}

static int64_t now_ms(void)
{
        return (int64_t)(now_ns() / 1000000);
}

/* The wait before the next part: ms, or what is left until deadline (a monotonic time in ms;
   0: none) when that is less. */
static int part_ms(int ms, int64_t deadline)
{
        if (!deadline)
                return ms;
        int64_t left = deadline - now_ms();
        if (left <= 0)
                return 0;
        return left < ms || ms < 0 ? (int)left : ms;
}

/* Reads exactly n bytes, the first *got of them read already, waiting up to ms for each part
   and never past deadline (0: none). 0, -ECONNRESET at end of file before the first byte (*got
   0), -EBADMSG at end of file after it, -ETIMEDOUT or -errno. What has arrived is taken without
   a poll first: a stream's buffer is most often there whole (a poll before each read was three
   calls a buffer). */
static int read_exact(int fd, uint8_t *out, size_t n, int ms, int64_t deadline, size_t *got)
{
        while (*got < n) {
                ssize_t k = recv(fd, out + *got, n - *got, MSG_DONTWAIT);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                        int rc = wait_fd(fd, POLLIN, part_ms(ms, deadline));
                        if (rc < 0)
                                return rc;
                        if (rc == 0)
                                return -ETIMEDOUT;
                        continue;
                }
                if (k < 0)
                        return -errno;
                if (k == 0)
                        return *got ? -EBADMSG : -ECONNRESET;
                *got += (size_t)k;
        }
        return 0;
}

/* The room for a message of need bytes: a fresh allocation (cap NULL), or *msg made large
   enough (*cap its bytes). NULL when out of memory (*msg as it was). */
static uint8_t *msg_room(uint8_t **msg, size_t *cap, size_t need)
{
        if (!cap)
                return malloc(need);
        if (*msg && *cap >= need)
                return *msg;
        uint8_t *m = realloc(*msg, need);
        if (m) {
                *msg = m;
                *cap = need;
        }
        return m;
}

/* recv of the first bytes of a message; with passed (not NULL), recvmsg, and the first
   descriptor passed with them (SCM_RIGHTS) in *passed, any others closed. */
static ssize_t recv_first(int fd, uint8_t *out, size_t n, int *passed)
{
        if (!passed)
                return recv(fd, out, n, MSG_DONTWAIT);
        struct iovec iov = {out, n};
        union {
                struct cmsghdr align;
                char buf[CMSG_SPACE(4 * sizeof(int))];
        } control;
        struct msghdr mh = {.msg_iov = &iov,
                            .msg_iovlen = 1,
                            .msg_control = control.buf,
                            .msg_controllen = sizeof(control.buf)};
        ssize_t k = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (k < 0)
                return k;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                        continue;
                size_t nr = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (size_t i = 0; i < nr; i++) {
                        int got;
                        memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                        if (*passed < 0)
                                *passed = got;
                        else
                                close(got);
                }
        }
        return k;
}

/* Reads a message into a fresh allocation for the caller (*msg, cap NULL), or into the caller's
   kept *msg of *cap bytes (host_io_read_msg_kept); with passed, the descriptor sent with it. */
static int read_msg(int fd, int first_ms, int rest_ms, int64_t deadline, uint8_t **msg, size_t *cap,
                    size_t *size, int *passed, char *why, size_t why_size)
{
        if (!cap)
                *msg = NULL;
        *size = 0;
        /* a message already there is read at once; otherwise wait up to first_ms for it */
        uint8_t hdr[HOST_HEADER_SIZE];
        size_t got = 0;
        int rc = 1;
        ssize_t k;
        do
                k = recv_first(fd, hdr, sizeof(hdr), passed);
        while (k < 0 && errno == EINTR);
        if (k > 0)
                got = (size_t)k;
        else if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                rc = wait_fd(fd, POLLIN, part_ms(first_ms, deadline));
        else if (k < 0)
                rc = -errno;
        /* a message that had not begun: its first bytes (and what comes with them) now */
        if (rc == 1 && !got && passed) {
                do
                        k = recv_first(fd, hdr, sizeof(hdr), passed);
                while (k < 0 && errno == EINTR);
                if (k > 0)
                        got = (size_t)k;
                else if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
                        rc = -errno;
        }
        if (rc < 0) {
                say(why, why_size, "waiting for a message", -rc);
                return rc;
        }
        if (rc == 0)
                return -EAGAIN;
        rc = k == 0 ? -ECONNRESET : read_exact(fd, hdr, sizeof(hdr), rest_ms, deadline, &got);
        if (rc == -ECONNRESET && why && why_size)
                snprintf(why, why_size, "the peer closed the connection");
        else if (rc == -EBADMSG && why && why_size)
                snprintf(why, why_size,
                         "the peer closed the connection after %zu bytes of a "
                         "message header",
                         got);
        else if (rc < 0)
                say(why, why_size, "reading a message header", -rc);
        if (rc < 0)
                return rc == -ECONNRESET && got ? -EBADMSG : rc;
        uint16_t type;
        uint32_t body;
        rc = host_proto_check_header(hdr, sizeof(hdr), &type, &body, why, why_size);
        if (rc < 0)
                return rc;
        uint8_t *m = msg_room(msg, cap, HOST_HEADER_SIZE + (size_t)body);
        if (!m) {
                say(why, why_size, "a message buffer", ENOMEM);
                return -ENOMEM;
        }
        memcpy(m, hdr, sizeof(hdr));
        got = 0;
        rc = read_exact(fd, m + HOST_HEADER_SIZE, body, rest_ms, deadline, &got);
        if (rc < 0) {
                if (!cap)
                        free(m);
                if (rc == -ECONNRESET || rc == -EBADMSG) {
                        if (why && why_size)
                                snprintf(why, why_size,
                                         "the peer closed the connection after %zu of %u body "
                                         "bytes of a %s message",
                                         got, body, host_proto_type_name(type));
                        return -EBADMSG;
                }
                say(why, why_size, "reading a message body", -rc);
                return rc;
        }
        *msg = m;
        *size = HOST_HEADER_SIZE + (size_t)body;
        return 0;
}

int host_io_read_msg(int fd, int first_ms, int rest_ms, uint8_t **msg, size_t *size, char *why,
                     size_t why_size)
{
        return read_msg(fd, first_ms, rest_ms, 0, msg, NULL, size, NULL, why, why_size);
}

int host_io_read_msg_fd(int fd, int ms, uint8_t **msg, size_t *size, int *passed, char *why,
                        size_t why_size)
{
        *passed = -1;
        int rc = read_msg(fd, ms, ms, 0, msg, NULL, size, passed, why, why_size);
        if (rc < 0 && *passed >= 0) {
                close(*passed);
                *passed = -1;
        }
        return rc;
}

int host_io_send_fd(int fd, const void *buf, size_t size, int passed, int timeout_ms)
{
        struct iovec iov = {(void *)buf, size};
        union {
                struct cmsghdr align;
                char buf[CMSG_SPACE(sizeof(int))];
        } control;
        memset(&control, 0, sizeof(control));
        struct msghdr mh = {.msg_iov = &iov,
                            .msg_iovlen = 1,
                            .msg_control = control.buf,
                            .msg_controllen = sizeof(control.buf)};
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &passed, sizeof(int));
        for (;;) {
                ssize_t n = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n >= 0)
                        return host_io_write(fd, (const uint8_t *)buf + n, size - (size_t)n,
                                             timeout_ms, NULL);
                if (errno == EINTR)
                        continue;
                if (errno != EAGAIN && errno != EWOULDBLOCK)
                        return -errno;
                int rc = wait_fd(fd, POLLOUT, timeout_ms);
                if (rc <= 0)
                        return rc < 0 ? rc : -ETIMEDOUT;
        }
}

int host_io_read_msg_kept(int fd, int first_ms, int rest_ms, uint8_t **buf, size_t *cap,
                          size_t *size, char *why, size_t why_size)
{
        return read_msg(fd, first_ms, rest_ms, 0, buf, cap, size, NULL, why, why_size);
}

int host_io_read_request(int fd, int total_ms, uint8_t **msg, size_t *size, char *why,
                         size_t why_size)
{
        int64_t deadline = now_ms() + (total_ms > 0 ? total_ms : 1);
        int rc = read_msg(fd, total_ms, total_ms, deadline, msg, NULL, size, NULL, why, why_size);
        if (rc == -EAGAIN || rc == -ETIMEDOUT) {
                if (why && why_size)
                        snprintf(why, why_size, "the request did not arrive whole within %d ms",
                                 total_ms);
                rc = -ETIMEDOUT;
        }
        return rc;
}
