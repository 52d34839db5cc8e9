/* SPDX-License-Identifier: MIT */
/* KernelTraceControl.h: the Windows Performance Toolkit's kernel-session helpers (seed 004). */
#ifndef ETW_KERNELTRACECONTROL_H
#define ETW_KERNELTRACECONTROL_H

#include "evntrace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One kernel event to carry call stacks: its group GUID and type (a hook id). */
typedef struct _STACK_TRACING_EVENT_ID {
        GUID EventGuid;
        UCHAR Type;
        UCHAR Reserved[7];
} STACK_TRACING_EVENT_ID, *PSTACK_TRACING_EVENT_ID;
_Static_assert(sizeof(STACK_TRACING_EVENT_ID) == 24, "STACK_TRACING_EVENT_ID is 24 bytes");

/* Starts the NT Kernel Logger (Wnode.Guid SystemTraceControlGuid, or KernelRundownGuid with a
   logger name) with stack walking on the given events; ids of events that are not enabled
   are ignored. ERROR_ALREADY_EXISTS, ERROR_INVALID_FLAGS, ERROR_INVALID_PARAMETER,
   ERROR_OUT_OF_MEMORY as seed 004 gives them. */
ULONG WINAPI StartKernelTrace(PTRACEHANDLE TraceHandle, PEVENT_TRACE_PROPERTIES Properties,
                              PSTACK_TRACING_EVENT_ID StackTracingEventIds,
                              ULONG cStackTracingEventIds);

/* CreateMergedTraceFile's extended data (what a merge adds to the events). */
#define EVENT_TRACE_MERGE_EXTENDED_DATA_NONE               0x00000000
#define EVENT_TRACE_MERGE_EXTENDED_DATA_IMAGEID            0x00000001
#define EVENT_TRACE_MERGE_EXTENDED_DATA_BUILDINFO          0x00000002
#define EVENT_TRACE_MERGE_EXTENDED_DATA_VOLUME_MAPPING     0x00000004
#define EVENT_TRACE_MERGE_EXTENDED_DATA_WINSAT             0x00000008
#define EVENT_TRACE_MERGE_EXTENDED_DATA_EVENT_METADATA     0x00000010
#define EVENT_TRACE_MERGE_EXTENDED_DATA_PERFTRACK_METADATA 0x00000020
#define EVENT_TRACE_MERGE_EXTENDED_DATA_NETWORK_INTERFACE  0x00000040
#define EVENT_TRACE_MERGE_EXTENDED_DATA_NGEN_PDB           0x00000080
#define EVENT_TRACE_MERGE_EXTENDED_DATA_COMPRESS_TRACE     0x10000000
#define EVENT_TRACE_MERGE_EXTENDED_DATA_DEFAULT                                                    \
        (EVENT_TRACE_MERGE_EXTENDED_DATA_IMAGEID | EVENT_TRACE_MERGE_EXTENDED_DATA_BUILDINFO |     \
         EVENT_TRACE_MERGE_EXTENDED_DATA_WINSAT | EVENT_TRACE_MERGE_EXTENDED_DATA_EVENT_METADATA | \
         EVENT_TRACE_MERGE_EXTENDED_DATA_VOLUME_MAPPING)

/* Merges several .etl files into one, in time order, adding image identity events for the
   images the traces load. Names are UTF-8. */
ULONG WINAPI CreateMergedTraceFileA(LPCSTR wszMergedFileName, LPCSTR wszTraceFileNames[],
                                    ULONG cTraceFileNames, DWORD dwExtendedDataFlags);
#define CreateMergedTraceFile CreateMergedTraceFileA

#ifdef __cplusplus
}
#endif

#endif
