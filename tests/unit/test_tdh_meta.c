/* SPDX-License-Identifier: MIT */
/* test_tdh_meta.c: cmocka tests of the trace-carried event metadata (backend/decode/tdh_meta.c):
 * TRACE_EVENT_INFO and EVENT_MAP_INFO built byte by byte, the events they describe decoded
 * through the decoder, and damaged descriptions refused with their offsets. */
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
#include "fields_text.h"
#include "etw_manifest.h"
#include "tdh_meta.h"
#include "tdh_types.h"
#include "tdh_blob.h"
#include "decode_payload.h"

static const GUID prov = {0x11223344, 0x5566, 0x7788, {1, 2, 3, 4, 5, 6, 7, 8}};

struct prop_def {
        const char *name;
        uint32_t flags;
        uint16_t in_type, out_type;
        uint16_t count, length;
        const char *map;
};

/* A TRACE_EVENT_INFO for prov's event 7, version 1, opcode 1, task "Work", opcode "win:Start". */
static void build_info(struct bb *b, const struct prop_def *props, unsigned nr)
{
        memset(b, 0, sizeof(*b));
        memcpy(b->b, &prov, 16);
        put16(b, 32, 7); /* Id */
        b->b[34] = 1;    /* Version */
        b->b[37] = 1;    /* Opcode */
        put16(b, 38, 3); /* Task */
        put32(b, 48, 0); /* DecodingSourceXMLFile */
        put32(b, 100, nr);
        put32(b, 104, nr);
        b->n = 112 + 24u * nr;
        put32(b, 52, add_str(b, "Contoso-App"));
        put32(b, 68, add_str(b, "Work"));
        put32(b, 72, add_str(b, "win:Start"));
        for (unsigned i = 0; i < nr; i++) {
                size_t q = 112 + 24u * i;
                put32(b, q, props[i].flags);
                put32(b, q + 4, add_str(b, props[i].name));
                put16(b, q + 8, props[i].in_type);
                put16(b, q + 10, props[i].out_type);
                put32(b, q + 12, props[i].map ? add_str(b, props[i].map) : 0);
                put16(b, q + 16, props[i].count);
                put16(b, q + 18, props[i].length);
        }
}

static struct {
        int nr;
        enum kevent_type type;
        char name[160];
        const char *name_ptr; /* the decoder's: the same while its description is */
        uint32_t nr_fields;
        char text[1024]; /* "name=value;..." */
} cap;

static void capture(void *ctx, const struct kevent *ev)
{
        (void)ctx;
        cap.nr++;
        cap.type = ev->type;
        strncpy(cap.name, ev->name, sizeof(cap.name) - 1);
        cap.name_ptr = ev->name;
        cap.nr_fields = fields_text(ev, cap.text, sizeof(cap.text));
}

static int decode(struct kdecoder *d, const GUID *g, uint16_t id, uint8_t op, uint8_t ver,
                  bool is_classic, const void *p, size_t n)
{
        memset(&cap, 0, sizeof(cap));
        return decode_payload(d, g, id, op, ver, is_classic, p, n, capture);
}

/* Delivers a manifest in one chunk of provider g's ManifestData event (0xFFFE, opcode 254). */
static void deliver_manifest_as(struct kdecoder *d, const GUID *g, const char *xml, size_t n)
{
        uint8_t *p = malloc(8 + n);

        assert_non_null(p);
        memcpy(p, (const uint8_t[]){1, 1, 0, 0x5B, 1, 0, 0, 0}, 8);
        memcpy(p + 8, xml, n);
        assert_int_equal(decode(d, g, 0xFFFE, 254, 1, false, p, 8 + n), 0);
        free(p);
}

/* The same from the provider the manifest names. */
static void deliver_manifest(struct kdecoder *d, const char *xml, size_t n)
{
        deliver_manifest_as(d, &prov, xml, n);
}

static const struct prop_def demo_props[] = {
        {"Count", 0, 8, 0, 1, 0, NULL},      /* UINT32 */
        {"Ports", 4, 6, 22, 0, 0, NULL},     /* UINT16[Count], TDH_OUTTYPE_PORT */
        {"Path", 0, 1, 0, 1, 0, NULL},       /* UNICODESTRING */
        {"Kind", 0, 8, 0, 1, 0, "KindMap"},  /* UINT32 through a value map */
        {"Flags", 0, 8, 0, 1, 0, "FlagMap"}, /* UINT32 through a bit map */
        {"Size", 0, 16, 0, 1, 0, NULL},      /* POINTER */
};

