/* SPDX-License-Identifier: MIT */
/* bench_unwind.c: the unwinder's cost, by hand (not a test): the tables' build time per module of
   this process, then frames per second over one real stack (a qsort comparator under 20 levels
   of recursion, snapshotted as perf's REGS_USER/STACK_USER would give it) three ways: the cached
   tables (unwind_walk), libdw's CFI per frame (dwarf_cfi_addrframe + dwarf_frame_cfa +
   dwarf_frame_register, the rules evaluated by hand), and libdw's whole unwinder
   (dwfl_getthread_frames with the snapshot behind its callbacks, as perf's unwind-libdw does).
   Usage: bench_unwind [seconds per mode, default 1] */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "unwind/unwind.h"

#define MAX_FRAMES 128
#define MAX_MAPS   128
#define MAX_COPY   (64 * 1024)

struct bmap {
        uint64_t start, end, bias;
        char path[256];
        struct unwind_module *module;
        Elf *elf; /* for libdw's CFI */
        int fd;
        Dwarf_CFI *cfi;
};

static struct bmap maps[MAX_MAPS];
static int nr_maps;
static struct unwind_regs snap_regs;
static uint8_t snap_bytes[MAX_COPY];
static struct unwind_stack snap_stack;
static volatile int sink;

/* CPU time: the numbers hold on a busy machine */
static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The mapping of an address: the last one found first, as a live source's per-process map
   would answer (consecutive frames are mostly in one module). */
static struct bmap *map_of(uint64_t addr)
{
        static struct bmap *last;
        if (last && addr >= last->start && addr < last->end)
                return last;
        for (int i = 0; i < nr_maps; i++)
                if (addr >= maps[i].start && addr < maps[i].end)
                        return last = &maps[i];
        return NULL;
}

static int find_map(void *ctx, uint64_t addr, struct unwind_map *out)
{
        (void)ctx;
        struct bmap *m = map_of(addr);
        if (!m)
                return -ENOENT;
        out->module = m->module;
        out->bias = m->bias;
        return 0;
}

static uint64_t stack_end_of(uint64_t sp)
{
        FILE *f = fopen("/proc/self/maps", "r");
        char line[512];
        uint64_t end = 0;
        while (f && fgets(line, sizeof(line), f)) {
                unsigned long long s, e;
                if (sscanf(line, "%llx-%llx", &s, &e) == 2 && sp >= s && sp < e)
                        end = e;
        }
        if (f)
                fclose(f);
        return end;
}

static __attribute__((noinline)) void snapshot(void)
{
        uint64_t ip, sp, bp;
        __asm__ volatile("lea 0(%%rip), %0\n\t"
                         "mov %%rsp, %1\n\t"
                         "mov %%rbp, %2\n\t"
                         : "=r"(ip), "=r"(sp), "=r"(bp));
        uint64_t end = stack_end_of(sp);
        size_t size = end - sp < MAX_COPY ? end - sp : MAX_COPY;
        memcpy(snap_bytes, (const void *)(uintptr_t)sp, size);
        unwind_regs_set(&snap_regs, ip, sp, bp);
        snap_stack = (struct unwind_stack){sp, snap_bytes, size};
        __asm__ volatile("" ::: "memory");
}

static int nr_compares;

static __attribute__((noinline)) int compare(const void *a, const void *b)
{
        if (++nr_compares == 5)
                snapshot();
        return *(const int *)a - *(const int *)b;
}

static __attribute__((noinline)) int deep(int n)
{
        volatile int pad[4] = {n, n, n, n};
        if (n == 0) {
                int v[32];
                for (int i = 0; i < 32; i++)
                        v[i] = (i * 37) % 31;
                qsort(v, 32, sizeof(int), compare);
                return v[0];
        }
        return deep(n - 1) + pad[1];
}

static void read_maps(struct unwind_cache *c)
{
        FILE *f = fopen("/proc/self/maps", "r");
        char line[512];
        while (f && fgets(line, sizeof(line), f) && nr_maps < MAX_MAPS) {
                unsigned long long s, e, off;
                char perms[8], path[256] = "";
                if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %255s", &s, &e, perms, &off, path) <
                            4 ||
                    !strchr(perms, 'x') || path[0] != '/')
                        continue;
                struct bmap *m = &maps[nr_maps];
                if (unwind_cache_get(c, path, NULL, 0, &m->module) < 0)
                        continue;
                m->start = s;
                m->end = e;
                snprintf(m->path, sizeof(m->path), "%s", path);
                unwind_module_bias(m->module, s, off, &m->bias);
                m->fd = open(path, O_RDONLY);
                m->elf = elf_begin(m->fd, ELF_C_READ_MMAP, NULL);
                m->cfi = m->elf ? dwarf_getcfi_elf(m->elf) : NULL;
                nr_maps++;
        }
        if (f)
                fclose(f);
}

