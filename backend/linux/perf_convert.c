/* SPDX-License-Identifier: MIT */
/* perf_convert.c: the converter's core: its life, clocks, the kernel addresses it saw, record
 * dispatch and kernel symbols. */
#include "perf_conv_int.h"

static void conv_umap_init(struct umap *m, uint32_t esize, uint32_t cap)
{
        m->esize = esize;
        m->mask = cap - 1;
        m->nr = 0;
        m->slots = xcalloc(cap, esize);
        for (uint32_t i = 0; i < cap; i++)
                *umap_key(m, i) = CONV_NONE;
}

static void conv_umap_grow(struct umap *m)
{
        struct umap n;
        conv_umap_init(&n, m->esize, (m->mask + 1) * 2);
        for (uint32_t i = 0; i <= m->mask; i++) {
                uint32_t *k = umap_key(m, i);
                if (*k == CONV_NONE)
                        continue;
                uint32_t j = (uint32_t)hash_mix64_half(*k) & n.mask;
                while (*umap_key(&n, j) != CONV_NONE)
                        j = (j + 1) & n.mask;
                memcpy(umap_key(&n, j), k, m->esize);
                n.nr++;
        }
        free(m->slots);
        n.gen = m->gen;
        *m = n;
}

/* The entry of key, added zeroed (with its key) when absent. *is_new says which. */
void *conv_umap_get(struct umap *m, uint32_t key, bool *is_new)
{
        void *e = conv_umap_find(m, key);
        *is_new = false;
        m->gen++;
        if (e || key == CONV_NONE)
                return e;
        if ((m->nr + 1) * 2 > m->mask + 1)
                conv_umap_grow(m);
        uint32_t i = (uint32_t)hash_mix64_half(key) & m->mask;
        while (*umap_key(m, i) != CONV_NONE)
                i = (i + 1) & m->mask;
        uint32_t *k = umap_key(m, i);
        memset(k, 0, m->esize);
        *k = key;
        m->nr++;
        *is_new = true;
        return k;
}

void conv_umap_remove(struct umap *m, void *entry)
{
        uint32_t i = (uint32_t)(((uint8_t *)entry - m->slots) / m->esize), j = i;

        for (;;) {
                j = (j + 1) & m->mask;
                uint32_t *kj = umap_key(m, j);
                if (*kj == CONV_NONE)
                        break;
                uint32_t h = (uint32_t)hash_mix64_half(*kj) & m->mask;
                bool is_between = i <= j ? (i < h && h <= j) : (i < h || h <= j);
                if (!is_between) {
                        memcpy(umap_key(m, i), kj, m->esize);
                        i = j;
                }
        }
        *umap_key(m, i) = CONV_NONE;
        m->nr--;
        m->gen++;
}

int perf_conv_new(struct perf_conv **out, const struct perf_conv_ops *ops, void *ctx,
                  uint32_t nr_cpus)
{
        *out = NULL;
        if (!ops || !ops->emit || !ops->event_of || !ops->cmdline_of || !ops->build_id_of ||
            !ops->uid_of || nr_cpus == 0)
                return -EINVAL;

        struct perf_conv *c = xcalloc(1, sizeof(*c));
        c->ops = *ops;
        c->files = &perf_conv_files_live;
        c->ctx = ctx;
        c->nr_cpus = nr_cpus;
        c->last_ts = xcalloc(nr_cpus, sizeof(*c->last_ts));
        c->cpu_tid = xcalloc(nr_cpus, sizeof(*c->cpu_tid));
        c->cstate = xcalloc(nr_cpus, sizeof(*c->cstate));
        for (uint32_t i = 0; i < nr_cpus; i++)
                c->cpu_tid[i] = CONV_NONE;
        c->tick_ns = DEFAULT_TICK_NS;
        c->has_process = c->has_thread = c->has_image = true;
        conv_umap_init(&c->tasks, sizeof(struct conv_task), 1024);
        conv_umap_init(&c->procs, sizeof(struct conv_proc), 256);
        conv_umap_init(&c->waits, sizeof(struct conv_wait), 64);
        conv_umap_init(&c->stacks, sizeof(struct conv_stack), 256);
        /* not zeroed: a slot is read only where wait_is_set says it was written, and the
           512 KiB zeroed were ~128 page faults at every start and every perf.data read */
        c->wait_since = xmalloc(CONV_WAIT_DIRECT * sizeof(*c->wait_since));
        c->wait_is_set = xcalloc(CONV_WAIT_DIRECT / 64, sizeof(*c->wait_is_set));
        c->kaddrs_mask = 4096 - 1;
        c->kaddrs = xcalloc(c->kaddrs_mask + 1, sizeof(*c->kaddrs));
        c->kframe_lo = UINT64_MAX;
        c->rec = xcalloc(1, PERF_CONV_MAX_RECORD + 256);
        c->payload = xcalloc(1, PERF_CONV_MAX_RECORD + 256);
        c->stack_rec = xcalloc(1, STACK_REC_HEAD + 8 * (CONV_MAX_FRAMES + 1));
        c->frames = (uint64_t *)(void *)(c->stack_rec + STACK_REC_HEAD);
        c->text = xcalloc(1, CONV_MAX_CMDLINE + 1);
        *out = c;
        return 0;
}

