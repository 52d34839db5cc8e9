/* SPDX-License-Identifier: MIT */
/* kprov.c: owns the kernel providers the decoder knows: their GUIDs,
   names and the names of their events (ETL-FORMAT.md 2.9, 3.10). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kdecoder_int.h"

static const struct {
        const GUID *guid; /* borrowed: backend/etw_guids.c */
        const char *name;
} kprov_table[KP_MAX] = {
        [KP_EVENT_TRACE] = {&EventTraceGuid, "EventTrace"},
        [KP_DISK_IO] = {&DiskIoGuid, "DiskIo"},
        [KP_PAGE_FAULT] = {&PageFaultGuid, "PageFault"},
        [KP_PROCESS] = {&ProcessGuid, "Process"},
        [KP_FILE_IO] = {&FileIoGuid, "FileIo"},
        [KP_THREAD] = {&ThreadGuid, "Thread"},
        [KP_TCPIP] = {&TcpIpGuid, "TcpIp"},
        [KP_JOB] = {&JobGuid, "Job"},
        [KP_UDPIP] = {&UdpIpGuid, "UdpIp"},
        [KP_REGISTRY] = {&RegistryGuid, "Registry"},
        [KP_DBGPRINT] = {&DbgPrintGuid, "DbgPrint"},
        [KP_CONFIG] = {&EventTraceConfigGuid, "SystemConfig"},
        [KP_LBR] = {&LastBranchRecordGuid, "LastBranchRecord"},
        [KP_WNF] = {&WnfGuid, "Wnf"},
        [KP_POOL] = {&PoolGuid, "Pool"},
        [KP_PERFINFO] = {&PerfInfoGuid, "PerfInfo"},
        [KP_HEAP] = {&HeapGuid, "Heap"},
        [KP_OBJECT] = {&ObjectGuid, "Object"},
        [KP_POWER] = {&PowerGuid, "Power"},
        [KP_MODBOUND] = {&ModBoundGuid, "ModBound"},
        [KP_IMAGE] = {&ImageLoadGuid, "Image"},
        [KP_DPC] = {&DpcGuid, "Dpc"},
        [KP_CC] = {&CcGuid, "Cc"},
        [KP_CRITSEC] = {&CritSecGuid, "CritSec"},
        [KP_STACKWALK] = {&StackWalkGuid, "StackWalk"},
        [KP_UMS] = {&UmsGuid, "Ums"},
        [KP_ALPC] = {&AlpcGuid, "ALPC"},
        [KP_SPLITIO] = {&SplitIoGuid, "SplitIo"},
        [KP_THREADPOOL] = {&ThreadPoolGuid, "ThreadPool"},
        [KP_HYPERVISOR] = {&HypervisorGuid, "Hypervisor"},
        [KP_HYPERVISORX] = {&HypervisorXGuid, "HypervisorX"},
        [KP_KTC] = {&KernelTraceControlImageIdGuid, "KernelTraceControl"},
        [KP_SYSCONFIGEX] = {&SysConfigExGuid, "SysConfigEx"},
        [KP_WINSAT] = {&WinSatGuid, "WinSat"},
        [KP_METADATA] = {&KernelTraceControlMetaDataGuid, "MetaData"},
        [KP_ETWTOP] = {&etwtop_provider_guid, "etwtop"},
};

enum kprov kprov_lookup(const GUID *g)
{
        enum kprov k;

