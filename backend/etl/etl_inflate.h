/* SPDX-License-Identifier: MIT */
/* etl_inflate.h: a file's compressed buffers decompressed ahead of the reader, on worker
 * threads, in the order the reader is expected to need them. */
#ifndef ETWTOP_BACKEND_ETL_INFLATE_H
#define ETWTOP_BACKEND_ETL_INFLATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xpress.h"

/* One compressed buffer: its bytes in the file (the 72-byte header, stored as it is, then the
   XPRESS stream) and its size once decompressed, header included. */
struct etl_inflate_job {
        const uint8_t *src;
        uint32_t src_size; /* BufferSize, or what the file holds of it */
        uint32_t out_size; /* Offset: the filled bytes, header included */
};

/* What xpress_decompress said of a job: rc 0 or its negative errno, the bytes it wrote after
   the header, and where it failed. */
struct etl_inflate_result {
        int rc;
        size_t out_len;
        struct xpress_error xe;
};

struct etl_inflate;

/* The jobs, copied, in the order they are expected to be taken (a job's number is its place in
   it); src stays borrowed until etl_inflate_free. At most window results wait decompressed at
   once. NULL when out of memory. */
struct etl_inflate *etl_inflate_new(const struct etl_inflate_job *jobs, uint32_t nr_jobs,
                                    uint32_t window);

/* The most workers etl_inflate_start runs. */
#define ETL_INFLATE_MAX_WORKERS 16

/* Starts nr_workers workers (ETL_INFLATE_MAX_WORKERS at most), which decompress the jobs not
   yet taken in their order, each the next one nobody has started; without them (none could
   start, or none was asked for) etl_inflate_take decompresses each job itself. Returns whether
   a worker runs. */
bool etl_inflate_start(struct etl_inflate *q, uint32_t nr_workers);

/* Job number job's decompressed bytes, header first, into *buf: the caller's buffer of *cap bytes
   (NULL and 0 for none) is handed over in exchange for the worker's, or grown and written here
   when the worker has not come to the job, or is still on it when the taker has nothing else to
   decompress (its worker's result is then dropped). The same result either way. A job is taken
   once until etl_inflate_stop. Returns 0, or -ENOMEM (the caller's buffer kept). */
int etl_inflate_take(struct etl_inflate *q, uint32_t job, uint8_t **buf, uint32_t *cap,
                     struct etl_inflate_result *res);

/* Who decompressed the jobs taken since etl_inflate_new or the last etl_inflate_stop. */
struct etl_inflate_stats {
        uint32_t nr_ahead;  /* by a worker, before it was taken */
        uint32_t nr_here;   /* by the taking thread: none had started it, or it helped with it */
        uint32_t nr_waited; /* takes that found their job under way (they waited, or helped) */
};

void etl_inflate_get_stats(const struct etl_inflate *q, struct etl_inflate_stats *st);

/* For tests, before etl_inflate_start: fn(job, arg) is called by a worker with the number of
   each job it is about to decompress, outside any lock (a test holds a worker there to play one
   that its processor took away). */
typedef void (*etl_inflate_hook_fn)(uint32_t job, void *arg);
void etl_inflate_set_worker_hook(struct etl_inflate *q, etl_inflate_hook_fn fn, void *arg);

/* Stops the workers and forgets their results: every job can be taken again (a rewind). */
void etl_inflate_stop(struct etl_inflate *q);

void etl_inflate_free(struct etl_inflate *q);

#endif /* ETWTOP_BACKEND_ETL_INFLATE_H */
