/* SPDX-License-Identifier: MIT */
/* pe_image.c: owns reading a PE image file's bytes: headers, sections, CodeView, exports. */
#include "symbols/pe_image.h"
#include "util/in_file.h"
#include "util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Sizes and offsets from the PE-COFF specification ("PE Format", Microsoft), section by section.
   The file is read field by field, little-endian, never through C structs. */
#define DOS_HEADER_SIZE        64   /* IMAGE_DOS_HEADER */
#define DOS_E_LFANEW           0x3c /* IMAGE_DOS_HEADER.e_lfanew */
#define PE_SIGNATURE_SIZE      4    /* "PE\0\0" */
#define COFF_HEADER_SIZE       20   /* IMAGE_FILE_HEADER */
#define COFF_MACHINE           0
#define COFF_NR_SECTIONS       2
#define COFF_TIME_DATE_STAMP   4
#define COFF_SIZE_OF_OPT       16
#define COFF_CHARACTERISTICS   18
#define OPT_MAGIC_PE32         0x10b
#define OPT_MAGIC_PE32_PLUS    0x20b
#define OPT32_IMAGE_BASE       28 /* u32 in PE32; the PE32+ field is a u64 at 24 */
#define OPT64_IMAGE_BASE       24
#define OPT_FILE_ALIGNMENT     36 /* the same offset in both forms, as the next three */
#define OPT_SIZE_OF_IMAGE      56
#define OPT_SIZE_OF_HEADERS    60
#define OPT_CHECKSUM           64
#define OPT32_NR_RVA_AND_SIZES 92
#define OPT64_NR_RVA_AND_SIZES 108
#define OPT32_DATA_DIRS        96 /* IMAGE_DATA_DIRECTORY[16] follows */
#define OPT64_DATA_DIRS        112
#define DATA_DIR_SIZE          8
#define DATA_DIR_MAX           16
#define DIR_EXPORT             0  /* IMAGE_DIRECTORY_ENTRY_EXPORT */
#define DIR_DEBUG              6  /* IMAGE_DIRECTORY_ENTRY_DEBUG */
#define SECTION_HEADER_SIZE    40 /* IMAGE_SECTION_HEADER */
#define SEC_VIRTUAL_SIZE       8
#define SEC_VIRTUAL_ADDRESS    12
#define SEC_SIZE_OF_RAW_DATA   16
#define SEC_POINTER_TO_RAW     20
#define SEC_CHARACTERISTICS    36
#define SCN_CNT_CODE           0x00000020u
#define SCN_MEM_EXECUTE        0x20000000u
#define RAW_POINTER_ALIGNMENT  0x200 /* the loader rounds PointerToRawData down to this */
#define EXPORT_DIR_SIZE        40    /* IMAGE_EXPORT_DIRECTORY */
#define EXP_BASE               16
#define EXP_NR_FUNCTIONS       20
#define EXP_NR_NAMES           24
#define EXP_ADDRESS_OF_FUNCS   28
#define EXP_ADDRESS_OF_NAMES   32
#define EXP_ADDRESS_OF_ORDS    36
#define DEBUG_ENTRY_SIZE       28 /* IMAGE_DEBUG_DIRECTORY */
#define DBG_TYPE               12
#define DBG_SIZE_OF_DATA       16
#define DBG_ADDRESS_OF_RAW     20
#define DBG_POINTER_TO_RAW     24
#define DEBUG_TYPE_CODEVIEW    2
#define RSDS_SIGNATURE         0x53445352u /* "RSDS" */
#define RSDS_HEADER_SIZE       24          /* signature, GUID, age; the PDB path follows */
#define EXPORT_NAME_MAX        4096        /* sym_table keeps no more of a name */

_Static_assert(OPT32_DATA_DIRS + DATA_DIR_MAX * DATA_DIR_SIZE == 224, "IMAGE_OPTIONAL_HEADER32");
_Static_assert(OPT64_DATA_DIRS + DATA_DIR_MAX * DATA_DIR_SIZE == 240, "IMAGE_OPTIONAL_HEADER64");

