/* SPDX-License-Identifier: MIT */
/* sym_sources.h (internal): the symbol sources other than ELF files, each filling a sym_table
   for one module, run on the loader thread. Each returns 0, or -errno with a note that says
   what is missing and what to do. */
#ifndef ETWTOP_SYMBOLS_SYM_SOURCES_H
#define ETWTOP_SYMBOLS_SYM_SOURCES_H

#include <stddef.h>
#include <stdint.h>

struct sym_table;

/* A Windows image's export table, from the file of that name on the symbol path; a file whose
   TimeDateStamp or SizeOfImage differ from the recorded ones (when known, not 0) is refused. */
int sym_pe_load(const char *path, uint32_t time_date_stamp, uint32_t image_size,
                const char *const *dirs, uint32_t nr_dirs, struct sym_table **out, char *file_used,
                size_t file_size, char *note, size_t note_size);

/* /tmp/perf-PID.map (absolute addresses). */
int sym_jit_load(uint32_t pid, struct sym_table **out, char *file_used, size_t file_size,
                 char *note, size_t note_size);

/* The running kernel: /proc/kallsyms (absolute addresses, module names per symbol). */
struct kallsyms;
int sym_kallsyms_load(struct kallsyms **out, char *file_used, size_t file_size, char *note,
                      size_t note_size);

/* A memory file holding this process's vdso image, or -1. The caller closes it. */
int sym_vdso_memfd(void);

#endif
