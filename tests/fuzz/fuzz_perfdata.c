/* SPDX-License-Identifier: MIT */
/* fuzz_perfdata.c: libFuzzer target for the perf.data reader (backend/perf_data.c): hostile
   headers, attrs, feature sections, pipe-mode records and zstd-compressed records, read to the
   end twice (the second pass after a rewind), each record's event and name looked up; then
   every record in the live form through the converter (perf_data_convert) into a writer with
   no output.
   Input: a perf.data file. Corpus: tests/corpus/perfdata/ (small shared files of
   shared/samples/perf, cut short, and small files built by hand). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "etl_writer.h"
#include "perf_data.h"
#include "perf_data_conv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile size_t fuzz_sink;

static void read_all(struct perf_data *pd)
{
        struct perf_data_record rec;
        struct err_msg err;
        uint32_t n = 0;
        while (perf_data_next(pd, &rec, &err) == 1 && n++ < 1000000) {
                fuzz_sink += rec.data[rec.size - 1] + rec.type;
                if (rec.event >= 0) {
                        char name[64];
                        const struct perf_data_event *ev = perf_data_event(pd, (uint32_t)rec.event);
                        fuzz_sink += strlen(perf_data_event_name(ev, name, sizeof(name)));
                }
        }
        const struct perf_data_info *in = perf_data_info(pd);
        fuzz_sink += in->nr_build_ids + in->nr_pmus + in->nr_groups;
        for (uint32_t i = 0; i < in->nr_build_ids; i++)
                fuzz_sink += strlen(in->build_ids[i].path);
        fuzz_sink += strlen(perf_data_last_warning(pd)->msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        /* an exact-size copy, so that any read past the end is seen */
        uint8_t *copy = malloc(size ? size : 1);
        if (!copy)
                return 0;
        memcpy(copy, data, size);
        struct perf_data *pd = NULL;
        struct err_msg err;
        if (perf_data_open_mem(&pd, copy, size, &err) == 0) {
                read_all(pd);
                perf_data_rewind(pd);
                read_all(pd);
                struct etl_writer_config cfg;
                perf_data_conv_config(pd, &cfg);
                struct etl_writer *w = NULL;
                if (etl_writer_new(&w, &cfg) == 0) {
                        struct perf_data_conv_stats st;
                        perf_data_convert(pd, w, &st, &err);
                        fuzz_sink += st.nr_converted;
                        etl_writer_free(w);
                }
                perf_data_close(pd);
        }
        free(copy);
        return 0;
}