/* The buffer and the parsed header fields every lookup needs. */
struct pe_view {
        const uint8_t *data; /* borrowed: the file's bytes */
        size_t size;
        uint64_t sections_off; /* the section table, checked to be inside data */
        uint32_t nr_sections;
        uint32_t headers_end;      /* RVAs below this and below the first section are headers */
        bool is_raw_aligned;       /* FileAlignment >= 0x200: raw pointers are rounded down */
        uint64_t data_dirs_off;    /* IMAGE_DATA_DIRECTORY array */
        uint32_t nr_data_dirs;     /* at most DATA_DIR_MAX */
        struct err_msg *err;       /* borrowed, may be NULL */
        struct sym_table *exports; /* borrowed, may be NULL */
};

/* One section's header, decoded. */
struct pe_section {
        uint32_t va;
        uint64_t virtual_end; /* va + VirtualSize (SizeOfRawData when VirtualSize is 0) */
        uint64_t raw_off;     /* file offset of its data, as the loader rounds it */
        uint32_t raw_size;    /* file-backed bytes: SizeOfRawData, at most the virtual size */
        uint32_t flags;
        char name[9];
};

__attribute__((format(printf, 3, 4))) static int fail(const struct pe_view *v, uint64_t offset,
                                                      const char *fmt, ...)
{
        if (v->err) {
                va_list ap;
                va_start(ap, fmt);
                v->err->offset = offset;
                vsnprintf(v->err->msg, sizeof(v->err->msg), fmt, ap);
                va_end(ap);
        }
        return -EBADMSG;
}

static uint16_t get16(const struct pe_view *v, uint64_t off)
{
        const uint8_t *p = v->data + off;
        return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const struct pe_view *v, uint64_t off)
{
        const uint8_t *p = v->data + off;
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const struct pe_view *v, uint64_t off)
{
        return get32(v, off) | (uint64_t)get32(v, off + 4) << 32;
}

/* whether [off, off + len) is inside the buffer */
static bool has_bytes(const struct pe_view *v, uint64_t off, uint64_t len)
{
        return off <= v->size && len <= v->size - off;
}

static void section_at(const struct pe_view *v, uint32_t i, struct pe_section *s)
{
        uint64_t h = v->sections_off + (uint64_t)i * SECTION_HEADER_SIZE;
        uint32_t vsize = get32(v, h + SEC_VIRTUAL_SIZE);
        uint32_t raw_size = get32(v, h + SEC_SIZE_OF_RAW_DATA);
        uint32_t raw = get32(v, h + SEC_POINTER_TO_RAW);

        s->va = get32(v, h + SEC_VIRTUAL_ADDRESS);
        s->virtual_end = (uint64_t)s->va + (vsize ? vsize : raw_size);
        s->raw_off = v->is_raw_aligned ? raw & ~(uint32_t)(RAW_POINTER_ALIGNMENT - 1) : raw;
        s->raw_size = vsize && vsize < raw_size ? vsize : raw_size;
        s->flags = get32(v, h + SEC_CHARACTERISTICS);
        for (int k = 0; k < 8; k++) {
                uint8_t ch = v->data[h + (uint64_t)k];
                s->name[k] = ch >= 0x20 && ch < 0x7f ? (char)ch : ch ? '?' : 0;
        }
        s->name[8] = 0;
}

/* The section whose virtual range holds rva, by binary search over the table, which
   check_sections found ascending and disjoint; -1 if none. */
static int64_t find_section(const struct pe_view *v, uint32_t rva, struct pe_section *s)
{
        uint32_t lo = 0, hi = v->nr_sections;
        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                uint64_t h = v->sections_off + (uint64_t)mid * SECTION_HEADER_SIZE;
                if (get32(v, h + SEC_VIRTUAL_ADDRESS) <= rva)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo == 0)
                return -1;
        section_at(v, lo - 1, s);
        return rva < s->virtual_end ? (int64_t)(lo - 1) : -1;
}

