/* SPDX-License-Identifier: MIT */
/* host_rt_stream.c: owns the streaming of a session's buffers to one real-time consumer, until
   the session ends or the consumer goes. Through a shared ring where the consumer asks for one:
   a sealed memory file of a few of the session's buffers that the consumer maps read-only,
   which the session fills as it completes buffers (session_rt_ring_set: the one copy each
   buffer takes), the message that says which slots hold what, and the consumer's releases,
   each checked against what was sent (the socket carries tens of bytes a batch instead of the
   buffers: the queue's copy and the kernel's two, into the socket and out of it, are gone).
   In place where the consumer asks and the session keeps a window: the consumer maps the
   session's pool and is told where each buffer lies, not copied at all (pool_serve).
   Otherwise through the socket: each buffer in a message of its own, a batch in one send. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "host.h"
#include "host_proto.h"
#include "session.h"
#include "session_mem.h"
#include "util/clock.h"

/* The ring's bytes at most: 128 buffers of 64 KiB (HOST_RT_RING_MAX_SLOTS, eight batches of
   SESSION_RT_BATCH_MAX), so that batches are filled while the consumer reads those before; at
   least 4 slots of larger buffers.
   A consumer holds what it has not decoded yet: at full settings (switches and samples with
   stacks) the session wrote 2 MiB (32 buffers, the ring's size before) in less time than the
   screen took between two reads, after which every buffer was copied twice, into the session's
   queue and from it into the ring (the host's stream 8.6% of both processes' CPU, 3.2% with
   this ring; bench/README.md, stop 72). */
#define RING_BYTES     ((size_t)8 << 20)
#define RING_MIN_SLOTS 4u
#define RING_MAX_SLOTS HOST_RT_RING_MAX_SLOTS
/* How long a stream that waits for its consumer (a full ring, a full socket) sleeps between
   looks at the host's end and the session's. */
#define STREAM_WAIT_MS 250
/* How long a stream that waits for the session's next buffers sleeps: they, the session's end
   and the host's (which stops every session) wake it, and so does its consumer's going where
   the stream waits on its socket too (stream_wait), so this bounds only how late it finds its
   consumer gone otherwise (it was STREAM_WAIT_MS, four idle wake-ups a second of a screen's
   stream) */
#define STREAM_IDLE_MS 2000
/* A consumer that asked for the session's state gets it with the buffers at most this often:
   it takes the session's lock, which its logger holds while it drains (a busy session hands
   out buffers dozens of times a second; a screen refreshes once a second) */
#define STATE_EVERY_MS 250
/* The rest of a release message, once its first byte is there. */
#define RELEASE_READ_MS 1000

struct ring {
        int fd;
        uint8_t *mem;
        uint32_t nr_slots;
        uint32_t slot_size;
        uint64_t sent;     /* buffers put in the ring */
        uint64_t released; /* of them, those the consumer is done with */
};

static int64_t ring_now_ms(void)
{
        return (int64_t)(now_ns() / 1000000);
}

static void ring_free(struct ring *r)
{
        if (r->mem) {
                munmap(r->mem, (size_t)r->nr_slots * r->slot_size);
                session_mem_give((size_t)r->nr_slots * r->slot_size);
        }
        if (r->fd >= 0)
                close(r->fd);
}

/* The memory file: sized, mapped here for writing, then sealed so that no one else can write,
   grow or shrink it (the consumer's mapping is read-only; this one stays writable). */
