/* SPDX-License-Identifier: MIT */
/* evntprov.h: EVENT_DESCRIPTOR, the identity of a manifest-based event. */
#ifndef ETW_EVNTPROV_H
#define ETW_EVNTPROV_H

#include "wintypes.h"

typedef struct _EVENT_DESCRIPTOR {
        USHORT Id;
        UCHAR Version;
        UCHAR Channel;
        UCHAR Level;
        UCHAR Opcode;
        USHORT Task;
        ULONGLONG Keyword;
} EVENT_DESCRIPTOR, *PEVENT_DESCRIPTOR;
typedef const EVENT_DESCRIPTOR *PCEVENT_DESCRIPTOR;
_Static_assert(sizeof(EVENT_DESCRIPTOR) == 16, "EVENT_DESCRIPTOR is 16 bytes");
_Static_assert(offsetof(EVENT_DESCRIPTOR, Opcode) == 5, "EVENT_DESCRIPTOR.Opcode");
_Static_assert(offsetof(EVENT_DESCRIPTOR, Keyword) == 8, "EVENT_DESCRIPTOR.Keyword");

#endif
