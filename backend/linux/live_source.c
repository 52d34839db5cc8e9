/* SPDX-License-Identifier: MIT */
/* live_source.c: the Linux kernel-logger session: opens its events and rings, drains them, applies
   the settings changes of a running session and closes it (LINUX-MAPPING.md 0, 3, 4, 5). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "live_int.h"
#include "util/clock.h"
#include "util/xalloc.h"

struct live_spec_env live_env(const struct live_source *ls)
{
        return (struct live_spec_env){
                .caps = &ls->caps,
                .nr_online = ls->nr_online,
                .can_grow_rings = ls->can_grow_rings,
                .has_inherit_thread = ls->has_inherit_thread,
                .has_build_id_attr = ls->has_build_id_attr,
                .tp_switch = ls->has_tp_switch ? &ls->tp_switch : NULL,
                .tp_waking = ls->has_tp_waking ? &ls->tp_waking : NULL,
                .tp_idle = ls->has_tp_idle ? &ls->tp_idle : NULL,
        };
}

/* Drains every ring up to until (UINT64_MAX: everything), the rundown under way written first:
   what must be converted before a rundown, a settings change or the close. */
static void drain_until(struct live_source *ls, uint64_t until)
{
        rundown_finish(ls, true);
        uint64_t saved = ls->flush_until;
        ls->flush_until = until;
        while (live_source_drain(ls, UINT32_MAX / 2) > 0)
                ;
        ls->flush_until = saved;
}

void live_drain_all(struct live_source *ls)
{
        drain_until(ls, now_ns());
}

static int hook_emit(void *ctx, uint32_t cpu, const void *rec, uint32_t size)
{
        struct live_source *ls = ctx;
        int rc = etl_writer_append(ls->w, cpu, rec, size);
        if (rc < 0)
                ls->nr_append_failures++;
        if (rc < 0 && rc != -E2BIG && !ls->write_error)
                ls->write_error = rc;
        return 0; /* the writer keeps going; so does the conversion */
}

static const struct perf_conv_event *hook_event_of(void *ctx, uint64_t id)
{
        struct live_event *ev = live_event_by_id(ctx, id);
        return ev ? &ev->spec.conv : NULL;
}

static void own_append(struct live_source *ls, uint32_t cpu, uint32_t size)
{
        ls->nr_own_events++;
        hook_emit(ls, cpu, ls->rec, size);
}

static void write_interval_rundown(struct live_source *ls, uint16_t hook, uint64_t ts,
                                   const struct live_settings *s, const struct live_settings *old)
{
        char buf[32];
        uint32_t iv = attr_spec_interval(s);
        own_append(ls, 0,
                   perf_etw_profile_interval(ls->rec, hook, ts, ProfileTime, iv,
                                             old ? attr_spec_interval(old) : iv, "Timer"));
        for (uint32_t i = 0; i < s->nr_profile_sources; i++) {
                uint32_t v =
                        s->source_intervals[i] ? s->source_intervals[i] : LIVE_DEFAULT_PMC_PERIOD;
                own_append(ls, 0,
                           perf_etw_profile_interval(
                                   ls->rec, hook, ts, s->profile_sources[i], v, v,
                                   attr_spec_source_name(s->profile_sources[i], buf, sizeof(buf))));
        }
}

static void write_pmc_config(struct live_source *ls, uint64_t ts)
{
        const char *names[LIVE_MAX_SOURCES];
        char bufs[LIVE_MAX_SOURCES][32];
        const struct live_settings *s = &ls->settings;
        if (!s->nr_pmc_counters)
                return;
        for (uint32_t i = 0; i < s->nr_pmc_counters; i++)
                names[i] = attr_spec_source_name(s->pmc_counters[i], bufs[i], sizeof(bufs[i]));
        own_append(ls, 0, perf_etw_pmc_config(ls->rec, ts, names, s->nr_pmc_counters));
}

/* The TimerResolution w's logfile header records (ETL-FORMAT.md 1.6: the header buffer's
   WMI_BUFFER_HEADER, the SYSTEM_TRACE_HEADER, then TRACE_LOGFILE_HEADER.TimerResolution at
   0x18): the unit of the CSwitch NewThreadWaitTime the converter writes, so that the file
   agrees with itself whatever its writer was told; the kernel's tick when it says none. */
static uint32_t writer_timer_resolution(const struct etl_writer *w, const struct live_caps *caps)
{
        enum { AT = 0x48 + 0x20 + 0x18 };
        uint32_t size = 0, v = 0;
        const uint8_t *hdr = etl_writer_header(w, &size);
        if (hdr && size >= AT + 4)
                memcpy(&v, hdr + AT, 4);
        return v ? v : caps->timer_resolution_100ns;
}

