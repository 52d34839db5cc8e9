/* SPDX-License-Identifier: MIT */
/* perf_conv_tables.c: the converter's tables of processes, threads and images, the traced process,
 * switch-out stacks. */
#include "perf_conv_int.h"

#include <stddef.h>

/* ---- table updates ---- */

struct conv_proc *conv_proc_get(struct perf_conv *c, uint32_t pid)
{
        bool is_new;
        struct conv_proc *p = conv_umap_get(&c->procs, pid, &is_new);
        if (p && is_new)
                p->ppid = p->uid = CONV_NONE;
        return p;
}

void conv_proc_set_cmdline(struct conv_proc *p, const char *cmdline)
{
        free(p->cmdline);
        p->cmdline = NULL;
        if (cmdline && cmdline[0]) {
                size_t n = strnlen(cmdline, CONV_MAX_CMDLINE);
                p->cmdline = xcalloc(1, n + 1);
                memcpy(p->cmdline, cmdline, n);
        }
}

/* An image path shared by the images of a process and of the children it forks: a fork
   shares its parent's paths, not copies them (a shell's storm of forks was 81,005 copies in
   one 5 s recording). */
struct conv_path {
        uint32_t refs;
        char s[];
};

static struct conv_path *path_of(char *s)
{
        return (struct conv_path *)(void *)(s - offsetof(struct conv_path, s));
}

char *conv_path_new(const char *s, size_t len)
{
        struct conv_path *p = xmalloc(sizeof(*p) + len + 1);
        p->refs = 1;
        memcpy(p->s, s, len);
        p->s[len] = 0;
        return p->s;
}

void conv_path_share(char *path)
{
        path_of(path)->refs++;
}

void conv_path_put(char *path)
{
        if (path && --path_of(path)->refs == 0)
                free(path_of(path));
}

/* Adds an image to the process, in place of what it overlaps (a mapping replaces what was there,
   as perf does: there is no unmap record). */
void conv_proc_add_image(struct conv_proc *p, const struct perf_conv_image *im)
{
        /* room for the image and for the one piece of another it may leave after its end */
        if (p->nr_images + 2 > p->cap_images) {
                uint32_t cap = p->cap_images ? p->cap_images * 2 : 16;
                p->images = xrealloc(p->images, cap * sizeof(*p->images));
                p->cap_images = cap;
        }
        /* what it maps over is no longer there; the parts of an image before and after it
           stay, as the kernel keeps them (perf's maps and the symbol store cut the same: a
           library mapped into the hole another's reservation left keeps that one's text) */
        uint64_t end = im->base + im->size;
        uint32_t o = 0;
        struct conv_image right;
        bool has_right = false;
        for (uint32_t i = 0; i < p->nr_images; i++) {
                struct conv_image *e = &p->images[i];
                uint64_t e_end = e->base + e->size;
                if (e->base >= end || im->base >= e_end) {
                        p->images[o++] = *e;
                        continue;
                }
                if (e_end > end) {
                        right = *e;
                        right.base = end;
                        right.size = e_end - end;
                        right.pgoff += end - e->base;
                        conv_path_share(right.path);
                        has_right = true;
                }
                if (e->base < im->base) {
                        e->size = im->base - e->base;
                        p->images[o++] = *e;
                        continue;
                }
                p->nr_pending -= (e->flags & CONV_IMAGE_PENDING) != 0;
                conv_path_put(e->path);
        }
        if (has_right) {
                p->images[o++] = right;
                p->nr_pending += (right.flags & CONV_IMAGE_PENDING) != 0;
        }
        p->nr_images = o;
        if (p->nr_images >= CONV_MAX_IMAGES)
                return;
        struct conv_image *e = &p->images[p->nr_images++];
        memset(e, 0, sizeof(*e));
        e->base = im->base;
        e->size = im->size;
        e->pgoff = im->pgoff;
        e->path = conv_path_new(im->path, strnlen(im->path, CONV_MAX_PATH));
        if (im->build_id && im->build_id_size <= BUILD_ID_MAX) {
                memcpy(e->build_id, im->build_id, im->build_id_size);
                e->build_id_size = (uint8_t)im->build_id_size;
        }
        e->flags = (uint8_t)(im->flags & CONV_IMAGE_EVENT_FLAGS);
}

