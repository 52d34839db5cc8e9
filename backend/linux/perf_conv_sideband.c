/* SPDX-License-Identifier: MIT */
/* perf_conv_sideband.c: side-band records and rundown: COMM, FORK, EXIT, MMAP2, LOST as process,
 * thread and image events. */
#include "perf_conv_int.h"

/* ---- rundown entry points ---- */

int perf_conv_process(struct perf_conv *c, uint16_t hook, uint32_t cpu, uint64_t ts,
                      const struct perf_conv_process *p)
{
        if (hook == WMI_LOG_TYPE_PROCESS_DC_START || hook == WMI_LOG_TYPE_PROCESS_CREATE) {
                struct conv_proc *e = conv_proc_get(c, p->pid);
                if (e) {
                        e->ppid = p->ppid;
                        e->session_id = p->session_id;
                        e->uid = p->uid;
                        conv_clip(e->comm, p->name, sizeof(e->comm) - 1);
                        conv_proc_set_cmdline(e, p->cmdline);
                }
        }
        return conv_emit_process(c, hook, cpu, ts, 0, p->pid, p->pid, p->ppid, p->session_id,
                                 hook == WMI_LOG_TYPE_PROCESS_DC_END ? 0 : 259, p->uid, p->name,
                                 p->cmdline ? p->cmdline : "");
}

int perf_conv_thread(struct perf_conv *c, uint16_t hook, uint32_t cpu, uint64_t ts,
                     const struct perf_conv_thread *t)
{
        if (hook == WMI_LOG_TYPE_THREAD_DC_START || hook == WMI_LOG_TYPE_THREAD_CREATE)
                conv_task_set(c, t->tid, t->pid, t->name, t->prio);
        return conv_emit_thread(c, hook, cpu, ts, t->tid, t->pid, t->pid, t->tid, t->prio, t->name);
}

int perf_conv_image(struct perf_conv *c, uint16_t hook, uint32_t cpu, uint64_t ts,
                    const struct perf_conv_image *im)
{
        if (hook != WMI_LOG_TYPE_IMAGE_DC_END && hook != WMI_LOG_TYPE_IMAGE_UNLOAD) {
                struct conv_proc *p = conv_proc_get(c, im->pid);
                if (p) {
                        uint32_t was = p->nr_pending;
                        conv_proc_add_image(p, im);
                        conv_pending_settle(c, was, p);
                }
        }
        return conv_emit_image(c, hook, cpu, ts, 0, im);
}

int perf_conv_rundown_end(struct perf_conv *c, uint32_t cpu, uint64_t ts)
{
        int rc = 0;

        for (uint32_t i = 0; c->has_process && i <= c->procs.mask && rc == 0; i++) {
                const struct conv_proc *p = (const void *)umap_key(&c->procs, i);
                if (p->pid == CONV_NONE || !p->comm[0])
                        continue;
                rc = conv_emit_process(c, WMI_LOG_TYPE_PROCESS_DC_END, cpu, ts, 0, p->pid, p->pid,
                                       p->ppid == CONV_NONE ? 0 : p->ppid, p->session_id, 0, p->uid,
                                       p->comm, p->cmdline ? p->cmdline : "");
        }
        for (uint32_t i = 0; c->has_thread && i <= c->tasks.mask && rc == 0; i++) {
                const struct conv_task *t = (const void *)umap_key(&c->tasks, i);
                if (t->tid == CONV_NONE)
                        continue;
                rc = conv_emit_thread(c, WMI_LOG_TYPE_THREAD_DC_END, cpu, ts, t->tid, t->pid,
                                      t->pid, t->tid, t->prio, t->comm);
        }
        for (uint32_t i = 0; c->has_image && i <= c->procs.mask && rc == 0; i++) {
                const struct conv_proc *p = (const void *)umap_key(&c->procs, i);
                if (p->pid == CONV_NONE)
                        continue;
                for (uint32_t j = 0; j < p->nr_images && rc == 0; j++) {
                        const struct conv_image *e = &p->images[j];
                        struct perf_conv_image im = {
                                p->pid,           e->base,
                                e->size,          e->pgoff,
                                e->path,          e->build_id,
                                e->build_id_size, e->flags & CONV_IMAGE_EVENT_FLAGS};
                        rc = conv_emit_image(c, WMI_LOG_TYPE_IMAGE_DC_END, cpu, ts, 0, &im);
                }
        }
        if (rc == 0 && (c->uw_st.walk != PERF_CONV_WALK_FP || c->uw_st.nr_walks))
                rc = perf_conv_unwind_stats(c, cpu, ts);
        return rc;
}

