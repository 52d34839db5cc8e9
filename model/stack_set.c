/* SPDX-License-Identifier: MIT */
/* stack_set.c: owns the distinct stacks gathered from the model's sample sink (what the exports
   write): each sample joined with its stack as the hot functions join them, its frames placed
   at event time, counted per distinct (pid, tid, source, stack); and, after the trace, the
   names of places, functions, modules and processes. */
#include "model/stack_set.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/hot.h"
#include "model/profile_fields.h"
#include "model/switches.h"
#include "remap.h"
#include "util/xalloc.h"
#include "util/hash.h"

#define MAX_CPUS 1024 /* as the hot functions: a sample waits for its stack per CPU */

struct pending {
        uint64_t timestamp;
        uint64_t ip;
        uint32_t pid;
        uint32_t tid;
        uint16_t source;
        bool has;
        uint32_t comm; /* the comm key's id (stack_set_set_comm_key), else 0 */
};

static void *grow(void *p, uint32_t *cap, uint32_t need, size_t size)
{
        if (need <= *cap)
                return p;
        uint32_t n = *cap ? *cap : 64;
        while (n < need)
                n *= 2;
        *cap = n;
        return xrealloc(p, (size_t)n * size);
}

struct stack_set *stack_set_new(struct sym_store *store)
{
        struct stack_set *s = xcalloc(1, sizeof(*s));
        s->store = store;
        s->pend = xcalloc(MAX_CPUS, sizeof(*s->pend));
        return s;
}

static void stack_set_table_free(struct stack_set_table *set)
{
        free(set->stacks);
        free(set->slots);
        memset(set, 0, sizeof(*set));
}

void stack_set_free(struct stack_set *s)
{
        if (!s)
                return;
        free(s->locs);
        free(s->loc_slots);
        stack_set_table_free(&s->set);
        stack_set_table_free(&s->off);
        free(s->frames);
        free(s->pend);
        free(s->scratch);
        for (uint32_t i = 0; i < s->nr_functions; i++)
                free(s->functions[i].name);
        free(s->functions);
        for (uint32_t i = 0; i < s->nr_modules; i++) {
                free(s->modules[i].name);
                free(s->modules[i].path);
                free(s->modules[i].build_id);
        }
        free(s->modules);
        for (uint32_t i = 0; i < s->nr_comms; i++)
                free(s->comms[i]);
        free(s->comms);
        free(s);
}

/* ---- places ---- */

static uint64_t loc_hash(uint32_t module, uint64_t rel, uint32_t pid)
{
        return hash_mix64(rel ^ hash_mix64(((uint64_t)pid << 32 | module) + 1));
}

/* Doubles a table of index + 1 slots and puts every entry back by its hash. */
static uint32_t *rehash(uint32_t *slots, uint32_t *mask, uint32_t nr,
                        uint64_t (*hash)(const void *ctx, uint32_t i), const void *ctx)
{
        uint32_t size = *mask ? (*mask + 1) * 2 : 1024;
        free(slots);
        slots = xcalloc(size, sizeof(*slots));
        *mask = size - 1;
        for (uint32_t i = 0; i < nr; i++) {
                uint32_t j = (uint32_t)hash(ctx, i) & *mask;
                while (slots[j])
                        j = (j + 1) & *mask;
                slots[j] = i + 1;
        }
        return slots;
}

static uint64_t loc_hash_at(const void *ctx, uint32_t i)
{
        const struct stack_set *s = ctx;
        return loc_hash(s->locs[i].module, s->locs[i].rel, s->locs[i].pid);
}

