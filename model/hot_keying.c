/* SPDX-License-Identifier: MIT */
/* hot_keying.c: owns how the hot functions' places and rows are keyed (hot.h): the places'
   keys, the rows' grouping, the process key of a report's rows per process name and the comm
   key of its rows per perf comm. */
#include "hot_impl.h"

void hot_set_place_keys(struct hot *h, enum hot_grouping widest)
{
        if (h->place_keys == widest)
                return;
        /* the frame memo's slots are of places keyed the old way */
        hot_memo_settle_all(h);
        h->epoch++;
        h->place_keys = widest;
}

void hot_set_process_key(struct hot *h, uint32_t (*key)(void *ctx, uint32_t pid), void *ctx)
{
        h->process_key = key;
        h->process_key_ctx = ctx;
}

void hot_set_comm_key(struct hot *h, uint32_t (*key)(void *ctx, uint32_t pid, uint32_t tid),
                      void (*name)(void *ctx, uint32_t id, char *buf, size_t size), void *ctx)
{
        h->comm_key = key;
        h->comm_name = name;
        h->comm_key_ctx = ctx;
        if (key)
                hot_set_place_keys(h, HOT_BY_THREAD);
}

bool hot_comm_name(const struct hot *h, uint32_t id, char *buf, size_t size)
{
        if (!h->comm_name)
                return false;
        h->comm_name(h->comm_key_ctx, id, buf, size);
        return true;
}

enum hot_grouping hot_grouping_of(const struct hot *h)
{
        return h->grouping;
}

void hot_set_grouping(struct hot *h, enum hot_grouping grouping)
{
        if (h->grouping != grouping)
                h->nr_rows_cached = 0;
        h->grouping = grouping;
}
