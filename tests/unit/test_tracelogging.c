/* SPDX-License-Identifier: MIT */
/* test_tracelogging.c: cmocka tests of TraceLogging events' decoding (backend/decode/
 * tracelogging.c): records built byte by byte with their EVENT_SCHEMA_TL and PROV_TRAITS items,
 * decoded through the decoder: scalars, arrays of both counts, structs, counted binaries and
 * strings, payloads cut short and schemas that do not parse. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kdecoder.h"
#include "kevent.h"
#include "fields_text.h"

static const GUID prov = {0x5f9b1c02, 0x3a11, 0x4c3e, {9, 8, 7, 6, 5, 4, 3, 2}};

/* A growing byte string. */
struct bytes {
        uint8_t b[1024];
        size_t n;
};

static void put(struct bytes *x, const void *p, size_t n)
{
        assert_true(x->n + n <= sizeof(x->b));
        memcpy(x->b + x->n, p, n);
        x->n += n;
}
static void put8(struct bytes *x, uint8_t v)
{
        put(x, &v, 1);
}
static void put16(struct bytes *x, uint16_t v)
{
        put8(x, (uint8_t)v);
        put8(x, (uint8_t)(v >> 8));
}
static void put32(struct bytes *x, uint32_t v)
{
        put16(x, (uint16_t)v);
        put16(x, (uint16_t)(v >> 16));
}
static void put64(struct bytes *x, uint64_t v)
{
        put32(x, (uint32_t)v);
        put32(x, (uint32_t)(v >> 32));
}
static void put_str(struct bytes *x, const char *s)
{
        put(x, s, strlen(s) + 1);
}
static void put_wstr(struct bytes *x, const char *s)
{
        for (; *s; s++)
                put16(x, (uint8_t)*s);
        put16(x, 0);
}

/* The schema's head: its size (set by schema_end), one tag byte, the event's name. */
static void schema_begin(struct bytes *m, const char *event)
{
        m->n = 0;
        put16(m, 0);
        put8(m, 0);
        put_str(m, event);
}
static void schema_end(struct bytes *m)
{
        m->b[0] = (uint8_t)m->n;
        m->b[1] = (uint8_t)(m->n >> 8);
}
static void field(struct bytes *m, const char *name, uint8_t in)
{
        put_str(m, name);
        put8(m, in);
}
static void field_out(struct bytes *m, const char *name, uint8_t in, uint8_t out)
{
        put_str(m, name);
        put8(m, in | 0x80);
        put8(m, out);
}

static struct {
        int nr;
        enum kevent_type type;
        char name[160];
        const char *name_ptr;
        char text[2048]; /* "name=value;..." */
} cap;

static void capture(void *ctx, const struct kevent *ev)
{
        (void)ctx;
        cap.nr++;
        cap.type = ev->type;
        cap.name_ptr = ev->name;
        snprintf(cap.name, sizeof(cap.name), "%s", ev->name ? ev->name : "");
        fields_text(ev, cap.text, sizeof(cap.text));
}

/* Decodes one TraceLogging record of prov named "Contoso.App" by its traits (traits NULL: no
   PROV_TRAITS item), its schema m and payload p (heap copies: the sanitizer sees a read past
   either's end). */
static int decode_tl(struct kdecoder *d, const char *traits, const struct bytes *m,
                     const struct bytes *p)
{
        EVENT_RECORD r;
        EVENT_HEADER_EXTENDED_DATA_ITEM x[2];
        struct bytes t = {.n = 0};
        uint8_t *schema = malloc(m->n ? m->n : 1), *payload = malloc(p->n ? p->n : 1);

        assert_non_null(schema);
        assert_non_null(payload);
        memcpy(schema, m->b, m->n);
        memcpy(payload, p->b, p->n);
        memset(&r, 0, sizeof(r));
        memset(x, 0, sizeof(x));
        r.EventHeader.Flags = EVENT_HEADER_FLAG_64_BIT_HEADER | EVENT_HEADER_FLAG_EXTENDED_INFO;
        r.EventHeader.ProviderId = prov;
        r.EventHeader.EventDescriptor.Opcode = 0;
        r.EventHeader.EventDescriptor.Channel = 11; /* TraceLogging's */
        x[0].ExtType = EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL;
        x[0].DataSize = (USHORT)m->n;
        x[0].DataPtr = (ULONGLONG)(uintptr_t)schema;
        r.ExtendedDataCount = 1;
        if (traits) {
                put16(&t, 0);
                put_str(&t, traits);
                t.b[0] = (uint8_t)t.n;
                x[1].ExtType = EVENT_HEADER_EXT_TYPE_PROV_TRAITS;
                x[1].DataSize = (USHORT)t.n;
                x[1].DataPtr = (ULONGLONG)(uintptr_t)t.b;
                r.ExtendedDataCount = 2;
        }
        r.ExtendedData = x;
        r.UserData = payload;
        r.UserDataLength = (USHORT)p->n;
        memset(&cap, 0, sizeof(cap));
        int rc = kdecoder_decode(d, &r, capture, NULL);
        free(schema);
        free(payload);
        return rc;
}

