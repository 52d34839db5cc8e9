/* SPDX-License-Identifier: MIT */
/* session_start.c: owns starting a session: StartTrace's and StartKernelTrace's checks (run by
   the API edge and by the host), and the start of a checked request in the table. */
#include "session_int.h"

/* ---- starting a session ------------------------------------------------------------------- */

/* A NUL-terminated string at offset inside the caller's buffer, or NULL. */
const char *session_string_at(const EVENT_TRACE_PROPERTIES *p, ULONG offset)
{
        if (offset < sizeof(*p) || offset >= p->Wnode.BufferSize)
                return NULL;
        const char *str = (const char *)p + offset;
        if (!memchr(str, '\0', p->Wnode.BufferSize - offset))
                return NULL;
        return str;
}

/* Checks Properties for StartTrace as the documentation and seed 004 give it. Returns
   ERROR_SUCCESS with req filled, or the error (message set). */
/* MaximumBuffers as a session may have it: its buffers in memory at most
   SESSION_MAX_BUFFER_BYTES (as Windows adjusts MaximumBuffers to what it can give, and reports
   the value in force). */
uint32_t session_max_buffers_cap(uint32_t max_buffers, uint32_t buffer_size_kb)
{
        size_t most =
                SESSION_MAX_BUFFER_BYTES / ((size_t)(buffer_size_kb ? buffer_size_kb : 1) << 10);
        return max_buffers > most ? (uint32_t)most : max_buffers;
}

