/* SPDX-License-Identifier: MIT */
/* live_int.h: the Linux source's insides, shared by its files (backend/linux): the source, its
   events, rings and rundown, and the functions each file gives the others. */
#ifndef ETWTOP_LIVE_INT_H
#define ETWTOP_LIVE_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/perf_event.h>

#include "attr_spec.h"
#include "live_source.h"
#include "perf_convert.h"
#include "proc_aside.h"

#define LIVE_MAX_CPUS       4096u
#define LIVE_BUILD_ID_CACHE 4096u
/* A drain converts the records of every CPU stamped up to this long before it, merged in time
   order; newer ones wait for the next drain: a record is stamped before it is written, and may
   not be in its ring yet when the others are read (the kernel stamps and writes it with
   preemption off: microseconds). */
#define LIVE_MERGE_SLACK_NS 2000000ull
#define LIVE_MERGE_ROUND    4096u /* records a CPU per round of a drain's merge */
/* The most a CPU's stage holds of the records taken out of its ring before they are converted
   (during a rundown): seconds of a busy CPU's records with their stacks. */
#define LIVE_STAGE_MAX_BYTES (256ull << 20)
/* The TimerResolution when the kernel's tick cannot be found (live_caps.timer_resolution_100ns
   is what the writers record, backend/session.c): 100 ns units, 1 ms. */
#define LIVE_TIMER_RESOLUTION 10000u

/* One open event (a group leader with its counters). */
struct live_event {
        struct live_spec spec;
        uint32_t cpu;
        int32_t task; /* perf_event_open's pid: -1 CPU-wide, else one thread of settings.pid */
        int fd;       /* owned */
        int member_fds[LIVE_MAX_SOURCES]; /* owned */
        uint64_t id;
        bool is_enabled;
        bool is_retired; /* replaced by an update; closed once drained */
        bool is_fresh;   /* opened by the update being applied */
};

struct live_ring {
        uint32_t cpu;
        int fd;                            /* borrowed: the ROLE_RING event's */
        struct perf_event_mmap_page *meta; /* owned mapping of map_size bytes */
        size_t map_size;
        uint8_t *data;
        uint64_t data_size;
        uint8_t *stage;          /* owned: records copied out of the ring, not converted yet */
        size_t stage_reserved;   /* bytes of address space the stage's mapping holds */
        size_t stage_cap;        /* of which readable and writable (committed) */
        size_t stage_pos;        /* the first record not converted */
        size_t stage_len;        /* the end of the copied records */
        struct live_item *items; /* owned: the records of one round of a drain */
        uint32_t cap_items;
        uint8_t *bounce; /* owned: the one record of a drain that wraps the ring's end */
        /* one round of a drain (ring_gather, ring_trim, rings_merge, ring_release) */
        uint32_t nr_gathered;           /* items read, up to the horizon, in the ring's order */
        uint32_t nr_taken;              /* the first of them, to convert, then in time order */
        uint32_t next;                  /* the merge's next item */
        uint32_t nr_skipped_tail;       /* records passed over after the last item */
        uint64_t newest_ts;             /* the latest time among the items (or switch-ins) */
        bool is_sorted;                 /* the items came in time order */
        bool is_capped;                 /* more records were there than the round reads */
        bool may_have_lost;             /* found too full for a record since lost_total last read */
        bool is_borrowed;               /* meta is not a mapping of ours (live_source_open_mem) */
        size_t stage_stop;              /* the stage up to here was read */
        uint64_t ring_start, ring_stop; /* the ring from data_tail up to ring_stop was read */
        uint64_t prefetch_pos; /* the ring's lines before it were asked for (gather_pass) */
        bool has_taken_in;     /* a switch-in went with its sample (switch_in_take_with) */
        /* the one taken with the last item the merge takes waits: the ring is read up to it */
        bool has_left_in;
        uint64_t left_in_at;
};

struct live_item {
        uint64_t ts;
        const uint8_t *rec; /* borrowed: in the stage, the ring or the bounce buffer */
        uint64_t at;        /* where it starts in the stage or the ring */
        uint16_t size;      /* perf_event_header's */
        /* 0, or the switch-in converted right after it (its sched_switch sample): its place in
           the ring less this one's (switch_in_take_with) */
        uint16_t in_gap;
        uint32_t nr_skipped : 31; /* records passed over just before it */
        uint32_t is_staged : 1;
        const struct perf_conv_event *ev; /* borrowed: the record's event, NULL when unknown */
};

