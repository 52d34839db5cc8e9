/* SPDX-License-Identifier: MIT */
/* test_feed.c: src/feed's two ways of reading a trace give one model: read and decoded on the
   caller's thread (feed_run, the reports), or read on the feed's thread and handed over through
   its queue to be decoded a slice at a time (feed_start and feed_drain, the screen), a file
   larger than the queue so that it wraps and the feed's thread waits for room; a feed closed
   while its thread waits for room ends; one feed_drain decodes a slice of records at most; a
   perf.data's samples go on with their stacks in time order, as live; a live session's
   buffers, handed over whole, are read on the consumer's thread. */
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "feed.h"
#include "kevent.h"
#include "model/hot.h"
#include "model/profile.h"
#include "rt_props.h"

/* The largest sample (4.9 MB compressed, 179,474 records: about 30 MB once copied, several
   times the queue). */
static const char *sample(void)
{
        static char path[PATH_MAX];
        const char *dir = getenv("ETWTOP_SAMPLES_UNPACKED");
        if (!dir)
                return NULL;
        snprintf(path, sizeof(path), "%s/net.4.5.2.x64.etl", dir);
        FILE *f = fopen(path, "rb");
        if (!f)
                return NULL;
        fclose(f);
        return path;
}

static struct profile *model_new(void)
{
        struct profile_options po = {.max_functions = 1u << 18};
        return profile_new(&po);
}

static void assert_same_model(const struct profile *a, const struct profile *b)
{
        const struct profile_trace *x = profile_trace(a), *y = profile_trace(b);
        assert_int_equal(x->nr_events, y->nr_events);
        assert_int_equal(x->nr_stacks, y->nr_stacks);
        assert_int_equal(x->first_ns, y->first_ns);
        assert_int_equal(x->last_ns, y->last_ns);
        assert_int_equal(x->last_timestamp, y->last_timestamp);
        assert_int_equal(profile_nr_lost(a), profile_nr_lost(b));
        assert_int_equal(hot_nr_samples(profile_hot(a), HOT_SOURCE_TIMER),
                         hot_nr_samples(profile_hot(b), HOT_SOURCE_TIMER));
        assert_memory_equal(x->timeline, y->timeline, sizeof(x->timeline));
}

/* The screen's way, budget_ns at a time, sleeping on the feed's fd when there is nothing. */
static void drain_to_end(struct feed *f, int64_t budget_ns, uint32_t *nr_turns)
{
        *nr_turns = 0;
        while (!feed_is_done(f, NULL)) {
                bool has_backlog = feed_drain(f, budget_ns);
                (*nr_turns)++;
                if (!has_backlog && feed_arm(f)) {
                        struct pollfd p = {feed_fd(f), POLLIN, 0};
                        poll(&p, 1, 1000); /* an upper bound only: the feed wakes it */
                }
        }
        /* done: nothing left, and a sleep on the fd would not be woken for nothing. (The feed's
           thread marks itself done, then hands over and wakes a sleeper: a consumer that saw
           the end and armed in between may find that one wake, once; armed again, none.) */
        assert_false(feed_drain(f, budget_ns));
        assert_true(feed_arm(f));
        struct pollfd p = {feed_fd(f), POLLIN, 0};
        if (poll(&p, 1, 0) == 1) {
                assert_false(feed_drain(f, budget_ns));
                assert_true(feed_arm(f));
                p.revents = 0;
        }
        assert_int_equal(poll(&p, 1, 0), 0);
}

static void test_feed_queue_same_model(void **state)
{
        (void)state;
        const char *path = sample();
        if (!path) {
                fprintf(stderr, "no net.4.5.2.x64.etl (ETWTOP_SAMPLES_UNPACKED): skipped\n");
                skip();
        }
        char err[512];
        struct profile *direct = model_new();
        struct feed *f = NULL;
        assert_int_equal(feed_replay_file(&f, direct, path, false, 0, false, 0, err, sizeof(err)),
                         0);
        assert_int_equal(feed_fd(f), -1);
        feed_close(f);
        assert_true(profile_nr_events(direct) > 100000);

        /* the whole slice at once, then 64 records a turn (a budget of 0) */
        const int64_t budgets[] = {10000000, 0};
        for (size_t i = 0; i < 2; i++) {
                struct profile *queued = model_new();
                assert_int_equal(feed_open(&f, queued, path, NULL, true, err, sizeof(err)), 0);
                assert_true(feed_fd(f) >= 0);
                assert_int_equal(feed_start(f), 0);
                uint32_t nr_turns;
                drain_to_end(f, budgets[i], &nr_turns);
                ULONG status = 1;
                assert_true(feed_is_done(f, &status));
                assert_int_equal(status, ERROR_SUCCESS);
                assert_int_equal(feed_nr_dropped(f), 0);
                if (budgets[i] == 0)
                        assert_true(nr_turns >= profile_nr_events(direct) / 64);
                feed_close(f);
                assert_same_model(direct, queued);
                profile_free(queued);
        }
        profile_free(direct);
}

