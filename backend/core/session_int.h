/* SPDX-License-Identifier: MIT */
/* session_int.h: the session core's own declarations, shared by its files and by nothing else: the
   session, its consumers and queues, the table and the helpers its files share.

   The session core (backend/core) owns the session table behind the controller API (StartTraceA,
   ControlTraceA, TraceSetInformation, TraceQueryInformation, TraceConfigureLastBranchRecord,
   StartKernelTrace): validation as seeds 000-004 and the Windows documentation give it, one logger
   thread per session, and real-time delivery to consumers.

   Choices where Windows' behaviour cannot be copied on Linux (documented for callers):
   - An existing log file is never replaced (DESIGN.md): StartTrace fails with ERROR_FILE_EXISTS.
     EVENT_TRACE_FILE_MODE_APPEND creates the file when it does not exist; appending to an
     existing .etl is ERROR_NOT_SUPPORTED. EVENT_TRACE_FILE_MODE_NEWFILE is validated as
     Windows does (MaximumFileSize, a %d in the name) and then ERROR_NOT_SUPPORTED: the writer
     cannot rotate files under a running source.
   - EVENT_TRACE_FILE_MODE_CIRCULAR keeps the last MaximumFileSize bytes of buffers in memory
     and writes them at STOP; the file name is reserved (created empty, 0600) at start, and STOP
     writes through the descriptor opened then: never to what the path names by then, when
     that is another file (log_file.h).
   - EVENT_TRACE_BUFFERING_MODE keeps MaximumBuffers buffers in memory (session_save_ring);
     it cannot be combined with a log file or real-time mode (ERROR_INVALID_PARAMETER).
   - ClientContext 2 and 3 are accepted and reported back, but the live source stamps
     CLOCK_MONOTONIC nanoseconds, so the file says QPC (ReservedFlags 1, PerfFreq 1e9), as
     Windows falls back when a clock is not available (seed 004).
   - A real-time session without a consumer keeps its last MaximumBuffers buffers for the first
     consumer (Windows' playback file); older ones count in RealTimeBuffersLost. Every consumer
     first receives a copy of the header buffer (the logfile header event, then a kernel
     logger's start group-mask event), as Windows delivers the header event first.
   - BuffersWritten of a session with a sequential log file counts the header buffer, so that
     QUERY and STOP report what the file header says; EventsLost is the live source's exact
     count (PERF_FORMAT_LOST) plus records too large for a buffer. A circular file's header
     counts the buffers written at STOP, BuffersWritten every buffer completed.
   - MaximumFileSize of a sequential file is enforced as Windows does (the session stops when
     the file reaches it; EVENT_TRACE_USE_KBYTES_FOR_SIZE: in KB): a buffer that would take
     the file past it is not written, and the session stops itself as it does on a write error,
     its file finalized. Whatever MaximumFileSize, a file never takes its file system's last
     blocks for users (statvfs f_bavail; root's reserved blocks stay free, even for root): the
     session stops itself before, and says so.
   - A sequential file's header is kept current while the session runs: its BuffersWritten and
     EndTime (the latest event's time) are rewritten in place after every buffer written, so
     that a file whose process was killed says what it holds; Windows leaves EndTime 0 until
     the session stops.
   - A saved window (session_save_ring, a circular file) is framed by its events: its start
     timestamp and StartTime are its first event's, its EndTime its last's, and its header
     names the file it is in.
   - Session names compare case-insensitively in ASCII; other UTF-8 bytes compare exactly.
   - A StartTrace of the name of a session that is stopping (its file being finalized, from
     another thread or process) waits for it to end, up to 10 s, rather than failing with
     ERROR_ALREADY_EXISTS for a name about to be free.
   - In a process that is a client of the session host (etw/etwtop_ext.h), every call goes to the
     host, which runs this same table; ETWTOP_NO_HOST=1 keeps the table in the process.
   - A session whose log file cannot be written (a full disk) stops itself, as Windows stops a
     logger on STATUS_DISK_FULL: its file is finalized with the buffers that made it, and
     every later call with its handle fails with ERROR_WMI_INSTANCE_NOT_FOUND and a message
     that says why it stopped. A controller's STOP that finds the file failed returns the
     file's error (ERROR_DISK_FULL ...), the session stopped all the same.
   - etwtop's ETWTOP_TRACE_PROCESS_INFO (etw/etwtop_ext.h) restricts a kernel logger to one
     process: set with handle 0 before StartTrace, it is taken by the kernel loggers started
     next; a running session's process cannot change (its events are opened per thread).

   Locks: table_lock protects the table (slots, states, names, reference counts) and the
   global profile configuration set with a zero handle. Each session's lock protects its
   writer, live source, settings, real-time queues and counters. The two are never held
   together; a caller takes a reference under table_lock, drops table_lock, then takes the
   session's lock. The writer and the live source are only used with the session's lock held. */
