/* SPDX-License-Identifier: MIT */
/* etl_parse.h: the records of one buffer, shared by the reader (etl_reader.c) and the lone
   buffer walk (etl_buffer_next): WMI_BUFFER_HEADER offsets and the record parser. Internal to
   the backend: backend/etl, and backend/api's etw_buffer_next_record, which walks a live
   buffer a record a call and inlines the walk (etl_buffer_filled, etl_buffer_next_inline). */
#ifndef ETWTOP_ETL_PARSE_H
#define ETWTOP_ETL_PARSE_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "etl_reader.h"
#include "le_bytes.h"
#include "etw/ntwmi.h"

/* ETL-FORMAT.md 1.2, WMI_BUFFER_HEADER offsets */
#define BUF_SIZE_OFF         0x00
#define BUF_SAVED_OFFSET_OFF 0x04
#define BUF_TIMESTAMP_OFF    0x10
#define BUF_SEQUENCE_OFF     0x18
#define BUF_PROC_INDEX_OFF   0x28
#define BUF_LOGGER_ID_OFF    0x2A
#define BUF_STATE_OFF        0x2C
#define BUF_OFFSET_OFF       0x30
#define BUF_FLAG_OFF         0x34
#define BUF_TYPE_OFF         0x36

/* ETL-FORMAT.md 1.6: x86 and x64 TRACE_LOGFILE_HEADER sizes */
#define LOGFILE_HEADER32_SIZE 0x110
#define LOGFILE_HEADER64_SIZE 0x118
#define SYSTEM_HEADER_SIZE    0x20

enum etl_parse_result {
        ETL_PARSE_END = 0,
        ETL_PARSE_RECORD = 1,
        ETL_PARSE_SKIP = 2,
        ETL_PARSE_DAMAGED = -1
};

/* What the parser needs of each header type, in one word a type (ETL-FORMAT.md 2.1): the fixed
   header's size (0 for types that carry no event), the pointer size, and whether the record's
   size is the 16-bit word at +4 (the kernel's SYSTEM, COMPACT and PERFINFO forms, and the types
   below SYSTEM32) rather than the marker's low word. One load a record where the three
   switches took a dozen instructions. */
#define ETL_HEADER_FIXED(info)     ((info)&0xFFu)
#define ETL_HEADER_PSIZE(info)     (((info) >> 8) & 0xFFu)
#define ETL_HEADER_IS_KERNEL(info) (((info) >> 16) & 1u)
#define ETL_HEADER_INFO(fixed, psize, is_kernel)                                                   \
        ((uint32_t)(fixed) | (uint32_t)(psize) << 8 | (uint32_t)(is_kernel) << 16)

/* Indexed by type. A type not named is 0: no event (its record is skipped, whatever its
   pointer size), and not a kernel one; type 0 is a kernel type without a fixed size. */
static const uint32_t etl_header_info[256] = {
        [0] = ETL_HEADER_INFO(0, 8, 1),
        [TRACE_HEADER_TYPE_SYSTEM32] = ETL_HEADER_INFO(0x20, 4, 1),
        [TRACE_HEADER_TYPE_SYSTEM64] = ETL_HEADER_INFO(0x20, 8, 1),
        [TRACE_HEADER_TYPE_COMPACT32] = ETL_HEADER_INFO(0x18, 4, 1),
        [TRACE_HEADER_TYPE_COMPACT64] = ETL_HEADER_INFO(0x18, 8, 1),
        [TRACE_HEADER_TYPE_FULL_HEADER32] = ETL_HEADER_INFO(0x30, 4, 0),
        [TRACE_HEADER_TYPE_INSTANCE32] = ETL_HEADER_INFO(0x48, 4, 0),
        [TRACE_HEADER_TYPE_PERFINFO32] = ETL_HEADER_INFO(0x10, 4, 1),
        [TRACE_HEADER_TYPE_PERFINFO64] = ETL_HEADER_INFO(0x10, 8, 1),
        [TRACE_HEADER_TYPE_EVENT_HEADER32] = ETL_HEADER_INFO(0x50, 4, 0),
        [TRACE_HEADER_TYPE_EVENT_HEADER64] = ETL_HEADER_INFO(0x50, 8, 0),
        [TRACE_HEADER_TYPE_FULL_HEADER64] = ETL_HEADER_INFO(0x30, 8, 0),
        [TRACE_HEADER_TYPE_INSTANCE64] = ETL_HEADER_INFO(0x48, 8, 0),
};

