/* SPDX-License-Identifier: MIT */
/* pdb_symbols.c: owns a PDB's addresses (segment:offset to RVA), its publics and its
   modules' procedures. */
#include "symbols/pdb.h"
#include "pdb_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

/* ---- addresses ---- */

uint32_t pdb_rva(const struct pdb *p, uint16_t segment, uint32_t offset)
{
        /* with OMAP, symbols are in the original (pre-optimization) layout */
        bool is_orig = p->nr_omap && p->nr_orig_sections;
        const struct pdb_section *secs = is_orig ? p->orig_sections : p->sections;
        uint32_t n = is_orig ? p->nr_orig_sections : p->nr_sections;
        if (segment == 0 || segment > n)
                return 0;
        uint64_t rva = (uint64_t)secs[segment - 1].va + offset;
        if (rva > UINT32_MAX)
                return 0;
        if (!p->nr_omap)
                return (uint32_t)rva;
        uint32_t lo = 0, hi = p->nr_omap;
        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (p->omap[mid].from <= rva)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (!lo || !p->omap[lo - 1].to)
                return 0;
        uint64_t to = p->omap[lo - 1].to + (rva - p->omap[lo - 1].from);
        return to > UINT32_MAX ? 0 : (uint32_t)to;
}

/* ---- symbols ---- */

static bool stream_exists(const struct pdb *p, uint32_t idx)
{
        return idx != NIL_STREAM && idx < p->info.nr_streams;
}

int pdb_publics(const struct pdb *p, pdb_symbol_fn fn, void *ctx, struct err_msg *err)
{
        if (!p->has_dbi || p->publics_stream == NIL_STREAM)
                return 0;
        if (!stream_exists(p, p->publics_stream) || !stream_exists(p, p->symrec_stream))
                return pdb_bad_in(p, err, &p->dbi_buf, 16,
                                  "publics in stream %u, symbol records in %u: of %u streams",
                                  p->publics_stream, p->symrec_stream, p->info.nr_streams);
        struct sbuf pb, sb;
        pdb_stream_load(p, p->publics_stream, &pb);
        pdb_stream_load(p, p->symrec_stream, &sb);
        int rc = 0;
        if (pb.size < PUBLICS_HEADER_SIZE + GSI_HEADER_SIZE) {
                rc = pdb_bad_in(p, err, &pb, 0,
                                "publics stream of %u bytes: no room for its headers", pb.size);
                goto out;
        }
        uint32_t hash_size = pdb_le32(pb.p);
        const uint8_t *gsi = pb.p + PUBLICS_HEADER_SIZE;
        uint32_t hr_size = pdb_le32(gsi + 8);
        if (PUBLICS_HEADER_SIZE + (uint64_t)hash_size > pb.size || hash_size < GSI_HEADER_SIZE) {
                rc = pdb_bad_in(p, err, &pb, 0, "publics hash of %u bytes past the stream's %u",
                                hash_size, pb.size);
                goto out;
        }
        if (pdb_le32(gsi) != GSI_SIGNATURE || pdb_le32(gsi + 4) != GSI_VERSION_V70) {
                rc = pdb_bad_in(p, err, &pb, PUBLICS_HEADER_SIZE,
                                "publics hash header %08x %08x: not the VC7.0 format",
                                pdb_le32(gsi), pdb_le32(gsi + 4));
                goto out;
        }
        if (hr_size % 8 || GSI_HEADER_SIZE + (uint64_t)hr_size > hash_size) {
                rc = pdb_bad_in(p, err, &pb, PUBLICS_HEADER_SIZE + 8,
                                "%u bytes of hash records in a hash of %u", hr_size, hash_size);
                goto out;
        }
        for (uint32_t i = 0; i < hr_size / 8 && rc == 0; i++) {
                uint64_t field = PUBLICS_HEADER_SIZE + GSI_HEADER_SIZE + 8ull * i;
                uint32_t off = pdb_le32(pb.p + field);
                if (off == 0 || (uint64_t)off - 1 + 4 > sb.size) {
                        rc = pdb_bad_in(p, err, &pb, field,
                                        "hash record %u: symbol at %u outside "
                                        "the %u-byte records",
                                        i, off - 1, sb.size);
                        break;
                }
                uint64_t rec = off - 1, len = pdb_le16(sb.p + rec), kind = pdb_le16(sb.p + rec + 2);
                uint64_t end = rec + 2 + len;
                if (len < 2 || end > sb.size) {
                        rc = pdb_bad_in(p, err, &sb, rec, "symbol record of %u bytes past the end",
                                        (unsigned)len);
                        break;
                }
                if (kind != PDB_S_PUB32)
                        continue;
                if (end < rec + PUB_FIXED_SIZE + 1 ||
                    !pdb_has_nul(sb.p, rec + PUB_FIXED_SIZE, end)) {
                        rc = pdb_bad_in(p, err, &sb, rec, "S_PUB32 record of %u bytes: no name",
                                        (unsigned)len);
                        break;
                }
                const uint8_t *r = sb.p + rec;
                struct pdb_symbol sym = {(const char *)r + PUB_FIXED_SIZE,
                                         pdb_rva(p, pdb_le16(r + 12), pdb_le32(r + 8)),
                                         0,
                                         pdb_le32(r + 8),
                                         pdb_le16(r + 12),
                                         PDB_S_PUB32,
                                         pdb_le32(r + 4)};
                rc = fn(ctx, &sym);
        }
out:
        pdb_sbuf_release(&pb);
        pdb_sbuf_release(&sb);
        return rc;
}

