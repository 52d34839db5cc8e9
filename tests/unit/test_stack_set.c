/* SPDX-License-Identifier: MIT */
/* test_stack_set.c: the model's distinct stacks (model/stack_set.c): samples joined with their
   stacks, counted per distinct (pid, tid, source, stack); names of places and processes; the
   flame graphs' merge across threads; names made safe. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "model/hot.h"
#include "model/profile.h"
#include "model/stack_set.h"

static struct kevent sample_ev(uint32_t cpu, uint64_t ts, uint32_t pid, uint32_t tid, uint64_t ip)
{
        struct kevent ev = {.type = KEV_SAMPLE, .cpu = cpu, .timestamp = ts, .pid = pid};
        ev.sample.ip = ip;
        ev.sample.tid = tid;
        return ev;
}

static void feed_stack(struct stack_set *s, uint32_t cpu, uint64_t ts, uint32_t pid,
                       const uint64_t *frames, uint32_t nr)
{
        struct kevent ev = {.type = KEV_STACK, .cpu = cpu, .timestamp = ts, .pid = pid};
        ev.stack.event_timestamp = ts;
        ev.stack.pid = pid;
        ev.stack.frames = frames;
        ev.stack.nr_frames = nr;
        stack_set_event(s, &ev);
}

static void feed_sample(struct stack_set *s, uint32_t cpu, uint64_t ts, uint32_t pid, uint32_t tid,
                        uint64_t ip)
{
        struct kevent ev = sample_ev(cpu, ts, pid, tid, ip);
        stack_set_event(s, &ev);
}

/* The stack of set whose tid and innermost frame's function name are these, or NULL. */
static const struct stack_set_stack *find(const struct stack_set *s, uint32_t tid,
                                          uint32_t nr_frames)
{
        for (uint32_t i = 0; i < s->set.nr_stacks; i++)
                if (s->set.stacks[i].tid == tid && s->set.stacks[i].nr_frames == nr_frames)
                        return &s->set.stacks[i];
        return NULL;
}

static const char *frame_name(const struct stack_set *s, const struct stack_set_stack *st,
                              uint32_t i)
{
        return s->functions[s->locs[s->frames[st->first + i]].function].name;
}

struct fixture {
        struct profile *p;
        struct stack_set *s;
};

static int setup(void **state)
{
        struct fixture *fx = calloc(1, sizeof(*fx));
        struct profile_options po = {.is_synchronous = true};
        fx->p = profile_new(&po);
        fx->s = stack_set_new(fx->p->store);
        *state = fx;
        return 0;
}

static int teardown(void **state)
{
        struct fixture *fx = *state;
        stack_set_free(fx->s);
        profile_free(fx->p);
        free(fx);
        return 0;
}

/* Five samples on two CPUs: stacks that came (on the sample's CPU or another), one that did
   not, one that belongs to no sample. */
static void feed_five(struct stack_set *s)
{
        static const uint64_t whole[] = {0x1000, 0x2000, 0x3000};
        static const uint64_t callers[] = {0x2000, 0x3000};
        static const uint64_t other[] = {0x7000};
        feed_sample(s, 0, 100, 10, 11, 0x1000);
        feed_stack(s, 0, 100, 10, whole, 3); /* starts with the sampled address already */
        feed_sample(s, 0, 200, 10, 11, 0x1000);
        feed_stack(s, 0, 200, 10, callers, 2); /* the sampled address goes first */
        feed_sample(s, 1, 300, 10, 12, 0x1000);
        feed_stack(s, 0, 300, 10, whole, 3); /* its stack on another CPU */
        feed_sample(s, 1, 400, 10, 12, 0x5000);
        feed_stack(s, 1, 999, 10, other, 1); /* a CSwitch's stack: no sample of its time */
        feed_sample(s, 1, 500, 10, 12, 0x5000);
        stack_set_end(s);
}

