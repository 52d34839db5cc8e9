/* SPDX-License-Identifier: MIT */
/* hot_impl.h (internal to model/): the hot functions' table of places, their pending samples,
   stack memos and deferred stacks, shared by hot.c (counting), hot_memo.c (stack memos and
   deferred stacks), hot_rows.c (refresh and rows) and hot_places.c (the places of one function,
   source lines). */
#ifndef ETWTOP_MODEL_HOT_IMPL_H
#define ETWTOP_MODEL_HOT_IMPL_H

#include "model/hot.h"
#include "model_util.h"
#include "symbols/symbols.h"
#include "pending_slots.h"
#include "memo_ways.h"
#include "unplaced.h"

#define MAX_CPUS       1024
#define MAX_SOURCES    AGG_MAX_SOURCES
#define MAX_DECLARED   4096 /* a perf.data's events (perf_data.c's MAX_EVENTS) */
#define MAX_STACK_KEYS 256
#define SEEN_SLOTS     1024 /* > 2 * MAX_STACK_KEYS: probes stay short */
/* process ends remembered over two refreshes; the unplaced places of the rest wait for
   HOT_UNPLACED_MAX */
#define MAX_ENDED_PIDS 16384

/* One counted place: a located address (module, rel) of one source; addresses no image held
   at the time keep their pid, to be placed again when the rows are built. */
struct entry {
        uint64_t rel;
        uint32_t module;
        uint32_t pid; /* the sampled process: rows group by it, and module 0 is placed by it */
        uint32_t tid; /* the sampled thread: rows group by it (HOT_BY_THREAD) */
        uint16_t source;
        bool is_used;
        /* its process ended (pid AGG_ALL: the places of processes past HOT_EXITED_MAX, folded
           together); a new sample under the same key (a reused pid) makes it live again */
        bool is_exited;
        /* 0: ask the symbol store; else its settled answer's sym_state + 1 (function holds a
           resolved one's name): an answer of a module whose answers are settled stays */
        uint8_t answer;
        /* 0: the answer is final; else the store's sym_answers_epoch it was given under (a
           recording's kernel), good while the epoch stays (in the padding: 16 bits) */
        uint16_t epoch;
        uint32_t function;
        uint64_t self, total;
        /* of total: the stacks that had this place's function at another of its places too,
           counted there (a recursive function's row counts each stack once) */
        uint64_t dup;
        /* hot_key_hash of its key, where the table holds it (place_new): a stack's frame found
           in the frame memo, a growth and a deletion read it rather than hash the key again
           (1.5 M frames of a compile's replay hashed twice over); a key outside the table
           (keys[], pending) leaves it unset */
        uint64_t hash;
};
/* One a cache line (the table aligned: xzalloc_table): a probe reads one line. */
_Static_assert(sizeof(struct entry) == 64, "a place is a cache line");

struct pending {
        uint64_t timestamp;
        struct entry key;
        uint64_t ip;
        uint32_t pid; /* the sample's process (the key's may be AGG_ALL: hot_set_place_keys) */
        /* the key's slot as the sample counted it (UINT32_MAX: none), good while the table's
           epoch stays: its stack finds its leaf there without hashing the key again */
        uint32_t slot, epoch;
        bool has;
        bool is_matched;
        /* the sample's thread was not known yet (a live session delivers a CPU's buffer before
           the rundown's): its place waits for its stack, which names the process */
        bool is_unplaced;
};

/* A row's key in one field of the order, and the row. */
struct sort_item {
        uint64_t key;
        uint32_t row;
};

/* A stack seen before: the places it counts in, good while its process's frames generation
   (frames_gen.h) and the table's epoch stay. Its later samples count along them when
   the totals are read or the places move (a stack seen again costs no lookup of its frames). */