/* Every scalar type TraceLogging writes, with its out-types: the values as the schema says (a
   char8 or char16, an integer shown as a string, its character). */
static void test_scalars(void **state)
{
        (void)state;
        struct kdecoder *d = kdecoder_new(true);
        struct bytes m, p = {.n = 0};

        schema_begin(&m, "Scalars");
        field(&m, "s", 2);           /* ANSISTRING */
        field(&m, "w", 1);           /* UNICODESTRING */
        field(&m, "i8", 3);          /* INT8 */
        field_out(&m, "b", 4, 3);    /* UINT8, out BOOLEAN */
        field(&m, "i16", 5);         /* INT16 */
        field_out(&m, "port", 6, 7); /* UINT16, out PORT: network order */
        field(&m, "i32", 7);         /* INT32 */
        field_out(&m, "h32", 8, 4);  /* UINT32, out HEX */
        field_out(&m, "ip", 8, 8);   /* UINT32, out IPV4 */
        field(&m, "i64", 9);         /* INT64 */
        field(&m, "u64", 10);        /* UINT64 */
        field(&m, "x64", 21);        /* HEXINT64 */
        field(&m, "ok", 13);         /* BOOL32 */
        field(&m, "g", 15);          /* GUID */
        field(&m, "cs", 22);         /* COUNTEDSTRING: UINT16 bytes, UTF-16 */
        field(&m, "cas", 23);        /* COUNTEDANSISTRING */
        field(&m, "ft", 17);         /* FILETIME: a date, UTC */
        field(&m, "ft_far", 17);     /* past the year 9999: its number */
        field_out(&m, "c8", 4, 2);   /* UINT8, out STRING: a char, as TDH shows it */
        field_out(&m, "c16", 6, 2);  /* UINT16, out STRING: a UTF-16 char */
        field_out(&m, "nul", 4, 2);  /* a NUL char: nothing */
        schema_end(&m);
        put_str(&p, "hello");
        put_wstr(&p, "wide");
        put8(&p, 0xFE);
        put8(&p, 1);
        put16(&p, 0xFFFF);
        put8(&p, 0x1F);
        put8(&p, 0x90); /* 8080 */
        put32(&p, (uint32_t)-7);
        put32(&p, 0xBEEF);
        put8(&p, 10);
        put8(&p, 0);
        put8(&p, 0);
        put8(&p, 1);
        put64(&p, (uint64_t)-204);
        put64(&p, 204);
        put64(&p, 0x1234);
        put32(&p, 1);
        put32(&p, 0x0ad614c4);
        put16(&p, 0x0ef4);
        put16(&p, 0x4225);
        put(&p, (const uint8_t[]){0x80, 0x13, 0xf4, 0x4f, 0x37, 0xcb, 0x03, 0x97}, 8);
        put16(&p, 4);
        put16(&p, 'h');
        put16(&p, 'i');
        put16(&p, 3);
        put(&p, "abc", 3);
        put64(&p, 132756731757990000ull);
        put64(&p, UINT64_MAX);
        put8(&p, 'M');
        put16(&p, 0x00e9); /* é */
        put8(&p, 0);
        assert_int_equal(decode_tl(d, "Contoso.App", &m, &p), 0);
        assert_int_equal(cap.type, KEV_FIELDS);
        assert_string_equal(cap.name, "Contoso.App/Scalars");
        assert_string_equal(cap.text, "s=hello;w=wide;i8=-2;b=1;i16=-1;port=8080;i32=-7;h32=0xbeef;"
                                      "ip=10.0.0.1;i64=-204;u64=204;x64=0x1234;ok=1;"
                                      "g={0ad614c4-0ef4-4225-8013-f44f37cb0397};cs=hi;cas=abc;"
                                      "ft=2021-09-09 14:59:35.7990000 UTC;"
                                      "ft_far=18446744073709551615;c8=M;c16=\xc3\xa9;nul=;");
        kdecoder_free(d);
}

