/* SPDX-License-Identifier: MIT */
/* pdb.c: owns reading PDB files: the MSF container, the PDB info and DBI streams, the publics,
   the module symbol streams and their C13 line tables. Layouts: LLVM's "The PDB File Format"
   (llvm.org/docs/PDB/) and microsoft-pdb's cvinfo.h and dbicommon.h. */
#include "symbols/pdb.h"

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

#define NIL_STREAM   0xffffu     /* a 16-bit stream index naming no stream */
#define NIL_SIZE     0xffffffffu /* the directory's size of a nil stream */
#define INFO_STREAM  1
#define DBI_STREAM   3
#define HIDDEN_LINE1 0xfeefeeu /* line numbers of compiler-generated code (cvinfo.h) */
#define HIDDEN_LINE2 0xf00f00u
#define NO_FILE      0xffffffffu

/* MSF 7.0 superblock (LLVM PDB docs, "The Superblock"): the magic, then six 32-bit fields */
#define SUPERBLOCK_SIZE 56
static const char msf_magic[32] = "Microsoft C/C++ MSF 7.00\r\n\x1a"
                                  "DS\0\0"; /* and the terminating zero: 32 bytes */
static const char msf2_magic[] = "Microsoft C/C++ program database 2.00\r\n";

/* DBI stream header (LLVM PDB docs, "DBI Stream Header"): 64 bytes */
#define DBI_HEADER_SIZE 64
/* a module info record's fixed part (LLVM PDB docs, "Module Info Substream") */
#define MODI_FIXED_SIZE 64
/* PublicsStreamHeader (28 bytes) and GSIHashHeader (16 bytes), microsoft-pdb gsi.h */
#define PUBLICS_HEADER_SIZE 28
#define GSI_HEADER_SIZE     16
#define GSI_SIGNATURE       0xffffffffu
#define GSI_VERSION_V70     (0xeffe0000u + 19990810u)
/* the /names string table header (microsoft-pdb misc.h, NMT): signature, version, size */
#define NAMES_SIGNATURE   0xeffeeffeu
#define NAMES_HEADER_SIZE 12
/* optional debug header slots (LLVM PDB docs, "Optional Debug Header Stream") */
#define DBG_OMAP_FROM_SRC       4
#define DBG_SECTION_HEADERS     5
#define DBG_ORIG_SECTION_HEADER 10
#define SECTION_HEADER_SIZE     40 /* IMAGE_SECTION_HEADER */
#define SECTION_MAP_ENTRY_SIZE  20
/* module symbol streams and C13 subsections (cvinfo.h) */
#define CV_SIGNATURE_C13      4
#define DEBUG_S_IGNORE        0x80000000u
#define DEBUG_S_LINES         0xf2u
#define DEBUG_S_FILECHKSMS    0xf4u
#define CV_LINES_HAVE_COLUMNS 0x1u
#define PROC_FIXED_SIZE       39 /* PROCSYM32 up to its name, with the record's length and kind */
#define PUB_FIXED_SIZE        14 /* PUBSYM32 up to its name */

struct msf_stream {
        uint32_t size;
        const uint32_t *blocks; /* borrowed from the pdb's directory words */
};

struct pdb_section {
        uint32_t va, size;
};

struct omap_entry {
        uint32_t from, to;
};

struct pdb_module {
        uint16_t stream;
        uint32_t sym_bytes, c11_bytes, c13_bytes;
        uint64_t info_offset; /* file offset of its module info, for errors */
};

struct named_stream {
        const char *name; /* borrowed from the info stream's bytes */
        uint32_t stream;
};

/* A stream's bytes: borrowed from the file when its blocks follow each other, else copied. */
struct sbuf {
        const uint8_t *p;
        uint32_t size;
        uint32_t stream;
        uint8_t *owned;
};