#define MEMO_SLOTS  4096 /* two a stack's hash (memo_ways.h) */
#define MEMO_PLACES 32
struct stack_memo {
        uint64_t hash; /* of the source, the pids, the sampled place and the raw frames */
        uint64_t generation;
        uint32_t epoch;
        uint32_t nr_places;
        uint32_t nr_pending;
        /* false: no memo. A stack of the sampled place alone (no callers: a kernel thread's,
           an interrupted idle loop's) has no places here and is a memo all the same, so that
           its later samples count their leaf and nothing else, as the other stacks' do */
        bool is_set;
        uint64_t functions;           /* a bit per function of its places (function_bit) */
        uint64_t place_bits;          /* a bit per place (hot_memo_place_bit) */
        uint32_t places[MEMO_PLACES]; /* slot indices, MEMO_DUP set where the stack counts dup */
};
/* A place's bit in a memo's place_bits: a leaf whose bit is clear is none of the memo's callers'
   places, and its places (two more lines) are not scanned for it. */
static inline uint64_t hot_memo_place_bit(uint32_t slot)
{
        return 1ull << ((slot * 0x9e3779b9u) >> 26);
}
#define MEMO_DUP 0x80000000u

/* A caller's frame seen before, in a stack that missed the stack memo, or a sampled address:
   the slot of the place its raw address (of its process, with the stack's thread and source)
   was counted at, good while the process's frames generation and the table's epoch stay. A
   compile's stacks are mostly new, their frames are not, and a hot loop's samples fall on a
   few addresses: a frame or sample found here is not located, hashed or probed for again. A live
   session's frames of no module are not kept (a JIT map may place them later: sym_locate looks for
   it at each refresh); a recording's are (its answers move with events). */
#define FRAME_SLOTS (1u << 14)
/* A place's answer by its module and address, the store's as hot_place_answer kept it in an
   entry (final, or under a recording kernel's sym_answers_epoch): the places are keyed by
   thread, and a process's threads, or a new process of the same program, sample the same
   addresses: their places take the answer without asking the store again (two thirds of the
   answers a recording of bench/top.sh's asked for were of an address answered before). */
#define ANSWER_SLOTS (1u << 13)
struct answer_memo {
        uint64_t rel;
        uint32_t module; /* 0: none */
        uint32_t function;
        uint16_t epoch; /* as the entry's */
        uint8_t answer; /* as the entry's */
};

struct frame_memo {
        uint64_t addr;
        /* frames_gen_of its pid, its low 32 bits (2^32 changes of one process's images apart
           would be needed to take one generation for another) */
        uint32_t generation;
        uint32_t pid, tid; /* the stack's process, the place key's thread */
        uint32_t epoch;
        uint32_t slot1; /* its place's slot + 1; 0: none */
        uint16_t source;
        /* every process's (sym_locate_ex): a kernel frame of places keyed by address alone,
           pid FRAME_EVERYONE, good while the kernel's frames generation stays */
        bool is_everyones;
};
/* Two a cache line (the table aligned: xzalloc_table), so that a sample's look at one is one
   line, not two for half of them (its place's key and hash come from the place's entry, which
   the sample counts in anyway). */
_Static_assert(sizeof(struct frame_memo) == 32, "a frame memo is half a cache line");
#define FRAME_EVERYONE 0xfffffffeu

/* A stack counted while a module of its places was loading its symbols: which of its places
   share a function is known once the names come (deferred_settle), and their dup then. Stacks
   alike (hash) merge. Past DEFER_MAX_STACKS or DEFER_MAX_KEYS they count without it. */
#define DEFER_MAX_STACKS 8192
#define DEFER_MAX_KEYS   (1u << 18)
#define DEFER_SLOTS      (2 * DEFER_MAX_STACKS)
struct deferred_stack {
        uint64_t hash;
        uint64_t count;
        uint32_t first, nr; /* its places in dkeys, each once, in stack order */
};

/* A process's places (hot_exited.c): the first of its keys in pid_keys, chained by next. */
#define PID_PLACES_NONE UINT32_MAX
struct pid_places {
        uint32_t pid1; /* pid + 1, 0: a free slot */
        uint32_t head; /* PID_PLACES_NONE: none */
};
struct pid_place {
        uint64_t rel;
        uint32_t module, tid;
        uint32_t next; /* PID_PLACES_NONE: the last */
        uint16_t source;
};

