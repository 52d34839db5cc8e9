/* SPDX-License-Identifier: MIT */
/* pdb_lines.c: owns a PDB's C13 line tables: read from its modules, sorted, and found by
   RVA. */
#include "symbols/pdb.h"
#include "pdb_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

/* ---- lines ---- */

static void lines_push(struct pdb_lines *l, uint32_t rva, uint32_t line, uint32_t file)
{
        if (l->nr == l->cap) {
                l->cap = l->cap ? l->cap * 2 : 256;
                l->entries = xrealloc(l->entries, (size_t)l->cap * sizeof(*l->entries));
        }
        l->entries[l->nr++] = (struct line_entry){rva, line, file};
}

/* The C13 subsections of module m in b[start, end): its file checksums first, then its
   DEBUG_S_LINES blocks into l. */
static int module_lines(const struct pdb *p, const struct sbuf *b, uint64_t start, uint64_t end,
                        struct pdb_lines *l, struct err_msg *err)
{
        uint64_t chk = 0, chk_end = 0;
        for (int pass = 0; pass < 2; pass++) {
                uint64_t pos = start;
                while (pos + 8 <= end) {
                        uint32_t kind = pdb_le32(b->p + pos), len = pdb_le32(b->p + pos + 4);
                        uint64_t d = pos + 8, d_end = d + len;
                        if (d_end > end)
                                return pdb_bad_in(p, err, b, pos,
                                                  "C13 subsection of %u bytes past "
                                                  "the module's lines",
                                                  len);
                        pos = d + (((uint64_t)len + 3) & ~3ull);
                        if (kind & DEBUG_S_IGNORE)
                                continue;
                        if (pass == 0 && kind == DEBUG_S_FILECHKSMS) {
                                chk = d;
                                chk_end = d_end;
                        }
                        if (pass == 0 || kind != DEBUG_S_LINES)
                                continue;
                        if (len < 12)
                                return pdb_bad_in(p, err, b, d, "DEBUG_S_LINES of %u bytes", len);
                        uint32_t reloc = pdb_le32(b->p + d), code_size = pdb_le32(b->p + d + 8);
                        uint16_t seg = pdb_le16(b->p + d + 4), flags = pdb_le16(b->p + d + 6);
                        uint64_t entry_size = flags & CV_LINES_HAVE_COLUMNS ? 12 : 8;
                        uint64_t q = d + 12;
                        while (q + 12 <= d_end) {
                                uint32_t name_index = pdb_le32(b->p + q),
                                         nr = pdb_le32(b->p + q + 4),
                                         block_size = pdb_le32(b->p + q + 8);
                                if (block_size < 12 || q + block_size > d_end ||
                                    12 + nr * entry_size > block_size)
                                        return pdb_bad_in(p, err, b, q,
                                                          "line block of %u bytes, %u "
                                                          "lines: past its subsection",
                                                          block_size, nr);
                                uint32_t file = NO_FILE;
                                if (!chk_end || (uint64_t)chk + name_index + 6 > chk_end)
                                        return pdb_bad_in(p, err, b, q,
                                                          "line block: file %u "
                                                          "outside the file checksums",
                                                          name_index);
                                uint32_t name = pdb_le32(b->p + chk + name_index);
                                if (l->strings_size) {
                                        if (name >= l->strings_size)
                                                return pdb_bad_in(p, err, b, chk + name_index,
                                                                  "file name at %u outside the "
                                                                  "%u-byte /names",
                                                                  name, l->strings_size);
                                        file = name;
                                }
                                for (uint32_t i = 0; i < nr; i++) {
                                        const uint8_t *e = b->p + q + 12 + 8ull * i;
                                        uint32_t line = pdb_le32(e + 4) & 0xffffffu;
                                        if (line == HIDDEN_LINE1 || line == HIDDEN_LINE2)
                                                line = 0;
                                        uint64_t off = (uint64_t)reloc + pdb_le32(e);
                                        uint32_t rva = off <= UINT32_MAX
                                                               ? pdb_rva(p, seg, (uint32_t)off)
                                                               : 0;
                                        if (!rva)
                                                continue;
                                        /* lines at one address: the code is the last one's
                                           (a function's opening line, then its body) */
                                        if (i && l->nr && l->entries[l->nr - 1].rva == rva)
                                                l->nr--;
                                        lines_push(l, rva, line, file);
                                }
                                q += block_size;
                        }
                        uint64_t off_end = (uint64_t)reloc + code_size;
                        uint32_t rva_end = code_size && off_end <= UINT32_MAX
                                                   ? pdb_rva(p, seg, (uint32_t)off_end)
                                                   : 0;
                        if (rva_end)
                                lines_push(l, rva_end, 0, NO_FILE); /* the code ends there */
                }
        }
        return 0;
}

