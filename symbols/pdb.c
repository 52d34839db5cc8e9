/* SPDX-License-Identifier: MIT */
/* pdb.c: owns reading PDB files: the MSF container, the PDB info and DBI streams, opening and
   closing (the publics and module symbols are in pdb_symbols.c, the C13 line tables in
   pdb_lines.c). Layouts: LLVM's "The PDB File Format"
   (llvm.org/docs/PDB/) and microsoft-pdb's cvinfo.h and dbicommon.h. */
#include "symbols/pdb.h"
#include "pdb_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/in_file.h"
#include "util/xalloc.h"

/* MSF 7.0 superblock (LLVM PDB docs, "The Superblock"): the magic, then six 32-bit fields */
#define SUPERBLOCK_SIZE 56
static const char msf_magic[32] = "Microsoft C/C++ MSF 7.00\r\n\x1a"
                                  "DS\0\0"; /* and the terminating zero: 32 bytes */
static const char msf2_magic[] = "Microsoft C/C++ program database 2.00\r\n";

/* ---- bytes and errors ---- */

int pdb_bad(struct err_msg *err, uint64_t offset, const char *fmt, ...)
{
        if (err) {
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
                va_end(ap);
                err->offset = offset;
        }
        return -EBADMSG;
}

/* The file offset of byte pos of a stream (its end: one past its last byte). */
static uint64_t stream_offset(const struct pdb *p, const struct msf_stream *s, uint64_t pos)
{
        if (!s->size)
                return 0;
        uint64_t off;
        if (pos >= s->size) {
                uint64_t last = s->size - 1;
                off = (uint64_t)s->blocks[last / p->block_size] * p->block_size +
                      last % p->block_size + 1;
        } else {
                off = (uint64_t)s->blocks[pos / p->block_size] * p->block_size +
                      pos % p->block_size;
        }
        return off < p->size ? off : p->size;
}

static uint64_t buf_offset(const struct pdb *p, const struct sbuf *b, uint64_t pos)
{
        return stream_offset(p, &p->streams[b->stream], pos);
}

int pdb_bad_in(const struct pdb *p, struct err_msg *err, const struct sbuf *b, uint64_t pos,
               const char *fmt, ...)
{
        if (err) {
                char msg[200];
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(msg, sizeof(msg), fmt, ap);
                va_end(ap);
                snprintf(err->msg, sizeof(err->msg), "stream %u: %s", b->stream, msg);
                err->offset = buf_offset(p, b, pos);
        }
        return -EBADMSG;
}

void pdb_sbuf_release(struct sbuf *b)
{
        free(b->owned);
        memset(b, 0, sizeof(*b));
}

void pdb_stream_load(const struct pdb *p, uint32_t idx, struct sbuf *b)
{
        const struct msf_stream *s = &p->streams[idx];
        uint32_t bs = p->block_size, nb = (uint32_t)(((uint64_t)s->size + bs - 1) / bs);
        memset(b, 0, sizeof(*b));
        b->stream = idx;
        b->size = s->size;
        if (!s->size) {
                b->p = (const uint8_t *)"";
                return;
        }
        bool is_contiguous = true;
        for (uint32_t i = 1; i < nb && is_contiguous; i++)
                is_contiguous = s->blocks[i] == s->blocks[0] + i;
        if (is_contiguous) {
                b->p = p->data + (uint64_t)s->blocks[0] * bs;
                return;
        }
        b->owned = xmalloc(s->size);
        for (uint32_t i = 0; i < nb; i++) {
                uint32_t n = i + 1 < nb ? bs : s->size - i * bs;
                memcpy(b->owned + (size_t)i * bs, p->data + (uint64_t)s->blocks[i] * bs, n);
        }
        b->p = b->owned;
}

bool pdb_has_nul(const uint8_t *p, uint64_t pos, uint64_t end)
{
        return pos < end && memchr(p + pos, 0, end - pos) != NULL;
}