/* Finds tracefs and reads the formats of sched_switch, sched_waking and (optional) cpu_idle for
   the CSwitch and ReadyThread that s asks for. Returns 0, or -ENOENT (no tracefs) or -EACCES
   (tracefs or a format this user cannot read) with err filled. */
static int tracepoints_load(struct live_source *ls, const struct live_settings *s,
                            struct etl_error *err)
{
        const char *what = attr_spec_wants_cswitch(s) && attr_spec_wants_ready(s)
                                   ? "CSwitch and ReadyThread"
                           : attr_spec_wants_cswitch(s) ? "CSwitch events"
                                                        : "ReadyThread events";
        int rc = probe_tracefs_find(ls->tracefs, sizeof(ls->tracefs));
        if (rc < 0) {
                probe_tracefs_msg(err ? err->msg : NULL, err ? sizeof(err->msg) : 0, rc,
                                  ls->tracefs, what);
                if (err)
                        err->offset = 0;
                ls->tracefs[0] = 0;
                return rc;
        }
        int rc_switch = probe_tracepoint_load(ls->tracefs, "sched/sched_switch", &ls->tp_switch);
        int rc_waking = probe_tracepoint_load(ls->tracefs, "sched/sched_waking", &ls->tp_waking);
        ls->has_tp_switch = rc_switch == 0;
        ls->has_tp_waking = rc_waking == 0;
        ls->has_tp_idle = probe_tracepoint_load(ls->tracefs, "power/cpu_idle", &ls->tp_idle) == 0;
        if (ls->has_tp_switch && ls->has_tp_waking)
                return 0;
        rc = rc_switch < 0 ? rc_switch : rc_waking;
        if (rc == -EACCES || rc == -EPERM) {
                probe_tracefs_msg(err ? err->msg : NULL, err ? sizeof(err->msg) : 0, -EACCES,
                                  ls->tracefs, what);
                if (err)
                        err->offset = 0;
                return -EACCES;
        }
        live_set_err(err, "cannot read %s/events/sched/sched_%s/format (%s)", ls->tracefs,
                     ls->has_tp_switch ? "waking" : "switch", live_errno_name(-rc));
        return -ENOENT;
}

/* The threads events are opened on: with -p every thread of the process (/proc/PID/task), the
   process's own first (new threads inherit its events, and those of the thread that creates
   them); {-1}, every task, for the whole system. */
static int tasks_list(struct live_source *ls, struct etl_error *err)
{
        int32_t pid = ls->settings.pid;
        uint32_t cap = 16, n = 0;
        int32_t *tasks = xcalloc(cap, sizeof(*tasks));

        tasks[n++] = pid > 0 ? pid : -1;
        if (pid > 0) {
                char path[64];
                snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
                DIR *d = opendir(path);
                if (!d) {
                        int e = errno;
                        live_set_err(err, "process %d: cannot read %s (%s)", (int)pid, path,
                                     live_errno_name(e));
                        free(tasks);
                        return e == ENOENT ? -ESRCH : -e;
                }
                struct dirent *de;
                while ((de = readdir(d))) {
                        long tid = strtol(de->d_name, NULL, 10);
                        if (!isdigit((unsigned char)de->d_name[0]) || tid <= 0 || tid == pid ||
                            tid > INT32_MAX)
                                continue;
                        if (n == cap) {
                                cap *= 2;
                                tasks = xrealloc(tasks, cap * sizeof(*tasks));
                        }
                        tasks[n++] = (int32_t)tid;
                }
                closedir(d);
        }
        free(ls->tasks);
        ls->tasks = tasks;
        ls->nr_tasks = n;
        return 0;
}

/* etwtop's SessionCpu event in every online CPU's buffer, the highest CPU first: a writer with
   fewer CPUs refuses that one (-EINVAL) before anything else is written, and the session
   fails rather than losing that CPU's records one by one. */
static int write_session_cpus(struct live_source *ls, uint64_t ts, struct etl_error *err)
{
        for (uint32_t k = ls->nr_online; k-- > 0;) {
                uint32_t cpu = ls->online[k];
                uint32_t size = perf_etw_session_cpu(
                        ls->rec, perf_conv_stamp(ls->conv, cpu, ts), cpu, ls->nr_cpus,
                        ls->nr_online, ls->settings.pid > 0 ? (uint32_t)ls->settings.pid : 0);
                int rc = etl_writer_append(ls->w, cpu, ls->rec, size);
                if (rc == -EINVAL) {
                        live_set_err(err,
                                     "the trace writer has no buffer for CPU %u, which is online: "
                                     "create it with nr_cpus = %u (the highest online CPU + 1, "
                                     "live_caps.nr_cpus)",
                                     cpu, ls->nr_cpus);
                        return -EINVAL;
                }
                ls->nr_own_events++;
                if (rc < 0)
                        ls->nr_append_failures++;
        }
        return 0;
}

