/* SPDX-License-Identifier: MIT */
/* perf_conv_files.c: the files the converter reads, this machine's (live) and a recording's
   (offline): images for DWARF walks and the vdso. */
#include "perf_conv_int.h"

#include <pthread.h>
#include <stdbool.h>

#include "etw/etwtop_ext.h"
#include "util/elf_build_id.h"
#include "util/perf_buildid_dir.h"

/* etw_perf_data_set_image_lookup's, for every conversion of this process */
static ETW_IMAGE_LOOKUP image_lookup;
static void *image_lookup_ctx;
static pthread_mutex_t image_lookup_lock = PTHREAD_MUTEX_INITIALIZER;

ULONG etw_perf_data_set_image_lookup(ETW_IMAGE_LOOKUP Lookup, PVOID Context)
{
        pthread_mutex_lock(&image_lookup_lock);
        image_lookup = Lookup;
        image_lookup_ctx = Context;
        pthread_mutex_unlock(&image_lookup_lock);
        return ERROR_SUCCESS;
}

/* This process's vdso (the same kernel's in every process): the ELF image and its size, the
   section headers coming last. */
static const uint8_t *own_vdso(void *ctx, size_t *size)
{
        (void)ctx;
        const uint8_t *img = (const uint8_t *)(uintptr_t)getauxval(AT_SYSINFO_EHDR);
        if (!img || memcmp(img, "\177ELF", 4) != 0 || img[4] != 2)
                return NULL;
        uint64_t shoff = le_get64(img + 0x28);
        uint16_t shentsize = le_get16(img + 0x3a), shnum = le_get16(img + 0x3c);
        uint64_t n = shoff + (uint64_t)shentsize * shnum;
        if (!shoff || n > (1u << 20))
                return NULL;
        *size = (size_t)n;
        return img;
}

static struct unwind_module *module_at(struct unwind_cache *cache, const char *path,
                                       const uint8_t *build_id, uint32_t build_id_size)
{
        struct unwind_module *m = NULL;
        if (unwind_cache_get(cache, path, build_id_size ? build_id : NULL, build_id_size, &m) < 0)
                return NULL;
        return m;
}

/* The file an image's rules are read from: its path; or, where that file is gone (" (deleted)":
   replaced by a package upgrade since it was mapped, a memfd) or cannot be read from here
   (another mount namespace), the mapping itself while the process lives: /proc/PID/map_files
   (CAP_SYS_ADMIN), or /proc/PID/exe for the program's own file (its owner may read it). */
static const char *live_image_file(const char *path, uint32_t pid, uint64_t base, uint64_t size,
                                   char *buf, size_t buf_size)
{
        static const char deleted[] = " (deleted)";
        size_t n = strlen(path), k = sizeof(deleted) - 1;
        if ((n <= k || strcmp(path + n - k, deleted) != 0) && access(path, R_OK) == 0)
                return path;
        snprintf(buf, buf_size, "/proc/%u/map_files/%llx-%llx", pid, (unsigned long long)base,
                 (unsigned long long)(base + size));
        if (access(buf, R_OK) == 0)
                return buf;
        char exe[64], target[4096];
        snprintf(exe, sizeof(exe), "/proc/%u/exe", pid);
        ssize_t len = readlink(exe, target, sizeof(target) - 1);
        if (len > 0) {
                target[len] = '\0';
                if (strcmp(target, path) == 0) {
                        snprintf(buf, buf_size, "%s", exe);
                        return buf;
                }
        }
        return path;
}

static struct unwind_module *live_image_module(void *ctx, struct unwind_cache *cache,
                                               const char *path, uint32_t pid, uint64_t base,
                                               uint64_t size, const uint8_t *build_id,
                                               uint32_t build_id_size)
{
        (void)ctx;
        char buf[96];
        return module_at(cache, live_image_file(path, pid, base, size, buf, sizeof(buf)), build_id,
                         build_id_size);
}

/* Whether the file at path is the image: readable, its build-id the one given (where one is). */
static bool is_the_image(const char *path, const uint8_t *build_id, uint32_t build_id_size)
{
        if (access(path, R_OK) != 0)
                return false;
        if (!build_id_size)
                return true;
        uint8_t id[ELF_BUILD_ID_MAX];
        uint32_t n = elf_build_id_read(path, id, sizeof(id));
        return n == build_id_size && memcmp(id, build_id, n) == 0;
}

/* a recording's images (this machine's processes are not the recording's): where
   etw_perf_data_set_image_lookup's lookup says, the recorded path, perf's build-id cache; the
   recorded path where none of them is the image (its module then says why it has no rules) */
static struct unwind_module *offline_image_module(void *ctx, struct unwind_cache *cache,
                                                  const char *path, uint32_t pid, uint64_t base,
                                                  uint64_t size, const uint8_t *build_id,
                                                  uint32_t build_id_size)
{
        (void)ctx;
        (void)pid;
        (void)base;
        (void)size;
        struct unwind_module *m = NULL;
        /* a build-id's module made before, from whichever file (no file is looked at) */
        if (build_id_size && unwind_cache_get(cache, NULL, build_id, build_id_size, &m) == 0)
                return m;
        char buf[4096];
        pthread_mutex_lock(&image_lookup_lock);
        ETW_IMAGE_LOOKUP lookup = image_lookup;
        void *lookup_ctx = image_lookup_ctx;
        pthread_mutex_unlock(&image_lookup_lock);
        for (ULONG i = 0; lookup && i < 256 &&
                          lookup(lookup_ctx, path, build_id, build_id_size, i, buf, sizeof(buf));
             i++)
                if (is_the_image(buf, build_id, build_id_size))
                        return module_at(cache, buf, build_id, build_id_size);
        if (is_the_image(path, build_id, build_id_size))
                return module_at(cache, path, build_id, build_id_size);
        char dir[4000];
        if (build_id_size && perf_buildid_dir(dir, sizeof(dir))) {
                int n = snprintf(buf, sizeof(buf), "%s/.build-id/%02x/", dir, build_id[0]);
                for (uint32_t i = 1; i < build_id_size && n > 0 && (size_t)n + 3 < sizeof(buf); i++)
                        n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%02x", build_id[i]);
                if (n > 0 && (size_t)n + 5 < sizeof(buf)) {
                        memcpy(buf + n, "/elf", 5);
                        if (is_the_image(buf, build_id, build_id_size))
                                return module_at(cache, buf, build_id, build_id_size);
                }
        }
        return module_at(cache, path, build_id, build_id_size);
}

/* The offline vdso stays this process's, as before the files hooks: a recording keeps no copy
   of its own (perf writes none). */
const struct perf_conv_files perf_conv_files_live = {live_image_module, own_vdso};
const struct perf_conv_files perf_conv_files_offline = {offline_image_module, own_vdso};

void perf_conv_set_files(struct perf_conv *c, const struct perf_conv_files *files, void *ctx)
{
        c->files = files;
        c->files_ctx = ctx;
}
