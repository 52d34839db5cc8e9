/* SPDX-License-Identifier: MIT */
/* evntcons.h: the consumer-side event record (EVENT_RECORD, EVENT_HEADER and extended items). */
#ifndef ETW_EVNTCONS_H
#define ETW_EVNTCONS_H

#include "evntprov.h"

/* EVENT_HEADER.Flags */
#define EVENT_HEADER_FLAG_EXTENDED_INFO   0x0001
#define EVENT_HEADER_FLAG_PRIVATE_SESSION 0x0002
#define EVENT_HEADER_FLAG_STRING_ONLY     0x0004
#define EVENT_HEADER_FLAG_TRACE_MESSAGE   0x0008
#define EVENT_HEADER_FLAG_NO_CPUTIME      0x0010
#define EVENT_HEADER_FLAG_32_BIT_HEADER   0x0020
#define EVENT_HEADER_FLAG_64_BIT_HEADER   0x0040
#define EVENT_HEADER_FLAG_DECODE_GUID     0x0080
#define EVENT_HEADER_FLAG_CLASSIC_HEADER  0x0100
#define EVENT_HEADER_FLAG_PROCESSOR_INDEX 0x0200

/* EVENT_HEADER.EventProperty */
#define EVENT_HEADER_PROPERTY_XML             0x0001
#define EVENT_HEADER_PROPERTY_FORWARDED_XML   0x0002
#define EVENT_HEADER_PROPERTY_LEGACY_EVENTLOG 0x0004
#define EVENT_HEADER_PROPERTY_RELOGGABLE      0x0008

/* EVENT_HEADER_EXTENDED_DATA_ITEM.ExtType */
#define EVENT_HEADER_EXT_TYPE_RELATED_ACTIVITYID 0x0001
#define EVENT_HEADER_EXT_TYPE_SID                0x0002
#define EVENT_HEADER_EXT_TYPE_TS_ID              0x0003
#define EVENT_HEADER_EXT_TYPE_INSTANCE_INFO      0x0004
#define EVENT_HEADER_EXT_TYPE_STACK_TRACE32      0x0005
#define EVENT_HEADER_EXT_TYPE_STACK_TRACE64      0x0006
#define EVENT_HEADER_EXT_TYPE_PEBS_INDEX         0x0007
#define EVENT_HEADER_EXT_TYPE_PMC_COUNTERS       0x0008
#define EVENT_HEADER_EXT_TYPE_PSM_KEY            0x0009
#define EVENT_HEADER_EXT_TYPE_EVENT_KEY          0x000A
#define EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL    0x000B
#define EVENT_HEADER_EXT_TYPE_PROV_TRAITS        0x000C
#define EVENT_HEADER_EXT_TYPE_PROCESS_START_KEY  0x000D
#define EVENT_HEADER_EXT_TYPE_CONTROL_GUID       0x000E
#define EVENT_HEADER_EXT_TYPE_QPC_DELTA          0x000F
#define EVENT_HEADER_EXT_TYPE_CONTAINER_ID       0x0010
#define EVENT_HEADER_EXT_TYPE_STACK_KEY32        0x0011
#define EVENT_HEADER_EXT_TYPE_STACK_KEY64        0x0012
#define EVENT_HEADER_EXT_TYPE_MAX                0x0013

/* EVENT_TRACE_LOGFILE.ProcessTraceMode */
#define PROCESS_TRACE_MODE_REAL_TIME     0x00000100
#define PROCESS_TRACE_MODE_RAW_TIMESTAMP 0x00001000
#define PROCESS_TRACE_MODE_EVENT_RECORD  0x10000000