/* Whether ev, in a traced process's session, records every process's events (-p's CPU-wide
   context-switch side-band). */
static bool is_wide_in_pid_mode(const struct live_source *ls, const struct live_event *ev)
{
        return ls->settings.pid > 0 && ev->spec.is_cpu_wide;
}

/* PERF_FORMAT_LOST summed over the events, those closed too. Reading an event's count is an
   IPI to its CPU: the sum is read again only when it may have moved (is_exact: always): a ring
   was found too full for a record since the last read (ring_note_fill), a PERF_RECORD_LOST
   came, or events were added or closed; else the last read's sum is the count. */
static uint64_t lost_total(struct live_source *ls, bool is_exact)
{
        struct perf_conv_stats cs;
        perf_conv_get_stats(ls->conv, &cs);
        bool may_have_moved = is_exact || !ls->has_lost_read ||
                              ls->lost_read_gen != ls->events_gen ||
                              ls->lost_read_records != cs.nr_lost_records;
        for (uint32_t c = 0; c < ls->nr_online; c++) {
                may_have_moved = may_have_moved || ls->rings[c].may_have_lost;
                ls->rings[c].may_have_lost = false;
        }
        if (may_have_moved) {
                uint64_t sum = 0, wide = 0;
                for (uint32_t i = 0; i < ls->nr_events; i++) {
                        uint64_t n = live_event_lost(ls->events[i]);
                        sum += n;
                        wide += is_wide_in_pid_mode(ls, ls->events[i]) ? n : 0;
                }
                ls->nr_lost_reads += ls->nr_events;
                ls->lost_read_sum = sum;
                ls->lost_read_wide = wide;
                ls->lost_read_records = cs.nr_lost_records;
                ls->lost_read_gen = ls->events_gen;
                ls->has_lost_read = true;
        }
        return ls->nr_lost_retired + ls->lost_read_sum;
}

/* Opens every event settings s needs that is not open with the same attributes: every (CPU,
   task) event of a (role, index) that is new or whose attributes changed. The old events they
   replace stay until the update commits. A thread of the traced process that has exited since
   it was listed is skipped. On failure every new event is closed and the session is as it was. */
static int events_reconcile(struct live_source *ls, const struct live_settings *s,
                            struct live_event ***fresh, uint32_t *nr_fresh, struct etl_error *err)
{
        uint32_t cap = 64, n = 0;
        struct live_event **list = xcalloc(cap, sizeof(*list));
        int rc = 0;
        struct live_spec_env env = live_env(ls);
        struct live_spec *specs = xcalloc(ATTR_SPEC_MAX, sizeof(*specs));
        uint32_t nr_specs = attr_spec_list(&env, s, specs);

        for (uint32_t k = 0; k < nr_specs && rc == 0; k++) {
                {
                        const struct live_spec sp = specs[k];
                        if (sp.role == ROLE_RING)
                                continue; /* the rings' own, opened with them */
                        struct live_event *old = live_event_find(ls, sp.role, sp.idx);
                        if (old && attr_spec_same(&old->spec, &sp))
                                continue;
                        for (uint32_t c = 0; c < ls->nr_online && rc == 0; c++) {
                                uint32_t cpu = ls->online[c], nr_opened = 0;
                                uint32_t nr_tasks = sp.is_cpu_wide ? 1 : ls->nr_tasks;
                                for (uint32_t t = 0; t < nr_tasks && rc == 0; t++) {
                                        struct live_event *ev;
                                        struct etl_error ignored;
                                        bool is_thread = s->pid > 0 && !sp.is_cpu_wide;
                                        rc = live_event_open(ls, &sp, cpu,
                                                             sp.is_cpu_wide ? -1 : ls->tasks[t],
                                                             &ev, is_thread ? &ignored : err);
                                        if (rc == -ESRCH && is_thread) {
                                                rc = 0; /* that thread has exited */
                                                continue;
                                        }
                                        if (rc < 0) {
                                                if (is_thread && err)
                                                        *err = ignored;
                                                break;
                                        }
                                        if (n == cap) {
                                                cap *= 2;
                                                list = xrealloc(list, cap * sizeof(*list));
                                        }
                                        list[n++] = ev;
                                        nr_opened++;
                                }
                                if (rc == 0 && nr_opened == 0) {
                                        live_set_err(err, "process %d has exited", (int)s->pid);
                                        rc = -ESRCH;
                                }
                        }
                }
        }
        free(specs);
        if (rc < 0) {
                for (uint32_t i = 0; i < n; i++)
                        live_event_close(list[i]);
                free(list);
                return rc;
        }
        *fresh = list;
        *nr_fresh = n;
        return 0;
}

