/* SPDX-License-Identifier: MIT */
/* test_pe_image.c: the PE reader on PE32 and PE32+ images built here byte by byte, on their
   truncated and hostile variants, and on small real DLLs from lld-link and GNU ld.
   `test_pe_image --write-corpus DIR` writes the built images as fuzz seeds (tests/corpus/pe). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/pe_image.h"

/* ---- the image builder ---- */

#define IMG_SIZE      0x800 /* the whole file */
#define DOS_E_LFANEW  0x3c
#define PE_AT         0x80 /* e_lfanew */
#define COFF_AT       (PE_AT + 4)
#define OPT_AT        (COFF_AT + 20)
#define SCN_CODE_EXEC 0x60000020u /* CNT_CODE | MEM_EXECUTE | MEM_READ */
#define SCN_RDATA     0x40000040u /* CNT_INITIALIZED_DATA | MEM_READ */
#define TEXT_RVA      0x1000
#define TEXT_FILE     0x200
#define RDATA_RVA     0x2000
#define RDATA_FILE    0x400
#define EDATA_RVA     0x3000
#define EDATA_FILE    0x600
#define EXPORT_BASE   5
#define PDB_NAME      "C:\\src\\fake\\obj\\fake.pdb"
#define TIME_STAMP    0x5f3e2a10u
#define CHECKSUM      0x0001d1a2u
#define SIZE_OF_IMAGE 0x4000u

static const uint8_t guid_bytes[16] = {0x33, 0x22, 0x11, 0x00, 0x55, 0x44, 0x77, 0x66,
                                       0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};

/* A small DLL: .text, .rdata (debug directory with a POGO-like entry and an RSDS record, a data
   export), .edata (the export directory, tables and names, a forwarder string). The offsets of
   everything are kept so that tests can break it on purpose. */
struct img {
        uint8_t b[IMG_SIZE];
        size_t size;
        bool is_plus;
        uint32_t opt_size, dirs, sections; /* file offsets */
        uint32_t dbg, rsds, rsds_size;
        uint32_t exp_dir, eat, names, ords, exp_dir_size;
        uint32_t name_str[5]; /* HeapAlloc, alpha, beta, delta, g_table, in name-table order */
        size_t needed_end;    /* the end of the last byte the reader needs */
};

static void put16(struct img *m, uint32_t off, uint16_t v)
{
        m->b[off] = (uint8_t)v;
        m->b[off + 1] = (uint8_t)(v >> 8);
}

static void put32(struct img *m, uint32_t off, uint32_t v)
{
        put16(m, off, (uint16_t)v);
        put16(m, off + 2, (uint16_t)(v >> 16));
}

static void put64(struct img *m, uint32_t off, uint64_t v)
{
        put32(m, off, (uint32_t)v);
        put32(m, off + 4, (uint32_t)(v >> 32));
}

static uint32_t edata_off(uint32_t rva)
{
        return rva - EDATA_RVA + EDATA_FILE;
}

static void needed(struct img *m, size_t off, size_t len)
{
        if (off + len > m->needed_end)
                m->needed_end = off + len;
}

static void add_section(struct img *m, int i, const char *name, uint32_t vsize, uint32_t rva,
                        uint32_t raw_size, uint32_t raw, uint32_t flags)
{
        uint32_t h = m->sections + 40u * (uint32_t)i;
        memcpy(m->b + h, name, strlen(name));
        put32(m, h + 8, vsize);
        put32(m, h + 12, rva);
        put32(m, h + 16, raw_size);
        put32(m, h + 20, raw);
        put32(m, h + 36, flags);
}

/* a NUL-terminated string at RVA *at in .edata; returns its file offset */
static uint32_t put_edata_string(struct img *m, uint32_t *at, const char *s)
{
        uint32_t off = edata_off(*at);
        memcpy(m->b + off, s, strlen(s) + 1);
        *at += (uint32_t)strlen(s) + 1;
        return off;
}