static int ring_make(struct ring *r, uint32_t slot_size)
{
        *r = (struct ring){.fd = -1, .slot_size = slot_size};
        if (slot_size < 64 || slot_size > HOST_MAX_DATA)
                return -EINVAL;
        size_t n = RING_BYTES / slot_size;
        r->nr_slots = n < RING_MIN_SLOTS   ? RING_MIN_SLOTS
                      : n > RING_MAX_SLOTS ? RING_MAX_SLOTS
                                           : (uint32_t)n;
        size_t bytes = (size_t)r->nr_slots * slot_size;
        /* counted with the real-time queues (ETWTOP_HOST_MAX_MB): spent, the buffers go
           through the socket, and the queue's own budget decides what it holds */
        if (!session_mem_take(bytes))
                return -ENOMEM;
        r->fd = memfd_create("etwtop-rt-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (r->fd < 0 || ftruncate(r->fd, (off_t)bytes) < 0)
                goto fail;
        void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
        if (mem == MAP_FAILED)
                goto fail;
        r->mem = mem;
        if (fcntl(r->fd, F_ADD_SEALS,
                  F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL) < 0)
                goto fail;
        return 0;
fail:;
        int err = errno ? errno : ENOMEM;
        if (!r->mem)
                session_mem_give(bytes); /* ring_free gives it back with the mapping */
        ring_free(r);
        *r = (struct ring){.fd = -1};
        return -err;
}

/* The releases the consumer has sent: 0, or -1 when it is gone or sent what no consumer sends
   (a message that is not a release, a release of slots it was not given or gave back already):
   its stream ends. */
static int take_releases(int fd, struct ring *r)
{
        for (;;) {
                struct pollfd pfd = {.fd = fd, .events = POLLIN | POLLRDHUP};
                int k = poll(&pfd, 1, 0);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return k < 0 ? -1 : 0;
                uint8_t *msg = NULL;
                size_t size = 0;
                int rc = host_io_read_msg(fd, 0, RELEASE_READ_MS, &msg, &size, NULL, 0);
                if (rc == -EAGAIN)
                        return (pfd.revents & (POLLHUP | POLLRDHUP | POLLERR)) ? -1 : 0;
                uint64_t seq = 0;
                if (rc == 0)
                        rc = host_proto_decode_release(msg, size, &seq, NULL, 0);
                free(msg);
                if (rc < 0 || seq < r->released || seq > r->sent)
                        return -1;
                r->released = seq;
        }
}

/* The most buffers one message hands out: the most a consumer holds in place. */
#define PLACES_MAX 128u
_Static_assert(PLACES_MAX <= HOST_RT_MAX_SLOTS, "a message hands out what the consumer holds");

/* Sleeps until the session wakes the stream (wake_fd, session_rt_wake_fd) or its consumer goes
   (the socket hung up: a consumer's CloseTrace shuts its side and waits for this one's close,
   so that a STOP it sends next finds it detached), STREAM_IDLE_MS at most. False when the
   consumer is gone. Its releases do not wake it (read at the next wake, as before). */
static bool stream_wait(int fd, int wake_fd)
{
        struct pollfd pfd[2] = {{.fd = fd, .events = POLLRDHUP}, {.fd = wake_fd, .events = POLLIN}};
        int k = poll(pfd, 2, STREAM_IDLE_MS);
        if (k < 0)
                return errno == EINTR;
        if (pfd[1].revents & POLLIN) {
                uint64_t v;
                if (read(wake_fd, &v, sizeof(v)) < 0) {
                        /* EAGAIN: another read took it; the next poll says */
                }
        }
        return !(pfd[0].revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

/* Hands the session's buffers to the consumer at fd, r.nr_slots of them at most unreleased: by
   their slots in r's ring (RT_SLOTS), or in place by their pool indexes (is_pool, RT_PLACES),
   until the session ends (RT_END), the consumer goes or breaks the protocol, the session
   stopped and the consumer takes nothing for drain_ms (what waits for it is dropped, counted
   lost), or *is_exiting. */
static void serve_held(int fd, struct session_rt *rt, struct ring *r, bool is_pool, bool is_state,
                       int drain_ms, const atomic_bool *is_exiting)
{
        struct host_msg m = {0}, sm = {0};
        int64_t state_at = 0; /* when the state went last */
        bool has_sent_state = false;
        uint32_t idx[PLACES_MAX];
        int64_t stalled_since = 0;
        int rc = 0;
        /* the session's wake and the socket in one poll (stream_wait); without it, the wait is
           the session's alone */
        int wake_fd = session_rt_wake_fd(rt);
        uint32_t wait_ms = wake_fd >= 0 ? 0 : STREAM_IDLE_MS;
        while (rc == 0 && !atomic_load(is_exiting)) {
                if (take_releases(fd, r) < 0)
                        break;
                if (r->sent - r->released == r->nr_slots) {
                        /* the consumer holds all it may: its session's queue keeps the buffers
                           meanwhile (and loses them once full, counted) */
                        struct pollfd pfd = {.fd = fd, .events = POLLIN | POLLRDHUP};
                        int k = poll(&pfd, 1, STREAM_WAIT_MS);
                        if (k < 0 && errno != EINTR)
                                break;
                        if (k != 0) {
                                stalled_since = 0;
                                continue;
                        }
                        if (!session_rt_is_ended(rt))
                                continue;
                        /* a stopped session's consumer that takes nothing for drain_ms: what
                           waits for it is freed (counted lost), and it gets the end */
                        int64_t now = ring_now_ms();
                        if (!stalled_since) {
                                stalled_since = now;
                                continue;
                        }
                        if (now - stalled_since < drain_ms)
                                continue;
                        session_rt_drop(rt);
                        host_msg_rt_end(&m, ERROR_SUCCESS, session_rt_nr_lost(rt));
                        host_io_write(fd, m.data, m.size, drain_ms, is_exiting);
                        break;
                }
                uint64_t seq = 0;
                uint32_t room = r->nr_slots - (uint32_t)(r->sent - r->released);
                int n = is_pool ? session_rt_places_next(rt, wait_ms, r->released, &seq, idx,
                                                         room < PLACES_MAX ? room : PLACES_MAX)
                                : session_rt_ring_next(rt, wait_ms, r->released, &seq);
                if (n > 0) {
                        if (seq != r->sent || (uint32_t)n > room)
                                break; /* not what this stream's state allows: never */
                        /* the session's counters and settings generation first (is_state):
                           the consumer's refresh that these buffers bring reads them rather
                           than asking the session (a round trip to this host) */
                        struct session_rt_state st;
                        int64_t now = is_state ? ring_now_ms() : 0;
                        if (is_state && (!has_sent_state || now - state_at >= STATE_EVERY_MS) &&
                            session_rt_state(rt, &st) == 0) {
                                state_at = now;
                                has_sent_state = true;
                                host_msg_rt_state(&sm, st.settings_gen, st.nr_events_lost,
                                                  st.nr_buffers_written, st.nr_rt_buffers_lost,
                                                  st.buffer_size_kb, st.max_file_mb);
                                rc = host_io_write(fd, sm.data, sm.size, drain_ms, is_exiting);
                                if (rc < 0)
                                        break;
                        }
                        if (is_pool)
                                host_msg_rt_places(&m, session_rt_nr_lost(rt), seq, idx,
                                                   (uint32_t)n, r->slot_size);
                        else
                                host_msg_rt_slots(&m, session_rt_nr_lost(rt), seq, (uint32_t)n,
                                                  r->slot_size);
                        r->sent += (uint64_t)n;
                        /* tens of bytes, and no more of them than slots: the socket has room */
                        rc = host_io_write(fd, m.data, m.size, drain_ms, is_exiting);
                        stalled_since = 0;
                        continue;
                }
                if (n == 0) {
                        host_msg_rt_end(&m, ERROR_SUCCESS, session_rt_nr_lost(rt));
                        host_io_write(fd, m.data, m.size, drain_ms, is_exiting);
                        break;
                }
                if (n != -EAGAIN)
                        break;
                if (wake_fd >= 0 && !stream_wait(fd, wake_fd))
                        break; /* the consumer went */
        }
        host_msg_free(&m);
        host_msg_free(&sm);
}

/* The ring's stream: 1 when it is over; 0 when no ring could be made (an empty HOST_RT_RING
   sent), and the buffers go through the socket. */
static int ring_serve(int fd, struct session_rt *rt, uint32_t buffer_size, bool is_state,
                      int drain_ms, const atomic_bool *is_exiting)
{
        struct ring r;
        struct host_msg m = {0};
        if (ring_make(&r, buffer_size) < 0) {
                /* no ring: the buffers go through the socket (the caller sends them) */
                host_msg_rt_ring(&m, 0, 0);
                int rc = host_io_write(fd, m.data, m.size, drain_ms, is_exiting);
                host_msg_free(&m);
                return rc < 0 ? 1 : 0;
        }
        host_msg_rt_ring(&m, r.nr_slots, r.slot_size);
        int rc = host_io_send_fd(fd, m.data, m.size, r.fd, drain_ms);
        /* the consumer holds the file now (or never will): this end keeps only its mapping */
        close(r.fd);
        r.fd = -1;
        /* the session's buffers straight into the ring from here (session_rt_ring_set) */
        session_rt_ring_set(rt, r.mem, r.nr_slots);
        if (rc == 0)
                serve_held(fd, rt, &r, false, is_state, drain_ms, is_exiting);
        /* no thread writes into the ring once it is unset: then it can go */
        session_rt_ring_set(rt, NULL, 0);
        host_msg_free(&m);
        ring_free(&r);
        return 1;
}

/* ---- in place ----------------------------------------------------------------------------- */

/* In place, the buffers a consumer holds at most, handed out or waiting (8 MiB, the ring's
   bytes: as many as the window may have to set aside for it, or copy into for it), between
   its bounds in buffers. */
#define PLACES_BYTES ((size_t)8 << 20)
#define PLACES_MIN   8u

/* The stream in place: the consumer maps the session's pool and reads each buffer where the
   writer put it (session_rt_pool_set). 1 when it is over; 0 when the session has none, and the
   caller makes a ring. */
static int pool_serve(int fd, struct session_rt *rt, uint32_t buffer_size, bool is_state,
                      int drain_ms, const atomic_bool *is_exiting)
{
        size_t n = PLACES_BYTES / buffer_size;
        uint32_t nr_entries = n < PLACES_MIN   ? PLACES_MIN
                              : n > PLACES_MAX ? PLACES_MAX
                                               : (uint32_t)n;
        int memfd;
        uint32_t nr_buffers, size;
        if (session_rt_pool_set(rt, nr_entries, &memfd, &nr_buffers, &size) < 0)
                return 0;
        struct host_msg m = {0};
        host_msg_rt_pool(&m, nr_buffers, size);
        /* the pool's file stays the session's: the consumer gets its own */
        int rc = host_io_send_fd(fd, m.data, m.size, memfd, drain_ms);
        struct ring r = {.fd = -1, .nr_slots = nr_entries, .slot_size = size};
        if (rc == 0)
                serve_held(fd, rt, &r, true, is_state, drain_ms, is_exiting);
        /* its pins go: the writer may write those buffers again */
        session_rt_pool_unset(rt);
        host_msg_free(&m);
        return 1;
}

/* ---- the socket's stream ------------------------------------------------------------------ */

/* Writes a real-time message, laid out in nr_parts parts (sent together, not copied); *done
   says how much went. While the session runs, a consumer may read as slowly as it likes (its
   queue in the session loses buffers meanwhile); once it has stopped, -ETIMEDOUT when the
   consumer takes nothing for drain_ms. 0, -ETIMEDOUT, -ECANCELED (the host ends), or the
   socket's -errno. */
static int stream_write(int fd, const struct iovec *parts, int nr_parts, struct session_rt *rt,
                        size_t *done_out, int drain_ms, const atomic_bool *is_exiting)
{
        size_t size = 0, done = 0;
        for (int i = 0; i < nr_parts; i++)
                size += parts[i].iov_len;
        int64_t stalled_since = 0;
        *done_out = 0;
        while (done < size) {
                *done_out = done;
                if (atomic_load(is_exiting))
                        return -ECANCELED;
                ssize_t n = host_io_send_rest(fd, parts, nr_parts, done);
                if (n > 0) {
                        done += (size_t)n;
                        stalled_since = 0;
                        continue;
                }
                if (n < 0)
                        return (int)n;
                struct pollfd pfd = {.fd = fd, .events = POLLOUT};
                int k = poll(&pfd, 1, STREAM_WAIT_MS);
                if (k < 0 && errno != EINTR)
                        return -errno;
                if (k != 0 || !session_rt_is_ended(rt))
                        continue;
                int64_t now = ring_now_ms();
                if (!stalled_since)
                        stalled_since = now;
                else if (now - stalled_since >= drain_ms)
                        return -ETIMEDOUT;
        }
        *done_out = done;
        return 0;
}

/* Whether the consumer at fd closed its end (or sent anything, which a consumer never does:
   either way it is done). */
static bool consumer_is_gone(int fd)
{
        struct pollfd pfd = {.fd = fd, .events = POLLIN | POLLRDHUP};
        return poll(&pfd, 1, 0) > 0 && pfd.revents;
}

void host_rt_serve(int fd, struct session_rt *rt, const struct session_rt_info *info,
                   uint32_t flags, int drain_ms, const atomic_bool *is_exiting)
{
        bool is_ring = (flags & HOST_FLAG_RT_RING) != 0, is_pool = (flags & HOST_FLAG_RT_POOL) != 0;
        bool is_state = (flags & HOST_FLAG_RT_STATE) != 0;
        if (is_ring && is_pool &&
            pool_serve(fd, rt, info->buffer_size_bytes, is_state, drain_ms, is_exiting))
                return;
        if (is_ring && ring_serve(fd, rt, info->buffer_size_bytes, is_state, drain_ms, is_exiting))
                return;
        int rc;
        /* the session's queue (MaximumBuffers) bounds the consumer, as on Windows; the socket
           holds a batch more (8 buffers, which the kernel doubles: SESSION_RT_BATCH_MAX, 16,
           go in one send without a wait), not hundreds */
        int sndbuf = (int)(8 * (info->buffer_size_bytes + HOST_RT_DATA_OFFSET));
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
        struct host_msg m = {0};
        uint8_t heads[SESSION_RT_BATCH_MAX][HOST_RT_DATA_OFFSET];
        struct iovec parts[2 * SESSION_RT_BATCH_MAX];
        /* as serve_held: the session's wake and the socket in one poll where it can */
        int wake_fd = session_rt_wake_fd(rt);
        for (;;) {
                const uint8_t *bufs[SESSION_RT_BATCH_MAX];
                uint32_t size;
                int n = session_rt_next_batch(rt, wake_fd >= 0 ? 0 : STREAM_IDLE_MS, bufs,
                                              SESSION_RT_BATCH_MAX, &size);
                if (n > 0) {
                        /* what waits, each buffer's header and the buffer, in one send (a send a
                           buffer cost a system call and a wake-up of the consumer each): the
                           buffers are not copied */
                        uint64_t nr_lost = session_rt_nr_lost(rt);
                        for (int i = 0; i < n; i++) {
                                host_msg_rt_buffer_head(heads[i], nr_lost, size);
                                parts[2 * i] = (struct iovec){heads[i], HOST_RT_DATA_OFFSET};
                                parts[2 * i + 1] = (struct iovec){(void *)bufs[i], size};
                        }
                        size_t done;
                        rc = stream_write(fd, parts, 2 * n, rt, &done, drain_ms, is_exiting);
                        if (rc == -ETIMEDOUT) {
                                /* a stopped session's consumer that takes nothing: what waits
                                   for it is freed now (counted lost), the buffers being sent
                                   with it, so the rest of these messages is copied first; if it
                                   reads again within drain_ms, it gets that rest and the end */
                                uint8_t *rest = malloc((size_t)n * (HOST_RT_DATA_OFFSET + size));
                                size_t left =
                                        rest ? host_io_copy_rest(parts, 2 * n, done, rest) : 0;
                                session_rt_drop(rt);
                                if (rest &&
                                    host_io_write(fd, rest, left, drain_ms, is_exiting) == 0) {
                                        host_msg_rt_end(&m, ERROR_SUCCESS, session_rt_nr_lost(rt));
                                        host_io_write(fd, m.data, m.size, drain_ms, is_exiting);
                                }
                                free(rest);
                        }
                        if (rc < 0)
                                break;
                        continue;
                }
                if (n == 0) {
                        host_msg_rt_end(&m, ERROR_SUCCESS, session_rt_nr_lost(rt));
                        host_io_write(fd, m.data, m.size, drain_ms, is_exiting);
                        break;
                }
                if ((wake_fd >= 0 && !stream_wait(fd, wake_fd)) || consumer_is_gone(fd))
                        break;
        }
        host_msg_free(&m);
}
