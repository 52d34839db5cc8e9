/* SPDX-License-Identifier: MIT */
/* file_magic.c: owns the list of the file kinds whose first bytes are known and which no reader
   of etwtop reads. */
#include "util/file_magic.h"

#include <stdint.h>
#include <string.h>

struct magic {
        size_t at; /* byte offset of the magic */
        size_t len;
        const char *bytes;
        const char *what;
};

static const struct magic magics[] = {
        {0, 4, "PK\x03\x04", "a zip archive: give the trace inside it, unzipped"},
        {0, 4, "PK\x05\x06", "an empty zip archive"},
        {0, 2, "\x1f\x8b", "a gzip-compressed file: give it uncompressed (gunzip)"},
        {0, 4, "\x28\xb5\x2f\xfd", "a zstd-compressed file: give it uncompressed (unzstd)"},
        {0, 6,
         "\xfd"
         "7zXZ\x00",
         "an xz-compressed file: give it uncompressed (unxz)"},
        {0, 3, "BZh", "a bzip2-compressed file: give it uncompressed (bunzip2)"},
        {0, 6, "7z\xbc\xaf\x27\x1c", "a 7-Zip archive: give the trace inside it, unpacked"},
        {0, 4, "MSCF", "a Windows cabinet (.cab): give the trace inside it (expand, cabextract)"},
        {257, 5, "ustar", "a tar archive: give the trace inside it, unpacked"},
        {0, 4,
         "\x7f"
         "ELF",
         "an ELF file (a program or library)"},
        {0, 2, "MZ", "a Windows program or library (PE)"},
        {0, 8, "Nettrace", "a .NET EventPipe trace (.nettrace)"},
        {0, 8, "2ELIFREP",
         "a perf.data file of a big-endian machine (etwtop reads little-endian ones)"},
        {0, 8, "PERFFILE", "a perf.data file of perf's first format (before Linux 2.6.36)"},
        {0, 4, "\xc1\x1f\xfc\xc1", "an LTTng (CTF) trace stream"},
        {0, 5, "<?xml", "an XML file"},
};

const char *file_magic_foreign(const void *p, size_t n)
{
        const uint8_t *b = p;
        for (size_t i = 0; b && i < sizeof(magics) / sizeof(magics[0]); i++) {
                const struct magic *m = &magics[i];
                if (n >= m->at + m->len && memcmp(b + m->at, m->bytes, m->len) == 0)
                        return m->what;
        }
        return NULL;
}
