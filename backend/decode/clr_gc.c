/* SPDX-License-Identifier: MIT */
/* clr_gc.c: owns the .NET runtime's garbage-collector events (Microsoft-Windows-DotNETRuntime,
   GC task) by the templates of its manifest (ClrEtwAll.man), by Id and version, for the traces
   that do not describe them (a PerfView or dotnet-trace recording carries no MetaData); the
   manifest's value maps, named as TraceEvent shows them (Reason="AllocSmall"); GCPerHeapHistory's
   per-generation values, and the bytes of the versions whose template is empty. */
#include "clr_gc.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "kevent_mof.h"
#include "tdh_meta.h"

static const GUID clr_runtime_guid = {
        0xe13c0d23, 0xccbc, 0x4e12, {0x93, 0x1b, 0xd9, 0xcc, 0x2e, 0xee, 0x27, 0xe4}};

int clr_gc_is_runtime(const GUID *g)
{
        return memcmp(g, &clr_runtime_guid, sizeof(*g)) == 0;
}

/* ---- the manifest's value maps (ClrEtwAll.man <maps>, texts from its string table) ---- */

enum gc_map {
        MAP_NONE = 0,
        MAP_REASON,
        MAP_TYPE,
        MAP_SUSPEND,
        MAP_ALLOC_KIND,
        MAP_SEGMENT,
        MAP_ROOT_KIND,
        MAP_HANDLE_KIND,
        NR_MAPS
};

static const char *const gc_reason[] = {"AllocSmall",
                                        "Induced",
                                        "LowMemory",
                                        "Empty",
                                        "AllocLarge",
                                        "OutOfSpaceSmallObjectHeap",
                                        "OutOfSpaceLargeObjectHeap",
                                        "InducedNoForce",
                                        "Stress",
                                        "InducedLowMemory"};
static const char *const gc_type[] = {"NonConcurrentGC", "BackgroundGC", "ForegroundGC"};
static const char *const gc_suspend[] = {
        "SuspendOther",           "SuspendForGC",           "SuspendForAppDomainShutdown",
        "SuspendForCodePitching", "SuspendForShutdown",     "SuspendForDebugger",
        "SuspendForGCPrep",       "SuspendForDebuggerSweep"};
static const char *const gc_alloc_kind[] = {"Small", "Large"};
static const char *const gc_segment[] = {"SmallObjectHeap", "LargeObjectHeap", "ReadOnlyHeap"};
static const char *const gc_root_kind[] = {"Stack", "Finalizer", "Handle",
                                           "Older", "SizedRef",  "Overflow"};
static const char *const gc_handle_kind[] = {"WeakShort", "WeakLong",    "Strong",
                                             "Pinned",    "Variable",    "RefCounted",
                                             "Dependent", "AsyncPinned", "SizedRef"};

#define MAP(n, t)                                                                                  \
        {                                                                                          \
                n, t, sizeof(t) / sizeof(t[0])                                                     \
        }

/* Each map's values are 0, 1, 2... in the manifest: a text per value, in order. */
static const struct {
        const char *name;
        const char *const *texts;
        uint32_t nr;
} gc_maps[NR_MAPS] = {
        [MAP_REASON] = MAP("GCReasonMap", gc_reason),
        [MAP_TYPE] = MAP("GCTypeMap", gc_type),
        [MAP_SUSPEND] = MAP("GCSuspendEEReasonMap", gc_suspend),
        [MAP_ALLOC_KIND] = MAP("GCAllocationKindMap", gc_alloc_kind),
        [MAP_SEGMENT] = MAP("GCSegmentTypeMap", gc_segment),
        [MAP_ROOT_KIND] = MAP("GCRootKindMap", gc_root_kind),
        [MAP_HANDLE_KIND] = MAP("GCHandleKindMap", gc_handle_kind),
};

static const char *map_text(unsigned map, uint64_t v)
{
        if (map == MAP_NONE || map >= NR_MAPS || v >= gc_maps[map].nr)
                return NULL;
        return gc_maps[map].texts[v];
}

