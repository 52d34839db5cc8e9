/* SPDX-License-Identifier: MIT */
/* perf_data_norm.h: a perf.data file's records in the live form (perf_data_norm.c), shared with
   the conversion that hands them to the converter (perf_data_conv.c). */
#ifndef ETWTOP_PERF_DATA_NORM_H
#define ETWTOP_PERF_DATA_NORM_H

#include <stdbool.h>
#include <stdint.h>

#include "perf_convert.h"
#include "perf_data.h"
#include "perf_data_conv.h"
#include "perf_data_mem.h"

#define SIDEBAND_ID_BASE 0x100000000ull /* + event index: the side-band twin's sample id */
#define MAX_CONV_EVENTS  4096u          /* perf_data.c's MAX_EVENTS: every event a file may have */
#define MAX_WRITER_CPUS  256u
#define NR_TPS           4u /* tracepoint formats kept: sched_switch, sched_waking/wakeup, cpu_idle */

/* One record of the file to convert, in the order of the conversion once sorted. */
struct norm_rec {
        uint64_t time;      /* what it is sorted by */
        uint64_t last_time; /* the time of the records before it in the file, as it was put in
                               the live form (records with no time of their own take it) */
        uint64_t at;        /* raw: the file's record (in the mapping); otherwise the offset of
                               its live form in the arena */
        uint32_t size;      /* 0: raw, put in the live form again as it is converted */
        int32_t event;      /* raw: the file event it belongs to */
};

/* What norm_record does with a record in the live form: */
enum conv_mode {
        CONV_INDEX, /* kept in the index (its live form in the arena where the file's bytes do
                       not stay: decompressed records, pipe mode's) */
        CONV_EMIT,  /* converted at once (an indexed raw record, in order) */
};

struct conv_state {
        struct perf_data *pd;
        struct perf_conv_event events[2 * MAX_CONV_EVENTS]; /* samples, then side-band twins */
        /* owned, nr_events, set for CONV_EMIT: events[i] as the file's samples are laid out (its
           attr's sample_type, no IDENTIFIER added), which the converter parses where they lie */
        struct perf_conv_event *file_events;
        uint32_t nr_events;
        enum conv_mode mode;
        struct {
                uint8_t *data;
                size_t len, cap;
        } arena;          /* owned: the live forms kept */
        uint8_t *scratch; /* owned: a live form made again, scratch_cap bytes */
        size_t scratch_cap;
        struct norm_rec *recs; /* owned: the index, on the heap or in recs_mem */
        uint32_t nr_recs, cap_recs;
        struct perf_data_mem recs_mem;      /* owned: the index once large (huge pages) */
        bool is_recs_heap;                  /* no mapping could be made: the heap only */
        const struct perf_data_record *cur; /* CONV_INDEX: the record being indexed */
        bool is_raw;                        /* ... kept as the file's bytes */
        uint64_t cur_last_time;             /* ... last_time before it */
        bool is_sorted; /* CONV_INDEX: every record at or after the one before */
        uint64_t prev_time;
        struct perf_conv *conv; /* CONV_EMIT: the converter */
        uint64_t last_time;
        uint32_t max_cpu;
        struct perf_ksym *ksyms; /* owned, names in ksym_names */
        char **ksym_names;       /* owned, the file's order */
        uint32_t nr_ksyms;
        uint32_t nr_ksym_names;
        struct perf_data_conv_stats *st;
        /* each event's samples' periods (PERF_SAMPLE_PERIOD): a frequency event's interval is
           their mean */
        uint64_t period_sum[MAX_CONV_EVENTS], nr_periods[MAX_CONV_EVENTS];
        /* the formats of the tracepoints the converter turns into events (TRACING_DATA) */
        struct perf_tp_format tps[NR_TPS];
        enum perf_conv_kind tp_kinds[NR_TPS];
        bool tp_is_wakeup[NR_TPS]; /* sched_wakeup's: a ReadyThread only without sched_waking */
        uint32_t nr_tps;
        /* the first kernel module's map with a build-id: its id and its path's hash (a later
           module's map of another path with that id has none it can be trusted with) */
        uint8_t module_bid[20];
        uint8_t module_bid_size;
        uint64_t module_bid_path;
};

/* The one pass over a file's records before its conversion (perf_data_conv_scan): what the
   writer's configuration needs (the CPUs, the first and the last time), and the records
   indexed in time order with what the conversion needs of them (cs). */
struct perf_data_scan {
        uint32_t max_cpu;
        uint64_t first, last;
        struct conv_state *cs;          /* owned */
        struct perf_data_conv_stats st; /* the records counted */
        int rc;                         /* the reader's error that ended the pass, or 0 */
        struct err_msg err;
};

/* Hands the indexed records to c in order (raw ones put in the live form again); returns the
   latest time among them (t0 when later). */
uint64_t perf_data_norm_emit(struct conv_state *cs, struct perf_conv *c, uint64_t t0);

void perf_data_norm_free(struct conv_state *cs);

#endif
