/* SPDX-License-Identifier: MIT */
/* calltree_impl.h (internal to model/): the call tree's nodes, roots, stack memos and pending
   samples, shared by calltree.c (counting stacks, answering), calltree_memo.c (the stack memos
   found and settled) and calltree_prune.c (nodes merged, decayed or evicted). */
#ifndef ETWTOP_MODEL_CALLTREE_IMPL_H
#define ETWTOP_MODEL_CALLTREE_IMPL_H

#include "model/calltree.h"
#include "symbols/symbols.h"
#include "frames_gen.h"
#include "unplaced.h"
#include "model_util.h"
#include "pending_slots.h"
#include "memo_ways.h"

#define CALLTREE_MAX_CPUS 1024

struct node {
        uint32_t parent; /* UINT32_MAX: a root; FREE_NODE: a free slot */
        uint32_t module;
        uint32_t function;
        uint32_t first_child;
        uint32_t next_sibling; /* a free slot: the next free one */
        uint32_t pid; /* of the first stack that made it: where a module-0 address is looked for */
        uint32_t owner; /* a sampled function's node under a process's or thread's root: its id */
        /* the samples through it lately: as count, halved at each eviction (saturating): what
           eviction goes by, so that nodes hot long ago cool and the newly hot stay */
        uint32_t heat;
        uint64_t rel;
        uint64_t count, self;
};

#define FREE_NODE (UINT32_MAX - 1)

/* The roots: the top-down tree, and the callers trees of every process's samples, of each
   process's (their sampled functions keyed by pid) and of each thread's (by tid). */
#define ROOT_TOP_DOWN       0u
#define ROOT_CALLERS        1u
#define ROOT_CALLERS_PID    2u
#define ROOT_CALLERS_TID    3u
#define NR_ROOTS            4u
#define NR_TREES_PER_SAMPLE 4u /* the most paths a sample counts along, one per root */

struct frame_key {
        uint32_t module;
        uint32_t function;
        uint64_t rel;
        uint32_t owner; /* 0, or a pid or tid (a sampled function under ROOT_CALLERS_PID, _TID) */
        /* an address of no image (module 0): its process (the node's pid), whose image may
           place it later; 0 for the others. Two processes' addresses of no image are two nodes:
           one node placed by its first process's image named the other's samples by an image
           their process never had, and as the looks for names fell (test_rows_read) */
        uint32_t space;
};

struct pending {
        uint64_t timestamp;
        uint32_t pid, tid;
        uint64_t ip;
        bool has;
        bool is_matched;
};

/* A stack seen before: the leaves its sample reached in the trees of every process's and its
   process's samples (0 for the process's when it is not counted), good while its process's frames
   generation stays (frames_gen.h: its frames would key the same nodes, or nodes the next look for
   names renames to those) and those nodes stay. */
/* ROOT_TOP_DOWN, ROOT_CALLERS, ROOT_CALLERS_PID: leaves[r] is root r's */
#define NR_MEMO_TREES 3u
_Static_assert(ROOT_TOP_DOWN == 0 && ROOT_CALLERS == 1 && ROOT_CALLERS_PID == 2,
               "a stack memo's leaves are indexed by their roots");
struct stack_memo {
        uint64_t hash; /* of the pids and the raw frames */
        uint64_t generation;
        uint32_t pid, owner_pid, nr;
        /* the deepest nodes, by root (0: a tree not counted); [1], every process's callers,
           always counted: 0, no memo */
        uint32_t leaves[NR_MEMO_TREES];
        uint32_t nr_pending; /* samples of this stack not yet counted along its paths */
};
/* Two slots a stack's hash (memo_ways.h). */
#define MEMO_SLOTS (1u << 14)

/* The same stack in one thread: its leaf in the tree of each thread's samples. The threads of a
   pool run the same stacks: their paths are found from the stack's callers path, without
   looking its frames up again. */
struct thread_memo {
        uint64_t hash; /* the stack memo's */
        uint64_t generation;
        uint32_t tid;
        uint32_t leaf; /* 0: no memo */
        uint32_t nr_pending;
};
#define THREAD_MEMO_SLOTS (1u << 15)

