/* SPDX-License-Identifier: MIT */
/* test_perf_convert.c: perf ring records built by hand, converted, written as .etl and read back
   through OpenTraceA/ProcessTrace and the decoder: every field compared. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "file_bytes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "etl_writer.h"
#include "util/utf.h"
#include "etw/evntrace.h"
#include "kdecoder.h"
#include "kevent.h"
#include "perf_convert.h"
#include "sched_switch_format.h"

#define START     1000000000ull
#define NR_CPUS   2
#define SAMPLE_ID (PERF_CONV_SAMPLE_ID_BITS)
#define KERNEL_IP 0xffffffff81001234ull

/* ---- building perf records ---- */

struct rb {
        uint8_t b[32768]; /* a sample with a user stack copy included */
        uint32_t n;
};

static void rb_u64(struct rb *r, uint64_t v)
{
        memcpy(r->b + r->n, &v, 8);
        r->n += 8;
}

static void rb_u32(struct rb *r, uint32_t v)
{
        memcpy(r->b + r->n, &v, 4);
        r->n += 4;
}

static void rb_bytes(struct rb *r, const void *p, uint32_t n)
{
        memcpy(r->b + r->n, p, n);
        r->n += n;
}

static void rb_pad8(struct rb *r)
{
        while (r->n & 7)
                r->b[r->n++] = 0;
}

static void rb_begin(struct rb *r, uint32_t type, uint16_t misc)
{
        memset(r, 0, sizeof(*r));
        struct perf_event_header h = {type, misc, 0};
        rb_bytes(r, &h, sizeof(h));
}

static uint32_t rb_end(struct rb *r)
{
        uint16_t size = (uint16_t)r->n;
        memcpy(r->b + 6, &size, 2);
        return r->n;
}

/* the sample_id trailer of PERF_CONV_SAMPLE_ID_BITS */
static void rb_sample_id(struct rb *r, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu,
                         uint64_t id)
{
        rb_u64(r, (uint64_t)tid << 32 | pid);
        rb_u64(r, time);
        rb_u64(r, cpu);
        rb_u64(r, id);
}

/* the start of a sample of an event with IDENTIFIER|IP|TID|TIME|CPU (+PERIOD when asked) */
static void rb_sample_head(struct rb *r, uint64_t id, uint64_t ip, uint32_t pid, uint32_t tid,
                           uint64_t time, uint32_t cpu, bool has_period)
{
        rb_begin(r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
        rb_u64(r, id);
        rb_u64(r, ip);
        rb_u64(r, (uint64_t)tid << 32 | pid);
        rb_u64(r, time);
        rb_u64(r, cpu);
        if (has_period)
                rb_u64(r, 1000000);
}

/* A tracepoint's sample without a period: its head, raw_size as the raw data's size (a record
   cut short says less than the bytes that follow), the raw bytes, padded, ended. */
static void rb_tp_sample(struct rb *r, uint64_t id, uint64_t ip, uint32_t pid, uint32_t tid,
                         uint64_t time, uint32_t cpu, uint32_t raw_size, const void *raw,
                         uint32_t raw_len)
{
        rb_sample_head(r, id, ip, pid, tid, time, cpu, false);
        rb_u32(r, raw_size);
        rb_bytes(r, raw, raw_len);
        rb_pad8(r);
        rb_end(r);
}

/* ---- the converter under test, writing through a real writer ---- */

#define MAX_EVENTS 16

static struct {
        char dir[64];
        char path[128];
        struct etl_writer *w;
        struct perf_conv *c;
        struct perf_conv_event events[MAX_EVENTS];
        uint64_t ids[MAX_EVENTS];
        uint32_t nr_events;
        uint32_t nr_cmdline_calls;
        uint32_t nr_build_id_calls;
        int emit_rc; /* non-zero: what the emit hook returns, the record not written */
} g;

static int hook_emit(void *ctx, uint32_t cpu, const void *rec, uint32_t size)
{
        (void)ctx;
        if (g.emit_rc)
                return g.emit_rc;
        return etl_writer_append(g.w, cpu, rec, size);
}

static const struct perf_conv_event *hook_event_of(void *ctx, uint64_t id)
{
        (void)ctx;
        for (uint32_t i = 0; i < g.nr_events; i++) {
                if (g.ids[i] == id)
                        return &g.events[i];
        }
        return NULL;
}

static void hook_cmdline_of(void *ctx, uint32_t pid, char *buf, size_t size)
{
        (void)ctx;
        g.nr_cmdline_calls++;
        snprintf(buf, size, "cmd-of-%u --flag", pid);
}

static const uint8_t file_build_id[20] = {0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7,
                                          0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe,
                                          0xff, 0x01, 0x02, 0x03, 0x04, 0x05};

/* Four blocking functions at invented kernel addresses, sorted by start. */
#define SITE_NANOSLEEP 0xffffffff81100000ull
#define SITE_FUTEX     0xffffffff81200000ull
#define SITE_IO        0xffffffff81300000ull
#define SITE_YIELD     0xffffffff81400000ull /* do_sched_yield */
static const struct perf_wait_site test_sites[] = {
        {SITE_NANOSLEEP, SITE_NANOSLEEP + 0x100, 4},
        {SITE_FUTEX, SITE_FUTEX + 0x100, 37},
        {SITE_IO, SITE_IO + 0x100, 9},
        {SITE_YIELD, SITE_YIELD + 0x100, 33},
};
static uint32_t nr_wait_sites_calls;

static uint32_t hook_wait_sites(void *ctx, const struct perf_wait_site **sites)
{
        (void)ctx;
        nr_wait_sites_calls++;
        *sites = test_sites;
        return sizeof(test_sites) / sizeof(test_sites[0]);
}

static uint32_t hook_build_id_of(void *ctx, const char *path, uint8_t *id, uint32_t max)
{
        (void)ctx;
        g.nr_build_id_calls++;
        if (strcmp(path, "/usr/lib/libfile.so") != 0 || max < 20)
                return 0;
        memcpy(id, file_build_id, 20);
        return 20;
}

/* Processes 100..199 belong to uid 1000 + pid; the others are gone (unknown). */
static uint32_t hook_uid_of(void *ctx, uint32_t pid)
{
        (void)ctx;
        return pid >= 100 && pid < 200 ? 1000 + pid : PERF_CONV_NO_UID;
}

static void add_event(uint64_t id, const struct perf_conv_event *ev)
{
        assert_true(g.nr_events < MAX_EVENTS);
        g.ids[g.nr_events] = id;
        g.events[g.nr_events] = *ev;
        if (!g.events[g.nr_events].valid_until)
                g.events[g.nr_events].valid_until = UINT64_MAX;
        g.nr_events++;
}

/* The kernel session's writer, as the tests' files are written. */
static struct etl_writer_config writer_config(void)
{
        return (struct etl_writer_config){
                .buffer_size_bytes = 65536,
                .nr_cpus = NR_CPUS,
                .log_file_mode = EVENT_TRACE_FILE_MODE_SEQUENTIAL,
                .logger_id = 1,
                .logger_name = "NT Kernel Logger",
                .start_timestamp = START,
                .start_filetime = 132386000000000000ll,
                .boot_filetime = 132385000000000000ll,
                .perf_freq = 1000000000ull,
                .clock_type = EVENT_TRACE_CLOCK_PERFCOUNTER,
                .os_major = 10,
                .provider_version = 19041,
        };
}

static int setup(void **state)
{
        (void)state;
        memset(&g, 0, sizeof(g));
        strcpy(g.dir, "/tmp/etwtop-conv-XXXXXX");
        if (!mkdtemp(g.dir))
                return -1;
        snprintf(g.path, sizeof(g.path), "%s/t.etl", g.dir);
        struct etl_writer_config cfg = writer_config();
        if (etl_writer_new(&g.w, &cfg) < 0)
                return -1;
        struct etl_error err;
        if (etl_writer_open_file(g.w, g.path, true, &err) < 0)
                return -1;
        struct perf_conv_ops ops = {hook_emit,        hook_event_of,   hook_cmdline_of,
                                    hook_build_id_of, hook_wait_sites, hook_uid_of};
        if (perf_conv_new(&g.c, &ops, NULL, NR_CPUS) < 0)
                return -1;
        PERFINFO_GROUPMASK m = {
                {EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD | EVENT_TRACE_FLAG_IMAGE_LOAD}};
        perf_conv_set_masks(g.c, &m);
        return 0;
}

static int teardown(void **state)
{
        (void)state;
        perf_conv_free(g.c);
        etl_writer_free(g.w);
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", g.dir);
        return system(cmd) == 0 ? 0 : -1;
}

/* ---- reading back: every decoded event, deep-copied ---- */

#define MAX_CAP 512

struct cap {
        struct kevent ev;
        uint16_t event_id; /* EVENT_HEADER records: the descriptor's Id */
        bool is_own;       /* etwtop's provider */
        uint8_t user[1024];
        uint32_t user_size;
        uint64_t frames[64];
        uint32_t nr_stack_frames; /* KEV_STACK: its frames, those past frames[] too */
        uint64_t last_frame;
        struct kevent_lbr_entry lbr[16];
        uint64_t lbr_info[16];
        char s1[256], s2[256], s3[64];
};

static struct cap caps[MAX_CAP];
static uint32_t nr_caps;
static struct kdecoder *dec;

static void on_decoded(void *ctx, const struct kevent *ev)
{
        const EVENT_RECORD *er = ctx;
        if (nr_caps >= MAX_CAP)
                return;
        struct cap *c = &caps[nr_caps++];
        memset(c, 0, sizeof(*c));
        c->ev = *ev;
        c->is_own = memcmp(&er->EventHeader.ProviderId, &etwtop_provider_guid, sizeof(GUID)) == 0;
        c->event_id = er->EventHeader.EventDescriptor.Id;
        c->user_size = er->UserDataLength < sizeof(c->user) ? er->UserDataLength : 0;
        if (c->user_size)
                memcpy(c->user, er->UserData, c->user_size);
        switch (ev->type) {
        case KEV_STACK:
                c->nr_stack_frames = ev->stack.nr_frames;
                if (ev->stack.nr_frames)
                        c->last_frame = ev->stack.frames[ev->stack.nr_frames - 1];
                c->ev.stack.nr_frames = ev->stack.nr_frames < 64 ? ev->stack.nr_frames : 64;
                memcpy(c->frames, ev->stack.frames, 8 * c->ev.stack.nr_frames);
                c->ev.stack.frames = c->frames;
                break;
        case KEV_LBR:
                c->ev.lbr.nr_entries = ev->lbr.nr_entries < 16 ? ev->lbr.nr_entries : 16;
                memcpy(c->lbr, ev->lbr.entries, sizeof(c->lbr[0]) * c->ev.lbr.nr_entries);
                c->ev.lbr.entries = c->lbr;
                if (ev->lbr.info) {
                        memcpy(c->lbr_info, ev->lbr.info, 8 * c->ev.lbr.nr_entries);
                        c->ev.lbr.info = c->lbr_info;
                }
                break;
        case KEV_PROCESS:
                snprintf(c->s1, sizeof(c->s1), "%s", ev->process.image_name);
                snprintf(c->s2, sizeof(c->s2), "%s", ev->process.command_line);
                c->ev.process.image_name = c->s1;
                c->ev.process.command_line = c->s2;
                snprintf(c->s3, sizeof(c->s3), "%s", ev->process.user_sid);
                c->ev.process.user_sid = c->s3;
                break;
        case KEV_THREAD:
                snprintf(c->s1, sizeof(c->s1), "%s", ev->thread.name);
                c->ev.thread.name = c->s1;
                break;
        case KEV_THREAD_NAME:
                snprintf(c->s1, sizeof(c->s1), "%s", ev->thread_name.name);
                c->ev.thread_name.name = c->s1;
                break;
        case KEV_IMAGE:
                snprintf(c->s1, sizeof(c->s1), "%s", ev->image.file_name);
                c->ev.image.file_name = c->s1;
                break;
        case KEV_PROFILE_INTERVAL:
                snprintf(c->s1, sizeof(c->s1), "%s", ev->profile_interval.source_name);
                c->ev.profile_interval.source_name = c->s1;
                break;
        default: break;
        }
}

static VOID WINAPI on_record(PEVENT_RECORD er)
{
        kdecoder_decode(dec, er, on_decoded, er);
}

/* Closes the writer and decodes the file into caps. */
static void read_back(void)
{
        assert_int_equal(etl_writer_close(g.w, 132386000010000000ll, 0, 0), 0);
        nr_caps = 0;
        dec = kdecoder_new(true);
        assert_non_null(dec);
        EVENT_TRACE_LOGFILEA lf;
        memset(&lf, 0, sizeof(lf));
        lf.LogFileName = g.path;
        lf.ProcessTraceMode = PROCESS_TRACE_MODE_EVENT_RECORD | PROCESS_TRACE_MODE_RAW_TIMESTAMP;
        lf.EventRecordCallback = on_record;
        PROCESSTRACE_HANDLE h = OpenTraceA(&lf);
        assert_int_not_equal(h, INVALID_PROCESSTRACE_HANDLE);
        assert_int_equal(ProcessTrace(&h, 1, NULL, NULL), ERROR_SUCCESS);
        CloseTrace(h);
        kdecoder_free(dec);
        dec = NULL;
}

/* The n-th (0-based) captured event of type t, or NULL. */
static const struct cap *find(enum kevent_type t, uint32_t n)
{
        for (uint32_t i = 0; i < nr_caps; i++) {
                if (caps[i].ev.type == t && n-- == 0)
                        return &caps[i];
        }
        return NULL;
}

static uint32_t count(enum kevent_type t)
{
        uint32_t n = 0;
        for (uint32_t i = 0; i < nr_caps; i++)
                n += caps[i].ev.type == t;
        return n;
}

static const struct cap *find_own(uint16_t id, uint32_t n)
{
        for (uint32_t i = 0; i < nr_caps; i++) {
                if (caps[i].is_own && caps[i].event_id == id && n-- == 0)
                        return &caps[i];
        }
        return NULL;
}

static uint32_t index_of(const struct cap *c)
{
        return (uint32_t)(c - caps);
}

static void convert(const struct rb *r, uint32_t ring_cpu)
{
        assert_int_equal(perf_conv_record(g.c, ring_cpu, r->b, r->n), 0);
}

/* ---- samples ---- */

/* A timer event id whose samples carry their call chains, written as stacks. */
static void add_callchain_event(uint64_t id)
{
        struct perf_conv_event ev = {.kind = PERF_CONV_PROFILE,
                                     .sample_type = SAMPLE_ID | PERF_SAMPLE_IP |
                                                    PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN,
                                     .read_format = PERF_FORMAT_ID | PERF_FORMAT_LOST,
                                     .has_stack = true};
        add_event(id, &ev);
}

static void test_sample_with_callchain(void **state)
{
        (void)state;
        add_callchain_event(11);
        struct rb r;
        uint64_t ts = START + 5000;
        rb_sample_head(&r, 11, KERNEL_IP, 300, 301, ts, 1, true);
        rb_u64(&r, 7);
        rb_u64(&r, (uint64_t)PERF_CONTEXT_KERNEL);
        rb_u64(&r, KERNEL_IP);
        rb_u64(&r, 0xffffffff81000100ull);
        rb_u64(&r, (uint64_t)PERF_CONTEXT_USER);
        rb_u64(&r, 0x401000);
        rb_u64(&r, 0x400800);
        rb_u64(&r, 0x400100);
        rb_end(&r);
        convert(&r, 1);
        /* a precise user-mode sample (PEBS): its chain starts where the interrupt found the
           CPU, a few bytes past its IP; the IP is frame 0 in that frame's place */
        rb_sample_head(&r, 11, 0x402222, 300, 302, ts + 10, 0, true);
        rb_u64(&r, 3);
        rb_u64(&r, (uint64_t)PERF_CONTEXT_USER);
        rb_u64(&r, 0x402000);
        rb_u64(&r, 0x400100);
        rb_end(&r);
        convert(&r, 0);
        read_back();

        assert_int_equal(count(KEV_SAMPLE), 2);
        const struct cap *s = find(KEV_SAMPLE, 0);
        const struct cap *k = find(KEV_STACK, 0);
        if (s->ev.cpu != 1) {
                s = find(KEV_SAMPLE, 1);
                k = find(KEV_STACK, 1);
        }
        assert_int_equal(s->ev.cpu, 1);
        assert_int_equal(s->ev.sample.ip, KERNEL_IP);
        assert_int_equal(s->ev.sample.tid, 301);
        assert_int_equal(s->ev.sample.count, 1);
        assert_int_equal(s->ev.timestamp, ts);
        assert_int_equal(k->ev.cpu, 1);
        assert_int_equal(index_of(k), index_of(s) + 1); /* right after, same CPU */
        assert_int_equal(k->ev.stack.event_timestamp, ts);
        assert_int_equal(k->ev.stack.pid, 300);
        assert_int_equal(k->ev.stack.tid, 301);
        assert_int_equal(k->ev.stack.nr_frames, 5);
        const uint64_t want[] = {KERNEL_IP, 0xffffffff81000100ull, 0x401000, 0x400800, 0x400100};
        assert_memory_equal(k->ev.stack.frames, want, sizeof(want));

        const struct cap *u = find(KEV_STACK, k == find(KEV_STACK, 0) ? 1 : 0);
        assert_int_equal(u->ev.stack.event_timestamp, ts + 10);
        assert_int_equal(u->ev.stack.nr_frames, 2);
        assert_int_equal(u->ev.stack.frames[0], 0x402222);
        assert_int_equal(u->ev.stack.frames[1], 0x400100);
}

/* A sample of event 11 (add_callchain_event) at ip and ts, its call chain chain[0..n), converted.
 */
static void rb_chain_sample(struct rb *r, uint64_t ip, uint64_t ts, const uint64_t *chain,
                            uint32_t n)
{
        rb_sample_head(r, 11, ip, 300, 301, ts, 0, true);
        rb_u64(r, n);
        for (uint32_t i = 0; i < n; i++)
                rb_u64(r, chain[i]);
        rb_end(r);
        convert(r, 0);
}

/* A precise sample's chain (PEBS on a Broadwell Xeon, perf 5.15: ip ...b14f1, its kernel chain
   from ...b14f5) starts a few bytes past its ip, in the same frame: the ip takes that frame's
   place, the stack as deep as perf's. A kernel sample whose chain has no kernel part (entry
   code, exclude_callchain_kernel) keeps the user frame after its ip: another frame, the
   system call's caller. A precise user sample whose chain starts in the kernel (the interrupt
   came once the thread had entered it: 602 of 6,141 samples of a perf 6.8 recording on an
   11th-generation Core) has its user stack only. */
static void test_precise_sample_chain(void **state)
{
        (void)state;
        add_callchain_event(11);
        struct rb r;
        uint64_t ts = START + 5000;
        static const uint64_t pebs[] = {PERF_CONTEXT_KERNEL, 0xffffffff834b14f5ull,
                                        0xffffffff835aad9aull, PERF_CONTEXT_USER,
                                        0x7f32cfb9a08bull};
        static const uint64_t entry[] = {PERF_CONTEXT_USER, 0x7fad8a51bb7bull};
        static const uint64_t skid[] = {PERF_CONTEXT_KERNEL, 0xffffffffb1a00ba0ull,
                                        PERF_CONTEXT_USER, 0x5fb1bb2dbdb0ull, 0x5fb1bb2d0000ull};
        rb_chain_sample(&r, 0xffffffff834b14f1ull, ts, pebs, 5);
        rb_chain_sample(&r, 0xffffffff84000225ull, ts + 10, entry, 2);
        rb_chain_sample(&r, 0x5fb1bb2dbdb0ull, ts + 20, skid, 5);
        read_back();

        assert_int_equal(count(KEV_STACK), 3);
        const struct cap *k = find(KEV_STACK, 0);
        assert_int_equal(k->ev.stack.nr_frames, 3);
        const uint64_t want[] = {0xffffffff834b14f1ull, 0xffffffff835aad9aull, 0x7f32cfb9a08bull};
        assert_memory_equal(k->ev.stack.frames, want, sizeof(want));
        const struct cap *u = find(KEV_STACK, 1);
        assert_int_equal(u->ev.stack.nr_frames, 2);
        assert_int_equal(u->ev.stack.frames[0], 0xffffffff84000225ull);
        assert_int_equal(u->ev.stack.frames[1], 0x7fad8a51bb7bull);
        const struct cap *p = find(KEV_STACK, 2);
        assert_int_equal(p->ev.stack.nr_frames, 2);
        assert_int_equal(p->ev.stack.frames[0], 0x5fb1bb2dbdb0ull);
        assert_int_equal(p->ev.stack.frames[1], 0x5fb1bb2d0000ull);
}

/* A chain longer than a stack's frames may be (a runaway one, 1,100 user frames): its first
   CONV_MAX_FRAMES (1,024) frames, the ip first, the rest dropped; one that just fits keeps all
   of its frames (the count checked only where the chain may not fit). */
static void test_sample_long_callchain(void **state)
{
        (void)state;
        add_callchain_event(11);
        struct rb r;
        uint64_t ts = START + 5000;
        const uint32_t nr_user[2] = {1100, 1024};
        for (uint32_t k = 0; k < 2; k++) {
                /* the chain's first frame is the ip's */
                rb_sample_head(&r, 11, 0x500000, 300, 301, ts + k, 0, true);
                rb_u64(&r, 1 + nr_user[k]);
                rb_u64(&r, (uint64_t)PERF_CONTEXT_USER);
                for (uint32_t i = 0; i < nr_user[k]; i++)
                        rb_u64(&r, 0x500000 + 0x10 * i);
                rb_end(&r);
                convert(&r, 0);
        }
        read_back();
        assert_int_equal(count(KEV_STACK), 2);
        for (uint32_t k = 0; k < 2; k++) {
                const struct cap *st = find(KEV_STACK, k);
                assert_int_equal(st->ev.stack.event_timestamp, ts + k);
                assert_int_equal(st->nr_stack_frames, 1024);
                assert_int_equal(st->frames[0], 0x500000);
                assert_int_equal(st->frames[1], 0x500010);
                assert_int_equal(st->last_frame, 0x500000 + 0x10 * 1023);
        }
}

/* ---- DWARF walks of user stacks (--stackwalk-mode dwarf) ---- */

/* This process's registers and stack at a known place, as PERF_SAMPLE_REGS_USER and
   STACK_USER give a sample's: outer -> middle -> capture, each not inlined. */
static struct {
        ucontext_t uc;
        uint64_t ret_in_middle, ret_in_outer;
        uint8_t stack[8192];
        uint64_t stack_size;
} snap;

/* The end of the mapping that holds addr (the stack's top), from /proc/self/maps. */
static uint64_t mapping_end(uint64_t addr)
{
        FILE *f = fopen("/proc/self/maps", "r");
        assert_non_null(f);
        char line[512];
        uint64_t end = 0;
        while (fgets(line, sizeof(line), f)) {
                unsigned long long lo, hi;
                if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && addr >= lo && addr < hi)
                        end = hi;
        }
        fclose(f);
        return end;
}

