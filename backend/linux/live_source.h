/* SPDX-License-Identifier: MIT */
/* live_source.h: the Linux source of a kernel-logger session: perf_event_open events turned into
   the records the NT Kernel Logger writes (LINUX-MAPPING.md, ETL-FORMAT.md sections 2 and 3). */
#ifndef ETWTOP_LIVE_SOURCE_H
#define ETWTOP_LIVE_SOURCE_H

#include <stdbool.h>
#include <stdint.h>

#include "etl_reader.h"
#include "etl_writer.h"
#include "etw/ntwmi.h"

#define LIVE_MAX_STACK_HOOKS    256
#define LIVE_MAX_SOURCES        4      /* TraceProfileSourceConfigInfo, TracePmc*ListInfo */
#define LIVE_MAX_LBR_HOOKS      4      /* EVNTRACE_MAX_LBR_EVENTS */
#define LIVE_DEFAULT_USER_STACK 8192u  /* perf's --call-graph dwarf default */
#define LIVE_MAX_USER_STACK     65528u /* the kernel's limit (a u16, 8-byte aligned) */

/* The real-time priorities (SCHED_FIFO) of a live session's threads, where they are permitted
   (CAP_SYS_NICE, or RLIMIT_RTPRIO), as perf record -r gives its reader: on a busy machine an
   ordinary thread waits seconds for a CPU. The drain's (the logger's) is the higher, so that
   nothing of the session's own keeps it from a CPU: the /proc reader it waits for
   (proc_aside.h) is at it too; the work beside the drain (the rundown's reading of /proc and
   /proc/kallsyms, the host's senders of buffers to consumers) is at the lower one, ahead of
   the machine's ordinary threads but never of the drain. */
#define LIVE_RT_PRIORITY_DRAIN 2
#define LIVE_RT_PRIORITY_ASIDE 1

/* Everything a session collects, as the controller API sets it. */
struct live_settings {
        PERFINFO_GROUPMASK masks; /* Masks[0] = EnableFlags; PERF_* groups in Masks[1..7] */
        uint32_t nr_stack_hooks;  /* TraceStackTracingInfo: hook ids that carry call stacks */
        uint16_t stack_hooks[LIVE_MAX_STACK_HOOKS];
        uint32_t profile_interval_100ns; /* ProfileTime (timer) sampling interval */
        uint32_t nr_profile_sources;     /* PMC sampling sources (TraceProfileSourceConfigInfo) */
        uint32_t profile_sources[LIVE_MAX_SOURCES];  /* KPROFILE_SOURCE */
        uint32_t source_intervals[LIVE_MAX_SOURCES]; /* events per sample of each source */
        uint32_t nr_pmc_hooks;                       /* TracePmcEventListInfo */
        uint16_t pmc_hooks[LIVE_MAX_SOURCES];
        uint32_t nr_pmc_counters;                /* TracePmcCounterListInfo */
        uint32_t pmc_counters[LIVE_MAX_SOURCES]; /* KPROFILE_SOURCE */
        uint32_t lbr_flags;                      /* EVNTRACE_LBR_* (filter bits suppress) */
        uint32_t nr_lbr_hooks;                   /* 0: LBR off */
        uint16_t lbr_hooks[LIVE_MAX_LBR_HOOKS];
        int32_t pid;               /* -1: the whole system; else this process and its threads */
        uint32_t stack_walk;       /* enum perf_conv_walk of the stacks' user part: 0 frame pointers
                                      (the kernel's chains), 1 DWARF, 2 DWARF where the sampled module
                                      has no frame pointers (ETWTOP_TRACE_STACKWALK_INFO) */
        uint32_t user_stack_bytes; /* DWARF: the user stack copied per sample; 0: the default
                                      (LIVE_DEFAULT_USER_STACK); 8..LIVE_MAX_USER_STACK, 8 | it */
        uint32_t ring_pages;       /* per-CPU ring data pages, a power of 2; 0: a default (within
                                      live_caps.max_ring_pages) */
        uint64_t min_ring_bytes;   /* the session's MinimumBuffers x BufferSize: a default ring
                                      (ring_pages 0) grows until the CPUs' rings hold at least
                                      that (a power of 2 of pages a CPU, at most
                                      LIVE_RING_MAX_PAGES x 16, within max_ring_pages) */
};

