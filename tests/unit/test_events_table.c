/* SPDX-License-Identifier: MIT */
/* test_events_table.c: the generic events table (model/events_table.c) and its view
   (ui/views/events_view.c) from synthetic decoded events: counts per type as the dump's totals
   make them, per process and thread, the time window and zoom of the profile, the fields kept
   as text, the caps (recent events per type, a long event cut), and the view's rows, Enter into
   a type's events with its fields in columns, Esc back, p's groupings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kevent.h"
#include "kevent_text.h"
#include "model/events_table.h"
#include "model/profile.h"
#include "ui/table.h"
#include "ui/view.h"
#include "ui/views.h"

static const GUID guid_disk = {
        0x3d6fa8d4, 0xfe05, 0x11d0, {0x9d, 0xda, 0, 0xc0, 0x4f, 0xd7, 0xba, 0x7c}};
static const GUID guid_user = {
        0xa0c1853b, 0x5c40, 0x4b15, {0x87, 0x66, 0x3c, 0xf1, 0xc5, 0x8f, 0x98, 0x5a}};

static struct kevent_field disk_fields[] = {
        {"DiskNumber", KEV_FIELD_UINT, 1, ""},
        {"IrpFlags", KEV_FIELD_HEX, 0x60043, ""},
        {"TransferSize", KEV_FIELD_UINT, 4096, ""},
        {"FileName", KEV_FIELD_STR, 0, "C:\\Windows\\notepad.exe"},
};

static struct kevent disk_read(int64_t t, uint32_t pid, uint32_t tid, uint64_t size)
{
        struct kevent ev;
        memset(&ev, 0, sizeof(ev));
        ev.type = KEV_FIELDS;
        ev.name = "DiskIo/Read";
        ev.provider = &guid_disk;
        ev.opcode = 10;
        ev.version = 3;
        ev.time_ns = t;
        ev.cpu = 1;
        ev.pid = pid;
        ev.tid = tid;
        disk_fields[2].u = size;
        ev.fields.nr = 4;
        ev.fields.list = disk_fields;
        return ev;
}

/* a user-mode provider's event the decoder has no layout for: no name, no fields */
static struct kevent user_event(int64_t t, uint8_t opcode)
{
        struct kevent ev;
        memset(&ev, 0, sizeof(ev));
        ev.type = KEV_OTHER;
        ev.name = "";
        ev.provider = &guid_user;
        ev.opcode = opcode;
        ev.version = 1;
        ev.time_ns = t;
        ev.pid = 300;
        ev.tid = 301;
        return ev;
}

static const struct events_type *type_named(const struct events_table *et, const char *name)
{
        for (uint32_t i = 0; i < events_table_nr_types(et); i++)
                if (strcmp(events_table_type(et, i)->name, name) == 0)
                        return events_table_type(et, i);
        return NULL;
}

/* the value of field name in r, NULL when it has none */
static const char *field(const struct events_record *r, const char *name)
{
        uint32_t pos = 0;
        const char *n, *v;
        while (events_record_field(r, &pos, &n, &v))
                if (strcmp(n, name) == 0)
                        return v;
        return NULL;
}

