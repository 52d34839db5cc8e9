/* SPDX-License-Identifier: MIT */
/* test_pdb.c: the PDB reader from bytes (MSF files built here, every length checked, errors at
   their offsets) and from the fixtures tests/shell/pdb_fixture.sh builds with clang and lld-link:
   identity, publics, procedures and lines equal to what llvm-pdbutil reads; names undecorated
   as WPA shows them; the symbol store choosing a PDB by GUID and age, refusing another build,
   and finding it in a directory, a symbol store, and through _NT_SYMBOL_PATH. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "symbols/pdb.h"
#include "symbols/pe_image.h"
#include "symbols/symbols.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- MSF files built here ---- */

#define BS 512u

struct blob {
        const uint8_t *p;
        uint32_t size;
        bool is_nil;
};

static void put16(uint8_t *p, uint16_t v)
{
        p[0] = (uint8_t)v;
        p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
        for (int i = 0; i < 4; i++)
                p[i] = (uint8_t)(v >> (8 * i));
}

/* Block 0 the superblock, 1 and 2 free-block maps, then each stream in blocks of its own, then
   the directory, then the block map. Returns the file's size; *first_block[i] is stream i's. */
static size_t msf_build(uint8_t **out, const struct blob *streams, uint32_t nr,
                        uint32_t *first_block)
{
        uint32_t block = 3, dir_words = 1 + nr;
        for (uint32_t i = 0; i < nr; i++) {
                uint32_t nb = (streams[i].size + BS - 1) / BS;
                if (first_block)
                        first_block[i] = block;
                block += nb;
                dir_words += nb;
        }
        uint32_t dir_block = block, nr_dir_blocks = (dir_words * 4 + BS - 1) / BS;
        uint32_t map_block = dir_block + nr_dir_blocks, nr_blocks = map_block + 1;
        uint8_t *b = calloc(nr_blocks, BS);
        memcpy(b,
               "Microsoft C/C++ MSF 7.00\r\n\x1a"
               "DS\0\0\0",
               32);
        put32(b + 32, BS);
        put32(b + 36, 1);
        put32(b + 40, nr_blocks);
        put32(b + 44, dir_words * 4);
        put32(b + 52, map_block);
        uint8_t *dir = b + (size_t)dir_block * BS;
        put32(dir, nr);
        uint32_t k = 1 + nr, blk = 3;
        for (uint32_t i = 0; i < nr; i++) {
                put32(dir + 4 * (1 + i), streams[i].is_nil ? 0xffffffffu : streams[i].size);
                if (streams[i].size)
                        memcpy(b + (size_t)blk * BS, streams[i].p, streams[i].size);
                for (uint32_t j = 0; j < (streams[i].size + BS - 1) / BS; j++)
                        put32(dir + 4 * k++, blk++);
        }
        for (uint32_t i = 0; i < nr_dir_blocks; i++)
                put32(b + (size_t)map_block * BS + 4 * i, dir_block + i);
        *out = b;
        return (size_t)nr_blocks * BS;
}

static const uint8_t test_guid[16] = {0x82, 0xac, 0xc7, 0x37, 0x7d, 0xdf, 0x4a, 0x21,
                                      0x4c, 0x4c, 0x44, 0x20, 0x50, 0x44, 0x42, 0x2e};

/* PDB info stream: version, signature, age, GUID, an empty named-stream map */
static uint32_t info_stream(uint8_t *p, uint32_t age)
{
        memset(p, 0, 64);
        put32(p, 20000404);
        put32(p + 4, 0x5f000000);
        put32(p + 8, age);
        memcpy(p + 12, test_guid, 16);
        put32(p + 28, 0); /* string buffer size */
        put32(p + 32, 0); /* entries */
        put32(p + 36, 1); /* capacity */
        put32(p + 40, 1); /* present: one word */
        put32(p + 44, 0);
        put32(p + 48, 0); /* deleted: no words */
        return 52;
}

/* A DBI header: publics in stream 5, symbol records in 6, the optional debug header's section
   headers in stream 7; module infos of mod_size bytes (none here) */
static uint32_t dbi_stream(uint8_t *p, int32_t mod_size)
{
        memset(p, 0, 128);
        put32(p, 0xffffffffu);
        put32(p + 4, 19990903);
        put32(p + 8, 1);
        put16(p + 12, 0xffff);
        put16(p + 16, 5);
        put16(p + 20, 6);
        put32(p + 24, (uint32_t)mod_size);
        put32(p + 48, 22); /* optional debug header: 11 stream indexes */
        put16(p + 58, PE_MACHINE_AMD64);
        for (int i = 0; i < 11; i++)
                put16(p + 64 + 2 * i, i == 5 ? 7 : 0xffff);
        return 64 + 22;
}

