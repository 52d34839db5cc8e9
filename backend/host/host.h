/* SPDX-License-Identifier: MIT */
/* host.h: the session host seen from the rest of the backend: whether this process's API calls
   go to a host, the client side of each call (host_client.c), the host itself (host_server.c),
   and the framed I/O both use (host_io.c). DESIGN.md "Sessions belong to the system". */
#ifndef ETWTOP_HOST_H
#define ETWTOP_HOST_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "etl_reader.h"
#include "runtime_dir.h"
#include "etw/evntrace.h"
#include "session.h"
#include "session_ops.h"

/* ---- the mode ----------------------------------------------------------------------------- */

/* Whether the controller and consumer functions of this process go to the session host: true
   unless ETWTOP_NO_HOST is set to something other than "0" (read at the first call), or this
   process is the host. */
bool host_is_client(void);

/* Marks this process as the host: from now on the API functions run the session table here. */
void host_become_host(void);

/* ---- framed I/O (host_io.c) ---------------------------------------------------------------- */

/* Writes all of buf, waiting at most timeout_ms for the peer to make room each time; stops early
   when *cancel (may be NULL) becomes true. 0, -ETIMEDOUT, -ECANCELED, or the socket's -errno
   (-EPIPE: the peer is gone). Never raises SIGPIPE. */
int host_io_write(int fd, const void *buf, size_t size, int timeout_ms, const atomic_bool *cancel);

struct iovec;

/* The most parts host_io_send_rest sends: a batch of real-time buffers, each a head and its
   buffer. */
#define HOST_IO_MAX_PARTS 32

/* One nonblocking send (sendmsg, never SIGPIPE) of what is left of the parts, one or more
   messages laid out in nr_parts pieces (at most HOST_IO_MAX_PARTS), after their first done
   bytes. The bytes sent (0 when the socket is full), or the socket's -errno (-EINVAL: too many
   parts). */
ssize_t host_io_send_rest(int fd, const struct iovec *parts, int nr_parts, size_t done);

/* Copies what is left of the parts after their first done bytes to out (room for all of the
   parts); returns how many bytes that is. For a sender that must release the parts' memory
   before the rest is sent. */
size_t host_io_copy_rest(const struct iovec *parts, int nr_parts, size_t done, uint8_t *out);

/* Reads one message: waits up to first_ms for it to begin (-EAGAIN if it does not), then up to
   rest_ms for each further part. 0 with *msg (owned, free) and *size, or -ECONNRESET (the peer
   closed before a message began), -EBADMSG (it closed mid-message), -ETIMEDOUT, the header's
   error (host_proto_check_header), or the socket's -errno; why says which. */
int host_io_read_msg(int fd, int first_ms, int rest_ms, uint8_t **msg, size_t *size, char *why,
                     size_t why_size);

/* Reads one message as host_io_read_msg does (first_ms and rest_ms both ms), and the
   descriptor passed with its first bytes (SCM_RIGHTS) in *passed (-1: none; any more closed).
   On an error, nothing is kept open. */
int host_io_read_msg_fd(int fd, int ms, uint8_t **msg, size_t *size, int *passed, char *why,
                        size_t why_size);

/* Sends a whole message of size bytes with the descriptor passed alongside its first bytes,
   waiting at most timeout_ms each time the socket is full. 0, -ETIMEDOUT or -errno. */
int host_io_send_fd(int fd, const void *buf, size_t size, int passed, int timeout_ms);

/* Reads one message as host_io_read_msg does, into the caller's *buf of *cap bytes (NULL and 0
   at first), made larger (realloc) when a message needs more: a consumer that reads a stream of
   buffers keeps one allocation for all of them, rather than a malloc and free a buffer whose
   pages the allocator gave back to the kernel in between (glibc trims a thread's arena when a
   freed block leaves its top past the trim threshold, and the screen's malloc_trim gives free
   pages back at each refresh), each message's then faulted in and zeroed again. *buf stays the
   caller's to free, whatever the result; -ENOMEM leaves it as it was. */
int host_io_read_msg_kept(int fd, int first_ms, int rest_ms, uint8_t **buf, size_t *cap,
                          size_t *size, char *why, size_t why_size);

/* Reads one request: the whole message must arrive within total_ms of the call (a client that
   trickles its bytes holds a connection no longer). Returns as host_io_read_msg, -ETIMEDOUT
   when the time ran out, whether or not the message had begun. */
int host_io_read_request(int fd, int total_ms, uint8_t **msg, size_t *size, char *why,
                         size_t why_size);

/* ---- a real-time consumer's stream (host_rt_stream.c) ------------------------------------------
 */

struct session_rt;