static void img_build(struct img *m, bool is_plus)
{
        memset(m, 0, sizeof(*m));
        m->size = IMG_SIZE;
        m->is_plus = is_plus;

        /* DOS header */
        m->b[0] = 'M';
        m->b[1] = 'Z';
        put32(m, DOS_E_LFANEW, PE_AT);
        /* PE signature and COFF header */
        memcpy(m->b + PE_AT, "PE\0\0", 4);
        m->opt_size = is_plus ? 240 : 224;
        put16(m, COFF_AT + 0, is_plus ? PE_MACHINE_AMD64 : PE_MACHINE_I386);
        put16(m, COFF_AT + 2, 3);
        put32(m, COFF_AT + 4, TIME_STAMP);
        put16(m, COFF_AT + 16, (uint16_t)m->opt_size);
        put16(m, COFF_AT + 18, is_plus ? 0x2022 : 0x2102);
        /* optional header */
        put16(m, OPT_AT, is_plus ? 0x20b : 0x10b);
        if (is_plus)
                put64(m, OPT_AT + 24, 0x180000000ull);
        else
                put32(m, OPT_AT + 28, 0x10000000u);
        put32(m, OPT_AT + 32, 0x1000); /* SectionAlignment */
        put32(m, OPT_AT + 36, 0x200);  /* FileAlignment */
        put32(m, OPT_AT + 56, SIZE_OF_IMAGE);
        put32(m, OPT_AT + 60, 0x200); /* SizeOfHeaders */
        put32(m, OPT_AT + 64, CHECKSUM);
        put16(m, OPT_AT + 68, 2); /* Subsystem: GUI */
        put32(m, OPT_AT + (is_plus ? 108 : 92), 16);
        m->dirs = OPT_AT + (is_plus ? 112 : 96);
        m->sections = OPT_AT + m->opt_size;
        needed(m, m->sections, 3 * 40);

        add_section(m, 0, ".text", 0x50, TEXT_RVA, 0x200, TEXT_FILE, SCN_CODE_EXEC);
        add_section(m, 1, ".rdata", 0x180, RDATA_RVA, 0x200, RDATA_FILE, SCN_RDATA);
        add_section(m, 2, ".edata", 0x180, EDATA_RVA, 0x200, EDATA_FILE, SCN_RDATA);
        memset(m->b + TEXT_FILE, 0xc3, 0x50);

        /* .rdata: two debug directory entries, the second the CodeView one */
        m->dbg = RDATA_FILE;
        put32(m, m->dirs + 6 * 8, RDATA_RVA);
        put32(m, m->dirs + 6 * 8 + 4, 2 * 28);
        needed(m, m->dbg, 2 * 28);
        put32(m, m->dbg + 12, 13); /* IMAGE_DEBUG_TYPE_POGO: skipped */
        put32(m, m->dbg + 16, 8);
        put32(m, m->dbg + 20, RDATA_RVA + 0x38);
        put32(m, m->dbg + 24, RDATA_FILE + 0x38);
        m->rsds = RDATA_FILE + 0x40;
        m->rsds_size = 24 + (uint32_t)sizeof(PDB_NAME);
        uint32_t cv = m->dbg + 28;
        put32(m, cv + 4, TIME_STAMP);
        put32(m, cv + 12, 2); /* IMAGE_DEBUG_TYPE_CODEVIEW */
        put32(m, cv + 16, m->rsds_size);
        put32(m, cv + 20, RDATA_RVA + 0x40);
        put32(m, cv + 24, m->rsds);
        memcpy(m->b + m->rsds, "RSDS", 4);
        memcpy(m->b + m->rsds + 4, guid_bytes, 16);
        put32(m, m->rsds + 20, 3); /* age */
        memcpy(m->b + m->rsds + 24, PDB_NAME, sizeof(PDB_NAME));
        needed(m, m->rsds, m->rsds_size);
        memset(m->b + RDATA_FILE + 0x100, 0x11, 16); /* g_table, a data export at RVA 0x2100 */

        /* .edata: directory, address table, name pointers, ordinals, then the strings */
        uint32_t nr_functions = 7, nr_names = 5;
        uint32_t eat_rva = EDATA_RVA + 40;
        uint32_t names_rva = eat_rva + 4 * nr_functions;
        uint32_t ords_rva = names_rva + 4 * nr_names;
        uint32_t at = ords_rva + 2 * nr_names;
        m->exp_dir = EDATA_FILE;
        m->eat = edata_off(eat_rva);
        m->names = edata_off(names_rva);
        m->ords = edata_off(ords_rva);
        needed(m, m->exp_dir, 40);
        needed(m, m->eat, 4 * nr_functions);
        needed(m, m->names, 4 * nr_names);
        needed(m, m->ords, 2 * nr_names);
        static const char *const names[5] = {"HeapAlloc", "alpha", "beta", "delta", "g_table"};
        static const uint16_t name_idx[5] = {4, 0, 1, 5, 6};
        for (int i = 0; i < 5; i++) {
                uint32_t rva = at;
                m->name_str[i] = put_edata_string(m, &at, names[i]);
                needed(m, m->name_str[i], strlen(names[i]) + 1);
                put32(m, m->names + 4u * (uint32_t)i, rva);
                put16(m, m->ords + 2u * (uint32_t)i, name_idx[i]);
        }
        uint32_t dll_name_rva = at;
        put_edata_string(m, &at, "fake.dll");
        uint32_t forwarder_rva = at;
        put_edata_string(m, &at, "NTDLL.RtlAllocateHeap");
        static const uint32_t eat[7] = {0x1000, 0x1010, 0x1020, 0, 0 /* forwarder */,
                                        0x1040, 0x2100};
        for (uint32_t k = 0; k < nr_functions; k++)
                put32(m, m->eat + 4 * k, k == 4 ? forwarder_rva : eat[k]);
        m->exp_dir_size = at - EDATA_RVA;
        put32(m, m->dirs + 0, EDATA_RVA);
        put32(m, m->dirs + 4, m->exp_dir_size);
        put32(m, m->exp_dir + 4, TIME_STAMP);
        put32(m, m->exp_dir + 12, dll_name_rva);
        put32(m, m->exp_dir + 16, EXPORT_BASE);
        put32(m, m->exp_dir + 20, nr_functions);
        put32(m, m->exp_dir + 24, nr_names);
        put32(m, m->exp_dir + 28, eat_rva);
        put32(m, m->exp_dir + 32, names_rva);
        put32(m, m->exp_dir + 36, ords_rva);
}

/* ---- reading helpers ---- */

struct result {
        int rc;
        struct pe_identity id;
        struct err_msg err;
        struct sym_table *t; /* owned */
};

/* Reads the first size bytes of m from an exactly-sized heap copy, so that the sanitizers see
   any read past the end. */
static void read_bytes(const uint8_t *bytes, size_t size, struct result *r)
{
        uint8_t *copy = malloc(size ? size : 1);
        assert_non_null(copy);
        if (size)
                memcpy(copy, bytes, size);
        r->t = sym_table_new();
        r->rc = pe_image_read_mem(copy, size, &r->id, r->t, &r->err);
        free(copy);
        if (r->rc < 0) {
                assert_int_equal(r->rc, -EBADMSG);
                assert_true(r->err.msg[0] != 0);
                assert_true(strlen(r->err.msg) < sizeof(r->err.msg));
                assert_true(r->err.offset <= size);
                assert_int_equal(sym_table_count(r->t), 0); /* nothing added on error */
        }
}

