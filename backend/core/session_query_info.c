/* SPDX-License-Identifier: MIT */
/* session_query_info.c: owns TraceQueryInformation over the table. */
#include "session_int.h"

/* ---- TraceQueryInformation ---------------------------------------------------------------- */

/* ERROR_BAD_LENGTH with the size needed in *ret, or ERROR_SUCCESS. */
static ULONG need_length(const char *fn, TRACE_INFO_CLASS c, ULONG len, ULONG needed, PULONG ret)
{
        if (ret)
                *ret = needed;
        if (len < needed) {
                etw_set_error(ERROR_BAD_LENGTH, "%s(%s): %u bytes, %u needed", fn,
                              session_class_name(c), len, needed);
                return ERROR_BAD_LENGTH;
        }
        return ERROR_SUCCESS;
}

/* The profile sources this machine has (TraceProfileSourceListInfo). */
struct source_desc {
        uint32_t source;
        const char *name;
        bool needs_pmu;
};

static const struct source_desc source_descs[] = {
        {ProfileTime, "Timer", false},
        {ProfileTotalIssues, "TotalIssues", true},
        {ProfileBranchInstructions, "BranchInstructions", true},
        {ProfileCacheMisses, "CacheMisses", true},
        {ProfileBranchMispredictions, "BranchMispredictions", true},
        {ProfileTotalCycles, "TotalCycles", true},
        {25, "UnhaltedCoreCycles", true},
        {26, "InstructionRetired", true},
        {27, "UnhaltedReferenceCycles", true},
        {28, "LLCReference", true},
        {29, "LLCMisses", true},
        {30, "BranchInstructionRetired", true},
        {31, "BranchMispredictsRetired", true},
};

/* Writes the PROFILE_SOURCE_INFO chain into out (when not NULL) and returns its size. */
static ULONG source_list(uint8_t *out)
{
        const struct live_caps *c = session_machine_caps();
        ULONG size = 0, last = 0;
        for (size_t i = 0; i < sizeof(source_descs) / sizeof(source_descs[0]); i++) {
                const struct source_desc *d = &source_descs[i];
                if (d->needs_pmu && !c->has_pmu)
                        continue;
                size_t n = strlen(d->name) + 1;
                ULONG entry = (ULONG)((offsetof(PROFILE_SOURCE_INFO, Description) + 2 * n + 7) &
                                      ~(size_t)7);
                if (out) {
                        uint8_t *e = out + size;
                        memset(e, 0, entry);
                        if (size)
                                memcpy(out + last, &(ULONG){size - last}, sizeof(ULONG));
                        ULONG v[3] = {d->source,
                                      d->source == ProfileTime ? TIMER_MIN_100NS : PMC_MIN_INTERVAL,
                                      d->source == ProfileTime ? TIMER_MAX_100NS
                                                               : PMC_MAX_INTERVAL};
                        memcpy(e + offsetof(PROFILE_SOURCE_INFO, Source), v, sizeof(v));
                        for (size_t k = 0; k < n; k++) {
                                WCHAR w = (WCHAR)(unsigned char)d->name[k];
                                memcpy(e + offsetof(PROFILE_SOURCE_INFO, Description) + 2 * k, &w,
                                       2);
                        }
                }
                last = size;
                size += entry;
        }
        return size;
}

ULONG session_check_query_info(TRACE_INFO_CLASS c, const void *info, ULONG len, PULONG ret)
{
        if (ret)
                *ret = 0;
        if (len && !info) {
                etw_set_error(ERROR_INVALID_PARAMETER,
                              "TraceQueryInformation(%s): the buffer is "
                              "NULL",
                              session_class_name(c));
                return ERROR_INVALID_PARAMETER;
        }
        return ERROR_SUCCESS;
}

