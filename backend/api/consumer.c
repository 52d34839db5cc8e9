/* SPDX-License-Identifier: MIT */
/* consumer.c: the ETW consumer API: OpenTraceA, ProcessTrace, CloseTrace over the .etl reader. */
#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etw/etwtop_ext.h"
#include "etw/evntrace.h"
#include "etw/ntwmi.h"
#include "etl_parse.h"
#include "etl_reader.h"
#include "etw_error.h"
#include "etw_provider.h"
#include "perf_data_conv.h"
#include "session_api.h"
#include "util/kheap.h"

#define MAX_TRACE_HANDLES   1024
#define MAX_PROCESS_HANDLES 64 /* seed 001: up to 64 file handles */
#define HANDLE_BASE         0x10000u
/* How long a real-time ProcessTrace's reader waits for the next buffer before it looks again:
   the session's buffers, its end, its host's end and a CloseTrace (rt_wake) all end the wait,
   so this only bounds a wake that went astray (it was 100 ms, ten idle wake-ups a second of a
   screen's reader, each dear on a busy machine) */
#define RT_WAIT_MS 2000

struct trace_handle {
        bool is_in_use;
        bool is_realtime;
        bool is_processing;
        bool is_close_pending;
        uint32_t generation;
        EVENT_TRACE_LOGFILEA logfile; /* our copy; the callbacks get a pointer to it */
        EVENT_TRACE_LOGFILEA *caller; /* borrowed: the caller's struct, which must live until
                                         CloseTrace; ProcessTrace updates its counters */
        struct etl_reader *reader;    /* owned, file handles */
        char open_warning[256];       /* file handles: what was wrong with a perf.data file read
                                         up to its damage; "" if nothing */
        char *logger_name;            /* owned, real-time handles */
        WCHAR *header_names;          /* owned, real-time handles: the LoggerName and LogFileName
                                         LogfileHeader points at; NULL until it is filled */
        atomic_ulong nr_rt_buffers;   /* real-time: buffers delivered */
        atomic_ulong nr_rt_lost;      /* real-time: buffers this consumer lost */
        ETW_BUFFER_CALLBACK buffer_callback;    /* real-time: buffers handed over whole; NULL */
        ETW_HELD_BUFFER_CALLBACK held_callback; /* real-time: the same, held past the call */
        struct session_rt *held_rt; /* the stream ProcessTrace holds buffers of, while it runs */
        struct session_rt *live_rt; /* the stream ProcessTrace reads, while it runs: CloseTrace
                                       wakes its wait (rt_wake) */
};

static struct trace_handle handles[MAX_TRACE_HANDLES];
static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;
/* CloseTrace calls made while a ProcessTrace runs; read per event without the lock. */
static atomic_uint nr_close_requests;

static PROCESSTRACE_HANDLE handle_value(uint32_t slot)
{
        return ((uint64_t)handles[slot].generation << 32) | (HANDLE_BASE + slot);
}

/* The slot of a live handle, or -1. Called with handles_lock held. */
static int handle_slot(PROCESSTRACE_HANDLE h)
{
        uint32_t low = (uint32_t)h;
        if (low < HANDLE_BASE || low >= HANDLE_BASE + MAX_TRACE_HANDLES)
                return -1;
        uint32_t slot = low - HANDLE_BASE;
        if (!handles[slot].is_in_use || handles[slot].generation != (uint32_t)(h >> 32))
                return -1;
        return (int)slot;
}

static void handle_release(struct trace_handle *t)
{
        etl_reader_close(t->reader);
        free(t->logger_name);
        free(t->header_names);
        t->reader = NULL;
        t->logger_name = NULL;
        t->header_names = NULL;
        t->is_in_use = false;
        t->generation++;
}

static size_t wide_len(const WCHAR *w)
{
        size_t n = 0;
        while (w && w[n])
                n++;
        return n;
}

/* Fills lf's LogfileHeader, BufferSize and IsKernelTrace for a real-time session, as Windows
   does at OpenTrace: from the session's header buffer, read like a file's first buffer, so that
   it is the header event's payload; the values of info where that buffer does not read. The
   names are copied to *names (owned by the handle, which must not have any yet). Returns 0 or
   -ENOMEM. */
static int realtime_header(EVENT_TRACE_LOGFILEA *lf, const uint8_t *buf, uint32_t size,
                           const struct session_rt_info *info, WCHAR **names)
{
        TRACE_LOGFILE_HEADER *h = &lf->LogfileHeader;
        struct etl_reader *r = NULL;
        struct etl_error err;
        if (etl_reader_open_mem(&r, buf, size, &err) == 0) {
                const struct etl_logfile *f = etl_reader_logfile(r);
                size_t n1 = wide_len(f->logger_name_w) + 1;
                size_t n2 = wide_len(f->log_file_name_w) + 1;
                WCHAR *w = calloc(n1 + n2, sizeof(WCHAR));
                if (!w) {
                        etl_reader_close(r);
                        return -ENOMEM;
                }
                if (f->logger_name_w)
                        memcpy(w, f->logger_name_w, (n1 - 1) * sizeof(WCHAR));
                if (f->log_file_name_w)
                        memcpy(w + n1, f->log_file_name_w, (n2 - 1) * sizeof(WCHAR));
                *h = f->header;
                h->LoggerName = w;
                h->LogFileName = w + n1;
                *names = w;
                etl_reader_close(r);
        } else {
                memset(h, 0, sizeof(*h));
                h->BufferSize = info->buffer_size_bytes;
                h->NumberOfProcessors = info->nr_cpus;
                h->PointerSize = 8;
                h->PerfFreq.QuadPart = (LONGLONG)info->perf_freq;
                h->StartTime.QuadPart = info->start_filetime;
                h->BootTime.QuadPart = info->boot_filetime;
                h->ReservedFlags = info->clock_type;
        }
        /* the session's own mode (the writer records it without EVENT_TRACE_COMPRESSED_MODE) */
        h->LogFileMode = info->log_file_mode | EVENT_TRACE_REAL_TIME_MODE;
        h->EndTime.QuadPart = 0;
        lf->BufferSize = h->BufferSize;
        lf->IsKernelTrace = info->is_kernel;
        lf->CurrentTime = h->StartTime.QuadPart;
        lf->BuffersRead = 0;
        lf->EventsLost = 0;
        return 0;
}

