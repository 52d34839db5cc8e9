/* SPDX-License-Identifier: MIT */
/* kevent.c: decodes kernel EVENT_RECORDs (ETL-FORMAT.md 3) into struct kevent, with fix-ups. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "le_bytes.h"
#include "kevent.h"
#include "kevent_mof.h"
#include "tdh_meta.h"
#include "etw_manifest.h"
#include "etw/ntwmi.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "payloads are read as little-endian");

__extension__ typedef unsigned __int128 kev_u128;

#define KEV_NONE 0xFFFFFFFFu /* pid/tid unknown; also the empty mark of the tid table */

/* UserDataLength is 16 bits: every scratch buffer is sized from this bound. */
#define KEV_MAX_PAYLOAD 0xFFFFu
/* UTF-16 gives at most 3 bytes per 2, Latin-1 2 per 1, a SID string under 3 per byte. */
#define KEV_STR_ARENA  (3u * (KEV_MAX_PAYLOAD + 1u) + 256u)
#define KEV_MAX_FRAMES (KEV_MAX_PAYLOAD / 4u + 1u)
#define KEV_MAX_LBR    (KEV_MAX_PAYLOAD / 12u + 1u)

#define KEV_TIDS_MIN       1024u
#define KEV_TIDS_MAX       (1u << 22) /* entries; past this the table starts over */
#define KEV_REFS_MIN       1024u
#define KEV_REFS_MAX       (1u << 20) /* pending stack-key references; oldest dropped past this */
#define KEV_DEFS_MIN       256u
#define KEV_DEFS_MAX       (1u << 18) /* cached stack-key definitions */
#define KEV_DEFS_FRAMES    (1u << 23) /* frames held by the definition cache, in total */
#define KEV_PRELOAD_MAX    (1u << 22) /* stack-key definitions read ahead */
#define KEV_PRELOAD_FRAMES (1u << 26) /* their frames, in total (512 MB at most) */

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

static const struct {
        const GUID *guid; /* borrowed: backend/etw_guids.c */
        const char *name;
} kprov_table[KP_MAX] = {
        [KP_EVENT_TRACE] = {&EventTraceGuid, "EventTrace"},
        [KP_DISK_IO] = {&DiskIoGuid, "DiskIo"},
        [KP_PAGE_FAULT] = {&PageFaultGuid, "PageFault"},
        [KP_PROCESS] = {&ProcessGuid, "Process"},
        [KP_FILE_IO] = {&FileIoGuid, "FileIo"},
        [KP_THREAD] = {&ThreadGuid, "Thread"},
        [KP_TCPIP] = {&TcpIpGuid, "TcpIp"},
        [KP_JOB] = {&JobGuid, "Job"},
        [KP_UDPIP] = {&UdpIpGuid, "UdpIp"},
        [KP_REGISTRY] = {&RegistryGuid, "Registry"},
        [KP_DBGPRINT] = {&DbgPrintGuid, "DbgPrint"},
        [KP_CONFIG] = {&EventTraceConfigGuid, "SystemConfig"},
        [KP_LBR] = {&LastBranchRecordGuid, "LastBranchRecord"},
        [KP_WNF] = {&WnfGuid, "Wnf"},
        [KP_POOL] = {&PoolGuid, "Pool"},
        [KP_PERFINFO] = {&PerfInfoGuid, "PerfInfo"},
        [KP_HEAP] = {&HeapGuid, "Heap"},
        [KP_OBJECT] = {&ObjectGuid, "Object"},
        [KP_POWER] = {&PowerGuid, "Power"},
        [KP_MODBOUND] = {&ModBoundGuid, "ModBound"},
        [KP_IMAGE] = {&ImageLoadGuid, "Image"},
        [KP_DPC] = {&DpcGuid, "Dpc"},
        [KP_CC] = {&CcGuid, "Cc"},
        [KP_CRITSEC] = {&CritSecGuid, "CritSec"},
        [KP_STACKWALK] = {&StackWalkGuid, "StackWalk"},
        [KP_UMS] = {&UmsGuid, "Ums"},
        [KP_ALPC] = {&AlpcGuid, "ALPC"},
        [KP_SPLITIO] = {&SplitIoGuid, "SplitIo"},
        [KP_THREADPOOL] = {&ThreadPoolGuid, "ThreadPool"},
        [KP_HYPERVISOR] = {&HypervisorGuid, "Hypervisor"},
        [KP_HYPERVISORX] = {&HypervisorXGuid, "HypervisorX"},
        [KP_KTC] = {&KernelTraceControlImageIdGuid, "KernelTraceControl"},
        [KP_SYSCONFIGEX] = {&SysConfigExGuid, "SysConfigEx"},
        [KP_WINSAT] = {&WinSatGuid, "WinSat"},
        [KP_METADATA] = {&KernelTraceControlMetaDataGuid, "MetaData"},
        [KP_ETWTOP] = {&etwtop_provider_guid, "etwtop"},
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

struct kdecoder {
        bool is_raw_timestamp;
        bool has_clock;
        uint64_t clk_base;    /* ts0 (raw) or StartTime (FILETIME) */
        uint64_t clk_int;     /* ns per tick: integer part of num / den */
        uint64_t clk_frac_hi; /* fraction part, ceil((num % den) * 2^128 / den) */
        uint64_t clk_frac_lo;
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
        struct tdh_registry *meta; /* owned: the trace's MetaData events, from the first one */
        struct etw_manifests *manifests; /* owned: ManifestData chunks, from the first one */
        char name_buf[64];               /* "Provider/opN" of the current record */
        char *op_names[KP_MAX][256];     /* owned: "Provider/opN" names made so far */
        const char *names[KP_MAX][256];  /* opcode_name's answers so far (a switch per event) */
};

/* ---- little-endian loads (callers check the bounds) ---- */

static inline uint64_t ldptr(const uint8_t *p, unsigned psize)
{
        return psize == 8 ? le_get64(p) : le_get32(p);
}

static inline uint64_t hash64(uint64_t x)
{
        x ^= x >> 33;
        x *= 0xff51afd7ed558ccdull;
        x ^= x >> 33;
        return x;
}

/* Whether slot k lies cyclically in (i, j]: linear-probing deletion keeps such entries. */
static inline bool in_cyclic_range(uint32_t k, uint32_t i, uint32_t j)
{
        return i <= j ? (i < k && k <= j) : (i < k || k <= j);
}

/* ---- provider lookup and names ---- */

static enum kprov kprov_lookup(const GUID *g)
{
        enum kprov k;

        switch (g->Data1) {
        case 0x68fdd900: k = KP_EVENT_TRACE; break;
        case 0x3d6fa8d4: k = KP_DISK_IO; break;
        case 0x3d6fa8d3: k = KP_PAGE_FAULT; break;
        case 0x3d6fa8d0: k = KP_PROCESS; break;
        case 0x90cbdc39: k = KP_FILE_IO; break;
        case 0x3d6fa8d1: k = KP_THREAD; break;
        case 0x9a280ac0: k = KP_TCPIP; break;
        case 0x3282fc76: k = KP_JOB; break;
        case 0xbf3a50c5: k = KP_UDPIP; break;
        case 0xae53722e: k = KP_REGISTRY; break;
        case 0x13976d09: k = KP_DBGPRINT; break;
        case 0x01853a65: k = KP_CONFIG; break;
        case 0x99134383: k = KP_LBR; break;
        case 0x42695762: k = KP_WNF; break;
        case 0x0268a8b6: k = KP_POOL; break;
        case 0xce1dbfb4: k = KP_PERFINFO; break;
        case 0x222962ab: k = KP_HEAP; break;
        case 0x89497f50: k = KP_OBJECT; break;
        case 0xe43445e0: k = KP_POWER; break;
        case 0xa9152f00: k = KP_MODBOUND; break;
        case 0x2cb15d1d: k = KP_IMAGE; break;
        case 0xb2d14872: k = KP_DPC; break;
        case 0x7687a439: k = KP_CC; break;
        case 0x3ac66736: k = KP_CRITSEC; break;
        case 0xdef2fe46: k = KP_STACKWALK; break;
        case 0x9aec974b: k = KP_UMS; break;
        case 0x45d8cccd: k = KP_ALPC; break;
        case 0xd837ca92: k = KP_SPLITIO; break;
        case 0xc861d0e2: k = KP_THREADPOOL; break;
        case 0x7f2a405c: k = KP_HYPERVISOR; break;
        case 0x2ce9a149: k = KP_HYPERVISORX; break;
        case 0xb3e675d7: k = KP_KTC; break;
        case 0x9b79ee91: k = KP_SYSCONFIGEX; break;
        case 0xed54dff8: k = KP_WINSAT; break;
        case 0xbbccf6c1: k = KP_METADATA; break;
        case 0xb26bff8a: k = KP_ETWTOP; break;
        default: return KP_UNKNOWN;
        }
        return memcmp(g, kprov_table[k].guid, sizeof(GUID)) == 0 ? k : KP_UNKNOWN;
}

const char *kevent_provider_name(const GUID *guid)
{
        if (!guid)
                return NULL;
        enum kprov k = kprov_lookup(guid);
        return k == KP_UNKNOWN ? NULL : kprov_table[k].name;
}

/* The PerfView/xperf name of a known (provider, opcode), or NULL. */
static const char *opcode_name(enum kprov k, uint8_t op)
{
        switch (k) {
        case KP_EVENT_TRACE:
                switch (op) {
                case 0: return "EventTrace/Header";
                case 5: return "EventTrace/Extension";
                case 8: return "EventTrace/RundownComplete";
                case 32: return "EventTrace/EndExtension";
                case 80: return "EventTrace/PartitionInfo";
                }
                break;
        case KP_PROCESS:
                switch (op) {
                case 1: return "Process/Start";
                case 2: return "Process/End";
                case 3: return "Process/DCStart";
                case 4: return "Process/DCEnd";
                case 10: return "Image/Load"; /* hook 0x030A when not remapped */
                case 39: return "Process/Defunct";
                }
                break;
        case KP_THREAD:
                switch (op) {
                case 1: return "Thread/Start";
                case 2: return "Thread/End";
                case 3: return "Thread/DCStart";
                case 4: return "Thread/DCEnd";
                case 36: return "Thread/CSwitch";
                case 50: return "Thread/ReadyThread";
                case 72: return "Thread/SetName";
                }
                break;
        case KP_IMAGE:
                switch (op) {
                case 2: return "Image/Unload";
                case 3: return "Image/DCStart";
                case 4: return "Image/DCEnd";
                case 10: return "Image/Load";
                case 33: return "Image/KernelBase";
                case 34: return "Image/HypercallPage";
                }
                break;
        case KP_PERFINFO:
                switch (op) {
                case 46: return "PerfInfo/SampledProfile";
                case 47: return "PerfInfo/PMCInterrupt";
                case 48: return "PerfInfo/PMCCounterConfig";
                case 49: return "PerfInfo/PMCCounterCorruption";
                case 51: return "PerfInfo/SysClEnter";
                case 52: return "PerfInfo/SysClExit";
                case 55: return "PerfInfo/BatchedSampledProfile";
                case 66: return "PerfInfo/ThreadedDPC";
                case 67: return "PerfInfo/ISR";
                case 68: return "PerfInfo/DPC";
                case 69: return "PerfInfo/TimerDPC";
                case 72: return "PerfInfo/SetInterval";
                case 73: return "PerfInfo/CollectionStart";
                case 74: return "PerfInfo/CollectionEnd";
                }
                break;
        case KP_STACKWALK:
                switch (op) {
                case 32: return "StackWalk/Stack";
                case 34: return "StackWalk/KeyCreate";
                case 35: return "StackWalk/KeyDelete";
                case 36: return "StackWalk/KeyRundown";
                case 37: return "StackWalk/StackKeyKernel";
                case 38: return "StackWalk/StackKeyUser";
                }
                break;
        case KP_LBR:
                if (op == EVENT_TRACE_LAST_BRANCH_EVENT_OPCODE)
                        return "LastBranchRecord/LBR";
                break;
        case KP_KTC:
                switch (op) {
                case KTC_IMAGE_ID: return "KernelTraceControl/ImageID";
                case KTC_DBGID_NONE: return "KernelTraceControl/DbgID_None";
                case KTC_DBGID_RSDS: return "KernelTraceControl/DbgID_RSDS";
                case KTC_DBGID_ILRSDS: return "KernelTraceControl/DbgID_ILRSDS";
                case KTC_DBGID_PPDB: return "KernelTraceControl/DbgPPDB";
                case KTC_DBGID_DETERM: return "KernelTraceControl/DbgDeterm";
                case KTC_FILE_VERSION: return "KernelTraceControl/FileVersion";
                }
                break;
        case KP_SYSCONFIGEX:
                switch (op) {
                case 32: return "SysConfigEx/BuildInfo";
                case 33: return "SysConfigEx/SystemPaths";
                case 35: return "SysConfigEx/VolumeMapping";
                }
                break;
        case KP_METADATA:
                switch (op) {
                case 32: return "MetaData/EventInfo";
                case 33: return "MetaData/EventMapInfo";
                }
                break;
        default: break;
        }
        return NULL;
}

/* The event's name: static for known events, "Provider/opN" in d->name_buf for the rest of a
   known provider, "" for an unknown provider. */
static const char *event_name(struct kdecoder *d, enum kprov k, uint8_t op)
{
        if (k != KP_UNKNOWN && d->names[k][op])
                return d->names[k][op];
        const char *name = opcode_name(k, op);
        if (name && k != KP_UNKNOWN)
                d->names[k][op] = name;

        if (name)
                return name;
        if (k == KP_UNKNOWN)
                return "";
        /* built once per (provider, opcode): formatting per event is too slow for the replay */
        char *cached = d->op_names[k][op];
        if (cached)
                return cached;
        snprintf(d->name_buf, sizeof(d->name_buf), "%s/op%u", kprov_table[k].name, (unsigned)op);
        cached = strdup(d->name_buf);
        if (!cached)
                return d->name_buf;
        d->op_names[k][op] = cached;
        return cached;
}

/* ---- the session clock (ETL-FORMAT.md 1.8) ---- */

static void clock_setup(struct kdecoder *d, uint64_t ts0)
{
        const TRACE_LOGFILE_HEADER *h = &d->header;
        uint64_t num = 1000000000u, den;

        if (h->PerfFreq.QuadPart > 0)
                den = (uint64_t)h->PerfFreq.QuadPart;
        else
                den = 10000000u; /* PerfFreq 0: assume the 10 MHz QPC of Windows 10 */
        if (!d->is_raw_timestamp) {
                d->clk_base = (uint64_t)h->StartTime.QuadPart;
                num = 100;
                den = 1;
        } else {
                d->clk_base = ts0;
                if (h->ReservedFlags == EVENT_TRACE_CLOCK_SYSTEMTIME) {
                        num = 100;
                        den = 1;
                } else if (h->ReservedFlags == EVENT_TRACE_CLOCK_CPUCYCLE && h->CpuSpeedInMHz) {
                        num = 1000;
                        den = h->CpuSpeedInMHz;
                }
        }
        /* ns = mag * num / den without a division per event: the integer part, plus mag times
           a 128-bit fixed-point fraction rounded up. Its error is below mag / 2^128 < 1 / den,
           which never crosses an integer, so the result is exactly floor(mag * num / den). */
        kev_u128 r = (kev_u128)(num % den) << 64;
        uint64_t hi = (uint64_t)(r / den);
        kev_u128 r2 = (r % den) << 64;
        uint64_t lo = (uint64_t)(r2 / den);

        if (r2 % den && ++lo == 0)
                hi++;
        d->clk_int = num / den;
        d->clk_frac_hi = hi;
        d->clk_frac_lo = lo;
        d->has_clock = true;
}

/* ts in ns since the session start, saturating; 0 before the header event. */
static int64_t session_ns(const struct kdecoder *d, uint64_t ts)
{
        if (!d->has_clock)
                return 0;

        uint64_t diff = ts - d->clk_base;
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
        if (ns > (uint64_t)INT64_MAX)
                ns = (uint64_t)INT64_MAX;
        return is_negative ? -(int64_t)ns : (int64_t)ns;
}

/* ---- strings into the scratch arena ---- */

/* Appends cp as UTF-8 if it fits with room left for the NUL; returns bytes written. */
static size_t put_utf8(char *out, size_t o, size_t room, uint32_t cp)
{
        uint8_t b[4];
        size_t n;

        if (cp < 0x80) {
                b[0] = (uint8_t)cp;
                n = 1;
        } else if (cp < 0x800) {
                b[0] = (uint8_t)(0xC0 | cp >> 6);
                b[1] = (uint8_t)(0x80 | (cp & 0x3F));
                n = 2;
        } else if (cp < 0x10000) {
                b[0] = (uint8_t)(0xE0 | cp >> 12);
                b[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
                b[2] = (uint8_t)(0x80 | (cp & 0x3F));
                n = 3;
        } else {
                b[0] = (uint8_t)(0xF0 | cp >> 18);
                b[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3F));
                b[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3F));
                b[3] = (uint8_t)(0x80 | (cp & 0x3F));
                n = 4;
        }
        if (o + n + 1 > room)
                return 0;
        memcpy(out + o, b, n);
        return n;
}

