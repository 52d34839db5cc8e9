/* SPDX-License-Identifier: MIT */
/* elf_units.c: owns finding a module's compile unit by address from its .debug_aranges as
   libdwfl does, and reading a DWARF 5 compile unit DIE's line program attributes, without
   libdw: libdw's aranges look up every unit (a search tree and an allocation each: 7.6 M
   instructions for libc and ld.so), its first attribute read parses the unit's abbreviations. */
#include "elf_units.h"
#include "dwarf_read.h"
#include "elf_lines.h"

#include "util/xalloc.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdlib.h>
#include <string.h>

struct arange {
        uint64_t addr, length;
        uint64_t cu_offset, die_offset;
        uint32_t order; /* in the section: ties keep it (libdw's qsort is glibc's merge sort) */
};

struct elf_units {
        struct arange *ranges; /* owned, sorted by address */
        uint32_t nr_ranges;
        uint32_t *runs; /* owned: the first range of each run of one unit (libdwfl's) */
        uint32_t nr_runs;
        const uint8_t *info, *abbrev; /* borrowed: the file's sections */
        size_t info_size, abbrev_size;
        const char *str, *line_str;
        size_t str_size, line_str_size;
        bool is_exact; /* from the units' own ranges (elf_units_from_dies): an address in none
                          of them is in no unit */
};

/* a section's data with its bytes (elf_lines.c's lookup): NULL where it has none */
static const Elf_Data *section(Elf *elf, size_t shstrndx, const char *name)
{
        const Elf_Data *d = elf_debug_section(elf, shstrndx, name);
        return d && d->d_buf ? d : NULL;
}

/* A unit header at off of .debug_info: its end and its DIE's offset. false: not one (libdw's
   walk through the units would fail there). */
static bool unit_header(const struct elf_units *u, uint64_t off, uint64_t *end, uint64_t *die)
{
        if (off >= u->info_size)
                return false;
        struct dwarf_rd r = {u->info + off, u->info + u->info_size, false};
        unsigned int os;
        uint64_t len = rd_initial_length(&r, &os);
        if (r.is_bad || len > (uint64_t)(r.end - r.p) || len < 2)
                return false;
        const uint8_t *start = r.p;
        *end = (uint64_t)(r.p - u->info) + len;
        unsigned int version = (unsigned int)rd_fixed(&r, 2);
        size_t header;
        if (version >= 2 && version <= 4) {
                header = 2 + os + 1;
        } else if (version == 5) {
                unsigned int type = (unsigned int)rd_fixed(&r, 1);
                header = 2 + 1 + 1 + os;
                if (type == DW_UT_skeleton || type == DW_UT_split_compile)
                        header += 8;
                else if (type == DW_UT_type || type == DW_UT_split_type)
                        header += 8 + os;
                else if (type != DW_UT_compile && type != DW_UT_partial)
                        return false;
        } else {
                return false;
        }
        if (r.is_bad || header > len)
                return false;
        *die = (uint64_t)(start - u->info) + header;
        return true;
}

static int arange_cmp(const void *a, const void *b)
{
        const struct arange *x = a, *y = b;
        if (x->addr != y->addr)
                return x->addr < y->addr ? -1 : 1;
        return x->order < y->order ? -1 : x->order > y->order;
}

/* The ranges of .debug_aranges as dwarf_getaranges reads them (a set's tuples up to its (0, 0),
   the next set right after it); false where libdw would fail. */
static bool read_aranges(struct elf_units *u, const Elf_Data *d)
{
        struct dwarf_rd r = {d->d_buf, (const uint8_t *)d->d_buf + d->d_size, false};
        uint32_t cap = 0;
        /* the units' starts in order, to check a set's unit as libdw's lookup does */
        uint64_t last_unit = UINT64_MAX, last_die = 0;
        while (r.p < r.end) {
                const uint8_t *hdr = r.p;
                unsigned int lb;
                rd_initial_length(&r, &lb); /* a set ends at its (0, 0), as libdw reads it */
                if (r.is_bad || rd_fixed(&r, 2) != 2)
                        return false;
                uint64_t cu = rd_fixed(&r, lb);
                if (r.is_bad || (size_t)(r.end - r.p) < 2)
                        return false;
                unsigned int as = *r.p++, seg = *r.p++;
                if ((as != 4 && as != 8) || seg != 0)
                        return false;
                size_t pad = (2 * as - (size_t)(r.p - hdr) % (2 * as)) % (2 * as);
                if ((size_t)(r.end - r.p) < pad)
                        return false;
                r.p += pad;
                uint64_t die = last_die, end = 0;
                if (cu != last_unit) {
                        if (!unit_header(u, cu, &end, &die))
                                return false;
                        last_unit = cu;
                        last_die = die;
                }
                for (;;) {
                        uint64_t a = rd_fixed(&r, as), l = rd_fixed(&r, as);
                        if (r.is_bad)
                                return false;
                        if (a == 0 && l == 0)
                                break;
                        if (u->nr_ranges == cap) {
                                cap = cap ? cap * 2 : 1024;
                                u->ranges = xrealloc(u->ranges, cap * sizeof(*u->ranges));
                        }
                        u->ranges[u->nr_ranges] = (struct arange){a, l, cu, die, u->nr_ranges};
                        u->nr_ranges++;
                }
        }
        return true;
}

