/* SPDX-License-Identifier: MIT */
/* ksyms.c: the kernel's symbols: /proc/kallsyms read and kept, the blocking functions' places
   (wait reasons), the kernel image's identity and its DCStart, the KernelSymbol events at a stop.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "ksym_index.h"
#include "live_int.h"
#include "util/kallsyms_text.h"
#include "util/mem_policy.h"
#include "util/xalloc.h"
#include "util/clock.h"

static void drain_between(void *ctx)
{
        live_drain_all(ctx);
}

/* /proc/kallsyms whole, NUL-terminated (owned by the caller), its length in *len; NULL when it
   cannot be read. The kernel formats it as it is read, about 40 ms for the whole: with ls, the
   events may be on, and the rings are emptied between reads of 64 KiB. The process reads it once
   while modules stay (util/kallsyms_text.h): the screen's symbols read it at the start. */
static char *kallsyms_read(struct live_source *ls, size_t *len_out)
{
        return kallsyms_text_read(len_out, ls ? drain_between : NULL, ls);
}

/* Aliases (one address, several names) keep their kallsyms order: names lie in text in that
   order, so a stable sort whatever qsort is. */
static int ksym_cmp(const void *a, const void *b)
{
        const struct perf_ksym *x = a, *y = b;
        if (x->addr != y->addr)
                return x->addr < y->addr ? -1 : 1;
        return x->name < y->name ? -1 : x->name > y->name;
}

/* A hexadecimal digit's value plus one, 0 for any other character (a table: the parse of the
   100,000 and more lines of kallsyms spent a seventh of its instructions on the digits). */
static const uint8_t hex_digit[256] = {
        ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,
        ['6'] = 7,  ['7'] = 8,  ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12,
        ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16, ['A'] = 11, ['B'] = 12,
        ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16};

/* The text symbols of kallsyms text of len bytes (cut into names in place), sorted by address and
   sized to the next one (4 KiB when that is over 1 MiB away). Returns an owned array of *nr. */
struct perf_ksym *ksyms_parse(char *text, size_t len, size_t *nr_out)
{
        char *end = text + len;
        /* room for as many symbols as lines of 48 bytes, faulted in at once (a line of 6.18's
           kallsyms is 44 bytes, nearly all of them text symbols): past it, grown as before */
        size_t nr = 0, cap_syms = (size_t)(end - text) / 48 + 1024;
        struct perf_ksym *syms = xmalloc(cap_syms * sizeof(*syms));
        mem_policy_populate(syms, (cap_syms - 1024) * sizeof(*syms));
        for (char *line = text, *nl; line < end; line = nl + 1) {
                /* "ADDR TYPE NAME" or "ADDR TYPE NAME\t[MODULE]": one pass over the line */
                nl = memchr(line, '\n', (size_t)(end - line));
                if (!nl)
                        nl = end;
                *nl = 0;
                uint64_t addr = 0;
                char *p = line;
                for (unsigned v; (v = hex_digit[(unsigned char)*p]) != 0; p++)
                        addr = addr << 4 | (v - 1);
                if (p == line || p[0] != ' ' || !p[1] || p[2] != ' ')
                        continue;
                char type = p[1];
                if (type != 't' && type != 'T' && type != 'w' && type != 'W')
                        continue;
                char *name = p + 3, *mod = strchr(name, '\t');
                if (mod) {
                        *mod++ = 0;
                        mod[strcspn(mod, " ")] = 0;
                }
                /* __pfx_ and __cfi_ are the padding before a function (perf skips them): the
                   function before runs over it, as the symbol store reads kallsyms; an idle
                   stack's return address lands exactly on one */
                bool is_padding = name[0] == '_' && name[1] == '_' &&
                                  (!strncmp(name, "__pfx_", 6) || !strncmp(name, "__cfi_", 6));
                if (!addr || is_padding)
                        continue;
                if (nr == cap_syms) {
                        cap_syms *= 2;
                        syms = xrealloc(syms, cap_syms * sizeof(*syms));
                }
                syms[nr].addr = addr;
                syms[nr].name = name;
                syms[nr].module = mod ? mod : "";
                nr++;
        }
        /* the kernel lists its own symbols in address order, modules after: sort only when not */
        bool in_order = true;
        for (size_t i = 1; i < nr && in_order; i++)
                in_order = syms[i - 1].addr <= syms[i].addr;
        if (!in_order)
                qsort(syms, nr, sizeof(*syms), ksym_cmp);
        for (size_t i = 0; i < nr; i++) {
                uint64_t next = i + 1 < nr ? syms[i + 1].addr : syms[i].addr + 4096;
                uint64_t size = next - syms[i].addr;
                syms[i].size = size > (1u << 20) ? 4096 : size;
        }
        *nr_out = nr;
        return syms;
}