/* Finishes a string of o bytes begun at d->str + d->str_len. */
static const char *arena_finish(struct kdecoder *d, size_t o)
{
        char *s = d->str + d->str_len;

        s[o] = '\0';
        d->str_len += o + 1;
        return s;
}

/* The UTF-16LE string at pl[off..], up to its NUL or the payload's end, as UTF-8 (U+FFFD for
   unpaired surrogates). *next: the offset after the NUL (or the payload length). */
static const char *get_utf16(struct kdecoder *d, const struct payload *pl, size_t off, size_t *next)
{
        if (off >= pl->len) {
                *next = pl->len;
                return "";
        }

        const uint8_t *s = pl->p + off;
        size_t n = pl->len - off, i = 0, o = 0;
        size_t room = d->str_cap - d->str_len;
        char *out = d->str + d->str_len;
        bool has_nul = false, is_full = room == 0;

        /* ASCII fast path: most names and paths are plain ASCII */
        while (i + 2 <= n && o + 1 < room && s[i + 1] == 0 && s[i] != 0 && s[i] < 0x80) {
                out[o++] = (char)s[i];
                i += 2;
        }
        while (i + 2 <= n) {
                uint32_t cp = le_get16(s + i);

                i += 2;
                if (cp == 0) {
                        has_nul = true;
                        break;
                }
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                        uint32_t lo = i + 2 <= n ? le_get16(s + i) : 0;

                        if (lo >= 0xDC00 && lo <= 0xDFFF) {
                                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                                i += 2;
                        } else {
                                cp = 0xFFFD;
                        }
                } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                        cp = 0xFFFD;
                }
                if (!is_full) {
                        size_t w = put_utf8(out, o, room, cp);

                        is_full = w == 0;
                        o += w;
                }
        }
        *next = has_nul ? off + i : pl->len;
        return room ? arena_finish(d, o) : "";
}

/* ---- what the MOF table decoder (kevent_mof.c) uses ---- */

const char *kdecoder_utf16_at(struct kdecoder *d, const uint8_t *p, size_t len, size_t off,
                              size_t *next)
{
        struct payload pl = {p, len, 8};

        return get_utf16(d, &pl, off, next);
}

const char *kdecoder_utf16_fixed(struct kdecoder *d, const uint8_t *p, size_t len, size_t off,
                                 size_t nchars)
{
        size_t end = off + 2 * nchars < len ? off + 2 * nchars : len, next;
        struct payload pl = {p, end, 8};

        return get_utf16(d, &pl, off, &next);
}

const char *kdecoder_arena_copy(struct kdecoder *d, const char *s)
{
        size_t n = strlen(s);

        if (d->str_cap - d->str_len < n + 1)
                return "";
        memcpy(d->str + d->str_len, s, n);
        return arena_finish(d, n);
}

struct kevent_field *kdecoder_field_slots(struct kdecoder *d)
{
        return d->fields;
}

