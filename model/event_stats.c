/* SPDX-License-Identifier: MIT */
/* event_stats.c: owns the per-event-type totals (the "totals" of a dump, the rates of a view). */
#include "model/event_stats.h"
#include "model_util.h"

#include <stdlib.h>
#include <string.h>

#define INITIAL_SLOTS 256

struct event_stats {
        struct event_stats_row *rows; /* owned */
        uint32_t nr_rows;
        uint32_t cap_rows;
        uint32_t *slots; /* owned: open addressing, row index + 1, 0 = empty */
        uint32_t nr_slots;
        uint64_t total;
        int is_sorted;
        /* the last type seen, to skip the lookup for runs of one type */
        uint32_t last_row;
        int has_last;
};

struct event_stats *event_stats_new(void)
{
        struct event_stats *st = xcalloc(1, sizeof(*st));
        st->nr_slots = INITIAL_SLOTS;
        st->slots = xcalloc(st->nr_slots, sizeof(*st->slots));
        return st;
}

void event_stats_free(struct event_stats *st)
{
        if (!st)
                return;
        free(st->rows);
        free(st->slots);
        free(st);
}

/* A type is its provider, opcode and version, and the decoder's name: a manifest provider's
   events of one opcode differ by Id (the CLR's MethodLoadVerbose and DomainModuleLoad share
   opcode 37). The name's pointer stays the same for a type; its text is compared otherwise. */
static int row_matches(struct event_stats_row *r, const GUID *g, uint8_t opcode, uint8_t version,
                       const char *name)
{
        if (r->opcode != opcode || r->version != version || !IsEqualGUID(&r->provider, g))
                return 0;
        if (!name)
                name = "";
        if (r->name_ptr == name)
                return 1;
        if (strncmp(r->name, name, sizeof(r->name) - 1) != 0)
                return 0;
        r->name_ptr = name;
        return 1;
}

static void grow(struct event_stats *st)
{
        uint32_t n = st->nr_slots * 2;
        uint32_t *slots = xcalloc(n, sizeof(*slots));
        for (uint32_t i = 0; i < st->nr_rows; i++) {
                const struct event_stats_row *r = &st->rows[i];
                uint32_t h = event_type_hash(&r->provider, r->opcode, r->version) & (n - 1);
                while (slots[h])
                        h = (h + 1) & (n - 1);
                slots[h] = i + 1;
        }
        free(st->slots);
        st->slots = slots;
        st->nr_slots = n;
}

void event_stats_add(struct event_stats *st, const struct kevent *ev, uint32_t payload_bytes)
{
        static const GUID zero;
        const GUID *g = ev->provider ? ev->provider : &zero;
        st->total++;
        if (st->has_last &&
            row_matches(&st->rows[st->last_row], g, ev->opcode, ev->version, ev->name)) {
                st->rows[st->last_row].nr_events++;
                st->rows[st->last_row].size_bytes += payload_bytes;
                return;
        }
        uint32_t h = event_type_hash(g, ev->opcode, ev->version) & (st->nr_slots - 1);
        while (st->slots[h]) {
                struct event_stats_row *r = &st->rows[st->slots[h] - 1];
                if (row_matches(r, g, ev->opcode, ev->version, ev->name)) {
                        r->nr_events++;
                        r->size_bytes += payload_bytes;
                        st->last_row = st->slots[h] - 1;
                        st->has_last = 1;
                        return;
                }
                h = (h + 1) & (st->nr_slots - 1);
        }
        if (st->nr_rows == st->cap_rows) {
                st->cap_rows = st->cap_rows ? st->cap_rows * 2 : 64;
                st->rows = xrealloc(st->rows, st->cap_rows * sizeof(*st->rows));
        }
        struct event_stats_row *r = &st->rows[st->nr_rows];
        memset(r, 0, sizeof(*r));
        r->provider = *g;
        r->opcode = ev->opcode;
        r->version = ev->version;
        if (ev->name)
                strncpy(r->name, ev->name, sizeof(r->name) - 1);
        r->name_ptr = ev->name ? ev->name : "";
        r->nr_events = 1;
        r->size_bytes = payload_bytes;
        st->slots[h] = ++st->nr_rows;
        st->last_row = st->nr_rows - 1;
        st->has_last = 1;
        st->is_sorted = 0;
        if (st->nr_rows * 2 > st->nr_slots)
                grow(st);
}

static int cmp_rows(const void *a, const void *b)
{
        const struct event_stats_row *x = a, *y = b;
        if (x->nr_events != y->nr_events)
                return x->nr_events > y->nr_events ? -1 : 1;
        int c = strcmp(x->name, y->name);
        if (c)
                return c;
        c = memcmp(&x->provider, &y->provider, sizeof(GUID));
        return c ? c : (int)x->opcode - (int)y->opcode;
}

const struct event_stats_row *event_stats_rows(struct event_stats *st, uint32_t *nr_rows)
{
        if (!st->is_sorted) {
                qsort(st->rows, st->nr_rows, sizeof(*st->rows), cmp_rows);
                /* the slots index rows by position: rebuild them */
                memset(st->slots, 0, st->nr_slots * sizeof(*st->slots));
                for (uint32_t i = 0; i < st->nr_rows; i++) {
                        const struct event_stats_row *r = &st->rows[i];
                        uint32_t h = event_type_hash(&r->provider, r->opcode, r->version) &
                                     (st->nr_slots - 1);
                        while (st->slots[h])
                                h = (h + 1) & (st->nr_slots - 1);
                        st->slots[h] = i + 1;
                }
                st->has_last = 0;
                st->is_sorted = 1;
        }
        *nr_rows = st->nr_rows;
        return st->rows;
}

uint64_t event_stats_total(const struct event_stats *st)
{
        return st->total;
}
