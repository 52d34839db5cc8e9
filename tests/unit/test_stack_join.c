/* SPDX-License-Identifier: MIT */
/* test_stack_join.c: samples waiting for their stacks' parts (model/stack_join.c), as a Windows
   trace carries them: the kernel part at the sample, the user part later. The ring of waiting
   samples starts small and grows as they wait, up to its maximum (65,536), past which the
   oldest goes on with what it has. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "stack_join.h"

#define KERNEL_IP 0xfffff80000001000ull
#define USER_IP   0x00007ff600001000ull

struct seen {
        uint32_t nr_samples, nr_stacks, nr_whole;
        uint64_t last_sample_ts;
        uint32_t nr_out_of_order;
};

static void on_emit(void *ctx, const struct kevent *ev)
{
        struct seen *s = ctx;
        if (ev->type == KEV_SAMPLE) {
                s->nr_samples++;
                s->last_sample_ts = ev->timestamp;
                return;
        }
        assert_int_equal(ev->type, KEV_STACK);
        s->nr_stacks++;
        /* a stack follows its sample, same timestamp */
        if (ev->stack.event_timestamp != s->last_sample_ts)
                s->nr_out_of_order++;
        /* kernel frame first, then the user frame when it came */
        assert_true(ev->stack.nr_frames >= 1);
        assert_int_equal(ev->stack.frames[0], KERNEL_IP + (ev->timestamp & 0xfff));
        if (ev->stack.nr_frames == 2) {
                assert_int_equal(ev->stack.frames[1], USER_IP + (ev->timestamp & 0xfff));
                s->nr_whole++;
        }
}

static struct kevent sample(uint64_t ts, uint32_t tid)
{
        struct kevent ev;
        memset(&ev, 0, sizeof(ev));
        ev.type = KEV_SAMPLE;
        ev.pointer_size = 8;
        ev.timestamp = ts;
        ev.time_ns = (int64_t)ts; /* all within JOIN_WAIT_NS: nothing times out */
        ev.pid = 4;
        ev.tid = tid;
        ev.sample.tid = tid;
        return ev;
}

static struct kevent part(uint64_t ts, uint32_t tid, const uint64_t *frame, bool is_now)
{
        struct kevent ev;
        memset(&ev, 0, sizeof(ev));
        ev.type = KEV_STACK;
        ev.pointer_size = 8;
        ev.timestamp = ts;
        ev.time_ns = is_now ? (int64_t)ts : 0;
        ev.stack.event_timestamp = ts;
        ev.stack.pid = 4;
        ev.stack.tid = tid;
        ev.stack.nr_frames = 1;
        ev.stack.frames = frame;
        return ev;
}

/* n samples of threads 100, 101... (at 1000, 1001...), each with its kernel part: they wait. */
static void wait_with_kernel_parts(struct stack_join *j, struct seen *s, uint32_t n)
{
        for (uint32_t i = 0; i < n; i++) {
                uint64_t ts = 1000 + i;
                struct kevent ev = sample(ts, 100 + i);
                stack_join_event(j, &ev, on_emit, s);
                uint64_t k = KERNEL_IP + (ts & 0xfff);
                ev = part(ts, 100 + i, &k, true);
                stack_join_event(j, &ev, on_emit, s);
        }
}

/* n samples wait at once (each with its kernel part), then their user parts come, newest
   first: every one is joined whole, whatever the ring's size had to grow to. */
static void joined(uint32_t n)
{
        struct stack_join *j = stack_join_new();
        struct seen s = {0};
        wait_with_kernel_parts(j, &s, n);
        assert_int_equal(s.nr_samples, 0); /* all wait */
        for (uint32_t i = n; i-- > 0;) {
                uint64_t ts = 1000 + i;
                uint64_t u = USER_IP + (ts & 0xfff);
                struct kevent ev = part(ts, 100 + i, &u, false);
                ev.time_ns = (int64_t)(1000 + n);
                stack_join_event(j, &ev, on_emit, &s);
        }
        stack_join_flush(j, on_emit, &s);
        assert_int_equal(s.nr_samples, n);
        assert_int_equal(s.nr_stacks, n);
        assert_int_equal(s.nr_whole, n);
        assert_int_equal(s.nr_out_of_order, 0);
        stack_join_free(j);
}

static void test_few(void **state)
{
        (void)state;
        joined(5);
}

static void test_grows(void **state)
{
        (void)state;
        joined(1000); /* past the first size, several doublings, parts taken from the middle */
}

/* Past the maximum, the oldest goes on with its kernel part alone; the others stay joinable. */
static void test_past_the_max(void **state)
{
        (void)state;
        const uint32_t max = 1u << 16, extra = 10;
        struct stack_join *j = stack_join_new();
        struct seen s = {0};
        for (uint32_t i = 0; i < max + extra; i++) {
                uint64_t ts = 1000 + i;
                struct kevent ev = sample(ts, 100);
                stack_join_event(j, &ev, on_emit, &s);
                uint64_t k = KERNEL_IP + (ts & 0xfff);
                ev = part(ts, 100, &k, true);
                stack_join_event(j, &ev, on_emit, &s);
        }
        assert_int_equal(s.nr_samples, extra); /* the oldest, released */
        assert_int_equal(s.nr_stacks, extra);
        assert_int_equal(s.nr_whole, 0);
        /* the newest is still waiting: its user part joins it */
        uint64_t ts = 1000 + max + extra - 1;
        uint64_t u = USER_IP + (ts & 0xfff);
        struct kevent ev = part(ts, 100, &u, false);
        ev.time_ns = (int64_t)ts;
        stack_join_event(j, &ev, on_emit, &s);
        assert_int_equal(s.nr_whole, 1);
        stack_join_flush(j, on_emit, &s);
        assert_int_equal(s.nr_samples, max + extra);
        assert_int_equal(s.nr_out_of_order, 0);
        stack_join_free(j);
}