/* ---- libdw per frame ---- */

static bool read64(uint64_t addr, uint64_t *v)
{
        if (addr < snap_stack.base || addr - snap_stack.base + 8 > snap_stack.size)
                return false;
        memcpy(v, snap_stack.data + (addr - snap_stack.base), 8);
        return true;
}

/* A caller register under libdw's rule: same value, or a location CFA + n. */
static bool libdw_reg(Dwarf_Frame *fr, int reg, uint64_t cfa, uint64_t same, uint64_t *out)
{
        Dwarf_Op mem[3], *ops;
        size_t nops;
        if (dwarf_frame_register(fr, reg, mem, &ops, &nops) < 0)
                return false;
        if (nops == 0) {
                *out = same;
                return ops == NULL; /* same value; undefined is lost */
        }
        if (ops[0].atom != DW_OP_call_frame_cfa)
                return false;
        uint64_t addr = cfa + (nops > 1 && ops[1].atom == DW_OP_plus_uconst ? ops[1].number : 0);
        return read64(addr, out);
}

static uint32_t libdw_walk(uint64_t *frames)
{
        uint64_t ip = snap_regs.r[UNWIND_REG_RIP], sp = snap_regs.r[UNWIND_REG_RSP];
        uint64_t bp = snap_regs.r[UNWIND_REG_RBP];
        bool is_exact = true;
        uint32_t n = 0;
        while (n < MAX_FRAMES) {
                frames[n++] = ip;
                struct bmap *m = map_of(ip - !is_exact);
                Dwarf_Frame *fr;
                if (!m || !m->cfi || dwarf_cfi_addrframe(m->cfi, ip - m->bias - !is_exact, &fr))
                        break;
                Dwarf_Op *ops;
                size_t nops;
                uint64_t cfa, ra, caller_bp;
                bool is_ok = dwarf_frame_cfa(fr, &ops, &nops) == 0 && nops == 1 &&
                             ops[0].atom == DW_OP_bregx &&
                             (ops[0].number == 7 || ops[0].number == 6);
                if (is_ok) {
                        cfa = (ops[0].number == 7 ? sp : bp) + ops[0].number2;
                        is_ok = libdw_reg(fr, 16, cfa, 0, &ra) &&
                                libdw_reg(fr, 6, cfa, bp, &caller_bp);
                }
                free(fr);
                if (!is_ok || ra == 0)
                        break;
                ip = ra;
                sp = cfa;
                bp = caller_bp;
                is_exact = false;
        }
        return n;
}

/* ---- libdw's unwinder ---- */

static pid_t dw_next_thread(Dwfl *dwfl, void *arg, void **thread_arg)
{
        (void)dwfl;
        if (*thread_arg)
                return 0;
        *thread_arg = arg;
        return 4242;
}
static bool dw_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_arg)
{
        (void)dwfl;
        (void)tid;
        *thread_arg = arg;
        return true;
}
static bool dw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
        (void)dwfl;
        (void)arg;
        uint64_t v;
        if (!read64(addr, &v))
                return false;
        *result = v;
        return true;
}
static bool dw_set_registers(Dwfl_Thread *thread, void *arg)
{
        (void)arg;
        Dwarf_Word r[2] = {snap_regs.r[6], snap_regs.r[7]};
        dwfl_thread_state_registers(thread, 6, 2, r);
        dwfl_thread_state_register_pc(thread, snap_regs.r[UNWIND_REG_RIP]);
        return true;
}
static const Dwfl_Thread_Callbacks dw_callbacks = {
        .next_thread = dw_next_thread,
        .get_thread = dw_get_thread,
        .memory_read = dw_memory_read,
        .set_initial_registers = dw_set_registers,
};
static const Dwfl_Callbacks dwfl_offline = {
        .find_elf = dwfl_build_id_find_elf,
        .find_debuginfo = dwfl_standard_find_debuginfo,
};
static uint32_t nr_dwfl_frames;
static int dw_frame(Dwfl_Frame *frame, void *arg)
{
        (void)arg;
        Dwarf_Addr pc;
        if (!dwfl_frame_pc(frame, &pc, NULL))
                return DWARF_CB_ABORT;
        nr_dwfl_frames++;
        return DWARF_CB_OK;
}

