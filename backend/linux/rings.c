/* SPDX-License-Identifier: MIT */
/* rings.c: the events and the rings: open, enable and count the lost of one event; map a CPU's
   ring; gather its records up to a horizon, keep them in time order and merge the CPUs'. */
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
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "le_bytes.h"
#include "live_int.h"
#include "util/clock.h"
#include "util/prefetch.h"
#include "util/xalloc.h"

/* How far ahead of the record read the drain asks for the ring (gather_pass). */
#define RING_PREFETCH_BYTES 4096

_Static_assert(PERF_RECORD_SWITCH_CPU_WIDE == (PERF_RECORD_SWITCH | 1),
               "a switch record's type is one of the two");

/* The message for a failed perf_event_open of what on cpu. */
static int open_error(const struct live_source *ls, int rc, const char *what, uint32_t cpu,
                      struct etl_error *err)
{
        bool needs_tp = ls->has_tp_switch || ls->has_tp_waking;
        switch (-rc) {
        case EACCES:
        case EPERM:
                live_set_err(err,
                             "perf_event_open(%s, CPU %u) returned %s: run as root, grant "
                             "CAP_PERFMON, or `sysctl kernel.perf_event_paranoid=%d`",
                             what, cpu, live_errno_name(-rc), needs_tp ? -1 : 0);
                break;
        case ENOENT:
        case EOPNOTSUPP:
                live_set_err(err, "perf_event_open(%s, CPU %u) returned %s: %s", what, cpu,
                             live_errno_name(-rc),
                             ls->caps.has_pmu ? "this PMU does not support the event"
                                              : ls->caps.why_no_pmu);
                if (-rc == ENOENT && !ls->caps.has_pmu)
                        rc = -EOPNOTSUPP;
                break;
        case EMFILE:
                live_set_err(err,
                             "perf_event_open(%s, CPU %u) returned EMFILE: too many open files "
                             "(raise RLIMIT_NOFILE)",
                             what, cpu);
                break;
        default:
                live_set_err(err, "perf_event_open(%s, CPU %u) returned %s (%s)", what, cpu,
                             live_errno_name(-rc), strerror(-rc));
                break;
        }
        return rc;
}

void live_event_close(struct live_event *ev)
{
        if (!ev)
                return;
        for (uint32_t i = 0; i < ev->spec.nr_members; i++) {
                if (ev->member_fds[i] >= 0)
                        close(ev->member_fds[i]);
        }
        if (ev->fd >= 0)
                close(ev->fd);
        free(ev);
}

static struct live_ring *ring_of(struct live_source *ls, uint32_t cpu)
{
        for (uint32_t i = 0; i < ls->nr_online; i++) {
                if (ls->rings[i].cpu == cpu)
                        return &ls->rings[i];
        }
        return NULL;
}

/* Opens one event (disabled) on cpu for task (-1: every task), with its counters, redirected
   into cpu's ring. */
int live_event_open(struct live_source *ls, const struct live_spec *sp, uint32_t cpu, int32_t task,
                    struct live_event **out, struct etl_error *err)
{
        struct live_event *ev = xcalloc(1, sizeof(*ev));
        pid_t pid = task;
        int rc;

        ev->spec = *sp;
        ev->cpu = cpu;
        ev->task = task;
        ev->fd = -1;
        for (uint32_t i = 0; i < LIVE_MAX_SOURCES; i++)
                ev->member_fds[i] = -1;
        rc = live_perf_event_open(&ev->spec.attr, pid, (int)cpu, -1, PERF_FLAG_FD_CLOEXEC);
        if (rc == -EINVAL && sp->role == ROLE_IMAGE && ev->spec.attr.build_id) {
                /* a kernel before 5.12: no build-ids in MMAP2, read them from the files */
                ls->has_build_id_attr = false;
                ev->spec.attr.build_id = 0;
                rc = live_perf_event_open(&ev->spec.attr, pid, (int)cpu, -1, PERF_FLAG_FD_CLOEXEC);
        }
        if (rc == -EINVAL && ev->spec.attr.inherit_thread) {
                /* a kernel before 5.13: child processes inherit the events too; the converter
                   keeps the traced process's records only */
                ls->has_inherit_thread = false;
                ev->spec.attr.inherit_thread = 0;
                rc = live_perf_event_open(&ev->spec.attr, pid, (int)cpu, -1, PERF_FLAG_FD_CLOEXEC);
        }
        if (rc < 0)
                goto fail;
        ev->fd = rc;
        for (uint32_t i = 0; i < sp->nr_members; i++) {
                rc = live_perf_event_open(&ev->spec.members[i], pid, (int)cpu, ev->fd,
                                          PERF_FLAG_FD_CLOEXEC);
                if (rc < 0)
                        goto fail;
                ev->member_fds[i] = rc;
        }
        if (ioctl(ev->fd, PERF_EVENT_IOC_ID, &ev->id) < 0) {
                rc = -errno;
                goto fail;
        }
        /* the C-states entered, not the exits (state 4294967295): half the records. Where the
           kernel takes no filter, the converter passes the exits over */
        if (sp->role == ROLE_IDLE)
                (void)ioctl(ev->fd, PERF_EVENT_IOC_SET_FILTER, "state != 4294967295");
        if (sp->role != ROLE_RING) {
                struct live_ring *r = ring_of(ls, cpu);
                if (!r || ioctl(ev->fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd) < 0) {
                        rc = r ? -errno : -EINVAL;
                        live_set_err(err, "PERF_EVENT_IOC_SET_OUTPUT(%s, CPU %u) returned %s",
                                     sp->what, cpu, live_errno_name(-rc));
                        live_event_close(ev);
                        return rc;
                }
        }
        *out = ev;
        return 0;
fail:
        rc = open_error(ls, rc, sp->what, cpu, err);
        live_event_close(ev);
        return rc;
}