static ULONG validate_start(CONTROLTRACE_ID *id, const char *name, EVENT_TRACE_PROPERTIES *p,
                            uint32_t extra_mode, struct session_start_request *req)
{
        if (!id || !p) {
                etw_set_error(ERROR_INVALID_PARAMETER, "StartTrace: %s is NULL",
                              !id ? "TraceId" : "Properties");
                return ERROR_INVALID_PARAMETER;
        }
        if (!name || !name[0]) {
                etw_set_error(ERROR_INVALID_PARAMETER, "StartTrace: InstanceName is empty");
                return ERROR_INVALID_PARAMETER;
        }
        size_t name_len = strlen(name);
        if (p->Wnode.BufferSize < sizeof(*p)) {
                etw_set_error(ERROR_BAD_LENGTH,
                              "StartTrace: Wnode.BufferSize %u is smaller than "
                              "EVENT_TRACE_PROPERTIES (%zu bytes)",
                              p->Wnode.BufferSize, sizeof(*p));
                return ERROR_BAD_LENGTH;
        }
        if (!(p->Wnode.Flags & WNODE_FLAG_TRACED_GUID)) {
                etw_set_error(ERROR_INVALID_PARAMETER,
                              "StartTrace: Wnode.Flags lacks WNODE_FLAG_TRACED_GUID");
                return ERROR_INVALID_PARAMETER;
        }
        if (p->LoggerNameOffset < sizeof(*p) || p->LoggerNameOffset >= p->Wnode.BufferSize) {
                etw_set_error(ERROR_INVALID_PARAMETER,
                              "StartTrace: LoggerNameOffset %u is not inside the buffer after "
                              "the structure (%zu..%u)",
                              p->LoggerNameOffset, sizeof(*p), p->Wnode.BufferSize);
                return ERROR_INVALID_PARAMETER;
        }
        if (p->Wnode.BufferSize - p->LoggerNameOffset < name_len + 1) {
                etw_set_error(ERROR_BAD_LENGTH,
                              "StartTrace: Wnode.BufferSize %u has no room for the session name "
                              "(%zu bytes at offset %u)",
                              p->Wnode.BufferSize, name_len + 1, p->LoggerNameOffset);
                return ERROR_BAD_LENGTH;
        }
        if (name_len > MAX_NAME_CHARS) {
                etw_set_error(ERROR_INVALID_PARAMETER,
                              "StartTrace: the session name is longer than %d characters",
                              MAX_NAME_CHARS);
                return ERROR_INVALID_PARAMETER;
        }
        const char *file = NULL;
        if (p->LogFileNameOffset) {
                if (p->LogFileNameOffset < sizeof(*p) ||
                    p->LogFileNameOffset >= p->Wnode.BufferSize) {
                        etw_set_error(ERROR_INVALID_PARAMETER,
                                      "StartTrace: LogFileNameOffset %u is not inside the buffer "
                                      "after the structure (%zu..%u)",
                                      p->LogFileNameOffset, sizeof(*p), p->Wnode.BufferSize);
                        return ERROR_INVALID_PARAMETER;
                }
                if (p->LogFileNameOffset < p->LoggerNameOffset + name_len + 1) {
                        etw_set_error(ERROR_INVALID_PARAMETER,
                                      "StartTrace: the log file name (offset %u) must follow the "
                                      "session name (offset %u, %zu bytes)",
                                      p->LogFileNameOffset, p->LoggerNameOffset, name_len + 1);
                        return ERROR_INVALID_PARAMETER;
                }
                file = session_string_at(p, p->LogFileNameOffset);
                if (!file) {
                        etw_set_error(ERROR_BAD_LENGTH,
                                      "StartTrace: the log file name at offset %u is not "
                                      "NUL-terminated inside Wnode.BufferSize %u",
                                      p->LogFileNameOffset, p->Wnode.BufferSize);
                        return ERROR_BAD_LENGTH;
                }
                if (!file[0])
                        file = NULL;
                else if (strlen(file) > MAX_NAME_CHARS) {
                        etw_set_error(ERROR_BAD_PATHNAME,
                                      "StartTrace: the log file name is longer than %d characters",
                                      MAX_NAME_CHARS);
                        return ERROR_BAD_PATHNAME;
                }
        }
        if (p->Wnode.ClientContext > EVENT_TRACE_CLOCK_CPUCYCLE) {
                etw_set_error(ERROR_INVALID_PARAMETER,
                              "StartTrace: Wnode.ClientContext %u is not a clock (0..3)",
                              p->Wnode.ClientContext);
                return ERROR_INVALID_PARAMETER;
        }

        uint32_t mode = p->LogFileMode | extra_mode;
        const char *why = NULL;
        if (mode & ~VALID_LOG_FILE_MODES)
                why = "unknown or reserved bits (EVENT_TRACE_RELOG_MODE is for the relogger)";
        else if ((mode & EVENT_TRACE_FILE_MODE_SEQUENTIAL) &&
                 (mode & (EVENT_TRACE_FILE_MODE_CIRCULAR | EVENT_TRACE_FILE_MODE_NEWFILE)))
                why = "EVENT_TRACE_FILE_MODE_SEQUENTIAL with CIRCULAR or NEWFILE";
        else if ((mode & EVENT_TRACE_FILE_MODE_CIRCULAR) &&
                 (mode & (EVENT_TRACE_FILE_MODE_APPEND | EVENT_TRACE_FILE_MODE_NEWFILE)))
                why = "EVENT_TRACE_FILE_MODE_CIRCULAR with APPEND or NEWFILE";
        else if ((mode & EVENT_TRACE_FILE_MODE_NEWFILE) && (mode & EVENT_TRACE_FILE_MODE_APPEND))
                why = "EVENT_TRACE_FILE_MODE_NEWFILE with APPEND";
        else if ((mode & EVENT_TRACE_FILE_MODE_APPEND) && (mode & EVENT_TRACE_PRIVATE_LOGGER_MODE))
                why = "EVENT_TRACE_FILE_MODE_APPEND with EVENT_TRACE_PRIVATE_LOGGER_MODE";
        else if ((mode & EVENT_TRACE_FILE_MODE_CIRCULAR) && !p->MaximumFileSize)
                why = "EVENT_TRACE_FILE_MODE_CIRCULAR needs MaximumFileSize";
        else if ((mode & EVENT_TRACE_FILE_MODE_NEWFILE) &&
                 (!p->MaximumFileSize || !file || !strstr(file, "%d")))
                why = "EVENT_TRACE_FILE_MODE_NEWFILE needs MaximumFileSize and a %d in the name";
        else if ((mode & EVENT_TRACE_FILE_MODE_PREALLOCATE) &&
                 (!p->MaximumFileSize || (mode & EVENT_TRACE_FILE_MODE_NEWFILE)))
                why = "EVENT_TRACE_FILE_MODE_PREALLOCATE needs MaximumFileSize, and not NEWFILE";
        else if ((mode & EVENT_TRACE_BUFFERING_MODE) &&
                 ((mode & (FILE_MODES | EVENT_TRACE_REAL_TIME_MODE)) || file))
                why = "EVENT_TRACE_BUFFERING_MODE with a log file or real-time mode";
        else if ((mode & EVENT_TRACE_PRIVATE_LOGGER_MODE) &&
                 (mode & EVENT_TRACE_SYSTEM_LOGGER_MODE))
                why = "EVENT_TRACE_PRIVATE_LOGGER_MODE with EVENT_TRACE_SYSTEM_LOGGER_MODE";
        else if (!file && ((mode & FILE_MODES) ||
                           !(mode & (EVENT_TRACE_REAL_TIME_MODE | EVENT_TRACE_BUFFERING_MODE))))
                why = "a file mode (or LogFileMode 0) needs a log file name";
        if (why) {
                etw_set_error(ERROR_INVALID_PARAMETER, "StartTrace: LogFileMode 0x%x: %s", mode,
                              why);
                return ERROR_INVALID_PARAMETER;
        }

        bool is_kernel_name = session_name_equal(name, KERNEL_LOGGER_NAMEA);
        if (IsEqualGUID(&p->Wnode.Guid, &SystemTraceControlGuid) && !is_kernel_name &&
            !(mode & EVENT_TRACE_SYSTEM_LOGGER_MODE)) {
                etw_set_error(ERROR_INVALID_PARAMETER,
                              "StartTrace: Wnode.Guid is SystemTraceControlGuid but the name is "
                              "not \"" KERNEL_LOGGER_NAMEA "\"");
                return ERROR_INVALID_PARAMETER;
        }
        bool is_kernel = is_kernel_name || (mode & EVENT_TRACE_SYSTEM_LOGGER_MODE);
        if (is_kernel && (p->EnableFlags & ~VALID_ENABLE_FLAGS)) {
                etw_set_error(ERROR_INVALID_FLAGS,
                              "StartTrace: EnableFlags 0x%08x has undefined bits 0x%08x%s",
                              p->EnableFlags, p->EnableFlags & ~VALID_ENABLE_FLAGS,
                              (p->EnableFlags & EVENT_TRACE_FLAG_EXTENSION)
                                      ? " (for group masks beyond EnableFlags use "
                                        "TraceSetInformation(TraceSystemTraceEnableFlagsInfo))"
                                      : "");
                return ERROR_INVALID_FLAGS;
        }

        const struct live_caps *c = session_machine_caps();
        memset(req, 0, sizeof(*req));
        req->name = name;
        req->file = file;
        req->guid = is_kernel_name ? SystemTraceControlGuid : p->Wnode.Guid;
        req->is_kernel = is_kernel;
        req->log_file_mode = mode;
        if (file && !(mode & FILE_MODES))
                req->log_file_mode |= EVENT_TRACE_FILE_MODE_SEQUENTIAL; /* seed 004 */
        req->client_context =
                p->Wnode.ClientContext ? p->Wnode.ClientContext : EVENT_TRACE_CLOCK_PERFCOUNTER;
        req->buffer_size_kb = p->BufferSize ? p->BufferSize : DEFAULT_BUFFER_KB;
        if (req->buffer_size_kb > MAX_BUFFER_KB)
                req->buffer_size_kb = MAX_BUFFER_KB;
        /* at least two buffers per processor, as Windows adjusts them */
        req->min_buffers = p->MinimumBuffers;
        if (req->min_buffers < 2 * c->nr_cpus)
                req->min_buffers = 2 * c->nr_cpus;
        req->max_buffers = p->MaximumBuffers;
        if (req->max_buffers == 0)
                req->max_buffers = req->min_buffers + 20;
        else if (req->max_buffers < req->min_buffers)
                req->max_buffers = req->min_buffers;
        req->max_buffers = session_max_buffers_cap(req->max_buffers, req->buffer_size_kb);
        if (req->min_buffers > req->max_buffers)
                req->min_buffers = req->max_buffers;
        req->max_file_size = p->MaximumFileSize;
        req->flush_timer_s = p->FlushTimer ? p->FlushTimer : DEFAULT_FLUSH_S;
        req->enable_flags = is_kernel ? p->EnableFlags : 0;
        req->age_limit = p->AgeLimit;
        return ERROR_SUCCESS;
}

