/* SPDX-License-Identifier: MIT */
/* fuzz_kevent.c: libFuzzer target decoding a byte-chosen sequence of kernel EVENT_RECORDs. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "known_templates.h"
#include "kdecoder.h"
#include "kevent.h"

/* Under MemorySanitizer, the sink checks that the decoder initialized every field it hands out
   (it clears only the union member it fills, so a forgotten field would show here). */
#if defined(__has_feature)
#if __has_feature(memory_sanitizer)
#include <sanitizer/msan_interface.h>
#define FUZZ_CHECK_INIT(x) __msan_check_mem_is_initialized(&(x), sizeof(x))
#endif
#endif
#ifndef FUZZ_CHECK_INIT
#define FUZZ_CHECK_INIT(x) ((void)sizeof(x))
#endif

/* The (provider, opcode) pairs that have payload layouts, so most records reach a decoder. */
static const struct {
        const GUID *guid;
        uint8_t opcode;
} fuzz_events[] = {
        {&EventTraceGuid, 0},
        {&EventTraceGuid, 5},
        {&EventTraceGuid, 32},
        {&ProcessGuid, 1},
        {&ProcessGuid, 2},
        {&ProcessGuid, 3},
        {&ProcessGuid, 4},
        {&ProcessGuid, 39},
        {&ProcessGuid, 10},
        {&ThreadGuid, 1},
        {&ThreadGuid, 2},
        {&ThreadGuid, 3},
        {&ThreadGuid, 4},
        {&ThreadGuid, 36},
        {&ThreadGuid, 50},
        {&ThreadGuid, 72},
        {&ImageLoadGuid, 10},
        {&ImageLoadGuid, 2},
        {&ImageLoadGuid, 3},
        {&ImageLoadGuid, 4},
        {&PerfInfoGuid, 46},
        {&PerfInfoGuid, 47},
        {&PerfInfoGuid, 48},
        {&PerfInfoGuid, 72},
        {&PerfInfoGuid, 73},
        {&PerfInfoGuid, 74},
        {&StackWalkGuid, 32},
        {&StackWalkGuid, 34},
        {&StackWalkGuid, 35},
        {&StackWalkGuid, 36},
        {&StackWalkGuid, 37},
        {&StackWalkGuid, 38},
        {&LastBranchRecordGuid, 32},
        {&KernelTraceControlImageIdGuid, 0},
        {&KernelTraceControlImageIdGuid, 32},
        {&KernelTraceControlImageIdGuid, 36},
        {&KernelTraceControlImageIdGuid, 37},
        {&KernelTraceControlImageIdGuid, 38},
        {&KernelTraceControlImageIdGuid, 40},
        {&KernelTraceControlImageIdGuid, 64},
        /* kevent_mof.c's kernel classes */
        {&DiskIoGuid, 10},
        {&DiskIoGuid, 12},
        {&DiskIoGuid, 14},
        {&PageFaultGuid, 32},
        {&TcpIpGuid, 10},
        {&TcpIpGuid, 12},
        {&TcpIpGuid, 17},
        {&TcpIpGuid, 26},
        {&TcpIpGuid, 27},
        {&TcpIpGuid, 28},
        {&UdpIpGuid, 11},
        {&FileIoGuid, 36},
        {&ProcessGuid, 32},
        {&EventTraceConfigGuid, 10},
        {&EventTraceConfigGuid, 13},
        {&EventTraceConfigGuid, 15},
        {&EventTraceConfigGuid, 21},
        {&EventTraceConfigGuid, 22},
        {&SysConfigExGuid, 32},
        {&SysConfigExGuid, 35},
        {&SysConfigExGuid, 36},
        {&SysConfigExGuid, 37},
        {&WinSatGuid, 33}, /* LZNT1 */
};

/* Providers for a raw opcode byte: known ones, and one the decoder does not know. */
static const GUID fuzz_unknown = {0x12345678, 0x9abc, 0xdef0, {1, 2, 3, 4, 5, 6, 7, 8}};
/* the .NET runtime and its rundown: manifest events, told apart by Id */
static const GUID fuzz_clr_runtime = {
        0xe13c0d23, 0xccbc, 0x4e12, {0x93, 0x1b, 0xd9, 0xcc, 0x2e, 0xee, 0x27, 0xe4}};
static const GUID fuzz_clr_rundown = {
        0xa669021c, 0xc450, 0x4609, {0xa0, 0x35, 0x5a, 0xf5, 0x9a, 0xf4, 0xdf, 0x18}};
/* the .NET runtime's private provider: told apart by Id too */
static const GUID fuzz_clr_private = {
        0x763fd754, 0x7086, 0x4dfe, {0x95, 0xeb, 0xc0, 0x1a, 0x46, 0xfa, 0xf4, 0xca}};