void live_events_add(struct live_source *ls, struct live_event *ev)
{
        if (ls->nr_events == ls->cap_events) {
                uint32_t cap = ls->cap_events ? ls->cap_events * 2 : 32;
                ls->events = xrealloc(ls->events, cap * sizeof(*ls->events));
                ls->cap_events = cap;
        }
        ls->events[ls->nr_events++] = ev;
        ls->events_gen++;
}

void live_by_id_rebuild(struct live_source *ls)
{
        uint32_t cap = 64;
        while (cap < ls->nr_events * 2)
                cap *= 2;
        free(ls->by_id);
        memset(ls->id_cache, 0, sizeof(ls->id_cache));
        ls->by_id = xcalloc(cap, sizeof(*ls->by_id));
        ls->by_id_mask = cap - 1;
        for (uint32_t i = 0; i < ls->nr_events; i++) {
                struct live_event *ev = ls->events[i];
                uint32_t j = (uint32_t)(ev->id * 0x9E3779B97F4A7C15ull >> 32) & ls->by_id_mask;
                while (ls->by_id[j])
                        j = (j + 1) & ls->by_id_mask;
                ls->by_id[j] = ev;
        }
}

struct live_event *live_event_by_id(struct live_source *ls, uint64_t id)
{
        /* runs twice a record or more; a session's ids are a few consecutive numbers */
        struct live_event **cached = &ls->id_cache[id & 15];
        if (*cached && (*cached)->id == id)
                return *cached;
        if (!ls->by_id)
                return NULL;
        for (uint32_t j = (uint32_t)(id * 0x9E3779B97F4A7C15ull >> 32) & ls->by_id_mask;;
             j = (j + 1) & ls->by_id_mask) {
                struct live_event *ev = ls->by_id[j];
                if (!ev)
                        return NULL;
                if (ev->id == id)
                        return *cached = ev;
        }
}

/* A live event of (role, idx), the first one: they all have the same spec. */
struct live_event *live_event_find(struct live_source *ls, enum live_role role, uint32_t idx)
{
        for (uint32_t i = 0; i < ls->nr_events; i++) {
                struct live_event *ev = ls->events[i];
                if (!ev->is_retired && !ev->is_fresh && ev->spec.role == role &&
                    ev->spec.idx == idx)
                        return ev;
        }
        return NULL;
}

int live_event_enable(struct live_event *ev, bool is_on)
{
        if (ev->is_enabled == is_on)
                return 0;
        unsigned long req = is_on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE;
        if (ioctl(ev->fd, req, ev->spec.nr_members ? PERF_IOC_FLAG_GROUP : 0) < 0)
                return -errno;
        ev->is_enabled = is_on;
        return 0;
}

uint64_t live_event_lost(const struct live_event *ev)
{
        uint8_t buf[8 * (3 + 3 * (LIVE_MAX_SOURCES + 1))];
        ssize_t n = read(ev->fd, buf, sizeof(buf));
        uint64_t lost = 0;
        if (n > 0)
                perf_read_lost(buf, (size_t)n, ev->spec.attr.read_format, &lost);
        return lost;
}

