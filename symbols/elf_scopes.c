/* SPDX-License-Identifier: MIT */
/* elf_scopes.c: owns an index of a module's DWARF scopes (the DIEs with code ranges, by
   compile unit, built level by level as lookups reach them) that finds the innermost scope at
   an address and its containers, the answer elf_module_srcline's walk and dwarf_getscopes_die
   give, without reading a unit's DIEs again for every address. */
#include "elf_scopes.h"

#include "util/xalloc.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

/* A DIE with code ranges, or a unit's root. Its children with code ranges are nodes
   [first_child, first_child + nr_child_pc), in their order, each knowing its position among
   all of the parent's children (which the walk's budget counts). */
struct scope_node {
        Dwarf_Die die;
        uint32_t parent; /* UINT32_MAX: the unit's root */
        uint32_t ordinal;
        uint32_t first_child, nr_child_pc, nr_children;
        uint32_t first_range, nr_ranges;
        int tag;
        uint8_t state; /* SN_* */
};

enum { SN_UNBUILT, SN_BUILT, SN_WALK /* imported units below: the caller walks */ };

struct scope_range {
        Dwarf_Addr begin, end;
};

struct elf_scopes {
        struct scope_node *nodes;
        uint32_t nr_nodes, cap_nodes;
        struct scope_range *ranges;
        uint32_t nr_ranges, cap_ranges;
        struct {
                void *addr; /* the unit DIE's */
                uint32_t root;
        } * units;
        uint32_t units_mask, nr_units;
};

struct elf_scopes *elf_scopes_new(void)
{
        struct elf_scopes *x = xcalloc(1, sizeof(*x));
        x->units_mask = 63;
        x->units = xcalloc(x->units_mask + 1, sizeof(*x->units));
        return x;
}

void elf_scopes_free(struct elf_scopes *x)
{
        if (!x)
                return;
        free(x->nodes);
        free(x->ranges);
        free(x->units);
        free(x);
}

static uint32_t node_add(struct elf_scopes *x)
{
        if (x->nr_nodes == x->cap_nodes) {
                x->cap_nodes = x->cap_nodes ? x->cap_nodes * 2 : 1024;
                x->nodes = xrealloc(x->nodes, x->cap_nodes * sizeof(*x->nodes));
        }
        memset(&x->nodes[x->nr_nodes], 0, sizeof(*x->nodes));
        return x->nr_nodes++;
}

static void range_add(struct elf_scopes *x, Dwarf_Addr begin, Dwarf_Addr end)
{
        if (x->nr_ranges == x->cap_ranges) {
                x->cap_ranges = x->cap_ranges ? x->cap_ranges * 2 : 1024;
                x->ranges = xrealloc(x->ranges, x->cap_ranges * sizeof(*x->ranges));
        }
        x->ranges[x->nr_ranges++] = (struct scope_range){begin, end};
}

static uint64_t addr_hash(const void *p)
{
        uint64_t v = (uint64_t)(uintptr_t)p;
        v ^= v >> 33;
        v *= 0xff51afd7ed558ccdull;
        v ^= v >> 33;
        return v;
}

/* The root node of cu's unit, made on first use. */
static uint32_t unit_root(struct elf_scopes *x, Dwarf_Die *cu)
{
        uint32_t j = (uint32_t)addr_hash(cu->addr) & x->units_mask;
        for (; x->units[j].addr; j = (j + 1) & x->units_mask)
                if (x->units[j].addr == cu->addr)
                        return x->units[j].root;
        uint32_t root = node_add(x);
        x->nodes[root].die = *cu;
        x->nodes[root].parent = UINT32_MAX;
        x->nodes[root].tag = dwarf_tag(cu);
        x->units[j].addr = cu->addr;
        x->units[j].root = root;
        if (++x->nr_units * 2 > x->units_mask + 1) {
                __typeof__(x->units) old = x->units;
                uint32_t old_cap = x->units_mask + 1;
                x->units_mask = old_cap * 2 - 1;
                x->units = xcalloc(old_cap * 2, sizeof(*x->units));
                for (uint32_t i = 0; i < old_cap; i++) {
                        if (!old[i].addr)
                                continue;
                        uint32_t k = (uint32_t)addr_hash(old[i].addr) & x->units_mask;
                        while (x->units[k].addr)
                                k = (k + 1) & x->units_mask;
                        x->units[k] = old[i];
                }
                free(old);
        }
        return root;
}

/* Reads node n's children once: those with code ranges become nodes, with their ranges (as
   dwarf_haspc reads them: the ranges up to the first error); an imported unit among them sends
   every walk through n back to the caller. */
