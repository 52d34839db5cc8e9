/* SPDX-License-Identifier: MIT */
/* test_kevent.c: cmocka tests of the decoder (backend/decode) from ETL-FORMAT.md bytes and
   synthetic ones. */
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
#include "kevent_text.h"
#include "etw/ntwmi.h"

#define NONE 0xFFFFFFFFu

/* ---- building payloads ---- */

struct bb {
        uint8_t b[4096];
        size_t n;
};

static void bb_bytes(struct bb *b, const void *p, size_t n)
{
        assert_true(b->n + n <= sizeof(b->b));
        memcpy(b->b + b->n, p, n);
        b->n += n;
}

static void bb_u8(struct bb *b, uint8_t v)
{
        bb_bytes(b, &v, 1);
}

static void bb_u16(struct bb *b, uint16_t v)
{
        uint8_t x[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
        bb_bytes(b, x, 2);
}

static void bb_u32(struct bb *b, uint32_t v)
{
        for (int i = 0; i < 4; i++)
                bb_u8(b, (uint8_t)(v >> (8 * i)));
}

static void bb_u64(struct bb *b, uint64_t v)
{
        for (int i = 0; i < 8; i++)
                bb_u8(b, (uint8_t)(v >> (8 * i)));
}

static void bb_ptr(struct bb *b, uint64_t v, unsigned psize)
{
        if (psize == 8)
                bb_u64(b, v);
        else
                bb_u32(b, (uint32_t)v);
}

static void bb_zero(struct bb *b, size_t n)
{
        while (n--)
                bb_u8(b, 0);
}

/* ASCII as UTF-16LE with its NUL. */
static void bb_utf16(struct bb *b, const char *s)
{
        do
                bb_u16(b, (uint8_t)*s);
        while (*s++);
}

/* 8-bit string with its NUL. */
static void bb_ansi(struct bb *b, const char *s)
{
        bb_bytes(b, s, strlen(s) + 1);
}

/* ---- capturing decoded events (deep copies: the decoder's pointers are borrowed) ---- */

#define CAP_MAX 64

static struct {
        size_t n;
        struct kevent ev[CAP_MAX];
        TRACE_LOGFILE_HEADER hdr[CAP_MAX];
        void *allocs[CAP_MAX * 16];
        size_t nr_allocs;
} cap;

static const void *keep_mem(const void *p, size_t n)
{
        void *c = malloc(n ? n : 1);

        assert_non_null(c);
        if (n)
                memcpy(c, p, n);
        assert_true(cap.nr_allocs < sizeof(cap.allocs) / sizeof(cap.allocs[0]));
        cap.allocs[cap.nr_allocs++] = c;
        return c;
}

static const char *keep_str(const char *s)
{
        assert_non_null(s); /* strings are never NULL */
        return keep_mem(s, strlen(s) + 1);
}

static void capture(void *ctx, const struct kevent *ev)
{
        (void)ctx;
        assert_true(cap.n < CAP_MAX);

        size_t i = cap.n++;
        struct kevent *c = &cap.ev[i];

        *c = *ev;
        c->name = keep_str(ev->name);
        switch (ev->type) {
        case KEV_TRACE_HEADER:
                cap.hdr[i] = *ev->trace_header.header;
                c->trace_header.header = &cap.hdr[i];
                c->trace_header.logger_name = keep_str(ev->trace_header.logger_name);
                c->trace_header.log_file_name = keep_str(ev->trace_header.log_file_name);
                break;
        case KEV_PROCESS:
                c->process.user_sid = keep_str(ev->process.user_sid);
                c->process.image_name = keep_str(ev->process.image_name);
                c->process.command_line = keep_str(ev->process.command_line);
                c->process.package_full_name = keep_str(ev->process.package_full_name);
                c->process.application_id = keep_str(ev->process.application_id);
                break;
        case KEV_THREAD: c->thread.name = keep_str(ev->thread.name); break;
        case KEV_THREAD_NAME: c->thread_name.name = keep_str(ev->thread_name.name); break;
        case KEV_IMAGE: c->image.file_name = keep_str(ev->image.file_name); break;
        case KEV_IMAGE_ID:
                c->image_id.original_file_name = keep_str(ev->image_id.original_file_name);
                break;
        case KEV_DBG_ID: c->dbg_id.pdb_file_name = keep_str(ev->dbg_id.pdb_file_name); break;
        case KEV_FILE_VERSION:
                c->file_version.orig_file_name = keep_str(ev->file_version.orig_file_name);
                c->file_version.file_description = keep_str(ev->file_version.file_description);
                c->file_version.file_version = keep_str(ev->file_version.file_version);
                c->file_version.product_name = keep_str(ev->file_version.product_name);
                c->file_version.company_name = keep_str(ev->file_version.company_name);
                c->file_version.product_version = keep_str(ev->file_version.product_version);
                break;
        case KEV_PMC_CONFIG:
                for (int k = 0; k < KEV_MAX_PMC; k++)
                        c->pmc_config.names[k] = keep_str(ev->pmc_config.names[k]);
                break;
        case KEV_PROFILE_INTERVAL:
                c->profile_interval.source_name = keep_str(ev->profile_interval.source_name);
                break;
        case KEV_STACK:
                c->stack.frames =
                        keep_mem(ev->stack.frames, ev->stack.nr_frames * sizeof(uint64_t));
                break;
        case KEV_STACK_KEY_DEF:
                c->stack_key_def.frames = keep_mem(ev->stack_key_def.frames,
                                                   ev->stack_key_def.nr_frames * sizeof(uint64_t));
                break;
        case KEV_LBR:
                c->lbr.entries = keep_mem(ev->lbr.entries,
                                          ev->lbr.nr_entries * sizeof(struct kevent_lbr_entry));
                break;
        case KEV_CLR_METHOD: {
                struct kevent_clr_names n = kevent_clr_method_names(ev);
                c->clr_method.name_space = keep_str(n.name_space);
                c->clr_method.name = keep_str(n.name);
                c->clr_method.signature = keep_str(n.signature);
                c->clr_method.lazy = NULL;
                break;
        }
        case KEV_CLR_MODULE:
                c->clr_module.il_path = keep_str(ev->clr_module.il_path);
                c->clr_module.native_path = keep_str(ev->clr_module.native_path);
                break;
        default: break;
        }
}

static void cap_reset(void)
{
        for (size_t i = 0; i < cap.nr_allocs; i++)
                free(cap.allocs[i]);
        memset(&cap, 0, sizeof(cap));
}

static void count_sink(void *ctx, const struct kevent *ev)
{
        (void)ev;
        ++*(size_t *)ctx;
}

/* ---- feeding records ---- */

struct rec_opts {
        const GUID *guid;
        uint8_t opcode;
        uint8_t version;
        unsigned psize; /* 4, 8, or 0 for neither header flag */
        uint64_t ts;
        uint32_t tid;
        uint32_t pid;
        uint16_t cpu;
        const uint64_t *pmc;
        unsigned nr_pmc;
};

/* Builds an EVENT_RECORD as the consumer does and decodes it into cap. The payload is copied
   into a heap block of exactly len bytes, so ASan sees any read past it. */
static int feed_opts(struct kdecoder *d, const struct rec_opts *o, const void *payload, size_t len)
{
        EVENT_RECORD r;
        EVENT_HEADER_EXTENDED_DATA_ITEM x;
        uint8_t *p = len ? malloc(len) : NULL;

        memset(&r, 0, sizeof(r));
        if (len) {
                assert_non_null(p);
                memcpy(p, payload, len);
        }
        r.EventHeader.Size = (USHORT)(sizeof(EVENT_HEADER) + len);
        r.EventHeader.Flags = EVENT_HEADER_FLAG_CLASSIC_HEADER;
        if (o->psize == 8)
                r.EventHeader.Flags |= EVENT_HEADER_FLAG_64_BIT_HEADER;
        else if (o->psize == 4)
                r.EventHeader.Flags |= EVENT_HEADER_FLAG_32_BIT_HEADER;
        r.EventHeader.ThreadId = o->tid;
        r.EventHeader.ProcessId = o->pid;
        r.EventHeader.TimeStamp.QuadPart = (LONGLONG)o->ts;
        r.EventHeader.ProviderId = *o->guid;
        r.EventHeader.EventDescriptor.Opcode = o->opcode;
        r.EventHeader.EventDescriptor.Version = o->version;
        r.BufferContext.ProcessorIndex = o->cpu;
        r.UserData = p;
        r.UserDataLength = (USHORT)len;
        if (o->nr_pmc) {
                memset(&x, 0, sizeof(x));
                x.ExtType = EVENT_HEADER_EXT_TYPE_PMC_COUNTERS;
                x.DataSize = (USHORT)(8 * o->nr_pmc);
                x.DataPtr = (ULONGLONG)(uintptr_t)o->pmc;
                r.EventHeader.Flags |= EVENT_HEADER_FLAG_EXTENDED_INFO;
                r.ExtendedDataCount = 1;
                r.ExtendedData = &x;
        }

        int rc = kdecoder_decode(d, &r, capture, NULL);

        free(p);
        return rc;
}

/* A record with the PERFINFO header's unknown tid/pid, at timestamp 0 on CPU 0. */
static int feed(struct kdecoder *d, const GUID *g, uint8_t op, uint8_t ver, unsigned psize,
                const void *payload, size_t len)
{
        struct rec_opts o = {g, op, ver, psize, 0, NONE, NONE, 0, NULL, 0};

        return feed_opts(d, &o, payload, len);
}

static int feed_bb(struct kdecoder *d, const GUID *g, uint8_t op, uint8_t ver, unsigned psize,
                   const struct bb *b)
{
        return feed(d, g, op, ver, psize, b->b, b->n);
}

static struct kdecoder *new_decoder(bool is_raw)
{
        struct kdecoder *d = kdecoder_new(is_raw);

        assert_non_null(d);
        cap_reset();
        return d;
}

static void free_decoder(struct kdecoder *d)
{
        kdecoder_free(d);
        cap_reset();
}

/* ---- byte examples from ETL-FORMAT.md ---- */

static void test_sampled_profile_bytes(void **state)
{
        (void)state;
        /* 3.2: IP 0xffffffffffd03003, TID 3780, Count 1, Flags 0x58 (priority 11). */
        static const uint8_t pl[] = {0x03, 0x30, 0xd0, 0xff, 0xff, 0xff, 0xff, 0xff,
                                     0xc4, 0x0e, 0x00, 0x00, 0x01, 0x00, 0x58, 0x00};
        struct kdecoder *d = new_decoder(true);
        struct rec_opts o = {&PerfInfoGuid, 46, 2, 8, 1942908431, NONE, NONE, 7, NULL, 0};

        assert_int_equal(feed_opts(d, &o, pl, sizeof(pl)), 0);
        assert_int_equal(cap.n, 1);

        const struct kevent *e = &cap.ev[0];

        assert_int_equal(e->type, KEV_SAMPLE);
        assert_string_equal(e->name, "PerfInfo/SampledProfile");
        assert_int_equal(e->pointer_size, 8);
        assert_int_equal(e->opcode, 46);
        assert_int_equal(e->version, 2);
        assert_int_equal(e->cpu, 7);
        assert_int_equal(e->timestamp, 1942908431);
        assert_int_equal(e->time_ns, 0); /* no header yet */
        assert_int_equal(e->sample.ip, 0xffffffffffd03003ull);
        assert_int_equal(e->sample.tid, 3780);
        assert_int_equal(e->sample.count, 1);
        assert_int_equal(e->sample.priority, 11);
        assert_int_equal(e->sample.flags, 0);
        assert_int_equal(e->sample.rank, 0);
        assert_int_equal(e->tid, 3780);
        assert_int_equal(e->pid, NONE); /* no thread table entry */
        assert_int_equal(e->nr_pmc, 0);
        free_decoder(d);
}

static void test_pmc_sample_bytes(void **state)
{
        (void)state;
        /* 3.3: IP 0x7ffc8cac0ec9, TID 3988, source 29. */
        static const uint8_t pl[] = {0xc9, 0x0e, 0xac, 0x8c, 0xfc, 0x7f, 0x00, 0x00,
                                     0x94, 0x0f, 0x00, 0x00, 0x1d, 0x00, 0x00, 0x00};
        struct kdecoder *d = new_decoder(true);

        assert_int_equal(feed(d, &PerfInfoGuid, 47, 2, 8, pl, sizeof(pl)), 0);
        assert_int_equal(cap.ev[0].type, KEV_PMC_SAMPLE);
        assert_string_equal(cap.ev[0].name, "PerfInfo/PMCInterrupt");
        assert_int_equal(cap.ev[0].pmc_sample.ip, 0x7ffc8cac0ec9ull);
        assert_int_equal(cap.ev[0].pmc_sample.tid, 3988);
        assert_int_equal(cap.ev[0].pmc_sample.source, 29);
        assert_int_equal(cap.ev[0].tid, 3988);
        free_decoder(d);
}

static void test_cswitch_v4_with_pmc(void **state)
{
        (void)state;
        /* 2.4 + 3.5: snail's CSwitch v4 with two inline PMC counters. */
        static const uint8_t pl[] = {0xc0, 0x3b, 0x00, 0x00, 0x48, 0x55, 0x00, 0x00,
                                     0x09, 0x08, 0x00, 0x00, 0x1f, 0x00, 0x01, 0x02,
                                     0x1f, 0x00, 0x00, 0x00, 0x85, 0x53, 0x00, 0x00};
        static const uint64_t pmc[] = {3896, 9400};
        struct kdecoder *d = new_decoder(true);
        struct rec_opts o = {&ThreadGuid, 36, 4, 8, 0x161cdfc2eff, NONE, NONE, 3, pmc, 2};

        assert_int_equal(feed_opts(d, &o, pl, sizeof(pl)), 0);

        const struct kevent *e = &cap.ev[0];

        assert_int_equal(e->type, KEV_CSWITCH);
        assert_string_equal(e->name, "Thread/CSwitch");
        assert_int_equal(e->nr_pmc, 2);
        assert_int_equal(e->pmc[0], 3896);
        assert_int_equal(e->pmc[1], 9400);
        assert_int_equal(e->cswitch.new_tid, 15296);
        assert_int_equal(e->cswitch.old_tid, 21832);
        assert_int_equal(e->cswitch.new_priority, 9);
        assert_int_equal(e->cswitch.old_priority, 8);
        assert_int_equal(e->cswitch.previous_cstate, 0);
        assert_int_equal(e->cswitch.old_wait_reason, 31);
        assert_string_equal(kevent_wait_reason_name(e->cswitch.old_wait_reason), "WrDispatchInt");
        assert_int_equal(e->cswitch.old_wait_mode, 0);
        assert_int_equal(e->cswitch.old_state, 1);
        assert_string_equal(kevent_thread_state_name(e->cswitch.old_state), "Ready");
        assert_int_equal(e->cswitch.old_ideal_processor, 2);
        assert_int_equal(e->cswitch.new_wait_time, 31);
        assert_int_equal(e->cswitch.old_remaining_quantum, 0x5385);
        assert_int_equal(e->tid, 15296);
        assert_int_equal(e->pid, NONE);
        assert_int_equal(e->cswitch.new_pid, NONE);
        assert_int_equal(e->cswitch.old_pid, NONE);
        assert_int_equal(e->cpu, 3);
        free_decoder(d);
}

static void test_cswitch_v1_and_wait_mode_bit(void **state)
{
        (void)state;
        struct kdecoder *d = new_decoder(true);
        struct bb b = {.n = 0};

        bb_u32(&b, 100);
        bb_u32(&b, 200);
        bb_u8(&b, 0xF0); /* -16 */
        bb_u8(&b, 5);
        bb_u8(&b, 1);
        bb_u8(&b, 0);
        bb_u8(&b, 6);
        bb_u8(&b, 0x0B); /* v4 flags byte: WaitMode bit0 = 1 */
        bb_u8(&b, 5);
        bb_u8(&b, 3);
        assert_int_equal(feed_bb(d, &ThreadGuid, 36, 1, 8, &b), 0);
        assert_int_equal(cap.ev[0].type, KEV_CSWITCH);
        assert_int_equal(cap.ev[0].cswitch.new_priority, -16);
        assert_int_equal(cap.ev[0].cswitch.old_wait_mode, 1);
        assert_int_equal(cap.ev[0].cswitch.old_state, 5);
        assert_int_equal(cap.ev[0].cswitch.new_wait_time, 0);
        /* The same 16 bytes claimed as v2 are too short. */
        assert_int_equal(feed_bb(d, &ThreadGuid, 36, 2, 8, &b), -EBADMSG);
        assert_int_equal(cap.ev[1].type, KEV_OTHER);
        free_decoder(d);
}

/* 3.8: the SID example, S-1-5-18 then "WmiPrvSE.exe" and the command line (x64 v4). */
static void build_wmiprvse(struct bb *b)
{
        static const uint8_t sid[] = {0xc0, 0xab, 0xec, 0xd2, 0x0d, 0xd0, 0xff, 0xff, 0x00, 0x00,
                                      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00, 0x00,
                                      0x00, 0x00, 0x00, 0x05, 0x12, 0x00, 0x00, 0x00};

        b->n = 0;
        bb_u64(b, 0xffffc00d1a2b3080ull); /* UniqueProcessKey */
        bb_u32(b, 3436);                  /* ProcessId */
        bb_u32(b, 612);                   /* ParentId */
        bb_u32(b, 0);                     /* SessionId */
        bb_u32(b, 259);                   /* ExitStatus */
        bb_u64(b, 0x1aa000);              /* DirectoryTableBase */
        bb_u32(b, 0);                     /* Flags */
        bb_bytes(b, sid, sizeof(sid));
        bb_ansi(b, "WmiPrvSE.exe");
        bb_utf16(b, "C:\\Windows\\system32\\wbem\\wmiprvse.exe -secured");
        bb_utf16(b, "");
        bb_utf16(b, "");
}

static void test_process_sid_example(void **state)
{
        (void)state;
        struct kdecoder *d = new_decoder(true);
        struct bb b;

        build_wmiprvse(&b);

        struct rec_opts o = {&ProcessGuid, 3, 4, 8, 10, 4, 4, 0, NULL, 0};

        assert_int_equal(feed_opts(d, &o, b.b, b.n), 0);

        const struct kevent *e = &cap.ev[0];

        assert_int_equal(e->type, KEV_PROCESS);
        assert_string_equal(e->name, "Process/DCStart");
        assert_int_equal(e->process.phase, KEV_PHASE_DC_START);
        assert_int_equal(e->process.unique_key, 0xffffc00d1a2b3080ull);
        assert_int_equal(e->process.pid, 3436);
        assert_int_equal(e->process.parent_pid, 612);
        assert_int_equal(e->process.exit_status, 259);
        assert_int_equal(e->process.directory_table_base, 0x1aa000);
        assert_string_equal(e->process.user_sid, "S-1-5-18");
        assert_string_equal(e->process.image_name, "WmiPrvSE.exe");
        assert_string_equal(e->process.command_line,
                            "C:\\Windows\\system32\\wbem\\wmiprvse.exe -secured");
        assert_string_equal(e->process.package_full_name, "");
        assert_string_equal(e->process.application_id, "");
        assert_int_equal(e->pid, 3436); /* subject from the payload */
        assert_int_equal(e->tid, NONE);

        /* Every truncation of the strings still decodes without reading past the payload. */
        for (size_t n = 36; n < b.n; n++) {
                cap_reset();
                assert_int_equal(feed(d, &ProcessGuid, 3, 4, 8, b.b, n), 0);
                assert_int_equal(cap.ev[0].process.pid, 3436);
        }
        free_decoder(d);
}

static void test_image_id_and_dbgid_bytes(void **state)
{
        (void)state;
        /* 3.10: the real ImageID and DbgID_RSDS payloads (FULL_HEADER64). */
        static const uint8_t image_id[] = {0x00, 0x00, 0x71, 0x77, 0x00, 0x00, 0x00, 0x00,
                                           0x00, 0x70, 0x15, 0x00, 0x00, 0x00, 0x00, 0x00,
                                           0x04, 0x00, 0x00, 0x00, 0x7a, 0xae, 0x10, 0x50};
        static const uint8_t dbg_id[] = {0x00, 0x00, 0x71, 0x77, 0x00, 0x00, 0x00, 0x00,
                                         0x04, 0x00, 0x00, 0x00, 0xdf, 0xd8, 0x83, 0xec,
                                         0x59, 0x55, 0xe0, 0x46, 0xb6, 0x30, 0x13, 0x3e,
                                         0xbd, 0x97, 0x92, 0x66, 0x02, 0x00, 0x00, 0x00};
        static const GUID want = {
                0xec83d8df, 0x5559, 0x46e0, {0xb6, 0x30, 0x13, 0x3e, 0xbd, 0x97, 0x92, 0x66}};
        struct kdecoder *d = new_decoder(true);
        struct bb b = {.n = 0};
        struct rec_opts o = {&KernelTraceControlImageIdGuid, 0, 2, 8, 5, NONE, 4, 1, NULL, 0};

        bb_bytes(&b, image_id, sizeof(image_id));
        bb_utf16(&b, "ntdll.dll");
        assert_int_equal(feed_opts(d, &o, b.b, b.n), 0);

        const struct kevent *e = &cap.ev[0];

        assert_int_equal(e->type, KEV_IMAGE_ID);
        assert_string_equal(e->name, "KernelTraceControl/ImageID");
        assert_int_equal(e->image_id.base, 0x77710000);
        assert_int_equal(e->image_id.size, 0x157000);
        assert_int_equal(e->image_id.pid, 4);
        assert_int_equal(e->image_id.time_date_stamp, 0x5010ae7a);
        assert_string_equal(e->image_id.original_file_name, "ntdll.dll");
        assert_int_equal(e->pid, 4);

        b.n = 0;
        bb_bytes(&b, dbg_id, sizeof(dbg_id));
        bb_ansi(&b, "wntdll.pdb");
        o.opcode = KTC_DBGID_RSDS;
        assert_int_equal(feed_opts(d, &o, b.b, b.n), 0);
        e = &cap.ev[1];
        assert_int_equal(e->type, KEV_DBG_ID);
        assert_string_equal(e->name, "KernelTraceControl/DbgID_RSDS");
        assert_int_equal(e->dbg_id.base, 0x77710000);
        assert_int_equal(e->dbg_id.pid, 4);
        assert_memory_equal(&e->dbg_id.guid_sig, &want, sizeof(GUID));
        assert_int_equal(e->dbg_id.age, 2);
        assert_string_equal(e->dbg_id.pdb_file_name, "wntdll.pdb");

        /* x86 (FULL_HEADER32): GUID @8, Age @24, name @28. */
        b.n = 0;
        bb_u32(&b, 0x77710000);
        bb_bytes(&b, dbg_id + 8, sizeof(dbg_id) - 8);
        bb_ansi(&b, "wntdll.pdb");
        o.psize = 4;
        assert_int_equal(feed_opts(d, &o, b.b, b.n), 0);
        e = &cap.ev[2];
        assert_int_equal(e->pointer_size, 4);
        assert_int_equal(e->dbg_id.base, 0x77710000);
        assert_memory_equal(&e->dbg_id.guid_sig, &want, sizeof(GUID));
        assert_int_equal(e->dbg_id.age, 2);
        assert_string_equal(e->dbg_id.pdb_file_name, "wntdll.pdb");

        /* DbgID_None and DbgPPDB: base and pid only. */
        b.n = 0;
        bb_u64(&b, 0x10000);
        bb_u32(&b, 77);
        o.psize = 8;
        o.opcode = KTC_DBGID_NONE;
        assert_int_equal(feed_opts(d, &o, b.b, b.n), 0);
        assert_int_equal(cap.ev[3].type, KEV_DBG_ID);
        assert_string_equal(cap.ev[3].name, "KernelTraceControl/DbgID_None");
        assert_int_equal(cap.ev[3].dbg_id.pid, 77);
        assert_string_equal(cap.ev[3].dbg_id.pdb_file_name, "");
        /* its 12 bytes hold no PDB identity: none is said to be there (the dump printed a
           zero GUID, age 0 and pdb="") */
        assert_false(cap.ev[3].dbg_id.has_pdb);
        assert_false(cap.ev[3].dbg_id.has_ppdb);
        assert_true(cap.ev[1].dbg_id.has_pdb);
        o.opcode = KTC_DBGID_PPDB;
        assert_int_equal(feed_opts(d, &o, b.b, b.n), -EBADMSG); /* needs TDS and versions */
        bb_u32(&b, 0x5010ae7a);
        bb_u16(&b, 10);
        bb_u16(&b, 3);
        assert_int_equal(feed_opts(d, &o, b.b, b.n), 0);
        /* DbgPPDB (the short one above is ev[4], undecoded): its stamp and version, no PDB
           identity */
        assert_true(cap.ev[5].dbg_id.has_ppdb);
        assert_false(cap.ev[5].dbg_id.has_pdb);
        assert_int_equal(cap.ev[5].dbg_id.time_date_stamp, 0x5010ae7a);
        assert_int_equal(cap.ev[5].dbg_id.major_version, 10);
        assert_int_equal(cap.ev[5].dbg_id.minor_version, 3);
        assert_int_equal(cap.ev[5].dbg_id.base, 0x10000);
        free_decoder(d);
}

static void test_file_version(void **state)
{
        (void)state;
        struct kdecoder *d = new_decoder(true);
        struct bb b = {.n = 0};

        bb_u32(&b, 0x157000);
        bb_u32(&b, 0x5010ae7a);
        bb_utf16(&b, "ntdll.dll");
        bb_utf16(&b, "NT Layer DLL");
        bb_utf16(&b, "6.2.9200.16384");
        bb_utf16(&b, "6.2.9200.16384 bin");
        bb_utf16(&b, "0409");
        bb_utf16(&b, "Microsoft Windows");
        bb_utf16(&b, "Microsoft Corporation");
        bb_utf16(&b, "6.2.9200.16384 prod");
        bb_utf16(&b, "fileid");
        bb_utf16(&b, "programid");
        assert_int_equal(feed_bb(d, &KernelTraceControlImageIdGuid, KTC_FILE_VERSION, 0, 8, &b), 0);

        const struct kevent *e = &cap.ev[0];

        assert_int_equal(e->type, KEV_FILE_VERSION);
        assert_string_equal(e->name, "KernelTraceControl/FileVersion");
        assert_int_equal(e->file_version.image_size, 0x157000);
        assert_int_equal(e->file_version.time_date_stamp, 0x5010ae7a);
        assert_string_equal(e->file_version.orig_file_name, "ntdll.dll");
        assert_string_equal(e->file_version.file_description, "NT Layer DLL");
        assert_string_equal(e->file_version.file_version, "6.2.9200.16384");
        assert_string_equal(e->file_version.product_name, "Microsoft Windows");
        assert_string_equal(e->file_version.company_name, "Microsoft Corporation");
        assert_string_equal(e->file_version.product_version, "6.2.9200.16384 prod");

        /* Strings missing at the end are "". */
        assert_int_equal(feed(d, &KernelTraceControlImageIdGuid, KTC_FILE_VERSION, 0, 8, b.b, 8),
                         0);
        assert_string_equal(cap.ev[1].file_version.orig_file_name, "");
        assert_string_equal(cap.ev[1].file_version.product_version, "");
        free_decoder(d);
}

static void test_pmc_config(void **state)
{
        (void)state;
        struct kdecoder *d = new_decoder(true);
        struct bb b = {.n = 0};

        bb_u32(&b, 2);
        bb_utf16(&b, "BranchInstructions");
        bb_utf16(&b, "LLCReference");
        assert_int_equal(feed_bb(d, &PerfInfoGuid, 48, 2, 8, &b), 0);

        const struct kevent *e = &cap.ev[0];

        assert_int_equal(e->type, KEV_PMC_CONFIG);
        assert_string_equal(e->name, "PerfInfo/PMCCounterConfig");
        assert_int_equal(e->pmc_config.nr_counters, 2);
        assert_string_equal(e->pmc_config.names[0], "BranchInstructions");
        assert_string_equal(e->pmc_config.names[1], "LLCReference");
        assert_string_equal(e->pmc_config.names[2], "");

        /* A hostile count: names past the payload are "". */
        b.n = 0;
        bb_u32(&b, 0xFFFFFFFF);
        bb_utf16(&b, "A");
        assert_int_equal(feed_bb(d, &PerfInfoGuid, 48, 2, 8, &b), 0);
        assert_int_equal(cap.ev[1].pmc_config.nr_counters, 0xFFFFFFFF);
        assert_string_equal(cap.ev[1].pmc_config.names[0], "A");
        assert_string_equal(cap.ev[1].pmc_config.names[7], "");
        free_decoder(d);
}

static void test_profile_interval(void **state)
{
        (void)state;
        /* 3.2: 00000000 10270000 10270000 "Timer" (v3, rundown start 0x0F49). */
        static const uint8_t fixed[] = {0x00, 0x00, 0x00, 0x00, 0x10, 0x27,
                                        0x00, 0x00, 0x10, 0x27, 0x00, 0x00};
        struct kdecoder *d = new_decoder(true);
        struct bb b = {.n = 0};

        bb_bytes(&b, fixed, sizeof(fixed));
        bb_utf16(&b, "Timer");
        assert_int_equal(feed_bb(d, &PerfInfoGuid, 73, 3, 8, &b), 0);

        const struct kevent *e = &cap.ev[0];

        assert_int_equal(e->type, KEV_PROFILE_INTERVAL);
        assert_string_equal(e->name, "PerfInfo/CollectionStart");
        assert_int_equal(e->profile_interval.source, 0);
        assert_int_equal(e->profile_interval.new_interval_100ns, 10000);
        assert_int_equal(e->profile_interval.old_interval_100ns, 10000);
        assert_string_equal(e->profile_interval.source_name, "Timer");

        /* v2 has no SourceName; SetInterval and CollectionEnd share the layout. */
        assert_int_equal(feed(d, &PerfInfoGuid, 72, 2, 8, fixed, sizeof(fixed)), 0);
        assert_string_equal(cap.ev[1].name, "PerfInfo/SetInterval");
        assert_string_equal(cap.ev[1].profile_interval.source_name, "");
        assert_int_equal(feed(d, &PerfInfoGuid, 74, 3, 8, fixed, sizeof(fixed)), 0);
        assert_string_equal(cap.ev[2].name, "PerfInfo/CollectionEnd");
        assert_string_equal(cap.ev[2].profile_interval.source_name, "");
        free_decoder(d);
}

/* ---- 32-bit payloads ---- */

static void test_32bit_payloads(void **state)
{
        (void)state;
        struct kdecoder *d = new_decoder(true);
        struct bb b = {.n = 0};

        /* SampledProfile x86: 12 bytes. */
        bb_u32(&b, 0x77701234);
        bb_u32(&b, 44);
        bb_u16(&b, 1);
        bb_u8(&b, 0x41); /* priority 8, ExecutingDpc */
        bb_u8(&b, 0);
        assert_int_equal(feed_bb(d, &PerfInfoGuid, 46, 2, 4, &b), 0);
        assert_int_equal(cap.ev[0].pointer_size, 4);
        assert_int_equal(cap.ev[0].sample.ip, 0x77701234);
        assert_int_equal(cap.ev[0].sample.tid, 44);
        assert_int_equal(cap.ev[0].sample.priority, 8);
        assert_int_equal(cap.ev[0].sample.flags, 1);

        /* StackWalk x86: frames widened to 64 bits. */
        b.n = 0;
        bb_u64(&b, 123456);
        bb_u32(&b, 300);
        bb_u32(&b, 44);
        bb_u32(&b, 0x77701234);
        bb_u32(&b, 0x80001000);
        bb_u32(&b, 0x00401000);
        bb_u16(&b, 0xABCD); /* a partial frame is ignored */
        assert_int_equal(feed_bb(d, &StackWalkGuid, 32, 2, 4, &b), 0);

        const struct kevent *e = &cap.ev[1];

        assert_int_equal(e->type, KEV_STACK);
        assert_string_equal(e->name, "StackWalk/Stack");
        assert_int_equal(e->stack.event_timestamp, 123456);
        assert_int_equal(e->stack.pid, 300);
        assert_int_equal(e->stack.tid, 44);
        assert_int_equal(e->pid, 300);
        assert_int_equal(e->tid, 44);
        assert_int_equal(e->stack.nr_frames, 3);
        assert_int_equal(e->stack.frames[0], 0x77701234);
        assert_int_equal(e->stack.frames[1], 0x80001000);
        assert_int_equal(e->stack.frames[2], 0x00401000);
        assert_false(e->stack.is_from_key);

        /* Image x86 v3: FileName at 44. */
        b.n = 0;
        bb_u32(&b, 0x77700000);
        bb_u32(&b, 0x150000);
        bb_u32(&b, 300);
        bb_u32(&b, 0xC0FFEE);
        bb_u32(&b, 0x5010ae7a);
        bb_u8(&b, 12);
        bb_u8(&b, 1);
        bb_u16(&b, 0);
        bb_u32(&b, 0x77700000);
        bb_zero(&b, 16);
        assert_int_equal(b.n, 44);
        bb_utf16(&b, "\\Windows\\SysWOW64\\ntdll.dll");
        assert_int_equal(feed_bb(d, &ImageLoadGuid, 3, 3, 4, &b), 0);
        e = &cap.ev[2];
        assert_int_equal(e->type, KEV_IMAGE);
        assert_string_equal(e->name, "Image/DCStart");
        assert_int_equal(e->image.phase, KEV_PHASE_DC_START);
        assert_int_equal(e->image.base, 0x77700000);
        assert_int_equal(e->image.size, 0x150000);
        assert_int_equal(e->image.pid, 300);
        assert_int_equal(e->image.checksum, 0xC0FFEE);
        assert_int_equal(e->image.time_date_stamp, 0x5010ae7a);
        assert_int_equal(e->image.signature_level, 12);
        assert_int_equal(e->image.signature_type, 1);
        assert_int_equal(e->image.default_base, 0x77700000);
        assert_string_equal(e->image.file_name, "\\Windows\\SysWOW64\\ntdll.dll");
        assert_int_equal(e->pid, 300);

        /* ImageID x86: name at 16. */
        b.n = 0;
        bb_u32(&b, 0x77700000);
        bb_u32(&b, 0x150000);
        bb_u32(&b, 300);
        bb_u32(&b, 0x5010ae7a);
        bb_utf16(&b, "ntdll.dll");
        assert_int_equal(feed_bb(d, &KernelTraceControlImageIdGuid, 0, 2, 4, &b), 0);
        assert_int_equal(cap.ev[3].image_id.size, 0x150000);
        assert_int_equal(cap.ev[3].image_id.pid, 300);
        assert_string_equal(cap.ev[3].image_id.original_file_name, "ntdll.dll");

        /* PMC interrupt x86. */
        b.n = 0;
        bb_u32(&b, 0x401000);
        bb_u32(&b, 45);
        bb_u16(&b, 6);
        bb_u16(&b, 0);
        assert_int_equal(feed_bb(d, &PerfInfoGuid, 47, 2, 4, &b), 0);
        assert_int_equal(cap.ev[4].pmc_sample.ip, 0x401000);
        assert_int_equal(cap.ev[4].pmc_sample.tid, 45);
        assert_int_equal(cap.ev[4].pmc_sample.source, 6);
        free_decoder(d);
}

/* ---- Thread and Process versions ---- */

/* WMI_EXTENDED_THREAD_INFORMATION v2 part: pid, tid, 7 pointers, SubProcessTag. */
static void build_thread_v2(struct bb *b, unsigned ps, uint32_t pid, uint32_t tid)
{
        b->n = 0;
        bb_u32(b, pid);
        bb_u32(b, tid);
        for (uint64_t i = 1; i <= 7; i++)
                bb_ptr(b, 0x1000 * i + (ps == 8 ? 0xffff800000000000ull : 0), ps);
        bb_u32(b, 0xAA55);
}

static void test_thread_versions(void **state)
{
        (void)state;
        struct kdecoder *d = new_decoder(true);
        struct bb b = {.n = 0};
        const struct kevent *e;

        /* v0: {TID, PID} (XP MOF order). */
        bb_u32(&b, 0x10);
        bb_u32(&b, 0x20);
        assert_int_equal(feed_bb(d, &ThreadGuid, 1, 0, 8, &b), 0);
        e = &cap.ev[0];
        assert_int_equal(e->type, KEV_THREAD);
        assert_string_equal(e->name, "Thread/Start");
        assert_int_equal(e->thread.phase, KEV_PHASE_START);
        assert_int_equal(e->thread.tid, 0x10);
        assert_int_equal(e->thread.pid, 0x20);
        assert_string_equal(e->thread.name, "");

        /* v1: {PID, TID}. */
        assert_int_equal(feed_bb(d, &ThreadGuid, 2, 1, 8, &b), 0);
        e = &cap.ev[1];
        assert_string_equal(e->name, "Thread/End");
        assert_int_equal(e->thread.phase, KEV_PHASE_END);
        assert_int_equal(e->thread.pid, 0x10);
        assert_int_equal(e->thread.tid, 0x20);
        assert_int_equal(e->pid, 0x10);
        assert_int_equal(e->tid, 0x20);

        /* v2 x64: 68 bytes, no priority bytes, no name. */
        build_thread_v2(&b, 8, 500, 501);
        assert_int_equal(b.n, 68);
        assert_int_equal(feed_bb(d, &ThreadGuid, 3, 2, 8, &b), 0);
        e = &cap.ev[2];
        assert_string_equal(e->name, "Thread/DCStart");
        assert_int_equal(e->thread.phase, KEV_PHASE_DC_START);
        assert_int_equal(e->thread.pid, 500);
        assert_int_equal(e->thread.tid, 501);
        assert_int_equal(e->thread.stack_base, 0xffff800000001000ull);
        assert_int_equal(e->thread.stack_limit, 0xffff800000002000ull);
        assert_int_equal(e->thread.user_stack_base, 0xffff800000003000ull);
        assert_int_equal(e->thread.user_stack_limit, 0xffff800000004000ull);
        assert_int_equal(e->thread.affinity, 0xffff800000005000ull);
        assert_int_equal(e->thread.win32_start_addr, 0xffff800000006000ull);
        assert_int_equal(e->thread.teb_base, 0xffff800000007000ull);
        assert_int_equal(e->thread.sub_process_tag, 0xAA55);
        assert_int_equal(e->thread.base_priority, 0);
        assert_string_equal(e->thread.name, "");

        /* v2 x64 one byte short. */
        assert_int_equal(feed(d, &ThreadGuid, 3, 2, 8, b.b, 67), -EBADMSG);
        assert_int_equal(cap.ev[3].type, KEV_OTHER);

        /* v3 x64: priority bytes, no name (72 bytes). */
        bb_u8(&b, 0xF8); /* -8 */
        bb_u8(&b, 5);
        bb_u8(&b, 2);
        bb_u8(&b, 0x81);
        assert_int_equal(feed_bb(d, &ThreadGuid, 4, 3, 8, &b), 0);
        e = &cap.ev[4];
        assert_string_equal(e->name, "Thread/DCEnd");
        assert_int_equal(e->thread.phase, KEV_PHASE_DC_END);
        assert_int_equal(e->thread.base_priority, -8);
        assert_int_equal(e->thread.page_priority, 5);
        assert_int_equal(e->thread.io_priority, 2);
        assert_int_equal(e->thread.thread_flags, 0x81);
        assert_string_equal(e->thread.name, "");

        /* v4 x64 with a name ("Idle Thread" as in snail's bytes). */
        bb_utf16(&b, "Idle Thread");
        assert_int_equal(feed_bb(d, &ThreadGuid, 3, 4, 8, &b), 0);
        assert_string_equal(cap.ev[5].thread.name, "Idle Thread");
        /* The same as v2 ignores the trailing bytes. */
        assert_int_equal(feed_bb(d, &ThreadGuid, 3, 2, 8, &b), 0);
        assert_string_equal(cap.ev[6].thread.name, "");
        assert_int_equal(cap.ev[6].thread.base_priority, 0);

        /* v3 x86: SubProcessTag @36, priorities @40, name @44. */
        build_thread_v2(&b, 4, 600, 601);
        assert_int_equal(b.n, 40);
        bb_u8(&b, 9);
        bb_u8(&b, 5);
        bb_u8(&b, 2);
        bb_u8(&b, 0);
        bb_utf16(&b, "worker");
        assert_int_equal(feed_bb(d, &ThreadGuid, 1, 3, 4, &b), 0);
        e = &cap.ev[7];
        assert_int_equal(e->thread.pid, 600);
        assert_int_equal(e->thread.tid, 601);
        assert_int_equal(e->thread.stack_base, 0x1000);
        assert_int_equal(e->thread.teb_base, 0x7000);
        assert_int_equal(e->thread.sub_process_tag, 0xAA55);
        assert_int_equal(e->thread.base_priority, 9);
        assert_string_equal(e->thread.name, "worker");
        assert_int_equal(feed(d, &ThreadGuid, 1, 3, 4, b.b, 39), -EBADMSG);

        /* SetName. */
        b.n = 0;
        bb_u32(&b, 600);
        bb_u32(&b, 602);
        bb_utf16(&b, "render");
        assert_int_equal(feed_bb(d, &ThreadGuid, 72, 2, 8, &b), 0);
        e = &cap.ev[9];
        assert_int_equal(e->type, KEV_THREAD_NAME);
        assert_string_equal(e->name, "Thread/SetName");
        assert_int_equal(e->thread_name.pid, 600);
        assert_int_equal(e->thread_name.tid, 602);
        assert_string_equal(e->thread_name.name, "render");
        assert_int_equal(e->pid, 600);
        assert_int_equal(e->tid, 602);
        free_decoder(d);
}

static void test_process_versions(void **state)
{
        (void)state;
        struct kdecoder *d = new_decoder(true);
        struct bb b = {.n = 0};
        const struct kevent *e;

        /* v0: ProcessId ptr, ParentId ptr, SID, image name. */
        bb_u64(&b, 111);
        bb_u64(&b, 4);
        bb_u32(&b, 0);
        bb_ansi(&b, "a.exe");
        assert_int_equal(feed_bb(d, &ProcessGuid, 1, 0, 8, &b), 0);
        e = &cap.ev[0];
        assert_int_equal(e->type, KEV_PROCESS);
        assert_string_equal(e->name, "Process/Start");
        assert_int_equal(e->process.phase, KEV_PHASE_START);
        assert_int_equal(e->process.pid, 111);
        assert_int_equal(e->process.parent_pid, 4);
        assert_string_equal(e->process.user_sid, "");
        assert_string_equal(e->process.image_name, "a.exe");
        assert_string_equal(e->process.command_line, "");

        /* v1: PageDirectoryBase, pid, ppid, session, exit, SID @24 (x64), image. */
        b.n = 0;
        bb_u64(&b, 0x39000);
        bb_u32(&b, 222);
        bb_u32(&b, 111);
        bb_u32(&b, 1);
        bb_u32(&b, 0);
        bb_u32(&b, 0);
        bb_ansi(&b, "b.exe");
        assert_int_equal(feed_bb(d, &ProcessGuid, 2, 1, 8, &b), 0);
        e = &cap.ev[1];
        assert_string_equal(e->name, "Process/End");
        assert_int_equal(e->process.directory_table_base, 0x39000);
        assert_int_equal(e->process.pid, 222);
        assert_int_equal(e->process.parent_pid, 111);
        assert_int_equal(e->process.session_id, 1);
        assert_string_equal(e->process.image_name, "b.exe");

        /* v2: UniqueProcessKey, then as v1, plus the command line. */
        b.n = 0;
        bb_u64(&b, 0xffffe000aaaa0000ull);
        bb_u32(&b, 333);
        bb_u32(&b, 222);
        bb_u32(&b, 1);
        bb_u32(&b, 5);
        bb_u32(&b, 0);
        bb_ansi(&b, "c.exe");
        bb_utf16(&b, "c -x");
        assert_int_equal(feed_bb(d, &ProcessGuid, 4, 2, 8, &b), 0);
        e = &cap.ev[2];
        assert_string_equal(e->name, "Process/DCEnd");
        assert_int_equal(e->process.unique_key, 0xffffe000aaaa0000ull);
        assert_int_equal(e->process.exit_status, 5);
        assert_string_equal(e->process.command_line, "c -x");

        /* v3 x64: DirectoryTableBase @24, SID @32. */
        b.n = 0;
        bb_u64(&b, 0xffffe000bbbb0000ull);
        bb_u32(&b, 444);
        bb_u32(&b, 333);
        bb_u32(&b, 1);
        bb_u32(&b, 259);
        bb_u64(&b, 0x7000);
        assert_int_equal(b.n, 32);
        bb_u32(&b, 0);
        bb_ansi(&b, "d.exe");
        bb_utf16(&b, "d");
        assert_int_equal(feed_bb(d, &ProcessGuid, 3, 3, 8, &b), 0);
        e = &cap.ev[3];
        assert_int_equal(e->process.directory_table_base, 0x7000);
        assert_int_equal(e->process.flags, 0);
        assert_string_equal(e->process.image_name, "d.exe");
        assert_string_equal(e->process.command_line, "d");
        assert_int_equal(feed(d, &ProcessGuid, 3, 3, 8, b.b, 31), -EBADMSG);

        /* v4 x86: Flags @24, SID @28 (TOKEN_USER is 8 bytes), all four strings. */
        b.n = 0;
        bb_u32(&b, 0x85000000);
        bb_u32(&b, 555);
        bb_u32(&b, 444);
        bb_u32(&b, 2);
        bb_u32(&b, 259);
        bb_u32(&b, 0x8000);
        bb_u32(&b, 0x3); /* packaged, WOW64 */
        assert_int_equal(b.n, 28);
        bb_u32(&b, 0x85001234);
        bb_u32(&b, 0);
        bb_u8(&b, 1);
        bb_u8(&b, 5);
        bb_bytes(&b, (const uint8_t[]){0, 0, 0, 0, 0, 5}, 6);
        bb_u32(&b, 21);
        bb_u32(&b, 1);
        bb_u32(&b, 2);
        bb_u32(&b, 3);
        bb_u32(&b, 1001);
        bb_ansi(&b, "app.exe");
        bb_utf16(&b, "app.exe --x");
        bb_utf16(&b, "Contoso.App_1.0_x86__abc");
        bb_utf16(&b, "App");
        assert_int_equal(feed_bb(d, &ProcessGuid, 1, 4, 4, &b), 0);
        e = &cap.ev[5];
        assert_int_equal(e->pointer_size, 4);
        assert_int_equal(e->process.unique_key, 0x85000000);
        assert_int_equal(e->process.pid, 555);
        assert_int_equal(e->process.directory_table_base, 0x8000);
        assert_int_equal(e->process.flags, 3);
        assert_string_equal(e->process.user_sid, "S-1-5-21-1-2-3-1001");
        assert_string_equal(e->process.image_name, "app.exe");
        assert_string_equal(e->process.command_line, "app.exe --x");
        assert_string_equal(e->process.package_full_name, "Contoso.App_1.0_x86__abc");
        assert_string_equal(e->process.application_id, "App");
        assert_int_equal(e->process.exit_time, 0);

        /* v5 Defunct x64 with the trailing ExitTime. */
        build_wmiprvse(&b);
        bb_u64(&b, 132000000012345678ull);
        assert_int_equal(feed_bb(d, &ProcessGuid, 39, 5, 8, &b), 0);
        e = &cap.ev[6];
        assert_string_equal(e->name, "Process/Defunct");
        assert_int_equal(e->process.phase, KEV_PHASE_DEFUNCT);
        assert_string_equal(e->process.user_sid, "S-1-5-18");
        assert_int_equal(e->process.exit_time, 132000000012345678ull);

        /* A SID whose sub-authority count runs past the payload: no SID, nothing read past. */
        build_wmiprvse(&b);
        b.b[36 + 16 + 1] = 200;
        assert_int_equal(feed_bb(d, &ProcessGuid, 3, 4, 8, &b), 0);
        assert_string_equal(cap.ev[7].process.user_sid, "");
        assert_string_equal(cap.ev[7].process.image_name, "");
        assert_int_equal(cap.ev[7].process.pid, 3436);

        /* A TOKEN_USER whose SID pointer is null with its SID after it (v2 x86, as test traces
           write it): the SID and the image name, not the 4 bytes of no SID */
        b.n = 0;
        bb_u32(&b, 0);
        bb_u32(&b, 4);
        bb_u32(&b, 0);
        bb_u32(&b, 0xffffffff);
        bb_u32(&b, 259);
        bb_u32(&b, 0); /* the SID's pointer */
        bb_u32(&b, 0); /* its attributes */
        bb_bytes(&b, (const uint8_t[]){1, 1, 0, 0, 0, 0, 0, 5}, 8);
        bb_u32(&b, 18);
        bb_ansi(&b, "System");
        bb_utf16(&b, "");
        assert_int_equal(feed_bb(d, &ProcessGuid, 3, 2, 4, &b), 0);
        assert_string_equal(cap.ev[8].process.user_sid, "S-1-5-18");
        assert_string_equal(cap.ev[8].process.image_name, "System");
        /* and the 4 bytes of no SID before an image name that starts as a SID would not */
        b.n = 20;
        bb_u32(&b, 0);
        bb_ansi(&b, "\x01\x01");
        bb_utf16(&b, "x");
        assert_int_equal(feed_bb(d, &ProcessGuid, 3, 2, 4, &b), 0);
        assert_string_equal(cap.ev[9].process.user_sid, "");
        assert_string_equal(cap.ev[9].process.image_name, "\x01\x01");
        assert_string_equal(cap.ev[9].process.command_line, "x");
        free_decoder(d);
}

static void test_process_image_name_encoding(void **state)
{
        (void)state;
        struct kdecoder *d = new_decoder(true);
        struct bb b = {.n = 0};

        /* Latin-1 becomes UTF-8; valid UTF-8 is kept; a missing NUL ends at the payload. */
        bb_u64(&b, 1);
        bb_u64(&b, 2);
        bb_u32(&b, 0);
        bb_ansi(&b, "caf\xe9.exe");
        assert_int_equal(feed_bb(d, &ProcessGuid, 1, 0, 8, &b), 0);
        assert_string_equal(cap.ev[0].process.image_name, "caf\xc3\xa9.exe");
        b.n -= 9;
        bb_ansi(&b, "caf\xc3\xa9.exe");
        assert_int_equal(feed_bb(d, &ProcessGuid, 1, 0, 8, &b), 0);
        assert_string_equal(cap.ev[1].process.image_name, "caf\xc3\xa9.exe");
        assert_int_equal(feed(d, &ProcessGuid, 1, 0, 8, b.b, b.n - 5), 0);
        assert_string_equal(cap.ev[2].process.image_name, "caf\xc3\xa9");
        free_decoder(d);
}

/* ---- Image ---- */

static void test_image_layouts(void **state)
{
        (void)state;
        struct kdecoder *d = new_decoder(true);
        struct bb b = {.n = 0};
        const struct kevent *e;

        /* v3 x64 load (hook 0x030A, reported under the Image GUID): FileName @56. */
        bb_u64(&b, 0x7ffd00000000ull);
        bb_u64(&b, 0x1f8000);
        bb_u32(&b, 1234);
        bb_u32(&b, 0x1f9a2c);
        bb_u32(&b, 0x11223344);
        bb_u8(&b, 8);
        bb_u8(&b, 1);
        bb_u16(&b, 0);
        bb_u64(&b, 0x7ffd00000000ull);
        bb_zero(&b, 16);
        assert_int_equal(b.n, 56);
        bb_utf16(&b, "\\Device\\HarddiskVolume2\\Windows\\System32\\ntdll.dll");

        struct rec_opts o = {&ImageLoadGuid, 10, 3, 8, 0, 77, 88, 0, NULL, 0};

        assert_int_equal(feed_opts(d, &o, b.b, b.n), 0);
        e = &cap.ev[0];
        assert_int_equal(e->type, KEV_IMAGE);
        assert_string_equal(e->name, "Image/Load");
        assert_int_equal(e->image.phase, KEV_PHASE_START);
        assert_int_equal(e->image.base, 0x7ffd00000000ull);
        assert_int_equal(e->image.size, 0x1f8000);
        assert_int_equal(e->image.pid, 1234);
        assert_int_equal(e->image.checksum, 0x1f9a2c);
        assert_int_equal(e->image.time_date_stamp, 0x11223344);
        assert_string_equal(e->image.file_name,
                            "\\Device\\HarddiskVolume2\\Windows\\System32\\ntdll.dll");
        assert_int_equal(e->pid, 1234);
        assert_int_equal(e->tid, 77);

        /* Unload, and the same load under the Process GUID (not remapped). */
        o.opcode = 2;
        assert_int_equal(feed_opts(d, &o, b.b, b.n), 0);
        assert_string_equal(cap.ev[1].name, "Image/Unload");
        assert_int_equal(cap.ev[1].image.phase, KEV_PHASE_END);
        o.guid = &ProcessGuid;
        o.opcode = 10;
        assert_int_equal(feed_opts(d, &o, b.b, b.n), 0);
        assert_int_equal(cap.ev[2].type, KEV_IMAGE);
        assert_string_equal(cap.ev[2].name, "Image/Load");
        assert_int_equal(feed(d, &ImageLoadGuid, 4, 3, 8, b.b, 55), -EBADMSG);

        /* v1 x64: ImageBase, ImageSize, ProcessId, FileName @ HostOffset(12,2) = 20. */
        b.n = 0;
        bb_u64(&b, 0x400000);
        bb_u64(&b, 0x1000);
        bb_u32(&b, 99);
        bb_utf16(&b, "C:\\a.exe");
        assert_int_equal(feed_bb(d, &ImageLoadGuid, 10, 1, 8, &b), 0);
        assert_int_equal(cap.ev[4].image.pid, 99);
        assert_int_equal(cap.ev[4].image.size, 0x1000);
        assert_string_equal(cap.ev[4].image.file_name, "C:\\a.exe");

        /* v0 x64: no ProcessId; the header's stays. */
        b.n = 0;
        bb_u64(&b, 0x400000);
        bb_u64(&b, 0x1000);
        bb_utf16(&b, "C:\\b.exe");
        o.guid = &ImageLoadGuid;
        o.version = 0;
        assert_int_equal(feed_opts(d, &o, b.b, b.n), 0);
        assert_int_equal(cap.ev[5].image.pid, 88);
        assert_string_equal(cap.ev[5].image.file_name, "C:\\b.exe");

        /* KernelBase: its ImageBase alone (the MOF table's), not an image of the table */
        assert_int_equal(feed_bb(d, &ImageLoadGuid, 33, 2, 8, &b), 0);
        assert_int_equal(cap.ev[6].type, KEV_FIELDS);
        assert_string_equal(cap.ev[6].name, "Image/KernelBase");
        free_decoder(d);
}

/* ---- stack cache ---- */

static void feed_ref(struct kdecoder *d, bool is_kernel, uint64_t ts, uint32_t pid, uint32_t tid,
                     uint64_t key, uint16_t cpu)
{
        struct bb b = {.n = 0};
        struct rec_opts o = {
                &StackWalkGuid, is_kernel ? 37 : 38, 2, 8, ts + 1, NONE, NONE, cpu, NULL, 0};

        bb_u64(&b, ts);
        bb_u32(&b, pid);
        bb_u32(&b, tid);
        bb_u64(&b, key);
        assert_int_equal(feed_opts(d, &o, b.b, b.n), 0);
}

static void feed_def(struct kdecoder *d, uint8_t op, uint64_t key, const uint64_t *frames, size_t n,
                     uint64_t ts)
{
        struct bb b = {.n = 0};
        struct rec_opts o = {&StackWalkGuid, op, 2, 8, ts, NONE, NONE, 0, NULL, 0};

        bb_u64(&b, key);
        for (size_t i = 0; i < n; i++)
                bb_u64(&b, frames[i]);
        assert_int_equal(feed_opts(d, &o, b.b, b.n), 0);
}

static void test_stack_keys(void **state)
{
        (void)state;
        static const uint64_t k1_frames[] = {0xfffff80001000000ull, 0xfffff80001000100ull};
        static const uint64_t k1_again[] = {0xfffff80002000000ull};
        static const uint64_t k3_frames[] = {0x7ff600001000ull, 0x7ff600002000ull,
                                             0x7ff600003000ull};
        const uint64_t k1 = 0xffffc00011110000ull, k2 = 0xffffc00022220000ull,
                       k3 = 0xffffc00033330000ull;
        struct kdecoder *d = new_decoder(true);
        struct kdecoder_stats st;
        const struct kevent *e;

        feed_ref(d, true, 100, 10, 11, k1, 2);
        feed_ref(d, false, 100, 10, 11, k2, 2);
        feed_ref(d, true, 200, 10, 12, k1, 3);
        assert_int_equal(cap.n, 3);
        e = &cap.ev[0];
        assert_int_equal(e->type, KEV_STACK_KEY);
        assert_string_equal(e->name, "StackWalk/StackKeyKernel");
        assert_true(e->stack_key.is_kernel);
        assert_int_equal(e->stack_key.key, k1);
        assert_int_equal(e->stack_key.event_timestamp, 100);
        assert_int_equal(e->pid, 10);
        assert_int_equal(e->tid, 11);
        assert_string_equal(cap.ev[1].name, "StackWalk/StackKeyUser");
        assert_false(cap.ev[1].stack_key.is_kernel);
        kdecoder_get_stats(d, &st);
        assert_int_equal(st.nr_stack_refs_pending, 3);
        assert_int_equal(st.nr_stack_refs_resolved, 0);

        /* KeyDelete of k1 resolves both k1 references, after the definition itself. */
        feed_def(d, 35, k1, k1_frames, 2, 300);
        assert_int_equal(cap.n, 6);
        e = &cap.ev[3];
        assert_int_equal(e->type, KEV_STACK_KEY_DEF);
        assert_string_equal(e->name, "StackWalk/KeyDelete");
        assert_int_equal(e->stack_key_def.key, k1);
        assert_int_equal(e->stack_key_def.nr_frames, 2);
        assert_int_equal(e->stack_key_def.frames[1], k1_frames[1]);
        assert_int_equal(e->stack_key_def.nr_resolved, 2);
        for (int i = 0; i < 2; i++) {
                e = &cap.ev[4 + i];
                assert_int_equal(e->type, KEV_STACK);
                assert_true(e->stack.is_from_key);
                assert_true(e->stack.is_kernel_part);
                assert_int_equal(e->stack.key, k1);
                assert_int_equal(e->stack.event_timestamp, i == 0 ? 100 : 200);
                assert_int_equal(e->stack.pid, 10);
                assert_int_equal(e->stack.tid, i == 0 ? 11 : 12);
                assert_int_equal(e->pid, 10);
                assert_int_equal(e->cpu, i == 0 ? 2 : 3);
                assert_int_equal(e->stack.nr_frames, 2);
                assert_memory_equal(e->stack.frames, k1_frames, sizeof(k1_frames));
        }
        kdecoder_get_stats(d, &st);
        assert_int_equal(st.nr_stack_refs_pending, 1);
        assert_int_equal(st.nr_stack_refs_resolved, 2);

        /* k1 is reused after the delete: a new reference waits for the new definition. */
        feed_ref(d, true, 400, 20, 21, k1, 0);
        assert_int_equal(cap.n, 7);
        feed_def(d, 36, k1, k1_again, 1, 500);
        assert_int_equal(cap.n, 9);
        assert_string_equal(cap.ev[7].name, "StackWalk/KeyRundown");
        assert_int_equal(cap.ev[7].stack_key_def.nr_resolved, 1);
        e = &cap.ev[8];
        assert_int_equal(e->stack.event_timestamp, 400);
        assert_int_equal(e->stack.tid, 21);
        assert_int_equal(e->stack.nr_frames, 1);
        assert_int_equal(e->stack.frames[0], k1_again[0]);

        /* The user key k2 resolves with its own definition. */
        feed_def(d, 35, k2, k3_frames, 3, 600);
        assert_int_equal(cap.n, 11);
        assert_int_equal(cap.ev[9].stack_key_def.nr_resolved, 1);
        assert_false(cap.ev[10].stack.is_kernel_part);
        assert_int_equal(cap.ev[10].stack.nr_frames, 3);

        /* A definition nobody waits for resolves nothing. */
        feed_def(d, 35, 0x1234, k3_frames, 3, 650);
        assert_int_equal(cap.n, 12);
        assert_int_equal(cap.ev[11].stack_key_def.nr_resolved, 0);

        /* After KeyCreate a reference resolves at once, right after itself. */
        feed_def(d, 34, k3, k3_frames, 3, 700);
        assert_string_equal(cap.ev[12].name, "StackWalk/KeyCreate");
        assert_int_equal(cap.ev[12].stack_key_def.nr_resolved, 0);
        feed_ref(d, false, 800, 30, 31, k3, 1);
        assert_int_equal(cap.n, 15);
        assert_int_equal(cap.ev[13].type, KEV_STACK_KEY);
        e = &cap.ev[14];
        assert_int_equal(e->type, KEV_STACK);
        assert_true(e->stack.is_from_key);
        assert_false(e->stack.is_kernel_part);
        assert_int_equal(e->stack.event_timestamp, 800);
        assert_int_equal(e->stack.pid, 30);
        assert_int_equal(e->stack.nr_frames, 3);
        assert_memory_equal(e->stack.frames, k3_frames, sizeof(k3_frames));
        kdecoder_get_stats(d, &st);
        assert_int_equal(st.nr_stack_refs_pending, 0);
        assert_int_equal(st.nr_stack_refs_resolved, 5);

        /* KeyDelete of k3 forgets it: the next reference waits again. */
        feed_def(d, 35, k3, k3_frames, 3, 900);
        assert_int_equal(cap.ev[15].stack_key_def.nr_resolved, 0);
        feed_ref(d, false, 1000, 30, 31, k3, 1);
        assert_int_equal(cap.n, 17);
        kdecoder_get_stats(d, &st);
        assert_int_equal(st.nr_stack_refs_pending, 1);

        /* x86 references and definitions: 20 and 4 + 4n bytes. */
        struct bb b = {.n = 0};

        bb_u64(&b, 1100);
        bb_u32(&b, 40);
        bb_u32(&b, 41);
        bb_u32(&b, 0x82000000);
        assert_int_equal(feed_bb(d, &StackWalkGuid, 37, 2, 4, &b), 0);
        assert_int_equal(cap.ev[17].stack_key.key, 0x82000000);
        b.n = 0;
        bb_u32(&b, 0x82000000);
        bb_u32(&b, 0x80001234);
        bb_u32(&b, 0x80005678);
        assert_int_equal(feed_bb(d, &StackWalkGuid, 35, 2, 4, &b), 0);
        assert_int_equal(cap.n, 20);
        assert_int_equal(cap.ev[18].stack_key_def.nr_frames, 2);
        assert_int_equal(cap.ev[19].stack.frames[1], 0x80005678);
        assert_int_equal(cap.ev[19].stack.tid, 41);
        free_decoder(d);
}

static void test_stack_refs_bounded(void **state)
{
        (void)state;
        /* 1 << 20 pending references at most: the oldest go first. */
        const uint32_t limit = 1u << 20, extra = 10;
        struct kdecoder *d = kdecoder_new(true);
        uint8_t pl[24];
        EVENT_RECORD r;
        size_t n = 0;
        struct kdecoder_stats st;

        assert_non_null(d);
        memset(&r, 0, sizeof(r));
        r.EventHeader.Flags = EVENT_HEADER_FLAG_64_BIT_HEADER;
        r.EventHeader.ProviderId = StackWalkGuid;
        r.EventHeader.EventDescriptor.Opcode = 37;
        r.UserData = pl;
        r.UserDataLength = sizeof(pl);
        memset(pl, 0, sizeof(pl));
        for (uint32_t i = 1; i <= limit + extra; i++) {
                uint64_t key = i;

                memcpy(pl + 16, &key, 8);
                assert_int_equal(kdecoder_decode(d, &r, count_sink, &n), 0);
        }
        assert_int_equal(n, limit + extra);
        kdecoder_get_stats(d, &st);
        assert_int_equal(st.nr_stack_refs_pending, limit);

        cap_reset();
        uint64_t frame = 0x1000;

        feed_def(d, 35, 1, &frame, 1, 0); /* dropped */
        assert_int_equal(cap.ev[0].stack_key_def.nr_resolved, 0);
        feed_def(d, 35, extra + 1, &frame, 1, 0); /* the oldest kept */
        assert_int_equal(cap.ev[1].stack_key_def.nr_resolved, 1);
        kdecoder_get_stats(d, &st);
        assert_int_equal(st.nr_stack_refs_pending, limit - 1);
        assert_int_equal(st.nr_stack_refs_resolved, 1);
        free_decoder(d);
}

/* The pending references' ring grown while it wraps: each reference, pending across the
   growth (the ring doubled in place, those past the old size moved), resolves to its own
   thread. */
static void test_stack_refs_grow_wrapped(void **state)
{
        (void)state;
        struct kdecoder *d = new_decoder(true);
        const uint64_t base = 0xffffc00000000000ull, frame = 0x7ff600001000ull;
        struct kdecoder_stats st;

        /* 1,024 (the ring's first size), the first 500 resolved: the head moves on */
        for (uint32_t k = 1; k <= 1024; k++) {
                feed_ref(d, false, 10 * k, 7, k, base + k, 1);
                cap_reset();
        }
        for (uint32_t k = 1; k <= 500; k++) {
                feed_def(d, 35, base + k, &frame, 1, 20000 + k);
                cap_reset();
        }
        /* 1,100 more: the tail wraps, and the ring doubles twice with the head at 500 */
        for (uint32_t k = 1025; k <= 2124; k++) {
                feed_ref(d, false, 10 * k, 7, k, base + k, 1);
                cap_reset();
        }
        kdecoder_get_stats(d, &st);
        assert_int_equal(st.nr_stack_refs_pending, 2124 - 500);
        for (uint32_t k = 501; k <= 2124; k++) {
                feed_def(d, 35, base + k, &frame, 1, 30000 + k);
                bool found = false;
                for (size_t i = 0; i < cap.n; i++)
                        if (cap.ev[i].type == KEV_STACK) {
                                assert_int_equal(cap.ev[i].stack.tid, k);
                                assert_int_equal(cap.ev[i].stack.event_timestamp, 10 * k);
                                found = true;
                        }
                assert_true(found);
                cap_reset();
        }
        kdecoder_get_stats(d, &st);
        assert_int_equal(st.nr_stack_refs_pending, 0);
        assert_int_equal(st.nr_stack_refs_resolved, 2124);
        free_decoder(d);
}

/* ---- LBR ---- */

static void test_lbr(void **state)
{
        (void)state;
        struct kdecoder *d = new_decoder(true);
        struct bb b = {.n = 0};
        const struct kevent *e;

        /* x64: entries at 24, 24 bytes each (From, To, Reserved). */
        bb_u64(&b, 5555);
        bb_u32(&b, 70);
        bb_u32(&b, 71);
        bb_u32(&b, 0x200);
        bb_u32(&b, 0);
        for (uint64_t i = 0; i < 3; i++) {
                bb_u64(&b, 0x7ff600001000ull + i);
                bb_u64(&b, 0x7ff600002000ull + i);
                bb_u64(&b, 0xdead);
        }
        bb_u64(&b, 0x1); /* partial entry ignored */
        assert_int_equal(feed_bb(d, &LastBranchRecordGuid, 32, 2, 8, &b), 0);
        e = &cap.ev[0];
        assert_int_equal(e->type, KEV_LBR);
        assert_string_equal(e->name, "LastBranchRecord/LBR");
        assert_int_equal(e->lbr.event_timestamp, 5555);
        assert_int_equal(e->lbr.pid, 70);
        assert_int_equal(e->lbr.tid, 71);
        assert_int_equal(e->pid, 70);
        assert_int_equal(e->tid, 71);
        assert_int_equal(e->lbr.options, 0x200);
        assert_int_equal(e->lbr.nr_entries, 3);
        assert_int_equal(e->lbr.entries[0].from, 0x7ff600001000ull);
        assert_int_equal(e->lbr.entries[0].to, 0x7ff600002000ull);
        assert_int_equal(e->lbr.entries[2].from, 0x7ff600001002ull);
        assert_int_equal(e->lbr.entries[2].to, 0x7ff600002002ull);

        /* x86: entries at 20, 12 bytes each. */
        b.n = 0;
        bb_u64(&b, 6666);
        bb_u32(&b, 72);
        bb_u32(&b, 73);
        bb_u32(&b, 0x1);
        for (uint32_t i = 0; i < 2; i++) {
                bb_u32(&b, 0x401000 + i);
                bb_u32(&b, 0x402000 + i);
                bb_u32(&b, 0);
        }
        assert_int_equal(feed_bb(d, &LastBranchRecordGuid, 32, 2, 4, &b), 0);
        e = &cap.ev[1];
        assert_int_equal(e->lbr.nr_entries, 2);
        assert_int_equal(e->lbr.options, 1);
        assert_int_equal(e->lbr.entries[1].from, 0x401001);
        assert_int_equal(e->lbr.entries[1].to, 0x402001);

        /* No entries; too short. */
        assert_int_equal(feed(d, &LastBranchRecordGuid, 32, 2, 4, b.b, 20), 0);
        assert_int_equal(cap.ev[2].lbr.nr_entries, 0);
        assert_int_equal(feed(d, &LastBranchRecordGuid, 32, 2, 8, b.b, 23), -EBADMSG);
        free_decoder(d);
}

/* ---- truncated payloads ---- */

struct layout {
        const GUID *guid;
        uint8_t opcode;
        uint8_t version;
        unsigned psize;
        size_t fixed; /* bytes the fixed fields need */
};

static void test_truncated_payloads(void **state)
{
        (void)state;
        const struct layout layouts[] = {
                {&PerfInfoGuid, 46, 2, 8, 16},
                {&PerfInfoGuid, 46, 2, 4, 12},
                {&PerfInfoGuid, 47, 2, 8, 16},
                {&PerfInfoGuid, 47, 2, 4, 12},
                {&PerfInfoGuid, 48, 2, 8, 4},
                {&PerfInfoGuid, 72, 3, 8, 12},
                {&PerfInfoGuid, 73, 3, 4, 12},
                {&PerfInfoGuid, 74, 2, 8, 12},
                {&StackWalkGuid, 32, 2, 8, 16},
                {&StackWalkGuid, 37, 2, 8, 24},
                {&StackWalkGuid, 38, 2, 4, 20},
                {&StackWalkGuid, 34, 2, 8, 8},
                {&StackWalkGuid, 35, 2, 4, 4},
                {&StackWalkGuid, 36, 2, 8, 8},
                {&ThreadGuid, 36, 4, 8, 24},
                {&ThreadGuid, 36, 1, 8, 16},
                {&ThreadGuid, 50, 2, 8, 8},
                {&ThreadGuid, 1, 0, 8, 8},
                {&ThreadGuid, 2, 1, 8, 8},
                {&ThreadGuid, 3, 2, 8, 68},
                {&ThreadGuid, 4, 3, 4, 40},
                {&ThreadGuid, 1, 4, 8, 68},
                {&ThreadGuid, 72, 2, 8, 8},
                {&ProcessGuid, 1, 0, 8, 16},
                {&ProcessGuid, 2, 1, 8, 24},
                {&ProcessGuid, 3, 2, 4, 20},
                {&ProcessGuid, 4, 3, 8, 32},
                {&ProcessGuid, 3, 3, 4, 24},
                {&ProcessGuid, 1, 4, 8, 36},
                {&ProcessGuid, 39, 5, 4, 28},
                {&ImageLoadGuid, 10, 3, 8, 56},
                {&ImageLoadGuid, 3, 2, 4, 44},
                {&ImageLoadGuid, 2, 1, 8, 20},
                {&ImageLoadGuid, 4, 0, 4, 8},
                {&KernelTraceControlImageIdGuid, 0, 2, 8, 24},
                {&KernelTraceControlImageIdGuid, 0, 2, 4, 16},
                {&KernelTraceControlImageIdGuid, 36, 2, 8, 32},
                {&KernelTraceControlImageIdGuid, 37, 2, 4, 28},
                {&KernelTraceControlImageIdGuid, 32, 2, 8, 12},
                {&KernelTraceControlImageIdGuid, 38, 2, 8, 20},
                {&KernelTraceControlImageIdGuid, 40, 2, 4, 8},
                {&KernelTraceControlImageIdGuid, 64, 0, 8, 8},
                {&LastBranchRecordGuid, 32, 2, 8, 24},
                {&LastBranchRecordGuid, 32, 2, 4, 20},
                {&EventTraceGuid, 0, 2, 8, 0x118},
                {&EventTraceGuid, 0, 1, 4, 0x110},
                {&EventTraceGuid, 5, 2, 8, 32},
                {&EventTraceGuid, 32, 2, 8, 32},
        };
        uint8_t junk[0x140];

        for (size_t i = 0; i < sizeof(junk); i++)
                junk[i] = (uint8_t)(0xA5 ^ (i * 37));
        for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
                const struct layout *l = &layouts[i];
                struct kdecoder *d = new_decoder(true);
                struct rec_opts o = {l->guid, l->opcode, l->version, l->psize, 9,
                                     1234,    5678,      1,          NULL,     0};
                struct kdecoder_stats st;

                for (size_t n = 0; n < l->fixed; n++) {
                        cap_reset();
                        assert_int_equal(feed_opts(d, &o, junk, n), -EBADMSG);
                        assert_int_equal(cap.n, 1);
                        assert_int_equal(cap.ev[0].type, KEV_OTHER);
                        assert_int_equal(cap.ev[0].pid, 5678);
                        assert_int_equal(cap.ev[0].tid, 1234);
                        assert_int_equal(cap.ev[0].opcode, l->opcode);
                        assert_true(cap.ev[0].name[0] != '\0');
                }
                /* At the fixed size and every size past it: decoded, nothing read outside. */
                for (size_t n = l->fixed; n <= sizeof(junk); n++) {
                        cap_reset();
                        assert_int_equal(feed_opts(d, &o, junk, n), 0);
                        assert_true(cap.n >= 1);
                        assert_int_not_equal(cap.ev[0].type, KEV_OTHER);
                }
                kdecoder_get_stats(d, &st);
                assert_int_equal(st.nr_short, l->fixed);
                free_decoder(d);
        }
}

