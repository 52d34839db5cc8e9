/* SPDX-License-Identifier: MIT */
/* branches.c: owns the counts of LBR branch edges and their grouping into edge and function
   pair rows. */
#include "model/branches.h"
#include "model_util.h"
#include "symbols/symbols.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* One counted edge of one process. Places no image held at the time keep their raw address
   (module 0), to be placed again when the rows are built. */
struct edge {
        uint64_t from_rel, to_rel;
        uint32_t from_module, to_module;
        uint32_t pid;
        uint32_t pad; /* zero: keys compare byte for byte */
        uint64_t count;
        struct branches_flags flags;
};
#define EDGE_KEY_SIZE offsetof(struct edge, count)

/* A row while it is built: the row, and the count of its most counted member (whose places the
   row shows). */
struct work {
        struct branches_row row;
        uint64_t best;
};

/* The edge a raw (pid, from, to) was last counted in: LBR stacks repeat their entries (a loop's
   back edge fills most of one), and a hit skips both places' lookups and the edge table's.
   Good while the symbol store's generation (the places) and the table's epoch (the entry's
   address) stay. */
#define EDGE_CACHE_BITS 10u
#define EDGE_CACHE_SIZE (1u << EDGE_CACHE_BITS)
struct edge_cache_slot {
        uint64_t from, to;
        uint32_t pid;
        uint32_t epoch;
        struct edge *e; /* NULL: empty */
};

struct branches {
        struct sym_store *store;       /* borrowed */
        struct agg_table *edges;       /* owned: struct edge */
        struct edge_cache_slot *cache; /* owned: EDGE_CACHE_SIZE */
        uint64_t cache_generation;     /* the store's, when the cache was last emptied */
        struct agg_settings settings;
        struct agg_filter filter;
        uint64_t nr_other; /* edges counted past max_entries */
        uint64_t nr_events;
        struct work *work; /* owned: scratch for branches_rows */
        uint32_t cap_work;
        struct branches_row *rows; /* owned: the last branches_rows answer */
        uint32_t cap_rows;
};

struct branches *branches_new(struct sym_store *store, uint32_t max_entries)
{
        struct branches *b = xcalloc(1, sizeof(*b));
        b->store = store;
        b->edges = agg_table_new(EDGE_KEY_SIZE, sizeof(struct edge),
                                 max_entries ? max_entries : (1u << 20));
        agg_settings_init(&b->settings);
        agg_filter_init(&b->filter);
        b->cache = xcalloc(EDGE_CACHE_SIZE, sizeof(*b->cache));
        return b;
}

void branches_free(struct branches *b)
{
        if (!b)
                return;
        agg_table_free(b->edges);
        free(b->cache);
        free(b->work);
        free(b->rows);
        free(b);
}

void branches_reset(struct branches *b)
{
        agg_table_reset(b->edges);
        b->nr_other = 0;
        b->nr_events = 0;
}

void branches_event(struct branches *b, const struct kevent *ev)
{
        if (ev->type != KEV_LBR)
                return;
        uint32_t pid = ev->lbr.pid != UINT32_MAX ? ev->lbr.pid : ev->pid;
        uint32_t tid = ev->lbr.tid != UINT32_MAX ? ev->lbr.tid : ev->tid;
        if (!agg_filter_pass(&b->filter, pid, tid, ev->time_ns))
                return;
        b->nr_events++;
        uint64_t generation = sym_store_generation(b->store);
        if (generation != b->cache_generation) {
                memset(b->cache, 0, EDGE_CACHE_SIZE * sizeof(*b->cache));
                b->cache_generation = generation;
        }
        /* the table's epoch changes only with an insert (a cache miss): read again after one */
        uint32_t epoch = agg_table_epoch(b->edges);
        /* the entries, their count and the cache in locals: the counts' stores below would
           otherwise have them read again from the event at every entry */
        const uint64_t *info = ev->lbr.info;
        const struct kevent_lbr_entry *entries = ev->lbr.entries;
        uint32_t nr = ev->lbr.nr_entries;
        struct edge_cache_slot *cache = b->cache;
        uint64_t pid_bits = (uint64_t)pid << 20;
        for (uint32_t i = 0; i < nr; i++) {
                uint64_t from = entries[i].from, to = entries[i].to;
                if (!from || !to)
                        continue;
                /* the slot: one multiply of the three, its top bits (any slot would be right:
                   the cache only saves lookups; this was two hash_mix64, a third of the
                   instructions of a hit). An empty slot's from is 0: never a hit. */
                uint64_t h =
                        (from ^ (to * 0x9e3779b97f4a7c15ull) ^ pid_bits) * 0xff51afd7ed558ccdull;
                struct edge_cache_slot *cs = &cache[h >> (64 - EDGE_CACHE_BITS)];
                struct edge *e;
                if (cs->from == from && cs->to == to && cs->pid == pid && cs->epoch == epoch) {
                        e = cs->e;
                } else {
                        struct sym_loc lf = sym_locate(b->store, pid, from);
                        struct sym_loc lt = sym_locate(b->store, pid, to);
                        struct edge k;
                        memset(&k, 0, sizeof(k));
                        k.from_rel = lf.rel;
                        k.to_rel = lt.rel;
                        k.from_module = lf.module;
                        k.to_module = lt.module;
                        k.pid = pid;
                        e = agg_table_get(b->edges, &k, NULL);
                        /* the epoch after the lookup: an insert may have grown the table */
                        epoch = agg_table_epoch(b->edges);
                        *cs = (struct edge_cache_slot){from, to, pid, epoch, e};
                }
                if (!e) {
                        b->nr_other++;
                        continue;
                }
                e->count++;
                if (!info)
                        continue;
                /* the flags without a branch: a misprediction is a known prediction */
                uint64_t f = info[i];
                uint32_t cycles = KEV_LBR_CYCLES(f);
                e->flags.nr_predict_known += KEV_LBR_PREDICTION_KNOWN(f);
                e->flags.nr_mispredicted += KEV_LBR_MISPREDICTED(f);
                e->flags.nr_cycles += cycles != 0;
                e->flags.cycles_sum += cycles;
        }
}

