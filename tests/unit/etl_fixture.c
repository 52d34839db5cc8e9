/* SPDX-License-Identifier: MIT */
/* etl_fixture.c: writes a kernel trace holding every event kind this machine cannot record
   (LBR, PMC samples and counters, CSwitch, ReadyThread, stack keys, 32-bit records) and events
   lost to overflowing rings, through
   etwtop's own writer, for the reader, decoder and dump tests. Usage: etl_fixture OUT.etl

   etl_fixture --pdb-image IMAGE OUT.etl RVA:COUNT...: a Windows-style trace of a process that
   runs the PE file IMAGE (the PDB tests): its Image rundown, ImageID and DbgID_RSDS events
   (TimeDateStamp, SizeOfImage, the CodeView GUID, age and PDB name read from IMAGE), then
   COUNT timer samples at each RVA of the image. --pdb-image-raw: the same without the ImageID
   and DbgID_RSDS events, as the kernel writes it before a merge (the merge tests).

   etl_fixture --hostile OUT.etl: the first trace with terminal escape sequences in its logger,
   process, thread and image names (the tests that names from a trace are made safe to print).

   etl_fixture --lbr-image ELF OUT.etl FROM:TO:COUNT...: a process mapping ELF whole, with COUNT
   timer samples at each FROM, each with an LBR record of FROM -> TO (file offsets; annotate).

   etl_fixture --wpp OUT.etl: a WPP logger's messages in their forms (the dump and merge tests).

   etl_fixture --late-images ELF OUT.etl: an etwtop trace (SessionCpu: whole stacks) of three
   processes' timer samples with stacks on two CPUs whose images come only in the rundown at its
   end, one process's image well before the other's, as a window saved without its session's
   start has them (test_rows_read: the rows built while it is read). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etl_writer.h"
#include "etw/evntrace.h"
#include "etw/ntwmi.h"
#include "perf_convert.h"
#include "symbols/pe_image.h"

/* The clock: 1 GHz ticks (DESIGN.md), the session starting at tick START. */
#define START    1000000000ull
#define FREQ     1000000000ull
#define T(ms)    (START + (uint64_t)(ms)*1000000ull)
#define FT_START 132386000000000000ll /* 2020-07-08 */
#define PID      4242
#define TID_MAIN 4243
#define TID_WORK 4244

static struct etl_writer *w;
static uint8_t rec[8192];
/* --hostile: names with escape sequences (an OSC that sets the window title, a colour) */
static bool is_hostile;
#define HOSTILE "\x1b]0;pwned\x07\x1b[31m"

static void put(uint32_t cpu, uint32_t size)
{
        if (etl_writer_append(w, cpu, rec, size) < 0) {
                fprintf(stderr, "etl_fixture: append failed\n");
                exit(1);
        }
}

static uint32_t utf16(uint8_t *dst, const char *s)
{
        uint32_t n = 0;
        do {
                dst[n++] = (uint8_t)*s;
                dst[n++] = 0;
        } while (*s++);
        return n;
}

static void u32(uint8_t *p, uint32_t v)
{
        memcpy(p, &v, 4);
}

static void u64(uint8_t *p, uint64_t v)
{
        memcpy(p, &v, 8);
}

static void process_dcstart(uint32_t cpu, uint64_t ts)
{
        uint8_t p[256] = {0};
        u64(p, 0xffff900000001000ull); /* UniqueProcessKey */
        u32(p + 8, PID);
        u32(p + 12, 1);
        u32(p + 16, 0);
        u32(p + 20, 259);
        u64(p + 24, 0x1aa000);
        u32(p + 32, 0); /* Flags (v4) */
        u32(p + 36, 0); /* no SID */
        uint32_t n = 40;
        const char *image = is_hostile ? HOSTILE "work.exe" : "work.exe";
        memcpy(p + n, image, strlen(image) + 1);
        n += (uint32_t)strlen(image) + 1;
        n += utf16(p + n, "work --run");
        n += utf16(p + n, "");
        n += utf16(p + n, "");
        put(cpu, etl_record_perfinfo64(rec, WMI_LOG_TYPE_PROCESS_DC_START, 4, ts, NULL, 0, p, n));
}

