/* SPDX-License-Identifier: MIT */
/* session_defaults.h: the handle-0 settings a kernel logger takes when it starts, as the
   session core keeps them and the session host's protocol carries them (host_proto.h), apart
   from the rest of session.h so that the protocol needs no more of the core. */
#ifndef ETWTOP_SESSION_DEFAULTS_H
#define ETWTOP_SESSION_DEFAULTS_H

#include <stdint.h>

#define SESSION_MAX_SOURCES   4  /* LIVE_MAX_SOURCES */
#define SESSION_MAX_INTERVALS 64 /* the profile sources an interval is kept for */

/* The handle-0 settings a kernel logger takes when it starts: those of the process that starts
   it (its traced process and PMC sampling sources, etw/etwtop_ext.h and seed 000), sent to the
   host with the start; and the profile intervals that process set, which are global (applied to
   the host's sessions as TraceSetInformation(0, TraceSampledProfileIntervalInfo) does). */
struct session_start_defaults {
        int32_t pid; /* -1: the whole system */
        uint32_t nr_sources;
        uint32_t sources[SESSION_MAX_SOURCES];
        uint32_t nr_intervals;
        struct {
                uint32_t source;
                uint32_t interval;
        } intervals[SESSION_MAX_INTERVALS];
};

#endif