/* ---- the MSF container ---- */

static int msf_read(struct pdb *p, struct err_msg *err)
{
        const uint8_t *d = p->data;
        if (p->size >= sizeof(msf2_magic) - 1 && !memcmp(d, msf2_magic, sizeof(msf2_magic) - 1))
                return pdb_bad(err, 0, "an MSF 2.0 (Visual C++ 6) program database: not read");
        if (p->size < SUPERBLOCK_SIZE)
                return pdb_bad(err, 0, "%zu bytes: too short for an MSF superblock (%d)", p->size,
                               SUPERBLOCK_SIZE);
        if (memcmp(d, msf_magic, sizeof(msf_magic)) != 0)
                return pdb_bad(err, 0, "not an MSF 7.0 program database (no magic)");
        uint32_t bs = pdb_le32(d + 32), nr_blocks = pdb_le32(d + 40), dir_bytes = pdb_le32(d + 44),
                 map_addr = pdb_le32(d + 52);
        if (bs < 512 || bs > 65536 || (bs & (bs - 1)))
                return pdb_bad(err, 32, "block size %u: not a power of two from 512 to 65536", bs);
        if ((uint64_t)nr_blocks * bs > p->size)
                return pdb_bad(err, 40, "%u blocks of %u bytes: the file has %zu bytes", nr_blocks,
                               bs, p->size);
        if (dir_bytes < 4 || dir_bytes > (uint64_t)nr_blocks * bs)
                return pdb_bad(err, 44, "stream directory of %u bytes in a file of %u blocks",
                               dir_bytes, nr_blocks);
        uint32_t nr_dir_blocks = (uint32_t)(((uint64_t)dir_bytes + bs - 1) / bs);
        if (map_addr == 0 || map_addr >= nr_blocks ||
            (uint64_t)map_addr * bs + (uint64_t)nr_dir_blocks * 4 > (uint64_t)nr_blocks * bs)
                return pdb_bad(err, 52,
                               "block map at block %u (%u directory blocks) outside the %u "
                               "blocks",
                               map_addr, nr_dir_blocks, nr_blocks);
        p->block_size = bs;
        p->nr_blocks = nr_blocks;
        p->dir_blocks = xmalloc((size_t)nr_dir_blocks * sizeof(uint32_t));
        for (uint32_t i = 0; i < nr_dir_blocks; i++) {
                uint64_t at = (uint64_t)map_addr * bs + 4ull * i;
                p->dir_blocks[i] = pdb_le32(d + at);
                if (p->dir_blocks[i] == 0 || p->dir_blocks[i] >= nr_blocks)
                        return pdb_bad(err, at,
                                       "directory block %u: block %u outside the %u blocks", i,
                                       p->dir_blocks[i], nr_blocks);
        }
        /* the directory, as a stream of its own for the error offsets */
        struct msf_stream dir_stream = {dir_bytes, p->dir_blocks};
        p->nr_dir_words = dir_bytes / 4;
        p->dir = xmalloc((size_t)p->nr_dir_words * sizeof(uint32_t) + 4);
        for (uint32_t i = 0; i < p->nr_dir_words; i++) {
                uint64_t pos = 4ull * i;
                p->dir[i] = pdb_le32(d + (uint64_t)p->dir_blocks[pos / bs] * bs + pos % bs);
        }
        uint32_t nr_streams = p->dir[0];
        if (nr_streams >= p->nr_dir_words)
                return pdb_bad(err, stream_offset(p, &dir_stream, 0),
                               "%u streams: the %u-byte directory cannot list them", nr_streams,
                               dir_bytes);
        p->streams = xcalloc(nr_streams ? nr_streams : 1, sizeof(*p->streams));
        p->info.nr_streams = nr_streams;
        uint32_t k = 1 + nr_streams;
        for (uint32_t i = 0; i < nr_streams; i++) {
                uint32_t size = p->dir[1 + i] == NIL_SIZE ? 0 : p->dir[1 + i];
                uint64_t nb = ((uint64_t)size + bs - 1) / bs;
                if (k + nb > p->nr_dir_words)
                        return pdb_bad(
                                err, stream_offset(p, &dir_stream, 4ull * (1 + i)),
                                "stream %u: %u bytes need %llu blocks past the directory's end", i,
                                size, (unsigned long long)nb);
                p->streams[i].size = size;
                p->streams[i].blocks = &p->dir[k];
                for (uint32_t j = 0; j < nb; j++, k++)
                        if (p->dir[k] >= nr_blocks)
                                return pdb_bad(err, stream_offset(p, &dir_stream, 4ull * k),
                                               "stream %u: block %u outside the %u blocks", i,
                                               p->dir[k], nr_blocks);
        }
        return 0;
}

