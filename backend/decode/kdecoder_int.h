/* SPDX-License-Identifier: MIT */
/* kdecoder_int.h: the decoder's state (struct kdecoder) and what its files share: the known
   kernel providers, the record's payload, the string arena, the thread table, the clock.
   Internal to backend/decode. */
#ifndef ETWTOP_KDECODER_INT_H
#define ETWTOP_KDECODER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "le_bytes.h"
#include "kdecoder.h"
#include "kevent.h"
#include "kevent_mof.h"
#include "etw/ntwmi.h"
#include "util/hash.h"

__extension__ typedef unsigned __int128 kev_u128;

#define KEV_NONE 0xFFFFFFFFu /* pid/tid unknown; also the empty mark of the tid table */

/* UserDataLength is 16 bits: every scratch buffer is sized from this bound. */
#define KEV_MAX_PAYLOAD 0xFFFFu
/* UTF-16 gives at most 3 bytes per 2, Latin-1 2 per 1, a SID string under 3 per byte. */
#define KEV_STR_ARENA  (3u * (KEV_MAX_PAYLOAD + 1u) + 256u)
#define KEV_MAX_FRAMES (KEV_MAX_PAYLOAD / 4u + 1u)
#define KEV_MAX_LBR    (KEV_MAX_PAYLOAD / 12u + 1u)

/* The payload of one record. */
struct payload {
        const uint8_t *p;
        size_t len;
        unsigned psize; /* 4 or 8 */
};

/* Kernel providers the decoder knows (ETL-FORMAT.md 2.9, 3.10). */
enum kprov {
        KP_UNKNOWN = 0,
        KP_EVENT_TRACE,
        KP_DISK_IO,
        KP_PAGE_FAULT,
        KP_PROCESS,
        KP_FILE_IO,
        KP_THREAD,
        KP_TCPIP,
        KP_JOB,
        KP_UDPIP,
        KP_REGISTRY,
        KP_DBGPRINT,
        KP_CONFIG,
        KP_LBR,
        KP_WNF,
        KP_POOL,
        KP_PERFINFO,
        KP_HEAP,
        KP_OBJECT,
        KP_POWER,
        KP_MODBOUND,
        KP_IMAGE,
        KP_DPC,
        KP_CC,
        KP_CRITSEC,
        KP_STACKWALK,
        KP_UMS,
        KP_ALPC,
        KP_SPLITIO,
        KP_THREADPOOL,
        KP_HYPERVISOR,
        KP_HYPERVISORX,
        KP_KTC,
        KP_SYSCONFIGEX,
        KP_WINSAT,
        KP_METADATA,
        KP_ETWTOP,
        KP_MAX
};

/* tid -> pid, open addressing with linear probing; tid KEV_NONE marks a free slot. */
struct tid_slot {
        uint32_t tid;
        uint32_t pid;
};

struct tid_map {
        struct tid_slot *slots; /* owned */
        uint32_t mask;
        uint32_t nr;
};

/* A stack-key reference waiting for its definition, in a ring indexed by sequence number. */
struct pending_ref {
        uint64_t key;
        uint64_t ts;   /* EventTimeStamp of the event the stack belongs to */
        uint32_t next; /* sequence number of the next pending reference with the same key */
        uint32_t pid;
        uint32_t tid;
        uint16_t cpu;
        uint8_t is_kernel;
        uint8_t is_live;
};

/* key -> the chain of its pending references; count 0 marks a free slot. */
struct ref_slot {
        uint64_t key;
        uint32_t first; /* sequence numbers */
        uint32_t last;
        uint32_t count;
};

/* key -> frames of a definition that is still valid (after KeyCreate or KeyRundown). */
struct def_slot {
        uint64_t key;
        uint64_t *frames; /* owned; NULL marks a free slot */
        uint32_t nr_frames;
        uint32_t cap_frames;
};

/* A stack-key definition read ahead: key's frames from its Delete or Rundown at ts. */
struct preload_def {
        uint64_t key;
        uint64_t ts;
        uint64_t first; /* into pre_frames */
        uint32_t nr_frames;
};

/* The fields of the record's KEV_FIELDS event when its decoder left them to the consumer's
   first kevent_fields() (kdecoder_lazy_arm): filled once, while the sink runs. */
enum kdecoder_lazy_state { LAZY_OFF = 0, LAZY_ARMED, LAZY_DONE };

struct kdecoder_lazy {
        struct kevent_lazy base; /* first: what the event points to */
        struct kdecoder *d;      /* borrowed: the decoder it is part of */
        kdecoder_fill_fn fill;
        const void *desc;  /* borrowed: the event's description */
        const void *table; /* borrowed: where it was found */
        const uint8_t *p;  /* borrowed: the record's payload */
        size_t len;
        unsigned psize;
        uint32_t nr;
        enum kdecoder_lazy_state state;
};

