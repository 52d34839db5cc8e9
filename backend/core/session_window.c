/* SPDX-License-Identifier: MIT */
/* session_window.c: owns the kept window of a session (etw_keep_window) and its save
   (etw_save_window). */
#include "session_int.h"

/* ---- the application's ring ---------------------------------------------------------------- */

int session_save_ring(CONTROLTRACE_ID id, const char *path, bool is_force, struct etl_error *err)
{
        struct session *s = session_find(id, NULL);
        if (!s) {
                snprintf(err->msg, sizeof(err->msg), "no session has handle 0x%llx",
                         (unsigned long long)id);
                return -ESRCH;
        }
        int rc;
        session_lock_request(s);
        if (!((s->log_file_mode & EVENT_TRACE_BUFFERING_MODE) || s->has_window) || !s->writer) {
                snprintf(err->msg, sizeof(err->msg),
                         "session \"%s\" keeps no ring (EVENT_TRACE_BUFFERING_MODE)", s->name);
                rc = -EINVAL;
        } else {
                /* self-contained: what is running now, its images and the kernel symbols
                   hit, as at a stop (the start's rundown may have left the ring) */
                if (s->source)
                        live_source_rundown(s->source);
                etl_writer_flush(s->writer);
                session_rt_wake(s);
                rc = etl_writer_save_ring(s->writer, path, is_force, session_filetime_now(), err);
        }
        pthread_mutex_unlock(&s->lock);
        session_unref(s);
        return rc;
}

int session_keep_window(CONTROLTRACE_ID id, size_t max_bytes, struct etl_error *err)
{
        struct session *s = session_find(id, NULL);
        if (!s) {
                snprintf(err->msg, sizeof(err->msg), "no session has handle 0x%llx",
                         (unsigned long long)id);
                return -ESRCH;
        }
        int rc = -EINVAL;
        session_lock_request(s);
        if (!s->writer) {
                snprintf(err->msg, sizeof(err->msg), "session \"%s\" has no buffers", s->name);
        } else if (max_bytes > SESSION_MAX_BUFFER_BYTES) {
                snprintf(err->msg, sizeof(err->msg),
                         "a kept window of %zu MB: a session keeps at most %zu MB", max_bytes >> 20,
                         SESSION_MAX_BUFFER_BYTES >> 20);
        } else if (max_bytes > s->window_bytes && !session_mem_take(max_bytes - s->window_bytes)) {
                rc = -ENOMEM;
                snprintf(err->msg, sizeof(err->msg),
                         "a kept window of %zu MB does not fit: the sessions of this host keep "
                         "at most %zu MB in windows and real-time queues together "
                         "(ETWTOP_HOST_MAX_MB)",
                         max_bytes >> 20, session_mem_max() >> 20);
        } else if ((rc = etl_writer_set_ring(s->writer, max_bytes)) < 0) {
                if (max_bytes > s->window_bytes)
                        session_mem_give(max_bytes - s->window_bytes);
                snprintf(err->msg, sizeof(err->msg), "no memory for %zu MB of recent buffers",
                         max_bytes >> 20);
        } else {
                if (max_bytes < s->window_bytes)
                        session_mem_give(s->window_bytes - max_bytes);
                s->window_bytes = max_bytes;
                s->has_window = true;
                session_window_pool(s);
        }
        pthread_mutex_unlock(&s->lock);
        session_unref(s);
        return rc;
}
