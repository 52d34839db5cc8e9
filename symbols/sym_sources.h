/* SPDX-License-Identifier: MIT */
/* sym_sources.h (internal): the symbol sources other than ELF files, each filling a sym_table
   for one module, run on the loader thread. Each returns 0, or -errno with a note that says
   what is missing and what to do. */
#ifndef ETWTOP_SYMBOLS_SYM_SOURCES_H
#define ETWTOP_SYMBOLS_SYM_SOURCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sym_table;

struct sym_path;
struct pdb_lines;

/* What identifies a Windows image and its PDB, as the trace recorded them. */
struct sym_pe_request {
        const char *path;         /* the image as recorded (an NT path) */
        uint32_t time_date_stamp; /* with image_size: the image file; 0 unknown */
        uint32_t image_size;
        bool has_pdb; /* a DbgID_RSDS event named its PDB: the three below */
        const uint8_t *pdb_guid;
        uint32_t pdb_age;
        const char *pdb_name; /* as recorded: often a build machine's path */
        bool is_no_demangle;  /* public names as stored (decorated) */
        struct sym_path *sym_path;
};

/* A Windows image's functions, as RVAs: from its PDB when the trace named one and the path
   holds (or a server gives) the one with that GUID and age: procedures with their sizes,
   publics undecorated (pdb_name_undecorate), and the line tables into *lines (NULL when it has
   none); else from the image file's export table (the file with the recorded TimeDateStamp and
   SizeOfImage). A PDB of another build is refused, and the note says so. Returns 0 with
   *table, or -errno with a note that says what was looked for where, and what is shown. */
int sym_pe_symbols_load(const struct sym_pe_request *rq, struct sym_table **table,
                        struct pdb_lines **lines, char *file_used, size_t file_size, char *note,
                        size_t note_size);

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