const char *clr_gc_map_text(const GUID *provider, const char *map_name, uint64_t v)
{
        if (!clr_gc_is_runtime(provider))
                return NULL;
        for (unsigned m = MAP_NONE + 1; m < NR_MAPS; m++)
                if (strcmp(gc_maps[m].name, map_name) == 0)
                        return map_text(m, v);
        return NULL;
}

void clr_gc_name_reason(struct kdecoder *d, struct kevent *ev)
{
        struct kevent_field *slots = kdecoder_field_slots(d);

        for (uint32_t i = 0;
             ev->type == KEV_FIELDS && ev->fields.list == slots && i < ev->fields.nr; i++) {
                struct kevent_field *f = &slots[i];
                const char *t = strcmp(f->name, "Reason") == 0 && f->kind != KEV_FIELD_STR
                                        ? map_text(MAP_REASON, f->u)
                                        : NULL;
                if (t) {
                        f->kind = KEV_FIELD_STR;
                        f->s = t;
                }
        }
}

/* ---- the templates ---- */

enum gc_type { T_U16, T_U32, T_I32, T_X32, T_U64, T_X64, T_PTR, T_WSTR };

struct gc_field {
        const char *name;
        uint8_t type; /* enum gc_type */
        uint8_t map;  /* enum gc_map */
};

#define G(n, t)                                                                                    \
        {                                                                                          \
                n, t, MAP_NONE                                                                     \
        }
#define GM(n, t, m)                                                                                \
        {                                                                                          \
                n, t, m                                                                            \
        }

/* What follows the template's fields. */
enum gc_tail {
        TAIL_NONE = 0,
        TAIL_PER_HEAP,    /* GCPerHeapHistory_V3's Values: Count structs of 10 pointers */
        TAIL_VALUES,      /* GCGlobalHeap_V4's Values: bytes */
        TAIL_DATA,        /* no template (GCPerHeapHistory before version 3): the payload's bytes */
        TAIL_LOH_COMPACT, /* GCLOHCompact's Values: Count structs, one per heap */
        TAIL_FIT_BUCKET,  /* GCFitBucketInfo's Values: Count structs, one per bucket */
};

