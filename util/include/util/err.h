/* SPDX-License-Identifier: MIT */
/* err.h: the tree's one error-message shape for bad input: what was wrong, and where (the byte
   offset in the file or buffer read), filled by one helper. */
#ifndef ETWTOP_UTIL_ERR_H
#define ETWTOP_UTIL_ERR_H

#include <stdarg.h>
#include <stdint.h>

#define ERR_NO_OFFSET UINT64_MAX

struct err_msg {
        uint64_t offset; /* ERR_NO_OFFSET when the problem is not at one place */
        char msg[256];
};

/* Fills e (when not NULL) with the message and its offset; the first message set stays, so
   the innermost cause is what is reported (err_reset() to start again). Returns -code, for
   `return err_set(e, off, EINVAL, "...")`. */
__attribute__((format(printf, 4, 5))) int err_set(struct err_msg *e, uint64_t offset, int code,
                                                  const char *fmt, ...);

/* Puts prefix (cut to max_prefix bytes) before e's message, which keeps its offset and is cut
   at the end where the two do not fit: "FILE: " before what a reader said of FILE's bytes. */
void err_prefix(struct err_msg *e, const char *prefix, int max_prefix);

/* Empties e. */
void err_reset(struct err_msg *e);

/* Whether e holds a message. */
int err_is_set(const struct err_msg *e);

#endif