/* Whether every unit start named by the ranges is one that a walk of .debug_info's units from
   its start reaches (libdw's lookup of a unit interns the units before it in order, and fails
   on a broken header or an offset between units). */
static bool units_reachable(const struct elf_units *u)
{
        uint64_t max_die = 0;
        for (uint32_t i = 0; i < u->nr_ranges; i++)
                if (u->ranges[i].die_offset > max_die)
                        max_die = u->ranges[i].die_offset;
        uint32_t nr = 0, cap = 1024;
        uint64_t *dies = xmalloc(cap * sizeof(*dies));
        for (uint64_t off = 0, end, die; off < u->info_size;) {
                if (!unit_header(u, off, &end, &die) || die > max_die)
                        break;
                if (nr == cap) {
                        cap *= 2;
                        dies = xrealloc(dies, cap * sizeof(*dies));
                }
                dies[nr++] = die;
                off = end;
        }
        bool ok = true;
        /* the units met in order are ascending: a binary search for each range's */
        for (uint32_t i = 0; i < u->nr_ranges && ok; i++) {
                uint64_t want = u->ranges[i].die_offset;
                uint32_t lo = 0, hi = nr;
                while (lo < hi) {
                        uint32_t mid = lo + (hi - lo) / 2;
                        if (dies[mid] < want)
                                lo = mid + 1;
                        else
                                hi = mid;
                }
                ok = lo < nr && dies[lo] == want;
        }
        free(dies);
        return ok;
}

/* The units of elf with their sections, no ranges yet, and its .debug_aranges in *aranges; NULL
   where elf has no .debug_info or .debug_abbrev, or where it has .debug_aranges and !want_aranges
   (elf_units_from_dies' case) or none and want_aranges (elf_units_new's). */
static struct elf_units *units_of(Elf *elf, bool want_aranges, const Elf_Data **aranges)
{
        GElf_Ehdr eh;
        size_t shstrndx;
        if (!elf || !gelf_getehdr(elf, &eh) || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
            elf_getshdrstrndx(elf, &shstrndx) != 0)
                return NULL;
        const Elf_Data *info = section(elf, shstrndx, ".debug_info"),
                       *abbrev = section(elf, shstrndx, ".debug_abbrev"),
                       *str = section(elf, shstrndx, ".debug_str"),
                       *line_str = section(elf, shstrndx, ".debug_line_str");
        *aranges = section(elf, shstrndx, ".debug_aranges");
        if (!info || !abbrev || want_aranges != (*aranges != NULL))
                return NULL;
        struct elf_units *u = xcalloc(1, sizeof(*u));
        u->info = info->d_buf;
        u->info_size = info->d_size;
        u->abbrev = abbrev->d_buf;
        u->abbrev_size = abbrev->d_size;
        if (str) {
                u->str = str->d_buf;
                u->str_size = str->d_size;
        }
        if (line_str) {
                u->line_str = line_str->d_buf;
                u->line_str_size = line_str->d_size;
        }
        return u;
}

/* Sorts u's ranges and marks the runs of one unit; u freed and NULL where it has none. */
static struct elf_units *units_sorted(struct elf_units *u)
{
        if (!u->nr_ranges) {
                elf_units_free(u);
                return NULL;
        }
        qsort(u->ranges, u->nr_ranges, sizeof(*u->ranges), arange_cmp);
        u->runs = xmalloc(u->nr_ranges * sizeof(*u->runs));
        for (uint32_t i = 0; i < u->nr_ranges; i++)
                if (i == 0 || u->ranges[i].die_offset != u->ranges[i - 1].die_offset)
                        u->runs[u->nr_runs++] = i;
        return u;
}

struct elf_units *elf_units_new(Elf *elf)
{
        const Elf_Data *ar = NULL;
        struct elf_units *u = units_of(elf, true, &ar);
        if (u && (!read_aranges(u, ar) || !u->nr_ranges || !units_reachable(u))) {
                elf_units_free(u);
                return NULL;
        }
        return u ? units_sorted(u) : NULL;
}

