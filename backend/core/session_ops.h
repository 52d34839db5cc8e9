/* SPDX-License-Identifier: MIT */
/* session_ops.h: the session operations behind the controller and consumer API, one table with
   two implementations: the session table of this process (session_local_ops, session core) and
   the session host's client (host_client_ops). The API edge checks a call's arguments, then
   calls through the table chosen once for the process (etw_session_ops). */
#ifndef ETWTOP_SESSION_OPS_H
#define ETWTOP_SESSION_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "etl_reader.h"
#include "etw/evntrace.h"
#include "session.h"

/* Every hook is filled. The Win32 ones return the API's code with the thread's last error set
   (etw_error.h); the others return 0 or -errno as session.h says for the table's functions. */
struct session_ops {
        /* StartTraceA or StartKernelTrace (req->is_kernel_trace) of a request that
           session_check_start_trace or session_check_kernel_trace passed. d: the starter's
           handle-0 settings (the host starting a session for a client), NULL: this process's.
           *id 0 unless it succeeds; Properties filled back as the call documents. */
        ULONG(*start)
        (CONTROLTRACE_ID *id, PEVENT_TRACE_PROPERTIES p, const struct session_start_request *req,
         const struct session_start_defaults *d);
        /* ControlTraceA after session_check_control: new_file is UPDATE's new log file name
           (NULL: none). */
        ULONG(*control)
        (CONTROLTRACE_ID id, const char *name, PEVENT_TRACE_PROPERTIES p, ULONG code,
         const char *new_file);
        /* TraceSetInformation and TraceQueryInformation as the API takes them. */
        ULONG (*set_info)(CONTROLTRACE_ID id, TRACE_INFO_CLASS c, const void *info, ULONG len);
        ULONG(*query_info)
        (CONTROLTRACE_ID id, TRACE_INFO_CLASS c, void *info, ULONG len, PULONG ret);
        /* TraceConfigureLastBranchRecord after session_check_lbr. */
        ULONG (*lbr)(CONTROLTRACE_ID id, ULONG config, const CLASSIC_EVENT_ID *events, ULONG count);
        /* QueryAllTracesA of a checked array. */
        ULONG (*query_all)(PEVENT_TRACE_PROPERTIES *array, ULONG count, PULONG logger_count);
        /* etw_bind_session of a nonzero handle. */
        ULONG (*bind)(CONTROLTRACE_ID id);
        /* session_keep_window and session_save_ring. */
        int (*keep_window)(CONTROLTRACE_ID id, size_t max_bytes, struct etl_error *err);
        int (*save_window)(CONTROLTRACE_ID id, const char *path, bool is_force,
                           struct etl_error *err);
        /* A real-time consumer: session_rt_header ... session_rt_detach. The consumer is the
           implementation's own (the table's struct session_rt, or the host client's stream). */
        int (*rt_header)(const char *logger_name, uint8_t **buf, uint32_t *size,
                         struct session_rt_info *info);
        int (*rt_attach)(const char *logger_name, struct session_rt **out,
                         struct session_rt_info *info);
        int (*rt_next)(struct session_rt *rt, uint32_t timeout_ms, const uint8_t **buf,
                       uint32_t *size);
        /* Makes an rt_next waiting now, or the next one to wait, return -EAGAIN at once (from
           any thread, while the consumer is attached): a CloseTrace. */
        void (*rt_wake)(struct session_rt *rt);
        /* Held buffers, where the consumer can keep them (NULL where none can): rt_hold
           asks that each buffer rt_next hands out stay where it is until rt_release gives it
           back (false: they cannot, each is valid until the next rt_next only); rt_held_id is
           the one handed out last; rt_wait_released waits for every one handed out. */
        bool (*rt_hold)(struct session_rt *rt);
        uint64_t (*rt_held_id)(const struct session_rt *rt);
        void (*rt_release)(struct session_rt *rt, uint64_t id);
        bool (*rt_wait_released)(struct session_rt *rt, uint32_t timeout_ms);
        uint64_t (*rt_nr_lost)(const struct session_rt *rt);
        /* The session's counters and settings generation (session.h), and a number that grows
           with each new state: as of the buffers handed out last (a host's stream), or now
           (this process's). 0, or -ENODATA where none is known (NULL: never). */
        int (*rt_state)(struct session_rt *rt, struct session_rt_state *out, uint64_t *seq);
        const char *(*rt_error)(const struct session_rt *rt);
        void (*rt_detach)(struct session_rt *rt);
};

/* The session table of this process (the session core). */
extern const struct session_ops session_local_ops;

#endif