static void test_counts_and_fields(void **state)
{
        (void)state;
        struct events_table *et = events_table_new();
        for (int i = 0; i < 5; i++) {
                struct kevent ev = disk_read(1000 * i, 100, 101 + (i & 1), 512u * (unsigned)i);
                events_table_add(et, &ev);
        }
        struct kevent u = user_event(10, 20);
        events_table_add(et, &u);
        u = user_event(11, 20);
        events_table_add(et, &u);
        u = user_event(12, 2);
        events_table_add(et, &u);
        /* a stack rebuilt from a key is its definition's record: not counted (as --dump) */
        struct kevent st;
        memset(&st, 0, sizeof(st));
        st.type = KEV_STACK;
        st.name = "StackWalk/Stack";
        st.stack.is_from_key = true;
        events_table_add(et, &st);

        assert_int_equal(events_table_total(et), 8);
        assert_int_equal(events_table_nr_types(et), 3);
        const struct events_type *d = type_named(et, "DiskIo/Read");
        assert_non_null(d);
        assert_int_equal(d->nr_events, 5);
        assert_int_equal(d->nr_stored, 5);
        assert_int_equal(d->version, 3);
        /* a type without a name is named by its provider and opcode, as --dump's totals */
        const struct events_type *o20 =
                type_named(et, "{a0c1853b-5c40-4b15-8766-3cf1c58f985a}/op20");
        assert_non_null(o20);
        assert_int_equal(o20->nr_events, 2);
        assert_int_equal(events_table_nr_kind(et, KEV_FIELDS), 5);
        assert_true(events_table_is_events_only(et));

        /* the fields as text, as --dump prints them */
        const struct events_record *r = events_table_record(et, d->id, 4);
        assert_non_null(r);
        assert_int_equal(r->time_ns, 4000);
        assert_int_equal(r->nr_fields, 4);
        assert_string_equal(field(r, "TransferSize"), "2048");
        assert_string_equal(field(r, "IrpFlags"), "0x60043");
        assert_string_equal(field(r, "FileName"), "C:\\Windows\\notepad.exe");
        assert_null(events_table_record(et, d->id, 5));

        /* by process: one row per type and process; by thread, the disk reads split in two */
        uint32_t n;
        const struct events_group *g = events_table_groups(et, false, &n);
        assert_int_equal(n, 3);
        for (uint32_t i = 0; i < n; i++)
                if (g[i].type_id == d->id)
                        assert_true(g[i].pid == 100 && g[i].nr_events == 5);
        g = events_table_groups(et, true, &n);
        assert_int_equal(n, 4);
        uint64_t sum = 0;
        for (uint32_t i = 0; i < n; i++)
                sum += g[i].nr_events;
        assert_int_equal(sum, 8);

        /* samples make it a profile, not an events-only trace */
        struct kevent s;
        memset(&s, 0, sizeof(s));
        s.type = KEV_SAMPLE;
        s.name = "PerfInfo/SampledProfile";
        events_table_add(et, &s);
        assert_false(events_table_is_events_only(et));

        events_table_reset(et);
        assert_int_equal(events_table_total(et), 0);
        assert_int_equal(type_named(et, "DiskIo/Read")->nr_stored, 0);
        assert_int_equal(events_table_bytes(et), 0);
        events_table_free(et);
}

/* Events of one kind and of several types taking turns (a switch storm's CSwitch, ReadyThread
   and their stacks; here generic events): each counts under its own type, whatever type the
   kind had last. A name's text at another address is the same type; a provider in a buffer
   the decoder fills again for each event, or another opcode, under the same name's address, is
   another type. */
static void test_kinds_take_turns(void **state)
{
        (void)state;
        struct events_table *et = events_table_new();
        char name_copy[32];
        snprintf(name_copy, sizeof(name_copy), "%s", "DiskIo/Read");
        GUID scratch = guid_disk; /* the decoder's buffer, filled again */
        for (int i = 0; i < 30; i++) {
                struct kevent ev = disk_read(1000 * i, 100, 101, 512);
                switch (i % 5) {
                case 0: break;
                case 1: ev.name = name_copy; break; /* the same text elsewhere */
                case 2:
                        scratch = guid_user;
                        ev.provider = &scratch;
                        break;
                case 3:
                        scratch = guid_disk;
                        ev.provider = &scratch;
                        break;
                case 4: ev.opcode = 11; break;
                }
                events_table_add(et, &ev);
                struct kevent u = user_event(1000 * i + 1, 20);
                events_table_add(et, &u);
        }
        assert_int_equal(events_table_total(et), 60);
        assert_int_equal(events_table_nr_types(et), 4);
        uint64_t by_type[4] = {0};
        for (uint32_t i = 0; i < events_table_nr_types(et); i++) {
                const struct events_type *t = events_table_type(et, i);
                if (strcmp(t->name, "DiskIo/Read") == 0 && t->opcode == 10)
                        by_type[memcmp(&t->provider, &guid_disk, sizeof(GUID)) == 0 ? 0 : 1] =
                                t->nr_events;
                else if (strcmp(t->name, "DiskIo/Read") == 0)
                        by_type[2] = t->nr_events;
                else
                        by_type[3] = t->nr_events;
        }
        assert_int_equal(by_type[0], 18); /* cases 0, 1 and 3 */
        assert_int_equal(by_type[1], 6);  /* the user provider's GUID */
        assert_int_equal(by_type[2], 6);  /* opcode 11 */
        assert_int_equal(by_type[3], 30);
        assert_int_equal(events_table_nr_kind(et, KEV_FIELDS), 30);
        events_table_free(et);
}