#ifndef ETWTOP_SESSION_INT_H
#define ETWTOP_SESSION_INT_H

#include "session.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "etl_pool.h"
#include "etl_writer.h"
#include "log_file.h"
#include "etw/KernelTraceControl.h"
#include "etw/etwtop_ext.h"
#include "etw/ntwmi.h"
#include "etw_error.h"
#include "etw_provider.h"
#include "live_source.h"
#include "session_mem.h"
#include "session_ops.h"

#define MAX_SESSIONS         SESSION_MAX_SESSIONS
#define MAX_NAME_CHARS       SESSION_MAX_NAME_CHARS
#define DEFAULT_BUFFER_KB    64
#define MAX_BUFFER_KB        1024 /* EVENT_TRACE_PROPERTIES.BufferSize: at most 1 MB */
#define DEFAULT_FLUSH_S      1
#define NR_PROFILE_SOURCES   64   /* KPROFILE_SOURCE values we keep an interval for */
#define TIMER_MIN_100NS      1221 /* ProfileTime: 8.19 kHz (LINUX-MAPPING.md 2) */
#define TIMER_MAX_100NS      1000000
#define TIMER_DEFAULT_100NS  10000
#define PMC_DEFAULT_INTERVAL 65536
#define PMC_MIN_INTERVAL     4096
#define PMC_MAX_INTERVAL     0x7FFFFFFFu
#define DRAIN_BUDGET         4096
#define DRAIN_ROUNDS         128                    /* a drain's limit per wake-up: 512k records */
#define LOGGER_RT_PRIORITY   LIVE_RT_PRIORITY_DRAIN /* SCHED_FIFO: live_source.h says why */
#define FILETIME_UNIX_EPOCH  116444736000000000ll
#define TRACE_PROCESSING_VER 2           /* TraceVersionInfo */
#define VALID_ENABLE_FLAGS   0x77FFFFFFu /* every EVENT_TRACE_FLAG_* but bit 27 and EXTENSION */
#define PERF_MASK1_PMC       (PERF_PMC_PROFILE & PERF_MASK_GROUP)
#define FILE_MODES                                                                                 \
        (EVENT_TRACE_FILE_MODE_SEQUENTIAL | EVENT_TRACE_FILE_MODE_CIRCULAR |                       \
         EVENT_TRACE_FILE_MODE_APPEND | EVENT_TRACE_FILE_MODE_NEWFILE)
