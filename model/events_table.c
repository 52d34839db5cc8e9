/* SPDX-License-Identifier: MIT */
/* events_table.c: owns the generic events table: per-type and per-process/thread counts, and
   each type's recent events with their fields as text, within the caps of events_table.h. */
#include "model/events_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kevent_text.h"
#include "model_util.h"

/* A type's row and its store: a ring of its recent events. */
struct type_slot {
        struct events_type row;
        const char *name_ptr;        /* the decoder's name as it last came (a quick compare) */
        struct events_record **ring; /* owned, each record owned */
        uint32_t cap, head;          /* head: the oldest */
        int64_t last_kept_ns;        /* the time of the newest event kept */
};

struct group_slot {
        uint64_t key; /* type_id << 40 ^ ... ; 0 empty (see group_key) */
        struct events_group row;
};

struct events_table {
        struct type_slot *types; /* owned */
        uint32_t nr_types, cap_types;
        uint32_t *type_index; /* owned: open addressing, type index + 1, 0 empty */
        uint32_t nr_type_index;
        struct group_slot *groups; /* owned: open addressing */
        uint32_t nr_groups, nr_group_slots;
        /* the processes that ended, their rows not folded yet (EVENTS_TABLE_EXITED) */
        struct ended_pid {
                uint32_t pid;
                int64_t time_ns;
        } * ended; /* owned */
        uint32_t nr_ended, cap_ended;
        int64_t now_ns;              /* the time of the event being counted */
        struct events_group *answer; /* owned: events_table_groups' rows */
        uint32_t cap_answer;
        uint64_t total, nr_no_room, nr_dropped, bytes;
        uint64_t seq; /* of the last event stored */
        uint64_t nr_kind[KEV_TYPE_MAX];
        uint32_t max_recent;
        bool is_no_groups;   /* events_table_set_groups(false): types' counts only */
        bool is_fold_exited; /* events_table_set_fold_exited */
        /* the type each kind of event last had (+1; 0 none): a switch storm's kinds (CSwitch,
           ReadyThread, their stacks) take turns, so one "last type" missed at every event */
        uint32_t kind_type[KEV_TYPE_MAX];
        struct kevent_text scratch;
        /* the event being copied */
        char *text;
        uint32_t len, nr_fields;
        bool is_cut;
};

struct events_table *events_table_new(void)
{
        struct events_table *et = xcalloc(1, sizeof(*et));
        et->nr_type_index = 256;
        et->type_index = xcalloc(et->nr_type_index, sizeof(*et->type_index));
        et->nr_group_slots = 1024;
        et->groups = xcalloc(et->nr_group_slots, sizeof(*et->groups));
        et->text = xmalloc(EVENTS_TABLE_MAX_EVENT_BYTES);
        et->max_recent = EVENTS_TABLE_MAX_RECENT;
        et->scratch.max_list = EVENTS_TABLE_MAX_EVENT_BYTES; /* kept cut anyway */
        return et;
}

static void drop_stored(struct events_table *et, struct type_slot *t)
{
        for (uint32_t i = 0; i < t->row.nr_stored; i++) {
                struct events_record *r = t->ring[(t->head + i) % t->cap];
                et->bytes -= sizeof(*r) + r->size;
                free(r);
        }
        t->row.nr_stored = 0;
        t->head = 0;
}

void events_table_free(struct events_table *et)
{
        if (!et)
                return;
        for (uint32_t i = 0; i < et->nr_types; i++) {
                drop_stored(et, &et->types[i]);
                free(et->types[i].ring);
        }
        free(et->types);
        free(et->type_index);
        free(et->groups);
        free(et->ended);
        free(et->answer);
        free(et->text);
        kevent_text_fini(&et->scratch);
        free(et);
}

