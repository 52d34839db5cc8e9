/* SPDX-License-Identifier: MIT */
/* test_attr_spec.c: the perf_event_attr specification (backend/linux/attr_spec.c) as a pure
   function: settings and a machine in, the events a session opens out, without perf. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attr_spec.h"
#include "etw/evntrace.h"

static struct live_caps caps;
static struct perf_tp_format tp_switch, tp_waking, tp_idle;
static struct live_spec specs[ATTR_SPEC_MAX];

/* A machine that allows everything but the PMU: root on a VM. */
static struct live_spec_env machine(uint32_t nr_online)
{
        memset(&caps, 0, sizeof(caps));
        caps.has_cpu_wide = caps.has_kernel = caps.has_kallsyms = true;
        caps.nr_cpus = nr_online;
        snprintf(caps.why_no_pmu, sizeof(caps.why_no_pmu), "no PMU here");
        snprintf(caps.why_no_lbr, sizeof(caps.why_no_lbr), "no LBR here");
        tp_switch.id = 300;
        tp_waking.id = 301;
        tp_idle.id = 302;
        return (struct live_spec_env){.caps = &caps,
                                      .nr_online = nr_online,
                                      .has_inherit_thread = true,
                                      .has_build_id_attr = true,
                                      .tp_switch = &tp_switch,
                                      .tp_waking = &tp_waking,
                                      .tp_idle = &tp_idle};
}

/* The screen's default: PROC_THREAD+LOADER+PROFILE+CSWITCH+DISPATCHER, stacks on Profile,
   CSwitch and ReadyThread, the whole system, frame pointers. */
static void defaults(struct live_settings *s)
{
        memset(s, 0, sizeof(*s));
        s->masks.Masks[0] = EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD |
                            EVENT_TRACE_FLAG_IMAGE_LOAD | EVENT_TRACE_FLAG_PROFILE |
                            EVENT_TRACE_FLAG_CSWITCH | EVENT_TRACE_FLAG_DISPATCHER;
        s->nr_stack_hooks = 3;
        s->stack_hooks[0] = PERFINFO_LOG_TYPE_SAMPLED_PROFILE;
        s->stack_hooks[1] = WMI_LOG_TYPE_CONTEXT_SWAP;
        s->stack_hooks[2] = WMI_LOG_TYPE_READY_THREAD;
        s->profile_interval_100ns = 2500; /* 4 kHz */
        s->pid = -1;
}

static const struct live_spec *find(uint32_t n, enum live_role role)
{
        for (uint32_t i = 0; i < n; i++) {
                if (specs[i].role == role)
                        return &specs[i];
        }
        return NULL;
}

