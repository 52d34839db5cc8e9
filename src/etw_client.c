/* SPDX-License-Identifier: MIT */
/* etw_client.c: owns etwtop's calls to the ETW controller API: a kernel session started from
   collection settings, changed class by class, read back and stopped. */
#include "etw_client.h"

#include "etw/etwtop_ext.h"
#include "util/out_file.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The Profile event (PerfInfo, type 46): the LBR trigger the screen and --lastbranch use. */
#define LBR_TRIGGER_TYPE 46

void collect_settings_init(struct collect_settings *s)
{
        memset(s, 0, sizeof(*s));
        s->masks.Masks[0] = EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD |
                            EVENT_TRACE_FLAG_IMAGE_LOAD | EVENT_TRACE_FLAG_PROFILE |
                            EVENT_TRACE_FLAG_CSWITCH | EVENT_TRACE_FLAG_DISPATCHER;
        s->interval_100ns = 10000;
        s->pid = -1;
        /* whole user stacks where code has no frame pointers (Debian's libraries): the
           samples' stacks unwound from DWARF, the others' the kernel's chain */
        s->stack_walk = ETWTOP_STACKWALK_AUTO;
}

/* EVENT_TRACE_PROPERTIES with room for the names, as ControlTrace and StartTrace take them. */
struct props {
        EVENT_TRACE_PROPERTIES p;
        char logger_name[64];
        char log_file_name[1024];
};

static void props_init(struct props *k, const struct etw_client_options *o, ULONG flags)
{
        memset(k, 0, sizeof(*k));
        k->p.Wnode.BufferSize = sizeof(*k);
        k->p.Wnode.Flags = WNODE_FLAG_TRACED_GUID;
        k->p.Wnode.Guid = SystemTraceControlGuid;
        k->p.Wnode.ClientContext = 1;
        k->p.EnableFlags = flags;
        k->p.LoggerNameOffset = offsetof(struct props, logger_name);
        if (!o)
                return;
        k->p.LogFileMode = o->is_real_time ? EVENT_TRACE_REAL_TIME_MODE : 0;
        if (o->logger_name && strcmp(o->logger_name, KERNEL_LOGGER_NAMEA) != 0) {
                /* another name is a kernel logger by its mode (GlobalLogger, etwtop_fr, ...) */
                k->p.LogFileMode |= EVENT_TRACE_SYSTEM_LOGGER_MODE;
                memset(&k->p.Wnode.Guid, 0, sizeof(k->p.Wnode.Guid));
        }
        k->p.FlushTimer = 1;
        k->p.BufferSize = o->buffer_size_kb;
        k->p.MinimumBuffers = o->min_buffers;
        k->p.MaximumBuffers = o->max_buffers;
        if (o->file && *o->file) {
                k->p.LogFileMode |= EVENT_TRACE_FILE_MODE_SEQUENTIAL;
                k->p.MaximumFileSize = o->max_file_mb;
                k->p.LogFileNameOffset = offsetof(struct props, log_file_name);
                snprintf(k->log_file_name, sizeof(k->log_file_name), "%s", o->file);
        }
}

static void say(char *err, size_t err_size, const char *what, ULONG st)
{
        snprintf(err, err_size, "%s: %s (Win32 error %u)", what, etw_last_error_text(),
                 (unsigned)st);
}

static uint32_t event_ids(const uint16_t *hooks, uint32_t n, CLASSIC_EVENT_ID *ids)
{
        uint32_t k = 0;
        for (uint32_t i = 0; i < n; i++)
                if (etw_event_id_of_hook(hooks[i], &ids[k]) == ERROR_SUCCESS)
                        k++;
        return k;
}

static ULONG set_hooks(CONTROLTRACE_ID id, const struct collect_settings *s)
{
        CLASSIC_EVENT_ID ids[COLLECT_MAX_HOOKS];
        uint32_t n = event_ids(s->stack_hooks, s->nr_stack_hooks, ids);
        return TraceSetInformation(id, TraceStackTracingInfo, n ? ids : NULL,
                                   n * (ULONG)sizeof(ids[0]));
}

static ULONG set_stackwalk(CONTROLTRACE_ID id, const struct collect_settings *s)
{
        struct etw_stackwalk_info w = {s->stack_walk, s->user_stack_bytes};
        return TraceSetInformation(id, ETWTOP_TRACE_STACKWALK_INFO, &w, sizeof(w));
}

static ULONG set_interval(const struct collect_settings *s)
{
        TRACE_PROFILE_INTERVAL iv = {0, s->interval_100ns ? s->interval_100ns : 10000};
        return TraceSetInformation(0, TraceSampledProfileIntervalInfo, &iv, sizeof(iv));
}

