/* SPDX-License-Identifier: MIT */
/* rundown.c: the DCStart rundown: a snapshot of the processes, threads and images in /proc, read
   on a thread of its own while the drains keep the rings empty, then written in order. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
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
#include "util/thread_sched.h"
#include "util/xalloc.h"

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

/* Reads a hexadecimal number at *p (one digit at least) and moves *p past it. */
static bool maps_hex(const char **p, unsigned long long *out)
{
        unsigned long long v = 0;
        const char *q = *p;
        for (;; q++) {
                unsigned c = (unsigned char)*q, d = c - '0', x = (c | 0x20) - 'a';
                if (d < 10)
                        v = v << 4 | d;
                else if (x < 6)
                        v = v << 4 | (x + 10);
                else
                        break;
        }
        if (q == *p)
                return false;
        *p = q;
        *out = v;
        return true;
}

/* One line of /proc/PID/maps, "START-END PERMS OFFSET DEV INODE   NAME": what sscanf's
   "%llx-%llx %7s %llx %*s %*s %n" read, without its cost (4,000 instructions a line, the most
   of a rundown): false for a line that is not executable or not of that form. */
static bool maps_exec_line(const char *line, unsigned long long *start, unsigned long long *end,
                           unsigned long long *off, const char **name)
{
        const char *p = line;
        if (!maps_hex(&p, start) || *p++ != '-' || !maps_hex(&p, end) || *p++ != ' ')
                return false;
        const char *perms = p;
        while (*p && *p != ' ')
                p++;
        if (p - perms < 3 || perms[2] != 'x' || *p++ != ' ' || !maps_hex(&p, off) || *p != ' ')
                return false;
        for (int field = 0; field < 2; field++) { /* the device, the inode */
                while (*p == ' ')
                        p++;
                if (!*p || *p == '\n')
                        return false;
                while (*p && *p != ' ' && *p != '\n')
                        p++;
        }
        while (*p && isspace((unsigned char)*p))
                p++;
        *name = p;
        return true;
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
                const char *at;
                if (!maps_exec_line(line, &start, &end, &off, &at))
                        continue;
                char *name = line + (at - line);
                name[strcspn(name, "\n")] = 0;
                if (!name[0] || strcmp(name, "[vsyscall]") == 0)
                        continue;
                struct rundown_item *it = rundown_add(rd, RUNDOWN_IMAGE);
                uint32_t bid_size = name[0] == '/' ? proc_build_id(ls, name, it->build_id, 20) : 0;
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
                proc_read_cmdline(pid, cmdline, sizeof(cmdline));
                struct rundown_item *it = rundown_add(rd, RUNDOWN_PROCESS);
                it->name = xstrdup(comm);
                it->text = xstrdup(cmdline);
                it->p = (struct perf_conv_process){pid,      ppid,     session,
                                                   it->name, it->text, proc_read_uid(pid)};
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
                        int64_t tprio = prio;
                        /* the main thread's name and priority are those of the process's stat
                           just read (the kernel formats both from the group leader): its own
                           stat again was most of the threads' reads of a machine of
                           single-threaded processes */
                        snprintf(tcomm, sizeof(tcomm), "%s", comm);
                        snprintf(path, sizeof(path), "/proc/%u/task/%u/stat", pid, tid);
                        if (tid != pid &&
                            !proc_stat(path, tcomm, sizeof(tcomm), &tppid, &tsession, &tprio))
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
        thread_name_self("etwtop-rundown");
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
                ksyms_wait_sites(ls, &sites);
        }
        atomic_store(&rd->is_done, true);
        uint64_t one = 1;
        if (write(rd->done_fd, &one, sizeof(one)) < 0) {
                /* the drains see is_done on their next wake-up */
        }
        return NULL;
}

/* Starts fn(arg) on a thread of its own that takes no signal (the process's handlers run on its
   own threads), at the real-time priority below the drain's (LIVE_RT_PRIORITY_ASIDE) where
   that is permitted, else at the ordinary one. Not at the drain's: reading /proc for a machine
   of many threads, or /proc/kallsyms, takes hundreds of milliseconds of CPU, which would keep
   the drain from a CPU. Not at the ordinary one where it can be helped: on a busy machine (load
   40 on 2 CPUs: a build beside startup_loss.sh's load) the start's rundown of 6,500 items took
   24 s there, the controller's first update waited for it, and the records held meanwhile
   reached the screen all at once, more than its real-time queue holds. 0 or an errno. */
