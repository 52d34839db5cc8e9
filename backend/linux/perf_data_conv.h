/* SPDX-License-Identifier: MIT */
/* perf_data_conv.h: a perf.data file's records through the live source's converter
   (perf_convert.c) into ETW records and an .etl file (doc/perf-data.md). */
#ifndef ETWTOP_PERF_DATA_CONV_H
#define ETWTOP_PERF_DATA_CONV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "etl_reader.h"
#include "etl_writer.h"
#include "perf_convert.h"
#include "perf_data.h"

struct perf_data_conv_stats {
        uint64_t nr_records;       /* of the file, compressed ones' contents included */
        uint64_t nr_converted;     /* handed to the converter */
        uint64_t nr_samples;       /* of them, samples */
        uint64_t nr_by_event[16];  /* samples per file event (the first 16) */
        uint64_t nr_throttle;      /* THROTTLE and UNTHROTTLE records */
        uint64_t nr_lost_samples;  /* LOST_SAMPLES records' counts */
        uint64_t nr_ksymbols;      /* KSYMBOL records */
        uint64_t nr_not_converted; /* records no ETW event stands for (perf's own, AUX...) */
        /* of them, by type, those that carry what a user would miss (AUX data, perf stat's
           counts, throttling, BPF programs ...; not perf's own bookkeeping, which the reader
           takes in: attrs, features, rounds, maps); the last slot: types past perf's known ones.
           The conversion's RecordsNotShown events say the same. */
        uint64_t nr_not_shown[PERF_DATA_NR_TYPES + 1];
        uint32_t nr_cpus; /* the writer's */
        struct perf_conv_stats conv;
};

/* What a file's event becomes: its converter event (kind, KPROFILE_SOURCE) and the name of its
   source: ETW's (TotalCycles, InstructionRetired, ...) or the perf event's own. */
void perf_data_conv_event_of(const struct perf_data *pd, uint32_t i, struct perf_conv_event *ev,
                             char *name, size_t name_size);

/* The leader of event i where i counts in a leader-sampled group (perf record -e '{a,b}:S':
   its values read at each of the leader's samples, none of its own), else -1. */
int32_t perf_data_sampling_leader(const struct perf_data *pd, uint32_t i);

/* Converts every record of pd (from its first) into w's nr_cpus writer CPUs; pd's reader error,
   if any, is returned after the records before it are converted. *st (may be NULL) counts.
   Returns 0, or -EBADMSG with err filled (the file is damaged; what came before is written). */
int perf_data_convert(struct perf_data *pd, struct etl_writer *w, struct perf_data_conv_stats *st,
                      struct err_msg *err);

/* The one pass over pd's records that its conversion needs (perf_data_norm.c): the writer's
   CPUs and times, and the records indexed in time order (where they are in the file's bytes:
   put in the live form again as they are converted). Aborts when out of memory. */
struct perf_data_scan;
struct perf_data_scan *perf_data_conv_scan(struct perf_data *pd);
void perf_data_conv_scan_free(struct perf_data_scan *s);

/* perf_data_convert and perf_data_conv_config_span with pd's scan made already (the
   conversion uses it up: one conversion per scan). pd stays open until the conversion is
   done. */
int perf_data_convert_scanned(struct perf_data *pd, struct perf_data_scan *scan,
                              struct etl_writer *w, struct perf_data_conv_stats *st,
                              struct err_msg *err);
uint64_t perf_data_conv_config_scanned(struct perf_data *pd, const struct perf_data_scan *scan,
                                       struct etl_writer_config *cfg);

/* The writer configuration for pd (nr_cpus, clock, start time from CLOCK_DATA, kernel version
   from OSRELEASE): reads pd's records once to find the CPUs and the first time. */
void perf_data_conv_config(struct perf_data *pd, struct etl_writer_config *cfg);
/* The same; returns the span of the file's timestamps (ns). */
uint64_t perf_data_conv_config_span(struct perf_data *pd, struct etl_writer_config *cfg);

/* Where pd came from, in one line for the trace's LoggerName (so that the headers of --dump and
   --replay say it): "perf.data of HOST, Linux RELEASE, CPU; events: NAME (period N | N Hz), ...;
   command: perf's command line", cut to size, control characters replaced. */
void perf_data_origin(const struct perf_data *pd, char *buf, size_t size);

/* Writes the perf.data file at in_path (or "-": standard input) converted as an .etl file at
   out_path (never over an existing file unless is_force). Returns 0, or -errno with err filled;
   a damaged input is written up to the damage, and -EBADMSG says so. */
int perf_data_write_etl(const char *in_path, const char *out_path, bool is_force,
                        struct perf_data_conv_stats *st, struct etl_error *err);

/* Opens path for reading as an .etl: an .etl as is, a perf.data file (found by its magic,
   whatever its name; "-" is standard input) converted first into an .etl in memory (nothing
   is written to the disk). Returns etl_reader_open_file's or etl_reader_open_mem's result, or
   -errno with err filled. A damaged perf.data file is converted up to the damage and opened: 0
   with err saying what was wrong where (err->msg is empty otherwise). The last conversion is
   kept until the next: opening the same file again (same inode, size and modification time;
   standard input again) reads it instead of converting the file once more. A conversion stays
   in memory while a reader reads it, after the next one too. */
int perf_data_etl_reader_open(struct etl_reader **out, const char *path, struct etl_error *err);

/* How many conversions perf_data_etl_reader_open has made in this process (a kept one read
   again is not one). */
uint64_t perf_data_etl_nr_conversions(void);

#endif
