/* SPDX-License-Identifier: MIT */
/* sym_spaces.c: owns the symbol store's process address spaces: processes that start and end,
   the images loaded and unloaded in them, and their identities. */
#include "symbols/symbols.h"
#include "symbols_impl.h"

#include "demangle.h"
#include "elf_module.h"
#include "symbols/kallsyms.h"
#include "symbols/module_name.h"
#include "symbols/sym_table.h"
#include "sym_server.h"
#include "sym_sources.h"
#include "symbols/pdb.h"
#include "util/in_file.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <strings.h>
#include <unistd.h>

/* ---- address spaces ---- */

struct space *symbols_space_find(const struct sym_store *s, uint32_t pid)
{
        for (uint32_t j = (uint32_t)hash_mix64(pid) & s->spaces_mask;;
             j = (j + 1) & s->spaces_mask) {
                struct space *sp = s->spaces[j];
                if (!sp)
                        return NULL;
                if (sp->pid == pid)
                        return sp;
        }
}

static void spaces_insert(struct sym_store *s, struct space *sp)
{
        uint32_t j = (uint32_t)hash_mix64(sp->pid) & s->spaces_mask;
        while (s->spaces[j])
                j = (j + 1) & s->spaces_mask;
        s->spaces[j] = sp;
}

struct space *symbols_space_get(struct sym_store *s, uint32_t pid)
{
        struct space *sp = symbols_space_find(s, pid);
        if (sp)
                return sp;
        if ((s->nr_spaces + 1) * 2 > s->spaces_mask + 1) {
                struct space **old = s->spaces;
                uint32_t old_cap = s->spaces_mask + 1;
                s->spaces = xcalloc(old_cap * 2, sizeof(*s->spaces));
                s->spaces_mask = old_cap * 2 - 1;
                for (uint32_t i = 0; i < old_cap; i++)
                        if (old[i])
                                spaces_insert(s, old[i]);
                free(old);
        }
        sp = xcalloc(1, sizeof(*sp));
        sp->pid = pid;
        spaces_insert(s, sp);
        s->nr_spaces++;
        s->st.nr_spaces = s->nr_spaces;
        return sp;
}

void sym_process_start_at(struct sym_store *s, uint32_t pid, uint64_t time)
{
        if (!s)
                return;
        /* with a time, the start is remembered even before any mapping: the mappings of the
           program it replaced may come later still (another CPU's buffer) */
        struct space *sp = time ? symbols_space_get(s, pid) : symbols_space_find(s, pid);
        if (!sp || (time && time < sp->start_time))
                return; /* an earlier program's start, come late: what followed it stands */
        /* a new program in this pid: the old mappings are gone, not those made after it */
        uint32_t o = 0;
        for (uint32_t i = 0; i < sp->nr; i++)
                if (time && sp->maps[i].time >= time)
                        sp->maps[o++] = sp->maps[i];
        sp->nr = o;
        if (time)
                sp->start_time = time;
        sp->nr_methods = 0;
        sp->nr_clr_modules = 0;
        sp->jit_module = 0;
        sp->jit_checked = 0;
        if (!time || time >= sp->end_time)
                sp->is_ended = false; /* a reused pid: its entry in the ended ring no longer
                                         counts */
        s->nr_changes++;
}

void sym_process_start(struct sym_store *s, uint32_t pid)
{
        sym_process_start_at(s, pid, 0);
}

/* Takes sp out of the table (linear probing: the entries after it move up where their probe
   allows) and frees it. */
static void space_remove(struct sym_store *s, struct space *sp)
{
        uint32_t mask = s->spaces_mask;
        uint32_t i = (uint32_t)hash_mix64(sp->pid) & mask;
        while (s->spaces[i] != sp)
                i = (i + 1) & mask;
        s->spaces[i] = NULL;
        for (uint32_t j = (i + 1) & mask; s->spaces[j]; j = (j + 1) & mask) {
                uint32_t k = (uint32_t)hash_mix64(s->spaces[j]->pid) & mask;
                /* the entry at j stays when its home k lies cyclically in (i, j] */
                bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
                if (!stays) {
                        s->spaces[i] = s->spaces[j];
                        s->spaces[j] = NULL;
                        i = j;
                }
        }
        for (int c = 0; c < 2; c++)
                if (s->last_space[c] == sp)
                        s->last_space[c] = NULL;
        free(sp->maps);
        free(sp->methods);
        free(sp->clr_modules);
        free(sp);
        s->nr_spaces--;
        s->st.nr_spaces = s->nr_spaces;
        s->nr_changes++;
}