/* The core kernel's of nr symbols (no [module] tag) packed: each to out[j] (j <= i: out may be
   syms itself), its name to names + its offset there (moved, not copied: names may be the text
   they lie in, in its order, each moved towards its front, never past its place), its module "".
   Returns the names' bytes. */
static size_t ksyms_pack_core(const struct perf_ksym *syms, size_t nr, struct perf_ksym *out,
                              char *names)
{
        size_t o = 0, j = 0;
        for (size_t i = 0; i < nr; i++) {
                if (syms[i].module[0])
                        continue;
                struct perf_ksym s = syms[i];
                size_t n = strlen(s.name) + 1;
                memmove(names + o, s.name, n);
                s.name = names + o;
                s.module = "";
                out[j++] = s;
                o += n;
        }
        return o;
}

/* Keeps the core kernel's text symbols (no [module] tag: the kernel image, init text included)
   of nr parsed ones, their names copied to ls->ksym_names. They never change, so later rundowns
   and the close write their events from here instead of reading kallsyms again when they
   suffice (ksyms_suffice). */
static void ksyms_keep(struct live_source *ls, const struct perf_ksym *syms, size_t nr)
{
        size_t k = 0, bytes = 0;
        for (size_t i = 0; i < nr; i++) {
                if (!syms[i].module[0]) {
                        k++;
                        bytes += strlen(syms[i].name) + 1;
                }
        }
        if (k < 2)
                return;
        struct perf_ksym *kept = xmalloc(k * sizeof(*kept));
        char *names = xmalloc(bytes);
        /* both written whole, below */
        mem_policy_populate(kept, k * sizeof(*kept));
        mem_policy_populate(names, bytes);
        ksyms_pack_core(syms, nr, kept, names);
        ls->ksyms = kept;
        ls->nr_ksyms = k;
        ls->ksym_names = names;
}

/* ksyms_keep where the caller is done with the parse and its text (text_len bytes): they are
   taken, *syms and *text set to NULL, and the core kernel's symbols kept in them, moved to their
   fronts, the rest of each given back. No new memory (on a 2-CPU VM, a fresh page costs 5 to 15
   us: the copies were 1,400 of them, and a second pass over 100,000 names, a tenth of a cold
   start's read of kallsyms). Where the names do not lie in text in the symbols' order (the parse
   sorted them: modules loaded between the kernel's symbols), they are copied as ksyms_keep does. */
void ksyms_keep_taken(struct live_source *ls, struct perf_ksym **syms, size_t nr, char **text,
                      size_t text_len)
{
        struct perf_ksym *s = *syms;
        const char *last = NULL;
        size_t k = 0;
        for (size_t i = 0; i < nr; i++) {
                if (s[i].module[0])
                        continue;
                if (s[i].name <= last || s[i].name < *text) {
                        ksyms_keep(ls, s, nr);
                        return;
                }
                last = s[i].name;
                k++;
        }
        if (k < 2)
                return;
        char *names = *text;
        size_t o = ksyms_pack_core(s, nr, s, names);
        /* the text past the names given back in place (a realloc may move them) */
        mem_policy_release(names + o, text_len - o);
        struct perf_ksym *fewer = realloc(s, k * sizeof(*s));
        ls->ksyms = fewer ? fewer : s;
        ls->nr_ksyms = k;
        ls->ksym_names = names;
        *syms = NULL;
        *text = NULL;
}