PROCESSTRACE_HANDLE WMIAPI OpenTraceA(PEVENT_TRACE_LOGFILEA Logfile)
{
        if (!Logfile) {
                etw_set_error(ERROR_INVALID_PARAMETER, "OpenTrace: Logfile is NULL");
                return INVALID_PROCESSTRACE_HANDLE;
        }
        bool is_realtime = Logfile->ProcessTraceMode & PROCESS_TRACE_MODE_REAL_TIME;
        if (is_realtime && (!Logfile->LoggerName || !Logfile->LoggerName[0])) {
                etw_set_error(ERROR_BAD_PATHNAME,
                              "OpenTrace: a real-time consumer needs LoggerName");
                return INVALID_PROCESSTRACE_HANDLE;
        }
        if (!is_realtime && (!Logfile->LogFileName || !Logfile->LogFileName[0])) {
                etw_set_error(ERROR_BAD_PATHNAME,
                              "OpenTrace: neither LoggerName (with PROCESS_TRACE_MODE_REAL_TIME) "
                              "nor LogFileName is given");
                return INVALID_PROCESSTRACE_HANDLE;
        }

        struct etl_reader *reader = NULL;
        char open_warning[256] = "";
        char *logger_name = NULL;
        WCHAR *header_names = NULL;
        if (is_realtime) {
                logger_name = strdup(Logfile->LoggerName);
                /* a running session tells its header now; one that is not running yet is no
                   error here: ProcessTrace says ERROR_WMI_INSTANCE_NOT_FOUND (seed 001) */
                uint8_t *hbuf = NULL;
                uint32_t hsize = 0;
                struct session_rt_info info;
                int rc = logger_name
                                 ? etw_session_ops()->rt_header(logger_name, &hbuf, &hsize, &info)
                                 : -ENOMEM;
                if (rc == 0)
                        rc = realtime_header(Logfile, hbuf, hsize, &info, &header_names);
                free(hbuf);
                if (rc == -ENOMEM) {
                        free(logger_name);
                        etw_set_error(ERROR_NOT_ENOUGH_MEMORY, "OpenTrace: out of memory");
                        return INVALID_PROCESSTRACE_HANDLE;
                }
                if (rc == -EACCES) {
                        /* another user's sessions: the last error says whose */
                        free(logger_name);
                        return INVALID_PROCESSTRACE_HANDLE;
                }
        } else {
                struct etl_error err;
                int rc = perf_data_etl_reader_open(&reader, Logfile->LogFileName, &err);
                if (rc == 0 && err.msg[0])
                        snprintf(open_warning, sizeof(open_warning), "%.200s (byte offset %llu)",
                                 err.msg, (unsigned long long)err.offset);
                if (rc < 0) {
                        DWORD code = etw_error_from_errno(rc);
                        bool is_content = rc == -EINVAL || rc == -EBADMSG;
                        if (is_content)
                                code = ERROR_BAD_FORMAT;
                        /* the offset of what is wrong in the file; a file that cannot be
                           opened at all has none */
                        if (is_content)
                                etw_set_error(code, "%s (at byte offset %llu)", err.msg,
                                              (unsigned long long)err.offset);
                        else
                                etw_set_error(code, "%s", err.msg);
                        return INVALID_PROCESSTRACE_HANDLE;
                }
        }

        pthread_mutex_lock(&handles_lock);
        int slot = -1;
        for (int i = 0; i < MAX_TRACE_HANDLES; i++) {
                if (!handles[i].is_in_use) {
                        slot = i;
                        break;
                }
        }
        if (slot < 0) {
                pthread_mutex_unlock(&handles_lock);
                etl_reader_close(reader);
                free(logger_name);
                free(header_names);
                etw_set_error(ERROR_NOT_ENOUGH_MEMORY, "OpenTrace: too many open trace handles");
                return INVALID_PROCESSTRACE_HANDLE;
        }
        struct trace_handle *t = &handles[slot];
        t->is_in_use = true;
        t->is_realtime = is_realtime;
        t->is_processing = false;
        t->is_close_pending = false;
        atomic_store(&t->nr_rt_buffers, 0);
        atomic_store(&t->nr_rt_lost, 0);
        t->buffer_callback = NULL;
        t->held_callback = NULL;
        t->held_rt = NULL;
        t->reader = reader;
        snprintf(t->open_warning, sizeof(t->open_warning), "%s", open_warning);
        t->logger_name = logger_name;
        t->header_names = header_names;
        if (reader) {
                const struct etl_logfile *lf = etl_reader_logfile(reader);
                Logfile->LogfileHeader = lf->header;
                Logfile->BufferSize = lf->header.BufferSize;
                Logfile->BuffersRead = 0;
                Logfile->EventsLost = lf->header.EventsLost;
                Logfile->IsKernelTrace =
                        (lf->header.LogFileMode & EVENT_TRACE_SYSTEM_LOGGER_MODE) ||
                        strcmp(lf->logger_name, KERNEL_LOGGER_NAMEA) == 0;
                Logfile->CurrentTime = lf->header.StartTime.QuadPart;
        }
        t->logfile = *Logfile;
        t->caller = Logfile;
        PROCESSTRACE_HANDLE h = handle_value((uint32_t)slot);
        pthread_mutex_unlock(&handles_lock);
        etw_set_error(ERROR_SUCCESS, NULL);
        return h;
}