/* GCStart, GCStart_V1, GCStart_V2 */
static const struct gc_field gc_start[] = {
        G("Count", T_U32),
        GM("Reason", T_U32, MAP_REASON),
};
static const struct gc_field gc_start_v2[] = {
        G("Count", T_U32),           G("Depth", T_U32),         GM("Reason", T_U32, MAP_REASON),
        GM("Type", T_U32, MAP_TYPE), G("ClrInstanceID", T_U16), G("ClientSequenceNumber", T_U64),
};
/* GCEnd, GCEnd_V1 */
static const struct gc_field gc_end[] = {
        G("Count", T_U32),
        G("Depth", T_U16),
};
static const struct gc_field gc_end_v1[] = {
        G("Count", T_U32),
        G("Depth", T_U32),
        G("ClrInstanceID", T_U16),
};
/* GCNoUserData, GCCreateConcurrentThread, GCTerminateConcurrentThread */
static const struct gc_field gc_no_user_data[] = {
        G("ClrInstanceID", T_U16),
};
/* GCHeapStats, _V1, _V2 */
static const struct gc_field gc_heap_stats[] = {
        G("GenerationSize0", T_X64),
        G("TotalPromotedSize0", T_X64),
        G("GenerationSize1", T_X64),
        G("TotalPromotedSize1", T_X64),
        G("GenerationSize2", T_X64),
        G("TotalPromotedSize2", T_X64),
        G("GenerationSize3", T_X64),
        G("TotalPromotedSize3", T_X64),
        G("FinalizationPromotedSize", T_X64),
        G("FinalizationPromotedCount", T_U64),
        G("PinnedObjectCount", T_U32),
        G("SinkBlockCount", T_U32),
        G("GCHandleCount", T_U32),
        G("ClrInstanceID", T_U16),
        G("GenerationSize4", T_X64),
        G("TotalPromotedSize4", T_X64),
};
/* GCCreateSegment, _V1 */
static const struct gc_field gc_create_segment[] = {
        G("Address", T_X64),
        G("Size", T_X64),
        GM("Type", T_U32, MAP_SEGMENT),
        G("ClrInstanceID", T_U16),
};
/* GCFreeSegment, _V1 */
static const struct gc_field gc_free_segment[] = {
        G("Address", T_X64),
        G("ClrInstanceID", T_U16),
};
/* GCSuspendEE, GCSuspendEE_V1 */
static const struct gc_field gc_suspend_ee[] = {
        GM("Reason", T_U16, MAP_SUSPEND),
};
static const struct gc_field gc_suspend_ee_v1[] = {
        GM("Reason", T_U32, MAP_SUSPEND),
        G("Count", T_U32),
        G("ClrInstanceID", T_U16),
};
/* GCAllocationTick, _V1 ... _V4 */
static const struct gc_field gc_allocation_tick[] = {
        G("AllocationAmount", T_X32), GM("AllocationKind", T_U32, MAP_ALLOC_KIND),
        G("ClrInstanceID", T_U16),    G("AllocationAmount64", T_X64),
        G("TypeID", T_PTR),           G("TypeName", T_WSTR),
        G("HeapIndex", T_U32),        G("Address", T_PTR),
        G("ObjectSize", T_U64),
};
/* GCFinalizersEnd, _V1 */
static const struct gc_field gc_finalizers_end[] = {
        G("Count", T_U32),
        G("ClrInstanceID", T_U16),
};
/* FinalizeObject */
static const struct gc_field finalize_object[] = {
        G("TypeID", T_PTR),
        G("ObjectID", T_PTR),
        G("ClrInstanceID", T_U16),
};
/* SetGCHandle */
static const struct gc_field set_gc_handle[] = {
        G("HandleID", T_PTR),   G("ObjectID", T_PTR),    GM("Kind", T_U32, MAP_HANDLE_KIND),
        G("Generation", T_U32), G("AppDomainID", T_X64), G("ClrInstanceID", T_U16),
};
/* DestroyGCHandle */
static const struct gc_field destroy_gc_handle[] = {
        G("HandleID", T_PTR),
        G("ClrInstanceID", T_U16),
};
/* PinObjectAtGCTime */
static const struct gc_field pin_object_at_gc_time[] = {
        G("HandleID", T_PTR),  G("ObjectID", T_PTR),      G("ObjectSize", T_U64),
        G("TypeName", T_WSTR), G("ClrInstanceID", T_U16),
};
/* GCTriggered */
static const struct gc_field gc_triggered[] = {
        GM("Reason", T_U32, MAP_REASON),
        G("ClrInstanceID", T_U16),
};
/* IncreaseMemoryPressure, DecreaseMemoryPressure */
static const struct gc_field increase_memory_pressure[] = {
        G("BytesAllocated", T_U64),
        G("ClrInstanceID", T_U16),
};
static const struct gc_field decrease_memory_pressure[] = {
        G("BytesFreed", T_U64),
        G("ClrInstanceID", T_U16),
};
/* GCMarkWithType */
static const struct gc_field gc_mark_with_type[] = {
        G("HeapNum", T_U32),
        G("ClrInstanceID", T_U16),
        GM("Type", T_U32, MAP_ROOT_KIND),
        G("Bytes", T_U64),
};
/* GCJoin_V2 */
static const struct gc_field gc_join_v2[] = {
        G("Heap", T_U32),          G("JoinTime", T_U32), G("JoinType", T_U32),
        G("ClrInstanceID", T_U16), G("JoinID", T_U32),
};
/* GCPerHeapHistory_V3 (its Values follow: TAIL_PER_HEAP) */
static const struct gc_field gc_per_heap_history_v3[] = {
        G("ClrInstanceID", T_U16),
        G("FreeListAllocated", T_PTR),
        G("FreeListRejected", T_PTR),
        G("EndOfSegAllocated", T_PTR),
        G("CondemnedAllocated", T_PTR),
        G("PinnedAllocated", T_PTR),
        G("PinnedAllocatedAdvance", T_PTR),
        G("RunningFreeListEfficiency", T_U32),
        G("CondemnReasons0", T_U32),
        G("CondemnReasons1", T_U32),
        G("CompactMechanisms", T_U32),
        G("ExpandMechanisms", T_U32),
        G("HeapIndex", T_U32),
        G("ExtraGen0Commit", T_PTR),
        G("Count", T_U32),
};
/* GCGlobalHeap_V2, _V3, _V4 (V4's Values follow: TAIL_VALUES). Reason has no map in the
   manifest; TraceEvent reads it as a GCReason, as GCStart's. */
