/* SPDX-License-Identifier: MIT */
/* seed000_lbr.c: the TraceConfigureLastBranchRecord example of seed 000, built against etwtop's
   ETW API. Adapted only where Linux differs: the includes, char strings for WCHAR (the A
   functions, snprintf for wcscpy_s), 0 for a NULL integer handle, {0} initializers, a
   privilege stub (the live source checks perf privileges itself), and a message where the
   original silently returns 1. On a machine without LBR the LBR call fails with
   ERROR_NOT_SUPPORTED and the program says so. */
#include <stddef.h>
#include <stdio.h>

#include "etw/evntrace.h"

#ifndef MAX_PATH
#define MAX_PATH 260
#endif

static const GUID PerfinfoGuid = {
        0xce1dbfb4, 0x137e, 0x4da6, {0x87, 0xb0, 0x3f, 0x59, 0xaa, 0x10, 0x2c, 0xbc}};

typedef struct _MyEventTraceProperties_t {
        EVENT_TRACE_PROPERTIES Properties;
        char LoggerName[MAX_PATH];
        char LogFileName[MAX_PATH];
} MyEventTraceProperties_t;

typedef struct _PERFINFO_GROUPMASK {
        ULONG Masks[8];
} PERFINFO_GROUPMASK;

static BOOL EnableSystemProfilePrivilege(void);

static const char *status_name(ULONG status)
{
        switch (status) {
        case ERROR_SUCCESS: return "ERROR_SUCCESS";
        case ERROR_NOT_SUPPORTED: return "ERROR_NOT_SUPPORTED";
        case ERROR_ACCESS_DENIED: return "ERROR_ACCESS_DENIED";
        case ERROR_INVALID_PARAMETER: return "ERROR_INVALID_PARAMETER";
        case ERROR_ALREADY_EXISTS: return "ERROR_ALREADY_EXISTS";
        case ERROR_FILE_EXISTS: return "ERROR_FILE_EXISTS";
        default: return "error";
        }
}

static void report(const char *what, ULONG status)
{
        printf("%s: %s (%lu)%s%s\n", what, status_name(status), (unsigned long)status,
               etw_last_error_text()[0] ? ": " : "", etw_last_error_text());
}

int main(void)
{
        CONTROLTRACE_ID traceHandle = 0;
        ULONG status = ERROR_SUCCESS;
        MyEventTraceProperties_t props = {0};

        snprintf(props.LoggerName, MAX_PATH, "%s", "LbrLogger");
        snprintf(props.LogFileName, MAX_PATH, "%s", "LbrProfile.etl");

        props.Properties.Wnode.BufferSize = sizeof(props);
        props.Properties.Wnode.Flags = WNODE_FLAG_TRACED_GUID;
        props.Properties.LogFileMode =
                EVENT_TRACE_FILE_MODE_SEQUENTIAL | EVENT_TRACE_SYSTEM_LOGGER_MODE;
        props.Properties.EnableFlags =
                EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD | EVENT_TRACE_FLAG_IMAGE_LOAD;
        props.Properties.LoggerNameOffset = offsetof(MyEventTraceProperties_t, LoggerName);
        props.Properties.LogFileNameOffset = offsetof(MyEventTraceProperties_t, LogFileName);

        if (!EnableSystemProfilePrivilege())
                return 1;

        // Specify the PMC event to profile on and configure its interval.
        // This preferably needs to be done before starting a trace.
        TRACE_PROFILE_INTERVAL profile = {0};
        profile.Source = 6; // ProfileBranchInstructions (see: wpr -pmcsources)
        profile.Interval = 65536;

        status = TraceSetInformation(0, TraceProfileSourceConfigInfo, &profile.Source,
                                     sizeof(ULONG));
        if (status != ERROR_SUCCESS) {
                report("TraceSetInformation(TraceProfileSourceConfigInfo)", status);
                return 1;
        }

        status = TraceSetInformation(0, TraceSampledProfileIntervalInfo, &profile, sizeof(profile));
        if (status != ERROR_SUCCESS) {
                report("TraceSetInformation(TraceSampledProfileIntervalInfo)", status);
                return 1;
        }

        status = StartTraceA(&traceHandle, props.LoggerName, &props.Properties);
        if (status != ERROR_SUCCESS) {
                report("StartTrace", status);
                return 1;
        }

        // Configure LBR to trigger on PerfInfo PMC interrupt (type 0x2f).
        CLASSIC_EVENT_ID profileEvent = {0};
        profileEvent.EventGuid = PerfinfoGuid;
        profileEvent.Type = 0x2f; // PERFINFO_LOG_TYPE_PMC_INTERRUPT

        status = TraceConfigureLastBranchRecord(traceHandle,
                                                TRACE_LBR_CONFIGURATION_NONE, // no filters
                                                &profileEvent, 1);
        report("TraceConfigureLastBranchRecord", status);
        if (status != ERROR_SUCCESS)
                goto Stop;

        // Start PMC profiling and associate it with this trace.
        // This is done by setting the second mask to the PMC_PROFILE mask.
        PERFINFO_GROUPMASK pmcMasks = {0};
        pmcMasks.Masks[1] = 0x00000400; // Mask of PERF_PMC_PROFILE
        status = TraceSetInformation(traceHandle, TraceSystemTraceEnableFlagsInfo, &pmcMasks,
                                     sizeof(pmcMasks));
        report("TraceSetInformation(TraceSystemTraceEnableFlagsInfo)", status);

Stop:
        ControlTraceA(traceHandle, NULL, &props.Properties, EVENT_TRACE_CONTROL_STOP);
        return (status == ERROR_SUCCESS) ? 0 : 1;
}

/* Windows needs SeSystemProfilePrivilege enabled in the token; on Linux the live source
   checks perf_event_open's privileges and StartTrace says ERROR_ACCESS_DENIED with the fix. */
static BOOL EnableSystemProfilePrivilege(void)
{
        return TRUE;
}
