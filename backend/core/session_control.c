/* SPDX-License-Identifier: MIT */
/* session_control.c: owns ControlTrace over the table: its checks (run by the API edge and by
   the host), QUERY, STOP, UPDATE and FLUSH, and a session that ends itself. */
#include "session_int.h"

/* ---- ControlTrace ------------------------------------------------------------------------- */

/* Applies next to the session and its running source. Called with s->lock held. Returns 0 or
   -errno with err filled; on failure the old settings stay. */
int session_apply_settings(struct session *s, const struct live_settings *next,
                           struct etl_error *err)
{
        if (s->source) {
                int rc = session_check_hardware(next, err);
                if (rc < 0)
                        return rc;
                struct live_settings eff;
                session_effective_settings(next, &eff);
                rc = live_source_update(s->source, &eff, err);
                if (rc < 0)
                        return rc;
        }
        s->cfg = *next;
        session_settings_changed();
        return 0;
}

/* Marks s STOPPING for the caller, the one stop it gets: a controller's STOP (why NULL), or
   the logger thread ending the session because of why, which then holds a reference of its
   own; from now on the calls that name the handle say why. False when the session is not
   RUNNING (a stop under way, a start not finished). */
bool session_claim_stop(struct session *s, const char *why)
{
        pthread_mutex_lock(&session_table_lock);
        bool is_mine = s->state == SESSION_RUNNING;
        if (is_mine) {
                s->state = SESSION_STOPPING;
                if (why) {
                        s->nr_refs++;
                        session_ended[s->slot].handle = s->handle;
                        session_ended[s->slot].is_done = false;
                        snprintf(session_ended[s->slot].why, sizeof(session_ended[s->slot].why),
                                 "%s", why);
                }
        }
        pthread_mutex_unlock(&session_table_lock);
        return is_mine;
}

/* Ends a claimed session whose logger thread has stopped: closes the source, finalizes the
   file, fills p (when not NULL) and leaves the table. Returns ERROR_SUCCESS, the file's error,
   or ERROR_MORE_DATA. */
static ULONG session_end(struct session *s, EVENT_TRACE_PROPERTIES *p)
{
        pthread_mutex_lock(&s->lock);
        s->is_ending = true;
        pthread_mutex_lock(&s->rt_lock);
        /* what the end writes reaches nobody: no file, and no consumer (none can come once the
           session ends; a screen closes its own before its STOP) */
        bool is_unread = !s->log_file_name && !s->consumers;
        pthread_mutex_unlock(&s->rt_lock);
        if (s->source && is_unread) {
                /* the rings closed as they are: their last records, the stop's rundown and the
                   kernel symbols would be written for no reader (a screen's quit: 2-3 ms of
                   the host's CPU); the kernel's lost count read all the same */
                uint64_t lost = 0;
                live_source_discard(s->source, &lost);
                s->nr_source_lost = lost;
        } else {
                if (s->source) {
                        /* nothing drains the rings since the thread stopped: empty them, then
                           keep the exact lost count, which a closed source cannot give */
                        session_drain_source(s, true);
                        struct live_stats ls;
                        live_source_get_stats(s->source, &ls);
                        s->nr_source_lost = ls.nr_events_lost;
                }
                live_source_close(s->source);
        }
        s->source = NULL;
        struct session_stats st;
        session_get_stats(s, &st);
        int64_t end = session_filetime_now();
        int rc = etl_writer_close(s->writer, end, session_clamp_ulong(st.nr_events_lost),
                                  session_clamp_ulong(st.nr_log_buffers_lost));
        /* the close completed the last buffers: BuffersWritten is now the file header's */
        session_get_stats(s, &st);
        struct etl_error err = {0};
        if (s->is_circular_file) {
                /* through the descriptor of the file made at start: never to what the path
                   names now when that is another file */
                rc = etl_writer_save_ring_fd(s->writer, s->circular.fd, s->log_file_name, end,
                                             &err);
                if (rc == 0 && log_file_reserved_check(&s->circular, s->log_file_name) < 0) {
                        rc = -ENOENT;
                        snprintf(err.msg, sizeof(err.msg),
                                 "%s no longer names the file created at start (it was moved "
                                 "or replaced): the trace went to that file, nothing else was "
                                 "written",
                                 s->log_file_name);
                }
                log_file_release(&s->circular);
        }
        if (rc < 0 && s->log_file_name && !(s->is_circular_file && rc == -ENOSPC))
                st.nr_log_buffers_lost = st.nr_buffers_written;
        s->final = st;
        s->final.nr_free_buffers = st.nr_buffers; /* every buffer flushed */
        s->is_ended = true;
        etl_writer_free(s->writer);
        s->writer = NULL;
        session_rt_end(s);
        ULONG code = p ? session_fill_properties(s, p) : ERROR_SUCCESS;
        pthread_mutex_unlock(&s->lock);

        pthread_mutex_lock(&session_table_lock);
        session_table[s->slot] = NULL;
        pthread_cond_broadcast(&session_left_cond);
        s->nr_refs--; /* the table's; the caller still holds one */
        pthread_mutex_unlock(&session_table_lock);
        if (rc < 0 && s->log_file_name) {
                if (code == ERROR_SUCCESS)
                        code = etw_error_from_errno(rc);
                etw_set_error(code,
                              "ControlTrace(STOP): the session stopped, but writing %s "
                              "failed: %s",
                              s->log_file_name, err.msg[0] ? err.msg : strerror(-rc));
        } else if (code == ERROR_MORE_DATA)
                etw_set_error(code, "ControlTrace(STOP): the session stopped; the names do not "
                                    "fit in Properties");
        else
                etw_set_error(ERROR_SUCCESS, NULL);
        return code;
}

