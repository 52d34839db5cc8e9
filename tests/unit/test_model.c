/* SPDX-License-Identifier: MIT */
/* test_model.c: the model's aggregates (branch edges, context switches), its aggregation modes
   (cumulative, decaying, zeroed), filters and time ranges, fed from synthetic decoded events
   (LBR, PMC, CSwitch, ReadyThread, stacks) and from a recorded .etl decoded end to end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "etw/evntrace.h"
#include "etw/ntwmi.h"
#include "kdecoder.h"
#include "kevent.h"
#include "model/aggregate.h"
#include "model/branches.h"
#include "model/calltree.h"
#include "model/hot.h"
#include "model/hot_ipc.h"
#include "model/profile.h"
#include "model/switches.h"
#include "model/sym_feed.h"
#include "symbols/symbols.h"
#include "util/hash.h"

#define MS(x) ((int64_t)(x)*1000000ll)

/* KTHREAD_STATE and KWAIT_REASON values (ETL-FORMAT.md 3.5) */
#define ST_READY          1
#define ST_TERMINATED     4
#define ST_WAITING        5
#define WR_EXECUTIVE      0
#define WR_DELAYEXECUTION 4
#define WR_USERREQUEST    6
#define WR_QUEUE          15
#define WR_TERMINATED     22
#define WR_PREEMPTED      32

/* ---- code to name: functions of this binary, placed through a synthetic image ---- */

static volatile int sink_value;

static int model_fn_alpha(int x)
{
        for (int i = 0; i < x; i++)
                sink_value += i * 3;
        return sink_value;
}

static int model_fn_beta(int x)
{
        for (int i = 0; i < x; i++)
                sink_value ^= i + 7;
        return sink_value + 1;
}

static int model_fn_gamma(int x)
{
        for (int i = 0; i < x; i++)
                sink_value -= i * 5 + 2;
        return sink_value - 2;
}

/* named as a wake-up function is: a readier's stack passes over it */
static int wake_up_model_fixture(int x)
{
        for (int i = 0; i < x; i++)
                sink_value += i * 11 + 1;
        return sink_value + 3;
}

/* named as a scheduler function is: a blocking stack passes over it */
static int schedule_model_fixture(int x)
{
        for (int i = 0; i < x; i++)
                sink_value -= i * 13 + 5;
        return sink_value - 7;
}

#define PID_A   100
#define PID_B   200
#define EXE     0x10000000ull         /* where the test binary is "mapped" in PID_A and PID_B */
#define NT_BASE 0x7ffb10000000ull     /* a Windows DLL that is not on this machine */
#define KBASE   0xfffff80412340000ull /* a Windows driver */

struct fix {
        struct sym_store *store;
        char exe_path[4096];
        uint64_t off_alpha, off_beta, off_gamma; /* file offsets in the test binary */
        uint64_t off_wake, off_sched;
        uint32_t fn_alpha, fn_beta, fn_gamma; /* interned names */
};

struct find_offset {
        uintptr_t addr;
        uint64_t offset;
        bool is_found;
};

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *ctx)
{
        (void)size;
        struct find_offset *f = ctx;
        for (int i = 0; i < info->dlpi_phnum; i++) {
                const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
                uintptr_t start = info->dlpi_addr + ph->p_vaddr;
                if (ph->p_type == PT_LOAD && f->addr >= start && f->addr < start + ph->p_memsz) {
                        f->offset = f->addr - start + ph->p_offset;
                        f->is_found = true;
                        return 1;
                }
        }
        return 0;
}

static uint64_t file_offset_of(int (*fn)(int))
{
        struct find_offset f = {0, 0, false};
        memcpy(&f.addr, &fn, sizeof(f.addr) < sizeof(fn) ? sizeof(f.addr) : sizeof(fn));
        dl_iterate_phdr(phdr_cb, &f);
        assert_true(f.is_found);
        return f.offset;
}

static void quiet_log(void *ctx, const char *message)
{
        (void)ctx;
        (void)message;
}

static void fix_image(struct fix *fx, uint32_t pid, uint64_t base)
{
        struct sym_image im = {pid, base, 1u << 24, 0, fx->exe_path, NULL, 0, 0, 0};
        sym_image_load(fx->store, &im);
}

static void fix_nt(struct fix *fx, uint32_t pid)
{
        struct sym_image nt = {pid,
                               NT_BASE,
                               0x1f8000,
                               0,
                               "\\Device\\HarddiskVolume3\\Windows\\System32\\ntdll.dll",
                               NULL,
                               0,
                               0x5e8f1c2a,
                               0};
        sym_image_load(fx->store, &nt);
}

static int fix_setup(void **state)
{
        struct fix *fx = calloc(1, sizeof(*fx));
        assert_non_null(fx);
        ssize_t n = readlink("/proc/self/exe", fx->exe_path, sizeof(fx->exe_path) - 1);
        assert_true(n > 0);
        fx->exe_path[n] = '\0';
        fx->off_alpha = file_offset_of(model_fn_alpha);
        fx->off_beta = file_offset_of(model_fn_beta);
        fx->off_gamma = file_offset_of(model_fn_gamma);
        fx->off_wake = file_offset_of(wake_up_model_fixture);
        fx->off_sched = file_offset_of(schedule_model_fixture);
        struct sym_options o = {.is_synchronous = true, .log = quiet_log};
        assert_int_equal(sym_store_new(&fx->store, &o), 0);
        fix_image(fx, PID_A, EXE);
        fix_image(fx, PID_B, EXE);
        fix_nt(fx, PID_A);
        struct sym_image drv = {
                0, KBASE, 0x100000, 0, "\\SystemRoot\\system32\\drivers\\tcpip.sys", NULL, 0, 1, 0};
        sym_image_load(fx->store, &drv);
        fx->fn_alpha = sym_intern(fx->store, "model_fn_alpha");
        fx->fn_beta = sym_intern(fx->store, "model_fn_beta");
        fx->fn_gamma = sym_intern(fx->store, "model_fn_gamma");
        /* the symbols of this binary are readable: otherwise the function tests mean nothing */
        struct sym_frame f;
        sym_resolve(fx->store, sym_locate(fx->store, PID_A, EXE + fx->off_alpha), &f);
        assert_int_equal(f.state, SYM_RESOLVED);
        assert_int_equal(f.function, fx->fn_alpha);
        sink_value = model_fn_alpha(1) + model_fn_beta(1) + model_fn_gamma(1);
        sink_value = wake_up_model_fixture(1) & 0xff;
        sink_value = schedule_model_fixture(1) & 0xff;
        *state = fx;
        return 0;
}

static int fix_teardown(void **state)
{
        struct fix *fx = *state;
        sym_store_free(fx->store);
        free(fx);
        return 0;
}

/* ---- synthetic decoded events ---- */

static struct kevent ev_base(enum kevent_type type, uint32_t cpu, int64_t t, uint32_t pid,
                             uint32_t tid)
{
        struct kevent ev;
        memset(&ev, 0, sizeof(ev));
        ev.type = type;
        ev.name = "";
        ev.cpu = cpu;
        ev.time_ns = t;
        ev.timestamp = (uint64_t)t + 1000000000ull; /* raw ticks: the session started at 1 s */
        ev.pid = pid;
        ev.tid = tid;
        return ev;
}

static struct kevent ev_lbr(uint32_t cpu, int64_t t, uint32_t pid, uint32_t tid,
                            const struct kevent_lbr_entry *entries, uint32_t n)
{
        struct kevent ev = ev_base(KEV_LBR, cpu, t, pid, tid);
        ev.lbr.event_timestamp = ev.timestamp;
        ev.lbr.pid = pid;
        ev.lbr.tid = tid;
        ev.lbr.options = EVNTRACE_LBR_FILTER_KERNEL;
        ev.lbr.nr_entries = n;
        ev.lbr.entries = entries;
        return ev;
}

static struct kevent ev_pmc(uint32_t cpu, int64_t t, uint32_t pid, uint32_t tid, uint64_t ip,
                            uint16_t source)
{
        struct kevent ev = ev_base(KEV_PMC_SAMPLE, cpu, t, pid, tid);
        ev.pmc_sample.ip = ip;
        ev.pmc_sample.tid = tid;
        ev.pmc_sample.source = source;
        return ev;
}

static struct kevent ev_cswitch(uint32_t cpu, int64_t t, uint32_t old_tid, uint32_t old_pid,
                                uint8_t old_state, uint8_t reason, uint32_t new_tid,
                                uint32_t new_pid)
{
        struct kevent ev = ev_base(KEV_CSWITCH, cpu, t, new_pid, new_tid);
        ev.cswitch.old_tid = old_tid;
        ev.cswitch.old_pid = old_pid;
        ev.cswitch.new_tid = new_tid;
        ev.cswitch.new_pid = new_pid;
        ev.cswitch.old_state = old_state;
        ev.cswitch.old_wait_reason = reason;
        ev.cswitch.old_wait_mode = 1;
        ev.nr_pmc = 2; /* counters ride on CSwitch events; the model ignores them */
        ev.pmc[0] = 3896;
        ev.pmc[1] = 9400;
        return ev;
}

static struct kevent ev_ready(uint32_t cpu, int64_t t, uint32_t tid, uint32_t pid, uint32_t by_tid,
                              uint32_t by_pid)
{
        struct kevent ev = ev_base(KEV_READY_THREAD, cpu, t, pid, tid);
        ev.ready_thread.tid = tid;
        ev.ready_thread.readying_tid = by_tid;
        ev.ready_thread.readying_pid = by_pid;
        ev.ready_thread.adjust_reason = 1;
        return ev;
}

static struct kevent ev_stack(uint32_t cpu, int64_t t, uint32_t pid, uint32_t tid,
                              const uint64_t *frames, uint32_t n)
{
        struct kevent ev = ev_base(KEV_STACK, cpu, t, pid, tid);
        ev.stack.event_timestamp = ev.timestamp;
        ev.stack.event_time_ns = t;
        ev.stack.pid = pid;
        ev.stack.tid = tid;
        ev.stack.nr_frames = n;
        ev.stack.frames = frames;
        return ev;
}

static struct kevent ev_thread(enum kevent_phase phase, int64_t t, uint32_t pid, uint32_t tid,
                               const char *name)
{
        struct kevent ev = ev_base(KEV_THREAD, 0, t, pid, tid);
        ev.thread.phase = phase;
        ev.thread.pid = pid;
        ev.thread.tid = tid;
        ev.thread.name = name;
        return ev;
}

static struct kevent ev_process(enum kevent_phase phase, int64_t t, uint32_t pid, const char *image)
{
        struct kevent ev = ev_base(KEV_PROCESS, 0, t, pid, 0);
        ev.process.phase = phase;
        ev.process.pid = pid;
        ev.process.image_name = image;
        ev.process.user_sid = ev.process.command_line = ev.process.package_full_name = "";
        ev.process.application_id = "";
        return ev;
}

/* ---- aggregate.h ---- */

static void test_agg_settings(void **state)
{
        (void)state;
        struct agg_settings s;
        agg_settings_init(&s);
        assert_int_equal(s.mode, AGG_CUMULATIVE);
        assert_int_equal(agg_settings_apply(&s, 77), 77);
        assert_false(agg_settings_is_droppable(&s, 0));

        s.mode = AGG_DECAYING;
        assert_int_equal(agg_settings_apply(&s, 77), 38); /* 0.5, rounded down */
        assert_int_equal(agg_settings_apply(&s, 1), 0);
        assert_true(agg_settings_is_droppable(&s, 0));
        assert_false(agg_settings_is_droppable(&s, 1));
        s.decay_factor = 0.75;
        assert_int_equal(agg_settings_apply(&s, 100), 75);
        s.decay_factor = 1.5; /* out of (0, 1): the default */
        assert_int_equal(agg_settings_apply(&s, 100), 50);
        s.decay_factor = 0;
        assert_int_equal(agg_settings_apply(&s, 100), 50);
        s.drop_below = 10;
        assert_true(agg_settings_is_droppable(&s, 9));
        assert_false(agg_settings_is_droppable(&s, 10));

        s.mode = AGG_ZEROED;
        assert_int_equal(agg_settings_apply(&s, 12345), 0);
        assert_true(agg_settings_is_droppable(&s, 0));

        assert_string_equal(agg_mode_name(AGG_CUMULATIVE), "cumulative");
        assert_string_equal(agg_mode_name(AGG_DECAYING), "decaying");
        assert_string_equal(agg_mode_name(AGG_ZEROED), "zeroed");
}

static void test_agg_filter(void **state)
{
        (void)state;
        struct agg_filter f;
        agg_filter_init(&f);
        assert_true(agg_filter_pass(&f, 1, 2, -5));
        assert_true(agg_filter_pass(&f, AGG_ALL, AGG_ALL, INT64_MAX));
        assert_int_equal(agg_filter_clip_ns(&f, 10, 30), 20);
        assert_int_equal(agg_filter_clip_ns(&f, 30, 10), 0);

        /* pids */
        assert_int_equal(agg_filter_add_pid(&f, 100), 0);
        assert_int_equal(agg_filter_add_pid(&f, 100), 0); /* twice is once */
        assert_int_equal(f.nr_pids, 1);
        assert_true(agg_filter_pass(&f, 100, 7, 0));
        assert_false(agg_filter_pass(&f, 101, 7, 0));
        assert_false(agg_filter_has_pid(&f, AGG_ALL)); /* unknown pid: not in the set */
        assert_true(agg_filter_has_tid(&f, 7));

        /* tids: with pids too, both must match */
        assert_int_equal(agg_filter_add_tid(&f, 7), 0);
        assert_true(agg_filter_pass(&f, 100, 7, 0));
        assert_false(agg_filter_pass(&f, 100, 8, 0));
        assert_false(agg_filter_pass(&f, 101, 7, 0));

        /* the sets are bounded */
        struct agg_filter g;
        agg_filter_init(&g);
        for (uint32_t i = 0; i < AGG_MAX_FILTER_IDS; i++)
                assert_int_equal(agg_filter_add_tid(&g, i), 0);
        assert_int_equal(agg_filter_add_tid(&g, 999), -ENOSPC);
        assert_int_equal(agg_filter_add_tid(&g, 3), 0); /* already there */
        for (uint32_t i = 0; i < AGG_MAX_FILTER_IDS; i++)
                assert_int_equal(agg_filter_add_pid(&g, i), 0);
        assert_int_equal(agg_filter_add_pid(&g, 999), -ENOSPC);

        /* time range: half-open */
        agg_filter_init(&f);
        assert_int_equal(agg_filter_set_time_range(&f, MS(10), MS(5)), -EINVAL);
        assert_false(f.has_time_range);
        assert_int_equal(agg_filter_set_time_range(&f, MS(10), MS(20)), 0);
        assert_false(agg_filter_has_time(&f, MS(10) - 1));
        assert_true(agg_filter_has_time(&f, MS(10)));
        assert_true(agg_filter_has_time(&f, MS(20) - 1));
        assert_false(agg_filter_has_time(&f, MS(20)));
        assert_false(agg_filter_pass(&f, 1, 1, MS(25)));
        assert_int_equal(agg_filter_clip_ns(&f, MS(5), MS(15)), MS(5));
        assert_int_equal(agg_filter_clip_ns(&f, MS(12), MS(30)), MS(8));
        assert_int_equal(agg_filter_clip_ns(&f, MS(0), MS(40)), MS(10));
        assert_int_equal(agg_filter_clip_ns(&f, MS(21), MS(40)), 0);
        assert_int_equal(agg_filter_clip_ns(&f, MS(0), MS(9)), 0);
        assert_int_equal(agg_filter_clip_ns(&f, MS(11), MS(12)), MS(1));
}

struct kv {
        uint32_t key;
        uint32_t pad;
        uint64_t value;
};

static bool drop_odd_decay(void *entry, void *ctx)
{
        struct kv *e = entry;
        uint32_t *nr_calls = ctx;
        (*nr_calls)++;
        e->value /= 2; /* called once per entry: a decay in it is applied once */
        return e->key % 2 == 1;
}

static bool drop_all(void *entry, void *ctx)
{
        (void)entry;
        (void)ctx;
        return true;
}

/* The index of a table's entries by a field: one value's entries without a scan, and in step
   with the table as entries come, go, and the table grows */
static void test_agg_index(void **state)
{
        (void)state;
        struct ent {
                uint32_t key, tid;
                uint64_t n;
        };
        struct agg_table *t = agg_table_new(sizeof(uint32_t), sizeof(struct ent), 100000);
        struct agg_index x = {0};
        uint32_t first;
        bool is_new;

        assert_int_equal(agg_index_find(&x, t, offsetof(struct ent, tid), 7, &first), 0);
        for (uint32_t k = 0; k < 1000; k++) {
                struct ent *e = agg_table_get(t, &k, &is_new);
                e->tid = k % 10;
        }
        assert_int_equal(agg_index_find(&x, t, offsetof(struct ent, tid), 7, &first), 100);
        for (uint32_t i = 0; i < 100; i++) {
                const struct ent *e = agg_table_slot(t, x.slots[first + i]);
                assert_non_null(e);
                assert_int_equal(e->tid, 7);
        }
        /* a new entry is found at once */
        uint32_t k = 5000;
        struct ent *e = agg_table_get(t, &k, &is_new);
        e->tid = 7;
        assert_int_equal(agg_index_find(&x, t, offsetof(struct ent, tid), 7, &first), 101);
        assert_int_equal(agg_index_find(&x, t, offsetof(struct ent, tid), 11, &first), 0);
        agg_table_reset(t);
        assert_int_equal(agg_index_find(&x, t, offsetof(struct ent, tid), 7, &first), 0);
        agg_index_free(&x);
        agg_table_free(t);
}

static void test_agg_table(void **state)
{
        (void)state;
        struct agg_table *t = agg_table_new(sizeof(uint32_t), sizeof(struct kv), 1000);
        assert_int_equal(agg_table_max(t), 1000);
        for (uint32_t i = 0; i < 1000; i++) {
                bool is_new;
                struct kv *e = agg_table_get(t, &i, &is_new);
                assert_non_null(e);
                assert_true(is_new);
                assert_int_equal(e->key, i);
                assert_int_equal(e->value, 0);
                e->value = 10 * (uint64_t)i;
        }
        assert_int_equal(agg_table_nr(t), 1000);
        assert_true(agg_table_capacity(t) >= 2000); /* at most half full */
        /* full: known keys still answer, new ones do not */
        uint32_t k = 1000;
        assert_null(agg_table_get(t, &k, NULL));
        assert_null(agg_table_find(t, &k));
        k = 999;
        bool is_new = true;
        struct kv *e = agg_table_get(t, &k, &is_new);
        assert_false(is_new);
        assert_int_equal(e->value, 9990);
        /* iteration sees each entry once */
        uint64_t sum = 0;
        uint32_t nr = 0;
        for (uint32_t i = 0; i < agg_table_capacity(t); i++) {
                const struct kv *s = agg_table_slot(t, i);
                if (s) {
                        sum += s->value;
                        nr++;
                }
        }
        assert_int_equal(nr, 1000);
        assert_int_equal(sum, 10ull * 999 * 1000 / 2);
        assert_null(agg_table_slot(t, agg_table_capacity(t))); /* past the end */

        uint32_t nr_calls = 0;
        agg_table_remove_if(t, drop_odd_decay, &nr_calls);
        assert_int_equal(nr_calls, 1000);
        assert_int_equal(agg_table_nr(t), 500);
        k = 998;
        assert_int_equal(((struct kv *)agg_table_find(t, &k))->value, 4990);
        k = 997;
        assert_null(agg_table_find(t, &k));
        /* the room freed is usable again */
        k = 5001;
        assert_non_null(agg_table_get(t, &k, NULL));

        /* dropping (nearly) everything shrinks the table */
        uint32_t before = agg_table_capacity(t);
        agg_table_remove_if(t, drop_all, NULL);
        assert_int_equal(agg_table_nr(t), 0);
        assert_true(agg_table_capacity(t) < before);
        k = 3;
        assert_non_null(agg_table_get(t, &k, NULL));
        agg_table_reset(t);
        assert_int_equal(agg_table_nr(t), 0);
        assert_null(agg_table_find(t, &k));
        agg_table_free(t);
        agg_table_free(NULL);
}

static bool drop_marked(void *entry, void *ctx)
{
        const struct kv *e = entry;
        const uint8_t *drop = ctx;
        return drop[e->key];
}

/* Rows dropped without the table shrinking are settled in place: over rounds of new keys and
   drops (runs of colliding keys with holes anywhere in them, and across the table's end), every
   key left is found with its value, no dropped key is, and each slot is seen once. */
static void test_agg_table_remove_in_place(void **state)
{
        (void)state;
        enum { KEYS = 4096 };
        struct agg_table *t = agg_table_new(sizeof(uint32_t), sizeof(struct kv), KEYS);
        static uint8_t in[KEYS], drop[KEYS];
        memset(in, 0, sizeof(in));
        uint64_t x = 88172645463325252ull;
        for (int round = 0; round < 200; round++) {
                for (int i = 0; i < 40; i++) {
                        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                        uint32_t k = (uint32_t)(x % KEYS);
                        struct kv *e = agg_table_get(t, &k, NULL);
                        assert_non_null(e);
                        e->value = (uint64_t)k * 3 + 1;
                        in[k] = 1;
                }
                uint32_t capacity = agg_table_capacity(t), nr_left = 0;
                for (uint32_t k = 0; k < KEYS; k++) {
                        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                        drop[k] = in[k] && x % 5 == 0;
                        nr_left += in[k] && !drop[k];
                }
                bool is_settled = nr_left * 8 >= capacity;
                agg_table_remove_if(t, drop_marked, drop);
                if (is_settled) /* not shrunk: settled in place */
                        assert_int_equal(agg_table_capacity(t), capacity);
                assert_int_equal(agg_table_nr(t), nr_left);
                for (uint32_t k = 0; k < KEYS; k++) {
                        in[k] &= !drop[k];
                        const struct kv *e = agg_table_find(t, &k);
                        if (in[k]) {
                                assert_non_null(e);
                                assert_int_equal(e->value, (uint64_t)k * 3 + 1);
                        } else {
                                assert_null(e);
                        }
                }
                uint32_t seen = 0;
                for (uint32_t i = 0; i < agg_table_capacity(t); i++)
                        seen += agg_table_slot(t, i) != NULL;
                assert_int_equal(seen, nr_left);
        }
        /* a drop that moves entries says so by the epoch */
        uint32_t before = agg_table_epoch(t);
        memset(drop, 0, sizeof(drop));
        for (uint32_t k = 0; k < KEYS; k++)
                if (in[k]) {
                        drop[k] = 1;
                        break;
                }
        agg_table_remove_if(t, drop_marked, drop);
        assert_int_not_equal(agg_table_epoch(t), before);
        agg_table_free(t);
}

/* ---- branches.h ---- */

/* The row whose ends are at the given places (module-relative offsets in the test binary). */
static const struct branches_row *find_edge(const struct branches_row *rows, uint32_t n,
                                            uint64_t from_rel, uint64_t to_rel)
{
        for (uint32_t i = 0; i < n; i++)
                if (!rows[i].is_other && rows[i].from.loc.rel == from_rel &&
                    rows[i].to.loc.rel == to_rel)
                        return &rows[i];
        return NULL;
}

/* What the CPU recorded of each branch (perf's flags in the entries' info): the edge's and the
   function pair's mispredicted share and average cycles; none where no entry says. */
static void test_branches_flags(void **state)
{
        struct fix *fx = *state;
        struct branches *b = branches_new(fx->store, 0);
        uint64_t a = EXE + fx->off_alpha, be = EXE + fx->off_beta, g = EXE + fx->off_gamma;
        struct kevent_lbr_entry e[4] = {{a, be}, {a, be}, {a, be}, {be, g}};
        /* alpha->beta: mispredicted after 10 cycles, predicted after 20, predicted without a
           count; beta->gamma: nothing recorded */
        const uint64_t info[4] = {1u | 10u << 4, 2u | 20u << 4, 2u, 0};
        struct kevent ev = ev_lbr(0, MS(1), PID_A, 101, e, 4);
        ev.lbr.info = info;
        branches_event(b, &ev);
        const struct branches_row *rows;
        uint32_t n = branches_rows(b, BRANCHES_BY_EDGE, AGG_ALL, &rows);
        assert_int_equal(n, 2);
        assert_int_equal(rows[0].count, 3);
        assert_int_equal(rows[0].flags.nr_mispredicted, 1);
        assert_int_equal(rows[0].flags.nr_predict_known, 3);
        double v;
        assert_true(branches_mispredict_pct(&rows[0], &v));
        assert_true(v > 33.3 && v < 33.4);
        assert_true(branches_avg_cycles(&rows[0], &v));
        assert_true(v > 14.99 && v < 15.01);
        assert_false(branches_mispredict_pct(&rows[1], &v));
        assert_false(branches_avg_cycles(&rows[1], &v));
        /* function pairs sum their edges'; a decoder without info counts none */
        ev = ev_lbr(0, MS(2), PID_A, 101, e, 4);
        branches_event(b, &ev);
        n = branches_rows(b, BRANCHES_BY_FUNCTION, AGG_ALL, &rows);
        assert_int_equal(rows[0].count, 6);
        assert_int_equal(rows[0].flags.nr_predict_known, 3);
        assert_int_equal(rows[0].flags.nr_cycles, 2);
        branches_free(b);
}

static void test_branches_edges(void **state)
{
        struct fix *fx = *state;
        struct branches *b = branches_new(fx->store, 0);
        uint64_t a = EXE + fx->off_alpha, be = EXE + fx->off_beta, g = EXE + fx->off_gamma;
        /* a 32-entry LBR snapshot: [0] most recent; 16 x alpha->beta, 8 x beta->gamma,
           4 x gamma->alpha+1, 2 x alpha+1->ntdll, 2 empty slots */
        struct kevent_lbr_entry e[32];
        memset(e, 0, sizeof(e));
        for (int i = 0; i < 16; i++)
                e[i] = (struct kevent_lbr_entry){a, be};
        for (int i = 16; i < 24; i++)
                e[i] = (struct kevent_lbr_entry){be, g};
        for (int i = 24; i < 28; i++)
                e[i] = (struct kevent_lbr_entry){g, a + 1};
        for (int i = 28; i < 30; i++)
                e[i] = (struct kevent_lbr_entry){a + 1, NT_BASE + 0x1a2b};
        struct kevent ev = ev_lbr(0, MS(1), PID_A, 101, e, 32);
        branches_event(b, &ev);
        ev = ev_lbr(1, MS(2), PID_A, 102, e, 32);
        branches_event(b, &ev);
        /* events of other kinds are not edges */
        struct kevent pmc = ev_pmc(0, MS(3), PID_A, 101, a, 11);
        branches_event(b, &pmc);
        assert_int_equal(branches_nr_events(b), 2);
        assert_int_equal(branches_nr_edges(b), 60);
        assert_int_equal(branches_nr_kept(b), 4);

        const struct branches_row *rows;
        uint32_t n = branches_rows(b, BRANCHES_BY_EDGE, AGG_ALL, &rows);
        assert_int_equal(n, 4);
        /* most counted first, shares of all 60 */
        assert_int_equal(rows[0].count, 32);
        assert_int_equal(rows[1].count, 16);
        assert_int_equal(rows[2].count, 8);
        assert_int_equal(rows[3].count, 4);
        assert_true(rows[0].share > 0.533 && rows[0].share < 0.534);
        double total = 0;
        for (uint32_t i = 0; i < n; i++)
                total += rows[i].share;
        assert_true(total > 0.999 && total < 1.001);
        /* named now */
        assert_int_equal(rows[0].from.function, fx->fn_alpha);
        assert_int_equal(rows[0].from.offset, 0);
        assert_int_equal(rows[0].to.function, fx->fn_beta);
        assert_int_equal(rows[0].from.state, SYM_RESOLVED);
        assert_int_equal(rows[0].pid, PID_A);
        assert_int_equal(rows[0].nr_edges, 1);
        assert_int_equal(rows[2].from.function, fx->fn_gamma);
        assert_int_equal(rows[2].to.function, fx->fn_alpha);
        assert_int_equal(rows[2].to.offset, 1);
        /* the DLL that is not here: module+offset */
        assert_int_equal(rows[3].from.function, fx->fn_alpha);
        assert_int_equal(rows[3].to.function, 0);
        assert_int_not_equal(rows[3].to.loc.module, 0);
        assert_int_equal(rows[3].to.loc.rel, 0x1a2b);
        assert_int_equal(rows[3].to.offset, 0x1a2b);
        assert_int_not_equal(rows[3].to.state, SYM_RESOLVED);
        char buf[128];
        sym_format(fx->store, rows[3].to.loc, buf, sizeof(buf));
        assert_string_equal(buf, "ntdll.dll+0x1a2b");
        assert_non_null(find_edge(rows, n, fx->off_alpha, fx->off_beta));

        branches_reset(b);
        assert_int_equal(branches_nr_edges(b), 0);
        assert_int_equal(branches_rows(b, BRANCHES_BY_EDGE, AGG_ALL, &rows), 0);
        branches_free(b);
        branches_free(NULL);
}

static void test_branches_by_function(void **state)
{
        struct fix *fx = *state;
        struct branches *b = branches_new(fx->store, 0);
        uint64_t a = EXE + fx->off_alpha, be = EXE + fx->off_beta;
        /* three exact edges from alpha to beta, one from beta to alpha; two ntdll edges at
           different offsets stay apart (nothing names them) */
        const struct kevent_lbr_entry e[] = {
                {a, be},
                {a + 1, be},
                {a + 2, be + 1},
                {a + 2, be + 1},
                {be, a},
                {NT_BASE + 0x10, NT_BASE + 0x20},
                {NT_BASE + 0x30, NT_BASE + 0x20},
                {KBASE + 0x40, a}, /* a kernel driver returning to user space */
        };
        struct kevent ev = ev_lbr(0, MS(1), PID_A, 101, e, 8);
        branches_event(b, &ev);

        const struct branches_row *rows;
        uint32_t n = branches_rows(b, BRANCHES_BY_EDGE, AGG_ALL, &rows);
        assert_int_equal(n, 7);
        n = branches_rows(b, BRANCHES_BY_FUNCTION, AGG_ALL, &rows);
        assert_int_equal(n, 5);
        assert_int_equal(rows[0].count, 4);
        assert_int_equal(rows[0].nr_edges, 3);
        assert_int_equal(rows[0].from.function, fx->fn_alpha);
        assert_int_equal(rows[0].to.function, fx->fn_beta);
        /* the row shows the places of its most counted edge */
        assert_int_equal(rows[0].from.loc.rel, fx->off_alpha + 2);
        assert_int_equal(rows[0].to.loc.rel, fx->off_beta + 1);
        assert_true(rows[0].share > 0.499 && rows[0].share < 0.501);
        uint32_t nr_nt = 0, nr_kernel = 0;
        for (uint32_t i = 1; i < n; i++) {
                assert_int_equal(rows[i].count, 1);
                assert_int_equal(rows[i].nr_edges, 1);
                char buf[128];
                sym_format(fx->store, rows[i].from.loc, buf, sizeof(buf));
                if (strncmp(buf, "ntdll.dll+", 10) == 0)
                        nr_nt++;
                if (strcmp(buf, "tcpip.sys+0x40") == 0) {
                        nr_kernel++;
                        assert_int_equal(rows[i].to.function, fx->fn_alpha);
                }
        }
        assert_int_equal(nr_nt, 2);
        assert_int_equal(nr_kernel, 1);
        branches_free(b);
}

static void test_branches_processes(void **state)
{
        struct fix *fx = *state;
        struct branches *b = branches_new(fx->store, 0);
        uint64_t a = EXE + fx->off_alpha, be = EXE + fx->off_beta;
        const struct kevent_lbr_entry e[] = {{a, be}, {0x50000000, 0x60000000}};
        /* the same binary in two processes: one edge; raw addresses no image holds are not
           the same place in two processes */
        struct kevent ev = ev_lbr(0, MS(1), PID_A, 101, e, 2);
        branches_event(b, &ev);
        ev = ev_lbr(0, MS(2), PID_B, 201, e, 2);
        branches_event(b, &ev);
        ev = ev_lbr(0, MS(3), PID_B, 201, e, 1);
        branches_event(b, &ev);
        assert_int_equal(branches_nr_kept(b), 4);

        const struct branches_row *rows;
        uint32_t n = branches_rows(b, BRANCHES_BY_EDGE, AGG_ALL, &rows);
        assert_int_equal(n, 3);
        assert_int_equal(rows[0].count, 3);
        assert_int_equal(rows[0].pid, AGG_ALL); /* merged across processes */
        assert_int_equal(rows[0].from.function, fx->fn_alpha);
        assert_int_equal(rows[1].count, 1);
        assert_int_equal(rows[1].from.state, SYM_NO_MODULE);
        assert_int_equal(rows[1].from.loc.rel, 0x50000000);
        assert_int_equal(rows[2].count, 1);
        assert_int_not_equal(rows[1].pid, rows[2].pid);

        /* one process */
        n = branches_rows(b, BRANCHES_BY_EDGE, PID_B, &rows);
        assert_int_equal(n, 2);
        assert_int_equal(rows[0].count, 2);
        assert_int_equal(rows[0].pid, PID_B);
        assert_true(rows[0].share > 0.666 && rows[0].share < 0.667);
        n = branches_rows(b, BRANCHES_BY_FUNCTION, PID_A, &rows);
        assert_int_equal(n, 2);
        assert_int_equal(rows[0].count, 1);

        /* an image that comes later names the addresses recorded before it */
        struct sym_image late = {
                PID_B, 0x50000000 - fx->off_gamma, 1u << 24, 0, fx->exe_path, NULL, 0, 0, 0};
        sym_image_load(fx->store, &late);
        n = branches_rows(b, BRANCHES_BY_EDGE, PID_B, &rows);
        assert_int_equal(n, 2);
        const struct branches_row *r = rows[0].from.function == fx->fn_gamma ? &rows[0] : &rows[1];
        assert_int_equal(r->from.function, fx->fn_gamma);
        assert_int_equal(r->from.state, SYM_RESOLVED);
        sym_image_unload(fx->store, PID_B, 0x50000000 - fx->off_gamma);
        fix_image(fx, PID_B, EXE);
        branches_free(b);
}

static void test_branches_max_entries(void **state)
{
        struct fix *fx = *state;
        struct branches *b = branches_new(fx->store, 8);
        struct kevent_lbr_entry e[32];
        for (uint32_t i = 0; i < 32; i++)
                e[i] = (struct kevent_lbr_entry){EXE + fx->off_alpha + i % 16, EXE + fx->off_beta};
        for (int k = 0; k < 10; k++) {
                struct kevent ev = ev_lbr(0, MS(k), PID_A, 101, e, 32);
                branches_event(b, &ev);
        }
        assert_int_equal(branches_nr_kept(b), 8); /* the memory is bounded by the setting */
        assert_int_equal(branches_nr_edges(b), 320);
        const struct branches_row *rows;
        uint32_t n = branches_rows(b, BRANCHES_BY_EDGE, AGG_ALL, &rows);
        assert_int_equal(n, 9);
        const struct branches_row *other = NULL;
        uint64_t sum = 0;
        for (uint32_t i = 0; i < n; i++) {
                sum += rows[i].count;
                if (rows[i].is_other)
                        other = &rows[i];
        }
        assert_int_equal(sum, 320);
        assert_non_null(other);
        assert_int_equal(other->count, 160);
        assert_true(other->share > 0.499 && other->share < 0.501);
        assert_int_equal(rows[0].count, 160); /* the other row sorts after equal counts */
        assert_true(rows[0].is_other);
        /* a one-process answer has no other row (its edges have no process) */
        n = branches_rows(b, BRANCHES_BY_EDGE, PID_A, &rows);
        assert_int_equal(n, 8);
        /* grouped by function: everything kept is alpha -> beta */
        n = branches_rows(b, BRANCHES_BY_FUNCTION, AGG_ALL, &rows);
        assert_int_equal(n, 2);
        assert_int_equal(rows[0].nr_edges + rows[1].nr_edges, 8);
        branches_free(b);
}

static void feed_lbr(struct branches *b, struct fix *fx, int64_t t, uint32_t pid, uint32_t tid,
                     uint32_t nr_ab, uint32_t nr_bg)
{
        struct kevent_lbr_entry e[64];
        uint32_t n = 0;
        for (uint32_t i = 0; i < nr_ab; i++)
                e[n++] = (struct kevent_lbr_entry){EXE + fx->off_alpha, EXE + fx->off_beta};
        for (uint32_t i = 0; i < nr_bg; i++)
                e[n++] = (struct kevent_lbr_entry){EXE + fx->off_beta, EXE + fx->off_gamma};
        struct kevent ev = ev_lbr(0, t, pid, tid, e, n);
        branches_event(b, &ev);
}

static uint64_t edge_count(struct branches *b, struct fix *fx, uint64_t from, uint64_t to)
{
        const struct branches_row *rows;
        uint32_t n = branches_rows(b, BRANCHES_BY_EDGE, AGG_ALL, &rows);
        const struct branches_row *r = find_edge(rows, n, from, to);
        (void)fx;
        return r ? r->count : 0;
}

