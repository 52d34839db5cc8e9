/* SPDX-License-Identifier: MIT */
/* session.c: owns the session table and the controller API (StartTraceA, ControlTraceA,
   TraceSetInformation, TraceQueryInformation, TraceConfigureLastBranchRecord, StartKernelTrace):
   validation as seeds 000-004 and the Windows documentation give it, one logger thread per
   session, and real-time delivery to consumers.

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

/* Not (yet) in etw/winerror.h; the Windows values. */

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
#define DRAIN_ROUNDS         128 /* a drain's limit per wake-up: 512k records */
#define LOGGER_RT_PRIORITY   1   /* SCHED_FIFO, the lowest: ahead of every normal thread */
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

#define RT_SPARES 4
/* Consumers wake when this many buffers wait, at a flush (FlushTimer, ControlTrace FLUSH, a
   save) and at the end: a wake-up per buffer cost more than decoding the buffer. */
#define RT_WAKE_BATCH 8

/* A bounded queue of completed buffers, oldest first. */
struct rt_queue {
        uint8_t **bufs; /* owned: cap slots, each an owned copy or NULL */
        uint32_t cap;
        uint32_t head;
        uint32_t count;
        uint32_t buffer_size;
        /* owned: buffers the consumer is done with, for the next copies (a malloc and free
           per buffer touched fresh pages each time) */
        uint8_t *spare[RT_SPARES];
        uint32_t nr_spare;
};

