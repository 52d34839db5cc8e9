/* SPDX-License-Identifier: MIT */
/* perf_map.c: owns the parse of perf maps (JIT code's symbols) into a sym_table. */
#include "symbols/perf_map.h"
#include "read_text.h"
#include "symbols/sym_table.h"
#include "util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* One good line, kept until the last line of each start is known. */
struct pending {
        uint64_t start;
        uint64_t size;
        uint32_t name; /* offset in the input */
        uint32_t name_len;
        uint32_t seq; /* line order: the later wins */
};

static void set_error(struct perf_map_error *err, uint64_t offset, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static void set_error(struct perf_map_error *err, uint64_t offset, const char *fmt, ...)
{
        if (!err)
                return;
        err->offset = offset;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        va_end(ap);
}

static void clear_error(struct perf_map_error *err)
{
        if (!err)
                return;
        err->offset = 0;
        err->nr_bad_lines = 0;
        err->msg[0] = 0;
}

/* Counts a skipped line; the first one gives the message and offset. */
static void bad_line(struct perf_map_error *err, uint64_t offset, const char *why)
{
        if (!err)
                return;
        if (err->nr_bad_lines++ == 0)
                set_error(err, offset, "line at byte %llu skipped: %s", (unsigned long long)offset,
                          why);
}

static bool is_space(char c)
{
        return c == ' ' || c == '\t';
}

/* Skips spaces; false if there were none. */
static bool skip_spaces(const char *s, size_t n, size_t *i)
{
        size_t p = *i;
        while (*i < n && is_space(s[*i]))
                (*i)++;
        return *i != p;
}

/* One line `START SIZE NAME`; NULL if fine, else why not. */
static const char *parse_line(const char *s, size_t n, struct pending *p)
{
        size_t i = 0;
        skip_spaces(s, n, &i);
        if (!text_parse_hex(s, n, &i, &p->start))
                return "no hexadecimal start address";
        if (!skip_spaces(s, n, &i))
                return "no space after the start address";
        if (!text_parse_hex(s, n, &i, &p->size))
                return "no hexadecimal size";
        if (!skip_spaces(s, n, &i) || i == n)
                return "no name after the size";
        if (p->size && p->size - 1 > UINT64_MAX - p->start)
                return "the start plus the size passes the end of the address space";
        p->name_len = (uint32_t)(n - i);
        return NULL;
}

static int pending_cmp(const void *a, const void *b)
{
        const struct pending *x = a, *y = b;
        if (x->start != y->start)
                return x->start < y->start ? -1 : 1;
        return x->seq > y->seq ? -1 : x->seq < y->seq; /* the later line first */
}

int perf_map_parse_mem(const char *text, size_t len, struct sym_table *t,
                       struct perf_map_error *err)
{
        clear_error(err);
        if (len > PERF_MAP_MAX_INPUT) {
                set_error(err, 0, "%zu bytes of perf map: more than %u", len, PERF_MAP_MAX_INPUT);
                return -EFBIG;
        }
        struct pending *lines = NULL;
        uint32_t nr = 0, cap = 0;
        size_t pos = 0;
        while (pos < len) {
                size_t offset = pos;
                const char *s = text + pos;
                const char *nl = memchr(s, '\n', len - pos);
                size_t n = nl ? (size_t)(nl - s) : len - pos;
                pos += n + (nl ? 1 : 0);
                if (n && s[n - 1] == '\r')
                        n--;
                size_t blank = 0;
                skip_spaces(s, n, &blank);
                if (blank == n)
                        continue;
                if (nr == cap) {
                        cap = cap ? cap * 2 : 256;
                        lines = xrealloc(lines, cap * sizeof(*lines));
                }
                struct pending *p = &lines[nr];
                const char *why = parse_line(s, n, p);
                if (why) {
                        bad_line(err, offset, why);
                        continue;
                }
                p->name = (uint32_t)(offset + (n - p->name_len));
                p->seq = nr++;
        }
        if (nr)
                qsort(lines, nr, sizeof(*lines), pending_cmp);
        for (uint32_t i = 0; i < nr; i++) {
                const struct pending *p = &lines[i];
                if (i && p->start == p[-1].start)
                        continue;
                sym_table_add(t, p->start, p->size, text + p->name, p->name_len, 0);
        }
        free(lines);
        return 0;
}

/* Reads a whole regular file; with check_owner it must belong to root, owner_uid or us.
 *data is owned by the caller. */
static int read_whole(const char *path, uid_t owner_uid, bool check_owner, char **data,
                      size_t *size, struct perf_map_error *err)
{
        /* O_NONBLOCK: a FIFO in the file's place does not block the open; O_NOFOLLOW: nor
           does a symbolic link lead elsewhere */
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW);
        if (fd < 0) {
                int e = errno;
                set_error(err, 0, "cannot open %s: %s", path, strerror(e));
                return -e;
        }
        struct stat st;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
                close(fd);
                set_error(err, 0, "%s is not a regular file", path);
                return -EINVAL;
        }
        if (check_owner && st.st_uid != 0 && st.st_uid != owner_uid && st.st_uid != geteuid()) {
                close(fd);
                set_error(err, 0, "%s is owned by uid %u, neither root nor the process's owner",
                          path, (unsigned)st.st_uid);
                return -EPERM;
        }
        if (!err) {
                struct perf_map_error scratch;
                return read_text_fd(fd, path, 1u << 16, PERF_MAP_MAX_INPUT, data, size, scratch.msg,
                                    sizeof(scratch.msg), &scratch.offset);
        }
        return read_text_fd(fd, path, 1u << 16, PERF_MAP_MAX_INPUT, data, size, err->msg,
                            sizeof(err->msg), &err->offset);
}

static int read_map(const char *path, uid_t owner_uid, bool check_owner, struct sym_table **out,
                    struct perf_map_error *err)
{
        char *data = NULL;
        size_t size = 0;
        *out = NULL;
        clear_error(err);
        int rc = read_whole(path, owner_uid, check_owner, &data, &size, err);
        if (rc < 0)
                return rc;
        /* the JIT appends while we read: a last line without its newline may be cut short */
        while (size && data[size - 1] != '\n')
                size--;
        struct sym_table *t = sym_table_new();
        rc = perf_map_parse_mem(data, size, t, err);
        free(data);
        if (rc < 0) {
                sym_table_free(t);
                return rc;
        }
        sym_table_finish(t, PERF_MAP_MAX_INFERRED_SIZE);
        *out = t;
        return 0;
}

int perf_map_read_file(const char *path, struct sym_table **out, struct perf_map_error *err)
{
        return read_map(path, 0, false, out, err);
}

int perf_map_read(pid_t pid, struct sym_table **out, struct perf_map_error *err)
{
        char path[64], proc[64];
        snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
        snprintf(proc, sizeof(proc), "/proc/%d", (int)pid);
        struct stat st;
        /* a process that is gone has no owner: root's and our own maps are still fine */
        uid_t owner = stat(proc, &st) == 0 ? st.st_uid : 0;
        return read_map(path, owner, true, out, err);
}
