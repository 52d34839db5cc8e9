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
        /* the digits end at tmp + 24 and 24 bytes are copied from where they begin: out has
           room for 24 (int_array's buf), tmp for the copy's tail */
        char tmp[48];
        char *end = tmp + 24, *p = end;
        uint64_t v = f->u;
        bool is_negative = f->kind == KEV_FIELD_INT && (int64_t)v < 0;

        if (is_negative)
                v = (uint64_t)0 - v;
        if (f->kind == KEV_FIELD_HEX) {
                static const char hex2[513] =
                        "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
                        "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
                        "404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
                        "606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
                        "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
                        "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
                        "c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
                        "e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

                while (v >= 16) {
                        p -= 2;
                        memcpy(p, hex2 + 2 * (v & 0xff), 2);
                        v >>= 8;
                }
                if (p == end || v)
                        *--p = "0123456789abcdef"[v];
                *--p = 'x';
                *--p = '0';
        } else {
                while (v >= 10) {
                        p -= 2;
                        memcpy(p, digits2 + 2 * (v % 100), 2);
                        v /= 100;
                }
                if (p == end || v)
                        *--p = (char)('0' + v);
                if (is_negative)
                        *--p = '-';
        }
        memcpy(out, p, 24);
        return (size_t)(end - p);
}
