/* SPDX-License-Identifier: MIT */
/* feed.h: the consumer side of the screen and the reports: a trace (a running session in real
   time, or a file) read through OpenTrace/ProcessTrace and decoded into the model. A report
   reads and decodes on the caller's thread (feed_run); the screen reads on a thread of its own
   (feed_start), which only copies a session's buffers (a file's records) into a
   single-producer/single-consumer queue, and reads and decodes their records on its own thread
   (feed_drain, feed_catch_up): the model has one thread. */
#ifndef ETWTOP_FEED_H
#define ETWTOP_FEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "etw/evntrace.h"

struct profile;
struct etw_realtime_session_state; /* etw/etwtop_ext.h */
struct feed;

/* Opens the trace: a file (path), or the real-time session named logger_name. Events go to p
   (borrowed), on the thread that calls feed_run, or with is_threaded (feed_start) on the one
   that calls feed_drain and feed_catch_up. Returns 0, or -1 with err (the API's message). */
int feed_open(struct feed **out, struct profile *p, const char *path, const char *logger_name,
              bool is_threaded, char *err, size_t err_size);
/* Reads it on a thread of its own, which hands the records over through the queue (it waits
   while the queue is full: nothing is lost). 0 or -1. */
int feed_start(struct feed *f);
/* Reads it to its end on the caller's thread. Returns ProcessTrace's status. */
ULONG feed_run(struct feed *f);

/* A file read whole into p on the caller's thread, as --replay -b and --export read it:
   feed_open, feed_run; what could not be read goes to stderr. Only [from_s, to_s) seconds after
   its start count (has_ false: from the start, to the end; profile_set_window), what comes
   before and after still tells the model the trace's processes, threads and names. Returns 0,
   or -1 with err naming the file (and the trace's span when from_s is past its end); *out, when
   set, is the caller's to close either way. */
/* Seconds after a trace's start in its session ns (kevent time_ns), rounded. */
int64_t feed_seconds_ns(double s);

int feed_replay_file(struct feed **out, struct profile *p, const char *path, bool has_from,
                     double from_s, bool has_to, double to_s, char *err, size_t err_size);

/* Waits for the thread (a real-time session must have been stopped first) and closes. */
void feed_close(struct feed *f); /* NULL is fine */

/* ---- a feed_start's records, on the consumer's thread (the only one that touches p) ---- */

/* Decodes the records handed over into the model for budget_ns at most (the clock is read
   every few records), and at most the slice's count of records (feed_set_slice): a backlog is
   taken over several turns of the caller's loop. true when records are left. */
bool feed_drain(struct feed *f, int64_t budget_ns);
/* Records feed_drain decodes at most in one call (feed_open's setting), whatever its time
   budget says: it reads the clock only every 64 records, and the records of a burst are not
   alike (a stack's or an image load's cost many times a context switch's), so that a time
   budget alone let a turn of the screen's loop decode 13,000-25,000 records, 9-14 ms, before
   a frame or a key. bench_frame on net.4.5.2.x64.etl (bench/README.md, the feed's slice):
   4,096 records are 5-7 ms at the most; the loop, which does not sleep while there is a
   backlog, still empties the queue. */
#define FEED_SLICE_RECORDS 4096u
/* The records one feed_drain decodes at most (0: as many as its time budget allows). */
void feed_set_slice(struct feed *f, uint32_t max_records);
/* Records decoded from the queue so far (feed_drain, feed_catch_up). */
uint64_t feed_nr_decoded(const struct feed *f);
/* Decodes every record handed over until now, and none after: a frame's end. */
void feed_catch_up(struct feed *f);
/* A pollable fd (-1 for a feed_run feed): readable once there is something to drain or the
   thread ended, if feed_arm said the caller may sleep on it. */
int feed_fd(const struct feed *f);
/* Before a poll on feed_fd: false when there is work already (records, or the end not yet
   seen through feed_is_done), and the caller should not sleep. */
bool feed_arm(struct feed *f);
/* Records that could not be handed over (a record or a session's buffer larger than the queue's
   largest message, half of it: none from etwtop's reader, whose records are at most about 1 MiB,
   nor from a session, whose buffers are 1 MiB at most; or left when the feed was closed). */
uint64_t feed_nr_dropped(const struct feed *f);

/* The thread returned (the file read, the session stopped) and everything it handed over is
   decoded; its ProcessTrace status. On the consumer's thread. */
bool feed_is_done(struct feed *f, ULONG *status);
/* A live session's counters and settings generation as of the buffers handed over last
   (etw_realtime_get_session_state, into f), or NULL where none is known (a file, a session host
   that sends none). On the consumer's thread. */
const struct etw_realtime_session_state *feed_session_state(struct feed *f);
/* Buffers read so far, and a file's buffers in all (0 for a session). */
uint64_t feed_nr_buffers_read(const struct feed *f);
uint64_t feed_nr_buffers(const struct feed *f);
/* A file read to its end: what could not be read ("" when everything could), with the byte
   offset of the last damage first ("N damaged buffers skipped in part or whole, the last at byte
   offset X: ...", for a narrow status line) or last (for stderr). */
void feed_damage_text(const struct feed *f, bool is_where_first, char *buf, size_t size);
/* Why events the file describes were left undecoded (a manifest, expat missing), "" if none:
   read once the feed has ended. */
void feed_warning(const struct feed *f, char *buf, size_t size);

#endif
