/* SPDX-License-Identifier: MIT */
/* evntrace.h: ETW controller and consumer types, constants and functions, as Windows defines them
 * for x64. */
#ifndef ETW_EVNTRACE_H
#define ETW_EVNTRACE_H

#include "wintypes.h"
#include "winerror.h"
#include "evntcons.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef ULONG64 TRACEHANDLE, *PTRACEHANDLE;
typedef ULONG64 PROCESSTRACE_HANDLE, *PPROCESSTRACE_HANDLE;
typedef ULONG64 CONTROLTRACE_ID;
#define INVALID_PROCESSTRACE_HANDLE ((TRACEHANDLE)INVALID_HANDLE_VALUE)

#define KERNEL_LOGGER_NAMEA "NT Kernel Logger"
#define GLOBAL_LOGGER_NAMEA "GlobalLogger"
#define EVENT_LOGGER_NAMEA  "EventLog"
#define MAX_MOF_FIELDS      16

/* WNODE_HEADER.Flags */
#define WNODE_FLAG_ALL_DATA     0x00000001
#define WNODE_FLAG_TRACED_GUID  0x00020000
#define WNODE_FLAG_LOG_WNODE    0x00040000
#define WNODE_FLAG_USE_GUID_PTR 0x00080000
#define WNODE_FLAG_USE_MOF_PTR  0x00100000

typedef struct _WNODE_HEADER {
        ULONG BufferSize;
        ULONG ProviderId;
        union {
                ULONG64 HistoricalContext;
                struct {
                        ULONG Version;
                        ULONG Linkage;
                };
        };
        union {
                HANDLE KernelHandle;
                LARGE_INTEGER TimeStamp;
        };
        GUID Guid;
        ULONG ClientContext;
        ULONG Flags;
} WNODE_HEADER, *PWNODE_HEADER;
_Static_assert(sizeof(WNODE_HEADER) == 48, "WNODE_HEADER is 48 bytes");
_Static_assert(offsetof(WNODE_HEADER, Guid) == 24, "WNODE_HEADER.Guid");
_Static_assert(offsetof(WNODE_HEADER, ClientContext) == 40, "WNODE_HEADER.ClientContext");

/* Logging modes: EVENT_TRACE_PROPERTIES.LogFileMode. */
#define EVENT_TRACE_FILE_MODE_NONE             0x00000000
#define EVENT_TRACE_FILE_MODE_SEQUENTIAL       0x00000001
#define EVENT_TRACE_FILE_MODE_CIRCULAR         0x00000002
#define EVENT_TRACE_FILE_MODE_APPEND           0x00000004
#define EVENT_TRACE_FILE_MODE_NEWFILE          0x00000008
#define EVENT_TRACE_FILE_MODE_PREALLOCATE      0x00000020
#define EVENT_TRACE_NONSTOPPABLE_MODE          0x00000040
#define EVENT_TRACE_SECURE_MODE                0x00000080
#define EVENT_TRACE_REAL_TIME_MODE             0x00000100
#define EVENT_TRACE_DELAY_OPEN_FILE_MODE       0x00000200
#define EVENT_TRACE_BUFFERING_MODE             0x00000400
#define EVENT_TRACE_PRIVATE_LOGGER_MODE        0x00000800
#define EVENT_TRACE_ADD_HEADER_MODE            0x00001000
#define EVENT_TRACE_USE_KBYTES_FOR_SIZE        0x00002000
#define EVENT_TRACE_USE_GLOBAL_SEQUENCE        0x00004000
#define EVENT_TRACE_USE_LOCAL_SEQUENCE         0x00008000
#define EVENT_TRACE_RELOG_MODE                 0x00010000
#define EVENT_TRACE_PRIVATE_IN_PROC            0x00020000
#define EVENT_TRACE_MODE_RESERVED              0x00100000
#define EVENT_TRACE_STOP_ON_HYBRID_SHUTDOWN    0x00400000
#define EVENT_TRACE_PERSIST_ON_HYBRID_SHUTDOWN 0x00800000
#define EVENT_TRACE_USE_PAGED_MEMORY           0x01000000
#define EVENT_TRACE_SYSTEM_LOGGER_MODE         0x02000000
#define EVENT_TRACE_COMPRESSED_MODE            0x04000000
#define EVENT_TRACE_INDEPENDENT_SESSION_MODE   0x08000000
#define EVENT_TRACE_NO_PER_PROCESSOR_BUFFERING 0x10000000
#define EVENT_TRACE_ADDTO_TRIAGE_DUMP          0x80000000

