/* SPDX-License-Identifier: MIT */
/* build_id_scan.c: owns the per-folder cache of the build-ids of the symbol path's files. */
#include "build_id_scan.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/elf_build_id.h"
#include "util/in_file.h"
#include "util/xalloc.h"

struct scanned_file {
        uint8_t id[20];
        uint32_t id_size;
        char *name; /* owned: the file's name in its folder */
};

struct scanned_dir {
        char *path; /* owned */
        struct scanned_file *files;
        uint32_t nr_files;
};

static pthread_mutex_t scan_lock = PTHREAD_MUTEX_INITIALIZER;
static struct scanned_dir *scan_dirs; /* the folders read, for the life of the process */
static uint32_t nr_scan_dirs;
static uint64_t nr_opened;

static void dir_read(struct scanned_dir *d)
{
        DIR *dir = opendir(d->path);
        if (!dir)
                return;
        uint32_t cap = 0, nr_seen = 0;
        struct dirent *e;
        while ((e = readdir(dir)) && nr_seen < BUILD_ID_SCAN_MAX_FILES) {
                if (e->d_name[0] == '.' ||
                    (e->d_type != DT_REG && e->d_type != DT_UNKNOWN && e->d_type != DT_LNK))
                        continue;
                nr_seen++;
                char path[4096];
                if ((size_t)snprintf(path, sizeof(path), "%s/%s", d->path, e->d_name) >=
                    sizeof(path))
                        continue;
                int fd = in_file_open(path, 0, NULL); /* a regular file only, never blocking */
                if (fd < 0)
                        continue;
                nr_opened++;
                struct scanned_file f = {0};
                f.id_size = elf_build_id_read_fd(fd, f.id, sizeof(f.id));
                close(fd);
                if (!f.id_size)
                        continue;
                if (d->nr_files == cap) {
                        cap = cap ? 2 * cap : 16;
                        d->files = xrealloc(d->files, cap * sizeof(*d->files));
                }
                f.name = xstrdup(e->d_name);
                d->files[d->nr_files++] = f;
        }
        closedir(dir);
}

/* The folder's files, read the first time it is asked for. Under scan_lock. */
static const struct scanned_dir *dir_get(const char *path)
{
        for (uint32_t i = 0; i < nr_scan_dirs; i++)
                if (strcmp(scan_dirs[i].path, path) == 0)
                        return &scan_dirs[i];
        scan_dirs = xrealloc(scan_dirs, (nr_scan_dirs + 1) * sizeof(*scan_dirs));
        struct scanned_dir *d = &scan_dirs[nr_scan_dirs++];
        *d = (struct scanned_dir){xstrdup(path), NULL, 0};
        dir_read(d);
        return d;
}

/* The file's id is the recorded one: the same bytes, or the recorded one padded with zeros. */
static bool id_matches(const struct scanned_file *f, const uint8_t *id, uint32_t n)
{
        if (!f->id_size || f->id_size > n || memcmp(f->id, id, f->id_size) != 0)
                return false;
        for (uint32_t i = f->id_size; i < n; i++)
                if (id[i])
                        return false;
        return true;
}

bool build_id_scan_find(const char *const *dirs, uint32_t nr_dirs, const uint8_t *id, uint32_t n,
                        char *out, size_t size)
{
        if (!n)
                return false;
        bool is_found = false;
        pthread_mutex_lock(&scan_lock);
        for (uint32_t i = 0; i < nr_dirs && !is_found; i++) {
                const struct scanned_dir *d = dir_get(dirs[i]);
                for (uint32_t k = 0; k < d->nr_files && !is_found; k++)
                        if (id_matches(&d->files[k], id, n)) {
                                snprintf(out, size, "%s/%s", d->path, d->files[k].name);
                                is_found = true;
                        }
        }
        pthread_mutex_unlock(&scan_lock);
        return is_found;
}

void build_id_scan_stats(uint32_t *nr_dirs_read, uint64_t *nr_files_opened)
{
        pthread_mutex_lock(&scan_lock);
        *nr_dirs_read = nr_scan_dirs;
        *nr_files_opened = nr_opened;
        pthread_mutex_unlock(&scan_lock);
}