void sym_process_end_at(struct sym_store *s, uint32_t pid, uint64_t time)
{
        struct space *sp = s ? symbols_space_find(s, pid) : NULL;
        if (!sp || pid == 0 || (time && time < sp->start_time))
                return; /* no space, or the end of the program before the last start */
        if (time > sp->end_time)
                sp->end_time = time;
        if (sp->is_ended)
                return;
        sp->is_ended = true;
        sp->jit_checked = 0; /* its map, if it wrote one, is looked for once more */
        sp->end_serial = ++s->nr_ends;
        if (s->nr_ended == MAX_ENDED_SPACES) {
                /* the oldest end goes, unless its pid started again since */
                struct ended_space old = s->ended[s->ended_head];
                s->ended_head = (s->ended_head + 1) % MAX_ENDED_SPACES;
                s->nr_ended--;
                struct space *o = symbols_space_find(s, old.pid);
                if (o && o->is_ended && o->end_serial == old.serial)
                        space_remove(s, o);
        }
        s->ended[(s->ended_head + s->nr_ended) % MAX_ENDED_SPACES] =
                (struct ended_space){pid, sp->end_serial};
        s->nr_ended++;
}

void sym_process_end(struct sym_store *s, uint32_t pid)
{
        sym_process_end_at(s, pid, 0);
}

struct space *symbols_space_probe(struct sym_store *s, uint32_t pid)
{
        if (s->nr_probed == MAX_PROBED_SPACES) {
                struct ended_space old = s->probed[s->probed_head];
                s->probed_head = (s->probed_head + 1) % MAX_PROBED_SPACES;
                s->nr_probed--;
                struct space *o = symbols_space_find(s, old.pid);
                if (o && o->probe_serial == old.serial && !o->nr && !o->jit_module &&
                    !o->start_time && !o->is_ended && !o->nr_methods && !o->nr_clr_modules)
                        space_remove(s, o);
        }
        struct space *sp = symbols_space_get(s, pid);
        sp->probe_serial = ++s->nr_probes;
        s->probed[(s->probed_head + s->nr_probed) % MAX_PROBED_SPACES] =
                (struct ended_space){pid, sp->probe_serial};
        s->nr_probed++;
        return sp;
}

/* Removes [start, end) from sp, splitting mappings that straddle it. */
/* Returns whether it appended a piece (the maps are then out of order). */
static bool space_cut(struct space *sp, uint64_t start, uint64_t end)
{
        /* the maps are in order and apart: when the last one to start before end ends by
           start, none holds a part of [start, end) (a new image's usual case: no pass over the
           process's maps, each copied in place) */
        uint32_t lo = 0, hi = sp->nr;
        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (sp->maps[mid].start < end)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo == 0 || sp->maps[lo - 1].end <= start)
                return false;
        uint32_t o = 0;
        struct mapping extra = {0};
        bool has_extra = false;
        for (uint32_t i = 0; i < sp->nr; i++) {
                struct mapping m = sp->maps[i];
                if (m.end <= start || m.start >= end) {
                        sp->maps[o++] = m;
                        continue;
                }
                if (m.start < start) {
                        struct mapping left = m;
                        left.end = start;
                        sp->maps[o++] = left;
                }
                if (m.end > end) {
                        struct mapping right = m;
                        if (!right.is_absolute)
                                right.pgoff += end - m.start;
                        right.start = end;
                        /* at most one mapping straddles end; keep it aside (o may pass i) */
                        extra = right;
                        has_extra = true;
                }
        }
        sp->nr = o;
        if (has_extra) {
                if (sp->nr == sp->cap) {
                        sp->cap = sp->cap ? sp->cap * 2 : 16;
                        sp->maps = xrealloc(sp->maps, sp->cap * sizeof(*sp->maps));
                }
                sp->maps[sp->nr++] = extra;
        }
        return has_extra;
}

