/* SPDX-License-Identifier: MIT */
/* test_etl_zip.c: a trace inside a zip archive (backend/etl/etl_zip.c, etl_open.c): archives
   made here (stored and deflated entries, Zip64 fields, a comment) give their .etl byte for
   byte; damaged or unreadable ones (cut short, a bad CRC, lengths past the end, no .etl or two,
   encrypted, Deflate64) give an error that names the problem; a real trace read through its zip
   reads as the file itself, and two opens of one archive at once inflate it once. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "etl_reader.h"
#include "etl_zip.h"
#include "le_bytes.h"

/* ---- a zip writer, enough for the tests ---- */

struct zentry {
        const char *name;
        const uint8_t *data;
        size_t size;
        int method;     /* 0 stored, 8 deflate, else written as given (stored bytes) */
        uint16_t flags; /* general purpose bits */
        bool is_zip64;  /* sizes and offset in the Zip64 extra field */
        bool bad_crc;
};

struct zip {
        uint8_t *p;
        size_t n, cap;
};

static void put(struct zip *z, const void *p, size_t n)
{
        if (z->n + n > z->cap) {
                z->cap = (z->n + n) * 2 + 1024;
                z->p = realloc(z->p, z->cap);
                assert_non_null(z->p);
        }
        memcpy(z->p + z->n, p, n);
        z->n += n;
}

static void put16(struct zip *z, uint16_t v)
{
        uint8_t b[2];
        le_put16(b, v);
        put(z, b, 2);
}

static void put32(struct zip *z, uint32_t v)
{
        uint8_t b[4];
        le_put32(b, v);
        put(z, b, 4);
}

static void put64(struct zip *z, uint64_t v)
{
        uint8_t b[8];
        le_put64(b, v);
        put(z, b, 8);
}

