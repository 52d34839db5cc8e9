/* SPDX-License-Identifier: MIT */
/* module_name.c: owns how a module is named from its path and how module+offset reads. */
#include "symbols/module_name.h"

#include <inttypes.h>
#include <stdio.h>

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

size_t module_name_format_offset(char *buf, size_t size, const char *module, uint64_t offset)
{
        int n = snprintf(buf, size, "%s+0x%" PRIx64, module && *module ? module : "?", offset);
        return n < 0 ? 0 : (size_t)n;
}
