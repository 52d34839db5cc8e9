/* SPDX-License-Identifier: MIT */
/* comm_key.c: owns the process-name key of the rows per process (comm_key.h). */
#include "comm_key.h"

#include <stdlib.h>
#include <string.h>

#include "model/hot.h"
#include "util/hash.h"
#include "model/profile.h"
#include "model/switches.h"

static uint32_t comm_key(void *ctx, uint32_t pid)
{
        struct comm_keys *k = ctx;
        const char *name = switches_process_name(k->sw, pid);
        if (!pid || !*name)
                return pid;
        if ((k->nr + 1) * 2 > k->mask + 1) {
                uint32_t *old = k->pids, old_cap = old ? k->mask + 1 : 0;
                uint32_t *grown = calloc(old_cap ? 2 * old_cap : 64, sizeof(*grown));
                if (!grown)
                        return pid;
                k->pids = grown;
                k->mask = (old_cap ? 2 * old_cap : 64) - 1;
                k->nr = 0;
                for (uint32_t i = 0; i < old_cap; i++)
                        if (old[i])
                                (void)comm_key(k, old[i]);
                free(old);
        }
        for (uint32_t j = (uint32_t)hash_str(name) & k->mask;; j = (j + 1) & k->mask) {
                if (!k->pids[j]) {
                        k->pids[j] = pid;
                        k->nr++;
                        return pid;
                }
                if (k->pids[j] == pid ||
                    strcmp(switches_process_name(k->sw, k->pids[j]), name) == 0)
                        return k->pids[j];
        }
}

void comm_keys_use(struct comm_keys *k, struct profile *p)
{
        *k = (struct comm_keys){profile_switches(p), NULL, 0, 0};
        hot_set_process_key(profile_hot(p), comm_key, k);
}

void comm_keys_free(struct comm_keys *k)
{
        free(k->pids);
        k->pids = NULL;
}