/* The publics stream: its header, the GSI hash header and nr hash records for offsets */
static uint32_t publics_stream(uint8_t *p, const uint32_t *offsets, uint32_t nr)
{
        uint32_t hr = 8 * nr;
        memset(p, 0, 28 + 16 + hr);
        put32(p, 16 + hr);
        put32(p + 28, 0xffffffffu);
        put32(p + 32, 0xeffe0000u + 19990810u);
        put32(p + 36, hr);
        for (uint32_t i = 0; i < nr; i++) {
                put32(p + 44 + 8 * i, offsets[i] + 1);
                put32(p + 48 + 8 * i, 1);
        }
        return 28 + 16 + hr;
}

static uint32_t pub32(uint8_t *p, const char *name, uint16_t seg, uint32_t off)
{
        uint32_t len = 14 + (uint32_t)strlen(name) + 1;
        uint32_t padded = (len + 3) & ~3u;
        memset(p, 0, padded);
        put16(p, (uint16_t)(padded - 2));
        put16(p + 2, PDB_S_PUB32);
        put32(p + 4, PDB_PUB_FUNCTION);
        put32(p + 8, off);
        put16(p + 12, seg);
        memcpy(p + 14, name, strlen(name));
        return padded;
}

/* one .text section header at RVA 0x1000 */
static uint32_t section_headers(uint8_t *p)
{
        memset(p, 0, 40);
        memcpy(p, ".text", 5);
        put32(p + 8, 0x200);
        put32(p + 12, 0x1000);
        return 40;
}

struct collected {
        char names[8][64];
        uint32_t rvas[8];
        uint32_t nr;
};

static int collect(void *ctx, const struct pdb_symbol *sym)
{
        struct collected *c = ctx;
        if (c->nr < 8) {
                snprintf(c->names[c->nr], sizeof(c->names[0]), "%s", sym->name);
                c->rvas[c->nr++] = sym->rva;
        }
        return 0;
}

/* A PDB built here: its identity, its public through the hash, its RVA through the section
   headers of the debug header. */
static void test_built_pdb(void **state)
{
        (void)state;
        uint8_t info[64], dbi[128], pubs[128], recs[64], secs[40];
        uint32_t rec1 = pub32(recs, "?foo@@YAXXZ", 1, 0x10);
        uint32_t rec2 = pub32(recs + rec1, "_bar", 1, 0x20);
        uint32_t offsets[] = {0, rec1};
        struct blob streams[] = {{NULL, 0, false},
                                 {info, info_stream(info, 3), false},
                                 {NULL, 0, true},
                                 {dbi, dbi_stream(dbi, 0), false},
                                 {NULL, 0, true},
                                 {pubs, publics_stream(pubs, offsets, 2), false},
                                 {recs, rec1 + rec2, false},
                                 {secs, section_headers(secs), false}};
        uint8_t *file;
        size_t size = msf_build(&file, streams, 8, NULL);
        struct pdb *p;
        struct err_msg err = {0};
        assert_int_equal(pdb_open_mem(file, size, &p, &err), 0);
        const struct pdb_info *in = pdb_get_info(p);
        assert_int_equal(in->age, 3);
        assert_int_equal(in->version, 20000404);
        assert_int_equal(in->machine, PE_MACHINE_AMD64);
        assert_int_equal(in->nr_sections, 1);
        assert_memory_equal(in->guid, test_guid, 16);
        assert_true(pdb_matches(p, test_guid, 3));
        assert_false(pdb_matches(p, test_guid, 2));
        assert_int_equal(pdb_named_stream(p, "/names"), -ENOENT);
        assert_int_equal(pdb_rva(p, 1, 0x10), 0x1010);
        assert_int_equal(pdb_rva(p, 2, 0x10), 0);
        struct collected c = {.nr = 0};
        assert_int_equal(pdb_publics(p, collect, &c, &err), 0);
        assert_int_equal(c.nr, 2);
        assert_string_equal(c.names[0], "?foo@@YAXXZ");
        assert_int_equal(c.rvas[0], 0x1010);
        assert_string_equal(c.names[1], "_bar");
        assert_int_equal(c.rvas[1], 0x1020);
        c.nr = 0;
        assert_int_equal(pdb_procedures(p, collect, &c, &err), 0);
        assert_int_equal(c.nr, 0);
        struct pdb_lines *l;
        assert_int_equal(pdb_lines_read(p, &l, &err), 0);
        assert_int_equal(pdb_lines_count(l), 0);
        pdb_lines_free(l);
        pdb_close(p);

        /* a hash record that points past the symbol records: the error is at the record */
        uint32_t first[8];
        uint32_t bad_offsets[] = {0, 4000};
        streams[5].size = publics_stream(pubs, bad_offsets, 2);
        free(file);
        size = msf_build(&file, streams, 8, first);
        assert_int_equal(pdb_open_mem(file, size, &p, &err), 0);
        assert_int_equal(pdb_publics(p, collect, &c, &err), -EBADMSG);
        assert_int_equal(err.offset, (uint64_t)first[5] * BS + 44 + 8);
        assert_non_null(strstr(err.msg, "hash record 1"));
        pdb_close(p);
        free(file);
}