/* ControlTrace codes. */
#define EVENT_TRACE_CONTROL_QUERY               0
#define EVENT_TRACE_CONTROL_STOP                1
#define EVENT_TRACE_CONTROL_UPDATE              2
#define EVENT_TRACE_CONTROL_FLUSH               3
#define EVENT_TRACE_CONTROL_INCREMENT_FILE      4
#define EVENT_TRACE_CONTROL_CONVERT_TO_REALTIME 5

/* Kernel logger enable flags: EVENT_TRACE_PROPERTIES.EnableFlags (ETL-FORMAT.md 3.1). */
#define EVENT_TRACE_FLAG_PROCESS            0x00000001
#define EVENT_TRACE_FLAG_THREAD             0x00000002
#define EVENT_TRACE_FLAG_IMAGE_LOAD         0x00000004
#define EVENT_TRACE_FLAG_PROCESS_COUNTERS   0x00000008
#define EVENT_TRACE_FLAG_CSWITCH            0x00000010
#define EVENT_TRACE_FLAG_DPC                0x00000020
#define EVENT_TRACE_FLAG_INTERRUPT          0x00000040
#define EVENT_TRACE_FLAG_SYSTEMCALL         0x00000080
#define EVENT_TRACE_FLAG_DISK_IO            0x00000100
#define EVENT_TRACE_FLAG_DISK_FILE_IO       0x00000200
#define EVENT_TRACE_FLAG_DISK_IO_INIT       0x00000400
#define EVENT_TRACE_FLAG_DISPATCHER         0x00000800
#define EVENT_TRACE_FLAG_MEMORY_PAGE_FAULTS 0x00001000
#define EVENT_TRACE_FLAG_MEMORY_HARD_FAULTS 0x00002000
#define EVENT_TRACE_FLAG_VIRTUAL_ALLOC      0x00004000
#define EVENT_TRACE_FLAG_VAMAP              0x00008000
#define EVENT_TRACE_FLAG_NETWORK_TCPIP      0x00010000
#define EVENT_TRACE_FLAG_REGISTRY           0x00020000
#define EVENT_TRACE_FLAG_DBGPRINT           0x00040000
#define EVENT_TRACE_FLAG_JOB                0x00080000
#define EVENT_TRACE_FLAG_ALPC               0x00100000
#define EVENT_TRACE_FLAG_SPLIT_IO           0x00200000
#define EVENT_TRACE_FLAG_DEBUG_EVENTS       0x00400000
#define EVENT_TRACE_FLAG_DRIVER             0x00800000
#define EVENT_TRACE_FLAG_PROFILE            0x01000000
#define EVENT_TRACE_FLAG_FILE_IO            0x02000000
#define EVENT_TRACE_FLAG_FILE_IO_INIT       0x04000000
#define EVENT_TRACE_FLAG_NO_SYSCONFIG       0x10000000
#define EVENT_TRACE_FLAG_ENABLE_RESERVE     0x20000000
#define EVENT_TRACE_FLAG_FORWARD_WMI        0x40000000
#define EVENT_TRACE_FLAG_EXTENSION          0x80000000

/* Event types (opcodes) of classic events. */
#define EVENT_TRACE_TYPE_INFO        0x00
#define EVENT_TRACE_TYPE_START       0x01
#define EVENT_TRACE_TYPE_END         0x02
#define EVENT_TRACE_TYPE_STOP        0x02
#define EVENT_TRACE_TYPE_DC_START    0x03
#define EVENT_TRACE_TYPE_DC_END      0x04
#define EVENT_TRACE_TYPE_EXTENSION   0x05
#define EVENT_TRACE_TYPE_REPLY       0x06
#define EVENT_TRACE_TYPE_DEQUEUE     0x07
#define EVENT_TRACE_TYPE_RESUME      0x07
#define EVENT_TRACE_TYPE_CHECKPOINT  0x08
#define EVENT_TRACE_TYPE_SUSPEND     0x08
#define EVENT_TRACE_TYPE_WINEVT_SEND 0x09
#define EVENT_TRACE_TYPE_LOAD        0x0A