/* Builds the session's writer, file, ring, source and thread. Returns 0, or a Win32 code in
 *code with the message in err. Called with the slot reserved (STARTING). */
static int session_open(struct session *s, const struct session_start_request *req, DWORD *code,
                        struct etl_error *err)
{
        const struct live_caps *c = session_machine_caps();
        struct utsname un;
        unsigned major = 0, minor = 0, patch = 0;
        if (uname(&un) == 0)
                sscanf(un.release, "%u.%u.%u", &major, &minor, &patch);
        int64_t m0 = session_clock_ns(CLOCK_MONOTONIC);
        int64_t real = session_clock_ns(CLOCK_REALTIME);
        int64_t m1 = session_clock_ns(CLOCK_MONOTONIC);
        int64_t boot = session_clock_ns(CLOCK_BOOTTIME);
        uint64_t mono = (uint64_t)(m0 + (m1 - m0) / 2);

        s->rt_info = (struct session_rt_info){
                .start_timestamp = mono,
                .start_filetime = FILETIME_UNIX_EPOCH + real / 100,
                .boot_filetime = FILETIME_UNIX_EPOCH + (real - boot) / 100,
                .perf_freq = 1000000000ull, /* DESIGN.md: CLOCK_MONOTONIC ns as QPC ticks */
                .clock_type = EVENT_TRACE_CLOCK_PERFCOUNTER,
                .buffer_size_bytes = req->buffer_size_kb * 1024,
                .nr_cpus = c->nr_cpus,
                .log_file_mode = req->log_file_mode,
                .is_kernel = req->is_kernel,
        };
        struct etl_writer_config cfg = {
                .buffer_size_bytes = s->rt_info.buffer_size_bytes,
                .nr_cpus = c->nr_cpus,
                /* a kernel logger's file says so, as the system loggers' files do */
                .log_file_mode = (req->log_file_mode & ~EVENT_TRACE_COMPRESSED_MODE) |
                                 (req->is_kernel ? EVENT_TRACE_SYSTEM_LOGGER_MODE : 0),
                .logger_id = (uint16_t)(s->slot + 1),
                .logger_name = req->name,
                .log_file_name = req->file,
                .start_timestamp = mono,
                .start_filetime = s->rt_info.start_filetime,
                .boot_filetime = s->rt_info.boot_filetime,
                .perf_freq = s->rt_info.perf_freq,
                .clock_type = EVENT_TRACE_CLOCK_PERFCOUNTER,
                .os_major = (uint8_t)major,
                .os_minor = (uint8_t)minor,
                .provider_version = patch,
                .timer_resolution_100ns = c->timer_resolution_100ns,
                .cpu_speed_mhz = session_cpu_speed_mhz,
                .maximum_file_size_mb = (req->log_file_mode & EVENT_TRACE_USE_KBYTES_FOR_SIZE)
                                                ? (req->max_file_size + 1023) / 1024
                                                : req->max_file_size,
                .header_tid = (uint32_t)syscall(SYS_gettid),
                .header_pid = (uint32_t)getpid(),
        };
        uint64_t unit = (req->log_file_mode & EVENT_TRACE_USE_KBYTES_FOR_SIZE) ? 1024 : 1 << 20;
        if (!(req->log_file_mode & EVENT_TRACE_FILE_MODE_CIRCULAR))
                cfg.max_file_bytes = s->max_file_bytes = req->max_file_size * unit;
        int rc = etl_writer_new(&s->writer, &cfg);
        if (rc < 0) {
                *code = rc == -ENOMEM ? ERROR_NOT_ENOUGH_MEMORY : ERROR_INVALID_PARAMETER;
                snprintf(err->msg, sizeof(err->msg),
                         "the writer refused BufferSize %u KB or the names (%s)",
                         req->buffer_size_kb, strerror(-rc));
                return rc;
        }
        if (req->log_file_mode & EVENT_TRACE_BUFFERING_MODE) {
                rc = etl_writer_set_ring(s->writer,
                                         (size_t)req->max_buffers * s->rt_info.buffer_size_bytes);
        } else if (req->log_file_mode & EVENT_TRACE_FILE_MODE_CIRCULAR) {
                uint64_t bytes = req->max_file_size * unit;
                bytes = bytes > s->rt_info.buffer_size_bytes ? bytes - s->rt_info.buffer_size_bytes
                                                             : s->rt_info.buffer_size_bytes;
                rc = etl_writer_set_ring(s->writer, (size_t)bytes);
        }
        if (rc == 0 &&
            (req->log_file_mode & (EVENT_TRACE_BUFFERING_MODE | EVENT_TRACE_FILE_MODE_CIRCULAR)))
                session_window_pool(s); /* where a consumer can read the ring's buffers */
        if (rc < 0) {
                *code = ERROR_NOT_ENOUGH_MEMORY;
                snprintf(err->msg, sizeof(err->msg), "no memory for the in-memory ring");
                return rc;
        }
        if (req->file) {
                if (req->log_file_mode & EVENT_TRACE_FILE_MODE_CIRCULAR) {
                        rc = log_file_reserve(&s->circular, req->file, false, err);
                        s->is_circular_file = rc == 0;
                } else {
                        rc = etl_writer_open_file(s->writer, req->file, false, err);
                        if (rc == 0)
                                session_file_async(s, req->max_buffers);
                }
                if (rc < 0) {
                        *code = session_file_error_code(rc);
                        if (rc == -EEXIST && (req->log_file_mode & EVENT_TRACE_FILE_MODE_APPEND)) {
                                *code = ERROR_NOT_SUPPORTED;
                                snprintf(err->msg, sizeof(err->msg),
                                         "%s exists: appending to an existing .etl is not "
                                         "supported (EVENT_TRACE_FILE_MODE_APPEND)",
                                         req->file);
                        }
                        return rc;
                }
                s->log_file_name = strdup(req->file);
                if (!s->log_file_name) {
                        *code = ERROR_NOT_ENOUGH_MEMORY;
                        snprintf(err->msg, sizeof(err->msg), "out of memory");
                        return -ENOMEM;
                }
        }
        if (req->log_file_mode & EVENT_TRACE_REAL_TIME_MODE) {
                rc = session_rt_queue_init(&s->backlog, req->max_buffers,
                                           s->rt_info.buffer_size_bytes);
                if (rc < 0) {
                        *code = ERROR_NOT_ENOUGH_MEMORY;
                        snprintf(err->msg, sizeof(err->msg), "out of memory");
                        return rc;
                }
                etl_writer_set_buffer_callback(s->writer, session_rt_on_buffer, s);
        }
        if (req->is_kernel) {
                rc = session_check_hardware(&s->cfg, err);
                if (rc == 0) {
                        struct live_settings eff;
                        session_effective_settings(&s->cfg, &eff);
                        pthread_mutex_lock(&s->lock);
                        rc = live_source_open(&s->source, &eff, s->writer, err);
                        pthread_mutex_unlock(&s->lock);
                }
                if (rc < 0) {
                        *code = session_live_error_code(rc);
                        s->source = NULL;
                        return rc;
                }
        }
        s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (s->wake_fd < 0 || (rc = session_thread_start(s)) < 0) {
                rc = s->wake_fd < 0 ? -errno : rc;
                *code = ERROR_NO_SYSTEM_RESOURCES;
                snprintf(err->msg, sizeof(err->msg), "cannot start the logger thread: %s",
                         strerror(-rc));
                return rc;
        }
        return 0;
}

