/* SPDX-License-Identifier: MIT */
/* merge_images.c: owns where the backend finds the images a trace names, in the directories of
   --symbol-path and _NT_SYMBOL_PATH and the local caches of their srv* and cache* entries:
   --merge's PE images for the DbgID_RSDS events it adds (etw_merge_set_codeview_lookup), flat
   (name.dll) or as a symbol store (name.dll/TTTTTTTTSSSS/name.dll), an image counting only with
   the trace's TimeDateStamp and SizeOfImage; a perf.data's ELF images for the walks of its
   DWARF stacks (etw_perf_data_set_image_lookup), as the symbols find them there: by build-id
   (DIR/.build-id/xx/rest), by file name, by the recorded path under the directory. */
#include "merge_images.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etw/etwtop_ext.h"
#include "symbols/pe_image.h"

#define MAX_DIRS 64

static char dir_text[8192];        /* the directories, NUL-separated */
static const char *dirs[MAX_DIRS]; /* into dir_text */
static uint32_t nr_dirs;
static size_t dir_len;

static void add_dir(const char *d, size_t n)
{
        if (!n || nr_dirs == MAX_DIRS || dir_len + n + 1 > sizeof(dir_text))
                return;
        memcpy(dir_text + dir_len, d, n);
        dir_text[dir_len + n] = '\0';
        dirs[nr_dirs++] = dir_text + dir_len;
        dir_len += n + 1;
}

/* Whether the n bytes at p are a URL (scheme://). */
static bool has_scheme(const char *p, size_t n)
{
        for (size_t i = 0; i + 3 <= n; i++)
                if (!memcmp(p + i, "://", 3))
                        return true;
        return false;
}

/* One _NT_SYMBOL_PATH element: a directory, or srv*CACHE*URL / cache*DIR / srv*DIR (the local
   parts: a URL is for the symbol server, not for images here). */
static void add_element(const char *e, size_t n)
{
        if ((n > 4 && !strncmp(e, "srv*", 4)) || (n > 6 && !strncmp(e, "cache*", 6))) {
                const char *p = e + (e[0] == 's' ? 4 : 6), *end = e + n;
                while (p < end) {
                        const char *star = memchr(p, '*', (size_t)(end - p));
                        size_t len = star ? (size_t)(star - p) : (size_t)(end - p);
                        if (!has_scheme(p, len))
                                add_dir(p, len);
                        p += len + 1;
                }
                return;
        }
        add_dir(e, n);
}

static void add_path(const char *path)
{
        for (const char *p = path; p && *p;) {
                const char *sep = strchr(p, ';');
                size_t n = sep ? (size_t)(sep - p) : strlen(p);
                add_element(p, n);
                p += n + (sep ? 1 : 0);
        }
}

/* Whether the file at path is the image: its stamp and size, and a CodeView record. */
static bool read_codeview(const char *path, uint32_t stamp, uint32_t size, struct etw_codeview *out)
{
        struct pe_identity id;
        struct err_msg err = {0};
        if (pe_image_read_file(path, &id, NULL, &err) < 0 || !id.has_codeview ||
            id.time_date_stamp != stamp || id.size_of_image != size)
                return false;
        memcpy(&out->Signature, id.pdb_guid, sizeof(id.pdb_guid));
        out->Age = id.pdb_age;
        snprintf(out->PdbFileName, sizeof(out->PdbFileName), "%s", id.pdb_name);
        return true;
}

static BOOL lookup(PVOID ctx, LPCSTR image_path, ULONG stamp, ULONG size, struct etw_codeview *out)
{
        (void)ctx;
        /* the trace's path is the Windows one (\Device\HarddiskVolume2\...\name.dll) */
        const char *name = image_path;
        for (const char *p = image_path; *p; p++)
                if (*p == '\\' || *p == '/')
                        name = p + 1;
        if (!*name)
                return FALSE;
        char path[4096];
        for (uint32_t i = 0; i < nr_dirs; i++) {
                snprintf(path, sizeof(path), "%s/%s", dirs[i], name);
                if (read_codeview(path, stamp, size, out))
                        return TRUE;
                snprintf(path, sizeof(path), "%s/%s/%08X%X/%s", dirs[i], name, (unsigned)stamp,
                         (unsigned)size, name);
                if (read_codeview(path, stamp, size, out))
                        return TRUE;
        }
        return FALSE;
}

static void dirs_set(const char *const *symbol_path, uint32_t nr)
{
        nr_dirs = 0;
        dir_len = 0;
        for (uint32_t i = 0; i < nr; i++)
                add_path(symbol_path[i]);
        add_path(getenv("_NT_SYMBOL_PATH"));
}

void merge_images_register(const char *const *symbol_path, uint32_t nr)
{
        dirs_set(symbol_path, nr);
        etw_merge_set_codeview_lookup(nr_dirs ? lookup : NULL, NULL);
}

/* The index-th place of an ELF image: three a directory (by build-id, by file name, by the
   recorded path under it), those that do not apply written as "" (not the image). */
static BOOL elf_lookup(PVOID ctx, LPCSTR image_path, const UCHAR *build_id, ULONG build_id_size,
                       ULONG index, LPSTR out, ULONG size)
{
        (void)ctx;
        if (index / 3 >= nr_dirs || !size)
                return FALSE;
        const char *dir = dirs[index / 3], *name = strrchr(image_path, '/');
        name = name ? name + 1 : image_path;
        out[0] = '\0';
        switch (index % 3) {
        case 0:
                if (build_id_size >= 2) {
                        int n = snprintf(out, size, "%s/.build-id/%02x/", dir, build_id[0]);
                        for (ULONG i = 1; i < build_id_size && n > 0 && (ULONG)n + 3 < size; i++)
                                n += snprintf(out + n, size - (ULONG)n, "%02x", build_id[i]);
                }
                break;
        case 1:
                if (*name)
                        snprintf(out, size, "%s/%s", dir, name);
                break;
        default:
                if (image_path[0] == '/')
                        snprintf(out, size, "%s%s", dir, image_path);
                break;
        }
        return TRUE;
}

void perf_images_register(const char *const *symbol_path, uint32_t nr)
{
        dirs_set(symbol_path, nr);
        etw_perf_data_set_image_lookup(nr_dirs ? elf_lookup : NULL, NULL);
}
