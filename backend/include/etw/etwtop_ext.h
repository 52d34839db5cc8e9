/* SPDX-License-Identifier: MIT */
/* etwtop_ext.h: etwtop's additions to the API (not Windows functions): the process a kernel
   logger traces, what a consumer met in a file, what this machine can collect, the event id of
   a kernel hook, and a running session's kept window of recent buffers saved as a file (the
   screen's save key). Each returns an ERROR_*
   code and leaves its message in etw_last_error_text(), as the Windows functions do. */
#ifndef ETW_ETWTOP_EXT_H
#define ETW_ETWTOP_EXT_H

#include "evntrace.h"

/* etwtop's information class for TraceSetInformation and TraceQueryInformation (not a Windows
   class; beyond Windows' range): the process a kernel logger traces, as a LONG: a process id
   (that process and its threads, those it starts later included) or -1 (the whole system, the
   default). Like TraceProfileSourceConfigInfo (seed 000), handle 0 holds the value for the kernel
   loggers this process starts next (StartTrace, StartKernelTrace); it stays until set again.
   With a kernel logger's handle, TraceQueryInformation gives that session's process, and
   TraceSetInformation accepts only the value the session has: its events are opened on the
   process's threads at the start, so a running session's process cannot change
   (ERROR_NOT_SUPPORTED). A process that does not exist fails the StartTrace that takes it
   (ERROR_WMI_INSTANCE_NOT_FOUND). Other errors: ERROR_BAD_LENGTH (not 4 bytes; a query sets
   *ReturnLength to 4), ERROR_INVALID_PARAMETER (a NULL buffer, 0 or below -1, a session that is
   not a kernel logger), ERROR_WMI_INSTANCE_NOT_FOUND (no such session). doc/etwtop-api.md. */
#define ETWTOP_TRACE_PROCESS_INFO ((TRACE_INFO_CLASS)0x1000)

/* What the reader met in a file processed by ProcessTrace. */
struct etw_trace_stats {
        ULONG nr_buffers;
        ULONG nr_buffers_compressed;
        ULONG nr_buffers_damaged; /* skipped whole or in part */
        ULONG nr_cpus;
        ULONG64 nr_records;
        ULONG64 nr_records_skipped; /* WPP messages and header types with no event form */
        ULONG64 nr_events_lost;     /* the header's EventsLost plus buffers flagged EVENTS_LOST */
        char last_warning[256];     /* the last problem met, with its byte offset; "" if none */
};

/* Fills *stats for a file handle from OpenTraceA. Returns ERROR_SUCCESS, ERROR_INVALID_HANDLE,
   or ERROR_INVALID_PARAMETER (NULL stats or a real-time handle). */
ULONG etw_trace_get_stats(PROCESSTRACE_HANDLE TraceHandle, struct etw_trace_stats *stats);

/* What this machine can collect, and why not (the capability probe: PMU and LBR devices,
   perf_event_paranoid, kptr_restrict, tracefs). The reasons are sentences for a screen. */
struct etw_machine_caps {
        BOOL has_cpu_wide; /* system-wide sessions (root, CAP_PERFMON, or perf_event_paranoid) */
        BOOL has_pmu;      /* a hardware PMU: PMC sampling and counters */
        BOOL has_lbr;      /* last branch records */
        BOOL has_kallsyms; /* kernel symbols with their addresses */
        ULONG nr_cpus;
        char why_no_cpu_wide[160];
        char why_no_pmu[160];
        char why_no_lbr[160];
        char why_no_kallsyms[160];
};

/* Fills *caps (probed once per process). ERROR_SUCCESS, or ERROR_INVALID_PARAMETER for NULL. */
ULONG etw_query_machine_caps(struct etw_machine_caps *caps);

/* The CLASSIC_EVENT_ID of a kernel hook id (group << 8 | type), as TraceSetInformation's event
   lists take it: the provider GUID consumers see and the type. ERROR_SUCCESS, or
   ERROR_INVALID_PARAMETER for a group with no known provider or a NULL out. */
ULONG etw_event_id_of_hook(USHORT hook_id, CLASSIC_EVENT_ID *out);

/* The kernel hook id (group << 8 | type) of a CLASSIC_EVENT_ID, as TraceQueryInformation's
   event lists give them. ERROR_SUCCESS, or ERROR_INVALID_PARAMETER for a provider that is not
   a kernel group's or a NULL argument. */
ULONG etw_hook_of_event_id(const CLASSIC_EVENT_ID *id, USHORT *hook_id);

/* A running session (real-time or file) also keeps its most recent buffers in memory, up to
   max_bytes, for etw_save_window. ERROR_SUCCESS, ERROR_WMI_INSTANCE_NOT_FOUND,
   ERROR_INVALID_PARAMETER or ERROR_NOT_ENOUGH_MEMORY. */
ULONG etw_keep_window(CONTROLTRACE_ID TraceId, ULONG64 max_bytes);

/* Writes the kept window of a running session (or the ring of a buffering-mode one): its most
   recent buffers, framed by their own first and last timestamps, then a rundown of what runs now
   (processes, threads, images with their identity, the kernel symbols hit), as a self-contained
   .etl at path: created 0600, never through a symlink, never over an existing file unless
   is_force. ERROR_SUCCESS, ERROR_WMI_INSTANCE_NOT_FOUND, ERROR_INVALID_PARAMETER (no window), or
   the file's error (ERROR_ALREADY_EXISTS, ERROR_ACCESS_DENIED, ERROR_DISK_FULL ...). */
ULONG etw_save_window(CONTROLTRACE_ID TraceId, LPCSTR path, BOOL is_force);

#endif
