/* SPDX-License-Identifier: MIT */
/* aggregate.c: owns the aggregation modes, the event filter and the bounded counting table
   the model's views share. */
#include "model/aggregate.h"
#include "model_util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define TABLE_MIN_CAPACITY 64u

/* ---- modes ---- */

void agg_settings_init(struct agg_settings *s)
{
        *s = (struct agg_settings){AGG_CUMULATIVE, AGG_DEFAULT_DECAY_FACTOR, 1};
}

static double decay_factor(const struct agg_settings *s)
{
        double f = s->decay_factor;
        return f > 0.0 && f < 1.0 ? f : AGG_DEFAULT_DECAY_FACTOR;
}

uint64_t agg_settings_apply(const struct agg_settings *s, uint64_t count)
{
        switch (s->mode) {
        case AGG_DECAYING: return (uint64_t)((double)count * decay_factor(s));
        case AGG_ZEROED: return 0;
        case AGG_CUMULATIVE:
        default: return count;
        }
}

bool agg_settings_is_droppable(const struct agg_settings *s, uint64_t count)
{
        switch (s->mode) {
        case AGG_DECAYING: return count < (s->drop_below ? s->drop_below : 1);
        case AGG_ZEROED: return count == 0;
        case AGG_CUMULATIVE:
        default: return false;
        }
}

const char *agg_mode_name(enum agg_mode mode)
{
        switch (mode) {
        case AGG_CUMULATIVE: return "cumulative";
        case AGG_DECAYING: return "decaying";
        case AGG_ZEROED: return "zeroed";
        }
        return "unknown";
}

/* ---- filters ---- */

void agg_filter_init(struct agg_filter *f)
{
        memset(f, 0, sizeof(*f));
}

static bool set_has(const uint32_t *ids, uint32_t nr, uint32_t id)
{
        for (uint32_t i = 0; i < nr; i++)
                if (ids[i] == id)
                        return true;
        return false;
}

static int set_add(uint32_t *ids, uint32_t *nr, uint32_t id)
{
        if (set_has(ids, *nr, id))
                return 0;
        if (*nr >= AGG_MAX_FILTER_IDS)
                return -ENOSPC;
        ids[(*nr)++] = id;
        return 0;
}

int agg_filter_add_pid(struct agg_filter *f, uint32_t pid)
{
        return set_add(f->pids, &f->nr_pids, pid);
}

int agg_filter_add_tid(struct agg_filter *f, uint32_t tid)
{
        return set_add(f->tids, &f->nr_tids, tid);
}

int agg_filter_set_time_range(struct agg_filter *f, int64_t from_ns, int64_t to_ns)
{
        if (to_ns < from_ns)
                return -EINVAL;
        f->has_time_range = true;
        f->from_ns = from_ns;
        f->to_ns = to_ns;
        return 0;
}

bool agg_filter_has_pid(const struct agg_filter *f, uint32_t pid)
{
        return !f->nr_pids || set_has(f->pids, f->nr_pids, pid);
}

bool agg_filter_has_tid(const struct agg_filter *f, uint32_t tid)
{
        return !f->nr_tids || set_has(f->tids, f->nr_tids, tid);
}

bool agg_filter_has_time(const struct agg_filter *f, int64_t time_ns)
{
        return !f->has_time_range || (time_ns >= f->from_ns && time_ns < f->to_ns);
}

bool agg_filter_pass(const struct agg_filter *f, uint32_t pid, uint32_t tid, int64_t time_ns)
{
        return agg_filter_has_pid(f, pid) && agg_filter_has_tid(f, tid) &&
               agg_filter_has_time(f, time_ns);
}

uint64_t agg_filter_clip_ns(const struct agg_filter *f, int64_t from_ns, int64_t to_ns)
{
        if (f->has_time_range) {
                if (from_ns < f->from_ns)
                        from_ns = f->from_ns;
                if (to_ns > f->to_ns)
                        to_ns = f->to_ns;
        }
        return to_ns > from_ns ? (uint64_t)to_ns - (uint64_t)from_ns : 0;
}

/* ---- the table ---- */

struct agg_table {
        uint8_t *slots; /* owned: capacity entries of entry_size bytes */
        uint32_t *tags; /* owned: per slot, 0 when free, else the key's hash with its top bit set:
                           a probe compares keys only when the tags match */
        size_t key_size, entry_size;
        uint32_t mask; /* capacity - 1, a power of two */
        uint32_t nr, max_entries;
        uint32_t epoch; /* counts the allocations of slots */
};