/* Length of the valid UTF-8 sequence starting at s[0..n), or 0 when it is not valid. */
static size_t utf8_seq_len(const uint8_t *s, size_t n)
{
        uint8_t c = s[0];
        size_t len;
        uint32_t min, cp;

        if (c < 0x80)
                return 1;
        if (c >= 0xC2 && c <= 0xDF) {
                len = 2;
                min = 0x80;
                cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
                len = 3;
                min = 0x800;
                cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
                len = 4;
                min = 0x10000;
                cp = c & 0x07;
        } else {
                return 0;
        }
        if (len > n)
                return 0;
        for (size_t i = 1; i < len; i++) {
                if ((s[i] & 0xC0) != 0x80)
                        return 0;
                cp = cp << 6 | (s[i] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
                return 0;
        return len;
}

/* The 8-bit string at pl[off..] up to its NUL or the payload's end: copied when it is valid
   UTF-8, else read as Latin-1. *next as for get_utf16. */
static const char *get_ansi(struct kdecoder *d, const struct payload *pl, size_t off, size_t *next)
{
        if (off >= pl->len) {
                *next = pl->len;
                return "";
        }

        const uint8_t *s = pl->p + off;
        size_t max = pl->len - off;
        const uint8_t *nul = memchr(s, 0, max);
        size_t n = nul ? (size_t)(nul - s) : max;
        size_t room = d->str_cap - d->str_len;
        char *out = d->str + d->str_len;
        bool is_utf8 = true;

        *next = nul ? off + n + 1 : pl->len;
        if (room == 0)
                return "";
        for (size_t i = 0; i < n;) {
                size_t w = utf8_seq_len(s + i, n - i);

                if (!w) {
                        is_utf8 = false;
                        break;
                }
                i += w;
        }

        size_t o = 0;

        if (is_utf8) {
                o = n < room - 1 ? n : room - 1;
                while (o > 0 && o < n && (s[o] & 0xC0) == 0x80) /* never cut a sequence */
                        o--;
                memcpy(out, s, o);
        } else {
                for (size_t i = 0; i < n; i++) {
                        size_t w = put_utf8(out, o, room, s[i]);

                        if (!w)
                                break;
                        o += w;
                }
        }
        return arena_finish(d, o);
}

/* Formats a SID (revision, count, 48-bit big-endian authority, count sub-authorities) as
   "S-1-5-18". sid has 8 + 4 * count bytes. */
static const char *format_sid(struct kdecoder *d, const uint8_t *sid, unsigned count)
{
        size_t room = d->str_cap - d->str_len;
        char *out = d->str + d->str_len;
        uint64_t auth = 0;
        size_t o;
        int n;

        if (room < 64)
                return "";
        for (int i = 2; i < 8; i++)
                auth = auth << 8 | sid[i];
        if (auth < (1ull << 32))
                n = snprintf(out, room, "S-%u-%llu", (unsigned)sid[0], (unsigned long long)auth);
        else
                n = snprintf(out, room, "S-%u-0x%012llX", (unsigned)sid[0],
                             (unsigned long long)auth);
        o = n > 0 ? (size_t)n : 0;
        for (unsigned i = 0; i < count; i++) {
                if (room - o < 13)
                        break;
                n = snprintf(out + o, room - o, "-%u", (unsigned)le_get32(sid + 8 + 4 * i));
                if (n > 0)
                        o += (size_t)n;
        }
        return arena_finish(d, o);
}

/* ---- the tid -> pid table ---- */

static inline uint32_t tid_index(uint32_t tid, uint32_t mask)
{
        return (uint32_t)(hash64(tid) & mask);
}

static int tid_map_resize(struct tid_map *m, uint32_t cap)
{
        struct tid_slot *slots = malloc((size_t)cap * sizeof(*slots));

        if (!slots)
                return -ENOMEM;
        memset(slots, 0xFF, (size_t)cap * sizeof(*slots));
        for (uint32_t i = 0; m->slots && i <= m->mask; i++) {
                if (m->slots[i].tid == KEV_NONE)
                        continue;
                uint32_t j = tid_index(m->slots[i].tid, cap - 1);

                while (slots[j].tid != KEV_NONE)
                        j = (j + 1) & (cap - 1);
                slots[j] = m->slots[i];
        }
        free(m->slots);
        m->slots = slots;
        m->mask = cap - 1;
        return 0;
}

static uint32_t tid_map_get(const struct tid_map *m, uint32_t tid)
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

uint32_t kdecoder_pid_of_tid(const struct kdecoder *d, uint32_t tid)
{
        return tid_map_get(&d->tids, tid);
}

static void tid_map_set(struct tid_map *m, uint32_t tid, uint32_t pid)
{
        if (tid == KEV_NONE || !m->slots)
                return;
        if (m->nr >= KEV_TIDS_MAX) {
                /* Bounded memory: start over rather than grow without end. */
                memset(m->slots, 0xFF, ((size_t)m->mask + 1) * sizeof(*m->slots));
                m->nr = 0;
        }
        if ((m->nr + 1) * 2 > m->mask + 1 && tid_map_resize(m, (m->mask + 1) * 2))
                return;
        for (uint32_t i = tid_index(tid, m->mask);; i = (i + 1) & m->mask) {
                if (m->slots[i].tid == tid) {
                        m->slots[i].pid = pid;
                        return;
                }
                if (m->slots[i].tid == KEV_NONE) {
                        m->slots[i].tid = tid;
                        m->slots[i].pid = pid;
                        m->nr++;
                        return;
                }
        }
}

/* ---- pending stack-key references ---- */

static inline struct pending_ref *ref_at(const struct kdecoder *d, uint32_t seq)
{
        return &d->refs[seq & (d->refs_cap - 1)];
}

static struct ref_slot *ref_key_find(const struct kdecoder *d, uint64_t key)
{
        if (!d->ref_keys)
                return NULL;
        for (uint32_t i = (uint32_t)(hash64(key) & d->ref_keys_mask);;
             i = (i + 1) & d->ref_keys_mask) {
                struct ref_slot *s = &d->ref_keys[i];

                if (s->count == 0)
                        return NULL;
                if (s->key == key)
                        return s;
        }
}

static void ref_key_remove(struct kdecoder *d, struct ref_slot *slot)
{
        uint32_t mask = d->ref_keys_mask;
        uint32_t i = (uint32_t)(slot - d->ref_keys), j = i;

        for (;;) {
                j = (j + 1) & mask;
                if (d->ref_keys[j].count == 0)
                        break;
                uint32_t k = (uint32_t)(hash64(d->ref_keys[j].key) & mask);

                if (!in_cyclic_range(k, i, j)) {
                        d->ref_keys[i] = d->ref_keys[j];
                        i = j;
                }
        }
        d->ref_keys[i].count = 0;
        d->ref_keys_nr--;
}

static int ref_keys_resize(struct kdecoder *d, uint32_t cap)
{
        struct ref_slot *slots = calloc(cap, sizeof(*slots));

        if (!slots)
                return -ENOMEM;
        for (uint32_t i = 0; d->ref_keys && i <= d->ref_keys_mask; i++) {
                if (d->ref_keys[i].count == 0)
                        continue;
                uint32_t j = (uint32_t)(hash64(d->ref_keys[i].key) & (cap - 1));

                while (slots[j].count)
                        j = (j + 1) & (cap - 1);
                slots[j] = d->ref_keys[i];
        }
        free(d->ref_keys);
        d->ref_keys = slots;
        d->ref_keys_mask = cap - 1;
        return 0;
}

/* The slot for key, inserted empty (count 0 is set by the caller) when absent; NULL on OOM. */
static struct ref_slot *ref_key_get(struct kdecoder *d, uint64_t key)
{
        if (!d->ref_keys || (d->ref_keys_nr + 1) * 2 > d->ref_keys_mask + 1) {
                uint32_t cap = d->ref_keys ? (d->ref_keys_mask + 1) * 2 : KEV_REFS_MIN;

                if (ref_keys_resize(d, cap))
                        return NULL;
        }
        for (uint32_t i = (uint32_t)(hash64(key) & d->ref_keys_mask);;
             i = (i + 1) & d->ref_keys_mask) {
                struct ref_slot *s = &d->ref_keys[i];

                if (s->count == 0) {
                        s->key = key;
                        d->ref_keys_nr++;
                        return s;
                }
                if (s->key == key)
                        return s;
        }
}

/* Moves the ring's head past references that are no longer pending. */
static void refs_trim(struct kdecoder *d)
{
        while (d->refs_head != d->refs_tail && !ref_at(d, d->refs_head)->is_live)
                d->refs_head++;
}

static int refs_grow(struct kdecoder *d)
{
        uint32_t cap = d->refs_cap ? d->refs_cap * 2 : KEV_REFS_MIN;
        struct pending_ref *ring = malloc((size_t)cap * sizeof(*ring));

        if (!ring)
                return -ENOMEM;
        for (uint32_t s = d->refs_head; s != d->refs_tail; s++)
                ring[s & (cap - 1)] = *ref_at(d, s);
        free(d->refs);
        d->refs = ring;
        d->refs_cap = cap;
        return 0;
}

/* Drops the oldest slot of a full ring, counting it when it was still pending. */
static void refs_drop_oldest(struct kdecoder *d)
{
        struct pending_ref *r = ref_at(d, d->refs_head);

        if (r->is_live) {
                struct ref_slot *slot = ref_key_find(d, r->key);

                /* The oldest pending reference is always the first of its key's chain. */
                if (slot) {
                        slot->first = r->next;
                        if (--slot->count == 0)
                                ref_key_remove(d, slot);
                }
                r->is_live = 0;
                d->st.nr_stack_refs_pending--;
                d->nr_refs_dropped++;
        }
        d->refs_head++;
}

static void refs_push(struct kdecoder *d, const struct kevent *ev)
{
        if (d->refs_tail - d->refs_head == d->refs_cap) {
                if (d->refs_cap < KEV_REFS_MAX && refs_grow(d) == 0) {
                        /* room made */
                } else if (d->refs_cap) {
                        refs_drop_oldest(d);
                } else {
                        d->nr_refs_dropped++; /* no ring at all (out of memory) */
                        return;
                }
        }

        struct ref_slot *slot = ref_key_get(d, ev->stack_key.key);

        if (!slot) {
                d->nr_refs_dropped++;
                return;
        }

        uint32_t seq = d->refs_tail++;
        struct pending_ref *r = ref_at(d, seq);

        r->key = ev->stack_key.key;
        r->ts = ev->stack_key.event_timestamp;
        r->next = seq;
        r->pid = ev->stack_key.pid;
        r->tid = ev->stack_key.tid;
        r->cpu = (uint16_t)ev->cpu;
        r->is_kernel = ev->stack_key.is_kernel;
        r->is_live = 1;
        if (slot->count == 0)
                slot->first = seq;
        else
                ref_at(d, slot->last)->next = seq;
        slot->last = seq;
        slot->count++;
        d->st.nr_stack_refs_pending++;
}

/* ---- cached stack-key definitions ---- */

static struct def_slot *def_find(const struct kdecoder *d, uint64_t key)
{
        if (!d->defs)
                return NULL;
        for (uint32_t i = (uint32_t)(hash64(key) & d->defs_mask);; i = (i + 1) & d->defs_mask) {
                struct def_slot *s = &d->defs[i];

                if (!s->frames)
                        return NULL;
                if (s->key == key)
                        return s;
        }
}

static void def_remove(struct kdecoder *d, uint64_t key)
{
        struct def_slot *slot = def_find(d, key);

        if (!slot)
                return;
        d->defs_frames -= slot->cap_frames;
        free(slot->frames);

        uint32_t mask = d->defs_mask;
        uint32_t i = (uint32_t)(slot - d->defs), j = i;

        for (;;) {
                j = (j + 1) & mask;
                if (!d->defs[j].frames)
                        break;
                uint32_t k = (uint32_t)(hash64(d->defs[j].key) & mask);

                if (!in_cyclic_range(k, i, j)) {
                        d->defs[i] = d->defs[j];
                        i = j;
                }
        }
        d->defs[i].frames = NULL;
        d->defs_nr--;
}

static int defs_resize(struct kdecoder *d, uint32_t cap)
{
        struct def_slot *slots = calloc(cap, sizeof(*slots));

        if (!slots)
                return -ENOMEM;
        for (uint32_t i = 0; d->defs && i <= d->defs_mask; i++) {
                if (!d->defs[i].frames)
                        continue;
                uint32_t j = (uint32_t)(hash64(d->defs[i].key) & (cap - 1));

                while (slots[j].frames)
                        j = (j + 1) & (cap - 1);
                slots[j] = d->defs[i];
        }
        free(d->defs);
        d->defs = slots;
        d->defs_mask = cap - 1;
        return 0;
}

/* Remembers key -> frames; silently skipped past the cache's bounds or without memory. */
static void def_store(struct kdecoder *d, uint64_t key, const uint64_t *frames, uint32_t nr)
{
        struct def_slot *slot = def_find(d, key);
        uint32_t cap = nr ? nr : 1;

        if (slot) {
                if (slot->cap_frames < cap) {
                        if (d->defs_frames - slot->cap_frames + cap > KEV_DEFS_FRAMES) {
                                def_remove(d, key);
                                return;
                        }
                        uint64_t *p = realloc(slot->frames, (size_t)cap * sizeof(*p));

                        if (!p) {
                                def_remove(d, key);
                                return;
                        }
                        d->defs_frames += cap - slot->cap_frames;
                        slot->frames = p;
                        slot->cap_frames = cap;
                }
                memcpy(slot->frames, frames, (size_t)nr * sizeof(*frames));
                slot->nr_frames = nr;
                return;
        }
        if (d->defs_nr >= KEV_DEFS_MAX || d->defs_frames + cap > KEV_DEFS_FRAMES)
                return;
        if (!d->defs || (d->defs_nr + 1) * 2 > d->defs_mask + 1) {
                if (defs_resize(d, d->defs ? (d->defs_mask + 1) * 2 : KEV_DEFS_MIN))
                        return;
        }

        uint64_t *copy = malloc((size_t)cap * sizeof(*copy));

        if (!copy)
                return;
        memcpy(copy, frames, (size_t)nr * sizeof(*frames));

        uint32_t i = (uint32_t)(hash64(key) & d->defs_mask);

        while (d->defs[i].frames)
                i = (i + 1) & d->defs_mask;
        d->defs[i] = (struct def_slot){key, copy, nr, cap};
        d->defs_nr++;
        d->defs_frames += cap;
}

/* ---- emitting stacks reassembled from keys ---- */

/* Delivers the KEV_STACK of one resolved reference. src: the record that completed it. */
static void emit_key_stack(const struct kdecoder *d, const struct kevent *src, uint64_t ts,
                           uint32_t pid, uint32_t tid, uint32_t cpu, bool is_kernel, uint64_t key,
                           const uint64_t *frames, uint32_t nr_frames, kevent_sink_fn sink,
                           void *ctx)
{
        struct kevent ev;

        memset(&ev, 0, sizeof(ev));
        ev.type = KEV_STACK;
        ev.name = "StackWalk/Stack";
        ev.provider = &StackWalkGuid;
        ev.opcode = WMI_LOG_TYPE_STACKWALK & 0xFF;
        ev.version = src->version;
        ev.pointer_size = src->pointer_size;
        ev.timestamp = src->timestamp;
        ev.time_ns = src->time_ns;
        ev.cpu = cpu;
        ev.pid = pid;
        ev.tid = tid;
        ev.stack.event_timestamp = ts;
        ev.stack.event_time_ns = session_ns(d, ts);
        ev.stack.pid = pid;
        ev.stack.tid = tid;
        ev.stack.nr_frames = nr_frames;
        ev.stack.frames = frames;
        ev.stack.is_from_key = true;
        ev.stack.is_kernel_part = is_kernel;
        ev.stack.key = key;
        if (sink)
                sink(ctx, &ev);
}

/* After a definition was delivered: emit the references it resolves, then keep or forget it. */
static void stack_def_after(struct kdecoder *d, const struct kevent *ev, kevent_sink_fn sink,
                            void *ctx)
{
        uint64_t key = ev->stack_key_def.key;
        struct ref_slot *slot = ref_key_find(d, key);

        if (slot) {
                uint32_t seq = slot->first, count = slot->count;

                ref_key_remove(d, slot);
                for (uint32_t i = 0; i < count; i++) {
                        struct pending_ref *r = ref_at(d, seq);

                        r->is_live = 0;
                        emit_key_stack(d, ev, r->ts, r->pid, r->tid, r->cpu, r->is_kernel, key,
                                       ev->stack_key_def.frames, ev->stack_key_def.nr_frames, sink,
                                       ctx);
                        seq = r->next;
                }
                d->st.nr_stack_refs_pending -= count;
                d->st.nr_stack_refs_resolved += count;
                refs_trim(d);
        }
        if (ev->opcode == (WMI_LOG_TYPE_STACK_KEY_DELETE & 0xFF))
                def_remove(d, key); /* the kernel may hand the key out again */
        else
                def_store(d, key, ev->stack_key_def.frames, ev->stack_key_def.nr_frames);
}

static int preload_cmp(const void *a, const void *b)
{
        const struct preload_def *x = a, *y = b;
        if (x->key != y->key)
                return x->key < y->key ? -1 : 1;
        return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* The first definition of key read ahead at or after ts (the one a reference at ts names: a
   key is handed out again only after its Delete). */
static const struct preload_def *preload_find(struct kdecoder *d, uint64_t key, uint64_t ts)
{
        if (!d->nr_pre)
                return NULL;
        if (!d->is_pre_sorted) {
                qsort(d->pre, d->nr_pre, sizeof(*d->pre), preload_cmp);
                d->is_pre_sorted = true;
        }
        uint32_t lo = 0, hi = d->nr_pre;
        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                const struct preload_def *m = &d->pre[mid];
                if (m->key < key || (m->key == key && m->ts < ts))
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo < d->nr_pre && d->pre[lo].key == key ? &d->pre[lo] : NULL;
}

void kdecoder_preload_stack_key(struct kdecoder *d, uint64_t key, uint64_t def_timestamp,
                                const uint64_t *frames, uint32_t nr_frames)
{
        if (nr_frames > KEV_MAX_FRAMES || d->nr_pre >= KEV_PRELOAD_MAX ||
            d->nr_pre_frames + nr_frames > KEV_PRELOAD_FRAMES)
                return; /* past the bound: those references wait for their definitions */
        if (d->nr_pre == d->cap_pre) {
                uint32_t cap = d->cap_pre ? d->cap_pre * 2 : 1024;
                struct preload_def *p = realloc(d->pre, cap * sizeof(*p));
                if (!p)
                        return;
                d->pre = p;
                d->cap_pre = cap;
        }
        if (d->nr_pre_frames + nr_frames > d->cap_pre_frames) {
                uint64_t cap = d->cap_pre_frames ? d->cap_pre_frames * 2 : 16384;
                while (cap < d->nr_pre_frames + nr_frames)
                        cap *= 2;
                uint64_t *p = realloc(d->pre_frames, cap * sizeof(*p));
                if (!p)
                        return;
                d->pre_frames = p;
                d->cap_pre_frames = cap;
        }
        memcpy(d->pre_frames + d->nr_pre_frames, frames, (size_t)nr_frames * sizeof(*frames));
        d->pre[d->nr_pre++] = (struct preload_def){key, def_timestamp, d->nr_pre_frames, nr_frames};
        d->nr_pre_frames += nr_frames;
        d->is_pre_sorted = false;
}

/* After a reference was delivered: resolve it from the cache or the definitions read ahead,
   or queue it. */
static void stack_ref_after(struct kdecoder *d, const struct kevent *ev, kevent_sink_fn sink,
                            void *ctx)
{
        const struct def_slot *def = def_find(d, ev->stack_key.key);

        if (!def) {
                const struct preload_def *pre = preload_find(d, ev->stack_key.key, ev->timestamp);
                if (!pre) {
                        refs_push(d, ev);
                        return;
                }
                d->st.nr_stack_refs_resolved++;
                emit_key_stack(d, ev, ev->stack_key.event_timestamp, ev->stack_key.pid,
                               ev->stack_key.tid, ev->cpu, ev->stack_key.is_kernel,
                               ev->stack_key.key, d->pre_frames + pre->first, pre->nr_frames, sink,
                               ctx);
                return;
        }
        d->st.nr_stack_refs_resolved++;
        emit_key_stack(d, ev, ev->stack_key.event_timestamp, ev->stack_key.pid, ev->stack_key.tid,
                       ev->cpu, ev->stack_key.is_kernel, ev->stack_key.key, def->frames,
                       def->nr_frames, sink, ctx);
}

/* ---- payload decoders: 0, 1 (no layout: KEV_OTHER) or -EBADMSG (too short) ---- */

/* The event's union is not cleared as a whole (a 200-byte memset per event shows in profiles):
   each decoder clears the member it fills. */
#define KEV_CLEAR(ev, member) memset(&(ev)->member, 0, sizeof((ev)->member))

#define KEV_NO_LAYOUT 1

static int dec_trace_header(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, trace_header);
        /* ETL-FORMAT.md 1.6: 0x118 bytes x64, 0x110 x86, then two UTF-16 strings. */
        size_t fixed = pl->psize == 8 ? 0x118 : 0x110;
        size_t tz = pl->psize == 8 ? 0x48 : 0x40;
        size_t t = tz + sizeof(TIME_ZONE_INFORMATION) + 4; /* BootTime, after padding */
        TRACE_LOGFILE_HEADER *h = &d->header;
        size_t next;

        if (pl->len < fixed)
                return -EBADMSG;
        memset(h, 0, sizeof(*h));
        memcpy(h, pl->p, offsetof(TRACE_LOGFILE_HEADER, LoggerName));
        memcpy(&h->TimeZone, pl->p + tz, sizeof(h->TimeZone));
        h->BootTime.QuadPart = (LONGLONG)le_get64(pl->p + t);
        h->PerfFreq.QuadPart = (LONGLONG)le_get64(pl->p + t + 8);
        h->StartTime.QuadPart = (LONGLONG)le_get64(pl->p + t + 16);
        h->ReservedFlags = le_get32(pl->p + t + 24);
        h->BuffersLost = le_get32(pl->p + t + 28);
        ev->type = KEV_TRACE_HEADER;
        ev->trace_header.header = h;
        ev->trace_header.logger_name = get_utf16(d, pl, fixed, &next);
        ev->trace_header.log_file_name = get_utf16(d, pl, next, &next);
        if (!d->has_clock) {
                clock_setup(d, ev->timestamp);
                ev->time_ns = session_ns(d, ev->timestamp);
        }
        return 0;
}

static int dec_group_mask(struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, group_mask);
        /* ETW_KERNEL_HEADER_EXTENSION: Masks[8], then Version (absent from some writers). */
        if (pl->len < 32)
                return -EBADMSG;
        ev->type = KEV_GROUP_MASK;
        for (int i = 0; i < 8; i++)
                ev->group_mask.masks[i] = le_get32(pl->p + 4 * i);
        ev->group_mask.kernel_version = pl->len >= 36 ? le_get32(pl->p + 32) : 0;
        ev->group_mask.is_previous = ev->opcode == WMI_LOG_TYPE_GROUP_MASKS_END;
        return 0;
}

static enum kevent_phase phase_of(uint8_t op)
{
        switch (op) {
        case EVENT_TRACE_TYPE_START: return KEV_PHASE_START;
        case EVENT_TRACE_TYPE_END: return KEV_PHASE_END;
        case EVENT_TRACE_TYPE_DC_START: return KEV_PHASE_DC_START;
        case EVENT_TRACE_TYPE_DC_END: return KEV_PHASE_DC_END;
        case EVENT_TRACE_TYPE_LOAD: return KEV_PHASE_START;
        case WMI_LOG_TYPE_PROCESS_DEFUNCT & 0xFF: return KEV_PHASE_DEFUNCT;
        }
        return KEV_PHASE_NONE;
}

static int dec_process(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, process);
        /* WMI_PROCESS_INFORMATION (ETL-FORMAT.md 3.8; older versions as PerfView reads them). */
        const uint8_t *p = pl->p;
        size_t ps = pl->psize, sid_off, off;
        uint8_t v = ev->version;

        if (v == 0) {
                if (pl->len < 2 * ps)
                        return -EBADMSG;
                ev->process.pid = (uint32_t)ldptr(p, pl->psize);
                ev->process.parent_pid = (uint32_t)ldptr(p + ps, pl->psize);
                sid_off = 2 * ps;
        } else {
                size_t fixed = v >= 4 ? 2 * ps + 20 : v == 3 ? 2 * ps + 16 : ps + 16;

                if (pl->len < fixed)
                        return -EBADMSG;
                if (v >= 2)
                        ev->process.unique_key = ldptr(p, pl->psize);
                else
                        ev->process.directory_table_base = ldptr(p, pl->psize);
                ev->process.pid = le_get32(p + ps);
                ev->process.parent_pid = le_get32(p + ps + 4);
                ev->process.session_id = le_get32(p + ps + 8);
                ev->process.exit_status = (int32_t)le_get32(p + ps + 12);
                if (v >= 3)
                        ev->process.directory_table_base = ldptr(p + ps + 16, pl->psize);
                if (v >= 4)
                        ev->process.flags = le_get32(p + 2 * ps + 16);
                sid_off = fixed;
        }

        ev->type = KEV_PROCESS;
        ev->process.phase = phase_of(ev->opcode);
        ev->process.user_sid = "";
        ev->process.image_name = "";
        ev->process.command_line = "";
        ev->process.package_full_name = "";
        ev->process.application_id = "";
        ev->pid = ev->process.pid;
        ev->tid = KEV_NONE;

        /* UserSID: u32 0, or TOKEN_USER (2 pointers) + SID of 8 + 4 * count bytes. */
        off = sid_off;
        if (pl->len - off < 4)
                return 0;
        if (le_get32(p + off) == 0) {
                off += 4;
        } else {
                size_t sid = off + 2 * ps;

                if (pl->len < sid + 8)
                        return 0;
                unsigned count = p[sid + 1];

                if (pl->len < sid + 8 + 4 * (size_t)count)
                        return 0;
                ev->process.user_sid = format_sid(d, p + sid, count);
                off = sid + 8 + 4 * (size_t)count;
        }
        ev->process.image_name = get_ansi(d, pl, off, &off);
        if (v >= 2)
                ev->process.command_line = get_utf16(d, pl, off, &off);
        if (v >= 4) {
                ev->process.package_full_name = get_utf16(d, pl, off, &off);
                ev->process.application_id = get_utf16(d, pl, off, &off);
        }
        if (v >= 5 && ev->opcode == (WMI_LOG_TYPE_PROCESS_DEFUNCT & 0xFF) && pl->len - off >= 8)
                ev->process.exit_time = le_get64(p + off);
        return 0;
}

