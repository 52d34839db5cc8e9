/* SPDX-License-Identifier: MIT */
/* calltree.c: owns the top-down and callers trees of sampled stacks: counting a stack along its
   paths, naming nodes late, answering. */
#include "calltree_impl.h"

#include <stdlib.h>
#include <string.h>

#define MAX_FRAMES     256
#define MAX_ENDED_PIDS 16384 /* process ends remembered between two looks for names */

static void roots(struct calltree *t)
{
        memset(t->nodes, 0, NR_ROOTS * sizeof(*t->nodes));
        for (uint32_t r = 0; r < NR_ROOTS; r++)
                t->nodes[r].parent = UINT32_MAX;
        t->nr_nodes = t->nr_live = NR_ROOTS;
        t->free_head = 0;
}

struct calltree *calltree_new(struct sym_store *store, uint32_t max_nodes, uint16_t source)
{
        struct calltree *t = xcalloc(1, sizeof(*t));
        t->store = store;
        t->max_nodes = max_nodes ? max_nodes : (1u << 20);
        t->source = source;
        t->cap_nodes = 1024;
        t->nodes = xcalloc(t->cap_nodes, sizeof(*t->nodes));
        t->index_mask = 2047;
        t->index = xzalloc_table(t->index_mask + 1, sizeof(*t->index));
        t->memo = xzalloc_table(MEMO_SLOTS, sizeof(*t->memo));
        t->frames_gen = xcalloc(1, sizeof(*t->frames_gen));
        t->owners = CALLTREE_ALL;
        t->is_top_down = true;
        t->nr_trees = 2;
        roots(t);
        return t;
}

void calltree_free(struct calltree *t)
{
        if (!t)
                return;
        free(t->nodes);
        free(t->index);
        free(t->rows);
        free(t->memo);
        free(t->thread_memo);
        pending_slots_free(&t->pending_memos);
        pending_slots_free(&t->pending_thread_memos);
        free(t->frames_gen);
        free(t->rekey_gen);
        free(t->key_memo);
        free(t->unnamed);
        free(t->ended_pids);
        free(t->aliases);
        free(t->freed);
        free(t->dirty);
        free(t);
}

void calltree_reset(struct calltree *t)
{
        roots(t);
        memset(t->index, 0, (size_t)(t->index_mask + 1) * sizeof(*t->index));
        memset(t->pend, 0, sizeof(t->pend));
        memset(t->memo, 0, MEMO_SLOTS * sizeof(*t->memo));
        memset(t->memo_second_recent, 0, sizeof(t->memo_second_recent));
        t->pre.has = false;
        if (t->thread_memo)
                memset(t->thread_memo, 0, THREAD_MEMO_SLOTS * sizeof(*t->thread_memo));
        t->nr_pending = 0;
        pending_slots_clear(&t->pending_memos);
        pending_slots_clear(&t->pending_thread_memos);
        t->nr_pend = 0;
        t->nr_unmatched = 0;
        t->nr_samples = 0;
        t->nr_unnamed = 0;
        t->nr_ended_pids = t->nr_prev_ended = 0;
        t->nr_cut = 0;
        t->nr_evicted = 0;
        t->nr_walks = 0;
        t->owners_from = 0; /* the trees asked for count from here on: every sample */
        t->owners_from_ns = 0;
        t->top_down_from = 0;
        t->top_down_from_ns = 0;
        calltree_alias_reset(t);
}

/* A slot for a new node: a free one, else one more. */
static uint32_t node_alloc(struct calltree *t)
{
        if (t->free_head) {
                uint32_t id = t->free_head;
                t->free_head = t->nodes[id].next_sibling;
                return id;
        }
        if (t->nr_nodes == t->cap_nodes) {
                t->cap_nodes *= 2;
                t->nodes = xrealloc(t->nodes, t->cap_nodes * sizeof(*t->nodes));
        }
        return t->nr_nodes++;
}

/* The index twice as large, the nodes put in again. */
static __attribute__((noinline)) void index_grow(struct calltree *t)
{
        free(t->index);
        t->index_mask = t->index_mask * 2 + 1;
        t->index = xzalloc_table(t->index_mask + 1, sizeof(*t->index));
        for (uint32_t i = NR_ROOTS; i < t->nr_nodes; i++) {
                const struct node *x = &t->nodes[i];
                if (x->parent == FREE_NODE)
                        continue;
                struct frame_key xk = calltree_key_of_node(x);
                uint32_t h = (uint32_t)calltree_node_hash(x->parent, &xk) & t->index_mask;
                while (t->index[h])
                        h = (h + 1) & t->index_mask;
                t->index[h] = i;
        }
}

/* A new child of parent with key k, for a stack of pid, at the free index slot j; 0 when the
   tree is full. */