static void read_img(const struct img *m, struct result *r)
{
        read_bytes(m->b, m->size, r);
}

static void result_free(struct result *r)
{
        sym_table_free(r->t);
        r->t = NULL;
}

static const char *name_at(const struct sym_table *t, uint64_t rva)
{
        const struct sym_entry *e = sym_table_find(t, rva);
        return e ? sym_table_name(t, e) : NULL;
}

/* the read fails at offset, with a message containing what */
static void expect_error(const struct img *m, uint64_t offset, const char *what)
{
        struct result r;
        read_img(m, &r);
        if (r.rc == 0 || r.err.offset != offset || !strstr(r.err.msg, what))
                print_error("rc %d, offset 0x%llx (expected 0x%llx), message '%s' (expected "
                            "'%s')\n",
                            r.rc, (unsigned long long)r.err.offset, (unsigned long long)offset,
                            r.err.msg, what);
        assert_int_equal(r.rc, -EBADMSG);
        assert_int_equal(r.err.offset, offset);
        assert_non_null(strstr(r.err.msg, what));
        result_free(&r);
}

/* ---- well-formed images ---- */

static void check_good(const struct img *m, struct result *r)
{
        read_img(m, r);
        if (r->rc)
                print_error("%s at 0x%llx\n", r->err.msg, (unsigned long long)r->err.offset);
        assert_int_equal(r->rc, 0);
        const struct pe_identity *id = &r->id;
        assert_int_equal(id->is_pe32_plus, m->is_plus);
        assert_int_equal(id->machine, m->is_plus ? PE_MACHINE_AMD64 : PE_MACHINE_I386);
        assert_true(id->characteristics & PE_FILE_DLL);
        assert_int_equal(id->time_date_stamp, TIME_STAMP);
        assert_int_equal(id->size_of_image, SIZE_OF_IMAGE);
        assert_int_equal(id->checksum, CHECKSUM);
        assert_int_equal(id->image_base, m->is_plus ? 0x180000000ull : 0x10000000u);
        assert_true(id->has_codeview);
        assert_memory_equal(id->pdb_guid, guid_bytes, 16);
        assert_int_equal(id->pdb_age, 3);
        assert_string_equal(id->pdb_name, PDB_NAME);
        assert_true(pe_identity_matches_image(id, TIME_STAMP, SIZE_OF_IMAGE));
        assert_false(pe_identity_matches_image(id, TIME_STAMP, SIZE_OF_IMAGE + 0x1000));
        assert_true(pe_identity_matches_pdb(id, guid_bytes, 3));
        assert_false(pe_identity_matches_pdb(id, guid_bytes, 4));

        /* alpha, beta, #7 (ordinal only), delta, g_table; not the gap (8) nor HeapAlloc (9,
           a forwarder) */
        const struct sym_table *t = r->t;
        assert_int_equal(id->nr_exports, 5);
        assert_int_equal(sym_table_count(t), 5);
        assert_null(name_at(t, 0xfff));
        assert_string_equal(name_at(t, 0x1000), "alpha");
        assert_string_equal(name_at(t, 0x100f), "alpha");
        assert_string_equal(name_at(t, 0x1010), "beta");
        assert_string_equal(name_at(t, 0x1020), "#7");
        assert_string_equal(name_at(t, 0x103f), "#7");
        assert_string_equal(name_at(t, 0x1040), "delta");
        assert_string_equal(name_at(t, 0x2100), "g_table");
        for (uint32_t i = 0; i < sym_table_count(t); i++) {
                const struct sym_entry *e = sym_table_at(t, i);
                assert_string_not_equal(sym_table_name(t, e), "HeapAlloc");
                bool is_data = e->start == 0x2100;
                assert_int_equal(!!(e->flags & SYM_FLAG_DATA), is_data);
                assert_int_equal(e->flags & SYM_FLAG_SIZED, 0);
        }
        /* the last one's size is the cap */
        assert_int_equal(sym_table_find(t, 0x2100)->size, PE_EXPORT_MAX_INFERRED_SIZE);
}

static void test_pe32(void **state)
{
        (void)state;
        struct img m;
        struct result r;
        img_build(&m, false);
        check_good(&m, &r);
        result_free(&r);
}

static void test_pe32_plus(void **state)
{
        (void)state;
        struct img m;
        struct result r;
        img_build(&m, true);
        check_good(&m, &r);
        result_free(&r);
}

static void test_without_table(void **state)
{
        (void)state;
        struct img m;
        struct pe_identity id;
        img_build(&m, true);
        assert_int_equal(pe_image_read_mem(m.b, m.size, &id, NULL, NULL), 0);
        assert_int_equal(id.nr_exports, 5);
        assert_true(id.has_codeview);
        /* a NULL buffer is an empty one */
        assert_int_equal(pe_image_read_mem(NULL, 100, &id, NULL, NULL), -EBADMSG);
}

