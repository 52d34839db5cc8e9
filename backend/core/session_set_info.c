/* SPDX-License-Identifier: MIT */
/* session_set_info.c: owns TraceSetInformation and TraceConfigureLastBranchRecord over the
   table: the handle-0 settings and a running session's settings, checked and applied. */
#include "session_int.h"

/* ---- TraceSetInformation ------------------------------------------------------------------ */

const char *session_class_name(TRACE_INFO_CLASS c)
{
        if (c == ETWTOP_TRACE_PROCESS_INFO)
                return "ETWTOP_TRACE_PROCESS_INFO";
        if (c == ETWTOP_TRACE_CONSUMERS_INFO)
                return "ETWTOP_TRACE_CONSUMERS_INFO";
        if (c == ETWTOP_TRACE_STACKWALK_INFO)
                return "ETWTOP_TRACE_STACKWALK_INFO";
        if (c == ETWTOP_TRACE_SETTINGS_INFO)
                return "ETWTOP_TRACE_SETTINGS_INFO";
        switch (c) {
        case TraceStackTracingInfo: return "TraceStackTracingInfo";
        case TraceSystemTraceEnableFlagsInfo: return "TraceSystemTraceEnableFlagsInfo";
        case TraceSampledProfileIntervalInfo: return "TraceSampledProfileIntervalInfo";
        case TraceProfileSourceConfigInfo: return "TraceProfileSourceConfigInfo";
        case TraceProfileSourceListInfo: return "TraceProfileSourceListInfo";
        case TracePmcEventListInfo: return "TracePmcEventListInfo";
        case TracePmcCounterListInfo: return "TracePmcCounterListInfo";
        case TraceVersionInfo: return "TraceVersionInfo";
        case TraceMaxLoggersQuery: return "TraceMaxLoggersQuery";
        case TraceLbrConfigurationInfo: return "TraceLbrConfigurationInfo";
        case TraceLbrEventListInfo: return "TraceLbrEventListInfo";
        case TraceMaxPmcCounterQuery: return "TraceMaxPmcCounterQuery";
        default: return "this class";
        }
}

/* Checks an array of CLASSIC_EVENT_IDs (seed 003): whole structures, at most max, and an empty
   buffer only with a NULL address. */
static ULONG check_event_list(const char *fn, TRACE_INFO_CLASS c, const void *info, ULONG len,
                              uint32_t max)
{
        if (len % sizeof(CLASSIC_EVENT_ID) || len / sizeof(CLASSIC_EVENT_ID) > max) {
                etw_set_error(ERROR_INCORRECT_SIZE,
                              "%s(%s): %u bytes is not a whole number of CLASSIC_EVENT_IDs (24 "
                              "bytes), at most %u",
                              fn, session_class_name(c), len, max);
                return ERROR_INCORRECT_SIZE;
        }
        if ((len == 0) != (info == NULL)) {
                etw_set_error(ERROR_INVALID_PARAMETER,
                              "%s(%s): an empty list needs a NULL buffer, a list a buffer", fn,
                              session_class_name(c));
                return ERROR_INVALID_PARAMETER;
        }
        return ERROR_SUCCESS;
}

/* Checks an array of KPROFILE_SOURCE values (seed 003): whole ULONGs, 1 to 4 of them. */
static ULONG check_source_list(const char *fn, TRACE_INFO_CLASS c, const void *info, ULONG len)
{
        if (len % sizeof(ULONG) || len / sizeof(ULONG) > LIVE_MAX_SOURCES) {
                etw_set_error(ERROR_INCORRECT_SIZE,
                              "%s(%s): %u bytes is not a whole number of ULONG sources, at most "
                              "%d",
                              fn, session_class_name(c), len, LIVE_MAX_SOURCES);
                return ERROR_INCORRECT_SIZE;
        }
        if (len == 0 || !info) {
                etw_set_error(ERROR_INVALID_PARAMETER, "%s(%s): no sources given", fn,
                              session_class_name(c));
                return ERROR_INVALID_PARAMETER;
        }
        const ULONG *src = info;
        for (ULONG i = 0; i < len / sizeof(ULONG); i++) {
                if (src[i] >= NR_PROFILE_SOURCES) {
                        etw_set_error(ERROR_INVALID_PARAMETER,
                                      "%s(%s): profile source %u is unknown", fn,
                                      session_class_name(c), src[i]);
                        return ERROR_INVALID_PARAMETER;
                }
        }
        return ERROR_SUCCESS;
}

