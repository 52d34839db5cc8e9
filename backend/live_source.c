/* SPDX-License-Identifier: MIT */
/* live_source.c: the Linux kernel-logger session: perf_event_open events, rings, rundown, and
   the settings changes of a running session (LINUX-MAPPING.md 0, 3, 4, 5). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "live_source.h"
#include "kevent.h"
#include "perf_convert.h"
#include "util/kallsyms_text.h"
#include "util/xalloc.h"

/* The default ring per CPU: 32 MiB over the CPUs, from 512 KiB to 8 MiB each (4 KiB pages).
   Every context switch and wake-up with its call chain is 20-40 MB/s on a CPU of a ping-pong:
   a 2 MiB ring woken at half full overflowed whenever the logger waited 30 ms for a CPU. */
#define LIVE_RING_TOTAL_PAGES   8192u
#define LIVE_RING_MIN_PAGES     128u
#define LIVE_RING_MAX_PAGES     2048u
#define LIVE_DEFAULT_INTERVAL   10000u /* 1 ms, xperf's default */
#define LIVE_MIN_INTERVAL       100u   /* 10 us: the kernel's cpu-clock floor */
#define LIVE_MAX_INTERVAL       10000000u
#define LIVE_DEFAULT_PMC_PERIOD 65536u
#define LIVE_MAX_CPUS           4096u
#define LIVE_BUILD_ID_CACHE     4096u
/* A drain converts the records of every CPU stamped up to this long before it, merged in time
   order; newer ones wait for the next drain: a record is stamped before it is written, and may
   not be in its ring yet when the others are read (the kernel stamps and writes it with
   preemption off: microseconds). */
#define LIVE_MERGE_SLACK_NS 2000000ull
#define LIVE_MERGE_ROUND    4096u /* records a CPU per round of a drain's merge */
/* The most a CPU's stage holds of the records taken out of its ring before they are converted
   (during a rundown): seconds of a busy CPU's records with their stacks. */
#define LIVE_STAGE_MAX_BYTES (256ull << 20)
/* The TimerResolution when the kernel's tick cannot be found (live_caps.timer_resolution_100ns
   is what the writers record, backend/session.c): 100 ns units, 1 ms. */
#define LIVE_TIMER_RESOLUTION 10000u
#define LIVE_PROFILE_PMC_HOOK PERFINFO_LOG_TYPE_PMC_INTERRUPT
#define LIVE_REASON_FRAMES    24u /* kernel frames of a switch-out read for its wait reason */
#define LIVE_PROFILE_HOOK     PERFINFO_LOG_TYPE_SAMPLED_PROFILE

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

/* One open event (a group leader with its counters). */
struct live_event {
        struct live_spec spec;
        uint32_t cpu;
        int32_t task; /* perf_event_open's pid: -1 CPU-wide, else one thread of settings.pid */
        int fd;       /* owned */
        int member_fds[LIVE_MAX_SOURCES]; /* owned */
        uint64_t id;
        bool is_enabled;
        bool is_retired; /* replaced by an update; closed once drained */
        bool is_fresh;   /* opened by the update being applied */
};

struct live_ring {
        uint32_t cpu;
        int fd;                            /* borrowed: the ROLE_RING event's */
        struct perf_event_mmap_page *meta; /* owned mapping of map_size bytes */
        size_t map_size;
        uint8_t *data;
        uint64_t data_size;
        uint8_t *stage;          /* owned: records copied out of the ring, not converted yet */
        size_t stage_cap;        /* bytes allocated */
        size_t stage_pos;        /* the first record not converted */
        size_t stage_len;        /* the end of the copied records */
        struct live_item *items; /* owned: the records of one round of a drain */
        uint32_t cap_items;
        uint8_t *bounce; /* owned: the one record of a drain that wraps the ring's end */
        /* one round of a drain (ring_gather, ring_trim, rings_merge, ring_release) */
        uint32_t nr_gathered;           /* items read, up to the horizon, in the ring's order */
        uint32_t nr_taken;              /* the first of them, to convert, then in time order */
        uint32_t next;                  /* the merge's next item */
        uint32_t nr_skipped_tail;       /* records passed over after the last item */
        uint64_t newest_ts;             /* the latest time among the items */
        bool is_sorted;                 /* the items came in time order */
        bool is_capped;                 /* more records were there than the round reads */
        bool is_borrowed;               /* meta is not a mapping of ours (live_source_open_mem) */
        size_t stage_stop;              /* the stage up to here was read */
        uint64_t ring_start, ring_stop; /* the ring from data_tail up to ring_stop was read */
};

struct live_item {
        uint64_t ts;
        const uint8_t *rec; /* borrowed: in the stage, the ring or the bounce buffer */
        uint64_t at;        /* where it starts in the stage or the ring */
        uint32_t size;
        uint32_t nr_skipped : 31; /* records passed over just before it */
        uint32_t is_staged : 1;
        const struct perf_conv_event *ev; /* borrowed: the record's event, NULL when unknown */
};

#define MAX_PERF_RECORD 65536 /* perf_event_header.size is 16 bits */

/* One process, thread or image of a rundown's snapshot of /proc. */
enum rundown_kind { RUNDOWN_PROCESS, RUNDOWN_THREAD, RUNDOWN_IMAGE };

struct rundown_item {
        enum rundown_kind kind;
        union {
                struct perf_conv_process p;
                struct perf_conv_thread t;
                struct perf_conv_image im;
        };
        char *name; /* owned: p.name, t.name */
        char *text; /* owned: p.cmdline, im.path */
        uint8_t build_id[20];
};

/* A rundown under way: its thread reads /proc into items while the drains keep the rings empty
   (rundown_begin, rundown_finish). */
struct live_rundown {
        pthread_t thread;
        bool has_thread;     /* started and not joined */
        bool is_pending;     /* begun, its records not written yet */
        atomic_bool is_done; /* the thread has finished the snapshot */
        int done_fd;         /* owned eventfd, in the epoll set: written when is_done */
        uint64_t ts;
        uint32_t flags; /* EVENT_TRACE_FLAG_PROCESS, _THREAD, _IMAGE_LOAD */
        int32_t pid;    /* settings.pid */
        bool wants_wait_sites;
        bool is_start;
        struct rundown_item *items; /* owned */
        size_t nr_items, cap_items;
};

struct build_id_entry {
        char *path; /* owned; NULL: free */
        uint8_t id[20];
        uint8_t size;
};

struct live_source {
        struct live_settings settings;
        struct live_caps caps;
        struct etl_writer *w; /* borrowed */
        struct perf_conv *conv;
        uint32_t nr_cpus; /* writer CPUs: highest online CPU + 1 */
        uint32_t nr_online;
        uint32_t *online; /* owned: online CPU numbers */
        int32_t *tasks;   /* owned: the threads events are opened on; {-1}: CPU-wide */
        uint32_t nr_tasks;
        struct live_ring *rings;    /* owned, one per online CPU */
        struct live_event **events; /* owned */
        uint32_t nr_events, cap_events;
        struct live_event **by_id; /* owned hash of id -> event (borrowed pointers) */
        uint32_t by_id_mask;
        int epoll_fd;
        struct live_ring **merge_heap; /* owned: nr_online borrowed pointers */
        uint64_t flush_until;          /* 0, or the horizon of every drain (drain_until) */
        uint64_t nr_skipped_again;     /* passed-over records a merge left to read again */
        char tracefs[PATH_MAX];
        struct perf_tp_format tp_switch;
        struct perf_tp_format tp_waking;
        struct perf_tp_format tp_idle;
        bool has_tp_switch, has_tp_waking;
        bool has_tp_idle;          /* optional: without it PreviousCState stays 0 */
        bool has_build_id_attr;    /* attr.build_id accepted */
        bool has_inherit_thread;   /* attr.inherit_thread accepted (else the converter drops
                                      the child processes' records) */
        uint64_t nr_lost_retired;  /* PERF_FORMAT_LOST of events closed by updates */
        uint64_t nr_own_events;    /* records written here rather than by the converter */
        uint64_t nr_damaged_bytes; /* ring bytes dropped after a record header that cannot be */
        uint64_t nr_append_failures;
        struct live_event *id_cache[16]; /* event_by_id's answers by id % 16; reset with by_id */
        uint64_t kernel_text, kernel_text_size; /* kernel_image_probe's; size 0: unknown */
        uint8_t kernel_build_id[20];
        uint32_t kernel_build_id_size;
        uint64_t nr_updates;
        int write_error;
        struct perf_ksym *ksyms; /* owned: the kernel image's text symbols (ksyms_keep) */
        size_t nr_ksyms;
        struct perf_wait_site *wait_sites; /* owned: hook_wait_sites's answer */
        uint32_t nr_wait_sites;
        bool has_wait_sites; /* wait_sites is that answer */
        struct live_rundown rundown;
        char *ksym_names;            /* owned: their names */
        struct build_id_entry *bids; /* owned cache, LIVE_BUILD_ID_CACHE slots */
        uint32_t nr_bids;
        uint8_t rec[PERF_CONV_MAX_RECORD + 256];
};

/* ---- small helpers ---- */

static void set_err(struct etl_error *err, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
static void set_err(struct etl_error *err, const char *fmt, ...)
{
        va_list ap;
        if (!err)
                return;
        err->offset = 0;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        va_end(ap);
}

static const char *errno_name(int e)
{
        switch (e) {
        case EACCES: return "EACCES";
        case EPERM: return "EPERM";
        case ENOENT: return "ENOENT";
        case EOPNOTSUPP: return "EOPNOTSUPP";
        case EINVAL: return "EINVAL";
        case EMFILE: return "EMFILE";
        case ENOMEM: return "ENOMEM";
        case ENODEV: return "ENODEV";
        case EBUSY: return "EBUSY";
        case E2BIG: return "E2BIG";
        case EOVERFLOW: return "EOVERFLOW";
        case ESRCH: return "ESRCH";
        default: return "an error";
        }
}

static uint64_t now_ns(void)
{
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
                               unsigned long flags)
{
        long fd = syscall(__NR_perf_event_open, attr, pid, cpu, group_fd, flags);
        return fd < 0 ? -errno : (int)fd;
}

/* Reads a small file into buf (NUL-terminated); returns its length or -errno. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        size_t n = 0;
        while (n + 1 < size) {
                ssize_t r = read(fd, buf + n, size - 1 - n);
                if (r < 0) {
                        if (errno == EINTR)
                                continue;
                        int e = errno;
                        close(fd);
                        return -e;
                }
                if (r == 0)
                        break;
                n += (size_t)r;
        }
        buf[n] = 0;
        close(fd);
        return (ssize_t)n;
}

static int read_int_file(const char *path, int *value)
{
        char buf[64];
        if (read_small(path, buf, sizeof(buf)) <= 0)
                return -ENOENT;
        *value = atoi(buf);
        return 0;
}

/* ---- CPUs ---- */

/* The online CPUs from /sys/devices/system/cpu/online ("0-3,5"); falls back to 0..n-1. */
static uint32_t online_cpus(uint32_t *cpus, uint32_t max, uint32_t *nr_cpus)
{
        char buf[1024];
        uint32_t n = 0, highest = 0;

        if (read_small("/sys/devices/system/cpu/online", buf, sizeof(buf)) > 0) {
                char *p = buf;
                while (*p && n < max) {
                        char *end;
                        unsigned long a = strtoul(p, &end, 10), b = a;
                        if (end == p)
                                break;
                        p = end;
                        if (*p == '-') {
                                b = strtoul(p + 1, &end, 10);
                                p = end;
                        }
                        for (unsigned long c = a; c <= b && n < max && c < LIVE_MAX_CPUS; c++) {
                                cpus[n++] = (uint32_t)c;
                                highest = (uint32_t)c;
                        }
                        if (*p == ',')
                                p++;
                        else
                                break;
                }
        }
        if (n == 0) {
                long c = sysconf(_SC_NPROCESSORS_ONLN);
                for (long i = 0; i < (c > 0 ? c : 1) && n < max; i++)
                        cpus[n++] = (uint32_t)i;
                highest = n - 1;
        }
        *nr_cpus = highest + 1;
        return n;
}

/* ---- tracefs ---- */

/* Finds tracefs: a mounted tracefs, debugfs/tracing, or the usual places; mounts it at
   /sys/kernel/tracing when nothing is there, as perf does (tools/lib/api/fs). Returns 0 with
   its path in dir, -EACCES when it is there but this user cannot read it (dir: where it is),
   or -ENOENT. */
static int tracefs_find(char *dir, size_t size)
{
        static const char *const tries[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
        char path[PATH_MAX];
        char denied[PATH_MAX] = "";
        FILE *f = fopen("/proc/self/mounts", "re");

        if (f) {
                char line[1024];
                while (fgets(line, sizeof(line), f)) {
                        char dev[256], mnt[512], type[64];
                        if (sscanf(line, "%255s %511s %63s", dev, mnt, type) != 3)
                                continue;
                        if (strcmp(type, "tracefs") == 0)
                                snprintf(path, sizeof(path), "%s", mnt);
                        else if (strcmp(type, "debugfs") == 0)
                                snprintf(path, sizeof(path), "%s/tracing", mnt);
                        else
                                continue;
                        char probe[PATH_MAX + 16];
                        snprintf(probe, sizeof(probe), "%s/events", path);
                        if (access(probe, R_OK) == 0) {
                                fclose(f);
                                snprintf(dir, size, "%s", path);
                                return 0;
                        }
                        if (errno == EACCES && !denied[0] && strcmp(type, "tracefs") == 0)
                                snprintf(denied, sizeof(denied), "%s", path);
                }
                fclose(f);
        }
        for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
                snprintf(path, sizeof(path), "%s/events", tries[i]);
                if (access(path, R_OK) == 0) {
                        snprintf(dir, size, "%s", tries[i]);
                        return 0;
                }
                if (errno == EACCES && !denied[0])
                        snprintf(denied, sizeof(denied), "%s", tries[i]);
        }
        if (denied[0]) {
                snprintf(dir, size, "%s", denied);
                return -EACCES;
        }
        if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0 &&
            access("/sys/kernel/tracing/events", R_OK) == 0) {
                snprintf(dir, size, "%s", "/sys/kernel/tracing");
                return 0;
        }
        return -ENOENT;
}

/* The message of a tracefs_find failure (rc) for what needs it. */
static void cap_msg(char *dst, size_t size, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static void tracefs_msg(char *dst, size_t size, int rc, const char *dir, const char *what)
{
        if (!dst || !size)
                return;
        if (rc == -EACCES)
                cap_msg(dst, size,
                        "%s need the sched tracepoints, but tracefs (%s) is not readable by this "
                        "user: run as root, or `mount -o remount,mode=755 %s`",
                        what, dir, dir);
        else
                cap_msg(dst, size, "%s need tracefs: mount -t tracefs nodev /sys/kernel/tracing",
                        what);
}

static int tracepoint_load(const char *tracefs, const char *name, struct perf_tp_format *fmt)
{
        char path[PATH_MAX + 64];
        char buf[16384];

        snprintf(path, sizeof(path), "%s/events/%s/format", tracefs, name);
        ssize_t n = read_small(path, buf, sizeof(buf));
        if (n <= 0)
                return n < 0 ? (int)n : -ENOENT;
        int rc = perf_tp_format_parse(buf, (size_t)n, fmt);
        if (rc < 0)
                return rc;
        if (fmt->id == 0) {
                int id;
                snprintf(path, sizeof(path), "%s/events/%s/id", tracefs, name);
                if (read_int_file(path, &id) < 0)
                        return -ENOENT;
                fmt->id = (uint32_t)id;
        }
        return 0;
}

/* ---- the capability probe ---- */

static bool pmu_dir(char *name, size_t size)
{
        static const char *const pmus[] = {"cpu", "cpu_core", "cpu_atom", "armv8_pmuv3_0",
                                           "armv8_pmuv3"};
        char path[256];
        for (size_t i = 0; i < sizeof(pmus) / sizeof(pmus[0]); i++) {
                snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s", pmus[i]);
                if (access(path, F_OK) == 0) {
                        snprintf(name, size, "%s", pmus[i]);
                        return true;
                }
        }
        return false;
}

/* A message into a caps reason field, cut to fit. */
static void cap_msg(char *dst, size_t size, const char *fmt, ...)
{
        char buf[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        size_t n = strnlen(buf, size - 1);
        memcpy(dst, buf, n);
        dst[n] = 0;
}

static void base_attr(struct perf_event_attr *a, uint32_t type, uint64_t config)
{
        memset(a, 0, sizeof(*a));
        a->size = sizeof(*a);
        a->type = type;
        a->config = config;
        a->disabled = 1;
}

static int trial_open(struct perf_event_attr *a, pid_t pid, int cpu)
{
        int fd = sys_perf_event_open(a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd >= 0) {
                close(fd);
                return 0;
        }
        return fd;
}

/* The kernel's clock tick in 100 ns units: the resolution of the coarse clocks is the tick,
   TICK_NSEC of CONFIG_HZ (kernel/time/posix-timers.c, posix_get_coarse_res: KTIME_LOW_RES); 4 ms
   at CONFIG_HZ=250. 10000 (1 ms) when it cannot be read or is not a tick (0.1 ms .. 100 ms). */
static uint32_t tick_100ns(void)
{
        struct timespec res;
        if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) < 0 || res.tv_sec != 0 ||
            res.tv_nsec < 100000 || res.tv_nsec > 100000000)
                return LIVE_TIMER_RESOLUTION;
        return (uint32_t)((res.tv_nsec + 50) / 100);
}

