/* SPDX-License-Identifier: MIT */
/* tdh_values.c: owns the integer types the TDH decoder (tdh_meta.c) reads without its general
   path, the numbers it writes into array fields, and the texts of its binary values (hex bytes,
   socket addresses, SIDs). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "kevent_mof.h"
#include "le_bytes.h"
#include "tdh_types.h"

const struct tdh_int_type tdh_int_types[IN_SIZET + 1] = {
        [IN_INT8] = {1, KEV_FIELD_INT, 1},      [IN_UINT8] = {1, KEV_FIELD_UINT, 0},
        [IN_ANSICHAR] = {1, KEV_FIELD_UINT, 0}, [IN_INT16] = {2, KEV_FIELD_INT, 1},
        [IN_UINT16] = {2, KEV_FIELD_UINT, 0},   [IN_UNICODECHAR] = {2, KEV_FIELD_UINT, 0},
        [IN_INT32] = {4, KEV_FIELD_INT, 1},     [IN_UINT32] = {4, KEV_FIELD_UINT, 0},
        [IN_HEXINT32] = {4, KEV_FIELD_HEX, 0},  [IN_BOOLEAN] = {4, KEV_FIELD_UINT, 0},
        [IN_INT64] = {8, KEV_FIELD_INT, 0},     [IN_UINT64] = {8, KEV_FIELD_UINT, 0},
        [IN_HEXINT64] = {8, KEV_FIELD_HEX, 0},  [IN_POINTER] = {9, KEV_FIELD_HEX, 0},
        [IN_SIZET] = {9, KEV_FIELD_UINT, 0},
};

size_t tdh_put_number(char *out, uint64_t v, unsigned kind)
{
        static const char digits2[201] = "00010203040506070809101112131415161718192021222324"
                                         "25262728293031323334353637383940414243444546474849"
                                         "50515253545556575859606162636465666768697071727374"
                                         "75767778798081828384858687888990919293949596979899";
        char *p = out;
        size_t n;

        if (v < 10000 && kind != KEV_FIELD_HEX) {
                /* most array elements (offsets, counts): up to four digits */
                unsigned hi = (unsigned)v / 100, lo = (unsigned)v % 100;
                if (v < 10) {
                        out[0] = (char)('0' + v);
                        return 1;
                }
                if (v < 100) {
                        memcpy(out, digits2 + 2 * v, 2);
                        return 2;
                }
                if (hi < 10) {
                        out[0] = (char)('0' + hi);
                        memcpy(out + 1, digits2 + 2 * lo, 2);
                        return 3;
                }
                memcpy(out, digits2 + 2 * hi, 2);
                memcpy(out + 2, digits2 + 2 * lo, 2);
                return 4;
        }
        if (kind == KEV_FIELD_HEX) {
                /* "0x" and the hex digits, lowercase, at least one */
                n = ((size_t)(64 - __builtin_clzll(v | 1)) + 3) / 4;
                *p++ = '0';
                *p++ = 'x';
                for (char *q = p + n; q > p; v >>= 4)
                        *--q = "0123456789abcdef"[v & 15];
                return n + 2;
        }
        if (kind == KEV_FIELD_INT && (int64_t)v < 0) {
                *p++ = '-';
                v = (uint64_t)0 - v;
        }
        /* the digits' count (log10 from the bit length, Bit Twiddling Hacks), then the digits
           from the last, two a step */
        static const uint64_t pow10[20] = {1ull,
                                           10ull,
                                           100ull,
                                           1000ull,
                                           10000ull,
                                           100000ull,
                                           1000000ull,
                                           10000000ull,
                                           100000000ull,
                                           1000000000ull,
                                           10000000000ull,
                                           100000000000ull,
                                           1000000000000ull,
                                           10000000000000ull,
                                           100000000000000ull,
                                           1000000000000000ull,
                                           10000000000000000ull,
                                           100000000000000000ull,
                                           1000000000000000000ull,
                                           10000000000000000000ull};
        unsigned t = (unsigned)(64 - __builtin_clzll(v | 1)) * 1233u >> 12;
        n = t - (v < pow10[t]) + 1;
        char *q = p + n;
        while (v >= 100) {
                q -= 2;
                memcpy(q, digits2 + 2 * (v % 100), 2);
                v /= 100;
        }
        if (v >= 10)
                memcpy(q - 2, digits2 + 2 * v, 2);
        else
                q[-1] = (char)('0' + v);
        return (size_t)(p - out) + n;
}