void events_table_reset(struct events_table *et)
{
        for (uint32_t i = 0; i < et->nr_types; i++) {
                struct type_slot *t = &et->types[i];
                drop_stored(et, t);
                t->row.nr_events = 0;
                t->row.nr_dropped = 0;
        }
        memset(et->groups, 0, et->nr_group_slots * sizeof(*et->groups));
        et->nr_groups = 0;
        et->total = et->nr_no_room = et->nr_dropped = et->bytes = 0;
        memset(et->nr_kind, 0, sizeof(et->nr_kind));
}

static bool type_matches(struct type_slot *t, const GUID *g, const struct kevent *ev,
                         const char *name)
{
        /* memcmp of a known size: two words compared, not sixteen bytes one by one */
        if (t->row.opcode != ev->opcode || t->row.version != ev->version ||
            memcmp(&t->row.provider, g, sizeof(*g)) != 0)
                return false;
        if (t->name_ptr == name)
                return true;
        if (strncmp(t->row.name, name, sizeof(t->row.name) - 1) != 0)
                return false;
        t->name_ptr = name;
        return true;
}

static void index_type(struct events_table *et, uint32_t i)
{
        const struct events_type *r = &et->types[i].row;
        uint32_t m = et->nr_type_index - 1;
        uint32_t h = event_type_hash(&r->provider, r->opcode, r->version) & m;
        while (et->type_index[h])
                h = (h + 1) & m;
        et->type_index[h] = i + 1;
}

/* The type of ev, a new one if it is not known; NULL past the cap. */
static struct type_slot *find_type(struct events_table *et, const struct kevent *ev)
{
        static const GUID zero;
        const GUID *g = ev->provider ? ev->provider : &zero;
        const char *name = ev->name ? ev->name : "";
        /* at most one type matches an event (a new one is made only where none does), so the
           kind's last type, when it matches, is the one the index would find */
        uint32_t *last = (unsigned)ev->type < KEV_TYPE_MAX ? &et->kind_type[ev->type] : NULL;
        if (last && *last && type_matches(&et->types[*last - 1], g, ev, name))
                return &et->types[*last - 1];
        uint32_t m = et->nr_type_index - 1;
        uint32_t h = event_type_hash(g, ev->opcode, ev->version) & m;
        while (et->type_index[h]) {
                struct type_slot *t = &et->types[et->type_index[h] - 1];
                if (type_matches(t, g, ev, name)) {
                        if (last)
                                *last = et->type_index[h];
                        return t;
                }
                h = (h + 1) & m;
        }
        if (et->nr_types >= EVENTS_TABLE_MAX_TYPES)
                return NULL;
        if (et->nr_types == et->cap_types) {
                et->cap_types = et->cap_types ? et->cap_types * 2 : 64;
                et->types = xrealloc(et->types, et->cap_types * sizeof(*et->types));
        }
        struct type_slot *t = &et->types[et->nr_types];
        memset(t, 0, sizeof(*t));
        t->row.id = et->nr_types;
        t->row.provider = *g;
        t->row.opcode = ev->opcode;
        t->row.version = ev->version;
        t->name_ptr = name;
        if (name[0]) {
                snprintf(t->row.name, sizeof(t->row.name), "%s", name);
        } else {
                char guid[64];
                kevent_text_guid(guid, sizeof(guid), g);
                snprintf(t->row.name, sizeof(t->row.name), "%s/op%u", guid, ev->opcode);
        }
        et->type_index[h] = ++et->nr_types;
        if (last)
                *last = et->nr_types;
        if (et->nr_types * 2 > et->nr_type_index) {
                free(et->type_index);
                et->nr_type_index *= 2;
                et->type_index = xcalloc(et->nr_type_index, sizeof(*et->type_index));
                for (uint32_t i = 0; i < et->nr_types; i++)
                        index_type(et, i);
        }
        return &et->types[et->nr_types - 1];
}

static void group_add(struct events_table *et, uint32_t h, uint64_t key, uint32_t type_id,
                      uint32_t pid, uint32_t tid);

static uint64_t group_key(uint32_t type_id, uint32_t pid, uint32_t tid)
{
        return ((uint64_t)type_id + 1) << 44 ^ (uint64_t)pid << 22 ^ tid ^ (uint64_t)tid << 50;
}

