/* SPDX-License-Identifier: MIT */
/* test_perf_sample.c: perf record parsing: a live session's samples and sample_id trailers,
   whose parse takes a path of its own, against the general one and cut short at every byte. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "perf_convert.h"

#define LIVE_TYPE                                                                                  \
        (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |            \
         PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW)

static uint32_t put64(uint8_t *p, uint32_t at, uint64_t v)
{
        memcpy(p + at, &v, 8);
        return at + 8;
}

/* A sample of LIVE_TYPE (less the bits of drop), three frames, 12 raw bytes; its size. With
   extra, a PERF_SAMPLE_ADDR value after the time (a type of the general path). */
static uint32_t build(uint8_t *rec, uint64_t drop, bool extra)
{
        uint64_t st = LIVE_TYPE & ~drop;
        uint32_t n = 8;
        if (st & PERF_SAMPLE_IDENTIFIER)
                n = put64(rec, n, 77);
        if (st & PERF_SAMPLE_IP)
                n = put64(rec, n, 0xffffffff81001234ull);
        if (st & PERF_SAMPLE_TID)
                n = put64(rec, n, (uint64_t)1001 << 32 | 1000);
        if (st & PERF_SAMPLE_TIME)
                n = put64(rec, n, 123456789);
        if (extra)
                n = put64(rec, n, 0xdead);
        if (st & PERF_SAMPLE_CPU)
                n = put64(rec, n, 3);
        if (st & PERF_SAMPLE_PERIOD)
                n = put64(rec, n, 250000);
        if (st & PERF_SAMPLE_CALLCHAIN) {
                n = put64(rec, n, 3);
                n = put64(rec, n, (uint64_t)PERF_CONTEXT_KERNEL);
                n = put64(rec, n, 0xffffffff81001234ull);
                n = put64(rec, n, 0xffffffff81005678ull);
        }
        if (st & PERF_SAMPLE_RAW) {
                uint32_t size = 12;
                memcpy(rec + n, &size, 4);
                memset(rec + n + 4, 0xab, 12);
                n += 16;
        }
        struct perf_event_header h = {PERF_RECORD_SAMPLE, 0, (uint16_t)n};
        memcpy(rec, &h, sizeof(h));
        return n;
}

static void assert_sample(const struct perf_sample *s, uint64_t st)
{
        assert_int_equal(s->id, st & PERF_SAMPLE_IDENTIFIER ? 77 : 0);
        assert_int_equal(s->ip, st & PERF_SAMPLE_IP ? 0xffffffff81001234ull : 0);
        assert_int_equal(s->pid, st & PERF_SAMPLE_TID ? 1000 : 0);
        assert_int_equal(s->tid, st & PERF_SAMPLE_TID ? 1001 : 0);
        assert_int_equal(s->time, st & PERF_SAMPLE_TIME ? 123456789 : 0);
        assert_int_equal(s->cpu, st & PERF_SAMPLE_CPU ? 3 : 0);
        assert_int_equal(s->period, st & PERF_SAMPLE_PERIOD ? 250000 : 0);
        assert_int_equal(s->nr_callchain, st & PERF_SAMPLE_CALLCHAIN ? 3 : 0);
        if (st & PERF_SAMPLE_CALLCHAIN) {
                uint64_t a;
                memcpy(&a, s->callchain + 16, 8);
                assert_int_equal(a, 0xffffffff81005678ull);
        } else {
                assert_null(s->callchain);
        }
        assert_int_equal(s->raw_size, st & PERF_SAMPLE_RAW ? 12 : 0);
        if (st & PERF_SAMPLE_RAW)
                assert_int_equal(s->raw[11], 0xab);
        else
                assert_null(s->raw);
        assert_int_equal(s->nr_branches, 0);
        assert_null(s->stack);
        assert_null(s->regs);
}

/* Every subset of the live session's bits parses to the same fields as the general path gives
   the same record with a field of its own (ADDR) among them; a record cut short anywhere is
   -EBADMSG on both paths. */
static void test_live_samples(void **state)
{
        (void)state;
        for (uint64_t drop = 0; drop < 64; drop++) {
                /* the six optional bits of LIVE_TYPE but CALLCHAIN and RAW, and those two */
                static const uint64_t bits[6] = {PERF_SAMPLE_IP,        PERF_SAMPLE_TID,
                                                 PERF_SAMPLE_TIME,      PERF_SAMPLE_PERIOD,
                                                 PERF_SAMPLE_CALLCHAIN, PERF_SAMPLE_RAW};
                uint64_t d = 0;
                for (int i = 0; i < 6; i++)
                        if (drop & (1u << i))
                                d |= bits[i];
                uint64_t st = LIVE_TYPE & ~d;
                uint8_t rec[256], slow[256];
                uint32_t n = build(rec, d, false);
                uint32_t n_slow = build(slow, d, true);
                struct perf_sample s, t;
                memset(&s, 0x55, sizeof(s));
                memset(&t, 0x55, sizeof(t));
                assert_int_equal(perf_sample_parse(rec, n, st, 0, 0, 0, &s), 0);
                assert_int_equal(
                        perf_sample_parse(slow, n_slow, st | PERF_SAMPLE_ADDR, 0, 0, 0, &t), 0);
                assert_sample(&s, st);
                assert_sample(&t, st);
                /* (the raw data, 4 + 12 bytes, needs no padding) */
                for (uint32_t cut = 8; cut < n; cut++)
                        assert_int_equal(perf_sample_parse(rec, cut, st, 0, 0, 0, &s), -EBADMSG);
        }
}

/* The trailer of a live session's records (tid, time, cpu, identifier) and of another layout. */
static void test_live_trailer(void **state)
{
        (void)state;
        uint8_t rec[64] = {0};
        uint32_t n = 16;
        n = put64(rec, n, (uint64_t)2001 << 32 | 2000);
        n = put64(rec, n, 987654321);
        n = put64(rec, n, 5);
        n = put64(rec, n, 99);
        struct perf_sample_id sid;
        assert_int_equal(perf_sample_id_parse(rec, n,
                                              PERF_CONV_SAMPLE_ID_BITS | PERF_SAMPLE_IP |
                                                      PERF_SAMPLE_CALLCHAIN,
                                              &sid),
                         0);
        assert_int_equal(sid.pid, 2000);
        assert_int_equal(sid.tid, 2001);
        assert_int_equal(sid.time, 987654321);
        assert_true(sid.has_time);
        assert_int_equal(sid.cpu, 5);
        assert_true(sid.has_cpu);
        assert_int_equal(sid.id, 99);
        assert_int_equal(perf_sample_id_parse(rec, 39, PERF_CONV_SAMPLE_ID_BITS, &sid), -EBADMSG);
        /* another layout (the general path): tid, time, identifier, the record's last 24 bytes */
        assert_int_equal(
                perf_sample_id_parse(
                        rec, n, PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_IDENTIFIER, &sid),
                0);
        assert_int_equal(sid.pid, 987654321);
        assert_int_equal(sid.tid, 0);
        assert_int_equal(sid.time, 5);
        assert_false(sid.has_cpu);
        assert_int_equal(sid.id, 99);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_live_samples),
                cmocka_unit_test(test_live_trailer),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
