/* SPDX-License-Identifier: MIT */
/* hot_places.c: owns the hot functions' answers by place: the sampled addresses of one function
   (annotate) and the source lines with the most samples. */
#include "hot_impl.h"
#include "model_util.h"

#include <stdlib.h>
#include <string.h>

#define HOT_LINE_PLACES 16384u

static int place_by_self(const void *a, const void *b)
{
        const struct entry *x = *(const struct entry *const *)a,
                           *y = *(const struct entry *const *)b;
        return x->self != y->self ? (x->self > y->self ? -1 : 1) : 0;
}

static int line_row_cmp(const void *a, const void *b)
{
        const struct hot_line_row *x = a, *y = b;
        if (x->self != y->self)
                return x->self > y->self ? -1 : 1;
        if (x->file != y->file)
                return x->file < y->file ? -1 : 1;
        return x->line < y->line ? -1 : x->line > y->line;
}

uint32_t hot_top_lines(struct hot *h, uint16_t source, uint32_t max,
                       const struct hot_line_row **rows)
{
        hot_settle_samples(h);
        uint32_t cap = 64;
        while (cap < 2 * (h->nr + 1))
                cap *= 2;
        free(h->line_rows);
        h->line_rows = xcalloc(cap / 2 + 1, sizeof(*h->line_rows));
        uint32_t *index = xcalloc(cap, sizeof(*index)); /* row + 1, 0 free */
        /* the places with the most samples first, HOT_LINE_PLACES of them: a line lookup
           reads debug information, and the many places of a sample or two change no row */
        const struct entry **places = xcalloc(h->nr + 1, sizeof(*places));
        uint32_t nr_places = 0;
        for (uint32_t i = 0; i <= h->mask; i++) {
                const struct entry *e = &h->slots[i];
                if (e->is_used && e->source == source && e->self && e->module)
                        places[nr_places++] = e;
        }
        qsort(places, nr_places, sizeof(*places), place_by_self);
        if (nr_places > HOT_LINE_PLACES)
                nr_places = HOT_LINE_PLACES;
        uint32_t n = 0;
        for (uint32_t i = 0; i < nr_places; i++) {
                const struct entry *e = places[i];
                struct sym_srcframe fr[8];
                if (!sym_srcline(h->store, (struct sym_loc){e->module, e->rel}, fr, 8) ||
                    !fr[0].line)
                        continue;
                struct hot_line_row r = {e->module, fr[0].function, fr[0].file, fr[0].line,
                                         e->self};
                uint64_t hk = hash_mix64(((uint64_t)r.module << 32 | r.file) ^ hash_mix64(r.line));
                uint32_t j = (uint32_t)hk & (cap - 1);
                for (; index[j]; j = (j + 1) & (cap - 1)) {
                        const struct hot_line_row *w = &h->line_rows[index[j] - 1];
                        if (w->module == r.module && w->file == r.file && w->line == r.line)
                                break;
                }
                if (index[j]) {
                        h->line_rows[index[j] - 1].self += r.self;
                } else if (n < cap / 2) {
                        h->line_rows[n] = r;
                        index[j] = ++n;
                }
        }
        free(index);
        free(places);
        qsort(h->line_rows, n, sizeof(*h->line_rows), line_row_cmp);
        *rows = h->line_rows;
        return max && max < n ? max : n;
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
        for (uint32_t i = 0; function && i <= h->mask; i++) {
                struct entry *e = &h->slots[i];
                if (!e->is_used || e->source != source || (e->module && e->module != module))
                        continue;
                /* named as hot_top_functions names the place: its settled answer, else the
                   store's (an unplaced one placed again) */
                struct sym_loc loc = {e->module, e->rel};
                uint32_t fn = e->function;
                if (!e->answer) {
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
