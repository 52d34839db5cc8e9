/* SPDX-License-Identifier: MIT */
/* fuzz_fields_sink.h: the decoded-event sink of the fuzz targets for generically decoded events
 * (fuzz_tdh, fuzz_manifest): every name and field string touched, so ASan checks them. */
#ifndef ETWTOP_FUZZ_FIELDS_SINK_H
#define ETWTOP_FUZZ_FIELDS_SINK_H

#include <stdlib.h>
#include <string.h>

#include "kevent.h"

static volatile size_t fuzz_sink_bytes;

static void fuzz_sink(void *ctx, const struct kevent *ev)
{
        (void)ctx;
        fuzz_sink_bytes += strlen(ev->name);
        if (ev->type != KEV_FIELDS)
                return;
        /* the fields left to be asked for are decoded here, as a consumer's first ask does */
        const struct kevent_field *list;
        uint32_t nr = kevent_fields(ev, &list);
        if (nr > KEV_MAX_FIELDS || kevent_fields(ev, &list) != nr)
                abort();
        for (uint32_t i = 0; i < nr; i++)
                fuzz_sink_bytes += strlen(list[i].name) + strlen(list[i].s);
}

#endif