static int dec_thread(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, thread);
        /* WMI_EXTENDED_THREAD_INFORMATION (ETL-FORMAT.md 3.7). */
        const uint8_t *p = pl->p;
        size_t ps = pl->psize;
        size_t fixed = ev->version >= 2 ? 8 + 7 * ps + 4 : 8;
        size_t prio = 8 + 7 * ps + 4, next;

        if (pl->len < fixed)
                return -EBADMSG;
        ev->type = KEV_THREAD;
        ev->thread.phase = phase_of(ev->opcode);
        ev->thread.name = "";
        if (ev->version == 0) {
                ev->thread.tid = le_get32(p);
                ev->thread.pid = le_get32(p + 4);
        } else {
                ev->thread.pid = le_get32(p);
                ev->thread.tid = le_get32(p + 4);
        }
        if (ev->version >= 2) {
                ev->thread.stack_base = ldptr(p + 8, pl->psize);
                ev->thread.stack_limit = ldptr(p + 8 + ps, pl->psize);
                ev->thread.user_stack_base = ldptr(p + 8 + 2 * ps, pl->psize);
                ev->thread.user_stack_limit = ldptr(p + 8 + 3 * ps, pl->psize);
                ev->thread.affinity = ldptr(p + 8 + 4 * ps, pl->psize);
                ev->thread.win32_start_addr = ldptr(p + 8 + 5 * ps, pl->psize);
                ev->thread.teb_base = ldptr(p + 8 + 6 * ps, pl->psize);
                ev->thread.sub_process_tag = le_get32(p + 8 + 7 * ps);
        }
        if (ev->version >= 3 && pl->len >= prio + 4) {
                ev->thread.base_priority = (int8_t)p[prio];
                ev->thread.page_priority = p[prio + 1];
                ev->thread.io_priority = p[prio + 2];
                ev->thread.thread_flags = p[prio + 3];
                ev->thread.name = get_utf16(d, pl, prio + 4, &next);
        }
        ev->pid = ev->thread.pid;
        ev->tid = ev->thread.tid;
        tid_map_set(&d->tids, ev->thread.tid, ev->thread.pid);
        return 0;
}

