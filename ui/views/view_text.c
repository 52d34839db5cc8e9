/* SPDX-License-Identifier: MIT */
/* view_text.c: owns how the views name modules, places in the code and waits. */
#include "view_text.h"

#include <inttypes.h>
#include <stdio.h>

#include "kevent.h"

const char *view_module_name(struct sym_store *st, uint32_t module)
{
        struct sym_module_info info;
        if (!module || !sym_module_info(st, module, &info))
                return "[unknown]";
        return info.name;
}

void view_place_text(struct sym_store *st, struct sym_loc where, uint32_t function, uint64_t offset,
                     char *buf, size_t size)
{
        if (function)
                snprintf(buf, size, "%s!%s+0x%" PRIx64, view_module_name(st, where.module),
                         sym_name(st, function), offset);
        else if (where.module)
                snprintf(buf, size, "%s+0x%" PRIx64, view_module_name(st, where.module), where.rel);
        else
                snprintf(buf, size, "0x%" PRIx64, where.rel);
}

void view_wait_text(uint8_t state, uint8_t reason, char *buf, size_t size)
{
        snprintf(buf, size, "%s/%s", kevent_thread_state_name(state),
                 kevent_wait_reason_name(reason));
}
