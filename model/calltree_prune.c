/* SPDX-License-Identifier: MIT */
/* calltree_prune.c: owns the nodes that leave the call tree: merged into a sibling named the
   same, decayed to nothing, or evicted as the coldest when the tree is full. */
#include "calltree_impl.h"

#include <stdlib.h>
#include <string.h>

enum node_fate { KEEP, DROP, MERGED };

static void forget_freed(struct calltree *t);

/* The walks below read the nodes in an order that jumps all over megabytes of them (a full
   tree's eviction: a fifth of a busy live screen's CPU, most of it waiting for memory): each
   asks for the node it reads PREFETCH_AHEAD steps later. */
#define PREFETCH_AHEAD 16u

static inline void prefetch_node(const struct calltree *t, const uint32_t *order, uint32_t i,
                                 uint32_t n)
{
        if (i + PREFETCH_AHEAD < n)
                __builtin_prefetch(&t->nodes[order[i + PREFETCH_AHEAD]]);
}

/* The live nodes, parents before their children: the roots, then, as each node is taken, its
   first child and its next sibling (every node read is one the list holds already, and asked
   for ahead). order has room for nr_nodes. Returns how many. */
static uint32_t tree_order(const struct calltree *t, uint32_t *order)
{
        uint32_t n = 0;
        for (uint32_t r = 0; r < NR_ROOTS; r++)
                order[n++] = r;
        for (uint32_t i = 0; i < n; i++) {
                prefetch_node(t, order, i, n);
                const struct node *x = &t->nodes[order[i]];
                if (x->first_child)
                        order[n++] = x->first_child;
                if (order[i] >= NR_ROOTS && x->next_sibling)
                        order[n++] = x->next_sibling;
        }
        return n;
}

/* The trees again from the nodes kept: a node whose fate is DROP goes, and every node under it;
   a node whose key a sibling has (named since it was made) merges into that sibling, its
   counts and children with it. The index and the sibling lists are made again, the slots of
   the nodes gone freed, the memos and the list of unnamed nodes rid of them. The waiting
   samples are counted before. order: the live nodes in tree_order's order (n of them), owned:
   freed here; NULL: made here. Returns the nodes dropped. */
static uint32_t rebuild(struct calltree *t, uint8_t *fate, uint32_t *order, uint32_t n)
{
        if (!order) {
                order = xmalloc(t->nr_nodes * sizeof(*order));
                n = tree_order(t, order);
        }
        uint32_t *rep = xmalloc(t->nr_nodes * sizeof(*rep));
        uint32_t nr_dropped = 0;
        memset(t->index, 0, (size_t)(t->index_mask + 1) * sizeof(*t->index));
        for (uint32_t i = 0; i < n; i++) {
                prefetch_node(t, order, i, n);
                uint32_t id = order[i];
                struct node *x = &t->nodes[id];
                rep[id] = id;
                if (id < NR_ROOTS)
                        continue;
                if (fate[x->parent] == DROP)
                        fate[id] = DROP;
                if (fate[id] == DROP) {
                        nr_dropped++;
                        continue;
                }
                x->parent = rep[x->parent]; /* a parent merged: its sibling's child now */
                struct frame_key k = calltree_key_of_node(x);
                uint32_t j = (uint32_t)calltree_node_hash(x->parent, &k) & t->index_mask;
                for (; t->index[j]; j = (j + 1) & t->index_mask) {
                        uint32_t other = t->index[j];
                        if (calltree_node_is(&t->nodes[other], x->parent, &k)) {
                                t->nodes[other].count += x->count;
                                calltree_heat_add(&t->nodes[other], x->heat);
                                t->nodes[other].self += x->self;
                                rep[id] = other;
                                fate[id] = MERGED;
                                break;
                        }
                }
                if (fate[id] == KEEP)
                        t->index[j] = id;
        }
        for (uint32_t i = 0; i < n; i++)
                t->nodes[order[i]].first_child = 0;
        for (uint32_t i = n; i-- > NR_ROOTS;) {
                /* the node, then (its node here by then) its parent, whose list it joins */
                if (i >= 2 * PREFETCH_AHEAD)
                        __builtin_prefetch(&t->nodes[order[i - 2 * PREFETCH_AHEAD]]);
                if (i >= PREFETCH_AHEAD)
                        __builtin_prefetch(&t->nodes[t->nodes[order[i - PREFETCH_AHEAD]].parent]);
                uint32_t id = order[i];
                struct node *x = &t->nodes[id];
                if (fate[id] != KEEP) {
                        x->parent = FREE_NODE;
                        x->next_sibling = t->free_head;
                        t->free_head = id;
                        t->nr_live--;
                        continue;
                }
                x->next_sibling = t->nodes[x->parent].first_child;
                t->nodes[x->parent].first_child = id;
        }
        free(rep);
        free(order);
        forget_freed(t);
        return nr_dropped;
}

