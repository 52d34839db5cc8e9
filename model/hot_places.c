/* SPDX-License-Identifier: MIT */
/* hot_places.c: owns the hot functions' answers by place: the sampled addresses of one function
   (annotate) and the source lines with the most samples. */
#include "hot_impl.h"
#include "model_util.h"

#include <stdlib.h>
#include <string.h>

#define HOT_LINE_PLACES 16384u

/* A sampled address of a module, whichever processes and threads sampled it. */
struct line_place {
        uint64_t rel;
        uint32_t module;
        uint64_t self;
};

/* p[0..n) with the most samples first, those with as many in the order they came (the table's:
   the same in every run): a stable radix sort over the bytes of the counts that differ (a qsort
   of 20,000 places was a tenth of the Hot lines). */
static void places_by_self(struct line_place *p, uint32_t n)
{
        uint64_t diff = 0;
        for (uint32_t i = 0; i < n; i++)
                diff |= p[i].self ^ p[0].self;
        struct line_place *tmp = xmalloc((n + 1) * sizeof(*tmp)), *a = p, *b = tmp;
        for (uint32_t shift = 0; shift < 64 && (diff >> shift); shift += 8) {
                if (!((diff >> shift) & 0xff))
                        continue;
                uint32_t count[257] = {0};
                for (uint32_t i = 0; i < n; i++)
                        count[(~a[i].self >> shift & 0xff) + 1]++;
                for (uint32_t c = 0; c < 256; c++)
                        count[c + 1] += count[c];
                for (uint32_t i = 0; i < n; i++)
                        b[count[~a[i].self >> shift & 0xff]++] = a[i];
                struct line_place *t = a;
                a = b;
                b = t;
        }
        if (a != p)
                memcpy(p, a, n * sizeof(*p));
        free(tmp);
}

/* The places of source with samples and a module, one per address: the places of one address
   in several processes or threads summed (a line's samples are all of its addresses', and the
   HOT_LINE_PLACES heaviest are those of the addresses, not of their processes). Returns their
   count; *out owned by the caller. */
static uint32_t line_places(const struct hot *h, uint16_t source, struct line_place **out)
{
        uint32_t cap = 64;
        while (cap < 2 * (h->nr + 1))
                cap *= 2;
        uint32_t *index = xcalloc(cap, sizeof(*index));           /* place + 1, 0 free */
        struct line_place *p = xmalloc((h->nr + 1) * sizeof(*p)); /* written before read */
        uint32_t n = 0;
        for (uint32_t i = 0; i <= h->last; i++) {
                const struct entry *e = &h->slots[i];
                if (!e->is_used || e->source != source || !e->self || !e->module)
                        continue;
                uint32_t j = (uint32_t)hash_mix64(e->rel ^ hash_mix64(e->module)) & (cap - 1);
                while (index[j] &&
                       !(p[index[j] - 1].rel == e->rel && p[index[j] - 1].module == e->module))
                        j = (j + 1) & (cap - 1);
                if (index[j]) {
                        p[index[j] - 1].self += e->self;
                } else {
                        p[n] = (struct line_place){e->rel, e->module, e->self};
                        index[j] = ++n;
                }
        }
        free(index);
        *out = p;
        return n;
}

/* A line row while the rows are counted: the place that made it (the one with the most
   samples), whose function the row prints. */
struct line_acc {
        struct hot_line_row r;
        uint64_t rel;
        uint32_t file_rank; /* the file's place in name order */
};

static int line_row_cmp(const void *a, const void *b)
{
        const struct line_acc *x = a, *y = b;
        if (x->r.self != y->r.self)
                return x->r.self > y->r.self ? -1 : 1;
        if (x->file_rank != y->file_rank)
                return x->file_rank < y->file_rank ? -1 : 1;
        return x->r.line < y->r.line ? -1 : x->r.line > y->r.line;
}

struct file_name {
        const char *name;
        uint32_t id, rank;
};

static int file_by_name(const void *a, const void *b)
{
        return strcmp(((const struct file_name *)a)->name, ((const struct file_name *)b)->name);
}

static int file_by_id(const void *a, const void *b)
{
        const struct file_name *x = a, *y = b;
        return x->id < y->id ? -1 : x->id > y->id;
}

/* Each row's file_rank: rows with equal counts go by file name, then line (not by the order
   the names were first seen, which depends on what else was looked up). */