static ULONG set_pmc_source(CONTROLTRACE_ID id, const struct collect_settings *s)
{
        ULONG src = s->pmc_source;
        return TraceSetInformation(id, TraceProfileSourceConfigInfo, s->pmc_source ? &src : NULL,
                                   s->pmc_source ? (ULONG)sizeof(src) : 0);
}

static ULONG set_counters(CONTROLTRACE_ID id, const struct collect_settings *s, const char **what)
{
        ULONG counters[COLLECT_MAX_COUNTERS];
        CLASSIC_EVENT_ID ids[COLLECT_MAX_COUNTERS];
        uint32_t n = s->nr_pmc_counters < COLLECT_MAX_COUNTERS ? s->nr_pmc_counters
                                                               : COLLECT_MAX_COUNTERS;
        for (uint32_t i = 0; i < n; i++)
                counters[i] = s->pmc_counters[i];
        *what = "TracePmcCounterListInfo";
        ULONG st = TraceSetInformation(id, TracePmcCounterListInfo, n ? counters : NULL,
                                       n * (ULONG)sizeof(ULONG));
        if (st != ERROR_SUCCESS)
                return st;
        uint32_t m = event_ids(s->pmc_hooks, s->nr_pmc_hooks, ids);
        *what = "TracePmcEventListInfo";
        return TraceSetInformation(id, TracePmcEventListInfo, m ? ids : NULL,
                                   m * (ULONG)sizeof(ids[0]));
}

static ULONG set_lbr(CONTROLTRACE_ID id, const struct collect_settings *s)
{
        CLASSIC_EVENT_ID trig = {PerfInfoGuid, LBR_TRIGGER_TYPE, {0}};
        return TraceConfigureLastBranchRecord(id, s->lbr_filters, &trig, s->is_lbr_on ? 1 : 0);
}

int etw_client_start(struct etw_client *c, const struct etw_client_options *o,
                     const struct collect_settings *s, char *err, size_t err_size)
{
        memset(c, 0, sizeof(*c));
        snprintf(c->logger_name, sizeof(c->logger_name), "%s",
                 o->logger_name ? o->logger_name : KERNEL_LOGGER_NAMEA);
        /* only a regular file of ours is replaced (out_file.h): not /dev/null, a FIFO, a link */
        if (o->file &&
            out_file_make_room(o->file, o->is_force ? OUT_FILE_FORCE : 0, err, err_size) < 0)
                return -1;
        /* The session starts with the flags whose rundown it writes; the others, whose events
           carry stacks and a sampling interval, turn on with the group masks below, after
           those are set: no sample of the file goes without the stack asked for. */
        ULONG start_flags =
                s->masks.Masks[0] &
                (EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD | EVENT_TRACE_FLAG_IMAGE_LOAD);
        struct props k;
        props_init(&k, o, start_flags);
        ULONG st;
        if (o->is_process_only && s->pid > 0) {
                /* the process is the next kernel logger's: its events are opened at the start */
                LONG pid = s->pid;
                st = TraceSetInformation(0, ETWTOP_TRACE_PROCESS_INFO, &pid, sizeof(pid));
                if (st != ERROR_SUCCESS) {
                        say(err, err_size, "-p", st);
                        return -1;
                }
        }
        st = StartTraceA(&c->id, c->logger_name, &k.p);
        if (st != ERROR_SUCCESS)
                snprintf(err, err_size, "%s (Win32 error %u)", etw_last_error_text(), (unsigned)st);
        if (o->is_process_only && s->pid > 0) {
                LONG all = -1; /* the loggers started after this one are system-wide again */
                TraceSetInformation(0, ETWTOP_TRACE_PROCESS_INFO, &all, sizeof(all));
        }
        if (st != ERROR_SUCCESS)
                return -1;
        c->has_session = true;
        /* the screen's and --record's session ends with them, however they end (kill -9
           included), as it did when sessions lived in the process; --start leaves its session
           to the system */
        if (!o->is_detached && (st = etw_bind_session(c->id)) != ERROR_SUCCESS) {
                snprintf(err, err_size,
                         "the session host could not bind the session: %s (Win32 "
                         "error %u)",
                         etw_last_error_text(), (unsigned)st);
                etw_client_stop(c, NULL);
                if (o->file)
                        unlink(o->file);
                return -1;
        }
        const char *what = "TraceSetInformation";
        /* the PMC source and LBR first: what this machine cannot do ends the start with the
           API's reason, before any group turns on for it */
        if (s->pmc_source && (st = set_pmc_source(c->id, s)) != ERROR_SUCCESS) {
                what = "--pmc-profile";
                goto refused;
        }
        if (s->nr_pmc_counters) {
                const char *cls;
                if ((st = set_counters(c->id, s, &cls)) != ERROR_SUCCESS) {
                        char buf[64];
                        snprintf(buf, sizeof(buf), "--pmc: TraceSetInformation(%s)", cls);
                        /* the API's message names the class already */
                        snprintf(err, err_size, "--pmc: %s (Win32 error %u)", etw_last_error_text(),
                                 (unsigned)st);
                        (void)buf;
                        goto stop;
                }
        }
        if (s->is_lbr_on && (st = set_lbr(c->id, s)) != ERROR_SUCCESS) {
                what = "--lastbranch";
                goto refused;
        }
        if ((s->stack_walk || s->user_stack_bytes) &&
            (st = set_stackwalk(c->id, s)) != ERROR_SUCCESS) {
                what = "--stackwalk-mode";
                goto refused;
        }
        if ((st = set_hooks(c->id, s)) != ERROR_SUCCESS || (st = set_interval(s)) != ERROR_SUCCESS)
                goto refused;
        /* the PMC_PROFILE group opens the sampling events: where --pmc-profile fails here */
        if (s->pmc_source)
                what = "--pmc-profile";
        if ((st = TraceSetInformation(c->id, TraceSystemTraceEnableFlagsInfo, (PVOID)&s->masks,
                                      sizeof(s->masks))) != ERROR_SUCCESS)
                goto refused;
        if (o->keep_window_bytes && etw_keep_window(c->id, o->keep_window_bytes) != ERROR_SUCCESS) {
                /* the session runs; only the save key will say it cannot */
        }
        return 0;
refused:
        say(err, err_size, what, st);
stop:
        etw_client_stop(c, NULL);
        /* a session that stopped itself while being set up (its disk full with the start's
           rundown) has finalized what it wrote: that file stays; one refused is removed */
        if (o->file && st != ERROR_WMI_INSTANCE_NOT_FOUND)
                unlink(o->file);
        else if (o->file)
                snprintf(err + strlen(err), err_size - strlen(err),
                         "; %s holds what was written before", o->file);
        return -1;
}