/* Last Branch Record configuration (seed 000): the filter bits suppress branch types. */
typedef enum EVNTRACE_LBR_FLAGS {
        EVNTRACE_LBR_FILTER_NONE = 0x0,
        EVNTRACE_LBR_FILTER_KERNEL = 0x1,
        EVNTRACE_LBR_FILTER_USER = 0x2,
        EVNTRACE_LBR_FILTER_JCC = 0x4,
        EVNTRACE_LBR_FILTER_NEAR_REL_CALL = 0x8,
        EVNTRACE_LBR_FILTER_NEAR_IND_CALL = 0x10,
        EVNTRACE_LBR_FILTER_NEAR_RET = 0x20,
        EVNTRACE_LBR_FILTER_NEAR_IND_JMP = 0x40,
        EVNTRACE_LBR_FILTER_NEAR_REL_JMP = 0x80,
        EVNTRACE_LBR_FILTER_FAR_BRANCH = 0x100,
        EVNTRACE_LBR_CALLSTACK_ENABLE = 0x200,
        EVNTRACE_LBR_SAMPLED = 0x400
} TRACE_LBR_CONFIGURATION;
#define EVNTRACE_LBR_VALID_FLAGS 0x7FF
#define EVNTRACE_MAX_LBR_EVENTS  4

typedef struct _EVENT_TRACE_PROPERTIES {
        WNODE_HEADER Wnode;
        ULONG BufferSize;
        ULONG MinimumBuffers;
        ULONG MaximumBuffers;
        ULONG MaximumFileSize;
        ULONG LogFileMode;
        ULONG FlushTimer;
        ULONG EnableFlags;
        union {
                LONG AgeLimit;
                LONG FlushThreshold;
        };
        ULONG NumberOfBuffers;
        ULONG FreeBuffers;
        ULONG EventsLost;
        ULONG BuffersWritten;
        ULONG LogBuffersLost;
        ULONG RealTimeBuffersLost;
        HANDLE LoggerThreadId;
        ULONG LogFileNameOffset;
        ULONG LoggerNameOffset;
} EVENT_TRACE_PROPERTIES, *PEVENT_TRACE_PROPERTIES;
_Static_assert(sizeof(EVENT_TRACE_PROPERTIES) == 120, "EVENT_TRACE_PROPERTIES is 120 bytes on x64");
_Static_assert(offsetof(EVENT_TRACE_PROPERTIES, BufferSize) == 48,
               "EVENT_TRACE_PROPERTIES.BufferSize");
_Static_assert(offsetof(EVENT_TRACE_PROPERTIES, EnableFlags) == 72,
               "EVENT_TRACE_PROPERTIES.EnableFlags");
_Static_assert(offsetof(EVENT_TRACE_PROPERTIES, LoggerThreadId) == 104, "LoggerThreadId");
_Static_assert(offsetof(EVENT_TRACE_PROPERTIES, LoggerNameOffset) == 116, "LoggerNameOffset");

typedef struct _EVENT_TRACE_HEADER {
        USHORT Size;
        union {
                USHORT FieldTypeFlags;
                struct {
                        UCHAR HeaderType;
                        UCHAR MarkerFlags;
                };
        };
        union {
                ULONG Version;
                struct {
                        UCHAR Type;
                        UCHAR Level;
                        USHORT Version;
                } Class;
        };
        ULONG ThreadId;
        ULONG ProcessId;
        LARGE_INTEGER TimeStamp;
        union {
                GUID Guid;
                ULONGLONG GuidPtr;
        };
        union {
                struct {
                        ULONG KernelTime;
                        ULONG UserTime;
                };
                ULONG64 ProcessorTime;
                struct {
                        ULONG ClientContext;
                        ULONG Flags;
                };
        };
} EVENT_TRACE_HEADER, *PEVENT_TRACE_HEADER;
_Static_assert(sizeof(EVENT_TRACE_HEADER) == 0x30, "EVENT_TRACE_HEADER is 0x30 bytes");
_Static_assert(offsetof(EVENT_TRACE_HEADER, TimeStamp) == 0x10, "EVENT_TRACE_HEADER.TimeStamp");
_Static_assert(offsetof(EVENT_TRACE_HEADER, Guid) == 0x18, "EVENT_TRACE_HEADER.Guid");

