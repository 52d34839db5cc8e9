/* SPDX-License-Identifier: MIT */
/* etwtop_ext.h: etwtop's additions to the API (not Windows functions): the process a kernel
   logger traces, what a consumer met in a file, what this machine can collect, the event id of
   a kernel hook, and a running session's kept window of recent buffers saved as a file (the
   screen's save key), a real-time consumer's buffers handed over whole. Each returns an ERROR_*
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

/* TraceQueryInformation class (etwtop's): the real-time consumers a session has now, in every
   process (a ULONG; xperf -loggers' count). Query only, with the session's handle: any session.
   Errors: ERROR_BAD_LENGTH (not 4 bytes; *ReturnLength gets 4), ERROR_INVALID_PARAMETER (handle
   0, a NULL buffer), ERROR_WMI_INSTANCE_NOT_FOUND (no such session). */
#define ETWTOP_TRACE_CONSUMERS_INFO ((TRACE_INFO_CLASS)0x1002)

/* TraceSetInformation and TraceQueryInformation class (etwtop's): how a kernel logger walks the
   user part of the stacks TraceStackTracingInfo asks for, as a struct etw_stackwalk_info.
   ETWTOP_STACKWALK_FP: the kernel follows frame pointers (the default; code built without them
   gives broken stacks). ETWTOP_STACKWALK_DWARF: the kernel copies the user registers and
   UserStackBytes of the user stack at each sample, and the logger unwinds them with the
   modules' DWARF call frame information (.eh_frame, .debug_frame) as the samples arrive; the
   StackWalk events then hold the frames found, the copies are never written. ETWTOP_STACKWALK_AUTO:
   both are collected; the kernel's chain is kept where all of its frames lie in modules that
   keep frame pointers, DWARF is used for the others.
   With a kernel logger's handle only (it changes a running session, as TraceStackTracingInfo
   does; etwtop's UnwindStats events count the walks, doc/etwtop-provider.md). Errors:
   ERROR_BAD_LENGTH (not 8 bytes; a query sets *ReturnLength to 8), ERROR_INVALID_PARAMETER (a
   NULL buffer, handle 0, a mode beyond AUTO, UserStackBytes not a multiple of 8 or above 65528,
   a session that is not a kernel logger), ERROR_WMI_INSTANCE_NOT_FOUND (no such session).
   doc/unwind.md. */
#define ETWTOP_TRACE_STACKWALK_INFO ((TRACE_INFO_CLASS)0x1001)
#define ETWTOP_STACKWALK_FP         0
#define ETWTOP_STACKWALK_DWARF      1
#define ETWTOP_STACKWALK_AUTO       2
struct etw_stackwalk_info {
        ULONG Mode;           /* ETWTOP_STACKWALK_* */
        ULONG UserStackBytes; /* DWARF and AUTO: the stack copied per sample; 0: 8192 */
};

/* TraceQueryInformation class (etwtop's): a kernel logger's settings and counters in one call,
   as a struct etw_session_settings: what ControlTrace(QUERY) counts and what the classes named
   below each return, so that a screen that follows its session asks once per refresh, not
   eleven times (each a request to the session host). Query only, with a kernel logger's handle.
   Errors: ERROR_BAD_LENGTH (a buffer smaller than the structure; *ReturnLength gets its size),
   ERROR_INVALID_PARAMETER (handle 0, a NULL buffer, a session that is not a kernel logger),
   ERROR_WMI_INSTANCE_NOT_FOUND (no such session). */