/* key's first slot in a table of nr_slots (a power of two): the top bits of one multiply
   (Fibonacci hashing), which every bit of the key moves. Every event counts its group: this
   was hash_mix64's five steps. The slots' order is no answer's (events_table_groups sorts). */
static uint32_t group_slot(uint64_t key, uint32_t nr_slots)
{
        return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> (64 - __builtin_ctz(nr_slots)));
}

static bool group_is(const struct group_slot *s, uint32_t type_id, uint32_t pid, uint32_t tid)
{
        return s->row.type_id == type_id && s->row.pid == pid && s->row.tid == tid;
}

static void count_group(struct events_table *et, uint32_t type_id, uint32_t pid, uint32_t tid)
{
        uint64_t key = group_key(type_id, pid, tid);
        uint32_t m = et->nr_group_slots - 1;
        uint32_t h = group_slot(key, et->nr_group_slots);
        while (et->groups[h].key) {
                if (et->groups[h].key == key && group_is(&et->groups[h], type_id, pid, tid)) {
                        et->groups[h].row.nr_events++;
                        return;
                }
                h = (h + 1) & m;
        }
        group_add(et, h, key, type_id, pid, tid);
}

static int cmp_u32(const void *a, const void *b)
{
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        return x < y ? -1 : x > y;
}

/* The table of old (nr_old slots) put again into nr_slots: the rows of the processes in
   folded (sorted, n) go to their type's EVENTS_TABLE_EXITED row. */
static void groups_rehash(struct events_table *et, uint32_t nr_slots, const uint32_t *folded,
                          uint32_t n)
{
        struct group_slot *old = et->groups;
        uint32_t nr_old = et->nr_group_slots;
        et->nr_group_slots = nr_slots;
        et->groups = xcalloc(nr_slots, sizeof(*et->groups));
        et->nr_groups = 0;
        uint32_t m = nr_slots - 1;
        for (uint32_t i = 0; i < nr_old; i++) {
                if (!old[i].key)
                        continue;
                struct group_slot g = old[i];
                if (n && g.row.pid != EVENTS_TABLE_EXITED &&
                    bsearch(&g.row.pid, folded, n, sizeof(*folded), cmp_u32)) {
                        g.row.pid = g.row.tid = EVENTS_TABLE_EXITED;
                        g.key = group_key(g.row.type_id, g.row.pid, g.row.tid);
                }
                uint32_t h = group_slot(g.key, nr_slots);
                for (; et->groups[h].key; h = (h + 1) & m)
                        if (et->groups[h].key == g.key &&
                            group_is(&et->groups[h], g.row.type_id, g.row.pid, g.row.tid))
                                break;
                if (et->groups[h].key) {
                        et->groups[h].row.nr_events += g.row.nr_events;
                } else {
                        et->groups[h] = g;
                        et->nr_groups++;
                }
        }
        free(old);
}

/* The rows of the processes that ended EVENTS_TABLE_EXITED_GRACE_NS or more before the event
   being counted (all of them when is_all) folded, in a table of the same size; those that ended
   since stay listed. Returns whether the table was made again (a free slot found before is
   stale then). */
static bool groups_fold(struct events_table *et, bool is_all)
{
        uint32_t *folded = xmalloc((et->nr_ended ? et->nr_ended : 1) * sizeof(*folded));
        uint32_t n = 0, kept = 0;
        for (uint32_t i = 0; i < et->nr_ended; i++) {
                if (is_all || et->ended[i].time_ns <= et->now_ns - EVENTS_TABLE_EXITED_GRACE_NS)
                        folded[n++] = et->ended[i].pid;
                else
                        et->ended[kept++] = et->ended[i];
        }
        et->nr_ended = kept;
        if (n) {
                qsort(folded, n, sizeof(*folded), cmp_u32);
                groups_rehash(et, et->nr_group_slots, folded, n);
        }
        free(folded);
        return n > 0;
}

