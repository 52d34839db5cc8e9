/* SPDX-License-Identifier: MIT */
/* feed.c: owns the consumer of the screen and the reports: OpenTrace, ProcessTrace (on its own
   thread or the caller's), the decoder, and for the screen the hand-over between the two
   threads: the feed's thread copies each of a live session's buffers whole (each record of a
   file's) into a single-producer/single-consumer queue, the screen's thread reads their records
   and decodes them into the model, which only it touches. */
#include "feed.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "etw/etwtop_ext.h"
#include "etw/ntwmi.h"
#include "kdecoder.h"
#include "kevent.h"
#include "model/profile.h"
#include "util/clock.h"
#include "util/prefetch.h"
#include "util/spsc.h"
#include "util/xalloc.h"
#include "util/thread_sched.h"

/* The queue between the threads: 128 of a session's 64 KiB buffers (copied where the session
   cannot lend them, a session of this process; the host's stay held in its ring and only their
   places are queued). The screen takes what is there at each turn of its loop; a backlog (a
   file read faster than it is decoded) fills it and the feed's thread waits, rather than lose
   records, until the consumer has emptied half of it (so that both threads work while a file
   loads, and the feed's wakes are few). Live, the session host queues this consumer's buffers
   meanwhile (up to the session's max_buffers; past that it counts them lost, and the header
   shows it): the session itself never waits. */
#define FEED_QUEUE_BYTES ((size_t)8 << 20)
/* A waiting feed looks at feed_close's flag this often (ms). */
#define FEED_CLOSE_POLL_MS 100
/* Records copied between two hand-overs at most: the end of each buffer hands its records over
   (as the model's lock was let go after each buffer: a frame never has half a buffer unless the
   queue fills), and so does every FEED_RUN-th record. */
#define FEED_RUN 4096
/* Records decoded between two readings of the clock in feed_drain. */
#define FEED_CLOCK_EVERY 64
/* A buffer's records built ahead of the one decoded: a timer sample's memory is asked for in
   two steps while the records before it are decoded (walk_prefetch), the first three records
   ahead, the second two. With a sample and its stack in turn, a step and the next are a stack's
   decode apart; with the steps two and one records ahead, the first had only a sample's decode
   to come in, and the second step's load of what it asked for was the walk's slowest line (the
   screen's main thread 546 against 578 ns a sample, bench/README.md, stop 72). The far step now
   four records ahead, a sample and its stack more: on a VM whose memory took ~200 ns a load,
   the drain 2,283 -> 2,038 ns a sample (4 runs of each in turn, bench/README.md, stop 84). */
#define FEED_AHEAD 6
/* Where, among the records built ahead after one is handed out, a timer sample's frame memo slot
   is asked for (the far step), and then the place it holds (the near one). */
#define FEED_FAR_AT  4
#define FEED_NEAR_AT 1

