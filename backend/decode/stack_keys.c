/* SPDX-License-Identifier: MIT */
/* stack_keys.c: owns Windows' stack cache on the decoding side: stack-key
   references waiting for their definitions, the definitions kept and read ahead, and the
   stacks reassembled from them (ETL-FORMAT.md 3.4). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kdecoder_int.h"

#define KEV_REFS_MIN       1024u
#define KEV_REFS_MAX       (1u << 20) /* pending stack-key references; oldest dropped past this */
#define KEV_DEFS_MIN       256u
#define KEV_DEFS_MAX       (1u << 18) /* cached stack-key definitions */
#define KEV_DEFS_FRAMES    (1u << 23) /* frames held by the definition cache, in total */
#define KEV_PRELOAD_MAX    (1u << 22) /* stack-key definitions read ahead */
#define KEV_PRELOAD_FRAMES (1u << 26) /* their frames, in total (512 MB at most) */

/* ---- pending stack-key references ---- */

static inline struct pending_ref *ref_at(const struct kdecoder *d, uint32_t seq)
{
        return &d->refs[seq & (d->refs_cap - 1)];
}

static struct ref_slot *ref_key_find(const struct kdecoder *d, uint64_t key)
{
        if (!d->ref_keys)
                return NULL;
        for (uint32_t i = (uint32_t)(hash_mix64_half(key) & d->ref_keys_mask);;
             i = (i + 1) & d->ref_keys_mask) {
                struct ref_slot *s = &d->ref_keys[i];

                if (s->count == 0)
                        return NULL;
                if (s->key == key)
                        return s;
        }
}

static void ref_key_remove(struct kdecoder *d, struct ref_slot *slot)
{
        uint32_t mask = d->ref_keys_mask;
        uint32_t i = (uint32_t)(slot - d->ref_keys), j = i;

        for (;;) {
                j = (j + 1) & mask;
                if (d->ref_keys[j].count == 0)
                        break;
                uint32_t k = (uint32_t)(hash_mix64_half(d->ref_keys[j].key) & mask);

                if (!in_cyclic_range(k, i, j)) {
                        d->ref_keys[i] = d->ref_keys[j];
                        i = j;
                }
        }
        d->ref_keys[i].count = 0;
        d->ref_keys_nr--;
}

static int ref_keys_resize(struct kdecoder *d, uint32_t cap)
{
        struct ref_slot *slots = calloc(cap, sizeof(*slots));

        if (!slots)
                return -ENOMEM;
        for (uint32_t i = 0; d->ref_keys && i <= d->ref_keys_mask; i++) {
                if (d->ref_keys[i].count == 0)
                        continue;
                uint32_t j = (uint32_t)(hash_mix64_half(d->ref_keys[i].key) & (cap - 1));

                while (slots[j].count)
                        j = (j + 1) & (cap - 1);
                slots[j] = d->ref_keys[i];
        }
        free(d->ref_keys);
        d->ref_keys = slots;
        d->ref_keys_mask = cap - 1;
        return 0;
}

/* The slot for key, inserted empty (count 0 is set by the caller) when absent; NULL on OOM. */
static struct ref_slot *ref_key_get(struct kdecoder *d, uint64_t key)
{
        if (!d->ref_keys || (d->ref_keys_nr + 1) * 2 > d->ref_keys_mask + 1) {
                uint32_t cap = d->ref_keys ? (d->ref_keys_mask + 1) * 2 : KEV_REFS_MIN;

                if (ref_keys_resize(d, cap))
                        return NULL;
        }
        for (uint32_t i = (uint32_t)(hash_mix64_half(key) & d->ref_keys_mask);;
             i = (i + 1) & d->ref_keys_mask) {
                struct ref_slot *s = &d->ref_keys[i];

                if (s->count == 0) {
                        s->key = key;
                        d->ref_keys_nr++;
                        return s;
                }
                if (s->key == key)
                        return s;
        }
}

/* Moves the ring's head past references that are no longer pending. */
static void refs_trim(struct kdecoder *d)
{
        while (d->refs_head != d->refs_tail && !ref_at(d, d->refs_head)->is_live)
                d->refs_head++;
}

/* The ring doubled in place (a realloc: a large one is moved by its pages, not copied, and
   the pages it held are not faulted in again: 170 of a replay's 960 page faults were the
   copies). A pending reference sat at seq & (old - 1) and sits at seq & (cap - 1): where it
   was, or old slots on, where seq has the bit old set. The pending ones are fewer than old
   consecutive numbers, so no two of them shared a slot's two places. */
