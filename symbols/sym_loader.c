/* SPDX-License-Identifier: MIT */
/* sym_loader.c: owns the symbol store's module table, the loader thread that reads the
   modules' symbols, polling and waiting for it, and the kernel from recorded symbols. */
#include "symbols/symbols.h"
#include "symbols_impl.h"

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
#include "util/thread_sched.h"

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

/* ---- modules ---- */

static bool is_pe_path(const char *path)
{
        if (strchr(path, '\\'))
                return true;
        /* a suffix of four, the first a dot (most paths end otherwise: one look) */
        size_t n = strlen(path);
        const char *ext = path + n - (n >= 4 ? 4 : n);
        return n >= 4 && ext[0] == '.' &&
               (strcasecmp(ext, ".dll") == 0 || strcasecmp(ext, ".exe") == 0 ||
                strcasecmp(ext, ".sys") == 0 || strcasecmp(ext, ".drv") == 0);
}

bool symbols_is_anonymous(const char *path)
{
        /* most paths are files' ("/usr/lib/..."): the first two bytes rule the names out */
        if (path[0] == '/' && path[1] != '/' && path[1] != 'm' && path[1] != 'd')
                return false;
        return !*path || strncmp(path, "//anon", 6) == 0 || strcmp(path, "[heap]") == 0 ||
               strncmp(path, "[stack", 6) == 0 || strncmp(path, "[anon", 5) == 0 ||
               strncmp(path, "anon_inode:", 11) == 0 || strcmp(path, "[vvar]") == 0 ||
               strncmp(path, "/memfd:", 7) == 0 || strncmp(path, "/dev/zero", 9) == 0;
}

bool symbols_is_named_anonymous(const char *path)
{
        return strncmp(path, "/memfd:", 7) == 0 || strncmp(path, "[anon:", 6) == 0;
}

struct module *symbols_module_of(const struct sym_store *s, uint32_t id)
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
        uint32_t j = (uint32_t)hash_mix64(key) & s->module_keys_mask;
        while (s->module_keys[2 * j])
                j = (j + 1) & s->module_keys_mask;
        s->module_keys[2 * j] = key;
        s->module_keys[2 * j + 1] = id;
}