/* The kernel session a session-specific class needs, with a reference; NULL with the error
   set. */
struct session *session_kernel_session(const char *fn, TRACE_INFO_CLASS c, CONTROLTRACE_ID id,
                                       ULONG *code)
{
        if (!id) {
                *code = ERROR_INVALID_PARAMETER;
                etw_set_error(*code, "%s(%s): this class needs a session handle", fn,
                              session_class_name(c));
                return NULL;
        }
        struct session *s = session_find(id, NULL);
        if (!s) {
                char what[96];
                snprintf(what, sizeof(what), "%s(%s)", fn, session_class_name(c));
                *code = session_not_found(what, id);
                return NULL;
        }
        if (!s->is_kernel) {
                session_unref(s);
                *code = ERROR_INVALID_PARAMETER;
                etw_set_error(*code,
                              "%s(%s): the session is not a kernel logger (\"" KERNEL_LOGGER_NAMEA
                              "\" or EVENT_TRACE_SYSTEM_LOGGER_MODE)",
                              fn, session_class_name(c));
                return NULL;
        }
        return s;
}

/* Applies next to s (locked here) and sets the error. */
static ULONG commit_settings(const char *fn, TRACE_INFO_CLASS c, struct session *s,
                             const struct live_settings *next)
{
        struct etl_error err = {0};
        int rc = session_apply_settings(s, next, &err);
        if (rc < 0) {
                DWORD code = session_live_error_code(rc);
                etw_set_error(code, "%s(%s): %s", fn, session_class_name(c), err.msg);
                return code;
        }
        etw_set_error(ERROR_SUCCESS, NULL);
        return ERROR_SUCCESS;
}

/* The hook ids of an event list; entries with unknown GUIDs are ignored (seed 003). */
static uint32_t hooks_of_events(const CLASSIC_EVENT_ID *ev, uint32_t n, uint16_t *hooks)
{
        uint32_t k = 0;
        for (uint32_t i = 0; i < n; i++) {
                int h = session_hook_of_event(&ev[i]);
                if (h >= 0)
                        hooks[k++] = (uint16_t)h;
        }
        return k;
}

/* Pushes the global profile configuration to every running kernel session. */
static ULONG push_profile_config(const char *fn, TRACE_INFO_CLASS c)
{
        struct session *ss[MAX_SESSIONS];
        int n = 0;
        uint32_t intervals[NR_PROFILE_SOURCES];
        pthread_mutex_lock(&session_table_lock);
        for (uint32_t i = 0; i < NR_PROFILE_SOURCES; i++)
                intervals[i] = session_interval_of(i);
        for (int i = 0; i < MAX_SESSIONS; i++) {
                if (session_table[i] && session_table[i]->state == SESSION_RUNNING &&
                    session_table[i]->is_kernel) {
                        session_table[i]->nr_refs++;
                        ss[n++] = session_table[i];
                }
        }
        pthread_mutex_unlock(&session_table_lock);
        ULONG code = ERROR_SUCCESS;
        for (int i = 0; i < n; i++) {
                pthread_mutex_lock(&ss[i]->lock);
                struct live_settings next = ss[i]->cfg;
                next.profile_interval_100ns = intervals[ProfileTime];
                for (uint32_t k = 0; k < next.nr_profile_sources; k++)
                        next.source_intervals[k] = intervals[next.profile_sources[k]];
                if (memcmp(&next, &ss[i]->cfg, sizeof(next)) != 0) {
                        ULONG rc = commit_settings(fn, c, ss[i], &next);
                        if (rc != ERROR_SUCCESS && code == ERROR_SUCCESS)
                                code = rc;
                }
                pthread_mutex_unlock(&ss[i]->lock);
                session_unref(ss[i]);
        }
        if (code == ERROR_SUCCESS)
                etw_set_error(ERROR_SUCCESS, NULL);
        return code;
}

