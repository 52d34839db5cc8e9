/* SPDX-License-Identifier: MIT */
/* pprof.c: owns the pprof export: the gathered samples, and the off-CPU time by where threads
   blocked, as a perftools.profiles.Profile (src/export/profile.proto, packed by protobuf-c),
   gzip-compressed as pprof reads it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "export/writers.h"
#include "model/profile.h"
#include "profile.pb-c.h"
#include "util/xalloc.h"
#include "util/hash.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;

/* The timer interval when the trace recorded none: Windows' default, 1 ms. */
#define DEFAULT_INTERVAL_100NS 10000u

/* ---- the string table ---- */

struct strings {
        char **strs; /* borrowed from the samples, or literals */
        uint32_t nr, cap;
        uint32_t *slots; /* index + 1 */
        uint32_t mask;
};

static uint64_t str_hash(const char *s)
{
        uint64_t h = hash_fnv1a_str(s, HASH_FNV_OFFSET);
        return h ^ h >> 29;
}

/* s's index in the table (added when new); s must outlive the table. */
static int64_t str_index(struct strings *t, const char *s)
{
        if ((t->nr + 1) * 2 > t->mask + 1 || !t->slots) {
                uint32_t size = t->mask ? (t->mask + 1) * 2 : 1024;
                free(t->slots);
                t->slots = xcalloc(size, sizeof(*t->slots));
                t->mask = size - 1;
                for (uint32_t i = 0; i < t->nr; i++) {
                        uint32_t j = (uint32_t)str_hash(t->strs[i]) & t->mask;
                        while (t->slots[j])
                                j = (j + 1) & t->mask;
                        t->slots[j] = i + 1;
                }
        }
        uint32_t j = (uint32_t)str_hash(s) & t->mask;
        for (; t->slots[j]; j = (j + 1) & t->mask)
                if (strcmp(t->strs[t->slots[j] - 1], s) == 0)
                        return t->slots[j] - 1;
        if (t->nr == t->cap) {
                t->cap = t->cap ? t->cap * 2 : 1024;
                t->strs = xrealloc(t->strs, t->cap * sizeof(*t->strs));
        }
        t->strs[t->nr] = (char *)s; /* protobuf-c's string type is not const */
        t->slots[j] = t->nr + 1;
        return t->nr++;
}

/* ---- gzip, streamed to the file as protobuf-c packs ---- */

struct gz_out {
        ProtobufCBuffer base; /* first: protobuf-c calls append with it */
        z_stream z;
        int fd;
        int error; /* errno of the first failure, sticky */
        uint8_t out[1 << 16];
};

static void gz_write_out(struct gz_out *g)
{
        size_t n = sizeof(g->out) - g->z.avail_out, off = 0;
        while (off < n && !g->error) {
                ssize_t k = write(g->fd, g->out + off, n - off);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        g->error = errno;
                else
                        off += (size_t)k;
        }
        g->z.next_out = g->out;
        g->z.avail_out = sizeof(g->out);
}

static void gz_deflate(struct gz_out *g, const uint8_t *data, size_t len, int flush)
{
        g->z.next_in = (Bytef *)data;
        g->z.avail_in = (uInt)len;
        int zr;
        do {
                zr = deflate(&g->z, flush);
                if (zr == Z_STREAM_ERROR) {
                        g->error = EIO;
                        return;
                }
                if (g->z.avail_out == 0 || (flush == Z_FINISH && zr == Z_STREAM_END))
                        gz_write_out(g);
        } while (!g->error && (g->z.avail_in || (flush == Z_FINISH && zr != Z_STREAM_END)));
}

static void gz_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
        struct gz_out *g = (struct gz_out *)b;
        /* avail_in is 32 bits: a large run goes in pieces */
        while (len && !g->error) {
                size_t k = len < (1u << 30) ? len : (1u << 30);
                gz_deflate(g, data, k, Z_NO_FLUSH);
                data += k;
                len -= k;
        }
}

/* ---- the profile ---- */