/* The screen's slice holds in records, whatever the time budget: a file loads as a burst (the
   feed's thread fills the queue far faster than one turn decodes), each feed_drain decodes at
   most FEED_SLICE_RECORDS of it, even with a budget no clock reaches, takes whole slices while
   there is a backlog, and the queue still empties into the same model. */
static void test_feed_slice_holds(void **state)
{
        (void)state;
        const char *path = sample();
        if (!path) {
                fprintf(stderr, "no net.4.5.2.x64.etl (ETWTOP_SAMPLES_UNPACKED): skipped\n");
                skip();
        }
        char err[512];
        struct profile *direct = model_new();
        struct feed *f = NULL;
        assert_int_equal(feed_replay_file(&f, direct, path, false, 0, false, 0, err, sizeof(err)),
                         0);
        feed_close(f);

        struct profile *queued = model_new();
        assert_int_equal(feed_open(&f, queued, path, NULL, true, err, sizeof(err)), 0);
        assert_int_equal(feed_start(f), 0);
        const int64_t an_hour_ns = 3600ll * 1000000000ll;
        uint64_t most = 0, nr_full = 0, nr_turns = 0;
        while (!feed_is_done(f, NULL)) {
                uint64_t before = feed_nr_decoded(f);
                bool has_backlog = feed_drain(f, an_hour_ns);
                uint64_t got = feed_nr_decoded(f) - before;
                assert_true(got <= FEED_SLICE_RECORDS);
                most = got > most ? got : most;
                nr_full += got == FEED_SLICE_RECORDS;
                nr_turns++;
                if (!has_backlog && feed_arm(f)) {
                        struct pollfd p = {feed_fd(f), POLLIN, 0};
                        poll(&p, 1, 1000); /* an upper bound only: the feed wakes it */
                }
        }
        /* the file is some 40 slices: a burst gave whole ones */
        assert_int_equal(most, FEED_SLICE_RECORDS);
        assert_true(nr_full > 0);
        assert_true(nr_turns >= feed_nr_decoded(f) / FEED_SLICE_RECORDS);
        assert_int_equal(feed_nr_dropped(f), 0);
        /* nothing left behind the slices: every record decoded, the same model */
        assert_false(feed_drain(f, an_hour_ns));
        feed_close(f);
        assert_same_model(direct, queued);
        profile_free(queued);
        profile_free(direct);
}

/* A feed whose records nobody drains fills its queue and waits; closing it ends the wait. */
static void test_feed_close_while_full(void **state)
{
        (void)state;
        const char *path = sample();
        if (!path) {
                fprintf(stderr, "no net.4.5.2.x64.etl (ETWTOP_SAMPLES_UNPACKED): skipped\n");
                skip();
        }
        char err[512];
        struct profile *p = model_new();
        struct feed *f = NULL;
        assert_int_equal(feed_open(&f, p, path, NULL, true, err, sizeof(err)), 0);
        assert_int_equal(feed_start(f), 0);
        /* the queue holds 8 MiB, the file some 30 MB of records: its thread stops reading
           before its end and waits, the buffers read stay short of the file's */
        uint64_t total = feed_nr_buffers(f);
        assert_true(total > 0);
        for (int i = 0; i < 600 && feed_nr_buffers_read(f) == 0; i++)
                poll(NULL, 0, 50);
        assert_true(feed_nr_buffers_read(f) > 0);
        feed_close(f); /* returns: a wait for room gives up, the reading stops */
        assert_int_equal(profile_nr_events(p), 0); /* nothing was drained into the model */
        profile_free(p);
}

/* What the samples' consumer saw of a replay: each sample's time, whether a stack followed it
   at once with its timestamp, and whether the samples came in time order. */
struct sample_order {
        uint64_t nr_samples, nr_stacks, nr_kernel_only;
        int64_t last_ns;
        uint64_t last_timestamp;
        bool has_last, is_in_order, is_stack_after_sample;
};