/* Undoes what session_open built, for a start that failed: nothing is left on disk. */
static void session_abort(struct session *s)
{
        session_thread_stop(s);
        live_source_close(s->source);
        s->source = NULL;
        if (s->is_circular_file) {
                log_file_unreserve(&s->circular); /* the name, when it is still the file made */
        } else if (s->writer && s->log_file_name) {
                etl_writer_remove_file(s->writer);
        }
}

ULONG session_local_start(CONTROLTRACE_ID *id, EVENT_TRACE_PROPERTIES *p,
                          const struct session_start_request *req,
                          const struct session_start_defaults *d)
{
        *id = 0;
        struct session *s = calloc(1, sizeof(*s));
        if (!s) {
                etw_set_error(ERROR_NOT_ENOUGH_MEMORY, "StartTrace: out of memory");
                return ERROR_NOT_ENOUGH_MEMORY;
        }
        s->wake_fd = -1;
        s->circular = (struct log_file_reserved)LOG_FILE_RESERVED_INIT;
        /* priority inheritance: the real-time logger never waits for a starved holder (a
           ControlTrace UPDATE draining for it under this lock while every CPU is busy) */
        pthread_mutexattr_t ma;
        pthread_mutexattr_init(&ma);
        pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
        pthread_mutex_init(&s->lock, &ma);
        pthread_mutex_init(&s->rt_lock, &ma);
        pthread_mutexattr_destroy(&ma);
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&s->rt_cond, &ca);
        pthread_condattr_destroy(&ca);
        s->name = strdup(req->name);
        if (!s->name) {
                session_free(s);
                etw_set_error(ERROR_NOT_ENOUGH_MEMORY, "StartTrace: out of memory");
                return ERROR_NOT_ENOUGH_MEMORY;
        }
        s->guid = req->guid;
        if (session_guid_is_zero(&s->guid) &&
            getrandom(&s->guid, sizeof(s->guid), 0) == sizeof(s->guid)) {
                s->guid.Data3 = (USHORT)((s->guid.Data3 & 0x0FFF) | 0x4000); /* version 4 */
                s->guid.Data4[0] = (UCHAR)((s->guid.Data4[0] & 0x3F) | 0x80);
        }
        s->is_kernel = req->is_kernel;
        s->log_file_mode = req->log_file_mode;
        s->client_context = req->client_context;
        s->buffer_size_kb = req->buffer_size_kb;
        s->min_buffers = req->min_buffers;
        s->max_buffers = req->max_buffers;
        s->max_file_size = req->max_file_size;
        s->flush_timer_s = req->flush_timer_s;
        s->age_limit = req->age_limit;
        s->cfg.pid = -1;
        /* a kernel logger's rings hold at least its minimum buffers, all CPUs together (as a
           Windows kernel logger preallocates them): raised against lost events, as xperf's
           -MinBuffers is */
        s->cfg.min_ring_bytes = (uint64_t)req->min_buffers * req->buffer_size_kb * 1024;
        session_set_enable_flags(&s->cfg.masks, req->enable_flags);

        /* reserve the name, check the other sessions, take the global profile settings; a
           session of the same name that is stopping (its file being finalized: a STOP from
           another thread, or a bound session whose starter ended) frees its name soon */
        struct timespec stopping_deadline;
        clock_gettime(CLOCK_REALTIME, &stopping_deadline);
        stopping_deadline.tv_sec += STOPPING_WAIT_S;
        pthread_mutex_lock(&session_table_lock);
        ULONG code;
        int free_slot;