static void test_branches_modes(void **state)
{
        struct fix *fx = *state;
        uint64_t ab_from = fx->off_alpha, ab_to = fx->off_beta;
        uint64_t bg_from = fx->off_beta, bg_to = fx->off_gamma;

        /* cumulative: a refresh changes nothing */
        struct branches *b = branches_new(fx->store, 0);
        feed_lbr(b, fx, MS(1), PID_A, 101, 40, 3);
        branches_refresh(b);
        branches_refresh(b);
        assert_int_equal(edge_count(b, fx, ab_from, ab_to), 40);
        assert_int_equal(edge_count(b, fx, bg_from, bg_to), 3);
        assert_int_equal(branches_nr_events(b), 1);

        /* decaying by 0.5: counts halve (rounded down), and rows that reach 0 go */
        struct agg_settings s = {AGG_DECAYING, 0.5, 0};
        branches_set_settings(b, &s);
        branches_refresh(b);
        assert_int_equal(edge_count(b, fx, ab_from, ab_to), 20);
        assert_int_equal(edge_count(b, fx, bg_from, bg_to), 1);
        assert_int_equal(branches_nr_kept(b), 2);
        branches_refresh(b);
        assert_int_equal(edge_count(b, fx, ab_from, ab_to), 10);
        assert_int_equal(edge_count(b, fx, bg_from, bg_to), 0);
        assert_int_equal(branches_nr_kept(b), 1);
        /* new counts add to the decayed ones */
        feed_lbr(b, fx, MS(2), PID_A, 101, 6, 0);
        assert_int_equal(edge_count(b, fx, ab_from, ab_to), 16);
        /* a higher threshold drops sooner; another factor decays faster */
        s.decay_factor = 0.25;
        s.drop_below = 5;
        branches_set_settings(b, &s);
        branches_refresh(b); /* 16 -> 4, under 5 */
        assert_int_equal(branches_nr_kept(b), 0);
        assert_int_equal(branches_nr_edges(b), 0);

        /* zeroed: each refresh starts again */
        s = (struct agg_settings){AGG_ZEROED, 0, 0};
        branches_set_settings(b, &s);
        feed_lbr(b, fx, MS(3), PID_A, 101, 5, 5);
        assert_int_equal(branches_nr_edges(b), 10);
        branches_refresh(b);
        assert_int_equal(branches_nr_edges(b), 0);
        assert_int_equal(branches_nr_kept(b), 0);
        assert_int_equal(branches_nr_events(b), 0);
        const struct branches_row *rows;
        assert_int_equal(branches_rows(b, BRANCHES_BY_FUNCTION, AGG_ALL, &rows), 0);
        feed_lbr(b, fx, MS(4), PID_A, 101, 2, 0);
        assert_int_equal(edge_count(b, fx, ab_from, ab_to), 2);
        branches_free(b);

        /* the other row decays too */
        b = branches_new(fx->store, 1);
        s = (struct agg_settings){AGG_DECAYING, 0.5, 0};
        branches_set_settings(b, &s);
        feed_lbr(b, fx, MS(1), PID_A, 101, 8, 8);
        assert_int_equal(branches_nr_edges(b), 16);
        branches_refresh(b);
        assert_int_equal(branches_nr_edges(b), 8);
        uint32_t n = branches_rows(b, BRANCHES_BY_EDGE, AGG_ALL, &rows);
        assert_int_equal(n, 2);
        assert_int_equal(rows[0].count, 4);
        assert_int_equal(rows[1].count, 4);
        branches_free(b);
}

static void test_branches_filters(void **state)
{
        struct fix *fx = *state;
        struct branches *b = branches_new(fx->store, 0);
        uint64_t ab_from = fx->off_alpha, ab_to = fx->off_beta;
        feed_lbr(b, fx, MS(1), PID_A, 101, 4, 0);
        feed_lbr(b, fx, MS(1), PID_B, 201, 3, 0);
        assert_int_equal(edge_count(b, fx, ab_from, ab_to), 7);

        /* a process filter drops the other processes' edges at once, and their new events */
        struct agg_filter f;
        agg_filter_init(&f);
        agg_filter_add_pid(&f, PID_B);
        branches_set_filter(b, &f);
        assert_int_equal(edge_count(b, fx, ab_from, ab_to), 3);
        feed_lbr(b, fx, MS(2), PID_A, 101, 10, 0);
        feed_lbr(b, fx, MS(2), PID_B, 201, 1, 0);
        assert_int_equal(edge_count(b, fx, ab_from, ab_to), 4);
        assert_int_equal(branches_nr_events(b), 3); /* PID_A's second event was not counted */

        /* a thread filter */
        agg_filter_init(&f);
        agg_filter_add_tid(&f, 202);
        branches_set_filter(b, &f);
        feed_lbr(b, fx, MS(3), PID_B, 201, 5, 0);
        feed_lbr(b, fx, MS(3), PID_B, 202, 2, 0);
        assert_int_equal(edge_count(b, fx, ab_from, ab_to), 6);

        /* a time range [10 ms, 20 ms): replaying part of a recording */
        branches_reset(b);
        agg_filter_init(&f);
        agg_filter_set_time_range(&f, MS(10), MS(20));
        branches_set_filter(b, &f);
        feed_lbr(b, fx, MS(10) - 1, PID_A, 101, 1, 0);
        feed_lbr(b, fx, MS(10), PID_A, 101, 2, 0);
        feed_lbr(b, fx, MS(15), PID_B, 201, 4, 0);
        feed_lbr(b, fx, MS(20) - 1, PID_A, 101, 8, 0);
        feed_lbr(b, fx, MS(20), PID_A, 101, 16, 0);
        assert_int_equal(edge_count(b, fx, ab_from, ab_to), 14);
        assert_int_equal(branches_nr_events(b), 3);
        branches_free(b);
}

/* ---- switches.h ---- */

static const struct switches_row *find_thread(const struct switches_row *rows, uint32_t n,
                                              uint32_t tid)
{
        for (uint32_t i = 0; i < n; i++)
                if (rows[i].tid == tid && !rows[i].is_other)
                        return &rows[i];
        return NULL;
}

static const struct switches_row *thread_row(struct switches *sw, uint32_t tid)
{
        const struct switches_row *rows;
        uint32_t n = switches_threads(sw, SWITCHES_BY_ID, &rows);
        return find_thread(rows, n, tid);
}

static uint64_t wait_ns(const struct switches_row *r, uint8_t st, uint8_t reason)
{
        for (uint32_t i = 0; i < r->nr_waits; i++)
                if (r->waits[i].state == st && r->waits[i].wait_reason == reason)
                        return r->waits[i].off_cpu_ns;
        return 0;
}

static void sw_feed(struct switches *sw, struct kevent ev)
{
        switches_event(sw, &ev);
}

/* Two CPUs, process A (threads 101, 102) and B (201):
   cpu0: idle | 101 [1,4) Waiting/WrQueue | 102 [4,6) Ready/WrPreempted | 101 [6,9) Waiting/
         UserRequest | idle [9,...)
   cpu1: idle | 201 [2,5) Waiting/DelayExecution | 102 [5,8) Waiting/WrQueue | 201 [8,...) */
static void feed_schedule(struct switches *sw)
{
        sw_feed(sw, ev_process(KEV_PHASE_DC_START, 0, PID_A, "alpha.exe"));
        sw_feed(sw, ev_process(KEV_PHASE_DC_START, 0, PID_B, "beta"));
        sw_feed(sw, ev_thread(KEV_PHASE_DC_START, 0, PID_A, 101, "main"));
        sw_feed(sw, ev_thread(KEV_PHASE_DC_START, 0, PID_A, 102, ""));
        sw_feed(sw, ev_thread(KEV_PHASE_DC_START, 0, PID_B, 201, "loop"));
        struct kevent name = ev_base(KEV_THREAD_NAME, 0, 0, PID_A, 102);
        name.thread_name.pid = PID_A;
        name.thread_name.tid = 102;
        name.thread_name.name = "worker";
        sw_feed(sw, name);
        sw_feed(sw, ev_cswitch(0, MS(1), 0, 0, ST_READY, WR_EXECUTIVE, 101, PID_A));
        sw_feed(sw, ev_cswitch(1, MS(2), 0, 0, ST_READY, WR_EXECUTIVE, 201, PID_B));
        sw_feed(sw, ev_cswitch(0, MS(4), 101, PID_A, ST_WAITING, WR_QUEUE, 102, PID_A));
        sw_feed(sw, ev_cswitch(1, MS(5), 201, PID_B, ST_WAITING, WR_DELAYEXECUTION, 0, 0));
        sw_feed(sw, ev_cswitch(0, MS(6), 102, PID_A, ST_READY, WR_PREEMPTED, 101, PID_A));
        sw_feed(sw, ev_cswitch(1, MS(6) + 1, 0, 0, ST_READY, WR_EXECUTIVE, 102, UINT32_MAX));
        sw_feed(sw, ev_cswitch(1, MS(8), 102, PID_A, ST_WAITING, WR_QUEUE, 201, PID_B));
        sw_feed(sw, ev_cswitch(0, MS(9), 101, PID_A, ST_WAITING, WR_USERREQUEST, 0, 0));
}

static void test_switches_times(void **state)
{
        struct fix *fx = *state;
        struct switches *sw = switches_new(fx->store, 0);
        feed_schedule(sw);
        assert_int_equal(switches_nr_switches(sw), 8);
        assert_int_equal(switches_last_time_ns(sw), MS(9));

        const struct switches_row *r = thread_row(sw, 101);
        assert_non_null(r);
        assert_int_equal(r->pid, PID_A);
        assert_string_equal(r->process_name, "alpha.exe");
        assert_string_equal(r->thread_name, "main");
        assert_int_equal(r->nr_switches, 2);
        assert_int_equal(r->on_cpu_ns, MS(3) + MS(3));
        assert_int_equal(r->off_cpu_ns, MS(2)); /* [4, 6) in WrQueue; [9, ...) still open */
        assert_int_equal(wait_ns(r, ST_WAITING, WR_QUEUE), MS(2));
        assert_int_equal(r->nr_waits, 1);
        assert_int_equal(r->waits[0].nr_waits, 1);
        assert_int_equal(r->last_cpu, 0);

        r = thread_row(sw, 102);
        assert_non_null(r);
        assert_string_equal(r->thread_name, "worker");
        assert_int_equal(r->pid, PID_A); /* the CSwitch did not know it; the thread did */
        assert_int_equal(r->nr_switches, 2);
        assert_int_equal(r->on_cpu_ns, MS(2) + MS(2) - 1);
        assert_int_equal(r->off_cpu_ns, 1); /* preempted on cpu0 at 6 ms, in on cpu1 1 ns later */
        assert_int_equal(wait_ns(r, ST_READY, WR_PREEMPTED), 1);
        assert_int_equal(r->last_cpu, 1);

        r = thread_row(sw, 201);
        assert_non_null(r);
        assert_string_equal(r->process_name, "beta");
        assert_int_equal(r->nr_switches, 2);
        assert_int_equal(r->on_cpu_ns, MS(3)); /* [8, ...) still open */
        assert_int_equal(wait_ns(r, ST_WAITING, WR_DELAYEXECUTION), MS(3));
        assert_null(thread_row(sw, 0)); /* idle is no thread */

        /* per CPU */
        const struct switches_cpu_row *c;
        uint32_t n = switches_cpus(sw, &c);
        assert_int_equal(n, 2);
        assert_int_equal(c[0].cpu, 0);
        assert_int_equal(c[0].nr_switches, 4);
        assert_int_equal(c[0].busy_ns, MS(8));
        assert_int_equal(c[0].idle_ns, 0); /* idle before 1 ms was not seen starting */
        assert_int_equal(c[1].cpu, 1);
        assert_int_equal(c[1].nr_switches, 4);
        assert_int_equal(c[1].busy_ns, MS(3) + MS(2) - 1);
        assert_int_equal(c[1].idle_ns, MS(1) + 1);

        /* per thread per CPU */
        n = switches_thread_cpus(sw, 102, &c);
        assert_int_equal(n, 2);
        assert_int_equal(c[0].nr_switches, 1);
        assert_int_equal(c[1].nr_switches, 1);
        assert_int_equal(c[0].busy_ns + c[1].busy_ns, MS(4) - 1);
        n = switches_thread_cpus(sw, 101, &c);
        assert_int_equal(n, 1);
        assert_int_equal(c[0].cpu, 0);
        assert_int_equal(c[0].nr_switches, 2);
        assert_int_equal(c[0].busy_ns, MS(6));

        /* by wait reason over every thread */
        const struct switches_wait_row *w;
        n = switches_waits(sw, &w);
        assert_int_equal(n, 3);
        assert_int_equal(w[0].state, ST_WAITING);
        assert_int_equal(w[0].wait_reason, WR_DELAYEXECUTION);
        assert_int_equal(w[0].off_cpu_ns, MS(3));
        assert_int_equal(w[1].wait_reason, WR_QUEUE);
        assert_int_equal(w[1].off_cpu_ns, MS(2));
        assert_int_equal(w[2].state, ST_READY);
        assert_int_equal(w[2].wait_reason, WR_PREEMPTED);
        assert_int_equal(w[2].nr_waits, 1);
        assert_string_equal(kevent_wait_reason_name(w[0].wait_reason), "DelayExecution");

        /* the refresh credits what is still open up to the latest event (9 ms) */
        sw_feed(sw, ev_pmc(0, MS(12), PID_B, 201, 0x1234, 11)); /* time passes */
        switches_refresh(sw);
        r = thread_row(sw, 101);
        assert_int_equal(r->off_cpu_ns, MS(2) + MS(3));
        assert_int_equal(wait_ns(r, ST_WAITING, WR_USERREQUEST), MS(3));
        assert_int_equal(r->nr_waits, 2);
        r = thread_row(sw, 201);
        assert_int_equal(r->on_cpu_ns, MS(3) + MS(4));
        r = thread_row(sw, 102);
        assert_int_equal(wait_ns(r, ST_WAITING, WR_QUEUE), MS(4));
        /* the wait that ends later counts once, its time in full */
        sw_feed(sw, ev_cswitch(0, MS(13), 0, 0, ST_READY, WR_EXECUTIVE, 101, PID_A));
        r = thread_row(sw, 101);
        assert_int_equal(wait_ns(r, ST_WAITING, WR_USERREQUEST), MS(4));
        assert_int_equal(r->nr_switches, 3);
        for (uint32_t i = 0; i < r->nr_waits; i++)
                assert_int_equal(r->waits[i].nr_waits, 1);
        switches_reset(sw);
        assert_int_equal(switches_nr_switches(sw), 0);
        const struct switches_row *rows;
        assert_int_equal(switches_threads(sw, SWITCHES_BY_ID, &rows), 0);
        assert_int_equal(switches_cpus(sw, &c), 0);
        switches_free(sw);
        switches_free(NULL);
}

/* Off-CPU time by where a thread blocked: the stack of its switch-out (Linux) counts the wait
   as it goes on, the stack of its switch-in (Windows) the wait that ended; the scheduler's own
   frames are passed over. */
static void test_switches_blockers(void **state)
{
        struct fix *fx = *state;
        struct switches *sw = switches_new(fx->store, 0);
        sw_feed(sw, ev_thread(KEV_PHASE_DC_START, 0, PID_A, 101, "main"));
        sw_feed(sw, ev_thread(KEV_PHASE_DC_START, 0, PID_B, 201, "loop"));
        uint64_t at_beta[] = {EXE + fx->off_sched + 2, EXE + fx->off_beta + 1};
        uint64_t at_gamma[] = {EXE + fx->off_gamma + 3};
        /* 101 blocks at beta from 2 ms to 5 ms, the stack with its switch-out */
        sw_feed(sw, ev_cswitch(0, MS(1), 0, 0, ST_READY, WR_EXECUTIVE, 101, PID_A));
        sw_feed(sw, ev_cswitch(0, MS(2), 101, PID_A, ST_WAITING, WR_USERREQUEST, 0, 0));
        sw_feed(sw, ev_stack(0, MS(2), PID_A, 101, at_beta, 2));
        sw_feed(sw, ev_pmc(1, MS(3), PID_B, 201, 0x1234, 11)); /* time passes */
        switches_refresh(sw);                                  /* credits [2, 3) */
        const struct switches_blocker_row *b;
        assert_int_equal(switches_blockers(sw, 101, &b), 1);
        assert_int_equal(b[0].off_cpu_ns, MS(1));
        assert_int_equal(b[0].nr_waits, 0);
        sw_feed(sw, ev_cswitch(0, MS(5), 0, 0, ST_READY, WR_EXECUTIVE, 101, PID_A));
        /* 201 waits from 2 ms to 6 ms; the stack with its switch-in says where */
        sw_feed(sw, ev_cswitch(1, MS(1), 0, 0, ST_READY, WR_EXECUTIVE, 201, PID_B));
        sw_feed(sw, ev_cswitch(1, MS(2), 201, PID_B, ST_WAITING, WR_DELAYEXECUTION, 0, 0));
        sw_feed(sw, ev_cswitch(1, MS(6), 0, 0, ST_READY, WR_EXECUTIVE, 201, PID_B));
        sw_feed(sw, ev_stack(1, MS(6), PID_B, 201, at_gamma, 1));
        /* a sample's stack, and a wait without one: nowhere */
        sw_feed(sw, ev_stack(0, MS(6) + 5, PID_A, 101, at_gamma, 1));
        sw_feed(sw, ev_cswitch(0, MS(7), 101, PID_A, ST_WAITING, WR_USERREQUEST, 0, 0));
        sw_feed(sw, ev_cswitch(0, MS(8), 0, 0, ST_READY, WR_EXECUTIVE, 101, PID_A));

        assert_int_equal(switches_blockers(sw, 101, &b), 1);
        assert_int_equal(b[0].tid, 101);
        assert_string_equal(b[0].thread_name, "main");
        assert_int_equal(b[0].state, SYM_RESOLVED);
        assert_int_equal(b[0].function, fx->fn_beta); /* past schedule_model_fixture */
        assert_int_equal(b[0].offset, 1);
        assert_int_equal(b[0].nr_waits, 1);
        assert_int_equal(b[0].off_cpu_ns, MS(3));
        assert_int_equal(switches_blockers(sw, 201, &b), 1);
        assert_int_equal(b[0].function, fx->fn_gamma);
        assert_int_equal(b[0].nr_waits, 1);
        assert_int_equal(b[0].off_cpu_ns, MS(4));
        assert_int_equal(switches_blockers(sw, AGG_ALL, &b), 2);
        assert_int_equal(b[0].tid, 201); /* the most off-CPU time first */
        assert_int_equal(b[1].tid, 101);
        /* a filter on process B leaves 101's out */
        struct agg_filter f;
        agg_filter_init(&f);
        assert_int_equal(agg_filter_add_pid(&f, PID_B), 0);
        switches_set_filter(sw, &f);
        assert_int_equal(switches_blockers(sw, AGG_ALL, &b), 1);
        assert_int_equal(b[0].tid, 201);
        switches_zero(sw);
        assert_int_equal(switches_blockers(sw, AGG_ALL, &b), 0);
        switches_free(sw);
}

/* A thread that blocks, is readied and runs again and again where it did before (a switch
   storm's ping-pong) counts each time in the same rows, and where it did not, in new ones; a
   zeroing starts them over (the entries remembered from before it are gone). */
static void test_switches_repeats(void **state)
{
        struct fix *fx = *state;
        struct switches *sw = switches_new(fx->store, 0);
        sw_feed(sw, ev_thread(KEV_PHASE_DC_START, 0, PID_A, 101, "main"));
        sw_feed(sw, ev_thread(KEV_PHASE_DC_START, 0, PID_B, 201, "loop"));
        uint64_t at_beta[] = {EXE + fx->off_sched + 2, EXE + fx->off_beta + 1};
        uint64_t at_gamma[] = {EXE + fx->off_sched + 2, EXE + fx->off_gamma + 3};
        uint64_t from_beta[] = {EXE + fx->off_beta + 1, EXE + fx->off_alpha};
        uint64_t from_gamma[] = {EXE + fx->off_wake + 2, EXE + fx->off_gamma};
        for (int round = 0; round < 2; round++) {
                int64_t t0 = MS(100) * round;
                /* 101 on CPU 0 and 1 in turn; it blocks at beta twice, at gamma once, at beta
                   again; 201 readies it from beta and gamma the same way */
                for (int i = 0; i < 4; i++) {
                        int64_t t = t0 + MS(10) * i;
                        uint32_t cpu = (uint32_t)i % 2;
                        bool is_gamma = i == 2;
                        sw_feed(sw, ev_cswitch(cpu, t + MS(1), 0, 0, ST_READY, WR_EXECUTIVE, 101,
                                               PID_A));
                        sw_feed(sw, ev_cswitch(cpu, t + MS(2), 101, PID_A, ST_WAITING,
                                               WR_USERREQUEST, 0, 0));
                        sw_feed(sw, ev_stack(cpu, t + MS(2), PID_A, 101,
                                             is_gamma ? at_gamma : at_beta, 2));
                        sw_feed(sw, ev_ready(cpu, t + MS(4), 101, PID_A, 201, PID_B));
                        sw_feed(sw, ev_stack(cpu, t + MS(4), PID_B, 201,
                                             is_gamma ? from_gamma : from_beta, 2));
                        sw_feed(sw, ev_cswitch(cpu, t + MS(5), 0, 0, ST_READY, WR_EXECUTIVE, 101,
                                               PID_A));
                        sw_feed(sw, ev_cswitch(cpu, t + MS(6), 101, PID_A, ST_READY, WR_PREEMPTED,
                                               0, 0));
                }
                const struct switches_blocker_row *b;
                assert_int_equal(switches_blockers(sw, 101, &b), 2);
                for (uint32_t i = 0; i < 2; i++) {
                        bool is_beta = b[i].function == fx->fn_beta;
                        assert_true(is_beta || b[i].function == fx->fn_gamma);
                        assert_int_equal(b[i].nr_waits, is_beta ? 3 : 1);
                        assert_int_equal(b[i].off_cpu_ns, is_beta ? MS(9) : MS(3));
                }
                const struct switches_readier_row *r;
                assert_int_equal(switches_readiers(sw, 101, &r), 2);
                assert_int_equal(r[0].count, 3);
                assert_int_equal(r[0].function, fx->fn_beta);
                assert_int_equal(r[1].count, 1);
                const struct switches_cpu_row *c;
                assert_int_equal(switches_thread_cpus(sw, 101, &c), 2);
                assert_int_equal(c[0].nr_switches, 4);
                assert_int_equal(c[1].nr_switches, 4);
                assert_int_equal(c[0].busy_ns, MS(4));
                assert_int_equal(c[1].busy_ns, MS(4));
                switches_zero(sw);
        }
        switches_free(sw);
}

static struct kevent ev_cswitch_pmc(uint32_t cpu, int64_t t, uint32_t old_tid, uint32_t old_pid,
                                    uint32_t new_tid, uint32_t new_pid, uint32_t nr_pmc,
                                    uint64_t c0, uint64_t c1)
{
        struct kevent ev =
                ev_cswitch(cpu, t, old_tid, old_pid, ST_READY, WR_PREEMPTED, new_tid, new_pid);
        ev.nr_pmc = nr_pmc;
        ev.pmc[0] = c0;
        ev.pmc[1] = c1;
        return ev;
}

/* PMC counters on CSwitch events are each CPU's running counts: from one switch to the next on
   a CPU they count the timeslice of the thread that leaves. */
static void test_switches_pmc(void **state)
{
        struct fix *fx = *state;
        struct switches *sw = switches_new(fx->store, 0);
        sw_feed(sw, ev_process(KEV_PHASE_DC_START, 0, PID_A, "alpha.exe"));
        sw_feed(sw, ev_process(KEV_PHASE_DC_START, 0, PID_B, "beta"));
        sw_feed(sw, ev_thread(KEV_PHASE_DC_START, 0, PID_A, 101, "main"));
        sw_feed(sw, ev_thread(KEV_PHASE_DC_START, 0, PID_A, 102, ""));
        sw_feed(sw, ev_thread(KEV_PHASE_DC_START, 0, PID_B, 201, "loop"));
        struct kevent cfg = ev_base(KEV_PMC_CONFIG, 0, 0, 0, 0);
        cfg.pmc_config.nr_counters = 2;
        cfg.pmc_config.names[0] = "TotalCycles";
        cfg.pmc_config.names[1] = "InstructionRetired";
        sw_feed(sw, cfg);
        /* cpu0: idle -> 101 (the first values: no timeslice yet), 101 -> 102, 102 -> 101 */
        sw_feed(sw, ev_cswitch_pmc(0, MS(1), 0, 0, 101, PID_A, 2, 1000, 2000));
        sw_feed(sw, ev_cswitch_pmc(0, MS(2), 101, PID_A, 102, PID_A, 2, 4000, 8000));
        sw_feed(sw, ev_cswitch_pmc(0, MS(3), 102, PID_A, 101, PID_A, 2, 4500, 8100));
        /* cpu1: the first switch seen there has nothing to count from */
        sw_feed(sw, ev_cswitch_pmc(1, MS(3), 201, PID_B, 0, 0, 2, 10, 10));
        /* a switch without counters leaves nothing to count from either */
        sw_feed(sw, ev_cswitch_pmc(0, MS(4), 101, PID_A, 0, 0, 0, 0, 0));
        sw_feed(sw, ev_cswitch_pmc(0, MS(5), 0, 0, 101, PID_A, 2, 9000, 9000));
        sw_feed(sw, ev_cswitch_pmc(0, MS(6), 101, PID_A, 0, 0, 2, 9100, 9400));

        const char *names[KEV_MAX_PMC];
        assert_int_equal(switches_pmc_names(sw, names), 2);
        assert_string_equal(names[0], "TotalCycles");
        assert_string_equal(names[1], "InstructionRetired");
        const struct switches_row *r = thread_row(sw, 101);
        assert_non_null(r);
        assert_int_equal(r->nr_pmc, 2);
        assert_int_equal(r->pmc[0], 3000 + 100);
        assert_int_equal(r->pmc[1], 6000 + 400);
        char text[128];
        switches_pmc_text(sw, r, text, sizeof(text));
        assert_string_equal(text, "TotalCycles 3.10 K, InstructionRetired 6.40 K, IPC 2.06");
        r = thread_row(sw, 102);
        assert_int_equal(r->pmc[0], 500);
        assert_int_equal(r->pmc[1], 100);
        r = thread_row(sw, 201); /* no row, or no counts */
        assert_true(!r || r->pmc[0] == 0);
        const struct switches_row *p;
        uint32_t n = switches_processes(sw, SWITCHES_BY_ID, &p);
        assert_true(n >= 1);
        assert_int_equal(p[0].pid, PID_A); /* its threads summed */
        assert_int_equal(p[0].pmc[0], 3600);
        assert_int_equal(p[0].pmc[1], 6500);
        /* decaying: halved with the rest */
        struct agg_settings st;
        agg_settings_init(&st);
        st.mode = AGG_DECAYING;
        st.decay_factor = 0.5;
        switches_set_settings(sw, &st);
        switches_refresh(sw);
        assert_int_equal(thread_row(sw, 101)->pmc[0], 1550);
        /* zeroed: the counts go, the next timeslice counts again */
        switches_zero(sw);
        sw_feed(sw, ev_cswitch_pmc(0, MS(7), 0, 0, 101, PID_A, 2, 10000, 10000));
        sw_feed(sw, ev_cswitch_pmc(0, MS(8), 101, PID_A, 0, 0, 2, 10250, 10300));
        r = thread_row(sw, 101);
        assert_int_equal(r->pmc[0], 250);
        assert_int_equal(r->pmc[1], 300);
        switches_free(sw);
}

/* z and the zoom: the counts start again from the latest event time; the names and pids stay
   (a live session sends them once), and the waits and runs under way count from then on. */
static void test_switches_zero(void **state)
{
        struct fix *fx = *state;
        struct switches *sw = switches_new(fx->store, 0);
        feed_schedule(sw);
        sw_feed(sw, ev_pmc(0, MS(10), PID_B, 201, 0x1234, 11)); /* time passes */
        switches_zero(sw);
        assert_int_equal(switches_nr_switches(sw), 0);
        const struct switches_row *rows;
        assert_int_equal(switches_threads(sw, SWITCHES_BY_ID, &rows), 0);
        const struct switches_cpu_row *c;
        assert_int_equal(switches_cpus(sw, &c), 0);

        sw_feed(sw, ev_cswitch(0, MS(12), 0, 0, ST_READY, WR_EXECUTIVE, 101, PID_A));
        sw_feed(sw, ev_cswitch(1, MS(13), 201, PID_B, ST_READY, WR_PREEMPTED, 102, PID_A));
        const struct switches_row *r = thread_row(sw, 101);
        assert_non_null(r);
        assert_string_equal(r->process_name, "alpha.exe");
        assert_string_equal(r->thread_name, "main");
        assert_int_equal(r->nr_switches, 1);
        assert_int_equal(r->off_cpu_ns, MS(2)); /* waited since 9 ms, counted from 10 */
        assert_int_equal(wait_ns(r, ST_WAITING, WR_USERREQUEST), MS(2));
        r = thread_row(sw, 102);
        assert_non_null(r);
        assert_string_equal(r->thread_name, "worker");
        assert_int_equal(r->off_cpu_ns, MS(3));
        r = thread_row(sw, 201);
        assert_non_null(r);
        assert_string_equal(r->process_name, "beta");
        assert_int_equal(r->on_cpu_ns, MS(3)); /* on CPU 1 since 8 ms, counted from 10 */
        assert_int_equal(r->nr_switches, 0);
        assert_int_equal(switches_cpus(sw, &c), 2);
        assert_int_equal(c[0].idle_ns, MS(2)); /* idle since 9 ms, counted from 10 */
        assert_int_equal(c[1].busy_ns, MS(3));
        const struct switches_row *p;
        uint32_t n = switches_processes(sw, SWITCHES_BY_ID, &p);
        assert_int_equal(n, 2);
        assert_string_equal(p[0].process_name, "alpha.exe");
        assert_string_equal(p[1].process_name, "beta");
        switches_free(sw);
}

/* A CPU's idle periods by the C-state it slept in: the PreviousCState of the switch that ends
   each, for the whole period (a refresh in the middle credits idle_ns, not a C-state yet). */
static void test_switches_cstates(void **state)
{
        struct fix *fx = *state;
        struct switches *sw = switches_new(fx->store, 0);
        struct kevent ev;
        sw_feed(sw, ev_cswitch(0, MS(1), 101, PID_A, ST_WAITING, WR_USERREQUEST, 0, 0));
        sw_feed(sw, ev_pmc(1, MS(2), PID_B, 201, 0x1234, 11)); /* time passes */
        switches_refresh(sw);
        ev = ev_cswitch(0, MS(4), 0, 0, ST_READY, WR_EXECUTIVE, 101, PID_A);
        ev.cswitch.previous_cstate = 1;
        sw_feed(sw, ev);
        sw_feed(sw, ev_cswitch(0, MS(5), 101, PID_A, ST_WAITING, WR_USERREQUEST, 0, 0));
        ev = ev_cswitch(0, MS(6), 0, 0, ST_READY, WR_EXECUTIVE, 101, PID_A);
        ev.cswitch.previous_cstate = 3;
        sw_feed(sw, ev);
        sw_feed(sw, ev_cswitch(0, MS(7), 101, PID_A, ST_WAITING, WR_USERREQUEST, 0, 0));
        ev = ev_cswitch(0, MS(7) + 10, 0, 0, ST_READY, WR_EXECUTIVE, 101, PID_A);
        ev.cswitch.previous_cstate = 9; /* deeper than the buckets: the last one */
        sw_feed(sw, ev);
        const struct switches_cpu_row *c;
        assert_int_equal(switches_cpus(sw, &c), 1);
        assert_int_equal(c[0].idle_ns, MS(4) + 10);
        assert_int_equal(c[0].cstate_ns[0], 0);
        assert_int_equal(c[0].cstate_ns[1], MS(3));
        assert_int_equal(c[0].cstate_ns[3], MS(1));
        assert_int_equal(c[0].cstate_ns[SWITCHES_NR_CSTATES - 1], 10);
        char text[64];
        switches_cstates_text(&c[0], text, sizeof(text));
        assert_string_equal(text, "C1 75% C3 25%"); /* C7's 10 ns: under 1% */
        switches_cstates_text(&c[0], text, 8);
        assert_string_equal(text, "C1 75%"); /* cut at a state's end */
        /* decaying: halved with the rest at each refresh */
        struct agg_settings st;
        agg_settings_init(&st);
        st.mode = AGG_DECAYING;
        st.decay_factor = 0.5;
        switches_set_settings(sw, &st);
        switches_refresh(sw);
        assert_int_equal(switches_cpus(sw, &c), 1);
        assert_int_equal(c[0].cstate_ns[1], MS(3) / 2);
        /* a process filter leaves the idle thread out: no more idle, no C-states */
        struct agg_filter f;
        agg_filter_init(&f);
        assert_int_equal(agg_filter_add_pid(&f, PID_A), 0);
        switches_set_filter(sw, &f);
        sw_feed(sw, ev_cswitch(0, MS(8), 101, PID_A, ST_WAITING, WR_USERREQUEST, 0, 0));
        ev = ev_cswitch(0, MS(9), 0, 0, ST_READY, WR_EXECUTIVE, 101, PID_A);
        ev.cswitch.previous_cstate = 1;
        sw_feed(sw, ev);
        assert_int_equal(switches_cpus(sw, &c), 1);
        assert_int_equal(c[0].idle_ns, 0);
        assert_int_equal(c[0].cstate_ns[1], 0);
        switches_free(sw);
}

static void test_switches_processes_and_sorts(void **state)
{
        struct fix *fx = *state;
        struct switches *sw = switches_new(fx->store, 0);
        feed_schedule(sw);
        const struct switches_row *rows;
        uint32_t n = switches_processes(sw, SWITCHES_BY_ON_CPU, &rows);
        assert_int_equal(n, 2);
        assert_int_equal(rows[0].pid, PID_A);
        assert_int_equal(rows[0].tid, AGG_ALL);
        assert_string_equal(rows[0].process_name, "alpha.exe");
        assert_string_equal(rows[0].thread_name, "");
        assert_int_equal(rows[0].nr_threads, 2);
        assert_int_equal(rows[0].nr_switches, 4);
        assert_int_equal(rows[0].on_cpu_ns, MS(10) - 1);
        assert_int_equal(rows[0].off_cpu_ns, MS(2) + 1);
        assert_int_equal(rows[0].nr_waits, 2);
        assert_int_equal(rows[0].waits[0].wait_reason, WR_QUEUE);
        assert_int_equal(rows[0].waits[1].wait_reason, WR_PREEMPTED);
        assert_int_equal(rows[1].pid, PID_B);
        assert_int_equal(rows[1].nr_threads, 1);
        n = switches_processes(sw, SWITCHES_BY_OFF_CPU, &rows);
        assert_int_equal(rows[0].pid, PID_B);

        /* the threads of one process */
        n = switches_process_threads(sw, PID_A, SWITCHES_BY_ON_CPU, &rows);
        assert_int_equal(n, 2);
        assert_int_equal(rows[0].tid, 101);
        assert_int_equal(rows[1].tid, 102);
        n = switches_process_threads(sw, 999, SWITCHES_BY_ON_CPU, &rows);
        assert_int_equal(n, 0);

        /* ReadyThread: 102 readied three times, 201 once */
        sw_feed(sw, ev_ready(1, MS(9), 102, PID_A, 201, PID_B));
        sw_feed(sw, ev_ready(1, MS(9) + 1, 102, PID_A, 201, PID_B));
        sw_feed(sw, ev_ready(1, MS(9) + 2, 102, PID_A, 201, PID_B));
        sw_feed(sw, ev_ready(1, MS(9) + 3, 201, PID_B, 102, PID_A));

        /* each sort key */
        n = switches_threads(sw, SWITCHES_BY_SWITCHES, &rows);
        assert_int_equal(n, 3);
        for (uint32_t i = 1; i < n; i++)
                assert_true(rows[i - 1].nr_switches >= rows[i].nr_switches);
        assert_int_equal(rows[0].tid, 101); /* equal counts: by pid, tid */
        n = switches_threads(sw, SWITCHES_BY_ON_CPU, &rows);
        assert_int_equal(rows[0].tid, 101);
        assert_int_equal(rows[1].tid, 102);
        assert_int_equal(rows[2].tid, 201);
        n = switches_threads(sw, SWITCHES_BY_OFF_CPU, &rows);
        assert_int_equal(rows[0].tid, 201);
        assert_int_equal(rows[1].tid, 101);
        assert_int_equal(rows[2].tid, 102);
        n = switches_threads(sw, SWITCHES_BY_READIED, &rows);
        assert_int_equal(rows[0].tid, 102);
        assert_int_equal(rows[0].nr_readied, 3);
        assert_int_equal(rows[1].tid, 201);
        assert_int_equal(rows[2].tid, 101);
        n = switches_threads(sw, SWITCHES_BY_WAIT_REASON, &rows);
        /* Ready/WrPreempted (1/32) before Waiting/DelayExecution (5/4), Waiting/WrQueue (5/15) */
        assert_int_equal(rows[0].tid, 102);
        assert_int_equal(rows[1].tid, 201);
        assert_int_equal(rows[2].tid, 101);
        n = switches_threads(sw, SWITCHES_BY_ID, &rows);
        assert_int_equal(rows[0].tid, 101);
        assert_int_equal(rows[2].tid, 201);
        assert_int_equal(switches_nr_readies(sw), 4);
        switches_free(sw);
}

