/* SPDX-License-Identifier: MIT */
/* wintypes.h: the Windows base types the ETW API uses, with their x64 (LLP64) sizes on Linux. */
#ifndef ETW_WINTYPES_H
#define ETW_WINTYPES_H

#include <stddef.h>
#include <stdint.h>

#define WINAPI
#define WMIAPI
#define VOID void

typedef uint8_t UCHAR, BYTE, BOOLEAN;
typedef char CHAR;
typedef int8_t SCHAR;
typedef uint16_t USHORT, WORD, WCHAR;
typedef int16_t SHORT;
typedef uint32_t ULONG, DWORD, UINT;
typedef int32_t LONG, BOOL, INT;
typedef int64_t LONGLONG, LONG64;
typedef uint64_t ULONGLONG, ULONG64, DWORD64, ULONG_PTR, SIZE_T;
typedef void *PVOID, *HANDLE;
typedef ULONG *PULONG;
typedef CHAR *LPSTR;
typedef const CHAR *LPCSTR;
typedef WCHAR *LPWSTR;
typedef const WCHAR *LPCWSTR;

#ifndef TRUE
#define TRUE  1
#define FALSE 0
#endif

#define INVALID_HANDLE_VALUE ((HANDLE)(intptr_t)-1)

typedef struct _GUID {
        ULONG Data1;
        USHORT Data2;
        USHORT Data3;
        UCHAR Data4[8];
} GUID, *LPGUID, *PGUID;
typedef const GUID *LPCGUID;
_Static_assert(sizeof(GUID) == 16, "GUID is 16 bytes");

typedef union _LARGE_INTEGER {
        struct {
                ULONG LowPart;
                LONG HighPart;
        };
        LONGLONG QuadPart;
} LARGE_INTEGER, *PLARGE_INTEGER;
_Static_assert(sizeof(LARGE_INTEGER) == 8, "LARGE_INTEGER is 8 bytes");

typedef struct _FILETIME {
        DWORD dwLowDateTime;
        DWORD dwHighDateTime;
} FILETIME, *PFILETIME, *LPFILETIME;
_Static_assert(sizeof(FILETIME) == 8, "FILETIME is 8 bytes");

typedef struct _SYSTEMTIME {
        WORD wYear;
        WORD wMonth;
        WORD wDayOfWeek;
        WORD wDay;
        WORD wHour;
        WORD wMinute;
        WORD wSecond;
        WORD wMilliseconds;
} SYSTEMTIME, *PSYSTEMTIME;
_Static_assert(sizeof(SYSTEMTIME) == 16, "SYSTEMTIME is 16 bytes");

typedef struct _TIME_ZONE_INFORMATION {
        LONG Bias;
        WCHAR StandardName[32];
        SYSTEMTIME StandardDate;
        LONG StandardBias;
        WCHAR DaylightName[32];
        SYSTEMTIME DaylightDate;
        LONG DaylightBias;
} TIME_ZONE_INFORMATION, *PTIME_ZONE_INFORMATION;
_Static_assert(sizeof(TIME_ZONE_INFORMATION) == 172, "TIME_ZONE_INFORMATION is 172 bytes");

/* Compares two GUIDs for equality, as IsEqualGUID does. */
static inline int IsEqualGUID(const GUID *a, const GUID *b)
{
        const UCHAR *pa = (const UCHAR *)a, *pb = (const UCHAR *)b;
        for (int i = 0; i < 16; i++)
                if (pa[i] != pb[i])
                        return 0;
        return 1;
}

#endif