typedef struct _EVENT_TRACE {
        EVENT_TRACE_HEADER Header;
        ULONG InstanceId;
        ULONG ParentInstanceId;
        GUID ParentGuid;
        PVOID MofData;
        ULONG MofLength;
        union {
                ULONG ClientContext;
                ETW_BUFFER_CONTEXT BufferContext;
        };
} EVENT_TRACE, *PEVENT_TRACE;
_Static_assert(sizeof(EVENT_TRACE) == 0x58, "EVENT_TRACE is 0x58 bytes on x64");
_Static_assert(offsetof(EVENT_TRACE, MofData) == 0x48, "EVENT_TRACE.MofData");
_Static_assert(offsetof(EVENT_TRACE, BufferContext) == 0x54, "EVENT_TRACE.BufferContext");

typedef struct _TRACE_LOGFILE_HEADER {
        ULONG BufferSize;
        union {
                ULONG Version;
                struct {
                        UCHAR MajorVersion;
                        UCHAR MinorVersion;
                        UCHAR SubVersion;
                        UCHAR SubMinorVersion;
                } VersionDetail;
        };
        ULONG ProviderVersion;
        ULONG NumberOfProcessors;
        LARGE_INTEGER EndTime;
        ULONG TimerResolution;
        ULONG MaximumFileSize;
        ULONG LogFileMode;
        ULONG BuffersWritten;
        union {
                GUID LogInstanceGuid;
                struct {
                        ULONG StartBuffers;
                        ULONG PointerSize;
                        ULONG EventsLost;
                        ULONG CpuSpeedInMHz;
                };
        };
        LPWSTR LoggerName;
        LPWSTR LogFileName;
        TIME_ZONE_INFORMATION TimeZone;
        LARGE_INTEGER BootTime;
        LARGE_INTEGER PerfFreq;
        LARGE_INTEGER StartTime;
        ULONG ReservedFlags;
        ULONG BuffersLost;
} TRACE_LOGFILE_HEADER, *PTRACE_LOGFILE_HEADER;
_Static_assert(sizeof(TRACE_LOGFILE_HEADER) == 0x118, "TRACE_LOGFILE_HEADER is 0x118 bytes on x64");
_Static_assert(offsetof(TRACE_LOGFILE_HEADER, PointerSize) == 0x2C, "PointerSize");
_Static_assert(offsetof(TRACE_LOGFILE_HEADER, LoggerName) == 0x38, "LoggerName");
_Static_assert(offsetof(TRACE_LOGFILE_HEADER, TimeZone) == 0x48, "TimeZone");
_Static_assert(offsetof(TRACE_LOGFILE_HEADER, BootTime) == 0xF8, "BootTime");
_Static_assert(offsetof(TRACE_LOGFILE_HEADER, StartTime) == 0x108, "StartTime");
_Static_assert(offsetof(TRACE_LOGFILE_HEADER, ReservedFlags) == 0x110, "ReservedFlags");

/* TRACE_LOGFILE_HEADER.ReservedFlags: the session clock (ETL-FORMAT.md 1.8). */
#define EVENT_TRACE_CLOCK_RAW         0
#define EVENT_TRACE_CLOCK_PERFCOUNTER 1
#define EVENT_TRACE_CLOCK_SYSTEMTIME  2
#define EVENT_TRACE_CLOCK_CPUCYCLE    3