static void test_null_payload(void **state)
{
        (void)state;
        struct kdecoder *d = new_decoder(true);
        EVENT_RECORD r;

        memset(&r, 0, sizeof(r));
        r.EventHeader.ProviderId = PerfInfoGuid;
        r.EventHeader.EventDescriptor.Opcode = 46;
        r.UserDataLength = 16; /* a length without data: treated as empty */
        assert_int_equal(kdecoder_decode(d, &r, capture, NULL), -EBADMSG);
        assert_int_equal(cap.ev[0].type, KEV_OTHER);
        assert_int_equal(cap.ev[0].pointer_size, 8); /* no flag: 8 */
        assert_int_equal(kdecoder_decode(NULL, &r, capture, NULL), -EINVAL);
        assert_int_equal(kdecoder_decode(d, NULL, capture, NULL), -EINVAL);
        assert_int_equal(kdecoder_decode(d, &r, NULL, NULL), -EBADMSG);
        free_decoder(d);
        kdecoder_free(NULL);
}

/* ---- the decoder's provider slots ---- */

struct named {
        int type;
        char name[96];
};

static void named_sink(void *ctx, const struct kevent *ev)
{
        struct named *n = ctx;
        n->type = ev->type;
        snprintf(n->name, sizeof(n->name), "%s", ev->name ? ev->name : "(null)");
}