/* Damaged containers: each error names the offset of what is wrong. */
static void test_bad_containers(void **state)
{
        (void)state;
        uint8_t info[64], dbi[128];
        struct blob streams[] = {{NULL, 0, false},
                                 {info, info_stream(info, 1), false},
                                 {NULL, 0, true},
                                 {dbi, dbi_stream(dbi, 0), false}};
        put16(dbi + 64 + 2 * 5, 0xffff); /* no section headers */
        uint32_t first[4];
        uint8_t *file;
        size_t size = msf_build(&file, streams, 4, first);
        struct pdb *p = NULL;
        struct err_msg err = {0};

        assert_int_equal(pdb_open_mem(file, 40, &p, &err), -EBADMSG);
        assert_int_equal(err.offset, 0);
        assert_null(p);

        uint8_t *copy = malloc(size);
        memcpy(copy, file, size);
        copy[5] = 'X'; /* the magic */
        assert_int_equal(pdb_open_mem(copy, size, &p, &err), -EBADMSG);
        assert_int_equal(err.offset, 0);

        memcpy(copy, file, size);
        put32(copy + 32, 1000); /* block size */
        assert_int_equal(pdb_open_mem(copy, size, &p, &err), -EBADMSG);
        assert_int_equal(err.offset, 32);

        /* the file cut: fewer blocks than the superblock counts */
        assert_int_equal(pdb_open_mem(file, size - BS, &p, &err), -EBADMSG);
        assert_int_equal(err.offset, 40);

        /* a stream's block past the last block: reported where the directory lists it */
        memcpy(copy, file, size);
        uint32_t dir_block = (uint32_t)(size / BS) - 2;   /* the directory, then the block map */
        size_t at = (size_t)dir_block * BS + 4 * (1 + 4); /* stream 0's size is 0: 1st block */
        put32(copy + at, 9999);                           /* the info stream's block */
        assert_int_equal(pdb_open_mem(copy, size, &p, &err), -EBADMSG);
        assert_int_equal(err.offset, at);

        /* a DBI substream longer than the stream: at the size field, in the DBI's block */
        memcpy(copy, file, size);
        put32(copy + (size_t)first[3] * BS + 24, 100000);
        assert_int_equal(pdb_open_mem(copy, size, &p, &err), -EBADMSG);
        assert_int_equal(err.offset, (uint64_t)first[3] * BS + 24);
        assert_non_null(strstr(err.msg, "stream 3"));

        /* an age of 5: opens, does not match age 1 */
        memcpy(copy, file, size);
        put32(copy + (size_t)first[1] * BS + 8, 5);
        assert_int_equal(pdb_open_mem(copy, size, &p, &err), 0);
        assert_false(pdb_matches(p, test_guid, 1));
        pdb_close(p);
        free(copy);
        free(file);
}

