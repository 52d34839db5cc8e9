/* SPDX-License-Identifier: MIT */
/* live_nice.h: a live test's process at nice ETWTOP_LIVE_NICE (-5) when ETWTOP_LIVE_TEST=1
   (tests/CMakeLists.txt sets it for the tests that take the live lock), as tests/lib/check.sh
   does for the shell ones: the live tests, one after another, are the suite's longest path.
   Called first in main: the threads and processes the test starts inherit it. */
#ifndef ETWTOP_TESTS_LIVE_NICE_H
#define ETWTOP_TESTS_LIVE_NICE_H

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static inline void live_nice(void)
{
        const char *live = getenv("ETWTOP_LIVE_TEST");
        const char *nice = getenv("ETWTOP_LIVE_NICE");
        if (!live || strcmp(live, "1") != 0)
                return;
        int n = nice && *nice ? atoi(nice) : -5;
        if (n != 0)
                (void)setpriority(PRIO_PROCESS, 0, n);
}

#endif
