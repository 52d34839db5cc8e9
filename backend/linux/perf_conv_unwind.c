/* SPDX-License-Identifier: MIT */
/* perf_conv_unwind.c: the user stacks of samples: callchains and DWARF walks of register and stack
 * copies. */
#include "perf_conv_int.h"

/* ---- DWARF stack walks (doc/unwind.md) ---- */

/* The vdso is the same kernel's in every process: its rules, made once from the image the
   files hooks give. */
static struct unwind_module *vdso_module(struct perf_conv *c)
{
        if (c->has_tried_vdso)
                return c->uw_vdso;
        c->has_tried_vdso = true;
        size_t size = 0;
        const uint8_t *img = c->files->vdso_image(c->files_ctx, &size);
        struct unwind_error err;
        if (!img || unwind_module_open_mem(&c->uw_vdso, img, size, &err) < 0)
                c->uw_vdso = NULL;
        return c->uw_vdso;
}

/* The unwind module of an image of process pid and its bias, found once. */
static bool image_module(struct perf_conv *c, struct conv_image *e, uint32_t pid)
{
        if (e->uw_state == UW_UNTRIED) {
                struct unwind_module *m = NULL;
                e->uw_state = UW_NONE;
                if (strcmp(e->path, "[vdso]") == 0)
                        m = vdso_module(c);
                else if (e->path[0] == '/')
                        m = c->files->image_module(c->files_ctx, c->uw_cache, e->path, pid, e->base,
                                                   e->size, e->build_id, e->build_id_size);
                if (m && unwind_module_bias(m, e->base, e->pgoff, &e->uw_bias) == 0) {
                        e->uw = m;
                        e->uw_state = UW_READY;
                }
        }
        return e->uw_state == UW_READY;
}

/* The image of proc that maps addr, or NULL; the last one found is tried first. */
static struct conv_image *image_at(struct conv_proc *p, uint64_t addr, uint32_t *memo)
{
        if (*memo < p->nr_images) {
                struct conv_image *e = &p->images[*memo];
                if (addr - e->base < e->size)
                        return e;
        }
        for (uint32_t i = 0; i < p->nr_images; i++) {
                struct conv_image *e = &p->images[i];
                if (addr - e->base < e->size) {
                        *memo = i;
                        return e;
                }
        }
        return NULL;
}

struct walk_ctx {
        struct perf_conv *c;
        struct conv_proc *proc; /* NULL: the process is not known */
        uint32_t memo;
};

static int walk_find_map(void *ctx, uint64_t addr, struct unwind_map *map)
{
        struct walk_ctx *w = ctx;
        struct conv_image *e = w->proc ? image_at(w->proc, addr, &w->memo) : NULL;
        if (!e || !image_module(w->c, e, w->proc->pid))
                return -ENOENT;
        map->module = e->uw;
        map->bias = e->uw_bias;
        return 0;
}

/* The user registers of a sample, by DWARF number; false when it has none (a kernel thread)
   or they are not x86-64's (a 32-bit process: PERF_SAMPLE_REGS_ABI_32). */
static bool sample_regs(const struct perf_conv_event *ev, const struct perf_sample *s,
                        struct unwind_regs *regs)
{
        if (s->regs_abi != PERF_SAMPLE_REGS_ABI_64 || !s->regs || !s->stack || !s->stack_size)
                return false;
        uint64_t values[64];
        for (uint32_t i = 0; i < s->nr_regs && i < 64; i++)
                values[i] = le_get64(s->regs + 8 * i);
        unwind_regs_from_perf(regs, values, ev->regs_user_mask);
        return (regs->valid & (1u << UNWIND_REG_RSP | 1u << UNWIND_REG_RIP)) ==
               (1u << UNWIND_REG_RSP | 1u << UNWIND_REG_RIP);
}

/* Whether the code at addr of w's process keeps frame pointers (its module's FDEs say so). */
static bool is_fp_code(struct perf_conv *c, struct walk_ctx *w, uint64_t addr)
{
        struct conv_image *e = w->proc ? image_at(w->proc, addr, &w->memo) : NULL;
        return e && image_module(c, e, w->proc->pid) && unwind_module_has_frame_pointers(e->uw);
}

