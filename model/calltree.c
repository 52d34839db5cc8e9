/* SPDX-License-Identifier: MIT */
/* calltree.c: owns the top-down and callers trees of sampled stacks. */
#include "model/calltree.h"
#include "model_util.h"

#include <stdlib.h>
#include <string.h>

#define MAX_CPUS       1024
#define MAX_FRAMES     256
#define MAX_ENDED_PIDS 16384 /* process ends remembered between two looks for names */

struct node {
        uint32_t parent; /* UINT32_MAX: a root, or a node merged into another (DEAD_PARENT) */
        uint32_t module;
        uint32_t function;
        uint32_t first_child, next_sibling;
        uint32_t pid; /* of the first stack that made it: where a module-0 address is looked for */
        uint64_t rel;
        uint64_t count, self;
};

/* A node merged into its sibling of the same function (see rekey): never a parent again. */
#define DEAD_PARENT (UINT32_MAX - 1)

struct frame_key {
        uint32_t module;
        uint32_t function;
        uint64_t rel;
};

struct pending {
        uint64_t timestamp;
        uint32_t pid;
        uint64_t ip;
        bool has;
        bool is_matched;
};

/* A stack seen before: the leaves its sample reached in both trees, good while the symbol
   store's generation stays (its frames would key the same nodes). */
struct stack_memo {
        uint64_t hash; /* of the pid and the raw frames */
        uint64_t generation;
        uint32_t pid, nr;
        uint32_t top_down, callers; /* the deepest nodes; 0: no memo */
        uint32_t nr_pending;        /* samples of this stack not yet counted along its paths */
};
#define MEMO_SLOTS (1u << 14)

struct calltree {
        struct sym_store *store; /* borrowed */
        uint32_t max_nodes;
        uint16_t source;
        struct node *nodes; /* owned; [0] the top-down root, [1] the callers root */
        uint32_t nr_nodes, cap_nodes;
        uint32_t *index; /* owned hash: (parent, key) -> node, 0 free */
        uint32_t index_mask;
        uint64_t nr_samples;
        struct pending pend[MAX_CPUS];
        uint32_t nr_pend;          /* CPUs seen with samples: the pending slots worth scanning */
        struct calltree_row *rows; /* owned: the last answer */
        uint32_t cap_rows;
        struct stack_memo *memo; /* owned: MEMO_SLOTS, by hash */
        uint64_t nr_pending;     /* the memos' nr_pending, summed */
        /* nodes made without a function name (their module loading, not yet described, or its
           symbols to come with the recording), named again when the symbol store changes */
        uint32_t *unnamed; /* owned: oldest first */
        uint32_t nr_unnamed, cap_unnamed;
        uint64_t rekey_generation; /* of the store, at the last look for their names */
        /* owned: processes that ended since the look for names before the last one, those
           before the last look first (nr_prev_ended): their frames no image held are not
           looked up again */
        uint32_t *ended_pids;
        uint32_t nr_ended_pids, nr_prev_ended, cap_ended_pids;
        uint64_t nr_cut; /* stacks cut short by a full tree */
};

#define ROOT_TOP_DOWN 0u
#define ROOT_CALLERS  1u

static uint64_t node_hash(uint32_t parent, const struct frame_key *k)
{
        return mix(((uint64_t)parent << 32 | k->module) ^
                   mix(k->rel ^ ((uint64_t)k->function << 40)));
}

static void roots(struct calltree *t)
{
        memset(t->nodes, 0, 2 * sizeof(*t->nodes));
        t->nodes[ROOT_TOP_DOWN].parent = UINT32_MAX;
        t->nodes[ROOT_CALLERS].parent = UINT32_MAX;
        t->nr_nodes = 2;
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
        t->index = xcalloc(t->index_mask + 1, sizeof(*t->index));
        t->memo = xcalloc(MEMO_SLOTS, sizeof(*t->memo));
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
        free(t->unnamed);
        free(t->ended_pids);
        free(t);
}

