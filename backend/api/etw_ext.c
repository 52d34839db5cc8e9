/* SPDX-License-Identifier: MIT */
/* etw_ext.c: owns etwtop's API additions (etw/etwtop_ext.h) over the session table and the
   capability probe, with the Win32 codes of the API edge. */
#include "etw/etwtop_ext.h"

#include <pthread.h>
#include <string.h>

#include "etw_error.h"
#include "etw_provider.h"
#include "live_source.h"
#include "session_api.h"

ULONG etw_realtime_get_session_state(PROCESSTRACE_HANDLE TraceHandle,
                                     struct etw_realtime_session_state *State)
{
        if (!State)
                return ERROR_INVALID_PARAMETER;
        memset(State, 0, sizeof(*State));
        struct session_rt_state st;
        uint64_t seq = 0;
        ULONG code = consumer_rt_state(TraceHandle, &st, &seq);
        if (code == ERROR_SUCCESS)
                *State = (struct etw_realtime_session_state){seq,
                                                             st.settings_gen,
                                                             st.nr_events_lost,
                                                             st.nr_buffers_written,
                                                             st.nr_rt_buffers_lost,
                                                             st.buffer_size_kb,
                                                             st.max_file_mb};
        return code;
}

static pthread_once_t caps_once = PTHREAD_ONCE_INIT;
static struct live_caps caps_probed;

static void probe_once(void)
{
        live_probe(&caps_probed);
}

ULONG etw_query_machine_caps(struct etw_machine_caps *caps)
{
        if (!caps) {
                etw_set_error(ERROR_INVALID_PARAMETER, "etw_query_machine_caps: caps is NULL");
                return ERROR_INVALID_PARAMETER;
        }
        pthread_once(&caps_once, probe_once);
        const struct live_caps *c = &caps_probed;
        memset(caps, 0, sizeof(*caps));
        caps->has_cpu_wide = c->has_cpu_wide;
        caps->has_pmu = c->has_pmu;
        caps->has_lbr = c->has_lbr;
        caps->has_kallsyms = c->has_kallsyms;
        caps->nr_cpus = c->nr_cpus;
        /* the same sentences, the same sizes */
        _Static_assert(sizeof(caps->why_no_pmu) == sizeof(c->why_no_pmu), "why_no sizes");
        memcpy(caps->why_no_cpu_wide, c->why_no_cpu_wide, sizeof(caps->why_no_cpu_wide));
        memcpy(caps->why_no_pmu, c->why_no_pmu, sizeof(caps->why_no_pmu));
        memcpy(caps->why_no_lbr, c->why_no_lbr, sizeof(caps->why_no_lbr));
        memcpy(caps->why_no_kallsyms, c->why_no_kallsyms, sizeof(caps->why_no_kallsyms));
        etw_set_error(ERROR_SUCCESS, NULL);
        return ERROR_SUCCESS;
}

ULONG etw_event_id_of_hook(USHORT hook_id, CLASSIC_EVENT_ID *out)
{
        const GUID *g = etw_provider_of_hook(hook_id);
        if (!out || !g) {
                etw_set_error(ERROR_INVALID_PARAMETER,
                              "etw_event_id_of_hook: hook 0x%04x has no known provider", hook_id);
                return ERROR_INVALID_PARAMETER;
        }
        memset(out, 0, sizeof(*out));
        out->EventGuid = *g;
        out->Type = (UCHAR)(hook_id & 0xFF);
        etw_set_error(ERROR_SUCCESS, NULL);
        return ERROR_SUCCESS;
}

ULONG etw_hook_of_event_id(const CLASSIC_EVENT_ID *id, USHORT *hook_id)
{
        int hook = id ? etw_hook_of_provider(&id->EventGuid, id->Type) : -1;
        if (!hook_id || hook < 0) {
                etw_set_error(ERROR_INVALID_PARAMETER,
                              "etw_hook_of_event_id: not an event of a kernel group");
                return ERROR_INVALID_PARAMETER;
        }
        *hook_id = (USHORT)hook;
        etw_set_error(ERROR_SUCCESS, NULL);
        return ERROR_SUCCESS;
}

ULONG etw_keep_window(CONTROLTRACE_ID TraceId, ULONG64 max_bytes)
{
        struct etl_error e = {0};
        int rc = etw_session_ops()->keep_window(TraceId, (size_t)max_bytes, &e);
        if (rc < 0) {
                DWORD code = etw_error_from_errno(rc);
                etw_set_error(code, "%s", e.msg[0] ? e.msg : "no such session");
                return code;
        }
        etw_set_error(ERROR_SUCCESS, NULL);
        return ERROR_SUCCESS;
}

ULONG etw_save_window(CONTROLTRACE_ID TraceId, LPCSTR path, BOOL is_force)
{
        if (!path || !*path) {
                etw_set_error(ERROR_INVALID_PARAMETER, "etw_save_window: no file name");
                return ERROR_INVALID_PARAMETER;
        }
        struct etl_error e = {0};
        int rc = etw_session_ops()->save_window(TraceId, path, is_force, &e);
        if (rc < 0) {
                DWORD code = etw_error_from_errno(rc);
                etw_set_error(code, "%s", e.msg[0] ? e.msg : "no such session");
                return code;
        }
        etw_set_error(ERROR_SUCCESS, NULL);
        return ERROR_SUCCESS;
}