static void test_variants_that_read(void **state)
{
        (void)state;
        struct img m;
        struct result r;

        /* no data directories at all: identity only */
        img_build(&m, false);
        put32(&m, OPT_AT + 92, 0);
        read_img(&m, &r);
        assert_int_equal(r.rc, 0);
        assert_false(r.id.has_codeview);
        assert_int_equal(r.id.nr_exports, 0);
        assert_int_equal(sym_table_count(r.t), 0);
        assert_int_equal(r.id.time_date_stamp, TIME_STAMP);
        result_free(&r);

        /* one directory: exports but no debug directory */
        img_build(&m, true);
        put32(&m, OPT_AT + 108, 1);
        read_img(&m, &r);
        assert_int_equal(r.rc, 0);
        assert_false(r.id.has_codeview);
        assert_int_equal(r.id.nr_exports, 5);
        result_free(&r);

        /* a count beyond 16: the loader looks at 16 */
        img_build(&m, true);
        put32(&m, OPT_AT + 108, 0xffffffffu);
        read_img(&m, &r);
        assert_int_equal(r.rc, 0);
        assert_true(r.id.has_codeview);
        result_free(&r);

        /* the RSDS record found by its RVA when it has no file pointer */
        img_build(&m, false);
        put32(&m, m.dbg + 28 + 24, 0);
        read_img(&m, &r);
        assert_int_equal(r.rc, 0);
        assert_true(r.id.has_codeview);
        assert_string_equal(r.id.pdb_name, PDB_NAME);
        result_free(&r);

        /* an NB10 record (PDB 2.0) is not RSDS: no CodeView identity, no error */
        img_build(&m, false);
        memcpy(m.b + m.rsds, "NB10", 4);
        read_img(&m, &r);
        assert_int_equal(r.rc, 0);
        assert_false(r.id.has_codeview);
        assert_int_equal(r.id.nr_exports, 5);
        result_free(&r);

        /* a PDB name without NUL ends at the record's end; control characters become '?' */
        img_build(&m, false);
        m.b[m.rsds + 24 + 2] = '\n';
        put32(&m, m.dbg + 28 + 16, 24 + 6);
        read_img(&m, &r);
        assert_int_equal(r.rc, 0);
        assert_string_equal(r.id.pdb_name, "C:?src");
        result_free(&r);

        /* a PDB name longer than MAX_PATH is cut */
        img_build(&m, false);
        put32(&m, m.dbg + 28 + 16, 24 + 300);
        memset(m.b + m.rsds + 24, 'p', 299);
        m.b[m.rsds + 24 + 299] = 0;
        m.needed_end = m.rsds + 24 + 300;
        read_img(&m, &r);
        assert_int_equal(r.rc, 0);
        assert_int_equal(strlen(r.id.pdb_name), PE_PDB_NAME_SIZE - 1);
        result_free(&r);

        /* an empty export name: the export is shown by its ordinal */
        img_build(&m, true);
        m.b[m.name_str[2]] = 0; /* "beta" */
        read_img(&m, &r);
        assert_int_equal(r.rc, 0);
        assert_string_equal(name_at(r.t, 0x1010), "#6");
        result_free(&r);

        /* two names for one address: the first in the name table wins */
        img_build(&m, true);
        put16(&m, m.ords + 2 * 3, 0); /* "delta" now names alpha's slot */
        read_img(&m, &r);
        assert_int_equal(r.rc, 0);
        assert_string_equal(name_at(r.t, 0x1000), "alpha");
        assert_string_equal(name_at(r.t, 0x1040), "#10"); /* delta's slot lost its name */
        result_free(&r);

        /* a name longer than the table keeps is cut at 4096 bytes, the rest not looked at */
        enum { big_size = 0x2000, long_name = 5000 };
        uint8_t *big = calloc(1, big_size);
        assert_non_null(big);
        img_build(&m, true);
        put32(&m, m.sections + 2 * 40 + 8, big_size - EDATA_FILE);
        put32(&m, m.sections + 2 * 40 + 16, big_size - EDATA_FILE);
        put32(&m, m.names + 4, EDATA_RVA + (IMG_SIZE - EDATA_FILE)); /* alpha's */
        memcpy(big, m.b, IMG_SIZE);
        memset(big + IMG_SIZE, 'n', long_name);
        read_bytes(big, big_size, &r);
        assert_int_equal(r.rc, 0);
        assert_int_equal(strlen(name_at(r.t, 0x1000)), 4096);
        result_free(&r);
        /* no NUL at all before the end of the data: still cut, not an error */
        memset(big + IMG_SIZE + long_name, 'n', big_size - IMG_SIZE - long_name);
        read_bytes(big, big_size, &r);
        assert_int_equal(r.rc, 0);
        assert_int_equal(strlen(name_at(r.t, 0x1000)), 4096);
        result_free(&r);
        /* names sharing that string: their copies would outgrow the file, so it is an error */
        for (uint32_t i = 0; i < 5; i++)
                memcpy(big + m.names + 4 * i, big + m.names + 4, 4);
        read_bytes(big, big_size, &r);
        assert_int_equal(r.rc, -EBADMSG);
        assert_int_equal(r.err.offset, m.names + 4);
        assert_non_null(strstr(r.err.msg, "share strings"));
        result_free(&r);
        free(big);

        /* a FileAlignment below 0x200: raw pointers are taken as they are */
        img_build(&m, true);
        put32(&m, OPT_AT + 36, 0x10);
        read_img(&m, &r);
        assert_int_equal(r.rc, 0);
        assert_int_equal(r.id.nr_exports, 5);
        result_free(&r);

        /* with FileAlignment 0x200 the loader rounds PointerToRawData down: 0x61f is 0x600 */
        img_build(&m, true);
        put32(&m, m.sections + 2 * 40 + 20, EDATA_FILE + 0x1f);
        read_img(&m, &r);
        assert_int_equal(r.rc, 0);
        assert_int_equal(r.id.nr_exports, 5);
        result_free(&r);
}

/* ---- truncated images ---- */

/* Every length from 0 to the whole image: an error at or before the cut while the reader
   still needs bytes, success after. */
static void test_every_cut(void **state)
{
        (void)state;
        for (int plus = 0; plus < 2; plus++) {
                struct img m;
                img_build(&m, plus);
                for (size_t cut = 0; cut <= m.size; cut++) {
                        struct result r;
                        read_bytes(m.b, cut, &r);
                        if (cut < m.needed_end) {
                                if (r.rc == 0)
                                        print_error("cut 0x%zx read\n", cut);
                                assert_int_equal(r.rc, -EBADMSG);
                                assert_true(r.err.offset <= cut);
                        } else {
                                assert_int_equal(r.rc, 0);
                                assert_int_equal(r.id.nr_exports, 5);
                        }
                        result_free(&r);
                }
        }
}

