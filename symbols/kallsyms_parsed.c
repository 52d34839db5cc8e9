/* SPDX-License-Identifier: MIT */
/* kallsyms_parsed.c: owns the parsed form of /proc/kallsyms (kallsyms.c's parse as it is held:
   table, runs, module names) and its file in root's cache: its layout, its writing in parts, and
   the checks of every byte read back. */
#include "symbols/kallsyms.h"
#include "kallsyms_impl.h"
#include "symbols/sym_table.h"
#include "util/kallsyms_text.h"
#include "util/xalloc.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PARSED_MAGIC "kstable2" /* a new one whenever the layout below changes, or the names */
#define PARSED_NAME  "kallsyms.table"

/* The parsed form's header; the entries follow (sym_table's, finished), then the runs, the
   module names' offsets, the table's string pool and the module names. All of it in this
   machine's byte order and this build's layout: the magic changes whenever the layout does, so
   that a file of another layout is refused (and replaced by the next store). */
struct parsed_head {
        char magic[8];
        uint64_t stext, etext;
        uint32_t nr_entries, nr_runs, nr_modules, zero;
        uint64_t pool_len, names_len;
};
_Static_assert(sizeof(struct parsed_head) == 56, "the parsed form's header is 56 bytes");
_Static_assert(sizeof(struct sym_entry) == 24, "an entry of the parsed form is 24 bytes");
_Static_assert(sizeof(struct module_run) == 16, "a run of the parsed form is 16 bytes");

/* The parsed form of ks in the parts it is written in, one after the other: its header (made
   in *head), the entries, runs, name offsets, pool and module names, all read where ks holds
   them. */
static void parsed_parts(const struct kallsyms *ks, struct parsed_head *head,
                         struct kallsyms_cache_part parts[6])
{
        size_t pool_len = 0;
        const char *pool = sym_table_pool(ks->table, &pool_len);
        uint32_t nr = sym_table_count(ks->table);
        *head = (struct parsed_head){PARSED_MAGIC, ks->stext,      ks->etext, nr,
                                     ks->nr_runs,  ks->nr_modules, 0,         pool_len,
                                     ks->names_len};
        parts[0] = (struct kallsyms_cache_part){head, sizeof(*head)};
        parts[1] = (struct kallsyms_cache_part){sym_table_at(ks->table, 0),
                                                (size_t)nr * sizeof(struct sym_entry)};
        parts[2] = (struct kallsyms_cache_part){ks->runs,
                                                (size_t)ks->nr_runs * sizeof(struct module_run)};
        parts[3] = (struct kallsyms_cache_part){ks->name_offs,
                                                (size_t)ks->nr_modules * sizeof(uint32_t)};
        parts[4] = (struct kallsyms_cache_part){pool, pool_len};
        parts[5] = (struct kallsyms_cache_part){ks->names, ks->names_len};
}

void *kallsyms_parsed_encode(const struct kallsyms *ks, size_t *len)
{
        struct parsed_head head;
        struct kallsyms_cache_part parts[6];
        parsed_parts(ks, &head, parts);
        size_t total = 0;
        for (int i = 0; i < 6; i++)
                total += parts[i].len;
        uint8_t *out = xmalloc(total), *o = out;
        for (int i = 0; i < 6; i++) {
                if (parts[i].len)
                        memcpy(o, parts[i].data, parts[i].len);
                o += parts[i].len;
        }
        *len = total;
        return out;
}

/* Whether the module names of a parsed form are what the parse leaves: the kernel's first, each
   offset inside names, which ends with a NUL, each name bracketed and of printable bytes. */
