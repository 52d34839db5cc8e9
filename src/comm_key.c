/* SPDX-License-Identifier: MIT */
/* comm_key.c: owns the name keys of the rows per process (comm_key.h). */
#include "comm_key.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/hot.h"
#include "model/profile.h"
#include "model/stack_set.h"
#include "model/switches.h"
#include "util/hash.h"
#include "util/xalloc.h"

/* Twice the room, the keys placed again by their names (name_of). */
static bool grow(struct comm_keys *k, const char *(*name_of)(const struct comm_keys *, uint32_t))
{
        uint32_t *old = k->ids, old_cap = old ? k->mask + 1 : 0;
        uint32_t cap = old_cap ? 2 * old_cap : 64;
        uint32_t *ids = calloc(cap, sizeof(*ids));
        if (!ids)
                return false;
        for (uint32_t i = 0; i < old_cap; i++) {
                if (!old[i])
                        continue;
                uint32_t j = (uint32_t)hash_str(name_of(k, old[i])) & (cap - 1);
                while (ids[j])
                        j = (j + 1) & (cap - 1);
                ids[j] = old[i];
        }
        free(old);
        k->ids = ids;
        k->mask = cap - 1;
        return true;
}

/* ---- by process name ---- */

static const char *process_name_of(const struct comm_keys *k, uint32_t pid)
{
        return switches_process_name(k->sw, pid);
}

static uint32_t process_key(void *ctx, uint32_t pid)
{
        struct comm_keys *k = ctx;
        const char *name = process_name_of(k, pid);
        if (!pid || !*name)
                return pid;
        if ((k->nr + 1) * 2 > k->mask + 1 && !grow(k, process_name_of))
                return pid;
        for (uint32_t j = (uint32_t)hash_str(name) & k->mask;; j = (j + 1) & k->mask) {
                if (!k->ids[j]) {
                        k->ids[j] = pid;
                        k->nr++;
                        return pid;
                }
                if (k->ids[j] == pid || strcmp(process_name_of(k, k->ids[j]), name) == 0)
                        return k->ids[j];
        }
}

/* ---- by perf's comm: the thread's name as each sample comes ---- */

static const char *comm_name_of(const struct comm_keys *k, uint32_t id)
{
        return k->names[id - 1];
}

static uint32_t comm_id(struct comm_keys *k, const char *name)
{
        if ((k->nr + 1) * 2 > k->mask + 1 && !grow(k, comm_name_of))
                return 0;
        uint32_t j = (uint32_t)hash_str(name) & k->mask;
        for (; k->ids[j]; j = (j + 1) & k->mask)
                if (strcmp(comm_name_of(k, k->ids[j]), name) == 0)
                        return k->ids[j];
        if (k->nr_names == k->cap_names) {
                k->cap_names = k->cap_names ? 2 * k->cap_names : 64;
                k->names = xrealloc(k->names, k->cap_names * sizeof(*k->names));
        }
        snprintf(k->names[k->nr_names], sizeof(k->names[0]), "%s", name);
        k->ids[j] = ++k->nr_names;
        k->nr++;
        return k->nr_names;
}

/* The idle threads' comm, named at the end: perf's "swapper" in a Linux trace, else Idle. */
#define IDLE_KEY "\001idle"

static uint32_t comm_key(void *ctx, uint32_t pid, uint32_t tid)
{
        struct comm_keys *k = ctx;
        char text[sizeof(k->names[0])];
        const char *name = text;
        if (k->kind == COMM_THREAD) {
                switches_owner_text(k->sw, true, pid, tid, true, text, sizeof(text));
        } else if (!tid || tid == UINT32_MAX) {
                name = !tid ? IDLE_KEY : ":-1"; /* perf's, for a sample of no thread */
        } else {
                /* a thread of its process's own id: a Linux trace (Windows ids never meet) */
                if (tid == pid)
                        k->is_linux = true;
                name = switches_comm(k->sw, pid, tid);
                if (!name[0]) /* a thread no event named: perf's ":tid" */
                        snprintf(text, sizeof(text), ":%u", tid), name = text;
        }
        /* a thread's samples come in runs: its last key while it keeps its name */
        if (tid == k->last_tid && k->last_id && !strcmp(comm_name_of(k, k->last_id), name))
                return k->last_id;
        uint32_t id = comm_id(k, name);
        if (!id)
                return tid; /* no memory: the thread as it is */
        k->last_tid = tid;
        k->last_id = id;
        return id;
}

static void comm_name(void *ctx, uint32_t id, char *buf, size_t size)
{
        struct comm_keys *k = ctx;
        const char *name = id && id <= k->nr_names ? comm_name_of(k, id) : "";
        if (!strcmp(name, IDLE_KEY))
                name = k->is_linux ? "swapper" : SWITCHES_IDLE_NAME;
        snprintf(buf, size, "%s", name);
}

void comm_keys_use(struct comm_keys *k, struct profile *p, enum comm_kind kind)
{
        *k = (struct comm_keys){.sw = profile_switches(p), .kind = kind};
        if (kind == COMM_PROCESS_NAME)
                hot_set_process_key(profile_hot(p), process_key, k);
        else
                hot_set_comm_key(profile_hot(p), comm_key, comm_name, k);
}

void comm_keys_use_for_stacks(struct comm_keys *k, struct profile *p, struct stack_set *s)
{
        *k = (struct comm_keys){.sw = profile_switches(p), .kind = COMM_PERF};
        stack_set_set_comm_key(s, comm_key, comm_name, k);
}

void comm_keys_free(struct comm_keys *k)
{
        free(k->ids);
        free(k->names);
        k->ids = NULL;
        k->names = NULL;
}
