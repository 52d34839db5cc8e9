/* SPDX-License-Identifier: MIT */
/* host_client_ring.c: owns a real-time consumer's side of the host's shared ring: the memory
   file it was passed, checked (a regular file, as large as the ring, that cannot shrink under
   the mapping) and mapped read-only; the slots each HOST_RT_SLOTS message hands over, checked
   against the ring and what came before; the buffers read where the host put them; and the
   releases of the slots read, sent in groups. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host.h"
#include "host_proto.h"

/* The slots read before they are given back even while more are there to read: a quarter of
   the ring the host fills in batches of SESSION_RT_BATCH_MAX at most. */
#define RELEASE_EVERY 8u
#define RELEASE_MS    10000

/* Maps bytes of memfd (closed, mapped or not) read-only at r->mem, once checked: 0 or -errno. */
static int map_checked(struct host_ring *r, int memfd, size_t bytes, char *why, size_t why_size)
{
        struct stat st;
        int seals = fcntl(memfd, F_GET_SEALS);
        if (fstat(memfd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size < bytes) {
                host_say(why, why_size, "the host's ring is not a file of %zu bytes", bytes);
                close(memfd);
                return -EPROTO;
        }
        if (seals < 0 || !(seals & F_SEAL_SHRINK)) {
                host_say(why, why_size, "the host's ring could shrink under its reader");
                close(memfd);
                return -EPROTO;
        }
        void *mem = mmap(NULL, bytes, PROT_READ, MAP_SHARED, memfd, 0);
        int err = errno;
        close(memfd);
        if (mem == MAP_FAILED) {
                host_say(why, why_size, "mapping the host's ring: %s", strerror(err));
                return -err;
        }
        r->mem = mem;
        return 0;
}

int host_ring_map(struct host_ring *r, int memfd, uint32_t nr_slots, uint32_t slot_size, char *why,
                  size_t why_size)
{
        *r = (struct host_ring){0};
        int rc = map_checked(r, memfd, (size_t)nr_slots * slot_size, why, why_size);
        if (rc == 0) {
                r->nr_slots = nr_slots;
                r->slot_size = slot_size;
        }
        return rc;
}

int host_ring_map_pool(struct host_ring *r, int memfd, uint32_t nr_buffers, uint32_t buffer_size,
                       char *why, size_t why_size)
{
        *r = (struct host_ring){0};
        /* the buffers handed over and not given back: no more than a message names */
        uint32_t *places = calloc(HOST_RT_MAX_SLOTS, sizeof(*places));
        if (!places) {
                close(memfd);
                host_say(why, why_size, "no memory for the pool's places");
                return -ENOMEM;
        }
        int rc = map_checked(r, memfd, (size_t)nr_buffers * buffer_size, why, why_size);
        if (rc < 0) {
                free(places);
                return rc;
        }
        r->places = places;
        r->nr_pool = nr_buffers;
        r->nr_slots = HOST_RT_MAX_SLOTS;
        r->slot_size = buffer_size;
        return 0;
}

void host_ring_unmap(struct host_ring *r)
{
        if (r->mem)
                munmap((void *)r->mem,
                       (size_t)(r->places ? r->nr_pool : r->nr_slots) * r->slot_size);
        free(r->places);
        *r = (struct host_ring){0};
}

int host_ring_take(struct host_ring *r, const struct host_rt_msg *m, char *why, size_t why_size)
{
        if (m->seq != r->end) {
                host_say(why, why_size, "slots from buffer %llu where %llu was next",
                         (unsigned long long)m->seq, (unsigned long long)r->end);
                return -EPROTO;
        }
        if (m->nr_slots > r->nr_slots - (uint32_t)(r->end - r->released) ||
            m->size > r->slot_size) {
                host_say(why, why_size, "%u slots of %u bytes where %u of %u bytes are free",
                         m->nr_slots, m->size, r->nr_slots - (uint32_t)(r->end - r->released),
                         r->slot_size);
                return -EPROTO;
        }
        if (r->places) {
                if (m->type != HOST_RT_PLACES) {
                        host_say(why, why_size, "slots of a ring in a stream in place");
                        return -EPROTO;
                }
                for (uint32_t k = 0; k < m->nr_slots; k++) {
                        uint32_t i;
                        memcpy(&i, m->places + 4 * (size_t)k, 4);
                        if (i >= r->nr_pool) {
                                host_say(why, why_size, "buffer %u of a pool of %u", i, r->nr_pool);
                                return -EPROTO;
                        }
                        r->places[(r->end + k) % r->nr_slots] = i;
                }
        } else if (m->type != HOST_RT_SLOTS) {
                host_say(why, why_size, "places in a pool in a stream through a ring");
                return -EPROTO;
        }
        r->end += m->nr_slots;
        r->size = m->size;
        return 0;
}

bool host_ring_next(struct host_ring *r, const uint8_t **buf, uint32_t *size)
{
        if (r->next == r->end)
                return false;
        uint32_t slot = (uint32_t)(r->next % r->nr_slots);
        *buf = r->mem + (size_t)(r->places ? r->places[slot] : slot) * r->slot_size;
        *size = r->size;
        r->next++;
        return true;
}

int host_ring_release(struct host_ring *r, int fd, uint64_t upto, bool is_all)
{
        if (upto <= r->released || (!is_all && upto - r->released < RELEASE_EVERY))
                return 0;
        struct host_msg m = {0};
        host_msg_rt_release(&m, upto);
        int rc = host_io_write(fd, m.data, m.size, RELEASE_MS, NULL);
        host_msg_free(&m);
        if (rc == 0)
                r->released = upto;
        return rc;
}