/* Where [rva, rva + len) is in the file: inside the file-backed data of one section, or of
   the headers. *avail (when not NULL) gets the bytes readable from there on. ref is the
   offset of the field holding rva, where what leads nowhere is reported. */
static int map_rva(const struct pe_view *v, uint32_t rva, uint64_t len, uint64_t ref,
                   const char *what, uint64_t *off, uint64_t *avail)
{
        struct pe_section s;
        uint64_t base, raw_off, raw_size;
        const char *region;

        if (find_section(v, rva, &s) >= 0) {
                base = s.va;
                raw_off = s.raw_off;
                raw_size = s.raw_size;
                region = s.name;
        } else if (rva < v->headers_end) {
                base = 0;
                raw_off = 0;
                raw_size = v->headers_end;
                region = "headers";
        } else {
                return fail(v, ref, "%s RVA 0x%x is in no section", what, rva);
        }
        uint64_t delta = rva - base;
        if (delta >= raw_size)
                return fail(v, ref,
                            "%s RVA 0x%x is past the file data of section '%s' (RVA 0x%llx, "
                            "0x%llx bytes)",
                            what, rva, region, (unsigned long long)base,
                            (unsigned long long)raw_size);
        uint64_t o = raw_off + delta;
        if (o > v->size)
                return fail(v, ref,
                            "%s RVA 0x%x is at file offset 0x%llx, past the end of the file "
                            "(0x%zx bytes)",
                            what, rva, (unsigned long long)o, v->size);
        uint64_t have = raw_size - delta;
        bool is_file_end = have > v->size - o;
        if (is_file_end)
                have = v->size - o;
        if (len > have)
                return fail(v, o,
                            "%s at 0x%llx (RVA 0x%x) needs 0x%llx bytes, but the %s ends after "
                            "0x%llx",
                            what, (unsigned long long)o, rva, (unsigned long long)len,
                            is_file_end ? "file" : "section's file data", (unsigned long long)have);
        *off = o;
        if (avail)
                *avail = have;
        return 0;
}

/* A NUL-terminated string at rva: *len bytes at *off (names longer than EXPORT_NAME_MAX are
   cut there). */
static int map_string(const struct pe_view *v, uint32_t rva, uint64_t ref, const char *what,
                      uint64_t *off, size_t *len)
{
        uint64_t avail;
        int rc = map_rva(v, rva, 1, ref, what, off, &avail);
        if (rc < 0)
                return rc;
        size_t span = avail > EXPORT_NAME_MAX ? EXPORT_NAME_MAX + 1 : (size_t)avail;
        const uint8_t *nul = memchr(v->data + *off, 0, span);
        if (nul)
                *len = (size_t)(nul - (v->data + *off));
        else if (avail > EXPORT_NAME_MAX)
                *len = EXPORT_NAME_MAX;
        else
                return fail(v, *off, "%s at 0x%llx (RVA 0x%x) has no NUL before its data ends",
                            what, (unsigned long long)*off, rva);
        return 0;
}

