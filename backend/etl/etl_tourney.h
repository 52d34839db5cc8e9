/* SPDX-License-Identifier: MIT */
/* etl_tourney.h: the .etl reader's merge of its per-processor streams: a tournament tree of
 * losers over (timestamp, stream), whose winner is the stream that gives the next record. */
#ifndef ETWTOP_BACKEND_ETL_TOURNEY_H
#define ETWTOP_BACKEND_ETL_TOURNEY_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* An entry: the timestamp in the high 64 bits, the stream's rank in the low 32, so that one
 * unsigned comparison orders by timestamp, then by stream (ties go to the lower stream, as the
 * reader's order has always been). A stream without a record ranks ETL_TOURNEY_DONE | stream
 * at the greatest timestamp: after every record, a record at that timestamp included. */
typedef unsigned __int128 etl_tourney_entry;
#define ETL_TOURNEY_DONE 0x80000000u

/* The tree over nr_leaves leaves, one a stream, in the implicit complete binary tree of
 * 2 x nr_leaves - 1 nodes (node i's children 2i and 2i + 1, the leaves at nr_leaves ..
 * 2 x nr_leaves - 1): node[0] holds the winner, node[1 .. nr_leaves) the loser of the match
 * played there. Replacing the winner's entry plays the matches on its leaf's path, each a
 * comparison and two selects without a branch: the streams' records interleave (half the
 * records of the x64 sample come from another processor than the record before), and a
 * binary heap's sift mispredicts its branches on them. A leaf's path is floor(log2(n)) or one
 * more long; the two streams that start the order take the last two leaves, which are the
 * deepest when n is a power of two plus one (8 processors and the header buffer's stream 0:
 * 3 matches a record for 7 of the 8 processors, where a tree of 16 leaves played 4). */
struct etl_tourney {
        etl_tourney_entry *node; /* owned: nr_leaves entries */
        etl_tourney_entry *win;  /* owned: 2 x nr_leaves, the leaves and the build's winners */
        uint32_t nr_leaves;
};

/* The node of stream i's leaf. */
static inline uint32_t etl_tourney_leaf(const struct etl_tourney *t, uint32_t i)
{
        uint32_t n = t->nr_leaves, j = i + n - 2;
        if (n < 2)
                return n + i;
        return n + (j >= n ? j - n : j);
}

static inline etl_tourney_entry etl_tourney_make(uint64_t timestamp, uint32_t stream)
{
        return (etl_tourney_entry)timestamp << 32 | stream;
}

static inline etl_tourney_entry etl_tourney_done(uint32_t stream)
{
        return (etl_tourney_entry)UINT64_MAX << 32 | (ETL_TOURNEY_DONE | stream);
}

/* Sets stream i's leaf before a build. */
static inline void etl_tourney_set(struct etl_tourney *t, uint32_t i, etl_tourney_entry e)
{
        t->win[etl_tourney_leaf(t, i)] = e;
}

/* A tree for nr_streams streams (at least 1; not built yet: etl_tourney_build): 0, or -ENOMEM. */
static inline int etl_tourney_init(struct etl_tourney *t, uint32_t nr_streams)
{
        uint32_t n = nr_streams ? nr_streams : 1;
        t->node = calloc(n, sizeof(*t->node));
        t->win = calloc(2 * (size_t)n, sizeof(*t->win));
        t->nr_leaves = n;
        if (!t->node || !t->win)
                return -ENOMEM;
        for (uint32_t i = 0; i < n; i++)
                etl_tourney_set(t, i, etl_tourney_done(i));
        return 0;
}

/* Frees t's arrays; a zeroed or half-made t is accepted. */
static inline void etl_tourney_free(struct etl_tourney *t)
{
        free(t->node);
        free(t->win);
        t->node = NULL;
        t->win = NULL;
        t->nr_leaves = 0;
}

/* Plays every match of the leaves set (etl_tourney_set; a leaf never set is done). */
static inline void etl_tourney_build(struct etl_tourney *t)
{
        uint32_t n = t->nr_leaves;
        etl_tourney_entry *win = t->win;
        for (uint32_t i = n - 1; i >= 1; i--) {
                etl_tourney_entry a = win[2 * i], b = win[2 * i + 1];
                win[i] = a < b ? a : b;
                t->node[i] = a < b ? b : a;
        }
        t->node[0] = win[1];
}

/* The winner: the least entry. */
static inline etl_tourney_entry etl_tourney_top(const struct etl_tourney *t)
{
        return t->node[0];
}

static inline uint32_t etl_tourney_stream(etl_tourney_entry e)
{
        return (uint32_t)e & ~ETL_TOURNEY_DONE;
}

static inline bool etl_tourney_is_done(etl_tourney_entry e)
{
        return ((uint32_t)e & ETL_TOURNEY_DONE) != 0;
}

/* The winner's stream has a new entry e (its next record, or done): the matches on its path are
 * played again and node[0] is the new winner. */
static inline void etl_tourney_replace_top(struct etl_tourney *t, etl_tourney_entry e)
{
        etl_tourney_entry *node = t->node;
        for (uint32_t i = etl_tourney_leaf(t, etl_tourney_stream(e)) >> 1; i; i >>= 1) {
                etl_tourney_entry loser = node[i];
                bool is_lost = loser < e;
                node[i] = is_lost ? e : loser;
                e = is_lost ? loser : e;
        }
        node[0] = e;
}

#endif /* ETWTOP_BACKEND_ETL_TOURNEY_H */