/* The caps: the recent events per type (the oldest go, counted), a long field cut. */
static void test_caps(void **state)
{
        (void)state;
        struct events_table *et = events_table_new();
        uint32_t n = EVENTS_TABLE_MAX_RECENT + 250;
        for (uint32_t i = 0; i < n; i++) {
                struct kevent ev = disk_read((int64_t)i * EVENTS_TABLE_THIN_NS, 100, 101, i);
                events_table_add(et, &ev);
        }
        const struct events_type *d = type_named(et, "DiskIo/Read");
        assert_int_equal(d->nr_events, n);
        assert_int_equal(d->nr_stored, EVENTS_TABLE_MAX_RECENT);
        assert_int_equal(d->nr_dropped, 250);
        assert_int_equal(events_table_nr_dropped(et), 250);
        /* the oldest kept is the 251st */
        assert_int_equal(events_table_record(et, d->id, 0)->time_ns, 250ll * EVENTS_TABLE_THIN_NS);
        assert_int_equal(events_table_record(et, d->id, EVENTS_TABLE_MAX_RECENT - 1)->time_ns,
                         (int64_t)(n - 1) * EVENTS_TABLE_THIN_NS);
        /* full: a type that comes faster than one per EVENTS_TABLE_THIN_NS is thinned */
        int64_t t0 = (int64_t)n * EVENTS_TABLE_THIN_NS;
        for (int i = 0; i < 100; i++) {
                struct kevent ev = disk_read(t0 + i * 1000, 100, 101, 1);
                events_table_add(et, &ev);
        }
        assert_int_equal(d->nr_events, n + 100);
        assert_int_equal(d->nr_dropped, 250 + 100);
        assert_int_equal(events_table_record(et, d->id, EVENTS_TABLE_MAX_RECENT - 1)->time_ns, t0);
        n += 100;
        /* a live session's 4 kHz samples (one per 250 us on each of 2 CPUs): one kept per
           10 ms of them, 100 a second, where their text is the costly part */
        int64_t t1 = t0 + EVENTS_TABLE_THIN_NS;
        for (int i = 0; i < 8000; i++) {
                struct kevent ev = disk_read(t1 + i * 125000ll, 100, 101, 1);
                events_table_add(et, &ev);
        }
        assert_int_equal(d->nr_dropped, 250 + 100 + 8000); /* thinned, or pushed out */
        assert_int_equal(events_table_record(et, d->id, EVENTS_TABLE_MAX_RECENT - 100)->time_ns,
                         t1);
        assert_int_equal(events_table_record(et, d->id, EVENTS_TABLE_MAX_RECENT - 1)->time_ns,
                         t1 + 99 * EVENTS_TABLE_THIN_NS);
        assert_int_equal(events_table_record(et, d->id, EVENTS_TABLE_MAX_RECENT - 101)->time_ns,
                         t0);
        n += 8000;
        assert_true(events_table_bytes(et) <= EVENTS_TABLE_MAX_BYTES);

        /* one event longer than EVENTS_TABLE_MAX_EVENT_BYTES: cut, ending in "..." */
        static char long_name[3 * EVENTS_TABLE_MAX_EVENT_BYTES];
        memset(long_name, 'x', sizeof(long_name) - 1);
        struct kevent ev = disk_read((int64_t)n * 1000000, 100, 101, 1);
        struct kevent_field f[2] = {{"Size", KEV_FIELD_UINT, 7, ""},
                                    {"Path", KEV_FIELD_STR, 0, long_name}};
        ev.name = "File/Long";
        ev.opcode = 64;
        ev.fields.nr = 2;
        ev.fields.list = f;
        events_table_add(et, &ev);
        const struct events_type *l = type_named(et, "File/Long");
        const struct events_record *r = events_table_record(et, l->id, 0);
        assert_true(r->size <= EVENTS_TABLE_MAX_EVENT_BYTES);
        assert_string_equal(field(r, "Size"), "7");
        const char *path = field(r, "Path");
        assert_non_null(path);
        assert_true(strlen(path) > 1000);
        assert_string_equal(path + strlen(path) - 3, "...");

        /* counts only: nothing kept from now on */
        events_table_set_max_recent(et, 0);
        ev = disk_read(n + 1, 100, 101, 1);
        events_table_add(et, &ev);
        assert_int_equal(type_named(et, "DiskIo/Read")->nr_stored, 0);
        assert_int_equal(type_named(et, "DiskIo/Read")->nr_events, n + 1);
        events_table_free(et);
}