/* ---- the PDB info stream ---- */

static int info_read(struct pdb *p, struct err_msg *err)
{
        if (p->info.nr_streams <= INFO_STREAM || p->streams[INFO_STREAM].size < 28)
                return pdb_bad(err, 0, "no PDB info stream (stream 1 of %u bytes)",
                               p->info.nr_streams > INFO_STREAM ? p->streams[INFO_STREAM].size : 0);
        struct sbuf *b = &p->info_buf;
        pdb_stream_load(p, INFO_STREAM, b);
        p->info.version = pdb_le32(b->p);
        p->info.signature = pdb_le32(b->p + 4);
        p->info.age = pdb_le32(b->p + 8);
        memcpy(p->info.guid, b->p + 12, 16);
        /* the named-stream map: a string buffer, then a hash table of (name offset, stream) */
        uint64_t pos = 28;
        if (pos + 4 > b->size)
                return pdb_bad_in(p, err, b, pos, "no named-stream map");
        uint32_t str_size = pdb_le32(b->p + pos);
        uint64_t strings = pos + 4;
        pos = strings + str_size;
        if (pos + 8 > b->size)
                return pdb_bad_in(p, err, b, 28, "named-stream strings of %u bytes past the end",
                                  str_size);
        uint32_t nr = pdb_le32(b->p + pos), cap = pdb_le32(b->p + pos + 4);
        uint64_t present = pos + 8;
        if (present + 4 > b->size)
                return pdb_bad_in(p, err, b, present, "named-stream map cut short");
        uint32_t nr_words = pdb_le32(b->p + present);
        if (present + 4 + 4ull * nr_words + 4 > b->size)
                return pdb_bad_in(p, err, b, present, "%u words of present bits past the end",
                                  nr_words);
        uint64_t count = 0;
        for (uint32_t i = 0; i < nr_words; i++)
                count += (uint32_t)__builtin_popcount(pdb_le32(b->p + present + 4 + 4ull * i));
        if (count != nr || nr > cap)
                return pdb_bad_in(p, err, b, pos,
                                  "named-stream map of %u entries (capacity %u) "
                                  "marks %llu present",
                                  nr, cap, (unsigned long long)count);
        uint64_t deleted = present + 4 + 4ull * nr_words;
        uint32_t nr_deleted = pdb_le32(b->p + deleted);
        pos = deleted + 4 + 4ull * nr_deleted;
        if (pos + 8ull * nr > b->size)
                return pdb_bad_in(p, err, b, deleted, "named-stream entries past the end");
        p->named = xcalloc(nr ? nr : 1, sizeof(*p->named));
        for (uint32_t i = 0; i < nr; i++, pos += 8) {
                uint32_t name = pdb_le32(b->p + pos), stream = pdb_le32(b->p + pos + 4);
                if (!pdb_has_nul(b->p, strings + name, strings + str_size))
                        return pdb_bad_in(p, err, b, pos,
                                          "named stream %u: name at %u outside the "
                                          "%u-byte strings",
                                          i, name, str_size);
                p->named[p->nr_named++] =
                        (struct named_stream){(const char *)b->p + strings + name, stream};
        }
        return 0;
}