ULONG WMIAPI CloseTrace(PROCESSTRACE_HANDLE TraceHandle)
{
        pthread_mutex_lock(&handles_lock);
        int slot = handle_slot(TraceHandle);
        if (slot < 0 || handles[slot].is_close_pending) {
                pthread_mutex_unlock(&handles_lock);
                return ERROR_INVALID_HANDLE;
        }
        struct trace_handle *t = &handles[slot];
        if (t->is_processing) {
                /* ProcessTrace stops after the current event and releases the handle. */
                t->is_close_pending = true;
                atomic_fetch_add(&nr_close_requests, 1);
                if (t->live_rt)
                        etw_session_ops()->rt_wake(t->live_rt);
                pthread_mutex_unlock(&handles_lock);
                return ERROR_CTX_CLOSE_PENDING;
        }
        handle_release(t);
        pthread_mutex_unlock(&handles_lock);
        return ERROR_SUCCESS;
}

/* The state of one file while ProcessTrace merges it with the others. */
struct file_cursor {
        struct trace_handle *t;
        struct etl_reader *reader;
        int64_t next_filetime; /* of the record etl_reader_next gives next; INT64_MAX at end */
        uint32_t nr_buffers_done;
        uint64_t last_timestamp; /* raw, of the last record delivered */
        bool is_raw;
        bool is_event_record;
};

static void cursor_peek(struct file_cursor *c)
{
        uint64_t ts = etl_reader_peek_timestamp(c->reader);
        c->next_filetime = ts == UINT64_MAX ? INT64_MAX : etl_reader_to_filetime(c->reader, ts);
}

/* The provider GUIDs of the kernel hooks a loop met last, direct-mapped by hook: a kernel
   record's GUID is its hook group's (etw_provider_of_hook, out of line in backend/), and a
   session's records come from a few hooks, so a loop that looked one up keeps it rather than
   calling again for every record (0.6% of a replay's instructions). An empty entry's hook is
   HOOK_MEMO_EMPTY, which no 16-bit hook matches. */
#define HOOK_MEMO_SIZE  256
#define HOOK_MEMO_EMPTY UINT32_MAX

struct hook_memo {
        uint32_t hook[HOOK_MEMO_SIZE];
        const GUID *guid[HOOK_MEMO_SIZE];
};

static void hook_memo_init(struct hook_memo *m)
{
        for (uint32_t i = 0; i < HOOK_MEMO_SIZE; i++)
                m->hook[i] = HOOK_MEMO_EMPTY;
}

/* The hook's provider GUID (its group's, the image load's for 0x030A), or NULL for a hook no
   group has. A multiplicative hash spreads hooks whose low bits are alike (PerfInfo's 0x0F2E
   and Thread's 0x0524 would share a slot by their bytes' XOR); with 64 slots a replay's hooks
   still met in one slot for 12% of its records, with 256 they do not. */
static inline __attribute__((always_inline)) const GUID *hook_memo_get(struct hook_memo *m,
                                                                       uint16_t hook)
{
        uint32_t i = ((uint32_t)hook * 0x9E3779B1u) >> 24;
        if (m->hook[i] != hook) {
                m->hook[i] = hook;
                m->guid[i] = etw_provider_of_hook(hook);
        }
        return m->guid[i];
}

/* Builds the consumer's view of a record (ETL-FORMAT.md 2.9): the provider GUID from the hook's
   group (0x030A is the image load), opcode, version, pointer-size flags, inline PMC counters
   as extended items. Every byte of *er is written once, each field by the header type's case
   (no memset of the whole record first: it was a sixth of the instructions here); the record
   has no padding (evntcons.h's asserts), so the bytes are those of memset-then-fill. Inlined in
   each of its three loops (the files', a session's, a buffer's walk), as it was in the first two
   before the walk came: out of line, the reader's loop would pay a call a record. memo is the
   loop's kept kernel GUIDs, or NULL for a loop that keeps none (a buffer's walk: its state is
   the caller's struct). */