static int dec_thread_name(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, thread_name);
        size_t next;

        if (pl->len < 8)
                return -EBADMSG;
        ev->type = KEV_THREAD_NAME;
        ev->thread_name.pid = le_get32(pl->p);
        ev->thread_name.tid = le_get32(pl->p + 4);
        ev->thread_name.name = get_utf16(d, pl, 8, &next);
        ev->pid = ev->thread_name.pid;
        ev->tid = ev->thread_name.tid;
        tid_map_set(&d->tids, ev->thread_name.tid, ev->thread_name.pid);
        return 0;
}

static int dec_cswitch(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, cswitch);
        /* WMI_CONTEXTSWAP (ETL-FORMAT.md 3.5): 16 bytes in v1, 24 from v2. */
        const uint8_t *p = pl->p;

        if (pl->len < (ev->version >= 2 ? 24u : 16u))
                return -EBADMSG;
        ev->type = KEV_CSWITCH;
        ev->cswitch.new_tid = le_get32(p);
        ev->cswitch.old_tid = le_get32(p + 4);
        ev->cswitch.new_priority = (int8_t)p[8];
        ev->cswitch.old_priority = (int8_t)p[9];
        ev->cswitch.previous_cstate = p[10];
        ev->cswitch.old_wait_reason = p[12];
        ev->cswitch.old_wait_mode = p[13] & 1;
        ev->cswitch.old_state = p[14];
        ev->cswitch.old_ideal_processor = p[15];
        if (ev->version >= 2) {
                ev->cswitch.new_wait_time = le_get32(p + 16);
                ev->cswitch.old_remaining_quantum = (int32_t)le_get32(p + 20);
        }
        ev->cswitch.new_pid = tid_map_get(&d->tids, ev->cswitch.new_tid);
        ev->cswitch.old_pid = tid_map_get(&d->tids, ev->cswitch.old_tid);
        ev->pid = ev->cswitch.new_pid;
        ev->tid = ev->cswitch.new_tid;
        return 0;
}

static int dec_ready_thread(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, ready_thread);
        /* ETW_READY_THREAD_EVENT (ETL-FORMAT.md 3.6). */
        if (pl->len < 8)
                return -EBADMSG;
        ev->type = KEV_READY_THREAD;
        ev->ready_thread.tid = le_get32(pl->p);
        ev->ready_thread.adjust_reason = pl->p[4];
        ev->ready_thread.adjust_increment = (int8_t)pl->p[5];
        ev->ready_thread.flags = pl->p[6];
        ev->ready_thread.readying_tid = ev->tid;
        ev->ready_thread.readying_pid = ev->pid;
        ev->tid = ev->ready_thread.tid;
        ev->pid = tid_map_get(&d->tids, ev->ready_thread.tid);
        return 0;
}

static int dec_image(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, image);
        /* WMI_IMAGELOAD_INFORMATION (ETL-FORMAT.md 3.9); v0/v1 as PerfView reads them. */
        const uint8_t *p = pl->p;
        size_t ps = pl->psize, name, next;

        if (ev->version == 0)
                name = 2 * ps;
        else if (ev->version == 1)
                name = 2 * ps + 4;
        else
                name = 3 * ps + 32;
        if (pl->len < name)
                return -EBADMSG;
        ev->type = KEV_IMAGE;
        ev->image.phase = phase_of(ev->opcode);
        ev->image.base = ldptr(p, pl->psize);
        ev->image.size = ldptr(p + ps, pl->psize);
        ev->image.pid = ev->pid;
        if (ev->version >= 1)
                ev->image.pid = le_get32(p + 2 * ps);
        if (ev->version >= 2) {
                ev->image.checksum = le_get32(p + 2 * ps + 4);
                ev->image.time_date_stamp = le_get32(p + 2 * ps + 8);
                ev->image.signature_level = p[2 * ps + 12];
                ev->image.signature_type = p[2 * ps + 13];
                ev->image.default_base = ldptr(p + 2 * ps + 16, pl->psize);
        }
        ev->image.file_name = get_utf16(d, pl, name, &next);
        ev->pid = ev->image.pid;
        return 0;
}

static int dec_image_id(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, image_id);
        /* KernelTraceControl ImageID (ETL-FORMAT.md 3.10). */
        size_t ps = pl->psize, next;

        if (pl->len < 2 * ps + 8)
                return -EBADMSG;
        ev->type = KEV_IMAGE_ID;
        ev->image_id.base = ldptr(pl->p, pl->psize);
        ev->image_id.size = ldptr(pl->p + ps, pl->psize);
        ev->image_id.pid = le_get32(pl->p + 2 * ps);
        ev->image_id.time_date_stamp = le_get32(pl->p + 2 * ps + 4);
        ev->image_id.original_file_name = get_utf16(d, pl, 2 * ps + 8, &next);
        ev->pid = ev->image_id.pid;
        return 0;
}

static int dec_dbg_id(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, dbg_id);
        /* KernelTraceControl DbgID_* (ETL-FORMAT.md 3.10). */
        size_t ps = pl->psize, next;
        bool is_rsds = ev->opcode == KTC_DBGID_RSDS || ev->opcode == KTC_DBGID_ILRSDS;
        size_t fixed = is_rsds ? ps + 24 : ev->opcode == KTC_DBGID_PPDB ? ps + 12 : ps + 4;

        if (pl->len < fixed)
                return -EBADMSG;
        ev->type = KEV_DBG_ID;
        ev->dbg_id.base = ldptr(pl->p, pl->psize);
        ev->dbg_id.pid = le_get32(pl->p + ps);
        ev->dbg_id.pdb_file_name = "";
        if (is_rsds) {
                ev->dbg_id.has_pdb = true;
                memcpy(&ev->dbg_id.guid_sig, pl->p + ps + 4, sizeof(GUID));
                ev->dbg_id.age = le_get32(pl->p + ps + 20);
                ev->dbg_id.pdb_file_name = get_ansi(d, pl, ps + 24, &next);
        } else if (ev->opcode == KTC_DBGID_PPDB) {
                ev->dbg_id.has_ppdb = true;
                ev->dbg_id.time_date_stamp = le_get32(pl->p + ps + 4);
                ev->dbg_id.major_version = le_get16(pl->p + ps + 8);
                ev->dbg_id.minor_version = le_get16(pl->p + ps + 10);
        }
        ev->pid = ev->dbg_id.pid;
        return 0;
}

