/* SPDX-License-Identifier: MIT */
/* tdh_values.c: owns the integer types the TDH decoder (tdh_meta.c) reads without its general
   path, and the numbers it writes into array fields, two digits a step. */
#include <stdbool.h>
#include <string.h>

#include "tdh_types.h"

const struct tdh_int_type tdh_int_types[IN_SIZET + 1] = {
        [IN_INT8] = {1, KEV_FIELD_INT, 1},      [IN_UINT8] = {1, KEV_FIELD_UINT, 0},
        [IN_ANSICHAR] = {1, KEV_FIELD_UINT, 0}, [IN_INT16] = {2, KEV_FIELD_INT, 1},
        [IN_UINT16] = {2, KEV_FIELD_UINT, 0},   [IN_UNICODECHAR] = {2, KEV_FIELD_UINT, 0},
        [IN_INT32] = {4, KEV_FIELD_INT, 1},     [IN_UINT32] = {4, KEV_FIELD_UINT, 0},
        [IN_HEXINT32] = {4, KEV_FIELD_HEX, 0},  [IN_BOOLEAN] = {4, KEV_FIELD_UINT, 0},
        [IN_INT64] = {8, KEV_FIELD_INT, 0},     [IN_UINT64] = {8, KEV_FIELD_UINT, 0},
        [IN_HEXINT64] = {8, KEV_FIELD_HEX, 0},  [IN_FILETIME] = {8, KEV_FIELD_INT, 0},
        [IN_POINTER] = {9, KEV_FIELD_HEX, 0},   [IN_SIZET] = {9, KEV_FIELD_UINT, 0},
};

size_t tdh_put_number(char *out, const struct kevent_field *f)
{
        static const char digits2[201] = "00010203040506070809101112131415161718192021222324"
                                         "25262728293031323334353637383940414243444546474849"
                                         "50515253545556575859606162636465666768697071727374"
                                         "75767778798081828384858687888990919293949596979899";
        uint64_t v = f->u;
        char *p = out;
        size_t n;

        if (f->kind == KEV_FIELD_HEX) {
                /* "0x" and the hex digits, lowercase, at least one */
                n = ((size_t)(64 - __builtin_clzll(v | 1)) + 3) / 4;
                *p++ = '0';
                *p++ = 'x';
                for (char *q = p + n; q > p; v >>= 4)
                        *--q = "0123456789abcdef"[v & 15];
                return n + 2;
        }
        if (f->kind == KEV_FIELD_INT && (int64_t)v < 0) {
                *p++ = '-';
                v = (uint64_t)0 - v;
        }
        /* the digits' count, then the digits from the last, two a step */
        if (v < 100) {
                n = v < 10 ? 1 : 2;
        } else {
                uint64_t t = 1000;
                n = 3;
                while (n < 20 && v >= t) {
                        t *= 10;
                        n++;
                }
        }
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
