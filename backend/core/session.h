/* SPDX-License-Identifier: MIT */
/* session.h: the session table behind the controller API, and what the consumer (real-time
   delivery) and the application (saving an in-memory ring) need of it. */
#ifndef ETWTOP_SESSION_H
#define ETWTOP_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "etl_reader.h"
#include "etw/evntrace.h"
#include "session_defaults.h"

/* What a real-time consumer needs to know of the session it reads: the clock (to turn raw
   timestamps into FILETIME) and the values a logfile header would carry. */
struct session_rt_info {
        uint64_t start_timestamp; /* session clock at start (raw ticks) */
        int64_t start_filetime;   /* wall time of start_timestamp */
        int64_t boot_filetime;
        uint64_t perf_freq;  /* session clock ticks per second */
        uint32_t clock_type; /* EVENT_TRACE_CLOCK_* */
        uint32_t buffer_size_bytes;
        uint32_t nr_cpus;
        uint32_t log_file_mode;
        bool is_kernel;
};

/* One real-time consumer attached to a session: its own bounded queue of completed buffers. */
struct session_rt;

/* What a screen asks its session at every refresh besides the settings (ControlTrace(QUERY)'s
   counters), and the settings' generation: the host sends it with the buffers (HOST_RT_STATE),
   so that a consumer asks for the settings only when they changed. */
struct session_rt_state {
        uint64_t settings_gen; /* session_settings_generation when it was taken */
        uint64_t nr_events_lost;
        uint64_t nr_buffers_written;
        uint64_t nr_rt_buffers_lost;
        uint32_t buffer_size_kb;
        uint32_t max_file_mb;
};

/* A number that changes whenever any session's settings, or the global profile intervals, do
   (never 0): what ETWTOP_TRACE_SETTINGS_INFO answers stays true while it stays. */
uint64_t session_settings_generation(void);
/* The state of rt's session now: 0, or -ESRCH where it has no session any more. */
int session_rt_state(struct session_rt *rt, struct session_rt_state *out);

/* What OpenTrace tells a real-time consumer before it attaches: a copy of the session's header
   buffer (the logfile header record, as a file's first buffer has it, and the records the
   kernel logger puts there), owned by the caller (free), with *size and *info. Returns 0, or
   -ESRCH when no session of that name is running with EVENT_TRACE_REAL_TIME_MODE, -ENOMEM, or
   (a client of the session host) -EACCES with the last error saying whose sessions they are. */
int session_rt_header(const char *logger_name, uint8_t **buf, uint32_t *size,
                      struct session_rt_info *info);

/* Attaches a consumer to the running real-time session named logger_name (case-insensitive).
   The consumer first receives the session's header buffer (the logfile header record, then
   the start group-mask event of a kernel logger), as Windows delivers the header event first;
   the first consumer then receives the buffers completed before it attached (as many as the
   session's MaximumBuffers allow). Returns 0 with *out and *info filled, or -ESRCH when no
   session of that name is running or it has no EVENT_TRACE_REAL_TIME_MODE, -ENOMEM, or -EACCES
   as session_rt_header. */
int session_rt_attach(const char *logger_name, struct session_rt **out,
                      struct session_rt_info *info);

/* Raises the calling thread, which serves the sessions to other processes (the session host's:
   their controllers' calls, their real-time consumers' buffers), and the threads it creates
   after it (they inherit it), to the real-time priority below the drain's where that is
   permitted (live_source.h's LIVE_RT_PRIORITY_ASIDE). An ordinary thread there waited seconds
   for a CPU on a busy machine: the sender of a consumer's buffers was runnable with 3.9 s of run
   delay in 4 s at a session's start on 2 busy CPUs, while its consumer, idle, waited for it and
   the queue lost a thousand buffers; a controller's call (the screen's QUERY at each refresh,
   FLUSH, UPDATE) waits the same way. What they do is bounded: they wait on sockets and
   conditions, and copy. True when raised. */
bool session_serving_priority(void);

/* Waits up to timeout_ms for the next completed buffer. Returns 1 with *buf (8-byte aligned,
   owned by rt and valid until the next call or session_rt_detach) and *size, 0 once the session
   has stopped and every buffer was delivered, -EAGAIN when the time ran out, or -EPIPE when the
   session host serving this consumer went away (session_rt_error says how). */