/* Hook lists compared as sets. */
static bool same_hooks(const uint16_t *a, uint32_t na, const uint16_t *b, uint32_t nb)
{
        if (na != nb)
                return false;
        for (uint32_t i = 0; i < na; i++) {
                bool found = false;
                for (uint32_t j = 0; j < nb && !found; j++)
                        found = a[i] == b[j];
                if (!found)
                        return false;
        }
        return true;
}

static ULONG apply_settings(struct etw_client *c, const struct collect_settings *want, char *err,
                            size_t err_size)
{
        struct collect_settings now;
        ULONG st = etw_client_query(c, &now, NULL);
        if (st != ERROR_SUCCESS) {
                say(err, err_size, "the session", st);
                return st;
        }
        if (want->pmc_source != now.pmc_source &&
            (st = set_pmc_source(c->id, want)) != ERROR_SUCCESS) {
                say(err, err_size, "TraceSetInformation", st);
                return st;
        }
        if ((want->is_lbr_on != now.is_lbr_on ||
             (want->is_lbr_on && want->lbr_filters != now.lbr_filters)) &&
            (st = set_lbr(c->id, want)) != ERROR_SUCCESS) {
                say(err, err_size, "TraceConfigureLastBranchRecord", st);
                return st;
        }
        /* the stacks and the interval before the groups: the events a change turns on carry
           the stacks asked for from the first one */
        if ((want->stack_walk != now.stack_walk ||
             (want->user_stack_bytes && want->user_stack_bytes != now.user_stack_bytes)) &&
            (st = set_stackwalk(c->id, want)) != ERROR_SUCCESS) {
                say(err, err_size, "TraceSetInformation", st);
                return st;
        }
        if (!same_hooks(want->stack_hooks, want->nr_stack_hooks, now.stack_hooks,
                        now.nr_stack_hooks) &&
            (st = set_hooks(c->id, want)) != ERROR_SUCCESS) {
                say(err, err_size, "TraceSetInformation", st);
                return st;
        }
        if (want->interval_100ns && want->interval_100ns != now.interval_100ns &&
            (st = set_interval(want)) != ERROR_SUCCESS) {
                say(err, err_size, "TraceSetInformation", st);
                return st;
        }
        /* the groups: what the caller changed against what the session reported, applied to
           what it reports after the flags (whose own groups the session derives) */
        PERFINFO_GROUPMASK before = now.masks, target;
        if (want->masks.Masks[0] != now.masks.Masks[0]) {
                /* EnableFlags, as a controller changes them; the groups they imply follow */
                struct props k;
                props_init(&k, NULL, want->masks.Masks[0]);
                k.p.LogFileMode = EVENT_TRACE_REAL_TIME_MODE;
                st = ControlTraceA(c->id, NULL, &k.p, EVENT_TRACE_CONTROL_UPDATE);
                if (st != ERROR_SUCCESS) {
                        say(err, err_size, "ControlTrace(UPDATE)", st);
                        return st;
                }
                etw_client_query(c, &now, NULL);
        }
        target.Masks[0] = want->masks.Masks[0];
        for (int i = 1; i < 8; i++) {
                uint32_t changed = want->masks.Masks[i] ^ before.Masks[i];
                target.Masks[i] =
                        (now.masks.Masks[i] & ~changed) | (want->masks.Masks[i] & changed);
        }
        if (memcmp(&target, &now.masks, sizeof(target)) != 0 &&
            (st = TraceSetInformation(c->id, TraceSystemTraceEnableFlagsInfo, &target,
                                      sizeof(target))) != ERROR_SUCCESS) {
                say(err, err_size, "TraceSetInformation", st);
                return st;
        }
        return ERROR_SUCCESS;
}