again:
        code = ERROR_SUCCESS;
        free_slot = -1;
        for (int i = 0; i < MAX_SESSIONS; i++) {
                struct session *o = session_table[i];
                if (!o) {
                        if (free_slot < 0)
                                free_slot = i;
                        continue;
                }
                if (session_name_equal(o->name, req->name) ||
                    (!session_guid_is_zero(&req->guid) && IsEqualGUID(&o->guid, &req->guid))) {
                        if (o->state == SESSION_STOPPING &&
                            pthread_cond_timedwait(&session_left_cond, &session_table_lock,
                                                   &stopping_deadline) != ETIMEDOUT)
                                goto again;
                        code = ERROR_ALREADY_EXISTS;
                        etw_set_error(code, "StartTrace: a session named \"%s\"%s is running",
                                      o->name,
                                      session_name_equal(o->name, req->name) ? "" : " (same GUID)");
                        break;
                }
                if (req->file && o->log_file_name && strcmp(o->log_file_name, req->file) == 0) {
                        code = ERROR_BAD_PATHNAME;
                        etw_set_error(code, "StartTrace: session \"%s\" already writes %s", o->name,
                                      req->file);
                        break;
                }
        }
        if (code == ERROR_SUCCESS && free_slot < 0) {
                code = ERROR_NO_SYSTEM_RESOURCES;
                etw_set_error(code, "StartTrace: %d sessions are running already", MAX_SESSIONS);
        }
        if (code != ERROR_SUCCESS) {
                pthread_mutex_unlock(&session_table_lock);
                session_free(s);
                return code;
        }
        s->slot = (uint32_t)free_slot;
        s->handle = ((uint64_t)++session_generations[free_slot] << 32) | (uint64_t)(free_slot + 1);
        s->state = SESSION_STARTING;
        /* the table's, and this start's until it has filled Properties: a logger whose file
           fails at once ends its session itself, and dropped the last one under our feet */
        s->nr_refs = 2;
        session_table[free_slot] = s;
        if (s->is_kernel) {
                uint32_t nr_sources = d ? d->nr_sources : session_nr_pending_sources;
                const uint32_t *sources = d ? d->sources : session_pending_sources;
                s->cfg.pid = d ? d->pid : session_pending_pid;
                s->cfg.profile_interval_100ns = session_interval_of(ProfileTime);
                s->cfg.nr_profile_sources = nr_sources;
                for (uint32_t i = 0; i < nr_sources; i++) {
                        s->cfg.profile_sources[i] = sources[i];
                        s->cfg.source_intervals[i] = session_interval_of(sources[i]);
                }
        }
        pthread_mutex_unlock(&session_table_lock);

        if (req->nr_stack_ids) {
                for (uint32_t i = 0; i < req->nr_stack_ids; i++) {
                        int hook = session_hook_of_event(&req->stack_ids[i]);
                        if (hook >= 0 && session_hook_is_enabled((uint16_t)hook, &s->cfg.masks) &&
                            s->cfg.nr_stack_hooks < LIVE_MAX_STACK_HOOKS)
                                s->cfg.stack_hooks[s->cfg.nr_stack_hooks++] = (uint16_t)hook;
                }
        }

        struct etl_error err = {0};
        DWORD open_code = ERROR_SUCCESS;
        int rc = session_open(s, req, &open_code, &err);
        pthread_mutex_lock(&session_table_lock);
        if (rc < 0) {
                session_table[s->slot] = NULL;
                pthread_cond_broadcast(&session_left_cond);
                pthread_mutex_unlock(&session_table_lock);
                session_abort(s);
                session_free(s);
                etw_set_error(open_code, "StartTrace: %s", err.msg);
                return open_code;
        }
        s->state = SESSION_RUNNING;
        pthread_mutex_unlock(&session_table_lock);

        pthread_mutex_lock(&s->lock);
        session_fill_properties(s, p);
        pthread_mutex_unlock(&s->lock);
        /* the name goes where LoggerNameOffset says (validated to fit) */
        memcpy((char *)p + p->LoggerNameOffset, s->name, strlen(s->name) + 1);
        *id = s->handle;
        session_unref(s);
        etw_set_error(ERROR_SUCCESS, NULL);
        return ERROR_SUCCESS;
}