/* A row of the rows' cache: its key as top_functions merges places (the function, or the
   address while unnamed; the process or thread where the grouping keys them). */
struct row_key {
        uint64_t rel; /* 0 when named */
        uint32_t module, function;
        uint32_t pid, tid; /* 0 where the grouping does not key them */
        uint16_t source;
        /* function's name (sym_name: the store's interned strings stay until it goes), read
           with the key rather than from the store's table of names at every build */
        const char *name;
};

struct hot {
        enum hot_grouping grouping;   /* rows per function, per process or thread too */
        enum hot_grouping place_keys; /* what a place's key holds (hot_set_place_keys) */
        uint32_t (*process_key)(void *ctx, uint32_t pid); /* hot_set_process_key, or NULL */
        void *process_key_ctx;
        /* hot_set_comm_key, or NULL */
        uint32_t (*comm_key)(void *ctx, uint32_t pid, uint32_t tid);
        void (*comm_name)(void *ctx, uint32_t id, char *buf, size_t size);
        void *comm_key_ctx;
        struct sym_store *store; /* borrowed */
        uint32_t max_entries;
        uint32_t exited_max;      /* HOT_EXITED_MAX, or HOT_EXITED_SHARE's of a small table */
        uint32_t unnamed_max;     /* HOT_UNNAMED_MAX, or HOT_UNNAMED_SHARE's of a small table */
        uint32_t unnamed_scan_nr; /* the places at hot_fold_unnamed's last look */
        /* owned, open addressing (linear probing) over last + 1 slots: a multiple of 64, not a
           power of two (hot_home), grown at half full: doubled up to HOT_GROW_SLOW slots, then
           by a quarter, so that a large table's memory follows its places in steps of a fifth,
           not a half: a profile whose places settle about a doubling's threshold (a long
           compile's, near 131,072) left the screen's memory a sixth higher at a moment no one
           could tell */
        struct entry *slots;
        uint32_t last, nr;
        /* owned, (last + 1) / 64 words: a bit per slot, set where is_used. A build's walk over
           the places reads these, not the empty slots' entries (three in four of the table
           after it grows, 56 bytes each) */
        uint64_t *used;
        /* owned, the same size: a bit per slot, set where the place's counts may have changed
           since the last build (hot_dirty_set), which an incremental build merges alone */
        uint64_t *dirty;
        struct hot_inc *inc;      /* owned (hot_row_keys.c): the incremental builds' state; NULL */
        uint32_t nr_rkeys_resets; /* hot_row_keys_reset's, counted: the rows' keys started over */
        bool is_merge_checked;    /* hot_set_merge_check */
        uint64_t nr_other[MAX_SOURCES]; /* counted past max_entries, or folded */
        struct hot_caps caps;
        /* owned: processes that ended since the refresh before the last one, those before the
           last refresh first (nr_prev_ended): a process's late samples come with other CPUs'
           buffers */
        uint32_t *ended_pids;
        uint32_t nr_ended_pids, nr_prev_ended, cap_ended_pids;
        uint16_t sources[MAX_SOURCES]; /* as their first samples came */
        uint64_t nr_samples[MAX_SOURCES];
        uint32_t nr_sources;
        /* the sources in the order the trace's CollectionStart (SetInterval) events name them: a
           perf.data's in its events' order, as perf report lists them (hot_sources) */
        uint16_t declared[MAX_DECLARED];
        uint32_t nr_declared;
        uint64_t nr_stacks;
        struct pending pend[MAX_CPUS];
        /* the sampled place of the stack taken last, where it is known: its function, or its
           module and address where it has none (hot_stack_leaf) */
        struct {
                uint64_t timestamp, ip, rel;
                uint32_t pid, module, function;
                bool has;
                uint64_t callers_frames_hash; /* hot_stack_callers */
                uint32_t nr_callers;
        } leaf;
        hot_leaf_fn leaf_hook; /* hot_set_leaf_hook */
        void *leaf_hook_ctx;
        uint32_t nr_pend; /* CPUs seen with samples: the pending slots worth scanning */
        /* the pending samples that wait for their stacks (has, not is_matched): with none, a
           stack is a switch's or a wake-up's, and no CPU's slot is looked at */
        uint32_t nr_unmatched;
        struct {
                uint32_t gen;   /* == seen_gen: in the current stack's set */
                uint32_t index; /* in the stack's keys */
        } seen[SEEN_SLOTS];
        struct {
                uint32_t gen; /* == seen_gen: the function is in the current stack */
                uint64_t key; /* module << 32 | function */
        } fseen[SEEN_SLOTS];
        uint32_t seen_gen;
        struct hot_line_row *line_rows; /* owned: the last hot_top_lines answer */
        struct hot_row *rows;           /* owned: the last hot_functions answer */
        uint32_t nr_rows_cached;        /* rows still valid for rows_source (0: none) */
        uint16_t rows_source;
        uint32_t cap_rows;
        /* owned, cap_rows each: the whole-order sort's work space, kept between refreshes */
        struct sort_item *sort_a, *sort_b;
        struct hot_row *sort_rows;
        /* the rows' cache (hot_row_keys.c): each settled place's row (entry.row1), so a build
           adds a place to its row without hashing its key (a miss per place: the functions
           view's rows were 7.7% of a live screen) */
        struct row_key *rkeys; /* owned */
        uint32_t nr_rkeys, cap_rkeys;
        /* the keys a place named at the last compaction (or reset): past half as many again
           (and 8192), the keys no place names go (hot_row_keys_compact) */
        uint32_t nr_rkeys_named;
        /* owned, cap_rkeys: each key's row in this build + 1, 0 none yet (cleared at a build).
           Apart from the keys (4 bytes a key, not 32): the build looks it up for every place,
           and the keys only when a row is made */
        uint32_t *rout;
        uint32_t *rindex; /* owned: row key + 1 by hash, 0 free */
        uint32_t rindex_mask;
        /* owned, mask + 1 (NULL: no cache yet): each slot's place's row + 1, good while its
           answer stands; 0: none. Apart from the entries (56 bytes): moved with them */
        uint32_t *row1;
        uint32_t nr_builds; /* the first build merges without the cache: a report builds once */
        /* the unplaced places' rows (no image held their addresses at the last build, which
           merged ugen_source): good while their processes' addresses stay, which ugen, the
           frames' generations as that build left them (owned; NULL before), tells; live, the
           processes whose JIT map was looked for this build found none (unplaced.h) */
        struct frames_gen *ugen;
        uint16_t ugen_source;
        struct unplaced_probed uprobed;
        enum hot_grouping rgrouping;
        uint32_t nr_rows_last;        /* the rows of the last build */
        struct hot_module_row *mrows; /* owned */
        uint32_t cap_mrows;
        struct agg_settings settings;
        struct agg_filter filter;
        struct stack_memo *memo; /* owned: MEMO_SLOTS, by hash; at first use */
        uint64_t memo_second_recent[MEMO_WAYS_WORDS(MEMO_SLOTS / 2)]; /* memo_ways.h */
        struct frame_memo *frames;      /* owned: FRAME_SLOTS, by pid and address; at first use */
        struct answer_memo *answers;    /* owned: ANSWER_SLOTS, by module and rel; at first use */
        uint64_t nr_located;            /* hot_nr_frames_located */
        uint64_t nr_asked;              /* hot_nr_answers_asked */
        struct deferred_stack *dstacks; /* owned */
        uint32_t nr_dstacks, cap_dstacks;
        struct entry *dkeys; /* owned: the deferred stacks' places */
        uint32_t nr_dkeys, cap_dkeys;
        uint32_t *dindex;                   /* owned: DEFER_SLOTS, stack + 1 by hash, 0 free */
        uint64_t settled_generation;        /* the store's, when the full deferred stacks settled */
        struct frames_gen *frames_gen;      /* owned: what the memos hold good under */
        uint64_t nr_walks;                  /* hot_nr_walks */
        uint64_t nr_pending;                /* the memos' nr_pending, summed */
        struct pending_slots pending_memos; /* those whose nr_pending left 0 since a settle */
        uint32_t epoch; /* changes whenever places move (grow, refresh, reset) */
        /* the places of ended processes (is_exited, pid not AGG_ALL), counted as they change;
           and each process's places by key (hot_exited.c), so that an end marks its places
           without a look at the whole table */
        uint32_t nr_exited;
        struct pid_places *pid_heads; /* owned: open addressing by pid (NULL: none yet) */
        uint32_t pid_mask, nr_pids;
        struct pid_place *pid_keys; /* owned: the lists' keys, stale ones among them */
        uint32_t nr_pid_keys, cap_pid_keys;
        uint64_t nr_exited_scans; /* hot_nr_exited_scans */
        /* owned: the exited places a fold past the cap looks at and their order (indices),
           kept between folds (a fold's array, made and freed each time, was faulted in again:
           a megabyte a fold) */
        struct scratch fold_places, fold_order;
        /* owned: the keys of the places made unplaced (module 0) since the last refresh and
           of those it kept, stale ones among them: a refresh looks at these, not the table */
        struct entry *unplaced_keys;
        uint32_t nr_unplaced_keys, cap_unplaced_keys;
        /* owned: a refresh's work arrays for the unplaced places (their slots, the places and
           their order, the ended pids), kept between refreshes */
        struct scratch unplaced_slots, unplaced, unplaced_order, ended;
        bool is_fold_scanned; /* hot_set_fold_scanned */
        /* the lists and the unplaced keys are kept from the first refresh on (made then from
           the table): a replay that refreshes once, or never (-b), pays nothing for them */
        bool is_tracking;
};