/* EVENT_MAP_INFO for prov: name, flags, entries {text, value} */
static void build_map(struct bb *b, const char *name, uint32_t flags, const char *const *texts,
                      const uint32_t *values, unsigned nr)
{
        memset(b, 0, sizeof(*b));
        memcpy(b->b, &prov, 16);
        struct bb m = {.n = 16 + 8u * nr};
        memset(m.b, 0, sizeof(m.b));
        put32(&m, 0, add_str(&m, name));
        put32(&m, 4, flags);
        put32(&m, 8, nr);
        for (unsigned i = 0; i < nr; i++) {
                put32(&m, 16 + 8 * i, add_str(&m, texts[i]));
                put32(&m, 16 + 8 * i + 4, values[i]);
        }
        memcpy(b->b + 16, m.b, m.n);
        b->n = 16 + m.n;
}

static void test_described_event_decoded(void **state)
{
        struct kdecoder *d = kdecoder_new(true);
        struct bb info, map, ev = {.n = 0};
        static const char *const kinds[] = {"Small ", "Large "};
        static const uint32_t kind_values[] = {0, 1};
        static const char *const flags[] = {"Read", "Write", "Exec"};
        static const uint32_t flag_values[] = {1, 2, 4};
        (void)state;

        assert_non_null(d);
        /* before its description the event has no layout */
        assert_int_equal(decode(d, &prov, 7, 1, 1, false, "", 0), 0);
        assert_int_equal(cap.type, KEV_OTHER);

        build_info(&info, demo_props, 6);
        assert_int_equal(decode(d, &KernelTraceControlMetaDataGuid, 0, 32, 0, true, info.b, info.n),
                         0);
        build_map(&map, "KindMap", 1, kinds, kind_values, 2);
        assert_int_equal(decode(d, &KernelTraceControlMetaDataGuid, 0, 33, 0, true, map.b, map.n),
                         0);
        build_map(&map, "FlagMap", 2, flags, flag_values, 3);
        assert_int_equal(decode(d, &KernelTraceControlMetaDataGuid, 0, 33, 0, true, map.b, map.n),
                         0);

        put32(&ev, 0, 2); /* Count */
        ev.b[4] = 0x01;   /* Ports: 443, 80 in network order */
        ev.b[5] = 0xbb;
        ev.b[6] = 0x00;
        ev.b[7] = 0x50;
        ev.n = 8;
        add_str(&ev, "C:\\x");
        put32(&ev, ev.n, 1);     /* Kind: Large */
        put32(&ev, ev.n + 4, 5); /* Flags: Read|Exec */
        memset(ev.b + ev.n + 8, 0, 8);
        ev.b[ev.n + 8] = 0x40; /* Size */
        ev.n += 16;
        assert_int_equal(decode(d, &prov, 7, 1, 1, false, ev.b, ev.n), 0);
        assert_int_equal(cap.type, KEV_FIELDS);
        assert_string_equal(cap.name, "Contoso-App/Work/Start");
        assert_string_equal(cap.text, "Count=2;Ports=[443,80];Path=C:\\x;Kind=Large;"
                                      "Flags=Read|Exec;Size=0x40;");

        /* another version of the same event is not described */
        assert_int_equal(decode(d, &prov, 7, 1, 2, false, ev.b, ev.n), 0);
        assert_int_equal(cap.type, KEV_OTHER);

        /* cut short inside its string: counted short, delivered without fields */
        assert_int_equal(decode(d, &prov, 7, 1, 1, false, ev.b, 9), -EBADMSG);
        assert_int_equal(cap.type, KEV_OTHER);
        kdecoder_free(d);
}

/* Maps are found by provider and name among many (the registry's index grows past its first
   size), the newest of a name wins, and a map of another provider with the same name is not
   taken. */