void calltree_reset(struct calltree *t)
{
        roots(t);
        memset(t->index, 0, (size_t)(t->index_mask + 1) * sizeof(*t->index));
        memset(t->pend, 0, sizeof(t->pend));
        memset(t->memo, 0, MEMO_SLOTS * sizeof(*t->memo));
        t->nr_pending = 0;
        t->nr_pend = 0;
        t->nr_samples = 0;
        t->nr_unnamed = 0;
        t->nr_ended_pids = t->nr_prev_ended = 0;
        t->nr_cut = 0;
}

static bool node_is(const struct node *n, uint32_t parent, const struct frame_key *k)
{
        return n->parent == parent && n->module == k->module && n->function == k->function &&
               n->rel == k->rel;
}

static void index_insert(struct calltree *t, uint32_t id)
{
        const struct node *n = &t->nodes[id];
        struct frame_key k = {n->module, n->function, n->rel};
        uint32_t j = (uint32_t)node_hash(n->parent, &k) & t->index_mask;
        while (t->index[j])
                j = (j + 1) & t->index_mask;
        t->index[j] = id;
}

/* The child of parent with key k, made when missing (for a stack of pid); 0 when the tree is
   full. */
static uint32_t child(struct calltree *t, uint32_t parent, const struct frame_key *k, uint32_t pid)
{
        uint32_t j = (uint32_t)node_hash(parent, k) & t->index_mask;
        for (;; j = (j + 1) & t->index_mask) {
                uint32_t id = t->index[j];
                if (!id)
                        break;
                if (node_is(&t->nodes[id], parent, k))
                        return id;
        }
        if (t->nr_nodes >= t->max_nodes)
                return 0;
        if (t->nr_nodes == t->cap_nodes) {
                t->cap_nodes *= 2;
                struct node *n = xrealloc(t->nodes, t->cap_nodes * sizeof(*n));
                t->nodes = n;
        }
        uint32_t id = t->nr_nodes++;
        struct node *n = &t->nodes[id];
        *n = (struct node){parent, k->module, k->function, 0, t->nodes[parent].first_child,
                           pid,    k->rel,    0,           0};
        t->nodes[parent].first_child = id;
        if (!k->function) {
                if (t->nr_unnamed == t->cap_unnamed) {
                        t->cap_unnamed = t->cap_unnamed ? t->cap_unnamed * 2 : 256;
                        t->unnamed = xrealloc(t->unnamed, t->cap_unnamed * sizeof(*t->unnamed));
                }
                t->unnamed[t->nr_unnamed++] = id;
        }
        if ((t->nr_nodes + 1) * 2 > t->index_mask + 1) {
                free(t->index);
                t->index_mask = t->index_mask * 2 + 1;
                t->index = xzalloc_table(t->index_mask + 1, sizeof(*t->index));
                for (uint32_t i = 2; i < t->nr_nodes; i++)
                        index_insert(t, i);
        } else {
                t->index[j] = id;
        }
        return id;
}

static struct frame_key key_of(struct calltree *t, uint32_t pid, uint64_t addr)
{
        struct sym_loc loc = sym_locate(t->store, pid, addr);
        struct frame_key k = {loc.module, 0, loc.rel};
        if (loc.module) {
                struct sym_frame f;
                sym_resolve(t->store, loc, &f);
                if (f.state == SYM_RESOLVED) {
                        k.function = f.function;
                        k.rel = 0;
                }
        }
        return k;
}

static uint64_t stack_hash(uint32_t pid, const uint64_t *frames, uint32_t nr)
{
        uint64_t h = (uint64_t)pid << 32 | nr;
        for (uint32_t i = 0; i < nr; i++)
                h = ((h << 27 | h >> 37) ^ frames[i]) * 0x9e3779b97f4a7c15ull;
        return mix(h);
}

/* Counts n samples along the path from node up to its root. Their self count goes to the leaf
   in the top-down tree, to the root's child (the sampled function) in the callers tree. */