static void test_default_session(void **state)
{
        (void)state;
        unsetenv("ETWTOP_RING_PAGES");
        struct live_spec_env env = machine(2);
        struct live_settings s;
        defaults(&s);
        assert_int_equal(attr_spec_check(&s, &caps, NULL), 0);
        uint32_t n = attr_spec_list(&env, &s, specs);
        /* the ring's, comm/task, mmap2, cpu-clock, sched_switch, switch records, sched_waking,
           cpu_idle */
        assert_int_equal(n, 8);
        assert_int_equal(specs[0].role, ROLE_RING);
        for (uint32_t i = 0; i < n; i++) {
                const struct perf_event_attr *a = &specs[i].attr;
                assert_int_equal(a->disabled, 1); /* enabled by the group masks */
                assert_int_equal(a->use_clockid, 1);
                assert_int_equal(a->inherit, 0); /* the whole system */
                assert_int_equal(a->exclude_kernel, 0);
                assert_true(a->read_format & PERF_FORMAT_LOST);
        }
        /* the ring wakes poll(2) at a quarter: 2048 pages on 2 CPUs */
        assert_int_equal(attr_spec_ring_pages(&env, &s), 2048);
        assert_int_equal(specs[0].attr.wakeup_watermark, 2048u * 4096u / 4);

        const struct live_spec *p = find(n, ROLE_PROFILE);
        assert_non_null(p);
        assert_int_equal(p->attr.type, PERF_TYPE_SOFTWARE);
        assert_int_equal(p->attr.config, PERF_COUNT_SW_CPU_CLOCK);
        assert_int_equal(p->attr.sample_period, 250000); /* 2500 x 100 ns */
        assert_true(p->attr.sample_type & PERF_SAMPLE_CALLCHAIN);
        assert_false(p->attr.sample_type & PERF_SAMPLE_STACK_USER); /* frame pointers */
        assert_true(p->conv.has_stack);

        const struct live_spec *cs = find(n, ROLE_CSWITCH);
        assert_non_null(cs);
        assert_int_equal(cs->attr.type, PERF_TYPE_TRACEPOINT);
        assert_int_equal(cs->attr.config, 300);
        assert_int_equal(cs->attr.sample_period, 1);
        assert_true(cs->attr.sample_type & PERF_SAMPLE_RAW);
        assert_ptr_equal(cs->conv.tp, &tp_switch);
        assert_int_equal(find(n, ROLE_READY)->attr.config, 301);
        assert_int_equal(find(n, ROLE_IDLE)->attr.config, 302);
        const struct live_spec *im = find(n, ROLE_IMAGE);
        assert_true(im->attr.mmap && im->attr.mmap2 && im->attr.build_id);
        assert_true(find(n, ROLE_SWITCH)->attr.context_switch);
        assert_true(find(n, ROLE_PROC)->attr.comm && find(n, ROLE_PROC)->attr.task);
        assert_null(find(n, ROLE_PMC)); /* no profile source */

        assert_true(attr_spec_role_enabled(&s, ROLE_READY));
        s.masks.Masks[0] &= ~(uint32_t)EVENT_TRACE_FLAG_DISPATCHER;
        assert_false(attr_spec_role_enabled(&s, ROLE_READY)); /* opened, left disabled */
        assert_true(attr_spec_role_enabled(&s, ROLE_CSWITCH));
}

static void test_stack_walks(void **state)
{
        (void)state;
        struct live_spec_env env = machine(2);
        struct live_settings s;
        defaults(&s);
        s.stack_walk = PERF_CONV_WALK_DWARF;
        uint32_t n = attr_spec_list(&env, &s, specs);
        const struct live_spec *p = find(n, ROLE_PROFILE), *cs = find(n, ROLE_CSWITCH);
        assert_true(p->attr.sample_type & PERF_SAMPLE_STACK_USER);
        assert_true(p->attr.sample_type & PERF_SAMPLE_REGS_USER);
        assert_int_equal(p->attr.sample_stack_user, LIVE_DEFAULT_USER_STACK);
        assert_int_equal(p->attr.exclude_callchain_user, 1);
        assert_true(cs->attr.sample_type & PERF_SAMPLE_STACK_USER); /* every event with stacks */

        /* auto: the sampling events only; a context switch keeps the kernel's chain */
        s.stack_walk = PERF_CONV_WALK_AUTO;
        s.user_stack_bytes = 4096;
        n = attr_spec_list(&env, &s, specs);
        p = find(n, ROLE_PROFILE);
        cs = find(n, ROLE_CSWITCH);
        assert_true(p->attr.sample_type & PERF_SAMPLE_STACK_USER);
        assert_int_equal(p->attr.sample_stack_user, 4096);
        assert_int_equal(p->attr.exclude_callchain_user, 0);
        assert_false(cs->attr.sample_type & PERF_SAMPLE_STACK_USER);
        assert_true(cs->attr.sample_type & PERF_SAMPLE_CALLCHAIN);

        /* no CSwitch stacks: its kernel chain still comes, for the wait reasons */
        s.nr_stack_hooks = 1;
        n = attr_spec_list(&env, &s, specs);
        cs = find(n, ROLE_CSWITCH);
        assert_false(cs->conv.has_stack);
        assert_true(cs->attr.sample_type & PERF_SAMPLE_CALLCHAIN);
        assert_int_equal(cs->attr.exclude_callchain_user, 1);
        assert_int_equal(cs->attr.sample_max_stack, 24);
        assert_false(find(n, ROLE_READY)->conv.has_stack);
}