static void test_many_maps(void **state)
{
        struct kdecoder *d = kdecoder_new(true);
        struct bb info, map, ev = {.n = 0};
        static const char *const old_kinds[] = {"OldSmall", "OldLarge"};
        static const char *const kinds[] = {"Small", "Large"};
        static const char *const other[] = {"Other0", "Other1"};
        static const uint32_t kind_values[] = {0, 1};
        static const GUID prov2 = {0x99887766, 0x5566, 0x7788, {1, 2, 3, 4, 5, 6, 7, 8}};
        (void)state;

        assert_non_null(d);
        build_info(&info, demo_props, 6);
        assert_int_equal(decode(d, &KernelTraceControlMetaDataGuid, 0, 32, 0, true, info.b, info.n),
                         0);
        build_map(&map, "KindMap", 1, old_kinds, kind_values, 2);
        assert_int_equal(decode(d, &KernelTraceControlMetaDataGuid, 0, 33, 0, true, map.b, map.n),
                         0);
        for (int i = 0; i < 200; i++) {
                char name[32];
                snprintf(name, sizeof(name), "Map%d", i);
                build_map(&map, name, 1, other, kind_values, 2);
                assert_int_equal(
                        decode(d, &KernelTraceControlMetaDataGuid, 0, 33, 0, true, map.b, map.n),
                        0);
        }
        build_map(&map, "KindMap", 1, kinds, kind_values, 2);
        assert_int_equal(decode(d, &KernelTraceControlMetaDataGuid, 0, 33, 0, true, map.b, map.n),
                         0);
        /* FlagMap of another provider only */
        build_map(&map, "FlagMap", 1, other, kind_values, 2);
        memcpy(map.b, &prov2, 16);
        assert_int_equal(decode(d, &KernelTraceControlMetaDataGuid, 0, 33, 0, true, map.b, map.n),
                         0);

        put32(&ev, 0, 0); /* Count */
        ev.n = 4;
        add_str(&ev, "p");
        put32(&ev, ev.n, 1);     /* Kind: Large, by the newest KindMap */
        put32(&ev, ev.n + 4, 1); /* Flags: no map of this provider, a number */
        memset(ev.b + ev.n + 8, 0, 8);
        ev.n += 16;
        assert_int_equal(decode(d, &prov, 7, 1, 1, false, ev.b, ev.n), 0);
        assert_int_equal(cap.type, KEV_FIELDS);
        assert_string_equal(cap.text, "Count=0;Ports=[];Path=p;Kind=Large;Flags=1;Size=0x0;");
        kdecoder_free(d);
}

/* An event described again (a later EventInfo of the same provider, Id and version) is decoded by
   the new description from then on, also right after an event decoded by the old one. */
static void test_description_replaced(void **state)
{
        struct kdecoder *d = kdecoder_new(true);
        struct bb info, ev = {.n = 0};
        static const struct prop_def one[] = {{"A", 0, 8, 0, 1, 0, NULL}};
        static const struct prop_def two[] = {{"B", 0, 6, 0, 1, 0, NULL},
                                              {"C", 0, 6, 0, 1, 0, NULL}};
        (void)state;

        assert_non_null(d);
        build_info(&info, one, 1);
        assert_int_equal(decode(d, &KernelTraceControlMetaDataGuid, 0, 32, 0, true, info.b, info.n),
                         0);
        put32(&ev, 0, 0x00020001);
        ev.n = 4;
        assert_int_equal(decode(d, &prov, 7, 1, 1, false, ev.b, ev.n), 0);
        assert_string_equal(cap.text, "A=131073;");
        assert_int_equal(decode(d, &prov, 7, 1, 1, false, ev.b, ev.n), 0);
        assert_string_equal(cap.text, "A=131073;");

        build_info(&info, two, 2);
        assert_int_equal(decode(d, &KernelTraceControlMetaDataGuid, 0, 32, 0, true, info.b, info.n),
                         0);
        assert_int_equal(decode(d, &prov, 7, 1, 1, false, ev.b, ev.n), 0);
        assert_string_equal(cap.text, "B=1;C=2;");
        kdecoder_free(d);
}

/* tdh_put_number writes what printf writes: decimal, negative, hex with 0x, at every length. */
static void test_put_number(void **state)
{
        (void)state;
        uint64_t v = 0;

        for (int i = 0; i < 4000; i++) {
                /* 0..200, then every power of ten and of two and their neighbours, then random */
                if (i < 200)
                        v = (uint64_t)i;
                else if (i < 260)
                        v = ((uint64_t)1 << ((i - 200) % 64)) + (i % 3 == 0 ? 1 : 0) -
                            (i % 3 == 1 ? 1 : 0);
                else if (i < 320) {
                        uint64_t t = 1;
                        for (int k = 0; k < (i - 260) / 3; k++)
                                t *= 10;
                        v = t - 1 + (uint64_t)((i - 260) % 3);
                } else
                        v = v * 6364136223846793005ull + 1442695040888963407ull;
                enum kevent_field_kind kinds[] = {KEV_FIELD_UINT, KEV_FIELD_INT, KEV_FIELD_HEX};
                for (int k = 0; k < 3; k++) {
                        uint64_t u = v >> (i % 64 > 40 ? i % 64 : 0);
                        char got[48], want[48];
                        memset(got, 0, sizeof(got));
                        size_t n = tdh_put_number(got, u, kinds[k]);
                        if (k == 0)
                                snprintf(want, sizeof(want), "%llu", (unsigned long long)u);
                        else if (k == 1)
                                snprintf(want, sizeof(want), "%lld", (long long)u);
                        else
                                snprintf(want, sizeof(want), "0x%llx", (unsigned long long)u);
                        assert_int_equal(n, strlen(want));
                        got[n] = 0;
                        assert_string_equal(got, want);
                }
        }
}

