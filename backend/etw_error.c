/* SPDX-License-Identifier: MIT */
/* etw_error.c: the one place where errno values become Win32 ERROR_* codes, and the last error. */
#include "etw_error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

static _Thread_local DWORD last_error;
static _Thread_local char last_error_text[512];

DWORD WINAPI GetLastError(void)
{
        return last_error;
}

VOID WINAPI SetLastError(DWORD dwErrCode)
{
        last_error = dwErrCode;
        last_error_text[0] = '\0';
}

const char *etw_last_error_text(void)
{
        return last_error_text;
}

void etw_set_error(DWORD code, const char *fmt, ...)
{
        last_error = code;
        last_error_text[0] = '\0';
        if (fmt) {
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(last_error_text, sizeof(last_error_text), fmt, ap);
                va_end(ap);
        }
}

DWORD etw_error_from_errno(int neg_errno)
{
        switch (-neg_errno) {
        case 0: return ERROR_SUCCESS;
        case ENOENT: return ERROR_FILE_NOT_FOUND;
        case ENOTDIR: return ERROR_PATH_NOT_FOUND;
        case EACCES:
        case EPERM: return ERROR_ACCESS_DENIED;
        case EBADF: return ERROR_INVALID_HANDLE;
        case ENOMEM: return ERROR_NOT_ENOUGH_MEMORY;
        case EINVAL: return ERROR_INVALID_PARAMETER;
        case EBADMSG: return ERROR_FILE_CORRUPT;
        case EEXIST: return ERROR_ALREADY_EXISTS;
        case ENOSPC: return ERROR_DISK_FULL;
        case EIO: return ERROR_READ_FAULT;
        case EOPNOTSUPP: return ERROR_NOT_SUPPORTED;
        case ENAMETOOLONG: return ERROR_BAD_PATHNAME;
        case EBUSY: return ERROR_BUSY;
        case ECANCELED: return ERROR_CANCELLED;
        case ETIMEDOUT: return ERROR_TIMEOUT;
        case ESRCH: return ERROR_WMI_INSTANCE_NOT_FOUND;
        case E2BIG: return ERROR_BAD_LENGTH;
        case EISDIR: return ERROR_ACCESS_DENIED;
        default: return ERROR_INVALID_FUNCTION;
        }
}
