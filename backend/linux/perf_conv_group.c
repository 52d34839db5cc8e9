/* SPDX-License-Identifier: MIT */
/* perf_conv_group.c: a leader-sampled group's members (perf record -e '{cycles,instructions}:S'):
 * at each of the leader's samples, a sample of each member whose count moved since that
 * counter's last read, where the leader's was taken, as perf script and perf report deliver
 * them (each value less the one last read with the same id; none where that is 0). */
#include "perf_conv_int.h"

#include "util/hash.h"
#include "util/xalloc.h"

struct conv_group_prev {
        uint64_t id;
        uint32_t tid;
        uint32_t is_used;
        uint64_t value;
};

static uint32_t prev_hash(uint64_t id, uint32_t tid)
{
        return (uint32_t)hash_mix64(id ^ ((uint64_t)tid << 40) ^ tid);
}

static void prev_grow(struct perf_conv *c)
{
        struct conv_group_prev *old = c->group_prev;
        uint32_t old_cap = old ? c->group_prev_mask + 1 : 0, cap = old_cap ? 2 * old_cap : 64;
        c->group_prev = xcalloc(cap, sizeof(*c->group_prev));
        c->group_prev_mask = cap - 1;
        for (uint32_t i = 0; i < old_cap; i++) {
                if (!old[i].is_used)
                        continue;
                uint32_t j = prev_hash(old[i].id, old[i].tid) & c->group_prev_mask;
                while (c->group_prev[j].is_used)
                        j = (j + 1) & c->group_prev_mask;
                c->group_prev[j] = old[i];
        }
        free(old);
}

/* The value last read of counter id (of thread tid, where each thread counts apart), 0 before
   its first read. */
static uint64_t *prev_value(struct perf_conv *c, uint64_t id, uint32_t tid)
{
        if (!c->group_prev || 2 * (c->nr_group_prev + 1) > c->group_prev_mask + 1)
                prev_grow(c);
        uint32_t j = prev_hash(id, tid) & c->group_prev_mask;
        for (;; j = (j + 1) & c->group_prev_mask) {
                struct conv_group_prev *e = &c->group_prev[j];
                if (!e->is_used) {
                        *e = (struct conv_group_prev){id, tid, 1, 0};
                        c->nr_group_prev++;
                        return &e->value;
                }
                if (e->id == id && e->tid == tid)
                        return &e->value;
        }
}

int conv_group_members(struct perf_conv *c, const struct perf_conv_event *ev,
                       const struct perf_sample *s, uint32_t cpu, uint64_t ts, uint32_t nr_frames)
{
        for (uint32_t k = 1; k < s->nr_values && k <= ev->nr_members; k++) {
                const struct perf_conv_event *m =
                        ev->members[k - 1] ? conv_event_of_id(c, ev->members[k - 1]) : NULL;
                if (!m || (m->kind != PERF_CONV_PROFILE && m->kind != PERF_CONV_PMC_SAMPLE))
                        continue;
                /* the counter's instance: its id (perf's key), else the member on this CPU */
                uint64_t id = (ev->read_format & PERF_FORMAT_ID)
                                      ? s->value_ids[k]
                                      : ((uint64_t)ev->members[k - 1] << 32 | s->cpu);
                uint64_t *prev = prev_value(c, id, ev->is_read_inherit ? s->tid : 0);
                uint64_t delta = s->values[k] - *prev;
                *prev = s->values[k];
                if (!delta)
                        continue;
                bool is_direct;
                uint32_t rsize = 16 + 16;
                uint8_t *out = conv_rec_begin(c, cpu, rsize, &is_direct);
                uint8_t *p = conv_perfinfo_head(out,
                                                m->kind == PERF_CONV_PROFILE
                                                        ? PERFINFO_LOG_TYPE_SAMPLED_PROFILE
                                                        : PERFINFO_LOG_TYPE_PMC_INTERRUPT,
                                                2, ts, NULL, 0, 16);
                memset(p, 0, 16);
                st64(p, s->ip);
                st32(p + 8, s->tid);
                st16(p + 12, m->kind == PERF_CONV_PROFILE ? 1 : m->profile_source);
                int rc = conv_rec_end(c, cpu, out, rsize, is_direct);
                if (rc == 0 && ev->has_stack && nr_frames)
                        rc = conv_emit_stack(c, cpu, ts, s->pid, s->tid, nr_frames);
                if (rc < 0)
                        return rc;
        }
        return 0;
}