int main(int argc, char **argv)
{
        double seconds = argc > 1 ? atof(argv[1]) : 1.0;
        struct unwind_cache *cache;
        unwind_cache_new(&cache, NULL);
        sink = deep(20);
        read_maps(cache);

        printf("table builds (first use, per module):\n");
        for (int i = 0; i < nr_maps; i++) {
                struct unwind_module_info info;
                unwind_module_get_info(maps[i].module, &info);
                printf("  %-48s %6u rows %8zu bytes %8.2f ms\n", maps[i].path, info.nr_rows,
                       info.table_bytes, info.build_ns / 1e6);
        }
        /* again, warm: what a module costs once its file is in the page cache */
        for (int i = 0; i < nr_maps; i++) {
                struct unwind_cache *c2;
                struct unwind_module *m;
                struct unwind_module_info info;
                unwind_cache_new(&c2, NULL);
                unwind_cache_get(c2, maps[i].path, NULL, 0, &m);
                unwind_module_get_info(m, &info);
                printf("  %-48s %8.2f ms warm\n", maps[i].path, info.build_ns / 1e6);
                unwind_cache_free(c2);
        }

        uint64_t frames[MAX_FRAMES], ref[MAX_FRAMES];
        struct unwind_result res;
        uint32_t n =
                unwind_walk(&snap_regs, &snap_stack, find_map, NULL, NULL, ref, MAX_FRAMES, &res);
        uint32_t nd = libdw_walk(frames);
        printf("stack: %u frames (%s), %zu bytes copied; libdw per frame finds %u, %s\n", n,
               unwind_stop_name(res.stop), snap_stack.size, nd,
               nd == n && memcmp(frames, ref, 8 * n) == 0 ? "the same" : "DIFFERENT");

        double t0 = now_s(), t;
        uint64_t nr_walks = 0, nr_frames = 0;
        do {
                for (int k = 0; k < 1000; k++) {
                        nr_frames += unwind_walk(&snap_regs, &snap_stack, find_map, NULL, NULL,
                                                 frames, MAX_FRAMES, &res);
                        nr_walks++;
                }
        } while ((t = now_s() - t0) < seconds);
        double ours = (double)nr_frames / t;
        printf("cached tables:        %12.0f frames/s  %8.1f ns/frame  %8.2f us/sample\n", ours,
               1e9 / ours, 1e6 * t / (double)nr_walks);

        t0 = now_s();
        nr_walks = nr_frames = 0;
        do {
                for (int k = 0; k < 20; k++) {
                        nr_frames += libdw_walk(frames);
                        nr_walks++;
                }
        } while ((t = now_s() - t0) < seconds);
        double per_frame = (double)nr_frames / t;
        printf("libdw CFI per frame:  %12.0f frames/s  %8.1f ns/frame  %8.2f us/sample (%.0fx)\n",
               per_frame, 1e9 / per_frame, 1e6 * t / (double)nr_walks, ours / per_frame);

        Dwfl *dwfl = dwfl_begin(&dwfl_offline);
        dwfl_report_begin(dwfl);
        for (int i = 0; i < nr_maps; i++)
                dwfl_report_elf(dwfl, maps[i].path, maps[i].path, -1, maps[i].bias, false);
        dwfl_report_end(dwfl, NULL, NULL);
        if (dwfl_attach_state(dwfl, NULL, 4242, &dw_callbacks, NULL)) {
                t0 = now_s();
                nr_walks = 0;
                nr_dwfl_frames = 0;
                do {
                        for (int k = 0; k < 20; k++) {
                                dwfl_getthread_frames(dwfl, 4242, dw_frame, NULL);
                                nr_walks++;
                        }
                } while ((t = now_s() - t0) < seconds);
                double whole = (double)nr_dwfl_frames / t;
                printf("libdw unwinder:       %12.0f frames/s  %8.1f ns/frame  %8.2f us/sample "
                       "(%.0fx)\n",
                       whole, 1e9 / whole, 1e6 * t / (double)nr_walks, ours / whole);
        }
        dwfl_end(dwfl);
        for (int i = 0; i < nr_maps; i++) {
                if (maps[i].cfi)
                        dwarf_cfi_end(maps[i].cfi);
                elf_end(maps[i].elf);
                close(maps[i].fd);
        }
        unwind_cache_free(cache);
        return 0;
}
