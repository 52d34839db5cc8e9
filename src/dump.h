/* SPDX-License-Identifier: MIT */
/* dump.h: `etwtop --dump`: every event of one or more .etl files as text, in time order. */
#ifndef ETWTOP_DUMP_H
#define ETWTOP_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dump_options {
        const char *const *paths; /* borrowed */
        uint32_t nr_paths;
        int fd;              /* where the text goes */
        bool is_totals_only; /* header and totals, no event lines */
        /* --from/--to: only events in [from_s, to_s] seconds after the earliest file's start,
           through ProcessTrace's StartTime and EndTime */
        bool has_from, has_to;
        double from_s, to_s;
};

/* Writes the dump. Returns 0, or -1 with a message naming the problem in err. */
int dump_run(const struct dump_options *opts, char *err, size_t err_size);

#endif