static void count_path(struct calltree *t, uint32_t node, bool is_self_at_leaf, uint64_t n)
{
        if (is_self_at_leaf)
                t->nodes[node].self += n;
        for (;;) {
                struct node *x = &t->nodes[node];
                x->count += n;
                if (x->parent == UINT32_MAX)
                        return;
                if (!is_self_at_leaf && t->nodes[x->parent].parent == UINT32_MAX)
                        x->self += n;
                node = x->parent;
        }
}

/* Counts a memo's waiting samples along its paths. */
static void memo_settle(struct calltree *t, struct stack_memo *m)
{
        if (!m->nr_pending)
                return;
        count_path(t, m->top_down, true, m->nr_pending);
        count_path(t, m->callers, false, m->nr_pending);
        t->nr_pending -= m->nr_pending;
        m->nr_pending = 0;
}

/* Every waiting sample counted: before anyone reads the counts. */
static void memo_settle_all(struct calltree *t)
{
        for (uint32_t i = 0; t->nr_pending && i < MEMO_SLOTS; i++)
                memo_settle(t, &t->memo[i]);
}

/* Counts a sample along the path of keys from root, made where missing: outermost caller first
   in the top-down tree, the sampled function first in the callers tree; its self count goes to
   the sampled function's node. Returns the deepest node reached; *is_whole turns false when a
   full tree cut the path short. */
static uint32_t descend(struct calltree *t, uint32_t root, const struct frame_key *keys,
                        uint32_t nr, uint32_t pid, bool is_top_down, bool *is_whole)
{
        uint32_t node = root;
        t->nodes[node].count++;
        for (uint32_t d = 0; d < nr; d++) {
                uint32_t i = is_top_down ? nr - 1 - d : d;
                uint32_t c = child(t, node, &keys[i], pid);
                if (!c) {
                        *is_whole = false;
                        break;
                }
                node = c;
                t->nodes[node].count++;
                if (i == 0)
                        t->nodes[node].self++;
        }
        return node;
}

/* frames[0] is the sampled address, the last the outermost caller */
static void insert(struct calltree *t, uint32_t pid, const uint64_t *frames, uint32_t nr)
{
        if (nr > MAX_FRAMES)
                nr = MAX_FRAMES;
        if (!nr)
                return;
        uint64_t generation = sym_store_generation(t->store);
        /* the sampled address by its place in the tree (its function, when known: the samples
           of one function's instructions share their paths), its callers by address: a memo
           per calling context rather than per instruction */
        struct frame_key leaf = key_of(t, pid, frames[0]);
        uint64_t hash = stack_hash(pid, frames + 1, nr - 1) ^
                        mix((uint64_t)leaf.module << 40 ^ (uint64_t)leaf.function << 8 ^
                            leaf.rel * 0x9e3779b97f4a7c15ull ^ nr);
        struct stack_memo *m = &t->memo[hash & (MEMO_SLOTS - 1)];
        t->nr_samples++;
        if (m->top_down && m->hash == hash && m->generation == generation && m->pid == pid &&
            m->nr == nr) {
                /* counted along its paths when the counts are read or the memo is replaced:
                   a stack seen again costs no walk up two trees */
                m->nr_pending++;
                t->nr_pending++;
                return;
        }
        memo_settle(t, m);
        struct frame_key keys[MAX_FRAMES];
        keys[0] = leaf;
        for (uint32_t i = 1; i < nr; i++)
                keys[i] = key_of(t, pid, frames[i]);
        bool is_whole = true;
        uint32_t top_down = descend(t, ROOT_TOP_DOWN, keys, nr, pid, true, &is_whole);
        uint32_t callers = descend(t, ROOT_CALLERS, keys, nr, pid, false, &is_whole);
        /* a path cut short by a full tree is not remembered: its sample counted where it
           stopped, and a later one may find room */
        if (is_whole)
                *m = (struct stack_memo){hash, generation, pid, nr, top_down, callers, 0};
        else
                t->nr_cut++;
}