static uint64_t key_hash(const struct agg_table *t, const void *key)
{
        const uint8_t *p = key;
        uint64_t h = t->key_size;
        size_t i = 0;
        /* a multiply and a rotation per word, the full mix once at the end: long keys (a
           stack's frames) hash in a few cycles a word */
        for (; i + 8 <= t->key_size; i += 8) {
                uint64_t w;
                memcpy(&w, p + i, 8);
                h = (h ^ w) * 0x9e3779b97f4a7c15ull;
                h = (h << 29) | (h >> 35);
        }
        if (i < t->key_size) {
                uint64_t w = 0;
                memcpy(&w, p + i, t->key_size - i);
                h = (h ^ w) * 0x9e3779b97f4a7c15ull;
        }
        return hash_mix64(h);
}

static uint32_t tag_of(uint64_t hash)
{
        return (uint32_t)(hash >> 32) | 0x80000000u;
}

static void table_alloc(struct agg_table *t, uint32_t capacity)
{
        t->mask = capacity - 1;
        t->slots = xzalloc_table(capacity, t->entry_size);
        t->tags = xzalloc_table(capacity, sizeof(*t->tags));
        t->nr = 0;
        t->epoch++;
}

struct agg_table *agg_table_new(size_t key_size, size_t entry_size, uint32_t max_entries)
{
        struct agg_table *t = xcalloc(1, sizeof(*t));
        t->key_size = key_size;
        t->entry_size = entry_size < key_size ? key_size : entry_size;
        t->max_entries = max_entries ? max_entries : 1;
        table_alloc(t, TABLE_MIN_CAPACITY);
        return t;
}

void agg_table_free(struct agg_table *t)
{
        if (!t)
                return;
        free(t->slots);
        free(t->tags);
        free(t);
}

void agg_table_reset(struct agg_table *t)
{
        free(t->slots);
        free(t->tags);
        table_alloc(t, TABLE_MIN_CAPACITY);
}

/* The slot holding key (tag: its tag), or the free slot where it would go. */
static uint32_t slot_of(const struct agg_table *t, const void *key, uint64_t hash, uint32_t tag)
{
        for (uint32_t j = (uint32_t)hash & t->mask;; j = (j + 1) & t->mask)
                if (!t->tags[j] ||
                    (t->tags[j] == tag &&
                     memcmp(t->slots + (size_t)j * t->entry_size, key, t->key_size) == 0))
                        return j;
}

/* The free slot for a key not in the table. */
static uint32_t free_slot(const struct agg_table *t, uint64_t hash)
{
        uint32_t j = (uint32_t)hash & t->mask;
        while (t->tags[j])
                j = (j + 1) & t->mask;
        return j;
}

void *agg_table_find(const struct agg_table *t, const void *key)
{
        uint64_t h = key_hash(t, key);
        uint32_t j = slot_of(t, key, h, tag_of(h));
        return t->tags[j] ? t->slots + (size_t)j * t->entry_size : NULL;
}

/* Moves the entries into a table of the given capacity; the keys are hashed again, since a tag
   keeps only the hash's high bits. */
static void rebuild(struct agg_table *t, uint32_t capacity)
{
        uint8_t *old = t->slots;
        uint32_t *old_tags = t->tags;
        uint32_t old_capacity = t->mask + 1;
        table_alloc(t, capacity);
        for (uint32_t i = 0; i < old_capacity; i++) {
                uint8_t *e = old + (size_t)i * t->entry_size;
                if (!old_tags[i])
                        continue;
                uint32_t j = free_slot(t, key_hash(t, e));
                memcpy(t->slots + (size_t)j * t->entry_size, e, t->entry_size);
                t->tags[j] = old_tags[i];
                t->nr++;
        }
        free(old);
        free(old_tags);
}

void *agg_table_get(struct agg_table *t, const void *key, bool *is_new)
{
        uint64_t h = key_hash(t, key);
        uint32_t tag = tag_of(h);
        uint32_t j = slot_of(t, key, h, tag);
        if (is_new)
                *is_new = false;
        if (t->tags[j])
                return t->slots + (size_t)j * t->entry_size;
        if (t->nr >= t->max_entries)
                return NULL;
        if ((t->nr + 1) * 2 > t->mask + 1) { /* at most half full */
                rebuild(t, (t->mask + 1) * 2);
                j = free_slot(t, h);
        }
        uint8_t *e = t->slots + (size_t)j * t->entry_size;
        memset(e, 0, t->entry_size);
        memcpy(e, key, t->key_size);
        t->tags[j] = tag;
        t->nr++;
        if (is_new)
                *is_new = true;
        return e;
}

/* After slots were emptied: every entry is put again at the first free slot from its home,
   which is where it is or before it (a hole left in its probe run). The slots are walked from an
   empty one, so that each run is settled from its start. Entries move: the epoch says so. */
