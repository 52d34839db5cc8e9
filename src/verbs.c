/* SPDX-License-Identifier: MIT */
/* verbs.c: owns xperf's session verbs (verbs.h) over the controller API: a session that outlives
   etwtop is started, updated, flushed, stopped and listed from any process of its user. */
#include "verbs.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "etw/KernelTraceControl.h"
#include "etw/etwtop_ext.h"
#include "util/out_file.h"
#include "xperf_names.h"

#define MAX_LOGGERS 64
#define VERBS_RT_MAX_BUFFERS                                                                       \
        1024 /* 64 MiB of 64 KiB buffers at most, as app.c's RT_MAX_BUFFERS                        \
              */

/* EVENT_TRACE_PROPERTIES with room for the names. */
struct props {
        EVENT_TRACE_PROPERTIES p;
        char logger_name[1025];
        char log_file_name[1025];
};

static void props_init(struct props *k)
{
        memset(k, 0, sizeof(*k));
        k->p.Wnode.BufferSize = sizeof(*k);
        k->p.LoggerNameOffset = offsetof(struct props, logger_name);
        k->p.LogFileNameOffset = offsetof(struct props, log_file_name);
}

static const char *name_of(const struct verbs_options *o)
{
        return o->name && *o->name ? o->name : KERNEL_LOGGER_NAMEA;
}

static int refused(char *err, size_t err_size, const char *what, ULONG st)
{
        snprintf(err, err_size, "%s: %s (Win32 error %u)", what, etw_last_error_text(),
                 (unsigned)st);
        return 1;
}

/* QUERY by name: the session's properties and its handle (the host's, valid here). */
static ULONG query(const char *name, struct props *k)
{
        props_init(k);
        return ControlTraceA(0, name, &k->p, EVENT_TRACE_CONTROL_QUERY);
}

int verbs_current(const char *name, struct collect_settings *s, char *err, size_t err_size)
{
        struct props k;
        ULONG st = query(name && *name ? name : KERNEL_LOGGER_NAMEA, &k);
        if (st != ERROR_SUCCESS)
                return refused(err, err_size, "--update", st) ? -1 : -1;
        struct etw_client c = {.id = k.p.Wnode.HistoricalContext, .has_session = true};
        collect_settings_init(s);
        st = etw_client_query(&c, s, NULL);
        return st == ERROR_SUCCESS ? 0 : (refused(err, err_size, "--update", st), -1);
}

/* A flight recorder: EVENT_TRACE_BUFFERING_MODE, its last MaximumBuffers buffers in memory;
   then the collection settings, class by class. */
static int start_buffering(const struct verbs_options *o, CONTROLTRACE_ID *id, char *err,
                           size_t err_size)
{
        struct props k;
        props_init(&k);
        k.p.Wnode.Flags = WNODE_FLAG_TRACED_GUID;
        k.p.Wnode.Guid = SystemTraceControlGuid;
        k.p.Wnode.ClientContext = 1;
        k.p.LogFileMode =
                EVENT_TRACE_BUFFERING_MODE |
                (strcmp(name_of(o), KERNEL_LOGGER_NAMEA) ? EVENT_TRACE_SYSTEM_LOGGER_MODE : 0);
        if (k.p.LogFileMode & EVENT_TRACE_SYSTEM_LOGGER_MODE)
                memset(&k.p.Wnode.Guid, 0, sizeof(k.p.Wnode.Guid));
        k.p.LogFileNameOffset = 0;
        /* the rundown's flags; the others after their stacks (etw_client_apply) */
        k.p.EnableFlags =
                o->collect->masks.Masks[0] &
                (EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD | EVENT_TRACE_FLAG_IMAGE_LOAD);
        k.p.BufferSize = o->buffer_size_kb;
        k.p.MinimumBuffers = o->min_buffers;
        k.p.MaximumBuffers = o->max_buffers ? o->max_buffers : 256;
        k.p.FlushTimer = 1;
        ULONG st = StartTraceA(id, name_of(o), &k.p);
        if (st != ERROR_SUCCESS)
                return refused(err, err_size, "--start", st);
        struct etw_client c = {.id = *id, .has_session = true};
        snprintf(c.logger_name, sizeof(c.logger_name), "%s", name_of(o));
        st = etw_client_apply(&c, o->collect, err, err_size);
        if (st != ERROR_SUCCESS) {
                props_init(&k);
                ControlTraceA(*id, NULL, &k.p, EVENT_TRACE_CONTROL_STOP);
                return 1;
        }
        return 0;
}

