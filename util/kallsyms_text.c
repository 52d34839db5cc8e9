/* SPDX-License-Identifier: MIT */
/* kallsyms_text.c: owns the process's copy of /proc/kallsyms, root's copy of it on disk and the
   cache files made from it (kallsyms_cache_map), and the rule for reusing them: the same kernel
   state (kallsyms_state). */
#include "util/kallsyms_text.h"
#include "util/write_all.h"
#include "util/mem_policy.h"
#include "util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_BYTES      ((size_t)256 << 20)
#define CHUNK          65536
#define POPULATE_AHEAD ((size_t)256 << 10)
#define MAGIC          "etwtop kallsyms cache 1\n"
#define CACHE          "kallsyms.cache"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *kept; /* the last text read, NULL when none */
static size_t kept_len;
static char *kept_state; /* the kernel's state at that read */
static const char *kallsyms_path = "/proc/kallsyms", *modules_path = "/proc/modules";
static const char *cache_dir_set; /* kallsyms_text_set_paths's, when is_cache_dir_set */
static bool is_cache_dir_set;

/* fd's whole text (up to MAX_BYTES), NUL-terminated; between after each chunk. NULL with errno
   set on a read error. */
static char *read_all(int fd, size_t *len_out, void (*between)(void *), void *ctx)
{
        size_t cap = (size_t)1 << 20, len = 0, populated = 0;
        char *text = xmalloc(cap);
        for (;;) {
                if (len + CHUNK + 1 > cap) {
                        if (cap >= MAX_BYTES)
                                break; /* no kallsyms is this long: what was read is kept */
                        cap *= 2;
                        text = xrealloc(text, cap);
                }
                /* the fresh pages faulted in at once, not one by one as the kernel copies into
                   them (1,300 page faults for 6.18's kallsyms): as many as were read so far,
                   a chunk at first (a short file costs a chunk) and POPULATE_AHEAD at most
                   (what the text does not reach is faulted in for nothing), each time the
                   reads come near the last of them. A read of /proc/kallsyms returns a page:
                   a call each read (1,300 of them) walked pages already there. */
                if (len + CHUNK > populated) {
                        size_t ahead = len < CHUNK            ? CHUNK
                                       : len > POPULATE_AHEAD ? POPULATE_AHEAD
                                                              : len;
                        if (ahead > cap - len)
                                ahead = cap - len;
                        mem_policy_populate(text + len, ahead);
                        populated = len + ahead;
                }
                ssize_t r = read(fd, text + len, CHUNK);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0) {
                        int e = errno;
                        free(text);
                        errno = e;
                        return NULL;
                }
                if (r == 0)
                        break;
                len += (size_t)r;
                if (between)
                        between(ctx);
        }
        text[len] = 0;
        *len_out = len;
        return text;
}

static char *read_path(const char *path, size_t *len)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return NULL;
        char *text = read_all(fd, len, NULL, NULL);
        close(fd);
        return text;
}

/* Appends the first and sixth fields of each line of modules (name, load address): what tells
   that modules came or went (their refcounts change all the time). */
static size_t put_modules(char *out, const char *modules)
{
        size_t o = 0;
        for (const char *line = modules; *line;) {
                const char *end = strchr(line, '\n');
                if (!end)
                        end = line + strlen(line);
                const char *f = line;
                for (int field = 0; f < end && field < 6; field++) {
                        const char *sp = memchr(f, ' ', (size_t)(end - f));
                        const char *fe = sp ? sp : end;
                        if (field == 0 || field == 5) {
                                memcpy(out + o, f, (size_t)(fe - f));
                                o += (size_t)(fe - f);
                                out[o++] = ' ';
                        }
                        f = fe + 1;
                }
                out[o++] = '\n';
                line = *end ? end + 1 : end;
        }
        return o;
}

