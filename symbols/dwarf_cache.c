/* SPDX-License-Identifier: MIT */
/* dwarf_cache.c: owns the on-disk cache of inflated DWARF sections (dwarf_cache.h): where it
   is, whether it may be used, its entries' names and layout, and its size. */
#include "dwarf_cache.h"

#include "util/hash.h"
#include "util/write_all.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define HEADER_BYTES    64u
#define MAGIC           "etwtop dwarf 1\n" /* 15 bytes and its NUL: the header's first 16 */
#define DEFAULT_MAX     (1ull << 30)
#define NAME_LEN        35 /* 32 hex digits and ".dw" (inflated DWARF) or ".st" (a symbol table) */
#define TMP_PREFIX      ".tmp-"
#define STALE_TMP_SECS  600 /* a temporary this old was left by a writer that died */
#define MAX_DIR_ENTRIES 100000

static _Atomic uint64_t max_bytes_set;
static atomic_uint tmp_counter;

void dwarf_cache_set_max_bytes(uint64_t max_bytes)
{
        atomic_store(&max_bytes_set, max_bytes);
}

static uint64_t max_bytes(void)
{
        uint64_t m = atomic_load(&max_bytes_set);
        return m ? m : DEFAULT_MAX;
}

void dwarf_cache_key(const void *in, size_t in_n, uint64_t size, struct dwarf_cache_key *key)
{
        const unsigned char *p = in;
        uint64_t a = 0x9e3779b97f4a7c15ull ^ in_n, b = 0xc2b2ae3d27d4eb4full ^ size;
        size_t i = 0;
        /* two lanes, a multiply and a rotation a word: each step a bijection of the lane */
        for (; i + 16 <= in_n; i += 16) {
                uint64_t w0, w1;
                memcpy(&w0, p + i, 8);
                memcpy(&w1, p + i + 8, 8);
                a = (a ^ w0) * 0xff51afd7ed558ccdull;
                a = a << 31 | a >> 33;
                b = (b ^ w1) * 0xc4ceb9fe1a85ec53ull;
                b = b << 29 | b >> 35;
        }
        uint64_t tail[2] = {0, 0}; /* the last 0 to 15 bytes */
        memcpy(tail, p + i, in_n - i);
        a = hash_mix64(a ^ tail[0]);
        b = hash_mix64(b ^ tail[1]);
        key->h[0] = hash_mix64(a ^ hash_mix64(b));
        key->h[1] = hash_mix64(b + hash_mix64(a ^ size));
        key->in_n = in_n;
        key->size = size;
}

static void entry_name(const struct dwarf_cache_key *key, const char *suffix,
                       char name[NAME_LEN + 1])
{
        snprintf(name, NAME_LEN + 1, "%016" PRIx64 "%016" PRIx64 "%s", key->h[0], key->h[1],
                 suffix);
}

static void header_of(const struct dwarf_cache_key *key, unsigned char h[HEADER_BYTES])
{
        memset(h, 0, HEADER_BYTES);
        memcpy(h, MAGIC, sizeof(MAGIC));
        uint64_t v[4] = {key->h[0], key->h[1], key->in_n, key->size};
        memcpy(h + 16, v, sizeof(v));
}

/* Whether dir is a directory of this user's: root run with another user's $HOME (sudo that
   keeps it) makes nothing of root's there. */
static bool is_own_dir(const char *dir)
{
        struct stat st;
        return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid();
}

/* The directory's path (see dwarf_cache.h); false where there is none. */
static bool dir_path(char *out, size_t size)
{
        const char *env = getenv("ETWTOP_DWARF_CACHE"), *base;
        int n;
        if (env) {
                if (env[0] != '/')
                        return false; /* "off", empty, or not absolute: none */
                n = snprintf(out, size, "%s", env);
        } else if ((base = getenv("XDG_CACHE_HOME")) && base[0] == '/') {
                n = is_own_dir(base) ? snprintf(out, size, "%s/etwtop/dwarf", base) : 0;
        } else if ((base = getenv("HOME")) && base[0] == '/') {
                n = is_own_dir(base) ? snprintf(out, size, "%s/.cache/etwtop/dwarf", base) : 0;
        } else {
                return false;
        }
        return n > 1 && (size_t)n < size;
}

