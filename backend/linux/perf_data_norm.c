/* SPDX-License-Identifier: MIT */
/* perf_data_norm.c: a perf.data file's records in the live form (each record's event named by
   PERF_SAMPLE_IDENTIFIER, side-band records ending in a sample_id trailer, MMAP as MMAP2,
   LOST_SAMPLES as LOST), indexed in time order in one pass over the file (the scan), and handed
   to the converter in that order. */
#include "perf_data_norm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "le_bytes.h"
#include "perf_data_int.h"
#include "util/hash.h"
#include "util/xalloc.h"

#define TRAILER_BITS                                                                               \
        (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |             \
         PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

/* The sample_id trailer's fields (perf_event_open(2): sample_id_all). */
struct trailer {
        uint32_t pid, tid;
        uint64_t time, id, stream_id;
        uint32_t cpu;
};

static uint32_t trailer_size(uint64_t st)
{
        return 8 * (uint32_t)(!!(st & PERF_SAMPLE_TID) + !!(st & PERF_SAMPLE_TIME) +
                              !!(st & PERF_SAMPLE_ID) + !!(st & PERF_SAMPLE_STREAM_ID) +
                              !!(st & PERF_SAMPLE_CPU) + !!(st & PERF_SAMPLE_IDENTIFIER));
}

static void trailer_read(const uint8_t *p, uint64_t st, struct trailer *t)
{
        if (st & PERF_SAMPLE_TID) {
                t->pid = le_get32(p);
                t->tid = le_get32(p + 4);
                p += 8;
        }
        if (st & PERF_SAMPLE_TIME) {
                t->time = le_get64(p);
                p += 8;
        }
        if (st & PERF_SAMPLE_ID) {
                t->id = le_get64(p);
                p += 8;
        }
        if (st & PERF_SAMPLE_STREAM_ID) {
                t->stream_id = le_get64(p);
                p += 8;
        }
        if (st & PERF_SAMPLE_CPU)
                t->cpu = le_get32(p);
}

static uint8_t *trailer_write(uint8_t *p, uint64_t st, const struct trailer *t, uint64_t ident)
{
        if (st & PERF_SAMPLE_TID) {
                le_put32(p, t->pid);
                le_put32(p + 4, t->tid);
                p += 8;
        }
        if (st & PERF_SAMPLE_TIME) {
                le_put64(p, t->time);
                p += 8;
        }
        if (st & PERF_SAMPLE_ID) {
                le_put64(p, t->id);
                p += 8;
        }
        if (st & PERF_SAMPLE_STREAM_ID) {
                le_put64(p, t->stream_id);
                p += 8;
        }
        if (st & PERF_SAMPLE_CPU) {
                le_put32(p, t->cpu);
                le_put32(p + 4, 0);
                p += 8;
        }
        le_put64(p, ident);
        return p + 8;
}

/* Room for a record in the live form of up to size bytes: at the arena's end, 8-aligned, for a
   record kept there; the scratch record otherwise. */
static uint8_t *arena_reserve(struct conv_state *cs, size_t size)
{
        if (cs->mode == CONV_EMIT || cs->is_raw) {
                if (cs->scratch_cap < size) {
                        cs->scratch = xrealloc(cs->scratch, size);
                        cs->scratch_cap = size;
                }
                return cs->scratch;
        }
        cs->arena.len = (cs->arena.len + 7) & ~(size_t)7;
        if (cs->arena.cap - cs->arena.len < size) {
                size_t cap = cs->arena.cap ? cs->arena.cap : (1u << 20);
                while (cap - cs->arena.len < size)
                        cap *= 2;
                cs->arena.data = xrealloc(cs->arena.data, cap);
                cs->arena.cap = cap;
        }
        return cs->arena.data + cs->arena.len;
}

/* The index twice as large: on the heap while under RECS_HUGE_MIN bytes, then in a mapping in
   huge pages (perf_data_mem.h), which grows without a copy: a 1 M-sample file's 38 MB index
   took 9,400 page faults of 4 KiB, half of its replay's; a small file's stays in the heap
   rather than zero a 2 MiB page. Where no mapping can be made, the heap. */
#define RECS_HUGE_MIN ((size_t)2 << 20)

static void recs_grow(struct conv_state *cs)
{
        size_t cap = cs->cap_recs ? 2 * (size_t)cs->cap_recs : 1024;
        size_t bytes = cap * sizeof(*cs->recs), used = cs->nr_recs * sizeof(*cs->recs);
        if (bytes >= RECS_HUGE_MIN && !cs->is_recs_heap) {
                bool is_mapped = cs->recs_mem.data != NULL;
                if (perf_data_mem_reserve(&cs->recs_mem, bytes) == 0) {
                        if (!is_mapped) {
                                memcpy(cs->recs_mem.data, cs->recs, used);
                                free(cs->recs);
                        }
                        cs->recs = (struct norm_rec *)(void *)cs->recs_mem.data;
                        cs->cap_recs = (uint32_t)cap;
                        return;
                }
                cs->is_recs_heap = true;
                if (is_mapped) {
                        struct norm_rec *heap = xmalloc(bytes);
                        memcpy(heap, cs->recs, used);
                        perf_data_mem_free(&cs->recs_mem);
                        cs->recs = heap;
                        cs->cap_recs = (uint32_t)cap;
                        return;
                }
        }
        cs->recs = xrealloc(cs->recs, bytes);
        cs->cap_recs = (uint32_t)cap;
}

/* The record just put in the live form by arena_reserve, size bytes, sorted by time: indexed
   (CONV_INDEX) or converted (CONV_EMIT). */
static void arena_commit(struct conv_state *cs, uint32_t size, uint64_t time)
{
        if (cs->mode == CONV_EMIT) {
                perf_conv_record(cs->conv, 0, cs->scratch, size);
                return;
        }
        if (time < cs->prev_time)
                cs->is_sorted = false;
        cs->prev_time = time;
        if (cs->nr_recs == cs->cap_recs)
                recs_grow(cs);
        struct norm_rec *n = &cs->recs[cs->nr_recs];
        *n = (struct norm_rec){.time = time, .last_time = cs->cur_last_time};
        if (cs->is_raw) {
                n->at = (uint64_t)(uintptr_t)cs->cur->data;
                n->event = cs->cur->event;
        } else {
                n->at = cs->arena.len;
                n->size = size;
                cs->arena.len += size;
        }
        cs->nr_recs++;
        cs->st->nr_converted++;
}

/* A sample: the IDENTIFIER of its event's converter event put first. */
static void norm_sample(struct conv_state *cs, const struct perf_data_record *r, uint32_t ev)
{
        const struct perf_event_attr *a = &perf_data_event(cs->pd, ev)->attr;
        uint64_t st = a->sample_type;
        const uint8_t *body = r->data + 8;
        uint32_t body_size = r->size - 8;
        if (st & PERF_SAMPLE_IDENTIFIER) {
                if (body_size < 8)
                        return;
                body += 8;
                body_size -= 8;
        }
        if (cs->mode == CONV_EMIT && cs->file_events && ev < cs->nr_events &&
            ((uintptr_t)r->data & 7) == 0) {
                /* its time, CPU and period were counted as it was indexed; the converter
                   reads it where it lies, with its event given (a copy of each sample in the
                   live form, its event's id put first, was a twentieth of a small file's time
                   to the table), when it lies as a ring's records do, 8-byte aligned (a
                   damaged file's may not: those are copied) */
                perf_conv_record_ev(cs->conv, 0, r->data, r->size, &cs->file_events[ev]);
                return;
        }
        uint32_t size = 8 + 8 + body_size;
        if (size > 0xffff)
                return;
        /* a sample indexed where it is in the file: its time is all the index needs (it is
           put in the live form as it is converted) */
        if (cs->mode == CONV_EMIT || !cs->is_raw) {
                uint8_t *p = arena_reserve(cs, size);
                memcpy(p, r->data, 8);
                le_put16(p + 6, (uint16_t)size);
                le_put64(p + 8, ev + 1);
                memcpy(p + 16, body, body_size);
        }
        if (cs->mode == CONV_EMIT) {
                /* its time, CPU and period were counted as it was indexed */
                perf_conv_record(cs->conv, 0, cs->scratch, size);
                return;
        }
        uint64_t time = cs->last_time;
        /* the body's fields in order: IP, TID, TIME, ADDR, ID, STREAM_ID, CPU, PERIOD */
        uint32_t at = 8 * (uint32_t)(!!(st & PERF_SAMPLE_IP) + !!(st & PERF_SAMPLE_TID));
        if ((st & PERF_SAMPLE_TIME) && at + 8 <= body_size)
                time = le_get64(body + at);
        if (st & PERF_SAMPLE_CPU) {
                uint32_t cpu_at =
                        at +
                        8 * (uint32_t)(!!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_ADDR) +
                                       !!(st & PERF_SAMPLE_ID) + !!(st & PERF_SAMPLE_STREAM_ID));
                if (cpu_at + 4 <= body_size && le_get32(body + cpu_at) > cs->max_cpu)
                        cs->max_cpu = le_get32(body + cpu_at);
        }
        if ((st & PERF_SAMPLE_PERIOD) && ev < MAX_CONV_EVENTS) {
                uint32_t period_at =
                        at +
                        8 * (uint32_t)(!!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_ADDR) +
                                       !!(st & PERF_SAMPLE_ID) + !!(st & PERF_SAMPLE_STREAM_ID) +
                                       !!(st & PERF_SAMPLE_CPU));
                if (period_at + 8 <= body_size) {
                        cs->period_sum[ev] += le_get64(body + period_at);
                        cs->nr_periods[ev]++;
                }
        }
        cs->last_time = time;
        cs->st->nr_samples++;
        if (ev < 16)
                cs->st->nr_by_event[ev]++;
        arena_commit(cs, size, time);
}