static void test_switches_readiers(void **state)
{
        struct fix *fx = *state;
        struct switches *sw = switches_new(fx->store, 0);
        sw_feed(sw, ev_process(KEV_PHASE_DC_START, 0, PID_B, "beta"));
        sw_feed(sw, ev_thread(KEV_PHASE_DC_START, 0, PID_A, 101, "main"));
        sw_feed(sw, ev_thread(KEV_PHASE_DC_START, 0, PID_B, 201, "loop"));
        /* 201 readies 101 from beta (twice, one with its stack on the other CPU's buffer) and
           from gamma, and once without a stack; 102 readies 101 from ntdll */
        uint64_t at_beta[] = {EXE + fx->off_beta + 1, EXE + fx->off_alpha};
        /* the wake-up machinery first: where it readied from is the frame past it */
        uint64_t at_gamma[] = {EXE + fx->off_wake + 2, EXE + fx->off_gamma};
        uint64_t at_nt[] = {NT_BASE + 0x400};
        sw_feed(sw, ev_ready(0, MS(1), 101, PID_A, 201, PID_B));
        sw_feed(sw, ev_stack(0, MS(1), PID_B, 201, at_beta, 2));
        sw_feed(sw, ev_ready(0, MS(2), 101, PID_A, 201, PID_B));
        sw_feed(sw, ev_pmc(1, MS(2), PID_A, 101, EXE + fx->off_alpha, 11));
        sw_feed(sw, ev_stack(1, MS(2), PID_B, 201, at_beta, 2));
        sw_feed(sw, ev_ready(0, MS(3), 101, PID_A, 201, PID_B));
        sw_feed(sw, ev_stack(0, MS(3), PID_B, 201, at_gamma, 2));
        sw_feed(sw, ev_ready(0, MS(4), 101, PID_A, 201, PID_B)); /* no stack comes */
        /* a stack of another event (a sample's) is nobody's readier */
        sw_feed(sw, ev_stack(0, MS(5), PID_B, 201, at_gamma, 2));
        sw_feed(sw, ev_ready(1, MS(6), 101, PID_A, 102, PID_A));
        sw_feed(sw, ev_stack(1, MS(6), PID_A, 102, at_nt, 1));
        /* 101 readies 201, with an empty stack */
        sw_feed(sw, ev_ready(1, MS(7), 201, PID_B, 101, PID_A));
        sw_feed(sw, ev_stack(1, MS(7), PID_A, 101, at_nt, 0));

        const struct switches_readier_row *rows;
        uint32_t n = switches_readiers(sw, 101, &rows);
        assert_int_equal(n, 4);
        assert_int_equal(rows[0].count, 2);
        assert_int_equal(rows[0].tid, 101);
        assert_int_equal(rows[0].readying_tid, 201);
        assert_int_equal(rows[0].readying_pid, PID_B);
        assert_string_equal(rows[0].readying_process_name, "beta");
        assert_string_equal(rows[0].readying_thread_name, "loop");
        assert_true(rows[0].has_where);
        assert_int_equal(rows[0].function, fx->fn_beta);
        assert_int_equal(rows[0].offset, 1);
        assert_int_equal(rows[0].state, SYM_RESOLVED);
        uint32_t nr_gamma = 0, nr_nowhere = 0, nr_nt = 0;
        for (uint32_t i = 1; i < n; i++) {
                assert_int_equal(rows[i].count, 1);
                if (rows[i].function == fx->fn_gamma)
                        nr_gamma++;
                if (!rows[i].has_where) {
                        nr_nowhere++;
                        assert_int_equal(rows[i].readying_tid, 201);
                }
                if (rows[i].readying_tid == 102) {
                        nr_nt++;
                        char buf[64];
                        sym_format(fx->store, rows[i].where, buf, sizeof(buf));
                        assert_string_equal(buf, "ntdll.dll+0x400");
                }
        }
        assert_int_equal(nr_gamma, 1);
        assert_int_equal(nr_nowhere, 1);
        assert_int_equal(nr_nt, 1);

        n = switches_readiers(sw, 201, &rows);
        assert_int_equal(n, 1);
        assert_false(rows[0].has_where);
        assert_int_equal(rows[0].readying_tid, 101);
        assert_string_equal(rows[0].readying_thread_name, "main");
        n = switches_readiers(sw, AGG_ALL, &rows);
        assert_int_equal(n, 5);
        const struct switches_row *r = thread_row(sw, 101);
        assert_int_equal(r->nr_readied, 5);
        assert_int_equal(r->nr_switches, 0);
        assert_int_equal(switches_nr_readies(sw), 6);

        /* decaying: the readier rows halve and go */
        struct agg_settings s = {AGG_DECAYING, 0.5, 0};
        switches_set_settings(sw, &s);
        switches_refresh(sw);
        n = switches_readiers(sw, 101, &rows);
        assert_int_equal(n, 1);
        assert_int_equal(rows[0].count, 1);
        assert_int_equal(rows[0].function, fx->fn_beta);
        assert_int_equal(thread_row(sw, 101)->nr_readied, 2);
        switches_free(sw);
}

static void test_switches_modes(void **state)
{
        struct fix *fx = *state;
        struct switches *sw = switches_new(fx->store, 0);
        sw_feed(sw, ev_thread(KEV_PHASE_DC_START, 0, PID_A, 101, "main"));
        sw_feed(sw, ev_thread(KEV_PHASE_DC_START, 0, PID_A, 102, "short"));
        /* 101 runs on cpu0 from 0 to 100 ms; a refresh every 10 ms */
        struct agg_settings s = {AGG_ZEROED, 0, 0};
        switches_set_settings(sw, &s);
        sw_feed(sw, ev_cswitch(0, MS(0), 0, 0, ST_READY, WR_EXECUTIVE, 101, PID_A));
        sw_feed(sw, ev_cswitch(1, MS(1), 0, 0, ST_READY, WR_EXECUTIVE, 102, PID_A));
        sw_feed(sw, ev_cswitch(1, MS(2), 102, PID_A, ST_WAITING, WR_QUEUE, 0, 0));
        sw_feed(sw, ev_pmc(0, MS(10), PID_A, 101, 0x1000, 11));
        const struct switches_row *r = thread_row(sw, 102);
        assert_int_equal(r->on_cpu_ns, MS(1));
        r = thread_row(sw, 101);
        assert_int_equal(r->nr_switches, 1);
        assert_int_equal(r->on_cpu_ns, 0); /* still running: nothing credited yet */
        switches_refresh(sw);              /* credits up to 10 ms, then zeroes */
        assert_null(thread_row(sw, 101));
        assert_null(thread_row(sw, 102));
        const struct switches_row *rows;
        assert_int_equal(switches_threads(sw, SWITCHES_BY_ID, &rows), 0);
        const struct switches_wait_row *w;
        assert_int_equal(switches_waits(sw, &w), 0);
        /* each period gets its own share: 101's 10 ms, 102's wait of 10 ms */
        sw_feed(sw, ev_pmc(0, MS(20), PID_A, 101, 0x1000, 11));
        sw_feed(sw, ev_thread(KEV_PHASE_DC_END, MS(20), PID_A, 101, "main"));
        switches_set_settings(sw, &(struct agg_settings){AGG_DECAYING, 0.5, 0});
        switches_refresh(sw); /* credits [10, 20): 10 ms, halves to 5 ms */
        r = thread_row(sw, 101);
        assert_non_null(r);
        assert_int_equal(r->on_cpu_ns, MS(5));
        assert_string_equal(r->thread_name, "main"); /* names outlive the counts */
        r = thread_row(sw, 102);
        assert_int_equal(r->off_cpu_ns, MS(5));
        assert_int_equal(r->waits[0].nr_waits, 0); /* the wait has not ended */
        /* 102 wakes at 25 ms: the rest of its wait, then it counts as one wait */
        sw_feed(sw, ev_cswitch(1, MS(25), 0, 0, ST_READY, WR_EXECUTIVE, 102, PID_A));
        r = thread_row(sw, 102);
        assert_int_equal(r->off_cpu_ns, MS(5) + MS(5));
        assert_int_equal(r->waits[0].nr_waits, 1);
        assert_int_equal(r->nr_switches, 1);

        /* decaying: an ended thread goes when it decays to nothing, a live one stays named */
        sw_feed(sw, ev_cswitch(1, MS(26), 102, PID_A, ST_WAITING, WR_QUEUE, 0, 0));
        sw_feed(sw, ev_thread(KEV_PHASE_END, MS(27), PID_A, 102, ""));
        for (int i = 0; i < 64; i++)
                switches_refresh(sw);
        assert_int_equal(switches_threads(sw, SWITCHES_BY_ID, &rows), 0);
        /* 101 kept its state: it is still on cpu0, and a switch-out credits it */
        switches_set_settings(sw, &(struct agg_settings){AGG_CUMULATIVE, 0, 0});
        sw_feed(sw, ev_cswitch(0, MS(30), 101, PID_A, ST_WAITING, WR_QUEUE, 0, 0));
        r = thread_row(sw, 101);
        assert_non_null(r);
        /* [27, 30): [20, 27) was credited at the first of the refreshes, and decayed */
        assert_int_equal(r->on_cpu_ns, MS(3));
        assert_string_equal(r->thread_name, "main");
        /* cumulative: refreshes only credit */
        switches_refresh(sw);
        switches_refresh(sw);
        assert_int_equal(thread_row(sw, 101)->on_cpu_ns, MS(3));
        const struct switches_cpu_row *c;
        uint32_t n = switches_cpus(sw, &c);
        assert_int_equal(n, 2);
        assert_int_equal(c[0].cpu, 0);
        assert_int_equal(c[0].nr_switches, 1); /* to idle at 30 ms */
        assert_int_equal(c[0].busy_ns, MS(3));
        assert_int_equal(c[1].cpu, 1);
        assert_int_equal(c[1].nr_switches, 0);
        assert_int_equal(c[1].idle_ns, MS(3)); /* idle since 26 ms: [27, 30) since the decay */
        switches_free(sw);
}

/* CPU% is on-CPU time over the wall time of the same window, in every mode: a thread on its
   CPU half the time reads 50% cumulative, decaying (its time and the window halve together),
   zeroed (both start over at each refresh) and cumulative again; one that never leaves its
   CPU reads 100%, its time since the last refresh counted when the rows are read (settled). */
static void test_switches_cpu_pct_modes(void **state)
{
        struct fix *fx = *state;
        struct switches *sw = switches_new(fx->store, 0);
        sw_feed(sw, ev_thread(KEV_PHASE_DC_START, 0, PID_A, 101, "half"));
        sw_feed(sw, ev_thread(KEV_PHASE_DC_START, 0, PID_A, 102, "spin"));
        sw_feed(sw, ev_cswitch(1, 0, 0, 0, ST_READY, WR_EXECUTIVE, 102, PID_A));
        static const enum agg_mode modes[] = {AGG_CUMULATIVE, AGG_DECAYING, AGG_ZEROED,
                                              AGG_CUMULATIVE};
        int64_t t = 0;
        for (uint32_t m = 0; m < 4; m++) {
                switches_set_settings(sw, &(struct agg_settings){modes[m], 0.5, 0});
                for (int k = 0; k < 3; k++) {
                        /* 100 ms: 101 on CPU 0 for 5 ms of every 10 */
                        for (int64_t end = t + MS(100); t < end; t += MS(10)) {
                                sw_feed(sw,
                                        ev_cswitch(0, t, 0, 0, ST_READY, WR_EXECUTIVE, 101, PID_A));
                                sw_feed(sw, ev_cswitch(0, t + MS(5), 101, PID_A, ST_WAITING,
                                                       WR_USERREQUEST, 0, 0));
                        }
                        sw_feed(sw, ev_pmc(1, t, PID_A, 102, 0x1234, 11)); /* time passes */
                        /* as the screen reads it (settled, before the refresh), and after it */
                        switches_settle(sw);
                        for (int after = 0; after < 2; after++) {
                                for (uint32_t tid = 101; tid <= 102; tid++) {
                                        const struct switches_row *r = thread_row(sw, tid);
                                        int64_t wall = switches_wall_ns(sw);
                                        double want = tid == 101 ? 50.0 : 100.0;
                                        if (r && wall > 0) {
                                                double pct =
                                                        100.0 * (double)r->on_cpu_ns / (double)wall;
                                                if (pct < want - 1.0 || pct > want + 1.0)
                                                        fail_msg("%u, %s, refresh %d%s: CPU%% "
                                                                 "%.2f (on %llu of %lld ns)",
                                                                 tid, agg_mode_name(modes[m]), k,
                                                                 after ? " (after)" : "", pct,
                                                                 (unsigned long long)r->on_cpu_ns,
                                                                 (long long)wall);
                                        } else {
                                                /* only zeroed, just after its refresh, has
                                                   nothing */
                                                assert_true(modes[m] == AGG_ZEROED && after);
                                                assert_int_equal(wall, 0);
                                        }
                                }
                                if (!after)
                                        switches_refresh(sw);
                        }
                }
        }
        switches_free(sw);
}

static struct kevent ev_group_mask(int64_t t, uint32_t flags)
{
        struct kevent ev = ev_base(KEV_GROUP_MASK, 0, t, 0, 0);
        ev.group_mask.masks[0] = flags;
        return ev;
}

/* CSWITCH turned off in the session (a group-mask event without it): no thread is taken to
   wait or run past then, a zero leaves no rows, and when switches come again each thread's
   wait and each CPU's thread start at their next switch. */
static void test_switches_cswitch_off(void **state)
{
        struct fix *fx = *state;
        struct switches *sw = switches_new(fx->store, 0);
        const uint32_t on = EVENT_TRACE_FLAG_PROFILE | EVENT_TRACE_FLAG_CSWITCH;
        sw_feed(sw, ev_group_mask(0, on));
        sw_feed(sw, ev_cswitch(0, MS(1), 0, 0, ST_READY, WR_EXECUTIVE, 101, PID_A));
        sw_feed(sw, ev_cswitch(1, MS(1), 0, 0, ST_READY, WR_EXECUTIVE, 102, PID_A));
        sw_feed(sw, ev_cswitch(1, MS(2), 102, PID_A, ST_WAITING, WR_QUEUE, 0, 0));
        assert_false(switches_is_stopped(sw));
        sw_feed(sw, ev_group_mask(MS(10), EVENT_TRACE_FLAG_PROFILE));
        assert_true(switches_is_stopped(sw));
        sw_feed(sw, ev_pmc(0, MS(1000), PID_A, 101, 0x1000, 11)); /* samples go on */
        switches_refresh(sw);
        const struct switches_row *r = thread_row(sw, 102);
        assert_non_null(r);
        assert_int_equal(r->off_cpu_ns, MS(8)); /* [2, 10): then switches stopped */
        r = thread_row(sw, 101);
        assert_non_null(r);
        assert_int_equal(r->on_cpu_ns, MS(9)); /* [1, 10) */
        /* z: nothing more is counted, no thread has invented waits */
        switches_zero(sw);
        sw_feed(sw, ev_pmc(0, MS(2000), PID_A, 101, 0x1000, 11));
        switches_refresh(sw);
        const struct switches_row *rows;
        assert_int_equal(switches_threads(sw, SWITCHES_BY_ID, &rows), 0);
        const struct switches_wait_row *w;
        assert_int_equal(switches_waits(sw, &w), 0);
        const struct switches_cpu_row *c;
        assert_int_equal(switches_cpus(sw, &c), 0);
        /* on again: 102's wait under way is not known, it counts from its next switch-out */
        sw_feed(sw, ev_group_mask(MS(2100), on));
        assert_false(switches_is_stopped(sw));
        sw_feed(sw, ev_cswitch(1, MS(2200), 0, 0, ST_READY, WR_EXECUTIVE, 102, PID_A));
        sw_feed(sw, ev_cswitch(1, MS(2210), 102, PID_A, ST_WAITING, WR_QUEUE, 0, 0));
        sw_feed(sw, ev_cswitch(1, MS(2230), 0, 0, ST_READY, WR_EXECUTIVE, 102, PID_A));
        r = thread_row(sw, 102);
        assert_non_null(r);
        assert_int_equal(r->nr_switches, 2);
        assert_int_equal(r->on_cpu_ns, MS(10));
        assert_int_equal(r->off_cpu_ns, MS(20));
        assert_int_equal(r->waits[0].nr_waits, 1);
        assert_null(thread_row(sw, 101)); /* was on CPU 0 when they stopped: not known since */
        /* off again, and a switch after it without a group mask: switches are on */
        sw_feed(sw, ev_group_mask(MS(2300), 0));
        assert_true(switches_is_stopped(sw));
        sw_feed(sw, ev_cswitch(1, MS(2310), 102, PID_A, ST_WAITING, WR_QUEUE, 0, 0));
        assert_false(switches_is_stopped(sw));
        switches_free(sw);
}

/* A CPU whose idle periods all say C0 (running): the kernel sent no idle states, its C-state
   is unknown, not "C0 100%". */
static void test_switches_cstates_unknown(void **state)
{
        struct fix *fx = *state;
        struct switches *sw = switches_new(fx->store, 0);
        sw_feed(sw, ev_cswitch(0, MS(1), 101, PID_A, ST_WAITING, WR_USERREQUEST, 0, 0));
        sw_feed(sw, ev_cswitch(0, MS(4), 0, 0, ST_READY, WR_EXECUTIVE, 101, PID_A));
        struct kevent ev = ev_cswitch(1, MS(1), 201, PID_B, ST_WAITING, WR_USERREQUEST, 0, 0);
        sw_feed(sw, ev);
        ev = ev_cswitch(1, MS(3), 0, 0, ST_READY, WR_EXECUTIVE, 201, PID_B);
        ev.cswitch.previous_cstate = 2;
        sw_feed(sw, ev);
        sw_feed(sw, ev_cswitch(1, MS(4), 201, PID_B, ST_WAITING, WR_USERREQUEST, 0, 0));
        sw_feed(sw, ev_cswitch(1, MS(5), 0, 0, ST_READY, WR_EXECUTIVE, 201, PID_B));
        const struct switches_cpu_row *c;
        assert_int_equal(switches_cpus(sw, &c), 2);
        char text[64];
        switches_cstates_text(&c[0], text, sizeof(text));
        assert_string_equal(text, "unknown (no C-state data)");
        switches_cstates_text(&c[1], text, sizeof(text)); /* C0 with C-states: polling */
        assert_string_equal(text, "C0 33% C2 67%");
        switches_free(sw);
}

/* The idle thread has one name, "Idle" (as WPA's), wherever it shows: as a process, as a
   thread and as a readier, even where an event named pid 0 otherwise (Linux's swapper). */
static void test_switches_idle_name(void **state)
{
        struct fix *fx = *state;
        struct switches *sw = switches_new(fx->store, 0);
        sw_feed(sw, ev_process(KEV_PHASE_DC_START, 0, 0, "swapper/0"));
        sw_feed(sw, ev_cswitch(0, MS(1), 101, PID_A, ST_WAITING, WR_USERREQUEST, 0, 0));
        sw_feed(sw, ev_ready(0, MS(2), 101, PID_A, 0, 0));
        sw_feed(sw, ev_cswitch(0, MS(3), 0, 0, ST_READY, WR_EXECUTIVE, 101, PID_A));
        assert_string_equal(switches_process_name(sw, 0), "Idle");
        char pn[SWITCHES_NAME_SIZE], tn[SWITCHES_NAME_SIZE];
        switches_thread_names(sw, 0, pn, tn);
        assert_string_equal(pn, "Idle");
        assert_string_equal(tn, "");
        const struct switches_readier_row *rr;
        assert_int_equal(switches_readiers(sw, 101, &rr), 1);
        assert_string_equal(rr[0].readying_process_name, "Idle");
        assert_string_equal(rr[0].readying_thread_name, "");
        switches_free(sw);
}

static void test_switches_filters(void **state)
{
        struct fix *fx = *state;
        struct switches *sw = switches_new(fx->store, 0);
        feed_schedule(sw);
        /* a process filter: B's thread only, and the totals start over */
        struct agg_filter f;
        agg_filter_init(&f);
        agg_filter_add_pid(&f, PID_B);
        switches_set_filter(sw, &f);
        const struct switches_row *rows;
        uint32_t n = switches_threads(sw, SWITCHES_BY_ID, &rows);
        assert_int_equal(n, 1);
        assert_int_equal(rows[0].tid, 201);
        const struct switches_cpu_row *c;
        assert_int_equal(switches_cpus(sw, &c), 0);
        const struct switches_wait_row *w;
        assert_int_equal(switches_waits(sw, &w), 0);
        /* what follows counts for B only; A's thread state was kept meanwhile */
        sw_feed(sw, ev_cswitch(0, MS(10), 0, 0, ST_READY, WR_EXECUTIVE, 101, PID_A));
        sw_feed(sw, ev_cswitch(1, MS(11), 201, PID_B, ST_WAITING, WR_QUEUE, 102, PID_A));
        n = switches_threads(sw, SWITCHES_BY_ID, &rows);
        assert_int_equal(n, 1);
        assert_int_equal(rows[0].on_cpu_ns, MS(3) + MS(3));
        n = switches_cpus(sw, &c);
        assert_int_equal(n, 1);
        assert_int_equal(c[0].cpu, 1);
        assert_int_equal(c[0].busy_ns, MS(3));
        assert_int_equal(c[0].nr_switches, 0); /* the switch in was A's */
        /* widening again: A's thread counts from its kept state */
        agg_filter_init(&f);
        switches_set_filter(sw, &f);
        sw_feed(sw, ev_cswitch(0, MS(12), 101, PID_A, ST_WAITING, WR_QUEUE, 0, 0));
        const struct switches_row *r = thread_row(sw, 101);
        assert_int_equal(r->on_cpu_ns, MS(2));
        assert_int_equal(wait_ns(r, ST_WAITING, WR_USERREQUEST), 0); /* ended under the filter */
        switches_free(sw);

        /* a thread filter */
        sw = switches_new(fx->store, 0);
        agg_filter_init(&f);
        agg_filter_add_tid(&f, 102);
        switches_set_filter(sw, &f);
        feed_schedule(sw);
        n = switches_threads(sw, SWITCHES_BY_ID, &rows);
        assert_int_equal(n, 1);
        assert_int_equal(rows[0].tid, 102);
        assert_int_equal(rows[0].nr_switches, 2);
        n = switches_processes(sw, SWITCHES_BY_ID, &rows);
        assert_int_equal(n, 1);
        assert_int_equal(rows[0].pid, PID_A);
        assert_int_equal(rows[0].nr_threads, 1);
        assert_int_equal(switches_nr_switches(sw), 2);
        switches_free(sw);

        /* a time range [3 ms, 7 ms): intervals are clipped to it */
        sw = switches_new(fx->store, 0);
        agg_filter_init(&f);
        agg_filter_set_time_range(&f, MS(3), MS(7));
        switches_set_filter(sw, &f);
        feed_schedule(sw);
        r = thread_row(sw, 101);
        assert_int_equal(r->on_cpu_ns, MS(1) + MS(1)); /* [3,4) and [6,7) */
        assert_int_equal(r->nr_switches, 1);           /* in at 6 ms; not at 1 ms */
        assert_int_equal(wait_ns(r, ST_WAITING, WR_QUEUE), MS(2));
        r = thread_row(sw, 201);
        assert_int_equal(r->on_cpu_ns, MS(2));                              /* [3,5) */
        assert_int_equal(wait_ns(r, ST_WAITING, WR_DELAYEXECUTION), MS(2)); /* [5,7) of [5,8) */
        assert_int_equal(r->waits[0].nr_waits, 0); /* it ended at 8 ms, outside */
        assert_int_equal(r->nr_switches, 0);
        r = thread_row(sw, 102);
        assert_int_equal(r->on_cpu_ns, MS(2) + MS(1) - 1); /* [4,6) and [6+1ns, 7) */
        assert_int_equal(switches_nr_switches(sw), 4);     /* at 4, 5, 6 and 6 ms + 1 ns */
        switches_free(sw);
}

static void test_switches_bounds_and_reuse(void **state)
{
        struct fix *fx = *state;
        struct switches *sw = switches_new(fx->store, 4);
        /* 10 threads through one CPU: 4 kept, the rest counted as other */
        for (uint32_t i = 0; i < 10; i++)
                sw_feed(sw, ev_cswitch(0, MS(i), i ? 1000 + i - 1 : 0, PID_A, ST_WAITING, WR_QUEUE,
                                       1000 + i, PID_A));
        sw_feed(sw, ev_cswitch(0, MS(10), 1009, PID_A, ST_WAITING, WR_QUEUE, 0, 0));
        const struct switches_row *rows;
        uint32_t n = switches_threads(sw, SWITCHES_BY_ID, &rows);
        assert_int_equal(n, 5);
        assert_true(rows[4].is_other);
        assert_int_equal(rows[4].tid, AGG_ALL);
        assert_int_equal(rows[4].nr_switches, 6);
        assert_int_equal(rows[4].on_cpu_ns, MS(6));
        uint64_t on = 0, nr = 0;
        for (uint32_t i = 0; i < n; i++) {
                on += rows[i].on_cpu_ns;
                nr += rows[i].nr_switches;
        }
        assert_int_equal(on, MS(10));
        assert_int_equal(nr, 10);
        n = switches_processes(sw, SWITCHES_BY_ID, &rows);
        assert_int_equal(n, 2);
        assert_true(rows[1].is_other);
        /* readiers past the bound */
        for (uint32_t i = 0; i < 6; i++)
                sw_feed(sw, ev_ready(0, MS(20 + i), 1000, PID_A, 2000 + i, PID_B));
        const struct switches_readier_row *rr;
        n = switches_readiers(sw, AGG_ALL, &rr);
        assert_int_equal(n, 5);
        assert_true(rr[0].is_other); /* 2 readyings, more than any one kept */
        assert_int_equal(rr[0].count, 2);
        switches_free(sw);

        /* a tid reused by a new thread: the ended one keeps its row */
        sw = switches_new(fx->store, 0);
        sw_feed(sw, ev_process(KEV_PHASE_START, 0, PID_A, "alpha.exe"));
        sw_feed(sw, ev_process(KEV_PHASE_START, 0, PID_B, "beta"));
        sw_feed(sw, ev_thread(KEV_PHASE_START, 0, PID_A, 500, "first"));
        sw_feed(sw, ev_cswitch(0, MS(1), 0, 0, ST_READY, WR_EXECUTIVE, 500, PID_A));
        sw_feed(sw, ev_cswitch(0, MS(3), 500, PID_A, ST_WAITING, WR_QUEUE, 0, 0));
        sw_feed(sw, ev_thread(KEV_PHASE_END, MS(4), PID_A, 500, ""));
        sw_feed(sw, ev_process(KEV_PHASE_END, MS(4), PID_A, "alpha.exe"));
        sw_feed(sw, ev_thread(KEV_PHASE_START, MS(5), PID_B, 500, "second"));
        sw_feed(sw, ev_cswitch(0, MS(6), 0, 0, ST_READY, WR_EXECUTIVE, 500, PID_B));
        sw_feed(sw, ev_cswitch(0, MS(10), 500, PID_B, ST_WAITING, WR_QUEUE, 0, 0));
        n = switches_threads(sw, SWITCHES_BY_ON_CPU, &rows);
        assert_int_equal(n, 2);
        assert_int_equal(rows[0].tid, 500);
        assert_int_equal(rows[0].pid, PID_B);
        assert_string_equal(rows[0].thread_name, "second");
        assert_int_equal(rows[0].on_cpu_ns, MS(4));
        assert_int_equal(rows[0].off_cpu_ns, 0); /* the first thread's wait is not its */
        assert_int_equal(rows[1].tid, 500);
        assert_int_equal(rows[1].pid, PID_A);
        assert_string_equal(rows[1].thread_name, "first");
        assert_string_equal(rows[1].process_name, "alpha.exe");
        assert_int_equal(rows[1].on_cpu_ns, MS(2));
        /* the same, told by a CSwitch of another process only */
        {
                /* a Start delivered after the thread's first switches (a live session's CPU
                   buffers come one by one): the same thread, one row; a Start after its
                   switches with no End between: a new thread */
                struct switches *late = switches_new(fx->store, 0);
                sw_feed(late, ev_process(KEV_PHASE_DC_START, 0, PID_A, "alpha.exe"));
                sw_feed(late, ev_cswitch(0, MS(10), 0, 0, ST_READY, WR_EXECUTIVE, 600, PID_A));
                sw_feed(late, ev_cswitch(0, MS(12), 600, PID_A, ST_WAITING, WR_QUEUE, 0, 0));
                sw_feed(late, ev_thread(KEV_PHASE_START, MS(5), PID_A, 600, "worker"));
                const struct switches_row *lr;
                assert_int_equal(switches_threads(late, SWITCHES_BY_ID, &lr), 1);
                assert_int_equal(lr[0].nr_switches, 1);
                assert_string_equal(lr[0].thread_name, "worker");
                sw_feed(late, ev_thread(KEV_PHASE_START, MS(20), PID_A, 600, "next"));
                sw_feed(late, ev_cswitch(0, MS(21), 0, 0, ST_READY, WR_EXECUTIVE, 600, PID_A));
                assert_int_equal(switches_threads(late, SWITCHES_BY_ID, &lr), 2);
                switches_free(late);
        }
        sw_feed(sw, ev_cswitch(0, MS(12), 0, 0, ST_READY, WR_EXECUTIVE, 500, PID_A));
        sw_feed(sw, ev_cswitch(0, MS(13), 500, PID_A, ST_WAITING, WR_QUEUE, 0, 0));
        n = switches_threads(sw, SWITCHES_BY_ID, &rows);
        assert_int_equal(n, 3);
        /* ended and spent: gone at a refresh in decaying mode */
        switches_set_settings(sw, &(struct agg_settings){AGG_ZEROED, 0, 0});
        switches_refresh(sw);
        n = switches_threads(sw, SWITCHES_BY_ID, &rows);
        assert_int_equal(n, 0);
        switches_free(sw);
}

/* ---- switches: a live session's events, CPU by CPU ---- */

/* A live session's buffers come one CPU after another, not in time order: what one CPU says of
   a thread can come after what another CPU said later. */

static struct kevent ev_rename(int64_t t, uint32_t pid, uint32_t tid, const char *name)
{
        struct kevent ev = ev_base(KEV_THREAD_NAME, 0, t, pid, tid);
        ev.thread_name.pid = pid;
        ev.thread_name.tid = tid;
        ev.thread_name.name = name;
        return ev;
}

static const struct switches_row *process_row_of(struct switches *sw, uint32_t pid)
{
        const struct switches_row *rows;
        uint32_t n = switches_processes(sw, SWITCHES_BY_ID, &rows);
        for (uint32_t i = 0; i < n; i++)
                if (rows[i].pid == pid && !rows[i].is_other)
                        return &rows[i];
        return NULL;
}

#define PID_BASH 300
#define PID_PROG 301 /* forked by bash (named bash), execs "prog" */

/* bash forks PID_PROG on CPU 0 at 10 ms; the child execs prog on CPU 1 at 12 ms and starts
   thread 302 at 13 ms, which names itself "worker" at 14 ms. CPU 1's events come first; CPU 0's
   (the fork's Start with the parent's name, the clone's with prog's) after them; last, a
   rundown at the end with a stale name (what a converter that read the rings CPU by CPU
   knew). */
static void feed_exec_late_fork(struct switches *sw)
{
        sw_feed(sw, ev_process(KEV_PHASE_DC_START, 0, PID_BASH, "bash"));
        sw_feed(sw, ev_thread(KEV_PHASE_DC_START, 0, PID_BASH, PID_BASH, "bash"));
        /* CPU 1 */
        sw_feed(sw, ev_cswitch(1, MS(11), 0, 0, ST_READY, WR_EXECUTIVE, PID_PROG, UINT32_MAX));
        sw_feed(sw, ev_process(KEV_PHASE_START, MS(12), PID_PROG, "prog"));
        sw_feed(sw, ev_rename(MS(12), PID_PROG, PID_PROG, "prog"));
        sw_feed(sw, ev_cswitch(1, MS(13) + 1, PID_PROG, PID_PROG, ST_WAITING, WR_USERREQUEST, 302,
                               PID_PROG));
        sw_feed(sw, ev_rename(MS(14), PID_PROG, 302, "worker"));
        sw_feed(sw, ev_cswitch(1, MS(15), 302, PID_PROG, ST_WAITING, WR_QUEUE, 0, 0));
        /* CPU 0 */
        sw_feed(sw, ev_process(KEV_PHASE_START, MS(10), PID_PROG, "bash"));
        sw_feed(sw, ev_thread(KEV_PHASE_START, MS(10), PID_PROG, PID_PROG, "bash"));
        sw_feed(sw, ev_thread(KEV_PHASE_START, MS(13), PID_PROG, 302, "prog"));
        sw_feed(sw, ev_cswitch(0, MS(10) + 1, 0, 0, ST_READY, WR_EXECUTIVE, PID_BASH, PID_BASH));
        sw_feed(sw, ev_cswitch(0, MS(16), PID_BASH, PID_BASH, ST_WAITING, WR_USERREQUEST, 0, 0));
        /* the rundown at the end */
        sw_feed(sw, ev_process(KEV_PHASE_DC_END, MS(20), PID_PROG, "bash"));
        sw_feed(sw, ev_thread(KEV_PHASE_DC_END, MS(20), PID_PROG, PID_PROG, "bash"));
        sw_feed(sw, ev_thread(KEV_PHASE_DC_END, MS(20), PID_PROG, 302, "prog"));
}

/* Names follow exec, renames and fork by their time, whatever order their events come in; a
   row says process/thread only where the thread is not named as its process. */
static void test_switches_names_late(void **state)
{
        struct fix *fx = *state;
        struct switches *sw = switches_new(fx->store, 0);
        feed_exec_late_fork(sw);
        const struct switches_row *rows;
        assert_int_equal(switches_threads(sw, SWITCHES_BY_ID, &rows), 3); /* one row a thread */
        const struct switches_row *r = thread_row(sw, PID_PROG);
        assert_non_null(r);
        assert_int_equal(r->pid, PID_PROG);
        assert_string_equal(r->process_name, "prog");
        assert_string_equal(r->thread_name, ""); /* named as its process */
        r = thread_row(sw, 302);
        assert_non_null(r);
        assert_string_equal(r->process_name, "prog");
        assert_string_equal(r->thread_name, "worker");
        r = thread_row(sw, PID_BASH);
        assert_string_equal(r->process_name, "bash");
        assert_string_equal(r->thread_name, "");
        r = process_row_of(sw, PID_PROG);
        assert_non_null(r);
        assert_string_equal(r->process_name, "prog");
        assert_int_equal(r->nr_threads, 2);
        /* who readied whom, and where they blocked, say the same names */
        sw_feed(sw, ev_ready(1, MS(17), PID_BASH, PID_BASH, 302, PID_PROG));
        const struct switches_readier_row *rr;
        assert_int_equal(switches_readiers(sw, PID_BASH, &rr), 1);
        assert_string_equal(rr[0].readying_process_name, "prog");
        assert_string_equal(rr[0].readying_thread_name, "worker");
        switches_free(sw);

        /* a kernel thread: kthreadd's fork, then its own name (a rename, no exec); a program
           that names its main thread (perf bench's sched-pipe); the renames come first */
        sw = switches_new(fx->store, 0);
        sw_feed(sw, ev_rename(MS(3), 400, 400, "kworker/0:1"));
        sw_feed(sw, ev_cswitch(1, MS(4), 0, 0, ST_READY, WR_EXECUTIVE, 400, 400));
        sw_feed(sw, ev_process(KEV_PHASE_START, MS(1), 400, "kthreadd"));
        sw_feed(sw, ev_thread(KEV_PHASE_START, MS(1), 400, 400, "kthreadd"));
        sw_feed(sw, ev_rename(MS(6), 500, 500, "sched-pipe"));
        sw_feed(sw, ev_thread(KEV_PHASE_START, MS(7), 500, 501, "sched-pipe"));
        sw_feed(sw, ev_cswitch(1, MS(8), 400, 400, ST_WAITING, WR_QUEUE, 500, 500));
        sw_feed(sw, ev_cswitch(1, MS(9), 500, 500, ST_WAITING, WR_QUEUE, 501, 500));
        sw_feed(sw, ev_process(KEV_PHASE_START, MS(5), 500, "perf"));
        sw_feed(sw, ev_rename(MS(5), 500, 500, "perf"));
        r = thread_row(sw, 400);
        assert_non_null(r);
        assert_string_equal(r->process_name, "kworker/0:1");
        assert_string_equal(r->thread_name, "");
        r = thread_row(sw, 500);
        assert_string_equal(r->process_name, "sched-pipe");
        assert_string_equal(r->thread_name, "");
        r = thread_row(sw, 501);
        assert_string_equal(r->process_name, "sched-pipe");
        assert_string_equal(r->thread_name, "");
        /* an End or a rundown at the end fills a name not known, and changes none */
        sw_feed(sw, ev_thread(KEV_PHASE_END, MS(20), 500, 501, "perf"));
        sw_feed(sw, ev_thread(KEV_PHASE_END, MS(21), 600, 601, "gone"));
        sw_feed(sw, ev_cswitch(0, MS(19), 0, 0, ST_READY, WR_EXECUTIVE, 601, 600));
        sw_feed(sw, ev_cswitch(0, MS(20), 601, 600, ST_WAITING, WR_QUEUE, 0, 0));
        assert_string_equal(thread_row(sw, 501)->process_name, "sched-pipe");
        assert_string_equal(thread_row(sw, 501)->thread_name, "");
        assert_string_equal(thread_row(sw, 601)->thread_name, "gone");
        switches_free(sw);
}

/* A pid used again: the threads of the process that had it keep its name. */
static void test_switches_pid_reuse(void **state)
{
        struct fix *fx = *state;
        struct switches *sw = switches_new(fx->store, 0);
        sw_feed(sw, ev_process(KEV_PHASE_START, MS(1), 700, "first"));
        sw_feed(sw, ev_thread(KEV_PHASE_START, MS(1), 700, 700, "first"));
        sw_feed(sw, ev_thread(KEV_PHASE_START, MS(1) + 1, 700, 701, "first"));
        sw_feed(sw, ev_rename(MS(1) + 2, 700, 701, "helper"));
        sw_feed(sw, ev_cswitch(0, MS(2), 0, 0, ST_READY, WR_EXECUTIVE, 700, 700));
        sw_feed(sw, ev_cswitch(0, MS(3), 700, 700, ST_READY, WR_PREEMPTED, 701, 700));
        sw_feed(sw, ev_cswitch(0, MS(4), 701, 700, ST_WAITING, WR_QUEUE, 700, 700));
        sw_feed(sw, ev_thread(KEV_PHASE_END, MS(5), 700, 701, "helper"));
        sw_feed(sw, ev_thread(KEV_PHASE_END, MS(6), 700, 700, "first"));
        sw_feed(sw, ev_process(KEV_PHASE_END, MS(6), 700, "first"));
        sw_feed(sw, ev_cswitch(0, MS(6) + 1, 700, 700, ST_TERMINATED, WR_TERMINATED, 0, 0));
        /* the pid's next process, and the tid's next thread */
        sw_feed(sw, ev_process(KEV_PHASE_START, MS(8), 700, "second"));
        sw_feed(sw, ev_thread(KEV_PHASE_START, MS(8), 700, 700, "second"));
        sw_feed(sw, ev_cswitch(0, MS(9), 0, 0, ST_READY, WR_EXECUTIVE, 700, 700));
        sw_feed(sw, ev_cswitch(0, MS(20), 700, 700, ST_WAITING, WR_QUEUE, 0, 0));
        const struct switches_row *rows;
        uint32_t n = switches_threads(sw, SWITCHES_BY_ON_CPU, &rows);
        assert_int_equal(n, 3);
        assert_int_equal(rows[0].tid, 700); /* the second: 11 ms */
        assert_string_equal(rows[0].process_name, "second");
        assert_string_equal(rows[0].thread_name, "");
        assert_int_equal(rows[1].tid, 700); /* the first: 3 ms */
        assert_string_equal(rows[1].process_name, "first");
        assert_string_equal(rows[1].thread_name, "");
        assert_int_equal(rows[1].off_cpu_ns, MS(1)); /* preempted [3, 4); nothing after its end */
        assert_int_equal(rows[2].tid, 701);
        assert_string_equal(rows[2].process_name, "first");
        assert_string_equal(rows[2].thread_name, "helper");
        /* an End of the first process that comes after the second's Start is not the
           second's */
        sw_feed(sw, ev_process(KEV_PHASE_END, MS(6), 700, "first"));
        sw_feed(sw, ev_thread(KEV_PHASE_END, MS(6), 700, 700, "first"));
        sw_feed(sw, ev_cswitch(0, MS(21), 0, 0, ST_READY, WR_EXECUTIVE, 700, 700));
        n = switches_threads(sw, SWITCHES_BY_ON_CPU, &rows);
        assert_int_equal(n, 3);
        assert_string_equal(rows[0].process_name, "second");
        assert_int_equal(rows[0].off_cpu_ns, MS(1)); /* waited [20, 21): still its thread */
        switches_free(sw);
}

