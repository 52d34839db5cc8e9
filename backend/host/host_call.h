/* SPDX-License-Identifier: MIT */
/* host_call.h (internal to backend/host): one request from a client to the session host, as
   host_client.c's API functions send them: the connection (the host checked to run as the
   caller; one kept for the short requests, host_proto.h), the request, its reply, and what a
   request that got none returns. */
#ifndef ETWTOP_HOST_CALL_H
#define ETWTOP_HOST_CALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host_proto.h"

/* A reply and the message it borrows from. */
struct call {
        uint8_t *msg; /* owned */
        struct host_reply rp;
};

void host_call_free(struct call *c);

/* A connection to the host of dir, which is checked to run as the caller. The fd, or -ENOENT
   (no socket), -ECONNREFUSED (a socket nothing serves: the host is gone), -EACCES or -errno;
   why says which. */
int host_connect(const char *dir, char *why, size_t why_size);

/* Sends rq to the host and reads its reply into *c (host_call.c says more). */
int host_call(const struct host_request *rq, bool may_start, struct call *c, char *why,
              size_t why_size);

/* The Win32 code of a request that did not get a reply, with the last error set: what names
   the call; a missing host means no such session (the sessions ended with it). */
ULONG host_no_reply(const char *what, int rc, const char *why);

/* The reply's code and message become the caller's result and last error. */
ULONG host_take_reply(const struct call *c);

#endif