        switch (g->Data1) {
        case 0x68fdd900: k = KP_EVENT_TRACE; break;
        case 0x3d6fa8d4: k = KP_DISK_IO; break;
        case 0x3d6fa8d3: k = KP_PAGE_FAULT; break;
        case 0x3d6fa8d0: k = KP_PROCESS; break;
        case 0x90cbdc39: k = KP_FILE_IO; break;
        case 0x3d6fa8d1: k = KP_THREAD; break;
        case 0x9a280ac0: k = KP_TCPIP; break;
        case 0x3282fc76: k = KP_JOB; break;
        case 0xbf3a50c5: k = KP_UDPIP; break;
        case 0xae53722e: k = KP_REGISTRY; break;
        case 0x13976d09: k = KP_DBGPRINT; break;
        case 0x01853a65: k = KP_CONFIG; break;
        case 0x99134383: k = KP_LBR; break;
        case 0x42695762: k = KP_WNF; break;
        case 0x0268a8b6: k = KP_POOL; break;
        case 0xce1dbfb4: k = KP_PERFINFO; break;
        case 0x222962ab: k = KP_HEAP; break;
        case 0x89497f50: k = KP_OBJECT; break;
        case 0xe43445e0: k = KP_POWER; break;
        case 0xa9152f00: k = KP_MODBOUND; break;
        case 0x2cb15d1d: k = KP_IMAGE; break;
        case 0xb2d14872: k = KP_DPC; break;
        case 0x7687a439: k = KP_CC; break;
        case 0x3ac66736: k = KP_CRITSEC; break;
        case 0xdef2fe46: k = KP_STACKWALK; break;
        case 0x9aec974b: k = KP_UMS; break;
        case 0x45d8cccd: k = KP_ALPC; break;
        case 0xd837ca92: k = KP_SPLITIO; break;
        case 0xc861d0e2: k = KP_THREADPOOL; break;
        case 0x7f2a405c: k = KP_HYPERVISOR; break;
        case 0x2ce9a149: k = KP_HYPERVISORX; break;
        case 0xb3e675d7: k = KP_KTC; break;
        case 0x9b79ee91: k = KP_SYSCONFIGEX; break;
        case 0xed54dff8: k = KP_WINSAT; break;
        case 0xbbccf6c1: k = KP_METADATA; break;
        case 0xb26bff8a: k = KP_ETWTOP; break;
        default: return KP_UNKNOWN;
        }
        return memcmp(g, kprov_table[k].guid, sizeof(GUID)) == 0 ? k : KP_UNKNOWN;
}

const char *kprov_name(enum kprov k)
{
        return kprov_table[k].name;
}

const char *kevent_provider_name(const GUID *guid)
{
        if (!guid)
                return NULL;
        enum kprov k = kprov_lookup(guid);
        return k == KP_UNKNOWN ? NULL : kprov_table[k].name;
}