static struct named decode_named(struct kdecoder *d, const GUID *g, uint8_t op)
{
        EVENT_RECORD r;
        struct named n = {-1, ""};

        memset(&r, 0, sizeof(r));
        r.EventHeader.Flags = EVENT_HEADER_FLAG_CLASSIC_HEADER | EVENT_HEADER_FLAG_64_BIT_HEADER;
        r.EventHeader.ProviderId = *g;
        r.EventHeader.EventDescriptor.Opcode = op;
        (void)kdecoder_decode(d, &r, named_sink, &n);
        return n;
}

/* kprov_lookup_cached: a long-lived decoder (its 16 slots full, evicted, hit) names every record
   as a fresh decoder does, also for GUIDs one byte off a known one in either half (a slot that
   compared only the first 8 bytes, or only Data1, would call them the known provider). */
static void test_provider_slots(void **state)
{
        (void)state;
        static const GUID *known[] = {
                &ThreadGuid,     &PerfInfoGuid,    &ProcessGuid,
                &StackWalkGuid,  &ImageLoadGuid,   &EventTraceGuid,
                &DiskIoGuid,     &SysConfigExGuid, &WnfGuid,
                &WinSatGuid,     &UmsGuid,         &UdpIpGuid,
                &ThreadPoolGuid, &TcpIpGuid,       &SplitIoGuid,
                &RegistryGuid,   &PowerGuid,       &LastBranchRecordGuid,
        };
        enum { NK = sizeof(known) / sizeof(known[0]), NG = 3 * NK };
        GUID g[NG];
        for (int i = 0; i < NK; i++) {
                g[3 * i] = *known[i];
                g[3 * i + 1] = *known[i];
                g[3 * i + 1].Data4[7] ^= 1; /* the second half off by a bit */
                g[3 * i + 2] = *known[i];
                g[3 * i + 2].Data3 ^= 0x100; /* the first half off, Data1 the same */
        }
        struct kdecoder *d = new_decoder(true);
        struct named known_name = decode_named(d, &ThreadGuid, 1);
        struct named off_name = decode_named(d, &g[1], 1);
        assert_string_not_equal(known_name.name, off_name.name);
        for (int stride = 1; stride <= 7; stride += 2) {
                for (int j = 0; j < 4 * NG; j++) {
                        int i = (j * stride) % NG;
                        uint8_t op = (uint8_t)(j % 4 + 1);
                        struct kdecoder *fresh = kdecoder_new(true);
                        assert_non_null(fresh);
                        struct named want = decode_named(fresh, &g[i], op);
                        kdecoder_free(fresh);
                        struct named got = decode_named(d, &g[i], op);
                        assert_int_equal(got.type, want.type);
                        assert_string_equal(got.name, want.name);
                }
        }
        free_decoder(d);
}

