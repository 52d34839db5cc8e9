/* SPDX-License-Identifier: MIT */
/* test_pgo_format.c: src/export/pgo_format's lines: BOLT's fdata (names of local symbols,
   escapes, the unknown end, no_lbr samples) and perf script's LBR text (MMAP2 lines as
   llvm-profgen parses them, the sample's ip, the branches), and their lengths when the buffer
   is short (as snprintf). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "export/pgo_format.h"

static void test_bolt_names(void **state)
{
        (void)state;
        char buf[64];
        assert_int_equal(pgo_bolt_name(buf, sizeof(buf), "main", 0), 4);
        assert_string_equal(buf, "main");
        assert_int_equal(pgo_bolt_name(buf, sizeof(buf), "helper", 1), 8);
        assert_string_equal(buf, "helper/1");
        pgo_bolt_name(buf, sizeof(buf), "_ZL4workv", 12);
        assert_string_equal(buf, "_ZL4workv/12");
        /* short: cut, the length needed returned */
        assert_int_equal(pgo_bolt_name(buf, 4, "helper", 1), 8);
        assert_string_equal(buf, "hel");
        assert_int_equal(pgo_bolt_name(NULL, 0, "helper", 3), 8);
}

static void test_fdata_branch(void **state)
{
        (void)state;
        char buf[128];
        struct pgo_fdata_loc loop = {"loop", 0xa}, work = {"work", 0}, unknown = {NULL, 0x1234};
        assert_int_equal(pgo_fdata_branch(buf, sizeof(buf), &loop, &work, 0, 8645), 25);
        assert_string_equal(buf, "1 loop a 1 work 0 0 8645\n");
        pgo_fdata_branch(buf, sizeof(buf), &unknown, &loop, 3, 1);
        assert_string_equal(buf, "0 [unknown] 0 1 loop a 3 1\n");
        pgo_fdata_branch(buf, sizeof(buf), &loop, &unknown, 0, 18446744073709551615u);
        assert_string_equal(buf, "1 loop a 0 [unknown] 0 0 18446744073709551615\n");
        /* BOLT's escapes: a space and a backslash */
        struct pgo_fdata_loc odd = {"operator new(unsigned long)\\x", 0xff};
        pgo_fdata_branch(buf, sizeof(buf), &odd, &odd, 0, 2);
        assert_string_equal(buf, "1 operator\\ new(unsigned\\ long)\\\\x ff 1 "
                                 "operator\\ new(unsigned\\ long)\\\\x ff 0 2\n");
        char small[8];
        size_t n = pgo_fdata_branch(small, sizeof(small), &loop, &work, 0, 8645);
        assert_int_equal(n, 25);
        assert_string_equal(small, "1 loop ");
}

static void test_fdata_sample(void **state)
{
        (void)state;
        char buf[64];
        struct pgo_fdata_loc at = {"work", 0xc};
        assert_int_equal(pgo_fdata_sample(buf, sizeof(buf), &at, 135), 13);
        assert_string_equal(buf, "1 work c 135\n");
}

static void test_perf_mmap2(void **state)
{
        (void)state;
        char buf[256];
        pgo_perf_mmap2(buf, sizeof(buf), 4242, 4243, 0x401000, 0x1000, 0x1000, "/tmp/prog");
        assert_string_equal(buf, "PERF_RECORD_MMAP2 4242/4243: [0x401000(0x1000) @ 0x1000 00:00 0 "
                                 "0]: r-xp /tmp/prog\n");
        /* perf's %#lx: a zero offset is "0" */
        pgo_perf_mmap2(buf, sizeof(buf), 5595, 5595, 0x5629ec742000, 0x1000, 0, "/a b/c");
        assert_string_equal(buf, "PERF_RECORD_MMAP2 5595/5595: [0x5629ec742000(0x1000) @ 0 00:00 0 "
                                 "0]: r-xp /a b/c\n");
        size_t need = pgo_perf_mmap2(NULL, 0, 1, 1, 0x1000, 0x1000, 0, "/x");
        assert_int_equal(need, strlen("PERF_RECORD_MMAP2 1/1: [0x1000(0x1000) @ 0 00:00 0 0]: "
                                      "r-xp /x\n"));
}

static void test_perf_sample(void **state)
{
        (void)state;
        char buf[64];
        assert_int_equal(pgo_perf_ip(buf, sizeof(buf), 0x401140, 1), 17);
        assert_string_equal(buf, "           401140");
        assert_int_equal(pgo_perf_ip(buf, sizeof(buf), 0x401140, 0), 17);
        assert_string_equal(buf, "                 ");
        pgo_perf_branch(buf, sizeof(buf), 0x40115a, 0x401140, 0);
        assert_string_equal(buf, " 0x40115a/0x401140/-/-/-/0/ ");
        /* perf's flags: mispredicted, predicted, in a transaction, aborted, cycles */
        pgo_perf_branch(buf, sizeof(buf), 0x40115a, 0x401140, 1 | 27u << 4);
        assert_string_equal(buf, " 0x40115a/0x401140/M/-/-/27/ ");
        pgo_perf_branch(buf, sizeof(buf), 0x40115a, 0x401140, 2 | 4 | 8);
        assert_string_equal(buf, " 0x40115a/0x401140/P/X/A/0/ ");
        /* a call stack's frame, as perf script -g prints it (a tab, %16lx) */
        assert_int_equal(pgo_perf_frame(buf, sizeof(buf), 0x401140), 18);
        assert_string_equal(buf, "\t          401140\n");
        pgo_perf_frame(buf, sizeof(buf), 0xffffffff81068283ull);
        assert_string_equal(buf, "\tffffffff81068283\n");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_bolt_names),   cmocka_unit_test(test_fdata_branch),
                cmocka_unit_test(test_fdata_sample), cmocka_unit_test(test_perf_mmap2),
                cmocka_unit_test(test_perf_sample),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
