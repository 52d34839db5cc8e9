/* SPDX-License-Identifier: MIT */
/* elf_lines.c: owns reading a unit's .debug_line program into one address-ordered array of rows
   and answering an address from it as libdwfl does; what it does not read the same way as
   libdw 0.188 it leaves to libdw. */
#include "elf_lines.h"
#include "dwarf_read.h"

#include "util/xalloc.h"

#include <dwarf.h>
#include <gelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* A row of a line table: 16 bytes (the tables of a library's sampled units hold hundreds of
   thousands). */
struct row {
        uint64_t addr;
        int32_t line;
        uint16_t file_end; /* file << 1 | 1 at an end of sequence (a unit of more files: libdw) */
        uint16_t column;   /* libdw keeps 16 bits of it */
};

#define MAX_FILE ((1u << 15) - 1)

struct unit {
        Dwarf_Off off; /* the unit DIE's offset */
        bool is_used;
        bool is_read; /* rows and files hold its table; else libdw answers */
        struct row *rows;
        uint32_t nr;
        char *names;       /* owned: the file names, one after the other */
        uint32_t *file_at; /* owned: file index -> offset in names */
        uint32_t nr_files;
};

struct elf_lines {
        struct unit *units; /* owned hash by off */
        uint32_t mask, nr;
        Elf *elf; /* the file the sections below are of */
        Elf_Data *line, *line_str, *str;
};

struct elf_lines *elf_lines_new(void)
{
        struct elf_lines *x = xcalloc(1, sizeof(*x));
        x->mask = 255;
        x->units = xcalloc(x->mask + 1, sizeof(*x->units));
        return x;
}

static void unit_clear(struct unit *u)
{
        free(u->rows);
        free(u->names);
        free(u->file_at);
}

void elf_lines_free(struct elf_lines *x)
{
        if (!x)
                return;
        for (uint32_t i = 0; i <= x->mask; i++)
                if (x->units[i].is_used)
                        unit_clear(&x->units[i]);
        free(x->units);
        free(x);
}

/* ---- reading ---- */

/* A string of a section at off, NUL-terminated inside it; NULL: none. */
static const char *section_string(const Elf_Data *d, uint64_t off)
{
        if (!d || !d->d_buf || off >= d->d_size)
                return NULL;
        const char *s = (const char *)d->d_buf + off;
        return memchr(s, 0, d->d_size - off) ? s : NULL;
}

/* Reads an entry format's value: the path's string (forms of DW_LNCT_path) into *s, a number
   (DW_LNCT_directory_index) into *v; other contents skipped. false: a form left to libdw. */
static bool rd_form(struct elf_lines *x, struct dwarf_rd *r, uint64_t form,
                    unsigned int offset_size, const char **s, uint64_t *v)
{
        switch (form) {
        case DW_FORM_string: {
                const uint8_t *z = r->p < r->end ? memchr(r->p, 0, (size_t)(r->end - r->p)) : NULL;
                if (!z)
                        return false;
                *s = (const char *)r->p;
                r->p = z + 1;
                return true;
        }
        case DW_FORM_line_strp:
        case DW_FORM_strp: {
                uint64_t off = rd_fixed(r, offset_size);
                *s = section_string(form == DW_FORM_strp ? x->str : x->line_str, off);
                return !r->is_bad && *s;
        }
        case DW_FORM_udata: *v = rd_uleb(r); return !r->is_bad;
        case DW_FORM_data1: *v = rd_fixed(r, 1); return !r->is_bad;
        case DW_FORM_data2: *v = rd_fixed(r, 2); return !r->is_bad;
        case DW_FORM_data4: *v = rd_fixed(r, 4); return !r->is_bad;
        case DW_FORM_data8: *v = rd_fixed(r, 8); return !r->is_bad;
        case DW_FORM_data16: rd_skip(r, 16); return !r->is_bad;
        case DW_FORM_block: {
                uint64_t n = rd_uleb(r);
                if (r->is_bad || n > (uint64_t)(r->end - r->p))
                        return false;
                r->p += n;
                return true;
        }
        default: return false;
        }
}

struct names {
        char *buf;
        size_t len, cap;
        uint32_t *at;
        uint32_t nr, cap_at;
};

/* Adds a file name as libdw composes it: an absolute name as it is, else dir/name (the name
   alone where dir is NULL). */