struct feed {
        struct profile *profile;  /* borrowed: the thread that drains (feed_run's caller when
                                     there is no queue) is the only one that touches it */
        struct kdecoder *decoder; /* owned: the read-ahead fills it on the feed's thread before
                                     the first record is handed over, the drain uses it after */
        struct spsc *queue;       /* owned: the copied records; NULL when read by feed_run */
        int wake_fd;              /* owned: an eventfd, readable once records were handed over
                                     (or the thread ended) while the consumer slept; -1 */
        int room_fd;              /* owned: an eventfd, readable once the consumer emptied
                                     half the queue the feed's thread waits on; -1 */
        atomic_bool is_sleeping;  /* the consumer armed wake_fd (feed_arm) */
        atomic_bool is_waiting;   /* the feed's thread waits on room_fd */
        atomic_bool is_closing;   /* feed_close: a producer waiting for room gives up */
        PROCESSTRACE_HANDLE handle;
        EVENT_TRACE_LOGFILEA lf; /* OpenTrace's: ProcessTrace writes back into it */
        char name[1024];         /* the file or the session */
        bool is_file;
        bool is_perf_data; /* the file is a perf.data (read converted) */
        pthread_t thread;
        bool has_thread;
        size_t max_message; /* the queue's largest message (spsc_max_message), read once */
        /* A live session's queue holds its buffers whole (etw_realtime_set_buffer_callback): a
           buffer's copy, where each record's was 115 instructions and its 100-odd bytes written
           on one core to be read on the other; a file's holds records (its reader merges files
           and skips damage, record by record). */
        bool is_buffers;
        bool is_walking;             /* the consumer reads the queue's oldest buffer (walk) */
        bool is_populated;           /* the queue's pages made (at the first buffer copied) */
        uint64_t walk_hold;          /* the walk's buffer is held, with this id; 0: copied */
        struct etw_buffer_walk walk; /* the consumer's: where the next record to build is */
        uint32_t walk_prefetch_pos;  /* the walk's buffer's lines before it were asked for */
        /* The walk's records built ahead of the one handed out (the timer samples among them
           asked of memory: walk_prefetch), each with its walk (its extended items): the next
           to hand out at ahead[ahead_at], nr_ahead of them; walk_end: the buffer has no more. */
        struct etw_buffer_walk ahead_walk[FEED_AHEAD];
        EVENT_RECORD ahead[FEED_AHEAD];
        bool is_far_asked[FEED_AHEAD]; /* the record's far step taken (walk_prefetch) */
        uint32_t ahead_at, nr_ahead;
        bool is_walk_end;
        uint32_t nr_run;        /* records copied since the last hand-over (feed's thread) */
        uint32_t slice_records; /* feed_drain's records at most per call (0: no limit) */
        uint64_t nr_decoded;    /* records taken from the queue and decoded (consumer's) */
        atomic_bool is_done;    /* ProcessTrace returned, everything handed over */
        bool is_done_seen;      /* the consumer saw it (feed_is_done said so) */
        atomic_uint_fast64_t nr_buffers_read;
        atomic_uint_fast64_t nr_dropped; /* records that did not fit the queue */
        uint64_t nr_buffers;
        ULONG status;
        struct etw_realtime_session_state state; /* feed_session_state's answer */
};

static void on_event(void *ctx, const struct kevent *ev)
{
        profile_event(ctx, ev);
}

/* A feed read on the caller's thread (feed_run without feed_start): decoded at once. */
static VOID WINAPI on_record(PEVENT_RECORD rec)
{
        struct feed *f = rec->UserContext;
        kdecoder_decode(f->decoder, rec, on_event, f->profile);
}

/* ---- the hand-over (the feed's thread) ---- */

static size_t round8(size_t n)
{
        return (n + 7) & ~(size_t)7;
}

/* A record's copy: the EVENT_RECORD, its extended data items, each item's data, the user
   data, each 8-byte aligned; its pointers aim into the copy. */
static size_t record_size(const EVENT_RECORD *rec)
{
        size_t n = sizeof(*rec);
        if (rec->ExtendedData) {
                n += (size_t)rec->ExtendedDataCount * sizeof(rec->ExtendedData[0]);
                for (USHORT i = 0; i < rec->ExtendedDataCount; i++)
                        if (rec->ExtendedData[i].DataPtr)
                                n += round8(rec->ExtendedData[i].DataSize);
        }
        if (rec->UserData)
                n += round8(rec->UserDataLength);
        return n;
}

static void record_copy(uint8_t *to, const EVENT_RECORD *rec)
{
        EVENT_RECORD *c = (EVENT_RECORD *)to;
        *c = *rec;
        uint8_t *at = to + sizeof(*c);
        if (rec->ExtendedData) {
                EVENT_HEADER_EXTENDED_DATA_ITEM *items = (EVENT_HEADER_EXTENDED_DATA_ITEM *)at;
                size_t n = rec->ExtendedDataCount;
                c->ExtendedData = items;
                at += n * sizeof(*items);
                /* each item written once, its pointer already the copy's (a record has one or
                   two: a memcpy of the array, then a pass to mend it, cost more) */
                for (size_t i = 0; i < n; i++) {
                        EVENT_HEADER_EXTENDED_DATA_ITEM it = rec->ExtendedData[i];
                        if (it.DataPtr) {
                                memcpy(at, (const void *)(uintptr_t)it.DataPtr, it.DataSize);
                                it.DataPtr = (ULONGLONG)(uintptr_t)at;
                                at += round8(it.DataSize);
                        }
                        items[i] = it;
                }
        }
        if (rec->UserData) {
                memcpy(at, rec->UserData, rec->UserDataLength);
                c->UserData = at;
        }
}

static void event_signal(int fd)
{
        uint64_t one = 1;
        if (write(fd, &one, sizeof(one)) < 0) {
                /* EAGAIN: the counter is full, the reader wakes anyway */
        }
}