/* The location index of (module, rel, pid): found, or added. */
static uint32_t loc_of(struct stack_set *s, uint32_t module, uint64_t rel, uint32_t pid)
{
        if ((s->nr_locs + 1) * 2 > s->loc_mask + 1 || !s->loc_slots)
                s->loc_slots = rehash(s->loc_slots, &s->loc_mask, s->nr_locs, loc_hash_at, s);
        uint32_t j = (uint32_t)loc_hash(module, rel, pid) & s->loc_mask;
        for (; s->loc_slots[j]; j = (j + 1) & s->loc_mask) {
                const struct stack_set_loc *l = &s->locs[s->loc_slots[j] - 1];
                if (l->module == module && l->rel == rel && l->pid == pid)
                        return s->loc_slots[j] - 1;
        }
        s->locs = grow(s->locs, &s->cap_locs, s->nr_locs + 1, sizeof(*s->locs));
        s->locs[s->nr_locs] = (struct stack_set_loc){.module = module, .rel = rel, .pid = pid};
        s->loc_slots[j] = s->nr_locs + 1;
        return s->nr_locs++;
}

/* The location index of addr in process pid, placed now (the address spaces of this time);
   an address no image holds yet keeps its process. */
static uint32_t place(struct stack_set *s, uint32_t pid, uint64_t addr)
{
        struct sym_loc loc = sym_locate(s->store, pid, addr);
        return loc.module ? loc_of(s, loc.module, loc.rel, 0) : loc_of(s, 0, addr, pid);
}

/* ---- stacks ---- */

static uint64_t stack_hash(const struct stack_set_stack *k, const uint32_t *frames)
{
        uint64_t h = hash_mix64((uint64_t)k->pid << 32 | k->tid) ^
                     hash_mix64((uint64_t)k->source << 32 | k->comm);
        for (uint32_t i = 0; i < k->nr_frames; i++)
                h = ((h << 27 | h >> 37) ^ frames[i]) * 0x9e3779b97f4a7c15ull;
        return hash_mix64(h ^ k->nr_frames);
}

struct rehash_ctx {
        const struct stack_set_table *set;
        const uint32_t *pool;
};

static uint64_t stack_hash_at(const void *ctx, uint32_t i)
{
        const struct rehash_ctx *c = ctx;
        const struct stack_set_stack *k = &c->set->stacks[i];
        return stack_hash(k, c->pool + k->first);
}

/* Counts count more of the stack key (frames: its frames; key->first unused) in set, whose
   stacks' frames are in pool. Returns the stack's index; *is_new when it was not there yet
   (the caller sets its first). */
static uint32_t stack_add(struct stack_set_table *set, const uint32_t *pool,
                          const struct stack_set_stack *key, const uint32_t *frames, uint64_t count,
                          bool *is_new)
{
        if ((set->nr_stacks + 1) * 2 > set->mask + 1 || !set->slots) {
                struct rehash_ctx c = {set, pool};
                set->slots = rehash(set->slots, &set->mask, set->nr_stacks, stack_hash_at, &c);
        }
        set->total += count;
        uint32_t j = (uint32_t)stack_hash(key, frames) & set->mask;
        for (; set->slots[j]; j = (j + 1) & set->mask) {
                struct stack_set_stack *t = &set->stacks[set->slots[j] - 1];
                if (t->pid == key->pid && t->tid == key->tid && t->source == key->source &&
                    t->comm == key->comm && t->nr_frames == key->nr_frames &&
                    memcmp(pool + t->first, frames, key->nr_frames * sizeof(*frames)) == 0) {
                        t->count += count;
                        *is_new = false;
                        return set->slots[j] - 1;
                }
        }
        set->stacks = grow(set->stacks, &set->cap_stacks, set->nr_stacks + 1, sizeof(*set->stacks));
        set->stacks[set->nr_stacks] = *key;
        set->stacks[set->nr_stacks].count = count;
        set->slots[j] = set->nr_stacks + 1;
        *is_new = true;
        return set->nr_stacks++;
}

/* Room for nr frames at the pool's end: a stack's places go there, where a new stack keeps
   them. */
static uint32_t *frames_reserve(struct stack_set *s, uint32_t nr)
{
        if (s->nr_frames + nr > s->cap_frames) {
                uint64_t n = s->cap_frames ? s->cap_frames : 4096;
                while (n < s->nr_frames + nr)
                        n *= 2;
                s->frames = xrealloc(s->frames, n * sizeof(*s->frames));
                s->cap_frames = n;
        }
        return s->frames + s->nr_frames;
}