int session_rt_next(struct session_rt *rt, uint32_t timeout_ms, const uint8_t **buf,
                    uint32_t *size);

/* The most buffers session_rt_next_batch hands out at once. */
#define SESSION_RT_BATCH_MAX 16

/* session_rt_next for a sender that sends what waits in one go: up to max buffers (at most
   SESSION_RT_BATCH_MAX; the header's copy first), all of one *size, in bufs, oldest first; they
   stay valid until the next call, session_rt_drop or session_rt_detach. Returns how many, or as
   session_rt_next does (0, -EAGAIN, -EPIPE). Taken under one lock where one at a time took it for
   each. */
int session_rt_next_batch(struct session_rt *rt, uint32_t timeout_ms, const uint8_t **bufs,
                          uint32_t max, uint32_t *size);

/* A sender's shared ring (the session host's, for a consumer that maps it): nr_slots slots of
   the session's buffer size at mem, the caller's until it sets another (NULL: none) or detaches.
   From then on each completed buffer is copied into the ring's next free slot, by whichever
   thread completes it, while nothing waits in the consumer's queue (the header first); else it
   is queued, as without a ring, and moved into the ring once slots are free. */
void session_rt_ring_set(struct session_rt *rt, uint8_t *mem, uint32_t nr_slots);

/* Waits up to timeout_ms for buffers in the ring not handed out yet; released: how many the
   consumer is done with (every one before it; their slots are free). Returns how many (at most
   the ring's slots), the first in *seq (buffer n in slot n % nr_slots), or 0 once the session
   has stopped and every buffer was handed out, -EAGAIN when the time ran out. */
int session_rt_ring_next(struct session_rt *rt, uint32_t timeout_ms, uint64_t released,
                         uint64_t *seq);

/* In place, for a consumer of another process: it maps the session's pool (the memory file in
   *fd, rt's own, of *nr_buffers buffers of *buffer_size bytes) and reads each completed buffer
   where the writer put it, which is not written again until released; the header and what was
   queued are copied into pool buffers taken for rt; rt holds nr_entries buffers at most,
   handed out or not. From then on session_rt_places_next hands them out. -ENOENT: the session
   has no pool (no window, or none could be made). */
int session_rt_pool_set(struct session_rt *rt, uint32_t nr_entries, int *fd, uint32_t *nr_buffers,
                        uint32_t *buffer_size);
/* Ends the in-place stream: rt's pins and copies given up (what is queued stays queued). */
void session_rt_pool_unset(struct session_rt *rt);
/* session_rt_ring_next in place: up to max buffers' pool indexes in idx, in order, the first
   numbered *seq (the stream's buffers are numbered from 0); released: how many the consumer is
   done with (every one before it, handed out already). Returns how many, 0 once the session has
   stopped and every buffer was handed out, -EAGAIN when the time ran out. */
int session_rt_places_next(struct session_rt *rt, uint32_t timeout_ms, uint64_t released,
                           uint64_t *seq, uint32_t *idx, uint32_t max);

/* An eventfd (rt's, closed with it) made readable wherever a wait of rt's would be woken: a
   buffer for it, a flush, the session's end, an interrupt. A stream that polls it beside its
   consumer's socket, asking for buffers without waiting (timeout 0), finds its consumer gone
   when the consumer goes, not at the next buffer. Its reader reads it to clear it. -errno where
   none could be made (waits as before still work). */
int session_rt_wake_fd(struct session_rt *rt);

/* Makes a session_rt_next waiting now, or the next one to wait, return -EAGAIN at once: a
   consumer's CloseTrace, from another thread, so that its reader need not wake on a timer to
   look for one. */
void session_rt_interrupt(struct session_rt *rt);

/* Buffers this consumer lost because its queue was full (counted in RealTimeBuffersLost). */
uint64_t session_rt_nr_lost(const struct session_rt *rt);

/* Detaches and frees the consumer. NULL is fine. */
void session_rt_detach(struct session_rt *rt);

/* Whether the consumer's session has stopped (what is queued for it may still wait): the host
   then gives it a bounded time to take the rest. False for a consumer of the host. */
bool session_rt_is_ended(const struct session_rt *rt);

/* Frees what waits for the consumer (its queue, the buffer it was handed), counted as lost: a
   consumer of a stopped session that takes nothing is given up on. session_rt_next then gives
   0 once the session has stopped. */
