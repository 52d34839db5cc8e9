/* SPDX-License-Identifier: MIT */
/* build_id_scan.h: an image found by its build-id among the files of the --symbol-path
   folders, whatever its name: a binary copied beside the recording under another name than the
   one recorded (perf_b.data's "/elf" as perf_b.elf). Each folder is read once: its regular ELF
   files' build-ids are kept for the life of the process. */
#ifndef ETWTOP_SYMBOLS_BUILD_ID_SCAN_H
#define ETWTOP_SYMBOLS_BUILD_ID_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most files of one folder that are read (the rest are not looked at). */
#define BUILD_ID_SCAN_MAX_FILES 4096

/* A file directly in one of dirs (in their order) whose build-id is id (n bytes; the recorded
   id may be a shorter one padded with zeros, as perf pads lld's 8-byte ids), its path into out.
   Only regular files are opened (without blocking, never a FIFO or device), only ELF files'
   notes read. Thread-safe. */
bool build_id_scan_find(const char *const *dirs, uint32_t nr_dirs, const uint8_t *id, uint32_t n,
                        char *out, size_t size);

/* How many folders were read, and files opened, since the start (tests: each folder once). */
void build_id_scan_stats(uint32_t *nr_dirs_read, uint64_t *nr_files_opened);

#endif
