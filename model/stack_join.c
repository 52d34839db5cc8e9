/* SPDX-License-Identifier: MIT */
/* stack_join.c: owns the samples that wait for their stacks' parts (stack_join.h). */
#include "stack_join.h"

#include <stdlib.h>
#include <string.h>

#include "remap.h"
#include "util/xalloc.h"

/* How long (trace time) a sample waits for the rest of its stack: the user part comes when its
   thread returns to user mode, after the system call or interrupt it was sampled in. */
#define JOIN_WAIT_NS 200000000ll
#define JOIN_MAX     (1u << 16) /* samples waiting at most; the oldest goes on first */
#define JOIN_FIRST   64u    /* the ring's first size: it doubles as samples wait, up to the max */
#define JOIN_FRAMES  32768u /* a joined stack's frames at most (a record holds 16 K at most) */

struct waiting {
        struct kevent sample; /* its borrowed pointers are not used: a sample has none */
        uint64_t *frames;     /* owned: the kernel part so far, innermost first */
        uint32_t nr_frames, cap_frames;
        bool has_kernel;
};

struct stack_join {
        struct waiting *ring; /* cap slots (a power of two), oldest at head */
        uint32_t head, count, cap;
        bool is_whole;
        uint64_t *scratch; /* JOIN_FRAMES: a joined stack; at the first (whole stacks: none) */
};

struct stack_join *stack_join_new(void)
{
        struct stack_join *j = xcalloc(1, sizeof(*j));
        /* small first: JOIN_MAX slots are 16 MiB, which freeing read through page by page (6,000
           page faults, the most of a short replay's time) */
        j->cap = JOIN_FIRST;
        j->ring = xcalloc(j->cap, sizeof(*j->ring));
        return j;
}

void stack_join_free(struct stack_join *j)
{
        if (!j)
                return;
        for (uint32_t i = 0; i < j->cap; i++)
                free(j->ring[i].frames);
        free(j->ring);
        free(j->scratch);
        free(j);
}

void stack_join_set_whole(struct stack_join *j, bool is_whole)
{
        j->is_whole = is_whole;
}

bool stack_join_is_idle(const struct stack_join *j)
{
        return j->is_whole && !j->count;
}

void stack_join_reset(struct stack_join *j)
{
        j->head = j->count = 0;
}

static struct waiting *at(struct stack_join *j, uint32_t k)
{
        return &j->ring[(j->head + k) & (j->cap - 1)];
}

/* A kernel-space address, by the record's pointer size (64-bit: the top bit set, the upper
   half; x86: 2 GB up). */
static bool is_kernel_address(uint64_t a, uint8_t pointer_size)
{
        return pointer_size == 4 ? a >= 0x80000000ull : a >> 63;
}

/* The sample goes on, with the stack it has: kernel frames, then (when given) the user part. */
static void emit_joined(struct stack_join *j, struct waiting *w, const struct kevent *part,
                        stack_join_emit_fn emit, void *ctx)
{
        emit(ctx, &w->sample);
        if (!j->scratch)
                j->scratch = xmalloc(JOIN_FRAMES * sizeof(*j->scratch)); /* written before read */
        uint32_t n = 0;
        for (uint32_t i = 0; i < w->nr_frames && n < JOIN_FRAMES; i++)
                j->scratch[n++] = w->frames[i];
        if (part)
                for (uint32_t i = 0; i < part->stack.nr_frames && n < JOIN_FRAMES; i++)
                        j->scratch[n++] = part->stack.frames[i];
        if (!n)
                return; /* no part came: the sample is its own stack */
        struct kevent st;
        if (part) {
                st = *part;
        } else {
                memset(&st, 0, sizeof(st));
                st.type = KEV_STACK;
                st.name = "StackWalk/Stack";
                st.pointer_size = w->sample.pointer_size;
                st.stack.pid = w->sample.pid;
                st.stack.tid = w->sample.tid;
        }
        st.cpu = w->sample.cpu;
        st.timestamp = w->sample.timestamp;
        st.time_ns = w->sample.time_ns;
        st.stack.event_timestamp = w->sample.timestamp;
        st.stack.event_time_ns = w->sample.time_ns;
        st.stack.frames = j->scratch;
        st.stack.nr_frames = n;
        st.stack.is_kernel_part = false;
        emit(ctx, &st);
}

/* Takes slot k out, keeping the others in order. */
static void remove_at(struct stack_join *j, uint32_t k)
{
        struct waiting gone = *at(j, k);
        for (uint32_t i = k; i + 1 < j->count; i++)
                *at(j, i) = *at(j, i + 1);
        /* the freed slot keeps the frames buffer for reuse */
        *at(j, j->count - 1) = gone;
        j->count--;
}

static void release_oldest(struct stack_join *j, stack_join_emit_fn emit, void *ctx)
{
        struct waiting *w = at(j, 0);
        emit_joined(j, w, NULL, emit, ctx);
        j->head = (j->head + 1) & (j->cap - 1);
        j->count--;
}

