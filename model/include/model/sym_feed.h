/* SPDX-License-Identifier: MIT */
/* sym_feed.h: keeps the symbol store's address spaces up to date from decoded events (process
   starts, image loads and unloads, etwtop's image identities, Windows DbgID records, recorded
   kernel symbols). Live and replay call it the same way, in the order events come: by their
   timestamps, the store keeps the address spaces right when a live session's CPU buffers come
   out of time order. */
#ifndef ETWTOP_MODEL_SYM_FEED_H
#define ETWTOP_MODEL_SYM_FEED_H

#include <stdbool.h>

#include "kevent.h"
#include "symbols/sym_types.h"

struct sym_store;

struct sym_feed;

struct sym_feed *sym_feed_new(struct sym_store *store); /* store: borrowed */
void sym_feed_free(struct sym_feed *f);

/* Takes the events that describe address spaces; ignores the others. */
void sym_feed_event(struct sym_feed *f, const struct kevent *ev);
/* A recording read to its end: when it recorded no kernel symbols (cut short before the ones
   written at its end) and the running kernel is the one it recorded (the same build-id), the
   store takes the running kernel's (/proc/kallsyms). Once; nothing for a live session, whose
   kernel is the running one anyway, nor for a trace that describes no kernel image. True when
   the store took a kernel's symbols so: the kernel's addresses may now place where they did
   not (profile_end tells the places that were looked at before). */
bool sym_feed_end(struct sym_feed *f);

#endif