/* The directory opened (O_PATH would not list it), when it is this user's and no one else may
   write it, the name itself not a symbolic link; created first (each missing part 0700) when
   is_create. -1 otherwise. */
static int open_dir(bool is_create)
{
        char path[4096];
        if (!dir_path(path, sizeof(path)))
                return -1;
        if (is_create) {
                for (char *s = strchr(path + 1, '/');; s = strchr(s + 1, '/')) {
                        if (s)
                                *s = 0;
                        if (mkdir(path, 0700) < 0 && errno != EEXIST) {
                                if (s)
                                        *s = '/';
                                return -1;
                        }
                        if (!s)
                                break;
                        *s = '/';
                }
        }
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -1;
        struct stat st;
        if (fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
            (st.st_mode & 022)) {
                close(fd);
                return -1;
        }
        return fd;
}

/* Whether st is a file this cache may read, keep or remove: a regular file of this user's that
   no one else may write. */
static bool is_own_file(const struct stat *st)
{
        return S_ISREG(st->st_mode) && st->st_uid == geteuid() && !(st->st_mode & 022);
}

/* The entry of key named with suffix, mapped into *m: its data key->size bytes, or, where
   is_sized is false (a symbol table's: its key made with size 0), as many as the file holds. */
static bool find_entry(const struct dwarf_cache_key *key, const char *suffix, bool is_sized,
                       struct dwarf_cache_map *m)
{
        *m = (struct dwarf_cache_map){0};
        if (key->size > SIZE_MAX - HEADER_BYTES)
                return false;
        int dir = open_dir(false);
        if (dir < 0)
                return false;
        char name[NAME_LEN + 1];
        entry_name(key, suffix, name);
        /* O_NONBLOCK: a FIFO at the name does not hold the open (it is refused below) */
        int fd = openat(dir, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
        close(dir);
        if (fd < 0)
                return false;
        struct stat st;
        size_t len = HEADER_BYTES + (size_t)key->size;
        void *map = MAP_FAILED;
        bool is_own = fstat(fd, &st) == 0 && is_own_file(&st);
        if (is_own && !is_sized && st.st_size >= HEADER_BYTES &&
            (uint64_t)st.st_size <= max_bytes())
                len = (size_t)st.st_size;
        if (is_own && (uint64_t)st.st_size == len)
                map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map != MAP_FAILED) {
                unsigned char want[HEADER_BYTES];
                header_of(key, want);
                if (memcmp(map, want, HEADER_BYTES) != 0) {
                        munmap(map, len);
                        map = MAP_FAILED;
                } else {
                        futimens(fd, NULL); /* used: the last to go when room is made */
                }
        }
        close(fd);
        if (map == MAP_FAILED)
                return false;
        *m = (struct dwarf_cache_map){map, len, (const unsigned char *)map + HEADER_BYTES,
                                      len - HEADER_BYTES};
        return true;
}

bool dwarf_cache_find(const struct dwarf_cache_key *key, struct dwarf_cache_map *m)
{
        return find_entry(key, ".dw", true, m);
}

bool dwarf_cache_find_table(const struct dwarf_cache_key *key, struct dwarf_cache_map *m)
{
        return key->size == 0 && find_entry(key, ".st", false, m);
}

void dwarf_cache_unmap(struct dwarf_cache_map *m)
{
        if (m && m->map)
                munmap(m->map, m->map_len);
        if (m)
                *m = (struct dwarf_cache_map){0};
}

struct entry {
        char name[NAME_LEN + 1];
        uint64_t bytes;
        struct timespec mtime;
};

static int by_mtime(const void *x, const void *y)
{
        const struct entry *a = x, *b = y;
        if (a->mtime.tv_sec != b->mtime.tv_sec)
                return a->mtime.tv_sec < b->mtime.tv_sec ? -1 : 1;
        return (a->mtime.tv_nsec > b->mtime.tv_nsec) - (a->mtime.tv_nsec < b->mtime.tv_nsec);
}

