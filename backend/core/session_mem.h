/* SPDX-License-Identifier: MIT */
/* session_mem.h: the memory caps of the sessions of one process (the session host, or a program
   that runs its sessions itself): what one session may hold in buffers, and what all of them
   may hold together in real-time queues and kept windows (doc/etwtop.1, SESSIONS). */
#ifndef ETWTOP_SESSION_MEM_H
#define ETWTOP_SESSION_MEM_H

#include <stdbool.h>
#include <stddef.h>

/* One session's buffers in memory: MaximumBuffers x BufferSize (a consumer's queue, the
   buffering ring, the backlog) and a kept window each hold at most this. */
#define SESSION_MAX_BUFFER_BYTES ((size_t)1 << 30)

/* What the real-time queues and kept windows of every session may hold together: the smaller of
   4 GiB and a quarter of the machine's memory, or ETWTOP_HOST_MAX_MB (read once). */
size_t session_mem_max(void);

/* Takes n bytes of that budget: false (nothing taken) when they do not fit. */
bool session_mem_take(size_t n);

/* Gives back n bytes taken. */
void session_mem_give(size_t n);

#endif