/* Microsoft-Windows-PowerShell: manifest events by its templates (ps_template_list.c) */
static const GUID fuzz_powershell = {
        0xa0c1853b, 0x5c40, 0x4b15, {0x87, 0x66, 0x3c, 0xf1, 0xc5, 0x8f, 0x98, 0x5a}};
static const GUID *const fuzz_providers[] = {
        &EventTraceGuid,   &ProcessGuid,      &ThreadGuid,           &ImageLoadGuid,
        &PerfInfoGuid,     &StackWalkGuid,    &LastBranchRecordGuid, &KernelTraceControlImageIdGuid,
        &DiskIoGuid,       &SysConfigExGuid,  &fuzz_unknown,         &etwtop_provider_guid,
        &fuzz_clr_runtime, &fuzz_clr_rundown, &fuzz_clr_private,     &fuzz_powershell,
};

#define NR_EVENTS    (sizeof(fuzz_events) / sizeof(fuzz_events[0]))
#define NR_PROVIDERS (sizeof(fuzz_providers) / sizeof(fuzz_providers[0]))

static volatile size_t fuzz_sink_bytes;

/* Touches every borrowed string and array so ASan checks the pointers, and checks the
   contract: typed events never carry NULL strings. */
static void touch(const char *s)
{
        if (!s)
                abort();
        fuzz_sink_bytes += strlen(s);
}