static const struct gc_field gc_global_heap[] = {
        G("FinalYoungestDesired", T_X64), G("NumHeaps", T_I32),
        G("CondemnedGeneration", T_U32),  G("Gen0ReductionCount", T_U32),
        GM("Reason", T_U32, MAP_REASON),  G("GlobalMechanisms", T_U32),
        G("ClrInstanceID", T_U16),        G("PauseMode", T_U32),
        G("MemoryPressure", T_U32),       G("CondemnReasons0", T_U32),
        G("CondemnReasons1", T_U32),      G("Count", T_U32),
};

/* GCLOHCompact (its Values follow: TAIL_LOH_COMPACT) */
static const struct gc_field gc_loh_compact[] = {
        G("ClrInstanceID", T_U16),
        G("Count", T_U16),
};
/* GCFitBucketInfo (its Values follow: TAIL_FIT_BUCKET) */
static const struct gc_field gc_fit_bucket_info[] = {
        G("ClrInstanceID", T_U16),
        G("BucketKind", T_U16),
        G("TotalSize", T_U64),
        G("Count", T_U16),
};

/* GCPerHeapHistory_V3's struct Values, one per generation */
static const char *const per_heap_members[] = {
        "SizeBefore",
        "FreeListBefore",
        "FreeObjBefore",
        "SizeAfter",
        "FreeListAfter",
        "FreeObjAfter",
        "In",
        "PinnedSurv",
        "NonePinnedSurv",
        "NewAllocation",
};
#define NR_PER_HEAP_MEMBERS 10u

struct gc_event {
        uint16_t id;
        uint8_t min_version, max_version;
        const char *name; /* for the Ids clr.c does not name */
        const struct gc_field *fields;
        uint8_t nr_fields; /* the first nr_fields of fields */
        uint8_t tail;      /* enum gc_tail */
};

#define E(id, lo, hi, name, f, n, tail)                                                            \
        {                                                                                          \
                id, lo, hi, "DotNETRuntime/" name, f, n, tail                                      \
        }
#define NFIELDS(f) (uint8_t)(sizeof(f) / sizeof((f)[0]))