void stack_join_flush(struct stack_join *j, stack_join_emit_fn emit, void *ctx)
{
        while (j->count)
                release_oldest(j, emit, ctx);
}

static void wait_for_stack(struct stack_join *j, const struct kevent *ev, stack_join_emit_fn emit,
                           void *ctx)
{
        if (j->count == j->cap && j->cap < JOIN_MAX) {
                /* twice the room, the slots (the waiting ones and the buffers of the others)
                   in their order from head */
                struct waiting *ring = xcalloc(2 * j->cap, sizeof(*ring));
                for (uint32_t i = 0; i < j->cap; i++)
                        ring[i] = *at(j, i);
                free(j->ring);
                j->ring = ring;
                j->head = 0;
                j->cap *= 2;
        }
        if (j->count == j->cap)
                release_oldest(j, emit, ctx);
        struct waiting *w = at(j, j->count++);
        uint64_t *frames = w->frames;
        uint32_t cap = w->cap_frames;
        *w = (struct waiting){.sample = *ev, .frames = frames, .cap_frames = cap};
}

static void add_kernel_part(struct waiting *w, const struct kevent *part)
{
        uint32_t n = part->stack.nr_frames;
        if (w->nr_frames + n > JOIN_FRAMES)
                n = JOIN_FRAMES - w->nr_frames;
        if (w->nr_frames + n > w->cap_frames) {
                w->cap_frames = w->nr_frames + n < 64 ? 64 : w->nr_frames + n;
                w->frames = xrealloc(w->frames, w->cap_frames * sizeof(*w->frames));
        }
        memcpy(w->frames + w->nr_frames, part->stack.frames, n * sizeof(*w->frames));
        w->nr_frames += n;
        w->has_kernel = true;
}

/* The thread a sample interrupted. */
static uint32_t sample_tid(const struct kevent *s)
{
        return s->type == KEV_PMC_SAMPLE ? s->pmc_sample.tid : s->sample.tid;
}

/* A part of the stack of a waiting sample: the sample of its thread with that timestamp,
   newest first (timer samples of several CPUs often share a timestamp). */
static bool join_part(struct stack_join *j, const struct kevent *ev, stack_join_emit_fn emit,
                      void *ctx)
{
        bool has_tid = ev->stack.tid != UINT32_MAX;
        for (uint32_t k = j->count; k-- > 0;) {
                struct waiting *w = at(j, k);
                if (w->sample.timestamp != ev->stack.event_timestamp ||
                    (has_tid ? sample_tid(&w->sample) != ev->stack.tid : w->sample.cpu != ev->cpu))
                        continue;
                uint32_t n = ev->stack.nr_frames;
                bool has_user = n && !is_kernel_address(ev->stack.frames[n - 1], ev->pointer_size);
                if (ev->stack.is_from_key)
                        has_user = !ev->stack.is_kernel_part && n;
                if (!has_user) {
                        add_kernel_part(w, ev);
                        return true;
                }
                /* the user part comes last: the stack is whole */
                emit_joined(j, w, ev, emit, ctx);
                remove_at(j, k);
                return true;
        }
        return false;
}

/* pid's waiting samples go on with the parts they have, in their order; the others stay in
   theirs. One pass (a busy process's end may find thousands waiting): the slots that went on
   end up past the count, their frames buffers kept for reuse. */
static void release_process(struct stack_join *j, uint32_t pid, stack_join_emit_fn emit, void *ctx)
{
        uint32_t kept = 0;
        for (uint32_t k = 0; k < j->count; k++) {
                struct waiting *w = at(j, k);
                if (w->sample.pid == pid) {
                        emit_joined(j, w, NULL, emit, ctx);
                        continue;
                }
                if (kept != k) {
                        struct waiting keep = *w;
                        *w = *at(j, kept);
                        *at(j, kept) = keep;
                }
                kept++;
        }
        j->count = kept;
}

void stack_join_before(struct stack_join *j, const struct kevent *ev, stack_join_emit_fn emit,
                       void *ctx)
{
        uint32_t pid = j->count ? model_remapped_pid(ev) : UINT32_MAX;
        if (pid != UINT32_MAX)
                release_process(j, pid, emit, ctx);
}

void stack_join_event(struct stack_join *j, const struct kevent *ev, stack_join_emit_fn emit,
                      void *ctx)
{
        /* the samples that waited long enough go on first, in their order */
        while (j->count && ev->time_ns - at(j, 0)->sample.time_ns > JOIN_WAIT_NS)
                release_oldest(j, emit, ctx);
        if (j->is_whole) {
                emit(ctx, ev);
                return;
        }
        switch (ev->type) {
        case KEV_SAMPLE:
        case KEV_PMC_SAMPLE: wait_for_stack(j, ev, emit, ctx); return;
        case KEV_STACK:
                if (join_part(j, ev, emit, ctx))
                        return;
                break; /* another event's stack (CSwitch, ReadyThread): as it is */
        default: break;
        }
        emit(ctx, ev);
}