/* Microsoft-Windows-DotNETRuntime's GCStart described by the trace with a map the trace does not
   carry (GCReasonMap): the CLR manifest's text; a map the trace carries wins */
static void test_clr_map_not_carried(void **state)
{
        static const GUID clr = {
                0xe13c0d23, 0xccbc, 0x4e12, {0x93, 0x1b, 0xd9, 0xcc, 0x2e, 0xee, 0x27, 0xe4}};
        static const struct prop_def gc_start[] = {
                {"Count", 0, 8, 0, 1, 0, NULL},
                {"Reason", 0, 8, 0, 1, 0, "GCReasonMap"},
        };
        static const char *const texts[] = {"Induced by the trace"};
        static const uint32_t values[] = {1};
        struct kdecoder *d = kdecoder_new(true);
        struct bb info, map;
        uint32_t payload[2] = {3, 1};
        (void)state;

        assert_non_null(d);
        build_info(&info, gc_start, 2);
        memcpy(info.b, &clr, 16);
        put16(&info, 32, 1); /* GCStart */
        assert_int_equal(decode(d, &KernelTraceControlMetaDataGuid, 0, 32, 0, true, info.b, info.n),
                         0);
        assert_int_equal(decode(d, &clr, 1, 1, 1, false, payload, sizeof(payload)), 0);
        assert_int_equal(cap.type, KEV_FIELDS);
        assert_string_equal(cap.name, "DotNETRuntime/GCStart");
        assert_string_equal(cap.text, "Count=3;Reason=Induced;");

        /* a value the manifest's map lacks stays a number */
        payload[1] = 77;
        assert_int_equal(decode(d, &clr, 1, 1, 1, false, payload, sizeof(payload)), 0);
        assert_string_equal(cap.text, "Count=3;Reason=77;");

        /* the trace's own map */
        payload[1] = 1;
        build_map(&map, "GCReasonMap", 1, texts, values, 1);
        memcpy(map.b, &clr, 16);
        assert_int_equal(decode(d, &KernelTraceControlMetaDataGuid, 0, 33, 0, true, map.b, map.n),
                         0);
        assert_int_equal(decode(d, &clr, 1, 1, 1, false, payload, sizeof(payload)), 0);
        assert_string_equal(cap.text, "Count=3;Reason=Induced by the trace;");
        kdecoder_free(d);
}

static void test_damaged_descriptions(void **state)
{
        struct bb info;
        struct tdh_event *e = NULL;
        char err[128];
        (void)state;

        build_info(&info, demo_props, 6);
        assert_int_equal(tdh_event_parse(info.b, 100, &e, err, sizeof(err)), -EBADMSG);
        assert_null(e);
        assert_non_null(strstr(err, "112-byte header"));

        put32(&info, 100, 5000); /* PropertyCount past the end */
        assert_int_equal(tdh_event_parse(info.b, info.n, &e, err, sizeof(err)), -EBADMSG);
        assert_non_null(strstr(err, "byte offset 100"));

        /* a count from a property that comes after it */
        static const struct prop_def later[] = {{"Items", 4, 8, 0, 1, 0, NULL},
                                                {"N", 0, 8, 0, 1, 0, NULL}};
        build_info(&info, later, 2);
        assert_int_equal(tdh_event_parse(info.b, info.n, &e, err, sizeof(err)), -EBADMSG);
        assert_non_null(strstr(err, "byte offset 128"));

        /* a good one parses, with TraceEvent's name */
        build_info(&info, demo_props, 6);
        assert_int_equal(tdh_event_parse(info.b, info.n, &e, err, sizeof(err)), 0);
        assert_string_equal(e->name, "Contoso-App/Work/Start");
        assert_int_equal(e->nr_props, 6);
        assert_string_equal(e->props[3].map_name, "KindMap");
        tdh_event_free(e);
}

