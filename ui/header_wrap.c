/* SPDX-License-Identifier: MIT */
/* header_wrap.c: owns folding the header's lines at the screen's width (pure: no curses). */
#include <stdbool.h>
#include <string.h>

#include "ui/header_wrap.h"

#define CONTINUED "  "

/* Where a row of at most room bytes of s should end (s longer than room). */
static size_t break_at(const char *s, size_t room)
{
        static const char *const seps[] = {"   ", ", ", "; ", " "};

        for (size_t k = 0; k < sizeof(seps) / sizeof(seps[0]); k++) {
                size_t n = strlen(seps[k]), best = 0;
                for (size_t i = 1; i + n <= room + n && i <= room; i++)
                        if (strncmp(s + i, seps[k], n) == 0)
                                best = k == 1 || k == 2 ? i + 1 : i; /* keep ',' or ';' */
                if (best)
                        return best;
        }
        return room;
}

uint32_t ui_header_wrap(const char *const *lines, uint32_t nr, int width,
                        char (*out)[UI_HEADER_ROW], uint32_t max)
{
        uint32_t rows = 0;
        size_t w = width < 8 ? 8 : (size_t)width;

        if (w > UI_HEADER_ROW - 1)
                w = UI_HEADER_ROW - 1;
        for (uint32_t i = 0; i < nr && rows < max; i++) {
                const char *s = lines[i];
                bool is_first = true;

                do {
                        size_t indent = is_first ? 0 : strlen(CONTINUED);
                        size_t room = w - indent, len = strlen(s), n = len;

                        if (len > room)
                                n = break_at(s, room);
                        memcpy(out[rows], CONTINUED, indent);
                        memcpy(out[rows] + indent, s, n);
                        out[rows][indent + n] = '\0';
                        rows++;
                        s += n;
                        while (*s == ' ')
                                s++;
                        is_first = false;
                } while (*s && rows < max);
        }
        return rows;
}