#define VALID_LOG_FILE_MODES                                                                       \
        (FILE_MODES | EVENT_TRACE_FILE_MODE_PREALLOCATE | EVENT_TRACE_NONSTOPPABLE_MODE |          \
         EVENT_TRACE_SECURE_MODE | EVENT_TRACE_REAL_TIME_MODE | EVENT_TRACE_DELAY_OPEN_FILE_MODE | \
         EVENT_TRACE_BUFFERING_MODE | EVENT_TRACE_PRIVATE_LOGGER_MODE |                            \
         EVENT_TRACE_ADD_HEADER_MODE | EVENT_TRACE_USE_KBYTES_FOR_SIZE |                           \
         EVENT_TRACE_USE_GLOBAL_SEQUENCE | EVENT_TRACE_USE_LOCAL_SEQUENCE |                        \
         EVENT_TRACE_PRIVATE_IN_PROC | EVENT_TRACE_STOP_ON_HYBRID_SHUTDOWN |                       \
         EVENT_TRACE_PERSIST_ON_HYBRID_SHUTDOWN | EVENT_TRACE_USE_PAGED_MEMORY |                   \
         EVENT_TRACE_SYSTEM_LOGGER_MODE | EVENT_TRACE_COMPRESSED_MODE |                            \
         EVENT_TRACE_INDEPENDENT_SESSION_MODE | EVENT_TRACE_NO_PER_PROCESSOR_BUFFERING |           \
         EVENT_TRACE_ADDTO_TRIAGE_DUMP)

enum session_state { SESSION_STARTING, SESSION_RUNNING, SESSION_STOPPING };

/* Consumers wake when this many buffers wait (or half their queue, where that is less), at a
   flush (FlushTimer, ControlTrace FLUSH, a save) and at the end: a wake-up per buffer cost more
   than decoding the buffer. 8 until the session host served at SCHED_FIFO: its sender, never
   kept waiting for a CPU, then sent each batch of 8 as it filled and the screen woke for each,
   where it had sent larger ones late (screen and host 5-10% more CPU, bench/README.md). A
   sender behind its consumer does not wait for the wake-up: it finds buffers queued as it comes
   back for more, and takes them at once. */
#define RT_WAKE_BATCH 16
/* The buffers a consumer's queue keeps for its next copies once the consumer is done with
   them: a wake-up's batch and as many again, what the queue holds between two wakes while the
   consumer sends the batch before. With 4 (and batches of 8), half of each batch was malloc'ed
   fresh and the other half freed, and glibc gave the freed top of the logger's arena back to
   the kernel: every second buffer's 16 pages were faulted in and zeroed again (about 390 faults
   a second in the host at 16 buffers a second, bench/README.md). Never more than the queue's
   own capacity, so that a queue holds no more than its bound, in use or spare. */
#define RT_SPARES (2 * RT_WAKE_BATCH)
/* The most buffers a consumer takes at once (session_rt_next_batch): what a wake-up queues, and
   what piles up meanwhile. Their copies come back to the spares at the next call, so it is no
   more than RT_SPARES. */
#define RT_TAKEN_MAX SESSION_RT_BATCH_MAX
_Static_assert(RT_TAKEN_MAX <= RT_SPARES, "a batch taken comes back to the spares whole");

/* A bounded queue of completed buffers, oldest first. */
struct rt_queue {
        uint8_t **bufs; /* owned: cap slots, each an owned copy or NULL */
        uint32_t cap;
        uint32_t head;
        uint32_t count;
        uint32_t buffer_size;
        /* owned: buffers the consumer is done with, for the next copies (a malloc and free
           per buffer touched fresh pages each time); at most RT_SPARES and cap together with
           the queued ones (rt_queue_keep) */
        uint8_t *spare[RT_SPARES];
        uint32_t nr_spare;
};

