/* SPDX-License-Identifier: MIT */
/* dump.c: owns `etwtop --dump`: a trace as text, the logfile header, one line per event, totals. */
#include "dump.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "etw/etwtop_ext.h"
#include "etw/evntrace.h"
#include "kdecoder.h"
#include "kevent.h"
#include "kevent_text.h"
#include "model/event_stats.h"
#include "outbuf.h"
#include "ui/text_sanitize.h"
#include "util/xalloc.h"

#define MAX_DUMP_FILES 64

/* One input file: its handle, its decoder, and the output they share. */
struct dump_file {
        struct dump *d;
        const char *path;
        EVENT_TRACE_LOGFILEA logfile;
        PROCESSTRACE_HANDLE handle;
        struct kdecoder *decoder; /* owned */
        uint32_t index;
};

/* DUMP's held samples (hold_sample): at most this many at once, each for this many events. */
#define MAX_PENDING      64
#define HOLD_EVENTS      65536
#define HOLD_WRITE_BYTES (4u << 20) /* the held text written out past this much */

struct pending_sample {
        uint32_t file, tid;
        int64_t time_ns;
        size_t pid_pos;     /* the pid column's 7 bytes, an outbuf_tell of the hold */
        uint64_t nr_events; /* the dump's count of lines at the sample */
};

struct dump {
        struct outbuf out;
        char **names; /* owned, each owned: the TraceLogging names seen (intern_name) */
        uint32_t nr_names, names_cap;
        struct pending_sample pending[MAX_PENDING];
        uint32_t nr_pending;
        uint64_t nr_events;        /* lines written */
        struct event_stats *stats; /* owned */
        const struct dump_options *opts;
        uint32_t nr_files;
        uint64_t nr_stack_frames;
        uint64_t nr_lbr_entries;
        /* the event being decoded, for its payload size in the totals */
        uint32_t payload_bytes;
        const EVENT_RECORD *record; /* borrowed, while it is decoded */
        struct kevent_text fields;  /* the lists' scratch (kevent_text_fields) */
        char text[4096];
};

static void put_clean(struct dump *d, const char *s)
{
        if (text_is_clean(s)) {
                outbuf_puts(&d->out, s);
                return;
        }
        text_sanitize(d->text, sizeof(d->text), s);
        outbuf_puts(&d->out, d->text);
}

/* s sanitized and quoted as Windows quotes a command line's argument (CommandLineToArgvW's
   rules): '"' as \", and the backslashes before a '"' or the closing quote doubled, others as
   they are, so that paths read as Windows writes them and a value ends at its first unescaped
   quote: cmdline="\"dwm.exe\"", dir="C:\Windows\\". */
static void put_escaped(struct dump *d, const char *s)
{
        if (!text_is_clean(s)) {
                text_sanitize(d->text, sizeof(d->text), s);
                s = d->text;
        }
        for (const char *p = s;;) {
                size_t n = strcspn(p, "\"\\");
                outbuf_put(&d->out, p, n);
                p += n;
                size_t nr_slashes = strspn(p, "\\");
                outbuf_put(&d->out, p, nr_slashes);
                p += nr_slashes;
                if (*p == '"' || !*p) {
                        for (size_t i = 0; i < nr_slashes; i++)
                                outbuf_putc(&d->out, '\\');
                }
                if (!*p)
                        break;
                if (*p == '"') {
                        outbuf_puts(&d->out, "\\\"");
                        p++;
                }
        }
}

/* The length of s when it goes out as it is: every byte printable ASCII, no '"', no '\\' at
   its end (put_escaped's rules change nothing then), else -1. Eight bytes a step after strlen,
   where text_is_clean, strcspn and strlen went a byte at a time. */
static ptrdiff_t plain_len(const char *s)
{
        const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
        size_t n = strlen(s), i = 0;

        for (; i + 8 <= n; i += 8) {
                uint64_t x, q;
                memcpy(&x, s + i, 8);
                q = x ^ (ones * '"');
                /* a byte >= 0x80 or 0x7F, < 0x20, or '"' */
                if (((x | (x + ones)) | ((x - ones * 0x20) & ~x) | ((q - ones) & ~q)) & highs)
                        return -1;
        }
        for (; i < n; i++) {
                unsigned c = (unsigned char)s[i];
                if (c - 0x20u >= 0x5Fu || c == '"')
                        return -1;
        }
        if (n && s[n - 1] == '\\')
                return -1;
        return (ptrdiff_t)n;
}

