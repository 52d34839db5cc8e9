/* SPDX-License-Identifier: MIT */
/* test_kevent_mof.c: cmocka tests of the kernel classes decoded by their MOF layouts
 * (backend/decode/kevent_mof.c), from payloads built byte by byte as Windows writes them. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kdecoder.h"
#include "kevent.h"
#include "kevent_mof.h"
#include "lznt1.h"
#include "etw/ntwmi.h"

#define NONE 0xFFFFFFFFu

struct bb {
        uint8_t b[2048];
        size_t n;
};

static void bb_u16(struct bb *b, uint16_t v)
{
        memcpy(b->b + b->n, &v, 2);
        b->n += 2;
}
static void bb_u32(struct bb *b, uint32_t v)
{
        memcpy(b->b + b->n, &v, 4);
        b->n += 4;
}
static void bb_u64(struct bb *b, uint64_t v)
{
        memcpy(b->b + b->n, &v, 8);
        b->n += 8;
}
static void bb_ptr(struct bb *b, uint64_t v, unsigned psize)
{
        if (psize == 8)
                bb_u64(b, v);
        else
                bb_u32(b, (uint32_t)v);
}
static void bb_raw(struct bb *b, const void *p, size_t n)
{
        memcpy(b->b + b->n, p, n);
        b->n += n;
}
static void bb_utf16(struct bb *b, const char *s)
{
        do
                bb_u16(b, (uint8_t)*s);
        while (*s++);
}

/* What the sink saw of the one event. */
static struct {
        int nr;
        enum kevent_type type;
        char name[64];
        uint32_t pid, tid;
        uint32_t nr_fields;
        struct {
                char name[40];
                enum kevent_field_kind kind;
                uint64_t u;
                char s[256];
        } f[KEV_MAX_FIELDS];
} cap;

static void capture(void *ctx, const struct kevent *ev)
{
        (void)ctx;
        cap.nr++;
        cap.type = ev->type;
        strncpy(cap.name, ev->name ? ev->name : "", sizeof(cap.name) - 1);
        cap.pid = ev->pid;
        cap.tid = ev->tid;
        const struct kevent_field *list = NULL;
        cap.nr_fields = ev->type == KEV_FIELDS ? kevent_fields(ev, &list) : 0;
        for (uint32_t i = 0; i < cap.nr_fields; i++) {
                const struct kevent_field *f = &list[i];
                strncpy(cap.f[i].name, f->name, sizeof(cap.f[i].name) - 1);
                cap.f[i].kind = f->kind;
                cap.f[i].u = f->u;
                strncpy(cap.f[i].s, f->s, sizeof(cap.f[i].s) - 1);
        }
}

/* Decodes one classic record; the payload is copied to a block of exactly its size (ASan). */
static int feed(const GUID *g, uint8_t op, uint8_t ver, unsigned psize, uint32_t pid, uint32_t tid,
                const struct bb *b)
{
        struct kdecoder *d = kdecoder_new(true);
        EVENT_RECORD r;
        uint8_t *p = malloc(b->n ? b->n : 1);

        assert_non_null(d);
        assert_non_null(p);
        memcpy(p, b->b, b->n);
        memset(&r, 0, sizeof(r));
        memset(&cap, 0, sizeof(cap));
        r.EventHeader.Size = (USHORT)(sizeof(EVENT_HEADER) + b->n);
        r.EventHeader.Flags =
                EVENT_HEADER_FLAG_CLASSIC_HEADER |
                (psize == 8 ? EVENT_HEADER_FLAG_64_BIT_HEADER : EVENT_HEADER_FLAG_32_BIT_HEADER);
        r.EventHeader.ProcessId = pid;
        r.EventHeader.ThreadId = tid;
        r.EventHeader.ProviderId = *g;
        r.EventHeader.EventDescriptor.Opcode = op;
        r.EventHeader.EventDescriptor.Version = ver;
        r.UserData = p;
        r.UserDataLength = (USHORT)b->n;
        int rc = kdecoder_decode(d, &r, capture, NULL);
        free(p);
        kdecoder_free(d);
        assert_int_equal(cap.nr, 1);
        return rc;
}

/* Decodes one manifest record (an EVENT_HEADER, 64-bit) of provider g with this Id. */
static int feed_id(const GUID *g, uint16_t id, uint8_t op, uint8_t ver, const struct bb *b)
{
        struct kdecoder *d = kdecoder_new(true);
        EVENT_RECORD r;
        uint8_t *p = malloc(b->n ? b->n : 1);

        assert_non_null(d);
        assert_non_null(p);
        memcpy(p, b->b, b->n);
        memset(&r, 0, sizeof(r));
        memset(&cap, 0, sizeof(cap));
        r.EventHeader.Size = (USHORT)(sizeof(EVENT_HEADER) + b->n);
        r.EventHeader.Flags = EVENT_HEADER_FLAG_64_BIT_HEADER;
        r.EventHeader.ProcessId = 3676;
        r.EventHeader.ThreadId = 3680;
        r.EventHeader.ProviderId = *g;
        r.EventHeader.EventDescriptor.Id = id;
        r.EventHeader.EventDescriptor.Opcode = op;
        r.EventHeader.EventDescriptor.Version = ver;
        r.UserData = p;
        r.UserDataLength = (USHORT)b->n;
        int rc = kdecoder_decode(d, &r, capture, NULL);
        free(p);
        kdecoder_free(d);
        assert_int_equal(cap.nr, 1);
        return rc;
}

/* The index of the field called name, failing the test when it is absent. */
static int field(const char *name)
{
        for (uint32_t i = 0; i < cap.nr_fields; i++)
                if (strcmp(cap.f[i].name, name) == 0)
                        return (int)i;
        fail_msg("no field %s in %s", name, cap.name);
        return -1;
}

static uint64_t u(const char *name)
{
        return cap.f[field(name)].u;
}

static const char *s(const char *name)
{
        return cap.f[field(name)].s;
}

static void disk_read(struct bb *b, unsigned psize, bool has_tid)
{
        b->n = 0;
        bb_u32(b, 1);                    /* DiskNumber */
        bb_u32(b, 0x60043);              /* IrpFlags */
        bb_u32(b, 8704);                 /* TransferSize */
        bb_u32(b, 0);                    /* Reserved */
        bb_u64(b, 5412451328ull);        /* ByteOffset */
        bb_ptr(b, 0xfa001300c50, psize); /* FileObject */
        bb_ptr(b, 0xfa03b20b80, psize);  /* Irp */
        bb_u64(b, 31943);                /* HighResResponseTime */
        if (has_tid)
                bb_u32(b, 1716); /* IssuingThreadId (version 3) */
}

