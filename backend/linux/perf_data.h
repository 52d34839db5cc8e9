/* SPDX-License-Identifier: MIT */
/* perf_data.h: the reader of Linux perf.data files (file and pipe mode): the header, the events'
   attrs, the feature sections, and the records of the data section in file order, zstd-compressed
   ones included (the kernel's tools/perf/Documentation/perf.data-file-format.txt;
   doc/perf-data.md). */
#ifndef ETWTOP_PERF_DATA_H
#define ETWTOP_PERF_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/perf_event.h>

#include "util/err.h"

/* The record types of perf's own tool (tools/perf/util/event.h), past PERF_RECORD_MAX. */
enum perf_data_user_type {
        PERF_DATA_HEADER_ATTR = 64,
        PERF_DATA_HEADER_EVENT_TYPE = 65,
        PERF_DATA_HEADER_TRACING_DATA = 66,
        PERF_DATA_HEADER_BUILD_ID = 67,
        PERF_DATA_FINISHED_ROUND = 68,
        PERF_DATA_ID_INDEX = 69,
        PERF_DATA_AUXTRACE_INFO = 70,
        PERF_DATA_AUXTRACE = 71,
        PERF_DATA_AUXTRACE_ERROR = 72,
        PERF_DATA_THREAD_MAP = 73,
        PERF_DATA_CPU_MAP = 74,
        PERF_DATA_STAT_CONFIG = 75,
        PERF_DATA_STAT = 76,
        PERF_DATA_STAT_ROUND = 77,
        PERF_DATA_EVENT_UPDATE = 78,
        PERF_DATA_TIME_CONV = 79,
        PERF_DATA_HEADER_FEATURE = 80,
        PERF_DATA_COMPRESSED = 81,
        PERF_DATA_FINISHED_INIT = 82,
        PERF_DATA_COMPRESSED2 = 83,
        PERF_DATA_NR_TYPES = 84, /* the size of a per-type count table */
};

/* The feature bits of the file header (perf's enum HEADER_*). */
enum perf_data_feature {
        PERF_DATA_FEAT_TRACING_DATA = 1,
        PERF_DATA_FEAT_BUILD_ID = 2,
        PERF_DATA_FEAT_HOSTNAME = 3,
        PERF_DATA_FEAT_OSRELEASE = 4,
        PERF_DATA_FEAT_VERSION = 5,
        PERF_DATA_FEAT_ARCH = 6,
        PERF_DATA_FEAT_NRCPUS = 7,
        PERF_DATA_FEAT_CPUDESC = 8,
        PERF_DATA_FEAT_CPUID = 9,
        PERF_DATA_FEAT_TOTAL_MEM = 10,
        PERF_DATA_FEAT_CMDLINE = 11,
        PERF_DATA_FEAT_EVENT_DESC = 12,
        PERF_DATA_FEAT_CPU_TOPOLOGY = 13,
        PERF_DATA_FEAT_NUMA_TOPOLOGY = 14,
        PERF_DATA_FEAT_BRANCH_STACK = 15,
        PERF_DATA_FEAT_PMU_MAPPINGS = 16,
        PERF_DATA_FEAT_GROUP_DESC = 17,
        PERF_DATA_FEAT_CLOCKID = 23,
        PERF_DATA_FEAT_COMPRESSED = 27,
        PERF_DATA_FEAT_CLOCK_DATA = 29,
        PERF_DATA_FEAT_MAX = 256,
};

/* One event (perf_event_attr) of the file with what the file says of it. */
struct perf_data_event {
        struct perf_event_attr attr; /* as written, zero past the file's attr size */
        uint32_t attr_size;          /* the attr's size in the file (64 for the oldest) */
        char *name;                  /* owned: EVENT_DESC or EVENT_UPDATE; NULL when unnamed */
        uint64_t *ids;               /* owned: the sample ids of its fds */
        uint32_t nr_ids;
};

struct perf_data_build_id {
        int32_t pid;   /* -1: the kernel's */
        uint16_t misc; /* PERF_RECORD_MISC_KERNEL / _USER ... */
        uint8_t size;  /* bytes of id in use (20 when the file does not say) */
        uint8_t id[20];
        char *path; /* owned */
};

struct perf_data_pmu {
        uint32_t type; /* perf_event_attr.type */
        char *name;    /* owned */
};

struct perf_data_group {
        char *name;          /* owned; may be "" */
        uint32_t leader;     /* the index of the leader in the events */
        uint32_t nr_members; /* the leader included */
};

/* The feature sections (file mode) or HEADER_FEATURE records (pipe mode) read so far. Strings
   are owned, NULL when absent. */