/* The DOS header, the PE signature, the COFF and optional headers; fills v and id. */
static int read_headers(struct pe_view *v, struct pe_identity *id)
{
        if (v->size < 2 || v->data[0] != 'M' || v->data[1] != 'Z')
                return fail(v, 0, "not a PE image: no MZ signature");
        if (v->size < DOS_HEADER_SIZE)
                return fail(v, 0, "the DOS header needs %d bytes, the file has %zu",
                            DOS_HEADER_SIZE, v->size);
        uint32_t pe = get32(v, DOS_E_LFANEW);
        if (pe > v->size)
                return fail(v, DOS_E_LFANEW, "e_lfanew 0x%x is past the end of the file (0x%zx)",
                            pe, v->size);
        if (has_bytes(v, pe, PE_SIGNATURE_SIZE) && memcmp(v->data + pe, "PE\0\0", 4) != 0)
                return fail(v, pe, "not a PE image: no PE signature at 0x%x (e_lfanew)", pe);
        if (!has_bytes(v, pe, PE_SIGNATURE_SIZE + COFF_HEADER_SIZE))
                return fail(v, pe,
                            "the PE signature and COFF header at 0x%x need %d bytes, the "
                            "file ends at 0x%zx",
                            pe, PE_SIGNATURE_SIZE + COFF_HEADER_SIZE, v->size);
        uint64_t coff = (uint64_t)pe + PE_SIGNATURE_SIZE;
        id->machine = get16(v, coff + COFF_MACHINE);
        id->time_date_stamp = get32(v, coff + COFF_TIME_DATE_STAMP);
        id->characteristics = get16(v, coff + COFF_CHARACTERISTICS);
        v->nr_sections = get16(v, coff + COFF_NR_SECTIONS);
        uint16_t opt_size = get16(v, coff + COFF_SIZE_OF_OPT);

        uint64_t opt = coff + COFF_HEADER_SIZE;
        if (!has_bytes(v, opt, 2))
                return fail(v, opt,
                            "the optional header at 0x%llx is cut off by the end of the "
                            "file",
                            (unsigned long long)opt);
        uint16_t magic = get16(v, opt);
        uint32_t fixed, nr_dirs_at;
        if (magic == OPT_MAGIC_PE32) {
                fixed = OPT32_DATA_DIRS;
                nr_dirs_at = OPT32_NR_RVA_AND_SIZES;
        } else if (magic == OPT_MAGIC_PE32_PLUS) {
                fixed = OPT64_DATA_DIRS;
                nr_dirs_at = OPT64_NR_RVA_AND_SIZES;
                id->is_pe32_plus = true;
        } else {
                return fail(v, opt,
                            "optional header magic 0x%x is neither PE32 (0x10b) nor PE32+ "
                            "(0x20b)",
                            magic);
        }
        if (opt_size < fixed)
                return fail(v, coff + COFF_SIZE_OF_OPT,
                            "SizeOfOptionalHeader %u is less than the %u bytes of a %s header",
                            opt_size, fixed, id->is_pe32_plus ? "PE32+" : "PE32");
        if (!has_bytes(v, opt, opt_size))
                return fail(v, opt,
                            "the optional header at 0x%llx (SizeOfOptionalHeader %u) is "
                            "cut off by the end of the file at 0x%zx",
                            (unsigned long long)opt, opt_size, v->size);
        id->image_base = id->is_pe32_plus ? get64(v, opt + OPT64_IMAGE_BASE)
                                          : get32(v, opt + OPT32_IMAGE_BASE);
        id->size_of_image = get32(v, opt + OPT_SIZE_OF_IMAGE);
        id->checksum = get32(v, opt + OPT_CHECKSUM);
        v->is_raw_aligned = get32(v, opt + OPT_FILE_ALIGNMENT) >= RAW_POINTER_ALIGNMENT;
        v->headers_end = get32(v, opt + OPT_SIZE_OF_HEADERS);

        /* the loader looks at no more than 16 directories, whatever the count says */
        uint32_t nr_dirs = get32(v, opt + nr_dirs_at);
        v->nr_data_dirs = nr_dirs < DATA_DIR_MAX ? nr_dirs : DATA_DIR_MAX;
        if (fixed + v->nr_data_dirs * DATA_DIR_SIZE > opt_size)
                return fail(v, opt + nr_dirs_at,
                            "NumberOfRvaAndSizes %u needs %u bytes of optional header, "
                            "SizeOfOptionalHeader is %u",
                            nr_dirs, fixed + v->nr_data_dirs * DATA_DIR_SIZE, opt_size);
        v->data_dirs_off = opt + fixed;
        v->sections_off = opt + opt_size;
        return 0;
}

/* The section table: inside the file, in ascending and disjoint virtual ranges (as the
   specification requires and the loader checks), which find_section relies on. */