/* One read: an eventfd's read takes its whole count (no EFD_SEMAPHORE), so a second one only
   ever said EAGAIN. */
static void event_clear(int fd)
{
        uint64_t n;
        if (read(fd, &n, sizeof(n)) < 0) {
                /* EAGAIN: no wake was due */
        }
}

/* Publishes the records copied so far, and wakes a consumer that sleeps on wake_fd. */
static void hand_over(struct feed *f)
{
        f->nr_run = 0;
        spsc_publish(f->queue);
        /* with feed_arm's fence: either the consumer sees the records before it sleeps, or
           this sees it asleep and wakes it */
        atomic_thread_fence(memory_order_seq_cst);
        if (atomic_load_explicit(&f->is_sleeping, memory_order_relaxed) &&
            atomic_exchange(&f->is_sleeping, false))
                event_signal(f->wake_fd);
}

/* Room for len bytes, once the consumer has made it; NULL when feed_close gave up on it. */
static uint8_t *wait_for_room(struct feed *f, size_t len)
{
        /* what is there goes to the consumer first: it frees room as it decodes */
        hand_over(f);
        for (;;) {
                atomic_store(&f->is_waiting, true);
                /* with wake_producer's fence: either this sees the room, or the consumer sees
                   this waiting and signals room_fd */
                atomic_thread_fence(memory_order_seq_cst);
                uint8_t *to = spsc_reserve(f->queue, len);
                if (to || atomic_load(&f->is_closing)) {
                        atomic_store(&f->is_waiting, false);
                        return to;
                }
                struct pollfd p = {f->room_fd, POLLIN, 0};
                poll(&p, 1, FEED_CLOSE_POLL_MS);
                event_clear(f->room_fd);
        }
}

/* The records of a buffer that could not be handed over: counted as the records' copies were. */
static void drop_buffer(struct feed *f, const VOID *buf, ULONG size)
{
        struct etw_buffer_walk w = {.Buffer = buf, .Size = size, .Context = f};
        EVENT_RECORD rec;
        uint64_t n = 0;
        while (etw_buffer_next_record(&w, &rec))
                n++;
        atomic_fetch_add(&f->nr_dropped, n);
}

/* A held buffer's place in the queue: a message of this size (a copied buffer is larger: its
   header alone is 72 bytes). */
struct held {
        const void *buf;
        uint64_t id;
        uint64_t size;
};

/* A live session's buffer, whole: on_buffer hands it over after this, as it did its records.
   A held one stays in the session host's ring (its place is queued, and the consumer gives it
   back once walked); another is copied. */
static VOID WINAPI on_buffer_queued(PVOID ctx, const VOID *buf, ULONG size, ULONG64 hold)
{
        struct feed *f = ctx;
        if (hold) {
                struct held h = {buf, hold, size};
                uint8_t *to = spsc_reserve(f->queue, sizeof(h));
                if (!to)
                        to = wait_for_room(f, sizeof(h));
                if (!to) {
                        drop_buffer(f, buf, size);
                        etw_realtime_release_buffers(f->handle, hold);
                        return;
                }
                memcpy(to, &h, sizeof(h));
                spsc_commit(f->queue);
                return;
        }
        if (!f->is_populated) {
                /* it goes round its ring within seconds: its pages made at once */
                f->is_populated = true;
                spsc_populate(f->queue);
        }
        /* the session host's buffers are 1 MiB at most, the queue's messages 4 MiB; a buffer
           of a held one's size would read as one (it has no room for its header anyway) */
        bool fits = size <= f->max_message && size != sizeof(struct held);
        uint8_t *to = fits ? spsc_reserve(f->queue, size) : NULL;
        if (!to && fits)
                to = wait_for_room(f, size);
        if (!to) {
                drop_buffer(f, buf, size);
                return;
        }
        memcpy(to, buf, size);
        spsc_commit(f->queue);
}

static VOID WINAPI on_record_queued(PEVENT_RECORD rec)
{
        struct feed *f = rec->UserContext;
        size_t len = record_size(rec);
        bool fits = len <= f->max_message;
        uint8_t *to = fits ? spsc_reserve(f->queue, len) : NULL;
        if (!to && fits)
                to = wait_for_room(f, len);
        if (!to) {
                atomic_fetch_add(&f->nr_dropped, 1);
                return;
        }
        record_copy(to, rec);
        spsc_commit(f->queue);
        if (++f->nr_run >= FEED_RUN)
                hand_over(f);
}