ULONG session_stop_session(struct session *s, EVENT_TRACE_PROPERTIES *p)
{
        session_thread_stop(s);
        return session_end(s, p);
}

/* The logger thread ends its own session, claimed, after its log file failed: nobody will
   join the thread, and the reference the claim took is dropped last. */
void session_end_itself(struct session *s)
{
        pthread_detach(pthread_self());
        s->has_thread = false;
        atomic_store(&s->is_stop_requested, true);
        session_end(s, NULL);
        pthread_mutex_lock(&session_table_lock);
        if (session_ended[s->slot].handle == s->handle)
                session_ended[s->slot].is_done = true;
        pthread_cond_broadcast(&session_ended_cond);
        pthread_mutex_unlock(&session_table_lock);
        session_unref(s);
}

/* The error of a call that found no running session with handle id: ERROR_WMI_INSTANCE_NOT_FOUND,
   saying why the session stopped when it stopped itself (once its file is finalized). what
   names the call. */
ULONG session_not_found(const char *what, CONTROLTRACE_ID id)
{
        char why[sizeof(session_ended[0].why)] = "";
        uint32_t low = (uint32_t)id;
        pthread_mutex_lock(&session_table_lock);
        if (id && low >= 1 && low <= MAX_SESSIONS) {
                while (session_ended[low - 1].handle == id && !session_ended[low - 1].is_done)
                        pthread_cond_wait(&session_ended_cond, &session_table_lock);
                if (session_ended[low - 1].handle == id)
                        memcpy(why, session_ended[low - 1].why, sizeof(why));
        }
        pthread_mutex_unlock(&session_table_lock);
        if (why[0])
                etw_set_error(ERROR_WMI_INSTANCE_NOT_FOUND, "%s: the session stopped itself: %s",
                              what, why);
        else
                etw_set_error(ERROR_WMI_INSTANCE_NOT_FOUND, "%s: no session has handle 0x%llx",
                              what, (unsigned long long)id);
        return ERROR_WMI_INSTANCE_NOT_FOUND;
}

/* UPDATE (ControlTrace documentation): EnableFlags of a kernel logger, FlushTimer and
   MaximumBuffers when nonzero, and a new log file name for a sequential file session. Called
   with s->lock held. */