/* Where the rings grow at an update (can_grow_rings), a session's ring is what its events of now
   need: its side-band alone the smallest; timer samples alone a quarter second of them at their
   most (not the default's 8 MiB the kernel takes and zeroes at the start); a user stack's copy,
   a switch or an overflow event the default. Where they cannot grow: the default always. */
static void test_timer_ring(void **state)
{
        (void)state;
        unsetenv("ETWTOP_RING_PAGES");
        struct live_spec_env env = machine(2);
        env.can_grow_rings = true;
        struct live_settings s;
        defaults(&s);
        s.masks.Masks[0] &= ~(EVENT_TRACE_FLAG_CSWITCH | EVENT_TRACE_FLAG_DISPATCHER);
        s.nr_stack_hooks = 1;
        s.stack_walk = PERF_CONV_WALK_FP;
        /* 4 kHz, chains of 127 frames: 4.7 MB/s, 1.2 MB a quarter second: 2 MiB */
        assert_int_equal(attr_spec_ring_pages(&env, &s), 512);
        /* the logger woken at half of such a ring (its real samples fill that in more than
           a flush's second), at a quarter of any other */
        attr_spec_list(&env, &s, specs);
        assert_int_equal(specs[0].role, ROLE_RING);
        assert_int_equal(specs[0].attr.wakeup_watermark, 512u * 4096u / 2);
        assert_int_equal(attr_spec_ring_watermark(&s, 512u * 4096u), 512u * 4096u / 2);
        s.stack_walk = PERF_CONV_WALK_AUTO; /* stack copies: a quarter */
        assert_int_equal(attr_spec_ring_watermark(&s, 2048u * 4096u), 2048u * 4096u / 4);
        s.stack_walk = PERF_CONV_WALK_FP;
        s.masks.Masks[0] |= EVENT_TRACE_FLAG_DISPATCHER; /* wake-ups: a quarter */
        assert_int_equal(attr_spec_ring_watermark(&s, 2048u * 4096u), 2048u * 4096u / 4);
        s.masks.Masks[0] &= ~EVENT_TRACE_FLAG_DISPATCHER;
        s.nr_stack_hooks = 0; /* no stacks, still bounded: half */
        assert_int_equal(attr_spec_ring_watermark(&s, LIVE_RING_MIN_PAGES * 4096u),
                         LIVE_RING_MIN_PAGES * 4096u / 2);
        s.nr_stack_hooks = 1;
        s.profile_interval_100ns = 10000; /* 1 kHz: the smallest ring */
        assert_int_equal(attr_spec_ring_pages(&env, &s), LIVE_RING_MIN_PAGES);
        s.nr_stack_hooks = 0; /* no stacks: the smallest too */
        s.profile_interval_100ns = 2500;
        assert_int_equal(attr_spec_ring_pages(&env, &s), LIVE_RING_MIN_PAGES);
        s.nr_stack_hooks = 1;
        s.profile_interval_100ns = LIVE_MIN_INTERVAL; /* 100 kHz: never above the default */
        assert_int_equal(attr_spec_ring_pages(&env, &s), 2048);
        s.profile_interval_100ns = 2500;
        s.stack_walk = PERF_CONV_WALK_AUTO; /* 8 KiB of user stack a sample: the default */
        assert_int_equal(attr_spec_ring_pages(&env, &s), 2048);
        s.stack_walk = PERF_CONV_WALK_FP;
        s.min_ring_bytes = 16ull << 20; /* the minimum buffers still raise it */
        assert_int_equal(attr_spec_ring_pages(&env, &s), 2048);
        s.min_ring_bytes = 0;
        s.masks.Masks[0] |= EVENT_TRACE_FLAG_DISPATCHER; /* wake-ups: no bound */
        assert_int_equal(attr_spec_ring_pages(&env, &s), 2048);
        /* the side-band alone (a screen's session at its start) */
        s.masks.Masks[0] =
                EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD | EVENT_TRACE_FLAG_IMAGE_LOAD;
        assert_int_equal(attr_spec_ring_pages(&env, &s), LIVE_RING_MIN_PAGES);
        /* and it wakes the logger at a quarter (no samples: nothing bounds what comes) */
        assert_int_equal(attr_spec_ring_watermark(&s, LIVE_RING_MIN_PAGES * 4096u),
                         LIVE_RING_MIN_PAGES * 4096u / 4);
        /* rings that cannot grow: the default, whatever the events of now */
        env.can_grow_rings = false;
        assert_int_equal(attr_spec_ring_pages(&env, &s), 2048);
        /* 16 CPUs: the default's 2 MiB a CPU already */
        env = machine(16);
        env.can_grow_rings = true;
        defaults(&s);
        s.masks.Masks[0] &= ~(EVENT_TRACE_FLAG_CSWITCH | EVENT_TRACE_FLAG_DISPATCHER);
        s.nr_stack_hooks = 1;
        assert_int_equal(attr_spec_ring_pages(&env, &s), 512);
}

