/* SPDX-License-Identifier: MIT */
/* kevent_mof.h: the kernel classes decoded by their MOF layouts (a table per provider, opcode
 * and version) into the generic field list of struct kevent; internal to the decoder. */
#ifndef ETWTOP_KEVENT_MOF_H
#define ETWTOP_KEVENT_MOF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kevent.h"

struct kdecoder;

/* A property's type, as the MOF class declares it. */
enum mof_type {
        M_U8,
        M_U16,
        M_I16,
        M_U32,
        M_I32,
        M_X32, /* format("x") */
        M_U64,
        M_I64,
        M_X64,
        M_PTR,    /* a pointer: 4 or 8 bytes by the record's pointer size, shown in hex */
        M_SIZE,   /* a pointer-sized count (SIZE_T), in decimal */
        M_PORT,   /* extension("Port"): 16 bits in network order */
        M_IPV4,   /* extension("IPAddr"): 4 bytes in network order */
        M_IPV6,   /* extension("IPAddrV6"): 16 bytes */
        M_GUID,   /* extension("Guid") */
        M_WSTR,   /* a NUL-terminated UTF-16 string */
        M_ASTR,   /* a NUL-terminated 8-bit string */
        M_WFIXED, /* a fixed array of `count` UTF-16 code units, NUL-padded */
        M_MAC,    /* a fixed array of `count` bytes, of which the last R_LEN property says how many
                     are used: shown as Windows shows a MAC address (D8-BB-C1-AB-3E-DF) */
        M_LZNT1_WSTR, /* the rest of the payload: LZNT1 chunks of UTF-16 text, decompressed to
                         the size the last R_LEN property gives (WinSat's XML documents) */
        M_VER64       /* a version in 64 bits, four 16-bit parts from the high one down
                         (major.minor.build.revision, as a PE's FILEVERSION) */
};

/* What a property says of the event's subject (R_PID, R_TID), or of the properties after it:
   R_LEN, the bytes used of each M_MAC and M_LZNT1_WSTR until the next R_LEN. */
enum mof_role { R_NONE = 0, R_PID, R_TID, R_LEN };

#define NEXT (-1) /* the property follows the previous one (after a variable-length string) */

struct mof_field {
        const char *name;
        uint8_t type;        /* enum mof_type */
        uint8_t role;        /* enum mof_role */
        uint8_t nptr;        /* pointers before it: its offset grows by nptr * (psize - 4) */
        uint8_t is_optional; /* present only when the payload reaches it (a later version's tail) */
        int16_t off;         /* in a 32-bit payload, or NEXT */
        uint16_t count;      /* M_WFIXED: code units */
};

#define F(n, t, o)                                                                                 \
        {                                                                                          \
                n, t, R_NONE, 0, 0, o, 0                                                           \
        }
#define FP(n, t, o, p)                                                                             \
        {                                                                                          \
                n, t, R_NONE, p, 0, o, 0                                                           \
        }
#define FR(n, t, o, p, r)                                                                          \
        {                                                                                          \
                n, t, r, p, 0, o, 0                                                                \
        }
#define FOPT(n, t, o, p, r)                                                                        \
        {                                                                                          \
                n, t, r, p, 1, o, 0                                                                \
        }
#define FW(n, o, c)                                                                                \
        {                                                                                          \
                n, M_WFIXED, R_NONE, 0, 0, o, c                                                    \
        }
#define FB(n, t, o, c)                                                                             \
        {                                                                                          \
                n, t, R_NONE, 0, 0, o, c                                                           \
        }
#define NF(a) (uint8_t)(sizeof(a) / sizeof((a)[0]))

/* What the table decoder needs of the decoder (backend/decode/kdecoder.c). */
/* The UTF-16LE string at p[off..len), to its NUL or the end, as UTF-8 in the record's arena;
 *next: the offset after the NUL. */
const char *kdecoder_utf16_at(struct kdecoder *d, const uint8_t *p, size_t len, size_t off,
                              size_t *next);
/* Exactly nchars UTF-16 code units at p[off..] (a fixed array, NUL-padded), as UTF-8. */
const char *kdecoder_utf16_fixed(struct kdecoder *d, const uint8_t *p, size_t len, size_t off,
                                 size_t nchars);
