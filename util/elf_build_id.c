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

/* The build-id in the note areas that nr headers of entsize bytes at file offset off describe:
   program headers (is_segments) of type PT_NOTE or section headers of type SHT_NOTE. One read
   for all the headers: a live session looks up every mapped file of the system at its start. */
static uint32_t notes_in(int fd, bool is64, bool is_segments, uint64_t off, uint32_t entsize,
                         uint32_t nr, uint8_t *id, uint32_t max)
{
        uint32_t need = is_segments ? (is64 ? 56 : 32) : (is64 ? 64 : 40);

        if (!off || entsize < need || nr == 0 || nr > MAX_HEADERS ||
            off > (uint64_t)INT64_MAX - (uint64_t)nr * entsize)
                return 0;
        size_t size = (size_t)nr * entsize;
        uint8_t *h = malloc(size); /* untrusted sizes: no memory is no build-id */
        if (!h)
                return 0;
        ssize_t got = pread(fd, h, size, (off_t)off);
        uint32_t n = 0;
        for (uint32_t i = 0; !n && got > 0 && (size_t)(i + 1) * entsize <= (size_t)got; i++) {
                const uint8_t *e = h + (size_t)i * entsize;
                uint64_t at, len;
                if (is_segments) {
                        if (get32(e) != PT_NOTE_TYPE)
                                continue;
                        at = is64 ? get64(e + 8) : get32(e + 4);
                        len = is64 ? get64(e + 32) : get32(e + 16);
                } else {
                        if (get32(e + 4) != SHT_NOTE_TYPE)
                                continue;
                        at = is64 ? get64(e + 24) : get32(e + 16);
                        len = is64 ? get64(e + 32) : get32(e + 20);
                }
                n = notes_at(fd, at, len, id, max);
        }
        free(h);
        return n;
}

uint32_t elf_build_id_read_fd(int fd, uint8_t *id, uint32_t max)
{
        uint8_t eh[64];

        if (pread(fd, eh, sizeof(eh), 0) < 52 || memcmp(eh, "\177ELF", 4) != 0 ||
            eh[5] != 1 /* ELFDATA2LSB */ || (eh[4] != 1 && eh[4] != 2))
                return 0;
        bool is64 = eh[4] == 2;
        uint64_t phoff = is64 ? get64(eh + 32) : get32(eh + 28);
        uint16_t phentsize = get16(eh + (is64 ? 54 : 42));
        uint32_t phnum = get16(eh + (is64 ? 56 : 44));
        uint64_t shoff = is64 ? get64(eh + 40) : get32(eh + 32);
        uint16_t shentsize = get16(eh + (is64 ? 58 : 46));
        uint32_t shnum = get16(eh + (is64 ? 60 : 48));

        /* the PT_NOTE segments (near the start of the file), else the SHT_NOTE sections (a
           file whose segments do not hold it: a relocatable object, a damaged header) */
        uint32_t n = notes_in(fd, is64, true, phoff, phentsize, phnum, id, max);
        return n ? n : notes_in(fd, is64, false, shoff, shentsize, shnum, id, max);
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