static void names_add(struct names *n, const char *dir, const char *name)
{
        size_t dl = dir && *name != '/' ? strlen(dir) + 1 : 0, nl = strlen(name);
        if (n->len + dl + nl + 1 > n->cap) {
                while (n->len + dl + nl + 1 > n->cap)
                        n->cap = n->cap ? n->cap * 2 : 4096;
                n->buf = xrealloc(n->buf, n->cap);
        }
        if (n->nr == n->cap_at) {
                n->cap_at = n->cap_at ? n->cap_at * 2 : 64;
                n->at = xrealloc(n->at, n->cap_at * sizeof(*n->at));
        }
        n->at[n->nr++] = (uint32_t)n->len;
        if (dl) {
                memcpy(n->buf + n->len, dir, dl - 1);
                n->buf[n->len + dl - 1] = '/';
        }
        memcpy(n->buf + n->len + dl, name, nl + 1);
        n->len += dl + nl + 1;
}

#define MAX_DIRS 65536u

/* The directory and file tables of a line program header (r from the tables to the header's
   end), as libdw names them: file 0 is "???" before DWARF 5, the first entry from 5 on. */
static bool read_files(struct elf_lines *x, struct dwarf_rd *r, unsigned int version,
                       unsigned int offset_size, const char *comp_dir, struct names *out)
{
        const char **dirs = NULL;
        uint64_t nr_dirs = 0;
        bool ok = false;
        if (version < 5) {
                dirs = xcalloc(MAX_DIRS, sizeof(*dirs));
                dirs[nr_dirs++] = comp_dir;
                while (r->p < r->end && *r->p) {
                        const uint8_t *z = memchr(r->p, 0, (size_t)(r->end - r->p));
                        if (!z || nr_dirs == MAX_DIRS)
                                goto out;
                        dirs[nr_dirs++] = (const char *)r->p;
                        r->p = z + 1;
                }
                if (r->p >= r->end)
                        goto out;
                r->p++;
                names_add(out, NULL, "???");
                if (r->p >= r->end)
                        goto out;
                while (r->p < r->end && *r->p) {
                        const uint8_t *z = memchr(r->p, 0, (size_t)(r->end - r->p));
                        if (!z)
                                goto out;
                        const char *name = (const char *)r->p;
                        r->p = z + 1;
                        uint64_t di = rd_uleb(r);
                        rd_uleb(r); /* mtime */
                        rd_uleb(r); /* length */
                        if (r->is_bad || di >= nr_dirs)
                                goto out;
                        names_add(out, dirs[di], name);
                }
                if (r->p >= r->end)
                        goto out;
                r->p++;
        } else {
                for (int pass = 0; pass < 2; pass++) {
                        if (r->p >= r->end)
                                goto out;
                        unsigned int nr_forms = *r->p++;
                        uint64_t forms[256], lnct[256];
                        int path = -1, index = -1;
                        for (unsigned int i = 0; i < nr_forms; i++) {
                                lnct[i] = rd_uleb(r);
                                forms[i] = rd_uleb(r);
                                if (lnct[i] == DW_LNCT_path)
                                        path = (int)i;
                                else if (lnct[i] == DW_LNCT_directory_index)
                                        index = (int)i;
                        }
                        uint64_t nr = rd_uleb(r);
                        if (r->is_bad || path < 0 || (pass == 1 && index < 0) || nr > MAX_DIRS)
                                goto out;
                        if (pass == 0) {
                                dirs = xcalloc(nr + 1, sizeof(*dirs));
                                nr_dirs = nr;
                        }
                        for (uint64_t n = 0; n < nr; n++) {
                                const char *s = NULL;
                                uint64_t v = UINT64_MAX;
                                for (unsigned int i = 0; i < nr_forms; i++) {
                                        const char *si = NULL;
                                        uint64_t vi = UINT64_MAX;
                                        if (!rd_form(x, r, forms[i], offset_size, &si, &vi))
                                                goto out;
                                        if ((int)i == path)
                                                s = si;
                                        else if ((int)i == index)
                                                v = vi;
                                }
                                if (!s)
                                        goto out;
                                if (pass == 0) {
                                        dirs[n] = s;
                                } else {
                                        if (v >= nr_dirs)
                                                goto out;
                                        names_add(out, dirs[v], s);
                                }
                        }
                        if (pass == 1 && nr == 0)
                                names_add(out, NULL, "???");
                }
        }
        ok = r->p == r->end;
out:
        free(dirs);
        return ok;
}

/* libdw's order: address; an end of sequence before a row; then the program's order (the
   rows' places in the array as made, i). */