static ULONG update_session(struct session *s, const EVENT_TRACE_PROPERTIES *p,
                            const char *new_file)
{
        struct etl_error err = {0};
        if (s->is_kernel && p->EnableFlags != s->cfg.masks.Masks[0]) {
                if (p->EnableFlags & ~VALID_ENABLE_FLAGS) {
                        etw_set_error(ERROR_INVALID_FLAGS,
                                      "ControlTrace(UPDATE): EnableFlags 0x%08x has undefined "
                                      "bits 0x%08x",
                                      p->EnableFlags, p->EnableFlags & ~VALID_ENABLE_FLAGS);
                        return ERROR_INVALID_FLAGS;
                }
                struct live_settings next = s->cfg;
                session_set_enable_flags(&next.masks, p->EnableFlags);
                int rc = session_apply_settings(s, &next, &err);
                if (rc < 0) {
                        DWORD code = session_live_error_code(rc);
                        etw_set_error(code, "ControlTrace(UPDATE): %s", err.msg);
                        return code;
                }
        }
        if (new_file && new_file[0] &&
            (!s->log_file_name || strcmp(new_file, s->log_file_name) != 0)) {
                if (!s->log_file_name || s->is_circular_file) {
                        etw_set_error(ERROR_INVALID_PARAMETER,
                                      "ControlTrace(UPDATE): only a sequential file session can "
                                      "switch to a new log file");
                        return ERROR_INVALID_PARAMETER;
                }
                char *copy = strdup(new_file);
                if (!copy) {
                        etw_set_error(ERROR_NOT_ENOUGH_MEMORY, "ControlTrace(UPDATE): no memory");
                        return ERROR_NOT_ENOUGH_MEMORY;
                }
                /* refuse an existing name before the old file is closed */
                struct stat st;
                if (lstat(new_file, &st) == 0) {
                        free(copy);
                        etw_set_error(ERROR_FILE_EXISTS,
                                      "ControlTrace(UPDATE): %s exists: not overwritten", new_file);
                        return ERROR_FILE_EXISTS;
                }
                struct session_stats ss;
                session_get_stats(s, &ss);
                etl_writer_close(s->writer, session_filetime_now(),
                                 session_clamp_ulong(ss.nr_events_lost),
                                 session_clamp_ulong(ss.nr_log_buffers_lost));
                struct etl_writer_stats old;
                etl_writer_get_stats(s->writer, &old);
                s->nr_written_before_file += old.nr_file_buffers;
                int rc = etl_writer_open_file(s->writer, new_file, false, &err);
                if (rc == 0)
                        session_file_async(s, s->max_buffers);
                if (rc < 0) {
                        free(copy);
                        free(s->log_file_name);
                        s->log_file_name = NULL;
                        DWORD code = session_file_error_code(rc);
                        etw_set_error(code,
                                      "ControlTrace(UPDATE): the old file is closed; the new "
                                      "one failed: %s",
                                      err.msg);
                        return code;
                }
                free(s->log_file_name);
                s->log_file_name = copy;
                struct etl_writer_stats ws;
                etl_writer_get_stats(s->writer, &ws);
                s->nr_buffers_before_file = ws.nr_buffers_written;
        }
        if (p->FlushTimer)
                s->flush_timer_s = p->FlushTimer;
        if (p->MaximumBuffers)
                s->max_buffers = session_max_buffers_cap(
                        p->MaximumBuffers < s->min_buffers ? s->min_buffers : p->MaximumBuffers,
                        s->buffer_size_kb);
        return ERROR_SUCCESS;
}

static const char *const control_ops[] = {"QUERY", "STOP", "UPDATE", "FLUSH"};