/* What this machine can do, and why not (LINUX-MAPPING.md 5.4 and the capability probe of
   DESIGN.md). The reasons are sentences for the screen and the error messages. */
struct live_caps {
        bool has_cpu_wide; /* CPU-wide events are allowed (root, CAP_PERFMON, paranoid <= 0) */
        bool has_kernel;   /* kernel samples are allowed */
        bool has_pmu;      /* a hardware PMU: PMC sampling and counters */
        bool has_lbr;      /* branch stacks */
        bool has_kallsyms; /* /proc/kallsyms shows addresses */
        int paranoid;      /* kernel.perf_event_paranoid */
        int kptr_restrict;
        uint32_t nr_cpus;
        /* the kernel's clock tick (1 / CONFIG_HZ) in 100 ns units: the TimerResolution of the
           trace header and the unit of CSwitch NewThreadWaitTime (10000, 1 ms, if unknown) */
        uint32_t timer_resolution_100ns;
        /* the data pages of a CPU's ring this user may lock: kernel.perf_event_mlock_kb less a
           page, rounded down to a power of 2, as perf sizes its rings (512 KiB by default);
           0: no limit (CAP_IPC_LOCK, or perf_event_paranoid -1) */
        uint32_t max_ring_pages;
        char why_no_cpu_wide[160];
        char why_no_pmu[160];
        char why_no_lbr[160];
        char why_no_kallsyms[160];
};

/* Probes the machine (/sys/bus/event_source/devices, caps/branches, perf_event_paranoid,
   kptr_restrict, trial opens of a CPU-wide, a kernel and a hardware event, no tracepoint's: the
   sessions that want tracepoints load them). Never fails; what cannot be known is reported as
   missing. */
void live_probe(struct live_caps *caps);

struct live_stats {
        uint64_t nr_perf_records;     /* read from the rings */
        uint64_t nr_events;           /* ETW records written */
        uint64_t nr_events_lost;      /* exact, PERF_FORMAT_LOST summed over the fds */
        uint64_t nr_lost_cpu_wide;    /* of them, a traced process's session's (-p) on its
                                         CPU-wide events: every process's context switches,
                                         few of them the process's (attr_spec.c) */
        uint64_t nr_lost_records;     /* PERF_RECORD_LOST records seen */
        uint64_t nr_lost_reads;       /* event fds read for their lost counts (an IPI each) */
        uint64_t nr_updates;          /* settings changes applied */
        uint64_t nr_append_failures;  /* ETW records the writer refused (too large for a buffer,
                                         no such writer CPU, a file error): lost */
        uint32_t nr_rundowns_pending; /* 1 while a rundown reads /proc: nothing is converted
                                         until its records are written (live_source_drain) */
        uint64_t ring_bytes;          /* the first CPU's ring's data: what the events need, grown
                                         by an update that needs more (rings_grow.c) */
        uint32_t ring_watermark;      /* its bytes that wake the logger
                                         (attr_spec_ring_watermark) */
};

struct live_source;

/* Opens the events the settings ask for on every CPU, writes the group-mask, profile-interval
   and PMC configuration events, enables collection, and starts the start rundown (DCStart for
   every process, thread and mapped image, from /proc) on a thread of its own: the drains keep
   the rings empty meanwhile and write its records, then what was collected meanwhile, once it
   is done (live_stats.nr_rundowns_pending says when). Records go to w, on the writer CPU of
   the CPU they happened on, timestamped by CLOCK_MONOTONIC nanoseconds (the session clock). Returns
   0 or: -EACCES/-EPERM (a missing privilege: err says what to do: root, CAP_PERFMON or the
   perf_event_paranoid value), -EOPNOTSUPP (no PMU or no LBR: err says which), -ENOENT, -EINVAL,
   -EMFILE, -ENOMEM, with err filled. */
