/* SPDX-License-Identifier: MIT */
/* perf_data_int.h: the perf.data reader's state, shared by its files (perf_data.c: header,
   attrs and records; perf_data_feat.c: feature sections; perf_data_zstd.c: decompression). */
#ifndef ETWTOP_PERF_DATA_INT_H
#define ETWTOP_PERF_DATA_INT_H

#include <stdarg.h>

#include "perf_data.h"

/* The most bytes one compressed record may decompress to (perf writes one ring's worth, the
   COMPRESSED feature's mmap_len, 512 KiB by default). */
#define PERF_DATA_MAX_DECOMPRESSED (64u << 20)

struct perf_data_id {
        uint64_t id;
        uint32_t event;
};

struct perf_data_zstd;

/* A data.N file of a perf.data directory (perf_data_dir.c): records only. */
struct perf_data_part {
        uint32_t number; /* N */
        char name[24];
        void *map; /* owned: size bytes (NULL: an empty file) */
        size_t size;
};

struct perf_data {
        const uint8_t *data; /* borrowed (from the caller, or map/buf below) */
        size_t size;
        void *map; /* owned: the file's mapping, map_size bytes */
        size_t map_size;
        uint8_t *buf; /* owned: standard input's bytes */
        /* a perf.data directory's data.N files, read after the data file's records: part is
           the one being read, 0 while data's are (then parts[part - 1]); the data file's own
           bytes and data section kept in main_* */
        struct perf_data_part *parts; /* owned, nr_parts */
        uint32_t nr_parts, part;
        const uint8_t *main_data;
        size_t main_size;
        uint64_t main_start, main_end, main_declared_end;
        char where[32]; /* "" in the data file, else "data.N: " for messages */

        bool is_pipe;
        uint64_t data_start, data_end; /* the records' bytes */
        uint64_t declared_end;         /* where the header says they end (past size: truncated) */
        uint64_t pos;
        bool is_done;

        struct perf_data_event *events; /* owned, nr_events */
        uint32_t nr_events, cap_events;
        struct perf_data_id *ids; /* owned, sorted by id when !is_ids_dirty */
        uint32_t nr_ids, cap_ids;
        bool is_ids_dirty;

        struct perf_data_info info;
        struct err_msg warning;
        uint64_t nr_warnings;

        struct perf_data_zstd *zstd; /* owned; made at the first compressed record */
        uint8_t *dbuf;               /* owned: decompressed bytes not yet returned */
        size_t dlen, dcap, dpos;
        uint64_t dbase;       /* the decompressed stream's offset of dbuf[0] */
        uint64_t comp_offset; /* the file offset of the compressed record being returned */
};

void perf_data_error_set(struct err_msg *err, uint64_t offset, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
void perf_data_warn(struct perf_data *pd, uint64_t offset, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* Replaces an event's name. */
void perf_data_set_name(struct perf_data_event *ev, const char *name, size_t len);
/* The tracepoint events no EVENT_DESC or EVENT_UPDATE named (a pipe-mode file of perf before
   4.x): named SYSTEM:NAME from the TRACING_DATA's format of their id, as perf names them. */
void perf_data_name_tracepoints(struct perf_data *pd);

/* Parses feature feat's bytes p[0..size) (at file offset offset) into pd's info and events.
   Returns 0 or -EBADMSG with a warning left. */
int perf_data_feat_parse(struct perf_data *pd, uint32_t feat, const uint8_t *p, size_t size,
                         uint64_t offset);
/* A BUILD_ID feature's or HEADER_BUILD_ID record's entry (header included). Returns 0 or
   -EBADMSG. */
int perf_data_build_id_add(struct perf_data *pd, const uint8_t *p, size_t size);
void perf_data_info_free(struct perf_data_info *info);

/* Decompresses one compressed record's payload and appends it to pd->dbuf. Returns 0, or
   -EBADMSG (not zstd, damaged, too large) / -ENOTSUP (built without libzstd) with a warning. */
int perf_data_zstd_append(struct perf_data *pd, const uint8_t *in, size_t size, uint64_t offset);
void perf_data_zstd_free(struct perf_data_zstd *z);

/* A perf.data directory dfd (named path, for messages): its data file mapped (*map, *size) and
   its data.N files in *parts, by N. Returns 0, or -errno with err filled (nothing left open). */
int perf_data_dir_open(int dfd, const char *path, void **map, size_t *size,
                       struct perf_data_part **parts, uint32_t *nr_parts, struct err_msg *err);
void perf_data_dir_free(struct perf_data_part *parts, uint32_t nr);

#endif