struct session_rt {
        struct session *s; /* a reference, dropped by session_rt_detach */
        struct rt_queue q; /* under s->rt_lock */
        uint8_t *header;   /* owned: the header buffer as of attach, handed out first; then NULL */
        /* owned: the buffers last handed out (session_rt_next_batch), kept or freed at the next
           call; taken[0] is the header's copy, not a queue buffer, when is_taken_header */
        uint8_t *taken[RT_TAKEN_MAX];
        uint32_t nr_taken;
        bool is_taken_header;
        /* the buffers queued that wake the sender (rt_wake_at); set at attach */
        uint32_t wake_at;
        bool is_woken; /* session_rt_interrupt, under rt_lock: the next wait returns at once */
        _Atomic uint64_t nr_lost; /* added under rt_lock, read without it */
        /* the sender's shared ring (session_rt_ring_set), under rt_lock: buffers are numbered
           from 0, buffer n in slot n % ring_slots; the completing thread copies into it while
           q is empty and the header handed out */
        uint8_t *ring;
        uint32_t ring_slots;
        uint64_t ring_filled;   /* buffers put in the ring */
        uint64_t ring_told;     /* of them, those session_rt_ring_next handed out */
        uint64_t ring_released; /* of them, those the consumer is done with */
        /* in place (session_rt_pool_set): the consumer maps the writer's pool and reads each
           buffer where it lies, pinned until released; the header and queued buffers (copies
           of the session's own) are copied into pool buffers taken for this consumer, freed
           for its next copies once released. Under rt_lock. */
        struct etl_pool *pool; /* a reference, or NULL: not in place */
        uint32_t *ent;         /* owned: ent_cap pool indexes (a copy's with RT_ENT_COPY), the
                                  stream's buffers in order */
        uint32_t ent_cap;
        uint64_t ent_filled;   /* buffers put in ent */
        uint64_t ent_told;     /* of them, those handed out (session_rt_places_next) */
        uint64_t ent_released; /* of them, those the consumer is done with */
        /* session_rt_wake_fd's eventfd (-1: none): written wherever rt_cond is broadcast,
           under rt_lock */
        int wake_fd;
        uint32_t *copies; /* owned, ent_cap: the pool buffers taken for copies, free */
        uint32_t nr_copies_free;
        uint32_t nr_copies; /* taken for copies in all (each counted in session_mem) */
        struct session_rt *next;
};

/* Statistics as QUERY reports them; frozen at STOP. */
struct session_stats {
        uint64_t nr_events_lost;
        uint64_t nr_buffers_written;
        uint64_t nr_log_buffers_lost;
        uint32_t nr_buffers;      /* NumberOfBuffers: MinimumBuffers .. MaximumBuffers */
        uint32_t nr_free_buffers; /* FreeBuffers: of nr_buffers, those holding no events */
};

struct session {
        /* Set before the session is RUNNING, then read-only. */
        char *name;          /* owned */
        char *log_file_name; /* owned, the file written (NULL: none) */
        GUID guid;
        uint32_t slot;
        CONTROLTRACE_ID handle;
        bool is_kernel;
        bool is_circular_file;             /* the file is written from the ring at STOP */
        struct log_file_reserved circular; /* owned: that file, reserved at start */
        uint64_t max_file_bytes;           /* MaximumFileSize in bytes (0: none) */
        bool has_window;     /* a real-time session keeping its recent buffers (etwtop's) */
        size_t window_bytes; /* under lock: what its kept window took of session_mem */
        uint32_t log_file_mode;
        uint32_t client_context;
        uint32_t buffer_size_kb;
        uint32_t min_buffers;
        uint32_t max_file_size;
        int32_t age_limit;
        struct session_rt_info rt_info;
        pthread_t thread;
        bool has_thread;
        pid_t tid;
        int wake_fd; /* eventfd: STOP wakes the logger thread */
        atomic_bool is_stop_requested;

        /* Under table_lock. */
        enum session_state state;
        uint32_t nr_refs; /* the table's, callers' in flight, consumers' */