typedef struct _EVENT_HEADER {
        USHORT Size;
        USHORT HeaderType;
        USHORT Flags;
        USHORT EventProperty;
        ULONG ThreadId;
        ULONG ProcessId;
        LARGE_INTEGER TimeStamp;
        GUID ProviderId;
        EVENT_DESCRIPTOR EventDescriptor;
        union {
                struct {
                        ULONG KernelTime;
                        ULONG UserTime;
                };
                ULONG64 ProcessorTime;
        };
        GUID ActivityId;
} EVENT_HEADER, *PEVENT_HEADER;
_Static_assert(sizeof(EVENT_HEADER) == 0x50, "EVENT_HEADER is 0x50 bytes");
_Static_assert(offsetof(EVENT_HEADER, TimeStamp) == 0x10, "EVENT_HEADER.TimeStamp");
_Static_assert(offsetof(EVENT_HEADER, ProviderId) == 0x18, "EVENT_HEADER.ProviderId");
_Static_assert(offsetof(EVENT_HEADER, EventDescriptor) == 0x28, "EVENT_HEADER.EventDescriptor");
_Static_assert(offsetof(EVENT_HEADER, ActivityId) == 0x40, "EVENT_HEADER.ActivityId");

typedef struct _ETW_BUFFER_CONTEXT {
        union {
                struct {
                        UCHAR ProcessorNumber;
                        UCHAR Alignment;
                };
                USHORT ProcessorIndex;
        };
        USHORT LoggerId;
} ETW_BUFFER_CONTEXT, *PETW_BUFFER_CONTEXT;
_Static_assert(sizeof(ETW_BUFFER_CONTEXT) == 4, "ETW_BUFFER_CONTEXT is 4 bytes");

typedef struct _EVENT_HEADER_EXTENDED_DATA_ITEM {
        USHORT Reserved1;
        USHORT ExtType;
        struct {
                USHORT Linkage : 1;
                USHORT Reserved2 : 15;
        };
        USHORT DataSize;
        ULONGLONG DataPtr;
} EVENT_HEADER_EXTENDED_DATA_ITEM, *PEVENT_HEADER_EXTENDED_DATA_ITEM;
_Static_assert(sizeof(EVENT_HEADER_EXTENDED_DATA_ITEM) == 16, "EVENT_HEADER_EXTENDED_DATA_ITEM");
_Static_assert(offsetof(EVENT_HEADER_EXTENDED_DATA_ITEM, DataSize) == 6, "ext item DataSize");
_Static_assert(offsetof(EVENT_HEADER_EXTENDED_DATA_ITEM, DataPtr) == 8, "ext item DataPtr");

typedef struct _EVENT_EXTENDED_ITEM_STACK_TRACE64 {
        ULONG64 MatchId;
        ULONG64 Address[1];
} EVENT_EXTENDED_ITEM_STACK_TRACE64, *PEVENT_EXTENDED_ITEM_STACK_TRACE64;

typedef struct _EVENT_EXTENDED_ITEM_STACK_TRACE32 {
        ULONG64 MatchId;
        ULONG Address[1];
} EVENT_EXTENDED_ITEM_STACK_TRACE32, *PEVENT_EXTENDED_ITEM_STACK_TRACE32;

typedef struct _EVENT_RECORD {
        EVENT_HEADER EventHeader;
        ETW_BUFFER_CONTEXT BufferContext;
        USHORT ExtendedDataCount;
        USHORT UserDataLength;
        PEVENT_HEADER_EXTENDED_DATA_ITEM ExtendedData;
        PVOID UserData;
        PVOID UserContext;
} EVENT_RECORD, *PEVENT_RECORD;
typedef const EVENT_RECORD *PCEVENT_RECORD;
_Static_assert(sizeof(EVENT_RECORD) == 0x70, "EVENT_RECORD is 0x70 bytes on x64");
_Static_assert(offsetof(EVENT_RECORD, BufferContext) == 0x50, "EVENT_RECORD.BufferContext");
_Static_assert(offsetof(EVENT_RECORD, ExtendedData) == 0x58, "EVENT_RECORD.ExtendedData");
_Static_assert(offsetof(EVENT_RECORD, UserData) == 0x60, "EVENT_RECORD.UserData");
_Static_assert(offsetof(EVENT_RECORD, UserContext) == 0x68, "EVENT_RECORD.UserContext");

#endif