void conv_proc_inherit(struct conv_proc *p, const struct conv_proc *parent, bool is_pending)
{
        uint32_t n = parent->nr_images;
        if (!n)
                return;
        p->images = xmalloc(n * sizeof(*p->images));
        p->nr_images = p->cap_images = n;
        p->nr_pending = is_pending ? n : 0;
        for (uint32_t i = 0; i < n; i++) {
                struct conv_image *e = &p->images[i];
                *e = parent->images[i];
                conv_path_share(e->path);
                e->flags = (uint8_t)((e->flags & CONV_IMAGE_EVENT_FLAGS) |
                                     (is_pending ? CONV_IMAGE_PENDING : 0));
                /* the unwind module is looked up for the child's own pid */
                e->uw_state = UW_UNTRIED;
                e->uw = NULL;
                e->uw_bias = 0;
        }
}

int conv_inherited_flush(struct perf_conv *c, uint32_t pid, uint32_t cpu, uint64_t ts, uint32_t tid)
{
        struct conv_proc *p = conv_umap_find(&c->procs, pid);
        if (!p || !p->nr_pending)
                return 0;
        c->nr_pending_procs--; /* all written below */
        int rc = 0;
        for (uint32_t i = 0; i < p->nr_images && p->nr_pending; i++) {
                struct conv_image *e = &p->images[i];
                if (!(e->flags & CONV_IMAGE_PENDING))
                        continue;
                e->flags &= (uint8_t)~CONV_IMAGE_PENDING;
                p->nr_pending--;
                struct perf_conv_image im = {pid,
                                             e->base,
                                             e->size,
                                             e->pgoff,
                                             e->path,
                                             e->build_id,
                                             e->build_id_size,
                                             (uint32_t)(e->flags & CONV_IMAGE_EVENT_FLAGS) |
                                                     ETWTOP_IMAGE_FLAG_INHERITED};
                if (rc == 0)
                        rc = conv_emit_image(c, WMI_LOG_TYPE_PROCESS_LOAD_IMAGE, cpu, ts, tid, &im);
        }
        return rc;
}

void conv_task_set(struct perf_conv *c, uint32_t tid, uint32_t pid, const char *comm, int64_t prio)
{
        bool is_new;
        struct conv_task *t = conv_umap_get(&c->tasks, tid, &is_new);
        if (!t)
                return;
        t->pid = pid;
        if (is_new)
                t->prio = -1;
        if (prio >= 0)
                t->prio = (int32_t)prio;
        if (comm)
                conv_clip(t->comm, comm, sizeof(t->comm) - 1);
}

const char *conv_comm_of(struct perf_conv *c, uint32_t tid, uint32_t pid)
{
        const struct conv_task *t = conv_umap_find(&c->tasks, tid);
        if (t && t->comm[0])
                return t->comm;
        const struct conv_proc *p = conv_umap_find(&c->procs, pid);
        return p ? p->comm : "";
}

/* Forgets every thread of pid. */
void conv_tasks_drop_process(struct perf_conv *c, uint32_t pid)
{
        for (uint32_t i = 0; i <= c->tasks.mask;) {
                struct conv_task *t = (struct conv_task *)(void *)umap_key(&c->tasks, i);
                if (t->tid != CONV_NONE && t->pid == pid)
                        conv_umap_remove(&c->tasks, t); /* slot i may now hold another entry */
                else
                        i++;
        }
}

/* Whether tid is one of the traced process's threads (every thread without -p). */
bool conv_is_traced(const struct perf_conv *c, uint32_t tid)
{
        if (!c->traced_pid || tid == c->traced_pid)
                return true;
        const struct conv_task *t = conv_umap_find(&c->tasks, tid);
        return t && t->pid == c->traced_pid;
}

/* Whether a record of process pid is written: with -p, only the traced process's. */
bool conv_is_own(struct perf_conv *c, uint32_t pid)
{
        if (!c->traced_pid || pid == c->traced_pid)
                return true;
        c->st.nr_foreign++;
        return false;
}

void perf_conv_set_learn_threads(struct perf_conv *c, bool is_on)
{
        c->is_learning_threads = is_on;
}