static uint32_t child_make(struct calltree *t, uint32_t parent, const struct frame_key *k,
                           uint32_t pid, uint32_t j)
{
        if (t->nr_live >= t->max_nodes)
                return 0;
        uint32_t id = node_alloc(t);
        t->nr_live++;
        struct node *n = &t->nodes[id];
        *n = (struct node){.parent = parent,
                           .module = k->module,
                           .function = k->function,
                           .next_sibling = t->nodes[parent].first_child,
                           .pid = pid,
                           .owner = k->owner,
                           .rel = k->rel};
        t->nodes[parent].first_child = id;
        if (!k->function) {
                if (t->nr_unnamed == t->cap_unnamed) {
                        t->cap_unnamed = t->cap_unnamed ? t->cap_unnamed * 2 : 256;
                        t->unnamed = xrealloc(t->unnamed, t->cap_unnamed * sizeof(*t->unnamed));
                }
                t->unnamed[t->nr_unnamed++] = id;
        }
        if ((t->nr_live + 1) * 2 > t->index_mask + 1)
                index_grow(t);
        else
                t->index[j] = id;
        return id;
}

/* The child of parent with key k (key_hash: calltree_key_hash(k)), made when missing (for a
   stack of pid); 0 when the tree is full. */
static inline uint32_t child(struct calltree *t, uint32_t parent, const struct frame_key *k,
                             uint64_t key_hash, uint32_t pid)
{
        uint32_t j = (uint32_t)calltree_node_hash_with(parent, k->module, key_hash) & t->index_mask;
        for (;; j = (j + 1) & t->index_mask) {
                uint32_t id = t->index[j];
                if (!id)
                        return child_make(t, parent, k, pid, j);
                if (calltree_node_is(&t->nodes[id], parent, k))
                        return id;
        }
}

uint32_t calltree_child(struct calltree *t, uint32_t parent, const struct frame_key *k,
                        uint32_t pid)
{
        return child(t, parent, k, calltree_key_hash(k), pid);
}

/* The key of the frame at addr of process pid (generation: frames_gen_of pid), from the key
   memo where it holds it. */
static struct frame_key key_of(struct calltree *t, uint32_t pid, uint64_t addr, uint64_t generation)
{
        if (!t->key_memo)
                t->key_memo = xzalloc_table(KEY_MEMO_SLOTS, sizeof(*t->key_memo));
        uint64_t x = (addr ^ (uint64_t)pid << 40 ^ pid) * 0x9e3779b97f4a7c15ull;
        struct key_memo *m = &t->key_memo[(x >> 40) & (KEY_MEMO_SLOTS - 1)];
        if (m->is_set && m->addr == addr && m->pid == pid && m->generation == generation &&
            (!m->epoch || m->epoch == sym_answers_epoch(t->store, m->key.module)))
                return m->key;
        t->nr_located++;
        struct sym_loc loc = sym_locate(t->store, pid, addr);
        struct frame_key k = {loc.module, 0, loc.rel, 0, loc.module ? 0 : pid};
        if (loc.module) {
                /* settled is asked before the answer (a module that finishes loading in
                   between gave a pending one, which must not be kept) */
                bool is_final = sym_answers_are_final(t->store, loc.module);
                struct sym_frame f;
                sym_resolve(t->store, loc, &f);
                if (f.state == SYM_RESOLVED) {
                        k.function = f.function;
                        k.rel = 0;
                }
                /* asked after: a recording's kernel table is built again by the lookup */
                uint32_t epoch = is_final ? 0 : sym_answers_epoch(t->store, loc.module);
                if (is_final || epoch)
                        *m = (struct key_memo){addr, generation, pid, epoch, k, true};
        } else if (!sym_store_is_live(t->store)) {
                *m = (struct key_memo){addr, generation, pid, 0, k, true};
        }
        return k;
}

/* Counts a sample along the path of keys from root, made where missing: outermost caller first
   in the top-down tree, the sampled function first in the callers trees (keyed by owner under
   a process's or thread's root); its self count goes to the sampled function's node. Returns
   the deepest node reached; *is_whole turns false when a full tree cut the path short. */
static uint32_t descend(struct calltree *t, uint32_t root, const struct frame_key *keys,
                        const uint64_t *key_hashes, uint32_t nr, uint32_t pid, uint32_t owner,
                        bool *is_whole)
{
        bool is_top_down = root == ROOT_TOP_DOWN;
        uint32_t node = root;
        t->nodes[node].count++;
        calltree_heat_add(&t->nodes[node], 1);
        for (uint32_t d = 0; d < nr; d++) {
                uint32_t i = is_top_down ? nr - 1 - d : d;
                uint32_t c;
                if (d == 0 && !is_top_down && owner) {
                        struct frame_key k = keys[i];
                        k.owner = owner;
                        c = child(t, node, &k, calltree_key_hash(&k), pid);
                } else {
                        c = child(t, node, &keys[i], key_hashes[i], pid);
                }
                if (!c) {
                        *is_whole = false;
                        break;
                }
                node = c;
                t->nodes[node].count++;
                calltree_heat_add(&t->nodes[node], 1);
                if (i == 0)
                        t->nodes[node].self++;
        }
        return node;
}

/* A new stack along the trees a memo holds that are counted (the top-down while asked for, every
   process's callers, its process's when has_pid), leaves[r] root r's (0: not counted). */