/* " key=" then n bytes of value, in quotes when is_quoted */
static void put_key_value(struct dump *d, const char *key, const char *value, size_t n,
                          bool is_quoted)
{
        struct outbuf *o = &d->out;
        size_t k = strlen(key);
        size_t total = 2 + k + n + (is_quoted ? 2 : 0);

        if (total <= sizeof(o->data) - o->len) {
                char *p = o->data + o->len;
                *p++ = ' ';
                memcpy(p, key, k);
                p += k;
                *p++ = '=';
                if (is_quoted)
                        *p++ = '"';
                memcpy(p, value, n);
                if (is_quoted)
                        p[n] = '"';
                o->len += total;
                return;
        }
        outbuf_putc(o, ' ');
        outbuf_put(o, key, k);
        outbuf_putc(o, '=');
        if (is_quoted)
                outbuf_putc(o, '"');
        outbuf_put(o, value, n);
        if (is_quoted)
                outbuf_putc(o, '"');
}

/* key=value with a sanitized, quoted, escaped string value */
static void put_str_field(struct dump *d, const char *key, const char *value)
{
        ptrdiff_t n = plain_len(value);

        if (n >= 0) {
                put_key_value(d, key, value, (size_t)n, true);
                return;
        }
        outbuf_putc(&d->out, ' ');
        outbuf_puts(&d->out, key);
        outbuf_puts(&d->out, "=\"");
        put_escaped(d, value);
        outbuf_putc(&d->out, '"');
}

static void put_u64_field(struct dump *d, const char *key, uint64_t v)
{
        outbuf_putc(&d->out, ' ');
        outbuf_puts(&d->out, key);
        outbuf_putc(&d->out, '=');
        outbuf_u64(&d->out, v);
}

/* One field of an event, as kevent_text.c writes it: strings quoted and escaped, the rest as
   they come. */
static void put_field(void *ctx, const char *name, enum kevent_text_kind kind, const char *value)
{
        struct dump *d = ctx;

        if (kind == KEV_TEXT_STRING) {
                put_str_field(d, name, value);
                return;
        }
        put_key_value(d, name, value, strlen(value), false);
}

static void put_fields(struct dump *d, const struct kevent *ev)
{
        if (ev->type == KEV_STACK)
                d->nr_stack_frames += ev->stack.nr_frames;
        else if (ev->type == KEV_STACK_KEY_DEF)
                d->nr_stack_frames += ev->stack_key_def.nr_frames;
        else if (ev->type == KEV_LBR)
                d->nr_lbr_entries += ev->lbr.nr_entries;
        kevent_text_fields(ev, &d->fields, put_field, d);
}

/* A string inside an extended item, NUL-terminated within size; NULL when it is not. */
static const char *ext_string(const uint8_t *p, size_t size)
{
        for (size_t i = 0; i < size; i++)
                if (p[i] == 0)
                        return (const char *)p;
        return NULL;
}

/* "Provider/Event" from a TraceLogging event's PROV_TRAITS and EVENT_SCHEMA_TL extended items
   (ETL-FORMAT.md 2.8), sanitized, into buf. Returns false when the record has no event name. */
static bool tracelogging_name(const EVENT_RECORD *rec, char *buf, size_t size)
{
        const char *provider = NULL, *event = NULL;
        for (USHORT i = 0; rec && i < rec->ExtendedDataCount; i++) {
                const EVENT_HEADER_EXTENDED_DATA_ITEM *x = &rec->ExtendedData[i];
                const uint8_t *p = (const uint8_t *)(uintptr_t)x->DataPtr;
                size_t n = x->DataSize;
                if (x->ExtType == EVENT_HEADER_EXT_TYPE_PROV_TRAITS && n > 2) {
                        provider = ext_string(p + 2, n - 2);
                } else if (x->ExtType == EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL && n > 3) {
                        /* u16 size, tag bytes while bit 7 is set, then the name */
                        size_t k = 2;
                        while (k < n && (p[k] & 0x80))
                                k++;
                        k++;
                        if (k < n)
                                event = ext_string(p + k, n - k);
                }
        }
        if (!event)
                return false;
        char raw[512];
        snprintf(raw, sizeof(raw), "%s/%s", provider && *provider ? provider : "TraceLogging",
                 event);
        text_sanitize(buf, size, raw);
        return true;
}