/* Enables or disables every live event as s's masks say. */
static int events_apply_masks(struct live_source *ls, const struct live_settings *s)
{
        int rc = 0;
        for (uint32_t i = 0; i < ls->nr_events; i++) {
                struct live_event *ev = ls->events[i];
                if (ev->is_retired)
                        continue;
                int r = live_event_enable(ev, attr_spec_role_enabled(s, ev->spec.role));
                if (r < 0 && rc == 0)
                        rc = r;
        }
        return rc;
}

/* Closes retired events (after a drain), keeping their lost counts. */
static void events_reap(struct live_source *ls)
{
        uint32_t o = 0;
        for (uint32_t i = 0; i < ls->nr_events; i++) {
                struct live_event *ev = ls->events[i];
                if (ev->is_retired) {
                        uint64_t n = live_event_lost(ev);
                        ls->nr_lost_retired += n;
                        ls->nr_lost_retired_wide += is_wide_in_pid_mode(ls, ev) ? n : 0;
                        live_event_close(ev);
                        ls->events_gen++;
                        continue;
                }
                ls->events[o++] = ev;
        }
        ls->nr_events = o;
        live_by_id_rebuild(ls);
}

static void source_free(struct live_source *ls)
{
        if (ls->rundown.has_thread)
                pthread_join(ls->rundown.thread, NULL);
        rundown_items_free(&ls->rundown);
        if (ls->rundown.done_fd >= 0)
                close(ls->rundown.done_fd);
        for (uint32_t i = 0; i < ls->nr_events; i++)
                live_event_close(ls->events[i]);
        free(ls->events);
        for (uint32_t i = 0; ls->rings && i < ls->nr_online; i++) {
                struct live_ring *r = &ls->rings[i];
                if (r->meta && !r->is_borrowed)
                        munmap(r->meta, r->map_size);
                ring_stage_free(r);
                free(r->bounce);
                free(r->items);
        }
        free(ls->rings);
        rings_merge_free(ls);
        free(ls->online);
        free(ls->tasks);
        free(ls->by_id);
        if (ls->epoll_fd >= 0)
                close(ls->epoll_fd);
        for (uint32_t i = 0; ls->bids && i < LIVE_BUILD_ID_CACHE; i++)
                free(ls->bids[i].path);
        free(ls->bids);
        free(ls->ksyms);
        free(ls->ksym_names);
        free(ls->wait_sites);
        perf_conv_free(ls->conv);
        proc_aside_free(ls->aside);
        free(ls);
}

int live_source_open(struct live_source **out, const struct live_settings *settings,
                     struct etl_writer *w, struct etl_error *err)
{
        struct live_source *ls;
        uint32_t cpus[LIVE_MAX_CPUS];
        int rc;

        *out = NULL;
        if (!settings || !w) {
                live_set_err(err, "live_source_open: settings and writer are required");
                return -EINVAL;
        }
        ls = xcalloc(1, sizeof(*ls));
        ls->epoll_fd = -1;
        ls->rundown.done_fd = -1;
        ls->settings = *settings;
        ls->w = w;
        ls->has_build_id_attr = true;
        ls->has_inherit_thread = true;
        live_probe(&ls->caps);
        rc = attr_spec_check(settings, &ls->caps, err);
        if (rc < 0)
                goto fail;
        if (settings->pid < 0 && !ls->caps.has_cpu_wide) {
                live_set_err(err, "%s", ls->caps.why_no_cpu_wide);
                rc = -EACCES;
                goto fail;
        }
        if (attr_spec_wants_cswitch(settings) || attr_spec_wants_ready(settings)) {
                rc = tracepoints_load(ls, settings, err);
                if (rc < 0)
                        goto fail;
        }

        ls->nr_online = probe_online_cpus(cpus, LIVE_MAX_CPUS, &ls->nr_cpus);
        ls->online = xcalloc(ls->nr_online, sizeof(*ls->online));
        memcpy(ls->online, cpus, ls->nr_online * sizeof(*cpus));
        ls->rings = xcalloc(ls->nr_online, sizeof(*ls->rings));
        rings_merge_init(ls);
        ls->bids = xcalloc(LIVE_BUILD_ID_CACHE, sizeof(*ls->bids));

        rc = tasks_list(ls, err);
        if (rc < 0)
                goto fail;