/* Arrays: a constant count in the schema, a variable one before the values in the payload (an
   empty one too), and an array of structs of two members. */
static void test_arrays_and_structs(void **state)
{
        (void)state;
        struct kdecoder *d = kdecoder_new(true);
        struct bytes m, p = {.n = 0};

        schema_begin(&m, "Arrays");
        put_str(&m, "fixed");
        put8(&m, 6 | 0x20); /* UINT16[3] */
        put16(&m, 3);
        field(&m, "var", 8 | 0x40);        /* UINT32[n] */
        field(&m, "none", 8 | 0x40);       /* UINT32[0] */
        field_out(&m, "kv", 24 | 0x40, 2); /* struct {k, v}[n] */
        field(&m, "k", 2);
        field(&m, "v", 7);
        field(&m, "after", 7);
        schema_end(&m);
        put16(&p, 1);
        put16(&p, 2);
        put16(&p, 3);
        put16(&p, 2);
        put32(&p, 40);
        put32(&p, 41);
        put16(&p, 0);
        put16(&p, 2);
        put_str(&p, "a");
        put32(&p, 1);
        put_str(&p, "b");
        put32(&p, (uint32_t)-2);
        put32(&p, 99);
        assert_int_equal(decode_tl(d, "Contoso.App", &m, &p), 0);
        assert_string_equal(cap.text,
                            "fixed=[1,2,3];var=[40,41];none=[];k=a;v=1;k=b;v=-2;after=99;");
        kdecoder_free(d);
}

/* Binary values carry their length before their bytes (BINARY, COUNTEDBINARY and a custom
   type's), a socket address among them. */
static void test_binaries(void **state)
{
        (void)state;
        struct kdecoder *d = kdecoder_new(true);
        struct bytes m, p = {.n = 0};

        schema_begin(&m, "Binaries");
        field(&m, "bin", 14);
        field_out(&m, "addr", 25, 10); /* COUNTEDBINARY, out SOCKETADDRESS */
        put_str(&m, "custom");         /* a custom type: its type info skipped */
        put8(&m, 0x60 | 14);
        put16(&m, 3);
        put(&m, "xyz", 3);
        field(&m, "last", 4);
        schema_end(&m);
        put16(&p, 2);
        put8(&p, 0xAB);
        put8(&p, 0xCD);
        put16(&p, 16);
        put(&p, (const uint8_t[]){2, 0, 0x1F, 0x90, 127, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0}, 16);
        put16(&p, 1);
        put8(&p, 0x5A);
        put8(&p, 7);
        assert_int_equal(decode_tl(d, "Contoso.App", &m, &p), 0);
        assert_non_null(strstr(cap.text, "bin=0xABCD;"));
        assert_non_null(strstr(cap.text, "addr=127.0.0.1:8080;"));
        assert_non_null(strstr(cap.text, "custom=0x5A;"));
        assert_non_null(strstr(cap.text, "last=7;"));
        kdecoder_free(d);
}

/* The description is made once per schema and provider: the same name pointer at each event
   of one schema, and one name for two schemas of one event name; without traits, the
   provider is "TraceLogging". */