static inline bool row_less(const struct row *x, uint32_t i, const struct row *y, uint32_t j)
{
        if (x->addr != y->addr)
                return x->addr < y->addr;
        if ((x->file_end & 1) != (y->file_end & 1))
                return x->file_end & 1;
        return i < j;
}

struct indexed_row {
        struct row r;
        uint32_t i;
};

static int indexed_cmp(const void *a, const void *b)
{
        const struct indexed_row *x = a, *y = b;
        return row_less(&x->r, x->i, &y->r, y->i) ? -1 : row_less(&y->r, y->i, &x->r, x->i);
}

struct seq {
        const struct row *first;
        uint32_t at, nr; /* at: the first row's place as made */
};

static int seq_cmp(const void *a, const void *b)
{
        const struct seq *x = a, *y = b;
        return row_less(x->first, x->at, y->first, y->at)   ? -1
               : row_less(y->first, y->at, x->first, x->at) ? 1
                                                            : 0;
}

/* Before in libdw's order without the places as made: a lower address, or an end of sequence
   before a row at the same address. */
static inline bool row_before(const struct row *x, const struct row *y)
{
        return x->addr != y->addr ? x->addr < y->addr : (x->file_end & 1) > (y->file_end & 1);
}

/* The rows sorted, by sequences where that gives libdw's order: a sequence is in order as
   compilers write it, but for an end at the address of the row before it (sorted here, rows of
   one address keeping their order), and sorting the sequences by their first rows sorts the
   rows unless two sequences overlap or meet at rows that only their places would order. */
static void sort_by_sequences(struct row *rows, uint32_t nr)
{
        uint32_t nr_seq = 0, cap_seq = 64;
        struct seq *seq = xmalloc(cap_seq * sizeof(*seq));
        for (uint32_t i = 0, first = 0; i < nr; i++) {
                if (!(rows[i].file_end & 1) && i + 1 < nr)
                        continue;
                for (uint32_t j = first + 1; j <= i; j++) {
                        if (!row_before(&rows[j], &rows[j - 1]))
                                continue;
                        struct row t = rows[j];
                        uint32_t k = j;
                        for (; k > first && row_before(&t, &rows[k - 1]); k--)
                                rows[k] = rows[k - 1];
                        rows[k] = t;
                }
                if (nr_seq == cap_seq) {
                        cap_seq *= 2;
                        seq = xrealloc(seq, cap_seq * sizeof(*seq));
                }
                seq[nr_seq++] = (struct seq){&rows[first], first, i + 1 - first};
                first = i + 1;
        }
        qsort(seq, nr_seq, sizeof(*seq), seq_cmp);
        bool ok = true;
        for (uint32_t k = 1; k < nr_seq && ok; k++) {
                const struct row *x = seq[k - 1].first + seq[k - 1].nr - 1, *y = seq[k].first;
                ok = row_before(x, y);
        }
        if (ok) {
                struct row *out = xmalloc((size_t)nr * sizeof(*out)), *o = out;
                for (uint32_t k = 0; k < nr_seq; k++) {
                        memcpy(o, seq[k].first, seq[k].nr * sizeof(*o));
                        o += seq[k].nr;
                }
                memcpy(rows, out, (size_t)nr * sizeof(*rows));
                free(out);
        }
        free(seq);
        if (ok)
                return;
        /* sequences that overlap: sorted whole, in the order as made (the sequences sorted
           alone above kept it for rows of one address) */
        struct indexed_row *t = xmalloc((size_t)nr * sizeof(*t));
        for (uint32_t i = 0; i < nr; i++)
                t[i] = (struct indexed_row){rows[i], i};
        qsort(t, nr, sizeof(*t), indexed_cmp);
        for (uint32_t i = 0; i < nr; i++)
                rows[i] = t[i].r;
        free(t);
}

/* rows in libdw's order: as made where they are so already (a unit whose code is one section),
   else sorted. */
static void sort_rows(struct row *rows, uint32_t nr)
{
        for (uint32_t i = 1; i < nr; i++)
                if (row_less(&rows[i], i, &rows[i - 1], i - 1))
                        return sort_by_sequences(rows, nr);
}