struct elf_units *elf_units_from_dies(Dwarf *dw)
{
        const Elf_Data *ar = NULL;
        struct elf_units *u = units_of(dw ? dwarf_getelf(dw) : NULL, false, &ar);
        if (!u)
                return NULL;
        u->is_exact = true;
        uint32_t cap = 0;
        Dwarf_Off off = 0, next;
        size_t header_size;
        while (dwarf_next_unit(dw, off, &next, &header_size, NULL, NULL, NULL, NULL, NULL, NULL) ==
               0) {
                Dwarf_Die die;
                /* a split unit's skeleton (-gsplit-dwarf) holds its ranges and its line table */
                int tag = dwarf_offdie(dw, off + header_size, &die) ? dwarf_tag(&die) : -1;
                if (tag == DW_TAG_compile_unit || tag == DW_TAG_skeleton_unit) {
                        Dwarf_Addr base, lo, hi;
                        for (ptrdiff_t at = 0;
                             (at = dwarf_ranges(&die, at, &base, &lo, &hi)) > 0;) {
                                if (hi <= lo)
                                        continue;
                                if (u->nr_ranges == cap) {
                                        cap = cap ? cap * 2 : 64;
                                        u->ranges = xrealloc(u->ranges, cap * sizeof(*u->ranges));
                                }
                                u->ranges[u->nr_ranges] = (struct arange){
                                        lo, hi - lo, off, off + header_size, u->nr_ranges};
                                u->nr_ranges++;
                        }
                }
                off = next;
        }
        return units_sorted(u);
}

void elf_units_free(struct elf_units *u)
{
        if (!u)
                return;
        free(u->ranges);
        free(u->runs);
        free(u);
}

int elf_units_find(const struct elf_units *u, uint64_t addr, uint64_t *cu_offset,
                   uint64_t *die_offset)
{
        if (u->is_exact) {
                /* the last range that starts at addr or before, if it holds addr */
                size_t l = 0, h = u->nr_ranges;
                while (l < h) {
                        size_t mid = l + (h - l) / 2;
                        if (u->ranges[mid].addr <= addr)
                                l = mid + 1;
                        else
                                h = mid;
                }
                if (!l || addr - u->ranges[l - 1].addr >= u->ranges[l - 1].length)
                        return 0;
                *cu_offset = u->ranges[l - 1].cu_offset;
                *die_offset = u->ranges[l - 1].die_offset;
                return 1;
        }
        /* libdwfl's addrarange, step for step */
        size_t l = 0, h = u->nr_runs;
        while (l < h) {
                size_t idx = (l + h) / 2;
                uint64_t start = u->ranges[u->runs[idx]].addr;
                if (addr < start) {
                        h = idx;
                        continue;
                } else if (addr > start) {
                        if (idx + 1 < u->nr_runs) {
                                if (addr >= u->ranges[u->runs[idx + 1]].addr) {
                                        l = idx + 1;
                                        continue;
                                }
                        } else {
                                const struct arange *last = &u->ranges[u->nr_ranges - 1];
                                if (addr > last->addr + last->length)
                                        break;
                        }
                }
                *cu_offset = u->ranges[u->runs[idx]].cu_offset;
                *die_offset = u->ranges[u->runs[idx]].die_offset;
                return 1;
        }
        return 0;
}

/* The abbreviation declaration of code in the table at off: r at its attribute specs. */
static bool find_abbrev(const struct elf_units *u, uint64_t off, uint64_t code, uint64_t *tag,
                        struct dwarf_rd *specs)
{
        if (off >= u->abbrev_size)
                return false;
        struct dwarf_rd r = {u->abbrev + off, u->abbrev + u->abbrev_size, false};
        for (;;) {
                uint64_t c = rd_uleb(&r);
                if (r.is_bad || c == 0)
                        return false;
                uint64_t t = rd_uleb(&r);
                if (r.p >= r.end)
                        return false;
                r.p++; /* children */
                if (c == code) {
                        *tag = t;
                        *specs = r;
                        return !r.is_bad;
                }
                for (;;) {
                        uint64_t name = rd_uleb(&r), form = rd_uleb(&r);
                        if (r.is_bad)
                                return false;
                        if (form == DW_FORM_implicit_const)
                                rd_uleb(&r); /* its value, signed: skipped alike */
                        if (name == 0 && form == 0)
                                break;
                }
        }
}

static const char *string_at(const char *base, size_t size, uint64_t off)
{
        if (!base || off >= size)
                return NULL;
        return memchr(base + off, 0, size - off) ? base + off : NULL;
}