/* A manifest event (no classic header) of provider g and Id id, without a payload. */
static struct named decode_named_id(struct kdecoder *d, const GUID *g, uint16_t id)
{
        EVENT_RECORD r;
        struct named n = {-1, ""};

        memset(&r, 0, sizeof(r));
        r.EventHeader.Flags = EVENT_HEADER_FLAG_64_BIT_HEADER;
        r.EventHeader.ProviderId = *g;
        r.EventHeader.EventDescriptor.Id = id;
        (void)kdecoder_decode(d, &r, named_sink, &n);
        return n;
}

/* The slots also keep which CLR provider a GUID is: the runtime's and the rundown's events are
   named by their Id from a long-lived decoder as from a fresh one, and GUIDs one bit off either
   (in either half) are not taken for them. */
static void test_provider_slots_clr(void **state)
{
        (void)state;
        static const GUID runtime = {
                0xe13c0d23, 0xccbc, 0x4e12, {0x93, 0x1b, 0xd9, 0xcc, 0x2e, 0xee, 0x27, 0xe4}};
        static const GUID rundown = {
                0xa669021c, 0xc450, 0x4609, {0xa0, 0x35, 0x5a, 0xf5, 0x9a, 0xf4, 0xdf, 0x18}};
        static const uint16_t ids[] = {1, 143, 144, 153, 154, 187, 300};
        GUID g[8] = {runtime, runtime, runtime, rundown, rundown, rundown, ThreadGuid, runtime};
        g[1].Data4[7] ^= 1;
        g[2].Data3 ^= 0x100;
        g[4].Data4[0] ^= 0x80;
        g[5].Data1 ^= 1;
        g[7].Data1 = rundown.Data1; /* the first word of one, the rest of the other */
        struct kdecoder *d = new_decoder(true);
        struct named rt = decode_named_id(d, &runtime, 143), rd = decode_named_id(d, &rundown, 153);
        assert_string_equal(rt.name, "DotNETRuntime/MethodLoadVerbose");
        assert_string_equal(rd.name, "DotNETRuntimeRundown/ModuleDCStart");
        for (int stride = 1; stride <= 5; stride += 2) {
                for (int j = 0; j < 8 * 7 * 3; j++) {
                        int i = (j * stride) % 8;
                        uint16_t id = ids[j % 7];
                        struct kdecoder *fresh = kdecoder_new(true);
                        assert_non_null(fresh);
                        struct named want = decode_named_id(fresh, &g[i], id);
                        kdecoder_free(fresh);
                        struct named got = decode_named_id(d, &g[i], id);
                        assert_int_equal(got.type, want.type);
                        assert_string_equal(got.name, want.name);
                }
        }
        /* one bit off is another provider: unnamed, by its GUID and Id */
        assert_string_not_equal(decode_named_id(d, &g[1], 143).name, rt.name);
        assert_string_not_equal(decode_named_id(d, &g[5], 153).name, rd.name);
        free_decoder(d);
}