const char *kprov_opcode_name(enum kprov k, uint8_t op)
{
        switch (k) {
        case KP_EVENT_TRACE:
                switch (op) {
                case 0: return "EventTrace/Header";
                case 5: return "EventTrace/Extension";
                case 8: return "EventTrace/RundownComplete";
                case 32: return "EventTrace/EndExtension";
                case 64: return "EventTrace/DbgID_RSDS";
                case 66: return "EventTrace/BuildInfo";
                case 80: return "EventTrace/PartitionInfo";
                }
                break;
        case KP_PROCESS:
                switch (op) {
                case 1: return "Process/Start";
                case 2: return "Process/End";
                case 3: return "Process/DCStart";
                case 4: return "Process/DCEnd";
                case 10: return "Image/Load"; /* hook 0x030A when not remapped */
                case 39: return "Process/Defunct";
                }
                break;
        case KP_THREAD:
                switch (op) {
                case 1: return "Thread/Start";
                case 2: return "Thread/End";
                case 3: return "Thread/DCStart";
                case 4: return "Thread/DCEnd";
                case 36: return "Thread/CSwitch";
                case 50: return "Thread/ReadyThread";
                case 72: return "Thread/SetName";
                }
                break;
        case KP_IMAGE:
                switch (op) {
                case 2: return "Image/Unload";
                case 3: return "Image/DCStart";
                case 4: return "Image/DCEnd";
                case 10: return "Image/Load";
                case 33: return "Image/KernelBase";
                case 34: return "Image/HypercallPage";
                }
                break;
        case KP_PERFINFO:
                switch (op) {
                case 34: return "PerfInfo/Mark";
                case 36: return "PerfInfo/AsyncMark";
                case 46: return "PerfInfo/SampledProfile";
                case 47: return "PerfInfo/PMCInterrupt";
                case 48: return "PerfInfo/PMCCounterConfig";
                case 49: return "PerfInfo/PMCCounterCorruption";
                case 51: return "PerfInfo/SysClEnter";
                case 52: return "PerfInfo/SysClExit";
                case 55: return "PerfInfo/BatchedSampledProfile";
                case 66: return "PerfInfo/ThreadedDPC";
                case 67: return "PerfInfo/ISR";
                case 68: return "PerfInfo/DPC";
                case 69: return "PerfInfo/TimerDPC";
                case 72: return "PerfInfo/SetInterval";
                case 73: return "PerfInfo/CollectionStart";
                case 74: return "PerfInfo/CollectionEnd";
                }
                break;
        case KP_STACKWALK:
                switch (op) {
                case 32: return "StackWalk/Stack";
                case 34: return "StackWalk/KeyCreate";
                case 35: return "StackWalk/KeyDelete";
                case 36: return "StackWalk/KeyRundown";
                case 37: return "StackWalk/StackKeyKernel";
                case 38: return "StackWalk/StackKeyUser";
                }
                break;
        case KP_LBR:
                if (op == EVENT_TRACE_LAST_BRANCH_EVENT_OPCODE)
                        return "LastBranchRecord/LBR";
                break;
        case KP_KTC:
                switch (op) {
                case KTC_IMAGE_ID: return "KernelTraceControl/ImageID";
                case KTC_DBGID_NONE: return "KernelTraceControl/DbgID_None";
                case KTC_DBGID_RSDS: return "KernelTraceControl/DbgID_RSDS";
                case KTC_DBGID_ILRSDS: return "KernelTraceControl/DbgID_ILRSDS";
                case KTC_DBGID_PPDB: return "KernelTraceControl/DbgPPDB";
                case KTC_DBGID_DETERM: return "KernelTraceControl/DbgDeterm";
                case KTC_FILE_VERSION: return "KernelTraceControl/FileVersion";
                }
                break;
        case KP_SYSCONFIGEX:
                switch (op) {
                case 32: return "SysConfigEx/BuildInfo";
                case 33: return "SysConfigEx/SystemPaths";
                case 34: return "SysConfigEx/UnknownVolume";
                case 35: return "SysConfigEx/VolumeMapping";
                case 36: return "SysConfigEx/NetworkInterface";
                case 37: return "SysConfigEx/OsVersion";
                }
                break;
        case KP_WINSAT:
                switch (op) {
                case 33: return "WinSat/WinSPR";
                case 35: return "WinSat/Metrics";
                case 37: return "WinSat/SystemConfig";
                }
                break;
        case KP_METADATA:
                switch (op) {
                case 32: return "MetaData/EventInfo";
                case 33: return "MetaData/EventMapInfo";
                }
                break;
        default: break;
        }
        return NULL;
}

const char *kprov_event_name(struct kdecoder *d, enum kprov k, uint8_t op)
{
        if (k != KP_UNKNOWN && d->names[k][op])
                return d->names[k][op];
        const char *name = kprov_opcode_name(k, op);
        if (name && k != KP_UNKNOWN)
                d->names[k][op] = name;

        if (name)
                return name;
        if (k == KP_UNKNOWN)
                return "";
        /* built once per (provider, opcode): formatting per event is too slow for the replay */
        char *cached = d->op_names[k][op];
        if (cached)
                return cached;
        snprintf(d->name_buf, sizeof(d->name_buf), "%s/op%u", kprov_table[k].name, (unsigned)op);
        cached = strdup(d->name_buf);
        if (!cached)
                return d->name_buf;
        d->op_names[k][op] = cached;
        return cached;
}