static void expect_cut(const struct img *m, size_t cut, uint64_t offset, const char *what)
{
        struct result r;
        read_bytes(m->b, cut, &r);
        if (r.rc == 0 || r.err.offset != offset || !strstr(r.err.msg, what))
                print_error("cut 0x%zx: rc %d, offset 0x%llx (expected 0x%llx), '%s' (expected "
                            "'%s')\n",
                            cut, r.rc, (unsigned long long)r.err.offset, (unsigned long long)offset,
                            r.err.msg, what);
        assert_int_equal(r.rc, -EBADMSG);
        assert_int_equal(r.err.offset, offset);
        assert_non_null(strstr(r.err.msg, what));
        result_free(&r);
}

/* A cut inside a structure is reported at the structure's start; a cut before data that a
   pointer leads to, at the pointer. */
static void test_cut_at_boundaries(void **state)
{
        (void)state;
        for (int plus = 0; plus < 2; plus++) {
                struct img m;
                img_build(&m, plus);
                uint32_t debug_entry = m.dirs + 6 * 8, export_entry = m.dirs;
                expect_cut(&m, 0, 0, "MZ");
                expect_cut(&m, 1, 0, "MZ");
                expect_cut(&m, 2, 0, "DOS header");
                expect_cut(&m, 63, 0, "DOS header");
                expect_cut(&m, 64, DOS_E_LFANEW, "e_lfanew");
                expect_cut(&m, PE_AT - 1, DOS_E_LFANEW, "e_lfanew");
                expect_cut(&m, PE_AT, PE_AT, "COFF header");
                expect_cut(&m, PE_AT + 3, PE_AT, "COFF header");
                expect_cut(&m, COFF_AT, PE_AT, "COFF header");
                expect_cut(&m, OPT_AT - 1, PE_AT, "COFF header");
                expect_cut(&m, OPT_AT, OPT_AT, "optional header");
                expect_cut(&m, OPT_AT + 1, OPT_AT, "optional header");
                expect_cut(&m, OPT_AT + 100, OPT_AT, "optional header");
                expect_cut(&m, m.sections - 1, OPT_AT, "optional header");
                expect_cut(&m, m.sections, m.sections, "section table");
                expect_cut(&m, m.sections + 40, m.sections, "section table");
                expect_cut(&m, m.sections + 119, m.sections, "section table");
                expect_cut(&m, m.sections + 120, debug_entry, "past the end of the file");
                expect_cut(&m, RDATA_FILE - 1, debug_entry, "past the end of the file");
                expect_cut(&m, m.dbg, m.dbg, "debug directory");
                expect_cut(&m, m.dbg + 55, m.dbg, "debug directory");
                expect_cut(&m, m.rsds - 1, m.dbg + 28 + 24, "PointerToRawData");
                expect_cut(&m, m.rsds, m.rsds, "CodeView record");
                expect_cut(&m, m.rsds + m.rsds_size - 1, m.rsds, "CodeView record");
                expect_cut(&m, m.rsds + m.rsds_size, export_entry, "past the end of the file");
                expect_cut(&m, EDATA_FILE, EDATA_FILE, "export directory");
                expect_cut(&m, EDATA_FILE + 39, EDATA_FILE, "export directory");
                expect_cut(&m, m.eat, m.eat, "export address table");
                expect_cut(&m, m.eat + 27, m.eat, "export address table");
                expect_cut(&m, m.names + 19, m.names, "name pointer table");
                expect_cut(&m, m.ords + 9, m.ords, "ordinal table");
                expect_cut(&m, m.name_str[0], m.name_str[0], "export name");
                expect_cut(&m, m.name_str[0] + 3, m.name_str[0], "no NUL");
                expect_cut(&m, m.name_str[4] + 7, m.name_str[4], "no NUL");
        }
}

/* ---- hostile headers and tables ---- */

static void test_hostile_headers(void **state)
{
        (void)state;
        for (int plus = 0; plus < 2; plus++) {
                struct img m;
                uint32_t nr_dirs_at = OPT_AT + (plus ? 108 : 92);

                img_build(&m, plus);
                m.b[1] = 'X';
                expect_error(&m, 0, "no MZ signature");

                img_build(&m, plus);
                put32(&m, DOS_E_LFANEW, 0xfffffff0u);
                expect_error(&m, DOS_E_LFANEW, "e_lfanew");

                img_build(&m, plus);
                put32(&m, DOS_E_LFANEW, IMG_SIZE - 2); /* a signature cut by the end */
                expect_error(&m, IMG_SIZE - 2, "COFF header");

                img_build(&m, plus);
                m.b[PE_AT + 2] = 'X';
                expect_error(&m, PE_AT, "no PE signature");

                img_build(&m, plus);
                put16(&m, OPT_AT, 0x107); /* a ROM image */
                expect_error(&m, OPT_AT, "magic 0x107");

                img_build(&m, plus);
                put16(&m, COFF_AT + 16, 0x10);
                expect_error(&m, COFF_AT + 16, "SizeOfOptionalHeader 16");

                img_build(&m, plus);
                put16(&m, COFF_AT + 16, 0xffff);
                expect_error(&m, OPT_AT, "SizeOfOptionalHeader 65535");

                img_build(&m, plus);
                put16(&m, COFF_AT + 16, (uint16_t)(m.opt_size - 8 * 10)); /* room for 6 */
                expect_error(&m, nr_dirs_at, "NumberOfRvaAndSizes 16");

                img_build(&m, plus);
                put16(&m, COFF_AT + 2, 0xffff);
                expect_error(&m, m.sections, "65535 sections");

                /* .rdata placed before .text ends */
                img_build(&m, plus);
                put32(&m, m.sections + 40 + 12, TEXT_RVA + 0x20);
                expect_error(&m, m.sections + 40, "starts before the end of section 0 '.text'");

                /* a section with a hostile name is named safely in the message */
                img_build(&m, plus);
                memcpy(m.b + m.sections + 40, "\x1b[2J\x01\xff\x7f", 8);
                put32(&m, m.sections + 40 + 12, TEXT_RVA);
                expect_error(&m, m.sections + 40, "section 1 '?[2J?\?\?'");

                /* a section whose raw data is past the end matters only when it is needed */
                img_build(&m, plus);
                put32(&m, m.sections + 20, 0x7ffffe00u); /* .text's */
                struct result r;
                read_img(&m, &r);
                assert_int_equal(r.rc, 0);
                result_free(&r);
        }
}