static void node_build(struct elf_scopes *x, uint32_t n)
{
        Dwarf_Die parent = x->nodes[n].die, child;
        uint32_t first = x->nr_nodes, nr_pc = 0, nr = 0;
        uint8_t state = SN_BUILT;
        if (dwarf_child(&parent, &child) == 0) {
                do {
                        if (x->nr_nodes >= ELF_SCOPES_MAX_NODES ||
                            x->nr_ranges >= ELF_SCOPES_MAX_NODES) {
                                state = SN_WALK; /* the index is full: the caller walks */
                                break;
                        }
                        uint32_t ordinal = nr++;
                        int tag = dwarf_tag(&child);
                        if (tag == DW_TAG_imported_unit) {
                                state = SN_WALK;
                                continue;
                        }
                        uint32_t first_range = x->nr_ranges;
                        Dwarf_Addr base, begin, end;
                        ptrdiff_t off = 0;
                        while ((off = dwarf_ranges(&child, off, &base, &begin, &end)) > 0 &&
                               x->nr_ranges - first_range < ELF_SCOPES_MAX_RANGES)
                                range_add(x, begin, end);
                        if (off > 0) {
                                state = SN_WALK; /* more ranges than kept */
                                x->nr_ranges = first_range;
                                break;
                        }
                        if (x->nr_ranges == first_range)
                                continue;
                        uint32_t c = node_add(x);
                        x->nodes[c].die = child;
                        x->nodes[c].parent = n;
                        x->nodes[c].ordinal = ordinal;
                        x->nodes[c].tag = tag;
                        x->nodes[c].first_range = first_range;
                        x->nodes[c].nr_ranges = x->nr_ranges - first_range;
                        nr_pc++;
                } while (dwarf_siblingof(&child, &child) == 0);
        }
        struct scope_node *p = &x->nodes[n];
        p->first_child = first;
        p->nr_child_pc = nr_pc;
        p->nr_children = nr;
        p->state = state;
}

static bool node_has_pc(const struct elf_scopes *x, const struct scope_node *c, Dwarf_Addr pc)
{
        for (uint32_t r = 0; r < c->nr_ranges; r++) {
                const struct scope_range *g = &x->ranges[c->first_range + r];
                if (pc >= g->begin && pc < g->end)
                        return true;
        }
        return false;
}

/* The tags dwarf_getscopes_die descends through (libdw's may_have_scopes): a DIE below any
   other is not found there. */
static bool may_have_scopes(int tag)
{
        switch (tag) {
        case DW_TAG_compile_unit:
        case DW_TAG_module:
        case DW_TAG_lexical_block:
        case DW_TAG_with_stmt:
        case DW_TAG_catch_block:
        case DW_TAG_try_block:
        case DW_TAG_entry_point:
        case DW_TAG_inlined_subroutine:
        case DW_TAG_subprogram:
        case DW_TAG_namespace:
        case DW_TAG_class_type:
        case DW_TAG_structure_type: return true;
        default: return false;
        }
}

int elf_scopes_find(struct elf_scopes *x, Dwarf_Die *cu, Dwarf_Addr pc, uint32_t budget,
                    unsigned int max_depth, Dwarf_Die *scopes, int max_scopes)
{
        if (x->nr_nodes >= ELF_SCOPES_MAX_NODES)
                return -2;
        uint32_t path[ELF_SCOPES_MAX_PATH];
        uint32_t nr_path = 0, n = unit_root(x, cu);
        int inner = -1; /* in path */
        path[nr_path++] = n;
        for (unsigned int depth = 0; depth <= max_depth; depth++) {
                if (x->nodes[n].state == SN_UNBUILT)
                        node_build(x, n);
                const struct scope_node *p = &x->nodes[n];
                if (p->state == SN_WALK)
                        return -2;
                uint32_t c = UINT32_MAX;
                for (uint32_t i = 0; i < p->nr_child_pc && c == UINT32_MAX; i++)
                        if (node_has_pc(x, &x->nodes[p->first_child + i], pc))
                                c = p->first_child + i;
                if (c == UINT32_MAX || budget <= x->nodes[c].ordinal)
                        break; /* no child holds pc (or the budget ends before it) */
                budget -= x->nodes[c].ordinal + 1;
                if (nr_path == ELF_SCOPES_MAX_PATH)
                        return -2;
                path[nr_path++] = c;
                if (x->nodes[c].tag == DW_TAG_subprogram ||
                    x->nodes[c].tag == DW_TAG_inlined_subroutine)
                        inner = (int)nr_path - 1;
                n = c;
        }
        if (inner < 0)
                return -1;
        /* dwarf_getscopes_die(inner): inner and its containers out to the unit, when libdw's
           walk reaches inner */
        for (int i = 1; i < inner; i++)
                if (!may_have_scopes(x->nodes[path[i]].tag))
                        return 0;
        if (inner + 1 > max_scopes)
                return -2;
        for (int i = 0; i <= inner; i++)
                scopes[i] = x->nodes[path[inner - i]].die;
        return inner + 1;
}