/* By Id, then version (sorted): the manifest's event list (a template per version). */
static const struct gc_event gc_events[] = {
        E(1, 0, 0, "GCStart", gc_start, 2, TAIL_NONE),
        E(1, 1, 1, "GCStart", gc_start_v2, 5, TAIL_NONE),
        E(1, 2, 255, "GCStart", gc_start_v2, 6, TAIL_NONE),
        E(2, 0, 0, "GCEnd", gc_end, 2, TAIL_NONE),
        E(2, 1, 255, "GCEnd", gc_end_v1, 3, TAIL_NONE),
        E(3, 0, 0, "GCRestartEEEnd", gc_no_user_data, 0, TAIL_NONE),
        E(3, 1, 255, "GCRestartEEEnd", gc_no_user_data, 1, TAIL_NONE),
        E(4, 0, 0, "GCHeapStats", gc_heap_stats, 13, TAIL_NONE),
        E(4, 1, 1, "GCHeapStats", gc_heap_stats, 14, TAIL_NONE),
        E(4, 2, 255, "GCHeapStats", gc_heap_stats, 16, TAIL_NONE),
        E(5, 0, 0, "GCCreateSegment", gc_create_segment, 3, TAIL_NONE),
        E(5, 1, 255, "GCCreateSegment", gc_create_segment, 4, TAIL_NONE),
        E(6, 0, 0, "GCFreeSegment", gc_free_segment, 1, TAIL_NONE),
        E(6, 1, 255, "GCFreeSegment", gc_free_segment, 2, TAIL_NONE),
        E(7, 0, 0, "GCRestartEEBegin", gc_no_user_data, 0, TAIL_NONE),
        E(7, 1, 255, "GCRestartEEBegin", gc_no_user_data, 1, TAIL_NONE),
        E(8, 0, 0, "GCSuspendEEEnd", gc_no_user_data, 0, TAIL_NONE),
        E(8, 1, 255, "GCSuspendEEEnd", gc_no_user_data, 1, TAIL_NONE),
        E(9, 0, 0, "GCSuspendEEBegin", gc_suspend_ee, 1, TAIL_NONE),
        E(9, 1, 255, "GCSuspendEEBegin", gc_suspend_ee_v1, 3, TAIL_NONE),
        E(10, 0, 0, "GCAllocationTick", gc_allocation_tick, 2, TAIL_NONE),
        E(10, 1, 1, "GCAllocationTick", gc_allocation_tick, 3, TAIL_NONE),
        E(10, 2, 2, "GCAllocationTick", gc_allocation_tick, 7, TAIL_NONE),
        E(10, 3, 3, "GCAllocationTick", gc_allocation_tick, 8, TAIL_NONE),
        E(10, 4, 255, "GCAllocationTick", gc_allocation_tick, 9, TAIL_NONE),
        E(11, 0, 0, "GCCreateConcurrentThread", gc_no_user_data, 0, TAIL_NONE),
        E(11, 1, 255, "GCCreateConcurrentThread", gc_no_user_data, 1, TAIL_NONE),
        E(12, 0, 0, "GCTerminateConcurrentThread", gc_no_user_data, 0, TAIL_NONE),
        E(12, 1, 255, "GCTerminateConcurrentThread", gc_no_user_data, 1, TAIL_NONE),
        E(13, 0, 0, "GCFinalizersEnd", gc_finalizers_end, 1, TAIL_NONE),
        E(13, 1, 255, "GCFinalizersEnd", gc_finalizers_end, 2, TAIL_NONE),
        E(14, 0, 0, "GCFinalizersBegin", gc_no_user_data, 0, TAIL_NONE),
        E(14, 1, 255, "GCFinalizersBegin", gc_no_user_data, 1, TAIL_NONE),
        E(29, 0, 255, "FinalizeObject", finalize_object, 3, TAIL_NONE),
        E(30, 0, 255, "SetGCHandle", set_gc_handle, 6, TAIL_NONE),
        E(31, 0, 255, "DestroyGCHandle", destroy_gc_handle, 2, TAIL_NONE),
        E(33, 0, 255, "PinObjectAtGCTime", pin_object_at_gc_time, 5, TAIL_NONE),
        E(35, 0, 255, "GCTriggered", gc_triggered, 2, TAIL_NONE),
        E(200, 0, 255, "IncreaseMemoryPressure", increase_memory_pressure, 2, TAIL_NONE),
        E(201, 0, 255, "DecreaseMemoryPressure", decrease_memory_pressure, 2, TAIL_NONE),
        E(202, 0, 255, "GCMarkWithType", gc_mark_with_type, 4, TAIL_NONE),
        E(203, 2, 255, "GCJoin", gc_join_v2, 5, TAIL_NONE),
        E(204, 0, 2, "GCPerHeapHistory", gc_per_heap_history_v3, 0, TAIL_DATA),
        E(204, 3, 255, "GCPerHeapHistory", gc_per_heap_history_v3, 15, TAIL_PER_HEAP),
        E(205, 2, 2, "GCGlobalHeapHistory", gc_global_heap, 9, TAIL_NONE),
        E(205, 3, 3, "GCGlobalHeapHistory", gc_global_heap, 11, TAIL_NONE),
        E(205, 4, 255, "GCGlobalHeapHistory", gc_global_heap, 12, TAIL_VALUES),
        E(208, 0, 255, "GCLOHCompact", gc_loh_compact, 2, TAIL_LOH_COMPACT),
        E(209, 0, 255, "GCFitBucketInfo", gc_fit_bucket_info, 4, TAIL_FIT_BUCKET),
};

#define NR_GC_EVENTS (sizeof(gc_events) / sizeof(gc_events[0]))
#define GC_MAX_ID    255
_Static_assert(NR_GC_EVENTS < 255, "gc_first's entries are 8 bits");

/* The first event of each Id (its index + 1, 0 for none): every runtime event not decoded by
   clr.c asks (a binary search each was 2 M instructions of the x64 sample). */
static uint8_t gc_first[GC_MAX_ID + 1];
static pthread_once_t gc_first_once = PTHREAD_ONCE_INIT;

