/* SPDX-License-Identifier: MIT */
/* sym_feed.h: keeps the symbol store's address spaces up to date from decoded events (process
   starts, image loads and unloads, etwtop's image identities, Windows DbgID records, recorded
   kernel symbols). Live and replay call it the same way, in the order events come: by their
   timestamps, the store keeps the address spaces right when a live session's CPU buffers come
   out of time order. */
#ifndef ETWTOP_MODEL_SYM_FEED_H
#define ETWTOP_MODEL_SYM_FEED_H

#include "kevent.h"
#include "symbols/symbols.h"

struct sym_feed;

struct sym_feed *sym_feed_new(struct sym_store *store); /* store: borrowed */
void sym_feed_free(struct sym_feed *f);

/* Takes the events that describe address spaces; ignores the others. */
void sym_feed_event(struct sym_feed *f, const struct kevent *ev);

#endif