struct session_rt {
        struct session *s;      /* a reference, dropped by session_rt_detach */
        struct rt_queue q;      /* under s->lock */
        uint8_t *header;  /* owned: the header buffer as of attach, handed out first; then NULL */
        uint8_t *current; /* owned: the buffer last handed out */
        bool is_current_header; /* current is the header's copy, not a queue buffer */
        uint64_t nr_lost;       /* under s->lock */
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
        pthread_cond_t rt_cond;     /* a buffer was queued, or the session ended */
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

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct session *table[MAX_SESSIONS];
static uint32_t generations[MAX_SESSIONS];
/* The global profile configuration (handle 0): TraceSampledProfileIntervalInfo and
   TraceProfileSourceConfigInfo before a kernel logger starts (seed 000). */
static uint32_t profile_intervals[NR_PROFILE_SOURCES];
static uint32_t nr_pending_sources;
static uint32_t pending_sources[LIVE_MAX_SOURCES];
/* ETWTOP_TRACE_PROCESS_INFO with handle 0: the process of the kernel loggers started next. */
static int32_t pending_pid = -1;
_Static_assert(SESSION_MAX_SOURCES == LIVE_MAX_SOURCES, "sources a start carries");
_Static_assert(SESSION_MAX_INTERVALS == NR_PROFILE_SOURCES, "intervals a start carries");
/* Why the session last in each slot stopped itself (a write error), for the calls that name
   its handle afterwards; a handle is never reused, so a stale entry matches nothing. Under
   table_lock; ended_cond signals is_done: those calls wait until the file is finalized, so
   that a caller told the session is gone can read the file (or exit). */
static struct {
        CONTROLTRACE_ID handle;
        bool is_done;
        char why[MAX_NAME_CHARS + 128];
} ended[MAX_SESSIONS];
static pthread_cond_t ended_cond = PTHREAD_COND_INITIALIZER;
/* A session left the table (under table_lock): a start waiting for a stopping session's name. */
static pthread_cond_t left_cond = PTHREAD_COND_INITIALIZER;
#define STOPPING_WAIT_S 10 /* a start waits this long for a stopping session of its name */

static pthread_once_t caps_once = PTHREAD_ONCE_INIT;
static struct live_caps caps;
static uint32_t cpu_speed_mhz; /* the logfile header's CpuSpeedInMHz */

/* The CPU's speed: /proc/cpuinfo's "cpu MHz" (x86), else cpufreq's cpuinfo_max_freq (kHz);
   0 when neither says. */
static uint32_t cpu_mhz_probe(void)
{
        FILE *f = fopen("/proc/cpuinfo", "r");
        char line[256];
        double mhz = 0;
        while (f && fgets(line, sizeof(line), f))
                if (sscanf(line, "cpu MHz : %lf", &mhz) == 1)
                        break;
        if (f)
                fclose(f);
        if (mhz >= 1)
                return (uint32_t)mhz;
        unsigned long khz = 0;
        f = fopen("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "r");
        if (f) {
                if (fscanf(f, "%lu", &khz) != 1)
                        khz = 0;
                fclose(f);
        }
        return (uint32_t)(khz / 1000);
}

static void caps_probe(void)
{
        live_probe(&caps);
        if (caps.nr_cpus == 0) {
                long n = sysconf(_SC_NPROCESSORS_CONF);
                caps.nr_cpus = n > 0 ? (uint32_t)n : 1;
        }
        cpu_speed_mhz = cpu_mhz_probe();
}

static const struct live_caps *machine_caps(void)
{
        pthread_once(&caps_once, caps_probe);
        return &caps;
}

/* ---- small helpers ------------------------------------------------------------------------ */

static int64_t clock_ns(clockid_t id)
{
        struct timespec ts;
        clock_gettime(id, &ts);
        return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static int64_t filetime_now(void)
{
        return FILETIME_UNIX_EPOCH + clock_ns(CLOCK_REALTIME) / 100;
}

static bool name_equal(const char *a, const char *b)
{
        return strcasecmp(a, b) == 0;
}

static bool guid_is_zero(const GUID *g)
{
        static const GUID zero;
        return IsEqualGUID(g, &zero);
}

static uint32_t interval_of(uint32_t source)
{
        if (source < NR_PROFILE_SOURCES && profile_intervals[source])
                return profile_intervals[source];
        return source == ProfileTime ? TIMER_DEFAULT_100NS : PMC_DEFAULT_INTERVAL;
}

/* Sources counted by the CPU's PMU, as opposed to the timer and software counters. */
static bool source_needs_pmu(uint32_t source)
{
        return source != ProfileTime && source != ProfileAlignmentFixup && source != 36;
}

/* The Win32 code for an error of the live source (privileges, missing hardware). */
static DWORD live_error_code(int rc)
{
        switch (-rc) {
        case EACCES:
        case EPERM: return ERROR_ACCESS_DENIED;
        case EOPNOTSUPP:
        case ENOENT:
        case ENODEV: return ERROR_NOT_SUPPORTED;
        case EMFILE:
        case ENFILE: return ERROR_NO_SYSTEM_RESOURCES;
        default: return etw_error_from_errno(rc);
        }
}

/* The Win32 code for an error creating the log file. */
static DWORD file_error_code(int rc)
{
        switch (-rc) {
        case EEXIST: return ERROR_FILE_EXISTS;
        case ENOENT:
        case ENOTDIR: return ERROR_PATH_NOT_FOUND;
        case ELOOP:
        case EACCES:
        case EPERM:
        case EROFS:
        case EISDIR: return ERROR_ACCESS_DENIED;
        case ENAMETOOLONG: return ERROR_BAD_PATHNAME;
        default: return etw_error_from_errno(rc);
        }
}

/* ---- hook ids and group masks ------------------------------------------------------------- */

/* The hook id of a CLASSIC_EVENT_ID, or -1 when its GUID names no kernel group (seed 003: such
   entries are ignored). */
static int hook_of_event(const CLASSIC_EVENT_ID *e)
{
        int group = etw_group_of_provider(&e->EventGuid);
        if (group < 0)
                return -1;
        return (group << 8) | e->Type;
}

static void event_of_hook(uint16_t hook, CLASSIC_EVENT_ID *e)
{
        memset(e, 0, sizeof(*e));
        /* 0x030A is the image load of the Process group; its consumer GUID is Image's */
        const GUID *g =
                hook == WMI_LOG_TYPE_PROCESS_LOAD_IMAGE ? &ProcessGuid : etw_provider_of_hook(hook);
        if (g)
                e->EventGuid = *g;
        e->Type = (UCHAR)(hook & 0xFF);
}

/* The group-mask bits an EnableFlags value implies beyond Masks[0] (ETL-FORMAT.md 3.1). */
static void derived_masks(uint32_t flags, uint32_t masks[PERF_NUM_MASKS])
{
        memset(masks, 0, PERF_NUM_MASKS * sizeof(uint32_t));
        masks[0] = flags;
        if (flags & EVENT_TRACE_FLAG_PROFILE)
                masks[1] |= PERF_PROFILE & PERF_MASK_GROUP;
        if (flags & EVENT_TRACE_FLAG_CSWITCH)
                masks[1] |= PERF_CONTEXT_SWITCH & PERF_MASK_GROUP;
        if (flags & EVENT_TRACE_FLAG_DISPATCHER)
                masks[1] |= PERF_DISPATCHER & PERF_MASK_GROUP;
        if (flags & EVENT_TRACE_FLAG_DPC)
                masks[1] |= PERF_DPC & PERF_MASK_GROUP;
        if (flags & EVENT_TRACE_FLAG_INTERRUPT)
                masks[1] |= PERF_INTERRUPT & PERF_MASK_GROUP;
        if (flags & EVENT_TRACE_FLAG_SYSTEMCALL)
                masks[2] |= PERF_SYSCALL & PERF_MASK_GROUP;
}

/* Replaces the EnableFlags part of the group masks, keeping bits set by
   TraceSystemTraceEnableFlagsInfo. */
static void set_enable_flags(PERFINFO_GROUPMASK *gm, uint32_t flags)
{
        uint32_t old_d[PERF_NUM_MASKS], new_d[PERF_NUM_MASKS];
        derived_masks(gm->Masks[0], old_d);
        derived_masks(flags, new_d);
        for (int i = 1; i < PERF_NUM_MASKS; i++)
                gm->Masks[i] = (gm->Masks[i] & ~old_d[i]) | new_d[i];
        gm->Masks[0] = flags;
}

/* Whether the events of hook are collected under these masks (StartKernelTrace ignores stack
   ids of events that are not). Groups we cannot tell count as not enabled. */
static bool hook_is_enabled(uint16_t hook, const PERFINFO_GROUPMASK *gm)
{
        uint32_t f = gm->Masks[0], m1 = gm->Masks[1];
        uint8_t type = hook & 0xFF;
        switch (hook >> 8) {
        case 0x00: return true;
        case 0x01: return f & (EVENT_TRACE_FLAG_DISK_IO | EVENT_TRACE_FLAG_DISK_IO_INIT);
        case 0x02:
                return f &
                       (EVENT_TRACE_FLAG_MEMORY_PAGE_FAULTS | EVENT_TRACE_FLAG_MEMORY_HARD_FAULTS |
                        EVENT_TRACE_FLAG_VIRTUAL_ALLOC | EVENT_TRACE_FLAG_VAMAP);
        case 0x03:
                if (type == 0x0A)
                        return f & EVENT_TRACE_FLAG_IMAGE_LOAD;
                return f & EVENT_TRACE_FLAG_PROCESS;
        case 0x04:
                return f & (EVENT_TRACE_FLAG_FILE_IO | EVENT_TRACE_FLAG_FILE_IO_INIT |
                            EVENT_TRACE_FLAG_DISK_FILE_IO);
        case 0x05:
                if (type == 0x24)
                        return (f & EVENT_TRACE_FLAG_CSWITCH) ||
                               (m1 & (PERF_CONTEXT_SWITCH & PERF_MASK_GROUP));
                if (type == 0x32)
                        return (f & EVENT_TRACE_FLAG_DISPATCHER) ||
                               (m1 & (PERF_DISPATCHER & PERF_MASK_GROUP));
                return f & EVENT_TRACE_FLAG_THREAD;
        case 0x06:
        case 0x08: return f & EVENT_TRACE_FLAG_NETWORK_TCPIP;
        case 0x07: return f & EVENT_TRACE_FLAG_JOB;
        case 0x09: return f & EVENT_TRACE_FLAG_REGISTRY;
        case 0x0A: return f & EVENT_TRACE_FLAG_DBGPRINT;
        case 0x0F:
                if (type == 0x2E)
                        return (f & EVENT_TRACE_FLAG_PROFILE) ||
                               (m1 & (PERF_PROFILE & PERF_MASK_GROUP));
                if (type == 0x2F)
                        return m1 & PERF_MASK1_PMC;
                if (type == 0x33 || type == 0x34)
                        return f & EVENT_TRACE_FLAG_SYSTEMCALL;
                if (type >= 0x42 && type <= 0x45)
                        return f & (EVENT_TRACE_FLAG_DPC | EVENT_TRACE_FLAG_INTERRUPT);
                return false;
        case 0x14: return f & EVENT_TRACE_FLAG_IMAGE_LOAD;
        case 0x15: return f & EVENT_TRACE_FLAG_DPC;
        case 0x1A: return f & EVENT_TRACE_FLAG_ALPC;
        case 0x1B: return f & EVENT_TRACE_FLAG_SPLIT_IO;
        default: return false;
        }
}

/* The settings the live source runs with: the configured ones, with the PMC sampling sources
   only while PERF_PMC_PROFILE is on (they are configured before, seed 000). */
static void effective_settings(const struct live_settings *cfg, struct live_settings *out)
{
        *out = *cfg;
        if (!(cfg->masks.Masks[1] & PERF_MASK1_PMC))
                out->nr_profile_sources = 0;
}

/* 0, or -EOPNOTSUPP with err saying why, when the settings need hardware this machine lacks. */
static int check_hardware(const struct live_settings *cfg, struct etl_error *err)
{
        const struct live_caps *c = machine_caps();
        struct live_settings eff;
        effective_settings(cfg, &eff);
        bool needs_pmu = false;
        for (uint32_t i = 0; i < eff.nr_profile_sources; i++)
                needs_pmu |= source_needs_pmu(eff.profile_sources[i]);
        for (uint32_t i = 0; i < eff.nr_pmc_counters; i++)
                needs_pmu |= source_needs_pmu(eff.pmc_counters[i]);
        /* the probe's reasons are whole sentences that name what is missing: copied as is */
        if (needs_pmu && !c->has_pmu) {
                snprintf(err->msg, sizeof(err->msg), "%.*s", (int)sizeof(err->msg) - 1,
                         c->why_no_pmu[0] ? c->why_no_pmu
                                          : "no hardware PMU: this machine exposes none");
                return -EOPNOTSUPP;
        }
        if (eff.nr_lbr_hooks && !c->has_lbr) {
                snprintf(err->msg, sizeof(err->msg), "%.*s", (int)sizeof(err->msg) - 1,
                         c->why_no_lbr[0] ? c->why_no_lbr
                                          : "no Last Branch Record: this machine has none");
                return -EOPNOTSUPP;
        }
        return 0;
}

/* ---- session references ------------------------------------------------------------------- */

/* Frees a buffer of a real-time queue (NULL is fine), giving its bytes back to session_mem. */
static void rt_buf_free(uint8_t *b, uint32_t size)
{
        if (!b)
                return;
        free(b);
        session_mem_give(size);
}

static void rt_queue_free(struct rt_queue *q)
{
        for (uint32_t i = 0; q->bufs && i < q->cap; i++)
                rt_buf_free(q->bufs[i], q->buffer_size);
        for (uint32_t i = 0; i < q->nr_spare; i++)
                rt_buf_free(q->spare[i], q->buffer_size);
        free(q->bufs);
        memset(q, 0, sizeof(*q));
}

static void session_free(struct session *s)
{
        if (!s)
                return;
        live_source_close(s->source);
        etl_writer_free(s->writer);
        rt_queue_free(&s->backlog);
        session_mem_give(s->window_bytes);
        if (s->wake_fd >= 0)
                close(s->wake_fd);
        pthread_cond_destroy(&s->rt_cond);
        pthread_mutex_destroy(&s->lock);
        log_file_release(&s->circular);
        free(s->name);
        free(s->log_file_name);
        free(s);
}

/* Drops a reference; the last one frees the session. */
static void session_unref(struct session *s)
{
        pthread_mutex_lock(&table_lock);
        bool is_last = --s->nr_refs == 0;
        pthread_mutex_unlock(&table_lock);
        if (is_last)
                session_free(s);
}

/* A running session by handle (when nonzero) or by name, with a reference taken; NULL when
   there is none. Called without locks. */
static struct session *session_find(CONTROLTRACE_ID id, const char *name)
{
        struct session *found = NULL;
        pthread_mutex_lock(&table_lock);
        if (id) {
                uint32_t low = (uint32_t)id;
                if (low >= 1 && low <= MAX_SESSIONS) {
                        struct session *s = table[low - 1];
                        if (s && s->handle == id && s->state == SESSION_RUNNING)
                                found = s;
                }
        } else if (name) {
                for (int i = 0; i < MAX_SESSIONS; i++) {
                        struct session *s = table[i];
                        if (s && s->state == SESSION_RUNNING && name_equal(s->name, name)) {
                                found = s;
                                break;
                        }
                }
        }
        if (found)
                found->nr_refs++;
        pthread_mutex_unlock(&table_lock);
        return found;
}

/* ---- real-time delivery ------------------------------------------------------------------- */

static int rt_queue_init(struct rt_queue *q, uint32_t cap, uint32_t buffer_size)
{
        q->bufs = calloc(cap, sizeof(*q->bufs));
        if (!q->bufs)
                return -ENOMEM;
        q->cap = cap;
        q->head = 0;
        q->count = 0;
        q->buffer_size = buffer_size;
        return 0;
}

/* Queues a copy of buf; false (nothing queued) when the queue is full or memory is short: the
   machine's, or the budget of every session's queues (session_mem). */
static bool rt_queue_push(struct rt_queue *q, const uint8_t *buf)
{
        if (q->count >= q->cap)
                return false;
        uint32_t slot = (q->head + q->count) % q->cap;
        if (!q->bufs[slot] && q->nr_spare)
                q->bufs[slot] = q->spare[--q->nr_spare];
        if (!q->bufs[slot]) {
                if (!session_mem_take(q->buffer_size))
                        return false;
                q->bufs[slot] = malloc(q->buffer_size);
                if (!q->bufs[slot]) {
                        session_mem_give(q->buffer_size);
                        return false;
                }
        }
        memcpy(q->bufs[slot], buf, q->buffer_size);
        q->count++;
        return true;
}

/* Doubles a queue's capacity, keeping its buffers in order; false when memory is short. */
static bool rt_queue_grow(struct rt_queue *q)
{
        uint32_t cap = q->cap ? 2 * q->cap : 8;
        uint8_t **bufs = calloc(cap, sizeof(*bufs));
        if (!bufs)
                return false;
        for (uint32_t i = 0; i < q->count; i++)
                bufs[i] = q->bufs[(q->head + i) % q->cap];
        for (uint32_t i = q->count; i < q->cap; i++) /* slots not in use may hold buffers */
                rt_buf_free(q->bufs[(q->head + i) % q->cap], q->buffer_size);
        free(q->bufs);
        q->bufs = bufs;
        q->cap = cap;
        q->head = 0;
        return true;
}

/* The oldest buffer, whose ownership passes to the caller. */
static uint8_t *rt_queue_pop(struct rt_queue *q)
{
        if (!q->count)
                return NULL;
        uint8_t *b = q->bufs[q->head];
        q->bufs[q->head] = NULL;
        q->head = (q->head + 1) % q->cap;
        q->count--;
        return b;
}

/* The writer's buffer callback: called with s->lock held, whichever thread completes a buffer. */
static void rt_on_buffer(void *ctx, const uint8_t *buf, uint32_t size)
{
        struct session *s = ctx;
        (void)size;
        if (!s->consumers) {
                /* no consumer yet: keep the newest buffers for the first one */
                if (s->backlog.count >= s->backlog.cap) {
                        rt_buf_free(rt_queue_pop(&s->backlog), s->backlog.buffer_size);
                        s->nr_rt_lost++;
                }
                if (!rt_queue_push(&s->backlog, buf))
                        s->nr_rt_lost++;
        }
        bool is_wake = false;
        for (struct session_rt *rt = s->consumers; rt; rt = rt->next) {
                /* the stop's last buffers (its rundown, written at once under the lock, where
                   no consumer can take any) reach every consumer: nothing waits for them */
                if (s->is_ending && rt->q.count >= rt->q.cap)
                        rt_queue_grow(&rt->q);
                if (!rt_queue_push(&rt->q, buf)) {
                        rt->nr_lost++;
                        s->nr_rt_lost++;
                }
                is_wake = is_wake || rt->q.count >= RT_WAKE_BATCH;
        }
        if (is_wake)
                pthread_cond_broadcast(&s->rt_cond);
}

/* The running real-time session named logger_name, with a reference; NULL when there is none. */
static struct session *rt_session_find(const char *logger_name)
{
        struct session *s = session_find(0, logger_name);
        if (s && !(s->log_file_mode & EVENT_TRACE_REAL_TIME_MODE)) {
                session_unref(s);
                return NULL;
        }
        return s;
}

/* A copy of the writer's header buffer, or NULL (no memory, or the session has ended). Called
   with s->lock held. */
static uint8_t *header_copy(struct session *s)
{
        if (s->is_ended || !s->writer)
                return NULL;
        uint32_t size;
        const uint8_t *h = etl_writer_header(s->writer, &size);
        uint8_t *copy = malloc(size);
        if (copy)
                memcpy(copy, h, size);
        return copy;
}

int session_rt_header(const char *logger_name, uint8_t **buf, uint32_t *size,
                      struct session_rt_info *info)
{
        *buf = NULL;
        *size = 0;
        struct session *s = rt_session_find(logger_name);
        if (!s)
                return -ESRCH;
        pthread_mutex_lock(&s->lock);
        bool is_ended = s->is_ended;
        uint8_t *copy = header_copy(s);
        *info = s->rt_info;
        pthread_mutex_unlock(&s->lock);
        session_unref(s);
        if (!copy)
                return is_ended ? -ESRCH : -ENOMEM;
        *buf = copy;
        *size = info->buffer_size_bytes;
        return 0;
}

int session_rt_attach(const char *logger_name, struct session_rt **out,
                      struct session_rt_info *info)
{
        *out = NULL;
        struct session *s = rt_session_find(logger_name);
        if (!s)
                return -ESRCH;
        struct session_rt *rt = calloc(1, sizeof(*rt));
        if (!rt) {
                session_unref(s);
                return -ENOMEM;
        }
        rt->s = s;
        pthread_mutex_lock(&s->lock);
        if (s->is_ended) {
                /* stopped between the lookup and the lock */
                pthread_mutex_unlock(&s->lock);
                free(rt);
                session_unref(s);
                return -ESRCH;
        }
        rt->header = header_copy(s);
        if (!rt->header ||
            rt_queue_init(&rt->q, s->max_buffers, s->rt_info.buffer_size_bytes) < 0) {
                pthread_mutex_unlock(&s->lock);
                free(rt->header);
                free(rt);
                session_unref(s);
                return -ENOMEM;
        }
        if (!s->consumers) {
                uint8_t *b;
                while ((b = rt_queue_pop(&s->backlog))) {
                        if (!rt_queue_push(&rt->q, b))
                                s->nr_rt_lost++;
                        rt_buf_free(b, s->backlog.buffer_size);
                }
        }
        rt->next = s->consumers;
        s->consumers = rt;
        *info = s->rt_info;
        pthread_mutex_unlock(&s->lock);
        *out = rt;
        return 0;
}

int session_rt_next(struct session_rt *rt, uint32_t timeout_ms, const uint8_t **buf, uint32_t *size)
{
        struct session *s = rt->s;
        struct timespec deadline;
        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_sec += timeout_ms / 1000;
        deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
        if (deadline.tv_nsec >= 1000000000) {
                deadline.tv_sec++;
                deadline.tv_nsec -= 1000000000;
        }
        pthread_mutex_lock(&s->lock);
        if (rt->current && !rt->is_current_header && rt->q.nr_spare < RT_SPARES)
                rt->q.spare[rt->q.nr_spare++] = rt->current;
        else if (rt->is_current_header)
                free(rt->current);
        else
                rt_buf_free(rt->current, rt->q.buffer_size);
        rt->current = NULL;
        rt->is_current_header = false;
        int rc = -EAGAIN;
        for (;;) {
                if (rt->header) {
                        /* the logfile header and the start group masks, before any data */
                        rt->current = rt->header;
                        rt->is_current_header = true;
                        rt->header = NULL;
                        *buf = rt->current;
                        *size = rt->q.buffer_size;
                        rc = 1;
                        break;
                }
                if (rt->q.count) {
                        rt->current = rt_queue_pop(&rt->q);
                        *buf = rt->current;
                        *size = rt->q.buffer_size;
                        rc = 1;
                        break;
                }
                if (s->is_ended) {
                        rc = 0;
                        break;
                }
                if (pthread_cond_timedwait(&s->rt_cond, &s->lock, &deadline) == ETIMEDOUT)
                        break;
        }
        pthread_mutex_unlock(&s->lock);
        return rc;
}

uint64_t session_rt_nr_lost(const struct session_rt *rt)
{
        pthread_mutex_lock(&rt->s->lock);
        uint64_t n = rt->nr_lost;
        pthread_mutex_unlock(&rt->s->lock);
        return n;
}

const char *session_rt_error(const struct session_rt *rt)
{
        (void)rt;
        return "";
}

void session_rt_detach(struct session_rt *rt)
{
        if (!rt)
                return;
        struct session *s = rt->s;
        pthread_mutex_lock(&s->lock);
        for (struct session_rt **p = &s->consumers; *p; p = &(*p)->next) {
                if (*p == rt) {
                        *p = rt->next;
                        break;
                }
        }
        if (rt->is_current_header)
                free(rt->current);
        else
                rt_buf_free(rt->current, rt->q.buffer_size);
        rt_queue_free(&rt->q);
        pthread_mutex_unlock(&s->lock);
        free(rt->header);
        free(rt);
        session_unref(s);
}

void session_rt_drop(struct session_rt *rt)
{
        struct session *s = rt->s;
        pthread_mutex_lock(&s->lock);
        rt->nr_lost += rt->q.count + (rt->header ? 1 : 0);
        if (rt->is_current_header)
                free(rt->current);
        else
                rt_buf_free(rt->current, rt->q.buffer_size);
        rt->current = NULL;
        rt->is_current_header = false;
        free(rt->header);
        rt->header = NULL;
        uint32_t buffer_size = rt->q.buffer_size;
        rt_queue_free(&rt->q);
        rt->q.buffer_size = buffer_size;
        pthread_mutex_unlock(&s->lock);
}

bool session_rt_is_ended(const struct session_rt *rt)
{
        pthread_mutex_lock(&rt->s->lock);
        bool is_ended = rt->s->is_ended;
        pthread_mutex_unlock(&rt->s->lock);
        return is_ended;
}

/* ---- the logger thread -------------------------------------------------------------------- */

struct thread_start {
        struct session *s;
        pthread_mutex_t lock;
        pthread_cond_t cond;
        bool is_ready;
};

static bool session_claim_stop(struct session *s, const char *why);
static void session_end_itself(struct session *s);

/* The log file written on a thread of the writer's own: the logger that empties the kernel's
   rings never waits for the disk (a journal commit behind another program's 2 GB took over a
   second, and the rings, a quarter second deep at 4 kHz with stack copies, overflowed).
   MaximumBuffers, and at least 16 MiB, may wait for it; past them buffers are lost
   (LogBuffersLost), as in ETW. Without the thread the writes stay on the logger. */
static void file_async(struct session *s, uint32_t max_buffers)
{
        etl_writer_set_async(s->writer, max_buffers);
}

/* Whether the session's sequential file took its last buffer: a write error, its maximum size,
   its file system's space for users; why says which. */
static bool file_is_done(struct session *s, char *why, size_t size)
{
        struct etl_writer_stats ws = {0};
        pthread_mutex_lock(&s->lock);
        if (s->writer && s->log_file_name && !s->is_circular_file)
                etl_writer_get_stats(s->writer, &ws);
        if (ws.full)
                log_file_full_text(why, size, (enum log_file_full)ws.full, s->log_file_name,
                                   s->max_file_bytes, ws.fs_avail_bytes);
        else if (ws.write_error)
                snprintf(why, size, "writing %s failed: %s", s->log_file_name,
                         strerror(ws.write_error));
        pthread_mutex_unlock(&s->lock);
        return ws.full || ws.write_error;
}

/* Drains the source's rings until they hold nothing older than the merge's horizon, at most
   DRAIN_ROUNDS budgets. The next wake-up comes only when another watermark's worth has been
   written (a quarter of a ring), so what a drain leaves waits for it, and a ring that fills
   meanwhile drops records. Unless is_locked, s->lock is taken for each round only (controllers
   get in between). Returns the records drained. */
static int drain_source(struct session *s, bool is_locked)
{
        int total = 0;
        for (int round = 0; round < DRAIN_ROUNDS; round++) {
                if (!is_locked)
                        pthread_mutex_lock(&s->lock);
                int k = s->source ? live_source_drain(s->source, DRAIN_BUDGET) : 0;
                if (!is_locked)
                        pthread_mutex_unlock(&s->lock);
                if (k <= 0)
                        break;
                total += k;
        }
        return total;
}

/* Polls the live source, drains it, and flushes every FlushTimer seconds, until STOP, or until
   the log file cannot be written: then the session stops itself. */
static void *logger_thread(void *arg)
{
        struct thread_start *ts = arg;
        struct session *s = ts->s;
        pthread_mutex_lock(&ts->lock);
        s->tid = (pid_t)syscall(SYS_gettid);
        ts->is_ready = true;
        pthread_cond_signal(&ts->cond);
        pthread_mutex_unlock(&ts->lock);

        pthread_mutex_lock(&s->lock);
        /* the first flush at once: the start's rundown (processes, threads, images) reaches a
           real-time consumer before the samples of a CPU whose buffer fills first, which it
           would otherwise see a whole FlushTimer without their processes and modules */
        int64_t next_flush = clock_ns(CLOCK_MONOTONIC);
        int source_fd = s->source ? live_source_fd(s->source) : -1;
        pthread_mutex_unlock(&s->lock);
        int nr_idle_wakeups = 0;
        bool is_file_done = false;
        while (!atomic_load(&s->is_stop_requested)) {
                int64_t now = clock_ns(CLOCK_MONOTONIC);
                /* rounded up: rounded down, the last millisecond before a flush was a spin
                   of poll(0) */
                int64_t wait_ms = (next_flush - now + 999999) / 1000000;
                if (wait_ms < 0)
                        wait_ms = 0;
                if (wait_ms > 200)
                        wait_ms = 200;
                if (nr_idle_wakeups > 2)
                        wait_ms = wait_ms < 10 ? wait_ms : 10;
                struct pollfd pfd[2] = {{.fd = s->wake_fd, .events = POLLIN},
                                        {.fd = source_fd, .events = POLLIN}};
                int n = poll(pfd, source_fd >= 0 ? 2 : 1, (int)wait_ms);
                if (atomic_load(&s->is_stop_requested))
                        break;
                if (n > 0 && source_fd >= 0 && (pfd[1].revents & POLLIN)) {
                        int total = drain_source(s, false);
                        /* readable but nothing to convert: do not spin on the fd */
                        nr_idle_wakeups = total ? 0 : nr_idle_wakeups + 1;
                        if (nr_idle_wakeups > 2) {
                                struct timespec pause = {0, 5000000};
                                nanosleep(&pause, NULL);
                        }
                }
                now = clock_ns(CLOCK_MONOTONIC);
                if (now >= next_flush) {
                        /* everything up to now: one budget a flush left a CPU that writes more
                           than 4096 records a second (4 kHz with stacks) seconds behind, until
                           its ring's watermark woke the thread */
                        drain_source(s, false);
                        pthread_mutex_lock(&s->lock);
                        etl_writer_flush(s->writer);
                        pthread_cond_broadcast(&s->rt_cond);
                        next_flush = now + (int64_t)s->flush_timer_s * 1000000000ll;
                        pthread_mutex_unlock(&s->lock);
                }
                /* a controller's STOP under way (or a start not finished) leaves the claim */
                char why[MAX_NAME_CHARS + 128];
                is_file_done = file_is_done(s, why, sizeof(why));
                if (is_file_done) {
                        if (session_claim_stop(s, why))
                                break;
                        is_file_done = false;
                }
        }
        if (is_file_done)
                session_end_itself(s);
        return NULL;
}

/* Starts the logger thread. A live session's logger runs at the lowest real-time priority
   where that is permitted (CAP_SYS_NICE, or RLIMIT_RTPRIO), as perf record -r 1 would: a normal
   thread on a busy machine waited up to 1.5 s for a CPU (measured, with the CPU-bound load in
   another scheduling group), while the rings fill in about 400 ms and then drop records. The
   logger sleeps in poll between drains and a drain is bounded (DRAIN_ROUNDS), so it takes a
   CPU only for its work. Not permitted, it is a normal thread. */
static int logger_create(struct session *s, struct thread_start *ts)
{
        if (s->source) {
                pthread_attr_t attr;
                struct sched_param sp = {.sched_priority = LOGGER_RT_PRIORITY};
                if (pthread_attr_init(&attr) == 0) {
                        int rc = pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
                        if (rc == 0)
                                rc = pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
                        if (rc == 0)
                                rc = pthread_attr_setschedparam(&attr, &sp);
                        if (rc == 0)
                                rc = pthread_create(&s->thread, &attr, logger_thread, ts);
                        pthread_attr_destroy(&attr);
                        if (rc == 0)
                                return 0;
                }
        }
        return pthread_create(&s->thread, NULL, logger_thread, ts);
}

static int thread_start(struct session *s)
{
        struct thread_start ts = {.s = s, .is_ready = false};
        pthread_mutex_init(&ts.lock, NULL);
        pthread_cond_init(&ts.cond, NULL);
        int rc = logger_create(s, &ts);
        if (rc == 0) {
                s->has_thread = true;
                pthread_mutex_lock(&ts.lock);
                while (!ts.is_ready)
                        pthread_cond_wait(&ts.cond, &ts.lock);
                pthread_mutex_unlock(&ts.lock);
        }
        pthread_cond_destroy(&ts.cond);
        pthread_mutex_destroy(&ts.lock);
        return -rc;
}

static void thread_stop(struct session *s)
{
        if (!s->has_thread)
                return;
        atomic_store(&s->is_stop_requested, true);
        uint64_t one = 1;
        if (write(s->wake_fd, &one, sizeof(one)) < 0) {
                /* the flag alone stops the thread within its poll timeout */
        }
        pthread_join(s->thread, NULL);
        s->has_thread = false;
}

/* ---- statistics and the properties written back ------------------------------------------- */

/* The statistics now, from the writer and the live source. EventsLost is the source's exact
   count (PERF_FORMAT_LOST) plus the records the writer could not hold; a sequential file's
   BuffersWritten counts its header buffer, so that it is the file header's BuffersWritten (the
   files an UPDATE closed included). Called with s->lock held. */
static void session_get_stats(struct session *s, struct session_stats *st)
{
        if (s->is_ended) {
                *st = s->final;
                return;
        }
        memset(st, 0, sizeof(*st));
        struct etl_writer_stats ws;
        etl_writer_get_stats(s->writer, &ws);
        st->nr_buffers_written = ws.nr_buffers_written;
        st->nr_events_lost = ws.nr_events_dropped + s->nr_source_lost;
        if (s->source) {
                struct live_stats ls;
                live_source_get_stats(s->source, &ls);
                st->nr_events_lost = ws.nr_events_dropped + ls.nr_events_lost;
        }
        if (s->log_file_name && !s->is_circular_file) {
                /* on their way to the file (etl_writer_set_async) are not lost */
                uint64_t data_in_file =
                        (ws.nr_file_buffers ? ws.nr_file_buffers - 1 : 0) + ws.nr_buffers_in_flight;
                uint64_t for_file = ws.nr_buffers_written - s->nr_buffers_before_file;
                if (for_file > data_in_file)
                        st->nr_log_buffers_lost = for_file - data_in_file;
                st->nr_buffers_written = s->nr_written_before_file + ws.nr_file_buffers;
        }
        /* in use: each processor's current buffer, and the completed buffers still held (the
           longest real-time queue, or the ring); the pool is at least MinimumBuffers and at
           most MaximumBuffers, as Windows sizes it */
        uint32_t held = s->backlog.count;
        for (struct session_rt *rt = s->consumers; rt; rt = rt->next)
                if (rt->q.count > held)
                        held = rt->q.count;
        if (ws.nr_ring_buffers > held)
                held = ws.nr_ring_buffers;
        uint64_t in_use = (uint64_t)s->rt_info.nr_cpus + held;
        uint64_t pool = in_use > s->min_buffers ? in_use : s->min_buffers;
        if (pool > s->max_buffers)
                pool = s->max_buffers;
        st->nr_buffers = (uint32_t)pool;
        st->nr_free_buffers = in_use < pool ? (uint32_t)(pool - in_use) : 0;
}

static ULONG clamp_ulong(uint64_t v)
{
        return v > UINT32_MAX ? UINT32_MAX : (ULONG)v;
}

/* Copies str to the caller's buffer at offset; false when it does not fit. */
static bool put_name(EVENT_TRACE_PROPERTIES *p, ULONG offset, const char *str)
{
        size_t n = strlen(str) + 1;
        if (offset > p->Wnode.BufferSize || p->Wnode.BufferSize - offset < n)
                return false;
        memcpy((char *)p + offset, str, n);
        return true;
}

/* Fills the statistics and settings of Properties (QUERY, and after START/UPDATE/STOP/FLUSH),
   and the names at the offsets the caller set. Called with s->lock held. Returns
   ERROR_SUCCESS or ERROR_MORE_DATA when a name does not fit. */
static ULONG fill_properties(struct session *s, EVENT_TRACE_PROPERTIES *p)
{
        struct session_stats st;
        session_get_stats(s, &st);
        p->Wnode.HistoricalContext = s->handle;
        p->Wnode.Guid = s->guid;
        p->Wnode.ClientContext = s->client_context;
        p->Wnode.Flags |= WNODE_FLAG_TRACED_GUID;
        p->BufferSize = s->buffer_size_kb;
        p->MinimumBuffers = s->min_buffers;
        p->MaximumBuffers = s->max_buffers;
        p->MaximumFileSize = s->max_file_size;
        p->LogFileMode = s->log_file_mode;
        p->FlushTimer = s->flush_timer_s;
        p->EnableFlags = s->is_kernel ? s->cfg.masks.Masks[0] : 0;
        p->AgeLimit = s->age_limit;
        p->NumberOfBuffers = st.nr_buffers;
        p->FreeBuffers = st.nr_free_buffers;
        p->EventsLost = clamp_ulong(st.nr_events_lost);
        p->BuffersWritten = clamp_ulong(st.nr_buffers_written);
        p->LogBuffersLost = clamp_ulong(st.nr_log_buffers_lost);
        p->RealTimeBuffersLost = clamp_ulong(s->nr_rt_lost);
        p->LoggerThreadId = (HANDLE)(uintptr_t)s->tid;
        ULONG rc = ERROR_SUCCESS;
        ULONG name_end = 0;
        if (p->LoggerNameOffset) {
                if (!put_name(p, p->LoggerNameOffset, s->name))
                        rc = ERROR_MORE_DATA;
                else
                        name_end = p->LoggerNameOffset + (ULONG)strlen(s->name) + 1;
        }
        if (p->LogFileNameOffset) {
                bool is_overlap = p->LogFileNameOffset >= p->LoggerNameOffset &&
                                  p->LogFileNameOffset < name_end;
                if (is_overlap ||
                    !put_name(p, p->LogFileNameOffset, s->log_file_name ? s->log_file_name : ""))
                        rc = ERROR_MORE_DATA;
        }
        return rc;
}

/* ---- starting a session ------------------------------------------------------------------- */

/* A NUL-terminated string at offset inside the caller's buffer, or NULL. */
static const char *string_at(const EVENT_TRACE_PROPERTIES *p, ULONG offset)
{
        if (offset < sizeof(*p) || offset >= p->Wnode.BufferSize)
                return NULL;
        const char *str = (const char *)p + offset;
        if (!memchr(str, '\0', p->Wnode.BufferSize - offset))
                return NULL;
        return str;
}


/* Checks Properties for StartTrace as the documentation and seed 004 give it. Returns
   ERROR_SUCCESS with req filled, or the error (message set). */
/* MaximumBuffers as a session may have it: its buffers in memory at most
   SESSION_MAX_BUFFER_BYTES (as Windows adjusts MaximumBuffers to what it can give, and reports
   the value in force). */
static uint32_t max_buffers_cap(uint32_t max_buffers, uint32_t buffer_size_kb)
{
        size_t most =
                SESSION_MAX_BUFFER_BYTES / ((size_t)(buffer_size_kb ? buffer_size_kb : 1) << 10);
        return max_buffers > most ? (uint32_t)most : max_buffers;
}

static ULONG validate_start(CONTROLTRACE_ID *id, const char *name, EVENT_TRACE_PROPERTIES *p,
                            uint32_t extra_mode, struct session_start_request *req)
{
        if (!id || !p) {
                etw_set_error(ERROR_INVALID_PARAMETER, "StartTrace: %s is NULL",
                              !id ? "TraceId" : "Properties");
                return ERROR_INVALID_PARAMETER;
        }
        if (!name || !name[0]) {
                etw_set_error(ERROR_INVALID_PARAMETER, "StartTrace: InstanceName is empty");
                return ERROR_INVALID_PARAMETER;
        }
        size_t name_len = strlen(name);
        if (p->Wnode.BufferSize < sizeof(*p)) {
                etw_set_error(ERROR_BAD_LENGTH,
                              "StartTrace: Wnode.BufferSize %u is smaller than "
                              "EVENT_TRACE_PROPERTIES (%zu bytes)",
                              p->Wnode.BufferSize, sizeof(*p));
                return ERROR_BAD_LENGTH;
        }
        if (!(p->Wnode.Flags & WNODE_FLAG_TRACED_GUID)) {
                etw_set_error(ERROR_INVALID_PARAMETER,
                              "StartTrace: Wnode.Flags lacks WNODE_FLAG_TRACED_GUID");
                return ERROR_INVALID_PARAMETER;
        }
        if (p->LoggerNameOffset < sizeof(*p) || p->LoggerNameOffset >= p->Wnode.BufferSize) {
                etw_set_error(ERROR_INVALID_PARAMETER,
                              "StartTrace: LoggerNameOffset %u is not inside the buffer after "
                              "the structure (%zu..%u)",
                              p->LoggerNameOffset, sizeof(*p), p->Wnode.BufferSize);
                return ERROR_INVALID_PARAMETER;
        }
        if (p->Wnode.BufferSize - p->LoggerNameOffset < name_len + 1) {
                etw_set_error(ERROR_BAD_LENGTH,
                              "StartTrace: Wnode.BufferSize %u has no room for the session name "
                              "(%zu bytes at offset %u)",
                              p->Wnode.BufferSize, name_len + 1, p->LoggerNameOffset);
                return ERROR_BAD_LENGTH;
        }
        if (name_len > MAX_NAME_CHARS) {
                etw_set_error(ERROR_INVALID_PARAMETER,
                              "StartTrace: the session name is longer than %d characters",
                              MAX_NAME_CHARS);
                return ERROR_INVALID_PARAMETER;
        }
        const char *file = NULL;
        if (p->LogFileNameOffset) {
                if (p->LogFileNameOffset < sizeof(*p) ||
                    p->LogFileNameOffset >= p->Wnode.BufferSize) {
                        etw_set_error(ERROR_INVALID_PARAMETER,
                                      "StartTrace: LogFileNameOffset %u is not inside the buffer "
                                      "after the structure (%zu..%u)",
                                      p->LogFileNameOffset, sizeof(*p), p->Wnode.BufferSize);
                        return ERROR_INVALID_PARAMETER;
                }
                if (p->LogFileNameOffset < p->LoggerNameOffset + name_len + 1) {
                        etw_set_error(ERROR_INVALID_PARAMETER,
                                      "StartTrace: the log file name (offset %u) must follow the "
                                      "session name (offset %u, %zu bytes)",
                                      p->LogFileNameOffset, p->LoggerNameOffset, name_len + 1);
                        return ERROR_INVALID_PARAMETER;
                }
                file = string_at(p, p->LogFileNameOffset);
                if (!file) {
                        etw_set_error(ERROR_BAD_LENGTH,
                                      "StartTrace: the log file name at offset %u is not "
                                      "NUL-terminated inside Wnode.BufferSize %u",
                                      p->LogFileNameOffset, p->Wnode.BufferSize);
                        return ERROR_BAD_LENGTH;
                }
                if (!file[0])
                        file = NULL;
                else if (strlen(file) > MAX_NAME_CHARS) {
                        etw_set_error(ERROR_BAD_PATHNAME,
                                      "StartTrace: the log file name is longer than %d characters",
                                      MAX_NAME_CHARS);
                        return ERROR_BAD_PATHNAME;
                }
        }
        if (p->Wnode.ClientContext > EVENT_TRACE_CLOCK_CPUCYCLE) {
                etw_set_error(ERROR_INVALID_PARAMETER,
                              "StartTrace: Wnode.ClientContext %u is not a clock (0..3)",
                              p->Wnode.ClientContext);
                return ERROR_INVALID_PARAMETER;
        }

        uint32_t mode = p->LogFileMode | extra_mode;
        const char *why = NULL;
        if (mode & ~VALID_LOG_FILE_MODES)
                why = "unknown or reserved bits (EVENT_TRACE_RELOG_MODE is for the relogger)";
        else if ((mode & EVENT_TRACE_FILE_MODE_SEQUENTIAL) &&
                 (mode & (EVENT_TRACE_FILE_MODE_CIRCULAR | EVENT_TRACE_FILE_MODE_NEWFILE)))
                why = "EVENT_TRACE_FILE_MODE_SEQUENTIAL with CIRCULAR or NEWFILE";
        else if ((mode & EVENT_TRACE_FILE_MODE_CIRCULAR) &&
                 (mode & (EVENT_TRACE_FILE_MODE_APPEND | EVENT_TRACE_FILE_MODE_NEWFILE)))
                why = "EVENT_TRACE_FILE_MODE_CIRCULAR with APPEND or NEWFILE";
        else if ((mode & EVENT_TRACE_FILE_MODE_NEWFILE) && (mode & EVENT_TRACE_FILE_MODE_APPEND))
                why = "EVENT_TRACE_FILE_MODE_NEWFILE with APPEND";
        else if ((mode & EVENT_TRACE_FILE_MODE_APPEND) && (mode & EVENT_TRACE_PRIVATE_LOGGER_MODE))
                why = "EVENT_TRACE_FILE_MODE_APPEND with EVENT_TRACE_PRIVATE_LOGGER_MODE";
        else if ((mode & EVENT_TRACE_FILE_MODE_CIRCULAR) && !p->MaximumFileSize)
                why = "EVENT_TRACE_FILE_MODE_CIRCULAR needs MaximumFileSize";
        else if ((mode & EVENT_TRACE_FILE_MODE_NEWFILE) &&
                 (!p->MaximumFileSize || !file || !strstr(file, "%d")))
                why = "EVENT_TRACE_FILE_MODE_NEWFILE needs MaximumFileSize and a %d in the name";
        else if ((mode & EVENT_TRACE_FILE_MODE_PREALLOCATE) &&
                 (!p->MaximumFileSize || (mode & EVENT_TRACE_FILE_MODE_NEWFILE)))
                why = "EVENT_TRACE_FILE_MODE_PREALLOCATE needs MaximumFileSize, and not NEWFILE";
        else if ((mode & EVENT_TRACE_BUFFERING_MODE) &&
                 ((mode & (FILE_MODES | EVENT_TRACE_REAL_TIME_MODE)) || file))
                why = "EVENT_TRACE_BUFFERING_MODE with a log file or real-time mode";
        else if ((mode & EVENT_TRACE_PRIVATE_LOGGER_MODE) &&
                 (mode & EVENT_TRACE_SYSTEM_LOGGER_MODE))
                why = "EVENT_TRACE_PRIVATE_LOGGER_MODE with EVENT_TRACE_SYSTEM_LOGGER_MODE";
        else if (!file && ((mode & FILE_MODES) ||
                           !(mode & (EVENT_TRACE_REAL_TIME_MODE | EVENT_TRACE_BUFFERING_MODE))))
                why = "a file mode (or LogFileMode 0) needs a log file name";
        if (why) {
                etw_set_error(ERROR_INVALID_PARAMETER, "StartTrace: LogFileMode 0x%x: %s", mode,
                              why);
                return ERROR_INVALID_PARAMETER;
        }

        bool is_kernel_name = name_equal(name, KERNEL_LOGGER_NAMEA);
        if (IsEqualGUID(&p->Wnode.Guid, &SystemTraceControlGuid) && !is_kernel_name &&
            !(mode & EVENT_TRACE_SYSTEM_LOGGER_MODE)) {
                etw_set_error(ERROR_INVALID_PARAMETER,
                              "StartTrace: Wnode.Guid is SystemTraceControlGuid but the name is "
                              "not \"" KERNEL_LOGGER_NAMEA "\"");
                return ERROR_INVALID_PARAMETER;
        }
        bool is_kernel = is_kernel_name || (mode & EVENT_TRACE_SYSTEM_LOGGER_MODE);
        if (is_kernel && (p->EnableFlags & ~VALID_ENABLE_FLAGS)) {
                etw_set_error(ERROR_INVALID_FLAGS,
                              "StartTrace: EnableFlags 0x%08x has undefined bits 0x%08x%s",
                              p->EnableFlags, p->EnableFlags & ~VALID_ENABLE_FLAGS,
                              (p->EnableFlags & EVENT_TRACE_FLAG_EXTENSION)
                                      ? " (for group masks beyond EnableFlags use "
                                        "TraceSetInformation(TraceSystemTraceEnableFlagsInfo))"
                                      : "");
                return ERROR_INVALID_FLAGS;
        }

        const struct live_caps *c = machine_caps();
        memset(req, 0, sizeof(*req));
        req->name = name;
        req->file = file;
        req->guid = is_kernel_name ? SystemTraceControlGuid : p->Wnode.Guid;
        req->is_kernel = is_kernel;
        req->log_file_mode = mode;
        if (file && !(mode & FILE_MODES))
                req->log_file_mode |= EVENT_TRACE_FILE_MODE_SEQUENTIAL; /* seed 004 */
        req->client_context =
                p->Wnode.ClientContext ? p->Wnode.ClientContext : EVENT_TRACE_CLOCK_PERFCOUNTER;
        req->buffer_size_kb = p->BufferSize ? p->BufferSize : DEFAULT_BUFFER_KB;
        if (req->buffer_size_kb > MAX_BUFFER_KB)
                req->buffer_size_kb = MAX_BUFFER_KB;
        /* at least two buffers per processor, as Windows adjusts them */
        req->min_buffers = p->MinimumBuffers;
        if (req->min_buffers < 2 * c->nr_cpus)
                req->min_buffers = 2 * c->nr_cpus;
        req->max_buffers = p->MaximumBuffers;
        if (req->max_buffers == 0)
                req->max_buffers = req->min_buffers + 20;
        else if (req->max_buffers < req->min_buffers)
                req->max_buffers = req->min_buffers;
        req->max_buffers = max_buffers_cap(req->max_buffers, req->buffer_size_kb);
        if (req->min_buffers > req->max_buffers)
                req->min_buffers = req->max_buffers;
        req->max_file_size = p->MaximumFileSize;
        req->flush_timer_s = p->FlushTimer ? p->FlushTimer : DEFAULT_FLUSH_S;
        req->enable_flags = is_kernel ? p->EnableFlags : 0;
        req->age_limit = p->AgeLimit;
        return ERROR_SUCCESS;
}

/* Builds the session's writer, file, ring, source and thread. Returns 0, or a Win32 code in
 *code with the message in err. Called with the slot reserved (STARTING). */
static int session_open(struct session *s, const struct session_start_request *req, DWORD *code,
                        struct etl_error *err)
{
        const struct live_caps *c = machine_caps();
        struct utsname un;
        unsigned major = 0, minor = 0, patch = 0;
        if (uname(&un) == 0)
                sscanf(un.release, "%u.%u.%u", &major, &minor, &patch);
        int64_t m0 = clock_ns(CLOCK_MONOTONIC);
        int64_t real = clock_ns(CLOCK_REALTIME);
        int64_t m1 = clock_ns(CLOCK_MONOTONIC);
        int64_t boot = clock_ns(CLOCK_BOOTTIME);
        uint64_t mono = (uint64_t)(m0 + (m1 - m0) / 2);

        s->rt_info = (struct session_rt_info){
                .start_timestamp = mono,
                .start_filetime = FILETIME_UNIX_EPOCH + real / 100,
                .boot_filetime = FILETIME_UNIX_EPOCH + (real - boot) / 100,
                .perf_freq = 1000000000ull, /* DESIGN.md: CLOCK_MONOTONIC ns as QPC ticks */
                .clock_type = EVENT_TRACE_CLOCK_PERFCOUNTER,
                .buffer_size_bytes = req->buffer_size_kb * 1024,
                .nr_cpus = c->nr_cpus,
                .log_file_mode = req->log_file_mode,
                .is_kernel = req->is_kernel,
        };
        struct etl_writer_config cfg = {
                .buffer_size_bytes = s->rt_info.buffer_size_bytes,
                .nr_cpus = c->nr_cpus,
                /* a kernel logger's file says so, as the system loggers' files do */
                .log_file_mode = (req->log_file_mode & ~EVENT_TRACE_COMPRESSED_MODE) |
                                 (req->is_kernel ? EVENT_TRACE_SYSTEM_LOGGER_MODE : 0),
                .logger_id = (uint16_t)(s->slot + 1),
                .logger_name = req->name,
                .log_file_name = req->file,
                .start_timestamp = mono,
                .start_filetime = s->rt_info.start_filetime,
                .boot_filetime = s->rt_info.boot_filetime,
                .perf_freq = s->rt_info.perf_freq,
                .clock_type = EVENT_TRACE_CLOCK_PERFCOUNTER,
                .os_major = (uint8_t)major,
                .os_minor = (uint8_t)minor,
                .provider_version = patch,
                .timer_resolution_100ns = c->timer_resolution_100ns,
                .cpu_speed_mhz = cpu_speed_mhz,
                .maximum_file_size_mb = (req->log_file_mode & EVENT_TRACE_USE_KBYTES_FOR_SIZE)
                                                ? (req->max_file_size + 1023) / 1024
                                                : req->max_file_size,
                .header_tid = (uint32_t)syscall(SYS_gettid),
                .header_pid = (uint32_t)getpid(),
        };
        uint64_t unit = (req->log_file_mode & EVENT_TRACE_USE_KBYTES_FOR_SIZE) ? 1024 : 1 << 20;
        if (!(req->log_file_mode & EVENT_TRACE_FILE_MODE_CIRCULAR))
                cfg.max_file_bytes = s->max_file_bytes = req->max_file_size * unit;
        int rc = etl_writer_new(&s->writer, &cfg);
        if (rc < 0) {
                *code = rc == -ENOMEM ? ERROR_NOT_ENOUGH_MEMORY : ERROR_INVALID_PARAMETER;
                snprintf(err->msg, sizeof(err->msg),
                         "the writer refused BufferSize %u KB or the names (%s)",
                         req->buffer_size_kb, strerror(-rc));
                return rc;
        }
        if (req->log_file_mode & EVENT_TRACE_BUFFERING_MODE) {
                rc = etl_writer_set_ring(s->writer,
                                         (size_t)req->max_buffers * s->rt_info.buffer_size_bytes);
        } else if (req->log_file_mode & EVENT_TRACE_FILE_MODE_CIRCULAR) {
                uint64_t bytes = req->max_file_size * unit;
                bytes = bytes > s->rt_info.buffer_size_bytes ? bytes - s->rt_info.buffer_size_bytes
                                                             : s->rt_info.buffer_size_bytes;
                rc = etl_writer_set_ring(s->writer, (size_t)bytes);
        }
        if (rc < 0) {
                *code = ERROR_NOT_ENOUGH_MEMORY;
                snprintf(err->msg, sizeof(err->msg), "no memory for the in-memory ring");
                return rc;
        }
        if (req->file) {
                if (req->log_file_mode & EVENT_TRACE_FILE_MODE_CIRCULAR) {
                        rc = log_file_reserve(&s->circular, req->file, false, err);
                        s->is_circular_file = rc == 0;
                } else {
                        rc = etl_writer_open_file(s->writer, req->file, false, err);
                        if (rc == 0)
                                file_async(s, req->max_buffers);
                }
                if (rc < 0) {
                        *code = file_error_code(rc);
                        if (rc == -EEXIST && (req->log_file_mode & EVENT_TRACE_FILE_MODE_APPEND)) {
                                *code = ERROR_NOT_SUPPORTED;
                                snprintf(err->msg, sizeof(err->msg),
                                         "%s exists: appending to an existing .etl is not "
                                         "supported (EVENT_TRACE_FILE_MODE_APPEND)",
                                         req->file);
                        }
                        return rc;
                }
                s->log_file_name = strdup(req->file);
                if (!s->log_file_name) {
                        *code = ERROR_NOT_ENOUGH_MEMORY;
                        snprintf(err->msg, sizeof(err->msg), "out of memory");
                        return -ENOMEM;
                }
        }
        if (req->log_file_mode & EVENT_TRACE_REAL_TIME_MODE) {
                rc = rt_queue_init(&s->backlog, req->max_buffers, s->rt_info.buffer_size_bytes);
                if (rc < 0) {
                        *code = ERROR_NOT_ENOUGH_MEMORY;
                        snprintf(err->msg, sizeof(err->msg), "out of memory");
                        return rc;
                }
                etl_writer_set_buffer_callback(s->writer, rt_on_buffer, s);
        }
        if (req->is_kernel) {
                rc = check_hardware(&s->cfg, err);
                if (rc == 0) {
                        struct live_settings eff;
                        effective_settings(&s->cfg, &eff);
                        pthread_mutex_lock(&s->lock);
                        rc = live_source_open(&s->source, &eff, s->writer, err);
                        pthread_mutex_unlock(&s->lock);
                }
                if (rc < 0) {
                        *code = live_error_code(rc);
                        s->source = NULL;
                        return rc;
                }
        }
        s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (s->wake_fd < 0 || (rc = thread_start(s)) < 0) {
                rc = s->wake_fd < 0 ? -errno : rc;
                *code = ERROR_NO_SYSTEM_RESOURCES;
                snprintf(err->msg, sizeof(err->msg), "cannot start the logger thread: %s",
                         strerror(-rc));
                return rc;
        }
        return 0;
}

/* Undoes what session_open built, for a start that failed: nothing is left on disk. */
static void session_abort(struct session *s)
{
        thread_stop(s);
        live_source_close(s->source);
        s->source = NULL;
        if (s->is_circular_file) {
                log_file_unreserve(&s->circular); /* the name, when it is still the file made */
        } else if (s->writer && s->log_file_name) {
                etl_writer_remove_file(s->writer);
        }
}

static ULONG local_start(CONTROLTRACE_ID *id, EVENT_TRACE_PROPERTIES *p,
                         const struct session_start_request *req,
                         const struct session_start_defaults *d)
{
        *id = 0;
        struct session *s = calloc(1, sizeof(*s));
        if (!s) {
                etw_set_error(ERROR_NOT_ENOUGH_MEMORY, "StartTrace: out of memory");
                return ERROR_NOT_ENOUGH_MEMORY;
        }
        s->wake_fd = -1;
        s->circular = (struct log_file_reserved)LOG_FILE_RESERVED_INIT;
        pthread_mutex_init(&s->lock, NULL);
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&s->rt_cond, &ca);
        pthread_condattr_destroy(&ca);
        s->name = strdup(req->name);
        if (!s->name) {
                session_free(s);
                etw_set_error(ERROR_NOT_ENOUGH_MEMORY, "StartTrace: out of memory");
                return ERROR_NOT_ENOUGH_MEMORY;
        }
        s->guid = req->guid;
        if (guid_is_zero(&s->guid) && getrandom(&s->guid, sizeof(s->guid), 0) == sizeof(s->guid)) {
                s->guid.Data3 = (USHORT)((s->guid.Data3 & 0x0FFF) | 0x4000); /* version 4 */
                s->guid.Data4[0] = (UCHAR)((s->guid.Data4[0] & 0x3F) | 0x80);
        }
        s->is_kernel = req->is_kernel;
        s->log_file_mode = req->log_file_mode;
        s->client_context = req->client_context;
        s->buffer_size_kb = req->buffer_size_kb;
        s->min_buffers = req->min_buffers;
        s->max_buffers = req->max_buffers;
        s->max_file_size = req->max_file_size;
        s->flush_timer_s = req->flush_timer_s;
        s->age_limit = req->age_limit;
        s->cfg.pid = -1;
        set_enable_flags(&s->cfg.masks, req->enable_flags);

        /* reserve the name, check the other sessions, take the global profile settings; a
           session of the same name that is stopping (its file being finalized: a STOP from
           another thread, or a bound session whose starter ended) frees its name soon */
        struct timespec stopping_deadline;
        clock_gettime(CLOCK_REALTIME, &stopping_deadline);
        stopping_deadline.tv_sec += STOPPING_WAIT_S;
        pthread_mutex_lock(&table_lock);
        ULONG code;
        int free_slot;
again:
        code = ERROR_SUCCESS;
        free_slot = -1;
        for (int i = 0; i < MAX_SESSIONS; i++) {
                struct session *o = table[i];
                if (!o) {
                        if (free_slot < 0)
                                free_slot = i;
                        continue;
                }
                if (name_equal(o->name, req->name) ||
                    (!guid_is_zero(&req->guid) && IsEqualGUID(&o->guid, &req->guid))) {
                        if (o->state == SESSION_STOPPING &&
                            pthread_cond_timedwait(&left_cond, &table_lock, &stopping_deadline) !=
                                    ETIMEDOUT)
                                goto again;
                        code = ERROR_ALREADY_EXISTS;
                        etw_set_error(code, "StartTrace: a session named \"%s\"%s is running",
                                      o->name,
                                      name_equal(o->name, req->name) ? "" : " (same GUID)");
                        break;
                }
                if (req->file && o->log_file_name && strcmp(o->log_file_name, req->file) == 0) {
                        code = ERROR_BAD_PATHNAME;
                        etw_set_error(code, "StartTrace: session \"%s\" already writes %s", o->name,
                                      req->file);
                        break;
                }
        }
        if (code == ERROR_SUCCESS && free_slot < 0) {
                code = ERROR_NO_SYSTEM_RESOURCES;
                etw_set_error(code, "StartTrace: %d sessions are running already", MAX_SESSIONS);
        }
        if (code != ERROR_SUCCESS) {
                pthread_mutex_unlock(&table_lock);
                session_free(s);
                return code;
        }
        s->slot = (uint32_t)free_slot;
        s->handle = ((uint64_t)++generations[free_slot] << 32) | (uint64_t)(free_slot + 1);
        s->state = SESSION_STARTING;
        /* the table's, and this start's until it has filled Properties: a logger whose file
           fails at once ends its session itself, and dropped the last one under our feet */
        s->nr_refs = 2;
        table[free_slot] = s;
        if (s->is_kernel) {
                uint32_t nr_sources = d ? d->nr_sources : nr_pending_sources;
                const uint32_t *sources = d ? d->sources : pending_sources;
                s->cfg.pid = d ? d->pid : pending_pid;
                s->cfg.profile_interval_100ns = interval_of(ProfileTime);
                s->cfg.nr_profile_sources = nr_sources;
                for (uint32_t i = 0; i < nr_sources; i++) {
                        s->cfg.profile_sources[i] = sources[i];
                        s->cfg.source_intervals[i] = interval_of(sources[i]);
                }
        }
        pthread_mutex_unlock(&table_lock);

        if (req->nr_stack_ids) {
                for (uint32_t i = 0; i < req->nr_stack_ids; i++) {
                        int hook = hook_of_event(&req->stack_ids[i]);
                        if (hook >= 0 && hook_is_enabled((uint16_t)hook, &s->cfg.masks) &&
                            s->cfg.nr_stack_hooks < LIVE_MAX_STACK_HOOKS)
                                s->cfg.stack_hooks[s->cfg.nr_stack_hooks++] = (uint16_t)hook;
                }
        }

        struct etl_error err = {0};
        DWORD open_code = ERROR_SUCCESS;
        int rc = session_open(s, req, &open_code, &err);
        pthread_mutex_lock(&table_lock);
        if (rc < 0) {
                table[s->slot] = NULL;
                pthread_cond_broadcast(&left_cond);
                pthread_mutex_unlock(&table_lock);
                session_abort(s);
                session_free(s);
                etw_set_error(open_code, "StartTrace: %s", err.msg);
                return open_code;
        }
        s->state = SESSION_RUNNING;
        pthread_mutex_unlock(&table_lock);

        pthread_mutex_lock(&s->lock);
        fill_properties(s, p);
        pthread_mutex_unlock(&s->lock);
        /* the name goes where LoggerNameOffset says (validated to fit) */
        memcpy((char *)p + p->LoggerNameOffset, s->name, strlen(s->name) + 1);
        *id = s->handle;
        session_unref(s);
        etw_set_error(ERROR_SUCCESS, NULL);
        return ERROR_SUCCESS;
}

ULONG session_check_start_trace(CONTROLTRACE_ID *TraceId, const char *InstanceName,
                                EVENT_TRACE_PROPERTIES *Properties,
                                struct session_start_request *req)
{
        ULONG code = validate_start(TraceId, InstanceName, Properties, 0, req);
        if (code != ERROR_SUCCESS)
                return code;
        if (req->log_file_mode & EVENT_TRACE_FILE_MODE_NEWFILE) {
                etw_set_error(ERROR_NOT_SUPPORTED,
                              "StartTrace: EVENT_TRACE_FILE_MODE_NEWFILE: switching to a new "
                              "file under a running session is not supported; use "
                              "EVENT_TRACE_FILE_MODE_SEQUENTIAL");
                return ERROR_NOT_SUPPORTED;
        }
        return ERROR_SUCCESS;
}

ULONG session_check_kernel_trace(CONTROLTRACE_ID *TraceHandle, EVENT_TRACE_PROPERTIES *Properties,
                                 const CLASSIC_EVENT_ID *StackTracingEventIds,
                                 ULONG cStackTracingEventIds,
                                 char name_copy[SESSION_MAX_NAME_CHARS + 1],
                                 struct session_start_request *req)
{
        if (!TraceHandle || !Properties) {
                etw_set_error(ERROR_INVALID_PARAMETER, "StartKernelTrace: %s is NULL",
                              !TraceHandle ? "TraceHandle" : "Properties");
                return ERROR_INVALID_PARAMETER;
        }
        if (cStackTracingEventIds && !StackTracingEventIds) {
                etw_set_error(ERROR_INVALID_PARAMETER,
                              "StartKernelTrace: %u stack ids but StackTracingEventIds is NULL",
                              cStackTracingEventIds);
                return ERROR_INVALID_PARAMETER;
        }
        if (cStackTracingEventIds > LIVE_MAX_STACK_HOOKS) {
                etw_set_error(ERROR_INVALID_PARAMETER, "StartKernelTrace: %u stack ids, at most %d",
                              cStackTracingEventIds, LIVE_MAX_STACK_HOOKS);
                return ERROR_INVALID_PARAMETER;
        }
        const char *name = KERNEL_LOGGER_NAMEA;
        bool is_rundown = IsEqualGUID(&Properties->Wnode.Guid, &KernelRundownGuid);
        if (!is_rundown && !IsEqualGUID(&Properties->Wnode.Guid, &SystemTraceControlGuid)) {
                etw_set_error(ERROR_INVALID_PARAMETER,
                              "StartKernelTrace: Wnode.Guid must be SystemTraceControlGuid (or "
                              "KernelRundownGuid with a logger name)");
                return ERROR_INVALID_PARAMETER;
        }
        if (Properties->Wnode.BufferSize < sizeof(*Properties)) {
                etw_set_error(ERROR_BAD_LENGTH,
                              "StartKernelTrace: Wnode.BufferSize %u is smaller than "
                              "EVENT_TRACE_PROPERTIES",
                              Properties->Wnode.BufferSize);
                return ERROR_BAD_LENGTH;
        }
        if (is_rundown) {
                name = string_at(Properties, Properties->LoggerNameOffset);
                if (!name || !name[0]) {
                        etw_set_error(ERROR_INVALID_PARAMETER,
                                      "StartKernelTrace: KernelRundownGuid needs a logger name at "
                                      "LoggerNameOffset");
                        return ERROR_INVALID_PARAMETER;
                }
        }
        if (Properties->EnableFlags & ~VALID_ENABLE_FLAGS) {
                etw_set_error(ERROR_INVALID_FLAGS,
                              "StartKernelTrace: EnableFlags 0x%08x has undefined bits 0x%08x",
                              Properties->EnableFlags,
                              Properties->EnableFlags & ~VALID_ENABLE_FLAGS);
                return ERROR_INVALID_FLAGS;
        }
        /* The name is copied to LoggerNameOffset: work on a copy of the name in case it is the
           caller's own string there. */
        snprintf(name_copy, SESSION_MAX_NAME_CHARS + 1, "%s", name);
        /* a rundown logger is a system logger of its own name */
        ULONG code = validate_start(TraceHandle, name_copy, Properties,
                                    is_rundown ? EVENT_TRACE_SYSTEM_LOGGER_MODE : 0, req);
        if (code != ERROR_SUCCESS)
                return code;
        if (is_rundown)
                req->guid = KernelRundownGuid;
        req->stack_ids = StackTracingEventIds;
        req->nr_stack_ids = cStackTracingEventIds;
        req->is_kernel_trace = true;
        if (req->log_file_mode & EVENT_TRACE_FILE_MODE_NEWFILE) {
                etw_set_error(ERROR_NOT_SUPPORTED,
                              "StartKernelTrace: EVENT_TRACE_FILE_MODE_NEWFILE is not supported");
                return ERROR_NOT_SUPPORTED;
        }
        return ERROR_SUCCESS;
}

/* ---- ControlTrace ------------------------------------------------------------------------- */

/* Applies next to the session and its running source. Called with s->lock held. Returns 0 or
   -errno with err filled; on failure the old settings stay. */
static int apply_settings(struct session *s, const struct live_settings *next,
                          struct etl_error *err)
{
        if (s->source) {
                int rc = check_hardware(next, err);
                if (rc < 0)
                        return rc;
                struct live_settings eff;
                effective_settings(next, &eff);
                rc = live_source_update(s->source, &eff, err);
                if (rc < 0)
                        return rc;
        }
        s->cfg = *next;
        return 0;
}

/* Marks s STOPPING for the caller, the one stop it gets: a controller's STOP (why NULL), or
   the logger thread ending the session because of why, which then holds a reference of its
   own; from now on the calls that name the handle say why. False when the session is not
   RUNNING (a stop under way, a start not finished). */
static bool session_claim_stop(struct session *s, const char *why)
{
        pthread_mutex_lock(&table_lock);
        bool is_mine = s->state == SESSION_RUNNING;
        if (is_mine) {
                s->state = SESSION_STOPPING;
                if (why) {
                        s->nr_refs++;
                        ended[s->slot].handle = s->handle;
                        ended[s->slot].is_done = false;
                        snprintf(ended[s->slot].why, sizeof(ended[s->slot].why), "%s", why);
                }
        }
        pthread_mutex_unlock(&table_lock);
        return is_mine;
}

/* Ends a claimed session whose logger thread has stopped: closes the source, finalizes the
   file, fills p (when not NULL) and leaves the table. Returns ERROR_SUCCESS, the file's error,
   or ERROR_MORE_DATA. */
static ULONG session_end(struct session *s, EVENT_TRACE_PROPERTIES *p)
{
        pthread_mutex_lock(&s->lock);
        s->is_ending = true;
        if (s->source) {
                /* nothing drains the rings since the thread stopped: empty them, then keep the
                   exact lost count, which a closed source cannot give */
                drain_source(s, true);
                struct live_stats ls;
                live_source_get_stats(s->source, &ls);
                s->nr_source_lost = ls.nr_events_lost;
        }
        live_source_close(s->source);
        s->source = NULL;
        struct session_stats st;
        session_get_stats(s, &st);
        int64_t end = filetime_now();
        int rc = etl_writer_close(s->writer, end, clamp_ulong(st.nr_events_lost),
                                  clamp_ulong(st.nr_log_buffers_lost));
        /* the close completed the last buffers: BuffersWritten is now the file header's */
        session_get_stats(s, &st);
        struct etl_error err = {0};
        if (s->is_circular_file) {
                /* through the descriptor of the file made at start: never to what the path
                   names now when that is another file */
                rc = etl_writer_save_ring_fd(s->writer, s->circular.fd, s->log_file_name, end,
                                             &err);
                if (rc == 0 && log_file_reserved_check(&s->circular, s->log_file_name) < 0) {
                        rc = -ENOENT;
                        snprintf(err.msg, sizeof(err.msg),
                                 "%s no longer names the file created at start (it was moved "
                                 "or replaced): the trace went to that file, nothing else was "
                                 "written",
                                 s->log_file_name);
                }
                log_file_release(&s->circular);
        }
        if (rc < 0 && s->log_file_name && !(s->is_circular_file && rc == -ENOSPC))
                st.nr_log_buffers_lost = st.nr_buffers_written;
        s->final = st;
        s->final.nr_free_buffers = st.nr_buffers; /* every buffer flushed */
        s->is_ended = true;
        etl_writer_free(s->writer);
        s->writer = NULL;
        pthread_cond_broadcast(&s->rt_cond);
        ULONG code = p ? fill_properties(s, p) : ERROR_SUCCESS;
        pthread_mutex_unlock(&s->lock);

        pthread_mutex_lock(&table_lock);
        table[s->slot] = NULL;
        pthread_cond_broadcast(&left_cond);
        s->nr_refs--; /* the table's; the caller still holds one */
        pthread_mutex_unlock(&table_lock);
        if (rc < 0 && s->log_file_name) {
                if (code == ERROR_SUCCESS)
                        code = etw_error_from_errno(rc);
                etw_set_error(code,
                              "ControlTrace(STOP): the session stopped, but writing %s "
                              "failed: %s",
                              s->log_file_name, err.msg[0] ? err.msg : strerror(-rc));
        } else if (code == ERROR_MORE_DATA)
                etw_set_error(code, "ControlTrace(STOP): the session stopped; the names do not "
                                    "fit in Properties");
        else
                etw_set_error(ERROR_SUCCESS, NULL);
        return code;
}

static ULONG stop_session(struct session *s, EVENT_TRACE_PROPERTIES *p)
{
        thread_stop(s);
        return session_end(s, p);
}

/* The logger thread ends its own session, claimed, after its log file failed: nobody will
   join the thread, and the reference the claim took is dropped last. */
static void session_end_itself(struct session *s)
{
        pthread_detach(pthread_self());
        s->has_thread = false;
        atomic_store(&s->is_stop_requested, true);
        session_end(s, NULL);
        pthread_mutex_lock(&table_lock);
        if (ended[s->slot].handle == s->handle)
                ended[s->slot].is_done = true;
        pthread_cond_broadcast(&ended_cond);
        pthread_mutex_unlock(&table_lock);
        session_unref(s);
}

/* The error of a call that found no running session with handle id: ERROR_WMI_INSTANCE_NOT_FOUND,
   saying why the session stopped when it stopped itself (once its file is finalized). what
   names the call. */
static ULONG not_found(const char *what, CONTROLTRACE_ID id)
{
        char why[sizeof(ended[0].why)] = "";
        uint32_t low = (uint32_t)id;
        pthread_mutex_lock(&table_lock);
        if (id && low >= 1 && low <= MAX_SESSIONS) {
                while (ended[low - 1].handle == id && !ended[low - 1].is_done)
                        pthread_cond_wait(&ended_cond, &table_lock);
                if (ended[low - 1].handle == id)
                        memcpy(why, ended[low - 1].why, sizeof(why));
        }
        pthread_mutex_unlock(&table_lock);
        if (why[0])
                etw_set_error(ERROR_WMI_INSTANCE_NOT_FOUND, "%s: the session stopped itself: %s",
                              what, why);
        else
                etw_set_error(ERROR_WMI_INSTANCE_NOT_FOUND, "%s: no session has handle 0x%llx",
                              what, (unsigned long long)id);
        return ERROR_WMI_INSTANCE_NOT_FOUND;
}

/* UPDATE (ControlTrace documentation): EnableFlags of a kernel logger, FlushTimer and
   MaximumBuffers when nonzero, and a new log file name for a sequential file session. Called
   with s->lock held. */
static ULONG update_session(struct session *s, const EVENT_TRACE_PROPERTIES *p,
                            const char *new_file)
{
        struct etl_error err = {0};
        if (s->is_kernel && p->EnableFlags != s->cfg.masks.Masks[0]) {
                if (p->EnableFlags & ~VALID_ENABLE_FLAGS) {
                        etw_set_error(ERROR_INVALID_FLAGS,
                                      "ControlTrace(UPDATE): EnableFlags 0x%08x has undefined "
                                      "bits 0x%08x",
                                      p->EnableFlags, p->EnableFlags & ~VALID_ENABLE_FLAGS);
                        return ERROR_INVALID_FLAGS;
                }
                struct live_settings next = s->cfg;
                set_enable_flags(&next.masks, p->EnableFlags);
                int rc = apply_settings(s, &next, &err);
                if (rc < 0) {
                        DWORD code = live_error_code(rc);
                        etw_set_error(code, "ControlTrace(UPDATE): %s", err.msg);
                        return code;
                }
        }
        if (new_file && new_file[0] &&
            (!s->log_file_name || strcmp(new_file, s->log_file_name) != 0)) {
                if (!s->log_file_name || s->is_circular_file) {
                        etw_set_error(ERROR_INVALID_PARAMETER,
                                      "ControlTrace(UPDATE): only a sequential file session can "
                                      "switch to a new log file");
                        return ERROR_INVALID_PARAMETER;
                }
                char *copy = strdup(new_file);
                if (!copy) {
                        etw_set_error(ERROR_NOT_ENOUGH_MEMORY, "ControlTrace(UPDATE): no memory");
                        return ERROR_NOT_ENOUGH_MEMORY;
                }
                /* refuse an existing name before the old file is closed */
                struct stat st;
                if (lstat(new_file, &st) == 0) {
                        free(copy);
                        etw_set_error(ERROR_FILE_EXISTS,
                                      "ControlTrace(UPDATE): %s exists: not overwritten", new_file);
                        return ERROR_FILE_EXISTS;
                }
                struct session_stats ss;
                session_get_stats(s, &ss);
                etl_writer_close(s->writer, filetime_now(), clamp_ulong(ss.nr_events_lost),
                                 clamp_ulong(ss.nr_log_buffers_lost));
                struct etl_writer_stats old;
                etl_writer_get_stats(s->writer, &old);
                s->nr_written_before_file += old.nr_file_buffers;
                int rc = etl_writer_open_file(s->writer, new_file, false, &err);
                if (rc == 0)
                        file_async(s, s->max_buffers);
                if (rc < 0) {
                        free(copy);
                        free(s->log_file_name);
                        s->log_file_name = NULL;
                        DWORD code = file_error_code(rc);
                        etw_set_error(code,
                                      "ControlTrace(UPDATE): the old file is closed; the new "
                                      "one failed: %s",
                                      err.msg);
                        return code;
                }
                free(s->log_file_name);
                s->log_file_name = copy;
                struct etl_writer_stats ws;
                etl_writer_get_stats(s->writer, &ws);
                s->nr_buffers_before_file = ws.nr_buffers_written;
        }
        if (p->FlushTimer)
                s->flush_timer_s = p->FlushTimer;
        if (p->MaximumBuffers)
                s->max_buffers = max_buffers_cap(
                        p->MaximumBuffers < s->min_buffers ? s->min_buffers : p->MaximumBuffers,
                        s->buffer_size_kb);
        return ERROR_SUCCESS;
}

static const char *const control_ops[] = {"QUERY", "STOP", "UPDATE", "FLUSH"};

ULONG session_check_control(CONTROLTRACE_ID TraceId, const char *InstanceName,
                            const EVENT_TRACE_PROPERTIES *Properties, ULONG ControlCode,
                            char new_file[SESSION_MAX_NAME_CHARS + 1])
{
        const char *const *ops = control_ops;
        new_file[0] = '\0';
        if (ControlCode == EVENT_TRACE_CONTROL_INCREMENT_FILE ||
            ControlCode == EVENT_TRACE_CONTROL_CONVERT_TO_REALTIME) {
                etw_set_error(ERROR_NOT_SUPPORTED, "ControlTrace: control code %u is not supported",
                              ControlCode);
                return ERROR_NOT_SUPPORTED;
        }
        if (ControlCode > EVENT_TRACE_CONTROL_FLUSH) {
                etw_set_error(ERROR_INVALID_PARAMETER, "ControlTrace: unknown control code %u",
                              ControlCode);
                return ERROR_INVALID_PARAMETER;
        }
        const char *op = ops[ControlCode];
        if (!Properties) {
                etw_set_error(ERROR_INVALID_PARAMETER, "ControlTrace(%s): Properties is NULL", op);
                return ERROR_INVALID_PARAMETER;
        }
        if (!TraceId && (!InstanceName || !InstanceName[0])) {
                etw_set_error(ERROR_INVALID_PARAMETER,
                              "ControlTrace(%s): neither TraceId nor InstanceName is given", op);
                return ERROR_INVALID_PARAMETER;
        }
        if (Properties->Wnode.BufferSize < sizeof(*Properties)) {
                etw_set_error(ERROR_BAD_LENGTH,
                              "ControlTrace(%s): Wnode.BufferSize %u is smaller than "
                              "EVENT_TRACE_PROPERTIES (%zu bytes)",
                              op, Properties->Wnode.BufferSize, sizeof(*Properties));
                return ERROR_BAD_LENGTH;
        }
        ULONG offsets[2] = {Properties->LoggerNameOffset, Properties->LogFileNameOffset};
        for (int i = 0; i < 2; i++) {
                if (offsets[i] && (offsets[i] < sizeof(*Properties) ||
                                   offsets[i] >= Properties->Wnode.BufferSize)) {
                        etw_set_error(ERROR_INVALID_PARAMETER,
                                      "ControlTrace(%s): %s %u is not inside the buffer after the "
                                      "structure",
                                      op, i ? "LogFileNameOffset" : "LoggerNameOffset", offsets[i]);
                        return ERROR_INVALID_PARAMETER;
                }
        }
        /* UPDATE reads a new log file name before the names are written back */
        if (ControlCode == EVENT_TRACE_CONTROL_UPDATE && Properties->LogFileNameOffset) {
                const char *f = string_at(Properties, Properties->LogFileNameOffset);
                if (!f) {
                        etw_set_error(ERROR_BAD_LENGTH,
                                      "ControlTrace(UPDATE): the log file name is not "
                                      "NUL-terminated inside Wnode.BufferSize");
                        return ERROR_BAD_LENGTH;
                }
                if (strlen(f) > MAX_NAME_CHARS) {
                        etw_set_error(ERROR_BAD_PATHNAME,
                                      "ControlTrace(UPDATE): the log file name is too long");
                        return ERROR_BAD_PATHNAME;
                }
                snprintf(new_file, SESSION_MAX_NAME_CHARS + 1, "%s", f);
        }
        return ERROR_SUCCESS;
}

static ULONG local_control(CONTROLTRACE_ID TraceId, const char *InstanceName,
                           PEVENT_TRACE_PROPERTIES Properties, ULONG ControlCode,
                           const char *new_file)
{
        const char *op = control_ops[ControlCode];
        struct session *s = session_find(TraceId, TraceId ? NULL : InstanceName);
        if (!s) {
                char what[32];
                snprintf(what, sizeof(what), "ControlTrace(%s)", op);
                if (TraceId)
                        return not_found(what, TraceId);
                etw_set_error(ERROR_WMI_INSTANCE_NOT_FOUND,
                              "ControlTrace(%s): no session named \"%s\" is running", op,
                              InstanceName);
                return ERROR_WMI_INSTANCE_NOT_FOUND;
        }
        ULONG code = ERROR_SUCCESS;
        if (ControlCode == EVENT_TRACE_CONTROL_STOP) {
                if (!session_claim_stop(s, NULL)) {
                        session_unref(s);
                        etw_set_error(ERROR_WMI_INSTANCE_NOT_FOUND,
                                      "ControlTrace(STOP): the session is already stopping");
                        return ERROR_WMI_INSTANCE_NOT_FOUND;
                }
                code = stop_session(s, Properties);
                session_unref(s);
                return code;
        }
        pthread_mutex_lock(&s->lock);
        if (ControlCode == EVENT_TRACE_CONTROL_UPDATE)
                code = update_session(s, Properties, new_file ? new_file : "");
        else if (ControlCode == EVENT_TRACE_CONTROL_FLUSH && s->writer) {
                drain_source(s, true);
                etl_writer_flush(s->writer);
                pthread_cond_broadcast(&s->rt_cond);
        }
        if (code == ERROR_SUCCESS) {
                code = fill_properties(s, Properties);
                if (code == ERROR_MORE_DATA)
                        etw_set_error(code,
                                      "ControlTrace(%s): the names do not fit in "
                                      "Properties (Wnode.BufferSize %u)",
                                      op, Properties->Wnode.BufferSize);
                else
                        etw_set_error(ERROR_SUCCESS, NULL);
        }
        pthread_mutex_unlock(&s->lock);
        session_unref(s);
        return code;
}

/* ---- TraceSetInformation ------------------------------------------------------------------ */

static const char *class_name(TRACE_INFO_CLASS c)
{
        if (c == ETWTOP_TRACE_PROCESS_INFO)
                return "ETWTOP_TRACE_PROCESS_INFO";
        if (c == ETWTOP_TRACE_CONSUMERS_INFO)
                return "ETWTOP_TRACE_CONSUMERS_INFO";
        if (c == ETWTOP_TRACE_STACKWALK_INFO)
                return "ETWTOP_TRACE_STACKWALK_INFO";
        switch (c) {
        case TraceStackTracingInfo: return "TraceStackTracingInfo";
        case TraceSystemTraceEnableFlagsInfo: return "TraceSystemTraceEnableFlagsInfo";
        case TraceSampledProfileIntervalInfo: return "TraceSampledProfileIntervalInfo";
        case TraceProfileSourceConfigInfo: return "TraceProfileSourceConfigInfo";
        case TraceProfileSourceListInfo: return "TraceProfileSourceListInfo";
        case TracePmcEventListInfo: return "TracePmcEventListInfo";
        case TracePmcCounterListInfo: return "TracePmcCounterListInfo";
        case TraceVersionInfo: return "TraceVersionInfo";
        case TraceMaxLoggersQuery: return "TraceMaxLoggersQuery";
        case TraceLbrConfigurationInfo: return "TraceLbrConfigurationInfo";
        case TraceLbrEventListInfo: return "TraceLbrEventListInfo";
        case TraceMaxPmcCounterQuery: return "TraceMaxPmcCounterQuery";
        default: return "this class";
        }
}

/* Checks an array of CLASSIC_EVENT_IDs (seed 003): whole structures, at most max, and an empty
   buffer only with a NULL address. */
static ULONG check_event_list(const char *fn, TRACE_INFO_CLASS c, const void *info, ULONG len,
                              uint32_t max)
{
        if (len % sizeof(CLASSIC_EVENT_ID) || len / sizeof(CLASSIC_EVENT_ID) > max) {
                etw_set_error(ERROR_INCORRECT_SIZE,
                              "%s(%s): %u bytes is not a whole number of CLASSIC_EVENT_IDs (24 "
                              "bytes), at most %u",
                              fn, class_name(c), len, max);
                return ERROR_INCORRECT_SIZE;
        }
        if ((len == 0) != (info == NULL)) {
                etw_set_error(ERROR_INVALID_PARAMETER,
                              "%s(%s): an empty list needs a NULL buffer, a list a buffer", fn,
                              class_name(c));
                return ERROR_INVALID_PARAMETER;
        }
        return ERROR_SUCCESS;
}

/* Checks an array of KPROFILE_SOURCE values (seed 003): whole ULONGs, 1 to 4 of them. */
static ULONG check_source_list(const char *fn, TRACE_INFO_CLASS c, const void *info, ULONG len)
{
        if (len % sizeof(ULONG) || len / sizeof(ULONG) > LIVE_MAX_SOURCES) {
                etw_set_error(ERROR_INCORRECT_SIZE,
                              "%s(%s): %u bytes is not a whole number of ULONG sources, at most "
                              "%d",
                              fn, class_name(c), len, LIVE_MAX_SOURCES);
                return ERROR_INCORRECT_SIZE;
        }
        if (len == 0 || !info) {
                etw_set_error(ERROR_INVALID_PARAMETER, "%s(%s): no sources given", fn,
                              class_name(c));
                return ERROR_INVALID_PARAMETER;
        }
        const ULONG *src = info;
        for (ULONG i = 0; i < len / sizeof(ULONG); i++) {
                if (src[i] >= NR_PROFILE_SOURCES) {
                        etw_set_error(ERROR_INVALID_PARAMETER,
                                      "%s(%s): profile source %u is unknown", fn, class_name(c),
                                      src[i]);
                        return ERROR_INVALID_PARAMETER;
                }
        }
        return ERROR_SUCCESS;
}

/* The kernel session a session-specific class needs, with a reference; NULL with the error
   set. */
static struct session *kernel_session(const char *fn, TRACE_INFO_CLASS c, CONTROLTRACE_ID id,
                                      ULONG *code)
{
        if (!id) {
                *code = ERROR_INVALID_PARAMETER;
                etw_set_error(*code, "%s(%s): this class needs a session handle", fn,
                              class_name(c));
                return NULL;
        }
        struct session *s = session_find(id, NULL);
        if (!s) {
                char what[96];
                snprintf(what, sizeof(what), "%s(%s)", fn, class_name(c));
                *code = not_found(what, id);
                return NULL;
        }
        if (!s->is_kernel) {
                session_unref(s);
                *code = ERROR_INVALID_PARAMETER;
                etw_set_error(*code,
                              "%s(%s): the session is not a kernel logger (\"" KERNEL_LOGGER_NAMEA
                              "\" or EVENT_TRACE_SYSTEM_LOGGER_MODE)",
                              fn, class_name(c));
                return NULL;
        }
        return s;
}

/* Applies next to s (locked here) and sets the error. */
static ULONG commit_settings(const char *fn, TRACE_INFO_CLASS c, struct session *s,
                             const struct live_settings *next)
{
        struct etl_error err = {0};
        int rc = apply_settings(s, next, &err);
        if (rc < 0) {
                DWORD code = live_error_code(rc);
                etw_set_error(code, "%s(%s): %s", fn, class_name(c), err.msg);
                return code;
        }
        etw_set_error(ERROR_SUCCESS, NULL);
        return ERROR_SUCCESS;
}

/* The hook ids of an event list; entries with unknown GUIDs are ignored (seed 003). */
static uint32_t hooks_of_events(const CLASSIC_EVENT_ID *ev, uint32_t n, uint16_t *hooks)
{
        uint32_t k = 0;
        for (uint32_t i = 0; i < n; i++) {
                int h = hook_of_event(&ev[i]);
                if (h >= 0)
                        hooks[k++] = (uint16_t)h;
        }
        return k;
}

/* Pushes the global profile configuration to every running kernel session. */
static ULONG push_profile_config(const char *fn, TRACE_INFO_CLASS c)
{
        struct session *ss[MAX_SESSIONS];
        int n = 0;
        uint32_t intervals[NR_PROFILE_SOURCES];
        pthread_mutex_lock(&table_lock);
        for (uint32_t i = 0; i < NR_PROFILE_SOURCES; i++)
                intervals[i] = interval_of(i);
        for (int i = 0; i < MAX_SESSIONS; i++) {
                if (table[i] && table[i]->state == SESSION_RUNNING && table[i]->is_kernel) {
                        table[i]->nr_refs++;
                        ss[n++] = table[i];
                }
        }
        pthread_mutex_unlock(&table_lock);
        ULONG code = ERROR_SUCCESS;
        for (int i = 0; i < n; i++) {
                pthread_mutex_lock(&ss[i]->lock);
                struct live_settings next = ss[i]->cfg;
                next.profile_interval_100ns = intervals[ProfileTime];
                for (uint32_t k = 0; k < next.nr_profile_sources; k++)
                        next.source_intervals[k] = intervals[next.profile_sources[k]];
                if (memcmp(&next, &ss[i]->cfg, sizeof(next)) != 0) {
                        ULONG rc = commit_settings(fn, c, ss[i], &next);
                        if (rc != ERROR_SUCCESS && code == ERROR_SUCCESS)
                                code = rc;
                }
                pthread_mutex_unlock(&ss[i]->lock);
                session_unref(ss[i]);
        }
        if (code == ERROR_SUCCESS)
                etw_set_error(ERROR_SUCCESS, NULL);
        return code;
}

static ULONG set_lbr(const char *fn, TRACE_INFO_CLASS c, CONTROLTRACE_ID id, bool has_flags,
                     uint32_t flags, bool has_events, const uint16_t *hooks, uint32_t nr_hooks)
{
        ULONG code;
        struct session *s = kernel_session(fn, c, id, &code);
        if (!s)
                return code;
        pthread_mutex_lock(&s->lock);
        struct live_settings next = s->cfg;
        if (has_flags)
                next.lbr_flags = flags;
        if (has_events) {
                next.nr_lbr_hooks = nr_hooks;
                memcpy(next.lbr_hooks, hooks, nr_hooks * sizeof(uint16_t));
        }
        code = commit_settings(fn, c, s, &next);
        pthread_mutex_unlock(&s->lock);
        session_unref(s);
        return code;
}

/* ERROR_NOT_SUPPORTED, saying why, when this machine has no LBR. */
static ULONG no_lbr(const char *fn)
{
        const struct live_caps *c = machine_caps();
        if (c->has_lbr)
                return ERROR_SUCCESS;
        etw_set_error(ERROR_NOT_SUPPORTED, "%s: %s", fn,
                      c->why_no_lbr[0] ? c->why_no_lbr
                                       : "no Last Branch Record: no "
                                         "/sys/bus/event_source/devices/cpu/caps/branches");
        return ERROR_NOT_SUPPORTED;
}

/* One change of a kernel session's settings from TraceSetInformation: edit writes the class's
   (already validated) information into a copy of the settings, which is then committed to the
   running source. */
typedef void (*settings_edit_fn)(struct live_settings *next, const void *info, ULONG len,
                                 const void *extra);

static void edit_stack_hooks(struct live_settings *next, const void *info, ULONG len,
                             const void *extra)
{
        (void)extra;
        next->nr_stack_hooks =
                hooks_of_events(info, len / sizeof(CLASSIC_EVENT_ID), next->stack_hooks);
}

static void edit_group_masks(struct live_settings *next, const void *info, ULONG len,
                             const void *extra)
{
        (void)extra;
        memset(&next->masks, 0, sizeof(next->masks));
        if (len)
                memcpy(next->masks.Masks, info, len);
}

static void edit_profile_sources(struct live_settings *next, const void *info, ULONG len,
                                 const void *intervals)
{
        next->nr_profile_sources = len / sizeof(ULONG);
        memcpy(next->profile_sources, info, len);
        memcpy(next->source_intervals, intervals, next->nr_profile_sources * sizeof(uint32_t));
}

static void edit_pmc_hooks(struct live_settings *next, const void *info, ULONG len,
                           const void *extra)
{
        (void)extra;
        next->nr_pmc_hooks = hooks_of_events(info, len / sizeof(CLASSIC_EVENT_ID), next->pmc_hooks);
}

static void edit_pmc_counters(struct live_settings *next, const void *info, ULONG len,
                              const void *extra)
{
        (void)extra;
        next->nr_pmc_counters = len / sizeof(ULONG);
        memcpy(next->pmc_counters, info, len);
}

static ULONG edit_settings(const char *fn, TRACE_INFO_CLASS c, CONTROLTRACE_ID handle,
                           settings_edit_fn edit, const void *info, ULONG len, const void *extra)
{
        ULONG code;
        struct session *s = kernel_session(fn, c, handle, &code);
        if (!s)
                return code;
        pthread_mutex_lock(&s->lock);
        struct live_settings next = s->cfg;
        edit(&next, info, len, extra);
        code = commit_settings(fn, c, s, &next);
        pthread_mutex_unlock(&s->lock);
        session_unref(s);
        return code;
}

static void edit_stackwalk(struct live_settings *next, const void *info, ULONG len,
                           const void *extra)
{
        (void)len;
        (void)extra;
        struct etw_stackwalk_info w;
        memcpy(&w, info, sizeof(w));
        next->stack_walk = w.Mode;
        next->user_stack_bytes = w.UserStackBytes;
}

/* ETWTOP_TRACE_STACKWALK_INFO (etw/etwtop_ext.h): a running kernel logger's stack-walk mode. */
static ULONG set_stackwalk(const char *fn, CONTROLTRACE_ID handle, const void *info, ULONG len)
{
        const TRACE_INFO_CLASS c = ETWTOP_TRACE_STACKWALK_INFO;
        struct etw_stackwalk_info w;
        if (len != sizeof(w)) {
                etw_set_error(ERROR_BAD_LENGTH,
                              "%s(%s): %u bytes, a struct etw_stackwalk_info is exactly 8", fn,
                              class_name(c), len);
                return ERROR_BAD_LENGTH;
        }
        if (!info || !handle) {
                etw_set_error(ERROR_INVALID_PARAMETER, "%s(%s): %s", fn, class_name(c),
                              !info ? "the buffer is NULL" : "a kernel logger's handle is needed");
                return ERROR_INVALID_PARAMETER;
        }
        memcpy(&w, info, sizeof(w));
        if (w.Mode > ETWTOP_STACKWALK_AUTO || w.UserStackBytes % 8 ||
            w.UserStackBytes > LIVE_MAX_USER_STACK) {
                etw_set_error(ERROR_INVALID_PARAMETER,
                              "%s(%s): mode %u, %u bytes: the mode is 0 (frame pointers), 1 "
                              "(DWARF) or 2 (auto), the stack copy a multiple of 8 up to %u",
                              fn, class_name(c), w.Mode, w.UserStackBytes, LIVE_MAX_USER_STACK);
                return ERROR_INVALID_PARAMETER;
        }
        return edit_settings(fn, c, handle, edit_stackwalk, &w, len, NULL);
}

/* ETWTOP_TRACE_PROCESS_INFO (etw/etwtop_ext.h): the process of the kernel loggers started next
   (handle 0), or a running kernel logger's, which cannot change. */
static ULONG set_process(const char *fn, CONTROLTRACE_ID handle, const void *info, ULONG len)
{
        const TRACE_INFO_CLASS c = ETWTOP_TRACE_PROCESS_INFO;
        if (len != sizeof(LONG)) {
                etw_set_error(ERROR_BAD_LENGTH, "%s(%s): %u bytes, a process id is a LONG (4)", fn,
                              class_name(c), len);
                return ERROR_BAD_LENGTH;
        }
        if (!info) {
                etw_set_error(ERROR_INVALID_PARAMETER, "%s(%s): the buffer is NULL", fn,
                              class_name(c));
                return ERROR_INVALID_PARAMETER;
        }
        LONG pid;
        memcpy(&pid, info, sizeof(pid));
        if (pid == 0 || pid < -1) {
                etw_set_error(ERROR_INVALID_PARAMETER,
                              "%s(%s): %d is not a process id (-1: the whole system)", fn,
                              class_name(c), (int)pid);
                return ERROR_INVALID_PARAMETER;
        }
        if (!handle) {
                pthread_mutex_lock(&table_lock);
                pending_pid = pid;
                pthread_mutex_unlock(&table_lock);
                etw_set_error(ERROR_SUCCESS, NULL);
                return ERROR_SUCCESS;
        }
        ULONG code;
        struct session *s = kernel_session(fn, c, handle, &code);
        if (!s)
                return code;
        pthread_mutex_lock(&s->lock);
        int32_t now = s->cfg.pid;
        pthread_mutex_unlock(&s->lock);
        session_unref(s);
        if (now != pid) {
                etw_set_error(ERROR_NOT_SUPPORTED,
                              "%s(%s): the session traces %s %d; a running session's process "
                              "cannot change (set it with handle 0 before StartTrace)",
                              fn, class_name(c), now > 0 ? "process" : "the whole system, pid",
                              (int)now);
                return ERROR_NOT_SUPPORTED;
        }
        etw_set_error(ERROR_SUCCESS, NULL);
        return ERROR_SUCCESS;
}

static ULONG local_set_info(CONTROLTRACE_ID SessionHandle, TRACE_INFO_CLASS InformationClass,
                            const void *TraceInformation, ULONG InformationLength)
{
        static const char fn[] = "TraceSetInformation";
        TRACE_INFO_CLASS c = InformationClass;
        const void *info = TraceInformation;
        ULONG len = InformationLength;
        ULONG code;
        if (c == ETWTOP_TRACE_PROCESS_INFO)
                return set_process(fn, SessionHandle, info, len);
        if (c == ETWTOP_TRACE_STACKWALK_INFO)
                return set_stackwalk(fn, SessionHandle, info, len);
        switch (c) {
        case TraceStackTracingInfo: {
                code = check_event_list(fn, c, info, len, LIVE_MAX_STACK_HOOKS);
                if (code != ERROR_SUCCESS)
                        return code;
                return edit_settings(fn, c, SessionHandle, edit_stack_hooks, info, len, NULL);
        }
        case TraceSystemTraceEnableFlagsInfo: {
                if (len % sizeof(ULONG) || len > sizeof(PERFINFO_GROUPMASK) || (len && !info)) {
                        etw_set_error(ERROR_INVALID_PARAMETER,
                                      "%s(%s): %u bytes is not a whole number of group masks, at "
                                      "most 8",
                                      fn, class_name(c), len);
                        return ERROR_INVALID_PARAMETER;
                }
                return edit_settings(fn, c, SessionHandle, edit_group_masks, info, len, NULL);
        }
        case TraceSampledProfileIntervalInfo: {
                if (SessionHandle) {
                        etw_set_error(ERROR_INVALID_PARAMETER,
                                      "%s(%s): the profile interval is global: the handle must "
                                      "be 0",
                                      fn, class_name(c));
                        return ERROR_INVALID_PARAMETER;
                }
                if (len != sizeof(TRACE_PROFILE_INTERVAL)) {
                        etw_set_error(ERROR_BAD_LENGTH,
                                      "%s(%s): %u bytes, a TRACE_PROFILE_INTERVAL is exactly 8", fn,
                                      class_name(c), len);
                        return ERROR_BAD_LENGTH;
                }
                if (!info) {
                        etw_set_error(ERROR_INVALID_PARAMETER, "%s(%s): the buffer is NULL", fn,
                                      class_name(c));
                        return ERROR_INVALID_PARAMETER;
                }
                TRACE_PROFILE_INTERVAL tpi;
                memcpy(&tpi, info, sizeof(tpi));
                if (tpi.Source >= NR_PROFILE_SOURCES) {
                        etw_set_error(ERROR_INVALID_PARAMETER,
                                      "%s(%s): profile source %u is unknown", fn, class_name(c),
                                      tpi.Source);
                        return ERROR_INVALID_PARAMETER;
                }
                /* clamped to the source's range, as the kernel does */
                uint32_t lo = tpi.Source == ProfileTime ? TIMER_MIN_100NS : PMC_MIN_INTERVAL;
                uint32_t hi = tpi.Source == ProfileTime ? TIMER_MAX_100NS : PMC_MAX_INTERVAL;
                uint32_t v = tpi.Interval < lo ? lo : tpi.Interval > hi ? hi : tpi.Interval;
                pthread_mutex_lock(&table_lock);
                profile_intervals[tpi.Source] = v;
                pthread_mutex_unlock(&table_lock);
                return push_profile_config(fn, c);
        }
        case TraceProfileSourceConfigInfo: {
                code = check_source_list(fn, c, info, len);
                if (code != ERROR_SUCCESS)
                        return code;
                uint32_t n = len / sizeof(ULONG);
                if (!SessionHandle) {
                        /* pending for the kernel loggers started next (seed 000) */
                        pthread_mutex_lock(&table_lock);
                        nr_pending_sources = n;
                        memcpy(pending_sources, info, len);
                        pthread_mutex_unlock(&table_lock);
                        etw_set_error(ERROR_SUCCESS, NULL);
                        return ERROR_SUCCESS;
                }
                uint32_t intervals[LIVE_MAX_SOURCES];
                pthread_mutex_lock(&table_lock);
                for (uint32_t i = 0; i < n; i++)
                        intervals[i] = interval_of(((const ULONG *)info)[i]);
                pthread_mutex_unlock(&table_lock);
                return edit_settings(fn, c, SessionHandle, edit_profile_sources, info, len,
                                     intervals);
        }
        case TracePmcEventListInfo: {
                code = check_event_list(fn, c, info, len, LIVE_MAX_SOURCES);
                if (code != ERROR_SUCCESS)
                        return code;
                return edit_settings(fn, c, SessionHandle, edit_pmc_hooks, info, len, NULL);
        }
        case TracePmcCounterListInfo: {
                code = check_source_list(fn, c, info, len);
                if (code != ERROR_SUCCESS)
                        return code;
                return edit_settings(fn, c, SessionHandle, edit_pmc_counters, info, len, NULL);
        }
        case TraceLbrConfigurationInfo: {
                if (len != sizeof(ULONG)) {
                        etw_set_error(ERROR_BAD_LENGTH, "%s(%s): %u bytes, the flags are a ULONG",
                                      fn, class_name(c), len);
                        return ERROR_BAD_LENGTH;
                }
                if (!info) {
                        etw_set_error(ERROR_INVALID_PARAMETER, "%s(%s): the buffer is NULL", fn,
                                      class_name(c));
                        return ERROR_INVALID_PARAMETER;
                }
                ULONG flags;
                memcpy(&flags, info, sizeof(flags));
                if (flags & ~EVNTRACE_LBR_VALID_FLAGS) {
                        etw_set_error(ERROR_INVALID_PARAMETER,
                                      "%s(%s): flags 0x%x outside EVNTRACE_LBR_VALID_FLAGS", fn,
                                      class_name(c), flags);
                        return ERROR_INVALID_PARAMETER;
                }
                struct session *s = kernel_session(fn, c, SessionHandle, &code);
                if (!s)
                        return code;
                session_unref(s);
                code = no_lbr(fn);
                if (code != ERROR_SUCCESS)
                        return code;
                return set_lbr(fn, c, SessionHandle, true, flags, false, NULL, 0);
        }
        case TraceLbrEventListInfo: {
                code = check_event_list(fn, c, info, len, LIVE_MAX_LBR_HOOKS);
                if (code != ERROR_SUCCESS)
                        return code;
                struct session *s = kernel_session(fn, c, SessionHandle, &code);
                if (!s)
                        return code;
                session_unref(s);
                if (len) {
                        code = no_lbr(fn);
                        if (code != ERROR_SUCCESS)
                                return code;
                }
                uint16_t hooks[LIVE_MAX_LBR_HOOKS];
                uint32_t n = hooks_of_events(info, len / sizeof(CLASSIC_EVENT_ID), hooks);
                return set_lbr(fn, c, SessionHandle, false, 0, true, hooks, n);
        }
        default:
                etw_set_error(ERROR_NOT_SUPPORTED, "%s: information class %d is not supported", fn,
                              (int)c);
                return ERROR_NOT_SUPPORTED;
        }
}

ULONG session_check_lbr(ULONG LbrConfiguration, const CLASSIC_EVENT_ID *Events, ULONG EventCount)
{
        static const char fn[] = "TraceConfigureLastBranchRecord";
        if ((uint32_t)LbrConfiguration & ~(uint32_t)EVNTRACE_LBR_VALID_FLAGS) {
                etw_set_error(ERROR_INVALID_PARAMETER,
                              "%s: LbrConfiguration 0x%x has bits outside EVNTRACE_LBR_VALID_FLAGS",
                              fn, (unsigned)LbrConfiguration);
                return ERROR_INVALID_PARAMETER;
        }
        if (EventCount > EVNTRACE_MAX_LBR_EVENTS) {
                etw_set_error(ERROR_INVALID_PARAMETER,
                              "%s: %u triggering events, at most EVNTRACE_MAX_LBR_EVENTS (%d)", fn,
                              EventCount, EVNTRACE_MAX_LBR_EVENTS);
                return ERROR_INVALID_PARAMETER;
        }
        if (EventCount && !Events) {
                etw_set_error(ERROR_INVALID_PARAMETER, "%s: Events is NULL", fn);
                return ERROR_INVALID_PARAMETER;
        }
        return ERROR_SUCCESS;
}

static ULONG local_lbr(CONTROLTRACE_ID TraceId, ULONG LbrConfiguration,
                       const CLASSIC_EVENT_ID *Events, ULONG EventCount)
{
        static const char fn[] = "TraceConfigureLastBranchRecord";
        const TRACE_INFO_CLASS c = TraceLbrConfigurationInfo;
        ULONG code;
        struct session *s = kernel_session(fn, c, TraceId, &code);
        if (!s)
                return code;
        session_unref(s);
        if (EventCount) {
                code = no_lbr(fn);
                if (code != ERROR_SUCCESS)
                        return code;
        }
        uint16_t hooks[LIVE_MAX_LBR_HOOKS];
        uint32_t n = hooks_of_events(Events, EventCount, hooks);
        /* EventCount 0 clears the triggers and disables LBR */
        return set_lbr(fn, c, TraceId, true, EventCount ? (uint32_t)LbrConfiguration : 0, true,
                       hooks, n);
}

/* ---- TraceQueryInformation ---------------------------------------------------------------- */

/* ERROR_BAD_LENGTH with the size needed in *ret, or ERROR_SUCCESS. */
static ULONG need_length(const char *fn, TRACE_INFO_CLASS c, ULONG len, ULONG needed, PULONG ret)
{
        if (ret)
                *ret = needed;
        if (len < needed) {
                etw_set_error(ERROR_BAD_LENGTH, "%s(%s): %u bytes, %u needed", fn, class_name(c),
                              len, needed);
                return ERROR_BAD_LENGTH;
        }
        return ERROR_SUCCESS;
}

/* The profile sources this machine has (TraceProfileSourceListInfo). */
struct source_desc {
        uint32_t source;
        const char *name;
        bool needs_pmu;
};

static const struct source_desc source_descs[] = {
        {ProfileTime, "Timer", false},
        {ProfileTotalIssues, "TotalIssues", true},
        {ProfileBranchInstructions, "BranchInstructions", true},
        {ProfileCacheMisses, "CacheMisses", true},
        {ProfileBranchMispredictions, "BranchMispredictions", true},
        {ProfileTotalCycles, "TotalCycles", true},
        {25, "UnhaltedCoreCycles", true},
        {26, "InstructionRetired", true},
        {27, "UnhaltedReferenceCycles", true},
        {28, "LLCReference", true},
        {29, "LLCMisses", true},
        {30, "BranchInstructionRetired", true},
        {31, "BranchMispredictsRetired", true},
};

/* Writes the PROFILE_SOURCE_INFO chain into out (when not NULL) and returns its size. */
static ULONG source_list(uint8_t *out)
{
        const struct live_caps *c = machine_caps();
        ULONG size = 0, last = 0;
        for (size_t i = 0; i < sizeof(source_descs) / sizeof(source_descs[0]); i++) {
                const struct source_desc *d = &source_descs[i];
                if (d->needs_pmu && !c->has_pmu)
                        continue;
                size_t n = strlen(d->name) + 1;
                ULONG entry = (ULONG)((offsetof(PROFILE_SOURCE_INFO, Description) + 2 * n + 7) &
                                      ~(size_t)7);
                if (out) {
                        uint8_t *e = out + size;
                        memset(e, 0, entry);
                        if (size)
                                memcpy(out + last, &(ULONG){size - last}, sizeof(ULONG));
                        ULONG v[3] = {d->source,
                                      d->source == ProfileTime ? TIMER_MIN_100NS : PMC_MIN_INTERVAL,
                                      d->source == ProfileTime ? TIMER_MAX_100NS
                                                               : PMC_MAX_INTERVAL};
                        memcpy(e + offsetof(PROFILE_SOURCE_INFO, Source), v, sizeof(v));
                        for (size_t k = 0; k < n; k++) {
                                WCHAR w = (WCHAR)(unsigned char)d->name[k];
                                memcpy(e + offsetof(PROFILE_SOURCE_INFO, Description) + 2 * k, &w,
                                       2);
                        }
                }
                last = size;
                size += entry;
        }
        return size;
}

ULONG session_check_query_info(TRACE_INFO_CLASS c, const void *info, ULONG len, PULONG ret)
{
        if (ret)
                *ret = 0;
        if (len && !info) {
                etw_set_error(ERROR_INVALID_PARAMETER, "TraceQueryInformation(%s): the buffer is "
                              "NULL", class_name(c));
                return ERROR_INVALID_PARAMETER;
        }
        return ERROR_SUCCESS;
}

static ULONG local_query_info(CONTROLTRACE_ID SessionHandle, TRACE_INFO_CLASS InformationClass,
                              void *TraceInformation, ULONG InformationLength,
                              PULONG ReturnLength)
{
        static const char fn[] = "TraceQueryInformation";
        TRACE_INFO_CLASS c = InformationClass;
        ULONG len = InformationLength;
        uint8_t *out = TraceInformation;
        ULONG code = session_check_query_info(c, out, len, ReturnLength);
        if (code != ERROR_SUCCESS)
                return code;
        const struct live_caps *caps_now = machine_caps();
        if (c == ETWTOP_TRACE_PROCESS_INFO) {
                code = need_length(fn, c, len, sizeof(LONG), ReturnLength);
                if (code != ERROR_SUCCESS)
                        return code;
                LONG pid;
                if (!SessionHandle) {
                        pthread_mutex_lock(&table_lock);
                        pid = pending_pid;
                        pthread_mutex_unlock(&table_lock);
                } else {
                        struct session *s = kernel_session(fn, c, SessionHandle, &code);
                        if (!s)
                                return code;
                        pthread_mutex_lock(&s->lock);
                        pid = s->cfg.pid;
                        pthread_mutex_unlock(&s->lock);
                        session_unref(s);
                }
                memcpy(out, &pid, sizeof(pid));
                etw_set_error(ERROR_SUCCESS, NULL);
                return ERROR_SUCCESS;
        }
        if (c == ETWTOP_TRACE_STACKWALK_INFO) {
                struct etw_stackwalk_info w;
                code = need_length(fn, c, len, sizeof(w), ReturnLength);
                if (code != ERROR_SUCCESS)
                        return code;
                if (!SessionHandle) {
                        etw_set_error(ERROR_INVALID_PARAMETER,
                                      "%s(%s): a kernel logger's handle is needed", fn,
                                      class_name(c));
                        return ERROR_INVALID_PARAMETER;
                }
                struct session *s = kernel_session(fn, c, SessionHandle, &code);
                if (!s)
                        return code;
                pthread_mutex_lock(&s->lock);
                w.Mode = s->cfg.stack_walk;
                w.UserStackBytes =
                        s->cfg.user_stack_bytes ? s->cfg.user_stack_bytes : LIVE_DEFAULT_USER_STACK;
                pthread_mutex_unlock(&s->lock);
                session_unref(s);
                memcpy(out, &w, sizeof(w));
                etw_set_error(ERROR_SUCCESS, NULL);
                return ERROR_SUCCESS;
        }
        if (c == ETWTOP_TRACE_CONSUMERS_INFO) {
                code = need_length(fn, c, len, sizeof(ULONG), ReturnLength);
                if (code != ERROR_SUCCESS)
                        return code;
                if (!SessionHandle) {
                        etw_set_error(ERROR_INVALID_PARAMETER,
                                      "%s(%s): a session's handle is needed", fn, class_name(c));
                        return ERROR_INVALID_PARAMETER;
                }
                struct session *s = session_find(SessionHandle, NULL);
                if (!s) {
                        char what[96];
                        snprintf(what, sizeof(what), "%s(%s)", fn, class_name(c));
                        return not_found(what, SessionHandle);
                }
                ULONG n = 0;
                pthread_mutex_lock(&s->lock);
                for (const struct session_rt *rt = s->consumers; rt; rt = rt->next)
                        n++;
                pthread_mutex_unlock(&s->lock);
                session_unref(s);
                memcpy(out, &n, sizeof(n));
                etw_set_error(ERROR_SUCCESS, NULL);
                return ERROR_SUCCESS;
        }
        switch (c) {
        case TraceSampledProfileIntervalInfo: {
                if (SessionHandle) {
                        etw_set_error(ERROR_INVALID_PARAMETER,
                                      "%s(%s): the profile interval is global: the handle must "
                                      "be 0",
                                      fn, class_name(c));
                        return ERROR_INVALID_PARAMETER;
                }
                if (len != sizeof(TRACE_PROFILE_INTERVAL)) {
                        if (ReturnLength)
                                *ReturnLength = sizeof(TRACE_PROFILE_INTERVAL);
                        etw_set_error(ERROR_BAD_LENGTH,
                                      "%s(%s): %u bytes, a TRACE_PROFILE_INTERVAL is exactly 8", fn,
                                      class_name(c), len);
                        return ERROR_BAD_LENGTH;
                }
                TRACE_PROFILE_INTERVAL tpi;
                memcpy(&tpi, out, sizeof(tpi));
                if (tpi.Source >= NR_PROFILE_SOURCES) {
                        etw_set_error(ERROR_INVALID_PARAMETER,
                                      "%s(%s): profile source %u is unknown", fn, class_name(c),
                                      tpi.Source);
                        return ERROR_INVALID_PARAMETER;
                }
                pthread_mutex_lock(&table_lock);
                tpi.Interval = interval_of(tpi.Source);
                pthread_mutex_unlock(&table_lock);
                memcpy(out, &tpi, sizeof(tpi));
                if (ReturnLength)
                        *ReturnLength = sizeof(tpi);
                etw_set_error(ERROR_SUCCESS, NULL);
                return ERROR_SUCCESS;
        }
        case TraceProfileSourceListInfo: {
                code = need_length(fn, c, len, source_list(NULL), ReturnLength);
                if (code == ERROR_SUCCESS) {
                        source_list(out);
                        etw_set_error(ERROR_SUCCESS, NULL);
                }
                return code;
        }
        case TraceVersionInfo: {
                code = need_length(fn, c, len, sizeof(TRACE_VERSION_INFO), ReturnLength);
                if (code == ERROR_SUCCESS) {
                        TRACE_VERSION_INFO v = {TRACE_PROCESSING_VER, 0};
                        memcpy(out, &v, sizeof(v));
                        etw_set_error(ERROR_SUCCESS, NULL);
                }
                return code;
        }
        case TraceMaxPmcCounterQuery:
        case TraceMaxLoggersQuery: {
                code = need_length(fn, c, len, sizeof(ULONG), ReturnLength);
                if (code == ERROR_SUCCESS) {
                        ULONG v = c == TraceMaxLoggersQuery ? MAX_SESSIONS
                                  : caps_now->has_pmu       ? LIVE_MAX_SOURCES
                                                            : 0;
                        memcpy(out, &v, sizeof(v));
                        etw_set_error(ERROR_SUCCESS, NULL);
                }
                return code;
        }
        case TraceProfileSourceConfigInfo:
                if (!SessionHandle) {
                        pthread_mutex_lock(&table_lock);
                        ULONG needed = nr_pending_sources * sizeof(ULONG);
                        code = need_length(fn, c, len, needed, ReturnLength);
                        if (code == ERROR_SUCCESS) {
                                memcpy(out, pending_sources, needed);
                                etw_set_error(ERROR_SUCCESS, NULL);
                        }
                        pthread_mutex_unlock(&table_lock);
                        return code;
                }
                break;
        case TraceStackTracingInfo:
        case TraceSystemTraceEnableFlagsInfo:
        case TracePmcEventListInfo:
        case TracePmcCounterListInfo:
        case TraceLbrConfigurationInfo:
        case TraceLbrEventListInfo: break;
        default:
                etw_set_error(ERROR_NOT_SUPPORTED, "%s: information class %d is not supported", fn,
                              (int)c);
                return ERROR_NOT_SUPPORTED;
        }

        /* the session's own settings */
        struct session *s = kernel_session(fn, c, SessionHandle, &code);
        if (!s)
                return code;
        pthread_mutex_lock(&s->lock);
        const struct live_settings *cfg = &s->cfg;
        CLASSIC_EVENT_ID ev[LIVE_MAX_STACK_HOOKS];
        const void *src = ev;
        ULONG needed = 0;
        switch (c) {
        case TraceStackTracingInfo:
                for (uint32_t i = 0; i < cfg->nr_stack_hooks; i++)
                        event_of_hook(cfg->stack_hooks[i], &ev[i]);
                needed = cfg->nr_stack_hooks * sizeof(CLASSIC_EVENT_ID);
                break;
        case TracePmcEventListInfo:
                for (uint32_t i = 0; i < cfg->nr_pmc_hooks; i++)
                        event_of_hook(cfg->pmc_hooks[i], &ev[i]);
                needed = cfg->nr_pmc_hooks * sizeof(CLASSIC_EVENT_ID);
                break;
        case TraceLbrEventListInfo:
                for (uint32_t i = 0; i < cfg->nr_lbr_hooks; i++)
                        event_of_hook(cfg->lbr_hooks[i], &ev[i]);
                needed = cfg->nr_lbr_hooks * sizeof(CLASSIC_EVENT_ID);
                break;
        case TraceSystemTraceEnableFlagsInfo:
                src = cfg->masks.Masks;
                needed = sizeof(cfg->masks);
                break;
        case TraceProfileSourceConfigInfo:
                src = cfg->profile_sources;
                needed = cfg->nr_profile_sources * sizeof(ULONG);
                break;
        case TracePmcCounterListInfo:
                src = cfg->pmc_counters;
                needed = cfg->nr_pmc_counters * sizeof(ULONG);
                break;
        case TraceLbrConfigurationInfo:
                src = &cfg->lbr_flags;
                needed = sizeof(ULONG);
                break;
        default: break;
        }
        code = need_length(fn, c, len, needed, ReturnLength);
        if (code == ERROR_SUCCESS) {
                if (needed)
                        memcpy(out, src, needed);
                etw_set_error(ERROR_SUCCESS, NULL);
        }
        pthread_mutex_unlock(&s->lock);
        session_unref(s);
        return code;
}

/* ---- the application's ring ---------------------------------------------------------------- */

int session_save_ring(CONTROLTRACE_ID id, const char *path, bool is_force, struct etl_error *err)
{
        struct session *s = session_find(id, NULL);
        if (!s) {
                snprintf(err->msg, sizeof(err->msg), "no session has handle 0x%llx",
                         (unsigned long long)id);
                return -ESRCH;
        }
        int rc;
        pthread_mutex_lock(&s->lock);
        if (!((s->log_file_mode & EVENT_TRACE_BUFFERING_MODE) || s->has_window) || !s->writer) {
                snprintf(err->msg, sizeof(err->msg),
                         "session \"%s\" keeps no ring (EVENT_TRACE_BUFFERING_MODE)", s->name);
                rc = -EINVAL;
        } else {
                /* self-contained: what is running now, its images and the kernel symbols
                   hit, as at a stop (the start's rundown may have left the ring) */
                if (s->source)
                        live_source_rundown(s->source);
                etl_writer_flush(s->writer);
                pthread_cond_broadcast(&s->rt_cond);
                rc = etl_writer_save_ring(s->writer, path, is_force, filetime_now(), err);
        }
        pthread_mutex_unlock(&s->lock);
        session_unref(s);
        return rc;
}

int session_keep_window(CONTROLTRACE_ID id, size_t max_bytes, struct etl_error *err)
{
        struct session *s = session_find(id, NULL);
        if (!s) {
                snprintf(err->msg, sizeof(err->msg), "no session has handle 0x%llx",
                         (unsigned long long)id);
                return -ESRCH;
        }
        int rc = -EINVAL;
        pthread_mutex_lock(&s->lock);
        if (!s->writer) {
                snprintf(err->msg, sizeof(err->msg), "session \"%s\" has no buffers", s->name);
        } else if (max_bytes > SESSION_MAX_BUFFER_BYTES) {
                snprintf(err->msg, sizeof(err->msg),
                         "a kept window of %zu MB: a session keeps at most %zu MB", max_bytes >> 20,
                         SESSION_MAX_BUFFER_BYTES >> 20);
        } else if (max_bytes > s->window_bytes && !session_mem_take(max_bytes - s->window_bytes)) {
                rc = -ENOMEM;
                snprintf(err->msg, sizeof(err->msg),
                         "a kept window of %zu MB does not fit: the sessions of this host keep "
                         "at most %zu MB in windows and real-time queues together "
                         "(ETWTOP_HOST_MAX_MB)",
                         max_bytes >> 20, session_mem_max() >> 20);
        } else if ((rc = etl_writer_set_ring(s->writer, max_bytes)) < 0) {
                if (max_bytes > s->window_bytes)
                        session_mem_give(max_bytes - s->window_bytes);
                snprintf(err->msg, sizeof(err->msg), "no memory for %zu MB of recent buffers",
                         max_bytes >> 20);
        } else {
                if (max_bytes < s->window_bytes)
                        session_mem_give(s->window_bytes - max_bytes);
                s->window_bytes = max_bytes;
                s->has_window = true;
        }
        pthread_mutex_unlock(&s->lock);
        session_unref(s);
        return rc;
}

/* ---- every session (QueryAllTracesA), and the host's needs ------------------------------- */

static ULONG local_query_all(PEVENT_TRACE_PROPERTIES *PropertyArray, ULONG PropertyArrayCount,
                             PULONG LoggerCount)
{
        static const char fn[] = "QueryAllTraces";
        struct session *ss[MAX_SESSIONS];
        ULONG n = 0;
        pthread_mutex_lock(&table_lock);
        for (int i = 0; i < MAX_SESSIONS; i++) {
                if (table[i] && table[i]->state == SESSION_RUNNING) {
                        table[i]->nr_refs++;
                        ss[n++] = table[i];
                }
        }
        pthread_mutex_unlock(&table_lock);
        ULONG code = n > PropertyArrayCount ? ERROR_MORE_DATA : ERROR_SUCCESS;
        for (ULONG i = 0; i < n; i++) {
                if (i < PropertyArrayCount) {
                        pthread_mutex_lock(&ss[i]->lock);
                        if (fill_properties(ss[i], PropertyArray[i]) != ERROR_SUCCESS)
                                code = ERROR_MORE_DATA;
                        pthread_mutex_unlock(&ss[i]->lock);
                }
                session_unref(ss[i]);
        }
        *LoggerCount = n;
        if (code == ERROR_MORE_DATA)
                etw_set_error(code,
                              "%s: %u sessions run; PropertyArray has %u, or a name did not fit "
                              "its structure",
                              fn, n, PropertyArrayCount);
        else
                etw_set_error(ERROR_SUCCESS, NULL);
        return code;
}

void session_get_start_defaults(struct session_start_defaults *d)
{
        memset(d, 0, sizeof(*d));
        pthread_mutex_lock(&table_lock);
        d->pid = pending_pid;
        d->nr_sources = nr_pending_sources;
        memcpy(d->sources, pending_sources, nr_pending_sources * sizeof(uint32_t));
        for (uint32_t i = 0; i < NR_PROFILE_SOURCES; i++) {
                if (profile_intervals[i]) {
                        d->intervals[d->nr_intervals].source = i;
                        d->intervals[d->nr_intervals].interval = profile_intervals[i];
                        d->nr_intervals++;
                }
        }
        pthread_mutex_unlock(&table_lock);
}

uint32_t session_nr_sessions(void)
{
        uint32_t n = 0;
        pthread_mutex_lock(&table_lock);
        for (int i = 0; i < MAX_SESSIONS; i++)
                n += table[i] != NULL;
        pthread_mutex_unlock(&table_lock);
        return n;
}

void session_stop_all(void)
{
        for (;;) {
                struct session *s = NULL;
                pthread_mutex_lock(&table_lock);
                for (int i = 0; i < MAX_SESSIONS && !s; i++) {
                        if (table[i] && table[i]->state == SESSION_RUNNING) {
                                s = table[i];
                                s->nr_refs++;
                        }
                }
                pthread_mutex_unlock(&table_lock);
                if (!s)
                        break;
                if (session_claim_stop(s, NULL))
                        stop_session(s, NULL);
                session_unref(s);
        }
}

void session_after_fork(void)
{
        table_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
        ended_cond = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
        left_cond = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
}

/* etw_bind_session in the table's own process: a session of this table ends with it already;
   the handle is checked. */
static ULONG local_bind(CONTROLTRACE_ID id)
{
        struct {
                EVENT_TRACE_PROPERTIES p;
                char names[2048];
        } q;
        memset(&q, 0, sizeof(q));
        q.p.Wnode.BufferSize = sizeof(q);
        ULONG code = local_control(id, NULL, &q.p, EVENT_TRACE_CONTROL_QUERY, NULL);
        if (code != ERROR_SUCCESS)
                return code;
        etw_set_error(ERROR_SUCCESS, NULL);
        return ERROR_SUCCESS;
}

const struct session_ops session_local_ops = {
        .start = local_start,
        .control = local_control,
        .set_info = local_set_info,
        .query_info = local_query_info,
        .lbr = local_lbr,
        .query_all = local_query_all,
        .bind = local_bind,
        .keep_window = session_keep_window,
        .save_window = session_save_ring,
        .rt_header = session_rt_header,
        .rt_attach = session_rt_attach,
        .rt_next = session_rt_next,
        .rt_nr_lost = session_rt_nr_lost,
        .rt_error = session_rt_error,
        .rt_detach = session_rt_detach,
};
