/* SPDX-License-Identifier: MIT */
/* clr.c: owns the .NET runtime's events: the CLR method and module events
   (manifest events, told apart by Id) and the names of the other well-known ones. */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "clr_gc.h"
#include "kdecoder_int.h"

/* Microsoft-Windows-DotNETRuntime and Microsoft-Windows-DotNETRuntimeRundown */
static const GUID clr_runtime_guid = {
        0xe13c0d23, 0xccbc, 0x4e12, {0x93, 0x1b, 0xd9, 0xcc, 0x2e, 0xee, 0x27, 0xe4}};
static const GUID clr_rundown_guid = {
        0xa669021c, 0xc450, 0x4609, {0xa0, 0x35, 0x5a, 0xf5, 0x9a, 0xf4, 0xdf, 0x18}};

/* The CLR events named here, by provider (is_rundown) and Id, sorted by both: the method and module
   events this decoder reads, and the other well-known ones it names only. */
static const struct clr_event_def clr_events[] = {
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

/* clr_events by provider (0 the runtime, 1 rundown) and Id: the index + 1, 0 for none; every Id
   of the table is below 256. Built once. */
static uint8_t clr_by_id[2][256];
static pthread_once_t clr_by_id_once = PTHREAD_ONCE_INIT;

static void clr_by_id_build(void)
{
        _Static_assert(sizeof(clr_events) / sizeof(clr_events[0]) < 255, "index fits a byte");
        for (size_t i = 0; i < sizeof(clr_events) / sizeof(clr_events[0]); i++)
                if (clr_events[i].id < 256)
                        clr_by_id[clr_events[i].is_rundown][clr_events[i].id] = (uint8_t)(i + 1);
}

uint32_t clr_provider_rank(const GUID *g)
{
        uint32_t rank = 0;
        if (memcmp(g, &clr_runtime_guid, sizeof(*g)) == 0)
                rank = 1;
        else if (memcmp(g, &clr_rundown_guid, sizeof(*g)) == 0)
                rank = 2;
        /* the table by Id is built before any rank that indexes it is given out */
        if (rank)
                pthread_once(&clr_by_id_once, clr_by_id_build);
        return rank;
}

const struct clr_event_def *clr_event_find(uint32_t rank, uint16_t id)
{
        if (!rank || id >= 256)
                return NULL;
        unsigned i = clr_by_id[rank - 1][id];
        return i ? &clr_events[i - 1] : NULL;
}

/* kevent_lazy_names' get: the three names made in the record's arena at the first ask. */
static void clr_names_get(struct kevent_lazy_names *base, struct kevent_clr_names *names)
{
        struct kdecoder_lazy_names *l = (struct kdecoder_lazy_names *)base;

        if (l->state == LAZY_ARMED) {
                size_t next;
                l->names.name_space = kstr_utf16(l->d, &l->pl, l->off, &next);
                l->names.name = kstr_utf16(l->d, &l->pl, next, &next);
                l->names.signature = kstr_utf16(l->d, &l->pl, next, &next);
                l->state = LAZY_DONE;
        }
        if (l->state == LAZY_DONE) {
                *names = l->names;
        } else {
                names->name_space = "";
                names->name = "";
                names->signature = "";
        }
}

/* MethodLoadVerbose and its kin, every version: MethodID, ModuleID, MethodStartAddress (all
   UInt64), MethodSize, MethodToken, MethodFlags (UInt32), then MethodNamespace, MethodName and
   MethodSignature (UTF-16, NUL-terminated), made when a consumer asks for them; ClrInstanceID
   and ReJITID after them are not used. */
static int dec_clr_method(struct kdecoder *d, struct kevent *ev, const struct payload *pl,
                          enum kevent_phase phase)
{
        KEV_CLEAR(ev, clr_method);
        if (pl->len < 42)
                return -EBADMSG;
        ev->type = KEV_CLR_METHOD;
        ev->clr_method.phase = phase;
        ev->clr_method.pid = ev->pid;
        ev->clr_method.method_id = le_get64(pl->p);
        ev->clr_method.module_id = le_get64(pl->p + 8);
        ev->clr_method.start = le_get64(pl->p + 16);
        ev->clr_method.size = le_get32(pl->p + 24);
        ev->clr_method.token = le_get32(pl->p + 28);
        ev->clr_method.flags = le_get32(pl->p + 32);
        /* the names when asked for (kevent_clr_method_names) */
        struct kdecoder_lazy_names *l = &d->lazy_names;
        l->base.get = clr_names_get;
        l->d = d;
        l->pl = *pl;
        l->off = 36;
        l->state = LAZY_ARMED;
        ev->clr_method.lazy = &l->base;
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
        ev->clr_module.il_path = kstr_utf16(d, pl, 24, &next);
        ev->clr_module.native_path = kstr_utf16(d, pl, next, &next);
        return 0;
}

int clr_decode(struct kdecoder *d, const struct clr_event_def *c, struct kevent *ev,
               const struct payload *pl)
{
        switch (c->kind) {
        case CLR_METHOD: return dec_clr_method(d, ev, pl, c->phase);
        case CLR_MODULE: return dec_clr_module(d, ev, pl, c->phase);
        default: return c->is_rundown ? KEV_NO_LAYOUT : clr_gc_decode(d, ev, pl, c->id);
        }
}
