/* SPDX-License-Identifier: MIT */
/* kallsyms.c: owns the parse of /proc/kallsyms into one text symbol table plus the runs of
   addresses each module holds (its form in root's cache: kallsyms_parsed.c), and the parse of
   /proc/modules. */
#include "symbols/kallsyms.h"
#include "kallsyms_impl.h"
#include "read_text.h"
#include "symbols/sym_table.h"
#include "util/kallsyms_text.h"
#include "util/mem_policy.h"
#include "util/xalloc.h"
#include "util/elf_build_id.h"
#include "util/hash.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* One kept symbol while parsing: which module it came from. */
/* The most lines whose room a parse faults in ahead (four times 6.18's kallsyms). */
#define PREFAULT_LINES_MAX (1u << 19)

struct mark {
        uint64_t start;
        uint32_t seq; /* input order: equal starts stay in it */
        uint32_t module;
};

/* The parse's temporary state. */
struct builder {
        struct kallsyms *ks; /* borrowed: being built */
        struct mark *marks;  /* owned */
        uint32_t nr_marks, cap_marks;
        uint32_t *hash;       /* owned: module index + 1 by name, 0 empty; open addressing */
        uint32_t hash_cap;    /* a power of two */
        uint32_t last_module; /* module lines come grouped: most lookups hit this */
};

#define MODULE_NAME_MAX 64 /* bytes between the brackets; the kernel's MODULE_NAME_LEN is 56 */

static void set_error(struct kallsyms_error *err, uint64_t offset, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static void set_error(struct kallsyms_error *err, uint64_t offset, const char *fmt, ...)
{
        if (!err)
                return;
        err->offset = offset;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        va_end(ap);
}

/* Counts a skipped line; the first one gives the message and offset. */
static void bad_line(struct kallsyms_error *err, uint64_t offset, const char *why)
{
        if (!err)
                return;
        if (err->nr_bad_lines++ == 0)
                set_error(err, offset, "line at byte %llu skipped: %s", (unsigned long long)offset,
                          why);
}

static void clear_error(struct kallsyms_error *err)
{
        if (!err)
                return;
        err->offset = 0;
        err->nr_bad_lines = 0;
        err->msg[0] = 0;
}

static bool is_blank(const char *s, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                if (s[i] != ' ' && s[i] != '\t')
                        return false;
        }
        return true;
}

/* The next line of text[*pos, len) without its "\n" or "\r\n"; advances *pos past it. */
static size_t next_line(const char *text, size_t len, size_t *pos, const char **line)
{
        const char *s = text + *pos;
        const char *nl = memchr(s, '\n', len - *pos);
        size_t n = nl ? (size_t)(nl - s) : len - *pos;
        *pos += n + (nl ? 1 : 0);
        if (n && s[n - 1] == '\r')
                n--;
        *line = s;
        return n;
}

/* Reads a whole regular file (procfs files count) in large reads. *data is owned by the
   caller. O_NONBLOCK keeps a FIFO put in the file's place from blocking the open. */
static int read_whole(const char *path, char **data, size_t *size, struct kallsyms_error *err)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
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
        if (!err) {
                struct kallsyms_error scratch;
                return read_text_fd(fd, path, 1u << 20, KALLSYMS_MAX_INPUT, data, size, scratch.msg,
                                    sizeof(scratch.msg), &scratch.offset);
        }
        return read_text_fd(fd, path, 1u << 20, KALLSYMS_MAX_INPUT, data, size, err->msg,
                            sizeof(err->msg), &err->offset);
}

/* ---- module names ---- */

static uint32_t name_hash(const char *s, size_t n)
{
        return (uint32_t)hash_mix64(hash_fnv1a(s, n, HASH_FNV_OFFSET));
}

static const char *module_name(const struct kallsyms *ks, uint32_t module)
{
        return ks->names + ks->name_offs[module];
}

static bool name_equals(const struct kallsyms *ks, uint32_t module, const char *s, size_t n)
{
        const char *m = module_name(ks, module);
        return strncmp(m, s, n) == 0 && m[n] == 0;
}

static void hash_insert(struct builder *b, uint32_t module)
{
        const char *m = module_name(b->ks, module);
        uint32_t i = name_hash(m, strlen(m)) & (b->hash_cap - 1);
        while (b->hash[i])
                i = (i + 1) & (b->hash_cap - 1);
        b->hash[i] = module + 1;
}

