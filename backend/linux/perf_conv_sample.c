/* SPDX-License-Identifier: MIT */
/* perf_conv_sample.c: parsing perf records: samples, their sample_id trailers, read formats and
 * lost counts. */
#include "perf_conv_int.h"
#include "perf_sample_live.h"

/* ---- perf record parsing ---- */

struct cursor {
        const uint8_t *p;
        uint32_t left;
        bool is_bad;
};

static uint64_t cur_u64(struct cursor *c)
{
        if (c->left < 8) {
                c->is_bad = true;
                c->left = 0;
                return 0;
        }
        uint64_t v = le_get64(c->p);
        c->p += 8;
        c->left -= 8;
        return v;
}

static const uint8_t *cur_take(struct cursor *c, uint64_t n)
{
        if (n > c->left) {
                c->is_bad = true;
                c->left = 0;
                return NULL;
        }
        const uint8_t *p = c->p;
        c->p += n;
        c->left -= (uint32_t)n;
        return p;
}

static void parse_read(struct cursor *c, uint64_t read_format, struct perf_sample *s)
{
        uint64_t nr = 1;

        if (read_format & PERF_FORMAT_GROUP)
                nr = cur_u64(c);
        if (!(read_format & PERF_FORMAT_GROUP)) {
                s->values[0] = cur_u64(c);
                s->nr_values = 1;
        }
        if (read_format & PERF_FORMAT_TOTAL_TIME_ENABLED)
                cur_u64(c);
        if (read_format & PERF_FORMAT_TOTAL_TIME_RUNNING)
                cur_u64(c);
        if (!(read_format & PERF_FORMAT_GROUP)) {
                if (read_format & PERF_FORMAT_ID)
                        cur_u64(c);
                if (read_format & PERF_FORMAT_LOST)
                        cur_u64(c);
                return;
        }
        if (nr > 64) {
                c->is_bad = true;
                return;
        }
        for (uint64_t i = 0; i < nr && !c->is_bad; i++) {
                uint64_t v = cur_u64(c);
                if (i < 8)
                        s->values[i] = v;
                if (read_format & PERF_FORMAT_ID) {
                        v = cur_u64(c);
                        if (i < 8)
                                s->value_ids[i] = v;
                }
                if (read_format & PERF_FORMAT_LOST)
                        cur_u64(c);
        }
        s->nr_values = nr < 8 ? (uint32_t)nr : 8;
}

/* The sample types of a live session's timer samples and tracepoints (frame-pointer stacks): a
   parse without a cursor, each length checked once. */
#define FAST_SAMPLE_TYPES                                                                          \
        (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |            \
         PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW)

static int parse_fast(const uint8_t *rec, uint32_t size, uint64_t st, struct perf_sample *s)
{
        const uint8_t *p = rec + 8;
        uint32_t left = size - 8;
        uint32_t fixed = 8 * (!!(st & PERF_SAMPLE_IDENTIFIER) + !!(st & PERF_SAMPLE_IP) +
                              !!(st & PERF_SAMPLE_TID) + !!(st & PERF_SAMPLE_TIME) +
                              !!(st & PERF_SAMPLE_CPU) + !!(st & PERF_SAMPLE_PERIOD));
        if (left < fixed)
                return -EBADMSG;
        left -= fixed;
        if (st & PERF_SAMPLE_IDENTIFIER) {
                s->id = le_get64(p);
                p += 8;
        }
        if (st & PERF_SAMPLE_IP) {
                s->ip = le_get64(p);
                p += 8;
        }
        if (st & PERF_SAMPLE_TID) {
                uint64_t v = le_get64(p);
                s->pid = (uint32_t)v;
                s->tid = (uint32_t)(v >> 32);
                p += 8;
        }
        if (st & PERF_SAMPLE_TIME) {
                s->time = le_get64(p);
                p += 8;
        }
        if (st & PERF_SAMPLE_CPU) {
                s->cpu = le_get32(p);
                p += 8;
        }
        if (st & PERF_SAMPLE_PERIOD) {
                s->period = le_get64(p);
                p += 8;
        }
        return perf_sample_chain_raw(p, left, st, s);
}