static int check_sections(struct pe_view *v)
{
        uint64_t len = (uint64_t)v->nr_sections * SECTION_HEADER_SIZE;
        if (!has_bytes(v, v->sections_off, len))
                return fail(v, v->sections_off,
                            "the section table at 0x%llx (%u sections, 0x%llx bytes) is cut off "
                            "by the end of the file at 0x%zx",
                            (unsigned long long)v->sections_off, v->nr_sections,
                            (unsigned long long)len, v->size);
        struct pe_section prev, s;
        for (uint32_t i = 0; i < v->nr_sections; i++) {
                section_at(v, i, &s);
                if (i > 0 && s.va < prev.virtual_end)
                        return fail(v, v->sections_off + (uint64_t)i * SECTION_HEADER_SIZE,
                                    "section %u '%s' at RVA 0x%x starts before the end of "
                                    "section %u '%s' (RVA 0x%llx)",
                                    i, s.name, s.va, i - 1, prev.name,
                                    (unsigned long long)prev.virtual_end);
                if (i == 0 && s.va < v->headers_end)
                        v->headers_end = s.va;
                prev = s;
        }
        return 0;
}

/* The RVA and size of data directory k (0, 0 when absent), and where its entry is. */
static void data_dir(const struct pe_view *v, uint32_t k, uint32_t *rva, uint32_t *size,
                     uint64_t *entry)
{
        *entry = v->data_dirs_off + (uint64_t)k * DATA_DIR_SIZE;
        *rva = *size = 0;
        if (k < v->nr_data_dirs) {
                *rva = get32(v, *entry);
                *size = get32(v, *entry + 4);
        }
}

static void copy_pdb_name(char *dst, const uint8_t *src, uint64_t max)
{
        size_t n = 0;
        while (n < max && n < PE_PDB_NAME_SIZE - 1 && src[n]) {
                dst[n] = src[n] < 0x20 || src[n] == 0x7f ? '?' : (char)src[n];
                n++;
        }
        dst[n] = 0;
}

/* The first CodeView RSDS record the debug directory points to, into id. */
static int read_codeview(const struct pe_view *v, struct pe_identity *id)
{
        uint32_t rva, size;
        uint64_t entry, dir;
        data_dir(v, DIR_DEBUG, &rva, &size, &entry);
        uint32_t nr = size / DEBUG_ENTRY_SIZE;
        if (!rva || !nr)
                return 0;
        int rc = map_rva(v, rva, (uint64_t)nr * DEBUG_ENTRY_SIZE, entry, "the debug directory",
                         &dir, NULL);
        if (rc < 0)
                return rc;
        for (uint32_t i = 0; i < nr; i++) {
                uint64_t e = dir + (uint64_t)i * DEBUG_ENTRY_SIZE;
                uint32_t len = get32(v, e + DBG_SIZE_OF_DATA);
                if (get32(v, e + DBG_TYPE) != DEBUG_TYPE_CODEVIEW || len == 0)
                        continue;
                uint32_t ptr = get32(v, e + DBG_POINTER_TO_RAW);
                uint32_t addr = get32(v, e + DBG_ADDRESS_OF_RAW);
                uint64_t cv;
                if (ptr) {
                        if (ptr > v->size)
                                return fail(v, e + DBG_POINTER_TO_RAW,
                                            "the CodeView record's PointerToRawData 0x%x is past "
                                            "the end of the file (0x%zx)",
                                            ptr, v->size);
                        if (!has_bytes(v, ptr, len))
                                return fail(v, ptr,
                                            "the CodeView record at 0x%x (0x%x bytes) is cut off "
                                            "by the end of the file at 0x%zx",
                                            ptr, len, v->size);
                        cv = ptr;
                } else if (addr) {
                        rc = map_rva(v, addr, len, e + DBG_ADDRESS_OF_RAW, "the CodeView record",
                                     &cv, NULL);
                        if (rc < 0)
                                return rc;
                } else {
                        return fail(v, e, "the CodeView debug entry at 0x%llx has no data address",
                                    (unsigned long long)e);
                }
                if (len < 4 || get32(v, cv) != RSDS_SIGNATURE)
                        continue; /* NB10 (a PDB 2.0 record) or unknown: not used by ETW */
                if (len < RSDS_HEADER_SIZE)
                        return fail(v, e + DBG_SIZE_OF_DATA,
                                    "the RSDS record at 0x%llx has 0x%x bytes, less than its "
                                    "%d-byte header",
                                    (unsigned long long)cv, len, RSDS_HEADER_SIZE);
                memcpy(id->pdb_guid, v->data + cv + 4, sizeof(id->pdb_guid));
                id->pdb_age = get32(v, cv + 20);
                copy_pdb_name(id->pdb_name, v->data + cv + RSDS_HEADER_SIZE,
                              len - RSDS_HEADER_SIZE);
                id->has_codeview = true;
                return 0;
        }
        return 0;
}

