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

void proc_cmdline_of(void *ctx, uint32_t pid, char *buf, size_t size)
{
        (void)ctx;
        proc_read_cmdline(pid, buf, size);
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
        (void)ctx;
        return proc_read_uid(pid);
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

uint32_t proc_build_id(struct live_source *ls, const char *path, uint8_t *id, uint32_t max)
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