static uint8_t *deflate_raw(const uint8_t *p, size_t n, size_t *out_n)
{
        z_stream s;
        memset(&s, 0, sizeof(s));
        assert_int_equal(deflateInit2(&s, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
        size_t cap = deflateBound(&s, n);
        uint8_t *out = malloc(cap);
        s.next_in = (Bytef *)(uintptr_t)p;
        s.avail_in = (uInt)n;
        s.next_out = out;
        s.avail_out = (uInt)cap;
        assert_int_equal(deflate(&s, Z_FINISH), Z_STREAM_END);
        *out_n = cap - s.avail_out;
        deflateEnd(&s);
        return out;
}

/* The archive of entries e[0..n), with a comment after its end record; zip64_end: the end
   record's fields saturated and a Zip64 end record and locator before it. */
static struct zip zip_make(const struct zentry *e, size_t n, const char *comment, bool zip64_end)
{
        struct zip z = {0};
        uint64_t *local = calloc(n + 1, sizeof(*local));
        size_t *packed = calloc(n + 1, sizeof(*packed));
        for (size_t i = 0; i < n; i++) {
                size_t pn = e[i].size;
                uint8_t *pd = NULL;
                if (e[i].method == 8)
                        pd = deflate_raw(e[i].data, e[i].size, &pn);
                packed[i] = pn;
                local[i] = z.n;
                put32(&z, 0x04034b50u);
                put16(&z, 20);
                put16(&z, e[i].flags);
                put16(&z, (uint16_t)e[i].method);
                put32(&z, 0);
                put32(&z, 0); /* crc, sizes: in the central directory */
                put32(&z, 0);
                put32(&z, 0);
                put16(&z, (uint16_t)strlen(e[i].name));
                put16(&z, 3);
                put(&z, e[i].name, strlen(e[i].name));
                put(&z, "xyz", 3); /* an extra field the reader must skip by its length */
                put(&z, pd ? pd : e[i].data, pn);
                free(pd);
        }
        uint64_t dir_at = z.n;
        for (size_t i = 0; i < n; i++) {
                uint32_t crc = (uint32_t)crc32(0, e[i].data, (uInt)e[i].size);
                if (e[i].bad_crc)
                        crc ^= 1;
                put32(&z, 0x02014b50u);
                put16(&z, 0x031e);
                put16(&z, 20);
                put16(&z, e[i].flags);
                put16(&z, (uint16_t)e[i].method);
                put32(&z, 0);
                put32(&z, crc);
                put32(&z, e[i].is_zip64 ? 0xffffffffu : (uint32_t)packed[i]);
                put32(&z, e[i].is_zip64 ? 0xffffffffu : (uint32_t)e[i].size);
                put16(&z, (uint16_t)strlen(e[i].name));
                put16(&z, e[i].is_zip64 ? 28 : 0);
                put16(&z, 0);
                put16(&z, 0);
                put16(&z, 0);
                put32(&z, 0);
                put32(&z, e[i].is_zip64 ? 0xffffffffu : (uint32_t)local[i]);
                put(&z, e[i].name, strlen(e[i].name));
                if (e[i].is_zip64) {
                        put16(&z, 0x0001);
                        put16(&z, 24);
                        put64(&z, e[i].size);
                        put64(&z, packed[i]);
                        put64(&z, local[i]);
                }
        }
        uint64_t dir_size = z.n - dir_at;
        if (zip64_end) {
                uint64_t end64_at = z.n;
                put32(&z, 0x06064b50u);
                put64(&z, 44);
                put16(&z, 45);
                put16(&z, 45);
                put32(&z, 0);
                put32(&z, 0);
                put64(&z, n);
                put64(&z, n);
                put64(&z, dir_size);
                put64(&z, dir_at);
                put32(&z, 0x07064b50u);
                put32(&z, 0);
                put64(&z, end64_at);
                put32(&z, 1);
        }
        put32(&z, 0x06054b50u);
        put16(&z, 0);
        put16(&z, 0);
        put16(&z, zip64_end ? 0xffff : (uint16_t)n);
        put16(&z, zip64_end ? 0xffff : (uint16_t)n);
        put32(&z, zip64_end ? 0xffffffffu : (uint32_t)dir_size);
        put32(&z, zip64_end ? 0xffffffffu : (uint32_t)dir_at);
        put16(&z, comment ? (uint16_t)strlen(comment) : 0);
        if (comment)
                put(&z, comment, strlen(comment));
        free(local);
        free(packed);
        return z;
}

/* ---- checks ---- */

static uint8_t payload[70000];

static void fill_payload(void)
{
        uint32_t x = 12345;
        for (size_t i = 0; i < sizeof(payload); i++) {
                x = x * 1103515245u + 12345u;
                /* half text-like (deflates), half noise */
                payload[i] = i % 2 ? (uint8_t)(x >> 24) : (uint8_t)('a' + i % 7);
        }
}

static bool has_text(const char *msg, const char *text)
{
        if (strstr(msg, text))
                return true;
        fprintf(stderr, "\"%s\" does not mention \"%s\"\n", msg, text);
        return false;
}

static void expect_payload(const struct zip *z, const char *want_name)
{
        uint8_t *out;
        size_t n;
        char name[64];
        struct etl_error err = {0};
        int rc = etl_zip_extract(z->p, z->n, &out, &n, name, sizeof(name), &err);
        if (rc)
                fprintf(stderr, "%s\n", err.msg);
        assert_int_equal(rc, 0);
        assert_int_equal(n, sizeof(payload));
        assert_memory_equal(out, payload, n);
        assert_string_equal(name, want_name);
        free(out);
}

static void expect_error(const struct zip *z, size_t size, int want_rc, const char *text)
{
        uint8_t *out = (uint8_t *)1;
        size_t n = 1;
        struct etl_error err = {0};
        assert_int_equal(etl_zip_extract(z->p, size, &out, &n, NULL, 0, &err), want_rc);
        assert_null(out);
        assert_int_equal(n, 0);
        assert_true(has_text(err.msg, text));
        assert_true(err.offset <= size);
}

static void test_stored_and_deflated(void **state)
{
        (void)state;
        fill_payload();
        for (int method = 0; method <= 8; method += 8) {
                struct zentry e[] = {
                        {"LogFile.txt", (const uint8_t *)"log", 3, 0, 0, false, false},
                        {"dir/Trace.ETL", payload, sizeof(payload), method, 0, false, false}};
                struct zip z = zip_make(e, 2, "made by a test", false);
                assert_true(etl_zip_is_zip(z.p, z.n));
                expect_payload(&z, "dir/Trace.ETL");
                free(z.p);
        }
}

static void test_zip64(void **state)
{
        (void)state;
        fill_payload();
        struct zentry e[] = {{"big.etl", payload, sizeof(payload), 8, 0, true, false}};
        struct zip z = zip_make(e, 1, NULL, true);
        expect_payload(&z, "big.etl");
        /* the Zip64 extra field cut to 16 bytes: the offset is missing */
        struct zip c = zip_make(e, 1, NULL, false);
        uint8_t *x = memmem(c.p, c.n, "\x01\x00\x18\x00", 4);
        assert_non_null(x);
        x[2] = 16;
        expect_error(&c, c.n, -EINVAL, "Zip64 sizes of entry 0 are missing");
        free(z.p);
        free(c.p);
}

static void test_which_entry(void **state)
{
        (void)state;
        fill_payload();
        struct zentry none[] = {{"a.txt", payload, 10, 0, 0, false, false},
                                {"b.etl/", payload, 0, 0, 0, false, false}};
        struct zip z = zip_make(none, 2, NULL, false);
        expect_error(&z, z.n, -ENOENT, "holds no .etl file (2 entries)");
        free(z.p);
        struct zentry two[] = {{"a.etl", payload, 10, 0, 0, false, false},
                               {"b\x1b[31m.etl", payload, 10, 0, 0, false, false}};
        z = zip_make(two, 2, NULL, false);
        /* both named, the escape sequence not passed on to a terminal */
        expect_error(&z, z.n, -EINVAL, "holds 2 .etl files (a.etl, b?[31m.etl)");
        free(z.p);
        z = zip_make(NULL, 0, NULL, false); /* an empty archive: its end record alone */
        assert_true(etl_zip_is_zip(z.p, z.n));
        expect_error(&z, z.n, -ENOENT, "holds no .etl file (0 entries)");
        free(z.p);
}

static void test_unreadable_entries(void **state)
{
        (void)state;
        fill_payload();
        struct zentry enc[] = {{"t.etl", payload, 100, 8, 1, false, false}};
        struct zip z = zip_make(enc, 1, NULL, false);
        expect_error(&z, z.n, -EINVAL, "t.etl in the zip archive is encrypted");
        free(z.p);
        struct zentry d64[] = {{"t.etl", payload, 100, 9, 0, false, false}};
        z = zip_make(d64, 1, NULL, false);
        expect_error(&z, z.n, -EINVAL, "method 9, Deflate64");
        free(z.p);
        struct zentry crc[] = {{"t.etl", payload, sizeof(payload), 8, 0, false, true}};
        z = zip_make(crc, 1, NULL, false);
        expect_error(&z, z.n, -EINVAL, "t.etl in the zip archive is damaged: CRC-32");
        free(z.p);
}

static void test_damaged(void **state)
{
        (void)state;
        fill_payload();
        struct zentry e[] = {{"t.etl", payload, sizeof(payload), 8, 0, false, false}};
        struct zip z = zip_make(e, 1, NULL, false);
        /* cut anywhere: an error, never a read past the end (ASan) */
        for (size_t cut = 0; cut < z.n; cut += cut < 200 ? 1 : 997) {
                uint8_t *copy = malloc(cut ? cut : 1);
                memcpy(copy, z.p, cut);
                uint8_t *out = (uint8_t *)1;
                size_t n;
                struct etl_error err = {0};
                assert_true(etl_zip_extract(copy, cut, &out, &n, NULL, 0, &err) < 0);
                assert_null(out);
                assert_true(err.msg[0] != '\0');
                assert_true(err.offset <= cut);
                free(copy);
        }
        expect_error(&z, z.n - 5, -EINVAL, "no end of central directory record");
        /* the central directory's offset past the end */
        struct zip b = zip_make(e, 1, NULL, false);
        le_put32(b.p + b.n - 6, 0x7fffffffu);
        expect_error(&b, b.n, -EINVAL, "is not inside its");
        free(b.p);
        /* the entry's local header offset wrong; its packed size past the end */
        b = zip_make(e, 1, NULL, false);
        uint8_t *c = memmem(b.p, b.n, "\x50\x4b\x01\x02", 4);
        assert_non_null(c);
        le_put32(c + 42, 5);
        expect_error(&b, b.n, -EINVAL, "the local header of t.etl at byte 5 is not one");
        le_put32(c + 42, 0);
        le_put32(c + 20, 0x7ffffff0u);
        expect_error(&b, b.n, -EINVAL, "run past its end");
        /* a size deflate cannot reach from the packed bytes */
        le_put32(c + 20, 100);
        le_put32(c + 24, 0x7ffffff0u);
        expect_error(&b, b.n, -EINVAL, "is not believable");
        /* the deflate stream damaged */
        le_put32(c + 24, sizeof(payload));
        le_put32(c + 20, (uint32_t)(c - b.p) - 30 - 5 - 3);
        memset(b.p + 30 + 5 + 3, 0xff, 64);
        expect_error(&b, b.n, -EINVAL, "does not inflate");
        free(b.p);
        free(z.p);
}

/* The lxcore sample through a zip: the same records as the file itself. */
static void test_real_trace(void **state)
{
        (void)state;
        const char *dir = getenv("ETWTOP_SAMPLES");
        char path[4096];
        snprintf(path, sizeof(path), "%s/etlparser_lxcore_kernel.etl", dir ? dir : ".");
        FILE *f = fopen(path, "rb");
        if (!f) {
                fprintf(stderr, "sample %s not found (set ETWTOP_SAMPLES)\n", path);
                skip();
        }
        static uint8_t etl[1 << 20];
        size_t n = fread(etl, 1, sizeof(etl), f);
        fclose(f);
        struct zentry e[] = {{"lxcore.etl", etl, n, 8, 0, false, false}};
        struct zip z = zip_make(e, 1, NULL, false);
        char zpath[] = "/tmp/test_etl_zip.XXXXXX";
        int fd = mkstemp(zpath);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, z.p, z.n), (ssize_t)z.n);
        close(fd);
        struct etl_reader *a, *b;
        struct etl_error err = {0};
        assert_int_equal(etl_reader_open_file(&a, path, &err), 0);
        uint64_t nr_inflated = etl_open_nr_inflated();
        int rc = etl_reader_open_file(&b, zpath, &err);
        if (rc)
                fprintf(stderr, "%s\n", err.msg);
        assert_int_equal(rc, 0);
        /* a second open of the same archive, both open at once (a replay's pass ahead and its
           reading): the entry inflated once */
        struct etl_reader *b2;
        assert_int_equal(etl_reader_open_file(&b2, zpath, &err), 0);
        assert_int_equal(etl_open_nr_inflated(), nr_inflated + 1);
        struct etl_record ra, rb;
        uint64_t nr = 0;
        for (;;) {
                int ga = etl_reader_next(a, &ra), gb = etl_reader_next(b, &rb);
                assert_int_equal(ga, gb);
                if (ga != 1)
                        break;
                assert_int_equal(ra.timestamp, rb.timestamp);
                assert_int_equal(ra.size_bytes, rb.size_bytes);
                assert_memory_equal(ra.data, rb.data, ra.size_bytes);
                assert_int_equal(ra.file_offset, rb.file_offset);
                nr++;
        }
        assert_true(nr > 2);
        etl_reader_close(a);
        etl_reader_close(b);
        /* the second reader reads on after the first's close: the same records */
        uint64_t nr2 = 0;
        while (etl_reader_next(b2, &rb) == 1)
                nr2++;
        assert_int_equal(nr2, nr);
        etl_reader_close(b2);
        /* the archive written again (another modification time): inflated again */
        struct timespec times[2] = {{0, UTIME_OMIT}, {12345, 0}};
        assert_int_equal(utimensat(AT_FDCWD, zpath, times, 0), 0);
        assert_int_equal(etl_reader_open_file(&b2, zpath, &err), 0);
        assert_int_equal(etl_open_nr_inflated(), nr_inflated + 2);
        etl_reader_close(b2);
        unlink(zpath);
        /* a damaged trace inside: the error names the entry */
        memset(etl, 0xee, 8);
        free(z.p);
        z = zip_make(e, 1, NULL, false);
        struct etl_reader *r = (struct etl_reader *)1;
        assert_true(etl_zip_reader_open(&r, z.p, z.n, &err) < 0);
        assert_null(r);
        assert_true(has_text(err.msg, "lxcore.etl in the zip archive: "));
        free(z.p);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_stored_and_deflated),
                cmocka_unit_test(test_zip64),
                cmocka_unit_test(test_which_entry),
                cmocka_unit_test(test_unreadable_entries),
                cmocka_unit_test(test_damaged),
                cmocka_unit_test(test_real_trace),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