/* The blocking functions' places in root's cache (util/kallsyms_text.h), a file a kernel state
   and the converter's list of functions (perf_wait_reasons_hash): a session's start found them
   by reading all of kallsyms and naming every core kernel symbol, 60 to 70 ms of its host's CPU
   on a 2-CPU VM (the largest part of the switches' start), where the start's other reads of
   kallsyms come from the cache already. Each place is three 64-bit words: start, end, reason. */
#define WAIT_SITE_WORDS 3

static void wait_sites_name(char *name, size_t size)
{
        snprintf(name, size, "waitsites.%08x.table", (unsigned)perf_wait_reasons_hash());
}

/* ls's wait sites from the cache file of state: false (nothing set) when there is none, or it
   is not whole. */
static bool wait_sites_cached(struct live_source *ls, const char *state)
{
        char name[64];
        wait_sites_name(name, sizeof(name));
        struct kallsyms_cache_map m;
        if (!kallsyms_cache_map(name, state, &m))
                return false;
        size_t each = WAIT_SITE_WORDS * sizeof(uint64_t);
        size_t n = m.len / each;
        bool is_whole = m.len % each == 0 && n <= UINT32_MAX;
        const uint64_t *w = m.data;
        /* in address order, as the converter looks them up */
        for (size_t i = 0; i < n && is_whole; i++)
                is_whole = w[WAIT_SITE_WORDS * i] < w[WAIT_SITE_WORDS * i + 1] &&
                           w[WAIT_SITE_WORDS * i + 2] <= UINT8_MAX &&
                           (!i || w[WAIT_SITE_WORDS * (i - 1)] <= w[WAIT_SITE_WORDS * i]);
        if (is_whole) {
                free(ls->wait_sites);
                ls->wait_sites = n ? xcalloc(n, sizeof(*ls->wait_sites)) : NULL;
                for (size_t i = 0; i < n; i++)
                        ls->wait_sites[i] = (struct perf_wait_site){
                                w[WAIT_SITE_WORDS * i], w[WAIT_SITE_WORDS * i + 1],
                                (uint8_t)w[WAIT_SITE_WORDS * i + 2]};
                ls->nr_wait_sites = (uint32_t)n;
        }
        kallsyms_cache_unmap(&m);
        return is_whole;
}

static void wait_sites_store(const struct live_source *ls, const char *state)
{
        size_t n = ls->nr_wait_sites;
        uint64_t *w = xcalloc(n ? WAIT_SITE_WORDS * n : 1, sizeof(uint64_t));
        for (size_t i = 0; i < n; i++) {
                w[WAIT_SITE_WORDS * i] = ls->wait_sites[i].start;
                w[WAIT_SITE_WORDS * i + 1] = ls->wait_sites[i].end;
                w[WAIT_SITE_WORDS * i + 2] = ls->wait_sites[i].reason;
        }
        char name[64];
        wait_sites_name(name, sizeof(name));
        kallsyms_cache_store(name, state, w, WAIT_SITE_WORDS * n * sizeof(uint64_t));
        free(w);
}

/* The converter's blocking functions (perf_wait_reason_of_function) with their places, from the
   kept kernel symbols or one read of /proc/kallsyms (whose core symbols are then kept): read on a
   thread of their own by the start's rundown or by the update that turns the switches on
   (rundown_wait_sites), before any switch is converted; the converter's call then finds them.
   None where kallsyms hides the addresses. */