/* One sample: addrs[0] the sampled address, then its callers, placed in process pid. */
static void add_sample(struct stack_set *s, const struct pending *p, uint32_t pid,
                       const uint64_t *addrs, uint32_t nr)
{
        uint32_t *frames = frames_reserve(s, nr);
        for (uint32_t i = 0; i < nr; i++)
                frames[i] = place(s, pid, addrs[i]);
        struct stack_set_stack key = {.pid = p->pid != UINT32_MAX ? p->pid : pid,
                                      .tid = p->tid,
                                      .source = p->source,
                                      .comm = p->comm,
                                      .nr_frames = nr};
        bool is_new;
        uint32_t i = stack_add(&s->set, s->frames, &key, frames, 1, &is_new);
        if (is_new) {
                s->set.stacks[i].first = s->nr_frames;
                s->nr_frames += nr;
        }
}

int stack_set_source_index(const struct stack_set *s, uint16_t source)
{
        for (uint32_t i = 0; i < s->nr_sources; i++)
                if (s->sources[i] == source)
                        return (int)i;
        return -1;
}

/* A sample whose stack did not come: its address is its whole stack. */
static void pending_flush(struct stack_set *s, struct pending *p)
{
        if (p->has)
                add_sample(s, p, p->pid, &p->ip, 1);
        p->has = false;
}

static void on_sample(struct stack_set *s, const struct kevent *ev, uint16_t source, uint64_t ip,
                      uint32_t tid)
{
        if (stack_set_source_index(s, source) < 0 &&
            s->nr_sources < sizeof(s->sources) / sizeof(s->sources[0]))
                s->sources[s->nr_sources++] = source;
        struct pending *p = &s->pend[ev->cpu % MAX_CPUS];
        if (ev->cpu % MAX_CPUS >= s->nr_pend)
                s->nr_pend = ev->cpu % MAX_CPUS + 1;
        pending_flush(s, p);
        uint32_t comm = s->comm_key ? s->comm_key(s->comm_ctx, ev->pid, tid) : 0;
        *p = (struct pending){ev->timestamp, ip, ev->pid, tid, source, true, comm};
}

static void on_stack(struct stack_set *s, const struct kevent *ev)
{
        /* the sample it belongs to: same timestamp, on its CPU or (rarely) another */
        struct pending *p = &s->pend[ev->cpu % MAX_CPUS];
        if (!p->has || p->timestamp != ev->stack.event_timestamp) {
                p = NULL;
                for (uint32_t c = 0; c < s->nr_pend && !p; c++)
                        if (s->pend[c].has && s->pend[c].timestamp == ev->stack.event_timestamp)
                                p = &s->pend[c];
        }
        if (!p)
                return; /* a stack of an event that is not a sample (CSwitch, ReadyThread) */
        uint32_t nr = ev->stack.nr_frames + 1;
        s->scratch = grow(s->scratch, &s->cap_scratch, nr, sizeof(*s->scratch));
        uint32_t n = 0;
        /* the sampled address first, unless the stack starts with it already (the call tree's
           rule) */
        if (!ev->stack.nr_frames || ev->stack.frames[0] != p->ip)
                s->scratch[n++] = p->ip;
        for (uint32_t i = 0; i < ev->stack.nr_frames; i++)
                s->scratch[n++] = ev->stack.frames[i];
        add_sample(s, p, ev->stack.pid != UINT32_MAX ? ev->stack.pid : p->pid, s->scratch, n);
        p->has = false;
}

void stack_set_set_comm_key(struct stack_set *s,
                            uint32_t (*key)(void *ctx, uint32_t pid, uint32_t tid),
                            void (*name)(void *ctx, uint32_t id, char *buf, size_t size), void *ctx)
{
        s->comm_key = key;
        s->comm_name = name;
        s->comm_ctx = ctx;
}