/* Any other sample: apart from perf_sample_parse, so that a live session's samples do not pay
   for the registers this one saves and restores. */
static __attribute__((noinline)) int parse_any(const uint8_t *rec, uint32_t size,
                                               uint64_t sample_type, uint64_t read_format,
                                               uint64_t branch_sample_type, uint64_t regs_user_mask,
                                               struct perf_sample *s)
{
        /* not a memset: values past nr_values stay as they were (this runs for every sample) */
        s->id = s->ip = s->time = s->period = s->nr_callchain = s->nr_branches = 0;
        s->regs_abi = s->stack_size = 0;
        s->pid = s->tid = s->cpu = s->nr_values = s->raw_size = s->nr_regs = 0;
        s->callchain = s->raw = s->branches = s->regs = s->stack = NULL;
        if (size < sizeof(struct perf_event_header))
                return -EBADMSG;
        if (!(sample_type & ~FAST_SAMPLE_TYPES))
                return parse_fast(rec, size, sample_type, s);

        struct cursor c = {rec + 8, size - 8, false};
        uint64_t v;

        if (sample_type & PERF_SAMPLE_IDENTIFIER)
                s->id = cur_u64(&c);
        if (sample_type & PERF_SAMPLE_IP)
                s->ip = cur_u64(&c);
        if (sample_type & PERF_SAMPLE_TID) {
                v = cur_u64(&c);
                s->pid = (uint32_t)v;
                s->tid = (uint32_t)(v >> 32);
        }
        if (sample_type & PERF_SAMPLE_TIME)
                s->time = cur_u64(&c);
        if (sample_type & PERF_SAMPLE_ADDR)
                cur_u64(&c);
        if (sample_type & PERF_SAMPLE_ID) {
                v = cur_u64(&c);
                if (!(sample_type & PERF_SAMPLE_IDENTIFIER))
                        s->id = v;
        }
        if (sample_type & PERF_SAMPLE_STREAM_ID)
                cur_u64(&c);
        if (sample_type & PERF_SAMPLE_CPU)
                s->cpu = (uint32_t)cur_u64(&c);
        if (sample_type & PERF_SAMPLE_PERIOD)
                s->period = cur_u64(&c);
        if (sample_type & PERF_SAMPLE_READ)
                parse_read(&c, read_format, s);
        if (sample_type & PERF_SAMPLE_CALLCHAIN) {
                s->nr_callchain = cur_u64(&c);
                if (s->nr_callchain > c.left / 8)
                        return -EBADMSG;
                s->callchain = cur_take(&c, s->nr_callchain * 8);
        }
        if (sample_type & PERF_SAMPLE_RAW) {
                if (c.left < 4)
                        return -EBADMSG;
                s->raw_size = le_get32(c.p);
                c.p += 4;
                c.left -= 4;
                s->raw = cur_take(&c, s->raw_size);
                /* the u32 size plus data are padded to 8 bytes */
                uint32_t pad = (8 - ((4 + s->raw_size) & 7)) & 7;
                if (!c.is_bad && pad <= c.left) {
                        c.p += pad;
                        c.left -= pad;
                }
        }
        if (sample_type & PERF_SAMPLE_BRANCH_STACK) {
                s->nr_branches = cur_u64(&c);
                if (branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
                        cur_u64(&c);
                if (s->nr_branches > c.left / 24)
                        return -EBADMSG;
                s->branches = cur_take(&c, s->nr_branches * 24);
                if (branch_sample_type & PERF_CONV_BRANCH_COUNTERS)
                        cur_take(&c, s->nr_branches * 8);
        }
        if (sample_type & PERF_SAMPLE_REGS_USER) {
                s->regs_abi = cur_u64(&c);
                if (s->regs_abi) {
                        s->nr_regs = (uint32_t)__builtin_popcountll(regs_user_mask);
                        s->regs = cur_take(&c, (uint64_t)s->nr_regs * 8);
                }
        }
        if (sample_type & PERF_SAMPLE_STACK_USER) {
                uint64_t copied = cur_u64(&c);
                if (copied) {
                        s->stack = cur_take(&c, copied);
                        uint64_t dyn = cur_u64(&c); /* the bytes that hold data */
                        s->stack_size = dyn < copied ? dyn : copied;
                }
        }
        /* later fields (weight, data source ...) are not needed */
        return c.is_bad ? -EBADMSG : 0;
}

int perf_sample_parse(const uint8_t *rec, uint32_t size, uint64_t sample_type, uint64_t read_format,
                      uint64_t branch_sample_type, uint64_t regs_user_mask, struct perf_sample *s)
{
        if (perf_sample_is_live(sample_type))
                return perf_sample_parse_live(rec, size, sample_type, s);
        return parse_any(rec, size, sample_type, read_format, branch_sample_type, regs_user_mask,
                         s);
}

#define TRAILER_BITS                                                                               \
        (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |             \
         PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

int perf_sample_id_parse(const uint8_t *rec, uint32_t size, uint64_t sample_type,
                         struct perf_sample_id *sid)
{
        if ((sample_type & TRAILER_BITS) == PERF_CONV_SAMPLE_ID_BITS && size >= 8 + 32) {
                /* a live session's: tid, time, cpu, identifier (one of every record) */
                const uint8_t *t = rec + size - 32;
                uint64_t v = le_get64(t);
                sid->pid = (uint32_t)v;
                sid->tid = (uint32_t)(v >> 32);
                sid->time = le_get64(t + 8);
                sid->cpu = le_get32(t + 16);
                sid->id = le_get64(t + 24);
                sid->has_time = sid->has_cpu = true;
                return 0;
        }
        /* the trailer's fields, one u64 each (no popcount: without -mpopcnt it is a call) */
        uint32_t n =
                8 * (!!(sample_type & PERF_SAMPLE_TID) + !!(sample_type & PERF_SAMPLE_TIME) +
                     !!(sample_type & PERF_SAMPLE_ID) + !!(sample_type & PERF_SAMPLE_STREAM_ID) +
                     !!(sample_type & PERF_SAMPLE_CPU) + !!(sample_type & PERF_SAMPLE_IDENTIFIER));

        memset(sid, 0, sizeof(*sid));
        sid->pid = sid->tid = CONV_NONE;
        if (size < 8 + n)
                return -EBADMSG;

        const uint8_t *p = rec + size - n;
        uint64_t v;

        if (sample_type & PERF_SAMPLE_TID) {
                v = le_get64(p);
                sid->pid = (uint32_t)v;
                sid->tid = (uint32_t)(v >> 32);
                p += 8;
        }
        if (sample_type & PERF_SAMPLE_TIME) {
                sid->time = le_get64(p);
                sid->has_time = true;
                p += 8;
        }
        if (sample_type & PERF_SAMPLE_ID) {
                sid->id = le_get64(p);
                p += 8;
        }
        if (sample_type & PERF_SAMPLE_STREAM_ID)
                p += 8;
        if (sample_type & PERF_SAMPLE_CPU) {
                sid->cpu = le_get32(p);
                sid->has_cpu = true;
                p += 8;
        }
        if (sample_type & PERF_SAMPLE_IDENTIFIER)
                sid->id = le_get64(p);
        return 0;
}

int perf_read_lost(const uint8_t *buf, size_t size, uint64_t read_format, uint64_t *lost)
{
        struct cursor c = {buf, size > UINT32_MAX ? UINT32_MAX : (uint32_t)size, false};
        uint64_t nr = 1, sum = 0;

        *lost = 0;
        if (read_format & PERF_FORMAT_GROUP)
                nr = cur_u64(&c);
        else
                cur_u64(&c); /* value */
        if (read_format & PERF_FORMAT_TOTAL_TIME_ENABLED)
                cur_u64(&c);
        if (read_format & PERF_FORMAT_TOTAL_TIME_RUNNING)
                cur_u64(&c);
        if (nr > 1024)
                return -EBADMSG;
        for (uint64_t i = 0; i < nr && !c.is_bad; i++) {
                if (read_format & PERF_FORMAT_GROUP)
                        cur_u64(&c); /* value */
                if (read_format & PERF_FORMAT_ID)
                        cur_u64(&c);
                if (read_format & PERF_FORMAT_LOST)
                        sum += cur_u64(&c);
        }
        if (c.is_bad)
                return -EBADMSG;
        *lost = sum;
        return 0;
}