/* Whether this process has capability cap in its effective set (/proc/self/status CapEff). */
static bool has_capability(int cap)
{
        char buf[4096];
        if (read_small("/proc/self/status", buf, sizeof(buf)) <= 0)
                return false;
        const char *p = strstr(buf, "\nCapEff:");
        return p && (strtoull(p + 8, NULL, 16) >> cap & 1);
}

/* The data pages of a CPU's ring this user may lock, as perf computes them for its mmap
   (tools/perf/util/evlist.c, perf_event_mlock_kb_in_pages): kernel.perf_event_mlock_kb less one
   page (the control page), in pages, rounded down to a power of 2. The kernel lets a user lock
   that much per online CPU; root (CAP_IPC_LOCK) and perf_event_paranoid -1 have no limit: 0. */
static uint32_t max_ring_pages(int paranoid)
{
        enum { CAP_IPC_LOCK_BIT = 14 };
        if (paranoid < 0 || has_capability(CAP_IPC_LOCK_BIT))
                return 0;
        int mlock_kb = 516;
        read_int_file("/proc/sys/kernel/perf_event_mlock_kb", &mlock_kb);
        long page_kb = sysconf(_SC_PAGESIZE) / 1024;
        if (page_kb <= 0)
                page_kb = 4;
        long pages = (mlock_kb - page_kb) / page_kb;
        uint32_t pow2 = 1;
        while ((long)pow2 * 2 <= pages)
                pow2 *= 2;
        return pow2;
}