static void descend_memo_trees(struct calltree *t, const struct frame_key *keys,
                               const uint64_t *key_hashes, uint32_t nr, uint32_t pid,
                               uint32_t owner_pid, bool has_pid, uint32_t *leaves, bool *is_whole)
{
        for (uint32_t r = 0; r < NR_MEMO_TREES; r++) {
                if ((r == ROOT_TOP_DOWN && !t->is_top_down) || (r == ROOT_CALLERS_PID && !has_pid))
                        continue;
                leaves[r] = descend(t, r, keys, key_hashes, nr, pid,
                                    r == ROOT_CALLERS_PID ? owner_pid : 0, is_whole);
        }
}

/* The room a stack of nr frames may need, made by evicting the coldest nodes when the tree is
   nearly full: down to half of it, so that evictions are rare. A tree too small for that (a
   stack needs more than a quarter of it) cuts stacks instead. */
static void make_room(struct calltree *t, uint32_t nr)
{
        uint32_t need = nr * t->nr_trees;
        if (t->nr_live + need <= t->max_nodes || need > t->max_nodes / 4)
                return;
        calltree_evict(t, t->max_nodes / 2);
}

/* The keys of a whole callers path, the sampled function first, from its deepest node (the
   outermost caller); returns how many. */
static uint32_t path_keys(const struct calltree *t, uint32_t leaf, struct frame_key *keys)
{
        uint32_t n = 0;
        for (uint32_t x = leaf; t->nodes[x].parent != UINT32_MAX && n < MAX_FRAMES;
             x = t->nodes[x].parent)
                keys[n++] = calltree_key_of_node(&t->nodes[x]);
        for (uint32_t i = 0; i < n / 2; i++) {
                struct frame_key k = keys[i];
                keys[i] = keys[n - 1 - i];
                keys[n - 1 - i] = k;
        }
        return n;
}

/* A stack's keys, the leaf's given and its callers' made, each with its hash (once for the
   four trees). */
static void stack_keys(struct calltree *t, uint32_t pid, uint64_t generation, struct frame_key leaf,
                       const uint64_t *frames, uint32_t nr, struct frame_key *keys,
                       uint64_t *key_hashes)
{
        keys[0] = leaf;
        for (uint32_t i = 1; i < nr; i++)
                keys[i] = key_of(t, pid, frames[i], generation);
        for (uint32_t i = 0; i < nr; i++)
                key_hashes[i] = calltree_key_hash(&keys[i]);
}

/* A sample of a thread whose callers tree is its process's, or not counted: along the other
   trees counted, its memo's paths when is_hit. */
static void insert_shared(struct calltree *t, struct stack_memo *m, bool is_hit, uint64_t hash,
                          uint64_t generation, uint32_t pid, uint32_t owner_pid,
                          struct frame_key leaf, const uint64_t *frames, uint32_t nr)
{
        if (is_hit) {
                calltree_memo_pend(t, m);
                return;
        }
        make_room(t, nr);
        calltree_memo_settle(t, m);
        m->leaves[1] = 0;
        t->nr_walks++;
        struct frame_key keys[MAX_FRAMES];
        uint64_t key_hashes[MAX_FRAMES];
        stack_keys(t, pid, generation, leaf, frames, nr, keys, key_hashes);
        uint32_t leaves[NR_MEMO_TREES] = {0};
        bool is_whole = true;
        descend_memo_trees(t, keys, key_hashes, nr, pid, owner_pid, t->owners != CALLTREE_ALL,
                           leaves, &is_whole);
        if (is_whole) {
                *m = (struct stack_memo){hash, generation, pid, owner_pid, nr, {0}, 0};
                memcpy(m->leaves, leaves, sizeof(leaves));
        } else {
                t->nr_cut++;
        }
}

/* frames[0] is the sampled address, the last the outermost caller; pid: the process whose
   address space holds them; sample_pid and tid: the sample's (UINT32_MAX: not known); given,
   callers_hash and memo_hash (NULL: made here): the leaf's key, the callers' hash and the memo's
   hash, as calltree_leaf and calltree_prefetch_stack found them for this stack */