static uint32_t module_keys_find(const struct sym_store *s, uint32_t key)
{
        for (uint32_t j = (uint32_t)hash_mix64(key) & s->module_keys_mask;;
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

uint32_t symbols_module_new(struct sym_store *s, enum module_kind kind, const char *path,
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

uint32_t symbols_module_get(struct sym_store *s, const struct sym_image *im)
{
        char key[PATH_MAX + 80];
        enum module_kind kind;
        const char *path = im->path ? im->path : "";

        if (strcmp(path, "[kernel.kallsyms]") == 0)
                return s->kernel_module;
        /* an image without a build-id whose path was met last: its module by the path alone
           (only the modules keyed by path below are remembered, so kind and key are theirs) */
        uint32_t path_slot = 0;
        if (!im->build_id_size) {
                path_slot = (uint32_t)symbols_hash_bytes(path, strlen(path)) & 255;
                const struct module *m = symbols_module_of(s, s->path_modules[path_slot]);
                if (m && strcmp(m->path, path) == 0)
                        return m->id;
        }
        if (strcmp(path, "[vdso]") == 0)
                kind = MOD_VDSO;
        else if (is_pe_path(path))
                kind = MOD_PE;
        else
                kind = MOD_ELF;
        uint32_t bn = im->build_id_size > 20 ? 20 : im->build_id_size, slot = 0;
        if (bn && kind != MOD_PE) {
                slot = (uint32_t)symbols_hash_bytes(im->build_id, bn) & 255;
                const struct module *m = symbols_module_of(s, s->build_id_modules[slot]);
                if (m && m->build_id_size == bn && memcmp(m->build_id, im->build_id, bn) == 0)
                        return m->id;
        }
        /* the keys are put together by hand: snprintf was a quarter of an image load (a
           process storm loads tens of thousands) */
        if (im->build_id_size && kind != MOD_PE) {
                memcpy(key, "elf:", 4);
                hexstr(key + 4, im->build_id, im->build_id_size > 20 ? 20 : im->build_id_size);
        } else if (kind == MOD_PE) {
                snprintf(key, sizeof(key), "pe:%s:%08x:%08" PRIx64, path, im->time_date_stamp,
                         im->size);
        } else {
                size_t len = strnlen(path, sizeof(key) - 6);
                memcpy(key, "path:", 5);
                memcpy(key + 5, path, len);
                key[5 + len] = 0;
        }
        s->st.nr_keyed++;
        uint32_t k = sym_intern(s, key);
        uint32_t id = module_keys_find(s, k);
        if (id && bn && kind != MOD_PE)
                s->build_id_modules[slot] = id;
        if (id && !im->build_id_size && kind != MOD_PE)
                s->path_modules[path_slot] = id;
        if (id)
                return id;
        char short_name[256];
        module_short_name(short_name, sizeof(short_name), path);
        id = symbols_module_new(s, kind, path, short_name);
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
        if (bn && kind != MOD_PE)
                s->build_id_modules[slot] = id;
        if (!im->build_id_size && kind != MOD_PE)
                s->path_modules[path_slot] = id;
        return id;
}

/* ---- loading ---- */

static void load_elf(const struct sym_store *s, struct module *m)
{
        if (symbols_is_named_anonymous(m->path)) {
                snprintf(m->note, sizeof(m->note), "%s: anonymous memory, no file to read",
                         m->path);
                return;
        }
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
        case MOD_CLR: break; /* built from events, never loaded (symbols_clr_table_refresh) */
        case MOD_BPF: break; /* built from events, never loaded (sym_bpf.c) */
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

void *symbols_loader_main(void *arg)
{
        struct sym_store *s = arg;
        thread_name_self("etwtop-symbols");
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

int symbols_module_want(struct sym_store *s, struct module *m)
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
        if (s->nr_polls % SYM_EVICT_POLLS == 0)
                sym_store_evict_unmapped(s);
        char progress[320];
        if (sym_path_progress(s->path, progress, sizeof(progress)))
                symbols_logf_(s, "%s", progress); /* a symbol server's download */
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
                        symbols_logf_(s, "%s", m->note);
        }
        return n; /* pending answers were never cached: the next lookups see the tables */
}

bool sym_answers_are_final(const struct sym_store *s, uint32_t module)
{
        const struct module *m = s ? symbols_module_of(s, module) : NULL;
        if (!m || atomic_load_explicit(&m->state, memory_order_acquire) != LS_LOADED)
                return false;
        /* a recording's kernel symbols come with its events, some at the very end */
        return m->kind != MOD_KERNEL || s->opt.is_live;
}

uint32_t sym_answers_epoch(const struct sym_store *s, uint32_t module)
{
        const struct module *m = s ? symbols_module_of(s, module) : NULL;
        if (!m || m->kind != MOD_KERNEL || s->opt.is_live || s->is_ksyms_dirty)
                return 0;
        /* the answers are those of the table built last (symbols_kernel_table_refresh), or
           none while no symbol came (the module stays new: unusable) */
        return s->nr_ksym_tables + 1;
}

void sym_prefetch(struct sym_store *s, uint32_t module)
{
        struct module *m =
                s && s->has_loader && !s->opt.is_synchronous ? symbols_module_of(s, module) : NULL;
        if (m && atomic_load_explicit(&m->state, memory_order_relaxed) == LS_NEW)
                symbols_module_want(s, m);
}

uint64_t sym_store_generation(const struct sym_store *s)
{
        if (!s)
                return 0;
        /* a module's state is stored before nr_done counts it: whoever reads the new count
           sees the loaded module */
        return s->nr_changes + atomic_load_explicit(&s->nr_done, memory_order_acquire);
}

bool sym_store_is_live(const struct sym_store *s)
{
        return s && s->opt.is_live;
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

bool sym_store_is_settled(struct sym_store *s)
{
        if (!s || !s->has_loader)
                return true;
        pthread_mutex_lock(&s->lock);
        bool is_idle = !s->queue_len && !s->is_busy;
        pthread_mutex_unlock(&s->lock);
        /* a load counts in nr_done before the loader takes the lock again to go idle */
        return is_idle &&
               atomic_load_explicit(&s->nr_done, memory_order_acquire) == s->nr_done_seen;
}

/* ---- the kernel from recorded symbols ---- */

static void install_kernel_table(struct sym_store *s, struct module *m, struct sym_table *t);

void sym_kernel_symbol(struct sym_store *s, uint64_t addr, uint64_t size, const char *name,
                       const char *module)
{
        if (!s || !name || !*name)
                return;
        if (module && strcmp(module, "bpf") == 0) {
                symbols_bpf_program(s, addr, size, name);
                s->nr_bpf_ksyms++;
        }
        if (s->nr_ksyms == s->cap_ksyms) {
                s->cap_ksyms = s->cap_ksyms ? s->cap_ksyms * 2 : 1024;
                s->ksyms = xrealloc(s->ksyms, s->cap_ksyms * sizeof(*s->ksyms));
        }
        s->ksyms[s->nr_ksyms++] = (struct kernel_sym){addr, size, sym_intern(s, name),
                                                      module ? sym_intern(s, module) : 0};
        s->nr_changes++;
        s->is_ksyms_dirty = true;
}

void sym_kernel_symbols_take(struct sym_store *s, struct sym_table *t)
{
        if (!s) {
                sym_table_free(t);
                return;
        }
        struct module *m = s->modules[s->kernel_module];
        if (m->table == s->ksym_set)
                m->table = NULL; /* installed as it was: the answers come from the new one */
        sym_table_free(s->ksym_set);
        s->ksym_set = t;
        s->nr_changes++;
        s->is_ksyms_dirty = true;
}

void symbols_kernel_table_refresh(struct sym_store *s)
{
        if (!s->is_ksyms_dirty)
                return;
        s->is_ksyms_dirty = false;
        struct module *m = s->modules[s->kernel_module];
        if (s->opt.is_live && atomic_load(&m->state) != LS_NEW &&
            atomic_load(&m->state) != LS_FAILED)
                return; /* live: /proc/kallsyms says more than what a trace recorded */
        if (s->ksym_set && !s->nr_ksyms) {
                /* a kallsyms' table alone: the kernel's as it is (its names already joined with
                   their modules as below), not built again symbol by symbol */
                install_kernel_table(s, m, s->ksym_set);
                return;
        }
        struct sym_table *t = sym_table_new();
        char buf[512];
        for (uint32_t i = 0; s->ksym_set && i < sym_table_count(s->ksym_set); i++) {
                const struct sym_entry *e = sym_table_at(s->ksym_set, i);
                const char *name = sym_table_name(s->ksym_set, e);
                sym_table_add(t, e->start, e->size, name, strlen(name),
                              e->flags & SYM_FLAG_PADDING);
        }
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
        install_kernel_table(s, m, t);
}

/* t becomes the kernel module's table: the answers asked before are asked again. */
static void install_kernel_table(struct sym_store *s, struct module *m, struct sym_table *t)
{
        if (m->table != s->ksym_set)
                sym_table_free(m->table);
        m->table = t;
        if (s->nr_ksym_tables < UINT32_MAX - 1)
                s->nr_ksym_tables++;
        snprintf(m->file_used, sizeof(m->file_used), "the recording's kernel symbols");
        m->note[0] = 0;
        atomic_store_explicit(&m->state, LS_LOADED, memory_order_release);
        if (s->cache && s->nr_cache) {
                memset(s->cache, 0, (size_t)(s->cache_mask + 1) * sizeof(*s->cache));
                s->nr_cache = 0;
        }
}