/* The line program at off of .debug_line into u; false: left to libdw. */
static bool read_program(struct elf_lines *x, struct unit *u, uint64_t off, unsigned int addr_size,
                         const char *comp_dir)
{
        if (!x->line || off >= x->line->d_size)
                return false;
        struct dwarf_rd r = {(const uint8_t *)x->line->d_buf + off,
                             (const uint8_t *)x->line->d_buf + x->line->d_size, false};
        unsigned int offset_size;
        uint64_t len = rd_initial_length(&r, &offset_size);
        if (r.is_bad || len > (uint64_t)(r.end - r.p))
                return false;
        r.end = r.p + len;
        unsigned int version = (unsigned int)rd_fixed(&r, 2);
        if (r.is_bad || version < 2 || version > 5)
                return false;
        if (version >= 5 && (rd_fixed(&r, 1) != addr_size || rd_fixed(&r, 1) != 0))
                return false;
        uint64_t header_len = rd_fixed(&r, offset_size);
        const uint8_t *header_start = r.p;
        if (r.is_bad || header_len > (uint64_t)(r.end - r.p))
                return false;
        const uint8_t *program = header_start + header_len;
        unsigned int min_len = (unsigned int)rd_fixed(&r, 1);
        unsigned int max_ops = version >= 4 ? (unsigned int)rd_fixed(&r, 1) : 1;
        unsigned int default_is_stmt = (unsigned int)rd_fixed(&r, 1);
        int line_base = (int8_t)rd_fixed(&r, 1);
        unsigned int line_range = (unsigned int)rd_fixed(&r, 1);
        unsigned int opcode_base = (unsigned int)rd_fixed(&r, 1);
        /* kept simple: what compilers for x86-64 and arm64 write */
        if (r.is_bad || max_ops != 1 || default_is_stmt > 1 || line_range == 0 ||
            opcode_base < 13 || (size_t)(program - r.p) < opcode_base - 1)
                return false;
        const uint8_t *std_len = r.p - 1; /* [opcode] for 1 <= opcode < opcode_base */
        static const uint8_t want_len[13] = {0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1};
        for (unsigned int op = 1; op < 13; op++)
                if (std_len[op] != want_len[op])
                        return false;
        r.p += opcode_base - 1;
        struct dwarf_rd fr = {r.p, program, false};
        struct names names = {0};
        if (!read_files(x, &fr, version, offset_size, comp_dir, &names) || fr.is_bad) {
                free(names.buf);
                free(names.at);
                return false;
        }

        /* a row takes a byte of the program at least */
        uint32_t nr = 0, cap = (uint32_t)((size_t)(r.end - program) / 2 + 16);
        struct row *rows = xmalloc(cap * sizeof(*rows));
        uint64_t addr = 0, file = 1, column = 0;
        int64_t line = 1;
        r.p = program;
        bool ok = true;
        while (ok && r.p < r.end) {
                unsigned int op = *r.p++;
                int is_end = -1; /* >= 0: a row is made */
                if (op >= opcode_base) {
                        line += line_base + (int)((op - opcode_base) % line_range);
                        addr += (uint64_t)min_len * ((op - opcode_base) / line_range);
                        is_end = 0;
                } else if (op == 0) {
                        if (r.end - r.p < 2) {
                                ok = false;
                                break;
                        }
                        unsigned int n = *r.p++, sub;
                        if (n == 0 || n >= 0x80 || (size_t)(r.end - r.p) < n) {
                                ok = false;
                                break;
                        }
                        sub = *r.p++;
                        switch (sub) {
                        case DW_LNE_end_sequence:
                                ok = n == 1;
                                is_end = 1;
                                break;
                        case DW_LNE_set_address:
                                ok = n == 1 + addr_size && (addr_size == 4 || addr_size == 8);
                                if (ok)
                                        addr = rd_fixed(&r, addr_size);
                                break;
                        case DW_LNE_set_discriminator: ok = rd_uleb(&r) < (1u << 24); break;
                        case DW_LNE_define_file: ok = false; break;
                        default:
                                ok = sub < 0x80;
                                r.p += n - 1;
                                break;
                        }
                } else {
                        uint64_t v;
                        switch (op) {
                        case DW_LNS_copy: is_end = 0; break;
                        case DW_LNS_advance_pc:
                                v = rd_uleb(&r);
                                ok = (uint64_t)min_len * v <= UINT_MAX; /* libdw's width */
                                addr += (uint64_t)min_len * v;
                                break;
                        case DW_LNS_advance_line: {
                                int64_t d = rd_sleb(&r);
                                ok = d >= INT_MIN && d <= INT_MAX;
                                line += (int)d;
                                break;
                        }
                        case DW_LNS_set_file:
                                file = rd_uleb(&r);
                                ok = file <= UINT_MAX;
                                break;
                        case DW_LNS_set_column: /* libdw keeps 16 bits of it */
                                column = rd_uleb(&r);
                                ok = column <= UINT16_MAX;
                                break;
                        case DW_LNS_negate_stmt:
                        case DW_LNS_set_basic_block:
                        case DW_LNS_set_prologue_end:
                        case DW_LNS_set_epilogue_begin: break;
                        case DW_LNS_const_add_pc:
                                addr += (uint64_t)min_len * ((255 - opcode_base) / line_range);
                                break;
                        case DW_LNS_fixed_advance_pc: addr += rd_fixed(&r, 2); break;
                        case DW_LNS_set_isa: ok = rd_uleb(&r) <= 255; break;
                        default:
                                for (unsigned int k = std_len[op]; k > 0; k--)
                                        rd_uleb(&r);
                                break;
                        }
                }
                if (r.is_bad)
                        ok = false;
                if (!ok || is_end < 0)
                        continue;
                if (line < INT_MIN || line > INT_MAX || file > MAX_FILE) {
                        ok = false;
                        break;
                }
                if (nr == cap) {
                        cap *= 2;
                        rows = xrealloc(rows, cap * sizeof(*rows));
                }
                rows[nr++] =
                        (struct row){addr, (int32_t)line, (uint16_t)(file << 1 | (uint64_t)is_end),
                                     (uint16_t)column};
                if (is_end) {
                        addr = 0;
                        file = 1;
                        line = 1;
                        column = 0;
                }
        }
        if (!ok || nr == UINT32_MAX) {
                free(rows);
                free(names.buf);
                free(names.at);
                return false;
        }
        sort_rows(rows, nr);
        if (nr)
                rows[nr - 1].file_end |= 1; /* libdw marks the unit's last row so */
        u->rows = rows;
        u->nr = nr;
        u->names = names.buf;
        u->file_at = names.at;
        u->nr_files = names.nr;
        u->is_read = true;
        return true;
}