static void gc_first_build(void)
{
        for (size_t i = NR_GC_EVENTS; i-- > 0;)
                if (gc_events[i].id <= GC_MAX_ID)
                        gc_first[gc_events[i].id] = (uint8_t)(i + 1);
}

static const struct gc_event *gc_event_find(uint16_t id, uint8_t version)
{
        if (id > GC_MAX_ID)
                return NULL;
        pthread_once(&gc_first_once, gc_first_build);
        for (size_t i = gc_first[id]; i && i <= NR_GC_EVENTS && gc_events[i - 1].id == id; i++)
                if (version >= gc_events[i - 1].min_version &&
                    version <= gc_events[i - 1].max_version)
                        return &gc_events[i - 1];
        return NULL;
}

/* ---- decoding ---- */

struct gc_dec {
        struct kdecoder *d;
        const struct payload *pl;
        size_t at;
        struct kevent_field *out;
        uint32_t nr;
};

static struct kevent_field *next_field(struct gc_dec *x, const char *name)
{
        struct kevent_field *f = &x->out[x->nr < KEV_MAX_FIELDS ? x->nr++ : KEV_MAX_FIELDS - 1];
        f->name = name;
        f->kind = KEV_FIELD_UINT;
        f->u = 0;
        f->s = "";
        return f;
}

/* The next n bytes, or NULL past the payload's end. */
static const uint8_t *take(struct gc_dec *x, size_t n)
{
        if (x->at > x->pl->len || n > x->pl->len - x->at)
                return NULL;
        const uint8_t *q = x->pl->p + x->at;
        x->at += n;
        return q;
}

/* Decodes one field. Returns 0, or -EBADMSG past the payload's end. */
static int gc_field(struct gc_dec *x, const struct gc_field *g)
{
        static const uint8_t sizes[] = {[T_U16] = 2, [T_U32] = 4, [T_I32] = 4, [T_X32] = 4,
                                        [T_U64] = 8, [T_X64] = 8, [T_PTR] = 0, [T_WSTR] = 0};
        struct kevent_field *f = next_field(x, g->name);
        const uint8_t *q;

        if (g->type == T_WSTR) {
                if (x->at >= x->pl->len)
                        return -EBADMSG;
                f->kind = KEV_FIELD_STR;
                f->s = kstr_utf16(x->d, x->pl, x->at, &x->at);
                return 0;
        }
        size_t n = g->type == T_PTR ? x->pl->psize : sizes[g->type];
        if (!(q = take(x, n)))
                return -EBADMSG;
        switch (n) {
        case 2: f->u = le_get16(q); break;
        case 4: f->u = le_get32(q); break;
        default: f->u = le_get64(q); break;
        }
        if (g->type == T_I32) {
                f->u = (uint64_t)(int64_t)(int32_t)f->u;
                f->kind = KEV_FIELD_INT;
        } else if (g->type == T_X32 || g->type == T_X64 || g->type == T_PTR) {
                f->kind = KEV_FIELD_HEX;
        }
        const char *t = map_text(g->map, f->u);
        if (t) {
                f->kind = KEV_FIELD_STR;
                f->s = t;
        }
        return 0;
}

/* "0x1f" at out (19 bytes at most); returns its length. */
static size_t put_hex(char *out, uint64_t v)
{
        char tmp[20];
        char *end = tmp + sizeof(tmp), *p = end;
        do {
                *--p = "0123456789abcdef"[v & 15];
                v >>= 4;
        } while (v);
        *--p = 'x';
        *--p = '0';
        memcpy(out, p, (size_t)(end - p));
        return (size_t)(end - p);
}

#define ARRAY_SHOWN 8 /* elements of an array a field shows, as tdh_meta.c's */

/* GCPerHeapHistory_V3's Values: count structs of 10 pointers, one per generation, shown as a
   field per member with its value in each generation, "SizeBefore=[0x..,0x..,...]". */