#define ETWTOP_TRACE_SETTINGS_INFO    ((TRACE_INFO_CLASS)0x1003)
#define ETW_SETTINGS_MAX_STACK_EVENTS 256 /* TraceStackTracingInfo's events a session keeps */
#define ETW_SETTINGS_MAX_SOURCES      4   /* profile sources, PMC counters and events */
#define ETW_SETTINGS_MAX_LBR_EVENTS   4   /* EVNTRACE_MAX_LBR_EVENTS */
struct etw_session_settings {
        /* ControlTrace(QUERY)'s */
        ULONG EventsLost;
        ULONG BuffersWritten;
        ULONG RealTimeBuffersLost;
        ULONG BufferSize;      /* KB */
        ULONG MaximumFileSize; /* as StartTrace took it */
        LONG ProcessId;        /* ETWTOP_TRACE_PROCESS_INFO: -1, the whole system */
        ULONG GroupMasks[8];   /* TraceSystemTraceEnableFlagsInfo: PERFINFO_GROUPMASK.Masks */
        ULONG ProfileInterval; /* TraceSampledProfileIntervalInfo of ProfileTime (global) */
        ULONG NumberOfProfileSources;
        ULONG ProfileSources[ETW_SETTINGS_MAX_SOURCES]; /* TraceProfileSourceConfigInfo */
        ULONG NumberOfPmcCounters;
        ULONG PmcCounters[ETW_SETTINGS_MAX_SOURCES]; /* TracePmcCounterListInfo */
        ULONG LbrFilters;                            /* TraceLbrConfigurationInfo */
        struct etw_stackwalk_info StackWalk;         /* ETWTOP_TRACE_STACKWALK_INFO */
        ULONG NumberOfStackEvents;
        ULONG NumberOfPmcEvents;
        ULONG NumberOfLbrEvents;
        CLASSIC_EVENT_ID StackEvents[ETW_SETTINGS_MAX_STACK_EVENTS]; /* TraceStackTracingInfo */
        CLASSIC_EVENT_ID PmcEvents[ETW_SETTINGS_MAX_SOURCES];        /* TracePmcEventListInfo */
        CLASSIC_EVENT_ID LbrEvents[ETW_SETTINGS_MAX_LBR_EVENTS];     /* TraceLbrEventListInfo */
        /* changes whenever a session's settings or the global profile intervals do: these
           settings hold while a consumer's etw_realtime_get_session_state says the same */
        ULONG64 SettingsGeneration;
};

/* An image's CodeView (RSDS) record: which PDB it was built with. */
struct etw_codeview {
        GUID Signature;
        ULONG Age;
        CHAR PdbFileName[260]; /* as the image records it (ANSI) */
};

/* Finds the image a trace names (its path as the Image event has it, its TimeDateStamp and
   SizeOfImage) and reads its CodeView record: TRUE with *Out filled, FALSE when no file with
   that stamp and size is found or it has no RSDS record. */
typedef BOOL (*ETW_CODEVIEW_LOOKUP)(PVOID Context, LPCSTR ImagePath, ULONG TimeDateStamp,
                                    ULONG SizeOfImage, struct etw_codeview *Out);

/* etwtop's: where CreateMergedTraceFile(EVENT_TRACE_MERGE_EXTENDED_DATA_IMAGEID) finds the
   images, to add a KernelTraceControl DbgID_RSDS event after each ImageID it adds, as xperf's
   merge reads them from the image files (its symbol path). Lookup is asked once per distinct
   image (name, stamp, size); NULL: no DbgID_RSDS events. For this process's merges. */
ULONG etw_merge_set_codeview_lookup(ETW_CODEVIEW_LOOKUP Lookup, PVOID Context);

/* etwtop's: what the calling thread's last CreateMergedTraceFile skipped of its inputs, as one
   line into Text (Size bytes, NUL-terminated, cut to fit): the first input read
   only up to its damage (a perf.data cut short, a damaged buffer of an .etl skipped in whole or
   in part), with its path, the problem and its byte offset, and how many inputs more were
   damaged; "" where every input was read whole, or the merge failed. The merged file holds the
   rest, as the replay of a damaged file reads it. ERROR_SUCCESS, or ERROR_INVALID_PARAMETER (NULL
   Text or Size 0). */
ULONG etw_merge_get_damage(char *Text, ULONG Size);

/* Where else an ELF image a perf.data recording names may be (its recorded path, and its
   build-id where the recording gives one; BuildIdSize 0 where not): the Index-th place, from 0,
   into Out (Size bytes); FALSE when there are no more. */
typedef BOOL (*ETW_IMAGE_LOOKUP)(PVOID Context, LPCSTR ImagePath, const UCHAR *BuildId,
                                 ULONG BuildIdSize, ULONG Index, LPSTR Out, ULONG Size);

/* etwtop's: where the conversion of a perf.data file (OpenTrace of one, --merge) finds the
   images whose CFI its DWARF stack copies are walked with (perf record --call-graph dwarf),
   before their recorded paths: the first place Lookup gives whose file is the image (its
   build-id the recording's, where the recording gives one); then the recorded path; then perf's
   build-id cache ($PERF_BUILDID_DIR, else ~/.debug). NULL: the recorded path and the cache.
   For this process's conversions. */