static void test_join_and_count(void **state)
{
        struct fixture *fx = *state;
        struct stack_set *s = fx->s;
        feed_five(s);
        assert_int_equal(s->set.nr_stacks, 3);
        assert_int_equal(s->set.total, 5);
        const struct stack_set_stack *a = find(s, 11, 3), *b = find(s, 12, 3), *c = find(s, 12, 1);
        assert_non_null(a);
        assert_non_null(b);
        assert_non_null(c);
        assert_int_equal(a->count, 2);
        assert_int_equal(b->count, 1);
        assert_int_equal(c->count, 2); /* the two without a stack: their address alone */
        assert_int_equal(a->pid, 10);
        assert_int_equal(a->source, HOT_SOURCE_TIMER);
        assert_int_equal(s->nr_sources, 1);
        uint16_t main_source = 99;
        assert_true(stack_set_main_source(s, &main_source));
        assert_int_equal(main_source, HOT_SOURCE_TIMER);
}

static void test_names_and_merge(void **state)
{
        struct fixture *fx = *state;
        struct stack_set *s = fx->s;
        feed_five(s);
        stack_set_name(s, fx->p);
        const struct stack_set_stack *a = find(s, 11, 3), *c = find(s, 12, 1);
        /* no image holds these addresses: each is its own place, named by its address */
        assert_string_equal(frame_name(s, a, 0), "0x1000");
        assert_string_equal(frame_name(s, a, 1), "0x2000");
        assert_string_equal(frame_name(s, a, 2), "0x3000");
        assert_string_equal(frame_name(s, c, 0), "0x5000");
        assert_string_equal(s->comms[a->comm], "pid 10"); /* no event named the process */
        /* the flame graphs' stacks: threads 11 and 12 of one process merge */
        struct stack_set_merged m;
        stack_set_merge(s, HOT_SOURCE_TIMER, &m);
        assert_int_equal(m.set.nr_stacks, 2);
        assert_int_equal(m.set.total, 5);
        for (uint32_t i = 0; i < m.set.nr_stacks; i++) {
                const struct stack_set_stack *st = &m.set.stacks[i];
                assert_int_equal(st->pid, 0);
                assert_int_equal(st->tid, 0);
                assert_int_equal(st->count, st->nr_frames == 3 ? 3 : 2);
        }
        stack_set_merged_free(&m);
        /* another source merges nothing */
        stack_set_merge(s, 3, &m);
        assert_int_equal(m.set.nr_stacks, 0);
        stack_set_merged_free(&m);
}

static void test_pmc_source(void **state)
{
        struct fixture *fx = *state;
        struct stack_set *s = fx->s;
        uint16_t source;
        assert_false(stack_set_main_source(s, &source));
        struct kevent ev = {.type = KEV_PMC_SAMPLE, .cpu = 0, .timestamp = 10, .pid = 1};
        ev.pmc_sample.ip = 0x10;
        ev.pmc_sample.tid = 2;
        ev.pmc_sample.source = 3;
        stack_set_event(s, &ev);
        stack_set_end(s);
        assert_true(stack_set_main_source(s, &source));
        assert_int_equal(source, 3); /* no timer samples: the first source */
        assert_int_equal(stack_set_source_index(s, 3), 0);
        assert_int_equal(stack_set_source_index(s, HOT_SOURCE_TIMER), -1);
        feed_sample(s, 0, 20, 1, 2, 0x10);
        stack_set_end(s);
        assert_true(stack_set_main_source(s, &source));
        assert_int_equal(source, HOT_SOURCE_TIMER); /* the timer when it sampled */
}

static void test_clean_dup(void **state)
{
        (void)state;
        char *t = stack_set_clean_dup("a\x01z\x7f\xff\xc3\xa9\xc0\xaf\xed\xa0\x80ok");
        /* control characters '?', a bad byte, an overlong form and a surrogate U+FFFD, é kept */
        assert_string_equal(t, "a?z?\xef\xbf\xbd\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
                               "\xef\xbf\xbd\xef\xbf\xbdok");
        free(t);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_join_and_count, setup, teardown),
                cmocka_unit_test_setup_teardown(test_names_and_merge, setup, teardown),
                cmocka_unit_test_setup_teardown(test_pmc_source, setup, teardown),
                cmocka_unit_test(test_clean_dup),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
