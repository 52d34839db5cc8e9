/* SPDX-License-Identifier: MIT */
/* symtab_cache.c: owns the layout of a symbol table kept in the DWARF cache's directory
   (symtab_cache.h): its key, its bytes written, and their checks read back. */
#include "symtab_cache.h"

#include "symbols/sym_table.h"
#include "util/elf_build_id.h"
#include "util/xalloc.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC "etwtop symtab 1\n" /* 16 bytes: a new one whenever the layout below changes */

/* The entry's bytes: the header, nr entries (sym_table's, finished: name offsets in the pool),
   the pool (the empty name at 0, each name ended by a NUL). In this machine's byte order and
   this build's layout, which the key holds too. */
struct table_head {
        char magic[16];
        uint32_t nr, zero;
        uint64_t pool_len;
};
_Static_assert(sizeof(struct table_head) == 32, "a kept table's header is 32 bytes");
_Static_assert(sizeof(struct sym_entry) == 24, "a kept table's entry is 24 bytes");

static uint8_t program_id[20];
static uint32_t program_id_size;
static pthread_once_t program_id_once = PTHREAD_ONCE_INIT;

static void program_id_read(void)
{
        program_id_size = elf_build_id_read("/proc/self/exe", program_id, sizeof(program_id));
}

uint32_t symtab_cache_program_id(uint8_t id[20])
{
        pthread_once(&program_id_once, program_id_read);
        memcpy(id, program_id, sizeof(program_id));
        return program_id_size;
}

bool symtab_cache_key(const struct symtab_cache_part *parts, uint32_t nr,
                      struct dwarf_cache_key *key)
{
        uint8_t id[20];
        uint32_t id_size = symtab_cache_program_id(id);
        if (!id_size)
                return false;
        /* each part hashed alone, then the layout, the program and the parts' hashes and
           lengths together */
        uint64_t desc[2 + 3 + 3 * 16] = {sizeof(struct table_head), sizeof(struct sym_entry)};
        uint32_t n = 2;
        struct dwarf_cache_key k;
        dwarf_cache_key(id, id_size, 0, &k);
        desc[n++] = k.h[0];
        desc[n++] = k.h[1];
        desc[n++] = id_size;
        for (uint32_t i = 0; i < nr && i < 16; i++) {
                dwarf_cache_key(parts[i].p, parts[i].n, 0, &k);
                desc[n++] = k.h[0];
                desc[n++] = k.h[1];
                desc[n++] = parts[i].n;
        }
        dwarf_cache_key(desc, n * sizeof(desc[0]), 0, key);
        return true;
}

struct sym_table *symtab_cache_decode(const void *data, size_t size)
{
        struct table_head head;
        if (!data || ((uintptr_t)data & 7) || size < sizeof(head))
                return NULL;
        memcpy(&head, data, sizeof(head));
        size_t room = size - sizeof(head);
        if (memcmp(head.magic, MAGIC, 16) != 0 || head.zero ||
            (uint64_t)head.nr * sizeof(struct sym_entry) > room ||
            head.pool_len != room - (uint64_t)head.nr * sizeof(struct sym_entry))
                return NULL;
        const struct sym_entry *entries =
                (const void *)((const uint8_t *)data + sizeof(struct table_head));
        const char *pool = (const char *)(entries + head.nr);
        /* the entries and names checked where they are read (sym_table_new_mapped) */
        return sym_table_new_mapped(entries, head.nr, pool, (size_t)head.pool_len);
}

void *symtab_cache_encode(const struct sym_table *t, size_t *len)
{
        *len = 0;
        uint32_t nr = sym_table_count(t);
        /* the names, wherever the table reads them (its pool, a file's string table), into one
           pool of the entry's */
        size_t pool_len = 1;
        for (uint32_t i = 0; i < nr; i++) {
                size_t n = strlen(sym_table_name(t, sym_table_at(t, i)));
                pool_len += n ? n + 1 : 0;
        }
        if (pool_len >= 0x80000000u)
                return NULL; /* names a table's offsets cannot reach */
        size_t total = sizeof(struct table_head) + (size_t)nr * sizeof(struct sym_entry) + pool_len;
        uint8_t *out = xmalloc(total);
        struct table_head head = {MAGIC, nr, 0, pool_len};
        memcpy(out, &head, sizeof(head));
        struct sym_entry *entries = (void *)(out + sizeof(head));
        char *pool = (char *)(entries + nr);
        size_t at = 1;
        pool[0] = 0;
        for (uint32_t i = 0; i < nr; i++) {
                const struct sym_entry *e = sym_table_at(t, i);
                const char *name = sym_table_name(t, e);
                size_t n = strlen(name) + 1;
                entries[i] = *e;
                entries[i].name = n > 1 ? (uint32_t)at : 0;
                if (n > 1) {
                        memcpy(pool + at, name, n);
                        at += n;
                }
        }
        *len = total;
        return out;
}

static void release_map(void *map)
{
        dwarf_cache_unmap(map);
        free(map);
}

struct sym_table *symtab_cache_load(const struct dwarf_cache_key *key)
{
        struct dwarf_cache_map m;
        if (!dwarf_cache_find_table(key, &m))
                return NULL;
        struct sym_table *t = symtab_cache_decode(m.data, m.size);
        if (!t) {
                dwarf_cache_unmap(&m);
                return NULL; /* not a table: the next store replaces it */
        }
        struct dwarf_cache_map *held = xmalloc(sizeof(*held));
        *held = m;
        sym_table_hold(t, release_map, held);
        return t;
}

void symtab_cache_store(const struct dwarf_cache_key *key, const struct sym_table *t)
{
        if (sym_table_count(t) < SYMTAB_CACHE_MIN_SYMBOLS)
                return;
        size_t len;
        void *out = symtab_cache_encode(t, &len);
        if (out)
                dwarf_cache_store_table(key, out, len);
        free(out);
}
