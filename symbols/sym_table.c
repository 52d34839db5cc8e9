/* SPDX-License-Identifier: MIT */
/* sym_table.c: owns the sorted symbol array of one module and its string pool. */
#include "symbols/sym_table.h"
#include "util/mem_policy.h"
#include "util/xalloc.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct sym_table {
        struct sym_entry *entries; /* owned */
        uint32_t nr, cap;
        uint64_t *bounds; /* owned while building: max inferred size per entry, 0 = none */
        char *pool;       /* owned: NUL-terminated names */
        size_t pool_len, pool_cap;
        /* borrowed (sym_table_borrow_names): names read in place, their entries' name offsets
           in it with NAME_BORROWED set; NULL: none */
        const char *ext;
        size_t ext_size;
        void (*release)(void *); /* sym_table_hold's: called with held when freed */
        void *held;
        bool is_finished;
        bool is_mapped;       /* entries and pool borrowed (sym_table_new_mapped): never freed */
        bool is_perf_aliases; /* a start's aliases chosen among as perf does */
        bool is_last_alias;   /* a start's last alias added is its name (kallsyms) */
};

struct sym_table *sym_table_new(void)
{
        struct sym_table *t = xcalloc(1, sizeof(*t));
        /* offset 0 is the empty name */
        t->pool_cap = 4096;
        t->pool = xmalloc(t->pool_cap);
        t->pool[0] = 0;
        t->pool_len = 1;
        return t;
}

void sym_table_free(struct sym_table *t)
{
        if (!t)
                return;
        if (!t->is_mapped) {
                free(t->entries);
                free(t->pool);
        }
        free(t->bounds);
        if (t->release)
                t->release(t->held);
        free(t);
}

void sym_table_hold(struct sym_table *t, void (*release)(void *), void *owner)
{
        t->release = release;
        t->held = owner;
}

/* Whether pool[0..len) holds a name sym_table_add could have left: no byte it replaces. One
   pass for the whole pool (vectorized), not one per name. */
static bool is_clean(const char *pool, size_t len)
{
        const unsigned char *b = (const unsigned char *)pool;
        uint8_t bad = 0;
        for (size_t i = 0; i < len; i++)
                bad |= (uint8_t)((uint8_t)(b[i] - 1) < 0x1f) | (uint8_t)(b[i] == 0x7f);
        return !bad;
}

#define NAME_BORROWED 0x80000000u /* in sym_entry.name: an offset in the borrowed names */
#define NAME_MAX_LEN  4096u       /* a hostile or broken table: the pool bounded per name */

struct sym_table *sym_table_new_mapped(const struct sym_entry *entries, uint32_t nr,
                                       const char *pool, size_t pool_len)
{
        /* what every read of it rests on: the empty name at 0 and the pool ended by a NUL (so
           that every offset in it has one before the end). The entries and names are not read
           here but where they are used (sym_table_name: an offset past the pool, a borrowed
           one, or a name with a byte sym_table_add replaces names nothing; sym_table_find reads
           only entries, and starts out of order give a wrong answer, never a read past them):
           a cache file's table is megabytes (the running kernel's 5.8 MB), and its check
           whole was most of a warm start's symbol work, a read of every page of it for the
           few that the lookups touch */
        if ((nr && !entries) || !pool || !pool_len || pool_len >= NAME_BORROWED || pool[0] ||
            pool[pool_len - 1])
                return NULL;
        struct sym_table *t = xcalloc(1, sizeof(*t));
        /* read-only from here on: the owner's mapping is never written (the cast drops the const
           of a field that the building functions, all refused on a finished table, write) */
        t->entries = (struct sym_entry *)entries;
        t->nr = t->cap = nr;
        t->pool = (char *)pool;
        t->pool_len = t->pool_cap = pool_len;
        t->is_finished = true;
        t->is_mapped = true;
        return t;
}

const char *sym_table_pool(const struct sym_table *t, size_t *len)
{
        if (!t || !t->is_finished) {
                *len = 0;
                return NULL;
        }
        *len = t->pool_len;
        return t->pool;
}

