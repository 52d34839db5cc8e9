/* SPDX-License-Identifier: MIT */
/* pgo_format.h (internal to src/export/): the text the profile-guided optimizers read, one line
   at a time: BOLT's fdata (what perf2bolt writes, llvm-bolt -data reads) and the perf script
   form llvm-profgen reads (`perf script -F ip,brstack --show-mmap-events`). No I/O: the writers
   (bolt.c, profgen.c) put these lines out; tests/unit/test_pgo_format.c checks them. */
#ifndef ETWTOP_EXPORT_PGO_FORMAT_H
#define ETWTOP_EXPORT_PGO_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* A place as fdata names it: a function of the binary (its name as BOLT knows the function)
   and the offset from its first byte; name NULL: outside every function of the binary. */
struct pgo_fdata_loc {
        const char *name;
        uint64_t offset;
};

/* BOLT's name of a function: the symbol's own for a global one; for a local one (STB_LOCAL),
   "name/N", N counting the local symbols of that name in address order from 1 (BOLT's
   NameResolver, as llvm-bolt's -print-cfg shows: "helper/1"). rank 0: global. Writes at most
   size bytes with the NUL; returns the length it needed, as snprintf does. */
size_t pgo_bolt_name(char *buf, size_t size, const char *symbol, uint32_t rank);

/* One fdata branch line, with its newline: "1 NAME OFF 1 NAME OFF MISPREDS COUNT", a place
   outside the binary's functions as "0 [unknown] 0"; NAME escaped as BOLT escapes it (a space
   or backslash gets a backslash before it); offsets in lower-case hex without 0x, counts in
   decimal. Returns the length (it needed, as snprintf). */
size_t pgo_fdata_branch(char *buf, size_t size, const struct pgo_fdata_loc *from,
                        const struct pgo_fdata_loc *to, uint64_t mispreds, uint64_t count);
/* One fdata sample line of the no_lbr form: "1 NAME OFF COUNT" and a newline. */
size_t pgo_fdata_sample(char *buf, size_t size, const struct pgo_fdata_loc *at, uint64_t count);

/* perf script's line for an executable mapping (PERF_RECORD_MMAP2), as `perf script
   --show-mmap-events -F ip,brstack` prints it and llvm-profgen parses it:
   "PERF_RECORD_MMAP2 PID/TID: [0xBASE(0xSIZE) @ PGOFF 00:00 0 0]: r-xp PATH" and a newline;
   PGOFF "0" or "0x..." as perf's %#lx; device and inode unknown (0). */
size_t pgo_perf_mmap2(char *buf, size_t size, uint32_t pid, uint32_t tid, uint64_t base,
                      uint64_t len, uint64_t pgoff, const char *path);
/* The start of a sample's line: its ip as perf prints it (" %16lx"), or 17 spaces when unknown
   (llvm-profgen skips a leading ip and reads the branches after it). */
size_t pgo_perf_ip(char *buf, size_t size, uint64_t ip, int has_ip);
/* One branch of a sample's brstack as perf script prints it, " 0xFROM/0xTO/P/-/-/0/ ": from
   info, the bits of perf's struct perf_branch_entry after its addresses (mispredicted bit 0,
   predicted 1, in transaction 2, abort 3, cycles 4-19), its prediction (M, P or - where
   unknown), X, A and its cycles (0: unknown); 0 where the record says none of them (a Windows
   LBR record). */
size_t pgo_perf_branch(char *buf, size_t size, uint64_t from, uint64_t to, uint64_t info);
/* One frame of a sample's call stack as perf script prints it with -g: "\t%16lx" and a
   newline (a hybrid sample: "\n", its frames innermost first, then its brstack line). */
size_t pgo_perf_frame(char *buf, size_t size, uint64_t address);

#endif