struct pdb {
        const uint8_t *data; /* borrowed (or the mapping below) */
        size_t size;
        void *map; /* owned mapping of pdb_open_file, NULL otherwise */
        size_t map_size;
        uint32_t block_size, nr_blocks;
        uint32_t *dir; /* owned: the stream directory as words */
        uint32_t nr_dir_words;
        uint32_t *dir_blocks;       /* owned: the directory's own blocks */
        struct msf_stream *streams; /* owned, nr_streams */
        struct pdb_info info;
        struct sbuf info_buf;       /* the PDB info stream (named-stream names live there) */
        struct named_stream *named; /* owned */
        uint32_t nr_named;
        bool has_dbi;
        struct sbuf dbi_buf;
        uint16_t publics_stream, symrec_stream;
        struct pdb_module *modules;                   /* owned */
        struct pdb_section *sections, *orig_sections; /* owned */
        uint32_t nr_sections, nr_orig_sections, nr_section_map;
        struct omap_entry *omap; /* owned, sorted by from */
        uint32_t nr_omap;
};

struct line_entry {
        uint32_t rva;
        uint32_t line; /* 0: no line (the end of a block of lines, or hidden code) */
        uint32_t file; /* offset in strings, NO_FILE when unknown */
};

struct pdb_lines {
        struct line_entry *entries; /* owned, sorted by rva, one per rva */
        uint32_t nr, cap;
        char *strings; /* owned: the /names string buffer, NUL-terminated */
        uint32_t strings_size;
};

/* ---- bytes and errors ---- */