Elf_Data *elf_debug_section(Elf *elf, size_t shstrndx, const char *name)
{
        for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
                GElf_Shdr sh;
                const char *n;
                if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(elf, shstrndx, sh.sh_name)) ||
                    strcmp(n, name) != 0)
                        continue;
                /* the sections libdw's open passes over, as it does: one without bytes in the
                   file, one of a section group (a fuzzed file's .debug_info flagged SHF_GROUP:
                   its units read here and unknown to libdw, the line found here and no scope) */
                if (sh.sh_type == SHT_NOBITS || (sh.sh_flags & SHF_GROUP))
                        continue;
                /* libdw inflated it when it opened the file; one it did not is left to it */
                if (sh.sh_flags & SHF_COMPRESSED)
                        return NULL;
                return elf_getdata(scn, NULL);
        }
        return NULL;
}

static bool find_sections_of(struct elf_lines *x, Elf *elf)
{
        if (!elf)
                return false;
        if (elf == x->elf)
                return x->line != NULL;
        x->elf = elf;
        x->line = x->line_str = x->str = NULL;
        GElf_Ehdr eh;
        size_t shstrndx;
        if (!gelf_getehdr(elf, &eh) || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
            elf_getshdrstrndx(elf, &shstrndx) != 0)
                return false;
        x->line = elf_debug_section(elf, shstrndx, ".debug_line");
        x->line_str = elf_debug_section(elf, shstrndx, ".debug_line_str");
        x->str = elf_debug_section(elf, shstrndx, ".debug_str");
        return x->line != NULL;
}

static bool find_sections(struct elf_lines *x, Dwarf_Die *cu)
{
        Dwarf *dw = dwarf_cu_getdwarf(cu->cu);
        return find_sections_of(x, dw ? dwarf_getelf(dw) : NULL);
}

