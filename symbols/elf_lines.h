/* SPDX-License-Identifier: MIT */
/* elf_lines.h: a module's DWARF line tables, read unit by unit as lookups reach them
   (elf_lines.c). */
#ifndef ETWTOP_SYMBOLS_ELF_LINES_H
#define ETWTOP_SYMBOLS_ELF_LINES_H

#include <elfutils/libdw.h>
#include <stdint.h>

#include "elf_units.h"

struct elf_lines;

/* The named section's data as libdw left it (inflated when it opened the file): the first of the
   name that libdw's open takes (bytes in the file, no section group's); NULL where there is none,
   or it is still compressed. */
Elf_Data *elf_debug_section(Elf *elf, size_t shstrndx, const char *name);

struct elf_lines *elf_lines_new(void);
void elf_lines_free(struct elf_lines *x);

/* The line-table row at pc (the unit's own address) of the unit cu: what libdwfl's
   dwfl_module_getsrc and dwfl_lineinfo answer for it (the last row at or below pc in address
   order, none where that ends a sequence or is the unit's last), read without libdw's line
   reader (a heap block per row and a sort of them all). Returns 1 with *file (valid while x
   lives), *line and, where column is not NULL, *column set, 0 where there is no row (or, column
   NULL, no file: libdw then gives a line without a file), -1 where this reader does not answer
   (a form, opcode or value it leaves to libdw): the caller asks libdw. Not thread-safe. */
int elf_lines_find(struct elf_lines *x, Dwarf_Die *cu, Dwarf_Addr pc, const char **file, int *line,
                   int *column);

/* elf_lines_find for the unit whose header is at cu_offset and DIE at die_offset in elf, the
   file of its DWARF, its DIE's attributes read by elf_units.c (once: the same unit as
   elf_lines_find's, by its DIE's offset). As elf_lines_find's, and -2 where elf_units.c does not
   read the unit's DIE: the caller asks libdw for it (elf_lines_find). */
int elf_lines_find_unit(struct elf_lines *x, Elf *elf, const struct elf_units *units,
                        uint64_t cu_offset, uint64_t die_offset, Dwarf_Addr pc, const char **file,
                        int *line, int *column);

/* The name of file index of the unit cu's line program (DW_AT_call_file's), as libdw's
   dwarf_getsrcfiles and dwarf_filesrc give it, from the table elf_lines_find reads. Returns 1
   with *file set (valid while x lives), 0 where the program has no such file, -1 where this
   reader does not read the unit: the caller asks libdw. Not thread-safe. */
int elf_lines_file(struct elf_lines *x, Dwarf_Die *cu, uint64_t index, const char **file);

#endif
