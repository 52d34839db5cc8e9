/* SPDX-License-Identifier: MIT */
/* test_tdh_layout.c: cmocka tests of the layout check that lets the decoder leave a described
 * event's fields to be decoded when asked (backend/decode/tdh_layout.c): the check's answer
 * against the whole decode's (tdh_meta.c) for generated descriptions and payloads cut at every
 * length, and a consumer that asks for no field getting none decoded. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etw/ntwmi.h"
#include "kdecoder.h"
#include "kevent.h"
#include "tdh_layout.h"
#include "tdh_meta.h"
#include "tdh_types.h"
#include "tdh_blob.h"
#include "decode_payload.h"

static const GUID prov = {0x55667788, 0x1122, 0x3344, {8, 7, 6, 5, 4, 3, 2, 1}};

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t next_rand(uint32_t n)
{
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return (uint32_t)(rng % n);
}

struct prop_def {
        uint32_t flags;
        uint16_t in_type, out_type;
        uint16_t count, length; /* struct: start and member count */
        bool has_map;
};

/* A TRACE_EVENT_INFO for prov's event 9, version 0, with nr_top of nr properties on top. */
static void build_info(struct bb *b, const struct prop_def *props, unsigned nr, unsigned nr_top)
{
        memset(b, 0, sizeof(*b));
        memcpy(b->b, &prov, 16);
        put16(b, 32, 9);
        put32(b, 100, nr);
        put32(b, 104, nr_top);
        b->n = 112 + 24u * nr;
        put32(b, 52, add_str(b, "Test"));
        for (unsigned i = 0; i < nr; i++) {
                size_t q = 112 + 24u * i;
                char name[16];
                snprintf(name, sizeof(name), "P%u", i);
                put32(b, q, props[i].flags);
                put32(b, q + 4, add_str(b, name));
                if (props[i].flags & 1) {
                        put16(b, q + 8, props[i].count);
                        put16(b, q + 10, props[i].length);
                } else {
                        put16(b, q + 8, props[i].in_type);
                        put16(b, q + 10, props[i].out_type);
                        put32(b, q + 12, props[i].has_map ? add_str(b, "M") : 0);
                        put16(b, q + 16, props[i].count);
                        put16(b, q + 18, props[i].length);
                }
        }
}

/* A property of any kind: integers most, texts, arrays counted by an earlier property,
   lengths, maps, a struct now and then, a type no decoder knows. */
static struct prop_def random_prop(unsigned i, unsigned nr)
{
        static const uint16_t types[] = {
                IN_UINT8,
                IN_UINT16,
                IN_UINT32,
                IN_UINT32,
                IN_INT32,
                IN_UINT64,
                IN_POINTER,
                IN_SIZET,
                IN_INT8,
                IN_INT16,
                IN_HEXINT32,
                IN_HEXINT64,
                IN_BOOLEAN,
                IN_FILETIME,
                IN_UNICODECHAR,
                IN_ANSICHAR,
                IN_UNICODESTRING,
                IN_UNICODESTRING,
                IN_ANSISTRING,
                IN_FLOAT,
                IN_DOUBLE,
                IN_GUID,
                IN_SYSTEMTIME,
                IN_SID,
                IN_WBEMSID,
                IN_BINARY,
                IN_HEXDUMP,
                IN_COUNTEDSTRING,
                IN_COUNTEDANSISTRING,
                IN_REVERSEDCOUNTEDSTRING,
                IN_REVERSEDCOUNTEDANSISTRING,
                IN_NONNULLTERMINATEDSTRING,
                IN_NONNULLTERMINATEDANSISTRING,
                40,
        };
        static const uint16_t outs[] = {0, 0, 0, 0, 0, OUT_PORT, OUT_IPV4, OUT_HEXINT32, 0};
        struct prop_def p = {0};

        p.in_type = types[next_rand(sizeof(types) / sizeof(types[0]))];
        p.out_type = outs[next_rand(sizeof(outs) / sizeof(outs[0]))];
        p.has_map = next_rand(6) == 0;
        p.count = next_rand(5) == 0 ? (uint16_t)next_rand(4) : 1;
        p.length = next_rand(5) == 0 ? (uint16_t)next_rand(6) : 0;
        if (i > 0 && next_rand(4) == 0) {
                p.flags |= 4; /* count from an earlier property */
                p.count = (uint16_t)next_rand(i);
        }
        if (i > 0 && next_rand(6) == 0) {
                p.flags |= 2; /* length from an earlier property */
                p.length = (uint16_t)next_rand(i);
        }
        if (i + 2 < nr && next_rand(12) == 0) {
                p.flags = 1; /* a struct of the next two */
                p.count = (uint16_t)(i + 1);
                p.length = 2;
        }
        return p;
}

/* Small numbers and NULs most: counts and lengths that fit, strings that end. */
static void random_payload(uint8_t *p, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                uint32_t r = next_rand(10);
                p[i] = r < 5 ? 0 : r < 9 ? (uint8_t)next_rand(4) : (uint8_t)next_rand(256);
        }
}

/* For generated descriptions and payloads, at every length and both pointer sizes: the check
   fails exactly where the whole decode fails. */
