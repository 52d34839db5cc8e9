/* SPDX-License-Identifier: MIT */
/* pending_slots.h (internal to model/): the memo slots that hold samples not yet counted along
   their paths, so that settling them all visits those and not the whole memo. */
#ifndef ETWTOP_MODEL_PENDING_SLOTS_H
#define ETWTOP_MODEL_PENDING_SLOTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "util/xalloc.h"

/* The call tree's memos (49,152 slots, 1.8 MB) and the hot functions' (4,096, 688 KB) were
   settled at every refresh by a look at every slot, a cache miss each: the call tree's alone was
   3.7% of a live screen's and its host's CPU under top.sh's samples load, where a few hundred
   slots held samples. A slot is listed when its count of waiting samples leaves 0 (a slot
   settled and filled again is listed twice, which settling again does nothing to); past cap
   listings the list gives up and the next settle looks at every slot, as before. Zeroed: empty,
   its array made at the first listing. */
struct pending_slots {
        uint32_t *slots; /* owned */
        uint32_t nr, cap;
        bool is_overflow; /* more were listed than cap: every slot must be looked at */
};

/* Lists slot, whose waiting samples left 0, among cap slots at most. */
static inline void pending_slots_add(struct pending_slots *l, uint32_t slot, uint32_t cap)
{
        if (l->nr < l->cap) {
                l->slots[l->nr++] = slot;
                return;
        }
        if (l->is_overflow)
                return;
        if (!l->slots) {
                l->cap = cap;
                l->slots = xmalloc((size_t)cap * sizeof(*l->slots));
                l->slots[l->nr++] = slot;
                return;
        }
        l->is_overflow = true;
}

/* Whether a settle must look at every slot (the list overflowed), rather than the nr listed. */
static inline bool pending_slots_all(const struct pending_slots *l)
{
        return l->is_overflow;
}

/* The slots a settle visits of a memo of cap slots: how many, and the i-th (every slot where
   the list overflowed, else those listed). */
static inline uint32_t pending_slots_nr(const struct pending_slots *l, uint32_t cap)
{
        return l->is_overflow ? cap : l->nr;
}

static inline uint32_t pending_slots_at(const struct pending_slots *l, uint32_t i)
{
        return l->is_overflow ? i : l->slots[i];
}

/* After a settle (or a reset of the memo): nothing listed. */
static inline void pending_slots_clear(struct pending_slots *l)
{
        l->nr = 0;
        l->is_overflow = false;
}

static inline void pending_slots_free(struct pending_slots *l)
{
        free(l->slots);
        *l = (struct pending_slots){0};
}

#endif
