/* SPDX-License-Identifier: MIT */
/* kevent_text.h: every decoded event's fields as name and text, the one place that says how a
   type's fields read: `--dump` lines, the events view's columns and `--export csv-events`. */
#ifndef ETWTOP_KEVENT_TEXT_H
#define ETWTOP_KEVENT_TEXT_H

#include <stddef.h>

#include "kevent.h"

/* How a field's text is written: a number (or a fixed word), a string from the payload (not
   sanitized: the caller does it, and a dump quotes it), a list ("3: 0x1 0x2 0x3"). */
enum kevent_text_kind {
        KEV_TEXT_NUMBER = 0,
        KEV_TEXT_STRING,
        KEV_TEXT_LIST,
};

/* Gets each field in order; name is static, value valid until fn returns. */
typedef void (*kevent_text_fn)(void *ctx, const char *name, enum kevent_text_kind kind,
                               const char *value);

/* Scratch text for the lists (stacks, LBR entries), kept between calls. */
struct kevent_text {
        char *buf; /* owned */
        size_t size;
        size_t max_list; /* a list longer than this ends in "..." (0: no limit, as --dump) */
};

/* Calls fn for every field of ev (its type's payload, then its PMC counters as "pmc"); none for
   KEV_OTHER. Out of memory aborts. */
void kevent_text_fields(const struct kevent *ev, struct kevent_text *scratch, kevent_text_fn fn,
                        void *ctx);
void kevent_text_fini(struct kevent_text *scratch); /* frees the scratch; it can be used again */

/* "{xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}" in buf (39 bytes and more). */
void kevent_text_guid(char *buf, size_t size, const GUID *g);

#endif