        rc = proc_aside_new(&ls->aside, proc_read_both, PROC_ASIDE_WAIT_US);
        if (rc < 0) {
                live_set_err(err, "cannot start the /proc reader thread: %s", live_errno_name(-rc));
                goto fail;
        }
        struct perf_conv_ops ops = {hook_emit,        hook_event_of,    proc_cmdline_of,
                                    proc_build_id_of, ksyms_wait_sites, proc_uid_of};
        rc = perf_conv_new(&ls->conv, &ops, ls, ls->nr_cpus);
        if (rc < 0) {
                live_set_err(err, "cannot create the converter");
                goto fail;
        }
        /* the converter's records go straight into the writer's buffers (no copy, no hop) */
        perf_conv_set_sink(ls->conv,
                           &(struct perf_conv_sink){etl_writer_sink_reserve, etl_writer_sink_commit,
                                                    etl_writer_sink_room, ls->w});
        perf_conv_set_masks(ls->conv, &settings->masks);
        perf_conv_set_walk(ls->conv, settings->stack_walk, attr_spec_stack_bytes(settings));
        perf_conv_set_timer_resolution(ls->conv, writer_timer_resolution(w, &ls->caps));
        if (settings->pid > 0)
                perf_conv_set_process(ls->conv, (uint32_t)settings->pid, ls->tasks, ls->nr_tasks);

        ls->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
        if (ls->epoll_fd < 0) {
                rc = -errno;
                live_set_err(err, "epoll_create1 returned %s", live_errno_name(-rc));
                goto fail;
        }
        /* the rundown's thread says it is done through this: the drain that writes its
           records comes at once */
        ls->rundown.done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        struct epoll_event done = {.events = EPOLLIN, .data.u32 = UINT32_MAX};
        if (ls->rundown.done_fd < 0 ||
            epoll_ctl(ls->epoll_fd, EPOLL_CTL_ADD, ls->rundown.done_fd, &done) < 0) {
                rc = -errno;
                live_set_err(err, "eventfd or epoll_ctl returned %s", live_errno_name(-rc));
                goto fail;
        }
        /* one ring per CPU, owned by a dummy event: of what the events of now need, where it
           can grow at an update that needs more (rings_grow.c) */
        ls->can_grow_rings = rings_can_grow();
        for (uint32_t c = 0; c < ls->nr_online; c++) {
                struct live_ring *r = &ls->rings[c];
                struct live_spec sp;
                struct live_event *ev;
                r->cpu = ls->online[c];
                struct live_spec_env env = live_env(ls);
                attr_spec_build(&env, settings, ROLE_RING, 0, &sp);
                rc = live_event_open(ls, &sp, r->cpu, ls->tasks[0], &ev, err);
                if (rc < 0)
                        goto fail;
                live_events_add(ls, ev);
                r->fd = ev->fd;
                rc = ring_map(r, attr_spec_ring_pages(&env, settings), err);
                if (rc < 0)
                        goto fail;
                struct epoll_event ee = {.events = EPOLLIN, .data.u32 = c};
                if (epoll_ctl(ls->epoll_fd, EPOLL_CTL_ADD, r->fd, &ee) < 0) {
                        rc = -errno;
                        live_set_err(err, "epoll_ctl returned %s", live_errno_name(-rc));
                        goto fail;
                }
        }
        struct live_event **fresh;
        uint32_t nr_fresh;
        rc = events_reconcile(ls, settings, &fresh, &nr_fresh, err);
        if (rc < 0)
                goto fail;
        for (uint32_t i = 0; i < nr_fresh; i++)
                live_events_add(ls, fresh[i]);
        free(fresh);
        live_by_id_rebuild(ls);

        ksyms_kernel_image(ls);
        /* Enable first, then read /proc: nothing that starts in between is missed. The start
           records are stamped with a time taken before enabling, so every CPU's records stay in
           time order. */
        uint64_t t0 = now_ns();
        rc = write_session_cpus(ls, t0, err);
        if (rc < 0)
                goto fail;
        rc = events_apply_masks(ls, settings);
        if (rc < 0) {
                live_set_err(err, "PERF_EVENT_IOC_ENABLE returned %s", live_errno_name(-rc));
                goto fail;
        }
        for (uint32_t c = 0; c < ls->nr_cpus; c++)
                perf_conv_stamp(ls->conv, c, t0);
        ls->nr_own_events++;
        hook_emit(
                ls, ETL_WRITER_HEADER_CPU, ls->rec,
                perf_etw_group_masks(ls->rec, WMI_LOG_TYPE_HEADER_EXTENSION, t0, &settings->masks));
        write_interval_rundown(ls, PERFINFO_LOG_TYPE_SAMPLED_PROFILE_DC_START, t0, settings, NULL);
        write_pmc_config(ls, t0);
        rundown_begin(ls, t0, settings->masks.Masks[0], true);
        *out = ls;
        return 0;
fail:
        source_free(ls);
        return rc;
}