/* Whether a sample's user part is walked with DWARF CFI, else the kernel's frame-pointer chain
   serves: always in DWARF mode; in AUTO mode unless the sampled ip and every return address of
   the kernel's user chain lie in modules that keep frame pointers (the chain is then whole; a
   frame in code without them, Debian's libc, breaks it). */
static bool walks_dwarf(struct perf_conv *c, const struct perf_conv_event *ev,
                        const struct perf_sample *s, struct walk_ctx *w, uint64_t user_ip)
{
        if (ev->walk == PERF_CONV_WALK_DWARF)
                return true;
        if (!is_fp_code(c, w, user_ip))
                return true;
        bool is_user = false;
        for (uint64_t i = 0; i < s->nr_callchain; i++) {
                uint64_t a = le_get64(s->callchain + 8 * i);
                if (a >= (uint64_t)PERF_CONTEXT_MAX)
                        is_user = a == (uint64_t)PERF_CONTEXT_USER;
                else if (is_user && a != user_ip && !is_fp_code(c, w, a - 1))
                        return true;
        }
        return false;
}

/* Appends the user frames of the sample's register and stack copies to c->frames[n..]. */
static uint32_t unwind_user(struct perf_conv *c, const struct perf_sample *s,
                            const struct unwind_regs *regs, struct walk_ctx *w, uint64_t *frames,
                            uint32_t n)
{
        struct unwind_stack stack = {regs->r[UNWIND_REG_RSP], s->stack, (size_t)s->stack_size};
        /* the copy is fresh from the kernel, not in this CPU's cache: its first lines (where
           most frames lie) requested at once rather than one miss a frame */
        for (size_t off = 0; off < stack.size && off < 1024; off += 64)
                __builtin_prefetch(stack.data + off);
        struct unwind_walk_options opts = {.use_fp_fallback = true};
        struct unwind_result res;
        /* a sample taken in user mode has its ip first already: the walk, whose first frame is
           that ip, writes over it */
        uint32_t at = n == 1 && frames[0] == regs->r[UNWIND_REG_RIP] ? 0 : n;
        uint32_t nr = unwind_walk(regs, &stack, walk_find_map, w, &opts, frames + at,
                                  CONV_MAX_FRAMES - at, &res);
        c->uw_st.nr_frames += nr;
        n = at + nr > n ? at + nr : n;
        c->uw_st.nr_walks++;
        if ((uint32_t)res.stop < PERF_CONV_NR_UNWIND_STOPS)
                c->uw_st.nr_by_stop[res.stop]++;
        c->uw_st.nr_fp_frames += res.nr_fp_frames;
        return n;
}

/* chain_frames_to's loop over the chain's entries from i on, the frames after the n already in
   frames; is_capped: the entries left may be more than the frames' room (CONV_MAX_FRAMES), each
   frame counted against it. Inlined twice: the chains that fit (all but a runaway one) need no
   count in the loop, which runs for every frame of every stack. */
static inline __attribute__((always_inline)) uint32_t
chain_rest_to(struct perf_conv *c, const uint8_t *chain, uint64_t i, uint64_t nr, bool is_user,
              bool is_dwarf, uint64_t *frames, uint32_t n, bool is_capped)
{
        /* the kernel range in locals (a store to frames could alias c's fields) */
        uint64_t lo = c->kframe_lo, hi = c->kframe_hi;
        for (; i < nr; i++) {
                uint64_t a = le_get64(chain + 8 * i);
                if (__builtin_expect(a >= (uint64_t)PERF_CONTEXT_MAX, 0)) {
                        is_user = a == (uint64_t)PERF_CONTEXT_USER;
                        if (is_user && is_dwarf)
                                break; /* the walk gives the user part */
                        continue;      /* a context marker */
                }
                if (is_capped && n == CONV_MAX_FRAMES)
                        break;
                frames[n++] = a;
                if (is_kernel_addr(a)) {
                        /* kseen holds kernel-context addresses only, each within lo..hi when
                           it went in: a hit is in the set and in the range already */
                        if (__builtin_expect(is_user, 0)) {
                                conv_note_kaddr_slow(c, a); /* kernel-looking garbage */
                                continue;
                        }
                        uint64_t *seen = &c->kseen[(a ^ (a >> 10)) & 1023];
                        if (__builtin_expect(*seen != a, 0)) {
                                *seen = a;
                                conv_note_kaddr_slow(c, a);
                                lo = a < lo ? a : lo;
                                hi = a > hi ? a : hi;
                        }
                }
        }
        c->kframe_lo = lo;
        c->kframe_hi = hi;
        return n;
}

