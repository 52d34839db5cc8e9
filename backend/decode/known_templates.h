/* SPDX-License-Identifier: MIT */
/* known_templates.h: the events of providers whose manifests Windows keeps and traces do not
 * carry, by their manifests' templates: the .NET runtime's and rundown's (ClrEtwAll.man,
 * clr_template_list.c) and Windows PowerShell's (ps_template_list.c), decoded by
 * known_templates.c; internal to the decoder. */
#ifndef ETWTOP_KNOWN_TEMPLATES_H
#define ETWTOP_KNOWN_TEMPLATES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kdecoder_int.h"
#include "tdh_meta.h"

/* The providers the tables describe. */
enum tmpl_provider {
        TMPL_CLR_RUNTIME, /* Microsoft-Windows-DotNETRuntime */
        TMPL_CLR_RUNDOWN, /* Microsoft-Windows-DotNETRuntimeRundown */
        TMPL_POWERSHELL,  /* Microsoft-Windows-PowerShell, and PowerShell 7's PowerShellCore */
        TMPL_NR_PROVIDERS
};

/* One template: the events of a provider's Id in a range of versions, their name
   ("DotNETRuntime/AssemblyLoad"), and their fields in order, as text: "Name:type" (u8 i8 u16
   i16 u32 i32 u64 i64 hex32 hex64 ptr bool f32 f64 guid wstr astr filetime systemtime sid
   binary), an array "Name:u32[CountField]" or "Name:u32[4]", a length "Name:binary{Field}",
   an array of structs "Name:struct[CountField]{A:u16 B:ptr}". */
struct clr_template {
        uint8_t provider; /* enum tmpl_provider */
        uint16_t id;
        uint8_t min_version, max_version;
        const char *name;
        const char *fields;
};

/* The tables, grouped by provider and Id: the runtime's and rundown's (clr_template_list.c),
   PowerShell's (ps_template_list.c). */
extern const struct clr_template clr_templates[];
extern const size_t clr_nr_templates;
extern const struct clr_template ps_templates[];
extern const size_t ps_nr_templates;

/* A value or bit map of theirs (clr_template_list.c, ps_template_list.c). */
struct clr_map {
        const char *name;
        bool is_bitmap;
        const uint32_t *values;
        const char *const *texts;
        size_t nr;
};
/* A map's row of clr_maps or ps_maps: its name, whether it is a bit map, and the arrays
   c##_values and c##_texts. */
#define KNOWN_MAP(n, b, c)                                                                         \
        {                                                                                          \
                n, b, c##_values, c##_texts, sizeof(c##_values) / sizeof(c##_values[0])            \
        }
extern const struct clr_map clr_maps[];
extern const size_t clr_nr_maps;
extern const struct clr_map ps_maps[];
extern const size_t ps_nr_maps;

/* The text of v in the map map_name of provider (the runtime's or rundown's, the GC's of
   clr_gc.c, PowerShell's): a value's name, a bit map's set bits' names joined by '|' (in buf,
   size bytes), or NULL (another provider, another map, a value it lacks). */
const char *known_map_text(const GUID *provider, const char *map_name, uint64_t v, char *buf,
                           size_t size);

/* Decodes payload p[0..len) of a known provider's event id by its template:
   ev->type KEV_FIELDS, ev->name kept where set. Returns 0, -EBADMSG for a payload shorter than
   its template, or KEV_NO_LAYOUT (another provider, an Id without a template). */
int known_template_decode(struct kdecoder *d, struct kevent *ev, const uint8_t *p, size_t len,
                          unsigned psize, const GUID *provider, uint16_t id);

#endif