static int per_heap_values(struct gc_dec *x, uint64_t count)
{
        size_t psize = x->pl->psize, stride = NR_PER_HEAP_MEMBERS * psize;
        const uint8_t *q;

        if (count > x->pl->len || !(q = take(x, (size_t)count * stride)))
                return -EBADMSG;
        uint64_t shown = count < ARRAY_SHOWN ? count : ARRAY_SHOWN;
        for (unsigned m = 0; m < NR_PER_HEAP_MEMBERS; m++) {
                char buf[ARRAY_SHOWN * 20 + 32];
                size_t o = 0;
                buf[o++] = '[';
                for (uint64_t k = 0; k < shown; k++) {
                        const uint8_t *v = q + k * stride + m * psize;
                        if (k)
                                buf[o++] = ',';
                        o += put_hex(buf + o, psize == 8 ? le_get64(v) : le_get32(v));
                }
                if (count > shown)
                        o += (size_t)snprintf(buf + o, sizeof(buf) - o, ",...(%llu)",
                                              (unsigned long long)count);
                buf[o++] = ']';
                buf[o] = 0;
                struct kevent_field *f = next_field(x, per_heap_members[m]);
                f->kind = KEV_FIELD_STR;
                f->u = count;
                f->s = kdecoder_arena_copy(x->d, buf);
        }
        return 0;
}

static void rest_as_bytes(struct gc_dec *x, const char *length_name, const char *name);

/* A member of a struct of Values: its type (T_U16, T_U32 or T_PTR) and its byte offset in the
   manifest's packed layout and in the runtime's C struct, for 4- and 8-byte pointers. */
struct gc_member {
        const char *name;
        uint8_t type;
        uint8_t packed[2], padded[2]; /* [0] 4-byte pointers, [1] 8-byte */
};

struct gc_struct {
        const struct gc_member *members;
        uint8_t nr;
        uint8_t packed[2], padded[2]; /* the struct's size */
};

/* GCLOHCompact's Values (ClrEtwAll.man), as the runtime fires them: its etw_loh_compact_info,
   three uint32_t and two size_t, with 4 bytes of padding before the size_t on 64 bits. */
static const struct gc_member loh_compact_members[] = {
        {"TimePlan", T_U32, {0, 0}, {0, 0}},     {"TimeCompact", T_U32, {4, 4}, {4, 4}},
        {"TimeRelocate", T_U32, {8, 8}, {8, 8}}, {"TotalRefs", T_PTR, {12, 12}, {12, 16}},
        {"ZeroRefs", T_PTR, {16, 20}, {16, 24}},
};
static const struct gc_struct loh_compact_values = {loh_compact_members, 5, {20, 28}, {20, 32}};

/* GCFitBucketInfo's Values: the runtime's etw_bucket_info, a uint16_t, a uint32_t and a size_t,
   with 2 bytes of padding after the uint16_t. */
static const struct gc_member fit_bucket_members[] = {
        {"Index", T_U16, {0, 0}, {0, 0}},
        {"Count", T_U32, {2, 2}, {4, 4}},
        {"Size", T_PTR, {6, 6}, {8, 8}},
};
static const struct gc_struct fit_bucket_values = {fit_bucket_members, 3, {10, 14}, {12, 16}};

/* Values: count structs of s, shown as a field per member with its value in each struct,
   "TimePlan=[12,7]" (pointers in hex), as GCPerHeapHistory's. The runtime writes its C structs
   as they are in memory, padding included, where the manifest's template packs the members:
   the layout is the one whose size agrees with the payload's rest, and a rest that agrees with
   neither is shown as bytes. */
static int struct_values(struct gc_dec *x, uint64_t count, const struct gc_struct *s)
{
        unsigned w = x->pl->psize == 8;
        size_t rest = x->at < x->pl->len ? x->pl->len - x->at : 0;
        bool is_padded = count * s->padded[w] == rest;

        if (!is_padded && count * s->packed[w] != rest) {
                rest_as_bytes(x, "ValuesLength", "Values");
                return 0;
        }

        size_t stride = is_padded ? s->padded[w] : s->packed[w];
        const uint8_t *q = take(x, rest);
        uint64_t shown = count < ARRAY_SHOWN ? count : ARRAY_SHOWN;

        if (!q)
                return -EBADMSG;
        for (unsigned m = 0; m < s->nr; m++) {
                const struct gc_member *g = &s->members[m];
                size_t at = is_padded ? g->padded[w] : g->packed[w];
                char buf[ARRAY_SHOWN * 21 + 32];
                size_t o = 0;

                buf[o++] = '[';
                for (uint64_t k = 0; k < shown; k++) {
                        const uint8_t *v = q + k * stride + at;

                        if (k)
                                buf[o++] = ',';
                        if (g->type == T_U16)
                                o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%u",
                                                      (unsigned)le_get16(v));
                        else if (g->type == T_U32)
                                o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%u",
                                                      (unsigned)le_get32(v));
                        else
                                o += put_hex(buf + o, w ? le_get64(v) : le_get32(v));
                }
                if (count > shown)
                        o += (size_t)snprintf(buf + o, sizeof(buf) - o, ",...(%llu)",
                                              (unsigned long long)count);
                buf[o++] = ']';
                buf[o] = 0;
                struct kevent_field *f = next_field(x, g->name);
                f->kind = KEV_FIELD_STR;
                f->u = count;
                f->s = kdecoder_arena_copy(x->d, buf);
        }
        return 0;
}