/* -b's table: the types counted, no group looked up (none kept), no room counted for
   groups. */
static void test_groups_off(void **state)
{
        (void)state;
        struct events_table *et = events_table_new();
        events_table_set_max_recent(et, 0);
        events_table_set_groups(et, false);
        for (uint32_t i = 0; i < 300000; i++) {
                struct kevent ev = disk_read(i, 100 + i, 7, 1);
                events_table_add(et, &ev);
        }
        assert_int_equal(type_named(et, "DiskIo/Read")->nr_events, 300000);
        assert_int_equal(events_table_total(et), 300000);
        uint32_t n = 1;
        events_table_groups(et, false, &n);
        assert_int_equal(n, 0);
        assert_int_equal(events_table_nr_no_room(et), 0);
        /* kept again from now on */
        events_table_set_groups(et, true);
        struct kevent ev = disk_read(1, 100, 7, 1);
        events_table_add(et, &ev);
        const struct events_group *g = events_table_groups(et, true, &n);
        assert_int_equal(n, 1);
        assert_int_equal(g[0].pid, 100);
        assert_int_equal(g[0].nr_events, 1);
        events_table_free(et);
}

/* Every group found again in its slot through the table's growths, up to the cap: as many
   groups as the cap allows, each fed twice (a group not found again after a growth would be
   made twice, and the cap reached early), then one more, which has no room. */
static void test_groups_grow_to_cap(void **state)
{
        (void)state;
        struct events_table *et = events_table_new();
        events_table_set_max_recent(et, 0);
        for (uint32_t round = 0; round < 2; round++)
                for (uint32_t i = 0; i < EVENTS_TABLE_MAX_GROUPS; i++) {
                        /* pids and tids that differ in a few bits, as a machine's do */
                        struct kevent ev = disk_read(i, 1000 + i / 512, 4000 + i % 512, 1);
                        events_table_add(et, &ev);
                }
        assert_int_equal(events_table_nr_no_room(et), 0);
        uint32_t n = 0;
        const struct events_group *g = events_table_groups(et, true, &n);
        assert_int_equal(n, EVENTS_TABLE_MAX_GROUPS);
        for (uint32_t i = 0; i < n; i++) {
                assert_int_equal(g[i].pid, 1000 + i / 512);
                assert_int_equal(g[i].tid, 4000 + i % 512);
                assert_int_equal(g[i].nr_events, 2);
        }
        struct kevent ev = disk_read(1, 7, 7, 1);
        events_table_add(et, &ev);
        assert_int_equal(events_table_nr_no_room(et), 1);
        g = events_table_groups(et, false, &n);
        assert_int_equal(n, EVENTS_TABLE_MAX_GROUPS / 512);
        assert_int_equal(g[0].nr_events, 2 * 512);
        events_table_free(et);
}

static struct kevent process_end(int64_t t, uint32_t pid)
{
        struct kevent ev;
        memset(&ev, 0, sizeof(ev));
        ev.type = KEV_PROCESS;
        ev.name = "Process/End";
        ev.provider = &guid_disk; /* any: the type is by name here */
        ev.opcode = 2;
        ev.version = 4;
        ev.time_ns = t;
        ev.pid = pid;
        ev.tid = pid;
        ev.process.phase = KEV_PHASE_END;
        ev.process.pid = pid;
        ev.process.user_sid = ev.process.command_line = "";
        ev.process.package_full_name = ev.process.application_id = "";
        ev.process.image_name = "short";
        return ev;
}

/* A loop of short processes: the rows of those that ended fold into one row a type
   (EVENTS_TABLE_EXITED), so the rows follow the processes that run and every new process still
   gets its own (before, the 262144 rows filled and later processes were counted in none). The
   processes that run keep theirs; one that ended within the grace keeps its own; no event is
   lost from the rows' counts. */