/* The one copy of a TraceLogging name (owned by d): the same text is the same pointer, as
   event_stats wants a type's name to be. */
static const char *intern_name(struct dump *d, const char *name)
{
        for (uint32_t i = 0; i < d->nr_names; i++)
                if (strcmp(d->names[i], name) == 0)
                        return d->names[i];
        if (d->nr_names == d->names_cap) {
                d->names_cap = d->names_cap ? 2 * d->names_cap : 16;
                d->names = xrealloc(d->names, d->names_cap * sizeof(*d->names));
        }
        d->names[d->nr_names] = xstrdup(name);
        return d->names[d->nr_names++];
}

/* A sample whose thread no event had named yet (pid -1): its line is held until its stack,
   which names the process, as the replay's model takes it (hot.c). */
static void hold_sample(struct dump *d, const struct dump_file *f, const struct kevent *ev,
                        size_t pid_pos)
{
        if (d->nr_pending == MAX_PENDING) {
                /* the oldest goes unnamed */
                memmove(d->pending, d->pending + 1, (MAX_PENDING - 1) * sizeof(d->pending[0]));
                d->nr_pending--;
        }
        d->pending[d->nr_pending++] = (struct pending_sample){.file = f->index,
                                                              .tid = ev->tid,
                                                              .time_ns = ev->time_ns,
                                                              .pid_pos = pid_pos,
                                                              .nr_events = d->nr_events};
}

/* A stack: the held sample it belongs to (same file, thread and event time) gets its process;
   samples held too long go unnamed; the hold ends when none waits. */
static void settle_samples(struct dump *d, const struct dump_file *f, const struct kevent *ev)
{
        uint32_t k = 0;
        for (uint32_t i = 0; i < d->nr_pending; i++) {
                struct pending_sample *ps = &d->pending[i];
                if (ev && ev->type == KEV_STACK && ps->file == f->index &&
                    ps->tid == ev->stack.tid && ps->time_ns == ev->stack.event_time_ns &&
                    ev->stack.pid != 0xFFFFFFFFu) {
                        char col[16];
                        int n = snprintf(col, sizeof(col), "%7u", (unsigned)ev->stack.pid);
                        if (n == 7)
                                outbuf_patch(&d->out, ps->pid_pos, col, 7);
                        continue;
                }
                if (ev && d->nr_events - ps->nr_events > HOLD_EVENTS)
                        continue;
                d->pending[k++] = *ps;
        }
        d->nr_pending = k;
        if (!ev)
                d->nr_pending = 0;
        if (!d->nr_pending) {
                outbuf_release(&d->out);
                return;
        }
        /* what comes before the oldest sample still waiting is written: a trace whose samples
           never get stacks holds no more than a few MB at a time */
        size_t first = d->pending[0].pid_pos;
        for (uint32_t i = 1; i < d->nr_pending; i++)
                first = d->pending[i].pid_pos < first ? d->pending[i].pid_pos : first;
        if (first >= HOLD_WRITE_BYTES) {
                outbuf_release_before(&d->out, first);
                for (uint32_t i = 0; i < d->nr_pending; i++)
                        d->pending[i].pid_pos -= first;
        }
}

static const char digit_pairs[] = "00010203040506070809101112131415161718192021222324252627282930"
                                  "31323334353637383940414243444546474849505152535455565758596061"
                                  "62636465666768697071727374757677787980818283848586878889909192"
                                  "93949596979899";