static int refs_grow(struct kdecoder *d)
{
        uint32_t old = d->refs_cap, cap = old ? old * 2 : KEV_REFS_MIN;
        struct pending_ref *ring = realloc(d->refs, (size_t)cap * sizeof(*ring));

        if (!ring)
                return -ENOMEM;
        for (uint32_t s = d->refs_head; old && s != d->refs_tail; s++)
                if (s & old)
                        ring[s & (cap - 1)] = ring[s & (old - 1)];
        d->refs = ring;
        d->refs_cap = cap;
        return 0;
}

/* Drops the oldest slot of a full ring, counting it when it was still pending. */
static void refs_drop_oldest(struct kdecoder *d)
{
        struct pending_ref *r = ref_at(d, d->refs_head);

        if (r->is_live) {
                struct ref_slot *slot = ref_key_find(d, r->key);

                /* The oldest pending reference is always the first of its key's chain. */
                if (slot) {
                        slot->first = r->next;
                        if (--slot->count == 0)
                                ref_key_remove(d, slot);
                }
                r->is_live = 0;
                d->st.nr_stack_refs_pending--;
                d->nr_refs_dropped++;
        }
        d->refs_head++;
}

static void refs_push(struct kdecoder *d, const struct kevent *ev)
{
        if (d->refs_tail - d->refs_head == d->refs_cap) {
                if (d->refs_cap < KEV_REFS_MAX && refs_grow(d) == 0) {
                        /* room made */
                } else if (d->refs_cap) {
                        refs_drop_oldest(d);
                } else {
                        d->nr_refs_dropped++; /* no ring at all (out of memory) */
                        return;
                }
        }

        struct ref_slot *slot = ref_key_get(d, ev->stack_key.key);

        if (!slot) {
                d->nr_refs_dropped++;
                return;
        }

        uint32_t seq = d->refs_tail++;
        struct pending_ref *r = ref_at(d, seq);

        r->key = ev->stack_key.key;
        r->ts = ev->stack_key.event_timestamp;
        r->next = seq;
        r->pid = ev->stack_key.pid;
        r->tid = ev->stack_key.tid;
        r->cpu = (uint16_t)ev->cpu;
        r->is_kernel = ev->stack_key.is_kernel;
        r->is_live = 1;
        if (slot->count == 0)
                slot->first = seq;
        else
                ref_at(d, slot->last)->next = seq;
        slot->last = seq;
        slot->count++;
        d->st.nr_stack_refs_pending++;
}

/* ---- cached stack-key definitions ---- */

static struct def_slot *def_find(const struct kdecoder *d, uint64_t key)
{
        if (!d->defs)
                return NULL;
        for (uint32_t i = (uint32_t)(hash_mix64_half(key) & d->defs_mask);;
             i = (i + 1) & d->defs_mask) {
                struct def_slot *s = &d->defs[i];

                if (!s->frames)
                        return NULL;
                if (s->key == key)
                        return s;
        }
}

static void def_remove(struct kdecoder *d, uint64_t key)
{
        struct def_slot *slot = def_find(d, key);

        if (!slot)
                return;
        d->defs_frames -= slot->cap_frames;
        free(slot->frames);

        uint32_t mask = d->defs_mask;
        uint32_t i = (uint32_t)(slot - d->defs), j = i;

        for (;;) {
                j = (j + 1) & mask;
                if (!d->defs[j].frames)
                        break;
                uint32_t k = (uint32_t)(hash_mix64_half(d->defs[j].key) & mask);

                if (!in_cyclic_range(k, i, j)) {
                        d->defs[i] = d->defs[j];
                        i = j;
                }
        }
        d->defs[i].frames = NULL;
        d->defs_nr--;
}

static int defs_resize(struct kdecoder *d, uint32_t cap)
{
        struct def_slot *slots = calloc(cap, sizeof(*slots));

        if (!slots)
                return -ENOMEM;
        for (uint32_t i = 0; d->defs && i <= d->defs_mask; i++) {
                if (!d->defs[i].frames)
                        continue;
                uint32_t j = (uint32_t)(hash_mix64_half(d->defs[i].key) & (cap - 1));

                while (slots[j].frames)
                        j = (j + 1) & (cap - 1);
                slots[j] = d->defs[i];
        }
        free(d->defs);
        d->defs = slots;
        d->defs_mask = cap - 1;
        return 0;
}