/* Every sample counted: live, the samples whose stacks have not come with their address alone
   (hot_look_flush); the memos' waiting stacks along their places. Before the places' counts are
   read. */
void hot_settle_samples(struct hot *h);
/* A look's flush of the samples waiting for their stacks: live only (hot.c). */
void hot_look_flush(struct hot *h);

/* Slot i's bit in h->used. */
static inline void hot_used_set(struct hot *h, uint32_t i)
{
        h->used[i / 64] |= 1ull << (i % 64);
}
static inline void hot_used_clear(struct hot *h, uint32_t i)
{
        h->used[i / 64] &= ~(1ull << (i % 64));
}
/* Fresh (zeroed) bitmaps for a table of last + 1 slots, the old ones freed. */
static inline void hot_used_make(struct hot *h)
{
        free(h->used);
        h->used = xcalloc((h->last + 1) / 64, sizeof(*h->used));
        free(h->dirty);
        h->dirty = xcalloc((h->last + 1) / 64, sizeof(*h->dirty));
}
#define HOT_GROW_SLOW (1u << 18)
/* The home slot of a key whose hot_key_hash is hash: its high half scaled to the table's size
   (any size), and the slot a probe looks at after j. */
static inline uint32_t hot_home(const struct hot *h, uint64_t hash)
{
        return (uint32_t)(((hash >> 32) * ((uint64_t)h->last + 1)) >> 32);
}
static inline uint32_t hot_next(const struct hot *h, uint32_t j)
{
        return j == h->last ? 0 : j + 1;
}
/* Slot i's place's counts changed (or may have): the next build merges it again. */
static inline void hot_dirty_set(struct hot *h, uint32_t i)
{
        h->dirty[i / 64] |= 1ull << (i % 64);
}

