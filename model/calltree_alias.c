/* SPDX-License-Identifier: MIT */
/* calltree_alias.c: owns the threads whose callers tree is their process's: a process whose
   samples all came from its main thread (tid == pid), and that thread's samples all from it,
   has one callers tree for both (the process's), made again for the thread when another thread
   of the process, or another process in that thread, is sampled. */
#include "calltree_impl.h"

#include <stdlib.h>
#include <string.h>

enum { ALIAS_FREE, ALIAS_SHARED, ALIAS_OWN };

#define ALIAS_MIN_SLOTS 1024u

static uint32_t alias_home(const struct calltree *t, uint32_t id)
{
        return (uint32_t)hash_mix64(id) & t->alias_mask;
}

static struct calltree_alias *alias_find(const struct calltree *t, uint32_t id)
{
        if (!t->aliases)
                return NULL;
        for (uint32_t j = alias_home(t, id);; j = (j + 1) & t->alias_mask) {
                struct calltree_alias *a = &t->aliases[j];
                if (a->state == ALIAS_FREE)
                        return NULL;
                if (a->id == id)
                        return a;
        }
}

/* id's entry, made with state when missing; NULL when the table is full (CALLTREE_ALIASES_MAX). */
static struct calltree_alias *alias_get(struct calltree *t, uint32_t id, uint8_t state)
{
        struct calltree_alias *a = alias_find(t, id);
        if (a)
                return a;
        if (t->nr_aliases >= CALLTREE_ALIASES_MAX)
                return NULL;
        if (!t->aliases || (t->nr_aliases + 1) * 2 > t->alias_mask + 1) {
                struct calltree_alias *old = t->aliases;
                uint32_t old_slots = old ? t->alias_mask + 1 : 0;
                uint32_t slots = old ? old_slots * 2 : ALIAS_MIN_SLOTS;
                t->aliases = xcalloc(slots, sizeof(*t->aliases));
                t->alias_mask = slots - 1;
                for (uint32_t i = 0; i < old_slots; i++) {
                        if (old[i].state == ALIAS_FREE)
                                continue;
                        uint32_t j = alias_home(t, old[i].id);
                        while (t->aliases[j].state != ALIAS_FREE)
                                j = (j + 1) & t->alias_mask;
                        t->aliases[j] = old[i];
                }
                free(old);
        }
        uint32_t j = alias_home(t, id);
        while (t->aliases[j].state != ALIAS_FREE)
                j = (j + 1) & t->alias_mask;
        t->aliases[j] = (struct calltree_alias){id, state};
        t->nr_aliases++;
        return &t->aliases[j];
}

/* The nodes of the subtree under node, node too. */
static uint32_t subtree_size(const struct calltree *t, uint32_t node)
{
        uint32_t n = 1;
        for (uint32_t c = t->nodes[node].first_child; c; c = t->nodes[c].next_sibling)
                n += subtree_size(t, c);
        return n;
}

/* The work of a copy to start with: process id's sampled functions, each with the thread's
   root as its copy's parent. *work: owned by the caller. */
static void alias_copy_roots(const struct calltree *t, uint32_t id, uint32_t **work, uint32_t *nr,
                             uint32_t *cap)
{
        *work = NULL;
        *nr = *cap = 0;
        for (uint32_t c = t->nodes[ROOT_CALLERS_PID].first_child; c; c = t->nodes[c].next_sibling) {
                if (t->nodes[c].owner != id)
                        continue;
                if (*nr + 2 > *cap) {
                        *cap = *cap ? *cap * 2 : 256;
                        *work = xrealloc(*work, *cap * sizeof(**work));
                }
                (*work)[(*nr)++] = c;
                (*work)[(*nr)++] = ROOT_CALLERS_TID;
        }
}

/* Thread id's own callers tree, copied from its process's (the samples they shared). */
static void alias_own(struct calltree *t, struct calltree_alias *a)
{
        a->state = ALIAS_OWN;
        uint32_t id = a->id;
        calltree_settle(t);
        uint32_t *work; /* pairs: a node of the process's tree, its copy's parent */
        uint32_t nr, cap;
        alias_copy_roots(t, id, &work, &nr, &cap);
        /* room for the copy, as a stack makes it (calltree.c's make_room): the coldest nodes
           go first, those of the copy too; a copy too big for that is cut short */
        uint32_t size = 0;
        for (uint32_t i = 0; i < nr; i += 2)
                size += subtree_size(t, work[i]);
        if (t->nr_live + size > t->max_nodes && size <= t->max_nodes / 4) {
                free(work);
                calltree_evict(t, t->max_nodes / 2);
                alias_copy_roots(t, id, &work, &nr, &cap);
        }
        while (nr) {
                uint32_t parent = work[--nr], from = work[--nr];
                struct frame_key k = calltree_key_of_node(&t->nodes[from]);
                uint32_t to = calltree_child(t, parent, &k, t->nodes[from].pid);
                if (!to)
                        continue; /* a full tree: cut short, as a stack would be */
                struct node *x = &t->nodes[to];
                const struct node *f = &t->nodes[from];
                x->count += f->count;
                x->self += f->self;
                calltree_heat_add(x, f->heat);
                for (uint32_t c = f->first_child; c; c = t->nodes[c].next_sibling) {
                        if (nr + 2 > cap) {
                                cap = cap ? cap * 2 : 256;
                                work = xrealloc(work, cap * sizeof(*work));
                        }
                        work[nr++] = c;
                        work[nr++] = to;
                }
        }
        free(work);
}

bool calltree_alias_is_shared(struct calltree *t, uint32_t tid, uint32_t owner_pid)
{
        if (tid == owner_pid) {
                struct calltree_alias *a = alias_get(t, tid, ALIAS_SHARED);
                return a && a->state == ALIAS_SHARED;
        }
        /* another thread of the process, or the thread in another process: each has its own
           tree from now on */
        struct calltree_alias *a = alias_get(t, owner_pid, ALIAS_OWN);
        if (a && a->state == ALIAS_SHARED)
                alias_own(t, a);
        a = alias_get(t, tid, ALIAS_OWN);
        if (a && a->state == ALIAS_SHARED)
                alias_own(t, a);
        return false;
}

bool calltree_alias_find_shared(const struct calltree *t, uint32_t tid)
{
        const struct calltree_alias *a = alias_find(t, tid);
        return a && a->state == ALIAS_SHARED;
}

void calltree_alias_reset(struct calltree *t)
{
        if (t->aliases)
                memset(t->aliases, 0, (size_t)(t->alias_mask + 1) * sizeof(*t->aliases));
        t->nr_aliases = 0;
}
