/* SPDX-License-Identifier: MIT */
/* fuzz_tracelogging.c: libFuzzer target for TraceLogging events' decoding (backend/decode/
 * tracelogging.c): a schema (the EVENT_SCHEMA_TL item) and payloads decoded by it, all from the
 * input.
 * Input: u8 flags (bit 0: a PROV_TRAITS item, bit 1: 32-bit pointers), u16 schema size, the
 * schema, then payloads, each u16 size and its bytes, decoded one after another with the same
 * schema (its description made at the first, taken from the cache after). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kdecoder.h"
#include "kevent.h"

static const GUID fuzz_provider = {0x5f9b1c02, 0x3a11, 0x4c3e, {9, 8, 7, 6, 5, 4, 3, 2}};
static volatile size_t sink_bytes;

static void sink(void *ctx, const struct kevent *ev)
{
        (void)ctx;
        if (ev->name)
                sink_bytes += strlen(ev->name);
        if (ev->type != KEV_FIELDS)
                return;
        const struct kevent_field *list;
        uint32_t nr = kevent_fields(ev, &list);
        if (nr > KEV_MAX_FIELDS)
                abort();
        for (uint32_t i = 0; i < nr; i++)
                sink_bytes += strlen(list[i].name) + strlen(list[i].s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const uint8_t traits[] = {14,  0,   'C', 'o', 'n', 't', 'o',
                                         's', 'o', '.', 'A', 'p', 'p', 0};

        if (size < 3)
                return 0;
        uint8_t flags = data[0];
        size_t n = (size_t)data[1] | (size_t)data[2] << 8;
        size_t off = 3;
        if (n > size - off)
                n = size - off;
        /* exact-size heap copies: ASan flags any read past the schema or a payload */
        uint8_t *schema = malloc(n ? n : 1);
        struct kdecoder *d = kdecoder_new(true);
        if (!schema || !d) {
                free(schema);
                kdecoder_free(d);
                return 0;
        }
        memcpy(schema, data + off, n);
        off += n;
        for (int k = 0; k < 16 && size - off >= 2; k++) {
                size_t len = (size_t)data[off] | (size_t)data[off + 1] << 8;
                off += 2;
                if (len > size - off)
                        len = size - off;
                uint8_t *payload = malloc(len ? len : 1);
                if (!payload)
                        break;
                memcpy(payload, data + off, len);
                off += len;

                EVENT_RECORD r;
                EVENT_HEADER_EXTENDED_DATA_ITEM x[2];
                memset(&r, 0, sizeof(r));
                memset(x, 0, sizeof(x));
                r.EventHeader.Flags = EVENT_HEADER_FLAG_EXTENDED_INFO |
                                      ((flags & 2) ? EVENT_HEADER_FLAG_32_BIT_HEADER
                                                   : EVENT_HEADER_FLAG_64_BIT_HEADER);
                r.EventHeader.ProviderId = fuzz_provider;
                r.EventHeader.ProcessId = 1;
                r.EventHeader.ThreadId = 2;
                x[0].ExtType = EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL;
                x[0].DataSize = (USHORT)n;
                x[0].DataPtr = (ULONGLONG)(uintptr_t)schema;
                x[1].ExtType = EVENT_HEADER_EXT_TYPE_PROV_TRAITS;
                x[1].DataSize = sizeof(traits);
                x[1].DataPtr = (ULONGLONG)(uintptr_t)traits;
                r.ExtendedDataCount = (flags & 1) ? 2 : 1;
                r.ExtendedData = x;
                r.UserData = payload;
                r.UserDataLength = (USHORT)len;
                kdecoder_decode(d, &r, sink, NULL);
                free(payload);
        }
        kdecoder_free(d);
        free(schema);
        return 0;
}
