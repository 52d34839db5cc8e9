/* SPDX-License-Identifier: MIT */
/* fuzz_perf.c: libFuzzer target for the converter of perf ring records (backend/perf_convert.c):
   hostile records of hostile events through perf_conv_record, samples with callchains, branch
   stacks, register and stack copies walked with DWARF (the images their MMAP2 records name),
   then the stop's rundown.
   Input: u8 number of events (1..4), then per event u8 kind (1 side band, 2 profile, 3 PMC
   sample), u8 walk (enum perf_conv_walk), u16 and u32 unused, u64 sample_type, read_format,
   branch_sample_type and sample_regs_user; then records, each a u32 ring CPU and a perf record
   (its header's size says how long). Event i has sample id i + 1. Corpus: tests/corpus/perf/
   (an MMAP2 of this machine's libc and a DWARF sample over it, a callchain sample, a branch
   stack sample). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "perf_convert.h"

#define MAX_EVENTS 4
#define EVENT_SIZE 40

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct perf_conv_event events[MAX_EVENTS];
static uint32_t nr_events;
static volatile size_t fuzz_sink;

static int hook_emit(void *ctx, uint32_t cpu, const void *rec, uint32_t size)
{
        (void)ctx;
        fuzz_sink += cpu + size + ((const uint8_t *)rec)[size - 1];
        return 0;
}

static const struct perf_conv_event *hook_event_of(void *ctx, uint64_t id)
{
        (void)ctx;
        return id >= 1 && id <= nr_events ? &events[id - 1] : NULL;
}

static void hook_cmdline_of(void *ctx, uint32_t pid, char *buf, size_t size)
{
        (void)ctx;
        (void)pid;
        if (size)
                buf[0] = '\0';
}

static uint32_t hook_build_id_of(void *ctx, const char *path, uint8_t *id, uint32_t max)
{
        (void)ctx;
        (void)path;
        (void)id;
        (void)max;
        return 0;
}

static uint32_t hook_uid_of(void *ctx, uint32_t pid)
{
        (void)ctx;
        (void)pid;
        return 0;
}

static uint64_t get64(const uint8_t *p)
{
        uint64_t v;
        memcpy(&v, p, 8);
        return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const uint64_t known =
                PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
                PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |
                PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
        static const enum perf_conv_kind kinds[] = {PERF_CONV_SIDEBAND, PERF_CONV_PROFILE,
                                                    PERF_CONV_PMC_SAMPLE};
        if (size < 1)
                return 0;
        nr_events = data[0] % MAX_EVENTS + 1;
        size_t off = 1;
        if (size < off + (size_t)nr_events * EVENT_SIZE)
                return 0;
        for (uint32_t i = 0; i < nr_events; i++, off += EVENT_SIZE) {
                const uint8_t *e = data + off;
                struct perf_conv_event *ev = &events[i];
                memset(ev, 0, sizeof(*ev));
                ev->kind = kinds[e[0] % 3];
                ev->walk = e[1] % 3;
                ev->sample_type = (get64(e + 8) & known) | PERF_CONV_SAMPLE_ID_BITS;
                ev->read_format = get64(e + 16);
                ev->branch_sample_type = get64(e + 24);
                ev->regs_user_mask = get64(e + 32);
                ev->has_stack = (ev->sample_type & PERF_SAMPLE_CALLCHAIN) != 0;
                ev->has_lbr = (ev->sample_type & PERF_SAMPLE_BRANCH_STACK) != 0;
                ev->nr_pmc = e[2] % 4;
                ev->valid_until = UINT64_MAX;
        }
        struct perf_conv_ops ops = {hook_emit,        hook_event_of, hook_cmdline_of,
                                    hook_build_id_of, NULL,          hook_uid_of};
        struct perf_conv *c;
        if (perf_conv_new(&c, &ops, NULL, 2) < 0)
                return 0;
        perf_conv_set_walk(c, PERF_CONV_WALK_DWARF, 8192);
        /* each record copied to an 8-aligned buffer of its own size, as a ring hands it out */
        uint8_t *rec = NULL;
        while (size - off >= 4 + 8) {
                uint32_t ring_cpu;
                memcpy(&ring_cpu, data + off, 4);
                off += 4;
                uint16_t rsize;
                memcpy(&rsize, data + off + 6, 2);
                if (rsize < 8 || rsize > size - off)
                        break;
                free(rec);
                rec = malloc(rsize);
                if (!rec)
                        break;
                memcpy(rec, data + off, rsize);
                perf_conv_record(c, ring_cpu % 2, rec, rsize);
                off += rsize;
        }
        free(rec);
        perf_conv_rundown_end(c, 0, UINT64_MAX / 2);
        perf_conv_free(c);
        return 0;
}