uint32_t ksyms_wait_sites(void *ctx, const struct perf_wait_site **out)
{
        struct live_source *ls = ctx;
        *out = ls->wait_sites;
        if (ls->has_wait_sites)
                return ls->nr_wait_sites; /* read by the start's rundown */
        ls->has_wait_sites = true;
        *out = NULL;
        if (!ls->caps.has_kallsyms)
                return 0;
        char *text = NULL;
        struct perf_ksym *parsed = NULL;
        const struct perf_ksym *syms = ls->ksyms;
        size_t nr = ls->nr_ksyms;
        /* the kernel's state taken before its text is read, as kallsyms_text_read does */
        char *state = !syms && kallsyms_cache_is_kept() ? kallsyms_text_state() : NULL;
        if (state && wait_sites_cached(ls, state)) {
                free(state);
                *out = ls->wait_sites;
                return ls->nr_wait_sites;
        }
        if (!syms) {
                size_t len = 0;
                text = kallsyms_read(NULL, &len);
                if (!text)
                        return 0;
                parsed = ksyms_parse(text, len, &nr);
                syms = parsed;
                /* kept for the close's KernelSymbol events, which then read and parse
                   kallsyms again only when a frame fell outside the kernel image */
                ksyms_keep_taken(ls, &parsed, nr, &text, len);
                if (ls->ksyms) {
                        syms = ls->ksyms;
                        nr = ls->nr_ksyms;
                }
        }
        uint32_t n = 0, cap = 0;
        for (size_t i = 0; i < nr; i++) {
                if (syms[i].module[0])
                        continue;
                int reason = perf_wait_reason_of_function(syms[i].name);
                if (reason < 0 || !syms[i].size)
                        continue;
                if (n == cap) {
                        cap = cap ? cap * 2 : 32;
                        ls->wait_sites = xrealloc(ls->wait_sites, cap * sizeof(*ls->wait_sites));
                }
                ls->wait_sites[n++] = (struct perf_wait_site){
                        syms[i].addr, syms[i].addr + syms[i].size, (uint8_t)reason};
        }
        free(parsed);
        free(text);
        ls->nr_wait_sites = n;
        *out = ls->wait_sites; /* ksyms_parse sorted them by address */
        if (state)
                wait_sites_store(ls, state);
        free(state);
        return n;
}

void live_source_set_wait_sites(struct live_source *ls, const struct perf_wait_site *sites,
                                uint32_t nr)
{
        free(ls->wait_sites);
        ls->wait_sites = nr ? xmalloc(nr * sizeof(*sites)) : NULL;
        if (nr)
                memcpy(ls->wait_sites, sites, nr * sizeof(*sites));
        ls->nr_wait_sites = nr;
        ls->has_wait_sites = true;
}

/* The start and end of the kernel's text without reading all of /proc/kallsyms: _text and
   _stext lie among its first lines, and /proc/iomem's "Kernel code" range (shown to root) runs
   from _text to _etext on x86. False when either is not found. */
static bool kernel_text_quick(uint64_t *stext_out, uint64_t *etext_out)
{
#if defined(__x86_64__) || defined(__i386__)
        uint64_t text = 0, stext = 0, lo = 0, hi = 0;
        char line[256];
        FILE *f = fopen("/proc/kallsyms", "re");
        if (!f)
                return false;
        for (int i = 0; i < 32 && (!text || !stext) && fgets(line, sizeof(line), f); i++) {
                char *sp = strchr(line, ' ');
                if (!sp)
                        break;
                if (strcmp(sp, " T _stext\n") == 0)
                        stext = strtoull(line, NULL, 16);
                else if (strcmp(sp, " T _text\n") == 0)
                        text = strtoull(line, NULL, 16);
        }
        fclose(f);
        f = fopen("/proc/iomem", "re");
        if (!f)
                return false;
        while (fgets(line, sizeof(line), f)) {
                const char *name = strstr(line, " : Kernel code\n");
                if (name && sscanf(line, " %" SCNx64 "-%" SCNx64, &lo, &hi) == 2)
                        break;
                lo = hi = 0;
        }
        fclose(f);
        if (!text || !stext || stext < text || hi <= lo)
                return false;
        *stext_out = stext;
        *etext_out = text + (hi + 1 - lo);
        return *etext_out > stext;
#else
        (void)stext_out;
        (void)etext_out;
        return false;
#endif
}

