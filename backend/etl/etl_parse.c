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
        uint32_t filled = etl_buffer_filled(buf, size);
        if (filled == 0)
                return -EINVAL;
        if (*pos < WMI_BUFFER_HEADER_SIZE)
                *pos = WMI_BUFFER_HEADER_SIZE;
        int rc = etl_buffer_next_inline(buf, filled, pos, rec);
        if (rc != 1)
                return rc;
        rec->cpu = le_get16(buf + BUF_PROC_INDEX_OFF) & ETW_PROCESSOR_INDEX_MASK;
        rec->logger_id = le_get16(buf + BUF_LOGGER_ID_OFF);
        rec->buffer_index = 0;
        rec->file_offset = (uint64_t)(rec->data - buf); /* past the records skipped before it */
        return 1;
}