int ring_map(struct live_ring *r, uint32_t pages, struct etl_error *err)
{
        long page = sysconf(_SC_PAGESIZE);
        r->map_size = (size_t)(pages + 1) * (size_t)page;
        void *m = mmap(NULL, r->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
        if (m == MAP_FAILED) {
                int e = errno;
                r->meta = NULL;
                if (e == EPERM)
                        live_set_err(
                                err,
                                "mmap of the %zu KiB ring of CPU %u returned EPERM: over "
                                "kernel.perf_event_mlock_kb; run as root, raise it, or use fewer "
                                "ring pages",
                                r->map_size / 1024, r->cpu);
                else
                        live_set_err(err, "mmap of the ring of CPU %u returned %s", r->cpu,
                                     live_errno_name(e));
                return -e;
        }
        r->meta = m;
        r->data = (uint8_t *)m + (r->meta->data_offset ? r->meta->data_offset : (uint64_t)page);
        r->data_size = r->meta->data_size ? r->meta->data_size : (uint64_t)pages * (uint64_t)page;
        return 0;
}

static void ring_copy(const struct live_ring *r, uint64_t pos, void *dst, uint64_t n)
{
        uint64_t mask = r->data_size - 1, off = pos & mask;
        uint64_t first = n < r->data_size - off ? n : r->data_size - off;
        memcpy(dst, r->data + off, first);
        if (first < n)
                memcpy((uint8_t *)dst + first, r->data, n - first);
}

static void items_sort(struct live_item *it, uint32_t n)
{
        /* insertion sort: called only when a drain found records out of time order, a few */
        for (uint32_t i = 1; i < n; i++) {
                struct live_item x = it[i];
                uint32_t j = i;
                while (j > 0 && it[j - 1].ts > x.ts) {
                        it[j] = it[j - 1];
                        j--;
                }
                it[j] = x;
        }
}

/* The stage is one mapping of address space only (PROT_NONE, no memory), made at its first
   use, big enough for the most it may hold, and committed (made readable and writable) as it
   grows: growing never copies what it holds. (A realloc of tens of MiB, with the page faults of
   its fresh copy, kept the drain from the rings for 16 ms and more while a rundown held their
   records, and a busy CPU fills 256 KiB in 4.) */
static bool stage_commit(struct live_ring *r, size_t need)
{
        if (need <= r->stage_cap)
                return true;
        if (!r->stage) {
                size_t reserve = LIVE_STAGE_MAX_BYTES + r->data_size;
                void *m = mmap(NULL, reserve, PROT_NONE,
                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
                if (m == MAP_FAILED)
                        return false;
                r->stage = m;
                r->stage_reserved = reserve;
                r->stage_cap = 0;
        }
        if (need > r->stage_reserved)
                return false;
        size_t cap = r->stage_cap ? r->stage_cap : r->data_size;
        while (cap < need)
                cap *= 2;
        if (cap > r->stage_reserved)
                cap = r->stage_reserved;
        if (mprotect(r->stage + r->stage_cap, cap - r->stage_cap, PROT_READ | PROT_WRITE) != 0)
                return false;
        r->stage_cap = cap;
        return true;
}

/* An empty stage gives back what a backlog committed past a ring's worth: the memory, and the
   address space's commitment. */
static void stage_shrink(struct live_ring *r)
{
        size_t keep = r->data_size;
        if (r->stage_cap <= 2 * keep)
                return;
        if (mmap(r->stage + keep, r->stage_cap - keep, PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) == MAP_FAILED)
                return; /* still committed, and still usable */
        r->stage_cap = keep;
}

void ring_stage_free(struct live_ring *r)
{
        if (r->stage)
                munmap(r->stage, r->stage_reserved);
        r->stage = NULL;
        r->stage_reserved = r->stage_cap = r->stage_pos = r->stage_len = 0;
}

/* A ring found too full for the largest record may have dropped records since it was last
   read: the kernel drops a record that does not fit and leaves the head where it is until the
   ring is read, so every drop is seen here, at the first look after it. The events' lost counts
   are read again then (lost_total), not at every query. */
static inline void ring_note_fill(struct live_ring *r, uint64_t used)
{
        if (used + MAX_PERF_RECORD > r->data_size)
                r->may_have_lost = true;
}

/* Copies every complete record the ring holds to the end of the stage and releases the ring
   space at once: the kernel never waits for the conversion, and a long rundown can empty the
   rings without converting (ring_take_all). */
void ring_take(struct live_ring *r)
{
        if (!r->meta)
                return;
        uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
        uint64_t tail = r->meta->data_tail;
        if (head == tail)
                return;
        ring_note_fill(r, head - tail);
        uint64_t n = head - tail;
        if (n > r->data_size)
                n = r->data_size; /* cannot happen: the kernel never overwrites unread data */
        if (r->stage_len - r->stage_pos + n > LIVE_STAGE_MAX_BYTES)
                return; /* memory stays bounded: the kernel drops, and counts, what is left */
        size_t live = r->stage_len - r->stage_pos;
        if (!live) {
                r->stage_pos = r->stage_len = 0;
                stage_shrink(r);
        } else if (r->stage_len + n > r->stage_cap &&
                   (r->stage_pos >= live || r->stage_len + n > r->stage_reserved)) {
                /* what was converted is at least as big as what is left: moving that to the
                   front costs less than committing more */
                memmove(r->stage, r->stage + r->stage_pos, live);
                r->stage_len = live;
                r->stage_pos = 0;
        }
        if (!stage_commit(r, r->stage_len + n))
                return; /* the kernel drops, and counts, what does not fit */
        ring_copy(r, head - n, r->stage + r->stage_len, n);
        r->stage_len += n;
        __atomic_store_n(&r->meta->data_tail, head, __ATOMIC_RELEASE);
}

void ring_take_all(struct live_source *ls)
{
        for (uint32_t c = 0; c < ls->nr_online; c++)
                ring_take(&ls->rings[c]);
}

/* Takes the ring to the stage when it is over a quarter full and the drain is behind: its own
   stage holds records (the ring's are read only once they are converted), or another's holds
   more than its ring (is_behind: rounds of 512 records a CPU, which would empty a full ring in
   place too slowly), as after a rundown; the kernel would otherwise drop what does not fit
   meanwhile. A drain that keeps up reads the ring in place: a copy then was every byte copied
   once more and read twice more (the logger wakes when a ring is a quarter full, and at 16
   CPUs most of them were). */
void ring_take_if_full(struct live_ring *r, bool is_behind)
{
        if (!r->meta || (!is_behind && r->stage_pos == r->stage_len))
                return;
        uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
        if (head - r->meta->data_tail > r->data_size / 4)
                ring_take(r);
}

bool rings_behind(const struct live_source *ls)
{
        for (uint32_t c = 0; c < ls->nr_online; c++) {
                const struct live_ring *r = &ls->rings[c];
                if (r->stage_len - r->stage_pos > r->data_size)
                        return true;
        }
        return false;
}

/* Room for one more item of a drain. */
static struct live_item *item_next(struct live_ring *r, uint32_t n)
{
        if (n == r->cap_items) {
                uint32_t cap = r->cap_items ? r->cap_items * 2 : 1024;
                r->items = xrealloc(r->items, cap * sizeof(*r->items));
                r->cap_items = cap;
        }
        return &r->items[n];
}

/* Notes one record of a gather as the ring's next item; false when it is past the horizon
   (it stays for a later drain). */
/* A gathered FORK or COMM record: the process it makes or exec's, for the reader to read
   ahead (proc_aside.h), once a round. */
static __attribute__((noinline)) void note_ahead(struct live_source *ls, const uint8_t *rec,
                                                 uint32_t size)
{
        const struct perf_event_header *h = (const void *)rec;
        if (h->type == PERF_RECORD_FORK ? size < 24 || le_get32(rec + 8) != le_get32(rec + 16)
                                        : size < 16 || !(h->misc & PERF_RECORD_MISC_COMM_EXEC))
                return; /* a thread's fork, a thread's new name */
        uint32_t pid = le_get32(rec + 8);
        for (uint32_t i = 0; i < ls->nr_ahead; i++)
                if (ls->ahead[i] == pid)
                        return;
        if (ls->nr_ahead < PROC_ASIDE_QUEUE)
                ls->ahead[ls->nr_ahead++] = pid;
}

static bool gather_add(struct live_source *ls, struct live_ring *r, const uint8_t *rec,
                       uint32_t size, uint64_t at, bool is_staged, uint64_t horizon)
{
        uint32_t type = ((const struct perf_event_header *)(const void *)rec)->type;
        if (__builtin_expect(type == PERF_RECORD_FORK || type == PERF_RECORD_COMM, 0) && ls->aside)
                note_ahead(ls, rec, size);
        /* the event looked up here (hook_event_of's lookup without the converter's hooks) */
        struct live_event *le =
                size >= 16 ? live_event_by_id(ls, perf_conv_record_id(rec, size)) : NULL;
        const struct perf_conv_event *ev = le ? &le->spec.conv : NULL;
        /* the time where a live session's records keep it: no call (the CPU is the
           converter's business) */
        uint32_t time_at = perf_conv_live_time_at(ev, rec, size);
        uint32_t cpu;
        uint64_t ts = time_at ? le_get64(rec + time_at)
                              : perf_conv_record_time_of(ls->conv, ev, rec, size, r->cpu, &cpu);
        if (ts > horizon)
                return false;
        /* a sample with a user stack copy is KiBs of bytes the kernel just wrote: its fields
           past the first line (registers, the copy's size) and its last (the bytes the copy
           holds) are asked for now, and have come by the time the merge converts it */
        if (size > 512) {
                for (uint32_t off = 64; off < 320; off += 64)
                        __builtin_prefetch(rec + off);
                __builtin_prefetch(rec + size - 8);
        }
        /* the ring's fields read before the item's stores and written after them: the item
           might alias them (the same types), which had each read again at every record */
        uint32_t n = r->nr_gathered, nr_skipped = r->nr_skipped_tail;
        uint64_t newest = r->newest_ts;
        bool is_sorted = r->is_sorted && ts >= newest;
        struct live_item *it = item_next(r, n);
        *it = (struct live_item){.ts = ts,
                                 .rec = rec,
                                 .at = at,
                                 .size = (uint16_t)size, /* a perf_event_header.size */
                                 .nr_skipped = nr_skipped & 0x7FFFFFFFu,
                                 .is_staged = is_staged,
                                 .ev = ev};
        r->nr_skipped_tail = 0;
        r->is_sorted = is_sorted;
        r->newest_ts = ts > newest ? ts : newest;
        r->nr_gathered = n + 1;
        return true;
}

/* Takes switch-in record rec (of ev, at rpos in the ring) with the ring's last record gathered
   when that one is its sched_switch sample: the merge then asks the converter, right after the
   sample, whether the switch is written (nearly always: a third of a switch-heavy load's
   records were gathered, merged and looked up only to find it so), and puts it back in its
   place among the records when not (perf_conv_switch_in_seen). Nothing the merge converts
   between the two could switch the thread of rec's CPU: it is the ring's (whose records only
   the kernel writes: no other ring's are that CPU's), the ring is in time order so far, rec
   not before the sample nor past the horizon, and none after rec may have been stamped before
   it (rec's time counts as the newest item's: such a record finds the ring out of order, and
   the gather is made again with every switch-in as its own item). */
static bool switch_in_take_with(struct live_ring *r, const uint8_t *rec, uint32_t size,
                                uint64_t rpos, const struct perf_conv_event *ev, uint64_t horizon)
{
        if (!r->nr_gathered || !r->is_sorted)
                return false;
        struct live_item *prev = &r->items[r->nr_gathered - 1];
        uint32_t time_at = perf_conv_live_time_at(ev, rec, size);
        if (prev->in_gap || prev->is_staged || !prev->ev || prev->ev->kind != PERF_CONV_CSWITCH ||
            !time_at || rpos - prev->at > UINT16_MAX)
                return false;
        uint64_t ts = le_get64(rec + time_at);
        if (ts < prev->ts || ts > horizon || ts < ev->valid_from || ts > ev->valid_until ||
            le_get32(rec + time_at + 8) != r->cpu)
                return false;
        prev->in_gap = (uint16_t)(rpos - prev->at);
        r->newest_ts = ts;
        r->has_taken_in = true;
        return true;
}

/* ring_gather's pass, switch-ins taken with their samples where may_take_in; the records
   passed over. */
static uint32_t gather_pass(struct live_source *ls, struct live_ring *r, uint32_t max,
                            uint64_t horizon, bool may_take_in)
{
        uint32_t nr_skipped = 0;
        r->nr_gathered = r->nr_taken = r->next = 0;
        r->nr_skipped_tail = 0;
        r->newest_ts = 0;
        r->is_sorted = true;
        r->has_taken_in = false;
        r->has_left_in = false;
        r->is_capped = false;
        r->stage_stop = r->stage_pos;
        r->ring_start = r->ring_stop = r->meta ? r->meta->data_tail : 0;
        if (!r->meta)
                return 0;

        /* the stage */
        size_t pos = r->stage_pos, end = r->stage_len;
        while (end - pos >= sizeof(struct perf_event_header)) {
                const struct perf_event_header *h = (const void *)(r->stage + pos);
                if (h->size < sizeof(*h) || h->size > end - pos) {
                        ls->nr_damaged_bytes += end - pos;
                        pos = end; /* damaged: drop the rest */
                        break;
                }
                if (r->nr_gathered == max) {
                        r->is_capped = true;
                        break;
                }
                if (!gather_add(ls, r, r->stage + pos, h->size, pos, true, horizon))
                        break;
                pos += h->size;
        }
        r->stage_stop = pos;
        if (end - pos >= sizeof(struct perf_event_header) || r->is_capped)
                return 0; /* the ring's records are newer than what stays in the stage */
        r->stage_stop = end;

        /* the ring, in place */
        uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
        ring_note_fill(r, head - r->ring_start);
        uint64_t rpos = r->ring_start;
        uint64_t mask = r->data_size - 1;
        bool is_bounced = false;
        /* the next line of the ring to ask for: where the last pass stopped asking, unless
           the reads went past it (or the ring is new) */
        uint64_t pf = r->prefetch_pos;
        if (pf - rpos > RING_PREFETCH_BYTES) /* behind rpos (wrapped), or stale */
                pf = rpos & ~(uint64_t)(PREFETCH_LINE - 1);
        while (head - rpos >= sizeof(struct perf_event_header)) {
                /* the ring a page ahead asked for, line by line (prefetch.h), where the kernel
                   has written it: another CPU wrote it (1024 bytes ahead, a few records, came
                   too late: each header's first read was two fifths of this loop's time) */
                pf = prefetch_lines(r->data, mask, pf,
                                    head - rpos > RING_PREFETCH_BYTES ? rpos + RING_PREFETCH_BYTES
                                                                      : head);
                /* records are 8-byte aligned: a header never wraps */
                const struct perf_event_header *h = (const void *)(r->data + (rpos & mask));
                if (h->size < sizeof(*h) || h->size > head - rpos) {
                        ls->nr_damaged_bytes += head - rpos;
                        rpos = head; /* damaged: drop the rest */
                        break;
                }
                const uint8_t *rec = r->data + (rpos & mask);
                bool is_wrapped = (rpos & mask) + h->size > r->data_size;
                /* a switch-out record, which converts to nothing, is passed over
                   (perf_conv_skips_ev); a switch-in right after its sched_switch sample goes
                   with it (the other records are not asked, a call a record fewer; the event
                   looked up here, as gather_add does) */
                if ((h->type & ~1u) == PERF_RECORD_SWITCH /* or _CPU_WIDE */ && !is_wrapped &&
                    h->size >= 16) {
                        bool is_out = (h->misc & PERF_RECORD_MISC_SWITCH_OUT) != 0;
                        struct live_event *le =
                                live_event_by_id(ls, perf_conv_record_id(rec, h->size));
                        const struct perf_conv_event *ev = le ? &le->spec.conv : NULL;
                        if (is_out && perf_conv_skips_ev(ls->conv, rec, h->size, ev)) {
                                r->nr_skipped_tail++;
                                nr_skipped++;
                                rpos += h->size;
                                continue;
                        }
                        if (!is_out && may_take_in &&
                            switch_in_take_with(r, rec, h->size, rpos, ev, horizon)) {
                                rpos += h->size;
                                continue;
                        }
                }
                if (r->nr_gathered == max) {
                        r->is_capped = true;
                        break;
                }
                if (is_wrapped) {
                        if (is_bounced) {
                                r->is_capped = true; /* a second wrap in one drain: the next */
                                break;
                        }
                        if (!r->bounce)
                                r->bounce = xcalloc(1, MAX_PERF_RECORD);
                        ring_copy(r, rpos, r->bounce, h->size);
                        rec = r->bounce;
                }
                if (!gather_add(ls, r, rec, h->size, rpos, false, horizon))
                        break;
                is_bounced = is_bounced || is_wrapped;
                rpos += h->size;
        }
        r->ring_stop = rpos;
        r->prefetch_pos = pf;
        return nr_skipped;
}

/* Gathers up to max records of one ring that happened at or before the horizon, in the ring's
   order: first what a rundown took to the stage, then what the ring holds, read in place (a
   copy of every byte to the stage was the biggest memcpy of the live pipeline). Nothing is
   converted or released yet: ring_release does it for the records a merge converted. */
void ring_gather(struct live_source *ls, struct live_ring *r, uint32_t max, uint64_t horizon)
{
        uint32_t nr_skipped = gather_pass(ls, r, max, horizon, true);
        if (__builtin_expect(r->has_taken_in && !r->is_sorted, 0)) {
                /* out of time order (a record after a switch-in taken with its sample may have
                   been stamped before it, which the merge would put between the two): every
                   switch-in is its own item; the records passed over are counted again */
                ls->nr_skipped_again += nr_skipped;
                gather_pass(ls, r, max, horizon, false);
        }
}

/* The place in the ring of the switch-in taken with item it. */
static inline uint64_t switch_in_at(const struct live_item *it)
{
        return it->at + it->in_gap;
}

static inline const uint8_t *ring_rec_at(const struct live_ring *r, uint64_t pos)
{
        return r->data + (pos & (r->data_size - 1));
}

/* The switch-in taken with it, the last record of the ring the merge takes, when stamped past
   the merge's horizon: it waits for the next drain with the records after it, as it would have
   as an item of its own (that drain converts it first of its ring: the merge puts it after the
   other rings' records stamped before it). The records passed over after it are read again,
   those between the sample and it are not. */
static void switch_in_leave_if_late(struct live_source *ls, struct live_ring *r,
                                    struct live_item *it, uint32_t n, uint64_t horizon)
{
        uint64_t pos = switch_in_at(it);
        const uint8_t *rec = ring_rec_at(r, pos);
        uint32_t size = ((const struct perf_event_header *)(const void *)rec)->size;
        if (le_get64(rec + size - 24) <= horizon)
                return;
        it->in_gap = 0;
        r->has_left_in = true;
        r->left_in_at = pos;
        uint32_t nr_between = 0;
        for (uint64_t p = it->at + it->size; p < pos;
             p += ((const struct perf_event_header *)(const void *)ring_rec_at(r, p))->size)
                nr_between++;
        uint32_t nr_after = n < r->nr_gathered ? r->items[n].nr_skipped : r->nr_skipped_tail;
        ls->nr_skipped_again += nr_after - nr_between;
}

/* Keeps the gathered records of a ring up to the merge's horizon: those before the first one
   past it, in the ring's order (a record the merge leaves is read again by the next drain),
   in time order. */
void ring_trim(struct live_source *ls, struct live_ring *r, uint64_t horizon)
{
        uint32_t n = 0;
        if (r->newest_ts <= horizon) {
                n = r->nr_gathered;
        } else {
                while (n < r->nr_gathered && r->items[n].ts <= horizon)
                        n++;
                /* the skip-over records behind the first one left are read (and counted)
                   again */
                for (uint32_t i = n + 1; i < r->nr_gathered; i++)
                        ls->nr_skipped_again += r->items[i].nr_skipped;
                /* (all taken: newest_ts was that of a switch-in taken with the last one) */
                if (n < r->nr_gathered)
                        ls->nr_skipped_again += r->nr_skipped_tail;
                if (n && r->items[n - 1].in_gap)
                        switch_in_leave_if_late(ls, r, &r->items[n - 1], n, horizon);
        }
        r->nr_taken = n;
        if (!r->is_sorted)
                items_sort(r->items, n);
}

/* Gives back what the merge converted of a ring: the stage and ring space before the first
   gathered record left (all of it when none was left). */
void ring_release(struct live_ring *r)
{
        if (!r->meta)
                return;
        if (r->nr_taken < r->nr_gathered) {
                /* the first record left in the ring's order: the lowest place (sorting moved
                   only the records taken, which are all before it) */
                const struct live_item *first = &r->items[r->nr_taken];
                if (first->is_staged) {
                        r->stage_stop = first->at;
                        r->ring_stop = r->ring_start;
                } else {
                        r->ring_stop = first->at;
                }
        }
        if (r->has_left_in)
                r->ring_stop = r->left_in_at; /* before the first record left, in the ring */
        r->stage_pos = r->stage_stop;
        if (r->stage_pos == r->stage_len) {
                r->stage_pos = r->stage_len = 0;
                stage_shrink(r);
        }
        if (r->ring_stop != r->ring_start)
                __atomic_store_n(&r->meta->data_tail, r->ring_stop, __ATOMIC_RELEASE);
}

void rings_merge_init(struct live_source *ls)
{
        struct live_merge *m = &ls->merge;
        m->nr_leaves = 1;
        while (m->nr_leaves < ls->nr_online)
                m->nr_leaves *= 2;
        m->losers = xcalloc(m->nr_leaves, sizeof(*m->losers));
}

void rings_merge_free(struct live_source *ls)
{
        free(ls->merge.losers);
        ls->merge = (struct live_merge){0};
}

/* Asks for the lines of a ring's next record to convert: it was read at its gather, a round of
   every ring's records ago, and has left the cache since; the merge converts the other rings'
   records meanwhile (at 16 CPUs, a record of each before this ring's turn comes again). */
static inline void merge_prefetch(const struct live_ring *r)
{
        if (r->next == r->nr_taken)
                return;
        /* four lines whatever its size (a prefetch past the record, or the mapping, is no
           fault), the callchain of a sample with stacks among them; a longer one's up to 512
           bytes */
        const struct live_item *it = &r->items[r->next];
        __builtin_prefetch(it->rec);
        __builtin_prefetch(it->rec + 64);
        __builtin_prefetch(it->rec + 128);
        __builtin_prefetch(it->rec + 192);
        for (uint32_t off = 256; off < it->size && off < 512; off += 64)
                __builtin_prefetch(it->rec + off);
}

/* Ring c's key: its next record's, or none left (the padding's too). */
static inline live_merge_key merge_key_of(const struct live_source *ls, uint32_t c)
{
        if (c >= ls->nr_online || ls->rings[c].next == ls->rings[c].nr_taken)
                return LIVE_MERGE_DONE | c;
        const struct live_ring *r = &ls->rings[c];
        return (live_merge_key)r->items[r->next].ts << LIVE_MERGE_RING_BITS | c;
}

/* The winner's key of the matches under node n, the loser's of each kept at its node. */
static live_merge_key merge_play(struct live_source *ls, uint32_t n)
{
        struct live_merge *m = &ls->merge;
        if (n >= m->nr_leaves)
                return merge_key_of(ls, n - m->nr_leaves);
        live_merge_key a = merge_play(ls, 2 * n), b = merge_play(ls, 2 * n + 1);
        m->losers[n] = a < b ? b : a;
        return a < b ? a : b;
}

/* The switch-in taken with the item the merge just converted (r->items[r->next - 1], its
   sched_switch sample): nothing to convert when that sample wrote its CSwitch, else the ring's
   next item in that item's slot, which the merge takes in its own time's place. */
static void merge_switch_in(struct live_source *ls, struct live_ring *r)
{
        struct live_item *it = &r->items[r->next - 1];
        uint64_t pos = switch_in_at(it);
        const uint8_t *rec = ring_rec_at(r, pos);
        uint32_t size = ((const struct perf_event_header *)(const void *)rec)->size;
        /* its sample_id trailer: tid, time, cpu, identifier (switch_in_take_with) */
        const uint8_t *t = rec + size - 32;
        if (perf_conv_switch_in_seen(ls->conv, le_get32(t + 16), le_get32(t + 4)))
                return;
        struct live_event *le = live_event_by_id(ls, perf_conv_record_id(rec, size));
        const struct perf_conv_event *ev = le ? &le->spec.conv : NULL;
        *it = (struct live_item){.ts = le_get64(rec + size - 24),
                                 .rec = rec,
                                 .at = pos,
                                 .size = (uint16_t)size,
                                 .ev = ev};
        r->next--;
}

/* Converts the taken records of every ring in time order across the CPUs (a k-way merge:
   the converter's process, thread and image tables need a fork before the exec of its child
   on another CPU; records of the same time go by ring, the lower first). Each record goes to
   its own CPU's buffer. Returns how many. */
uint32_t rings_merge(struct live_source *ls)
{
        struct live_merge *m = &ls->merge;
        const live_merge_key ring_mask = ((live_merge_key)1 << LIVE_MERGE_RING_BITS) - 1;
        uint32_t total = 0;
        for (uint32_t c = 0; c < ls->nr_online; c++)
                merge_prefetch(&ls->rings[c]);
        live_merge_key key = merge_play(ls, 1);
        while (!(key & LIVE_MERGE_DONE)) {
                uint32_t w = (uint32_t)(key & ring_mask);
                struct live_ring *r = &ls->rings[w];
                const struct live_item *it = &r->items[r->next++];
                merge_prefetch(r);
                perf_conv_record_ev(ls->conv, r->cpu, it->rec, it->size, it->ev);
                total++;
                if (it->in_gap)
                        merge_switch_in(ls, r);
                /* the ring's next record plays its way up from its leaf: the winner of each
                   match goes on, the loser stays */
                key = merge_key_of(ls, w);
                for (uint32_t n = (w + m->nr_leaves) >> 1; n; n >>= 1) {
                        live_merge_key l = m->losers[n];
                        if (l < key) {
                                m->losers[n] = key;
                                key = l;
                        }
                }
        }
        return total;
}

/* The time up to which a drain converts: records of the last LIVE_MERGE_SLACK_NS may still be
   on their way into another CPU's ring (a record is stamped before it is written), and wait for
   the next drain. */
uint64_t rings_horizon(const struct live_source *ls)
{
        if (ls->flush_until)
                return ls->flush_until;
        uint64_t t = now_ns();
        return t > LIVE_MERGE_SLACK_NS ? t - LIVE_MERGE_SLACK_NS : 0;
}