static void fuzz_sink(void *ctx, const struct kevent *ev)
{
        uint64_t sum = 0;

        (void)ctx;
        FUZZ_CHECK_INIT(ev->type);
        FUZZ_CHECK_INIT(ev->provider);
        FUZZ_CHECK_INIT(ev->opcode);
        FUZZ_CHECK_INIT(ev->version);
        FUZZ_CHECK_INIT(ev->pointer_size);
        FUZZ_CHECK_INIT(ev->timestamp);
        FUZZ_CHECK_INIT(ev->time_ns);
        FUZZ_CHECK_INIT(ev->cpu);
        FUZZ_CHECK_INIT(ev->pid);
        FUZZ_CHECK_INIT(ev->tid);
        FUZZ_CHECK_INIT(ev->nr_pmc);
        FUZZ_CHECK_INIT(ev->pmc);
        touch(ev->name);
        if (ev->nr_pmc > KEV_MAX_PMC || (ev->pointer_size != 4 && ev->pointer_size != 8))
                abort();
        switch (ev->type) {
        case KEV_OTHER: /* the whole union is cleared: its largest members cover it */
                FUZZ_CHECK_INIT(ev->process);
                FUZZ_CHECK_INIT(ev->thread);
                break;
        case KEV_TRACE_HEADER: FUZZ_CHECK_INIT(ev->trace_header); break;
        case KEV_GROUP_MASK: FUZZ_CHECK_INIT(ev->group_mask); break;
        case KEV_PROCESS: FUZZ_CHECK_INIT(ev->process); break;
        case KEV_THREAD: FUZZ_CHECK_INIT(ev->thread); break;
        case KEV_THREAD_NAME: FUZZ_CHECK_INIT(ev->thread_name); break;
        case KEV_IMAGE: FUZZ_CHECK_INIT(ev->image); break;
        case KEV_IMAGE_ID: FUZZ_CHECK_INIT(ev->image_id); break;
        case KEV_DBG_ID: FUZZ_CHECK_INIT(ev->dbg_id); break;
        case KEV_FILE_VERSION: FUZZ_CHECK_INIT(ev->file_version); break;
        case KEV_SAMPLE: FUZZ_CHECK_INIT(ev->sample); break;
        case KEV_PMC_SAMPLE: FUZZ_CHECK_INIT(ev->pmc_sample); break;
        case KEV_PMC_CONFIG: FUZZ_CHECK_INIT(ev->pmc_config); break;
        case KEV_PROFILE_INTERVAL: FUZZ_CHECK_INIT(ev->profile_interval); break;
        case KEV_STACK: FUZZ_CHECK_INIT(ev->stack); break;
        case KEV_STACK_KEY: FUZZ_CHECK_INIT(ev->stack_key); break;
        case KEV_STACK_KEY_DEF: FUZZ_CHECK_INIT(ev->stack_key_def); break;
        case KEV_CSWITCH: FUZZ_CHECK_INIT(ev->cswitch); break;
        case KEV_READY_THREAD: FUZZ_CHECK_INIT(ev->ready_thread); break;
        case KEV_LBR: FUZZ_CHECK_INIT(ev->lbr); break;
        case KEV_IMAGE_IDENTITY:
                FUZZ_CHECK_INIT(ev->image_identity);
                for (uint32_t i = 0; i < ev->image_identity.build_id_size; i++)
                        FUZZ_CHECK_INIT(ev->image_identity.build_id[i]);
                break;
        case KEV_KERNEL_SYMBOL: FUZZ_CHECK_INIT(ev->kernel_symbol); break;
        case KEV_EVENTS_LOST: FUZZ_CHECK_INIT(ev->events_lost); break;
        case KEV_RECORDS_NOT_SHOWN: FUZZ_CHECK_INIT(ev->records_not_shown); break;
        case KEV_SESSION_CPU: FUZZ_CHECK_INIT(ev->session_cpu); break;
        case KEV_UNWIND_STATS: FUZZ_CHECK_INIT(ev->unwind_stats); break;
        case KEV_CLR_METHOD: FUZZ_CHECK_INIT(ev->clr_method); break;
        case KEV_CLR_MODULE: FUZZ_CHECK_INIT(ev->clr_module); break;
        case KEV_FIELDS: {
                FUZZ_CHECK_INIT(ev->fields);
                const struct kevent_field *list;
                uint32_t nr = kevent_fields(ev, &list); /* decoded now when left to be asked */
                if (nr > KEV_MAX_FIELDS)
                        abort();
                for (uint32_t i = 0; i < nr; i++) {
                        FUZZ_CHECK_INIT(list[i]);
                        touch(list[i].name);
                        touch(list[i].s);
                }
                break;
        }
        default: abort();
        }
        switch (ev->type) {
        case KEV_TRACE_HEADER:
                FUZZ_CHECK_INIT(*ev->trace_header.header);
                touch(ev->trace_header.logger_name);
                touch(ev->trace_header.log_file_name);
                sum += (uint64_t)ev->trace_header.header->PerfFreq.QuadPart;
                break;
        case KEV_PROCESS:
                touch(ev->process.user_sid);
                touch(ev->process.image_name);
                touch(ev->process.command_line);
                touch(ev->process.package_full_name);
                touch(ev->process.application_id);
                break;
        case KEV_THREAD: touch(ev->thread.name); break;
        case KEV_THREAD_NAME: touch(ev->thread_name.name); break;
        case KEV_IMAGE: touch(ev->image.file_name); break;
        case KEV_IMAGE_ID: touch(ev->image_id.original_file_name); break;
        case KEV_DBG_ID: touch(ev->dbg_id.pdb_file_name); break;
        case KEV_FILE_VERSION:
                touch(ev->file_version.orig_file_name);
                touch(ev->file_version.file_description);
                touch(ev->file_version.file_version);
                touch(ev->file_version.product_name);
                touch(ev->file_version.company_name);
                touch(ev->file_version.product_version);
                break;
        case KEV_PMC_CONFIG:
                for (int i = 0; i < KEV_MAX_PMC; i++)
                        touch(ev->pmc_config.names[i]);
                break;
        case KEV_PROFILE_INTERVAL: touch(ev->profile_interval.source_name); break;
        case KEV_STACK:
                for (uint32_t i = 0; i < ev->stack.nr_frames; i++)
                        sum += ev->stack.frames[i];
                if (ev->stack.nr_frames)
                        FUZZ_CHECK_INIT(ev->stack.frames[ev->stack.nr_frames - 1]);
                break;
        case KEV_STACK_KEY_DEF:
                for (uint32_t i = 0; i < ev->stack_key_def.nr_frames; i++)
                        sum += ev->stack_key_def.frames[i];
                break;
        case KEV_LBR:
                for (uint32_t i = 0; i < ev->lbr.nr_entries; i++)
                        sum += ev->lbr.entries[i].from ^ ev->lbr.entries[i].to;
                break;
        case KEV_IMAGE_IDENTITY: touch(ev->image_identity.path); break;
        case KEV_RECORDS_NOT_SHOWN: touch(ev->records_not_shown.name); break;
        case KEV_KERNEL_SYMBOL:
                touch(ev->kernel_symbol.name);
                touch(ev->kernel_symbol.module);
                break;
        case KEV_CLR_METHOD: {
                struct kevent_clr_names n = kevent_clr_method_names(ev);
                touch(n.name_space);
                touch(n.name);
                touch(n.signature);
                break;
        }
        case KEV_CLR_MODULE:
                touch(ev->clr_module.il_path);
                touch(ev->clr_module.native_path);
                break;
        default: break;
        }
        fuzz_sink_bytes += (size_t)sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Input: byte 0 selects the clock mode (bit 0: raw timestamps). Then records, each:
 *   [0] event: < NR_EVENTS picks a known (provider, opcode); else provider [0] % NR_PROVIDERS
 *       with opcode [1]
 *   [1] opcode (raw mode only)   [2] version   [3] flags: bits 0-1 pointer-size flags
 *       (none, 32, 64, both), bits 2-4 number of PMC counters, bits 5-7 tid (small, so
 *       thread-table entries collide)
 *   [4..5] payload length (LE, capped by what is left)   [6] cpu   [7] timestamp step
 *   payload bytes
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const uint64_t pmc[8] = {1, 2, 3, 4, 5, 6, 7, 8};

        if (size < 1)
                return 0;

        struct kdecoder *d = kdecoder_new(data[0] & 1);
        uint64_t ts = 1000;
        size_t off = 1;

        if (!d)
                return 0;
        while (size - off >= 8) {
                const uint8_t *h = data + off;
                EVENT_RECORD r;
                EVENT_HEADER_EXTENDED_DATA_ITEM x;
                size_t len = (size_t)h[4] | (size_t)h[5] << 8;

                off += 8;
                if (len > size - off)
                        len = size - off;
                memset(&r, 0, sizeof(r));
                if (h[0] < NR_EVENTS) {
                        r.EventHeader.ProviderId = *fuzz_events[h[0]].guid;
                        r.EventHeader.EventDescriptor.Opcode = fuzz_events[h[0]].opcode;
                } else {
                        r.EventHeader.ProviderId = *fuzz_providers[h[0] % NR_PROVIDERS];
                        r.EventHeader.EventDescriptor.Opcode = h[1];
                        /* etwtop's own events are told apart by Id (opcode 0) */
                        r.EventHeader.EventDescriptor.Id = h[1] & 7;
                }
                r.EventHeader.EventDescriptor.Version = h[2];
                r.EventHeader.Flags = EVENT_HEADER_FLAG_CLASSIC_HEADER;
                if (h[0] >= NR_EVENTS &&
                    (fuzz_providers[h[0] % NR_PROVIDERS] == &fuzz_clr_runtime ||
                     fuzz_providers[h[0] % NR_PROVIDERS] == &fuzz_clr_rundown)) {
                        /* Ids 140-155: the method (143, 144) and module (152-154) events;
                           with bit 7, an event of the manifest's templates (known_templates.c) */
                        r.EventHeader.EventDescriptor.Id = (USHORT)(140 + (h[1] & 15));
                        if (h[1] & 0x80)
                                r.EventHeader.EventDescriptor.Id =
                                        clr_templates[(h[1] & 0x7f) % clr_nr_templates].id;
                        r.EventHeader.Flags = 0;
                }
                if (h[0] >= NR_EVENTS && fuzz_providers[h[0] % NR_PROVIDERS] == &fuzz_powershell) {
                        /* one of its manifest's events */
                        r.EventHeader.EventDescriptor.Id = ps_templates[h[1] % ps_nr_templates].id;
                        r.EventHeader.Flags = 0;
                }
                if (h[0] >= NR_EVENTS && fuzz_providers[h[0] % NR_PROVIDERS] == &fuzz_clr_private) {
                        /* Ids 0-199 as they come (GC, Startup, Binding...), 200-255 as 400-455 */
                        r.EventHeader.EventDescriptor.Id = (USHORT)(h[1] < 200 ? h[1] : 200 + h[1]);
                        r.EventHeader.Flags = 0;
                }
                if (h[3] & 1)
                        r.EventHeader.Flags |= EVENT_HEADER_FLAG_32_BIT_HEADER;
                if (h[3] & 2)
                        r.EventHeader.Flags |= EVENT_HEADER_FLAG_64_BIT_HEADER;
                r.EventHeader.ThreadId = h[3] >> 5;
                r.EventHeader.ProcessId = 0xFFFFFFFF;
                ts += h[7];
                r.EventHeader.TimeStamp.QuadPart = (LONGLONG)ts;
                r.BufferContext.ProcessorIndex = h[6];

                unsigned nr_pmc = (h[3] >> 2) & 7;

                if (nr_pmc) {
                        memset(&x, 0, sizeof(x));
                        x.ExtType = EVENT_HEADER_EXT_TYPE_PMC_COUNTERS;
                        x.DataSize = (USHORT)(8 * nr_pmc);
                        x.DataPtr = (ULONGLONG)(uintptr_t)pmc;
                        r.ExtendedDataCount = 1;
                        r.ExtendedData = &x;
                }

                /* An exact-size heap copy: ASan flags any read past the payload. */
                uint8_t *payload = len ? malloc(len) : NULL;

                if (len && !payload)
                        break;
                if (len)
                        memcpy(payload, data + off, len);
                r.UserData = payload;
                r.UserDataLength = (USHORT)len;

                int rc = kdecoder_decode(d, &r, fuzz_sink, NULL);

                free(payload);
                if (rc != 0 && rc != -EBADMSG)
                        abort();
                off += len;
        }

        struct kdecoder_stats st;

        kdecoder_get_stats(d, &st);
        if (st.nr_stack_refs_pending > st.nr_decoded)
                abort();
        kdecoder_free(d);
        return 0;
}