static void thread_dcstart(uint32_t cpu, uint64_t ts, uint32_t tid, const char *name)
{
        uint8_t p[256] = {0};
        u32(p, PID);
        u32(p + 4, tid);
        u64(p + 40, 0x3); /* affinity */
        u64(p + 48, 0x401000);
        p[68] = 8;
        char hostile[64];
        snprintf(hostile, sizeof(hostile), HOSTILE "%s", name);
        uint32_t n = 72 + utf16(p + 72, is_hostile ? hostile : name);
        put(cpu, etl_record_system64(rec, WMI_LOG_TYPE_THREAD_DC_START, 4, 0, 0, ts, p, n));
}

static void image_dcstart(uint32_t cpu, uint64_t ts)
{
        uint8_t p[256] = {0};
        u64(p, 0x400000);
        u64(p + 8, 0x10000);
        u32(p + 16, PID);
        u64(p + 32, 0x400000);
        uint32_t n = 56 + utf16(p + 56, is_hostile ? "/usr/bin/" HOSTILE "work" : "/usr/bin/work");
        put(cpu, etl_record_perfinfo64(rec, WMI_LOG_TYPE_IMAGE_DC_START, 3, ts, NULL, 0, p, n));
}

static void sampled_profile(uint32_t cpu, uint64_t ts, uint64_t ip, uint32_t tid)
{
        uint8_t p[16] = {0};
        u64(p, ip);
        u32(p + 8, tid);
        p[12] = 1;      /* Count */
        p[14] = 8 << 3; /* priority 8 */
        put(cpu,
            etl_record_perfinfo64(rec, PERFINFO_LOG_TYPE_SAMPLED_PROFILE, 2, ts, NULL, 0, p, 16));
}

static void stack(uint32_t cpu, uint64_t ts, uint32_t tid, const uint64_t *frames, uint32_t n)
{
        uint8_t p[16 + 8 * 32];
        u64(p, ts);
        u32(p + 8, PID);
        u32(p + 12, tid);
        memcpy(p + 16, frames, 8 * n);
        put(cpu, etl_record_perfinfo64(rec, WMI_LOG_TYPE_STACKWALK, 2, ts, NULL, 0, p, 16 + 8 * n));
}

/* _LBR_TRACE_EVENT_DATA (ETL-FORMAT.md 3.11), same timestamp as the trigger event */
static void lbr(uint32_t cpu, uint64_t ts, uint32_t tid)
{
        static const uint64_t edges[][2] = {
                {0x401250, 0x401200}, {0x4011f0, 0x401240}, {0x401180, 0x4011e0}};
        uint8_t p[24 + 24 * 3] = {0};
        u64(p, ts);
        u32(p + 8, PID);
        u32(p + 12, tid);
        u32(p + 16, EVNTRACE_LBR_FILTER_KERNEL);
        for (int i = 0; i < 3; i++) {
                u64(p + 24 + 24 * i, edges[i][0]);
                u64(p + 24 + 24 * i + 8, edges[i][1]);
        }
        put(cpu, etl_record_perfinfo64(rec, WMI_LOG_TYPE_LBR, 2, ts, NULL, 0, p, sizeof(p)));
}

static void pmc_sample(uint32_t cpu, uint64_t ts, uint64_t ip, uint32_t tid, uint16_t source)
{
        uint8_t p[16] = {0};
        u64(p, ip);
        u32(p + 8, tid);
        memcpy(p + 12, &source, 2);
        put(cpu,
            etl_record_perfinfo64(rec, PERFINFO_LOG_TYPE_PMC_INTERRUPT, 2, ts, NULL, 0, p, 16));
}

/* WMI_CONTEXTSWAP v4 (3.5) with two PMC counters inline (2.4) */
static void cswitch(uint32_t cpu, uint64_t ts, uint32_t new_tid, uint32_t old_tid, uint8_t state,
                    uint8_t reason, const uint64_t pmc[2])
{
        uint8_t p[24] = {0};
        u32(p, new_tid);
        u32(p + 4, old_tid);
        p[8] = 9;
        p[9] = 8;
        p[12] = reason;
        p[13] = 1; /* user-mode wait */
        p[14] = state;
        p[15] = (uint8_t)cpu;
        u32(p + 16, 31);
        put(cpu,
            etl_record_perfinfo64(rec, WMI_LOG_TYPE_CONTEXT_SWAP, 4, ts, pmc, pmc ? 2 : 0, p, 24));
}