/* ---- tid -> pid fix-ups ---- */

/* A record as feed_opts makes it (no extended items), for kdecoder_peek_sample. */
static EVENT_RECORD peek_record(const GUID *g, uint8_t op, unsigned psize, const uint8_t *payload,
                                size_t len)
{
        EVENT_RECORD r;
        memset(&r, 0, sizeof(r));
        r.EventHeader.Flags =
                EVENT_HEADER_FLAG_CLASSIC_HEADER |
                (psize == 8 ? EVENT_HEADER_FLAG_64_BIT_HEADER : EVENT_HEADER_FLAG_32_BIT_HEADER);
        r.EventHeader.ProviderId = *g;
        r.EventHeader.EventDescriptor.Opcode = op;
        r.EventHeader.EventDescriptor.Version = 2;
        r.UserData = (void *)(uintptr_t)payload;
        r.UserDataLength = (USHORT)len;
        return r;
}

/* kdecoder_peek_sample: a timer sample's address, thread and the thread's process as
   dec_sample would decode them, nothing else taken for one, and nothing changed. */
static void test_peek_sample(void **state)
{
        (void)state;
        static const uint8_t pl[] = {0x03, 0x30, 0xd0, 0xff, 0xff, 0xff, 0xff, 0xff,
                                     0x2e, 0x16, 0x00, 0x00, 0x01, 0x00, 0x58, 0x00};
        static const uint8_t pl32[] = {0x10, 0x20, 0x30, 0x40, 0x2e, 0x16,
                                       0x00, 0x00, 0x01, 0x00, 0x58, 0x00};
        struct kdecoder *d = new_decoder(true);
        uint64_t ip = 0;
        uint32_t tid = 0, pid = 0;
        EVENT_RECORD r = peek_record(&PerfInfoGuid, 46, 8, pl, sizeof(pl));
        assert_true(kdecoder_peek_sample(d, &r, &ip, &tid, &pid));
        assert_int_equal(ip, 0xffffffffffd03003ull);
        assert_int_equal(tid, 5678);
        assert_int_equal(pid, NONE); /* no thread table entry yet */
        assert_int_equal(cap.n, 0);  /* nothing decoded */

        /* the thread known: its process */
        struct bb b;
        build_thread_v2(&b, 8, 1234, 5678);
        struct rec_opts o = {&ThreadGuid, 3, 3, 8, 1, 8, 4, 0, NULL, 0};
        assert_int_equal(feed_opts(d, &o, b.b, b.n), 0);
        assert_true(kdecoder_peek_sample(d, &r, &ip, &tid, &pid));
        assert_int_equal(pid, 1234);
        r = peek_record(&PerfInfoGuid, 46, 4, pl32, sizeof(pl32));
        assert_true(kdecoder_peek_sample(d, &r, &ip, &tid, &pid));
        assert_int_equal(ip, 0x40302010u);
        assert_int_equal(tid, 5678);

        /* not a timer sample: a PMC sample, another provider's opcode 46, a short payload */
        r = peek_record(&PerfInfoGuid, 47, 8, pl, sizeof(pl));
        assert_false(kdecoder_peek_sample(d, &r, &ip, &tid, &pid));
        r = peek_record(&ThreadGuid, 46, 8, pl, sizeof(pl));
        assert_false(kdecoder_peek_sample(d, &r, &ip, &tid, &pid));
        r = peek_record(&PerfInfoGuid, 46, 8, pl, 15);
        assert_false(kdecoder_peek_sample(d, &r, &ip, &tid, &pid));
        r = peek_record(&PerfInfoGuid, 46, 8, NULL, 0);
        assert_false(kdecoder_peek_sample(d, &r, &ip, &tid, &pid));
        assert_int_equal(cap.n, 1); /* the thread's event alone */
        free_decoder(d);
}