/* An EventSource's manifest in two ManifestData chunks: its events named and decoded */
static void test_manifest_data(void **state)
{
        struct kdecoder *d = kdecoder_new(true);
        char *xml = NULL;
        size_t n = 0;
        FILE *f = fopen(FIXTURES_DIR "/contoso_manifest.xml", "rb");
        (void)state;

        assert_non_null(d);
        assert_non_null(f);
        xml = malloc(65536);
        assert_non_null(xml);
        n = fread(xml, 1, 65536, f);
        fclose(f);
        assert_true(n > 100);

        /* chunk 1 of 2 alone: nothing described yet, the event not yet named */
        uint8_t *p = malloc(8 + n);
        assert_non_null(p);
        memcpy(p, (const uint8_t[]){1, 1, 0, 0x5B, 2, 0, 0, 0}, 8);
        memcpy(p + 8, xml, n / 2);
        assert_int_equal(decode(d, &prov, 0xFFFE, 254, 1, false, p, 8 + n / 2), 0);
        assert_int_equal(cap.type, KEV_OTHER);
        memcpy(p, (const uint8_t[]){1, 1, 0, 0x5B, 2, 0, 1, 0}, 8);
        memcpy(p + 8, xml + n / 2, n - n / 2);
        assert_int_equal(decode(d, &prov, 0xFFFE, 254, 1, false, p, 8 + n - n / 2), 0);
        assert_string_equal(cap.name, "Contoso-Orders/ManifestData");

        struct bb ev = {.n = 0};
        add_str(&ev, "Ann");
        memcpy(ev.b + ev.n, &(int64_t){1250}, 8);
        put32(&ev, ev.n + 8, 1);  /* Priority: High */
        put32(&ev, ev.n + 12, 3); /* Flags: Gift|Express */
        ev.n += 16;
        assert_int_equal(decode(d, &prov, 1, 1, 0, false, ev.b, ev.n), 0);
        assert_string_equal(cap.name, "Contoso-Orders/Order/Start");
        assert_string_equal(cap.text, "Customer=Ann;Amount=1250;Priority=High;Flags=Gift|Express;");
        assert_int_equal(decode(d, &prov, 2, 11, 0, false, ev.b, ev.n), 0);
        assert_string_equal(cap.name, "Contoso-Orders/Order/Shipped"); /* the provider's opcode */

        /* an array counted by an earlier property, then a GUID */
        struct bb b = {.n = 0};
        put16(&b, 0, 2);
        put32(&b, 2, 7);
        put32(&b, 6, 9);
        for (int i = 0; i < 16; i++)
                b.b[10 + i] = (uint8_t)i;
        b.n = 26;
        assert_int_equal(decode(d, &prov, 3, 0, 0, false, b.b, b.n), 0);
        assert_string_equal(cap.name, "Contoso-Orders/Batch");
        assert_string_equal(cap.text,
                            "Count=2;Ids=[7,9];Id={03020100-0504-0706-0809-0a0b0c0d0e0f};");
        assert_int_equal(decode(d, &prov, 4, 2, 0, false, NULL, 0), 0);
        assert_string_equal(cap.name, "Contoso-Orders/Batch/Stop");
        assert_int_equal(cap.nr_fields, 0);

        /* not XML: counted short, nothing described, the decoder goes on */
        memcpy(p, (const uint8_t[]){1, 1, 0, 0x5B, 1, 0, 0, 0}, 8);
        memcpy(p + 8, "<oops", 5);
        assert_int_equal(decode(d, &prov, 0xFFFE, 254, 1, false, p, 13), -EBADMSG);
        /* a chunk out of order */
        memcpy(p, (const uint8_t[]){1, 1, 0, 0x5B, 3, 0, 2, 0}, 8);
        assert_int_equal(decode(d, &prov, 0xFFFE, 254, 1, false, p, 13), -EBADMSG);
        /* what was described stays */
        assert_int_equal(decode(d, &prov, 4, 2, 0, false, NULL, 0), 0);
        assert_string_equal(cap.name, "Contoso-Orders/Batch/Stop");
        free(p);
        free(xml);
        kdecoder_free(d);
}

/* Attributes as libxml2's xmlGetProp read them (the manifest reader's before expat): a
   namespaced attribute of the same name is not the one, entities and character references are
   resolved. */