int live_source_open_mem(struct live_source **out, const struct live_mem_ring *rings,
                         uint32_t nr_rings, const struct perf_conv_event *events,
                         const uint64_t *ids, uint32_t nr_events, const PERFINFO_GROUPMASK *masks,
                         struct etl_writer *w)
{
        *out = NULL;
        if (!rings || !nr_rings || nr_rings > LIVE_MAX_CPUS || (nr_events && (!events || !ids)) ||
            !masks || !w)
                return -EINVAL;
        for (uint32_t i = 0; i < nr_rings; i++) {
                const struct perf_event_mmap_page *m = rings[i].meta;
                if (!m || rings[i].cpu >= LIVE_MAX_CPUS || !m->data_size ||
                    (m->data_size & (m->data_size - 1)) || m->data_offset < sizeof(*m))
                        return -EINVAL;
        }
        struct live_source *ls = xcalloc(1, sizeof(*ls));
        ls->epoll_fd = -1;
        ls->rundown.done_fd = -1;
        ls->w = w;
        ls->settings.masks = *masks;
        ls->settings.pid = -1;
        ls->nr_online = nr_rings;
        ls->online = xcalloc(nr_rings, sizeof(*ls->online));
        ls->rings = xcalloc(nr_rings, sizeof(*ls->rings));
        rings_merge_init(ls);
        ls->bids = xcalloc(LIVE_BUILD_ID_CACHE, sizeof(*ls->bids));
        for (uint32_t i = 0; i < nr_rings; i++) {
                struct live_ring *r = &ls->rings[i];
                ls->online[i] = r->cpu = rings[i].cpu;
                if (r->cpu + 1 > ls->nr_cpus)
                        ls->nr_cpus = r->cpu + 1;
                r->fd = -1;
                r->meta = rings[i].meta;
                r->is_borrowed = true;
                r->data = (uint8_t *)r->meta + r->meta->data_offset;
                r->data_size = r->meta->data_size;
        }
        for (uint32_t i = 0; i < nr_events; i++) {
                struct live_event *ev = xcalloc(1, sizeof(*ev));
                ev->spec.role = ROLE_PROC;
                ev->spec.what = "memory";
                ev->spec.conv = events[i];
                ev->fd = -1;
                for (uint32_t k = 0; k < LIVE_MAX_SOURCES; k++)
                        ev->member_fds[k] = -1;
                ev->id = ids[i];
                live_events_add(ls, ev);
        }
        live_by_id_rebuild(ls);
        struct perf_conv_ops ops = {hook_emit,        hook_event_of,    proc_cmdline_of,
                                    proc_build_id_of, ksyms_wait_sites, proc_uid_of};
        int rc = perf_conv_new(&ls->conv, &ops, ls, ls->nr_cpus);
        if (rc < 0)
                goto fail;
        /* the converter's records go straight into the writer's buffers (no copy, no hop) */
        perf_conv_set_sink(ls->conv,
                           &(struct perf_conv_sink){etl_writer_sink_reserve, etl_writer_sink_commit,
                                                    etl_writer_sink_room, ls->w});
        perf_conv_set_masks(ls->conv, masks);
        *out = ls;
        return 0;
fail:
        source_free(ls);
        return rc;
}

int live_source_fd(const struct live_source *ls)
{
        return ls ? ls->epoll_fd : -1;
}

int live_source_drain(struct live_source *ls, uint32_t budget)
{
        if (!ls)
                return -EINVAL;
        if (!rundown_finish(ls, false)) {
                /* the rundown's records come first: until they are written, what the rings
                   hold waits in the stages */
                ring_take_all(ls);
                return 0;
        }
        uint32_t nr = ls->nr_online ? ls->nr_online : 1;
        uint64_t horizon = rings_horizon(ls);
        uint32_t total = 0;
        /* rounds of a few thousand records a CPU: what is gathered is converted while it is
           still in the cache */
        while (total < budget) {
                uint32_t per = (budget - total) / nr;
                if (per < 256)
                        per = 256;
                if (per > LIVE_MERGE_ROUND)
                        per = LIVE_MERGE_ROUND;
                /* behind (what a rundown held): short rounds, each of which looks at the
                   rings first (ring_take_if_full) */
                bool is_behind = rings_behind(ls);
                if (per > 512 && is_behind)
                        per = 512;
                /* a ring that has more than its share says how far the others may go */
                uint64_t until = horizon;
                for (uint32_t c = 0; c < ls->nr_online; c++) {
                        struct live_ring *r = &ls->rings[c];
                        ring_take_if_full(r, is_behind);
                        ring_gather(ls, r, per, horizon);
                        if (r->is_capped && r->newest_ts < until)
                                until = r->newest_ts;
                }
                for (uint32_t c = 0; c < ls->nr_online; c++)
                        ring_trim(ls, &ls->rings[c], until);
                /* the new processes' /proc read while the round converts; their answers hold
                   for this round's records only */
                if (ls->nr_ahead) {
                        proc_aside_prefetch(ls->aside, ls->ahead, ls->nr_ahead);
                        ls->nr_ahead = 0;
                }
                uint32_t n = rings_merge(ls);
                if (ls->aside)
                        proc_aside_forget(ls->aside);
                for (uint32_t c = 0; c < ls->nr_online; c++)
                        ring_release(&ls->rings[c]);
                total += n;
                if (n == 0 || until == horizon)
                        break; /* every ring is drained up to the horizon */
        }
        return total > INT32_MAX ? INT32_MAX : (int)total;
}

