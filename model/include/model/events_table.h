/* SPDX-License-Identifier: MIT */
/* events_table.h: the generic events table (WPA's Generic Events, PerfView's Events view): every
   event type (provider, opcode, version, name) with its count, the counts per process and
   thread, and a bounded store of each type's recent events with their fields as text. */
#ifndef ETWTOP_MODEL_EVENTS_TABLE_H
#define ETWTOP_MODEL_EVENTS_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "kevent.h"

/* The caps (doc/etwtop.1, MEMORY): the recent events kept per type, the bytes of their text in
   all (past it, the oldest events go, the type's own first), the text of one event (longer
   fields are cut, ending in "..."), the types and the (type, process, thread) rows counted
   separately (past them, counted in the table's nr_no_room). A type that keeps its 1000 takes
   one more event per 10 ms of the trace's time at most (a type that comes faster is thinned,
   and costs no formatting for the others: a live session's stacks and samples, whose text
   (a stack's frames in hex) cost 4,400 instructions each, 2.5% of a busy live screen's CPU at
   one per millisecond; its last 1000 then span 10 s). */
#define EVENTS_TABLE_MAX_RECENT      1000u
#define EVENTS_TABLE_THIN_NS         10000000
#define EVENTS_TABLE_MAX_BYTES       (32u << 20)
#define EVENTS_TABLE_MAX_EVENT_BYTES 2048u
#define EVENTS_TABLE_MAX_TYPES       16384u
#define EVENTS_TABLE_MAX_GROUPS      262144u
/* A live session's rows of processes that ended fold (events_table_set_fold_exited), once the
   rows are many (EVENTS_TABLE_FOLD_MIN), into
   one row a type whose process and thread are EVENTS_TABLE_EXITED ("[exited processes]"): the
   rows follow the processes that run, not every process that ever ran (a loop of short
   processes filled the 262144 in 12 minutes, and the processes after them were counted in no
   row). A process's rows stay for EVENTS_TABLE_EXITED_GRACE_NS of the trace after its end: its
   late events find them. The ends waiting to fold are EVENTS_TABLE_MAX_ENDED at most: past
   them, the rows fold at once. */
#define EVENTS_TABLE_FOLD_MIN        4096u
#define EVENTS_TABLE_EXITED          0xFFFFFFFEu
#define EVENTS_TABLE_EXITED_GRACE_NS 2000000000
#define EVENTS_TABLE_MAX_ENDED       16384u

struct events_type {
        uint32_t id; /* stable for the table's life: the order types first came in */
        GUID provider;
        uint8_t opcode;
        uint8_t version;
        char name[160]; /* "DiskIo/Read", or "{guid}/opN" when the decoder named none */
        uint64_t nr_events;
        uint64_t nr_dropped; /* its events the store no longer holds (the caps) */
        uint32_t nr_stored;  /* its events the store holds, at most EVENTS_TABLE_MAX_RECENT */
};

/* A type's count in one process (tid AGG_ALL-like 0xFFFFFFFF when grouped by process); pid and
   tid EVENTS_TABLE_EXITED: the processes that ended, folded. */
struct events_group {
        uint32_t type_id;
        uint32_t pid; /* 0xFFFFFFFF: unknown */
        uint32_t tid; /* 0xFFFFFFFF: every thread of the process (by process) or unknown */
        uint64_t nr_events;
};

/* One stored event: its header and its fields as "name\0value\0" pairs in text. */
struct events_record {
        uint64_t seq; /* its place among the events stored since the table began (1 first) */
        int64_t time_ns;
        uint32_t cpu, pid, tid;
        uint32_t nr_fields;
        uint32_t size; /* of text */
        char text[];
};

struct events_table;

struct events_table *events_table_new(void);
void events_table_free(struct events_table *et); /* NULL is fine */

/* The recent events kept per type from now on, at most EVENTS_TABLE_MAX_RECENT (0: counts
   only, nothing copied: -b and the exports). */
void events_table_set_max_recent(struct events_table *et, uint32_t n);
/* The counts by process and thread (events_table_groups) kept or not from now on (-b prints
   the types' counts alone: no group is looked up per event). Not kept, events_table_groups
   answers none and events_table_nr_no_room counts only the events past the types' cap. */
void events_table_set_groups(struct events_table *et, bool is_kept);

/* Whether the rows of processes that ended fold into EVENTS_TABLE_EXITED rows from now on (a
   live screen's: its rows follow the processes that run); not by default (a trace's rows keep
   every process, as WPA's, up to EVENTS_TABLE_MAX_GROUPS). */
void events_table_set_fold_exited(struct events_table *et, bool is_folded);

/* Counts ev (a stack rebuilt from a stack key is its definition's record: not counted) and
   keeps its fields. Its strings are copied. */
void events_table_add(struct events_table *et, const struct kevent *ev);
/* Every count and stored event starts over (the types stay known, with 0). */
void events_table_reset(struct events_table *et);

/* The types known: their ids are 0 to this - 1. */
uint32_t events_table_nr_types(const struct events_table *et);
/* The type of id, NULL when none; valid until the next add. */
const struct events_type *events_table_type(const struct events_table *et, uint32_t id);
/* The counts per type and process (is_by_thread false) or per type, process and thread, sorted
   by type id then pid then tid; valid until the next call or add. */
const struct events_group *events_table_groups(struct events_table *et, bool is_by_thread,
                                               uint32_t *nr);
/* The i-th stored event of type id, oldest first (i < nr_stored); NULL when none. */
const struct events_record *events_table_record(const struct events_table *et, uint32_t id,
                                                uint32_t i);
/* The field after *pos (start with 0) of r: true with its name and value, false past the last. */
bool events_record_field(const struct events_record *r, uint32_t *pos, const char **name,
                         const char **value);

uint64_t events_table_total(const struct events_table *et);
/* The events counted of one decoded kind (KEV_SAMPLE, KEV_CSWITCH ...). */
uint64_t events_table_nr_kind(const struct events_table *et, enum kevent_type kind);
/* Whether the events counted have neither samples nor context switches (a user-mode provider's
   trace, a boot trace): what the screen opens on then. */
bool events_table_is_events_only(const struct events_table *et);
/* The events counted in no type or group row of their own (the caps), and the stored events
   dropped, in all. */
uint64_t events_table_nr_no_room(const struct events_table *et);
uint64_t events_table_nr_dropped(const struct events_table *et);
/* The bytes of text the store holds. */
uint64_t events_table_bytes(const struct events_table *et);

#endif
