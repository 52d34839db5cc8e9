/* SPDX-License-Identifier: MIT */
/* thread_state.h: whether a thread of the test's own process sleeps, from /proc: a test waits
   for a thread to block where it means to (the only place it sleeps) rather than for a time. */
#ifndef ETWTOP_TEST_THREAD_STATE_H
#define ETWTOP_TEST_THREAD_STATE_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Whether thread tid of this process sleeps (its state in /proc is S). */
static inline bool thread_sleeps(int tid)
{
        char path[64], text[512];
        snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
        FILE *fp = fopen(path, "r");
        if (!fp)
                return false;
        size_t n = fread(text, 1, sizeof(text) - 1, fp);
        fclose(fp);
        text[n] = 0;
        const char *paren = strrchr(text, ')');
        return paren && paren[1] == ' ' && paren[2] == 'S';
}

#endif
