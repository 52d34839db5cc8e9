/* SPDX-License-Identifier: MIT */
/* kdecoder.h: the decoder's interface, EVENT_RECORD -> struct kevent (backend/decode): for
   the backend and src/, not for the model, which reads decoded events only (kevent.h). */
#ifndef ETWTOP_KDECODER_H
#define ETWTOP_KDECODER_H

#include <stdbool.h>
#include <stdint.h>

#include "etw/evntcons.h"
#include "kevent.h"

typedef void (*kevent_sink_fn)(void *ctx, const struct kevent *ev);

struct kdecoder;

/* A decoder keeps what decoding needs across events: the session clock (from the header
   event), the thread -> process table for the pid fix-ups, and stack-cache references waiting
   for their definitions. is_raw_timestamp: the records carry raw clock values
   (PROCESS_TRACE_MODE_RAW_TIMESTAMP) rather than FILETIME. */
struct kdecoder *kdecoder_new(bool is_raw_timestamp);
void kdecoder_free(struct kdecoder *d);

/* Decodes one record and calls sink once for it, and once more for every stack it completes
   (a stack-cache definition resolving earlier references emits KEV_STACK events with
   is_from_key). Returns 0, or -EBADMSG when the payload is shorter than its layout needs (the
   event is still delivered as KEV_OTHER with the common fields). */
int kdecoder_decode(struct kdecoder *d, const EVENT_RECORD *rec, kevent_sink_fn sink, void *ctx);

/* Whether rec is a timer sample (PerfInfo/SampledProfile), and then its address, thread and the
   thread's process as the decoder knows it now (KEV_NONE: not known): a look ahead at a record
   not decoded yet (its memory asked for before it is counted), which changes nothing. */
bool kdecoder_peek_sample(struct kdecoder *d, const EVENT_RECORD *rec, uint64_t *ip, uint32_t *tid,
                          uint32_t *pid);

/* A stack-key definition read ahead (a file's first pass: the key's Delete or Rundown event at
   def_timestamp, a record timestamp as the decoder's records carry). A reference to key at
   time t then resolves at once, as its record is decoded, from the first definition of key at
   or after t (a key is handed out again only after its Delete), instead of when its
   definition comes, often at the end of the trace (the rundown), long after its sample. */
void kdecoder_preload_stack_key(struct kdecoder *d, uint64_t key, uint64_t def_timestamp,
                                const uint64_t *frames, uint32_t nr_frames);

/* Counters kept by the decoder. */
struct kdecoder_stats {
        uint64_t nr_decoded;
        uint64_t nr_other;
        uint64_t nr_short; /* payload too short for its layout */
        uint64_t nr_stack_refs_pending;
        uint64_t nr_stack_refs_resolved;
        char warning[256]; /* why a manifest the trace carries was not read (expat missing) */
};
void kdecoder_get_stats(const struct kdecoder *d, struct kdecoder_stats *st);

/* The decoder's name of a kernel provider: "Process", "PerfInfo"... or NULL. */
const char *kevent_provider_name(const GUID *guid);

#endif
