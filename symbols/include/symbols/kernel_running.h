/* SPDX-License-Identifier: MIT */
/* kernel_running.h: a recording's kernel symbols taken from the running kernel, when it is the
   kernel the recording was made on, or from perf's build-id cache (a recording cut short, or a
   perf.data, has none of its own). */
#ifndef ETWTOP_SYMBOLS_KERNEL_RUNNING_H
#define ETWTOP_SYMBOLS_KERNEL_RUNNING_H

#include <stdint.h>

#include "symbols/symbols.h"

/* When the running kernel's build-id (notes_path, NULL: /sys/kernel/notes) is build_id: its
   text symbols (kallsyms_path, NULL: /proc/kallsyms) go to the store as the recording's kernel
   symbols (sym_kernel_symbol), each with its module. Returns how many; 0 when the build-ids
   differ or build_id_size is 0; -errno when the notes or the symbols cannot be read (-EPERM:
   kptr_restrict hides the addresses). */
int sym_kernel_running(struct sym_store *s, const uint8_t *build_id, uint32_t build_id_size,
                       const char *notes_path, const char *kallsyms_path);

/* The kernel whose build-id is build_id, as perf record keeps its symbols in its build-id cache
   ($PERF_BUILDID_DIR, else ~/.debug: [kernel.kallsyms]/HEX/kallsyms, a copy of that boot's
   /proc/kallsyms): its text symbols go to the store as sym_kernel_running's do, for a recording
   of another kernel or another boot, as perf report names its frames. Returns how many; 0 where
   the cache holds no regular file of that kernel; -errno where it cannot be read. */
int sym_kernel_cached(struct sym_store *s, const uint8_t *build_id, uint32_t build_id_size);

#endif