ULONG session_check_start_trace(CONTROLTRACE_ID *TraceId, const char *InstanceName,
                                EVENT_TRACE_PROPERTIES *Properties,
                                struct session_start_request *req)
{
        ULONG code = validate_start(TraceId, InstanceName, Properties, 0, req);
        if (code != ERROR_SUCCESS)
                return code;
        if (req->log_file_mode & EVENT_TRACE_FILE_MODE_NEWFILE) {
                etw_set_error(ERROR_NOT_SUPPORTED,
                              "StartTrace: EVENT_TRACE_FILE_MODE_NEWFILE: switching to a new "
                              "file under a running session is not supported; use "
                              "EVENT_TRACE_FILE_MODE_SEQUENTIAL");
                return ERROR_NOT_SUPPORTED;
        }
        return ERROR_SUCCESS;
}

ULONG session_check_kernel_trace(CONTROLTRACE_ID *TraceHandle, EVENT_TRACE_PROPERTIES *Properties,
                                 const CLASSIC_EVENT_ID *StackTracingEventIds,
                                 ULONG cStackTracingEventIds,
                                 char name_copy[SESSION_MAX_NAME_CHARS + 1],
                                 struct session_start_request *req)
{
        if (!TraceHandle || !Properties) {
                etw_set_error(ERROR_INVALID_PARAMETER, "StartKernelTrace: %s is NULL",
                              !TraceHandle ? "TraceHandle" : "Properties");
                return ERROR_INVALID_PARAMETER;
        }
        if (cStackTracingEventIds && !StackTracingEventIds) {
                etw_set_error(ERROR_INVALID_PARAMETER,
                              "StartKernelTrace: %u stack ids but StackTracingEventIds is NULL",
                              cStackTracingEventIds);
                return ERROR_INVALID_PARAMETER;
        }
        if (cStackTracingEventIds > LIVE_MAX_STACK_HOOKS) {
                etw_set_error(ERROR_INVALID_PARAMETER, "StartKernelTrace: %u stack ids, at most %d",
                              cStackTracingEventIds, LIVE_MAX_STACK_HOOKS);
                return ERROR_INVALID_PARAMETER;
        }
        const char *name = KERNEL_LOGGER_NAMEA;
        bool is_rundown = IsEqualGUID(&Properties->Wnode.Guid, &KernelRundownGuid);
        if (!is_rundown && !IsEqualGUID(&Properties->Wnode.Guid, &SystemTraceControlGuid)) {
                etw_set_error(ERROR_INVALID_PARAMETER,
                              "StartKernelTrace: Wnode.Guid must be SystemTraceControlGuid (or "
                              "KernelRundownGuid with a logger name)");
                return ERROR_INVALID_PARAMETER;
        }
        if (Properties->Wnode.BufferSize < sizeof(*Properties)) {
                etw_set_error(ERROR_BAD_LENGTH,
                              "StartKernelTrace: Wnode.BufferSize %u is smaller than "
                              "EVENT_TRACE_PROPERTIES",
                              Properties->Wnode.BufferSize);
                return ERROR_BAD_LENGTH;
        }
        if (is_rundown) {
                name = session_string_at(Properties, Properties->LoggerNameOffset);
                if (!name || !name[0]) {
                        etw_set_error(ERROR_INVALID_PARAMETER,
                                      "StartKernelTrace: KernelRundownGuid needs a logger name at "
                                      "LoggerNameOffset");
                        return ERROR_INVALID_PARAMETER;
                }
        }
        if (Properties->EnableFlags & ~VALID_ENABLE_FLAGS) {
                etw_set_error(ERROR_INVALID_FLAGS,
                              "StartKernelTrace: EnableFlags 0x%08x has undefined bits 0x%08x",
                              Properties->EnableFlags,
                              Properties->EnableFlags & ~VALID_ENABLE_FLAGS);
                return ERROR_INVALID_FLAGS;
        }
        /* The name is copied to LoggerNameOffset: work on a copy of the name in case it is the
           caller's own string there. */
        snprintf(name_copy, SESSION_MAX_NAME_CHARS + 1, "%s", name);
        /* a rundown logger is a system logger of its own name */
        ULONG code = validate_start(TraceHandle, name_copy, Properties,
                                    is_rundown ? EVENT_TRACE_SYSTEM_LOGGER_MODE : 0, req);
        if (code != ERROR_SUCCESS)
                return code;
        if (is_rundown)
                req->guid = KernelRundownGuid;
        req->stack_ids = StackTracingEventIds;
        req->nr_stack_ids = cStackTracingEventIds;
        req->is_kernel_trace = true;
        if (req->log_file_mode & EVENT_TRACE_FILE_MODE_NEWFILE) {
                etw_set_error(ERROR_NOT_SUPPORTED,
                              "StartKernelTrace: EVENT_TRACE_FILE_MODE_NEWFILE is not supported");
                return ERROR_NOT_SUPPORTED;
        }
        return ERROR_SUCCESS;
}