/* The rest of the payload as two fields: name_length=N and name=0x... (64 bytes at most, then
   "...", as tdh_meta.c shows binary). */
static void rest_as_bytes(struct gc_dec *x, const char *length_name, const char *name)
{
        size_t n = x->at < x->pl->len ? x->pl->len - x->at : 0;
        size_t shown = n < 64 ? n : 64;
        char buf[2 * 64 + 8];
        size_t o = 0;
        struct kevent_field *f = next_field(x, length_name);

        f->u = n;
        buf[o++] = '0';
        buf[o++] = 'x';
        for (size_t i = 0; i < shown; i++) {
                buf[o++] = "0123456789ABCDEF"[x->pl->p[x->at + i] >> 4];
                buf[o++] = "0123456789ABCDEF"[x->pl->p[x->at + i] & 15];
        }
        if (shown < n) {
                memcpy(buf + o, "...", 3);
                o += 3;
        }
        buf[o] = 0;
        f = next_field(x, name);
        f->kind = KEV_FIELD_STR;
        f->s = kdecoder_arena_copy(x->d, buf);
        x->at = x->pl->len;
}

static void gc_finish(struct kevent *ev, struct gc_dec *x)
{
        ev->type = KEV_FIELDS;
        ev->fields.nr = x->nr;
        ev->fields.list = x->out;
        ev->fields.lazy = NULL;
}

int clr_gc_decode(struct kdecoder *d, struct kevent *ev, const struct payload *pl, uint16_t id)
{
        if (!clr_gc_is_runtime(ev->provider))
                return KEV_NO_LAYOUT;

        const struct gc_event *e = gc_event_find(id, ev->version);

        if (!e || (d->meta && tdh_registry_find(d->meta, ev->provider, id, ev->version, false)))
                return KEV_NO_LAYOUT;

        struct gc_dec x = {.d = d, .pl = pl, .out = kdecoder_field_slots(d)};

        for (unsigned i = 0; i < e->nr_fields; i++) {
                int rc = gc_field(&x, &e->fields[i]);
                if (rc)
                        return rc;
        }
        if (e->tail == TAIL_PER_HEAP) {
                int rc = per_heap_values(&x, x.out[x.nr - 1].u);
                if (rc)
                        return rc;
        } else if (e->tail == TAIL_LOH_COMPACT || e->tail == TAIL_FIT_BUCKET) {
                int rc = struct_values(&x, x.out[x.nr - 1].u,
                                       e->tail == TAIL_LOH_COMPACT ? &loh_compact_values
                                                                   : &fit_bucket_values);
                if (rc)
                        return rc;
        } else if (e->tail == TAIL_VALUES) {
                rest_as_bytes(&x, "ValuesLength", "Values");
        } else if (e->tail == TAIL_DATA) {
                rest_as_bytes(&x, "DataLength", "Data");
        }
        if (!ev->name || !ev->name[0])
                ev->name = e->name;
        gc_finish(ev, &x);
        return 0;
}

int clr_gc_decode_bytes(struct kdecoder *d, struct kevent *ev, const struct payload *pl)
{
        struct gc_dec x = {.d = d, .pl = pl, .out = kdecoder_field_slots(d)};

        rest_as_bytes(&x, "DataLength", "Data");
        gc_finish(ev, &x);
        return 0;
}