        /* Under lock. */
        pthread_mutex_t lock;
        /* The consumers' queues (each one's q, header and taken), rt_cond's wait and
           is_rt_ended: taken after lock, never before it, so that a consumer taking its next
           buffer never waits for a drain that holds lock (the stream spun on the PI lock). */
        pthread_mutex_t rt_lock;
        pthread_cond_t rt_cond;     /* with rt_lock: a buffer was queued, or the session ended */
        bool is_rt_ended;           /* under rt_lock: is_ended, as the consumers see it */
        struct live_settings cfg;   /* as configured; effective_settings() derives the source's */
        struct live_source *source; /* owned, kernel sessions */
        struct etl_writer *writer;  /* owned until STOP */
        uint32_t max_buffers;
        uint32_t flush_timer_s;
        struct session_rt *consumers; /* owned list */
        struct rt_queue backlog;      /* real-time buffers waiting for a first consumer */
        uint64_t nr_rt_lost;
        uint64_t nr_buffers_before_file; /* completed before the current file was opened */
        uint64_t nr_written_before_file; /* BuffersWritten of the files UPDATE closed */
        uint64_t nr_source_lost;         /* the live source's lost count when it closed */
        bool is_ended;
        bool is_ending; /* STOP's last buffers: consumers' queues grow rather than lose them */
        struct session_stats final; /* valid once is_ended */
};

/* The table (session_table.c). */
extern pthread_mutex_t session_table_lock;
extern struct session *session_table[MAX_SESSIONS];
extern uint32_t session_generations[MAX_SESSIONS];
/* The global profile configuration (handle 0): TraceSampledProfileIntervalInfo and
   TraceProfileSourceConfigInfo before a kernel logger starts (seed 000). */
extern uint32_t session_profile_intervals[NR_PROFILE_SOURCES];
/* A session's settings or the global intervals changed: session_settings_generation moves. */
void session_settings_changed(void);
extern uint32_t session_nr_pending_sources;
extern uint32_t session_pending_sources[LIVE_MAX_SOURCES];
/* ETWTOP_TRACE_PROCESS_INFO with handle 0: the process of the kernel loggers started next. */
extern int32_t session_pending_pid;
/* Why the session last in each slot stopped itself (a write error), for the calls that name
   its handle afterwards; a handle is never reused, so a stale entry matches nothing. Under
   session_table_lock; session_ended_cond signals is_done: those calls wait until the file is
   finalized, so that a caller told the session is gone can read the file (or exit). */
struct session_ended {
        CONTROLTRACE_ID handle;
        bool is_done;
        char why[MAX_NAME_CHARS + 128];
};
extern struct session_ended session_ended[MAX_SESSIONS];
extern pthread_cond_t session_ended_cond;
/* A session left the table (under session_table_lock): a start waiting for a stopping session's
   name. */
extern pthread_cond_t session_left_cond;
#define STOPPING_WAIT_S 10 /* a start waits this long for a stopping session of its name */
extern uint32_t session_cpu_speed_mhz; /* the logfile header's CpuSpeedInMHz */

/* session_table.c */
const struct live_caps *session_machine_caps(void);
int64_t session_clock_ns(clockid_t id);
int64_t session_filetime_now(void);
bool session_name_equal(const char *a, const char *b);
bool session_guid_is_zero(const GUID *g);
uint32_t session_interval_of(uint32_t source);
/* The Win32 code for an error of the live source (privileges, missing hardware). */
DWORD session_live_error_code(int rc);
/* The Win32 code for an error creating the log file. */
DWORD session_file_error_code(int rc);
/* The hook id of a CLASSIC_EVENT_ID, or -1 when its GUID names no kernel group (seed 003: such
   entries are ignored). */
int session_hook_of_event(const CLASSIC_EVENT_ID *e);
void session_event_of_hook(uint16_t hook, CLASSIC_EVENT_ID *e);
/* Replaces the EnableFlags part of the group masks, keeping bits set by
   TraceSystemTraceEnableFlagsInfo. */
void session_set_enable_flags(PERFINFO_GROUPMASK *gm, uint32_t flags);
/* Whether the events of hook are collected under these masks (StartKernelTrace ignores stack
   ids of events that are not). Groups we cannot tell count as not enabled. */
bool session_hook_is_enabled(uint16_t hook, const PERFINFO_GROUPMASK *gm);
/* The settings the live source runs with: the configured ones, with the PMC sampling sources
   only while PERF_PMC_PROFILE is on (they are configured before, seed 000). */