static void ready_thread(uint32_t cpu, uint64_t ts, uint32_t by_tid, uint32_t tid)
{
        uint8_t p[8] = {0};
        u32(p, tid);
        p[4] = 1; /* Unwait */
        p[5] = 1;
        put(cpu, etl_record_system64(rec, WMI_LOG_TYPE_READY_THREAD, 2, by_tid, PID, ts, p, 8));
}

static void pmc_config(uint32_t cpu, uint64_t ts)
{
        uint8_t p[128];
        u32(p, 2);
        uint32_t n = 4;
        n += utf16(p + n, "BranchInstructions");
        n += utf16(p + n, "LLCReference");
        put(cpu, etl_record_perfinfo64(rec, PERFINFO_LOG_TYPE_PMC_CONFIG, 2, ts, NULL, 0, p, n));
}

static void interval_rundown(uint32_t cpu, uint64_t ts, uint32_t source, uint32_t interval,
                             const char *name)
{
        uint8_t p[128];
        u32(p, source);
        u32(p + 4, interval);
        u32(p + 8, interval);
        uint32_t n = 12 + utf16(p + 12, name);
        put(cpu, etl_record_perfinfo64(rec, PERFINFO_LOG_TYPE_SAMPLED_PROFILE_DC_START, 3, ts, NULL,
                                       0, p, n));
}

/* A 32-bit (WOW64-style) record in a 64-bit trace: PERFINFO32, 4-byte IP. */
static void sampled_profile32(uint32_t cpu, uint64_t ts, uint32_t ip, uint32_t tid)
{
        uint8_t *r = rec;
        uint8_t p[12] = {0};
        u32(p, ip);
        u32(p + 4, tid);
        p[8] = 1;
        uint32_t size = 0x10 + 12;
        r[0] = 2;
        r[1] = 0;
        r[2] = TRACE_HEADER_TYPE_PERFINFO32;
        r[3] = 0xC0;
        r[4] = (uint8_t)size;
        r[5] = 0;
        uint16_t hook = PERFINFO_LOG_TYPE_SAMPLED_PROFILE;
        memcpy(r + 6, &hook, 2);
        u64(r + 8, ts);
        memcpy(r + 0x10, p, 12);
        put(cpu, size);
}

static void group_masks(uint32_t cpu, uint64_t ts)
{
        uint8_t p[36] = {0};
        u32(p, EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD | EVENT_TRACE_FLAG_IMAGE_LOAD |
                       EVENT_TRACE_FLAG_CSWITCH | EVENT_TRACE_FLAG_DISPATCHER |
                       EVENT_TRACE_FLAG_PROFILE);
        u32(p + 4, PERF_GET_MASK_GROUP(PERF_PROFILE | PERF_CONTEXT_SWITCH | PERF_DISPATCHER |
                                       PERF_PMC_PROFILE));
        u32(p + 32, 85);
        uint32_t size =
                etl_record_perfinfo64(rec, WMI_LOG_TYPE_HEADER_EXTENSION, 2, ts, NULL, 0, p, 36);
        if (etl_writer_append(w, cpu, rec, size) < 0)
                exit(1);
}

/* etwtop's EventsLost (doc/etwtop-provider.md): reason 1, a ring that overflowed */
static void events_lost(uint32_t cpu, uint64_t ts, uint64_t count)
{
        uint8_t p[16];
        u32(p, cpu);
        u32(p + 4, ETWTOP_LOST_REASON_RECORD_LOST);
        u64(p + 8, count);
        EVENT_DESCRIPTOR desc = {ETWTOP_EVENT_EVENTS_LOST, 1, 0, 4, 0, 0, 0};
        put(cpu,
            etl_record_event64(rec, &etwtop_provider_guid, &desc, 0, 0, ts, NULL, 0, p, sizeof(p)));
}

/* ---- --pdb-image: a Windows process running one image ---- */