/* The decimal digits of v (or "-1") ending at end. */
static void put_right(char *end, int64_t v)
{
        uint64_t u = v < 0 ? 1 : (uint64_t)v;
        const char *last = end;
        while (u >= 10) {
                end -= 2;
                memcpy(end, digit_pairs + 2 * (u % 100), 2);
                u /= 100;
        }
        if (u || end == last)
                *--end = (char)('0' + u);
        if (v < 0)
                *--end = '-';
}

/* The line's columns, "         time cpu    pid    tid ": written in one piece when every
   value fits its column (a trace under 1000 s, pids and tids under a million), else one by
   one, wider. Returns the pid column's outbuf_tell (hold_sample's). */
static size_t put_columns(struct outbuf *o, const struct kevent *ev)
{
        int64_t pid = ev->pid == 0xFFFFFFFFu ? -1 : (int64_t)ev->pid;
        int64_t tid = ev->tid == 0xFFFFFFFFu ? -1 : (int64_t)ev->tid;

        if (ev->time_ns >= 0 && ev->time_ns < 1000000000000LL && ev->cpu < 1000 && pid < 1000000 &&
            tid < 1000000) {
                char b[32];
                uint64_t ns = (uint64_t)ev->time_ns, frac = ns % 1000000000u;

                memset(b, ' ', sizeof(b));
                for (int i = 12; i > 4; i -= 2) {
                        memcpy(b + i - 1, digit_pairs + 2 * (frac % 100), 2);
                        frac /= 100;
                }
                b[4] = (char)('0' + frac);
                b[3] = '.';
                put_right(b + 3, (int64_t)(ns / 1000000000u));
                put_right(b + 17, ev->cpu);
                put_right(b + 24, pid);
                put_right(b + 31, tid);
                size_t pid_pos = outbuf_tell(o) + 17;
                outbuf_put(o, b, sizeof(b));
                return pid_pos;
        }
        outbuf_seconds(o, ev->time_ns, 13);
        outbuf_u64_width(o, ev->cpu, 4);
        size_t pid_pos = outbuf_tell(o);
        outbuf_i64_width(o, pid, 7);
        outbuf_i64_width(o, tid, 7);
        outbuf_putc(o, ' ');
        return pid_pos;
}

static void on_event(void *ctx, const struct kevent *ev)
{
        struct dump_file *f = ctx;
        struct dump *d = f->d;
        struct outbuf *o = &d->out;

        /* a self-describing event names itself: the same name in its line and the totals */
        const struct kevent *named = ev;
        struct kevent copy;
        char tl[256];
        if (!(ev->name && ev->name[0]) && tracelogging_name(d->record, tl, sizeof(tl))) {
                copy = *ev;
                copy.name = intern_name(d, tl);
                named = &copy;
        }
        /* a stack reassembled from a cache key is part of its definition event: not counted */
        if (!(ev->type == KEV_STACK && ev->stack.is_from_key))
                event_stats_add(d->stats, named, d->payload_bytes);
        if (d->opts->is_totals_only)
                return;
        d->nr_events++;
        bool is_unnamed_sample = (ev->type == KEV_SAMPLE || ev->type == KEV_PMC_SAMPLE) &&
                                 ev->pid == 0xFFFFFFFFu && ev->tid != 0xFFFFFFFFu;
        if (is_unnamed_sample)
                outbuf_hold(o);
        if (d->nr_files > 1) {
                outbuf_u64(o, f->index);
                outbuf_putc(o, ' ');
        }
        size_t pid_pos = put_columns(o, ev);
        if (is_unnamed_sample)
                hold_sample(d, f, ev, pid_pos);
        if (named->name && named->name[0]) {
                outbuf_puts(o, named->name);
        } else {
                char g[64];
                kevent_text_guid(g, sizeof(g), ev->provider);
                outbuf_puts(o, g);
                outbuf_puts(o, "/op");
                outbuf_u64(o, ev->opcode);
        }
        if (ev->type == KEV_OTHER) {
                put_u64_field(d, "version", ev->version);
                put_u64_field(d, "size", d->payload_bytes);
        } else {
                put_fields(d, ev);
        }
        outbuf_putc(o, '\n');
        if (d->nr_pending && !is_unnamed_sample)
                settle_samples(d, f, ev);
}