/* Remembers key -> frames; silently skipped past the cache's bounds or without memory. */
static void def_store(struct kdecoder *d, uint64_t key, const uint64_t *frames, uint32_t nr)
{
        struct def_slot *slot = def_find(d, key);
        uint32_t cap = nr ? nr : 1;

        if (slot) {
                if (slot->cap_frames < cap) {
                        if (d->defs_frames - slot->cap_frames + cap > KEV_DEFS_FRAMES) {
                                def_remove(d, key);
                                return;
                        }
                        uint64_t *p = realloc(slot->frames, (size_t)cap * sizeof(*p));

                        if (!p) {
                                def_remove(d, key);
                                return;
                        }
                        d->defs_frames += cap - slot->cap_frames;
                        slot->frames = p;
                        slot->cap_frames = cap;
                }
                memcpy(slot->frames, frames, (size_t)nr * sizeof(*frames));
                slot->nr_frames = nr;
                return;
        }
        if (d->defs_nr >= KEV_DEFS_MAX || d->defs_frames + cap > KEV_DEFS_FRAMES)
                return;
        if (!d->defs || (d->defs_nr + 1) * 2 > d->defs_mask + 1) {
                if (defs_resize(d, d->defs ? (d->defs_mask + 1) * 2 : KEV_DEFS_MIN))
                        return;
        }

        uint64_t *copy = malloc((size_t)cap * sizeof(*copy));

        if (!copy)
                return;
        memcpy(copy, frames, (size_t)nr * sizeof(*frames));

        uint32_t i = (uint32_t)(hash_mix64_half(key) & d->defs_mask);

        while (d->defs[i].frames)
                i = (i + 1) & d->defs_mask;
        d->defs[i] = (struct def_slot){key, copy, nr, cap};
        d->defs_nr++;
        d->defs_frames += cap;
}

/* ---- emitting stacks reassembled from keys ---- */

/* Delivers the KEV_STACK of one resolved reference. src: the record that completed it. */
static void emit_key_stack(const struct kdecoder *d, const struct kevent *src, uint64_t ts,
                           uint32_t pid, uint32_t tid, uint32_t cpu, bool is_kernel, uint64_t key,
                           const uint64_t *frames, uint32_t nr_frames, kevent_sink_fn sink,
                           void *ctx)
{
        struct kevent ev;

        memset(&ev, 0, sizeof(ev));
        ev.type = KEV_STACK;
        ev.name = "StackWalk/Stack";
        ev.provider = &StackWalkGuid;
        ev.opcode = WMI_LOG_TYPE_STACKWALK & 0xFF;
        ev.version = src->version;
        ev.pointer_size = src->pointer_size;
        ev.timestamp = src->timestamp;
        ev.time_ns = src->time_ns;
        ev.cpu = cpu;
        ev.pid = pid;
        ev.tid = tid;
        ev.stack.event_timestamp = ts;
        ev.stack.event_time_ns = kdecoder_session_ns(d, ts);
        ev.stack.pid = pid;
        ev.stack.tid = tid;
        ev.stack.nr_frames = nr_frames;
        ev.stack.frames = frames;
        ev.stack.is_from_key = true;
        ev.stack.is_kernel_part = is_kernel;
        ev.stack.key = key;
        if (sink)
                sink(ctx, &ev);
}

void stack_keys_def_after(struct kdecoder *d, const struct kevent *ev, kevent_sink_fn sink,
                          void *ctx)
{
        uint64_t key = ev->stack_key_def.key;
        struct ref_slot *slot = ref_key_find(d, key);

        if (slot) {
                uint32_t seq = slot->first, count = slot->count;

                ref_key_remove(d, slot);
                for (uint32_t i = 0; i < count; i++) {
                        struct pending_ref *r = ref_at(d, seq);

                        r->is_live = 0;
                        emit_key_stack(d, ev, r->ts, r->pid, r->tid, r->cpu, r->is_kernel, key,
                                       ev->stack_key_def.frames, ev->stack_key_def.nr_frames, sink,
                                       ctx);
                        seq = r->next;
                }
                d->st.nr_stack_refs_pending -= count;
                d->st.nr_stack_refs_resolved += count;
                refs_trim(d);
        }
        if (ev->opcode == (WMI_LOG_TYPE_STACK_KEY_DELETE & 0xFF))
                def_remove(d, key); /* the kernel may hand the key out again */
        else
                def_store(d, key, ev->stack_key_def.frames, ev->stack_key_def.nr_frames);
}

