/* SPDX-License-Identifier: MIT */
/* sym_strings.c: owns the symbol store's interned strings (names are ids into one table) and the
   demangled function names. */
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

/* ---- interned strings ---- */

static void strings_rehash(struct sym_store *s, uint32_t cap)
{
        free(s->string_hash);
        s->string_hash = xcalloc(cap, sizeof(*s->string_hash));
        s->string_hash_mask = cap - 1;
        for (uint32_t id = 1; id < s->nr_strings; id++) {
                uint32_t j = (uint32_t)symbols_hash_bytes(s->strings[id], strlen(s->strings[id])) &
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
        uint64_t h = symbols_hash_bytes(str, len);
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

uint32_t symbols_function_name(struct sym_store *s, const char *raw)
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