static void insert(struct calltree *t, uint32_t pid, uint32_t sample_pid, uint32_t tid,
                   const uint64_t *frames, uint32_t nr, const struct frame_key *given,
                   const uint64_t *callers_hash, const uint64_t *memo_hash)
{
        if (nr > MAX_FRAMES)
                nr = MAX_FRAMES;
        if (!nr)
                return;
        uint64_t generation = frames_gen_of(t->frames_gen, pid);
        /* the sampled address by its place in the tree (its function, when known: the samples
           of one function's instructions share their paths), its callers by address: a memo
           per calling context rather than per instruction */
        struct frame_key leaf = given ? *given : key_of(t, pid, frames[0], generation);
        /* the process as the hot functions' rows have it: the sample's, else (no image held
           the address) the stack's */
        uint32_t owner_pid =
                sample_pid != UINT32_MAX ? sample_pid : (leaf.module ? UINT32_MAX : pid);
        /* calltree_prefetch_stack's, where it hashed this memo */
        uint64_t hash =
                memo_hash
                        ? *memo_hash
                        : calltree_memo_hash(callers_hash
                                                     ? *callers_hash
                                                     : calltree_stack_hash(pid, frames + 1, nr - 1),
                                             &leaf, nr, owner_pid);
        /* no tree by thread counted, or a process's main thread, its only one sampled: its
           callers are its process's */
        bool is_shared =
                t->owners != CALLTREE_THREAD || calltree_alias_is_shared(t, tid, owner_pid);
        bool is_hit;
        struct stack_memo *m = calltree_memo_find(t, hash, generation, pid, owner_pid, nr, &is_hit);
        t->nr_samples++;
        if (is_shared) {
                insert_shared(t, m, is_hit, hash, generation, pid, owner_pid, leaf, frames, nr);
                return;
        }
        /* made at the first thread's own stack: a screen by process never zeroes its 1 MiB */
        if (!t->thread_memo)
                t->thread_memo = xzalloc_table(THREAD_MEMO_SLOTS, sizeof(*t->thread_memo));
        struct thread_memo *tm =
                &t->thread_memo[(hash ^ hash_mix64(tid)) & (THREAD_MEMO_SLOTS - 1)];
        if (is_hit && tm->leaf && tm->hash == hash && tm->generation == generation &&
            tm->tid == tid) {
                /* counted along its paths when the counts are read or the memo is replaced:
                   a stack seen again costs no walk up the trees */
                calltree_memo_pend(t, m);
                calltree_thread_memo_pend(t, tm);
                return;
        }
        calltree_thread_memo_settle(t, tm);
        tm->leaf = 0;
        make_room(t, nr); /* the memos whose nodes it evicts are forgotten */
        is_hit = is_hit && m->leaves[1];
        struct frame_key keys[MAX_FRAMES];
        uint64_t key_hashes[MAX_FRAMES];
        bool is_whole = true;
        if (is_hit) {
                /* a stack seen in another thread: its frames as its callers path has them */
                calltree_memo_pend(t, m);
                nr = path_keys(t, m->leaves[1], keys);
                for (uint32_t i = 0; i < nr; i++)
                        key_hashes[i] = calltree_key_hash(&keys[i]);
        } else {
                calltree_memo_settle(t, m);
                m->leaves[1] = 0;
                t->nr_walks++;
                stack_keys(t, pid, generation, leaf, frames, nr, keys, key_hashes);
                uint32_t leaves[NR_MEMO_TREES] = {0};
                descend_memo_trees(t, keys, key_hashes, nr, pid, owner_pid, true, leaves,
                                   &is_whole);
                /* a path cut short by a full tree is not remembered: its sample counted where
                   it stopped, and a later one may find room */
                if (is_whole) {
                        *m = (struct stack_memo){hash, generation, pid, owner_pid, nr, {0}, 0};
                        memcpy(m->leaves, leaves, sizeof(leaves));
                }
        }
        uint32_t thread_leaf =
                descend(t, ROOT_CALLERS_TID, keys, key_hashes, nr, pid, tid, &is_whole);
        if (is_whole)
                *tm = (struct thread_memo){hash, generation, tid, thread_leaf, 0};
        else
                t->nr_cut++;
}

static void pending_flush(struct calltree *t, struct pending *p)
{
        if (p->has && !p->is_matched) {
                insert(t, p->pid, p->pid, p->tid, &p->ip, 1, NULL, NULL, NULL);
                t->nr_unmatched--;
        }
        p->has = false;
}

/* A stack: the pending sample's on its CPU (or another's) takes it; a switch's or a wake-up's
   is none of the tree's. Out of line: most events of a switch storm are not samples, and
   calltree_event's own frame stays small for them. */
static struct pending *stack_pending(struct calltree *t, const struct kevent *ev)
{
        struct pending *p = &t->pend[ev->cpu % CALLTREE_MAX_CPUS];
        if (!p->has || p->is_matched || p->timestamp != ev->stack.event_timestamp) {
                p = NULL;
                for (uint32_t c = 0; c < t->nr_pend && !p; c++)
                        if (t->pend[c].has && !t->pend[c].is_matched &&
                            t->pend[c].timestamp == ev->stack.event_timestamp)
                                p = &t->pend[c];
        }
        return p; /* NULL: the stack of a switch or a wake-up */
}

/* Whether stack ev of pending sample p starts with its sampled address (else stack_event puts
   it first). */
static inline bool stack_has_ip(const struct pending *p, const struct kevent *ev)
{
        return ev->stack.nr_frames && ev->stack.frames[0] == p->ip;
}