/* ---- side-band records ---- */

/* The event of a record: by the identifier after the header of a sample, by the last u64 of the
   sample_id trailer of any other record; NULL when unknown or the record is too short. */
const struct perf_conv_event *conv_record_event(struct perf_conv *c, const uint8_t *rec,
                                                uint32_t size)
{
        if (size < 16)
                return NULL;
        const struct perf_event_header *h = (const void *)rec;
        return conv_event_of_id(c,
                                le_get64(h->type == PERF_RECORD_SAMPLE ? rec + 8 : rec + size - 8));
}

/* The trailer of a non-sample record whose event (record_event) is ev. */
int conv_sample_id(const struct perf_conv_event *ev, const uint8_t *rec, uint32_t size,
                   struct perf_sample_id *sid)
{
        return perf_sample_id_parse(rec, size, ev ? ev->sample_type : PERF_CONV_SAMPLE_ID_BITS,
                                    sid);
}

/* The event of the trailer's id: ev itself when the id is the trailer's last u64. */
const struct perf_conv_event *conv_sid_event(struct perf_conv *c, const struct perf_conv_event *ev,
                                             const struct perf_sample_id *sid)
{
        if (ev && !(ev->sample_type & PERF_SAMPLE_IDENTIFIER))
                return conv_event_of_id(c, sid->id);
        return ev;
}

int conv_ksymbol(struct perf_conv *c, uint32_t ring_cpu, const uint8_t *rec, uint32_t size,
                 const struct perf_conv_event *ev)
{
        /* header, addr u64, len u32, ksym_type u16, flags u16, name (NUL-padded to 8 bytes),
           the sample_id trailer */
        enum { NAME_OFF = 24, KSYM_TYPE_BPF = 1, KSYM_FLAG_UNREGISTER = 1 };
        struct perf_sample_id sid;
        if (size <= NAME_OFF || conv_sample_id(ev, rec, size, &sid) < 0)
                return -EBADMSG;
        if (le_get16(rec + 22) & KSYM_FLAG_UNREGISTER)
                return 0;
        char name[256];
        size_t max = size - NAME_OFF < sizeof(name) - 1 ? size - NAME_OFF : sizeof(name) - 1;
        conv_clip(name, (const char *)rec + NAME_OFF, max);
        if (!name[0] || (le_get16(rec + 20) != KSYM_TYPE_BPF && strncmp(name, "bpf_", 4) != 0))
                return 0;
        uint32_t cpu = conv_writer_cpu(c, sid.has_cpu, sid.cpu, ring_cpu);
        struct perf_ksym sym = {le_get64(rec + 8), le_get32(rec + 16), name, "bpf"};
        return conv_emit_kernel_symbol(c, cpu, conv_stamp(c, cpu, sid.time), &sym);
}

int conv_comm(struct perf_conv *c, uint32_t ring_cpu, const uint8_t *rec, uint32_t size,
              const struct perf_conv_event *ev)
{
        struct perf_sample_id sid;
        const struct perf_event_header *h = (const void *)rec;
        char comm[17];

        if (size < 16 || conv_sample_id(ev, rec, size, &sid) < 0)
                return -EBADMSG;
        uint32_t pid = le_get32(rec + 8), tid = le_get32(rec + 12);
        if (!conv_is_own(c, pid))
                return 0;
        size_t max = size - 16 < 16 ? size - 16 : 16;
        conv_clip(comm, (const char *)rec + 16, max);
        uint32_t cpu = conv_writer_cpu(c, sid.has_cpu, sid.cpu, ring_cpu);
        uint64_t ts = conv_stamp(c, cpu, sid.time);
        int rc = 0;

        conv_task_set(c, tid, pid, comm, -1);
        if (pid == tid && !(h->misc & PERF_RECORD_MISC_COMM_EXEC)) {
                /* a process no FORK, exec or rundown named (a perf.data's COMM): its name, for
                   the Process rundown at the end (perf_b.data's "elf" had none) */
                struct conv_proc *p = conv_proc_get(c, pid);
                if (p && !p->comm[0])
                        conv_clip(p->comm, comm, sizeof(p->comm) - 1);
        }
        if (h->misc & PERF_RECORD_MISC_COMM_EXEC) {
                /* exec: Windows has none. The process gets a new Process/Start with the new
                   image name and command line; its images start over. */
                struct conv_proc *p = conv_proc_get(c, pid);
                if (p) {
                        conv_clip(p->comm, comm, sizeof(p->comm) - 1);
                        uint32_t was = p->nr_pending;
                        conv_proc_free_images(p);
                        conv_pending_settle(c, was, p);
                        c->text[0] = 0;
                        c->ops.cmdline_of(c->ctx, pid, c->text, CONV_MAX_CMDLINE + 1);
                        conv_proc_set_cmdline(p, c->text);
                        /* a set-user-ID program runs as its file's owner from here */
                        uint32_t uid = c->ops.uid_of(c->ctx, pid);
                        if (uid != PERF_CONV_NO_UID)
                                p->uid = uid;
                        if (c->has_process)
                                rc = conv_emit_process(c, WMI_LOG_TYPE_PROCESS_CREATE, cpu, ts, tid,
                                                       pid, pid, p->ppid == CONV_NONE ? 0 : p->ppid,
                                                       p->session_id, 259, p->uid, comm, c->text);
                }
        }
        if (rc == 0 && c->has_thread)
                rc = conv_emit_thread_name(c, cpu, ts, pid, tid, comm);
        return rc;
}

