/* SPDX-License-Identifier: MIT */
/* elf_module.h (internal): one ELF image's function table, load segments and debug information,
   read through libdwfl with the image placed at bias 0, so that every address is a file virtual
   address and one table serves every process that maps the image. */
#ifndef ETWTOP_SYMBOLS_ELF_MODULE_H
#define ETWTOP_SYMBOLS_ELF_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sym_table;

#define ELF_MODULE_MAX_SEGMENTS 16

struct elf_segment {
        uint64_t offset; /* p_offset */
        uint64_t vaddr;  /* p_vaddr */
        uint64_t filesz;
        uint64_t memsz;
};

struct elf_module;

struct elf_load_request {
        const char *path; /* as recorded */
        const uint8_t *build_id;
        uint32_t build_id_size;  /* 0: unknown, any file at the path will do */
        const char *const *dirs; /* the symbol path */
        uint32_t nr_dirs;
        int fd;              /* >= 0: read this (a memory file: the vdso) instead of a path */
        const char *fd_name; /* the name reported for fd */
};

/* Finds the file (symbol path by build-id, file name and full path; then the path itself; then
   the debug directories by build-id), checks its build-id against the recorded one, and reads
   its function symbols: .symtab of a separate debug file, else of the file, MiniDebugInfo,
   .dynsym. Returns 0, or -ENOENT (no file), -ESTALE (only files with another build-id),
   -EBADMSG (not a readable ELF), with a message in note. */
int elf_module_load(const struct elf_load_request *rq, struct elf_module **out, char *note,
                    size_t note_size);
void elf_module_free(struct elf_module *m);

const struct sym_table *elf_module_table(const struct elf_module *m);

/* Tests: true reads every symbol table through dwfl_module_getsym_info, the reader that the
   direct one (the table's section read in place, where libdwfl reads one table alone) must
   match entry for entry. */
extern bool elf_module_symbols_through_libdwfl;
/* Whether m's symbols were read directly (else through libdwfl). */
bool elf_module_symbols_were_direct(const struct elf_module *m);
const char *elf_module_file(const struct elf_module *m);
/* file offset -> file virtual address through the PT_LOAD that holds it. */
bool elf_module_vaddr(const struct elf_module *m, uint64_t file_offset, uint64_t *vaddr);

struct elf_srcframe {
        const char *function; /* borrowed from libdw: valid while the module lives; the linkage
                                 name where there is one (mangled) */
        const char *file;
        uint32_t line;
        uint32_t column;
};
/* Inline chain and source lines at vaddr, innermost first (see sym_srcline). Not thread-safe
   per module: the caller serializes. */
uint32_t elf_module_srcline(struct elf_module *m, uint64_t vaddr, struct elf_srcframe *out,
                            uint32_t max);
/* Tests: true reads elf_module_srcline's innermost row through libdwfl's dwfl_module_getsrc
   and its inlined instances' call files through libdw's dwarf_getsrcfiles, the answers that
   elf_lines.c's (file, line, column and file names) must equal. */
extern bool elf_module_srcline_through_libdwfl;
/* Whether m has DWARF debug information (libdwfl found it, in the file or a debug file): none,
   and no address of it has a source line (elf_module_srcline, elf_module_line give none). */
bool elf_module_has_dwarf(struct elf_module *m);
/* The source line at vaddr from the line table only (elf_module_srcline's innermost file and
   line, without reading the scopes): false where there is none, or line 0. */
bool elf_module_line(struct elf_module *m, uint64_t vaddr, const char **file, uint32_t *line);

#endif
