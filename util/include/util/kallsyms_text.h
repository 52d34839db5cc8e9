/* SPDX-License-Identifier: MIT */
/* kallsyms_text.h: /proc/kallsyms read once for the whole process. The kernel formats the file
   anew for every reader (about 40 ms of system time for its 120,000 lines), and a live session
   in one process wanted it three times: the screen's symbols at the start, the logger's kernel
   symbols at the stop, and its blocking functions. */
#ifndef ETWTOP_UTIL_KALLSYMS_TEXT_H
#define ETWTOP_UTIL_KALLSYMS_TEXT_H

#include <stddef.h>

/* The text of /proc/kallsyms, NUL-terminated, in a buffer the caller frees; its length in *len.
   NULL with errno set when it cannot be read. A text read less than a minute before, while the
   kernel's modules (the names and addresses of /proc/modules) stayed the same, is a copy of that
   read. When the file is read, between (when not NULL) runs after every 64 KiB (a logger empties
   its rings there). */
char *kallsyms_text_read(size_t *len, void (*between)(void *ctx), void *ctx);

/* The next kallsyms_text_read reads the file again (tests; a caller that saw it change). */
void kallsyms_text_forget(void);

/* Tests: other files in place of /proc/kallsyms and /proc/modules (NULL: those); forgets. */
void kallsyms_text_set_paths(const char *kallsyms, const char *modules);

#endif
