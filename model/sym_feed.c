/* SPDX-License-Identifier: MIT */
/* sym_feed.c: owns turning decoded process and image events into symbol-store calls. Each call
   carries its event's timestamp: a live session's events come one CPU buffer after another, and
   the store orders what they say by time (symbols.h, "Event times"). */
#include "model/sym_feed.h"

#include <stdio.h>
#include <stdlib.h>

#include "symbols/kernel_running.h"
#include "symbols/symbols.h"
#include "util/xalloc.h"
#include <string.h>

/* An ImageIdentity whose Image has not come yet. */
struct identity {
        bool is_held;
        uint32_t pid;
        uint64_t base;
        uint64_t file_offset;
        uint8_t build_id[20];
        uint32_t build_id_size;
        uint32_t seq; /* when it was held: the oldest of a set gives way */
};

/* Held by their mapping in sets of IDENTITY_WAYS (a mapping's set by its pid and base): 1,024 at
   once. Where one CPU's buffer ends between an identity and its Image, the pair's Image comes
   with that CPU's next buffer, after the other CPUs' buffers: each may hold some 300 other
   pairs (a build's compilers starting), past the 32 held in a ring before (symbols_live failed
   once so beside the CI's warnings build, sym_cxx+0x1ed: its code placed a page off). */
#define IDENTITY_SETS 256u
#define IDENTITY_WAYS 4u

struct sym_feed {
        struct sym_store *store; /* borrowed */
        /* etwtop writes ImageIdentity just before its Image event: each held until that comes.
           Several at once: a live session's CPU buffers come one after another, so where one
           CPU's buffer ends between the two, another CPU's pairs come in between (a program
           starting on each CPU) */
        struct identity ids[IDENTITY_SETS * IDENTITY_WAYS];
        uint32_t nr_ids_seen; /* the seq of the next one held */
        uint32_t nr_held;     /* of ids, those is_held: most often none (each Image takes its
                                 identity at once), and then none is looked for */
        /* Windows' merge writes DbgID_RSDS just before the Image event it describes: held
           until that comes */
        bool has_pdb;
        uint32_t pdb_pid;
        uint64_t pdb_base;
        uint8_t pdb_guid[16];
        uint32_t pdb_age;
        char pdb_name[260];
        /* the recorded kernel's build-id (its [kernel.kallsyms] image), and whether the trace
           recorded its kernel symbols (a recording cut short has none: sym_feed_end) */
        uint8_t kernel_build_id[20];
        uint32_t kernel_build_id_size;
        bool has_kernel_symbols;
        bool is_kernel_asked; /* sym_feed_end looked at the running kernel */
};

struct sym_feed *sym_feed_new(struct sym_store *store)
{
        struct sym_feed *f = xcalloc(1, sizeof(*f));
        f->store = store;
        return f;
}

void sym_feed_free(struct sym_feed *f)
{
        free(f);
}

/* The set of the mapping at base of pid: its first way. */
static struct identity *identity_set(struct sym_feed *f, uint32_t pid, uint64_t base)
{
        uint64_t x = (base ^ (uint64_t)pid << 40) * 0x9e3779b97f4a7c15ull;
        return &f->ids[((x >> 40) & (IDENTITY_SETS - 1)) * IDENTITY_WAYS];
}

/* The identity held for the mapping at base of pid, or NULL. */
static struct identity *identity_held(struct sym_feed *f, uint32_t pid, uint64_t base)
{
        if (!f->nr_held)
                return NULL;
        struct identity *set = identity_set(f, pid, base);
        for (uint32_t i = 0; i < IDENTITY_WAYS; i++)
                if (set[i].is_held && set[i].pid == pid && set[i].base == base)
                        return &set[i];
        return NULL;
}

/* Holds ev's identity until its Image comes: in place of an earlier one of the same mapping,
   else of a free way of its set, else of the set's oldest (one whose Image never came: a
   recording cut between the two). */
static void identity_hold(struct sym_feed *f, const struct kevent *ev)
{
        struct identity *id = identity_held(f, ev->image_identity.pid, ev->image_identity.base);
        if (!id) {
                struct identity *set =
                        identity_set(f, ev->image_identity.pid, ev->image_identity.base);
                id = &set[0];
                for (uint32_t i = 0; i < IDENTITY_WAYS && id->is_held; i++)
                        if (!set[i].is_held || set[i].seq - id->seq > UINT32_MAX / 2)
                                id = &set[i];
        }
        f->nr_held += !id->is_held;
        id->is_held = true;
        id->seq = f->nr_ids_seen++;
        id->pid = ev->image_identity.pid;
        id->base = ev->image_identity.base;
        id->file_offset = ev->image_identity.file_offset;
        id->build_id_size =
                ev->image_identity.build_id_size > 20 ? 20 : ev->image_identity.build_id_size;
        memcpy(id->build_id, ev->image_identity.build_id, id->build_id_size);
        /* and when the mapping is already known (an identity after its image) */
        sym_image_identity_at(f->store, id->pid, id->base, id->file_offset, id->build_id,
                              id->build_id_size, ev->timestamp);
}