static __attribute__((noinline)) void stack_event(struct calltree *t, const struct kevent *ev)
{
        /* the sample calltree_prefetch_stack found for this stack, else looked for */
        struct pending *p = t->pre.has ? t->pre.p : NULL;
        if (!p || !p->has || p->is_matched || p->timestamp != ev->stack.event_timestamp)
                p = stack_pending(t, ev);
        if (!p) {
                t->pre.has = false;
                return;
        }
        p->is_matched = true;
        t->nr_unmatched--;
        uint64_t copy[MAX_FRAMES];
        const uint64_t *frames = ev->stack.frames;
        uint32_t n = ev->stack.nr_frames;
        bool has_ip = stack_has_ip(p, ev);
        /* the sampled address first, unless the stack starts with it already (then the stack's
           own frames, not copied) */
        if (!has_ip || n > MAX_FRAMES) {
                n = 0;
                if (!has_ip)
                        copy[n++] = p->ip;
                for (uint32_t i = 0; i < ev->stack.nr_frames && n < MAX_FRAMES; i++)
                        copy[n++] = ev->stack.frames[i];
                frames = copy;
        }
        uint32_t pid = ev->stack.pid != UINT32_MAX ? ev->stack.pid : p->pid;
        /* the sampled place as the hot functions found it, where it is this sample's (key_of's
           key: the function, else the module and address) */
        struct frame_key given = {t->leaf_given.module, t->leaf_given.function, t->leaf_given.rel,
                                  0, t->leaf_given.module ? 0 : pid};
        bool is_given = t->leaf_given.has && t->leaf_given.timestamp == p->timestamp &&
                        t->leaf_given.ip == p->ip && t->leaf_given.pid == pid;
        t->leaf_given.has = false;
        /* its callers' hash, where calltree_prefetch_stack found it */
        bool has_hash = t->pre.has && t->pre.timestamp == p->timestamp && t->pre.pid == pid &&
                        t->pre.nr == n;
        /* and the memo's, where it was made of this leaf and this sample's process */
        bool has_memo_hash =
                has_hash && is_given && t->pre.has_memo_hash && t->pre.memo_owner == p->pid &&
                t->pre.memo_leaf.module == given.module &&
                t->pre.memo_leaf.function == given.function && t->pre.memo_leaf.rel == given.rel;
        t->pre.has = false;
        insert(t, pid, p->pid, p->tid, frames, n, is_given ? &given : NULL,
               has_hash ? &t->pre.hash : NULL, has_memo_hash ? &t->pre.memo_hash : NULL);
}

void calltree_prefetch_stack(struct calltree *t, const struct kevent *ev)
{
        t->pre.has = false;
        t->pre.has_memo_hash = false;
        struct pending *p = ev->type == KEV_STACK ? stack_pending(t, ev) : NULL;
        if (!p)
                return;
        /* the frames stack_event counts: the sampled address first, its callers after */
        bool has_ip = stack_has_ip(p, ev);
        uint32_t n = ev->stack.nr_frames + !has_ip;
        if (n > MAX_FRAMES)
                n = MAX_FRAMES;
        uint32_t pid = ev->stack.pid != UINT32_MAX ? ev->stack.pid : p->pid;
        /* the leaf given with the callers' frames hashed (calltree_leaf_callers), where they
           are the ones counted: not hashed again */
        bool is_leaf = t->leaf_given.has && t->leaf_given.timestamp == p->timestamp &&
                       t->leaf_given.ip == p->ip && t->leaf_given.pid == pid;
        uint64_t callers_hash =
                is_leaf && has_ip && t->leaf_given.has_callers && t->leaf_given.nr_callers == n - 1
                        ? calltree_stack_hash_of(pid, t->leaf_given.callers_frames_hash, n - 1)
                        : calltree_stack_hash(pid, ev->stack.frames + has_ip, n - 1);
        t->pre.timestamp = p->timestamp;
        t->pre.hash = callers_hash;
        t->pre.pid = pid;
        t->pre.nr = n;
        t->pre.p = p;
        t->pre.has = true;
        /* the leaf as the stack will have it (calltree_leaf), and so the memo's slots */
        if (!is_leaf)
                return;
        struct frame_key leaf = {t->leaf_given.module, t->leaf_given.function, t->leaf_given.rel, 0,
                                 t->leaf_given.module ? 0 : pid};
        uint32_t owner_pid = p->pid != UINT32_MAX ? p->pid : (leaf.module ? UINT32_MAX : pid);
        uint64_t hash = calltree_memo_hash(callers_hash, &leaf, n, owner_pid);
        t->pre.memo_hash = hash;
        t->pre.memo_leaf = leaf;
        t->pre.memo_owner = p->pid;
        t->pre.has_memo_hash = true;
        const struct stack_memo *m = calltree_memo_pair(t, hash);
        __builtin_prefetch(m);
        __builtin_prefetch((const char *)(m + 2) - 1);
        if (t->owners == CALLTREE_THREAD && t->thread_memo)
                __builtin_prefetch(
                        &t->thread_memo[(hash ^ hash_mix64(p->tid)) & (THREAD_MEMO_SLOTS - 1)]);
}

void calltree_leaf(struct calltree *t, uint64_t timestamp, uint64_t ip, uint32_t pid,
                   uint32_t module, uint32_t function, uint64_t rel)
{
        t->leaf_given.timestamp = timestamp;
        t->leaf_given.ip = ip;
        t->leaf_given.pid = pid;
        t->leaf_given.module = module;
        t->leaf_given.function = function;
        t->leaf_given.rel = function ? 0 : rel;
        t->leaf_given.has = true;
        t->leaf_given.has_callers = false;
}