#define WIN_PID   5150
#define WIN_TID   5151
#define WIN_BASE  0x140000000ull
#define WIN_IMAGE "\\Device\\HarddiskVolume2\\fixture\\"

static void win_process_dcstart(uint64_t ts, const char *name)
{
        uint8_t p[256] = {0};
        u64(p, 0xffff900000002000ull); /* UniqueProcessKey */
        u32(p + 8, WIN_PID);
        u32(p + 12, 4);
        u32(p + 16, 1);
        u64(p + 24, 0x1bb000);
        uint32_t n = 40;
        size_t len = strlen(name) + 1;
        memcpy(p + n, name, len);
        n += (uint32_t)len;
        n += utf16(p + n, name);
        n += utf16(p + n, "");
        n += utf16(p + n, "");
        put(0, etl_record_perfinfo64(rec, WMI_LOG_TYPE_PROCESS_DC_START, 4, ts, NULL, 0, p, n));
}

static void win_thread_dcstart(uint64_t ts)
{
        uint8_t p[256] = {0};
        u32(p, WIN_PID);
        u32(p + 4, WIN_TID);
        u64(p + 40, 0x3);
        u64(p + 48, WIN_BASE + 0x1000);
        p[68] = 8;
        uint32_t n = 72 + utf16(p + 72, "main");
        put(0, etl_record_system64(rec, WMI_LOG_TYPE_THREAD_DC_START, 4, 0, 0, ts, p, n));
}

/* Image DCStart v3, KernelTraceControl ImageID and DbgID_RSDS (ETL-FORMAT.md 3.9, 3.10); with
   is_raw, the Image event only (a kernel trace before xperf -merge added the others) */
static void win_image(uint64_t ts, const char *file, const struct pe_identity *id, bool is_raw)
{
        char path[512];
        snprintf(path, sizeof(path), "%s%s", WIN_IMAGE, file);
        uint8_t p[1400] = {0};
        u64(p, WIN_BASE);
        u64(p + 8, id->size_of_image);
        u32(p + 16, WIN_PID);
        u32(p + 20, id->checksum);
        u32(p + 24, id->time_date_stamp);
        u64(p + 32, id->image_base);
        uint32_t n = 56 + utf16(p + 56, path);
        put(0, etl_record_perfinfo64(rec, WMI_LOG_TYPE_IMAGE_DC_START, 3, ts, NULL, 0, p, n));
        if (is_raw)
                return;

        memset(p, 0, sizeof(p));
        u64(p, WIN_BASE);
        u64(p + 8, id->size_of_image);
        u32(p + 16, WIN_PID);
        u32(p + 20, id->time_date_stamp);
        n = 24 + utf16(p + 24, file);
        put(0, etl_record_full64(rec, &KernelTraceControlImageIdGuid, KTC_IMAGE_ID, 2, WIN_TID,
                                 WIN_PID, ts, p, n));

        memset(p, 0, sizeof(p));
        u64(p, WIN_BASE);
        u32(p + 8, WIN_PID);
        memcpy(p + 12, id->pdb_guid, 16);
        u32(p + 28, id->pdb_age);
        size_t len = strlen(id->pdb_name) + 1;
        memcpy(p + 32, id->pdb_name, len);
        put(0, etl_record_full64(rec, &KernelTraceControlImageIdGuid, KTC_DBGID_RSDS, 2, WIN_TID,
                                 WIN_PID, ts, p, 32 + (uint32_t)len));
}