/* DiskIo Read, version 3, 64-bit: every property at its offset; the thread from the payload */
static void test_disk_io_read_v3(void **state)
{
        struct bb b;
        (void)state;

        disk_read(&b, 8, true);
        assert_int_equal(b.n, 52);
        assert_int_equal(feed(&DiskIoGuid, 10, 3, 8, NONE, NONE, &b), 0);
        assert_int_equal(cap.type, KEV_FIELDS);
        assert_string_equal(cap.name, "DiskIo/Read");
        assert_int_equal(cap.nr_fields, 9);
        assert_int_equal(u("DiskNumber"), 1);
        assert_int_equal(cap.f[field("IrpFlags")].kind, KEV_FIELD_HEX);
        assert_int_equal(u("IrpFlags"), 0x60043);
        assert_int_equal(u("TransferSize"), 8704);
        assert_int_equal(u("ByteOffset"), 5412451328ull);
        assert_int_equal(u("FileObject"), 0xfa001300c50ull);
        assert_int_equal(u("Irp"), 0xfa03b20b80ull);
        assert_int_equal(u("HighResResponseTime"), 31943);
        assert_int_equal(u("IssuingThreadId"), 1716);
        assert_int_equal(cap.tid, 1716);
        assert_int_equal(cap.pid, NONE); /* no thread table entry for it */

        /* the header's thread is kept where it has one */
        assert_int_equal(feed(&DiskIoGuid, 11, 3, 8, 4, 44, &b), 0);
        assert_string_equal(cap.name, "DiskIo/Write");
        assert_int_equal(cap.tid, 44);
        assert_int_equal(cap.pid, 4);
}

/* 32-bit pointers move every later property; version 2 has no IssuingThreadId */
static void test_disk_io_32bit_and_v2(void **state)
{
        struct bb b;
        (void)state;

        disk_read(&b, 4, true);
        assert_int_equal(b.n, 44);
        assert_int_equal(feed(&DiskIoGuid, 10, 3, 4, NONE, NONE, &b), 0);
        assert_int_equal(u("Irp"), 0x03b20b80u);
        assert_int_equal(u("HighResResponseTime"), 31943);
        assert_int_equal(u("IssuingThreadId"), 1716);

        disk_read(&b, 8, false);
        assert_int_equal(feed(&DiskIoGuid, 10, 2, 8, NONE, NONE, &b), 0);
        assert_int_equal(cap.type, KEV_FIELDS);
        assert_int_equal(cap.nr_fields, 8);
        assert_int_equal(cap.tid, NONE);
}

/* A payload shorter than the layout's fixed part is an error, not a guess */
static void test_short_payload(void **state)
{
        struct bb b;
        (void)state;

        disk_read(&b, 8, true);
        b.n = 20;
        assert_int_equal(feed(&DiskIoGuid, 10, 3, 8, NONE, NONE, &b), -EBADMSG);
        assert_int_equal(cap.type, KEV_OTHER);
        assert_int_equal(cap.nr_fields, 0);
}

/* TcpIp RecvIPV6 (TcpIp_TypeGroup3): addresses, ports in network order, the process */
/* kevent_format_ipv6 as inet_ntop writes an address (each group "%x", RFC 5952's "::" for the
   first longest run of two or more zero groups): addresses of every zero pattern, random groups. */
static void test_format_ipv6(void **state)
{
        (void)state;
        uint64_t r = 88172645463325252ull;

        for (unsigned pattern = 0; pattern < 256 * 8; pattern++) {
                uint8_t a[16];
                for (int g = 0; g < 8; g++) {
                        r ^= r << 13;
                        r ^= r >> 7;
                        r ^= r << 17;
                        unsigned v = (unsigned)r &
                                     (pattern >> 8 == 0  ? 0xffffu
                                      : pattern >> 8 < 4 ? 0xfffu >> (4 * (pattern >> 8) - 4)
                                                         : 0x1ffu);
                        if (pattern & (1u << g))
                                v = 0;
                        a[2 * g] = (uint8_t)(v >> 8);
                        a[2 * g + 1] = (uint8_t)v;
                }
                /* the reference: the C library's inet_ntop (RFC 5952 as well), but for the
                   addresses it writes with an IPv4 tail (::ffff:a.b.c.d, ::a.b.c.d), which
                   the decoder writes in groups as TDH does */
                char want[INET6_ADDRSTRLEN];
                assert_non_null(inet_ntop(AF_INET6, a, want, sizeof(want)));
                if (strchr(want, '.'))
                        continue;
                char got[64];
                size_t n = kevent_format_ipv6(got, sizeof(got), a);
                assert_string_equal(got, want);
                assert_int_equal(n, strlen(want));
        }
}