static ULONG set_lbr(const char *fn, TRACE_INFO_CLASS c, CONTROLTRACE_ID id, bool has_flags,
                     uint32_t flags, bool has_events, const uint16_t *hooks, uint32_t nr_hooks)
{
        ULONG code;
        struct session *s = session_kernel_session(fn, c, id, &code);
        if (!s)
                return code;
        session_lock_request(s);
        struct live_settings next = s->cfg;
        if (has_flags)
                next.lbr_flags = flags;
        if (has_events) {
                next.nr_lbr_hooks = nr_hooks;
                memcpy(next.lbr_hooks, hooks, nr_hooks * sizeof(uint16_t));
        }
        code = commit_settings(fn, c, s, &next);
        pthread_mutex_unlock(&s->lock);
        session_unref(s);
        return code;
}

/* ERROR_NOT_SUPPORTED, saying why, when this machine has no LBR. */
static ULONG no_lbr(const char *fn)
{
        const struct live_caps *c = session_machine_caps();
        if (c->has_lbr)
                return ERROR_SUCCESS;
        etw_set_error(ERROR_NOT_SUPPORTED, "%s: %s", fn,
                      c->why_no_lbr[0] ? c->why_no_lbr
                                       : "no Last Branch Record: no "
                                         "/sys/bus/event_source/devices/cpu/caps/branches");
        return ERROR_NOT_SUPPORTED;
}

/* One change of a kernel session's settings from TraceSetInformation: edit writes the class's
   (already validated) information into a copy of the settings, which is then committed to the
   running source. */
typedef void (*settings_edit_fn)(struct live_settings *next, const void *info, ULONG len,
                                 const void *extra);

static void edit_stack_hooks(struct live_settings *next, const void *info, ULONG len,
                             const void *extra)
{
        (void)extra;
        next->nr_stack_hooks =
                hooks_of_events(info, len / sizeof(CLASSIC_EVENT_ID), next->stack_hooks);
}

static void edit_group_masks(struct live_settings *next, const void *info, ULONG len,
                             const void *extra)
{
        (void)extra;
        memset(&next->masks, 0, sizeof(next->masks));
        if (len)
                memcpy(next->masks.Masks, info, len);
}

static void edit_profile_sources(struct live_settings *next, const void *info, ULONG len,
                                 const void *intervals)
{
        next->nr_profile_sources = len / sizeof(ULONG);
        memcpy(next->profile_sources, info, len);
        memcpy(next->source_intervals, intervals, next->nr_profile_sources * sizeof(uint32_t));
}

static void edit_pmc_hooks(struct live_settings *next, const void *info, ULONG len,
                           const void *extra)
{
        (void)extra;
        next->nr_pmc_hooks = hooks_of_events(info, len / sizeof(CLASSIC_EVENT_ID), next->pmc_hooks);
}

static void edit_pmc_counters(struct live_settings *next, const void *info, ULONG len,
                              const void *extra)
{
        (void)extra;
        next->nr_pmc_counters = len / sizeof(ULONG);
        memcpy(next->pmc_counters, info, len);
}

static ULONG edit_settings(const char *fn, TRACE_INFO_CLASS c, CONTROLTRACE_ID handle,
                           settings_edit_fn edit, const void *info, ULONG len, const void *extra)
{
        ULONG code;
        struct session *s = session_kernel_session(fn, c, handle, &code);
        if (!s)
                return code;
        session_lock_request(s);
        struct live_settings next = s->cfg;
        edit(&next, info, len, extra);
        code = commit_settings(fn, c, s, &next);
        pthread_mutex_unlock(&s->lock);
        session_unref(s);
        return code;
}

static void edit_stackwalk(struct live_settings *next, const void *info, ULONG len,
                           const void *extra)
{
        (void)len;
        (void)extra;
        struct etw_stackwalk_info w;
        memcpy(&w, info, sizeof(w));
        next->stack_walk = w.Mode;
        next->user_stack_bytes = w.UserStackBytes;
}