struct perf_data_info {
        bool is_pipe;
        uint64_t features[PERF_DATA_FEAT_MAX / 64]; /* bits of the features found */
        char *hostname, *osrelease, *version, *arch, *cpudesc, *cpuid;
        char *cmdline; /* perf's arguments joined by spaces */
        uint32_t nr_cpus_online, nr_cpus_avail;
        uint64_t total_mem_kb;
        uint64_t clockid; /* CLOCKID feature (resolution of the clock, ns), 0 when absent */
        bool has_clock_data;
        uint32_t clock_data_clockid; /* the clockid of the session clock */
        uint64_t clock_wall_ns;      /* CLOCK_REALTIME at the reference point */
        uint64_t clock_ref_ns;       /* the session clock at the same point */
        uint32_t compression_type;   /* 1 zstd */
        uint32_t compression_level;
        uint32_t compression_mmap_len;
        struct perf_data_build_id *build_ids; /* owned */
        uint32_t nr_build_ids;
        struct perf_data_pmu *pmus; /* owned */
        uint32_t nr_pmus;
        struct perf_data_group *groups; /* owned */
        uint32_t nr_groups;
        const uint8_t *tracing_data; /* TRACING_DATA (borrowed from the file's bytes), or NULL */
        size_t tracing_size;
};

/* One record of the data section. */
struct perf_data_record {
        const uint8_t *data; /* the record, header included; borrowed until the next call.
                                Not aligned: read it with le_get* or copy it */
        uint32_t size;
        uint32_t type;
        uint16_t misc;
        uint64_t offset;       /* in the file: of the record, or of the COMPRESSED record that
                                  held it */
        uint64_t inner_offset; /* decompressed records: the offset in the decompressed stream */
        bool is_decompressed;
        int32_t event; /* the event it belongs to (index in the events), -1 when unknown */
};

struct perf_data;

/* True when data starts with perf.data's magic ("PERFILE2", either byte order). */
bool perf_data_is_perf_data(const uint8_t *data, size_t size);

/* Opens a reader over a perf.data file in memory (data is borrowed for the reader's life):
   the header, the attrs and the feature sections of a file-mode file; a pipe-mode file's attrs
   and features come from its records, as perf_data_next reaches them. Returns 0, or -EINVAL
   (not a perf.data file), -EPROTONOSUPPORT (a big-endian or version 1 file) or -EBADMSG (the
   header or the attrs are damaged) with err filled. */
int perf_data_open_mem(struct perf_data **out, const uint8_t *data, size_t size,
                       struct err_msg *err);

/* True when path is a perf.data: a file that starts with the magic, or a perf.data directory
   (perf record --threads) whose regular file data does. Nothing but path and data is opened. */
bool perf_data_path_is_perf_data(const char *path);

/* Opens a file (mapped read-only), a perf.data directory (its data file, then its data.N files'
   records, each mapped), or standard input when path is "-" (read to its end). Returns 0 or
   -errno with err filled. */
int perf_data_open_file(struct perf_data **out, const char *path, struct err_msg *err);

/* Closes the reader and everything it owns. NULL is fine. */
void perf_data_close(struct perf_data *pd);

/* The next record in file order: each record of a COMPRESSED(2) record follows it. Records
   perf's tool adds (HEADER_ATTR, HEADER_FEATURE, ID_INDEX, EVENT_UPDATE) are applied to the
   events and the info before they are returned. Returns 1 with *rec filled, 0 at the end, or
   -EBADMSG with err filled where the rest cannot be read (a record's size past the end or
   below its header; later calls return 0). Damage the reader can step over (a compressed
   record that does not decompress, a bad attr or feature record) is skipped and left in
   perf_data_last_warning. */
int perf_data_next(struct perf_data *pd, struct perf_data_record *rec, struct err_msg *err);

/* Starts the records again from the first. */
void perf_data_rewind(struct perf_data *pd);

/* The most recent damage stepped over, with its offset; msg is empty when there was none. */
const struct err_msg *perf_data_last_warning(const struct perf_data *pd);
/* How many times damage was stepped over. */
uint64_t perf_data_nr_warnings(const struct perf_data *pd);

const struct perf_data_info *perf_data_info(const struct perf_data *pd);

/* The events known so far (all of them for a file-mode file). */
uint32_t perf_data_nr_events(const struct perf_data *pd);
const struct perf_data_event *perf_data_event(const struct perf_data *pd, uint32_t i);

/* The index of the event with sample id id, or -1. */
int32_t perf_data_event_by_id(const struct perf_data *pd, uint64_t id);

/* Calls fn with each tracepoint format (the text of events/SYSTEM/NAME/format) of a
   TRACING_DATA (perf_data_info's tracing_data). Returns 0, -EBADMSG (damaged: the formats
   before the damage were given) or -EPROTONOSUPPORT (big-endian). */
typedef void (*perf_data_format_fn)(void *ctx, const char *system, const char *text, size_t len);
int perf_data_tracing_formats(const uint8_t *data, size_t size, perf_data_format_fn fn, void *ctx);

/* The name of a record type (PERF_RECORD_* or perf's own), "UNKNOWN" otherwise. */
const char *perf_data_type_name(uint32_t type);

/* A name for an event: its name in the file, else perf's name for its type and config with
   perf's modifiers ("cycles:u", "cpu-clock", "raw 0x1c2", "tracepoint 312"). */
const char *perf_data_event_name(const struct perf_data_event *ev, char *buf, size_t size);

#endif