void live_probe(struct live_caps *caps)
{
        struct perf_event_attr a;
        uint32_t cpus[LIVE_MAX_CPUS];
        char pmu[64];
        int rc;

        memset(caps, 0, sizeof(*caps));
        caps->paranoid = 2;
        read_int_file("/proc/sys/kernel/perf_event_paranoid", &caps->paranoid);
        caps->kptr_restrict = 0;
        read_int_file("/proc/sys/kernel/kptr_restrict", &caps->kptr_restrict);
        online_cpus(cpus, LIVE_MAX_CPUS, &caps->nr_cpus);

        /* CPU-wide events and kernel samples: a trial open says it best. */
        base_attr(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
        rc = trial_open(&a, -1, (int)cpus[0]);
        caps->has_cpu_wide = rc == 0;
        if (rc < 0)
                cap_msg(caps->why_no_cpu_wide, sizeof(caps->why_no_cpu_wide),
                        "CPU-wide events not allowed (%s, perf_event_paranoid=%d): run as root, "
                        "grant CAP_PERFMON, or sysctl kernel.perf_event_paranoid=0",
                        errno_name(-rc), caps->paranoid);
        base_attr(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
        caps->has_kernel = trial_open(&a, 0, -1) == 0;

        char tracefs[PATH_MAX];
        struct perf_tp_format fmt;
        rc = tracefs_find(tracefs, sizeof(tracefs));
        if (rc < 0) {
                tracefs_msg(caps->why_no_tracepoints, sizeof(caps->why_no_tracepoints), rc, tracefs,
                            "CSwitch and ReadyThread");
        } else if ((rc = tracepoint_load(tracefs, "sched/sched_switch", &fmt)) < 0) {
                tracefs_msg(caps->why_no_tracepoints, sizeof(caps->why_no_tracepoints),
                            rc == -ENOENT ? -ENOENT : -EACCES, tracefs, "CSwitch and ReadyThread");
        } else {
                base_attr(&a, PERF_TYPE_TRACEPOINT, fmt.id);
                a.sample_type = PERF_SAMPLE_RAW;
                a.sample_period = 1;
                rc = trial_open(&a, caps->has_cpu_wide ? -1 : 0,
                                caps->has_cpu_wide ? (int)cpus[0] : -1);
                caps->has_tracepoints = rc == 0;
                if (rc < 0)
                        cap_msg(caps->why_no_tracepoints, sizeof(caps->why_no_tracepoints),
                                "perf_event_open(sched:sched_switch) returned %s: run as root, "
                                "grant CAP_PERFMON, or sysctl kernel.perf_event_paranoid=-1",
                                errno_name(-rc));
        }
        caps->timer_resolution_100ns = tick_100ns();
        caps->max_ring_pages = max_ring_pages(caps->paranoid);

        /* A hardware PMU: the sysfs device and a trial open of the cycles event. */
        bool has_dir = pmu_dir(pmu, sizeof(pmu));
        base_attr(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
        a.exclude_kernel = 1;
        rc = trial_open(&a, 0, -1);
        caps->has_pmu = rc == 0;
        if (!caps->has_pmu)
                cap_msg(caps->why_no_pmu, sizeof(caps->why_no_pmu),
                        "no hardware PMU: perf_event_open(PERF_TYPE_HARDWARE) returned %s%s",
                        errno_name(-rc),
                        has_dir ? "" : " (no cpu PMU in /sys/bus/event_source/devices)");

        char path[256];
        snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/caps/branches",
                 has_dir ? pmu : "cpu");
        int depth = 0;
        if (!caps->has_pmu) {
                cap_msg(caps->why_no_lbr, sizeof(caps->why_no_lbr),
                        "no LBR: no hardware PMU (perf_event_open(PERF_TYPE_HARDWARE) returned "
                        "%s; no %s)",
                        errno_name(-rc), path);
        } else if (read_int_file(path, &depth) < 0 || depth <= 0) {
                cap_msg(caps->why_no_lbr, sizeof(caps->why_no_lbr),
                        "no LBR: %s is missing (no branch records on this CPU or VM)", path);
        } else {
                caps->has_lbr = true;
        }

        /* kallsyms shows addresses when they are not all zero */
        FILE *f = fopen("/proc/kallsyms", "re");
        if (f) {
                char line[256];
                while (fgets(line, sizeof(line), f)) {
                        if (strtoull(line, NULL, 16) != 0) {
                                caps->has_kallsyms = true;
                                break;
                        }
                        if (strstr(line, " _stext"))
                                break;
                }
                fclose(f);
        }
        if (!caps->has_kallsyms)
                cap_msg(caps->why_no_kallsyms, sizeof(caps->why_no_kallsyms),
                        "kernel symbols hidden (kptr_restrict=%d, perf_event_paranoid=%d): run as "
                        "root with kptr_restrict<=1, or grant CAP_SYSLOG",
                        caps->kptr_restrict, caps->paranoid);
}

/* ---- settings ---- */

static bool mask_on(const PERFINFO_GROUPMASK *m, uint32_t flag0, uint32_t group)
{
        return (m->Masks[0] & flag0) ||
               (group && (m->Masks[PERF_GET_MASK_INDEX(group)] & PERF_GET_MASK_GROUP(group)));
}

static bool has_hook(const uint16_t *hooks, uint32_t nr, uint16_t hook)
{
        for (uint32_t i = 0; i < nr; i++) {
                if (hooks[i] == hook)
                        return true;
        }
        return false;
}

static bool wants_profile(const struct live_settings *s)
{
        return mask_on(&s->masks, EVENT_TRACE_FLAG_PROFILE, PERF_PROFILE);
}

/* The data pages of each CPU's ring: the settings', else ETWTOP_RING_PAGES from the environment
   (a power of 2: benchmarks and tests give a small machine the ring a CPU of a big one has),
   else the default for this many CPUs (a power of 2, as mmap wants). */
static uint32_t ring_pages(const struct live_source *ls, const struct live_settings *s)
{
        if (s->ring_pages)
                return s->ring_pages;
        const char *env = getenv("ETWTOP_RING_PAGES");
        unsigned long v = env ? strtoul(env, NULL, 10) : 0;
        if (v && v <= LIVE_RING_MAX_PAGES * 16 && !(v & (v - 1)))
                return (uint32_t)v;
        uint32_t per = LIVE_RING_TOTAL_PAGES / (ls->nr_online ? ls->nr_online : 1);
        uint32_t pages = LIVE_RING_MIN_PAGES;
        while (pages * 2 <= per && pages < LIVE_RING_MAX_PAGES)
                pages *= 2;
        /* an ordinary user locks no more than perf_event_mlock_kb per CPU (perf shrinks its
           rings the same way) */
        if (ls->caps.max_ring_pages && pages > ls->caps.max_ring_pages)
                pages = ls->caps.max_ring_pages;
        return pages;
}

static bool wants_cswitch(const struct live_settings *s)
{
        return mask_on(&s->masks, EVENT_TRACE_FLAG_CSWITCH, PERF_CONTEXT_SWITCH);
}

static bool wants_ready(const struct live_settings *s)
{
        return mask_on(&s->masks, EVENT_TRACE_FLAG_DISPATCHER, PERF_DISPATCHER);
}

static bool wants_pmc_profile(const struct live_settings *s)
{
        return mask_on(&s->masks, 0, PERF_PMC_PROFILE);
}

static bool wants_proc(const struct live_settings *s)
{
        return s->masks.Masks[0] &
               (EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD | EVENT_TRACE_FLAG_IMAGE_LOAD);
}

static bool wants_image(const struct live_settings *s)
{
        return s->masks.Masks[0] & EVENT_TRACE_FLAG_IMAGE_LOAD;
}

static uint32_t interval_of(const struct live_settings *s)
{
        return s->profile_interval_100ns ? s->profile_interval_100ns : LIVE_DEFAULT_INTERVAL;
}

/* KPROFILE_SOURCE -> perf event (LINUX-MAPPING.md 2). -ENOENT for sources with no equivalent. */
static int source_event(uint32_t source, uint32_t *type, uint64_t *config)
{
#define HWC(cache, op, res) ((cache) | (op) << 8 | (res) << 16)
        *type = PERF_TYPE_HARDWARE;
        switch (source) {
        case ProfileTime:
        case 36: /* TimerFixed */
                *type = PERF_TYPE_SOFTWARE;
                *config = PERF_COUNT_SW_CPU_CLOCK;
                return 0;
        case ProfileAlignmentFixup:
                *type = PERF_TYPE_SOFTWARE;
                *config = PERF_COUNT_SW_ALIGNMENT_FAULTS;
                return 0;
        case ProfileTotalIssues:
        case 26: /* InstructionRetired */
        case 33: *config = PERF_COUNT_HW_INSTRUCTIONS; return 0;
        case ProfilePipelineDry: *config = PERF_COUNT_HW_STALLED_CYCLES_FRONTEND; return 0;
        case ProfilePipelineFrozen: *config = PERF_COUNT_HW_STALLED_CYCLES_BACKEND; return 0;
        case ProfileBranchInstructions:
        case 30: *config = PERF_COUNT_HW_BRANCH_INSTRUCTIONS; return 0;
        case ProfileCacheMisses:
        case 29: *config = PERF_COUNT_HW_CACHE_MISSES; return 0;
        case ProfileBranchMispredictions:
        case 31: *config = PERF_COUNT_HW_BRANCH_MISSES; return 0;
        case ProfileTotalCycles:
        case 25:
        case 34: *config = PERF_COUNT_HW_CPU_CYCLES; return 0;
        case 27:
        case 35: *config = PERF_COUNT_HW_REF_CPU_CYCLES; return 0;
        case 28: *config = PERF_COUNT_HW_CACHE_REFERENCES; return 0;
        case ProfileLoadInstructions:
        case ProfileDcacheAccesses:
                *type = PERF_TYPE_HW_CACHE;
                *config = HWC(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ,
                              PERF_COUNT_HW_CACHE_RESULT_ACCESS);
                return 0;
        case ProfileStoreInstructions:
                *type = PERF_TYPE_HW_CACHE;
                *config = HWC(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_WRITE,
                              PERF_COUNT_HW_CACHE_RESULT_ACCESS);
                return 0;
        case ProfileDcacheMisses:
                *type = PERF_TYPE_HW_CACHE;
                *config = HWC(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ,
                              PERF_COUNT_HW_CACHE_RESULT_MISS);
                return 0;
        case ProfileIcacheMisses:
                *type = PERF_TYPE_HW_CACHE;
                *config = HWC(PERF_COUNT_HW_CACHE_L1I, PERF_COUNT_HW_CACHE_OP_READ,
                              PERF_COUNT_HW_CACHE_RESULT_MISS);
                return 0;
        case ProfileIcacheIssues:
                *type = PERF_TYPE_HW_CACHE;
                *config = HWC(PERF_COUNT_HW_CACHE_L1I, PERF_COUNT_HW_CACHE_OP_READ,
                              PERF_COUNT_HW_CACHE_RESULT_ACCESS);
                return 0;
        default: return -ENOENT;
        }
#undef HWC
}

static const char *source_name(uint32_t source, char *buf, size_t size)
{
        const char *n = kevent_pmc_source_name(source);
        if (n)
                return n;
        snprintf(buf, size, "Source%u", source);
        return buf;
}

static bool source_is_hardware(uint32_t source)
{
        uint32_t type = PERF_TYPE_HARDWARE;
        uint64_t config;
        return source_event(source, &type, &config) == 0 && type != PERF_TYPE_SOFTWARE;
}

static bool uses_pmu(const struct live_settings *s)
{
        bool is_hw = s->nr_lbr_hooks > 0;
        for (uint32_t i = 0; i < s->nr_profile_sources; i++)
                is_hw |= source_is_hardware(s->profile_sources[i]);
        for (uint32_t i = 0; i < s->nr_pmc_counters; i++)
                is_hw |= source_is_hardware(s->pmc_counters[i]);
        return is_hw;
}

/* The user stack a DWARF walk copies per sample. */
static uint32_t stack_copy_bytes(const struct live_settings *s)
{
        return s->user_stack_bytes ? s->user_stack_bytes : LIVE_DEFAULT_USER_STACK;
}

/* Checks settings against this machine. 0 or -errno with err filled. */
static int settings_check(const struct live_settings *s, const struct live_caps *caps,
                          struct etl_error *err)
{
        if (s->nr_stack_hooks > LIVE_MAX_STACK_HOOKS || s->nr_profile_sources > LIVE_MAX_SOURCES ||
            s->nr_pmc_hooks > LIVE_MAX_SOURCES || s->nr_pmc_counters > LIVE_MAX_SOURCES ||
            s->nr_lbr_hooks > LIVE_MAX_LBR_HOOKS) {
                set_err(err, "too many stack hooks, profile sources, PMC hooks, counters or LBR "
                             "hooks");
                return -EINVAL;
        }
        uint32_t iv = interval_of(s);
        if (iv < LIVE_MIN_INTERVAL || iv > LIVE_MAX_INTERVAL) {
                set_err(err,
                        "profile interval %u (100 ns units) is out of range: %u (10 us, the "
                        "kernel's cpu-clock floor) to %u",
                        iv, LIVE_MIN_INTERVAL, LIVE_MAX_INTERVAL);
                return -EINVAL;
        }
        if (s->ring_pages & (s->ring_pages - 1)) {
                set_err(err, "ring_pages %u is not a power of 2", s->ring_pages);
                return -EINVAL;
        }
        if (s->stack_walk > PERF_CONV_WALK_AUTO) {
                set_err(err, "stack-walk mode %u is unknown: 0 frame pointers, 1 DWARF, 2 auto",
                        s->stack_walk);
                return -EINVAL;
        }
        if (s->user_stack_bytes % 8 || s->user_stack_bytes > LIVE_MAX_USER_STACK) {
                set_err(err, "a user stack copy of %u bytes: a multiple of 8 up to %u (0: %u)",
                        s->user_stack_bytes, LIVE_MAX_USER_STACK, LIVE_DEFAULT_USER_STACK);
                return -EINVAL;
        }
        if (s->pid < -1 || s->pid == 0) {
                set_err(err, "pid %d: -1 for the whole system or a process id", (int)s->pid);
                return -EINVAL;
        }
        if (s->nr_lbr_hooks) {
                struct perf_lbr_filter f;
                if (perf_lbr_filter_from_etw(s->lbr_flags, &f) < 0) {
                        set_err(err,
                                "LBR flags 0x%x leave nothing to record (kernel and user both "
                                "filtered, every branch type filtered, or an unknown bit)",
                                s->lbr_flags);
                        return -EINVAL;
                }
        }
        if (uses_pmu(s) && !caps->has_pmu) {
                set_err(err, "%s", s->nr_lbr_hooks ? caps->why_no_lbr : caps->why_no_pmu);
                return -EOPNOTSUPP;
        }
        if (s->nr_lbr_hooks && !caps->has_lbr) {
                set_err(err, "%s", caps->why_no_lbr);
                return -EOPNOTSUPP;
        }
        for (uint32_t i = 0; i < s->nr_lbr_hooks; i++) {
                if (s->lbr_hooks[i] != LIVE_PROFILE_HOOK &&
                    s->lbr_hooks[i] != LIVE_PROFILE_PMC_HOOK) {
                        set_err(err,
                                "LBR on hook 0x%04x is not supported: perf attaches branch "
                                "stacks only to hardware sampling events (SampledProfile 0x0F2E, "
                                "PMC interrupt 0x0F2F); other hooks need bpf_get_branch_snapshot",
                                s->lbr_hooks[i]);
                        return -EOPNOTSUPP;
                }
        }
        for (uint32_t i = 0; i < s->nr_profile_sources; i++) {
                uint32_t type;
                uint64_t config;
                if (source_event(s->profile_sources[i], &type, &config) < 0) {
                        set_err(err, "profile source %u has no perf equivalent on Linux",
                                s->profile_sources[i]);
                        return -EOPNOTSUPP;
                }
        }
        for (uint32_t i = 0; i < s->nr_pmc_counters; i++) {
                uint32_t type;
                uint64_t config;
                if (source_event(s->pmc_counters[i], &type, &config) < 0) {
                        set_err(err, "PMC counter %u has no perf equivalent on Linux",
                                s->pmc_counters[i]);
                        return -EOPNOTSUPP;
                }
        }
        return 0;
}

/* ---- event specs ---- */

static void spec_common(const struct live_source *ls, const struct live_settings *s,
                        struct live_spec *sp, uint32_t type, uint64_t config)
{
        struct perf_event_attr *a = &sp->attr;
        base_attr(a, type, config);
        a->sample_type = PERF_CONV_SAMPLE_ID_BITS;
        a->read_format = PERF_FORMAT_ID | PERF_FORMAT_LOST;
        a->sample_id_all = 1;
        a->use_clockid = 1;
        a->clockid = CLOCK_MONOTONIC;
        /* -p: the process's threads, those created later included, not its child processes
           (inherit_thread: only clones with CLONE_THREAD inherit, Linux 5.13) */
        a->inherit = s->pid > 0;
        a->inherit_thread = s->pid > 0 && ls->has_inherit_thread;
        if (!ls->caps.has_kernel) {
                a->exclude_kernel = 1;
                a->exclude_callchain_kernel = 1;
        }
        sp->conv.valid_until = UINT64_MAX;
}

/* Adds the stack, PMC counters and LBR a hook asks for to a sampling event. */
static void spec_hooks(const struct live_settings *s, struct live_spec *sp, uint16_t hook)
{
        struct perf_event_attr *a = &sp->attr;
        sp->conv.sample_type = a->sample_type |= PERF_SAMPLE_IP;
        if (has_hook(s->stack_hooks, s->nr_stack_hooks, hook)) {
                a->sample_type |= PERF_SAMPLE_CALLCHAIN;
                sp->conv.has_stack = true;
                /* dwarf: every event with stacks; auto: the sampling events, whose rate the
                   interval bounds (a context switch's copy at 100,000 switches a second is
                   gigabytes a second the rings cannot hold: their stacks keep the kernel's
                   chain) */
                bool is_sampling = hook == LIVE_PROFILE_HOOK || hook == LIVE_PROFILE_PMC_HOOK;
                if (s->stack_walk == PERF_CONV_WALK_DWARF ||
                    (s->stack_walk == PERF_CONV_WALK_AUTO && is_sampling)) {
                        /* the user registers and stack for the logger's DWARF walk; the
                           kernel's own user chain only where AUTO may keep it */
                        a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
                        a->sample_regs_user = PERF_CONV_REGS_USER_MASK;
                        a->sample_stack_user =
                                s->user_stack_bytes ? s->user_stack_bytes : LIVE_DEFAULT_USER_STACK;
                        a->exclude_callchain_user = s->stack_walk == PERF_CONV_WALK_DWARF;
                        sp->conv.walk = (uint8_t)s->stack_walk;
                        sp->conv.regs_user_mask = PERF_CONV_REGS_USER_MASK;
                }
        }
        if (s->nr_pmc_counters && has_hook(s->pmc_hooks, s->nr_pmc_hooks, hook)) {
                a->sample_type |= PERF_SAMPLE_READ;
                a->read_format |= PERF_FORMAT_GROUP;
                for (uint32_t i = 0; i < s->nr_pmc_counters; i++) {
                        uint32_t type = 0;
                        uint64_t config = 0;
                        source_event(s->pmc_counters[i], &type, &config);
                        struct perf_event_attr *m = &sp->members[sp->nr_members++];
                        memset(m, 0, sizeof(*m));
                        m->size = sizeof(*m);
                        m->type = type;
                        m->config = config;
                        m->read_format = a->read_format;
                        m->inherit = a->inherit;
                        m->inherit_thread = a->inherit_thread;
                        m->exclude_kernel = a->exclude_kernel;
                }
                sp->conv.nr_pmc = s->nr_pmc_counters;
        }
        if (s->nr_lbr_hooks && has_hook(s->lbr_hooks, s->nr_lbr_hooks, hook)) {
                perf_lbr_filter_from_etw(s->lbr_flags, &sp->conv.lbr);
                a->sample_type |= PERF_SAMPLE_BRANCH_STACK;
                a->branch_sample_type = sp->conv.lbr.branch_sample_type;
                sp->conv.has_lbr = true;
                sp->conv.lbr_options = s->lbr_flags;
        }
        sp->conv.sample_type = a->sample_type;
        sp->conv.read_format = a->read_format;
        sp->conv.branch_sample_type = a->branch_sample_type;
}

/* The spec of (role, idx) under settings s; false when s does not need that event. */
static bool spec_build(const struct live_source *ls, const struct live_settings *s,
                       enum live_role role, uint32_t idx, struct live_spec *sp)
{
        memset(sp, 0, sizeof(*sp));
        sp->role = role;
        sp->idx = idx;
        switch (role) {
        case ROLE_RING:
                if (idx)
                        return false;
                sp->what = "the ring's dummy event";
                spec_common(ls, s, sp, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
                /* wake poll(2) when a quarter of the ring is full: a drain takes the whole
                   ring, and the rest is the slack for the logger's wait for a CPU */
                sp->attr.watermark = 1;
                sp->attr.wakeup_watermark = ring_pages(ls, s) * (uint32_t)sysconf(_SC_PAGESIZE) / 4;
                sp->conv.kind = PERF_CONV_SIDEBAND;
                break;
        case ROLE_PROC:
                if (idx)
                        return false;
                sp->what = "the comm/task side-band event";
                spec_common(ls, s, sp, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
                sp->attr.comm = sp->attr.comm_exec = sp->attr.task = 1;
                sp->conv.kind = PERF_CONV_SIDEBAND;
                break;
        case ROLE_SWITCH:
                if (idx)
                        return false;
                sp->what = "the context-switch side-band event";
                spec_common(ls, s, sp, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
                sp->attr.context_switch = 1;
                sp->conv.kind = PERF_CONV_SIDEBAND;
                /* -p: the whole CPU's switch records name the thread each switch-in of the
                   process replaced, and whether it was preempted (a per-thread record names
                   neither); the converter keeps only the process's switches */
                if (s->pid > 0 && ls->caps.has_cpu_wide) {
                        sp->is_cpu_wide = true;
                        sp->attr.inherit = sp->attr.inherit_thread = 0;
                }
                break;
        case ROLE_IMAGE:
                if (idx)
                        return false;
                sp->what = "the mmap2 side-band event";
                spec_common(ls, s, sp, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
                /* mmap2 only picks the record's format: without mmap the kernel never counts
                   the event as wanting mmap records, and none come (perf_event_open(2)) */
                sp->attr.mmap = sp->attr.mmap2 = 1;
                sp->attr.build_id = ls->has_build_id_attr;
                sp->conv.kind = PERF_CONV_SIDEBAND;
                sp->conv.skips_task_records = true; /* ROLE_PROC has them: on with IMAGE_LOAD */
                break;
        case ROLE_PROFILE:
                if (idx)
                        return false;
                if (has_hook(s->lbr_hooks, s->nr_lbr_hooks, LIVE_PROFILE_HOOK)) {
                        /* branch stacks need a hardware trigger: cycles at the timer's rate */
                        sp->what = "the cycles event (LBR trigger of SampledProfile)";
                        spec_common(ls, s, sp, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
                        sp->attr.freq = 1;
                        sp->attr.sample_freq = 10000000ull / interval_of(s);
                } else {
                        sp->what = "cpu-clock";
                        spec_common(ls, s, sp, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
                        sp->attr.sample_period = (uint64_t)interval_of(s) * 100;
                }
                sp->attr.sample_type |= PERF_SAMPLE_PERIOD;
                sp->conv.kind = PERF_CONV_PROFILE;
                spec_hooks(s, sp, LIVE_PROFILE_HOOK);
                break;
        case ROLE_CSWITCH:
        case ROLE_READY:
                if (idx)
                        return false;
                {
                        const struct perf_tp_format *tp =
                                role == ROLE_CSWITCH ? &ls->tp_switch : &ls->tp_waking;
                        bool has = role == ROLE_CSWITCH ? ls->has_tp_switch : ls->has_tp_waking;
                        if (!has)
                                return false;
                        sp->what =
                                role == ROLE_CSWITCH ? "sched:sched_switch" : "sched:sched_waking";
                        spec_common(ls, s, sp, PERF_TYPE_TRACEPOINT, tp->id);
                        sp->attr.sample_period = 1;
                        sp->attr.sample_type |= PERF_SAMPLE_RAW;
                        sp->conv.kind =
                                role == ROLE_CSWITCH ? PERF_CONV_CSWITCH : PERF_CONV_READY_THREAD;
                        sp->conv.tp = tp;
                        spec_hooks(s, sp,
                                   role == ROLE_CSWITCH ? WMI_LOG_TYPE_CONTEXT_SWAP
                                                        : WMI_LOG_TYPE_READY_THREAD);
                        /* the wait reasons come from where a thread left the CPU, whether the
                           CSwitch stacks are written or not: the kernel part of the callchain
                           (its first frames) without a StackWalk */
                        if (role == ROLE_CSWITCH && !sp->conv.has_stack && ls->caps.has_kernel &&
                            ls->caps.has_kallsyms) {
                                sp->attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
                                sp->attr.exclude_callchain_user = 1;
                                sp->attr.sample_max_stack = LIVE_REASON_FRAMES;
                        }
                }
                break;
        case ROLE_IDLE:
                /* CPU-wide only: a traced process's events never see the idle thread */
                if (idx || !ls->has_tp_idle || s->pid > 0)
                        return false;
                sp->what = "power:cpu_idle";
                spec_common(ls, s, sp, PERF_TYPE_TRACEPOINT, ls->tp_idle.id);
                sp->attr.sample_period = 1;
                sp->attr.sample_type |= PERF_SAMPLE_RAW;
                sp->conv.kind = PERF_CONV_CPU_IDLE;
                sp->conv.tp = &ls->tp_idle;
                break;
        case ROLE_PMC: {
                if (idx >= s->nr_profile_sources)
                        return false;
                uint32_t type;
                uint64_t config;
                if (source_event(s->profile_sources[idx], &type, &config) < 0)
                        return false;
                sp->what = "a hardware profile source";
                spec_common(ls, s, sp, type, config);
                sp->attr.sample_period = s->source_intervals[idx] ? s->source_intervals[idx]
                                                                  : LIVE_DEFAULT_PMC_PERIOD;
                sp->attr.sample_type |= PERF_SAMPLE_PERIOD;
                sp->conv.kind = PERF_CONV_PMC_SAMPLE;
                sp->conv.profile_source = (uint16_t)s->profile_sources[idx];
                spec_hooks(s, sp, LIVE_PROFILE_PMC_HOOK);
                break;
        }
        }
        sp->conv.sample_type = sp->attr.sample_type;
        sp->conv.read_format = sp->attr.read_format;
        sp->conv.branch_sample_type = sp->attr.branch_sample_type;
        return true;
}

/* Whether two specs open the same event, the sampling period aside. */
static bool spec_same(const struct live_spec *a, const struct live_spec *b)
{
        struct perf_event_attr x = a->attr, y = b->attr;
        x.sample_period = y.sample_period = 0;
        return memcmp(&x, &y, sizeof(x)) == 0 && a->nr_members == b->nr_members &&
               memcmp(a->members, b->members, sizeof(a->members[0]) * a->nr_members) == 0 &&
               a->conv.has_stack == b->conv.has_stack && a->conv.has_lbr == b->conv.has_lbr &&
               a->conv.lbr_options == b->conv.lbr_options && a->conv.walk == b->conv.walk &&
               a->conv.profile_source == b->conv.profile_source;
}

static bool role_enabled(const struct live_settings *s, enum live_role role)
{
        switch (role) {
        case ROLE_RING: return true;
        case ROLE_PROC: return wants_proc(s);
        case ROLE_IMAGE: return wants_image(s);
        case ROLE_PROFILE: return wants_profile(s);
        case ROLE_CSWITCH:
        case ROLE_SWITCH:
        case ROLE_IDLE: return wants_cswitch(s);
        case ROLE_READY: return wants_ready(s);
        case ROLE_PMC: return wants_pmc_profile(s);
        }
        return false;
}

/* ---- opening events ---- */

/* The message for a failed perf_event_open of what on cpu. */
static int open_error(const struct live_source *ls, int rc, const char *what, uint32_t cpu,
                      struct etl_error *err)
{
        bool needs_tp = ls->has_tp_switch || ls->has_tp_waking;
        switch (-rc) {
        case EACCES:
        case EPERM:
                set_err(err,
                        "perf_event_open(%s, CPU %u) returned %s: run as root, grant "
                        "CAP_PERFMON, or `sysctl kernel.perf_event_paranoid=%d`",
                        what, cpu, errno_name(-rc), needs_tp ? -1 : 0);
                break;
        case ENOENT:
        case EOPNOTSUPP:
                set_err(err, "perf_event_open(%s, CPU %u) returned %s: %s", what, cpu,
                        errno_name(-rc),
                        ls->caps.has_pmu ? "this PMU does not support the event"
                                         : ls->caps.why_no_pmu);
                if (-rc == ENOENT && !ls->caps.has_pmu)
                        rc = -EOPNOTSUPP;
                break;
        case EMFILE:
                set_err(err,
                        "perf_event_open(%s, CPU %u) returned EMFILE: too many open files "
                        "(raise RLIMIT_NOFILE)",
                        what, cpu);
                break;
        default:
                set_err(err, "perf_event_open(%s, CPU %u) returned %s (%s)", what, cpu,
                        errno_name(-rc), strerror(-rc));
                break;
        }
        return rc;
}

static void event_close(struct live_event *ev)
{
        if (!ev)
                return;
        for (uint32_t i = 0; i < ev->spec.nr_members; i++) {
                if (ev->member_fds[i] >= 0)
                        close(ev->member_fds[i]);
        }
        if (ev->fd >= 0)
                close(ev->fd);
        free(ev);
}

static struct live_ring *ring_of(struct live_source *ls, uint32_t cpu)
{
        for (uint32_t i = 0; i < ls->nr_online; i++) {
                if (ls->rings[i].cpu == cpu)
                        return &ls->rings[i];
        }
        return NULL;
}

/* Opens one event (disabled) on cpu for task (-1: every task), with its counters, redirected
   into cpu's ring. */
static int event_open(struct live_source *ls, const struct live_spec *sp, uint32_t cpu,
                      int32_t task, struct live_event **out, struct etl_error *err)
{
        struct live_event *ev = xcalloc(1, sizeof(*ev));
        pid_t pid = task;
        int rc;

        ev->spec = *sp;
        ev->cpu = cpu;
        ev->task = task;
        ev->fd = -1;
        for (uint32_t i = 0; i < LIVE_MAX_SOURCES; i++)
                ev->member_fds[i] = -1;
        rc = sys_perf_event_open(&ev->spec.attr, pid, (int)cpu, -1, PERF_FLAG_FD_CLOEXEC);
        if (rc == -EINVAL && sp->role == ROLE_IMAGE && ev->spec.attr.build_id) {
                /* a kernel before 5.12: no build-ids in MMAP2, read them from the files */
                ls->has_build_id_attr = false;
                ev->spec.attr.build_id = 0;
                rc = sys_perf_event_open(&ev->spec.attr, pid, (int)cpu, -1, PERF_FLAG_FD_CLOEXEC);
        }
        if (rc == -EINVAL && ev->spec.attr.inherit_thread) {
                /* a kernel before 5.13: child processes inherit the events too; the converter
                   keeps the traced process's records only */
                ls->has_inherit_thread = false;
                ev->spec.attr.inherit_thread = 0;
                rc = sys_perf_event_open(&ev->spec.attr, pid, (int)cpu, -1, PERF_FLAG_FD_CLOEXEC);
        }
        if (rc < 0)
                goto fail;
        ev->fd = rc;
        for (uint32_t i = 0; i < sp->nr_members; i++) {
                rc = sys_perf_event_open(&ev->spec.members[i], pid, (int)cpu, ev->fd,
                                         PERF_FLAG_FD_CLOEXEC);
                if (rc < 0)
                        goto fail;
                ev->member_fds[i] = rc;
        }
        if (ioctl(ev->fd, PERF_EVENT_IOC_ID, &ev->id) < 0) {
                rc = -errno;
                goto fail;
        }
        /* the C-states entered, not the exits (state 4294967295): half the records. Where the
           kernel takes no filter, the converter passes the exits over */
        if (sp->role == ROLE_IDLE)
                (void)ioctl(ev->fd, PERF_EVENT_IOC_SET_FILTER, "state != 4294967295");
        if (sp->role != ROLE_RING) {
                struct live_ring *r = ring_of(ls, cpu);
                if (!r || ioctl(ev->fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd) < 0) {
                        rc = r ? -errno : -EINVAL;
                        set_err(err, "PERF_EVENT_IOC_SET_OUTPUT(%s, CPU %u) returned %s", sp->what,
                                cpu, errno_name(-rc));
                        event_close(ev);
                        return rc;
                }
        }
        *out = ev;
        return 0;
fail:
        rc = open_error(ls, rc, sp->what, cpu, err);
        event_close(ev);
        return rc;
}

static void events_add(struct live_source *ls, struct live_event *ev)
{
        if (ls->nr_events == ls->cap_events) {
                uint32_t cap = ls->cap_events ? ls->cap_events * 2 : 32;
                ls->events = xrealloc(ls->events, cap * sizeof(*ls->events));
                ls->cap_events = cap;
        }
        ls->events[ls->nr_events++] = ev;
}

static void by_id_rebuild(struct live_source *ls)
{
        uint32_t cap = 64;
        while (cap < ls->nr_events * 2)
                cap *= 2;
        free(ls->by_id);
        memset(ls->id_cache, 0, sizeof(ls->id_cache));
        ls->by_id = xcalloc(cap, sizeof(*ls->by_id));
        ls->by_id_mask = cap - 1;
        for (uint32_t i = 0; i < ls->nr_events; i++) {
                struct live_event *ev = ls->events[i];
                uint32_t j = (uint32_t)(ev->id * 0x9E3779B97F4A7C15ull >> 32) & ls->by_id_mask;
                while (ls->by_id[j])
                        j = (j + 1) & ls->by_id_mask;
                ls->by_id[j] = ev;
        }
}

static struct live_event *event_by_id(struct live_source *ls, uint64_t id)
{
        /* runs twice a record or more; a session's ids are a few consecutive numbers */
        struct live_event **cached = &ls->id_cache[id & 15];
        if (*cached && (*cached)->id == id)
                return *cached;
        if (!ls->by_id)
                return NULL;
        for (uint32_t j = (uint32_t)(id * 0x9E3779B97F4A7C15ull >> 32) & ls->by_id_mask;;
             j = (j + 1) & ls->by_id_mask) {
                struct live_event *ev = ls->by_id[j];
                if (!ev)
                        return NULL;
                if (ev->id == id)
                        return *cached = ev;
        }
}

/* A live event of (role, idx), the first one: they all have the same spec. */
static struct live_event *event_find(struct live_source *ls, enum live_role role, uint32_t idx)
{
        for (uint32_t i = 0; i < ls->nr_events; i++) {
                struct live_event *ev = ls->events[i];
                if (!ev->is_retired && !ev->is_fresh && ev->spec.role == role &&
                    ev->spec.idx == idx)
                        return ev;
        }
        return NULL;
}

static int event_enable(struct live_event *ev, bool is_on)
{
        if (ev->is_enabled == is_on)
                return 0;
        unsigned long req = is_on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE;
        if (ioctl(ev->fd, req, ev->spec.nr_members ? PERF_IOC_FLAG_GROUP : 0) < 0)
                return -errno;
        ev->is_enabled = is_on;
        return 0;
}

static uint64_t event_lost(const struct live_event *ev)
{
        uint8_t buf[8 * (3 + 3 * (LIVE_MAX_SOURCES + 1))];
        ssize_t n = read(ev->fd, buf, sizeof(buf));
        uint64_t lost = 0;
        if (n > 0)
                perf_read_lost(buf, (size_t)n, ev->spec.attr.read_format, &lost);
        return lost;
}

/* ---- rings ---- */

static int ring_map(struct live_source *ls, struct live_ring *r, struct etl_error *err)
{
        long page = sysconf(_SC_PAGESIZE);
        uint32_t pages = ring_pages(ls, &ls->settings);
        r->map_size = (size_t)(pages + 1) * (size_t)page;
        void *m = mmap(NULL, r->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
        if (m == MAP_FAILED) {
                int e = errno;
                r->meta = NULL;
                if (e == EPERM)
                        set_err(err,
                                "mmap of the %zu KiB ring of CPU %u returned EPERM: over "
                                "kernel.perf_event_mlock_kb; run as root, raise it, or use fewer "
                                "ring pages",
                                r->map_size / 1024, r->cpu);
                else
                        set_err(err, "mmap of the ring of CPU %u returned %s", r->cpu,
                                errno_name(e));
                return -e;
        }
        r->meta = m;
        r->data = (uint8_t *)m + (r->meta->data_offset ? r->meta->data_offset : (uint64_t)page);
        r->data_size = r->meta->data_size ? r->meta->data_size : (uint64_t)pages * (uint64_t)page;
        r->stage_cap = r->data_size;
        r->stage = xcalloc(1, r->stage_cap);
        return 0;
}

static void ring_copy(const struct live_ring *r, uint64_t pos, void *dst, uint64_t n)
{
        uint64_t mask = r->data_size - 1, off = pos & mask;
        uint64_t first = n < r->data_size - off ? n : r->data_size - off;
        memcpy(dst, r->data + off, first);
        if (first < n)
                memcpy((uint8_t *)dst + first, r->data, n - first);
}

static void items_sort(struct live_item *it, uint32_t n)
{
        /* insertion sort: called only when a drain found records out of time order, a few */
        for (uint32_t i = 1; i < n; i++) {
                struct live_item x = it[i];
                uint32_t j = i;
                while (j > 0 && it[j - 1].ts > x.ts) {
                        it[j] = it[j - 1];
                        j--;
                }
                it[j] = x;
        }
}

/* Copies every complete record the ring holds to the end of the stage and releases the ring
   space at once: the kernel never waits for the conversion, and a long rundown can empty the
   rings without converting (ring_take_all). */
static void ring_take(struct live_ring *r)
{
        if (!r->meta)
                return;
        uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
        uint64_t tail = r->meta->data_tail;
        if (head == tail)
                return;
        uint64_t n = head - tail;
        if (n > r->data_size)
                n = r->data_size; /* cannot happen: the kernel never overwrites unread data */
        if (r->stage_len - r->stage_pos + n > LIVE_STAGE_MAX_BYTES)
                return; /* memory stays bounded: the kernel drops, and counts, what is left */
        if (r->stage_pos == r->stage_len) {
                r->stage_pos = r->stage_len = 0;
        } else if (r->stage_pos > r->stage_cap / 2) {
                memmove(r->stage, r->stage + r->stage_pos, r->stage_len - r->stage_pos);
                r->stage_len -= r->stage_pos;
                r->stage_pos = 0;
        }
        if (r->stage_len + n > r->stage_cap) {
                size_t cap = r->stage_cap ? r->stage_cap * 2 : 4096;
                while (cap < r->stage_len + n)
                        cap *= 2;
                r->stage = xrealloc(r->stage, cap);
                r->stage_cap = cap;
        }
        ring_copy(r, head - n, r->stage + r->stage_len, n);
        r->stage_len += n;
        __atomic_store_n(&r->meta->data_tail, head, __ATOMIC_RELEASE);
}

static void ring_take_all(struct live_source *ls)
{
        for (uint32_t c = 0; c < ls->nr_online; c++)
                ring_take(&ls->rings[c]);
}

/* Takes the ring to the stage when it is over half full: a drain behind (the records held
   during a rundown, converted after it) would otherwise read the ring only once the stage is
   converted, and the kernel drop what does not fit meanwhile. */
static void ring_take_if_full(struct live_ring *r)
{
        if (!r->meta)
                return;
        uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
        if (head - r->meta->data_tail > r->data_size / 2)
                ring_take(r);
}

/* Room for one more item of a drain. */
static struct live_item *item_next(struct live_ring *r, uint32_t n)
{
        if (n == r->cap_items) {
                uint32_t cap = r->cap_items ? r->cap_items * 2 : 1024;
                r->items = xrealloc(r->items, cap * sizeof(*r->items));
                r->cap_items = cap;
        }
        return &r->items[n];
}

/* Notes one record of a gather as the ring's next item; false when it is past the horizon
   (it stays for a later drain). */
static bool gather_add(struct live_source *ls, struct live_ring *r, const uint8_t *rec,
                       uint32_t size, uint64_t at, bool is_staged, uint64_t horizon)
{
        const struct perf_conv_event *ev;
        uint32_t cpu;
        uint64_t ts = perf_conv_record_time_ev(ls->conv, rec, size, r->cpu, &cpu, &ev);
        if (ts > horizon)
                return false;
        /* a sample with a user stack copy is KiBs of bytes the kernel just wrote: its fields
           past the first line (registers, the copy's size) and its last (the bytes the copy
           holds) are asked for now, and have come by the time the merge converts it */
        if (size > 512) {
                for (uint32_t off = 64; off < 320; off += 64)
                        __builtin_prefetch(rec + off);
                __builtin_prefetch(rec + size - 8);
        }
        struct live_item *it = item_next(r, r->nr_gathered);
        it->ts = ts;
        it->rec = rec;
        it->at = at;
        it->size = size;
        it->is_staged = is_staged;
        it->nr_skipped = r->nr_skipped_tail & 0x7FFFFFFFu;
        it->ev = ev;
        r->nr_skipped_tail = 0;
        r->is_sorted = r->is_sorted && ts >= r->newest_ts;
        if (ts > r->newest_ts)
                r->newest_ts = ts;
        r->nr_gathered++;
        return true;
}

/* Gathers up to max records of one ring that happened at or before the horizon, in the ring's
   order: first what a rundown took to the stage, then what the ring holds, read in place (a
   copy of every byte to the stage was the biggest memcpy of the live pipeline). Nothing is
   converted or released yet: ring_release does it for the records a merge converted. */
static void ring_gather(struct live_source *ls, struct live_ring *r, uint32_t max, uint64_t horizon)
{
        r->nr_gathered = r->nr_taken = r->next = 0;
        r->nr_skipped_tail = 0;
        r->newest_ts = 0;
        r->is_sorted = true;
        r->is_capped = false;
        r->stage_stop = r->stage_pos;
        r->ring_start = r->ring_stop = r->meta ? r->meta->data_tail : 0;
        if (!r->meta)
                return;

        /* the stage */
        size_t pos = r->stage_pos, end = r->stage_len;
        while (end - pos >= sizeof(struct perf_event_header)) {
                const struct perf_event_header *h = (const void *)(r->stage + pos);
                if (h->size < sizeof(*h) || h->size > end - pos) {
                        ls->nr_damaged_bytes += end - pos;
                        pos = end; /* damaged: drop the rest */
                        break;
                }
                if (r->nr_gathered == max) {
                        r->is_capped = true;
                        break;
                }
                if (!gather_add(ls, r, r->stage + pos, h->size, pos, true, horizon))
                        break;
                pos += h->size;
        }
        r->stage_stop = pos;
        if (end - pos >= sizeof(struct perf_event_header) || r->is_capped)
                return; /* the ring's records are newer than what stays in the stage */
        r->stage_stop = end;

        /* the ring, in place */
        uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
        uint64_t rpos = r->ring_start;
        uint64_t mask = r->data_size - 1;
        bool is_bounced = false;
        while (head - rpos >= sizeof(struct perf_event_header)) {
                /* records are 8-byte aligned: a header never wraps */
                const struct perf_event_header *h = (const void *)(r->data + (rpos & mask));
                if (h->size < sizeof(*h) || h->size > head - rpos) {
                        ls->nr_damaged_bytes += head - rpos;
                        rpos = head; /* damaged: drop the rest */
                        break;
                }
                const uint8_t *rec = r->data + (rpos & mask);
                bool is_wrapped = (rpos & mask) + h->size > r->data_size;
                if (!is_wrapped && perf_conv_skips(ls->conv, rec, h->size)) {
                        r->nr_skipped_tail++;
                        rpos += h->size;
                        continue;
                }
                if (r->nr_gathered == max) {
                        r->is_capped = true;
                        break;
                }
                if (is_wrapped) {
                        if (is_bounced) {
                                r->is_capped = true; /* a second wrap in one drain: the next */
                                break;
                        }
                        if (!r->bounce)
                                r->bounce = xcalloc(1, MAX_PERF_RECORD);
                        ring_copy(r, rpos, r->bounce, h->size);
                        rec = r->bounce;
                }
                if (!gather_add(ls, r, rec, h->size, rpos, false, horizon))
                        break;
                is_bounced = is_bounced || is_wrapped;
                rpos += h->size;
        }
        r->ring_stop = rpos;
}

/* Keeps the gathered records of a ring up to the merge's horizon: those before the first one
   past it, in the ring's order (a record the merge leaves is read again by the next drain),
   in time order. */
static void ring_trim(struct live_source *ls, struct live_ring *r, uint64_t horizon)
{
        uint32_t n = 0;
        if (r->newest_ts <= horizon) {
                n = r->nr_gathered;
        } else {
                while (n < r->nr_gathered && r->items[n].ts <= horizon)
                        n++;
                /* the skip-over records behind the first one left are read (and counted)
                   again */
                for (uint32_t i = n + 1; i < r->nr_gathered; i++)
                        ls->nr_skipped_again += r->items[i].nr_skipped;
                ls->nr_skipped_again += r->nr_skipped_tail;
        }
        r->nr_taken = n;
        if (!r->is_sorted)
                items_sort(r->items, n);
}

/* Gives back what the merge converted of a ring: the stage and ring space before the first
   gathered record left (all of it when none was left). */
static void ring_release(struct live_ring *r)
{
        if (!r->meta)
                return;
        if (r->nr_taken < r->nr_gathered) {
                /* the first record left in the ring's order: the lowest place (sorting moved
                   only the records taken, which are all before it) */
                const struct live_item *first = &r->items[r->nr_taken];
                if (first->is_staged) {
                        r->stage_stop = first->at;
                        r->ring_stop = r->ring_start;
                } else {
                        r->ring_stop = first->at;
                }
        }
        r->stage_pos = r->stage_stop;
        if (r->stage_pos == r->stage_len)
                r->stage_pos = r->stage_len = 0;
        if (r->ring_stop != r->ring_start)
                __atomic_store_n(&r->meta->data_tail, r->ring_stop, __ATOMIC_RELEASE);
}

static inline uint64_t head_ts(const struct live_ring *r)
{
        return r->items[r->next].ts;
}

static void heap_down(struct live_ring **heap, uint32_t n, uint32_t i)
{
        struct live_ring *x = heap[i];
        for (;;) {
                uint32_t k = 2 * i + 1;
                if (k >= n)
                        break;
                if (k + 1 < n && head_ts(heap[k + 1]) < head_ts(heap[k]))
                        k++;
                if (head_ts(heap[k]) >= head_ts(x))
                        break;
                heap[i] = heap[k];
                i = k;
        }
        heap[i] = x;
}

/* Converts the taken records of every ring in time order across the CPUs (a k-way merge: the
   converter's process, thread and image tables need a fork before the exec of its child on
   another CPU). Each record goes to its own CPU's buffer. Returns how many. */
static uint32_t rings_merge(struct live_source *ls)
{
        struct live_ring **heap = ls->merge_heap;
        uint32_t n = 0, total = 0;
        for (uint32_t c = 0; c < ls->nr_online; c++) {
                if (ls->rings[c].nr_taken)
                        heap[n++] = &ls->rings[c];
        }
        for (uint32_t i = n / 2; i-- > 0;)
                heap_down(heap, n, i);
        while (n) {
                struct live_ring *r = heap[0];
                /* the run of this ring up to the next ring's first record */
                uint64_t limit = UINT64_MAX;
                if (n > 1)
                        limit = head_ts(heap[1]);
                if (n > 2 && head_ts(heap[2]) < limit)
                        limit = head_ts(heap[2]);
                do {
                        const struct live_item *it = &r->items[r->next++];
                        perf_conv_record_ev(ls->conv, r->cpu, it->rec, it->size, it->ev);
                        total++;
                } while (r->next < r->nr_taken && head_ts(r) <= limit);
                if (r->next == r->nr_taken)
                        heap[0] = heap[--n];
                heap_down(heap, n, 0);
        }
        return total;
}

/* The time up to which a drain converts: records of the last LIVE_MERGE_SLACK_NS may still be
   on their way into another CPU's ring (a record is stamped before it is written), and wait for
   the next drain. */
static uint64_t drain_horizon(const struct live_source *ls)
{
        if (ls->flush_until)
                return ls->flush_until;
        uint64_t t = now_ns();
        return t > LIVE_MERGE_SLACK_NS ? t - LIVE_MERGE_SLACK_NS : 0;
}

/* Drains every ring up to until (UINT64_MAX: everything): what must be converted before a
   rundown, a settings change or the close. */
static bool rundown_finish(struct live_source *ls, bool wait);

static void drain_until(struct live_source *ls, uint64_t until)
{
        rundown_finish(ls, true);
        uint64_t saved = ls->flush_until;
        ls->flush_until = until;
        while (live_source_drain(ls, UINT32_MAX / 2) > 0)
                ;
        ls->flush_until = saved;
}

static void drain_all(struct live_source *ls)
{
        drain_until(ls, now_ns());
}

/* ---- the converter's hooks ---- */

static int hook_emit(void *ctx, uint32_t cpu, const void *rec, uint32_t size)
{
        struct live_source *ls = ctx;
        int rc = etl_writer_append(ls->w, cpu, rec, size);
        if (rc < 0)
                ls->nr_append_failures++;
        if (rc < 0 && rc != -E2BIG && !ls->write_error)
                ls->write_error = rc;
        return 0; /* the writer keeps going; so does the conversion */
}

static const struct perf_conv_event *hook_event_of(void *ctx, uint64_t id)
{
        struct live_event *ev = event_by_id(ctx, id);
        return ev ? &ev->spec.conv : NULL;
}

static void read_cmdline(uint32_t pid, char *buf, size_t size)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
        ssize_t n = read_small(path, buf, size);
        if (n <= 0) {
                buf[0] = 0;
                return;
        }
        while (n > 0 && buf[n - 1] == 0)
                n--;
        for (ssize_t i = 0; i < n; i++) {
                if (buf[i] == 0)
                        buf[i] = ' ';
        }
        buf[n] = 0;
}

static void hook_cmdline_of(void *ctx, uint32_t pid, char *buf, size_t size)
{
        (void)ctx;
        read_cmdline(pid, buf, size);
}

/* The effective uid of pid (the second of /proc/PID/status's Uid: real, effective, saved, fs),
   PERF_CONV_NO_UID when it cannot be read. */
static uint32_t read_uid(uint32_t pid)
{
        char path[64], buf[2048];
        snprintf(path, sizeof(path), "/proc/%u/status", pid);
        if (read_small(path, buf, sizeof(buf)) <= 0)
                return PERF_CONV_NO_UID;
        const char *p = strstr(buf, "\nUid:");
        unsigned long real, effective;
        if (!p || sscanf(p + 5, "%lu %lu", &real, &effective) != 2 || effective >= UINT32_MAX)
                return PERF_CONV_NO_UID;
        return (uint32_t)effective;
}

static uint32_t hook_uid_of(void *ctx, uint32_t pid)
{
        (void)ctx;
        return read_uid(pid);
}

/* The GNU build-id note of an ELF file (NT_GNU_BUILD_ID in a PT_NOTE segment). */
static uint32_t elf_build_id(const char *path, uint8_t *id, uint32_t max)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        uint8_t eh[64];
        uint32_t found = 0;

        if (fd < 0)
                return 0;
        if (pread(fd, eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || memcmp(eh, "\177ELF", 4) ||
            eh[4] != 2 /* ELFCLASS64 */ || eh[5] != 1 /* little-endian */)
                goto out;
        uint64_t phoff;
        uint16_t phentsize, phnum;
        memcpy(&phoff, eh + 32, 8);
        memcpy(&phentsize, eh + 54, 2);
        memcpy(&phnum, eh + 56, 2);
        if (phentsize < 56 || phnum > 256)
                goto out;
        for (uint16_t i = 0; i < phnum && !found; i++) {
                uint8_t ph[56];
                if (pread(fd, ph, sizeof(ph), (off_t)(phoff + (uint64_t)i * phentsize)) !=
                    (ssize_t)sizeof(ph))
                        break;
                uint32_t type;
                uint64_t off, filesz;
                memcpy(&type, ph, 4);
                memcpy(&off, ph + 8, 8);
                memcpy(&filesz, ph + 32, 8);
                if (type != 4 /* PT_NOTE */ || filesz > 65536)
                        continue;
                uint8_t notes[65536];
                ssize_t got = pread(fd, notes, (size_t)filesz, (off_t)off);
                if (got <= 0)
                        continue;
                for (size_t p = 0; p + 12 <= (size_t)got;) {
                        uint32_t namesz, descsz, ntype;
                        memcpy(&namesz, notes + p, 4);
                        memcpy(&descsz, notes + p + 4, 4);
                        memcpy(&ntype, notes + p + 8, 4);
                        size_t name_off = p + 12, desc_off = name_off + ((namesz + 3u) & ~3u);
                        if (desc_off + descsz > (size_t)got || namesz > 256)
                                break;
                        if (ntype == 3 && namesz == 4 && memcmp(notes + name_off, "GNU", 4) == 0) {
                                found = descsz < max ? descsz : max;
                                memcpy(id, notes + desc_off, found);
                                break;
                        }
                        p = desc_off + ((descsz + 3u) & ~3u);
                }
        }
out:
        close(fd);
        return found;
}

static uint64_t str_hash(const char *s)
{
        uint64_t h = 1469598103934665603ull;
        for (; *s; s++)
                h = (h ^ (uint8_t)*s) * 1099511628211ull;
        return h;
}

static uint32_t build_id_cached(struct live_source *ls, const char *path, uint8_t *id, uint32_t max)
{
        uint32_t mask = LIVE_BUILD_ID_CACHE - 1;
        uint32_t i = (uint32_t)str_hash(path) & mask;
        for (;; i = (i + 1) & mask) {
                struct build_id_entry *e = &ls->bids[i];
                if (!e->path)
                        break;
                if (strcmp(e->path, path) == 0) {
                        uint32_t n = e->size < max ? e->size : max;
                        memcpy(id, e->id, n);
                        return n;
                }
        }
        uint8_t tmp[20];
        uint32_t n = elf_build_id(path, tmp, sizeof(tmp));
        if (ls->nr_bids < LIVE_BUILD_ID_CACHE / 2) {
                struct build_id_entry *e = &ls->bids[i];
                e->path = xstrdup(path);
                memcpy(e->id, tmp, n);
                e->size = (uint8_t)n;
                ls->nr_bids++;
        }
        n = n < max ? n : max;
        memcpy(id, tmp, n);
        return n;
}

static uint32_t hook_build_id_of(void *ctx, const char *path, uint8_t *id, uint32_t max)
{
        return build_id_cached(ctx, path, id, max);
}

/* ---- records written by the source itself ---- */

static void own_append(struct live_source *ls, uint32_t cpu, uint32_t size)
{
        ls->nr_own_events++;
        hook_emit(ls, cpu, ls->rec, size);
}

static void write_interval_rundown(struct live_source *ls, uint16_t hook, uint64_t ts,
                                   const struct live_settings *s, const struct live_settings *old)
{
        char buf[32];
        uint32_t iv = interval_of(s);
        own_append(ls, 0,
                   perf_etw_profile_interval(ls->rec, hook, ts, ProfileTime, iv,
                                             old ? interval_of(old) : iv, "Timer"));
        for (uint32_t i = 0; i < s->nr_profile_sources; i++) {
                uint32_t v =
                        s->source_intervals[i] ? s->source_intervals[i] : LIVE_DEFAULT_PMC_PERIOD;
                own_append(ls, 0,
                           perf_etw_profile_interval(
                                   ls->rec, hook, ts, s->profile_sources[i], v, v,
                                   source_name(s->profile_sources[i], buf, sizeof(buf))));
        }
}

static void write_pmc_config(struct live_source *ls, uint64_t ts)
{
        const char *names[LIVE_MAX_SOURCES];
        char bufs[LIVE_MAX_SOURCES][32];
        const struct live_settings *s = &ls->settings;
        if (!s->nr_pmc_counters)
                return;
        for (uint32_t i = 0; i < s->nr_pmc_counters; i++)
                names[i] = source_name(s->pmc_counters[i], bufs[i], sizeof(bufs[i]));
        own_append(ls, 0, perf_etw_pmc_config(ls->rec, ts, names, s->nr_pmc_counters));
}

/* ---- rundown from /proc ---- */

/* Parses /proc/PID/stat: comm, ppid, session and the priority (kernel prio - 100). */
static bool proc_stat(const char *path, char *comm, size_t comm_size, uint32_t *ppid,
                      uint32_t *session, int64_t *prio)
{
        char buf[1024];
        if (read_small(path, buf, sizeof(buf)) <= 0)
                return false;
        char *open_paren = strchr(buf, '('), *close_paren = strrchr(buf, ')');
        if (!open_paren || !close_paren || close_paren < open_paren)
                return false;
        size_t n = (size_t)(close_paren - open_paren - 1);
        if (n >= comm_size)
                n = comm_size - 1;
        memcpy(comm, open_paren + 1, n);
        comm[n] = 0;
        /* fields after the comm: state ppid pgrp session tty tpgid flags minflt cminflt majflt
           cmajflt utime stime cutime cstime priority */
        char state;
        long pp = 0, pgrp = 0, sess = 0, skip, prio_v = 20;
        int got = sscanf(close_paren + 2,
                         "%c %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld", &state,
                         &pp, &pgrp, &sess, &skip, &skip, &skip, &skip, &skip, &skip, &skip, &skip,
                         &skip, &skip, &skip, &prio_v);
        if (got < 4)
                return false;
        *ppid = (uint32_t)pp;
        *session = (uint32_t)sess;
        *prio = got >= 16 ? prio_v + 100 : -1;
        return true;
}

/* Room for one more item of the rundown's snapshot. */
static struct rundown_item *rundown_add(struct live_rundown *rd, enum rundown_kind kind)
{
        if (rd->nr_items == rd->cap_items) {
                rd->cap_items = rd->cap_items ? rd->cap_items * 2 : 256;
                rd->items = xrealloc(rd->items, rd->cap_items * sizeof(*rd->items));
        }
        struct rundown_item *it = &rd->items[rd->nr_items++];
        memset(it, 0, sizeof(*it));
        it->kind = kind;
        return it;
}

static void rundown_images(struct live_source *ls, struct live_rundown *rd, uint32_t pid)
{
        char path[64], line[PATH_MAX + 256];
        snprintf(path, sizeof(path), "/proc/%u/maps", pid);
        FILE *f = fopen(path, "re");
        if (!f)
                return;
        while (fgets(line, sizeof(line), f)) {
                unsigned long long start, end, off;
                char perms[8];
                int name_at = 0;
                if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &off,
                           &name_at) < 4 ||
                    perms[2] != 'x' || name_at == 0)
                        continue;
                char *name = line + name_at;
                name[strcspn(name, "\n")] = 0;
                if (!name[0] || strcmp(name, "[vsyscall]") == 0)
                        continue;
                struct rundown_item *it = rundown_add(rd, RUNDOWN_IMAGE);
                uint32_t bid_size =
                        name[0] == '/' ? build_id_cached(ls, name, it->build_id, 20) : 0;
                it->text = xstrdup(name);
                it->im = (struct perf_conv_image){
                        pid,
                        start,
                        end - start,
                        off,
                        it->text,
                        NULL, /* it->build_id, set as it is written: the items move */
                        bid_size,
                        ETWTOP_IMAGE_FLAG_RUNDOWN | (bid_size ? ETWTOP_IMAGE_FLAG_BUILD_ID_FROM_FILE : 0)};
        }
        fclose(f);
}

static void drain_between(void *ctx)
{
        drain_all(ctx);
}

/* /proc/kallsyms whole, NUL-terminated (owned by the caller), its length in *len; NULL when it
   cannot be read. The kernel formats it as it is read, about 40 ms for the whole: with ls, the
   events may be on, and the rings are emptied between reads of 64 KiB. The process reads it once
   while modules stay (util/kallsyms_text.h): the screen's symbols read it at the start. */
static char *kallsyms_read(struct live_source *ls, size_t *len_out)
{
        return kallsyms_text_read(len_out, ls ? drain_between : NULL, ls);
}

/* Aliases (one address, several names) keep their kallsyms order: names lie in text in that
   order, so a stable sort whatever qsort is. */
static int ksym_cmp(const void *a, const void *b)
{
        const struct perf_ksym *x = a, *y = b;
        if (x->addr != y->addr)
                return x->addr < y->addr ? -1 : 1;
        return x->name < y->name ? -1 : x->name > y->name;
}

/* The text symbols of kallsyms text (cut into names in place), sorted by address and sized to
   the next one (4 KiB when that is over 1 MiB away). Returns an owned array of *nr. */
static struct perf_ksym *ksyms_parse(char *text, size_t *nr_out)
{
        size_t nr = 0, cap_syms = 1 << 16;
        struct perf_ksym *syms = xcalloc(cap_syms, sizeof(*syms));
        char *end = text + strlen(text);
        for (char *line = text, *nl; line < end; line = nl + 1) {
                /* "ADDR TYPE NAME" or "ADDR TYPE NAME\t[MODULE]": one pass over the line */
                nl = memchr(line, '\n', (size_t)(end - line));
                if (!nl)
                        nl = end;
                *nl = 0;
                uint64_t addr = 0;
                char *p = line;
                for (;; p++) {
                        unsigned c = (unsigned char)*p, d = c - '0', x = (c | 0x20) - 'a';
                        if (d < 10)
                                addr = addr << 4 | d;
                        else if (x < 6)
                                addr = addr << 4 | (x + 10);
                        else
                                break;
                }
                if (p == line || p[0] != ' ' || !p[1] || p[2] != ' ')
                        continue;
                char type = p[1];
                if (type != 't' && type != 'T' && type != 'w' && type != 'W')
                        continue;
                char *name = p + 3, *mod = strchr(name, '\t');
                if (mod) {
                        *mod++ = 0;
                        mod[strcspn(mod, " ")] = 0;
                }
                /* __pfx_ and __cfi_ are the padding before a function (perf skips them): the
                   function before runs over it, as the symbol store reads kallsyms; an idle
                   stack's return address lands exactly on one */
                bool is_padding = name[0] == '_' && name[1] == '_' &&
                                  (!strncmp(name, "__pfx_", 6) || !strncmp(name, "__cfi_", 6));
                if (!addr || is_padding)
                        continue;
                if (nr == cap_syms) {
                        cap_syms *= 2;
                        syms = xrealloc(syms, cap_syms * sizeof(*syms));
                }
                syms[nr].addr = addr;
                syms[nr].name = name;
                syms[nr].module = mod ? mod : "";
                nr++;
        }
        /* the kernel lists its own symbols in address order, modules after: sort only when not */
        bool in_order = true;
        for (size_t i = 1; i < nr && in_order; i++)
                in_order = syms[i - 1].addr <= syms[i].addr;
        if (!in_order)
                qsort(syms, nr, sizeof(*syms), ksym_cmp);
        for (size_t i = 0; i < nr; i++) {
                uint64_t next = i + 1 < nr ? syms[i + 1].addr : syms[i].addr + 4096;
                uint64_t size = next - syms[i].addr;
                syms[i].size = size > (1u << 20) ? 4096 : size;
        }
        *nr_out = nr;
        return syms;
}

/* Keeps the core kernel's text symbols (no [module] tag: the kernel image, init text included)
   of nr parsed ones, their names copied to ls->ksym_names. They never change, so later rundowns
   and the close write their events from here instead of reading kallsyms again when they
   suffice (ksyms_suffice). */
static void ksyms_keep(struct live_source *ls, const struct perf_ksym *syms, size_t nr)
{
        size_t k = 0, bytes = 0;
        for (size_t i = 0; i < nr; i++) {
                if (!syms[i].module[0]) {
                        k++;
                        bytes += strlen(syms[i].name) + 1;
                }
        }
        if (k < 2)
                return;
        struct perf_ksym *kept = xcalloc(k, sizeof(*kept));
        char *names = xcalloc(1, bytes);
        size_t o = 0, j = 0;
        for (size_t i = 0; i < nr; i++) {
                if (syms[i].module[0])
                        continue;
                size_t n = strlen(syms[i].name) + 1;
                memcpy(names + o, syms[i].name, n);
                kept[j] = syms[i];
                kept[j].name = names + o;
                kept[j].module = "";
                j++;
                o += n;
        }
        ls->ksyms = kept;
        ls->nr_ksyms = k;
        ls->ksym_names = names;
}

/* The converter's blocking functions (perf_wait_reason_of_function) with their places, from the
   kept kernel symbols or one read of /proc/kallsyms, on the logger thread the first time a
   sleeping thread's switch has a callchain. None where kallsyms hides the addresses. */
static uint32_t hook_wait_sites(void *ctx, const struct perf_wait_site **out)
{
        struct live_source *ls = ctx;
        *out = ls->wait_sites;
        if (ls->has_wait_sites)
                return ls->nr_wait_sites; /* read by the start's rundown */
        ls->has_wait_sites = true;
        *out = NULL;
        if (!ls->caps.has_kallsyms)
                return 0;
        char *text = NULL;
        struct perf_ksym *parsed = NULL;
        const struct perf_ksym *syms = ls->ksyms;
        size_t nr = ls->nr_ksyms;
        if (!syms) {
                size_t len = 0;
                text = kallsyms_read(NULL, &len);
                if (!text)
                        return 0;
                parsed = ksyms_parse(text, &nr);
                syms = parsed;
        }
        uint32_t n = 0, cap = 0;
        for (size_t i = 0; i < nr; i++) {
                if (syms[i].module[0])
                        continue;
                int reason = perf_wait_reason_of_function(syms[i].name);
                if (reason < 0 || !syms[i].size)
                        continue;
                if (n == cap) {
                        cap = cap ? cap * 2 : 32;
                        ls->wait_sites = xrealloc(ls->wait_sites, cap * sizeof(*ls->wait_sites));
                }
                ls->wait_sites[n++] = (struct perf_wait_site){
                        syms[i].addr, syms[i].addr + syms[i].size, (uint8_t)reason};
        }
        free(parsed);
        free(text);
        ls->nr_wait_sites = n;
        *out = ls->wait_sites; /* ksyms_parse sorted them by address */
        return n;
}

/* The start and end of the kernel's text without reading all of /proc/kallsyms: _text and
   _stext lie among its first lines, and /proc/iomem's "Kernel code" range (shown to root) runs
   from _text to _etext on x86. False when either is not found. */
static bool kernel_text_quick(uint64_t *stext_out, uint64_t *etext_out)
{
#if defined(__x86_64__) || defined(__i386__)
        uint64_t text = 0, stext = 0, lo = 0, hi = 0;
        char line[256];
        FILE *f = fopen("/proc/kallsyms", "re");
        if (!f)
                return false;
        for (int i = 0; i < 32 && (!text || !stext) && fgets(line, sizeof(line), f); i++) {
                char *sp = strchr(line, ' ');
                if (!sp)
                        break;
                if (strcmp(sp, " T _stext\n") == 0)
                        stext = strtoull(line, NULL, 16);
                else if (strcmp(sp, " T _text\n") == 0)
                        text = strtoull(line, NULL, 16);
        }
        fclose(f);
        f = fopen("/proc/iomem", "re");
        if (!f)
                return false;
        while (fgets(line, sizeof(line), f)) {
                const char *name = strstr(line, " : Kernel code\n");
                if (name && sscanf(line, " %" SCNx64 "-%" SCNx64, &lo, &hi) == 2)
                        break;
                lo = hi = 0;
        }
        fclose(f);
        if (!text || !stext || stext < text || hi <= lo)
                return false;
        *stext_out = stext;
        *etext_out = text + (hi + 1 - lo);
        return *etext_out > stext;
#else
        (void)stext_out;
        (void)etext_out;
        return false;
#endif
}

/* The kernel image ([kernel.kallsyms], pid 0) from _stext.._etext and /sys/kernel/notes, read
   before the events are enabled. The text's end comes from /proc/iomem where it can
   (kernel_text_quick); otherwise from all of /proc/kallsyms, whose symbols are then kept
   (ksyms_keep) for the kernel symbols' events. */
static void kernel_image_probe(struct live_source *ls)
{
        uint64_t stext = 0, etext = 0;
        if (!ls->caps.has_kallsyms)
                return;
        if (!kernel_text_quick(&stext, &etext)) {
                size_t len = 0, nr = 0;
                char *text = kallsyms_read(NULL, &len);
                if (!text)
                        return;
                for (char *line = text; *line && (!stext || !etext);) {
                        char *nl = strchr(line, '\n');
                        char *sp = strchr(line, ' ');
                        if (sp && (!nl || sp < nl)) {
                                if (strncmp(sp, " T _stext\n", 10) == 0)
                                        stext = strtoull(line, NULL, 16);
                                else if (strncmp(sp + 2, " _etext\n", 8) == 0)
                                        etext = strtoull(line, NULL, 16);
                        }
                        if (!nl)
                                break;
                        line = nl + 1;
                }
                struct perf_ksym *syms = ksyms_parse(text, &nr);
                ksyms_keep(ls, syms, nr);
                free(syms);
                free(text);
        }
        if (!stext || etext <= stext)
                return;
        uint8_t bid[20], notes[4096];
        uint32_t bid_size = 0;
        int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
                ssize_t got = read(fd, notes, sizeof(notes));
                close(fd);
                for (size_t p = 0; got > 0 && p + 12 <= (size_t)got;) {
                        uint32_t namesz, descsz, type;
                        memcpy(&namesz, notes + p, 4);
                        memcpy(&descsz, notes + p + 4, 4);
                        memcpy(&type, notes + p + 8, 4);
                        size_t d = p + 12 + ((namesz + 3u) & ~3u);
                        if (d + descsz > (size_t)got)
                                break;
                        if (type == 3 && namesz == 4 && memcmp(notes + p + 12, "GNU", 4) == 0) {
                                bid_size = descsz < 20 ? descsz : 20;
                                memcpy(bid, notes + d, bid_size);
                                break;
                        }
                        p = d + ((descsz + 3u) & ~3u);
                }
        }
        ls->kernel_text = stext;
        ls->kernel_text_size = etext - stext;
        memcpy(ls->kernel_build_id, bid, bid_size);
        ls->kernel_build_id_size = bid_size;
}

static void rundown_kernel(struct live_source *ls, uint64_t ts)
{
        if (!ls->kernel_text_size)
                return;
        struct perf_conv_image im = {
                0,
                ls->kernel_text,
                ls->kernel_text_size,
                0,
                "[kernel.kallsyms]",
                ls->kernel_build_id,
                ls->kernel_build_id_size,
                ETWTOP_IMAGE_FLAG_RUNDOWN |
                        (ls->kernel_build_id_size ? ETWTOP_IMAGE_FLAG_BUILD_ID_FROM_FILE : 0)};
        perf_conv_image(ls->conv, WMI_LOG_TYPE_IMAGE_DC_START, 0, ts, &im);
}

/* The rundown of one process into the snapshot: what flags (EVENT_TRACE_FLAG_PROCESS, _THREAD,
   _IMAGE_LOAD) ask for. */
static void rundown_process(struct live_source *ls, struct live_rundown *rd, uint32_t pid,
                            uint32_t flags)
{
        char path[96], comm[64];
        uint32_t ppid, session;
        int64_t prio;
        char cmdline[4096];

        snprintf(path, sizeof(path), "/proc/%u/stat", pid);
        if (!proc_stat(path, comm, sizeof(comm), &ppid, &session, &prio))
                return;
        if (flags & EVENT_TRACE_FLAG_PROCESS) {
                read_cmdline(pid, cmdline, sizeof(cmdline));
                struct rundown_item *it = rundown_add(rd, RUNDOWN_PROCESS);
                it->name = xstrdup(comm);
                it->text = xstrdup(cmdline);
                it->p = (struct perf_conv_process){pid,      ppid,     session,
                                                   it->name, it->text, read_uid(pid)};
        }
        if (flags & EVENT_TRACE_FLAG_THREAD) {
                snprintf(path, sizeof(path), "/proc/%u/task", pid);
                DIR *d = opendir(path);
                struct dirent *e;
                while (d && (e = readdir(d))) {
                        if (!isdigit((unsigned char)e->d_name[0]))
                                continue;
                        uint32_t tid = (uint32_t)strtoul(e->d_name, NULL, 10);
                        char tcomm[64];
                        uint32_t tppid, tsession;
                        int64_t tprio;
                        snprintf(path, sizeof(path), "/proc/%u/task/%u/stat", pid, tid);
                        if (!proc_stat(path, tcomm, sizeof(tcomm), &tppid, &tsession, &tprio))
                                continue;
                        struct rundown_item *it = rundown_add(rd, RUNDOWN_THREAD);
                        it->name = xstrdup(tcomm);
                        it->t = (struct perf_conv_thread){pid, tid, tprio, it->name};
                }
                if (d)
                        closedir(d);
        }
        if (flags & EVENT_TRACE_FLAG_IMAGE_LOAD)
                rundown_images(ls, rd, pid);
}

/* The rundown's thread: reads /proc into the snapshot (only the traced process with -p), and
   the blocking functions' places the converter will ask for, then says it is done. It touches
   nothing the drains use meanwhile: they convert nothing until it is joined (rundown_finish),
   and the build-id cache and the kernel symbols are the converter's only then. */
static void *rundown_main(void *arg)
{
        struct live_source *ls = arg;
        struct live_rundown *rd = &ls->rundown;
        if (rd->pid > 0) {
                rundown_process(ls, rd, (uint32_t)rd->pid, rd->flags);
        } else if (rd->flags) {
                DIR *d = opendir("/proc");
                struct dirent *e;
                while (d && (e = readdir(d))) {
                        if (isdigit((unsigned char)e->d_name[0]))
                                rundown_process(ls, rd, (uint32_t)strtoul(e->d_name, NULL, 10),
                                                rd->flags);
                }
                if (d)
                        closedir(d);
        }
        if (rd->wants_wait_sites) {
                const struct perf_wait_site *sites;
                hook_wait_sites(ls, &sites);
        }
        atomic_store(&rd->is_done, true);
        uint64_t one = 1;
        if (write(rd->done_fd, &one, sizeof(one)) < 0) {
                /* the drains see is_done on their next wake-up */
        }
        return NULL;
}

/* The DCStart rundown of the groups in flags (EVENT_TRACE_FLAG_PROCESS, _THREAD, _IMAGE_LOAD),
   stamped ts: at start for the groups on, at an update for the groups it turns on, so that the
   processes, threads and images already there are known from then on. /proc is read on a
   thread of its own while the drains keep the rings empty (a rundown of thousands of threads
   on a busy machine took longer than a ring holds); its records are written, and the records
   held meanwhile converted after them, by the first drain after it is done. Without a thread,
   it is read here. is_start: the start's (it also reads the kernel's blocking functions, and
   its records are flushed at once to the real-time consumers). */
static void rundown_begin(struct live_source *ls, uint64_t ts, uint32_t flags, bool is_start)
{
        struct live_rundown *rd = &ls->rundown;
        flags &= EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD | EVENT_TRACE_FLAG_IMAGE_LOAD;
        bool wants_sites = is_start && wants_cswitch(&ls->settings) && ls->caps.has_kernel &&
                           ls->caps.has_kallsyms && !ls->has_wait_sites;
        if (!flags && !wants_sites)
                return;
        rd->ts = ts;
        rd->flags = flags;
        rd->pid = ls->settings.pid;
        rd->wants_wait_sites = wants_sites;
        rd->is_start = is_start;
        rd->is_pending = true;
        atomic_store(&rd->is_done, false);
        int rc = EAGAIN;
        if (rd->done_fd >= 0) {
                /* the thread takes no signal: the process's handlers run on its own threads */
                sigset_t all, old;
                sigfillset(&all);
                pthread_sigmask(SIG_SETMASK, &all, &old);
                rc = pthread_create(&rd->thread, NULL, rundown_main, ls);
                pthread_sigmask(SIG_SETMASK, &old, NULL);
        }
        rd->has_thread = rc == 0;
        if (!rd->has_thread)
                rundown_main(ls);
}

/* Writes the snapshot's records (and the kernel image's) at the rundown's time. */
static void rundown_write(struct live_source *ls, struct live_rundown *rd)
{
        for (size_t i = 0; i < rd->nr_items; i++) {
                struct rundown_item *it = &rd->items[i];
                switch (it->kind) {
                case RUNDOWN_PROCESS:
                        perf_conv_process(ls->conv, WMI_LOG_TYPE_PROCESS_DC_START, 0, rd->ts,
                                          &it->p);
                        break;
                case RUNDOWN_THREAD:
                        perf_conv_thread(ls->conv, WMI_LOG_TYPE_THREAD_DC_START, 0, rd->ts, &it->t);
                        break;
                case RUNDOWN_IMAGE:
                        it->im.build_id = it->build_id;
                        perf_conv_image(ls->conv, WMI_LOG_TYPE_IMAGE_DC_START, 0, rd->ts, &it->im);
                        break;
                }
        }
        if ((rd->flags & EVENT_TRACE_FLAG_IMAGE_LOAD) && ls->caps.has_kallsyms)
                rundown_kernel(ls, rd->ts);
}

static void rundown_items_free(struct live_rundown *rd)
{
        for (size_t i = 0; i < rd->nr_items; i++) {
                free(rd->items[i].name);
                free(rd->items[i].text);
        }
        free(rd->items);
        rd->items = NULL;
        rd->nr_items = rd->cap_items = 0;
}

/* Joins a rundown's thread when it is done (or, with wait, once it is) and writes its records.
   True when no rundown is under way any more. */
static bool rundown_finish(struct live_source *ls, bool wait)
{
        struct live_rundown *rd = &ls->rundown;
        if (!rd->is_pending)
                return true;
        if (!wait && !atomic_load(&rd->is_done))
                return false;
        /* the rings are kept empty while this waits: the caller may hold the lock the logger
           needs (a ControlTrace UPDATE right after the start) */
        while (!atomic_load(&rd->is_done)) {
                ring_take_all(ls);
                struct pollfd pfd = {.fd = rd->done_fd, .events = POLLIN};
                poll(&pfd, 1, 1);
        }
        if (rd->has_thread)
                pthread_join(rd->thread, NULL);
        rd->has_thread = false;
        rd->is_pending = false;
        uint64_t v;
        if (rd->done_fd >= 0 && read(rd->done_fd, &v, sizeof(v)) < 0) {
                /* nothing to read: the thread's write failed, or it ran here */
        }
        rundown_write(ls, rd);
        rundown_items_free(rd);
        /* the start's rundown reaches a real-time consumer before the samples that follow it
           (they are on other CPUs' buffers, which may fill first) */
        if (rd->is_start)
                etl_writer_flush(ls->w);
        return true;
}

/* ---- kernel symbols at close ---- */

/* Whether the symbols of the start's read (ksyms_keep) name the kernel addresses hit as all of
   /proc/kallsyms would now: every address hit in kernel context lies among them (below the last
   one, whose size depends on what follows). Modules, BPF programs and trampolines, which come
   and go, lie outside the kernel image. (A user stack's garbage that happens to fall in one of
   those is not looked up: it is no kernel hit.) */
static bool ksyms_suffice(const struct live_source *ls)
{
        uint64_t lo, hi;
        if (!ls->ksyms)
                return false;
        return !perf_conv_kernel_range(ls->conv, &lo, &hi) ||
               (lo >= ls->ksyms[0].addr && hi < ls->ksyms[ls->nr_ksyms - 1].addr);
}

/* The KernelSymbol events of the kernel addresses hit: from the kept symbols when they suffice,
   else from /proc/kallsyms read now (the first time, the core kernel's are kept). */
static void write_kernel_symbols(struct live_source *ls)
{
        if (!ls->caps.has_kallsyms)
                return;
        char *text = NULL;
        struct perf_ksym *syms = NULL;
        size_t len = 0, nr = 0;
        if (!ksyms_suffice(ls)) {
                text = kallsyms_read(ls, &len);
                if (!text)
                        return;
                syms = ksyms_parse(text, &nr);
                if (!ls->ksyms)
                        ksyms_keep(ls, syms, nr);
        }
        uint64_t at = perf_conv_stamp(ls->conv, 0, now_ns());
        if (ksyms_suffice(ls))
                perf_conv_kernel_symbols(ls->conv, ls->ksyms, ls->nr_ksyms, 0, at);
        else if (syms)
                perf_conv_kernel_symbols(ls->conv, syms, nr, 0, at);
        free(syms);
        free(text);
}

/* ---- the session ---- */

/* The TimerResolution w's logfile header records (ETL-FORMAT.md 1.6: the header buffer's
   WMI_BUFFER_HEADER, the SYSTEM_TRACE_HEADER, then TRACE_LOGFILE_HEADER.TimerResolution at
   0x18): the unit of the CSwitch NewThreadWaitTime the converter writes, so that the file
   agrees with itself whatever its writer was told; the kernel's tick when it says none. */
static uint32_t writer_timer_resolution(const struct etl_writer *w, const struct live_caps *caps)
{
        enum { AT = 0x48 + 0x20 + 0x18 };
        uint32_t size = 0, v = 0;
        const uint8_t *hdr = etl_writer_header(w, &size);
        if (hdr && size >= AT + 4)
                memcpy(&v, hdr + AT, 4);
        return v ? v : caps->timer_resolution_100ns;
}

/* Finds tracefs and reads the formats of sched_switch, sched_waking and (optional) cpu_idle for
   the CSwitch and ReadyThread that s asks for. Returns 0, or -ENOENT (no tracefs) or -EACCES
   (tracefs or a format this user cannot read) with err filled. */
static int tracepoints_load(struct live_source *ls, const struct live_settings *s,
                            struct etl_error *err)
{
        const char *what = wants_cswitch(s) && wants_ready(s) ? "CSwitch and ReadyThread"
                           : wants_cswitch(s)                 ? "CSwitch events"
                                                              : "ReadyThread events";
        int rc = tracefs_find(ls->tracefs, sizeof(ls->tracefs));
        if (rc < 0) {
                tracefs_msg(err ? err->msg : NULL, err ? sizeof(err->msg) : 0, rc, ls->tracefs,
                            what);
                if (err)
                        err->offset = 0;
                ls->tracefs[0] = 0;
                return rc;
        }
        int rc_switch = tracepoint_load(ls->tracefs, "sched/sched_switch", &ls->tp_switch);
        int rc_waking = tracepoint_load(ls->tracefs, "sched/sched_waking", &ls->tp_waking);
        ls->has_tp_switch = rc_switch == 0;
        ls->has_tp_waking = rc_waking == 0;
        ls->has_tp_idle = tracepoint_load(ls->tracefs, "power/cpu_idle", &ls->tp_idle) == 0;
        if (ls->has_tp_switch && ls->has_tp_waking)
                return 0;
        rc = rc_switch < 0 ? rc_switch : rc_waking;
        if (rc == -EACCES || rc == -EPERM) {
                tracefs_msg(err ? err->msg : NULL, err ? sizeof(err->msg) : 0, -EACCES, ls->tracefs,
                            what);
                if (err)
                        err->offset = 0;
                return -EACCES;
        }
        set_err(err, "cannot read %s/events/sched/sched_%s/format (%s)", ls->tracefs,
                ls->has_tp_switch ? "waking" : "switch", errno_name(-rc));
        return -ENOENT;
}

/* The threads events are opened on: with -p every thread of the process (/proc/PID/task), the
   process's own first (new threads inherit its events, and those of the thread that creates
   them); {-1}, every task, for the whole system. */
static int tasks_list(struct live_source *ls, struct etl_error *err)
{
        int32_t pid = ls->settings.pid;
        uint32_t cap = 16, n = 0;
        int32_t *tasks = xcalloc(cap, sizeof(*tasks));

        tasks[n++] = pid > 0 ? pid : -1;
        if (pid > 0) {
                char path[64];
                snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
                DIR *d = opendir(path);
                if (!d) {
                        int e = errno;
                        set_err(err, "process %d: cannot read %s (%s)", (int)pid, path,
                                errno_name(e));
                        free(tasks);
                        return e == ENOENT ? -ESRCH : -e;
                }
                struct dirent *de;
                while ((de = readdir(d))) {
                        long tid = strtol(de->d_name, NULL, 10);
                        if (!isdigit((unsigned char)de->d_name[0]) || tid <= 0 || tid == pid ||
                            tid > INT32_MAX)
                                continue;
                        if (n == cap) {
                                cap *= 2;
                                tasks = xrealloc(tasks, cap * sizeof(*tasks));
                        }
                        tasks[n++] = (int32_t)tid;
                }
                closedir(d);
        }
        free(ls->tasks);
        ls->tasks = tasks;
        ls->nr_tasks = n;
        return 0;
}

/* etwtop's SessionCpu event in every online CPU's buffer, the highest CPU first: a writer with
   fewer CPUs refuses that one (-EINVAL) before anything else is written, and the session
   fails rather than losing that CPU's records one by one. */
static int write_session_cpus(struct live_source *ls, uint64_t ts, struct etl_error *err)
{
        for (uint32_t k = ls->nr_online; k-- > 0;) {
                uint32_t cpu = ls->online[k];
                uint32_t size = perf_etw_session_cpu(
                        ls->rec, perf_conv_stamp(ls->conv, cpu, ts), cpu, ls->nr_cpus,
                        ls->nr_online, ls->settings.pid > 0 ? (uint32_t)ls->settings.pid : 0);
                int rc = etl_writer_append(ls->w, cpu, ls->rec, size);
                if (rc == -EINVAL) {
                        set_err(err,
                                "the trace writer has no buffer for CPU %u, which is online: "
                                "create it with nr_cpus = %u (the highest online CPU + 1, "
                                "live_caps.nr_cpus)",
                                cpu, ls->nr_cpus);
                        return -EINVAL;
                }
                ls->nr_own_events++;
                if (rc < 0)
                        ls->nr_append_failures++;
        }
        return 0;
}

static uint64_t lost_total(const struct live_source *ls)
{
        uint64_t sum = ls->nr_lost_retired;
        for (uint32_t i = 0; i < ls->nr_events; i++)
                sum += event_lost(ls->events[i]);
        return sum;
}

/* Opens every event settings s needs that is not open with the same attributes: every (CPU,
   task) event of a (role, index) that is new or whose attributes changed. The old events they
   replace stay until the update commits. A thread of the traced process that has exited since
   it was listed is skipped. On failure every new event is closed and the session is as it was. */
static int events_reconcile(struct live_source *ls, const struct live_settings *s,
                            struct live_event ***fresh, uint32_t *nr_fresh, struct etl_error *err)
{
        static const enum live_role roles[] = {ROLE_PROC,   ROLE_IMAGE, ROLE_PROFILE, ROLE_CSWITCH,
                                               ROLE_SWITCH, ROLE_READY, ROLE_IDLE,    ROLE_PMC};
        uint32_t cap = 64, n = 0;
        struct live_event **list = xcalloc(cap, sizeof(*list));
        int rc = 0;

        for (size_t r = 0; r < sizeof(roles) / sizeof(roles[0]) && rc == 0; r++) {
                for (uint32_t idx = 0; idx < LIVE_MAX_SOURCES && rc == 0; idx++) {
                        struct live_spec sp;
                        if (!spec_build(ls, s, roles[r], idx, &sp))
                                continue;
                        struct live_event *old = event_find(ls, roles[r], idx);
                        if (old && spec_same(&old->spec, &sp))
                                continue;
                        for (uint32_t c = 0; c < ls->nr_online && rc == 0; c++) {
                                uint32_t cpu = ls->online[c], nr_opened = 0;
                                uint32_t nr_tasks = sp.is_cpu_wide ? 1 : ls->nr_tasks;
                                for (uint32_t t = 0; t < nr_tasks && rc == 0; t++) {
                                        struct live_event *ev;
                                        struct etl_error ignored;
                                        bool is_thread = s->pid > 0 && !sp.is_cpu_wide;
                                        rc = event_open(ls, &sp, cpu,
                                                        sp.is_cpu_wide ? -1 : ls->tasks[t], &ev,
                                                        is_thread ? &ignored : err);
                                        if (rc == -ESRCH && is_thread) {
                                                rc = 0; /* that thread has exited */
                                                continue;
                                        }
                                        if (rc < 0) {
                                                if (is_thread && err)
                                                        *err = ignored;
                                                break;
                                        }
                                        if (n == cap) {
                                                cap *= 2;
                                                list = xrealloc(list, cap * sizeof(*list));
                                        }
                                        list[n++] = ev;
                                        nr_opened++;
                                }
                                if (rc == 0 && nr_opened == 0) {
                                        set_err(err, "process %d has exited", (int)s->pid);
                                        rc = -ESRCH;
                                }
                        }
                }
        }
        if (rc < 0) {
                for (uint32_t i = 0; i < n; i++)
                        event_close(list[i]);
                free(list);
                return rc;
        }
        *fresh = list;
        *nr_fresh = n;
        return 0;
}

/* Enables or disables every live event as s's masks say. */
static int events_apply_masks(struct live_source *ls, const struct live_settings *s)
{
        int rc = 0;
        for (uint32_t i = 0; i < ls->nr_events; i++) {
                struct live_event *ev = ls->events[i];
                if (ev->is_retired)
                        continue;
                int r = event_enable(ev, role_enabled(s, ev->spec.role));
                if (r < 0 && rc == 0)
                        rc = r;
        }
        return rc;
}

/* Closes retired events (after a drain), keeping their lost counts. */
static void events_reap(struct live_source *ls)
{
        uint32_t o = 0;
        for (uint32_t i = 0; i < ls->nr_events; i++) {
                struct live_event *ev = ls->events[i];
                if (ev->is_retired) {
                        ls->nr_lost_retired += event_lost(ev);
                        event_close(ev);
                        continue;
                }
                ls->events[o++] = ev;
        }
        ls->nr_events = o;
        by_id_rebuild(ls);
}

static void source_free(struct live_source *ls)
{
        if (ls->rundown.has_thread)
                pthread_join(ls->rundown.thread, NULL);
        rundown_items_free(&ls->rundown);
        if (ls->rundown.done_fd >= 0)
                close(ls->rundown.done_fd);
        for (uint32_t i = 0; i < ls->nr_events; i++)
                event_close(ls->events[i]);
        free(ls->events);
        for (uint32_t i = 0; ls->rings && i < ls->nr_online; i++) {
                struct live_ring *r = &ls->rings[i];
                if (r->meta && !r->is_borrowed)
                        munmap(r->meta, r->map_size);
                free(r->stage);
                free(r->bounce);
                free(r->items);
        }
        free(ls->rings);
        free(ls->merge_heap);
        free(ls->online);
        free(ls->tasks);
        free(ls->by_id);
        if (ls->epoll_fd >= 0)
                close(ls->epoll_fd);
        for (uint32_t i = 0; ls->bids && i < LIVE_BUILD_ID_CACHE; i++)
                free(ls->bids[i].path);
        free(ls->bids);
        free(ls->ksyms);
        free(ls->ksym_names);
        free(ls->wait_sites);
        perf_conv_free(ls->conv);
        free(ls);
}

int live_source_open(struct live_source **out, const struct live_settings *settings,
                     struct etl_writer *w, struct etl_error *err)
{
        struct live_source *ls;
        uint32_t cpus[LIVE_MAX_CPUS];
        int rc;

        *out = NULL;
        if (!settings || !w) {
                set_err(err, "live_source_open: settings and writer are required");
                return -EINVAL;
        }
        ls = xcalloc(1, sizeof(*ls));
        ls->epoll_fd = -1;
        ls->rundown.done_fd = -1;
        ls->settings = *settings;
        ls->w = w;
        ls->has_build_id_attr = true;
        ls->has_inherit_thread = true;
        live_probe(&ls->caps);
        rc = settings_check(settings, &ls->caps, err);
        if (rc < 0)
                goto fail;
        if (settings->pid < 0 && !ls->caps.has_cpu_wide) {
                set_err(err, "%s", ls->caps.why_no_cpu_wide);
                rc = -EACCES;
                goto fail;
        }
        if (wants_cswitch(settings) || wants_ready(settings)) {
                rc = tracepoints_load(ls, settings, err);
                if (rc < 0)
                        goto fail;
        }

        ls->nr_online = online_cpus(cpus, LIVE_MAX_CPUS, &ls->nr_cpus);
        ls->online = xcalloc(ls->nr_online, sizeof(*ls->online));
        memcpy(ls->online, cpus, ls->nr_online * sizeof(*cpus));
        ls->rings = xcalloc(ls->nr_online, sizeof(*ls->rings));
        ls->merge_heap = xcalloc(ls->nr_online, sizeof(*ls->merge_heap));
        ls->bids = xcalloc(LIVE_BUILD_ID_CACHE, sizeof(*ls->bids));

        rc = tasks_list(ls, err);
        if (rc < 0)
                goto fail;

        struct perf_conv_ops ops = {hook_emit,        hook_event_of,   hook_cmdline_of,
                                    hook_build_id_of, hook_wait_sites, hook_uid_of};
        rc = perf_conv_new(&ls->conv, &ops, ls, ls->nr_cpus);
        if (rc < 0) {
                set_err(err, "cannot create the converter");
                goto fail;
        }
        perf_conv_set_masks(ls->conv, &settings->masks);
        perf_conv_set_walk(ls->conv, settings->stack_walk, stack_copy_bytes(settings));
        perf_conv_set_timer_resolution(ls->conv, writer_timer_resolution(w, &ls->caps));
        if (settings->pid > 0)
                perf_conv_set_process(ls->conv, (uint32_t)settings->pid, ls->tasks, ls->nr_tasks);

        ls->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
        if (ls->epoll_fd < 0) {
                rc = -errno;
                set_err(err, "epoll_create1 returned %s", errno_name(-rc));
                goto fail;
        }
        /* the rundown's thread says it is done through this: the drain that writes its
           records comes at once */
        ls->rundown.done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        struct epoll_event done = {.events = EPOLLIN, .data.u32 = UINT32_MAX};
        if (ls->rundown.done_fd < 0 ||
            epoll_ctl(ls->epoll_fd, EPOLL_CTL_ADD, ls->rundown.done_fd, &done) < 0) {
                rc = -errno;
                set_err(err, "eventfd or epoll_ctl returned %s", errno_name(-rc));
                goto fail;
        }
        /* one ring per CPU, owned by a dummy event */
        for (uint32_t c = 0; c < ls->nr_online; c++) {
                struct live_ring *r = &ls->rings[c];
                struct live_spec sp;
                struct live_event *ev;
                r->cpu = ls->online[c];
                spec_build(ls, settings, ROLE_RING, 0, &sp);
                rc = event_open(ls, &sp, r->cpu, ls->tasks[0], &ev, err);
                if (rc < 0)
                        goto fail;
                events_add(ls, ev);
                r->fd = ev->fd;
                rc = ring_map(ls, r, err);
                if (rc < 0)
                        goto fail;
                struct epoll_event ee = {.events = EPOLLIN, .data.u32 = c};
                if (epoll_ctl(ls->epoll_fd, EPOLL_CTL_ADD, r->fd, &ee) < 0) {
                        rc = -errno;
                        set_err(err, "epoll_ctl returned %s", errno_name(-rc));
                        goto fail;
                }
        }
        struct live_event **fresh;
        uint32_t nr_fresh;
        rc = events_reconcile(ls, settings, &fresh, &nr_fresh, err);
        if (rc < 0)
                goto fail;
        for (uint32_t i = 0; i < nr_fresh; i++)
                events_add(ls, fresh[i]);
        free(fresh);
        by_id_rebuild(ls);

        kernel_image_probe(ls);
        /* Enable first, then read /proc: nothing that starts in between is missed. The start
           records are stamped with a time taken before enabling, so every CPU's records stay in
           time order. */
        uint64_t t0 = now_ns();
        rc = write_session_cpus(ls, t0, err);
        if (rc < 0)
                goto fail;
        rc = events_apply_masks(ls, settings);
        if (rc < 0) {
                set_err(err, "PERF_EVENT_IOC_ENABLE returned %s", errno_name(-rc));
                goto fail;
        }
        for (uint32_t c = 0; c < ls->nr_cpus; c++)
                perf_conv_stamp(ls->conv, c, t0);
        ls->nr_own_events++;
        hook_emit(
                ls, ETL_WRITER_HEADER_CPU, ls->rec,
                perf_etw_group_masks(ls->rec, WMI_LOG_TYPE_HEADER_EXTENSION, t0, &settings->masks));
        write_interval_rundown(ls, PERFINFO_LOG_TYPE_SAMPLED_PROFILE_DC_START, t0, settings, NULL);
        write_pmc_config(ls, t0);
        rundown_begin(ls, t0, settings->masks.Masks[0], true);
        *out = ls;
        return 0;
fail:
        source_free(ls);
        return rc;
}

int live_source_open_mem(struct live_source **out, const struct live_mem_ring *rings,
                         uint32_t nr_rings, const struct perf_conv_event *events,
                         const uint64_t *ids, uint32_t nr_events, const PERFINFO_GROUPMASK *masks,
                         struct etl_writer *w)
{
        *out = NULL;
        if (!rings || !nr_rings || nr_rings > LIVE_MAX_CPUS || (nr_events && (!events || !ids)) ||
            !masks || !w)
                return -EINVAL;
        for (uint32_t i = 0; i < nr_rings; i++) {
                const struct perf_event_mmap_page *m = rings[i].meta;
                if (!m || rings[i].cpu >= LIVE_MAX_CPUS || !m->data_size ||
                    (m->data_size & (m->data_size - 1)) || m->data_offset < sizeof(*m))
                        return -EINVAL;
        }
        struct live_source *ls = xcalloc(1, sizeof(*ls));
        ls->epoll_fd = -1;
        ls->rundown.done_fd = -1;
        ls->w = w;
        ls->settings.masks = *masks;
        ls->settings.pid = -1;
        ls->nr_online = nr_rings;
        ls->online = xcalloc(nr_rings, sizeof(*ls->online));
        ls->rings = xcalloc(nr_rings, sizeof(*ls->rings));
        ls->merge_heap = xcalloc(nr_rings, sizeof(*ls->merge_heap));
        ls->bids = xcalloc(LIVE_BUILD_ID_CACHE, sizeof(*ls->bids));
        for (uint32_t i = 0; i < nr_rings; i++) {
                struct live_ring *r = &ls->rings[i];
                ls->online[i] = r->cpu = rings[i].cpu;
                if (r->cpu + 1 > ls->nr_cpus)
                        ls->nr_cpus = r->cpu + 1;
                r->fd = -1;
                r->meta = rings[i].meta;
                r->is_borrowed = true;
                r->data = (uint8_t *)r->meta + r->meta->data_offset;
                r->data_size = r->meta->data_size;
        }
        for (uint32_t i = 0; i < nr_events; i++) {
                struct live_event *ev = xcalloc(1, sizeof(*ev));
                ev->spec.role = ROLE_PROC;
                ev->spec.what = "memory";
                ev->spec.conv = events[i];
                ev->fd = -1;
                for (uint32_t k = 0; k < LIVE_MAX_SOURCES; k++)
                        ev->member_fds[k] = -1;
                ev->id = ids[i];
                events_add(ls, ev);
        }
        by_id_rebuild(ls);
        struct perf_conv_ops ops = {hook_emit,        hook_event_of,   hook_cmdline_of,
                                    hook_build_id_of, hook_wait_sites, hook_uid_of};
        int rc = perf_conv_new(&ls->conv, &ops, ls, ls->nr_cpus);
        if (rc < 0)
                goto fail;
        perf_conv_set_masks(ls->conv, masks);
        *out = ls;
        return 0;
fail:
        source_free(ls);
        return rc;
}

int live_source_fd(const struct live_source *ls)
{
        return ls ? ls->epoll_fd : -1;
}

int live_source_drain(struct live_source *ls, uint32_t budget)
{
        if (!ls)
                return -EINVAL;
        if (!rundown_finish(ls, false)) {
                /* the rundown's records come first: until they are written, what the rings
                   hold waits in the stages */
                ring_take_all(ls);
                return 0;
        }
        uint32_t nr = ls->nr_online ? ls->nr_online : 1;
        uint64_t horizon = drain_horizon(ls);
        uint32_t total = 0;
        /* rounds of a few thousand records a CPU: what is gathered is converted while it is
           still in the cache */
        while (total < budget) {
                uint32_t per = (budget - total) / nr;
                if (per < 256)
                        per = 256;
                if (per > LIVE_MERGE_ROUND)
                        per = LIVE_MERGE_ROUND;
                /* a ring that has more than its share says how far the others may go */
                uint64_t until = horizon;
                for (uint32_t c = 0; c < ls->nr_online; c++) {
                        struct live_ring *r = &ls->rings[c];
                        ring_take_if_full(r);
                        ring_gather(ls, r, per, horizon);
                        if (r->is_capped && r->newest_ts < until)
                                until = r->newest_ts;
                }
                for (uint32_t c = 0; c < ls->nr_online; c++)
                        ring_trim(ls, &ls->rings[c], until);
                uint32_t n = rings_merge(ls);
                for (uint32_t c = 0; c < ls->nr_online; c++)
                        ring_release(&ls->rings[c]);
                total += n;
                if (n == 0 || until == horizon)
                        break; /* every ring is drained up to the horizon */
        }
        return total > INT32_MAX ? INT32_MAX : (int)total;
}

int live_source_update(struct live_source *ls, const struct live_settings *next,
                       struct etl_error *err)
{
        if (!ls || !next) {
                set_err(err, "live_source_update: no source or settings");
                return -EINVAL;
        }
        const struct live_settings old = ls->settings;
        int rc = settings_check(next, &ls->caps, err);
        if (rc < 0)
                return rc;
        if (next->pid != old.pid || next->ring_pages != old.ring_pages) {
                set_err(err, "the traced process and the ring size cannot change while the "
                             "session runs");
                return -EINVAL;
        }
        if ((wants_cswitch(next) && !ls->has_tp_switch) ||
            (wants_ready(next) && !ls->has_tp_waking)) {
                rc = tracepoints_load(ls, next, err);
                if (rc < 0)
                        return rc;
        }

        /* make: open what the new settings need (the old events stay in force on failure), on
           the threads the traced process has now */
        if (old.pid > 0) {
                rc = tasks_list(ls, err);
                if (rc < 0)
                        return rc;
                perf_conv_set_process(ls->conv, (uint32_t)old.pid, ls->tasks, ls->nr_tasks);
        }
        struct live_event **fresh;
        uint32_t nr_fresh;
        rc = events_reconcile(ls, next, &fresh, &nr_fresh, err);
        if (rc < 0)
                return rc;

        /* commit */
        drain_all(ls);
        bool is_lbr_change =
                old.lbr_flags != next->lbr_flags || old.nr_lbr_hooks != next->nr_lbr_hooks;
        uint64_t t = now_ns();
        /* the switches repaired from switch-in records (no sched_switch sample) take the new
           CSwitch stack setting from t on, whatever sample came last */
        perf_conv_set_switch_stacks(
                ls->conv,
                has_hook(next->stack_hooks, next->nr_stack_hooks, WMI_LOG_TYPE_CONTEXT_SWAP), t);
        for (uint32_t i = 0; i < nr_fresh; i++) {
                fresh[i]->spec.conv.valid_from = t;
                fresh[i]->is_fresh = true;
                events_add(ls, fresh[i]);
        }
        /* the events the fresh ones replace, and those no longer needed at all */
        for (uint32_t i = 0; i < ls->nr_events; i++) {
                struct live_event *ev = ls->events[i];
                struct live_spec sp;
                if (ev->is_retired || ev->is_fresh || ev->spec.role == ROLE_RING)
                        continue;
                bool is_replaced = false;
                for (uint32_t j = 0; j < nr_fresh && !is_replaced; j++)
                        is_replaced = fresh[j]->spec.role == ev->spec.role &&
                                      fresh[j]->spec.idx == ev->spec.idx;
                if (is_replaced || !spec_build(ls, next, ev->spec.role, ev->spec.idx, &sp)) {
                        ev->spec.conv.valid_until = t;
                        ev->is_retired = true;
                        if (is_replaced && is_lbr_change) /* break-before-make: one LBR per CPU */
                                event_enable(ev, false);
                }
        }
        for (uint32_t i = 0; i < nr_fresh; i++)
                fresh[i]->is_fresh = false;
        free(fresh);
        by_id_rebuild(ls);
        ls->settings = *next;
        events_apply_masks(ls, next);
        for (uint32_t i = 0; i < ls->nr_events; i++) {
                if (ls->events[i]->is_retired)
                        event_enable(ls->events[i], false);
        }

        /* the interval of kept events */
        for (uint32_t i = 0; i < ls->nr_events; i++) {
                struct live_event *ev = ls->events[i];
                struct live_spec sp;
                if (ev->is_retired || (ev->spec.role != ROLE_PROFILE && ev->spec.role != ROLE_PMC))
                        continue;
                if (!spec_build(ls, next, ev->spec.role, ev->spec.idx, &sp))
                        continue;
                if (sp.attr.sample_period == ev->spec.attr.sample_period)
                        continue;
                uint64_t period = sp.attr.sample_period;
                if (ioctl(ev->fd, PERF_EVENT_IOC_PERIOD, &period) == 0)
                        ev->spec.attr.sample_period = period;
        }
        drain_all(ls);
        events_reap(ls);
        perf_conv_set_masks(ls->conv, &next->masks);
        perf_conv_set_walk(ls->conv, next->stack_walk, stack_copy_bytes(next));

        /* stamp the change into the stream */
        uint64_t ts = perf_conv_stamp(ls->conv, 0, now_ns());
        if (memcmp(&old.masks, &next->masks, sizeof(old.masks)) != 0) {
                own_append(ls, 0,
                           perf_etw_group_masks(ls->rec, WMI_LOG_TYPE_GROUP_MASKS_END, ts,
                                                &old.masks));
                own_append(ls, 0,
                           perf_etw_group_masks(ls->rec, WMI_LOG_TYPE_HEADER_EXTENSION, ts,
                                                &next->masks));
        }
        if (interval_of(&old) != interval_of(next))
                own_append(ls, 0,
                           perf_etw_profile_interval(
                                   ls->rec, PERFINFO_LOG_TYPE_SAMPLED_PROFILE_SET_INTERVAL, ts,
                                   ProfileTime, interval_of(next), interval_of(&old), "Timer"));
        if (next->nr_pmc_counters &&
            (old.nr_pmc_counters != next->nr_pmc_counters ||
             memcmp(old.pmc_counters, next->pmc_counters,
                    sizeof(next->pmc_counters[0]) * next->nr_pmc_counters)))
                write_pmc_config(ls, ts);
        /* the groups turned on: what is already there (seed-002 adds IMAGE_LOAD this way) */
        rundown_begin(ls, ts, next->masks.Masks[0] & ~old.masks.Masks[0], false);
        ls->nr_updates++;
        return 0;
}

void live_source_get_stats(const struct live_source *ls, struct live_stats *st)
{
        memset(st, 0, sizeof(*st));
        if (!ls)
                return;
        struct perf_conv_stats cs;
        perf_conv_get_stats(ls->conv, &cs);
        st->nr_perf_records = cs.nr_records - ls->nr_skipped_again;
        st->nr_events = cs.nr_events + ls->nr_own_events;
        st->nr_events_lost = lost_total(ls);
        st->nr_lost_records = cs.nr_lost_records;
        st->nr_updates = ls->nr_updates;
        st->nr_append_failures = ls->nr_append_failures;
        st->nr_rundowns_pending = ls->rundown.is_pending;
}

void live_source_rundown(struct live_source *ls)
{
        if (!ls)
                return;
        drain_all(ls);
        uint64_t ts = now_ns();
        perf_conv_rundown_end(ls->conv, 0, perf_conv_stamp(ls->conv, 0, ts));
        write_kernel_symbols(ls);
}

void live_source_close(struct live_source *ls)
{
        if (!ls)
                return;
        for (uint32_t i = 0; i < ls->nr_events; i++)
                event_enable(ls->events[i], false);
        drain_until(ls, UINT64_MAX); /* nothing is on its way any more */

        uint64_t ts = now_ns();
        uint64_t lost = lost_total(ls);
        if (lost)
                perf_conv_events_lost(ls->conv, 0, perf_conv_stamp(ls->conv, 0, ts),
                                      ETWTOP_LOST_REASON_FORMAT_LOST, lost);
        perf_conv_rundown_end(ls->conv, 0, perf_conv_stamp(ls->conv, 0, ts));
        write_kernel_symbols(ls);
        source_free(ls);
}