static int pdb_image_trace(int argc, char **argv, const struct etl_writer_config *cfg)
{
        struct pe_identity id;
        struct err_msg perr = {0};
        if (pe_image_read_file(argv[2], &id, NULL, &perr) < 0 || !id.has_codeview) {
                fprintf(stderr, "etl_fixture: %s: %s\n", argv[2],
                        perr.msg[0] ? perr.msg : "no CodeView record");
                return 1;
        }
        struct etl_error err;
        if (etl_writer_new(&w, cfg) < 0 || etl_writer_open_file(w, argv[3], true, &err) < 0) {
                fprintf(stderr, "etl_fixture: cannot write %s\n", argv[3]);
                return 1;
        }
        const char *file = strrchr(argv[2], '/') ? strrchr(argv[2], '/') + 1 : argv[2];
        group_masks(ETL_WRITER_HEADER_CPU, START);
        win_process_dcstart(T(1), file);
        win_thread_dcstart(T(1));
        win_image(T(1), file, &id, strcmp(argv[1], "--pdb-image-raw") == 0);
        uint64_t ms = 10;
        for (int i = 4; i < argc; i++) {
                unsigned long long rva = 0;
                unsigned count = 0;
                if (sscanf(argv[i], "%llx:%u", &rva, &count) != 2) {
                        fprintf(stderr, "etl_fixture: %s is not RVA:COUNT\n", argv[i]);
                        return 2;
                }
                for (unsigned k = 0; k < count; k++)
                        sampled_profile(0, T(ms++), WIN_BASE + rva, WIN_TID);
        }
        if (etl_writer_close(w, FT_START + 5000000, 0, 0) < 0)
                return 1;
        etl_writer_free(w);
        return 0;
}

/* ---- --lbr-image: a Linux process running one ELF file, with LBR records ---- */

#define LBR_BASE 0x555500000000ull /* where the file's offset 0 is mapped */

/* --lbr-image ELF OUT.etl FROM:TO:COUNT...: the process work.exe (PID) maps ELF whole at
   LBR_BASE (file offsets as addresses), and takes COUNT timer samples at FROM, each with one LBR
   record of the edge FROM -> TO (offsets in the file, hex). */
static int lbr_image_trace(int argc, char **argv, const struct etl_writer_config *cfg)
{
        struct etl_error err;
        if (etl_writer_new(&w, cfg) < 0 || etl_writer_open_file(w, argv[3], true, &err) < 0) {
                fprintf(stderr, "etl_fixture: cannot write %s\n", argv[3]);
                return 1;
        }
        group_masks(ETL_WRITER_HEADER_CPU, START);
        process_dcstart(0, T(1));
        thread_dcstart(0, T(1), TID_MAIN, "main");
        uint8_t p[1200] = {0};
        u64(p, LBR_BASE);
        u64(p + 8, 0x1000000);
        u32(p + 16, PID);
        u64(p + 32, LBR_BASE);
        uint32_t n = 56 + utf16(p + 56, argv[2]);
        put(0, etl_record_perfinfo64(rec, WMI_LOG_TYPE_IMAGE_DC_START, 3, T(1), NULL, 0, p, n));
        uint64_t ms = 10;
        for (int i = 4; i < argc; i++) {
                unsigned long long from = 0, to = 0;
                unsigned count = 0;
                if (sscanf(argv[i], "%llx:%llx:%u", &from, &to, &count) != 3) {
                        fprintf(stderr, "etl_fixture: %s is not FROM:TO:COUNT\n", argv[i]);
                        return 2;
                }
                for (unsigned k = 0; k < count; k++) {
                        uint64_t ts = T(ms++);
                        sampled_profile(0, ts, LBR_BASE + from, TID_MAIN);
                        uint8_t l[24 + 24] = {0};
                        u64(l, ts);
                        u32(l + 8, PID);
                        u32(l + 12, TID_MAIN);
                        u64(l + 24, LBR_BASE + from);
                        u64(l + 32, LBR_BASE + to);
                        put(0, etl_record_perfinfo64(rec, WMI_LOG_TYPE_LBR, 2, ts, NULL, 0, l,
                                                     sizeof(l)));
                }
        }
        if (etl_writer_close(w, FT_START + 5000000, 0, 0) < 0)
                return 1;
        etl_writer_free(w);
        return 0;
}

/* ---- --late-images: samples first, their images at the end ---- */

#define LATE_BASE 0x400000ull

