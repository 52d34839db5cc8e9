/* SPDX-License-Identifier: MIT */
/* elf_build_id.c: owns reading the GNU build-id note of an ELF file or note area
   (util/elf_build_id.h). Every size and offset read from the file is checked before use. */
#include "util/elf_build_id.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/in_file.h"

#define NT_GNU_BUILD_ID_TYPE 3
#define PT_NOTE_TYPE         4
#define SHT_NOTE_TYPE        7
#define MAX_NOTES_BYTES      65536 /* a note area larger than this is not read */
#define MAX_HEADERS          4096  /* section or program headers looked at */

static uint32_t get32(const uint8_t *p)
{
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
        return get32(p) | (uint64_t)get32(p + 4) << 32;
}

static uint16_t get16(const uint8_t *p)
{
        return (uint16_t)(p[0] | p[1] << 8);
}

uint32_t elf_build_id_from_notes(const void *notes, size_t len, uint8_t *id, uint32_t max)
{
        const uint8_t *b = notes;

        for (size_t p = 0; p + 12 <= len;) {
                uint32_t namesz = get32(b + p), descsz = get32(b + p + 4), type = get32(b + p + 8);
                size_t name_end = p + 12 + (((size_t)namesz + 3u) & ~(size_t)3u);
                if (name_end > len || descsz > len - name_end)
                        break;
                if (type == NT_GNU_BUILD_ID_TYPE && namesz == 4 &&
                    memcmp(b + p + 12, "GNU", 4) == 0 && descsz) {
                        uint32_t n = descsz < max ? descsz : max;
                        memcpy(id, b + name_end, n);
                        return n;
                }
                p = name_end + (((size_t)descsz + 3u) & ~(size_t)3u);
        }
        return 0;
}

/* The build-id in the note area at file offset off, size bytes. */
static uint32_t notes_at(int fd, uint64_t off, uint64_t size, uint8_t *id, uint32_t max)
{
        if (size < 12 || size > MAX_NOTES_BYTES || off > (uint64_t)INT64_MAX - size)
                return 0;
        /* the file is untrusted: no memory for its notes is no build-id, not an abort */
        uint8_t *buf = malloc((size_t)size);
        if (!buf)
                return 0;
        ssize_t got = pread(fd, buf, (size_t)size, (off_t)off);
        uint32_t n = got >= 12 ? elf_build_id_from_notes(buf, (size_t)got, id, max) : 0;
        free(buf);
        return n;
}

uint32_t elf_build_id_read_fd(int fd, uint8_t *id, uint32_t max)
{
        uint8_t eh[64];

        if (pread(fd, eh, sizeof(eh), 0) < 52 || memcmp(eh, "\177ELF", 4) != 0 ||
            eh[5] != 1 /* ELFDATA2LSB */ || (eh[4] != 1 && eh[4] != 2))
                return 0;
        bool is64 = eh[4] == 2;
        uint64_t shoff = is64 ? get64(eh + 40) : get32(eh + 32);
        uint16_t shentsize = get16(eh + (is64 ? 58 : 46));
        uint32_t shnum = get16(eh + (is64 ? 60 : 48));
        uint64_t phoff = is64 ? get64(eh + 32) : get32(eh + 28);
        uint16_t phentsize = get16(eh + (is64 ? 54 : 42));
        uint32_t phnum = get16(eh + (is64 ? 56 : 44));
        uint8_t h[64];

        /* the sections of type SHT_NOTE */
        if (shoff && shentsize >= (is64 ? 64 : 40) && shnum <= MAX_HEADERS) {
                for (uint32_t i = 0; i < shnum; i++) {
                        uint64_t at = shoff + (uint64_t)i * shentsize;
                        if (pread(fd, h, is64 ? 64 : 40, (off_t)at) != (is64 ? 64 : 40))
                                break;
                        if (get32(h + 4) != SHT_NOTE_TYPE)
                                continue;
                        uint64_t off = is64 ? get64(h + 24) : get32(h + 16);
                        uint64_t size = is64 ? get64(h + 32) : get32(h + 20);
                        uint32_t n = notes_at(fd, off, size, id, max);
                        if (n)
                                return n;
                }
        }
        /* else the PT_NOTE segments */
        if (phoff && phentsize >= (is64 ? 56 : 32) && phnum <= MAX_HEADERS) {
                for (uint32_t i = 0; i < phnum; i++) {
                        uint64_t at = phoff + (uint64_t)i * phentsize;
                        if (pread(fd, h, is64 ? 56 : 32, (off_t)at) != (is64 ? 56 : 32))
                                break;
                        if (get32(h) != PT_NOTE_TYPE)
                                continue;
                        uint64_t off = is64 ? get64(h + 8) : get32(h + 4);
                        uint64_t size = is64 ? get64(h + 32) : get32(h + 16);
                        uint32_t n = notes_at(fd, off, size, id, max);
                        if (n)
                                return n;
                }
        }
        return 0;
}

uint32_t elf_build_id_read(const char *path, uint8_t *id, uint32_t max)
{
        int fd = in_file_open(path, 0, NULL);

        if (fd < 0)
                return 0;
        uint32_t n = elf_build_id_read_fd(fd, id, max);
        close(fd);
        return n;
}