/* The list of unnamed nodes and the memos rid of the nodes freed. */
static void forget_freed(struct calltree *t)
{
        uint32_t keep = 0;
        for (uint32_t i = 0; i < t->nr_unnamed; i++)
                if (t->nodes[t->unnamed[i]].parent != FREE_NODE)
                        t->unnamed[keep++] = t->unnamed[i];
        t->nr_unnamed = keep;
        for (uint32_t i = 0; i < MEMO_SLOTS; i++) {
                struct stack_memo *m = &t->memo[i];
                for (uint32_t r = 0; m->leaves[1] && r < NR_MEMO_TREES; r++)
                        if (t->nodes[m->leaves[r]].parent == FREE_NODE)
                                m->leaves[1] = 0;
        }
        for (uint32_t i = 0; t->thread_memo && i < THREAD_MEMO_SLOTS; i++) {
                struct thread_memo *m = &t->thread_memo[i];
                if (m->leaf && t->nodes[m->leaf].parent == FREE_NODE)
                        m->leaf = 0;
        }
}

void calltree_decay(struct calltree *t, const struct agg_settings *s)
{
        calltree_settle(t);
        uint8_t *fate = xcalloc(t->nr_nodes, sizeof(*fate));
        for (uint32_t id = 0; id < t->nr_nodes; id++) {
                struct node *x = &t->nodes[id];
                if (x->parent == FREE_NODE)
                        continue;
                /* rounded down, each node: a caller's count stays under its callee's */
                x->count = agg_settings_apply(s, x->count);
                x->self = agg_settings_apply(s, x->self);
                x->heat = (uint32_t)agg_settings_apply(s, x->heat);
                if (id >= NR_ROOTS && agg_settings_is_droppable(s, x->count))
                        fate[id] = DROP;
        }
        t->nr_samples = agg_settings_apply(s, t->nr_samples);
        rebuild(t, fate, NULL, 0);
        free(fate);
}

void calltree_drop_root(struct calltree *t, uint32_t root)
{
        calltree_settle(t);
        struct node *r = &t->nodes[root];
        r->count = r->self = 0;
        r->heat = 0;
        if (!r->first_child)
                return;
        uint8_t *fate = xcalloc(t->nr_nodes, sizeof(*fate));
        for (uint32_t c = r->first_child; c; c = t->nodes[c].next_sibling)
                fate[c] = DROP;
        rebuild(t, fate, NULL, 0);
        free(fate);
}

/* The k-th smallest of v[0..n) (k < n), v reordered: a three-way quickselect, O(n) on average;
   every pass shrinks the range by at least its pivot. */
static uint64_t kth_smallest(uint64_t *v, uint32_t n, uint32_t k)
{
        uint32_t lo = 0, hi = n;
        while (hi - lo > 1) {
                uint64_t pivot = v[lo + (hi - lo) / 2];
                uint32_t lt = lo, i = lo, gt = hi; /* [lo,lt) < pivot, [lt,i) ==, [gt,hi) > */
                while (i < gt) {
                        uint64_t x = v[i];
                        if (x < pivot) {
                                v[i++] = v[lt];
                                v[lt++] = x;
                        } else if (x > pivot) {
                                v[i] = v[--gt];
                                v[gt] = x;
                        } else {
                                i++;
                        }
                }
                if (k < lt)
                        hi = lt;
                else if (k >= gt)
                        lo = gt;
                else
                        return pivot;
        }
        return v[lo];
}