/* A thread's off-CPU time ends when it exits, and each wait counts once, where it was, when
   its CPUs' events come out of order. */
static void test_switches_exit_late(void **state)
{
        struct fix *fx = *state;
        struct switches *sw = switches_new(fx->store, 0);
        /* thread 901 of 900: made on CPU 0 at 1 ms, runs there [2, 3), is preempted, runs on
           CPU 1 [4, 6) and exits at 5.5 ms. CPU 1's first buffer (to its End) comes first, then
           CPU 0's, then CPU 1's next (its last switch-out); time goes on to 2 s. */
        sw_feed(sw, ev_process(KEV_PHASE_DC_START, 0, 900, "loop"));
        sw_feed(sw, ev_cswitch(1, MS(4), 0, 0, ST_READY, WR_EXECUTIVE, 901, 900));
        sw_feed(sw, ev_thread(KEV_PHASE_END, MS(5) + MS(1) / 2, 900, 901, "short"));
        switches_refresh(sw);
        sw_feed(sw, ev_thread(KEV_PHASE_START, MS(1), 900, 901, "short"));
        sw_feed(sw, ev_cswitch(0, MS(2), 0, 0, ST_READY, WR_EXECUTIVE, 901, 900));
        sw_feed(sw, ev_cswitch(0, MS(3), 901, 900, ST_READY, WR_PREEMPTED, 0, 0));
        switches_refresh(sw);
        sw_feed(sw, ev_cswitch(1, MS(6), 901, 900, ST_TERMINATED, WR_TERMINATED, 0, 0));
        for (int s = 1; s <= 2; s++) {
                sw_feed(sw, ev_pmc(0, MS(1000) * s, 900, 900, 0x1234, 11)); /* time passes */
                switches_refresh(sw);
        }
        const struct switches_row *rows;
        assert_int_equal(switches_threads(sw, SWITCHES_BY_ID, &rows), 1);
        const struct switches_row *r = thread_row(sw, 901);
        assert_string_equal(r->process_name, "loop");
        assert_string_equal(r->thread_name, "short");
        assert_int_equal(r->nr_switches, 2);
        assert_int_equal(r->on_cpu_ns, MS(3));
        assert_int_equal(r->off_cpu_ns, MS(1));
        assert_int_equal(r->nr_waits, 1);
        assert_int_equal(wait_ns(r, ST_READY, WR_PREEMPTED), MS(1));
        assert_int_equal(r->waits[0].nr_waits, 1);
        const struct switches_wait_row *w;
        assert_int_equal(switches_waits(sw, &w), 1); /* no Terminated/WrTerminated */
        assert_int_equal(w[0].wait_reason, WR_PREEMPTED);
        assert_int_equal(w[0].off_cpu_ns, MS(1));
        switches_free(sw);

        /* a thread that migrates: CPU 0 has it [0, 1) and [4, 5), CPU 1 [2, 3) and [6, 7); its
           waits [1, 2) preempted, [3, 4) DelayExecution, [5, 6) WrQueue and from 7 UserRequest.
           CPU 1's events come first, a refresh between. */
        sw = switches_new(fx->store, 0);
        sw_feed(sw, ev_cswitch(1, MS(2), 0, 0, ST_READY, WR_EXECUTIVE, 1101, 1100));
        sw_feed(sw, ev_cswitch(1, MS(3), 1101, 1100, ST_WAITING, WR_DELAYEXECUTION, 0, 0));
        sw_feed(sw, ev_cswitch(1, MS(6), 0, 0, ST_READY, WR_EXECUTIVE, 1101, 1100));
        sw_feed(sw, ev_cswitch(1, MS(7), 1101, 1100, ST_WAITING, WR_USERREQUEST, 0, 0));
        switches_refresh(sw);
        sw_feed(sw, ev_cswitch(0, 0, 0, 0, ST_READY, WR_EXECUTIVE, 1101, 1100));
        sw_feed(sw, ev_cswitch(0, MS(1), 1101, 1100, ST_READY, WR_PREEMPTED, 0, 0));
        sw_feed(sw, ev_cswitch(0, MS(4), 0, 0, ST_READY, WR_EXECUTIVE, 1101, 1100));
        sw_feed(sw, ev_cswitch(0, MS(5), 1101, 1100, ST_WAITING, WR_QUEUE, 0, 0));
        sw_feed(sw, ev_pmc(0, MS(10), 1100, 1100, 0x1234, 11));
        switches_refresh(sw);
        r = thread_row(sw, 1101);
        assert_int_equal(r->on_cpu_ns, MS(4));
        assert_int_equal(r->off_cpu_ns, MS(6));
        assert_int_equal(wait_ns(r, ST_READY, WR_PREEMPTED), MS(1));
        assert_int_equal(wait_ns(r, ST_WAITING, WR_DELAYEXECUTION), MS(1));
        assert_int_equal(wait_ns(r, ST_WAITING, WR_QUEUE), MS(1));
        assert_int_equal(wait_ns(r, ST_WAITING, WR_USERREQUEST), MS(3)); /* under way */
        uint64_t nr = 0;
        for (uint32_t i = 0; i < r->nr_waits; i++)
                nr += r->waits[i].nr_waits;
        assert_int_equal(nr, 3); /* the three that ended */
        assert_int_equal(switches_waits(sw, &w), 4);
        switches_free(sw);
}

/* A CPU's busy and idle time add up to the time since the zeroing, when a refresh credited a
   CPU ahead of its events (they came after another CPU's later ones). */
static void test_switches_cpu_time_late(void **state)
{
        struct fix *fx = *state;
        struct switches *sw = switches_new(fx->store, 0);
        sw_feed(sw, ev_cswitch(0, MS(1), 0, 0, ST_READY, WR_EXECUTIVE, 1001, 1000));
        sw_feed(sw, ev_cswitch(1, MS(1), 0, 0, ST_READY, WR_EXECUTIVE, 1003, 1000));
        sw_feed(sw, ev_cswitch(1, MS(2), 1003, 1000, ST_WAITING, WR_QUEUE, 0, 0));
        sw_feed(sw, ev_pmc(0, MS(10), 1000, 1001, 0x1234, 11));
        switches_zero(sw); /* from 10 ms on */
        /* CPU 0 to 30 ms first; a refresh credits CPU 1's idle thread up to 30 ms */
        sw_feed(sw, ev_cswitch(0, MS(15), 1001, 1000, ST_WAITING, WR_QUEUE, 0, 0));
        sw_feed(sw, ev_cswitch(0, MS(25), 0, 0, ST_READY, WR_EXECUTIVE, 1002, 1000));
        sw_feed(sw, ev_cswitch(0, MS(30), 1002, 1000, ST_WAITING, WR_QUEUE, 0, 0));
        switches_refresh(sw);
        /* then CPU 1's, one of them from before the zeroing */
        sw_feed(sw, ev_cswitch(1, MS(9), 0, 0, ST_READY, WR_EXECUTIVE, 1003, 1000));
        sw_feed(sw, ev_cswitch(1, MS(12), 1003, 1000, ST_WAITING, WR_QUEUE, 0, 0));
        sw_feed(sw, ev_cswitch(1, MS(20), 0, 0, ST_READY, WR_EXECUTIVE, 1003, 1000));
        sw_feed(sw, ev_cswitch(1, MS(24), 1003, 1000, ST_WAITING, WR_QUEUE, 0, 0));
        switches_refresh(sw);
        sw_feed(sw, ev_pmc(0, MS(40), 1000, 1001, 0x1234, 11));
        switches_refresh(sw);
        const struct switches_cpu_row *c;
        assert_int_equal(switches_cpus(sw, &c), 2);
        for (uint32_t i = 0; i < 2; i++)
                assert_int_equal(c[i].busy_ns + c[i].idle_ns, MS(30)); /* 10 to 40 ms */
        assert_int_equal(c[0].busy_ns, MS(5) + MS(5));
        assert_int_equal(c[1].busy_ns, MS(2) + MS(4));
        assert_int_equal(c[1].nr_switches, 3); /* not the one at 9 ms */
        assert_int_equal(thread_row(sw, 1003)->on_cpu_ns, MS(6));
        assert_int_equal(thread_row(sw, 1003)->off_cpu_ns, MS(8) + MS(16));
        switches_free(sw);
}

/* ---- the places' keys (hot_set_place_keys) ---- */

/* The same stacks of many short processes (each maps the binary elsewhere), two threads each,
   counted by three tables: keyed by process and thread (the default), by process alone, by
   address alone. Each grouping's rows are the same from a table whose keys hold what it needs;
   keyed by address, a process storm takes one place per address: a table of 16 places holds
   them all (keyed by process, most samples find no room). */
static void feed_storm(struct fix *fx, struct hot *h)
{
        int64_t t = 0;
        for (uint32_t p = 0; p < 40; p++) {
                uint32_t pid = 1000 + p;
                uint64_t base = EXE + (uint64_t)p * 0x2000000ull;
                fix_image(fx, pid, base);
                uint64_t a = base + fx->off_alpha, b = base + fx->off_beta,
                         g = base + fx->off_gamma;
                /* alpha called by beta by gamma by beta: beta twice (its total once) */
                const uint64_t deep[] = {a, b, g, b};
                const uint64_t shallow[] = {g, b};
                for (uint32_t i = 0; i < 6; i++, t += 1000) {
                        uint32_t tid = pid * 10 + i % 2;
                        bool is_deep = i % 3 != 2;
                        struct kevent ev = ev_base(KEV_SAMPLE, i % 2, t, pid, tid);
                        ev.sample.ip = is_deep ? a : g;
                        ev.sample.tid = tid;
                        hot_event(h, &ev);
                        struct kevent st = ev_stack(i % 2, t, pid, tid, is_deep ? deep : shallow,
                                                    is_deep ? 4 : 2);
                        hot_event(h, &st);
                }
        }
}

static void test_hot_place_keys(void **state)
{
        struct fix *fx = *state;
        static const enum hot_grouping groupings[] = {HOT_BY_FUNCTION, HOT_BY_PROCESS,
                                                      HOT_BY_THREAD};
        struct hot *all = hot_new(fx->store, 0);
        feed_storm(fx, all);
        for (uint32_t k = 0; k < 2; k++) {
                struct hot *h = hot_new(fx->store, 0);
                hot_set_place_keys(h, groupings[k]);
                feed_storm(fx, h);
                assert_int_equal(hot_nr_stacks(h), hot_nr_stacks(all));
                for (uint32_t g = 0; g <= k; g++) {
                        const struct hot_row *want, *got;
                        uint32_t n =
                                hot_functions_by(all, HOT_SOURCE_TIMER, groupings[g], true, &want);
                        struct hot_row *copy = malloc((n + 1) * sizeof(*copy));
                        assert_non_null(copy);
                        memcpy(copy, want, n * sizeof(*copy));
                        assert_int_equal(
                                hot_functions_by(h, HOT_SOURCE_TIMER, groupings[g], true, &got), n);
                        assert_int_equal(n, g == HOT_BY_FUNCTION ? 3 : 3 * 40);
                        for (uint32_t i = 0; i < n; i++) {
                                assert_int_equal(got[i].function, copy[i].function);
                                assert_int_equal(got[i].self, copy[i].self);
                                assert_int_equal(got[i].total, copy[i].total);
                                if (g == HOT_BY_PROCESS)
                                        assert_int_equal(got[i].pid, copy[i].pid);
                        }
                        if (g == HOT_BY_FUNCTION) { /* 160 deep stacks: beta once in each */
                                for (uint32_t i = 0; i < n; i++)
                                        if (copy[i].function == fx->fn_beta)
                                                assert_int_equal(copy[i].total, 240);
                        }
                        free(copy);
                }
                hot_free(h);
        }
        hot_free(all);
        /* keyed by address: 3 places whatever the processes; keyed by process: 120 */
        struct hot *small = hot_new(fx->store, 16);
        hot_set_place_keys(small, HOT_BY_FUNCTION);
        feed_storm(fx, small);
        struct hot_caps caps;
        hot_caps(small, &caps);
        assert_int_equal(caps.nr_samples_no_room, 0);
        hot_free(small);
        small = hot_new(fx->store, 16);
        feed_storm(fx, small);
        hot_caps(small, &caps);
        assert_true(caps.nr_samples_no_room > 0);
        hot_free(small);
}

/* A sample of one process whose stack names another (the sample's and the stack's pid differ:
   a process that execs, the kernel's frames) at the same address of an image without symbols:
   keyed by address, the stack counts the address once (its total 1, as its self), where places
   keyed by process counted it in each (total 2: no name to find the repeat by). */
static void test_hot_place_keys_pids(void **state)
{
        struct fix *fx = *state;
        const uint64_t base = 0x60000000ull;
        for (uint32_t pid = PID_A; pid <= PID_B; pid += PID_B - PID_A) {
                struct sym_image im = {pid,  base, 0x100000, 0, "/nonexistent/libnosyms.so",
                                       NULL, 0,    0,        0};
                sym_image_load(fx->store, &im);
        }
        for (uint32_t k = 0; k < 2; k++) {
                struct hot *h = hot_new(fx->store, 0);
                if (k)
                        hot_set_place_keys(h, HOT_BY_FUNCTION);
                struct kevent ev = ev_base(KEV_SAMPLE, 0, MS(1), PID_A, 101);
                ev.sample.ip = base + 0x40;
                ev.sample.tid = 101;
                hot_event(h, &ev);
                const uint64_t frames[] = {base + 0x40, base + 0x80};
                struct kevent st = ev_stack(0, MS(1), PID_B, 101, frames, 2);
                hot_event(h, &st);
                const struct hot_row *rows;
                uint32_t n = hot_functions(h, HOT_SOURCE_TIMER, false, &rows);
                assert_int_equal(n, 2);
                assert_int_equal(rows[0].self, 1);
                assert_int_equal(rows[0].total, k ? 1 : 2);
                hot_free(h);
        }
}

/* A synchronous symbol store with the kernel's image (16 MiB, no symbols yet) at kb. */
static struct sym_store *kernel_image_store(uint64_t kb)
{
        struct sym_store *s;
        struct sym_options o = {.is_synchronous = true, .log = quiet_log};
        assert_int_equal(sym_store_new(&s, &o), 0);
        struct sym_image k = {0, kb, 0x1000000, 0, "[kernel.kallsyms]", NULL, 0, 0, 0};
        sym_image_load(s, &k);
        return s;
}

/* The sources in the order the trace declares them (its CollectionStart events: a perf.data's
   events' order, as perf report lists them), whatever order their first samples came in; a
   source no event declared after them, as its samples came. */
static void test_hot_sources_declared_order(void **state)
{
        struct fix *fx = *state;
        struct hot *h = hot_new(fx->store, 0);
        const uint16_t declared[] = {19 /* TotalCycles */, 26 /* InstructionRetired */, 0};
        for (uint32_t i = 0; i < 3; i++) {
                struct kevent ci = ev_base(KEV_PROFILE_INTERVAL, 0, 0, 0, 0);
                ci.profile_interval.source = declared[i];
                ci.profile_interval.new_interval_100ns = 10000;
                ci.profile_interval.source_name = "";
                hot_event(h, &ci);
        }
        /* again: still one place each */
        struct kevent again = ev_base(KEV_PROFILE_INTERVAL, 0, 1, 0, 0);
        again.profile_interval.source = 26;
        again.profile_interval.source_name = "";
        hot_event(h, &again);
        const uint64_t ip = EXE + fx->off_alpha + 4;
        const uint16_t sampled[] = {6, 26, 19, 26, 6};
        for (uint32_t i = 0; i < 5; i++) {
                struct kevent ev = ev_pmc(0, MS(1 + i), PID_A, 100, ip, sampled[i]);
                hot_event(h, &ev);
        }
        uint16_t out[16];
        assert_int_equal(hot_sources(h, out, 16), 3);
        assert_int_equal(out[0], 19);
        assert_int_equal(out[1], 26);
        assert_int_equal(out[2],
                         6); /* declared by no event: after them (the timer, 0, unsampled) */
        assert_int_equal(hot_sources(h, out, 1), 1);
        assert_int_equal(out[0], 19);
        assert_int_equal(hot_nr_samples(h, 26), 2);
        hot_free(h);
}

/* An ImageIdentity and its Image event (two programs' mappings, of their second page of file). */
static struct kevent ev_identity(int64_t t, uint32_t pid, uint64_t base, const uint8_t *build_id)
{
        struct kevent ev = ev_base(KEV_IMAGE_IDENTITY, 0, t, pid, 0);
        ev.image_identity.pid = pid;
        ev.image_identity.base = base;
        ev.image_identity.size = 0x1000;
        ev.image_identity.file_offset = 0x1000;
        ev.image_identity.build_id = build_id;
        ev.image_identity.build_id_size = 20;
        ev.image_identity.path = "/opt/prog";
        return ev;
}

static struct kevent ev_image_of(int64_t t, uint32_t pid, uint64_t base)
{
        struct kevent ev = ev_base(KEV_IMAGE, 0, t, pid, 0);
        ev.image.pid = pid;
        ev.image.base = base;
        ev.image.size = 0x1000;
        ev.image.file_name = "/opt/prog";
        ev.image.phase = KEV_PHASE_START;
        return ev;
}

/* A live session's CPU buffers come one after another: where a CPU's buffer ends between an
   ImageIdentity and its Image, another CPU's pairs come in between. Each Image still takes its
   own identity (the mapping's file offset and build-id): with only the last identity held, the
   first program's code was placed a page off (its names lost: "prog+0x1ed"). */
static void test_sym_feed_identities_interleaved(void **state)
{
        (void)state;
        struct sym_store *s;
        struct sym_options o = {.is_synchronous = true, .log = quiet_log};
        assert_int_equal(sym_store_new(&s, &o), 0);
        struct sym_feed *f = sym_feed_new(s);
        uint8_t id_a[20], id_b[20], id_c[20];
        memset(id_a, 0xa1, sizeof(id_a));
        memset(id_b, 0xb2, sizeof(id_b));
        memset(id_c, 0xc3, sizeof(id_c));
        const uint64_t base_a = 0x555500001000ull, base_b = 0x566600001000ull,
                       base_c = 0x577700001000ull;
        struct kevent evs[] = {
                ev_identity(MS(1), 10, base_a, id_a), /* CPU 0's buffer ends here */
                ev_identity(MS(1), 11, base_b, id_b), ev_image_of(MS(1), 11, base_b),
                ev_identity(MS(1), 12, base_c, id_c), /* CPU 1's ends here */
                ev_image_of(MS(1), 10, base_a),       /* CPU 0's next buffer */
                ev_image_of(MS(1), 12, base_c),
        };
        for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
                sym_feed_event(f, &evs[i]);
        const uint32_t pids[] = {10, 11, 12};
        const uint64_t bases[] = {base_a, base_b, base_c};
        uint32_t modules[3];
        for (int i = 0; i < 3; i++) {
                struct sym_loc loc = sym_locate(s, pids[i], bases[i] + 0x1ed);
                assert_int_not_equal(loc.module, 0);
                assert_int_equal(loc.rel, 0x11ed);
                modules[i] = loc.module;
        }
        /* each keyed by its own build-id: three modules, not one of the path */
        assert_int_not_equal(modules[0], modules[1]);
        assert_int_not_equal(modules[0], modules[2]);
        assert_int_not_equal(modules[1], modules[2]);
        /* an Image that no identity describes: the mapping's start is the file's (offset 0) */
        struct kevent plain = ev_image_of(MS(2), 13, base_a);
        sym_feed_event(f, &plain);
        assert_int_equal(sym_locate(s, 13, base_a + 0x1ed).rel, 0x1ed);
        /* a whole CPU buffer of other programs' pairs (a build's compilers starting: some 300
           in 64 KB) between a pair split by its buffer's end, and a few split ones of the other
           CPUs: the identity still held when its Image comes (a ring of 32 lost it) */
        struct kevent split = ev_identity(MS(3), 20, base_a, id_a);
        sym_feed_event(f, &split);
        for (uint32_t i = 0; i < 300; i++) {
                uint64_t base = 0x600000001000ull + (uint64_t)i * 0x100000;
                struct kevent pair[2] = {ev_identity(MS(3), 200 + i, base, id_b),
                                         ev_image_of(MS(3), 200 + i, base)};
                if (i % 100 == 99) {
                        sym_feed_event(f, &pair[0]); /* its Image in a later buffer */
                        continue;
                }
                sym_feed_event(f, &pair[0]);
                sym_feed_event(f, &pair[1]);
                assert_int_equal(sym_locate(s, 200 + i, base + 0x1ed).rel, 0x11ed);
        }
        struct kevent late = ev_image_of(MS(3), 20, base_a);
        sym_feed_event(f, &late);
        struct sym_loc loc = sym_locate(s, 20, base_a + 0x1ed);
        assert_int_equal(loc.rel, 0x11ed);
        assert_int_equal(loc.module, modules[0]); /* its own build-id's */
        sym_feed_free(f);
        sym_store_free(s);
}

/* A recording's kernel frames: their answers are kept by the places while no kernel symbol
   comes (the store's sym_answers_epoch), so that stacks over the same kernel addresses ask the
   store once per place, not once per frame; symbols that come later name the rows all the same. */
static void test_hot_kernel_answers_kept(void **state)
{
        (void)state;
        const uint64_t kb = 0xffffffff81000000ull;
        struct sym_store *s = kernel_image_store(kb);
        struct hot *h = hot_new(s, 0);
        const uint64_t a = kb + 0x123, b = kb + 0x456, c = kb + 0x789;
        /* six different stacks over the same three places, twice over */
        const uint64_t stacks[6][3] = {{a, b, c}, {a, c, b}, {b, a, c},
                                       {b, c, a}, {c, a, b}, {c, b, a}};
        struct sym_stats st0, st1;
        sym_store_get_stats(s, &st0);
        int64_t t = 0;
        for (uint32_t round = 0; round < 2; round++) {
                for (uint32_t i = 0; i < 6; i++, t += 1000) {
                        struct kevent ev = ev_base(KEV_SAMPLE, 0, t, 100, 101);
                        ev.sample.ip = stacks[i][0];
                        ev.sample.tid = 101;
                        hot_event(h, &ev);
                        struct kevent sk = ev_stack(0, t, 100, 101, stacks[i], 3);
                        hot_event(h, &sk);
                }
                if (round == 0) { /* the symbols come after the first round's stacks */
                        sym_store_get_stats(s, &st1);
                        assert_true(st1.nr_lookups - st0.nr_lookups <= 3);
                        sym_kernel_symbol(s, kb + 0x100, 0x80, "k_alpha", "");
                        sym_kernel_symbol(s, kb + 0x400, 0x100, "k_beta", "");
                        sym_kernel_symbol(s, kb + 0x700, 0x100, "k_gamma", "");
                }
        }
        sym_store_get_stats(s, &st1);
        assert_true(st1.nr_lookups - st0.nr_lookups <= 6);
        const struct hot_row *rows;
        uint32_t n = hot_functions(h, HOT_SOURCE_TIMER, false, &rows);
        assert_int_equal(n, 3);
        uint64_t self = 0;
        for (uint32_t i = 0; i < n; i++) {
                assert_int_equal(rows[i].state, SYM_RESOLVED);
                const char *name = sym_name(s, rows[i].function);
                assert_true(!strcmp(name, "k_alpha") || !strcmp(name, "k_beta") ||
                            !strcmp(name, "k_gamma"));
                assert_int_equal(rows[i].total, 12);
                self += rows[i].self;
        }
        assert_int_equal(self, 12);
        hot_free(h);
        sym_store_free(s);
}

/* Places keyed by address alone (a report by function): a kernel frame that the kernel's own
   image places is every process's, so a new process's stacks over known kernel code find its
   frames in the frame memo; keyed by thread, each process locates its own. */
static void test_hot_kernel_frames_shared(void **state)
{
        (void)state;
        const uint64_t kb = 0xffffffff81000000ull;
        struct sym_store *s = kernel_image_store(kb);
        const uint64_t stack[] = {kb + 0x123, kb + 0x456, kb + 0x789};
        for (uint32_t shared = 0; shared < 2; shared++) {
                struct hot *h = hot_new(s, 0);
                if (shared)
                        hot_set_place_keys(h, HOT_BY_FUNCTION);
                int64_t t = 0;
                for (uint32_t pid = 100; pid < 104; pid++, t += 1000) {
                        struct kevent ev = ev_base(KEV_SAMPLE, 0, t, pid, pid + 1);
                        ev.sample.ip = stack[0];
                        ev.sample.tid = pid + 1;
                        hot_event(h, &ev);
                        struct kevent sk = ev_stack(0, t, pid, pid + 1, stack, 3);
                        hot_event(h, &sk);
                }
                assert_int_equal(hot_nr_walks(h), 4);
                assert_int_equal(hot_nr_frames_located(h), shared ? 2 : 8);
                const struct hot_row *rows;
                uint32_t n = hot_functions(h, HOT_SOURCE_TIMER, true, &rows);
                assert_int_equal(n, 3);
                for (uint32_t i = 0; i < n; i++)
                        assert_int_equal(rows[i].total, 4);
                hot_free(h);
        }
        sym_store_free(s);
}

/* The Hot lines sum an address's samples over the processes that sampled it before they pick
   the 16,384 heaviest addresses to look up: model_fn_alpha sampled once in each of 300
   processes is one address of 300 samples, not 300 places of one that the 16,384 places of two
   samples (an image without lines) leave out. */
static void test_hot_lines_by_address(void **state)
{
        struct fix *fx = *state;
        uint32_t file, line;
        if (!sym_srcline_line(fx->store, sym_locate(fx->store, PID_A, EXE + fx->off_alpha), &file,
                              &line))
                skip(); /* a build without debug information: no lines to count */
        struct hot *h = hot_new(fx->store, 0);
        struct sym_image other = {
                PID_A, 0x70000000ull, 0x1000000, 0, "/nonexistent/liblines.so", NULL, 0, 0, 0};
        sym_image_load(fx->store, &other);
        int64_t t = 0;
        for (uint32_t i = 0; i < 16384; i++) {
                for (uint32_t k = 0; k < 2; k++, t += 1000) {
                        struct kevent ev = ev_base(KEV_SAMPLE, 0, t, PID_A, 101);
                        ev.sample.ip = 0x70000000ull + (uint64_t)i * 16;
                        ev.sample.tid = 101;
                        hot_event(h, &ev);
                }
        }
        for (uint32_t p = 0; p < 300; p++, t += 1000) {
                uint32_t pid = 5000 + p;
                uint64_t base = EXE + (uint64_t)(p + 1) * 0x2000000ull;
                fix_image(fx, pid, base);
                struct kevent ev = ev_base(KEV_SAMPLE, 0, t, pid, pid);
                ev.sample.ip = base + fx->off_alpha;
                ev.sample.tid = pid;
                hot_event(h, &ev);
        }
        const struct hot_line_row *rows;
        uint32_t n = hot_top_lines(h, HOT_SOURCE_TIMER, 5, &rows);
        assert_int_equal(n, 1);
        assert_int_equal(rows[0].file, file);
        assert_int_equal(rows[0].line, line);
        assert_int_equal(rows[0].self, 300);
        hot_free(h);
}

/* ---- PMC and LBR through the whole model, and a recorded trace ---- */

/* IPC per function and module: instructions samples x their interval over cycles samples x
   theirs; a function without instruction samples has IPC 0; no interval, no rows. */
static void test_hot_ipc(void **state)
{
        struct fix *fx = *state;
        struct hot *h = hot_new(fx->store, 0);
        uint64_t a = EXE + fx->off_alpha, be = EXE + fx->off_beta;
        for (int i = 0; i < 4; i++) {
                struct kevent ev = ev_pmc(0, MS(i), PID_A, 101, a, HOT_IPC_CYCLES);
                hot_event(h, &ev);
        }
        for (int i = 0; i < 2; i++) {
                struct kevent ev = ev_pmc(0, MS(10 + i), PID_A, 101, be, HOT_IPC_CYCLES);
                hot_event(h, &ev);
        }
        for (int i = 0; i < 6; i++) {
                struct kevent ev = ev_pmc(0, MS(20 + i), PID_A, 101, a, HOT_IPC_INSTRUCTIONS);
                hot_event(h, &ev);
        }
        struct hot_ipc_row *rows;
        uint32_t n = hot_ipc_rows(h, 1000, 2000, 0, &rows);
        assert_int_equal(n, 2);
        assert_int_equal(rows[0].function, fx->fn_alpha);
        assert_int_equal(rows[0].nr_cycles, 4);
        assert_int_equal(rows[0].nr_instructions, 6);
        assert_true(rows[0].ipc > 2.999 && rows[0].ipc < 3.001);
        assert_int_equal(rows[1].nr_cycles, 2);
        assert_int_equal(rows[1].nr_instructions, 0);
        assert_true(rows[1].ipc == 0.0);
        free(rows);
        n = hot_ipc_module_rows(h, 1000, 2000, 0, &rows);
        assert_int_equal(n, 1);
        assert_int_equal(rows[0].nr_cycles, 6);
        assert_int_equal(rows[0].nr_instructions, 6);
        assert_true(rows[0].ipc > 1.999 && rows[0].ipc < 2.001);
        free(rows);
        assert_int_equal(hot_ipc_rows(h, 0, 2000, 0, &rows), 0);
        free(rows);
        hot_free(h);
}

static void test_pmc_lbr_together(void **state)
{
        struct fix *fx = *state;
        struct hot *h = hot_new(fx->store, 0);
        struct branches *b = branches_new(fx->store, 0);
        struct switches *sw = switches_new(fx->store, 0);
        uint64_t a = EXE + fx->off_alpha, g = EXE + fx->off_gamma;
        const uint64_t frames[] = {a, g};
        struct kevent_lbr_entry e[16];
        for (uint32_t i = 0; i < 16; i++)
                e[i] = (struct kevent_lbr_entry){g + i % 2, a};
        for (int i = 0; i < 50; i++) {
                int64_t t = MS(i);
                struct kevent evs[] = {
                        ev_pmc(0, t, PID_A, 101, a, 11), /* BranchMispredictions */
                        ev_stack(0, t, PID_A, 101, frames, 2),
                        ev_lbr(0, t, PID_A, 101, e, 16),
                        ev_cswitch(1, t, i ? 201 : 0, PID_B, ST_READY, WR_PREEMPTED, 201, PID_B),
                        /* the switch's stack: no sample's, not counted as one */
                        ev_stack(1, t, PID_B, 201, frames, 2),
                };
                for (size_t k = 0; k < sizeof(evs) / sizeof(evs[0]); k++) {
                        hot_event(h, &evs[k]);
                        branches_event(b, &evs[k]);
                        switches_event(sw, &evs[k]);
                }
        }
        assert_int_equal(hot_nr_samples(h, 11), 50);
        assert_int_equal(hot_nr_stacks(h), 50); /* the samples with stacks only */
        assert_int_equal(branches_nr_events(b), 50);
        assert_int_equal(branches_nr_edges(b), 800);
        const struct branches_row *rows;
        uint32_t n = branches_rows(b, BRANCHES_BY_FUNCTION, AGG_ALL, &rows);
        assert_int_equal(n, 1);
        assert_int_equal(rows[0].from.function, fx->fn_gamma);
        assert_int_equal(rows[0].to.function, fx->fn_alpha);
        assert_int_equal(rows[0].nr_edges, 2);
        assert_true(rows[0].share > 0.999);
        n = branches_rows(b, BRANCHES_BY_EDGE, AGG_ALL, &rows);
        assert_int_equal(n, 2);
        assert_int_equal(rows[0].count, 400);
        /* a thread that only ever switches to itself: the switch-ins count, no wait */
        const struct switches_row *r = thread_row(sw, 201);
        assert_int_equal(r->nr_switches, 50);
        assert_int_equal(r->off_cpu_ns, 0);
        assert_int_equal(r->on_cpu_ns, MS(49));
        /* the PMC stacks are no readiers */
        const struct switches_readier_row *rr;
        assert_int_equal(switches_readiers(sw, AGG_ALL, &rr), 0);
        switches_free(sw);
        branches_free(b);
        hot_free(h);
}

struct replay {
        struct kdecoder *decoder;
        struct sym_feed *feed;
        struct hot *hot;
        struct branches *branches;
        struct switches *switches;
        uint64_t nr_events;
};

static void on_event(void *ctx, const struct kevent *ev)
{
        struct replay *r = ctx;
        r->nr_events++;
        sym_feed_event(r->feed, ev);
        hot_event(r->hot, ev);
        branches_event(r->branches, ev);
        switches_event(r->switches, ev);
}

static VOID WINAPI on_record(PEVENT_RECORD rec)
{
        struct replay *r = rec->UserContext;
        kdecoder_decode(r->decoder, rec, on_event, r);
}

/* Replays path through the decoder into fresh model objects; f: the switches' filter. */
static void replay_file(struct replay *r, const char *path, struct sym_store *store,
                        const struct agg_filter *f)
{
        *r = (struct replay){.decoder = kdecoder_new(true),
                             .feed = sym_feed_new(store),
                             .hot = hot_new(store, 0),
                             .branches = branches_new(store, 0),
                             .switches = switches_new(store, 0)};
        if (f) {
                switches_set_filter(r->switches, f);
                branches_set_filter(r->branches, f);
        }
        EVENT_TRACE_LOGFILEA lf;
        memset(&lf, 0, sizeof(lf));
        lf.LogFileName = (LPSTR)path;
        lf.ProcessTraceMode = PROCESS_TRACE_MODE_EVENT_RECORD | PROCESS_TRACE_MODE_RAW_TIMESTAMP;
        lf.EventRecordCallback = on_record;
        lf.Context = r;
        PROCESSTRACE_HANDLE h = OpenTraceA(&lf);
        assert_true(h != INVALID_PROCESSTRACE_HANDLE);
        assert_int_equal(ProcessTrace(&h, 1, NULL, NULL), ERROR_SUCCESS);
        CloseTrace(h);
}

static void replay_free(struct replay *r)
{
        switches_free(r->switches);
        branches_free(r->branches);
        hot_free(r->hot);
        sym_feed_free(r->feed);
        kdecoder_free(r->decoder);
}

/* The switches view looks for a stack's ReadyThread only while one waits for its stack (a
   count of the CPUs that hold one): the switches' stacks between, a wake-up's stack on another
   CPU, a wake-up whose stack does not come before its CPU's next one or a read (counted with no
   place; its stack after a read is no one's). Fails where a waiting ReadyThread is not counted
   as waiting. */
static void test_readies_waiting_count(void **state)
{
        struct fix *fx = *state;
        struct switches *sw = switches_new(fx->store, 0);
        const uint64_t where[] = {EXE + fx->off_alpha + 4};
        int64_t noise = MS(500);
        struct kevent noise_ev;
#define SW_NOISE(cpu)                                                                              \
        (noise_ev = ev_stack(cpu, noise += 7, PID_B, 300, where, 1), switches_event(sw, &noise_ev))
        sw_feed(sw, ev_ready(0, MS(1), 102, PID_A, 201, PID_B));
        SW_NOISE(1);
        sw_feed(sw, ev_ready(1, MS(2), 201, PID_B, 101, PID_A));
        sw_feed(sw, ev_stack(0, MS(2), PID_A, 101, where, 1)); /* CPU 1's, on CPU 0 */
        SW_NOISE(0);
        sw_feed(sw, ev_stack(0, MS(1), PID_B, 201, where, 1));
        /* a wake-up whose stack comes after its CPU's next one: counted with no place */
        sw_feed(sw, ev_ready(0, MS(3), 102, PID_A, 101, PID_A));
        SW_NOISE(1);
        sw_feed(sw, ev_ready(0, MS(4), 102, PID_A, 101, PID_A));
        sw_feed(sw, ev_stack(0, MS(4), PID_A, 101, where, 1));
        /* a read counts the waiting one with no place; its stack, after, is no one's */
        sw_feed(sw, ev_ready(1, MS(5), 101, PID_A, 102, PID_A));
        const struct switches_readier_row *rows;
        switches_readiers(sw, AGG_ALL, &rows);
        sw_feed(sw, ev_stack(1, MS(5), PID_A, 102, where, 1));
        sw_feed(sw, ev_ready(1, MS(6), 101, PID_A, 102, PID_A));
        SW_NOISE(0);
        sw_feed(sw, ev_stack(1, MS(6), PID_A, 102, where, 1));
#undef SW_NOISE
        uint32_t n = switches_readiers(sw, AGG_ALL, &rows);
        uint64_t placed = 0, unplaced = 0;
        for (uint32_t i = 0; i < n; i++) {
                if (rows[i].has_where)
                        placed += rows[i].count;
                else
                        unplaced += rows[i].count;
        }
        assert_int_equal(placed, 4);
        assert_int_equal(unplaced, 2);
        assert_int_equal(switches_nr_readies(sw), 6);
        switches_free(sw);
}