static void on_sample(void *ctx, const struct kevent *ev)
{
        struct sample_order *o = ctx;
        if (ev->type == KEV_STACK) {
                o->nr_stacks++;
                if (!o->has_last || ev->stack.event_timestamp != o->last_timestamp)
                        o->is_stack_after_sample = false;
                uint32_t n = ev->stack.nr_frames;
                if (n && ev->stack.frames[n - 1] >= 0xffff800000000000ull)
                        o->nr_kernel_only++;
                return;
        }
        if (o->has_last && ev->time_ns < o->last_ns)
                o->is_in_order = false;
        o->nr_samples++;
        o->last_ns = ev->time_ns;
        o->last_timestamp = ev->timestamp;
        o->has_last = true;
}

/* A perf.data's stacks come whole, as etwtop's converter writes them live: each sample goes on
   with its stack at once, in time order, where the join for Windows' stacks in parts held a
   sample whose stack has no user part (an idle CPU's, a kernel thread's) for 200 ms of trace
   time, for a part a conversion never writes (the same counts, later, out of order). */
static void test_perf_data_stacks_whole(void **state)
{
        (void)state;
        const char *dir = getenv("ETWTOP_SAMPLES");
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s/perf/perf.data.callgraph_and_branch-3.4", dir ? dir : "");
        FILE *fp = dir ? fopen(path, "rb") : NULL;
        if (!fp) {
                fprintf(stderr, "no %s (ETWTOP_SAMPLES): skipped\n", path);
                skip();
        }
        fclose(fp);
        struct profile *p = model_new();
        struct sample_order o = {.is_in_order = true, .is_stack_after_sample = true};
        profile_set_sample_sink(p, on_sample, &o);
        struct feed *f = NULL;
        char err[512];
        assert_int_equal(feed_replay_file(&f, p, path, false, 0, false, 0, err, sizeof(err)), 0);
        feed_close(f);
        profile_end(p);
        /* the file's 923 stacks (test_perf_data), some of them the kernel's alone */
        assert_int_equal(o.nr_stacks, 923);
        assert_true(o.nr_kernel_only > 0);
        assert_true(o.nr_samples >= o.nr_stacks);
        assert_true(o.is_stack_after_sample);
        assert_true(o.is_in_order);
        profile_free(p);
}

/* A live session's feed hands its buffers over whole and the consumer's thread reads their
   records: a frame's catch-up takes the header buffer's one record (the logfile header event),
   the session's stop ends the feed once everything is decoded, nothing dropped. The session is
   this process's own (ETWTOP_NO_HOST), one anyone may start: no kernel events, so its header
   buffer is all it delivers. */
static void test_feed_live_buffers(void **state)
{
        (void)state;
        static const char name[] = "etwtop-test-feed-live";
        struct rt_props pr;
        rt_props_init(&pr, EVENT_TRACE_REAL_TIME_MODE);
        pr.p.BufferSize = 16;
        CONTROLTRACE_ID h = 0;
        assert_int_equal(StartTraceA(&h, name, &pr.p), ERROR_SUCCESS);
        struct profile *p = model_new();
        struct feed *f = NULL;
        char err[512];
        assert_int_equal(feed_open(&f, p, NULL, name, true, err, sizeof(err)), 0);
        assert_int_equal(feed_start(f), 0);
        for (int i = 0; i < 3000 && feed_nr_buffers_read(f) == 0; i++)
                poll(NULL, 0, 10);
        assert_int_equal(feed_nr_buffers_read(f), 1);
        feed_catch_up(f);
        assert_int_equal(feed_nr_decoded(f), 1);
        assert_int_equal(profile_trace(p)->nr_events, 1);
        rt_props_init(&pr, 0);
        assert_int_equal(StopTraceA(h, NULL, &pr.p), ERROR_SUCCESS);
        ULONG status = 99;
        bool is_done = false;
        for (int i = 0; i < 3000 && !is_done; i++) {
                feed_drain(f, 1000000);
                is_done = feed_is_done(f, &status);
                if (!is_done)
                        poll(NULL, 0, 10);
        }
        assert_true(is_done);
        assert_int_equal(status, ERROR_SUCCESS);
        assert_int_equal(feed_nr_decoded(f), 1);
        assert_int_equal(feed_nr_dropped(f), 0);
        feed_close(f);
        profile_free(p);
}