static void test_hostile_debug(void **state)
{
        (void)state;
        struct img m;
        uint32_t debug_entry, cv;

        img_build(&m, true);
        debug_entry = m.dirs + 6 * 8;
        cv = m.dbg + 28;
        put32(&m, debug_entry, 0x9000);
        expect_error(&m, debug_entry, "debug directory RVA 0x9000 is in no section");

        img_build(&m, true);
        put32(&m, debug_entry + 4, 0x10000000);
        expect_error(&m, m.dbg, "debug directory at 0x400 (RVA 0x2000) needs 0x");

        img_build(&m, true);
        put32(&m, debug_entry + 4, 0x200 / 28 * 28 + 28); /* past .rdata's file data */
        expect_error(&m, m.dbg, "section's file data");

        img_build(&m, true);
        put32(&m, cv + 24, 0x7fffffff);
        expect_error(&m, cv + 24, "PointerToRawData 0x7fffffff");

        img_build(&m, true);
        put32(&m, cv + 16, 0xffffffffu);
        expect_error(&m, m.rsds, "CodeView record at 0x440");

        img_build(&m, true);
        put32(&m, cv + 16, 20);
        expect_error(&m, cv + 16, "RSDS record");

        img_build(&m, true);
        put32(&m, cv + 24, 0);
        put32(&m, cv + 20, 0x9000);
        expect_error(&m, cv + 20, "CodeView record RVA 0x9000");

        img_build(&m, true);
        put32(&m, cv + 24, 0);
        put32(&m, cv + 20, 0);
        expect_error(&m, cv, "no data address");

        /* an error in the exports leaves the identity read before it */
        img_build(&m, true);
        put32(&m, m.exp_dir + 20, 0xffffffffu);
        struct result r;
        read_img(&m, &r);
        assert_int_equal(r.rc, -EBADMSG);
        assert_true(r.id.has_codeview);
        assert_int_equal(r.id.time_date_stamp, TIME_STAMP);
        result_free(&r);
}

static void test_hostile_exports(void **state)
{
        (void)state;
        for (int plus = 0; plus < 2; plus++) {
                struct img m;
                uint32_t export_entry;

                img_build(&m, plus);
                export_entry = m.dirs;
                put32(&m, export_entry, 0x9000);
                expect_error(&m, export_entry, "export directory RVA 0x9000 is in no section");

                img_build(&m, plus);
                put32(&m, m.exp_dir + 20, 0xffffffffu);
                expect_error(&m, m.exp_dir + 20, "NumberOfFunctions 4294967295");

                img_build(&m, plus);
                put32(&m, m.exp_dir + 24, 0x40000000u);
                expect_error(&m, m.exp_dir + 24, "NumberOfNames 1073741824");

                /* a count the file could hold, but not the section */
                img_build(&m, plus);
                put32(&m, m.exp_dir + 20, 0x100);
                expect_error(&m, m.eat, "export address table at 0x628 (RVA 0x3028) needs 0x400");

                img_build(&m, plus);
                put32(&m, m.exp_dir + 28, 0x8000);
                expect_error(&m, m.exp_dir + 28, "export address table RVA 0x8000");

                img_build(&m, plus);
                put32(&m, m.exp_dir + 32, 0xfffffffcu);
                expect_error(&m, m.exp_dir + 32, "name pointer table RVA 0xfffffffc");

                img_build(&m, plus);
                put32(&m, m.exp_dir + 36, EDATA_RVA + 0x17f);
                expect_error(&m, edata_off(EDATA_RVA + 0x17f), "ordinal table");

                /* name RVAs outside any section, and in a section's zero fill */
                img_build(&m, plus);
                put32(&m, m.names + 8, 0x9000);
                expect_error(&m, m.names + 8, "export name RVA 0x9000 is in no section");

                img_build(&m, plus);
                put32(&m, m.sections + 2 * 40 + 8, 0x1000); /* .edata: VirtualSize 0x1000 */
                put32(&m, m.names + 12, EDATA_RVA + 0x400);
                expect_error(&m, m.names + 12, "past the file data of section '.edata'");

                img_build(&m, plus);
                put32(&m, m.names + 16, 0xffffffffu);
                expect_error(&m, m.names + 16, "RVA 0xffffffff");

                /* a name running to the end of its section's data */
                img_build(&m, plus);
                put32(&m, m.sections + 2 * 40 + 8, 0x200);
                memset(m.b + IMG_SIZE - 4, 'x', 4);
                put32(&m, m.names + 4, EDATA_RVA + 0x1fc);
                expect_error(&m, IMG_SIZE - 4, "no NUL");

                /* an ordinal index past the address table */
                img_build(&m, plus);
                put16(&m, m.ords + 2, 7);
                expect_error(&m, m.ords + 2, "ordinal index 7");

                /* names without any address table */
                img_build(&m, plus);
                put32(&m, m.exp_dir + 20, 0);
                expect_error(&m, m.ords, "ordinal index 4 is not below NumberOfFunctions 0");
        }
}

