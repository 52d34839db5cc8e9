/* SPDX-License-Identifier: MIT */
/* pe_image.h: reads a Windows image file (DLL, EXE, SYS; PE32 and PE32+): its identity for
   matching the trace's ImageID/DbgID events, and its export table as function names. */
#ifndef ETWTOP_SYMBOLS_PE_IMAGE_H
#define ETWTOP_SYMBOLS_PE_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols/sym_table.h"
#include "util/err.h"

/* IMAGE_FILE_HEADER.Machine values (PE-COFF specification, "Machine Types") */
#define PE_MACHINE_I386  0x014cu
#define PE_MACHINE_ARMNT 0x01c4u
#define PE_MACHINE_AMD64 0x8664u
#define PE_MACHINE_ARM64 0xaa64u

/* IMAGE_FILE_HEADER.Characteristics: the image is a DLL */
#define PE_FILE_DLL 0x2000u

#define PE_PDB_NAME_SIZE 260 /* MAX_PATH, as in the DbgID_RSDS event's PdbFileName */

/* The exports' inferred sizes (the distance to the next export) are capped at this. */
#define PE_EXPORT_MAX_INFERRED_SIZE (64u * 1024)

/* What identifies an image. The ImageID event (and Image/Load) carries time_date_stamp and
   size_of_image (and checksum); the DbgID_RSDS event carries pdb_guid, pdb_age and pdb_name. */
struct pe_identity {
        uint32_t time_date_stamp; /* IMAGE_FILE_HEADER.TimeDateStamp (a hash in /Brepro images) */
        uint32_t size_of_image;   /* IMAGE_OPTIONAL_HEADER.SizeOfImage */
        uint32_t checksum;        /* IMAGE_OPTIONAL_HEADER.CheckSum */
        uint64_t image_base;      /* preferred base; exports are relative to the actual base */
        uint16_t machine;         /* PE_MACHINE_* */
        uint16_t characteristics; /* IMAGE_FILE_HEADER.Characteristics (PE_FILE_DLL, ...) */
        bool is_pe32_plus;        /* 64-bit optional header */
        bool has_codeview;        /* an RSDS CodeView debug record was found: the pdb_ fields */
        uint8_t pdb_guid[16];     /* as stored: Data1, Data2, Data3 little-endian, then 8 bytes */
        uint32_t pdb_age;
        char pdb_name[PE_PDB_NAME_SIZE]; /* as stored (UTF-8), NUL-terminated; control
                                            characters replaced by '?', longer names cut */
        uint32_t nr_exports;             /* exports that have an address here (forwarders not) */
};

/* The errors below (util/err.h's struct err_msg) say what is wrong with the bytes, and where:
   offset is the file offset of the structure or field found wrong. A structure cut off by the
   end of the data is reported at its start (which may equal the data's size); a pointer or RVA
   that leads nowhere, or past the end, is reported at the field that holds it. So offset <= size
   always. */

/* Reads the image file's bytes data[0..size) (the file as on disk, not a loaded image): the
   DOS, PE and optional headers, the section table, the debug directory's first CodeView RSDS
   record, and the export directory.

   id is zeroed, then filled. When exports is not NULL (it must be new: not yet finished), each
   export is added to it keyed by its RVA (the address minus the image's actual load base),
   named by its export name, or "#<ordinal>" when it has none; exports in a section that is
   neither code nor executable get SYM_FLAG_DATA; forwarders (an RVA inside the export
   directory, naming another DLL's export) and empty ordinal slots are skipped. On success the
   table is finished here with sym_table_finish(exports, PE_EXPORT_MAX_INFERRED_SIZE), so it is
   read-only afterwards; the caller still owns and frees it.

   Returns 0, or -EBADMSG with err (when not NULL) saying what is wrong and where. Bad input
   never reads outside data, and the work and memory are bounded by size. On error nothing was
   added to exports (it is left unfinished; free it), and id holds what was read before the
   problem: the header fields first, then the CodeView record, then the exports, so an image
   with a damaged export table can still be matched by an error at an offset past the headers.
   data is borrowed for the call only. */
int pe_image_read_mem(const uint8_t *data, size_t size, struct pe_identity *id,
                      struct sym_table *exports, struct err_msg *err);

/* Maps the file at path read-only and reads it with pe_image_read_mem (only the pages the
   headers, debug record and exports are on are read). Returns 0; -errno of open, fstat or mmap
   (-ENOENT for a missing file, -EACCES, -EIO, ...); -EINVAL for something that is not a
   regular file; -EFBIG for a file larger than the address space; or -EBADMSG for an empty file
   or bad contents. err's message starts with the path. */
int pe_image_read_file(const char *path, struct pe_identity *id, struct sym_table *exports,
                       struct err_msg *err);

/* "{01234567-89AB-CDEF-0123-456789ABCDEF}": the GUID as Windows shows it (the DbgID_RSDS
   event's GuidSig in xperf and WPA), from the stored bytes: Data1 (bytes 0-3), Data2 (4-5) and
   Data3 (6-7) read little-endian, then bytes 8-15 in order. */
#define PE_GUID_STRING_SIZE 39
void pe_guid_format(const uint8_t guid[16], char out[PE_GUID_STRING_SIZE]);

/* "0123456789ABCDEF0123456789ABCDEF1A": the PDB's symbol-server key, the GUID's 32 hex
   digits in the order above without braces or dashes, then the age in hex without leading
   zeros; the folder of pdb_name in a symbol store (foo.pdb/<key>/foo.pdb). */
#define PE_PDB_KEY_SIZE 41
void pe_pdb_key_format(const uint8_t guid[16], uint32_t age, char out[PE_PDB_KEY_SIZE]);

/* "5010AE7A157000": the image's symbol-server key, TimeDateStamp as 8 hex digits then
   SizeOfImage in hex without leading zeros (uppercase, as Microsoft's symbol server spells it);
   the folder of the image in a symbol store (ntdll.dll/<key>/ntdll.dll). */
#define PE_IMAGE_KEY_SIZE 17
void pe_image_key_format(uint32_t time_date_stamp, uint32_t size_of_image,
                         char out[PE_IMAGE_KEY_SIZE]);

/* Whether the image is the one an ImageID (or Image/Load) event describes: equal
   TimeDateStamp and SizeOfImage, the pair the symbol server keys images by. */
bool pe_identity_matches_image(const struct pe_identity *id, uint32_t time_date_stamp,
                               uint32_t size_of_image);

/* Whether the image's CodeView record is the one a DbgID_RSDS event describes: equal GUID
   (bytes as stored in both) and age. The PDB name is not compared: it is a build path. */
bool pe_identity_matches_pdb(const struct pe_identity *id, const uint8_t guid[16], uint32_t age);

#endif