/* Process pid and its threads pid + 1 (on CPU 0) and pid + 2 (on CPU 1). */
static void late_process(uint32_t pid, uint64_t ts)
{
        uint8_t p[256] = {0};
        u64(p, 0xffff900000001000ull + pid); /* UniqueProcessKey */
        u32(p + 8, pid);
        u32(p + 12, 1);
        u32(p + 20, 259);
        uint32_t n = 40;
        memcpy(p + n, "late.exe", 9);
        n += 9;
        n += utf16(p + n, "late");
        n += utf16(p + n, "");
        n += utf16(p + n, "");
        put(0, etl_record_perfinfo64(rec, WMI_LOG_TYPE_PROCESS_DC_START, 4, ts, NULL, 0, p, n));
        for (uint32_t tid = pid + 1; tid <= pid + 2; tid++) {
                memset(p, 0, sizeof(p));
                u32(p, pid);
                u32(p + 4, tid);
                u64(p + 40, 0x3);
                p[68] = 8;
                n = 72 + utf16(p + 72, "late");
                put(0, etl_record_system64(rec, WMI_LOG_TYPE_THREAD_DC_START, 4, 0, 0, ts, p, n));
        }
}

static void late_image(uint32_t pid, const char *elf, uint64_t ts)
{
        uint8_t p[1200] = {0};
        u64(p, LATE_BASE);
        u64(p + 8, 0x1000000);
        u32(p + 16, pid);
        u64(p + 32, LATE_BASE);
        uint32_t n = 56 + utf16(p + 56, elf);
        put(1, etl_record_perfinfo64(rec, WMI_LOG_TYPE_IMAGE_DC_END, 3, ts, NULL, 0, p, n));
}

/* A sample of pid's thread on cpu at ts, at and under offsets of the image, with its stack (3
   frames); the offsets from *seed. The thread switched in first where another ran (readied by
   it, the other waiting then). */
static void late_sample(uint32_t cpu, uint64_t ts, uint32_t pid, uint64_t *seed)
{
        static uint32_t on_cpu[2];
        uint32_t tid = pid + 1 + cpu;
        if (on_cpu[cpu] != tid) {
                if (on_cpu[cpu])
                        ready_thread(cpu, ts - 20000, on_cpu[cpu], tid);
                cswitch(cpu, ts - 10000, tid, on_cpu[cpu], 5 /* Waiting */, (uint8_t)(*seed % 7),
                        NULL);
                on_cpu[cpu] = tid;
        }
        uint64_t frames[3];
        for (uint32_t f = 0; f < 3; f++) {
                *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
                uint32_t r = (uint32_t)(*seed >> 33);
                frames[f] = LATE_BASE + 0x1000 + (f == 0 ? r % 48 : 48 + r % 12) * 0x40;
        }
        sampled_profile(cpu, ts, frames[0], tid);
        uint8_t p[16 + 8 * 3];
        u64(p, ts);
        u32(p + 8, pid);
        u32(p + 12, tid);
        memcpy(p + 16, frames, sizeof(frames));
        put(cpu, etl_record_perfinfo64(rec, WMI_LOG_TYPE_STACKWALK, 2, ts, NULL, 0, p, sizeof(p)));
}

static int late_images_trace(const char *elf, const char *out, const struct etl_writer_config *cfg)
{
        struct etl_error err;
        if (etl_writer_new(&w, cfg) < 0 || etl_writer_open_file(w, out, true, &err) < 0) {
                fprintf(stderr, "etl_fixture: cannot write %s\n", out);
                return 1;
        }
        group_masks(ETL_WRITER_HEADER_CPU, START);
        for (uint32_t c = 0; c < 2; c++)
                put(c, perf_etw_session_cpu(rec, T(0), c, 2, 2, 0));
        /* A (5001) twice as often as B (5101): the heavier place of each address of no image */
        late_process(5001, T(1));
        late_process(5101, T(1));
        late_process(5201, T(1));
        uint64_t seed = 7, ts = T(10);
        for (uint32_t i = 0; i < 3000; i++)
                late_sample(i % 2, ts += 100000, i % 3 == 2 ? 5101 : 5001, &seed);
        /* A's image, then C's samples (never an image), then B's image */
        late_image(5001, elf, ts += 100000);
        for (uint32_t i = 0; i < 400; i++)
                late_sample(i % 2, ts += 100000, 5201, &seed);
        late_image(5101, elf, ts += 100000);
        if (etl_writer_close(w, FT_START + (int64_t)(ts - START) / 100, 0, 0) < 0)
                return 1;
        etl_writer_free(w);
        return 0;
}

