/* SPDX-License-Identifier: MIT */
/* debuglink.c: the checked search for an image's debug file (debuglink.h). */
#include "debuglink.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/elf_build_id.h"
#include "util/in_file.h"

/* Whether the ELF file at fd has the build-id of mod (true when mod has none). */
static bool same_build_id(Dwfl_Module *mod, int fd)
{
        const unsigned char *want = NULL;
        GElf_Addr vaddr;
        int n = dwfl_module_build_id(mod, &want, &vaddr);
        if (n <= 0)
                return true;
        uint8_t got[256];
        uint32_t m = elf_build_id_read_fd(fd, got, sizeof(got));
        return m == (uint32_t)n && memcmp(got, want, (size_t)n) == 0;
}

/* Opens path when it is a regular file with mod's build-id: the fd, its name in *name. */
static int try_open(Dwfl_Module *mod, const char *path, const char *file_name, char **name)
{
        if (file_name && strcmp(path, file_name) == 0)
                return -1; /* the image itself */
        int fd = in_file_open(path, 0, NULL);
        if (fd < 0)
                return -1;
        if (!same_build_id(mod, fd)) {
                close(fd);
                return -1;
        }
        *name = strdup(path);
        if (!*name) {
                close(fd);
                return -1;
        }
        return fd;
}

static int find_by_link(Dwfl_Module *mod, const char *path, const char *file_name,
                        const char *debuglink_file, char **debuginfo_file_name);

int debuglink_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
                             Dwarf_Addr base, const char *file_name, const char *debuglink_file,
                             GElf_Word debuglink_crc, char **debuginfo_file_name)
{
        /* by build-id: under the absolute directories only, root's or the caller's */
        int fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name,
                                              debuglink_file, debuglink_crc, debuginfo_file_name);
        if (fd >= 0)
                return fd;
        fd = find_by_link(mod, userdata ? *userdata : NULL, file_name, debuglink_file,
                          debuginfo_file_name);
        if (fd >= 0)
                return fd;
        /* then debuginfod, as the standard search ends, where servers are named: given no
           file name and no link, it looks by build-id alone and then asks DEBUGINFOD_URLS */
        const char *urls = getenv("DEBUGINFOD_URLS");
        if (!urls || !*urls)
                return -1;
        errno = 0;
        return dwfl_standard_find_debuginfo(mod, userdata, modname, base, NULL, NULL, 0,
                                            debuginfo_file_name);
}

/* The debug link's candidates, in dwfl_standard_find_debuginfo's places; fd or -1. */
static int find_by_link(Dwfl_Module *mod, const char *path, const char *file_name,
                        const char *debuglink_file, char **debuginfo_file_name)
{
        int fd;
        if (!path || !debuglink_file || !*debuglink_file || strchr(debuglink_file, '/') ||
            !file_name || file_name[0] != '/')
                return -1;
        char dir[PATH_MAX];
        const char *slash = strrchr(file_name, '/');
        if ((size_t)(slash - file_name) >= sizeof(dir))
                return -1;
        memcpy(dir, file_name, (size_t)(slash - file_name));
        dir[slash - file_name] = '\0';
        if (path[0] == '-' || path[0] == '+')
                path++;
        char cand[PATH_MAX];
        for (const char *p = path;; p++) {
                size_t n = strcspn(p, ":");
                int len;
                if (n == 0)
                        len = snprintf(cand, sizeof(cand), "%s/%s", dir, debuglink_file);
                else if (p[0] != '/')
                        len = snprintf(cand, sizeof(cand), "%s/%.*s/%s", dir, (int)n, p,
                                       debuglink_file);
                else
                        len = snprintf(cand, sizeof(cand), "%.*s%s/%s", (int)n, p, dir,
                                       debuglink_file);
                if (len > 0 && (size_t)len < sizeof(cand) &&
                    (fd = try_open(mod, cand, file_name, debuginfo_file_name)) >= 0)
                        return fd;
                if (n && p[0] == '/') {
                        len = snprintf(cand, sizeof(cand), "%.*s/%s", (int)n, p, debuglink_file);
                        if (len > 0 && (size_t)len < sizeof(cand) &&
                            (fd = try_open(mod, cand, file_name, debuginfo_file_name)) >= 0)
                                return fd;
                }
                p += n;
                if (!*p)
                        break;
        }
        return -1;
}