static VOID WINAPI on_record(PEVENT_RECORD rec)
{
        struct dump_file *f = rec->UserContext;
        f->d->payload_bytes = rec->UserDataLength;
        f->d->record = rec;
        kdecoder_decode(f->decoder, rec, on_event, f);
}

/* FILETIME to "2020-05-01 12:34:56.1234567 UTC". */
static void format_filetime(char *buf, size_t size, int64_t ft)
{
        if (ft <= 0) {
                snprintf(buf, size, "0");
                return;
        }
        int64_t unix100 = ft - 116444736000000000LL;
        time_t secs = (time_t)(unix100 / 10000000);
        int frac = (int)(unix100 % 10000000);
        if (frac < 0) {
                frac += 10000000;
                secs--;
        }
        struct tm tm;
        if (!gmtime_r(&secs, &tm)) {
                snprintf(buf, size, "%" PRId64, ft);
                return;
        }
        char t[64];
        strftime(t, sizeof(t), "%Y-%m-%d %H:%M:%S", &tm);
        snprintf(buf, size, "%s.%07d UTC", t, frac);
}

static const char *clock_name(ULONG clock)
{
        switch (clock) {
        case EVENT_TRACE_CLOCK_PERFCOUNTER: return "QPC";
        case EVENT_TRACE_CLOCK_SYSTEMTIME: return "system time";
        case EVENT_TRACE_CLOCK_CPUCYCLE: return "CPU cycle counter";
        default: return "raw";
        }
}

static void print_header(struct dump *d, const struct dump_file *f)
{
        const TRACE_LOGFILE_HEADER *h = &f->logfile.LogfileHeader;
        struct outbuf *o = &d->out;
        char a[96], b[96], c[96];
        char name[512], file[1024];
        size_t i;

        /* The UTF-16 names, as the header has them. */
        for (i = 0; h->LoggerName && h->LoggerName[i] && i < sizeof(name) - 1; i++)
                name[i] = h->LoggerName[i] < 0x80 ? (char)h->LoggerName[i] : '?';
        name[i] = '\0';
        for (i = 0; h->LogFileName && h->LogFileName[i] && i < sizeof(file) - 1; i++)
                file[i] = h->LogFileName[i] < 0x80 ? (char)h->LogFileName[i] : '?';
        file[i] = '\0';
        format_filetime(a, sizeof(a), h->StartTime.QuadPart);
        format_filetime(b, sizeof(b), h->EndTime.QuadPart);
        format_filetime(c, sizeof(c), h->BootTime.QuadPart);

        outbuf_puts(o, "Trace file:          ");
        put_clean(d, f->path);
        outbuf_putc(o, '\n');
        outbuf_puts(o, "Logger name:         ");
        put_clean(d, name);
        outbuf_puts(o, "\nLog file name:       ");
        put_clean(d, file);
        outbuf_printf(o,
                      "\nOS version:          %u.%u build %u (log file layout %u.%u)\n"
                      "Processors:          %u\n"
                      "Pointer size:        %u\n"
                      "Buffer size:         %u bytes\n"
                      "Buffers written:     %u\n"
                      "Log file mode:       0x%08x\n"
                      "Clock:               %s (%u), frequency %" PRId64 " Hz\n"
                      "Timer resolution:    %u (100 ns units)\n"
                      "CPU speed:           %u MHz\n"
                      "Start time:          %s\n"
                      "End time:            %s\n"
                      "Boot time:           %s\n"
                      "Events lost:         %u\n"
                      "Buffers lost:        %u\n"
                      "Maximum file size:   %u MB\n",
                      h->VersionDetail.MajorVersion, h->VersionDetail.MinorVersion,
                      h->ProviderVersion, h->VersionDetail.SubVersion,
                      h->VersionDetail.SubMinorVersion, h->NumberOfProcessors, h->PointerSize,
                      h->BufferSize, h->BuffersWritten, h->LogFileMode,
                      clock_name(h->ReservedFlags), h->ReservedFlags, h->PerfFreq.QuadPart,
                      h->TimerResolution, h->CpuSpeedInMHz, a, b, c, h->EventsLost, h->BuffersLost,
                      h->MaximumFileSize);
        /* the time zone of the machine that recorded it: UTC-Bias, and its standard name */
        const TIME_ZONE_INFORMATION *tz = &h->TimeZone;
        char zone_name[64];
        for (i = 0; i < 32 && tz->StandardName[i] && i < sizeof(zone_name) - 1; i++)
                zone_name[i] = tz->StandardName[i] < 0x80 ? (char)tz->StandardName[i] : '?';
        zone_name[i] = '\0';
        long utc_offset = -(long)tz->Bias; /* minutes: UTC = local time + Bias */
        outbuf_printf(o, "Time zone:           UTC%c%02ld:%02ld%s", utc_offset < 0 ? '-' : '+',
                      (utc_offset < 0 ? -utc_offset : utc_offset) / 60,
                      (utc_offset < 0 ? -utc_offset : utc_offset) % 60, zone_name[0] ? " (" : "");
        if (zone_name[0]) {
                put_clean(d, zone_name);
                outbuf_putc(o, ')');
        }
        outbuf_putc(o, '\n');
}