int conv_thread_learn(struct perf_conv *c, uint32_t cpu, uint64_t ts, uint32_t pid, uint32_t tid)
{
        if (!tid || pid == CONV_NONE || tid == CONV_NONE || conv_umap_find(&c->tasks, tid))
                return 0;
        conv_task_set(c, tid, pid, NULL, -1);
        if (!c->has_thread)
                return 0;
        char comm[16];
        conv_clip(comm, conv_comm_of(c, tid, pid), sizeof(comm) - 1);
        return conv_emit_thread(c, WMI_LOG_TYPE_THREAD_DC_START, cpu, ts, tid, pid, pid, tid, -1,
                                comm);
}

void perf_conv_set_process(struct perf_conv *c, uint32_t pid, const int32_t *tids, uint32_t nr)
{
        c->traced_pid = pid;
        if (pid && !c->last_out)
                c->last_out = xcalloc(c->nr_cpus, sizeof(*c->last_out));
        for (uint32_t i = 0; pid && i < nr; i++)
                if (tids[i] > 0 && !conv_umap_find(&c->tasks, (uint32_t)tids[i]))
                        conv_task_set(c, (uint32_t)tids[i], pid, NULL, -1);
}

/* ---- switch-out stacks ---- */

/* The size class of an array of nr frames. */
static uint8_t stack_class(uint32_t nr)
{
        uint8_t cls = 0;
        while ((CONV_STACK_MIN << cls) < nr && cls + 1u < CONV_STACK_CLASSES)
                cls++;
        return cls;
}

static uint64_t *stack_frames_get(struct conv_stack_pool *pool, uint8_t cls)
{
        uint64_t *f = pool->free[cls];
        if (!f)
                return xmalloc((size_t)(CONV_STACK_MIN << cls) * sizeof(*f));
        pool->free[cls] = (uint64_t *)(uintptr_t)f[0];
        pool->nr_free[cls]--;
        return f;
}

static void stack_frames_put(struct conv_stack_pool *pool, uint64_t *f, uint8_t cls)
{
        if (!f)
                return;
        if (pool->nr_free[cls] >= CONV_STACK_POOL_MAX) {
                free(f);
                return;
        }
        f[0] = (uint64_t)(uintptr_t)pool->free[cls];
        pool->free[cls] = f;
        pool->nr_free[cls]++;
}

void conv_stack_pool_free(struct conv_stack_pool *pool)
{
        for (uint32_t i = 0; i < CONV_STACK_CLASSES; i++) {
                while (pool->free[i])
                        free(stack_frames_get(pool, (uint8_t)i));
        }
}

/* A thread's entry goes when it ends (or stacks are turned off); its switch-in empties it
   (nr 0) and leaves its array (up to 32 frames) for its next switch-out, so that a switch
   neither adds nor removes an entry: at most CONV_MAX_SAVED_STACKS hold frames, and past as many
   entries a switch-in removes its thread's. */
static void stack_drop(struct perf_conv *c, struct conv_stack *k)
{
        if (k->nr)
                c->nr_kept_stacks--;
        conv_kframes_put(c, k->kf);
        stack_frames_put(&c->stack_pool, k->frames, k->cls);
        conv_umap_remove(&c->stacks, k);
}

/* tid's entry with an array of at least most frames, for its switch-out's frames to go into
   before conv_stack_kept says how many: NULL when tid's are not kept (tid 0, or
   CONV_MAX_SAVED_STACKS entries holding frames already and tid's not one of them). What the
   entry held is replaced; a frame-pointer CSwitch collects its chain straight into it. */
/* tid's entry, its frames to be replaced (a share of a kept chain let go): NULL when tid's are
   not kept (conv_stack_room). Inline: a switch whose chain is kept shares it here (a call of
   its own saved and restored six registers at every such switch). */
static inline __attribute__((always_inline)) struct conv_stack *stack_entry(struct perf_conv *c,
                                                                            uint32_t tid)
{
        /* tid 0 (the idle thread) and -1 (CONV_NONE: no thread, which no table holds) */
        if (tid == 0 || tid == CONV_NONE)
                return NULL;
        struct conv_stack *k = conv_umap_find(&c->stacks, tid);
        if ((!k || !k->nr) && c->nr_kept_stacks >= CONV_MAX_SAVED_STACKS)
                return NULL;
        if (!k) {
                bool is_new;
                k = conv_umap_get(&c->stacks, tid, &is_new);
                k->frames = NULL;
                k->cls = 0;
                k->kf = NULL;
        } else if (k->kf) {
                conv_kframes_put(c, k->kf);
                k->kf = NULL;
        }
        return k;
}

