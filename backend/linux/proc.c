/* SPDX-License-Identifier: MIT */
/* proc.c: what the converter asks of /proc and the files: a process's command line, owner and
   /proc/PID/stat, and the build-ids of ELF files (cached). */
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
#include "util/elf_build_id.h"
#include "util/hash.h"

void proc_read_cmdline(uint32_t pid, char *buf, size_t size)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
        ssize_t n = live_read_small(path, buf, size);
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

/* proc_aside's reader: both parts of an answer. */
void proc_read_both(uint32_t pid, char *cmdline, size_t size, uint32_t *uid)
{
        proc_read_cmdline(pid, cmdline, size);
        *uid = proc_read_uid(pid);
}

/* The answer for pid from the reader thread, asked for when the record's conversion has not
   asked yet (or has taken that part): true when the reader answered in time. */
static bool answer_of(struct live_source *ls, uint32_t pid, bool is_cmdline)
{
        struct proc_answer *a = &ls->answer;
        struct perf_conv_stats st;
        perf_conv_get_stats(ls->conv, &st);
        if (a->pid != pid || a->record != st.nr_records ||
            !(is_cmdline ? a->has_cmdline : a->has_uid)) {
                a->pid = pid;
                a->record = st.nr_records;
                a->is_known =
                        proc_aside_ask(ls->aside, pid, a->cmdline, sizeof(a->cmdline), &a->uid);
                a->has_cmdline = a->has_uid = true;
        }
        if (is_cmdline)
                a->has_cmdline = false;
        else
                a->has_uid = false;
        return a->is_known;
}

void proc_cmdline_of(void *ctx, uint32_t pid, char *buf, size_t size)
{
        struct live_source *ls = ctx;
        if (!ls->aside) {
                proc_read_cmdline(pid, buf, size);
                return;
        }
        /* unknown when the reader did not answer in time: a fork's child then has its
           parent's, as a process whose /proc is gone already has */
        size_t n = answer_of(ls, pid, true) ? strnlen(ls->answer.cmdline, size - 1) : 0;
        memcpy(buf, ls->answer.cmdline, n);
        buf[n] = 0;
}

/* The effective uid of pid (the second of /proc/PID/status's Uid: real, effective, saved, fs),
   PERF_CONV_NO_UID when it cannot be read. */
uint32_t proc_read_uid(uint32_t pid)
{
        char path[64], buf[2048];
        snprintf(path, sizeof(path), "/proc/%u/status", pid);
        if (live_read_small(path, buf, sizeof(buf)) <= 0)
                return PERF_CONV_NO_UID;
        const char *p = strstr(buf, "\nUid:");
        unsigned long real, effective;
        if (!p || sscanf(p + 5, "%lu %lu", &real, &effective) != 2 || effective >= UINT32_MAX)
                return PERF_CONV_NO_UID;
        return (uint32_t)effective;
}

uint32_t proc_uid_of(void *ctx, uint32_t pid)
{
        struct live_source *ls = ctx;
        if (!ls->aside)
                return proc_read_uid(pid);
        return answer_of(ls, pid, false) ? ls->answer.uid : PERF_CONV_NO_UID;
}

uint32_t proc_build_id(struct live_source *ls, const char *path, uint8_t *id, uint32_t max)
{
        uint32_t mask = LIVE_BUILD_ID_CACHE - 1;
        uint32_t i = (uint32_t)hash_str(path) & mask;
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
        uint32_t n = elf_build_id_read(path, tmp, sizeof(tmp));
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

uint32_t proc_build_id_of(void *ctx, const char *path, uint8_t *id, uint32_t max)
{
        return proc_build_id(ctx, path, id, max);
}

/* Parses /proc/PID/stat: comm, ppid, session and the priority (kernel prio - 100). */
bool proc_stat(const char *path, char *comm, size_t comm_size, uint32_t *ppid, uint32_t *session,
               int64_t *prio)
{
        char buf[1024];
        if (live_read_small(path, buf, sizeof(buf)) <= 0)
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
