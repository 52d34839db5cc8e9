/* SPDX-License-Identifier: MIT */
/* runtime_dir.h: the session host's runtime directory: where a caller's host keeps its socket
   (and the kernel symbols' cache), and the checks that it is the caller's own private directory
   (DESIGN.md "Sessions belong to the system"). */
#ifndef ETWTOP_RUNTIME_DIR_H
#define ETWTOP_RUNTIME_DIR_H

#include <stdbool.h>
#include <stddef.h>

/* The host's socket, in the runtime directory. */
#define HOST_SOCKET_NAME "host.sock"

/* The runtime directory, checked to be the caller's own private directory (created 0700 when
   may_create): 0, -ENOENT (none), -EACCES (another user's, or open to others), -errno; why
   says which. */
int host_client_dir(char *dir, size_t size, bool may_create, char *why, size_t why_size);

#endif