static inline __attribute__((always_inline)) void
fill_event_record(EVENT_RECORD *er, EVENT_HEADER_EXTENDED_DATA_ITEM *items,
                  const struct etl_record *rec, int64_t timestamp, PVOID context,
                  struct hook_memo *memo)
{
        EVENT_HEADER *eh = &er->EventHeader;
        eh->Size = (USHORT)rec->size_bytes;
        eh->HeaderType = rec->header_type;
        eh->ThreadId = rec->tid;
        eh->ProcessId = rec->pid;
        eh->TimeStamp.QuadPart = timestamp;
        eh->KernelTime = rec->kernel_time;
        eh->UserTime = rec->user_time;
        USHORT flags = (rec->pointer_size == 4 ? EVENT_HEADER_FLAG_32_BIT_HEADER
                                               : EVENT_HEADER_FLAG_64_BIT_HEADER) |
                       EVENT_HEADER_FLAG_PROCESSOR_INDEX;
        switch (rec->header_type) {
        case TRACE_HEADER_TYPE_EVENT_HEADER32:
        case TRACE_HEADER_TYPE_EVENT_HEADER64:
                memcpy(&eh->ProviderId, rec->guid, sizeof(GUID));
                memcpy(&eh->EventDescriptor, rec->data + 0x28, sizeof(EVENT_DESCRIPTOR));
                memcpy(&eh->ActivityId, rec->data + 0x40, sizeof(GUID));
                flags |= rec->flags &
                         ~(EVENT_HEADER_FLAG_32_BIT_HEADER | EVENT_HEADER_FLAG_64_BIT_HEADER);
                eh->EventProperty = (USHORT)(rec->data[6] | (rec->data[7] << 8));
                break;
        case TRACE_HEADER_TYPE_FULL_HEADER32:
        case TRACE_HEADER_TYPE_FULL_HEADER64:
        case TRACE_HEADER_TYPE_INSTANCE32:
        case TRACE_HEADER_TYPE_INSTANCE64:
                memcpy(&eh->ProviderId, rec->guid, sizeof(GUID));
                eh->EventDescriptor = (EVENT_DESCRIPTOR){
                        .Opcode = rec->opcode, .Level = rec->level, .Version = (UCHAR)rec->version};
                memset(&eh->ActivityId, 0, sizeof(GUID));
                flags |= EVENT_HEADER_FLAG_CLASSIC_HEADER;
                eh->EventProperty = 0;
                break;
        case TRACE_HEADER_TYPE_MESSAGE:
                /* a WPP message: its message GUID (none where a component id stands in) and its
                   number as the Id, flagged as TraceMessage's */
                if (rec->guid)
                        memcpy(&eh->ProviderId, rec->guid, sizeof(GUID));
                else
                        memset(&eh->ProviderId, 0, sizeof(GUID));
                eh->EventDescriptor = (EVENT_DESCRIPTOR){.Id = rec->hook_id};
                memset(&eh->ActivityId, 0, sizeof(GUID));
                flags |= EVENT_HEADER_FLAG_TRACE_MESSAGE;
                eh->EventProperty = 0;
                break;
        default: {
                const GUID *g = memo ? hook_memo_get(memo, rec->hook_id)
                                     : etw_provider_of_hook(rec->hook_id);
                if (g)
                        eh->ProviderId = *g;
                else
                        memset(&eh->ProviderId, 0, sizeof(GUID));
                eh->EventDescriptor =
                        (EVENT_DESCRIPTOR){.Opcode = rec->opcode, .Version = (UCHAR)rec->version};
                memset(&eh->ActivityId, 0, sizeof(GUID));
                flags |= EVENT_HEADER_FLAG_CLASSIC_HEADER;
                eh->EventProperty = 0;
                break;
        }
        }
        er->BufferContext.ProcessorIndex = rec->cpu;
        er->BufferContext.LoggerId = rec->logger_id;
        for (uint32_t i = 0; i < rec->nr_ext; i++) {
                items[i].Reserved1 = 0;
                items[i].ExtType = rec->ext[i].type;
                items[i].Linkage = 0;
                items[i].Reserved2 = 0;
                items[i].DataSize = rec->ext[i].size_bytes;
                items[i].DataPtr = (ULONGLONG)(uintptr_t)rec->ext[i].data;
        }
        if (rec->nr_ext)
                flags |= EVENT_HEADER_FLAG_EXTENDED_INFO;
        eh->Flags = flags;
        er->ExtendedDataCount = (USHORT)rec->nr_ext;
        er->ExtendedData = rec->nr_ext ? items : NULL;
        er->UserDataLength = (USHORT)rec->payload_size;
        er->UserData = (PVOID)rec->payload;
        er->UserContext = context;
}

/* The classic form for EventCallback consumers. */
static void fill_event_trace(EVENT_TRACE *ev, const EVENT_RECORD *er, const struct etl_record *rec)
{
        memset(ev, 0, sizeof(*ev));
        ev->Header.Size = (USHORT)(sizeof(EVENT_TRACE_HEADER) + rec->payload_size);
        ev->Header.HeaderType = rec->header_type;
        ev->Header.MarkerFlags = 0xC0;
        ev->Header.Class.Type = er->EventHeader.EventDescriptor.Opcode;
        ev->Header.Class.Level = er->EventHeader.EventDescriptor.Level;
        ev->Header.Class.Version = rec->version;
        ev->Header.ThreadId = rec->tid;
        ev->Header.ProcessId = rec->pid;
        ev->Header.TimeStamp = er->EventHeader.TimeStamp;
        ev->Header.Guid = er->EventHeader.ProviderId;
        ev->Header.KernelTime = rec->kernel_time;
        ev->Header.UserTime = rec->user_time;
        ev->MofData = er->UserData;
        ev->MofLength = er->UserDataLength;
        ev->BufferContext = er->BufferContext;
}

/* The buffers c's reader finished since the last call, each to BufferCallback; false when it
   asks to stop. The check runs per record: inline, the calls only when a buffer ended. */
static bool buffer_callbacks_due(struct file_cursor *c, uint32_t done);

static inline bool call_buffer_callbacks(struct file_cursor *c)
{
        uint32_t done = etl_reader_nr_buffers_done(c->reader);
        return c->nr_buffers_done == done || buffer_callbacks_due(c, done);
}

static bool buffer_callbacks_due(struct file_cursor *c, uint32_t done)
{
        struct etl_reader_stats st;
        etl_reader_get_stats(c->reader, &st);
        EVENT_TRACE_LOGFILEA *lf = &c->t->logfile;
        lf->CurrentTime = etl_reader_to_filetime(c->reader, c->last_timestamp);
        while (c->nr_buffers_done < done) {
                c->nr_buffers_done++;
                lf->BuffersRead = c->nr_buffers_done;
                lf->Filled = lf->BufferSize;
                lf->EventsLost = (ULONG)st.nr_events_lost;
                if (lf->BufferCallback && !lf->BufferCallback(lf))
                        return false;
        }
        return true;
}

/* FILETIME of a raw timestamp of a real-time session, by its clock. */
static int64_t realtime_filetime(const struct session_rt_info *in, uint64_t ts)
{
        int64_t d = (int64_t)(ts - in->start_timestamp);
        int64_t freq = (int64_t)in->perf_freq;
        if (freq <= 0)
                return in->start_filetime;
        return in->start_filetime + d / freq * 10000000 + d % freq * 10000000 / freq;
}

/* Delivers the buffers of the session named in t, as the session completes them, until it
   stops (ERROR_SUCCESS), the BufferCallback returns FALSE (ERROR_CANCELLED) or CloseTrace is
   called on the handle. The session table (core/session_rt.c) queues the buffers for this consumer,
   the header buffer first; each is parsed by the reader's standalone-buffer entry, like a
   file's, and timestamped by the consumer's mode: raw, or FILETIME by the session's clock.
   *is_header_new says that LogfileHeader was filled here, not at OpenTrace. */
