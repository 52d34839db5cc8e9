/* SPDX-License-Identifier: MIT */
/* text_sanitize.c: owns the rule for which bytes of traced-system strings reach the terminal. */
#include "ui/text_sanitize.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

size_t text_utf8_len(const unsigned char *s)
{
        unsigned char c = s[0];
        if (c < 0x80)
                return 1;
        size_t n;
        uint32_t cp;
        if (c >= 0xC2 && c <= 0xDF) {
                n = 2;
                cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
                n = 3;
                cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
                n = 4;
                cp = c & 0x07;
        } else {
                return 0;
        }
        for (size_t i = 1; i < n; i++) {
                if ((s[i] & 0xC0) != 0x80)
                        return 0;
                cp = (cp << 6) | (s[i] & 0x3F);
        }
        if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
            (cp >= 0xD800 && cp <= 0xDFFF))
                return 0;
        if (cp >= 0x80 && cp <= 0x9F) /* C1 controls */
                return 0;
        return n;
}

/* Whether the 8 bytes of w are all printable ASCII (0x20 to 0x7E): none has its high bit set,
   none borrows when 0x20 is taken from it (under 0x20), none reaches 0x80 when 1 is added to it
   (0x7F). A borrow or carry crosses into the next byte only from a byte that fails itself. */
static bool is_printable8(uint64_t w)
{
        const uint64_t ones = 0x0101010101010101ull;
        return !((w | (w - 0x20 * ones) | (w + ones)) & (0x80 * ones));
}

size_t text_sanitize(char *dst, size_t dst_size, const char *src)
{
        size_t o = 0;
        if (dst_size == 0)
                return 0;
        const unsigned char *s = (const unsigned char *)(src ? src : "");
        /* the bytes that may be read 8 at a time: the string's, as far as dst could take them */
        const unsigned char *end = s + strnlen((const char *)s, dst_size);
        while (*s) {
                /* a run of printable ASCII, most text: copied 8 bytes at a time, then bytes */
                size_t k = 0, room = dst_size - 1 - o;
                uint64_t w;
                while (k + 8 <= room && s + k + 8 <= end &&
                       (memcpy(&w, s + k, 8), is_printable8(w)))
                        k += 8;
                while (k < room && (unsigned char)(s[k] - 0x20) < 0x5F) /* 0x20 to 0x7E */
                        k++;
                memcpy(dst + o, s, k);
                o += k;
                s += k;
                if (!*s || (*s >= 0x20 && *s < 0x7F)) /* the end, or no room */
                        break;
                size_t n = text_utf8_len(s);
                if (n == 1 && (*s < 0x20 || *s == 0x7F))
                        n = 0;
                if (n == 0) {
                        if (o + 1 >= dst_size)
                                break;
                        dst[o++] = '?';
                        s++;
                        continue;
                }
                if (o + n >= dst_size)
                        break;
                for (size_t i = 0; i < n; i++)
                        dst[o++] = (char)s[i];
                s += n;
        }
        dst[o] = '\0';
        return o;
}

int text_is_clean(const char *src)
{
        const unsigned char *s = (const unsigned char *)src;
        while (*s) {
                if (*s >= 0x20 && *s < 0x7F) {
                        s++;
                        continue;
                }
                size_t n = text_utf8_len(s);
                if (n == 0 || (n == 1 && (*s < 0x20 || *s == 0x7F)))
                        return 0;
                s += n;
        }
        return 1;
}