static void settle(struct agg_table *t)
{
        uint32_t start = 0;
        while (t->tags[start]) /* there is one: the table is at most half full */
                start = (start + 1) & t->mask;
        for (uint32_t n = 0, i = (start + 1) & t->mask; n < t->mask; n++, i = (i + 1) & t->mask) {
                if (!t->tags[i])
                        continue;
                uint8_t *e = t->slots + (size_t)i * t->entry_size;
                uint32_t j = (uint32_t)key_hash(t, e) & t->mask;
                while (t->tags[j] && j != i)
                        j = (j + 1) & t->mask;
                if (j == i)
                        continue;
                memcpy(t->slots + (size_t)j * t->entry_size, e, t->entry_size);
                t->tags[j] = t->tags[i];
                t->tags[i] = 0;
        }
        t->epoch++;
}

void agg_table_remove_if(struct agg_table *t, bool (*is_dropped)(void *entry, void *ctx), void *ctx)
{
        uint32_t capacity = t->mask + 1;
        uint32_t nr = 0;
        for (uint32_t i = 0; i < capacity; i++) {
                if (!t->tags[i])
                        continue;
                if (is_dropped(t->slots + (size_t)i * t->entry_size, ctx))
                        t->tags[i] = 0; /* the table is rebuilt below: probes are not used */
                else
                        nr++;
        }
        if (nr == t->nr)
                return;
        /* shrink with the rows: a burst does not keep its memory for the whole run */
        while (capacity > TABLE_MIN_CAPACITY && nr * 8 < capacity)
                capacity /= 2;
        if (capacity < t->mask + 1) {
                rebuild(t, capacity);
                return;
        }
        /* the same size: the entries left are settled in place, without new arrays to zero
           (pages to fault in at every refresh, on a live screen whose tables drop rows each) */
        t->nr = nr;
        settle(t);
}

uint32_t agg_table_nr(const struct agg_table *t)
{
        return t->nr;
}

uint32_t agg_table_max(const struct agg_table *t)
{
        return t->max_entries;
}

uint32_t agg_table_epoch(const struct agg_table *t)
{
        return t->epoch;
}

uint32_t agg_table_capacity(const struct agg_table *t)
{
        return t->mask + 1;
}

void *agg_table_slot(const struct agg_table *t, uint32_t i)
{
        return i <= t->mask && t->tags[i] ? t->slots + (size_t)i * t->entry_size : NULL;
}

/* ---- an index of a table's entries by a field ---- */

struct index_pair {
        uint32_t value, slot;
};

static int index_pair_cmp(const void *a, const void *b)
{
        const struct index_pair *x = a, *y = b;
        if (x->value != y->value)
                return x->value < y->value ? -1 : 1;
        return x->slot < y->slot ? -1 : x->slot > y->slot;
}

static void index_build(struct agg_index *x, const struct agg_table *t, size_t offset)
{
        struct index_pair *pairs = xcalloc(t->nr ? t->nr : 1, sizeof(*pairs));
        uint32_t n = 0;
        for (uint32_t i = 0; i <= t->mask && n < t->nr; i++) {
                if (!t->tags[i])
                        continue;
                uint32_t v;
                memcpy(&v, t->slots + (size_t)i * t->entry_size + offset, sizeof(v));
                pairs[n++] = (struct index_pair){v, i};
        }
        qsort(pairs, n, sizeof(*pairs), index_pair_cmp);
        if (n > x->cap) {
                x->cap = n;
                x->slots = xrealloc(x->slots, n * sizeof(*x->slots));
                x->values = xrealloc(x->values, n * sizeof(*x->values));
        }
        for (uint32_t i = 0; i < n; i++) {
                x->values[i] = pairs[i].value;
                x->slots[i] = pairs[i].slot;
        }
        free(pairs);
        x->nr_slots = n;
        x->epoch = t->epoch;
        x->nr = t->nr;
        x->is_built = true;
}

uint32_t agg_index_find(struct agg_index *x, const struct agg_table *t, size_t offset,
                        uint32_t value, uint32_t *first)
{
        if (!x->is_built || x->epoch != t->epoch || x->nr != t->nr)
                index_build(x, t, offset);
        uint32_t lo = 0, hi = x->nr_slots;
        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (x->values[mid] < value)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        uint32_t end = lo;
        while (end < x->nr_slots && x->values[end] == value)
                end++;
        *first = lo;
        return end - lo;
}

void agg_index_free(struct agg_index *x)
{
        free(x->slots);
        free(x->values);
        *x = (struct agg_index){0};
}