/* The export directory's fields and its tables, each checked to be inside the file. */
struct pe_exports {
        uint32_t dir_rva, dir_size; /* exports with an RVA in here are forwarders */
        uint32_t base;              /* the ordinal of address table entry 0 */
        uint32_t nr_functions, nr_names;
        uint64_t functions_off, names_off, ordinals_off;
};

static bool is_forwarder(const struct pe_exports *x, uint32_t rva)
{
        return rva >= x->dir_rva && rva - x->dir_rva < x->dir_size;
}

static uint32_t export_flags(const struct pe_view *v, uint32_t rva)
{
        struct pe_section s;
        if (find_section(v, rva, &s) < 0 || s.flags & (SCN_CNT_CODE | SCN_MEM_EXECUTE))
                return 0;
        return SYM_FLAG_DATA;
}

static int read_export_dir(const struct pe_view *v, struct pe_exports *x, bool *has_exports)
{
        uint64_t entry, dir;
        data_dir(v, DIR_EXPORT, &x->dir_rva, &x->dir_size, &entry);
        *has_exports = x->dir_rva != 0;
        if (!*has_exports)
                return 0;
        int rc = map_rva(v, x->dir_rva, EXPORT_DIR_SIZE, entry, "the export directory", &dir, NULL);
        if (rc < 0)
                return rc;
        x->base = get32(v, dir + EXP_BASE);
        x->nr_functions = get32(v, dir + EXP_NR_FUNCTIONS);
        x->nr_names = get32(v, dir + EXP_NR_NAMES);
        /* counts no file could hold are reported as such, before their tables are looked for */
        if (x->nr_functions > v->size / 4)
                return fail(v, dir + EXP_NR_FUNCTIONS,
                            "NumberOfFunctions %u needs more bytes than the file has (0x%zx)",
                            x->nr_functions, v->size);
        if (x->nr_names > v->size / 4)
                return fail(v, dir + EXP_NR_NAMES,
                            "NumberOfNames %u needs more bytes than the file has (0x%zx)",
                            x->nr_names, v->size);
        if (x->nr_functions) {
                rc = map_rva(v, get32(v, dir + EXP_ADDRESS_OF_FUNCS), 4ull * x->nr_functions,
                             dir + EXP_ADDRESS_OF_FUNCS, "the export address table",
                             &x->functions_off, NULL);
                if (rc < 0)
                        return rc;
        }
        if (x->nr_names) {
                rc = map_rva(v, get32(v, dir + EXP_ADDRESS_OF_NAMES), 4ull * x->nr_names,
                             dir + EXP_ADDRESS_OF_NAMES, "the export name pointer table",
                             &x->names_off, NULL);
                if (rc < 0)
                        return rc;
                rc = map_rva(v, get32(v, dir + EXP_ADDRESS_OF_ORDS), 2ull * x->nr_names,
                             dir + EXP_ADDRESS_OF_ORDS, "the export ordinal table",
                             &x->ordinals_off, NULL);
                if (rc < 0)
                        return rc;
        }
        return 0;
}