/* The index of the module named s (n bytes, brackets included, no NUL), added if new. */
static uint32_t module_intern(struct builder *b, const char *s, size_t n)
{
        struct kallsyms *ks = b->ks;
        if (ks->nr_modules && name_equals(ks, b->last_module, s, n))
                return b->last_module;
        uint32_t i = name_hash(s, n) & (b->hash_cap - 1);
        for (; b->hash[i]; i = (i + 1) & (b->hash_cap - 1)) {
                if (name_equals(ks, b->hash[i] - 1, s, n))
                        return b->last_module = b->hash[i] - 1;
        }
        if (ks->nr_modules == ks->cap_modules) {
                ks->cap_modules = ks->cap_modules ? ks->cap_modules * 2 : 16;
                ks->name_offs = xrealloc(ks->name_offs, ks->cap_modules * sizeof(*ks->name_offs));
        }
        if (ks->names_len + n + 1 > ks->names_cap) {
                while (ks->names_len + n + 1 > ks->names_cap)
                        ks->names_cap = ks->names_cap ? ks->names_cap * 2 : 1024;
                ks->names = xrealloc(ks->names, ks->names_cap);
        }
        memcpy(ks->names + ks->names_len, s, n);
        ks->names[ks->names_len + n] = 0;
        uint32_t module = ks->nr_modules++;
        ks->name_offs[module] = (uint32_t)ks->names_len;
        ks->names_len += n + 1;
        /* keep the table at most half full */
        if (ks->nr_modules * 2 > b->hash_cap) {
                free(b->hash);
                b->hash_cap *= 2;
                b->hash = xcalloc(b->hash_cap, sizeof(*b->hash));
                for (uint32_t m = 0; m < ks->nr_modules; m++)
                        hash_insert(b, m);
        } else {
                b->hash[i] = module + 1;
        }
        return b->last_module = module;
}

/* ---- /proc/kallsyms ---- */

static void add_mark(struct builder *b, uint64_t start, uint32_t module)
{
        if (b->nr_marks == b->cap_marks) {
                b->cap_marks = b->cap_marks ? b->cap_marks * 2 : 4096;
                b->marks = xrealloc(b->marks, b->cap_marks * sizeof(*b->marks));
        }
        b->marks[b->nr_marks] = (struct mark){start, b->nr_marks, module};
        b->nr_marks++;
}