/* Before an event that takes a process's mappings away (its end, an unload, its pid started
   again: a perf.data's exec), that process's waiting samples go on, with the parts they have;
   another process's stay, and an image loaded, a thread's start or a rundown keep them all. */
static void test_released_before_remap(void **state)
{
        (void)state;
        struct {
                enum kevent_type type;
                enum kevent_phase phase;
                uint32_t pid;
                uint32_t nr_released;
        } cases[] = {
                {KEV_PROCESS, KEV_PHASE_START, 4, 2},   {KEV_PROCESS, KEV_PHASE_END, 4, 2},
                {KEV_PROCESS, KEV_PHASE_DEFUNCT, 4, 2}, {KEV_IMAGE, KEV_PHASE_END, 4, 2},
                {KEV_IMAGE, KEV_PHASE_START, 4, 0},     {KEV_IMAGE, KEV_PHASE_DC_END, 4, 0},
                {KEV_PROCESS, KEV_PHASE_DC_END, 4, 0},  {KEV_THREAD, KEV_PHASE_END, 4, 0},
                {KEV_PROCESS, KEV_PHASE_END, 8, 0},     {KEV_IMAGE, KEV_PHASE_END, 8, 0},
        };
        for (uint32_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
                struct stack_join *j = stack_join_new();
                struct seen s = {0};
                wait_with_kernel_parts(j, &s, 2);
                struct kevent ev;
                memset(&ev, 0, sizeof(ev));
                ev.type = cases[c].type;
                ev.timestamp = 1002;
                ev.time_ns = 1002;
                ev.pid = cases[c].pid;
                if (ev.type == KEV_PROCESS) {
                        ev.process.phase = cases[c].phase;
                        ev.process.pid = cases[c].pid;
                } else if (ev.type == KEV_IMAGE) {
                        ev.image.phase = cases[c].phase;
                        ev.image.pid = cases[c].pid;
                } else {
                        ev.thread.phase = cases[c].phase;
                        ev.thread.pid = cases[c].pid;
                }
                stack_join_before(j, &ev, on_emit, &s);
                assert_int_equal(s.nr_samples, cases[c].nr_released);
                assert_int_equal(s.nr_stacks, cases[c].nr_released); /* the kernel parts */
                assert_int_equal(s.nr_whole, 0);
                stack_join_flush(j, on_emit, &s);
                assert_int_equal(s.nr_samples, 2);
                assert_int_equal(s.nr_out_of_order, 0);
                stack_join_free(j);
        }
}

/* Of samples of two processes waiting in turn, one process's go on; the other's stay waiting,
   in their order, and join their user parts. */
static void test_released_among_others(void **state)
{
        (void)state;
        struct stack_join *j = stack_join_new();
        struct seen s = {0};
        for (uint32_t i = 0; i < 6; i++) {
                uint64_t ts = 1000 + i;
                struct kevent ev = sample(ts, 100 + i);
                ev.pid = i % 2 ? 8 : 4;
                stack_join_event(j, &ev, on_emit, &s);
                uint64_t k = KERNEL_IP + (ts & 0xfff);
                ev = part(ts, 100 + i, &k, true);
                stack_join_event(j, &ev, on_emit, &s);
        }
        struct kevent end;
        memset(&end, 0, sizeof(end));
        end.type = KEV_PROCESS;
        end.time_ns = 1006;
        end.process.phase = KEV_PHASE_END;
        end.process.pid = 4;
        stack_join_before(j, &end, on_emit, &s);
        assert_int_equal(s.nr_samples, 3);
        assert_int_equal(s.last_sample_ts, 1004); /* 1000, 1002, 1004 in their order */
        for (uint32_t i = 1; i < 6; i += 2) {
                uint64_t ts = 1000 + i;
                uint64_t u = USER_IP + (ts & 0xfff);
                struct kevent ev = part(ts, 100 + i, &u, false);
                ev.time_ns = 1007;
                stack_join_event(j, &ev, on_emit, &s);
        }
        assert_int_equal(s.nr_whole, 3); /* pid 8's, each with its user part */
        assert_int_equal(s.last_sample_ts, 1005);
        stack_join_flush(j, on_emit, &s);
        assert_int_equal(s.nr_samples, 6);
        assert_int_equal(s.nr_out_of_order, 0);
        stack_join_free(j);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_few),
                cmocka_unit_test(test_grows),
                cmocka_unit_test(test_past_the_max),
                cmocka_unit_test(test_released_before_remap),
                cmocka_unit_test(test_released_among_others),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
