/* SPDX-License-Identifier: MIT */
/* kallsyms_text.h: /proc/kallsyms read once while the kernel's state stays. The kernel formats
   the file anew for every reader (about 40 ms of system time for its 120,000 lines, the largest
   part of a live screen's start), and a live session in one process wanted it three times: the
   screen's symbols at the start, the logger's kernel symbols at the stop, and its blocking
   functions. */
#ifndef ETWTOP_UTIL_KALLSYMS_TEXT_H
#define ETWTOP_UTIL_KALLSYMS_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* The text of /proc/kallsyms, NUL-terminated, in a buffer the caller frees; its length in *len.
   NULL with errno set when it cannot be read. What a read gives stays good while the kernel's
   state does: the boot, kptr_restrict and the euid, the modules (names and load addresses in
   /proc/modules) and the BPF programs loaded. In that state a copy is taken: for root, the one in
   $ETWTOP_RUNTIME_DIR/kallsyms.cache (/run/etwtop without it), written by the last read of the
   file by any etwtop; else the process's own copy of its last read, kept only where that file
   could not be written. Only trampolines the kernel makes on the fly (ftrace's, kprobes') may be
   missing from a copy. When the file is read, between (when not
   NULL) runs after every 64 KiB (a logger empties its rings there). */
char *kallsyms_text_read(size_t *len, void (*between)(void *ctx), void *ctx);

/* The kernel's present state as kallsyms_text_read's copies are keyed by (owned): what is read
   or made from /proc/kallsyms in it stays good while the state does. */
char *kallsyms_text_state(void);

/* A file of root's cache (beside kallsyms.cache) that holds what was made from /proc/kallsyms
   in one state, mapped read-only: data is its body (8-byte aligned, len bytes), base and size
   the whole mapping (owned; kallsyms_cache_unmap). */
struct kallsyms_cache_map {
        const void *data;
        size_t len;
        void *base;
        size_t size;
};

/* Maps the cache file name (a file name, no directory) when kallsyms_cache_store wrote it in
   state, it is this user's and no one else may write it. False otherwise (no cache for other
   users, no such file, another state, damaged), with *m empty. */
bool kallsyms_cache_map(const char *name, const char *state, struct kallsyms_cache_map *m);

/* The text kallsyms_text_read would take from root's cache in state (kallsyms.cache), mapped
   read-only with its pages mapped at once (m's data and len; not NUL-terminated): a reader that
   only parses the text reads it in place, where a copy of its 5 MB into fresh pages cost 1,300
   page faults. False (m empty) where there is none in state, or it is not this user's. */
bool kallsyms_text_map(const char *state, struct kallsyms_cache_map *m);

/* Whether this process has root's cache (root, or a test's directory): for others
   kallsyms_cache_map finds nothing and kallsyms_cache_store writes nothing, so what would be made
   only to be stored is not made. */
bool kallsyms_cache_is_kept(void);

/* Unmaps *m and empties it (an empty one too). */
void kallsyms_cache_unmap(struct kallsyms_cache_map *m);

/* Writes the cache file name: data of len bytes made from /proc/kallsyms read in state (taken
   before the read, as kallsyms_text_read does). Nothing for other users or when it cannot be
   written: the next session makes it again. */
void kallsyms_cache_store(const char *name, const char *state, const void *data, size_t len);

/* One piece of a cache file's body. */
struct kallsyms_cache_part {
        const void *data; /* borrowed */
        size_t len;
};

/* As kallsyms_cache_store, the body in nr parts written one after the other: what is made of
   arrays held apart is stored without copying them into one buffer first (a copy of 6 MB is
   1,500 page faults). */
void kallsyms_cache_store_parts(const char *name, const char *state,
                                const struct kallsyms_cache_part *parts, size_t nr);

/* The next kallsyms_text_read does not take the process's copy (tests; a caller that saw the
   text change). */
void kallsyms_text_forget(void);

/* Tests: other files in place of /proc/kallsyms and /proc/modules (NULL: those), and with
   is_cache_dir the cache's directory (NULL: no cache); forgets the process's copy. */
void kallsyms_text_set_paths(const char *kallsyms, const char *modules, const char *cache_dir,
                             bool is_cache_dir);

#endif
