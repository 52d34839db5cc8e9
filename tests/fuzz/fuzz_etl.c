/* SPDX-License-Identifier: MIT */
/* fuzz_etl.c: libFuzzer target feeding arbitrary bytes to the .etl reader: open, read every
   record twice (touching every byte it points at), close. Corpus: tests/corpus/etl/. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "etl_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Keeps the compiler from dropping the reads that ASan checks. */
static volatile unsigned fuzz_sink;

/* The reader's promises about a record: every pointer inside the record's bytes. */
static void check_record(const struct etl_record *rec)
{
        const uint8_t *end = rec->data + rec->size_bytes;
        if (!rec->data || rec->size_bytes < 8)
                abort();
        if (rec->payload < rec->data || rec->payload > end ||
            rec->payload_size > (size_t)(end - rec->payload))
                abort();
        if (rec->guid && (rec->guid < rec->data || rec->guid + 16 > end))
                abort();
        if (rec->nr_ext > ETL_MAX_EXT_ITEMS)
                abort();
        for (uint32_t i = 0; i < rec->nr_ext; i++) {
                const struct etl_ext_item *it = &rec->ext[i];
                if (it->data < rec->data || it->data > end ||
                    it->size_bytes > (size_t)(end - it->data))
                        abort();
        }
        if (rec->pointer_size != 4 && rec->pointer_size != 8)
                abort();
}

/* Reads every record, touching every byte of it, its payload and its extended items; returns
   the number of records. */
static uint64_t read_all(struct etl_reader *r)
{
        struct etl_record rec;
        uint64_t n = 0;
        unsigned sum = 0;

        while (etl_reader_next(r, &rec) == 1) {
                check_record(&rec);
                if (rec.is_header != (n == 0))
                        abort();
                for (uint32_t i = 0; i < rec.size_bytes; i++)
                        sum += rec.data[i];
                for (uint32_t i = 0; i < rec.payload_size; i++)
                        sum += rec.payload[i];
                for (uint32_t k = 0; k < rec.nr_ext; k++)
                        for (uint32_t i = 0; i < rec.ext[k].size_bytes; i++)
                                sum += rec.ext[k].data[i];
                sum += (unsigned)etl_reader_to_filetime(r, rec.timestamp);
                n++;
        }
        if (etl_reader_peek_timestamp(r) != UINT64_MAX)
                abort();
        fuzz_sink = sum;
        return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct etl_reader *r = NULL;
        struct etl_error err;

        int rc = etl_reader_open_mem(&r, data, size, &err);
        if (rc < 0) {
                /* a clean failure: a known code, a message, no reader */
                if ((rc != -EINVAL && rc != -EBADMSG && rc != -ENOMEM) || !err.msg[0] || r)
                        abort();
                return 0;
        }
        const struct etl_logfile *lf = etl_reader_logfile(r);
        fuzz_sink = (unsigned)strlen(lf->logger_name) + (unsigned)strlen(lf->log_file_name);
        uint64_t first = read_all(r);
        struct etl_reader_stats st;
        etl_reader_get_stats(r, &st);
        if (st.nr_buffers == 0 || st.nr_records != first)
                abort();
        /* a second pass gives the same records */
        etl_reader_rewind(r);
        if (read_all(r) != first)
                abort();
        fuzz_sink = (unsigned)strlen(etl_reader_last_warning(r)->msg);
        etl_reader_close(r);
        return 0;
}
