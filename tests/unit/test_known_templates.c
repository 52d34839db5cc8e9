/* SPDX-License-Identifier: MIT */
/* test_known_templates.c: cmocka tests of the .NET runtime's and rundown's events, and Windows
 * PowerShell's, decoded by their manifests' templates (backend/decode/known_templates.c, the
 * tables in clr_template_list.c and ps_template_list.c): every template of the tables read,
 * fields in order, arrays counted by an earlier field, a version past the last known, payloads
 * cut short, PowerShell's events under both its providers. */
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
#include "known_templates.h"
#include "tdh_blob.h"
#include "decode_payload.h"

static const GUID runtime = {
        0xe13c0d23, 0xccbc, 0x4e12, {0x93, 0x1b, 0xd9, 0xcc, 0x2e, 0xee, 0x27, 0xe4}};
static const GUID rundown = {
        0xa669021c, 0xc450, 0x4609, {0xa0, 0x35, 0x5a, 0xf5, 0x9a, 0xf4, 0xdf, 0x18}};
/* Microsoft-Windows-PowerShell, PowerShellCore */
static const GUID powershell = {
        0xa0c1853b, 0x5c40, 0x4b15, {0x87, 0x66, 0x3c, 0xf1, 0xc5, 0x8f, 0x98, 0x5a}};
static const GUID powershell_core = {
        0xf90714a8, 0x5509, 0x434a, {0xbf, 0x6d, 0xb1, 0x62, 0x4c, 0x8a, 0x19, 0xa2}};

static struct {
        enum kevent_type type;
        char name[160];
        uint32_t nr_fields;
        char text[2048]; /* "name=value;..." */
} cap;

static void capture(void *ctx, const struct kevent *ev)
{
        (void)ctx;
        cap.type = ev->type;
        snprintf(cap.name, sizeof(cap.name), "%s", ev->name ? ev->name : "");
        cap.nr_fields = fields_text(ev, cap.text, sizeof(cap.text));
}

static void bb_u16(struct bb *b, uint16_t v)
{
        put16(b, b->n, v);
        b->n += 2;
}
static void bb_u32(struct bb *b, uint32_t v)
{
        put32(b, b->n, v);
        b->n += 4;
}
static void bb_u64(struct bb *b, uint64_t v)
{
        bb_u32(b, (uint32_t)v);
        bb_u32(b, (uint32_t)(v >> 32));
}
static void bb_utf16(struct bb *b, const char *s)
{
        add_str(b, s);
}

static int decode(struct kdecoder *d, const GUID *g, uint16_t id, uint8_t version,
                  const struct bb *b)
{
        memset(&cap, 0, sizeof(cap));
        return decode_payload(d, g, id, 0, version, false, b->b, b->n, capture);
}

/* Every template of the table is read (a typo in its text would leave its events without
   fields): each decodes a payload of zeros (empty strings, empty arrays) into fields. */
static void test_every_template_read(void **state)
{
        (void)state;
        struct kdecoder *d = kdecoder_new(true);
        struct bb b = {.n = 0};

        memset(b.b, 0, sizeof(b.b));
        b.n = 4096;
        assert_true(clr_nr_templates > 0);
        assert_true(ps_nr_templates > 0);
        for (size_t i = 0; i < clr_nr_templates + ps_nr_templates; i++) {
                const struct clr_template *t = i < clr_nr_templates
                                                       ? &clr_templates[i]
                                                       : &ps_templates[i - clr_nr_templates];
                const GUID *g = t->provider == TMPL_CLR_RUNTIME   ? &runtime
                                : t->provider == TMPL_CLR_RUNDOWN ? &rundown
                                                                  : &powershell;
                int rc = decode(d, g, t->id, t->min_version, &b);
                /* (the runtime's names are clr.c's where it has one) */
                if (rc != 0 || (t->fields[0] && cap.type != KEV_FIELDS) ||
                    (t->provider == TMPL_POWERSHELL && strcmp(cap.name, t->name) != 0))
                        fail_msg("%s v%u (%s): rc %d, type %d, name %s", t->name, t->min_version,
                                 t->fields, rc, (int)cap.type, cap.name);
        }
        kdecoder_free(d);
}

/* Windows PowerShell's events (as krabsetw's PowerShell trace holds them) by its manifest's
   templates, under its provider and PowerShell 7's: strings in order, an event without fields,
   a value map, a string cut short. */
