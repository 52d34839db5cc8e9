/* SPDX-License-Identifier: MIT */
/* perf_data_zstd.c: the zstd stream of a perf.data file's COMPRESSED and COMPRESSED2 records
   (perf record -z): one decompression context across them, as perf writes one stream. */
#include "perf_data_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

#ifdef ETWTOP_HAVE_ZSTD
#include <zstd.h>

struct perf_data_zstd {
        ZSTD_DStream *ds;
};

static bool is_zero(const uint8_t *p, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (p[i])
                        return false;
        return true;
}

void perf_data_zstd_free(struct perf_data_zstd *z)
{
        if (!z)
                return;
        ZSTD_freeDStream(z->ds);
        free(z);
}

int perf_data_zstd_append(struct perf_data *pd, const uint8_t *in, size_t size, uint64_t offset)
{
        if (!pd->zstd) {
                pd->zstd = xcalloc(1, sizeof(*pd->zstd));
                pd->zstd->ds = ZSTD_createDStream();
                if (!pd->zstd->ds)
                        abort(); /* out of memory */
                ZSTD_initDStream(pd->zstd->ds);
        }
        ZSTD_inBuffer ib = {in, size, 0};
        size_t start = pd->dlen;
        while (ib.pos < ib.size) {
                if (pd->dlen - start >= PERF_DATA_MAX_DECOMPRESSED) {
                        perf_data_warn(pd, offset,
                                       "compressed record at %llu: decompresses to more than "
                                       "%u bytes; skipped",
                                       (unsigned long long)offset, PERF_DATA_MAX_DECOMPRESSED);
                        goto drop;
                }
                if (pd->dcap - pd->dlen < (1u << 16)) {
                        pd->dcap = pd->dcap ? 2 * pd->dcap : (1u << 20);
                        pd->dbuf = xrealloc(pd->dbuf, pd->dcap);
                }
                ZSTD_outBuffer ob = {pd->dbuf + pd->dlen, pd->dcap - pd->dlen, 0};
                size_t in_before = ib.pos;
                size_t rc = ZSTD_decompressStream(pd->zstd->ds, &ob, &ib);
                pd->dlen += ob.pos;
                if (ZSTD_isError(rc)) {
                        perf_data_warn(pd, offset, "compressed record at %llu: zstd: %s; skipped",
                                       (unsigned long long)offset, ZSTD_getErrorName(rc));
                        ZSTD_initDStream(pd->zstd->ds);
                        goto drop;
                }
                if (ob.pos == 0 && ib.pos == in_before)
                        break; /* no progress: nothing more comes of these bytes */
                if (rc == 0 && is_zero((const uint8_t *)ib.src + ib.pos, ib.size - ib.pos))
                        break; /* a frame ended; the rest is padding to 8 bytes */
        }
        return 0;
drop:
        pd->dlen = start;
        return -EBADMSG;
}

#else

struct perf_data_zstd {
        int unused;
};

void perf_data_zstd_free(struct perf_data_zstd *z)
{
        free(z);
}

int perf_data_zstd_append(struct perf_data *pd, const uint8_t *in, size_t size, uint64_t offset)
{
        (void)in;
        (void)size;
        perf_data_warn(pd, offset,
                       "compressed record at %llu: etwtop was built without libzstd; skipped",
                       (unsigned long long)offset);
        return -ENOTSUP;
}

#endif