typedef struct _EVENT_TRACE_LOGFILEA EVENT_TRACE_LOGFILEA, *PEVENT_TRACE_LOGFILEA;
typedef ULONG(WINAPI *PEVENT_TRACE_BUFFER_CALLBACKA)(PEVENT_TRACE_LOGFILEA Logfile);
typedef VOID(WINAPI *PEVENT_CALLBACK)(PEVENT_TRACE pEvent);
typedef VOID(WINAPI *PEVENT_RECORD_CALLBACK)(PEVENT_RECORD EventRecord);

struct _EVENT_TRACE_LOGFILEA {
        LPSTR LogFileName;
        LPSTR LoggerName;
        LONGLONG CurrentTime;
        ULONG BuffersRead;
        union {
                ULONG LogFileMode;
                ULONG ProcessTraceMode;
        };
        EVENT_TRACE CurrentEvent;
        TRACE_LOGFILE_HEADER LogfileHeader;
        PEVENT_TRACE_BUFFER_CALLBACKA BufferCallback;
        ULONG BufferSize;
        ULONG Filled;
        ULONG EventsLost;
        union {
                PEVENT_CALLBACK EventCallback;
                PEVENT_RECORD_CALLBACK EventRecordCallback;
        };
        ULONG IsKernelTrace;
        PVOID Context;
};
_Static_assert(sizeof(EVENT_TRACE_LOGFILEA) == 0x1C0, "EVENT_TRACE_LOGFILEA is 0x1C0 bytes on x64");
_Static_assert(offsetof(EVENT_TRACE_LOGFILEA, CurrentEvent) == 0x20, "CurrentEvent");
_Static_assert(offsetof(EVENT_TRACE_LOGFILEA, LogfileHeader) == 0x78, "LogfileHeader");
_Static_assert(offsetof(EVENT_TRACE_LOGFILEA, BufferCallback) == 0x190, "BufferCallback");
_Static_assert(offsetof(EVENT_TRACE_LOGFILEA, EventCallback) == 0x1A8, "EventCallback");
_Static_assert(offsetof(EVENT_TRACE_LOGFILEA, Context) == 0x1B8, "Context");

/* Identifies a kernel event by its group GUID and type (opcode): a hook id. */
typedef struct _CLASSIC_EVENT_ID {
        GUID EventGuid;
        UCHAR Type;
        UCHAR Reserved[7];
} CLASSIC_EVENT_ID, *PCLASSIC_EVENT_ID;
_Static_assert(sizeof(CLASSIC_EVENT_ID) == 24, "CLASSIC_EVENT_ID is 24 bytes");

/* TraceSampledProfileIntervalInfo: Interval in 100 ns units for a KPROFILE_SOURCE. */
typedef struct _TRACE_PROFILE_INTERVAL {
        ULONG Source;
        ULONG Interval;
} TRACE_PROFILE_INTERVAL, *PTRACE_PROFILE_INTERVAL;
_Static_assert(sizeof(TRACE_PROFILE_INTERVAL) == 8, "TRACE_PROFILE_INTERVAL is 8 bytes");

/* TraceProfileSourceListInfo: one entry per profile source, chained by NextEntryOffset. */
typedef struct _PROFILE_SOURCE_INFO {
        ULONG NextEntryOffset;
        ULONG Source;
        ULONG MinInterval;
        ULONG MaxInterval;
        ULONG64 Reserved;
        WCHAR Description[1];
} PROFILE_SOURCE_INFO, *PPROFILE_SOURCE_INFO;
_Static_assert(offsetof(PROFILE_SOURCE_INFO, Description) == 24, "PROFILE_SOURCE_INFO.Description");

typedef struct _TRACE_VERSION_INFO {
        UINT EtwTraceProcessingVersion;
        UINT Reserved;
} TRACE_VERSION_INFO, *PTRACE_VERSION_INFO;