void stack_set_event(void *ctx, const struct kevent *ev)
{
        struct stack_set *s = ctx;
        switch (ev->type) {
        case KEV_SAMPLE: on_sample(s, ev, HOT_SOURCE_TIMER, ev->sample.ip, ev->sample.tid); break;
        case KEV_PMC_SAMPLE:
                on_sample(s, ev, ev->pmc_sample.source, ev->pmc_sample.ip, ev->pmc_sample.tid);
                break;
        case KEV_STACK: on_stack(s, ev); break;
        case KEV_PROCESS:
        case KEV_IMAGE: {
                /* before the store takes it (profile_event): a process's samples whose stacks
                   did not come are placed in the mappings they were taken in */
                uint32_t pid = model_remapped_pid(ev);
                for (uint32_t c = 0; pid != UINT32_MAX && c < s->nr_pend; c++)
                        if (s->pend[c].has && s->pend[c].pid == pid)
                                pending_flush(s, &s->pend[c]);
                break;
        }
        default: break;
        }
}

void stack_set_end(struct stack_set *s)
{
        for (uint32_t c = 0; c < s->nr_pend; c++)
                pending_flush(s, &s->pend[c]);
}

/* ---- off-CPU time ---- */

/* One thread's blocking stack: its off-CPU time, at its frames' places. */
static void on_block_stack(void *ctx, const struct switches_block_stack *b)
{
        struct stack_set *s = ctx;
        if (!b->nr_frames || !b->off_cpu_ns)
                return;
        uint32_t *frames = frames_reserve(s, b->nr_frames);
        for (uint32_t i = 0; i < b->nr_frames; i++) {
                const struct sym_loc *l = &b->frames[i];
                frames[i] =
                        l->module ? loc_of(s, l->module, l->rel, 0) : loc_of(s, 0, l->rel, b->pid);
        }
        struct stack_set_stack key = {.pid = b->pid, .tid = b->tid, .nr_frames = b->nr_frames};
        bool is_new;
        uint32_t i = stack_add(&s->off, s->frames, &key, frames, b->off_cpu_ns, &is_new);
        if (is_new) {
                s->off.stacks[i].first = s->nr_frames;
                s->nr_frames += b->nr_frames;
        }
}

void stack_set_off_cpu(struct stack_set *s, struct profile *p)
{
        switches_each_block_stack(p->switches, on_block_stack, s);
}

/* ---- names ---- */

char *stack_set_clean_dup(const char *s)
{
        size_t n = strlen(s);
        char *out = xmalloc(n * 3 + 1), *o = out;
        const unsigned char *p = (const unsigned char *)s;
        while (*p) {
                unsigned c = *p;
                uint32_t len = c < 0x80             ? 1
                               : (c & 0xe0) == 0xc0 ? 2
                               : (c & 0xf0) == 0xe0 ? 3
                               : (c & 0xf8) == 0xf0 ? 4
                                                    : 0;
                bool ok = len > 0;
                for (uint32_t i = 1; ok && i < len; i++)
                        ok = (p[i] & 0xc0) == 0x80;
                if (ok && len > 1) {
                        /* no overlong forms, surrogates or code points past U+10FFFF */
                        uint32_t cp = c & (0x7f >> len);
                        for (uint32_t i = 1; i < len; i++)
                                cp = cp << 6 | (p[i] & 0x3f);
                        static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
                        ok = cp >= min[len] && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff);
                }
                if (!ok) {
                        memcpy(o, "\xef\xbf\xbd", 3);
                        o += 3;
                        p++;
                } else if (len == 1) {
                        *o++ = c < 0x20 || c == 0x7f ? '?' : (char)c;
                        p++;
                } else {
                        memcpy(o, p, len);
                        o += len;
                        p += len;
                }
        }
        *o = '\0';
        return out;
}

/* A small map of (tag, string) to an index, for interning: the entries live in the caller's
   array, which key reads. */
struct str_map {
        uint32_t *slots; /* index + 1, 0 empty */
        uint32_t mask;
        uint32_t nr;
        const struct stack_set *s;
        /* entry i's tag and string */
        void (*key)(const struct stack_set *s, uint32_t i, uint32_t *tag, const char **str);
};

