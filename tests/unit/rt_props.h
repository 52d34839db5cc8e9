/* SPDX-License-Identifier: MIT */
/* rt_props.h: EVENT_TRACE_PROPERTIES followed by its two names, as StartTrace and ControlTrace
   take them, for the tests that start sessions of their own (test_consumer, test_feed, test_host).
 */
#ifndef ETWTOP_TESTS_RT_PROPS_H
#define ETWTOP_TESTS_RT_PROPS_H

#include <stddef.h>
#include <string.h>

#include "etw/evntrace.h"

struct rt_props {
        EVENT_TRACE_PROPERTIES p;
        char logger_name[1024];
        char log_file_name[1024];
};

/* Zeroed, sized, the names' offsets set and LogFileMode mode. */
static inline void rt_props_init(struct rt_props *pr, ULONG mode)
{
        memset(pr, 0, sizeof(*pr));
        pr->p.Wnode.BufferSize = sizeof(*pr);
        pr->p.Wnode.Flags = WNODE_FLAG_TRACED_GUID;
        pr->p.LogFileMode = mode;
        pr->p.LoggerNameOffset = offsetof(struct rt_props, logger_name);
        pr->p.LogFileNameOffset = offsetof(struct rt_props, log_file_name);
}

#endif