/* Walks the exports: named ones, then those with only an ordinal. With named NULL it only
   checks (and the table is not touched); with named (a bitmap of nr_functions bits, zeroed) it
   adds to v->exports and counts into *nr. */
static int walk_exports(const struct pe_view *v, const struct pe_exports *x, uint8_t *named,
                        uint32_t *nr)
{
        bool is_emitting = named != NULL;
        uint64_t name_bytes = 0;
        for (uint32_t i = 0; i < x->nr_names; i++) {
                uint64_t ord_at = x->ordinals_off + 2ull * i;
                uint16_t idx = get16(v, ord_at);
                if (idx >= x->nr_functions)
                        return fail(v, ord_at,
                                    "export name %u's ordinal index %u is not below "
                                    "NumberOfFunctions %u",
                                    i, idx, x->nr_functions);
                uint64_t name_at = x->names_off + 4ull * i;
                uint64_t off = 0;
                size_t len = 0;
                int rc = map_string(v, get32(v, name_at), name_at, "an export name", &off, &len);
                if (rc < 0)
                        return rc;
                /* distinct names fit in the file; name pointers that share one long string
                   would make the table's copies of them grow without bound */
                name_bytes += len + 1;
                if (name_bytes > v->size)
                        return fail(v, name_at,
                                    "export names 0 to %u add up to more bytes than the file "
                                    "has (0x%zx): the name pointers share strings",
                                    i, v->size);
                uint32_t rva = get32(v, x->functions_off + 4ull * idx);
                if (!is_emitting)
                        continue;
                if (!len)
                        continue; /* an empty name: shown by its ordinal instead */
                named[idx / 8] |= (uint8_t)(1u << (idx % 8));
                if (!rva || is_forwarder(x, rva))
                        continue;
                if (v->exports)
                        sym_table_add(v->exports, rva, 0, (const char *)v->data + off, len,
                                      export_flags(v, rva));
                (*nr)++;
        }
        if (!is_emitting)
                return 0;
        for (uint32_t k = 0; k < x->nr_functions; k++) {
                uint32_t rva = get32(v, x->functions_off + 4ull * k);
                if ((named[k / 8] & (1u << (k % 8))) || !rva || is_forwarder(x, rva))
                        continue;
                if (v->exports) {
                        char name[24];
                        int n = snprintf(name, sizeof(name), "#%llu",
                                         (unsigned long long)x->base + k);
                        sym_table_add(v->exports, rva, 0, name, (size_t)n, export_flags(v, rva));
                }
                (*nr)++;
        }
        return 0;
}

static int read_exports(const struct pe_view *v, struct pe_identity *id)
{
        struct pe_exports x = {0};
        bool has_exports;
        int rc = read_export_dir(v, &x, &has_exports);
        if (rc < 0 || !has_exports)
                return rc;
        /* check everything first, so that an error leaves the table untouched */
        rc = walk_exports(v, &x, NULL, NULL);
        if (rc < 0)
                return rc;
        uint8_t *named = xcalloc((size_t)x.nr_functions / 8 + 1, 1); /* <= size / 32 bytes */
        rc = walk_exports(v, &x, named, &id->nr_exports);
        free(named);
        return rc;
}

int pe_image_read_mem(const uint8_t *data, size_t size, struct pe_identity *id,
                      struct sym_table *exports, struct err_msg *err)
{
        struct pe_view v = {.data = data, .size = size, .err = err, .exports = exports};

        memset(id, 0, sizeof(*id));
        if (err)
                memset(err, 0, sizeof(*err));
        if (!data)
                v.size = 0;
        int rc = read_headers(&v, id);
        if (rc < 0)
                return rc;
        rc = check_sections(&v);
        if (rc < 0)
                return rc;
        rc = read_codeview(&v, id);
        if (rc < 0)
                return rc;
        rc = read_exports(&v, id);
        if (rc < 0)
                return rc;
        if (exports)
                sym_table_finish(exports, PE_EXPORT_MAX_INFERRED_SIZE);
        return 0;
}

