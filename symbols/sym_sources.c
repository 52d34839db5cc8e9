/* SPDX-License-Identifier: MIT */
/* sym_sources.c: owns the symbol sources that are not ELF files on disk: the vdso of this
   process, Windows images' export tables, JIT maps and the running kernel's symbols. */
#include "sym_sources.h"

#include "symbols/kallsyms.h"
#include "symbols/module_name.h"
#include "symbols/pe_image.h"
#include "symbols/perf_map.h"
#include "symbols/sym_table.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <stdbool.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static void note_set(char *note, size_t size, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static void note_set(char *note, size_t size, const char *fmt, ...)
{
        va_list ap;
        if (!note || !size)
                return;
        va_start(ap, fmt);
        vsnprintf(note, size, fmt, ap);
        va_end(ap);
}

int sym_vdso_memfd(void)
{
        FILE *f = fopen("/proc/self/maps", "re");
        if (!f)
                return -1;
        char line[512];
        uint64_t start = 0, end = 0;
        while (fgets(line, sizeof(line), f)) {
                if (!strstr(line, "[vdso]"))
                        continue;
                if (sscanf(line, "%" SCNx64 "-%" SCNx64, &start, &end) != 2)
                        start = end = 0;
                break;
        }
        fclose(f);
        if (!start || end <= start || end - start > (64u << 20))
                return -1;
        int fd = memfd_create("vdso", MFD_CLOEXEC);
        if (fd < 0)
                return -1;
        const uint8_t *p = (const uint8_t *)(uintptr_t)start;
        size_t left = (size_t)(end - start);
        while (left) {
                ssize_t n = write(fd, p, left);
                if (n <= 0) {
                        close(fd);
                        return -1;
                }
                p += n;
                left -= (size_t)n;
        }
        return fd;
}

/* dir/name, or a file in dir whose name matches ignoring case (Windows names do not care). */
static bool find_in_dir(const char *dir, const char *name, char *out, size_t size)
{
        struct stat st;
        snprintf(out, size, "%s/%s", dir, name);
        if (stat(out, &st) == 0 && S_ISREG(st.st_mode))
                return true;
        DIR *d = opendir(dir);
        struct dirent *e;
        bool is_found = false;
        while (d && !is_found && (e = readdir(d))) {
                if (strcasecmp(e->d_name, name) == 0) {
                        snprintf(out, size, "%s/%s", dir, e->d_name);
                        is_found = stat(out, &st) == 0 && S_ISREG(st.st_mode);
                }
        }
        if (d)
                closedir(d);
        return is_found;
}

int sym_pe_load(const char *path, uint32_t time_date_stamp, uint32_t image_size,
                const char *const *dirs, uint32_t nr_dirs, struct sym_table **out, char *file_used,
                size_t file_size, char *note, size_t note_size)
{
        const char *name = module_name_of_path(path);
        char cand[4096];
        bool has_mismatch = false;
        *out = NULL;
        for (uint32_t i = 0; i < nr_dirs; i++) {
                if (!find_in_dir(dirs[i], name, cand, sizeof(cand)))
                        continue;
                struct pe_identity id;
                struct pe_error err = {0};
                struct sym_table *t = sym_table_new();
                int rc = pe_image_read_file(cand, &id, t, &err);
                if (rc < 0) {
                        sym_table_free(t);
                        note_set(note, note_size, "%s", err.message);
                        continue;
                }
                if (time_date_stamp &&
                    !pe_identity_matches_image(&id, time_date_stamp, image_size)) {
                        sym_table_free(t);
                        has_mismatch = true;
                        note_set(note, note_size,
                                 "%s is another build than the recording's %s (TimeDateStamp "
                                 "%08x, SizeOfImage %x; recorded %08x, %x)",
                                 cand, name, id.time_date_stamp, id.size_of_image, time_date_stamp,
                                 image_size);
                        continue;
                }
                snprintf(file_used, file_size, "%s", cand);
                note[0] = 0;
                *out = t;
                return 0;
        }
        if (!has_mismatch && !note[0])
                note_set(note, note_size,
                         "%s: no image file on the symbol path%s; frames show %s+offset", name,
                         nr_dirs ? "" : " (give the directory with --symbol-path)", name);
        return has_mismatch ? -ESTALE : -ENOENT;
}

int sym_jit_load(uint32_t pid, struct sym_table **out, char *file_used, size_t file_size,
                 char *note, size_t note_size)
{
        struct perf_map_error err = {0};
        int rc = perf_map_read((pid_t)pid, out, &err);
        snprintf(file_used, file_size, "/tmp/perf-%u.map", pid);
        if (rc < 0)
                note_set(note, note_size, "/tmp/perf-%u.map: %s", pid, err.msg);
        else if (err.nr_bad_lines)
                note_set(note, note_size,
                         "/tmp/perf-%u.map: %u bad lines skipped, the first at "
                         "byte %" PRIu64 ": %s",
                         pid, err.nr_bad_lines, err.offset, err.msg);
        return rc;
}

int sym_kallsyms_load(struct kallsyms **out, char *file_used, size_t file_size, char *note,
                      size_t note_size)
{
        struct kallsyms_error err = {0};
        int rc = kallsyms_read(NULL, out, &err);
        snprintf(file_used, file_size, "/proc/kallsyms");
        if (rc < 0)
                note_set(note, note_size, "kernel symbols: %s", err.msg);
        return rc;
}