static void test_pid_fixups(void **state)
{
        (void)state;
        static const uint8_t sample[] = {0x03, 0x30, 0xd0, 0xff, 0xff, 0xff, 0xff, 0xff,
                                         0x2e, 0x16, 0x00, 0x00, 0x01, 0x00, 0x58, 0x00};
        struct kdecoder *d = new_decoder(true);
        struct bb b;
        const struct kevent *e;

        /* Thread DCStart 5678 in 1234 (header: the rundown thread of the system). */
        build_thread_v2(&b, 8, 1234, 5678);

        struct rec_opts o = {&ThreadGuid, 3, 3, 8, 1, 8, 4, 0, NULL, 0};

        assert_int_equal(feed_opts(d, &o, b.b, b.n), 0);
        assert_int_equal(cap.ev[0].pid, 1234);
        assert_int_equal(cap.ev[0].tid, 5678);

        /* SampledProfile of tid 5678 (0x162e): pid from the table. */
        assert_int_equal(feed(d, &PerfInfoGuid, 46, 2, 8, sample, sizeof(sample)), 0);
        assert_int_equal(cap.ev[1].tid, 5678);
        assert_int_equal(cap.ev[1].pid, 1234);

        /* CSwitch to 5678 from 999 (unknown). */
        b.n = 0;
        bb_u32(&b, 5678);
        bb_u32(&b, 999);
        bb_zero(&b, 16);
        assert_int_equal(feed_bb(d, &ThreadGuid, 36, 4, 8, &b), 0);
        e = &cap.ev[2];
        assert_int_equal(e->tid, 5678);
        assert_int_equal(e->pid, 1234);
        assert_int_equal(e->cswitch.new_pid, 1234);
        assert_int_equal(e->cswitch.old_pid, NONE);

        /* Thread Start of 999 in 77: now the old thread is known too. */
        struct bb t;

        build_thread_v2(&t, 8, 77, 999);
        o.opcode = 1;
        assert_int_equal(feed_opts(d, &o, t.b, t.n), 0);
        assert_int_equal(cap.ev[3].pid, 77);
        assert_int_equal(cap.ev[3].tid, 999);
        assert_int_equal(feed_bb(d, &ThreadGuid, 36, 4, 8, &b), 0);
        assert_int_equal(cap.ev[4].cswitch.old_pid, 77);

        /* ReadyThread: 999 readies 5678. */
        b.n = 0;
        bb_u32(&b, 5678);
        bb_u8(&b, 2);
        bb_u8(&b, 0xFF);
        bb_u8(&b, 0x8);
        bb_u8(&b, 0);
        o = (struct rec_opts){&ThreadGuid, 50, 2, 8, 2, 999, 77, 0, NULL, 0};
        assert_int_equal(feed_opts(d, &o, b.b, b.n), 0);
        e = &cap.ev[5];
        assert_int_equal(e->type, KEV_READY_THREAD);
        assert_string_equal(e->name, "Thread/ReadyThread");
        assert_int_equal(e->ready_thread.tid, 5678);
        assert_int_equal(e->tid, 5678);
        assert_int_equal(e->pid, 1234);
        assert_int_equal(e->ready_thread.readying_tid, 999);
        assert_int_equal(e->ready_thread.readying_pid, 77);
        assert_int_equal(e->ready_thread.adjust_reason, 2);
        assert_int_equal(e->ready_thread.adjust_increment, -1);
        assert_int_equal(e->ready_thread.flags, 8);

        /* Thread 5678 restarted in another process: the last mapping wins. */
        build_thread_v2(&t, 8, 4321, 5678);
        o = (struct rec_opts){&ThreadGuid, 1, 3, 8, 3, 8, 4, 0, NULL, 0};
        assert_int_equal(feed_opts(d, &o, t.b, t.n), 0);
        assert_int_equal(feed(d, &PerfInfoGuid, 46, 2, 8, sample, sizeof(sample)), 0);
        assert_int_equal(cap.ev[7].pid, 4321);

        /* Many threads: the table grows and keeps them all. */
        for (uint32_t tid = 10000; tid < 14000; tid++) {
                build_thread_v2(&t, 8, tid / 10, tid);
                assert_int_equal(feed_bb(d, &ThreadGuid, 3, 3, 8, &t), 0);
                cap_reset();
        }
        for (uint32_t tid = 10000; tid < 14000; tid += 333) {
                b.n = 0;
                bb_u64(&b, 0x1000);
                bb_u32(&b, tid);
                bb_u32(&b, 0x10001);
                assert_int_equal(feed_bb(d, &PerfInfoGuid, 46, 2, 8, &b), 0);
                assert_int_equal(cap.ev[0].pid, tid / 10);
                cap_reset();
        }
        /* A stack names the process of a thread no Thread event named yet (a live session's
           CPU buffer before the rundown's): that thread's later samples have it too. */
        b.n = 0;
        bb_u64(&b, 0x2000);
        bb_u32(&b, 2000);
        bb_u32(&b, 20001);
        bb_u64(&b, 0x401000);
        assert_int_equal(feed_bb(d, &StackWalkGuid, 32, 2, 8, &b), 0);
        assert_int_equal(cap.ev[0].pid, 2000);
        b.n = 0;
        bb_u64(&b, 0x401000);
        bb_u32(&b, 20001);
        bb_u32(&b, 0x10001);
        assert_int_equal(feed_bb(d, &PerfInfoGuid, 46, 2, 8, &b), 0);
        assert_int_equal(cap.ev[1].pid, 2000);
        /* a thread the table knows keeps its Thread event's process */
        b.n = 0;
        bb_u64(&b, 0x2000);
        bb_u32(&b, 999);
        bb_u32(&b, 10000);
        assert_int_equal(feed_bb(d, &StackWalkGuid, 32, 2, 8, &b), 0);
        b.n = 0;
        bb_u64(&b, 0x1000);
        bb_u32(&b, 10000);
        bb_u32(&b, 0x10001);
        assert_int_equal(feed_bb(d, &PerfInfoGuid, 46, 2, 8, &b), 0);
        assert_int_equal(cap.ev[3].pid, 1000);
        cap_reset();
        /* The idle thread (tid 0) belongs to process 0. */
        b.n = 0;
        bb_u32(&b, 0);
        bb_u32(&b, 5678);
        bb_zero(&b, 16);
        assert_int_equal(feed_bb(d, &ThreadGuid, 36, 4, 8, &b), 0);
        assert_int_equal(cap.ev[0].pid, 0);
        assert_int_equal(cap.ev[0].cswitch.old_pid, 4321);
        free_decoder(d);
}

/* ---- .NET method and module events ---- */

static const GUID clr_runtime = {
        0xe13c0d23, 0xccbc, 0x4e12, {0x93, 0x1b, 0xd9, 0xcc, 0x2e, 0xee, 0x27, 0xe4}};
static const GUID clr_rundown = {
        0xa669021c, 0xc450, 0x4609, {0xa0, 0x35, 0x5a, 0xf5, 0x9a, 0xf4, 0xdf, 0x18}};

/* A manifest event (no classic header): told apart by its Id. */
static int feed_manifest(struct kdecoder *d, const GUID *g, uint16_t id, uint8_t opcode,
                         uint8_t version, uint32_t pid, const struct bb *b)
{
        EVENT_RECORD r;
        memset(&r, 0, sizeof(r));
        r.EventHeader.Size = (USHORT)(sizeof(EVENT_HEADER) + b->n);
        r.EventHeader.Flags = EVENT_HEADER_FLAG_64_BIT_HEADER;
        r.EventHeader.ProcessId = pid;
        r.EventHeader.ThreadId = pid + 4;
        r.EventHeader.ProviderId = *g;
        r.EventHeader.EventDescriptor.Id = id;
        r.EventHeader.EventDescriptor.Opcode = opcode;
        r.EventHeader.EventDescriptor.Version = version;
        r.UserData = (void *)b->b;
        r.UserDataLength = (USHORT)b->n;
        return kdecoder_decode(d, &r, capture, NULL);
}

static void build_clr_method(struct bb *b, uint64_t start, uint32_t size, const char *ns,
                             const char *name, const char *sig, bool has_rejit)
{
        b->n = 0;
        bb_u64(b, 0x7f95eb0a230ull); /* MethodID */
        bb_u64(b, 0x7f95e933020ull); /* ModuleID */
        bb_u64(b, start);
        bb_u32(b, size);
        bb_u32(b, 0x060006d9); /* MethodToken */
        bb_u32(b, 0x8);        /* MethodFlags */
        bb_utf16(b, ns);
        bb_utf16(b, name);
        bb_utf16(b, sig);
        bb_u16(b, 9); /* ClrInstanceID */
        if (has_rejit)
                bb_u64(b, 0);
}

static void test_clr_events(void **state)
{
        (void)state;
        struct kdecoder *d = new_decoder(true);
        struct bb b;

        /* MethodLoadVerbose_V1: Id 143, opcode 37 */
        build_clr_method(&b, 0x7f95eb10090ull, 0x279, "System.AppDomain", "SetupDomain",
                         "instance void  (bool,class System.String)", false);
        assert_int_equal(feed_manifest(d, &clr_runtime, 143, 37, 1, 3676, &b), 0);
        const struct kevent *e = &cap.ev[0];
        assert_int_equal(e->type, KEV_CLR_METHOD);
        assert_string_equal(e->name, "DotNETRuntime/MethodLoadVerbose");
        assert_int_equal(e->clr_method.phase, KEV_PHASE_START);
        assert_int_equal(e->clr_method.pid, 3676);
        assert_int_equal(e->pid, 3676);
        assert_int_equal(e->clr_method.method_id, 0x7f95eb0a230ull);
        assert_int_equal(e->clr_method.module_id, 0x7f95e933020ull);
        assert_int_equal(e->clr_method.start, 0x7f95eb10090ull);
        assert_int_equal(e->clr_method.size, 0x279);
        assert_int_equal(e->clr_method.token, 0x060006d9);
        assert_int_equal(e->clr_method.flags, 8);
        struct kevent_clr_names n = kevent_clr_method_names(e);
        assert_string_equal(n.name_space, "System.AppDomain");
        assert_string_equal(n.name, "SetupDomain");
        assert_string_equal(n.signature, "instance void  (bool,class System.String)");

        /* the rundown's MethodDCEndVerbose_V2 (Id 144, opcode 40), with a ReJITID */
        build_clr_method(&b, 0x1000, 0x10, "T", "M", "void  ()", true);
        assert_int_equal(feed_manifest(d, &clr_rundown, 144, 40, 2, 3988, &b), 0);
        assert_int_equal(cap.ev[1].type, KEV_CLR_METHOD);
        assert_int_equal(cap.ev[1].clr_method.phase, KEV_PHASE_DC_END);
        assert_string_equal(cap.ev[1].name, "DotNETRuntimeRundown/MethodDCEndVerbose");
        assert_string_equal(kevent_clr_method_names(&cap.ev[1]).name, "M");
        /* the rundown's Id 143 is the start rundown, the runtime's 144 an unload */
        assert_int_equal(feed_manifest(d, &clr_rundown, 143, 39, 2, 3988, &b), 0);
        assert_int_equal(cap.ev[2].clr_method.phase, KEV_PHASE_DC_START);
        assert_int_equal(feed_manifest(d, &clr_runtime, 144, 38, 1, 3988, &b), 0);
        assert_int_equal(cap.ev[3].clr_method.phase, KEV_PHASE_END);

        /* ModuleLoad_V2 (Id 152) and the rundown's ModuleDCEnd_V2 (Id 154) */
        b.n = 0;
        bb_u64(&b, 0x7f95e933020ull);
        bb_u64(&b, 0x784dc0);
        bb_u32(&b, 9);
        bb_u32(&b, 0);
        bb_utf16(&b, "C:\\Windows\\assembly\\mscorlib.dll");
        bb_utf16(&b, "");
        bb_u16(&b, 9);
        bb_zero(&b, 20);
        assert_int_equal(feed_manifest(d, &clr_runtime, 152, 33, 2, 3676, &b), 0);
        e = &cap.ev[4];
        assert_int_equal(e->type, KEV_CLR_MODULE);
        assert_string_equal(e->name, "DotNETRuntime/ModuleLoad");
        assert_int_equal(e->clr_module.phase, KEV_PHASE_START);
        assert_int_equal(e->clr_module.pid, 3676);
        assert_int_equal(e->clr_module.module_id, 0x7f95e933020ull);
        assert_int_equal(e->clr_module.assembly_id, 0x784dc0);
        assert_int_equal(e->clr_module.flags, 9);
        assert_string_equal(e->clr_module.il_path, "C:\\Windows\\assembly\\mscorlib.dll");
        assert_string_equal(e->clr_module.native_path, "");
        assert_int_equal(feed_manifest(d, &clr_rundown, 154, 36, 2, 3676, &b), 0);
        assert_int_equal(cap.ev[5].clr_module.phase, KEV_PHASE_DC_END);

        /* too short for the fixed fields: the common fields only */
        b.n = 0;
        bb_u64(&b, 1);
        assert_int_equal(feed_manifest(d, &clr_runtime, 143, 37, 1, 1, &b), -EBADMSG);
        assert_int_equal(cap.ev[6].type, KEV_OTHER);
        assert_int_equal(cap.ev[6].pid, 1);
        /* an Id of the provider no template describes: no layout, not an error */
        assert_int_equal(feed_manifest(d, &clr_runtime, 999, 1, 1, 1, &b), 0);
        assert_int_equal(cap.ev[7].type, KEV_OTHER);
        /* a classic event of that GUID is not one of these */
        build_clr_method(&b, 0x1000, 0x10, "T", "M", "void  ()", false);
        assert_int_equal(feed(d, &clr_runtime, 37, 1, 8, b.b, b.n), 0);
        assert_int_equal(cap.ev[8].type, KEV_OTHER);
        free_decoder(d);
}