void sym_table_reserve(struct sym_table *t, uint32_t nr, size_t pool_bytes)
{
        if (t->is_finished)
                return;
        if (nr > UINT32_MAX - t->nr)
                nr = UINT32_MAX - t->nr;
        if (t->nr + nr > t->cap) {
                t->cap = t->nr + nr;
                t->entries = xrealloc(t->entries, t->cap * sizeof(*t->entries));
                if (t->bounds)
                        t->bounds = xrealloc(t->bounds, t->cap * sizeof(*t->bounds));
        }
        if (pool_bytes > SIZE_MAX / 2 - t->pool_len)
                return;
        if (t->pool_len + pool_bytes > t->pool_cap) {
                t->pool_cap = t->pool_len + pool_bytes;
                t->pool = xrealloc(t->pool, t->pool_cap);
        }
}

void sym_table_prefault(struct sym_table *t, uint32_t nr, size_t pool_bytes)
{
        sym_table_reserve(t, nr, pool_bytes);
        if (t->is_finished)
                return;
        uint32_t room = t->cap - t->nr;
        mem_policy_populate(t->entries + t->nr,
                            (size_t)(nr < room ? nr : room) * sizeof(*t->entries));
        size_t pool_room = t->pool_cap - t->pool_len;
        mem_policy_populate(t->pool + t->pool_len, pool_bytes < pool_room ? pool_bytes : pool_room);
}

void sym_table_add_bounded(struct sym_table *t, uint64_t start, uint64_t max_size, const char *name,
                           size_t len, uint32_t flags)
{
        if (t->is_finished)
                return;
        if (!t->bounds) {
                t->bounds = xcalloc(t->cap ? t->cap : 1, sizeof(*t->bounds));
        }
        sym_table_add(t, start, 0, name, len, flags);
        if (t->nr)
                t->bounds[t->nr - 1] = max_size;
}

bool sym_table_borrow_names(struct sym_table *t, const char *base, size_t size)
{
        if (t->is_finished || t->nr || !base || !size || size >= NAME_BORROWED ||
            base[size - 1] != 0)
                return false;
        if (!is_clean(base, size))
                return false;
        t->ext = base;
        t->ext_size = size;
        return true;
}

/* A name (len bytes) that the borrowed names hold in place, NUL-terminated: its offset there
   with NAME_BORROWED; 0 where it is not one of them. */
static uint32_t borrowed_name(const struct sym_table *t, const char *name, size_t len)
{
        if (!t->ext || name < t->ext || (size_t)(name - t->ext) >= t->ext_size ||
            len > NAME_MAX_LEN || len >= t->ext_size - (size_t)(name - t->ext) || name[len] != 0)
                return 0;
        return (uint32_t)(name - t->ext) | NAME_BORROWED;
}