static void test_manifest_attributes(void **state)
{
        static const char xml[] =
                "<instrumentationManifest xmlns=\"http://schemas.microsoft.com/win/2004/08/events\""
                " xmlns:x=\"urn:x\"><instrumentation><events>"
                "<provider name=\"Contoso-Attrs\" guid=\"{11223344-5566-7788-0102-030405060708}\">"
                "<tasks>"
                "<task x:name=\"R&amp;D\" name=\"Decoy\" value=\"2\">"
                "<opcodes><opcode name=\"Go\" value=\"13\"/></opcodes></task>"
                "<task name=\"R&amp;D\" value=\"1\"/>"
                "</tasks><templates>"
                "<template x:tid=\"TA\" tid=\"Other\"><data name=\"Wrong\" inType=\"win:UInt8\"/>"
                "</template>"
                "<template tid=\"T&#65;\"><data name=\"N\" inType=\"win:UInt8\"/></template>"
                "</templates><events>"
                "<event value=\"1\" version=\"0\" task=\"R&amp;D\" opcode=\"Go\" template=\"TA\"/>"
                "</events></provider></events></instrumentation></instrumentationManifest>";
        struct kdecoder *d = kdecoder_new(true);
        size_t n = sizeof(xml) - 1;
        (void)state;

        assert_non_null(d);
        deliver_manifest(d, xml, n);
        assert_string_equal(cap.name, "Contoso-Attrs/ManifestData");
        /* the task R&D (not the decoy's x:name): no opcode Go of its own; template TA by its
           tid, a character reference */
        assert_int_equal(decode(d, &prov, 1, 0, 0, false, (const uint8_t[]){5}, 1), 0);
        assert_string_equal(cap.name, "Contoso-Attrs/R&D");
        assert_string_equal(cap.text, "N=5;");
        kdecoder_free(d);
}

/* A manifest whose elements carry a prefix (its namespace bound to one), with an internal DTD:
   elements by their local names, an entity in an attribute replaced, a default the DTD gives an
   attribute read as if written, a string of the string table through its entity. */
static void test_manifest_prefixed(void **state)
{
        static const char xml[] =
                "<?xml version=\"1.0\"?>\n<!DOCTYPE m [<!ENTITY co \"Contoso\">"
                "<!ATTLIST m:event template CDATA \"t1\">]>\n"
                "<m:instrumentationManifest xmlns:m=\"http://schemas.microsoft.com/win/2004/08/"
                "events\" xmlns:x=\"urn:x\"><m:instrumentation><m:events>"
                "<m:provider name=\"&co;-Prefixed\" "
                "guid=\"{11223344-5566-7788-0102-030405060708}\">"
                "<m:tasks><m:task x:name=\"Decoy\" name=\"T&#65;\" value=\"1\"/></m:tasks>"
                "<m:maps><m:valueMap name=\"M\"><m:map value=\"1\" message=\"$(string.one)\"/>"
                "</m:valueMap></m:maps><m:templates><m:template tid=\"t1\">"
                "<m:data name=\"A\" inType=\"win:UInt32\" map=\"M\"/></m:template></m:templates>"
                "<m:events><m:event value=\"1\" version=\"0\" task=\"TA\" opcode=\"win:Start\"/>"
                "</m:events></m:provider></m:events></m:instrumentation><m:localization>"
                "<m:resources culture=\"en-US\"><m:stringTable>"
                "<m:string id=\"one\" value=\"One &amp; only\"/></m:stringTable></m:resources>"
                "</m:localization></m:instrumentationManifest>";
        struct kdecoder *d = kdecoder_new(true);
        (void)state;

        assert_non_null(d);
        deliver_manifest(d, xml, sizeof(xml) - 1);
        assert_string_equal(cap.name, "Contoso-Prefixed/ManifestData");
        assert_int_equal(decode(d, &prov, 1, 1, 0, false, (const uint8_t[]){1, 0, 0, 0}, 4), 0);
        assert_string_equal(cap.name, "Contoso-Prefixed/TA/Start");
        assert_string_equal(cap.text, "A=One & only;");
        kdecoder_free(d);
}

/* Tasks, opcodes and templates found by name as a scan in document order finds them: of two
   tasks or templates of one name the first (the second task has the opcode the event names: not
   taken), a name with an entity (read through xmlGetProp), a template without a tid passed
   over, and the own opcodes of twelve tasks looked up in turn and again (more lists than the
   reader keeps indexed at once). */