/* The stack's bytes as they are, redzones of the sanitizers included (the kernel copies them
   so); volatile reads, so that no memcpy (which ASan checks) is made of it. */
__attribute__((no_sanitize("address"))) static void copy_raw(uint8_t *dst, uint64_t src, size_t n)
{
        const volatile uint8_t *p = (const volatile uint8_t *)(uintptr_t)src;
        for (size_t i = 0; i < n; i++)
                dst[i] = p[i];
}

__attribute__((noinline)) static void capture(void)
{
        snap.ret_in_middle = (uint64_t)(uintptr_t)__builtin_return_address(0);
        getcontext(&snap.uc);
        uint64_t sp = (uint64_t)snap.uc.uc_mcontext.gregs[REG_RSP];
        uint64_t end = mapping_end(sp);
        snap.stack_size = end - sp < sizeof(snap.stack) ? end - sp : sizeof(snap.stack);
        copy_raw(snap.stack, sp, snap.stack_size);
        __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void middle(void)
{
        snap.ret_in_outer = (uint64_t)(uintptr_t)__builtin_return_address(0);
        capture();
        __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void outer(void)
{
        middle();
        __asm__ volatile("" ::: "memory");
}

/* The executable mappings of this process, as the rundown gives them to the converter. */
static void add_own_images(uint32_t pid)
{
        FILE *f = fopen("/proc/self/maps", "r");
        assert_non_null(f);
        char line[512];
        while (fgets(line, sizeof(line), f)) {
                unsigned long long lo, hi, off;
                char perms[8], path[400] = "";
                if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %399s", &lo, &hi, perms, &off, path) <
                            4 ||
                    perms[2] != 'x' || !path[0])
                        continue;
                struct perf_conv_image im = {pid, lo, hi - lo, off, path, NULL, 0, 0};
                assert_int_equal(perf_conv_image(g.c, WMI_LOG_TYPE_IMAGE_DC_START, 0, START, &im),
                                 0);
        }
        fclose(f);
}

/* A user-mode sample of snap: registers of the mask, stack_size bytes of the copy. */
static void rb_snap_sample(struct rb *r, uint64_t id, uint32_t pid, uint64_t ts,
                           uint64_t stack_size)
{
        const greg_t *gr = snap.uc.uc_mcontext.gregs;
        uint64_t ip = (uint64_t)gr[REG_RIP];
        rb_sample_head(r, id, ip, pid, pid, ts, 0, true);
        r->b[6] = 0;
        memcpy(r->b + 4, &(uint16_t){PERF_RECORD_MISC_USER}, 2);
        rb_u64(r, 0); /* the callchain: exclude_callchain_user, a user-mode sample */
        rb_u64(r, 2); /* PERF_SAMPLE_REGS_ABI_64 */
        /* PERF_CONV_REGS_USER_MASK: AX BX CX DX SI DI BP SP IP, R8..R15 */
        const int order[] = {REG_RAX, REG_RBX, REG_RCX, REG_RDX, REG_RSI, REG_RDI,
                             REG_RBP, REG_RSP, REG_RIP, REG_R8,  REG_R9,  REG_R10,
                             REG_R11, REG_R12, REG_R13, REG_R14, REG_R15};
        for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
                rb_u64(r, (uint64_t)gr[order[i]]);
        uint64_t copied = (snap.stack_size + 7) & ~7ull;
        rb_u64(r, copied);
        rb_bytes(r, snap.stack, (uint32_t)copied);
        rb_u64(r, stack_size); /* dyn_size */
        rb_end(r);
}

/* A timer sample event with stacks whose user part is walked by walk, as id. */
static void add_walk_event(uint64_t id, enum perf_conv_walk walk)
{
        struct perf_conv_event ev = {.kind = PERF_CONV_PROFILE,
                                     .sample_type = SAMPLE_ID | PERF_SAMPLE_IP |
                                                    PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |
                                                    PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
                                     .read_format = PERF_FORMAT_ID | PERF_FORMAT_LOST,
                                     .has_stack = true,
                                     .walk = (uint8_t)walk,
                                     .regs_user_mask = PERF_CONV_REGS_USER_MASK};
        add_event(id, &ev);
        perf_conv_set_walk(g.c, walk, 8192);
}

static void test_sample_dwarf_walk(void **state)
{
        (void)state;
        outer();
        assert_true(snap.stack_size >= 64);
        uint32_t pid = (uint32_t)getpid();
        add_own_images(pid);
        add_walk_event(12, PERF_CONV_WALK_DWARF);
        struct rb r;
        rb_snap_sample(&r, 12, pid, START + 1000, snap.stack_size);
        convert(&r, 0);
        /* the same with 16 bytes of the copy holding data: capture's frame reaches past it */
        rb_snap_sample(&r, 12, pid, START + 2000, 16);
        convert(&r, 0);
        struct perf_conv_unwind_stats us;
        perf_conv_get_unwind_stats(g.c, &us);
        assert_int_equal(us.nr_walks, 2);
        /* the short copy ends at its end (UNWIND_STOP_STACK_END); the whole one at the thread's
           start, or at the end of its 8 KiB when the stack above is deeper */
        assert_int_equal(us.nr_by_stop[0] + us.nr_by_stop[1], 2);
        assert_true(us.nr_by_stop[1] >= 1);
        assert_int_equal(perf_conv_rundown_end(g.c, 0, START + 3000), 0);
        read_back();

        const struct cap *k = find(KEV_STACK, 0);
        assert_non_null(k);
        assert_true(k->ev.stack.nr_frames >= 4);
        assert_int_equal(k->frames[0], (uint64_t)snap.uc.uc_mcontext.gregs[REG_RIP]);
        assert_int_equal(k->frames[1], snap.ret_in_middle);
        assert_int_equal(k->frames[2], snap.ret_in_outer);
        const struct cap *cut = find(KEV_STACK, 1);
        assert_non_null(cut);
        assert_int_equal(cut->frames[0], k->frames[0]);
        assert_true(cut->ev.stack.nr_frames < k->ev.stack.nr_frames);
        /* the counts, as the file says them last (the stop's) */
        uint32_t nr_stats = count(KEV_UNWIND_STATS);
        assert_true(nr_stats >= 1);
        const struct cap *st = find(KEV_UNWIND_STATS, nr_stats - 1);
        assert_non_null(st);
        assert_int_equal(st->ev.unwind_stats.mode, PERF_CONV_WALK_DWARF);
        assert_int_equal(st->ev.unwind_stats.stack_copy_bytes, 8192);
        assert_int_equal(st->ev.unwind_stats.nr_walks, 2);
        assert_int_equal(st->ev.unwind_stats.nr_by_stop[KEV_UNWIND_STACK_END], us.nr_by_stop[1]);
        assert_true(st->ev.unwind_stats.nr_frames >= k->ev.stack.nr_frames);
}

/* Every image a DWARF walk reads comes through the converter's files hooks (a recording
   supplies its own, as perf.data's reader does): here ones that count the calls and hand the
   live hooks the work, then ones that find nothing (what the walk does then depends on the
   build's frame pointers: not checked). */
static uint32_t nr_image_calls, last_image_pid;
static bool is_finding_nothing;

static struct unwind_module *counting_image_module(void *ctx, struct unwind_cache *cache,
                                                   const char *path, uint32_t pid, uint64_t base,
                                                   uint64_t size, const uint8_t *build_id,
                                                   uint32_t build_id_size)
{
        assert_ptr_equal(ctx, &nr_image_calls);
        nr_image_calls++;
        last_image_pid = pid;
        if (is_finding_nothing)
                return NULL;
        return perf_conv_files_live.image_module(NULL, cache, path, pid, base, size, build_id,
                                                 build_id_size);
}

static const uint8_t *no_vdso(void *ctx, size_t *size)
{
        (void)ctx;
        (void)size;
        return NULL;
}

static void test_files_hooks(void **state)
{
        (void)state;
        static const struct perf_conv_files files = {counting_image_module, no_vdso};
        for (int pass = 0; pass < 2; pass++) {
                is_finding_nothing = pass == 1;
                nr_image_calls = 0;
                if (pass == 1) { /* a fresh converter: its images not tried yet */
                        teardown(NULL);
                        assert_int_equal(setup(NULL), 0);
                }
                perf_conv_set_files(g.c, &files, &nr_image_calls);
                outer();
                uint32_t pid = (uint32_t)getpid();
                add_own_images(pid);
                add_walk_event(12, PERF_CONV_WALK_DWARF);
                struct rb r;
                rb_snap_sample(&r, 12, pid, START + 1000, snap.stack_size);
                convert(&r, 0);
                assert_true(nr_image_calls >= 1);
                assert_int_equal(last_image_pid, pid);
                read_back();
                const struct cap *k = find(KEV_STACK, 0);
                assert_non_null(k);
                if (pass == 0)
                        assert_true(k->ev.stack.nr_frames >= 4);
        }
}

/* AUTO: the kernel's chain is kept where every frame lies in code that keeps frame pointers
   (the fixture's -fno-omit-frame-pointer build), walked with DWARF where one does not (its
   -fomit-frame-pointer build). */
static void test_sample_auto_walk(void **state)
{
        (void)state;
        const uint64_t fp_base = 0x10000000, nofp_base = 0x20000000;
        struct perf_conv_image fp_im = {900, fp_base, 0x100000, 0, UNWIND_FIXTURE_FP, NULL, 0, 0};
        struct perf_conv_image nofp_im = {900, nofp_base, 0x100000, 0, UNWIND_FIXTURE, NULL, 0, 0};
        assert_int_equal(perf_conv_image(g.c, WMI_LOG_TYPE_IMAGE_DC_START, 0, START, &fp_im), 0);
        assert_int_equal(perf_conv_image(g.c, WMI_LOG_TYPE_IMAGE_DC_START, 0, START, &nofp_im), 0);
        add_walk_event(13, PERF_CONV_WALK_AUTO);
        /* the fixture's text starts at file vaddr 0x1000 in both builds (-pie, one page of
           headers): any address a page in is code */
        uint64_t ip = fp_base + 0x1100, ra1 = fp_base + 0x1200, ra2 = fp_base + 0x1300;
        for (int k = 0; k < 2; k++) {
                struct rb r;
                rb_sample_head(&r, 13, ip, 900, 900, START + 1000 + (uint64_t)k * 1000, 0, true);
                memcpy(r.b + 4, &(uint16_t){PERF_RECORD_MISC_USER}, 2);
                rb_u64(&r, 4);
                rb_u64(&r, (uint64_t)PERF_CONTEXT_USER);
                rb_u64(&r, ip);
                rb_u64(&r, ra1);
                rb_u64(&r, k == 0 ? ra2 : nofp_base + 0x1300); /* the second: a frame without */
                rb_u64(&r, 2);
                for (uint32_t i = 0; i < 17; i++) /* AX..DI, BP, SP, IP, R8..R15 */
                        rb_u64(&r, i == 7 ? 0x7ff000000000ull : i == 8 ? ip : 0);
                rb_u64(&r, 16);
                rb_u64(&r, 0);
                rb_u64(&r, 0);
                rb_u64(&r, 16);
                rb_end(&r);
                convert(&r, 0);
        }
        struct perf_conv_unwind_stats us;
        perf_conv_get_unwind_stats(g.c, &us);
        assert_int_equal(us.nr_fp_chains, 1); /* the first: the kernel's chain, whole */
        assert_int_equal(us.nr_walks, 1);     /* the second: walked */
        read_back();
        const struct cap *k = find(KEV_STACK, 0);
        assert_non_null(k);
        assert_int_equal(k->ev.stack.nr_frames, 3);
        const uint64_t want[] = {ip, ra1, ra2};
        assert_memory_equal(k->frames, want, sizeof(want));
}

static void test_out_of_order_is_clamped(void **state)
{
        (void)state;
        struct perf_conv_event ev = {.kind = PERF_CONV_PROFILE,
                                     .sample_type =
                                             SAMPLE_ID | PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN,
                                     .has_stack = true};
        add_event(12, &ev);
        struct rb r;
        rb_sample_head(&r, 12, 0x401000, 5, 5, START + 900, 0, false);
        rb_u64(&r, 1);
        rb_u64(&r, 0x401000);
        rb_end(&r);
        convert(&r, 0);
        rb_sample_head(&r, 12, 0x401004, 5, 5, START + 800, 0, false);
        rb_u64(&r, 1);
        rb_u64(&r, 0x401004);
        rb_end(&r);
        convert(&r, 0);
        struct perf_conv_stats st;
        perf_conv_get_stats(g.c, &st);
        assert_int_equal(st.nr_clamped, 1);
        read_back();
        const struct cap *s = find(KEV_SAMPLE, 1);
        const struct cap *k = find(KEV_STACK, 1);
        assert_int_equal(s->ev.timestamp, START + 900);
        assert_int_equal(k->ev.stack.event_timestamp, START + 900); /* still equal */
}

/* perf_conv_record_time reads TIME and CPU at their fixed places, for every sample layout the
   converter may meet, and from the sample_id trailer of other records. */
/* A perf event's own name for its profile source (the CollectionStart that names it), as long
   as perf's get (a PMU's event string with its terms: 62 bytes and more), read back whole. */
static void test_profile_interval_long_name(void **state)
{
        (void)state;
        static const char name[] = "cpu/event=0xcd,umask=0x1,ldlat=64,"
                                   "name=MEM_TRANS_RETIRED.LOAD_LATENCY_GT_64/pp:u";
        uint8_t rec[1024];
        uint32_t n = perf_etw_profile_interval(rec, PERFINFO_LOG_TYPE_SAMPLED_PROFILE_DC_START,
                                               START, 70, 10009, 10009, name);
        assert_int_equal(etl_writer_append(g.w, 0, rec, n), 0);
        read_back();
        const struct cap *c = find(KEV_PROFILE_INTERVAL, 0);
        assert_non_null(c);
        assert_int_equal(c->ev.profile_interval.source, 70);
        assert_string_equal(c->s1, name);
}

static void test_record_time(void **state)
{
        (void)state;
        struct perf_conv_event with_ip = {.kind = PERF_CONV_PROFILE,
                                          .sample_type = SAMPLE_ID | PERF_SAMPLE_IP |
                                                         PERF_SAMPLE_PERIOD |
                                                         PERF_SAMPLE_CALLCHAIN};
        struct perf_conv_event no_ip = {.kind = PERF_CONV_CSWITCH,
                                        .sample_type = SAMPLE_ID | PERF_SAMPLE_ADDR |
                                                       PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |
                                                       PERF_SAMPLE_RAW};
        struct perf_conv_event no_time = {.kind = PERF_CONV_PROFILE,
                                          .sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP};
        add_event(21, &with_ip);
        add_event(22, &no_ip);
        add_event(23, &no_time);
        struct rb r;
        uint32_t cpu = 99;

        rb_sample_head(&r, 21, 0x401000, 5, 6, START + 77, 1, true);
        rb_u64(&r, 0); /* no frames */
        assert_int_equal(perf_conv_record_time(g.c, r.b, rb_end(&r), 0, &cpu), START + 77);
        assert_int_equal(cpu, 1);
        /* the _ev variant gives the record's event too, for perf_conv_record_ev */
        const struct perf_conv_event *ev = NULL;
        assert_int_equal(perf_conv_record_time_ev(g.c, r.b, rb_end(&r), 0, &cpu, &ev), START + 77);
        assert_non_null(ev);
        assert_int_equal(ev->sample_type, with_ip.sample_type);
        assert_int_equal(perf_conv_record_time_ev(g.c, r.b, 8, 0, &cpu, &ev), 0);
        assert_null(ev);

        rb_begin(&r, PERF_RECORD_SAMPLE, 0);
        rb_u64(&r, 22);
        rb_u64(&r, (uint64_t)8 << 32 | 7);
        rb_u64(&r, START + 88);
        rb_u64(&r, 0xdead); /* ADDR */
        rb_u64(&r, 22);     /* ID */
        rb_u64(&r, 22);     /* STREAM_ID */
        rb_u64(&r, 1);      /* CPU */
        rb_u32(&r, 4);      /* RAW size and bytes */
        rb_u32(&r, 0);
        assert_int_equal(perf_conv_record_time(g.c, r.b, rb_end(&r), 0, &cpu), START + 88);
        assert_int_equal(cpu, 1);
        /* cut before CPU: the time is still there, the ring's CPU stands */
        cpu = 99;
        assert_int_equal(perf_conv_record_time(g.c, r.b, 8 + 8 * 5, 0, &cpu), START + 88);
        assert_int_equal(cpu, 0);
        /* cut inside TIME, an event without TIME, an unknown id: 0 */
        assert_int_equal(perf_conv_record_time(g.c, r.b, 8 + 8 * 2 + 4, 0, &cpu), 0);
        rb_begin(&r, PERF_RECORD_SAMPLE, 0);
        rb_u64(&r, 23);
        rb_u64(&r, 0x401000);
        assert_int_equal(perf_conv_record_time(g.c, r.b, rb_end(&r), 0, &cpu), 0);
        rb_sample_head(&r, 24, 0x401000, 5, 6, START + 77, 1, false);
        assert_int_equal(perf_conv_record_time(g.c, r.b, rb_end(&r), 0, &cpu), 0);

        /* a side-band record: the trailer */
        rb_begin(&r, PERF_RECORD_SWITCH, 0);
        rb_sample_id(&r, 5, 6, START + 99, 1, 21);
        cpu = 99;
        assert_int_equal(perf_conv_record_time(g.c, r.b, rb_end(&r), 0, &cpu), START + 99);
        assert_int_equal(cpu, 1);
}

static void test_lbr_filter_inversion(void **state)
{
        (void)state;
        struct perf_lbr_filter f;
        const uint64_t priv = PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_KERNEL;

        assert_int_equal(perf_lbr_filter_from_etw(0, &f), 0);
        assert_int_equal(f.branch_sample_type, priv | PERF_SAMPLE_BRANCH_ANY);
        assert_false(f.is_post_filtered);

        /* kernel suppressed: user only */
        assert_int_equal(perf_lbr_filter_from_etw(EVNTRACE_LBR_FILTER_KERNEL, &f), 0);
        assert_int_equal(f.branch_sample_type, PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_ANY);

        /* only calls kept: no jumps, no returns, no far branches */
        uint32_t only_calls = EVNTRACE_LBR_FILTER_JCC | EVNTRACE_LBR_FILTER_NEAR_RET |
                              EVNTRACE_LBR_FILTER_NEAR_IND_JMP | EVNTRACE_LBR_FILTER_NEAR_REL_JMP |
                              EVNTRACE_LBR_FILTER_FAR_BRANCH;
        assert_int_equal(perf_lbr_filter_from_etw(only_calls, &f), 0);
        assert_int_equal(f.branch_sample_type,
                         priv | PERF_SAMPLE_BRANCH_CALL | PERF_SAMPLE_BRANCH_IND_CALL);
        assert_false(f.is_post_filtered);

        /* returns kept, far dropped: ANY_RETURN over-captures far returns */
        uint32_t only_ret = EVNTRACE_LBR_FILTER_JCC | EVNTRACE_LBR_FILTER_NEAR_REL_CALL |
                            EVNTRACE_LBR_FILTER_NEAR_IND_CALL | EVNTRACE_LBR_FILTER_NEAR_IND_JMP |
                            EVNTRACE_LBR_FILTER_NEAR_REL_JMP | EVNTRACE_LBR_FILTER_FAR_BRANCH;
        assert_int_equal(perf_lbr_filter_from_etw(only_ret, &f), 0);
        assert_int_equal(f.branch_sample_type,
                         priv | PERF_SAMPLE_BRANCH_ANY_RETURN | PERF_SAMPLE_BRANCH_TYPE_SAVE);
        assert_true(f.is_post_filtered);
        assert_int_equal(f.drop, EVNTRACE_LBR_FILTER_FAR_BRANCH | only_ret);

        /* near relative jumps kept with something dropped: no perf bit, ANY + user space */
        assert_int_equal(perf_lbr_filter_from_etw(EVNTRACE_LBR_FILTER_JCC, &f), 0);
        assert_int_equal(f.branch_sample_type,
                         priv | PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_TYPE_SAVE);
        assert_true(f.is_post_filtered);
        assert_int_equal(f.drop, EVNTRACE_LBR_FILTER_JCC);

        /* only far branches kept */
        uint32_t only_far = 0x1FC & ~(uint32_t)EVNTRACE_LBR_FILTER_FAR_BRANCH;
        assert_int_equal(perf_lbr_filter_from_etw(only_far, &f), 0);
        assert_int_equal(f.branch_sample_type,
                         priv | PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_TYPE_SAVE);
        assert_int_equal(f.drop, only_far);

        /* call-stack mode */
        assert_int_equal(perf_lbr_filter_from_etw(
                                 EVNTRACE_LBR_CALLSTACK_ENABLE | EVNTRACE_LBR_FILTER_KERNEL, &f),
                         0);
        assert_int_equal(f.branch_sample_type,
                         PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_CALL_STACK);

        /* nothing left to record */
        assert_int_equal(
                perf_lbr_filter_from_etw(EVNTRACE_LBR_FILTER_KERNEL | EVNTRACE_LBR_FILTER_USER, &f),
                -EINVAL);
        assert_int_equal(perf_lbr_filter_from_etw(0x1FC, &f), -EINVAL);
        assert_int_equal(perf_lbr_filter_from_etw(0x800, &f), -EINVAL);

        /* the branch classes */
        assert_int_equal(perf_lbr_class_of((uint64_t)PERF_BR_COND << 20), EVNTRACE_LBR_FILTER_JCC);
        assert_int_equal(perf_lbr_class_of((uint64_t)PERF_BR_UNCOND << 20),
                         EVNTRACE_LBR_FILTER_NEAR_REL_JMP);
        assert_int_equal(perf_lbr_class_of((uint64_t)PERF_BR_SYSCALL << 20),
                         EVNTRACE_LBR_FILTER_FAR_BRANCH);
        assert_int_equal(perf_lbr_class_of((uint64_t)PERF_BR_RET << 20 | 0xFFFF0),
                         EVNTRACE_LBR_FILTER_NEAR_RET);
}

/* Every combination of the nine filter bits (LINUX-MAPPING.md 1.3): the privilege levels are
   the complement of the filtered ones, a combination that leaves nothing to record is refused,
   and what perf cannot select is removed in user space, by type, and only what was filtered. */
static void test_lbr_every_filter_combination(void **state)
{
        (void)state;
        const uint32_t types = 0x1FC; /* JCC .. FAR_BRANCH */
        for (uint32_t flags = 0; flags <= 0x1FF; flags++) {
                struct perf_lbr_filter f;
                int rc = perf_lbr_filter_from_etw(flags, &f);
                bool is_empty = (flags & 3) == 3 || (flags & types) == types;
                if (is_empty) {
                        assert_int_equal(rc, -EINVAL);
                        continue;
                }
                assert_int_equal(rc, 0);
                assert_int_equal(!!(f.branch_sample_type & PERF_SAMPLE_BRANCH_USER),
                                 !(flags & EVNTRACE_LBR_FILTER_USER));
                assert_int_equal(!!(f.branch_sample_type & PERF_SAMPLE_BRANCH_KERNEL),
                                 !(flags & EVNTRACE_LBR_FILTER_KERNEL));
                /* user space removes only filtered types, and needs the types saved */
                assert_int_equal(f.drop & ~(flags & types), 0);
                assert_int_equal(f.is_post_filtered, f.drop != 0);
                if (f.is_post_filtered)
                        assert_true(f.branch_sample_type & PERF_SAMPLE_BRANCH_TYPE_SAVE);
                /* nothing filtered: everything captured */
                if (!(flags & types))
                        assert_true(f.branch_sample_type & PERF_SAMPLE_BRANCH_ANY);
        }
}

static void rb_branch(struct rb *r, uint64_t from, uint64_t to, uint32_t type)
{
        rb_u64(r, from);
        rb_u64(r, to);
        rb_u64(r, (uint64_t)type << 20 | 0x30 /* cycles */);
}

/* An entry the CPU marked mispredicted (bit 0) after 7 cycles, speculation 2 (bits 24-25:
   PERF_BR_SPEC_WRONG_PATH). */
static void rb_branch_mispredicted(struct rb *r, uint64_t from, uint64_t to, uint32_t type)
{
        rb_u64(r, from);
        rb_u64(r, to);
        rb_u64(r, 2ull << 24 | (uint64_t)type << 20 | 7u << 4 | 1u);
}

static void test_sample_branch_stack(void **state)
{
        (void)state;
        /* filter: kernel, near relative jumps and far branches suppressed */
        uint32_t flags = EVNTRACE_LBR_FILTER_KERNEL | EVNTRACE_LBR_FILTER_NEAR_REL_JMP |
                         EVNTRACE_LBR_FILTER_FAR_BRANCH;
        struct perf_conv_event ev = {.kind = PERF_CONV_PMC_SAMPLE,
                                     .sample_type = SAMPLE_ID | PERF_SAMPLE_IP |
                                                    PERF_SAMPLE_PERIOD | PERF_SAMPLE_BRANCH_STACK,
                                     .profile_source = ProfileBranchMispredictions,
                                     .has_lbr = true,
                                     .lbr_options = flags};
        assert_int_equal(perf_lbr_filter_from_etw(flags, &ev.lbr), 0);
        assert_true(ev.lbr.is_post_filtered);
        ev.branch_sample_type = ev.lbr.branch_sample_type;
        add_event(21, &ev);

        struct rb r;
        uint64_t ts = START + 7000;
        rb_sample_head(&r, 21, 0x401300, 40, 41, ts, 0, true);
        rb_u64(&r, 5);
        rb_branch(&r, 0x401250, 0x401200, PERF_BR_COND);              /* kept, most recent */
        rb_branch(&r, 0x4011f0, 0x401240, PERF_BR_UNCOND);            /* near rel jmp: dropped */
        rb_branch_mispredicted(&r, 0x401180, 0x4011e0, PERF_BR_CALL); /* kept */
        rb_branch(&r, 0x401170, 0xffff0000, PERF_BR_SYSCALL);         /* far: dropped */
        rb_branch(&r, 0x401100, 0x401170, PERF_BR_RET);               /* kept */
        rb_end(&r);
        convert(&r, 0);

        /* a second filter keeps near relative jumps and drops conditionals */
        struct perf_conv_event ev2 = ev;
        ev2.lbr_options = EVNTRACE_LBR_FILTER_JCC;
        assert_int_equal(perf_lbr_filter_from_etw(ev2.lbr_options, &ev2.lbr), 0);
        ev2.branch_sample_type = ev2.lbr.branch_sample_type;
        add_event(22, &ev2);
        rb_sample_head(&r, 22, 0x401300, 40, 41, ts + 1, 0, true);
        rb_u64(&r, 2);
        rb_branch(&r, 0x401250, 0x401200, PERF_BR_COND);
        rb_branch(&r, 0x4011f0, 0x401240, PERF_BR_UNCOND);
        rb_end(&r);
        convert(&r, 0);
        struct perf_conv_stats st;
        perf_conv_get_stats(g.c, &st);
        assert_int_equal(st.nr_lbr_dropped, 3);
        read_back();

        const struct cap *p = find(KEV_PMC_SAMPLE, 0);
        assert_non_null(p);
        assert_int_equal(p->ev.pmc_sample.ip, 0x401300);
        assert_int_equal(p->ev.pmc_sample.tid, 41);
        assert_int_equal(p->ev.pmc_sample.source, ProfileBranchMispredictions);
        const struct cap *l = find(KEV_LBR, 0);
        assert_non_null(l);
        assert_int_equal(index_of(l), index_of(p) + 1);
        assert_int_equal(l->ev.lbr.event_timestamp, ts);
        assert_int_equal(l->ev.timestamp, ts);
        assert_int_equal(l->ev.lbr.pid, 40);
        assert_int_equal(l->ev.lbr.tid, 41);
        assert_int_equal(l->ev.lbr.options, flags);
        assert_int_equal(l->ev.lbr.nr_entries, 3);
        assert_int_equal(l->ev.lbr.entries[0].from, 0x401250);
        assert_int_equal(l->ev.lbr.entries[0].to, 0x401200);
        assert_int_equal(l->ev.lbr.entries[1].from, 0x401180);
        assert_int_equal(l->ev.lbr.entries[2].from, 0x401100);
        /* the CPU's flags in each entry's Reserved word: predicted or not, cycles */
        assert_non_null(l->ev.lbr.info);
        assert_false(KEV_LBR_MISPREDICTED(l->ev.lbr.info[0]));
        assert_int_equal(KEV_LBR_CYCLES(l->ev.lbr.info[0]), 3);
        assert_true(KEV_LBR_MISPREDICTED(l->ev.lbr.info[1]));
        assert_true(KEV_LBR_PREDICTION_KNOWN(l->ev.lbr.info[1]));
        assert_int_equal(KEV_LBR_CYCLES(l->ev.lbr.info[1]), 7);
        /* and the rest of perf's word as the CPU gave it: the branch type (bits 20-23), the
           speculation (24-25) */
        assert_int_equal((l->ev.lbr.info[0] >> 20) & 0xf, PERF_BR_COND);
        assert_int_equal((l->ev.lbr.info[1] >> 20) & 0xf, PERF_BR_CALL);
        assert_int_equal((l->ev.lbr.info[1] >> 24) & 3, 2);
        assert_int_equal((l->ev.lbr.info[0] >> 24) & 3, 0);

        const struct cap *l2 = find(KEV_LBR, 1);
        assert_int_equal(l2->ev.lbr.options, EVNTRACE_LBR_FILTER_JCC);
        assert_int_equal(l2->ev.lbr.nr_entries, 1);
        assert_int_equal(l2->ev.lbr.entries[0].from, 0x4011f0);
}

/* perf record --call-graph lbr (PERF_SAMPLE_BRANCH_CALL_STACK): a stack's user part is the LBR
   call stack's, as perf report makes it: the latest active call's target, then each active
   call's site, innermost first; the chain's own user frames (frame pointers) left out. A chain
   with no user part keeps its own frames. */
static void test_lbr_call_stack_frames(void **state)
{
        (void)state;
        struct perf_conv_event ev = {
                .kind = PERF_CONV_PMC_SAMPLE,
                .sample_type = SAMPLE_ID | PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD |
                               PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_BRANCH_STACK,
                .profile_source = ProfileTotalCycles,
                .has_stack = true,
                .has_lbr = true,
                .is_lbr_call_graph = true,
                .branch_sample_type = PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_CALL_STACK};
        ev.lbr.branch_sample_type = ev.branch_sample_type;
        add_event(23, &ev);
        struct rb r;
        uint64_t ts = START + 9000;
        /* in the kernel (a system call of g's) */
        rb_sample_head(&r, 23, KERNEL_IP, 70, 71, ts, 0, true);
        rb_u64(&r, 6);
        rb_u64(&r, (uint64_t)PERF_CONTEXT_KERNEL);
        rb_u64(&r, KERNEL_IP);
        rb_u64(&r, 0xffffffff81000100ull);
        rb_u64(&r, (uint64_t)PERF_CONTEXT_USER);
        rb_u64(&r, 0x402010);   /* the user ip */
        rb_u64(&r, 0xdeadbeef); /* frame-pointer garbage */
        rb_u64(&r, 3);
        rb_branch(&r, 0x401500, 0x402000, PERF_BR_CALL); /* f1 calls g */
        rb_branch(&r, 0x400900, 0x401400, PERF_BR_CALL); /* f2 calls f1 */
        rb_branch(&r, 0x400150, 0x400800, PERF_BR_CALL); /* main calls f2 */
        rb_end(&r);
        convert(&r, 0);
        /* in user mode, in g */
        rb_sample_head(&r, 23, 0x402222, 70, 71, ts + 10, 0, true);
        rb_u64(&r, 3);
        rb_u64(&r, (uint64_t)PERF_CONTEXT_USER);
        rb_u64(&r, 0x402222);
        rb_u64(&r, 0xdeadbeef);
        rb_u64(&r, 3);
        rb_branch(&r, 0x401500, 0x402000, PERF_BR_CALL);
        rb_branch(&r, 0x400900, 0x401400, PERF_BR_CALL);
        rb_branch(&r, 0x400150, 0x400800, PERF_BR_CALL);
        rb_end(&r);
        convert(&r, 0);
        /* a kernel thread's: no user part, its chain as it is */
        rb_sample_head(&r, 23, KERNEL_IP, 2, 2, ts + 20, 0, true);
        rb_u64(&r, 3);
        rb_u64(&r, (uint64_t)PERF_CONTEXT_KERNEL);
        rb_u64(&r, KERNEL_IP);
        rb_u64(&r, 0xffffffff81000200ull);
        rb_u64(&r, 1);
        rb_branch(&r, 0x401500, 0x402000, PERF_BR_CALL);
        rb_end(&r);
        convert(&r, 0);
        struct perf_conv_stats st;
        perf_conv_get_stats(g.c, &st);
        assert_int_equal(st.nr_lbr_call_stacks, 2);
        read_back();

        const struct cap *k = find(KEV_STACK, 0);
        assert_non_null(k);
        assert_int_equal(k->ev.stack.event_timestamp, ts);
        const uint64_t want_k[] = {KERNEL_IP, 0xffffffff81000100ull, 0x402000, 0x401500, 0x400900,
                                   0x400150};
        assert_int_equal(k->nr_stack_frames, 6);
        assert_memory_equal(k->frames, want_k, sizeof(want_k));
        const struct cap *u = find(KEV_STACK, 1);
        assert_non_null(u);
        assert_int_equal(u->ev.stack.event_timestamp, ts + 10);
        const uint64_t want_u[] = {0x402222, 0x401500, 0x400900, 0x400150};
        assert_int_equal(u->nr_stack_frames, 4);
        assert_memory_equal(u->frames, want_u, sizeof(want_u));
        const struct cap *t = find(KEV_STACK, 2);
        assert_non_null(t);
        const uint64_t want_t[] = {KERNEL_IP, 0xffffffff81000200ull};
        assert_int_equal(t->nr_stack_frames, 2);
        assert_memory_equal(t->frames, want_t, sizeof(want_t));
}

/* An invented layout: other offsets, a 4-byte prev_state, and older letters (0x40 = x dead). */
static const char moved_format[] =
        "name: sched_switch\nID: 99\nformat:\n"
        "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
        "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
        "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
        "\tfield:int next_prio;\toffset:8;\tsize:4;\tsigned:1;\n"
        "\tfield:pid_t next_pid;\toffset:12;\tsize:4;\tsigned:1;\n"
        "\tfield:unsigned int prev_state;\toffset:16;\tsize:4;\tsigned:0;\n"
        "\tfield:pid_t prev_pid;\toffset:20;\tsize:4;\tsigned:1;\n"
        "\tfield:int prev_prio;\toffset:24;\tsize:4;\tsigned:1;\n"
        "print fmt: \"%s\", prev_state ? __print_flags(prev_state, \"|\", { 1, \"S\" }, "
        "{ 2, \"D\" }, { 4, \"T\" }, { 8, \"t\" }, { 16, \"Z\" }, { 32, \"X\" }, { 64, \"x\" }) : "
        "\"R\"\n";

static void test_tracepoint_format(void **state)
{
        (void)state;
        struct perf_tp_format f;
        assert_int_equal(perf_tp_format_parse(switch_format, strlen(switch_format), &f), 0);
        assert_int_equal(f.id, 372);
        const struct perf_tp_field *x = perf_tp_field_find(&f, "prev_state");
        assert_non_null(x);
        assert_int_equal(x->offset, 32);
        assert_int_equal(x->size, 8);
        x = perf_tp_field_find(&f, "prev_comm");
        assert_int_equal(x->offset, 8);
        assert_int_equal(x->size, 16);
        assert_int_equal(perf_tp_field_find(&f, "next_prio")->offset, 60);
        assert_int_equal(f.nr_flags, 8);
        assert_int_equal(f.flags[7].value, 0x80);
        assert_int_equal(f.flags[7].letter, 'I');
        assert_int_equal(f.preempt_bit, 0x100);

        struct perf_thread_state s;
        s = perf_prev_state_to_etw(&f, 0x100);
        assert_int_equal(s.state, 1);
        assert_int_equal(s.wait_reason, 32); /* R+: Ready / WrPreempted */
        s = perf_prev_state_to_etw(&f, 0);
        assert_int_equal(s.state, 1);
        assert_int_equal(s.wait_reason, 32); /* R: WrPreempted too (a yield needs its stack) */
        s = perf_prev_state_to_etw(&f, 0x1);
        assert_int_equal(s.state, 5);
        assert_int_equal(s.wait_reason, 6); /* S: Waiting / UserRequest */
        s = perf_prev_state_to_etw(&f, 0x2);
        assert_int_equal(s.state, 5);
        assert_int_equal(s.wait_reason, 0); /* D: Executive */
        s = perf_prev_state_to_etw(&f, 0x4);
        assert_int_equal(s.wait_reason, 5); /* T: Suspended */
        s = perf_prev_state_to_etw(&f, 0x80);
        assert_int_equal(s.wait_reason, 26); /* I: WrKernel */
        s = perf_prev_state_to_etw(&f, 0x20);
        assert_int_equal(s.state, 4);
        assert_int_equal(s.wait_reason, 22); /* Z: Terminated */

        /* the letters come from the table, not from fixed bit values */
        assert_int_equal(perf_tp_format_parse(moved_format, strlen(moved_format), &f), 0);
        assert_int_equal(perf_tp_field_find(&f, "prev_state")->offset, 16);
        assert_int_equal(perf_tp_field_find(&f, "prev_state")->size, 4);
        assert_int_equal(f.nr_flags, 7);
        s = perf_prev_state_to_etw(&f, 16); /* Z here */
        assert_int_equal(s.state, 4);
        s = perf_prev_state_to_etw(&f, 2);
        assert_int_equal(s.wait_reason, 0);

        int64_t v;
        uint8_t raw[8] = {0, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff};
        struct perf_tp_field sf = {"common_pid", 4, 4, true};
        assert_true(perf_tp_field_get(&sf, raw, sizeof(raw), &v));
        assert_int_equal(v, -2);
        sf.offset = 6;
        assert_false(perf_tp_field_get(&sf, raw, sizeof(raw), &v));
        assert_int_equal(perf_tp_format_parse("nothing\n", 8, &f), -EBADMSG);
}

static void put_at(uint8_t *raw, const struct perf_tp_format *f, const char *name, int64_t v)
{
        const struct perf_tp_field *x = perf_tp_field_find(f, name);
        assert_non_null(x);
        memcpy(raw + x->offset, &v, x->size);
}

static struct perf_tp_format fmt_switch, fmt_moved, fmt_waking;

/* A CSwitch event of sched_switch samples (identifier, ip, raw data; with their call chains
   where chain, and the CSwitch stacks on where has_stack), fmt_switch parsed for it. */
static struct perf_conv_event switch_event(bool chain, bool has_stack)
{
        assert_int_equal(perf_tp_format_parse(switch_format, strlen(switch_format), &fmt_switch),
                         0);
        return (struct perf_conv_event){.kind = PERF_CONV_CSWITCH,
                                        .sample_type = SAMPLE_ID | PERF_SAMPLE_IP |
                                                       PERF_SAMPLE_RAW |
                                                       (chain ? PERF_SAMPLE_CALLCHAIN : 0),
                                        .has_stack = has_stack,
                                        .tp = &fmt_switch};
}

static void test_sched_switch_with_counters(void **state)
{
        (void)state;
        assert_int_equal(perf_tp_format_parse(switch_format, strlen(switch_format), &fmt_switch),
                         0);
        /* a tracepoint-led group: the switch count, then two counters */
        struct perf_conv_event ev = {
                .kind = PERF_CONV_CSWITCH,
                .sample_type = SAMPLE_ID | PERF_SAMPLE_IP | PERF_SAMPLE_READ | PERF_SAMPLE_RAW,
                .read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_LOST,
                .nr_pmc = 2,
                .tp = &fmt_switch};
        add_event(31, &ev);

        uint8_t raw[64] = {0};
        put_at(raw, &fmt_switch, "prev_pid", 501);
        put_at(raw, &fmt_switch, "prev_prio", 120);
        put_at(raw, &fmt_switch, "prev_state", 0x1); /* S */
        put_at(raw, &fmt_switch, "next_pid", 502);
        put_at(raw, &fmt_switch, "next_prio", 98); /* RT */
        struct rb r;
        uint64_t ts = START + 8000;
        rb_sample_head(&r, 31, 0xffffffff81800000ull, 500, 501, ts, 1, false);
        rb_u64(&r, 3);  /* nr */
        rb_u64(&r, 77); /* leader: switches */
        rb_u64(&r, 31);
        rb_u64(&r, 0);
        rb_u64(&r, 3896);
        rb_u64(&r, 32);
        rb_u64(&r, 0);
        rb_u64(&r, 9400);
        rb_u64(&r, 33);
        rb_u64(&r, 0);
        rb_u32(&r, sizeof(raw));
        rb_bytes(&r, raw, sizeof(raw));
        rb_pad8(&r);
        rb_end(&r);
        convert(&r, 1);

        /* the same event read with an invented layout */
        assert_int_equal(perf_tp_format_parse(moved_format, strlen(moved_format), &fmt_moved), 0);
        struct perf_conv_event ev2 = {.kind = PERF_CONV_CSWITCH,
                                      .sample_type = SAMPLE_ID | PERF_SAMPLE_IP | PERF_SAMPLE_RAW,
                                      .tp = &fmt_moved};
        add_event(32, &ev2);
        uint8_t raw2[28] = {0};
        put_at(raw2, &fmt_moved, "prev_pid", 601);
        put_at(raw2, &fmt_moved, "next_pid", 0);
        put_at(raw2, &fmt_moved, "prev_state", 0); /* R without +: preempted, no stack */
        put_at(raw2, &fmt_moved, "prev_prio", 120);
        rb_tp_sample(&r, 32, 0xffffffff81800000ull, 600, 601, ts + 5, 1, sizeof(raw2), raw2,
                     sizeof(raw2));
        convert(&r, 1);
        read_back();

        const struct cap *c = find(KEV_CSWITCH, 0);
        assert_non_null(c);
        assert_int_equal(c->ev.cpu, 1);
        assert_int_equal(c->ev.timestamp, ts);
        assert_int_equal(c->ev.cswitch.old_tid, 501);
        assert_int_equal(c->ev.cswitch.new_tid, 502);
        assert_int_equal(c->ev.cswitch.old_state, 5);
        assert_int_equal(c->ev.cswitch.old_wait_reason, 6);
        assert_int_equal(c->ev.cswitch.old_wait_mode, 1);
        assert_int_equal(c->ev.cswitch.old_priority, 8);
        assert_int_equal(c->ev.cswitch.new_priority, 16);
        assert_int_equal(c->ev.nr_pmc, 2);
        assert_int_equal(c->ev.pmc[0], 3896);
        assert_int_equal(c->ev.pmc[1], 9400);

        c = find(KEV_CSWITCH, 1);
        assert_int_equal(c->ev.cswitch.old_tid, 601);
        assert_int_equal(c->ev.cswitch.new_tid, 0);
        assert_int_equal(c->ev.cswitch.old_state, 1);
        assert_int_equal(c->ev.cswitch.old_wait_reason, 32);
        assert_int_equal(c->ev.cswitch.new_priority, 0); /* idle */
        assert_int_equal(c->ev.nr_pmc, 0);
}

/* sched_switch's fields are read without a check each when the raw data holds them all (the
   usual layout); a record whose raw data stops short of one (next_prio here) takes each field's
   own check, and the field it lacks its default, whatever bytes follow the raw data. */
static void test_sched_switch_raw_cut_short(void **state)
{
        (void)state;
        struct perf_conv_event ev = switch_event(false, false);
        add_event(33, &ev);
        uint8_t raw[64] = {0};
        put_at(raw, &fmt_switch, "prev_pid", 501);
        put_at(raw, &fmt_switch, "prev_prio", 98); /* RT */
        put_at(raw, &fmt_switch, "prev_state", 0x1);
        put_at(raw, &fmt_switch, "next_pid", 502);
        put_at(raw, &fmt_switch, "next_prio", 98);
        struct rb r;
        uint64_t ts = START + 9000;
        /* whole: every field read */
        rb_tp_sample(&r, 33, 0xffffffff81800000ull, 500, 501, ts, 1, sizeof(raw), raw, sizeof(raw));
        convert(&r, 1);
        /* cut after next_pid (60 bytes), next_prio's bytes after it in the record all the same */
        rb_tp_sample(&r, 33, 0xffffffff81800000ull, 500, 502, ts + 5, 1, 60, raw, sizeof(raw));
        convert(&r, 1);
        read_back();

        const struct cap *c = find(KEV_CSWITCH, 0);
        assert_non_null(c);
        assert_int_equal(c->ev.cswitch.old_tid, 501);
        assert_int_equal(c->ev.cswitch.new_tid, 502);
        assert_int_equal(c->ev.cswitch.old_priority, 16);
        assert_int_equal(c->ev.cswitch.new_priority, 16);
        c = find(KEV_CSWITCH, 1);
        assert_non_null(c);
        assert_int_equal(c->ev.cswitch.old_tid, 501);
        assert_int_equal(c->ev.cswitch.new_tid, 502);
        assert_int_equal(c->ev.cswitch.old_priority, 16);
        assert_int_equal(c->ev.cswitch.new_priority, 8); /* next_prio's default, 120 */
}

/* A sleep's wait reason from where it slept (LINUX-MAPPING.md 3.3): the innermost blocking
   function of the switch's kernel callchain; the state's reason otherwise. */
static void test_wait_reason_from_stack(void **state)
{
        (void)state;
        nr_wait_sites_calls = 0;
        struct perf_conv_event ev = switch_event(true, true);
        add_event(35, &ev);
        static const struct {
                int64_t prev_state;
                uint64_t frames[4]; /* after PERF_CONTEXT_KERNEL and __schedule */
                uint8_t reason;
        } cases[] = {
                {0x1, {SITE_NANOSLEEP + 0x10, 0xffffffff81900000ull, 0, 0}, 4},
                {0x1, {0xffffffff81900000ull, SITE_FUTEX + 0x20, SITE_NANOSLEEP, 0}, 37},
                {0x2, {SITE_IO + 0xff, 0, 0, 0}, 9},
                {0x1, {0xffffffff81900000ull, 0, 0, 0}, 6},                    /* ep_poll, say */
                {0x2, {0xffffffff81900000ull, SITE_IO + 0x100, 0, 0}, 0},      /* past the end */
                {0x1, {(uint64_t)PERF_CONTEXT_USER, SITE_NANOSLEEP, 0, 0}, 6}, /* user part */
                {0x100, {SITE_NANOSLEEP, 0, 0, 0}, 32}, /* preempted: not a sleep */
        };
        uint32_t n = sizeof(cases) / sizeof(cases[0]);
        uint64_t ts = START + 20000;
        for (uint32_t i = 0; i < n; i++) {
                uint8_t raw[64] = {0};
                put_at(raw, &fmt_switch, "prev_pid", 900 + i);
                put_at(raw, &fmt_switch, "prev_prio", 120);
                put_at(raw, &fmt_switch, "prev_state", cases[i].prev_state);
                put_at(raw, &fmt_switch, "next_pid", 0);
                put_at(raw, &fmt_switch, "next_prio", 120);
                struct rb r;
                rb_sample_head(&r, 35, 0xffffffff81800000ull, 900 + i, 900 + i, ts + i, 0, false);
                uint64_t chain[8];
                uint32_t k = 0;
                chain[k++] = (uint64_t)PERF_CONTEXT_KERNEL;
                chain[k++] = 0xffffffff81800000ull; /* __schedule */
                for (uint32_t f = 0; f < 4 && cases[i].frames[f]; f++)
                        chain[k++] = cases[i].frames[f];
                rb_u64(&r, k);
                for (uint32_t f = 0; f < k; f++)
                        rb_u64(&r, chain[f]);
                rb_u32(&r, sizeof(raw));
                rb_bytes(&r, raw, sizeof(raw));
                rb_pad8(&r);
                rb_end(&r);
                convert(&r, 0);
        }
        read_back();
        for (uint32_t i = 0; i < n; i++) {
                const struct cap *c = find(KEV_CSWITCH, i);
                assert_non_null(c);
                assert_int_equal(c->ev.cswitch.old_tid, 900 + i);
                assert_int_equal(c->ev.cswitch.old_wait_reason, cases[i].reason);
        }
        assert_int_equal(nr_wait_sites_calls, 1); /* asked once */

        assert_int_equal(perf_wait_reason_of_function("do_nanosleep"), 4);
        assert_int_equal(perf_wait_reason_of_function("futex_wait_queue"), 37);
        assert_int_equal(perf_wait_reason_of_function("io_schedule_timeout"), 9);
        assert_int_equal(perf_wait_reason_of_function("folio_wait_bit_common"), 9);
        assert_int_equal(perf_wait_reason_of_function("__mutex_lock.constprop.0"), 29);
        assert_int_equal(perf_wait_reason_of_function("rwsem_down_read_slowpath"), 27);
        assert_int_equal(perf_wait_reason_of_function("ep_poll"), -1);
        assert_int_equal(perf_wait_reason_of_function("do_nanosleep_x"), -1);
        assert_int_equal(perf_wait_reason_of_function(NULL), -1);
        /* the three-character screen: short names, and names that share only a start */
        assert_int_equal(perf_wait_reason_of_function(""), -1);
        assert_int_equal(perf_wait_reason_of_function("d"), -1);
        assert_int_equal(perf_wait_reason_of_function("do"), -1);
        assert_int_equal(perf_wait_reason_of_function("do_"), -1);
        assert_int_equal(perf_wait_reason_of_function("__"), -1);
        assert_int_equal(perf_wait_reason_of_function("__f"), -1);
        assert_int_equal(perf_wait_reason_of_function("__futex_wait"), 37);
        assert_int_equal(perf_wait_reason_of_function("__folio_lock_killable"), 9);
        assert_int_equal(perf_wait_reason_of_function("__do_sys_sched_yield"), 33);
        assert_int_equal(perf_wait_reason_of_function("__arm64_sys_sched_yield"), 33);
        assert_int_equal(perf_wait_reason_of_function("__x64_sys_sched_yield"), 33);
        assert_int_equal(perf_wait_reason_of_function("__x64_sys_sched_yield2"), -1);
        assert_int_equal(perf_wait_reason_of_function("mutex_lock_interruptible"), 29);
        assert_int_equal(perf_wait_reason_of_function("yield_to"), 33);
}

static const char waking_format[] =
        "name: sched_waking\nID: 375\nformat:\n"
        "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
        "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
        "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
        "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
        "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
        "\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
        "\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n"
        "\tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;\n\n"
        "print fmt: \"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, REC->pid, REC->prio, "
        "REC->target_cpu\n";

/* The sched_waking event (id 41) with its call chain, its format parsed into fmt_waking. */
static void add_waking_event(void)
{
        assert_int_equal(perf_tp_format_parse(waking_format, strlen(waking_format), &fmt_waking),
                         0);
        struct perf_conv_event ev = {.kind = PERF_CONV_READY_THREAD,
                                     .sample_type = SAMPLE_ID | PERF_SAMPLE_IP | PERF_SAMPLE_RAW |
                                                    PERF_SAMPLE_CALLCHAIN,
                                     .has_stack = true,
                                     .tp = &fmt_waking};
        add_event(41, &ev);
}

static void test_sched_waking(void **state)
{
        (void)state;
        add_waking_event();
        uint8_t raw[36] = {0};
        put_at(raw, &fmt_waking, "pid", 777);
        put_at(raw, &fmt_waking, "prio", 120);
        put_at(raw, &fmt_waking, "common_flags", 0x08); /* hardirq */
        struct rb r;
        uint64_t ts = START + 9000;
        rb_sample_head(&r, 41, 0xffffffff81900000ull, 700, 701, ts, 0, false);
        rb_u64(&r, 2);
        rb_u64(&r, 0xffffffff81900000ull);
        rb_u64(&r, 0xffffffff81900100ull);
        rb_u32(&r, sizeof(raw));
        rb_bytes(&r, raw, sizeof(raw));
        rb_pad8(&r);
        rb_end(&r);
        convert(&r, 0);
        read_back();

        const struct cap *c = find(KEV_READY_THREAD, 0);
        assert_non_null(c);
        assert_int_equal(c->ev.ready_thread.tid, 777);
        assert_int_equal(c->ev.ready_thread.readying_tid, 701); /* the waker */
        assert_int_equal(c->ev.ready_thread.readying_pid, 700);
        assert_int_equal(c->ev.ready_thread.flags, 1);
        assert_int_equal(c->ev.timestamp, ts);
        const struct cap *k = find(KEV_STACK, 0);
        assert_int_equal(index_of(k), index_of(c) + 1);
        assert_int_equal(k->ev.stack.event_timestamp, ts);
        assert_int_equal(k->ev.stack.tid, 701);
        assert_int_equal(k->ev.stack.nr_frames, 2);
}

/* sched_waking's pid and flags are read without a check each when the raw data holds both; a
   record whose raw data stops inside pid takes its default (0), whatever bytes follow, and its
   flags all the same. */
static void test_sched_waking_raw_cut_short(void **state)
{
        (void)state;
        assert_int_equal(perf_tp_format_parse(waking_format, strlen(waking_format), &fmt_waking),
                         0);
        struct perf_conv_event ev = {.kind = PERF_CONV_READY_THREAD,
                                     .sample_type = SAMPLE_ID | PERF_SAMPLE_IP | PERF_SAMPLE_RAW,
                                     .tp = &fmt_waking};
        add_event(42, &ev);
        uint8_t raw[36] = {0};
        put_at(raw, &fmt_waking, "pid", 777);
        put_at(raw, &fmt_waking, "common_flags", 0x08); /* hardirq */
        struct rb r;
        uint64_t ts = START + 9000;
        for (uint32_t i = 0; i < 2; i++) {
                rb_sample_head(&r, 42, 0xffffffff81900000ull, 700, 701, ts + i, 0, false);
                rb_u32(&r, i == 0 ? sizeof(raw) : 26); /* the second cut inside pid */
                rb_bytes(&r, raw, sizeof(raw));
                rb_pad8(&r);
                rb_end(&r);
                convert(&r, 0);
        }
        read_back();

        assert_int_equal(count(KEV_READY_THREAD), 2);
        const struct cap *c = find(KEV_READY_THREAD, 0);
        assert_int_equal(c->ev.ready_thread.tid, 777);
        assert_int_equal(c->ev.ready_thread.flags, 1);
        c = find(KEV_READY_THREAD, 1);
        assert_int_equal(c->ev.ready_thread.tid, 0);
        assert_int_equal(c->ev.ready_thread.flags, 1);
}

/* A sched_switch sample of event id (IDENTIFIER|IP|TID|TIME|CPU|RAW, Linux 6.18 layout). */
static void rb_sched_switch(struct rb *r, uint64_t id, uint32_t prev, uint32_t next,
                            int64_t prev_state, uint64_t time, uint32_t cpu)
{
        uint8_t raw[64] = {0};
        put_at(raw, &fmt_switch, "prev_pid", prev);
        put_at(raw, &fmt_switch, "prev_prio", 120);
        put_at(raw, &fmt_switch, "prev_state", prev_state);
        put_at(raw, &fmt_switch, "next_pid", next);
        put_at(raw, &fmt_switch, "next_prio", 120);
        rb_tp_sample(r, id, 0xffffffff81800000ull, prev, prev, time, cpu, sizeof(raw), raw,
                     sizeof(raw));
}

/* PERF_RECORD_SWITCH_CPU_WIDE (next_prev set) or PERF_RECORD_SWITCH, in the context of tid. */
static void rb_switch(struct rb *r, bool is_cpu_wide, bool is_out, uint32_t tid, uint32_t next_prev,
                      uint64_t time, uint32_t cpu, uint64_t id)
{
        rb_begin(r, is_cpu_wide ? PERF_RECORD_SWITCH_CPU_WIDE : PERF_RECORD_SWITCH,
                 is_out ? PERF_RECORD_MISC_SWITCH_OUT : 0);
        if (is_cpu_wide) {
                rb_u32(r, next_prev);
                rb_u32(r, next_prev);
        }
        rb_sample_id(r, tid, tid, time, cpu, id);
        rb_end(r);
}

/* The switch-ins sched_switch does not deliver (nothing is recorded while a secondary CPU's
   idle task runs) come from the switch-in records; NewThreadWaitTime counts the clock ticks of
   the TimerResolution that began since the thread was readied or switched out (Windows:
   KeTickCount then less KeTickCount now). */
static void test_cswitch_repair_and_wait_time(void **state)
{
        (void)state;
        const uint64_t ms = 1000000;
        assert_int_equal(perf_tp_format_parse(waking_format, strlen(waking_format), &fmt_waking),
                         0);
        struct perf_conv_event tp = switch_event(false, false);
        add_event(71, &tp);
        struct perf_conv_event sb = {.kind = PERF_CONV_SIDEBAND, .sample_type = SAMPLE_ID};
        add_event(72, &sb);
        struct perf_conv_event wk = {.kind = PERF_CONV_READY_THREAD,
                                     .sample_type = SAMPLE_ID | PERF_SAMPLE_IP | PERF_SAMPLE_RAW,
                                     .tp = &fmt_waking};
        add_event(73, &wk);
        perf_conv_set_timer_resolution(g.c, 10000); /* 1 ms ticks */

        struct rb r;
        /* CPU 1: 900 sleeps; the idle task's switch to it is not delivered, its IN record is */
        rb_sched_switch(&r, 71, 900, 0, 0x1, START + 1 * ms, 1);
        convert(&r, 1);
        rb_switch(&r, true, true, 900, 0, START + 1 * ms + 1, 1, 72); /* OUT: nothing */
        /* a drain need not order or convert it: perf_conv_skips says so and counts it */
        struct perf_conv_stats before, after;
        perf_conv_get_stats(g.c, &before);
        assert_true(perf_conv_skips(g.c, r.b, r.n));
        perf_conv_get_stats(g.c, &after);
        assert_int_equal(after.nr_records, before.nr_records + 1);
        assert_false(perf_conv_skips(g.c, r.b, r.n - 8)); /* not whole: converted as before */
        convert(&r, 1);
        rb_switch(&r, true, false, 900, 0, START + 5 * ms, 1, 72); /* IN from idle: repaired */
        assert_false(perf_conv_skips(g.c, r.b, r.n));
        convert(&r, 1);
        /* a switch that is delivered: its IN record adds nothing */
        rb_sched_switch(&r, 71, 900, 901, 0x100, START + 6 * ms, 1);
        convert(&r, 1);
        rb_switch(&r, true, false, 901, 900, START + 6 * ms + 10, 1, 72);
        convert(&r, 1);
        /* 900 readied at 7 ms (on CPU 0), switched in at 9.6 ms: waited in Ready through the
           ticks of 8 and 9 ms */
        uint8_t raw[36] = {0};
        put_at(raw, &fmt_waking, "pid", 900);
        rb_tp_sample(&r, 73, 0xffffffff81900000ull, 902, 902, START + 7 * ms, 0, sizeof(raw), raw,
                     sizeof(raw));
        convert(&r, 0);
        rb_sched_switch(&r, 71, 901, 900, 0x1, START + 9 * ms + 600000, 1);
        convert(&r, 1);
        /* a per-task switch-in record (-p): the thread switched out is not in it */
        rb_switch(&r, false, false, 950, 0, START + 9 * ms + 700000, 0, 72);
        convert(&r, 0);
        struct perf_conv_stats st;
        perf_conv_get_stats(g.c, &st);
        assert_int_equal(st.nr_cswitch_repaired, 2);
        assert_int_equal(st.nr_bad, 0);
        read_back();

        assert_int_equal(count(KEV_CSWITCH), 5);
        const struct cap *c = find(KEV_CSWITCH, 0); /* 900 -> idle */
        assert_int_equal(c->ev.cswitch.old_tid, 900);
        assert_int_equal(c->ev.cswitch.new_tid, 0);
        assert_int_equal(c->ev.cswitch.new_wait_time, 0);
        assert_int_equal(c->ev.cswitch.old_ideal_processor, 1);

        c = find(KEV_CSWITCH, 1); /* idle -> 900, from the IN record */
        assert_int_equal(c->ev.cpu, 1);
        assert_int_equal(c->ev.timestamp, START + 5 * ms);
        assert_int_equal(c->ev.cswitch.old_tid, 0);
        assert_int_equal(c->ev.cswitch.new_tid, 900);
        assert_int_equal(c->ev.cswitch.old_state, 1); /* the idle thread: Ready, as sched_switch
                                                          says R for swapper */
        assert_int_equal(c->ev.cswitch.old_priority, 0);
        assert_int_equal(c->ev.cswitch.new_priority, 8);
        assert_int_equal(c->ev.cswitch.new_wait_time, 4); /* 4 ms since it switched out */

        c = find(KEV_CSWITCH, 2); /* 900 -> 901, delivered: once */
        assert_int_equal(c->ev.cswitch.old_tid, 900);
        assert_int_equal(c->ev.cswitch.new_tid, 901);
        assert_int_equal(c->ev.cswitch.old_wait_reason, 32); /* R+: WrPreempted */
        assert_int_equal(c->ev.cswitch.new_wait_time, 0);    /* never seen waiting */

        c = find(KEV_CSWITCH, 3); /* 901 -> 900 */
        assert_int_equal(c->ev.timestamp, START + 9 * ms + 600000);
        assert_int_equal(c->ev.cswitch.new_tid, 900);
        assert_int_equal(c->ev.cswitch.new_wait_time, 2); /* 2 ticks since readied, not 3 */

        c = find(KEV_CSWITCH, 4); /* the per-task record: the old thread is not known */
        assert_int_equal(c->ev.cpu, 0);
        assert_int_equal(c->ev.cswitch.new_tid, 950);
        assert_int_equal(c->ev.cswitch.old_tid, 0);
}

static const char idle_format[] =
        "name: cpu_idle\nID: 568\nformat:\n"
        "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
        "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
        "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
        "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
        "\tfield:u32 state;\toffset:8;\tsize:4;\tsigned:0;\n"
        "\tfield:u32 cpu_id;\toffset:12;\tsize:4;\tsigned:0;\n\n"
        "print fmt: \"state=%lu cpu_id=%lu\", (unsigned long)REC->state, "
        "(unsigned long)REC->cpu_id\n";
static struct perf_tp_format fmt_idle;

/* A power:cpu_idle sample of event id on cpu: state entered, or 4294967295 leaving idle. */
static void rb_cpu_idle(struct rb *r, uint64_t id, uint32_t idle_state, uint64_t time, uint32_t cpu)
{
        uint8_t raw[20] = {0};
        put_at(raw, &fmt_idle, "state", idle_state);
        put_at(raw, &fmt_idle, "cpu_id", cpu);
        rb_tp_sample(r, id, 0xffffffff81700000ull, 0, 0, time, cpu, sizeof(raw), raw, sizeof(raw));
}

/* PreviousCState (LINUX-MAPPING.md 3.3): a CSwitch from a CPU's idle thread carries the last
   C-state power:cpu_idle entered on that CPU; the idle samples themselves write nothing. */
static void test_cswitch_previous_cstate(void **state)
{
        (void)state;
        const uint64_t ms = 1000000;
        assert_int_equal(perf_tp_format_parse(idle_format, strlen(idle_format), &fmt_idle), 0);
        struct perf_conv_event tp = switch_event(false, false);
        add_event(81, &tp);
        struct perf_conv_event idle = {.kind = PERF_CONV_CPU_IDLE,
                                       .sample_type = SAMPLE_ID | PERF_SAMPLE_IP | PERF_SAMPLE_RAW,
                                       .tp = &fmt_idle};
        add_event(82, &idle);
        struct perf_conv_event sb = {.kind = PERF_CONV_SIDEBAND, .sample_type = SAMPLE_ID};
        add_event(83, &sb);

        struct rb r;
        /* CPU 0: 900 sleeps, the CPU idles in C1, wakes, switches to 900 */
        rb_sched_switch(&r, 81, 900, 0, 0x1, START + 1 * ms, 0);
        convert(&r, 0);
        rb_cpu_idle(&r, 82, 1, START + 1 * ms + 10, 0);
        convert(&r, 0);
        rb_cpu_idle(&r, 82, 0xffffffffu, START + 3 * ms, 0);
        convert(&r, 0);
        rb_sched_switch(&r, 81, 0, 900, 0, START + 3 * ms + 10, 0);
        convert(&r, 0);
        /* CPU 1 idles in C3; its switch from idle comes from the switch-in record */
        rb_cpu_idle(&r, 82, 3, START + 2 * ms, 1);
        convert(&r, 1);
        rb_cpu_idle(&r, 82, 0xffffffffu, START + 4 * ms, 1);
        convert(&r, 1);
        rb_switch(&r, true, false, 901, 0, START + 4 * ms + 10, 1, 83);
        convert(&r, 1);
        /* a switch between two threads on CPU 0: no C-state */
        rb_sched_switch(&r, 81, 900, 902, 0x100, START + 5 * ms, 0);
        convert(&r, 0);
        struct perf_conv_stats st;
        perf_conv_get_stats(g.c, &st);
        assert_int_equal(st.nr_bad, 0);
        assert_int_equal(st.nr_events, 4); /* the four switches, nothing for the idle samples */
        read_back();

        assert_int_equal(count(KEV_CSWITCH), 4);
        const struct cap *c = find(KEV_CSWITCH, 0); /* 900 -> idle */
        assert_int_equal(c->ev.cswitch.old_tid, 900);
        assert_int_equal(c->ev.cswitch.previous_cstate, 0);
        c = find(KEV_CSWITCH, 1); /* idle -> 900 on CPU 0, after C1 */
        assert_int_equal(c->ev.cswitch.old_tid, 0);
        assert_int_equal(c->ev.cswitch.new_tid, 900);
        assert_int_equal(c->ev.cswitch.previous_cstate, 1);
        c = find(KEV_CSWITCH, 2); /* idle -> 901 on CPU 1, after C3 */
        assert_int_equal(c->ev.cpu, 1);
        assert_int_equal(c->ev.cswitch.new_tid, 901);
        assert_int_equal(c->ev.cswitch.previous_cstate, 3);
        c = find(KEV_CSWITCH, 3); /* 900 -> 902: not from idle */
        assert_int_equal(c->ev.cswitch.previous_cstate, 0);
}

/* A sched_switch sample with a callchain (IDENTIFIER|IP|TID|TIME|CPU|CALLCHAIN|RAW): prev of
   process prev_pid, the chain's nr entries as given (markers included). */
static void rb_sched_switch_chain(struct rb *r, uint64_t id, uint32_t prev_pid, uint32_t prev,
                                  uint32_t next, int64_t prev_state, uint64_t time, uint32_t cpu,
                                  const uint64_t *chain, uint32_t nr)
{
        uint8_t raw[64] = {0};
        put_at(raw, &fmt_switch, "prev_pid", prev);
        put_at(raw, &fmt_switch, "prev_prio", 120);
        put_at(raw, &fmt_switch, "prev_state", prev_state);
        put_at(raw, &fmt_switch, "next_pid", next);
        put_at(raw, &fmt_switch, "next_prio", 120);
        rb_sample_head(r, id, 0xffffffff81800000ull, prev_pid, prev, time, cpu, false);
        rb_u64(r, nr);
        for (uint32_t i = 0; i < nr; i++)
                rb_u64(r, chain[i]);
        rb_u32(r, sizeof(raw));
        rb_bytes(r, raw, sizeof(raw));
        rb_pad8(r);
        rb_end(r);
}

/* Issue 13, item 2. A runnable thread leaving the CPU (R, or R+) was preempted: on current
   kernels a preemption at the tick switches out through schedule() on the return to user space
   with prev_state R and no "+", as a yield does. It is WrYieldExecution only when its switch-out
   callchain passes through do_sched_yield. The reasons come from the kernel callchain whether
   or not the CSwitch stacks are written (the live source asks for it either way): a nanosleep is
   DelayExecution in the CSwitch record itself, with no StackWalk. */
static void test_preempt_or_yield(void **state)
{
        (void)state;
        struct perf_conv_event ev = switch_event(true, false); /* no has_stack: no StackWalk */
        add_event(91, &ev);
        const uint64_t kctx = (uint64_t)PERF_CONTEXT_KERNEL, sched = 0xffffffff81800000ull;
        const uint64_t exit_loop = 0xffffffff81a00000ull; /* exit_to_user_mode_loop, say */
        static const struct {
                uint32_t prev;
                int64_t prev_state;
                uint64_t frame; /* after __schedule; 0: no callchain at all */
                uint8_t state, reason;
        } cases[] = {
                {601, 0x0, 0xffffffff81a00000ull, 1, 32},   /* preempted at the tick: R */
                {602, 0x0, SITE_YIELD + 0x20, 1, 33},       /* sched_yield */
                {603, 0x100, 0xffffffff81a00000ull, 1, 32}, /* R+ */
                {604, 0x0, 0, 1, 32},                       /* no callchain */
                {605, 0x1, SITE_NANOSLEEP + 0x8, 5, 4},     /* nanosleep: DelayExecution */
                {606, 0x1, SITE_YIELD + 0x20, 5, 6},        /* a sleep is not a yield */
                {0, 0x0, SITE_YIELD + 0x20, 1, 32},         /* the idle thread */
        };
        uint32_t n = sizeof(cases) / sizeof(cases[0]);
        struct rb r;
        for (uint32_t i = 0; i < n; i++) {
                uint64_t chain[4] = {kctx, sched, cases[i].frame, exit_loop};
                rb_sched_switch_chain(&r, 91, cases[i].prev, cases[i].prev, 0, cases[i].prev_state,
                                      START + 1000 * (i + 1), 0, chain, cases[i].frame ? 4 : 0);
                convert(&r, 0);
        }
        read_back();
        assert_int_equal(count(KEV_CSWITCH), n);
        assert_int_equal(count(KEV_STACK), 0);
        for (uint32_t i = 0; i < n; i++) {
                const struct cap *c = find(KEV_CSWITCH, i);
                assert_int_equal(c->ev.cswitch.old_tid, cases[i].prev);
                assert_int_equal(c->ev.cswitch.old_state, cases[i].state);
                assert_int_equal(c->ev.cswitch.old_wait_reason, cases[i].reason);
        }
        assert_int_equal(perf_wait_reason_of_function("do_sched_yield"), 33);
        assert_int_equal(perf_wait_reason_of_function("yield_to"), 33);
        assert_int_equal(perf_wait_reason_of_function("__x64_sys_sched_yield"), 33);
        assert_int_equal(perf_wait_reason_of_function("exit_to_user_mode_loop"), -1);
}

/* The same reasons when the CSwitch stacks are on (frame pointers): a chain kept whole keeps the
   reason its blocking function gives (conv_kframes.site_reason), a sleeping thread's apart from
   a runnable one's, so that each chain, sent twice in either state, says what a scan says. */
static void test_wait_reason_of_kept_chains(void **state)
{
        (void)state;
        struct perf_conv_event ev = switch_event(true, true);
        add_event(92, &ev);
        const uint64_t kctx = (uint64_t)PERF_CONTEXT_KERNEL, sched = 0xffffffff81800000ull;
        const uint64_t exit_loop = 0xffffffff81a00000ull;
        static const struct {
                uint64_t frame;
                uint8_t sleeping, runnable; /* the reasons of S and of R */
        } cases[] = {
                {SITE_NANOSLEEP + 0x8, 4, 32},
                {SITE_YIELD + 0x20, 6, 33},
                {0xffffffff81a00040ull, 6, 32},
        };
        struct rb r;
        uint32_t n = 0;
        for (uint32_t round = 0; round < 2; round++) {
                for (uint32_t i = 0; i < 3; i++) {
                        for (uint32_t is_runnable = 0; is_runnable < 2; is_runnable++) {
                                uint64_t chain[4] = {kctx, sched, cases[i].frame, exit_loop};
                                uint32_t tid = 700 + n;
                                rb_sched_switch_chain(&r, 92, tid, tid, 0, is_runnable ? 0x0 : 0x1,
                                                      START + 1000 * (n + 1), 0, chain, 4);
                                convert(&r, 0);
                                n++;
                        }
                }
        }
        read_back();
        assert_int_equal(count(KEV_CSWITCH), n);
        for (uint32_t k = 0; k < n; k++) {
                const struct cap *c = find(KEV_CSWITCH, k);
                uint32_t i = k / 2 % 3;
                bool is_runnable = k % 2;
                assert_int_equal(c->ev.cswitch.old_tid, 700 + k);
                assert_int_equal(c->ev.cswitch.old_state, is_runnable ? 1 : 5);
                assert_int_equal(c->ev.cswitch.old_wait_reason,
                                 is_runnable ? cases[i].runnable : cases[i].sleeping);
        }
}

/* Issue 13, item 17. The stack of a CSwitch is the new thread's, as Windows writes it
   (StackThread = NewThreadId, EventTimeStamp = the CSwitch's): where that thread left the CPU at
   its last switch-out, i.e. the callchain of the sched_switch that switched it out. Also for a
   switch-in made from a switch-in record. A thread that ended keeps none; with the CSwitch
   stacks turned off, none is written and those kept are forgotten. */
static void test_cswitch_stack_is_the_new_threads(void **state)
{
        (void)state;
        struct perf_conv_event on = switch_event(true, true);
        add_event(95, &on);
        struct perf_conv_event sb = {.kind = PERF_CONV_SIDEBAND, .sample_type = SAMPLE_ID};
        add_event(96, &sb);
        struct perf_conv_event off = on;
        off.has_stack = false;
        add_event(97, &off);
        const uint64_t kctx = (uint64_t)PERF_CONTEXT_KERNEL, uctx = (uint64_t)PERF_CONTEXT_USER;
        const uint64_t fa[] = {kctx, 0xffffffff81800000ull, SITE_NANOSLEEP + 8, uctx, 0x401000};
        const uint64_t fb[] = {kctx, 0xffffffff81800010ull, 0xffffffff81a00000ull};
        const uint64_t fc[] = {kctx, 0xffffffff81800020ull};
        struct rb r;
        uint64_t t = START + 100000;
        /* CPU 0: A (500/501) sleeps, B (502) runs; B is preempted, A runs again, then ends */
        rb_sched_switch_chain(&r, 95, 500, 501, 502, 0x1, t + 1, 0, fa, 5);
        convert(&r, 0);
        rb_sched_switch_chain(&r, 95, 502, 502, 501, 0x100, t + 2, 0, fb, 3);
        convert(&r, 0);
        rb_sched_switch_chain(&r, 95, 500, 501, 0, 0x10, t + 3, 0, fc, 2); /* X: dead */
        convert(&r, 0);
        /* CPU 1: B switched in from idle, only its switch-in record came */
        rb_switch(&r, true, false, 502, 0, t + 4, 1, 96);
        convert(&r, 1);
        /* B leaves again (its stack kept), the stacks are turned off, B returns: no stack */
        rb_sched_switch_chain(&r, 95, 502, 502, 503, 0x1, t + 5, 1, fb, 3);
        convert(&r, 1);
        rb_sched_switch_chain(&r, 97, 503, 503, 502, 0x1, t + 6, 1, fc, 2);
        convert(&r, 1);
        struct perf_conv_stats st;
        perf_conv_get_stats(g.c, &st);
        assert_int_equal(st.nr_cswitch_stacks, 2);
        read_back();

        assert_int_equal(count(KEV_CSWITCH), 6);
        assert_int_equal(count(KEV_STACK), 2);
        const struct cap *c = find(KEV_CSWITCH, 1); /* B -> A */
        const struct cap *k = find(KEV_STACK, 0);
        assert_int_equal(c->ev.cswitch.new_tid, 501);
        assert_int_equal(index_of(k), index_of(c) + 1);
        assert_int_equal(k->ev.cpu, 0);
        assert_int_equal(k->ev.stack.event_timestamp, t + 2);
        assert_int_equal(k->ev.timestamp, t + 2);
        assert_int_equal(k->ev.stack.tid, 501); /* the new thread's */
        assert_int_equal(k->ev.stack.pid, 500);
        assert_int_equal(k->ev.stack.nr_frames, 3); /* its switch-out's, markers dropped */
        assert_int_equal(k->frames[0], 0xffffffff81800000ull);
        assert_int_equal(k->frames[1], SITE_NANOSLEEP + 8);
        assert_int_equal(k->frames[2], 0x401000);
        c = find(KEV_CSWITCH, 3); /* idle -> B on CPU 1, from the switch-in record */
        k = find(KEV_STACK, 1);
        assert_int_equal(c->ev.cswitch.new_tid, 502);
        assert_int_equal(c->ev.cswitch.old_tid, 0);
        assert_int_equal(index_of(k), index_of(c) + 1);
        assert_int_equal(k->ev.stack.tid, 502);
        assert_int_equal(k->ev.stack.event_timestamp, c->ev.timestamp);
        assert_int_equal(k->ev.stack.nr_frames, 2);
        assert_int_equal(k->frames[1], 0xffffffff81a00000ull);
}

/* A switch out of thread -1 (a perf.data's sample of no thread; the fuzzer's find): converted,
   its chain kept for no one (the tables' empty key is -1: the stack table gave no entry, and the
   switch-out dereferenced it). */
static void test_switch_out_of_no_thread(void **state)
{
        (void)state;
        struct perf_conv_event on = switch_event(true, true);
        add_event(95, &on);
        const uint64_t kctx = (uint64_t)PERF_CONTEXT_KERNEL, uctx = (uint64_t)PERF_CONTEXT_USER;
        const uint64_t fa[] = {kctx, 0xffffffff81800000ull, SITE_NANOSLEEP + 8, uctx, 0x401000};
        const uint64_t fb[] = {kctx, 0xffffffff81800010ull};
        struct rb r;
        uint64_t t = START + 100000;
        rb_sched_switch_chain(&r, 95, UINT32_MAX, UINT32_MAX, 502, 0x1, t + 1, 0, fa, 5);
        convert(&r, 0);
        rb_sched_switch_chain(&r, 95, 502, 502, UINT32_MAX, 0x1, t + 2, 0, fb, 2);
        convert(&r, 0);
        read_back();
        assert_int_equal(count(KEV_CSWITCH), 2);
        /* the second switch brings -1 back: no stack was kept for it */
        for (uint32_t i = 0; i < 2 && find(KEV_STACK, i); i++)
                assert_int_not_equal(find(KEV_STACK, i)->ev.stack.tid, UINT32_MAX);
}

/* ---- side-band records ---- */

static void rb_mmap2(struct rb *r, uint32_t pid, uint32_t tid, uint64_t addr, uint64_t len,
                     uint64_t pgoff, const uint8_t *build_id, uint32_t prot, const char *path,
                     uint64_t time, uint32_t cpu)
{
        rb_begin(r, PERF_RECORD_MMAP2,
                 PERF_RECORD_MISC_USER | (build_id ? PERF_RECORD_MISC_MMAP_BUILD_ID : 0));
        rb_u32(r, pid);
        rb_u32(r, tid);
        rb_u64(r, addr);
        rb_u64(r, len);
        rb_u64(r, pgoff);
        if (build_id) {
                uint8_t u[24] = {20};
                memcpy(u + 4, build_id, 20);
                rb_bytes(r, u, 24);
        } else {
                uint8_t u[24] = {8, 0, 0, 0, 1};
                rb_bytes(r, u, 24);
        }
        rb_u32(r, prot);
        rb_u32(r, 2);
        rb_bytes(r, path, (uint32_t)strlen(path) + 1);
        rb_pad8(r);
        rb_sample_id(r, pid, tid, time, cpu, 1);
        rb_end(r);
}

static void test_mmap2_build_id(void **state)
{
        (void)state;
        static const uint8_t bid[20] = {0xbe, 0x63, 0x97, 0xdd, 1,  2,  3,  4,  5,  6,
                                        7,    8,    9,    10,   11, 12, 13, 14, 15, 16};
        struct rb r;
        rb_mmap2(&r, 6789, 6789, 0x558c30206000, 0x13000, 0x4000, bid, PROT_READ | PROT_EXEC,
                 "/usr/bin/dash", START + 100, 1);
        convert(&r, 1);
        rb_mmap2(&r, 6789, 6790, 0x7f0000001000, 0x2000, 0x1000, NULL, PROT_READ | PROT_EXEC,
                 "/usr/lib/libfile.so", START + 200, 1);
        convert(&r, 1);
        rb_mmap2(&r, 6789, 6790, 0x7f0000009000, 0x2000, 0, NULL, PROT_READ, "/data", START + 300,
                 1);
        convert(&r, 1); /* not executable: nothing */
        assert_int_equal(g.nr_build_id_calls, 1);
        read_back();

        assert_int_equal(count(KEV_IMAGE), 2);
        const struct cap *im = find(KEV_IMAGE, 0);
        assert_int_equal(im->ev.image.phase, KEV_PHASE_START);
        assert_int_equal(im->ev.image.base, 0x558c30206000);
        assert_int_equal(im->ev.image.size, 0x13000);
        assert_int_equal(im->ev.image.pid, 6789);
        assert_string_equal(im->ev.image.file_name, "/usr/bin/dash");
        assert_int_equal(im->ev.cpu, 1);
        assert_int_equal(im->ev.timestamp, START + 100);

        const struct cap *id = find_own(ETWTOP_EVENT_IMAGE_IDENTITY, 0);
        assert_non_null(id);
        assert_int_equal(index_of(id) + 1, index_of(im)); /* identity first, like KTC ImageID */
        uint64_t v;
        memcpy(&v, id->user, 8);
        assert_int_equal(v, 0x558c30206000);
        memcpy(&v, id->user + 16, 8);
        assert_int_equal(v, 0x4000); /* file offset */
        assert_int_equal(id->user[28], 20);
        assert_memory_equal(id->user + 32, bid, 20);
        assert_int_equal(id->user[30], ETWTOP_IMAGE_FLAG_BUILD_ID_FROM_RECORD);
        assert_string_equal((const char *)id->user + 52, "/usr/bin/dash");

        id = find_own(ETWTOP_EVENT_IMAGE_IDENTITY, 1);
        assert_memory_equal(id->user + 32, file_build_id, 20);
        assert_int_equal(id->user[30], ETWTOP_IMAGE_FLAG_BUILD_ID_FROM_FILE);
        assert_string_equal((const char *)id->user + 52, "/usr/lib/libfile.so");
}

static void rb_comm(struct rb *r, uint32_t pid, uint32_t tid, const char *comm, bool is_exec,
                    uint64_t time)
{
        rb_begin(r, PERF_RECORD_COMM, is_exec ? PERF_RECORD_MISC_COMM_EXEC : 0);
        rb_u32(r, pid);
        rb_u32(r, tid);
        rb_bytes(r, comm, (uint32_t)strlen(comm) + 1);
        rb_pad8(r);
        rb_sample_id(r, pid, tid, time, 0, 1);
        rb_end(r);
}

static void rb_task(struct rb *r, uint32_t type, uint32_t pid, uint32_t ppid, uint32_t tid,
                    uint32_t ptid, uint64_t time)
{
        rb_begin(r, type, 0);
        rb_u32(r, pid);
        rb_u32(r, ppid);
        rb_u32(r, tid);
        rb_u32(r, ptid);
        rb_u64(r, time);
        rb_sample_id(r, pid, tid, time, 0, 1);
        rb_end(r);
}

/* A timer sample (event 21, registered here) of tid in pid at ip. */
static void rb_profile(struct rb *r, uint32_t pid, uint32_t tid, uint64_t ip, uint64_t time)
{
        bool is_known = false;
        for (uint32_t i = 0; i < g.nr_events; i++)
                is_known |= g.ids[i] == 21;
        if (!is_known) {
                struct perf_conv_event ev = {.kind = PERF_CONV_PROFILE,
                                             .sample_type = SAMPLE_ID | PERF_SAMPLE_IP |
                                                            PERF_SAMPLE_PERIOD};
                add_event(21, &ev);
        }
        rb_sample_head(r, 21, ip, pid, tid, time, 0, true);
        rb_end(r);
}

static void test_comm_fork_exit(void **state)
{
        (void)state;
        uint64_t t = START + 1000;
        struct perf_conv_process pp = {100, 1, 100, "parent", "parent --serve", 1100};
        assert_int_equal(perf_conv_process(g.c, WMI_LOG_TYPE_PROCESS_DC_START, 0, t, &pp), 0);
        struct perf_conv_thread pt = {100, 100, 120, "parent"};
        assert_int_equal(perf_conv_thread(g.c, WMI_LOG_TYPE_THREAD_DC_START, 0, t, &pt), 0);
        struct perf_conv_image pi = {
                100, 0x400000, 0x1000, 0, "/usr/bin/parent", NULL, 0, ETWTOP_IMAGE_FLAG_RUNDOWN};
        assert_int_equal(perf_conv_image(g.c, WMI_LOG_TYPE_IMAGE_DC_START, 0, t, &pi), 0);

        struct rb r;
        rb_task(&r, PERF_RECORD_FORK, 200, 100, 200, 100, t + 10); /* a new process */
        convert(&r, 0);
        rb_task(&r, PERF_RECORD_FORK, 200, 200, 201, 200, t + 20); /* its second thread */
        convert(&r, 0);
        rb_profile(&r, 200, 201, 0x400100, t + 25); /* the child's first sample */
        convert(&r, 0);
        rb_comm(&r, 200, 201, "worker", false, t + 30); /* a thread rename */
        convert(&r, 0);
        rb_comm(&r, 200, 200, "newimage", true, t + 40); /* exec */
        convert(&r, 0);
        rb_task(&r, PERF_RECORD_EXIT, 200, 100, 201, 201, t + 50);
        convert(&r, 0);
        rb_task(&r, PERF_RECORD_EXIT, 200, 100, 200, 200, t + 60);
        convert(&r, 0);
        assert_int_equal(perf_conv_rundown_end(g.c, 0, t + 70), 0);
        read_back();

        /* processes: DCStart 100, Start 200 (fork), Start 200 (exec), End 200, DCEnd 100 */
        assert_int_equal(count(KEV_PROCESS), 5);
        const struct cap *p = find(KEV_PROCESS, 0);
        assert_int_equal(p->ev.process.phase, KEV_PHASE_DC_START);
        assert_string_equal(p->ev.process.image_name, "parent");
        assert_string_equal(p->ev.process.command_line, "parent --serve");
        p = find(KEV_PROCESS, 1);
        assert_int_equal(p->ev.process.phase, KEV_PHASE_START);
        assert_int_equal(p->ev.process.pid, 200);
        assert_int_equal(p->ev.process.parent_pid, 100);
        assert_string_equal(p->ev.process.image_name, "parent"); /* inherited */
        assert_string_equal(p->ev.process.command_line, "cmd-of-200 --flag");
        assert_int_equal(p->ev.process.exit_status, 259);
        p = find(KEV_PROCESS, 2);
        assert_int_equal(p->ev.process.phase, KEV_PHASE_START);
        assert_string_equal(p->ev.process.image_name, "newimage");
        p = find(KEV_PROCESS, 3);
        assert_int_equal(p->ev.process.phase, KEV_PHASE_END);
        assert_int_equal(p->ev.process.pid, 200);
        assert_string_equal(p->ev.process.image_name, "newimage");
        p = find(KEV_PROCESS, 4);
        assert_int_equal(p->ev.process.phase, KEV_PHASE_DC_END);
        assert_int_equal(p->ev.process.pid, 100);

        /* threads: DCStart 100, Start 200, Start 201, End 201, End 200, DCEnd 100 */
        assert_int_equal(count(KEV_THREAD), 6);
        const struct cap *th = find(KEV_THREAD, 2);
        assert_int_equal(th->ev.thread.phase, KEV_PHASE_START);
        assert_int_equal(th->ev.thread.pid, 200);
        assert_int_equal(th->ev.thread.tid, 201);
        assert_string_equal(th->ev.thread.name, "parent");
        th = find(KEV_THREAD, 3);
        assert_int_equal(th->ev.thread.phase, KEV_PHASE_END);
        assert_int_equal(th->ev.thread.tid, 201);
        assert_string_equal(th->ev.thread.name, "worker");
        th = find(KEV_THREAD, 5);
        assert_int_equal(th->ev.thread.phase, KEV_PHASE_DC_END);
        assert_int_equal(th->ev.thread.tid, 100);

        /* names: the rename and the exec */
        assert_int_equal(count(KEV_THREAD_NAME), 2);
        assert_string_equal(find(KEV_THREAD_NAME, 0)->ev.thread_name.name, "worker");
        assert_int_equal(find(KEV_THREAD_NAME, 0)->ev.thread_name.tid, 201);
        assert_string_equal(find(KEV_THREAD_NAME, 1)->ev.thread_name.name, "newimage");

        /* images: DCStart of the parent, the child's inherited copy (written before its first
           sample, at its time), DCEnd of the parent */
        assert_int_equal(count(KEV_IMAGE), 3);
        const struct cap *im = find(KEV_IMAGE, 1);
        assert_int_equal(im->ev.image.phase, KEV_PHASE_START);
        assert_int_equal(im->ev.image.pid, 200);
        assert_int_equal(im->ev.timestamp, find(KEV_SAMPLE, 0)->ev.timestamp);
        assert_true(im < find(KEV_SAMPLE, 0));
        assert_int_equal(im->ev.image.base, 0x400000);
        assert_string_equal(im->ev.image.file_name, "/usr/bin/parent");
        assert_int_equal(find(KEV_IMAGE, 2)->ev.image.phase, KEV_PHASE_DC_END);
        assert_int_equal(find(KEV_IMAGE, 2)->ev.image.pid, 100);
        const struct cap *id = find_own(ETWTOP_EVENT_IMAGE_IDENTITY, 1);
        assert_int_equal(id->user[30], ETWTOP_IMAGE_FLAG_INHERITED);

        /* every CPU's records are in time order */
        uint64_t last[NR_CPUS] = {0};
        for (uint32_t i = 0; i < nr_caps; i++) {
                if (caps[i].ev.type == KEV_TRACE_HEADER)
                        continue;
                assert_true(caps[i].ev.timestamp >= last[caps[i].ev.cpu]);
                last[caps[i].ev.cpu] = caps[i].ev.timestamp;
        }
}

/* A library mapped into the hole another image's reservation left (ld.so's 2 MiB between its
   text and data, perf 3.4's MMAPs of the whole reservation) cuts that image, it does not
   replace it: a child forked after has the image's parts before and after it, each at its
   file offset (perf.data.forkexit-3.4: a child's sample in ld.so's text was unknown). */
static void test_fork_images_cut(void **state)
{
        (void)state;
        uint64_t t = START + 1000;
        struct perf_conv_process pp = {100, 1, 100, "powerd", "powerd", 1100};
        assert_int_equal(perf_conv_process(g.c, WMI_LOG_TYPE_PROCESS_DC_START, 0, t, &pp), 0);
        const uint64_t ld = 0x7f0000000000, lib = ld + 0x22000;
        struct rb r;
        rb_mmap2(&r, 100, 100, ld, 0x224000, 0, NULL, PROT_READ | PROT_EXEC, "/lib64/ld.so", t + 10,
                 0);
        convert(&r, 0);
        rb_mmap2(&r, 100, 100, lib, 0x49000, 0x1000, NULL, PROT_READ | PROT_EXEC,
                 "/usr/lib64/libdbus.so", t + 20, 0);
        convert(&r, 0);
        rb_task(&r, PERF_RECORD_FORK, 200, 100, 200, 100, t + 30);
        convert(&r, 0);
        rb_profile(&r, 200, 200, ld + 0xeda, t + 40);
        convert(&r, 0);
        read_back();

        struct {
                uint64_t base, size, pgoff;
                const char *path;
        } want[] = {
                {ld, 0x22000, 0, "/lib64/ld.so"},
                {lib + 0x49000, 0x224000 - 0x22000 - 0x49000, 0x22000 + 0x49000, "/lib64/ld.so"},
                {lib, 0x49000, 0x1000, "/usr/lib64/libdbus.so"}};
        bool is_seen[3] = {false, false, false};
        uint32_t n = 0;
        for (uint32_t k = 0; find_own(ETWTOP_EVENT_IMAGE_IDENTITY, k); k++) {
                const struct cap *id = find_own(ETWTOP_EVENT_IMAGE_IDENTITY, k);
                uint64_t base, size, pgoff;
                uint32_t pid;
                memcpy(&base, id->user, 8);
                memcpy(&size, id->user + 8, 8);
                memcpy(&pgoff, id->user + 16, 8);
                memcpy(&pid, id->user + 24, 4);
                if (pid != 200)
                        continue;
                n++;
                for (uint32_t w = 0; w < 3; w++)
                        if (base == want[w].base) {
                                assert_int_equal(size, want[w].size);
                                assert_int_equal(pgoff, want[w].pgoff);
                                assert_string_equal((const char *)id->user + 52, want[w].path);
                                is_seen[w] = true;
                        }
        }
        assert_int_equal(n, 3);
        assert_true(is_seen[0] && is_seen[1] && is_seen[2]);
}

/* A recorded file's sample of a thread no FORK, COMM or rundown named (perf.data.busy.1-3.8: a
   process that started while perf synthesized the others) is its own pid's, as perf report
   has it: one Thread/DCStart from the sample's pid and tid comes before its first sample, none
   before the next, none for a thread already known, and none at all unless asked for. */
static void test_sample_thread_learnt(void **state)
{
        (void)state;
        uint64_t t = START + 1000;
        struct perf_conv_thread known = {300, 300, 120, "known"};
        assert_int_equal(perf_conv_thread(g.c, WMI_LOG_TYPE_THREAD_DC_START, 0, t, &known), 0);
        struct rb r;
        rb_profile(&r, 900, 901, 0x401000, t + 5); /* not asked for: nothing */
        convert(&r, 0);
        perf_conv_set_learn_threads(g.c, true);
        rb_profile(&r, 13600, 13601, 0x401000, t + 10);
        convert(&r, 0);
        rb_profile(&r, 13600, 13601, 0x401010, t + 20);
        convert(&r, 0);
        rb_profile(&r, 300, 300, 0x401020, t + 30);
        convert(&r, 0);
        read_back();

        assert_int_equal(count(KEV_SAMPLE), 4);
        assert_int_equal(count(KEV_THREAD), 2);
        const struct cap *th = find(KEV_THREAD, 1);
        assert_int_equal(th->ev.thread.phase, KEV_PHASE_DC_START);
        assert_int_equal(th->ev.thread.pid, 13600);
        assert_int_equal(th->ev.thread.tid, 13601);
        const struct cap *s = find(KEV_SAMPLE, 1);
        assert_true(th < s);
        assert_int_equal(th->ev.timestamp, s->ev.timestamp);
        assert_true(find(KEV_SAMPLE, 0) < th);
}

/* Issue 13, item 16. Every Process event carries its owner's SID in the TOKEN_USER layout
   Windows writes on x64 (ETL-FORMAT.md 3.8; the samples' bytes: `20 dc 9c fc 88 b4 ff ff | 00 00
   00 00 00 00 00 00 | 01 05 ...`): a non-zero Sid pointer, Attributes and padding (16 bytes),
   then the SID. A Linux user is S-1-22-1-uid (Samba's and NFS's "Unix user" SIDs); an owner
   that cannot be known is the Null SID S-1-0-0. A child has its parent's owner (fork copies the
   credentials) until an exec says otherwise. */

/* What a forked child has from its parent (images) waits for its first sample: a child that
   execs first writes none; a grandchild gets the images its parent had at its fork, pending
   or not; a mapping over a pending image drops it; a second sample writes nothing more. */
static void test_fork_images_pending(void **state)
{
        (void)state;
        uint64_t t = START + 1000;
        struct perf_conv_process pp = {100, 1, 100, "sh", "sh -c loop", 1100};
        assert_int_equal(perf_conv_process(g.c, WMI_LOG_TYPE_PROCESS_DC_START, 0, t, &pp), 0);
        struct perf_conv_image a = {100,           0x400000, 0x1000, 0,
                                    "/usr/bin/sh", NULL,     0,      ETWTOP_IMAGE_FLAG_RUNDOWN};
        struct perf_conv_image b = {100, 0x7f0000000000,           0x2000,
                                    0,   "/usr/lib/libc.so.6",     NULL,
                                    0,   ETWTOP_IMAGE_FLAG_RUNDOWN};
        assert_int_equal(perf_conv_image(g.c, WMI_LOG_TYPE_IMAGE_DC_START, 0, t, &a), 0);
        assert_int_equal(perf_conv_image(g.c, WMI_LOG_TYPE_IMAGE_DC_START, 0, t, &b), 0);

        struct rb r;
        rb_task(&r, PERF_RECORD_FORK, 300, 100, 300, 100, t + 10); /* execs at once */
        convert(&r, 0);
        rb_comm(&r, 300, 300, "true", true, t + 20);
        convert(&r, 0);
        rb_task(&r, PERF_RECORD_FORK, 400, 100, 400, 100, t + 30);
        convert(&r, 0);
        rb_task(&r, PERF_RECORD_FORK, 500, 400, 500, 400, t + 40); /* a grandchild */
        convert(&r, 0);
        rb_mmap2(&r, 400, 400, 0x400000, 0x1000, 0, NULL, PROT_READ | PROT_EXEC, "/usr/bin/other",
                 t + 45, 0);
        convert(&r, 0);
        rb_profile(&r, 500, 500, 0x400010, t + 50);
        convert(&r, 0);
        rb_profile(&r, 400, 400, 0x400020, t + 60);
        convert(&r, 0);
        rb_profile(&r, 500, 500, 0x400030, t + 70);
        convert(&r, 0);
        rb_profile(&r, 300, 300, 0x400040, t + 75); /* exec'd: nothing inherited left */
        convert(&r, 0);
        /* a child that ends before a sample writes none; the next child's still come */
        rb_task(&r, PERF_RECORD_FORK, 600, 100, 600, 100, t + 76);
        convert(&r, 0);
        rb_task(&r, PERF_RECORD_EXIT, 600, 100, 600, 600, t + 77);
        convert(&r, 0);
        rb_task(&r, PERF_RECORD_FORK, 700, 100, 700, 100, t + 78);
        convert(&r, 0);
        rb_profile(&r, 700, 700, 0x400050, t + 79);
        convert(&r, 0);
        assert_int_equal(perf_conv_rundown_end(g.c, 0, t + 80), 0);
        read_back();

        /* the loads (not the rundown's): 400's mapping, then 500's two and 400's libc, each
           at the time of the sample it comes before */
        assert_int_equal(count(KEV_SAMPLE), 5);
        uint64_t at50 = find(KEV_SAMPLE, 0)->ev.timestamp, at60 = find(KEV_SAMPLE, 1)->ev.timestamp;
        uint64_t at79 = find(KEV_SAMPLE, 4)->ev.timestamp;
        struct {
                uint32_t pid;
                uint64_t base, ts;
                const char *path;
        } want[] = {{400, 0x400000, 0, "/usr/bin/other"},
                    {500, 0x400000, at50, "/usr/bin/sh"},
                    {500, 0x7f0000000000, at50, "/usr/lib/libc.so.6"},
                    {400, 0x7f0000000000, at60, "/usr/lib/libc.so.6"},
                    {700, 0x400000, at79, "/usr/bin/sh"},
                    {700, 0x7f0000000000, at79, "/usr/lib/libc.so.6"}};
        uint32_t n = 0, nr_dc_end = 0;
        for (uint32_t i = 0; i < nr_caps; i++) {
                const struct cap *im = &caps[i];
                if (im->ev.type != KEV_IMAGE)
                        continue;
                nr_dc_end += im->ev.image.phase == KEV_PHASE_DC_END;
                if (im->ev.image.phase != KEV_PHASE_START)
                        continue;
                assert_true(n < sizeof(want) / sizeof(want[0]));
                assert_int_equal(im->ev.image.pid, want[n].pid);
                assert_int_equal(im->ev.image.base, want[n].base);
                if (want[n].ts)
                        assert_int_equal(im->ev.timestamp, want[n].ts);
                else
                        assert_true(im->ev.timestamp < at50);
                assert_string_equal(im->ev.image.file_name, want[n].path);
                n++;
        }
        assert_int_equal(n, 6);
        /* the identity events say which loads are inherited */
        uint32_t nr_inherited = 0;
        for (uint32_t k = 0; find_own(ETWTOP_EVENT_IMAGE_IDENTITY, k); k++) {
                const struct cap *id = find_own(ETWTOP_EVENT_IMAGE_IDENTITY, k);
                nr_inherited += (id->user[30] & ETWTOP_IMAGE_FLAG_INHERITED) != 0;
        }
        assert_int_equal(nr_inherited, 5);
        /* the rundown at the end lists what each process has: 100, 500 and 700 two each, 400
           two (other and libc), 300 none, 600 ended */
        assert_int_equal(nr_dc_end, 8);
}

static void test_process_sid(void **state)
{
        (void)state;
        uint64_t t = START + 1000;
        struct perf_conv_process pp = {100, 1, 100, "parent", "parent --serve", 1100};
        assert_int_equal(perf_conv_process(g.c, WMI_LOG_TYPE_PROCESS_DC_START, 0, t, &pp), 0);
        struct perf_conv_process gone = {300, 1, 300, "gone", "", PERF_CONV_NO_UID};
        assert_int_equal(perf_conv_process(g.c, WMI_LOG_TYPE_PROCESS_DC_START, 0, t, &gone), 0);
        struct rb r;
        rb_task(&r, PERF_RECORD_FORK, 150, 100, 150, 100, t + 10); /* uid_of says 1150 */
        convert(&r, 0);
        rb_comm(&r, 150, 150, "setuid", true, t + 20); /* exec: now as uid_of says */
        convert(&r, 0);
        rb_task(&r, PERF_RECORD_FORK, 400, 300, 400, 300, t + 30); /* nobody knows */
        convert(&r, 0);
        assert_int_equal(perf_conv_rundown_end(g.c, 0, t + 40), 0);
        read_back();

        static const struct {
                uint32_t pid;
                enum kevent_phase phase;
                const char *sid;
        } want[] = {
                {100, KEV_PHASE_DC_START, "S-1-22-1-1100"}, {300, KEV_PHASE_DC_START, "S-1-0-0"},
                {150, KEV_PHASE_START, "S-1-22-1-1100"},    {150, KEV_PHASE_START, "S-1-22-1-1150"},
                {400, KEV_PHASE_START, "S-1-0-0"},
        };
        for (uint32_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
                const struct cap *p = find(KEV_PROCESS, i);
                assert_non_null(p);
                assert_int_equal(p->ev.process.pid, want[i].pid);
                assert_int_equal(p->ev.process.phase, want[i].phase);
                assert_string_equal(p->ev.process.user_sid, want[i].sid);
        }
        for (uint32_t i = 0; i < count(KEV_PROCESS); i++) /* the DCEnd rundown too */
                assert_true(find(KEV_PROCESS, i)->ev.process.user_sid[0] == 'S');

        /* the bytes: v4, UserSID at 36 */
        const struct cap *p = find(KEV_PROCESS, 0);
        const uint8_t *u = p->user;
        uint64_t sid_pointer;
        uint32_t low;
        memcpy(&sid_pointer, u + 36, 8);
        memcpy(&low, u + 36, 4);
        assert_true(sid_pointer != 0 && low != 0); /* readers test either for "no SID" */
        static const uint8_t zero8[8] = {0};
        assert_memory_equal(u + 44, zero8, 8); /* Attributes, padding */
        static const uint8_t sid[] = {1, 2, 0, 0, 0, 0, 0, 22, 1, 0, 0, 0, 0x4c, 0x04, 0, 0};
        assert_memory_equal(u + 52, sid, sizeof(sid)); /* S-1-22-1-1100 */
        assert_string_equal((const char *)u + 68, "parent");
        p = find(KEV_PROCESS, 1);
        static const uint8_t null_sid[] = {1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
        assert_memory_equal(p->user + 52, null_sid, sizeof(null_sid));
        assert_string_equal((const char *)p->user + 64, "gone");
}

/* Issue 13, item 6. -p: the traced process's threads only. Its samples, switches (out: its
   sched_switch; in: the whole CPU's switch-in record, which names the thread replaced), wake-ups
   by it and of it, its new threads; nothing of another process (a child process included)
   except as the other side of one of its own threads' switches and wake-ups. That other side's
   state comes from its CPU-wide switch-out record: preempted (still runnable) or blocked. */
static void test_pid_only(void **state)
{
        (void)state;
        assert_int_equal(perf_tp_format_parse(waking_format, strlen(waking_format), &fmt_waking),
                         0);
        struct perf_conv_event prof = {.kind = PERF_CONV_PROFILE,
                                       .sample_type =
                                               SAMPLE_ID | PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD};
        add_event(101, &prof);
        struct perf_conv_event cs = switch_event(false, false);
        add_event(102, &cs);
        struct perf_conv_event wk = {.kind = PERF_CONV_READY_THREAD,
                                     .sample_type = SAMPLE_ID | PERF_SAMPLE_IP | PERF_SAMPLE_RAW,
                                     .tp = &fmt_waking};
        add_event(103, &wk);
        struct perf_conv_event sb = {.kind = PERF_CONV_SIDEBAND, .sample_type = SAMPLE_ID};
        add_event(1, &sb); /* rb_task's and rb_comm's id */
        add_event(104, &sb);
        const int32_t tids[] = {500, 501};
        perf_conv_set_process(g.c, 500, tids, 2);

        struct rb r;
        uint64_t t = START + 200000;
        rb_sample_head(&r, 101, 0x401000, 500, 501, t + 1, 0, true); /* kept */
        rb_end(&r);
        convert(&r, 0);
        rb_sample_head(&r, 101, 0x402000, 600, 601, t + 2, 0, true); /* another process */
        rb_end(&r);
        convert(&r, 0);
        rb_task(&r, PERF_RECORD_FORK, 500, 500, 503, 500, t + 3); /* a new thread: kept */
        convert(&r, 0);
        rb_task(&r, PERF_RECORD_FORK, 510, 500, 510, 500, t + 4); /* a child process: not */
        convert(&r, 0);
        rb_comm(&r, 510, 510, "child", true, t + 5);
        convert(&r, 0);
        rb_mmap2(&r, 510, 510, 0x7f0000000000ull, 0x1000, 0, NULL, PROT_READ | PROT_EXEC,
                 "/usr/lib/libchild.so", t + 6, 0);
        convert(&r, 0);
        rb_task(&r, PERF_RECORD_EXIT, 510, 500, 510, 510, t + 7);
        convert(&r, 0);
        rb_sched_switch(&r, 102, 601, 602, 0x1, t + 8, 0); /* another process's switch */
        memcpy(r.b + 24, &(uint64_t){(uint64_t)601 << 32 | 600}, 8);
        convert(&r, 0);
        rb_sched_switch(&r, 102, 503, 605, 0x1, t + 9, 0); /* its new thread leaves */
        memcpy(r.b + 24, &(uint64_t){(uint64_t)503 << 32 | 500}, 8);
        convert(&r, 0);
        /* CPU 1: 601 is preempted by 500; CPU 0: 602 blocks and 501 runs */
        rb_begin(&r, PERF_RECORD_SWITCH_CPU_WIDE,
                 PERF_RECORD_MISC_SWITCH_OUT | PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
        rb_u32(&r, 500);
        rb_u32(&r, 500);
        rb_sample_id(&r, 600, 601, t + 10, 1, 104);
        rb_end(&r);
        assert_false(perf_conv_skips(g.c, r.b, r.n)); /* it says how 500's other side left */
        convert(&r, 1);
        rb_switch(&r, true, false, 500, 601, t + 11, 1, 104);
        convert(&r, 1);
        rb_switch(&r, true, true, 602, 501, t + 12, 0, 104);
        convert(&r, 0);
        rb_switch(&r, true, false, 501, 602, t + 13, 0, 104);
        convert(&r, 0);
        rb_switch(&r, true, true, 608, 609, t + 14, 0, 104); /* others' switch: nothing */
        assert_false(perf_conv_skips(g.c, r.b, r.n)); /* 609 might be one of its, learnt later */
        convert(&r, 0);
        rb_switch(&r, true, false, 609, 608, t + 15, 0, 104);
        convert(&r, 0);
        /* wake-ups: of 500 by another process, of another by 500, of others by others */
        uint8_t raw[36] = {0};
        static const uint32_t wakes[][3] = {{600, 601, 500}, {500, 500, 611}, {600, 601, 611}};
        for (uint32_t i = 0; i < 3; i++) {
                put_at(raw, &fmt_waking, "pid", wakes[i][2]);
                rb_tp_sample(&r, 103, 0xffffffff81900000ull, wakes[i][0], wakes[i][1], t + 16 + i,
                             0, sizeof(raw), raw, sizeof(raw));
                convert(&r, 0);
        }
        /* CPU 1: 500 leaves for 620, which exits: the kernel names a task that is gone -1 in the
           switch-in record; its switch-out record says which it was */
        rb_sched_switch(&r, 102, 500, 620, 0x1, t + 20, 1);
        convert(&r, 1);
        rb_switch(&r, true, true, 620, 500, t + 21, 1, 104);
        convert(&r, 1);
        rb_switch(&r, true, false, 500, 0xFFFFFFFFu, t + 22, 1, 104);
        convert(&r, 1);
        struct perf_conv_stats st;
        perf_conv_get_stats(g.c, &st);
        assert_int_equal(st.nr_bad, 0);
        assert_int_equal(st.nr_foreign, 7); /* the records of 600, 510 and 611 */
        read_back();

        assert_int_equal(count(KEV_SAMPLE), 1);
        assert_int_equal(find(KEV_SAMPLE, 0)->ev.sample.tid, 501);
        assert_int_equal(count(KEV_PROCESS), 0);
        assert_int_equal(count(KEV_THREAD), 1);
        assert_int_equal(find(KEV_THREAD, 0)->ev.thread.tid, 503);
        assert_int_equal(count(KEV_THREAD_NAME), 0);
        assert_int_equal(count(KEV_IMAGE), 0);
        assert_int_equal(count(KEV_CSWITCH), 5);
        const struct cap *c = find(KEV_CSWITCH, 4);
        assert_int_equal(c->ev.cswitch.new_tid, 500);
        assert_int_equal(c->ev.cswitch.old_tid, 620);
        assert_int_equal(c->ev.cswitch.old_state, 4); /* Terminated */
        assert_int_equal(c->ev.cswitch.old_wait_reason, 22);
        c = find(KEV_CSWITCH, 0);
        assert_int_equal(c->ev.cswitch.old_tid, 503);
        assert_int_equal(c->ev.cswitch.new_tid, 605);
        c = find(KEV_CSWITCH, 1);
        assert_int_equal(c->ev.cpu, 1);
        assert_int_equal(c->ev.cswitch.new_tid, 500);
        assert_int_equal(c->ev.cswitch.old_tid, 601); /* the switch-in record says which */
        assert_int_equal(c->ev.cswitch.old_state, 1);
        assert_int_equal(c->ev.cswitch.old_wait_reason, 32); /* preempted */
        c = find(KEV_CSWITCH, 2);
        assert_int_equal(c->ev.cswitch.new_tid, 501);
        assert_int_equal(c->ev.cswitch.old_tid, 602);
        assert_int_equal(c->ev.cswitch.old_state, 5);
        assert_int_equal(c->ev.cswitch.old_wait_reason, 6); /* blocked, not Executive */
        assert_int_equal(count(KEV_READY_THREAD), 2);
        assert_int_equal(find(KEV_READY_THREAD, 0)->ev.ready_thread.tid, 500);
        assert_int_equal(find(KEV_READY_THREAD, 0)->ev.ready_thread.readying_tid, 601);
        assert_int_equal(find(KEV_READY_THREAD, 1)->ev.ready_thread.tid, 611);
        assert_int_equal(find(KEV_READY_THREAD, 1)->ev.ready_thread.readying_tid, 500);
}

static void test_lost_and_kernel_symbols(void **state)
{
        (void)state;
        struct rb r;
        rb_begin(&r, PERF_RECORD_LOST, 0);
        rb_u64(&r, 11);
        rb_u64(&r, 42);
        rb_sample_id(&r, 0, 0, START + 50, 1, 11);
        rb_end(&r);
        convert(&r, 1);

        struct perf_conv_event ev = {.kind = PERF_CONV_PROFILE,
                                     .sample_type = SAMPLE_ID | PERF_SAMPLE_IP};
        add_event(51, &ev);
        rb_sample_head(&r, 51, 0xffffffff81000120ull, 0, 0, START + 60, 1, false);
        rb_end(&r);
        convert(&r, 1);
        struct perf_conv_stats st;
        perf_conv_get_stats(g.c, &st);
        assert_int_equal(st.nr_lost_records, 1);
        assert_int_equal(st.nr_lost, 42);

        const struct perf_ksym syms[] = {
                {0xffffffff81000000ull, 0x100, "_stext", ""},
                {0xffffffff81000100ull, 0x80, "pv_native_safe_halt", ""},
                {0xffffffff81000180ull, 0x80, "other", ""},
                {0xffffffffc0000000ull, 0x40, "ext4_fn", "ext4"},
        };
        assert_int_equal(perf_conv_kernel_symbols(g.c, syms, 4, 1, START + 70), 1);
        read_back();

        const struct cap *l = find_own(ETWTOP_EVENT_EVENTS_LOST, 0);
        assert_non_null(l);
        uint32_t cpu, reason;
        uint64_t n;
        memcpy(&cpu, l->user, 4);
        memcpy(&reason, l->user + 4, 4);
        memcpy(&n, l->user + 8, 8);
        assert_int_equal(cpu, 1);
        assert_int_equal(reason, ETWTOP_LOST_REASON_RECORD_LOST);
        assert_int_equal(n, 42);

        const struct cap *k = find_own(ETWTOP_EVENT_KERNEL_SYMBOL, 0);
        assert_non_null(k);
        assert_null(find_own(ETWTOP_EVENT_KERNEL_SYMBOL, 1));
        uint64_t addr, size;
        memcpy(&addr, k->user, 8);
        memcpy(&size, k->user + 8, 8);
        assert_int_equal(addr, 0xffffffff81000100ull);
        assert_int_equal(size, 0x80);
        assert_string_equal((const char *)k->user + 16, "pv_native_safe_halt");
}

/* Samples at a couple of hundred kernel addresses in no order, some twice, some between symbols:
   one KernelSymbol event for each symbol hit, in the symbols' order, as a search of the whole list
   for each address names them (the look-up walks the symbols once, the addresses sorted). */
static void test_kernel_symbols_of_many_addresses(void **state)
{
        (void)state;
        enum { NR_SYMS = 300, NR_SAMPLES = 200 }; /* within the captures' 512 */
        static struct perf_ksym syms[NR_SYMS];
        static char names[NR_SYMS][16];
        uint64_t a = 0xffffffff81000000ull;
        for (uint32_t i = 0; i < NR_SYMS; i++) {
                snprintf(names[i], sizeof(names[i]), "k%u", i);
                /* every fifth followed by a gap no symbol covers */
                syms[i] = (struct perf_ksym){a, 0x40 + 0x10 * (i % 7), names[i], ""};
                a += syms[i].size + (i % 5 == 4 ? 0x100 : 0);
        }
        struct perf_conv_event ev = {.kind = PERF_CONV_PROFILE,
                                     .sample_type = SAMPLE_ID | PERF_SAMPLE_IP};
        add_event(51, &ev);
        bool want[NR_SYMS] = {false};
        uint64_t seed = 7;
        for (uint32_t k = 0; k < NR_SAMPLES; k++) {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                uint64_t ip = 0xffffffff81000000ull + (seed >> 33) % (a - 0xffffffff81000000ull);
                for (uint32_t i = 0; i < NR_SYMS; i++)
                        if (syms[i].addr <= ip && ip - syms[i].addr < syms[i].size)
                                want[i] = true;
                struct rb r;
                rb_sample_head(&r, 51, ip, 0, 0, START + 10 + k, 1, false);
                rb_end(&r);
                convert(&r, 1);
        }
        uint32_t nr_want = 0;
        for (uint32_t i = 0; i < NR_SYMS; i++)
                nr_want += want[i];
        assert_int_equal(perf_conv_kernel_symbols(g.c, syms, NR_SYMS, 1, START + 5000), nr_want);
        read_back();
        uint32_t n = 0;
        for (uint32_t i = 0; i < NR_SYMS; i++) {
                if (!want[i])
                        continue;
                const struct cap *k = find_own(ETWTOP_EVENT_KERNEL_SYMBOL, n++);
                assert_non_null(k);
                uint64_t addr;
                memcpy(&addr, k->user, 8);
                assert_int_equal(addr, syms[i].addr);
                assert_string_equal((const char *)k->user + 16, names[i]);
        }
        assert_null(find_own(ETWTOP_EVENT_KERNEL_SYMBOL, n));
        print_message("%u samples, %u symbols of %u named\n", (unsigned)NR_SAMPLES, nr_want,
                      (unsigned)NR_SYMS);
}

/* A sched_switch sample of prev (of pid) to next, at ts on CPU 1, with event 33. */
static void switch_sample(uint32_t pid, uint32_t prev, uint32_t next, uint64_t ts)
{
        uint8_t raw[64] = {0};
        put_at(raw, &fmt_switch, "prev_pid", (int32_t)prev);
        put_at(raw, &fmt_switch, "prev_prio", 120);
        put_at(raw, &fmt_switch, "prev_state", 0x1); /* S */
        put_at(raw, &fmt_switch, "next_pid", (int32_t)next);
        put_at(raw, &fmt_switch, "next_prio", 120);
        struct rb r;
        rb_tp_sample(&r, 33, 0xffffffff81800000ull, pid, prev, ts, 1, sizeof(raw), raw,
                     sizeof(raw));
        convert(&r, 1);
}

/* OldThreadWaitMode is 0 for a kernel thread (a child of kthreadd): the converter's answer for
   a thread follows its tables (here its process's parent, said again by a later rundown), not
   the answer it gave at the thread's last switch. */
static void test_cswitch_wait_mode_follows_tables(void **state)
{
        (void)state;
        struct perf_conv_event ev = switch_event(false, false);
        add_event(33, &ev);
        struct perf_conv_process pp = {700, 1, 0, "worker", "", 0};
        struct perf_conv_thread pt = {700, 701, 120, "worker"};
        assert_int_equal(perf_conv_process(g.c, WMI_LOG_TYPE_PROCESS_DC_START, 1, START, &pp), 0);
        assert_int_equal(perf_conv_thread(g.c, WMI_LOG_TYPE_THREAD_DC_START, 1, START, &pt), 0);
        switch_sample(700, 701, 800, START + 100);
        switch_sample(800, 800, 701, START + 200);
        pp.ppid = 2; /* the same process said again: kthreadd's child */
        assert_int_equal(perf_conv_process(g.c, WMI_LOG_TYPE_PROCESS_DC_START, 1, START + 250, &pp),
                         0);
        switch_sample(700, 701, 800, START + 300);
        read_back();
        assert_int_equal(count(KEV_CSWITCH), 3);
        const uint32_t want_mode[] = {1, 1, 0};
        for (uint32_t i = 0; i < 3; i++) {
                const struct cap *c = find(KEV_CSWITCH, i);
                assert_non_null(c);
                assert_int_equal(c->ev.cswitch.old_tid, i == 1 ? 800 : 701);
                assert_int_equal(c->ev.cswitch.old_wait_mode, want_mode[i]);
        }
}

/* The kernel range (perf_conv_kernel_range) spans the kernel addresses of kernel context only;
   a kernel-looking value in user context (garbage) is still noted for the symbol events, and the
   same address met later in kernel context widens the range (the converter's cache of addresses
   seen holds kernel-context ones only). */
static void test_kernel_range_user_garbage(void **state)
{
        (void)state;
        struct perf_conv_event ev = {.kind = PERF_CONV_PROFILE,
                                     .sample_type =
                                             SAMPLE_ID | PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN,
                                     .has_stack = true};
        add_event(71, &ev);
        const uint64_t garbage = 0xffffffffa0000010ull;
        uint64_t lo, hi;
        assert_false(perf_conv_kernel_range(g.c, &lo, &hi));
        struct rb r;
        for (int round = 0; round < 3; round++) {
                rb_sample_head(&r, 71, 0xffffffff81000100ull, 300, 301,
                               START + 100 + (uint64_t)round, 1, false);
                rb_u64(&r, 5);
                rb_u64(&r, (uint64_t)PERF_CONTEXT_KERNEL);
                rb_u64(&r, 0xffffffff81000100ull);
                rb_u64(&r, (uint64_t)PERF_CONTEXT_USER);
                rb_u64(&r, garbage); /* twice in a row: the second is the cache's */
                rb_u64(&r, garbage);
                rb_end(&r);
                convert(&r, 1);
        }
        assert_true(perf_conv_kernel_range(g.c, &lo, &hi));
        assert_int_equal(lo, 0xffffffff81000100ull);
        assert_int_equal(hi, 0xffffffff81000100ull);

        rb_sample_head(&r, 71, garbage, 300, 301, START + 200, 1, false);
        rb_u64(&r, 3);
        rb_u64(&r, (uint64_t)PERF_CONTEXT_KERNEL);
        rb_u64(&r, garbage);
        rb_u64(&r, 0xffffffff81000100ull);
        rb_end(&r);
        convert(&r, 1);
        assert_true(perf_conv_kernel_range(g.c, &lo, &hi));
        assert_int_equal(lo, 0xffffffff81000100ull);
        assert_int_equal(hi, garbage);

        const struct perf_ksym syms[] = {
                {0xffffffff81000100ull, 0x80, "pv_native_safe_halt", ""},
                {0xffffffffa0000000ull, 0x40, "mod_fn", "mod"},
        };
        assert_int_equal(perf_conv_kernel_symbols(g.c, syms, 2, 1, START + 300), 2);
}

/* A sample's raw data (its size, the bytes, padded), and the record ended. */
static void rb_raw(struct rb *r, const void *raw, uint32_t size)
{
        rb_u32(r, size);
        rb_bytes(r, raw, size);
        rb_pad8(r);
        rb_end(r);
}

/* Tracepoints' chains come back (a switch's, a wake-up's: schedule() from the same few paths)
   and are kept whole by a hash of a few of their entries (chain_kept_to): wake-ups' chains that
   share their kernel
   frames but not their length, their user frames or the entry after their kernel run, more of
   them than the kept ones' slots, each sent twice and in turn, every stack as its own chain
   says; one too long to be kept; the kernel range and the addresses noted as frame by frame. */
static void test_kept_chains(void **state)
{
        (void)state;
        add_waking_event();
        uint8_t raw[36] = {0};
        put_at(raw, &fmt_waking, "pid", 777);
        const uint64_t kbase = 0xffffffff81000100ull, garbage = 0xffffffffa0000010ull;
        enum { NR_VARIANTS = 48, NR_LONG = 45 };
        struct rb r;
        uint64_t ts = START + 5000;
        uint32_t nr_sent = 0;
        uint64_t want[NR_VARIANTS][16];
        uint32_t nr_want[NR_VARIANTS];
        for (uint32_t round = 0; round < 3; round++) {
                for (uint32_t v = 0; v < NR_VARIANTS; v++) {
                        /* kernel frames 3 to 6 of the same path, then user frames that part by
                           the variant: some chains the same but for their last entry, some
                           one's without its last; variant 7's user part has a kernel-looking
                           value */
                        uint32_t nr_k = 3 + v % 4, n = 0;
                        uint64_t chain[16];
                        chain[n++] = (uint64_t)PERF_CONTEXT_KERNEL;
                        for (uint32_t i = 0; i < nr_k; i++)
                                chain[n++] = kbase + 0x40 * i;
                        chain[n++] = (uint64_t)PERF_CONTEXT_USER;
                        chain[n++] = v == 7 ? garbage : 0x401000 + 0x10 * (v / 8 % 3);
                        chain[n++] = 0x400800;
                        if (v < NR_VARIANTS / 2)
                                chain[n++] = 0x400100 + 0x10 * (v / 4 % 2);
                        nr_want[v] = 0;
                        for (uint32_t i = 0; i < n; i++) {
                                if (chain[i] < (uint64_t)PERF_CONTEXT_MAX)
                                        want[v][nr_want[v]++] = chain[i];
                        }
                        rb_sample_head(&r, 41, kbase, 300, 301, ts++, 1, false);
                        rb_u64(&r, n);
                        for (uint32_t i = 0; i < n; i++)
                                rb_u64(&r, chain[i]);
                        rb_raw(&r, raw, sizeof(raw));
                        convert(&r, 1);
                        nr_sent++;
                }
        }
        /* a chain of more entries than a kept one holds, twice */
        for (uint32_t round = 0; round < 2; round++) {
                rb_sample_head(&r, 41, kbase, 300, 301, ts++, 1, false);
                rb_u64(&r, 1 + NR_LONG);
                rb_u64(&r, (uint64_t)PERF_CONTEXT_KERNEL);
                for (uint32_t i = 0; i < NR_LONG; i++)
                        rb_u64(&r, kbase + 0x40 * i);
                rb_raw(&r, raw, sizeof(raw));
                convert(&r, 1);
        }
        read_back();

        assert_int_equal(count(KEV_STACK), nr_sent + 2);
        for (uint32_t k = 0; k < nr_sent; k++) {
                uint32_t v = k % NR_VARIANTS;
                const struct cap *s = find(KEV_STACK, k);
                assert_int_equal(s->ev.stack.nr_frames, nr_want[v]);
                assert_memory_equal(s->ev.stack.frames, want[v], 8 * nr_want[v]);
        }
        for (uint32_t k = 0; k < 2; k++) {
                const struct cap *s = find(KEV_STACK, nr_sent + k);
                assert_int_equal(s->ev.stack.nr_frames, NR_LONG);
                for (uint32_t i = 0; i < NR_LONG; i++)
                        assert_int_equal(s->ev.stack.frames[i], kbase + 0x40 * i);
        }
        uint64_t lo, hi;
        assert_true(perf_conv_kernel_range(g.c, &lo, &hi));
        assert_int_equal(lo, kbase);
        assert_int_equal(hi, kbase + 0x40 * (NR_LONG - 1)); /* not the garbage */
        size_t nr = 0;
        uint64_t *addrs = perf_conv_kernel_addrs(g.c, &nr);
        assert_int_equal(nr, NR_LONG + 1); /* the garbage among them, once */
        bool has_garbage = false;
        for (size_t i = 0; i < nr; i++) {
                has_garbage |= addrs[i] == garbage;
                if (i) /* ascending, for perf_conv_kernel_symbols' one walk */
                        assert_true(addrs[i - 1] < addrs[i]);
        }
        assert_true(has_garbage);
        free(addrs);
}

/* A CSwitch's chain that is a kept one is shared by its thread's kept stack rather than copied
   (conv_stack_share): its frames must stay the switch-out's until the switch-in writes them,
   though more chains than the kept ones (32) push it out of its slot meanwhile, another thread
   shares it, its thread leaves again with another chain, or the stacks are turned off and on. */
static void test_switch_stacks_share_kept_chains(void **state)
{
        (void)state;
        struct perf_conv_event on = switch_event(true, true);
        add_event(95, &on);
        struct perf_conv_event off = on;
        off.has_stack = false;
        add_event(97, &off);
        enum { NR_THREADS = 100, FIRST = 1001 };
        uint64_t chains[NR_THREADS + 1][5];
        for (uint32_t j = 0; j <= NR_THREADS; j++) {
                chains[j][0] = (uint64_t)PERF_CONTEXT_KERNEL;
                chains[j][1] = 0xffffffff81800000ull + 0x100 * j;
                chains[j][2] = 0xffffffff81a00000ull + 8 * (j % 3);
                chains[j][3] = (uint64_t)PERF_CONTEXT_USER;
                chains[j][4] = 0x401000 + 0x10 * j;
        }
        struct rb r;
        uint64_t t = START + 200000;
        /* thread j leaves with chain j; thread FIRST + NR_THREADS shares chain 0 at once, and
           thread FIRST + 1 leaves again with the last chain */
        for (uint32_t j = 0; j < NR_THREADS; j++) {
                rb_sched_switch_chain(&r, 95, 1000, FIRST + j, 0, 0x1, t++, 0, chains[j], 5);
                convert(&r, 0);
                if (j == 0) {
                        rb_sched_switch_chain(&r, 95, 1000, FIRST + NR_THREADS, 0, 0x1, t++, 0,
                                              chains[0], 5);
                        convert(&r, 0);
                }
        }
        rb_sched_switch_chain(&r, 95, 1000, FIRST + 1, 0, 0x1, t++, 0, chains[NR_THREADS], 5);
        convert(&r, 0);
        /* every thread switched in, the shared chain's two threads last */
        for (uint32_t j = NR_THREADS; j-- > 1;) {
                rb_sched_switch_chain(&r, 95, 0, 0, FIRST + j, 0x0, t++, 0, NULL, 0);
                convert(&r, 0);
        }
        rb_sched_switch_chain(&r, 95, 0, 0, FIRST + NR_THREADS, 0x0, t++, 0, NULL, 0);
        convert(&r, 0);
        rb_sched_switch_chain(&r, 95, 0, 0, FIRST, 0x0, t++, 0, NULL, 0);
        convert(&r, 0);
        /* thread FIRST leaves with chain 2 (shared again), the stacks go off and on: none */
        rb_sched_switch_chain(&r, 95, 1000, FIRST, 0, 0x1, t++, 0, chains[2], 5);
        convert(&r, 0);
        rb_sched_switch_chain(&r, 97, 0, 0, FIRST + 2, 0x0, t++, 0, NULL, 0);
        convert(&r, 0);
        rb_sched_switch_chain(&r, 95, 1000, FIRST + 2, FIRST, 0x1, t++, 0, chains[1], 5);
        convert(&r, 0);
        read_back();

        assert_int_equal(count(KEV_STACK), NR_THREADS + 1);
        for (uint32_t i = 0; i <= NR_THREADS; i++) {
                const struct cap *k = find(KEV_STACK, i);
                uint32_t tid = (uint32_t)k->ev.stack.tid;
                uint32_t j = i < NR_THREADS - 1 ? NR_THREADS - 1 - i : 0;
                if (i == NR_THREADS - 1)
                        assert_int_equal(tid, FIRST + NR_THREADS);
                else
                        assert_int_equal(tid, FIRST + j);
                if (tid == FIRST + 1)
                        j = NR_THREADS; /* its second switch-out's */
                assert_int_equal(k->ev.stack.nr_frames, 3);
                assert_int_equal(k->frames[0], chains[j][1]);
                assert_int_equal(k->frames[1], chains[j][2]);
                assert_int_equal(k->frames[2], chains[j][4]);
        }
}

static void test_bad_records(void **state)
{
        (void)state;
        struct perf_conv_event ev = {.kind = PERF_CONV_PROFILE,
                                     .sample_type =
                                             SAMPLE_ID | PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN,
                                     .has_stack = true};
        add_event(61, &ev);
        struct rb r;
        rb_sample_head(&r, 61, 0x401000, 1, 1, START + 10, 0, false);
        rb_u64(&r, 1000); /* frames past the record */
        rb_u64(&r, 0x401000);
        rb_end(&r);
        assert_int_equal(perf_conv_record(g.c, 0, r.b, r.n), -EBADMSG);
        assert_int_equal(perf_conv_record(g.c, 0, r.b, 6), -EBADMSG);
        rb_sample_head(&r, 61, 0x401000, 1, 1, START + 10, 0, false);
        rb_end(&r);
        assert_int_equal(perf_conv_record(g.c, 0, r.b, r.n), -EBADMSG); /* no callchain */
        /* a tracepoint's sample without its raw data, each kind that reads it */
        static const enum perf_conv_kind tp_kinds[3] = {PERF_CONV_CSWITCH, PERF_CONV_READY_THREAD,
                                                        PERF_CONV_CPU_IDLE};
        for (uint32_t i = 0; i < 3; i++) {
                struct perf_conv_event tp = {.kind = tp_kinds[i],
                                             .sample_type = SAMPLE_ID | PERF_SAMPLE_IP};
                add_event(62 + i, &tp);
                rb_sample_head(&r, 62 + i, 0xffffffff81001000, 1, 1, START + 10, 0, false);
                rb_end(&r);
                assert_int_equal(perf_conv_record(g.c, 0, r.b, r.n), -EBADMSG);
        }
        /* an unknown id is skipped, not an error */
        rb_sample_head(&r, 999, 0x401000, 1, 1, START + 10, 0, false);
        rb_end(&r);
        assert_int_equal(perf_conv_record(g.c, 0, r.b, r.n), 0);
        struct perf_conv_stats st;
        perf_conv_get_stats(g.c, &st);
        assert_int_equal(st.nr_bad, 6);
        assert_int_equal(st.nr_unknown_id, 1);
        assert_int_equal(st.nr_events, 0);

        /* PERF_FORMAT_LOST as read(2) returns it */
        uint64_t buf[] = {2, 10, 100, 3, 20, 101, 4};
        uint64_t lost;
        assert_int_equal(perf_read_lost((const uint8_t *)buf, sizeof(buf),
                                        PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_LOST,
                                        &lost),
                         0);
        assert_int_equal(lost, 7);
        uint64_t one[] = {5, 9, 12};
        assert_int_equal(perf_read_lost((const uint8_t *)one, sizeof(one),
                                        PERF_FORMAT_ID | PERF_FORMAT_LOST, &lost),
                         0);
        assert_int_equal(lost, 12);
        assert_int_equal(
                perf_read_lost((const uint8_t *)one, 8, PERF_FORMAT_ID | PERF_FORMAT_LOST, &lost),
                -EBADMSG);
}

/* A sample that parses but whose record the emit hook refuses, with any error (here the one
   a record that does not parse gets): the hook's error is returned, and the sample is not
   counted among those that did not parse (nr_bad). */
static void test_emit_error_not_bad(void **state)
{
        (void)state;
        struct perf_conv_event ev = {.kind = PERF_CONV_PROFILE,
                                     .sample_type = SAMPLE_ID | PERF_SAMPLE_IP};
        add_event(61, &ev);
        struct rb r;
        rb_sample_head(&r, 61, 0x401000, 1, 1, START + 10, 0, false);
        rb_end(&r);
        g.emit_rc = -EBADMSG;
        assert_int_equal(perf_conv_record(g.c, 0, r.b, r.n), -EBADMSG);
        g.emit_rc = -ENOSPC;
        assert_int_equal(perf_conv_record(g.c, 0, r.b, r.n), -ENOSPC);
        struct perf_conv_stats st;
        perf_conv_get_stats(g.c, &st);
        assert_int_equal(st.nr_bad, 0);
        assert_int_equal(st.nr_records, 2);
}

/* The writer's sink hooks counted: reserves, and the room hook's calls and rooms found. */
static struct {
        uint32_t nr_reserves, nr_rooms, nr_room_hits;
} sk;

static uint8_t *counted_reserve(void *ctx, uint32_t cpu, uint32_t max_size)
{
        sk.nr_reserves++;
        return etl_writer_sink_reserve(ctx, cpu, max_size);
}

static uint8_t *counted_room(void *ctx, uint32_t cpu, uint32_t max_size)
{
        sk.nr_rooms++;
        uint8_t *room = etl_writer_sink_room(ctx, cpu, max_size);
        sk.nr_room_hits += room != NULL;
        return room;
}

/* A fresh writer (to name in g.dir) and converter in g, the sink as mode says: 0 none (every
   record through emit), 1 reserve and commit, 2 with the room hook too. */
static void start_sink_mode(uint32_t mode, const char *name)
{
        perf_conv_free(g.c);
        etl_writer_free(g.w);
        snprintf(g.path, sizeof(g.path), "%s/%s", g.dir, name);
        struct etl_writer_config cfg = writer_config();
        assert_int_equal(etl_writer_new(&g.w, &cfg), 0);
        struct etl_error err;
        assert_int_equal(etl_writer_open_file(g.w, g.path, true, &err), 0);
        struct perf_conv_ops ops = {hook_emit,        hook_event_of,   hook_cmdline_of,
                                    hook_build_id_of, hook_wait_sites, hook_uid_of};
        assert_int_equal(perf_conv_new(&g.c, &ops, NULL, NR_CPUS), 0);
        PERFINFO_GROUPMASK m = {
                {EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD | EVENT_TRACE_FLAG_IMAGE_LOAD}};
        perf_conv_set_masks(g.c, &m);
        if (mode)
                perf_conv_set_sink(g.c,
                                   &(struct perf_conv_sink){counted_reserve, etl_writer_sink_commit,
                                                            mode == 2 ? counted_room : NULL, g.w});
        memset(&sk, 0, sizeof(sk));
}

/* Two CPUs' timer samples, wake-ups and switches, each with its frame-pointer chain of 1 to 48
   entries (the switches' from a few kept chains, so that shared ones come too), enough for
   several buffers a CPU, and now and then a switch of an event whose CSwitch stacks are off (97):
   the converter's records as its mode's sink makes them. Returns how many samples and wake-ups
   came. */
static uint32_t convert_mixed(void)
{
        uint32_t nr_late = 0;
        uint8_t raw[36] = {0};
        uint64_t chain[64], t = START + 1000, x = 12345;
        uint32_t cur[NR_CPUS] = {3000, 3100};
        struct rb r;
        for (uint32_t i = 0; i < 6000; i++) {
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                uint32_t cpu = i % NR_CPUS, v = (uint32_t)(x >> 33), nr = 0;
                chain[nr++] = (uint64_t)PERF_CONTEXT_KERNEL;
                for (uint32_t k = 0; k < 1 + v % 5; k++)
                        chain[nr++] = 0xffffffff81800000ull + 0x40 * ((v >> 3) % 4) + 8 * k;
                chain[nr++] = (uint64_t)PERF_CONTEXT_USER;
                uint32_t nr_user = (v >> 8) % 41;
                for (uint32_t k = 0; k < nr_user; k++)
                        chain[nr++] = 0x401000 + 0x10 * ((v >> 14) % 3) + 8 * k;
                t += 100;
                switch ((v >> 20) % 4) {
                case 0:
                case 1:
                        nr_late++;
                        rb_sample_head(&r, 11, 0x402000 + v % 64, 1000, cur[cpu], t, cpu, true);
                        rb_u64(&r, nr);
                        for (uint32_t k = 0; k < nr; k++)
                                rb_u64(&r, chain[k]);
                        rb_end(&r);
                        break;
                case 2:
                        nr_late++;
                        put_at(raw, &fmt_waking, "pid", 3000 + 100 * (1 - cpu) + v % 6);
                        put_at(raw, &fmt_waking, "prio", 120);
                        rb_sample_head(&r, 41, 0xffffffff81900000ull, 1000, cur[cpu], t, cpu,
                                       false);
                        rb_u64(&r, nr);
                        for (uint32_t k = 0; k < nr; k++)
                                rb_u64(&r, chain[k]);
                        rb_u32(&r, sizeof(raw));
                        rb_bytes(&r, raw, sizeof(raw));
                        rb_pad8(&r);
                        rb_end(&r);
                        break;
                default: {
                        uint32_t next = 3000 + 100 * cpu + (cur[cpu] + 1 + v % 5) % 6;
                        /* a few chains only, kept and shared as a busy switcher's */
                        rb_sched_switch_chain(&r, v % 53 ? 95 : 97, 1000, cur[cpu], next,
                                              (v >> 24) % 2 ? 0x1 : 0, t, cpu, chain,
                                              nr < 12 ? nr : 12);
                        cur[cpu] = next;
                        break;
                }
                }
                convert(&r, cpu);
        }
        return nr_late;
}

/* The sink's room hook (etl_writer_sink_room): a sample's or a wake-up's record and its stack,
   and a CSwitch and its switch-in's stack, built in one room where both fit the CPU's buffer as
   it is; every record of the file the same, byte for byte, as with a reserve for each record,
   the buffers completed at the same records; the room used for most
   records with a stack, for the two reserves, and a reserve for each where it was not. */
static void test_sink_room_same_file(void **state)
{
        (void)state;
        add_callchain_event(11);
        add_waking_event();
        struct perf_conv_event on = switch_event(true, true);
        add_event(95, &on);
        struct perf_conv_event off = on;
        off.has_stack = false;
        add_event(97, &off);
        uint8_t *file[3];
        size_t size[3];
        uint32_t nr_reserves[3], nr_rooms[3], nr_hits[3], nr_late = 0;
        for (uint32_t mode = 0; mode < 3; mode++) {
                char name[32];
                snprintf(name, sizeof(name), "mode%u.etl", mode);
                start_sink_mode(mode, name);
                nr_late = convert_mixed();
                assert_int_equal(etl_writer_close(g.w, 132386000010000000ll, 0, 0), 0);
                read_file(g.path, &file[mode], &size[mode]);
                nr_reserves[mode] = sk.nr_reserves;
                nr_rooms[mode] = sk.nr_rooms;
                nr_hits[mode] = sk.nr_room_hits;
        }
        /* the header buffer names the file: the buffers after it compared (emit's copies of
           the exact sizes complete some buffers a record later than reserves: mode 0 only
           checks that the converter makes no use of the hooks without a sink) */
        assert_true(size[1] > 16 * 65536);
        assert_int_equal(size[2], size[1]);
        assert_memory_equal(file[2] + 65536, file[1] + 65536, size[1] - 65536);
        assert_int_equal(nr_reserves[0] + nr_rooms[0] + nr_rooms[1], 0);
        /* most records with a stack found their stack's room with their own: the CSwitches
           too (more than the samples and wake-ups) */
        struct perf_conv_stats st;
        perf_conv_get_stats(g.c, &st);
        assert_true(st.nr_cswitch_stacks > 500);
        assert_true(nr_hits[2] > nr_late);
        assert_true(nr_hits[2] > (nr_late + st.nr_cswitch_stacks) * 9 / 10);
        assert_true(nr_rooms[2] - nr_hits[2] > 0);                         /* the buffers' ends */
        assert_int_equal(nr_reserves[2], nr_reserves[1] - 2 * nr_hits[2]); /* no reserve */
        for (uint32_t mode = 0; mode < 3; mode++)
                free(file[mode]);
}

static void test_utf16(void **state)
{
        (void)state;
        uint8_t out[64];
        assert_int_equal(utf8_to_utf16le(out, "a\xc3\xa9"), 6);
        assert_int_equal(out[0], 'a');
        assert_int_equal(out[2], 0xe9);
        assert_int_equal(utf8_to_utf16le(out, "\xf0\x9f\x98\x80"), 6); /* a surrogate pair */
        assert_int_equal(out[1], 0xd8);
        assert_int_equal(utf8_to_utf16le(out, "\xff"), 4); /* U+FFFD */
        assert_int_equal(out[0], 0xfd);
        assert_int_equal(out[1], 0xff);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_sample_with_callchain, setup, teardown),
                cmocka_unit_test_setup_teardown(test_sample_long_callchain, setup, teardown),
                cmocka_unit_test_setup_teardown(test_precise_sample_chain, setup, teardown),
                cmocka_unit_test_setup_teardown(test_sample_dwarf_walk, setup, teardown),
                cmocka_unit_test_setup_teardown(test_files_hooks, setup, teardown),
                cmocka_unit_test_setup_teardown(test_sample_auto_walk, setup, teardown),
                cmocka_unit_test_setup_teardown(test_wait_reason_from_stack, setup, teardown),
                cmocka_unit_test_setup_teardown(test_out_of_order_is_clamped, setup, teardown),
                cmocka_unit_test_setup_teardown(test_record_time, setup, teardown),
                cmocka_unit_test_setup_teardown(test_profile_interval_long_name, setup, teardown),
                cmocka_unit_test(test_lbr_filter_inversion),
                cmocka_unit_test(test_lbr_every_filter_combination),
                cmocka_unit_test_setup_teardown(test_sample_branch_stack, setup, teardown),
                cmocka_unit_test_setup_teardown(test_lbr_call_stack_frames, setup, teardown),
                cmocka_unit_test(test_tracepoint_format),
                cmocka_unit_test_setup_teardown(test_sched_switch_with_counters, setup, teardown),
                cmocka_unit_test_setup_teardown(test_sched_switch_raw_cut_short, setup, teardown),
                cmocka_unit_test_setup_teardown(test_sched_waking_raw_cut_short, setup, teardown),
                cmocka_unit_test_setup_teardown(test_sched_waking, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cswitch_repair_and_wait_time, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cswitch_previous_cstate, setup, teardown),
                cmocka_unit_test_setup_teardown(test_preempt_or_yield, setup, teardown),
                cmocka_unit_test_setup_teardown(test_cswitch_stack_is_the_new_threads, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_switch_out_of_no_thread, setup, teardown),
                cmocka_unit_test_setup_teardown(test_mmap2_build_id, setup, teardown),
                cmocka_unit_test_setup_teardown(test_comm_fork_exit, setup, teardown),
                cmocka_unit_test_setup_teardown(test_fork_images_pending, setup, teardown),
                cmocka_unit_test_setup_teardown(test_process_sid, setup, teardown),
                cmocka_unit_test_setup_teardown(test_pid_only, setup, teardown),
                cmocka_unit_test_setup_teardown(test_lost_and_kernel_symbols, setup, teardown),
                cmocka_unit_test_setup_teardown(test_kernel_symbols_of_many_addresses, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_kernel_range_user_garbage, setup, teardown),
                cmocka_unit_test_setup_teardown(test_kept_chains, setup, teardown),
                cmocka_unit_test_setup_teardown(test_wait_reason_of_kept_chains, setup, teardown),
                cmocka_unit_test_setup_teardown(test_switch_stacks_share_kept_chains, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_cswitch_wait_mode_follows_tables, setup,
                                                teardown),
                cmocka_unit_test_setup_teardown(test_fork_images_cut, setup, teardown),
                cmocka_unit_test_setup_teardown(test_sample_thread_learnt, setup, teardown),
                cmocka_unit_test_setup_teardown(test_bad_records, setup, teardown),
                cmocka_unit_test_setup_teardown(test_emit_error_not_bad, setup, teardown),
                cmocka_unit_test_setup_teardown(test_sink_room_same_file, setup, teardown),
                cmocka_unit_test(test_utf16),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