/* A chain of nr entries' key: its count and the entries where chains part most (the third and
   fourth kernel frames, where the paths into schedule() do; the middle one and the third from the
   end, among the user frames). Kept with the chain, so that a chain of another key is told apart
   without comparing its entries. */
static inline uint64_t kchain_key(const uint8_t *chain, uint64_t nr)
{
        uint64_t h = nr;
        if (nr >= 5)
                h += le_get64(chain + 8) ^ le_get64(chain + 24) << 1 ^ le_get64(chain + 32) << 2 ^
                     le_get64(chain + 8 * (nr / 2)) << 3 ^ le_get64(chain + 8 * (nr - 3)) << 4;
        return h;
}

/* The set of kept chains for a key: its top bits by a multiply (Fibonacci hashing: a change in
   any bit reaches them). */
static inline uint32_t kchain_set(uint64_t key)
{
        return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> (64 - CONV_KCHAIN_SET_BITS));
}

/* Whether k holds chain: the key first, as the two chains of a set share their length more
   often than not (a switch's and a wake-up's from the same code), and a memcmp that finds them
   apart costs as much as one that finds them the same. */
static inline bool kchain_is(const struct conv_kchain *k, const uint8_t *chain, uint64_t nr,
                             uint64_t key)
{
        return k->key == key && k->nr_ent == nr && memcmp(chain, k->ent, 8 * nr) == 0;
}

/* Room for a kept chain's frames, one share taken. */
static struct conv_kframes *kframes_new(struct perf_conv *c)
{
        struct conv_kframes *kf = c->kf_spare;
        if (kf) {
                c->kf_spare = (struct conv_kframes *)(uintptr_t)kf->frames[0];
                c->nr_kf_spare--;
        } else {
                kf = xmalloc(sizeof(*kf));
        }
        kf->refs = 1;
        kf->site_reason[0] = kf->site_reason[1] = -2;
        return kf;
}

void conv_kframes_spare(struct perf_conv *c, struct conv_kframes *kf)
{
        if (c->nr_kf_spare >= CONV_KFRAMES_SPARE) {
                free(kf);
                return;
        }
        kf->frames[0] = (uint64_t)(uintptr_t)c->kf_spare;
        c->kf_spare = kf;
        c->nr_kf_spare++;
}

void conv_kchains_free(struct perf_conv *c)
{
        for (uint32_t i = 0; i < 1u << CONV_KCHAIN_SET_BITS; i++) {
                for (uint32_t way = 0; way < 2; way++) {
                        conv_kframes_put(c, c->kchains[i][way].kf);
                        c->kchains[i][way].kf = NULL;
                        c->kchains[i][way].nr_ent = 0;
                }
        }
        while (c->kf_spare) {
                struct conv_kframes *kf = c->kf_spare;
                c->kf_spare = (struct conv_kframes *)(uintptr_t)kf->frames[0];
                free(kf);
        }
        c->nr_kf_spare = 0;
}

/* kchain_find's chain when not kept: copied frame by frame, then kept in set's way that was not
   used last (the frames it held stay while a switch-out stack shares them). */