static ULONG process_realtime(struct trace_handle *t, bool *is_header_new)
{
        const struct session_ops *ops = etw_session_ops();
        struct session_rt *rt = NULL;
        struct session_rt_info info;
        int rc = ops->rt_attach(t->logger_name, &rt, &info);
        if (rc == -ENOMEM) {
                etw_set_error(ERROR_NOT_ENOUGH_MEMORY, "ProcessTrace: out of memory");
                return ERROR_NOT_ENOUGH_MEMORY;
        }
        if (rc == -EACCES)
                return ERROR_ACCESS_DENIED; /* the last error says whose sessions they are */
        if (rc < 0) {
                etw_set_error(ERROR_WMI_INSTANCE_NOT_FOUND,
                              "ProcessTrace: no real-time session named \"%s\" is running "
                              "(started with EVENT_TRACE_REAL_TIME_MODE)",
                              t->logger_name);
                return ERROR_WMI_INSTANCE_NOT_FOUND;
        }
        EVENT_TRACE_LOGFILEA *lf = &t->logfile;
        /* the session was not running at OpenTrace: its header is the first buffer */
        bool needs_header = !t->header_names;
        lf->BuffersRead = 0;
        lf->CurrentTime = info.start_filetime;
        bool is_raw = lf->ProcessTraceMode & PROCESS_TRACE_MODE_RAW_TIMESTAMP;
        bool is_event_record = lf->ProcessTraceMode & PROCESS_TRACE_MODE_EVENT_RECORD;
        /* set before ProcessTrace, which etw_realtime_set_buffer_callback refuses to race */
        ETW_BUFFER_CALLBACK on_whole_buffer = t->buffer_callback;
        ETW_HELD_BUFFER_CALLBACK on_held = t->held_callback;
        /* buffers held where the stream can keep them (the host's ring), else copied */
        bool is_held = on_held && ops->rt_hold && ops->rt_hold(rt);
        pthread_mutex_lock(&handles_lock);
        if (is_held)
                t->held_rt = rt;
        t->live_rt = rt;
        /* the closes from here are seen by their count; one made before (between ProcessTrace's
           start and here) is seen by the first look, which that count would miss */
        unsigned closes_seen = atomic_load(&nr_close_requests) - (t->is_close_pending ? 1u : 0u);
        if (t->is_close_pending)
                ops->rt_wake(rt); /* and its wake, which found no stream */
        pthread_mutex_unlock(&handles_lock);

        EVENT_RECORD er;
        EVENT_TRACE ev;
        EVENT_HEADER_EXTENDED_DATA_ITEM items[ETL_MAX_EXT_ITEMS];
        struct etl_record rec;
        struct hook_memo memo;
        hook_memo_init(&memo);
        ULONG result = ERROR_SUCCESS;
        for (;;) {
                const uint8_t *buf;
                uint32_t size;
                int n = ops->rt_next(rt, RT_WAIT_MS, &buf, &size);
                if (n == 0)
                        break; /* the session stopped and everything was delivered */
                if (n < 0 && n != -EAGAIN) {
                        /* the session host went away: its sessions with it */
                        result = ERROR_BROKEN_PIPE;
                        etw_set_error(result, "ProcessTrace: %s", ops->rt_error(rt));
                        break;
                }
                atomic_store(&t->nr_rt_lost, ops->rt_nr_lost(rt));
                if (n == 1 && needs_header) {
                        needs_header = false;
                        if (realtime_header(lf, buf, size, &info, &t->header_names) < 0) {
                                result = ERROR_NOT_ENOUGH_MEMORY;
                                etw_set_error(result, "ProcessTrace: out of memory");
                                break;
                        }
                        *is_header_new = true;
                }
                if (n == 1 && on_held) {
                        on_held(lf->Context, buf, size, is_held ? ops->rt_held_id(rt) : 0);
                } else if (n == 1 && on_whole_buffer) {
                        /* its records are read where it goes: CurrentTime stays at the start */
                        on_whole_buffer(lf->Context, buf, size);
                } else if (n == 1) {
                        uint32_t pos = 0;
                        uint64_t last_ts = 0;
                        bool has_last = false;
                        while (etl_buffer_next(buf, size, &pos, &rec) == 1) {
                                /* FILETIME only when asked for: its divisions cost more than
                                   the rest of a record's delivery (CurrentTime is set below) */
                                int64_t ts = is_raw ? (int64_t)rec.timestamp
                                                    : realtime_filetime(&info, rec.timestamp);
                                last_ts = rec.timestamp;
                                has_last = true;
                                fill_event_record(&er, items, &rec, ts, lf->Context, &memo);
                                if (is_event_record) {
                                        if (lf->EventRecordCallback)
                                                lf->EventRecordCallback(&er);
                                } else if (lf->EventCallback) {
                                        fill_event_trace(&ev, &er, &rec);
                                        lf->CurrentEvent = ev;
                                        lf->EventCallback(&ev);
                                }
                        }
                        if (has_last)
                                lf->CurrentTime = realtime_filetime(&info, last_ts);
                }
                if (n == 1) {
                        lf->BuffersRead++;
                        atomic_fetch_add(&t->nr_rt_buffers, 1);
                        lf->Filled = size;
                        if (lf->BufferCallback && !lf->BufferCallback(lf)) {
                                result = ERROR_CANCELLED;
                                break;
                        }
                }
                if (atomic_load(&nr_close_requests) != closes_seen) {
                        closes_seen = atomic_load(&nr_close_requests);
                        pthread_mutex_lock(&handles_lock);
                        bool is_closing = t->is_close_pending;
                        pthread_mutex_unlock(&handles_lock);
                        if (is_closing)
                                break;
                }
        }
        /* the buffers held stay mapped until the consumer is done with them, or closes */
        while (is_held && !ops->rt_wait_released(rt, 100)) {
                pthread_mutex_lock(&handles_lock);
                bool is_closing = t->is_close_pending;
                pthread_mutex_unlock(&handles_lock);
                if (is_closing)
                        break;
        }
        pthread_mutex_lock(&handles_lock);
        t->held_rt = NULL;
        t->live_rt = NULL;
        pthread_mutex_unlock(&handles_lock);
        ops->rt_detach(rt);
        return result;
}

