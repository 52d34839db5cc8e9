/* SPDX-License-Identifier: MIT */
/* pdb.h: reads a Program Database (PDB: the MSF 7.0 container of Microsoft's linkers and
   lld-link): its identity (GUID and age, what a trace's DbgID_RSDS record names), its public
   symbols and procedures as RVAs, and its C13 line tables. It takes bytes: nothing outside them
   is read, every length is checked against them, and bad input is an error with the offset of
   the bytes found wrong. Layouts: LLVM's "The PDB File Format" (llvm.org/docs/PDB) and
   Microsoft's microsoft-pdb repository (cvinfo.h, dbicommon.h). */
#ifndef ETWTOP_SYMBOLS_PDB_H
#define ETWTOP_SYMBOLS_PDB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

struct pdb;

/* The errors below (util/err.h's struct err_msg) say what is wrong and where: offset is a file
   offset (a stream's byte is reported at the file offset of its block), never past the data's
   size. */

struct pdb_info {
        uint32_t version;   /* PDB info stream: 20000404 (VC70) and later */
        uint32_t signature; /* a time stamp, informational */
        uint32_t age;       /* the PDB info stream's age: what DbgID_RSDS's age must equal */
        uint8_t guid[16];   /* as stored: Data1..3 little-endian, then Data4 (as pe_identity) */
        uint16_t machine;   /* the DBI header's (PE_MACHINE_*); 0 without a DBI stream */
        uint32_t nr_streams;
        uint32_t nr_modules;  /* module infos of the DBI stream */
        uint32_t nr_sections; /* section headers (from the DBI's optional debug header) */
        bool has_omap;        /* addresses are translated through OMAP (BBT-optimized images) */
};

/* Reads the MSF superblock and stream directory, the PDB info stream (with its named-stream
   map), the DBI stream's header, module infos, section map and optional debug header (the
   section headers and OMAP streams it names). data is borrowed and must outlive the pdb.
   Returns 0, or -EBADMSG with err (when not NULL) saying what is wrong and where. Work and
   memory are bounded by size. */
int pdb_open_mem(const uint8_t *data, size_t size, struct pdb **out, struct err_msg *err);
/* Maps the file read-only and opens it with pdb_open_mem. Returns 0, -errno of open, fstat or
   mmap (-ENOENT, -EACCES, ...), -EINVAL for what is not a regular file, or -EBADMSG. err's
   message starts with the path. */
int pdb_open_file(const char *path, struct pdb **out, struct err_msg *err);
void pdb_close(struct pdb *p); /* NULL is fine */

const struct pdb_info *pdb_get_info(const struct pdb *p);

/* Whether the PDB is the one a DbgID_RSDS record (or an image's CodeView record) names: equal
   GUID bytes and age (the PDB info stream's). */
bool pdb_matches(const struct pdb *p, const uint8_t guid[16], uint32_t age);

/* The stream the named-stream map gives name ("/names", "/LinkInfo"), or -ENOENT. */
int pdb_named_stream(const struct pdb *p, const char *name);

/* The RVA of segment:offset (segments are the section headers' 1-based indexes; through OMAP
   when the PDB has it), or 0 when no section holds it. */
uint32_t pdb_rva(const struct pdb *p, uint16_t segment, uint32_t offset);

/* CodeView symbol record kinds read here (cvinfo.h, SYM_ENUM_e) */
#define PDB_S_PUB32          0x110eu
#define PDB_S_LPROC32        0x110fu
#define PDB_S_GPROC32        0x1110u
#define PDB_S_LPROC32_ID     0x1146u
#define PDB_S_GPROC32_ID     0x1147u
#define PDB_S_LPROC32_DPC    0x1155u
#define PDB_S_LPROC32_DPC_ID 0x1156u
/* S_PUB32 flags (cvinfo.h, CV_PUBSYMFLAGS) */
#define PDB_PUB_CODE     0x1u
#define PDB_PUB_FUNCTION 0x2u
#define PDB_PUB_MANAGED  0x4u
#define PDB_PUB_MSIL     0x8u

struct pdb_symbol {
        const char *name; /* as stored (publics decorated), NUL-terminated; borrowed until the
                             callback returns */
        uint32_t rva;     /* pdb_rva(segment, offset); 0 when no section holds it */
        uint32_t size;    /* procedures: their code size; publics: 0 */
        uint32_t offset;
        uint16_t segment;
        uint16_t kind;  /* PDB_S_* */
        uint32_t flags; /* publics: PDB_PUB_*; procedures: 0 */
};

/* Called for each symbol; a non-zero return stops the walk and is returned. */
typedef int (*pdb_symbol_fn)(void *ctx, const struct pdb_symbol *sym);

/* Each S_PUB32 record the publics stream's hash (GSI) names in the DBI's symbol-record stream,
   in the hash's order. Returns 0 (also when the PDB has no publics), the callback's non-zero
   return, or -EBADMSG with err. */
int pdb_publics(const struct pdb *p, pdb_symbol_fn fn, void *ctx, struct err_msg *err);

/* Each procedure (S_GPROC32, S_LPROC32 and their _ID and _DPC forms) of every module's symbol
   stream, in module order. Names are as the compiler wrote them (qualified, undecorated).
   Returns as pdb_publics. */
int pdb_procedures(const struct pdb *p, pdb_symbol_fn fn, void *ctx, struct err_msg *err);

/* The line tables of every module (C13 DEBUG_S_LINES, file names through DEBUG_S_FILECHKSMS
   and the /names string table), as an object of their own: it outlives the pdb. */
struct pdb_lines;
struct pdb_line {
        const char *file; /* borrowed from the pdb_lines */
        uint32_t line;
        uint32_t rva; /* where the line's code starts */
};
/* Returns 0 with *out (an empty table when the PDB has no line information), or -EBADMSG with
   err. */
int pdb_lines_read(const struct pdb *p, struct pdb_lines **out, struct err_msg *err);
/* The line whose code holds rva; false outside every line's code. */
bool pdb_lines_find(const struct pdb_lines *l, uint32_t rva, struct pdb_line *out);
uint32_t pdb_lines_count(const struct pdb_lines *l);
size_t pdb_lines_memory(const struct pdb_lines *l); /* bytes held */
void pdb_lines_free(struct pdb_lines *l);           /* NULL is fine */

/* A public name as WPA shows it, into out (always NUL-terminated; returns the length needed):
   MSVC C++ names ("?area@Shape@fix@@QEBAHH@Z") undecorated to the qualified name without its
   parameters ("fix::Shape::area") by LLVM's Microsoft demangler when libLLVM is installed (else
   kept as they are); on x86 (is_x86) C names lose the underscore of __cdecl and __stdcall
   ("_main", "_f@8": "main", "f") and the @ and @N of __fastcall ("@g@8": "g"). Other names are
   copied. Thread-safe. */
size_t pdb_name_undecorate(const char *name, bool is_x86, char *out, size_t size);
/* Why MSVC C++ names stay decorated ("" when the demangler is there). */
const char *pdb_demangler_status(void);

#endif
