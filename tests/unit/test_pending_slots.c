/* SPDX-License-Identifier: MIT */
/* test_pending_slots.c: the list of memo slots holding waiting samples (model/pending_slots.h)
   that the call tree's and the hot functions' settles visit instead of every slot: made at the
   first listing, given up past its cap (the settle then looks at every slot), emptied by a
   settle. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "pending_slots.h"

static void test_lists_in_order(void **state)
{
        (void)state;
        struct pending_slots l = {0};
        assert_false(pending_slots_all(&l));
        assert_int_equal(l.nr, 0);
        pending_slots_add(&l, 7, 4);
        pending_slots_add(&l, 3, 4);
        pending_slots_add(&l, 7, 4); /* settled and filled again: listed twice */
        assert_int_equal(l.nr, 3);
        assert_int_equal(l.slots[0], 7);
        assert_int_equal(l.slots[1], 3);
        assert_int_equal(l.slots[2], 7);
        assert_false(pending_slots_all(&l));
        assert_int_equal(pending_slots_nr(&l, 4), 3); /* a settle visits those listed */
        assert_int_equal(pending_slots_at(&l, 1), 3);
        pending_slots_clear(&l);
        assert_int_equal(l.nr, 0);
        pending_slots_add(&l, 1, 4);
        assert_int_equal(l.nr, 1);
        assert_int_equal(l.slots[0], 1);
        pending_slots_free(&l);
        assert_null(l.slots);
}

/* past cap listings every slot must be looked at, until a settle empties the list */
static void test_overflow_looks_at_all(void **state)
{
        (void)state;
        struct pending_slots l = {0};
        for (uint32_t i = 0; i < 4; i++)
                pending_slots_add(&l, i, 4);
        assert_false(pending_slots_all(&l));
        pending_slots_add(&l, 0, 4);
        assert_true(pending_slots_all(&l));
        pending_slots_add(&l, 1, 4);
        assert_true(pending_slots_all(&l));
        assert_int_equal(l.nr, 4);
        assert_int_equal(pending_slots_nr(&l, 4), 4); /* a settle visits every slot */
        for (uint32_t i = 0; i < 4; i++)
                assert_int_equal(pending_slots_at(&l, i), i);
        pending_slots_clear(&l);
        assert_false(pending_slots_all(&l));
        pending_slots_add(&l, 2, 4);
        assert_int_equal(l.nr, 1);
        assert_int_equal(l.slots[0], 2);
        pending_slots_free(&l);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_lists_in_order),
                cmocka_unit_test(test_overflow_looks_at_all),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
