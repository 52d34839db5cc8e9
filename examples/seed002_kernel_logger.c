/* SPDX-License-Identifier: MIT */
/* seed002_kernel_logger.c: the sequence of seed 002 against etwtop's ETW API: the NT Kernel
   Logger is already running (started elsewhere in the process), StartTrace says
   ERROR_ALREADY_EXISTS, ControlTrace(UPDATE) applies our properties, stack walking is enabled
   on Profile, CSwitch and ReadyThread with IMAGE_LOAD on, a few seconds are recorded, and STOP
   finalizes the .etl. Usage: seed002_kernel_logger [out.etl [seconds]]. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
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
        kp->Properties.LogFileMode = EVENT_TRACE_FILE_MODE_SEQUENTIAL;
        kp->Properties.EnableFlags = flags;
        kp->Properties.LoggerNameOffset = offsetof(struct kernel_props, LoggerName);
        kp->Properties.LogFileNameOffset = offsetof(struct kernel_props, LogFileName);
        snprintf(kp->LogFileName, MAX_PATH, "%s", file);
}

static void report(const char *what, ULONG status)
{
        printf("%s: %lu%s%s\n", what, (unsigned long)status, etw_last_error_text()[0] ? ": " : "",
               etw_last_error_text());
}

/* Another component of the process started the kernel logger first, with fewer flags. */
static ULONG start_kernel_logger_elsewhere(const char *file)
{
        struct kernel_props kp;
        CONTROLTRACE_ID h;
        props_init(&kp, file, EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD);
        ULONG status = StartTraceA(&h, KERNEL_LOGGER_NAMEA, &kp.Properties);
        printf("elsewhere: StartTrace(\"%s\") = %lu, EnableFlags 0x%08lx\n", KERNEL_LOGGER_NAMEA,
               (unsigned long)status, (unsigned long)kp.Properties.EnableFlags);
        return status;
}

int main(int argc, char **argv)
{
        const char *file = argc > 1 ? argv[1] : "seed002_kernel.etl";
        int seconds = argc > 2 ? atoi(argv[2]) : 3;
        ULONG status = start_kernel_logger_elsewhere(file);
        if (status != ERROR_SUCCESS) {
                report("StartTrace (elsewhere)", status);
                return status == ERROR_ACCESS_DENIED ? 77 : 1;
        }

        /* seed 002: our own start finds the kernel logger running */
        struct kernel_props props;
        props_init(&props, file,
                   EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD |
                           EVENT_TRACE_FLAG_IMAGE_LOAD | EVENT_TRACE_FLAG_PROFILE |
                           EVENT_TRACE_FLAG_CSWITCH | EVENT_TRACE_FLAG_DISPATCHER);
        CONTROLTRACE_ID hSessionNT = 0;
        status = StartTraceA(&hSessionNT, KERNEL_LOGGER_NAMEA, &props.Properties);
        report("StartTrace", status);
        if (status == ERROR_ALREADY_EXISTS) {
                /* update the running session with the information in our properties */
                status = ControlTraceA(0, KERNEL_LOGGER_NAMEA, &props.Properties,
                                       EVENT_TRACE_CONTROL_UPDATE);
                report("ControlTrace(UPDATE)", status);
                if (status != ERROR_SUCCESS)
                        goto stop;
                hSessionNT = props.Properties.Wnode.HistoricalContext;
                printf("updated: EnableFlags 0x%08lx, logger thread %lu\n",
                       (unsigned long)props.Properties.EnableFlags,
                       (unsigned long)(uintptr_t)props.Properties.LoggerThreadId);
        } else if (status != ERROR_SUCCESS) {
                return 1;
        }

        /* stack walking on SampledProfile, CSwitch and ReadyThread */
        CLASSIC_EVENT_ID classes[] = {
                {PerfInfoGuid, 46, {0}}, {Thread_V2_Guid, 36, {0}}, {Thread_V2_Guid, 50, {0}}};
        status = TraceSetInformation(hSessionNT, TraceStackTracingInfo, classes, sizeof(classes));
        report("TraceSetInformation(TraceStackTracingInfo)", status);
        if (status != ERROR_SUCCESS)
                goto stop;

        printf("recording %d s to %s\n", seconds, file);
        fflush(stdout);
        sleep((unsigned)seconds);

stop:;
        struct kernel_props q;
        props_init(&q, "", 0);
        ULONG stop_status =
                ControlTraceA(0, KERNEL_LOGGER_NAMEA, &q.Properties, EVENT_TRACE_CONTROL_STOP);
        report("ControlTrace(STOP)", stop_status);
        printf("stopped: %lu buffers written, %lu events lost, file %s\n",
               (unsigned long)q.Properties.BuffersWritten, (unsigned long)q.Properties.EventsLost,
               q.LogFileName);
        return status == ERROR_SUCCESS && stop_status == ERROR_SUCCESS ? 0 : 1;
}