/* A sample and its stack for both views that take stacks: the hot functions and the call
   tree (which wait for the stack with the sample on its CPU). */
static void waiting_event(struct hot *h, struct calltree *t, const struct kevent *ev)
{
        hot_event(h, ev);
        calltree_event(t, ev);
}

/* A switch's stack: a sample's frames at a time of its own, never a sample's. */
static void noise_stack(struct hot *h, struct calltree *t, uint32_t cpu, int64_t *time,
                        const uint64_t *frames)
{
        struct kevent ev = ev_stack(cpu, *time += 7, PID_A, 300, frames, 3);
        waiting_event(h, t, &ev);
}

static struct kevent waiting_sample(uint32_t cpu, int64_t time, uint64_t ip)
{
        struct kevent ev = ev_base(KEV_SAMPLE, cpu, time, PID_A, 100 + cpu);
        ev.sample.ip = ip;
        ev.sample.tid = 100 + cpu;
        return ev;
}

/* The views look for a stack's sample only while one waits for its stack (a count of them):
   the switches' and wake-ups' stacks between, a sample's stack that comes on another CPU, a
   sample whose stack never comes (counted alone at the next sample on its CPU), a look at the
   rows and the tree while one waits (a trace read: it goes on waiting, and its stack counts),
   a reset with one waiting. Fails where a sample that waits is not counted as waiting, or one
   is counted as no longer waiting twice. */
static void test_stacks_waiting_count(void **state)
{
        struct fix *fx = *state;
        struct hot *h = hot_new(fx->store, 0);
        struct calltree *t = calltree_new(fx->store, 0, 0);
        calltree_keep_top_down(t);
        uint64_t a = EXE + fx->off_alpha + 4, b = EXE + fx->off_beta + 4,
                 g = EXE + fx->off_gamma + 4;
        const uint64_t frames[] = {a, b, g};
        int64_t noise_t = MS(500);
        struct kevent s0 = waiting_sample(0, MS(1), a), s1 = waiting_sample(1, MS(2), a);
        waiting_event(h, t, &s0);
        noise_stack(h, t, 1, &noise_t, frames);
        waiting_event(h, t, &s1);
        /* s1's stack on CPU 0 (where s0 waits with another time), then s0's */
        struct kevent st = ev_stack(0, MS(2), PID_A, 101, frames, 3);
        waiting_event(h, t, &st);
        noise_stack(h, t, 1, &noise_t, frames);
        st = ev_stack(0, MS(1), PID_A, 100, frames, 3);
        waiting_event(h, t, &st);
        noise_stack(h, t, 0, &noise_t, frames);
        /* CPU 0's next sample, CPU 2's that never gets its stack, then CPU 0's stack */
        struct kevent s0b = waiting_sample(0, MS(3), a), s2 = waiting_sample(2, MS(3) + 1, a);
        waiting_event(h, t, &s0b);
        waiting_event(h, t, &s2);
        noise_stack(h, t, 2, &noise_t, frames);
        st = ev_stack(0, MS(3), PID_A, 100, frames, 3);
        waiting_event(h, t, &st);
        /* a look at the rows and the tree while s2 waits: a trace read's leaves it waiting
           (its stack may come next: the screen's reading stops anywhere), and its stack, come
           after, is s2's */
        const struct hot_row *rows;
        hot_top_functions(h, 0, false, 10, &rows);
        calltree_catch_up(t);
        st = ev_stack(2, MS(3) + 1, PID_A, 102, frames, 3);
        waiting_event(h, t, &st);
        /* a sample whose stack does not come before its CPU's next one, which gets its own */
        struct kevent s1b = waiting_sample(1, MS(5), a), s1c = waiting_sample(1, MS(6), a);
        waiting_event(h, t, &s1b);
        noise_stack(h, t, 0, &noise_t, frames);
        waiting_event(h, t, &s1c);
        st = ev_stack(1, MS(6), PID_A, 101, frames, 3);
        waiting_event(h, t, &st);
        noise_stack(h, t, 1, &noise_t, frames);

        assert_int_equal(hot_nr_stacks(h), 5);
        assert_int_equal(hot_nr_samples(h, HOT_SOURCE_TIMER), 6);
        calltree_catch_up(t);
        assert_int_equal(calltree_nr_samples(t), 6);
        /* top-down: the samples with their stacks under gamma, the two alone under alpha */
        const struct calltree_row *tr;
        uint32_t n = calltree_children(t, false, 0, &tr);
        assert_int_equal(n, 2);
        uint64_t under_g = 0, under_a = 0;
        for (uint32_t i = 0; i < n; i++) {
                if (tr[i].function == fx->fn_gamma)
                        under_g = tr[i].count;
                else if (tr[i].function == fx->fn_alpha)
                        under_a = tr[i].count;
        }
        assert_int_equal(under_g, 5);
        assert_int_equal(under_a, 1);

        /* a reset while a sample waits: none waits after it, the next sample's stack counts */
        struct kevent s0c = waiting_sample(0, MS(8), a);
        waiting_event(h, t, &s0c);
        hot_reset(h);
        calltree_reset(t);
        noise_stack(h, t, 0, &noise_t, frames);
        struct kevent s0d = waiting_sample(0, MS(9), a);
        waiting_event(h, t, &s0d);
        noise_stack(h, t, 1, &noise_t, frames);
        st = ev_stack(0, MS(9), PID_A, 100, frames, 3);
        waiting_event(h, t, &st);
        assert_int_equal(hot_nr_stacks(h), 1);
        calltree_catch_up(t);
        n = calltree_children(t, false, 0, &tr);
        assert_int_equal(n, 1);
        assert_int_equal(tr[0].function, fx->fn_gamma);
        assert_int_equal(tr[0].count, 1);
        calltree_free(t);
        hot_free(h);
}

static uint32_t sink_stacks, sink_samples;

static void count_sink(void *ctx, const struct kevent *ev)
{
        (void)ctx;
        if (ev->type == KEV_STACK)
                sink_stacks++;
        else
                sink_samples++;
}

/* A switch's stack reaches the sample views only while a sample waits for its own, or while a
   sample sink takes every stack: a sample's stack after switch stacks still counts, with and
   without the sink. Fails where profile.c keeps a stack away while one of them waits. */
static void test_profile_switch_stacks_kept_away(void **state)
{
        (void)state;
        struct profile_options po = {.is_synchronous = true, .has_call_tree = true};
        struct profile *p = profile_new(&po);
        profile_set_whole_stacks(p);
        profile_set_sample_sink(p, count_sink, NULL);
        sink_stacks = sink_samples = 0;
        const uint64_t frames[] = {0x1000, 0x2000};
        for (uint32_t round = 0; round < 2; round++) {
                if (round == 1)
                        profile_set_sample_sink(p, NULL, NULL);
                int64_t t0 = MS(10 * round + 1);
                struct kevent ev = ev_cswitch(1, t0, 0, 0, 0, 0, 300, PID_B);
                profile_event(p, &ev);
                struct kevent st = ev_stack(1, t0, PID_B, 300, frames, 2);
                profile_event(p, &st);
                ev = ev_base(KEV_SAMPLE, 0, t0 + 1, PID_A, 7);
                ev.sample.ip = 0x1000;
                ev.sample.tid = 7;
                profile_event(p, &ev);
                ev = ev_cswitch(1, t0 + 2, 300, PID_B, 5, 4, 0, 0);
                profile_event(p, &ev);
                st = ev_stack(1, t0 + 2, PID_B, 300, frames, 2);
                profile_event(p, &st);
                st = ev_stack(0, t0 + 1, PID_A, 7, frames, 2); /* the sample's */
                profile_event(p, &st);
                ev = ev_cswitch(1, t0 + 3, 0, 0, 0, 0, 300, PID_B);
                profile_event(p, &ev);
                st = ev_stack(1, t0 + 3, PID_B, 300, frames, 2);
                profile_event(p, &st);
        }
        assert_int_equal(sink_samples, 1);
        assert_int_equal(sink_stacks, 4); /* the first round's, switches' too */
        assert_int_equal(hot_nr_stacks(profile_hot(p)), 2);
        calltree_catch_up(profile_calltree(p));
        assert_int_equal(calltree_nr_samples(profile_calltree(p)), 2);
        const struct calltree_row *rows;
        uint32_t n = calltree_children(profile_calltree(p), false, 0, &rows);
        uint64_t total = 0;
        for (uint32_t i = 0; i < n; i++)
                total += rows[i].count;
        assert_int_equal(total, 2);
        profile_free(p);
}

/* A recording cut short before its kernel symbols (a perf.data read up to its damage): the
   kernel's come at its end from perf's build-id cache (sym_feed_end), with no event. Its kernel
   addresses past the kernel's map, with modules described, are no image's until then; rows
   built while it was read (the screen's) kept them as unplaced places that "stood" (their
   processes' addresses had not moved), so the screen showed raw addresses where -b, reading it
   whole, named them (fuzz_replay's slices, on a damaged copy of a corpus file). */
static void test_profile_kernel_symbols_at_end(void **state)
{
        (void)state;
        char dir[] = "/tmp/etwtop-kcache-XXXXXX", path[256];
        assert_non_null(mkdtemp(dir));
        static const uint8_t id[20] = {0xab, 0xcd, 0x01};
        snprintf(path, sizeof(path), "%s/[kernel.kallsyms]", dir);
        assert_int_equal(mkdir(path, 0700), 0);
        snprintf(path, sizeof(path),
                 "%s/[kernel.kallsyms]/abcd010000000000000000000000000000000000", dir);
        assert_int_equal(mkdir(path, 0700), 0);
        strcat(path, "/kallsyms");
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, "ffffffff81000000 T _text\nffffffff81000100 T do_syscall_64\n"
                   "ffffffff81000200 T exc_page_fault\nffffffff81000300 T _etext\n");
        fclose(f);
        const char *was = getenv("PERF_BUILDID_DIR");
        char *saved = was ? strdup(was) : NULL;
        setenv("PERF_BUILDID_DIR", dir, 1);

        for (int built = 0; built < 2; built++) {
                struct profile_options po = {.is_synchronous = true, .has_call_tree = true};
                struct profile *p = profile_new(&po);
                profile_set_whole_stacks(p); /* a perf.data's: each stack whole */
                struct kevent im = ev_base(KEV_IMAGE_IDENTITY, 0, 0, 0, 0);
                im.image_identity.base = 0xffffffff81000000ull;
                im.image_identity.size = 0x100;
                im.image_identity.build_id = id;
                im.image_identity.build_id_size = 20;
                im.image_identity.path = "[kernel.kallsyms]";
                profile_event(p, &im);
                struct kevent k = ev_base(KEV_IMAGE, 0, 0, 0, 0);
                k.image.base = 0xffffffff81000000ull;
                k.image.size = 0x100; /* its samples past its map: the kernel's by its symbols */
                k.image.file_name = "[kernel.kallsyms]";
                k.image.phase = KEV_PHASE_START;
                profile_event(p, &k);
                k.image.base = 0xffffffffc0000000ull; /* a module: no longer the kernel's alone */
                k.image.size = 0x1000;
                k.image.file_name = "/lib/modules/6.1/kernel/fs/ext4/ext4.ko";
                profile_event(p, &k);
                const struct hot_row *rows;
                for (uint32_t i = 0; i < 4; i++) {
                        struct kevent ev = ev_base(KEV_SAMPLE, 0, MS(1 + i), PID_A, 7);
                        ev.sample.ip = i % 2 ? 0xffffffff81000210ull : 0xffffffff81000110ull;
                        ev.sample.tid = 7;
                        profile_event(p, &ev);
                        const uint64_t frames[] = {ev.sample.ip};
                        struct kevent st = ev_stack(0, MS(1 + i), PID_A, 7, frames, 1);
                        profile_event(p, &st);
                        if (built) { /* the screen's rows, built as it reads: no image's */
                                hot_functions_by(profile_hot(p), HOT_SOURCE_TIMER, HOT_BY_FUNCTION,
                                                 false, &rows);
                                profile_catch_up(p);
                        }
                }
                profile_end(p);
                sym_store_wait(profile_store(p));
                uint32_t n = hot_functions_by(profile_hot(p), HOT_SOURCE_TIMER, HOT_BY_FUNCTION,
                                              false, &rows);
                assert_int_equal(n, 2);
                for (uint32_t i = 0; i < n; i++) {
                        assert_int_equal(rows[i].self, 2);
                        assert_non_null(rows[i].name);
                        assert_true(strcmp(rows[i].name, "do_syscall_64") == 0 ||
                                    strcmp(rows[i].name, "exc_page_fault") == 0);
                }
                profile_free(p);
        }
        if (saved) {
                setenv("PERF_BUILDID_DIR", saved, 1);
                free(saved);
        } else {
                unsetenv("PERF_BUILDID_DIR");
        }
        unlink(path);
        *strrchr(path, '/') = 0;
        rmdir(path);
        *strrchr(path, '/') = 0;
        rmdir(path);
        rmdir(dir);
}

/* The sources whose samples carry LBR: each LBR record belongs to the sample before it on its own
   CPU (a live session's CPU buffers come one after another: CPU 1's sample came between CPU 0's
   sample and its LBR record, and CPU 0's source was not counted). */
static void test_profile_lbr_sources_per_cpu(void **state)
{
        (void)state;
        struct profile_options po = {.is_synchronous = true};
        struct profile *p = profile_new(&po);
        const struct kevent_lbr_entry e[1] = {{0x1000, 0x2000}};
        struct kevent s0 = ev_pmc(0, MS(1), PID_A, 7, 0x1000, 19);
        struct kevent s1 = ev_pmc(1, MS(2), PID_A, 8, 0x1000, 26);
        struct kevent l0 = ev_lbr(0, MS(1), PID_A, 7, e, 1);
        struct kevent l1 = ev_lbr(1, MS(2), PID_A, 8, e, 1);
        profile_event(p, &s0);
        profile_event(p, &s1);
        profile_event(p, &l0);
        profile_event(p, &l1);
        const struct profile_trace *t = profile_trace(p);
        assert_int_equal(t->nr_lbr_records, 2);
        assert_int_equal(t->nr_lbr_sources, 2);
        assert_int_equal(t->lbr_sources[0], 19);
        assert_int_equal(t->lbr_sources[1], 26);
        profile_free(p);
}

/* The events the trace's stacks belong to, in the order first seen, each once (a bit a kind
   spares a look through the list at every stack); a restart forgets them. */
static void test_profile_stack_hooks(void **state)
{
        (void)state;
        struct profile_options po = {.is_synchronous = true};
        struct profile *p = profile_new(&po);
        const uint64_t frames[] = {0x1000};
        const enum kevent_type kinds[] = {KEV_CSWITCH, KEV_SAMPLE,       KEV_CSWITCH,
                                          KEV_CSWITCH, KEV_READY_THREAD, KEV_SAMPLE};
        for (uint32_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
                struct kevent ev = ev_base(kinds[i], 0, MS(i + 1), PID_A, 7);
                profile_event(p, &ev);
                struct kevent st = ev_stack(0, MS(i + 1), PID_A, 7, frames, 1);
                profile_event(p, &st);
        }
        /* a stack of another time than the event before it belongs to none */
        struct kevent ev = ev_base(KEV_PMC_SAMPLE, 0, MS(20), PID_A, 7);
        profile_event(p, &ev);
        struct kevent st = ev_stack(0, MS(21), PID_A, 7, frames, 1);
        profile_event(p, &st);
        const struct profile_trace *tr = profile_trace(p);
        assert_int_equal(tr->nr_stack_hooks, 3);
        assert_int_equal(tr->stack_hooks[0], WMI_LOG_TYPE_CONTEXT_SWAP);
        assert_int_equal(tr->stack_hooks[1], PERFINFO_LOG_TYPE_SAMPLED_PROFILE);
        assert_int_equal(tr->stack_hooks[2], WMI_LOG_TYPE_READY_THREAD);
        profile_restart(p);
        ev = ev_base(KEV_READY_THREAD, 0, MS(30), PID_A, 7);
        profile_event(p, &ev);
        st = ev_stack(0, MS(30), PID_A, 7, frames, 1);
        profile_event(p, &st);
        ev = ev_base(KEV_SAMPLE, 0, MS(31), PID_A, 7);
        profile_event(p, &ev);
        st = ev_stack(0, MS(31), PID_A, 7, frames, 1);
        profile_event(p, &st);
        tr = profile_trace(p);
        assert_int_equal(tr->nr_stack_hooks, 2);
        assert_int_equal(tr->stack_hooks[0], WMI_LOG_TYPE_READY_THREAD);
        assert_int_equal(tr->stack_hooks[1], PERFINFO_LOG_TYPE_SAMPLED_PROFILE);
        profile_free(p);
}

/* The timeline as its first form counted it: the span doubled while an event lies past it,
   then the slice ns * SLOTS / span. */
static void timeline_reference(int64_t *span, uint32_t *timeline, int64_t ns)
{
        while (ns >= *span && *span < INT64_MAX / 4) {
                for (uint32_t i = 0; i < PROFILE_TIMELINE_SLOTS / 2; i++)
                        timeline[i] = timeline[2 * i] + timeline[2 * i + 1];
                memset(timeline + PROFILE_TIMELINE_SLOTS / 2, 0,
                       PROFILE_TIMELINE_SLOTS / 2 * sizeof(timeline[0]));
                *span *= 2;
        }
        int64_t slot = (int64_t)((__int128)ns * PROFILE_TIMELINE_SLOTS / *span);
        timeline[slot < PROFILE_TIMELINE_SLOTS ? slot : PROFILE_TIMELINE_SLOTS - 1]++;
}

/* The timeline's slices, the last one's times kept (an event in them takes it without a
   division): events on each side of every slice's first nanosecond, in time order and out of
   it, across the span's doublings, with a span that SLOTS does not divide. Fails where a
   slice's kept times are one off at either end or outlive a doubling. */
static void test_profile_timeline_slices(void **state)
{
        (void)state;
        struct profile_options po = {.is_synchronous = true};
        struct profile *p = profile_new(&po);
        TRACE_LOGFILE_HEADER hdr;
        memset(&hdr, 0, sizeof(hdr));
        hdr.NumberOfProcessors = 1;
        hdr.StartTime.QuadPart = 1000;
        hdr.EndTime.QuadPart = 1000 + 10007; /* 1,000,700 ns: 977.24... ns a slice */
        struct kevent ev = ev_base(KEV_TRACE_HEADER, 0, 0, 0, 0);
        ev.trace_header.header = &hdr;
        ev.trace_header.logger_name = "t";
        profile_event(p, &ev);
        int64_t span = 10007 * 100;
        static uint32_t want[PROFILE_TIMELINE_SLOTS];
        memset(want, 0, sizeof(want)); /* the header itself came before the span */
        uint64_t seed = 12345;
        for (int round = 0; round < 3; round++) {
                int64_t s = span; /* this round's span: every slice's first ns, and around it */
                for (int64_t k = 0; k < PROFILE_TIMELINE_SLOTS; k++) {
                        int64_t first = (int64_t)(((__int128)k * s + PROFILE_TIMELINE_SLOTS - 1) /
                                                  PROFILE_TIMELINE_SLOTS);
                        const int64_t times[] = {first, first - 1, first + 1,
                                                 first, first - 1, first};
                        for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
                                if (times[i] < 0)
                                        continue;
                                struct kevent e = ev_base(KEV_CSWITCH, 0, times[i], 0, 0);
                                profile_event(p, &e);
                                timeline_reference(&span, want, times[i]);
                        }
                }
                /* out of order, then past the span (it doubles) */
                for (int i = 0; i < 2000; i++) {
                        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                        int64_t ns = (int64_t)((seed >> 20) % (uint64_t)span);
                        struct kevent e = ev_base(KEV_READY_THREAD, 0, ns, 0, 0);
                        profile_event(p, &e);
                        timeline_reference(&span, want, ns);
                }
                struct kevent e = ev_base(KEV_CSWITCH, 0, span + span / 3, 0, 0);
                profile_event(p, &e);
                timeline_reference(&span, want, span + span / 3);
                assert_int_equal(profile_trace(p)->timeline_span_ns, span);
                assert_memory_equal(profile_trace(p)->timeline, want, sizeof(want));
        }
        profile_free(p);
}

/* A damaged header's span of centuries (a perf.data's corrupt time, the sweep's find): the
   span is cut to the longest the slices take (its 100 ns units times 100 overflowed 64 bits,
   which UBSan reports), and an event still falls in the first slice; the span of events at
   both ends of 64 bits. */
static void test_profile_timeline_header_of_centuries(void **state)
{
        (void)state;
        const int64_t ends[] = {INT64_MAX, 119615606102960373ll, INT64_MAX / 400 + 1};
        for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
                struct profile_options po = {.is_synchronous = true};
                struct profile *p = profile_new(&po);
                TRACE_LOGFILE_HEADER hdr;
                memset(&hdr, 0, sizeof(hdr));
                hdr.NumberOfProcessors = 1;
                hdr.StartTime.QuadPart = i == 0 ? INT64_MIN : 0;
                hdr.EndTime.QuadPart = ends[i];
                struct kevent ev = ev_base(KEV_TRACE_HEADER, 0, 0, 0, 0);
                ev.trace_header.header = &hdr;
                ev.trace_header.logger_name = "t";
                profile_event(p, &ev);
                assert_int_equal(profile_trace(p)->timeline_span_ns, INT64_MAX / 4);
                struct kevent e = ev_base(KEV_CSWITCH, 0, 1000000, 0, 0);
                profile_event(p, &e);
                assert_int_equal(profile_trace(p)->timeline[0], 1); /* the switch */
                profile_free(p);
        }
        /* events at both ends of 64 bits (damaged records' times): the span is the most it
           can be, where to - from overflowed */
        struct profile_options po = {.is_synchronous = true};
        struct profile *p = profile_new(&po);
        struct kevent e = ev_base(KEV_CSWITCH, 0, INT64_MIN + 1, 0, 0);
        profile_event(p, &e);
        e = ev_base(KEV_CSWITCH, 0, 1318165900, 0, 0);
        profile_event(p, &e);
        assert_int_equal(profile_span_ns(p), INT64_MAX);
        profile_set_window(p, true, INT64_MIN, 1000);
        assert_int_equal(profile_span_ns(p), INT64_MAX);
        profile_set_window(p, true, 0, 1000);
        assert_int_equal(profile_span_ns(p), 1000);
        profile_free(p);
}

/* The hot functions' titles: ETW's names of the KPROFILE_SOURCEs (a perf.data's instructions
   and cache-references are InstructionRetired and LLCReference, not "PMC"), a perf event's own
   name from its CollectionStart past them (raw events, other PMUs). */
static void test_profile_source_names(void **state)
{
        (void)state;
        struct profile_options po = {.is_synchronous = true};
        struct profile *p = profile_new(&po);
        char buf[32];
        assert_string_equal(profile_source_name(p, 0, buf, sizeof(buf)), "Timer");
        assert_string_equal(profile_source_name(p, 19, buf, sizeof(buf)), "TotalCycles");
        assert_string_equal(profile_source_name(p, 26, buf, sizeof(buf)), "InstructionRetired");
        assert_string_equal(profile_source_name(p, 28, buf, sizeof(buf)), "LLCReference");
        assert_string_equal(profile_source_name(p, 64, buf, sizeof(buf)), "PMC source 64");
        struct kevent ev = {.type = KEV_PROFILE_INTERVAL};
        ev.profile_interval.source = 64;
        ev.profile_interval.source_name = "raw 0x1c2";
        profile_event(p, &ev);
        ev.profile_interval.source = 65;
        ev.profile_interval.source_name = "cpu_atom/config=0x3c/";
        profile_event(p, &ev);
        ev.profile_interval.source = 26; /* ETW's name stays ETW's */
        ev.profile_interval.source_name = "instructions";
        profile_event(p, &ev);
        assert_string_equal(profile_source_name(p, 64, buf, sizeof(buf)), "raw 0x1c2");
        assert_string_equal(profile_source_name(p, 65, buf, sizeof(buf)), "cpu_atom/config=0x3c/");
        assert_string_equal(profile_source_name(p, 26, buf, sizeof(buf)), "InstructionRetired");
        profile_free(p);
}

static void test_recorded_etl(void **state)
{
        (void)state;
        const char *fixture = getenv("ETL_FIXTURE");
        if (!fixture || !*fixture) {
                fprintf(stderr, "ETL_FIXTURE (the fixture writer) is not set; run through "
                                "ctest: skipped\n");
                skip();
        }
        char dir[] = "/tmp/test_model.XXXXXX";
        assert_non_null(mkdtemp(dir));
        char path[256], cmd[1024];
        snprintf(path, sizeof(path), "%s/fixture.etl", dir);
        snprintf(cmd, sizeof(cmd), "'%s' '%s'", fixture, path);
        assert_int_equal(system(cmd), 0);

        struct sym_store *store;
        struct sym_options o = {.is_synchronous = true, .log = quiet_log};
        assert_int_equal(sym_store_new(&store, &o), 0);
        struct replay r;
        replay_file(&r, path, store, NULL);
        assert_int_equal(r.nr_events, 821); /* as dump_samples.sh counts */

        /* the LBR: three edges in /usr/bin/work (not on this machine: module+offset) */
        const struct branches_row *rows;
        uint32_t n = branches_rows(r.branches, BRANCHES_BY_EDGE, AGG_ALL, &rows);
        assert_int_equal(n, 3);
        assert_int_equal(branches_nr_events(r.branches), 1);
        char from[64], to[64];
        bool seen[3] = {false, false, false};
        for (uint32_t i = 0; i < n; i++) {
                assert_int_equal(rows[i].count, 1);
                assert_int_equal(rows[i].pid, 4242);
                assert_int_not_equal(rows[i].from.loc.module, 0);
                sym_format(store, rows[i].from.loc, from, sizeof(from));
                sym_format(store, rows[i].to.loc, to, sizeof(to));
                if (!strcmp(from, "work+0x1250") && !strcmp(to, "work+0x1200"))
                        seen[0] = true;
                if (!strcmp(from, "work+0x11f0") && !strcmp(to, "work+0x1240"))
                        seen[1] = true;
                if (!strcmp(from, "work+0x1180") && !strcmp(to, "work+0x11e0"))
                        seen[2] = true;
        }
        assert_true(seen[0] && seen[1] && seen[2]);
        n = branches_rows(r.branches, BRANCHES_BY_FUNCTION, 4242, &rows);
        assert_int_equal(n, 3);

        /* the PMC sample */
        assert_int_equal(hot_nr_samples(r.hot, 11), 1);

        /* the switches: 4243 in on cpu0 at 12 ms, 4244 in on cpu1 at 15 ms, readied by 4243 at
           13 ms; out at 425 and 426 ms, the PMC counters of their timeslices with them */
        switches_refresh(r.switches);
        const struct switches_row *t = thread_row(r.switches, 4243);
        assert_non_null(t);
        assert_int_equal(t->pid, 4242);
        assert_string_equal(t->process_name, "work.exe");
        assert_string_equal(t->thread_name, "main");
        assert_int_equal(t->nr_switches, 1);
        assert_int_equal(t->last_cpu, 0);
        assert_int_equal(t->on_cpu_ns, MS(425) - MS(12));
        assert_int_equal(t->nr_pmc, 2);
        assert_int_equal(t->pmc[0], 1000);
        assert_int_equal(t->pmc[1], 1500);
        const char *names[KEV_MAX_PMC];
        assert_int_equal(switches_pmc_names(r.switches, names), 2);
        assert_string_equal(names[0], "BranchInstructions");
        assert_string_equal(names[1], "LLCReference");
        t = thread_row(r.switches, 4244);
        assert_non_null(t);
        assert_string_equal(t->thread_name, "worker");
        assert_int_equal(t->nr_readied, 1);
        assert_int_equal(t->last_cpu, 1);
        assert_int_equal(t->on_cpu_ns, MS(426) - MS(15));
        assert_int_equal(t->pmc[0], 2500);
        assert_int_equal(t->pmc[1], 250);
        const struct switches_readier_row *rr;
        n = switches_readiers(r.switches, 4244, &rr);
        assert_int_equal(n, 1);
        assert_int_equal(rr[0].readying_tid, 4243);
        assert_int_equal(rr[0].readying_pid, 4242);
        assert_string_equal(rr[0].readying_thread_name, "main");
        assert_false(rr[0].has_where);
        const struct switches_cpu_row *c;
        n = switches_cpus(r.switches, &c);
        assert_int_equal(n, 2);
        assert_int_equal(c[0].nr_switches + c[1].nr_switches, 4); /* in and out, on each */
        const struct switches_row *p;
        n = switches_processes(r.switches, SWITCHES_BY_ON_CPU, &p);
        assert_int_equal(n, 1);
        assert_int_equal(p[0].nr_threads, 2);
        assert_int_equal(p[0].nr_switches, 2);
        replay_free(&r);

        /* a time range of the replay, [0, 14 ms): 4243's switch-in and 4244's readying, and
           on-CPU time up to 14 ms only; the LBR at 10 ms is in, too */
        struct agg_filter f;
        agg_filter_init(&f);
        agg_filter_set_time_range(&f, 0, MS(14));
        replay_file(&r, path, store, &f);
        switches_refresh(r.switches);
        t = thread_row(r.switches, 4243);
        assert_non_null(t);
        assert_int_equal(t->nr_switches, 1);
        assert_int_equal(t->on_cpu_ns, MS(2));
        t = thread_row(r.switches, 4244);
        assert_non_null(t);
        assert_int_equal(t->nr_switches, 0);
        assert_int_equal(t->on_cpu_ns, 0);
        assert_int_equal(t->nr_readied, 1);
        assert_int_equal(switches_nr_switches(r.switches), 1);
        assert_int_equal(branches_nr_edges(r.branches), 3);
        replay_free(&r);

        /* and [11 ms, 20 ms): no LBR */
        agg_filter_set_time_range(&f, MS(11), MS(20));
        replay_file(&r, path, store, &f);
        assert_int_equal(branches_nr_edges(r.branches), 0);
        assert_int_equal(switches_nr_switches(r.switches), 2);
        replay_free(&r);

        unlink(path);
        rmdir(dir);
        sym_store_free(store);
}

/* hot_top_functions: the first N rows of the full order, for every N, with ties on self. */
static void test_hot_top_rows(void **state)
{
        (void)state;
        struct sym_options o = {.is_synchronous = true};
        struct sym_store *store = NULL;
        assert_int_equal(sym_store_new(&store, &o), 0);
        struct hot *h = hot_new(store, 0);
        uint64_t seed = 7;
        for (uint32_t i = 0; i < 5000; i++) {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                struct kevent ev = ev_base(KEV_SAMPLE, i % 2, (int64_t)i * 1000, 77, 78);
                ev.sample.ip = 0x400000 + ((seed >> 33) % 300) * 16; /* 300 places, ties */
                ev.sample.tid = 78;
                hot_event(h, &ev);
        }
        const struct hot_row *all;
        uint32_t n = hot_functions(h, HOT_SOURCE_TIMER, false, &all);
        assert_int_equal(n, 300);
        struct hot_row *copy = malloc(n * sizeof(*copy));
        assert_non_null(copy);
        memcpy(copy, all, n * sizeof(*copy));
        for (uint32_t k = 1; k <= n + 5; k += (k < 20 ? 1 : 37)) {
                const struct hot_row *top;
                uint32_t m = hot_top_functions(h, HOT_SOURCE_TIMER, false, k, &top);
                assert_int_equal(m, k < n ? k : n);
                for (uint32_t i = 0; i < m; i++) {
                        assert_int_equal(top[i].rel, copy[i].rel);
                        assert_int_equal(top[i].self, copy[i].self);
                }
                /* the modules still see every row */
                const struct hot_module_row *mods;
                assert_int_equal(hot_modules(h, HOT_SOURCE_TIMER, &mods), 1);
                assert_int_equal(mods[0].self, 5000);
        }
        free(copy);
        hot_free(h);
        sym_store_free(store);
}

/* The first rows of each grouping, asked for alone (a report's top rows), are the first rows of
   its whole order. */
static void test_hot_top_rows_by(void **state)
{
        (void)state;
        struct sym_options o = {.is_synchronous = true};
        struct sym_store *store = NULL;
        assert_int_equal(sym_store_new(&store, &o), 0);
        struct hot *h = hot_new(store, 0);
        uint64_t seed = 11;
        for (uint32_t i = 0; i < 4000; i++) {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                uint32_t pid = 70 + (uint32_t)((seed >> 20) % 5);
                struct kevent ev = ev_base(KEV_SAMPLE, i % 2, (int64_t)i * 1000, pid, pid + 1);
                ev.sample.ip = 0x400000 + ((seed >> 33) % 200) * 16;
                ev.sample.tid = pid + 1 + (uint32_t)((seed >> 10) % 2);
                hot_event(h, &ev);
        }
        static const enum hot_grouping groupings[] = {HOT_BY_FUNCTION, HOT_BY_PROCESS,
                                                      HOT_BY_THREAD};
        for (uint32_t g = 0; g < 3; g++) {
                const struct hot_row *all;
                uint32_t n = hot_functions_by(h, HOT_SOURCE_TIMER, groupings[g], false, &all);
                assert_true(n > 40);
                struct hot_row *copy = malloc(n * sizeof(*copy));
                assert_non_null(copy);
                memcpy(copy, all, n * sizeof(*copy));
                const struct hot_row *top;
                uint32_t m =
                        hot_top_functions_by(h, HOT_SOURCE_TIMER, groupings[g], false, 40, &top);
                assert_int_equal(m, 40);
                for (uint32_t i = 0; i < m; i++) {
                        assert_int_equal(top[i].rel, copy[i].rel);
                        assert_int_equal(top[i].pid, copy[i].pid);
                        assert_int_equal(top[i].tid, copy[i].tid);
                        assert_int_equal(top[i].self, copy[i].self);
                }
                free(copy);
        }
        hot_free(h);
        sym_store_free(store);
}

/* The modules' rows over more modules than the hash that sums them starts with (it grows): each
   module's samples, the heaviest first. */
static void test_hot_many_modules(void **state)
{
        (void)state;
        struct sym_options o = {.is_synchronous = true, .log = quiet_log};
        struct sym_store *store = NULL;
        assert_int_equal(sym_store_new(&store, &o), 0);
        struct hot *h = hot_new(store, 0);
        const uint32_t nr = 300;
        int64_t t = 0;
        for (uint32_t i = 0; i < nr; i++) {
                char path[64];
                snprintf(path, sizeof(path), "/nonexistent/libmany%u.so", i);
                struct sym_image im = {
                        77, 0x10000000ull + (uint64_t)i * 0x100000, 0x100000, 0, path, NULL, 0, 0,
                        0};
                sym_image_load(store, &im);
                for (uint32_t k = 0; k <= i % 7; k++) {
                        struct kevent ev = ev_base(KEV_SAMPLE, 0, t += 1000, 77, 78);
                        ev.sample.ip = im.base + 16 * k;
                        ev.sample.tid = 78;
                        hot_event(h, &ev);
                }
        }
        const struct hot_module_row *mods;
        uint32_t n = hot_modules(h, HOT_SOURCE_TIMER, &mods);
        assert_int_equal(n, nr);
        uint64_t sum = 0;
        for (uint32_t i = 0; i < n; i++) {
                sum += mods[i].self;
                if (i)
                        assert_true(mods[i - 1].self > mods[i].self ||
                                    (mods[i - 1].self == mods[i].self &&
                                     mods[i - 1].module < mods[i].module));
        }
        uint64_t want = 0;
        for (uint32_t i = 0; i < nr; i++)
                want += i % 7 + 1;
        assert_int_equal(sum, want);
        assert_int_equal(mods[0].self, 7);
        hot_free(h);
        sym_store_free(store);
}

/* ---- calltree.h ---- */

/* A timer sample at frames[0] and its stack, as the decoder gives them. */
static void tree_sample(struct calltree *t, uint32_t cpu, int64_t time, uint32_t pid,
                        const uint64_t *frames, uint32_t n)
{
        struct kevent ev = ev_base(KEV_SAMPLE, cpu, time, pid, pid + 1);
        ev.sample.ip = frames[0];
        ev.sample.tid = pid + 1;
        calltree_event(t, &ev);
        struct kevent st = ev_stack(cpu, time, pid, pid + 1, frames, n);
        calltree_event(t, &st);
}

static void expect_row(const struct calltree_row *r, uint32_t function, uint64_t count,
                       uint64_t self)
{
        assert_int_equal(r->function, function);
        assert_int_equal(r->count, count);
        assert_int_equal(r->self, self);
}