void branches_set_settings(struct branches *b, const struct agg_settings *settings)
{
        b->settings = *settings;
}

static bool is_outside_pids(void *entry, void *ctx)
{
        const struct edge *e = entry;
        const struct agg_filter *f = ctx;
        return !agg_filter_has_pid(f, e->pid);
}

void branches_set_filter(struct branches *b, const struct agg_filter *f)
{
        b->filter = *f;
        agg_table_remove_if(b->edges, is_outside_pids, &b->filter);
}

static bool decay_edge(void *entry, void *ctx)
{
        struct edge *e = entry;
        const struct agg_settings *s = ctx;
        e->count = agg_settings_apply(s, e->count);
        e->flags.nr_predict_known = agg_settings_apply(s, e->flags.nr_predict_known);
        e->flags.nr_mispredicted = agg_settings_apply(s, e->flags.nr_mispredicted);
        e->flags.nr_cycles = agg_settings_apply(s, e->flags.nr_cycles);
        e->flags.cycles_sum = agg_settings_apply(s, e->flags.cycles_sum);
        return agg_settings_is_droppable(s, e->count);
}

void branches_refresh(struct branches *b)
{
        if (b->settings.mode == AGG_CUMULATIVE)
                return;
        agg_table_remove_if(b->edges, decay_edge, &b->settings);
        b->nr_other = agg_settings_apply(&b->settings, b->nr_other);
        b->nr_events = agg_settings_apply(&b->settings, b->nr_events);
}

uint64_t branches_nr_events(const struct branches *b)
{
        return b->nr_events;
}

uint64_t branches_nr_edges(const struct branches *b)
{
        uint64_t n = b->nr_other;
        for (uint32_t i = 0; i < agg_table_capacity(b->edges); i++) {
                const struct edge *e = agg_table_slot(b->edges, i);
                if (e)
                        n += e->count;
        }
        return n;
}

uint32_t branches_nr_kept(const struct branches *b)
{
        return agg_table_nr(b->edges);
}

uint64_t branches_nr_other(const struct branches *b)
{
        return b->nr_other;
}

/* ---- rows ---- */

static struct branches_end end_of(struct branches *b, uint32_t pid, uint32_t module, uint64_t rel)
{
        struct sym_loc loc = {module, rel};
        if (!module) /* placed again: images may have come since */
                loc = sym_locate(b->store, pid, rel);
        struct sym_frame f;
        sym_resolve(b->store, loc, &f);
        struct branches_end e = {loc, 0, loc.rel, f.state};
        if (f.state == SYM_RESOLVED) {
                e.function = f.function;
                e.offset = f.offset;
        }
        return e;
}

static int cmp_u64(uint64_t x, uint64_t y)
{
        return x < y ? -1 : x > y;
}

/* Places: module, offset; raw addresses (module 0) of different processes differ. */
static int place_cmp(const struct branches_end *x, uint32_t x_pid, const struct branches_end *y,
                     uint32_t y_pid)
{
        if (x->loc.module != y->loc.module)
                return cmp_u64(x->loc.module, y->loc.module);
        if (x->loc.rel != y->loc.rel)
                return cmp_u64(x->loc.rel, y->loc.rel);
        return x->loc.module ? 0 : cmp_u64(x_pid, y_pid);
}

/* Functions: module, function; unresolved ends by their place. */
static int function_cmp(const struct branches_end *x, uint32_t x_pid, const struct branches_end *y,
                        uint32_t y_pid)
{
        if (x->loc.module != y->loc.module)
                return cmp_u64(x->loc.module, y->loc.module);
        if (x->function != y->function)
                return cmp_u64(x->function, y->function);
        return x->function ? 0 : place_cmp(x, x_pid, y, y_pid);
}