/* Whether a kernel-space path is a module's: a .ko file (compressed or not) or a [name]. */
static bool is_module_path(const char *path)
{
        static const char *const ends[] = {".ko", ".ko.gz", ".ko.xz", ".ko.zst", ".ko.bz2"};
        size_t n = strlen(path);
        if (path[0] == '[')
                return true;
        for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
                size_t e = strlen(ends[i]);
                if (n > e && strcmp(path + n - e, ends[i]) == 0)
                        return true;
        }
        return false;
}

/* The BUILD_ID feature's entry of the (host's) kernel: "[kernel.kallsyms]", else the one of
   kernel mode that is no module, as perf takes it (perf record names it by the vmlinux it
   found: "/lib/modules/6.6.7-arch1-1/build/vmlinux"); NULL when there is none. */
static const struct perf_data_build_id *kernel_build_id(const struct perf_data_info *in)
{
        static const char kernel[] = "[kernel.kallsyms]";
        const struct perf_data_build_id *found = NULL;
        for (uint32_t i = 0; i < in->nr_build_ids; i++) {
                const struct perf_data_build_id *b = &in->build_ids[i];
                if (!b->size)
                        continue;
                if (strcmp(b->path, kernel) == 0)
                        return b;
                if (!found &&
                    (b->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL &&
                    !is_module_path(b->path))
                        found = b;
        }
        return found;
}

/* The BUILD_ID feature's entry of a kernel module's path ("/lib/modules/.../nvidia.ko"), or of
   the module a "[name]" names ("[nvidia]": name.ko, compressed or not), NULL where none. */
static const struct perf_data_build_id *module_build_id(const struct perf_data_info *in,
                                                        const char *path)
{
        size_t n = strlen(path);
        bool is_short = n > 2 && path[0] == '[' && path[n - 1] == ']';
        for (uint32_t i = 0; i < in->nr_build_ids; i++) {
                const struct perf_data_build_id *b = &in->build_ids[i];
                if (!b->size ||
                    (b->misc & PERF_RECORD_MISC_CPUMODE_MASK) != PERF_RECORD_MISC_KERNEL)
                        continue;
                if (strcmp(b->path, path) == 0)
                        return b;
                const char *base = strrchr(b->path, '/');
                base = base ? base + 1 : b->path;
                if (is_short && strncmp(base, path + 1, n - 2) == 0 &&
                    strncmp(base + n - 2, ".ko", 3) == 0)
                        return b;
        }
        return NULL;
}

/* A kernel module's map (pid -1, not the kernel's) with a build-id: perf 6.17 gave all 103
   module maps of a recording the one build-id (not the modules', which its BUILD_ID feature
   lists apart), so that the modules were one. The BUILD_ID feature's id of the module where it
   has one (perf buildid-list's, what perf report reads); else none where an earlier module's
   map of another path had the same. */
static void module_map_build_id(struct conv_state *cs, uint8_t *rec, uint32_t end)
{
        if (end < 73 || !(le_get16(rec + 4) & PERF_RECORD_MISC_MMAP_BUILD_ID))
                return;
        const char *path = (const char *)rec + 72;
        size_t len = strnlen(path, end - 72);
        if (len == end - 72)
                return;
        uint8_t *id = rec + 44;
        uint32_t size = rec[40] < 20 ? rec[40] : 20;
        const struct perf_data_build_id *b = module_build_id(perf_data_info(cs->pd), path);
        if (b) {
                memset(rec + 40, 0, 24);
                rec[40] = (uint8_t)(b->size < 20 ? b->size : 20);
                memcpy(id, b->id, rec[40]);
                return;
        }
        uint64_t h = hash_fnv1a(path, len, HASH_FNV_OFFSET);
        if (!cs->module_bid_size) {
                cs->module_bid_size = (uint8_t)size;
                memcpy(cs->module_bid, id, size);
                cs->module_bid_path = h;
        } else if (h != cs->module_bid_path && size == cs->module_bid_size &&
                   memcmp(id, cs->module_bid, size) == 0) {
                le_put16(rec + 4, le_get16(rec + 4) & ~PERF_RECORD_MISC_MMAP_BUILD_ID);
                memset(rec + 40, 0, 24);
        }
}

/* The kernel's and its modules' maps as the live source writes them: perf's file names the
   kernel "[kernel.kallsyms]_text" (or _stext) with pid -1 and its start address as pgoff; live
   it is "[kernel.kallsyms]" of pid 0 at pgoff 0, with its build-id (from the BUILD_ID feature)
   in the record. rec: an MMAP2 record's fixed part and file name, end bytes. */
static void mmap2_as_live(struct conv_state *cs, uint8_t *rec, uint32_t end)
{
        static const char kernel[] = "[kernel.kallsyms]";
        if (end < 72 || le_get32(rec + 8) != UINT32_MAX)
                return;
        le_put32(rec + 8, 0);
        le_put32(rec + 12, 0);
        char *name = (char *)rec + 72;
        size_t room = end - 72;
        if (room < sizeof(kernel) || strncmp(name, kernel, sizeof(kernel) - 1) != 0) {
                module_map_build_id(cs, rec, end);
                return;
        }
        /* the symbol the map is relative to ("_text", "_stext") and its address then */
        char ref[32];
        snprintf(ref, sizeof(ref), "%.*s",
                 (int)strnlen(name + sizeof(kernel) - 1, room - sizeof(kernel) + 1),
                 name + sizeof(kernel) - 1);
        uint64_t ref_addr = le_get64(rec + 32);
        uint64_t start = le_get64(rec + 16), len = le_get64(rec + 24);
        if (start && start <= UINT32_MAX && ref_addr > UINT32_MAX && ref_addr > start &&
            len > ref_addr - start) {
                /* a 64-bit kernel's map said to start at a 32-bit address (perf 3.8's, an
                   address rewritten): it starts at its symbol, so that the user addresses
                   below are no kernel's, as perf reads them by the sample's mode (a 32-bit
                   kernel's map starts at its symbol's 32-bit address) */
                le_put64(rec + 16, ref_addr);
                le_put64(rec + 24, len - (ref_addr - start));
        }
        memset(name, 0, room);
        memcpy(name, kernel, sizeof(kernel));
        le_put64(rec + 32, 0);
        const struct perf_data_info *in = perf_data_info(cs->pd);
        uint8_t bid[20];
        const struct perf_data_build_id *b = kernel_build_id(in);
        uint32_t bid_size = b ? (b->size < 20 ? b->size : 20) : 0;
        if (bid_size)
                memcpy(bid, b->id, bid_size);
        /* none recorded (perf record -z, --no-buildid): the running kernel's, where the file
           was recorded under this kernel's release and the map starts where this kernel's
           _text (_stext) is, as perf report takes the running kernel's symbols then */
        if (!bid_size)
                bid_size = ksyms_running_build_id_at(in->osrelease, ref, ref_addr, bid);
        if (!bid_size)
                return;
        le_put16(rec + 4, le_get16(rec + 4) | PERF_RECORD_MISC_MMAP_BUILD_ID);
        memset(rec + 40, 0, 24);
        rec[40] = (uint8_t)bid_size;
        memcpy(rec + 44, bid, bid_size);
}

/* A side-band record: its body (MMAP grown into MMAP2, LOST_SAMPLES into LOST), then the
   trailer of its event's sample_type with the side-band twin's IDENTIFIER. */
/* Whether no event of the file samples its time (perf record --no-timestamp, --per-thread):
   then a FORK's or EXIT's own time would be the only one in the trace, and its records stay at
   the start, as perf report's sample duration is 0. A pipe's attrs all come before its data. */
static bool no_event_timed(const struct conv_state *cs)
{
        uint32_t n = perf_data_nr_events(cs->pd);
        for (uint32_t i = 0; i < n; i++)
                if (perf_data_event(cs->pd, i)->attr.sample_type & PERF_SAMPLE_TIME)
                        return false;
        return n > 0;
}

static void norm_sideband(struct conv_state *cs, const struct perf_data_record *r, uint32_t ev)
{
        const struct perf_event_attr *a = &perf_data_event(cs->pd, ev)->attr;
        uint64_t st = a->sample_type & TRAILER_BITS;
        uint32_t tsize = a->sample_id_all ? trailer_size(st) : 0;
        if (r->size < 8 + tsize)
                return;
        const uint8_t *body = r->data + 8;
        uint32_t body_size = r->size - 8 - tsize;
        struct trailer t = {0};
        if (tsize)
                trailer_read(r->data + r->size - tsize, st, &t);
        else
                t.time = cs->last_time;
        uint32_t type = r->type;
        bool untimed = (type == PERF_RECORD_FORK || type == PERF_RECORD_EXIT) && no_event_timed(cs);
        /* records that carry their own thread and time */
        if ((type == PERF_RECORD_FORK || type == PERF_RECORD_EXIT) && body_size >= 24) {
                if (!tsize || !(st & PERF_SAMPLE_TIME))
                        t.time = untimed ? 0 : le_get64(body + 16);
        }
        if (!tsize &&
            (type == PERF_RECORD_COMM || type == PERF_RECORD_MMAP || type == PERF_RECORD_MMAP2) &&
            body_size >= 8) {
                t.pid = le_get32(body);
                t.tid = le_get32(body + 4);
        }
        if (!(st & PERF_SAMPLE_TIME) && !tsize)
                t.time = cs->last_time;
        uint32_t extra = type == PERF_RECORD_MMAP ? 32 : type == PERF_RECORD_LOST_SAMPLES ? 8 : 0;
        uint64_t nst = st | PERF_SAMPLE_IDENTIFIER;
        uint32_t size = 8 + body_size + extra + trailer_size(nst);
        if (size > 0xffff)
                return;
        uint8_t *p = arena_reserve(cs, size);
        memcpy(p, r->data, 8);
        le_put16(p + 6, (uint16_t)size);
        uint8_t *q = p + 8;
        if (type == PERF_RECORD_MMAP && body_size >= 32) {
                /* pid, tid, addr, len, pgoff; then MMAP2's maj, min, ino, ino_generation,
                   prot, flags; then the file name */
                le_put32(p, PERF_RECORD_MMAP2);
                memcpy(q, body, 32);
                memset(q + 32, 0, 24);
                bool is_data = (r->misc & PERF_RECORD_MISC_MMAP_DATA) != 0;
                le_put32(q + 56, PROT_READ | (is_data ? 0 : PROT_EXEC));
                le_put32(q + 60, MAP_PRIVATE);
                memcpy(q + 64, body + 32, body_size - 32);
        } else if (type == PERF_RECORD_LOST_SAMPLES && body_size >= 8) {
                le_put32(p, PERF_RECORD_LOST);
                le_put64(q, 0);
                memcpy(q + 8, body, body_size);
                cs->st->nr_lost_samples += le_get64(body);
        } else {
                if (type == PERF_RECORD_MMAP || type == PERF_RECORD_LOST_SAMPLES)
                        return;
                memcpy(q, body, body_size);
                if ((type == PERF_RECORD_FORK || type == PERF_RECORD_EXIT) && untimed &&
                    body_size >= 24)
                        le_put64(q + 16, 0);
        }
        /* the build-id form only where the event asked for it: a kernel sets the misc bit of
           a record it shares between events when any of them asked (another session's), and
           writes device and inode for this one */
        if (type == PERF_RECORD_MMAP2 && (r->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) &&
            !perf_data_event(cs->pd, ev)->attr.build_id)
                le_put16(p + 4, r->misc & ~PERF_RECORD_MISC_MMAP_BUILD_ID);
        if (type == PERF_RECORD_MMAP || type == PERF_RECORD_MMAP2)
                mmap2_as_live(cs, p, 8 + body_size + extra);
        q += body_size + extra;
        trailer_write(q, st, &t, SIDEBAND_ID_BASE + ev);
        if ((st & PERF_SAMPLE_CPU) && t.cpu > cs->max_cpu && t.cpu != UINT32_MAX)
                cs->max_cpu = t.cpu;
        if (t.time)
                cs->last_time = t.time;
        arena_commit(cs, size, t.time ? t.time : cs->last_time);
}

/* PERF_RECORD_KSYMBOL (perf_event.h): addr u64, len u32, ksym_type u16, flags u16, name, after
   the 8-byte header. A BPF program's or trampoline's text, which the kernel's image does not
   hold: its symbol, of the kernel's "bpf" module as /proc/kallsyms names it (the symbol store
   makes each such program a module of its own, as perf report: sym_bpf.c). An unregistered
   one stays (the samples before its end were in it); one registered later at its address takes
   its place (perf_data_conv_scan's sort keeps the last). */
static void keep_ksymbol(struct conv_state *cs, const struct perf_data_record *r)
{
        enum { KSYM_NAME_OFF = 8 + 8 + 4 + 2 + 2, KSYM_TYPE_BPF = 1, KSYM_FLAG_UNREGISTER = 1 };
        if (r->size <= KSYM_NAME_OFF)
                return;
        if (le_get16(r->data + 22) & KSYM_FLAG_UNREGISTER)
                return;
        const char *name = (const char *)r->data + KSYM_NAME_OFF;
        size_t n = strnlen(name, r->size - KSYM_NAME_OFF);
        if (!n)
                return;
        cs->ksyms = xrealloc(cs->ksyms, (cs->nr_ksyms + 1) * sizeof(*cs->ksyms));
        cs->ksym_names =
                xrealloc(cs->ksym_names, (cs->nr_ksym_names + 1) * sizeof(*cs->ksym_names));
        char *copy = xmalloc(n + 1);
        memcpy(copy, name, n);
        copy[n] = '\0';
        bool is_bpf = le_get16(r->data + 20) == KSYM_TYPE_BPF || strncmp(copy, "bpf_", 4) == 0;
        cs->ksym_names[cs->nr_ksym_names++] = copy;
        cs->ksyms[cs->nr_ksyms] = (struct perf_ksym){le_get64(r->data + 8), le_get32(r->data + 16),
                                                     copy, is_bpf ? "bpf" : ""};
        cs->nr_ksyms++;
}

/* A record that no ETW event stands for: counted, by type where it carries data a user would
   miss (perf_data_conv_stats's nr_not_shown). */
static void not_converted(struct conv_state *cs, uint32_t type)
{
        cs->st->nr_not_converted++;
        switch (type) {
        case PERF_DATA_HEADER_ATTR:
        case PERF_DATA_HEADER_EVENT_TYPE:
        case PERF_DATA_HEADER_TRACING_DATA:
        case PERF_DATA_HEADER_BUILD_ID:
        case PERF_DATA_FINISHED_ROUND:
        case PERF_DATA_ID_INDEX:
        case PERF_DATA_THREAD_MAP:
        case PERF_DATA_CPU_MAP:
        case PERF_DATA_STAT_CONFIG:
        case PERF_DATA_EVENT_UPDATE:
        case PERF_DATA_TIME_CONV:
        case PERF_DATA_HEADER_FEATURE:
        case PERF_DATA_COMPRESSED:
        case PERF_DATA_FINISHED_INIT:
        case PERF_DATA_COMPRESSED2: return; /* the reader's: taken in as it reads */
        default: cs->st->nr_not_shown[type < PERF_DATA_NR_TYPES ? type : PERF_DATA_NR_TYPES]++;
        }
}

static void norm_record(struct conv_state *cs, const struct perf_data_record *r)
{
        cs->cur = r;
        cs->cur_last_time = cs->last_time;
        uint32_t nr = perf_data_nr_events(cs->pd);
        cs->st->nr_records++;
        if (nr == 0 || nr > MAX_CONV_EVENTS) {
                not_converted(cs, r->type);
                return;
        }
        uint32_t ev = r->event >= 0 ? (uint32_t)r->event : 0;
        switch (r->type) {
        case PERF_RECORD_SAMPLE:
                if (r->event < 0) {
                        not_converted(cs, r->type); /* of no event the file describes */
                        return;
                }
                norm_sample(cs, r, ev);
                return;
        case PERF_RECORD_MMAP:
        case PERF_RECORD_MMAP2:
        case PERF_RECORD_COMM:
        case PERF_RECORD_FORK:
        case PERF_RECORD_EXIT:
        case PERF_RECORD_LOST:
        case PERF_RECORD_LOST_SAMPLES:
        case PERF_RECORD_SWITCH:
        case PERF_RECORD_SWITCH_CPU_WIDE: norm_sideband(cs, r, ev); return;
        case PERF_RECORD_THROTTLE:
        case PERF_RECORD_UNTHROTTLE:
                cs->st->nr_throttle++;
                cs->st->nr_not_shown[r->type]++; /* the kernel sampled less for a while */
                return;
        case PERF_RECORD_KSYMBOL:
                /* its symbol at the end, for the addresses the samples hit (as the kernel's);
                   a BPF program's also at its time: a module of its own before its samples */
                keep_ksymbol(cs, r);
                cs->st->nr_ksymbols++;
                norm_sideband(cs, r, ev);
                return;
        default: not_converted(cs, r->type); return;
        }
}

/* The ksyms by address, one at an address: the last one the file registered there (sorted by
   address and the file's order). */
struct ksym_order {
        uint64_t addr;
        uint32_t i;
};

static int cmp_ksym_order(const void *a, const void *b)
{
        const struct ksym_order *x = a, *y = b;
        if (x->addr != y->addr)
                return x->addr < y->addr ? -1 : 1;
        return x->i < y->i ? -1 : x->i > y->i;
}

static void ksyms_sort(struct conv_state *cs)
{
        uint32_t n = cs->nr_ksyms;
        struct ksym_order *o = xmalloc(n * sizeof(*o));
        for (uint32_t i = 0; i < n; i++)
                o[i] = (struct ksym_order){cs->ksyms[i].addr, i};
        qsort(o, n, sizeof(*o), cmp_ksym_order);
        struct perf_ksym *sorted = xmalloc(n * sizeof(*sorted));
        uint32_t k = 0;
        for (uint32_t i = 0; i < n; i++) {
                if (k && sorted[k - 1].addr == o[i].addr)
                        k--;
                sorted[k++] = cs->ksyms[o[i].i];
        }
        free(o);
        free(cs->ksyms);
        cs->ksyms = sorted;
        cs->nr_ksyms = k;
}

/* The first of a[lo..hi) (sorted) whose time is past t (is_past), or is t or later. */
static uint32_t bound(const struct norm_rec *a, uint32_t lo, uint32_t hi, uint64_t t, bool is_past)
{
        while (lo < hi) {
                uint32_t m = lo + (hi - lo) / 2;
                if (a[m].time < t || (is_past && a[m].time == t))
                        lo = m + 1;
                else
                        hi = m;
        }
        return lo;
}

/* dst[lo..hi) = the sorted runs src[lo..mid) and src[mid..hi) merged, records of the same time
   in file order. Only where the runs overlap are records compared one by one: the first run's
   records up to the second's first time go first as they are, the second's from the first's
   last time on last (a file's runs are its CPUs' rings, written in turn each round: after the
   first merges, runs of whole rounds that hardly overlap, then copied rather than compared,
   which were 4% of a 1 M-sample file's replay). */
static void merge_runs(const struct norm_rec *src, struct norm_rec *dst, uint32_t lo, uint32_t mid,
                       uint32_t hi)
{
        uint32_t i = lo, j = mid, end = hi;
        if (lo < mid && mid < hi) {
                i = bound(src, lo, mid, src[mid].time, true);
                end = bound(src, mid, hi, src[mid - 1].time, false);
        }
        memcpy(dst + lo, src + lo, (size_t)(i - lo) * sizeof(*dst));
        memcpy(dst + end, src + end, (size_t)(hi - end) * sizeof(*dst));
        uint32_t o = i;
        while (i < mid && j < end)
                dst[o++] = src[j].time < src[i].time ? src[j++] : src[i++];
        while (i < mid)
                dst[o++] = src[i++];
        while (j < end)
                dst[o++] = src[j++];
}

/* Each run in turn merged into the sorted records before it, where they overlap alone: the
   records of the sorted part past the run's first time, moved to tmp, and the run's records up
   to the sorted part's last time (a file's runs are its CPUs' rings, written in turn each round:
   a run overlaps the last round's others, so that each record moves about once, where each of
   the bottom-up merge's ten passes moved all of a 1 M-sample file's). False, with a[0..n) still
   made of sorted runs, when the overlaps moved more than a few times n records (a file's
   records in no such order): the bottom-up merge then does the rest. */
static bool sort_recs_by_runs(struct norm_rec *a, uint32_t n, struct norm_rec *tmp)
{
        uint64_t budget = 4 * (uint64_t)n + 64;
        uint32_t rs = 1;
        while (rs < n && a[rs].time >= a[rs - 1].time)
                rs++;
        while (rs < n) {
                uint32_t re = rs + 1;
                while (re < n && a[re].time >= a[re - 1].time)
                        re++;
                uint32_t p = bound(a, 0, rs, a[rs].time, true);
                uint32_t end = bound(a, rs, re, a[rs - 1].time, false);
                uint64_t nr_moved = (uint64_t)(rs - p) + (end - rs);
                if (nr_moved > budget)
                        return false;
                budget -= nr_moved;
                memcpy(tmp, a + p, (size_t)(rs - p) * sizeof(*tmp));
                uint32_t i = 0, nr_left = rs - p, j = rs, o = p;
                while (i < nr_left && j < end)
                        a[o++] = a[j].time < tmp[i].time ? a[j++] : tmp[i++];
                while (i < nr_left)
                        a[o++] = tmp[i++];
                rs = re;
        }
        return true;
}

/* Sorts the index by time, records of the same time in file order (a stable sort): the runs
   the file has in order (perf writes each CPU's ring in turn) merged one by one where they
   overlap, else a bottom-up merge of them, with tmp for room. */
static void sort_recs(struct norm_rec *a, uint32_t n, struct norm_rec *tmp)
{
        if (n < 2 || sort_recs_by_runs(a, n, tmp))
                return;
        /* the runs' starts, then n */
        uint32_t *starts = xmalloc(((size_t)n + 1) * sizeof(*starts));
        uint32_t nr_runs = 0;
        for (uint32_t i = 0; i < n; i++)
                if (i == 0 || a[i].time < a[i - 1].time)
                        starts[nr_runs++] = i;
        starts[nr_runs] = n;
        struct norm_rec *src = a, *dst = tmp;
        while (nr_runs > 1) {
                uint32_t k = 0;
                for (uint32_t r = 0; r < nr_runs; r += 2) {
                        uint32_t lo = starts[r], mid = starts[r + 1 <= nr_runs ? r + 1 : nr_runs];
                        uint32_t hi = r + 2 <= nr_runs ? starts[r + 2] : mid;
                        merge_runs(src, dst, lo, mid, hi);
                        starts[k++] = lo;
                }
                starts[k] = n;
                nr_runs = k;
                struct norm_rec *t = src;
                src = dst;
                dst = t;
        }
        if (src != a)
                memcpy(a, src, (size_t)n * sizeof(*a));
        free(starts);
}

void perf_data_norm_free(struct conv_state *cs)
{
        free(cs->arena.data);
        free(cs->scratch);
        free(cs->file_events);
        if (cs->recs_mem.data)
                perf_data_mem_free(&cs->recs_mem);
        else
                free(cs->recs);
        for (uint32_t i = 0; i < cs->nr_ksym_names; i++)
                free(cs->ksym_names[i]);
        free(cs->ksym_names);
        free(cs->ksyms);
}

uint64_t perf_data_norm_emit(struct conv_state *cs, struct perf_conv *c, uint64_t t0)
{
        struct perf_data_conv_stats counted_once = {0}; /* at indexing */
        struct perf_data_conv_stats *st = cs->st;
        cs->st = &counted_once;
        cs->mode = CONV_EMIT;
        cs->conv = c;
        uint64_t t_end = t0;
        for (uint32_t i = 0; i < cs->nr_recs; i++) {
                const struct norm_rec *n = &cs->recs[i];
                if (n->size) {
                        perf_conv_record(c, 0, cs->arena.data + n->at, n->size);
                } else {
                        const uint8_t *p = (const uint8_t *)(uintptr_t)n->at;
                        struct perf_data_record r = {.data = p,
                                                     .size = le_get16(p + 6),
                                                     .type = le_get32(p),
                                                     .misc = le_get16(p + 4),
                                                     .event = n->event};
                        /* the same live form as at indexing: what it depends on is its event's
                           attr (a file's attrs are only ever added to) and the time of the
                           records before it */
                        cs->last_time = n->last_time;
                        if (r.type == PERF_RECORD_SAMPLE)
                                norm_sample(cs, &r, (uint32_t)r.event);
                        else
                                norm_sideband(cs, &r, r.event >= 0 ? (uint32_t)r.event : 0);
                }
                if (n->time > t_end)
                        t_end = n->time;
        }
        cs->st = st;
        return t_end;
}

/* The first and last times and the highest CPU of record r, as the writer's configuration
   counts them. */
static void scan_span(struct perf_data *pd, const struct perf_data_record *r,
                      struct perf_data_scan *s)
{
        if (r->event < 0 || r->type >= PERF_DATA_HEADER_ATTR)
                return;
        const struct perf_event_attr *a = &perf_data_event(pd, (uint32_t)r->event)->attr;
        uint64_t st = a->sample_type;
        if (r->type == PERF_RECORD_SAMPLE) {
                uint32_t at =
                        8 + 8 * (uint32_t)(!!(st & PERF_SAMPLE_IDENTIFIER) +
                                           !!(st & PERF_SAMPLE_IP) + !!(st & PERF_SAMPLE_TID));
                uint64_t time =
                        (st & PERF_SAMPLE_TIME) && at + 8 <= r->size ? le_get64(r->data + at) : 0;
                if (time && time < s->first)
                        s->first = time;
                if (time > s->last)
                        s->last = time;
                uint32_t cpu_at =
                        at +
                        8 * (uint32_t)(!!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_ADDR) +
                                       !!(st & PERF_SAMPLE_ID) + !!(st & PERF_SAMPLE_STREAM_ID));
                if ((st & PERF_SAMPLE_CPU) && cpu_at + 4 <= r->size &&
                    le_get32(r->data + cpu_at) > s->max_cpu &&
                    le_get32(r->data + cpu_at) < MAX_WRITER_CPUS)
                        s->max_cpu = le_get32(r->data + cpu_at);
        } else if (a->sample_id_all) {
                uint64_t ts = st & TRAILER_BITS;
                uint32_t tsize = trailer_size(ts);
                if (r->size < 8 + tsize)
                        return;
                struct trailer t = {0};
                trailer_read(r->data + r->size - tsize, ts, &t);
                if ((ts & PERF_SAMPLE_TIME) && t.time && t.time < s->first)
                        s->first = t.time;
                if ((ts & PERF_SAMPLE_TIME) && t.time > s->last)
                        s->last = t.time;
                if ((ts & PERF_SAMPLE_CPU) && t.cpu > s->max_cpu && t.cpu < MAX_WRITER_CPUS)
                        s->max_cpu = t.cpu;
        }
}