static void test_groups_fold_exited(void **state)
{
        (void)state;
        struct events_table *et = events_table_new();
        events_table_set_max_recent(et, 0);
        /* a trace's table (the default) keeps every process's rows */
        for (uint32_t i = 0; i < 6000; i++) {
                struct kevent ev = disk_read(1000000ll * i, 5000 + i, 5000 + i, 1);
                events_table_add(et, &ev);
                struct kevent end = process_end(1000000ll * i + 1, 5000 + i);
                events_table_add(et, &end);
        }
        uint32_t n = 0;
        events_table_groups(et, true, &n);
        assert_int_equal(n, 2 * 6000);
        events_table_reset(et);
        events_table_set_fold_exited(et, true); /* a live screen's */
        const uint32_t nr_live = 300, nr_short = 150000;
        uint64_t nr_added = 0;
        for (uint32_t i = 0; i < nr_live; i++) {
                struct kevent ev = disk_read(i, 100 + i, 100 + i, 1);
                events_table_add(et, &ev);
                nr_added++;
        }
        int64_t t = 1000;
        uint32_t most = 0;
        for (uint32_t i = 0; i < nr_short; i++, t += 100000) { /* 10,000 processes a second */
                uint32_t pid = 1000000 + i;
                for (uint32_t k = 0; k < 3; k++) { /* three threads */
                        struct kevent ev = disk_read(t, pid, pid + k * 7919, 1);
                        events_table_add(et, &ev);
                        nr_added++;
                }
                struct kevent end = process_end(t + 50000, pid);
                events_table_add(et, &end);
                nr_added++;
                if (i % 4096 == 0) {
                        events_table_groups(et, true, &n);
                        most = n > most ? n : most;
                }
        }
        /* the live processes' events go on */
        for (uint32_t i = 0; i < nr_live; i++) {
                struct kevent ev = disk_read(t, 100 + i, 100 + i, 1);
                events_table_add(et, &ev);
                nr_added++;
        }
        assert_int_equal(events_table_nr_no_room(et), 0);
        const struct events_group *g = events_table_groups(et, true, &n);
        most = n > most ? n : most;
        /* far fewer rows than the 600,000 the short processes made (three threads' reads and
           the end, each a row): the rows of the ends waiting to fold (at 10,000 a second, the
           list of ends fills within the grace, and they all fold), the live ones' and one a
           type for the folded, through every fold */
        assert_true(most <= 4 * EVENTS_TABLE_MAX_ENDED + nr_live + 2 + 4);
        uint64_t sum = 0, exited_reads = 0, exited_ends = 0;
        uint32_t nr_live_seen = 0;
        bool is_last_kept = false;
        const struct events_type *read = type_named(et, "DiskIo/Read");
        for (uint32_t i = 0; i < n; i++) {
                sum += g[i].nr_events;
                if (g[i].pid == EVENTS_TABLE_EXITED) {
                        assert_int_equal(g[i].tid, EVENTS_TABLE_EXITED);
                        if (g[i].type_id == read->id)
                                exited_reads += g[i].nr_events;
                        else
                                exited_ends += g[i].nr_events;
                } else if (g[i].pid >= 100 && g[i].pid < 100 + nr_live) {
                        assert_int_equal(g[i].nr_events, 2);
                        nr_live_seen++;
                } else if (g[i].pid == 1000000 + nr_short - 1) {
                        is_last_kept = true; /* ended 50 us before the trace's last event */
                }
        }
        assert_int_equal(sum, nr_added); /* every event in a row */
        assert_int_equal(nr_live_seen, nr_live);
        assert_true(is_last_kept);
        /* most of the short processes folded: all but those of the last 2 s (20,000) */
        assert_true(exited_reads >= 3ull * (nr_short - 20000 - EVENTS_TABLE_MAX_ENDED));
        assert_true(exited_ends >= nr_short - 20000 - EVENTS_TABLE_MAX_ENDED);
        /* by process: one row a type for them all */
        g = events_table_groups(et, false, &n);
        uint32_t nr_exited_rows = 0;
        for (uint32_t i = 0; i < n; i++)
                nr_exited_rows += g[i].pid == EVENTS_TABLE_EXITED;
        assert_int_equal(nr_exited_rows, 2);
        events_table_free(et);
}