static int edge_key_cmp(const void *a, const void *b)
{
        const struct work *x = a, *y = b;
        int c = place_cmp(&x->row.from, x->row.pid, &y->row.from, y->row.pid);
        return c ? c : place_cmp(&x->row.to, x->row.pid, &y->row.to, y->row.pid);
}

static int function_key_cmp(const void *a, const void *b)
{
        const struct work *x = a, *y = b;
        int c = function_cmp(&x->row.from, x->row.pid, &y->row.from, y->row.pid);
        return c ? c : function_cmp(&x->row.to, x->row.pid, &y->row.to, y->row.pid);
}

static int by_count(const void *a, const void *b)
{
        const struct work *x = a, *y = b;
        if (x->row.count != y->row.count)
                return x->row.count > y->row.count ? -1 : 1;
        if (x->row.is_other != y->row.is_other)
                return x->row.is_other ? 1 : -1;
        return edge_key_cmp(a, b);
}

/* Sorts w[0..n) by key and merges equal neighbours; returns the rows left. */
static uint32_t merge(struct work *w, uint32_t n, int (*key_cmp)(const void *, const void *),
                      bool is_counting_edges)
{
        qsort(w, n, sizeof(*w), key_cmp);
        uint32_t o = 0;
        for (uint32_t i = 0; i < n; i++) {
                if (o && key_cmp(&w[o - 1], &w[i]) == 0) {
                        struct work *r = &w[o - 1];
                        r->row.count += w[i].row.count;
                        r->row.flags.nr_predict_known += w[i].row.flags.nr_predict_known;
                        r->row.flags.nr_mispredicted += w[i].row.flags.nr_mispredicted;
                        r->row.flags.nr_cycles += w[i].row.flags.nr_cycles;
                        r->row.flags.cycles_sum += w[i].row.flags.cycles_sum;
                        if (is_counting_edges)
                                r->row.nr_edges += w[i].row.nr_edges;
                        if (r->row.pid != w[i].row.pid)
                                r->row.pid = AGG_ALL;
                        if (w[i].best > r->best) {
                                r->best = w[i].best;
                                r->row.from = w[i].row.from;
                                r->row.to = w[i].row.to;
                        }
                        continue;
                }
                w[o++] = w[i];
        }
        return o;
}

uint32_t branches_rows(struct branches *b, enum branches_group group, uint32_t pid,
                       const struct branches_row **rows)
{
        uint32_t need = agg_table_nr(b->edges) + 1;
        if (b->cap_work < need) {
                /* doubling: a table that grows a little at each refresh does not leave the
                   allocator a hole a little too small every time */
                uint32_t cap = b->cap_work ? b->cap_work : 256;
                while (cap < need)
                        cap *= 2;
                free(b->work);
                free(b->rows);
                b->cap_work = b->cap_rows = cap;
                b->work = xcalloc(cap, sizeof(*b->work));
                b->rows = xcalloc(cap, sizeof(*b->rows));
        }
        struct work *w = b->work;
        uint32_t n = 0;
        for (uint32_t i = 0; i < agg_table_capacity(b->edges); i++) {
                const struct edge *e = agg_table_slot(b->edges, i);
                if (!e || !e->count || (pid != AGG_ALL && e->pid != pid))
                        continue;
                struct work *r = &w[n++];
                memset(r, 0, sizeof(*r));
                r->row.from = end_of(b, e->pid, e->from_module, e->from_rel);
                r->row.to = end_of(b, e->pid, e->to_module, e->to_rel);
                r->row.pid = e->pid;
                r->row.nr_edges = 1;
                r->row.count = e->count;
                r->row.flags = e->flags;
                r->best = e->count;
        }
        /* the same edge in several processes is one edge */
        n = merge(w, n, edge_key_cmp, false);
        if (group == BRANCHES_BY_FUNCTION)
                n = merge(w, n, function_key_cmp, true);
        if (pid == AGG_ALL && b->nr_other) {
                struct work *r = &w[n++];
                memset(r, 0, sizeof(*r));
                r->row.from.state = r->row.to.state = SYM_NO_MODULE;
                r->row.pid = AGG_ALL;
                r->row.count = b->nr_other;
                r->row.is_other = true;
        }
        uint64_t total = 0;
        for (uint32_t i = 0; i < n; i++)
                total += w[i].row.count;
        qsort(w, n, sizeof(*w), by_count);
        for (uint32_t i = 0; i < n; i++) {
                b->rows[i] = w[i].row;
                b->rows[i].share = total ? (double)w[i].row.count / (double)total : 0.0;
        }
        *rows = b->rows;
        return n;
}

bool branches_mispredict_pct(const struct branches_row *r, double *pct)
{
        if (!r->flags.nr_predict_known)
                return false;
        *pct = 100.0 * (double)r->flags.nr_mispredicted / (double)r->flags.nr_predict_known;
        return true;
}

bool branches_avg_cycles(const struct branches_row *r, double *cycles)
{
        if (!r->flags.nr_cycles)
                return false;
        *cycles = (double)r->flags.cycles_sum / (double)r->flags.nr_cycles;
        return true;
}