/* ---- --wpp: a WPP logger's trace (TraceMessage's records, ETL-FORMAT.md 2.7) ---- */

/* A message record at rec: number num, OptionFlags flags, the GUID's first byte g, the time
   ts, thread tid of process PID (each where flagged), and n argument bytes; its size. */
static uint32_t wpp_message(uint16_t num, uint16_t flags, uint8_t g, uint64_t ts, uint32_t tid,
                            uint32_t n)
{
        uint32_t off = 8;
        if (flags & 0x0001)
                u32(rec + off, 7000 + num), off += 4; /* the sequence */
        if (flags & 0x0004) {
                u32(rec + off, 0x55), off += 4; /* the component id */
        } else if (flags & 0x0002) {
                for (int i = 0; i < 16; i++)
                        rec[off + i] = (uint8_t)(g + i);
                off += 16;
        }
        if (flags & 0x0008)
                u64(rec + off, ts), off += 8;
        if (flags & 0x0020) {
                u32(rec + off, tid);
                u32(rec + off + 4, PID);
                off += 8;
        }
        for (uint32_t i = 0; i < n; i++)
                rec[off + i] = (uint8_t)(0xA0 + i);
        off += n;
        u32(rec, TRACE_HEADER_FLAG | TRACE_HEADER_TRACE_MESSAGE | off);
        rec[4] = (uint8_t)num;
        rec[5] = (uint8_t)(num >> 8);
        rec[6] = (uint8_t)flags;
        rec[7] = (uint8_t)(flags >> 8);
        return off;
}

/* --wpp OUT.etl: on CPU 0, three messages of one GUID (number 43: a GUID, the time, the thread
   and process, 20 argument bytes, as CldFlt's log writes them) at 10, 20 and 30 ms; on CPU 1 a
   message with a sequence and a component id at 15 ms (32-bit), one without a time (skipped)
   and a sample at 25 ms. */
static int wpp_trace(const char *out, const struct etl_writer_config *cfg)
{
        struct etl_error err;
        if (etl_writer_new(&w, cfg) < 0 || etl_writer_open_file(w, out, true, &err) < 0) {
                fprintf(stderr, "etl_fixture: cannot write %s\n", out);
                return 1;
        }
        process_dcstart(0, T(1));
        thread_dcstart(0, T(1), TID_MAIN, "main");
        for (int i = 1; i <= 3; i++)
                put(0, wpp_message(43, 0x00AA, 0x10, T(10 * i), TID_MAIN, 20));
        put(1, wpp_message(7, 0x006D, 0, T(15), TID_WORK, 4));
        put(1, wpp_message(8, 0x0082, 0x30, 0, TID_WORK, 4));
        sampled_profile(1, T(25), 0x401234, TID_WORK);
        if (etl_writer_close(w, FT_START + 5000000, 0, 0) < 0)
                return 1;
        etl_writer_free(w);
        return 0;
}