/* The running kernel's build-id (/sys/kernel/notes' GNU note) in bid; its size, 0 when none. */
static uint32_t running_build_id(uint8_t bid[20])
{
        uint8_t notes[4096];
        uint32_t bid_size = 0;
        int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        ssize_t got = read(fd, notes, sizeof(notes));
        close(fd);
        for (size_t p = 0; got > 0 && p + 12 <= (size_t)got;) {
                uint32_t namesz, descsz, type;
                memcpy(&namesz, notes + p, 4);
                memcpy(&descsz, notes + p + 4, 4);
                memcpy(&type, notes + p + 8, 4);
                size_t d = p + 12 + ((namesz + 3u) & ~3u);
                if (d + descsz > (size_t)got)
                        break;
                if (type == 3 && namesz == 4 && memcmp(notes + p + 12, "GNU", 4) == 0) {
                        bid_size = descsz < 20 ? descsz : 20;
                        memcpy(bid, notes + d, bid_size);
                        break;
                }
                p = d + ((descsz + 3u) & ~3u);
        }
        return bid_size;
}

uint32_t ksyms_running_build_id_at(const char *release, const char *ref_name, uint64_t ref_addr,
                                   uint8_t bid[20])
{
        struct utsname u;
        if (!release || !ref_name || !ref_addr || uname(&u) < 0 || strcmp(u.release, release) != 0)
                return 0;
        /* the symbol perf's map is relative to, among /proc/kallsyms' first lines (0 where the
           addresses are hidden from this user: no match then) */
        char want[64], line[256];
        snprintf(want, sizeof(want), " %s\n", ref_name);
        uint64_t addr = 0;
        FILE *f = fopen("/proc/kallsyms", "re");
        if (!f)
                return 0;
        for (int i = 0; i < 64 && !addr && fgets(line, sizeof(line), f); i++) {
                char *sp = strchr(line, ' ');
                if (sp && (sp[1] == 'T' || sp[1] == 't') && strcmp(sp + 2, want) == 0)
                        addr = strtoull(line, NULL, 16);
        }
        fclose(f);
        return addr && addr == ref_addr ? running_build_id(bid) : 0;
}

/* The kernel image ([kernel.kallsyms], pid 0) from _stext.._etext and /sys/kernel/notes, read
   before the events are enabled. The text's end comes from /proc/iomem where it can
   (kernel_text_quick); otherwise from all of /proc/kallsyms, whose symbols are then kept
   (ksyms_keep) for the kernel symbols' events. */
void ksyms_kernel_image(struct live_source *ls)
{
        uint64_t stext = 0, etext = 0;
        if (!ls->caps.has_kallsyms)
                return;
        if (!kernel_text_quick(&stext, &etext)) {
                size_t len = 0, nr = 0;
                char *text = kallsyms_read(NULL, &len);
                if (!text)
                        return;
                for (char *line = text; *line && (!stext || !etext);) {
                        char *nl = strchr(line, '\n');
                        char *sp = strchr(line, ' ');
                        if (sp && (!nl || sp < nl)) {
                                if (strncmp(sp, " T _stext\n", 10) == 0)
                                        stext = strtoull(line, NULL, 16);
                                else if (strncmp(sp + 2, " _etext\n", 8) == 0)
                                        etext = strtoull(line, NULL, 16);
                        }
                        if (!nl)
                                break;
                        line = nl + 1;
                }
                struct perf_ksym *syms = ksyms_parse(text, len, &nr);
                ksyms_keep_taken(ls, &syms, nr, &text, len);
                free(syms);
                free(text);
        }
        if (!stext || etext <= stext)
                return;
        uint8_t bid[20];
        uint32_t bid_size = running_build_id(bid);
        ls->kernel_text = stext;
        ls->kernel_text_size = etext - stext;
        memcpy(ls->kernel_build_id, bid, bid_size);
        ls->kernel_build_id_size = bid_size;
}

