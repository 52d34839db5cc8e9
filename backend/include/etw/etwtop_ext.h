/* SPDX-License-Identifier: MIT */
/* etwtop_ext.h: etwtop's additions to the consumer API (not Windows functions): reading statistics.
 */
#ifndef ETW_ETWTOP_EXT_H
#define ETW_ETWTOP_EXT_H

#include "evntrace.h"

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

#endif