void calltree_leaf_callers(struct calltree *t, uint64_t frames_hash, uint32_t nr)
{
        t->leaf_given.callers_frames_hash = frames_hash;
        t->leaf_given.nr_callers = nr;
        t->leaf_given.has_callers = t->leaf_given.has;
}

static __attribute__((noinline)) void process_event(struct calltree *t, const struct kevent *ev)
{
        if ((ev->process.phase == KEV_PHASE_END || ev->process.phase == KEV_PHASE_DEFUNCT) &&
            t->nr_ended_pids < MAX_ENDED_PIDS) {
                if (t->nr_ended_pids == t->cap_ended_pids) {
                        t->cap_ended_pids = t->cap_ended_pids ? t->cap_ended_pids * 2 : 256;
                        t->ended_pids =
                                xrealloc(t->ended_pids, t->cap_ended_pids * sizeof(*t->ended_pids));
                }
                t->ended_pids[t->nr_ended_pids++] = ev->process.pid;
        }
}

_Static_assert((CALLTREE_EVENT_KINDS & FRAMES_GEN_KINDS) == FRAMES_GEN_KINDS,
               "the kinds calltree_event reads hold those that move addresses");

void calltree_event(struct calltree *t, const struct kevent *ev)
{
        uint16_t source;
        uint64_t ip;
        uint32_t tid;
        frames_gen_event(t->frames_gen, ev);
        switch (ev->type) {
        case KEV_SAMPLE:
                t->last_ns = ev->time_ns;
                source = 0;
                ip = ev->sample.ip;
                tid = ev->sample.tid;
                break;
        case KEV_PMC_SAMPLE:
                t->last_ns = ev->time_ns;
                source = ev->pmc_sample.source;
                ip = ev->pmc_sample.ip;
                tid = ev->pmc_sample.tid;
                break;
        case KEV_STACK:
                /* with no sample waiting, the stack is a switch's or a wake-up's */
                if (t->nr_unmatched)
                        stack_event(t, ev);
                return;
        case KEV_PROCESS: process_event(t, ev); return;
        default: return;
        }
        if (source != t->source)
                return;
        struct pending *p = &t->pend[ev->cpu % CALLTREE_MAX_CPUS];
        if (ev->cpu % CALLTREE_MAX_CPUS >= t->nr_pend)
                t->nr_pend = ev->cpu % CALLTREE_MAX_CPUS + 1;
        pending_flush(t, p);
        *p = (struct pending){ev->timestamp, ev->pid, tid, ip, true, false};
        t->nr_unmatched++;
}

bool calltree_waits_for_stack(const struct calltree *t)
{
        return t->nr_unmatched != 0;
}

uint64_t calltree_nr_samples(const struct calltree *t)
{
        return t->nr_samples;
}

uint32_t calltree_nr_nodes(const struct calltree *t)
{
        return t->nr_live;
}

uint64_t calltree_nr_cut(const struct calltree *t)
{
        return t->nr_cut;
}

uint64_t calltree_nr_evicted(const struct calltree *t)
{
        return t->nr_evicted;
}

uint64_t calltree_nr_walks(const struct calltree *t)
{
        return t->nr_walks;
}

uint64_t calltree_nr_frames_located(const struct calltree *t)
{
        return t->nr_located;
}

uint64_t calltree_nr_unplaced_located(const struct calltree *t)
{
        return t->nr_relocated;
}

static int cmp_pid(const void *a, const void *b)
{
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        return x < y ? -1 : x > y;
}

static int row_cmp(const void *a, const void *b)
{
        const struct calltree_row *x = a, *y = b;
        if (x->count != y->count)
                return x->count > y->count ? -1 : 1;
        return x->node < y->node ? -1 : x->node > y->node;
}

/* Names the nodes made without one whose module has since loaded, been described (a late
   image, a trace's CLR methods) or got its symbols (a recording's kernel symbols come at its
   end): a node named so joins its sibling of that function. Runs when the store changed. */