static void test_machine_limits(void **state)
{
        (void)state;
        struct live_spec_env env = machine(16);
        struct live_settings s;
        defaults(&s);
        /* 16 CPUs: 512 pages (2 MiB) each; a user's mlock limit lowers it; the environment's
           choice comes first */
        unsetenv("ETWTOP_RING_PAGES");
        assert_int_equal(attr_spec_ring_pages(&env, &s), 512);
        caps.max_ring_pages = 128;
        assert_int_equal(attr_spec_ring_pages(&env, &s), 128);
        setenv("ETWTOP_RING_PAGES", "64", 1);
        assert_int_equal(attr_spec_ring_pages(&env, &s), 64);
        setenv("ETWTOP_RING_PAGES", "100", 1); /* not a power of 2: ignored */
        assert_int_equal(attr_spec_ring_pages(&env, &s), 128);
        unsetenv("ETWTOP_RING_PAGES");
        s.ring_pages = 32;
        assert_int_equal(attr_spec_ring_pages(&env, &s), 32);

        /* no kernel samples, no tracefs idle event, no inherit_thread */
        env = machine(2);
        caps.has_kernel = false;
        env.tp_idle = NULL;
        env.has_inherit_thread = false;
        defaults(&s);
        s.pid = 1234;
        uint32_t n = attr_spec_list(&env, &s, specs);
        assert_null(find(n, ROLE_IDLE));
        for (uint32_t i = 0; i < n; i++) {
                const struct live_spec *sp = &specs[i];
                assert_int_equal(sp->attr.exclude_kernel, 1);
                assert_int_equal(sp->attr.inherit_thread, 0);
                if (sp->role == ROLE_SWITCH) { /* the whole CPU's switch records */
                        assert_true(sp->is_cpu_wide);
                        assert_int_equal(sp->attr.inherit, 0);
                } else {
                        assert_false(sp->is_cpu_wide);
                        assert_int_equal(sp->attr.inherit, 1); /* -p: its threads */
                }
        }
        /* no tracepoints at all: no CSwitch or ReadyThread events */
        env.tp_switch = env.tp_waking = NULL;
        n = attr_spec_list(&env, &s, specs);
        assert_null(find(n, ROLE_CSWITCH));
        assert_null(find(n, ROLE_READY));
}

/* The session's minimum buffers (MinimumBuffers x BufferSize, xperf's -MinBuffers): a default
   ring grows until the CPUs' rings hold them, a power of 2 of pages a CPU, at most 16 times the
   default's largest; never below the default; a user's mlock limit still caps it; the
   environment's and the settings' own choice come first. */