static uint64_t str_hash(uint32_t tag, const char *str)
{
        return hash_mix64(hash_fnv1a_str(str, HASH_FNV_OFFSET ^ tag));
}

/* Entry (tag, str)'s index, or UINT32_MAX with *slot where a new entry m->nr goes. */
static uint32_t str_find(struct str_map *m, uint32_t tag, const char *str, uint32_t **slot)
{
        uint32_t t;
        const char *e;
        if ((m->nr + 1) * 2 > m->mask + 1 || !m->slots) {
                uint32_t size = m->mask ? (m->mask + 1) * 2 : 256;
                free(m->slots);
                m->slots = xcalloc(size, sizeof(*m->slots));
                m->mask = size - 1;
                for (uint32_t i = 0; i < m->nr; i++) {
                        m->key(m->s, i, &t, &e);
                        uint32_t j = (uint32_t)str_hash(t, e) & m->mask;
                        while (m->slots[j])
                                j = (j + 1) & m->mask;
                        m->slots[j] = i + 1;
                }
        }
        uint32_t j = (uint32_t)str_hash(tag, str) & m->mask;
        for (; m->slots[j]; j = (j + 1) & m->mask) {
                m->key(m->s, m->slots[j] - 1, &t, &e);
                if (t == tag && strcmp(e, str) == 0)
                        return m->slots[j] - 1;
        }
        *slot = &m->slots[j];
        return UINT32_MAX;
}

static void function_key(const struct stack_set *s, uint32_t i, uint32_t *tag, const char **str)
{
        *tag = s->functions[i].module;
        *str = s->functions[i].name;
}

static void comm_key(const struct stack_set *s, uint32_t i, uint32_t *tag, const char **str)
{
        *tag = 0;
        *str = s->comms[i];
}

/* The function named name in module: found (name is freed), or added (name is kept). */
static uint32_t function_of(struct stack_set *s, struct str_map *m, uint32_t *cap, uint32_t module,
                            uint32_t mapping, char *name)
{
        uint32_t *slot;
        uint32_t i = str_find(m, module, name, &slot);
        if (i != UINT32_MAX) {
                free(name);
                return i;
        }
        s->functions = grow(s->functions, cap, s->nr_functions + 1, sizeof(*s->functions));
        s->functions[s->nr_functions] = (struct stack_set_function){module, mapping, name};
        *slot = ++m->nr;
        return s->nr_functions++;
}

/* The process name name: found (name is freed), or added (name is kept). */
static uint32_t comm_of(struct stack_set *s, struct str_map *m, uint32_t *cap, char *name)
{
        uint32_t *slot;
        uint32_t i = str_find(m, 0, name, &slot);
        if (i != UINT32_MAX) {
                free(name);
                return i;
        }
        s->comms = grow(s->comms, cap, s->nr_comms + 1, sizeof(*s->comms));
        s->comms[s->nr_comms] = name;
        *slot = ++m->nr;
        return s->nr_comms++;
}

/* The module's index + 1 in s->modules, added with its info when new. */
static uint32_t module_of(struct stack_set *s, uint32_t *cap, uint32_t module)
{
        /* modules are few: a linear search over the last one first */
        for (uint32_t i = s->nr_modules; i-- > 0;)
                if (s->modules[i].module == module)
                        return i + 1;
        struct sym_module_info info;
        struct stack_set_module m = {.module = module, .min_rel = UINT64_MAX};
        if (sym_module_info(s->store, module, &info)) {
                m.name = stack_set_clean_dup(info.name);
                m.path = stack_set_clean_dup(info.path);
                char hex[64] = "";
                if (info.build_id_size) {
                        for (uint32_t b = 0; b < info.build_id_size && b < 20; b++)
                                snprintf(hex + 2 * b, sizeof(hex) - 2 * b, "%02x",
                                         info.build_id[b]);
                } else if (info.has_pdb) {
                        snprintf(hex, sizeof(hex), "%s", info.pdb_signature);
                }
                m.build_id = stack_set_clean_dup(hex);
        } else {
                m.name = xstrdup("[unknown]");
                m.path = xstrdup("");
                m.build_id = xstrdup("");
        }
        s->modules = grow(s->modules, cap, s->nr_modules + 1, sizeof(*s->modules));
        s->modules[s->nr_modules++] = m;
        return s->nr_modules;
}