static bool is_text_type(char type)
{
        return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

/* One line `ADDR TYPE NAME[\t[MODULE]]`; NULL if fine, else why it is bad. *addr is set to
   the line's address once it is known to be a line. */
static const char *parse_symbol(struct builder *b, const char *s, size_t n, uint64_t *addr)
{
        size_t i = 0;
        if (!text_parse_hex(s, n, &i, addr))
                return "no hexadecimal address";
        if (i >= n || s[i] != ' ')
                return "no space after the address";
        i++;
        if (i >= n || s[i] == ' ' || s[i] == '\t')
                return "no symbol type";
        char type = s[i++];
        if (i >= n || s[i] != ' ')
                return "the symbol type is not one letter";
        i++;
        size_t name = i;
        while (i < n && s[i] != '\t')
                i++;
        size_t name_len = i - name;
        if (!name_len)
                return "no symbol name";
        uint32_t module = 0;
        if (i < n) {
                const char *m = s + i + 1;
                size_t m_len = n - i - 1;
                if (m_len >= 2 && m[0] == '[' && m[m_len - 1] == ']') {
                        m++;
                        m_len -= 2;
                }
                if (!m_len || m_len > MODULE_NAME_MAX)
                        return "no module name, or a too long one, after the tab";
                char bracketed[MODULE_NAME_MAX + 2];
                bracketed[0] = '[';
                for (size_t k = 0; k < m_len; k++) {
                        unsigned char ch = (unsigned char)m[k];
                        bracketed[k + 1] = (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
                }
                bracketed[m_len + 1] = ']';
                module = module_intern(b, bracketed, m_len + 2);
        }
        if (!is_text_type(type) || *addr == 0)
                return NULL; /* data, or an undefined weak symbol: not ours */
        /* no binding flags: an address's last alias is its name, whatever its type
           (sym_table_choose_last_alias) */
        uint32_t flags = 0;
        if (sym_name_is_padding(s + name, name_len))
                flags |= SYM_FLAG_PADDING;
        uint64_t size = 0;
        if (module == 0) {
                /* _etext and _einittext end the core kernel's text: given a size of 1 they stop
                   the symbol before them from running on into the data after */
                if (name_len == 6 && memcmp(s + name, "_stext", 6) == 0) {
                        b->ks->stext = *addr;
                } else if (name_len == 6 && memcmp(s + name, "_etext", 6) == 0) {
                        b->ks->etext = *addr;
                        size = 1;
                } else if (name_len == 10 && memcmp(s + name, "_einittext", 10) == 0) {
                        size = 1;
                }
        }
        sym_table_add(b->ks->table, *addr, size, s + name, name_len, flags);
        add_mark(b, *addr, module);
        return NULL;
}

static int mark_cmp(const void *a, const void *b)
{
        const struct mark *x = a, *y = b;
        if (x->start != y->start)
                return x->start < y->start ? -1 : 1;
        return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The runs from the marks. Of several symbols at one start the table keeps one; the run takes
   the module of the first, which is the same unless two modules claim one address. */
static void build_runs(struct builder *b)
{
        struct kallsyms *ks = b->ks;
        if (!b->nr_marks)
                return;
        /* in file order (seq) the kernel's marks come by address, the modules' after them:
           only what follows the ordered part is sorted, and merged in (as sym_table_finish) */
        uint32_t p = 1, n = b->nr_marks;
        while (p < n && b->marks[p - 1].start <= b->marks[p].start)
                p++;
        if (p < n) {
                qsort(b->marks + p, n - p, sizeof(*b->marks), mark_cmp);
                struct mark *m = xmalloc(n * sizeof(*m));
                uint32_t i = 0, j = p, k = 0;
                while (i < p && j < n)
                        m[k++] = mark_cmp(&b->marks[i], &b->marks[j]) <= 0 ? b->marks[i++]
                                                                           : b->marks[j++];
                while (i < p)
                        m[k++] = b->marks[i++];
                while (j < n)
                        m[k++] = b->marks[j++];
                free(b->marks);
                b->marks = m;
                b->cap_marks = n;
        }
        uint32_t cap = 16;
        ks->runs = xmalloc(cap * sizeof(*ks->runs));
        for (uint32_t i = 0; i < b->nr_marks; i++) {
                const struct mark *m = &b->marks[i];
                if (i && m->start == m[-1].start)
                        continue; /* the table keeps one symbol per start */
                if (ks->nr_runs && ks->runs[ks->nr_runs - 1].module == m->module)
                        continue;
                if (ks->nr_runs == cap) {
                        cap *= 2;
                        ks->runs = xrealloc(ks->runs, cap * sizeof(*ks->runs));
                }
                ks->runs[ks->nr_runs++] = (struct module_run){m->start, m->module, 0};
        }
}

void kallsyms_free(struct kallsyms *ks)
{
        if (!ks)
                return;
        sym_table_free(ks->table);
        if (!ks->is_mapped) {
                free(ks->runs);
                free(ks->names);
                free(ks->name_offs);
        }
        kallsyms_cache_unmap(&ks->map);
        free(ks);
}

int kallsyms_parse_mem(const char *text, size_t len, struct kallsyms **out,
                       struct kallsyms_error *err)
{
        *out = NULL;
        clear_error(err);
        if (len > KALLSYMS_MAX_INPUT) {
                set_error(err, 0, "%zu bytes of kallsyms: more than %u", len, KALLSYMS_MAX_INPUT);
                return -EFBIG;
        }
        struct kallsyms *ks = xcalloc(1, sizeof(*ks));
        ks->table = sym_table_new();
        sym_table_choose_last_alias(ks->table);
        struct builder b = {.ks = ks, .hash_cap = 64};
        b.hash = xcalloc(b.hash_cap, sizeof(*b.hash));
        /* the room for the lines' symbols and marks, faulted in at once (10 MB for 6.18's
           kallsyms: 2,000 page faults of the screen's cold start otherwise): a line of it is 44
           bytes, nearly all of them text symbols, their names 25 bytes; fewer lines are taken
           (48 bytes each) so that the room is filled whatever else the file holds */
        size_t lines = len / 48 < PREFAULT_LINES_MAX ? len / 48 : PREFAULT_LINES_MAX;
        if (lines) {
                sym_table_prefault(ks->table, (uint32_t)lines, lines * 24);
                b.cap_marks = (uint32_t)lines;
                b.marks = xmalloc(lines * sizeof(*b.marks));
                mem_policy_populate(b.marks, lines * sizeof(*b.marks));
        }
        module_intern(&b, KALLSYMS_KERNEL_MODULE, strlen(KALLSYMS_KERNEL_MODULE));

        uint64_t nr_lines = 0;
        bool has_address = false;
        size_t pos = 0;
        while (pos < len) {
                uint64_t offset = pos;
                const char *line;
                size_t n = next_line(text, len, &pos, &line);
                if (is_blank(line, n))
                        continue;
                uint64_t addr = 0;
                const char *why = parse_symbol(&b, line, n, &addr);
                if (why) {
                        bad_line(err, offset, why);
                        continue;
                }
                nr_lines++;
                has_address |= addr != 0;
        }
        free(b.hash);
        if (nr_lines && !has_address) {
                free(b.marks);
                kallsyms_free(ks);
                set_error(err, 0,
                          "kernel addresses are hidden (all %llu are zero, kernel.kptr_restrict): "
                          "run as root, or sysctl kernel.kptr_restrict=0 (with "
                          "kernel.perf_event_paranoid<=1 for other users)",
                          (unsigned long long)nr_lines);
                return -EPERM;
        }
        sym_table_finish(ks->table, KALLSYMS_MAX_SYMBOL_SIZE);
        build_runs(&b);
        free(b.marks);
        *out = ks;
        return 0;
}

int kallsyms_read(const char *path, struct kallsyms **out, struct kallsyms_error *err)
{
        char *data = NULL, *state = NULL;
        const char *text = NULL; /* data, or the kept text where it lies */
        struct kallsyms_cache_map kept = {0};
        size_t size = 0;
        *out = NULL;
        clear_error(err);
        int rc = 0;
        if (!path) {
                /* the state before the text is read (as kallsyms_text_read takes it): a parse of
                   a text newer than the state is stored under a state that has passed, never a
                   text older than the state under it. In it, the parse of a warm start (27-36 ms
                   of a screen's start, the tables' faults with it) is a mapping. */
                state = kallsyms_cache_is_kept() ? kallsyms_text_state() : NULL;
                *out = state ? kallsyms_parsed_load(state) : NULL;
                if (*out) {
                        free(state);
                        return 0;
                }
                if (state && kallsyms_text_map(state, &kept)) {
                        /* the text another etwtop (a live session's host) kept in this state,
                           parsed where it lies: a copy into fresh pages cost more than the
                           parse's reads */
                        text = kept.data;
                        size = kept.len;
                } else {
                        /* the process's one read while modules stay (a live session's logger
                           reads it at its stop too) */
                        text = data = kallsyms_text_read(&size, NULL, NULL);
                        if (!data) {
                                rc = -errno;
                                set_error(err, 0, "cannot read /proc/kallsyms: %s",
                                          strerror(errno));
                        }
                }
        } else {
                rc = read_whole(path, &data, &size, err);
                text = data;
        }
        if (rc == 0) {
                rc = kallsyms_parse_mem(text, size, out, err);
                if (rc == 0 && state)
                        kallsyms_parsed_store(state, *out);
        }
        kallsyms_cache_unmap(&kept);
        free(data);
        free(state);
        return rc;
}

/* The module of the symbol starting at start: the last run starting at or before it (the first
   run starts at the lowest symbol, so there is one). */
static const char *module_at(const struct kallsyms *ks, uint64_t start)
{
        uint64_t until;
        return kallsyms_module_from(ks, start, &until);
}

const char *kallsyms_module_from(const struct kallsyms *ks, uint64_t start, uint64_t *until)
{
        *until = UINT64_MAX;
        if (!ks || !ks->nr_runs)
                return NULL;
        uint32_t lo = 0, hi = ks->nr_runs;
        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (ks->runs[mid].start <= start)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo < ks->nr_runs)
                *until = ks->runs[lo].start;
        return module_name(ks, lo ? ks->runs[lo - 1].module : 0);
}

const char *kallsyms_symbol_module(const struct kallsyms *ks, const struct sym_entry *e)
{
        return ks && e && ks->nr_runs ? module_at(ks, e->start) : NULL;
}

bool kallsyms_lookup(const struct kallsyms *ks, uint64_t addr, struct kallsyms_hit *hit)
{
        if (!ks)
                return false;
        const struct sym_entry *e = sym_table_find(ks->table, addr);
        if (!e || !ks->nr_runs)
                return false;
        hit->name = sym_table_name(ks->table, e);
        hit->module = module_at(ks, e->start);
        hit->start = e->start;
        hit->offset = addr - e->start;
        return true;
}

const struct sym_table *kallsyms_table(const struct kallsyms *ks)
{
        return ks ? ks->table : NULL;
}

bool kallsyms_kernel_text(const struct kallsyms *ks, uint64_t *start, uint64_t *end)
{
        if (!ks || !ks->stext || ks->etext <= ks->stext)
                return false;
        *start = ks->stext;
        *end = ks->etext;
        return true;
}

/* ---- the running kernel's build-id ---- */

int kallsyms_notes_build_id(const uint8_t *notes, size_t len, uint8_t out[20], uint32_t *size)
{
        *size = elf_build_id_from_notes(notes, len, out, 20);
        return *size ? 0 : -ENOENT;
}

int kallsyms_running_build_id(const char *path, uint8_t out[20], uint32_t *size)
{
        uint8_t notes[4096];
        int fd = open(path ? path : "/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        size_t len = 0;
        while (len < sizeof(notes)) {
                ssize_t got = read(fd, notes + len, sizeof(notes) - len);
                if (got < 0) {
                        int rc = -errno;
                        close(fd);
                        return rc;
                }
                if (got == 0)
                        break;
                len += (size_t)got;
        }
        close(fd);
        return kallsyms_notes_build_id(notes, len, out, size);
}

/* ---- /proc/modules ---- */

/* The next field separated by spaces or tabs; false at the end of the line. */
static bool next_field(const char *s, size_t n, size_t *i, const char **field, size_t *field_len)
{
        while (*i < n && (s[*i] == ' ' || s[*i] == '\t'))
                (*i)++;
        size_t start = *i;
        while (*i < n && s[*i] != ' ' && s[*i] != '\t')
                (*i)++;
        *field = s + start;
        *field_len = *i - start;
        return *field_len != 0;
}

static bool parse_dec(const char *s, size_t n, uint64_t *out)
{
        uint64_t v = 0;
        if (!n)
                return false;
        for (size_t i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return false;
                uint64_t d = (uint64_t)(s[i] - '0');
                if (v > (UINT64_MAX - d) / 10)
                        return false;
                v = v * 10 + d;
        }
        *out = v;
        return true;
}

/* One line `name size refcount deps state address [taints]`; NULL if fine, else why not. */
static const char *parse_module(const char *s, size_t n, struct kallsyms_module *m)
{
        const char *f[6];
        size_t f_len[6];
        size_t i = 0;
        for (int k = 0; k < 6; k++) {
                if (!next_field(s, n, &i, &f[k], &f_len[k]))
                        return "fewer than 6 fields";
        }
        if (f_len[0] >= sizeof(m->name))
                return "the module name is too long";
        if (!parse_dec(f[1], f_len[1], &m->size))
                return "the size is not a decimal number";
        size_t p = 0;
        if (!text_parse_hex(f[5], f_len[5], &p, &m->base) || p != f_len[5])
                return "the address is not a hexadecimal number";
        for (size_t k = 0; k < f_len[0]; k++) {
                unsigned char ch = (unsigned char)f[0][k];
                m->name[k] = (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
        }
        m->name[f_len[0]] = 0;
        return NULL;
}

int kallsyms_modules_parse_mem(const char *text, size_t len, struct kallsyms_module **out,
                               uint32_t *nr_out, struct kallsyms_error *err)
{
        *out = NULL;
        *nr_out = 0;
        clear_error(err);
        if (len > KALLSYMS_MAX_INPUT) {
                set_error(err, 0, "%zu bytes of modules: more than %u", len, KALLSYMS_MAX_INPUT);
                return -EFBIG;
        }
        struct kallsyms_module *mods = NULL;
        uint32_t nr = 0, cap = 0, nr_lines = 0;
        size_t pos = 0;
        while (pos < len) {
                uint64_t offset = pos;
                const char *line;
                size_t n = next_line(text, len, &pos, &line);
                if (is_blank(line, n))
                        continue;
                if (nr == cap) {
                        cap = cap ? cap * 2 : 64;
                        mods = xrealloc(mods, cap * sizeof(*mods));
                }
                const char *why = parse_module(line, n, &mods[nr]);
                if (why) {
                        bad_line(err, offset, why);
                        continue;
                }
                nr_lines++;
                if (mods[nr].base) /* 0 only when hidden: then all are */
                        nr++;
        }
        if (nr_lines && !nr) {
                free(mods);
                set_error(err, 0,
                          "module addresses are hidden (all %u are zero, kernel.kptr_restrict): "
                          "run as root, or sysctl kernel.kptr_restrict=0",
                          nr_lines);
                return -EPERM;
        }
        if (!nr) {
                free(mods);
                mods = NULL;
        }
        *out = mods;
        *nr_out = nr;
        return 0;
}

int kallsyms_modules_read(const char *path, struct kallsyms_module **out, uint32_t *nr_out,
                          struct kallsyms_error *err)
{
        char *data = NULL;
        size_t size = 0;
        *out = NULL;
        *nr_out = 0;
        clear_error(err);
        if (!path)
                path = "/proc/modules";
        int rc = read_whole(path, &data, &size, err);
        if (rc < 0)
                return rc;
        rc = kallsyms_modules_parse_mem(data, size, out, nr_out, err);
        free(data);
        return rc;
}