/* A frame's key seen before (calltree.c key_of): its process's address, good while the
   process's frames generation stays and the answer stands (a module whose answers are final,
   or a recording's kernel under the same sym_answers_epoch). A new stack's frames are mostly
   known ones: they are not located and resolved again. A recording's frames of no image are
   kept too (only its events place them); a live session's are not (a JIT map may place them
   at the next look), as the hot functions' frame memo does. */
struct key_memo {
        uint64_t addr;
        uint64_t generation; /* frames_gen_of its pid */
        uint32_t pid;
        uint32_t epoch; /* 0: final; else the module's sym_answers_epoch */
        struct frame_key key;
        bool is_set;
};
#define KEY_MEMO_SLOTS (1u << 14)

/* A pid or tid whose thread's callers tree is its process's (calltree_alias.c). */
struct calltree_alias {
        uint32_t id;
        uint8_t state; /* 0: a free slot */
};
#define CALLTREE_ALIASES_MAX (1u << 17)

struct calltree {
        struct sym_store *store; /* borrowed */
        uint32_t max_nodes;
        uint16_t source;
        struct node *nodes; /* owned; [0, NR_ROOTS) the roots */
        uint32_t nr_nodes;  /* the slots used so far, free ones with them */
        uint32_t cap_nodes;
        uint32_t nr_live;   /* the nodes in the trees, roots too */
        uint32_t free_head; /* the first free slot (0: none) */
        uint32_t *index;    /* owned hash: (parent, key) -> node, 0 free */
        uint32_t index_mask;
        uint64_t nr_samples;
        struct pending pend[CALLTREE_MAX_CPUS];
        /* the next stack's sampled place, as the hot functions found it (calltree_leaf) */
        struct {
                uint64_t timestamp, ip, rel;
                uint32_t pid, module, function;
                bool has;
                /* its callers' hash_frames, where given (calltree_leaf_callers) */
                uint64_t callers_frames_hash;
                uint32_t nr_callers;
                bool has_callers;
        } leaf_given;
        uint32_t nr_pend; /* CPUs seen with samples: the pending slots worth scanning */
        /* the pending samples that wait for their stacks (has, not is_matched): with none, a
           stack is a switch's or a wake-up's, and no CPU's slot is looked at */
        uint32_t nr_unmatched;
        struct calltree_row *rows; /* owned: the last answer */
        uint32_t cap_rows;
        struct stack_memo *memo; /* owned: MEMO_SLOTS, by hash, in pairs */
        /* a bit a pair of memo slots: its second used last (memo_find) */
        uint64_t memo_second_recent[MEMO_WAYS_WORDS(MEMO_SLOTS / 2)];
        /* the hash of the callers of the stack that comes next, as calltree_prefetch_stack
           found it for that stack's memo: the stack's sample's timestamp, its process, the
           frames with the sampled address */
        struct {
                uint64_t timestamp, hash;
                uint32_t pid, nr;
                bool has;
                /* the memo's hash too, where the leaf was given (memo_hash: the leaf's key and
                   the owner it was made of), and the sample the stack goes to */
                uint64_t memo_hash;
                struct frame_key memo_leaf;
                uint32_t memo_owner;
                bool has_memo_hash;
                struct pending *p;
        } pre;
        struct thread_memo *thread_memo; /* owned: THREAD_MEMO_SLOTS, by hash and tid (NULL until a
                                            thread has its own tree: insert) */
        uint64_t nr_pending;             /* the memos' nr_pending, summed */
        /* the memos whose nr_pending left 0 since the last settle (calltree_settle) */
        struct pending_slots pending_memos, pending_thread_memos;
        /* nodes made without a function name (their module loading, not yet described, or its
           symbols to come with the recording), named again when the symbol store changes */
        uint32_t *unnamed; /* owned: oldest first */
        uint32_t nr_unnamed, cap_unnamed;
        uint64_t rekey_generation; /* of the store, at the last look for their names */
        /* owned: the frames' generations at the last look for names (NULL before the first):
           a node no image held then is not located again while its process's addresses stay
           (calltree.c unplaced_stands) */
        struct frames_gen *rekey_gen;
        /* live, the processes whose first node of no image this look located and found none
           for (a JIT map, looked for once a refresh, would have placed it) */
        struct unplaced_probed probed;
        uint64_t nr_relocated; /* calltree_nr_unplaced_located */
        /* owned: processes that ended since the look for names before the last one, those
           before the last look first (nr_prev_ended): their frames no image held are not
           looked up again */
        uint32_t *ended_pids;
        uint32_t nr_ended_pids, nr_prev_ended, cap_ended_pids;
        /* owned: while nodes are named (calltree_rekey_node), those merged into a sibling and
           their parents, until calltree_rekey_end */
        uint32_t *freed, *dirty;
        uint32_t nr_freed, cap_freed, nr_dirty, cap_dirty;
        struct calltree_alias *aliases; /* owned: by id, open addressing (NULL: none yet) */
        uint32_t alias_mask, nr_aliases;
        struct frames_gen *frames_gen; /* owned: what the memos hold good under */
        struct key_memo *key_memo;     /* owned: KEY_MEMO_SLOTS, at first use */
        /* the callers trees by owner counted (calltree_want): CALLTREE_ALL none, _PROCESS the
           process's, _THREAD the process's and the thread's */
        enum calltree_owner owners;
        /* the top-down tree counted (calltree_want_top_down): its one reader is the view of it */
        bool is_top_down;
        bool is_top_down_kept;    /* calltree_keep_top_down */
        uint64_t top_down_from;   /* samples counted before it began (0: none) */
        int64_t top_down_from_ns; /* the last of them's time */
        uint32_t nr_trees;        /* the paths a sample counts along: 1 to NR_TREES_PER_SAMPLE */
        uint64_t owners_from;     /* samples counted before the owners' trees began (0: none) */
        int64_t owners_from_ns;   /* the last of them's time */
        int64_t last_ns;          /* the latest sample's time */
        uint64_t nr_cut;          /* stacks cut short by a full tree */
        uint64_t nr_evicted;      /* nodes evicted for room */
        uint64_t nr_walks;        /* stacks looked up and walked (calltree_nr_walks) */
        uint64_t nr_located;      /* calltree_nr_frames_located */
};

