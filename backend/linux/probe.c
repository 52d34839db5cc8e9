/* SPDX-License-Identifier: MIT */
/* probe.c: what this machine can do, and why not: the online CPUs, tracefs and the tracepoints'
   formats, privileges, the PMU, LBR, kallsyms (the capability probe, DESIGN.md). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
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

#include "live_int.h"
#include "util/xalloc.h"

/* The online CPUs from /sys/devices/system/cpu/online ("0-3,5"); falls back to 0..n-1. */
uint32_t probe_online_cpus(uint32_t *cpus, uint32_t max, uint32_t *nr_cpus)
{
        char buf[1024];
        uint32_t n = 0, highest = 0;

        if (live_read_small("/sys/devices/system/cpu/online", buf, sizeof(buf)) > 0) {
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

/* Finds tracefs: a mounted tracefs, debugfs/tracing, or the usual places; mounts it at
   /sys/kernel/tracing when nothing is there, as perf does (tools/lib/api/fs). Returns 0 with
   its path in dir, -EACCES when it is there but this user cannot read it (dir: where it is),
   or -ENOENT. */
int probe_tracefs_find(char *dir, size_t size)
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

static void cap_msg(char *dst, size_t size, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

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

/* The message of a probe_tracefs_find failure (rc) for what needs it. */
void probe_tracefs_msg(char *dst, size_t size, int rc, const char *dir, const char *what)
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

int probe_tracepoint_load(const char *tracefs, const char *name, struct perf_tp_format *fmt)
{
        char path[PATH_MAX + 64];
        char buf[16384];

        snprintf(path, sizeof(path), "%s/events/%s/format", tracefs, name);
        ssize_t n = live_read_small(path, buf, sizeof(buf));
        if (n <= 0)
                return n < 0 ? (int)n : -ENOENT;
        int rc = perf_tp_format_parse(buf, (size_t)n, fmt);
        if (rc < 0)
                return rc;
        if (fmt->id == 0) {
                int id;
                snprintf(path, sizeof(path), "%s/events/%s/id", tracefs, name);
                if (live_read_int_file(path, &id) < 0)
                        return -ENOENT;
                fmt->id = (uint32_t)id;
        }
        return 0;
}

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

void probe_base_attr(struct perf_event_attr *a, uint32_t type, uint64_t config)
{
        memset(a, 0, sizeof(*a));
        a->size = sizeof(*a);
        a->type = type;
        a->config = config;
        a->disabled = 1;
}

static int trial_open(struct perf_event_attr *a, pid_t pid, int cpu)
{
        int fd = live_perf_event_open(a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
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
        if (live_read_small("/proc/self/status", buf, sizeof(buf)) <= 0)
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
        live_read_int_file("/proc/sys/kernel/perf_event_mlock_kb", &mlock_kb);
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
        live_read_int_file("/proc/sys/kernel/perf_event_paranoid", &caps->paranoid);
        caps->kptr_restrict = 0;
        live_read_int_file("/proc/sys/kernel/kptr_restrict", &caps->kptr_restrict);
        probe_online_cpus(cpus, LIVE_MAX_CPUS, &caps->nr_cpus);

        /* CPU-wide events and kernel samples: a trial open says it best. */
        probe_base_attr(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
        rc = trial_open(&a, -1, (int)cpus[0]);
        caps->has_cpu_wide = rc == 0;
        if (rc < 0)
                cap_msg(caps->why_no_cpu_wide, sizeof(caps->why_no_cpu_wide),
                        "CPU-wide events not allowed (%s, perf_event_paranoid=%d): run as root, "
                        "grant CAP_PERFMON, or sysctl kernel.perf_event_paranoid=0",
                        live_errno_name(-rc), caps->paranoid);
        probe_base_attr(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
        caps->has_kernel = trial_open(&a, 0, -1) == 0;

        /* No trial open of a tracepoint: each registered and removed sched_switch's probe,
           patching the kernel's text on every CPU, for every session (samples only too) and
           twice a recording, when nothing read the answer; a session that asks for switches
           or wake-ups reads the tracepoints' formats and says why it cannot
           (tracepoints_load). */
        caps->timer_resolution_100ns = tick_100ns();
        caps->max_ring_pages = max_ring_pages(caps->paranoid);

        /* A hardware PMU: the sysfs device and a trial open of the cycles event. */
        bool has_dir = pmu_dir(pmu, sizeof(pmu));
        probe_base_attr(&a, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
        a.exclude_kernel = 1;
        rc = trial_open(&a, 0, -1);
        caps->has_pmu = rc == 0;
        if (!caps->has_pmu)
                cap_msg(caps->why_no_pmu, sizeof(caps->why_no_pmu),
                        "no hardware PMU: perf_event_open(PERF_TYPE_HARDWARE) returned %s%s",
                        live_errno_name(-rc),
                        has_dir ? "" : " (no cpu PMU in /sys/bus/event_source/devices)");

        char path[256];
        snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/caps/branches",
                 has_dir ? pmu : "cpu");
        int depth = 0;
        if (!caps->has_pmu) {
                cap_msg(caps->why_no_lbr, sizeof(caps->why_no_lbr),
                        "no LBR: no hardware PMU (perf_event_open(PERF_TYPE_HARDWARE) returned "
                        "%s; no %s)",
                        live_errno_name(-rc), path);
        } else if (live_read_int_file(path, &depth) < 0 || depth <= 0) {
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
