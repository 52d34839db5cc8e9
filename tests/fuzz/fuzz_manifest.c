/* SPDX-License-Identifier: MIT */
/* fuzz_manifest.c: libFuzzer target for EventSource manifests in ManifestData events
 * (backend/decode/etw_manifest.c) and the events decoded by them. Input: u16 manifest size, the
 * manifest (sent as two chunks), then the payload of events 1 to 4 of the provider
 * {11223344-5566-7788-0102-030405060708} (the corpus's manifests describe that one); then the
 * manifest sent again in one chunk (kept as read the first time) and the events again. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "etw/ntwmi.h"
#include "kdecoder.h"
#include "kevent.h"
#include "fuzz_fields_sink.h"
#include "le_bytes.h"

static const GUID fuzz_provider = {0x11223344, 0x5566, 0x7788, {1, 2, 3, 4, 5, 6, 7, 8}};
static void decode(struct kdecoder *d, uint16_t id, uint8_t op, const uint8_t *p, size_t len)
{
        EVENT_RECORD r;
        uint8_t *copy = malloc(len ? len : 1);

        if (!copy)
                return;
        memcpy(copy, p, len);
        memset(&r, 0, sizeof(r));
        r.EventHeader.Flags = EVENT_HEADER_FLAG_64_BIT_HEADER;
        r.EventHeader.ProviderId = fuzz_provider;
        r.EventHeader.EventDescriptor.Id = id;
        r.EventHeader.EventDescriptor.Opcode = op;
        r.EventHeader.EventDescriptor.Version = id == 0xFFFE ? 1 : 0;
        r.UserData = copy;
        r.UserDataLength = (USHORT)len;
        kdecoder_decode(d, &r, fuzz_sink, NULL);
        free(copy);
}

/* The manifest's bytes [from, to) as chunk nr of total, in its envelope. */
static void chunk(struct kdecoder *d, const uint8_t *m, size_t from, size_t to, uint16_t nr,
                  uint16_t total)
{
        size_t n = to - from;
        uint8_t *p = malloc(8 + n);

        if (!p)
                return;
        p[0] = 1;
        p[1] = 1;
        p[2] = 0;
        p[3] = 0x5B;
        p[4] = (uint8_t)total;
        p[5] = (uint8_t)(total >> 8);
        p[6] = (uint8_t)nr;
        p[7] = (uint8_t)(nr >> 8);
        memcpy(p + 8, m + from, n);
        decode(d, 0xFFFE, 254, p, 8 + n);
        free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size < 2)
                return 0;

        size_t n = le_get16(data);

        if (n > size - 2 || n > 0xFFFF - 8)
                return 0;

        struct kdecoder *d = kdecoder_new(true);

        if (!d)
                return 0;
        chunk(d, data + 2, 0, n / 2, 0, 2);
        chunk(d, data + 2, n / 2, n, 1, 2);
        for (uint16_t id = 1; id <= 4; id++)
                decode(d, id, (uint8_t)id, data + 2 + n, size - 2 - n);
        chunk(d, data + 2, 0, n, 0, 1);
        for (uint16_t id = 1; id <= 4; id++)
                decode(d, id, (uint8_t)id, data + 2 + n, size - 2 - n);
        kdecoder_free(d);
        return 0;
}
