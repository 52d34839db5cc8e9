/* SPDX-License-Identifier: MIT */
/* attr_spec.h: the perf_event_attr specification: the events a session's settings need on this
   machine, as a pure function of the settings and what the machine has (no system call), and
   the settings' check. */
#ifndef ETWTOP_ATTR_SPEC_H
#define ETWTOP_ATTR_SPEC_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/perf_event.h>

#include "live_source.h"
#include "perf_convert.h"

/* The default ring per CPU: 32 MiB over the CPUs, from 512 KiB to 8 MiB each (4 KiB pages).
   Every context switch and wake-up with its call chain is 20-40 MB/s on a CPU of a ping-pong:
   a 2 MiB ring woken at half full overflowed whenever the logger waited 30 ms for a CPU. */
#define LIVE_RING_TOTAL_PAGES 8192u
#define LIVE_RING_MIN_PAGES   128u
#define LIVE_RING_MAX_PAGES   2048u
/* Where the rings can grow at an update (live_spec_env.can_grow_rings), a session's start takes
   what its events need: its side-band alone the smallest ring, timer samples alone a quarter
   second of them at their most (each with a chain of perf_event_max_stack's default
   LIVE_RING_CHAIN_MAX frames), anything else the default. */
#define LIVE_RING_TIMER_DIV     4u
#define LIVE_RING_CHAIN_MAX     127u
#define LIVE_DEFAULT_INTERVAL   10000u /* 1 ms, xperf's default */
#define LIVE_MIN_INTERVAL       100u   /* 10 us: the kernel's cpu-clock floor */
#define LIVE_MAX_INTERVAL       10000000u
#define LIVE_DEFAULT_PMC_PERIOD 65536u
#define LIVE_PROFILE_PMC_HOOK   PERFINFO_LOG_TYPE_PMC_INTERRUPT
#define LIVE_REASON_FRAMES      24u /* kernel frames of a switch-out read for its wait reason */
#define LIVE_PROFILE_HOOK       PERFINFO_LOG_TYPE_SAMPLED_PROFILE

/* What an event is for; one per (role, index, CPU). */
enum live_role {
        ROLE_RING = 0, /* the ring's owner: a dummy event that records nothing itself */
        ROLE_PROC,     /* COMM/FORK/EXIT: PROCESS, THREAD (and IMAGE_LOAD, for forks) */
        ROLE_IMAGE,    /* MMAP2 with build-ids: IMAGE_LOAD */
        ROLE_PROFILE,  /* SampledProfile */
        ROLE_CSWITCH,  /* sched_switch */
        ROLE_READY,    /* sched_waking */
        ROLE_PMC,      /* PMC interrupt, one per profile source (index) */
        ROLE_SWITCH,   /* context switch records: the CSwitch sched_switch did not deliver */
        ROLE_IDLE,     /* power:cpu_idle: the C-state of a CSwitch from the idle thread */
};

/* How to open one event: the attr, the counters of its group, and what the converter needs. */
struct live_spec {
        enum live_role role;
        uint32_t idx;
        const char *what; /* for messages: "cpu-clock", "sched:sched_switch" ... */
        bool is_cpu_wide; /* with -p too: opened once per CPU for every task */
        struct perf_event_attr attr;
        uint32_t nr_members;
        struct perf_event_attr members[LIVE_MAX_SOURCES];
        struct perf_conv_event conv;
};

/* What the specs depend on besides the settings: the machine and what its kernel took. */
struct live_spec_env {
        const struct live_caps *caps; /* borrowed */
        uint32_t nr_online;           /* online CPUs: the default ring's share */
        /* the rings grow at an update whose events need more (rings_grow): a ring is made for
           the events of now, not for the default */
        bool can_grow_rings;
        bool has_inherit_thread; /* attr.inherit_thread accepted (Linux 5.13) */
        bool has_build_id_attr;  /* attr.build_id accepted (Linux 5.12) */
        /* the tracepoints' formats, NULL where tracefs has none (borrowed: the specs point to
           them) */
        const struct perf_tp_format *tp_switch, *tp_waking, *tp_idle;
};

#define ATTR_SPEC_MAX 33 /* the ring's, then 8 roles of up to LIVE_MAX_SOURCES events */

/* Checks settings against this machine. 0 or -errno (-EINVAL, -EOPNOTSUPP) with err filled. */
int attr_spec_check(const struct live_settings *s, const struct live_caps *caps,
                    struct etl_error *err);

/* The spec of (role, idx) under settings s into sp; false when s does not need that event. */
bool attr_spec_build(const struct live_spec_env *env, const struct live_settings *s,
                     enum live_role role, uint32_t idx, struct live_spec *sp);

/* Every event settings s needs, the ring's own first, then in the order they are opened, into
   out (room for ATTR_SPEC_MAX); returns how many. */
uint32_t attr_spec_list(const struct live_spec_env *env, const struct live_settings *s,
                        struct live_spec *out);

/* Whether two specs open the same event, the sampling period aside. */
bool attr_spec_same(const struct live_spec *a, const struct live_spec *b);

/* Whether the events of role are enabled under s's group masks. */
bool attr_spec_role_enabled(const struct live_settings *s, enum live_role role);

/* The data pages of each CPU's ring (a power of 2). */
uint32_t attr_spec_ring_pages(const struct live_spec_env *env, const struct live_settings *s);
/* The bytes of a ring of ring_bytes under s that wake the logger (the ROLE_RING event's
   wakeup_watermark): a half or a quarter of it. */
uint32_t attr_spec_ring_watermark(const struct live_settings *s, uint64_t ring_bytes);

bool attr_spec_wants_cswitch(const struct live_settings *s);
bool attr_spec_wants_ready(const struct live_settings *s);
bool attr_spec_has_hook(const uint16_t *hooks, uint32_t nr, uint16_t hook);
/* The timer's interval in 100 ns units (the default when 0). */
uint32_t attr_spec_interval(const struct live_settings *s);
/* The user stack a DWARF walk copies per sample. */
uint32_t attr_spec_stack_bytes(const struct live_settings *s);
/* A profile source's name (ETW's), or "Source<n>" in buf. */
const char *attr_spec_source_name(uint32_t source, char *buf, size_t size);

#endif
