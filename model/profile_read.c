/* SPDX-License-Identifier: MIT */
/* profile_read.c: owns what the views read of the model: its parts to query and the names of
   what the rows carry (functions, modules, places in the code), so that ui/ never calls the
   symbol store. */
#include "model/profile_fields.h"

#include <inttypes.h>
#include <stdio.h>

struct hot *profile_hot(const struct profile *p)
{
        return p->hot;
}

struct calltree *profile_calltree(const struct profile *p)
{
        return p->tree;
}

struct branches *profile_branches(const struct profile *p)
{
        return p->branches;
}

struct switches *profile_switches(const struct profile *p)
{
        return p->switches;
}

struct events_table *profile_events(const struct profile *p)
{
        return p->events;
}

const struct profile_trace *profile_trace(const struct profile *p)
{
        return &p->trace;
}

struct sym_store *profile_store(const struct profile *p)
{
        return p->store;
}

uint32_t profile_zoom_pid(const struct profile *p)
{
        return p->zoom_pid;
}

bool profile_window(const struct profile *p, int64_t *from_ns, int64_t *to_ns)
{
        if (from_ns)
                *from_ns = p->has_window ? p->window_from_ns : 0;
        if (to_ns)
                *to_ns = p->has_window ? p->window_to_ns : 0;
        return p->has_window;
}

const char *profile_name(const struct profile *p, uint32_t id)
{
        return sym_name(p->store, id);
}

/* The store's own copy: valid until its next call. */
static const char *module_name_now(struct sym_store *st, uint32_t module)
{
        struct sym_module_info info;
        if (!module || !sym_module_info(st, module, &info))
                return "[unknown]";
        return info.name;
}

const char *profile_module_name(struct profile *p, uint32_t module)
{
        /* interned: the copy lives as long as the store (the screen draws without the lock) */
        if (!module)
                return "[unknown]";
        return sym_name(p->store, sym_intern(p->store, module_name_now(p->store, module)));
}

void profile_place_text(struct profile *p, struct sym_loc where, uint32_t function, uint64_t offset,
                        char *buf, size_t size)
{
        struct sym_store *st = p->store;
        if (function)
                snprintf(buf, size, "%s!%s+0x%" PRIx64, module_name_now(st, where.module),
                         sym_name(st, function), offset);
        else if (where.module)
                snprintf(buf, size, "%s+0x%" PRIx64, module_name_now(st, where.module), where.rel);
        else
                snprintf(buf, size, "0x%" PRIx64, where.rel);
}

size_t profile_loc_text(struct profile *p, struct sym_loc loc, char *buf, size_t size)
{
        return sym_format(p->store, loc, buf, size);
}

void profile_module_info_text(const struct sym_module_info *info, char *buf, size_t size)
{
        buf[0] = '\0';
        if (info->is_loaded && info->nr_symbols) {
                snprintf(buf, size, "%u from %s", info->nr_symbols, info->file_used);
        } else if (info->has_pdb) {
                snprintf(buf, size, "PDB %s %s", info->pdb_name, info->pdb_signature);
        } else if (info->build_id_size) {
                size_t n = (size_t)snprintf(buf, size, "build-id ");
                for (uint32_t b = 0; b < info->build_id_size && n < size; b++)
                        n += (size_t)snprintf(buf + n, size - n, "%02x", info->build_id[b]);
        }
}

void profile_module_symbols_text(struct profile *p, uint32_t module, char *buf, size_t size)
{
        struct sym_module_info info;
        buf[0] = '\0';
        if (module && sym_module_info(p->store, module, &info))
                profile_module_info_text(&info, buf, size);
}
