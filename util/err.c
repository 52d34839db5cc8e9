// SPDX-License-Identifier: MIT
/* err.c: the one helper that fills an error message (util/err.h). */
#include "util/err.h"

#include <stdio.h>
#include <string.h>

__attribute__((format(printf, 4, 0))) static int err_vset(struct err_msg *e, uint64_t offset,
                                                          int code, const char *fmt, va_list ap)
{
        if (e && e->msg[0] == '\0') {
                vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
                if (e->msg[0] == '\0')
                        snprintf(e->msg, sizeof(e->msg), "%s", strerror(code));
                e->offset = offset;
        }
        return -code;
}

int err_set(struct err_msg *e, uint64_t offset, int code, const char *fmt, ...)
{
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = err_vset(e, offset, code, fmt, ap);
        va_end(ap);
        return r;
}

void err_prefix(struct err_msg *e, const char *prefix, int max_prefix)
{
        if (!e)
                return;
        char was[sizeof(e->msg)];
        memcpy(was, e->msg, sizeof(was));
        int n = snprintf(e->msg, sizeof(e->msg), "%.*s", max_prefix, prefix);
        if (n > 0 && (size_t)n < sizeof(e->msg))
                snprintf(e->msg + n, sizeof(e->msg) - (size_t)n, "%.*s",
                         (int)(sizeof(e->msg) - (size_t)n - 1), was);
}

void err_reset(struct err_msg *e)
{
        if (e) {
                e->msg[0] = '\0';
                e->offset = ERR_NO_OFFSET;
        }
}

int err_is_set(const struct err_msg *e)
{
        return e && e->msg[0] != '\0';
}