struct conv_stack *conv_stack_room(struct perf_conv *c, uint32_t tid, uint32_t most)
{
        struct conv_stack *k = stack_entry(c, tid);
        if (!k)
                return NULL;
        if (most > CONV_MAX_FRAMES)
                most = CONV_MAX_FRAMES;
        if (!k->frames || (CONV_STACK_MIN << k->cls) < most) {
                stack_frames_put(&c->stack_pool, k->frames, k->cls);
                k->cls = stack_class(most);
                k->frames = stack_frames_get(&c->stack_pool, k->cls);
        }
        return k;
}

/* k (conv_stack_room's) holds nr frames of pid's thread now; none: the entry goes. */
void conv_stack_kept(struct perf_conv *c, struct conv_stack *k, uint32_t pid, uint32_t nr)
{
        if (!nr) {
                stack_drop(c, k);
                return;
        }
        if (!k->nr)
                c->nr_kept_stacks++;
        k->nr = nr;
        k->pid = pid;
}

/* tid has left the CPU with the nr frames in c->frames (its pid's): kept for its next switch-in,
   replacing what was kept (nr 0: nothing is kept). */
void conv_stack_keep(struct perf_conv *c, uint32_t tid, uint32_t pid, uint32_t nr)
{
        if (!nr || tid == 0) {
                struct conv_stack *k = conv_umap_find(&c->stacks, tid);
                if (k)
                        stack_drop(c, k);
                return;
        }
        if (nr > CONV_MAX_FRAMES)
                nr = CONV_MAX_FRAMES;
        struct conv_stack *k = conv_stack_room(c, tid, nr);
        if (!k)
                return;
        memcpy(k->frames, c->frames, nr * sizeof(*k->frames));
        conv_stack_kept(c, k, pid, nr);
}

/* tid has left the CPU with kf's frames (its pid's): a share of them kept for its next
   switch-in, as conv_stack_keep keeps frames. */
static inline void stack_share(struct perf_conv *c, uint32_t tid, uint32_t pid,
                               struct conv_kframes *kf)
{
        struct conv_stack *k = stack_entry(c, tid);
        if (!k) {
                /* as conv_stack_room's callers: an empty entry left at the limit goes when
                   the stack it would have kept is empty */
                if (!kf->nr)
                        conv_stack_keep(c, tid, pid, 0);
                return;
        }
        if (kf->nr) {
                kf->refs++;
                k->kf = kf;
        }
        conv_stack_kept(c, k, pid, kf->nr);
}

void conv_stacks_change(struct perf_conv *c, bool is_on)
{
        c->has_switch_stacks = is_on;
        if (is_on)
                return;
        for (uint32_t i = 0; i <= c->stacks.mask; i++) {
                struct conv_stack *k = (struct conv_stack *)(void *)umap_key(&c->stacks, i);
                if (k->tid != CONV_NONE) {
                        conv_kframes_put(c, k->kf);
                        stack_frames_put(&c->stack_pool, k->frames, k->cls);
                        k->tid = CONV_NONE;
                }
        }
        c->stacks.nr = 0;
        c->nr_kept_stacks = 0;
}

void conv_stack_spent(struct perf_conv *c, struct conv_stack *k)
{
        if (c->stacks.nr > CONV_MAX_SAVED_STACKS) {
                stack_drop(c, k);
        } else {
                /* an empty entry keeps an array of up to 32 frames, a long one goes back */
                stack_frames_put(&c->stack_pool, k->frames, k->cls);
                k->frames = NULL;
        }
}

int conv_emit_switch_in_stack(struct perf_conv *c, uint32_t cpu, uint64_t ts, uint32_t tid)
{
        struct conv_stack *k = tid ? conv_umap_find(&c->stacks, tid) : NULL;
        if (!k || !k->nr)
                return 0;
        return conv_switch_in_stack(c, cpu, ts, tid, k, NULL);
}

struct conv_stack *conv_switch_share(struct perf_conv *c, uint32_t old_tid, uint32_t pid,
                                     struct conv_kframes *kf, uint32_t new_tid)
{
        stack_share(c, old_tid, pid, kf);
        return conv_switch_in_find(c, new_tid);
}
