/* SPDX-License-Identifier: MIT */
/* etl_record.c: owns the record builders of etl_writer.h: the bytes of one SYSTEM64,
   PERFINFO64, FULL_HEADER64 or EVENT_HEADER64 record (ETL-FORMAT.md 2.3-2.8). */
#include "le_bytes.h"
#include "etl_writer.h"

#include <string.h>

#include "etw/ntwmi.h"

#define SYSTEM_HEADER_SIZE   0x20
#define PERFINFO_HEADER_SIZE 0x10
#define FULL_HEADER_SIZE     0x30
#define EVENT_HEADER_SIZE    0x50

uint32_t etl_record_system64(uint8_t *dst, uint16_t hook_id, uint8_t version, uint32_t tid,
                             uint32_t pid, uint64_t timestamp, const void *payload,
                             uint32_t payload_size)
{
        uint32_t size = SYSTEM_HEADER_SIZE + payload_size;
        le_put16(dst, version);
        dst[2] = TRACE_HEADER_TYPE_SYSTEM64;
        dst[3] = 0xC0;
        le_put16(dst + 4, (uint16_t)size);
        le_put16(dst + 6, hook_id);
        le_put32(dst + 8, tid);
        le_put32(dst + 12, pid);
        le_put64(dst + 16, timestamp);
        le_put32(dst + 24, 0);
        le_put32(dst + 28, 0);
        if (payload_size)
                memcpy(dst + SYSTEM_HEADER_SIZE, payload, payload_size);
        return size;
}

uint32_t etl_record_perfinfo64(uint8_t *dst, uint16_t hook_id, uint8_t version, uint64_t timestamp,
                               const uint64_t *pmc, uint32_t nr_pmc, const void *payload,
                               uint32_t payload_size)
{
        if (nr_pmc > 7)
                nr_pmc = 7;
        uint32_t size = PERFINFO_HEADER_SIZE + 8 * nr_pmc + payload_size;
        le_put16(dst, (uint16_t)(version | (nr_pmc << 8)));
        dst[2] = TRACE_HEADER_TYPE_PERFINFO64;
        dst[3] = 0xC0;
        le_put16(dst + 4, (uint16_t)size);
        le_put16(dst + 6, hook_id);
        le_put64(dst + 8, timestamp);
        for (uint32_t i = 0; i < nr_pmc; i++)
                le_put64(dst + PERFINFO_HEADER_SIZE + 8 * i, pmc[i]);
        /* a payload built in place (payload == where it goes) is not copied */
        if (payload_size && payload != dst + PERFINFO_HEADER_SIZE + 8 * nr_pmc)
                memcpy(dst + PERFINFO_HEADER_SIZE + 8 * nr_pmc, payload, payload_size);
        return size;
}

static void put_guid(uint8_t *p, const GUID *g)
{
        le_put32(p, g->Data1);
        le_put16(p + 4, g->Data2);
        le_put16(p + 6, g->Data3);
        memcpy(p + 8, g->Data4, 8);
}

uint32_t etl_record_full64(uint8_t *dst, const GUID *guid, uint8_t opcode, uint16_t version,
                           uint32_t tid, uint32_t pid, uint64_t timestamp, const void *payload,
                           uint32_t payload_size)
{
        uint32_t size = FULL_HEADER_SIZE + payload_size;
        le_put16(dst, (uint16_t)size);
        dst[2] = TRACE_HEADER_TYPE_FULL_HEADER64;
        dst[3] = 0xC0;
        dst[4] = opcode;
        dst[5] = 0;
        le_put16(dst + 6, version);
        le_put32(dst + 8, tid);
        le_put32(dst + 12, pid);
        le_put64(dst + 16, timestamp);
        put_guid(dst + 0x18, guid);
        le_put64(dst + 0x28, 0);
        if (payload_size)
                memcpy(dst + FULL_HEADER_SIZE, payload, payload_size);
        return size;
}

uint32_t etl_record_event64(uint8_t *dst, const GUID *provider, const EVENT_DESCRIPTOR *desc,
                            uint32_t tid, uint32_t pid, uint64_t timestamp,
                            const struct etl_record_ext *ext, uint32_t nr_ext, const void *payload,
                            uint32_t payload_size)
{
        uint32_t off = EVENT_HEADER_SIZE;
        for (uint32_t i = 0; i < nr_ext; i++) {
                uint32_t total = 8u + ext[i].size_bytes;
                le_put16(dst + off, (uint16_t)total);
                le_put16(dst + off + 2, ext[i].type);
                le_put16(dst + off + 4, i + 1 < nr_ext ? 1 : 0);
                le_put16(dst + off + 6, ext[i].size_bytes);
                memcpy(dst + off + 8, ext[i].data, ext[i].size_bytes);
                uint32_t aligned = (total + 7u) & ~7u;
                memset(dst + off + total, 0, aligned - total);
                off += aligned;
        }
        uint32_t size = off + payload_size;
        le_put16(dst, (uint16_t)size);
        dst[2] = TRACE_HEADER_TYPE_EVENT_HEADER64;
        dst[3] = 0xC0;
        le_put16(dst + 4, (uint16_t)(nr_ext ? EVENT_HEADER_FLAG_EXTENDED_INFO : 0) |
                                  EVENT_HEADER_FLAG_64_BIT_HEADER);
        le_put16(dst + 6, 0);
        le_put32(dst + 8, tid);
        le_put32(dst + 12, pid);
        le_put64(dst + 16, timestamp);
        put_guid(dst + 0x18, provider);
        le_put16(dst + 0x28, desc->Id);
        dst[0x2A] = desc->Version;
        dst[0x2B] = desc->Channel;
        dst[0x2C] = desc->Level;
        dst[0x2D] = desc->Opcode;
        le_put16(dst + 0x2E, desc->Task);
        le_put64(dst + 0x30, desc->Keyword);
        le_put64(dst + 0x38, 0);
        memset(dst + 0x40, 0, 16);
        if (payload_size)
                memcpy(dst + off, payload, payload_size);
        return size;
}