static void print_totals(struct dump *d)
{
        struct outbuf *o = &d->out;
        uint32_t nr_rows = 0;
        const struct event_stats_row *rows = event_stats_rows(d->stats, &nr_rows);

        outbuf_puts(o, "\nTotals per event type:\n");
        outbuf_puts(o, "      count        bytes  event\n");
        for (uint32_t i = 0; i < nr_rows; i++) {
                outbuf_u64_width(o, rows[i].nr_events, 11);
                outbuf_u64_width(o, rows[i].size_bytes, 13);
                outbuf_puts(o, "  ");
                if (rows[i].name[0]) {
                        outbuf_puts(o, rows[i].name);
                } else {
                        char g[64];
                        kevent_text_guid(g, sizeof(g), &rows[i].provider);
                        outbuf_puts(o, g);
                        outbuf_puts(o, "/op");
                        outbuf_u64(o, rows[i].opcode);
                }
                outbuf_printf(o, " (v%u)\n", rows[i].version);
        }
        outbuf_u64_width(o, event_stats_total(d->stats), 11);
        outbuf_puts(o, "               events in all\n");
}

static void print_file_stats(struct dump *d, const struct dump_file *f)
{
        struct etw_trace_stats st;
        struct kdecoder_stats ks;
        if (etw_trace_get_stats(f->handle, &st) != ERROR_SUCCESS)
                return;
        kdecoder_get_stats(f->decoder, &ks);
        struct outbuf *o = &d->out;
        outbuf_puts(o, "\n");
        if (d->nr_files > 1) {
                outbuf_puts(o, "File ");
                outbuf_u64(o, f->index);
                outbuf_puts(o, ": ");
                put_clean(d, f->path);
                outbuf_putc(o, '\n');
        }
        outbuf_printf(o,
                      "Records:             %" PRIu64 "\n"
                      "Buffers:             %u (%u compressed) on %u processors\n"
                      "Damaged buffers:     %u\n"
                      "Skipped records:     %" PRIu64 " (WPP messages untimed, non-events)\n"
                      "Short payloads:      %" PRIu64 "\n"
                      "Events lost:         %" PRIu64 "\n"
                      "Stack refs pending:  %" PRIu64 " (resolved %" PRIu64 ")\n",
                      (uint64_t)st.nr_records, st.nr_buffers, st.nr_buffers_compressed, st.nr_cpus,
                      st.nr_buffers_damaged, (uint64_t)st.nr_records_skipped, ks.nr_short,
                      (uint64_t)st.nr_events_lost, ks.nr_stack_refs_pending,
                      ks.nr_stack_refs_resolved);
        if (st.last_warning[0]) {
                outbuf_puts(o, "Last problem:        ");
                put_clean(d, st.last_warning);
                outbuf_putc(o, '\n');
        }
}

/* The FILETIME s seconds after start (a FILETIME too). */
static FILETIME filetime_at(int64_t start, double s)
{
        uint64_t t = (uint64_t)(start + (int64_t)(s * 1e7 + 0.5));
        return (FILETIME){(DWORD)t, (DWORD)(t >> 32)};
}