static int conv_fork(struct perf_conv *c, uint32_t cpu, uint64_t ts, uint32_t pid, uint32_t ppid,
                     uint32_t tid, uint32_t ptid)
{
        char comm[16];
        int rc = 0;

        conv_clip(comm, conv_comm_of(c, ptid, ppid), sizeof(comm) - 1);
        const struct conv_task *parent_task = conv_umap_find(&c->tasks, ptid);
        int64_t prio = parent_task ? parent_task->prio : -1;

        if (pid == tid) {
                /* a new process: a copy of its parent, images included */
                struct conv_proc *p = conv_proc_get(c, pid);
                if (!p)
                        return 0;
                /* looked up after proc_get, which may move the table */
                const struct conv_proc *parent = conv_umap_find(&c->procs, ppid);
                uint32_t was = p->nr_pending;
                conv_proc_release(p);
                conv_pending_settle(c, was, p);
                p->ppid = ppid;
                p->session_id = parent ? parent->session_id : 0;
                /* a child runs as its parent's user (fork copies the credentials); /proc
                   may say what an exec made of it since */
                p->uid = parent && parent->uid != PERF_CONV_NO_UID ? parent->uid
                                                                   : c->ops.uid_of(c->ctx, pid);
                conv_clip(p->comm, comm, sizeof(p->comm) - 1);
                c->text[0] = 0;
                c->ops.cmdline_of(c->ctx, pid, c->text, CONV_MAX_CMDLINE + 1);
                if (!c->text[0] && parent && parent->cmdline)
                        conv_clip(c->text, parent->cmdline, CONV_MAX_CMDLINE);
                conv_proc_set_cmdline(p, c->text);
                if (c->has_process)
                        rc = conv_emit_process(c, WMI_LOG_TYPE_PROCESS_CREATE, cpu, ts, ptid, ppid,
                                               pid, ppid, p->session_id, 259, p->uid, comm,
                                               c->text);
                conv_task_set(c, tid, pid, comm, prio);
                if (rc == 0 && c->has_thread)
                        rc = conv_emit_thread(c, WMI_LOG_TYPE_THREAD_CREATE, cpu, ts, ptid, ppid,
                                              pid, tid, prio, comm);
                /* its images: its parent's, shared; their Image/Loads written before its
                   first sample (conv_inherited_flush), and not at all where it execs first */
                if (parent && parent->nr_images) {
                        conv_proc_inherit(p, parent, c->has_image);
                        c->nr_pending_procs += p->nr_pending != 0;
                }
                return rc;
        }
        conv_task_set(c, tid, pid, comm, prio);
        if (c->has_thread)
                rc = conv_emit_thread(c, WMI_LOG_TYPE_THREAD_CREATE, cpu, ts, ptid, ppid, pid, tid,
                                      prio, comm);
        return rc;
}

/* tid has ended: it waits no more. */
static void conv_wait_forget(struct perf_conv *c, uint32_t tid)
{
        if (tid < CONV_WAIT_DIRECT) {
                c->wait_is_set[tid / 64] &= ~(1ull << (tid % 64));
                return;
        }
        struct conv_wait *w = conv_umap_find(&c->waits, tid);
        if (w)
                conv_umap_remove(&c->waits, w);
}