static void test_schema_cached(void **state)
{
        (void)state;
        struct kdecoder *d = kdecoder_new(true);
        struct bytes m, m2, p = {.n = 0};

        schema_begin(&m, "Tick");
        field(&m, "n", 8);
        schema_end(&m);
        schema_begin(&m2, "Tick");
        field(&m2, "n", 9);
        schema_end(&m2);
        put32(&p, 5);
        assert_int_equal(decode_tl(d, "Contoso.App", &m, &p), 0);
        const char *first = cap.name_ptr;
        for (int i = 0; i < 100; i++) {
                p.n = 0;
                put32(&p, (uint32_t)i);
                assert_int_equal(decode_tl(d, "Contoso.App", &m, &p), 0);
                assert_ptr_equal(cap.name_ptr, first);
        }
        assert_string_equal(cap.text, "n=99;");
        p.n = 0;
        put64(&p, 6);
        assert_int_equal(decode_tl(d, "Contoso.App", &m2, &p), 0);
        assert_ptr_equal(cap.name_ptr, first);
        assert_string_equal(cap.text, "n=6;");
        /* (a provider's GUID is its name's hash: its schemas' names are kept by GUID) */
        schema_begin(&m, "Tock");
        field(&m, "n", 8);
        schema_end(&m);
        p.n = 0;
        put32(&p, 1);
        assert_int_equal(decode_tl(d, NULL, &m, &p), 0);
        assert_string_equal(cap.name, "TraceLogging/Tock");
        kdecoder_free(d);
}

/* A payload that ends before a field the schema names is counted short; a schema that does not
   parse (a type TraceLogging has none of, a struct running past the schema, a size past the
   item) leaves its event without a layout; nothing is read past either. */
static void test_damaged(void **state)
{
        (void)state;
        struct kdecoder *d = kdecoder_new(true);
        struct bytes m, p = {.n = 0};
        struct kdecoder_stats st;

        schema_begin(&m, "Cut");
        field(&m, "a", 8);
        field(&m, "v", 8 | 0x40);
        schema_end(&m);
        put32(&p, 1);
        put16(&p, 1000); /* 1000 values promised, none there */
        assert_int_equal(decode_tl(d, "Contoso.App", &m, &p), -EBADMSG);
        kdecoder_get_stats(d, &st);
        assert_int_equal(st.nr_short, 1);

        schema_begin(&m, "BadType");
        field(&m, "a", 30);
        schema_end(&m);
        p.n = 0;
        put32(&p, 1);
        assert_int_equal(decode_tl(d, "Contoso.App", &m, &p), 0);
        assert_int_not_equal(cap.type, KEV_FIELDS);

        schema_begin(&m, "BadStruct");
        field_out(&m, "s", 24, 5); /* five members, one there */
        field(&m, "a", 8);
        schema_end(&m);
        assert_int_equal(decode_tl(d, "Contoso.App", &m, &p), 0);
        assert_int_not_equal(cap.type, KEV_FIELDS);

        schema_begin(&m, "BadSize");
        field(&m, "a", 8);
        schema_end(&m);
        m.b[0] = 0xFF; /* the size past the item */
        assert_int_equal(decode_tl(d, "Contoso.App", &m, &p), 0);
        assert_int_not_equal(cap.type, KEV_FIELDS);

        schema_begin(&m, "Cut2");
        field(&m, "name", 2);
        schema_end(&m);
        m.n -= 1; /* the field's in-type byte cut off */
        assert_int_equal(decode_tl(d, "Contoso.App", &m, &p), 0);
        assert_int_not_equal(cap.type, KEV_FIELDS);
        kdecoder_free(d);
}

/* A trace of ever new schemas: past the cache's bound each is still decoded. */
static void test_many_schemas(void **state)
{
        (void)state;
        struct kdecoder *d = kdecoder_new(true);
        struct bytes m, p = {.n = 0};
        char name[32];

        put32(&p, 3);
        for (int i = 0; i < 5000; i++) {
                snprintf(name, sizeof(name), "E%d", i);
                schema_begin(&m, name);
                field(&m, "n", 8);
                schema_end(&m);
                assert_int_equal(decode_tl(d, "Contoso.App", &m, &p), 0);
                assert_int_equal(cap.type, KEV_FIELDS);
                assert_string_equal(cap.text, "n=3;");
        }
        assert_string_equal(cap.name, "Contoso.App/E4999");
        kdecoder_free(d);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_scalars),  cmocka_unit_test(test_arrays_and_structs),
                cmocka_unit_test(test_binaries), cmocka_unit_test(test_schema_cached),
                cmocka_unit_test(test_damaged),  cmocka_unit_test(test_many_schemas),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