void calltree_evict(struct calltree *t, uint32_t target)
{
        calltree_settle(t);
        if (t->nr_live <= target)
                return;
        uint32_t *order = xmalloc(t->nr_nodes * sizeof(*order));
        uint32_t n = tree_order(t, order), m = n - NR_ROOTS;
        uint32_t need = t->nr_live - target;
        if (need > m)
                need = m;
        /* a node's worth: the nodes with the most samples (a quarter of the cap: the rows on
           top of the counts open to their callers) stay; the others by their heat (the newly
           hot stay, what was warm long ago goes). A node is worth at most its parent (its
           count and heat are at most its parent's) */
        uint64_t *worth = xmalloc((m ? m : 1) * sizeof(*worth));
        uint64_t *count = xmalloc((m ? m : 1) * sizeof(*count));
        uint64_t *sorted = xmalloc((m ? m : 1) * sizeof(*sorted));
        for (uint32_t i = 0; i < m; i++) { /* the nodes read once, in order */
                prefetch_node(t, order, NR_ROOTS + i, n);
                const struct node *x = &t->nodes[order[NR_ROOTS + i]];
                count[i] = x->count;
                worth[i] = x->heat;
        }
        uint32_t nr_kept_by_count = t->max_nodes / 4;
        memcpy(sorted, count, m * sizeof(*sorted));
        uint64_t most = m > nr_kept_by_count ? kth_smallest(sorted, m, m - nr_kept_by_count - 1)
                                             : UINT64_MAX;
        for (uint32_t i = 0; i < m; i++)
                if (count[i] > most)
                        worth[i] = UINT64_MAX;
        free(count);
        /* the worth under which every node goes, and of those at it, as many as still need
           to: the deepest first (so a node never goes without the nodes under it) */
        memcpy(sorted, worth, m * sizeof(*sorted));
        uint64_t threshold = need ? kth_smallest(sorted, m, need - 1) : 0;
        free(sorted);
        uint32_t nr_below = 0;
        for (uint32_t i = 0; i < m; i++)
                nr_below += worth[i] < threshold;
        uint32_t nr_at = need - nr_below;
        uint8_t *fate = xcalloc(t->nr_nodes, sizeof(*fate));
        for (uint32_t i = m; need && i-- > 0;) {
                if (worth[i] < threshold) {
                        fate[order[NR_ROOTS + i]] = DROP;
                } else if (worth[i] == threshold && nr_at) {
                        fate[order[NR_ROOTS + i]] = DROP;
                        nr_at--;
                }
        }
        free(worth);
        t->nr_evicted += rebuild(t, fate, order, n);
        free(fate);
        /* the nodes kept cool: what was hot long ago makes room for what is hot now */
        for (uint32_t id = 0; id < t->nr_nodes; id++)
                t->nodes[id].heat /= 2;
}

/* ---- naming nodes in place (rekey) ---- */

/* Takes node id out of the index (linear probing: the entries after it move up where their
   probe allows). Every live node but the roots is in the index under its parent and key. */
static void index_delete(struct calltree *t, uint32_t id)
{
        const struct node *x = &t->nodes[id];
        struct frame_key k = calltree_key_of_node(x);
        uint32_t i = (uint32_t)calltree_node_hash(x->parent, &k) & t->index_mask;
        while (t->index[i] != id) {
                if (!t->index[i])
                        return; /* not indexed: nothing to take out */
                i = (i + 1) & t->index_mask;
        }
        for (uint32_t j = (i + 1) & t->index_mask; t->index[j]; j = (j + 1) & t->index_mask) {
                const struct node *y = &t->nodes[t->index[j]];
                struct frame_key yk = calltree_key_of_node(y);
                uint32_t h = (uint32_t)calltree_node_hash(y->parent, &yk) & t->index_mask;
                /* the entry at j stays when its home h lies cyclically in (i, j] */
                bool stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
                if (!stays) {
                        t->index[i] = t->index[j];
                        i = j;
                }
        }
        t->index[i] = 0;
}

/* The node under parent with key k, or 0 with *slot the free index slot where it would go. */
static uint32_t index_lookup(const struct calltree *t, uint32_t parent, const struct frame_key *k,
                             uint32_t *slot)
{
        uint32_t j = (uint32_t)calltree_node_hash(parent, k) & t->index_mask;
        for (; t->index[j]; j = (j + 1) & t->index_mask)
                if (calltree_node_is(&t->nodes[t->index[j]], parent, k))
                        return t->index[j];
        *slot = j;
        return 0;
}

static void push_u32(uint32_t **v, uint32_t *nr, uint32_t *cap, uint32_t x)
{
        if (*nr == *cap) {
                *cap = *cap ? *cap * 2 : 256;
                *v = xrealloc(*v, *cap * sizeof(**v));
        }
        (*v)[(*nr)++] = x;
}

/* x (out of the index) merges into y: its counts, and its children into y's, those with a key
   one of y's has merging in turn. x is freed at calltree_rekey_end (its parent's list still
   holds it). */