/* Whether the oldest end waiting is past the grace: the ends come in about their time order, so
   a new row checks this one and folds only then (not a scan of every end waiting per new row,
   when the rows are at their cap and no end is ripe yet). */
static bool has_ripe_end(const struct events_table *et)
{
        return et->nr_ended && et->ended[0].time_ns <= et->now_ns - EVENTS_TABLE_EXITED_GRACE_NS;
}

/* A group not seen before, in its free slot h; the table grows at half full, unless the rows
   of the processes that ended make room (EVENTS_TABLE_FOLD_MIN). After a fold the group looks
   for its slot again (the table was made again), and grows it if the fold left no room. */
static __attribute__((noinline)) void group_add(struct events_table *et, uint32_t h, uint64_t key,
                                                uint32_t type_id, uint32_t pid, uint32_t tid)
{
        if (et->nr_groups >= EVENTS_TABLE_MAX_GROUPS) {
                if (has_ripe_end(et) && groups_fold(et, false) &&
                    et->nr_groups < EVENTS_TABLE_MAX_GROUPS) {
                        count_group(et, type_id, pid, tid);
                        return;
                }
                et->nr_no_room++;
                return;
        }
        if ((et->nr_groups + 1) * 2 > et->nr_group_slots &&
            et->nr_groups >= EVENTS_TABLE_FOLD_MIN && has_ripe_end(et) && groups_fold(et, false)) {
                count_group(et, type_id, pid, tid); /* the ends past the grace are gone now */
                return;
        }
        et->groups[h].key = key;
        et->groups[h].row = (struct events_group){type_id, pid, tid, 1};
        if (++et->nr_groups * 2 <= et->nr_group_slots)
                return;
        groups_rehash(et, et->nr_group_slots * 2, NULL, 0);
}

/* A process's end: its rows fold once they are many (group_add), or now when the ends waiting
   are EVENTS_TABLE_MAX_ENDED. */
static void process_ended(struct events_table *et, uint32_t pid)
{
        if (et->nr_ended == EVENTS_TABLE_MAX_ENDED) {
                groups_fold(et, false);
                if (et->nr_ended == EVENTS_TABLE_MAX_ENDED) /* every one within the grace */
                        groups_fold(et, true);
        }
        if (et->nr_ended == et->cap_ended) {
                et->cap_ended = et->cap_ended ? et->cap_ended * 2 : 256;
                et->ended = xrealloc(et->ended, et->cap_ended * sizeof(*et->ended));
        }
        et->ended[et->nr_ended++] = (struct ended_pid){pid, et->now_ns};
}

/* ---- the copy of an event's fields ---- */

static void put_text(struct events_table *et, const char *s)
{
        size_t n = strlen(s) + 1;
        uint32_t room = EVENTS_TABLE_MAX_EVENT_BYTES - et->len;
        if (n <= room) {
                memcpy(et->text + et->len, s, n);
                et->len += (uint32_t)n;
                return;
        }
        /* cut: as much as fits, then "..." (a value needs at least 4 bytes here) */
        et->is_cut = true;
        if (room < 4) /* copy_field leaves room for a cut value */
                return;
        memcpy(et->text + et->len, s, room - 4);
        memcpy(et->text + et->len + room - 4, "...", 4);
        et->len += room;
}

static void copy_field(void *ctx, const char *name, enum kevent_text_kind kind, const char *value)
{
        struct events_table *et = ctx;
        (void)kind;
        /* a name and at least a cut value must fit */
        if (et->is_cut || et->len + strlen(name) + 1 + 4 > EVENTS_TABLE_MAX_EVENT_BYTES) {
                et->is_cut = true;
                return;
        }
        put_text(et, name);
        put_text(et, value);
        et->nr_fields++;
}

/* The oldest stored event of t goes. */
static void drop_oldest(struct events_table *et, struct type_slot *t)
{
        struct events_record *r = t->ring[t->head];
        et->bytes -= r->size + sizeof(*r);
        free(r);
        t->head = (t->head + 1) % t->cap;
        t->row.nr_stored--;
        t->row.nr_dropped++;
        et->nr_dropped++;
}