/* ---- shared by the files of the module ---- */

/* hot.c */
/* k (a placed address when module is not 0) with what the place keys hold: the process and the
   thread, or AGG_ALL where they are left out. */
void hot_key_normalize(const struct hot *h, struct entry *k);
void hot_count(struct hot *h, const struct entry *k, uint64_t self, uint64_t total);
/* True when function (not 0) was counted in the current stack already; else it is now. */
bool hot_function_seen(struct hot *h, uint64_t function);
uint64_t hot_key_hash(const struct entry *k);
/* The symbol store's answer for e's place, at loc (its own, or where a place of no module lies
   now). The answer of a module whose answers are settled stays in e (a name, or none there);
   the others may still change (loading, late images, a recording's kernel). Settled is asked
   first: a module that finishes loading after the answer was asked for gave a pending one,
   which must not stay. */
void hot_place_answer(struct hot *h, struct entry *e, struct sym_loc loc, struct sym_frame *f);
/* Whether e holds an answer that still stands: a final one, or one given under the store's
   current sym_answers_epoch. */
bool hot_answer_is_current(const struct hot *h, const struct entry *e);
/* The function of e's place as its row will name it (module << 32 | function) in *function, 0
   when it has none. False while the module's symbols load (the name may still come). The answer
   of a module whose answers are settled is kept in the entry, as hot_top_functions keeps it. */