static int do_start(const struct verbs_options *o, FILE *out, char *err, size_t err_size)
{
        if (!o->collect) {
                snprintf(err, err_size, "--start: no collection settings");
                return 1;
        }
        if (!o->is_buffering && !o->file && !o->is_realtime) {
                snprintf(err, err_size, "--start needs -f OUT.etl, --realtime or --buffering");
                return 1;
        }
        CONTROLTRACE_ID id = 0;
        if (o->is_buffering) {
                if (start_buffering(o, &id, err, err_size))
                        return 1;
        } else {
                /* to its file and in real time: --attach can consume it */
                struct etw_client_options co = {
                        .logger_name = name_of(o),
                        .file = o->file,
                        .is_force = o->is_force,
                        .is_real_time = true,
                        .buffer_size_kb = o->buffer_size_kb,
                        .min_buffers = o->min_buffers,
                        .max_file_mb = o->max_file_mb,
                        /* a real-time consumer's queue is MaximumBuffers long: what the
                           screen gives its own session, so that --attach keeps up as it does */
                        .max_buffers = o->max_buffers ? o->max_buffers : VERBS_RT_MAX_BUFFERS,
                        .is_process_only = o->collect->pid > 0,
                        .is_detached = true,
                };
                struct etw_client c;
                if (etw_client_start(&c, &co, o->collect, err, err_size) < 0)
                        return 1;
                id = c.id;
        }
        struct props k;
        ULONG st = query(name_of(o), &k);
        if (st != ERROR_SUCCESS)
                return refused(err, err_size, "--start", st);
        char flags[256];
        xperf_format_flags(&o->collect->masks, flags, sizeof(flags));
        if (o->is_buffering)
                fprintf(out,
                        "started \"%s\" (handle 0x%llx): %s, a flight recorder of %u x %u KB\n",
                        name_of(o), (unsigned long long)id, flags, (unsigned)k.p.MaximumBuffers,
                        (unsigned)k.p.BufferSize);
        else if (k.log_file_name[0])
                fprintf(out, "started \"%s\" (handle 0x%llx): %s, to %s\n", name_of(o),
                        (unsigned long long)id, flags, k.log_file_name);
        else
                fprintf(out, "started \"%s\" (handle 0x%llx): %s, in real time\n", name_of(o),
                        (unsigned long long)id, flags);
        return 0;
}

static int do_update(const struct verbs_options *o, FILE *out, char *err, size_t err_size)
{
        struct props k;
        ULONG st = query(name_of(o), &k);
        if (st != ERROR_SUCCESS)
                return refused(err, err_size, "--update", st);
        if (!o->collect) {
                snprintf(err, err_size, "--update: no collection settings");
                return 1;
        }
        struct etw_client c = {.id = k.p.Wnode.HistoricalContext, .has_session = true};
        snprintf(c.logger_name, sizeof(c.logger_name), "%s", name_of(o));
        if (etw_client_apply(&c, o->collect, err, err_size) != ERROR_SUCCESS)
                return 1;
        char flags[256];
        xperf_format_flags(&o->collect->masks, flags, sizeof(flags));
        fprintf(out, "updated \"%s\": %s\n", name_of(o), flags);
        return 0;
}

/* Makes room for path when is_force allows, and only a regular file of ours (out_file.h): the
   API never writes over a file. */
static int make_room(const char *path, bool is_force, char *err, size_t err_size)
{
        return out_file_make_room(path, is_force ? OUT_FILE_FORCE : 0, err, err_size) < 0;
}

static int do_flush(const struct verbs_options *o, FILE *out, char *err, size_t err_size)
{
        struct props k;
        ULONG st = query(name_of(o), &k);
        if (st != ERROR_SUCCESS)
                return refused(err, err_size, "--flush", st);
        CONTROLTRACE_ID id = k.p.Wnode.HistoricalContext;
        if (!o->file) {
                props_init(&k);
                st = ControlTraceA(id, NULL, &k.p, EVENT_TRACE_CONTROL_FLUSH);
                if (st != ERROR_SUCCESS)
                        return refused(err, err_size, "--flush", st);
                fprintf(out, "flushed \"%s\": %u buffers written\n", name_of(o),
                        (unsigned)k.p.BuffersWritten);
                return 0;
        }
        if (make_room(o->file, o->is_force, err, err_size))
                return 1;
        /* a self-contained snapshot of the ring (with its rundown); the session goes on */
        st = etw_save_window(id, o->file, FALSE);
        if (st != ERROR_SUCCESS)
                return refused(err, err_size, "--flush", st);
        fprintf(out, "saved the ring of \"%s\" to %s; it keeps running\n", name_of(o), o->file);
        return 0;
}