static void test_check_is_the_decode(void **state)
{
        struct kdecoder *d = kdecoder_new(true);
        unsigned nr_with_steps = 0, nr_ok = 0, nr_short = 0;
        (void)state;

        assert_non_null(d);
        for (int round = 0; round < 3000; round++) {
                struct prop_def props[12];
                unsigned nr = 1 + next_rand(10);
                struct bb info;
                struct tdh_event *e = NULL;
                char err[128];

                for (unsigned i = 0; i < nr; i++)
                        props[i] = random_prop(i, nr);
                build_info(&info, props, nr, next_rand(4) ? nr : 1 + next_rand(nr));
                if (tdh_event_parse(info.b, info.n, &e, err, sizeof(err)))
                        continue;

                struct tdh_registry *r = tdh_registry_new();
                tdh_registry_add_event(r, e, false);
                if (!e->steps) {
                        tdh_registry_free(r);
                        continue;
                }
                nr_with_steps++;

                uint8_t pl[160];
                size_t len = next_rand(sizeof(pl));
                random_payload(pl, len);
                for (size_t cut = 0; cut <= len; cut++) {
                        for (unsigned psize = 4; psize <= 8; psize += 4) {
                                /* exactly cut bytes: ASan sees a read past them */
                                uint8_t *copy = malloc(cut ? cut : 1);
                                uint32_t nr_fields;
                                assert_non_null(copy);
                                memcpy(copy, pl, cut);
                                int want = tdh_fill(d, e, r, copy, cut, psize, &nr_fields);
                                int got = tdh_layout_check(e, copy, cut, psize);
                                if (want != got)
                                        fail_msg("round %d: %u properties, %zu bytes, psize %u: "
                                                 "check %d, decode %d",
                                                 round, nr, cut, psize, got, want);
                                if (want)
                                        nr_short++;
                                else
                                        nr_ok++;
                                free(copy);
                        }
                }
                tdh_registry_free(r);
        }
        kdecoder_free(d);
        print_message("%u descriptions with a layout: %u payloads held, %u short\n", nr_with_steps,
                      nr_ok, nr_short);
        /* the generated cases reach both answers, many times */
        assert_true(nr_with_steps > 1000);
        assert_true(nr_ok > 10000);
        assert_true(nr_short > 10000);
}

static struct {
        int nr;
        enum kevent_type type;
        bool is_lazy;
        bool is_asking;
        uint32_t nr_fields;
        char text[256];
} cap;

static void capture(void *ctx, const struct kevent *ev)
{
        (void)ctx;
        cap.nr++;
        cap.type = ev->type;
        cap.is_lazy = ev->type == KEV_FIELDS && ev->fields.lazy;
        cap.text[0] = 0;
        if (!cap.is_asking || ev->type != KEV_FIELDS)
                return;
        const struct kevent_field *list;
        cap.nr_fields = kevent_fields(ev, &list);
        /* asked again: the same fields, not decoded twice */
        const struct kevent_field *again;
        assert_int_equal(kevent_fields(ev, &again), cap.nr_fields);
        assert_ptr_equal(again, list);
        for (uint32_t i = 0; i < cap.nr_fields; i++) {
                size_t o = strlen(cap.text);
                if (list[i].kind == KEV_FIELD_STR)
                        snprintf(cap.text + o, sizeof(cap.text) - o, "%s=%s;", list[i].name,
                                 list[i].s);
                else
                        snprintf(cap.text + o, sizeof(cap.text) - o, "%s=%llu;", list[i].name,
                                 (unsigned long long)list[i].u);
        }
}

static int decode(struct kdecoder *d, const GUID *g, uint16_t id, uint8_t op, bool is_classic,
                  const void *p, size_t n)
{
        return decode_payload(d, g, id, op, 0, is_classic, p, n, capture);
}

/* A consumer that reads no field gets the event's type with its fields left undecoded; one that
   asks gets them, the same each time it asks. */
static void test_fields_when_asked(void **state)
{
        static const struct prop_def props[] = {
                {0, IN_UINT16, 0, 1, 0, false},        /* P0: a count */
                {4, IN_UINT32, 0, 0, 0, false},        /* P1: UINT32[P0] */
                {0, IN_UNICODESTRING, 0, 1, 0, false}, /* P2 */
                {0, IN_UINT8, 0, 1, 0, false},         /* P3 */
        };
        struct kdecoder *d = kdecoder_new(true);
        struct bb info, ev = {.n = 0};
        (void)state;

        assert_non_null(d);
        build_info(&info, props, 4, 4);
        assert_int_equal(decode(d, &KernelTraceControlMetaDataGuid, 0, 32, true, info.b, info.n),
                         0);
        memset(ev.b, 0, sizeof(ev.b));
        put16(&ev, 0, 2);
        put32(&ev, 2, 7);
        put32(&ev, 6, 8);
        ev.n = 10;
        add_str(&ev, "ab");
        ev.b[ev.n++] = 5;

        memset(&cap, 0, sizeof(cap));
        assert_int_equal(decode(d, &prov, 9, 0, false, ev.b, ev.n), 0);
        assert_int_equal(cap.type, KEV_FIELDS);
        assert_true(cap.is_lazy);

        cap.is_asking = true;
        assert_int_equal(decode(d, &prov, 9, 0, false, ev.b, ev.n), 0);
        assert_int_equal(cap.nr_fields, 4);
        assert_string_equal(cap.text, "P0=2;P1=[7,8];P2=ab;P3=5;");

        /* cut inside the string's NUL: short, no fields to ask for */
        assert_int_equal(decode(d, &prov, 9, 0, false, ev.b, 10), -EBADMSG);
        assert_int_equal(cap.type, KEV_OTHER);
        assert_false(cap.is_lazy);
        kdecoder_free(d);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_check_is_the_decode),
                cmocka_unit_test(test_fields_when_asked),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