int live_source_update(struct live_source *ls, const struct live_settings *next,
                       struct etl_error *err)
{
        if (!ls || !next) {
                live_set_err(err, "live_source_update: no source or settings");
                return -EINVAL;
        }
        const struct live_settings old = ls->settings;
        int rc = attr_spec_check(next, &ls->caps, err);
        if (rc < 0)
                return rc;
        if (next->pid != old.pid || next->ring_pages != old.ring_pages) {
                live_set_err(err, "the traced process and the ring size cannot change while the "
                                  "session runs");
                return -EINVAL;
        }
        if ((attr_spec_wants_cswitch(next) && !ls->has_tp_switch) ||
            (attr_spec_wants_ready(next) && !ls->has_tp_waking)) {
                rc = tracepoints_load(ls, next, err);
                if (rc < 0)
                        return rc;
        }

        /* make: open what the new settings need (the old events stay in force on failure), on
           the threads the traced process has now */
        if (old.pid > 0) {
                rc = tasks_list(ls, err);
                if (rc < 0)
                        return rc;
                perf_conv_set_process(ls->conv, (uint32_t)old.pid, ls->tasks, ls->nr_tasks);
        }
        struct live_event **fresh;
        uint32_t nr_fresh;
        rc = events_reconcile(ls, next, &fresh, &nr_fresh, err);
        if (rc < 0)
                return rc;

        /* commit */
        struct live_spec_env env = live_env(ls);
        live_drain_all(ls);
        /* the switches turned on below need the kernel's blocking functions at their first
           conversion: read now, off the drain's path */
        if (attr_spec_wants_cswitch(next))
                rundown_wait_sites(ls);
        bool is_lbr_change =
                old.lbr_flags != next->lbr_flags || old.nr_lbr_hooks != next->nr_lbr_hooks;
        uint64_t t = now_ns();
        /* the switches repaired from switch-in records (no sched_switch sample) take the new
           CSwitch stack setting from t on, whatever sample came last */
        perf_conv_set_switch_stacks(ls->conv,
                                    attr_spec_has_hook(next->stack_hooks, next->nr_stack_hooks,
                                                       WMI_LOG_TYPE_CONTEXT_SWAP),
                                    t);
        for (uint32_t i = 0; i < nr_fresh; i++) {
                fresh[i]->spec.conv.valid_from = t;
                fresh[i]->is_fresh = true;
                live_events_add(ls, fresh[i]);
        }
        /* the events the fresh ones replace, and those no longer needed at all */
        for (uint32_t i = 0; i < ls->nr_events; i++) {
                struct live_event *ev = ls->events[i];
                struct live_spec sp;
                if (ev->is_retired || ev->is_fresh || ev->spec.role == ROLE_RING)
                        continue;
                bool is_replaced = false;
                for (uint32_t j = 0; j < nr_fresh && !is_replaced; j++)
                        is_replaced = fresh[j]->spec.role == ev->spec.role &&
                                      fresh[j]->spec.idx == ev->spec.idx;
                if (is_replaced || !attr_spec_build(&env, next, ev->spec.role, ev->spec.idx, &sp)) {
                        ev->spec.conv.valid_until = t;
                        ev->is_retired = true;
                        if (is_replaced && is_lbr_change) /* break-before-make: one LBR per CPU */
                                live_event_enable(ev, false);
                }
        }
        for (uint32_t i = 0; i < nr_fresh; i++)
                fresh[i]->is_fresh = false;
        free(fresh);
        /* rings made for the events of before that the new ones outgrow: grown before those
           are enabled (where the kernel refuses, the rings stay as they are, and what they
           cannot hold is counted lost) */
        struct etl_error grow_err;
        (void)rings_grow(ls, next, &grow_err);
        live_by_id_rebuild(ls);
        ls->settings = *next;
        events_apply_masks(ls, next);
        for (uint32_t i = 0; i < ls->nr_events; i++) {
                if (ls->events[i]->is_retired)
                        live_event_enable(ls->events[i], false);
        }

        /* the interval of kept events */
        for (uint32_t i = 0; i < ls->nr_events; i++) {
                struct live_event *ev = ls->events[i];
                struct live_spec sp;
                if (ev->is_retired || (ev->spec.role != ROLE_PROFILE && ev->spec.role != ROLE_PMC))
                        continue;
                if (!attr_spec_build(&env, next, ev->spec.role, ev->spec.idx, &sp))
                        continue;
                if (sp.attr.sample_period == ev->spec.attr.sample_period)
                        continue;
                uint64_t period = sp.attr.sample_period;
                if (ioctl(ev->fd, PERF_EVENT_IOC_PERIOD, &period) == 0)
                        ev->spec.attr.sample_period = period;
        }
        live_drain_all(ls);
        events_reap(ls);
        perf_conv_set_masks(ls->conv, &next->masks);
        perf_conv_set_walk(ls->conv, next->stack_walk, attr_spec_stack_bytes(next));