#define MAX_PERF_RECORD 65536 /* perf_event_header.size is 16 bits */

/* A ring's place in the merge: its next record's time above its index (12 bits: LIVE_MAX_CPUS),
   so that one compare orders two rings, a tie going to the lower ring; a ring with nothing left
   has the bit above the time set, after every ring that has. */
__extension__ typedef unsigned __int128 live_merge_key;
#define LIVE_MERGE_RING_BITS 12u
#define LIVE_MERGE_DONE      ((live_merge_key)1 << (64 + LIVE_MERGE_RING_BITS))

/* rings_merge's tournament (a tree of losers): the leaves are the rings (padded to a power of
   two with rings that have nothing), each inner node holds the key of the ring that lost the
   match there (the key says which ring), losers[0] the winner's: the next record in time order.
   A record taken, its ring's new key plays its way up once, log2 of the leaves compares, one a
   level (a binary heap's sift makes two). */
struct live_merge {
        uint32_t nr_leaves;     /* a power of two, at least the rings */
        live_merge_key *losers; /* owned, nr_leaves */
};

/* One process, thread or image of a rundown's snapshot of /proc. */
enum rundown_kind { RUNDOWN_PROCESS, RUNDOWN_THREAD, RUNDOWN_IMAGE };

struct rundown_item {
        enum rundown_kind kind;
        union {
                struct perf_conv_process p;
                struct perf_conv_thread t;
                struct perf_conv_image im;
        };
        char *name; /* owned: p.name, t.name */
        char *text; /* owned: p.cmdline, im.path */
        uint8_t build_id[20];
};

/* A rundown under way: its thread reads /proc into items while the drains keep the rings empty
   (rundown_begin, rundown_finish). */
struct live_rundown {
        pthread_t thread;
        bool has_thread;     /* started and not joined */
        bool is_pending;     /* begun, its records not written yet */
        atomic_bool is_done; /* the thread has finished the snapshot */
        int done_fd;         /* owned eventfd, in the epoll set: written when is_done */
        uint64_t ts;
        uint32_t flags; /* EVENT_TRACE_FLAG_PROCESS, _THREAD, _IMAGE_LOAD */
        int32_t pid;    /* settings.pid */
        bool wants_wait_sites;
        bool is_start;
        struct rundown_item *items; /* owned */
        size_t nr_items, cap_items;
};

struct build_id_entry {
        char *path; /* owned; NULL: free */
        uint8_t id[20];
        uint8_t size;
};

/* The reader's last answer (proc_aside_ask), or its failure, for the one record whose
   conversion asks for both parts of it (a fork asks the owner, then the command line; an exec
   the other way round): each part is taken once, by that record's conversion only (a pid is
   used again), and the next question asks again. */
struct proc_answer {
        uint32_t pid;
        uint64_t record;           /* the converter's record count when it was asked */
        bool has_cmdline, has_uid; /* parts held, not taken yet */
        bool is_known;             /* answered in time (else both parts are unknown) */
        uint32_t uid;
        char cmdline[PROC_ASIDE_MAX_CMDLINE + 1];
};