static void test_undecorate(void **state)
{
        (void)state;
        char out[256];
        pdb_name_undecorate("_main", true, out, sizeof(out));
        assert_string_equal(out, "main");
        pdb_name_undecorate("_std_call@8", true, out, sizeof(out));
        assert_string_equal(out, "std_call");
        pdb_name_undecorate("@fast_call@8", true, out, sizeof(out));
        assert_string_equal(out, "fast_call");
        pdb_name_undecorate("_main", false, out, sizeof(out)); /* x64 has no such decoration */
        assert_string_equal(out, "_main");
        pdb_name_undecorate("__security_cookie", true, out, sizeof(out));
        assert_string_equal(out, "_security_cookie");
        assert_int_equal(pdb_name_undecorate("c_leaf", true, out, 3), 6);
        assert_string_equal(out, "c_");
        if (*pdb_demangler_status()) {
                pdb_name_undecorate("?area@Shape@fix@@QEBAHH@Z", false, out, sizeof(out));
                assert_string_equal(out, "?area@Shape@fix@@QEBAHH@Z");
                fprintf(stderr, "skipped the C++ names: %s\n", pdb_demangler_status());
                skip();
        }
        static const char *const cases[][2] = {
                {"?area@Shape@fix@@QEBAHH@Z", "fix::Shape::area"},
                {"?area@Shape@fix@@QBEHH@Z", "fix::Shape::area"},
                {"??$twice@H@fix@@YAHH@Z", "fix::twice<int>"},
                {"??R?$C@H@@QEBAHH@Z", "C<int>::operator()"},
                {"??1Foo@@UEAA@XZ", "Foo::~Foo"},
                {"?fn@?A0x1234@@YAXXZ", "`anonymous namespace'::fn"},
                {"?x@@3HA", "x"},
                {"?broken@@", "?broken@@"},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                pdb_name_undecorate(cases[i][0], false, out, sizeof(out));
                assert_string_equal(out, cases[i][1]);
        }
}

/* ---- the fixtures ---- */

static const char *fixture_dir(void)
{
        const char *d = getenv("PDB_FIXTURE_DIR");
        char path[4096];
        snprintf(path, sizeof(path), "%s/pdbfix.pdb", d ? d : "");
        if (!d || access(path, R_OK) != 0) {
                fprintf(stderr,
                        "skipped: no PDB fixtures (PDB_FIXTURE_DIR=%s; pdb_fixture.sh "
                        "builds them where clang, lld-link and llvm-pdbutil are)\n",
                        d ? d : "");
                return NULL;
        }
        return d;
}

static struct pdb *fixture_open(const char *dir, const char *name)
{
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s.pdb", dir, name);
        struct pdb *p = NULL;
        struct err_msg err = {0};
        if (pdb_open_file(path, &p, &err) < 0)
                fail_msg("%s (at byte %" PRIu64 ")", err.msg, err.offset);
        return p;
}

/* The lines of DIR/NAME.SUFFIX, each cut at its newline; NULL-terminated, one allocation. */
static char **read_lines(const char *dir, const char *name, const char *suffix)
{
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s.%s", dir, name, suffix);
        FILE *f = fopen(path, "r");
        if (!f)
                fail_msg("%s: %s", path, strerror(errno));
        char **lines = calloc(1024, sizeof(*lines));
        char buf[1024];
        size_t n = 0;
        while (n < 1023 && fgets(buf, sizeof(buf), f)) {
                buf[strcspn(buf, "\n")] = 0;
                lines[n++] = strdup(buf);
        }
        fclose(f);
        return lines;
}

static void free_lines(char **lines)
{
        for (size_t i = 0; lines[i]; i++)
                free(lines[i]);
        free(lines);
}

struct sym_list {
        char lines[128][300];
        uint32_t nr;
        bool is_x86;
};

static int list_public(void *ctx, const struct pdb_symbol *sym)
{
        struct sym_list *l = ctx;
        if (l->nr < 128)
                snprintf(l->lines[l->nr++], sizeof(l->lines[0]), "%s\t%s\t%u\t%u\t%x", sym->name,
                         sym->flags & PDB_PUB_FUNCTION ? "function" : "none", sym->segment,
                         sym->offset, sym->rva);
        return 0;
}

static int list_proc(void *ctx, const struct pdb_symbol *sym)
{
        struct sym_list *l = ctx;
        if (l->nr < 128)
                snprintf(l->lines[l->nr++], sizeof(l->lines[0]), "%s\t%x\t%u", sym->name, sym->rva,
                         sym->size);
        return 0;
}

/* every line of want is in got, and as many */
static void expect_same_set(char **want, const struct sym_list *got, const char *what)
{
        uint32_t nr_want = 0;
        for (; want[nr_want]; nr_want++) {
                bool is_found = false;
                for (uint32_t i = 0; i < got->nr && !is_found; i++)
                        is_found = strcmp(got->lines[i], want[nr_want]) == 0;
                if (!is_found)
                        fail_msg("%s: llvm-pdbutil's \"%s\" is not among ours", what,
                                 want[nr_want]);
        }
        assert_int_equal(got->nr, nr_want);
}