int live_source_open(struct live_source **out, const struct live_settings *settings,
                     struct etl_writer *w, struct etl_error *err);

/* A ring in memory laid out as the kernel maps one: its control page (data_head, data_tail,
   data_offset, data_size: a power of 2) with the records at data_offset. */
struct live_mem_ring {
        uint32_t cpu;
        struct perf_event_mmap_page *meta; /* borrowed; its data_tail is written as a drain
                                              gives the space back */
};

struct perf_conv_event;
struct perf_event_mmap_page;

/* A source over rings in memory rather than perf events (tests and fuzzers: the order and the
   conversion of what the kernel would write): the records' events are events[i] with sample
   id ids[i] (copied), masks say what is written. No rundown at the start; drains, the
   rundown and the close are live_source's (the hooks read /proc for command lines, owners
   and build-ids). Returns 0 or -EINVAL. */
int live_source_open_mem(struct live_source **out, const struct live_mem_ring *rings,
                         uint32_t nr_rings, const struct perf_conv_event *events,
                         const uint64_t *ids, uint32_t nr_events, const PERFINFO_GROUPMASK *masks,
                         struct etl_writer *w);

struct perf_wait_site;
/* The blocking functions' places the converter is given (perf_conv_ops.wait_sites; nr of them,
   sorted by start, copied), as a live session reads them from /proc/kallsyms: a source over
   rings in memory, before its first drain. */
void live_source_set_wait_sites(struct live_source *ls, const struct perf_wait_site *sites,
                                uint32_t nr);

/* A file descriptor to poll(2) for POLLIN: readable when the rings have data. */
int live_source_fd(const struct live_source *ls);

/* Converts up to budget perf records into ETW records, without blocking, in time order across
   the CPUs: the records of every ring stamped up to a horizon (a few milliseconds before now)
   are merged; newer ones wait in their rings for the next drain. Each record goes to the
   buffer of its own CPU. While a rundown reads /proc, it only empties the rings into memory;
   the first drain after it writes the rundown's records. Returns how many were converted (0:
   nothing up to the horizon, or a rundown under way), or -errno. */
int live_source_drain(struct live_source *ls, uint32_t budget);

/* What ControlTrace(FLUSH) delivers: everything collected up to now. A rundown under way is
   finished first (its thread waited for, the rings kept empty meanwhile, its records written,
   then the records it held), then every ring is drained up to now. Blocks for as long as the
   rundown still reads /proc: a flush right after the start (etwtop -b's first frame) otherwise
   had none of the samples of that second. NULL is fine. */
void live_source_flush(struct live_source *ls);

/* Applies new settings to the running source without losing or double counting events:
   group masks by enable/disable, the interval by PERF_EVENT_IOC_PERIOD, stack hooks, sources
   and LBR flags by reopening (make-before-break; break-before-make for LBR); the change is
   stamped into the stream (group-mask events 0x0020 then 0x0005, interval events 0x0F48).
   Returns 0 or -errno with err filled (the old settings stay in force). */
int live_source_update(struct live_source *ls, const struct live_settings *next,
                       struct etl_error *err);

void live_source_get_stats(struct live_source *ls, struct live_stats *st);

/* Writes a rundown of what runs now, as at a stop (DCEnd of every process, thread and image,
   with image identity, and the kernel symbols hit so far), after draining the rings: what makes
   the recent buffers a self-contained file. */
void live_source_rundown(struct live_source *ls);

/* Drains what is left, writes the stop rundown (DCEnd) and etwtop's own events (image identity,
   the kernel symbols the samples hit), and closes everything. NULL is fine. */
void live_source_close(struct live_source *ls);
/* Closes everything without writing: for a session whose end nobody reads (no file, no
   consumer). The records still in the rings go with them; *nr_lost (when not NULL) is what the
   kernel said it dropped until then. NULL is fine. */
void live_source_discard(struct live_source *ls, uint64_t *nr_lost);

#endif