ULONG session_check_control(CONTROLTRACE_ID TraceId, const char *InstanceName,
                            const EVENT_TRACE_PROPERTIES *Properties, ULONG ControlCode,
                            char new_file[SESSION_MAX_NAME_CHARS + 1])
{
        const char *const *ops = control_ops;
        new_file[0] = '\0';
        if (ControlCode == EVENT_TRACE_CONTROL_INCREMENT_FILE ||
            ControlCode == EVENT_TRACE_CONTROL_CONVERT_TO_REALTIME) {
                etw_set_error(ERROR_NOT_SUPPORTED, "ControlTrace: control code %u is not supported",
                              ControlCode);
                return ERROR_NOT_SUPPORTED;
        }
        if (ControlCode > EVENT_TRACE_CONTROL_FLUSH) {
                etw_set_error(ERROR_INVALID_PARAMETER, "ControlTrace: unknown control code %u",
                              ControlCode);
                return ERROR_INVALID_PARAMETER;
        }
        const char *op = ops[ControlCode];
        if (!Properties) {
                etw_set_error(ERROR_INVALID_PARAMETER, "ControlTrace(%s): Properties is NULL", op);
                return ERROR_INVALID_PARAMETER;
        }
        if (!TraceId && (!InstanceName || !InstanceName[0])) {
                etw_set_error(ERROR_INVALID_PARAMETER,
                              "ControlTrace(%s): neither TraceId nor InstanceName is given", op);
                return ERROR_INVALID_PARAMETER;
        }
        if (Properties->Wnode.BufferSize < sizeof(*Properties)) {
                etw_set_error(ERROR_BAD_LENGTH,
                              "ControlTrace(%s): Wnode.BufferSize %u is smaller than "
                              "EVENT_TRACE_PROPERTIES (%zu bytes)",
                              op, Properties->Wnode.BufferSize, sizeof(*Properties));
                return ERROR_BAD_LENGTH;
        }
        ULONG offsets[2] = {Properties->LoggerNameOffset, Properties->LogFileNameOffset};
        for (int i = 0; i < 2; i++) {
                if (offsets[i] && (offsets[i] < sizeof(*Properties) ||
                                   offsets[i] >= Properties->Wnode.BufferSize)) {
                        etw_set_error(ERROR_INVALID_PARAMETER,
                                      "ControlTrace(%s): %s %u is not inside the buffer after the "
                                      "structure",
                                      op, i ? "LogFileNameOffset" : "LoggerNameOffset", offsets[i]);
                        return ERROR_INVALID_PARAMETER;
                }
        }
        /* UPDATE reads a new log file name before the names are written back */
        if (ControlCode == EVENT_TRACE_CONTROL_UPDATE && Properties->LogFileNameOffset) {
                const char *f = session_string_at(Properties, Properties->LogFileNameOffset);
                if (!f) {
                        etw_set_error(ERROR_BAD_LENGTH,
                                      "ControlTrace(UPDATE): the log file name is not "
                                      "NUL-terminated inside Wnode.BufferSize");
                        return ERROR_BAD_LENGTH;
                }
                if (strlen(f) > MAX_NAME_CHARS) {
                        etw_set_error(ERROR_BAD_PATHNAME,
                                      "ControlTrace(UPDATE): the log file name is too long");
                        return ERROR_BAD_PATHNAME;
                }
                snprintf(new_file, SESSION_MAX_NAME_CHARS + 1, "%s", f);
        }
        return ERROR_SUCCESS;
}

ULONG session_local_control(CONTROLTRACE_ID TraceId, const char *InstanceName,
                            PEVENT_TRACE_PROPERTIES Properties, ULONG ControlCode,
                            const char *new_file)
{
        const char *op = control_ops[ControlCode];
        struct session *s = session_find(TraceId, TraceId ? NULL : InstanceName);
        if (!s) {
                char what[32];
                snprintf(what, sizeof(what), "ControlTrace(%s)", op);
                if (TraceId)
                        return session_not_found(what, TraceId);
                etw_set_error(ERROR_WMI_INSTANCE_NOT_FOUND,
                              "ControlTrace(%s): no session named \"%s\" is running", op,
                              InstanceName);
                return ERROR_WMI_INSTANCE_NOT_FOUND;
        }
        ULONG code = ERROR_SUCCESS;
        if (ControlCode == EVENT_TRACE_CONTROL_STOP) {
                if (!session_claim_stop(s, NULL)) {
                        session_unref(s);
                        etw_set_error(ERROR_WMI_INSTANCE_NOT_FOUND,
                                      "ControlTrace(STOP): the session is already stopping");
                        return ERROR_WMI_INSTANCE_NOT_FOUND;
                }
                code = session_stop_session(s, Properties);
                session_unref(s);
                return code;
        }
        session_lock_request(s);
        if (ControlCode == EVENT_TRACE_CONTROL_UPDATE)
                code = update_session(s, Properties, new_file ? new_file : "");
        else if (ControlCode == EVENT_TRACE_CONTROL_FLUSH && s->writer) {
                /* everything up to now: the held records of a rundown under way too */
                if (s->source)
                        live_source_flush(s->source);
                etl_writer_flush(s->writer);
                session_rt_wake(s);
        }
        if (code == ERROR_SUCCESS) {
                code = session_fill_properties(s, Properties);
                if (code == ERROR_MORE_DATA)
                        etw_set_error(code,
                                      "ControlTrace(%s): the names do not fit in "
                                      "Properties (Wnode.BufferSize %u)",
                                      op, Properties->Wnode.BufferSize);
                else
                        etw_set_error(ERROR_SUCCESS, NULL);
        }
        pthread_mutex_unlock(&s->lock);
        session_unref(s);
        return code;
}