/* What the symbols of /proc/kallsyms depend on besides the kernel image: the boot, who may see
   the addresses (kptr_restrict, euid), the modules and the BPF programs loaded (a program's
   JITed code has symbols of its own). A text read in the same state has the same symbols, but
   for trampolines made on the fly (ftrace's, kprobes'). */
static char *kallsyms_state(void)
{
        size_t n = 0;
        char *boot = read_path("/proc/sys/kernel/random/boot_id", &n);
        char *kptr = read_path("/proc/sys/kernel/kptr_restrict", &n);
        char *modules = read_path(modules_path, &n);
        size_t cap = 256 + (boot ? strlen(boot) : 0) + (kptr ? strlen(kptr) : 0) +
                     (modules ? 2 * strlen(modules) + 1 : 0);
        char *state = xmalloc(cap);
        size_t o = (size_t)snprintf(state, cap, "euid %u\nboot %skptr_restrict %smodules\n",
                                    (unsigned)geteuid(), boot ? boot : "?\n", kptr ? kptr : "?\n");
        if (modules)
                o += put_modules(state + o, modules);
        state[o] = 0;
        free(boot);
        free(kptr);
        free(modules);
        /* the BPF programs, by id (root may ask; others cache nothing) */
        union bpf_attr attr;
        memset(&attr, 0, sizeof(attr));
        size_t nr = 0;
        char id[16];
        while (syscall(SYS_bpf, BPF_PROG_GET_NEXT_ID, &attr, sizeof(attr)) == 0 && nr < 65536) {
                int k = snprintf(id, sizeof(id), "%u ", attr.next_id);
                state = xrealloc(state, o + (size_t)k + 16);
                memcpy(state + o, id, (size_t)k + 1);
                o += (size_t)k;
                attr.start_id = attr.next_id;
                nr++;
        }
        memcpy(state + o, "\nbpf done\n", 11);
        return state;
}

/* root's cache file named name: in $ETWTOP_RUNTIME_DIR (an absolute one) or /run/etwtop; none
   for others (the addresses are root's to see). */
static bool cache_path(char *out, size_t size, const char *name)
{
        const char *dir;
        if (is_cache_dir_set) {
                dir = cache_dir_set;
        } else {
                const char *env = getenv("ETWTOP_RUNTIME_DIR");
                dir = geteuid() != 0                              ? NULL
                      : env && env[0] == '/' && !strchr(env, '%') ? env
                                                                  : "/run/etwtop";
        }
        if (!dir)
                return false;
        int n = snprintf(out, size, "%s/%s", dir, name);
        return n > 0 && (size_t)n < size;
}

/* Whether the directory of the cache file at path is a directory of this user's that no one
   else may write, the link itself (a symbolic link is not followed): else its files are neither
   read nor written. Others could put anything there, or take a name this process replaces
   (ETWTOP_RUNTIME_DIR=/tmp), and a link could lead the files anywhere. */
static bool is_private_dir_of(const char *path)
{
        char dir[4096];
        snprintf(dir, sizeof(dir), "%s", path);
        char *slash = strrchr(dir, '/');
        if (!slash)
                return false;
        *slash = 0;
        struct stat st;
        return lstat(dir[0] ? dir : "/", &st) == 0 && S_ISDIR(st.st_mode) &&
               st.st_uid == geteuid() && !(st.st_mode & 022);
}

/* A cache file named name opened for reading when it is this user's own regular file that no
   one else may write (a 0600 file in root's directory); -1 otherwise. Its size in *size. */
static int cache_open(const char *name, size_t *size)
{
        char path[4096];
        if (!cache_path(path, sizeof(path), name) || !is_private_dir_of(path))
                return -1;
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -1;
        struct stat st;
        if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
            (st.st_mode & 022) || (uint64_t)st.st_size > MAX_BYTES) {
                close(fd);
                return -1;
        }
        *size = (size_t)st.st_size;
        return fd;
}

/* The length of a cache file's header: the magic and the state, padded with NULs to 8 bytes
   when is_aligned (what follows is then an array that is read in place). */