static void test_powershell_events(void **state)
{
        (void)state;
        struct kdecoder *d = kdecoder_new(true);
        struct bb b = {.n = 0};

        add_str(&b, "ctx");
        add_str(&b, "");
        add_str(&b, "Command Get-Date is Started.");
        assert_int_equal(decode(d, &powershell, 7937, 1, &b), 0);
        assert_string_equal(cap.name, "PowerShell/CommandLifecycle");
        assert_string_equal(cap.text,
                            "ContextInfo=ctx;UserData=;Payload=Command Get-Date is Started.;");
        assert_int_equal(decode(d, &powershell_core, 7937, 1, &b), 0);
        assert_string_equal(cap.name, "PowerShell/CommandLifecycle");
        b.n = 0;
        add_str(&b, "11952");
        add_str(&b, "DefaultAppDomain");
        assert_int_equal(decode(d, &powershell, 53504, 1, &b), 0);
        assert_string_equal(cap.name, "PowerShell/RemoteNamedpipeListenerStart");
        assert_string_equal(cap.text, "param1=11952;param2=DefaultAppDomain;");
        b.n = 0;
        assert_int_equal(decode(d, &powershell, 40961, 1, &b), 0);
        assert_string_equal(cap.name, "PowerShell/PowershellConsoleStartupStart");
        assert_int_equal(cap.nr_fields, 0);
        /* 28676: a string, then a UInt32 of the SerializationMethod map */
        add_str(&b, "System.Object");
        bb_u32(&b, 1);
        assert_int_equal(decode(d, &powershell, 28676, 1, &b), 0);
        assert_string_equal(cap.text, "SerializedType=System.Object;OverridenMode=String;");
        /* the map's value cut off: short */
        b.n -= 2;
        assert_int_equal(decode(d, &powershell, 28676, 1, &b), -EBADMSG);
        /* with the extended items a session adds (its terminal session's id): decoded alike */
        b.n = 0;
        add_str(&b, "c");
        add_str(&b, "u");
        add_str(&b, "p");
        uint32_t ts_id = 1;
        EVENT_HEADER_EXTENDED_DATA_ITEM item = {.ExtType = EVENT_HEADER_EXT_TYPE_TS_ID,
                                                .DataSize = sizeof(ts_id),
                                                .DataPtr = (ULONGLONG)(uintptr_t)&ts_id};
        EVENT_RECORD r;
        memset(&r, 0, sizeof(r));
        r.EventHeader.Flags = EVENT_HEADER_FLAG_64_BIT_HEADER | EVENT_HEADER_FLAG_EXTENDED_INFO;
        r.EventHeader.ProviderId = powershell;
        r.EventHeader.EventDescriptor.Id = 7939;
        r.EventHeader.EventDescriptor.Version = 1;
        r.ExtendedDataCount = 1;
        r.ExtendedData = &item;
        r.UserData = b.b;
        r.UserDataLength = (USHORT)b.n;
        memset(&cap, 0, sizeof(cap));
        assert_int_equal(kdecoder_decode(d, &r, capture, NULL), 0);
        assert_string_equal(cap.name, "PowerShell/ProviderLifecycle");
        assert_string_equal(cap.text, "ContextInfo=c;UserData=u;Payload=p;");
        /* an Id the manifest lacks: no fields, named by its Id */
        assert_int_equal(decode(d, &powershell, 7, 1, &b), 0);
        assert_int_equal(cap.type, KEV_OTHER);
        kdecoder_free(d);
}

/* The rundown's markers: their ClrInstanceID, and the name the decoder gives them. */
static void test_rundown_markers(void **state)
{
        (void)state;
        struct kdecoder *d = kdecoder_new(true);
        struct bb b = {.n = 0};

        bb_u16(&b, 8);
        assert_int_equal(decode(d, &rundown, 148, 1, &b), 0);
        assert_string_equal(cap.name, "DotNETRuntimeRundown/DCEndInit");
        assert_string_equal(cap.text, "ClrInstanceID=8;");
        /* a version past the last known reads as the last: what it appends is left */
        bb_u32(&b, 77);
        assert_int_equal(decode(d, &rundown, 146, 3, &b), 0);
        assert_string_equal(cap.name, "DotNETRuntimeRundown/DCEndComplete");
        assert_string_equal(cap.text, "ClrInstanceID=8;");
        /* cut short: counted short, no fields */
        b.n = 1;
        assert_int_equal(decode(d, &rundown, 148, 1, &b), -EBADMSG);
        assert_int_not_equal(cap.type, KEV_FIELDS);
        kdecoder_free(d);
}