/* The profile feeds it within its time window and zoom, as the other tables. */
static void test_profile_window(void **state)
{
        (void)state;
        struct profile_options po = {0};
        struct profile *p = profile_new(&po);
        profile_set_window(p, true, 2000, 4000);
        for (int i = 0; i < 6; i++) {
                struct kevent ev = disk_read(1000 * i, i < 3 ? 100 : 200, 101, 1);
                profile_event(p, &ev);
        }
        /* 2000 and 3000 only */
        assert_int_equal(events_table_total(profile_events(p)), 2);
        profile_set_window(p, false, 0, 0);
        profile_restart(p);
        profile_zoom(p, 200);
        for (int i = 0; i < 6; i++) {
                struct kevent ev = disk_read(1000 * i, i < 3 ? 100 : 200, 101, 1);
                profile_event(p, &ev);
        }
        assert_int_equal(events_table_total(profile_events(p)), 3);
        profile_free(p);
}

/* The text of the decoded types is --dump's: a CSwitch's words, a stack's list. */
static void field_to(void *ctx, const char *name, enum kevent_text_kind kind, const char *value)
{
        char *out = ctx;
        size_t len = strlen(out);
        snprintf(out + len, 1024 - len, " %s%s=%s", kind == KEV_TEXT_STRING ? "$" : "", name,
                 value);
}

static void test_text(void **state)
{
        (void)state;
        struct kevent_text scratch = {0};
        char out[1024] = "";
        struct kevent ev;
        memset(&ev, 0, sizeof(ev));
        ev.type = KEV_STACK;
        uint64_t frames[3] = {0x1, 0xfffff80000001234ull, 0x7ff0};
        ev.stack.nr_frames = 3;
        ev.stack.frames = frames;
        ev.stack.event_time_ns = -1500000000;
        kevent_text_fields(&ev, &scratch, field_to, out);
        assert_string_equal(out,
                            " event_time=-1.500000000 frames=3: 0x1 0xfffff80000001234 0x7ff0");
        out[0] = 0;
        memset(&ev, 0, sizeof(ev));
        ev.type = KEV_FIELDS;
        struct kevent_field f[3] = {{"A", KEV_FIELD_INT, (uint64_t)-5, ""},
                                    {"B", KEV_FIELD_STR, 0, "b c"},
                                    {"C", KEV_FIELD_HEX, 255, ""}};
        ev.fields.nr = 3;
        ev.fields.list = f;
        ev.nr_pmc = 2;
        ev.pmc[0] = 10;
        ev.pmc[1] = 20;
        kevent_text_fields(&ev, &scratch, field_to, out);
        assert_string_equal(out, " A=-5 $B=b c C=0xff pmc=10,20");
        /* a list past max_list ends in "..." (the events table's store: a long stack) */
        out[0] = 0;
        memset(&ev, 0, sizeof(ev));
        ev.type = KEV_STACK;
        ev.stack.nr_frames = 3;
        ev.stack.frames = frames;
        scratch.max_list = 8;
        kevent_text_fields(&ev, &scratch, field_to, out);
        assert_string_equal(out, " event_time=0.000000000 frames=3: 0x1...");
        kevent_text_fini(&scratch);
}

/* ---- the view ---- */

struct harness {
        struct ui_state st;
        struct ui_view *view;
        struct ui_table table;
        struct ui_build_ctx m;
};

static void rebuild(struct harness *h)
{
        if (h->m.profile) /* as the loop does before the views read the model */
                profile_catch_up(h->m.profile);
        h->view->build(h->view, &h->m, &h->table);
}

static unsigned press(struct harness *h, int key, uint64_t row_key)
{
        h->st.status[0] = 0;
        struct ui_key_ctx ctx = {
                .st = &h->st, .view = h->view, .table = &h->table, .row_key = row_key};
        unsigned r = ui_key_dispatch(&ctx, key);
        if (r & UI_REBUILD)
                rebuild(h);
        return r;
}

