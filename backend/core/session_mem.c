/* SPDX-License-Identifier: MIT */
/* session_mem.c: owns the memory budget shared by every session of this process: real-time
   queues and kept windows take from it and give back, and what does not fit is lost (counted)
   or refused, so that consumers that never read cannot take the machine's memory. */
#include "session_mem.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

static atomic_size_t nr_taken;
static size_t max_bytes;
static pthread_once_t max_once = PTHREAD_ONCE_INIT;

static void max_read(void)
{
        const char *e = getenv("ETWTOP_HOST_MAX_MB");
        char *end;
        unsigned long long mb = e && *e ? strtoull(e, &end, 10) : 0;
        if (e && *e && !*end && mb > 0 && mb < ((uint64_t)1 << 44)) {
                max_bytes = (size_t)(mb << 20);
                return;
        }
        long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
        uint64_t quarter = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page / 4 : 0;
        uint64_t cap = (uint64_t)4 << 30;
        max_bytes = (size_t)(quarter && quarter < cap ? quarter : cap);
}

size_t session_mem_max(void)
{
        pthread_once(&max_once, max_read);
        return max_bytes;
}

bool session_mem_take(size_t n)
{
        size_t max = session_mem_max();
        size_t cur = atomic_load(&nr_taken);
        do {
                if (n > max || cur > max - n)
                        return false;
        } while (!atomic_compare_exchange_weak(&nr_taken, &cur, cur + n));
        return true;
}

void session_mem_give(size_t n)
{
        atomic_fetch_sub(&nr_taken, n);
}