/* MESSAGE_TRACE_HEADER's option flags (evntrace.h's TRACE_MESSAGE_*): ETL-FORMAT.md 2.7 */
#define ETL_MESSAGE_SEQUENCE    0x0001
#define ETL_MESSAGE_GUID        0x0002
#define ETL_MESSAGE_COMPONENTID 0x0004
#define ETL_MESSAGE_TIMESTAMP   0x0008
#define ETL_MESSAGE_SYSTEMINFO  0x0020
#define ETL_MESSAGE_POINTER32   0x0040

/* Where a message record's timestamp is (its offset from the record's start), or 0 where it
   has none; flags is its OptionFlags (the word at +6). ETL-FORMAT.md 2.7: the sequence, then
   the component id or else the GUID, then the timestamp. */
static inline uint32_t etl_message_timestamp_offset(uint16_t flags)
{
        if (!(flags & ETL_MESSAGE_TIMESTAMP))
                return 0;
        uint32_t off = 8;
        if (flags & ETL_MESSAGE_SEQUENCE)
                off += 4;
        if (flags & ETL_MESSAGE_COMPONENTID)
                off += 4;
        else if (flags & ETL_MESSAGE_GUID)
                off += 16;
        return off;
}

/* Where the record at r keeps its timestamp: +8 in PERFINFO headers, after the options a WPP
   message has (16 where it has none, which the reader skips), +16 in every other kind
   (ETL-FORMAT.md 2.3-2.8): for the writer's buffers and a merge's copies. */
static inline uint32_t etl_record_timestamp_offset(const uint8_t *r)
{
        if (r[3] == (TRACE_HEADER_FLAG | TRACE_HEADER_TRACE_MESSAGE) >> 24) {
                uint32_t off = etl_message_timestamp_offset(le_get16(r + 6));
                return off ? off : 16;
        }
        return r[2] == TRACE_HEADER_TYPE_PERFINFO64 || r[2] == TRACE_HEADER_TYPE_PERFINFO32 ? 8
                                                                                            : 16;
}

/* A WPP message (TraceMessage's record, size already checked against the buffer) as an event
   (ETL-FORMAT.md 2.7): its message GUID and number (hook_id), time, thread and process, and
   the arguments as the payload, which only the provider's format files decode. A message
   without a time cannot be placed among the others: skipped. Out of the reader's inline path:
   a trace of kernel and manifest events never comes here. */
static __attribute__((noinline, unused)) enum etl_parse_result
etl_parse_message(const uint8_t *p, uint32_t size, struct etl_record *rec, const char **why)
{
        uint16_t flags = le_get16(p + 6);
        uint32_t ts_off = etl_message_timestamp_offset(flags);
        if (!ts_off)
                return ETL_PARSE_SKIP;
        uint32_t off = ts_off + 8 + ((flags & ETL_MESSAGE_SYSTEMINFO) ? 8 : 0);
        if (off > size) {
                *why = "message record smaller than its header";
                return ETL_PARSE_DAMAGED;
        }
        rec->data = p;
        rec->size_bytes = size;
        rec->header_type = TRACE_HEADER_TYPE_MESSAGE;
        rec->pointer_size = (flags & ETL_MESSAGE_POINTER32) ? 4 : 8;
        rec->version = 0;
        rec->hook_id = le_get16(p + 4); /* the message number */
        rec->opcode = 0;
        rec->level = 0;
        rec->flags = EVENT_HEADER_FLAG_TRACE_MESSAGE;
        rec->timestamp = le_get64(p + ts_off);
        if (flags & ETL_MESSAGE_SYSTEMINFO) {
                rec->tid = le_get32(p + ts_off + 8);
                rec->pid = le_get32(p + ts_off + 12);
        } else {
                rec->tid = rec->pid = 0xFFFFFFFF;
        }
        rec->kernel_time = rec->user_time = 0;
        rec->guid = !(flags & ETL_MESSAGE_COMPONENTID) && (flags & ETL_MESSAGE_GUID)
                            ? p + 8 + ((flags & ETL_MESSAGE_SEQUENCE) ? 4 : 0)
                            : NULL;
        rec->nr_ext = 0;
        rec->is_header = false;
        rec->payload = p + off;
        rec->payload_size = size - off;
        return ETL_PARSE_RECORD;
}

/* Parses the record at buf[pos..filled). ETL-FORMAT.md 2.1-2.8. On ETL_PARSE_SKIP or
   ETL_PARSE_RECORD, *next is where the following record starts; on ETL_PARSE_DAMAGED, *why says
   what is wrong (a static string). */
enum etl_parse_result etl_parse_record(const uint8_t *buf, uint32_t pos, uint32_t filled,
                                       struct etl_record *rec, uint32_t *next, const char **why);

/* etl_parse_record inline, for the reader's loop over every record (the call and its
   out-parameters through memory were a tenth of the parse's cost). */
