/* SPDX-License-Identifier: MIT */
/* event_stats.h: counts of events per type (provider, opcode, version), with their bytes. */
#ifndef ETWTOP_MODEL_EVENT_STATS_H
#define ETWTOP_MODEL_EVENT_STATS_H

#include <stdint.h>

#include "kevent.h"

struct event_stats_row {
        GUID provider;
        uint8_t opcode;
        uint8_t version;
        char name[160];       /* the decoder's name, or "" when it had none */
        const char *name_ptr; /* the name as the decoder last gave it (a quick compare) */
        uint64_t nr_events;
        uint64_t size_bytes; /* payload bytes */
};

struct event_stats;

struct event_stats *event_stats_new(void);
void event_stats_free(struct event_stats *st);

/* Counts one event of ev's type, with payload_bytes of payload. */
void event_stats_add(struct event_stats *st, const struct kevent *ev, uint32_t payload_bytes);

/* The rows, most frequent first (ties by name); valid until the next add or free. */
const struct event_stats_row *event_stats_rows(struct event_stats *st, uint32_t *nr_rows);

uint64_t event_stats_total(const struct event_stats *st);

#endif
