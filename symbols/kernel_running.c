/* SPDX-License-Identifier: MIT */
/* kernel_running.c: owns taking a recording's kernel symbols from the running kernel when its
   build-id is the recording's, or from the copy of that kernel's symbols perf record kept in its
   build-id cache. */
#include "symbols/kernel_running.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/perf_buildid_dir.h"
#include "symbols/kallsyms.h"
#include "symbols/sym_table.h"
#include "symtab_cache.h"
#include "util/kallsyms_text.h"
#include "util/xalloc.h"

static int load_from(struct sym_store *s, const char *kallsyms_path);
static int load_built(struct sym_store *s, const char *kallsyms_path, const char *state);

/* root's cache file of the recording's table of the running kernel (kallsyms_text.h) */
#define NAMES_KEPT   "kallsyms.names"
#define NAMES_PREFIX 32u /* 8-byte aligned: the table after it is read in place */

int sym_kernel_running(struct sym_store *s, const uint8_t *build_id, uint32_t build_id_size,
                       const char *notes_path, const char *kallsyms_path)
{
        uint8_t running[20];
        uint32_t size = 0;
        if (!build_id_size)
                return 0;
        int rc = kallsyms_running_build_id(notes_path, running, &size);
        if (rc < 0)
                return rc == -ENOENT ? 0 : rc;
        if (size != (build_id_size > 20 ? 20 : build_id_size) || memcmp(running, build_id, size))
                return 0; /* another kernel: its addresses would name other code */
        return load_from(s, kallsyms_path);
}

int sym_kernel_cached(struct sym_store *s, const uint8_t *build_id, uint32_t build_id_size)
{
        if (!build_id_size)
                return 0;
        char hex[41], path[4096];
        uint32_t n = build_id_size > 20 ? 20 : build_id_size;
        for (uint32_t i = 0; i < n; i++)
                snprintf(hex + 2 * i, 3, "%02x", build_id[i]);
        char dir[3072];
        if (!perf_buildid_dir(dir, sizeof(dir)))
                return 0;
        snprintf(path, sizeof(path), "%s/[kernel.kallsyms]/%s/kallsyms", dir, hex);
        /* a regular file only: perf wrote it; nothing else at the name is opened */
        struct stat st;
        if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode))
                return 0;
        return load_from(s, path);
}

/* buf (size bytes) = "name [module]", or name alone where module is empty (mlen 0), cut as
   snprintf would cut it; its length. A symbol's name put together by hand: snprintf's was half
   of the kernel's symbols' time. */
static size_t join_name(char *buf, size_t size, const char *name, const char *module, size_t mlen)
{
        size_t at = 0;
        size_t nlen = strlen(name);
        const char *parts[4] = {name, " [", module, "]"};
        size_t lens[4] = {nlen, 2, mlen, 1};
        for (int i = 0; i < (mlen ? 4 : 1) && at < size - 1; i++) {
                size_t n = lens[i] < size - 1 - at ? lens[i] : size - 1 - at;
                memcpy(buf + at, parts[i], n);
                at += n;
        }
        buf[at] = 0;
        return at;
}

static void release_kallsyms(void *ks)
{
        kallsyms_free(ks);
}

/* The text symbols of the kallsyms file at path (NULL: /proc/kallsyms) into the store as the
   recording's kernel symbols, each with its module; how many, or -errno. One table of them,
   named as the store names a recording's ("name [module]"), handed over whole: a symbol each
   through sym_kernel_symbol (two strings of the store each, then the table built from them)
   was a sixth of a perf.data's replay. The kernel's own names (most of them) are read where the
   parse holds them (root's mapped cache, mostly), which the table keeps: copied, with the
   module of each found by a search, they were 36 M instructions of each replay of a perf.data
   recorded on this machine. */
static void release_names(void *map)
{
        kallsyms_cache_unmap(map);
        free(map);
}

/* The kept table's first bytes: a magic and the build-id of the program that made it (another
   build of etwtop may make the table otherwise); false where the program has none. */
static bool names_prefix(uint8_t prefix[NAMES_PREFIX])
{
        memset(prefix, 0, NAMES_PREFIX);
        memcpy(prefix, "knames1", 8);
        return symtab_cache_program_id(prefix + 8) != 0;
}

/* The running kernel's table load_from made in this state of kallsyms (root's cache, beside the
   parse: kallsyms_text.h), mapped; NULL where none is kept. */
