/* SPDX-License-Identifier: MIT */
/* elf_scopes.h: an index of a module's DWARF scopes by address (elf_scopes.c). */
#ifndef ETWTOP_SYMBOLS_ELF_SCOPES_H
#define ETWTOP_SYMBOLS_ELF_SCOPES_H

#include <elfutils/libdw.h>
#include <stdint.h>

/* DIEs kept per module, and the deepest path a walk follows (64 levels below the unit) */
#define ELF_SCOPES_MAX_NODES  (1u << 18) /* and as many ranges: about 20 MB at most */
#define ELF_SCOPES_MAX_RANGES 4096       /* of one DIE */
#define ELF_SCOPES_MAX_PATH   72

struct elf_scopes;

struct elf_scopes *elf_scopes_new(void);
void elf_scopes_free(struct elf_scopes *x);

/* The innermost subprogram or inlined subroutine at pc (the unit's own address) that a walk
   from cu finds, descending at each level into the first child whose ranges hold pc, at most
   max_depth + 1 levels down and examining at most budget children in all; then what
   dwarf_getscopes_die gives for it: it and its containers out to the unit, innermost first,
   written to scopes. Returns their number, 0 where dwarf_getscopes_die would not find it, -1
   when no such scope holds pc, -2 when the index does not answer (the caller walks: imported
   units on the way, or the index full). Not thread-safe. */
int elf_scopes_find(struct elf_scopes *x, Dwarf_Die *cu, Dwarf_Addr pc, uint32_t budget,
                    unsigned int max_depth, Dwarf_Die *scopes, int max_scopes);

#endif
