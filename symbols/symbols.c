/* SPDX-License-Identifier: MIT */
/* symbols.c: owns the symbol store: process address spaces, the module table shared by every
   process, the loader thread, the address cache, interned names and the source-line cache. */
#include "symbols/symbols.h"

#include "demangle.h"
#include "elf_module.h"
#include "symbols/kallsyms.h"
#include "symbols/module_name.h"
#include "symbols/sym_table.h"
#include "sym_server.h"
#include "sym_sources.h"
#include "symbols/pdb.h"
#include "util/in_file.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <strings.h>
#include <unistd.h>

#define KERNEL_START      0xffff800000000000ull /* x86-64 and arm64 kernel halves */
#define CACHE_MAX_ENTRIES (1u << 20)            /* 32 MB at most: when full, it starts over */
#define MAX_SRC_FRAMES    32

/* MOD_CLR: one .NET module's JIT-compiled methods in one process, from a recording's CLR
   method events (their names and address ranges; no file behind them) */
enum module_kind { MOD_ELF, MOD_VDSO, MOD_PE, MOD_KERNEL, MOD_JIT, MOD_CLR };

struct clr_method {
        uint64_t start, size;
        uint32_t name; /* interned */
};
enum load_state { LS_NEW = 0, LS_QUEUED, LS_LOADED, LS_FAILED };

struct module {
        uint32_t id;
        enum module_kind kind;
        char *path; /* owned */
        char *name; /* owned: the short name */
        uint8_t build_id[20];
        uint32_t build_id_size;
        uint32_t time_date_stamp, image_size, checksum; /* PE */
        uint32_t jit_pid;                               /* MOD_JIT */
        /* live ELF modules: the first mapping of the file (a process and its range), through
           which /proc/PID/map_files reads it where the path does not (deleted or replaced since
           it was mapped, another mount namespace); set when the module is made */
        uint32_t live_pid;
        uint64_t live_start, live_end;
        struct clr_method *methods; /* owned: MOD_CLR */
        uint32_t nr_methods, cap_methods;
        bool is_methods_dirty; /* methods came since the table was built */
        bool has_pdb;
        uint8_t pdb_guid[16];
        uint32_t pdb_age;
        char *pdb_name; /* owned */
        /* written by the loader, then published by state (release) */
        _Atomic int state;
        struct elf_module *elf;  /* owned: ELF and vdso */
        struct sym_table *table; /* owned: PE exports (RVAs), JIT and kernel (addresses) */
        struct kallsyms *ks;     /* owned: the live kernel's symbols (MOD_KERNEL, live) */
        struct pdb_lines *lines; /* owned: a Windows module's PDB line tables, or NULL */
        char file_used[PATH_MAX];
        char note[512];
        bool is_logged; /* caller's thread: its note went to the log */
};

struct mapping {
        uint64_t start, end; /* [start, end) */
        uint64_t pgoff;
        uint32_t module;
        bool is_absolute; /* rel is the address itself (kernel) */
        uint64_t time;    /* of its image event; 0: none */
};

/* A JIT-compiled .NET method of a process: [start, end) in the MOD_CLR module of its .NET
   module. */
struct space_method {
        uint64_t start, end;
        uint32_t module;
};

/* A .NET module of a process (its ModuleID in the CLR events) and its MOD_CLR module. */
struct space_clr_module {
        uint64_t clr_id;
        uint32_t module;
};

struct space {
        uint32_t pid;
        struct mapping *maps; /* owned, sorted by start, not overlapping */
        uint32_t nr, cap;
        struct space_method *methods; /* owned: sorted by start when is_methods_sorted */
        uint32_t nr_methods, cap_methods;
        bool is_methods_sorted;
        struct space_clr_module *clr_modules; /* owned */
        uint32_t nr_clr_modules, cap_clr_modules;
        uint32_t jit_module;  /* MOD_JIT for /tmp/perf-PID.map, 0 until asked */
        uint32_t hint;        /* the mapping sym_locate found last: frames cluster */
        uint64_t jit_checked; /* nr_polls + 1 when the map file was last found missing */
        bool is_ended;
        uint64_t end_serial; /* which end of the pid's processes the ended ring holds */
        uint64_t start_time; /* of the latest process start seen (event times); 0: none */
        uint64_t end_time;   /* of the latest process end seen; 0: none */
        /* made by the JIT probe: its place in the probed ring; 0: not */
        uint64_t probe_serial;
};

/* The ended processes whose spaces are kept: late events of a process still find its images,
   and memory stays bounded however many processes come and go. */
#define MAX_ENDED_SPACES 4096
/* The spaces sym_locate's JIT probe made for pids no event described (a process come and gone
   whose space has been forgotten, its late samples or rows placed again): the last
   MAX_PROBED_SPACES are kept, so that the probe asks the file system once per refresh each, and
   the oldest goes unless an event has described its process since. */
#define MAX_PROBED_SPACES 4096
struct ended_space {
        uint32_t pid;
        uint64_t serial;
};

struct cache_entry {
        uint64_t rel;
        uint32_t module; /* 0: free */
        uint32_t function;
        uint64_t offset;
        uint8_t state;
};

struct src_entry {
        uint64_t rel;
        uint32_t module; /* 0: free */
        uint32_t first;  /* in src_frames */
        uint32_t nr;
};

struct kernel_sym {
        uint64_t addr, size;
        uint32_t name;   /* interned */
        uint32_t module; /* interned kernel module name, 0 for the kernel */
};

struct sym_store {
        struct sym_options opt;
        /* modules: index = id; 0 unused */
        struct module **modules; /* owned */
        uint32_t nr_modules, cap_modules;
        uint32_t *module_keys; /* hash: interned key -> module id; 0 free */
        uint32_t module_keys_mask;
        /* spaces by pid */
        struct space **spaces; /* owned hash by pid, NULL free */
        uint32_t spaces_mask, nr_spaces;
        /* interned strings */
        char **strings; /* owned */
        uint32_t nr_strings, cap_strings;
        uint32_t *demangled;   /* owned, cap_strings: id -> id of its demangled form, 0 unknown */
        uint32_t *string_hash; /* id; 0 free */
        uint32_t string_hash_mask;
        size_t string_bytes;
        /* address cache */
        struct cache_entry *cache; /* owned */
        uint32_t cache_mask, nr_cache;
        /* source lines */
        struct src_entry *src; /* owned */
        uint32_t src_mask, nr_src;
        struct sym_srcframe *src_frames; /* owned */
        uint32_t nr_src_frames, cap_src_frames;
        /* the kernel */
        uint32_t kernel_module;
        bool has_linux_kernel;    /* a [kernel.kallsyms] image was described */
        struct kernel_sym *ksyms; /* owned: recorded kernel symbols */
        uint32_t nr_ksyms, cap_ksyms;
        bool is_ksyms_dirty;
        /* loader */
        pthread_t loader;
        bool has_loader;
        pthread_mutex_t lock;
        pthread_cond_t cond, idle;
        struct module **queue; /* owned ring */
        uint32_t queue_head, queue_len, queue_cap;
        bool is_busy, is_stopping;
        _Atomic uint32_t nr_done;
        uint32_t nr_done_seen;
        uint64_t nr_changes;         /* calls that changed what sym_locate or sym_resolve answer */
        struct space *last_space[2]; /* sym_locate's last user [0] and kernel [1] spaces */
        uint64_t nr_polls;           /* sym_store_poll calls: the screen's refreshes */
        struct ended_space *ended;   /* owned ring: MAX_ENDED_SPACES, oldest at ended_head */
        uint32_t ended_head, nr_ended;
        uint64_t nr_ends;
        struct ended_space *probed; /* owned ring: MAX_PROBED_SPACES, oldest at probed_head */
        uint32_t probed_head, nr_probed;
        uint64_t nr_probes;
        struct sym_path *path; /* owned: the symbol path, parsed (sym_server.h) */
        struct sym_stats st;
};

/* ---- small helpers ---- */

static uint64_t hash_bytes(const void *p, size_t n)
{
        const uint8_t *b = p;
        uint64_t h = 1469598103934665603ull;
        for (size_t i = 0; i < n; i++)
                h = (h ^ b[i]) * 1099511628211ull;
        return h ^ (h >> 29);
}