/* A cursor's next FILETIME as a key of the merge's heap: the sign bit flipped, so that the
   heap's unsigned order is the signed one. */
static uint64_t filetime_key(int64_t filetime)
{
        return (uint64_t)filetime ^ (1ull << 63);
}

static ULONG process_files(struct file_cursor *cur, ULONG n, const int64_t *start,
                           const int64_t *end)
{
        EVENT_RECORD er;
        EVENT_TRACE ev;
        EVENT_HEADER_EXTENDED_DATA_ITEM items[ETL_MAX_EXT_ITEMS];
        struct hook_memo memo;
        hook_memo_init(&memo);
        unsigned closes_seen = atomic_load(&nr_close_requests);
        for (ULONG i = 0; i < n; i++) {
                etl_reader_rewind(cur[i].reader);
                cur[i].last_timestamp = etl_reader_logfile(cur[i].reader)->start_timestamp;
                cur[i].nr_buffers_done = 0;
                cursor_peek(&cur[i]);
        }
        /* several files: a heap of the files with records, by next FILETIME (a tie goes to the
           file named first); a file at its end (INT64_MAX) leaves it. The oldest file's records
           are taken while they stay the oldest (up to the heap's run limit), then the heap
           chooses again. A single file needs no choice. */
        struct kheap heap = {NULL, 0, 0};
        if (n > 1) {
                if (kheap_init(&heap, n) < 0) {
                        etw_set_error(ERROR_NOT_ENOUGH_MEMORY, "ProcessTrace: out of memory");
                        return ERROR_NOT_ENOUGH_MEMORY;
                }
                for (ULONG i = 0; i < n; i++)
                        if (cur[i].next_filetime != INT64_MAX)
                                kheap_push(&heap, filetime_key(cur[i].next_filetime), i);
        }
        ULONG result = ERROR_SUCCESS;
        struct file_cursor *c = &cur[0];
        uint64_t limit = UINT64_MAX; /* c is the oldest while its next key is at most this */
        bool is_choice_due = n > 1;
        for (;;) {
                if (is_choice_due) {
                        if (kheap_empty(&heap))
                                break;
                        c = &cur[kheap_top(&heap).src];
                        limit = kheap_run_limit(&heap);
                        is_choice_due = false;
                }
                const struct etl_record *rec = etl_reader_next_ref(c->reader);
                if (!rec)
                        break;
                /* FILETIME only where it is needed: filters, FILETIME mode */
                bool needs_filetime = start || end || !c->is_raw;
                int64_t ft = needs_filetime ? etl_reader_to_filetime(c->reader, rec->timestamp) : 0;
                bool is_wanted =
                        rec->is_header || ((!start || ft >= *start) && (!end || ft <= *end));
                struct trace_handle *t = c->t;
                c->last_timestamp = rec->timestamp;
                if (is_wanted) {
                        int64_t ts = c->is_raw ? (int64_t)rec->timestamp : ft;
                        fill_event_record(&er, items, rec, ts, t->logfile.Context, &memo);
                        if (c->is_event_record) {
                                if (t->logfile.EventRecordCallback)
                                        t->logfile.EventRecordCallback(&er);
                        } else if (t->logfile.EventCallback) {
                                fill_event_trace(&ev, &er, rec);
                                t->logfile.CurrentEvent = ev;
                                t->logfile.EventCallback(&ev);
                        }
                }
                /* only now: peeking advances the reader, which ends rec's life */
                if (n > 1) {
                        cursor_peek(c);
                        if (c->next_filetime == INT64_MAX) {
                                kheap_pop(&heap);
                                is_choice_due = true;
                        } else if (filetime_key(c->next_filetime) > limit) {
                                kheap_replace_top(&heap, filetime_key(c->next_filetime));
                                is_choice_due = true;
                        }
                }
                if (!call_buffer_callbacks(c)) {
                        result = ERROR_CANCELLED;
                        goto free_heap;
                }
                if (atomic_load_explicit(&nr_close_requests, memory_order_relaxed) != closes_seen) {
                        closes_seen = atomic_load(&nr_close_requests);
                        pthread_mutex_lock(&handles_lock);
                        bool is_closing = false;
                        for (ULONG i = 0; i < n; i++)
                                is_closing |= cur[i].t->is_close_pending;
                        pthread_mutex_unlock(&handles_lock);
                        if (is_closing)
                                goto free_heap;
                }
        }
        for (ULONG i = 0; i < n; i++) {
                cur[i].t->logfile.CurrentTime =
                        etl_reader_to_filetime(cur[i].reader, cur[i].last_timestamp);
                if (!call_buffer_callbacks(&cur[i])) {
                        result = ERROR_CANCELLED;
                        goto free_heap;
                }
        }
free_heap:
        kheap_free(&heap);
        return result;
}