static inline __attribute__((always_inline)) enum etl_parse_result
etl_parse_record_inline(const uint8_t *buf, uint32_t pos, uint32_t filled, struct etl_record *rec,
                        uint32_t *next, const char **why)
{
        if (pos + 4 > filled)
                return ETL_PARSE_END;
        uint32_t m = le_get32(buf + pos);
        if (m == 0xFFFFFFFF)
                return ETL_PARSE_END;
        if (!(m & TRACE_HEADER_FLAG)) {
                *why = "record marker lacks TRACE_HEADER_FLAG";
                return ETL_PARSE_DAMAGED;
        }
        const uint8_t *p = buf + pos;
        uint32_t avail = filled - pos;
        if (!(m & TRACE_HEADER_EVENT_TRACE)) {
                /* MESSAGE_TRACE_HEADER (WPP) and other non-event forms: size in the low word. */
                uint32_t size = m & 0xFFFF;
                if (size < 8 || size > avail) {
                        *why = "message record size out of range";
                        return ETL_PARSE_DAMAGED;
                }
                *next = pos + ((size + 7) & ~7u);
                if ((m & 0xFF000000u) == (TRACE_HEADER_FLAG | TRACE_HEADER_TRACE_MESSAGE))
                        return etl_parse_message(p, size, rec, why);
                return ETL_PARSE_SKIP;
        }
        uint8_t type = (uint8_t)(m >> 16);
        uint32_t info = etl_header_info[type];
        uint32_t fixed = ETL_HEADER_FIXED(info);
        uint32_t size;
        bool is_kernel = ETL_HEADER_IS_KERNEL(info);
        if (is_kernel) {
                if (avail < 8) {
                        *why = "record header truncated";
                        return ETL_PARSE_DAMAGED;
                }
                size = le_get16(p + 4);
        } else {
                size = m & 0xFFFF;
        }
        if (size < 8 || size > avail) {
                *why = "record size out of range";
                return ETL_PARSE_DAMAGED;
        }
        *next = pos + ((size + 7) & ~7u);
        if (fixed == 0)
                return ETL_PARSE_SKIP;
        if (size < fixed) {
                *why = "record smaller than its header";
                return ETL_PARSE_DAMAGED;
        }

        rec->data = p;
        rec->size_bytes = size;
        rec->header_type = type;
        rec->pointer_size = (uint8_t)ETL_HEADER_PSIZE(info);
        rec->nr_ext = 0;
        rec->is_header = false;
        uint32_t payload_off = fixed;

        /* Each form below writes each of the other fields once (a field cleared here and then
           written again by most records' form was a store a record for nothing). */
        if (is_kernel) {
                uint16_t ver = le_get16(p);
                rec->version = ver & 0xFF;
                rec->hook_id = le_get16(p + 6);
                rec->opcode = (uint8_t)rec->hook_id;
                rec->guid = NULL;
                rec->flags = 0;
                rec->level = 0;
                if (type == TRACE_HEADER_TYPE_PERFINFO32 || type == TRACE_HEADER_TYPE_PERFINFO64) {
                        rec->timestamp = le_get64(p + 8);
                        rec->tid = rec->pid = 0xFFFFFFFF;
                        rec->kernel_time = rec->user_time = 0;
                } else {
                        rec->tid = le_get32(p + 8);
                        rec->pid = le_get32(p + 12);
                        rec->timestamp = le_get64(p + 16);
                        if (fixed == 0x20) {
                                rec->kernel_time = le_get32(p + 24);
                                rec->user_time = le_get32(p + 28);
                        } else {
                                rec->kernel_time = rec->user_time = 0;
                        }
                }
                /* 2.4: PEBS index then PMC counters, inline after the fixed header */
                uint32_t nr_pmc = (ver & TRACE_HEADER_PMC_COUNTERS_MASK) >> 8;
                bool has_pebs = ver & TRACE_HEADER_PEBS_INDEX_FLAG;
                uint32_t items = (has_pebs ? 8 : 0) + 8 * nr_pmc;
                if (payload_off + items > size) {
                        *why = "inline PMC counters overrun the record";
                        return ETL_PARSE_DAMAGED;
                }
                if (has_pebs) {
                        rec->ext[rec->nr_ext++] = (struct etl_ext_item){
                                EVENT_HEADER_EXT_TYPE_PEBS_INDEX, 8, p + payload_off};
                        payload_off += 8;
                }
                if (nr_pmc) {
                        rec->ext[rec->nr_ext++] =
                                (struct etl_ext_item){EVENT_HEADER_EXT_TYPE_PMC_COUNTERS,
                                                      (uint16_t)(8 * nr_pmc), p + payload_off};
                        payload_off += 8 * nr_pmc;
                }
        } else if (type == TRACE_HEADER_TYPE_EVENT_HEADER32 ||
                   type == TRACE_HEADER_TYPE_EVENT_HEADER64) {
                rec->hook_id = 0;
                rec->flags = le_get16(p + 4);
                rec->tid = le_get32(p + 8);
                rec->pid = le_get32(p + 12);
                rec->timestamp = le_get64(p + 16);
                rec->guid = p + 0x18;
                rec->version = p[0x2A];
                rec->level = p[0x2C];
                rec->opcode = p[0x2D];
                rec->kernel_time = le_get32(p + 0x38);
                rec->user_time = le_get32(p + 0x3C);
                if (rec->flags & EVENT_HEADER_FLAG_EXTENDED_INFO) {
                        /* 2.8: {TotalSize, ExtType, Linkage, DataSize} items, 8-aligned */
                        for (;;) {
                                if (payload_off + 8 > size) {
                                        *why = "extended item header overruns the record";
                                        return ETL_PARSE_DAMAGED;
                                }
                                uint16_t total = le_get16(p + payload_off);
                                uint16_t ext_type = le_get16(p + payload_off + 2);
                                uint16_t linkage = le_get16(p + payload_off + 4);
                                uint16_t data_size = le_get16(p + payload_off + 6);
                                if (total < 8 || data_size > total - 8 ||
                                    payload_off + total > size) {
                                        *why = "extended item size out of range";
                                        return ETL_PARSE_DAMAGED;
                                }
                                if (rec->nr_ext < ETL_MAX_EXT_ITEMS)
                                        rec->ext[rec->nr_ext++] = (struct etl_ext_item){
                                                ext_type, data_size, p + payload_off + 8};
                                payload_off += (total + 7u) & ~7u;
                                if (!(linkage & 1))
                                        break;
                        }
                        if (payload_off > size)
                                payload_off = size;
                }
        } else {
                /* EVENT_TRACE_HEADER (2.5) and EVENT_INSTANCE_GUID_HEADER (2.6) */
                rec->hook_id = 0;
                rec->flags = 0;
                rec->opcode = p[4];
                rec->level = p[5];
                rec->version = le_get16(p + 6);
                rec->tid = le_get32(p + 8);
                rec->pid = le_get32(p + 12);
                rec->timestamp = le_get64(p + 16);
                rec->guid = p + 0x18;
                rec->kernel_time = le_get32(p + 0x28);
                rec->user_time = le_get32(p + 0x2C);
        }
        rec->payload = p + payload_off;
        rec->payload_size = size - payload_off;
        return ETL_PARSE_RECORD;
}

