/* SPDX-License-Identifier: MIT */
/* etw_client.h: etwtop as an ETW controller: a kernel session started from collection settings
   in the API's terms, changed while it runs, read back, and stopped; only through
   backend/include/etw/. The screen and --record both use it, as any API user would. */
#ifndef ETWTOP_ETW_CLIENT_H
#define ETWTOP_ETW_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "etw/evntrace.h"
#include "etw/ntwmi.h"

struct etw_realtime_session_state; /* etw/etwtop_ext.h */

#define COLLECT_MAX_HOOKS    32
#define COLLECT_MAX_COUNTERS 4

/* What a kernel session collects: the classes of TraceSetInformation and
   TraceConfigureLastBranchRecord, as plain values. */
struct collect_settings {
        PERFINFO_GROUPMASK masks; /* Masks[0] is EnableFlags; the rest the groups beyond it */
        uint16_t stack_hooks[COLLECT_MAX_HOOKS]; /* TraceStackTracingInfo */
        uint32_t nr_stack_hooks;
        uint32_t interval_100ns; /* the timer's TraceSampledProfileIntervalInfo (0: 10000) */
        uint32_t pmc_source;     /* KPROFILE_SOURCE sampled under PMC_PROFILE (0: none) */
        uint32_t pmc_counters[COLLECT_MAX_COUNTERS]; /* TracePmcCounterListInfo */
        uint32_t nr_pmc_counters;
        uint16_t pmc_hooks[COLLECT_MAX_COUNTERS]; /* TracePmcEventListInfo */
        uint32_t nr_pmc_hooks;
        bool is_lbr_on;            /* LBR on the Profile events (TraceConfigureLastBranchRecord) */
        uint32_t lbr_filters;      /* EVNTRACE_LBR_FILTER_* branch types left out */
        int32_t pid;               /* -1: the whole system; else one process and its threads */
        uint32_t stack_walk;       /* ETWTOP_STACKWALK_*: how user stacks are walked */
        uint32_t user_stack_bytes; /* DWARF: the user stack copied per sample (0: the default) */
};

/* The default kernel session of the screen and --record. */
void collect_settings_init(struct collect_settings *s);

struct etw_client_options {
        const char *logger_name;  /* NULL: "NT Kernel Logger" */
        const char *file;         /* file mode: the .etl to write (NULL: none) */
        bool is_force;            /* replace file if it exists */
        bool is_real_time;        /* EVENT_TRACE_REAL_TIME_MODE */
        uint32_t buffer_size_kb;  /* 0: the API's default */
        uint32_t min_buffers;     /* 0: the API's default; a kernel logger's rings hold at least
                                     min_buffers x buffer_size_kb, all CPUs together */
        uint32_t max_buffers;     /* 0: the API's default */
        uint32_t max_file_mb;     /* the file's MaximumFileSize (0: none but the disk's) */
        size_t keep_window_bytes; /* also keep the recent buffers for etw_client_save (0: no) */
        bool is_process_only;     /* s->pid > 0: the session traces that process only (else it
                                     stays system-wide, and s->pid is the caller's business) */
        bool is_detached;         /* the session outlives the caller (--start); else it ends
                                     when the caller does, however it ends */
};

/* What ControlTrace(QUERY) says of the running session. */
struct etw_client_stats {
        uint64_t nr_events_lost;
        uint64_t nr_buffers_written;
        uint64_t nr_rt_buffers_lost;
        uint32_t buffer_size_kb;
        uint32_t max_file_mb; /* MaximumFileSize (0: none) */
};

struct etw_client {
        CONTROLTRACE_ID id;
        bool has_session;
        bool is_attached; /* to another's session (etw_client_attach): left running at the end */
        char logger_name[64];
        /* the settings generation the last etw_client_query read (0: none, or changed by this
           client since), and the consumer's state etw_client_refresh took last */
        uint64_t settings_gen;
        uint64_t state_seq;
};

/* Starts the session with s applied (StartTrace, then TraceSetInformation and
   TraceConfigureLastBranchRecord for what s asks beyond the defaults; with o->is_process_only,
   ETWTOP_TRACE_PROCESS_INFO before StartTrace). Returns 0, or -1 with
   err naming the option refused and the API's reason ("--lastbranch: ... no LBR ... (Win32
   error 50)"); a session that started is stopped again and a file it created removed. */
int etw_client_start(struct etw_client *c, const struct etw_client_options *o,
                     const struct collect_settings *s, char *err, size_t err_size);

/* Attaches c to the running session named name (any process's, through the session host):
   c controls it as its starter does, but etw_client_detach leaves it running. 0, or -1 with
   the API's reason in err. */
int etw_client_attach(struct etw_client *c, const char *name, char *err, size_t err_size);

/* Forgets the session without stopping it (an attached one, or one started detached). */
void etw_client_detach(struct etw_client *c);

/* Makes the running session collect *want: one API call per class that differs from what
   the session reports now (EnableFlags through ControlTrace(UPDATE), whose groups follow; other
   group bits, stack hooks, the interval, the PMC source, LBR through TraceSetInformation and
   TraceConfigureLastBranchRecord). Stops at the first refusal. Returns ERROR_SUCCESS, or the
   API's code with its message in err. */
ULONG etw_client_apply(struct etw_client *c, const struct collect_settings *want, char *err,
                       size_t err_size);

/* What the session collects now, read back (TraceQueryInformation, the interval's global
   value; got->pid only when the session traces one process, else it is left as the caller set
   it), and its counters (ControlTrace(QUERY)); either pointer may be NULL. Returns
   ERROR_SUCCESS or the API's code (the session is gone: ERROR_WMI_INSTANCE_NOT_FOUND). */
ULONG etw_client_query(struct etw_client *c, struct collect_settings *got,
                       struct etw_client_stats *st);

/* A refresh's etw_client_query: where state (a consumer's etw_realtime_get_session_state, NULL
   for none) is new since the last call and says the settings are those the last query read,
   its counters into st, got left as that query set it (no request to the session host);
   else etw_client_query. */
ULONG etw_client_refresh(struct etw_client *c, const struct etw_realtime_session_state *state,
                         struct collect_settings *got, struct etw_client_stats *st);

/* Delivers the session's buffers to its consumers now (ControlTrace(FLUSH)), as its FlushTimer
   would at the next tick; st (may be NULL): its counters once they are delivered. */
ULONG etw_client_flush(struct etw_client *c, struct etw_client_stats *st);

/* The session's kept window saved as a self-contained .etl (etw_save_window). */
ULONG etw_client_save(struct etw_client *c, const char *path, char *err, size_t err_size);

/* Stops the session (its file is finalized); st, when not NULL, gets its last counters. */
ULONG etw_client_stop(struct etw_client *c, struct etw_client_stats *st);

#endif