/* ETWTOP_TRACE_STACKWALK_INFO (etw/etwtop_ext.h): a running kernel logger's stack-walk mode. */
static ULONG set_stackwalk(const char *fn, CONTROLTRACE_ID handle, const void *info, ULONG len)
{
        const TRACE_INFO_CLASS c = ETWTOP_TRACE_STACKWALK_INFO;
        struct etw_stackwalk_info w;
        if (len != sizeof(w)) {
                etw_set_error(ERROR_BAD_LENGTH,
                              "%s(%s): %u bytes, a struct etw_stackwalk_info is exactly 8", fn,
                              session_class_name(c), len);
                return ERROR_BAD_LENGTH;
        }
        if (!info || !handle) {
                etw_set_error(ERROR_INVALID_PARAMETER, "%s(%s): %s", fn, session_class_name(c),
                              !info ? "the buffer is NULL" : "a kernel logger's handle is needed");
                return ERROR_INVALID_PARAMETER;
        }
        memcpy(&w, info, sizeof(w));
        if (w.Mode > ETWTOP_STACKWALK_AUTO || w.UserStackBytes % 8 ||
            w.UserStackBytes > LIVE_MAX_USER_STACK) {
                etw_set_error(ERROR_INVALID_PARAMETER,
                              "%s(%s): mode %u, %u bytes: the mode is 0 (frame pointers), 1 "
                              "(DWARF) or 2 (auto), the stack copy a multiple of 8 up to %u",
                              fn, session_class_name(c), w.Mode, w.UserStackBytes,
                              LIVE_MAX_USER_STACK);
                return ERROR_INVALID_PARAMETER;
        }
        return edit_settings(fn, c, handle, edit_stackwalk, &w, len, NULL);
}

/* ETWTOP_TRACE_PROCESS_INFO (etw/etwtop_ext.h): the process of the kernel loggers started next
   (handle 0), or a running kernel logger's, which cannot change. */
static ULONG set_process(const char *fn, CONTROLTRACE_ID handle, const void *info, ULONG len)
{
        const TRACE_INFO_CLASS c = ETWTOP_TRACE_PROCESS_INFO;
        if (len != sizeof(LONG)) {
                etw_set_error(ERROR_BAD_LENGTH, "%s(%s): %u bytes, a process id is a LONG (4)", fn,
                              session_class_name(c), len);
                return ERROR_BAD_LENGTH;
        }
        if (!info) {
                etw_set_error(ERROR_INVALID_PARAMETER, "%s(%s): the buffer is NULL", fn,
                              session_class_name(c));
                return ERROR_INVALID_PARAMETER;
        }
        LONG pid;
        memcpy(&pid, info, sizeof(pid));
        if (pid == 0 || pid < -1) {
                etw_set_error(ERROR_INVALID_PARAMETER,
                              "%s(%s): %d is not a process id (-1: the whole system)", fn,
                              session_class_name(c), (int)pid);
                return ERROR_INVALID_PARAMETER;
        }
        if (!handle) {
                pthread_mutex_lock(&session_table_lock);
                session_pending_pid = pid;
                pthread_mutex_unlock(&session_table_lock);
                etw_set_error(ERROR_SUCCESS, NULL);
                return ERROR_SUCCESS;
        }
        ULONG code;
        struct session *s = session_kernel_session(fn, c, handle, &code);
        if (!s)
                return code;
        session_lock_request(s);
        int32_t now = s->cfg.pid;
        pthread_mutex_unlock(&s->lock);
        session_unref(s);
        if (now != pid) {
                etw_set_error(ERROR_NOT_SUPPORTED,
                              "%s(%s): the session traces %s %d; a running session's process "
                              "cannot change (set it with handle 0 before StartTrace)",
                              fn, session_class_name(c),
                              now > 0 ? "process" : "the whole system, pid", (int)now);
                return ERROR_NOT_SUPPORTED;
        }
        etw_set_error(ERROR_SUCCESS, NULL);
        return ERROR_SUCCESS;
}