static bool is_proc(uint32_t kind)
{
        switch (kind) {
        case PDB_S_LPROC32:
        case PDB_S_GPROC32:
        case PDB_S_LPROC32_ID:
        case PDB_S_GPROC32_ID:
        case PDB_S_LPROC32_DPC:
        case PDB_S_LPROC32_DPC_ID: return true;
        default: return false;
        }
}

int pdb_module_load(const struct pdb *p, const struct pdb_module *m, struct sbuf *b,
                    struct err_msg *err)
{
        memset(b, 0, sizeof(*b));
        if (m->stream == NIL_STREAM)
                return 0;
        if (m->stream >= p->info.nr_streams)
                return pdb_bad(err, m->info_offset, "module symbols in stream %u of %u", m->stream,
                               p->info.nr_streams);
        pdb_stream_load(p, m->stream, b);
        uint64_t need = (uint64_t)m->sym_bytes + m->c11_bytes + m->c13_bytes;
        if (need > b->size) {
                int rc = pdb_bad(
                        err, m->info_offset,
                        "module symbols, C11 and C13 lines of %llu bytes in stream %u of %u",
                        (unsigned long long)need, m->stream, b->size);
                pdb_sbuf_release(b);
                return rc;
        }
        if (m->sym_bytes < 4 || pdb_le32(b->p) != CV_SIGNATURE_C13)
                pdb_sbuf_release(b); /* no symbols, or an older format: nothing to read */
        return 0;
}

int pdb_procedures(const struct pdb *p, pdb_symbol_fn fn, void *ctx, struct err_msg *err)
{
        int rc = 0;
        for (uint32_t i = 0; i < p->info.nr_modules && rc == 0; i++) {
                const struct pdb_module *m = &p->modules[i];
                struct sbuf b;
                rc = pdb_module_load(p, m, &b, err);
                if (rc < 0 || !b.p)
                        continue;
                uint64_t pos = 4;
                while (pos < m->sym_bytes && rc == 0) {
                        if (pos + 4 > m->sym_bytes) {
                                rc = pdb_bad_in(p, err, &b, pos, "symbol record header cut short");
                                break;
                        }
                        uint64_t len = pdb_le16(b.p + pos), end = pos + 2 + len;
                        uint32_t kind = pdb_le16(b.p + pos + 2);
                        if (len < 2 || end > m->sym_bytes) {
                                rc = pdb_bad_in(p, err, &b, pos,
                                                "symbol record of %u bytes past "
                                                "the module's %u",
                                                (unsigned)len, m->sym_bytes);
                                break;
                        }
                        if (is_proc(kind)) {
                                if (end < pos + PROC_FIXED_SIZE + 1 ||
                                    !pdb_has_nul(b.p, pos + PROC_FIXED_SIZE, end)) {
                                        rc = pdb_bad_in(p, err, &b, pos,
                                                        "procedure record of %u bytes: no name",
                                                        (unsigned)len);
                                        break;
                                }
                                const uint8_t *r = b.p + pos;
                                struct pdb_symbol sym = {
                                        (const char *)r + PROC_FIXED_SIZE,
                                        pdb_rva(p, pdb_le16(r + 36), pdb_le32(r + 32)),
                                        pdb_le32(r + 16),
                                        pdb_le32(r + 32),
                                        pdb_le16(r + 36),
                                        (uint16_t)kind,
                                        0};
                                rc = fn(ctx, &sym);
                        }
                        pos = end;
                }
                pdb_sbuf_release(&b);
        }
        return rc;
}