void sym_table_add(struct sym_table *t, uint64_t start, uint64_t size, const char *name, size_t len,
                   uint32_t flags)
{
        if (t->is_finished)
                return;
        if (t->nr == t->cap) {
                t->cap = t->cap ? t->cap * 2 : 256;
                t->entries = xrealloc(t->entries, t->cap * sizeof(*t->entries));
                if (t->bounds)
                        t->bounds = xrealloc(t->bounds, t->cap * sizeof(*t->bounds));
        }
        uint32_t borrowed = borrowed_name(t, name, len);
        if (borrowed) {
                struct sym_entry *e = &t->entries[t->nr++];
                if (t->bounds)
                        t->bounds[t->nr - 1] = 0;
                *e = (struct sym_entry){start, size, borrowed, flags | (size ? SYM_FLAG_SIZED : 0)};
                return;
        }
        if (len > NAME_MAX_LEN)
                len = NAME_MAX_LEN;
        if (t->pool_len + len + 1 > t->pool_cap) {
                while (t->pool_len + len + 1 > t->pool_cap)
                        t->pool_cap *= 2;
                t->pool = xrealloc(t->pool, t->pool_cap);
        }
        char *dst = t->pool + t->pool_len;
        for (size_t i = 0; i < len; i++) {
                unsigned char ch = (unsigned char)name[i];
                dst[i] = (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
        }
        dst[len] = 0;
        struct sym_entry *e = &t->entries[t->nr++];
        if (t->bounds)
                t->bounds[t->nr - 1] = 0;
        e->start = start;
        e->size = size;
        e->name = (uint32_t)t->pool_len;
        e->flags = flags | (size ? SYM_FLAG_SIZED : 0);
        t->pool_len += len + 1;
}

bool sym_name_is_padding(const char *name, size_t len)
{
        return (len > 6 && memcmp(name, "__pfx_", 6) == 0) ||
               (len > 6 && memcmp(name, "__cfi_", 6) == 0);
}

/* a better representative of one start address sorts first */
static int rank(const struct sym_entry *e)
{
        int r = 0;
        if (e->flags & SYM_FLAG_PADDING)
                r += 16;
        if (e->flags & SYM_FLAG_DATA)
                r += 8;
        if (e->flags & SYM_FLAG_WEAK)
                r += 4;
        if (e->flags & SYM_FLAG_LOCAL)
                r += 2;
        if (!(e->flags & SYM_FLAG_SIZED))
                r += 1;
        return r;
}

/* The order of two entries by start and rank; 0 for equals, which keep the order they were
   added in (the first added wins): the sorts below are stable. */
static int entry_cmp(const struct sym_entry *x, const struct sym_entry *y)
{
        if (x->start != y->start)
                return x->start < y->start ? -1 : 1;
        int rx = rank(x), ry = rank(y);
        return rx < ry ? -1 : rx > ry;
}

struct indexed_entry {
        struct sym_entry e;
        uint32_t i;
};

static int indexed_cmp(const void *a, const void *b)
{
        const struct indexed_entry *x = a, *y = b;
        int c = entry_cmp(&x->e, &y->e);
        return c ? c : x->i < y->i ? -1 : x->i > y->i;
}

/* e[0..n) sorted by entry_cmp, equals in their order (a few entries: qsort with the index). */
static void sort_few(struct sym_entry *e, uint32_t n)
{
        struct indexed_entry *x = xmalloc((size_t)n * sizeof(*x));
        for (uint32_t i = 0; i < n; i++)
                x[i] = (struct indexed_entry){e[i], i};
        qsort(x, n, sizeof(*x), indexed_cmp);
        for (uint32_t i = 0; i < n; i++)
                e[i] = x[i].e;
        free(x);
}

#define RADIX_MAX_BITS 11 /* digits of up to 11 bits: 2,048 counts */

/* One stable counting pass of src[0..n) into dst by digit[i] (< 1 << bits), or, digit NULL,
   by the start's bits from start_shift (bits wide). */
static void radix_pass(const struct sym_entry *src, struct sym_entry *dst, uint32_t n,
                       const uint16_t *digit, unsigned int start_shift, unsigned int bits)
{
        uint32_t count[(1u << RADIX_MAX_BITS) + 1];
        uint32_t mask = (1u << bits) - 1;
        memset(count, 0, ((size_t)mask + 2) * sizeof(*count));
        if (digit) {
                for (uint32_t i = 0; i < n; i++)
                        count[digit[i] + 1]++;
        } else {
                for (uint32_t i = 0; i < n; i++)
                        count[((uint32_t)(src[i].start >> start_shift) & mask) + 1]++;
        }
        for (uint32_t k = 0; k < mask; k++)
                count[k + 1] += count[k];
        if (digit) {
                for (uint32_t i = 0; i < n; i++)
                        dst[count[digit[i]]++] = src[i];
        } else {
                for (uint32_t i = 0; i < n; i++)
                        dst[count[(uint32_t)(src[i].start >> start_shift) & mask]++] = src[i];
        }
}

/* Sorts e[0..n), which is in the order the entries were added (their names ascending), as
   sort_few would: a stable radix sort of one key, the start above the lowest and the rank
   below it (5 bits), by as many digits as its bits take (a qsort of libLLVM's 46,000 symbols
   was most of its table's build; then a pass by rank and one by each byte of start that
   differed, five for a large library, 20 M instructions of e.etl's replay; three 11-bit digits
   now). The starts are taken down by the lowest while sorted. Returns the array sorted: e, or
   one of n entries that the caller then owns (e's entries left in any order). */
static struct sym_entry *sort_entries(struct sym_entry *e, uint32_t n)
{
        if (n < 256) {
                sort_few(e, n);
                return e;
        }
        uint64_t lo = e[0].start, hi = e[0].start;
        for (uint32_t i = 1; i < n; i++) {
                lo = e[i].start < lo ? e[i].start : lo;
                hi = e[i].start > hi ? e[i].start : hi;
        }
        if ((hi - lo) >> 58) { /* no room for the rank above the span: a hostile table */
                sort_few(e, n);
                return e;
        }
        unsigned int key_bits = 5;
        for (uint64_t span = hi - lo; span; span >>= 1)
                key_bits++;
        unsigned int bits = n >= 4096 ? RADIX_MAX_BITS : 8;
        struct sym_entry *tmp = xmalloc(n * sizeof(*tmp)), *src = e, *dst = tmp, *swap;
        mem_policy_populate(tmp, n * sizeof(*tmp)); /* written whole by the first pass */
        /* the first digit: the rank and the start's low bits */
        uint16_t *digit = xmalloc(n * sizeof(*digit));
        uint32_t mask = (1u << bits) - 1;
        for (uint32_t i = 0; i < n; i++) {
                e[i].start -= lo;
                digit[i] = (uint16_t)((e[i].start << 5 | (uint64_t)rank(&e[i])) & mask);
        }
        radix_pass(src, dst, n, digit, 0, bits);
        free(digit);
        swap = src, src = dst, dst = swap;
        for (unsigned int shift = bits; shift < key_bits; shift += bits) {
                unsigned int w = key_bits - shift < bits ? key_bits - shift : bits;
                radix_pass(src, dst, n, NULL, shift - 5, w);
                swap = src, src = dst, dst = swap;
        }
        for (uint32_t i = 0; i < n; i++)
                src[i].start += lo;
        if (src == e)
                free(tmp);
        return src;
}

void sym_table_choose_aliases_as_perf(struct sym_table *t)
{
        t->is_perf_aliases = true;
}

void sym_table_choose_last_alias(struct sym_table *t)
{
        t->is_last_alias = true;
}

/* Each start's last alias of its best rank first: the sorts keep the order entries were added
   in among equals (sym_table_choose_last_alias). */
static void choose_last_aliases(struct sym_table *t)
{
        for (uint32_t i = 0, j; i < t->nr; i = j) {
                uint32_t last = i;
                for (j = i + 1; j < t->nr && t->entries[j].start == t->entries[i].start; j++)
                        if (rank(&t->entries[j]) == rank(&t->entries[i]))
                                last = j;
                if (last != i) {
                        struct sym_entry e = t->entries[i];
                        t->entries[i] = t->entries[last];
                        t->entries[last] = e;
                }
        }
}

static uint32_t leading_underscores(const char *s)
{
        uint32_t n = 0;
        while (s[n] == '_')
                n++;
        return n;
}

/* Whether a is a better name than b for their start, as perf's choose_best_symbol says: a
   function before padding or data (ours), then a sized one, a strong one, a global one, the
   one with fewer leading underscores, the longer name (perf report's `__GI___libc_write` where
   `__GI___write` shares its address); otherwise the one added first stays. */
static bool perf_prefers(const struct sym_table *t, const struct sym_entry *a,
                         const struct sym_entry *b)
{
        const uint32_t ours = SYM_FLAG_PADDING | SYM_FLAG_DATA;
        if ((a->flags & ours) != (b->flags & ours))
                return (a->flags & ours) < (b->flags & ours);
        bool sa = a->flags & SYM_FLAG_SIZED, sb = b->flags & SYM_FLAG_SIZED;
        if (sa != sb)
                return sa;
        bool wa = a->flags & SYM_FLAG_WEAK, wb = b->flags & SYM_FLAG_WEAK;
        if (wa != wb)
                return !wa;
        bool ga = !(a->flags & (SYM_FLAG_WEAK | SYM_FLAG_LOCAL)),
             gb = !(b->flags & (SYM_FLAG_WEAK | SYM_FLAG_LOCAL));
        if (ga != gb)
                return ga;
        const char *na = sym_table_name(t, a), *nb = sym_table_name(t, b);
        uint32_t ua = leading_underscores(na), ub = leading_underscores(nb);
        if (ua != ub)
                return ua < ub;
        return strlen(na) > strlen(nb);
}

/* Each start's best alias first (perf_prefers), where the table chooses as perf does. */
static void choose_aliases(struct sym_table *t)
{
        for (uint32_t i = 0, j; i < t->nr; i = j) {
                uint32_t best = i;
                for (j = i + 1; j < t->nr && t->entries[j].start == t->entries[i].start; j++)
                        if (perf_prefers(t, &t->entries[j], &t->entries[best]))
                                best = j;
                if (best != i) {
                        struct sym_entry e = t->entries[i];
                        t->entries[i] = t->entries[best];
                        t->entries[best] = e;
                }
        }
}

void sym_table_finish(struct sym_table *t, uint64_t max_inferred_size)
{
        if (t->is_finished)
                return;
        t->is_finished = true;
        if (!t->nr)
                return;
        /* a bound travels in the size field through the sort, marked by a flag */
        for (uint32_t i = 0; t->bounds && i < t->nr; i++) {
                if (!t->entries[i].size && t->bounds[i]) {
                        t->entries[i].size = t->bounds[i];
                        t->entries[i].flags |= SYM_FLAG_BOUND;
                }
        }
        free(t->bounds);
        t->bounds = NULL;
        /* kallsyms comes in address order but for its modules' symbols after the kernel's:
           the runs of one address (aliases) of the ordered part are sorted, the rest on its
           own, and the two merged (a qsort of kallsyms's 120,000 was 20 ms of a live screen's
           start) */
        uint32_t p = 1;
        while (p < t->nr && t->entries[p - 1].start <= t->entries[p].start)
                p++;
        bool is_sorted = false;
        if (p <= t->nr / 2) {
                /* an ELF table: an ordered run at its start, if any, is short; the whole table
                   sorted at once (stable: the order of a merge of the run and the rest) */
                struct sym_entry *sorted = sort_entries(t->entries, t->nr);
                if (sorted != t->entries) {
                        free(t->entries);
                        t->entries = sorted;
                        t->cap = t->nr;
                }
                p = t->nr;
                is_sorted = true;
        }
        for (uint32_t i = 0, j; i < p && !is_sorted; i = j) {
                for (j = i + 1; j < p && t->entries[j].start == t->entries[i].start; j++)
                        ;
                if (j - i > 1)
                        sort_few(t->entries + i, j - i);
        }
        if (p < t->nr) {
                struct sym_entry *rest = sort_entries(t->entries + p, t->nr - p);
                if (rest != t->entries + p) {
                        memcpy(t->entries + p, rest, (t->nr - p) * sizeof(*rest));
                        free(rest);
                }
                struct sym_entry *m = xmalloc(t->nr * sizeof(*m));
                mem_policy_populate(m, t->nr * sizeof(*m)); /* written whole, below */
                uint32_t i = 0, j = p, k = 0;
                while (i < p && j < t->nr)
                        m[k++] = entry_cmp(&t->entries[i], &t->entries[j]) <= 0 ? t->entries[i++]
                                                                                : t->entries[j++];
                while (i < p)
                        m[k++] = t->entries[i++];
                while (j < t->nr)
                        m[k++] = t->entries[j++];
                free(t->entries);
                t->entries = m;
                t->cap = t->nr;
        }
        if (t->is_perf_aliases)
                choose_aliases(t);
        else if (t->is_last_alias)
                choose_last_aliases(t);
        uint32_t o = 0;
        for (uint32_t i = 0; i < t->nr; i++) {
                if (o && t->entries[o - 1].start == t->entries[i].start)
                        continue;
                t->entries[o++] = t->entries[i];
        }
        t->nr = o;
        /* the room reserved (sym_table_reserve) or grown and not used goes back */
        if (t->cap > t->nr) {
                t->entries = xrealloc(t->entries, t->nr * sizeof(*t->entries));
                t->cap = t->nr;
        }
        if (t->pool_cap > t->pool_len) {
                t->pool = xrealloc(t->pool, t->pool_len);
                t->pool_cap = t->pool_len;
        }
        /* backwards: the next start that is not padding (a function runs over the padding of
           the next one, as in perf) */
        uint64_t next_start = 0;
        bool has_next = false;
        for (uint32_t i = t->nr; i-- > 0;) {
                struct sym_entry *e = &t->entries[i];
                bool is_padding = e->flags & SYM_FLAG_PADDING;
                uint64_t next = is_padding && i + 1 < t->nr ? t->entries[i + 1].start : next_start;
                bool is_next = is_padding ? i + 1 < t->nr : has_next;
                if (!is_padding) {
                        next_start = e->start;
                        has_next = true;
                }
                if (e->size && !(e->flags & SYM_FLAG_BOUND))
                        continue;
                uint64_t bound = (e->flags & SYM_FLAG_BOUND) ? e->size : 0;
                e->flags &= ~SYM_FLAG_BOUND;
                uint64_t gap = is_next ? next - e->start : 0;
                if (max_inferred_size && (gap == 0 || gap > max_inferred_size))
                        gap = max_inferred_size;
                if (bound && (gap == 0 || gap > bound))
                        gap = bound;
                e->size = gap ? gap : 1;
        }
}

const struct sym_entry *sym_table_find(const struct sym_table *t, uint64_t addr)
{
        if (!t || !t->nr || !t->is_finished)
                return NULL;
        /* the last entry with start <= addr */
        uint32_t lo = 0, hi = t->nr;
        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (t->entries[mid].start <= addr)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo == 0)
                return NULL;
        /* a sized symbol may hold addr though a later, smaller one starts before it (nested
           local labels); look back a few entries for one that still covers addr */
        for (uint32_t i = lo, k = 0; i > 0 && k < 4; i--, k++) {
                const struct sym_entry *e = &t->entries[i - 1];
                if (addr - e->start < e->size && !(e->flags & SYM_FLAG_PADDING))
                        return e;
        }
        return NULL;
}

