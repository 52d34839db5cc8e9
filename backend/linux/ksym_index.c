/* SPDX-License-Identifier: MIT */
/* ksym_index.c: the kernel's text symbols as an index on disk: its layout, its cache file, and
   the look-up of the addresses hit. */
#include "ksym_index.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

#define INDEX_MAGIC "ksymidx1"
#define INDEX_NAME  "kallsyms.index"

/* The index's header: its magic, then the number of entries and the strings' length; the
   entries follow, then the strings. */
struct index_head {
        char magic[8];
        uint64_t nr;
        uint64_t strings_len;
};
_Static_assert(sizeof(struct index_head) == 24, "the index's header is 24 bytes on disk");

void *ksym_index_build(const struct perf_ksym *syms, size_t nr, size_t *len)
{
        /* the strings: each name, and each module once where its symbols follow one another
           (the kernel lists a module's symbols together); offset 0 is "" */
        size_t strings_len = 1;
        for (size_t i = 0; i < nr; i++) {
                strings_len += strlen(syms[i].name) + 1;
                const char *m = syms[i].module ? syms[i].module : "";
                if (m[0] && (i == 0 || !syms[i - 1].module || strcmp(syms[i - 1].module, m) != 0))
                        strings_len += strlen(m) + 1;
        }
        size_t total =
                sizeof(struct index_head) + nr * sizeof(struct ksym_index_entry) + strings_len;
        uint8_t *out = xcalloc(1, total);
        struct index_head head = {INDEX_MAGIC, nr, strings_len};
        memcpy(out, &head, sizeof(head));
        struct ksym_index_entry *e = (void *)(out + sizeof(head));
        char *strings = (char *)(e + nr);
        size_t o = 1;
        uint32_t module = 0;
        for (size_t i = 0; i < nr; i++) {
                const char *m = syms[i].module ? syms[i].module : "";
                if (!m[0]) {
                        module = 0;
                } else if (i == 0 || !syms[i - 1].module || strcmp(syms[i - 1].module, m) != 0) {
                        size_t n = strlen(m) + 1;
                        memcpy(strings + o, m, n);
                        module = (uint32_t)o;
                        o += n;
                }
                size_t n = strlen(syms[i].name) + 1;
                memcpy(strings + o, syms[i].name, n);
                e[i] = (struct ksym_index_entry){syms[i].addr,
                                                 syms[i].size > UINT32_MAX ? UINT32_MAX
                                                                           : (uint32_t)syms[i].size,
                                                 (uint32_t)o, module, 0};
                o += n;
        }
        *len = total;
        return out;
}

int ksym_index_open_mem(struct ksym_index *ix, const void *data, size_t len)
{
        memset(ix, 0, sizeof(*ix));
        struct index_head head;
        if (len < sizeof(head))
                return -EINVAL;
        memcpy(&head, data, sizeof(head));
        size_t room = len - sizeof(head);
        if (memcmp(head.magic, INDEX_MAGIC, 8) != 0 ||
            head.nr > room / sizeof(struct ksym_index_entry) ||
            head.strings_len != room - head.nr * sizeof(struct ksym_index_entry) ||
            !head.strings_len || head.strings_len > UINT32_MAX)
                return -EINVAL;
        ix->entries = (const void *)((const uint8_t *)data + sizeof(head));
        ix->nr = head.nr;
        ix->strings = (const char *)(ix->entries + head.nr);
        ix->strings_len = head.strings_len;
        if (ix->strings[ix->strings_len - 1] != 0) {
                memset(ix, 0, sizeof(*ix));
                return -EINVAL; /* a name would run off the end */
        }
        return 0;
}

int ksym_index_open(struct ksym_index *ix, const char *state)
{
        struct kallsyms_cache_map map;
        memset(ix, 0, sizeof(*ix));
        if (!kallsyms_cache_map(INDEX_NAME, state, &map))
                return -ENOENT;
        int rc = ksym_index_open_mem(ix, map.data, map.len);
        if (rc < 0) {
                kallsyms_cache_unmap(&map);
                return rc;
        }
        ix->map = map;
        return 0;
}

void ksym_index_store(const char *state, const struct perf_ksym *syms, size_t nr)
{
        size_t len = 0;
        void *data = ksym_index_build(syms, nr, &len);
        kallsyms_cache_store(INDEX_NAME, state, data, len);
        free(data);
}

void ksym_index_close(struct ksym_index *ix)
{
        if (!ix)
                return;
        kallsyms_cache_unmap(&ix->map);
        memset(ix, 0, sizeof(*ix));
}

struct perf_ksym *ksym_index_lookup(const struct ksym_index *ix, const uint64_t *addrs, size_t n,
                                    size_t *nr_out)
{
        *nr_out = 0;
        if (!ix->nr || !n)
                return NULL;
        size_t *hit = xmalloc(n * sizeof(*hit)), nr_hit = 0, lo = 0;
        for (size_t k = 0; k < n; k++) {
                uint64_t a = addrs[k];
                lo = perf_conv_last_at_or_below(ix->entries, sizeof(*ix->entries), ix->nr, lo, a);
                const struct ksym_index_entry *e = &ix->entries[lo];
                if (e->addr <= a && a - e->addr < e->size)
                        hit[nr_hit++] = lo; /* ascending: the addresses are */
        }
        struct perf_ksym *out = nr_hit ? xmalloc(nr_hit * sizeof(*out)) : NULL;
        size_t nr = 0;
        for (size_t k = 0; k < nr_hit; k++) {
                if (k && hit[k] == hit[k - 1])
                        continue;
                const struct ksym_index_entry *e = &ix->entries[hit[k]];
                if (e->name >= ix->strings_len || e->module >= ix->strings_len)
                        continue; /* damaged: no name to give */
                out[nr++] = (struct perf_ksym){e->addr, e->size, ix->strings + e->name,
                                               ix->strings + e->module};
        }
        free(hit);
        *nr_out = nr;
        if (!nr) {
                free(out);
                return NULL;
        }
        return out;
}