        /* stamp the change into the stream */
        uint64_t ts = perf_conv_stamp(ls->conv, 0, now_ns());
        if (memcmp(&old.masks, &next->masks, sizeof(old.masks)) != 0) {
                own_append(ls, 0,
                           perf_etw_group_masks(ls->rec, WMI_LOG_TYPE_GROUP_MASKS_END, ts,
                                                &old.masks));
                own_append(ls, 0,
                           perf_etw_group_masks(ls->rec, WMI_LOG_TYPE_HEADER_EXTENSION, ts,
                                                &next->masks));
        }
        if (attr_spec_interval(&old) != attr_spec_interval(next))
                own_append(ls, 0,
                           perf_etw_profile_interval(ls->rec,
                                                     PERFINFO_LOG_TYPE_SAMPLED_PROFILE_SET_INTERVAL,
                                                     ts, ProfileTime, attr_spec_interval(next),
                                                     attr_spec_interval(&old), "Timer"));
        if (next->nr_pmc_counters &&
            (old.nr_pmc_counters != next->nr_pmc_counters ||
             memcmp(old.pmc_counters, next->pmc_counters,
                    sizeof(next->pmc_counters[0]) * next->nr_pmc_counters)))
                write_pmc_config(ls, ts);
        /* the groups turned on: what is already there (seed-002 adds IMAGE_LOAD this way) */
        rundown_begin(ls, ts, next->masks.Masks[0] & ~old.masks.Masks[0], false);
        ls->nr_updates++;
        return 0;
}

void live_source_get_stats(struct live_source *ls, struct live_stats *st)
{
        memset(st, 0, sizeof(*st));
        if (!ls)
                return;
        struct perf_conv_stats cs;
        perf_conv_get_stats(ls->conv, &cs);
        st->nr_perf_records = cs.nr_records - ls->nr_skipped_again;
        st->nr_events = cs.nr_events + ls->nr_own_events;
        st->nr_events_lost = lost_total(ls, false);
        st->nr_lost_cpu_wide = ls->nr_lost_retired_wide + ls->lost_read_wide;
        st->nr_lost_reads = ls->nr_lost_reads;
        st->nr_lost_records = cs.nr_lost_records;
        st->nr_updates = ls->nr_updates;
        /* the records built in the writer's buffers count their failed completions there */
        struct etl_writer_stats ws;
        etl_writer_get_stats(ls->w, &ws);
        st->nr_append_failures = ls->nr_append_failures + ws.nr_reserve_failures;
        st->nr_rundowns_pending = ls->rundown.is_pending;
        st->ring_bytes = ls->nr_online && ls->rings ? ls->rings[0].data_size : 0;
        const struct live_event *owner =
                ls->nr_online && ls->rings ? rings_owner(ls, &ls->rings[0]) : NULL;
        st->ring_watermark = owner ? owner->spec.attr.wakeup_watermark : 0;
}

void live_source_flush(struct live_source *ls)
{
        if (ls)
                live_drain_all(ls);
}

void live_source_rundown(struct live_source *ls)
{
        if (!ls)
                return;
        live_drain_all(ls);
        uint64_t ts = now_ns();
        perf_conv_rundown_end(ls->conv, 0, perf_conv_stamp(ls->conv, 0, ts));
        ksyms_write_kernel_symbols(ls, false);
}

void live_source_discard(struct live_source *ls, uint64_t *nr_lost)
{
        if (nr_lost)
                *nr_lost = 0;
        if (!ls)
                return;
        for (uint32_t i = 0; i < ls->nr_events; i++)
                live_event_enable(ls->events[i], false);
        if (nr_lost)
                *nr_lost = lost_total(ls, true);
        source_free(ls);
}

void live_source_close(struct live_source *ls)
{
        if (!ls)
                return;
        for (uint32_t i = 0; i < ls->nr_events; i++)
                live_event_enable(ls->events[i], false);
        drain_until(ls, UINT64_MAX); /* nothing is on its way any more */

        uint64_t ts = now_ns();
        uint64_t lost = lost_total(ls, true);
        if (lost)
                perf_conv_events_lost(ls->conv, 0, perf_conv_stamp(ls->conv, 0, ts),
                                      ETWTOP_LOST_REASON_FORMAT_LOST, lost);
        perf_conv_rundown_end(ls->conv, 0, perf_conv_stamp(ls->conv, 0, ts));
        ksyms_write_kernel_symbols(ls, true);
        source_free(ls);
}