static ULONG WINAPI on_buffer(PEVENT_TRACE_LOGFILEA lf)
{
        struct feed *f = lf->Context;
        /* the buffer's records first: a reader of the count finds them handed over */
        if (f->queue)
                hand_over(f);
        atomic_store(&f->nr_buffers_read, lf->BuffersRead);
        /* feed_close: a file's reading stops here (a session's at CloseTrace) */
        return !atomic_load(&f->is_closing);
}

/* A perf.data (its magic, "PERFILE2"; a perf.data directory's is its file data): the converter
   writes etwtop's trace, whole stacks and no stack cache, so a pass ahead would only convert the
   file a second time, and no sample need wait for its stack's parts. */
static bool is_perf_data(const char *path)
{
        if (strcmp(path, "-") == 0)
                return false;
        int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
                int dfd = fd;
                fd = fstatat(dfd, "data", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)
                             ? openat(dfd, "data", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
                             : -1;
                close(dfd);
        }
        char magic[8];
        bool is = fd >= 0 && pread(fd, magic, sizeof(magic), 0) == (ssize_t)sizeof(magic) &&
                  memcmp(magic, "PERFILE2", sizeof(magic)) == 0;
        if (fd >= 0)
                close(fd);
        return is;
}

int feed_open(struct feed **out, struct profile *p, const char *path, const char *logger_name,
              bool is_threaded, char *err, size_t err_size)
{
        struct feed *f = xcalloc(1, sizeof(*f));
        f->profile = p;
        f->decoder = kdecoder_new(true);
        f->wake_fd = f->room_fd = -1;
        f->slice_records = FEED_SLICE_RECORDS;
        if (is_threaded) {
                f->queue = spsc_new(FEED_QUEUE_BYTES);
                f->max_message = spsc_max_message(f->queue);
                f->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
                f->room_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
                if (f->wake_fd < 0 || f->room_fd < 0) {
                        snprintf(err, err_size, "eventfd: %s", strerror(errno));
                        f->handle = 0;
                        feed_close(f);
                        return -1;
                }
        }
        f->is_file = path != NULL;
        /* its stacks come whole, as live: the join's copy of each sample, and its 200 ms wait
           for the user part of a kernel-only stack, which a conversion never writes, were 7%
           of the instructions of a 1 M-sample file's replay */
        f->is_perf_data = path && is_perf_data(path);
        if (f->is_perf_data)
                profile_set_whole_stacks(p);
        snprintf(f->name, sizeof(f->name), "%s", path ? path : logger_name);
        EVENT_TRACE_LOGFILEA *lf = &f->lf;
        lf->ProcessTraceMode = PROCESS_TRACE_MODE_EVENT_RECORD | PROCESS_TRACE_MODE_RAW_TIMESTAMP;
        if (path) {
                lf->LogFileName = f->name;
        } else {
                lf->LoggerName = f->name;
                lf->ProcessTraceMode |= PROCESS_TRACE_MODE_REAL_TIME;
        }
        lf->EventRecordCallback = is_threaded ? on_record_queued : on_record;
        lf->BufferCallback = on_buffer;
        lf->Context = f;
        f->handle = OpenTraceA(lf);
        if (f->handle == INVALID_PROCESSTRACE_HANDLE) {
                snprintf(err, err_size, "%s (Win32 error %u)", etw_last_error_text(),
                         (unsigned)GetLastError());
                f->handle = 0;
                feed_close(f);
                return -1;
        }
        f->nr_buffers = path ? lf->LogfileHeader.BuffersWritten : 0;
        f->is_buffers = is_threaded && !path;
        if (f->is_buffers &&
            etw_realtime_set_held_buffer_callback(f->handle, on_buffer_queued) != ERROR_SUCCESS) {
                snprintf(err, err_size, "%s (Win32 error %u)", etw_last_error_text(),
                         (unsigned)GetLastError());
                feed_close(f);
                return -1;
        }
        *out = f;
        return 0;
}

/* ---- stack keys read ahead ---- */

/* Windows' stack cache (StackKeyKernel/StackKeyUser references, their definitions in the
   KeyDelete and KeyRundown events) defines most user stacks long after their samples, many at
   the end of the trace: a file's definitions are read first (only theirs are decoded), so that
   each reference resolves next to its sample, where the model joins a sample with its kernel
   and user stacks as WPA and PerfView show them. */
