/* SPDX-License-Identifier: MIT */
/* kevent_text.c: owns the text of every decoded event type's fields (names, numbers in decimal
   or hex, strings, lists), as `--dump` prints them and the events view and csv-events show
   them. */
#include "kevent_text.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct emit {
        kevent_text_fn fn;
        void *ctx;
        struct kevent_text *scratch;
        size_t len;  /* of the list being written into scratch */
        bool is_cut; /* the list passed the scratch's max_list */
};

/* decimal and 0x-hex digits at the end of buf (24 bytes); returns the first */
static char *fmt_u(char *end, uint64_t v)
{
        char *p = end;
        *--p = 0;
        do {
                *--p = (char)('0' + v % 10);
                v /= 10;
        } while (v);
        return p;
}

static char *fmt_x(char *end, uint64_t v)
{
        static const char digits[] = "0123456789abcdef";
        char *p = end;
        *--p = 0;
        do {
                *--p = digits[v & 15];
                v >>= 4;
        } while (v);
        *--p = 'x';
        *--p = '0';
        return p;
}

static void num_u(struct emit *e, const char *name, uint64_t v)
{
        char buf[24];
        e->fn(e->ctx, name, KEV_TEXT_NUMBER, fmt_u(buf + sizeof(buf), v));
}

static void num_i(struct emit *e, const char *name, int64_t v)
{
        char buf[24];
        char *p = fmt_u(buf + sizeof(buf), v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);
        if (v < 0)
                *--p = '-';
        e->fn(e->ctx, name, KEV_TEXT_NUMBER, p);
}

static void num_x(struct emit *e, const char *name, uint64_t v)
{
        char buf[24];
        e->fn(e->ctx, name, KEV_TEXT_NUMBER, fmt_x(buf + sizeof(buf), v));
}

static void pid_f(struct emit *e, const char *name, uint32_t pid)
{
        num_i(e, name, pid == 0xFFFFFFFFu ? -1 : (int64_t)pid);
}

static void word(struct emit *e, const char *name, const char *w)
{
        e->fn(e->ctx, name, KEV_TEXT_NUMBER, w);
}

static void str(struct emit *e, const char *name, const char *s)
{
        e->fn(e->ctx, name, KEV_TEXT_STRING, s ? s : "");
}

/* seconds.nanoseconds, as outbuf_seconds writes them; by hand, not snprintf (the stack events
   of a trace carry one each) */
static void seconds(struct emit *e, const char *name, int64_t ns)
{
        char buf[40];
        uint64_t u = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
        uint64_t frac = u % 1000000000u;
        char *p = buf + sizeof(buf);

        *--p = 0;
        for (int i = 0; i < 9; i++) {
                *--p = (char)('0' + frac % 10);
                frac /= 10;
        }
        *--p = '.';
        u /= 1000000000u;
        do {
                *--p = (char)('0' + u % 10);
                u /= 10;
        } while (u);
        if (ns < 0)
                *--p = '-';
        e->fn(e->ctx, name, KEV_TEXT_NUMBER, p);
}

/* ---- lists in the scratch ---- */

static void list_start(struct emit *e)
{
        e->len = 0;
        e->is_cut = false;
        if (!e->scratch->buf) {
                e->scratch->size = 4096;
                e->scratch->buf = malloc(e->scratch->size);
                if (!e->scratch->buf)
                        abort();
        }
        e->scratch->buf[0] = 0;
}