void conv_proc_free_images(struct conv_proc *p)
{
        for (uint32_t i = 0; i < p->nr_images; i++)
                conv_path_put(p->images[i].path);
        free(p->images);
        p->images = NULL;
        p->nr_images = p->cap_images = p->nr_pending = 0;
}

void conv_proc_release(struct conv_proc *p)
{
        conv_proc_free_images(p);
        free(p->cmdline);
        p->cmdline = NULL;
}

void perf_conv_free(struct perf_conv *c)
{
        if (!c)
                return;
        for (uint32_t i = 0; c->procs.slots && i <= c->procs.mask; i++) {
                struct conv_proc *p = (struct conv_proc *)(void *)umap_key(&c->procs, i);
                if (p->pid != CONV_NONE)
                        conv_proc_release(p);
        }
        for (uint32_t i = 0; c->stacks.slots && i <= c->stacks.mask; i++) {
                struct conv_stack *k = (struct conv_stack *)(void *)umap_key(&c->stacks, i);
                if (k->tid != CONV_NONE) {
                        conv_kframes_put(c, k->kf);
                        free(k->frames);
                }
        }
        free(c->stacks.slots);
        conv_kchains_free(c);
        conv_stack_pool_free(&c->stack_pool);
        unwind_module_close(c->uw_vdso);
        unwind_cache_free(c->uw_cache);
        free(c->last_out);
        free(c->procs.slots);
        free(c->tasks.slots);
        free(c->group_prev);
        free(c->waits.slots);
        free(c->wait_since);
        free(c->wait_is_set);
        free(c->kaddrs);
        free(c->last_ts);
        free(c->cpu_tid);
        free(c->cstate);
        free(c->rec);
        free(c->payload);
        free(c->stack_rec);
        free(c->text);
        free(c);
}

void perf_conv_set_sink(struct perf_conv *c, const struct perf_conv_sink *sink)
{
        c->has_sink = sink != NULL;
        /* no sink, no room: conv_rec_begin_stacked asks the room hook alone */
        c->sink = sink ? *sink : (struct perf_conv_sink){0};
}

void perf_conv_set_masks(struct perf_conv *c, const PERFINFO_GROUPMASK *masks)
{
        c->has_process = masks->Masks[0] & EVENT_TRACE_FLAG_PROCESS;
        c->has_thread = masks->Masks[0] & EVENT_TRACE_FLAG_THREAD;
        c->has_image = masks->Masks[0] & EVENT_TRACE_FLAG_IMAGE_LOAD;
}

void perf_conv_set_timer_resolution(struct perf_conv *c, uint32_t resolution_100ns)
{
        c->tick_ns = resolution_100ns ? (uint64_t)resolution_100ns * 100 : DEFAULT_TICK_NS;
}

void perf_conv_get_stats(const struct perf_conv *c, struct perf_conv_stats *st)
{
        *st = c->st;
}

uint64_t perf_conv_stamp(struct perf_conv *c, uint32_t cpu, uint64_t ts)
{
        return conv_stamp(c, cpu, ts);
}

void conv_note_kaddr_slow(struct perf_conv *c, uint64_t a)
{
        if ((c->nr_kaddrs + 1) * 2 > c->kaddrs_mask + 1) {
                if (c->nr_kaddrs >= CONV_KADDR_MAX)
                        return;
                uint32_t cap = (c->kaddrs_mask + 1) * 2;
                uint64_t *n = xcalloc(cap, sizeof(*n));
                for (uint32_t i = 0; i <= c->kaddrs_mask; i++) {
                        if (!c->kaddrs[i])
                                continue;
                        uint32_t j = (uint32_t)hash_mix64_half(c->kaddrs[i]) & (cap - 1);
                        while (n[j])
                                j = (j + 1) & (cap - 1);
                        n[j] = c->kaddrs[i];
                }
                free(c->kaddrs);
                c->kaddrs = n;
                c->kaddrs_mask = cap - 1;
        }
        for (uint32_t i = (uint32_t)hash_mix64_half(a) & c->kaddrs_mask;;
             i = (i + 1) & c->kaddrs_mask) {
                if (c->kaddrs[i] == a)
                        return;
                if (!c->kaddrs[i]) {
                        c->kaddrs[i] = a;
                        c->nr_kaddrs++;
                        return;
                }
        }
}

