/* SPDX-License-Identifier: MIT */
/* kevent_mof.h: the kernel classes decoded by their MOF layouts (a table per provider, opcode
 * and version) into the generic field list of struct kevent; internal to the decoder. */
#ifndef ETWTOP_KEVENT_MOF_H
#define ETWTOP_KEVENT_MOF_H

#include <stddef.h>
#include <stdint.h>

#include "kevent.h"

struct kdecoder;

/* What the table decoder needs of the decoder (backend/decode/kdecoder.c). */
/* The UTF-16LE string at p[off..len), to its NUL or the end, as UTF-8 in the record's arena;
 *next: the offset after the NUL. */
const char *kdecoder_utf16_at(struct kdecoder *d, const uint8_t *p, size_t len, size_t off,
                              size_t *next);
/* Exactly nchars UTF-16 code units at p[off..] (a fixed array, NUL-padded), as UTF-8. */
const char *kdecoder_utf16_fixed(struct kdecoder *d, const uint8_t *p, size_t len, size_t off,
                                 size_t nchars);
/* A copy of s in the record's arena ("" when it is full). */
const char *kdecoder_arena_copy(struct kdecoder *d, const char *s);
/* The record's field slots, KEV_MAX_FIELDS of them. */
struct kevent_field *kdecoder_field_slots(struct kdecoder *d);
/* The process of tid from the decoder's thread table, or KEV_PID_UNKNOWN. */
uint32_t kdecoder_pid_of_tid(const struct kdecoder *d, uint32_t tid);

/* Writes the 16-byte IPv6 address a in RFC 5952 text (at least 40 bytes of buf); returns its
   length. */
size_t kevent_format_ipv6(char *buf, size_t size, const uint8_t *a);

/* Decodes ev's payload p[0..len) by the layout of (provider, ev->opcode, ev->version): sets
   ev->type = KEV_FIELDS, ev->name and ev->fields, and ev->pid/ev->tid from the payload where the
   class carries them (then the pid from the thread table). Returns 0, 1 when the table has no
   layout for the event, or -EBADMSG when the payload is shorter than the layout's fixed part. */
int kevent_mof_decode(struct kdecoder *d, const char *provider, struct kevent *ev, const uint8_t *p,
                      size_t len, unsigned psize);

#endif