static struct sym_table *names_kept(const char *state)
{
        struct kallsyms_cache_map m;
        uint8_t prefix[NAMES_PREFIX];
        if (!state || !names_prefix(prefix) || !kallsyms_cache_map(NAMES_KEPT, state, &m))
                return NULL;
        struct sym_table *t = m.len > NAMES_PREFIX && !memcmp(m.data, prefix, NAMES_PREFIX)
                                      ? symtab_cache_decode((const uint8_t *)m.data + NAMES_PREFIX,
                                                            m.len - NAMES_PREFIX)
                                      : NULL;
        if (!t) {
                kallsyms_cache_unmap(&m);
                return NULL; /* not a table: made again, and kept anew */
        }
        struct kallsyms_cache_map *held = xmalloc(sizeof(*held));
        *held = m;
        sym_table_hold(t, release_names, held);
        return t;
}

static void names_keep(const char *state, const struct sym_table *t)
{
        uint8_t prefix[NAMES_PREFIX];
        size_t len = 0;
        void *form = state && names_prefix(prefix) ? symtab_cache_encode(t, &len) : NULL;
        if (form) {
                struct kallsyms_cache_part parts[2] = {{prefix, NAMES_PREFIX}, {form, len}};
                kallsyms_cache_store_parts(NAMES_KEPT, state, parts, 2);
        }
        free(form);
}

static int load_from(struct sym_store *s, const char *kallsyms_path)
{
        /* the running kernel's: the table of an earlier replay in this state of kallsyms, as it
           was made (20 M instructions of a perf.data's replay), where root's cache keeps it; the
           state taken before kallsyms is read, as kallsyms_read takes its own */
        char *state = !kallsyms_path && kallsyms_cache_is_kept() ? kallsyms_text_state() : NULL;
        struct sym_table *kept = names_kept(state);
        if (kept) {
                free(state);
                uint32_t n = sym_table_count(kept);
                sym_kernel_symbols_take(s, kept);
                return (int)n;
        }
        int rc = load_built(s, kallsyms_path, state);
        free(state);
        return rc;
}

/* load_from's table made from the parse of kallsyms; kept under state (when there is one). */
static int load_built(struct sym_store *s, const char *kallsyms_path, const char *state)
{
        struct kallsyms *ks = NULL;
        int rc = kallsyms_read(kallsyms_path, &ks, NULL);
        if (rc < 0)
                return rc;
        const struct sym_table *kt = kallsyms_table(ks);
        uint32_t n = sym_table_count(kt), nr = 0;
        struct sym_table *t = sym_table_new();
        size_t pool_len = 0;
        const char *pool = sym_table_pool(kt, &pool_len);
        bool is_borrowed = sym_table_borrow_names(t, pool, pool_len);
        sym_table_reserve(t, n, 0);
        char buf[512];
        const char *mod = NULL;
        size_t mlen = 0;
        uint64_t until = 0; /* mod's symbols end there */
        for (uint32_t i = 0; i < n; i++) {
                const struct sym_entry *e = sym_table_at(kt, i);
                const char *name = sym_table_name(kt, e);
                if ((e->flags & SYM_FLAG_PADDING) || !name || !*name)
                        continue; /* as the recording leaves them out */
                if (e->start >= until || !mod) {
                        /* "ext4" of "[ext4]" (79 bytes at most, as sym_kernel_symbol's were);
                           none for the kernel */
                        mod = kallsyms_module_from(ks, e->start, &until);
                        size_t len =
                                mod && strcmp(mod, KALLSYMS_KERNEL_MODULE) != 0 ? strlen(mod) : 0;
                        bool is_bracketed = len >= 2 && mod[0] == '[' && mod[len - 1] == ']';
                        mlen = is_bracketed ? len - 2 : len;
                        mod = len ? mod + (is_bracketed ? 1 : 0) : "";
                        if (mlen > 79)
                                mlen = 79;
                }
                size_t nlen = strlen(name);
                uint32_t flags = sym_name_is_padding(name, nlen) ? SYM_FLAG_PADDING : 0;
                if (!mlen && nlen < sizeof(buf)) /* read in place where borrowed */
                        sym_table_add(t, e->start, e->size, name, nlen, flags);
                else
                        sym_table_add(t, e->start, e->size, buf,
                                      join_name(buf, sizeof(buf), name, mod, mlen), flags);
                nr++;
        }
        if (!nr) {
                sym_table_free(t); /* none: the kernel stays as it was */
                kallsyms_free(ks);
                return 0;
        }
        sym_table_finish(t, 1 << 20);
        names_keep(state, t);
        if (is_borrowed)
                sym_table_hold(t, release_kallsyms, ks);
        else
                kallsyms_free(ks);
        sym_kernel_symbols_take(s, t);
        return (int)nr;
}