ULONG session_local_set_info(CONTROLTRACE_ID SessionHandle, TRACE_INFO_CLASS InformationClass,
                             const void *TraceInformation, ULONG InformationLength)
{
        static const char fn[] = "TraceSetInformation";
        TRACE_INFO_CLASS c = InformationClass;
        const void *info = TraceInformation;
        ULONG len = InformationLength;
        ULONG code;
        if (c == ETWTOP_TRACE_PROCESS_INFO)
                return set_process(fn, SessionHandle, info, len);
        if (c == ETWTOP_TRACE_STACKWALK_INFO)
                return set_stackwalk(fn, SessionHandle, info, len);
        switch (c) {
        case TraceStackTracingInfo: {
                code = check_event_list(fn, c, info, len, LIVE_MAX_STACK_HOOKS);
                if (code != ERROR_SUCCESS)
                        return code;
                return edit_settings(fn, c, SessionHandle, edit_stack_hooks, info, len, NULL);
        }
        case TraceSystemTraceEnableFlagsInfo: {
                if (len % sizeof(ULONG) || len > sizeof(PERFINFO_GROUPMASK) || (len && !info)) {
                        etw_set_error(ERROR_INVALID_PARAMETER,
                                      "%s(%s): %u bytes is not a whole number of group masks, at "
                                      "most 8",
                                      fn, session_class_name(c), len);
                        return ERROR_INVALID_PARAMETER;
                }
                return edit_settings(fn, c, SessionHandle, edit_group_masks, info, len, NULL);
        }
        case TraceSampledProfileIntervalInfo: {
                if (SessionHandle) {
                        etw_set_error(ERROR_INVALID_PARAMETER,
                                      "%s(%s): the profile interval is global: the handle must "
                                      "be 0",
                                      fn, session_class_name(c));
                        return ERROR_INVALID_PARAMETER;
                }
                if (len != sizeof(TRACE_PROFILE_INTERVAL)) {
                        etw_set_error(ERROR_BAD_LENGTH,
                                      "%s(%s): %u bytes, a TRACE_PROFILE_INTERVAL is exactly 8", fn,
                                      session_class_name(c), len);
                        return ERROR_BAD_LENGTH;
                }
                if (!info) {
                        etw_set_error(ERROR_INVALID_PARAMETER, "%s(%s): the buffer is NULL", fn,
                                      session_class_name(c));
                        return ERROR_INVALID_PARAMETER;
                }
                TRACE_PROFILE_INTERVAL tpi;
                memcpy(&tpi, info, sizeof(tpi));
                if (tpi.Source >= NR_PROFILE_SOURCES) {
                        etw_set_error(ERROR_INVALID_PARAMETER,
                                      "%s(%s): profile source %u is unknown", fn,
                                      session_class_name(c), tpi.Source);
                        return ERROR_INVALID_PARAMETER;
                }
                /* clamped to the source's range, as the kernel does */
                uint32_t lo = tpi.Source == ProfileTime ? TIMER_MIN_100NS : PMC_MIN_INTERVAL;
                uint32_t hi = tpi.Source == ProfileTime ? TIMER_MAX_100NS : PMC_MAX_INTERVAL;
                uint32_t v = tpi.Interval < lo ? lo : tpi.Interval > hi ? hi : tpi.Interval;
                pthread_mutex_lock(&session_table_lock);
                session_profile_intervals[tpi.Source] = v;
                pthread_mutex_unlock(&session_table_lock);
                session_settings_changed(); /* ETWTOP_TRACE_SETTINGS_INFO's ProfileInterval */
                return push_profile_config(fn, c);
        }
        case TraceProfileSourceConfigInfo: {
                code = check_source_list(fn, c, info, len);
                if (code != ERROR_SUCCESS)
                        return code;
                uint32_t n = len / sizeof(ULONG);
                if (!SessionHandle) {
                        /* pending for the kernel loggers started next (seed 000) */
                        pthread_mutex_lock(&session_table_lock);
                        session_nr_pending_sources = n;
                        memcpy(session_pending_sources, info, len);
                        pthread_mutex_unlock(&session_table_lock);
                        etw_set_error(ERROR_SUCCESS, NULL);
                        return ERROR_SUCCESS;
                }
                uint32_t intervals[LIVE_MAX_SOURCES];
                pthread_mutex_lock(&session_table_lock);
                for (uint32_t i = 0; i < n; i++)
                        intervals[i] = session_interval_of(((const ULONG *)info)[i]);
                pthread_mutex_unlock(&session_table_lock);
                return edit_settings(fn, c, SessionHandle, edit_profile_sources, info, len,
                                     intervals);
        }
        case TracePmcEventListInfo: {
                code = check_event_list(fn, c, info, len, LIVE_MAX_SOURCES);
                if (code != ERROR_SUCCESS)
                        return code;
                return edit_settings(fn, c, SessionHandle, edit_pmc_hooks, info, len, NULL);
        }
        case TracePmcCounterListInfo: {
                code = check_source_list(fn, c, info, len);
                if (code != ERROR_SUCCESS)
                        return code;
                return edit_settings(fn, c, SessionHandle, edit_pmc_counters, info, len, NULL);
        }
        case TraceLbrConfigurationInfo: {
                if (len != sizeof(ULONG)) {
                        etw_set_error(ERROR_BAD_LENGTH, "%s(%s): %u bytes, the flags are a ULONG",
                                      fn, session_class_name(c), len);
                        return ERROR_BAD_LENGTH;
                }
                if (!info) {
                        etw_set_error(ERROR_INVALID_PARAMETER, "%s(%s): the buffer is NULL", fn,
                                      session_class_name(c));
                        return ERROR_INVALID_PARAMETER;
                }
                ULONG flags;
                memcpy(&flags, info, sizeof(flags));
                if (flags & ~EVNTRACE_LBR_VALID_FLAGS) {
                        etw_set_error(ERROR_INVALID_PARAMETER,
                                      "%s(%s): flags 0x%x outside EVNTRACE_LBR_VALID_FLAGS", fn,
                                      session_class_name(c), flags);
                        return ERROR_INVALID_PARAMETER;
                }
                struct session *s = session_kernel_session(fn, c, SessionHandle, &code);
                if (!s)
                        return code;
                session_unref(s);
                code = no_lbr(fn);
                if (code != ERROR_SUCCESS)
                        return code;
                return set_lbr(fn, c, SessionHandle, true, flags, false, NULL, 0);
        }
        case TraceLbrEventListInfo: {
                code = check_event_list(fn, c, info, len, LIVE_MAX_LBR_HOOKS);
                if (code != ERROR_SUCCESS)
                        return code;
                struct session *s = session_kernel_session(fn, c, SessionHandle, &code);
                if (!s)
                        return code;
                session_unref(s);
                if (len) {
                        code = no_lbr(fn);
                        if (code != ERROR_SUCCESS)
                                return code;
                }
                uint16_t hooks[LIVE_MAX_LBR_HOOKS];
                uint32_t n = hooks_of_events(info, len / sizeof(CLASSIC_EVENT_ID), hooks);
                return set_lbr(fn, c, SessionHandle, false, 0, true, hooks, n);
        }
        default:
                etw_set_error(ERROR_NOT_SUPPORTED, "%s: information class %d is not supported", fn,
                              (int)c);
                return ERROR_NOT_SUPPORTED;
        }
}

