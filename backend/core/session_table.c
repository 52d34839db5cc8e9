/* SPDX-License-Identifier: MIT */
/* session_table.c: owns the session table: its slots and references, the handle-0 settings, the
   capability probe, hook ids and group masks, statistics and the properties written back,
   QueryAllTraces over the table, and the table's session operations (session_local_ops). */
#include "session_int.h"
#include "util/clock.h"

pthread_mutex_t session_table_lock = PTHREAD_MUTEX_INITIALIZER;
struct session *session_table[MAX_SESSIONS];
uint32_t session_generations[MAX_SESSIONS];
uint32_t session_profile_intervals[NR_PROFILE_SOURCES];
uint32_t session_nr_pending_sources;
uint32_t session_pending_sources[LIVE_MAX_SOURCES];
int32_t session_pending_pid = -1;
_Static_assert(SESSION_MAX_SOURCES == LIVE_MAX_SOURCES, "sources a start carries");
_Static_assert(SESSION_MAX_INTERVALS == NR_PROFILE_SOURCES, "intervals a start carries");
struct session_ended session_ended[MAX_SESSIONS];
pthread_cond_t session_ended_cond = PTHREAD_COND_INITIALIZER;
pthread_cond_t session_left_cond = PTHREAD_COND_INITIALIZER;

static pthread_once_t caps_once = PTHREAD_ONCE_INIT;
static struct live_caps caps;
uint32_t session_cpu_speed_mhz;

/* The CPU's speed: /proc/cpuinfo's "cpu MHz" (x86), else cpufreq's cpuinfo_max_freq (kHz);
   0 when neither says. */