__attribute__((format(printf, 3, 4))) static void file_error(struct err_msg *err, uint64_t offset,
                                                             const char *fmt, ...)
{
        if (!err)
                return;
        va_list ap;
        va_start(ap, fmt);
        err->offset = offset;
        vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        va_end(ap);
}

int pe_image_read_file(const char *path, struct pe_identity *id, struct sym_table *exports,
                       struct err_msg *err)
{
        memset(id, 0, sizeof(*id));
        if (err)
                memset(err, 0, sizeof(*err));
        /* a name from a symbol path or a recording: a FIFO there neither blocks nor is read */
        struct stat st;
        int fd = in_file_open(path, 0, &st);
        if (fd == -EINVAL) {
                file_error(err, 0, "%.200s: not a regular file", path);
                return -EINVAL;
        }
        if (fd < 0) {
                file_error(err, 0, "%.200s: %s", path, strerror(-fd));
                return fd;
        }
        if (st.st_size == 0) {
                file_error(err, 0, "%.200s: the file is empty", path);
                close(fd);
                return -EBADMSG;
        }
        if ((uintmax_t)st.st_size > SIZE_MAX) {
                file_error(err, 0, "%.200s: too large to map", path);
                close(fd);
                return -EFBIG;
        }
        size_t size = (size_t)st.st_size;
        void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
                int e = errno ? errno : EIO;
                file_error(err, 0, "%.200s: cannot map: %s", path, strerror(e));
                close(fd);
                return -e;
        }
        close(fd);
        int rc = pe_image_read_mem(map, size, id, exports, err);
        munmap(map, size);
        if (rc < 0 && err) {
                char prefix[130];
                snprintf(prefix, sizeof(prefix), "%.120s: ", path);
                err_prefix(err, prefix, (int)sizeof(prefix));
        }
        return rc;
}

void pe_guid_format(const uint8_t guid[16], char out[PE_GUID_STRING_SIZE])
{
        snprintf(out, PE_GUID_STRING_SIZE,
                 "{%02X%02X%02X%02X-%02X%02X-%02X%02X-%02X%02X-%02X%02X%02X%02X%02X%02X}", guid[3],
                 guid[2], guid[1], guid[0], guid[5], guid[4], guid[7], guid[6], guid[8], guid[9],
                 guid[10], guid[11], guid[12], guid[13], guid[14], guid[15]);
}

void pe_pdb_key_format(const uint8_t guid[16], uint32_t age, char out[PE_PDB_KEY_SIZE])
{
        snprintf(out, PE_PDB_KEY_SIZE,
                 "%02X%02X%02X%02X%02X%02X%02X%02X%02X%02X%02X%02X%02X%02X%02X%02X%X", guid[3],
                 guid[2], guid[1], guid[0], guid[5], guid[4], guid[7], guid[6], guid[8], guid[9],
                 guid[10], guid[11], guid[12], guid[13], guid[14], guid[15], age);
}

void pe_image_key_format(uint32_t time_date_stamp, uint32_t size_of_image,
                         char out[PE_IMAGE_KEY_SIZE])
{
        snprintf(out, PE_IMAGE_KEY_SIZE, "%08X%X", time_date_stamp, size_of_image);
}

bool pe_identity_matches_image(const struct pe_identity *id, uint32_t time_date_stamp,
                               uint32_t size_of_image)
{
        return id->time_date_stamp == time_date_stamp && id->size_of_image == size_of_image;
}

bool pe_identity_matches_pdb(const struct pe_identity *id, const uint8_t guid[16], uint32_t age)
{
        return id->has_codeview && id->pdb_age == age &&
               memcmp(id->pdb_guid, guid, sizeof(id->pdb_guid)) == 0;
}
