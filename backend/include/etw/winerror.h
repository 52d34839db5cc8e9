/* SPDX-License-Identifier: MIT */
/* winerror.h: the Win32 error codes the ETW controller and consumer functions return. */
#ifndef ETW_WINERROR_H
#define ETW_WINERROR_H

#define ERROR_SUCCESS           0L
#define ERROR_INVALID_FUNCTION  1L
#define ERROR_FILE_NOT_FOUND    2L
#define ERROR_PATH_NOT_FOUND    3L
#define ERROR_ACCESS_DENIED     5L
#define ERROR_INVALID_HANDLE    6L
#define ERROR_NOT_ENOUGH_MEMORY 8L
#define ERROR_BAD_FORMAT        11L
#define ERROR_INVALID_DATA      13L
#define ERROR_OUTOFMEMORY       14L
/* The StartKernelTrace documentation (seed 004) names it so; it is ERROR_OUTOFMEMORY. */
#define ERROR_OUT_OF_MEMORY          ERROR_OUTOFMEMORY
#define ERROR_WRITE_FAULT            29L
#define ERROR_READ_FAULT             30L
#define ERROR_BAD_LENGTH             24L
#define ERROR_HANDLE_EOF             38L
#define ERROR_NOT_SUPPORTED          50L
#define ERROR_FILE_EXISTS            80L
#define ERROR_INVALID_PARAMETER      87L
#define ERROR_BROKEN_PIPE            109L
#define ERROR_DISK_FULL              112L
#define ERROR_INSUFFICIENT_BUFFER    122L
#define ERROR_INVALID_NAME           123L
#define ERROR_BAD_PATHNAME           161L
#define ERROR_BUSY                   170L
#define ERROR_ALREADY_EXISTS         183L
#define ERROR_MORE_DATA              234L
#define ERROR_NOACCESS               998L
#define ERROR_INVALID_FLAGS          1004L
#define ERROR_CANCELLED              1223L
#define ERROR_PRIVILEGE_NOT_HELD     1314L
#define ERROR_INVALID_TIME           1901L
#define ERROR_FILE_CORRUPT           1392L
#define ERROR_NO_SYSTEM_RESOURCES    1450L
#define ERROR_TIMEOUT                1460L
#define ERROR_INCORRECT_SIZE         1462L
#define ERROR_WMI_INSTANCE_NOT_FOUND 4201L
#define ERROR_WMI_ALREADY_ENABLED    4206L
#define ERROR_CTX_CLOSE_PENDING      7007L

#endif
