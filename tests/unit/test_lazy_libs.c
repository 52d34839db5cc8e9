/* SPDX-License-Identifier: MIT */
/* test_lazy_libs.c: cmocka tests of the libraries loaded at their first use where they are
 * missing: this test's copies of backend/decode/xml_lazy.c and src/capstone_lazy.c look for
 * SONAMEs no system has. A manifest then leaves its events undecoded, and the decoder keeps
 * why (the library, its Debian package) for the user; annotate's loader says why there is no
 * disassembly. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capstone_lazy.h"
#include "decode_payload.h"
#include "etw/ntwmi.h"
#include "kdecoder.h"
#include "kevent.h"
#include "xml_lazy.h"

static const GUID prov = {0x11223344, 0x5566, 0x7788, {1, 2, 3, 4, 5, 6, 7, 8}};

static struct {
        enum kevent_type type;
        char name[160];
} cap;

static void capture(void *ctx, const struct kevent *ev)
{
        (void)ctx;
        cap.type = ev->type;
        snprintf(cap.name, sizeof(cap.name), "%s", ev->name ? ev->name : "");
}

static int decode(struct kdecoder *d, uint16_t id, uint8_t op, uint8_t ver, const void *p, size_t n)
{
        memset(&cap, 0, sizeof(cap));
        return decode_payload(d, &prov, id, op, ver, false, p, n, capture);
}

/* A manifest in one ManifestData chunk, twice: no crash, its events left undecoded (named by
   provider and Id), why kept for the user in the decoder's counters. */
static void test_manifest_without_expat(void **state)
{
        (void)state;
        FILE *f = fopen(FIXTURES_DIR "/contoso_manifest.xml", "rb");
        assert_non_null(f);
        uint8_t *p = malloc(8 + 65536);
        assert_non_null(p);
        size_t n = fread(p + 8, 1, 65536, f);
        fclose(f);
        assert_true(n > 100);
        memcpy(p, (const uint8_t[]){1, 1, 0, 0x5B, 1, 0, 0, 0}, 8);

        struct kdecoder *d = kdecoder_new(true);
        assert_non_null(d);
        struct kdecoder_stats ks;
        kdecoder_get_stats(d, &ks);
        assert_string_equal(ks.warning, "");
        /* not a damaged payload: not counted short */
        assert_int_equal(decode(d, 0xFFFE, 254, 1, p, 8 + n), 0);
        assert_string_not_equal(cap.name, "Contoso-Orders/ManifestData");
        assert_int_equal(decode(d, 0xFFFE, 254, 1, p, 8 + n), 0);
        /* the event stays undecoded: by its provider and Id, no fields */
        assert_int_equal(decode(d, 1, 1, 0, "A\0n\0n\0\0\0", 8), 0);
        assert_int_equal(cap.type, KEV_OTHER);
        assert_string_equal(cap.name, "{11223344-5566-7788-0102-030405060708}/EventID(1)");

        kdecoder_get_stats(d, &ks);
        print_message("warning: %s\n", ks.warning);
        assert_int_equal(ks.nr_short, 0);
        assert_non_null(strstr(ks.warning, "libetwtop-no-such-xml.so.0 could not be loaded ("));
        assert_non_null(strstr(ks.warning, "events are left undecoded"));
        assert_non_null(strstr(ks.warning, "apt-get install libexpat1)"));
        kdecoder_free(d);
        free(p);

        char why[320] = "";
        assert_null(xml_lazy(why, sizeof(why)));
        assert_non_null(strstr(why, "libetwtop-no-such-xml.so.0 could not be loaded"));
}

/* annotate's disassembler: NULL, and why names the library and its Debian package */
static void test_capstone_missing(void **state)
{
        (void)state;
        char why[320] = "";
        assert_null(capstone_lazy(why, sizeof(why)));
        print_message("why: %s\n", why);
        assert_non_null(strstr(why, "libetwtop-no-such-capstone.so.0 could not be loaded ("));
        assert_non_null(strstr(why, "disassembly is unavailable (on Debian: apt-get install "));
        assert_null(capstone_lazy(NULL, 0)); /* asked again: the same answer, no crash */
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_manifest_without_expat),
                cmocka_unit_test(test_capstone_missing),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