typedef enum _TRACE_QUERY_INFO_CLASS {
        TraceGuidQueryList = 0,
        TraceGuidQueryInfo = 1,
        TraceGuidQueryProcess = 2,
        TraceStackTracingInfo = 3,
        TraceSystemTraceEnableFlagsInfo = 4,
        TraceSampledProfileIntervalInfo = 5,
        TraceProfileSourceConfigInfo = 6,
        TraceProfileSourceListInfo = 7,
        TracePmcEventListInfo = 8,
        TracePmcCounterListInfo = 9,
        TraceSetDisallowList = 10,
        TraceVersionInfo = 11,
        TraceGroupQueryList = 12,
        TraceGroupQueryInfo = 13,
        TraceDisallowListQuery = 14,
        TraceInfoReserved15 = 15,
        TracePeriodicCaptureStateListInfo = 16,
        TracePeriodicCaptureStateInfo = 17,
        TraceProviderBinaryTracking = 18,
        TraceMaxLoggersQuery = 19,
        TraceLbrConfigurationInfo = 20,
        TraceLbrEventListInfo = 21,
        TraceMaxPmcCounterQuery = 22,
        TraceStreamCount = 23,
        TraceStackCachingInfo = 24,
        TracePmcCounterOwners = 25,
        TraceUnifiedStackCachingInfo = 26,
        TracePmcSessionInformation = 27,
        MaxTraceSetInfoClass
} TRACE_QUERY_INFO_CLASS,
        TRACE_INFO_CLASS;

/* Kernel provider and control GUIDs (ETL-FORMAT.md 2.9, 3.10, 3.11); defined in
 * backend/etw_guids.c. */
extern const GUID SystemTraceControlGuid; /* 9e814aad-3204-11d2-9a82-006008a86939 */
extern const GUID EventTraceGuid;         /* 68fdd900-4a3e-11d1-84f4-0000f80464e3 */
extern const GUID EventTraceConfigGuid;   /* 01853a65-418f-4f36-aefc-dc0f1d2fd235 */
extern const GUID KernelRundownGuid;      /* 3b9c9951-3480-4220-9377-9c8e5184f5cd */
extern const GUID DiskIoGuid;
extern const GUID PageFaultGuid;
extern const GUID ProcessGuid;
extern const GUID FileIoGuid;
extern const GUID ThreadGuid;
extern const GUID TcpIpGuid;
extern const GUID JobGuid;
extern const GUID UdpIpGuid;
extern const GUID RegistryGuid;
extern const GUID DbgPrintGuid;
extern const GUID LastBranchRecordGuid; /* 99134383-5248-43fc-834b-529454e75df3 */
extern const GUID WnfGuid;
extern const GUID PoolGuid;
extern const GUID PerfInfoGuid; /* ce1dbfb4-137e-4da6-87b0-3f59aa102cbc */
extern const GUID HeapGuid;
extern const GUID ObjectGuid;
extern const GUID PowerGuid;
extern const GUID ModBoundGuid;
extern const GUID ImageLoadGuid; /* 2cb15d1d-5fc1-11d2-abe1-00a0c911f518 */
extern const GUID DpcGuid;
extern const GUID CcGuid;
extern const GUID CritSecGuid;
extern const GUID StackWalkGuid; /* def2fe46-7bd6-4b80-bd94-f57fe20d0ce3 */
extern const GUID UmsGuid;
extern const GUID AlpcGuid;
extern const GUID SplitIoGuid;
extern const GUID ThreadPoolGuid;
extern const GUID HypervisorGuid;
extern const GUID HypervisorXGuid;
extern const GUID KernelTraceControlImageIdGuid;  /* b3e675d7-2554-4f18-830b-2762732560de */
extern const GUID SysConfigExGuid;                /* 9b79ee91-b5fd-41c0-a243-4248e266e9d0 */
extern const GUID WinSatGuid;                     /* ed54dff8-c409-4cf6-bf83-05e1e61a09c4 */
extern const GUID KernelTraceControlMetaDataGuid; /* bbccf6c1-6cd1-48c4-80ff-839482e37671 */

#define TRACE_LBR_CONFIGURATION_NONE EVNTRACE_LBR_FILTER_NONE

/* The controller functions (seeds 002, 003, 004; Windows' evntrace.h). LoggerName and the
   names at the EVENT_TRACE_PROPERTIES offsets are UTF-8 here. */
ULONG WMIAPI StartTraceA(CONTROLTRACE_ID *TraceId, LPCSTR InstanceName,
                         PEVENT_TRACE_PROPERTIES Properties);
