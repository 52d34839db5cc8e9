/* SPDX-License-Identifier: MIT */
/* etw_error.h: the API edge's error state: the thread's Win32 last error, its message, errno
 * mapping. */
#ifndef ETWTOP_ETW_ERROR_H
#define ETWTOP_ETW_ERROR_H

#include "etw/evntrace.h"

/* Sets the calling thread's last error and its human message (fmt may be NULL). */
void etw_set_error(DWORD code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The Win32 code for a negative errno from inside the backend. */
DWORD etw_error_from_errno(int neg_errno);

#endif