static void rekey(struct calltree *t)
{
        uint64_t generation = sym_store_generation(t->store);
        if (!t->nr_unnamed || generation == t->rekey_generation)
                return;
        t->rekey_generation = generation;
        calltree_settle(t);
        bool is_live = sym_store_is_live(t->store);
        const struct frames_gen *was = t->rekey_gen;
        unplaced_look(&t->probed);
        uint32_t nr_ended = t->nr_ended_pids;
        uint32_t *ended = xmalloc((nr_ended + 1) * sizeof(*ended));
        if (nr_ended)
                memcpy(ended, t->ended_pids, nr_ended * sizeof(*ended));
        qsort(ended, nr_ended, sizeof(*ended), cmp_pid);
        if (t->nr_prev_ended) {
                memmove(t->ended_pids, t->ended_pids + t->nr_prev_ended,
                        (t->nr_ended_pids - t->nr_prev_ended) * sizeof(*t->ended_pids));
                t->nr_ended_pids -= t->nr_prev_ended;
        }
        t->nr_prev_ended = t->nr_ended_pids;
        uint32_t keep = 0, nr_unplaced = 0;
        for (uint32_t i = 0; i < t->nr_unnamed; i++) {
                uint32_t id = t->unnamed[i];
                struct node *x = &t->nodes[id];
                if (x->parent == FREE_NODE || x->function)
                        continue;
                struct sym_loc loc = {x->module, x->rel};
                /* a node of no image at the last look whose process's addresses stayed is
                   not located again; live, the first of a process's is (sym_locate looks for
                   its JIT map once a refresh) and the others stand on it (unplaced.h) */
                if (!loc.module &&
                    !(was && unplaced_stands(&t->probed, t->frames_gen, was, x->pid, is_live))) {
                        t->nr_relocated++;
                        loc = sym_locate(t->store, x->pid, x->rel);
                        if (!loc.module && is_live)
                                unplaced_mark(&t->probed, x->pid);
                }
                /* settled is asked before the answer: a module that finishes loading in
                   between gave a pending one, and its node must wait for the next refresh */
                bool is_final = loc.module && sym_answers_are_final(t->store, loc.module);
                struct sym_frame f = {SYM_NO_MODULE, 0, 0, 0};
                if (loc.module)
                        sym_resolve(t->store, loc, &f);
                if (f.state == SYM_RESOLVED) {
                        calltree_rekey_node(t, id, loc.module, f.function, 0);
                        continue;
                }
                if (loc.module != x->module) /* placed in an image now, not named yet */
                        calltree_rekey_node(t, id, loc.module, 0, loc.rel);
                /* a module whose answers are settled will not name it later; an address no
                   image held in a process that ended will not be placed later */
                if (loc.module ? !is_final
                               : !bsearch(&x->pid, ended, nr_ended, sizeof(*ended), cmp_pid)) {
                        t->unnamed[keep++] = id;
                        nr_unplaced += !loc.module;
                }
        }
        free(ended);
        /* live, of the addresses no image held, the newest only: what waited longest for its
           image is likely not to get one (nodes in a module still loading all stay). A trace
           read keeps them all: a window saved without the session's start has its images only
           in the rundown at its end, and a leaf dropped here stayed unnamed for good, its
           function's row without callers (screen_tmux_keys under load) */
        if (is_live && nr_unplaced > CALLTREE_UNNAMED_MAX) {
                uint32_t drop = nr_unplaced - CALLTREE_UNNAMED_MAX, o = 0;
                for (uint32_t i = 0; i < keep; i++) {
                        if (drop && !t->nodes[t->unnamed[i]].module) {
                                drop--;
                                continue;
                        }
                        t->unnamed[o++] = t->unnamed[i];
                }
                keep = o;
        }
        t->nr_unnamed = keep;
        calltree_rekey_end(t);
        /* the processes' addresses as this look saw them, for the next one's nodes of no image */
        if (!t->rekey_gen)
                t->rekey_gen = xmalloc(sizeof(*t->rekey_gen));
        *t->rekey_gen = *t->frames_gen;
}

/* Samples whose stacks never came count now (their address alone). */
static void pending_flush_all(struct calltree *t)
{
        for (uint32_t c = 0; c < t->nr_pend; c++)
                pending_flush(t, &t->pend[c]);
}

void calltree_catch_up(struct calltree *t)
{
        /* live only, as the hot functions' looks (hot_look_flush): a trace read keeps them
           waiting until their stacks or its end (calltree_samples_end) */
        if (sym_store_is_live(t->store))
                pending_flush_all(t);
        rekey(t);
}

void calltree_before_remap(struct calltree *t, uint32_t pid)
{
        for (uint32_t c = 0; c < t->nr_pend; c++)
                if (t->pend[c].has && t->pend[c].pid == pid)
                        pending_flush(t, &t->pend[c]);
}

void calltree_kernel_moved(struct calltree *t)
{
        frames_gen_kernel_moved(t->frames_gen);
}

void calltree_samples_end(struct calltree *t)
{
        pending_flush_all(t);
}

uint32_t calltree_children(struct calltree *t, bool is_callers, uint32_t node,
                           const struct calltree_row **rows)
{
        if (node == 0) /* a new look at the tree */
                calltree_catch_up(t);
        calltree_settle(t);
        if (node == 0)
                node = is_callers ? ROOT_CALLERS : ROOT_TOP_DOWN;
        uint32_t n = 0;
        if (node < t->nr_nodes && t->nodes[node].parent != FREE_NODE) {
                for (uint32_t c = t->nodes[node].first_child; c; c = t->nodes[c].next_sibling) {
                        if (n == t->cap_rows) {
                                t->cap_rows = t->cap_rows ? t->cap_rows * 2 : 256;
                                struct calltree_row *r =
                                        xrealloc(t->rows, t->cap_rows * sizeof(*r));
                                t->rows = r;
                        }
                        const struct node *x = &t->nodes[c];
                        t->rows[n++] = (struct calltree_row){
                                c,        x->module, x->function,        x->rel,
                                x->count, x->self,   x->first_child != 0};
                }
        }
        if (n > 1)
                qsort(t->rows, n, sizeof(*t->rows), row_cmp);
        *rows = t->rows;
        return n;
}