ULONG etw_client_apply(struct etw_client *c, const struct collect_settings *want, char *err,
                       size_t err_size)
{
        ULONG st = apply_settings(c, want, err, err_size);
        c->settings_gen = 0; /* changed here: the next refresh asks (etw_client_refresh) */
        return st;
}

/* An event list read back as hook ids. */
static uint32_t hooks_of_events(const CLASSIC_EVENT_ID *ids, ULONG nr_ids, uint16_t *hooks,
                                uint32_t max)
{
        uint32_t n = 0;
        for (ULONG i = 0; i < nr_ids && n < max; i++) {
                USHORT h;
                if (etw_hook_of_event_id(&ids[i], &h) == ERROR_SUCCESS)
                        hooks[n++] = h;
        }
        return n;
}

ULONG etw_client_query(struct etw_client *c, struct collect_settings *got,
                       struct etw_client_stats *st)
{
        if (!c->has_session)
                return ERROR_WMI_INSTANCE_NOT_FOUND;
        if (!got) {
                /* the counters alone: any session */
                struct props k;
                props_init(&k, NULL, 0);
                ULONG code = ControlTraceA(c->id, NULL, &k.p, EVENT_TRACE_CONTROL_QUERY);
                if (code != ERROR_SUCCESS)
                        return code;
                if (st) {
                        st->nr_events_lost = k.p.EventsLost;
                        st->nr_buffers_written = k.p.BuffersWritten;
                        st->nr_rt_buffers_lost = k.p.RealTimeBuffersLost;
                        st->buffer_size_kb = k.p.BufferSize;
                        st->max_file_mb = k.p.MaximumFileSize;
                }
                return ERROR_SUCCESS;
        }
        /* one request for the settings and the counters (a refresh asks every time) */
        struct etw_session_settings ss;
        ULONG len = 0;
        ULONG code =
                TraceQueryInformation(c->id, ETWTOP_TRACE_SETTINGS_INFO, &ss, sizeof(ss), &len);
        if (code != ERROR_SUCCESS)
                return code;
        c->settings_gen = ss.SettingsGeneration;
        if (st) {
                st->nr_events_lost = ss.EventsLost;
                st->nr_buffers_written = ss.BuffersWritten;
                st->nr_rt_buffers_lost = ss.RealTimeBuffersLost;
                st->buffer_size_kb = ss.BufferSize;
                st->max_file_mb = ss.MaximumFileSize;
        }
        LONG pid = got->pid;
        memset(got, 0, sizeof(*got));
        got->pid = ss.ProcessId > 0 ? ss.ProcessId : pid;
        _Static_assert(sizeof(got->masks.Masks) == sizeof(ss.GroupMasks), "group masks");
        memcpy(got->masks.Masks, ss.GroupMasks, sizeof(got->masks.Masks));
        got->nr_stack_hooks = hooks_of_events(ss.StackEvents, ss.NumberOfStackEvents,
                                              got->stack_hooks, COLLECT_MAX_HOOKS);
        got->nr_pmc_hooks = hooks_of_events(ss.PmcEvents, ss.NumberOfPmcEvents, got->pmc_hooks,
                                            COLLECT_MAX_COUNTERS);
        got->interval_100ns = ss.ProfileInterval;
        if (ss.NumberOfProfileSources >= 1)
                got->pmc_source = ss.ProfileSources[0];
        got->nr_pmc_counters = ss.NumberOfPmcCounters < COLLECT_MAX_COUNTERS
                                       ? ss.NumberOfPmcCounters
                                       : COLLECT_MAX_COUNTERS;
        memcpy(got->pmc_counters, ss.PmcCounters, got->nr_pmc_counters * sizeof(ULONG));
        got->lbr_filters = ss.LbrFilters;
        got->stack_walk = ss.StackWalk.Mode;
        got->user_stack_bytes = ss.StackWalk.UserStackBytes;
        uint16_t lbr_hooks[COLLECT_MAX_COUNTERS];
        got->is_lbr_on = hooks_of_events(ss.LbrEvents, ss.NumberOfLbrEvents, lbr_hooks,
                                         COLLECT_MAX_COUNTERS) > 0;
        return ERROR_SUCCESS;
}