/* Streams the session's buffers to the real-time consumer at fd, its attach answered, until the
   session ends (HOST_RT_END), the consumer goes or breaks the protocol, the session stopped and
   the consumer takes nothing for drain_ms (what waits for it is dropped, counted lost), or
   *is_exiting; as its RT_ATTACH's flags ask: a shared ring (HOST_FLAG_RT_RING): HOST_RT_RING
   first, with the ring's memory file (or none, and the buffers through the socket); to read in
   place too (HOST_FLAG_RT_POOL): HOST_RT_POOL with the session's pool where it has one, then
   HOST_RT_PLACES, instead of the ring; the session's state (HOST_FLAG_RT_STATE): an
   HOST_RT_STATE before each RT_SLOTS or RT_PLACES. */
void host_rt_serve(int fd, struct session_rt *rt, const struct session_rt_info *info,
                   uint32_t flags, int drain_ms, const atomic_bool *is_exiting);

/* ---- a consumer's side of the shared ring (host_client_ring.c) ------------------------------ */

struct host_rt_msg;

/* The most slots a consumer's ring has (host_rt_stream.c: 8 MiB at most): a consumer that
   reads nothing holds as many buffers there before its queue. */
#define HOST_RT_RING_MAX_SLOTS 128u

/* The ring as a consumer reads it: buffers numbered from 0, buffer n in slot n % nr_slots; or
   in place (places not NULL): buffer n in the pool's buffer places[n % nr_slots]. */
struct host_ring {
        const uint8_t *mem; /* mapped read-only; NULL: no ring */
        uint32_t *places;   /* owned, nr_slots: in place, the buffers handed over by index */
        uint32_t nr_pool;   /* in place: the pool's buffers (mem holds nr_pool * slot_size) */
        uint32_t nr_slots;
        uint32_t slot_size;
        uint32_t size;     /* the last HOST_RT_SLOTS's buffers' bytes */
        uint64_t end;      /* buffers handed over so far (HOST_RT_SLOTS) */
        uint64_t next;     /* of them, the next to read */
        uint64_t released; /* of them, those given back (HOST_RT_RELEASE) */
};

/* Maps the ring of nr_slots slots of slot_size bytes from the memory file memfd (closed, mapped
   or not): 0, or -EPROTO for a file that is not what the host said (not a regular file, smaller
   than the ring, not sealed against shrinking), or mmap's -errno; why says which. */
int host_ring_map(struct host_ring *r, int memfd, uint32_t nr_slots, uint32_t slot_size, char *why,
                  size_t why_size);
/* host_ring_map for a pool of nr_buffers buffers of buffer_size bytes, read in place. */
int host_ring_map_pool(struct host_ring *r, int memfd, uint32_t nr_buffers, uint32_t buffer_size,
                       char *why, size_t why_size);
void host_ring_unmap(struct host_ring *r);
/* Takes a HOST_RT_SLOTS message (in place, HOST_RT_PLACES): 0, or -EPROTO when its slots are
   not the next ones, more than are free, of buffers larger than a slot, or not the pool's. */
int host_ring_take(struct host_ring *r, const struct host_rt_msg *m, char *why, size_t why_size);
/* The next buffer handed over and not read yet (valid until it is released): false when none. */
bool host_ring_next(struct host_ring *r, const uint8_t **buf, uint32_t *size);
/* Gives back the buffers before upto (read, and done with: upto is next at most), when a group
   of them or is_all: 0 or host_io_write's error. */
int host_ring_release(struct host_ring *r, int fd, uint64_t upto, bool is_all);

/* ---- the peer (host_peer.c) ----------------------------------------------------------------- */

/* A client as the host sees it. */
struct host_peer {
        pid_t pid; /* SO_PEERCRED's, in the host's pid namespace (0: not visible) */
        uid_t uid;
        gid_t gid;
        uint64_t caps;       /* its permitted capabilities in the host's user namespace; 0 when
                                they cannot be read reliably (it exited, another namespace).
                                Nothing is added to them: a client under no_new_privs, or one
                                whose host holds file capabilities, gets these and no more */
        bool has_host_files; /* same mount namespace and root directory as the host */
        bool has_host_pids;  /* same pid namespace: its process ids name the host's */
        char why_files[200]; /* when not: why */
};

/* Fills *peer for the connection fd: SO_PEERCRED, then the peer's /proc/PID/status and
   namespaces, trusted only when a pidfd taken at connect time (SO_PEERPIDFD, else pidfd_open)
   shows the process still alive after they were read. 0, or -errno when the socket has no
   peer credentials. What cannot be read counts as no capability and not the host's files. */
int host_peer_read(int fd, struct host_peer *peer);

/* Cuts the calling thread's effective capabilities down to those the peer holds itself (the
   threads it starts inherit the cut): a perf_event_open, a file created or replaced then
   succeeds only where the client's own would. 0, or -errno from capset. */
int host_peer_act_as(const struct host_peer *peer);

/* ---- the client side of the API (host_client.c) -------------------------------------------- */

/* StartTraceA (is_kernel_trace false) or StartKernelTrace of a validated request in the host,
   started if none runs. abs_file is the log file name made absolute when the caller gave a
   relative one, else NULL. d: the handle-0 settings sent with it (NULL: this process's). Fills
   *id and Properties as the host's call did; the last error is the host's. */