/* A node's hash in two steps: its key's part (the same under every parent: a stack's keys are
   hashed once for the four trees), then with its parent and module. */
static inline uint64_t calltree_key_hash(const struct frame_key *k)
{
        return hash_mix64(k->rel ^ ((uint64_t)k->function << 40) ^ ((uint64_t)k->owner << 20) ^
                          ((uint64_t)k->space << 48));
}

static inline uint64_t calltree_node_hash_with(uint32_t parent, uint32_t module, uint64_t key_hash)
{
        return hash_mix64(((uint64_t)parent << 32 | module) ^ key_hash);
}

static inline uint64_t calltree_node_hash(uint32_t parent, const struct frame_key *k)
{
        return calltree_node_hash_with(parent, k->module, calltree_key_hash(k));
}

static inline bool calltree_node_is(const struct node *n, uint32_t parent,
                                    const struct frame_key *k)
{
        return n->parent == parent && n->module == k->module && n->function == k->function &&
               n->rel == k->rel && n->owner == k->owner && (n->module || n->pid == k->space);
}

static inline struct frame_key calltree_key_of_node(const struct node *n)
{
        return (struct frame_key){n->module, n->function, n->rel, n->owner, n->module ? 0 : n->pid};
}

static inline void calltree_heat_add(struct node *x, uint64_t n)
{
        x->heat = n < UINT32_MAX - x->heat ? x->heat + (uint32_t)n : UINT32_MAX;
}

/* The child of parent with key k, made when missing (for a stack of pid); 0 when the tree is
   full. */
uint32_t calltree_child(struct calltree *t, uint32_t parent, const struct frame_key *k,
                        uint32_t pid);

/* calltree_alias.c: whether a sample of thread tid, counted for process owner_pid, counts in
   the thread's callers tree through its process's (a main thread, the only one sampled in its
   process): then the thread has no nodes of its own. A process's second thread, or the
   thread's sample in another process, gives it its own tree, copied from its process's. */
