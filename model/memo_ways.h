/* SPDX-License-Identifier: MIT */
/* memo_ways.h (internal to model/): the stack memos of two slots a hash (calltree.c,
   hot_memo.c). A hash names a pair of slots and its stack is in either; a bit a pair says which
   of the two was used last, so that a new stack takes the one used less lately. A memo of one
   slot a hash lost the stacks whose hashes met at every turn (two thirds of a busy live
   screen's walks). */
#ifndef ETWTOP_MODEL_MEMO_WAYS_H
#define ETWTOP_MODEL_MEMO_WAYS_H

#include <stdbool.h>
#include <stdint.h>

/* The words of the bits of nr_pairs pairs of slots (a multiple of 64), all zero at first. */
#define MEMO_WAYS_WORDS(nr_pairs) ((nr_pairs) / 64)

/* Slot way (0, 1) of pair used now. */
static inline void memo_ways_used(uint64_t *second_recent, uint32_t pair, uint32_t way)
{
        uint64_t *word = &second_recent[pair >> 6], bit = 1ull << (pair & 63);
        *word = way ? *word | bit : *word & ~bit;
}

/* The slot of pair that a stack not in it takes, marked used: stale (0, 1), where a memo of the
   same hash no longer holds good there, else a free one, else the one used less lately. */
static inline uint32_t memo_ways_take(uint64_t *second_recent, uint32_t pair, int stale,
                                      bool is_free0, bool is_free1)
{
        uint32_t way = stale >= 0 ? (uint32_t)stale
                       : is_free0 ? 0
                       : is_free1 ? 1
                                  : (uint32_t) !(second_recent[pair >> 6] >> (pair & 63) & 1);
        memo_ways_used(second_recent, pair, way);
        return way;
}

#endif