void events_table_set_max_recent(struct events_table *et, uint32_t n)
{
        et->max_recent = n < EVENTS_TABLE_MAX_RECENT ? n : EVENTS_TABLE_MAX_RECENT;
}

void events_table_set_fold_exited(struct events_table *et, bool is_folded)
{
        et->is_fold_exited = is_folded;
        if (!is_folded)
                et->nr_ended = 0;
}

void events_table_set_groups(struct events_table *et, bool is_kept)
{
        et->is_no_groups = !is_kept;
}

/* The event formatted and kept (out of line: most events of a busy type are thinned out
   before it, and events_table_add's own frame stays small for them). */
static __attribute__((noinline)) void store_kept(struct events_table *et, struct type_slot *t,
                                                 const struct kevent *ev)
{
        /* the record a full type drops below, asked of memory while this one is formatted (it
           was written a thousand of the type's events ago: its first read was nearly all of
           this function's own time) */
        if (t->row.nr_stored && t->row.nr_stored >= et->max_recent)
                __builtin_prefetch(t->ring[t->head]);
        t->last_kept_ns = ev->time_ns;
        et->len = 0;
        et->nr_fields = 0;
        et->is_cut = false;
        kevent_text_fields(ev, &et->scratch, copy_field, et);
        uint64_t size = sizeof(struct events_record) + et->len;
        /* the bytes cap: this type's oldest first, else the type that holds the most */
        while (et->bytes + size > EVENTS_TABLE_MAX_BYTES) {
                struct type_slot *victim = t->row.nr_stored ? t : NULL;
                for (uint32_t i = 0; !victim && i < et->nr_types; i++)
                        if (et->types[i].row.nr_stored &&
                            (!victim || et->types[i].row.nr_stored > victim->row.nr_stored))
                                victim = &et->types[i];
                if (!victim)
                        break;
                drop_oldest(et, victim);
        }
        while (t->row.nr_stored && t->row.nr_stored >= et->max_recent)
                drop_oldest(et, t);
        if (!et->max_recent)
                return;
        if (t->row.nr_stored == t->cap) { /* grow the ring, oldest first again */
                uint32_t cap = t->cap ? t->cap * 2 : 8;
                if (cap > EVENTS_TABLE_MAX_RECENT)
                        cap = EVENTS_TABLE_MAX_RECENT;
                struct events_record **ring = xmalloc(cap * sizeof(*ring));
                for (uint32_t i = 0; i < t->row.nr_stored; i++)
                        ring[i] = t->ring[(t->head + i) % t->cap];
                free(t->ring);
                t->ring = ring;
                t->cap = cap;
                t->head = 0;
        }
        struct events_record *r = xmalloc(size);
        r->seq = ++et->seq;
        r->time_ns = ev->time_ns;
        r->cpu = ev->cpu;
        r->pid = ev->pid;
        r->tid = ev->tid;
        r->nr_fields = et->nr_fields;
        r->size = et->len;
        memcpy(r->text, et->text, et->len);
        t->ring[(t->head + t->row.nr_stored) % t->cap] = r;
        t->row.nr_stored++;
        et->bytes += size;
}

static void store(struct events_table *et, struct type_slot *t, const struct kevent *ev)
{
        if (!et->max_recent && !t->row.nr_stored)
                return; /* nothing kept: nothing to format */
        /* a full type keeps one event per EVENTS_TABLE_THIN_NS: the others are not formatted */
        if (t->row.nr_stored >= et->max_recent && et->max_recent &&
            ev->time_ns - t->last_kept_ns < EVENTS_TABLE_THIN_NS &&
            ev->time_ns >= t->last_kept_ns) {
                t->row.nr_dropped++;
                et->nr_dropped++;
                return;
        }
        store_kept(et, t, ev);
}

