/* SPDX-License-Identifier: MIT */
/* etl_parse.h: the records of one buffer, shared by the reader (etl_reader.c) and the lone
   buffer walk (etl_buffer_next): WMI_BUFFER_HEADER offsets and the record parser. Internal to
   backend/etl. */
#ifndef ETWTOP_ETL_PARSE_H
#define ETWTOP_ETL_PARSE_H

#include <stdint.h>

#include "etl_reader.h"

/* ETL-FORMAT.md 1.2, WMI_BUFFER_HEADER offsets */
#define BUF_SIZE_OFF         0x00
#define BUF_SAVED_OFFSET_OFF 0x04
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

/* Parses the record at buf[pos..filled). ETL-FORMAT.md 2.1-2.8. On ETL_PARSE_SKIP or
   ETL_PARSE_RECORD, *next is where the following record starts; on ETL_PARSE_DAMAGED, *why says
   what is wrong (a static string). */
enum etl_parse_result etl_parse_record(const uint8_t *buf, uint32_t pos, uint32_t filled,
                                       struct etl_record *rec, uint32_t *next, const char **why);

#endif
