/* SPDX-License-Identifier: MIT */
/* text_sanitize.c: owns the rule for which bytes of traced-system strings reach the terminal. */
#include "ui/text_sanitize.h"

#include <stdint.h>

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when it is invalid or a C1 control. */
static size_t utf8_valid_len(const unsigned char *s)
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

size_t text_sanitize(char *dst, size_t dst_size, const char *src)
{
        size_t o = 0;
        if (dst_size == 0)
                return 0;
        const unsigned char *s = (const unsigned char *)(src ? src : "");
        while (*s) {
                size_t n = utf8_valid_len(s);
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
                size_t n = utf8_valid_len(s);
                if (n == 0 || (n == 1 && (*s < 0x20 || *s == 0x7F)))
                        return 0;
                s += n;
        }
        return 1;
}
