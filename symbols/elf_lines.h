/* SPDX-License-Identifier: MIT */
/* elf_lines.h: a module's DWARF line tables, read unit by unit as lookups reach them
   (elf_lines.c). */
#ifndef ETWTOP_SYMBOLS_ELF_LINES_H
#define ETWTOP_SYMBOLS_ELF_LINES_H

#include <elfutils/libdw.h>
#include <stdint.h>

struct elf_lines;

struct elf_lines *elf_lines_new(void);
void elf_lines_free(struct elf_lines *x);

/* The line-table row at pc (the unit's own address) of the unit cu: what libdwfl's
   dwfl_module_getsrc and dwfl_lineinfo answer for it (the last row at or below pc in address
   order, none where that ends a sequence or is the unit's last), read without libdw's line
   reader (a heap block per row and a sort of them all). Returns 1 with *file (valid while x
   lives) and *line set, 0 where there is no row, -1 where this reader does not answer
   (a form, opcode or value it leaves to libdw): the caller asks libdw. Not thread-safe. */
int elf_lines_find(struct elf_lines *x, Dwarf_Die *cu, Dwarf_Addr pc, const char **file, int *line);

#endif