static int preload_cmp(const void *a, const void *b)
{
        const struct preload_def *x = a, *y = b;
        if (x->key != y->key)
                return x->key < y->key ? -1 : 1;
        return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* The first definition of key read ahead at or after ts (the one a reference at ts names: a
   key is handed out again only after its Delete). */
static const struct preload_def *preload_find(struct kdecoder *d, uint64_t key, uint64_t ts)
{
        if (!d->nr_pre)
                return NULL;
        if (!d->is_pre_sorted) {
                qsort(d->pre, d->nr_pre, sizeof(*d->pre), preload_cmp);
                d->is_pre_sorted = true;
        }
        uint32_t lo = 0, hi = d->nr_pre;
        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                const struct preload_def *m = &d->pre[mid];
                if (m->key < key || (m->key == key && m->ts < ts))
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo < d->nr_pre && d->pre[lo].key == key ? &d->pre[lo] : NULL;
}

void kdecoder_preload_stack_key(struct kdecoder *d, uint64_t key, uint64_t def_timestamp,
                                const uint64_t *frames, uint32_t nr_frames)
{
        if (nr_frames > KEV_MAX_FRAMES || d->nr_pre >= KEV_PRELOAD_MAX ||
            d->nr_pre_frames + nr_frames > KEV_PRELOAD_FRAMES)
                return; /* past the bound: those references wait for their definitions */
        if (d->nr_pre == d->cap_pre) {
                uint32_t cap = d->cap_pre ? d->cap_pre * 2 : 1024;
                struct preload_def *p = realloc(d->pre, cap * sizeof(*p));
                if (!p)
                        return;
                d->pre = p;
                d->cap_pre = cap;
        }
        if (d->nr_pre_frames + nr_frames > d->cap_pre_frames) {
                uint64_t cap = d->cap_pre_frames ? d->cap_pre_frames * 2 : 16384;
                while (cap < d->nr_pre_frames + nr_frames)
                        cap *= 2;
                uint64_t *p = realloc(d->pre_frames, cap * sizeof(*p));
                if (!p)
                        return;
                d->pre_frames = p;
                d->cap_pre_frames = cap;
        }
        memcpy(d->pre_frames + d->nr_pre_frames, frames, (size_t)nr_frames * sizeof(*frames));
        d->pre[d->nr_pre++] = (struct preload_def){key, def_timestamp, d->nr_pre_frames, nr_frames};
        d->nr_pre_frames += nr_frames;
        d->is_pre_sorted = false;
}

void stack_keys_ref_after(struct kdecoder *d, const struct kevent *ev, kevent_sink_fn sink,
                          void *ctx)
{
        const struct def_slot *def = def_find(d, ev->stack_key.key);

        if (!def) {
                const struct preload_def *pre = preload_find(d, ev->stack_key.key, ev->timestamp);
                if (!pre) {
                        refs_push(d, ev);
                        return;
                }
                d->st.nr_stack_refs_resolved++;
                emit_key_stack(d, ev, ev->stack_key.event_timestamp, ev->stack_key.pid,
                               ev->stack_key.tid, ev->cpu, ev->stack_key.is_kernel,
                               ev->stack_key.key, d->pre_frames + pre->first, pre->nr_frames, sink,
                               ctx);
                return;
        }
        d->st.nr_stack_refs_resolved++;
        emit_key_stack(d, ev, ev->stack_key.event_timestamp, ev->stack_key.pid, ev->stack_key.tid,
                       ev->cpu, ev->stack_key.is_kernel, ev->stack_key.key, def->frames,
                       def->nr_frames, sink, ctx);
}

uint32_t stack_keys_nr_pending(const struct kdecoder *d, uint64_t key)
{
        const struct ref_slot *slot = ref_key_find(d, key);

        return slot ? slot->count : 0;
}

void stack_keys_free(struct kdecoder *d)
{
        for (uint32_t i = 0; d->defs && i <= d->defs_mask; i++)
                free(d->defs[i].frames);
        free(d->defs);
        free(d->pre);
        free(d->pre_frames);
        free(d->ref_keys);
        free(d->refs);
}