/* A loader event as a PerfView recording has it (no MetaData in the trace): ids in hex, flags
   through their map, the assembly's name; the rundown's form of it alike. */
static void test_loader_events(void **state)
{
        (void)state;
        struct kdecoder *d = kdecoder_new(true);
        struct bb b = {.n = 0};

        bb_u64(&b, 0x1b0ef10ed30);
        bb_u64(&b, 0x1b0ef0f3c00);
        bb_u64(&b, 0);
        bb_u32(&b, 0x4 | 0x8); /* Native, Collectible */
        bb_utf16(&b, "System.Private.CoreLib, Version=8.0.0.0");
        bb_u16(&b, 8);
        assert_int_equal(decode(d, &runtime, 154, 1, &b), 0);
        assert_string_equal(cap.name, "DotNETRuntime/AssemblyLoad");
        assert_string_equal(cap.text, "AssemblyID=0x1b0ef10ed30;AppDomainID=0x1b0ef0f3c00;"
                                      "BindingID=0x0;AssemblyFlags=Native|Collectible;"
                                      "FullyQualifiedAssemblyName=System.Private.CoreLib, "
                                      "Version=8.0.0.0;ClrInstanceID=8;");
        assert_int_equal(decode(d, &rundown, 156, 1, &b), 0);
        assert_string_equal(cap.name, "DotNETRuntimeRundown/AssemblyDCEnd");
        assert_non_null(strstr(cap.text, "AssemblyFlags=Native|Collectible;"));

        /* DomainModuleDCEnd: ModuleFlags through ModuleFlagsMap */
        b.n = 0;
        bb_u64(&b, 0x7ffb48394000);
        bb_u64(&b, 0x1b0ef10ed30);
        bb_u64(&b, 0x1b0ef0f3c00);
        bb_u32(&b, 0x8 | 0x20);
        bb_u32(&b, 0);
        bb_utf16(&b, "C:\\app\\System.Private.CoreLib.dll");
        bb_utf16(&b, "");
        bb_u16(&b, 8);
        assert_int_equal(decode(d, &rundown, 152, 1, &b), 0);
        assert_string_equal(cap.name, "DotNETRuntimeRundown/DomainModuleDCEnd");
        assert_string_equal(cap.text, "ModuleID=0x7ffb48394000;AssemblyID=0x1b0ef10ed30;"
                                      "AppDomainID=0x1b0ef0f3c00;ModuleFlags=Manifest|"
                                      "ReadyToRunModule;Reserved1=0;ModuleILPath=C:\\app\\"
                                      "System.Private.CoreLib.dll;ModuleNativePath=;"
                                      "ClrInstanceID=8;");
        /* the same cut inside its path: counted short */
        b.n = 40;
        assert_int_equal(decode(d, &rundown, 152, 1, &b), -EBADMSG);
        kdecoder_free(d);
}

/* MethodILToNativeMap: two arrays counted by the field before them, then the fields after. */
static void test_arrays_counted_by_a_field(void **state)
{
        (void)state;
        struct kdecoder *d = kdecoder_new(true);
        struct bb b = {.n = 0};

        bb_u64(&b, 0x7ffb487313d8);
        bb_u64(&b, 0);
        b.b[b.n++] = 0; /* MethodExtent */
        bb_u16(&b, 3);
        bb_u32(&b, 0);
        bb_u32(&b, 4);
        bb_u32(&b, 9);
        bb_u32(&b, 0);
        bb_u32(&b, 16);
        bb_u32(&b, 40);
        bb_u16(&b, 8);
        bb_u64(&b, 0);
        assert_int_equal(decode(d, &runtime, 190, 1, &b), 0);
        assert_string_equal(cap.name, "DotNETRuntime/MethodILToNativeMap");
        assert_string_equal(cap.text,
                            "MethodID=0x7ffb487313d8;ReJITID=0x0;MethodExtent=0;"
                            "CountOfMapEntries=3;ILOffsets=[0,4,9];NativeOffsets=[0,16,40];"
                            "ClrInstanceID=8;ILVersionID=0;");
        /* a count past the payload: counted short */
        put16(&b, 17, 5000);
        assert_int_equal(decode(d, &runtime, 190, 1, &b), -EBADMSG);
        kdecoder_free(d);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_every_template_read),
                cmocka_unit_test(test_rundown_markers),
                cmocka_unit_test(test_powershell_events),
                cmocka_unit_test(test_loader_events),
                cmocka_unit_test(test_arrays_counted_by_a_field),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
