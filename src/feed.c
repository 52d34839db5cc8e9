/* SPDX-License-Identifier: MIT */
/* feed.c: owns the consumer of the screen and the reports: OpenTrace, ProcessTrace (on its own
   thread or the caller's), the decoder and the model's lock. */
#include "feed.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etw/etwtop_ext.h"
#include "etw/ntwmi.h"
#include "kdecoder.h"
#include "kevent.h"
#include "model/profile.h"
#include "util/xalloc.h"

/* The consumer takes the model's lock for a run of records, not for each: it lets go after each
   buffer (before it may wait for the next) and at least every FEED_RUN records. */
#define FEED_RUN 4096

struct feed {
        struct profile *profile;  /* borrowed */
        struct kdecoder *decoder; /* owned */
        pthread_mutex_t lock;
        PROCESSTRACE_HANDLE handle;
        EVENT_TRACE_LOGFILEA lf; /* OpenTrace's: ProcessTrace writes back into it */
        char name[1024];         /* the file or the session */
        bool is_file;
        pthread_t thread;
        bool has_thread;
        uint32_t nr_run; /* records decoded since the lock was taken */
        atomic_bool is_done;
        atomic_uint_fast64_t nr_buffers_read;
        uint64_t nr_buffers;
        ULONG status;
};

static void on_event(void *ctx, const struct kevent *ev)
{
        profile_event(ctx, ev);
}

static void run_unlock(struct feed *f)
{
        if (f->nr_run) {
                f->nr_run = 0;
                pthread_mutex_unlock(&f->lock);
        }
}

static VOID WINAPI on_record(PEVENT_RECORD rec)
{
        struct feed *f = rec->UserContext;
        if (!f->nr_run++)
                pthread_mutex_lock(&f->lock);
        kdecoder_decode(f->decoder, rec, on_event, f->profile);
        if (f->nr_run >= FEED_RUN)
                run_unlock(f);
}

/* A feed read on the caller's thread (feed_run without feed_start): nobody else reads the model
   meanwhile, so no lock. */
static VOID WINAPI on_record_unlocked(PEVENT_RECORD rec)
{
        struct feed *f = rec->UserContext;
        kdecoder_decode(f->decoder, rec, on_event, f->profile);
}

static ULONG WINAPI on_buffer(PEVENT_TRACE_LOGFILEA lf)
{
        struct feed *f = lf->Context;
        run_unlock(f);
        atomic_store(&f->nr_buffers_read, lf->BuffersRead);
        return TRUE;
}

int feed_open(struct feed **out, struct profile *p, const char *path, const char *logger_name,
              bool is_threaded, char *err, size_t err_size)
{
        struct feed *f = xcalloc(1, sizeof(*f));
        f->profile = p;
        f->decoder = kdecoder_new(true);
        pthread_mutex_init(&f->lock, NULL);
        f->is_file = path != NULL;
        snprintf(f->name, sizeof(f->name), "%s", path ? path : logger_name);
        EVENT_TRACE_LOGFILEA *lf = &f->lf;
        lf->ProcessTraceMode = PROCESS_TRACE_MODE_EVENT_RECORD | PROCESS_TRACE_MODE_RAW_TIMESTAMP;
        if (path) {
                lf->LogFileName = f->name;
        } else {
                lf->LoggerName = f->name;
                lf->ProcessTraceMode |= PROCESS_TRACE_MODE_REAL_TIME;
        }
        lf->EventRecordCallback = is_threaded ? on_record : on_record_unlocked;
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
        run_unlock(f);
        atomic_store(&f->is_done, true);
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
        feed_run(arg);
        return NULL;
}

int feed_start(struct feed *f)
{
        if (f->lf.EventRecordCallback != on_record)
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
        if (f->handle)
                CloseTrace(f->handle);
        if (f->has_thread)
                pthread_join(f->thread, NULL);
        kdecoder_free(f->decoder);
        pthread_mutex_destroy(&f->lock);
        free(f);
}

void feed_lock(struct feed *f)
{
        pthread_mutex_lock(&f->lock);
}

void feed_unlock(struct feed *f)
{
        pthread_mutex_unlock(&f->lock);
}

bool feed_is_done(const struct feed *f, ULONG *status)
{
        bool is_done = atomic_load(&f->is_done);
        if (is_done && status)
                *status = f->status;
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

void feed_damage_text(const struct feed *f, bool is_where_first, char *buf, size_t size)
{
        buf[0] = 0;
        struct etw_trace_stats st;
        if (!f->is_file || etw_trace_get_stats(f->handle, &st) != ERROR_SUCCESS ||
            !st.nr_buffers_damaged)
                return;
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
