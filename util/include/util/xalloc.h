/* SPDX-License-Identifier: MIT */
/* xalloc.h: the tree's one allocation helper: allocations that cannot fail (running out of
   memory aborts, STYLE.md "Errors and ownership"); input never reaches here as a reason to.
   Where the tree aborts and where it returns -ENOMEM instead: doc/out-of-memory.md. */
#ifndef ETWTOP_UTIL_XALLOC_H
#define ETWTOP_UTIL_XALLOC_H

#include <stddef.h>

/* malloc, calloc, realloc and strdup that abort instead of returning NULL. A size of 0 still
   returns a pointer that free accepts. */
void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t size);
char *xstrdup(const char *s);

#endif