static void image(struct sym_feed *f, const struct kevent *ev)
{
        switch (ev->image.phase) {
        case KEV_PHASE_START:
        case KEV_PHASE_DC_START: break;
        case KEV_PHASE_END:
                sym_image_unload_at(f->store, ev->image.pid, ev->image.base, ev->timestamp);
                return;
        case KEV_PHASE_DC_END:
                /* the end-of-trace rundown: new only for a trace that has no start rundown
                   (addresses seen earlier are looked up again at the end, see hot.c) */
                if (sym_locate(f->store, ev->image.pid, ev->image.base).module != 0)
                        return;
                break;
        default: return;
        }
        struct sym_image im = {ev->image.pid,
                               ev->image.base,
                               ev->image.size,
                               0,
                               ev->image.file_name,
                               NULL,
                               0,
                               ev->image.time_date_stamp,
                               ev->image.checksum};
        struct identity *id = identity_held(f, ev->image.pid, ev->image.base);
        if (id) {
                im.file_offset = id->file_offset;
                im.build_id = id->build_id;
                im.build_id_size = id->build_id_size;
                id->is_held = false;
                f->nr_held--;
        }
        if (im.build_id_size && im.path && strcmp(im.path, "[kernel.kallsyms]") == 0) {
                f->kernel_build_id_size = im.build_id_size;
                memcpy(f->kernel_build_id, im.build_id, im.build_id_size);
        }
        sym_image_load_at(f->store, &im, ev->timestamp);
        if (f->has_pdb && f->pdb_pid == ev->image.pid && f->pdb_base == ev->image.base)
                sym_image_pdb(f->store, f->pdb_pid, f->pdb_base, f->pdb_guid, f->pdb_age,
                              f->pdb_name);
        f->has_pdb = false;
}

/* A .NET method as PerfView names it: Namespace.Name(arguments), the arguments from the
   signature ("instance void  (class System.String,int32)"). */
static void clr_method(struct sym_feed *f, const struct kevent *ev)
{
        char name[1024];
        struct kevent_clr_names n = kevent_clr_method_names(ev);
        const char *ns = n.name_space, *args = strchr(n.signature, '(');
        snprintf(name, sizeof(name), "%s%s%s%s", ns, *ns ? "." : "", n.name, args ? args : "");
        sym_clr_method(f->store, ev->clr_method.pid, ev->clr_method.module_id, ev->clr_method.start,
                       ev->clr_method.size, name);
}

void sym_feed_event(struct sym_feed *f, const struct kevent *ev)
{
        switch (ev->type) {
        case KEV_PROCESS:
                /* a new program in this pid; a DCStart only says it was there all along */
                if (ev->process.phase == KEV_PHASE_START)
                        sym_process_start_at(f->store, ev->process.pid, ev->timestamp);
                else if (ev->process.phase == KEV_PHASE_END ||
                         ev->process.phase == KEV_PHASE_DEFUNCT)
                        sym_process_end_at(f->store, ev->process.pid, ev->timestamp);
                break;
        case KEV_IMAGE: image(f, ev); break;
        case KEV_IMAGE_IDENTITY: identity_hold(f, ev); break;
        case KEV_DBG_ID: {
                uint8_t guid[16];
                const GUID *g = &ev->dbg_id.guid_sig;
                /* the GUID's fields as stored: Data1..3 little-endian, then Data4 */
                guid[0] = (uint8_t)g->Data1;
                guid[1] = (uint8_t)(g->Data1 >> 8);
                guid[2] = (uint8_t)(g->Data1 >> 16);
                guid[3] = (uint8_t)(g->Data1 >> 24);
                guid[4] = (uint8_t)g->Data2;
                guid[5] = (uint8_t)(g->Data2 >> 8);
                guid[6] = (uint8_t)g->Data3;
                guid[7] = (uint8_t)(g->Data3 >> 8);
                memcpy(guid + 8, g->Data4, 8);
                /* after its image (etwtop's fixtures), or before it (xperf's merge) */
                sym_image_pdb(f->store, ev->dbg_id.pid, ev->dbg_id.base, guid, ev->dbg_id.age,
                              ev->dbg_id.pdb_file_name);
                f->has_pdb = true;
                f->pdb_pid = ev->dbg_id.pid;
                f->pdb_base = ev->dbg_id.base;
                memcpy(f->pdb_guid, guid, 16);
                f->pdb_age = ev->dbg_id.age;
                snprintf(f->pdb_name, sizeof(f->pdb_name), "%s",
                         ev->dbg_id.pdb_file_name ? ev->dbg_id.pdb_file_name : "");
                break;
        }
        case KEV_KERNEL_SYMBOL:
                /* a BPF program's (a perf.data's KSYMBOL) is not the kernel's image: the image's
                   symbols are still looked for at the end */
                if (!ev->kernel_symbol.module || strcmp(ev->kernel_symbol.module, "bpf") != 0)
                        f->has_kernel_symbols = true;
                sym_kernel_symbol(f->store, ev->kernel_symbol.addr, ev->kernel_symbol.size,
                                  ev->kernel_symbol.name, ev->kernel_symbol.module);
                break;
        case KEV_CLR_MODULE:
                if (ev->clr_module.phase != KEV_PHASE_END)
                        sym_clr_module(f->store, ev->clr_module.pid, ev->clr_module.module_id,
                                       ev->clr_module.il_path);
                break;
        case KEV_CLR_METHOD:
                /* an unloaded method's range may hold another one later: the later one wins */
                if (ev->clr_method.phase != KEV_PHASE_END)
                        clr_method(f, ev);
                break;
        default: break;
        }
}

bool sym_feed_end(struct sym_feed *f)
{
        if (f->is_kernel_asked || f->has_kernel_symbols || !f->kernel_build_id_size)
                return false;
        f->is_kernel_asked = true;
        if (sym_kernel_running(f->store, f->kernel_build_id, f->kernel_build_id_size, NULL, NULL) >
            0)
                return true;
        return sym_kernel_cached(f->store, f->kernel_build_id, f->kernel_build_id_size) > 0;
}