static uint32_t cpu_mhz_probe(void)
{
        FILE *f = fopen("/proc/cpuinfo", "r");
        char line[256];
        double mhz = 0;
        while (f && fgets(line, sizeof(line), f))
                if (sscanf(line, "cpu MHz : %lf", &mhz) == 1)
                        break;
        if (f)
                fclose(f);
        if (mhz >= 1)
                return (uint32_t)mhz;
        unsigned long khz = 0;
        f = fopen("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "r");
        if (f) {
                if (fscanf(f, "%lu", &khz) != 1)
                        khz = 0;
                fclose(f);
        }
        return (uint32_t)(khz / 1000);
}

static void caps_probe(void)
{
        live_probe(&caps);
        if (caps.nr_cpus == 0) {
                long n = sysconf(_SC_NPROCESSORS_CONF);
                caps.nr_cpus = n > 0 ? (uint32_t)n : 1;
        }
        session_cpu_speed_mhz = cpu_mhz_probe();
}

const struct live_caps *session_machine_caps(void)
{
        pthread_once(&caps_once, caps_probe);
        return &caps;
}

/* ---- small helpers ------------------------------------------------------------------------ */

int64_t session_clock_ns(clockid_t id)
{
        return (int64_t)clock_ns(id);
}

int64_t session_filetime_now(void)
{
        return FILETIME_UNIX_EPOCH + session_clock_ns(CLOCK_REALTIME) / 100;
}

bool session_name_equal(const char *a, const char *b)
{
        return strcasecmp(a, b) == 0;
}

bool session_guid_is_zero(const GUID *g)
{
        static const GUID zero;
        return IsEqualGUID(g, &zero);
}

/* session_settings_generation's: from 1, so that 0 is never one (a consumer's "none yet") */
static _Atomic uint64_t settings_generation = 1;

uint64_t session_settings_generation(void)
{
        return atomic_load_explicit(&settings_generation, memory_order_acquire);
}

void session_settings_changed(void)
{
        atomic_fetch_add_explicit(&settings_generation, 1, memory_order_acq_rel);
}

uint32_t session_interval_of(uint32_t source)
{
        if (source < NR_PROFILE_SOURCES && session_profile_intervals[source])
                return session_profile_intervals[source];
        return source == ProfileTime ? TIMER_DEFAULT_100NS : PMC_DEFAULT_INTERVAL;
}

/* Sources counted by the CPU's PMU, as opposed to the timer and software counters. */
static bool source_needs_pmu(uint32_t source)
{
        return source != ProfileTime && source != ProfileAlignmentFixup && source != 36;
}

/* The Win32 code for an error of the live source (privileges, missing hardware). */
DWORD session_live_error_code(int rc)
{
        switch (-rc) {
        case EACCES:
        case EPERM: return ERROR_ACCESS_DENIED;
        case EOPNOTSUPP:
        case ENOENT:
        case ENODEV: return ERROR_NOT_SUPPORTED;
        case EMFILE:
        case ENFILE: return ERROR_NO_SYSTEM_RESOURCES;
        default: return etw_error_from_errno(rc);
        }
}

/* The Win32 code for an error creating the log file. */
DWORD session_file_error_code(int rc)
{
        switch (-rc) {
        case EEXIST: return ERROR_FILE_EXISTS;
        case ENOENT:
        case ENOTDIR: return ERROR_PATH_NOT_FOUND;
        case ELOOP:
        case EACCES:
        case EPERM:
        case EROFS:
        case EISDIR: return ERROR_ACCESS_DENIED;
        case ENAMETOOLONG: return ERROR_BAD_PATHNAME;
        default: return etw_error_from_errno(rc);
        }
}

/* ---- hook ids and group masks ------------------------------------------------------------- */

/* The hook id of a CLASSIC_EVENT_ID, or -1 when its GUID names no kernel group (seed 003: such
   entries are ignored). */
int session_hook_of_event(const CLASSIC_EVENT_ID *e)
{
        return etw_hook_of_provider(&e->EventGuid, e->Type);
}

void session_event_of_hook(uint16_t hook, CLASSIC_EVENT_ID *e)
{
        memset(e, 0, sizeof(*e));
        const GUID *g = etw_provider_of_hook(hook);
        if (g)
                e->EventGuid = *g;
        e->Type = (UCHAR)(hook & 0xFF);
}

/* The group-mask bits an EnableFlags value implies beyond Masks[0] (ETL-FORMAT.md 3.1). */
static void derived_masks(uint32_t flags, uint32_t masks[PERF_NUM_MASKS])
{
        memset(masks, 0, PERF_NUM_MASKS * sizeof(uint32_t));
        masks[0] = flags;
        if (flags & EVENT_TRACE_FLAG_PROFILE)
                masks[1] |= PERF_PROFILE & PERF_MASK_GROUP;
        if (flags & EVENT_TRACE_FLAG_CSWITCH)
                masks[1] |= PERF_CONTEXT_SWITCH & PERF_MASK_GROUP;
        if (flags & EVENT_TRACE_FLAG_DISPATCHER)
                masks[1] |= PERF_DISPATCHER & PERF_MASK_GROUP;
        if (flags & EVENT_TRACE_FLAG_DPC)
                masks[1] |= PERF_DPC & PERF_MASK_GROUP;
        if (flags & EVENT_TRACE_FLAG_INTERRUPT)
                masks[1] |= PERF_INTERRUPT & PERF_MASK_GROUP;
        if (flags & EVENT_TRACE_FLAG_SYSTEMCALL)
                masks[2] |= PERF_SYSCALL & PERF_MASK_GROUP;
}

/* Replaces the EnableFlags part of the group masks, keeping bits set by
   TraceSystemTraceEnableFlagsInfo. */
void session_set_enable_flags(PERFINFO_GROUPMASK *gm, uint32_t flags)
{
        uint32_t old_d[PERF_NUM_MASKS], new_d[PERF_NUM_MASKS];
        derived_masks(gm->Masks[0], old_d);
        derived_masks(flags, new_d);
        for (int i = 1; i < PERF_NUM_MASKS; i++)
                gm->Masks[i] = (gm->Masks[i] & ~old_d[i]) | new_d[i];
        gm->Masks[0] = flags;
}

/* Whether the events of hook are collected under these masks (StartKernelTrace ignores stack
   ids of events that are not). Groups we cannot tell count as not enabled. */
bool session_hook_is_enabled(uint16_t hook, const PERFINFO_GROUPMASK *gm)
{
        uint32_t f = gm->Masks[0], m1 = gm->Masks[1];
        uint8_t type = hook & 0xFF;
        switch (hook >> 8) {
        case 0x00: return true;
        case 0x01: return f & (EVENT_TRACE_FLAG_DISK_IO | EVENT_TRACE_FLAG_DISK_IO_INIT);
        case 0x02:
                return f &
                       (EVENT_TRACE_FLAG_MEMORY_PAGE_FAULTS | EVENT_TRACE_FLAG_MEMORY_HARD_FAULTS |
                        EVENT_TRACE_FLAG_VIRTUAL_ALLOC | EVENT_TRACE_FLAG_VAMAP);
        case 0x03:
                if (type == 0x0A)
                        return f & EVENT_TRACE_FLAG_IMAGE_LOAD;
                return f & EVENT_TRACE_FLAG_PROCESS;
        case 0x04:
                return f & (EVENT_TRACE_FLAG_FILE_IO | EVENT_TRACE_FLAG_FILE_IO_INIT |
                            EVENT_TRACE_FLAG_DISK_FILE_IO);
        case 0x05:
                if (type == 0x24)
                        return (f & EVENT_TRACE_FLAG_CSWITCH) ||
                               (m1 & (PERF_CONTEXT_SWITCH & PERF_MASK_GROUP));
                if (type == 0x32)
                        return (f & EVENT_TRACE_FLAG_DISPATCHER) ||
                               (m1 & (PERF_DISPATCHER & PERF_MASK_GROUP));
                return f & EVENT_TRACE_FLAG_THREAD;
        case 0x06:
        case 0x08: return f & EVENT_TRACE_FLAG_NETWORK_TCPIP;
        case 0x07: return f & EVENT_TRACE_FLAG_JOB;
        case 0x09: return f & EVENT_TRACE_FLAG_REGISTRY;
        case 0x0A: return f & EVENT_TRACE_FLAG_DBGPRINT;
        case 0x0F:
                if (type == 0x2E)
                        return (f & EVENT_TRACE_FLAG_PROFILE) ||
                               (m1 & (PERF_PROFILE & PERF_MASK_GROUP));
                if (type == 0x2F)
                        return m1 & PERF_MASK1_PMC;
                if (type == 0x33 || type == 0x34)
                        return f & EVENT_TRACE_FLAG_SYSTEMCALL;
                if (type >= 0x42 && type <= 0x45)
                        return f & (EVENT_TRACE_FLAG_DPC | EVENT_TRACE_FLAG_INTERRUPT);
                return false;
        case 0x14: return f & EVENT_TRACE_FLAG_IMAGE_LOAD;
        case 0x15: return f & EVENT_TRACE_FLAG_DPC;
        case 0x1A: return f & EVENT_TRACE_FLAG_ALPC;
        case 0x1B: return f & EVENT_TRACE_FLAG_SPLIT_IO;
        default: return false;
        }
}

/* The settings the live source runs with: the configured ones, with the PMC sampling sources
   only while PERF_PMC_PROFILE is on (they are configured before, seed 000). */
void session_effective_settings(const struct live_settings *cfg, struct live_settings *out)
{
        *out = *cfg;
        if (!(cfg->masks.Masks[1] & PERF_MASK1_PMC))
                out->nr_profile_sources = 0;
}

/* 0, or -EOPNOTSUPP with err saying why, when the settings need hardware this machine lacks. */
int session_check_hardware(const struct live_settings *cfg, struct etl_error *err)
{
        const struct live_caps *c = session_machine_caps();
        struct live_settings eff;
        session_effective_settings(cfg, &eff);
        bool needs_pmu = false;
        for (uint32_t i = 0; i < eff.nr_profile_sources; i++)
                needs_pmu |= source_needs_pmu(eff.profile_sources[i]);
        for (uint32_t i = 0; i < eff.nr_pmc_counters; i++)
                needs_pmu |= source_needs_pmu(eff.pmc_counters[i]);
        /* the probe's reasons are whole sentences that name what is missing: copied as is */
        if (needs_pmu && !c->has_pmu) {
                snprintf(err->msg, sizeof(err->msg), "%.*s", (int)sizeof(err->msg) - 1,
                         c->why_no_pmu[0] ? c->why_no_pmu
                                          : "no hardware PMU: this machine exposes none");
                return -EOPNOTSUPP;
        }
        if (eff.nr_lbr_hooks && !c->has_lbr) {
                snprintf(err->msg, sizeof(err->msg), "%.*s", (int)sizeof(err->msg) - 1,
                         c->why_no_lbr[0] ? c->why_no_lbr
                                          : "no Last Branch Record: this machine has none");
                return -EOPNOTSUPP;
        }
        return 0;
}

/* ---- session references ------------------------------------------------------------------- */

/* Frees a buffer of a real-time queue (NULL is fine), giving its bytes back to session_mem. */
void session_rt_buf_free(uint8_t *b, uint32_t size)
{
        if (!b)
                return;
        free(b);
        session_mem_give(size);
}

void session_rt_queue_free(struct rt_queue *q)
{
        for (uint32_t i = 0; q->bufs && i < q->cap; i++)
                session_rt_buf_free(q->bufs[i], q->buffer_size);
        for (uint32_t i = 0; i < q->nr_spare; i++)
                session_rt_buf_free(q->spare[i], q->buffer_size);
        free(q->bufs);
        memset(q, 0, sizeof(*q));
}

void session_free(struct session *s)
{
        if (!s)
                return;
        live_source_close(s->source);
        etl_writer_free(s->writer);
        session_rt_queue_free(&s->backlog);
        session_mem_give(s->window_bytes);
        if (s->wake_fd >= 0)
                close(s->wake_fd);
        pthread_cond_destroy(&s->rt_cond);
        pthread_mutex_destroy(&s->rt_lock);
        pthread_mutex_destroy(&s->lock);
        log_file_release(&s->circular);
        free(s->name);
        free(s->log_file_name);
        free(s);
}

/* Drops a reference; the last one frees the session. */
void session_unref(struct session *s)
{
        pthread_mutex_lock(&session_table_lock);
        bool is_last = --s->nr_refs == 0;
        pthread_mutex_unlock(&session_table_lock);
        if (is_last)
                session_free(s);
}

/* A running session by handle (when nonzero) or by name, with a reference taken; NULL when
   there is none. Called without locks. */
struct session *session_find(CONTROLTRACE_ID id, const char *name)
{
        struct session *found = NULL;
        pthread_mutex_lock(&session_table_lock);
        if (id) {
                uint32_t low = (uint32_t)id;
                if (low >= 1 && low <= MAX_SESSIONS) {
                        struct session *s = session_table[low - 1];
                        if (s && s->handle == id && s->state == SESSION_RUNNING)
                                found = s;
                }
        } else if (name) {
                for (int i = 0; i < MAX_SESSIONS; i++) {
                        struct session *s = session_table[i];
                        if (s && s->state == SESSION_RUNNING && session_name_equal(s->name, name)) {
                                found = s;
                                break;
                        }
                }
        }
        if (found)
                found->nr_refs++;
        pthread_mutex_unlock(&session_table_lock);
        return found;
}

/* The session's lock inherits priority (session_local_start: the real-time logger never waits on
   a starved holder), and a thread waiting on such a lock spins in the kernel for as long as its
   holder runs. A request waiting out the logger's drain (4096 records at most under the lock)
   spun through all of it: 7.7% of the host's CPU under bench/top.sh's load, a query a refresh.
   So a request tries the lock, sleeping 50 us between tries, and waits on it in the kernel only
   after about 400 tries (a logger that takes it again at once, drain after drain, gives a try
   no gap; its fair queue then). */
void session_lock_request(struct session *s)
{
        const struct timespec pause = {0, 50000};
        for (int i = 0; i < 400; i++) {
                if (pthread_mutex_trylock(&s->lock) == 0)
                        return;
                nanosleep(&pause, NULL);
        }
        pthread_mutex_lock(&s->lock);
}

/* ---- statistics and the properties written back ------------------------------------------- */

/* The statistics now, from the writer and the live source. EventsLost is the source's exact
   count (PERF_FORMAT_LOST) plus the records the writer could not hold; a sequential file's
   BuffersWritten counts its header buffer, so that it is the file header's BuffersWritten (the
   files an UPDATE closed included). Called with s->lock held. */
void session_get_stats(struct session *s, struct session_stats *st)
{
        if (s->is_ended) {
                *st = s->final;
                return;
        }
        memset(st, 0, sizeof(*st));
        struct etl_writer_stats ws;
        etl_writer_get_stats(s->writer, &ws);
        st->nr_buffers_written = ws.nr_buffers_written;
        st->nr_events_lost = ws.nr_events_dropped + s->nr_source_lost;
        if (s->source) {
                struct live_stats ls;
                live_source_get_stats(s->source, &ls);
                st->nr_events_lost = ws.nr_events_dropped + ls.nr_events_lost;
        }
        if (s->log_file_name && !s->is_circular_file) {
                /* on their way to the file (etl_writer_set_async) are not lost */
                uint64_t data_in_file =
                        (ws.nr_file_buffers ? ws.nr_file_buffers - 1 : 0) + ws.nr_buffers_in_flight;
                uint64_t for_file = ws.nr_buffers_written - s->nr_buffers_before_file;
                if (for_file > data_in_file)
                        st->nr_log_buffers_lost = for_file - data_in_file;
                st->nr_buffers_written = s->nr_written_before_file + ws.nr_file_buffers;
        }
        /* in use: each processor's current buffer, and the completed buffers still held (the
           longest real-time queue, or the ring); the pool is at least MinimumBuffers and at
           most MaximumBuffers, as Windows sizes it */
        uint32_t held = s->backlog.count;
        pthread_mutex_lock(&s->rt_lock);
        for (struct session_rt *rt = s->consumers; rt; rt = rt->next)
                if (rt->q.count > held)
                        held = rt->q.count;
        pthread_mutex_unlock(&s->rt_lock);
        if (ws.nr_ring_buffers > held)
                held = ws.nr_ring_buffers;
        uint64_t in_use = (uint64_t)s->rt_info.nr_cpus + held;
        uint64_t pool = in_use > s->min_buffers ? in_use : s->min_buffers;
        if (pool > s->max_buffers)
                pool = s->max_buffers;
        st->nr_buffers = (uint32_t)pool;
        st->nr_free_buffers = in_use < pool ? (uint32_t)(pool - in_use) : 0;
}

ULONG session_clamp_ulong(uint64_t v)
{
        return v > UINT32_MAX ? UINT32_MAX : (ULONG)v;
}

/* Copies str to the caller's buffer at offset; false when it does not fit. */
static bool put_name(EVENT_TRACE_PROPERTIES *p, ULONG offset, const char *str)
{
        size_t n = strlen(str) + 1;
        if (offset > p->Wnode.BufferSize || p->Wnode.BufferSize - offset < n)
                return false;
        memcpy((char *)p + offset, str, n);
        return true;
}

/* Fills the statistics and settings of Properties (QUERY, and after START/UPDATE/STOP/FLUSH),
   and the names at the offsets the caller set. Called with s->lock held. Returns
   ERROR_SUCCESS or ERROR_MORE_DATA when a name does not fit. */
ULONG session_fill_properties(struct session *s, EVENT_TRACE_PROPERTIES *p)
{
        struct session_stats st;
        session_get_stats(s, &st);
        p->Wnode.HistoricalContext = s->handle;
        p->Wnode.Guid = s->guid;
        p->Wnode.ClientContext = s->client_context;
        p->Wnode.Flags |= WNODE_FLAG_TRACED_GUID;
        p->BufferSize = s->buffer_size_kb;
        p->MinimumBuffers = s->min_buffers;
        p->MaximumBuffers = s->max_buffers;
        p->MaximumFileSize = s->max_file_size;
        p->LogFileMode = s->log_file_mode;
        p->FlushTimer = s->flush_timer_s;
        p->EnableFlags = s->is_kernel ? s->cfg.masks.Masks[0] : 0;
        p->AgeLimit = s->age_limit;
        p->NumberOfBuffers = st.nr_buffers;
        p->FreeBuffers = st.nr_free_buffers;
        p->EventsLost = session_clamp_ulong(st.nr_events_lost);
        p->BuffersWritten = session_clamp_ulong(st.nr_buffers_written);
        p->LogBuffersLost = session_clamp_ulong(st.nr_log_buffers_lost);
        p->RealTimeBuffersLost = session_clamp_ulong(s->nr_rt_lost);
        p->LoggerThreadId = (HANDLE)(uintptr_t)s->tid;
        ULONG rc = ERROR_SUCCESS;
        ULONG name_end = 0;
        if (p->LoggerNameOffset) {
                if (!put_name(p, p->LoggerNameOffset, s->name))
                        rc = ERROR_MORE_DATA;
                else
                        name_end = p->LoggerNameOffset + (ULONG)strlen(s->name) + 1;
        }
        if (p->LogFileNameOffset) {
                bool is_overlap = p->LogFileNameOffset >= p->LoggerNameOffset &&
                                  p->LogFileNameOffset < name_end;
                if (is_overlap ||
                    !put_name(p, p->LogFileNameOffset, s->log_file_name ? s->log_file_name : ""))
                        rc = ERROR_MORE_DATA;
        }
        return rc;
}

/* ---- every session (QueryAllTracesA), and the host's needs ------------------------------- */

static ULONG local_query_all(PEVENT_TRACE_PROPERTIES *PropertyArray, ULONG PropertyArrayCount,
                             PULONG LoggerCount)
{
        static const char fn[] = "QueryAllTraces";
        struct session *ss[MAX_SESSIONS];
        ULONG n = 0;
        pthread_mutex_lock(&session_table_lock);
        for (int i = 0; i < MAX_SESSIONS; i++) {
                if (session_table[i] && session_table[i]->state == SESSION_RUNNING) {
                        session_table[i]->nr_refs++;
                        ss[n++] = session_table[i];
                }
        }
        pthread_mutex_unlock(&session_table_lock);
        ULONG code = n > PropertyArrayCount ? ERROR_MORE_DATA : ERROR_SUCCESS;
        for (ULONG i = 0; i < n; i++) {
                if (i < PropertyArrayCount) {
                        pthread_mutex_lock(&ss[i]->lock);
                        if (session_fill_properties(ss[i], PropertyArray[i]) != ERROR_SUCCESS)
                                code = ERROR_MORE_DATA;
                        pthread_mutex_unlock(&ss[i]->lock);
                }
                session_unref(ss[i]);
        }
        *LoggerCount = n;
        if (code == ERROR_MORE_DATA)
                etw_set_error(code,
                              "%s: %u sessions run; PropertyArray has %u, or a name did not fit "
                              "its structure",
                              fn, n, PropertyArrayCount);
        else
                etw_set_error(ERROR_SUCCESS, NULL);
        return code;
}

void session_get_start_defaults(struct session_start_defaults *d)
{
        memset(d, 0, sizeof(*d));
        pthread_mutex_lock(&session_table_lock);
        d->pid = session_pending_pid;
        d->nr_sources = session_nr_pending_sources;
        memcpy(d->sources, session_pending_sources, session_nr_pending_sources * sizeof(uint32_t));
        for (uint32_t i = 0; i < NR_PROFILE_SOURCES; i++) {
                if (session_profile_intervals[i]) {
                        d->intervals[d->nr_intervals].source = i;
                        d->intervals[d->nr_intervals].interval = session_profile_intervals[i];
                        d->nr_intervals++;
                }
        }
        pthread_mutex_unlock(&session_table_lock);
}

uint32_t session_nr_sessions(void)
{
        uint32_t n = 0;
        pthread_mutex_lock(&session_table_lock);
        for (int i = 0; i < MAX_SESSIONS; i++)
                n += session_table[i] != NULL;
        pthread_mutex_unlock(&session_table_lock);
        return n;
}

void session_stop_all(void)
{
        for (;;) {
                struct session *s = NULL;
                pthread_mutex_lock(&session_table_lock);
                for (int i = 0; i < MAX_SESSIONS && !s; i++) {
                        if (session_table[i] && session_table[i]->state == SESSION_RUNNING) {
                                s = session_table[i];
                                s->nr_refs++;
                        }
                }
                pthread_mutex_unlock(&session_table_lock);
                if (!s)
                        break;
                if (session_claim_stop(s, NULL))
                        session_stop_session(s, NULL);
                session_unref(s);
        }
}

void session_after_fork(void)
{
        session_table_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
        session_ended_cond = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
        session_left_cond = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
}

/* etw_bind_session in the table's own process: a session of this table ends with it already;
   the handle is checked. */
static ULONG local_bind(CONTROLTRACE_ID id)
{
        struct {
                EVENT_TRACE_PROPERTIES p;
                char names[2048];
        } q;
        memset(&q, 0, sizeof(q));
        q.p.Wnode.BufferSize = sizeof(q);
        ULONG code = session_local_control(id, NULL, &q.p, EVENT_TRACE_CONTROL_QUERY, NULL);
        if (code != ERROR_SUCCESS)
                return code;
        etw_set_error(ERROR_SUCCESS, NULL);
        return ERROR_SUCCESS;
}

/* This process's session: its state now, a new one at every ask. */
static int local_rt_state(struct session_rt *rt, struct session_rt_state *out, uint64_t *seq)
{
        static _Atomic uint64_t nr_asked;
        *seq = atomic_fetch_add_explicit(&nr_asked, 1, memory_order_relaxed) + 1;
        return session_rt_state(rt, out);
}

const struct session_ops session_local_ops = {
        .start = session_local_start,
        .control = session_local_control,
        .set_info = session_local_set_info,
        .query_info = session_local_query_info,
        .lbr = session_local_lbr,
        .query_all = local_query_all,
        .bind = local_bind,
        .keep_window = session_keep_window,
        .save_window = session_save_ring,
        .rt_header = session_rt_header,
        .rt_attach = session_rt_attach,
        .rt_next = session_rt_next,
        .rt_wake = session_rt_interrupt,
        .rt_nr_lost = session_rt_nr_lost,
        .rt_state = local_rt_state,
        .rt_error = session_rt_error,
        .rt_detach = session_rt_detach,
};