void ksyms_rundown_kernel(struct live_source *ls, uint64_t ts)
{
        if (!ls->kernel_text_size)
                return;
        struct perf_conv_image im = {
                0,
                ls->kernel_text,
                ls->kernel_text_size,
                0,
                "[kernel.kallsyms]",
                ls->kernel_build_id,
                ls->kernel_build_id_size,
                ETWTOP_IMAGE_FLAG_RUNDOWN |
                        (ls->kernel_build_id_size ? ETWTOP_IMAGE_FLAG_BUILD_ID_FROM_FILE : 0)};
        perf_conv_image(ls->conv, WMI_LOG_TYPE_IMAGE_DC_START, 0, ts, &im);
}

/* Whether the symbols of the start's read (ksyms_keep) name the kernel addresses hit as all of
   /proc/kallsyms would now: every address hit in kernel context lies among them (below the last
   one, whose size depends on what follows). Modules, BPF programs and trampolines, which come
   and go, lie outside the kernel image. (A user stack's garbage that happens to fall in one of
   those is not looked up: it is no kernel hit.) */
static bool ksyms_suffice(const struct live_source *ls)
{
        uint64_t lo, hi;
        if (!ls->ksyms)
                return false;
        return !perf_conv_kernel_range(ls->conv, &lo, &hi) ||
               (lo >= ls->ksyms[0].addr && hi < ls->ksyms[ls->nr_ksyms - 1].addr);
}

/* The KernelSymbol events of the kernel addresses hit, from the cache's index of the kernel's
   symbols in state (ksym_index.h): a look-up of each address hit where the index lies, the
   same events as the whole list gives. False when there is no index for state. */
static bool ksyms_write_indexed(struct live_source *ls, const char *state)
{
        struct ksym_index ix;
        if (ksym_index_open(&ix, state) < 0)
                return false;
        size_t nr_addrs = 0, nr = 0;
        uint64_t *addrs = perf_conv_kernel_addrs(ls->conv, &nr_addrs);
        struct perf_ksym *syms = ksym_index_lookup(&ix, addrs, nr_addrs, &nr);
        uint64_t at = perf_conv_stamp(ls->conv, 0, now_ns());
        perf_conv_kernel_symbols(ls->conv, syms, nr, 0, at);
        free(syms);
        free(addrs);
        ksym_index_close(&ix);
        return true;
}

/* The KernelSymbol events of the kernel addresses hit: from the kept symbols when they suffice,
   else from the cache's index of the kernel's symbols, else from /proc/kallsyms read now (the
   first time, the core kernel's are kept for the next rundown; not at the close, is_last, which
   has none after it), whose parse then becomes the index for the next session in this state. */
void ksyms_write_kernel_symbols(struct live_source *ls, bool is_last)
{
        if (!ls->caps.has_kallsyms)
                return;
        char *text = NULL;
        struct perf_ksym *syms = NULL;
        size_t len = 0, nr = 0;
        if (!ksyms_suffice(ls)) {
                char *state = kallsyms_text_state();
                if (ksyms_write_indexed(ls, state)) {
                        free(state);
                        return;
                }
                text = kallsyms_read(ls, &len);
                if (!text) {
                        free(state);
                        return;
                }
                syms = ksyms_parse(text, len, &nr);
                ksym_index_store(state, syms, nr);
                free(state);
                if (!ls->ksyms && !is_last)
                        ksyms_keep(ls, syms, nr);
        }
        uint64_t at = perf_conv_stamp(ls->conv, 0, now_ns());
        if (ksyms_suffice(ls))
                perf_conv_kernel_symbols(ls->conv, ls->ksyms, ls->nr_ksyms, 0, at);
        else if (syms)
                perf_conv_kernel_symbols(ls->conv, syms, nr, 0, at);
        free(syms);
        free(text);
}