static void test_calltree_trees(void **state)
{
        struct fix *fx = *state;
        struct calltree *t = calltree_new(fx->store, 0, 0);
        uint64_t a = EXE + fx->off_alpha + 4, b = EXE + fx->off_beta + 4,
                 g = EXE + fx->off_gamma + 4;
        const uint64_t stack_a[] = {a, b, g}, stack_a2[] = {a + 2, b, g}, stack_b[] = {b, g};
        int64_t time = MS(1);
        /* the same stack again and again (answered from the stack memo after the first), the
           same functions at another address, and a shorter stack */
        for (int i = 0; i < 3; i++)
                tree_sample(t, i % 2, time += MS(1), PID_A, stack_a, 3);
        tree_sample(t, 0, time += MS(1), PID_A, stack_a2, 3);
        for (int i = 0; i < 2; i++)
                tree_sample(t, 1, time += MS(1), PID_B, stack_b, 2);

        const struct calltree_row *rows;
        assert_int_equal(calltree_children(t, false, 0, &rows), 1);
        assert_int_equal(calltree_nr_samples(t), 6);
        expect_row(&rows[0], fx->fn_gamma, 6, 0);
        assert_int_equal(calltree_children(t, false, rows[0].node, &rows), 1);
        expect_row(&rows[0], fx->fn_beta, 6, 2);
        assert_int_equal(calltree_children(t, false, rows[0].node, &rows), 1);
        expect_row(&rows[0], fx->fn_alpha, 4, 4);
        assert_false(rows[0].has_children);

        assert_int_equal(calltree_children(t, true, 0, &rows), 2);
        expect_row(&rows[0], fx->fn_alpha, 4, 4);
        expect_row(&rows[1], fx->fn_beta, 2, 2);
        uint32_t beta_node = rows[1].node;
        assert_int_equal(
                calltree_find_function(t, CALLTREE_ALL, 0, rows[0].module, fx->fn_alpha, 0),
                rows[0].node);
        assert_int_equal(calltree_children(t, true, rows[0].node, &rows), 1);
        expect_row(&rows[0], fx->fn_beta, 4, 0);
        assert_int_equal(calltree_children(t, true, rows[0].node, &rows), 1);
        expect_row(&rows[0], fx->fn_gamma, 4, 0);
        assert_int_equal(calltree_children(t, true, beta_node, &rows), 1);
        expect_row(&rows[0], fx->fn_gamma, 2, 0);

        /* a process whose image is not known yet: raw addresses, twice; once its image is
           mapped, the same stack counts under the functions (the memo does not keep the old
           answer), and the raw addresses, named now, join them */
        const uint32_t pid_c = 300;
        tree_sample(t, 0, time += MS(1), pid_c, stack_a, 3);
        tree_sample(t, 0, time += MS(1), pid_c, stack_a, 3);
        fix_image(fx, pid_c, EXE);
        tree_sample(t, 0, time += MS(1), pid_c, stack_a, 3);
        tree_sample(t, 1, time += MS(1), PID_A, stack_b, 2); /* flushes CPU 0's pending */
        assert_int_equal(calltree_children(t, false, 0, &rows), 1);
        expect_row(&rows[0], fx->fn_gamma, 10, 0);

        /* a reset forgets the memo with the nodes */
        calltree_reset(t);
        tree_sample(t, 0, time += MS(1), PID_A, stack_a, 3);
        tree_sample(t, 0, time += MS(1), PID_A, stack_a, 3);
        assert_int_equal(calltree_children(t, false, 0, &rows), 1);
        expect_row(&rows[0], fx->fn_gamma, 2, 0);
        /* four roots (top-down; the callers of all samples, of each process's, each thread's),
           a path of three under the first two (the others are made only when asked for) */
        assert_int_equal(calltree_nr_nodes(t), 4 + 2 * 3);

        /* a full tree, too small to evict nodes for a stack: a path stops where the room ends
           and is not remembered */
        struct calltree *small = calltree_new(fx->store, 4 + 4, 0);
        for (int i = 0; i < 3; i++)
                tree_sample(small, 0, time += MS(1), PID_A, stack_a, 3);
        assert_int_equal(calltree_nr_nodes(small), 8);
        assert_int_equal(calltree_children(small, false, 0, &rows), 1);
        expect_row(&rows[0], fx->fn_gamma, 3, 0);
        assert_int_equal(calltree_children(small, false, rows[0].node, &rows), 1);
        expect_row(&rows[0], fx->fn_beta, 3, 0);
        assert_int_equal(calltree_children(small, false, rows[0].node, &rows), 1);
        expect_row(&rows[0], fx->fn_alpha, 3, 3);
        assert_int_equal(calltree_children(small, true, 0, &rows), 1);
        expect_row(&rows[0], fx->fn_alpha, 3, 3);
        assert_false(rows[0].has_children);
        /* each of the three cut short, said so (the header shows it) */
        assert_int_equal(calltree_nr_cut(small), 3);
        assert_int_equal(calltree_nr_cut(t), 0);
        calltree_reset(small);
        assert_int_equal(calltree_nr_cut(small), 0);
        calltree_free(small);
        calltree_free(t);
}

/* A timer sample of PID_A's thread PID_A + 1 at ip. */
static struct kevent sample_at(int64_t time, uint64_t ip)
{
        struct kevent ev = ev_base(KEV_SAMPLE, 0, time, PID_A, PID_A + 1);
        ev.sample.ip = ip;
        ev.sample.tid = PID_A + 1;
        return ev;
}

/* The sampled function given by the hot functions (hot_stack_leaf, calltree_leaf): the stack
   of that sample keys its leaf by it, without looking the address up again; given for another
   sample (its address, process or time), it is not taken. */
static void test_calltree_leaf_given(void **state)
{
        struct fix *fx = *state;
        struct calltree *t = calltree_new(fx->store, 0, 0);
        struct hot *h = hot_new(fx->store, 0);
        uint64_t a = EXE + fx->off_alpha + 4, b = EXE + fx->off_beta + 4,
                 g = EXE + fx->off_gamma + 4;
        const uint64_t stack_a[] = {a, b, g};
        int64_t time = MS(1);
        const struct calltree_row *rows;

        /* the hot functions name the sample's function after its stack */
        struct kevent ev = sample_at(time += MS(1), a);
        hot_event(h, &ev);
        struct kevent st = ev_stack(0, time, PID_A, PID_A + 1, stack_a, 3);
        uint64_t ip, rel;
        uint32_t pid, module, function;
        assert_false(hot_stack_leaf(h, &st, &ip, &pid, &module, &function, &rel)); /* not yet */
        hot_event(h, &st);
        assert_true(hot_stack_leaf(h, &st, &ip, &pid, &module, &function, &rel));
        assert_int_equal(ip, a);
        assert_int_equal(pid, PID_A);
        assert_int_equal(function, fx->fn_alpha);
        assert_int_not_equal(module, 0);
        assert_int_equal(rel, 0);
        /* a stack of no sample (a switch's) names none */
        struct kevent sw = ev_stack(0, time + 5, PID_A, PID_A + 1, stack_a, 3);
        hot_event(h, &sw);
        assert_false(hot_stack_leaf(h, &sw, &ip, &pid, &module, &function, &rel));

        /* given: taken (another function given, to show it: beta is the sampled one) */
        ev = sample_at(time += MS(1), a);
        calltree_event(t, &ev);
        calltree_leaf(t, ev.timestamp, a, PID_A, module, fx->fn_beta, 0);
        st = ev_stack(0, time, PID_A, PID_A + 1, stack_a, 3);
        calltree_event(t, &st);
        assert_int_equal(calltree_children(t, true, 0, &rows), 1);
        expect_row(&rows[0], fx->fn_beta, 1, 1);

        /* given for another address, another process, another sample: located as ever */
        const struct {
                int64_t dt;
                uint64_t ip;
                uint32_t pid;
        } other[] = {{0, a + 2, PID_A}, {0, a, PID_B}, {-1, a, PID_A}};
        for (uint32_t i = 0; i < 3; i++) {
                calltree_reset(t);
                ev = sample_at(time += MS(1), a);
                calltree_event(t, &ev);
                calltree_leaf(t, ev.timestamp + (uint64_t)other[i].dt, other[i].ip, other[i].pid,
                              module, fx->fn_beta, 0);
                st = ev_stack(0, time, PID_A, PID_A + 1, stack_a, 3);
                calltree_event(t, &st);
                assert_int_equal(calltree_children(t, true, 0, &rows), 1);
                expect_row(&rows[0], fx->fn_alpha, 1, 1);
        }
        hot_free(h);
        calltree_free(t);
}

/* The callers' frames hashed once (hot_stack_callers, calltree_leaf_callers): the tree's memo of
   a stack whose callers' hash was given is the one it finds for that stack hashed by itself (a
   hash that differed would walk the stack again); a hash given for another number of frames is
   not taken. */
static void test_calltree_callers_given(void **state)
{
        struct fix *fx = *state;
        uint64_t a = EXE + fx->off_alpha + 4;
        const uint64_t stack_a[] = {a, EXE + fx->off_beta + 4, EXE + fx->off_gamma + 4};
        struct hot *h = hot_new(fx->store, 0);
        struct calltree *t = calltree_new(fx->store, 0, 0);
        const struct calltree_row *rows;
        int64_t time = MS(1);

        /* the hot functions hash the callers as they count the stack */
        struct kevent ev = sample_at(time += MS(1), a);
        hot_event(h, &ev);
        struct kevent st = ev_stack(0, time, PID_A, PID_A + 1, stack_a, 3);
        uint64_t frames_hash, ip, rel;
        uint32_t nr, pid, module, function;
        assert_false(hot_stack_callers(h, &st, &frames_hash, &nr)); /* not yet */
        hot_event(h, &st);
        assert_true(hot_stack_leaf(h, &st, &ip, &pid, &module, &function, &rel));
        assert_true(hot_stack_callers(h, &st, &frames_hash, &nr));
        assert_int_equal(nr, 2);
        assert_true(frames_hash == hash_frames(stack_a + 1, 2));

        /* given, then the same stack again hashed by the tree: one walk */
        for (uint32_t i = 0; i < 3; i++) {
                ev = sample_at(time += MS(1), a);
                calltree_event(t, &ev);
                st = ev_stack(0, time, PID_A, PID_A + 1, stack_a, 3);
                if (i == 0) {
                        calltree_leaf(t, ev.timestamp, a, PID_A, module, function, rel);
                        calltree_leaf_callers(t, frames_hash, nr);
                } else if (i == 2) {
                        /* a hash of another stack's callers, for five frames: not taken */
                        calltree_leaf(t, ev.timestamp, a, PID_A, module, function, rel);
                        calltree_leaf_callers(t, frames_hash ^ 1, 5);
                }
                calltree_prefetch_stack(t, &st);
                calltree_event(t, &st);
        }
        assert_int_equal(calltree_nr_walks(t), 1);
        assert_int_equal(calltree_children(t, true, 0, &rows), 1);
        expect_row(&rows[0], fx->fn_alpha, 3, 3);
        hot_free(h);
        calltree_free(t);
}

/* A sampled place with no function (an address of no image; past the test program's last
   symbol): the hot functions give its module and address, and the tree keyed by them is the
   tree that located them itself, row for row. */
static void test_calltree_leaf_given_unnamed(void **state)
{
        struct fix *fx = *state;
        struct calltree *given = calltree_new(fx->store, 0, 0);
        struct calltree *own = calltree_new(fx->store, 0, 0);
        struct hot *h = hot_new(fx->store, 0);
        uint64_t b = EXE + fx->off_beta + 4, g = EXE + fx->off_gamma + 4;
        /* no image holds 0x1000; nothing follows the file's end in its image */
        const uint64_t leaves[] = {0x1000, EXE + fx->off_alpha + 4};
        int64_t time = MS(1);
        for (uint32_t i = 0; i < 2; i++) {
                for (uint32_t k = 0; k < 3; k++) {
                        const uint64_t frames[] = {leaves[i], b, g};
                        struct kevent ev = ev_base(KEV_SAMPLE, 0, time += MS(1), PID_A, PID_A + 1);
                        ev.sample.ip = leaves[i];
                        ev.sample.tid = PID_A + 1;
                        struct kevent st = ev_stack(0, time, PID_A, PID_A + 1, frames, 3);
                        hot_event(h, &ev);
                        calltree_event(given, &ev);
                        calltree_event(own, &ev);
                        hot_event(h, &st);
                        uint64_t ip, rel;
                        uint32_t pid, module, function;
                        assert_true(hot_stack_leaf(h, &st, &ip, &pid, &module, &function, &rel));
                        if (i == 0) {
                                /* no image: the address itself */
                                assert_int_equal(module, 0);
                                assert_int_equal(function, 0);
                                assert_int_equal(rel, leaves[0]);
                        } else {
                                assert_int_equal(function, fx->fn_alpha);
                                assert_int_equal(rel, 0);
                        }
                        calltree_leaf(given, st.stack.event_timestamp, ip, pid, module, function,
                                      rel);
                        calltree_event(given, &st);
                        calltree_event(own, &st);
                }
        }
        /* the same roots, row for row: keys, counts */
        const struct calltree_row *rows_given, *rows_own;
        for (int is_callers = 0; is_callers < 2; is_callers++) {
                uint32_t n = calltree_children(given, is_callers, 0, &rows_given);
                struct calltree_row copy[8];
                assert_in_range(n, 1, 8);
                memcpy(copy, rows_given, n * sizeof(*copy));
                assert_int_equal(calltree_children(own, is_callers, 0, &rows_own), n);
                for (uint32_t r = 0; r < n; r++) {
                        bool is_found = false;
                        for (uint32_t q = 0; q < n && !is_found; q++)
                                is_found = copy[r].module == rows_own[q].module &&
                                           copy[r].function == rows_own[q].function &&
                                           copy[r].rel == rows_own[q].rel &&
                                           copy[r].count == rows_own[q].count &&
                                           copy[r].self == rows_own[q].self;
                        assert_true(is_found);
                }
        }
        /* the callers' tree's roots are the leaves: the unnamed one by its address */
        uint32_t n = calltree_children(given, true, 0, &rows_given);
        assert_int_equal(n, 2);
        bool has_unnamed = false;
        for (uint32_t r = 0; r < n; r++)
                has_unnamed |= rows_given[r].function == 0 && rows_given[r].rel == leaves[0] &&
                               rows_given[r].count == 3;
        assert_true(has_unnamed);
        hot_free(h);
        calltree_free(given);
        calltree_free(own);
}

static uint32_t tree_check(struct calltree *t, bool is_callers, uint32_t node, uint64_t count);

/* Stacks counted before their image was described (a live session's rundown, a trace's late
   image or CLR events) are named once it is, and join the nodes of later stacks. */
static void test_calltree_named_late(void **state)
{
        struct fix *fx = *state;
        const uint32_t pid = 400;
        struct calltree *t = calltree_new(fx->store, 0, 0);
        uint64_t a = EXE + fx->off_alpha + 4, b = EXE + fx->off_beta + 4,
                 g = EXE + fx->off_gamma + 4;
        const uint64_t stack[] = {a, b, g}, other[] = {a + 1, b, g};
        int64_t time = MS(1);
        const struct calltree_row *rows;
        for (int i = 0; i < 3; i++)
                tree_sample(t, 0, time += MS(1), pid, stack, 3);
        tree_sample(t, 0, time += MS(1), pid, other, 3);
        /* no image yet: the outermost address, unnamed */
        assert_int_equal(calltree_children(t, false, 0, &rows), 1);
        assert_int_equal(rows[0].module, 0);
        assert_int_equal(rows[0].rel, g);
        assert_int_equal(rows[0].count, 4);
        /* the image, and its event (what tells the tree that the process's addresses moved) */
        fix_image(fx, pid, EXE);
        struct kevent im = ev_base(KEV_IMAGE, 1, time += MS(1), pid, 0);
        im.image.pid = pid;
        im.image.base = EXE;
        im.image.size = 1u << 24;
        im.image.phase = KEV_PHASE_START;
        calltree_event(t, &im);
        for (int i = 0; i < 2; i++)
                tree_sample(t, 1, time += MS(1), pid, stack, 3);
        /* top-down: gamma > beta > alpha, every stack in one path */
        assert_int_equal(calltree_children(t, false, 0, &rows), 1);
        expect_row(&rows[0], fx->fn_gamma, 6, 0);
        assert_int_equal(calltree_children(t, false, rows[0].node, &rows), 1);
        expect_row(&rows[0], fx->fn_beta, 6, 0);
        assert_int_equal(calltree_children(t, false, rows[0].node, &rows), 1);
        expect_row(&rows[0], fx->fn_alpha, 6, 6);
        assert_false(rows[0].has_children);
        /* the merged nodes are gone: a path of three in each of the two trees counted */
        assert_int_equal(calltree_nr_nodes(t), 4 + 2 * 3);
        assert_int_equal(tree_check(t, false, 0, 6), 3);
        assert_int_equal(tree_check(t, true, 0, 6), 3);
        /* callers: alpha's callers, merged the same way */
        assert_int_equal(calltree_children(t, true, 0, &rows), 1);
        expect_row(&rows[0], fx->fn_alpha, 6, 6);
        uint32_t alpha = rows[0].node;
        assert_int_equal(
                calltree_find_function(t, CALLTREE_ALL, 0, rows[0].module, fx->fn_alpha, 0), alpha);
        assert_int_equal(calltree_children(t, true, alpha, &rows), 1);
        expect_row(&rows[0], fx->fn_beta, 6, 0);
        /* later stacks count along the merged paths */
        tree_sample(t, 0, time += MS(1), pid, stack, 3);
        assert_int_equal(calltree_children(t, true, 0, &rows), 1);
        expect_row(&rows[0], fx->fn_alpha, 7, 7);
        assert_int_equal(calltree_nr_samples(t), 7);
        calltree_free(t);
}

/* An image event for the process (and its image in the store). */
static void tree_image(struct fix *fx, struct calltree *t, int64_t time, uint32_t pid)
{
        fix_image(fx, pid, EXE);
        struct kevent im = ev_base(KEV_IMAGE, 1, time, pid, 0);
        im.image.pid = pid;
        im.image.base = EXE;
        im.image.size = 1u << 24;
        im.image.phase = KEV_PHASE_START;
        calltree_event(t, &im);
}

/* The callers tree's node of a sampled function (a child of its root), 0 when none. */
static uint32_t callers_node_of(struct calltree *t, uint32_t function)
{
        const struct calltree_row *rows;
        uint32_t n = calltree_children(t, true, 0, &rows);
        for (uint32_t i = 0; i < n; i++)
                if (rows[i].function == function)
                        return rows[i].node;
        return 0;
}

/* A replay's frames of no image wait for their image however many they are: a window saved
   without the session's start has its images only in the rundown at its end, and a leaf that
   fell out of the newest CALLTREE_UNNAMED_MAX stayed unnamed for good, so its function's row
   found no callers (screen_tmux_keys under load). Live, only the newest are looked up. */
static void test_calltree_named_late_many(void **state)
{
        struct fix *fx = *state;
        const uint32_t pid = 420, other = 421;
        struct calltree *t = calltree_new(fx->store, 0, 0);
        const uint64_t stack[] = {EXE + fx->off_alpha + 4, EXE + fx->off_beta + 4};
        int64_t time = MS(1);
        tree_sample(t, 0, time += MS(1), pid, stack, 2);
        /* more addresses of no image (far from EXE) than live keeps looking up, each a node */
        for (uint64_t i = 0; i < CALLTREE_UNNAMED_MAX + 100; i++) {
                const uint64_t lone[] = {0x7f0000000000ull + 64 * i};
                tree_sample(t, 0, time += 1000, pid, lone, 1);
        }
        /* a look for names while they are all unplaced (another process's image changed the
           store), then the process's own image */
        const struct calltree_row *rows;
        tree_image(fx, t, time += MS(1), other);
        calltree_children(t, true, 0, &rows);
        tree_image(fx, t, time += MS(1), pid);
        uint32_t alpha = callers_node_of(t, fx->fn_alpha);
        assert_int_not_equal(alpha, 0);
        assert_int_equal(calltree_children(t, true, alpha, &rows), 1);
        assert_int_equal(rows[0].function, fx->fn_beta);
        calltree_free(t);
}

/* A node no image held at the last look for names is not located again at the next while its
   process's addresses stay (other processes' images change the store, not them: a process
   storm's looks located every such node at every refresh); its own process's image places and
   names it at the next look. */
static void test_calltree_unplaced_stands(void **state)
{
        struct fix *fx = *state;
        const uint32_t pid = 410, other = 411;
        struct calltree *t = calltree_new(fx->store, 0, 0);
        uint64_t a = EXE + fx->off_alpha + 4, b = EXE + fx->off_beta + 4,
                 g = EXE + fx->off_gamma + 4;
        const uint64_t stack[] = {a, b, g};
        int64_t time = MS(1);
        const struct calltree_row *rows;
        for (int i = 0; i < 3; i++)
                tree_sample(t, 0, time += MS(1), pid, stack, 3);
        assert_int_equal(calltree_children(t, false, 0, &rows), 1);
        assert_int_equal(rows[0].module, 0);
        uint64_t first = calltree_nr_unplaced_located(t);
        assert_int_equal(first, 2 * 3); /* a path of three in each of the two trees */
        /* another process's image: the store changed, this process's addresses did not */
        tree_image(fx, t, time += MS(1), other);
        tree_sample(t, 0, time += MS(1), pid, stack, 3);
        assert_int_equal(calltree_children(t, false, 0, &rows), 1);
        assert_int_equal(rows[0].module, 0);
        assert_int_equal(rows[0].count, 4);
        assert_int_equal(calltree_nr_unplaced_located(t), first);
        /* its own image: located again, named, merged into one path */
        tree_image(fx, t, time += MS(1), pid);
        assert_int_equal(calltree_children(t, false, 0, &rows), 1);
        assert_int_equal(calltree_nr_unplaced_located(t), 2 * first);
        expect_row(&rows[0], fx->fn_gamma, 4, 0);
        assert_int_equal(calltree_nr_nodes(t), 4 + 2 * 3);
        calltree_free(t);
}

/* Live, a process's JIT map (perf-PID.map) places its addresses without an event: at each look
   for names the first of its nodes of no image is located again (sym_locate looks for the map
   once a refresh), the others stand on it while it finds none; once the map is written, they
   are all placed at the next look. */
static void test_calltree_unplaced_jit(void **state)
{
        struct fix *fx = *state;
        uint32_t pid = (uint32_t)getpid();
        char path[64];
        snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
        unlink(path);
        struct sym_options o = {.is_live = true, .is_synchronous = true, .log = quiet_log};
        struct sym_store *live = NULL;
        assert_int_equal(sym_store_new(&live, &o), 0);
        struct calltree *t = calltree_new(live, 0, 0);
        const uint64_t stack[] = {0x10000010, 0x10000020, 0x10000030};
        int64_t time = MS(1);
        const struct calltree_row *rows;
        tree_sample(t, 0, time += MS(1), pid, stack, 3);
        for (uint32_t look = 0; look < 3; look++) {
                /* the screen's refresh, and another process's image (the store changed) */
                sym_store_poll(live);
                struct sym_image im = {500 + look, EXE, 1u << 24, 0, fx->exe_path, NULL, 0, 0, 0};
                sym_image_load(live, &im);
                assert_int_equal(calltree_children(t, false, 0, &rows), 1);
                assert_int_equal(rows[0].module, 0);
                /* the first look locates every node, the later ones one */
                assert_int_equal(calltree_nr_unplaced_located(t), 2 * 3 + look);
        }
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, "10000000 100 jit_compiled_loop\n");
        fclose(f);
        sym_store_poll(live);
        struct sym_image im = {600, EXE, 1u << 24, 0, fx->exe_path, NULL, 0, 0, 0};
        sym_image_load(live, &im);
        uint32_t n = calltree_children(t, false, 0, &rows);
        unlink(path);
        assert_int_equal(n, 1);
        assert_int_not_equal(rows[0].module, 0);
        assert_int_equal(rows[0].function, sym_intern(live, "jit_compiled_loop"));
        assert_int_equal(calltree_nr_unplaced_located(t), 2 * 3 + 2 + 2 * 3);
        calltree_free(t);
        sym_store_free(live);
}

/* Every node under node (count: its own) counts at most its parent's samples, its children
   together too, and its self at most its count; returns the nodes seen. */
static uint32_t tree_check(struct calltree *t, bool is_callers, uint32_t node, uint64_t count)
{
        const struct calltree_row *rows;
        uint32_t n = calltree_children(t, is_callers, node, &rows);
        struct calltree_row *copy = malloc((n ? n : 1) * sizeof(*copy));
        assert_non_null(copy);
        memcpy(copy, rows, n * sizeof(*copy));
        uint64_t sum = 0;
        uint32_t seen = n;
        for (uint32_t i = 0; i < n; i++) {
                assert_true(copy[i].count <= count);
                assert_true(copy[i].self <= copy[i].count);
                sum += copy[i].count;
                assert_int_equal(copy[i].has_children, calltree_has_children(t, copy[i].node));
                seen += tree_check(t, is_callers, copy[i].node, copy[i].count);
        }
        assert_true(sum <= count);
        free(copy);
        return seen;
}

/* A sample of pid's thread tid with its stack, on cpu. */
static void tree_sample_tid(struct calltree *t, uint32_t cpu, int64_t time, uint32_t pid,
                            uint32_t tid, const uint64_t *frames, uint32_t n)
{
        struct kevent ev = ev_base(KEV_SAMPLE, cpu, time, pid, tid);
        ev.sample.ip = frames[0];
        ev.sample.tid = tid;
        calltree_event(t, &ev);
        struct kevent st = ev_stack(cpu, time, pid, tid, frames, n);
        calltree_event(t, &st);
}

/* The callers of a function in one process's or one thread's samples count only those (the
   rows by process and by thread); every process's count them all. */
static void test_calltree_owners(void **state)
{
        struct fix *fx = *state;
        struct calltree *t = calltree_new(fx->store, 0, 0);
        calltree_want(t, CALLTREE_THREAD); /* the rows by thread ask */
        uint64_t a = EXE + fx->off_alpha + 4, b = EXE + fx->off_beta + 4,
                 g = EXE + fx->off_gamma + 4;
        const uint64_t from_beta[] = {a, b, g}, from_gamma[] = {a, g};
        int64_t time = MS(1);
        for (int i = 0; i < 5; i++) /* PID_A's thread 101: alpha from beta */
                tree_sample_tid(t, 0, time += MS(1), PID_A, 101, from_beta, 3);
        for (int i = 0; i < 2; i++) /* PID_A's thread 102: alpha from beta */
                tree_sample_tid(t, 1, time += MS(1), PID_A, 102, from_beta, 3);
        for (int i = 0; i < 3; i++) /* PID_B: alpha from gamma */
                tree_sample_tid(t, 0, time += MS(1), PID_B, 201, from_gamma, 2);
        const struct calltree_row *rows;
        assert_int_equal(calltree_children(t, true, 0, &rows), 1);
        uint32_t module = rows[0].module;
        uint32_t all = calltree_find_function(t, CALLTREE_ALL, 0, module, fx->fn_alpha, 0);
        assert_int_equal(calltree_children(t, true, all, &rows), 2);
        expect_row(&rows[0], fx->fn_beta, 7, 0);
        expect_row(&rows[1], fx->fn_gamma, 3, 0);

        uint32_t in_a = calltree_find_function(t, CALLTREE_PROCESS, PID_A, module, fx->fn_alpha, 0);
        assert_int_not_equal(in_a, 0);
        assert_int_not_equal(in_a, all);
        assert_int_equal(calltree_children(t, true, in_a, &rows), 1);
        expect_row(&rows[0], fx->fn_beta, 7, 0);
        assert_int_equal(calltree_children(t, true, rows[0].node, &rows), 1);
        expect_row(&rows[0], fx->fn_gamma, 7, 0);
        uint32_t in_b = calltree_find_function(t, CALLTREE_PROCESS, PID_B, module, fx->fn_alpha, 0);
        assert_int_equal(calltree_children(t, true, in_b, &rows), 1);
        expect_row(&rows[0], fx->fn_gamma, 3, 0);

        uint32_t in_102 = calltree_find_function(t, CALLTREE_THREAD, 102, module, fx->fn_alpha, 0);
        assert_int_equal(calltree_children(t, true, in_102, &rows), 1);
        expect_row(&rows[0], fx->fn_beta, 2, 0);
        uint32_t in_101 = calltree_find_function(t, CALLTREE_THREAD, 101, module, fx->fn_alpha, 0);
        assert_int_equal(calltree_children(t, true, in_101, &rows), 1);
        expect_row(&rows[0], fx->fn_beta, 5, 0);
        /* a process or thread with no samples of it: no node */
        assert_int_equal(calltree_find_function(t, CALLTREE_PROCESS, 999, module, fx->fn_alpha, 0),
                         0);
        assert_int_equal(calltree_find_function(t, CALLTREE_THREAD, PID_A, module, fx->fn_alpha, 0),
                         0);
        calltree_free(t);
}

/* The top-down tree is made only while asked for (calltree_want_top_down: the view of it): a
   stack not seen before walks and makes nodes in the callers tree alone, and every memo's
   samples count along the trees counted; asked for again, it counts from then on. */
static void test_calltree_top_down_asked(void **state)
{
        struct fix *fx = *state;
        struct calltree *t = calltree_new(fx->store, 0, 0);
        uint64_t a = EXE + fx->off_alpha + 4, b = EXE + fx->off_beta + 4,
                 g = EXE + fx->off_gamma + 4;
        const uint64_t from_beta[] = {a, b, g};
        int64_t time = MS(1);
        assert_true(calltree_top_down_counts_all(t, NULL));
        calltree_want_top_down(t, false);
        assert_false(calltree_top_down_counts_all(t, NULL));
        for (int i = 0; i < 3; i++)
                tree_sample_tid(t, 0, time += MS(1), PID_A, 101, from_beta, 3);
        const struct calltree_row *rows;
        /* the roots and the callers' 3 nodes: no top-down */
        assert_int_equal(calltree_children(t, false, 0, &rows), 0);
        assert_int_equal(calltree_nr_nodes(t), 4 + 3);
        assert_int_equal(calltree_children(t, true, 0, &rows), 1);
        expect_row(&rows[0], fx->fn_alpha, 3, 3);
        assert_int_equal(calltree_nr_samples(t), 3);
        /* asked for now: from now on, and since when */
        calltree_want_top_down(t, true);
        int64_t since = 0;
        assert_false(calltree_top_down_counts_all(t, &since));
        assert_int_equal(since, time);
        for (int i = 0; i < 2; i++) /* the memo's samples count in both trees */
                tree_sample_tid(t, 0, time += MS(1), PID_A, 101, from_beta, 3);
        assert_int_equal(calltree_children(t, false, 0, &rows), 1);
        expect_row(&rows[0], fx->fn_gamma, 2, 0);
        assert_int_equal(calltree_nr_samples_top_down(t), 2);
        assert_int_equal(calltree_children(t, true, 0, &rows), 1);
        expect_row(&rows[0], fx->fn_alpha, 5, 5);
        assert_int_equal(calltree_nr_nodes(t), 4 + 2 * 3);
        /* not asked for: it goes, the callers stay */
        calltree_want_top_down(t, false);
        tree_sample_tid(t, 0, time += MS(1), PID_A, 101, from_beta, 3);
        assert_int_equal(calltree_children(t, false, 0, &rows), 0);
        assert_int_equal(calltree_nr_nodes(t), 4 + 3);
        assert_int_equal(calltree_children(t, true, 0, &rows), 1);
        expect_row(&rows[0], fx->fn_alpha, 6, 6);
        /* a tree starting over counts every sample in it */
        calltree_want_top_down(t, true);
        calltree_reset(t);
        assert_true(calltree_top_down_counts_all(t, NULL));
        calltree_free(t);
        /* a recording's: always counted, whatever is asked */
        t = calltree_new(fx->store, 0, 0);
        calltree_keep_top_down(t);
        calltree_want_top_down(t, false);
        tree_sample_tid(t, 0, time += MS(1), PID_A, 101, from_beta, 3);
        assert_true(calltree_top_down_counts_all(t, NULL));
        assert_int_equal(calltree_children(t, false, 0, &rows), 1);
        assert_int_equal(calltree_nr_nodes(t), 4 + 2 * 3);
        calltree_free(t);
}

/* The callers by process and by thread are made only while asked for (a view's rows by process
   or thread): a sample counts along the top-down and every process's trees alone. Asked for
   after samples came, they count from then on and say since when; a tree starting over counts
   every sample again; no longer asked for, their nodes go. */
static void test_calltree_owners_asked(void **state)
{
        struct fix *fx = *state;
        struct calltree *t = calltree_new(fx->store, 0, 0);
        uint64_t a = EXE + fx->off_alpha + 4, b = EXE + fx->off_beta + 4,
                 g = EXE + fx->off_gamma + 4;
        const uint64_t from_beta[] = {a, b, g};
        int64_t time = MS(1);
        for (int i = 0; i < 3; i++)
                tree_sample_tid(t, 0, time += MS(1), PID_A, 101, from_beta, 3);
        const struct calltree_row *rows;
        assert_int_equal(calltree_children(t, true, 0, &rows), 1);
        uint32_t module = rows[0].module;
        /* the roots, then 3 nodes in the top-down and every process's trees: none by owner */
        assert_int_equal(calltree_nr_nodes(t), 4 + 2 * 3);
        assert_int_equal(
                calltree_find_function(t, CALLTREE_PROCESS, PID_A, module, fx->fn_alpha, 0), 0);
        assert_int_equal(calltree_find_function(t, CALLTREE_THREAD, 101, module, fx->fn_alpha, 0),
                         0);
        assert_true(calltree_counts_all(t, CALLTREE_ALL, NULL));
        assert_false(calltree_counts_all(t, CALLTREE_PROCESS, NULL));
        /* asked for now: the samples from now on, and since when */
        calltree_want(t, CALLTREE_PROCESS);
        int64_t since = 0;
        assert_false(calltree_counts_all(t, CALLTREE_PROCESS, &since));
        assert_int_equal(since, time);
        assert_false(calltree_counts_all(t, CALLTREE_THREAD, NULL));
        for (int i = 0; i < 2; i++)
                tree_sample_tid(t, 0, time += MS(1), PID_A, 101, from_beta, 3);
        uint32_t in_a = calltree_find_function(t, CALLTREE_PROCESS, PID_A, module, fx->fn_alpha, 0);
        assert_int_not_equal(in_a, 0);
        assert_int_equal(calltree_children(t, true, in_a, &rows), 1);
        expect_row(&rows[0], fx->fn_beta, 2, 0);
        uint32_t all = calltree_find_function(t, CALLTREE_ALL, 0, module, fx->fn_alpha, 0);
        assert_int_equal(calltree_children(t, true, all, &rows), 1);
        expect_row(&rows[0], fx->fn_beta, 5, 0);
        assert_int_equal(calltree_nr_nodes(t), 4 + 3 * 3);
        /* a tree starting over (z, a zoom, a replay read again) counts every sample */
        calltree_reset(t);
        assert_true(calltree_counts_all(t, CALLTREE_PROCESS, NULL));
        tree_sample_tid(t, 0, time += MS(1), PID_A, 101, from_beta, 3);
        /* by thread: the process's and the thread's, from now on */
        calltree_want(t, CALLTREE_THREAD);
        assert_false(calltree_counts_all(t, CALLTREE_THREAD, NULL));
        assert_false(calltree_counts_all(t, CALLTREE_PROCESS, NULL));
        for (int i = 0; i < 4; i++) {
                tree_sample_tid(t, 0, time += MS(1), PID_A, 101, from_beta, 3);
                tree_sample_tid(t, 1, time += MS(1), PID_A, 102, from_beta, 3);
        }
        uint32_t in_101 = calltree_find_function(t, CALLTREE_THREAD, 101, module, fx->fn_alpha, 0);
        assert_int_equal(calltree_children(t, true, in_101, &rows), 1);
        expect_row(&rows[0], fx->fn_beta, 4, 0);
        in_a = calltree_find_function(t, CALLTREE_PROCESS, PID_A, module, fx->fn_alpha, 0);
        assert_int_equal(calltree_children(t, true, in_a, &rows), 1);
        expect_row(&rows[0], fx->fn_beta, 8, 0);
        /* back to by process: the process's tree goes on, the threads' go */
        calltree_want(t, CALLTREE_PROCESS);
        assert_int_equal(calltree_find_function(t, CALLTREE_THREAD, 101, module, fx->fn_alpha, 0),
                         0);
        tree_sample_tid(t, 0, time += MS(1), PID_A, 101, from_beta, 3);
        in_a = calltree_find_function(t, CALLTREE_PROCESS, PID_A, module, fx->fn_alpha, 0);
        assert_int_equal(calltree_children(t, true, in_a, &rows), 1);
        expect_row(&rows[0], fx->fn_beta, 9, 0);
        /* asked for by nobody: their nodes go, the others count on */
        calltree_want(t, CALLTREE_ALL);
        assert_int_equal(calltree_nr_nodes(t), 4 + 2 * 3);
        assert_int_equal(
                calltree_find_function(t, CALLTREE_PROCESS, PID_A, module, fx->fn_alpha, 0), 0);
        assert_int_equal(calltree_children(t, true, 0, &rows), 1);
        expect_row(&rows[0], fx->fn_alpha, 10, 10);
        tree_check(t, true, 0, calltree_nr_samples(t));
        tree_check(t, false, 0, calltree_nr_samples(t));
        calltree_free(t);
}

/* A process's main thread, its only one sampled, has its process's callers tree and no nodes of
   its own; a second thread sampled gives it its own, with the samples it had: the counts by
   thread are the same either way. */
/* A stack looked up ahead (calltree_prefetch_stack, as the hot functions' hook does) keys the
   same memo as the stack taken without: one walk for both ways, in either order, with or
   without its sampled address first (the same frames), and for a sample on another CPU than
   its stack's; a lookahead for another stack is not taken. */
static void test_calltree_prefetch_stack(void **state)
{
        struct fix *fx = *state;
        struct calltree *t = calltree_new(fx->store, 0, 0);
        uint64_t a = EXE + fx->off_alpha + 4, b = EXE + fx->off_beta + 4,
                 g = EXE + fx->off_gamma + 4;
        const uint64_t with_ip[] = {a, b, g}, without_ip[] = {b, g};
        const uint64_t *stacks[] = {with_ip, without_ip};
        const uint32_t nrs[] = {3, 2};
        int64_t time = MS(1);
        uint32_t module = sym_locate(fx->store, PID_A, a).module;
        for (uint32_t s = 0; s < 2; s++) {
                for (uint32_t i = 0; i < 6; i++) {
                        struct kevent ev =
                                ev_base(KEV_SAMPLE, i % 2, time += MS(1), PID_A, PID_A + 1);
                        ev.sample.ip = a;
                        ev.sample.tid = PID_A + 1;
                        calltree_event(t, &ev);
                        struct kevent st =
                                ev_stack(i / 3, time, PID_A, PID_A + 1, stacks[s], nrs[s]);
                        if (i % 3 != 2)
                                calltree_leaf(t, time, a, PID_A, module, fx->fn_alpha, 0);
                        if (i % 3 == 0) {
                                calltree_prefetch_stack(t, &st);
                        } else if (i % 3 == 2) {
                                /* another stack's lookahead, then this one's taken without */
                                struct kevent other = st;
                                other.stack.event_timestamp = time + 1;
                                calltree_prefetch_stack(t, &other);
                        }
                        calltree_event(t, &st);
                }
        }
        assert_int_equal(calltree_nr_walks(t), 1);
        const struct calltree_row *rows;
        assert_int_equal(calltree_children(t, true, 0, &rows), 1);
        expect_row(&rows[0], fx->fn_alpha, 12, 12);
        tree_check(t, true, 0, calltree_nr_samples(t));
        calltree_free(t);
}

