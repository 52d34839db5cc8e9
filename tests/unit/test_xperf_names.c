/* SPDX-License-Identifier: MIT */
/* test_xperf_names.c: xperf's names for flags, stack-walk events, sources and LBR filters. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "etw/evntrace.h"
#include "xperf_names.h"

static void test_flags(void **state)
{
        (void)state;
        PERFINFO_GROUPMASK m;
        char err[256] = "";
        assert_int_equal(xperf_parse_flags("PROC_THREAD+LOADER+PROFILE+CSWITCH+DISPATCHER", &m, err,
                                           sizeof(err)),
                         0);
        assert_int_equal(m.Masks[0], EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD |
                                             EVENT_TRACE_FLAG_IMAGE_LOAD |
                                             EVENT_TRACE_FLAG_PROFILE | EVENT_TRACE_FLAG_CSWITCH |
                                             EVENT_TRACE_FLAG_DISPATCHER);
        /* ETL-FORMAT.md 3.1: PROFILE, CSWITCH, DISPATCHER also set their Masks[1] groups */
        assert_int_equal(m.Masks[1], 0x2 | 0x4 | 0x200);
        assert_int_equal(xperf_parse_flags("pmc_profile", &m, err, sizeof(err)), 0);
        assert_int_equal(m.Masks[0], 0);
        assert_int_equal(m.Masks[1], 0x400);
        assert_int_equal(xperf_parse_flags("0x10+LOADER", &m, err, sizeof(err)), 0);
        assert_int_equal(m.Masks[0], 0x14);
        assert_int_equal(xperf_parse_flags("PROC_THREAD+BOGUS", &m, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "BOGUS"));
        assert_int_equal(xperf_parse_flags("", &m, err, sizeof(err)), -EINVAL);
        assert_int_equal(xperf_parse_flags("PROC_THREAD++LOADER", &m, err, sizeof(err)), -EINVAL);
        char buf[256];
        assert_int_equal(xperf_parse_flags("CSWITCH+LOADER", &m, err, sizeof(err)), 0);
        xperf_format_flags(&m, buf, sizeof(buf));
        assert_string_equal(buf, "LOADER+CSWITCH");
}

static void test_hooks(void **state)
{
        (void)state;
        uint16_t hooks[4];
        char err[256];
        assert_int_equal(
                xperf_parse_hooks("Profile+CSwitch+ReadyThread", hooks, 4, err, sizeof(err)), 3);
        assert_int_equal(hooks[0], 0x0F2E);
        assert_int_equal(hooks[1], 0x0524);
        assert_int_equal(hooks[2], 0x0532);
        assert_int_equal(
                xperf_parse_hooks("0x0524+cswitch+PmcInterrupt", hooks, 4, err, sizeof(err)),
                2); /* duplicates count once */
        assert_int_equal(hooks[1], 0x0F2F);
        assert_int_equal(xperf_parse_hooks("Profile+Nope", hooks, 4, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "Nope"));
        assert_int_equal(xperf_parse_hooks("Profile+CSwitch+ReadyThread+PmcInterrupt+ImageLoad",
                                           hooks, 4, err, sizeof(err)),
                         -E2BIG);
        assert_string_equal(xperf_hook_name(0x0532), "ReadyThread");
        assert_null(xperf_hook_name(0x1234));
}

static void test_sources_and_lbr(void **state)
{
        (void)state;
        uint32_t v;
        char err[256];
        assert_int_equal(xperf_parse_profile_source("BranchMispredictions", &v, err, sizeof(err)),
                         0);
        assert_int_equal(v, 11);
        assert_int_equal(xperf_parse_profile_source("totalcycles", &v, err, sizeof(err)), 0);
        assert_int_equal(v, 19);
        assert_int_equal(xperf_parse_profile_source("29", &v, err, sizeof(err)), 0);
        assert_int_equal(v, 29);
        assert_int_equal(xperf_parse_profile_source("Bogus", &v, err, sizeof(err)), -EINVAL);
        /* the sources Windows numbers from 25 (xperf -pmcsources on x64) */
        assert_int_equal(xperf_parse_profile_source("InstructionRetired", &v, err, sizeof(err)), 0);
        assert_int_equal(v, 26);
        /* --pmc: a list */
        uint32_t src[4];
        assert_int_equal(xperf_parse_profile_sources("TotalCycles+InstructionRetired,LLCMisses",
                                                     src, 4, err, sizeof(err)),
                         3);
        assert_int_equal(src[0], 19);
        assert_int_equal(src[1], 26);
        assert_int_equal(src[2], 29);
        assert_int_equal(xperf_parse_profile_sources("TotalCycles+Nope", src, 4, err, sizeof(err)),
                         -EINVAL);
        assert_non_null(strstr(err, "Nope"));
        assert_true(xperf_parse_profile_sources("TotalCycles+CacheMisses+LLCMisses+LLCReference+"
                                                "TotalIssues",
                                                src, 4, err, sizeof(err)) < 0);
        assert_non_null(strstr(err, "at most 4"));
        assert_int_equal(
                xperf_parse_lbr_filters("KERNEL+NEAR_RET+FAR_BRANCH", &v, err, sizeof(err)), 0);
        assert_int_equal(v, EVNTRACE_LBR_FILTER_KERNEL | EVNTRACE_LBR_FILTER_NEAR_RET |
                                    EVNTRACE_LBR_FILTER_FAR_BRANCH);
        assert_int_equal(xperf_parse_lbr_filters("JCC+WHAT", &v, err, sizeof(err)), -EINVAL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_flags),
                cmocka_unit_test(test_hooks),
                cmocka_unit_test(test_sources_and_lbr),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