static int conv_exit(struct perf_conv *c, uint32_t cpu, uint64_t ts, uint32_t pid, uint32_t tid)
{
        char comm[16];
        int rc = 0;
        const struct conv_task *t = conv_umap_find(&c->tasks, tid);
        int64_t prio = t ? t->prio : -1;

        conv_clip(comm, conv_comm_of(c, tid, pid), sizeof(comm) - 1);
        if (c->has_thread)
                rc = conv_emit_thread(c, WMI_LOG_TYPE_THREAD_DELETE, cpu, ts, tid, pid, pid, tid,
                                      prio, comm);
        if (t)
                conv_umap_remove(&c->tasks, (void *)t);
        conv_wait_forget(c, tid);
        conv_stack_keep(c, tid, pid, 0);
        if (pid != tid)
                return rc;

        struct conv_proc *p = conv_umap_find(&c->procs, pid);
        if (rc == 0 && c->has_process)
                rc = conv_emit_process(c, WMI_LOG_TYPE_PROCESS_DELETE, cpu, ts, tid, pid, pid,
                                       p && p->ppid != CONV_NONE ? p->ppid : 0,
                                       p ? p->session_id : 0, 0, p ? p->uid : PERF_CONV_NO_UID,
                                       p ? p->comm : comm, p && p->cmdline ? p->cmdline : "");
        if (p) {
                uint32_t was = p->nr_pending;
                conv_proc_release(p);
                conv_pending_settle(c, was, p);
                conv_umap_remove(&c->procs, p);
        }
        conv_tasks_drop_process(c, pid);
        return rc;
}

int conv_task(struct perf_conv *c, uint32_t ring_cpu, const uint8_t *rec, uint32_t size,
              const struct perf_conv_event *ev)
{
        struct perf_sample_id sid;
        const struct perf_event_header *h = (const void *)rec;

        if (size < 32 || conv_sample_id(ev, rec, size, &sid) < 0)
                return -EBADMSG;
        ev = conv_sid_event(c, ev, &sid);
        if (ev && ev->skips_task_records)
                return 0;
        uint32_t pid = le_get32(rec + 8), ppid = le_get32(rec + 12);
        uint32_t tid = le_get32(rec + 16), ptid = le_get32(rec + 20);
        if (!conv_is_own(c, pid))
                return 0; /* with -p, a child process (its FORK comes to its parent's events) */
        uint64_t time = sid.has_time ? sid.time : le_get64(rec + 24);
        uint32_t cpu = conv_writer_cpu(c, sid.has_cpu, sid.cpu, ring_cpu);
        uint64_t ts = conv_stamp(c, cpu, time);

        if (h->type == PERF_RECORD_FORK)
                return conv_fork(c, cpu, ts, pid, ppid, tid, ptid);
        return conv_exit(c, cpu, ts, pid, tid);
}

/* MMAP2 (LINUX-MAPPING.md 3.2): addr, len, pgoff, then maj/min/ino or the build-id. */
int conv_mmap2(struct perf_conv *c, uint32_t ring_cpu, const uint8_t *rec, uint32_t size,
               const struct perf_conv_event *ev)
{
        struct perf_sample_id sid;
        const struct perf_event_header *h = (const void *)rec;
        uint8_t bid[BUILD_ID_MAX];
        uint32_t bid_size = 0, flags = 0;

        if (size < 73 || conv_sample_id(ev, rec, size, &sid) < 0)
                return -EBADMSG;
        uint32_t pid = le_get32(rec + 8), tid = le_get32(rec + 12);
        /* code unless the kernel says data (MISC_MMAP_DATA: a map of no VM_EXEC, which it
           reports only to events with mmap_data), as perf reads it: the protection bits are
           not always set (perf 6.17's kernel and module maps, a [vdso] map of Linux 5.x "---p") */
        uint32_t prot = le_get32(rec + 64);
        if (((h->misc & PERF_RECORD_MISC_MMAP_DATA) || (!(prot & PROT_EXEC) && prot)) ||
            !conv_is_own(c, pid))
                return 0;
        char path[CONV_MAX_PATH + 1];
        conv_clip(path, (const char *)rec + 72,
                  size - 72 < CONV_MAX_PATH ? size - 72 : CONV_MAX_PATH);
        if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
                bid_size = rec[40] <= BUILD_ID_MAX ? rec[40] : BUILD_ID_MAX;
                memcpy(bid, rec + 44, bid_size);
                flags = ETWTOP_IMAGE_FLAG_BUILD_ID_FROM_RECORD;
        } else if (path[0] == '/') {
                bid_size = c->ops.build_id_of(c->ctx, path, bid, BUILD_ID_MAX);
                if (bid_size > BUILD_ID_MAX)
                        bid_size = 0;
                flags = bid_size ? ETWTOP_IMAGE_FLAG_BUILD_ID_FROM_FILE : 0;
        }
        uint32_t cpu = conv_writer_cpu(c, sid.has_cpu, sid.cpu, ring_cpu);
        uint64_t ts = conv_stamp(c, cpu, sid.time);
        struct perf_conv_image im = {pid,
                                     le_get64(rec + 16),
                                     le_get64(rec + 24),
                                     le_get64(rec + 32),
                                     path,
                                     bid,
                                     bid_size,
                                     flags};
        struct conv_proc *p = conv_proc_get(c, pid);
        if (p) {
                uint32_t was = p->nr_pending;
                conv_proc_add_image(p, &im);
                conv_pending_settle(c, was, p);
        }
        if (!c->has_image)
                return 0;
        return conv_emit_image(c, WMI_LOG_TYPE_PROCESS_LOAD_IMAGE, cpu, ts, tid, &im);
}