uint32_t calltree_find_function(const struct calltree *t, enum calltree_owner by, uint32_t id,
                                uint32_t module, uint32_t function, uint64_t rel)
{
        uint32_t root = by == CALLTREE_PROCESS  ? ROOT_CALLERS_PID
                        : by == CALLTREE_THREAD ? ROOT_CALLERS_TID
                                                : ROOT_CALLERS;
        if (by == CALLTREE_THREAD && calltree_alias_find_shared(t, id))
                root = ROOT_CALLERS_PID; /* its process's, which is its own */
        /* (a row of no image has no node asked for: functions_view.c's row_node) */
        struct frame_key k = {module, function, function ? 0 : rel, by == CALLTREE_ALL ? 0 : id, 0};
        uint32_t j = (uint32_t)calltree_node_hash(root, &k) & t->index_mask;
        for (;; j = (j + 1) & t->index_mask) {
                uint32_t n = t->index[j];
                if (!n)
                        return 0;
                if (calltree_node_is(&t->nodes[n], root, &k))
                        return n;
        }
}

/* The paths a sample counts along: the callers', and the top-down's and the owners' counted. */
static void nr_trees_set(struct calltree *t)
{
        t->nr_trees = 1 + t->is_top_down +
                      (t->owners == CALLTREE_ALL       ? 0
                       : t->owners == CALLTREE_PROCESS ? 1
                                                       : 2);
}

void calltree_want(struct calltree *t, enum calltree_owner by)
{
        if (by == t->owners)
                return;
        /* what came before counts as it was: samples waiting for their stacks, memos' counts */
        pending_flush_all(t);
        calltree_settle(t);
        if (by == CALLTREE_PROCESS && t->owners == CALLTREE_THREAD) {
                /* the process's tree counted every sample the thread's did: it goes on */
                calltree_drop_root(t, ROOT_CALLERS_TID);
        } else {
                calltree_drop_root(t, ROOT_CALLERS_PID);
                calltree_drop_root(t, ROOT_CALLERS_TID);
                t->owners_from = t->nr_samples;
                t->owners_from_ns = t->last_ns;
        }
        calltree_alias_reset(t);
        /* the memos' paths are those of the trees counted when they were made */
        memset(t->memo, 0, MEMO_SLOTS * sizeof(*t->memo));
        if (t->thread_memo)
                memset(t->thread_memo, 0, THREAD_MEMO_SLOTS * sizeof(*t->thread_memo));
        t->owners = by;
        nr_trees_set(t);
}

void calltree_keep_top_down(struct calltree *t)
{
        calltree_want_top_down(t, true);
        t->is_top_down_kept = true;
}

void calltree_want_top_down(struct calltree *t, bool is_wanted)
{
        is_wanted = is_wanted || t->is_top_down_kept;
        if (is_wanted == t->is_top_down)
                return;
        pending_flush_all(t);
        calltree_settle(t);
        if (!is_wanted) {
                calltree_drop_root(t, ROOT_TOP_DOWN);
        } else {
                t->top_down_from = t->nr_samples;
                t->top_down_from_ns = t->last_ns;
        }
        /* the memos' paths are those of the trees counted when they were made */
        memset(t->memo, 0, MEMO_SLOTS * sizeof(*t->memo));
        if (t->thread_memo)
                memset(t->thread_memo, 0, THREAD_MEMO_SLOTS * sizeof(*t->thread_memo));
        t->is_top_down = is_wanted;
        nr_trees_set(t);
}

bool calltree_top_down_counts_all(const struct calltree *t, int64_t *since_ns)
{
        if (since_ns)
                *since_ns = t->top_down_from_ns;
        return t->is_top_down && !t->top_down_from;
}

uint64_t calltree_nr_samples_top_down(struct calltree *t)
{
        calltree_settle(t);
        return t->is_top_down ? t->nodes[ROOT_TOP_DOWN].count : 0;
}

bool calltree_counts_all(const struct calltree *t, enum calltree_owner by, int64_t *since_ns)
{
        bool is_counted = by == CALLTREE_ALL || t->owners == by ||
                          (by == CALLTREE_PROCESS && t->owners == CALLTREE_THREAD);
        if (since_ns)
                *since_ns = t->owners_from_ns;
        return is_counted && (by == CALLTREE_ALL || !t->owners_from);
}

bool calltree_has_children(const struct calltree *t, uint32_t node)
{
        return node < t->nr_nodes && t->nodes[node].parent != FREE_NODE &&
               t->nodes[node].first_child != 0;
}

void calltree_refresh(struct calltree *t, const struct agg_settings *s)
{
        pending_flush_all(t);
        if (s->mode == AGG_ZEROED) { /* the counts start over, as with z */
                calltree_reset(t);
        } else if (s->mode == AGG_DECAYING) {
                calltree_settle(t); /* what decays is what was counted */
                calltree_decay(t, s);
        }
}
