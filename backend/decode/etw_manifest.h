/* SPDX-License-Identifier: MIT */
/* etw_manifest.h: an ETW instrumentation manifest (XML, as an EventSource logs it in its
 * ManifestData events) read into the trace's metadata registry. */
#ifndef ETWTOP_ETW_MANIFEST_H
#define ETWTOP_ETW_MANIFEST_H

#include <stddef.h>

#include "tdh_meta.h"

/* The ManifestData events of a trace (an EventSource's Id 0xFFFE, opcode 254: an envelope of
   format, versions, magic 0x5B, chunk count and number, then a chunk of its manifest), put
   together per provider and loaded into the registry when the last chunk comes. */
#define ETW_MANIFEST_DATA_ID     0xFFFE
#define ETW_MANIFEST_DATA_OPCODE 254

struct etw_manifests;
struct etw_manifests *etw_manifests_new(void);
void etw_manifests_free(struct etw_manifests *m);

/* Takes one ManifestData payload of provider g. Returns the event's name ("Provider/ManifestData"
   once the provider's manifest named it, else NULL); *rc: 0, or -EBADMSG for a damaged envelope,
   chunk or manifest (err says which). A manifest that cannot be read here (expat missing):
   *rc 0, err says why. m keeps what each provider's last manifest added to r, to leave the same
   text sent again unread: that holds only while r is the registry it was read into. */
const char *etw_manifests_chunk(struct etw_manifests *m, struct tdh_registry *r, const GUID *g,
                                const uint8_t *p, size_t size, int *rc, char *err, size_t err_size);

#endif