/* The stacks of *old again, their frames remapped: those that became the same merge. */
static void restack(struct stack_set *s, struct stack_set_table *old)
{
        struct stack_set_table set = {0};
        for (uint32_t i = 0; i < old->nr_stacks; i++) {
                const struct stack_set_stack *st = &old->stacks[i];
                bool is_new;
                uint32_t j =
                        stack_add(&set, s->frames, st, s->frames + st->first, st->count, &is_new);
                if (is_new)
                        set.stacks[j].first = st->first;
        }
        stack_set_table_free(old);
        *old = set;
}

/* The trace read: the addresses no image held when they were sampled are placed again, in
   their processes' address spaces as the trace left them (as the hot functions place them
   at a refresh), and those still nowhere become one place per address. Places that turn out
   the same merge, and so do the stacks that then do. */
static void place_late(struct stack_set *s)
{
        bool has_unplaced = false;
        for (uint32_t i = 0; i < s->nr_locs && !has_unplaced; i++)
                has_unplaced = !s->locs[i].module;
        if (!has_unplaced)
                return;
        struct stack_set_loc *old = s->locs;
        uint32_t nr_old = s->nr_locs;
        s->locs = NULL;
        s->nr_locs = s->cap_locs = 0;
        free(s->loc_slots);
        s->loc_slots = NULL;
        s->loc_mask = 0;
        uint32_t *remap = xmalloc((nr_old + 1) * sizeof(*remap));
        for (uint32_t i = 0; i < nr_old; i++) {
                struct stack_set_loc l = old[i];
                if (!l.module) {
                        struct sym_loc loc = sym_locate(s->store, l.pid, l.rel);
                        if (loc.module) {
                                l.module = loc.module;
                                l.rel = loc.rel;
                        }
                }
                remap[i] = loc_of(s, l.module, l.rel, 0);
        }
        free(old);
        for (uint64_t k = 0; k < s->nr_frames; k++)
                s->frames[k] = remap[s->frames[k]];
        free(remap);
        restack(s, &s->set);
        restack(s, &s->off);
}

struct pid_name {
        uint32_t pid;
        char name[SWITCHES_NAME_SIZE];
};

static int pid_name_cmp(const void *a, const void *b)
{
        const struct pid_name *x = a, *y = b;
        return x->pid < y->pid ? -1 : x->pid > y->pid;
}