int pdb_named_stream(const struct pdb *p, const char *name)
{
        for (uint32_t i = 0; p && i < p->nr_named; i++)
                if (strcmp(p->named[i].name, name) == 0)
                        return p->named[i].stream < p->info.nr_streams ? (int)p->named[i].stream
                                                                       : -ENOENT;
        return -ENOENT;
}

/* ---- the DBI stream ---- */

static int sections_read(struct pdb *p, const struct sbuf *dbi, uint64_t field, uint16_t idx,
                         struct pdb_section **out, uint32_t *nr, struct err_msg *err)
{
        if (idx == NIL_STREAM)
                return 0;
        if (idx >= p->info.nr_streams)
                return pdb_bad_in(p, err, dbi, field, "section headers in stream %u of %u", idx,
                                  p->info.nr_streams);
        struct sbuf b;
        pdb_stream_load(p, idx, &b);
        if (b.size % SECTION_HEADER_SIZE) {
                int rc = pdb_bad_in(p, err, &b, 0,
                                    "section headers of %u bytes: not a multiple of %d", b.size,
                                    SECTION_HEADER_SIZE);
                pdb_sbuf_release(&b);
                return rc;
        }
        *nr = b.size / SECTION_HEADER_SIZE;
        *out = xcalloc(*nr ? *nr : 1, sizeof(**out));
        for (uint32_t i = 0; i < *nr; i++) {
                const uint8_t *h = b.p + (size_t)i * SECTION_HEADER_SIZE;
                (*out)[i] = (struct pdb_section){pdb_le32(h + 12), pdb_le32(h + 8)};
        }
        pdb_sbuf_release(&b);
        return 0;
}

static int omap_cmp(const void *a, const void *b)
{
        const struct omap_entry *x = a, *y = b;
        return x->from < y->from ? -1 : x->from > y->from;
}

static int omap_read(struct pdb *p, const struct sbuf *dbi, uint64_t field, uint16_t idx,
                     struct err_msg *err)
{
        if (idx == NIL_STREAM)
                return 0;
        if (idx >= p->info.nr_streams)
                return pdb_bad_in(p, err, dbi, field, "OMAP in stream %u of %u", idx,
                                  p->info.nr_streams);
        struct sbuf b;
        pdb_stream_load(p, idx, &b);
        if (b.size % 8) {
                int rc = pdb_bad_in(p, err, &b, 0, "OMAP of %u bytes: not a multiple of 8", b.size);
                pdb_sbuf_release(&b);
                return rc;
        }
        p->nr_omap = b.size / 8;
        p->omap = xcalloc(p->nr_omap ? p->nr_omap : 1, sizeof(*p->omap));
        for (uint32_t i = 0; i < p->nr_omap; i++)
                p->omap[i] =
                        (struct omap_entry){pdb_le32(b.p + 8ull * i), pdb_le32(b.p + 8ull * i + 4)};
        if (p->nr_omap)
                qsort(p->omap, p->nr_omap, sizeof(*p->omap), omap_cmp);
        p->info.has_omap = p->nr_omap != 0;
        pdb_sbuf_release(&b);
        return 0;
}