static void test_tcp_recv_ipv6(void **state)
{
        static const uint8_t daddr[16] = {0x20, 0x01, 0x48, 0x98, 0,    0xe0, 0,    0x81,
                                          0x7c, 0xb9, 0,    0xab, 0x0c, 0xd5, 0xe6, 0xaf};
        static const uint8_t saddr[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
        struct bb b = {.n = 0};
        (void)state;

        bb_u32(&b, 2108); /* PID */
        bb_u32(&b, 84);   /* size */
        bb_raw(&b, daddr, 16);
        bb_raw(&b, saddr, 16);
        bb_u16(&b, 0xbd01); /* dport 445, big-endian */
        bb_u16(&b, 0x19fa); /* sport 64025 */
        bb_u32(&b, 7);      /* seqnum */
        bb_u64(&b, 0x1234); /* connid */
        assert_int_equal(b.n, 56);
        assert_int_equal(feed(&TcpIpGuid, 27, 2, 8, NONE, NONE, &b), 0);
        assert_string_equal(cap.name, "TcpIp/RecvIPV6");
        assert_string_equal(s("daddr"), "2001:4898:e0:81:7cb9:ab:cd5:e6af");
        assert_string_equal(s("saddr"), "fe80::1");
        assert_int_equal(u("dport"), 445);
        assert_int_equal(u("sport"), 64025);
        assert_int_equal(u("seqnum"), 7);
        assert_int_equal(u("connid"), 0x1234);
        assert_int_equal(cap.pid, 2108);
}

/* The same opcode means another event in another provider, and another layout in another
   version: TcpIp 10 is SendIPV4 (with its times), UdpIp 10 is Send (without); TcpIp version 0
   has no layout here */
static void test_told_apart_by_provider_and_version(void **state)
{
        struct bb b = {.n = 0};
        (void)state;

        bb_u32(&b, 77);
        bb_u32(&b, 100);
        bb_raw(&b, (const uint8_t[]){10, 0, 0, 1}, 4);
        bb_raw(&b, (const uint8_t[]){127, 0, 0, 1}, 4);
        bb_u16(&b, 0x5000); /* 80 */
        bb_u16(&b, 0x3930); /* 12345 */
        bb_u32(&b, 11);     /* startime (TcpIp) / seqnum (UdpIp) */
        bb_u32(&b, 12);
        bb_u32(&b, 13);
        bb_u64(&b, 0x99);
        assert_int_equal(feed(&TcpIpGuid, 10, 2, 8, NONE, NONE, &b), 0);
        assert_string_equal(cap.name, "TcpIp/Send");
        assert_string_equal(s("daddr"), "10.0.0.1");
        assert_int_equal(u("dport"), 80);
        assert_int_equal(u("startime"), 11);
        assert_int_equal(u("seqnum"), 13);

        assert_int_equal(feed(&UdpIpGuid, 10, 2, 8, NONE, NONE, &b), 0);
        assert_string_equal(cap.name, "UdpIp/Send");
        assert_int_equal(u("seqnum"), 11);
        assert_int_equal(cap.pid, 77);

        assert_int_equal(feed(&TcpIpGuid, 10, 0, 8, NONE, NONE, &b), 0);
        assert_int_equal(cap.type, KEV_OTHER);
}

/* SystemConfig Services, version 2: strings one after another; the service's process is the
   subject, whoever logged the rundown */
static void test_services_strings(void **state)
{
        struct bb b = {.n = 0};
        (void)state;

        bb_u32(&b, 144); /* ProcessId */
        bb_u32(&b, 4);   /* ServiceState */
        bb_u32(&b, 5);   /* SubProcessTag */
        bb_utf16(&b, "Appinfo");
        bb_utf16(&b, "Application Information");
        bb_utf16(&b, "svchost.exe");
        assert_int_equal(feed(&EventTraceConfigGuid, 15, 2, 8, 3988, 3784, &b), 0);
        assert_string_equal(cap.name, "SystemConfig/Services");
        assert_string_equal(s("ServiceName"), "Appinfo");
        assert_string_equal(s("DisplayName"), "Application Information");
        assert_string_equal(s("ProcessName"), "svchost.exe");
        assert_int_equal(u("ServiceState"), 4);
        assert_int_equal(cap.pid, 144);
        assert_int_equal(cap.tid, 3784);

        /* a string without its NUL ends at the payload's end; the next one is absent */
        b.n -= 2 * (strlen("svchost.exe") + 1) + 2;
        assert_int_equal(feed(&EventTraceConfigGuid, 15, 2, 8, 3988, 3784, &b), -EBADMSG);
}

/* EventTrace's DbgID_RSDS and BuildInfo (a WPP logger's first events, PERFINFO64 records in a
   Windows 11 CldFlt log): the PDB's signature, age and name, and the build's lab string */
static void test_event_trace_wpp_header(void **state)
{
        struct bb b = {.n = 0};
        (void)state;

        bb_raw(&b,
               (const uint8_t[]){0xa6, 0x69, 0xbc, 0x00, 0xe0, 0xd1, 0x4d, 0x8f, 0xdb, 0x35, 0xc7,
                                 0x5a, 0x4a, 0x07, 0xc3, 0xcd},
               16);
        bb_u32(&b, 1);
        bb_raw(&b, "cldflt.pdb", 11);
        assert_int_equal(b.n, 31);
        assert_int_equal(feed(&EventTraceGuid, 64, 2, 8, 4, 244, &b), 0);
        assert_string_equal(cap.name, "EventTrace/DbgID_RSDS");
        assert_string_equal(s("GuidSig"), "{00bc69a6-d1e0-8f4d-db35-c75a4a07c3cd}");
        assert_int_equal(u("Age"), 1);
        assert_string_equal(s("PdbFileName"), "cldflt.pdb");
        /* cut inside the signature: short */
        b.n = 12;
        assert_int_equal(feed(&EventTraceGuid, 64, 2, 8, 4, 244, &b), -EBADMSG);

        b.n = 0;
        bb_raw(&b, "26100.1.amd64fre.ge_release.240331-1435", 40);
        assert_int_equal(feed(&EventTraceGuid, 66, 2, 8, 4, 244, &b), 0);
        assert_string_equal(cap.name, "EventTrace/BuildInfo");
        assert_string_equal(s("BuildLab"), "26100.1.amd64fre.ge_release.240331-1435");
}

/* SystemConfig CPU: fixed UTF-16 arrays */
static void test_cpu_fixed_strings(void **state)
{
        struct bb b = {.n = 0};
        (void)state;

        bb_u32(&b, 3592);
        bb_u32(&b, 8);
        bb_u32(&b, 4096);
        bb_u32(&b, 4096);
        bb_u32(&b, 65536);
        size_t at = b.n;
        bb_utf16(&b, "BUILD-W8");
        memset(b.b + b.n, 0, 800 - b.n + 8);
        b.n = at + 512;
        bb_utf16(&b, "CORP");
        b.n = 800;
        bb_u64(&b, 1);
        assert_int_equal(feed(&EventTraceConfigGuid, 10, 3, 8, NONE, NONE, &b), 0);
        assert_string_equal(cap.name, "SystemConfig/CPU");
        assert_int_equal(u("MHz"), 3592);
        assert_string_equal(s("ComputerName"), "BUILD-W8");
        assert_string_equal(s("DomainName"), "CORP");
        assert_int_equal(u("HyperThreadingFlag"), 1);
}

/* SysConfigEx 36 (NetworkInterface): a MIB_IF_ROW2, 1,352 bytes: its fixed strings, its
   address of PhysicalAddressLength bytes, its counters at their offsets */
static void test_sysconfigex_network_interface(void **state)
{
        static struct bb b; /* 1,352 bytes: not on the stack */
        (void)state;
        memset(&b, 0, sizeof(b));
        b.n = 0;
        bb_u64(&b, 0x6000001000000ull); /* InterfaceLuid */
        bb_u32(&b, 22);                 /* InterfaceIndex */
        static const uint8_t guid[16] = {0xfc, 0x3c, 0x8b, 0x5d, 0xc5, 0x85, 0xec, 0x11,
                                         0x97, 0xa0, 0x28, 0xd0, 0xea, 0x3e, 0x8e, 0x5f};
        bb_raw(&b, guid, 16);
        bb_utf16(&b, "Ethernet 2");
        b.n = 542;
        bb_utf16(&b, "Gigabit Ethernet Controller");
        b.n = 1056;
        bb_u32(&b, 6);
        static const uint8_t mac[6] = {0xd8, 0xbb, 0xc1, 0xab, 0x3e, 0xdf};
        bb_raw(&b, mac, 6);
        b.n = 1092;
        bb_raw(&b, mac, 6);
        b.n = 1124;
        bb_u32(&b, 1500); /* Mtu */
        bb_u32(&b, 6);    /* Type: ethernetCsmacd */
        b.n = 1156;
        bb_u32(&b, 1); /* OperStatus: up */
        b.n = 1192;
        bb_u64(&b, 2500000000ull); /* TransmitLinkSpeed */
        bb_u64(&b, 2500000000ull);
        bb_u64(&b, 123456789); /* InOctets */
        b.n = 1312;
        bb_u64(&b, 7); /* OutErrors */
        b.n = 1352;
        assert_int_equal(feed(&SysConfigExGuid, 36, 0, 8, NONE, NONE, &b), 0);
        assert_string_equal(cap.name, "SysConfigEx/NetworkInterface");
        assert_int_equal(u("InterfaceIndex"), 22);
        assert_string_equal(s("InterfaceGuid"), "{5d8b3cfc-85c5-11ec-97a0-28d0ea3e8e5f}");
        assert_string_equal(s("Alias"), "Ethernet 2");
        assert_string_equal(s("Description"), "Gigabit Ethernet Controller");
        assert_string_equal(s("PhysicalAddress"), "D8-BB-C1-AB-3E-DF");
        assert_string_equal(s("PermanentPhysicalAddress"), "D8-BB-C1-AB-3E-DF");
        assert_int_equal(u("Mtu"), 1500);
        assert_int_equal(u("OperStatus"), 1);
        assert_int_equal(u("TransmitLinkSpeed"), 2500000000ull);
        assert_int_equal(u("InOctets"), 123456789);
        assert_int_equal(u("OutErrors"), 7);
        /* cut inside its last field read: no layout read past its end */
        b.n = 1319;
        assert_int_equal(feed(&SysConfigExGuid, 36, 0, 8, NONE, NONE, &b), -EBADMSG);
}

/* SysConfigEx 37 (OsVersion): 10.0.22000.613 as the 64-bit version it is */
static void test_sysconfigex_os_version(void **state)
{
        struct bb b = {.n = 0};
        (void)state;
        bb_u64(&b, 0x000a000055f00265ull);
        bb_u32(&b, 3);
        bb_u32(&b, 0);
        assert_int_equal(feed(&SysConfigExGuid, 37, 0, 8, NONE, NONE, &b), 0);
        assert_string_equal(cap.name, "SysConfigEx/OsVersion");
        assert_string_equal(s("Version"), "10.0.22000.613");
}

/* EventTrace PartitionInfo (0x0050) and Image KernelBase (0x1421), HypercallPage (0x1422):
   their layouts, not a bare size */
static void test_partition_and_kernel_base(void **state)
{
        struct bb b = {.n = 0};
        (void)state;
        bb_u16(&b, 2);
        bb_u16(&b, 0);
        bb_u32(&b, 1);
        bb_u64(&b, (uint64_t)-5000);
        static const uint8_t guid[16] = {1, 0, 0, 0, 2, 0, 3, 0, 4, 5, 6, 7, 8, 9, 10, 11};
        bb_raw(&b, guid, 16);
        bb_raw(&b, guid, 16);
        assert_int_equal(feed(&EventTraceGuid, 80, 2, 8, NONE, NONE, &b), 0);
        assert_string_equal(cap.name, "EventTrace/PartitionInfo");
        assert_int_equal(u("EventVersion"), 2);
        assert_int_equal(u("PartitionType"), 1);
        assert_int_equal((int64_t)u("QpcOffsetFromRoot"), -5000);
        assert_string_equal(s("ParentId"), "{00000001-0002-0003-0405-060708090a0b}");
        b.n = 0;
        bb_u64(&b, 0xfffff802424ab000ull);
        assert_int_equal(feed(&ImageLoadGuid, 33, 2, 8, NONE, NONE, &b), 0);
        assert_string_equal(cap.name, "Image/KernelBase");
        assert_int_equal(u("ImageBase"), 0xfffff802424ab000ull);
        assert_int_equal(feed(&ImageLoadGuid, 34, 2, 8, NONE, NONE, &b), 0);
        assert_string_equal(cap.name, "Image/HypercallPage");
}

/* PerfInfo Mark (0x0F22): the mark's name, 8-bit, as WPR sets them */
static void test_perfinfo_mark(void **state)
{
        struct bb b = {.n = 0};
        (void)state;
        bb_raw(&b, "Wpr_Initiated_Rundown", 22);
        assert_int_equal(feed(&PerfInfoGuid, 34, 0, 8, 29796, 6588, &b), 0);
        assert_string_equal(cap.name, "PerfInfo/Mark");
        assert_string_equal(s("Name"), "Wpr_Initiated_Rundown");
        assert_int_equal(cap.pid, 29796);
}

/* WinSat's XML documents: UTF-16, LZNT1-compressed after the uncompressed size (the bytes below
   are "<WinSPR><SystemScore>8.1</SystemScore><MemoryScore>8.1</MemoryScore></WinSPR>" and its
   NUL compressed: one compressed chunk, literals and back-references both) */
static const uint8_t winspr_lznt1[] = {
        0x49, 0xb0, 0x00, 0x3c, 0x00, 0x57, 0x00, 0x69, 0x00, 0x6e, 0x00, 0x00, 0x53,
        0x00, 0x50, 0x00, 0x52, 0x00, 0x3e, 0x00, 0x02, 0x3c, 0x00, 0x48, 0x79, 0x00,
        0x73, 0x00, 0x74, 0x00, 0x08, 0x65, 0x00, 0x6d, 0x00, 0x58, 0x63, 0x00, 0x6f,
        0x00, 0x02, 0x72, 0x00, 0x2c, 0x3e, 0x00, 0x38, 0x00, 0x2e, 0x00, 0x8a, 0x31,
        0x00, 0x7c, 0x2f, 0x16, 0x84, 0x3c, 0x00, 0x4d, 0x02, 0x26, 0x3d, 0x01, 0x1e,
        0x79, 0x14, 0x76, 0x15, 0x42, 0x01, 0x1b, 0x0b, 0x89, 0x00, 0x00};
static const char winspr_xml[] =
        "<WinSPR><SystemScore>8.1</SystemScore><MemoryScore>8.1</MemoryScore></WinSPR>";

static void test_winsat_xml(void **state)
{
        struct bb b = {.n = 0};
        (void)state;
        bb_u32(&b, 1);
        bb_u32(&b, 156);
        bb_raw(&b, winspr_lznt1, sizeof(winspr_lznt1));
        assert_int_equal(feed(&WinSatGuid, 33, 0, 8, NONE, NONE, &b), 0);
        assert_string_equal(cap.name, "WinSat/WinSPR");
        assert_int_equal(u("XmlSize"), 156);
        assert_string_equal(s("Xml"), winspr_xml);
        /* a size smaller than the text: the text to that size */
        b.n = 4;
        bb_u32(&b, 16);
        bb_raw(&b, winspr_lznt1, sizeof(winspr_lznt1));
        assert_int_equal(feed(&WinSatGuid, 35, 0, 8, NONE, NONE, &b), 0);
        assert_string_equal(cap.name, "WinSat/Metrics");
        assert_string_equal(s("Xml"), "<WinSPR>");
        /* not LZNT1 (a chunk longer than the payload): an error, the event named */
        b.n = 8;
        bb_u16(&b, 0xbfff);
        bb_u32(&b, 0);
        assert_int_equal(feed(&WinSatGuid, 37, 0, 8, NONE, NONE, &b), -EBADMSG);
        assert_string_equal(cap.name, "WinSat/SystemConfig");
        assert_int_equal(cap.nr_fields, 0);
}

/* LZNT1 itself: a stored chunk, a compressed one, the output cut at the room given, and what
   is not LZNT1 */
static void test_lznt1(void **state)
{
        (void)state;
        uint8_t out[256];
        static const uint8_t stored[] = {0x02, 0x30, 'a', 'b', 'c', 0, 0};
        assert_int_equal(lznt1_decompress(stored, sizeof(stored), out, sizeof(out)), 3);
        assert_memory_equal(out, "abc", 3);
        long n = lznt1_decompress(winspr_lznt1, sizeof(winspr_lznt1), out, sizeof(out));
        assert_int_equal(n, 156);
        for (size_t i = 0; i < sizeof(winspr_xml); i++)
                assert_int_equal(out[2 * i], (uint8_t)winspr_xml[i]);
        assert_int_equal(lznt1_decompress(winspr_lznt1, sizeof(winspr_lznt1), out, 10), 10);
        /* a back-reference before its chunk's start */
        static const uint8_t before[] = {0x02, 0xb0, 0x01, 0x00, 0x00};
        assert_int_equal(lznt1_decompress(before, sizeof(before), out, sizeof(out)), -1);
        /* a chunk past the input's end */
        assert_int_equal(lznt1_decompress(winspr_lznt1, 20, out, sizeof(out)), -1);
        /* a back-reference cut in two */
        static const uint8_t cut[] = {0x02, 0xb0, 0x02, 'a', 0x00};
        assert_int_equal(lznt1_decompress(cut, sizeof(cut), out, sizeof(out)), -1);
}

/* SystemConfig OpticalMedia (opcode 18): fixed numbers, two UTF-16 strings, two 8-bit ones */
static void test_optical_media_strings(void **state)
{
        struct bb b = {.n = 0};
        (void)state;

        bb_u16(&b, 0);
        bb_u16(&b, 2);
        bb_u16(&b, 5);
        bb_u16(&b, 0x10);
        for (int i = 0; i < 5; i++)
                bb_u64(&b, 0);
        bb_u32(&b, 0);
        bb_u32(&b, 0);
        bb_u32(&b, 2048);
        bb_u16(&b, 0);
        bb_u16(&b, 0);
        bb_utf16(&b, "D:");
        bb_utf16(&b, "UDF");
        bb_raw(&b, "Virtual CD/ROM", 15);
        bb_raw(&b, "Msft\xe9", 6); /* not UTF-8: read as Latin-1 */
        assert_int_equal(feed(&EventTraceConfigGuid, 18, 2, 8, 100, 200, &b), 0);
        assert_string_equal(cap.name, "SystemConfig/OpticalMedia");
        assert_int_equal(u("DeviceType"), 5);
        assert_int_equal(u("BytesPerSector"), 2048);
        assert_string_equal(s("DriveLetter"), "D:");
        assert_string_equal(s("FileSystemName"), "UDF");
        assert_string_equal(s("DeviceName"), "Virtual CD/ROM");
        assert_string_equal(s("ManufacturerName"), "Msft\xc3\xa9");

        /* the last 8-bit string missing: too short for the layout */
        b.n -= 6;
        assert_int_equal(feed(&EventTraceConfigGuid, 18, 2, 8, 100, 200, &b), -EBADMSG);
}

/* Microsoft-Windows-DotNETRuntimePrivate (ClrEtwAll.man) */
static const GUID clr_private = {
        0x763fd754, 0x7086, 0x4dfe, {0x95, 0xeb, 0xc0, 0x1a, 0x46, 0xfa, 0xf4, 0xca}};

/* A Binding event (template Binding): four UInt32, two strings, then ClrInstanceID after them */
static void test_clr_private_binding(void **state)
{
        struct bb b = {.n = 0};
        (void)state;

        bb_u32(&b, 1);
        bb_u32(&b, 4);
        bb_u32(&b, 0);
        bb_u32(&b, 1);
        bb_utf16(&b, "C:\\Windows\\mscorlib.dll");
        bb_utf16(&b, "NULL");
        bb_u16(&b, 9);
        assert_int_equal(feed_id(&clr_private, 173, 65, 0, &b), 0);
        assert_int_equal(cap.type, KEV_FIELDS);
        assert_string_equal(cap.name, "DotNETRuntimePrivate/BindingLoaderMappingPhaseStart");
        assert_int_equal(cap.nr_fields, 7);
        assert_int_equal(u("AppDomainID"), 1);
        assert_int_equal(u("LoadContextID"), 4);
        assert_int_equal(u("DynamicLoad"), 1);
        assert_string_equal(s("AssemblyCodebase"), "C:\\Windows\\mscorlib.dll");
        assert_string_equal(s("AssemblyName"), "NULL");
        assert_int_equal(u("ClrInstanceID"), 9);
        assert_int_equal(cap.pid, 3676);

        /* the string cut short: the payload is too short for the template */
        b.n -= 4;
        assert_int_equal(feed_id(&clr_private, 173, 65, 0, &b), -EBADMSG);
        assert_int_equal(cap.type, KEV_OTHER);
        assert_string_equal(cap.name, "DotNETRuntimePrivate/BindingLoaderMappingPhaseStart");
}

/* Told apart by Id, not by opcode: GCSettings and PrestubWorkerStart both have opcode 14; a
   version past the last known reads as the last; an empty template names the event only */
static void test_clr_private_by_id(void **state)
{
        struct bb b = {.n = 0};
        (void)state;

        bb_u64(&b, 16777216);
        bb_u64(&b, 16777216);
        bb_u32(&b, 0); /* ServerGC, a Boolean */
        bb_u16(&b, 11);
        assert_int_equal(feed_id(&clr_private, 2, 14, 1, &b), 0);
        assert_string_equal(cap.name, "DotNETRuntimePrivate/GCSettings");
        assert_int_equal(u("LargeObjectSegmentSize"), 16777216);
        assert_int_equal(u("ServerGC"), 0);
        assert_int_equal(u("ClrInstanceID"), 11);

        b.n = 0;
        bb_u16(&b, 9);
        assert_int_equal(feed_id(&clr_private, 94, 14, 1, &b), 0);
        assert_string_equal(cap.name, "DotNETRuntimePrivate/StartupPrestubWorkerStart");
        assert_int_equal(cap.nr_fields, 1);
        assert_int_equal(u("ClrInstanceID"), 9);

        b.n = 0;
        bb_u32(&b, 2);  /* HeapNum */
        bb_u16(&b, 9);  /* ClrInstanceID */
        bb_u32(&b, 77); /* what a later version appends */
        assert_int_equal(feed_id(&clr_private, 7, 21, 4, &b), 0);
        assert_string_equal(cap.name, "DotNETRuntimePrivate/GCMarkStackRoots");
        assert_int_equal(cap.nr_fields, 2);
        assert_int_equal(u("HeapNum"), 2);

        /* GCPerHeapHistory from version 2 has no template: its bytes, with their length */
        assert_int_equal(feed_id(&clr_private, 4, 17, 2, &b), 0);
        assert_int_equal(cap.type, KEV_FIELDS);
        assert_string_equal(cap.name, "DotNETRuntimePrivate/GCPerHeapHistory");
        assert_int_equal(u("DataLength"), 10);
        assert_string_equal(s("Data"), "0x0200000009004D000000");

        /* an Id it has no template for: by its provider and Id, not by its opcode */
        assert_int_equal(feed_id(&clr_private, 999, 17, 0, &b), 0);
        assert_int_equal(cap.type, KEV_OTHER);
        assert_string_equal(cap.name, "{763fd754-7086-4dfe-95eb-c01a46faf4ca}/EventID(999)");
}

/* Microsoft-Windows-DotNETRuntime: its GC events by the manifest's templates when the trace
   does not describe them (a PerfView recording), value maps by name */
static const GUID clr_runtime = {
        0xe13c0d23, 0xccbc, 0x4e12, {0x93, 0x1b, 0xd9, 0xcc, 0x2e, 0xee, 0x27, 0xe4}};

static void test_clr_gc_maps(void **state)
{
        struct bb b = {.n = 0};
        (void)state;

        /* GCStart_V2: Reason 1, Type 0 */
        bb_u32(&b, 7);
        bb_u32(&b, 1);
        bb_u32(&b, 1);
        bb_u32(&b, 0);
        bb_u16(&b, 8);
        bb_u64(&b, 0);
        assert_int_equal(feed_id(&clr_runtime, 1, 1, 2, &b), 0);
        assert_int_equal(cap.type, KEV_FIELDS);
        assert_string_equal(cap.name, "DotNETRuntime/GCStart");
        assert_int_equal(u("Count"), 7);
        assert_int_equal(cap.f[field("Reason")].kind, KEV_FIELD_STR);
        assert_string_equal(s("Reason"), "Induced");
        assert_string_equal(s("Type"), "NonConcurrentGC");
        assert_int_equal(u("ClientSequenceNumber"), 0);

        /* a value past the map's end stays a number */
        b.b[8] = 42;
        assert_int_equal(feed_id(&clr_runtime, 1, 1, 2, &b), 0);
        assert_int_equal(cap.f[field("Reason")].kind, KEV_FIELD_UINT);
        assert_int_equal(u("Reason"), 42);

        /* GCStart_V1: no ClientSequenceNumber; cut short of its template */
        b.n -= 8;
        assert_int_equal(feed_id(&clr_runtime, 1, 1, 1, &b), 0);
        assert_int_equal(cap.nr_fields, 5);
        b.n -= 4;
        assert_int_equal(feed_id(&clr_runtime, 1, 1, 1, &b), -EBADMSG);
        assert_int_equal(cap.type, KEV_OTHER);

        /* GCSuspendEEBegin_V1, GCAllocationTick_V4, GCCreateSegment_V1, GCMarkWithType */
        b.n = 0;
        bb_u32(&b, 1);
        bb_u32(&b, 0);
        bb_u16(&b, 8);
        assert_int_equal(feed_id(&clr_runtime, 9, 10, 1, &b), 0);
        assert_string_equal(cap.name, "DotNETRuntime/GCSuspendEEBegin");
        assert_string_equal(s("Reason"), "SuspendForGC");

        b.n = 0;
        bb_u32(&b, 0x350e8);
        bb_u32(&b, 1);
        bb_u16(&b, 8);
        bb_u64(&b, 0x350e8);
        bb_u64(&b, 0x7ffb485e1c08);
        bb_utf16(&b, "System.String");
        bb_u32(&b, 0);
        bb_u64(&b, 0x1b0f3c00048);
        bb_u64(&b, 217328);
        assert_int_equal(feed_id(&clr_runtime, 10, 11, 4, &b), 0);
        assert_string_equal(cap.name, "DotNETRuntime/GCAllocationTick");
        assert_int_equal(cap.f[field("AllocationAmount")].kind, KEV_FIELD_HEX);
        assert_string_equal(s("AllocationKind"), "Large");
        assert_string_equal(s("TypeName"), "System.String");
        assert_int_equal(u("Address"), 0x1b0f3c00048);
        assert_int_equal(u("ObjectSize"), 217328);

        b.n = 0;
        bb_u64(&b, 0x1b0f3c00028);
        bb_u64(&b, 0x1ffffd8);
        bb_u32(&b, 1);
        bb_u16(&b, 8);
        assert_int_equal(feed_id(&clr_runtime, 5, 134, 1, &b), 0);
        assert_string_equal(s("Type"), "LargeObjectHeap");

        b.n = 0;
        bb_u32(&b, 0);
        bb_u16(&b, 8);
        bb_u32(&b, 3);
        bb_u64(&b, 293544);
        assert_int_equal(feed_id(&clr_runtime, 202, 202, 0, &b), 0);
        assert_string_equal(s("Type"), "Older");
        assert_int_equal(u("Bytes"), 293544);

        /* an Id the table names itself: PinObjectAtGCTime */
        b.n = 0;
        bb_u64(&b, 0x1b0f0a815f8);
        bb_u64(&b, 0x1b0f3800208);
        bb_u64(&b, 24);
        bb_utf16(&b, "System.Object");
        bb_u16(&b, 8);
        assert_int_equal(feed_id(&clr_runtime, 33, 36, 0, &b), 0);
        assert_string_equal(cap.name, "DotNETRuntime/PinObjectAtGCTime");
        assert_string_equal(s("TypeName"), "System.Object");

        /* the private provider's GCGlobalHeapHistory: Reason by GCReasonMap, as TraceEvent */
        b.n = 0;
        bb_u64(&b, 0x400000);
        bb_u32(&b, 1);
        bb_u32(&b, 0);
        bb_u32(&b, 0);
        bb_u32(&b, 4);
        bb_u32(&b, 20);
        bb_u16(&b, 9);
        assert_int_equal(feed_id(&clr_private, 5, 18, 1, &b), 0);
        assert_string_equal(cap.name, "DotNETRuntimePrivate/GCGlobalHeapHistory");
        assert_string_equal(s("Reason"), "AllocLarge");
        assert_int_equal(u("GlobalMechanisms"), 20);
}

/* GCPerHeapHistory_V3: the template's fields, then Count generations of 10 pointers, a field per
   member with its value in each generation */
static void test_clr_gc_per_heap_history(void **state)
{
        struct bb b = {.n = 0};
        (void)state;

        bb_u16(&b, 8); /* ClrInstanceID */
        for (int i = 0; i < 6; i++)
                bb_u64(&b, 0x100u + (unsigned)i); /* FreeListAllocated ... PinnedAllocatedAdvance */
        bb_u32(&b, 75);                           /* RunningFreeListEfficiency */
        bb_u32(&b, 5);                            /* CondemnReasons0 */
        bb_u32(&b, 0);                            /* CondemnReasons1 */
        bb_u32(&b, 0x80000002u);                  /* CompactMechanisms */
        bb_u32(&b, 0);                            /* ExpandMechanisms */
        bb_u32(&b, 3);                            /* HeapIndex */
        bb_u64(&b, 0x1000);                       /* ExtraGen0Commit */
        bb_u32(&b, 5);                            /* Count */
        for (int g = 0; g < 5; g++)
                for (int m = 0; m < 10; m++)
                        bb_u64(&b, (uint64_t)(g * 16 + m));
        assert_int_equal(b.n, 486); /* the size of the gcevents sample's */
        assert_int_equal(feed_id(&clr_runtime, 204, 204, 3, &b), 0);
        assert_int_equal(cap.type, KEV_FIELDS);
        assert_string_equal(cap.name, "DotNETRuntime/GCPerHeapHistory");
        assert_int_equal(cap.nr_fields, 25);
        assert_int_equal(u("ClrInstanceID"), 8);
        assert_int_equal(u("FreeListAllocated"), 0x100);
        assert_int_equal(u("PinnedAllocatedAdvance"), 0x105);
        assert_int_equal(u("RunningFreeListEfficiency"), 75);
        assert_int_equal(u("CompactMechanisms"), 0x80000002u);
        assert_int_equal(u("HeapIndex"), 3);
        assert_int_equal(u("ExtraGen0Commit"), 0x1000);
        assert_int_equal(u("Count"), 5);
        assert_string_equal(s("SizeBefore"), "[0x0,0x10,0x20,0x30,0x40]");
        assert_string_equal(s("FreeListBefore"), "[0x1,0x11,0x21,0x31,0x41]");
        assert_string_equal(s("NewAllocation"), "[0x9,0x19,0x29,0x39,0x49]");

        /* a generation cut short: too short for its template */
        b.n -= 8;
        assert_int_equal(feed_id(&clr_runtime, 204, 204, 3, &b), -EBADMSG);
        assert_int_equal(cap.type, KEV_OTHER);

        /* a 32-bit process: pointers of 4 bytes */
        struct bb c = {.n = 0};
        bb_u16(&c, 8);
        for (int i = 0; i < 6; i++)
                bb_u32(&c, 0x100u + (unsigned)i);
        for (int i = 0; i < 6; i++)
                bb_u32(&c, (uint32_t)i);
        bb_u32(&c, 0x2000);
        bb_u32(&c, 2);
        for (int i = 0; i < 20; i++)
                bb_u32(&c, (uint32_t)i);
        struct kdecoder *d = kdecoder_new(true);
        EVENT_RECORD r;
        memset(&r, 0, sizeof(r));
        memset(&cap, 0, sizeof(cap));
        r.EventHeader.Flags = EVENT_HEADER_FLAG_32_BIT_HEADER;
        r.EventHeader.ProviderId = clr_runtime;
        r.EventHeader.EventDescriptor.Id = 204;
        r.EventHeader.EventDescriptor.Opcode = 204;
        r.EventHeader.EventDescriptor.Version = 3;
        r.UserData = c.b;
        r.UserDataLength = (USHORT)c.n;
        assert_int_equal(kdecoder_decode(d, &r, capture, NULL), 0);
        kdecoder_free(d);
        assert_int_equal(u("ExtraGen0Commit"), 0x2000);
        assert_string_equal(s("SizeBefore"), "[0x0,0xa]");
        assert_string_equal(s("NewAllocation"), "[0x9,0x13]");

        /* a version before 3 has no template: named, its bytes with their length */
        b.n = 433;
        assert_int_equal(feed_id(&clr_runtime, 204, 204, 2, &b), 0);
        assert_int_equal(cap.type, KEV_FIELDS);
        assert_string_equal(cap.name, "DotNETRuntime/GCPerHeapHistory");
        assert_int_equal(u("DataLength"), 433);
        assert_true(strncmp(s("Data"), "0x0800000100000000000001", 24) == 0);
        assert_int_equal(strlen(s("Data")), 2 + 128 + 3); /* 64 bytes shown, then "..." */
}

/* GCLOHCompact (Id 208) and GCFitBucketInfo (Id 209): the template's fields, then Count structs
   as the runtime writes them (its C structs, padding included), or packed as the manifest's
   template has them; a field per member with its value in each struct */
static void test_clr_gc_loh_compact_and_fit_buckets(void **state)
{
        struct bb b = {.n = 0};
        (void)state;

        bb_u16(&b, 8); /* ClrInstanceID */
        bb_u16(&b, 2); /* Count */
        for (uint32_t h = 0; h < 2; h++) {
                bb_u32(&b, 10 + h);     /* TimePlan */
                bb_u32(&b, 20 + h);     /* TimeCompact */
                bb_u32(&b, 30 + h);     /* TimeRelocate */
                bb_u32(&b, 0xEEEEEEEE); /* the C struct's padding */
                bb_u64(&b, 0x4000 + h); /* TotalRefs */
                bb_u64(&b, 0x5000 + h); /* ZeroRefs */
        }
        assert_int_equal(b.n, 4 + 2 * 32);
        assert_int_equal(feed_id(&clr_runtime, 208, 0, 0, &b), 0);
        assert_int_equal(cap.type, KEV_FIELDS);
        assert_string_equal(cap.name, "DotNETRuntime/GCLOHCompact");
        assert_int_equal(cap.nr_fields, 7);
        assert_int_equal(u("ClrInstanceID"), 8);
        assert_int_equal(u("Count"), 2);
        assert_string_equal(s("TimePlan"), "[10,11]");
        assert_string_equal(s("TimeCompact"), "[20,21]");
        assert_string_equal(s("TimeRelocate"), "[30,31]");
        assert_string_equal(s("TotalRefs"), "[0x4000,0x4001]");
        assert_string_equal(s("ZeroRefs"), "[0x5000,0x5001]");

        /* packed, as the template lays the members out: 28 bytes a heap */
        struct bb p = {.n = 0};
        bb_u16(&p, 8);
        bb_u16(&p, 1);
        bb_u32(&p, 1);
        bb_u32(&p, 17);
        bb_u32(&p, 3);
        bb_u64(&p, 0x44);
        bb_u64(&p, 0x55);
        assert_int_equal(feed_id(&clr_runtime, 208, 0, 0, &p), 0);
        assert_string_equal(s("TimeRelocate"), "[3]");
        assert_string_equal(s("TotalRefs"), "[0x44]");
        assert_string_equal(s("ZeroRefs"), "[0x55]");

        /* a size that agrees with neither layout: the fields, then the Values' bytes */
        p.n -= 1;
        assert_int_equal(feed_id(&clr_runtime, 208, 0, 0, &p), 0);
        assert_int_equal(u("Count"), 1);
        assert_int_equal(u("ValuesLength"), 27);

        struct bb f = {.n = 0};
        bb_u16(&f, 8);      /* ClrInstanceID */
        bb_u16(&f, 1);      /* BucketKind */
        bb_u64(&f, 310848); /* TotalSize */
        bb_u16(&f, 9);      /* Count */
        for (uint16_t k = 0; k < 9; k++) {
                bb_u16(&f, k);           /* Index */
                bb_u16(&f, 0xEEEE);      /* the C struct's padding */
                bb_u32(&f, 100u + k);    /* Count */
                bb_u64(&f, 0x1000u * k); /* Size */
        }
        assert_int_equal(f.n, 158); /* the size of the gcevents sample's */
        assert_int_equal(feed_id(&clr_runtime, 209, 0, 0, &f), 0);
        assert_int_equal(cap.type, KEV_FIELDS);
        assert_string_equal(cap.name, "DotNETRuntime/GCFitBucketInfo");
        assert_int_equal(cap.nr_fields, 7);
        assert_int_equal(u("BucketKind"), 1);
        assert_int_equal(u("TotalSize"), 310848);
        assert_int_equal(u("Count"), 9);
        assert_string_equal(s("Index"), "[0,1,2,3,4,5,6,7,...(9)]");
        assert_string_equal(s("Size"),
                            "[0x0,0x1000,0x2000,0x3000,0x4000,0x5000,0x6000,0x7000,...(9)]");
        assert_string_equal(cap.f[5].name, "Count");
        assert_string_equal(cap.f[5].s, "[100,101,102,103,104,105,106,107,...(9)]");

        /* the fixed fields cut short */
        f.n = 13;
        assert_int_equal(feed_id(&clr_runtime, 209, 0, 0, &f), -EBADMSG);
        assert_int_equal(cap.type, KEV_OTHER);
}

static uint64_t rng_next(uint64_t *st)
{
        *st ^= *st << 13;
        *st ^= *st >> 7;
        *st ^= *st << 17;
        return *st;
}

/* One field as a consumer read it. */
struct seen_field {
        const char *name, *s;
        enum kevent_field_kind kind;
        uint64_t u;
};

/* The MOF classes' fields are left to the consumer's first ask (ev->fields.lazy set, nothing
   decoded): for every provider of the table, opcode and version, both pointer sizes, payloads
   of printable units, NULs, non-ASCII units and 0xFF bytes cut at every length up to 160 bytes,
   kevent_mof_decode and then kevent_fields give what the decode made at once gives: the answer
   (-EBADMSG where the fixed part is cut, a string without its NUL), the name, the subject taken
   from the payload (pid, tid, the pid of the tid), and every field's name, kind, value and
   text (the check finds the strings' ends as the text does, or a field after a string would
   move). */
static void test_fields_on_demand(void **state)
{
        (void)state;
        static const char *const providers[] = {"DiskIo",      "PageFault", "TcpIp",
                                                "UdpIp",       "FileIo",    "SystemConfig",
                                                "SysConfigEx", "Process",   "EventTrace"};
        uint64_t st = 0xa11ce;
        unsigned nr_lazy = 0;
        struct kdecoder *probe = kdecoder_new(true);
        assert_non_null(probe);

        for (size_t pi = 0; pi < sizeof(providers) / sizeof(providers[0]); pi++) {
                for (unsigned op = 0; op < 256; op++) {
                        for (uint8_t ver = 0; ver <= 5; ver++) {
                                struct kevent none = {.opcode = (uint8_t)op, .version = ver};
                                if (kevent_mof_decode_now(probe, providers[pi], &none, NULL, 0,
                                                          8) == 1)
                                        continue; /* no layout */
                                for (unsigned psize = 4; psize <= 8; psize += 4) {
                                        struct kdecoder *d = kdecoder_new(true);
                                        uint8_t full[160];
                                        assert_non_null(d);
                                        for (size_t i = 0; i < sizeof(full); i += 2) {
                                                uint64_t r = rng_next(&st) % 16;
                                                full[i] = (uint8_t)(r == 0   ? 0
                                                                    : r == 1 ? 0xe9
                                                                    : r == 2 ? 0xff
                                                                             : 'a' + r);
                                                full[i + 1] = (uint8_t)(r == 2 ? 0xff : 0);
                                        }
                                        for (size_t len = 0; len <= sizeof(full); len++) {
                                                struct kevent a, b;
                                                memset(&a, 0, sizeof(a));
                                                a.opcode = (uint8_t)op;
                                                a.version = ver;
                                                a.pid = a.tid = len % 3 ? 0xFFFFFFFFu : 7;
                                                b = a;
                                                uint8_t *p = malloc(len ? len : 1);
                                                assert_non_null(p);
                                                memcpy(p, full, len);
                                                int ra = kevent_mof_decode(d, providers[pi], &a, p,
                                                                           len, psize);
                                                struct seen_field fa[KEV_MAX_FIELDS];
                                                uint32_t na = 0;
                                                if (ra == 0) {
                                                        assert_non_null(a.fields.lazy);
                                                        assert_null(a.fields.list);
                                                        nr_lazy++;
                                                        const struct kevent_field *list;
                                                        na = kevent_fields(&a, &list);
                                                        for (uint32_t i = 0; i < na; i++)
                                                                fa[i] = (struct seen_field){
                                                                        list[i].name, list[i].s,
                                                                        list[i].kind, list[i].u};
                                                }
                                                int rb = kevent_mof_decode_now(d, providers[pi], &b,
                                                                               p, len, psize);
                                                assert_int_equal(ra, rb);
                                                if (ra == 0) {
                                                        assert_null(b.fields.lazy);
                                                        assert_int_equal(a.type, b.type);
                                                        assert_string_equal(a.name, b.name);
                                                        assert_int_equal(a.pid, b.pid);
                                                        assert_int_equal(a.tid, b.tid);
                                                        assert_int_equal(na, b.fields.nr);
                                                        for (uint32_t i = 0; i < na; i++) {
                                                                const struct kevent_field *f =
                                                                        &b.fields.list[i];
                                                                assert_string_equal(fa[i].name,
                                                                                    f->name);
                                                                assert_int_equal(fa[i].kind,
                                                                                 f->kind);
                                                                assert_int_equal(fa[i].u, f->u);
                                                                assert_string_equal(fa[i].s, f->s);
                                                        }
                                                }
                                                free(p);
                                        }
                                        kdecoder_free(d);
                                }
                        }
                }
        }
        kdecoder_free(probe);
        assert_true(nr_lazy > 1000);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_fields_on_demand),
                cmocka_unit_test(test_disk_io_read_v3),
                cmocka_unit_test(test_disk_io_32bit_and_v2),
                cmocka_unit_test(test_short_payload),
                cmocka_unit_test(test_tcp_recv_ipv6),
                cmocka_unit_test(test_format_ipv6),
                cmocka_unit_test(test_told_apart_by_provider_and_version),
                cmocka_unit_test(test_services_strings),
                cmocka_unit_test(test_cpu_fixed_strings),
                cmocka_unit_test(test_event_trace_wpp_header),
                cmocka_unit_test(test_optical_media_strings),
                cmocka_unit_test(test_sysconfigex_network_interface),
                cmocka_unit_test(test_sysconfigex_os_version),
                cmocka_unit_test(test_winsat_xml),
                cmocka_unit_test(test_perfinfo_mark),
                cmocka_unit_test(test_partition_and_kernel_base),
                cmocka_unit_test(test_lznt1),
                cmocka_unit_test(test_clr_private_binding),
                cmocka_unit_test(test_clr_private_by_id),
                cmocka_unit_test(test_clr_gc_maps),
                cmocka_unit_test(test_clr_gc_per_heap_history),
                cmocka_unit_test(test_clr_gc_loh_compact_and_fit_buckets),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
