/* SPDX-License-Identifier: MIT */
/* view_text.c: owns how the views name waits (places in the code: the model's
   profile_place_text). */
#include "view_text.h"

#include <stdio.h>

#include "kevent.h"

void view_wait_text(uint8_t state, uint8_t reason, char *buf, size_t size)
{
        snprintf(buf, size, "%s/%s", kevent_thread_state_name(state),
                 kevent_wait_reason_name(reason));
}
