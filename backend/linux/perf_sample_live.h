/* SPDX-License-Identifier: MIT */
/* perf_sample_live.h: the parse of a live session's samples, inline: the converter parses every
   sample it converts, and a call to perf_sample_parse cost a sample its seven arguments, the
   sample_type's test and the call's saves for a parse of a few loads and stores. */
#ifndef ETWTOP_PERF_SAMPLE_LIVE_H
#define ETWTOP_PERF_SAMPLE_LIVE_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include "le_bytes.h"
#include "perf_convert.h"

/* The callchain and the raw data that end the fast paths' samples (p at them, left bytes). */
static inline int perf_sample_chain_raw(const uint8_t *p, uint32_t left, uint64_t st,
                                        struct perf_sample *s)
{
        if (st & PERF_SAMPLE_CALLCHAIN) {
                if (left < 8)
                        return -EBADMSG;
                uint64_t nr = le_get64(p);
                p += 8;
                left -= 8;
                if (nr > left / 8)
                        return -EBADMSG;
                s->nr_callchain = nr;
                s->callchain = p;
                p += 8 * nr;
                left -= 8 * (uint32_t)nr;
        }
        if (st & PERF_SAMPLE_RAW) {
                if (left < 4)
                        return -EBADMSG;
                uint32_t n = le_get32(p);
                if (n > left - 4)
                        return -EBADMSG;
                s->raw_size = n;
                s->raw = p + 4;
        }
        return 0;
}

/* A live session's samples (attr_spec's): identifier, ip, tid, time and cpu at fixed places,
   then the period, the callchain and the raw data where asked for. */
#define PERF_SAMPLE_LIVE_HEAD_TYPES                                                                \
        (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |            \
         PERF_SAMPLE_CPU)
#define PERF_SAMPLE_LIVE_TYPES                                                                     \
        (PERF_SAMPLE_LIVE_HEAD_TYPES | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW)

/* Whether samples of sample_type are in a live session's layout (perf_sample_parse_live's). */
static inline bool perf_sample_is_live(uint64_t sample_type)
{
        return (sample_type & ~(uint64_t)PERF_SAMPLE_LIVE_TYPES) == 0 &&
               (sample_type & PERF_SAMPLE_LIVE_HEAD_TYPES) == PERF_SAMPLE_LIVE_HEAD_TYPES;
}

/* perf_sample_parse of a sample whose sample_type st is perf_sample_is_live. Every field is set
   once (this runs for every sample). */
static inline int perf_sample_parse_live(const uint8_t *rec, uint32_t size, uint64_t st,
                                         struct perf_sample *s)
{
        s->nr_values = s->nr_regs = 0;
        s->nr_branches = s->regs_abi = s->stack_size = 0;
        s->branches = s->regs = s->stack = NULL;
        s->period = s->nr_callchain = 0;
        s->callchain = s->raw = NULL;
        s->raw_size = 0;
        if (size < 48)
                return -EBADMSG;
        s->id = le_get64(rec + 8);
        s->ip = le_get64(rec + 16);
        uint64_t v = le_get64(rec + 24);
        s->pid = (uint32_t)v;
        s->tid = (uint32_t)(v >> 32);
        s->time = le_get64(rec + 32);
        s->cpu = le_get32(rec + 40);
        const uint8_t *p = rec + 48;
        uint32_t left = size - 48;
        if (st & PERF_SAMPLE_PERIOD) {
                if (left < 8)
                        return -EBADMSG;
                s->period = le_get64(p);
                p += 8;
                left -= 8;
        }
        return perf_sample_chain_raw(p, left, st, s);
}

#endif