ULONG session_check_lbr(ULONG LbrConfiguration, const CLASSIC_EVENT_ID *Events, ULONG EventCount)
{
        static const char fn[] = "TraceConfigureLastBranchRecord";
        if ((uint32_t)LbrConfiguration & ~(uint32_t)EVNTRACE_LBR_VALID_FLAGS) {
                etw_set_error(ERROR_INVALID_PARAMETER,
                              "%s: LbrConfiguration 0x%x has bits outside EVNTRACE_LBR_VALID_FLAGS",
                              fn, (unsigned)LbrConfiguration);
                return ERROR_INVALID_PARAMETER;
        }
        if (EventCount > EVNTRACE_MAX_LBR_EVENTS) {
                etw_set_error(ERROR_INVALID_PARAMETER,
                              "%s: %u triggering events, at most EVNTRACE_MAX_LBR_EVENTS (%d)", fn,
                              EventCount, EVNTRACE_MAX_LBR_EVENTS);
                return ERROR_INVALID_PARAMETER;
        }
        if (EventCount && !Events) {
                etw_set_error(ERROR_INVALID_PARAMETER, "%s: Events is NULL", fn);
                return ERROR_INVALID_PARAMETER;
        }
        return ERROR_SUCCESS;
}

ULONG session_local_lbr(CONTROLTRACE_ID TraceId, ULONG LbrConfiguration,
                        const CLASSIC_EVENT_ID *Events, ULONG EventCount)
{
        static const char fn[] = "TraceConfigureLastBranchRecord";
        const TRACE_INFO_CLASS c = TraceLbrConfigurationInfo;
        ULONG code;
        struct session *s = session_kernel_session(fn, c, TraceId, &code);
        if (!s)
                return code;
        session_unref(s);
        if (EventCount) {
                code = no_lbr(fn);
                if (code != ERROR_SUCCESS)
                        return code;
        }
        uint16_t hooks[LIVE_MAX_LBR_HOOKS];
        uint32_t n = hooks_of_events(Events, EventCount, hooks);
        /* EventCount 0 clears the triggers and disables LBR */
        return set_lbr(fn, c, TraceId, true, EventCount ? (uint32_t)LbrConfiguration : 0, true,
                       hooks, n);
}