/* Every byte of the needed part set to a few values, then many random changes: the reader
   succeeds or reports an error inside the buffer, never more. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rng(void)
{
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 7;
        rng_state ^= rng_state << 17;
        return (uint32_t)(rng_state >> 16);
}

static void test_mutations(void **state)
{
        (void)state;
        static const uint8_t values[] = {0x00, 0xff, 0x7f, 0x80, 0x01};
        static const uint32_t words[] = {0,           1,        0x7fffffffu, 0x80000000u,
                                         0xffffffffu, IMG_SIZE, 0x3000,      0x1000,
                                         0xfffffffcu, 0x10000u, 0x200,       0x2100};
        unsigned nr_read = 0, nr_failed = 0;
        for (int plus = 0; plus < 2; plus++) {
                struct img m, x;
                img_build(&m, plus);
                for (size_t off = 0; off < m.needed_end; off++) {
                        for (size_t k = 0; k < sizeof(values); k++) {
                                struct result r;
                                x = m;
                                x.b[off] = values[k];
                                read_img(&x, &r);
                                if (r.rc)
                                        nr_failed++;
                                else
                                        nr_read++;
                                result_free(&r);
                        }
                }
                for (int i = 0; i < 20000; i++) {
                        struct result r;
                        x = m;
                        int nr_changes = 1 + (int)(rng() % 4);
                        for (int c = 0; c < nr_changes; c++) {
                                uint32_t off = rng() % (IMG_SIZE - 4);
                                if (rng() % 2)
                                        put32(&x, off, words[rng() % (sizeof(words) / 4)]);
                                else
                                        x.b[off] = (uint8_t)rng();
                        }
                        if (rng() % 4 == 0)
                                x.size = rng() % (IMG_SIZE + 1);
                        read_img(&x, &r);
                        if (r.rc)
                                nr_failed++;
                        else
                                nr_read++;
                        result_free(&r);
                }
        }
        assert_true(nr_read > 0);
        assert_true(nr_failed > 0);
}

/* ---- files ---- */

static void test_read_file(void **state)
{
        (void)state;
        const char *base = getenv("TMPDIR");
        char path[4096];
        snprintf(path, sizeof(path), "%s/test_pe_image.XXXXXX", base ? base : "/tmp");
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        struct img m;
        img_build(&m, true);
        assert_int_equal(write(fd, m.b, m.size), (ssize_t)m.size);

        struct pe_identity id;
        struct err_msg err;
        struct sym_table *t = sym_table_new();
        assert_int_equal(pe_image_read_file(path, &id, t, &err), 0);
        assert_int_equal(id.nr_exports, 5);
        assert_string_equal(name_at(t, 0x1010), "beta");
        assert_string_equal(id.pdb_name, PDB_NAME);
        sym_table_free(t);

        /* bad contents: the message names the file */
        assert_int_equal(ftruncate(fd, 0x300), 0);
        assert_int_equal(pe_image_read_file(path, &id, NULL, &err), -EBADMSG);
        assert_non_null(strstr(err.msg, path));
        assert_int_equal(err.offset, m.dirs + 6 * 8);

        assert_int_equal(ftruncate(fd, 0), 0);
        assert_int_equal(pe_image_read_file(path, &id, NULL, &err), -EBADMSG);
        assert_non_null(strstr(err.msg, "empty"));
        close(fd);
        unlink(path);

        assert_int_equal(pe_image_read_file(path, &id, NULL, &err), -ENOENT);
        assert_non_null(strstr(err.msg, path));
        assert_int_equal(pe_image_read_file(base ? base : "/tmp", &id, NULL, &err), -EINVAL);
        assert_int_equal(pe_image_read_file(path, &id, NULL, NULL), -ENOENT);
}

/* The real DLLs in the seed corpus next to this file; their expected values are what binutils'
   objdump -p prints for them. lld-x64.dll and lld-x86.dll: clang --target=*-pc-windows-msvc,
   then lld-link /dll /noentry /nodefaultlib /def /debug /brepro; gnu-ld-x64.dll: as, objcopy -O
   pe-x86-64, ld -m i386pep --shared --build-id. Exports: alpha, beta, g_value (DATA),
   hidden_ord (NONAME) and HeapAlloc = NTDLL.RtlAllocateHeap. */
struct real_dll {
        const char *name;
        uint16_t machine;
        uint32_t time_date_stamp, size_of_image;
        uint64_t image_base;
        const char *guid, *pdb_key, *pdb_name;
        uint32_t alpha, beta, g_value, hidden_ord, hidden_ordinal;
};

static const struct real_dll real_dlls[] = {
        {"lld-x64.dll", PE_MACHINE_AMD64, 0xc723e6e6u, 0x4000, 0x180000000ull,
         "{108690AC-8D07-EAE6-4C4C-44205044422E}", "108690AC8D07EAE64C4C44205044422E1", "tiny.pdb",
         0x1000, 0x1010, 0x3000, 0x1020, 5},
        {"lld-x86.dll", PE_MACHINE_I386, 0x6ed516beu, 0x4000, 0x10000000u,
         "{75232D36-57D5-EA9F-4C4C-44205044422E}", "75232D3657D5EA9F4C4C44205044422E1",
         "tiny32.pdb", 0x1000, 0x1010, 0x3000, 0x1020, 5},
        {"gnu-ld-x64.dll", PE_MACHINE_AMD64, 0x6b023348u, 0x6000, 0x180000000ull,
         "{7D84F22E-0491-771F-31B6-3673E285B58E}", "7D84F22E0491771F31B63673E285B58E1", "", 0x1000,
         0x1010, 0x2000, 0x1020, 5},
};