/* The fixtures' identity is their images' CodeView record and llvm-pdbutil's key. */
static void test_fixture_identity(void **state)
{
        (void)state;
        const char *dir = fixture_dir();
        if (!dir)
                skip();
        static const char *const names[] = {"pdbfix", "pdbfix32"};
        for (int i = 0; i < 2; i++) {
                struct pdb *p = fixture_open(dir, names[i]);
                const struct pdb_info *in = pdb_get_info(p);
                char key[PE_PDB_KEY_SIZE], path[4096];
                pe_pdb_key_format(in->guid, in->age, key);
                char **want = read_lines(dir, names[i], "key");
                assert_string_equal(key, want[0]);
                free_lines(want);
                assert_int_equal(in->machine, i ? PE_MACHINE_I386 : PE_MACHINE_AMD64);
                snprintf(path, sizeof(path), "%s/%s.exe", dir, names[i]);
                struct pe_identity id;
                assert_int_equal(pe_image_read_file(path, &id, NULL, NULL), 0);
                assert_true(id.has_codeview);
                assert_true(pdb_matches(p, id.pdb_guid, id.pdb_age));
                assert_false(pdb_matches(p, id.pdb_guid, id.pdb_age + 1));
                assert_int_equal(pdb_named_stream(p, "/names") > 0, 1);
                pdb_close(p);
        }
}

/* Our publics and procedures are llvm-pdbutil's, on every symbol of both fixtures. */
static void test_fixture_symbols_match_pdbutil(void **state)
{
        (void)state;
        const char *dir = fixture_dir();
        if (!dir)
                skip();
        static const char *const names[] = {"pdbfix", "pdbfix32"};
        for (int i = 0; i < 2; i++) {
                struct pdb *p = fixture_open(dir, names[i]);
                struct err_msg err = {0};
                struct sym_list *got = calloc(1, sizeof(*got));
                assert_int_equal(pdb_publics(p, list_public, got, &err), 0);
                char **want = read_lines(dir, names[i], "publics.tsv");
                expect_same_set(want, got, "publics");
                free_lines(want);
                got->nr = 0;
                assert_int_equal(pdb_procedures(p, list_proc, got, &err), 0);
                want = read_lines(dir, names[i], "procs.tsv");
                expect_same_set(want, got, "procedures");
                free_lines(want);
                free(got);
                pdb_close(p);
        }
}

/* Each line llvm-pdbutil lists is ours at its address (the last one listed at an address). */
static void test_fixture_lines_match_pdbutil(void **state)
{
        (void)state;
        const char *dir = fixture_dir();
        if (!dir)
                skip();
        static const char *const names[] = {"pdbfix", "pdbfix32"};
        for (int i = 0; i < 2; i++) {
                struct pdb *p = fixture_open(dir, names[i]);
                struct err_msg err = {0};
                struct pdb_lines *l;
                assert_int_equal(pdb_lines_read(p, &l, &err), 0);
                char **want = read_lines(dir, names[i], "lines.tsv");
                uint32_t nr = 0;
                for (size_t k = 0; want[k]; k++) {
                        unsigned rva, line, next_rva = 0, next_line;
                        assert_int_equal(sscanf(want[k], "%x\t%u", &rva, &line), 2);
                        if (want[k + 1] &&
                            sscanf(want[k + 1], "%x\t%u", &next_rva, &next_line) == 2 &&
                            next_rva == rva)
                                continue;
                        struct pdb_line got;
                        if (!pdb_lines_find(l, rva, &got))
                                fail_msg("%s: no line at 0x%x (llvm-pdbutil: %u)", names[i], rva,
                                         line);
                        assert_int_equal(got.line, line);
                        assert_int_equal(got.rva, rva);
                        assert_non_null(strstr(got.file, "pdb_fixture.cpp"));
                        nr++;
                }
                assert_true(nr >= 10);
                free_lines(want);
                pdb_lines_free(l);
                pdb_close(p);
        }
}

struct undecorate_check {
        const struct pdb *p;
        bool is_x86;
        uint32_t nr;
};

static int proc_named(void *ctx, const struct pdb_symbol *sym)
{
        struct pdb_symbol *want = ctx;
        if (sym->rva == want->rva) {
                want->name = strdup(sym->name);
                return 1;
        }
        return 0;
}

/* The compiler's own undecorated name of each public's function (its S_GPROC32) is what
   pdb_name_undecorate makes of the public's decorated one. */
