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

#include "perf_buildid_dir.h"
#include "symbols/kallsyms.h"
#include "symbols/sym_table.h"

static int load_from(struct sym_store *s, const char *kallsyms_path);

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

/* The text symbols of the kallsyms file at path (NULL: /proc/kallsyms) into the store as the
   recording's kernel symbols, each with its module; how many, or -errno. */
static int load_from(struct sym_store *s, const char *kallsyms_path)
{
        struct kallsyms *ks = NULL;
        int rc = kallsyms_read(kallsyms_path, &ks, NULL);
        if (rc < 0)
                return rc;
        const struct sym_table *t = kallsyms_table(ks);
        uint32_t n = sym_table_count(t), nr = 0;
        for (uint32_t i = 0; i < n; i++) {
                const struct sym_entry *e = sym_table_at(t, i);
                if (e->flags & SYM_FLAG_PADDING)
                        continue; /* as the recording leaves them out */
                struct kallsyms_hit hit;
                char module[80] = ""; /* "ext4" (sym_kernel_symbol's), "" the kernel */
                if (kallsyms_lookup(ks, e->start, &hit) &&
                    strcmp(hit.module, KALLSYMS_KERNEL_MODULE) != 0) {
                        size_t len = strlen(hit.module);
                        bool is_bracketed =
                                len >= 2 && hit.module[0] == '[' && hit.module[len - 1] == ']';
                        snprintf(module, sizeof(module), "%.*s",
                                 (int)(is_bracketed ? len - 2 : len),
                                 hit.module + (is_bracketed ? 1 : 0));
                }
                sym_kernel_symbol(s, e->start, e->size, sym_table_name(t, e), module);
                nr++;
        }
        kallsyms_free(ks);
        return (int)nr;
}