ULONG host_client_start(CONTROLTRACE_ID *id, const char *name, PEVENT_TRACE_PROPERTIES p,
                        const char *abs_file, bool is_kernel_trace,
                        const CLASSIC_EVENT_ID *stack_ids, uint32_t nr_stack_ids,
                        const struct session_start_defaults *d);
/* ControlTraceA in the host (none running: no such session). */
ULONG host_client_control(CONTROLTRACE_ID id, const char *name, PEVENT_TRACE_PROPERTIES p,
                          ULONG code, const char *abs_file);
ULONG host_client_set_info(CONTROLTRACE_ID id, TRACE_INFO_CLASS c, const void *info, ULONG len);
ULONG host_client_query_info(CONTROLTRACE_ID id, TRACE_INFO_CLASS c, void *info, ULONG len,
                             PULONG ret);
ULONG host_client_lbr(CONTROLTRACE_ID id, ULONG config, const CLASSIC_EVENT_ID *events,
                      ULONG count);
ULONG host_client_query_all(PEVENT_TRACE_PROPERTIES *array, ULONG count, PULONG logger_count);
/* etw_bind_session: a connection kept open until this process ends (or stops the session). */
ULONG host_client_bind(CONTROLTRACE_ID id);
/* Whether a host answers on the runtime directory now (none is started). */
bool host_client_is_running(void);
/* A host started for the caller's runtime directory now where none serves it (as a start would,
   later): 0 (one serves it, or the caller's sessions are its own: ETWTOP_NO_HOST), or -errno
   with why. */
int host_client_prestart(char *why, size_t why_size);

/* session.h's functions for a client: -ESRCH when no host runs. */
int host_client_keep_window(CONTROLTRACE_ID id, size_t max_bytes, struct etl_error *err);
int host_client_save_window(CONTROLTRACE_ID id, const char *path, bool is_force,
                            struct etl_error *err);
int host_client_rt_header(const char *name, uint8_t **buf, uint32_t *size,
                          struct session_rt_info *info);

/* A real-time consumer's stream from the host. */
struct host_rt;
int host_client_rt_attach(const char *name, struct host_rt **out, struct session_rt_info *info);
int host_client_rt_next(struct host_rt *rt, uint32_t timeout_ms, const uint8_t **buf,
                        uint32_t *size);
/* Makes a host_client_rt_next waiting now, or the next one to wait, return -EAGAIN at once
   (from any thread: a CloseTrace). */
void host_client_rt_wake(struct host_rt *rt);
uint64_t host_client_rt_nr_lost(const struct host_rt *rt);
/* The session's state as the host last sent it with the buffers, and how many states came: 0,
   or -ENODATA where none came yet (a host that sends none: the buffers through the socket). Any
   thread. */
int host_client_rt_state(struct host_rt *rt, struct session_rt_state *out, uint64_t *nr_states);
const char *host_client_rt_error(const struct host_rt *rt);
/* Held buffers (a stream with a ring): from host_client_rt_hold on, a buffer host_client_rt_next
   handed out stays in its slot, read-only, until host_client_rt_release gives it back (with
   those before it) from any thread; host_client_rt_held_id names the one handed out last.
   host_client_rt_hold is false for a stream without a ring (its buffer is valid until the next
   call only). host_client_rt_wait_released waits up to timeout_ms for every buffer handed out
   to be given back: true when all were. */
bool host_client_rt_hold(struct host_rt *rt);
uint64_t host_client_rt_held_id(const struct host_rt *rt);
void host_client_rt_release(struct host_rt *rt, uint64_t id);
bool host_client_rt_wait_released(struct host_rt *rt, uint32_t timeout_ms);
void host_client_rt_detach(struct host_rt *rt);

/* The session operations over the host (host_client_ops.c): a session's calls go to the host;
   handle 0's settings stay this process's (the profile interval, global, also goes to the host). */
extern const struct session_ops host_client_ops;

/* ---- the host (host_server.c) -------------------------------------------------------------- */

#define HOST_RUN_PERSISTENT 0x1u /* run until SIGTERM, not until idle */

/* Serves the runtime directory dir in this process: takes its lock, replaces a stale socket,
   and answers requests until SIGTERM/SIGINT (then every session is stopped, its file finalized)
   or, without HOST_RUN_PERSISTENT, until no session has run for the grace period
   (ETWTOP_HOST_GRACE_MS, 5000 by default). ready_fd (or -1) receives one byte when the socket
   accepts ('R'), or when another host already serves dir ('B'), or on failure ('F'). Returns 0,
   -EEXIST (another host serves dir), or the -errno that kept it from serving, why filled. */
int host_serve(const char *dir, int ready_fd, unsigned flags, char *why, size_t why_size);

/* Starts a detached host on dir (fork, setsid, fork again; stdio on /dev/null; no other fd of
   the caller), and waits until it accepts. 0 (it runs, or another host already did), or -errno
   with why filled. */
int host_spawn(const char *dir, char *why, size_t why_size);

#endif
