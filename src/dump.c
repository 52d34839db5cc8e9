/* SPDX-License-Identifier: MIT */
/* dump.c: owns `etwtop --dump`: a trace as text, the logfile header, one line per event, totals. */
#include "dump.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "etw/etwtop_ext.h"
#include "etw/evntrace.h"
#include "kevent.h"
#include "kevent_text.h"
#include "model/event_stats.h"
#include "outbuf.h"
#include "ui/text_sanitize.h"

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

struct dump {
        struct outbuf out;
        struct event_stats *stats; /* owned */
        const struct dump_options *opts;
        uint32_t nr_files;
        uint64_t nr_stack_frames;
        uint64_t nr_lbr_entries;
        /* the event being decoded, for its payload size in the totals */
        uint32_t payload_bytes;
        const EVENT_RECORD *record; /* borrowed, while it is decoded */
        char text[4096];
        struct kevent_text scratch; /* owned: the fields' lists */
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

/* key=value with a sanitized, quoted string value */
static void put_str_field(struct dump *d, const char *key, const char *value)
{
        outbuf_putc(&d->out, ' ');
        outbuf_puts(&d->out, key);
        outbuf_puts(&d->out, "=\"");
        put_clean(d, value);
        outbuf_putc(&d->out, '"');
}

static void put_u64_field(struct dump *d, const char *key, uint64_t v)
{
        outbuf_putc(&d->out, ' ');
        outbuf_puts(&d->out, key);
        outbuf_putc(&d->out, '=');
        outbuf_u64(&d->out, v);
}

/* One field as " name=value", a string quoted and sanitized (kevent_text.h). */
static void put_text_field(void *ctx, const char *name, enum kevent_text_kind kind,
                           const char *value)
{
        struct dump *d = ctx;
        if (kind == KEV_TEXT_STRING) {
                put_str_field(d, name, value);
                return;
        }
        outbuf_putc(&d->out, ' ');
        outbuf_puts(&d->out, name);
        outbuf_putc(&d->out, '=');
        outbuf_puts(&d->out, value);
}

static void put_fields(struct dump *d, const struct kevent *ev)
{
        if (ev->type == KEV_STACK)
                d->nr_stack_frames += ev->stack.nr_frames;
        else if (ev->type == KEV_STACK_KEY_DEF)
                d->nr_stack_frames += ev->stack_key_def.nr_frames;
        else if (ev->type == KEV_LBR)
                d->nr_lbr_entries += ev->lbr.nr_entries;
        kevent_text_fields(ev, &d->scratch, put_text_field, d);
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
   (ETL-FORMAT.md 2.8). Returns false when the record has no event name. */
static bool put_tracelogging_name(struct dump *d, const EVENT_RECORD *rec)
{
        const char *provider = NULL, *event = NULL;
        for (USHORT i = 0; rec && i < rec->ExtendedDataCount; i++) {
                const EVENT_HEADER_EXTENDED_DATA_ITEM *x = &rec->ExtendedData[i];
                const uint8_t *p = (const uint8_t *)(uintptr_t)x->DataPtr;
                size_t size = x->DataSize;
                if (x->ExtType == EVENT_HEADER_EXT_TYPE_PROV_TRAITS && size > 2) {
                        provider = ext_string(p + 2, size - 2);
                } else if (x->ExtType == EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL && size > 3) {
                        /* u16 size, tag bytes while bit 7 is set, then the name */
                        size_t k = 2;
                        while (k < size && (p[k] & 0x80))
                                k++;
                        k++;
                        if (k < size)
                                event = ext_string(p + k, size - k);
                }
        }
        if (!event)
                return false;
        put_clean(d, provider && *provider ? provider : "TraceLogging");
        outbuf_putc(&d->out, '/');
        put_clean(d, event);
        return true;
}

static void on_event(void *ctx, const struct kevent *ev)
{
        struct dump_file *f = ctx;
        struct dump *d = f->d;
        struct outbuf *o = &d->out;

        /* a stack reassembled from a cache key is part of its definition event: not counted */
        if (!(ev->type == KEV_STACK && ev->stack.is_from_key))
                event_stats_add(d->stats, ev, d->payload_bytes);
        if (d->opts->is_totals_only)
                return;
        if (d->nr_files > 1) {
                outbuf_u64(o, f->index);
                outbuf_putc(o, ' ');
        }
        outbuf_seconds(o, ev->time_ns, 13);
        outbuf_u64_width(o, ev->cpu, 4);
        outbuf_i64_width(o, ev->pid == 0xFFFFFFFFu ? -1 : (int64_t)ev->pid, 7);
        outbuf_i64_width(o, ev->tid == 0xFFFFFFFFu ? -1 : (int64_t)ev->tid, 7);
        outbuf_putc(o, ' ');
        if (ev->name && ev->name[0]) {
                outbuf_puts(o, ev->name);
        } else if (put_tracelogging_name(d, d->record)) {
                /* a self-describing event names itself */
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
                      "Skipped records:     %" PRIu64 " (WPP messages and other non-events)\n"
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
                for (uint32_t i = 0; i < MAX_DUMP_FILES; i++)
                        kdecoder_free(files[i].decoder);
        }
        if (d) {
                event_stats_free(d->stats);
                kevent_text_fini(&d->scratch);
        }
        free(files);
        free(d);
        return rc;
}