/* A live kernel session's buffers, walked with their records built ahead (feed.c walk_build)
   and its timer samples looked at before they are decoded, give the model its file gives: the
   same records, in the same order, none skipped or read twice, whether a buffer holds one
   record, two or many (16 KiB buffers; the CPUs' buffers flushed as the session stops). */
static void test_feed_live_as_file(void **state)
{
        (void)state;
        static const char name[] = "NT Kernel Logger";
        char dir[] = "/tmp/etwtop-test-feed-XXXXXX", path[64];
        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/live.etl", dir);
        struct rt_props pr;
        rt_props_init(&pr, EVENT_TRACE_REAL_TIME_MODE | EVENT_TRACE_FILE_MODE_SEQUENTIAL);
        snprintf(pr.log_file_name, sizeof(pr.log_file_name), "%s", path);
        pr.p.BufferSize = 16;
        pr.p.MaximumBuffers = 4096;
        pr.p.EnableFlags =
                EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD | EVENT_TRACE_FLAG_PROFILE;
        CONTROLTRACE_ID h = 0;
        ULONG rc = StartTraceA(&h, name, &pr.p);
        if (rc == ERROR_ACCESS_DENIED) {
                rmdir(dir);
                fprintf(stderr, "skipped: no kernel session here (not root)\n");
                skip();
        }
        assert_int_equal(rc, ERROR_SUCCESS);
        CLASSIC_EVENT_ID ids[1];
        memset(ids, 0, sizeof(ids));
        ids[0].EventGuid = PerfInfoGuid;
        ids[0].Type = 46; /* SampledProfile: each with its stack */
        assert_int_equal(TraceSetInformation(h, TraceStackTracingInfo, ids, sizeof(ids)),
                         ERROR_SUCCESS);
        struct profile *live = model_new();
        struct feed *f = NULL;
        char err[512];
        assert_int_equal(feed_open(&f, live, NULL, name, true, err, sizeof(err)), 0);
        assert_int_equal(feed_start(f), 0);
        /* this thread busy until the live model counted 500 of its samples */
        volatile uint64_t spin = 0;
        while (hot_nr_samples(profile_hot(live), HOT_SOURCE_TIMER) < 500) {
                for (int i = 0; i < 1000000; i++)
                        spin += (uint64_t)i;
                feed_drain(f, 1000000);
        }
        assert_true(spin > 0);
        rt_props_init(&pr, 0);
        assert_int_equal(StopTraceA(h, NULL, &pr.p), ERROR_SUCCESS);
        uint32_t nr_turns;
        drain_to_end(f, 1000000, &nr_turns);
        assert_int_equal(feed_nr_dropped(f), 0);
        feed_close(f);
        assert_true(hot_nr_stacks(profile_hot(live)) > 0);

        struct profile *file = model_new();
        assert_int_equal(feed_replay_file(&f, file, path, false, 0, false, 0, err, sizeof(err)), 0);
        feed_close(f);
        unlink(path);
        rmdir(dir);
        /* (not assert_same_model: the file's header event is written again at its close, with
           its end, which the live consumer's, read at its start, has not: the last timestamp
           and the timeline's span differ) */
        const struct profile_trace *x = profile_trace(live), *y = profile_trace(file);
        assert_int_equal(x->nr_events, y->nr_events);
        assert_int_equal(x->nr_stacks, y->nr_stacks);
        assert_int_equal(x->first_ns, y->first_ns);
        assert_int_equal(x->last_ns, y->last_ns);
        assert_int_equal(profile_nr_lost(live), 0);
        assert_int_equal(profile_nr_lost(file), 0);
        assert_int_equal(hot_nr_samples(profile_hot(live), HOT_SOURCE_TIMER),
                         hot_nr_samples(profile_hot(file), HOT_SOURCE_TIMER));
        assert_int_equal(hot_nr_stacks(profile_hot(live)), hot_nr_stacks(profile_hot(file)));
        profile_free(file);
        profile_free(live);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_feed_queue_same_model),
                cmocka_unit_test(test_feed_close_while_full),
                cmocka_unit_test(test_feed_slice_holds),
                cmocka_unit_test(test_perf_data_stacks_whole),
                cmocka_unit_test(test_feed_live_buffers),
                cmocka_unit_test(test_feed_live_as_file),
        };
        /* the live test's session in this process: no session host started for it */
        setenv("ETWTOP_NO_HOST", "1", 1);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