static int dec_file_version(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, file_version);
        /* KernelTraceControl FileVersion: two u32, then ten UTF-16 strings. */
        size_t off = 8;

        if (pl->len < 8)
                return -EBADMSG;
        ev->type = KEV_FILE_VERSION;
        ev->file_version.image_size = le_get32(pl->p);
        ev->file_version.time_date_stamp = le_get32(pl->p + 4);
        ev->file_version.orig_file_name = get_utf16(d, pl, off, &off);
        ev->file_version.file_description = get_utf16(d, pl, off, &off);
        ev->file_version.file_version = get_utf16(d, pl, off, &off);
        (void)get_utf16(d, pl, off, &off); /* BinFileVersion */
        (void)get_utf16(d, pl, off, &off); /* VerLanguage */
        ev->file_version.product_name = get_utf16(d, pl, off, &off);
        ev->file_version.company_name = get_utf16(d, pl, off, &off);
        ev->file_version.product_version = get_utf16(d, pl, off, &off);
        return 0;
}

static int dec_sample(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, sample);
        /* PERFINFO_SAMPLED_PROFILE_INFORMATION (ETL-FORMAT.md 3.2). */
        const uint8_t *p = pl->p;
        size_t ps = pl->psize;

        if (pl->len < ps + 8)
                return -EBADMSG;
        ev->type = KEV_SAMPLE;
        ev->sample.ip = ldptr(p, pl->psize);
        ev->sample.tid = le_get32(p + ps);
        ev->sample.count = le_get16(p + ps + 4);
        ev->sample.flags = p[ps + 6] & 0x07;
        ev->sample.priority = p[ps + 6] >> 3;
        ev->sample.rank = p[ps + 7];
        ev->tid = ev->sample.tid;
        ev->pid = tid_map_get(&d->tids, ev->sample.tid);
        return 0;
}

static int dec_pmc_sample(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, pmc_sample);
        /* PERFINFO_PMC_SAMPLE_INFORMATION (ETL-FORMAT.md 3.3). */
        size_t ps = pl->psize;

        if (pl->len < ps + 8)
                return -EBADMSG;
        ev->type = KEV_PMC_SAMPLE;
        ev->pmc_sample.ip = ldptr(pl->p, pl->psize);
        ev->pmc_sample.tid = le_get32(pl->p + ps);
        ev->pmc_sample.source = le_get16(pl->p + ps + 4);
        ev->tid = ev->pmc_sample.tid;
        ev->pid = tid_map_get(&d->tids, ev->pmc_sample.tid);
        return 0;
}

static int dec_pmc_config(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, pmc_config);
        size_t off = 4;

        if (pl->len < 4)
                return -EBADMSG;
        ev->type = KEV_PMC_CONFIG;
        ev->pmc_config.nr_counters = le_get32(pl->p);
        for (uint32_t i = 0; i < KEV_MAX_PMC; i++) {
                ev->pmc_config.names[i] = "";
                if (i < ev->pmc_config.nr_counters)
                        ev->pmc_config.names[i] = get_utf16(d, pl, off, &off);
        }
        return 0;
}

static int dec_profile_interval(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, profile_interval);
        size_t next;

        if (pl->len < 12)
                return -EBADMSG;
        ev->type = KEV_PROFILE_INTERVAL;
        ev->profile_interval.source = le_get32(pl->p);
        ev->profile_interval.new_interval_100ns = le_get32(pl->p + 4);
        ev->profile_interval.old_interval_100ns = le_get32(pl->p + 8);
        ev->profile_interval.source_name = "";
        if (ev->version >= 3)
                ev->profile_interval.source_name = get_utf16(d, pl, 12, &next);
        return 0;
}

/* Copies n pointer-sized frames at p into the frame scratch, widened to 64 bits. */
static const uint64_t *widen_frames(struct kdecoder *d, const uint8_t *p, size_t n, unsigned psize)
{
        if (psize == 8) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
                /* the payload itself when it is aligned (ETW records are 8-aligned) */
                if (((uintptr_t)p & 7) == 0)
                        return (const uint64_t *)(const void *)p;
#endif
                memcpy(d->frames, p, n * 8);
        } else {
                for (size_t i = 0; i < n; i++)
                        d->frames[i] = le_get32(p + 4 * i);
        }
        return d->frames;
}

static int dec_stack(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, stack);
        /* STACK_WALK_EVENT_DATA (ETL-FORMAT.md 3.4). */
        size_t n;

        if (pl->len < 16)
                return -EBADMSG;
        n = (pl->len - 16) / pl->psize;
        ev->type = KEV_STACK;
        ev->stack.event_timestamp = le_get64(pl->p);
        ev->stack.event_time_ns = session_ns(d, ev->stack.event_timestamp);
        ev->stack.pid = le_get32(pl->p + 8);
        ev->stack.tid = le_get32(pl->p + 12);
        ev->stack.nr_frames = (uint32_t)n;
        ev->stack.frames = widen_frames(d, pl->p + 16, n, pl->psize);
        ev->pid = ev->stack.pid;
        ev->tid = ev->stack.tid;
        /* a stack names its thread's process: a thread no Thread event has named yet (a live
           session's CPU buffer can come before the rundown's) is known from here on */
        if (ev->stack.pid != KEV_NONE && ev->stack.tid != 0 &&
            tid_map_get(&d->tids, ev->stack.tid) == KEV_NONE)
                tid_map_set(&d->tids, ev->stack.tid, ev->stack.pid);
        return 0;
}

static int dec_stack_key(struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, stack_key);
        if (pl->len < 16 + (size_t)pl->psize)
                return -EBADMSG;
        ev->type = KEV_STACK_KEY;
        ev->stack_key.event_timestamp = le_get64(pl->p);
        ev->stack_key.pid = le_get32(pl->p + 8);
        ev->stack_key.tid = le_get32(pl->p + 12);
        ev->stack_key.key = ldptr(pl->p + 16, pl->psize);
        ev->stack_key.is_kernel = ev->opcode == (WMI_LOG_TYPE_STACK_KEY_KERNEL & 0xFF);
        ev->pid = ev->stack_key.pid;
        ev->tid = ev->stack_key.tid;
        return 0;
}

static int dec_stack_key_def(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, stack_key_def);
        size_t ps = pl->psize, n;

        if (pl->len < ps)
                return -EBADMSG;
        n = (pl->len - ps) / ps;
        ev->type = KEV_STACK_KEY_DEF;
        ev->stack_key_def.key = ldptr(pl->p, pl->psize);
        ev->stack_key_def.nr_frames = (uint32_t)n;
        ev->stack_key_def.frames = widen_frames(d, pl->p + ps, n, pl->psize);

        const struct ref_slot *slot = ref_key_find(d, ev->stack_key_def.key);

        ev->stack_key_def.nr_resolved = slot ? slot->count : 0;
        return 0;
}

static int dec_lbr(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        KEV_CLEAR(ev, lbr);
        /* _LBR_TRACE_EVENT_DATA (ETL-FORMAT.md 3.11): entries of From, To, Reserved. */
        size_t ps = pl->psize, first = ps == 8 ? 24 : 20, n;

        if (pl->len < first)
                return -EBADMSG;
        n = (pl->len - first) / (3 * ps);
        ev->type = KEV_LBR;
        ev->lbr.event_timestamp = le_get64(pl->p);
        ev->lbr.pid = le_get32(pl->p + 8);
        ev->lbr.tid = le_get32(pl->p + 12);
        ev->lbr.options = le_get32(pl->p + 16);
        for (size_t i = 0; i < n; i++) {
                const uint8_t *e = pl->p + first + i * 3 * ps;

                d->lbr[i].from = ldptr(e, pl->psize);
                d->lbr[i].to = ldptr(e + ps, pl->psize);
                d->lbr_info[i] = ldptr(e + 2 * ps, pl->psize);
        }
        ev->lbr.nr_entries = (uint32_t)n;
        ev->lbr.entries = d->lbr;
        ev->lbr.info = d->lbr_info;
        ev->pid = ev->lbr.pid;
        ev->tid = ev->lbr.tid;
        return 0;
}

/* Decodes the payload into ev by (provider, opcode, version, pointer size). */
/* etwtop's own events (doc/etwtop-provider.md), by their EVENT_DESCRIPTOR Id. A payload longer
   than the version known is fine: fields are only ever appended. */
static const char *own_name(uint16_t id)
{
        switch (id) {
        case 1: return "etwtop/ImageIdentity";
        case 2: return "etwtop/KernelSymbol";
        case 3: return "etwtop/EventsLost";
        case 4: return "etwtop/SessionCpu";
        case 5: return "etwtop/UnwindStats";
        default: return "etwtop/Unknown";
        }
}

static int dec_own(struct kdecoder *d, struct kevent *ev, const struct payload *pl, uint16_t id)
{
        size_t next;
        switch (id) {
        case 1:
                KEV_CLEAR(ev, image_identity);
                if (pl->len < 52)
                        return -EBADMSG;
                ev->type = KEV_IMAGE_IDENTITY;
                ev->image_identity.base = le_get64(pl->p);
                ev->image_identity.size = le_get64(pl->p + 8);
                ev->image_identity.file_offset = le_get64(pl->p + 16);
                ev->image_identity.pid = le_get32(pl->p + 24);
                ev->image_identity.build_id_size = pl->p[28] > 20 ? 20 : pl->p[28];
                ev->image_identity.flags = le_get16(pl->p + 30);
                ev->image_identity.build_id = pl->p + 32;
                ev->image_identity.path = get_ansi(d, pl, 52, &next);
                ev->pid = ev->image_identity.pid;
                return 0;
        case 2:
                KEV_CLEAR(ev, kernel_symbol);
                if (pl->len < 17)
                        return -EBADMSG;
                ev->type = KEV_KERNEL_SYMBOL;
                ev->kernel_symbol.addr = le_get64(pl->p);
                ev->kernel_symbol.size = le_get64(pl->p + 8);
                ev->kernel_symbol.name = get_ansi(d, pl, 16, &next);
                ev->kernel_symbol.module = get_ansi(d, pl, next, &next);
                return 0;
        case 3:
                KEV_CLEAR(ev, events_lost);
                if (pl->len < 16)
                        return -EBADMSG;
                ev->type = KEV_EVENTS_LOST;
                ev->events_lost.cpu = le_get32(pl->p);
                ev->events_lost.reason = le_get32(pl->p + 4);
                ev->events_lost.count = le_get64(pl->p + 8);
                return 0;
        case 4:
                KEV_CLEAR(ev, session_cpu);
                if (pl->len < 16)
                        return -EBADMSG;
                ev->type = KEV_SESSION_CPU;
                ev->session_cpu.cpu = le_get32(pl->p);
                ev->session_cpu.nr_cpus = le_get32(pl->p + 4);
                ev->session_cpu.nr_online = le_get32(pl->p + 8);
                ev->session_cpu.traced_pid = le_get32(pl->p + 12);
                return 0;
        case 5:
                KEV_CLEAR(ev, unwind_stats);
                if (pl->len < 16 + 8 * (KEV_NR_UNWIND_STOPS + 3))
                        return -EBADMSG;
                ev->type = KEV_UNWIND_STATS;
                ev->unwind_stats.mode = le_get32(pl->p);
                ev->unwind_stats.stack_copy_bytes = le_get32(pl->p + 4);
                ev->unwind_stats.nr_walks = le_get64(pl->p + 8);
                for (uint32_t i = 0; i < KEV_NR_UNWIND_STOPS; i++)
                        ev->unwind_stats.nr_by_stop[i] = le_get64(pl->p + 16 + 8 * i);
                {
                        const uint8_t *q = pl->p + 16 + 8 * KEV_NR_UNWIND_STOPS;
                        ev->unwind_stats.nr_fp_chains = le_get64(q);
                        ev->unwind_stats.nr_frames = le_get64(q + 8);
                        ev->unwind_stats.nr_fp_frames = le_get64(q + 16);
                }
                return 0;
        default: return KEV_NO_LAYOUT;
        }
}