/* The LZNT1-compressed UTF-16 text at p[off..len), decompressed (at most size bytes of it), to
   its NUL or its end, as UTF-8; "" where it is not LZNT1 (or no memory is left). */
const char *kdecoder_lznt1_utf16(struct kdecoder *d, const uint8_t *p, size_t len, size_t off,
                                 uint64_t size);
/* The 8-bit string at p[off..len), to its NUL or the end, as UTF-8 (Latin-1 when it is not
   valid UTF-8); *next as for kdecoder_utf16_at. */
const char *kdecoder_ansi_at(struct kdecoder *d, const uint8_t *p, size_t len, size_t off,
                             size_t *next);
/* The offset after the UTF-16 NUL of the string at p[off..len), or len: where kstr_utf16 ends
   (units counted from off; a last odd byte is no unit). */
static inline size_t kdecoder_utf16_end(const uint8_t *p, size_t len, size_t off)
{
        size_t i = off;

        for (; i + 16 <= len; i += 16) {
                uint64_t a, b;

                memcpy(&a, p + i, 8);
                memcpy(&b, p + i + 8, 8);
                /* a zero 16-bit unit: (u - 1) & ~u has bit 15 set only for u == 0 */
                if (((a - 0x0001000100010001ull) & ~a & 0x8000800080008000ull) ||
                    ((b - 0x0001000100010001ull) & ~b & 0x8000800080008000ull))
                        break;
        }
        for (; i + 2 <= len; i += 2)
                if (p[i] == 0 && p[i + 1] == 0)
                        return i + 2;
        return len;
}

/* A copy of s in the record's arena ("" when it is full). */
const char *kdecoder_arena_copy(struct kdecoder *d, const char *s);
/* The record's field slots, KEV_MAX_FIELDS of them. */
struct kevent_field *kdecoder_field_slots(struct kdecoder *d);
/* Decodes the fields of the record's payload p[0..len) by desc (found in table) into the field
   slots and the arena; their count in *nr. Returns 0, or -EBADMSG. */
typedef int (*kdecoder_fill_fn)(struct kdecoder *d, const void *desc, const void *table,
                                const uint8_t *p, size_t len, unsigned psize, uint32_t *nr);
/* Leaves the record's fields to fill when a consumer first asks for them (kevent_fields, while
   the sink runs), the payload already checked: what ev->fields.lazy points to. */
struct kevent_lazy *kdecoder_lazy_arm(struct kdecoder *d, kdecoder_fill_fn fill, const void *desc,
                                      const void *table, const uint8_t *p, size_t len,
                                      unsigned psize);
/* The process of tid from the decoder's thread table, or KEV_PID_UNKNOWN. */
uint32_t kdecoder_pid_of_tid(const struct kdecoder *d, uint32_t tid);

/* Writes the 16-byte IPv6 address a in RFC 5952 text (at least 40 bytes of buf); returns its
   length. */
size_t kevent_format_ipv6(char *buf, size_t size, const uint8_t *a);

/* Decodes ev's payload p[0..len) by the layout of (provider, ev->opcode, ev->version): sets
   ev->type = KEV_FIELDS, ev->name and ev->fields, and ev->pid/ev->tid from the payload where the
   class carries them (then the pid from the thread table). Returns 0, 1 when the table has no
   layout for the event, or -EBADMSG when the payload is shorter than the layout's fixed part.
   The fields' values and text are left to the consumer's first kevent_fields() (while the sink
   runs): here the payload is only checked against the layout, its strings' ends found. */
int kevent_mof_decode(struct kdecoder *d, const char *provider, struct kevent *ev, const uint8_t *p,
                      size_t len, unsigned psize);

/* kevent_mof_decode with the fields decoded now (ev->fields.lazy NULL): what the fields left to
   be asked for must equal (test_kevent_mof). */
int kevent_mof_decode_now(struct kdecoder *d, const char *provider, struct kevent *ev,
                          const uint8_t *p, size_t len, unsigned psize);

/* Decodes ev's payload by the layout fields[0..nr_fields) as kevent_mof_decode does, naming it
   name (static): the table decoder for the other tables of the decoder (clr_private.c). */
int kevent_mof_fields(struct kdecoder *d, const char *name, const struct mof_field *fields,
                      unsigned nr_fields, struct kevent *ev, const uint8_t *p, size_t len,
                      unsigned psize);

#endif