int conv_lost(struct perf_conv *c, uint32_t ring_cpu, const uint8_t *rec, uint32_t size,
              const struct perf_conv_event *ev)
{
        struct perf_sample_id sid;

        if (size < 24 || conv_sample_id(ev, rec, size, &sid) < 0)
                return -EBADMSG;
        uint64_t lost = le_get64(rec + 16);
        c->st.nr_lost_records++;
        c->st.nr_lost += lost;
        uint32_t cpu = conv_writer_cpu(c, sid.has_cpu, sid.cpu, ring_cpu);
        uint64_t ts = conv_stamp(c, cpu, sid.time);
        return perf_conv_events_lost(c, cpu, ts, ETWTOP_LOST_REASON_RECORD_LOST, lost);
}

int perf_conv_events_lost(struct perf_conv *c, uint32_t cpu, uint64_t ts, uint32_t reason,
                          uint64_t nr_lost)
{
        uint8_t p[16];
        st32(p, cpu);
        st32(p + 4, reason);
        st64(p + 8, nr_lost);
        EVENT_DESCRIPTOR desc = {ETWTOP_EVENT_EVENTS_LOST, 1, 0, 4, 0, 0, 0};
        uint32_t size = etl_record_event64(c->rec, &etwtop_provider_guid, &desc, 0, 0, ts, NULL, 0,
                                           p, sizeof(p));
        return conv_emit(c, cpu, size);
}

void perf_conv_set_switch_stacks(struct perf_conv *c, bool is_on, uint64_t from)
{
        c->has_switch_plan = true;
        c->is_switch_plan_on = is_on;
        c->switch_plan_from = from;
}

void perf_conv_set_walk(struct perf_conv *c, enum perf_conv_walk walk, uint32_t stack_copy_bytes)
{
        c->uw_st.walk = walk;
        c->uw_st.stack_copy_bytes = walk == PERF_CONV_WALK_FP ? 0 : stack_copy_bytes;
}

void perf_conv_get_unwind_stats(const struct perf_conv *c, struct perf_conv_unwind_stats *st)
{
        *st = c->uw_st;
}

/* UnwindStats (doc/etwtop-provider.md): Mode, StackCopyBytes, then u64 Walks, Stops[6],
   FpChains, Frames, FpFrames. */
int perf_conv_unwind_stats(struct perf_conv *c, uint32_t cpu, uint64_t ts)
{
        const struct perf_conv_unwind_stats *u = &c->uw_st;
        uint8_t p[8 + 8 * (5 + PERF_CONV_NR_UNWIND_STOPS)];
        st32(p, u->walk);
        st32(p + 4, u->stack_copy_bytes);
        st64(p + 8, u->nr_walks);
        for (uint32_t i = 0; i < PERF_CONV_NR_UNWIND_STOPS; i++)
                st64(p + 16 + 8 * i, u->nr_by_stop[i]);
        uint8_t *q = p + 16 + 8 * PERF_CONV_NR_UNWIND_STOPS;
        st64(q, u->nr_fp_chains);
        st64(q + 8, u->nr_frames);
        st64(q + 16, u->nr_fp_frames);
        EVENT_DESCRIPTOR desc = {ETWTOP_EVENT_UNWIND_STATS, 1, 0, 4, 0, 0, 0};
        uint32_t size = etl_record_event64(c->rec, &etwtop_provider_guid, &desc, 0, 0, ts, NULL, 0,
                                           p, sizeof(p));
        c->uw_stats_ts = ts;
        c->uw_walks_written = u->nr_walks + u->nr_fp_chains;
        return conv_emit(c, cpu, size);
}
