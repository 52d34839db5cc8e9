/* SPDX-License-Identifier: MIT */
/* xalloc.c: owns the abort on an allocation that fails. */
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void out_of_memory(size_t size)
{
        /* nothing to return to: the caller was promised memory */
        fprintf(stderr, "etwtop: out of memory (%zu bytes)\n", size);
        abort();
}

void *xmalloc(size_t size)
{
        void *p = malloc(size ? size : 1);
        if (!p)
                out_of_memory(size);
        return p;
}

void *xcalloc(size_t n, size_t size)
{
        void *p = calloc(n ? n : 1, size ? size : 1);
        if (!p)
                out_of_memory(n * size);
        return p;
}

void *xrealloc(void *p, size_t size)
{
        void *q = realloc(p, size ? size : 1);
        if (!q)
                out_of_memory(size);
        return q;
}

char *xstrdup(const char *s)
{
        size_t n = strlen(s) + 1;
        char *p = xmalloc(n);
        memcpy(p, s, n);
        return p;
}