const char *tdh_hex_bytes(struct kdecoder *d, const uint8_t *q, size_t n)
{
        char buf[2 * 64 + 8];
        size_t o = 0, shown = n < 64 ? n : 64;

        o += (size_t)snprintf(buf, sizeof(buf), "0x");
        for (size_t i = 0; i < shown; i++)
                o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%02X", q[i]);
        if (shown < n)
                snprintf(buf + o, sizeof(buf) - o, "...");
        return kdecoder_arena_copy(d, buf);
}

/* A SOCKADDR_IN or SOCKADDR_IN6 as TraceEvent shows it: "a.b.c.d:port", "[v6]:port". */
const char *tdh_sockaddr_text(struct kdecoder *d, const uint8_t *q, size_t n)
{
        char buf[80];
        uint16_t family = n >= 2 ? le_get16(q) : 0;
        unsigned port = n >= 4 ? (unsigned)(q[2] << 8 | q[3]) : 0;

        if (family == 2 && n >= 8) {
                snprintf(buf, sizeof(buf), "%u.%u.%u.%u:%u", q[4], q[5], q[6], q[7], port);
                return kdecoder_arena_copy(d, buf);
        }
        if (family == 23 && n >= 24) {
                size_t o = 1;

                buf[0] = '[';
                o += kevent_format_ipv6(buf + 1, sizeof(buf) - 1, q + 8);
                snprintf(buf + o, sizeof(buf) - o, "]:%u", port);
                return kdecoder_arena_copy(d, buf);
        }
        return tdh_hex_bytes(d, q, n);
}

const char *tdh_filetime_text(struct kdecoder *d, uint64_t v)
{
        char buf[96];
        /* 1601-01-01 to 1970-01-01: 11,644,473,600 s; 10000-01-01 at 2,650,467,744,000 s */
        uint64_t secs = v / 10000000u;
        if (secs >= 265046774400ull) {
                snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
                return kdecoder_arena_copy(d, buf);
        }
        int64_t unix_secs = (int64_t)secs - 11644473600ll;
        int64_t days = unix_secs >= 0 ? unix_secs / 86400 : -((-unix_secs + 86399) / 86400);
        int64_t rem = unix_secs - days * 86400;
        /* the civil date of a day count (days from 1970-01-01), proleptic Gregorian */
        int64_t z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
        int64_t doe = z - era * 146097;
        int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
        int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
        int64_t day = doy - (153 * mp + 2) / 5 + 1, month = mp < 10 ? mp + 3 : mp - 9;
        int64_t year = yoe + era * 400 + (month <= 2);
        snprintf(buf, sizeof(buf), "%04lld-%02lld-%02lld %02lld:%02lld:%02lld.%07llu UTC",
                 (long long)year, (long long)month, (long long)day, (long long)(rem / 3600),
                 (long long)(rem / 60 % 60), (long long)(rem % 60),
                 (unsigned long long)(v % 10000000u));
        return kdecoder_arena_copy(d, buf);
}

const char *tdh_sid_text(struct kdecoder *d, const uint8_t *q, size_t n)
{
        char buf[200];
        size_t o;

        if (n < 8 || q[0] != 1 || n < 8 + 4u * q[1])
                return tdh_hex_bytes(d, q, n);
        uint64_t auth = 0;
        for (int i = 2; i < 8; i++)
                auth = auth << 8 | q[i];
        o = (size_t)snprintf(buf, sizeof(buf), "S-1-%llu", (unsigned long long)auth);
        for (unsigned i = 0; i < q[1] && o < sizeof(buf); i++)
                o += (size_t)snprintf(buf + o, sizeof(buf) - o, "-%u",
                                      (unsigned)le_get32(q + 8 + 4 * i));
        return kdecoder_arena_copy(d, buf);
}