int export_write_pprof(const struct export_ctx *x, int fd)
{
        const struct stack_set *s = x->samples;
        struct profile *p = x->profile;
        struct strings t = {0};
        str_index(&t, ""); /* string_table[0] is "" */
        Profile pr = PERFTOOLS__PROFILES__PROFILE__INIT;

        /* sample types: the timer's count and CPU time, each PMC source's count, then the
           off-CPU time when the switches came with stacks */
        uint64_t interval_ns =
                (uint64_t)(profile_trace(p)->interval_100ns ? profile_trace(p)->interval_100ns
                                                            : DEFAULT_INTERVAL_100NS) *
                100;
        ValueType types[2 * AGG_MAX_SOURCES + 1], *type_ptrs[2 * AGG_MAX_SOURCES + 1];
        int value_at[AGG_MAX_SOURCES]; /* per source of s->sources: its first value's index */
        char names[AGG_MAX_SOURCES][64];
        uint32_t nt = 0;
        int64_t cpu_type = -1;
        for (uint32_t i = 0; i < s->nr_sources; i++) {
                value_at[i] = (int)nt;
                if (s->sources[i] == HOT_SOURCE_TIMER) {
                        types[nt] = (ValueType)PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
                        types[nt].type = str_index(&t, "samples");
                        types[nt++].unit = str_index(&t, "count");
                        types[nt] = (ValueType)PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
                        types[nt].type = cpu_type = str_index(&t, "cpu");
                        types[nt++].unit = str_index(&t, "nanoseconds");
                } else {
                        types[nt] = (ValueType)PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
                        types[nt].type =
                                str_index(&t, export_source_name(x, s->sources[i], names[i],
                                                                 sizeof(names[i])));
                        types[nt++].unit = str_index(&t, "count");
                }
        }
        uint32_t off_at = 0; /* the off-CPU value's index, when there are off-CPU stacks */
        if (s->off.nr_stacks) {
                off_at = nt;
                types[nt] = (ValueType)PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
                types[nt].type = str_index(&t, "off-cpu");
                types[nt++].unit = str_index(&t, "nanoseconds");
        }
        for (uint32_t i = 0; i < nt; i++)
                type_ptrs[i] = &types[i];
        pr.n_sample_type = nt;
        pr.sample_type = type_ptrs;
        ValueType period_type = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
        if (cpu_type >= 0) {
                period_type.type = cpu_type;
                period_type.unit = str_index(&t, "nanoseconds");
                pr.period_type = &period_type;
                pr.period = (int64_t)interval_ns;
                pr.default_sample_type = cpu_type;
        } else if (nt) {
                /* no timer: the source the views show first (the trace's declared order: a
                   perf.data's first event, as perf report), else the first sampled */
                pr.default_sample_type = types[0].type;
                uint16_t order[AGG_MAX_SOURCES];
                int first = export_sources(x, order) ? stack_set_source_index(s, order[0]) : -1;
                if (first >= 0)
                        pr.default_sample_type = types[value_at[first]].type;
        }
        pr.duration_nanos = profile_span_ns(p);

        /* functions, mappings, locations */
        Function *fns = xcalloc(s->nr_functions + 1, sizeof(*fns));
        Function **fn_ptrs = xcalloc(s->nr_functions + 1, sizeof(*fn_ptrs));
        for (uint32_t i = 0; i < s->nr_functions; i++) {
                fns[i] = (Function)PERFTOOLS__PROFILES__FUNCTION__INIT;
                fns[i].id = i + 1;
                fns[i].name = fns[i].system_name = str_index(&t, s->functions[i].name);
                fn_ptrs[i] = &fns[i];
        }
        pr.n_function = s->nr_functions;
        pr.function = fn_ptrs;
        Mapping *maps = xcalloc(s->nr_modules + 1, sizeof(*maps));
        Mapping **map_ptrs = xcalloc(s->nr_modules + 1, sizeof(*map_ptrs));
        for (uint32_t i = 0; i < s->nr_modules; i++) {
                const struct stack_set_module *m = &s->modules[i];
                maps[i] = (Mapping)PERFTOOLS__PROFILES__MAPPING__INIT;
                maps[i].id = i + 1;
                /* a module is mapped at different bases by different processes: its locations'
                   addresses are module-relative (an ELF file's offsets, a PE image's RVAs), the
                   mapping spans those of its places, at their own offsets */
                maps[i].memory_start = m->min_rel;
                maps[i].memory_limit = m->max_rel + 1;
                maps[i].file_offset = m->min_rel;
                maps[i].filename = str_index(&t, m->path[0] ? m->path : m->name);
                maps[i].build_id = str_index(&t, m->build_id);
                /* pprof symbolizes the mappings without functions again from their files:
                   only ELF files might have more to give (a Windows image's, a kernel's
                   names cannot come from a local file; their attempts would only warn) */
                maps[i].has_functions = m->has_functions || m->path[0] != '/';
                map_ptrs[i] = &maps[i];
        }
        pr.n_mapping = s->nr_modules;
        pr.mapping = map_ptrs;
        Location *locs = xcalloc(s->nr_locs + 1, sizeof(*locs));
        Location **loc_ptrs = xcalloc(s->nr_locs + 1, sizeof(*loc_ptrs));
        Line *lines = xcalloc(s->nr_locs + 1, sizeof(*lines));
        Line **line_ptrs = xcalloc(s->nr_locs + 1, sizeof(*line_ptrs));
        for (uint32_t i = 0; i < s->nr_locs; i++) {
                lines[i] = (Line)PERFTOOLS__PROFILES__LINE__INIT;
                lines[i].function_id = s->locs[i].function + 1;
                line_ptrs[i] = &lines[i];
                locs[i] = (Location)PERFTOOLS__PROFILES__LOCATION__INIT;
                locs[i].id = i + 1;
                locs[i].mapping_id = s->locs[i].mapping;
                locs[i].address = s->locs[i].rel;
                locs[i].n_line = 1;
                locs[i].line = &line_ptrs[i];
                loc_ptrs[i] = &locs[i];
        }
        pr.n_location = s->nr_locs;
        pr.location = loc_ptrs;

        /* samples: one per distinct (pid, tid, source, stack), then one per distinct (pid, tid,
           blocking stack), labelled */
        uint32_t nr_on = s->set.nr_stacks, ns = nr_on + s->off.nr_stacks;
        Sample *samples = xcalloc(ns + 1, sizeof(*samples));
        Sample **sample_ptrs = xcalloc(ns + 1, sizeof(*sample_ptrs));
        uint64_t *ids = xcalloc(s->nr_frames + 1, sizeof(*ids));
        int64_t *values = xcalloc((size_t)ns * nt + 1, sizeof(*values));
        Label *labels = xcalloc((size_t)ns * 3 + 1, sizeof(*labels));
        Label **label_ptrs = xcalloc((size_t)ns * 3 + 1, sizeof(*label_ptrs));
        int64_t key_pid = str_index(&t, "pid"), key_tid = str_index(&t, "tid"),
                key_comm = str_index(&t, "comm");
        for (uint64_t i = 0; i < s->nr_frames; i++)
                ids[i] = (uint64_t)s->frames[i] + 1;
        for (uint32_t i = 0; i < ns; i++) {
                const struct stack_set_stack *st =
                        i < nr_on ? &s->set.stacks[i] : &s->off.stacks[i - nr_on];
                Sample *sm = &samples[i];
                *sm = (Sample)PERFTOOLS__PROFILES__SAMPLE__INIT;
                sm->n_location_id = st->nr_frames;
                sm->location_id = ids + st->first;
                sm->n_value = nt;
                sm->value = values + (size_t)i * nt;
                int si = i < nr_on ? stack_set_source_index(s, st->source) : -1;
                if (i >= nr_on) {
                        sm->value[off_at] = (int64_t)st->count; /* nanoseconds */
                } else if (si >= 0) {
                        sm->value[value_at[si]] = (int64_t)st->count;
                        if (st->source == HOT_SOURCE_TIMER)
                                sm->value[value_at[si] + 1] = (int64_t)(st->count * interval_ns);
                }
                Label *l = &labels[(size_t)i * 3];
                Label **lp = &label_ptrs[(size_t)i * 3];
                uint32_t nl = 0;
                if (st->pid != UINT32_MAX) {
                        l[nl] = (Label)PERFTOOLS__PROFILES__LABEL__INIT;
                        l[nl].key = key_pid;
                        l[nl++].num = st->pid;
                }
                l[nl] = (Label)PERFTOOLS__PROFILES__LABEL__INIT;
                l[nl].key = key_tid;
                l[nl++].num = st->tid;
                l[nl] = (Label)PERFTOOLS__PROFILES__LABEL__INIT;
                l[nl].key = key_comm;
                l[nl++].str = str_index(&t, s->comms[st->comm]);
                for (uint32_t k = 0; k < nl; k++)
                        lp[k] = &l[k];
                sm->n_label = nl;
                sm->label = lp;
                sample_ptrs[i] = sm;
        }
        pr.n_sample = ns;
        pr.sample = sample_ptrs;
        char comment[1100];
        snprintf(comment, sizeof(comment), "etwtop --export pprof of %s", x->opts->path);
        int64_t comment_index = str_index(&t, comment);
        pr.n_comment = 1;
        pr.comment = &comment_index;
        pr.n_string_table = t.nr;
        pr.string_table = t.strs;

        /* packed straight into gzip (deflateInit2's windowBits 15 + 16: a gzip header) */
        struct gz_out *g = xcalloc(1, sizeof(*g));
        g->base.append = gz_append;
        g->fd = fd;
        int rc;
        if (deflateInit2(&g->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
                         Z_DEFAULT_STRATEGY) != Z_OK) {
                rc = -ENOMEM;
        } else {
                g->z.next_out = g->out;
                g->z.avail_out = sizeof(g->out);
                perftools__profiles__profile__pack_to_buffer(&pr, &g->base);
                gz_deflate(g, NULL, 0, Z_FINISH);
                deflateEnd(&g->z);
                rc = g->error ? -g->error : 0;
        }
        free(g);
        free(samples);
        free(sample_ptrs);
        free(ids);
        free(values);
        free(labels);
        free(label_ptrs);
        free(locs);
        free(loc_ptrs);
        free(lines);
        free(line_ptrs);
        free(maps);
        free(map_ptrs);
        free(fns);
        free(fn_ptrs);
        free(t.strs);
        free(t.slots);
        return rc;
}
