/* SPDX-License-Identifier: MIT */
/* comm_key.h: the process key of the hot functions' rows per process in a report or an export
 * (--sort comm,sym): the first pid met of each process name, as perf report's comm key merges
 * the processes of one name; a process no event named keeps its own. */
#ifndef ETWTOP_COMM_KEY_H
#define ETWTOP_COMM_KEY_H

#include <stdint.h>

struct profile;

struct comm_keys {
        const struct switches *sw;
        uint32_t *pids; /* owned: open addressing by the name's hash, 0 free */
        uint32_t mask, nr;
};

/* The rows per process of p's hot functions keyed by process name from now on (k lives as long
   as p's rows are built). */
void comm_keys_use(struct comm_keys *k, struct profile *p);
void comm_keys_free(struct comm_keys *k);

#endif