bool calltree_alias_is_shared(struct calltree *t, uint32_t tid, uint32_t owner_pid);
/* Whether thread tid's callers are its process's (pid tid) tree. */
bool calltree_alias_find_shared(const struct calltree *t, uint32_t tid);
void calltree_alias_reset(struct calltree *t);

/* calltree_memo.c: the hash of a stack's frames in process pid (of its callers: the frames
   after the sampled one). */
uint64_t calltree_stack_hash(uint32_t pid, const uint64_t *frames, uint32_t nr);
/* calltree_stack_hash from the frames' hash_frames (frames_hash). */
static inline uint64_t calltree_stack_hash_of(uint32_t pid, uint64_t frames_hash, uint32_t nr)
{
        return hash_mix64(frames_hash ^ hash_mix64((uint64_t)pid << 32 | nr));
}

/* A stack memo's hash: its callers' (calltree_stack_hash), its leaf's place, its frames and
   the process its leaf is counted under. */
static inline uint64_t calltree_memo_hash(uint64_t callers_hash, const struct frame_key *leaf,
                                          uint32_t nr, uint32_t owner_pid)
{
        return callers_hash ^
               hash_mix64((uint64_t)leaf->module << 40 ^ (uint64_t)leaf->function << 8 ^
                          leaf->rel * 0x9e3779b97f4a7c15ull ^ nr ^ (uint64_t)owner_pid << 32);
}

/* The memo slots of hash: a pair. */
static inline struct stack_memo *calltree_memo_pair(struct calltree *t, uint64_t hash)
{
        return &t->memo[(uint32_t)hash & (MEMO_SLOTS - 2)];
}

/* The memo of a stack: the slot of its pair that holds it (*is_hit), else the one it takes
   (memo_ways.h). */
struct stack_memo *calltree_memo_find(struct calltree *t, uint64_t hash, uint64_t generation,
                                      uint32_t pid, uint32_t owner_pid, uint32_t nr, bool *is_hit);

/* A sample of memo m's stack (of thread memo m's thread), counted along its paths at the next
   settle. */
static inline void calltree_memo_pend(struct calltree *t, struct stack_memo *m)
{
        if (!m->nr_pending++)
                pending_slots_add(&t->pending_memos, (uint32_t)(m - t->memo), MEMO_SLOTS);
        t->nr_pending++;
}

static inline void calltree_thread_memo_pend(struct calltree *t, struct thread_memo *m)
{
        if (!m->nr_pending++)
                pending_slots_add(&t->pending_thread_memos, (uint32_t)(m - t->thread_memo),
                                  THREAD_MEMO_SLOTS);
        t->nr_pending++;
}

/* A memo's (a thread memo's) waiting samples counted along its paths. */
void calltree_memo_settle(struct calltree *t, struct stack_memo *m);
void calltree_thread_memo_settle(struct calltree *t, struct thread_memo *m);
/* Every waiting sample counted along its paths: before the counts are read or nodes go. */
void calltree_settle(struct calltree *t);

/* Node id keyed again (named, or placed in an image): a sibling with that key already takes it
   in, its counts and children with it (calltree_prune.c). The memos' waiting samples must be
   counted before; calltree_rekey_end after the last. */
void calltree_rekey_node(struct calltree *t, uint32_t id, uint32_t module, uint32_t function,
                         uint64_t rel);
/* The nodes merged by calltree_rekey_node freed, the memos and unnamed list rid of them. */
void calltree_rekey_end(struct calltree *t);
/* Every count by the mode s (decaying), the nodes that fall to nothing dropped with what is
   under them (calltree_prune.c). */
void calltree_decay(struct calltree *t, const struct agg_settings *s);
/* The callers trees under root (ROOT_CALLERS_PID or _TID) dropped, every node of them
   (calltree_prune.c). The memos must be rid of them after. */
void calltree_drop_root(struct calltree *t, uint32_t root);
/* The coldest nodes (the fewest samples through them lately: heat) evicted until at most target are
   left, with the nodes under them (calltree_prune.c). */
void calltree_evict(struct calltree *t, uint32_t target);

#endif