static int public_vs_proc(void *ctx, const struct pdb_symbol *sym)
{
        struct undecorate_check *c = ctx;
        struct pdb_symbol proc = {.name = NULL, .rva = sym->rva};
        struct err_msg err = {0};
        pdb_procedures(c->p, proc_named, &proc, &err);
        if (!proc.name)
                return 0;
        char out[256];
        pdb_name_undecorate(sym->name, c->is_x86, out, sizeof(out));
        if (strcmp(out, proc.name) != 0)
                fail_msg("%s: undecorated \"%s\", the procedure's name is \"%s\"", sym->name, out,
                         proc.name);
        free((char *)proc.name);
        c->nr++;
        return 0;
}

static void test_fixture_undecorated_as_procedures(void **state)
{
        (void)state;
        const char *dir = fixture_dir();
        if (!dir)
                skip();
        if (*pdb_demangler_status()) {
                fprintf(stderr, "skipped: %s\n", pdb_demangler_status());
                skip();
        }
        static const char *const names[] = {"pdbfix", "pdbfix32"};
        for (int i = 0; i < 2; i++) {
                struct pdb *p = fixture_open(dir, names[i]);
                struct undecorate_check c = {p, i == 1, 0};
                struct err_msg err = {0};
                assert_int_equal(pdb_publics(p, public_vs_proc, &c, &err), 0);
                assert_int_equal(c.nr, 6);
                pdb_close(p);
        }
}

/* Damaged copies of a real PDB: every reader returns, with an error or not, within the bytes
   (the sanitizer build checks that). */
static void test_fixture_damaged(void **state)
{
        (void)state;
        const char *dir = fixture_dir();
        if (!dir)
                skip();
        char path[4096];
        snprintf(path, sizeof(path), "%s/pdbfix.pdb", dir);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        fseek(f, 0, SEEK_END);
        size_t size = (size_t)ftell(f);
        rewind(f);
        uint8_t *orig = malloc(size), *copy = malloc(size);
        assert_int_equal(fread(orig, 1, size, f), size);
        fclose(f);
        struct sym_list *sink = calloc(1, sizeof(*sink));
        uint32_t nr_opened = 0;
        for (size_t at = 0; at < size; at += 7) {
                memcpy(copy, orig, size);
                copy[at] ^= (uint8_t)(0x5a + at);
                struct pdb *p;
                struct err_msg err = {0};
                if (pdb_open_mem(copy, size, &p, &err) < 0) {
                        assert_true(err.offset <= size);
                        continue;
                }
                nr_opened++;
                sink->nr = 0;
                if (pdb_publics(p, list_public, sink, &err) < 0)
                        assert_true(err.offset <= size);
                sink->nr = 0;
                if (pdb_procedures(p, list_proc, sink, &err) < 0)
                        assert_true(err.offset <= size);
                struct pdb_lines *l;
                if (pdb_lines_read(p, &l, &err) == 0)
                        pdb_lines_free(l);
                else
                        assert_true(err.offset <= size);
                pdb_close(p);
        }
        assert_true(nr_opened > 0);
        for (size_t n = 0; n < size; n += size / 64) {
                struct pdb *p;
                struct err_msg err = {0};
                assert_int_equal(pdb_open_mem(orig, n, &p, &err), -EBADMSG);
                assert_true(err.offset <= n);
        }
        free(sink);
        free(orig);
        free(copy);
}

/* ---- the symbol store ---- */

#define WIN_PID  4000
#define WIN_BASE 0x140000000ull

struct log {
        char text[4096];
};

static void log_append(void *ctx, const char *message)
{
        struct log *l = ctx;
        size_t n = strlen(l->text);
        snprintf(l->text + n, sizeof(l->text) - n, "%s\n", message);
}

/* A store that saw the fixture's image and DbgID events, with the symbol path given. */
static struct sym_store *fixture_store(const char *dir, const char *name, const char *const *path,
                                       uint32_t nr_path, struct log *log)
{
        char exe[4096], nt[512];
        snprintf(exe, sizeof(exe), "%s/%s.exe", dir, name);
        struct pe_identity id;
        assert_int_equal(pe_image_read_file(exe, &id, NULL, NULL), 0);
        struct sym_options o = {.symbol_path = path,
                                .nr_symbol_path = nr_path,
                                .is_synchronous = true,
                                .log = log_append,
                                .log_ctx = log};
        struct sym_store *s = NULL;
        assert_int_equal(sym_store_new(&s, &o), 0);
        snprintf(nt, sizeof(nt), "\\Device\\HarddiskVolume2\\fixture\\%s.exe", name);
        struct sym_image im = {WIN_PID, WIN_BASE, id.size_of_image,   0,          nt,
                               NULL,    0,        id.time_date_stamp, id.checksum};
        sym_image_load(s, &im);
        sym_image_pdb(s, WIN_PID, WIN_BASE, id.pdb_guid, id.pdb_age, id.pdb_name);
        return s;
}