/* ETWTOP_TRACE_SETTINGS_INFO: a kernel logger's settings and counters in one answer. */
static ULONG query_settings(const char *fn, TRACE_INFO_CLASS c, CONTROLTRACE_ID id, uint8_t *out,
                            ULONG len, PULONG ret)
{
        struct etw_session_settings st;
        ULONG code = need_length(fn, c, len, sizeof(st), ret);
        if (code != ERROR_SUCCESS)
                return code;
        if (!id) {
                etw_set_error(ERROR_INVALID_PARAMETER, "%s(%s): a kernel logger's handle is needed",
                              fn, session_class_name(c));
                return ERROR_INVALID_PARAMETER;
        }
        struct session *s = session_kernel_session(fn, c, id, &code);
        if (!s)
                return code;
        memset(&st, 0, sizeof(st));
        /* the generation before the settings: a change in between shows as a newer one */
        st.SettingsGeneration = session_settings_generation();
        pthread_mutex_lock(&session_table_lock);
        st.ProfileInterval = session_interval_of(ProfileTime);
        pthread_mutex_unlock(&session_table_lock);
        EVENT_TRACE_PROPERTIES p;
        memset(&p, 0, sizeof(p));
        p.Wnode.BufferSize = sizeof(p); /* no names asked */
        session_lock_request(s);
        session_fill_properties(s, &p);
        const struct live_settings *cfg = &s->cfg;
        st.EventsLost = p.EventsLost;
        st.BuffersWritten = p.BuffersWritten;
        st.RealTimeBuffersLost = p.RealTimeBuffersLost;
        st.BufferSize = p.BufferSize;
        st.MaximumFileSize = p.MaximumFileSize;
        st.ProcessId = cfg->pid;
        _Static_assert(sizeof(st.GroupMasks) == sizeof(cfg->masks.Masks), "group masks");
        memcpy(st.GroupMasks, cfg->masks.Masks, sizeof(st.GroupMasks));
        _Static_assert(ETW_SETTINGS_MAX_SOURCES == LIVE_MAX_SOURCES, "sources");
        _Static_assert(ETW_SETTINGS_MAX_STACK_EVENTS == LIVE_MAX_STACK_HOOKS, "stack events");
        _Static_assert(ETW_SETTINGS_MAX_LBR_EVENTS == LIVE_MAX_LBR_HOOKS, "LBR events");
        st.NumberOfProfileSources = cfg->nr_profile_sources;
        memcpy(st.ProfileSources, cfg->profile_sources,
               cfg->nr_profile_sources * sizeof(st.ProfileSources[0]));
        st.NumberOfPmcCounters = cfg->nr_pmc_counters;
        memcpy(st.PmcCounters, cfg->pmc_counters, cfg->nr_pmc_counters * sizeof(st.PmcCounters[0]));
        st.LbrFilters = cfg->lbr_flags;
        st.StackWalk.Mode = cfg->stack_walk;
        st.StackWalk.UserStackBytes =
                cfg->user_stack_bytes ? cfg->user_stack_bytes : LIVE_DEFAULT_USER_STACK;
        st.NumberOfStackEvents = cfg->nr_stack_hooks;
        for (uint32_t i = 0; i < cfg->nr_stack_hooks; i++)
                session_event_of_hook(cfg->stack_hooks[i], &st.StackEvents[i]);
        st.NumberOfPmcEvents = cfg->nr_pmc_hooks;
        for (uint32_t i = 0; i < cfg->nr_pmc_hooks; i++)
                session_event_of_hook(cfg->pmc_hooks[i], &st.PmcEvents[i]);
        st.NumberOfLbrEvents = cfg->nr_lbr_hooks;
        for (uint32_t i = 0; i < cfg->nr_lbr_hooks; i++)
                session_event_of_hook(cfg->lbr_hooks[i], &st.LbrEvents[i]);
        pthread_mutex_unlock(&s->lock);
        session_unref(s);
        memcpy(out, &st, sizeof(st));
        etw_set_error(ERROR_SUCCESS, NULL);
        return ERROR_SUCCESS;
}