bool hot_place_function(struct hot *h, struct entry *e, uint64_t *function);
void hot_seen_next(struct hot *h);
struct entry *hot_slot_find(struct hot *h, const struct entry *k);
/* The same for a key whose hot_key_hash is hash (a table entry's own: entry.hash). */
struct entry *hot_slot_find_hashed(struct hot *h, const struct entry *k, uint64_t hash);
/* Takes the entry out (linear probing: the entries after it move up where their probe allows). */
void hot_slot_delete(struct hot *h, struct entry *e);

/* hot_row_keys.c */
/* The rows' cache emptied, for rows grouped by grouping: every place's row forgotten. */
void hot_row_keys_reset(struct hot *h, enum hot_grouping grouping);
/* The keys no place names dropped, where they outnumber half again those named at the last
   look (and 8192); true where it did (the incremental builds' state is stale then). */
bool hot_row_keys_compact(struct hot *h);
/* The rows of source's places merged into h->rows (grouped by grouping): how many. The first
   build hashes each place's row key; the later ones keep each settled place's row. */
uint32_t hot_rows_merge(struct hot *h, uint16_t source, enum hot_grouping grouping);
/* The incremental builds' state freed (hot_free). */
void hot_inc_free(struct hot *h);
/* hot_rows.c: h->rows grown to hold row o. A build's rows are made as the merge finds them: they
   are the functions, far fewer than the places (sized by the places, the rows and their sort's
   work space took 46 MB of a screen whose table held 262144 places, and grew with it). */
void hot_rows_grow(struct hot *h, uint32_t o);
static inline void hot_rows_room(struct hot *h, uint32_t o)
{
        if (o >= h->cap_rows)
                hot_rows_grow(h, o);
}
/* Slot j's place's row forgotten (its answer changed, or a new place there). */
static inline void hot_row_forget(struct hot *h, uint32_t j)
{
        if (h->row1)
                h->row1[j] = 0;
}
/* The entry at slot from moved to slot to: its row with it. */
static inline void hot_row_move(struct hot *h, uint32_t from, uint32_t to)
{
        if (h->row1)
                h->row1[to] = h->row1[from];
}
/* The table moved (grown, rebuilt): the rows of its places, old_row1 by old slot, are put
   where the entries are now (found by key). old_row1 is freed. */
void hot_rows_rehome(struct hot *h, uint32_t *old_row1, const struct entry *old, uint32_t old_cap);
/* The cache's index made for cap rows at least (before a build: it never grows in one). */
void hot_row_keys_reserve(struct hot *h, uint32_t cap);
/* The cache's row of r (keyed as the cache's grouping keys rows), made when new: its index. */
uint32_t hot_row_key_get(struct hot *h, const struct hot_row *r);