/* What names_sink saw: whether the names were left to be asked for, and what two asks gave. */
static struct {
        bool was_lazy;
        struct kevent_clr_names first, again;
        struct kevent ev; /* the event, kept past the sink */
        bool does_ask;
} names_seen;

static void names_sink(void *ctx, const struct kevent *ev)
{
        (void)ctx;
        if (ev->type != KEV_CLR_METHOD)
                return;
        names_seen.was_lazy = ev->clr_method.lazy != NULL && ev->clr_method.name == NULL;
        if (names_seen.does_ask) {
                names_seen.first = kevent_clr_method_names(ev);
                names_seen.again = kevent_clr_method_names(ev);
        }
        names_seen.ev = *ev;
}

/* A CLR method's names are made when the sink asks for them (a consumer that reads none, such
   as a count of events, does not pay for their UTF-16), the same on a second ask; asked for
   after the sink, they are empty, not the arena's next record's. */
static void test_clr_method_names_on_demand(void **state)
{
        (void)state;
        struct kdecoder *d = new_decoder(true);
        struct bb b;
        EVENT_RECORD r;

        build_clr_method(&b, 0x1000, 0x10, "System.Text", "Append", "instance void  (int32)",
                         false);
        memset(&r, 0, sizeof(r));
        r.EventHeader.Size = (USHORT)(sizeof(EVENT_HEADER) + b.n);
        r.EventHeader.Flags = EVENT_HEADER_FLAG_64_BIT_HEADER;
        r.EventHeader.ProcessId = 40;
        r.EventHeader.ProviderId = clr_runtime;
        r.EventHeader.EventDescriptor.Id = 143;
        r.EventHeader.EventDescriptor.Opcode = 37;
        r.EventHeader.EventDescriptor.Version = 1;
        r.UserData = (void *)b.b;
        r.UserDataLength = (USHORT)b.n;

        memset(&names_seen, 0, sizeof(names_seen));
        names_seen.does_ask = true;
        assert_int_equal(kdecoder_decode(d, &r, names_sink, NULL), 0);
        assert_true(names_seen.was_lazy);
        assert_string_equal(names_seen.first.name_space, "System.Text");
        assert_string_equal(names_seen.first.name, "Append");
        assert_string_equal(names_seen.first.signature, "instance void  (int32)");
        assert_ptr_equal(names_seen.again.name, names_seen.first.name);
        assert_ptr_equal(names_seen.again.signature, names_seen.first.signature);
        struct kevent_clr_names after = kevent_clr_method_names(&names_seen.ev);
        assert_string_equal(after.name_space, "");
        assert_string_equal(after.name, "");
        assert_string_equal(after.signature, "");

        /* not asked for during the sink: nothing made, and nothing after it either */
        names_seen.does_ask = false;
        assert_int_equal(kdecoder_decode(d, &r, names_sink, NULL), 0);
        assert_true(names_seen.was_lazy);
        after = kevent_clr_method_names(&names_seen.ev);
        assert_string_equal(after.name, "");
        free_decoder(d);
}

/* A manifest event of a provider the trace gives no metadata for (and the decoder has no
   templates of) is named by its provider and Id, never by its opcode alone: PowerShell's events
   7937, 7938, 7939 and 7942 all have opcode 20 (krabsetw_powershell.etl), and were counted as
   one type before its templates came (a provider of the same events under another GUID here). */
static const char *last_name;

static void name_sink(void *ctx, const struct kevent *ev)
{
        (void)ctx;
        last_name = ev->name;
}

static void test_unnamed_manifest_events(void **state)
{
        (void)state;
        static const GUID ps = {
                0xa0c1853b, 0x5c40, 0x4b15, {0x87, 0x66, 0x3c, 0xf1, 0xc5, 0x8f, 0x98, 0x5b}};
        struct kdecoder *d = new_decoder(true);
        uint8_t payload[8] = {0};
        EVENT_RECORD r;
        memset(&r, 0, sizeof(r));
        r.EventHeader.Size = (USHORT)(sizeof(EVENT_HEADER) + sizeof(payload));
        r.EventHeader.Flags = EVENT_HEADER_FLAG_64_BIT_HEADER;
        r.EventHeader.ProviderId = ps;
        r.EventHeader.EventDescriptor.Opcode = 20;
        r.EventHeader.EventDescriptor.Version = 1;
        r.UserData = payload;
        r.UserDataLength = sizeof(payload);

        r.EventHeader.EventDescriptor.Id = 7937;
        assert_int_equal(kdecoder_decode(d, &r, name_sink, NULL), 0);
        const char *first = last_name;
        assert_non_null(first);
        assert_string_equal(first, "{a0c1853b-5c40-4b15-8766-3cf1c58f985b}/EventID(7937)");
        r.EventHeader.EventDescriptor.Id = 7939;
        assert_int_equal(kdecoder_decode(d, &r, name_sink, NULL), 0);
        assert_string_equal(last_name, "{a0c1853b-5c40-4b15-8766-3cf1c58f985b}/EventID(7939)");
        /* the same pointer for every event of a type (the tables compare it first) */
        r.EventHeader.EventDescriptor.Id = 7937;
        assert_int_equal(kdecoder_decode(d, &r, name_sink, NULL), 0);
        assert_ptr_equal(last_name, first);
        /* many types: the table grows, every name stays */
        for (uint16_t id = 1; id <= 300; id++) {
                r.EventHeader.EventDescriptor.Id = id;
                assert_int_equal(kdecoder_decode(d, &r, name_sink, NULL), 0);
        }
        r.EventHeader.EventDescriptor.Id = 7937;
        assert_int_equal(kdecoder_decode(d, &r, name_sink, NULL), 0);
        assert_ptr_equal(last_name, first);
        /* a classic event (no Id) of that GUID is not named by an Id */
        r.EventHeader.Flags = EVENT_HEADER_FLAG_CLASSIC_HEADER | EVENT_HEADER_FLAG_64_BIT_HEADER;
        assert_int_equal(kdecoder_decode(d, &r, name_sink, NULL), 0);
        assert_true(!last_name || !strstr(last_name, "EventID"));
        free_decoder(d);
}

/* ---- the trace header and the session clock ---- */

/* A TRACE_LOGFILE_HEADER in file layout (x64 0x118, x86 0x110) with the two names. */
static void build_header(struct bb *b, unsigned ps, int64_t perf_freq, int64_t start_time,
                         uint32_t clock, uint32_t mhz)
{
        b->n = 0;
        bb_u32(b, 65536);      /* BufferSize */
        bb_u32(b, 0x0501000a); /* 10.0, layout 1.5 */
        bb_u32(b, 19041);
        bb_u32(b, 6);
        bb_u64(b, start_time + 1000000); /* EndTime */
        bb_u32(b, 156250);
        bb_u32(b, 100);
        bb_u32(b, 1);
        bb_u32(b, 49);
        bb_u32(b, 1);
        bb_u32(b, ps);
        bb_u32(b, 3);
        bb_u32(b, mhz);
        bb_ptr(b, 10, ps); /* LoggerName: a timer source on Win7+ */
        bb_ptr(b, 7, ps);
        bb_u32(b, (uint32_t)-60); /* TimeZone.Bias */
        bb_utf16(b, "W. Europe Standard Time");
        bb_zero(b, 64 - 2 * 24);
        bb_zero(b, 172 - 4 - 64);
        bb_zero(b, 4); /* padding */
        bb_u64(b, (uint64_t)start_time - 5000000);
        bb_u64(b, (uint64_t)perf_freq);
        bb_u64(b, (uint64_t)start_time);
        bb_u32(b, clock);
        bb_u32(b, 2);
        assert_int_equal(b->n, ps == 8 ? 0x118 : 0x110);
        bb_utf16(b, "NT Kernel Logger");
        bb_utf16(b, "C:\\trace.etl");
}

static void feed_header(struct kdecoder *d, unsigned ps, uint64_t ts0, int64_t perf_freq,
                        int64_t start_time, uint32_t clock, uint32_t mhz)
{
        struct bb b;
        struct rec_opts o = {&EventTraceGuid, 0, 2, ps, ts0, 0x1f80, 0x17e0, 0, NULL, 0};

        build_header(&b, ps, perf_freq, start_time, clock, mhz);
        assert_int_equal(feed_opts(d, &o, b.b, b.n), 0);
}

static int64_t time_of(struct kdecoder *d, uint64_t ts)
{
        static const uint8_t sample[16] = {0};
        struct rec_opts o = {&PerfInfoGuid, 46, 2, 8, ts, NONE, NONE, 0, NULL, 0};

        cap_reset();
        assert_int_equal(feed_opts(d, &o, sample, sizeof(sample)), 0);
        return cap.ev[0].time_ns;
}

static void test_trace_header(void **state)
{
        (void)state;
        static const int64_t start = 132000000000000000;

        for (unsigned ps = 4; ps <= 8; ps += 4) {
                struct kdecoder *d = new_decoder(true);
                const struct kevent *e;

                feed_header(d, ps, 110988826450ull, 10000000, start, 1, 2400);
                e = &cap.ev[0];
                assert_int_equal(e->type, KEV_TRACE_HEADER);
                assert_string_equal(e->name, "EventTrace/Header");
                assert_int_equal(e->pid, 0x17e0);
                assert_int_equal(e->time_ns, 0);

                const TRACE_LOGFILE_HEADER *h = e->trace_header.header;

                assert_int_equal(h->BufferSize, 65536);
                assert_int_equal(h->VersionDetail.MajorVersion, 10);
                assert_int_equal(h->VersionDetail.SubMinorVersion, 5);
                assert_int_equal(h->ProviderVersion, 19041);
                assert_int_equal(h->NumberOfProcessors, 6);
                assert_int_equal(h->EndTime.QuadPart, start + 1000000);
                assert_int_equal(h->TimerResolution, 156250);
                assert_int_equal(h->BuffersWritten, 49);
                assert_int_equal(h->PointerSize, ps);
                assert_int_equal(h->CpuSpeedInMHz, 2400);
                assert_null(h->LoggerName);
                assert_null(h->LogFileName);
                assert_int_equal(h->TimeZone.Bias, -60);
                assert_int_equal(h->TimeZone.StandardName[0], 'W');
                assert_int_equal(h->BootTime.QuadPart, start - 5000000);
                assert_int_equal(h->PerfFreq.QuadPart, 10000000);
                assert_int_equal(h->StartTime.QuadPart, start);
                assert_int_equal(h->ReservedFlags, 1);
                assert_int_equal(h->BuffersLost, 2);
                assert_string_equal(e->trace_header.logger_name, "NT Kernel Logger");
                assert_string_equal(e->trace_header.log_file_name, "C:\\trace.etl");
                free_decoder(d);
        }
}

static void test_group_mask(void **state)
{
        (void)state;
        struct kdecoder *d = new_decoder(true);
        struct bb b = {.n = 0};

        bb_u32(&b, 0x0000000f);
        bb_u32(&b, 0x00000406);
        bb_u32(&b, 0x00010000);
        bb_zero(&b, 20);
        bb_u32(&b, 85);
        assert_int_equal(feed_bb(d, &EventTraceGuid, 5, 2, 8, &b), 0);
        assert_int_equal(cap.ev[0].type, KEV_GROUP_MASK);
        assert_string_equal(cap.ev[0].name, "EventTrace/Extension");
        assert_int_equal(cap.ev[0].group_mask.masks[0], 0xf);
        assert_int_equal(cap.ev[0].group_mask.masks[1], 0x406);
        assert_int_equal(cap.ev[0].group_mask.masks[2], 0x10000);
        assert_int_equal(cap.ev[0].group_mask.masks[7], 0);
        assert_int_equal(cap.ev[0].group_mask.kernel_version, 85);
        assert_false(cap.ev[0].group_mask.is_previous);
        assert_int_equal(feed_bb(d, &EventTraceGuid, 32, 2, 8, &b), 0);
        assert_string_equal(cap.ev[1].name, "EventTrace/EndExtension");
        assert_true(cap.ev[1].group_mask.is_previous);
        free_decoder(d);
}

static void test_time_raw(void **state)
{
        (void)state;
        const uint64_t ts0 = 110988826450ull;
        struct kdecoder *d = new_decoder(true);

        assert_int_equal(time_of(d, ts0 + 12345), 0); /* before the header */
        feed_header(d, 8, ts0, 10000000, 132000000000000000, 1, 0);
        assert_int_equal(time_of(d, ts0), 0);
        assert_int_equal(time_of(d, ts0 + 10000000), 1000000000);
        assert_int_equal(time_of(d, ts0 + 57651354), 5765135400);
        assert_int_equal(time_of(d, ts0 - 100), -10000);

        /* A second header does not move the session clock. */
        feed_header(d, 8, ts0 + 500, 3, 1, 1, 0);
        assert_int_equal(time_of(d, ts0 + 10000000), 1000000000);

        /* The stack's EventTimeStamp gets its own time. */
        struct bb b = {.n = 0};

        bb_u64(&b, ts0 + 5);
        bb_u32(&b, 1);
        bb_u32(&b, 2);
        cap_reset();
        assert_int_equal(feed_bb(d, &StackWalkGuid, 32, 2, 8, &b), 0);
        assert_int_equal(cap.ev[0].stack.event_time_ns, 500);
        free_decoder(d);

        /* A frequency that does not divide 10^9, and huge spans: exact, then cut to 2^61 ns (73
           years: a damaged time, whose difference with another must not overflow). */
        d = new_decoder(true);
        feed_header(d, 8, 1000, 3000000, 0, 1, 0);
        assert_int_equal(time_of(d, 1000 + 3000000), 1000000000);
        assert_int_equal(time_of(d, 1001), 333);
        assert_int_equal(time_of(d, 1000 + 3000000ull * 86400 * 365), 1000000000ll * 86400 * 365);
        assert_int_equal(time_of(d, 1000 + (1ull << 62)), KEVENT_TIME_NS_MAX);
        assert_int_equal(time_of(d, 1000 - (1ull << 62)), -KEVENT_TIME_NS_MAX);
        assert_int_equal(time_of(d, 1000 + (1ull << 63)), -KEVENT_TIME_NS_MAX);
        assert_int_equal(time_of(d, 999), -333);
        free_decoder(d);

        /* PerfFreq 0 counts as 10 MHz. */
        d = new_decoder(true);
        feed_header(d, 4, 50, 0, 0, 1, 0);
        assert_int_equal(time_of(d, 60), 1000);
        free_decoder(d);

        /* Clock 2 (system time): 100 ns units. */
        d = new_decoder(true);
        feed_header(d, 8, 50, 10000000, 0, 2, 0);
        assert_int_equal(time_of(d, 57), 700);
        free_decoder(d);

        /* Clock 3 (CPU cycles) at 2000 MHz: 2000 cycles are 1 us. */
        d = new_decoder(true);
        feed_header(d, 8, 50, 10000000, 0, 3, 2000);
        assert_int_equal(time_of(d, 2050), 1000);
        free_decoder(d);

        /* A 1 GHz clock (etwtop's live source). */
        d = new_decoder(true);
        feed_header(d, 8, 50, 1000000000, 0, 1, 0);
        assert_int_equal(time_of(d, 1000000050), 1000000000);
        assert_int_equal(time_of(d, UINT64_MAX), -51);
        free_decoder(d);
}