struct read_ahead {
        struct kdecoder *scratch; /* owned: decodes the definitions */
        struct kdecoder *into;    /* borrowed: the feed's decoder */
        PROCESSTRACE_HANDLE handle;
        uint32_t nr_records;
        bool is_whole; /* etwtop's trace (its SessionCpu events): whole stacks, no stack keys */
};

/* etwtop's traces open with SessionCpu events: they write whole stacks and no stack cache,
   and the pass stops there (a recording is read once). */
#define READ_AHEAD_PROBE 256

static void on_key_def(void *ctx, const struct kevent *ev)
{
        struct read_ahead *r = ctx;
        if (ev->type == KEV_STACK_KEY_DEF)
                kdecoder_preload_stack_key(r->into, ev->stack_key_def.key, ev->timestamp,
                                           ev->stack_key_def.frames, ev->stack_key_def.nr_frames);
        else if (ev->type == KEV_SESSION_CPU && !r->is_whole) {
                r->is_whole = true;
                CloseTrace(r->handle); /* ProcessTrace returns after this buffer */
        }
}

static VOID WINAPI on_read_ahead(PEVENT_RECORD rec)
{
        struct read_ahead *r = rec->UserContext;
        if (r->is_whole)
                return;
        if (r->nr_records++ < READ_AHEAD_PROBE) {
                kdecoder_decode(r->scratch, rec, on_key_def, r);
                return;
        }
        UCHAR op = rec->EventHeader.EventDescriptor.Opcode;
        /* the definitions' opcodes, then their provider: nothing else is decoded */
        if (op < (WMI_LOG_TYPE_STACK_KEY_CREATE & 0xFF) ||
            op > (WMI_LOG_TYPE_STACK_KEY_RUNDOWN & 0xFF) ||
            memcmp(&rec->EventHeader.ProviderId, &StackWalkGuid, sizeof(GUID)) != 0)
                return;
        kdecoder_decode(r->scratch, rec, on_key_def, r);
}

static void read_keys_ahead(struct feed *f)
{
        if (f->is_perf_data)
                return;
        struct read_ahead r = {kdecoder_new(true), f->decoder, 0, 0, false};
        EVENT_TRACE_LOGFILEA lf = {0};
        lf.LogFileName = f->name;
        lf.ProcessTraceMode = PROCESS_TRACE_MODE_EVENT_RECORD | PROCESS_TRACE_MODE_RAW_TIMESTAMP;
        lf.EventRecordCallback = on_read_ahead;
        lf.Context = &r;
        PROCESSTRACE_HANDLE h = OpenTraceA(&lf);
        if (h != INVALID_PROCESSTRACE_HANDLE) {
                /* the record's UserContext is the logfile's Context */
                r.handle = h;
                ProcessTrace(&h, 1, NULL, NULL);
                if (!r.is_whole)
                        CloseTrace(h);
        }
        kdecoder_free(r.scratch);
}

ULONG feed_run(struct feed *f)
{
        if (f->is_file)
                read_keys_ahead(f);
        f->status = ProcessTrace(&f->handle, 1, NULL, NULL);
        if (f->queue) {
                /* the last records, then the end, which wakes the consumer too */
                spsc_publish(f->queue);
                atomic_store(&f->is_done, true);
                hand_over(f);
        } else {
                atomic_store(&f->is_done, true);
        }
        return f->status;
}

int64_t feed_seconds_ns(double s)
{
        return s >= 9.2e9 ? INT64_MAX : (int64_t)(s * 1e9 + 0.5);
}