static void test_min_buffers(void **state)
{
        (void)state;
        uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
        struct live_spec_env env = machine(16);
        struct live_settings s;
        defaults(&s);
        unsetenv("ETWTOP_RING_PAGES");
        s.min_ring_bytes = 32ull * 64 * 1024; /* the API's default: 2 buffers a CPU */
        assert_int_equal(attr_spec_ring_pages(&env, &s), 512);
        s.min_ring_bytes = 4096ull * 64 * 1024; /* 256 MiB: 16 MiB a CPU */
        assert_int_equal(attr_spec_ring_pages(&env, &s), (16ull << 20) / page);
        s.min_ring_bytes = 4096ull * 64 * 1024 + 1; /* a byte more: the next power of 2 */
        assert_int_equal(attr_spec_ring_pages(&env, &s), (32ull << 20) / page);
        s.min_ring_bytes = 1ull << 40; /* at most LIVE_RING_MAX_PAGES x 16 a CPU */
        assert_int_equal(attr_spec_ring_pages(&env, &s), LIVE_RING_MAX_PAGES * 16);
        caps.max_ring_pages = 128;
        assert_int_equal(attr_spec_ring_pages(&env, &s), 128);
        caps.max_ring_pages = 0;
        setenv("ETWTOP_RING_PAGES", "64", 1);
        assert_int_equal(attr_spec_ring_pages(&env, &s), 64);
        unsetenv("ETWTOP_RING_PAGES");
        s.ring_pages = 32;
        assert_int_equal(attr_spec_ring_pages(&env, &s), 32);
        /* 2 CPUs: 8 MiB a CPU by default; 1,024 buffers of 64 KB: 32 MiB a CPU */
        env = machine(2);
        defaults(&s);
        assert_int_equal(attr_spec_ring_pages(&env, &s), 2048);
        s.min_ring_bytes = 1024ull * 64 * 1024;
        assert_int_equal(attr_spec_ring_pages(&env, &s), (32ull << 20) / page);
}

static void test_check(void **state)
{
        (void)state;
        machine(2);
        struct live_settings s;
        struct etl_error err;
        defaults(&s);
        s.profile_interval_100ns = 50;
        assert_int_equal(attr_spec_check(&s, &caps, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "profile interval 50"));
        defaults(&s);
        s.ring_pages = 100;
        assert_int_equal(attr_spec_check(&s, &caps, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "power of 2"));
        defaults(&s);
        s.pid = 0;
        assert_int_equal(attr_spec_check(&s, &caps, &err), -EINVAL);
        defaults(&s);
        s.user_stack_bytes = 12;
        assert_int_equal(attr_spec_check(&s, &caps, &err), -EINVAL);
        /* hardware this machine has not */
        defaults(&s);
        s.nr_profile_sources = 1;
        s.profile_sources[0] = ProfileBranchMispredictions;
        assert_int_equal(attr_spec_check(&s, &caps, &err), -EOPNOTSUPP);
        assert_string_equal(err.msg, "no PMU here");
        defaults(&s);
        s.nr_lbr_hooks = 1;
        s.lbr_hooks[0] = PERFINFO_LOG_TYPE_SAMPLED_PROFILE;
        assert_int_equal(attr_spec_check(&s, &caps, &err), -EOPNOTSUPP);
        assert_string_equal(err.msg, "no LBR here");
        /* a timer source needs none */
        defaults(&s);
        s.nr_profile_sources = 1;
        s.profile_sources[0] = ProfileTime;
        assert_int_equal(attr_spec_check(&s, &caps, &err), 0);
}

static void test_same(void **state)
{
        (void)state;
        struct live_spec_env env = machine(2);
        struct live_settings s, t;
        struct live_spec a, b;
        defaults(&s);
        t = s;
        t.profile_interval_100ns = 10000; /* a new period is an ioctl, not a reopen */
        assert_true(attr_spec_build(&env, &s, ROLE_PROFILE, 0, &a));
        assert_true(attr_spec_build(&env, &t, ROLE_PROFILE, 0, &b));
        assert_int_not_equal(a.attr.sample_period, b.attr.sample_period);
        assert_true(attr_spec_same(&a, &b));
        t = s;
        t.nr_stack_hooks = 0; /* stacks off: reopened */
        assert_true(attr_spec_build(&env, &t, ROLE_PROFILE, 0, &b));
        assert_false(attr_spec_same(&a, &b));
        assert_false(attr_spec_build(&env, &s, ROLE_PROFILE, 1, &b)); /* one timer event */
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_default_session),
                cmocka_unit_test(test_stack_walks),
                cmocka_unit_test(test_machine_limits),
                cmocka_unit_test(test_timer_ring),
                cmocka_unit_test(test_min_buffers),
                cmocka_unit_test(test_check),
                cmocka_unit_test(test_same),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
