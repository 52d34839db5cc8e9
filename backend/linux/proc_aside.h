/* SPDX-License-Identifier: MIT */
/* proc_aside.h: the reads of another process's /proc files that the drain asks for (a new or
   exec'd process's command line and owner), made on a thread of their own and waited for a
   bounded time. The drain names the processes of a round of records before it converts them
   (proc_aside_prefetch), so that the reader reads them all on one wake-up while the drain
   converts, and the conversion's questions find their answers there: a question and its
   answer handed over one at a time cost two wake-ups of two threads each, four times the
   recorder's CPU under a loop of execs (bench/README.md, "Item 2: the command lines of new
   processes read ahead").

   Reading /proc/PID/cmdline takes PID's mmap_lock. A process that has just forked or exec'd
   maps its libraries under that lock; preempted while it holds it on a busy machine (an
   ordinary thread waits seconds for a CPU there), it held the real-time logger in the read for
   as long: 1.3 s in D state in __access_remote_vm, and 520,702 records dropped by the rings
   meanwhile (bench/README.md, "Item 1: the drain held up by what it waits for"). The answer
   is worth a short wait, never the drain. */
#ifndef ETWTOP_PROC_ASIDE_H
#define ETWTOP_PROC_ASIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How long the drain waits for an answer: the reader, at the logger's priority, answers in tens
   of microseconds unless the process's lock is held. */
#define PROC_ASIDE_WAIT_US 2000u

/* The longest command line an answer carries, its terminating 0 not counted. */
#define PROC_ASIDE_MAX_CMDLINE 4096u

/* The questions held at once, asked and answered (a power of 2): a round's new processes past
   it are asked for as their records come. */
#define PROC_ASIDE_QUEUE 64u

/* What the reader thread calls: pid's command line ("" when unknown) into cmdline (size bytes),
   and its owner's uid into *uid (PERF_CONV_NO_UID when unknown). May block. */
typedef void (*proc_aside_read_fn)(uint32_t pid, char *cmdline, size_t size, uint32_t *uid);

struct proc_aside;

/* Starts the reader thread (at the lowest real-time priority where that is permitted, like the
   logger; else an ordinary thread), which calls read for each question. wait_us: the longest
   wait of proc_aside_ask. 0 or -errno. */
int proc_aside_new(struct proc_aside **out, proc_aside_read_fn read, uint32_t wait_us);

/* Stops the reader thread and frees a. A reader blocked in a read is waited for. NULL is fine. */
void proc_aside_free(struct proc_aside *a);

/* Asks for pid's command line and owner: true with cmdline (size bytes) and *uid filled when the
   reader answered within the wait; false, nothing filled, when it did not, or when it is still
   on an earlier question that was not answered in time (the drain then does not wait at all).
   A pid asked for since the last proc_aside_forget (by proc_aside_prefetch, or by an earlier
   question) takes that answer: it was read after the records that ask were written. */
bool proc_aside_ask(struct proc_aside *a, uint32_t pid, char *cmdline, size_t size, uint32_t *uid);

/* Asks for the n pids (once each) without waiting, the reader woken once: the processes a
   round of records made or exec'd, named before the round is converted. Pids past the
   queue's room (the answers held keep theirs), and all of them while the reader is on a
   question that was not answered in time, are left for proc_aside_ask. */
void proc_aside_prefetch(struct proc_aside *a, const uint32_t *pids, uint32_t n);

/* Drops the answers held (the end of a round): the next question for a pid reads it again. */
void proc_aside_forget(struct proc_aside *a);

/* Questions not answered in time, and questions not asked because the reader was still on an
   earlier one; and the times the drain waited for an answer (woken by the reader). */
uint64_t proc_aside_nr_late(const struct proc_aside *a);
uint64_t proc_aside_nr_busy(const struct proc_aside *a);
uint64_t proc_aside_nr_waits(const struct proc_aside *a);

#endif