static void space_add(struct space *sp, struct mapping m)
{
        bool is_unordered = space_cut(sp, m.start, m.end);
        if (sp->nr == sp->cap) {
                sp->cap = sp->cap ? sp->cap * 2 : 16;
                sp->maps = xrealloc(sp->maps, sp->cap * sizeof(*sp->maps));
        }
        uint32_t i = sp->nr;
        while (i > 0 && sp->maps[i - 1].start > m.start) {
                sp->maps[i] = sp->maps[i - 1];
                i--;
        }
        sp->maps[i] = m;
        sp->nr++;
        /* space_cut may have appended out of order (else the maps are in order: a process
           storm maps tens of thousands of images, each of them a pass over its process's maps) */
        for (uint32_t k = 1; is_unordered && k < sp->nr; k++) {
                struct mapping x = sp->maps[k];
                uint32_t j = k;
                while (j > 0 && sp->maps[j - 1].start > x.start) {
                        sp->maps[j] = sp->maps[j - 1];
                        j--;
                }
                sp->maps[j] = x;
        }
}

/* space_add for a mapping with a time: only the parts of m that no newer mapping holds (events
   may come out of time order, see symbols.h). */
static void space_add_timed(struct space *sp, struct mapping m)
{
        uint64_t at = m.start;
        while (at < m.end) {
                /* the lowest newer mapping that overlaps [at, m.end) */
                const struct mapping *n = NULL;
                for (uint32_t i = 0; i < sp->nr && !n; i++) {
                        const struct mapping *x = &sp->maps[i];
                        if (x->end > at && x->start < m.end && x->time > m.time)
                                n = x; /* sorted by start: the first is the lowest */
                }
                uint64_t piece_end = !n ? m.end : n->start > at ? n->start : at;
                uint64_t next = n ? n->end : m.end;
                if (piece_end > at) {
                        struct mapping piece = m;
                        piece.start = at;
                        piece.end = piece_end;
                        if (!piece.is_absolute)
                                piece.pgoff += at - m.start;
                        space_add(sp, piece); /* n and the other newer ones lie outside it */
                }
                at = next;
        }
}

struct mapping *symbols_space_lookup(const struct space *sp, uint64_t addr)
{
        uint32_t lo = 0, hi = sp->nr;
        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (sp->maps[mid].start <= addr)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo == 0 || addr >= sp->maps[lo - 1].end || !sp->maps[lo - 1].module)
                return NULL; /* in no map, or in an anonymous map's hole */
        return &sp->maps[lo - 1];
}

bool symbols_is_jit_memory(const char *path)
{
        /* perf's is_anon_memory and is_no_dso_memory: map__new's /tmp/perf-PID.map */
        return strncmp(path, "//anon", 6) == 0 || strncmp(path, "/dev/zero", 9) == 0 ||
               strncmp(path, "/anon_hugepage", 14) == 0 || strncmp(path, "[stack", 6) == 0 ||
               strncmp(path, "/SYSV", 5) == 0 || strcmp(path, "[heap]") == 0;
}

uint32_t symbols_jit_module(struct sym_store *s, struct space *sp)
{
        if (sp->jit_module)
                return sp->jit_module;
        char path[64], name[64];
        snprintf(path, sizeof(path), "/tmp/perf-%u.map", sp->pid);
        snprintf(name, sizeof(name), "[JIT] tid %u", sp->pid);
        uint32_t id = symbols_module_new(s, MOD_JIT, path, name);
        struct module *m = s->modules[id];
        m->jit_pid = sp->pid;
        if (access(path, F_OK) != 0)
                atomic_store_explicit(&m->state, LS_FAILED, memory_order_release); /* quietly:
                        most JITs write no map, and perf report says nothing of it */
        sp->jit_module = id;
        return id;
}