struct live_source {
        struct live_settings settings;
        struct live_caps caps;
        struct etl_writer *w; /* borrowed */
        struct perf_conv *conv;
        uint32_t nr_cpus; /* writer CPUs: highest online CPU + 1 */
        uint32_t nr_online;
        uint32_t *online; /* owned: online CPU numbers */
        int32_t *tasks;   /* owned: the threads events are opened on; {-1}: CPU-wide */
        uint32_t nr_tasks;
        struct live_ring *rings;    /* owned, one per online CPU */
        struct live_event **events; /* owned */
        uint32_t nr_events, cap_events;
        struct live_event **by_id; /* owned hash of id -> event (borrowed pointers) */
        uint32_t by_id_mask;
        int epoll_fd;
        bool can_grow_rings;       /* live_spec_env.can_grow_rings */
        struct live_merge merge;   /* owned: rings_merge's tournament of the rings */
        uint64_t flush_until;      /* 0, or the horizon of every drain (drain_until) */
        uint64_t nr_skipped_again; /* passed-over records a merge left to read again */
        char tracefs[PATH_MAX];
        struct perf_tp_format tp_switch;
        struct perf_tp_format tp_waking;
        struct perf_tp_format tp_idle;
        bool has_tp_switch, has_tp_waking;
        bool has_tp_idle;         /* optional: without it PreviousCState stays 0 */
        bool has_build_id_attr;   /* attr.build_id accepted */
        bool has_inherit_thread;  /* attr.inherit_thread accepted (else the converter drops
                                     the child processes' records) */
        uint64_t nr_lost_retired; /* PERF_FORMAT_LOST of events closed by updates */
        /* lost_total's last read of every event's PERF_FORMAT_LOST (a read is an IPI per
           event): read again only when a ring may have dropped records since, a
           PERF_RECORD_LOST came, or the events changed */
        uint64_t lost_read_sum;
        /* of both, the CPU-wide events' of a traced process's session (every process's
           records: live_stats.nr_lost_cpu_wide) */
        uint64_t nr_lost_retired_wide, lost_read_wide;
        uint64_t lost_read_records; /* PERF_RECORD_LOST records seen at that read */
        uint64_t events_gen;        /* moves when an event is added or closed */
        uint64_t lost_read_gen;     /* events_gen at that read */
        bool has_lost_read;
        uint64_t nr_lost_reads;    /* event fds read for their lost counts */
        uint64_t nr_own_events;    /* records written here rather than by the converter */
        uint64_t nr_damaged_bytes; /* ring bytes dropped after a record header that cannot be */
        uint64_t nr_append_failures;
        struct live_event *id_cache[16]; /* event_by_id's answers by id % 16; reset with by_id */
        uint64_t kernel_text, kernel_text_size; /* kernel_image_probe's; size 0: unknown */
        uint8_t kernel_build_id[20];
        uint32_t kernel_build_id_size;
        uint64_t nr_updates;
        int write_error;
        struct perf_ksym *ksyms; /* owned: the kernel image's text symbols (ksyms_keep) */
        size_t nr_ksyms;
        struct perf_wait_site *wait_sites; /* owned: hook_wait_sites's answer */
        /* owned: the /proc reads of a fork or an exec, off the drain's path (NULL: read on it,
           as a source of memory rings does) */
        struct proc_aside *aside;
        struct proc_answer answer;
        /* the processes a round's gathered records make or exec (a FORK of a process, an exec's
           COMM), named to the reader before the round is converted (proc_aside_prefetch) */
        uint32_t ahead[PROC_ASIDE_QUEUE];
        uint32_t nr_ahead;
        uint32_t nr_wait_sites;
        bool has_wait_sites; /* wait_sites is that answer */
        struct live_rundown rundown;
        char *ksym_names;            /* owned: their names */
        struct build_id_entry *bids; /* owned cache, LIVE_BUILD_ID_CACHE slots */
        uint32_t nr_bids;
        uint8_t rec[PERF_CONV_MAX_RECORD + 256];
};

/* live_util.c */
void live_set_err(struct etl_error *err, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
const char *live_errno_name(int e);
int live_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
                         unsigned long flags);
/* Reads a small file into buf (NUL-terminated); returns its length or -errno. */
ssize_t live_read_small(const char *path, char *buf, size_t size);
int live_read_int_file(const char *path, int *value);

/* probe.c */
/* The online CPUs from /sys/devices/system/cpu/online into cpus; *nr_cpus: the highest + 1. */
uint32_t probe_online_cpus(uint32_t *cpus, uint32_t max, uint32_t *nr_cpus);
int probe_tracefs_find(char *dir, size_t size);
void probe_tracefs_msg(char *dst, size_t size, int rc, const char *dir, const char *what);
int probe_tracepoint_load(const char *tracefs, const char *name, struct perf_tp_format *fmt);
void probe_base_attr(struct perf_event_attr *a, uint32_t type, uint64_t config);

/* rings.c */
int live_event_open(struct live_source *ls, const struct live_spec *sp, uint32_t cpu, int32_t task,
                    struct live_event **out, struct etl_error *err);
