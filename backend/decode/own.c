/* SPDX-License-Identifier: MIT */
/* own.c: owns the decoding of etwtop's own events (doc/etwtop-provider.md),
   told apart by their EVENT_DESCRIPTOR Id. A payload longer than the version known is fine:
   fields are only ever appended. */
#include <errno.h>
#include <string.h>

#include "kdecoder_int.h"

/* etwtop's own events (doc/etwtop-provider.md), by their EVENT_DESCRIPTOR Id. A payload longer
   than the version known is fine: fields are only ever appended. */
const char *own_event_name(uint16_t id)
{
        switch (id) {
        case 1: return "etwtop/ImageIdentity";
        case 2: return "etwtop/KernelSymbol";
        case 3: return "etwtop/EventsLost";
        case 4: return "etwtop/SessionCpu";
        case 5: return "etwtop/UnwindStats";
        case 6: return "etwtop/RecordsNotShown";
        default: return "etwtop/Unknown";
        }
}

int own_decode(struct kdecoder *d, struct kevent *ev, const struct payload *pl, uint16_t id)
{
        size_t next;
        switch (id) {
        case 1:
                KEV_CLEAR(ev, image_identity);
                if (pl->len < 52)
                        return -EBADMSG;
                ev->type = KEV_IMAGE_IDENTITY;
                ev->image_identity.base = le_get64(pl->p);
                ev->image_identity.size = le_get64(pl->p + 8);
                ev->image_identity.file_offset = le_get64(pl->p + 16);
                ev->image_identity.pid = le_get32(pl->p + 24);
                ev->image_identity.build_id_size = pl->p[28] > 20 ? 20 : pl->p[28];
                ev->image_identity.flags = le_get16(pl->p + 30);
                ev->image_identity.build_id = pl->p + 32;
                ev->image_identity.path = kstr_ansi(d, pl, 52, &next);
                ev->pid = ev->image_identity.pid;
                return 0;
        case 2:
                KEV_CLEAR(ev, kernel_symbol);
                if (pl->len < 17)
                        return -EBADMSG;
                ev->type = KEV_KERNEL_SYMBOL;
                ev->kernel_symbol.addr = le_get64(pl->p);
                ev->kernel_symbol.size = le_get64(pl->p + 8);
                ev->kernel_symbol.name = kstr_ansi(d, pl, 16, &next);
                ev->kernel_symbol.module = kstr_ansi(d, pl, next, &next);
                return 0;
        case 3:
                KEV_CLEAR(ev, events_lost);
                if (pl->len < 16)
                        return -EBADMSG;
                ev->type = KEV_EVENTS_LOST;
                ev->events_lost.cpu = le_get32(pl->p);
                ev->events_lost.reason = le_get32(pl->p + 4);
                ev->events_lost.count = le_get64(pl->p + 8);
                return 0;
        case 4:
                KEV_CLEAR(ev, session_cpu);
                if (pl->len < 16)
                        return -EBADMSG;
                ev->type = KEV_SESSION_CPU;
                ev->session_cpu.cpu = le_get32(pl->p);
                ev->session_cpu.nr_cpus = le_get32(pl->p + 4);
                ev->session_cpu.nr_online = le_get32(pl->p + 8);
                ev->session_cpu.traced_pid = le_get32(pl->p + 12);
                return 0;
        case 5:
                KEV_CLEAR(ev, unwind_stats);
                if (pl->len < 16 + 8 * (KEV_NR_UNWIND_STOPS + 3))
                        return -EBADMSG;
                ev->type = KEV_UNWIND_STATS;
                ev->unwind_stats.mode = le_get32(pl->p);
                ev->unwind_stats.stack_copy_bytes = le_get32(pl->p + 4);
                ev->unwind_stats.nr_walks = le_get64(pl->p + 8);
                for (uint32_t i = 0; i < KEV_NR_UNWIND_STOPS; i++)
                        ev->unwind_stats.nr_by_stop[i] = le_get64(pl->p + 16 + 8 * i);
                {
                        const uint8_t *q = pl->p + 16 + 8 * KEV_NR_UNWIND_STOPS;
                        ev->unwind_stats.nr_fp_chains = le_get64(q);
                        ev->unwind_stats.nr_frames = le_get64(q + 8);
                        ev->unwind_stats.nr_fp_frames = le_get64(q + 16);
                }
                return 0;
        case 6:
                KEV_CLEAR(ev, records_not_shown);
                if (pl->len < 17)
                        return -EBADMSG;
                ev->type = KEV_RECORDS_NOT_SHOWN;
                ev->records_not_shown.type = le_get32(pl->p);
                ev->records_not_shown.count = le_get64(pl->p + 8);
                ev->records_not_shown.name = kstr_ansi(d, pl, 16, &next);
                return 0;
        default: return KEV_NO_LAYOUT;
        }
}
