/* SPDX-License-Identifier: MIT */
/* comm_key.h: the keys of the hot functions' rows per process in a report or an export. By
 * process name (--sort process,sym): the first pid met of each name, so that the processes of
 * one name are one row per function; a process no event named keeps its own. By perf's comm
 * (--sort comm,sym): each sample's thread by its name as the sample came (its own, else its
 * process's), as perf report's comm key counts a thread's samples under the name it had then
 * (worker threads that named themselves apart, a process's samples before its exec under its
 * old name). By thread (--sort tid,sym): each sample's thread by its text as the sample came
 * ("process/thread (tid)"), which a thread that ended keeps. */
#ifndef ETWTOP_COMM_KEY_H
#define ETWTOP_COMM_KEY_H

#include <stdbool.h>
#include <stdint.h>

struct profile;

struct comm_keys {
        const struct switches *sw;
        uint32_t *ids; /* owned: open addressing by the name's hash, 0 free: pids, or comm ids */
        uint32_t mask, nr;
        enum comm_kind { COMM_PROCESS_NAME, COMM_PERF, COMM_THREAD } kind;
        char (*names)[80]; /* owned, COMM_PERF and COMM_THREAD: id i + 1's text */
        uint32_t nr_names, cap_names;
        bool is_linux; /* COMM_PERF: a thread of its process's id was sampled (idle: swapper) */
        /* the last thread keyed and its key, while its text stays */
        uint32_t last_tid, last_id;
};

/* The rows per process (COMM_PROCESS_NAME, COMM_PERF) or per thread (COMM_THREAD) of p's hot
   functions keyed so from now on (k lives as long as p's rows are built). Before the first
   sample. */
void comm_keys_use(struct comm_keys *k, struct profile *p, enum comm_kind kind);
/* The exports' stacks (stack_set_set_comm_key) named by perf's comm, as perf script names a
   sample's (stackcollapse-perf's first frame): k another than the hot functions'. */
struct stack_set;
void comm_keys_use_for_stacks(struct comm_keys *k, struct profile *p, struct stack_set *s);
void comm_keys_free(struct comm_keys *k);

#endif
