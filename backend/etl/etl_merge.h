/* SPDX-License-Identifier: MIT */
/* etl_merge.h: several .etl inputs written as one file in time order, with the image identity
   events xperf -merge adds (ETL-FORMAT.md 3.10): the engine of CreateMergedTraceFile. */
#ifndef ETWTOP_ETL_MERGE_H
#define ETWTOP_ETL_MERGE_H

#include <stdbool.h>
#include <stdint.h>

#include "etl_reader.h"
#include "etw/etwtop_ext.h"

#define ETL_MERGE_MAX_FILES 64

/* What failed, for the caller's message and code. */
enum etl_merge_stage {
        ETL_MERGE_NEW_WRITER = 0, /* the writer could not be made (out of memory) */
        ETL_MERGE_OPEN_OUTPUT,    /* the output could not be created: err says why */
        ETL_MERGE_WRITE,          /* writing or closing the output */
};

struct etl_merge_options {
        bool add_image_ids; /* ImageID (and DbgID_RSDS) events beside the Image records */
        ETW_CODEVIEW_LOOKUP codeview_lookup; /* borrowed; NULL: no DbgID_RSDS events */
        void *codeview_ctx;
};

/* Writes the records of readers[0..n) (1 <= n <= ETL_MERGE_MAX_FILES, each at its start) to a
   new file at path, in time order on the clock of the input that started first. The readers
   stay the caller's (read to their end). Returns 0, or -errno with *stage set (and err for
   ETL_MERGE_OPEN_OUTPUT); -EINVAL for n out of range. */
int etl_merge(struct etl_reader *const *readers, uint32_t n, const char *path,
              const struct etl_merge_options *opts, enum etl_merge_stage *stage,
              struct etl_error *err);

#endif