static int do_stop(const struct verbs_options *o, FILE *out, char *err, size_t err_size)
{
        struct props k;
        ULONG st = query(name_of(o), &k);
        if (st != ERROR_SUCCESS)
                return refused(err, err_size, "--stop", st);
        CONTROLTRACE_ID id = k.p.Wnode.HistoricalContext;
        bool has_ring = k.p.LogFileMode & EVENT_TRACE_BUFFERING_MODE;
        char file[sizeof(k.log_file_name)];
        snprintf(file, sizeof(file), "%s", k.log_file_name);
        if (o->file && !has_ring && !file[0]) {
                /* said before the stop: the session runs on, its consumers keep it */
                snprintf(err, err_size,
                         "--stop -d: \"%s\" has no file and no ring to write (it runs in real "
                         "time only); it keeps running",
                         name_of(o));
                return 1;
        }
        if (o->file && make_room(o->file, o->is_force, err, err_size))
                return 1;
        if (o->file && has_ring) {
                st = etw_save_window(id, o->file, FALSE);
                if (st != ERROR_SUCCESS)
                        return refused(err, err_size, "--stop -d", st);
        }
        props_init(&k);
        st = ControlTraceA(id, NULL, &k.p, EVENT_TRACE_CONTROL_STOP);
        if (st != ERROR_SUCCESS)
                return refused(err, err_size, "--stop", st);
        fprintf(out, "stopped \"%s\": %u buffers written, %u events lost%s%s\n", name_of(o),
                (unsigned)k.p.BuffersWritten, (unsigned)k.p.EventsLost, file[0] ? ", " : "", file);
        if (o->file && !has_ring) {
                /* xperf -stop -d: the file with image identity merged */
                LPCSTR in[1] = {file};
                st = CreateMergedTraceFileA(o->file, in, 1,
                                            EVENT_TRACE_MERGE_EXTENDED_DATA_DEFAULT);
                if (st != ERROR_SUCCESS)
                        return refused(err, err_size, "--stop -d", st);
        }
        if (o->file)
                fprintf(out, "wrote %s\n", o->file);
        return 0;
}

/* The session's mode in words. */
static void mode_text(ULONG mode, char *buf, size_t size)
{
        snprintf(buf, size, "%s%s%s%s", (mode & EVENT_TRACE_REAL_TIME_MODE) ? "real-time " : "",
                 (mode & EVENT_TRACE_FILE_MODE_SEQUENTIAL) ? "file " : "",
                 (mode & EVENT_TRACE_FILE_MODE_CIRCULAR) ? "circular-file " : "",
                 (mode & EVENT_TRACE_BUFFERING_MODE) ? "flight-recorder " : "");
        size_t n = strlen(buf);
        if (n)
                buf[n - 1] = '\0';
}

