/* SPDX-License-Identifier: MIT */
/* symbols.c: owns the symbol store's lifecycle and its small helpers (the store's parts are in
   sym_strings.c, sym_loader.c, sym_spaces.c, sym_lookup.c, sym_clr.c and sym_lines.c). */
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

/* ---- small helpers ---- */

/* Eight bytes a step (FNV-1a's byte steps were 16 M of a replay's 48,000 interned names, 340
   instructions a name), the last word zero-filled, the length in the seed: the string table's
   slots alone see it, never an output. */
uint64_t symbols_hash_bytes(const void *p, size_t n)
{
        const unsigned char *b = p;
        uint64_t h = HASH_FNV_OFFSET ^ (n * 0x9e3779b97f4a7c15ull);
        size_t i = 0;
        for (; i + 8 <= n; i += 8) {
                uint64_t w;
                memcpy(&w, b + i, 8);
                h = hash_mix64_half(h ^ w);
        }
        if (i < n) {
                uint64_t w = 0;
                memcpy(&w, b + i, n - i);
                h = hash_mix64_half(h ^ w);
        }
        return hash_mix64(h);
}

void symbols_logf_(struct sym_store *s, const char *fmt, ...)
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
        s->kernel_module =
                symbols_module_new(s, MOD_KERNEL, "[kernel.kallsyms]", "[kernel.kallsyms]");
        s->path =
                sym_path_new(s->opt.symbol_path, s->opt.nr_symbol_path, getenv("_NT_SYMBOL_PATH"));
        s->queue_cap = 64;
        s->queue = xcalloc(s->queue_cap, sizeof(*s->queue));
        pthread_mutex_init(&s->lock, NULL);
        pthread_cond_init(&s->cond, NULL);
        pthread_cond_init(&s->idle, NULL);
        if (!s->opt.is_synchronous && pthread_create(&s->loader, NULL, symbols_loader_main, s) == 0)
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
                if (m->table != s->ksym_set)
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
        free(s->fn_memo);
        free(s->src);
        free(s->src_frames);
        free(s->ksyms);
        free(s->bpf_progs);
        sym_table_free(s->ksym_set);
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
        st->nr_src_kept = s->nr_src;
        size_t mem = sizeof(*s) + s->string_bytes +
                     s->cap_strings * (sizeof(char *) + sizeof(uint32_t)) +
                     (s->string_hash_mask + 1) * sizeof(uint32_t) +
                     (s->cache_mask + 1) * sizeof(struct cache_entry) +
                     (s->src_mask + 1) * sizeof(struct src_entry) +
                     s->cap_src_frames * sizeof(struct sym_srcframe) +
                     (s->fn_memo ? FN_MEMO_SLOTS * sizeof(*s->fn_memo) : 0);
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
