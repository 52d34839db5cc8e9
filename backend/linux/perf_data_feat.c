/* SPDX-License-Identifier: MIT */
/* perf_data_feat.c: the feature sections of a perf.data file (or pipe mode's HEADER_FEATURE
   records): host, kernel, CPU, perf's command line, event names, build-ids, PMUs, groups,
   clock (perf.data-file-format.txt, "Feature sections"). */
#include "perf_data_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "le_bytes.h"
#include "util/xalloc.h"

#define BUILD_ID_HEADER    36u        /* perf_event_header, pid, build_id[24] */
#define MISC_BUILD_ID_SIZE (1u << 15) /* PERF_RECORD_MISC_BUILD_ID_SIZE */

/* A cursor over a feature's bytes; any read past the end sets is_bad. */
struct feat_cursor {
        const uint8_t *p;
        size_t size, pos;
        bool is_bad;
};

static bool cur_has(struct feat_cursor *c, size_t n)
{
        if (c->is_bad || n > c->size - c->pos) {
                c->is_bad = true;
                return false;
        }
        return true;
}

static uint32_t cur_u32(struct feat_cursor *c)
{
        if (!cur_has(c, 4))
                return 0;
        c->pos += 4;
        return le_get32(c->p + c->pos - 4);
}

static uint64_t cur_u64(struct feat_cursor *c)
{
        if (!cur_has(c, 8))
                return 0;
        c->pos += 8;
        return le_get64(c->p + c->pos - 8);
}

/* struct perf_header_string: u32 len (padding included), then the NUL-padded bytes. Returns an
   owned string, NULL when it runs past the end. */
static char *cur_string(struct feat_cursor *c)
{
        uint32_t len = cur_u32(c);
        if (!cur_has(c, len))
                return NULL;
        const char *s = (const char *)c->p + c->pos;
        size_t n = strnlen(s, len);
        char *out = xmalloc(n + 1);
        memcpy(out, s, n);
        out[n] = '\0';
        c->pos += len;
        return out;
}

/* A count of entries of at least min_size bytes each that fit in what is left. */
static uint32_t cur_count(struct feat_cursor *c, size_t min_size)
{
        uint32_t nr = cur_u32(c);
        if (!c->is_bad && (uint64_t)nr * min_size > c->size - c->pos)
                c->is_bad = true;
        return c->is_bad ? 0 : nr;
}

static void set_string(char **dst, struct feat_cursor *c)
{
        char *s = cur_string(c);
        if (s) {
                free(*dst);
                *dst = s;
        }
}

int perf_data_build_id_add(struct perf_data *pd, const uint8_t *p, size_t size)
{
        if (size < BUILD_ID_HEADER)
                return -EBADMSG;
        struct perf_data_info *in = &pd->info;
        in->build_ids = xrealloc(in->build_ids, (in->nr_build_ids + 1) * sizeof(*in->build_ids));
        struct perf_data_build_id *b = &in->build_ids[in->nr_build_ids++];
        memset(b, 0, sizeof(*b));
        b->misc = le_get16(p + 4);
        b->pid = (int32_t)le_get32(p + 8);
        memcpy(b->id, p + 12, 20);
        b->size = 20;
        if (b->misc & MISC_BUILD_ID_SIZE) {
                b->size = p[32] <= 20 ? p[32] : 20;
        } else {
                /* perf before 5.10 wrote no size and padded shorter ids (lld's 8-byte, MD5's
                   16) with zeros: 4 or more zero bytes at the end (a SHA-1 ends so once in
                   2^32) make the id the shortest of 8, 16 that holds what is left */
                uint32_t n = 20;
                while (n > 0 && b->id[n - 1] == 0)
                        n--;
                if (n <= 16)
                        b->size = n <= 8 ? 8 : 16;
        }
        size_t n = strnlen((const char *)p + BUILD_ID_HEADER, size - BUILD_ID_HEADER);
        b->path = xmalloc(n + 1);
        memcpy(b->path, p + BUILD_ID_HEADER, n);
        b->path[n] = '\0';
        return 0;
}

static void parse_build_ids(struct perf_data *pd, struct feat_cursor *c)
{
        while (c->size - c->pos >= 8) {
                uint32_t rsize = le_get16(c->p + c->pos + 6);
                if (rsize < BUILD_ID_HEADER || rsize > c->size - c->pos) {
                        c->is_bad = true;
                        return;
                }
                perf_data_build_id_add(pd, c->p + c->pos, rsize);
                c->pos += rsize;
        }
}

/* EVENT_DESC: u32 nr, u32 attr_size, then per event the attr, u32 nr_ids, its name, the ids.
   Names go to the event with one of the ids, else to the event of the same index. */
static void parse_event_desc(struct perf_data *pd, struct feat_cursor *c)
{
        uint32_t nr = cur_count(c, 8);
        uint32_t attr_size = cur_u32(c);
        for (uint32_t i = 0; i < nr && !c->is_bad; i++) {
                if (!cur_has(c, attr_size))
                        return;
                c->pos += attr_size;
                uint32_t nr_ids = cur_u32(c);
                char *name = cur_string(c);
                if (!name || !cur_has(c, (size_t)nr_ids * 8)) {
                        free(name);
                        c->is_bad = true;
                        return;
                }
                int32_t ev = -1;
                for (uint32_t k = 0; k < nr_ids && ev < 0; k++)
                        ev = perf_data_event_by_id(pd, le_get64(c->p + c->pos + 8ull * k));
                if (ev < 0 && i < pd->nr_events && nr == pd->nr_events)
                        ev = (int32_t)i;
                if (ev >= 0)
                        perf_data_set_name(&pd->events[ev], name, strlen(name));
                free(name);
                c->pos += (size_t)nr_ids * 8;
        }
}