static int modules_read(struct pdb *p, uint64_t start, uint64_t end, struct err_msg *err)
{
        const struct sbuf *b = &p->dbi_buf;
        uint32_t cap = (uint32_t)((end - start) / MODI_FIXED_SIZE);
        p->modules = xcalloc(cap ? cap : 1, sizeof(*p->modules));
        uint8_t *used = xcalloc(p->info.nr_streams + 1, 1);
        uint64_t pos = start;
        int rc = 0;
        while (pos < end) {
                if (pos + MODI_FIXED_SIZE > end) {
                        rc = pdb_bad_in(p, err, b, pos, "module info %u cut short",
                                        p->info.nr_modules);
                        break;
                }
                uint64_t name = pos + MODI_FIXED_SIZE;
                if (!pdb_has_nul(b->p, name, end)) {
                        rc = pdb_bad_in(p, err, b, name, "module %u: unterminated name",
                                        p->info.nr_modules);
                        break;
                }
                uint64_t obj = name + strlen((const char *)b->p + name) + 1;
                if (!pdb_has_nul(b->p, obj, end)) {
                        rc = pdb_bad_in(p, err, b, obj, "module %u: unterminated object name",
                                        p->info.nr_modules);
                        break;
                }
                const uint8_t *m = b->p + pos;
                uint16_t stream = pdb_le16(m + 34);
                if (stream != NIL_STREAM && stream < p->info.nr_streams) {
                        /* each module's own stream: work and memory stay linear in the size */
                        if (used[stream]) {
                                rc = pdb_bad_in(p, err, b, pos + 34,
                                                "module %u: stream %u is another module's",
                                                p->info.nr_modules, stream);
                                break;
                        }
                        used[stream] = 1;
                }
                p->modules[p->info.nr_modules++] =
                        (struct pdb_module){pdb_le16(m + 34), pdb_le32(m + 36), pdb_le32(m + 40),
                                            pdb_le32(m + 44), buf_offset(p, b, pos + 34)};
                pos = obj + strlen((const char *)b->p + obj) + 1;
                pos = start + ((pos - start + 3) & ~3ull);
        }
        free(used);
        return rc;
}

static int dbi_read(struct pdb *p, struct err_msg *err)
{
        if (p->info.nr_streams <= DBI_STREAM || !p->streams[DBI_STREAM].size)
                return 0; /* no DBI: no symbols, still an identity */
        struct sbuf *b = &p->dbi_buf;
        pdb_stream_load(p, DBI_STREAM, b);
        if (b->size < DBI_HEADER_SIZE)
                return pdb_bad_in(p, err, b, 0, "DBI stream of %u bytes: no room for its header",
                                  b->size);
        if (pdb_le32(b->p) != 0xffffffffu)
                return pdb_bad_in(p, err, b, 0, "DBI header signature %08x: an old format",
                                  pdb_le32(b->p));
        p->has_dbi = true;
        p->publics_stream = pdb_le16(b->p + 16);
        p->symrec_stream = pdb_le16(b->p + 20);
        p->info.machine = pdb_le16(b->p + 58);
        /* the substreams, in their order: module infos, section contributions, section map,
           source info, type server map, EC, optional debug header */
        static const int size_fields[] = {24, 28, 32, 36, 40, 52, 48};
        uint64_t starts[7], pos = DBI_HEADER_SIZE;
        for (int i = 0; i < 7; i++) {
                int32_t n = (int32_t)pdb_le32(b->p + size_fields[i]);
                if (n < 0 || pos + (uint64_t)n > b->size)
                        return pdb_bad_in(p, err, b, size_fields[i],
                                          "DBI substream of %d bytes past the stream's %u", n,
                                          b->size);
                starts[i] = pos;
                pos += (uint64_t)n;
        }
        int rc = modules_read(p, starts[0], starts[1], err);
        if (rc < 0)
                return rc;
        uint64_t sm = starts[2], sm_end = starts[3];
        if (sm_end - sm >= 4) {
                uint32_t count = pdb_le16(b->p + sm);
                if (sm + 4 + (uint64_t)count * SECTION_MAP_ENTRY_SIZE > sm_end)
                        return pdb_bad_in(p, err, b, sm,
                                          "section map of %u entries past its %llu bytes", count,
                                          (unsigned long long)(sm_end - sm));
                p->nr_section_map = count;
        }
        uint64_t dh = starts[6], dh_end = pos;
        uint32_t nr_slots = (uint32_t)((dh_end - dh) / 2);
        uint16_t slot[DBG_ORIG_SECTION_HEADER + 1];
        for (uint32_t i = 0; i <= DBG_ORIG_SECTION_HEADER; i++)
                slot[i] = i < nr_slots ? pdb_le16(b->p + dh + 2 * i) : NIL_STREAM;
        rc = sections_read(p, b, dh + 2 * DBG_SECTION_HEADERS, slot[DBG_SECTION_HEADERS],
                           &p->sections, &p->nr_sections, err);
        if (rc == 0)
                rc = sections_read(p, b, dh + 2 * DBG_ORIG_SECTION_HEADER,
                                   slot[DBG_ORIG_SECTION_HEADER], &p->orig_sections,
                                   &p->nr_orig_sections, err);
        if (rc == 0)
                rc = omap_read(p, b, dh + 2 * DBG_OMAP_FROM_SRC, slot[DBG_OMAP_FROM_SRC], err);
        p->info.nr_sections = p->nr_sections;
        return rc;
}