static void list_add(struct emit *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void list_add(struct emit *e, const char *fmt, ...)
{
        for (;;) {
                va_list ap;
                va_start(ap, fmt);
                size_t room = e->scratch->size - e->len;
                int n = vsnprintf(e->scratch->buf + e->len, room, fmt, ap);
                va_end(ap);
                if (n < 0)
                        return;
                if ((size_t)n < room) {
                        e->len += (size_t)n;
                        return;
                }
                char *b = realloc(e->scratch->buf, e->scratch->size * 2);
                if (!b)
                        abort();
                e->scratch->buf = b;
                e->scratch->size *= 2;
        }
}

/* Room for n more bytes and the NUL in the scratch. */
static void list_reserve(struct emit *e, size_t n)
{
        while (e->len + n + 1 > e->scratch->size) {
                char *b = realloc(e->scratch->buf, e->scratch->size * 2);
                if (!b)
                        abort();
                e->scratch->buf = b;
                e->scratch->size *= 2;
        }
}

/* s[0..n) appended to the list; past the scratch's max_list, the list ends in "..." */
static void list_put_n(struct emit *e, const char *s, size_t n)
{
        if (e->is_cut)
                return;
        if (e->scratch->max_list && e->len + n > e->scratch->max_list) {
                e->is_cut = true;
                list_add(e, "...");
                return;
        }
        list_reserve(e, n);
        memcpy(e->scratch->buf + e->len, s, n);
        e->len += n;
        e->scratch->buf[e->len] = 0;
}

/* before (1 or 2 characters) then v in 0x-hex, written in place */
static void list_hex(struct emit *e, const char *before, uint64_t v)
{
        static const char digits[] = "0123456789abcdef";
        size_t nibbles = v ? (size_t)(64 - __builtin_clzll(v) + 3) / 4 : 1;
        size_t k = before[1] ? 2 : 1, n = k + 2 + nibbles;

        if (e->is_cut)
                return;
        if (e->scratch->max_list && e->len + n > e->scratch->max_list) {
                e->is_cut = true;
                list_add(e, "...");
                return;
        }
        list_reserve(e, n);
        char *p = e->scratch->buf + e->len;
        p[0] = before[0];
        p[1] = before[1];
        p[k] = '0';
        p[k + 1] = 'x';
        for (char *q = p + n; q > p + k + 2; v >>= 4)
                *--q = digits[v & 15];
        p[n] = 0;
        e->len += n;
}

/* v in decimal then after (one character) */
static void list_u(struct emit *e, uint64_t v, char after)
{
        char buf[24];
        char *p = fmt_u(buf + sizeof(buf) - 1, v);

        buf[sizeof(buf) - 2] = after;
        list_put_n(e, p, (size_t)(buf + sizeof(buf) - 1 - p));
}

static void list_end(struct emit *e, const char *name)
{
        e->fn(e->ctx, name, KEV_TEXT_LIST, e->scratch->buf);
}

static void frames(struct emit *e, uint32_t nr, const uint64_t *f)
{
        list_start(e);
        list_u(e, nr, ':');
        for (uint32_t i = 0; i < nr; i++)
                list_hex(e, " ", f[i]);
        list_end(e, "frames");
}

void kevent_text_guid(char *buf, size_t size, const GUID *g)
{
        /* by hand, not an 11-argument snprintf: a DbgID per image in a merged trace */
        static const char digits[] = "0123456789abcdef";
        char t[40];
        char *p = t;
        uint8_t b[16] = {(uint8_t)(g->Data1 >> 24), (uint8_t)(g->Data1 >> 16),
                         (uint8_t)(g->Data1 >> 8),  (uint8_t)g->Data1,
                         (uint8_t)(g->Data2 >> 8),  (uint8_t)g->Data2,
                         (uint8_t)(g->Data3 >> 8),  (uint8_t)g->Data3};

        memcpy(b + 8, g->Data4, 8);
        *p++ = '{';
        for (int i = 0; i < 16; i++) {
                if (i == 4 || i == 6 || i == 8 || i == 10)
                        *p++ = '-';
                *p++ = digits[b[i] >> 4];
                *p++ = digits[b[i] & 15];
        }
        *p++ = '}';
        *p = 0;
        if (size) {
                size_t n = (size_t)(p - t) < size - 1 ? (size_t)(p - t) : size - 1;
                memcpy(buf, t, n);
                buf[n] = 0;
        }
}

static void fields_a(struct emit *e, const struct kevent *ev)
{
        switch (ev->type) {
        case KEV_TRACE_HEADER:
                str(e, "logger", ev->trace_header.logger_name);
                str(e, "file", ev->trace_header.log_file_name);
                break;
        case KEV_GROUP_MASK:
                list_start(e);
                for (int i = 0; i < 8; i++)
                        list_add(e, "%s%08x", i ? "," : "", ev->group_mask.masks[i]);
                list_end(e, "masks");
                num_u(e, "kernel_version", ev->group_mask.kernel_version);
                break;
        case KEV_PROCESS:
                num_u(e, "pid", ev->process.pid);
                num_u(e, "ppid", ev->process.parent_pid);
                num_i(e, "session", (int32_t)ev->process.session_id);
                num_i(e, "exit", ev->process.exit_status);
                num_x(e, "key", ev->process.unique_key);
                num_x(e, "flags", ev->process.flags);
                if (ev->process.user_sid[0])
                        str(e, "sid", ev->process.user_sid);
                str(e, "image", ev->process.image_name);
                str(e, "cmdline", ev->process.command_line);
                if (ev->process.package_full_name[0])
                        str(e, "package", ev->process.package_full_name);
                if (ev->process.application_id[0])
                        str(e, "app", ev->process.application_id);
                break;
        case KEV_THREAD:
                num_u(e, "pid", ev->thread.pid);
                num_u(e, "tid", ev->thread.tid);
                num_x(e, "stack_base", ev->thread.stack_base);
                num_x(e, "stack_limit", ev->thread.stack_limit);
                num_x(e, "user_stack_base", ev->thread.user_stack_base);
                num_x(e, "user_stack_limit", ev->thread.user_stack_limit);
                num_x(e, "affinity", ev->thread.affinity);
                num_x(e, "start", ev->thread.win32_start_addr);
                num_x(e, "teb", ev->thread.teb_base);
                num_i(e, "base_priority", ev->thread.base_priority);
                if (ev->thread.name[0])
                        str(e, "name", ev->thread.name);
                break;
        case KEV_THREAD_NAME:
                num_u(e, "pid", ev->thread_name.pid);
                num_u(e, "tid", ev->thread_name.tid);
                str(e, "name", ev->thread_name.name);
                break;
        case KEV_IMAGE:
                num_x(e, "base", ev->image.base);
                num_x(e, "size", ev->image.size);
                pid_f(e, "pid", ev->image.pid);
                num_x(e, "checksum", ev->image.checksum);
                num_x(e, "timestamp", ev->image.time_date_stamp);
                num_x(e, "default_base", ev->image.default_base);
                str(e, "file", ev->image.file_name);
                break;
        case KEV_IMAGE_ID:
                num_x(e, "base", ev->image_id.base);
                num_x(e, "size", ev->image_id.size);
                pid_f(e, "pid", ev->image_id.pid);
                num_x(e, "timestamp", ev->image_id.time_date_stamp);
                str(e, "name", ev->image_id.original_file_name);
                break;
        case KEV_DBG_ID: {
                /* what each payload holds, as --dump prints it: None and Determ, the image and
                   its process only; PPDB, a stamp and a version; RSDS, the PDB's identity */
                num_x(e, "base", ev->dbg_id.base);
                pid_f(e, "pid", ev->dbg_id.pid);
                if (ev->dbg_id.has_ppdb) {
                        num_x(e, "timestamp", ev->dbg_id.time_date_stamp);
                        num_u(e, "major", ev->dbg_id.major_version);
                        num_u(e, "minor", ev->dbg_id.minor_version);
                }
                if (ev->dbg_id.has_pdb) {
                        char g[64];
                        kevent_text_guid(g, sizeof(g), &ev->dbg_id.guid_sig);
                        word(e, "guid", g);
                        num_u(e, "age", ev->dbg_id.age);
                        str(e, "pdb", ev->dbg_id.pdb_file_name);
                }
                break;
        }
        case KEV_FILE_VERSION:
                num_x(e, "size", ev->file_version.image_size);
                num_x(e, "timestamp", ev->file_version.time_date_stamp);
                str(e, "orig_name", ev->file_version.orig_file_name);
                str(e, "description", ev->file_version.file_description);
                str(e, "version", ev->file_version.file_version);
                str(e, "product", ev->file_version.product_name);
                str(e, "company", ev->file_version.company_name);
                break;
        case KEV_SAMPLE:
                num_x(e, "ip", ev->sample.ip);
                num_u(e, "count", ev->sample.count);
                num_u(e, "priority", ev->sample.priority);
                num_x(e, "flags", ev->sample.flags);
                break;
        case KEV_PMC_SAMPLE: {
                num_x(e, "ip", ev->pmc_sample.ip);
                num_u(e, "source", ev->pmc_sample.source);
                const char *n = kevent_profile_source_name(ev->pmc_sample.source);
                if (n)
                        str(e, "source_name", n);
                break;
        }
        case KEV_PMC_CONFIG:
                num_u(e, "counters", ev->pmc_config.nr_counters);
                for (uint32_t i = 0; i < ev->pmc_config.nr_counters && i < KEV_MAX_PMC; i++)
                        str(e, "name", ev->pmc_config.names[i]);
                break;
        case KEV_PROFILE_INTERVAL:
                num_u(e, "source", ev->profile_interval.source);
                num_u(e, "interval_100ns", ev->profile_interval.new_interval_100ns);
                num_u(e, "old_interval_100ns", ev->profile_interval.old_interval_100ns);
                if (ev->profile_interval.source_name[0])
                        str(e, "source_name", ev->profile_interval.source_name);
                break;
        default: break;
        }
}

static void fields_b(struct emit *e, const struct kevent *ev)
{
        switch (ev->type) {
        case KEV_STACK:
                seconds(e, "event_time", ev->stack.event_time_ns);
                if (ev->stack.is_from_key) {
                        num_x(e, "key", ev->stack.key);
                        word(e, "part", ev->stack.is_kernel_part ? "kernel" : "user");
                }
                frames(e, ev->stack.nr_frames, ev->stack.frames);
                break;
        case KEV_STACK_KEY:
                seconds(e, "event_time",
                        ev->time_ns - (int64_t)(ev->timestamp - ev->stack_key.event_timestamp));
                num_x(e, "key", ev->stack_key.key);
                word(e, "part", ev->stack_key.is_kernel ? "kernel" : "user");
                break;
        case KEV_STACK_KEY_DEF:
                num_x(e, "key", ev->stack_key_def.key);
                num_u(e, "resolves", ev->stack_key_def.nr_resolved);
                frames(e, ev->stack_key_def.nr_frames, ev->stack_key_def.frames);
                break;
        case KEV_CSWITCH:
                num_u(e, "new_tid", ev->cswitch.new_tid);
                pid_f(e, "new_pid", ev->cswitch.new_pid);
                num_u(e, "old_tid", ev->cswitch.old_tid);
                pid_f(e, "old_pid", ev->cswitch.old_pid);
                num_i(e, "new_pri", ev->cswitch.new_priority);
                num_i(e, "old_pri", ev->cswitch.old_priority);
                word(e, "old_state", kevent_thread_state_name(ev->cswitch.old_state));
                word(e, "wait_reason", kevent_wait_reason_name(ev->cswitch.old_wait_reason));
                word(e, "wait_mode", ev->cswitch.old_wait_mode ? "user" : "kernel");
                num_u(e, "new_wait_time", ev->cswitch.new_wait_time);
                num_u(e, "ideal_cpu", ev->cswitch.old_ideal_processor);
                num_u(e, "prev_cstate", ev->cswitch.previous_cstate);
                break;
        case KEV_READY_THREAD:
                num_u(e, "readied_tid", ev->ready_thread.tid);
                num_u(e, "by_tid", ev->ready_thread.readying_tid);
                pid_f(e, "by_pid", ev->ready_thread.readying_pid);
                num_u(e, "adjust_reason", ev->ready_thread.adjust_reason);
                num_i(e, "adjust_increment", ev->ready_thread.adjust_increment);
                num_x(e, "flags", ev->ready_thread.flags);
                break;
        case KEV_IMAGE_IDENTITY: {
                char id[41];
                static const char digits[] = "0123456789abcdef";
                uint32_t n = ev->image_identity.build_id_size <= 20
                                     ? ev->image_identity.build_id_size
                                     : 20;
                for (uint32_t i = 0; i < n; i++) {
                        id[2 * i] = digits[ev->image_identity.build_id[i] >> 4];
                        id[2 * i + 1] = digits[ev->image_identity.build_id[i] & 15];
                }
                id[2 * n] = 0;
                num_x(e, "base", ev->image_identity.base);
                num_x(e, "size", ev->image_identity.size);
                num_x(e, "file_offset", ev->image_identity.file_offset);
                pid_f(e, "pid", ev->image_identity.pid);
                str(e, "build_id", id);
                num_x(e, "flags", ev->image_identity.flags);
                str(e, "file", ev->image_identity.path);
                break;
        }
        case KEV_KERNEL_SYMBOL:
                num_x(e, "addr", ev->kernel_symbol.addr);
                num_x(e, "size", ev->kernel_symbol.size);
                str(e, "name", ev->kernel_symbol.name);
                str(e, "module", ev->kernel_symbol.module);
                break;
        case KEV_CLR_METHOD: {
                struct kevent_clr_names n = kevent_clr_method_names(ev);
                num_x(e, "method_id", ev->clr_method.method_id);
                num_x(e, "module_id", ev->clr_method.module_id);
                num_x(e, "start", ev->clr_method.start);
                num_x(e, "size", ev->clr_method.size);
                num_x(e, "token", ev->clr_method.token);
                num_x(e, "flags", ev->clr_method.flags);
                str(e, "namespace", n.name_space);
                str(e, "name", n.name);
                str(e, "signature", n.signature);
                break;
        }
        case KEV_CLR_MODULE:
                num_x(e, "module_id", ev->clr_module.module_id);
                num_x(e, "assembly_id", ev->clr_module.assembly_id);
                num_x(e, "flags", ev->clr_module.flags);
                str(e, "il_path", ev->clr_module.il_path);
                str(e, "native_path", ev->clr_module.native_path);
                break;
        case KEV_SESSION_CPU:
                num_u(e, "cpu", ev->session_cpu.cpu);
                num_u(e, "nr_cpus", ev->session_cpu.nr_cpus);
                num_u(e, "nr_online", ev->session_cpu.nr_online);
                num_u(e, "traced_pid", ev->session_cpu.traced_pid);
                break;
        case KEV_UNWIND_STATS: {
                static const char *const stops[KEV_NR_UNWIND_STOPS] = {"thread_start", "stack_end",
                                                                       "no_module",    "no_cfi",
                                                                       "bad_frame",    "max_depth"};
                num_u(e, "mode", ev->unwind_stats.mode);
                num_u(e, "stack_copy_bytes", ev->unwind_stats.stack_copy_bytes);
                num_u(e, "walks", ev->unwind_stats.nr_walks);
                for (uint32_t i = 0; i < KEV_NR_UNWIND_STOPS; i++)
                        num_u(e, stops[i], ev->unwind_stats.nr_by_stop[i]);
                num_u(e, "fp_chains", ev->unwind_stats.nr_fp_chains);
                num_u(e, "frames", ev->unwind_stats.nr_frames);
                num_u(e, "fp_frames", ev->unwind_stats.nr_fp_frames);
                break;
        }
        case KEV_RECORDS_NOT_SHOWN:
                num_u(e, "type", ev->records_not_shown.type);
                num_u(e, "count", ev->records_not_shown.count);
                str(e, "name", ev->records_not_shown.name);
                break;
        case KEV_EVENTS_LOST:
                num_u(e, "cpu", ev->events_lost.cpu);
                num_u(e, "reason", ev->events_lost.reason);
                num_u(e, "count", ev->events_lost.count);
                break;
        case KEV_LBR:
                seconds(e, "event_time",
                        ev->time_ns - (int64_t)(ev->timestamp - ev->lbr.event_timestamp));
                num_x(e, "options", ev->lbr.options);
                list_start(e);
                list_u(e, ev->lbr.nr_entries, ':');
                for (uint32_t i = 0; i < ev->lbr.nr_entries; i++) {
                        list_hex(e, " ", ev->lbr.entries[i].from);
                        list_hex(e, "->", ev->lbr.entries[i].to);
                        /* what the CPU recorded, as perf script's brstack: /M or /P, cycles */
                        uint64_t info = ev->lbr.info ? ev->lbr.info[i] : 0;
                        if (info)
                                list_add(e, "%s%" PRIu64,
                                         KEV_LBR_MISPREDICTED(info)       ? "/M/"
                                         : KEV_LBR_PREDICTION_KNOWN(info) ? "/P/"
                                                                          : "/-/",
                                         (uint64_t)KEV_LBR_CYCLES(info));
                }
                list_end(e, "entries");
                break;
        case KEV_FIELDS: {
                const struct kevent_field *list;
                uint32_t nr = kevent_fields(ev, &list);
                for (uint32_t i = 0; i < nr; i++) {
                        const struct kevent_field *f = &list[i];
                        switch (f->kind) {
                        case KEV_FIELD_UINT: num_u(e, f->name, f->u); break;
                        case KEV_FIELD_INT: num_i(e, f->name, (int64_t)f->u); break;
                        case KEV_FIELD_HEX: num_x(e, f->name, f->u); break;
                        case KEV_FIELD_STR: str(e, f->name, f->s); break;
                        }
                }
                break;
        }
        default: break;
        }
}

void kevent_text_fields(const struct kevent *ev, struct kevent_text *scratch, kevent_text_fn fn,
                        void *ctx)
{
        struct emit e = {.fn = fn, .ctx = ctx, .scratch = scratch};
        fields_a(&e, ev);
        fields_b(&e, ev);
        if (ev->nr_pmc) {
                list_start(&e);
                for (uint32_t i = 0; i < ev->nr_pmc && i < KEV_MAX_PMC; i++)
                        list_add(&e, "%s%" PRIu64, i ? "," : "", ev->pmc[i]);
                list_end(&e, "pmc");
        }
}

void kevent_text_fini(struct kevent_text *scratch)
{
        free(scratch->buf);
        scratch->buf = NULL;
        scratch->size = 0;
}
