/* SPDX-License-Identifier: MIT */
/* pdb_impl.h (internal to symbols/): a PDB file's streams, modules and line tables, shared by
   pdb.c (the container and the streams), pdb_symbols.c (publics and procedures) and pdb_lines.c
   (the C13 line tables). Layouts: LLVM's "The PDB File Format" (llvm.org/docs/PDB/) and
   microsoft-pdb's cvinfo.h and dbicommon.h. */
#ifndef ETWTOP_SYMBOLS_PDB_IMPL_H
#define ETWTOP_SYMBOLS_PDB_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols/pdb.h"

#define NIL_STREAM   0xffffu     /* a 16-bit stream index naming no stream */
#define NIL_SIZE     0xffffffffu /* the directory's size of a nil stream */
#define INFO_STREAM  1
#define DBI_STREAM   3
#define HIDDEN_LINE1 0xfeefeeu /* line numbers of compiler-generated code (cvinfo.h) */
#define HIDDEN_LINE2 0xf00f00u
#define NO_FILE      0xffffffffu

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

/* ---- shared by the files of the module ---- */

static inline uint16_t pdb_le16(const uint8_t *p)
{
        return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t pdb_le32(const uint8_t *p)
{
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* pdb.c */

int pdb_bad(struct err_msg *err, uint64_t offset, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
int pdb_bad_in(const struct pdb *p, struct err_msg *err, const struct sbuf *b, uint64_t pos,
               const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Whether a NUL-terminated string starts at p[pos] and ends before p[end]. */
bool pdb_has_nul(const uint8_t *p, uint64_t pos, uint64_t end);
void pdb_sbuf_release(struct sbuf *b);
/* Reads stream idx (checked by the caller to exist). */
void pdb_stream_load(const struct pdb *p, uint32_t idx, struct sbuf *b);

/* pdb_symbols.c */
/* Loads module m's stream and checks that its parts fit; false (nothing loaded) when it has
   none or is not in the C13 format. */
int pdb_module_load(const struct pdb *p, const struct pdb_module *m, struct sbuf *b,
                    struct err_msg *err);

#endif