/* The names of the record's KEV_CLR_METHOD event, made at the consumer's first
   kevent_clr_method_names() (clr.c): once, while the sink runs. */
struct kdecoder_lazy_names {
        struct kevent_lazy_names base; /* first: what the event points to */
        struct kdecoder *d;            /* borrowed: the decoder it is part of */
        struct payload pl;             /* borrowed: the record's payload */
        size_t off;                    /* where the names start in it */
        struct kevent_clr_names names; /* made (LAZY_DONE): in the record's arena */
        enum kdecoder_lazy_state state;
};

/* One provider looked up before: kprov_slot_cached's slots, by a hash of the GUID's first
   8 bytes. All zero (calloc) is a right slot: the zero GUID is KP_UNKNOWN (= 0) and no CLR
   provider. */
struct kprov_slot {
        uint64_t lo, hi;   /* the GUID's bytes 0-7 and 8-15 */
        uint32_t k;        /* enum kprov */
        uint32_t clr_rank; /* clr_provider_rank: 0, or the CLR table's provider + 1 */
};
#define KPROV_NR_SLOTS 16 /* kprov_slot_cached takes the hash's top 4 bits */

struct kdecoder {
        struct kprov_slot prov_slots[KPROV_NR_SLOTS];
        bool is_raw_timestamp;
        bool has_clock;
        uint64_t clk_base;    /* ts0 (raw) or StartTime (FILETIME) */
        uint64_t clk_int;     /* ns per tick: integer part of num / den */
        uint64_t clk_frac_hi; /* fraction part, ceil((num % den) * 2^128 / den) */
        uint64_t clk_frac_lo;
        uint64_t clk_fast_max; /* ticks after clk_base whose ns take kdecoder_session_ns's short
                                  path: no overflow, no sign (0 without a clock) */
        TRACE_LOGFILE_HEADER header; /* the last header event, converted to x64 */

        struct kdecoder_stats st;
        uint64_t nr_refs_dropped;

        struct tid_map tids;

        struct pending_ref *refs; /* owned ring, refs_cap entries (power of two) */
        uint32_t refs_cap;
        uint32_t refs_head;        /* oldest sequence number in the ring */
        uint32_t refs_tail;        /* next sequence number */
        struct ref_slot *ref_keys; /* owned */
        uint32_t ref_keys_mask;
        uint32_t ref_keys_nr;

        struct def_slot *defs; /* owned */
        uint32_t defs_mask;
        uint32_t defs_nr;
        uint64_t defs_frames;

        /* definitions read ahead (kdecoder_preload_stack_key), by key then time */
        struct preload_def *pre; /* owned */
        uint32_t nr_pre, cap_pre;
        uint64_t *pre_frames; /* owned pool */
        uint64_t nr_pre_frames, cap_pre_frames;
        bool is_pre_sorted;

        char *str; /* owned scratch for this record's strings */
        size_t str_len;
        size_t str_cap;
        uint64_t *frames;                           /* owned scratch, KEV_MAX_FRAMES */
        struct kevent_lbr_entry *lbr;               /* owned scratch, KEV_MAX_LBR */
        uint64_t *lbr_info;                         /* owned scratch, KEV_MAX_LBR */
        struct kevent_field fields[KEV_MAX_FIELDS]; /* this record's, for KEV_FIELDS */
        struct kdecoder_lazy lazy;                  /* this record's, when left to be asked */
        struct kdecoder_lazy_names lazy_names;      /* this record's CLR method's names */
        struct tdh_registry *meta; /* owned: the trace's MetaData events, from the first one */
        struct etw_manifests *manifests; /* owned: ManifestData chunks, from the first one */
        struct tl_cache *tl;             /* owned: TraceLogging schemas, from the first one */
        char name_buf[64];               /* "Provider/opN" of the current record */
        char *op_names[KP_MAX][256];     /* owned: "Provider/opN" names made so far */
        struct unnamed_event *unnamed;   /* owned: unnamed.c's names, an open-addressed table */
        uint32_t nr_unnamed, cap_unnamed;
        const char *names[KP_MAX][256]; /* opcode_name's answers so far (a switch per event) */
};

static inline uint64_t ldptr(const uint8_t *p, unsigned psize)
{
        return psize == 8 ? le_get64(p) : le_get32(p);
}

/* Whether slot k lies cyclically in (i, j]: linear-probing deletion keeps such entries. */
static inline bool in_cyclic_range(uint32_t k, uint32_t i, uint32_t j)
{
        return i <= j ? (i < k && k <= j) : (i < k || k <= j);
}