static __attribute__((noinline)) struct conv_kframes *
kchain_keep(struct perf_conv *c, uint32_t set, uint64_t key, const uint8_t *chain, uint64_t nr)
{
        uint32_t way = !c->kchain_last[set];
        struct conv_kchain *k = &c->kchains[set][way];
        c->kchain_last[set] = (uint8_t)way;
        conv_kframes_put(c, k->kf);
        k->kf = kframes_new(c);
        k->kf->nr = chain_rest_to(c, chain, 0, nr, false, false, k->kf->frames, 0, false);
        k->key = key;
        k->nr_ent = (uint32_t)nr;
        memcpy(k->ent, chain, 8 * (size_t)nr);
        return k->kf;
}

/* The frames of a tracepoint's chain of nr entries (at most CONV_KCHAIN_MAX) that starts in
   kernel context and whose user part no walk takes: the kept ones when the same entries were
   kept (kchains, two ways a set: two hot chains that share a set both stay), kept once copied
   frame by frame when not. */
static inline struct conv_kframes *kchain_find(struct perf_conv *c, const uint8_t *chain,
                                               uint64_t nr)
{
        uint64_t key = kchain_key(chain, nr);
        uint32_t set = kchain_set(key);
        const struct conv_kchain *k = c->kchains[set];
        if (!kchain_is(k, chain, nr, key)) {
                if (!kchain_is(++k, chain, nr, key))
                        return kchain_keep(c, set, key, chain, nr);
        }
        c->kchain_last[set] = (uint8_t)(k - c->kchains[set]);
        return k->kf;
}

/* kchain_find's frames copied into frames. Inline in its callers (a wake-up's stack, in the
   sink's room): apart, it saved and restored six registers of its own at every wake-up. */
static inline uint32_t chain_kept_to(struct perf_conv *c, const uint8_t *chain, uint64_t nr,
                                     uint64_t *frames)
{
        const struct conv_kframes *kf = kchain_find(c, chain, nr);
        memcpy(frames, kf->frames, 8 * (size_t)kf->nr);
        return kf->nr;
}

/* Whether the chain of sample s, without its ip first and walked by frame pointers alone, is
   one that is kept whole (chain_kept_to). A tracepoint's chain (a switch's, a wake-up's) is
   nearly always one of a few (schedule() from a pipe read, a futex, a sleep, from the same user
   code): kept, its kernel addresses noted once. Not a sample's in kernel code: its chains repeat
   less, and one not kept costs about 190 instructions more (bench_drain kstacks). nr_callchain
   0 wraps past CONV_KCHAIN_MAX. */
static inline bool is_chain_kept_kind(const struct perf_sample *s)
{
        return s->nr_callchain - 1 < CONV_KCHAIN_MAX &&
               le_get64(s->callchain) != (uint64_t)PERF_CONTEXT_USER;
}

struct conv_kframes *conv_chain_kept(struct perf_conv *c, const struct perf_sample *s)
{
        if (!is_chain_kept_kind(s))
                return NULL;
        return kchain_find(c, s->callchain, s->nr_callchain);
}

/* chain_frames_to of a chain not kept whole: frame by frame. Apart from the test for a kept
   one, which gcc would otherwise make after saving the six registers this loop needs (a
   wake-up's stack saved and restored them only to jump to chain_kept_to). */
