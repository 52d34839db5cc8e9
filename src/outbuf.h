/* SPDX-License-Identifier: MIT */
/* outbuf.h: a fast append-only text buffer flushed to a file descriptor. */
#ifndef ETWTOP_OUTBUF_H
#define ETWTOP_OUTBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct outbuf {
        int fd;
        int error; /* first write error (errno), sticky */
        size_t len;
        bool is_holding; /* outbuf_hold: nothing is written until outbuf_release */
        char *held;      /* owned: what was put while holding, beyond data */
        size_t nr_held, held_cap;
        char data[1 << 16];
};

void outbuf_init(struct outbuf *o, int fd);
/* Writes out what is buffered (releasing a hold first). Returns 0 or -errno (also kept in
   o->error). */
int outbuf_flush(struct outbuf *o);

/* Holds what is put from now on in memory, unwritten, so that it can still be changed with
   outbuf_patch (the dump fills in a field that a later event gives); what was put before is
   written first. outbuf_tell says where the next byte goes, counted from the hold's start. */
void outbuf_hold(struct outbuf *o);
size_t outbuf_tell(const struct outbuf *o);
/* Overwrites n bytes at pos (an outbuf_tell of this hold) with s. */
void outbuf_patch(struct outbuf *o, size_t pos, const char *s, size_t n);
/* Ends the hold: what it held is written (before what is buffered after it). */
void outbuf_release(struct outbuf *o);
/* Writes the first pos bytes of the hold, which goes on: positions told before count from pos
   now (the caller subtracts it). */
void outbuf_release_before(struct outbuf *o, size_t pos);

/* The slow path of outbuf_put: the buffer is written out (or held) to make room. */
void outbuf_put_slow(struct outbuf *o, const char *s, size_t n);

/* Inline: the dump puts a few bytes at a time, millions of times. */
static inline void outbuf_put(struct outbuf *o, const char *s, size_t n)
{
        if (n <= sizeof(o->data) - o->len) {
                memcpy(o->data + o->len, s, n);
                o->len += n;
                return;
        }
        outbuf_put_slow(o, s, n);
}

static inline void outbuf_puts(struct outbuf *o, const char *s)
{
        outbuf_put(o, s, strlen(s));
}

static inline void outbuf_putc(struct outbuf *o, char c)
{
        if (o->len < sizeof(o->data)) {
                o->data[o->len++] = c;
                return;
        }
        outbuf_put_slow(o, &c, 1);
}
void outbuf_u64(struct outbuf *o, uint64_t v);
void outbuf_i64(struct outbuf *o, int64_t v);
/* Right-aligns a decimal in width columns. */
void outbuf_u64_width(struct outbuf *o, uint64_t v, int width);
void outbuf_i64_width(struct outbuf *o, int64_t v, int width);
/* Seconds with 9 decimals from nanoseconds: "12.345678901". */
void outbuf_seconds(struct outbuf *o, int64_t ns, int width);
void outbuf_printf(struct outbuf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