static bool is_entry_name(const char *s)
{
        if (strlen(s) != NAME_LEN || (strcmp(s + 32, ".dw") != 0 && strcmp(s + 32, ".st") != 0))
                return false;
        for (int i = 0; i < 32; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                        return false;
        return true;
}

/* Removes the least recently used entries until need more bytes fit under the cap, and the
   temporaries writers left; only regular files of this user's with the cache's names. */
static void make_room(int dir, uint64_t need)
{
        int fd = dup(dir);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        if (!d) {
                if (fd >= 0)
                        close(fd);
                return;
        }
        struct entry *list = NULL;
        size_t nr = 0, cap = 0;
        uint64_t total = 0;
        time_t now = time(NULL);
        for (struct dirent *e; (e = readdir(d)) && nr < MAX_DIR_ENTRIES;) {
                bool is_tmp = strncmp(e->d_name, TMP_PREFIX, strlen(TMP_PREFIX)) == 0;
                if (!is_tmp && !is_entry_name(e->d_name))
                        continue;
                struct stat st;
                if (fstatat(dir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !is_own_file(&st))
                        continue;
                if (is_tmp) {
                        if (now - st.st_mtime > STALE_TMP_SECS)
                                unlinkat(dir, e->d_name, 0);
                        continue;
                }
                if (nr == cap) {
                        cap = cap ? 2 * cap : 64;
                        list = xrealloc(list, cap * sizeof(*list));
                }
                snprintf(list[nr].name, sizeof(list[nr].name), "%s", e->d_name);
                list[nr].bytes = (uint64_t)st.st_size;
                list[nr].mtime = st.st_mtim;
                total += (uint64_t)st.st_size;
                nr++;
        }
        closedir(d);
        uint64_t cap_bytes = max_bytes();
        if (total + need > cap_bytes) {
                qsort(list, nr, sizeof(*list), by_mtime);
                for (size_t i = 0; i < nr && total + need > cap_bytes; i++) {
                        struct stat st;
                        /* still the file that was listed, still ours */
                        if (fstatat(dir, list[i].name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                            is_own_file(&st) && unlinkat(dir, list[i].name, 0) == 0)
                                total -= list[i].bytes < total ? list[i].bytes : total;
                }
        }
        free(list);
}

/* Keeps data[0..n) as the entry of key named with suffix. */
static void store_entry(const struct dwarf_cache_key *key, const char *suffix, const void *out,
                        uint64_t n)
{
        uint64_t len = HEADER_BYTES + n;
        if (n > max_bytes() || len > max_bytes() || len > SIZE_MAX)
                return;
        int dir = open_dir(true);
        if (dir < 0)
                return;
        make_room(dir, len);
        char name[NAME_LEN + 1], tmp[64];
        entry_name(key, suffix, name);
        snprintf(tmp, sizeof(tmp), TMP_PREFIX "%d-%u", (int)getpid(),
                 atomic_fetch_add(&tmp_counter, 1));
        int fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd >= 0) {
                unsigned char h[HEADER_BYTES];
                header_of(key, h);
                bool ok = write_all(fd, h, sizeof(h)) && write_all(fd, out, (size_t)n);
                if (close(fd) != 0)
                        ok = false;
                /* the name is replaced whole: a reader maps the old file or the new */
                if (!ok || renameat(dir, tmp, dir, name) != 0)
                        unlinkat(dir, tmp, 0);
        }
        close(dir);
}

void dwarf_cache_store(const struct dwarf_cache_key *key, const void *out)
{
        if (key->size >= DWARF_CACHE_MIN_BYTES)
                store_entry(key, ".dw", out, key->size);
}

void dwarf_cache_store_table(const struct dwarf_cache_key *key, const void *data, size_t len)
{
        if (key->size == 0)
                store_entry(key, ".st", data, len);
}