ULONG etw_perf_data_set_image_lookup(ETW_IMAGE_LOOKUP Lookup, PVOID Context);

/* How a perf.data file's problem that did not stop its reading begins (an unfinished recording's
   data size of 0, a feature section past the file's end): the file was read whole, unlike a
   problem the conversion stopped at. */
#define ETW_READ_WHOLE "read whole, with a problem: "

/* What the reader met in a file processed by ProcessTrace. */
struct etw_trace_stats {
        ULONG nr_buffers;
        ULONG nr_buffers_compressed;
        ULONG nr_buffers_damaged; /* skipped whole or in part */
        ULONG nr_cpus;
        ULONG64 nr_records;
        ULONG64 nr_records_skipped; /* WPP messages without a time, header types with
                                       no event form */
        ULONG64 nr_events_lost;     /* the header's EventsLost plus buffers flagged EVENTS_LOST */
        char last_warning[256];     /* the last problem met, with its byte offset; "" if none
                                       (a perf.data's that did not stop its reading: it
                                       starts with ETW_READ_WHOLE) */
        /* XPRESS-compressed buffers read since ProcessTrace began: decompressed ahead by
           nr_inflate_workers threads (ETWTOP_READER_THREADS; 0: none), or by the thread that
           called ProcessTrace, where no worker had started it or it helped them */
        ULONG nr_inflate_workers;
        ULONG nr_buffers_inflated_ahead;
        ULONG nr_buffers_inflated_here;
};

/* Fills *stats for a file handle from OpenTraceA. Returns ERROR_SUCCESS, ERROR_INVALID_HANDLE,
   or ERROR_INVALID_PARAMETER (NULL stats or a real-time handle). */
ULONG etw_trace_get_stats(PROCESSTRACE_HANDLE TraceHandle, struct etw_trace_stats *stats);

/* For a real-time handle from OpenTraceA (during or after its ProcessTrace): the buffers
   delivered, and the buffers this consumer lost because it read too slowly (its queue in the
   session was full; the session's RealTimeBuffersLost counts every consumer's). ERROR_SUCCESS,
   ERROR_INVALID_HANDLE, or ERROR_INVALID_PARAMETER (a NULL pointer, a file handle). */
ULONG etw_realtime_get_stats(PROCESSTRACE_HANDLE TraceHandle, ULONG64 *nr_buffers_read,
                             ULONG64 *nr_buffers_lost);

/* A real-time session's counters, as ControlTrace(QUERY) has them, and the generation of its
   settings (etw_session_settings' SettingsGeneration: the settings ETWTOP_TRACE_SETTINGS_INFO
   answered hold while it is the same), as of the buffers delivered last (a session host sends
   them with its buffers) or now (a session of this process): what a screen refreshing at each
   delivery would otherwise ask its session for, a round trip to the host. Sequence grows with
   each new state. */
struct etw_realtime_session_state {
        ULONG64 Sequence;
        ULONG64 SettingsGeneration;
        ULONG64 EventsLost;
        ULONG64 BuffersWritten;
        ULONG64 RealTimeBuffersLost;
        ULONG BufferSize;      /* KB */
        ULONG MaximumFileSize; /* as StartTrace took it */
};

/* Fills *State for a real-time handle while its ProcessTrace runs. ERROR_SUCCESS,
   ERROR_INVALID_HANDLE, ERROR_INVALID_PARAMETER (NULL State, a file handle), ERROR_NOT_SUPPORTED
   (no state known: ProcessTrace is not running, or the session's host sends none). */
ULONG etw_realtime_get_session_state(PROCESSTRACE_HANDLE TraceHandle,
                                     struct etw_realtime_session_state *State);

/* ---- a real-time consumer's buffers, whole ----------------------------------------------------

   A consumer that decodes on another thread than ProcessTrace's (the screen: its model has one
   thread) would otherwise copy each EVENT_RECORD, its extended items and its data to hand it
   over. With a buffer callback, ProcessTrace hands over each buffer as the session delivered it
   instead, and the other thread walks its records itself (etw_buffer_next_record): one copy of
   the buffer, if any, rather than one of every record, and the records built where they are
   decoded. */

/* Called by ProcessTrace with each buffer of the session, the header buffer first, in place of
   the EventRecordCallback calls for its records (BufferCallback follows, as without it). Buffer
   (8-byte aligned) is valid during the call only; Context is the logfile's Context. */