static void rank_files(struct sym_store *store, struct line_acc *acc, uint32_t n)
{
        struct file_name *f = xcalloc(n + 1, sizeof(*f));
        for (uint32_t i = 0; i < n; i++)
                f[i] = (struct file_name){NULL, acc[i].r.file, 0};
        qsort(f, n, sizeof(*f), file_by_id);
        uint32_t nr = 0;
        for (uint32_t i = 0; i < n; i++)
                if (!nr || f[nr - 1].id != f[i].id)
                        f[nr++] = (struct file_name){sym_name(store, f[i].id), f[i].id, 0};
        for (uint32_t i = 0; i < nr; i++)
                if (!f[i].name)
                        f[i].name = "";
        qsort(f, nr, sizeof(*f), file_by_name);
        for (uint32_t i = 0; i < nr; i++)
                f[i].rank = i;
        qsort(f, nr, sizeof(*f), file_by_id);
        for (uint32_t i = 0; i < n; i++) {
                struct file_name key = {NULL, acc[i].r.file, 0};
                const struct file_name *hit = bsearch(&key, f, nr, sizeof(*f), file_by_id);
                acc[i].file_rank = hit ? hit->rank : 0;
        }
        free(f);
}

struct module_weight {
        uint32_t module;
        uint32_t rank; /* its place among the modules as first met */
        uint64_t self; /* its places' samples */
};

static int weight_by_self(const void *a, const void *b)
{
        const struct module_weight *x = a, *y = b;
        if (x->self != y->self)
                return x->self > y->self ? -1 : 1;
        return x->module < y->module ? -1 : x->module > y->module;
}

/* The places reordered by module, the module with the most samples first (each module's in
   their order), into places; the modules in that order into *mods (their count returned). */
static uint32_t group_by_module(struct line_place *places, uint32_t n, struct module_weight **mods)
{
        uint32_t cap = 64;
        while (cap < 2 * (n + 1))
                cap *= 2;
        uint32_t *slot = xcalloc(cap, sizeof(*slot));  /* module weight + 1, 0 free */
        uint32_t *of = xmalloc((n + 1) * sizeof(*of)); /* place -> its module's weight */
        struct module_weight *w = xmalloc((n + 1) * sizeof(*w));
        uint32_t nr = 0;
        for (uint32_t i = 0; i < n; i++) {
                uint32_t m = places[i].module, j = (uint32_t)hash_mix64(m) & (cap - 1);
                while (slot[j] && w[slot[j] - 1].module != m)
                        j = (j + 1) & (cap - 1);
                if (!slot[j]) {
                        w[nr] = (struct module_weight){m, nr, 0};
                        slot[j] = ++nr;
                }
                of[i] = slot[j] - 1;
                w[of[i]].self += places[i].self;
        }
        free(slot);
        /* rank stays each weight's first place while they are sorted */
        qsort(w, nr, sizeof(*w), weight_by_self);
        uint32_t *start = xcalloc(nr + 1, sizeof(*start)), *rank = xcalloc(nr + 1, sizeof(*rank));
        for (uint32_t r = 0; r < nr; r++)
                rank[w[r].rank] = r;
        for (uint32_t i = 0; i < n; i++)
                start[rank[of[i]] + 1]++;
        for (uint32_t r = 0; r < nr; r++)
                start[r + 1] += start[r];
        struct line_place *sorted = xmalloc((n + 1) * sizeof(*sorted));
        for (uint32_t i = 0; i < n; i++)
                sorted[start[rank[of[i]]]++] = places[i];
        memcpy(places, sorted, n * sizeof(*places));
        free(sorted);
        free(start);
        free(rank);
        free(of);
        *mods = w;
        return nr;
}

/* Whether the max-th of the n rows so far has more samples than limit (then no line of less
   can be one of the max): whether max of them have more (no sort of their counts). */
static bool rows_outweigh(const struct line_acc *acc, uint32_t n, uint32_t max, uint64_t limit)
{
        if (!max || n < max)
                return false;
        uint32_t nr_over = 0;
        for (uint32_t i = 0; i < n; i++)
                nr_over += acc[i].r.self > limit;
        return nr_over >= max;
}