/* the row whose text column col holds text, UINT32_MAX when none */
static uint32_t row_with(const struct ui_table *t, uint32_t col, const char *text)
{
        for (uint32_t r = 0; r < t->nr_rows; r++)
                if (strcmp(ui_table_cell_text(t, r, col), text) == 0)
                        return r;
        return UINT32_MAX;
}

/* the column titled title, UINT32_MAX when none */
static uint32_t col_titled(const struct ui_table *t, const char *title)
{
        for (uint32_t c = 0; c < t->nr_cols; c++)
                if (t->cols[c].title && strcmp(t->cols[c].title, title) == 0)
                        return c;
        return UINT32_MAX;
}

/* the events view over a profile of its own (returned; the caller frees both) */
static struct profile *harness_new(struct harness *h)
{
        struct profile_options po = {0};
        struct profile *p = profile_new(&po);
        memset(h, 0, sizeof(*h));
        h->st.nr_views = NR_VIEWS;
        h->view = events_view_new();
        ui_table_init(&h->table, h->view->cols, h->view->nr_cols);
        h->m = (struct ui_build_ctx){p, false, "", HOT_SOURCE_TIMER};
        return p;
}

static void test_view(void **state)
{
        (void)state;
        struct harness h;
        struct profile *p = harness_new(&h);

        /* nothing yet: a row says why */
        rebuild(&h);
        assert_int_equal(h.table.nr_rows, 1);
        assert_true(h.table.flags[0] & UI_ROW_GREYED);

        for (int i = 0; i < 5; i++) {
                struct kevent ev = disk_read(1000 * i, 100, 101 + (i & 1), 512u * (unsigned)i);
                profile_event(p, &ev);
        }
        struct kevent u = user_event(10, 20);
        profile_event(p, &u);
        rebuild(&h);
        uint32_t last = h.table.nr_cols - 1;
        assert_int_equal(h.table.nr_rows, 2);
        /* the most frequent first, its count in the first column */
        assert_string_equal(ui_table_cell_text(&h.table, 0, last), "DiskIo/Read");
        assert_int_equal(h.table.cells[0].u, 5);
        assert_int_equal(h.view->row_pid(h.view, &h.table, h.table.keys[0]), 0);

        /* Enter: its events, the fields in columns titled by their names */
        unsigned r = press(&h, '\n', h.table.keys[0]);
        assert_true(r & UI_REBUILD);
        assert_true(events_view_is_list(h.view));
        assert_int_equal(h.table.nr_rows, 5);
        uint32_t size = col_titled(&h.table, "TransferSize");
        uint32_t file = col_titled(&h.table, "FileName");
        assert_int_not_equal(size, UINT32_MAX);
        assert_int_not_equal(file, UINT32_MAX);
        assert_int_not_equal(row_with(&h.table, size, "2048"), UINT32_MAX);
        assert_int_not_equal(row_with(&h.table, 0, "0.000004000"), UINT32_MAX);
        /* what / finds: a field's value is a row's text */
        assert_true(ui_table_row_contains(&h.table, 0, "notepad.exe"));
        /* an event's process, for t */
        assert_int_equal(h.view->row_pid(h.view, &h.table, h.table.keys[0]), 100);
        /* Enter on an event: its fields on the status line */
        press(&h, '\n', h.table.keys[4]);
        assert_non_null(strstr(h.st.status, "TransferSize=2048"));

        /* Esc: back to the types */
        r = press(&h, 27, 0);
        assert_true(r & UI_REBUILD);
        assert_false(events_view_is_list(h.view));
        assert_int_equal(h.table.nr_rows, 2);

        /* p: by process, then by thread; Enter on a thread's row lists that thread's events */
        press(&h, 'p', 0);
        assert_int_equal(h.table.nr_rows, 2);
        press(&h, 'p', 0);
        assert_int_equal(h.table.nr_rows, 3);
        uint32_t tid_col = col_titled(&h.table, "TID");
        assert_int_not_equal(tid_col, UINT32_MAX);
        uint32_t row = UINT32_MAX;
        for (uint32_t i = 0; i < h.table.nr_rows; i++)
                if (h.table.cells[(size_t)i * h.table.nr_cols + tid_col].u == 102)
                        row = i;
        assert_int_not_equal(row, UINT32_MAX);
        assert_int_equal(h.view->row_pid(h.view, &h.table, h.table.keys[row]), 100);
        press(&h, '\n', h.table.keys[row]);
        assert_true(events_view_is_list(h.view));
        assert_int_equal(h.table.nr_rows, 2); /* events 1 and 3 ran on thread 102 */
        press(&h, 'p', 0);                    /* back to the types */
        assert_false(events_view_is_list(h.view));

        ui_table_fini(&h.table);
        h.view->free(h.view);
        profile_free(p);
}