typedef VOID(WINAPI *ETW_BUFFER_CALLBACK)(PVOID Context, const VOID *Buffer, ULONG Size);

/* Sets a real-time handle's buffer callback, between OpenTraceA and ProcessTrace; NULL takes it
   away. Its records are those of PROCESS_TRACE_MODE_EVENT_RECORD | RAW_TIMESTAMP, which the
   handle must have been opened with. While it is set, ProcessTrace leaves CurrentTime at the
   session's start (it does not read the records). ERROR_SUCCESS, ERROR_INVALID_HANDLE,
   ERROR_INVALID_PARAMETER (a file handle, or another mode), ERROR_BUSY (ProcessTrace runs). */
ULONG etw_realtime_set_buffer_callback(PROCESSTRACE_HANDLE TraceHandle,
                                       ETW_BUFFER_CALLBACK Callback);

/* The same buffers, held: with HoldId nonzero, Buffer stays where it is, read-only, after the
   call, until etw_realtime_release_buffers(TraceHandle, HoldId) or a later id gives it back (the
   other thread walks it there: no copy at all). HoldId is 0 where the session cannot lend its
   buffers (a session of this process): Buffer is then valid during the call only. Ids grow by
   one a buffer. */
typedef VOID(WINAPI *ETW_HELD_BUFFER_CALLBACK)(PVOID Context, const VOID *Buffer, ULONG Size,
                                               ULONG64 HoldId);

/* Sets a real-time handle's held-buffer callback in place of a buffer callback, as
   etw_realtime_set_buffer_callback sets that (the same modes and errors). */
ULONG etw_realtime_set_held_buffer_callback(PROCESSTRACE_HANDLE TraceHandle,
                                            ETW_HELD_BUFFER_CALLBACK Callback);

/* Gives back the held buffers up to HoldId, from any thread, in their order: those before it too.
   The session hands over no more than it can lend (a consumer that holds them all makes it queue
   the next ones, and count them lost past its budget, as a slow consumer does). ProcessTrace
   returns once every buffer it handed over is given back, or CloseTrace was called: the buffers
   are gone then. ERROR_SUCCESS (also when nothing is held), ERROR_INVALID_HANDLE. */
ULONG etw_realtime_release_buffers(PROCESSTRACE_HANDLE TraceHandle, ULONG64 HoldId);

/* The extended data items one record has at most. */
#define ETW_BUFFER_MAX_EXT_ITEMS 16

/* A walk through one buffer's records: the caller sets Buffer, Size and Context (each record's
   UserContext), and Position to 0; the rest is the walk's, read from the buffer's header when
   Position is 0 (once a buffer, not at every record). */
struct etw_buffer_walk {
        const VOID *Buffer; /* 8-byte aligned, as ETW_BUFFER_CALLBACK's */
        ULONG Size;
        ULONG Position; /* the next record's offset in Buffer (the walk's) */
        PVOID Context;
        ULONG End;             /* where the buffer's records end; 0: no buffer (the walk's) */
        USHORT ProcessorIndex; /* the buffer's CPU and logger, each record's BufferContext */
        USHORT LoggerId;
        EVENT_HEADER_EXTENDED_DATA_ITEM Items[ETW_BUFFER_MAX_EXT_ITEMS]; /* Record's, the walk's */
};

/* Fills *Record with the walk's next record as ProcessTrace's EventRecordCallback gets it in
   PROCESS_TRACE_MODE_EVENT_RECORD | RAW_TIMESTAMP (its pointers aim into Buffer and the walk's
   Items, valid while both are), on any thread: TRUE, or FALSE at the buffer's end, where the
   buffer is damaged (the rest of it is skipped, as ProcessTrace skips it) or is no buffer. The
   buffer is read as untrusted: no length in it is taken without a check against Size. */
BOOL etw_buffer_next_record(struct etw_buffer_walk *Walk, PEVENT_RECORD Record);

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