int elf_units_info(const struct elf_units *u, uint64_t cu_offset, struct elf_unit_info *out)
{
        /* the unit's header: a DWARF 5 compile unit's only */
        uint64_t off = cu_offset, end, die_offset;
        if (!unit_header(u, off, &end, &die_offset))
                return -1;
        (void)end;
        struct dwarf_rd r = {u->info + off, u->info + u->info_size, false};
        unsigned int os;
        uint64_t len = rd_initial_length(&r, &os);
        const uint8_t *unit_end = r.p + len;
        if (r.is_bad || len > (uint64_t)(r.end - r.p) || rd_fixed(&r, 2) != 5 ||
            rd_fixed(&r, 1) != DW_UT_compile)
                return -1;
        unsigned int as = (unsigned int)rd_fixed(&r, 1);
        uint64_t abbrev_off = rd_fixed(&r, os);
        if (r.is_bad || (as != 4 && as != 8) || (uint64_t)(r.p - u->info) != die_offset)
                return -1;
        r.end = unit_end;
        uint64_t code = rd_uleb(&r), tag;
        struct dwarf_rd spec;
        if (r.is_bad || !code || !find_abbrev(u, abbrev_off, code, &tag, &spec) ||
            tag != DW_TAG_compile_unit)
                return -1;
        bool has_stmt = false;
        *out = (struct elf_unit_info){.die_offset = die_offset, .addr_size = (uint8_t)as};
        for (;;) {
                uint64_t name = rd_uleb(&spec), form = rd_uleb(&spec);
                if (spec.is_bad)
                        return -1;
                if (name == 0 && form == 0)
                        break;
                uint64_t v = 0;
                const char *s = NULL;
                switch (form) {
                case DW_FORM_addr: v = rd_fixed(&r, as); break;
                case DW_FORM_data1:
                case DW_FORM_ref1:
                case DW_FORM_flag:
                case DW_FORM_strx1:
                case DW_FORM_addrx1: v = rd_fixed(&r, 1); break;
                case DW_FORM_data2:
                case DW_FORM_ref2:
                case DW_FORM_strx2:
                case DW_FORM_addrx2: v = rd_fixed(&r, 2); break;
                case DW_FORM_strx3:
                case DW_FORM_addrx3: v = rd_fixed(&r, 3); break;
                case DW_FORM_data4:
                case DW_FORM_ref4:
                case DW_FORM_strx4:
                case DW_FORM_addrx4: v = rd_fixed(&r, 4); break;
                case DW_FORM_data8:
                case DW_FORM_ref8:
                case DW_FORM_ref_sig8: v = rd_fixed(&r, 8); break;
                case DW_FORM_data16: rd_skip(&r, 16); break;
                case DW_FORM_sdata:
                case DW_FORM_udata:
                case DW_FORM_ref_udata:
                case DW_FORM_strx:
                case DW_FORM_addrx:
                case DW_FORM_loclistx:
                case DW_FORM_rnglistx: v = rd_uleb(&r); break;
                case DW_FORM_sec_offset:
                case DW_FORM_ref_addr: v = rd_fixed(&r, os); break;
                case DW_FORM_strp:
                        v = rd_fixed(&r, os);
                        s = string_at(u->str, u->str_size, v);
                        break;
                case DW_FORM_line_strp:
                        v = rd_fixed(&r, os);
                        s = string_at(u->line_str, u->line_str_size, v);
                        break;
                case DW_FORM_string: {
                        const uint8_t *z =
                                r.p < r.end ? memchr(r.p, 0, (size_t)(r.end - r.p)) : NULL;
                        if (!z)
                                return -1;
                        s = (const char *)r.p;
                        r.p = z + 1;
                        break;
                }
                case DW_FORM_flag_present: break;
                case DW_FORM_implicit_const: rd_uleb(&spec); break;
                case DW_FORM_exprloc:
                case DW_FORM_block: {
                        uint64_t n = rd_uleb(&r);
                        if (r.is_bad || n > (uint64_t)(r.end - r.p))
                                return -1;
                        r.p += n;
                        break;
                }
                case DW_FORM_block1: {
                        uint64_t n = rd_fixed(&r, 1);
                        if (r.is_bad || n > (uint64_t)(r.end - r.p))
                                return -1;
                        r.p += n;
                        break;
                }
                default: return -1; /* block2/4, indirect, GNU forms: libdw */
                }
                if (r.is_bad)
                        return -1;
                if (name == DW_AT_stmt_list) {
                        /* what dwarf_formudata gives for it in a DWARF 5 unit */
                        if (form != DW_FORM_sec_offset && form != DW_FORM_data4 &&
                            form != DW_FORM_data8)
                                return -1;
                        out->stmt_list = v;
                        has_stmt = true;
                } else if (name == DW_AT_comp_dir) {
                        if (form != DW_FORM_strp && form != DW_FORM_line_strp &&
                            form != DW_FORM_string)
                                return -1;
                        if (!s)
                                return -1;
                        out->comp_dir = s;
                }
        }
        return has_stmt ? 1 : -1;
}