/* ---- open and close ---- */

int pdb_open_mem(const uint8_t *data, size_t size, struct pdb **out, struct err_msg *err)
{
        *out = NULL;
        struct pdb *p = xcalloc(1, sizeof(*p));
        p->data = data;
        p->size = size;
        int rc = msf_read(p, err);
        if (rc == 0)
                rc = info_read(p, err);
        if (rc == 0)
                rc = dbi_read(p, err);
        if (rc < 0) {
                pdb_close(p);
                return rc;
        }
        *out = p;
        return 0;
}

int pdb_open_file(const char *path, struct pdb **out, struct err_msg *err)
{
        *out = NULL;
        /* a name from a symbol path or a recording: a FIFO there neither blocks nor is read */
        struct stat st;
        int rc = 0;
        int fd = in_file_open(path, 0, &st);
        if (fd == -EINVAL) {
                rc = -EINVAL;
                fd = -1;
                pdb_bad(err, 0, "%s: not a regular file", path);
                goto out_close;
        }
        if (fd < 0) {
                rc = fd;
                fd = -1;
                pdb_bad(err, 0, "%s: %s", path, strerror(-rc));
                goto out_close;
        }
        if (st.st_size == 0) {
                rc = pdb_bad(err, 0, "%s: an empty file", path);
                goto out_close;
        }
        if ((uint64_t)st.st_size > SIZE_MAX) {
                rc = -EFBIG;
                pdb_bad(err, 0, "%s: larger than the address space", path);
                goto out_close;
        }
        void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
                rc = -errno;
                pdb_bad(err, 0, "%s: %s", path, strerror(errno));
                goto out_close;
        }
        rc = pdb_open_mem(map, (size_t)st.st_size, out, err);
        if (rc < 0) {
                munmap(map, (size_t)st.st_size);
                if (err) {
                        char msg[sizeof(err->msg)];
                        memcpy(msg, err->msg, sizeof(msg));
                        pdb_bad(err, err->offset, "%s: %s", path, msg);
                }
        } else {
                (*out)->map = map;
                (*out)->map_size = (size_t)st.st_size;
        }
out_close:
        if (fd >= 0)
                close(fd);
        return rc;
}

void pdb_close(struct pdb *p)
{
        if (!p)
                return;
        pdb_sbuf_release(&p->info_buf);
        pdb_sbuf_release(&p->dbi_buf);
        free(p->dir);
        free(p->dir_blocks);
        free(p->streams);
        free(p->named);
        free(p->modules);
        free(p->sections);
        free(p->orig_sections);
        free(p->omap);
        if (p->map)
                munmap(p->map, p->map_size);
        free(p);
}

const struct pdb_info *pdb_get_info(const struct pdb *p)
{
        return &p->info;
}

bool pdb_matches(const struct pdb *p, const uint8_t guid[16], uint32_t age)
{
        return p && p->info.age == age && memcmp(p->info.guid, guid, 16) == 0;
}