static void test_manifest_lookups(void **state)
{
        static char xml[16384];
        size_t n = 0;
#define XML(...) n += (size_t)snprintf(xml + n, sizeof(xml) - n, __VA_ARGS__)
        XML("<instrumentationManifest xmlns=\"http://schemas.microsoft.com/win/2004/08/events\">"
            "<instrumentation><events>"
            "<provider name=\"Contoso-Find\" guid=\"{11223344-5566-7788-0102-030405060708}\">"
            "<tasks>\n  <task name=\"Dup\" value=\"1\"/>\n"
            "  <task name=\"Dup\" value=\"2\"><opcodes><opcode name=\"Own\" value=\"11\"/>"
            "</opcodes></task>\n  <task name=\"A&amp;B\" value=\"3\"/>\n");
        for (int i = 0; i < 12; i++)
                XML("  <task name=\"T%d\" value=\"%d\"><opcodes><opcode name=\"O%d\" "
                    "value=\"%d\"/></opcodes></task>\n",
                    i, 10 + i, i, 20 + i);
        XML("</tasks><templates>"
            "<template><data name=\"NoTid\" inType=\"win:UInt8\"/></template>"
            "<template tid=\"TT\"><data name=\"First\" inType=\"win:UInt8\"/></template>"
            "<template tid=\"TT\"><data name=\"Second\" inType=\"win:UInt8\"/></template>"
            "</templates><events>"
            "<event value=\"1\" version=\"0\" task=\"Dup\" opcode=\"Own\" template=\"TT\"/>"
            "<event value=\"2\" version=\"0\" task=\"A&amp;B\" template=\"TT\"/>");
        for (int i = 0; i < 24; i++)
                XML("<event value=\"%d\" version=\"0\" task=\"T%d\" opcode=\"O%d\" "
                    "template=\"TT\"/>",
                    100 + i, i % 12, i % 12);
        XML("</events></provider></events></instrumentation></instrumentationManifest>");
#undef XML
        assert_true(n < sizeof(xml) - 1);
        struct kdecoder *d = kdecoder_new(true);
        (void)state;

        assert_non_null(d);
        deliver_manifest(d, xml, n);
        assert_string_equal(cap.name, "Contoso-Find/ManifestData");
        /* the first Dup, without an opcode Own: no opcode in the name; the first TT */
        assert_int_equal(decode(d, &prov, 1, 0, 0, false, (const uint8_t[]){5}, 1), 0);
        assert_string_equal(cap.name, "Contoso-Find/Dup");
        assert_string_equal(cap.text, "First=5;");
        assert_int_equal(decode(d, &prov, 2, 0, 0, false, (const uint8_t[]){6}, 1), 0);
        assert_string_equal(cap.name, "Contoso-Find/A&B");
        for (int i = 0; i < 24; i++) {
                char want[64];
                snprintf(want, sizeof(want), "Contoso-Find/T%d/O%d", i % 12, i % 12);
                assert_int_equal(decode(d, &prov, (uint16_t)(100 + i), (uint8_t)(20 + i % 12), 0,
                                        false, (const uint8_t[]){7}, 1),
                                 0);
                assert_string_equal(cap.name, want);
        }
        kdecoder_free(d);
}

/* A manifest of the provider: event 1 with one field, named field, mapped by the map M whose
   value 1 reads one; without the event when field is NULL, without the map when one is. */
static size_t again_manifest(char *xml, size_t size, const char *field, const char *one)
{
        int n = snprintf(xml, size,
                         "<instrumentationManifest><instrumentation><events>"
                         "<provider name=\"Contoso-Again\" "
                         "guid=\"{11223344-5566-7788-0102-030405060708}\">");
        if (one)
                n += snprintf(xml + n, size - (size_t)n,
                              "<maps><valueMap name=\"M\"><map value=\"1\" message=\"%s\"/>"
                              "</valueMap></maps>",
                              one);
        if (field)
                n += snprintf(xml + n, size - (size_t)n,
                              "<templates><template tid=\"T\"><data name=\"%s\" "
                              "inType=\"win:UInt32\" map=\"M\"/></template></templates>"
                              "<events><event value=\"1\" version=\"0\" task=\"Go\" "
                              "template=\"T\"/></events>",
                              field);
        n += snprintf(xml + n, size - (size_t)n,
                      "</provider></events></instrumentation></instrumentationManifest>");
        assert_true(n > 0 && (size_t)n < size);
        return (size_t)n;
}

/* A manifest logged again with the same text (PerfView's at the start and at the rundown) keeps
   the descriptions its first reading made, unless something replaced one of them since: an event
   or a map of the provider from another manifest, whether logged by another provider (which
   leaves the provider's last manifest read as it was) or by the provider itself. Then it is
   read again and its own come back. */
