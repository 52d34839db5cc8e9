/* SPDX-License-Identifier: MIT */
/* rings_grow.c: owns the growth of the CPUs' rings at an update. A session starts with the ring
   its events of then need (a screen's session starts with its side-band alone and turns its
   samples and switches on by an update, as ETW's StartTrace, TraceSetInformation and
   ControlTrace(UPDATE) go), since the kernel takes and zeroes every page of a ring when it is
   mapped and a ring's size is fixed once mapped: where an update needs more, each CPU gets a
   new ring, its events are moved to it (PERF_EVENT_IOC_SET_OUTPUT, the events running all the
   while), and what the old one holds is taken to the stage before it goes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/membarrier.h>
#include <linux/perf_event.h>

#include "live_int.h"
#include "util/xalloc.h"

/* Whether the kernel can wait for every writer of a ring that lost its events (an RCU grace
   period: MEMBARRIER_CMD_GLOBAL, which a nohz_full kernel refuses). */
bool rings_can_grow(void)
{
        long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
        return cmds > 0 && (cmds & MEMBARRIER_CMD_GLOBAL);
}

/* The events of cpu other than its ring's own moved to the ring of fd; false (those moved put
   back on back_fd) when the kernel refuses one. */
static bool move_events(struct live_source *ls, uint32_t cpu, int fd, int back_fd)
{
        for (uint32_t i = 0; i < ls->nr_events; i++) {
                struct live_event *ev = ls->events[i];
                if (ev->cpu != cpu || ev->spec.role == ROLE_RING || ev->fd < 0)
                        continue;
                if (ioctl(ev->fd, PERF_EVENT_IOC_SET_OUTPUT, fd) == 0)
                        continue;
                for (uint32_t j = 0; j < i; j++) {
                        struct live_event *back = ls->events[j];
                        if (back->cpu == cpu && back->spec.role != ROLE_RING && back->fd >= 0)
                                (void)ioctl(back->fd, PERF_EVENT_IOC_SET_OUTPUT, back_fd);
                }
                return false;
        }
        return true;
}

struct live_event *rings_owner(const struct live_source *ls, const struct live_ring *r)
{
        for (uint32_t i = 0; i < ls->nr_events; i++)
                if (ls->events[i]->spec.role == ROLE_RING && ls->events[i]->fd == r->fd &&
                    !ls->events[i]->is_retired)
                        return ls->events[i];
        return NULL;
}

/* A new ring for r of pages data pages (fresh: its event's fd and its mapping), r's events moved
   to it; r itself still the old ring's until ring_retire. 0, or -errno with err filled (the
   events where they were). */
static int grow_one(struct live_source *ls, struct live_ring *r, const struct live_settings *next,
                    uint32_t pages, struct live_ring *fresh, struct etl_error *err)
{
        struct live_spec_env env = live_env(ls);
        struct live_spec sp;
        attr_spec_build(&env, next, ROLE_RING, 0, &sp);
        /* its watermark for its own size (pages: next's, or more where a ring made again for its
           watermark is kept at its size) */
        sp.attr.wakeup_watermark =
                attr_spec_ring_watermark(next, (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE));
        /* on the task of the ring it replaces (a -p session's: a thread of the process) */
        struct live_event *was = rings_owner(ls, r);
        if (!was) {
                live_set_err(err, "CPU %u's ring has no event", r->cpu);
                return -EINVAL;
        }
        struct live_event *ring_ev;
        int rc = live_event_open(ls, &sp, r->cpu, was->task, &ring_ev, err);
        if (rc < 0)
                return rc;
        *fresh = (struct live_ring){.cpu = r->cpu, .fd = ring_ev->fd};
        rc = ring_map(fresh, pages, err);
        if (rc < 0) {
                live_event_close(ring_ev);
                return rc;
        }
        if (!move_events(ls, r->cpu, fresh->fd, r->fd)) {
                rc = -errno;
                live_set_err(err, "PERF_EVENT_IOC_SET_OUTPUT to the grown ring of CPU %u: %s",
                             r->cpu, live_errno_name(-rc));
                munmap(fresh->meta, fresh->map_size);
                fresh->meta = NULL;
                live_event_close(ring_ev);
                return rc;
        }
        was->is_retired = true; /* closed with the retired events (events_reap) */
        live_events_add(ls, ring_ev);
        return 0;
}

/* What the old ring holds taken to r's stage (the records written before its events moved:
   older than the new ring's but for the moment of the moves, which a drain's sort puts in
   order), the old ring unmapped, and r the fresh one's (ring c of the epoll set). */
static void ring_retire(struct live_source *ls, struct live_ring *r, uint32_t c,
                        const struct live_ring *fresh)
{
        ring_take(r);
        (void)epoll_ctl(ls->epoll_fd, EPOLL_CTL_DEL, r->fd, NULL);
        struct epoll_event ee = {.events = EPOLLIN, .data.u32 = c};
        (void)epoll_ctl(ls->epoll_fd, EPOLL_CTL_ADD, fresh->fd, &ee);
        munmap(r->meta, r->map_size);
        r->fd = fresh->fd;
        r->meta = fresh->meta;
        r->map_size = fresh->map_size;
        r->data = fresh->data;
        r->data_size = fresh->data_size;
}

int rings_grow(struct live_source *ls, const struct live_settings *next, struct etl_error *err)
{
        struct live_spec_env env = live_env(ls);
        if (!env.can_grow_rings)
                return 0;
        uint32_t pages = attr_spec_ring_pages(&env, next);
        long page = sysconf(_SC_PAGESIZE);
        struct live_ring *fresh = xcalloc(ls->nr_online, sizeof(*fresh)); /* meta NULL: none */
        uint32_t nr_grown = 0;
        int rc = 0;
        for (uint32_t c = 0; c < ls->nr_online && rc == 0; c++) {
                struct live_ring *r = &ls->rings[c];
                if (!r->meta || r->is_borrowed)
                        continue;
                /* a ring made for timer samples alone (its watermark half of it) made again
                   where switches or stack copies come in: its watermark a quarter (a ring's
                   watermark is fixed when it is made); the other way, a ring of a quarter
                   stays */
                const struct live_event *owner = rings_owner(ls, r);
                bool is_late = owner && owner->spec.attr.wakeup_watermark >
                                                attr_spec_ring_watermark(next, r->data_size);
                if ((uint64_t)pages * (uint64_t)page <= r->data_size && !is_late)
                        continue;
                uint32_t at_least = (uint32_t)(r->data_size / (uint64_t)page);
                rc = grow_one(ls, r, next, pages > at_least ? pages : at_least, &fresh[c], err);
                nr_grown += rc == 0;
        }
        if (nr_grown) {
                /* every write begun into an old ring is done: the kernel writes a record under
                   RCU (perf_output_begin to perf_output_end), and a grace period passes here */
                (void)syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
                for (uint32_t c = 0; c < ls->nr_online; c++)
                        if (fresh[c].meta)
                                ring_retire(ls, &ls->rings[c], c, &fresh[c]);
                ls->events_gen++;
        }
        free(fresh);
        return rc;
}