ULONG session_local_query_info(CONTROLTRACE_ID SessionHandle, TRACE_INFO_CLASS InformationClass,
                               void *TraceInformation, ULONG InformationLength, PULONG ReturnLength)
{
        static const char fn[] = "TraceQueryInformation";
        TRACE_INFO_CLASS c = InformationClass;
        ULONG len = InformationLength;
        uint8_t *out = TraceInformation;
        ULONG code = session_check_query_info(c, out, len, ReturnLength);
        if (code != ERROR_SUCCESS)
                return code;
        const struct live_caps *caps_now = session_machine_caps();
        if (c == ETWTOP_TRACE_SETTINGS_INFO)
                return query_settings(fn, c, SessionHandle, out, len, ReturnLength);
        if (c == ETWTOP_TRACE_PROCESS_INFO) {
                code = need_length(fn, c, len, sizeof(LONG), ReturnLength);
                if (code != ERROR_SUCCESS)
                        return code;
                LONG pid;
                if (!SessionHandle) {
                        pthread_mutex_lock(&session_table_lock);
                        pid = session_pending_pid;
                        pthread_mutex_unlock(&session_table_lock);
                } else {
                        struct session *s = session_kernel_session(fn, c, SessionHandle, &code);
                        if (!s)
                                return code;
                        session_lock_request(s);
                        pid = s->cfg.pid;
                        pthread_mutex_unlock(&s->lock);
                        session_unref(s);
                }
                memcpy(out, &pid, sizeof(pid));
                etw_set_error(ERROR_SUCCESS, NULL);
                return ERROR_SUCCESS;
        }
        if (c == ETWTOP_TRACE_STACKWALK_INFO) {
                struct etw_stackwalk_info w;
                code = need_length(fn, c, len, sizeof(w), ReturnLength);
                if (code != ERROR_SUCCESS)
                        return code;
                if (!SessionHandle) {
                        etw_set_error(ERROR_INVALID_PARAMETER,
                                      "%s(%s): a kernel logger's handle is needed", fn,
                                      session_class_name(c));
                        return ERROR_INVALID_PARAMETER;
                }
                struct session *s = session_kernel_session(fn, c, SessionHandle, &code);
                if (!s)
                        return code;
                session_lock_request(s);
                w.Mode = s->cfg.stack_walk;
                w.UserStackBytes =
                        s->cfg.user_stack_bytes ? s->cfg.user_stack_bytes : LIVE_DEFAULT_USER_STACK;
                pthread_mutex_unlock(&s->lock);
                session_unref(s);
                memcpy(out, &w, sizeof(w));
                etw_set_error(ERROR_SUCCESS, NULL);
                return ERROR_SUCCESS;
        }
        if (c == ETWTOP_TRACE_CONSUMERS_INFO) {
                code = need_length(fn, c, len, sizeof(ULONG), ReturnLength);
                if (code != ERROR_SUCCESS)
                        return code;
                if (!SessionHandle) {
                        etw_set_error(ERROR_INVALID_PARAMETER,
                                      "%s(%s): a session's handle is needed", fn,
                                      session_class_name(c));
                        return ERROR_INVALID_PARAMETER;
                }
                struct session *s = session_find(SessionHandle, NULL);
                if (!s) {
                        char what[96];
                        snprintf(what, sizeof(what), "%s(%s)", fn, session_class_name(c));
                        return session_not_found(what, SessionHandle);
                }
                ULONG n = 0;
                session_lock_request(s);
                for (const struct session_rt *rt = s->consumers; rt; rt = rt->next)
                        n++;
                pthread_mutex_unlock(&s->lock);
                session_unref(s);
                memcpy(out, &n, sizeof(n));
                etw_set_error(ERROR_SUCCESS, NULL);
                return ERROR_SUCCESS;
        }
        switch (c) {
        case TraceSampledProfileIntervalInfo: {
                if (SessionHandle) {
                        etw_set_error(ERROR_INVALID_PARAMETER,
                                      "%s(%s): the profile interval is global: the handle must "
                                      "be 0",
                                      fn, session_class_name(c));
                        return ERROR_INVALID_PARAMETER;
                }
                if (len != sizeof(TRACE_PROFILE_INTERVAL)) {
                        if (ReturnLength)
                                *ReturnLength = sizeof(TRACE_PROFILE_INTERVAL);
                        etw_set_error(ERROR_BAD_LENGTH,
                                      "%s(%s): %u bytes, a TRACE_PROFILE_INTERVAL is exactly 8", fn,
                                      session_class_name(c), len);
                        return ERROR_BAD_LENGTH;
                }
                TRACE_PROFILE_INTERVAL tpi;
                memcpy(&tpi, out, sizeof(tpi));
                if (tpi.Source >= NR_PROFILE_SOURCES) {
                        etw_set_error(ERROR_INVALID_PARAMETER,
                                      "%s(%s): profile source %u is unknown", fn,
                                      session_class_name(c), tpi.Source);
                        return ERROR_INVALID_PARAMETER;
                }
                pthread_mutex_lock(&session_table_lock);
                tpi.Interval = session_interval_of(tpi.Source);
                pthread_mutex_unlock(&session_table_lock);
                memcpy(out, &tpi, sizeof(tpi));
                if (ReturnLength)
                        *ReturnLength = sizeof(tpi);
                etw_set_error(ERROR_SUCCESS, NULL);
                return ERROR_SUCCESS;
        }
        case TraceProfileSourceListInfo: {
                code = need_length(fn, c, len, source_list(NULL), ReturnLength);
                if (code == ERROR_SUCCESS) {
                        source_list(out);
                        etw_set_error(ERROR_SUCCESS, NULL);
                }
                return code;
        }
        case TraceVersionInfo: {
                code = need_length(fn, c, len, sizeof(TRACE_VERSION_INFO), ReturnLength);
                if (code == ERROR_SUCCESS) {
                        TRACE_VERSION_INFO v = {TRACE_PROCESSING_VER, 0};
                        memcpy(out, &v, sizeof(v));
                        etw_set_error(ERROR_SUCCESS, NULL);
                }
                return code;
        }
        case TraceMaxPmcCounterQuery:
        case TraceMaxLoggersQuery: {
                code = need_length(fn, c, len, sizeof(ULONG), ReturnLength);
                if (code == ERROR_SUCCESS) {
                        ULONG v = c == TraceMaxLoggersQuery ? MAX_SESSIONS
                                  : caps_now->has_pmu       ? LIVE_MAX_SOURCES
                                                            : 0;
                        memcpy(out, &v, sizeof(v));
                        etw_set_error(ERROR_SUCCESS, NULL);
                }
                return code;
        }
        case TraceProfileSourceConfigInfo:
                if (!SessionHandle) {
                        pthread_mutex_lock(&session_table_lock);
                        ULONG needed = session_nr_pending_sources * sizeof(ULONG);
                        code = need_length(fn, c, len, needed, ReturnLength);
                        if (code == ERROR_SUCCESS) {
                                memcpy(out, session_pending_sources, needed);
                                etw_set_error(ERROR_SUCCESS, NULL);
                        }
                        pthread_mutex_unlock(&session_table_lock);
                        return code;
                }
                break;
        case TraceStackTracingInfo:
        case TraceSystemTraceEnableFlagsInfo:
        case TracePmcEventListInfo:
        case TracePmcCounterListInfo:
        case TraceLbrConfigurationInfo:
        case TraceLbrEventListInfo: break;
        default:
                etw_set_error(ERROR_NOT_SUPPORTED, "%s: information class %d is not supported", fn,
                              (int)c);
                return ERROR_NOT_SUPPORTED;
        }

        /* the session's own settings */
        struct session *s = session_kernel_session(fn, c, SessionHandle, &code);
        if (!s)
                return code;
        session_lock_request(s);
        const struct live_settings *cfg = &s->cfg;
        CLASSIC_EVENT_ID ev[LIVE_MAX_STACK_HOOKS];
        const void *src = ev;
        ULONG needed = 0;
        switch (c) {
        case TraceStackTracingInfo:
                for (uint32_t i = 0; i < cfg->nr_stack_hooks; i++)
                        session_event_of_hook(cfg->stack_hooks[i], &ev[i]);
                needed = cfg->nr_stack_hooks * sizeof(CLASSIC_EVENT_ID);
                break;
        case TracePmcEventListInfo:
                for (uint32_t i = 0; i < cfg->nr_pmc_hooks; i++)
                        session_event_of_hook(cfg->pmc_hooks[i], &ev[i]);
                needed = cfg->nr_pmc_hooks * sizeof(CLASSIC_EVENT_ID);
                break;
        case TraceLbrEventListInfo:
                for (uint32_t i = 0; i < cfg->nr_lbr_hooks; i++)
                        session_event_of_hook(cfg->lbr_hooks[i], &ev[i]);
                needed = cfg->nr_lbr_hooks * sizeof(CLASSIC_EVENT_ID);
                break;
        case TraceSystemTraceEnableFlagsInfo:
                src = cfg->masks.Masks;
                needed = sizeof(cfg->masks);
                break;
        case TraceProfileSourceConfigInfo:
                src = cfg->profile_sources;
                needed = cfg->nr_profile_sources * sizeof(ULONG);
                break;
        case TracePmcCounterListInfo:
                src = cfg->pmc_counters;
                needed = cfg->nr_pmc_counters * sizeof(ULONG);
                break;
        case TraceLbrConfigurationInfo:
                src = &cfg->lbr_flags;
                needed = sizeof(ULONG);
                break;
        default: break;
        }
        code = need_length(fn, c, len, needed, ReturnLength);
        if (code == ERROR_SUCCESS) {
                if (needed)
                        memcpy(out, src, needed);
                etw_set_error(ERROR_SUCCESS, NULL);
        }
        pthread_mutex_unlock(&s->lock);
        session_unref(s);
        return code;
}