ULONG WMIAPI ProcessTrace(PROCESSTRACE_HANDLE *HandleArray, ULONG HandleCount, LPFILETIME StartTime,
                          LPFILETIME EndTime)
{
        if (!HandleArray) {
                etw_set_error(ERROR_INVALID_PARAMETER, "ProcessTrace: HandleArray is NULL");
                return ERROR_INVALID_PARAMETER;
        }
        if (HandleCount == 0 || HandleCount > MAX_PROCESS_HANDLES) {
                etw_set_error(ERROR_BAD_LENGTH, "ProcessTrace: HandleCount %u is not 1..64",
                              HandleCount);
                return ERROR_BAD_LENGTH;
        }
        int64_t start = 0, end = 0;
        if (StartTime)
                start = (int64_t)(((uint64_t)StartTime->dwHighDateTime << 32) |
                                  StartTime->dwLowDateTime);
        if (EndTime)
                end = (int64_t)(((uint64_t)EndTime->dwHighDateTime << 32) | EndTime->dwLowDateTime);

        struct file_cursor cur[MAX_PROCESS_HANDLES];
        ULONG nr_realtime = 0, nr_files = 0;
        pthread_mutex_lock(&handles_lock);
        for (ULONG i = 0; i < HandleCount; i++) {
                int slot = handle_slot(HandleArray[i]);
                if (slot < 0 || handles[slot].is_close_pending) {
                        pthread_mutex_unlock(&handles_lock);
                        etw_set_error(ERROR_INVALID_HANDLE,
                                      "ProcessTrace: element %u is not an open trace handle", i);
                        return ERROR_INVALID_HANDLE;
                }
                for (ULONG j = 0; j < i; j++) {
                        if (HandleArray[j] == HandleArray[i]) {
                                pthread_mutex_unlock(&handles_lock);
                                etw_set_error(ERROR_INVALID_PARAMETER,
                                              "ProcessTrace: handle %u appears twice", i);
                                return ERROR_INVALID_PARAMETER;
                        }
                }
                struct trace_handle *t = &handles[slot];
                if (t->is_processing) {
                        pthread_mutex_unlock(&handles_lock);
                        etw_set_error(ERROR_BUSY, "ProcessTrace: handle %u is being processed", i);
                        return ERROR_BUSY;
                }
                if (t->is_realtime)
                        nr_realtime++;
                else
                        nr_files++;
                cur[i] = (struct file_cursor){
                        .t = t,
                        .reader = t->reader,
                        .is_raw = t->logfile.ProcessTraceMode & PROCESS_TRACE_MODE_RAW_TIMESTAMP,
                        .is_event_record =
                                t->logfile.ProcessTraceMode & PROCESS_TRACE_MODE_EVENT_RECORD,
                };
        }
        if (nr_realtime && (nr_files || nr_realtime > 1)) {
                pthread_mutex_unlock(&handles_lock);
                etw_set_error(ERROR_INVALID_PARAMETER,
                              nr_files ? "ProcessTrace: file and real-time handles mixed"
                                       : "ProcessTrace: more than one real-time handle");
                return ERROR_INVALID_PARAMETER;
        }
        if (StartTime && EndTime && end < start) {
                pthread_mutex_unlock(&handles_lock);
                etw_set_error(ERROR_INVALID_TIME, "ProcessTrace: EndTime is before StartTime");
                return ERROR_INVALID_TIME;
        }
        for (ULONG i = 0; i < HandleCount; i++)
                cur[i].t->is_processing = true;
        pthread_mutex_unlock(&handles_lock);

        bool is_header_new = false;
        ULONG rc = nr_realtime ? process_realtime(cur[0].t, &is_header_new)
                               : process_files(cur, HandleCount, StartTime ? &start : NULL,
                                               EndTime ? &end : NULL);

        pthread_mutex_lock(&handles_lock);
        for (ULONG i = 0; i < HandleCount; i++) {
                struct trace_handle *t = cur[i].t;
                t->is_processing = false;
                if (!t->is_close_pending) {
                        t->caller->BuffersRead = t->logfile.BuffersRead;
                        t->caller->CurrentTime = t->logfile.CurrentTime;
                        t->caller->EventsLost = t->logfile.EventsLost;
                        if (is_header_new) {
                                /* what OpenTrace could not tell: the session started since */
                                t->caller->LogfileHeader = t->logfile.LogfileHeader;
                                t->caller->BufferSize = t->logfile.BufferSize;
                                t->caller->IsKernelTrace = t->logfile.IsKernelTrace;
                        }
                }
                if (t->is_close_pending)
                        handle_release(t);
        }
        pthread_mutex_unlock(&handles_lock);
        if (rc == ERROR_CANCELLED)
                etw_set_error(ERROR_CANCELLED, "ProcessTrace: the BufferCallback returned FALSE");
        return rc;
}

/* The buffer callbacks' setter: one of them, the other taken away. */
static ULONG set_buffer_callback(PROCESSTRACE_HANDLE TraceHandle, ETW_BUFFER_CALLBACK Callback,
                                 ETW_HELD_BUFFER_CALLBACK Held, const char *fn)
{
        const ULONG mode = PROCESS_TRACE_MODE_EVENT_RECORD | PROCESS_TRACE_MODE_RAW_TIMESTAMP;
        pthread_mutex_lock(&handles_lock);
        int slot = handle_slot(TraceHandle);
        ULONG rc = ERROR_SUCCESS;
        if (slot < 0 || handles[slot].is_close_pending) {
                rc = ERROR_INVALID_HANDLE;
                etw_set_error(rc, "%s: not an open trace handle", fn);
        } else if (!handles[slot].is_realtime ||
                   (handles[slot].logfile.ProcessTraceMode & mode) != mode) {
                rc = ERROR_INVALID_PARAMETER;
                etw_set_error(rc,
                              "%s: the handle is not a real-time one opened with "
                              "PROCESS_TRACE_MODE_EVENT_RECORD | PROCESS_TRACE_MODE_RAW_TIMESTAMP",
                              fn);
        } else if (handles[slot].is_processing) {
                rc = ERROR_BUSY;
                etw_set_error(rc, "%s: ProcessTrace runs", fn);
        } else {
                handles[slot].buffer_callback = Callback;
                handles[slot].held_callback = Held;
                etw_set_error(ERROR_SUCCESS, NULL);
        }
        pthread_mutex_unlock(&handles_lock);
        return rc;
}

ULONG etw_realtime_set_buffer_callback(PROCESSTRACE_HANDLE TraceHandle,
                                       ETW_BUFFER_CALLBACK Callback)
{
        return set_buffer_callback(TraceHandle, Callback, NULL, "etw_realtime_set_buffer_callback");
}

ULONG etw_realtime_set_held_buffer_callback(PROCESSTRACE_HANDLE TraceHandle,
                                            ETW_HELD_BUFFER_CALLBACK Callback)
{
        return set_buffer_callback(TraceHandle, NULL, Callback,
                                   "etw_realtime_set_held_buffer_callback");
}

