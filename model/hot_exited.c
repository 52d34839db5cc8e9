/* SPDX-License-Identifier: MIT */
/* hot_exited.c: owns the hot functions' cap on the places of processes that ended: past
   HOT_EXITED_MAX of them, the lighter fold into one place per address for every exited
   process, down to half of it. */
#include "hot_impl.h"
#include "model_util.h"

#include <stdlib.h>
#include <string.h>

/* The ended pids as an open-addressing set (0 is a pid too: slots hold pid + 1). */
struct pid_set {
        uint64_t *slots; /* owned */
        uint32_t mask;
};

static uint32_t pid_slot(const struct pid_set *s, uint32_t pid)
{
        return (uint32_t)hash_mix64(pid) & s->mask;
}

static void pid_set_init(struct pid_set *s, const uint32_t *pids, uint32_t n)
{
        uint32_t cap = 64;
        while (cap < 2 * n)
                cap *= 2;
        s->mask = cap - 1;
        s->slots = xcalloc(cap, sizeof(*s->slots));
        for (uint32_t i = 0; i < n; i++) {
                uint32_t j = pid_slot(s, pids[i]);
                while (s->slots[j] && s->slots[j] != (uint64_t)pids[i] + 1)
                        j = (j + 1) & s->mask;
                s->slots[j] = (uint64_t)pids[i] + 1;
        }
}

static bool pid_set_has(const struct pid_set *s, uint32_t pid)
{
        for (uint32_t j = pid_slot(s, pid); s->slots[j]; j = (j + 1) & s->mask)
                if (s->slots[j] == (uint64_t)pid + 1)
                        return true;
        return false;
}

/* The heavier first (total, then self); then by key, for a stable choice. */
static int exited_cmp(const void *a, const void *b)
{
        const struct entry *x = a, *y = b;
        if (x->total != y->total)
                return x->total > y->total ? -1 : 1;
        if (x->self != y->self)
                return x->self > y->self ? -1 : 1;
        if (x->pid != y->pid)
                return x->pid < y->pid ? -1 : 1;
        if (x->tid != y->tid)
                return x->tid < y->tid ? -1 : 1;
        if (x->source != y->source)
                return x->source < y->source ? -1 : 1;
        if (x->module != y->module)
                return x->module < y->module ? -1 : 1;
        return x->rel < y->rel ? -1 : x->rel > y->rel;
}

/* e's counts go to the place of every exited process at its address. */
static void fold_one(struct hot *h, const struct entry *e)
{
        struct entry k = *e;
        hot_slot_delete(h, hot_slot_find(h, e));
        k.pid = k.tid = AGG_ALL;
        hot_count(h, &k, e->self, e->total);
        struct entry *f = hot_slot_find(h, &k);
        if (f->is_used) { /* there is room: one went */
                f->dup += e->dup;
                if (f->dup > f->total)
                        f->dup = f->total;
                f->is_exited = true;
        }
        h->caps.nr_exited_folded++;
}

bool hot_fold_exited(struct hot *h, const uint32_t *ended, uint32_t n)
{
        uint32_t nr_exited = 0;
        struct pid_set set = {NULL, 0};
        if (n)
                pid_set_init(&set, ended, n);
        for (uint32_t i = 0; i <= h->mask; i++) {
                struct entry *e = &h->slots[i];
                if (!e->is_used || e->pid == AGG_ALL)
                        continue;
                if (!e->is_exited && n && pid_set_has(&set, e->pid))
                        e->is_exited = true;
                nr_exited += e->is_exited;
        }
        free(set.slots);
        if (nr_exited <= HOT_EXITED_MAX)
                return false;
        struct entry *x = xmalloc(nr_exited * sizeof(*x));
        uint32_t k = 0;
        for (uint32_t i = 0; i <= h->mask; i++) {
                const struct entry *e = &h->slots[i];
                if (e->is_used && e->is_exited && e->pid != AGG_ALL)
                        x[k++] = *e;
        }
        qsort(x, k, sizeof(*x), exited_cmp);
        /* down to half: the sort comes once per HOT_EXITED_MAX / 2 ends, not at every refresh */
        for (uint32_t i = HOT_EXITED_MAX / 2; i < k; i++)
                fold_one(h, &x[i]);
        free(x);
        return true;
}