/* Stacks whose hashes meet keep their memos: a hash has two slots. 4,096 stacks (their callers
   apart) seen twice in turn: the second round walks again only for those whose pair of slots
   three or more of them share, about 9% (a Poisson of 0.5: 8,192 pairs); a slot a hash, as the
   memo had, lost about 22% (one of 0.25), over the bound. */
static void test_calltree_memo_ways(void **state)
{
        struct fix *fx = *state;
        struct calltree *t = calltree_new(fx->store, 0, 0);
        uint64_t a = EXE + fx->off_alpha + 4, b = EXE + fx->off_beta + 4;
        enum { N = 4096 };
        int64_t time = MS(1);
        for (int round = 0; round < 2; round++)
                for (uint64_t i = 0; i < N; i++) {
                        const uint64_t stack[] = {a, b, 0x10000 + 16 * i};
                        tree_sample(t, 0, time += MS(1), PID_A, stack, 3);
                }
        assert_int_equal(calltree_nr_samples(t), 2 * N);
        uint64_t again = calltree_nr_walks(t) - N;
        assert_true(again < N / 7);
        /* each sample counted along its path all the same */
        const struct calltree_row *rows;
        assert_int_equal(calltree_children(t, true, 0, &rows), 1);
        expect_row(&rows[0], fx->fn_alpha, 2 * N, 2 * N);
        assert_int_equal(calltree_children(t, true, rows[0].node, &rows), 1);
        expect_row(&rows[0], fx->fn_beta, 2 * N, 0);
        tree_check(t, true, 0, calltree_nr_samples(t));
        calltree_free(t);
}

/* A stack seen again is counted from its memo, whatever other processes do meanwhile (a busy
   machine starts processes and maps images all the time: each moved the symbol store's
   generation, and every memo missed); an image of its own process makes it walk again. */
static void test_calltree_memo_other_process(void **state)
{
        struct fix *fx = *state;
        struct calltree *t = calltree_new(fx->store, 0, 0);
        uint64_t a = EXE + fx->off_alpha + 4, b = EXE + fx->off_beta + 4,
                 g = EXE + fx->off_gamma + 4;
        const uint64_t stack[] = {a, b, g};
        int64_t time = MS(1);
        tree_sample(t, 0, time += MS(1), PID_A, stack, 3);
        assert_int_equal(calltree_nr_walks(t), 1);
        tree_sample(t, 0, time += MS(1), PID_A, stack, 3);
        assert_int_equal(calltree_nr_walks(t), 1);
        /* another process starts and maps an image: the store changed, not for PID_A */
        const uint32_t other = PID_B + 10;
        struct kevent start = ev_base(KEV_PROCESS, 1, time += MS(1), other, 0);
        start.process.pid = other;
        start.process.phase = KEV_PHASE_START;
        sym_process_start_at(fx->store, other, start.timestamp);
        calltree_event(t, &start);
        struct kevent im = ev_base(KEV_IMAGE, 1, time += MS(1), other, 0);
        im.image.pid = other;
        im.image.base = EXE;
        im.image.size = 1u << 24;
        im.image.phase = KEV_PHASE_START;
        fix_image(fx, other, EXE);
        calltree_event(t, &im);
        for (int i = 0; i < 3; i++)
                tree_sample(t, 0, time += MS(1), PID_A, stack, 3);
        assert_int_equal(calltree_nr_walks(t), 1);
        /* an image of PID_A's own: its addresses may mean something else now */
        im.pid = im.image.pid = PID_A;
        im.image.base = EXE + (2u << 24);
        calltree_event(t, &im);
        tree_sample(t, 0, time += MS(1), PID_A, stack, 3);
        assert_int_equal(calltree_nr_walks(t), 2);
        /* every sample counted along its path */
        const struct calltree_row *rows;
        assert_int_equal(calltree_children(t, true, 0, &rows), 1);
        expect_row(&rows[0], fx->fn_alpha, 6, 6);
        assert_int_equal(calltree_children(t, true, rows[0].node, &rows), 1);
        expect_row(&rows[0], fx->fn_beta, 6, 0);
        calltree_free(t);
}

/* Stacks that miss the stack memo (each new: another first caller) over frames seen before:
   their keys come from the key memo, not located and named again, and count as the located
   ones did; an image of their process makes them located again (its addresses may have
   moved). */
static void test_calltree_key_memo(void **state)
{
        struct fix *fx = *state;
        struct calltree *t = calltree_new(fx->store, 0, 0);
        uint64_t a = EXE + fx->off_alpha + 4, b = EXE + fx->off_beta + 4,
                 g = EXE + fx->off_gamma + 4;
        int64_t time = MS(1);
        /* the sampled a, callers b, g and one address of its own per stack */
        for (uint32_t i = 0; i < 4; i++) {
                const uint64_t stack[] = {a, b, g, g + 1 + i};
                tree_sample(t, 0, time += MS(1), PID_A, stack, 4);
        }
        assert_int_equal(calltree_nr_walks(t), 4);
        assert_int_equal(calltree_nr_frames_located(t), 4 + 3 * 1);
        struct kevent im = ev_base(KEV_IMAGE, 1, time += MS(1), PID_A, 0);
        im.image.pid = PID_A;
        im.image.base = EXE + (2u << 24);
        im.image.size = 1u << 24;
        im.image.phase = KEV_PHASE_START;
        calltree_event(t, &im);
        const uint64_t stack[] = {a, b, g, g - 1};
        tree_sample(t, 0, time += MS(1), PID_A, stack, 4);
        assert_int_equal(calltree_nr_frames_located(t), 7 + 4);
        const struct calltree_row *rows;
        assert_int_equal(calltree_children(t, true, 0, &rows), 1);
        expect_row(&rows[0], fx->fn_alpha, 5, 5);
        assert_int_equal(calltree_children(t, true, rows[0].node, &rows), 1);
        expect_row(&rows[0], fx->fn_beta, 5, 0);
        assert_int_equal(calltree_children(t, true, rows[0].node, &rows), 1);
        expect_row(&rows[0], fx->fn_gamma, 5, 0);
        calltree_free(t);
}

/* A recording's frames of no image: kept in the key memo too, their keys move with events
   only (a live session's are not: a JIT map may place them at the next look). */
static void test_calltree_key_memo_unplaced(void **state)
{
        struct fix *fx = *state;
        struct calltree *t = calltree_new(fx->store, 0, 0);
        uint64_t a = EXE + fx->off_alpha + 4;
        const uint64_t nowhere = 0x7f0000001000ull; /* no image of PID_A there */
        int64_t time = MS(1);
        for (uint32_t i = 0; i < 4; i++) {
                const uint64_t stack[] = {a, 0, nowhere, nowhere + 0x10 + i};
                tree_sample(t, 0, time += MS(1), PID_A, stack, 4);
        }
        assert_int_equal(calltree_nr_walks(t), 4);
        assert_int_equal(calltree_nr_frames_located(t), 4 + 3 * 1);
        calltree_free(t);
}

static void test_calltree_main_thread(void **state)
{
        struct fix *fx = *state;
        struct calltree *t = calltree_new(fx->store, 0, 0);
        calltree_want(t, CALLTREE_THREAD); /* the rows by thread ask */
        uint64_t a = EXE + fx->off_alpha + 4, b = EXE + fx->off_beta + 4,
                 g = EXE + fx->off_gamma + 4;
        const uint64_t from_beta[] = {a, b, g}, from_gamma[] = {a, g};
        int64_t time = MS(1);
        for (int i = 0; i < 4; i++) /* PID_B's main thread: alpha from beta */
                tree_sample_tid(t, 0, time += MS(1), PID_B, PID_B, from_beta, 3);
        const struct calltree_row *rows;
        assert_int_equal(calltree_children(t, true, 0, &rows), 1);
        uint32_t module = rows[0].module;
        /* the roots, then 3 nodes in the top-down, every process's and PID_B's trees */
        assert_int_equal(calltree_nr_nodes(t), 4 + 3 * 3);
        uint32_t main = calltree_find_function(t, CALLTREE_THREAD, PID_B, module, fx->fn_alpha, 0);
        assert_int_not_equal(main, 0);
        assert_int_equal(calltree_children(t, true, main, &rows), 1);
        expect_row(&rows[0], fx->fn_beta, 4, 0);
        assert_int_equal(
                calltree_find_function(t, CALLTREE_THREAD, PID_B + 1, module, fx->fn_alpha, 0), 0);
        /* a second thread: the main thread's own tree, copied */
        for (int i = 0; i < 2; i++)
                tree_sample_tid(t, 1, time += MS(1), PID_B, PID_B + 1, from_gamma, 2);
        tree_sample_tid(t, 0, time += MS(1), PID_B, PID_B, from_beta, 3);
        main = calltree_find_function(t, CALLTREE_THREAD, PID_B, module, fx->fn_alpha, 0);
        assert_int_equal(calltree_children(t, true, main, &rows), 1);
        expect_row(&rows[0], fx->fn_beta, 5, 0);
        assert_int_equal(calltree_children(t, true, rows[0].node, &rows), 1);
        expect_row(&rows[0], fx->fn_gamma, 5, 0);
        uint32_t second =
                calltree_find_function(t, CALLTREE_THREAD, PID_B + 1, module, fx->fn_alpha, 0);
        assert_int_equal(calltree_children(t, true, second, &rows), 1);
        expect_row(&rows[0], fx->fn_gamma, 2, 0);
        uint32_t in_b = calltree_find_function(t, CALLTREE_PROCESS, PID_B, module, fx->fn_alpha, 0);
        assert_int_equal(calltree_children(t, true, in_b, &rows), 2);
        expect_row(&rows[0], fx->fn_beta, 5, 0);
        expect_row(&rows[1], fx->fn_gamma, 2, 0);
        /* a main thread sampled in another process (its tid reused) gets its own tree too */
        for (int i = 0; i < 3; i++)
                tree_sample_tid(t, 0, time += MS(1), PID_A, PID_A, from_beta, 3);
        tree_sample_tid(t, 0, time += MS(1), PID_B, PID_A, from_gamma, 2);
        uint32_t in_a = calltree_find_function(t, CALLTREE_THREAD, PID_A, module, fx->fn_alpha, 0);
        assert_int_equal(calltree_children(t, true, in_a, &rows), 2);
        expect_row(&rows[0], fx->fn_beta, 3, 0);
        expect_row(&rows[1], fx->fn_gamma, 1, 0);
        in_a = calltree_find_function(t, CALLTREE_PROCESS, PID_A, module, fx->fn_alpha, 0);
        assert_int_equal(calltree_children(t, true, in_a, &rows), 1);
        expect_row(&rows[0], fx->fn_beta, 3, 0);
        calltree_reset(t);
        assert_int_equal(calltree_find_function(t, CALLTREE_THREAD, PID_B, module, fx->fn_alpha, 0),
                         0);
        calltree_free(t);

        /* a small tree, evicting: the copy for the thread makes its room as a stack does, and
           counts what its process's tree still holds */
        struct calltree *small = calltree_new(fx->store, 4 + 96, 0);
        calltree_want(small, CALLTREE_THREAD); /* the rows by thread ask */
        for (uint32_t k = 0; k < 200; k++) {
                const uint64_t frames[] = {a, EXE + 0x100 + 16ull * k, g};
                tree_sample_tid(small, 0, time += MS(1), PID_B, PID_B, frames, 3);
        }
        assert_true(calltree_nr_evicted(small) > 0);
        assert_int_equal(calltree_children(small, true, 0, &rows), 1);
        uint32_t in_p =
                calltree_find_function(small, CALLTREE_PROCESS, PID_B, module, fx->fn_alpha, 0);
        assert_int_not_equal(in_p, 0);
        assert_int_equal(
                calltree_find_function(small, CALLTREE_THREAD, PID_B, module, fx->fn_alpha, 0),
                in_p);
        assert_int_equal(calltree_children(small, true, 0, &rows), 1);
        uint64_t before = rows[0].count;
        tree_sample_tid(small, 1, time += MS(1), PID_B, PID_B + 1, from_gamma, 2);
        assert_int_equal(calltree_children(small, true, 0, &rows), 1);
        assert_int_equal(rows[0].count, before + 1);
        main = calltree_find_function(small, CALLTREE_THREAD, PID_B, module, fx->fn_alpha, 0);
        assert_int_not_equal(main, 0);
        assert_int_not_equal(main, in_p);
        assert_true(calltree_nr_nodes(small) <= 4 + 96);
        calltree_free(small);
}

/* Decaying: the tree decays with the rows, each node rounded down (a caller never counts more
   than its callee), and the nodes that fall to nothing go; zeroed: it starts over. */
static void test_calltree_decay(void **state)
{
        struct fix *fx = *state;
        struct calltree *t = calltree_new(fx->store, 0, 0);
        uint64_t a = EXE + fx->off_alpha + 4, b = EXE + fx->off_beta + 4,
                 g = EXE + fx->off_gamma + 4;
        const uint64_t from_beta[] = {a, b, g}, from_gamma[] = {a, g};
        int64_t time = MS(1);
        for (int i = 0; i < 9; i++)
                tree_sample(t, 0, time += MS(1), PID_A, from_beta, 3);
        tree_sample(t, 0, time += MS(1), PID_A, from_gamma, 2);
        const struct calltree_row *rows;
        assert_int_equal(calltree_children(t, true, 0, &rows), 1);
        uint32_t module = rows[0].module;
        struct agg_settings s = {AGG_CUMULATIVE, 0, 0};
        calltree_refresh(t, &s);
        assert_int_equal(calltree_nr_samples(t), 10);
        s = (struct agg_settings){AGG_DECAYING, 0.5, 0};
        calltree_refresh(t, &s);
        assert_int_equal(calltree_nr_samples(t), 5);
        assert_int_equal(calltree_children(t, true, 0, &rows), 1);
        expect_row(&rows[0], fx->fn_alpha, 5, 5);
        uint32_t alpha = calltree_find_function(t, CALLTREE_ALL, 0, module, fx->fn_alpha, 0);
        /* beta's 9 to 4; gamma's 1 to nothing: gone */
        assert_int_equal(calltree_children(t, true, alpha, &rows), 1);
        expect_row(&rows[0], fx->fn_beta, 4, 0);
        assert_int_equal(calltree_children(t, false, 0, &rows), 1);
        expect_row(&rows[0], fx->fn_gamma, 5, 0);
        /* new samples count along the decayed paths (the memo forgot the nodes that went) */
        tree_sample(t, 0, time += MS(1), PID_A, from_gamma, 2);
        tree_sample(t, 0, time += MS(1), PID_A, from_beta, 3);
        tree_sample(t, 1, time += MS(1), PID_A, from_beta, 3);
        assert_int_equal(calltree_children(t, true, alpha, &rows), 2);
        expect_row(&rows[0], fx->fn_beta, 6, 0);
        expect_row(&rows[1], fx->fn_gamma, 1, 0);
        tree_check(t, true, 0, calltree_nr_samples(t));
        tree_check(t, false, 0, calltree_nr_samples(t));
        for (int i = 0; i < 6; i++)
                calltree_refresh(t, &s);
        assert_int_equal(calltree_nr_samples(t), 0);
        assert_int_equal(calltree_children(t, true, 0, &rows), 0);
        assert_int_equal(calltree_nr_nodes(t), 4);
        tree_sample(t, 0, time += MS(1), PID_A, from_beta, 3);
        s = (struct agg_settings){AGG_ZEROED, 0, 0};
        calltree_refresh(t, &s);
        assert_int_equal(calltree_nr_samples(t), 0);
        assert_int_equal(calltree_nr_nodes(t), 4);
        calltree_free(t);
}

/* A full tree evicts its coldest nodes: stacks seen once (addresses no image holds, each its
   own path) come and go, the hot paths stay, and a function hot only later still gets its
   callers; nothing is cut. */
static void test_calltree_evicts_cold(void **state)
{
        struct fix *fx = *state;
        const uint32_t max = 4 + 400;
        struct calltree *t = calltree_new(fx->store, max, 0);
        calltree_want(t, CALLTREE_THREAD); /* the rows by thread ask */
        uint64_t a = EXE + fx->off_alpha + 4, b = EXE + fx->off_beta + 4,
                 g = EXE + fx->off_gamma + 4, w = EXE + fx->off_wake + 4;
        const uint64_t hot[] = {a, b, g}, later[] = {w, b, g};
        int64_t time = MS(1);
        uint64_t cold_at = 0x900000;
        for (int i = 0; i < 50; i++) /* in four threads: the others' paths from the first's */
                tree_sample_tid(t, 0, time += MS(1), PID_A, PID_A + 1 + i % 4, hot, 3);
        for (int round = 0; round < 2; round++) {
                for (int i = 0; i < 1000; i++, cold_at += 16) {
                        const uint64_t cold[] = {cold_at, cold_at + 0x100000, cold_at + 0x200000};
                        tree_sample(t, 1, time += MS(1), 700, cold, 3);
                        assert_true(calltree_nr_nodes(t) <= max);
                }
                if (round == 0)
                        for (int i = 0; i < 5; i++)
                                tree_sample(t, 0, time += MS(1), PID_A, later, 3);
        }
        const struct calltree_row *rows;
        assert_int_equal(calltree_nr_cut(t), 0);
        assert_true(calltree_nr_evicted(t) >= 2000 * 4 * 3 - max);
        assert_true(tree_check(t, false, 0, calltree_nr_samples(t)) +
                            tree_check(t, true, 0, calltree_nr_samples(t)) <=
                    max);
        assert_int_equal(calltree_nr_samples(t), 50 + 5 + 2000);
        assert_true(calltree_children(t, true, 0, &rows) >= 2);
        uint32_t module = 0;
        for (uint32_t i = 0; i < 2; i++)
                module = rows[i].function == fx->fn_alpha ? rows[i].module : module;
        assert_int_not_equal(module, 0);
        uint32_t alpha = calltree_find_function(t, CALLTREE_ALL, 0, module, fx->fn_alpha, 0);
        assert_int_equal(calltree_children(t, true, alpha, &rows), 1);
        expect_row(&rows[0], fx->fn_beta, 50, 0);
        assert_int_equal(calltree_children(t, true, rows[0].node, &rows), 1);
        expect_row(&rows[0], fx->fn_gamma, 50, 0);
        /* the later one, with its 5 samples, next to alpha's 50 */
        assert_true(calltree_children(t, true, 0, &rows) >= 2);
        expect_row(&rows[0], fx->fn_alpha, 50, 50);
        assert_int_equal(rows[1].count, 5);
        uint32_t fn_wake = rows[1].function;
        assert_int_not_equal(fn_wake, 0);
        uint32_t wake = calltree_find_function(t, CALLTREE_PROCESS, PID_A, module, fn_wake, 0);
        assert_int_equal(calltree_children(t, true, wake, &rows), 1);
        expect_row(&rows[0], fx->fn_beta, 5, 0);
        assert_int_equal(calltree_children(t, true, rows[0].node, &rows), 1);
        expect_row(&rows[0], fx->fn_gamma, 5, 0);
        /* each thread's own: a quarter of alpha's samples, its callers with them */
        for (uint32_t tid = PID_A + 1; tid <= PID_A + 4; tid++) {
                uint32_t in_tid =
                        calltree_find_function(t, CALLTREE_THREAD, tid, module, fx->fn_alpha, 0);
                assert_int_equal(calltree_children(t, true, in_tid, &rows), 1);
                expect_row(&rows[0], fx->fn_beta, tid <= PID_A + 2 ? 13 : 12, 0);
        }
        /* top-down too: gamma, beta, then alpha and the later one */
        assert_true(calltree_children(t, false, 0, &rows) >= 1);
        expect_row(&rows[0], fx->fn_gamma, 55, 0);
        assert_int_equal(calltree_children(t, false, rows[0].node, &rows), 1);
        assert_int_equal(calltree_children(t, false, rows[0].node, &rows), 2);
        calltree_reset(t);
        assert_int_equal(calltree_nr_evicted(t), 0);
        calltree_free(t);
}

/* Cumulative for hours: paths warm long ago cool at each eviction and make room, and a function
   hot only now keeps its callers (by their counts alone, the old paths would stay and the new
   one go at every eviction). */
static void test_calltree_evicts_old(void **state)
{
        struct fix *fx = *state;
        const uint32_t max = 4 + 400;
        struct calltree *t = calltree_new(fx->store, max, 0);
        uint64_t a = EXE + fx->off_alpha + 4, b = EXE + fx->off_beta + 4,
                 g = EXE + fx->off_gamma + 4;
        const uint64_t now_hot[] = {a, b, g};
        int64_t time = MS(1);
        /* long ago: 30 paths of 3 addresses no image holds, 20 samples each (360 nodes) */
        for (uint32_t k = 0; k < 30; k++) {
                const uint64_t old[] = {0x700000 + 16 * k, 0x710000 + 16 * k, 0x720000 + 16 * k};
                for (int i = 0; i < 20; i++)
                        tree_sample(t, 0, time += MS(1), 700, old, 3);
        }
        /* now: 10 samples of the hot stack, then stacks seen once until the tree evicts */
        uint64_t cold_at = 0x900000;
        for (int round = 0; round < 8; round++) {
                for (int i = 0; i < 10; i++)
                        tree_sample(t, 1, time += MS(1), PID_A, now_hot, 3);
                uint64_t nr_evicted = calltree_nr_evicted(t);
                while (calltree_nr_evicted(t) == nr_evicted) {
                        const uint64_t cold[] = {cold_at, cold_at + 0x100000, cold_at + 0x200000};
                        cold_at += 16;
                        tree_sample(t, 0, time += MS(1), 701, cold, 3);
                }
        }
        const struct calltree_row *rows;
        uint32_t alpha = callers_node_of(t, fx->fn_alpha);
        assert_int_not_equal(alpha, 0);
        assert_int_equal(calltree_children(t, true, alpha, &rows), 1);
        assert_int_equal(rows[0].function, fx->fn_beta);
        assert_true(rows[0].count >= 10);
        assert_int_equal(calltree_children(t, true, rows[0].node, &rows), 1);
        assert_int_equal(rows[0].function, fx->fn_gamma);
        assert_int_equal(calltree_nr_cut(t), 0);
        calltree_free(t);
}

/* A function's total over repeated stacks (remembered after the first), recursion counted once
   per stack, and the table growing between them. */
static const struct hot_row *row_of(const struct hot_row *rows, uint32_t n, uint32_t function)
{
        for (uint32_t i = 0; i < n; i++)
                if (rows[i].function == function)
                        return &rows[i];
        return NULL;
}

/* n samples at ip on cpu, each with its stack */
static void hot_samples(struct hot *h, uint32_t n, uint16_t cpu, int64_t *t, uint64_t ip,
                        const uint64_t *stack, uint32_t nr)
{
        for (uint32_t i = 0; i < n; i++) {
                struct kevent ev = ev_base(KEV_SAMPLE, cpu, *t += MS(1), PID_A, PID_A + 1);
                ev.sample.ip = ip;
                ev.sample.tid = PID_A + 1;
                hot_event(h, &ev);
                ev = ev_stack(cpu, *t, PID_A, PID_A + 1, stack, nr);
                hot_event(h, &ev);
        }
}

/* Stacks whose hashes meet keep their memos, as the call tree's do (test_calltree_memo_ways):
   1,024 stacks (their outermost callers apart) seen in turn, 2,048 pairs of slots: about
   9% walk again (a Poisson of 0.5), where one slot a hash lost about 22% (one of 0.25), over the
   bound. */
static void test_hot_memo_ways(void **state)
{
        struct fix *fx = *state;
        struct hot *h = hot_new(fx->store, 0);
        uint64_t a = EXE + fx->off_alpha + 4, b = EXE + fx->off_beta + 4,
                 g = EXE + fx->off_gamma + 4;
        enum { N = 1024 };
        int64_t t = MS(1);
        /* a first round makes their places (the table's growths start the memos over), the
           second remembers them, the third counts from the memos */
        uint64_t walks = 0;
        for (int round = 0; round < 3; round++) {
                walks = hot_nr_walks(h);
                for (uint64_t i = 0; i < N; i++) {
                        const uint64_t stack[] = {a, b, g, g + 1 + i};
                        hot_samples(h, 1, 0, &t, a, stack, 4);
                }
        }
        assert_int_equal(hot_nr_stacks(h), 3 * N);
        assert_true(hot_nr_walks(h) - walks < N / 7);
        /* each sample counted all the same */
        hot_refresh(h);
        const struct hot_row *rows;
        uint32_t n = hot_functions_by(h, HOT_SOURCE_TIMER, HOT_BY_FUNCTION, false, &rows);
        const struct hot_row *alpha = row_of(rows, n, fx->fn_alpha);
        assert_non_null(alpha);
        assert_int_equal(alpha->self, 3 * N);
        hot_free(h);
}

/* hot_prefetch_sample asks memory for a sample to come and counts nothing: before the frame
   memo is made, for a process not known, for a sampled address (far, then near) and for one
   never sampled, the counts are those of the same samples without it. */
static void test_hot_prefetch_sample(void **state)
{
        struct fix *fx = *state;
        struct hot *with = hot_new(fx->store, 0), *without = hot_new(fx->store, 0);
        uint64_t a = EXE + fx->off_alpha + 4, b = EXE + fx->off_beta + 4;
        const uint64_t stack[] = {a, b};
        hot_prefetch_sample(with, PID_A, a, false); /* no frame memo yet */
        hot_prefetch_sample(with, PID_A, a, true);
        int64_t t1 = MS(1), t2 = MS(1);
        for (int i = 0; i < 8; i++) {
                hot_prefetch_sample(with, PID_A, a, false);
                hot_prefetch_sample(with, PID_A, a, true);
                hot_prefetch_sample(with, UINT32_MAX, a, true);
                hot_prefetch_sample(with, PID_A + 7, b + 1, false);
                hot_prefetch_sample(with, PID_A + 7, b + 1, true);
                hot_samples(with, 1, 0, &t1, a, stack, 2);
                hot_samples(without, 1, 0, &t2, a, stack, 2);
        }
        hot_refresh(with);
        hot_refresh(without);
        const struct hot_row *rw, *ro;
        uint32_t nw = hot_functions_by(with, HOT_SOURCE_TIMER, HOT_BY_FUNCTION, false, &rw);
        uint32_t no = hot_functions_by(without, HOT_SOURCE_TIMER, HOT_BY_FUNCTION, false, &ro);
        assert_int_equal(nw, no);
        const struct hot_row *alpha = row_of(rw, nw, fx->fn_alpha);
        assert_non_null(alpha);
        assert_int_equal(alpha->self, 8);
        assert_int_equal(hot_nr_samples(with, 0), hot_nr_samples(without, 0));
        assert_int_equal(hot_nr_walks(with), hot_nr_walks(without));
        hot_free(with);
        hot_free(without);
}

/* A recording's stack whose names are still loading (the store's loader thread has the module
   queued) waits for them and is remembered: the same stack again costs no walk of its frames
   (it took the long way, unremembered, while the names loaded: a walk per stack). */
static void test_hot_memo_names_loading(void **state)
{
        struct fix *fx = *state;
        struct sym_store *store = NULL;
        struct sym_options o = {.log = quiet_log};
        assert_int_equal(sym_store_new(&store, &o), 0);
        struct sym_image im = {PID_A, EXE, 1u << 24, 0, fx->exe_path, NULL, 0, 0, 0};
        sym_image_load(store, &im);
        struct hot *h = hot_new(store, 0);
        uint64_t a = EXE + fx->off_alpha + 4, b = EXE + fx->off_beta + 4,
                 g = EXE + fx->off_gamma + 4;
        const uint64_t stack[] = {a, b, g};
        int64_t t = MS(1);
        hot_samples(h, 3, 0, &t, a, stack, 3);
        assert_int_equal(hot_nr_walks(h), 1);
        hot_refresh(h);
        const struct hot_row *rows;
        uint32_t n = hot_functions_by(h, HOT_SOURCE_TIMER, HOT_BY_FUNCTION, false, &rows);
        const struct hot_row *beta = row_of(rows, n, sym_intern(store, "model_fn_beta"));
        assert_non_null(beta);
        assert_int_equal(beta->total, 3);
        hot_free(h);
        sym_store_free(store);
}

/* Stacks that miss the stack memo (each new: another first caller) over frames seen before:
   those frames come from the frame memo, not located again, and count as the located ones
   did; an image of their process makes them located again (its addresses may have moved). */
static void test_hot_frame_memo(void **state)
{
        struct fix *fx = *state;
        struct hot *h = hot_new(fx->store, 0);
        uint64_t a = EXE + fx->off_alpha + 4, b = EXE + fx->off_beta + 4,
                 g = EXE + fx->off_gamma + 4;
        int64_t t = MS(1);
        /* the leaf a, callers b, g and one address of its own per stack */
        for (uint32_t i = 0; i < 4; i++) {
                const uint64_t stack[] = {a, b, g, g + 1 + i};
                hot_samples(h, 1, 0, &t, a, stack, 4);
        }
        assert_int_equal(hot_nr_walks(h), 4);
        assert_int_equal(hot_nr_frames_located(h), 3 + 3 * 1);
        struct kevent im = ev_base(KEV_IMAGE, 1, t += MS(1), PID_A, 0);
        im.image.pid = PID_A;
        im.image.base = EXE + (2u << 24);
        im.image.size = 1u << 24;
        im.image.phase = KEV_PHASE_START;
        hot_event(h, &im);
        const uint64_t stack[] = {a, b, g, g - 1};
        hot_samples(h, 1, 0, &t, a, stack, 4);
        assert_int_equal(hot_nr_frames_located(h), 6 + 3);
        hot_refresh(h);
        const struct hot_row *rows;
        uint32_t n = hot_functions_by(h, HOT_SOURCE_TIMER, HOT_BY_FUNCTION, false, &rows);
        const struct hot_row *beta = row_of(rows, n, fx->fn_beta);
        const struct hot_row *gamma = row_of(rows, n, fx->fn_gamma);
        assert_non_null(beta);
        assert_non_null(gamma);
        assert_int_equal(beta->total, 5);
        assert_int_equal(gamma->total, 5); /* two places in each stack: once */
        hot_free(h);
}

/* A recording's frames of no image (a perf.data's callchains hold zeros and addresses of
   processes whose maps were not recorded): kept in the frame memo too, their answers move with
   events only (a live session's are not: a JIT map may place them at the next refresh). */
static void test_hot_frame_memo_unplaced(void **state)
{
        struct fix *fx = *state;
        struct hot *h = hot_new(fx->store, 0);
        uint64_t a = EXE + fx->off_alpha + 4;
        const uint64_t nowhere = 0x7f0000001000ull; /* no image of PID_A there */
        int64_t t = MS(1);
        for (uint32_t i = 0; i < 4; i++) {
                const uint64_t stack[] = {a, 0, nowhere, nowhere + 0x10 + i};
                hot_samples(h, 1, 0, &t, a, stack, 4);
        }
        assert_int_equal(hot_nr_walks(h), 4);
        assert_int_equal(hot_nr_frames_located(h), 3 + 3 * 1);
        hot_free(h);
}

/* A stack seen again is counted from its memo while other processes start and map images;
   an image of its own process makes it look its callers up again (test_calltree_memo_other_
   process for the call tree). */
static void test_hot_memo_other_process(void **state)
{
        struct fix *fx = *state;
        struct hot *h = hot_new(fx->store, 0);
        uint64_t a = EXE + fx->off_alpha + 4, b = EXE + fx->off_beta + 4,
                 g = EXE + fx->off_gamma + 4;
        const uint64_t stack[] = {a, b, g};
        int64_t t = MS(1);
        hot_samples(h, 2, 0, &t, a, stack, 3);
        assert_int_equal(hot_nr_walks(h), 1);
        const uint32_t other = PID_B + 10;
        struct kevent im = ev_base(KEV_IMAGE, 1, t += MS(1), other, 0);
        im.image.pid = other;
        im.image.base = EXE;
        im.image.size = 1u << 24;
        im.image.phase = KEV_PHASE_START;
        fix_image(fx, other, EXE);
        hot_event(h, &im);
        hot_samples(h, 3, 0, &t, a, stack, 3);
        assert_int_equal(hot_nr_walks(h), 1);
        im.pid = im.image.pid = PID_A;
        im.image.base = EXE + (2u << 24);
        hot_event(h, &im);
        hot_samples(h, 1, 0, &t, a, stack, 3);
        assert_int_equal(hot_nr_walks(h), 2);
        hot_refresh(h);
        const struct hot_row *rows;
        uint32_t n = hot_functions_by(h, HOT_SOURCE_TIMER, HOT_BY_FUNCTION, false, &rows);
        uint64_t total_beta = 0;
        for (uint32_t i = 0; i < n; i++)
                if (rows[i].function == fx->fn_beta)
                        total_beta = rows[i].total;
        assert_int_equal(total_beta, 6);
        hot_free(h);
}

/* A stack of the sampled place alone (no callers: a kernel thread's, an idle loop's) is a memo
   like the others: its later samples count their leaf, not a walk each (a quarter of the
   samples of a recording of bench/top.sh's took one). Counted as the walks counted them: the
   leaf once, a first frame of the same function at another place once more as dup. */
static void test_hot_memo_leaf_only(void **state)
{
        struct fix *fx = *state;
        struct hot *h = hot_new(fx->store, 0);
        uint64_t a = EXE + fx->off_alpha + 4;
        const uint64_t leaf[] = {a}, other_place[] = {a + 1};
        int64_t t = MS(1);
        hot_samples(h, 4, 0, &t, a, leaf, 1);
        assert_int_equal(hot_nr_walks(h), 1);
        /* the stack's first frame at another place of the sampled function: two leaves, the
           same (no) callers, the same memo */
        hot_samples(h, 3, 0, &t, a, other_place, 1);
        assert_int_equal(hot_nr_walks(h), 1);
        hot_refresh(h);
        const struct hot_row *rows;
        uint32_t n = hot_functions_by(h, HOT_SOURCE_TIMER, HOT_BY_FUNCTION, false, &rows);
        const struct hot_row *alpha = row_of(rows, n, fx->fn_alpha);
        assert_non_null(alpha);
        assert_int_equal(alpha->self, 7);
        assert_int_equal(alpha->total, 7);
        struct hot_place places[4];
        uint32_t np =
                hot_function_places(h, HOT_SOURCE_TIMER, alpha->module, fx->fn_alpha, places, 4);
        assert_int_equal(np, 2);
        assert_int_equal(places[0].total + places[1].total, 10);
        hot_free(h);
}

/* Two processes' stacks whose one caller differs by the bits their pids differ by, rotated as
   the stack memo's chain rotates them (places keyed by function: the sampled place's process and
   thread left out of the key): each stack its own memo, its caller counted in its own place. The
   memo's key took the stack's process into its chain unmixed, so these two hashed alike and the
   second process's samples counted the first one's caller (a recording of top.sh's load had two
   such stacks, frames 0 and 0x1e00000000, pids 15868 and 15932). */
static void test_hot_memo_pids_apart(void **state)
{
        struct fix *fx = *state;
        struct hot *h = hot_new(fx->store, 0);
        hot_set_place_keys(h, HOT_BY_FUNCTION);
        uint64_t a = EXE + fx->off_alpha + 4;
        uint64_t rot = (uint64_t)(PID_A ^ PID_B) << 27;
        const uint64_t in_a[] = {a, 0x7f0000001000ull}, in_b[] = {a, 0x7f0000001000ull ^ rot};
        int64_t t = MS(1);
        for (uint32_t i = 0; i < 3; i++) {
                struct kevent ev = ev_base(KEV_SAMPLE, 0, t += MS(1), PID_A, PID_A + 1);
                ev.sample.ip = a;
                ev.sample.tid = PID_A + 1;
                hot_event(h, &ev);
                ev = ev_stack(0, t, PID_A, PID_A + 1, in_a, 2);
                hot_event(h, &ev);
                ev = ev_base(KEV_SAMPLE, 0, t += MS(1), PID_B, PID_B + 1);
                ev.sample.ip = a;
                ev.sample.tid = PID_B + 1;
                hot_event(h, &ev);
                ev = ev_stack(0, t, PID_B, PID_B + 1, in_b, 2);
                hot_event(h, &ev);
        }
        hot_refresh(h);
        const struct hot_row *rows;
        uint32_t n = hot_functions_by(h, HOT_SOURCE_TIMER, HOT_BY_FUNCTION, true, &rows);
        uint64_t total_a = 0, total_b = 0;
        for (uint32_t i = 0; i < n; i++) {
                if (rows[i].module == 0 && rows[i].rel == in_a[1])
                        total_a += rows[i].total;
                if (rows[i].module == 0 && rows[i].rel == in_b[1])
                        total_b += rows[i].total;
        }
        assert_int_equal(total_a, 3);
        assert_int_equal(total_b, 3);
        hot_free(h);
}

/* A stack finds its sample's place where the sample counted it, unless the table moved in
   between: another CPU's samples of many new places grow it before the stack comes, and the
   thread, moved to that CPU, has its stack remembered there after the growth (so the late one
   is counted from the memo, with its leaf's slot). */