void session_effective_settings(const struct live_settings *cfg, struct live_settings *out);
/* 0, or -EOPNOTSUPP with err saying why, when the settings need hardware this machine lacks. */
int session_check_hardware(const struct live_settings *cfg, struct etl_error *err);
/* Frees a buffer of a real-time queue (NULL is fine), giving its bytes back to session_mem. */
void session_rt_buf_free(uint8_t *b, uint32_t size);
void session_rt_queue_free(struct rt_queue *q);
/* In place (session_rt_pool.c), under rt_lock: buf, a completed buffer, handed to rt where it
   lies (pinned) or copied into rt's ring; false when rt has no room (the caller queues it). */
bool session_rt_pool_put(struct session_rt *rt, const uint8_t *buf);
/* A sender's wait for more, under rt_lock, after it found nothing to hand out: 0 when the
   stream is over (the session stopped and nothing waits for rt), -EAGAIN when deadline (on
   rt_cond's clock) passed, 1 to look again. */
int session_rt_wait_more(struct session_rt *rt, const struct timespec *deadline);
/* Gives up what rt holds of the pool (pins, copies, memory). Under rt_lock. */
void session_rt_pool_clear(struct session_rt *rt);
/* A pool for the window of s, a real-time session that just got its ring (under lock): where
   a consumer of another process reads the buffers in place. None is no error: they are
   copied. */
void session_window_pool(struct session *s);
void session_free(struct session *s);
/* Drops a reference; the last one frees the session. */
void session_unref(struct session *s);
/* A running session by handle (when nonzero) or by name, with a reference taken; NULL when
   there is none. Called without locks. */
struct session *session_find(CONTROLTRACE_ID id, const char *name);
/* The statistics now, from the writer and the live source. EventsLost is the source's exact
   count (PERF_FORMAT_LOST) plus the records the writer could not hold; a sequential file's
   BuffersWritten counts its header buffer, so that it is the file header's BuffersWritten (the
   files an UPDATE closed included). Called with s->lock held. */
void session_get_stats(struct session *s, struct session_stats *st);
/* s->lock for a request (a control, a query, a change, a save), never for the logger: tried, with
   short sleeps between tries, before it is waited for (session_table.c says why). */
void session_lock_request(struct session *s);
ULONG session_clamp_ulong(uint64_t v);
/* Fills the statistics and settings of Properties (QUERY, and after START/UPDATE/STOP/FLUSH),
   and the names at the offsets the caller set. Called with s->lock held. Returns
   ERROR_SUCCESS or ERROR_MORE_DATA when a name does not fit. */
ULONG session_fill_properties(struct session *s, EVENT_TRACE_PROPERTIES *p);

/* session_rt.c */
int session_rt_queue_init(struct rt_queue *q, uint32_t cap, uint32_t buffer_size);
/* A queue's own steps, under the lock that guards it: push queues a copy of buf (false: full,
   or no memory), pop hands the oldest buffer's ownership to the caller (NULL: empty), keep
   takes back a buffer the caller is done with as a spare (false: the caller frees it). */
bool session_rt_queue_push(struct rt_queue *q, const uint8_t *buf);
uint8_t *session_rt_queue_pop(struct rt_queue *q);
bool session_rt_queue_keep(struct rt_queue *q, uint8_t *b);
/* The buffers queued that wake the sender of a queue of cap buffers (session_rt's wake_at). */
uint32_t session_rt_wake_at(uint32_t cap);
/* The writer's buffer callback: called with s->lock held, whichever thread completes a buffer. */
void session_rt_on_buffer(void *ctx, const uint8_t *buf, uint32_t size);
/* Wakes the consumers (a flush, a save); session_rt_end also tells them the session ended.
   Called with s->lock held. */
void session_rt_wake(struct session *s);
void session_rt_end(struct session *s);