static uint32_t proc_rva(const char *dir, const char *name, const char *function)
{
        char **procs = read_lines(dir, name, "procs.tsv");
        uint32_t rva = 0;
        for (size_t i = 0; procs[i] && !rva; i++) {
                char fn[256];
                unsigned r;
                if (sscanf(procs[i], "%255[^\t]\t%x", fn, &r) == 2 && strcmp(fn, function) == 0)
                        rva = r;
        }
        free_lines(procs);
        if (!rva)
                fail_msg("%s not in %s.procs.tsv", function, name);
        return rva;
}

static void expect_frame(struct sym_store *s, uint64_t addr, const char *want)
{
        char buf[512];
        sym_format(s, sym_locate(s, WIN_PID, addr), buf, sizeof(buf));
        assert_string_equal(buf, want);
}

/* The PDB on the symbol path names the fixture's functions and gives their source lines. */
static void test_store_names_and_lines(void **state)
{
        (void)state;
        const char *dir = fixture_dir();
        if (!dir)
                skip();
        struct log log = {""};
        const char *path[] = {dir};
        struct sym_store *s = fixture_store(dir, "pdbfix", path, 1, &log);
        uint32_t leaf = proc_rva(dir, "pdbfix", "c_leaf"),
                 area = proc_rva(dir, "pdbfix", "fix::Shape::area"),
                 helper = proc_rva(dir, "pdbfix", "local_helper");
        expect_frame(s, WIN_BASE + leaf + 1, "pdbfix.exe!c_leaf+0x1");
        expect_frame(s, WIN_BASE + area, "pdbfix.exe!fix::Shape::area");
        expect_frame(s, WIN_BASE + helper + 2, "pdbfix.exe!local_helper+0x2");
        struct sym_module_info info;
        struct sym_loc loc = sym_locate(s, WIN_PID, WIN_BASE + leaf);
        assert_true(sym_module_info(s, loc.module, &info));
        assert_non_null(strstr(info.file_used, "pdbfix.pdb"));
        assert_string_equal(info.note, "");
        struct sym_srcframe fr[4];
        assert_int_equal(sym_srcline(s, loc, fr, 4), 1);
        assert_string_equal(sym_name(s, fr[0].function), "c_leaf");
        assert_non_null(strstr(sym_name(s, fr[0].file), "pdb_fixture.cpp"));
        char **lines = read_lines(dir, "pdbfix", "lines.tsv");
        unsigned want_line = 0;
        for (size_t i = 0; lines[i]; i++) {
                unsigned rva, line;
                if (sscanf(lines[i], "%x\t%u", &rva, &line) == 2 && rva == leaf)
                        want_line = line;
        }
        free_lines(lines);
        assert_int_equal(fr[0].line, want_line);
        assert_string_equal(log.text, "");
        sym_store_free(s);

        /* x86: the publics' C names without their decoration */
        s = fixture_store(dir, "pdbfix32", path, 1, &log);
        expect_frame(s, WIN_BASE + proc_rva(dir, "pdbfix32", "std_call"), "pdbfix32.exe!std_call");
        sym_store_free(s);
}

/* A PDB of another age is refused with a message, and frames show module+offset; further on
   the path, the right one is taken. */
static void test_store_refuses_another_age(void **state)
{
        (void)state;
        const char *dir = fixture_dir();
        if (!dir)
                skip();
        char wrong[4096];
        snprintf(wrong, sizeof(wrong), "%s/wrongage", dir);
        struct log log = {""};
        const char *path[] = {wrong};
        struct sym_store *s = fixture_store(dir, "pdbfix", path, 1, &log);
        uint32_t leaf = proc_rva(dir, "pdbfix", "c_leaf");
        char want[64];
        snprintf(want, sizeof(want), "pdbfix.exe+0x%x", leaf + 1);
        expect_frame(s, WIN_BASE + leaf + 1, want);
        assert_non_null(strstr(log.text, "another build: age 7, the trace's 1"));
        assert_non_null(strstr(log.text, "pdbfix.exe+offset"));
        struct sym_srcframe fr[4];
        assert_int_equal(sym_srcline(s, sym_locate(s, WIN_PID, WIN_BASE + leaf), fr, 4), 0);
        sym_store_free(s);

        log.text[0] = 0;
        const char *both[] = {wrong, dir};
        s = fixture_store(dir, "pdbfix", both, 2, &log);
        expect_frame(s, WIN_BASE + leaf + 1, "pdbfix.exe!c_leaf+0x1");
        sym_store_free(s);
}

