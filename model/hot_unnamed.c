/* SPDX-License-Identifier: MIT */
/* hot_unnamed.c: owns the unnamed places' cap: on a live view, past it, the lightest addresses
   of images that name no function there fold into one place of their module (hot.h,
   HOT_UNNAMED_MAX). */
#include "hot_impl.h"
#include "sort_select.h"

#include <stdlib.h>

/* Whether e is a place the cap counts: an address of an image whose final answer names no
   function there (a stripped library's internal functions), not a module's rest already. A
   place not answered yet (counted since the last build of the rows, or none made: a paused
   screen) is asked now, as a build would. */
static bool is_unnamed(struct hot *h, struct entry *e)
{
        if (!e->module || e->rel == HOT_REL_UNNAMED_REST)
                return false;
        if (!e->answer) {
                struct sym_frame f;
                hot_place_answer(h, e, (struct sym_loc){e->module, e->rel}, &f);
        }
        return e->answer == SYM_NO_SYMBOL + 1 && !e->epoch;
}

/* hot_place_cmp of places a and b, slots of the table in ctx (sort_select.h). */
static int unnamed_order(const void *ctx, uint32_t a, uint32_t b)
{
        const struct entry *s = ctx;
        return hot_place_cmp(&s[a], &s[b]);
}

void hot_fold_unnamed(struct hot *h)
{
        /* a trace read keeps every address, as perf report does; a live view looks again once
           the places grew by a sixteenth of the cap since its last look (a decay that dropped
           places moves that mark down with them: fewer places hold no more unnamed ones) */
        if (!sym_store_is_live(h->store) || h->nr < h->unnamed_max || h->nr < h->unnamed_scan_nr) {
                h->unnamed_scan_nr = h->nr;
                return;
        }
        if (h->nr - h->unnamed_scan_nr < h->unnamed_max / 16)
                return;
        h->unnamed_scan_nr = h->nr;
        uint32_t n = 0, cap = 0, *slots = NULL;
        for (uint32_t w = 0; w <= h->last / 64; w++)
                for (uint64_t bits = h->used[w]; bits; bits &= bits - 1) {
                        uint32_t i = w * 64 + (uint32_t)__builtin_ctzll(bits);
                        if (!h->slots[i].is_used || !is_unnamed(h, &h->slots[i]))
                                continue;
                        if (n == cap) {
                                cap = cap ? cap * 2 : 1024;
                                slots = xrealloc(slots, cap * sizeof(*slots));
                        }
                        slots[n++] = i;
                }
        if (n <= h->unnamed_max) {
                free(slots);
                return;
        }
        /* the heaviest three quarters of the cap stay (a fold a while, not one a second); the
           others' keys are taken before any is deleted (a deletion moves the places after it) */
        uint32_t keep = h->unnamed_max - h->unnamed_max / 4;
        select_u32(slots, n, keep, unnamed_order, h->slots);
        uint32_t nr_fold = n - keep;
        struct entry *fold = xmalloc(nr_fold * sizeof(*fold));
        for (uint32_t i = 0; i < nr_fold; i++)
                fold[i] = h->slots[slots[keep + i]];
        free(slots);
        for (uint32_t i = 0; i < nr_fold; i++) {
                struct entry k = fold[i];
                hot_slot_delete(h, hot_slot_find(h, &k));
                /* the module's rest: named nothing, asked nothing (its address is none) */
                k.rel = HOT_REL_UNNAMED_REST;
                k.answer = SYM_NO_SYMBOL + 1;
                k.epoch = 0;
                k.function = 0;
                /* its own samples: the stacks through several of its addresses are not told
                   apart, so their totals do not add up */
                hot_count(h, &k, k.self, k.self);
        }
        free(fold);
        h->caps.nr_unnamed_folded += nr_fold;
        h->unnamed_scan_nr = h->nr;
        h->epoch++; /* places moved: the memos (settled before) are stale */
}