/* hot_exited.c */
/* The list of e's process gets e's key (a new place, or one live again), while is_tracking. */
void hot_exited_track(struct hot *h, const struct entry *e);
/* The lists made from the table, and kept from now on (is_tracking). */
void hot_exited_start(struct hot *h);
/* e (exited) is counted again: live. */
void hot_exited_revive(struct hot *h, struct entry *e);
/* A place that goes (deleted, dropped) or is not exited any more. */
static inline void hot_exited_forget(struct hot *h, const struct entry *e)
{
        if (e->is_exited && e->pid != AGG_ALL)
                h->nr_exited--;
}
/* A place counted: live (an exited one of a reused pid comes back). */
/* Before e's counts change: an exited process's place made live again (a reused pid), and
   the place marked for the next build (every count goes through here, or a settle). */
static inline void hot_place_live(struct hot *h, struct entry *e)
{
        if (__builtin_expect(e->is_exited, 0))
                hot_exited_revive(h, e);
        hot_dirty_set(h, (uint32_t)(e - h->slots));
}
/* hot_rows.c: a new unplaced place's key, for the next refresh. */
void hot_unplaced_track(struct hot *h, const struct entry *k);
/* Every list and count forgotten (hot_reset). */
void hot_exited_reset(struct hot *h);
/* The places of the processes in ended (n) are marked exited; past HOT_EXITED_MAX exited
   places, the lighter (down to half of it) go into one place per address of every exited
   process (pid and tid AGG_ALL): the table does not grow with the processes that came and went.
   True when places moved. */
bool hot_fold_exited(struct hot *h, const uint32_t *ended, uint32_t n);
/* Of places x and y: the heavier first (total, then self); then by key (process, thread,
   source, module, address): a total order (sort_select.h), for the folds' choices. */
int hot_place_cmp(const struct entry *x, const struct entry *y);
/* hot_unnamed.c: on a live view, past h->unnamed_max settled places of images that name no
   function there, the lighter fold into their module's rest (HOT_UNNAMED_MAX); a look at the
   table once the places grew by a sixteenth of the cap. */
void hot_fold_unnamed(struct hot *h);
uint32_t hot_source_index(struct hot *h, uint16_t source);

/* hot_memo.c */
/* Keeps the stack of places keys[idx[0..n)] (hash mh) for later; false when there is no room. */
bool hot_deferred_add(struct hot *h, uint64_t mh, const struct entry *keys, const uint32_t *idx,
                      uint32_t n);
void hot_deferred_index(struct hot *h);
/* The deferred stacks whose functions are all known now count their dup; the others wait.
   Places that went since (folded, decayed) count nothing. */
void hot_deferred_settle(struct hot *h);
uint64_t hot_function_bit(uint64_t function);
/* Whether function is one of the memo's places' (they are named: a memo is made of those). */
bool hot_memo_has_function(struct hot *h, const struct stack_memo *m, uint64_t function);
/* Counts a memo's waiting stacks in its places. */
void hot_memo_settle(struct hot *h, struct stack_memo *m);
/* The pair of memos of a stack of hash mh on its way into the cache (hot_memo_find's slots). */
static inline void hot_memo_prefetch(const struct hot *h, uint64_t mh)
{
        const struct stack_memo *m = &h->memo[(uint32_t)mh & (MEMO_SLOTS - 2)];
        __builtin_prefetch(m);
        __builtin_prefetch(&m[1]);
}
/* The memo of a stack of hash mh: the slot of its pair that holds it (*is_hit, unless
   is_pending), else the one it is to take. */
struct stack_memo *hot_memo_find(struct hot *h, uint64_t mh, uint64_t generation, bool is_pending,
                                 bool *is_hit);
/* Every waiting stack counted: before the totals are read or the places move. */
void hot_memo_settle_all(struct hot *h);
/* A sample whose stack did not come: its address is its whole stack. */
void hot_pending_flush(struct hot *h, struct pending *p);

#endif