/* Symbol-store layouts, and _NT_SYMBOL_PATH's syntax (also in --symbol-path's entries). */
static void test_store_layouts(void **state)
{
        (void)state;
        const char *dir = fixture_dir();
        if (!dir)
                skip();
        char store[4096], list[8192];
        snprintf(store, sizeof(store), "%s/store", dir);
        uint32_t leaf = proc_rva(dir, "pdbfix", "c_leaf");
        struct log log = {""};
        const char *path[] = {store};
        struct sym_store *s = fixture_store(dir, "pdbfix", path, 1, &log);
        expect_frame(s, WIN_BASE + leaf, "pdbfix.exe!c_leaf");
        sym_store_free(s);

        snprintf(list, sizeof(list), "/nonexistent;cache*%s/wrongage;srv*%s", dir, store);
        const char *entry[] = {list};
        s = fixture_store(dir, "pdbfix", entry, 1, &log);
        expect_frame(s, WIN_BASE + leaf, "pdbfix.exe!c_leaf");
        sym_store_free(s);

        snprintf(list, sizeof(list), "SRV*%s", store);
        setenv("_NT_SYMBOL_PATH", list, 1);
        s = fixture_store(dir, "pdbfix", NULL, 0, &log);
        unsetenv("_NT_SYMBOL_PATH");
        expect_frame(s, WIN_BASE + leaf, "pdbfix.exe!c_leaf");
        sym_store_free(s);
}

/* An image's export table from a symbol store: name.dll/TTTTTTTTSSSS/name.dll. */
static void test_store_image_by_key(void **state)
{
        (void)state;
        const char *pe_dir = getenv("SYM_PE_DIR");
        char src[4096], tmp[] = "/tmp/test_pdb.XXXXXX", dest[4096], cmd[8400];
        snprintf(src, sizeof(src), "%s/lld-x64.dll", pe_dir ? pe_dir : ".");
        struct pe_identity id;
        if (!pe_dir || pe_image_read_file(src, &id, NULL, NULL) < 0) {
                fprintf(stderr, "skipped: no %s\n", src);
                skip();
        }
        char key[PE_IMAGE_KEY_SIZE];
        pe_image_key_format(id.time_date_stamp, id.size_of_image, key);
        assert_int_equal(strlen(key), 8 + strlen(key + 8));
        assert_non_null(mkdtemp(tmp));
        snprintf(dest, sizeof(dest), "%s/LLD-X64.DLL/%s", tmp, key);
        snprintf(cmd, sizeof(cmd), "mkdir -p '%.2000s' && cp '%.2000s' '%.2000s/LLD-X64.DLL'", dest,
                 src, dest);
        assert_int_equal(system(cmd), 0);
        struct sym_options o = {.symbol_path = (const char *const[]){tmp},
                                .nr_symbol_path = 1,
                                .is_synchronous = true};
        struct sym_store *s = NULL;
        assert_int_equal(sym_store_new(&s, &o), 0);
        struct sym_image dll = {300,
                                0x180000000ull,
                                id.size_of_image,
                                0,
                                "\\Device\\HarddiskVolume2\\tools\\LLD-X64.DLL",
                                NULL,
                                0,
                                id.time_date_stamp,
                                0};
        sym_image_load(s, &dll);
        char buf[256];
        sym_format(s, sym_locate(s, 300, 0x180001004ull), buf, sizeof(buf));
        assert_string_equal(buf, "LLD-X64.DLL!alpha+0x4");
        sym_store_free(s);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
        assert_int_equal(system(cmd), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_built_pdb),
                cmocka_unit_test(test_bad_containers),
                cmocka_unit_test(test_undecorate),
                cmocka_unit_test(test_fixture_identity),
                cmocka_unit_test(test_fixture_symbols_match_pdbutil),
                cmocka_unit_test(test_fixture_lines_match_pdbutil),
                cmocka_unit_test(test_fixture_undecorated_as_procedures),
                cmocka_unit_test(test_fixture_damaged),
                cmocka_unit_test(test_store_names_and_lines),
                cmocka_unit_test(test_store_refuses_another_age),
                cmocka_unit_test(test_store_layouts),
                cmocka_unit_test(test_store_image_by_key),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