int dump_run(const struct dump_options *opts, char *err, size_t err_size)
{
        struct dump *d = calloc(1, sizeof(*d));
        struct dump_file *files = calloc(MAX_DUMP_FILES, sizeof(*files));
        PROCESSTRACE_HANDLE handles[MAX_DUMP_FILES];
        int rc = -1;

        if (!d || !files) {
                snprintf(err, err_size, "out of memory");
                goto out;
        }
        if (opts->nr_paths == 0 || opts->nr_paths > MAX_DUMP_FILES) {
                snprintf(err, err_size, "--dump takes 1 to %d files", MAX_DUMP_FILES);
                goto out;
        }
        outbuf_init(&d->out, opts->fd);
        d->opts = opts;
        d->stats = event_stats_new();
        for (uint32_t i = 0; i < opts->nr_paths; i++) {
                struct dump_file *f = &files[i];
                f->d = d;
                f->path = opts->paths[i];
                f->index = i;
                f->logfile.LogFileName = (LPSTR)opts->paths[i];
                f->logfile.ProcessTraceMode =
                        PROCESS_TRACE_MODE_EVENT_RECORD | PROCESS_TRACE_MODE_RAW_TIMESTAMP;
                f->logfile.EventRecordCallback = on_record;
                f->logfile.Context = f;
                f->decoder = kdecoder_new(true);
                f->handle = OpenTraceA(&f->logfile);
                if (f->handle == INVALID_PROCESSTRACE_HANDLE) {
                        snprintf(err, err_size, "%s (Win32 error %u)", etw_last_error_text(),
                                 GetLastError());
                        goto out;
                }
                handles[i] = f->handle;
                d->nr_files++;
        }
        for (uint32_t i = 0; i < d->nr_files; i++) {
                print_header(d, &files[i]);
                outbuf_putc(&d->out, '\n');
        }
        if (!opts->is_totals_only)
                outbuf_puts(&d->out, "         time cpu    pid    tid event\n");
        int64_t start = INT64_MAX;
        for (uint32_t i = 0; i < d->nr_files; i++)
                if (files[i].logfile.LogfileHeader.StartTime.QuadPart < start)
                        start = files[i].logfile.LogfileHeader.StartTime.QuadPart;
        /* [from, to): ProcessTrace's EndTime counts, so the tick before to */
        FILETIME from = filetime_at(start, opts->from_s), to = filetime_at(start, opts->to_s);
        uint64_t to_ft = ((uint64_t)to.dwHighDateTime << 32 | to.dwLowDateTime) - 1;
        to = (FILETIME){(DWORD)to_ft, (DWORD)(to_ft >> 32)};
        ULONG status = ProcessTrace(handles, d->nr_files, opts->has_from ? &from : NULL,
                                    opts->has_to ? &to : NULL);
        if (status != ERROR_SUCCESS) {
                outbuf_flush(&d->out);
                snprintf(err, err_size, "ProcessTrace failed: %s (Win32 error %u)",
                         etw_last_error_text(), status);
                goto out;
        }
        settle_samples(d, NULL, NULL); /* the samples whose stacks never came: unnamed */
        print_totals(d);
        for (uint32_t i = 0; i < d->nr_files; i++)
                print_file_stats(d, &files[i]);
        if (outbuf_flush(&d->out) < 0) {
                snprintf(err, err_size, "writing the dump: %s", strerror(d->out.error));
                goto out;
        }
        rc = 0;
out:
        if (files && d) {
                for (uint32_t i = 0; i < d->nr_files; i++)
                        CloseTrace(files[i].handle);
                for (uint32_t i = 0; i < MAX_DUMP_FILES; i++) {
                        struct kdecoder_stats ks;
                        kdecoder_get_stats(files[i].decoder, &ks);
                        if (ks.warning[0])
                                fprintf(stderr, "etwtop: %s\n", ks.warning);
                        kdecoder_free(files[i].decoder);
                }
        }
        if (d) {
                event_stats_free(d->stats);
                for (uint32_t i = 0; i < d->nr_names; i++)
                        free(d->names[i]);
                free(d->names);
                free(d->out.held);
                kevent_text_fini(&d->fields);
        }
        free(files);
        free(d);
        return rc;
}