void events_table_add(struct events_table *et, const struct kevent *ev)
{
        if (ev->type == KEV_STACK && ev->stack.is_from_key)
                return;
        et->total++;
        if ((unsigned)ev->type < KEV_TYPE_MAX)
                et->nr_kind[ev->type]++;
        struct type_slot *t = find_type(et, ev);
        if (!t) {
                et->nr_no_room++;
                return;
        }
        t->row.nr_events++;
        if (!et->is_no_groups) {
                et->now_ns = ev->time_ns;
                count_group(et, t->row.id, ev->pid, ev->tid);
                if (et->is_fold_exited && ev->type == KEV_PROCESS &&
                    (ev->process.phase == KEV_PHASE_END || ev->process.phase == KEV_PHASE_DEFUNCT))
                        process_ended(et, ev->process.pid);
        }
        store(et, t, ev);
}

/* ---- queries ---- */

uint32_t events_table_nr_types(const struct events_table *et)
{
        return et->nr_types;
}

const struct events_type *events_table_type(const struct events_table *et, uint32_t id)
{
        return id < et->nr_types ? &et->types[id].row : NULL;
}

static int cmp_groups(const void *a, const void *b)
{
        const struct events_group *x = a, *y = b;
        if (x->type_id != y->type_id)
                return x->type_id < y->type_id ? -1 : 1;
        if (x->pid != y->pid)
                return x->pid < y->pid ? -1 : 1;
        if (x->tid != y->tid)
                return x->tid < y->tid ? -1 : 1;
        return 0;
}

const struct events_group *events_table_groups(struct events_table *et, bool is_by_thread,
                                               uint32_t *nr)
{
        if (et->cap_answer < et->nr_groups + 1) {
                et->cap_answer = et->nr_groups + 1;
                free(et->answer);
                et->answer = xmalloc(et->cap_answer * sizeof(*et->answer));
        }
        uint32_t n = 0;
        for (uint32_t i = 0; i < et->nr_group_slots; i++)
                if (et->groups[i].key) {
                        et->answer[n] = et->groups[i].row;
                        if (!is_by_thread)
                                et->answer[n].tid = 0xFFFFFFFFu;
                        n++;
                }
        qsort(et->answer, n, sizeof(*et->answer), cmp_groups);
        uint32_t out = 0;
        for (uint32_t i = 0; i < n; i++) {
                if (out && cmp_groups(&et->answer[out - 1], &et->answer[i]) == 0)
                        et->answer[out - 1].nr_events += et->answer[i].nr_events;
                else
                        et->answer[out++] = et->answer[i];
        }
        *nr = out;
        return et->answer;
}

const struct events_record *events_table_record(const struct events_table *et, uint32_t id,
                                                uint32_t i)
{
        if (id >= et->nr_types)
                return NULL;
        const struct type_slot *t = &et->types[id];
        if (i >= t->row.nr_stored)
                return NULL;
        return t->ring[(t->head + i) % t->cap];
}

bool events_record_field(const struct events_record *r, uint32_t *pos, const char **name,
                         const char **value)
{
        if (*pos >= r->size)
                return false;
        *name = r->text + *pos;
        *pos += (uint32_t)strlen(*name) + 1;
        if (*pos >= r->size)
                return false;
        *value = r->text + *pos;
        *pos += (uint32_t)strlen(*value) + 1;
        return true;
}

uint64_t events_table_total(const struct events_table *et)
{
        return et->total;
}

uint64_t events_table_nr_kind(const struct events_table *et, enum kevent_type kind)
{
        return (unsigned)kind < KEV_TYPE_MAX ? et->nr_kind[kind] : 0;
}

bool events_table_is_events_only(const struct events_table *et)
{
        return et->total && !et->nr_kind[KEV_SAMPLE] && !et->nr_kind[KEV_PMC_SAMPLE] &&
               !et->nr_kind[KEV_CSWITCH];
}

uint64_t events_table_nr_no_room(const struct events_table *et)
{
        return et->nr_no_room;
}

uint64_t events_table_nr_dropped(const struct events_table *et)
{
        return et->nr_dropped;
}

uint64_t events_table_bytes(const struct events_table *et)
{
        return et->bytes;
}