/* A mapped table's name at off (sym_table_new_mapped): read as sym_table_add would have left
   it, "" where it could not have (past the pool, borrowed, or with a byte it replaces). The
   pool ends with a NUL, so the scan ends inside it. */
static const char *mapped_name(const struct sym_table *t, uint32_t off)
{
        if (off >= t->pool_len)
                return ""; /* a borrowed offset too: the pool is shorter than NAME_BORROWED */
        const char *name = t->pool + off;
        for (const unsigned char *b = (const unsigned char *)name; *b; b++) {
                if (*b < 0x20 || *b == 0x7f)
                        return "";
        }
        return name;
}

const char *sym_table_name(const struct sym_table *t, const struct sym_entry *e)
{
        if (e && t->is_mapped)
                return mapped_name(t, e->name);
        if (e && (e->name & NAME_BORROWED))
                return t->ext + (e->name & ~NAME_BORROWED);
        return e && e->name < t->pool_len ? t->pool + e->name : "";
}

uint32_t sym_table_count(const struct sym_table *t)
{
        return t ? t->nr : 0;
}

const struct sym_entry *sym_table_at(const struct sym_table *t, uint32_t i)
{
        return t && i < t->nr ? &t->entries[i] : NULL;
}

size_t sym_table_memory(const struct sym_table *t)
{
        return t ? sizeof(*t) + t->cap * sizeof(*t->entries) + t->pool_cap : 0;
}