struct perf_data_scan *perf_data_conv_scan(struct perf_data *pd)
{
        struct perf_data_scan *s = xcalloc(1, sizeof(*s));
        s->first = UINT64_MAX;
        struct conv_state *cs = xcalloc(1, sizeof(*cs));
        s->cs = cs;
        cs->pd = pd;
        cs->st = &s->st;
        cs->mode = CONV_INDEX;
        cs->is_sorted = true;
        /* a file's records are indexed where they are (put in the live form again as they
           are converted, in time order): only those whose bytes do not stay are kept in the
           live form (decompressed ones; pipe mode's, whose attrs and features come again when
           it is read again) */
        bool is_pipe = perf_data_info(pd)->is_pipe;
        struct perf_data_record r;
        perf_data_rewind(pd);
        while ((s->rc = perf_data_next(pd, &r, &s->err)) == 1) {
                scan_span(pd, &r, s);
                /* a map's live form takes the kernel's build-id from what the file said so far
                   (a file's data may hold BUILD_ID records): made now, as the others' could be
                   again later (their event's attr, the times before them) */
                cs->is_raw = !is_pipe && !r.is_decompressed && r.type != PERF_RECORD_MMAP &&
                             r.type != PERF_RECORD_MMAP2;
                norm_record(cs, &r);
        }
        cs->is_raw = false;
        /* not rewound: a pipe-mode file's events and features are those read to its end */
        if (s->first == UINT64_MAX)
                s->first = 0;
        if (!cs->is_sorted) {
                struct norm_rec *tmp = xmalloc((size_t)cs->nr_recs * sizeof(*tmp));
                sort_recs(cs->recs, cs->nr_recs, tmp);
                free(tmp);
        }
        if (cs->nr_ksyms)
                ksyms_sort(cs);
        return s;
}

void perf_data_conv_scan_free(struct perf_data_scan *s)
{
        if (!s)
                return;
        perf_data_norm_free(s->cs);
        free(s->cs);
        free(s);
}
