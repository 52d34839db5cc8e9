/* SPDX-License-Identifier: MIT */
/* test_unplaced.c: whether an address no image held at the last look still stands unplaced
   (model/unplaced.h), the rule the call tree's look for names and the functions view's rows
   share: while its process's addresses stay, and, live, once this look located one of the
   process's addresses again and found no JIT map. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "unplaced.h"

static struct frames_gen now, was;

static int reset(void **state)
{
        (void)state;
        memset(&now, 0, sizeof(now));
        memset(&was, 0, sizeof(was));
        return 0;
}

static struct kevent image_of(uint32_t pid)
{
        struct kevent ev;
        memset(&ev, 0, sizeof(ev));
        ev.type = KEV_IMAGE;
        ev.image.pid = pid;
        return ev;
}

/* a recording: no JIT map comes later, the addresses stand while their process's stay */
static void test_recording_by_generation(void **state)
{
        (void)state;
        struct unplaced_probed p = {0};
        unplaced_look(&p);
        assert_true(unplaced_stands(&p, &now, &was, 100, false));
        struct kevent ev = image_of(100);
        frames_gen_event(&now, &ev);
        assert_false(unplaced_stands(&p, &now, &was, 100, false));
        assert_true(unplaced_stands(&p, &now, &was, 200, false)); /* another process's stayed */
        unplaced_mark(&p, 100); /* a mark does not hold against a moved generation */
        assert_false(unplaced_stands(&p, &now, &was, 100, true));
}

/* live: the first of a process's addresses in a look is located (not marked), the others stand
   on its answer, for this look only */
static void test_live_marked_this_look(void **state)
{
        (void)state;
        struct unplaced_probed p = {0};
        unplaced_look(&p);
        assert_false(unplaced_stands(&p, &now, &was, 100, true));
        unplaced_mark(&p, 100);
        assert_true(unplaced_stands(&p, &now, &was, 100, true));
        assert_false(unplaced_stands(&p, &now, &was, 101, true));
        unplaced_look(&p); /* the next refresh looks for the JIT map again */
        assert_false(unplaced_stands(&p, &now, &was, 100, true));
        unplaced_mark(&p, 100);
        assert_true(unplaced_stands(&p, &now, &was, 100, true));
}

/* two pids of one slot: the later mark holds, the earlier pid is located again */
static void test_live_shared_slot(void **state)
{
        (void)state;
        struct unplaced_probed p = {0};
        unplaced_look(&p);
        uint32_t a = 7, b = 8;
        while (((uint32_t)hash_mix64(b) & (UNPLACED_SLOTS - 1)) !=
               ((uint32_t)hash_mix64(a) & (UNPLACED_SLOTS - 1)))
                b++;
        unplaced_mark(&p, a);
        unplaced_mark(&p, b);
        assert_false(unplaced_stands(&p, &now, &was, a, true));
        assert_true(unplaced_stands(&p, &now, &was, b, true));
}

/* the looks' count wraps: a mark made 2^32 looks ago must not read as this look's */
static void test_live_stamp_wraps(void **state)
{
        (void)state;
        struct unplaced_probed p = {0};
        unplaced_look(&p);
        assert_int_equal(p.stamp, 1);
        unplaced_mark(&p, 100);
        p.stamp = UINT32_MAX;
        unplaced_look(&p);
        assert_int_equal(p.stamp, 1);
        assert_false(unplaced_stands(&p, &now, &was, 100, true));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup(test_recording_by_generation, reset),
                cmocka_unit_test_setup(test_live_marked_this_look, reset),
                cmocka_unit_test_setup(test_live_shared_slot, reset),
                cmocka_unit_test_setup(test_live_stamp_wraps, reset),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