uint32_t hot_top_lines(struct hot *h, uint16_t source, uint32_t max,
                       const struct hot_line_row **rows)
{
        hot_settle_samples(h);
        /* the addresses with the most samples first, HOT_LINE_PLACES of them: a line lookup
           reads debug information, and the many addresses of a sample or two change no row */
        struct line_place *places;
        uint32_t nr_places = line_places(h, source, &places);
        places_by_self(places, nr_places);
        if (nr_places > HOT_LINE_PLACES)
                nr_places = HOT_LINE_PLACES;
        /* a row per place at most */
        uint32_t cap = 64;
        while (cap < 2 * (nr_places + 1))
                cap *= 2;
        free(h->line_rows);
        /* rows and acc: written up to n before they are read */
        h->line_rows = xmalloc((cap / 2 + 1) * sizeof(*h->line_rows));
        struct line_acc *acc = xmalloc((cap / 2 + 1) * sizeof(*acc));
        uint32_t *index = xcalloc(cap, sizeof(*index)); /* row + 1, 0 free */
        /* every place's line from the line tables, module by module, the heaviest first,
           while a module's lines can still make one of the max rows (a line's samples are
           some of its module's: once the max-th row has more than the next module, that
           module's debug information is never read); the function (the inline scopes) only
           for the rows returned, from the place that made the row */
        struct module_weight *mods = NULL;
        uint32_t nr_mods = group_by_module(places, nr_places, &mods);
        uint32_t n = 0;
        for (uint32_t i = 0, mod = 0; i < nr_places; i++) {
                const struct line_place *e = &places[i];
                if (e->module != mods[mod].module &&
                    (++mod == nr_mods || rows_outweigh(acc, n, max, mods[mod].self)))
                        break;
                struct hot_line_row r = {e->module, 0, 0, 0, e->self};
                if (!sym_srcline_line(h->store, (struct sym_loc){e->module, e->rel}, &r.file,
                                      &r.line))
                        continue;
                uint64_t hk = hash_mix64(((uint64_t)r.module << 32 | r.file) ^ hash_mix64(r.line));
                uint32_t j = (uint32_t)hk & (cap - 1);
                for (; index[j]; j = (j + 1) & (cap - 1)) {
                        const struct hot_line_row *w = &acc[index[j] - 1].r;
                        if (w->module == r.module && w->file == r.file && w->line == r.line)
                                break;
                }
                if (index[j]) {
                        acc[index[j] - 1].r.self += r.self;
                } else if (n < cap / 2) {
                        acc[n] = (struct line_acc){r, e->rel, 0};
                        index[j] = ++n;
                }
        }
        free(mods);
        free(index);
        free(places);
        rank_files(h->store, acc, n);
        qsort(acc, n, sizeof(*acc), line_row_cmp);
        uint32_t nr_rows = max && max < n ? max : n;
        for (uint32_t i = 0; i < n; i++) {
                h->line_rows[i] = acc[i].r;
                struct sym_srcframe fr[8];
                if (i < nr_rows &&
                    sym_srcline(h->store, (struct sym_loc){acc[i].r.module, acc[i].rel}, fr, 8))
                        h->line_rows[i].function = fr[0].function;
        }
        free(acc);
        *rows = h->line_rows;
        return nr_rows;
}

static int place_by_rel(const void *a, const void *b)
{
        const struct hot_place *x = a, *y = b;
        return x->rel < y->rel ? -1 : x->rel > y->rel;
}

uint32_t hot_function_places(struct hot *h, uint16_t source, uint32_t module, uint32_t function,
                             struct hot_place *out, uint32_t max)
{
        hot_settle_samples(h);
        uint32_t n = 0, cap = 0;
        struct hot_place *all = NULL;
        for (uint32_t i = 0; function && i <= h->last; i++) {
                struct entry *e = &h->slots[i];
                if (!e->is_used || e->source != source || (e->module && e->module != module))
                        continue;
                /* named as hot_top_functions names the place: its settled answer, else the
                   store's (an unplaced one placed again) */
                struct sym_loc loc = {e->module, e->rel};
                uint32_t fn = e->function;
                if (!hot_answer_is_current(h, e)) {
                        if (!e->module)
                                loc = sym_locate(h->store, e->pid, e->rel);
                        struct sym_frame f;
                        sym_resolve(h->store, loc, &f);
                        fn = f.state == SYM_RESOLVED ? f.function : 0;
                } else if (e->answer - 1 != SYM_RESOLVED) {
                        fn = 0;
                }
                if (loc.module != module || fn != function)
                        continue;
                if (n == cap) {
                        cap = cap ? cap * 2 : 256;
                        all = xrealloc(all, cap * sizeof(*all));
                }
                all[n++] = (struct hot_place){loc.rel, e->self, e->total};
        }
        if (n > 1)
                qsort(all, n, sizeof(*all), place_by_rel);
        uint32_t o = 0;
        for (uint32_t i = 0; i < n; i++) {
                if (o && all[o - 1].rel == all[i].rel) {
                        all[o - 1].self += all[i].self;
                        all[o - 1].total += all[i].total;
                } else {
                        all[o++] = all[i];
                }
        }
        if (o && max)
                memcpy(out, all, (o < max ? o : max) * sizeof(*out));
        free(all);
        return o;
}