/* session_logger.c */
/* The log file written on a thread of the writer's own: the logger that empties the kernel's
   rings never waits for the disk (a journal commit behind another program's 2 GB took over a
   second, and the rings, a quarter second deep at 4 kHz with stack copies, overflowed).
   MaximumBuffers, and at least 16 MiB, may wait for it; past them buffers are lost
   (LogBuffersLost), as in ETW. Without the thread the writes stay on the logger. */
void session_file_async(struct session *s, uint32_t max_buffers);
/* Drains the source's rings until they hold nothing older than the merge's horizon, at most
   DRAIN_ROUNDS budgets. The next wake-up comes only when another watermark's worth has been
   written (a quarter of a ring), so what a drain leaves waits for it, and a ring that fills
   meanwhile drops records. Unless is_locked, s->lock is taken for each round only (controllers
   get in between). Returns the records drained. */
int session_drain_source(struct session *s, bool is_locked);
int session_thread_start(struct session *s);
void session_thread_stop(struct session *s);

/* session_start.c */
/* A NUL-terminated string at offset inside the caller's buffer, or NULL. */
const char *session_string_at(const EVENT_TRACE_PROPERTIES *p, ULONG offset);
/* MaximumBuffers as a session may have it: its buffers in memory at most
   SESSION_MAX_BUFFER_BYTES (as Windows adjusts MaximumBuffers to what it can give, and reports
   the value in force). */
uint32_t session_max_buffers_cap(uint32_t max_buffers, uint32_t buffer_size_kb);
ULONG session_local_start(CONTROLTRACE_ID *id, EVENT_TRACE_PROPERTIES *p,
                          const struct session_start_request *req,
                          const struct session_start_defaults *d);

/* session_control.c */
/* Applies next to the session and its running source. Called with s->lock held. Returns 0 or
   -errno with err filled; on failure the old settings stay. */
int session_apply_settings(struct session *s, const struct live_settings *next,
                           struct etl_error *err);
/* Marks s STOPPING for the caller, the one stop it gets: a controller's STOP (why NULL), or
   the logger thread ending the session because of why, which then holds a reference of its
   own; from now on the calls that name the handle say why. False when the session is not
   RUNNING (a stop under way, a start not finished). */
bool session_claim_stop(struct session *s, const char *why);
ULONG session_stop_session(struct session *s, EVENT_TRACE_PROPERTIES *p);
/* The logger thread ends its own session, claimed, after its log file failed: nobody will
   join the thread, and the reference the claim took is dropped last. */
void session_end_itself(struct session *s);
/* The error of a call that found no running session with handle id: ERROR_WMI_INSTANCE_NOT_FOUND,
   saying why the session stopped when it stopped itself (once its file is finalized). what
   names the call. */
ULONG session_not_found(const char *what, CONTROLTRACE_ID id);
ULONG session_local_control(CONTROLTRACE_ID TraceId, const char *InstanceName,
                            PEVENT_TRACE_PROPERTIES Properties, ULONG ControlCode,
                            const char *new_file);

/* session_set_info.c */
const char *session_class_name(TRACE_INFO_CLASS c);
/* The kernel session a session-specific class needs, with a reference; NULL with the error
   set. */
struct session *session_kernel_session(const char *fn, TRACE_INFO_CLASS c, CONTROLTRACE_ID id,
                                       ULONG *code);
ULONG session_local_set_info(CONTROLTRACE_ID SessionHandle, TRACE_INFO_CLASS InformationClass,
                             const void *TraceInformation, ULONG InformationLength);
ULONG session_local_lbr(CONTROLTRACE_ID TraceId, ULONG LbrConfiguration,
                        const CLASSIC_EVENT_ID *Events, ULONG EventCount);

/* session_query_info.c */
ULONG session_local_query_info(CONTROLTRACE_ID SessionHandle, TRACE_INFO_CLASS InformationClass,
                               void *TraceInformation, ULONG InformationLength,
                               PULONG ReturnLength);

#endif
