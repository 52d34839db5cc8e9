/* SPDX-License-Identifier: MIT */
/* tdh_types.h: the TDH in- and out-types the metadata decoder (tdh_meta.c) reads, and its integer
   values and numbers (tdh_values.c). Internal to backend/decode. */
#ifndef ETWTOP_TDH_TYPES_H
#define ETWTOP_TDH_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include "kevent.h"
#include "tdh_meta.h"

/* EVENT_PROPERTY_INFO.Flags */
#define PROPERTY_STRUCT       0x1u
#define PROPERTY_PARAM_LENGTH 0x2u
#define PROPERTY_PARAM_COUNT  0x4u

/* TDH_INTYPE_* and the TDH_OUTTYPE_* the decoder shows differently */
enum {
        IN_UNICODESTRING = 1,
        IN_ANSISTRING,
        IN_INT8,
        IN_UINT8,
        IN_INT16,
        IN_UINT16,
        IN_INT32,
        IN_UINT32,
        IN_INT64,
        IN_UINT64,
        IN_FLOAT,
        IN_DOUBLE,
        IN_BOOLEAN,
        IN_BINARY,
        IN_GUID,
        IN_POINTER,
        IN_FILETIME,
        IN_SYSTEMTIME,
        IN_SID,
        IN_HEXINT32,
        IN_HEXINT64,
        IN_COUNTEDSTRING,
        IN_COUNTEDANSISTRING,
        IN_REVERSEDCOUNTEDSTRING,
        IN_REVERSEDCOUNTEDANSISTRING,
        IN_NONNULLTERMINATEDSTRING,
        IN_NONNULLTERMINATEDANSISTRING,
        IN_UNICODECHAR,
        IN_ANSICHAR,
        IN_SIZET,
        IN_HEXDUMP,
        IN_WBEMSID,
};
enum {
        OUT_STRING = 1, /* on an 8- or 16-bit integer: a character */
        OUT_HEXINT8 = 16,
        OUT_HEXINT16,
        OUT_HEXINT32,
        OUT_HEXINT64,
        OUT_PORT = 22,
        OUT_IPV4,
        OUT_IPV6,
        OUT_SOCKETADDRESS
};

/* The integer types value() reads alike: their size (9: the pointer's), the field's kind
   (enum kevent_field_kind), and whether the value is sign-extended. */
struct tdh_int_type {
        uint8_t size, kind, is_signed;
};

/* The integer types by TDH in-type (size 0: not one of them). */
extern const struct tdh_int_type tdh_int_types[IN_SIZET + 1];

/* The failure of a description's parse: -EBADMSG, what and its byte offset in err (tdh_info.c). */
int tdh_bad(char *err, size_t err_size, const char *what, size_t off);
/* The UTF-16 string at a TRACE_EVENT_INFO or EVENT_MAP_INFO offset (0: none) as an owned UTF-8
   copy, or NULL (tdh_info.c). */
char *tdh_string_at(const uint8_t *p, size_t size, uint32_t off);

/* Whether pr is one character (TDH's AnsiChar, UnicodeChar, an 8- or 16-bit integer shown as a
   string: TraceLogging's char8 and char16), which TDH shows as the character; an array of them
   stays numbers. */
static inline bool tdh_is_char(const struct tdh_prop *pr)
{
        if (pr->count > 1 || (pr->flags & PROPERTY_PARAM_COUNT))
                return false;
        return pr->in_type == IN_ANSICHAR || pr->in_type == IN_UNICODECHAR ||
               (pr->out_type == OUT_STRING &&
                (pr->in_type == IN_INT8 || pr->in_type == IN_UINT8 || pr->in_type == IN_INT16 ||
                 pr->in_type == IN_UINT16));
}

/* pr's integer type when tdh_meta.c's value() would read it as one integer alone (no map, port,
   address or character), else NULL. */
static inline const struct tdh_int_type *tdh_int_type_of(const struct tdh_prop *pr)
{
        if (pr->map_name || pr->in_type > IN_SIZET || !tdh_int_types[pr->in_type].size ||
            pr->out_type == OUT_PORT || pr->out_type == OUT_IPV4 || tdh_is_char(pr))
                return NULL;
        return &tdh_int_types[pr->in_type];
}

/* The bytes one value of pr takes when that does not depend on the payload, else 0. */
static inline size_t tdh_fixed_size(const struct tdh_prop *pr, unsigned psize)
{
        switch (pr->in_type) {
        case IN_INT8:
        case IN_UINT8:
        case IN_ANSICHAR: return 1;
        case IN_INT16:
        case IN_UINT16:
        case IN_UNICODECHAR: return 2;
        case IN_INT32:
        case IN_UINT32:
        case IN_HEXINT32:
        case IN_BOOLEAN:
        case IN_FLOAT: return 4;
        case IN_INT64:
        case IN_UINT64:
        case IN_HEXINT64:
        case IN_FILETIME:
        case IN_DOUBLE: return 8;
        case IN_POINTER:
        case IN_SIZET: return psize;
        case IN_GUID:
        case IN_SYSTEMTIME: return 16;
        default: return 0;
        }
}

/* v as the dump prints a field of this kind (enum kevent_field_kind: decimal, signed for
   KEV_FIELD_INT, 0x... for KEV_FIELD_HEX) at out; returns its length (21 at most), the bytes it
   writes. out must have room for 24. */
size_t tdh_put_number(char *out, uint64_t v, unsigned kind);

/* A binary value's text, in the decoder's arena: "0x" and its bytes in hex (64 at most, then
   "..."); a SOCKADDR_IN or SOCKADDR_IN6 as TraceEvent shows it ("a.b.c.d:port", "[v6]:port"),
   else its bytes; a SID as "S-1-...", else its bytes. */
const char *tdh_hex_bytes(struct kdecoder *d, const uint8_t *q, size_t n);
const char *tdh_sockaddr_text(struct kdecoder *d, const uint8_t *q, size_t n);
const char *tdh_sid_text(struct kdecoder *d, const uint8_t *q, size_t n);
/* A FILETIME (100 ns units since 1601, UTC) as "2020-07-29 07:07:03.3564008 UTC", as the dump's
   header shows its times; past the year 9999, its number. */
const char *tdh_filetime_text(struct kdecoder *d, uint64_t v);

#endif