static void pending_flush(struct calltree *t, struct pending *p)
{
        if (p->has && !p->is_matched)
                insert(t, p->pid, &p->ip, 1);
        p->has = false;
}

void calltree_event(struct calltree *t, const struct kevent *ev)
{
        uint16_t source;
        uint64_t ip;
        switch (ev->type) {
        case KEV_SAMPLE:
                source = 0;
                ip = ev->sample.ip;
                break;
        case KEV_PMC_SAMPLE:
                source = ev->pmc_sample.source;
                ip = ev->pmc_sample.ip;
                break;
        case KEV_STACK: {
                struct pending *p = &t->pend[ev->cpu % MAX_CPUS];
                if (!p->has || p->is_matched || p->timestamp != ev->stack.event_timestamp) {
                        p = NULL;
                        for (uint32_t c = 0; c < t->nr_pend && !p; c++)
                                if (t->pend[c].has && !t->pend[c].is_matched &&
                                    t->pend[c].timestamp == ev->stack.event_timestamp)
                                        p = &t->pend[c];
                }
                if (!p)
                        return; /* the stack of a switch or a wake-up */
                p->is_matched = true;
                uint64_t frames[MAX_FRAMES];
                uint32_t n = 0;
                /* the sampled address first, unless the stack starts with it already */
                if (!ev->stack.nr_frames || ev->stack.frames[0] != p->ip)
                        frames[n++] = p->ip;
                for (uint32_t i = 0; i < ev->stack.nr_frames && n < MAX_FRAMES; i++)
                        frames[n++] = ev->stack.frames[i];
                insert(t, ev->stack.pid != UINT32_MAX ? ev->stack.pid : p->pid, frames, n);
                return;
        }
        case KEV_PROCESS:
                if ((ev->process.phase == KEV_PHASE_END ||
                     ev->process.phase == KEV_PHASE_DEFUNCT) &&
                    t->nr_ended_pids < MAX_ENDED_PIDS) {
                        if (t->nr_ended_pids == t->cap_ended_pids) {
                                t->cap_ended_pids = t->cap_ended_pids ? t->cap_ended_pids * 2 : 256;
                                t->ended_pids = xrealloc(
                                        t->ended_pids, t->cap_ended_pids * sizeof(*t->ended_pids));
                        }
                        t->ended_pids[t->nr_ended_pids++] = ev->process.pid;
                }
                return;
        default: return;
        }
        if (source != t->source)
                return;
        struct pending *p = &t->pend[ev->cpu % MAX_CPUS];
        if (ev->cpu % MAX_CPUS >= t->nr_pend)
                t->nr_pend = ev->cpu % MAX_CPUS + 1;
        pending_flush(t, p);
        *p = (struct pending){ev->timestamp, ev->pid, ip, true, false};
}

uint64_t calltree_nr_samples(const struct calltree *t)
{
        return t->nr_samples;
}

uint32_t calltree_nr_nodes(const struct calltree *t)
{
        return t->nr_nodes;
}

