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
 * 3 matches a record for 7 of the 8 processors, where a tree of 16 leaves played 4).
 *
 * Narrow keys: while every entry's timestamp lies in [base, base + limit) (base: the least at
 * the build, at most 2^64 - 1 - limit; limit: 2^(64 - shift) - 1, shift the bits of a stream's
 * rank, so a tree of one stream is always wide), the matches are
 * played on 64-bit keys (timestamp - base) << shift | stream, which order as the entries do:
 * a load, a comparison and two selects a match where the 128-bit entries take twice as many
 * instructions. A done stream's key is limit << shift | stream. The first record outside the
 * range turns the tree wide for good: its n entries are node64[0 .. n), rebuilt as entries. */
struct etl_tourney {
        etl_tourney_entry *node; /* owned: nr_leaves entries (wide) */
        etl_tourney_entry *win;  /* owned: 2 x nr_leaves, the leaves and the build's winners */
        uint64_t *node64;        /* owned: nr_leaves keys (narrow) */
        uint64_t base;           /* narrow: the timestamp of key 0 */
        uint64_t limit;          /* narrow: (timestamp - base) must be below it */
        uint64_t mask;           /* narrow: the stream's bits of a key */
        uint64_t done_min;       /* narrow: the least done key (limit << shift) */
        uint32_t *leaf_of;       /* owned: nr_leaves, stream i's leaf node (etl_tourney_leaf) */
        uint32_t shift;          /* narrow: the bits of a stream's rank */
        uint32_t nr_leaves;
        bool is_wide;
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

static inline uint32_t etl_tourney_stream(etl_tourney_entry e)
{
        return (uint32_t)e & ~ETL_TOURNEY_DONE;
}

static inline bool etl_tourney_is_done(etl_tourney_entry e)
{
        return ((uint32_t)e & ETL_TOURNEY_DONE) != 0;
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
        t->node64 = calloc(n, sizeof(*t->node64));
        t->leaf_of = calloc(n, sizeof(*t->leaf_of));
        t->nr_leaves = n;
        t->shift = 0;
        while (t->shift < 32 && (1ull << t->shift) < n)
                t->shift++;
        t->mask = (1ull << t->shift) - 1;
        t->limit = UINT64_MAX >> t->shift;
        t->done_min = t->limit << t->shift;
        t->base = 0;
        t->is_wide = true;
        if (!t->node || !t->win || !t->node64 || !t->leaf_of)
                return -ENOMEM;
        for (uint32_t i = 0; i < n; i++) {
                etl_tourney_set(t, i, etl_tourney_done(i));
                t->leaf_of[i] = etl_tourney_leaf(t, i);
        }
        return 0;
}

/* Frees t's arrays; a zeroed or half-made t is accepted. */
static inline void etl_tourney_free(struct etl_tourney *t)
{
        free(t->node);
        free(t->win);
        free(t->node64);
        free(t->leaf_of);
        t->leaf_of = NULL;
        t->node = NULL;
        t->win = NULL;
        t->node64 = NULL;
        t->nr_leaves = 0;
}

/* e's narrow key in *key; false where e's timestamp is out of the narrow range. */
static inline bool etl_tourney_key(const struct etl_tourney *t, etl_tourney_entry e, uint64_t *key)
{
        uint32_t i = etl_tourney_stream(e);
        if (etl_tourney_is_done(e)) {
                *key = t->done_min | i;
                return true;
        }
        uint64_t rel = (uint64_t)(e >> 32) - t->base;
        if (rel >= t->limit)
                return false;
        *key = rel << t->shift | i;
        return true;
}

/* The entry of narrow key k. */
static inline etl_tourney_entry etl_tourney_entry_of(const struct etl_tourney *t, uint64_t k)
{
        uint32_t i = (uint32_t)(k & t->mask);
        uint64_t rel = k >> t->shift;
        return k >= t->done_min ? etl_tourney_done(i) : etl_tourney_make(t->base + rel, i);
}

/* Plays every match of the leaves set on the entries (node[]). */
static inline void etl_tourney_play_all(struct etl_tourney *t)
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

/* Plays every match of the leaves set (etl_tourney_set; a leaf never set is done), on narrow
 * keys when every record's timestamp is within their range of the least. */
static inline void etl_tourney_build(struct etl_tourney *t)
{
        uint32_t n = t->nr_leaves;
        etl_tourney_play_all(t);
        /* the least timestamp is the winner's (a done winner: every stream is done) */
        t->base = etl_tourney_is_done(t->node[0]) ? 0 : (uint64_t)(t->node[0] >> 32);
        /* a timestamp before base makes (timestamp - base) wrap to at least 2^64 - base, which
         * is at least limit when base + limit does not overflow: out of range, as it must be */
        t->is_wide = t->base > UINT64_MAX - t->limit;
        for (uint32_t i = 0; i < n && !t->is_wide; i++)
                t->is_wide = !etl_tourney_key(t, t->node[i], &t->node64[i]);
}

/* Turns a narrow tree wide: its entries are node64[0 .. n), node64[0] the winner. */
static inline void etl_tourney_widen(struct etl_tourney *t)
{
        for (uint32_t i = 0; i < t->nr_leaves; i++) {
                etl_tourney_entry e = etl_tourney_entry_of(t, t->node64[i]);
                etl_tourney_set(t, etl_tourney_stream(e), e);
        }
        etl_tourney_play_all(t);
        t->is_wide = true;
}

/* The winner's stream. */
static inline uint32_t etl_tourney_top_stream(const struct etl_tourney *t)
{
        return t->is_wide ? etl_tourney_stream(t->node[0]) : (uint32_t)(t->node64[0] & t->mask);
}

/* Whether every stream is done. */
static inline bool etl_tourney_top_is_done(const struct etl_tourney *t)
{
        return t->is_wide ? etl_tourney_is_done(t->node[0]) : t->node64[0] >= t->done_min;
}

/* The winner's stream in *stream, and true; false when every stream is done. */
static inline bool etl_tourney_winner(const struct etl_tourney *t, uint32_t *stream)
{
        if (__builtin_expect(!t->is_wide, 1)) {
                uint64_t k = t->node64[0];
                *stream = (uint32_t)(k & t->mask);
                return k < t->done_min;
        }
        *stream = etl_tourney_stream(t->node[0]);
        return !etl_tourney_is_done(t->node[0]);
}

/* The winner: the least entry. */
static inline etl_tourney_entry etl_tourney_top(const struct etl_tourney *t)
{
        return t->is_wide ? t->node[0] : etl_tourney_entry_of(t, t->node64[0]);
}

/* The winner's stream has a new entry e (its next record, or done): the matches on its path are
 * played again and the root holds the new winner. */
static inline void etl_tourney_replace_top(struct etl_tourney *t, etl_tourney_entry e)
{
        uint32_t leaf = t->leaf_of[etl_tourney_stream(e)];
        if (!t->is_wide) {
                uint64_t k;
                if (__builtin_expect(etl_tourney_key(t, e, &k), 1)) {
                        uint64_t *node = t->node64;
                        for (uint32_t i = leaf >> 1; i; i >>= 1) {
                                uint64_t loser = node[i];
                                bool is_lost = loser < k;
                                node[i] = is_lost ? k : loser;
                                k = is_lost ? loser : k;
                        }
                        node[0] = k;
                        return;
                }
                etl_tourney_widen(t);
        }
        etl_tourney_entry *node = t->node;
        for (uint32_t i = leaf >> 1; i; i >>= 1) {
                etl_tourney_entry loser = node[i];
                bool is_lost = loser < e;
                node[i] = is_lost ? e : loser;
                e = is_lost ? loser : e;
        }
        node[0] = e;
}

/* The same for the winner's stream i: its next record's timestamp, or done when !has_record. */
static inline void etl_tourney_replace_top_at(struct etl_tourney *t, uint32_t i, bool has_record,
                                              uint64_t timestamp)
{
        uint64_t rel = timestamp - t->base;
        if (__builtin_expect(!t->is_wide && (!has_record || rel < t->limit), 1)) {
                uint64_t k = has_record ? rel << t->shift | i : t->done_min | i;
                uint64_t *node = t->node64;
                for (uint32_t j = t->leaf_of[i] >> 1; j; j >>= 1) {
                        uint64_t loser = node[j];
                        bool is_lost = loser < k;
                        node[j] = is_lost ? k : loser;
                        k = is_lost ? loser : k;
                }
                node[0] = k;
                return;
        }
        etl_tourney_replace_top(t,
                                has_record ? etl_tourney_make(timestamp, i) : etl_tourney_done(i));
}

#endif /* ETWTOP_BACKEND_ETL_TOURNEY_H */