int main(int argc, char **argv)
{
        bool is_pdb_image = argc >= 4 && (strcmp(argv[1], "--pdb-image") == 0 ||
                                          strcmp(argv[1], "--pdb-image-raw") == 0);
        bool is_lbr_image = argc >= 4 && strcmp(argv[1], "--lbr-image") == 0;
        is_hostile = argc == 3 && strcmp(argv[1], "--hostile") == 0;
        bool is_wpp = argc == 3 && strcmp(argv[1], "--wpp") == 0;
        bool is_late_images = argc == 4 && strcmp(argv[1], "--late-images") == 0;
        if (argc != 2 && !is_pdb_image && !is_lbr_image && !is_hostile && !is_wpp &&
            !is_late_images) {
                fprintf(stderr, "usage: etl_fixture [--hostile|--wpp] OUT.etl\n"
                                "       etl_fixture --pdb-image[-raw] IMAGE OUT.etl RVA:COUNT...\n"
                                "       etl_fixture --lbr-image ELF OUT.etl FROM:TO:COUNT...\n"
                                "       etl_fixture --late-images ELF OUT.etl\n");
                return 2;
        }
        struct etl_writer_config cfg = {
                .buffer_size_bytes = 8192,
                .nr_cpus = 2,
                .log_file_mode = EVENT_TRACE_FILE_MODE_SEQUENTIAL,
                .logger_id = 3,
                .logger_name = "NT Kernel Logger",
                .log_file_name = "/tmp/fixture.etl",
                .start_timestamp = START,
                .start_filetime = FT_START,
                .boot_filetime = FT_START - 36000000000ll,
                .perf_freq = FREQ,
                .clock_type = EVENT_TRACE_CLOCK_PERFCOUNTER,
                .os_major = 10,
                .provider_version = 19041,
                .timer_resolution_100ns = 156250,
                .cpu_speed_mhz = 3000,
                .header_tid = 1,
                .header_pid = 1,
        };
        if (is_pdb_image)
                return pdb_image_trace(argc, argv, &cfg);
        if (argc >= 4 && strcmp(argv[1], "--lbr-image") == 0)
                return lbr_image_trace(argc, argv, &cfg);
        if (is_late_images)
                return late_images_trace(argv[2], argv[3], &cfg);
        if (is_wpp) {
                cfg.logger_name = "CldFltLog";
                return wpp_trace(argv[2], &cfg);
        }
        if (is_hostile)
                cfg.logger_name = HOSTILE "NT Kernel Logger";
        if (etl_writer_new(&w, &cfg) < 0)
                return 1;
        struct etl_error err;
        if (etl_writer_open_file(w, argv[argc - 1], true, &err) < 0) {
                fprintf(stderr, "etl_fixture: %s\n", err.msg);
                return 1;
        }
        group_masks(ETL_WRITER_HEADER_CPU, START);

        /* CPU 0: rundown, then a sample with its stack and LBR, a PMC sample, switches */
        process_dcstart(0, T(1));
        thread_dcstart(0, T(1), TID_MAIN, "main");
        image_dcstart(0, T(1));
        pmc_config(0, T(1));
        interval_rundown(0, T(1), 0, 10000, "Timer");
        interval_rundown(0, T(1), 11, 65536, "BranchMispredictions");
        sampled_profile(0, T(10), 0x401234, TID_MAIN);
        static const uint64_t frames[] = {0x401234, 0x401100, 0x400f00};
        stack(0, T(10), TID_MAIN, frames, 3);
        lbr(0, T(10), TID_MAIN);
        pmc_sample(0, T(11), 0x401300, TID_MAIN, ProfileBranchMispredictions);
        static const uint64_t pmc1[2] = {3896, 9400};
        cswitch(0, T(12), TID_MAIN, 0, 5 /* Waiting */, 15 /* WrQueue */, pmc1);
        ready_thread(0, T(13), TID_MAIN, TID_WORK);
        /* CPU 1 */
        thread_dcstart(1, T(2), TID_WORK, "worker");
        sampled_profile32(1, T(14), 0x8048123, TID_WORK);
        static const uint64_t pmc2[2] = {5000, 12000};
        cswitch(1, T(15), TID_WORK, 0, 1 /* Ready */, 32 /* WrPreempted */, pmc2);
        /* enough samples to fill several buffers per CPU */
        for (int i = 0; i < 400; i++) {
                sampled_profile(0, T(20 + i), 0x401000 + (uint64_t)i, TID_MAIN);
                sampled_profile(1, T(20 + i) + 500, 0x402000 + (uint64_t)i, TID_WORK);
        }
        /* both threads switch out: the counters since their switch-in are their timeslices'
           (BranchInstructions +1000 and +2500, LLCReference +1500 and +250) */
        static const uint64_t pmc3[2] = {4896, 10900};
        cswitch(0, T(425), 0, TID_MAIN, 5 /* Waiting */, 6 /* UserRequest */, pmc3);
        static const uint64_t pmc4[2] = {7500, 12250};
        cswitch(1, T(426), 0, TID_WORK, 1 /* Ready */, 32 /* WrPreempted */, pmc4);
        /* rings that overflowed twice, and no exact total at the stop: 12 lost */
        events_lost(0, T(430), 5);
        events_lost(1, T(431), 7);
        if (etl_writer_close(w, FT_START + 5000000, 0, 0) < 0) {
                fprintf(stderr, "etl_fixture: close failed\n");
                return 1;
        }
        etl_writer_free(w);
        return 0;
}
