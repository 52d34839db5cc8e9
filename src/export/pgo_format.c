/* SPDX-License-Identifier: MIT */
/* pgo_format.c: owns the lines of BOLT's fdata and of perf script's LBR form (pgo_format.h). */
#include "export/pgo_format.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Appends to buf[*len..size) as snprintf would, keeping *len the length needed so far. */
static void put(char *buf, size_t size, size_t *len, const char *s, size_t n)
{
        if (*len < size) {
                size_t room = size - *len - 1;
                memcpy(buf + *len, s, n < room ? n : room);
                buf[*len + (n < room ? n : room)] = 0;
        }
        *len += n;
}

static void put_str(char *buf, size_t size, size_t *len, const char *s)
{
        put(buf, size, len, s, strlen(s));
}

/* v in decimal, or in lower-case hex without 0x */
static void put_num(char *buf, size_t size, size_t *len, uint64_t v, bool is_hex)
{
        char tmp[32];
        int n = is_hex ? snprintf(tmp, sizeof(tmp), "%" PRIx64, v)
                       : snprintf(tmp, sizeof(tmp), "%" PRIu64, v);
        put(buf, size, len, tmp, (size_t)n);
}

size_t pgo_bolt_name(char *buf, size_t size, const char *symbol, uint32_t rank)
{
        size_t len = 0;
        if (size)
                buf[0] = 0;
        put_str(buf, size, &len, symbol);
        if (rank) {
                put(buf, size, &len, "/", 1);
                put_num(buf, size, &len, rank, false);
        }
        return len;
}

/* BOLT's getEscapedName: a space or a backslash gets a backslash before it. */
static void put_escaped(char *buf, size_t size, size_t *len, const char *s)
{
        for (; *s; s++) {
                if (*s == ' ' || *s == '\\')
                        put(buf, size, len, "\\", 1);
                put(buf, size, len, s, 1);
        }
}

static void put_loc(char *buf, size_t size, size_t *len, const struct pgo_fdata_loc *l)
{
        if (!l->name) {
                put_str(buf, size, len, "0 [unknown] 0 ");
                return;
        }
        put_str(buf, size, len, "1 ");
        put_escaped(buf, size, len, l->name);
        put(buf, size, len, " ", 1);
        put_num(buf, size, len, l->offset, true);
        put(buf, size, len, " ", 1);
}

size_t pgo_fdata_branch(char *buf, size_t size, const struct pgo_fdata_loc *from,
                        const struct pgo_fdata_loc *to, uint64_t mispreds, uint64_t count)
{
        size_t len = 0;
        if (size)
                buf[0] = 0;
        put_loc(buf, size, &len, from);
        put_loc(buf, size, &len, to);
        put_num(buf, size, &len, mispreds, false);
        put(buf, size, &len, " ", 1);
        put_num(buf, size, &len, count, false);
        put(buf, size, &len, "\n", 1);
        return len;
}

size_t pgo_fdata_sample(char *buf, size_t size, const struct pgo_fdata_loc *at, uint64_t count)
{
        size_t len = 0;
        if (size)
                buf[0] = 0;
        put_loc(buf, size, &len, at);
        put_num(buf, size, &len, count, false);
        put(buf, size, &len, "\n", 1);
        return len;
}

size_t pgo_perf_mmap2(char *buf, size_t size, uint32_t pid, uint32_t tid, uint64_t base,
                      uint64_t len_bytes, uint64_t pgoff, const char *path)
{
        size_t len = 0;
        if (size)
                buf[0] = 0;
        put_str(buf, size, &len, "PERF_RECORD_MMAP2 ");
        put_num(buf, size, &len, pid, false);
        put(buf, size, &len, "/", 1);
        put_num(buf, size, &len, tid, false);
        put_str(buf, size, &len, ": [0x");
        put_num(buf, size, &len, base, true);
        put_str(buf, size, &len, "(0x");
        put_num(buf, size, &len, len_bytes, true);
        /* perf's %#lx: "0" for zero */
        put_str(buf, size, &len, pgoff ? ") @ 0x" : ") @ ");
        put_num(buf, size, &len, pgoff, true);
        put_str(buf, size, &len, " 00:00 0 0]: r-xp ");
        put_str(buf, size, &len, path);
        put(buf, size, &len, "\n", 1);
        return len;
}

size_t pgo_perf_ip(char *buf, size_t size, uint64_t ip, int has_ip)
{
        size_t len = 0;
        if (size)
                buf[0] = 0;
        char tmp[32];
        int n = snprintf(tmp, sizeof(tmp), " %16" PRIx64, ip);
        if (has_ip)
                put(buf, size, &len, tmp, (size_t)n);
        else
                put_str(buf, size, &len, "                 ");
        return len;
}

size_t pgo_perf_frame(char *buf, size_t size, uint64_t address)
{
        size_t len = 0;
        if (size)
                buf[0] = 0;
        char tmp[32];
        int n = snprintf(tmp, sizeof(tmp), "\t%16" PRIx64 "\n", address);
        put(buf, size, &len, tmp, (size_t)n);
        return len;
}

size_t pgo_perf_branch(char *buf, size_t size, uint64_t from, uint64_t to, uint64_t info)
{
        size_t len = 0;
        if (size)
                buf[0] = 0;
        put_str(buf, size, &len, " 0x");
        put_num(buf, size, &len, from, true);
        put_str(buf, size, &len, "/0x");
        put_num(buf, size, &len, to, true);
        char flags[] = "/-/-/-/";
        flags[1] = info & 1 ? 'M' : info & 2 ? 'P' : '-';
        flags[3] = info & 4 ? 'X' : '-';
        flags[5] = info & 8 ? 'A' : '-';
        put_str(buf, size, &len, flags);
        put_num(buf, size, &len, (info >> 4) & 0xffff, false);
        put_str(buf, size, &len, "/ ");
        return len;
}
