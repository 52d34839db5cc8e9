/* SPDX-License-Identifier: MIT */
/* etl_parse.c: owns the parsing of one buffer's records (ETL-FORMAT.md 2): header kinds and
   sizes, inline PMC counters and extended items, the lone buffer walk, and the reader's error
   and UTF-16 helpers. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "le_bytes.h"
#include "etl_parse.h"
#include "util/utf.h"
#include "etw/ntwmi.h"

void etl_error_set(struct etl_error *err, uint64_t offset, const char *fmt, ...)
{
        if (!err)
                return;
        va_list ap;
        va_start(ap, fmt);
        err->offset = offset;
        vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        va_end(ap);
}

enum etl_parse_result etl_parse_record(const uint8_t *buf, uint32_t pos, uint32_t filled,
                                       struct etl_record *rec, uint32_t *next, const char **why)
{
        return etl_parse_record_inline(buf, pos, filled, rec, next, why);
}

int etl_buffer_next(const uint8_t *buf, uint32_t size, uint32_t *pos, struct etl_record *rec)
{
        if (size < WMI_BUFFER_HEADER_SIZE)
                return -EINVAL;
        uint32_t filled = le_get32(buf + BUF_OFFSET_OFF);
        if (filled == 0)
                filled = le_get32(buf + BUF_SAVED_OFFSET_OFF);
        if (filled < WMI_BUFFER_HEADER_SIZE || filled > size)
                return -EINVAL;
        if (*pos < WMI_BUFFER_HEADER_SIZE)
                *pos = WMI_BUFFER_HEADER_SIZE;
        for (;;) {
                const char *why = NULL;
                uint32_t next = 0;
                enum etl_parse_result pr = etl_parse_record(buf, *pos, filled, rec, &next, &why);
                if (pr == ETL_PARSE_SKIP) {
                        *pos = next;
                        continue;
                }
                if (pr == ETL_PARSE_END)
                        return 0;
                if (pr == ETL_PARSE_DAMAGED) {
                        *pos = filled;
                        return -EBADMSG;
                }
                rec->cpu = le_get16(buf + BUF_PROC_INDEX_OFF) & ETW_PROCESSOR_INDEX_MASK;
                rec->logger_id = le_get16(buf + BUF_LOGGER_ID_OFF);
                rec->buffer_index = 0;
                rec->file_offset = *pos;
                *pos = next;
                return 1;
        }
}