static bool is_module_names(const uint32_t *offs, uint32_t nr, const char *names, size_t len)
{
        size_t kernel = strlen(KALLSYMS_KERNEL_MODULE) + 1;
        if (!nr || len < kernel || names[len - 1] || offs[0] ||
            memcmp(names, KALLSYMS_KERNEL_MODULE, kernel) != 0)
                return false;
        for (size_t i = 0; i < len; i++) {
                unsigned char ch = (unsigned char)names[i];
                if ((ch && ch < 0x20) || ch == 0x7f)
                        return false;
        }
        for (uint32_t m = 0; m < nr; m++) {
                if (offs[m] >= len || names[offs[m]] != '[')
                        return false;
        }
        return true;
}

int kallsyms_parsed_open_mem(const void *data, size_t len, struct kallsyms **out)
{
        *out = NULL;
        struct parsed_head head;
        if (!data || ((uintptr_t)data & 7) || len < sizeof(head))
                return -EINVAL;
        memcpy(&head, data, sizeof(head));
        size_t room = len - sizeof(head);
        /* every count and length against the bytes there are; each product fits in 64 bits */
        uint64_t arrays = (uint64_t)head.nr_entries * sizeof(struct sym_entry) +
                          (uint64_t)head.nr_runs * sizeof(struct module_run) +
                          (uint64_t)head.nr_modules * sizeof(uint32_t);
        if (memcmp(head.magic, PARSED_MAGIC, 8) != 0 || head.zero || arrays > room ||
            head.pool_len > room - arrays || head.names_len != room - arrays - head.pool_len)
                return -EINVAL;
        const uint8_t *p = (const uint8_t *)data + sizeof(head);
        const struct sym_entry *entries = (const void *)p;
        const struct module_run *runs = (const void *)(entries + head.nr_entries);
        const uint32_t *offs = (const void *)(runs + head.nr_runs);
        const char *pool = (const char *)(offs + head.nr_modules);
        const char *names = pool + head.pool_len;
        if (!is_module_names(offs, head.nr_modules, names, head.names_len))
                return -EINVAL;
        /* the runs as build_runs leaves them: one at the lowest symbol first, ascending, each
           of a module there is; none without symbols */
        if ((head.nr_entries == 0) != (head.nr_runs == 0) ||
            (head.nr_runs && runs[0].start != entries[0].start))
                return -EINVAL;
        for (uint32_t i = 0; i < head.nr_runs; i++) {
                if (runs[i].module >= head.nr_modules || (i && runs[i].start <= runs[i - 1].start))
                        return -EINVAL;
        }
        struct sym_table *t =
                sym_table_new_mapped(entries, head.nr_entries, pool, (size_t)head.pool_len);
        if (!t)
                return -EINVAL;
        struct kallsyms *ks = xcalloc(1, sizeof(*ks));
        /* read-only: is_mapped keeps every writer of these (the parse) away from them */
        ks->table = t;
        ks->runs = (struct module_run *)runs;
        ks->nr_runs = head.nr_runs;
        ks->names = (char *)names;
        ks->names_len = ks->names_cap = (size_t)head.names_len;
        ks->name_offs = (uint32_t *)offs;
        ks->nr_modules = ks->cap_modules = head.nr_modules;
        ks->stext = head.stext;
        ks->etext = head.etext;
        ks->is_mapped = true;
        *out = ks;
        return 0;
}

bool kallsyms_is_mapped(const struct kallsyms *ks)
{
        return ks && ks->is_mapped;
}

struct kallsyms *kallsyms_parsed_load(const char *state)
{
        struct kallsyms_cache_map map;
        if (!kallsyms_cache_map(PARSED_NAME, state, &map))
                return NULL;
        struct kallsyms *ks = NULL;
        if (kallsyms_parsed_open_mem(map.data, map.len, &ks) < 0) {
                kallsyms_cache_unmap(&map);
                return NULL; /* damaged: the parse's store replaces it */
        }
        ks->map = map;
        return ks;
}

void kallsyms_parsed_store(const char *state, const struct kallsyms *ks)
{
        struct parsed_head head;
        struct kallsyms_cache_part parts[6];
        parsed_parts(ks, &head, parts);
        kallsyms_cache_store_parts(PARSED_NAME, state, parts, 6);
}