ULONG etw_client_refresh(struct etw_client *c, const struct etw_realtime_session_state *state,
                         struct collect_settings *got, struct etw_client_stats *st)
{
        if (state && state->Sequence != c->state_seq && c->settings_gen &&
            state->SettingsGeneration == c->settings_gen) {
                c->state_seq = state->Sequence;
                if (st)
                        *st = (struct etw_client_stats){state->EventsLost, state->BuffersWritten,
                                                        state->RealTimeBuffersLost,
                                                        state->BufferSize, state->MaximumFileSize};
                return ERROR_SUCCESS;
        }
        if (state)
                c->state_seq = state->Sequence;
        return etw_client_query(c, got, st);
}

ULONG etw_client_save(struct etw_client *c, const char *path, char *err, size_t err_size)
{
        ULONG st = etw_save_window(c->id, path, FALSE);
        if (st != ERROR_SUCCESS)
                snprintf(err, err_size, "%s", etw_last_error_text());
        return st;
}

int etw_client_attach(struct etw_client *c, const char *name, char *err, size_t err_size)
{
        memset(c, 0, sizeof(*c));
        snprintf(c->logger_name, sizeof(c->logger_name), "%s", name ? name : KERNEL_LOGGER_NAMEA);
        struct props k;
        props_init(&k, NULL, 0);
        ULONG st = ControlTraceA(0, c->logger_name, &k.p, EVENT_TRACE_CONTROL_QUERY);
        if (st != ERROR_SUCCESS) {
                say(err, err_size, "--attach", st);
                return -1;
        }
        if (!(k.p.LogFileMode & EVENT_TRACE_REAL_TIME_MODE)) {
                snprintf(err, err_size,
                         "--attach: \"%s\" delivers no events in real time (it was started "
                         "%s): --flush -o SNAP.etl and --replay it",
                         c->logger_name,
                         (k.p.LogFileMode & EVENT_TRACE_BUFFERING_MODE)
                                 ? "as a flight recorder"
                                 : "without EVENT_TRACE_REAL_TIME_MODE");
                return -1;
        }
        c->id = k.p.Wnode.HistoricalContext;
        c->has_session = true;
        c->is_attached = true;
        return 0;
}

void etw_client_detach(struct etw_client *c)
{
        c->has_session = false;
}

/* What a FLUSH or STOP answered, into st. */
static void stats_of(const EVENT_TRACE_PROPERTIES *p, struct etw_client_stats *st)
{
        st->nr_events_lost = p->EventsLost;
        st->nr_buffers_written = p->BuffersWritten;
        st->nr_rt_buffers_lost = p->RealTimeBuffersLost;
        st->buffer_size_kb = p->BufferSize;
        st->max_file_mb = p->MaximumFileSize;
}

ULONG etw_client_flush(struct etw_client *c, struct etw_client_stats *st)
{
        if (!c->has_session)
                return ERROR_WMI_INSTANCE_NOT_FOUND;
        struct props k;
        props_init(&k, NULL, 0);
        ULONG code = ControlTraceA(c->id, NULL, &k.p, EVENT_TRACE_CONTROL_FLUSH);
        if (st && code == ERROR_SUCCESS)
                stats_of(&k.p, st);
        return code;
}

ULONG etw_client_stop(struct etw_client *c, struct etw_client_stats *st)
{
        if (!c->has_session)
                return ERROR_WMI_INSTANCE_NOT_FOUND;
        struct props k;
        props_init(&k, NULL, 0);
        ULONG code = ControlTraceA(c->id, NULL, &k.p, EVENT_TRACE_CONTROL_STOP);
        c->has_session = false;
        if (st && code == ERROR_SUCCESS)
                stats_of(&k.p, st);
        return code;
}
