/* SPDX-License-Identifier: MIT */
/* calltree_memo.c: the call tree's stack memos: a stack's hash, the slot of its pair that holds
   it or that it takes, and the samples waiting on memos counted along their paths (settle). */
#include "calltree_impl.h"

uint64_t calltree_stack_hash(uint32_t pid, const uint64_t *frames, uint32_t nr)
{
        return calltree_stack_hash_of(pid, hash_frames(frames, nr), nr);
}

struct stack_memo *calltree_memo_find(struct calltree *t, uint64_t hash, uint64_t generation,
                                      uint32_t pid, uint32_t owner_pid, uint32_t nr, bool *is_hit)
{
        struct stack_memo *m = calltree_memo_pair(t, hash);
        uint32_t pair = (uint32_t)(m - t->memo) >> 1;
        int stale = -1;
        for (uint32_t way = 0; way < 2; way++) {
                const struct stack_memo *x = &m[way];
                if (!x->leaves[1] || x->hash != hash)
                        continue;
                if (x->generation == generation && x->pid == pid && x->owner_pid == owner_pid &&
                    x->nr == nr) {
                        memo_ways_used(t->memo_second_recent, pair, way);
                        *is_hit = true;
                        return &m[way];
                }
                stale = (int)way;
        }
        *is_hit = false;
        return &m[memo_ways_take(t->memo_second_recent, pair, stale, !m[0].leaves[1],
                                 !m[1].leaves[1])];
}

/* Counts n samples along the path from node up to its root. Their self count goes to the leaf
   in the top-down tree, to the root's child (the sampled function) in the callers trees. */
static void count_path(struct calltree *t, uint32_t node, bool is_self_at_leaf, uint64_t n)
{
        if (is_self_at_leaf)
                t->nodes[node].self += n;
        for (;;) {
                struct node *x = &t->nodes[node];
                x->count += n;
                calltree_heat_add(x, n);
                if (x->parent == UINT32_MAX)
                        return;
                if (!is_self_at_leaf && t->nodes[x->parent].parent == UINT32_MAX)
                        x->self += n;
                node = x->parent;
        }
}

void calltree_memo_settle(struct calltree *t, struct stack_memo *m)
{
        if (!m->nr_pending)
                return;
        for (uint32_t r = 0; r < NR_MEMO_TREES; r++)
                if (m->leaves[r]) /* 0: a tree not counted */
                        count_path(t, m->leaves[r], r == ROOT_TOP_DOWN, m->nr_pending);
        t->nr_pending -= m->nr_pending;
        m->nr_pending = 0;
}

void calltree_thread_memo_settle(struct calltree *t, struct thread_memo *m)
{
        if (!m->nr_pending)
                return;
        count_path(t, m->leaf, false, m->nr_pending);
        t->nr_pending -= m->nr_pending;
        m->nr_pending = 0;
}

/* The memos listed since the last settle, or every one where the lists overflowed: the sums
   are the same in any order (count_path adds, heat saturates). */
void calltree_settle(struct calltree *t)
{
        const struct pending_slots *l = &t->pending_memos;
        for (uint32_t i = 0; t->nr_pending && i < pending_slots_nr(l, MEMO_SLOTS); i++)
                calltree_memo_settle(t, &t->memo[pending_slots_at(l, i)]);
        l = &t->pending_thread_memos;
        for (uint32_t i = 0; t->nr_pending && i < pending_slots_nr(l, THREAD_MEMO_SLOTS); i++)
                calltree_thread_memo_settle(t, &t->thread_memo[pending_slots_at(l, i)]);
        pending_slots_clear(&t->pending_memos);
        pending_slots_clear(&t->pending_thread_memos);
}