static void test_manifest_sent_again(void **state)
{
        static const uint8_t one[4] = {1, 0, 0, 0};
        static const GUID other = {0x55667788, 0x5566, 0x7788, {8, 7, 6, 5, 4, 3, 2, 1}};
        char a[1024], b[1024], maps[1024];
        size_t na = again_manifest(a, sizeof(a), "A", "One");
        size_t nb = again_manifest(b, sizeof(b), "B", NULL);
        size_t nm = again_manifest(maps, sizeof(maps), NULL, "Uno");
        struct kdecoder *d = kdecoder_new(true);
        (void)state;

        assert_non_null(d);
        deliver_manifest(d, a, na);
        assert_int_equal(decode(d, &prov, 1, 0, 0, false, one, 4), 0);
        assert_string_equal(cap.text, "A=One;");
        const char *first = cap.name_ptr;

        /* the same text: its descriptions as they were (not read again) */
        deliver_manifest(d, a, na);
        assert_string_equal(cap.name, "Contoso-Again/ManifestData");
        assert_int_equal(decode(d, &prov, 1, 0, 0, false, one, 4), 0);
        assert_string_equal(cap.text, "A=One;");
        assert_ptr_equal(cap.name_ptr, first);

        /* another manifest replaced the event: the first one's text read again */
        deliver_manifest_as(d, &other, b, nb);
        assert_int_equal(decode(d, &prov, 1, 0, 0, false, one, 4), 0);
        assert_string_equal(cap.text, "B=One;");
        deliver_manifest(d, a, na);
        assert_int_equal(decode(d, &prov, 1, 0, 0, false, one, 4), 0);
        assert_string_equal(cap.text, "A=One;");
        assert_ptr_not_equal(cap.name_ptr, first);

        /* another replaced the map only */
        deliver_manifest_as(d, &other, maps, nm);
        assert_int_equal(decode(d, &prov, 1, 0, 0, false, one, 4), 0);
        assert_string_equal(cap.text, "A=Uno;");
        deliver_manifest(d, a, na);
        assert_int_equal(decode(d, &prov, 1, 0, 0, false, one, 4), 0);
        assert_string_equal(cap.text, "A=One;");
        const char *last = cap.name_ptr;
        deliver_manifest(d, a, na);
        assert_int_equal(decode(d, &prov, 1, 0, 0, false, one, 4), 0);
        assert_ptr_equal(cap.name_ptr, last);

        /* the provider's own other manifest, then its first again */
        deliver_manifest(d, b, nb);
        assert_int_equal(decode(d, &prov, 1, 0, 0, false, one, 4), 0);
        assert_string_equal(cap.text, "B=One;");
        deliver_manifest(d, a, na);
        assert_int_equal(decode(d, &prov, 1, 0, 0, false, one, 4), 0);
        assert_string_equal(cap.text, "A=One;");

        /* a text that could not be read is read again (and fails again) */
        memcpy(b, "<oops", 5);
        uint8_t p[8 + 5];
        memcpy(p, (const uint8_t[]){1, 1, 0, 0x5B, 1, 0, 0, 0}, 8);
        memcpy(p + 8, b, 5);
        assert_int_equal(decode(d, &prov, 0xFFFE, 254, 1, false, p, sizeof(p)), -EBADMSG);
        assert_int_equal(decode(d, &prov, 0xFFFE, 254, 1, false, p, sizeof(p)), -EBADMSG);
        kdecoder_free(d);
}

/* The same text given to another registry is read into it, the first registry gone: what a
   manifests' set keeps of a reading holds for the registry it was read into only (its
   descriptions are not even looked at: the ASan build fails on their use after free without
   the registry's check). */
static void test_manifest_other_registry(void **state)
{
        char a[1024], err[128] = "";
        size_t na = again_manifest(a, sizeof(a), "A", "One");
        uint8_t p[8 + sizeof(a)];
        struct etw_manifests *m = etw_manifests_new();
        struct tdh_registry *r1 = tdh_registry_new(), *r2 = tdh_registry_new();
        int rc = -1;
        (void)state;

        memcpy(p, (const uint8_t[]){1, 1, 0, 0x5B, 1, 0, 0, 0}, 8);
        memcpy(p + 8, a, na);
        assert_string_equal(etw_manifests_chunk(m, r1, &prov, p, 8 + na, &rc, err, sizeof(err)),
                            "Contoso-Again/ManifestData");
        assert_int_equal(rc, 0);
        assert_non_null(tdh_registry_find(r1, &prov, 1, 0, false));
        tdh_registry_free(r1);
        etw_manifests_chunk(m, r2, &prov, p, 8 + na, &rc, err, sizeof(err));
        assert_int_equal(rc, 0);
        assert_non_null(tdh_registry_find(r2, &prov, 1, 0, false));
        etw_manifests_free(m);
        tdh_registry_free(r2);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_described_event_decoded),
                cmocka_unit_test(test_damaged_descriptions),
                cmocka_unit_test(test_clr_map_not_carried),
                cmocka_unit_test(test_many_maps),
                cmocka_unit_test(test_description_replaced),
                cmocka_unit_test(test_put_number),
                cmocka_unit_test(test_manifest_data),
                cmocka_unit_test(test_manifest_attributes),
                cmocka_unit_test(test_manifest_prefixed),
                cmocka_unit_test(test_manifest_lookups),
                cmocka_unit_test(test_manifest_sent_again),
                cmocka_unit_test(test_manifest_other_registry),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