static int aside_start(pthread_t *thread, void *(*fn)(void *), void *arg)
{
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        /* explicit, not the creator's (the logger's, at an update) */
        int rc = thread_create_sched(thread, fn, arg, SCHED_FIFO, LIVE_RT_PRIORITY_ASIDE);
        if (rc != 0)
                rc = thread_create_sched(thread, fn, arg, SCHED_OTHER, 0);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return rc;
}

/* The DCStart rundown of the groups in flags (EVENT_TRACE_FLAG_PROCESS, _THREAD, _IMAGE_LOAD),
   stamped ts: at start for the groups on, at an update for the groups it turns on, so that the
   processes, threads and images already there are known from then on. /proc is read on a
   thread of its own while the drains keep the rings empty (a rundown of thousands of threads
   on a busy machine took longer than a ring holds); its records are written, and the records
   held meanwhile converted after them, by the first drain after it is done. Without a thread,
   it is read here. is_start: the start's (it also reads the kernel's blocking functions, and
   its records are flushed at once to the real-time consumers). */
void rundown_begin(struct live_source *ls, uint64_t ts, uint32_t flags, bool is_start)
{
        struct live_rundown *rd = &ls->rundown;
        flags &= EVENT_TRACE_FLAG_PROCESS | EVENT_TRACE_FLAG_THREAD | EVENT_TRACE_FLAG_IMAGE_LOAD;
        bool wants_sites = is_start && attr_spec_wants_cswitch(&ls->settings) &&
                           ls->caps.has_kernel && ls->caps.has_kallsyms && !ls->has_wait_sites;
        if (!flags && !wants_sites)
                return;
        rd->ts = ts;
        rd->flags = flags;
        rd->pid = ls->settings.pid;
        rd->wants_wait_sites = wants_sites;
        rd->is_start = is_start;
        rd->is_pending = true;
        atomic_store(&rd->is_done, false);
        int rc = rd->done_fd >= 0 ? aside_start(&rd->thread, rundown_main, ls) : EAGAIN;
        rd->has_thread = rc == 0;
        if (!rd->has_thread)
                rundown_main(ls);
}

struct sites_aside {
        struct live_source *ls;
        atomic_bool is_done;
};

static void *sites_main(void *arg)
{
        struct sites_aside *a = arg;
        thread_name_self("etwtop-sites");
        const struct perf_wait_site *sites;
        ksyms_wait_sites(a->ls, &sites);
        atomic_store(&a->is_done, true);
        return NULL;
}

/* The kernel's blocking functions, which the converter asks for at the first switch it meets
   (the switches' kernel callchains give the wait reasons), read before an update turns the
   switches on: on a thread of its own while this one keeps the rings empty. Read on the drain's
   path, /proc/kallsyms and its parse held the drain up for 160 ms on a busy 16-CPU machine and a
   switch-heavy CPU's ring (2 MiB there) overflowed: 96,212 records lost at the start of
   `--record`, whose switches an update turns on after StartTrace (bench/README.md, "Item 1 on
   16 CPUs"). The start's rundown reads them the same way (rundown_main). */
void rundown_wait_sites(struct live_source *ls)
{
        if (ls->has_wait_sites || !ls->caps.has_kernel || !ls->caps.has_kallsyms)
                return;
        struct sites_aside a = {.ls = ls};
        atomic_init(&a.is_done, false);
        pthread_t thread;
        if (aside_start(&thread, sites_main, &a) != 0) {
                sites_main(&a);
                return;
        }
        while (!atomic_load(&a.is_done)) {
                ring_take_all(ls);
                poll(NULL, 0, 1);
        }
        pthread_join(thread, NULL);
        ring_take_all(ls);
}

/* Writes the snapshot's records (and the kernel image's) at the rundown's time. */
static void rundown_write(struct live_source *ls, struct live_rundown *rd)
{
        for (size_t i = 0; i < rd->nr_items; i++) {
                struct rundown_item *it = &rd->items[i];
                if (i % 256 == 255)
                        ring_take_all(ls); /* thousands of records: the rings fill meanwhile */
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
                ksyms_rundown_kernel(ls, rd->ts);
}

void rundown_items_free(struct live_rundown *rd)
{
        for (size_t i = 0; i < rd->nr_items; i++) {
                free(rd->items[i].name);
                free(rd->items[i].text);
        }
        free(rd->items);
        rd->items = NULL;
        rd->nr_items = rd->cap_items = 0;
}

/* Drains every ring up to until (UINT64_MAX: everything): what must be converted before a
   rundown, a settings change or the close. */
/* Joins a rundown's thread when it is done (or, with wait, once it is) and writes its records.
   True when no rundown is under way any more. */
bool rundown_finish(struct live_source *ls, bool wait)
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
        ring_take_all(ls);
        return true;
}