static int line_cmp(const void *a, const void *b)
{
        const struct line_entry *x = a, *y = b;
        if (x->rva != y->rva)
                return x->rva < y->rva ? -1 : 1;
        /* at one address a line wins over the end of the code before it */
        return (x->line == 0) - (y->line == 0);
}

int pdb_lines_read(const struct pdb *p, struct pdb_lines **out, struct err_msg *err)
{
        struct pdb_lines *l = xcalloc(1, sizeof(*l));
        *out = NULL;
        int rc = 0;
        int names = pdb_named_stream(p, "/names");
        if (names >= 0) {
                struct sbuf nb;
                pdb_stream_load(p, (uint32_t)names, &nb);
                uint32_t n = nb.size >= NAMES_HEADER_SIZE ? pdb_le32(nb.p + 8) : 0;
                if (nb.size < NAMES_HEADER_SIZE || pdb_le32(nb.p) != NAMES_SIGNATURE ||
                    NAMES_HEADER_SIZE + (uint64_t)n > nb.size) {
                        rc = pdb_bad_in(p, err, &nb, 0, "/names of %u bytes: not a string table",
                                        nb.size);
                        pdb_sbuf_release(&nb);
                        goto fail;
                }
                l->strings = xmalloc((size_t)n + 1);
                memcpy(l->strings, nb.p + NAMES_HEADER_SIZE, n);
                l->strings[n] = 0;
                l->strings_size = n + 1;
                pdb_sbuf_release(&nb);
        }
        for (uint32_t i = 0; i < p->info.nr_modules && rc == 0; i++) {
                const struct pdb_module *m = &p->modules[i];
                if (!m->c13_bytes)
                        continue;
                struct sbuf b;
                rc = pdb_module_load(p, m, &b, err);
                if (rc == 0 && b.p) {
                        uint64_t start = (uint64_t)m->sym_bytes + m->c11_bytes;
                        rc = module_lines(p, &b, start, start + m->c13_bytes, l, err);
                }
                pdb_sbuf_release(&b);
        }
        if (rc < 0)
                goto fail;
        if (l->nr)
                qsort(l->entries, l->nr, sizeof(*l->entries), line_cmp);
        uint32_t o = 0;
        for (uint32_t i = 0; i < l->nr; i++)
                if (!o || l->entries[o - 1].rva != l->entries[i].rva)
                        l->entries[o++] = l->entries[i];
        l->nr = o;
        *out = l;
        return 0;
fail:
        pdb_lines_free(l);
        return rc;
}

bool pdb_lines_find(const struct pdb_lines *l, uint32_t rva, struct pdb_line *out)
{
        uint32_t lo = 0, hi = l ? l->nr : 0;
        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (l->entries[mid].rva <= rva)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (!lo || !l->entries[lo - 1].line)
                return false;
        const struct line_entry *e = &l->entries[lo - 1];
        out->file = e->file == NO_FILE ? "" : l->strings + e->file;
        out->line = e->line;
        out->rva = e->rva;
        return true;
}

uint32_t pdb_lines_count(const struct pdb_lines *l)
{
        return l ? l->nr : 0;
}

size_t pdb_lines_memory(const struct pdb_lines *l)
{
        return l ? sizeof(*l) + (size_t)l->cap * sizeof(*l->entries) + l->strings_size : 0;
}

void pdb_lines_free(struct pdb_lines *l)
{
        if (!l)
                return;
        free(l->entries);
        free(l->strings);
        free(l);
}