static uint64_t hash64(uint64_t x)
{
        x ^= x >> 33;
        x *= 0xff51afd7ed558ccdull;
        x ^= x >> 33;
        x *= 0xc4ceb9fe1a85ec53ull;
        return x ^ (x >> 33);
}

static void logf_(struct sym_store *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(struct sym_store *s, const char *fmt, ...)
{
        if (!s->opt.log)
                return;
        char msg[768];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        s->opt.log(s->opt.log_ctx, msg);
}

/* ---- interned strings ---- */

static void strings_rehash(struct sym_store *s, uint32_t cap)
{
        free(s->string_hash);
        s->string_hash = xcalloc(cap, sizeof(*s->string_hash));
        s->string_hash_mask = cap - 1;
        for (uint32_t id = 1; id < s->nr_strings; id++) {
                uint32_t j = (uint32_t)hash_bytes(s->strings[id], strlen(s->strings[id])) &
                             s->string_hash_mask;
                while (s->string_hash[j])
                        j = (j + 1) & s->string_hash_mask;
                s->string_hash[j] = id;
        }
}

static uint32_t intern_n(struct sym_store *s, const char *str, size_t len)
{
        if (!len)
                return 0;
        uint64_t h = hash_bytes(str, len);
        for (uint32_t j = (uint32_t)h & s->string_hash_mask;; j = (j + 1) & s->string_hash_mask) {
                uint32_t id = s->string_hash[j];
                if (!id)
                        break;
                if (strncmp(s->strings[id], str, len) == 0 && s->strings[id][len] == 0)
                        return id;
        }
        if (s->nr_strings == s->cap_strings) {
                s->cap_strings *= 2;
                s->strings = xrealloc(s->strings, s->cap_strings * sizeof(*s->strings));
                s->demangled = xrealloc(s->demangled, s->cap_strings * sizeof(*s->demangled));
                memset(s->demangled + s->cap_strings / 2, 0,
                       s->cap_strings / 2 * sizeof(*s->demangled));
        }
        char *copy = xmalloc(len + 1);
        memcpy(copy, str, len);
        copy[len] = 0;
        uint32_t id = s->nr_strings++;
        s->strings[id] = copy;
        s->string_bytes += len + 1;
        if ((s->nr_strings + 1) * 2 > s->string_hash_mask + 1) {
                strings_rehash(s, (s->string_hash_mask + 1) * 2);
        } else {
                uint32_t j = (uint32_t)h & s->string_hash_mask;
                while (s->string_hash[j])
                        j = (j + 1) & s->string_hash_mask;
                s->string_hash[j] = id;
        }
        return id;
}

uint32_t sym_intern(struct sym_store *s, const char *str)
{
        return str ? intern_n(s, str, strlen(str)) : 0;
}

const char *sym_name(const struct sym_store *s, uint32_t id)
{
        return s && id < s->nr_strings ? s->strings[id] : "";
}

/* The interned name of a function whose symbol is raw: demangled (C++, Rust) unless the options
   say not. Each raw name is demangled once: the answer is kept by its id. */
static uint32_t function_name(struct sym_store *s, const char *raw)
{
        uint32_t id = sym_intern(s, raw);
        if (s->opt.is_no_demangle || !id)
                return id;
        if (s->demangled[id])
                return s->demangled[id];
        char *d = sym_demangle(raw);
        uint32_t out = d ? sym_intern(s, d) : id;
        free(d);
        s->demangled[id] = out;
        s->demangled[out] = out; /* a demangled name is final */
        return out;
}

/* ---- modules ---- */

static bool has_suffix_ci(const char *s, const char *suffix)
{
        size_t n = strlen(s), m = strlen(suffix);
        return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

static bool is_pe_path(const char *path)
{
        return strchr(path, '\\') || has_suffix_ci(path, ".dll") || has_suffix_ci(path, ".exe") ||
               has_suffix_ci(path, ".sys") || has_suffix_ci(path, ".drv");
}

/* Mappings with no file behind them: addresses there are JIT code or data. */
static bool is_anonymous(const char *path)
{
        return !*path || strncmp(path, "//anon", 6) == 0 || strcmp(path, "[heap]") == 0 ||
               strncmp(path, "[stack", 6) == 0 || strncmp(path, "[anon", 5) == 0 ||
               strncmp(path, "anon_inode:", 11) == 0 || strcmp(path, "[vvar]") == 0 ||
               strncmp(path, "/memfd:", 7) == 0 || strncmp(path, "/dev/zero", 9) == 0;
}

static struct module *module_of(const struct sym_store *s, uint32_t id)
{
        return id && id < s->nr_modules ? s->modules[id] : NULL;
}

static void module_keys_insert(struct sym_store *s, uint32_t key, uint32_t id);

static void module_keys_grow(struct sym_store *s)
{
        uint32_t *old = s->module_keys, old_cap = s->module_keys_mask + 1;
        uint32_t cap = old_cap * 2;
        s->module_keys = xcalloc(cap * 2, sizeof(uint32_t)); /* pairs: key, id */
        s->module_keys_mask = cap - 1;
        for (uint32_t i = 0; i < old_cap; i++)
                if (old[2 * i])
                        module_keys_insert(s, old[2 * i], old[2 * i + 1]);
        free(old);
}

static void module_keys_insert(struct sym_store *s, uint32_t key, uint32_t id)
{
        uint32_t j = (uint32_t)hash64(key) & s->module_keys_mask;
        while (s->module_keys[2 * j])
                j = (j + 1) & s->module_keys_mask;
        s->module_keys[2 * j] = key;
        s->module_keys[2 * j + 1] = id;
}

static uint32_t module_keys_find(const struct sym_store *s, uint32_t key)
{
        for (uint32_t j = (uint32_t)hash64(key) & s->module_keys_mask;;
             j = (j + 1) & s->module_keys_mask) {
                if (!s->module_keys[2 * j])
                        return 0;
                if (s->module_keys[2 * j] == key)
                        return s->module_keys[2 * j + 1];
        }
}

static void hexstr(char *dst, const uint8_t *id, uint32_t n)
{
        static const char digits[] = "0123456789abcdef";
        for (uint32_t i = 0; i < n; i++) {
                dst[2 * i] = digits[id[i] >> 4];
                dst[2 * i + 1] = digits[id[i] & 15];
        }
        dst[2 * n] = 0;
}

static uint32_t module_new(struct sym_store *s, enum module_kind kind, const char *path,
                           const char *name)
{
        if (s->nr_modules == s->cap_modules) {
                s->cap_modules *= 2;
                s->modules = xrealloc(s->modules, s->cap_modules * sizeof(*s->modules));
        }
        struct module *m = xcalloc(1, sizeof(*m));
        m->id = s->nr_modules;
        m->kind = kind;
        m->path = xstrdup(path);
        m->name = xstrdup(name);
        atomic_init(&m->state, LS_NEW);
        s->modules[s->nr_modules++] = m;
        s->st.nr_modules++;
        return m->id;
}

/* The module of an image: one per build-id (or path, or PE name + timestamp + size). */
static uint32_t module_get(struct sym_store *s, const struct sym_image *im)
{
        char key[PATH_MAX + 80];
        enum module_kind kind;
        const char *path = im->path ? im->path : "";

        if (strcmp(path, "[kernel.kallsyms]") == 0)
                return s->kernel_module;
        if (strcmp(path, "[vdso]") == 0)
                kind = MOD_VDSO;
        else if (is_pe_path(path))
                kind = MOD_PE;
        else
                kind = MOD_ELF;
        if (im->build_id_size && kind != MOD_PE) {
                char h[41];
                hexstr(h, im->build_id, im->build_id_size > 20 ? 20 : im->build_id_size);
                snprintf(key, sizeof(key), "elf:%s", h);
        } else if (kind == MOD_PE) {
                snprintf(key, sizeof(key), "pe:%s:%08x:%08" PRIx64, path, im->time_date_stamp,
                         im->size);
        } else {
                snprintf(key, sizeof(key), "path:%s", path);
        }
        uint32_t k = sym_intern(s, key);
        uint32_t id = module_keys_find(s, k);
        if (id)
                return id;
        char short_name[256];
        snprintf(short_name, sizeof(short_name), "%s", module_name_of_path(path));
        id = module_new(s, kind, path, short_name);
        struct module *m = s->modules[id];
        if (kind != MOD_PE) {
                m->build_id_size = im->build_id_size > 20 ? 20 : im->build_id_size;
                if (m->build_id_size)
                        memcpy(m->build_id, im->build_id, m->build_id_size);
        }
        m->time_date_stamp = im->time_date_stamp;
        m->image_size = (uint32_t)im->size;
        if (s->opt.is_live && kind == MOD_ELF && im->pid) {
                m->live_pid = im->pid;
                m->live_start = im->base;
                m->live_end = im->base + im->size;
        }
        m->checksum = im->checksum;
        if ((s->nr_modules + 1) * 2 > s->module_keys_mask + 1)
                module_keys_grow(s);
        module_keys_insert(s, k, id);
        return id;
}

/* ---- loading ---- */

static void load_elf(const struct sym_store *s, struct module *m)
{
        uint32_t nr_dirs;
        const char *const *dirs = sym_path_dirs(s->path, &nr_dirs);
        struct elf_load_request rq = {m->path, m->build_id, m->build_id_size, dirs, nr_dirs,
                                      -1,      NULL};
        int vdso_fd = -1, mapped_fd = -1;
        if (m->kind == MOD_VDSO && s->opt.is_live) {
                vdso_fd = sym_vdso_memfd();
                rq.fd = vdso_fd;
                rq.fd_name = "[vdso]";
        }
        struct stat st;
        if (m->kind == MOD_ELF && m->live_pid && (stat(m->path, &st) < 0 || !S_ISREG(st.st_mode))) {
                /* the file the process maps, where its path no longer leads to it ("... (deleted)":
                   replaced by a package upgrade, removed) or leads elsewhere (a container) */
                char p[96];
                snprintf(p, sizeof(p), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, m->live_pid,
                         m->live_start, m->live_end);
                mapped_fd = in_file_open(p, 0, NULL);
                if (mapped_fd < 0) {
                        /* map_files wants CAP_SYS_ADMIN; the owner may read its program's file */
                        char exe[64], target[PATH_MAX];
                        snprintf(exe, sizeof(exe), "/proc/%u/exe", m->live_pid);
                        ssize_t len = readlink(exe, target, sizeof(target) - 1);
                        if (len > 0) {
                                target[len] = '\0';
                                if (strcmp(target, m->path) == 0)
                                        mapped_fd = in_file_open(exe, 0, NULL);
                        }
                }
                if (mapped_fd >= 0) {
                        rq.fd = mapped_fd;
                        rq.fd_name = m->path;
                }
        }
        int rc = elf_module_load(&rq, &m->elf, m->note, sizeof(m->note));
        if (vdso_fd >= 0)
                close(vdso_fd);
        if (mapped_fd >= 0)
                close(mapped_fd);
        if (rc == 0)
                snprintf(m->file_used, sizeof(m->file_used), "%s", elf_module_file(m->elf));
}

static void load_module(struct sym_store *s, struct module *m)
{
        int rc = 0;
        switch (m->kind) {
        case MOD_ELF:
        case MOD_VDSO:
                load_elf(s, m);
                rc = m->elf ? 0 : -1;
                break;
        case MOD_PE: {
                struct sym_pe_request rq = {m->path,     m->time_date_stamp,    m->image_size,
                                            m->has_pdb,  m->pdb_guid,           m->pdb_age,
                                            m->pdb_name, s->opt.is_no_demangle, s->path};
                rc = sym_pe_symbols_load(&rq, &m->table, &m->lines, m->file_used,
                                         sizeof(m->file_used), m->note, sizeof(m->note));
                break;
        }
        case MOD_CLR: break; /* built from events, never loaded (clr_table_refresh) */
        case MOD_JIT:
                rc = sym_jit_load(m->jit_pid, &m->table, m->file_used, sizeof(m->file_used),
                                  m->note, sizeof(m->note));
                break;
        case MOD_KERNEL:
                rc = sym_kallsyms_load(&m->ks, m->file_used, sizeof(m->file_used), m->note,
                                       sizeof(m->note));
                break;
        }
        atomic_store_explicit(&m->state, rc == 0 ? LS_LOADED : LS_FAILED, memory_order_release);
        atomic_fetch_add(&s->nr_done, 1);
}

static void *loader_main(void *arg)
{
        struct sym_store *s = arg;
        pthread_mutex_lock(&s->lock);
        for (;;) {
                while (!s->queue_len && !s->is_stopping) {
                        s->is_busy = false;
                        pthread_cond_broadcast(&s->idle);
                        pthread_cond_wait(&s->cond, &s->lock);
                }
                if (s->is_stopping)
                        break;
                struct module *m = s->queue[s->queue_head];
                s->queue_head = (s->queue_head + 1) % s->queue_cap;
                s->queue_len--;
                s->is_busy = true;
                pthread_mutex_unlock(&s->lock);
                load_module(s, m);
                pthread_mutex_lock(&s->lock);
        }
        s->is_busy = false;
        pthread_cond_broadcast(&s->idle);
        pthread_mutex_unlock(&s->lock);
        return NULL;
}

/* The module's state, asking for it to be loaded the first time. */
static int module_want(struct sym_store *s, struct module *m)
{
        int st = atomic_load_explicit(&m->state, memory_order_acquire);
        if (st != LS_NEW)
                return st;
        if (m->kind == MOD_KERNEL && !s->opt.is_live) {
                /* a recording's kernel symbols come from its events (kernel_table) */
                return LS_FAILED;
        }
        if (s->opt.is_synchronous || !s->has_loader) {
                atomic_store_explicit(&m->state, LS_QUEUED, memory_order_relaxed);
                load_module(s, m);
                sym_store_poll(s); /* its note goes to the log now */
                return atomic_load_explicit(&m->state, memory_order_acquire);
        }
        atomic_store_explicit(&m->state, LS_QUEUED, memory_order_relaxed);
        pthread_mutex_lock(&s->lock);
        if (s->queue_len == s->queue_cap) {
                uint32_t cap = s->queue_cap * 2;
                struct module **q = xcalloc(cap, sizeof(*q));
                for (uint32_t i = 0; i < s->queue_len; i++)
                        q[i] = s->queue[(s->queue_head + i) % s->queue_cap];
                free(s->queue);
                s->queue = q;
                s->queue_head = 0;
                s->queue_cap = cap;
        }
        s->queue[(s->queue_head + s->queue_len) % s->queue_cap] = m;
        s->queue_len++;
        s->is_busy = true;
        pthread_cond_signal(&s->cond);
        pthread_mutex_unlock(&s->lock);
        return LS_QUEUED;
}

uint32_t sym_store_poll(struct sym_store *s)
{
        if (!s)
                return 0;
        s->nr_polls++;
        char progress[320];
        if (sym_path_progress(s->path, progress, sizeof(progress)))
                logf_(s, "%s", progress); /* a symbol server's download */
        uint32_t done = atomic_load(&s->nr_done);
        uint32_t n = done - s->nr_done_seen;
        if (!n)
                return 0;
        s->nr_done_seen = done;
        for (uint32_t id = 1; id < s->nr_modules; id++) {
                struct module *m = s->modules[id];
                int st = atomic_load_explicit(&m->state, memory_order_acquire);
                if (m->is_logged || (st != LS_LOADED && st != LS_FAILED))
                        continue;
                m->is_logged = true;
                if (st == LS_LOADED)
                        s->st.nr_loaded++;
                /* routine: a Windows trace's images without a symbol path, a recording's
                   vdso (their module+offset frames say it); the note stays in the info */
                bool is_routine = (m->kind == MOD_PE && sym_path_is_empty(s->path)) ||
                                  (m->kind == MOD_VDSO && !s->opt.is_live);
                if (m->note[0] && !is_routine)
                        logf_(s, "%s", m->note);
        }
        return n; /* pending answers were never cached: the next lookups see the tables */
}

bool sym_answers_are_final(const struct sym_store *s, uint32_t module)
{
        const struct module *m = s ? module_of(s, module) : NULL;
        if (!m || atomic_load_explicit(&m->state, memory_order_acquire) != LS_LOADED)
                return false;
        /* a recording's kernel symbols come with its events, some at the very end */
        return m->kind != MOD_KERNEL || s->opt.is_live;
}

void sym_prefetch(struct sym_store *s, uint32_t module)
{
        struct module *m =
                s && s->has_loader && !s->opt.is_synchronous ? module_of(s, module) : NULL;
        if (m && atomic_load_explicit(&m->state, memory_order_relaxed) == LS_NEW)
                module_want(s, m);
}

uint64_t sym_store_generation(const struct sym_store *s)
{
        if (!s)
                return 0;
        /* a module's state is stored before nr_done counts it: whoever reads the new count
           sees the loaded module */
        return s->nr_changes + atomic_load_explicit(&s->nr_done, memory_order_acquire);
}

void sym_store_wait(struct sym_store *s)
{
        if (!s || !s->has_loader)
                return;
        pthread_mutex_lock(&s->lock);
        while (s->queue_len || s->is_busy)
                pthread_cond_wait(&s->idle, &s->lock);
        pthread_mutex_unlock(&s->lock);
}

/* ---- the kernel from recorded symbols ---- */

void sym_kernel_symbol(struct sym_store *s, uint64_t addr, uint64_t size, const char *name,
                       const char *module)
{
        if (!s || !name || !*name)
                return;
        if (s->nr_ksyms == s->cap_ksyms) {
                s->cap_ksyms = s->cap_ksyms ? s->cap_ksyms * 2 : 1024;
                s->ksyms = xrealloc(s->ksyms, s->cap_ksyms * sizeof(*s->ksyms));
        }
        s->ksyms[s->nr_ksyms++] = (struct kernel_sym){addr, size, sym_intern(s, name),
                                                      module ? sym_intern(s, module) : 0};
        s->nr_changes++;
        s->is_ksyms_dirty = true;
}

/* Rebuilds the kernel module's table from the recorded symbols, after new ones came. */
static void kernel_table_refresh(struct sym_store *s)
{
        if (!s->is_ksyms_dirty)
                return;
        s->is_ksyms_dirty = false;
        struct module *m = s->modules[s->kernel_module];
        if (s->opt.is_live && atomic_load(&m->state) != LS_NEW &&
            atomic_load(&m->state) != LS_FAILED)
                return; /* live: /proc/kallsyms says more than what a trace recorded */
        struct sym_table *t = sym_table_new();
        char buf[512];
        for (uint32_t i = 0; i < s->nr_ksyms; i++) {
                const struct kernel_sym *k = &s->ksyms[i];
                const char *mod = sym_name(s, k->module), *name = sym_name(s, k->name);
                int n = *mod ? snprintf(buf, sizeof(buf), "%s [%s]", name, mod)
                             : snprintf(buf, sizeof(buf), "%s", name);
                uint32_t flags = sym_name_is_padding(name, strlen(name)) ? SYM_FLAG_PADDING : 0;
                if (n > 0)
                        sym_table_add(t, k->addr, k->size, buf,
                                      (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1, flags);
        }
        sym_table_finish(t, 1 << 20);
        sym_table_free(m->table);
        m->table = t;
        snprintf(m->file_used, sizeof(m->file_used), "the recording's kernel symbols");
        m->note[0] = 0;
        atomic_store_explicit(&m->state, LS_LOADED, memory_order_release);
        if (s->cache && s->nr_cache) {
                memset(s->cache, 0, (size_t)(s->cache_mask + 1) * sizeof(*s->cache));
                s->nr_cache = 0;
        }
}

/* ---- address spaces ---- */

static struct space *space_find(const struct sym_store *s, uint32_t pid)
{
        for (uint32_t j = (uint32_t)hash64(pid) & s->spaces_mask;; j = (j + 1) & s->spaces_mask) {
                struct space *sp = s->spaces[j];
                if (!sp)
                        return NULL;
                if (sp->pid == pid)
                        return sp;
        }
}

static void spaces_insert(struct sym_store *s, struct space *sp)
{
        uint32_t j = (uint32_t)hash64(sp->pid) & s->spaces_mask;
        while (s->spaces[j])
                j = (j + 1) & s->spaces_mask;
        s->spaces[j] = sp;
}

static struct space *space_get(struct sym_store *s, uint32_t pid)
{
        struct space *sp = space_find(s, pid);
        if (sp)
                return sp;
        if ((s->nr_spaces + 1) * 2 > s->spaces_mask + 1) {
                struct space **old = s->spaces;
                uint32_t old_cap = s->spaces_mask + 1;
                s->spaces = xcalloc(old_cap * 2, sizeof(*s->spaces));
                s->spaces_mask = old_cap * 2 - 1;
                for (uint32_t i = 0; i < old_cap; i++)
                        if (old[i])
                                spaces_insert(s, old[i]);
                free(old);
        }
        sp = xcalloc(1, sizeof(*sp));
        sp->pid = pid;
        spaces_insert(s, sp);
        s->nr_spaces++;
        s->st.nr_spaces = s->nr_spaces;
        return sp;
}

void sym_process_start_at(struct sym_store *s, uint32_t pid, uint64_t time)
{
        if (!s)
                return;
        /* with a time, the start is remembered even before any mapping: the mappings of the
           program it replaced may come later still (another CPU's buffer) */
        struct space *sp = time ? space_get(s, pid) : space_find(s, pid);
        if (!sp || (time && time < sp->start_time))
                return; /* an earlier program's start, come late: what followed it stands */
        /* a new program in this pid: the old mappings are gone, not those made after it */
        uint32_t o = 0;
        for (uint32_t i = 0; i < sp->nr; i++)
                if (time && sp->maps[i].time >= time)
                        sp->maps[o++] = sp->maps[i];
        sp->nr = o;
        if (time)
                sp->start_time = time;
        sp->nr_methods = 0;
        sp->nr_clr_modules = 0;
        sp->jit_module = 0;
        sp->jit_checked = 0;
        if (!time || time >= sp->end_time)
                sp->is_ended = false; /* a reused pid: its entry in the ended ring no longer
                                         counts */
        s->nr_changes++;
}

void sym_process_start(struct sym_store *s, uint32_t pid)
{
        sym_process_start_at(s, pid, 0);
}

/* Takes sp out of the table (linear probing: the entries after it move up where their probe
   allows) and frees it. */
static void space_remove(struct sym_store *s, struct space *sp)
{
        uint32_t mask = s->spaces_mask;
        uint32_t i = (uint32_t)hash64(sp->pid) & mask;
        while (s->spaces[i] != sp)
                i = (i + 1) & mask;
        s->spaces[i] = NULL;
        for (uint32_t j = (i + 1) & mask; s->spaces[j]; j = (j + 1) & mask) {
                uint32_t k = (uint32_t)hash64(s->spaces[j]->pid) & mask;
                /* the entry at j stays when its home k lies cyclically in (i, j] */
                bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
                if (!stays) {
                        s->spaces[i] = s->spaces[j];
                        s->spaces[j] = NULL;
                        i = j;
                }
        }
        for (int c = 0; c < 2; c++)
                if (s->last_space[c] == sp)
                        s->last_space[c] = NULL;
        free(sp->maps);
        free(sp->methods);
        free(sp->clr_modules);
        free(sp);
        s->nr_spaces--;
        s->st.nr_spaces = s->nr_spaces;
        s->nr_changes++;
}

void sym_process_end_at(struct sym_store *s, uint32_t pid, uint64_t time)
{
        struct space *sp = s ? space_find(s, pid) : NULL;
        if (!sp || pid == 0 || (time && time < sp->start_time))
                return; /* no space, or the end of the program before the last start */
        if (time > sp->end_time)
                sp->end_time = time;
        if (sp->is_ended)
                return;
        sp->is_ended = true;
        sp->jit_checked = 0; /* its map, if it wrote one, is looked for once more */
        sp->end_serial = ++s->nr_ends;
        if (s->nr_ended == MAX_ENDED_SPACES) {
                /* the oldest end goes, unless its pid started again since */
                struct ended_space old = s->ended[s->ended_head];
                s->ended_head = (s->ended_head + 1) % MAX_ENDED_SPACES;
                s->nr_ended--;
                struct space *o = space_find(s, old.pid);
                if (o && o->is_ended && o->end_serial == old.serial)
                        space_remove(s, o);
        }
        s->ended[(s->ended_head + s->nr_ended) % MAX_ENDED_SPACES] =
                (struct ended_space){pid, sp->end_serial};
        s->nr_ended++;
}

void sym_process_end(struct sym_store *s, uint32_t pid)
{
        sym_process_end_at(s, pid, 0);
}

/* A space for the JIT probe of a pid that has none; the oldest probed space goes when the
   ring is full and nothing described its process since. */
static struct space *space_probe(struct sym_store *s, uint32_t pid)
{
        if (s->nr_probed == MAX_PROBED_SPACES) {
                struct ended_space old = s->probed[s->probed_head];
                s->probed_head = (s->probed_head + 1) % MAX_PROBED_SPACES;
                s->nr_probed--;
                struct space *o = space_find(s, old.pid);
                if (o && o->probe_serial == old.serial && !o->nr && !o->jit_module &&
                    !o->start_time && !o->is_ended && !o->nr_methods && !o->nr_clr_modules)
                        space_remove(s, o);
        }
        struct space *sp = space_get(s, pid);
        sp->probe_serial = ++s->nr_probes;
        s->probed[(s->probed_head + s->nr_probed) % MAX_PROBED_SPACES] =
                (struct ended_space){pid, sp->probe_serial};
        s->nr_probed++;
        return sp;
}

/* Removes [start, end) from sp, splitting mappings that straddle it. */
static void space_cut(struct space *sp, uint64_t start, uint64_t end)
{
        uint32_t o = 0;
        struct mapping extra = {0};
        bool has_extra = false;
        for (uint32_t i = 0; i < sp->nr; i++) {
                struct mapping m = sp->maps[i];
                if (m.end <= start || m.start >= end) {
                        sp->maps[o++] = m;
                        continue;
                }
                if (m.start < start) {
                        struct mapping left = m;
                        left.end = start;
                        sp->maps[o++] = left;
                }
                if (m.end > end) {
                        struct mapping right = m;
                        if (!right.is_absolute)
                                right.pgoff += end - m.start;
                        right.start = end;
                        /* at most one mapping straddles end; keep it aside (o may pass i) */
                        extra = right;
                        has_extra = true;
                }
        }
        sp->nr = o;
        if (has_extra) {
                if (sp->nr == sp->cap) {
                        sp->cap = sp->cap ? sp->cap * 2 : 16;
                        sp->maps = xrealloc(sp->maps, sp->cap * sizeof(*sp->maps));
                }
                sp->maps[sp->nr++] = extra;
        }
}

static void space_add(struct space *sp, struct mapping m)
{
        space_cut(sp, m.start, m.end);
        if (sp->nr == sp->cap) {
                sp->cap = sp->cap ? sp->cap * 2 : 16;
                sp->maps = xrealloc(sp->maps, sp->cap * sizeof(*sp->maps));
        }
        uint32_t i = sp->nr;
        while (i > 0 && sp->maps[i - 1].start > m.start) {
                sp->maps[i] = sp->maps[i - 1];
                i--;
        }
        sp->maps[i] = m;
        sp->nr++;
        /* space_cut may have appended out of order */
        for (uint32_t k = 1; k < sp->nr; k++) {
                struct mapping x = sp->maps[k];
                uint32_t j = k;
                while (j > 0 && sp->maps[j - 1].start > x.start) {
                        sp->maps[j] = sp->maps[j - 1];
                        j--;
                }
                sp->maps[j] = x;
        }
}

/* space_add for a mapping with a time: only the parts of m that no newer mapping holds (events
   may come out of time order, see symbols.h). */
static void space_add_timed(struct space *sp, struct mapping m)
{
        uint64_t at = m.start;
        while (at < m.end) {
                /* the lowest newer mapping that overlaps [at, m.end) */
                const struct mapping *n = NULL;
                for (uint32_t i = 0; i < sp->nr && !n; i++) {
                        const struct mapping *x = &sp->maps[i];
                        if (x->end > at && x->start < m.end && x->time > m.time)
                                n = x; /* sorted by start: the first is the lowest */
                }
                uint64_t piece_end = !n ? m.end : n->start > at ? n->start : at;
                uint64_t next = n ? n->end : m.end;
                if (piece_end > at) {
                        struct mapping piece = m;
                        piece.start = at;
                        piece.end = piece_end;
                        if (!piece.is_absolute)
                                piece.pgoff += at - m.start;
                        space_add(sp, piece); /* n and the other newer ones lie outside it */
                }
                at = next;
        }
}

static struct mapping *space_lookup(const struct space *sp, uint64_t addr)
{
        uint32_t lo = 0, hi = sp->nr;
        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (sp->maps[mid].start <= addr)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo == 0 || addr >= sp->maps[lo - 1].end)
                return NULL;
        return &sp->maps[lo - 1];
}

void sym_image_load_at(struct sym_store *s, const struct sym_image *im, uint64_t time)
{
        if (!s || !im || !im->size || im->base + im->size < im->base)
                return;
        const char *path = im->path ? im->path : "";
        if (is_anonymous(path))
                return;
        uint32_t id = module_get(s, im);
        if (id == s->kernel_module)
                s->has_linux_kernel = true;
        struct space *sp = space_get(s, im->pid);
        if (time && time < sp->start_time)
                return; /* mapped by the program before the process's last start */
        struct mapping m = {im->base, im->base + im->size,    im->file_offset,
                            id,       id == s->kernel_module, time};
        if (time)
                space_add_timed(sp, m);
        else
                space_add(sp, m);
        s->nr_changes++;
}

void sym_image_load(struct sym_store *s, const struct sym_image *im)
{
        sym_image_load_at(s, im, 0);
}

void sym_image_unload_at(struct sym_store *s, uint32_t pid, uint64_t base, uint64_t time)
{
        struct space *sp = s ? space_find(s, pid) : NULL;
        if (!sp)
                return;
        for (uint32_t i = 0; i < sp->nr; i++) {
                if (sp->maps[i].start == base) {
                        if (time && sp->maps[i].time > time)
                                return; /* mapped again after this unload */
                        memmove(&sp->maps[i], &sp->maps[i + 1],
                                (sp->nr - i - 1) * sizeof(*sp->maps));
                        sp->nr--;
                        s->nr_changes++;
                        return;
                }
        }
}

void sym_image_unload(struct sym_store *s, uint32_t pid, uint64_t base)
{
        sym_image_unload_at(s, pid, base, 0);
}

void sym_image_identity_at(struct sym_store *s, uint32_t pid, uint64_t base, uint64_t file_offset,
                           const uint8_t *build_id, uint32_t build_id_size, uint64_t time)
{
        struct space *sp = s ? space_find(s, pid) : NULL;
        struct mapping *m = sp ? space_lookup(sp, base) : NULL;
        if (!m || m->start != base || !build_id_size || (time && m->time > time))
                return;
        struct module *mod = module_of(s, m->module);
        if (!mod || mod->kind == MOD_KERNEL || mod->kind == MOD_PE)
                return;
        m->pgoff = file_offset;
        s->nr_changes++;
        if (mod->build_id_size == build_id_size && !memcmp(mod->build_id, build_id, build_id_size))
                return;
        /* the module was keyed by path: re-key it by build-id (another file, another module) */
        struct sym_image im = {pid,           base,      m->end - m->start,
                               file_offset,   mod->path, build_id,
                               build_id_size, 0,         0};
        m->module = module_get(s, &im);
}

void sym_image_identity(struct sym_store *s, uint32_t pid, uint64_t base, uint64_t file_offset,
                        const uint8_t *build_id, uint32_t build_id_size)
{
        sym_image_identity_at(s, pid, base, file_offset, build_id, build_id_size, 0);
}

void sym_image_pdb(struct sym_store *s, uint32_t pid, uint64_t base, const uint8_t guid[16],
                   uint32_t age, const char *pdb_name)
{
        struct space *sp = s ? space_find(s, pid) : NULL;
        struct mapping *m = sp ? space_lookup(sp, base) : NULL;
        struct module *mod = m ? module_of(s, m->module) : NULL;
        if (!mod || mod->has_pdb)
                return;
        mod->has_pdb = true;
        memcpy(mod->pdb_guid, guid, 16);
        mod->pdb_age = age;
        mod->pdb_name = xstrdup(pdb_name ? pdb_name : "");
}

/* ---- lookups ---- */

/* The space of pid, through the last one found for its kind of address (a stack's frames
   name one process, and the kernel, over and over). Spaces live as long as the store. */
static struct space *space_find_cached(struct sym_store *s, uint32_t pid, bool is_kernel)
{
        struct space *sp = s->last_space[is_kernel];
        if (sp && sp->pid == pid)
                return sp;
        sp = space_find(s, pid);
        if (sp)
                s->last_space[is_kernel] = sp;
        return sp;
}

/* space_lookup, trying the mapping found last first (mappings do not overlap: one that holds
   addr is the one) */
static const struct mapping *space_lookup_hinted(struct space *sp, uint64_t addr)
{
        if (sp->hint < sp->nr) {
                const struct mapping *m = &sp->maps[sp->hint];
                if (addr >= m->start && addr < m->end)
                        return m;
        }
        const struct mapping *m = space_lookup(sp, addr);
        if (m)
                sp->hint = (uint32_t)(m - sp->maps);
        return m;
}

/* ---- .NET: JIT-compiled methods from a recording's CLR events ---- */

/* The MOD_CLR module of the .NET module clr_id in sp, made on first sight (a method can come
   before its module's event: it is named "[managed]" until the module's event names it). */
static uint32_t clr_module_of(struct sym_store *s, struct space *sp, uint64_t clr_id)
{
        for (uint32_t i = 0; i < sp->nr_clr_modules; i++)
                if (sp->clr_modules[i].clr_id == clr_id)
                        return sp->clr_modules[i].module;
        if (sp->nr_clr_modules == sp->cap_clr_modules) {
                sp->cap_clr_modules = sp->cap_clr_modules ? sp->cap_clr_modules * 2 : 8;
                sp->clr_modules =
                        xrealloc(sp->clr_modules, sp->cap_clr_modules * sizeof(*sp->clr_modules));
        }
        uint32_t id = module_new(s, MOD_CLR, "", "[managed]");
        struct module *m = s->modules[id];
        m->jit_pid = sp->pid;
        snprintf(m->file_used, sizeof(m->file_used), "the recording's CLR method events");
        atomic_store_explicit(&m->state, LS_LOADED, memory_order_release);
        sp->clr_modules[sp->nr_clr_modules++] = (struct space_clr_module){clr_id, id};
        return id;
}

void sym_clr_module(struct sym_store *s, uint32_t pid, uint64_t clr_id, const char *il_path)
{
        if (!s || !il_path || !*il_path)
                return;
        struct space *sp = space_get(s, pid);
        struct module *m = s->modules[clr_module_of(s, sp, clr_id)];
        if (strcmp(m->path, il_path) == 0)
                return;
        free(m->path);
        free(m->name);
        m->path = xstrdup(il_path);
        m->name = xstrdup(module_name_of_path(il_path));
        s->nr_changes++;
}

void sym_clr_method(struct sym_store *s, uint32_t pid, uint64_t clr_module_id, uint64_t start,
                    uint64_t size, const char *name)
{
        if (!s || !name || !*name || !size || start + size < start)
                return;
        struct space *sp = space_get(s, pid);
        uint32_t id = clr_module_of(s, sp, clr_module_id);
        struct module *m = s->modules[id];
        if (m->nr_methods == m->cap_methods) {
                m->cap_methods = m->cap_methods ? m->cap_methods * 2 : 64;
                m->methods = xrealloc(m->methods, m->cap_methods * sizeof(*m->methods));
        }
        m->methods[m->nr_methods++] = (struct clr_method){start, size, sym_intern(s, name)};
        m->is_methods_dirty = true;
        if (sp->nr_methods == sp->cap_methods) {
                sp->cap_methods = sp->cap_methods ? sp->cap_methods * 2 : 64;
                sp->methods = xrealloc(sp->methods, sp->cap_methods * sizeof(*sp->methods));
        }
        if (sp->nr_methods && start < sp->methods[sp->nr_methods - 1].start)
                sp->is_methods_sorted = false;
        else if (!sp->nr_methods)
                sp->is_methods_sorted = true;
        sp->methods[sp->nr_methods++] = (struct space_method){start, start + size, id};
        s->nr_changes++;
}

static int method_cmp(const void *a, const void *b)
{
        const struct space_method *x = a, *y = b;
        return x->start < y->start ? -1 : x->start > y->start;
}

/* The method of sp at addr, or NULL. Of methods that overlap (code reused after an unload), the
   one that starts last before addr. */
static const struct space_method *space_method_at(struct space *sp, uint64_t addr)
{
        if (!sp->nr_methods)
                return NULL;
        if (!sp->is_methods_sorted) {
                qsort(sp->methods, sp->nr_methods, sizeof(*sp->methods), method_cmp);
                sp->is_methods_sorted = true;
        }
        uint32_t lo = 0, hi = sp->nr_methods;
        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (sp->methods[mid].start <= addr)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        /* methods are short: look back a few for one that holds addr */
        for (uint32_t i = lo, n = 0; i > 0 && n < 8; i--, n++)
                if (addr < sp->methods[i - 1].end)
                        return &sp->methods[i - 1];
        return NULL;
}

/* Rebuilds a MOD_CLR module's table after methods came. */
static void clr_table_refresh(struct sym_store *s, struct module *m)
{
        if (!m->is_methods_dirty)
                return;
        m->is_methods_dirty = false;
        struct sym_table *t = sym_table_new();
        for (uint32_t i = 0; i < m->nr_methods; i++) {
                const char *name = sym_name(s, m->methods[i].name);
                sym_table_add(t, m->methods[i].start, m->methods[i].size, name, strlen(name), 0);
        }
        sym_table_finish(t, 0);
        sym_table_free(m->table);
        m->table = t;
        if (s->cache && s->nr_cache) {
                memset(s->cache, 0, (size_t)(s->cache_mask + 1) * sizeof(*s->cache));
                s->nr_cache = 0;
        }
}

struct sym_loc sym_locate(struct sym_store *s, uint32_t pid, uint64_t addr)
{
        struct sym_loc loc = {0, addr};
        if (!s)
                return loc;
        bool is_kernel = addr >= KERNEL_START;
        struct space *sp = space_find_cached(s, is_kernel ? 0 : pid, is_kernel);
        const struct mapping *m = sp ? space_lookup_hinted(sp, addr) : NULL;
        if (!m && is_kernel && pid != 0) {
                sp = space_find(s, pid);
                m = sp ? space_lookup(sp, addr) : NULL;
        }
        if (m) {
                loc.module = m->module;
                loc.rel = m->is_absolute ? addr : addr - m->start + m->pgoff;
                return loc;
        }
        if (is_kernel) {
                /* Linux kernel modules and kernel text outside the described image, when a
                   Linux kernel is there to name them (a Windows trace's driver addresses that
                   no image event described stay unknown) */
                if (s->opt.is_live || s->nr_ksyms || s->has_linux_kernel)
                        loc.module = s->kernel_module;
                return loc;
        }
        if (pid) {
                /* .NET code a recording's CLR events described */
                struct space *w = sp && sp->pid == pid ? sp : space_find(s, pid);
                const struct space_method *jm = w ? space_method_at(w, addr) : NULL;
                if (jm) {
                        loc.module = jm->module;
                        return loc;
                }
        }
        if (s->opt.is_live && pid) {
                /* JIT code: /tmp/perf-PID.map, when the process writes one (looked for again
                   after the next sym_store_poll, the screen's refresh: a JIT writes it as it
                   goes). Not every process gets a module: most have none, and thousands come
                   and go. */
                struct space *w = sp && sp->pid == pid ? sp : space_find(s, pid);
                if (!w)
                        w = space_probe(s, pid);
                if (!w->jit_module) {
                        /* looked for once per refresh; an ended process writes no more: once
                           after its end */
                        if (w->jit_checked == s->nr_polls + 1 || (w->is_ended && w->jit_checked))
                                return loc;
                        char path[64], name[64];
                        snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
                        if (access(path, R_OK) != 0) {
                                w->jit_checked = s->nr_polls + 1;
                                return loc;
                        }
                        snprintf(name, sizeof(name), "perf-%u.map", pid);
                        w->jit_module = module_new(s, MOD_JIT, path, name);
                        s->modules[w->jit_module]->jit_pid = pid;
                }
                loc.module = w->jit_module;
        }
        return loc;
}

static struct cache_entry *cache_slot(struct sym_store *s, struct sym_loc loc, bool *is_found)
{
        uint64_t h = hash64(loc.rel ^ ((uint64_t)loc.module << 40) ^ loc.module);
        for (uint32_t j = (uint32_t)h & s->cache_mask;; j = (j + 1) & s->cache_mask) {
                struct cache_entry *e = &s->cache[j];
                if (!e->module) {
                        *is_found = false;
                        return e;
                }
                if (e->module == loc.module && e->rel == loc.rel) {
                        *is_found = true;
                        return e;
                }
        }
}

static void cache_grow(struct sym_store *s)
{
        uint32_t old_cap = s->cache_mask + 1;
        struct cache_entry *old = s->cache;
        if (old_cap * 2 > CACHE_MAX_ENTRIES) {
                /* bounded: start over rather than grow without end */
                memset(s->cache, 0, old_cap * sizeof(*s->cache));
                s->nr_cache = 0;
                return;
        }
        s->cache = xcalloc(old_cap * 2, sizeof(*s->cache));
        s->cache_mask = old_cap * 2 - 1;
        s->nr_cache = 0;
        for (uint32_t i = 0; i < old_cap; i++) {
                if (!old[i].module)
                        continue;
                bool is_found;
                struct cache_entry *e =
                        cache_slot(s, (struct sym_loc){old[i].module, old[i].rel}, &is_found);
                *e = old[i];
                s->nr_cache++;
        }
        free(old);
}

/* The table and the address in it for loc, when the module is loaded. */
static const struct sym_table *table_of(struct module *m, uint64_t rel, uint64_t *addr)
{
        switch (m->kind) {
        case MOD_ELF:
        case MOD_VDSO:
                if (!m->elf || !elf_module_vaddr(m->elf, rel, addr))
                        return NULL;
                return elf_module_table(m->elf);
        default: *addr = rel; return m->table;
        }
}

void sym_resolve(struct sym_store *s, struct sym_loc loc, struct sym_frame *out)
{
        *out = (struct sym_frame){SYM_NO_MODULE, loc.module, 0, loc.rel};
        if (!s)
                return;
        s->st.nr_lookups++;
        struct module *m = module_of(s, loc.module);
        if (!m)
                return;
        if (m->kind == MOD_KERNEL)
                kernel_table_refresh(s);
        else if (m->kind == MOD_CLR)
                clr_table_refresh(s, m);
        bool is_found;
        struct cache_entry *e = cache_slot(s, loc, &is_found);
        if (is_found) {
                s->st.nr_cache_hits++;
                *out = (struct sym_frame){e->state, loc.module, e->function, e->offset};
                return;
        }
        int st = module_want(s, m);
        if (st == LS_QUEUED) {
                out->state = SYM_PENDING;
                return; /* not cached: asked again until the module is there */
        }
        if (st == LS_FAILED) {
                out->state = SYM_UNUSABLE;
        } else if (m->ks) {
                /* the live kernel: the module of each symbol from kallsyms */
                struct kallsyms_hit hit;
                if (kallsyms_lookup(m->ks, loc.rel, &hit)) {
                        char name[512];
                        if (hit.module && strcmp(hit.module, KALLSYMS_KERNEL_MODULE) != 0)
                                snprintf(name, sizeof(name), "%s %s", hit.name, hit.module);
                        else
                                snprintf(name, sizeof(name), "%s", hit.name);
                        out->state = SYM_RESOLVED;
                        out->function = function_name(s, name);
                        out->offset = hit.offset;
                } else {
                        out->state = SYM_NO_SYMBOL;
                }
        } else {
                uint64_t addr = 0;
                const struct sym_table *t = table_of(m, loc.rel, &addr);
                const struct sym_entry *se = t ? sym_table_find(t, addr) : NULL;
                if (se) {
                        out->state = SYM_RESOLVED;
                        out->function = function_name(s, sym_table_name(t, se));
                        out->offset = addr - se->start;
                } else {
                        out->state = SYM_NO_SYMBOL;
                }
        }
        /* the slot may be stale after module_want (synchronous loads intern nothing, but a
           refresh may clear the cache): look it up again */
        e = cache_slot(s, loc, &is_found);
        *e = (struct cache_entry){loc.rel, loc.module, out->function, out->offset,
                                  (uint8_t)out->state};
        if (++s->nr_cache * 2 > s->cache_mask + 1)
                cache_grow(s);
}

size_t sym_format(struct sym_store *s, struct sym_loc loc, char *buf, size_t size)
{
        struct sym_frame f;
        int n;
        sym_resolve(s, loc, &f);
        const struct module *m = s ? module_of(s, loc.module) : NULL;
        if (!m)
                n = snprintf(buf, size, "0x%" PRIx64, loc.rel);
        else if (f.state == SYM_RESOLVED && f.offset)
                n = snprintf(buf, size, "%s!%s+0x%" PRIx64, m->name, sym_name(s, f.function),
                             f.offset);
        else if (f.state == SYM_RESOLVED)
                n = snprintf(buf, size, "%s!%s", m->name, sym_name(s, f.function));
        else
                n = (int)module_name_format_offset(buf, size, m->name, loc.rel);
        return n < 0 ? 0 : (size_t)n;
}

bool sym_function_range(struct sym_store *s, struct sym_loc loc, uint64_t *start_rel,
                        uint64_t *size)
{
        struct module *m = s ? module_of(s, loc.module) : NULL;
        if (!m)
                return false;
        if (m->kind == MOD_KERNEL)
                kernel_table_refresh(s);
        else if (m->kind == MOD_CLR)
                clr_table_refresh(s, m);
        if (module_want(s, m) != LS_LOADED)
                return false;
        uint64_t addr = loc.rel;
        const struct sym_table *t = m->ks ? kallsyms_table(m->ks) : table_of(m, loc.rel, &addr);
        const struct sym_entry *se = t ? sym_table_find(t, addr) : NULL;
        if (!se)
                return false;
        /* rel and the table's addresses differ by a constant within the function (ELF: one
           segment's offset to vaddr; the others: none) */
        *start_rel = loc.rel - (addr - se->start);
        *size = se->size;
        return true;
}

bool sym_module_info(struct sym_store *s, uint32_t module, struct sym_module_info *info)
{
        struct module *m = s ? module_of(s, module) : NULL;
        memset(info, 0, sizeof(*info));
        if (!m)
                return false;
        int st = atomic_load_explicit(&m->state, memory_order_acquire);
        bool is_done = st == LS_LOADED || st == LS_FAILED;
        info->name = m->name;
        info->path = m->path;
        info->file_used = is_done ? m->file_used : "";
        info->note = is_done ? m->note : "";
        info->build_id_size = m->build_id_size;
        memcpy(info->build_id, m->build_id, m->build_id_size);
        info->is_loaded = st == LS_LOADED;
        if (m->kind == MOD_CLR)
                clr_table_refresh(s, m);
        if (st == LS_LOADED) {
                uint64_t dummy;
                const struct sym_table *t = m->kind == MOD_ELF || m->kind == MOD_VDSO
                                                    ? (m->elf ? elf_module_table(m->elf) : NULL)
                                                    : table_of(m, 0, &dummy);
                info->nr_symbols =
                        m->ks ? sym_table_count(kallsyms_table(m->ks)) : sym_table_count(t);
        }
        info->has_pdb = m->has_pdb;
        info->pdb_name = m->pdb_name ? m->pdb_name : "";
        if (m->has_pdb) {
                const uint8_t *g = m->pdb_guid;
                snprintf(info->pdb_signature, sizeof(info->pdb_signature),
                         "%02X%02X%02X%02X%02X%02X%02X%02X%02X%02X%02X%02X%02X%02X%02X%02X%X", g[3],
                         g[2], g[1], g[0], g[5], g[4], g[7], g[6], g[8], g[9], g[10], g[11], g[12],
                         g[13], g[14], g[15], m->pdb_age);
        }
        return true;
}

/* ---- source lines ---- */

static struct src_entry *src_slot(struct sym_store *s, struct sym_loc loc, bool *is_found)
{
        uint64_t h = hash64(loc.rel * 31 + loc.module);
        for (uint32_t j = (uint32_t)h & s->src_mask;; j = (j + 1) & s->src_mask) {
                struct src_entry *e = &s->src[j];
                if (!e->module) {
                        *is_found = false;
                        return e;
                }
                if (e->module == loc.module && e->rel == loc.rel) {
                        *is_found = true;
                        return e;
                }
        }
}

/* A Windows module's source line, from its PDB's line tables (no inline frames). */
static uint32_t pe_srcline(struct sym_store *s, struct module *m, struct sym_loc loc,
                           struct sym_srcframe *out, uint32_t max)
{
        struct pdb_line line;
        if (!max || module_want(s, m) != LS_LOADED || !m->lines || loc.rel > UINT32_MAX ||
            !pdb_lines_find(m->lines, (uint32_t)loc.rel, &line))
                return 0;
        struct sym_frame f;
        sym_resolve(s, loc, &f);
        out[0] = (struct sym_srcframe){f.function, sym_intern(s, line.file), line.line, 0};
        return 1;
}

uint32_t sym_srcline(struct sym_store *s, struct sym_loc loc, struct sym_srcframe *out,
                     uint32_t max)
{
        struct module *m = s ? module_of(s, loc.module) : NULL;
        if (m && m->kind == MOD_PE)
                return pe_srcline(s, m, loc, out, max);
        if (!m || (m->kind != MOD_ELF && m->kind != MOD_VDSO))
                return 0;
        bool is_found;
        struct src_entry *e = src_slot(s, loc, &is_found);
        if (!is_found) {
                if (module_want(s, m) != LS_LOADED || !m->elf)
                        return 0; /* not cached: computed once the module is there */
                uint64_t vaddr;
                struct elf_srcframe fr[MAX_SRC_FRAMES];
                uint32_t n = elf_module_vaddr(m->elf, loc.rel, &vaddr)
                                     ? elf_module_srcline(m->elf, vaddr, fr, MAX_SRC_FRAMES)
                                     : 0;
                if (s->nr_src_frames + n > s->cap_src_frames) {
                        while (s->nr_src_frames + n > s->cap_src_frames)
                                s->cap_src_frames *= 2;
                        s->src_frames =
                                xrealloc(s->src_frames, s->cap_src_frames * sizeof(*s->src_frames));
                }
                uint32_t first = s->nr_src_frames;
                for (uint32_t i = 0; i < n; i++)
                        s->src_frames[s->nr_src_frames++] = (struct sym_srcframe){
                                function_name(s, fr[i].function), sym_intern(s, fr[i].file),
                                fr[i].line, fr[i].column};
                e = src_slot(s, loc, &is_found);
                *e = (struct src_entry){loc.rel, loc.module, first, n};
                if (++s->nr_src * 2 > s->src_mask + 1) {
                        struct src_entry *old = s->src;
                        uint32_t old_cap = s->src_mask + 1;
                        s->src = xcalloc(old_cap * 2, sizeof(*s->src));
                        s->src_mask = old_cap * 2 - 1;
                        for (uint32_t i = 0; i < old_cap; i++) {
                                if (!old[i].module)
                                        continue;
                                *src_slot(s, (struct sym_loc){old[i].module, old[i].rel},
                                          &is_found) = old[i];
                        }
                        free(old);
                        e = src_slot(s, loc, &is_found);
                }
        }
        uint32_t n = e->nr < max ? e->nr : max;
        memcpy(out, &s->src_frames[e->first], n * sizeof(*out));
        return n;
}

/* ---- lifecycle ---- */

int sym_store_new(struct sym_store **out, const struct sym_options *options)
{
        struct sym_store *s = xcalloc(1, sizeof(*s));
        if (options)
                s->opt = *options;
        s->cap_modules = 64;
        s->modules = xcalloc(s->cap_modules, sizeof(*s->modules));
        s->nr_modules = 1; /* id 0: none */
        s->module_keys_mask = 63;
        s->module_keys = xcalloc(2 * 64, sizeof(uint32_t));
        s->spaces_mask = 255;
        s->spaces = xcalloc(256, sizeof(*s->spaces));
        s->ended = xcalloc(MAX_ENDED_SPACES, sizeof(*s->ended));
        s->probed = xcalloc(MAX_PROBED_SPACES, sizeof(*s->probed));
        s->cap_strings = 1024;
        s->strings = xcalloc(s->cap_strings, sizeof(*s->strings));
        s->strings[0] = xstrdup("");
        s->nr_strings = 1;
        s->demangled = xcalloc(s->cap_strings, sizeof(*s->demangled));
        s->string_hash_mask = 2047;
        s->string_hash = xcalloc(2048, sizeof(*s->string_hash));
        s->cache_mask = 4095;
        s->cache = xcalloc(4096, sizeof(*s->cache));
        s->src_mask = 255;
        s->src = xcalloc(256, sizeof(*s->src));
        s->cap_src_frames = 256;
        s->src_frames = xcalloc(s->cap_src_frames, sizeof(*s->src_frames));
        s->kernel_module = module_new(s, MOD_KERNEL, "[kernel.kallsyms]", "[kernel.kallsyms]");
        s->path =
                sym_path_new(s->opt.symbol_path, s->opt.nr_symbol_path, getenv("_NT_SYMBOL_PATH"));
        s->queue_cap = 64;
        s->queue = xcalloc(s->queue_cap, sizeof(*s->queue));
        pthread_mutex_init(&s->lock, NULL);
        pthread_cond_init(&s->cond, NULL);
        pthread_cond_init(&s->idle, NULL);
        if (!s->opt.is_synchronous && pthread_create(&s->loader, NULL, loader_main, s) == 0)
                s->has_loader = true;
        *out = s;
        return 0;
}

void sym_store_free(struct sym_store *s)
{
        if (!s)
                return;
        if (s->has_loader) {
                pthread_mutex_lock(&s->lock);
                s->is_stopping = true;
                pthread_cond_signal(&s->cond);
                pthread_mutex_unlock(&s->lock);
                sym_path_cancel(s->path); /* a download under way ends */
                pthread_join(s->loader, NULL);
        }
        pthread_mutex_destroy(&s->lock);
        pthread_cond_destroy(&s->cond);
        pthread_cond_destroy(&s->idle);
        for (uint32_t i = 1; i < s->nr_modules; i++) {
                struct module *m = s->modules[i];
                elf_module_free(m->elf);
                sym_table_free(m->table);
                free(m->methods);
                kallsyms_free(m->ks);
                pdb_lines_free(m->lines);
                free(m->path);
                free(m->name);
                free(m->pdb_name);
                free(m);
        }
        free(s->modules);
        free(s->module_keys);
        for (uint32_t i = 0; i <= s->spaces_mask; i++) {
                if (s->spaces[i]) {
                        free(s->spaces[i]->maps);
                        free(s->spaces[i]->methods);
                        free(s->spaces[i]->clr_modules);
                        free(s->spaces[i]);
                }
        }
        free(s->spaces);
        free(s->ended);
        free(s->probed);
        for (uint32_t i = 0; i < s->nr_strings; i++)
                free(s->strings[i]);
        free(s->strings);
        free(s->demangled);
        free(s->string_hash);
        free(s->cache);
        free(s->src);
        free(s->src_frames);
        free(s->ksyms);
        free(s->queue);
        sym_path_free(s->path);
        free(s);
}

void sym_store_get_stats(const struct sym_store *s, struct sym_stats *st)
{
        memset(st, 0, sizeof(*st));
        if (!s)
                return;
        *st = s->st;
        size_t mem = sizeof(*s) + s->string_bytes +
                     s->cap_strings * (sizeof(char *) + sizeof(uint32_t)) +
                     (s->string_hash_mask + 1) * sizeof(uint32_t) +
                     (s->cache_mask + 1) * sizeof(struct cache_entry) +
                     (s->src_mask + 1) * sizeof(struct src_entry) +
                     s->cap_src_frames * sizeof(struct sym_srcframe);
        for (uint32_t i = 1; i < s->nr_modules; i++) {
                const struct module *m = s->modules[i];
                if (atomic_load_explicit(&m->state, memory_order_acquire) != LS_LOADED)
                        continue;
                mem += m->elf ? sym_table_memory(elf_module_table(m->elf))
                              : sym_table_memory(m->table);
                mem += pdb_lines_memory(m->lines);
        }
        st->memory_bytes = mem;
}
