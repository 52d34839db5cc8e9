/* SPDX-License-Identifier: MIT */
/* seed002_two_processes.c: seed 002's scenario across two processes, as on Windows where the
   kernel owns the NT Kernel Logger: the first process starts it (to a file, and in real time)
   and exits; the second finds it running (StartTrace: ERROR_ALREADY_EXISTS), updates it with
   ControlTrace(UPDATE), enables stack walking on SampledProfile, CSwitch and ReadyThread,
   consumes it in real time, and stops it; the file then replays with stacks.
   Usage: seed002_two_processes [out.etl [seconds]]; exit 77 where this machine cannot trace. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "etw/evntrace.h"

#ifndef MAX_PATH
#define MAX_PATH 260
#endif

/* Thread_V2_Guid of the seed is the Thread group's GUID. */
static const GUID Thread_V2_Guid = {
        0x3d6fa8d1, 0xfe05, 0x11d0, {0x9d, 0xda, 0x00, 0xc0, 0x4f, 0xd7, 0xba, 0x7c}};

struct kernel_props {
        EVENT_TRACE_PROPERTIES Properties;
        char LoggerName[MAX_PATH];
        char LogFileName[MAX_PATH];
};

static void props_init(struct kernel_props *kp, const char *file, ULONG flags)
{
        *kp = (struct kernel_props){0};
        kp->Properties.Wnode.BufferSize = sizeof(*kp);
        kp->Properties.Wnode.Flags = WNODE_FLAG_TRACED_GUID;
        kp->Properties.Wnode.Guid = SystemTraceControlGuid;
        kp->Properties.Wnode.ClientContext = 1; /* QPC */
        kp->Properties.LogFileMode = EVENT_TRACE_FILE_MODE_SEQUENTIAL | EVENT_TRACE_REAL_TIME_MODE;
        kp->Properties.EnableFlags = flags;
        kp->Properties.LoggerNameOffset = offsetof(struct kernel_props, LoggerName);
        kp->Properties.LogFileNameOffset = offsetof(struct kernel_props, LogFileName);
        snprintf(kp->LogFileName, MAX_PATH, "%s", file);
}

static void report(const char *who, const char *what, ULONG status)
{
        printf("%s: %s: %lu%s%s\n", who, what, (unsigned long)status,
               etw_last_error_text()[0] ? ": " : "", etw_last_error_text());
        fflush(stdout);
}

/* The first process: starts the kernel logger with fewer flags, and exits. */
static int first(const char *file)
{
        struct kernel_props kp;
        CONTROLTRACE_ID h;
        props_init(&kp, file, EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD);
        ULONG status = StartTraceA(&h, KERNEL_LOGGER_NAMEA, &kp.Properties);
        report("first", "StartTrace", status);
        if (status == ERROR_ACCESS_DENIED)
                return 77;
        return status == ERROR_SUCCESS ? 0 : 1;
}

/* What the second process's real-time consumer saw. */
struct seen {
        atomic_ulong nr_events;
        atomic_ulong nr_stacks;
};

static VOID WINAPI on_event(PEVENT_RECORD er)
{
        struct seen *seen = er->UserContext;
        atomic_fetch_add(&seen->nr_events, 1);
        if (IsEqualGUID(&er->EventHeader.ProviderId, &StackWalkGuid))
                atomic_fetch_add(&seen->nr_stacks, 1);
}

struct consumer {
        EVENT_TRACE_LOGFILEA lf;
        PROCESSTRACE_HANDLE h;
        ULONG status;
        struct seen seen;
};

static void *consume(void *arg)
{
        struct consumer *c = arg;
        c->status = ProcessTrace(&c->h, 1, NULL, NULL);
        return NULL;
}

/* Replays a file; the number of events and of stacks in *seen. */
static ULONG replay(const char *file, struct seen *seen)
{
        EVENT_TRACE_LOGFILEA lf;
        memset(&lf, 0, sizeof(lf));
        lf.LogFileName = (LPSTR)file;
        lf.ProcessTraceMode = PROCESS_TRACE_MODE_EVENT_RECORD;
        lf.EventRecordCallback = on_event;
        lf.Context = seen;
        PROCESSTRACE_HANDLE h = OpenTraceA(&lf);
        if (h == INVALID_PROCESSTRACE_HANDLE)
                return GetLastError();
        ULONG status = ProcessTrace(&h, 1, NULL, NULL);
        CloseTrace(h);
        return status;
}

