/* SPDX-License-Identifier: MIT */
/* fields_text.h: the decoder tests' view of a decoded event's fields as one string,
   "name=value;..." (strings as they are, hex as 0x.., signed and unsigned numbers). */
#ifndef ETWTOP_TESTS_FIELDS_TEXT_H
#define ETWTOP_TESTS_FIELDS_TEXT_H

#include <stdio.h>
#include <string.h>

#include "kevent.h"

/* Writes ev's fields (none unless KEV_FIELDS) into text; returns how many there are. */
static inline uint32_t fields_text(const struct kevent *ev, char *text, size_t size)
{
        const struct kevent_field *list = NULL;
        uint32_t nr = ev->type == KEV_FIELDS ? kevent_fields(ev, &list) : 0;

        text[0] = 0;
        for (uint32_t i = 0; i < nr; i++) {
                const struct kevent_field *f = &list[i];
                char v[512];
                if (f->kind == KEV_FIELD_STR)
                        snprintf(v, sizeof(v), "%s", f->s);
                else if (f->kind == KEV_FIELD_HEX)
                        snprintf(v, sizeof(v), "0x%llx", (unsigned long long)f->u);
                else if (f->kind == KEV_FIELD_INT)
                        snprintf(v, sizeof(v), "%lld", (long long)f->u);
                else
                        snprintf(v, sizeof(v), "%llu", (unsigned long long)f->u);
                size_t o = strlen(text);
                snprintf(text + o, size - o, "%s=%s;", f->name, v);
        }
        return nr;
}

#endif