uint64_t calltree_nr_cut(const struct calltree *t)
{
        return t->nr_cut;
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

/* The nodes again in one index, their sibling lists rebuilt, a node whose key a sibling has
   merged into that sibling (its counts and children with it). Parents come before their
   children in the array (a child is made after its parent), so one pass in order sees each
   parent's final place before its children. */
static void merge_siblings(struct calltree *t)
{
        uint32_t *rep = xmalloc(t->nr_nodes * sizeof(*rep));
        memset(t->index, 0, (size_t)(t->index_mask + 1) * sizeof(*t->index));
        for (uint32_t id = 0; id < t->nr_nodes; id++) {
                struct node *x = &t->nodes[id];
                rep[id] = id;
                x->first_child = x->next_sibling = 0;
                if (x->parent == UINT32_MAX || x->parent == DEAD_PARENT)
                        continue;
                x->parent = rep[x->parent];
                struct frame_key k = {x->module, x->function, x->rel};
                uint32_t j = (uint32_t)node_hash(x->parent, &k) & t->index_mask;
                for (; t->index[j]; j = (j + 1) & t->index_mask) {
                        uint32_t other = t->index[j];
                        if (node_is(&t->nodes[other], x->parent, &k)) {
                                t->nodes[other].count += x->count;
                                t->nodes[other].self += x->self;
                                rep[id] = other;
                                x->parent = DEAD_PARENT;
                                break;
                        }
                }
                if (x->parent != DEAD_PARENT)
                        t->index[j] = id;
        }
        for (uint32_t id = t->nr_nodes; id-- > 2;) {
                struct node *x = &t->nodes[id];
                if (x->parent == DEAD_PARENT)
                        continue;
                x->next_sibling = t->nodes[x->parent].first_child;
                t->nodes[x->parent].first_child = id;
        }
        free(rep);
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
        memo_settle_all(t);
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
        bool is_changed = false;
        uint32_t keep = 0, nr_unplaced = 0;
        for (uint32_t i = 0; i < t->nr_unnamed; i++) {
                uint32_t id = t->unnamed[i];
                struct node *x = &t->nodes[id];
                if (x->parent == DEAD_PARENT || x->function)
                        continue;
                struct sym_loc loc = {x->module, x->rel};
                if (!loc.module)
                        loc = sym_locate(t->store, x->pid, x->rel);
                /* settled is asked before the answer: a module that finishes loading in
                   between gave a pending one, and its node must wait for the next refresh */
                bool is_final = loc.module && sym_answers_are_final(t->store, loc.module);
                struct sym_frame f = {SYM_NO_MODULE, 0, 0, 0};
                if (loc.module)
                        sym_resolve(t->store, loc, &f);
                if (f.state == SYM_RESOLVED) {
                        x->module = loc.module;
                        x->function = f.function;
                        x->rel = 0;
                        is_changed = true;
                        continue;
                }
                if (loc.module != x->module) {
                        x->module = loc.module; /* placed in an image now, not named yet */
                        x->rel = loc.rel;
                        is_changed = true;
                }
                /* a module whose answers are settled will not name it later; an address no
                   image held in a process that ended will not be placed later */
                if (loc.module ? !is_final
                               : !bsearch(&x->pid, ended, nr_ended, sizeof(*ended), cmp_pid)) {
                        t->unnamed[keep++] = id;
                        nr_unplaced += !loc.module;
                }
        }
        free(ended);
        /* of the addresses no image held, the newest only: what waited longest for its image
           is likely not to get one (nodes in a module still loading all stay) */
        if (nr_unplaced > CALLTREE_UNNAMED_MAX) {
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
        if (!is_changed)
                return;
        merge_siblings(t);
        /* the memos' leaves may have merged away */
        memset(t->memo, 0, MEMO_SLOTS * sizeof(*t->memo));
}

uint32_t calltree_children(struct calltree *t, bool is_callers, uint32_t node,
                           const struct calltree_row **rows)
{
        if (node == 0) { /* a new look at the tree: samples whose stacks never came count now */
                for (uint32_t c = 0; c < t->nr_pend; c++)
                        pending_flush(t, &t->pend[c]);
                rekey(t);
        }
        memo_settle_all(t);
        if (node == 0)
                node = is_callers ? ROOT_CALLERS : ROOT_TOP_DOWN;
        uint32_t n = 0;
        if (node < t->nr_nodes) {
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

uint32_t calltree_find_function(const struct calltree *t, uint32_t module, uint32_t function,
                                uint64_t rel)
{
        struct frame_key k = {module, function, function ? 0 : rel};
        uint32_t j = (uint32_t)node_hash(ROOT_CALLERS, &k) & t->index_mask;
        for (;; j = (j + 1) & t->index_mask) {
                uint32_t id = t->index[j];
                if (!id)
                        return 0;
                if (node_is(&t->nodes[id], ROOT_CALLERS, &k))
                        return id;
        }
}

bool calltree_has_children(const struct calltree *t, uint32_t node)
{
        return node < t->nr_nodes && t->nodes[node].first_child != 0;
}