int feed_replay_file(struct feed **out, struct profile *p, const char *path, bool has_from,
                     double from_s, bool has_to, double to_s, char *err, size_t err_size)
{
        *out = NULL;
        if (feed_open(out, p, path, NULL, false, err, err_size) < 0)
                return -1;
        /* the whole trace is read: what comes before the range (the processes, threads,
           images, stack keys) and after it (the kernel symbols written at the end) still
           names what the range counts */
        if (has_from || has_to)
                profile_set_window(p, true, has_from ? feed_seconds_ns(from_s) : INT64_MIN,
                                   has_to ? feed_seconds_ns(to_s) : INT64_MAX);
        ULONG status = feed_run(*out);
        char damage[512];
        feed_damage_text(*out, false, damage, sizeof(damage));
        if (damage[0])
                fprintf(stderr, "etwtop: %s: %s\n", path, damage);
        if (status != ERROR_SUCCESS) {
                snprintf(err, err_size, "%s: ProcessTrace failed: %s (Win32 error %u)", path,
                         etw_last_error_text(), status);
                return -1;
        }
        const struct profile_trace *t = profile_trace(p);
        int64_t last_ns = t->has_time ? t->last_ns : 0;
        if (has_from && feed_seconds_ns(from_s) > last_ns) {
                snprintf(err, err_size,
                         "%s: --from %g s is past the trace's end: it spans 0 to %.3f s", path,
                         from_s, (double)last_ns / 1e9);
                return -1;
        }
        return 0;
}

static void *feed_main(void *arg)
{
        thread_name_self("etwtop-feed");
        feed_run(arg);
        return NULL;
}

int feed_start(struct feed *f)
{
        if (!f->queue)
                return -1; /* opened for feed_run */
        if (pthread_create(&f->thread, NULL, feed_main, f) != 0)
                return -1;
        f->has_thread = true;
        return 0;
}

void feed_close(struct feed *f)
{
        if (!f)
                return;
        /* a ProcessTrace that still runs (a session left running) returns at CloseTrace
           (ERROR_CTX_CLOSE_PENDING: the handle goes when it has) */
        atomic_store(&f->is_closing, true);
        if (f->room_fd >= 0)
                event_signal(f->room_fd); /* a feed waiting for room gives up now */
        if (f->handle)
                CloseTrace(f->handle);
        if (f->has_thread)
                pthread_join(f->thread, NULL);
        kdecoder_free(f->decoder);
        spsc_free(f->queue);
        if (f->wake_fd >= 0)
                close(f->wake_fd);
        if (f->room_fd >= 0)
                close(f->room_fd);
        free(f);
}

/* ---- the consumer's side (the screen's thread) ---- */

int feed_fd(const struct feed *f)
{
        return f->wake_fd;
}

bool feed_arm(struct feed *f)
{
        if (!f->queue)
                return true;
        /* an earlier wake, already answered (one read: a count kept beside the fd to skip
           it left a window, between the feed's write and its count, in which the screen's
           loop found the fd readable turn after turn without clearing it) */
        event_clear(f->wake_fd);
        atomic_store(&f->is_sleeping, true);
        atomic_thread_fence(memory_order_seq_cst);
        if (!spsc_is_empty(f->queue) || (atomic_load(&f->is_done) && !f->is_done_seen)) {
                atomic_store(&f->is_sleeping, false);
                return false;
        }
        return true;
}

/* How far past the record just built the walk asks for the buffer's bytes: a live buffer was
   written by the host's logger on another CPU, and each record's first read waited for its line
   to come from there (28% of etw_buffer_next_record's samples, the hardware's own look-ahead too
   late for it); 512 bytes, four to eight records, halved that (1024 no better then); bench/
   README.md, stop 75. 1024 since the far step of a sample's memory is four records ahead
   (FEED_FAR_AT): the records it peeks at are asked for before it reads them. */
#define FEED_BYTES_AHEAD 1024u

/* The walk's next record built into the slot after the last one built: the slot's walk takes
   the position on from f->walk and gives it back (the buffer, its size and the context are each
   slot's from the walk's start; the extended items stay each slot's own). A copy of the whole
   state in 16-byte moves, just after etw_buffer_next_record stored Position 4 bytes wide, waited
   at every record for that store to leave (a store forwarded to no wider load). */
static void walk_build(struct feed *f)
{
        uint32_t slot = (f->ahead_at + f->nr_ahead) % FEED_AHEAD;
        struct etw_buffer_walk *w = &f->ahead_walk[slot];
        w->Position = f->walk.Position;
        w->End = f->walk.End;
        w->ProcessorIndex = f->walk.ProcessorIndex;
        w->LoggerId = f->walk.LoggerId;
        BOOL ok = etw_buffer_next_record(w, &f->ahead[slot]);
        f->is_far_asked[slot] = false;
        /* line by line, each once (prefetch.h) */
        f->walk_prefetch_pos = (uint32_t)prefetch_lines(
                w->Buffer, UINT64_MAX, f->walk_prefetch_pos,
                w->Position + FEED_BYTES_AHEAD < w->End ? w->Position + FEED_BYTES_AHEAD : w->End);
        f->walk.Position = w->Position;
        f->walk.End = w->End;
        f->walk.ProcessorIndex = w->ProcessorIndex;
        f->walk.LoggerId = w->LoggerId;
        if (ok)
                f->nr_ahead++;
        else
                f->is_walk_end = true;
}