static size_t header_len(const char *state, bool is_aligned)
{
        size_t n = strlen(MAGIC) + strlen(state);
        return is_aligned ? (n + 7) & ~(size_t)7 : n;
}

/* Whether data of n bytes starts with the header of state. */
static bool is_header_of(const char *data, size_t n, const char *state, bool is_aligned)
{
        size_t magic = strlen(MAGIC), sn = strlen(state), hn = header_len(state, is_aligned);
        if (n < hn || memcmp(data, MAGIC, magic) != 0 || memcmp(data + magic, state, sn) != 0)
                return false;
        for (size_t i = magic + sn; i < hn; i++) {
                if (data[i])
                        return false;
        }
        return true;
}

/* The text of the cache file when it is this user's and was written in state; else NULL. Read
   into a buffer of its size at once: growing one as /proc/kallsyms's is grown, moving the text
   over the header and copying it again cost more than the read (each copy faults in fresh
   pages of its 5 MB). */
static char *cache_load(const char *state, size_t *len)
{
        size_t size = 0, hn = header_len(state, false);
        int fd = cache_open(CACHE, &size);
        if (fd < 0)
                return NULL;
        char *head = xmalloc(hn + 1), *text = NULL;
        ssize_t got = size >= hn ? pread(fd, head, hn, 0) : -1;
        if (got == (ssize_t)hn && is_header_of(head, hn, state, false)) {
                size_t n = size - hn, o = 0;
                text = xmalloc(n + 1);
                while (o < n) {
                        ssize_t r = pread(fd, text + o, n - o, (off_t)(hn + o));
                        if (r < 0 && errno == EINTR)
                                continue;
                        if (r <= 0)
                                break;
                        o += (size_t)r;
                }
                if (o == n) {
                        text[n] = 0;
                        *len = n;
                } else {
                        free(text); /* cut while read: read the file again */
                        text = NULL;
                }
        }
        free(head);
        close(fd);
        return text; /* NULL: another state, another writer, or damaged */
}

/* Writes the cache file named name: the header of state (aligned: is_aligned), then the body's
   nr parts one after the other (a new file renamed over the old: readers see one or the other
   whole). Whether it was written. */
static bool cache_store(const char *name, const char *state, bool is_aligned,
                        const struct kallsyms_cache_part *body, size_t nr)
{
        char path[4096], tmp[4200];
        if (!cache_path(path, sizeof(path), name))
                return false;
        char *slash = strrchr(path, '/');
        *slash = 0;
        if (mkdir(path, 0700) < 0 && errno != EEXIST)
                return false;
        *slash = '/';
        if (!is_private_dir_of(path))
                return false;
        snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return false;
        static const char pad[8];
        size_t sn = strlen(state), hn = header_len(state, is_aligned);
        bool ok = write_all(fd, MAGIC, strlen(MAGIC)) && write_all(fd, state, sn) &&
                  write_all(fd, pad, hn - strlen(MAGIC) - sn);
        for (size_t i = 0; i < nr && ok; i++)
                ok = write_all(fd, body[i].data, body[i].len);
        if (close(fd) < 0)
                ok = false;
        if (!ok || rename(tmp, path) < 0) {
                unlink(tmp);
                return false;
        }
        return true;
}

static void keep(char *state, const char *text, size_t len)
{
        char *copy = xmalloc(len + 1);
        memcpy(copy, text, len + 1);
        pthread_mutex_lock(&lock);
        free(kept);
        free(kept_state);
        kept = copy;
        kept_len = len;
        kept_state = state;
        pthread_mutex_unlock(&lock);
}