void stack_set_name(struct stack_set *s, struct profile *p)
{
        struct str_map fmap = {.s = s, .key = function_key}, cmap = {.s = s, .key = comm_key};
        uint32_t cap_functions = 0, cap_modules = 0, cap_comms = 0;
        place_late(s);
        for (uint32_t i = 0; i < s->nr_locs; i++) {
                struct stack_set_loc *l = &s->locs[i];
                char buf[1024];
                if (!l->module) {
                        snprintf(buf, sizeof(buf), "0x%" PRIx64, l->rel);
                        l->function = function_of(s, &fmap, &cap_functions, 0, 0, xstrdup(buf));
                        continue;
                }
                l->mapping = module_of(s, &cap_modules, l->module);
                struct stack_set_module *m = &s->modules[l->mapping - 1];
                if (m->min_rel > l->rel)
                        m->min_rel = l->rel;
                if (m->max_rel < l->rel)
                        m->max_rel = l->rel;
                struct sym_frame fr;
                sym_resolve(s->store, (struct sym_loc){l->module, l->rel}, &fr);
                if (fr.state == SYM_RESOLVED && fr.function) {
                        m->has_functions = true;
                        l->function =
                                function_of(s, &fmap, &cap_functions, l->module, l->mapping,
                                            stack_set_clean_dup(sym_name(s->store, fr.function)));
                } else {
                        snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, m->name, l->rel);
                        l->function = function_of(s, &fmap, &cap_functions, l->module, l->mapping,
                                                  xstrdup(buf));
                }
        }
        /* the processes' names, from the context switches (the trace's process and thread
           events name the processes that switched) */
        const struct switches_row *rows;
        uint32_t n = switches_processes(p->switches, SWITCHES_BY_ID, &rows);
        struct pid_name *names = xcalloc(n ? n : 1, sizeof(*names));
        uint32_t nr_names = 0;
        for (uint32_t i = 0; i < n; i++)
                if (!rows[i].is_other && rows[i].pid != AGG_ALL && rows[i].process_name[0]) {
                        names[nr_names].pid = rows[i].pid;
                        memcpy(names[nr_names++].name, rows[i].process_name, sizeof(names[0].name));
                }
        qsort(names, nr_names, sizeof(*names), pid_name_cmp);
        uint32_t nr_stacks = s->set.nr_stacks;
        for (uint32_t i = 0; i < nr_stacks + s->off.nr_stacks; i++) {
                struct stack_set_stack *st =
                        i < nr_stacks ? &s->set.stacks[i] : &s->off.stacks[i - nr_stacks];
                struct pid_name k = {.pid = st->pid};
                const struct pid_name *hit =
                        nr_names ? bsearch(&k, names, nr_names, sizeof(*names), pid_name_cmp)
                                 : NULL;
                char buf[80];
                /* without context switches: the name the process events gave */
                const char *known = hit ? NULL : switches_process_name(p->switches, st->pid);
                if (i < nr_stacks && s->comm_name && st->comm) /* perf's comm, as sampled */
                        s->comm_name(s->comm_ctx, st->comm, buf, sizeof(buf));
                else if (hit)
                        snprintf(buf, sizeof(buf), "%.*s", (int)sizeof(hit->name), hit->name);
                else if (known && *known)
                        snprintf(buf, sizeof(buf), "%s", known);
                else if (st->pid == UINT32_MAX)
                        snprintf(buf, sizeof(buf), "[unknown]");
                else
                        snprintf(buf, sizeof(buf), "pid %u", st->pid);
                st->comm = comm_of(s, &cmap, &cap_comms, stack_set_clean_dup(buf));
        }
        free(names);
        free(fmap.slots);
        free(cmap.slots);
}

void stack_set_merge(const struct stack_set *s, uint16_t source, struct stack_set_merged *out)
{
        memset(out, 0, sizeof(*out));
        for (uint32_t i = 0; i < s->set.nr_stacks; i++) {
                const struct stack_set_stack *st = &s->set.stacks[i];
                if (st->source != source)
                        continue;
                if (out->nr_frames + st->nr_frames > out->cap_frames) {
                        uint64_t n = out->cap_frames ? out->cap_frames : 4096;
                        while (n < out->nr_frames + st->nr_frames)
                                n *= 2;
                        out->frames = xrealloc(out->frames, n * sizeof(*out->frames));
                        out->cap_frames = n;
                }
                uint32_t *frames = out->frames + out->nr_frames;
                for (uint32_t f = 0; f < st->nr_frames; f++)
                        frames[f] = s->locs[s->frames[st->first + f]].function;
                struct stack_set_stack key = {
                        .source = source, .comm = st->comm, .nr_frames = st->nr_frames};
                bool is_new;
                uint32_t j = stack_add(&out->set, out->frames, &key, frames, st->count, &is_new);
                if (is_new) {
                        out->set.stacks[j].first = out->nr_frames;
                        out->nr_frames += st->nr_frames;
                }
        }
}

void stack_set_merged_free(struct stack_set_merged *m)
{
        stack_set_table_free(&m->set);
        free(m->frames);
        memset(m, 0, sizeof(*m));
}

bool stack_set_main_source(const struct stack_set *s, uint16_t *source)
{
        if (!s->nr_sources)
                return false;
        *source =
                stack_set_source_index(s, HOT_SOURCE_TIMER) >= 0 ? HOT_SOURCE_TIMER : s->sources[0];
        return true;
}