/* The timer samples among the records built ahead: the place of the one FEED_NEAR_AT records
   ahead (its frame memo slot asked for before), the frame memo slot of each further one up to
   FEED_FAR_AT not asked for yet (profile_prefetch_sample): a record takes the far step once,
   where it first stands past the near one (FEED_FAR_AT, but nearer at a buffer's start), and
   the near one once. */
static void walk_prefetch(struct feed *f)
{
        uint64_t ip;
        uint32_t tid, pid;
        for (uint32_t i = FEED_NEAR_AT; i < f->nr_ahead && i <= FEED_FAR_AT; i++) {
                uint32_t slot = (f->ahead_at + i) % FEED_AHEAD;
                bool is_near = i == FEED_NEAR_AT;
                if (!is_near && f->is_far_asked[slot])
                        continue;
                f->is_far_asked[slot] = true;
                if (kdecoder_peek_sample(f->decoder, &f->ahead[slot], &ip, &tid, &pid))
                        profile_prefetch_sample(f->profile, pid, ip, is_near);
        }
}

/* The next record handed over, NULL when there is none; a file's stays the queue's until
   decode_one, a buffer until the walk has read its last record. Only a message published before
   mark is begun (UINT64_MAX: any). */
static const EVENT_RECORD *next_record(struct feed *f, uint64_t mark)
{
        size_t len;
        if (!f->is_buffers)
                return mark == UINT64_MAX || spsc_is_before(f->queue, mark)
                               ? spsc_peek(f->queue, &len)
                               : NULL;
        for (;;) {
                if (!f->is_walking) {
                        bool is_due = mark == UINT64_MAX || spsc_is_before(f->queue, mark);
                        const void *buf = is_due ? spsc_peek(f->queue, &len) : NULL;
                        if (!buf)
                                return NULL;
                        f->walk_hold = 0;
                        if (len == sizeof(struct held)) {
                                /* its place: the buffer is walked where the host put it */
                                struct held h;
                                memcpy(&h, buf, sizeof(h));
                                spsc_pop(f->queue);
                                buf = h.buf;
                                len = (size_t)h.size;
                                f->walk_hold = h.id;
                        }
                        f->walk = (struct etw_buffer_walk){
                                .Buffer = buf, .Size = (ULONG)len, .Context = f};
                        for (uint32_t i = 0; i < FEED_AHEAD; i++) {
                                f->ahead_walk[i].Buffer = buf;
                                f->ahead_walk[i].Size = (ULONG)len;
                                f->ahead_walk[i].Context = f;
                        }
                        f->is_walking = true;
                        f->walk_prefetch_pos = 0;
                        f->is_walk_end = false;
                        f->nr_ahead = 0;
                }
                while (f->nr_ahead < FEED_AHEAD && !f->is_walk_end)
                        walk_build(f);
                if (f->nr_ahead) {
                        const EVENT_RECORD *rec = &f->ahead[f->ahead_at];
                        f->ahead_at = (f->ahead_at + 1) % FEED_AHEAD;
                        f->nr_ahead--;
                        walk_prefetch(f);
                        return rec;
                }
                f->is_walking = false;
                if (f->walk_hold)
                        etw_realtime_release_buffers(f->handle, f->walk_hold);
                else
                        spsc_pop(f->queue);
        }
}

static void decode_one(struct feed *f, const EVENT_RECORD *rec)
{
        kdecoder_decode(f->decoder, rec, on_event, f->profile);
        if (!f->is_buffers)
                spsc_pop(f->queue);
        f->nr_decoded++;
}

/* The feed's thread waits for room and half the queue is free: it refills while this decodes. */
static void wake_producer(struct feed *f)
{
        atomic_thread_fence(memory_order_seq_cst); /* the pops before the flag's read */
        if (atomic_load_explicit(&f->is_waiting, memory_order_relaxed) &&
            spsc_nr_queued(f->queue) <= spsc_size(f->queue) / 2 &&
            atomic_exchange(&f->is_waiting, false))
                event_signal(f->room_fd);
}