ULONG etw_realtime_release_buffers(PROCESSTRACE_HANDLE TraceHandle, ULONG64 HoldId)
{
        const struct session_ops *ops = etw_session_ops();
        pthread_mutex_lock(&handles_lock);
        int slot = handle_slot(TraceHandle);
        ULONG rc = ERROR_SUCCESS;
        if (slot < 0 || !handles[slot].is_realtime) {
                rc = ERROR_INVALID_HANDLE;
                etw_set_error(rc, "etw_realtime_release_buffers: not an open real-time handle");
        } else {
                /* none held (a stream that ended, or never held any): nothing to give back */
                if (handles[slot].held_rt && HoldId)
                        ops->rt_release(handles[slot].held_rt, HoldId);
                etw_set_error(ERROR_SUCCESS, NULL);
        }
        pthread_mutex_unlock(&handles_lock);
        return rc;
}

_Static_assert(ETW_BUFFER_MAX_EXT_ITEMS == ETL_MAX_EXT_ITEMS, "a record's items fit the walk's");

BOOL etw_buffer_next_record(struct etw_buffer_walk *Walk, PEVENT_RECORD Record)
{
        const uint8_t *buf = Walk->Buffer;
        if (Walk->Position == 0) {
                /* the header once a buffer; where it is no buffer's, End 0 ends the walk */
                Walk->End = etl_buffer_filled(buf, Walk->Size);
                Walk->Position = WMI_BUFFER_HEADER_SIZE;
                if (Walk->End) {
                        Walk->ProcessorIndex =
                                le_get16(buf + BUF_PROC_INDEX_OFF) & ETW_PROCESSOR_INDEX_MASK;
                        Walk->LoggerId = le_get16(buf + BUF_LOGGER_ID_OFF);
                }
        }
        struct etl_record rec;
        /* no error text: the end of every buffer comes here, on the consumer's hot path */
        if (etl_buffer_next_inline(buf, Walk->End, &Walk->Position, &rec) != 1)
                return FALSE;
        rec.cpu = Walk->ProcessorIndex;
        rec.logger_id = Walk->LoggerId;
        fill_event_record(Record, Walk->Items, &rec, (int64_t)rec.timestamp, Walk->Context, NULL);
        return TRUE;
}

ULONG etw_trace_get_stats(PROCESSTRACE_HANDLE TraceHandle, struct etw_trace_stats *stats)
{
        if (!stats)
                return ERROR_INVALID_PARAMETER;
        pthread_mutex_lock(&handles_lock);
        int slot = handle_slot(TraceHandle);
        if (slot < 0) {
                pthread_mutex_unlock(&handles_lock);
                return ERROR_INVALID_HANDLE;
        }
        struct trace_handle *t = &handles[slot];
        if (!t->reader) {
                pthread_mutex_unlock(&handles_lock);
                return ERROR_INVALID_PARAMETER;
        }
        struct etl_reader_stats st;
        etl_reader_get_stats(t->reader, &st);
        const struct etl_error *w = etl_reader_last_warning(t->reader);
        memset(stats, 0, sizeof(*stats));
        stats->nr_buffers = st.nr_buffers;
        stats->nr_buffers_compressed = st.nr_buffers_compressed;
        stats->nr_buffers_damaged = st.nr_buffers_damaged;
        stats->nr_cpus = st.nr_cpus;
        stats->nr_records = st.nr_records;
        stats->nr_records_skipped = st.nr_records_skipped;
        stats->nr_events_lost = st.nr_events_lost;
        stats->nr_inflate_workers = st.nr_inflate_workers;
        stats->nr_buffers_inflated_ahead = st.nr_inflated_ahead;
        stats->nr_buffers_inflated_here = st.nr_inflated_here;
        if (w->msg[0])
                snprintf(stats->last_warning, sizeof(stats->last_warning),
                         "%.200s (byte offset %llu)", w->msg, (unsigned long long)w->offset);
        else if (t->open_warning[0]) /* a perf.data file read up to its damage */
                snprintf(stats->last_warning, sizeof(stats->last_warning), "%s", t->open_warning);
        pthread_mutex_unlock(&handles_lock);
        return ERROR_SUCCESS;
}

ULONG consumer_rt_state(PROCESSTRACE_HANDLE h, struct session_rt_state *st, uint64_t *seq)
{
        const struct session_ops *ops = etw_session_ops();
        pthread_mutex_lock(&handles_lock);
        int slot = handle_slot(h);
        /* the stream stays while the lock is held (ProcessTrace unsets it under it first) */
        ULONG code = slot < 0                     ? ERROR_INVALID_HANDLE
                     : !handles[slot].is_realtime ? ERROR_INVALID_PARAMETER
                     : handles[slot].live_rt && ops->rt_state &&
                                     ops->rt_state(handles[slot].live_rt, st, seq) == 0
                             ? ERROR_SUCCESS
                             : ERROR_NOT_SUPPORTED;
        pthread_mutex_unlock(&handles_lock);
        return code;
}

ULONG etw_realtime_get_stats(PROCESSTRACE_HANDLE TraceHandle, ULONG64 *nr_buffers_read,
                             ULONG64 *nr_buffers_lost)
{
        if (!nr_buffers_read || !nr_buffers_lost)
                return ERROR_INVALID_PARAMETER;
        pthread_mutex_lock(&handles_lock);
        int slot = handle_slot(TraceHandle);
        if (slot < 0) {
                pthread_mutex_unlock(&handles_lock);
                return ERROR_INVALID_HANDLE;
        }
        struct trace_handle *t = &handles[slot];
        bool is_realtime = t->is_realtime;
        *nr_buffers_read = atomic_load(&t->nr_rt_buffers);
        *nr_buffers_lost = atomic_load(&t->nr_rt_lost);
        pthread_mutex_unlock(&handles_lock);
        return is_realtime ? ERROR_SUCCESS : ERROR_INVALID_PARAMETER;
}