/* Where a lone buffer's records end (its header's fill offset, or the saved one where the
   writer has not set it), or 0 where buf[0..size) is no buffer. Read once a buffer by a walk
   that keeps it: read again at every record, it was a fifth of the walk's parse. */
static inline uint32_t etl_buffer_filled(const uint8_t *buf, uint32_t size)
{
        if (size < WMI_BUFFER_HEADER_SIZE)
                return 0;
        uint32_t filled = le_get32(buf + BUF_OFFSET_OFF);
        if (filled == 0)
                filled = le_get32(buf + BUF_SAVED_OFFSET_OFF);
        if (filled < WMI_BUFFER_HEADER_SIZE || filled > size)
                return 0;
        return filled;
}

/* etl_buffer_next's records, from etl_buffer_filled's end and a *pos at WMI_BUFFER_HEADER_SIZE
   or past it: 1 with the next record in *rec (its cpu, logger_id, buffer_index and file_offset
   are the caller's to set), 0 at the end, -EBADMSG at a damaged record (*pos is then the end,
   so the walk stays ended). Inline, as the reader's loop has the parse: out of line, a live
   buffer's walk paid two calls a record and the parse's out-parameters through memory. */
static inline __attribute__((always_inline)) int
etl_buffer_next_inline(const uint8_t *buf, uint32_t filled, uint32_t *pos, struct etl_record *rec)
{
        for (;;) {
                const char *why = NULL;
                uint32_t next = 0;
                enum etl_parse_result pr =
                        etl_parse_record_inline(buf, *pos, filled, rec, &next, &why);
                if (pr == ETL_PARSE_RECORD) {
                        *pos = next;
                        return 1;
                }
                if (pr == ETL_PARSE_SKIP) {
                        *pos = next;
                        continue;
                }
                if (pr == ETL_PARSE_DAMAGED) {
                        *pos = filled;
                        return -EBADMSG;
                }
                return 0;
        }
}

#endif
