/* SPDX-License-Identifier: MIT */
/* etw_provider.h: kernel hook groups to provider GUIDs (ETL-FORMAT.md 2.9). */
#ifndef ETWTOP_ETW_PROVIDER_H
#define ETWTOP_ETW_PROVIDER_H

#include <stdint.h>

#include "etw/evntrace.h"

/* The provider GUID consumers see for a kernel hook id (group << 8 | type), with the Image load
   remap of 0x030A; NULL for a group with no known GUID. */
const GUID *etw_provider_of_hook(uint16_t hook_id);

/* The hook id of an event of a kernel group by its GUID and Type, or -1 for a GUID of no kernel
   group: etw_provider_of_hook's inverse, so that a hook survives the trip through a
   CLASSIC_EVENT_ID (the image load, 0x030A, is ImageLoadGuid's Type 10, which is 0x030A again,
   not 0x140A). The one mapping of the API and the session core. */
int etw_hook_of_provider(const GUID *guid, uint8_t type);

#endif