void live_event_close(struct live_event *ev);
void live_events_add(struct live_source *ls, struct live_event *ev);
void live_by_id_rebuild(struct live_source *ls);
struct live_event *live_event_by_id(struct live_source *ls, uint64_t id);
struct live_event *live_event_find(struct live_source *ls, enum live_role role, uint32_t idx);
int live_event_enable(struct live_event *ev, bool is_on);
uint64_t live_event_lost(const struct live_event *ev);
/* Maps r's ring (r->fd) with pages data pages. */
int ring_map(struct live_ring *r, uint32_t pages, struct etl_error *err);
/* Copies every complete record the ring holds to the end of its stage, the ring's room given
   back at once. */
void ring_take(struct live_ring *r);
/* rings_grow.c: whether the rings can grow at an update (the kernel waits for a ring's
   writers), and the growth of every ring whose events, under next, need more than it holds. */
bool rings_can_grow(void);
int rings_grow(struct live_source *ls, const struct live_settings *next, struct etl_error *err);
/* The dummy event that owns r's ring (its watermark in its spec), NULL where none does. */
struct live_event *rings_owner(const struct live_source *ls, const struct live_ring *r);
void ring_take_all(struct live_source *ls);
void ring_stage_free(struct live_ring *r);
/* is_behind: rings_behind's answer for this round of the drain. */
void ring_take_if_full(struct live_ring *r, bool is_behind);
/* Whether a stage holds more than its ring does: a backlog to convert. */
bool rings_behind(const struct live_source *ls);
void ring_gather(struct live_source *ls, struct live_ring *r, uint32_t max, uint64_t horizon);
void ring_trim(struct live_source *ls, struct live_ring *r, uint64_t horizon);
void ring_release(struct live_ring *r);
void rings_merge_init(struct live_source *ls);
void rings_merge_free(struct live_source *ls);
uint32_t rings_merge(struct live_source *ls);
uint64_t rings_horizon(const struct live_source *ls);

/* proc.c */
void proc_read_cmdline(uint32_t pid, char *buf, size_t size);
uint32_t proc_read_uid(uint32_t pid);
bool proc_stat(const char *path, char *comm, size_t comm_size, uint32_t *ppid, uint32_t *session,
               int64_t *prio);
uint32_t proc_build_id(struct live_source *ls, const char *path, uint8_t *id, uint32_t max);
void proc_read_both(uint32_t pid, char *cmdline, size_t size, uint32_t *uid);
void proc_cmdline_of(void *ctx, uint32_t pid, char *buf, size_t size);
uint32_t proc_uid_of(void *ctx, uint32_t pid);
uint32_t proc_build_id_of(void *ctx, const char *path, uint8_t *id, uint32_t max);

/* rundown.c */
void rundown_begin(struct live_source *ls, uint64_t ts, uint32_t flags, bool is_start);
bool rundown_finish(struct live_source *ls, bool wait);
void rundown_wait_sites(struct live_source *ls);
void rundown_items_free(struct live_rundown *rd);

/* ksyms.c */
/* The text symbols of kallsyms text of len bytes (cut into names in place), sorted by address
   and sized to the next one. Returns an owned array of *nr. */
struct perf_ksym *ksyms_parse(char *text, size_t len, size_t *nr_out);
/* Keeps the core kernel's of nr parsed symbols in ls (ls->ksyms, their names ls->ksym_names),
   taking the parse and its text where it can (then *syms and *text are set to NULL). */
void ksyms_keep_taken(struct live_source *ls, struct perf_ksym **syms, size_t nr, char **text,
                      size_t text_len);
uint32_t ksyms_wait_sites(void *ctx, const struct perf_wait_site **out);
void ksyms_kernel_image(struct live_source *ls);
void ksyms_rundown_kernel(struct live_source *ls, uint64_t ts);
/* is_last: the close (what it reads is not kept for a later rundown) */
void ksyms_write_kernel_symbols(struct live_source *ls, bool is_last);

/* live_source.c */
/* The specs' view of ls (attr_spec.h). */
struct live_spec_env live_env(const struct live_source *ls);
/* Drains every ring up to now: what must be converted before a rundown, a settings change or
   the close. */
void live_drain_all(struct live_source *ls);

#endif
