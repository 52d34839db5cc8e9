/* SPDX-License-Identifier: MIT */
/* host_client_ops.c: owns the session operations of a client of the session host: which calls
   go to the host and which stay with this process's handle-0 settings, and the host's real-time
   streams seen as the API's consumers. */
#include "etw/etwtop_ext.h"
#include "host.h"
#include "host_proto.h"

static ULONG client_start(CONTROLTRACE_ID *id, PEVENT_TRACE_PROPERTIES p,
                          const struct session_start_request *req,
                          const struct session_start_defaults *d)
{
        return host_client_start(id, req->name, p, req->file, req->is_kernel_trace, req->stack_ids,
                                 req->nr_stack_ids, d);
}

/* A session's class goes to its host; handle 0 is this process's (the interval, global, also
   the host's, once this process has taken it); a length no class takes is refused here as
   there. */
static ULONG client_set_info(CONTROLTRACE_ID id, TRACE_INFO_CLASS c, const void *info, ULONG len)
{
        if (id && len <= HOST_MAX_DATA)
                return host_client_set_info(id, c, info, len);
        ULONG code = session_local_ops.set_info(id, c, info, len);
        if (code == ERROR_SUCCESS && !id && c == TraceSampledProfileIntervalInfo)
                return host_client_set_info(0, c, info, len);
        return code;
}

/* A session's class, and the global interval while a host runs, are the host's. */
static ULONG client_query_info(CONTROLTRACE_ID id, TRACE_INFO_CLASS c, void *info, ULONG len,
                               PULONG ret)
{
        if (len <= HOST_MAX_DATA &&
            (id || (c == TraceSampledProfileIntervalInfo && host_client_is_running())))
                return host_client_query_info(id, c, info, len, ret);
        return session_local_ops.query_info(id, c, info, len, ret);
}

static ULONG client_lbr(CONTROLTRACE_ID id, ULONG config, const CLASSIC_EVENT_ID *events,
                        ULONG count)
{
        if (id)
                return host_client_lbr(id, config, events, count);
        return session_local_ops.lbr(id, config, events, count);
}

/* A consumer of this implementation is the host's stream (struct host_rt). */
static struct host_rt *stream(struct session_rt *rt)
{
        return (struct host_rt *)(void *)rt;
}

static const struct host_rt *const_stream(const struct session_rt *rt)
{
        return (const struct host_rt *)(const void *)rt;
}

static int client_rt_attach(const char *name, struct session_rt **out, struct session_rt_info *info)
{
        struct host_rt *rt = NULL;
        int rc = host_client_rt_attach(name, &rt, info);
        *out = (struct session_rt *)(void *)rt;
        return rc;
}

static int client_rt_next(struct session_rt *rt, uint32_t timeout_ms, const uint8_t **buf,
                          uint32_t *size)
{
        return host_client_rt_next(stream(rt), timeout_ms, buf, size);
}

static void client_rt_wake(struct session_rt *rt)
{
        host_client_rt_wake(stream(rt));
}

static bool client_rt_hold(struct session_rt *rt)
{
        return host_client_rt_hold(stream(rt));
}

static uint64_t client_rt_held_id(const struct session_rt *rt)
{
        return host_client_rt_held_id(const_stream(rt));
}

static void client_rt_release(struct session_rt *rt, uint64_t id)
{
        host_client_rt_release(stream(rt), id);
}

static bool client_rt_wait_released(struct session_rt *rt, uint32_t timeout_ms)
{
        return host_client_rt_wait_released(stream(rt), timeout_ms);
}

static uint64_t client_rt_nr_lost(const struct session_rt *rt)
{
        return host_client_rt_nr_lost(const_stream(rt));
}

static int client_rt_state(struct session_rt *rt, struct session_rt_state *out, uint64_t *seq)
{
        return host_client_rt_state(stream(rt), out, seq);
}

static const char *client_rt_error(const struct session_rt *rt)
{
        return host_client_rt_error(const_stream(rt));
}

static void client_rt_detach(struct session_rt *rt)
{
        host_client_rt_detach(stream(rt));
}

const struct session_ops host_client_ops = {
        .start = client_start,
        .control = host_client_control,
        .set_info = client_set_info,
        .query_info = client_query_info,
        .lbr = client_lbr,
        .query_all = host_client_query_all,
        .bind = host_client_bind,
        .keep_window = host_client_keep_window,
        .save_window = host_client_save_window,
        .rt_header = host_client_rt_header,
        .rt_attach = client_rt_attach,
        .rt_next = client_rt_next,
        .rt_wake = client_rt_wake,
        .rt_hold = client_rt_hold,
        .rt_held_id = client_rt_held_id,
        .rt_release = client_rt_release,
        .rt_wait_released = client_rt_wait_released,
        .rt_nr_lost = client_rt_nr_lost,
        .rt_state = client_rt_state,
        .rt_error = client_rt_error,
        .rt_detach = client_rt_detach,
};
