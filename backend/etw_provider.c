/* SPDX-License-Identifier: MIT */
/* etw_provider.c: owns the table from kernel hook groups to the provider GUIDs consumers see. */
#include "etw_provider.h"

#include "etw/ntwmi.h"

static int etw_group_of_provider(const GUID *guid);

/* ETL-FORMAT.md 2.9, by group */
static const GUID *const group_guids[] = {
        &EventTraceGuid,
        &DiskIoGuid,
        &PageFaultGuid,
        &ProcessGuid,
        &FileIoGuid,
        &ThreadGuid,
        &TcpIpGuid,
        &JobGuid,
        &UdpIpGuid,
        &RegistryGuid,
        &DbgPrintGuid,
        &EventTraceConfigGuid,
        &LastBranchRecordGuid,
        &WnfGuid,
        &PoolGuid,
        &PerfInfoGuid,
        &HeapGuid,
        &ObjectGuid,
        &PowerGuid,
        &ModBoundGuid,
        &ImageLoadGuid,
        &DpcGuid,
        &CcGuid,
        &CritSecGuid,
        &StackWalkGuid,
        &UmsGuid,
        &AlpcGuid,
        &SplitIoGuid,
        &ThreadPoolGuid,
        &HypervisorGuid,
        &HypervisorXGuid,
};

const GUID *etw_provider_of_hook(uint16_t hook_id)
{
        if (hook_id == WMI_LOG_TYPE_PROCESS_LOAD_IMAGE)
                return &ImageLoadGuid;
        uint32_t group = hook_id >> 8;
        if (group >= sizeof(group_guids) / sizeof(group_guids[0]))
                return NULL;
        return group_guids[group];
}

int etw_hook_of_provider(const GUID *guid, uint8_t type)
{
        int group = etw_group_of_provider(guid);

        if (group < 0)
                return -1;
        if (IsEqualGUID(guid, &ImageLoadGuid) && type == (WMI_LOG_TYPE_PROCESS_LOAD_IMAGE & 0xFF))
                return WMI_LOG_TYPE_PROCESS_LOAD_IMAGE;
        return group << 8 | type;
}

/* The kernel group (hook id high byte) of a provider GUID, or -1. */
static int etw_group_of_provider(const GUID *guid)
{
        for (int i = 0; i < (int)(sizeof(group_guids) / sizeof(group_guids[0])); i++)
                if (IsEqualGUID(guid, group_guids[i]))
                        return i;
        return -1;
}