/* A fold that frees no room (the one process that ended had a row a type: they become the
   [exited processes] rows) leaves the table to grow: the new row then finds its slot in the table
   made again, no row is written over, and every row is found again after. */
static void test_groups_fold_no_room(void **state)
{
        (void)state;
        struct events_table *et = events_table_new();
        events_table_set_max_recent(et, 0);
        events_table_set_fold_exited(et, true);
        struct kevent ev = disk_read(0, 77, 77, 1);
        events_table_add(et, &ev);
        struct kevent end = process_end(1, 77);
        events_table_add(et, &end);
        const uint32_t nr = 40000;
        for (uint32_t round = 0; round < 2; round++)
                for (uint32_t i = 0; i < nr; i++) {
                        /* 3 s on: process 77 is past the grace at every growth */
                        struct kevent r = disk_read(3000000000ll + i, 1000 + i, 1000 + i, 1);
                        events_table_add(et, &r);
                }
        uint32_t n = 0;
        const struct events_group *g = events_table_groups(et, true, &n);
        assert_int_equal(n, nr + 2); /* each process's row, and the two folded */
        uint64_t sum = 0;
        for (uint32_t i = 0; i < n; i++) {
                sum += g[i].nr_events;
                if (g[i].pid == EVENTS_TABLE_EXITED)
                        assert_int_equal(g[i].nr_events, 1);
                else
                        assert_int_equal(g[i].nr_events, 2);
        }
        assert_int_equal(sum, 2 * nr + 2);
        assert_int_equal(events_table_nr_no_room(et), 0);
        events_table_free(et);
}

/* By process, the processes that ended are one row a type, named so, without a PID; Enter on
   it says where their events are instead of listing none. */
static void test_view_exited(void **state)
{
        (void)state;
        struct harness h;
        struct profile *p = harness_new(&h);
        events_table_set_fold_exited(profile_events(p), true); /* as a live session's profile */
        /* 5000 processes a millisecond apart, a read and an end each: past 8192 rows the
           table would grow, and the ends of 2 s before fold instead */
        for (uint32_t i = 0; i < 5000; i++) {
                struct kevent ev = disk_read(1000000ll * i, 5000 + i, 5000 + i, 1);
                profile_event(p, &ev);
                struct kevent end = process_end(1000000ll * i + 1, 5000 + i);
                profile_event(p, &end);
        }
        rebuild(&h);
        press(&h, 'p', 0); /* by process */
        uint32_t last = h.table.nr_cols - 1, name_col = col_titled(&h.table, "Process");
        assert_int_not_equal(name_col, UINT32_MAX);
        uint32_t row = row_with(&h.table, name_col, "[exited processes]");
        assert_int_not_equal(row, UINT32_MAX);
        assert_int_not_equal(row_with(&h.table, last, "DiskIo/Read"), UINT32_MAX);
        assert_true(h.table.nr_rows < 2 * 5000);
        assert_int_equal(h.view->row_pid(h.view, &h.table, h.table.keys[row]), 0);
        unsigned r = press(&h, '\n', h.table.keys[row]);
        assert_false(r & UI_REBUILD);
        assert_false(events_view_is_list(h.view));
        assert_non_null(strstr(h.st.status, "processes that ended are folded"));
        ui_table_fini(&h.table);
        h.view->free(h.view);
        profile_free(p);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_counts_and_fields),
                cmocka_unit_test(test_kinds_take_turns),
                cmocka_unit_test(test_caps),
                cmocka_unit_test(test_groups_off),
                cmocka_unit_test(test_groups_grow_to_cap),
                cmocka_unit_test(test_groups_fold_exited),
                cmocka_unit_test(test_groups_fold_no_room),
                cmocka_unit_test(test_profile_window),
                cmocka_unit_test(test_text),
                cmocka_unit_test(test_view),
                cmocka_unit_test(test_view_exited),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