/* The unit of DIE offset off, made (not read) where there was none: *is_new. */
static struct unit *unit_slot(struct elf_lines *x, Dwarf_Off off, bool *is_new)
{
        *is_new = false;
        uint32_t j = (uint32_t)((off * 0x9e3779b97f4a7c15ull) >> 40) & x->mask;
        for (;; j = (j + 1) & x->mask) {
                struct unit *u = &x->units[j];
                if (u->is_used && u->off == off)
                        return u;
                if (!u->is_used)
                        break;
        }
        if ((x->nr + 1) * 2 > x->mask + 1) {
                struct unit *old = x->units;
                uint32_t old_cap = x->mask + 1;
                x->mask = old_cap * 2 - 1;
                x->units = xcalloc(old_cap * 2, sizeof(*x->units));
                for (uint32_t i = 0; i < old_cap; i++) {
                        if (!old[i].is_used)
                                continue;
                        uint32_t k =
                                (uint32_t)((old[i].off * 0x9e3779b97f4a7c15ull) >> 40) & x->mask;
                        while (x->units[k].is_used)
                                k = (k + 1) & x->mask;
                        x->units[k] = old[i];
                }
                free(old);
                j = (uint32_t)((off * 0x9e3779b97f4a7c15ull) >> 40) & x->mask;
                while (x->units[j].is_used)
                        j = (j + 1) & x->mask;
        }
        struct unit *u = &x->units[j];
        *u = (struct unit){.off = off, .is_used = true};
        x->nr++;
        *is_new = true;
        return u;
}

static struct unit *unit_get(struct elf_lines *x, Dwarf_Die *cu)
{
        bool is_new;
        struct unit *u = unit_slot(x, dwarf_dieoffset(cu), &is_new);
        if (!is_new)
                return u;
        /* a compile unit of its own (split and type units: libdw) with its line program */
        Dwarf_Half version;
        uint8_t unit_type, addr_size;
        Dwarf_Attribute at;
        Dwarf_Word stmt;
        if (dwarf_cu_info(cu->cu, &version, &unit_type, NULL, NULL, NULL, &addr_size, NULL) != 0 ||
            unit_type != DW_UT_compile || !dwarf_attr(cu, DW_AT_stmt_list, &at) ||
            dwarf_formudata(&at, &stmt) != 0 || !find_sections(x, cu))
                return u;
        const char *comp_dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &at));
        read_program(x, u, stmt, addr_size, comp_dir);
        return u;
}

static int unit_find(const struct unit *u, Dwarf_Addr pc, const char **file, int *line,
                     int *column);

int elf_lines_find(struct elf_lines *x, Dwarf_Die *cu, Dwarf_Addr pc, const char **file, int *line,
                   int *column)
{
        return unit_find(unit_get(x, cu), pc, file, line, column);
}

int elf_lines_find_unit(struct elf_lines *x, Elf *elf, const struct elf_units *units,
                        uint64_t cu_offset, uint64_t die_offset, Dwarf_Addr pc, const char **file,
                        int *line, int *column)
{
        struct unit *u = NULL;
        for (uint32_t j = (uint32_t)((die_offset * 0x9e3779b97f4a7c15ull) >> 40) & x->mask;;
             j = (j + 1) & x->mask) {
                if (!x->units[j].is_used)
                        break;
                if (x->units[j].off == die_offset) {
                        u = &x->units[j];
                        break;
                }
        }
        if (!u) {
                /* a unit met first: its DIE's attributes read here, else by libdw */
                struct elf_unit_info ui;
                if (elf_units_info(units, cu_offset, &ui) <= 0)
                        return -2;
                bool is_new;
                u = unit_slot(x, die_offset, &is_new);
                if (find_sections_of(x, elf))
                        read_program(x, u, ui.stmt_list, ui.addr_size, ui.comp_dir);
        }
        return unit_find(u, pc, file, line, column);
}

static int unit_find(const struct unit *u, Dwarf_Addr pc, const char **file, int *line, int *column)
{
        if (!u->is_read)
                return -1;
        if (!u->nr)
                return 0;
        /* libdwfl's search: the last row at or below pc */
        uint32_t l = 0, h = u->nr - 1;
        while (l < h) {
                uint32_t i = h - (h - l) / 2;
                if (pc < u->rows[i].addr)
                        h = i - 1;
                else
                        l = i;
        }
        const struct row *w = &u->rows[l];
        if (w->addr > pc || (w->file_end & 1))
                return 0;
        if ((uint32_t)(w->file_end >> 1) >= u->nr_files)
                return column ? -1 : 0; /* libdw gives the row's line without a file */
        *file = u->names + u->file_at[w->file_end >> 1];
        *line = w->line;
        if (column)
                *column = w->column;
        return 1;
}

int elf_lines_file(struct elf_lines *x, Dwarf_Die *cu, uint64_t index, const char **file)
{
        struct unit *u = unit_get(x, cu);
        if (!u->is_read)
                return -1;
        if (index >= u->nr_files)
                return 0;
        *file = u->names + u->file_at[index];
        return 1;
}