static __attribute__((noinline)) uint32_t chain_walk_to(struct perf_conv *c,
                                                        const struct perf_sample *s,
                                                        bool is_ip_first, bool is_dwarf,
                                                        uint64_t *frames)
{
        uint32_t n = 0;
        bool is_user = false; /* after PERF_CONTEXT_USER: kernel-looking values are garbage */
        if (is_ip_first) {
                frames[n++] = s->ip;
                if (is_kernel_addr(s->ip)) {
                        note_kaddr(c, s->ip);
                        note_kernel_frame(c, s->ip);
                }
        }
        /* the chain's first frames that repeat the ip, dropped before it; and its first frame
           where it is the interrupted address of the ip's own context (the kernel's ip, or the
           user's where the chain has no kernel part) but not the ip: a precise sample's
           (PEBS, IBS), whose ip is the instruction that counted and whose chain starts where
           the interrupt found the CPU, a few bytes on. The ip stands for that frame, as the
           chain's leaf does in perf's stacks: not one frame more, its own caller. A user
           address after the kernel's part is another frame (the system call's caller); a
           kernel part before a user ip's, where the interrupt found the thread once it had
           entered the kernel (a precise user sample's skid), is none of its stack. */
        const uint8_t *chain = s->callchain;
        uint64_t nr = s->nr_callchain, i = 0;
        bool is_first = true, is_ip_kernel = is_kernel_addr(s->ip);
        for (; is_ip_first && i < nr; i++) {
                uint64_t a = le_get64(chain + 8 * i);
                if (a >= (uint64_t)PERF_CONTEXT_MAX) {
                        is_user = a == (uint64_t)PERF_CONTEXT_USER;
                        if (is_user && is_dwarf)
                                i = nr; /* the walk gives the user part */
                        continue;
                }
                if (a == s->ip) {
                        is_first = false;
                        continue;
                }
                if (is_first && !is_user && !is_ip_kernel && is_kernel_addr(a)) {
                        while (i + 1 < nr && le_get64(chain + 8 * (i + 1)) < PERF_CONTEXT_MAX)
                                i++;
                        continue;
                }
                if (is_first && is_user != is_ip_kernel && is_user != is_kernel_addr(a))
                        i++;
                break;
        }
        if (nr - i <= CONV_MAX_FRAMES - n)
                return chain_rest_to(c, chain, i, nr, is_user, is_dwarf, frames, n, false);
        return chain_rest_to(c, chain, i, nr, is_user, is_dwarf, frames, n, true);
}

/* The sample's callchain into frames without its PERF_CONTEXT_* markers (kernel part then user
   part, as perf gives it), with ip first when it is not already; without its user part when
   is_dwarf (the walk gives it). Apart from the walk's setup (its registers, its context): the
   stacks of a frame-pointer session, every one of them, need none of it. A tracepoint's chain
   kept whole is copied at once (chain_kept_to). */
static inline uint32_t chain_frames_to(struct perf_conv *c, const struct perf_sample *s,
                                       bool is_ip_first, bool is_dwarf, uint64_t *frames)
{
        if (!is_ip_first && !is_dwarf && is_chain_kept_kind(s))
                return chain_kept_to(c, s->callchain, s->nr_callchain, frames);
        return chain_walk_to(c, s, is_ip_first, is_dwarf, frames);
}

/* perf record --call-graph lbr (ev->is_lbr_call_graph): a sample with its LBR entries and a
   chain with a user part. */
static bool is_lbr_call_stack(const struct perf_sample *s)
{
        if (!s->nr_branches || !s->branches)
                return false;
        for (uint64_t i = 0; i < s->nr_callchain; i++)
                if (le_get64(s->callchain + 8 * i) == (uint64_t)PERF_CONTEXT_USER)
                        return true;
        return false;
}

/* The chain's kernel part, then its user part from the LBR call stack, as perf report makes it
   (resolve_lbr_callchain_sample): the latest active call's target (the user function the sample,
   or its system call, is in; left out when the sampled user ip is frame 0 already), then each
   active call's site, innermost first. The chain's own user frames (frame pointers, which code
   built without them makes garbage) are left. */
static uint32_t lbr_frames_to(struct perf_conv *c, const struct perf_sample *s, bool is_ip_first,
                              uint64_t *frames)
{
        uint32_t n = chain_frames_to(c, s, is_ip_first, true, frames);
        bool has_user = false;
        for (uint32_t i = 0; i < n && !has_user; i++)
                has_user = !is_kernel_addr(frames[i]);
        for (uint64_t i = 0; i < s->nr_branches && n < CONV_MAX_FRAMES; i++) {
                const uint8_t *e = s->branches + 24 * i;
                if (i == 0 && !has_user && le_get64(e + 8))
                        frames[n++] = le_get64(e + 8);
                if (n < CONV_MAX_FRAMES && le_get64(e))
                        frames[n++] = le_get64(e);
        }
        c->st.nr_lbr_call_stacks++;
        return n;
}