/* ---- the session host (DESIGN.md "Sessions belong to the system") ----------------------------

   As on Windows, a session belongs to the system, not to the program that started it: a session
   host process owns every running session of a user (its perf events, logger thread, writer,
   kept window and real-time queues), and the controller and consumer functions of every program
   linked with this library talk to it over a Unix socket. StartTrace on a name running anywhere
   gives ERROR_ALREADY_EXISTS; ControlTrace (QUERY, UPDATE, FLUSH, STOP) by name or handle,
   TraceSetInformation, TraceQueryInformation, TraceConfigureLastBranchRecord, QueryAllTraces,
   OpenTrace/ProcessTrace of a real-time session, etw_keep_window and etw_save_window work from
   any process of that user; handles are the host's, valid in every process. A session outlives
   its starter; the host ends once it has had no session for a grace period.

   - The runtime directory: ETWTOP_RUNTIME_DIR (each "%u" in it becomes the caller's uid), else
     /run/etwtop for root, else $XDG_RUNTIME_DIR/etwtop, else /run/user/UID/etwtop when that
     user directory exists, else /tmp/etwtop-UID (a name another user can take first: the
     refusal then says to set XDG_RUNTIME_DIR or ETWTOP_RUNTIME_DIR); it must be the
     caller's own, mode 0700, not a symbolic link, or every call says why (ERROR_ACCESS_DENIED):
     an ordinary user can neither see, consume, change nor stop another user's or root's
     sessions, and the host also refuses any peer but its own user and root.
   - The first StartTrace that finds no host starts one (detached: fork, setsid; no exec).
   - Relative log file names are made absolute against the caller's current directory.
   - handle-0 settings (ETWTOP_TRACE_PROCESS_INFO, TraceProfileSourceConfigInfo) stay the
     calling process's and go with its next start; the profile interval is global, as on
     Windows: it changes the host's running sessions too.
   - A real-time consumer in another process receives the same buffers the files hold; a slow
     consumer loses buffers (etw_realtime_get_stats, RealTimeBuffersLost), never the logger's
     time nor another consumer's buffers. If the host is killed, calls say so: ControlTrace
     gives ERROR_WMI_INSTANCE_NOT_FOUND ("the session host ... is gone"), a ProcessTrace under
     way returns ERROR_BROKEN_PIPE; a file session's complete buffers stay readable.
   - ETWTOP_NO_HOST=1 (read at the first call) keeps every session inside the calling process,
     as before the host: for tests and embedded use; no other process can see those sessions,
     and they end with it. ETWTOP_HOST_GRACE_MS sets the host's idle grace (5000 ms).
   - The host does for a client only what the client could do itself (its capabilities, its
     mount namespace), and caps what any client can hold of it (time, connections, memory):
     doc/etwtop-api.md, "What the session host does for whom, and its limits". */

/* etw_host_run's flags. */
#define ETW_HOST_PERSISTENT 0x1 /* run until SIGTERM/SIGINT, even without a session */

/* Runs the session host of the caller's runtime directory in the calling process, in the
   foreground (`etwtop --host`, the systemd unit dist/etwtop-host.service), until SIGTERM or
   SIGINT (every session is then stopped and its file finalized) or, without
   ETW_HOST_PERSISTENT, until it has had no session for the grace period. ERROR_SUCCESS when it
   ended, ERROR_ALREADY_EXISTS when another host serves the directory, ERROR_ACCESS_DENIED (the
   directory is not the caller's own and private), or the error that kept it from serving. */
ULONG etw_host_run(ULONG Flags);

/* Starts the session host of the caller's runtime directory now, where none serves it and the
   caller's sessions run in one (not with ETWTOP_NO_HOST), as the caller's first StartTrace would
   later. For a program that is about to grow: the host is a fork of the caller, and a fork
   shares every page the caller then holds until one side writes it, which then costs a copy
   and a page fault; made first, it shares almost none. Optional: a host idle for its grace
   period (ETWTOP_HOST_GRACE_MS) ends, and StartTrace starts another. ERROR_SUCCESS, or the
   error that kept the host from starting (StartTrace would meet it too). */
ULONG etw_host_prestart(void);

/* etwtop's addition, for a program whose session should not outlive it (the screen's, a
   recording's), unlike the Windows default: the session is stopped, its file finalized as by
   ControlTrace(STOP), when the calling process ends, however it ends (kill -9 included).
   ERROR_SUCCESS, ERROR_INVALID_PARAMETER (TraceId 0), ERROR_WMI_INSTANCE_NOT_FOUND. With
   ETWTOP_NO_HOST the session is the process's own and ends with it already. */
ULONG etw_bind_session(CONTROLTRACE_ID TraceId);

#endif