void sym_image_load_at(struct sym_store *s, const struct sym_image *im, uint64_t time)
{
        if (!s || !im || !im->size || im->base + im->size < im->base)
                return;
        const char *path = im->path ? im->path : "";
        /* a memfd's map, or an anonymous map given a name, is a recording's module of its own,
           as perf report names it (".glXXXXXX (deleted)": a driver's generated code;
           "[anon:v8]"); live it is looked up as JIT code (perf-PID.map: .NET maps its code
           twice through "memfd:doublemapper") */
        bool is_anonymous =
                symbols_is_anonymous(path) && (s->opt.is_live || !symbols_is_named_anonymous(path));
        /* an anonymous map is a hole (module 0) in the maps it lands on: the code a driver
           generates where a library it dlclose()d lay is no longer that library's, as perf
           cuts the older maps a new one overlaps. A recording's executable anonymous map of a
           process is its JIT's code, as perf report has it: "[JIT] tid PID", its functions
           from /tmp/perf-PID.map where that file is (live, the lookup finds the map file
           itself: sym_locate_ex) */
        bool is_jit = !s->opt.is_live && im->pid && symbols_is_jit_memory(path);
        uint32_t id = is_jit         ? symbols_jit_module(s, symbols_space_get(s, im->pid))
                      : is_anonymous ? 0
                                     : symbols_module_get(s, im);
        if (id && id == s->kernel_module)
                s->has_linux_kernel = true;
        else if (id && im->pid == 0)
                s->has_kernel_images = true;
        /* the kernel's images (pid 0) at 32-bit addresses: a 32-bit kernel (base 0 is a 64-bit
           perf 3.4's kernel map, not an address) */
        s->has_kernel32 |= id && im->pid == 0 && im->base && im->base <= UINT32_MAX;
        struct space *sp = symbols_space_get(s, im->pid);
        if (time && time < sp->start_time)
                return; /* mapped by the program before the process's last start */
        struct mapping m = {im->base,
                            im->base + im->size,
                            im->file_offset,
                            id,
                            (id && id == s->kernel_module) || is_jit,
                            time};
        if (time)
                space_add_timed(sp, m);
        else
                space_add(sp, m);
        s->nr_changes++;
}

void sym_image_load(struct sym_store *s, const struct sym_image *im)
{
        sym_image_load_at(s, im, 0);
}

void sym_image_unload_at(struct sym_store *s, uint32_t pid, uint64_t base, uint64_t time)
{
        struct space *sp = s ? symbols_space_find(s, pid) : NULL;
        if (!sp)
                return;
        for (uint32_t i = 0; i < sp->nr; i++) {
                if (sp->maps[i].start == base) {
                        if (time && sp->maps[i].time > time)
                                return; /* mapped again after this unload */
                        memmove(&sp->maps[i], &sp->maps[i + 1],
                                (sp->nr - i - 1) * sizeof(*sp->maps));
                        sp->nr--;
                        s->nr_changes++;
                        return;
                }
        }
}

void sym_image_unload(struct sym_store *s, uint32_t pid, uint64_t base)
{
        sym_image_unload_at(s, pid, base, 0);
}

void sym_image_identity_at(struct sym_store *s, uint32_t pid, uint64_t base, uint64_t file_offset,
                           const uint8_t *build_id, uint32_t build_id_size, uint64_t time)
{
        struct space *sp = s ? symbols_space_find(s, pid) : NULL;
        struct mapping *m = sp ? symbols_space_lookup(sp, base) : NULL;
        if (!m || m->start != base || !build_id_size || (time && m->time > time))
                return;
        struct module *mod = symbols_module_of(s, m->module);
        if (!mod || mod->kind == MOD_KERNEL || mod->kind == MOD_PE)
                return;
        m->pgoff = file_offset;
        s->nr_changes++;
        if (mod->build_id_size == build_id_size && !memcmp(mod->build_id, build_id, build_id_size))
                return;
        /* the module was keyed by path: re-key it by build-id (another file, another module) */
        struct sym_image im = {pid,           base,      m->end - m->start,
                               file_offset,   mod->path, build_id,
                               build_id_size, 0,         0};
        m->module = symbols_module_get(s, &im);
}

void sym_image_pdb(struct sym_store *s, uint32_t pid, uint64_t base, const uint8_t guid[16],
                   uint32_t age, const char *pdb_name)
{
        struct space *sp = s ? symbols_space_find(s, pid) : NULL;
        struct mapping *m = sp ? symbols_space_lookup(sp, base) : NULL;
        struct module *mod = m ? symbols_module_of(s, m->module) : NULL;
        if (!mod || mod->has_pdb)
                return;
        mod->has_pdb = true;
        memcpy(mod->pdb_guid, guid, 16);
        mod->pdb_age = age;
        mod->pdb_name = xstrdup(pdb_name ? pdb_name : "");
}