int conv_emit(struct perf_conv *c, uint32_t cpu, uint32_t size)
{
        c->st.nr_events++;
        return c->ops.emit(c->ctx, cpu, c->rec, size);
}

const struct perf_conv_event *conv_event_of_id(struct perf_conv *c, uint64_t id)
{
        return c->ops.event_of(c->ctx, id);
}

/* ---- records ---- */

uint64_t perf_conv_record_time(const struct perf_conv *c, const uint8_t *rec, uint32_t size,
                               uint32_t ring_cpu, uint32_t *cpu)
{
        const struct perf_conv_event *ev;
        return perf_conv_record_time_ev(c, rec, size, ring_cpu, cpu, &ev);
}

uint64_t perf_conv_record_time_ev(const struct perf_conv *c, const uint8_t *rec, uint32_t size,
                                  uint32_t ring_cpu, uint32_t *cpu,
                                  const struct perf_conv_event **evp)
{
        struct perf_conv *mc = (struct perf_conv *)c; /* the lookup hook takes no const */
        *evp = conv_record_event(mc, rec, size);
        return perf_conv_record_time_of(c, *evp, rec, size, ring_cpu, cpu);
}

/* perf_conv_record_time_of of any other record (ev's layout not a live session's): apart, so
   that the common case is a few instructions without a frame. */
static __attribute__((noinline)) uint64_t record_time_slow(const struct perf_conv *c,
                                                           const struct perf_conv_event *ev,
                                                           const uint8_t *rec, uint32_t size,
                                                           uint32_t ring_cpu, uint32_t *cpu)
{
        const struct perf_event_header *h = (const void *)rec;
        if (h->type == PERF_RECORD_SAMPLE) {
                /* the fields up to CPU have fixed places: no parse (this runs for every record) */
                if (!ev || !(ev->sample_type & PERF_SAMPLE_TIME))
                        return 0;
                uint64_t st = ev->sample_type;
                uint32_t at = 8 + ((st & PERF_SAMPLE_IDENTIFIER) ? 8 : 0) +
                              ((st & PERF_SAMPLE_IP) ? 8 : 0) + ((st & PERF_SAMPLE_TID) ? 8 : 0);
                if (at + 8 > size)
                        return 0;
                uint64_t time = le_get64(rec + at);
                if (st & PERF_SAMPLE_CPU) {
                        uint32_t cpu_at = at + 8 + ((st & PERF_SAMPLE_ADDR) ? 8 : 0) +
                                          ((st & PERF_SAMPLE_ID) ? 8 : 0) +
                                          ((st & PERF_SAMPLE_STREAM_ID) ? 8 : 0);
                        if (cpu_at + 4 <= size)
                                *cpu = conv_writer_cpu(c, true, le_get32(rec + cpu_at), ring_cpu);
                }
                return time;
        }
        /* every other record ends in the sample_id trailer (sample_id_all) */
        struct perf_sample_id sid;
        if (conv_sample_id(ev, rec, size, &sid) < 0)
                return 0;
        *cpu = conv_writer_cpu(c, sid.has_cpu, sid.cpu, ring_cpu);
        return sid.time;
}

uint64_t perf_conv_record_time_of(const struct perf_conv *c, const struct perf_conv_event *ev,
                                  const uint8_t *rec, uint32_t size, uint32_t ring_cpu,
                                  uint32_t *cpu)
{
        *cpu = ring_cpu;
        /* a live session's records (this runs for every record) */
        uint32_t at = perf_conv_live_time_at(ev, rec, size);
        if (__builtin_expect(at != 0, 1)) {
                uint32_t c_cpu = le_get32(rec + at + 8);
                *cpu = c_cpu < c->nr_cpus ? c_cpu : ring_cpu;
                return le_get64(rec + at);
        }
        if (size < 16)
                return 0;
        return record_time_slow(c, ev, rec, size, ring_cpu, cpu);
}

int perf_conv_record(struct perf_conv *c, uint32_t ring_cpu, const uint8_t *rec, uint32_t size)
{
        return perf_conv_record_ev(c, ring_cpu, rec, size, conv_record_event(c, rec, size));
}

