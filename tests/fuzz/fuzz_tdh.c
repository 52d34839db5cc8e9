/* SPDX-License-Identifier: MIT */
/* fuzz_tdh.c: libFuzzer target for the trace-carried event metadata (backend/decode/tdh_meta.c): a
 * MetaData EventInfo, an EventMapInfo and an event decoded by them, all from the input.
 * Input: u16 EventInfo size, EventInfo, u16 EventMapInfo size, EventMapInfo, the event's
 * payload (the rest); the event takes the provider, Id and version the EventInfo names. The
 * layout check that leaves the fields to be asked for gives the whole decode's answer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "etw/ntwmi.h"
#include "kdecoder.h"
#include "kevent.h"
#include "fuzz_fields_sink.h"
#include "le_bytes.h"
#include "tdh_layout.h"
#include "tdh_meta.h"

/* Decodes one record of len bytes, copied to a block of exactly that size (ASan). */
static void decode(struct kdecoder *d, const GUID *g, uint16_t id, uint8_t op, uint8_t version,
                   bool is_classic, const uint8_t *p, size_t len)
{
        EVENT_RECORD r;
        uint8_t *copy = malloc(len ? len : 1);

        if (!copy)
                return;
        memcpy(copy, p, len);
        memset(&r, 0, sizeof(r));
        r.EventHeader.Flags = EVENT_HEADER_FLAG_64_BIT_HEADER |
                              (is_classic ? EVENT_HEADER_FLAG_CLASSIC_HEADER : 0);
        r.EventHeader.ProviderId = *g;
        r.EventHeader.ProcessId = 1;
        r.EventHeader.ThreadId = 2;
        r.EventHeader.EventDescriptor.Id = id;
        r.EventHeader.EventDescriptor.Opcode = op;
        r.EventHeader.EventDescriptor.Version = version;
        r.UserData = copy;
        r.UserDataLength = (USHORT)len;
        kdecoder_decode(d, &r, fuzz_sink, NULL);
        free(copy);
}

/* The layout check (tdh_layout.c) against the whole decode (tdh_meta.c): the same answer for
   the payload, with either pointer size, or the fields left to be asked for would differ from
   the ones decoded at once. */
static void check_layout(struct kdecoder *d, const uint8_t *ei, size_t info, const uint8_t *mi,
                         size_t map, const uint8_t *p, size_t len)
{
        struct tdh_event *e = NULL;
        char err[128];

        if (tdh_event_parse(ei, info, &e, err, sizeof(err)))
                return;

        struct tdh_registry *r = tdh_registry_new();
        bool is_classic = e->decoding_source == 1;

        tdh_registry_add_event(r, e, is_classic); /* r owns e */
        if (mi)
                tdh_registry_add_map_info(r, mi, map, err, sizeof(err));
        for (unsigned psize = 4; e->steps && psize <= 8; psize += 4) {
                uint32_t nr;
                uint8_t *copy = malloc(len ? len : 1);

                if (!copy)
                        break;
                memcpy(copy, p, len);
                if ((tdh_layout_check(e, copy, len, psize) == 0) !=
                    (tdh_fill(d, e, r, copy, len, psize, &nr) == 0))
                        abort();
                free(copy);
        }
        tdh_registry_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 2)
                return 0;

        size_t info = le_get16(data);

        if (info > size - 2)
                return 0;

        const uint8_t *ei = data + 2, *rest = ei + info;
        size_t left = size - 2 - info, map = 0;
        const uint8_t *mi = NULL;

        if (left >= 2) {
                map = le_get16(rest);
                if (map > left - 2)
                        map = left - 2;
                mi = rest + 2;
                rest = mi + map;
                left -= 2 + map;
        }

        struct kdecoder *d = kdecoder_new(true);

        if (!d)
                return 0;
        decode(d, &KernelTraceControlMetaDataGuid, 0, KTC_METADATA_EVENT_INFO, 0, true, ei, info);
        if (mi)
                decode(d, &KernelTraceControlMetaDataGuid, 0, KTC_METADATA_EVENT_MAP_INFO, 0, true,
                       mi, map);
        if (info >= 48) {
                GUID g;
                bool is_classic = info >= 52 && le_get32(ei + 48) == 1; /* DecodingSourceWbem */

                memcpy(&g, ei + (is_classic ? 16 : 0), sizeof(g));
                decode(d, &g, le_get16(ei + 32), ei[37], ei[34], is_classic, rest, left);
                decode(d, &g, le_get16(ei + 32), ei[37], ei[34], is_classic, rest,
                       left / 2); /* the same event cut short */
                check_layout(d, ei, info, mi, map, rest, left);
                check_layout(d, ei, info, mi, map, rest, left / 2);
        }
        kdecoder_free(d);
        return 0;
}