static inline uint32_t tid_index(uint32_t tid, uint32_t mask)
{
        return (uint32_t)(hash_mix64_half(tid) & mask);
}

static inline uint32_t kdecoder_tid_get_map(const struct tid_map *m, uint32_t tid)
{
        if (m->slots && tid != KEV_NONE) {
                for (uint32_t i = tid_index(tid, m->mask);; i = (i + 1) & m->mask) {
                        if (m->slots[i].tid == tid)
                                return m->slots[i].pid;
                        if (m->slots[i].tid == KEV_NONE)
                                break;
                }
        }
        return tid == 0 ? 0 : KEV_NONE; /* tid 0: the idle threads, process 0 */
}

/* The process of tid from the thread table (KEV_NONE when unknown, 0 for tid 0). */
static inline uint32_t kdecoder_tid_get(const struct kdecoder *d, uint32_t tid)
{
        return kdecoder_tid_get_map(&d->tids, tid);
}

/* Records tid's process in the thread table (bounded: it starts over when full). */
void kdecoder_tid_set(struct kdecoder *d, uint32_t tid, uint32_t pid);

/* Sets the clock from the trace header event (d->header) and the first timestamp. */
void kdecoder_clock_setup(struct kdecoder *d, uint64_t ts0);

/* ts in ns since the session start, saturating; 0 before the header event. */
static inline int64_t kdecoder_session_ns(const struct kdecoder *d, uint64_t ts)
{
        uint64_t diff = ts - d->clk_base;

        /* Nearly every record is a little after the session's start: mag = diff, and at most
           clk_fast_max ticks cannot overflow nor pass INT64_MAX (see kdecoder_clock_setup), so
           the checks below, a third of this function's instructions, are left to the rest. */
        if (__builtin_expect(diff <= d->clk_fast_max, 1)) {
                uint64_t ns = diff * d->clk_int;

                if (d->clk_frac_hi | d->clk_frac_lo) {
                        kev_u128 a = (kev_u128)diff * d->clk_frac_lo;
                        kev_u128 b = (kev_u128)diff * d->clk_frac_hi + (uint64_t)(a >> 64);

                        ns += (uint64_t)(b >> 64);
                }
                return (int64_t)ns;
        }
        if (!d->has_clock)
                return 0;

        bool is_negative = diff > (uint64_t)INT64_MAX;
        uint64_t mag = is_negative ? 0 - diff : diff;
        uint64_t ns, part;

        if (__builtin_mul_overflow(mag, d->clk_int, &ns))
                ns = UINT64_MAX;
        if (d->clk_frac_hi | d->clk_frac_lo) {
                /* (mag * frac) >> 128, frac = frac_hi:frac_lo */
                kev_u128 a = (kev_u128)mag * d->clk_frac_lo;
                kev_u128 b = (kev_u128)mag * d->clk_frac_hi + (uint64_t)(a >> 64);

                part = (uint64_t)(b >> 64);
                if (__builtin_add_overflow(ns, part, &ns))
                        ns = UINT64_MAX;
        }
        if (ns > (uint64_t)KEVENT_TIME_NS_MAX)
                ns = (uint64_t)KEVENT_TIME_NS_MAX; /* a damaged time, cut (kevent.h) */
        return is_negative ? -(int64_t)ns : (int64_t)ns;
}

/* ---- the known kernel providers (kprov.c) ---- */

/* The known provider of GUID g, or KP_UNKNOWN. */
enum kprov kprov_lookup(const GUID *g);

/* The CLR provider of GUID g (clr.c): 1 the runtime, 2 its rundown, 0 another provider. */
uint32_t clr_provider_rank(const GUID *g);

/* kprov_lookup and clr_provider_rank through the decoder's slots: a record's provider is nearly
   always one of the few seen just before, and the whole GUID compared in two loads is a third
   of the switch and memcmp of kprov_lookup (which a miss still asks, then keeps the answers in
   the slot), and a tenth of the CLR table's two memcmp. The slot is valid until the next
   lookup. */
static inline const struct kprov_slot *kprov_slot_cached(struct kdecoder *d, const GUID *g)
{
        uint64_t lo, hi;
        memcpy(&lo, g, 8);
        memcpy(&hi, (const uint8_t *)g + 8, 8);
        struct kprov_slot *s = &d->prov_slots[(lo * 0x9E3779B97F4A7C15ull) >> 60];
        if (s->lo == lo && s->hi == hi)
                return s;
        *s = (struct kprov_slot){lo, hi, (uint32_t)kprov_lookup(g), clr_provider_rank(g)};
        return s;
}
/* The provider's name ("Thread", "PerfInfo"); k is known. */
const char *kprov_name(enum kprov k);
/* The PerfView/xperf name of a known (provider, opcode), or NULL. */
const char *kprov_opcode_name(enum kprov k, uint8_t op);
/* The event's name: static for known events, "Provider/opN" (made once) for the rest of a known
   provider, "" for an unknown provider. */
