/* SPDX-License-Identifier: MIT */
/* controller.c: owns the controller API's entry points (StartTraceA, StartKernelTrace,
   ControlTraceA and its short forms, QueryAllTracesA, TraceSetInformation,
   TraceQueryInformation, TraceConfigureLastBranchRecord): each checks its arguments, then calls
   the session operations chosen once for the process (the session host's client, or the session
   table here). The checks the host repeats on its clients' requests are the session core's
   (session.h); the Windows deviations are documented in core/session_int.h. */
#include <stdatomic.h>
#include <string.h>

#include "etw/KernelTraceControl.h"
#include "etw/evntrace.h"
#include "etw_error.h"
#include "host.h"
#include "session_api.h"

static _Atomic(const struct session_ops *) chosen;

const struct session_ops *etw_session_ops(void)
{
        const struct session_ops *ops = atomic_load(&chosen);
        if (ops)
                return ops;
        const struct session_ops *want = host_is_client() ? &host_client_ops : &session_local_ops;
        const struct session_ops *none = NULL;
        return atomic_compare_exchange_strong(&chosen, &none, want) ? want : none;
}

void etw_session_ops_become_host(void)
{
        atomic_store(&chosen, &session_local_ops);
}

ULONG WMIAPI StartTraceA(CONTROLTRACE_ID *TraceId, LPCSTR InstanceName,
                         PEVENT_TRACE_PROPERTIES Properties)
{
        struct session_start_request req;
        if (TraceId)
                *TraceId = 0;
        ULONG code = session_check_start_trace(TraceId, InstanceName, Properties, &req);
        if (code != ERROR_SUCCESS)
                return code;
        return etw_session_ops()->start(TraceId, Properties, &req, NULL);
}

ULONG WINAPI StartKernelTrace(PTRACEHANDLE TraceHandle, PEVENT_TRACE_PROPERTIES Properties,
                              PSTACK_TRACING_EVENT_ID StackTracingEventIds,
                              ULONG cStackTracingEventIds)
{
        struct session_start_request req;
        char name[SESSION_MAX_NAME_CHARS + 1];
        if (TraceHandle)
                *TraceHandle = 0;
        ULONG code = session_check_kernel_trace(TraceHandle, Properties,
                                                (const CLASSIC_EVENT_ID *)StackTracingEventIds,
                                                cStackTracingEventIds, name, &req);
        if (code != ERROR_SUCCESS)
                return code;
        return etw_session_ops()->start(TraceHandle, Properties, &req, NULL);
}

ULONG WMIAPI ControlTraceA(CONTROLTRACE_ID TraceId, LPCSTR InstanceName,
                           PEVENT_TRACE_PROPERTIES Properties, ULONG ControlCode)
{
        char new_file[SESSION_MAX_NAME_CHARS + 1];
        ULONG code =
                session_check_control(TraceId, InstanceName, Properties, ControlCode, new_file);
        if (code != ERROR_SUCCESS)
                return code;
        return etw_session_ops()->control(TraceId, TraceId ? NULL : InstanceName, Properties,
                                          ControlCode, new_file[0] ? new_file : NULL);
}

ULONG WMIAPI StopTraceA(CONTROLTRACE_ID TraceId, LPCSTR InstanceName,
                        PEVENT_TRACE_PROPERTIES Properties)
{
        return ControlTraceA(TraceId, InstanceName, Properties, EVENT_TRACE_CONTROL_STOP);
}

ULONG WMIAPI QueryTraceA(CONTROLTRACE_ID TraceId, LPCSTR InstanceName,
                         PEVENT_TRACE_PROPERTIES Properties)
{
        return ControlTraceA(TraceId, InstanceName, Properties, EVENT_TRACE_CONTROL_QUERY);
}

ULONG WMIAPI UpdateTraceA(CONTROLTRACE_ID TraceId, LPCSTR InstanceName,
                          PEVENT_TRACE_PROPERTIES Properties)
{
        return ControlTraceA(TraceId, InstanceName, Properties, EVENT_TRACE_CONTROL_UPDATE);
}