ULONG WMIAPI ControlTraceA(CONTROLTRACE_ID TraceId, LPCSTR InstanceName,
                           PEVENT_TRACE_PROPERTIES Properties, ULONG ControlCode);
ULONG WMIAPI StopTraceA(CONTROLTRACE_ID TraceId, LPCSTR InstanceName,
                        PEVENT_TRACE_PROPERTIES Properties);
ULONG WMIAPI QueryTraceA(CONTROLTRACE_ID TraceId, LPCSTR InstanceName,
                         PEVENT_TRACE_PROPERTIES Properties);
ULONG WMIAPI UpdateTraceA(CONTROLTRACE_ID TraceId, LPCSTR InstanceName,
                          PEVENT_TRACE_PROPERTIES Properties);
ULONG WMIAPI FlushTraceA(CONTROLTRACE_ID TraceId, LPCSTR InstanceName,
                         PEVENT_TRACE_PROPERTIES Properties);
ULONG WMIAPI TraceSetInformation(CONTROLTRACE_ID SessionHandle, TRACE_INFO_CLASS InformationClass,
                                 PVOID TraceInformation, ULONG InformationLength);
ULONG WMIAPI TraceQueryInformation(CONTROLTRACE_ID SessionHandle, TRACE_INFO_CLASS InformationClass,
                                   PVOID TraceInformation, ULONG InformationLength,
                                   PULONG ReturnLength);
ULONG WMIAPI TraceConfigureLastBranchRecord(CONTROLTRACE_ID TraceId,
                                            TRACE_LBR_CONFIGURATION LbrConfiguration,
                                            CLASSIC_EVENT_ID const *Events, ULONG EventCount);

/* Every running session's properties and statistics, as ControlTrace(QUERY) fills them, in
   PropertyArray[0 .. PropertyArrayCount-1] (each with Wnode.BufferSize and the name offsets
   set); *LoggerCount receives the number of sessions running. ERROR_MORE_DATA when more sessions
   run than PropertyArrayCount, or a name did not fit; ERROR_INVALID_PARAMETER for a count of 0
   or over 64, a NULL array or entry. Sessions are those of the caller's session host (its user's;
   etw/etwtop_ext.h). */
ULONG WMIAPI QueryAllTracesA(PEVENT_TRACE_PROPERTIES *PropertyArray, ULONG PropertyArrayCount,
                             PULONG LoggerCount);

#define QueryAllTraces QueryAllTracesA

#define StartTrace   StartTraceA
#define ControlTrace ControlTraceA
#define StopTrace    StopTraceA
#define QueryTrace   QueryTraceA
#define UpdateTrace  UpdateTraceA
#define FlushTrace   FlushTraceA

/* The consumer functions (seed 001). OpenTraceA reads the file's header into
   Logfile->LogfileHeader; ProcessTrace delivers the events of up to 64 files merged in time
   order, or of one real-time session; CloseTrace releases the handle. */
PROCESSTRACE_HANDLE WMIAPI OpenTraceA(PEVENT_TRACE_LOGFILEA Logfile);
ULONG WMIAPI ProcessTrace(PROCESSTRACE_HANDLE *HandleArray, ULONG HandleCount, LPFILETIME StartTime,
                          LPFILETIME EndTime);
ULONG WMIAPI CloseTrace(PROCESSTRACE_HANDLE TraceHandle);

/* The calling thread's last error, set by OpenTraceA (Windows: errhandlingapi.h). */
DWORD WINAPI GetLastError(void);
VOID WINAPI SetLastError(DWORD dwErrCode);

#define OpenTrace            OpenTraceA
#define EVENT_TRACE_LOGFILE  EVENT_TRACE_LOGFILEA
#define PEVENT_TRACE_LOGFILE PEVENT_TRACE_LOGFILEA

/* etwtop extension: the human message for the calling thread's last ETW error, naming the
   problem and, for files, the byte offset. Empty when there is none. Not a Windows function. */
const char *etw_last_error_text(void);

#ifdef __cplusplus
}
#endif

#endif