char *kallsyms_text_read(size_t *len, void (*between)(void *ctx), void *ctx)
{
        char *state = kallsyms_state();
        pthread_mutex_lock(&lock);
        if (kept && strcmp(state, kept_state) == 0) {
                char *copy = xmalloc(kept_len + 1);
                memcpy(copy, kept, kept_len + 1);
                *len = kept_len;
                pthread_mutex_unlock(&lock);
                free(state);
                return copy;
        }
        pthread_mutex_unlock(&lock);
        /* the cache file's text is not kept as well: a second read of the file costs what a
           copy of the kept text would, and the process holds 5 MB less */
        char *text = cache_load(state, len);
        if (text) {
                free(state);
                return text;
        }
        /* read without the lock: another reader waits for nothing (two at once both read) */
        int fd = open(kallsyms_path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                int e = errno;
                free(state);
                errno = e;
                return NULL;
        }
        text = read_all(fd, len, between, ctx);
        int e = errno;
        close(fd);
        if (!text) {
                free(state);
                errno = e;
                return NULL;
        }
        /* kept in the process only where the cache file could not be written: a copy of 5 MB
           into fresh pages (1,350 page faults at each screen's start, a few ms) and held for
           the process's life, where the file serves the next read in this state as fast */
        if (cache_store(CACHE, state, false, &(struct kallsyms_cache_part){text, *len}, 1))
                free(state);
        else
                keep(state, text, *len);
        return text;
}

char *kallsyms_text_state(void)
{
        return kallsyms_state();
}

/* Maps the cache file name when it was written in state (its header aligned: is_aligned), with
   all its pages at once where is_populated. */
static bool cache_map(const char *name, const char *state, bool is_aligned, bool is_populated,
                      struct kallsyms_cache_map *m)
{
        memset(m, 0, sizeof(*m));
        size_t size = 0, hn = header_len(state, is_aligned);
        int fd = cache_open(name, &size);
        if (fd < 0)
                return false;
        int flags = MAP_PRIVATE | (is_populated ? MAP_POPULATE : 0);
        void *base = size > hn ? mmap(NULL, size, PROT_READ, flags, fd, 0) : MAP_FAILED;
        close(fd);
        if (base == MAP_FAILED)
                return false;
        if (!is_header_of(base, size, state, is_aligned)) {
                munmap(base, size);
                return false;
        }
        m->data = (const char *)base + hn;
        m->len = size - hn;
        m->base = base;
        m->size = size;
        return true;
}

bool kallsyms_cache_map(const char *name, const char *state, struct kallsyms_cache_map *m)
{
        return cache_map(name, state, true, false, m);
}

bool kallsyms_text_map(const char *state, struct kallsyms_cache_map *m)
{
        return cache_map(CACHE, state, false, true, m);
}

bool kallsyms_cache_is_kept(void)
{
        char path[4096];
        return cache_path(path, sizeof(path), CACHE);
}

void kallsyms_cache_unmap(struct kallsyms_cache_map *m)
{
        if (m->base)
                munmap(m->base, m->size);
        memset(m, 0, sizeof(*m));
}

void kallsyms_cache_store(const char *name, const char *state, const void *data, size_t len)
{
        cache_store(name, state, true, &(struct kallsyms_cache_part){data, len}, 1);
}

void kallsyms_cache_store_parts(const char *name, const char *state,
                                const struct kallsyms_cache_part *parts, size_t nr)
{
        cache_store(name, state, true, parts, nr);
}

void kallsyms_text_forget(void)
{
        pthread_mutex_lock(&lock);
        free(kept);
        free(kept_state);
        kept = kept_state = NULL;
        kept_len = 0;
        pthread_mutex_unlock(&lock);
}

void kallsyms_text_set_paths(const char *kallsyms, const char *modules, const char *cache_dir,
                             bool is_cache_dir)
{
        kallsyms_text_forget();
        pthread_mutex_lock(&lock);
        kallsyms_path = kallsyms ? kallsyms : "/proc/kallsyms";
        modules_path = modules ? modules : "/proc/modules";
        cache_dir_set = cache_dir;
        is_cache_dir_set = is_cache_dir;
        pthread_mutex_unlock(&lock);
}