static void parse_cmdline(struct perf_data_info *in, struct feat_cursor *c)
{
        uint32_t nr = cur_count(c, 4);
        size_t len = 0;
        char *line = xmalloc(1);
        line[0] = '\0';
        for (uint32_t i = 0; i < nr; i++) {
                char *arg = cur_string(c);
                if (!arg)
                        break;
                size_t n = strlen(arg);
                line = xrealloc(line, len + n + 2);
                if (len)
                        line[len++] = ' ';
                memcpy(line + len, arg, n + 1);
                len += n;
                free(arg);
        }
        free(in->cmdline);
        in->cmdline = line;
}

static void parse_pmus(struct perf_data_info *in, struct feat_cursor *c)
{
        uint32_t nr = cur_count(c, 8);
        for (uint32_t i = 0; i < nr; i++) {
                uint32_t type = cur_u32(c);
                char *name = cur_string(c);
                if (!name)
                        return;
                in->pmus = xrealloc(in->pmus, (in->nr_pmus + 1) * sizeof(*in->pmus));
                in->pmus[in->nr_pmus++] = (struct perf_data_pmu){type, name};
        }
}

static void parse_groups(struct perf_data_info *in, struct feat_cursor *c)
{
        uint32_t nr = cur_count(c, 12);
        for (uint32_t i = 0; i < nr; i++) {
                char *name = cur_string(c);
                uint32_t leader = cur_u32(c), nr_members = cur_u32(c);
                if (!name || c->is_bad) {
                        free(name);
                        return;
                }
                in->groups = xrealloc(in->groups, (in->nr_groups + 1) * sizeof(*in->groups));
                in->groups[in->nr_groups++] = (struct perf_data_group){name, leader, nr_members};
        }
}

int perf_data_feat_parse(struct perf_data *pd, uint32_t feat, const uint8_t *p, size_t size,
                         uint64_t offset)
{
        struct perf_data_info *in = &pd->info;
        struct feat_cursor c = {p, size, 0, false};
        if (feat >= PERF_DATA_FEAT_MAX)
                return 0;
        in->features[feat / 64] |= 1ull << (feat % 64);
        switch (feat) {
        case PERF_DATA_FEAT_TRACING_DATA:
                in->tracing_data = p;
                in->tracing_size = size;
                break;
        case PERF_DATA_FEAT_BUILD_ID: parse_build_ids(pd, &c); break;
        case PERF_DATA_FEAT_HOSTNAME: set_string(&in->hostname, &c); break;
        case PERF_DATA_FEAT_OSRELEASE: set_string(&in->osrelease, &c); break;
        case PERF_DATA_FEAT_VERSION: set_string(&in->version, &c); break;
        case PERF_DATA_FEAT_ARCH: set_string(&in->arch, &c); break;
        case PERF_DATA_FEAT_CPUDESC: set_string(&in->cpudesc, &c); break;
        case PERF_DATA_FEAT_CPUID: set_string(&in->cpuid, &c); break;
        case PERF_DATA_FEAT_NRCPUS:
                in->nr_cpus_avail = cur_u32(&c);
                in->nr_cpus_online = cur_u32(&c);
                break;
        case PERF_DATA_FEAT_TOTAL_MEM: in->total_mem_kb = cur_u64(&c); break;
        case PERF_DATA_FEAT_CMDLINE: parse_cmdline(in, &c); break;
        case PERF_DATA_FEAT_EVENT_DESC: parse_event_desc(pd, &c); break;
        case PERF_DATA_FEAT_PMU_MAPPINGS: parse_pmus(in, &c); break;
        case PERF_DATA_FEAT_GROUP_DESC: parse_groups(in, &c); break;
        case PERF_DATA_FEAT_CLOCKID: in->clockid = cur_u64(&c); break;
        case PERF_DATA_FEAT_CLOCK_DATA:
                if (cur_u32(&c) != 1) /* version */
                        break;
                in->clock_data_clockid = cur_u32(&c);
                in->clock_wall_ns = cur_u64(&c);
                in->clock_ref_ns = cur_u64(&c);
                in->has_clock_data = !c.is_bad;
                break;
        case PERF_DATA_FEAT_COMPRESSED:
                cur_u32(&c); /* version */
                in->compression_type = cur_u32(&c);
                in->compression_level = cur_u32(&c);
                cur_u32(&c); /* ratio */
                in->compression_mmap_len = cur_u32(&c);
                break;
        default: break;
        }
        if (c.is_bad) {
                perf_data_warn(pd, offset + c.pos, "feature %u (%zu bytes at %llu) is damaged",
                               feat, size, (unsigned long long)offset);
                return -EBADMSG;
        }
        return 0;
}

void perf_data_info_free(struct perf_data_info *in)
{
        free(in->hostname);
        free(in->osrelease);
        free(in->version);
        free(in->arch);
        free(in->cpudesc);
        free(in->cpuid);
        free(in->cmdline);
        for (uint32_t i = 0; i < in->nr_build_ids; i++)
                free(in->build_ids[i].path);
        free(in->build_ids);
        for (uint32_t i = 0; i < in->nr_pmus; i++)
                free(in->pmus[i].name);
        free(in->pmus);
        for (uint32_t i = 0; i < in->nr_groups; i++)
                free(in->groups[i].name);
        free(in->groups);
        memset(in, 0, sizeof(*in));
}