static void test_hot_leaf_slot_moved(void **state)
{
        struct fix *fx = *state;
        struct hot *h = hot_new(fx->store, 0);
        uint64_t a = EXE + fx->off_alpha + 4, b = EXE + fx->off_beta + 4;
        const uint64_t stack[] = {a, b};
        int64_t t = MS(1);
        struct kevent ev = ev_base(KEV_SAMPLE, 0, t += MS(1), PID_A, PID_A + 1);
        ev.sample.ip = a;
        ev.sample.tid = PID_A + 1;
        hot_event(h, &ev);
        int64_t sampled = t;
        for (uint32_t i = 0; i < 3000; i++) {
                struct kevent o = ev_base(KEV_SAMPLE, 1, t += 1000, 300, 301);
                o.sample.ip = 0x500000 + (uint64_t)i * 16;
                o.sample.tid = 301;
                hot_event(h, &o);
        }
        hot_samples(h, 1, 1, &t, a, stack, 2);
        assert_int_equal(hot_nr_walks(h), 1);
        ev = ev_stack(0, sampled, PID_A, PID_A + 1, stack, 2);
        hot_event(h, &ev);
        assert_int_equal(hot_nr_walks(h), 1);
        hot_refresh(h);
        const struct hot_row *rows;
        uint32_t n = hot_functions_by(h, HOT_SOURCE_TIMER, HOT_BY_FUNCTION, false, &rows);
        assert_non_null(row_of(rows, n, fx->fn_alpha));
        assert_int_equal(row_of(rows, n, fx->fn_alpha)->self, 2);
        assert_int_equal(row_of(rows, n, fx->fn_alpha)->total, 2);
        assert_int_equal(row_of(rows, n, fx->fn_beta)->total, 2);
        hot_free(h);
}

/* Places of one address in several threads (places are keyed by thread) take the answer the
   first was given: the symbol store is asked once per address, not once per thread, and a
   second process of the same program (its module the same) asks nothing more for it; another
   address is asked. */
static void test_hot_answer_memo(void **state)
{
        struct fix *fx = *state;
        struct hot *h = hot_new(fx->store, 0);
        uint64_t a = EXE + fx->off_alpha + 4, b = EXE + fx->off_beta + 4;
        int64_t t = MS(1);
        fix_image(fx, PID_B, EXE);
        const struct {
                uint32_t pid, tid;
                uint64_t ip;
        } samples[] = {{PID_A, PID_A + 1, a},
                       {PID_A, PID_A + 2, a},
                       {PID_A, PID_A + 3, a},
                       {PID_B, PID_B + 1, a},
                       {PID_B, PID_B + 1, b}};
        for (uint32_t i = 0; i < 5; i++) {
                struct kevent ev =
                        ev_base(KEV_SAMPLE, 0, t += MS(1), samples[i].pid, samples[i].tid);
                ev.sample.ip = samples[i].ip;
                ev.sample.tid = samples[i].tid;
                hot_event(h, &ev);
        }
        hot_refresh(h);
        const struct hot_row *rows;
        uint32_t n = hot_functions_by(h, HOT_SOURCE_TIMER, HOT_BY_THREAD, false, &rows);
        assert_int_equal(hot_nr_answers_asked(h), 2);
        uint32_t nr_alpha = 0;
        for (uint32_t i = 0; i < n; i++)
                if (rows[i].function == fx->fn_alpha && rows[i].self == 1)
                        nr_alpha++;
        assert_int_equal(nr_alpha, 4);
        n = hot_functions_by(h, HOT_SOURCE_TIMER, HOT_BY_FUNCTION, false, &rows);
        assert_int_equal(row_of(rows, n, fx->fn_alpha)->self, 4);
        assert_int_equal(row_of(rows, n, fx->fn_beta)->self, 1);
        assert_int_equal(hot_nr_answers_asked(h), 2);
        hot_free(h);
}

/* A sample's place is found in the frame memo where a stack's frame or an earlier sample at
   its address left it, while its process's addresses stay: an image of the program mapped
   again elsewhere (its event) puts another function at that address, and the later samples
   there count in it, not in the place the earlier ones made. */
static void test_hot_leaf_frame_memo(void **state)
{
        struct fix *fx = *state;
        const uint32_t pid = 420;
        struct hot *h = hot_new(fx->store, 0);
        uint64_t a = EXE + fx->off_alpha + 4, b = EXE + fx->off_beta + 4;
        const uint64_t stack[] = {a, b};
        /* the program mapped again over the first, where a is beta's address */
        uint64_t base2 = a - 4 - fx->off_beta;
        int64_t t = MS(1);
        fix_image(fx, pid, EXE);
        for (uint32_t i = 0; i < 5; i++) {
                if (i == 3) {
                        fix_image(fx, pid, base2);
                        struct kevent im = ev_base(KEV_IMAGE, 1, t += MS(1), pid, 0);
                        im.image.pid = pid;
                        im.image.base = base2;
                        im.image.size = 1u << 24;
                        im.image.phase = KEV_PHASE_START;
                        hot_event(h, &im);
                }
                struct kevent ev = ev_base(KEV_SAMPLE, 0, t += MS(1), pid, pid + 1);
                ev.sample.ip = a;
                ev.sample.tid = pid + 1;
                hot_event(h, &ev);
                ev = ev_stack(0, t, pid, pid + 1, stack, 2);
                hot_event(h, &ev);
        }
        hot_refresh(h);
        const struct hot_row *rows;
        uint32_t n = hot_functions_by(h, HOT_SOURCE_TIMER, HOT_BY_FUNCTION, false, &rows);
        assert_non_null(row_of(rows, n, fx->fn_alpha));
        assert_int_equal(row_of(rows, n, fx->fn_alpha)->self, 3);
        assert_non_null(row_of(rows, n, fx->fn_beta));
        assert_int_equal(row_of(rows, n, fx->fn_beta)->self, 2);
        hot_free(h);
}

/* A stack remembered whose sampled place is also one of its callers' (a recursive function
   sampled at the very address one of its calls returns to): counted once a stack at that place,
   from the memo as on the first walk (the memo's place bits let a leaf that is none of the
   callers' pass without a look at its places, and must not let this one pass). */
static void test_hot_memo_leaf_among_callers(void **state)
{
        struct fix *fx = *state;
        struct hot *h = hot_new(fx->store, 0);
        uint64_t a = EXE + fx->off_alpha + 4, b = EXE + fx->off_beta + 4,
                 g = EXE + fx->off_gamma + 4;
        const uint64_t stack_b[] = {b, g, b}, stack_a[] = {a, g, b};
        int64_t t = MS(1);
        hot_samples(h, 6, 0, &t, b, stack_b, 3);
        hot_samples(h, 4, 0, &t, a, stack_a, 3);
        /* the same callers, so one memo: every sample but the first counted from it, the leaf
           one of its places for the first six, none of them for the last four */
        assert_int_equal(hot_nr_walks(h), 1);
        const struct hot_row *rows;
        uint32_t n = hot_functions(h, HOT_SOURCE_TIMER, false, &rows);
        assert_int_equal(row_of(rows, n, fx->fn_beta)->self, 6);
        assert_int_equal(row_of(rows, n, fx->fn_beta)->total, 10);
        assert_int_equal(row_of(rows, n, fx->fn_alpha)->self, 4);
        assert_int_equal(row_of(rows, n, fx->fn_alpha)->total, 4);
        assert_int_equal(row_of(rows, n, fx->fn_gamma)->total, 10);
        /* the place itself: once a stack too */
        struct hot_place places[4];
        uint32_t np = hot_function_places(h, HOT_SOURCE_TIMER, row_of(rows, n, fx->fn_beta)->module,
                                          fx->fn_beta, places, 4);
        assert_int_equal(np, 1);
        assert_int_equal(places[0].total, 10);
        hot_free(h);
}

static void test_hot_repeated_stacks(void **state)
{
        struct fix *fx = *state;
        struct hot *h = hot_new(fx->store, 0);
        uint64_t a = EXE + fx->off_alpha + 4, b = EXE + fx->off_beta + 4,
                 g = EXE + fx->off_gamma + 4;
        const uint64_t stack_a[] = {a, b, g, b, g}, stack_b[] = {b, g};
        /* a recursion through other call sites: each function at two places of one stack (a
           qsort's merge sort calls itself from two), counted once per stack all the same */
        const uint64_t stack_c[] = {a, b, g, b + 4, g + 4, b + 4};
        int64_t t = MS(1);
        struct kevent ev;
        for (int round = 0; round < 2; round++) {
                hot_samples(h, 5, 0, &t, a, stack_a, 5);
                hot_samples(h, 3, 1, &t, b, stack_b, 2);
                hot_samples(h, 4, 0, &t, a, stack_c, 6);
                const struct hot_row *rows;
                uint32_t n = hot_functions(h, HOT_SOURCE_TIMER, false, &rows);
                uint64_t k = (uint64_t)round + 1;
                assert_int_equal(row_of(rows, n, fx->fn_alpha)->self, 9 * k);
                assert_int_equal(row_of(rows, n, fx->fn_alpha)->total, 9 * k);
                assert_int_equal(row_of(rows, n, fx->fn_beta)->self, 3 * k);
                assert_int_equal(row_of(rows, n, fx->fn_beta)->total, 12 * k);
                assert_int_equal(row_of(rows, n, fx->fn_gamma)->total, 12 * k);
                /* a place's own total still counts every stack it is on */
                struct hot_place places[8];
                uint32_t np = hot_function_places(h, HOT_SOURCE_TIMER,
                                                  row_of(rows, n, fx->fn_beta)->module, fx->fn_beta,
                                                  places, 8);
                assert_int_equal(np, 2);
                assert_int_equal(places[0].total, 12 * k);
                assert_int_equal(places[1].total, 4 * k);
                /* many new places: the table grows and its places move */
                for (uint32_t i = 0; i < 3000; i++) {
                        ev = ev_base(KEV_SAMPLE, 0, t += 1000, 300 + round, 301);
                        ev.sample.ip = 0x500000 + (uint64_t)(round * 3000 + i) * 16;
                        ev.sample.tid = 301;
                        hot_event(h, &ev);
                }
        }
        hot_free(h);
}

/* Rows that tie on their counts are in their names' order, whatever order the names were
   first asked for in (interned ids follow it, and a module's loading decides it). */
static void test_hot_ties_by_name(void **state)
{
        struct fix *fx = *state;
        struct sym_options o = {.is_synchronous = true, .log = quiet_log};
        struct sym_store *store = NULL;
        assert_int_equal(sym_store_new(&store, &o), 0);
        /* ids in the names' reverse order */
        uint32_t fn_gamma = sym_intern(store, "model_fn_gamma");
        uint32_t fn_beta = sym_intern(store, "model_fn_beta");
        uint32_t fn_alpha = sym_intern(store, "model_fn_alpha");
        assert_true(fn_gamma < fn_beta && fn_beta < fn_alpha);
        struct sym_image im = {PID_A, EXE, 1u << 24, 0, fx->exe_path, NULL, 0, 0, 0};
        sym_image_load(store, &im);
        struct hot *h = hot_new(store, 0);
        uint64_t a = EXE + fx->off_alpha + 4, b = EXE + fx->off_beta + 4,
                 g = EXE + fx->off_gamma + 4;
        const uint64_t stack_g[] = {g}, stack_b[] = {b}, stack_a[] = {a};
        int64_t t = MS(1);
        hot_samples(h, 3, 0, &t, g, stack_g, 1);
        hot_samples(h, 3, 1, &t, b, stack_b, 1);
        hot_samples(h, 3, 0, &t, a, stack_a, 1);
        const uint32_t want[] = {fn_alpha, fn_beta, fn_gamma};
        for (int is_by_total = 0; is_by_total < 2; is_by_total++) {
                const struct hot_row *rows;
                uint32_t n = hot_functions(h, HOT_SOURCE_TIMER, is_by_total, &rows);
                assert_int_equal(n, 3);
                for (uint32_t i = 0; i < 3; i++) {
                        assert_int_equal(rows[i].function, want[i]);
                        assert_string_equal(rows[i].name, sym_name(store, want[i]));
                }
                for (uint32_t k = 1; k <= 3; k++) {
                        n = hot_top_functions(h, HOT_SOURCE_TIMER, is_by_total, k, &rows);
                        assert_int_equal(n, k);
                        for (uint32_t i = 0; i < k; i++)
                                assert_int_equal(rows[i].function, want[i]);
                }
        }
        hot_free(h);
        sym_store_free(store);
}

/* A live session can deliver a CPU's samples before the rundown names their thread: a sample
   of no known process is placed by its stack's process, once, and named when the images come. */
static void test_hot_sample_before_its_thread(void **state)
{
        struct fix *fx = *state;
        const uint32_t pid = 300, tid = 301;
        struct hot *h = hot_new(fx->store, 0);
        uint64_t a = EXE + fx->off_alpha + 4, b = EXE + fx->off_beta + 4;
        const uint64_t frames[] = {a, b};
        int64_t t = MS(1);
        for (int i = 0; i < 4; i++) {
                struct kevent ev = ev_base(KEV_SAMPLE, 0, t += MS(1), UINT32_MAX, tid);
                ev.sample.ip = a;
                ev.sample.tid = tid;
                hot_event(h, &ev);
                ev = ev_stack(0, t, pid, tid, frames, 2);
                hot_event(h, &ev);
        }
        /* one whose stack never comes: its own place, still unplaced (counted at the end) */
        struct kevent ev = ev_base(KEV_SAMPLE, 1, t += MS(1), UINT32_MAX, tid);
        ev.sample.ip = b;
        ev.sample.tid = tid;
        hot_event(h, &ev);
        hot_samples_end(h);
        const struct hot_row *rows;
        uint32_t n = hot_functions(h, HOT_SOURCE_TIMER, false, &rows);
        uint64_t self = 0, nr_a = 0;
        for (uint32_t i = 0; i < n; i++) {
                assert_int_equal(rows[i].module, 0);
                self += rows[i].self;
                if (rows[i].rel == a) {
                        nr_a++;
                        /* counted once, not once as the sample and once as its first frame */
                        assert_int_equal(rows[i].self, 4);
                        assert_int_equal(rows[i].total, 4);
                }
        }
        assert_int_equal(self, 5);
        assert_int_equal(nr_a, 1);
        /* the image comes: the stack's process names the sampled places */
        fix_image(fx, pid, EXE);
        n = hot_functions(h, HOT_SOURCE_TIMER, false, &rows);
        assert_non_null(row_of(rows, n, fx->fn_alpha));
        assert_int_equal(row_of(rows, n, fx->fn_alpha)->self, 4);
        assert_int_equal(row_of(rows, n, fx->fn_alpha)->total, 4);
        assert_int_equal(row_of(rows, n, fx->fn_beta)->total, 4);
        hot_free(h);
}

/* ---- the caps: what came and went does not stay one by one ---- */

struct sw_sums {
        uint64_t nr_switches, on_cpu_ns, off_cpu_ns, nr_readied, nr_waits_ns;
        uint64_t readied_by, blocked_ns;
};

static struct sw_sums sw_sums_of(struct switches *sw, uint32_t *nr_rows)
{
        struct sw_sums s = {0};
        const struct switches_row *rows;
        uint32_t n = switches_threads(sw, SWITCHES_BY_ID, &rows);
        for (uint32_t i = 0; i < n; i++) {
                s.nr_switches += rows[i].nr_switches;
                s.on_cpu_ns += rows[i].on_cpu_ns;
                s.off_cpu_ns += rows[i].off_cpu_ns;
                s.nr_readied += rows[i].nr_readied;
                uint64_t w = rows[i].other_wait_ns;
                for (uint32_t k = 0; k < rows[i].nr_waits; k++)
                        w += rows[i].waits[k].off_cpu_ns;
                assert_int_equal(w, rows[i].off_cpu_ns); /* a row's waits add up */
                s.nr_waits_ns += w;
        }
        *nr_rows = n;
        const struct switches_readier_row *rr;
        n = switches_readiers(sw, AGG_ALL, &rr);
        for (uint32_t i = 0; i < n; i++)
                s.readied_by += rr[i].count;
        const struct switches_blocker_row *br;
        n = switches_blockers(sw, AGG_ALL, &br);
        for (uint32_t i = 0; i < n; i++)
                s.blocked_ns += br[i].off_cpu_ns;
        return s;
}

#define FOLD_TID 1000
#define NR_FOLD  100 /* threads past the cap */

/* SWITCHES_EXITED_MAX + NR_FOLD short-lived threads, each its own process, one a millisecond
   on CPU 0: each runs once, for 100 us plus its index in ns (the first, FOLD_TID, twice: the
   heaviest), readies FOLD_TID while it runs, blocks with a stack, and exits 11 us later. */
static int64_t feed_exited_threads(struct fix *fx, struct switches *sw)
{
        static uint64_t frames[2];
        frames[0] = EXE + fx->off_sched + 4;
        frames[1] = EXE + fx->off_alpha + 4;
        const uint32_t nr = SWITCHES_EXITED_MAX + NR_FOLD;
        int64_t t = 0;
        for (uint32_t i = 0; i < nr; i++) {
                uint32_t tid = FOLD_TID + i;
                t = MS(1) + MS(i);
                int64_t on = 100000 + i;
                sw_feed(sw, ev_process(KEV_PHASE_START, t, tid, "short"));
                sw_feed(sw, ev_thread(KEV_PHASE_START, t, tid, tid, "short"));
                for (int k = 0; k < (i ? 1 : 2); k++) {
                        int64_t at = t + k * (on + 1000);
                        sw_feed(sw, ev_cswitch(0, at, 0, 0, ST_READY, WR_EXECUTIVE, tid, tid));
                        if (i)
                                sw_feed(sw, ev_ready(0, at + 1000, FOLD_TID, FOLD_TID, tid, tid));
                        sw_feed(sw, ev_cswitch(0, at + on, tid, tid, ST_WAITING, WR_QUEUE, 0, 0));
                        sw_feed(sw, ev_stack(0, at + on, tid, tid, frames, 2));
                }
                int64_t end = t + (i ? 1 : 2) * (on + 1000) + 10000;
                sw_feed(sw, ev_thread(KEV_PHASE_END, end, tid, tid, "short"));
                sw_feed(sw, ev_process(KEV_PHASE_END, end, tid, "short"));
        }
        return t;
}

/* Past SWITCHES_EXITED_MAX exited threads, the lightest are folded into the other row at a
   refresh, once their grace has passed: every sum stays, the rows stay bounded, the heaviest
   keeps its row, its readiers that were folded become "[exited threads]". */
static void test_switches_exited_cap(void **state)
{
        struct fix *fx = *state;
        struct switches *sw = switches_new(fx->store, 0);
        int64_t last = feed_exited_threads(fx, sw);
        const uint32_t nr = SWITCHES_EXITED_MAX + NR_FOLD;
        /* within the grace (the last 2 s of threads): nothing folds */
        switches_refresh(sw);
        uint32_t n0;
        struct sw_sums s0 = sw_sums_of(sw, &n0);
        assert_int_equal(n0, nr);
        assert_int_equal(s0.nr_switches, nr + 1);
        assert_int_equal(s0.nr_readied, nr - 1);
        assert_int_equal(s0.readied_by, nr - 1);
        assert_int_equal(s0.blocked_ns, s0.off_cpu_ns); /* every wait had its stack */
        assert_true(s0.off_cpu_ns >= (uint64_t)nr * 11000);
        struct switches_caps caps;
        switches_caps(sw, &caps);
        assert_int_equal(caps.nr_threads_folded, 0);

        /* time passes (an event of no thread): all of them past the grace */
        struct kevent tick = ev_base(KEV_SAMPLE, 1, last + SWITCHES_EXIT_GRACE_NS + MS(10), 0, 0);
        sw_feed(sw, tick);
        switches_refresh(sw);
        uint32_t n1;
        struct sw_sums s1 = sw_sums_of(sw, &n1);
        assert_int_equal(n1, SWITCHES_EXITED_MAX + 1); /* and the other row */
        assert_memory_equal(&s0, &s1, sizeof(s0));
        switches_caps(sw, &caps);
        assert_int_equal(caps.nr_threads_folded, NR_FOLD);
        assert_int_equal(caps.nr_no_room, 0);

        const struct switches_row *rows;
        n1 = switches_threads(sw, SWITCHES_BY_ID, &rows);
        const struct switches_row *other = &rows[n1 - 1];
        assert_true(other->is_other);
        assert_int_equal(other->nr_switches, NR_FOLD);
        /* the lightest went: the first NR_FOLD after FOLD_TID (the least on-CPU time) */
        uint64_t want_on = 0;
        for (uint32_t i = 1; i <= NR_FOLD; i++)
                want_on += 100000 + i;
        assert_int_equal(other->on_cpu_ns, want_on);
        assert_int_equal(rows[0].tid, FOLD_TID);
        assert_int_equal(rows[0].nr_switches, 2);
        assert_int_equal(rows[1].tid, FOLD_TID + NR_FOLD + 1);
        assert_string_equal(rows[0].process_name, "short"); /* its process still names it */

        /* FOLD_TID's readiers: the kept ones each, the folded ones as one row */
        const struct switches_readier_row *rr;
        uint32_t nr_r = switches_readiers(sw, FOLD_TID, &rr);
        assert_int_equal(nr_r, nr - 1 - NR_FOLD + 1);
        assert_int_equal(rr[0].readying_tid, AGG_ALL);
        assert_int_equal(rr[0].count, NR_FOLD);
        assert_string_equal(rr[0].readying_process_name, "[exited threads]");
        /* where the folded ones blocked: one row of the AGG_ALL answer */
        const struct switches_blocker_row *br;
        uint32_t nr_b = switches_blockers(sw, AGG_ALL, &br);
        assert_int_equal(nr_b, SWITCHES_EXITED_MAX + 1);
        bool has_folded_row = false;
        for (uint32_t i = 0; i < nr_b; i++)
                if (br[i].tid == AGG_ALL) {
                        has_folded_row = true;
                        assert_int_equal(br[i].off_cpu_ns, NR_FOLD * 11000);
                }
        assert_true(has_folded_row);
        /* the processes' rows add up the same */
        n1 = switches_processes(sw, SWITCHES_BY_ID, &rows);
        assert_int_equal(n1, SWITCHES_EXITED_MAX + 1);
        uint64_t sw_sum = 0;
        for (uint32_t i = 0; i < n1; i++)
                sw_sum += rows[i].nr_switches;
        assert_int_equal(sw_sum, s0.nr_switches);

        /* more of them come and go: the rows stay at the cap */
        for (uint32_t i = 0; i < 3 * NR_FOLD; i++) {
                uint32_t tid = 900000 + i;
                int64_t t = last + SWITCHES_EXIT_GRACE_NS + MS(20) + MS(i);
                sw_feed(sw, ev_cswitch(0, t, 0, 0, ST_READY, WR_EXECUTIVE, tid, tid));
                sw_feed(sw, ev_cswitch(0, t + 500000, tid, tid, ST_WAITING, WR_QUEUE, 0, 0));
                sw_feed(sw, ev_thread(KEV_PHASE_END, t + 500000, tid, tid, "more"));
                last = t;
        }
        tick = ev_base(KEV_SAMPLE, 1, last + SWITCHES_EXIT_GRACE_NS + MS(10), 0, 0);
        sw_feed(sw, tick);
        switches_refresh(sw);
        uint32_t n2;
        struct sw_sums s2 = sw_sums_of(sw, &n2);
        assert_int_equal(n2, SWITCHES_EXITED_MAX + 1);
        assert_int_equal(s2.nr_switches, s0.nr_switches + 3 * NR_FOLD);
        switches_caps(sw, &caps);
        assert_int_equal(caps.nr_threads_folded, NR_FOLD + 3 * NR_FOLD);

        /* zeroed each refresh: the counts start over at each refresh, as with z, and what
           the caps did with them */
        switches_set_settings(sw, &(struct agg_settings){AGG_ZEROED, 0, 0});
        switches_refresh(sw);
        switches_caps(sw, &caps);
        assert_int_equal(caps.nr_threads_folded, 0);
        /* z: the counts and what the caps did start over */
        switches_zero(sw);
        switches_caps(sw, &caps);
        assert_int_equal(caps.nr_threads_folded, 0);
        switches_free(sw);
}

/* The places of processes that ended stay one by one up to HOT_EXITED_MAX (the heavier); past
   it the lighter fold, down to half of it, into one place per address of every exited process
   (pid AGG_ALL, named "[exited]"): the function's counts stay whole, the rows by process stay
   bounded. */
static void test_hot_exited_cap(void **state)
{
        struct fix *fx = *state;
        struct hot *h = hot_new(fx->store, 0);
        struct switches *sw = switches_new(fx->store, 0);
        const uint32_t base_pid = 5000, nr = HOT_EXITED_MAX + 100, live_pid = 4000;
        const uint32_t keep = HOT_EXITED_MAX / 2, nr_folded = nr - keep;
        const uint64_t ip = KBASE + 0x100;
        int64_t t = MS(1);
        uint64_t nr_samples = 0;
        for (uint32_t i = 0; i <= nr; i++) {
                uint32_t pid = i == nr ? live_pid : base_pid + i;
                /* the first ten, the heaviest, stay */
                for (int k = 0; k < (i < 10 ? 3 : 1); k++) {
                        struct kevent ev = ev_base(KEV_SAMPLE, 0, t += 1000, pid, pid + 1);
                        ev.sample.ip = ip;
                        ev.sample.tid = pid + 1;
                        hot_event(h, &ev);
                        nr_samples++;
                }
        }
        const struct hot_row *rows;
        uint32_t n = hot_functions_by(h, HOT_SOURCE_TIMER, HOT_BY_PROCESS, false, &rows);
        assert_int_equal(n, nr + 1);
        /* the ends over refreshes (MAX_ENDED_PIDS are remembered between two) */
        for (uint32_t i = 0; i < nr; i++) {
                struct kevent ev = ev_process(KEV_PHASE_END, t += 1000, base_pid + i, "gone");
                hot_event(h, &ev);
                if (i % 5000 == 4999)
                        hot_refresh(h);
        }
        hot_refresh(h);
        struct hot_caps caps;
        hot_caps(h, &caps);
        assert_int_equal(caps.nr_exited_folded, nr_folded);
        n = hot_functions_by(h, HOT_SOURCE_TIMER, HOT_BY_FUNCTION, false, &rows);
        assert_int_equal(n, 1);
        assert_int_equal(rows[0].self, nr_samples);
        assert_int_equal(rows[0].total, nr_samples);
        n = hot_functions_by(h, HOT_SOURCE_TIMER, HOT_BY_PROCESS, false, &rows);
        assert_int_equal(n, keep + 2); /* the kept, the folded, the live one */
        uint64_t self = 0;
        const struct hot_row *exited = NULL;
        bool has_live = false, has_heavy = false;
        for (uint32_t i = 0; i < n; i++) {
                self += rows[i].self;
                if (rows[i].pid == AGG_ALL)
                        exited = &rows[i];
                has_live |= rows[i].pid == live_pid;
                has_heavy |= rows[i].pid == base_pid && rows[i].self == 3;
        }
        assert_int_equal(self, nr_samples);
        assert_non_null(exited);
        assert_int_equal(exited->self, nr_folded);
        assert_true(has_live);
        assert_true(has_heavy);
        assert_string_equal(switches_process_name(sw, AGG_ALL), SWITCHES_EXITED_NAME);
        char pn[SWITCHES_NAME_SIZE], tn[SWITCHES_NAME_SIZE];
        switches_thread_names(sw, AGG_ALL, pn, tn);
        assert_string_equal(pn, SWITCHES_EXITED_NAME);
        /* more ended places under the cap stay; past it, they fold into the same row */
        for (uint32_t i = 0; i < 5; i++) {
                uint32_t pid = base_pid + nr + i;
                struct kevent ev = ev_base(KEV_SAMPLE, 0, t += 1000, pid, pid + 1);
                ev.sample.ip = ip;
                ev.sample.tid = pid + 1;
                hot_event(h, &ev);
                ev = ev_process(KEV_PHASE_END, t += 1000, pid, "gone");
                hot_event(h, &ev);
        }
        hot_refresh(h);
        n = hot_functions_by(h, HOT_SOURCE_TIMER, HOT_BY_PROCESS, false, &rows);
        assert_int_equal(n, keep + 2 + 5);
        hot_caps(h, &caps);
        assert_int_equal(caps.nr_exited_folded, nr_folded);
        hot_reset(h);
        hot_caps(h, &caps);
        assert_int_equal(caps.nr_exited_folded, 0);
        switches_free(sw);
        hot_free(h);
}

/* Unplaced places (no image held them) keep their process to be placed later; at a refresh
   those that have a module move to it, those of ended processes and past HOT_UNPLACED_MAX the
   lightest go into the other row: the sums stay, the unplaced rows stay bounded. */
static void test_hot_unplaced_cap(void **state)
{
        struct fix *fx = *state;
        struct hot *h = hot_new(fx->store, 0);
        const uint32_t base_pid = 5000, nr = HOT_UNPLACED_MAX + 200, nr_ended = 50;
        const uint32_t late_pid = base_pid + nr; /* its image comes after its samples */
        int64_t t = MS(1);
        uint64_t nr_samples = 0;
        for (uint32_t i = 0; i <= nr; i++) {
                uint32_t pid = base_pid + i;
                uint64_t ip = pid == late_pid ? EXE + fx->off_alpha + 4 : 0x400000 + 16ull * i;
                /* the first ten, the heaviest, end: folded all the same */
                for (int k = 0; k < (i < 10 ? 3 : 1); k++) {
                        struct kevent ev = ev_base(KEV_SAMPLE, 0, t += 1000, pid, pid + 1);
                        ev.sample.ip = ip;
                        ev.sample.tid = pid + 1;
                        hot_event(h, &ev);
                        nr_samples++;
                }
        }
        for (uint32_t i = 0; i < nr_ended; i++) {
                struct kevent ev = ev_process(KEV_PHASE_END, t += 1000, base_pid + i, "gone");
                hot_event(h, &ev);
        }
        fix_image(fx, late_pid, EXE);

        const struct hot_row *rows;
        uint32_t n = hot_functions(h, HOT_SOURCE_TIMER, false, &rows);
        assert_int_equal(n, nr + 1);
        hot_refresh(h);
        n = hot_functions(h, HOT_SOURCE_TIMER, false, &rows);
        uint64_t self = 0, total = 0;
        uint32_t nr_unplaced = 0;
        const struct hot_row *other = NULL;
        for (uint32_t i = 0; i < n; i++) {
                self += rows[i].self;
                total += rows[i].total;
                if (!rows[i].module && !rows[i].function && !rows[i].rel)
                        other = &rows[i];
                else if (!rows[i].module)
                        nr_unplaced++;
        }
        assert_int_equal(self, nr_samples);
        assert_int_equal(total, nr_samples);
        assert_int_equal(nr_unplaced, HOT_UNPLACED_MAX);
        assert_non_null(other);
        /* the ended ones (10 of 3 samples, 40 of 1) and the lightest past the cap */
        uint32_t nr_past = nr - nr_ended - HOT_UNPLACED_MAX;
        assert_int_equal(other->self, 10 * 3 + (nr_ended - 10) + nr_past);
        assert_int_equal(n, HOT_UNPLACED_MAX + 2); /* and alpha, placed */
        const struct hot_row *alpha = row_of(rows, n, fx->fn_alpha);
        assert_non_null(alpha);
        assert_int_equal(alpha->self, 1);
        struct hot_caps caps;
        hot_caps(h, &caps);
        assert_int_equal(caps.nr_places_folded, nr_ended + nr_past);
        assert_int_equal(caps.nr_samples_no_room, 0);
        /* a later sample of a place kept still counts there */
        struct kevent ev = ev_base(KEV_SAMPLE, 0, t += 1000, base_pid + nr - 1, 1);
        ev.sample.ip = 0x400000 + 16ull * (nr - 1);
        hot_event(h, &ev);
        hot_refresh(h);
        n = hot_functions(h, HOT_SOURCE_TIMER, false, &rows);
        assert_int_equal(n, HOT_UNPLACED_MAX + 2);
        hot_reset(h);
        hot_caps(h, &caps);
        assert_int_equal(caps.nr_places_folded, 0);

        /* past max_entries: counted in the other row, and said so */
        struct hot *small = hot_new(fx->store, 4);
        for (uint32_t i = 0; i < 10; i++) {
                ev = ev_base(KEV_SAMPLE, 0, t += 1000, PID_A, PID_A + 1);
                ev.sample.ip = 0x500000 + 16ull * i;
                hot_event(small, &ev);
        }
        n = hot_functions(small, HOT_SOURCE_TIMER, false, &rows);
        hot_caps(small, &caps);
        assert_int_equal(caps.nr_samples_no_room, 6);
        /* decaying: the counts go on, and so do the caps'; zeroed each refresh: the counts
           start over at each refresh, as with z, and what the caps did with them */
        hot_set_settings(small, &(struct agg_settings){AGG_DECAYING, 0.5, 0});
        hot_refresh(small);
        hot_caps(small, &caps);
        assert_int_equal(caps.nr_samples_no_room, 6);
        hot_set_settings(small, &(struct agg_settings){AGG_ZEROED, 0, 0});
        hot_refresh(small);
        hot_caps(small, &caps);
        assert_int_equal(caps.nr_samples_no_room, 0);
        hot_free(small);
        hot_free(h);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_hot_top_rows),
                cmocka_unit_test_setup_teardown(test_hot_exited_cap, fix_setup, fix_teardown),
                cmocka_unit_test(test_hot_many_modules),
                cmocka_unit_test(test_hot_top_rows_by),
                cmocka_unit_test_setup_teardown(test_hot_memo_names_loading, fix_setup,
                                                fix_teardown),
                cmocka_unit_test_setup_teardown(test_hot_frame_memo, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_calltree_key_memo, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_calltree_key_memo_unplaced, fix_setup,
                                                fix_teardown),
                cmocka_unit_test_setup_teardown(test_hot_frame_memo_unplaced, fix_setup,
                                                fix_teardown),
                cmocka_unit_test_setup_teardown(test_hot_memo_other_process, fix_setup,
                                                fix_teardown),
                cmocka_unit_test_setup_teardown(test_hot_memo_leaf_only, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_hot_memo_pids_apart, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_hot_leaf_slot_moved, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_hot_answer_memo, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_hot_leaf_frame_memo, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_hot_repeated_stacks, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_hot_memo_leaf_among_callers, fix_setup,
                                                fix_teardown),
                cmocka_unit_test_setup_teardown(test_hot_ties_by_name, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_hot_sample_before_its_thread, fix_setup,
                                                fix_teardown),
                cmocka_unit_test_setup_teardown(test_calltree_trees, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_calltree_leaf_given, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_calltree_callers_given, fix_setup,
                                                fix_teardown),
                cmocka_unit_test_setup_teardown(test_calltree_leaf_given_unnamed, fix_setup,
                                                fix_teardown),
                cmocka_unit_test_setup_teardown(test_calltree_named_late_many, fix_setup,
                                                fix_teardown),
                cmocka_unit_test_setup_teardown(test_calltree_named_late, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_calltree_unplaced_stands, fix_setup,
                                                fix_teardown),
                cmocka_unit_test_setup_teardown(test_calltree_unplaced_jit, fix_setup,
                                                fix_teardown),
                cmocka_unit_test_setup_teardown(test_calltree_top_down_asked, fix_setup,
                                                fix_teardown),
                cmocka_unit_test_setup_teardown(test_calltree_owners_asked, fix_setup,
                                                fix_teardown),
                cmocka_unit_test_setup_teardown(test_calltree_owners, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_calltree_main_thread, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_calltree_decay, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_calltree_memo_other_process, fix_setup,
                                                fix_teardown),
                cmocka_unit_test_setup_teardown(test_calltree_memo_ways, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_calltree_prefetch_stack, fix_setup,
                                                fix_teardown),
                cmocka_unit_test_setup_teardown(test_hot_memo_ways, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_hot_prefetch_sample, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_calltree_evicts_cold, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_calltree_evicts_old, fix_setup, fix_teardown),
                cmocka_unit_test(test_agg_settings),
                cmocka_unit_test(test_agg_filter),
                cmocka_unit_test(test_agg_table),
                cmocka_unit_test(test_agg_table_remove_in_place),
                cmocka_unit_test(test_agg_index),
                cmocka_unit_test_setup_teardown(test_branches_edges, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_branches_flags, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_branches_by_function, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_branches_processes, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_branches_max_entries, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_branches_modes, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_branches_filters, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_switches_times, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_switches_cstates, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_switches_zero, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_switches_blockers, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_switches_repeats, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_switches_pmc, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_switches_processes_and_sorts, fix_setup,
                                                fix_teardown),
                cmocka_unit_test_setup_teardown(test_switches_readiers, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_switches_modes, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_switches_cpu_pct_modes, fix_setup,
                                                fix_teardown),
                cmocka_unit_test_setup_teardown(test_switches_cswitch_off, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_switches_cstates_unknown, fix_setup,
                                                fix_teardown),
                cmocka_unit_test_setup_teardown(test_switches_idle_name, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_switches_filters, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_switches_names_late, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_switches_pid_reuse, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_switches_exit_late, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_switches_cpu_time_late, fix_setup,
                                                fix_teardown),
                cmocka_unit_test_setup_teardown(test_switches_bounds_and_reuse, fix_setup,
                                                fix_teardown),
                cmocka_unit_test_setup_teardown(test_switches_exited_cap, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_hot_unplaced_cap, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_pmc_lbr_together, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_hot_ipc, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_hot_place_keys, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_hot_place_keys_pids, fix_setup, fix_teardown),
                cmocka_unit_test(test_hot_kernel_answers_kept),
                cmocka_unit_test(test_hot_kernel_frames_shared),
                cmocka_unit_test_setup_teardown(test_hot_lines_by_address, fix_setup, fix_teardown),
                cmocka_unit_test(test_recorded_etl),
                cmocka_unit_test(test_profile_source_names),
                cmocka_unit_test_setup_teardown(test_stacks_waiting_count, fix_setup, fix_teardown),
                cmocka_unit_test_setup_teardown(test_readies_waiting_count, fix_setup,
                                                fix_teardown),
                cmocka_unit_test(test_sym_feed_identities_interleaved),
                cmocka_unit_test_setup_teardown(test_hot_sources_declared_order, fix_setup,
                                                fix_teardown),
                cmocka_unit_test(test_profile_switch_stacks_kept_away),
                cmocka_unit_test(test_profile_kernel_symbols_at_end),
                cmocka_unit_test(test_profile_lbr_sources_per_cpu),
                cmocka_unit_test(test_profile_stack_hooks),
                cmocka_unit_test(test_profile_timeline_slices),
                cmocka_unit_test(test_profile_timeline_header_of_centuries),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