void session_rt_drop(struct session_rt *rt);

/* Writes the in-memory ring of a running EVENT_TRACE_BUFFERING_MODE session (or one keeping a
   window, session_keep_window): its most recent buffers, then a rundown of what runs now (as at
   a stop: processes, threads, images with their identity, the kernel symbols hit), as a
   self-contained .etl at path, created 0600, never through a symlink, never over
   an existing file unless is_force. Returns 0, -ESRCH (no such session), -EINVAL (no ring), or
   the writer's -errno with err filled. */
int session_save_ring(CONTROLTRACE_ID id, const char *path, bool is_force, struct etl_error *err);

/* etwtop's addition, not a Windows behaviour: a running session (real-time or file) also keeps
   its most recent buffers in memory, up to max_bytes, for session_save_ring (the screen's save
   key). Returns 0, -ESRCH, -EINVAL or -ENOMEM with err filled. */
int session_keep_window(CONTROLTRACE_ID id, size_t max_bytes, struct etl_error *err);

/* ---- the checks of the controller calls ---------------------------------------------------- */

/* The checks run by the API edge before it calls a session_ops implementation, and by the
   session host on each request it takes (a client's bytes are not trusted). Each returns
   ERROR_SUCCESS, or the Win32 code with the thread's last error set as the call documents. */

#define SESSION_MAX_NAME_CHARS 1024 /* session and log file names (StartTrace documentation) */
#define SESSION_MAX_SESSIONS   64   /* Windows' limit of loggers */

/* What StartTrace was asked for, once checked. Pointers are borrowed from the call. */
struct session_start_request {
        const char *name;
        const char *file; /* NULL: no log file */
        GUID guid;
        bool is_kernel;
        uint32_t log_file_mode;
        uint32_t client_context;
        uint32_t buffer_size_kb;
        uint32_t min_buffers;
        uint32_t max_buffers;
        uint32_t max_file_size;
        uint32_t flush_timer_s;
        uint32_t enable_flags;
        int32_t age_limit;
        const CLASSIC_EVENT_ID *stack_ids; /* StartKernelTrace */
        uint32_t nr_stack_ids;
        bool is_kernel_trace; /* StartKernelTrace, not StartTraceA */
};

/* StartTraceA's arguments: *req filled. */
ULONG session_check_start_trace(CONTROLTRACE_ID *id, const char *name, EVENT_TRACE_PROPERTIES *p,
                                struct session_start_request *req);

/* StartKernelTrace's arguments: *req filled, its name copied to name_buf (Properties' name
   may be overwritten by the start). */
ULONG session_check_kernel_trace(CONTROLTRACE_ID *id, EVENT_TRACE_PROPERTIES *p,
                                 const CLASSIC_EVENT_ID *stack_ids, ULONG nr_stack_ids,
                                 char name_buf[SESSION_MAX_NAME_CHARS + 1],
                                 struct session_start_request *req);

/* ControlTraceA's arguments: new_file filled with UPDATE's new log file name ("" for none). */
ULONG session_check_control(CONTROLTRACE_ID id, const char *name, const EVENT_TRACE_PROPERTIES *p,
                            ULONG code, char new_file[SESSION_MAX_NAME_CHARS + 1]);

/* TraceConfigureLastBranchRecord's arguments. */
ULONG session_check_lbr(ULONG config, const CLASSIC_EVENT_ID *events, ULONG count);

/* TraceQueryInformation's buffer: *ret set to 0 first (when not NULL). */
ULONG session_check_query_info(TRACE_INFO_CLASS c, const void *info, ULONG len, PULONG ret);

/* ---- for the session host (host_server.c) -------------------------------------------------- */

/* This process's handle-0 settings, for a start sent to the host: *d filled. */
void session_get_start_defaults(struct session_start_defaults *d);

/* The number of sessions in the table (starting, running or stopping). */
uint32_t session_nr_sessions(void);

/* Stops every running session (STOP, files finalized), for a host that ends. */
void session_stop_all(void);

/* The message of a consumer whose session_rt_next failed (not -EAGAIN): the host went away. */
const char *session_rt_error(const struct session_rt *rt);

/* A process forked to become the host: the table's locks as new (another thread of the parent
   may have held one at the fork). */
void session_after_fork(void);

#endif
