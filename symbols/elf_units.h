/* SPDX-License-Identifier: MIT */
/* elf_units.h: a module's DWARF 5 compile units found by address from .debug_aranges, and the
   line program attributes of their unit DIEs, read without libdw (elf_units.c). */
#ifndef ETWTOP_SYMBOLS_ELF_UNITS_H
#define ETWTOP_SYMBOLS_ELF_UNITS_H

#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>

struct elf_units;

/* The unit DIE's attributes that a line program's reader needs. */
struct elf_unit_info {
        uint64_t die_offset;  /* in .debug_info, as libdw's dwarf_dieoffset gives it */
        uint64_t stmt_list;   /* DW_AT_stmt_list: the program's offset in .debug_line */
        const char *comp_dir; /* DW_AT_comp_dir, NULL: none (borrowed from the file's data) */
        uint8_t addr_size;
};

/* The units of elf, the file that libdw reads the DWARF of (its sections inflated already).
   NULL where it has no .debug_aranges, .debug_info or .debug_abbrev, or its .debug_aranges is
   not one this reader reads as libdw does: the caller asks libdwfl. */
struct elf_units *elf_units_new(Elf *elf);

/* Where a file has no .debug_aranges (clang's default leaves them out, and libdwfl of elfutils
   0.188 then finds no unit at any address): its compile units' own ranges (DW_AT_low_pc and
   DW_AT_high_pc, DW_AT_ranges: libdw's dwarf_ranges), each address in the unit whose ranges
   hold it and in none outside them (a split unit's skeleton's too). NULL where the file has
   .debug_aranges (elf_units_new and libdwfl read those) or no unit with a range. */
struct elf_units *elf_units_from_dies(Dwarf *dw);
void elf_units_free(struct elf_units *u);

/* The unit that libdwfl's dwfl_module_addrdie finds at addr (the DWARF's own address: the
   module's less libdwfl's bias): its DIE's offset, found as libdwfl's addrarange finds it
   (runs of one unit, a gap counted to the run before it, the last range's end included).
   Returns 1 with *cu_offset (its header's) and *die_offset set, 0 where libdwfl finds none. */
int elf_units_find(const struct elf_units *u, uint64_t addr, uint64_t *cu_offset,
                   uint64_t *die_offset);

/* The attributes of the unit whose header is at cu_offset: 1 with *out set, -1 where this
   reader does not read that unit as libdw does (not a DWARF 5 compile unit, a form it leaves to
   libdw, no DW_AT_stmt_list): the caller asks libdw. */
int elf_units_info(const struct elf_units *u, uint64_t cu_offset, struct elf_unit_info *out);

#endif