/* The callchain without PERF_CONTEXT_* markers (chain_frames_to), its user part the DWARF walk
   of the sample's register and stack copies where ev's walk asks for it, or the LBR call stack
   where the event recorded one (lbr_frames_to). */
static uint32_t collect_frames_to(struct perf_conv *c, const struct perf_conv_event *ev,
                                  const struct perf_sample *s, bool is_ip_first, uint64_t *frames)
{
        if (__builtin_expect(ev->is_lbr_call_graph, 0) && is_lbr_call_stack(s))
                return lbr_frames_to(c, s, is_ip_first, frames);
        if (ev->walk == PERF_CONV_WALK_FP)
                return chain_frames_to(c, s, is_ip_first, false, frames);
        struct unwind_regs regs;
        struct walk_ctx w = {c, NULL, UINT32_MAX};
        bool is_dwarf = false;
        if (sample_regs(ev, s, &regs)) {
                if (!c->uw_cache)
                        unwind_cache_new(&c->uw_cache, NULL);
                w.proc = conv_umap_find(&c->procs, s->pid);
                is_dwarf = c->uw_cache && walks_dwarf(c, ev, s, &w, regs.r[UNWIND_REG_RIP]);
                if (!is_dwarf)
                        c->uw_st.nr_fp_chains++;
        }
        uint32_t n = chain_frames_to(c, s, is_ip_first, is_dwarf, frames);
        if (is_dwarf && n < CONV_MAX_FRAMES)
                n = unwind_user(c, s, &regs, &w, frames, n);
        return n;
}

uint32_t conv_collect_frames(struct perf_conv *c, const struct perf_conv_event *ev,
                             const struct perf_sample *s, bool is_ip_first)
{
        return collect_frames_to(c, ev, s, is_ip_first, c->frames);
}

uint32_t conv_collect_frames_to(struct perf_conv *c, const struct perf_conv_event *ev,
                                const struct perf_sample *s, bool is_ip_first, uint64_t *frames)
{
        return collect_frames_to(c, ev, s, is_ip_first, frames);
}

/* The StackWalk record at rec (its frames in place from STACK_REC_HEAD on), through the sink
   when is_direct, else through emit (rec is then c->stack_rec). */
static int stack_finish(struct perf_conv *c, uint8_t *rec, bool is_direct, uint32_t cpu,
                        uint64_t ts, uint32_t pid, uint32_t tid, uint32_t nr)
{
        return conv_rec_end(c, cpu, rec, conv_stack_head(rec, ts, pid, tid, nr), is_direct);
}

bool conv_emit_stack_direct(struct perf_conv *c, const struct perf_conv_event *ev,
                            const struct perf_sample *s, bool is_ip_first, uint32_t cpu,
                            uint64_t ts, int *rc, uint8_t *room)
{
        *rc = 0;
        uint8_t *rec = room;
        if (!rec) {
                uint64_t most = s->nr_callchain + (is_ip_first ? 1 : 0);
                if (most > CONV_MAX_FRAMES)
                        most = CONV_MAX_FRAMES;
                rec = c->sink.reserve(c->sink.ctx, cpu, STACK_REC_HEAD + 8 * (uint32_t)most);
        }
        if (!rec)
                return false;
        uint32_t nr = collect_frames_to(c, ev, s, is_ip_first,
                                        (uint64_t *)(void *)(rec + STACK_REC_HEAD));
        if (!nr) {
                c->sink.commit(c->sink.ctx, cpu, 0);
                return true;
        }
        *rc = stack_finish(c, rec, true, cpu, ts, s->pid, s->tid, nr);
        return true;
}

int conv_emit_stack(struct perf_conv *c, uint32_t cpu, uint64_t ts, uint32_t pid, uint32_t tid,
                    uint32_t nr)
{
        /* the frames are in place already: the payload head goes before them */
        return stack_finish(c, c->stack_rec, false, cpu, ts, pid, tid, nr);
}
