/* SPDX-License-Identifier: MIT */
/* host_ext.c: owns etwtop's API additions for the session host (etw/etwtop_ext.h): running the
   host in the calling process (etwtop --host), and binding a session to its starter's life. */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <string.h>

#include "etw/etwtop_ext.h"
#include "etw_error.h"
#include "host.h"
#include "session_api.h"

ULONG etw_host_run(ULONG Flags)
{
        if (Flags & ~(ULONG)ETW_HOST_PERSISTENT) {
                etw_set_error(ERROR_INVALID_PARAMETER, "etw_host_run: unknown flags 0x%x",
                              (unsigned)Flags);
                return ERROR_INVALID_PARAMETER;
        }
        char dir[PATH_MAX], why[1024];
        int rc = host_client_dir(dir, sizeof(dir), true, why, sizeof(why));
        if (rc == 0)
                etw_session_ops_become_host();
        if (rc == 0)
                rc = host_serve(dir, -1, (Flags & ETW_HOST_PERSISTENT) ? HOST_RUN_PERSISTENT : 0,
                                why, sizeof(why));
        if (rc < 0) {
                DWORD code = rc == -EEXIST ? ERROR_ALREADY_EXISTS : etw_error_from_errno(rc);
                etw_set_error(code, "etw_host_run: %s", why);
                return code;
        }
        etw_set_error(ERROR_SUCCESS, NULL);
        return ERROR_SUCCESS;
}

ULONG etw_host_prestart(void)
{
        char why[1024];
        int rc = host_client_prestart(why, sizeof(why));
        if (rc < 0) {
                DWORD code = etw_error_from_errno(rc);
                etw_set_error(code, "etw_host_prestart: %s", why);
                return code;
        }
        etw_set_error(ERROR_SUCCESS, NULL);
        return ERROR_SUCCESS;
}

ULONG etw_bind_session(CONTROLTRACE_ID TraceId)
{
        if (!TraceId) {
                etw_set_error(ERROR_INVALID_PARAMETER, "etw_bind_session: TraceId is 0");
                return ERROR_INVALID_PARAMETER;
        }
        return etw_session_ops()->bind(TraceId);
}