static uint16_t le16(const uint8_t *p)
{
        return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int bad(struct pdb_error *err, uint64_t offset, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static int bad(struct pdb_error *err, uint64_t offset, const char *fmt, ...)
{
        if (err) {
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(err->message, sizeof(err->message), fmt, ap);
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

static int bad_in(const struct pdb *p, struct pdb_error *err, const struct sbuf *b, uint64_t pos,
                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int bad_in(const struct pdb *p, struct pdb_error *err, const struct sbuf *b, uint64_t pos,
                  const char *fmt, ...)
{
        if (err) {
                char msg[200];
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(msg, sizeof(msg), fmt, ap);
                va_end(ap);
                snprintf(err->message, sizeof(err->message), "stream %u: %s", b->stream, msg);
                err->offset = buf_offset(p, b, pos);
        }
        return -EBADMSG;
}

static void sbuf_release(struct sbuf *b)
{
        free(b->owned);
        memset(b, 0, sizeof(*b));
}

/* Reads stream idx (checked by the caller to exist). */
static void stream_load(const struct pdb *p, uint32_t idx, struct sbuf *b)
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

/* Whether a NUL-terminated string starts at p[pos] and ends before p[end]. */
static bool has_nul(const uint8_t *p, uint64_t pos, uint64_t end)
{
        return pos < end && memchr(p + pos, 0, end - pos) != NULL;
}

/* ---- the MSF container ---- */

static int msf_read(struct pdb *p, struct pdb_error *err)
{
        const uint8_t *d = p->data;
        if (p->size >= sizeof(msf2_magic) - 1 && !memcmp(d, msf2_magic, sizeof(msf2_magic) - 1))
                return bad(err, 0, "an MSF 2.0 (Visual C++ 6) program database: not read");
        if (p->size < SUPERBLOCK_SIZE)
                return bad(err, 0, "%zu bytes: too short for an MSF superblock (%d)", p->size,
                           SUPERBLOCK_SIZE);
        if (memcmp(d, msf_magic, sizeof(msf_magic)) != 0)
                return bad(err, 0, "not an MSF 7.0 program database (no magic)");
        uint32_t bs = le32(d + 32), nr_blocks = le32(d + 40), dir_bytes = le32(d + 44),
                 map_addr = le32(d + 52);
        if (bs < 512 || bs > 65536 || (bs & (bs - 1)))
                return bad(err, 32, "block size %u: not a power of two from 512 to 65536", bs);
        if ((uint64_t)nr_blocks * bs > p->size)
                return bad(err, 40, "%u blocks of %u bytes: the file has %zu bytes", nr_blocks, bs,
                           p->size);
        if (dir_bytes < 4 || dir_bytes > (uint64_t)nr_blocks * bs)
                return bad(err, 44, "stream directory of %u bytes in a file of %u blocks",
                           dir_bytes, nr_blocks);
        uint32_t nr_dir_blocks = (uint32_t)(((uint64_t)dir_bytes + bs - 1) / bs);
        if (map_addr == 0 || map_addr >= nr_blocks ||
            (uint64_t)map_addr * bs + (uint64_t)nr_dir_blocks * 4 > (uint64_t)nr_blocks * bs)
                return bad(err, 52,
                           "block map at block %u (%u directory blocks) outside the %u "
                           "blocks",
                           map_addr, nr_dir_blocks, nr_blocks);
        p->block_size = bs;
        p->nr_blocks = nr_blocks;
        p->dir_blocks = xmalloc((size_t)nr_dir_blocks * sizeof(uint32_t));
        for (uint32_t i = 0; i < nr_dir_blocks; i++) {
                uint64_t at = (uint64_t)map_addr * bs + 4ull * i;
                p->dir_blocks[i] = le32(d + at);
                if (p->dir_blocks[i] == 0 || p->dir_blocks[i] >= nr_blocks)
                        return bad(err, at, "directory block %u: block %u outside the %u blocks", i,
                                   p->dir_blocks[i], nr_blocks);
        }
        /* the directory, as a stream of its own for the error offsets */
        struct msf_stream dir_stream = {dir_bytes, p->dir_blocks};
        p->nr_dir_words = dir_bytes / 4;
        p->dir = xmalloc((size_t)p->nr_dir_words * sizeof(uint32_t) + 4);
        for (uint32_t i = 0; i < p->nr_dir_words; i++) {
                uint64_t pos = 4ull * i;
                p->dir[i] = le32(d + (uint64_t)p->dir_blocks[pos / bs] * bs + pos % bs);
        }
        uint32_t nr_streams = p->dir[0];
        if (nr_streams >= p->nr_dir_words)
                return bad(err, stream_offset(p, &dir_stream, 0),
                           "%u streams: the %u-byte directory cannot list them", nr_streams,
                           dir_bytes);
        p->streams = xcalloc(nr_streams ? nr_streams : 1, sizeof(*p->streams));
        p->info.nr_streams = nr_streams;
        uint32_t k = 1 + nr_streams;
        for (uint32_t i = 0; i < nr_streams; i++) {
                uint32_t size = p->dir[1 + i] == NIL_SIZE ? 0 : p->dir[1 + i];
                uint64_t nb = ((uint64_t)size + bs - 1) / bs;
                if (k + nb > p->nr_dir_words)
                        return bad(err, stream_offset(p, &dir_stream, 4ull * (1 + i)),
                                   "stream %u: %u bytes need %llu blocks past the directory's end",
                                   i, size, (unsigned long long)nb);
                p->streams[i].size = size;
                p->streams[i].blocks = &p->dir[k];
                for (uint32_t j = 0; j < nb; j++, k++)
                        if (p->dir[k] >= nr_blocks)
                                return bad(err, stream_offset(p, &dir_stream, 4ull * k),
                                           "stream %u: block %u outside the %u blocks", i,
                                           p->dir[k], nr_blocks);
        }
        return 0;
}

/* ---- the PDB info stream ---- */

static int info_read(struct pdb *p, struct pdb_error *err)
{
        if (p->info.nr_streams <= INFO_STREAM || p->streams[INFO_STREAM].size < 28)
                return bad(err, 0, "no PDB info stream (stream 1 of %u bytes)",
                           p->info.nr_streams > INFO_STREAM ? p->streams[INFO_STREAM].size : 0);
        struct sbuf *b = &p->info_buf;
        stream_load(p, INFO_STREAM, b);
        p->info.version = le32(b->p);
        p->info.signature = le32(b->p + 4);
        p->info.age = le32(b->p + 8);
        memcpy(p->info.guid, b->p + 12, 16);
        /* the named-stream map: a string buffer, then a hash table of (name offset, stream) */
        uint64_t pos = 28;
        if (pos + 4 > b->size)
                return bad_in(p, err, b, pos, "no named-stream map");
        uint32_t str_size = le32(b->p + pos);
        uint64_t strings = pos + 4;
        pos = strings + str_size;
        if (pos + 8 > b->size)
                return bad_in(p, err, b, 28, "named-stream strings of %u bytes past the end",
                              str_size);
        uint32_t nr = le32(b->p + pos), cap = le32(b->p + pos + 4);
        uint64_t present = pos + 8;
        if (present + 4 > b->size)
                return bad_in(p, err, b, present, "named-stream map cut short");
        uint32_t nr_words = le32(b->p + present);
        if (present + 4 + 4ull * nr_words + 4 > b->size)
                return bad_in(p, err, b, present, "%u words of present bits past the end",
                              nr_words);
        uint64_t count = 0;
        for (uint32_t i = 0; i < nr_words; i++)
                count += (uint32_t)__builtin_popcount(le32(b->p + present + 4 + 4ull * i));
        if (count != nr || nr > cap)
                return bad_in(p, err, b, pos,
                              "named-stream map of %u entries (capacity %u) "
                              "marks %llu present",
                              nr, cap, (unsigned long long)count);
        uint64_t deleted = present + 4 + 4ull * nr_words;
        uint32_t nr_deleted = le32(b->p + deleted);
        pos = deleted + 4 + 4ull * nr_deleted;
        if (pos + 8ull * nr > b->size)
                return bad_in(p, err, b, deleted, "named-stream entries past the end");
        p->named = xcalloc(nr ? nr : 1, sizeof(*p->named));
        for (uint32_t i = 0; i < nr; i++, pos += 8) {
                uint32_t name = le32(b->p + pos), stream = le32(b->p + pos + 4);
                if (!has_nul(b->p, strings + name, strings + str_size))
                        return bad_in(p, err, b, pos,
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
                         struct pdb_section **out, uint32_t *nr, struct pdb_error *err)
{
        if (idx == NIL_STREAM)
                return 0;
        if (idx >= p->info.nr_streams)
                return bad_in(p, err, dbi, field, "section headers in stream %u of %u", idx,
                              p->info.nr_streams);
        struct sbuf b;
        stream_load(p, idx, &b);
        if (b.size % SECTION_HEADER_SIZE) {
                int rc = bad_in(p, err, &b, 0, "section headers of %u bytes: not a multiple of %d",
                                b.size, SECTION_HEADER_SIZE);
                sbuf_release(&b);
                return rc;
        }
        *nr = b.size / SECTION_HEADER_SIZE;
        *out = xcalloc(*nr ? *nr : 1, sizeof(**out));
        for (uint32_t i = 0; i < *nr; i++) {
                const uint8_t *h = b.p + (size_t)i * SECTION_HEADER_SIZE;
                (*out)[i] = (struct pdb_section){le32(h + 12), le32(h + 8)};
        }
        sbuf_release(&b);
        return 0;
}

static int omap_cmp(const void *a, const void *b)
{
        const struct omap_entry *x = a, *y = b;
        return x->from < y->from ? -1 : x->from > y->from;
}

static int omap_read(struct pdb *p, const struct sbuf *dbi, uint64_t field, uint16_t idx,
                     struct pdb_error *err)
{
        if (idx == NIL_STREAM)
                return 0;
        if (idx >= p->info.nr_streams)
                return bad_in(p, err, dbi, field, "OMAP in stream %u of %u", idx,
                              p->info.nr_streams);
        struct sbuf b;
        stream_load(p, idx, &b);
        if (b.size % 8) {
                int rc = bad_in(p, err, &b, 0, "OMAP of %u bytes: not a multiple of 8", b.size);
                sbuf_release(&b);
                return rc;
        }
        p->nr_omap = b.size / 8;
        p->omap = xcalloc(p->nr_omap ? p->nr_omap : 1, sizeof(*p->omap));
        for (uint32_t i = 0; i < p->nr_omap; i++)
                p->omap[i] = (struct omap_entry){le32(b.p + 8ull * i), le32(b.p + 8ull * i + 4)};
        if (p->nr_omap)
                qsort(p->omap, p->nr_omap, sizeof(*p->omap), omap_cmp);
        p->info.has_omap = p->nr_omap != 0;
        sbuf_release(&b);
        return 0;
}

static int modules_read(struct pdb *p, uint64_t start, uint64_t end, struct pdb_error *err)
{
        const struct sbuf *b = &p->dbi_buf;
        uint32_t cap = (uint32_t)((end - start) / MODI_FIXED_SIZE);
        p->modules = xcalloc(cap ? cap : 1, sizeof(*p->modules));
        uint8_t *used = xcalloc(p->info.nr_streams + 1, 1);
        uint64_t pos = start;
        int rc = 0;
        while (pos < end) {
                if (pos + MODI_FIXED_SIZE > end) {
                        rc = bad_in(p, err, b, pos, "module info %u cut short", p->info.nr_modules);
                        break;
                }
                uint64_t name = pos + MODI_FIXED_SIZE;
                if (!has_nul(b->p, name, end)) {
                        rc = bad_in(p, err, b, name, "module %u: unterminated name",
                                    p->info.nr_modules);
                        break;
                }
                uint64_t obj = name + strlen((const char *)b->p + name) + 1;
                if (!has_nul(b->p, obj, end)) {
                        rc = bad_in(p, err, b, obj, "module %u: unterminated object name",
                                    p->info.nr_modules);
                        break;
                }
                const uint8_t *m = b->p + pos;
                uint16_t stream = le16(m + 34);
                if (stream != NIL_STREAM && stream < p->info.nr_streams) {
                        /* each module's own stream: work and memory stay linear in the size */
                        if (used[stream]) {
                                rc = bad_in(p, err, b, pos + 34,
                                            "module %u: stream %u is another module's",
                                            p->info.nr_modules, stream);
                                break;
                        }
                        used[stream] = 1;
                }
                p->modules[p->info.nr_modules++] =
                        (struct pdb_module){le16(m + 34), le32(m + 36), le32(m + 40), le32(m + 44),
                                            buf_offset(p, b, pos + 34)};
                pos = obj + strlen((const char *)b->p + obj) + 1;
                pos = start + ((pos - start + 3) & ~3ull);
        }
        free(used);
        return rc;
}

static int dbi_read(struct pdb *p, struct pdb_error *err)
{
        if (p->info.nr_streams <= DBI_STREAM || !p->streams[DBI_STREAM].size)
                return 0; /* no DBI: no symbols, still an identity */
        struct sbuf *b = &p->dbi_buf;
        stream_load(p, DBI_STREAM, b);
        if (b->size < DBI_HEADER_SIZE)
                return bad_in(p, err, b, 0, "DBI stream of %u bytes: no room for its header",
                              b->size);
        if (le32(b->p) != 0xffffffffu)
                return bad_in(p, err, b, 0, "DBI header signature %08x: an old format", le32(b->p));
        p->has_dbi = true;
        p->publics_stream = le16(b->p + 16);
        p->symrec_stream = le16(b->p + 20);
        p->info.machine = le16(b->p + 58);
        /* the substreams, in their order: module infos, section contributions, section map,
           source info, type server map, EC, optional debug header */
        static const int size_fields[] = {24, 28, 32, 36, 40, 52, 48};
        uint64_t starts[7], pos = DBI_HEADER_SIZE;
        for (int i = 0; i < 7; i++) {
                int32_t n = (int32_t)le32(b->p + size_fields[i]);
                if (n < 0 || pos + (uint64_t)n > b->size)
                        return bad_in(p, err, b, size_fields[i],
                                      "DBI substream of %d bytes past the stream's %u", n, b->size);
                starts[i] = pos;
                pos += (uint64_t)n;
        }
        int rc = modules_read(p, starts[0], starts[1], err);
        if (rc < 0)
                return rc;
        uint64_t sm = starts[2], sm_end = starts[3];
        if (sm_end - sm >= 4) {
                uint32_t count = le16(b->p + sm);
                if (sm + 4 + (uint64_t)count * SECTION_MAP_ENTRY_SIZE > sm_end)
                        return bad_in(p, err, b, sm,
                                      "section map of %u entries past its %llu bytes", count,
                                      (unsigned long long)(sm_end - sm));
                p->nr_section_map = count;
        }
        uint64_t dh = starts[6], dh_end = pos;
        uint32_t nr_slots = (uint32_t)((dh_end - dh) / 2);
        uint16_t slot[DBG_ORIG_SECTION_HEADER + 1];
        for (uint32_t i = 0; i <= DBG_ORIG_SECTION_HEADER; i++)
                slot[i] = i < nr_slots ? le16(b->p + dh + 2 * i) : NIL_STREAM;
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

int pdb_open_mem(const uint8_t *data, size_t size, struct pdb **out, struct pdb_error *err)
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

int pdb_open_file(const char *path, struct pdb **out, struct pdb_error *err)
{
        *out = NULL;
        /* a name from a symbol path or a recording: a FIFO there neither blocks nor is read */
        struct stat st;
        int rc = 0;
        int fd = in_file_open(path, 0, &st);
        if (fd == -EINVAL) {
                rc = -EINVAL;
                fd = -1;
                bad(err, 0, "%s: not a regular file", path);
                goto out_close;
        }
        if (fd < 0) {
                rc = fd;
                fd = -1;
                bad(err, 0, "%s: %s", path, strerror(-rc));
                goto out_close;
        }
        if (st.st_size == 0) {
                rc = bad(err, 0, "%s: an empty file", path);
                goto out_close;
        }
        if ((uint64_t)st.st_size > SIZE_MAX) {
                rc = -EFBIG;
                bad(err, 0, "%s: larger than the address space", path);
                goto out_close;
        }
        void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
                rc = -errno;
                bad(err, 0, "%s: %s", path, strerror(errno));
                goto out_close;
        }
        rc = pdb_open_mem(map, (size_t)st.st_size, out, err);
        if (rc < 0) {
                munmap(map, (size_t)st.st_size);
                if (err) {
                        char msg[sizeof(err->message)];
                        memcpy(msg, err->message, sizeof(msg));
                        bad(err, err->offset, "%s: %s", path, msg);
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
        sbuf_release(&p->info_buf);
        sbuf_release(&p->dbi_buf);
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

int pdb_publics(const struct pdb *p, pdb_symbol_fn fn, void *ctx, struct pdb_error *err)
{
        if (!p->has_dbi || p->publics_stream == NIL_STREAM)
                return 0;
        if (!stream_exists(p, p->publics_stream) || !stream_exists(p, p->symrec_stream))
                return bad_in(p, err, &p->dbi_buf, 16,
                              "publics in stream %u, symbol records in %u: of %u streams",
                              p->publics_stream, p->symrec_stream, p->info.nr_streams);
        struct sbuf pb, sb;
        stream_load(p, p->publics_stream, &pb);
        stream_load(p, p->symrec_stream, &sb);
        int rc = 0;
        if (pb.size < PUBLICS_HEADER_SIZE + GSI_HEADER_SIZE) {
                rc = bad_in(p, err, &pb, 0, "publics stream of %u bytes: no room for its headers",
                            pb.size);
                goto out;
        }
        uint32_t hash_size = le32(pb.p);
        const uint8_t *gsi = pb.p + PUBLICS_HEADER_SIZE;
        uint32_t hr_size = le32(gsi + 8);
        if (PUBLICS_HEADER_SIZE + (uint64_t)hash_size > pb.size || hash_size < GSI_HEADER_SIZE) {
                rc = bad_in(p, err, &pb, 0, "publics hash of %u bytes past the stream's %u",
                            hash_size, pb.size);
                goto out;
        }
        if (le32(gsi) != GSI_SIGNATURE || le32(gsi + 4) != GSI_VERSION_V70) {
                rc = bad_in(p, err, &pb, PUBLICS_HEADER_SIZE,
                            "publics hash header %08x %08x: not the VC7.0 format", le32(gsi),
                            le32(gsi + 4));
                goto out;
        }
        if (hr_size % 8 || GSI_HEADER_SIZE + (uint64_t)hr_size > hash_size) {
                rc = bad_in(p, err, &pb, PUBLICS_HEADER_SIZE + 8,
                            "%u bytes of hash records in a hash of %u", hr_size, hash_size);
                goto out;
        }
        for (uint32_t i = 0; i < hr_size / 8 && rc == 0; i++) {
                uint64_t field = PUBLICS_HEADER_SIZE + GSI_HEADER_SIZE + 8ull * i;
                uint32_t off = le32(pb.p + field);
                if (off == 0 || (uint64_t)off - 1 + 4 > sb.size) {
                        rc = bad_in(p, err, &pb, field,
                                    "hash record %u: symbol at %u outside "
                                    "the %u-byte records",
                                    i, off - 1, sb.size);
                        break;
                }
                uint64_t rec = off - 1, len = le16(sb.p + rec), kind = le16(sb.p + rec + 2);
                uint64_t end = rec + 2 + len;
                if (len < 2 || end > sb.size) {
                        rc = bad_in(p, err, &sb, rec, "symbol record of %u bytes past the end",
                                    (unsigned)len);
                        break;
                }
                if (kind != PDB_S_PUB32)
                        continue;
                if (end < rec + PUB_FIXED_SIZE + 1 || !has_nul(sb.p, rec + PUB_FIXED_SIZE, end)) {
                        rc = bad_in(p, err, &sb, rec, "S_PUB32 record of %u bytes: no name",
                                    (unsigned)len);
                        break;
                }
                const uint8_t *r = sb.p + rec;
                struct pdb_symbol sym = {(const char *)r + PUB_FIXED_SIZE,
                                         pdb_rva(p, le16(r + 12), le32(r + 8)),
                                         0,
                                         le32(r + 8),
                                         le16(r + 12),
                                         PDB_S_PUB32,
                                         le32(r + 4)};
                rc = fn(ctx, &sym);
        }
out:
        sbuf_release(&pb);
        sbuf_release(&sb);
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

/* Loads module m's stream and checks that its parts fit; false (nothing loaded) when it has
   none or is not in the C13 format. */
static int module_load(const struct pdb *p, const struct pdb_module *m, struct sbuf *b,
                       struct pdb_error *err)
{
        memset(b, 0, sizeof(*b));
        if (m->stream == NIL_STREAM)
                return 0;
        if (m->stream >= p->info.nr_streams)
                return bad(err, m->info_offset, "module symbols in stream %u of %u", m->stream,
                           p->info.nr_streams);
        stream_load(p, m->stream, b);
        uint64_t need = (uint64_t)m->sym_bytes + m->c11_bytes + m->c13_bytes;
        if (need > b->size) {
                int rc = bad(err, m->info_offset,
                             "module symbols, C11 and C13 lines of %llu bytes in stream %u of %u",
                             (unsigned long long)need, m->stream, b->size);
                sbuf_release(b);
                return rc;
        }
        if (m->sym_bytes < 4 || le32(b->p) != CV_SIGNATURE_C13)
                sbuf_release(b); /* no symbols, or an older format: nothing to read */
        return 0;
}

int pdb_procedures(const struct pdb *p, pdb_symbol_fn fn, void *ctx, struct pdb_error *err)
{
        int rc = 0;
        for (uint32_t i = 0; i < p->info.nr_modules && rc == 0; i++) {
                const struct pdb_module *m = &p->modules[i];
                struct sbuf b;
                rc = module_load(p, m, &b, err);
                if (rc < 0 || !b.p)
                        continue;
                uint64_t pos = 4;
                while (pos < m->sym_bytes && rc == 0) {
                        if (pos + 4 > m->sym_bytes) {
                                rc = bad_in(p, err, &b, pos, "symbol record header cut short");
                                break;
                        }
                        uint64_t len = le16(b.p + pos), end = pos + 2 + len;
                        uint32_t kind = le16(b.p + pos + 2);
                        if (len < 2 || end > m->sym_bytes) {
                                rc = bad_in(p, err, &b, pos,
                                            "symbol record of %u bytes past "
                                            "the module's %u",
                                            (unsigned)len, m->sym_bytes);
                                break;
                        }
                        if (is_proc(kind)) {
                                if (end < pos + PROC_FIXED_SIZE + 1 ||
                                    !has_nul(b.p, pos + PROC_FIXED_SIZE, end)) {
                                        rc = bad_in(p, err, &b, pos,
                                                    "procedure record of %u bytes: no name",
                                                    (unsigned)len);
                                        break;
                                }
                                const uint8_t *r = b.p + pos;
                                struct pdb_symbol sym = {(const char *)r + PROC_FIXED_SIZE,
                                                         pdb_rva(p, le16(r + 36), le32(r + 32)),
                                                         le32(r + 16),
                                                         le32(r + 32),
                                                         le16(r + 36),
                                                         (uint16_t)kind,
                                                         0};
                                rc = fn(ctx, &sym);
                        }
                        pos = end;
                }
                sbuf_release(&b);
        }
        return rc;
}

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
                        struct pdb_lines *l, struct pdb_error *err)
{
        uint64_t chk = 0, chk_end = 0;
        for (int pass = 0; pass < 2; pass++) {
                uint64_t pos = start;
                while (pos + 8 <= end) {
                        uint32_t kind = le32(b->p + pos), len = le32(b->p + pos + 4);
                        uint64_t d = pos + 8, d_end = d + len;
                        if (d_end > end)
                                return bad_in(p, err, b, pos,
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
                                return bad_in(p, err, b, d, "DEBUG_S_LINES of %u bytes", len);
                        uint32_t reloc = le32(b->p + d), code_size = le32(b->p + d + 8);
                        uint16_t seg = le16(b->p + d + 4), flags = le16(b->p + d + 6);
                        uint64_t entry_size = flags & CV_LINES_HAVE_COLUMNS ? 12 : 8;
                        uint64_t q = d + 12;
                        while (q + 12 <= d_end) {
                                uint32_t name_index = le32(b->p + q), nr = le32(b->p + q + 4),
                                         block_size = le32(b->p + q + 8);
                                if (block_size < 12 || q + block_size > d_end ||
                                    12 + nr * entry_size > block_size)
                                        return bad_in(p, err, b, q,
                                                      "line block of %u bytes, %u "
                                                      "lines: past its subsection",
                                                      block_size, nr);
                                uint32_t file = NO_FILE;
                                if (!chk_end || (uint64_t)chk + name_index + 6 > chk_end)
                                        return bad_in(p, err, b, q,
                                                      "line block: file %u "
                                                      "outside the file checksums",
                                                      name_index);
                                uint32_t name = le32(b->p + chk + name_index);
                                if (l->strings_size) {
                                        if (name >= l->strings_size)
                                                return bad_in(p, err, b, chk + name_index,
                                                              "file name at %u outside the "
                                                              "%u-byte /names",
                                                              name, l->strings_size);
                                        file = name;
                                }
                                for (uint32_t i = 0; i < nr; i++) {
                                        const uint8_t *e = b->p + q + 12 + 8ull * i;
                                        uint32_t line = le32(e + 4) & 0xffffffu;
                                        if (line == HIDDEN_LINE1 || line == HIDDEN_LINE2)
                                                line = 0;
                                        uint64_t off = (uint64_t)reloc + le32(e);
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

int pdb_lines_read(const struct pdb *p, struct pdb_lines **out, struct pdb_error *err)
{
        struct pdb_lines *l = xcalloc(1, sizeof(*l));
        *out = NULL;
        int rc = 0;
        int names = pdb_named_stream(p, "/names");
        if (names >= 0) {
                struct sbuf nb;
                stream_load(p, (uint32_t)names, &nb);
                uint32_t n = nb.size >= NAMES_HEADER_SIZE ? le32(nb.p + 8) : 0;
                if (nb.size < NAMES_HEADER_SIZE || le32(nb.p) != NAMES_SIGNATURE ||
                    NAMES_HEADER_SIZE + (uint64_t)n > nb.size) {
                        rc = bad_in(p, err, &nb, 0, "/names of %u bytes: not a string table",
                                    nb.size);
                        sbuf_release(&nb);
                        goto fail;
                }
                l->strings = xmalloc((size_t)n + 1);
                memcpy(l->strings, nb.p + NAMES_HEADER_SIZE, n);
                l->strings[n] = 0;
                l->strings_size = n + 1;
                sbuf_release(&nb);
        }
        for (uint32_t i = 0; i < p->info.nr_modules && rc == 0; i++) {
                const struct pdb_module *m = &p->modules[i];
                if (!m->c13_bytes)
                        continue;
                struct sbuf b;
                rc = module_load(p, m, &b, err);
                if (rc == 0 && b.p) {
                        uint64_t start = (uint64_t)m->sym_bytes + m->c11_bytes;
                        rc = module_lines(p, &b, start, start + m->c13_bytes, l, err);
                }
                sbuf_release(&b);
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