/* The clock multiplies by a fixed-point reciprocal: compare with the exact quotient. */
static void test_time_exact(void **state)
{
        (void)state;
        static const int64_t freqs[] = {
                3,         7,          1000,       3579545,      10000000,       14318180,
                999999937, 1000000000, 2400000000, 3000000007ll, (1ll << 40) + 1};
        uint64_t x = 0x9E3779B97F4A7C15ull;

        for (size_t f = 0; f < sizeof(freqs) / sizeof(freqs[0]); f++) {
                struct kdecoder *d = new_decoder(true);

                feed_header(d, 8, 0, freqs[f], 0, 1, 0);
                /* the edge of the decoder's short path: KEVENT_TIME_NS_MAX / (ns per tick + 1)
                   ticks */
                uint64_t edge =
                        (uint64_t)KEVENT_TIME_NS_MAX / (1000000000u / (uint64_t)freqs[f] + 1);

                for (int i = 0; i < 2000 + 7; i++) {
                        uint64_t mag;

                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        switch (i < 2000 ? i % 4 : 4) {
                        case 0: mag = x % 1000; break;
                        case 1: mag = x % (1ull << 32); break;
                        case 2: mag = (x >> 1) >> (x % 40); break;
                        case 3: mag = x >> 1; break;
                        default: mag = edge + (uint64_t)(i - 2003); break;
                        }
                        if (mag > (uint64_t)INT64_MAX) /* past it: a time before the start */
                                mag = (uint64_t)INT64_MAX;

                        __extension__ unsigned __int128 want =
                                (unsigned __int128)mag * 1000000000u / (uint64_t)freqs[f];
                        int64_t w = want > KEVENT_TIME_NS_MAX ? KEVENT_TIME_NS_MAX : (int64_t)want;

                        assert_int_equal(time_of(d, mag), w);
                        assert_int_equal(time_of(d, 0 - mag), -w);
                }
                free_decoder(d);
        }
}

static void test_time_filetime(void **state)
{
        (void)state;
        const int64_t start = 132000000000000000;
        struct kdecoder *d = new_decoder(false);

        assert_int_equal(time_of(d, (uint64_t)start + 5), 0);
        cap_reset();
        feed_header(d, 8, (uint64_t)start + 3, 10000000, start, 1, 0);
        assert_int_equal(cap.ev[0].time_ns, 300);
        assert_int_equal(time_of(d, (uint64_t)start + 12345), 1234500);
        assert_int_equal(time_of(d, (uint64_t)start - 1), -100);
        free_decoder(d);
}

/* ---- names ---- */

static void test_names(void **state)
{
        (void)state;
        const struct {
                const GUID *guid;
                const char *name;
        } provs[] = {
                {&EventTraceGuid, "EventTrace"},
                {&DiskIoGuid, "DiskIo"},
                {&PageFaultGuid, "PageFault"},
                {&ProcessGuid, "Process"},
                {&FileIoGuid, "FileIo"},
                {&ThreadGuid, "Thread"},
                {&TcpIpGuid, "TcpIp"},
                {&JobGuid, "Job"},
                {&UdpIpGuid, "UdpIp"},
                {&RegistryGuid, "Registry"},
                {&DbgPrintGuid, "DbgPrint"},
                {&EventTraceConfigGuid, "SystemConfig"},
                {&LastBranchRecordGuid, "LastBranchRecord"},
                {&WnfGuid, "Wnf"},
                {&PoolGuid, "Pool"},
                {&PerfInfoGuid, "PerfInfo"},
                {&HeapGuid, "Heap"},
                {&ObjectGuid, "Object"},
                {&PowerGuid, "Power"},
                {&ModBoundGuid, "ModBound"},
                {&ImageLoadGuid, "Image"},
                {&DpcGuid, "Dpc"},
                {&CcGuid, "Cc"},
                {&CritSecGuid, "CritSec"},
                {&StackWalkGuid, "StackWalk"},
                {&UmsGuid, "Ums"},
                {&AlpcGuid, "ALPC"},
                {&SplitIoGuid, "SplitIo"},
                {&ThreadPoolGuid, "ThreadPool"},
                {&HypervisorGuid, "Hypervisor"},
                {&HypervisorXGuid, "HypervisorX"},
                {&KernelTraceControlImageIdGuid, "KernelTraceControl"},
                {&SysConfigExGuid, "SysConfigEx"},
                {&WinSatGuid, "WinSat"},
                {&KernelTraceControlMetaDataGuid, "MetaData"},
        };

        for (size_t i = 0; i < sizeof(provs) / sizeof(provs[0]); i++) {
                assert_non_null(kevent_provider_name(provs[i].guid));
                assert_string_equal(kevent_provider_name(provs[i].guid), provs[i].name);
        }
        assert_null(kevent_provider_name(&SystemTraceControlGuid));
        assert_null(kevent_provider_name(NULL));

        GUID near = DiskIoGuid;

        near.Data4[7] ^= 1; /* same Data1, different GUID */
        assert_null(kevent_provider_name(&near));

        struct kdecoder *d = new_decoder(true);
        uint8_t pl[8] = {0};

        /* DiskIo's driver events (34 on) have no layout here: named by their opcode */
        assert_int_equal(feed(d, &DiskIoGuid, 34, 2, 8, pl, sizeof(pl)), 0);
        assert_int_equal(cap.ev[0].type, KEV_OTHER);
        assert_string_equal(cap.ev[0].name, "DiskIo/op34");
        assert_int_equal(feed(d, &near, 12, 2, 8, pl, sizeof(pl)), 0);
        assert_string_equal(cap.ev[1].name, "");
        assert_ptr_not_equal(cap.ev[1].provider, NULL);
        assert_int_equal(feed(d, &EventTraceGuid, 8, 2, 8, NULL, 0), 0);
        assert_string_equal(cap.ev[2].name, "EventTrace/RundownComplete");
        uint8_t partition[48] = {0};
        assert_int_equal(feed(d, &EventTraceGuid, 80, 2, 8, partition, sizeof(partition)), 0);
        assert_string_equal(cap.ev[3].name, "EventTrace/PartitionInfo");
        assert_int_equal(feed(d, &ThreadGuid, 99, 2, 8, pl, sizeof(pl)), 0);
        assert_string_equal(cap.ev[4].name, "Thread/op99");
        assert_int_equal(feed(d, &KernelTraceControlImageIdGuid, 37, 2, 8, NULL, 0), -EBADMSG);
        assert_string_equal(cap.ev[5].name, "KernelTraceControl/DbgID_ILRSDS");
        /* its layout (kevent_mof.c) wants an NtPath string: empty, it is short, still named */
        assert_int_equal(feed(d, &SysConfigExGuid, 35, 0, 8, NULL, 0), -EBADMSG);
        assert_string_equal(cap.ev[6].name, "SysConfigEx/VolumeMapping");

        struct kdecoder_stats st;

        kdecoder_get_stats(d, &st);
        assert_int_equal(st.nr_decoded, 1); /* PartitionInfo */
        assert_int_equal(st.nr_other, 4);
        assert_int_equal(st.nr_short, 2);
        free_decoder(d);

        assert_string_equal(kevent_thread_state_name(5), "Waiting");
        assert_string_equal(kevent_thread_state_name(9), "WaitingForProcessInSwap");
        assert_string_equal(kevent_thread_state_name(200), "Unknown");
        assert_string_equal(kevent_wait_reason_name(0), "Executive");
        assert_string_equal(kevent_wait_reason_name(37), "WrAlertByThreadId");
        assert_string_equal(kevent_wait_reason_name(42), "WrRcu");
        assert_string_equal(kevent_wait_reason_name(43), "Unknown");
        assert_string_equal(kevent_profile_source_name(0), "Timer");
        assert_string_equal(kevent_profile_source_name(6), "BranchInstructions");
        assert_string_equal(kevent_profile_source_name(23), "LoadLinkedIssues");
        assert_null(kevent_profile_source_name(24));
        assert_null(kevent_profile_source_name(29));
}

/* ---- UTF-16 conversion ---- */

static void test_utf16(void **state)
{
        (void)state;
        struct kdecoder *d = new_decoder(true);
        struct bb b = {.n = 0};

        bb_u32(&b, 1);
        bb_u32(&b, 2);
        bb_u16(&b, 'a');
        bb_u16(&b, 0xD83D); /* U+1F600 */
        bb_u16(&b, 0xDE00);
        bb_u16(&b, 0x00E9); /* é */
        bb_u16(&b, 0x20AC); /* € */
        bb_u16(&b, 0xD800); /* lone high surrogate */
        bb_u16(&b, 'b');
        bb_u16(&b, 0xDC00); /* lone low surrogate */
        bb_u16(&b, 0);
        bb_u16(&b, 'z'); /* after the NUL: not part of the name */
        assert_int_equal(feed_bb(d, &ThreadGuid, 72, 2, 8, &b), 0);
        assert_string_equal(cap.ev[0].thread_name.name,
                            "a\xF0\x9F\x98\x80\xC3\xA9\xE2\x82\xAC\xEF\xBF\xBD"
                            "b\xEF\xBF\xBD");

        /* No NUL, an odd trailing byte, and a high surrogate cut by the end. */
        b.n = 8;
        bb_u16(&b, 'x');
        bb_u16(&b, 'y');
        bb_u8(&b, 'q');
        assert_int_equal(feed_bb(d, &ThreadGuid, 72, 2, 8, &b), 0);
        assert_string_equal(cap.ev[1].thread_name.name, "xy");
        b.n = 8;
        bb_u16(&b, 'x');
        bb_u16(&b, 0xD83D);
        assert_int_equal(feed_bb(d, &ThreadGuid, 72, 2, 8, &b), 0);
        assert_string_equal(cap.ev[2].thread_name.name, "x\xEF\xBF\xBD");
        b.n = 8;
        assert_int_equal(feed_bb(d, &ThreadGuid, 72, 2, 8, &b), 0);
        assert_string_equal(cap.ev[3].thread_name.name, "");

        /* The longest payload of 3-byte characters fits the scratch. */
        size_t n = 0xFFFF;
        uint8_t *p = malloc(n);

        assert_non_null(p);
        memset(p, 0, 8);
        for (size_t i = 8; i + 1 < n; i += 2) {
                p[i] = 0xAC;
                p[i + 1] = 0x20;
        }
        p[n - 1] = 0x20;
        assert_int_equal(feed(d, &ThreadGuid, 72, 2, 8, p, n), 0);
        assert_int_equal(strlen(cap.ev[4].thread_name.name), 3 * ((n - 8) / 2));
        free(p);
        free_decoder(d);
}

static void test_stats(void **state)
{
        (void)state;
        static const uint8_t sample[16] = {0};
        struct kdecoder *d = new_decoder(true);
        struct kdecoder_stats st;

        assert_int_equal(feed(d, &PerfInfoGuid, 46, 2, 8, sample, 16), 0);
        assert_int_equal(feed(d, &PerfInfoGuid, 46, 2, 8, sample, 15), -EBADMSG);
        assert_int_equal(feed(d, &DiskIoGuid, 34, 2, 8, sample, 16), 0); /* no layout */
        assert_int_equal(feed(d, &PerfInfoGuid, 47, 2, 8, sample, 16), 0);
        kdecoder_get_stats(d, &st);
        assert_int_equal(st.nr_decoded, 2);
        assert_int_equal(st.nr_short, 1);
        assert_int_equal(st.nr_other, 1);
        assert_int_equal(st.nr_stack_refs_pending, 0);
        kdecoder_get_stats(NULL, &st);
        assert_int_equal(st.nr_decoded, 0);
        free_decoder(d);
}

/* The text of fields as --dump prints it, written by hand (no snprintf): GUIDs, times, lists */
static void text_to(void *ctx, const char *name, enum kevent_text_kind kind, const char *value)
{
        char *out = ctx;
        size_t len = strlen(out);
        (void)kind;
        if (len + strlen(name) + strlen(value) + 3 < 512)
                snprintf(out + len, 512 - len, " %s=%s", name, value);
}

static void test_text_by_hand(void **state)
{
        (void)state;
        char g[64], out[512] = "";
        const GUID guid = {
                0x0123abcd, 0x4567, 0x89ef, {0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10}};
        const GUID zero = {0};

        kevent_text_guid(g, sizeof(g), &guid);
        assert_string_equal(g, "{0123abcd-4567-89ef-fedc-ba9876543210}");
        kevent_text_guid(g, sizeof(g), &zero);
        assert_string_equal(g, "{00000000-0000-0000-0000-000000000000}");
        kevent_text_guid(g, 10, &guid); /* cut to the buffer, as snprintf did */
        assert_string_equal(g, "{0123abcd");

        struct kevent_text scratch = {0};
        struct kevent ev;
        memset(&ev, 0, sizeof(ev));
        ev.type = KEV_STACK;
        uint64_t frames[3] = {0, 0xf, 0xffffffffffffffffull};
        ev.stack.nr_frames = 3;
        ev.stack.frames = frames;
        ev.stack.event_time_ns = 1234000000056789LL;
        kevent_text_fields(&ev, &scratch, text_to, out);
        assert_string_equal(out,
                            " event_time=1234000.000056789 frames=3: 0x0 0xf 0xffffffffffffffff");

        out[0] = 0;
        memset(&ev, 0, sizeof(ev));
        ev.type = KEV_LBR;
        struct kevent_lbr_entry e[2] = {{0x401250, 0x401200}, {0x10, 0x20}};
        ev.lbr.nr_entries = 2;
        ev.lbr.entries = e;
        kevent_text_fields(&ev, &scratch, text_to, out);
        assert_string_equal(out,
                            " event_time=0.000000000 options=0x0 entries=2: 0x401250->0x401200 "
                            "0x10->0x20");

        out[0] = 0;
        memset(&ev, 0, sizeof(ev));
        ev.type = KEV_DBG_ID;
        ev.dbg_id.base = 0x7ff6;
        ev.dbg_id.pid = 4;
        ev.dbg_id.has_pdb = true;
        ev.dbg_id.guid_sig = guid;
        ev.dbg_id.age = 2;
        ev.dbg_id.pdb_file_name = "a.pdb";
        kevent_text_fields(&ev, &scratch, text_to, out);
        assert_string_equal(out, " base=0x7ff6 pid=4 guid={0123abcd-4567-89ef-fedc-ba9876543210} "
                                 "age=2 pdb=a.pdb");
        kevent_text_fini(&scratch);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_sampled_profile_bytes),
                cmocka_unit_test(test_peek_sample),
                cmocka_unit_test(test_pmc_sample_bytes),
                cmocka_unit_test(test_cswitch_v4_with_pmc),
                cmocka_unit_test(test_cswitch_v1_and_wait_mode_bit),
                cmocka_unit_test(test_process_sid_example),
                cmocka_unit_test(test_image_id_and_dbgid_bytes),
                cmocka_unit_test(test_file_version),
                cmocka_unit_test(test_pmc_config),
                cmocka_unit_test(test_profile_interval),
                cmocka_unit_test(test_32bit_payloads),
                cmocka_unit_test(test_thread_versions),
                cmocka_unit_test(test_process_versions),
                cmocka_unit_test(test_process_image_name_encoding),
                cmocka_unit_test(test_image_layouts),
                cmocka_unit_test(test_stack_keys),
                cmocka_unit_test(test_stack_refs_bounded),
                cmocka_unit_test(test_stack_refs_grow_wrapped),
                cmocka_unit_test(test_lbr),
                cmocka_unit_test(test_truncated_payloads),
                cmocka_unit_test(test_null_payload),
                cmocka_unit_test(test_provider_slots),
                cmocka_unit_test(test_provider_slots_clr),
                cmocka_unit_test(test_pid_fixups),
                cmocka_unit_test(test_clr_events),
                cmocka_unit_test(test_clr_method_names_on_demand),
                cmocka_unit_test(test_unnamed_manifest_events),
                cmocka_unit_test(test_trace_header),
                cmocka_unit_test(test_group_mask),
                cmocka_unit_test(test_time_raw),
                cmocka_unit_test(test_time_exact),
                cmocka_unit_test(test_time_filetime),
                cmocka_unit_test(test_names),
                cmocka_unit_test(test_utf16),
                cmocka_unit_test(test_stats),
                cmocka_unit_test(test_text_by_hand),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
