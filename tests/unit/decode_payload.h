/* SPDX-License-Identifier: MIT */
/* decode_payload.h: the decoder tests' one event through kdecoder_decode: an EVENT_RECORD of the
   provider, Id, opcode and version around a heap copy of the payload (so that the sanitizer sees
   a read past its end). */
#ifndef ETWTOP_TESTS_DECODE_PAYLOAD_H
#define ETWTOP_TESTS_DECODE_PAYLOAD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kdecoder.h"

static inline int decode_payload(struct kdecoder *d, const GUID *g, uint16_t id, uint8_t op,
                                 uint8_t ver, bool is_classic, const void *p, size_t n,
                                 kevent_sink_fn sink)
{
        EVENT_RECORD r;
        uint8_t *copy = malloc(n ? n : 1);

        if (!copy)
                abort();
        if (n)
                memcpy(copy, p, n);
        memset(&r, 0, sizeof(r));
        r.EventHeader.Flags = EVENT_HEADER_FLAG_64_BIT_HEADER |
                              (is_classic ? EVENT_HEADER_FLAG_CLASSIC_HEADER : 0);
        r.EventHeader.ProviderId = *g;
        r.EventHeader.EventDescriptor.Id = id;
        r.EventHeader.EventDescriptor.Opcode = op;
        r.EventHeader.EventDescriptor.Version = ver;
        r.UserData = copy;
        r.UserDataLength = (USHORT)n;
        int rc = kdecoder_decode(d, &r, sink, NULL);
        free(copy);
        return rc;
}

#endif