/* ---- .NET: the CLR's method and module events (manifest events, told apart by Id) ---- */

/* Microsoft-Windows-DotNETRuntime and Microsoft-Windows-DotNETRuntimeRundown */
static const GUID clr_runtime_guid = {
        0xe13c0d23, 0xccbc, 0x4e12, {0x93, 0x1b, 0xd9, 0xcc, 0x2e, 0xee, 0x27, 0xe4}};
static const GUID clr_rundown_guid = {
        0xa669021c, 0xc450, 0x4609, {0xa0, 0x35, 0x5a, 0xf5, 0x9a, 0xf4, 0xdf, 0x18}};

enum clr_kind { CLR_NONE, CLR_METHOD, CLR_MODULE };

/* The CLR events named here, by provider (is_rundown) and Id: the method and module events
   this decoder reads, and the other well-known ones it names only. */
static const struct clr_event_def {
        bool is_rundown;
        uint16_t id;
        enum clr_kind kind;
        enum kevent_phase phase;
        const char *name;
} clr_events[] = {
        {false, 1, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntime/GCStart"},
        {false, 2, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntime/GCEnd"},
        {false, 3, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntime/GCRestartEEEnd"},
        {false, 4, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntime/GCHeapStats"},
        {false, 5, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntime/GCCreateSegment"},
        {false, 6, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntime/GCFreeSegment"},
        {false, 7, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntime/GCRestartEEBegin"},
        {false, 8, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntime/GCSuspendEEEnd"},
        {false, 9, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntime/GCSuspendEEBegin"},
        {false, 10, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntime/GCAllocationTick"},
        {false, 11, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntime/GCCreateConcurrentThread"},
        {false, 12, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntime/GCTerminateConcurrentThread"},
        {false, 13, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntime/GCFinalizersEnd"},
        {false, 14, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntime/GCFinalizersBegin"},
        {false, 35, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntime/GCTriggered"},
        {false, 80, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntime/ExceptionThrown"},
        {false, 81, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntime/ContentionStart"},
        {false, 82, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntime/ClrStackWalk"},
        {false, 91, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntime/ContentionStop"},
        {false, 141, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntime/MethodLoad"},
        {false, 142, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntime/MethodUnload"},
        {false, 143, CLR_METHOD, KEV_PHASE_START, "DotNETRuntime/MethodLoadVerbose"},
        {false, 144, CLR_METHOD, KEV_PHASE_END, "DotNETRuntime/MethodUnloadVerbose"},
        {false, 145, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntime/MethodJittingStarted"},
        {false, 151, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntime/DomainModuleLoad"},
        {false, 152, CLR_MODULE, KEV_PHASE_START, "DotNETRuntime/ModuleLoad"},
        {false, 153, CLR_MODULE, KEV_PHASE_END, "DotNETRuntime/ModuleUnload"},
        {false, 154, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntime/AssemblyLoad"},
        {false, 155, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntime/AssemblyUnload"},
        {false, 156, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntime/AppDomainLoad"},
        {false, 157, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntime/AppDomainUnload"},
        {false, 187, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntime/RuntimeInformation"},
        {false, 190, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntime/MethodILToNativeMap"},
        {false, 202, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntime/GCMarkWithType"},
        {false, 204, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntime/GCPerHeapHistory"},
        {false, 205, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntime/GCGlobalHeapHistory"},
        {true, 141, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntimeRundown/MethodDCStart"},
        {true, 142, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntimeRundown/MethodDCEnd"},
        {true, 143, CLR_METHOD, KEV_PHASE_DC_START, "DotNETRuntimeRundown/MethodDCStartVerbose"},
        {true, 144, CLR_METHOD, KEV_PHASE_DC_END, "DotNETRuntimeRundown/MethodDCEndVerbose"},
        {true, 145, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntimeRundown/DCStartComplete"},
        {true, 146, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntimeRundown/DCEndComplete"},
        {true, 147, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntimeRundown/DCStartInit"},
        {true, 148, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntimeRundown/DCEndInit"},
        {true, 149, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntimeRundown/MethodDCStartILToNativeMap"},
        {true, 150, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntimeRundown/MethodDCEndILToNativeMap"},
        {true, 151, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntimeRundown/DomainModuleDCStart"},
        {true, 152, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntimeRundown/DomainModuleDCEnd"},
        {true, 153, CLR_MODULE, KEV_PHASE_DC_START, "DotNETRuntimeRundown/ModuleDCStart"},
        {true, 154, CLR_MODULE, KEV_PHASE_DC_END, "DotNETRuntimeRundown/ModuleDCEnd"},
        {true, 155, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntimeRundown/AssemblyDCStart"},
        {true, 156, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntimeRundown/AssemblyDCEnd"},
        {true, 157, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntimeRundown/AppDomainDCStart"},
        {true, 158, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntimeRundown/AppDomainDCEnd"},
        {true, 187, CLR_NONE, KEV_PHASE_NONE, "DotNETRuntimeRundown/RuntimeInformationDCStart"},
};

/* The CLR event of provider g and this Id, or NULL (not a CLR provider, or an Id not here). */
static const struct clr_event_def *clr_event(const GUID *g, uint16_t id)
{
        bool is_rundown;
        if (memcmp(g, &clr_runtime_guid, sizeof(*g)) == 0)
                is_rundown = false;
        else if (memcmp(g, &clr_rundown_guid, sizeof(*g)) == 0)
                is_rundown = true;
        else
                return NULL;
        for (size_t i = 0; i < sizeof(clr_events) / sizeof(clr_events[0]); i++)
                if (clr_events[i].is_rundown == is_rundown && clr_events[i].id == id)
                        return &clr_events[i];
        return NULL;
}

/* MethodLoadVerbose and its kin, every version: MethodID, ModuleID, MethodStartAddress (all
   UInt64), MethodSize, MethodToken, MethodFlags (UInt32), then MethodNamespace, MethodName and
   MethodSignature (UTF-16, NUL-terminated); ClrInstanceID and ReJITID after them are not used. */
static int dec_clr_method(struct kdecoder *d, struct kevent *ev, const struct payload *pl,
                          enum kevent_phase phase)
{
        KEV_CLEAR(ev, clr_method);
        if (pl->len < 42)
                return -EBADMSG;
        size_t next;
        ev->type = KEV_CLR_METHOD;
        ev->clr_method.phase = phase;
        ev->clr_method.pid = ev->pid;
        ev->clr_method.method_id = le_get64(pl->p);
        ev->clr_method.module_id = le_get64(pl->p + 8);
        ev->clr_method.start = le_get64(pl->p + 16);
        ev->clr_method.size = le_get32(pl->p + 24);
        ev->clr_method.token = le_get32(pl->p + 28);
        ev->clr_method.flags = le_get32(pl->p + 32);
        ev->clr_method.name_space = get_utf16(d, pl, 36, &next);
        ev->clr_method.name = get_utf16(d, pl, next, &next);
        ev->clr_method.signature = get_utf16(d, pl, next, &next);
        return 0;
}

/* ModuleLoad and its kin, every version: ModuleID, AssemblyID (UInt64), ModuleFlags, Reserved1
   (UInt32), ModuleILPath, ModuleNativePath (UTF-16); what follows (ClrInstanceID, the PDBs) is
   not used. */
static int dec_clr_module(struct kdecoder *d, struct kevent *ev, const struct payload *pl,
                          enum kevent_phase phase)
{
        KEV_CLEAR(ev, clr_module);
        if (pl->len < 28)
                return -EBADMSG;
        size_t next;
        ev->type = KEV_CLR_MODULE;
        ev->clr_module.phase = phase;
        ev->clr_module.pid = ev->pid;
        ev->clr_module.module_id = le_get64(pl->p);
        ev->clr_module.assembly_id = le_get64(pl->p + 8);
        ev->clr_module.flags = le_get32(pl->p + 16);
        ev->clr_module.il_path = get_utf16(d, pl, 24, &next);
        ev->clr_module.native_path = get_utf16(d, pl, next, &next);
        return 0;
}

static int decode_payload(struct kdecoder *d, enum kprov k, struct kevent *ev,
                          const struct payload *pl)
{
        uint8_t op = ev->opcode;

        switch (k) {
        case KP_PERFINFO:
                switch (op) {
                case PERFINFO_LOG_TYPE_SAMPLED_PROFILE & 0xFF: return dec_sample(d, ev, pl);
                case PERFINFO_LOG_TYPE_PMC_INTERRUPT & 0xFF: return dec_pmc_sample(d, ev, pl);
                case PERFINFO_LOG_TYPE_PMC_CONFIG & 0xFF: return dec_pmc_config(d, ev, pl);
                case PERFINFO_LOG_TYPE_SAMPLED_PROFILE_SET_INTERVAL & 0xFF:
                case PERFINFO_LOG_TYPE_SAMPLED_PROFILE_DC_START & 0xFF:
                case PERFINFO_LOG_TYPE_SAMPLED_PROFILE_DC_END & 0xFF:
                        return dec_profile_interval(d, ev, pl);
                }
                break;
        case KP_STACKWALK:
                switch (op) {
                case WMI_LOG_TYPE_STACKWALK & 0xFF: return dec_stack(d, ev, pl);
                case WMI_LOG_TYPE_STACK_KEY_KERNEL & 0xFF:
                case WMI_LOG_TYPE_STACK_KEY_USER & 0xFF: return dec_stack_key(ev, pl);
                case WMI_LOG_TYPE_STACK_KEY_CREATE & 0xFF:
                case WMI_LOG_TYPE_STACK_KEY_DELETE & 0xFF:
                case WMI_LOG_TYPE_STACK_KEY_RUNDOWN & 0xFF: return dec_stack_key_def(d, ev, pl);
                }
                break;
        case KP_THREAD:
                switch (op) {
                case WMI_LOG_TYPE_CONTEXT_SWAP & 0xFF: return dec_cswitch(d, ev, pl);
                case WMI_LOG_TYPE_READY_THREAD & 0xFF: return dec_ready_thread(d, ev, pl);
                case WMI_LOG_TYPE_THREAD_CREATE & 0xFF:
                case WMI_LOG_TYPE_THREAD_DELETE & 0xFF:
                case WMI_LOG_TYPE_THREAD_DC_START & 0xFF:
                case WMI_LOG_TYPE_THREAD_DC_END & 0xFF: return dec_thread(d, ev, pl);
                case WMI_LOG_TYPE_THREAD_SET_NAME & 0xFF: return dec_thread_name(d, ev, pl);
                }
                break;
        case KP_PROCESS:
                switch (op) {
                case WMI_LOG_TYPE_PROCESS_CREATE & 0xFF:
                case WMI_LOG_TYPE_PROCESS_DELETE & 0xFF:
                case WMI_LOG_TYPE_PROCESS_DC_START & 0xFF:
                case WMI_LOG_TYPE_PROCESS_DC_END & 0xFF:
                case WMI_LOG_TYPE_PROCESS_DEFUNCT & 0xFF: return dec_process(d, ev, pl);
                case WMI_LOG_TYPE_PROCESS_LOAD_IMAGE & 0xFF: return dec_image(d, ev, pl);
                }
                break;
        case KP_IMAGE:
                switch (op) {
                case WMI_LOG_TYPE_IMAGE_LOAD & 0xFF:
                case WMI_LOG_TYPE_IMAGE_UNLOAD & 0xFF:
                case WMI_LOG_TYPE_IMAGE_DC_START & 0xFF:
                case WMI_LOG_TYPE_IMAGE_DC_END & 0xFF: return dec_image(d, ev, pl);
                }
                break;
        case KP_LBR:
                if (op == EVENT_TRACE_LAST_BRANCH_EVENT_OPCODE)
                        return dec_lbr(d, ev, pl);
                break;
        case KP_EVENT_TRACE:
                switch (op) {
                case WMI_LOG_TYPE_HEADER: return dec_trace_header(d, ev, pl);
                case WMI_LOG_TYPE_HEADER_EXTENSION:
                case WMI_LOG_TYPE_GROUP_MASKS_END: return dec_group_mask(ev, pl);
                }
                break;
        case KP_KTC:
                switch (op) {
                case KTC_IMAGE_ID: return dec_image_id(d, ev, pl);
                case KTC_DBGID_NONE:
                case KTC_DBGID_RSDS:
                case KTC_DBGID_ILRSDS:
                case KTC_DBGID_PPDB:
                case KTC_DBGID_DETERM: return dec_dbg_id(d, ev, pl);
                case KTC_FILE_VERSION: return dec_file_version(d, ev, pl);
                }
                break;
        default: break;
        }
        return KEV_NO_LAYOUT;
}

/* ---- the exported interface ---- */

/* Returns a decoder (free with kdecoder_free), or NULL without memory. */
struct kdecoder *kdecoder_new(bool is_raw_timestamp)
{
        struct kdecoder *d = calloc(1, sizeof(*d));

        if (!d)
                return NULL;
        d->is_raw_timestamp = is_raw_timestamp;
        d->str_cap = KEV_STR_ARENA;
        d->str = malloc(d->str_cap);
        d->frames = malloc(KEV_MAX_FRAMES * sizeof(*d->frames));
        d->lbr = malloc(KEV_MAX_LBR * sizeof(*d->lbr));
        d->lbr_info = malloc(KEV_MAX_LBR * sizeof(*d->lbr_info));
        if (!d->str || !d->frames || !d->lbr || !d->lbr_info ||
            tid_map_resize(&d->tids, KEV_TIDS_MIN))
                goto fail;
        return d;
fail:
        kdecoder_free(d);
        return NULL;
}

/* Frees d and everything it owns; NULL and half-built decoders are fine. */
void kdecoder_free(struct kdecoder *d)
{
        if (!d)
                return;
        for (uint32_t i = 0; d->defs && i <= d->defs_mask; i++)
                free(d->defs[i].frames);
        for (int k = 0; k < KP_MAX; k++)
                for (int op = 0; op < 256; op++)
                        free(d->op_names[k][op]);
        tdh_registry_free(d->meta);
        etw_manifests_free(d->manifests);
        free(d->defs);
        free(d->pre);
        free(d->pre_frames);
        free(d->ref_keys);
        free(d->refs);
        free(d->tids.slots);
        free(d->lbr);
        free(d->lbr_info);
        free(d->frames);
        free(d->str);
        free(d);
}

/* See kevent.h. The event and everything it points to live until sink returns; sink must not
   call back into the same decoder. sink may be NULL (the decoder's state still advances). */
/* Keeps what a MetaData EventInfo or EventMapInfo event describes (tdh_meta.c); the event
   itself stays one without a layout. A damaged description is counted short. */
static void meta_take(struct kdecoder *d, uint8_t op, const struct payload *pl)
{
        char err[128];
        int rc;

        if (!d->meta)
                d->meta = tdh_registry_new();
        if (op == KTC_METADATA_EVENT_INFO)
                rc = tdh_registry_add_event_info(d->meta, pl->p, pl->len, err, sizeof(err));
        else
                rc = tdh_registry_add_map_info(d->meta, pl->p, pl->len, err, sizeof(err));
        if (rc)
                d->st.nr_short++;
}

/* An EventSource's ManifestData (Id 0xFFFE, opcode 254): a chunk of its manifest. */
static int manifest_take(struct kdecoder *d, struct kevent *ev, const struct payload *pl,
                         const GUID *g)
{
        char err[160];
        int rc;

        if (!d->meta)
                d->meta = tdh_registry_new();
        if (!d->manifests)
                d->manifests = etw_manifests_new();

        const char *name = etw_manifests_chunk(d->manifests, d->meta, g, pl->p, pl->len, &rc, err,
                                               sizeof(err));

        if (name)
                ev->name = name;
        return rc ? rc : KEV_NO_LAYOUT;
}

/* Decodes ev by the trace's own metadata for it, if the trace described it. A name the decoder
   already gives the event (xperf's, PerfView's) is kept: the metadata adds its fields. */
static int meta_decode(struct kdecoder *d, struct kevent *ev, const struct payload *pl,
                       const GUID *g, uint16_t key, bool is_classic, bool is_named)
{
        const struct tdh_event *e =
                d->meta ? tdh_registry_find(d->meta, g, key, ev->version, is_classic) : NULL;
        const char *name = ev->name;

        if (!e)
                return KEV_NO_LAYOUT;

        int rc = tdh_decode(d->meta, e, d, ev, pl->p, pl->len, pl->psize);

        if (is_named)
                ev->name = name;
        return rc;
}

int kdecoder_decode(struct kdecoder *d, const EVENT_RECORD *rec, kevent_sink_fn sink, void *ctx)
{
        if (!d || !rec)
                return -EINVAL;

        const EVENT_HEADER *h = &rec->EventHeader;
        enum kprov k = kprov_lookup(&h->ProviderId);
        struct kevent ev;
        struct payload pl;
        int rc;

        ev.type = KEV_OTHER;
        ev.provider = &h->ProviderId;
        ev.opcode = h->EventDescriptor.Opcode;
        ev.version = h->EventDescriptor.Version;
        ev.pointer_size = (h->Flags & EVENT_HEADER_FLAG_32_BIT_HEADER) &&
                                          !(h->Flags & EVENT_HEADER_FLAG_64_BIT_HEADER)
                                  ? 4
                                  : 8;
        ev.timestamp = (uint64_t)h->TimeStamp.QuadPart;
        ev.time_ns = session_ns(d, ev.timestamp);
        ev.cpu = rec->BufferContext.ProcessorIndex;
        ev.pid = h->ProcessId;
        ev.tid = h->ThreadId;
        ev.name = event_name(d, k, ev.opcode);
        ev.nr_pmc = 0;
        memset(ev.pmc, 0, sizeof(ev.pmc));
        for (USHORT i = 0; rec->ExtendedData && i < rec->ExtendedDataCount; i++) {
                const EVENT_HEADER_EXTENDED_DATA_ITEM *x = &rec->ExtendedData[i];

                if (x->ExtType != EVENT_HEADER_EXT_TYPE_PMC_COUNTERS || !x->DataPtr)
                        continue;
                uint32_t n = x->DataSize / 8u;

                ev.nr_pmc = n < KEV_MAX_PMC ? n : KEV_MAX_PMC;
                memcpy(ev.pmc, (const void *)(uintptr_t)x->DataPtr, ev.nr_pmc * 8u);
        }

        d->str_len = 0;
        pl.p = rec->UserData;
        pl.len = rec->UserData ? rec->UserDataLength : 0;
        pl.psize = ev.pointer_size;
        if (k == KP_ETWTOP) {
                /* etwtop's events all have opcode 0 and differ by Id: the Id stands in */
                ev.opcode = (uint8_t)h->EventDescriptor.Id;
                ev.name = own_name(h->EventDescriptor.Id);
                rc = dec_own(d, &ev, &pl, h->EventDescriptor.Id);
        } else if (k == KP_UNKNOWN && (h->Flags & EVENT_HEADER_FLAG_CLASSIC_HEADER) == 0) {
                const struct clr_event_def *c = clr_event(&h->ProviderId, h->EventDescriptor.Id);
                if (c)
                        ev.name = c->name;
                if (c && c->kind == CLR_METHOD)
                        rc = dec_clr_method(d, &ev, &pl, c->phase);
                else if (c && c->kind == CLR_MODULE)
                        rc = dec_clr_module(d, &ev, &pl, c->phase);
                else
                        rc = KEV_NO_LAYOUT;
                if (rc == KEV_NO_LAYOUT && h->EventDescriptor.Id == ETW_MANIFEST_DATA_ID &&
                    ev.opcode == ETW_MANIFEST_DATA_OPCODE)
                        rc = manifest_take(d, &ev, &pl, &h->ProviderId);
                else if (rc == KEV_NO_LAYOUT)
                        rc = meta_decode(d, &ev, &pl, &h->ProviderId, h->EventDescriptor.Id, false,
                                         c != NULL);
        } else {
                if (k == KP_METADATA && (ev.opcode == KTC_METADATA_EVENT_INFO ||
                                         ev.opcode == KTC_METADATA_EVENT_MAP_INFO))
                        meta_take(d, ev.opcode, &pl);
                rc = decode_payload(d, k, &ev, &pl);
                if (rc == KEV_NO_LAYOUT && k != KP_UNKNOWN)
                        rc = kevent_mof_decode(d, kprov_table[k].name, &ev, pl.p, pl.len, pl.psize);
                if (rc == KEV_NO_LAYOUT)
                        rc = meta_decode(d, &ev, &pl, &h->ProviderId, ev.opcode, true,
                                         k != KP_UNKNOWN && opcode_name(k, ev.opcode));
        }
        if (rc == -EBADMSG || rc == KEV_NO_LAYOUT) {
                /* The common fields only: drop whatever a decoder had filled in. */
                size_t u = offsetof(struct kevent, trace_header);

                memset((char *)&ev + u, 0, sizeof(ev) - u);
                ev.type = KEV_OTHER;
                ev.pid = h->ProcessId;
                ev.tid = h->ThreadId;
                if (rc == -EBADMSG) {
                        d->st.nr_short++;
                } else {
                        d->st.nr_other++;
                        rc = 0;
                }
        } else {
                d->st.nr_decoded++;
        }

        if (sink)
                sink(ctx, &ev);
        if (ev.type == KEV_STACK_KEY_DEF)
                stack_def_after(d, &ev, sink, ctx);
        else if (ev.type == KEV_STACK_KEY)
                stack_ref_after(d, &ev, sink, ctx);
        return rc;
}

/* Copies the counters; the dropped pending references are not in the public struct. */
void kdecoder_get_stats(const struct kdecoder *d, struct kdecoder_stats *st)
{
        if (!st)
                return;
        if (!d) {
                memset(st, 0, sizeof(*st));
                return;
        }
        *st = d->st;
}
