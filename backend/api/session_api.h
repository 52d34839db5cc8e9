/* SPDX-License-Identifier: MIT */
/* session_api.h: the API edge's choice of session operations (session_ops.h) for this process:
   the session host's client, or the session table here (ETWTOP_NO_HOST, or the host itself). */
#ifndef ETWTOP_SESSION_API_H
#define ETWTOP_SESSION_API_H

#include "session_ops.h"

/* The operations the API functions of this process call, chosen at the first call: the host's
   client unless host_is_client() says otherwise. Never NULL. */
const struct session_ops *etw_session_ops(void);

/* This process serves the host from now on (etw_host_run): its API functions use its own
   session table. */
void etw_session_ops_become_host(void);

/* A real-time handle's session state while its ProcessTrace runs (ops' rt_state, under the
   consumer's handle lock): etw_realtime_get_session_state's codes (consumer.c). */
ULONG consumer_rt_state(PROCESSTRACE_HANDLE h, struct session_rt_state *st, uint64_t *seq);

#endif