int perf_conv_record_ev(struct perf_conv *c, uint32_t ring_cpu, const uint8_t *rec, uint32_t size,
                        const struct perf_conv_event *ev)
{
        const struct perf_event_header *h = (const void *)rec;
        int rc;

        if (size < sizeof(*h) || h->size != size) {
                c->st.nr_bad++;
                return -EBADMSG;
        }
        c->st.nr_records++;
        /* a sample before the others: most records are, and a jump through the switch's table
           costs them more than a compare; conv_sample counts the samples that do not parse */
        if (__builtin_expect(h->type == PERF_RECORD_SAMPLE, 1))
                return conv_sample(c, ring_cpu, rec, size, ev);
        switch (h->type) {
        case PERF_RECORD_MMAP2: rc = conv_mmap2(c, ring_cpu, rec, size, ev); break;
        case PERF_RECORD_COMM: rc = conv_comm(c, ring_cpu, rec, size, ev); break;
        case PERF_RECORD_FORK:
        case PERF_RECORD_EXIT: rc = conv_task(c, ring_cpu, rec, size, ev); break;
        case PERF_RECORD_LOST: rc = conv_lost(c, ring_cpu, rec, size, ev); break;
        case PERF_RECORD_SWITCH:
        case PERF_RECORD_SWITCH_CPU_WIDE: rc = conv_switch(c, ring_cpu, rec, size, ev); break;
        case PERF_RECORD_KSYMBOL: rc = conv_ksymbol(c, ring_cpu, rec, size, ev); break;
        default: rc = 0; break; /* throttling and the like: nothing to write */
        }
        if (rc == -EBADMSG)
                c->st.nr_bad++;
        return rc;
}

/* ---- kernel symbols ---- */

bool perf_conv_kernel_range(const struct perf_conv *c, uint64_t *lo, uint64_t *hi)
{
        *lo = c->kframe_lo;
        *hi = c->kframe_hi;
        return c->kframe_lo <= c->kframe_hi;
}

static int u64_cmp(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

uint64_t *perf_conv_kernel_addrs(const struct perf_conv *c, size_t *nr)
{
        *nr = 0;
        if (!c->nr_kaddrs)
                return NULL;
        uint64_t *out = xmalloc(c->nr_kaddrs * sizeof(*out));
        for (uint32_t i = 0; i <= c->kaddrs_mask; i++) {
                if (c->kaddrs[i])
                        out[(*nr)++] = c->kaddrs[i];
        }
        qsort(out, *nr, sizeof(*out), u64_cmp);
        return out;
}

static inline uint64_t addr_at(const void *base, size_t stride, size_t i)
{
        uint64_t a;
        memcpy(&a, (const uint8_t *)base + i * stride, sizeof(a));
        return a;
}

size_t perf_conv_last_at_or_below(const void *base, size_t stride, size_t nr, size_t lo, uint64_t a)
{
        size_t step = 1, hi = lo + 1;
        while (hi < nr && addr_at(base, stride, hi) <= a) {
                lo = hi;
                step *= 2;
                hi = lo + step;
        }
        if (hi > nr)
                hi = nr;
        while (hi - lo > 1) {
                size_t mid = lo + (hi - lo) / 2;
                if (addr_at(base, stride, mid) <= a)
                        lo = mid;
                else
                        hi = mid;
        }
        return lo;
}

int conv_emit_kernel_symbol(struct perf_conv *c, uint32_t cpu, uint64_t ts,
                            const struct perf_ksym *sym)
{
        EVENT_DESCRIPTOR desc = {ETWTOP_EVENT_KERNEL_SYMBOL, 1, 0, 4, 0, 0, 0};
        uint8_t *p = c->payload;
        st64(p, sym->addr);
        st64(p + 8, sym->size);
        uint32_t n = 16 + conv_put_cstr(p + 16, sym->name, 1024);
        n += conv_put_cstr(p + n, sym->module ? sym->module : "", 256);
        uint32_t size =
                etl_record_event64(c->rec, &etwtop_provider_guid, &desc, 0, 0, ts, NULL, 0, p, n);
        return conv_emit(c, cpu, size);
}

int perf_conv_kernel_symbols(struct perf_conv *c, const struct perf_ksym *syms, size_t nr,
                             uint32_t cpu, uint64_t ts)
{
        if (!nr)
                return 0;
        /* the addresses in order: one walk over the symbols (a search of the whole list for
           each of a session's thousands was most of a recording's close) */
        size_t nr_addrs = 0, lo = 0, nr_hit = 0;
        uint64_t *addrs = perf_conv_kernel_addrs(c, &nr_addrs);
        /* the symbols hit, ascending (the addresses are), each once */
        size_t *hit = nr_addrs ? xmalloc(nr_addrs * sizeof(*hit)) : NULL;
        for (size_t k = 0; k < nr_addrs; k++) {
                uint64_t a = addrs[k];
                lo = perf_conv_last_at_or_below(syms, sizeof(*syms), nr, lo, a);
                if (syms[lo].addr <= a && a - syms[lo].addr < syms[lo].size &&
                    (!nr_hit || hit[nr_hit - 1] != lo))
                        hit[nr_hit++] = lo;
        }
        free(addrs);
        int rc = 0, nr_written = 0;
        for (size_t k = 0; k < nr_hit && rc == 0; k++) {
                size_t i = hit[k];
                rc = conv_emit_kernel_symbol(c, cpu, ts, &syms[i]);
                nr_written++;
        }
        free(hit);
        return rc < 0 ? rc : nr_written;
}