const struct etw_realtime_session_state *feed_session_state(struct feed *f)
{
        if (!f || f->is_file || !f->handle)
                return NULL;
        return etw_realtime_get_session_state(f->handle, &f->state) == ERROR_SUCCESS ? &f->state
                                                                                     : NULL;
}

bool feed_drain(struct feed *f, int64_t budget_ns)
{
        if (!f->queue)
                return false;
        atomic_store_explicit(&f->is_sleeping, false, memory_order_relaxed);
        uint64_t end = now_ns() + (uint64_t)(budget_ns > 0 ? budget_ns : 0);
        uint32_t max = f->slice_records ? f->slice_records : UINT32_MAX;
        const EVENT_RECORD *rec;
        for (uint32_t n = 1; (rec = next_record(f, UINT64_MAX)); n++) {
                decode_one(f, rec);
                if (n == max)
                        break;
                if (n % FEED_CLOCK_EVERY != 0)
                        continue;
                wake_producer(f);
                if (now_ns() >= end)
                        break;
        }
        wake_producer(f);
        return !spsc_is_empty(f->queue);
}

void feed_catch_up(struct feed *f)
{
        if (!f->queue)
                return;
        uint64_t mark = spsc_published(f->queue);
        const EVENT_RECORD *rec;
        for (uint32_t n = 1; (rec = next_record(f, mark)); n++) {
                decode_one(f, rec);
                if (n % FEED_CLOCK_EVERY == 0)
                        wake_producer(f);
        }
        wake_producer(f);
}

void feed_set_slice(struct feed *f, uint32_t max_records)
{
        f->slice_records = max_records;
}

uint64_t feed_nr_decoded(const struct feed *f)
{
        return f->nr_decoded;
}

uint64_t feed_nr_dropped(const struct feed *f)
{
        return atomic_load(&f->nr_dropped);
}

bool feed_is_done(struct feed *f, ULONG *status)
{
        /* the thread's end first: what it handed over before is then all in the queue */
        bool is_done = atomic_load(&f->is_done) && (!f->queue || spsc_is_empty(f->queue));
        if (is_done && status)
                *status = f->status;
        f->is_done_seen = f->is_done_seen || is_done;
        return is_done;
}

uint64_t feed_nr_buffers_read(const struct feed *f)
{
        return atomic_load(&f->nr_buffers_read);
}

uint64_t feed_nr_buffers(const struct feed *f)
{
        return f->nr_buffers;
}

void feed_warning(const struct feed *f, char *buf, size_t size)
{
        struct kdecoder_stats ks;
        kdecoder_get_stats(f->decoder, &ks);
        snprintf(buf, size, "%s", ks.warning);
}

void feed_damage_text(const struct feed *f, bool is_where_first, char *buf, size_t size)
{
        buf[0] = 0;
        struct etw_trace_stats st;
        if (!f->is_file || etw_trace_get_stats(f->handle, &st) != ERROR_SUCCESS)
                return;
        if (!st.nr_buffers_damaged) {
                /* no buffer damaged, a problem named: a perf.data file converted up to its
                   damage (a truncated data section, a record that runs past its end), or
                   read whole with one (an unfinished recording: its own words say so) */
                if (!strncmp(st.last_warning, ETW_READ_WHOLE, strlen(ETW_READ_WHOLE)))
                        snprintf(buf, size, "%s", st.last_warning);
                else if (st.last_warning[0])
                        snprintf(buf, size, "read up to its damage: %s", st.last_warning);
                return;
        }
        if (!is_where_first) {
                snprintf(buf, size,
                         "%u damaged buffer%s skipped in whole or in part (the rest is read); the "
                         "last: %s",
                         (unsigned)st.nr_buffers_damaged, st.nr_buffers_damaged == 1 ? "" : "s",
                         st.last_warning);
                return;
        }
        /* where first: a narrow screen cuts the line's end */
        const char *where = "";
        char *at = strstr(st.last_warning, " (byte offset ");
        if (at) {
                *at = 0;
                where = at + 2;
                char *end = strchr(at + 1, ')');
                if (end)
                        *end = 0;
        }
        snprintf(buf, size, "%u damaged buffer%s skipped in part or whole%s%s: %s",
                 (unsigned)st.nr_buffers_damaged, st.nr_buffers_damaged == 1 ? "" : "s",
                 *where ? ", the last at " : "", where, st.last_warning);
}