const char *kprov_event_name(struct kdecoder *d, enum kprov k, uint8_t op);

/* kprov_event_name's two common answers without the call (14 instructions a record): a name it
   made before for (k, op), and "" for an unknown provider (kprov_opcode_name knows none). */
static inline const char *kprov_event_name_cached(struct kdecoder *d, enum kprov k, uint8_t op)
{
        if (k == KP_UNKNOWN)
                return "";
        const char *name = d->names[k][op];
        return name ? name : kprov_event_name(d, k, op);
}

/* ---- strings into the record's arena (kstrings.c): borrowed until the next record ---- */

/* The UTF-16LE string at pl[off..], up to its NUL or the payload's end, as UTF-8 (U+FFFD for
   unpaired surrogates). *next: the offset after the NUL (or the payload length). */
const char *kstr_utf16(struct kdecoder *d, const struct payload *pl, size_t off, size_t *next);
/* The 8-bit string at pl[off..] up to its NUL or the payload's end: copied when it is valid
   UTF-8, else read as Latin-1. *next as for kstr_utf16. */
const char *kstr_ansi(struct kdecoder *d, const struct payload *pl, size_t off, size_t *next);
/* A SID (revision, count, 48-bit big-endian authority, count sub-authorities) as "S-1-5-18";
   sid has 8 + 4 * count bytes. */
const char *kstr_sid(struct kdecoder *d, const uint8_t *sid, unsigned count);

/* ---- stack keys (stack_keys.c): Windows' stack cache, references resolved by definitions ---- */

/* The number of references pending on key. */
uint32_t stack_keys_nr_pending(const struct kdecoder *d, uint64_t key);
/* After a definition (KeyCreate, KeyDelete, KeyRundown) was delivered: emit the references it
   resolves, then keep or forget it. */
void stack_keys_def_after(struct kdecoder *d, const struct kevent *ev, kevent_sink_fn sink,
                          void *ctx);
/* After a reference (StackKeyKernel, StackKeyUser) was delivered: resolve it from the cache or
   the definitions read ahead, or queue it. */
void stack_keys_ref_after(struct kdecoder *d, const struct kevent *ev, kevent_sink_fn sink,
                          void *ctx);
/* Frees what the stack-key state owns (not d). */
void stack_keys_free(struct kdecoder *d);

/* ---- the payload decoders: 0, KEV_NO_LAYOUT (KEV_OTHER) or -EBADMSG (too short) ---- */

/* The event's union is not cleared as a whole (a 200-byte memset per event shows in profiles):
   each decoder clears the member it fills. */
#define KEV_CLEAR(ev, member) memset(&(ev)->member, 0, sizeof((ev)->member))

#define KEV_NO_LAYOUT 1

/* The kernel logger's events by (provider, opcode, version, pointer size) (kernel.c). */
int kernel_decode(struct kdecoder *d, enum kprov k, struct kevent *ev, const struct payload *pl);

/* etwtop's own events (own.c, doc/etwtop-provider.md), by their EVENT_DESCRIPTOR Id. */
const char *own_event_name(uint16_t id);
int own_decode(struct kdecoder *d, struct kevent *ev, const struct payload *pl, uint16_t id);

/* The .NET runtime's events (clr.c), by provider and Id. */
enum clr_kind { CLR_NONE, CLR_METHOD, CLR_MODULE };

struct clr_event_def {
        bool is_rundown;
        uint16_t id;
        enum clr_kind kind;
        enum kevent_phase phase;
        const char *name;
};

/* The CLR event of this Id from the provider of clr_provider_rank's answer rank, or NULL (rank
   0: not a CLR provider, or an Id not known). */
const struct clr_event_def *clr_event_find(uint32_t rank, uint16_t id);
/* Decodes the method and module events c names (c->kind); KEV_NO_LAYOUT for the others. */
int clr_decode(struct kdecoder *d, const struct clr_event_def *c, struct kevent *ev,
               const struct payload *pl);

/* The .NET runtime's private provider (clr_private.c), by Id and version: KEV_NO_LAYOUT when
   g is another provider or the event is not known (ev->name is set when it is known). */
int clr_private_decode(struct kdecoder *d, struct kevent *ev, const struct payload *pl,
                       const GUID *g, uint16_t id);

/* unnamed.c: the name of a manifest event no decoder names, "{GUID}/EventID(N)", the same
   pointer for every event of that provider and Id while d lives; NULL without memory. */
const char *unnamed_event_name(struct kdecoder *d, const GUID *provider, uint16_t id,
                               bool is_message);
void unnamed_free(struct kdecoder *d);

#endif