ULONG WMIAPI FlushTraceA(CONTROLTRACE_ID TraceId, LPCSTR InstanceName,
                         PEVENT_TRACE_PROPERTIES Properties)
{
        return ControlTraceA(TraceId, InstanceName, Properties, EVENT_TRACE_CONTROL_FLUSH);
}

ULONG WMIAPI QueryAllTracesA(PEVENT_TRACE_PROPERTIES *PropertyArray, ULONG PropertyArrayCount,
                             PULONG LoggerCount)
{
        static const char fn[] = "QueryAllTraces";
        if (!PropertyArray || !LoggerCount) {
                etw_set_error(ERROR_INVALID_PARAMETER, "%s: %s is NULL", fn,
                              !PropertyArray ? "PropertyArray" : "LoggerCount");
                return ERROR_INVALID_PARAMETER;
        }
        if (PropertyArrayCount == 0 || PropertyArrayCount > SESSION_MAX_SESSIONS) {
                etw_set_error(ERROR_INVALID_PARAMETER, "%s: PropertyArrayCount %u is not 1..%d", fn,
                              PropertyArrayCount, SESSION_MAX_SESSIONS);
                return ERROR_INVALID_PARAMETER;
        }
        for (ULONG i = 0; i < PropertyArrayCount; i++) {
                const EVENT_TRACE_PROPERTIES *p = PropertyArray[i];
                if (!p || p->Wnode.BufferSize < sizeof(*p)) {
                        etw_set_error(ERROR_INVALID_PARAMETER, "%s: PropertyArray[%u] is %s", fn, i,
                                      !p ? "NULL"
                                         : "smaller than EVENT_TRACE_PROPERTIES "
                                           "(Wnode.BufferSize)");
                        return ERROR_INVALID_PARAMETER;
                }
                ULONG offsets[2] = {p->LoggerNameOffset, p->LogFileNameOffset};
                for (int k = 0; k < 2; k++) {
                        if (offsets[k] &&
                            (offsets[k] < sizeof(*p) || offsets[k] >= p->Wnode.BufferSize)) {
                                etw_set_error(ERROR_INVALID_PARAMETER,
                                              "%s: PropertyArray[%u]'s %s %u is not inside its "
                                              "buffer after the structure",
                                              fn, i, k ? "LogFileNameOffset" : "LoggerNameOffset",
                                              offsets[k]);
                                return ERROR_INVALID_PARAMETER;
                        }
                }
        }
        return etw_session_ops()->query_all(PropertyArray, PropertyArrayCount, LoggerCount);
}

ULONG WMIAPI TraceSetInformation(CONTROLTRACE_ID SessionHandle, TRACE_INFO_CLASS InformationClass,
                                 PVOID TraceInformation, ULONG InformationLength)
{
        return etw_session_ops()->set_info(SessionHandle, InformationClass, TraceInformation,
                                           InformationLength);
}

ULONG WMIAPI TraceQueryInformation(CONTROLTRACE_ID SessionHandle, TRACE_INFO_CLASS InformationClass,
                                   PVOID TraceInformation, ULONG InformationLength,
                                   PULONG ReturnLength)
{
        ULONG code = session_check_query_info(InformationClass, TraceInformation, InformationLength,
                                              ReturnLength);
        if (code != ERROR_SUCCESS)
                return code;
        return etw_session_ops()->query_info(SessionHandle, InformationClass, TraceInformation,
                                             InformationLength, ReturnLength);
}

ULONG WMIAPI TraceConfigureLastBranchRecord(CONTROLTRACE_ID TraceId,
                                            TRACE_LBR_CONFIGURATION LbrConfiguration,
                                            CLASSIC_EVENT_ID const *Events, ULONG EventCount)
{
        ULONG code = session_check_lbr((ULONG)LbrConfiguration, Events, EventCount);
        if (code != ERROR_SUCCESS)
                return code;
        return etw_session_ops()->lbr(TraceId, (ULONG)LbrConfiguration, Events, EventCount);
}
