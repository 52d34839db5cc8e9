/* SPDX-License-Identifier: MIT */
/* module_name.c: owns how a module is named from its path and how module+offset reads. */
#include "symbols/module_name.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

const char *module_name_of_path(const char *path)
{
        if (!path)
                return "";
        const char *name = path;
        for (const char *p = path; *p; p++)
                if (*p == '/' || *p == '\\')
                        name = p + 1;
        return name;
}

/* NAME.ko, or NAME.ko.gz/.xz/.zst/.bz2 (perf's kmod_path__parse: its compressions): NAME's
   length, else 0. */
static size_t kmod_stem(const char *name)
{
        static const char *const exts[] = {".ko", ".ko.gz", ".ko.xz", ".ko.zst", ".ko.bz2"};
        size_t n = strlen(name);
        for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
                size_t e = strlen(exts[i]);
                if (n > e && strcmp(name + n - e, exts[i]) == 0)
                        return n - e;
        }
        return 0;
}

size_t module_short_name(char *buf, size_t size, const char *path)
{
        const char *name = module_name_of_path(path);
        size_t stem = kmod_stem(name);
        int n;
        if (!stem) {
                n = snprintf(buf, size, "%s", name);
                return n < 0 ? 0 : (size_t)n;
        }
        n = snprintf(buf, size, "[%.*s]", (int)stem, name);
        for (size_t i = 1; i <= stem && i < size; i++)
                if (buf[i] == '-')
                        buf[i] = '_';
        return n < 0 ? 0 : (size_t)n;
}

size_t module_name_format_offset(char *buf, size_t size, const char *module, uint64_t offset)
{
        int n = snprintf(buf, size, "%s+0x%" PRIx64, module && *module ? module : "?", offset);
        return n < 0 ? 0 : (size_t)n;
}