static void merge_into(struct calltree *t, uint32_t y, uint32_t x)
{
        t->nodes[y].count += t->nodes[x].count;
        t->nodes[y].self += t->nodes[x].self;
        calltree_heat_add(&t->nodes[y], t->nodes[x].heat);
        uint32_t next;
        for (uint32_t c = t->nodes[x].first_child; c; c = next) {
                next = t->nodes[c].next_sibling;
                if (t->nodes[c].parent == FREE_NODE)
                        continue; /* merged already, and freed with x's list */
                index_delete(t, c);
                struct frame_key kc = calltree_key_of_node(&t->nodes[c]);
                uint32_t slot;
                uint32_t z = index_lookup(t, y, &kc, &slot);
                if (z) {
                        merge_into(t, z, c);
                } else {
                        t->nodes[c].parent = y;
                        t->index[slot] = c;
                        t->nodes[c].next_sibling = t->nodes[y].first_child;
                        t->nodes[y].first_child = c;
                }
        }
        t->nodes[x].parent = FREE_NODE;
        t->nodes[x].first_child = 0;
        push_u32(&t->freed, &t->nr_freed, &t->cap_freed, x);
}

void calltree_rekey_node(struct calltree *t, uint32_t id, uint32_t module, uint32_t function,
                         uint64_t rel)
{
        index_delete(t, id);
        struct node *x = &t->nodes[id];
        x->module = module;
        x->function = function;
        x->rel = rel;
        struct frame_key k = calltree_key_of_node(x);
        uint32_t slot;
        uint32_t y = index_lookup(t, x->parent, &k, &slot);
        if (!y) {
                t->index[slot] = id;
                return;
        }
        push_u32(&t->dirty, &t->nr_dirty, &t->cap_dirty, x->parent);
        merge_into(t, y, id);
}

static int cmp_u32(const void *a, const void *b)
{
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        return x < y ? -1 : x > y;
}

/* forget_freed for the nodes merged by calltree_rekey_node (t->freed), the only ones freed since
   the last look (the memos and the list never hold a node freed before): they are looked up in
   a bit per node, not read from the nodes (a look at each memo's nodes, wherever they lie, was
   a live screen's refresh waiting for memory, at every refresh that named nodes); a thread's
   memo is kept only while the threads' trees are counted. */
static void forget_merged(struct calltree *t)
{
        uint64_t *is_freed = xcalloc((t->nr_nodes + 63) / 64, sizeof(*is_freed));
        for (uint32_t i = 0; i < t->nr_freed; i++)
                is_freed[t->freed[i] / 64] |= 1ull << (t->freed[i] % 64);
#define IS_FREED(id) ((is_freed[(id) / 64] >> ((id) % 64)) & 1)
        uint32_t keep = 0;
        for (uint32_t i = 0; i < t->nr_unnamed; i++)
                if (!IS_FREED(t->unnamed[i]))
                        t->unnamed[keep++] = t->unnamed[i];
        t->nr_unnamed = keep;
        for (uint32_t i = 0; i < MEMO_SLOTS; i++) {
                struct stack_memo *m = &t->memo[i];
                for (uint32_t r = 0; m->leaves[1] && r < NR_MEMO_TREES; r++)
                        if (IS_FREED(m->leaves[r]))
                                m->leaves[1] = 0;
        }
        for (uint32_t i = 0;
             t->owners == CALLTREE_THREAD && t->thread_memo && i < THREAD_MEMO_SLOTS; i++) {
                struct thread_memo *m = &t->thread_memo[i];
                if (m->leaf && IS_FREED(m->leaf))
                        m->leaf = 0;
        }
#undef IS_FREED
        free(is_freed);
}

void calltree_rekey_end(struct calltree *t)
{
        if (!t->nr_freed)
                return;
        /* the merged nodes leave their parents' lists, then go to the free slots */
        qsort(t->dirty, t->nr_dirty, sizeof(*t->dirty), cmp_u32);
        for (uint32_t i = 0; i < t->nr_dirty; i++) {
                uint32_t p = t->dirty[i];
                if ((i && p == t->dirty[i - 1]) || t->nodes[p].parent == FREE_NODE)
                        continue;
                uint32_t *link = &t->nodes[p].first_child;
                while (*link) {
                        if (t->nodes[*link].parent == FREE_NODE)
                                *link = t->nodes[*link].next_sibling;
                        else
                                link = &t->nodes[*link].next_sibling;
                }
        }
        for (uint32_t i = 0; i < t->nr_freed; i++) {
                uint32_t id = t->freed[i];
                t->nodes[id].next_sibling = t->free_head;
                t->free_head = id;
                t->nr_live--;
        }
        forget_merged(t);
        t->nr_freed = t->nr_dirty = 0;
}
