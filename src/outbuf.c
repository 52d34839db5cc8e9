/* SPDX-License-Identifier: MIT */
/* outbuf.c: owns fast text formatting for the dump, where printf per field would dominate. */
#include "outbuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/xalloc.h"

void outbuf_init(struct outbuf *o, int fd)
{
        o->fd = fd;
        o->error = 0;
        o->len = 0;
        o->is_holding = false;
        o->held = NULL;
        o->nr_held = o->held_cap = 0;
}

static void write_all(struct outbuf *o, const char *p, size_t len)
{
        size_t off = 0;
        while (off < len && !o->error) {
                ssize_t n = write(o->fd, p + off, len - off);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        o->error = errno;
                        break;
                }
                off += (size_t)n;
        }
}

/* While holding: data moves to held, which grows. */
static void move_to_held(struct outbuf *o)
{
        if (o->nr_held + o->len > o->held_cap) {
                size_t cap = o->held_cap ? o->held_cap : sizeof(o->data);
                while (cap < o->nr_held + o->len)
                        cap *= 2;
                o->held = xrealloc(o->held, cap);
                o->held_cap = cap;
        }
        memcpy(o->held + o->nr_held, o->data, o->len);
        o->nr_held += o->len;
        o->len = 0;
}

int outbuf_flush(struct outbuf *o)
{
        if (o->is_holding)
                outbuf_release(o);
        write_all(o, o->data, o->len);
        o->len = 0;
        return o->error ? -o->error : 0;
}

void outbuf_hold(struct outbuf *o)
{
        if (o->is_holding)
                return;
        outbuf_flush(o);
        o->is_holding = true;
        o->nr_held = 0;
}

size_t outbuf_tell(const struct outbuf *o)
{
        return o->nr_held + o->len;
}

void outbuf_patch(struct outbuf *o, size_t pos, const char *s, size_t n)
{
        for (size_t i = 0; i < n; i++, pos++) {
                if (pos < o->nr_held)
                        o->held[pos] = s[i];
                else if (pos - o->nr_held < o->len)
                        o->data[pos - o->nr_held] = s[i];
        }
}

void outbuf_release(struct outbuf *o)
{
        if (!o->is_holding)
                return;
        o->is_holding = false;
        write_all(o, o->held, o->nr_held);
        free(o->held);
        o->held = NULL;
        o->nr_held = o->held_cap = 0;
}

void outbuf_release_before(struct outbuf *o, size_t pos)
{
        if (!o->is_holding)
                return;
        size_t from_held = pos < o->nr_held ? pos : o->nr_held;
        size_t from_data = pos - from_held < o->len ? pos - from_held : o->len;
        write_all(o, o->held, from_held);
        memmove(o->held, o->held + from_held, o->nr_held - from_held);
        o->nr_held -= from_held;
        if (from_data) {
                write_all(o, o->data, from_data);
                memmove(o->data, o->data + from_data, o->len - from_data);
                o->len -= from_data;
        }
}

static inline void ensure(struct outbuf *o, size_t n)
{
        if (o->len + n > sizeof(o->data)) {
                if (o->is_holding)
                        move_to_held(o);
                else
                        outbuf_flush(o);
        }
}

void outbuf_put_slow(struct outbuf *o, const char *s, size_t n)
{
        while (n) {
                ensure(o, n < 4096 ? n : 4096);
                size_t room = sizeof(o->data) - o->len;
                size_t k = n < room ? n : room;
                memcpy(o->data + o->len, s, k);
                o->len += k;
                s += k;
                n -= k;
        }
}

/* Spaces from column n to width, for right alignment. */
static inline void pad(struct outbuf *o, int n, int width)
{
        if (n >= width)
                return;
        size_t k = (size_t)(width - n);
        if (k <= sizeof(o->data) - o->len) {
                memset(o->data + o->len, ' ', k);
                o->len += k;
                return;
        }
        for (; n < width; n++)
                outbuf_putc(o, ' ');
}

static size_t fmt_u64(char *end, uint64_t v)
{
        /* two digits a step: the dump formats several numbers on each of its many lines */
        static const char pairs[] =
                "00010203040506070809101112131415161718192021222324252627282930"
                "31323334353637383940414243444546474849505152535455565758596061"
                "6263646566676869707172737475767778798081828384858687888990919293"
                "949596979899";
        char *p = end;
        while (v >= 100) {
                unsigned r = (unsigned)(v % 100);
                v /= 100;
                p -= 2;
                memcpy(p, pairs + 2 * r, 2);
        }
        if (v >= 10) {
                p -= 2;
                memcpy(p, pairs + 2 * v, 2);
        } else {
                *--p = (char)('0' + v);
        }
        return (size_t)(end - p);
}

void outbuf_u64(struct outbuf *o, uint64_t v)
{
        char tmp[24];
        size_t n = fmt_u64(tmp + sizeof(tmp), v);
        outbuf_put(o, tmp + sizeof(tmp) - n, n);
}

void outbuf_i64(struct outbuf *o, int64_t v)
{
        if (v < 0) {
                outbuf_putc(o, '-');
                outbuf_u64(o, (uint64_t)0 - (uint64_t)v);
        } else {
                outbuf_u64(o, (uint64_t)v);
        }
}

void outbuf_u64_width(struct outbuf *o, uint64_t v, int width)
{
        char tmp[24];
        size_t n = fmt_u64(tmp + sizeof(tmp), v);
        pad(o, (int)n, width);
        outbuf_put(o, tmp + sizeof(tmp) - n, n);
}

void outbuf_i64_width(struct outbuf *o, int64_t v, int width)
{
        char tmp[24];
        uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
        size_t n = fmt_u64(tmp + sizeof(tmp), u);
        if (v < 0)
                tmp[sizeof(tmp) - ++n] = '-';
        pad(o, (int)n, width);
        outbuf_put(o, tmp + sizeof(tmp) - n, n);
}

void outbuf_seconds(struct outbuf *o, int64_t ns, int width)
{
        char tmp[32];
        uint64_t u = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
        char *end = tmp + sizeof(tmp);
        char *p = end;
        uint64_t frac = u % 1000000000u;
        for (int i = 0; i < 9; i++) {
                *--p = (char)('0' + frac % 10);
                frac /= 10;
        }
        *--p = '.';
        p -= fmt_u64(p, u / 1000000000u);
        if (ns < 0)
                *--p = '-';
        size_t n = (size_t)(end - p);
        pad(o, (int)n, width);
        outbuf_put(o, p, n);
}

void outbuf_printf(struct outbuf *o, const char *fmt, ...)
{
        char tmp[1024];
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
        va_end(ap);
        if (n > 0)
                outbuf_put(o, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}