static void test_real_dlls(void **state)
{
        (void)state;
        const char *slash = strrchr(__FILE__, '/');
        if (__FILE__[0] != '/' || !slash) {
                print_message("skipped: __FILE__ (%s) is not an absolute path, so the corpus "
                              "directory is unknown\n",
                              __FILE__);
                skip();
        }
        for (size_t i = 0; i < sizeof(real_dlls) / sizeof(real_dlls[0]); i++) {
                const struct real_dll *d = &real_dlls[i];
                char path[4096];
                snprintf(path, sizeof(path), "%.*s/../corpus/pe/%s", (int)(slash - __FILE__),
                         __FILE__, d->name);
                struct pe_identity id;
                struct err_msg err;
                struct sym_table *t = sym_table_new();
                int rc = pe_image_read_file(path, &id, t, &err);
                if (rc)
                        print_error("%s\n", err.msg);
                assert_int_equal(rc, 0);
                assert_int_equal(id.machine, d->machine);
                assert_int_equal(id.is_pe32_plus, d->machine == PE_MACHINE_AMD64);
                assert_true(id.characteristics & PE_FILE_DLL);
                assert_int_equal(id.time_date_stamp, d->time_date_stamp);
                assert_int_equal(id.size_of_image, d->size_of_image);
                assert_int_equal(id.image_base, d->image_base);
                assert_true(id.has_codeview);
                char guid[PE_GUID_STRING_SIZE], key[PE_PDB_KEY_SIZE];
                pe_guid_format(id.pdb_guid, guid);
                pe_pdb_key_format(id.pdb_guid, id.pdb_age, key);
                assert_string_equal(guid, d->guid);
                assert_string_equal(key, d->pdb_key);
                assert_int_equal(id.pdb_age, 1);
                assert_string_equal(id.pdb_name, d->pdb_name);
                assert_int_equal(id.nr_exports, 4);
                assert_string_equal(name_at(t, d->alpha), "alpha");
                assert_string_equal(name_at(t, d->beta), "beta");
                assert_string_equal(name_at(t, d->g_value), "g_value");
                assert_true(sym_table_find(t, d->g_value)->flags & SYM_FLAG_DATA);
                char ord[16];
                snprintf(ord, sizeof(ord), "#%u", d->hidden_ordinal);
                assert_string_equal(name_at(t, d->hidden_ord), ord);
                for (uint32_t k = 0; k < sym_table_count(t); k++)
                        assert_string_not_equal(sym_table_name(t, sym_table_at(t, k)), "HeapAlloc");
                sym_table_free(t);
        }
}

static void test_guid_strings(void **state)
{
        (void)state;
        char guid[PE_GUID_STRING_SIZE], key[PE_PDB_KEY_SIZE];
        pe_guid_format(guid_bytes, guid);
        assert_string_equal(guid, "{00112233-4455-6677-8899-AABBCCDDEEFF}");
        pe_pdb_key_format(guid_bytes, 0x1a, key);
        assert_string_equal(key, "00112233445566778899AABBCCDDEEFF1A");
        pe_pdb_key_format(guid_bytes, 0xffffffffu, key);
        assert_string_equal(key, "00112233445566778899AABBCCDDEEFFFFFFFFFF");
        struct pe_identity id = {0};
        assert_false(pe_identity_matches_pdb(&id, id.pdb_guid, 0)); /* no CodeView record */
}

/* ---- seeds for fuzz_pe ---- */

static int write_seed(const char *dir, const char *name, const uint8_t *b, size_t size)
{
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(b, 1, size, f) != size || fclose(f) != 0) {
                fprintf(stderr, "%s: cannot write\n", path);
                return 1;
        }
        return 0;
}

static int write_corpus(const char *dir)
{
        struct img m;
        int rc = 0;
        img_build(&m, false);
        rc |= write_seed(dir, "built-pe32.dll", m.b, m.size);
        img_build(&m, true);
        rc |= write_seed(dir, "built-pe32plus.dll", m.b, m.size);
        rc |= write_seed(dir, "cut-in-exports.dll", m.b, m.names + 6);
        rc |= write_seed(dir, "cut-in-section-table.dll", m.b, m.sections + 50);
        img_build(&m, true);
        put32(&m, m.exp_dir + 20, 0xffffffffu);
        rc |= write_seed(dir, "huge-nr-functions.dll", m.b, m.size);
        img_build(&m, false);
        put32(&m, m.names + 8, 0x9000);
        rc |= write_seed(dir, "name-outside.dll", m.b, m.size);
        img_build(&m, false);
        put32(&m, m.sections + 40 + 12, TEXT_RVA + 0x20);
        rc |= write_seed(dir, "sections-overlap.dll", m.b, m.size);
        return rc;
}

int main(int argc, char **argv)
{
        if (argc == 3 && strcmp(argv[1], "--write-corpus") == 0)
                return write_corpus(argv[2]);
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_pe32),
                cmocka_unit_test(test_pe32_plus),
                cmocka_unit_test(test_without_table),
                cmocka_unit_test(test_variants_that_read),
                cmocka_unit_test(test_every_cut),
                cmocka_unit_test(test_cut_at_boundaries),
                cmocka_unit_test(test_hostile_headers),
                cmocka_unit_test(test_hostile_debug),
                cmocka_unit_test(test_hostile_exports),
                cmocka_unit_test(test_mutations),
                cmocka_unit_test(test_read_file),
                cmocka_unit_test(test_real_dlls),
                cmocka_unit_test(test_guid_strings),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
