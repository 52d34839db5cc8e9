/* SPDX-License-Identifier: MIT */
/* elf_build_id.h: the tree's one reader of an ELF file's GNU build-id (the NT_GNU_BUILD_ID note),
   from the file's bytes, without libelf: the live source names mapped files by it, the symbol
   store checks the files it finds against it, and the kernel's own is read from its notes. */
#ifndef ETWTOP_UTIL_ELF_BUILD_ID_H
#define ETWTOP_UTIL_ELF_BUILD_ID_H

#include <stddef.h>
#include <stdint.h>

/* The longest build-id kept (a SHA-1's 20 bytes; longer ones are cut). */
#define ELF_BUILD_ID_MAX 20

/* The GNU build-id in an ELF note area notes[0..len) (Elf_Nhdr: name size, descriptor size,
   type; name and descriptor each padded to 4 bytes), as /sys/kernel/notes or a PT_NOTE segment
   holds it: its first min(size, max) bytes copied to id, and that count returned; 0 when the
   area has no such note with a non-empty descriptor (a note that runs past len ends the search). */
uint32_t elf_build_id_from_notes(const void *notes, size_t len, uint8_t *id, uint32_t max);

/* The GNU build-id of the ELF file open at fd (read with pread, the offset left alone): its
   PT_NOTE segments (all program headers in one read, near the file's start: a live session
   looks up every mapped file at its start), else its SHT_NOTE sections (a relocatable object, a
   file whose segments do not hold it); 64- and 32-bit little-endian files. The bytes copied to
   id (at most max), 0 when the file is not such an ELF file or has no build-id. */
uint32_t elf_build_id_read_fd(int fd, uint8_t *id, uint32_t max);

/* elf_build_id_read_fd of the regular file at path (util/in_file.h's open: a FIFO or a device
   there is not read); 0 when it cannot be opened. */
uint32_t elf_build_id_read(const char *path, uint8_t *id, uint32_t max);

#endif