/* The second process: seed 002's sequence against the session the first one left running. */
static int second(const char *file, int seconds)
{
        struct kernel_props props;
        props_init(&props, file,
                   EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD |
                           EVENT_TRACE_FLAG_IMAGE_LOAD | EVENT_TRACE_FLAG_PROFILE |
                           EVENT_TRACE_FLAG_CSWITCH | EVENT_TRACE_FLAG_DISPATCHER);
        CONTROLTRACE_ID hSessionNT = 0;
        ULONG status = StartTraceA(&hSessionNT, KERNEL_LOGGER_NAMEA, &props.Properties);
        report("second", "StartTrace", status);
        if (status != ERROR_ALREADY_EXISTS)
                return 1; /* the session must have outlived its starter */
        status = ControlTraceA(0, KERNEL_LOGGER_NAMEA, &props.Properties,
                               EVENT_TRACE_CONTROL_UPDATE);
        report("second", "ControlTrace(UPDATE)", status);
        if (status != ERROR_SUCCESS)
                return 1;
        hSessionNT = props.Properties.Wnode.HistoricalContext;
        printf("second: updated: EnableFlags 0x%08lx, handle 0x%llx, log file %s\n",
               (unsigned long)props.Properties.EnableFlags, (unsigned long long)hSessionNT,
               props.LogFileName);

        CLASSIC_EVENT_ID classes[] = {
                {PerfInfoGuid, 46, {0}}, {Thread_V2_Guid, 36, {0}}, {Thread_V2_Guid, 50, {0}}};
        status = TraceSetInformation(hSessionNT, TraceStackTracingInfo, classes, sizeof(classes));
        report("second", "TraceSetInformation(TraceStackTracingInfo)", status);

        static struct consumer c;
        c.lf.LoggerName = KERNEL_LOGGER_NAMEA;
        c.lf.ProcessTraceMode = PROCESS_TRACE_MODE_REAL_TIME | PROCESS_TRACE_MODE_EVENT_RECORD;
        c.lf.EventRecordCallback = on_event;
        c.lf.Context = &c.seen;
        c.h = OpenTraceA(&c.lf);
        pthread_t th;
        bool has_consumer =
                c.h != INVALID_PROCESSTRACE_HANDLE && pthread_create(&th, NULL, consume, &c) == 0;
        if (!has_consumer)
                report("second", "OpenTrace(real time)", GetLastError());

        sleep((unsigned)seconds);
        struct kernel_props q;
        props_init(&q, "", 0);
        ULONG stop = ControlTraceA(0, KERNEL_LOGGER_NAMEA, &q.Properties, EVENT_TRACE_CONTROL_STOP);
        report("second", "ControlTrace(STOP)", stop);
        printf("second: stopped: %lu buffers written, %lu events lost, file %s\n",
               (unsigned long)q.Properties.BuffersWritten, (unsigned long)q.Properties.EventsLost,
               q.LogFileName);
        if (has_consumer) {
                pthread_join(th, NULL);
                CloseTrace(c.h);
                printf("second: real time: ProcessTrace %lu, %lu events, %lu stacks, %lu "
                       "buffers\n",
                       (unsigned long)c.status, atomic_load(&c.seen.nr_events),
                       atomic_load(&c.seen.nr_stacks), (unsigned long)c.lf.BuffersRead);
        }
        struct seen file_seen = {0};
        ULONG rs = replay(q.LogFileName, &file_seen);
        printf("second: replay of %s: %lu, %lu events, %lu stacks\n", q.LogFileName,
               (unsigned long)rs, atomic_load(&file_seen.nr_events),
               atomic_load(&file_seen.nr_stacks));
        bool ok = status == ERROR_SUCCESS && stop == ERROR_SUCCESS && has_consumer &&
                  c.status == ERROR_SUCCESS && atomic_load(&c.seen.nr_stacks) > 0 &&
                  rs == ERROR_SUCCESS && atomic_load(&file_seen.nr_stacks) > 0;
        return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
        if (argc > 2 && strcmp(argv[1], "--first") == 0)
                return first(argv[2]);
        const char *file = argc > 1 ? argv[1] : "seed002_two.etl";
        int seconds = argc > 2 ? atoi(argv[2]) : 3;
        const char *no_host = getenv("ETWTOP_NO_HOST");
        if (no_host && *no_host && strcmp(no_host, "0") != 0) {
                printf("ETWTOP_NO_HOST is set: sessions stay inside each process, so a second "
                       "process cannot find the first one's\n");
                return 77;
        }
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
                execl("/proc/self/exe", argv[0], "--first", file, (char *)NULL);
                _exit(127);
        }
        int wst = 0;
        if (pid < 0 || waitpid(pid, &wst, 0) < 0 || !WIFEXITED(wst))
                return 1;
        printf("first process %d exited with %d\n", (int)pid, WEXITSTATUS(wst));
        if (WEXITSTATUS(wst) != 0)
                return WEXITSTATUS(wst);
        return second(file, seconds);
}