static int do_loggers(FILE *out, char *err, size_t err_size)
{
        static struct props all[MAX_LOGGERS];
        PEVENT_TRACE_PROPERTIES arr[MAX_LOGGERS];
        for (int i = 0; i < MAX_LOGGERS; i++) {
                props_init(&all[i]);
                arr[i] = &all[i].p;
        }
        ULONG n = 0;
        ULONG st = QueryAllTracesA(arr, MAX_LOGGERS, &n);
        if (st != ERROR_SUCCESS && st != ERROR_MORE_DATA)
                return refused(err, err_size, "--loggers", st);
        TRACE_PROFILE_INTERVAL iv = {0, 0};
        ULONG len;
        TraceQueryInformation(0, TraceSampledProfileIntervalInfo, &iv, sizeof(iv), &len);
        fprintf(out, "%u session%s\n", (unsigned)n, n == 1 ? "" : "s");
        for (ULONG i = 0; i < n && i < MAX_LOGGERS; i++) {
                const struct props *k = &all[i];
                char mode[96], flags[256] = "";
                mode_text(k->p.LogFileMode, mode, sizeof(mode));
                CONTROLTRACE_ID id = k->p.Wnode.HistoricalContext;
                PERFINFO_GROUPMASK gm;
                bool is_kernel = TraceQueryInformation(id, TraceSystemTraceEnableFlagsInfo, &gm,
                                                       sizeof(gm), &len) == ERROR_SUCCESS;
                if (is_kernel)
                        xperf_format_flags(&gm, flags, sizeof(flags));
                fprintf(out, "\n\"%s\" (handle 0x%llx): %s\n", k->logger_name,
                        (unsigned long long)id, mode);
                if (k->log_file_name[0])
                        fprintf(out, "  file:       %s\n", k->log_file_name);
                if (is_kernel) {
                        fprintf(out, "  flags:      %s\n", flags);
                        CLASSIC_EVENT_ID ids[64];
                        fprintf(out, "  stackwalk:  ");
                        if (TraceQueryInformation(id, TraceStackTracingInfo, ids, sizeof(ids),
                                                  &len) == ERROR_SUCCESS &&
                            len) {
                                for (ULONG j = 0; j < len / sizeof(ids[0]); j++) {
                                        USHORT hook;
                                        const char *hn = NULL;
                                        bool is_known = etw_hook_of_event_id(&ids[j], &hook) ==
                                                        ERROR_SUCCESS;
                                        if (is_known)
                                                hn = xperf_hook_name(hook);
                                        if (hn)
                                                fprintf(out, "%s%s", j ? "+" : "", hn);
                                        else if (is_known)
                                                fprintf(out, "%s0x%04x", j ? "+" : "", hook);
                                        else /* no hook of that class: its event type */
                                                fprintf(out, "%stype %u", j ? "+" : "",
                                                        (unsigned)ids[j].Type);
                                }
                                fputc('\n', out);
                        } else {
                                fputs("none\n", out);
                        }
                        struct etw_stackwalk_info w;
                        if (TraceQueryInformation(id, ETWTOP_TRACE_STACKWALK_INFO, &w, sizeof(w),
                                                  &len) == ERROR_SUCCESS) {
                                static const char *const walks[] = {"fp", "dwarf", "auto"};
                                fprintf(out, "  user stacks: %s", w.Mode < 3 ? walks[w.Mode] : "?");
                                if (w.Mode != ETWTOP_STACKWALK_FP)
                                        fprintf(out, ", %u-byte stack copies",
                                                (unsigned)w.UserStackBytes);
                                fputc('\n', out);
                        }
                        fprintf(out, "  interval:   %u (100 ns)\n", (unsigned)iv.Interval);
                }
                fprintf(out, "  buffers:    %u x %u KB (%u free), %u written\n",
                        (unsigned)k->p.NumberOfBuffers, (unsigned)k->p.BufferSize,
                        (unsigned)k->p.FreeBuffers, (unsigned)k->p.BuffersWritten);
                ULONG nr_consumers = 0;
                if (TraceQueryInformation(id, ETWTOP_TRACE_CONSUMERS_INFO, &nr_consumers,
                                          sizeof(nr_consumers), &len) == ERROR_SUCCESS)
                        fprintf(out, "  consumers:  %u real-time\n", (unsigned)nr_consumers);
                fprintf(out, "  lost:       %u events, %u log buffers, %u real-time buffers\n",
                        (unsigned)k->p.EventsLost, (unsigned)k->p.LogBuffersLost,
                        (unsigned)k->p.RealTimeBuffersLost);
        }
        return 0;
}

int verbs_run(const struct verbs_options *o, FILE *out, char *err, size_t err_size)
{
        err[0] = '\0';
        switch (o->verb) {
        case VERB_START: return do_start(o, out, err, err_size);
        case VERB_UPDATE: return do_update(o, out, err, err_size);
        case VERB_FLUSH: return do_flush(o, out, err, err_size);
        case VERB_STOP: return do_stop(o, out, err, err_size);
        case VERB_LOGGERS: return do_loggers(out, err, err_size);
        case VERB_HOST: {
                ULONG st = etw_host_run(ETW_HOST_PERSISTENT);
                return st == ERROR_SUCCESS ? 0 : refused(err, err_size, "--host", st);
        }
        }
        snprintf(err, err_size, "unknown verb");
        return 2;
}
