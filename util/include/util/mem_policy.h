/* SPDX-License-Identifier: MIT */
/* mem_policy.h: the allocator's settings of a process that runs for hours (the screen, and the
   session host it starts): its memory follows what it holds, not its history of frees; and of
   one that reads a recording to text and exits (--replay -b): its memory is used again. */
#ifndef ETWTOP_UTIL_MEM_POLICY_H
#define ETWTOP_UTIL_MEM_POLICY_H

#include <stddef.h>

/* Blocks of this size or more are mappings of their own, given back to the system when freed:
   under the model's huge-page tables (model_util.h's 2 MiB), so that none of them is carved
   from the heap. */
#define MEM_POLICY_MMAP_MIN ((size_t)1 << 20)

/* A long run's heap keeps up to this many free bytes: free() gives its top back past it, and
   mem_policy_trim gives the free pages inside it back only from here on. Given back at every
   refresh, a screen's 1 to 2 MiB of free heap (its refresh's work arrays, freed and made again)
   were faulted in again by the next refresh: 130 page faults and a madvise call a few seconds,
   a page fault dear on a virtual machine. */
#define MEM_POLICY_TRIM_MIN ((size_t)8 << 20)

/* Sets it for this process (and the processes it forks after): before the first large block.
   0, or -ENOTSUP where the allocator takes no such setting (not glibc, a sanitizer's). */
int mem_policy_long_run(void);

/* The heap's free pages given back to the system when MEM_POLICY_TRIM_MIN bytes or more of it
   are free (a churn's frees, in a long run). 1 when it gave them back, 0 when less was free,
   -ENOTSUP where the allocator has no such call (not glibc). */
int mem_policy_trim(void);

/* Blocks under this size come from the heap in a short run: glibc's most (half of a thread's
   heap), past the tables a replay grows by doubling. */
#define MEM_POLICY_SHORT_MMAP_MIN ((size_t)32 << 20)

/* Sets it for this process, before the first large block and the first thread: no block freed
   at the heap's top is given back, kept for the next one, and large ones come from the heap.
   For a run that ends once its work is done: its memory is at most its peak. Fresh pages stay
   untouched until written (calloc does not zero what the system gave zeroed). 0, or -ENOTSUP
   where the allocator takes no such setting (not glibc, a sanitizer's). */
int mem_policy_short_run(void);

/* Faults in at once the pages wholly inside [p, p + len) of a private writable block that is
   about to be filled (MADV_POPULATE_WRITE, Linux 5.14): one call where the first write of each
   page would fault, a page fault dear on a virtual machine (12 us a page on the 2-CPU VM of
   bench/README.md against 1 to 4 us a page at once). Nothing where the kernel cannot. */
void mem_policy_populate(void *p, size_t len);

/* Gives back the pages wholly inside [p, p + len) of a private block whose bytes there are no
   longer read (MADV_DONTNEED: they read as zeros if touched again), the block itself kept until
   it is freed: a block's unused tail given back without a realloc that may move it. */
void mem_policy_release(void *p, size_t len);

#endif
